// Cube-map lookups: vertex element 0 = position, 1 = direction (xyz) and,
// for the cube array, the cube index in w.  Sampler views 0 (cube) and 1
// (cube array) are sampled with sampler states 0 and 1.
struct VOut {
    @builtin(position) pos: vec4<f32>,
    @location(0) dir: vec4<f32>,
};

@group(1) @binding(0) var cube0: texture_cube<f32>;
@group(1) @binding(1) var cubes: texture_cube_array<f32>;
@group(2) @binding(0) var samp0: sampler;
@group(2) @binding(1) var samp1: sampler;

@vertex
fn vs_main(@location(0) pos: vec4<f32>, @location(1) dir: vec4<f32>) -> VOut {
    var o: VOut;
    o.pos = pos;
    o.dir = dir;
    return o;
}

@fragment
fn fs_main(in: VOut) -> @location(0) vec4<f32> {
    return textureSample(cube0, samp0, in.dir.xyz);
}

@fragment
fn fs_array(in: VOut) -> @location(0) vec4<f32> {
    return textureSample(cubes, samp1, in.dir.xyz, i32(in.dir.w + 0.5));
}

@fragment
fn fs_gather(in: VOut) -> @location(0) vec4<f32> {
    return textureGather(0, cube0, samp0, in.dir.xyz);
}
