// Point sprites whose coordinate input the vertex shader does not write
// (pair with pointsize.vert, which writes only gl_PointSize and a colour
// at location 0): fragment input 1 (GENERIC1) is the sprite coordinate
// (s, t, 0, 1) when sprite_coord_enable has bit 1 set, shown as red = s,
// green = t, blue = the colour's blue plus z, alpha = w.
@fragment
fn fs_main(@location(0) color: vec4<f32>, @location(1) coord: vec4<f32>) -> @location(0) vec4<f32> {
    return vec4<f32>(coord.x, coord.y, color.b + coord.z, coord.w);
}
