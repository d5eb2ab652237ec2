//! WGSL f16 through the whole pipeline: a vertex shader with an f16
//! output, a fragment shader with an f16 input and f16 colour math whose
//! half rounding is visible in 8-bit colour, against the same arithmetic
//! done on the CPU with the `half` crate.

use ferropipe_scene::{OutputPixels, ReplayOptions, Scene, replay};
use half::f16;
use serde_json::json;

const W: u32 = 32;
const H: u32 = 16;

const SHADER: &str = "
enable f16;
struct VOut {
    @builtin(position) pos: vec4<f32>,
    @location(0) @interpolate(flat) tint: vec2<f16>,
};
@vertex fn vs_main(@location(0) pos: vec4<f32>) -> VOut {
    var o: VOut;
    o.pos = pos;
    // 0.3 is no half: the flat varying carries the nearest one, 0.2998
    o.tint = vec2<f16>(f16(0.3), f16(pos.w) * 0.25h);
    return o;
}
@fragment fn fs_main(in: VOut) -> @location(0) vec4<f32> {
    let x = f16(in.pos.x);
    let y = f16(in.pos.y);
    // red: x / 32 + 1024 in f16 has a spacing of 1, so it rounds to
    // 1024 or 1025 (ties to even): red is 0 or 1 per column, where f32
    // would give a gradient
    let r = (x / 32.0h + 1024.0h) - 1024.0h;
    // green: y * 8192 overflows the half range (65504) from y = 8 on
    let g = select(0.0h, 1.0h, y * 8192.0h > 65504.0h);
    // blue: the flat f16 varying, alpha from the other component
    return vec4<f32>(vec4<f16>(r, g, in.tint.x, in.tint.y));
}
";

#[test]
fn f16_colour_math_renders_with_half_rounding() {
    // two triangles covering the target
    let quad: [[f32; 2]; 6] = [
        [-1.0, -1.0],
        [1.0, -1.0],
        [-1.0, 1.0],
        [-1.0, 1.0],
        [1.0, -1.0],
        [1.0, 1.0],
    ];
    let mut data = Vec::new();
    for [x, y] in quad {
        data.extend([x, y, 0.0, 1.0]);
    }
    let calls = vec![
        json!({"op": "resource_create", "id": "rt", "target": "PIPE_TEXTURE_2D",
               "format": "PIPE_FORMAT_R8G8B8A8_UNORM", "width0": W, "height0": H,
               "bind": ["PIPE_BIND_RENDER_TARGET"]}),
        json!({"op": "create_surface", "id": "s", "resource": "rt"}),
        json!({"op": "set_framebuffer_state", "width": W, "height": H, "cbufs": ["s"]}),
        json!({"op": "set_viewport_states", "start_slot": 0,
               "viewports": [{"scale": [W as f32 / 2.0, H as f32 / 2.0, 0.5],
                              "translate": [W as f32 / 2.0, H as f32 / 2.0, 0.5]}]}),
        json!({"op": "create_blend_state", "id": "b", "state": {"rt": [{"colormask": 15}]}}),
        json!({"op": "bind_blend_state", "id": "b"}),
        json!({"op": "create_depth_stencil_alpha_state", "id": "d", "state": {}}),
        json!({"op": "bind_depth_stencil_alpha_state", "id": "d"}),
        json!({"op": "create_rasterizer_state", "id": "r",
               "state": {"half_pixel_center": true}}),
        json!({"op": "bind_rasterizer_state", "id": "r"}),
        json!({"op": "create_vs_state", "id": "vs", "language": "wgsl", "code": SHADER,
               "entry_point": "vs_main"}),
        json!({"op": "create_fs_state", "id": "fs", "language": "wgsl", "code": SHADER,
               "entry_point": "fs_main"}),
        json!({"op": "bind_vs_state", "id": "vs"}),
        json!({"op": "bind_fs_state", "id": "fs"}),
        json!({"op": "create_vertex_elements_state", "id": "ve", "elements": [
            {"src_offset": 0, "vertex_buffer_index": 0,
             "src_format": "PIPE_FORMAT_R32G32B32A32_FLOAT"}]}),
        json!({"op": "bind_vertex_elements_state", "id": "ve"}),
        json!({"op": "clear", "buffers": ["PIPE_CLEAR_COLOR"], "color": [0.5, 0.5, 0.5, 0.5]}),
        json!({"op": "resource_create", "id": "vb", "target": "PIPE_BUFFER",
               "width0": data.len() * 4, "bind": ["PIPE_BIND_VERTEX_BUFFER"], "data": data}),
        json!({"op": "set_vertex_buffers", "start_slot": 0,
               "buffers": [{"buffer": "vb", "stride": 16, "buffer_offset": 0}]}),
        json!({"op": "draw_vbo", "mode": "PIPE_PRIM_TRIANGLES", "start": 0, "count": 6}),
    ];
    let text = json!({"format": "gallium-scene/1", "calls": calls,
                      "outputs": [{"name": "color", "resource": "rt"}]})
    .to_string();
    let scene = Scene::parse(&text, std::path::Path::new(".")).unwrap();
    let report = replay(
        &scene,
        &ReplayOptions {
            threads: 2,
            ..Default::default()
        },
    )
    .unwrap();
    let OutputPixels::Color(rgba) = &report.outputs[0].pixels else {
        panic!("not a colour output")
    };
    let unorm = |x: f16| (x.to_f32().clamp(0.0, 1.0) * 255.0).round() as u8;
    let q = |x: f32| f16::from_f32(x);
    let blue = unorm(q(0.3));
    let alpha = unorm(q(1.0) * q(0.25));
    let mut ones = 0;
    for py in 0..H {
        for px in 0..W {
            let (x, y) = (q(px as f32 + 0.5), q(py as f32 + 0.5));
            let r = q(q(q(x.to_f32() / 32.0).to_f32() + 1024.0).to_f32() - 1024.0);
            let over = q(y.to_f32() * 8192.0).to_f32() > 65504.0;
            let want = [unorm(r), if over { 255 } else { 0 }, blue, alpha];
            let i = ((py * W + px) * 4) as usize;
            assert_eq!(rgba[i..i + 4], want, "pixel ({px}, {py})");
            ones += (want[0] == 255) as u32;
        }
    }
    // the rounding is visible: exactly the right half of the columns
    // (x / 32 > 0.5) are red, the left half black
    assert_eq!(ones, W * H / 2);
}
