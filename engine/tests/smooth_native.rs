//! Smooth (antialiased) lines and points with a Rust-native fragment
//! shader: the coverage multiply (systems/src/aa_stage.rs, draw's aaline /
//! aapoint stages) wraps any `FragmentShader`, not only compiled programs.
//!
//! The draws of the `smooth_lines` and `smooth_points` conformance scenes
//! are replayed through the public API with the pass-through Rust-native
//! shaders (the scenes use `color.wgsl`, the same pass-through in WGSL)
//! and compared with the scenes' llvmpipe references by compare.py's rule.

mod support;

use std::path::{Path, PathBuf};

use ferropipe::*;
use ferropipe::{DrawInfo, Format, ResourceTemplate, Screen, ScreenConfig, VertexBuffer};
use serde_json::Value;

fn scenes_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/scenes/conformance")
}

/// Renders the draws of conformance scene `name` (rasterizer states,
/// vertex buffers and draws; everything else is the scenes' common set-up:
/// a 128x128 RGBA8 target cleared to (0.1, 0.1, 0.15, 1), blending
/// `SRC_ALPHA, INV_SRC_ALPHA`) with Rust-native shaders.
fn render_native(name: &str, threads: usize, smooth: bool) -> (u32, u32, Vec<u8>) {
    let text = std::fs::read_to_string(scenes_dir().join(format!("{name}.json"))).unwrap();
    let scene: Value = serde_json::from_str(&text).unwrap();
    let size = scene["calls"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["op"] == "set_framebuffer_state")
        .and_then(|c| c["width"].as_u64())
        .unwrap() as u32;

    let screen = Screen::new(ScreenConfig {
        threads,
        ..Default::default()
    })
    .unwrap();
    let mut ctx = screen.context_create().unwrap();
    let (rt, _) = support::bind_rgba8_target(&screen, &mut ctx, size, size, None);
    let mut blend = BlendState::default();
    blend.rt[0] = RtBlendState {
        blend_enable: true,
        rgb_func: BlendFunc::Add,
        rgb_src_factor: BlendFactor::SrcAlpha,
        rgb_dst_factor: BlendFactor::InvSrcAlpha,
        alpha_func: BlendFunc::Add,
        alpha_src_factor: BlendFactor::One,
        alpha_dst_factor: BlendFactor::InvSrcAlpha,
        colormask: 0xf,
    };
    support::bind_blend_and_default_dsa(&mut ctx, &blend);
    support::bind_vec4_pair_elements(&mut ctx);
    support::bind_pass_shaders(&mut ctx);
    ctx.clear(
        ClearFlags::COLOR,
        &ColorUnion::float([0.1, 0.1, 0.15, 1.0]),
        1.0,
        0,
    )
    .unwrap();

    let mut buffers = Vec::new();
    for call in scene["calls"].as_array().unwrap() {
        let st = &call["state"];
        match call["op"].as_str().unwrap() {
            "create_rasterizer_state" => {
                let f = |k: &str, d: f64| st[k].as_f64().unwrap_or(d) as f32;
                let b = |k: &str| smooth && st[k].as_bool().unwrap_or(false);
                let r = ctx
                    .create_rasterizer_state(&RasterizerState {
                        line_smooth: b("line_smooth"),
                        point_smooth: b("point_smooth"),
                        line_rectangular: b("line_smooth"),
                        line_width: f("line_width", 1.0),
                        point_size: f("point_size", 1.0),
                        ..Default::default()
                    })
                    .unwrap();
                ctx.bind_rasterizer_state(Some(r)).unwrap();
            }
            "resource_create" if call["target"] == "PIPE_BUFFER" => {
                let data: Vec<u8> = call["data"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .flat_map(|v| (v.as_f64().unwrap() as f32).to_le_bytes())
                    .collect();
                let buf = screen
                    .resource_create(&ResourceTemplate::buffer(
                        data.len() as u32,
                        BindFlags::VERTEX_BUFFER,
                    ))
                    .unwrap();
                ctx.buffer_subdata(&buf, 0, &data).unwrap();
                ctx.set_vertex_buffers(
                    0,
                    &[VertexBuffer {
                        buffer: Some(&buf),
                        stride: 32,
                        buffer_offset: 0,
                    }],
                )
                .unwrap();
                buffers.push(buf);
            }
            "draw_vbo" => {
                let mode = PrimType::from_gallium_name(call["mode"].as_str().unwrap()).unwrap();
                ctx.draw_vbo(&DrawInfo {
                    mode,
                    count: call["count"].as_u64().unwrap() as u32,
                    ..Default::default()
                })
                .unwrap();
            }
            _ => {}
        }
    }
    let pixels = support::read_level0(&mut ctx, &rt, size, size);
    assert_eq!(rt.template().format, Format::R8G8B8A8_UNORM);
    (size, size, pixels)
}

/// Pixels differing by more than 1/255 in a channel.
fn differing(a: &[u8], b: &[u8]) -> usize {
    a.chunks(4)
        .zip(b.chunks(4))
        .filter(|(a, b)| a.iter().zip(b.iter()).any(|(x, y)| x.abs_diff(*y) > 1))
        .count()
}

/// compare.py's rule: at most 0.1 % of the pixels differ by more than
/// 1/255 in a channel.
fn assert_matches_reference(name: &str) {
    let (w, h, got) = render_native(name, 2, true);
    let reference = scenes_dir().join("ref").join(name).join("color.png");
    let (rw, rh, want) = ferropipe_scene::output::read_png(&reference).unwrap();
    assert_eq!((w, h), (rw, rh));
    let allowed = (w * h) as usize / 1000;
    let n = differing(&got, &want);
    assert!(
        n <= allowed,
        "{name} with a Rust-native shader: {n} pixels differ from llvmpipe (allowed {allowed})"
    );
    // The smoothing did the work: without it hundreds of pixels differ.
    let (_, _, hard) = render_native(name, 2, false);
    assert!(differing(&hard, &want) > 10 * allowed);
    // And the image is the same for any thread count.
    assert_eq!(render_native(name, 1, true).2, got);
}

#[test]
fn smooth_lines_with_a_native_shader_match_llvmpipe() {
    assert_matches_reference("smooth_lines");
}

#[test]
fn smooth_points_with_a_native_shader_match_llvmpipe() {
    assert_matches_reference("smooth_points");
}
