//! The scene corpus through the lane program and through the scalar
//! reference interpreter, lane by lane, on the inputs the scenes feed.

mod common;

use common::*;
use ferropipe_components::enums::ShaderType;
use ferropipe_components::shader::Semantic;
use ferropipe_shader::Language;

fn corpus(name: &str) -> Option<String> {
    let p = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/scenes/shaders")
        .join(name);
    std::fs::read_to_string(p).ok()
}

fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn words(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// A fragment shader over a 256x256 target: frag_coord at pixel centres,
/// `pix`-style varyings (location 0) equal to the window position.
fn fs_grid(
    file: &str,
    entry: &str,
    lang: Language,
    constants: &[Vec<u8>],
    tol: Tol,
    extra: &dyn Fn(u32, usize, (u32, u32)) -> Option<f32>,
) {
    let Some(src) = corpus(file) else { return };
    let s = setup(lang, &src, entry, ShaderType::Fragment);
    let groups = 256 * 256 / 8;
    let inputs = |leaf: Leaf, c: usize, lane: usize| -> u32 {
        let (x, y) = pixel_of(lane, 256, (0, 0));
        let (fx, fy) = (x as f32 + 0.5, y as f32 + 0.5);
        match leaf {
            Leaf::FragCoord => [fx, fy, 0.5, 1.0][c].to_bits(),
            Leaf::Slot(Semantic::Generic(l), _, _) => extra(l as u32, c, (x, y))
                .unwrap_or(if c == 0 { fx } else { fy })
                .to_bits(),
            Leaf::Slot(Semantic::FrontFacing, _, _) => (x + y) & 1,
            _ => 0,
        }
    };
    let n = differential(&s, groups, &inputs, constants, tol);
    assert!(n > 0);
}

#[test]
fn control_flow_matches_reference() {
    let cfg = [
        words(&[5, 9, 3, 7]),
        f32s(&[1.0 / 9.0, 1.0 / 8.0, 1.0, 1.0]),
    ]
    .concat();
    fs_grid(
        "shader_control_flow.wgsl",
        "fs_main",
        Language::Wgsl,
        &[cfg],
        EXACT,
        &|loc, _, (x, _)| (loc == 1).then(|| (x as f32 + 0.5) / 256.0 * 16.0),
    );
}

#[test]
fn int_bits_match_reference() {
    fs_grid(
        "shader_int_bits.wgsl",
        "fs_main",
        Language::Wgsl,
        &[],
        EXACT,
        &|_, _, _| None,
    );
}

#[test]
fn math_builtins_match_reference() {
    fs_grid(
        "shader_math_builtins.wgsl",
        "fs_main",
        Language::Wgsl,
        &[],
        Tol {
            abs: 2e-4,
            rel: 1e-4,
        },
        &|_, _, _| None,
    );
}

#[test]
fn functions_structs_wgsl_match_reference() {
    fs_grid(
        "shader_functions_structs.wgsl",
        "fs_main",
        Language::Wgsl,
        &[],
        EXACT,
        &|_, _, _| None,
    );
}

#[test]
fn functions_structs_glsl_match_reference() {
    fs_grid(
        "shader_functions_structs.frag",
        "main",
        Language::Glsl,
        &[],
        EXACT,
        &|_, _, _| None,
    );
}

#[test]
fn derivative_free_fragment_entries_match_reference() {
    fs_grid(
        "shader_derivatives_discard.wgsl",
        "fs_backdrop",
        Language::Wgsl,
        &[],
        EXACT,
        &|_, _, _| None,
    );
    fs_grid("mrt.wgsl", "fs_main", Language::Wgsl, &[], EXACT, &|_,
                                                                 c,
                                                                 (
        x,
        y,
    )| {
        Some((x * 7 + y * 3 + c as u32) as f32 / 1000.0)
    });
    fs_grid(
        "sprite.wgsl",
        "fs_main",
        Language::Wgsl,
        &[],
        EXACT,
        &|_, _, _| None,
    );
    fs_grid(
        "uniform_color.wgsl",
        "fs_main",
        Language::Wgsl,
        &[f32s(&[0.25, 0.5, 0.75, 1.0])],
        EXACT,
        &|_, _, _| None,
    );
}

#[test]
fn builtins_vertex_fragment_matches_reference() {
    // the flat ids arrive as u32 bits; the modes' ranges
    let Some(src) = corpus("shader_builtins_vertex.wgsl") else {
        return;
    };
    let s = setup(Language::Wgsl, &src, "fs_main", ShaderType::Fragment);
    let inputs = |leaf: Leaf, c: usize, lane: usize| -> u32 {
        let (x, y) = pixel_of(lane, 256, (0, 0));
        match leaf {
            Leaf::Slot(Semantic::Generic(1), _, _) => match c {
                0 => (x / 28) * 6 + 40,
                1 => y / 64,
                2 => (x / 64) % 4,
                _ => 0,
            },
            Leaf::Slot(Semantic::Generic(l), _, _) => {
                (((x * 13 + y * 7 + l as u32 * 3 + c as u32) % 97) as f32 / 96.0).to_bits()
            }
            Leaf::FragCoord => [x as f32 + 0.5, y as f32 + 0.5, 0.5, 1.0][c].to_bits(),
            _ => 0,
        }
    };
    differential(
        &s,
        256 * 256 / 8,
        &inputs,
        &[],
        Tol {
            abs: 1e-6,
            rel: 1e-6,
        },
    );
}

/// A vertex shader with ids and random attributes.
fn vs_random(file: &str, entry: &str, lang: Language, constants: &[Vec<u8>], tol: Tol) {
    let Some(src) = corpus(file) else { return };
    let s = setup(lang, &src, entry, ShaderType::Vertex);
    let inputs = |leaf: Leaf, c: usize, lane: usize| -> u32 {
        let h = (lane as u32)
            .wrapping_mul(2654435761)
            .wrapping_add(c as u32 * 97);
        match leaf {
            Leaf::VertexId => lane as u32 + 40,
            Leaf::InstanceId => 3 + (lane as u32 / 6) % 8,
            _ => ((h % 2000) as f32 / 1000.0 - 1.0).to_bits(),
        }
    };
    differential(&s, 64, &inputs, constants, tol);
}

#[test]
fn vertex_shaders_match_reference() {
    let close = Tol {
        abs: 1e-5,
        rel: 1e-5,
    };
    for f in [
        "color.wgsl",
        "mrt.wgsl",
        "instanced.wgsl",
        "clipdist.wgsl",
        "perf_tiny.wgsl",
        "sprite.wgsl",
        "tex.wgsl",
        "shader_int_bits.wgsl",
        "shader_derivatives_discard.wgsl",
        "shader_functions_structs.wgsl",
        "shader_control_flow.wgsl",
        "color_twoside.wgsl",
    ] {
        vs_random(f, "vs_main", Language::Wgsl, &[], close);
    }
    vs_random("pointsize.vert", "main", Language::Glsl, &[], close);
    vs_random(
        "perf_many.wgsl",
        "vs_main",
        Language::Wgsl,
        &[f32s(&[0.5, -0.25, 0.125, 0.75, 0.1, 0.2, 0.3, 0.4])],
        close,
    );
    vs_random(
        "uniform_color.wgsl",
        "vs_main",
        Language::Wgsl,
        &[f32s(&[0.5, -0.25, 0.125, 0.75])],
        close,
    );
    for mode in 0..4i32 {
        vs_random(
            "shader_builtins_vertex.wgsl",
            "vs_main",
            Language::Wgsl,
            &[words(&[mode as u32, 0, 0, 0])],
            close,
        );
    }
}

#[test]
fn matrices_and_uniform_layout_match_reference() {
    // Transforms: mvp, model (mat4), normal (mat3 with padded columns), tint
    let mut t = Vec::new();
    for i in 0..16 {
        t.push(((i * 7) % 11) as f32 / 10.0 - 0.5);
    }
    for i in 0..16 {
        t.push(((i * 5) % 13) as f32 / 12.0 - 0.3);
    }
    for c in 0..3 {
        for r in 0..3 {
            t.push((c * 3 + r) as f32 / 9.0);
        }
        t.push(99.0); // padding must not be read
    }
    t.extend([0.9, 0.8, 0.7, 1.0]);
    vs_random(
        "shader_matrices_uniforms.wgsl",
        "vs_main",
        Language::Wgsl,
        &[f32s(&t)],
        Tol {
            abs: 1e-5,
            rel: 1e-5,
        },
    );

    let material = f32s(&[0.8, 0.6, 0.4, 16.0, 0.5, 0.5, 0.5, 2.0]);
    let mut lighting = f32s(&[0.0, 2.0, 5.0]);
    lighting.extend(words(&[2]));
    lighting.extend(f32s(&[0.1, 0.1, 0.15, 0.0]));
    lighting.extend(f32s(&[
        1.0, 3.0, 2.0, 6.0, 1.0, 0.9, 0.8, 4.0, -2.0, 1.0, 1.0, 5.0, 0.3, 0.4, 1.0, 2.0,
    ]));
    fs_grid(
        "shader_matrices_uniforms.wgsl",
        "fs_main",
        Language::Wgsl,
        &[material, lighting],
        Tol {
            abs: 1e-4,
            rel: 1e-4,
        },
        &|loc, c, (x, y)| {
            Some(match loc {
                0 => [x as f32 / 64.0 - 2.0, 0.5, y as f32 / 64.0 - 2.0][c],
                1 => [0.3, 0.8, 0.1][c] + (x as f32) / 512.0,
                _ => [1.0, 0.9, 0.8, 1.0][c],
            })
        },
    );
}
