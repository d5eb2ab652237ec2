//! The state audit (docs/state-audit.md): every member of every CSO and of
//! every piece of non-CSO state either changes the rendering as Gallium and
//! GL define it, or is refused with a typed `Unsupported` error naming it.
//! Never parsed and silently ignored.
//!
//! Three things keep the audit from rotting:
//!
//! 1. **Exhaustive destructuring.**  [`audit!`] destructures each state
//!    struct without `..`, so adding a field to one of them fails to compile
//!    here until the field is listed, and [`table_lists_every_member`] then
//!    fails until docs/state-audit.md has a row for it.
//! 2. **Proofs that are checked.**  Each row names its proofs; this file
//!    checks every one: a conformance scene must exist and set the member
//!    to a non-default value (typed, through the scene parser, where the
//!    parser builds the struct; otherwise the scene must name it), a named
//!    test function must exist in the named file (members refused with
//!    `Unsupported` cite the test that asserts the error), and `flip` rows
//!    must have an entry in [`FLIPS`].
//! 3. **Flips.**  For each [`FLIPS`] entry a small scene is rendered with
//!    the member at its default and at a non-default value, and the images
//!    must differ.  A member that is parsed and then ignored renders the
//!    same image twice and fails here.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use ferropipe::*;
use ferropipe::{
    BlitInfo, BlitSide, ComputeState, DrawIndirectInfo, DrawInfo, GridInfo, ImageView,
    ResourceTemplate, SamplerViewDesc, ShaderBuffer, ShaderState, SurfaceTemplate,
};
use ferropipe_components::batch::{
    PipelineState, ShaderBufferBinding, StageBindings, StageResources, StateBlock,
};
use ferropipe_components::draw::{
    ConstantBufferBinding, FramebufferState, IndexBufferBinding, StreamOutputBinding,
    StreamOutputTarget, VertexBufferBinding,
};
use ferropipe_scene::{Call, ReplayOptions, Scene, SceneError, replay};
use serde_json::{Value, json};

/// One audited struct: its name (the doc's section heading), its members,
/// and, where the scene parser builds it, which members a scene sets to a
/// non-default value.
struct Audit {
    name: &'static str,
    fields: &'static [&'static str],
    changed: Option<fn(&Scene) -> BTreeSet<&'static str>>,
}

/// `audit!(T { a, b, c })`: the member list of `T`, checked by a
/// destructuring without `..` (adding a field to `T` does not compile until
/// it is listed).  `audit!(T { .. } default D, from F)` also compares every
/// instance `F(scene)` yields with `D`, member by member.
macro_rules! audit {
    ($t:ident { $($f:ident),* $(,)? }) => {
        audit!(@make $t [$($f),*] None)
    };
    ($t:ident { $($f:ident),* $(,)? } default $d:expr, from $ex:expr) => {{
        fn changed(scene: &Scene) -> BTreeSet<&'static str> {
            let d: $t = $d;
            let mut s = BTreeSet::new();
            let all: Vec<$t> = ($ex)(scene);
            for a in &all {
                $( if a.$f != d.$f { s.insert(stringify!($f)); } )*
            }
            s
        }
        audit!(@make $t [$($f),*] Some(changed as fn(&Scene) -> BTreeSet<&'static str>))
    }};
    (@make $t:ident [$($f:ident),*] $ch:expr) => {{
        #[allow(dead_code)]
        fn exhaustive(v: $t) {
            let $t { $($f: _),* } = v;
        }
        Audit { name: stringify!($t), fields: &[$(stringify!($f)),*], changed: $ch }
    }};
}

fn calls(scene: &Scene) -> impl Iterator<Item = &Call> {
    scene.calls.iter()
}

fn blends(s: &Scene) -> Vec<BlendState> {
    calls(s)
        .filter_map(|c| match c {
            Call::CreateBlendState { state, .. } => Some(state.clone()),
            _ => None,
        })
        .collect()
}

fn dsas(s: &Scene) -> Vec<DepthStencilAlphaState> {
    calls(s)
        .filter_map(|c| match c {
            Call::CreateDepthStencilAlphaState { state, .. } => Some(*state),
            _ => None,
        })
        .collect()
}

fn rasterizers(s: &Scene) -> Vec<RasterizerState> {
    calls(s)
        .filter_map(|c| match c {
            Call::CreateRasterizerState { state, .. } => Some(*state),
            _ => None,
        })
        .collect()
}

fn samplers(s: &Scene) -> Vec<SamplerState> {
    calls(s)
        .filter_map(|c| match c {
            Call::CreateSamplerState { state, .. } => Some(*state),
            _ => None,
        })
        .collect()
}

fn vertex_elements(s: &Scene) -> Vec<VertexElement> {
    calls(s)
        .flat_map(|c| match c {
            Call::CreateVertexElementsState { elements, .. } => elements.clone(),
            _ => Vec::new(),
        })
        .collect()
}

fn draws(s: &Scene) -> Vec<DrawInfo> {
    calls(s)
        .filter_map(|c| match c {
            Call::DrawVbo(info) => Some(*info),
            _ => None,
        })
        .collect()
}

fn templates(s: &Scene) -> Vec<ResourceTemplate> {
    calls(s)
        .filter_map(|c| match c {
            Call::ResourceCreate { templ, .. } => Some(*templ),
            _ => None,
        })
        .collect()
}

/// Every audited struct.  The order is the doc's.
fn audits() -> Vec<Audit> {
    vec![
        audit!(BlendState {
            independent_blend_enable,
            logicop_enable,
            logicop_func,
            dither,
            alpha_to_coverage,
            alpha_to_coverage_dither,
            alpha_to_one,
            rt,
        } default BlendState::default(), from blends),
        audit!(RtBlendState {
            blend_enable,
            rgb_func,
            rgb_src_factor,
            rgb_dst_factor,
            alpha_func,
            alpha_src_factor,
            alpha_dst_factor,
            colormask,
        } default RtBlendState::default(), from |s: &Scene| blends(s).iter().flat_map(|b| b.rt).collect()),
        audit!(DepthStencilAlphaState {
            depth_enabled,
            depth_writemask,
            depth_func,
            depth_bounds_test,
            depth_bounds_min,
            depth_bounds_max,
            stencil,
            alpha_enabled,
            alpha_func,
            alpha_ref_value,
        } default DepthStencilAlphaState::default(), from dsas),
        audit!(StencilState {
            enabled,
            func,
            fail_op,
            zpass_op,
            zfail_op,
            valuemask,
            writemask,
        } default StencilState::default(), from |s: &Scene| dsas(s).iter().flat_map(|d| d.stencil).collect()),
        audit!(RasterizerState {
            flatshade,
            flatshade_first,
            light_twoside,
            clamp_vertex_color,
            clamp_fragment_color,
            front_ccw,
            cull_face,
            fill_front,
            fill_back,
            poly_stipple_enable,
            poly_smooth,
            offset_point,
            offset_line,
            offset_tri,
            offset_units,
            offset_units_unscaled,
            offset_scale,
            offset_clamp,
            line_width,
            line_smooth,
            line_stipple_enable,
            line_stipple_pattern,
            line_stipple_factor,
            line_last_pixel,
            line_rectangular,
            sprite_coord_enable,
            sprite_coord_mode,
            point_quad_rasterization,
            point_tri_clip,
            point_smooth,
            point_size_per_vertex,
            point_size,
            scissor,
            multisample,
            half_pixel_center,
            bottom_edge_rule,
            rasterizer_discard,
            clip_halfz,
            depth_clip_near,
            depth_clip_far,
            depth_clamp,
            clip_plane_enable,
            conservative_raster_mode,
            conservative_raster_dilate,
            subpixel_precision_x,
            subpixel_precision_y,
        } default RasterizerState::default(), from rasterizers),
        audit!(SamplerState {
            wrap_s,
            wrap_t,
            wrap_r,
            min_img_filter,
            min_mip_filter,
            mag_img_filter,
            compare_mode,
            compare_func,
            normalized_coords,
            max_anisotropy,
            seamless_cube_map,
            lod_bias,
            min_lod,
            max_lod,
            border_color,
        } default SamplerState::default(), from samplers),
        audit!(VertexElement {
            src_offset,
            vertex_buffer_index,
            src_format,
            instance_divisor,
        } default VertexElement {
            src_offset: 0,
            vertex_buffer_index: 0,
            src_format: ferropipe::Format::R32G32B32A32_FLOAT,
            instance_divisor: 0,
        }, from vertex_elements),
        audit!(StateBlock {
            pipeline,
            vs_resources,
            fs_resources,
            stream_output,
        }),
        audit!(PipelineState {
            rasterizer,
            dsa,
            blend,
            velems,
            vs,
            fs,
            framebuffer,
            vertex_buffers,
            index_buffer,
            blend_color,
            stencil_ref,
            sample_mask,
            min_samples,
            clip,
            poly_stipple,
            viewports,
            scissors,
        }),
        audit!(StageResources {
            constant_buffers,
            bindings,
        }),
        audit!(StageBindings {
            sampler_views,
            samplers,
            shader_buffers,
            shader_images,
        }),
        audit!(ViewportState { scale, translate }),
        audit!(ScissorState {
            minx,
            miny,
            maxx,
            maxy
        }),
        audit!(ClipState { ucp }),
        audit!(PolyStipple { stipple }),
        audit!(BlendColor { color }),
        audit!(StencilRef { ref_value }),
        audit!(FramebufferState {
            width,
            height,
            layers,
            samples,
            cbufs,
            zsbuf,
        }),
        audit!(VertexBufferBinding {
            buffer,
            stride,
            buffer_offset,
        }),
        audit!(IndexBufferBinding {
            buffer,
            index_size,
            offset,
        }),
        audit!(ConstantBufferBinding {
            buffer,
            buffer_offset,
            buffer_size,
            user_buffer,
        }),
        audit!(DrawInfo {
            mode,
            start,
            count,
            indexed,
            index_bias,
            min_index,
            max_index,
            start_instance,
            instance_count,
            primitive_restart,
            restart_index,
        } default DrawInfo::default(), from draws),
        audit!(DrawIndirectInfo {
            count_from_stream_output
        }),
        audit!(ResourceTemplate {
            target,
            format,
            width0,
            height0,
            depth0,
            array_size,
            last_level,
            nr_samples,
            nr_storage_samples,
            usage,
            bind,
            flags,
        } default ResourceTemplate::default(), from templates),
        audit!(SamplerViewDesc {
            target,
            format,
            first_level,
            last_level,
            first_layer,
            last_layer,
            buffer_offset,
            buffer_size,
            swizzle,
        }),
        audit!(SurfaceTemplate {
            format,
            level,
            first_layer,
            last_layer,
        }),
        audit!(StreamOutputInfo { stride, output }),
        audit!(StreamOutput {
            register_index,
            start_component,
            num_components,
            output_buffer,
            dst_offset,
            stream,
        }),
        audit!(StreamOutputBinding { info, targets }),
        audit!(ShaderState {
            code,
            semantics,
            stream_output,
        }),
        audit!(ComputeState {
            code,
            req_local_mem,
            req_input_mem,
        }),
        audit!(ShaderBuffer {
            buffer,
            offset,
            size
        }),
        audit!(ShaderBufferBinding {
            buffer,
            offset,
            size,
            writable,
        }),
        audit!(ImageView {
            resource,
            format,
            level,
            first_layer,
            last_layer,
            offset,
            size,
            access,
        }),
        audit!(GridInfo {
            pc,
            input,
            variable_shared_mem,
            work_dim,
            block,
            last_block,
            grid,
            grid_base,
            indirect,
        }),
        audit!(BlitInfo {
            dst,
            src,
            mask,
            filter,
            scissor_enable,
            scissor,
            render_condition_enable,
            alpha_blend,
            sample0_only,
        }),
        audit!(BlitSide {
            resource,
            level,
            format,
            pbox,
        }),
        // `StreamOutputTarget` has a private member (the filled size the
        // pipeline writes), so it cannot be destructured here; its public
        // members are listed by hand and components/src/draw.rs destructures
        // the whole struct in `stream_output_target_members_are_audited`.
        stream_output_target(),
    ]
}

fn stream_output_target() -> Audit {
    #[allow(dead_code)]
    fn public_members(t: &StreamOutputTarget) {
        let StreamOutputTarget {
            buffer: _,
            buffer_offset: _,
            buffer_size: _,
            ..
        } = t;
    }
    Audit {
        name: "StreamOutputTarget",
        fields: &["buffer", "buffer_offset", "buffer_size"],
        changed: None,
    }
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A row of the table: member → where consumed → proofs.
#[derive(Debug)]
struct Row {
    member: String,
    consumed: String,
    proofs: Vec<String>,
    line: usize,
}

/// The doc's tables, by section (`## Name`).
fn read_doc() -> BTreeMap<String, Vec<Row>> {
    let path = root().join("docs/state-audit.md");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out: BTreeMap<String, Vec<Row>> = BTreeMap::new();
    let mut section: Option<String> = None;
    for (n, line) in text.lines().enumerate() {
        if let Some(h) = line.strip_prefix("## ") {
            let name = h.split_whitespace().next().unwrap_or("").trim_matches('`');
            section = Some(name.to_string());
            out.entry(name.to_string()).or_default();
            continue;
        }
        let Some(sec) = &section else { continue };
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        // "| member | consumed | proofs |" → ["", member, consumed, proofs, ""]
        if cells.len() != 5 || !line.starts_with('|') {
            continue;
        }
        let member = cells[1].trim_matches('`');
        if member == "member" || member.starts_with("---") {
            continue;
        }
        out.get_mut(sec).unwrap().push(Row {
            member: member.to_string(),
            consumed: cells[2].to_string(),
            proofs: cells[3]
                .split(';')
                .map(|p| p.replace('`', "").trim().to_string())
                .filter(|p| !p.is_empty())
                .collect(),
            line: n + 1,
        });
    }
    out
}

#[test]
fn table_lists_every_member() {
    let doc = read_doc();
    let mut problems = Vec::new();
    let audits = audits();
    for a in &audits {
        let Some(rows) = doc.get(a.name) else {
            problems.push(format!(
                "docs/state-audit.md has no section `## {}`",
                a.name
            ));
            continue;
        };
        let listed: BTreeSet<&str> = rows.iter().map(|r| r.member.as_str()).collect();
        for f in a.fields {
            if !listed.contains(f) {
                problems.push(format!("{}.{f} has no row in docs/state-audit.md", a.name));
            }
        }
        for r in rows {
            if !a.fields.contains(&r.member.as_str()) {
                problems.push(format!(
                    "docs/state-audit.md:{}: {}.{} is not a member (stale row)",
                    r.line, a.name, r.member
                ));
            }
            if r.consumed.is_empty() || r.proofs.is_empty() {
                problems.push(format!(
                    "docs/state-audit.md:{}: {}.{} needs where it is consumed and a proof",
                    r.line, a.name, r.member
                ));
            }
        }
    }
    for s in doc.keys() {
        if !audits.iter().any(|a| a.name == s) {
            problems.push(format!("docs/state-audit.md: section {s} audits no struct"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn every_proof_exists() {
    let doc = read_doc();
    let audits = audits();
    let scene_dir = root().join("tests/scenes/conformance");
    let mut parsed: BTreeMap<String, Scene> = BTreeMap::new();
    let mut problems = Vec::new();
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for a in &audits {
        for r in doc.get(a.name).map(Vec::as_slice).unwrap_or(&[]) {
            let at = format!("docs/state-audit.md:{}: {}.{}", r.line, a.name, r.member);
            for p in &r.proofs {
                let p = p.trim();
                let (kind, arg) = p.split_once(' ').unwrap_or((p, ""));
                let arg = arg.trim();
                *counts
                    .entry(match kind {
                        "scene" => "scene",
                        "test" => "test",
                        "flip" => "flip",
                        "hint" => "hint",
                        "see" => "see",
                        _ => "?",
                    })
                    .or_default() += 1;
                match kind {
                    "scene" => {
                        let path = scene_dir.join(format!("{arg}.json"));
                        if !path.is_file() {
                            problems.push(format!("{at}: no scene {}", path.display()));
                            continue;
                        }
                        let text = std::fs::read_to_string(&path).unwrap();
                        if let Some(changed) = a.changed {
                            let scene = parsed
                                .entry(arg.to_string())
                                .or_insert_with(|| Scene::load(&path).unwrap());
                            if !changed(scene).contains(r.member.as_str()) {
                                problems.push(format!(
                                    "{at}: scene {arg} never sets it to a non-default value"
                                ));
                            }
                        } else if !text.contains(&format!("\"{}\"", r.member)) {
                            problems.push(format!("{at}: scene {arg} never mentions it"));
                        }
                    }
                    "test" => {
                        let Some((file, func)) = arg.rsplit_once("::") else {
                            problems.push(format!("{at}: `test {arg}` is not PATH::FUNCTION"));
                            continue;
                        };
                        let src = std::fs::read_to_string(root().join(file)).unwrap_or_default();
                        if !src.contains(&format!("fn {func}(")) {
                            problems.push(format!("{at}: no `fn {func}(` in {file}"));
                        }
                    }
                    "flip" => {
                        if !FLIPS
                            .iter()
                            .any(|f| f.section == a.name && f.member == r.member)
                        {
                            problems.push(format!("{at}: no entry in FLIPS"));
                        }
                    }
                    "hint" => {
                        // No effect on the image by definition (context.rst
                        // or screen.rst says so); the second column says why.
                        if r.consumed.len() < 20 {
                            problems.push(format!("{at}: a hint row must say why it is one"));
                        }
                    }
                    "see" => {
                        if !audits.iter().any(|b| b.name == arg) {
                            problems.push(format!("{at}: `see {arg}`: no such section"));
                        }
                    }
                    _ => problems.push(format!("{at}: unknown proof {p:?}")),
                }
            }
        }
    }
    for f in FLIPS {
        let listed = doc.get(f.section).is_some_and(|rows| {
            rows.iter()
                .any(|r| r.member == f.member && r.proofs.iter().any(|p| p == "flip"))
        });
        if !listed {
            problems.push(format!(
                "FLIPS has {}.{} but the doc's row does not cite `flip`",
                f.section, f.member
            ));
        }
    }
    eprintln!("proofs by kind: {counts:?}");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

// ---------------------------------------------------------------------------
// Flips: the member at its default, then at a non-default value.

/// What the scene draws.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Base {
    /// Two overlapping triangles of opposite winding, per-vertex colours
    /// outside [0, 1], drawn twice (so stencil and depth results show).
    Tris,
    /// The same six vertices as three lines.
    Lines,
    /// The same six vertices as points.
    Points,
    /// A minified and a magnified textured quad over a mipmapped 8x8
    /// texture, texture coordinates outside [0, 1].
    Tex,
}

/// One flip: `context` is merged into the state object of `section` for
/// both renders (what the member needs to matter, such as `offset_tri` for
/// `offset_units`), `value` only into the second.
struct Flip {
    section: &'static str,
    member: &'static str,
    base: Base,
    context: &'static str,
    value: &'static str,
}

const fn flip(
    section: &'static str,
    member: &'static str,
    base: Base,
    context: &'static str,
    value: &'static str,
) -> Flip {
    Flip {
        section,
        member,
        base,
        context,
        value,
    }
}

const B: &str = "BlendState";
const RT: &str = "RtBlendState";
const DSA: &str = "DepthStencilAlphaState";
const ST: &str = "StencilState";
const R: &str = "RasterizerState";
const S: &str = "SamplerState";
use Base::*;

/// Depth test that lets the second triangle show where it is nearer.
const DEPTH: &str =
    r#"{"depth_enabled": true, "depth_writemask": true, "depth_func": "PIPE_FUNC_LESS"}"#;

/// Blending on with factors that replace (`src * 1 + dst * 0`).
const BLEND_REPLACE: &str = r#"{"blend_enable": true, "rgb_src_factor": "PIPE_BLENDFACTOR_ONE", "rgb_dst_factor": "PIPE_BLENDFACTOR_ZERO", "alpha_src_factor": "PIPE_BLENDFACTOR_ONE", "alpha_dst_factor": "PIPE_BLENDFACTOR_ZERO"}"#;

static FLIPS: &[Flip] = &[
    // --- pipe_blend_state ---
    flip(
        B,
        "logicop_enable",
        Tris,
        r#"{"logicop_func": "PIPE_LOGICOP_XOR"}"#,
        r#"{"logicop_enable": true}"#,
    ),
    flip(
        B,
        "logicop_func",
        Tris,
        r#"{"logicop_enable": true}"#,
        r#"{"logicop_func": "PIPE_LOGICOP_INVERT"}"#,
    ),
    // --- pipe_rt_blend_state ---
    flip(
        RT,
        "blend_enable",
        Tris,
        r#"{"rgb_src_factor": "PIPE_BLENDFACTOR_SRC_ALPHA", "rgb_dst_factor": "PIPE_BLENDFACTOR_INV_SRC_ALPHA", "alpha_src_factor": "PIPE_BLENDFACTOR_ONE", "alpha_dst_factor": "PIPE_BLENDFACTOR_ZERO"}"#,
        r#"{"blend_enable": true}"#,
    ),
    flip(
        RT,
        "rgb_func",
        Tris,
        BLEND_REPLACE,
        r#"{"rgb_func": "PIPE_BLEND_REVERSE_SUBTRACT"}"#,
    ),
    flip(
        RT,
        "rgb_src_factor",
        Tris,
        BLEND_REPLACE,
        r#"{"rgb_src_factor": "PIPE_BLENDFACTOR_CONST_COLOR"}"#,
    ),
    flip(
        RT,
        "rgb_dst_factor",
        Tris,
        BLEND_REPLACE,
        r#"{"rgb_dst_factor": "PIPE_BLENDFACTOR_ONE"}"#,
    ),
    flip(
        RT,
        "alpha_func",
        Tris,
        BLEND_REPLACE,
        r#"{"alpha_func": "PIPE_BLEND_MIN"}"#,
    ),
    flip(
        RT,
        "alpha_src_factor",
        Tris,
        BLEND_REPLACE,
        r#"{"alpha_src_factor": "PIPE_BLENDFACTOR_ZERO"}"#,
    ),
    flip(
        RT,
        "alpha_dst_factor",
        Tris,
        BLEND_REPLACE,
        r#"{"alpha_dst_factor": "PIPE_BLENDFACTOR_ONE"}"#,
    ),
    flip(RT, "colormask", Tris, "{}", r#"{"colormask": 5}"#),
    // --- pipe_depth_stencil_alpha_state ---
    flip(
        DSA,
        "depth_enabled",
        Tris,
        r#"{"depth_writemask": true, "depth_func": "PIPE_FUNC_LESS"}"#,
        r#"{"depth_enabled": true}"#,
    ),
    flip(
        DSA,
        "depth_writemask",
        Tris,
        r#"{"depth_enabled": true, "depth_func": "PIPE_FUNC_LESS"}"#,
        r#"{"depth_writemask": true}"#,
    ),
    flip(
        DSA,
        "depth_func",
        Tris,
        DEPTH,
        r#"{"depth_func": "PIPE_FUNC_GREATER"}"#,
    ),
    flip(
        DSA,
        "depth_bounds_test",
        Tris,
        r#"{"depth_bounds_min": 0.0, "depth_bounds_max": 0.5}"#,
        r#"{"depth_bounds_test": true}"#,
    ),
    flip(
        DSA,
        "depth_bounds_min",
        Tris,
        r#"{"depth_enabled": true, "depth_writemask": true, "depth_func": "PIPE_FUNC_LEQUAL", "depth_bounds_test": true, "depth_bounds_min": 0.0, "depth_bounds_max": 1.0}"#,
        r#"{"depth_bounds_min": 0.75}"#,
    ),
    flip(
        DSA,
        "depth_bounds_max",
        Tris,
        r#"{"depth_bounds_test": true, "depth_bounds_min": 0.0, "depth_bounds_max": 1.0}"#,
        r#"{"depth_bounds_max": 0.5}"#,
    ),
    flip(
        DSA,
        "alpha_enabled",
        Tris,
        r#"{"alpha_func": "PIPE_FUNC_GREATER", "alpha_ref_value": 0.7}"#,
        r#"{"alpha_enabled": true}"#,
    ),
    flip(
        DSA,
        "alpha_func",
        Tris,
        r#"{"alpha_enabled": true, "alpha_func": "PIPE_FUNC_GREATER", "alpha_ref_value": 0.7}"#,
        r#"{"alpha_func": "PIPE_FUNC_LESS"}"#,
    ),
    flip(
        DSA,
        "alpha_ref_value",
        Tris,
        r#"{"alpha_enabled": true, "alpha_func": "PIPE_FUNC_GREATER", "alpha_ref_value": 0.1}"#,
        r#"{"alpha_ref_value": 0.7}"#,
    ),
    // --- pipe_stencil_state (front face) ---
    flip(
        ST,
        "enabled",
        Tris,
        r#"{"func": "PIPE_FUNC_NEVER"}"#,
        r#"{"enabled": true}"#,
    ),
    flip(
        ST,
        "func",
        Tris,
        r#"{"enabled": true, "func": "PIPE_FUNC_NEVER"}"#,
        r#"{"func": "PIPE_FUNC_ALWAYS"}"#,
    ),
    flip(
        ST,
        "zpass_op",
        Tris,
        r#"{"enabled": true, "func": "PIPE_FUNC_EQUAL", "valuemask": 255, "writemask": 255}"#,
        r#"{"zpass_op": "PIPE_STENCIL_OP_INCR"}"#,
    ),
    flip(
        ST,
        "valuemask",
        Tris,
        r#"{"enabled": true, "func": "PIPE_FUNC_EQUAL", "zpass_op": "PIPE_STENCIL_OP_INCR", "writemask": 255}"#,
        r#"{"valuemask": 254}"#,
    ),
    flip(
        ST,
        "writemask",
        Tris,
        r#"{"enabled": true, "func": "PIPE_FUNC_EQUAL", "zpass_op": "PIPE_STENCIL_OP_INCR", "valuemask": 255}"#,
        r#"{"writemask": 255}"#,
    ),
    // --- pipe_rasterizer_state ---
    flip(R, "flatshade", Tris, "{}", r#"{"flatshade": true}"#),
    flip(
        R,
        "flatshade_first",
        Tris,
        r#"{"flatshade": true}"#,
        r#"{"flatshade_first": true}"#,
    ),
    flip(R, "light_twoside", Tris, "{}", r#"{"light_twoside": true}"#),
    flip(
        R,
        "clamp_vertex_color",
        Tris,
        "{}",
        r#"{"clamp_vertex_color": true}"#,
    ),
    flip(
        R,
        "front_ccw",
        Tris,
        r#"{"cull_face": "PIPE_FACE_BACK"}"#,
        r#"{"front_ccw": true}"#,
    ),
    flip(
        R,
        "cull_face",
        Tris,
        "{}",
        r#"{"cull_face": "PIPE_FACE_BACK"}"#,
    ),
    flip(
        R,
        "fill_front",
        Tris,
        "{}",
        r#"{"fill_front": "PIPE_POLYGON_MODE_LINE"}"#,
    ),
    flip(
        R,
        "fill_back",
        Tris,
        "{}",
        r#"{"fill_back": "PIPE_POLYGON_MODE_POINT"}"#,
    ),
    flip(
        R,
        "poly_stipple_enable",
        Tris,
        "{}",
        r#"{"poly_stipple_enable": true}"#,
    ),
    flip(
        R,
        "offset_tri",
        Tris,
        r#"{"offset_units": 4000000.0, "@dsa": {"depth_enabled": true, "depth_writemask": true, "depth_func": "PIPE_FUNC_LESS"}}"#,
        r#"{"offset_tri": true}"#,
    ),
    flip(
        R,
        "offset_line",
        Tris,
        r#"{"offset_units": 4000000.0, "fill_front": "PIPE_POLYGON_MODE_LINE", "fill_back": "PIPE_POLYGON_MODE_LINE", "@dsa": {"depth_enabled": true, "depth_writemask": true, "depth_func": "PIPE_FUNC_LESS"}}"#,
        r#"{"offset_line": true}"#,
    ),
    flip(
        R,
        "offset_point",
        Tris,
        r#"{"offset_units": 4000000.0, "point_size": 3.0, "fill_front": "PIPE_POLYGON_MODE_POINT", "fill_back": "PIPE_POLYGON_MODE_POINT", "@dsa": {"depth_enabled": true, "depth_writemask": true, "depth_func": "PIPE_FUNC_LESS"}}"#,
        r#"{"offset_point": true}"#,
    ),
    flip(
        R,
        "offset_units",
        Tris,
        r#"{"offset_tri": true, "@dsa": {"depth_enabled": true, "depth_writemask": true, "depth_func": "PIPE_FUNC_LESS"}}"#,
        r#"{"offset_units": 4000000.0}"#,
    ),
    flip(
        R,
        "offset_units_unscaled",
        Tris,
        r#"{"offset_tri": true, "offset_units": 0.25, "@dsa": {"depth_enabled": true, "depth_writemask": true, "depth_func": "PIPE_FUNC_LESS"}}"#,
        r#"{"offset_units_unscaled": true}"#,
    ),
    flip(
        R,
        "offset_scale",
        Tris,
        r#"{"offset_tri": true, "@dsa": {"depth_enabled": true, "depth_writemask": true, "depth_func": "PIPE_FUNC_LESS"}}"#,
        r#"{"offset_scale": 400.0}"#,
    ),
    flip(
        R,
        "offset_clamp",
        Tris,
        r#"{"offset_tri": true, "offset_units": 4000000.0, "@dsa": {"depth_enabled": true, "depth_writemask": true, "depth_func": "PIPE_FUNC_LESS"}}"#,
        r#"{"offset_clamp": 0.01}"#,
    ),
    // GL's analytic coverage (the default PolySmooth::Analytic): the
    // triangles' edge pixels get their covered fraction as alpha.
    flip(R, "poly_smooth", Tris, "{}", r#"{"poly_smooth": true}"#),
    flip(R, "line_width", Lines, "{}", r#"{"line_width": 5.0}"#),
    flip(
        R,
        "line_smooth",
        Lines,
        r#"{"line_width": 3.0}"#,
        r#"{"line_smooth": true}"#,
    ),
    flip(
        R,
        "line_stipple_enable",
        Lines,
        r#"{"line_stipple_pattern": 3855}"#,
        r#"{"line_stipple_enable": true}"#,
    ),
    flip(
        R,
        "line_stipple_pattern",
        Lines,
        r#"{"line_stipple_enable": true}"#,
        r#"{"line_stipple_pattern": 3855}"#,
    ),
    flip(
        R,
        "line_stipple_factor",
        Lines,
        r#"{"line_stipple_enable": true, "line_stipple_pattern": 3855}"#,
        r#"{"line_stipple_factor": 2}"#,
    ),
    flip(
        R,
        "line_last_pixel",
        Lines,
        "{}",
        r#"{"line_last_pixel": true}"#,
    ),
    flip(
        R,
        "line_rectangular",
        Lines,
        r#"{"line_width": 5.0}"#,
        r#"{"line_rectangular": true}"#,
    ),
    flip(
        R,
        "sprite_coord_enable",
        Points,
        r#"{"point_size": 8.0, "point_quad_rasterization": true}"#,
        r#"{"sprite_coord_enable": 4}"#,
    ),
    flip(
        R,
        "sprite_coord_mode",
        Points,
        r#"{"point_size": 8.0, "point_quad_rasterization": true, "sprite_coord_enable": 4}"#,
        r#"{"sprite_coord_mode": "PIPE_SPRITE_COORD_LOWER_LEFT"}"#,
    ),
    flip(
        R,
        "point_quad_rasterization",
        Points,
        r#"{"point_size": 5.0}"#,
        r#"{"point_quad_rasterization": true}"#,
    ),
    flip(
        R,
        "point_tri_clip",
        Points,
        r#"{"point_size": 8.0}"#,
        r#"{"point_tri_clip": true}"#,
    ),
    flip(
        R,
        "point_smooth",
        Points,
        r#"{"point_size": 6.0}"#,
        r#"{"point_smooth": true}"#,
    ),
    flip(R, "point_size", Points, "{}", r#"{"point_size": 5.0}"#),
    flip(R, "scissor", Tris, "{}", r#"{"scissor": true}"#),
    flip(
        R,
        "half_pixel_center",
        Tris,
        "{}",
        r#"{"half_pixel_center": false}"#,
    ),
    flip(
        R,
        "rasterizer_discard",
        Tris,
        "{}",
        r#"{"rasterizer_discard": true}"#,
    ),
    flip(R, "clip_halfz", Tris, "{}", r#"{"clip_halfz": true}"#),
    flip(
        R,
        "depth_clip_near",
        Tris,
        "{}",
        r#"{"depth_clip_near": false}"#,
    ),
    flip(
        R,
        "depth_clip_far",
        Tris,
        "{}",
        r#"{"depth_clip_far": false}"#,
    ),
    flip(
        R,
        "depth_clamp",
        Tris,
        r#"{"depth_clip_near": false, "depth_clip_far": false, "@dsa": {"depth_enabled": true, "depth_writemask": true, "depth_func": "PIPE_FUNC_LESS"}}"#,
        r#"{"depth_clamp": true}"#,
    ),
    flip(
        R,
        "clip_plane_enable",
        Tris,
        "{}",
        r#"{"clip_plane_enable": 1}"#,
    ),
    flip(
        R,
        "conservative_raster_mode",
        Tris,
        "{}",
        r#"{"conservative_raster_mode": "PIPE_CONSERVATIVE_RASTER_POST_SNAP"}"#,
    ),
    flip(
        R,
        "conservative_raster_dilate",
        Tris,
        r#"{"conservative_raster_mode": "PIPE_CONSERVATIVE_RASTER_POST_SNAP"}"#,
        r#"{"conservative_raster_dilate": 0.75}"#,
    ),
    // --- pipe_sampler_state ---
    flip(
        S,
        "wrap_s",
        Tex,
        "{}",
        r#"{"wrap_s": "PIPE_TEX_WRAP_CLAMP_TO_EDGE"}"#,
    ),
    flip(
        S,
        "wrap_t",
        Tex,
        "{}",
        r#"{"wrap_t": "PIPE_TEX_WRAP_MIRROR_REPEAT"}"#,
    ),
    flip(
        S,
        "min_img_filter",
        Tex,
        "{}",
        r#"{"min_img_filter": "PIPE_TEX_FILTER_LINEAR"}"#,
    ),
    flip(
        S,
        "min_mip_filter",
        Tex,
        "{}",
        r#"{"min_mip_filter": "PIPE_TEX_MIPFILTER_LINEAR"}"#,
    ),
    flip(
        S,
        "mag_img_filter",
        Tex,
        "{}",
        r#"{"mag_img_filter": "PIPE_TEX_FILTER_LINEAR"}"#,
    ),
    flip(
        S,
        "normalized_coords",
        Tex,
        "{}",
        r#"{"normalized_coords": false}"#,
    ),
    flip(
        S,
        "max_anisotropy",
        Tex,
        r#"{"min_img_filter": "PIPE_TEX_FILTER_LINEAR", "min_mip_filter": "PIPE_TEX_MIPFILTER_LINEAR"}"#,
        r#"{"max_anisotropy": 16}"#,
    ),
    flip(S, "lod_bias", Tex, "{}", r#"{"lod_bias": 1.5}"#),
    flip(S, "min_lod", Tex, "{}", r#"{"min_lod": 2.0}"#),
    flip(S, "max_lod", Tex, "{}", r#"{"max_lod": 0.0}"#),
    flip(
        S,
        "border_color",
        Tex,
        r#"{"wrap_s": "PIPE_TEX_WRAP_CLAMP_TO_BORDER"}"#,
        r#"{"border_color": [1.0, 0.0, 1.0, 1.0]}"#,
    ),
];

/// 32-bit rows of the base scenes' polygon stipple: a checkerboard of 2x2
/// blocks.
fn stipple() -> Vec<u32> {
    (0..32)
        .map(|y| {
            if (y / 2) % 2 == 0 {
                0xcccc_cccc
            } else {
                0x3333_3333
            }
        })
        .collect()
}

const SHADER: &str = r#"
struct VOut {
    @builtin(position) pos: vec4<f32>,
    @location(0) color: vec4<f32>,
    @location(1) bcolor: vec4<f32>,
    @location(2) gen: vec4<f32>,
};
struct FIn {
    @location(0) color: vec4<f32>,
    @location(2) gen: vec4<f32>,
};
@group(1) @binding(0) var tex: texture_2d<f32>;
@group(2) @binding(0) var smp: sampler;
@vertex
fn vs(@location(0) p: vec4<f32>, @location(1) c: vec4<f32>, @location(2) b: vec4<f32>,
      @location(3) g: vec4<f32>) -> VOut {
    var o: VOut;
    o.pos = p;
    o.color = c;
    o.bcolor = b;
    o.gen = g;
    return o;
}
@fragment
fn fs(i: FIn) -> @location(0) vec4<f32> {
    let t = textureSample(tex, smp, i.gen.xy);
    return i.color * 0.5 + vec4<f32>(t.rgb * 0.5 + i.gen.xyz * 0.25, 0.0);
}
"#;

/// Position, colour, back colour, generic: 16 floats a vertex.
fn vertices(base: Base) -> Vec<f32> {
    let v = |p: [f32; 4], c: [f32; 4], b: [f32; 4], g: [f32; 4]| [p, c, b, g].concat();
    match base {
        Tex => {
            // Upper half: 48 x 40 texels over 32 x 16 pixels (minified,
            // anisotropic); lower half: 4 x 4 texels over 32 x 16 (magnified).
            let z = [0.0; 4];
            let quad = |y0: f32, y1: f32, s: [f32; 2], t: [f32; 2]| {
                [
                    v([-1.0, y0, 0.5, 1.0], z, z, [s[0], t[0], 0.0, 0.0]),
                    v([1.0, y0, 0.5, 1.0], z, z, [s[1], t[0], 0.0, 0.0]),
                    v([-1.0, y1, 0.5, 1.0], z, z, [s[0], t[1], 0.0, 0.0]),
                    v([1.0, y0, 0.5, 1.0], z, z, [s[1], t[0], 0.0, 0.0]),
                    v([1.0, y1, 0.5, 1.0], z, z, [s[1], t[1], 0.0, 0.0]),
                    v([-1.0, y1, 0.5, 1.0], z, z, [s[0], t[1], 0.0, 0.0]),
                ]
                .concat()
            };
            [
                quad(-1.0, 0.0, [-2.0, 4.0], [-1.5, 3.5]),
                quad(0.0, 1.0, [-0.25, 0.25], [-0.3, 0.2]),
            ]
            .concat()
        }
        _ => {
            // Set A: counter-clockwise in y-up NDC, z crossing the near
            // plane at the first vertex and the far plane at the third;
            // then clockwise, crossing the first in depth; then a point
            // whose centre is right of the view volume.  Set B: the same
            // with the colours rotated, so the second draw shows what the
            // first left in the depth and stencil buffers.
            let set = |rot: usize| {
                let c = |c: [f32; 4]| -> [f32; 4] {
                    [c[rot % 3], c[(rot + 1) % 3], c[(rot + 2) % 3], c[3]]
                };
                [
                    v(
                        [-0.9, -0.9, -1.4, 1.0],
                        c([2.0, -0.5, 0.2, 0.8]),
                        [0.0, 0.0, 1.0, 1.0],
                        [0.1, 0.9, 0.5, 0.0],
                    ),
                    v(
                        [0.9, -0.6, 0.2, 1.0],
                        c([-0.5, 1.5, 0.3, 0.6]),
                        [0.0, 1.0, 1.0, 1.0],
                        [0.8, 0.2, 0.1, 0.0],
                    ),
                    v(
                        [-0.2, 0.9, 1.6, 1.0],
                        c([0.3, 0.2, 2.0, 1.0]),
                        [1.0, 1.0, 0.0, 1.0],
                        [0.4, 0.6, 0.9, 0.0],
                    ),
                    v(
                        [-0.6, 0.8, 0.5, 1.0],
                        c([0.9, 0.1, 0.1, 0.5]),
                        [0.1, 0.9, 0.9, 1.0],
                        [0.7, 0.3, 0.3, 0.0],
                    ),
                    v(
                        [0.95, 0.7, 0.9, 1.0],
                        c([0.1, 0.9, 0.1, 0.2]),
                        [0.9, 0.1, 0.9, 1.0],
                        [0.2, 0.5, 0.8, 0.0],
                    ),
                    v(
                        [0.5, -0.95, 0.4, 1.0],
                        c([0.1, 0.1, 0.9, 0.9]),
                        [0.9, 0.9, 0.1, 1.0],
                        [0.5, 0.1, 0.7, 0.0],
                    ),
                    v(
                        [1.1, 0.1, 0.0, 1.0],
                        c([0.9, 0.8, 0.1, 1.0]),
                        [0.9, 0.9, 0.1, 1.0],
                        [0.5, 0.5, 0.5, 0.0],
                    ),
                ]
                .concat()
            };
            [set(0), set(1)].concat()
        }
    }
}

/// An 8x8 RGBA8 texture with four levels: a pattern on level 0, one
/// colour per smaller level.
fn texture_calls() -> Vec<Value> {
    let level = |l: u32| -> Vec<u32> {
        let size = 8 >> l;
        (0..size * size)
            .flat_map(|i| {
                let (x, y) = (i % size, i / size);
                let check = if (x + y) % 2 == 0 { 255 } else { 0 };
                [x * 255 / size, y * 255 / size, check ^ (l * 85), 255]
            })
            .collect()
    };
    let mut calls = vec![
        json!({"op": "resource_create", "id": "tex", "target": "PIPE_TEXTURE_2D",
        "format": "PIPE_FORMAT_R8G8B8A8_UNORM", "width0": 8, "height0": 8, "last_level": 3,
        "bind": ["PIPE_BIND_SAMPLER_VIEW"], "type": "u8", "data": level(0)}),
    ];
    for l in 1..4u32 {
        let size = 8 >> l;
        calls.push(
            json!({"op": "texture_subdata", "resource": "tex", "level": l,
            "box": {"x": 0, "y": 0, "z": 0, "width": size, "height": size, "depth": 1},
            "type": "u8", "data": level(l)}),
        );
    }
    calls.push(json!({"op": "create_sampler_view", "id": "view", "resource": "tex"}));
    calls
}

/// The base scene with its four CSO state objects as given.
fn scene(base: Base, states: &BTreeMap<&str, Value>) -> Value {
    let verts = vertices(base);
    // (mode, first vertex of the second draw, vertices a draw)
    let (mode, second, count) = match base {
        Tex => ("PIPE_PRIM_TRIANGLES", 0, 12),
        Tris => ("PIPE_PRIM_TRIANGLES", 7, 6),
        Lines => ("PIPE_PRIM_LINES", 7, 6),
        Points => ("PIPE_PRIM_POINTS", 7, 7),
    };
    let elements: Vec<Value> = (0..4)
        .map(|i| {
            json!({"src_offset": 16 * i, "vertex_buffer_index": 0,
            "src_format": "PIPE_FORMAT_R32G32B32A32_FLOAT"})
        })
        .collect();
    let mut calls = vec![
        json!({"op": "resource_create", "id": "rt", "target": "PIPE_TEXTURE_2D",
            "format": "PIPE_FORMAT_R8G8B8A8_UNORM", "width0": 32, "height0": 32,
            "bind": ["PIPE_BIND_RENDER_TARGET"]}),
        json!({"op": "resource_create", "id": "zs", "target": "PIPE_TEXTURE_2D",
            "format": "PIPE_FORMAT_Z24_UNORM_S8_UINT", "width0": 32, "height0": 32,
            "bind": ["PIPE_BIND_DEPTH_STENCIL"]}),
        json!({"op": "create_surface", "id": "rt_surf", "resource": "rt"}),
        json!({"op": "create_surface", "id": "zs_surf", "resource": "zs"}),
        json!({"op": "set_framebuffer_state", "width": 32, "height": 32, "cbufs": ["rt_surf"],
            "zsbuf": "zs_surf"}),
        json!({"op": "set_viewport_states", "viewports": [
            {"scale": [16.0, 16.0, 0.25], "translate": [16.0, 16.0, 0.5]}]}),
        json!({"op": "set_scissor_states", "scissors": [{"minx": 5, "miny": 3, "maxx": 27, "maxy": 30}]}),
        json!({"op": "set_clip_state", "ucp": [[1.0, 0.5, 0.0, 0.3]]}),
        json!({"op": "set_polygon_stipple", "stipple": stipple()}),
        json!({"op": "set_blend_color", "color": [0.25, 0.5, 0.75, 0.5]}),
        json!({"op": "set_stencil_ref", "ref_value": [0, 0]}),
    ];
    calls.extend(texture_calls());
    for (op, id) in [
        ("blend", "blend"),
        ("depth_stencil_alpha", "dsa"),
        ("rasterizer", "rast"),
    ] {
        calls.push(json!({"op": format!("create_{op}_state"), "id": id, "state": states[op]}));
        calls.push(json!({"op": format!("bind_{op}_state"), "id": id}));
    }
    calls.extend([
        json!({"op": "create_sampler_state", "id": "smp", "state": states["sampler"]}),
        json!({"op": "bind_sampler_states", "shader": "PIPE_SHADER_FRAGMENT", "samplers": ["smp"]}),
        json!({"op": "set_sampler_views", "shader": "PIPE_SHADER_FRAGMENT", "views": ["view"]}),
        json!({"op": "create_vs_state", "id": "vs", "code": SHADER, "entry_point": "vs",
            "semantics": {"0": "COLOR0", "1": "BCOLOR0"}}),
        json!({"op": "create_fs_state", "id": "fs", "code": SHADER, "entry_point": "fs",
            "semantics": {"0": "COLOR0"}}),
        json!({"op": "bind_vs_state", "id": "vs"}),
        json!({"op": "bind_fs_state", "id": "fs"}),
        json!({"op": "create_vertex_elements_state", "id": "ve", "elements": elements}),
        json!({"op": "bind_vertex_elements_state", "id": "ve"}),
        json!({"op": "resource_create", "id": "vb", "target": "PIPE_BUFFER",
            "width0": verts.len() * 4, "bind": ["PIPE_BIND_VERTEX_BUFFER"], "data": verts}),
        json!({"op": "set_vertex_buffers", "buffers": [{"buffer": "vb", "stride": 64}]}),
        json!({"op": "clear", "buffers": ["PIPE_CLEAR_COLOR", "PIPE_CLEAR_DEPTH", "PIPE_CLEAR_STENCIL"],
            "color": [0.2, 0.3, 0.4, 0.5], "depth": 0.8, "stencil": 0}),
        json!({"op": "draw_vbo", "mode": mode, "count": count}),
        json!({"op": "draw_vbo", "mode": mode, "start": second, "count": count}),
    ]);
    json!({"format": "gallium-scene/1", "calls": calls,
        "outputs": [{"name": "color", "surface": "rt_surf"}]})
}

/// Merges the members of `patch` into `target` (one level deep); members
/// named `@blend`, `@dsa`, `@rast` or `@sampler` go to that state object
/// instead (a context another state must provide).
fn merge(states: &mut BTreeMap<&str, Value>, section: &str, patch: &str) {
    let patch: Value = serde_json::from_str(patch).expect("FLIPS JSON");
    for (k, v) in patch.as_object().expect("FLIPS JSON object") {
        match k.strip_prefix('@') {
            Some(other) => {
                let key = match other {
                    "blend" => "blend",
                    "dsa" => "depth_stencil_alpha",
                    "rast" => "rasterizer",
                    "sampler" => "sampler",
                    _ => panic!("FLIPS: unknown state {k}"),
                };
                for (k2, v2) in v.as_object().expect("FLIPS JSON object") {
                    states.get_mut(key).unwrap()[k2] = v2.clone();
                }
            }
            None => state_object(states, section)[k] = v.clone(),
        }
    }
}

/// The JSON object `section`'s members live in.
fn state_object<'a>(states: &'a mut BTreeMap<&str, Value>, section: &str) -> &'a mut Value {
    match section {
        "BlendState" => states.get_mut("blend").unwrap(),
        "RtBlendState" => &mut states.get_mut("blend").unwrap()["rt"][0],
        "DepthStencilAlphaState" => states.get_mut("depth_stencil_alpha").unwrap(),
        "StencilState" => {
            let dsa = states.get_mut("depth_stencil_alpha").unwrap();
            if dsa.get("stencil").is_none() {
                dsa["stencil"] = json!([{}, {}]);
            }
            &mut dsa["stencil"][0]
        }
        "RasterizerState" => states.get_mut("rasterizer").unwrap(),
        "SamplerState" => states.get_mut("sampler").unwrap(),
        other => panic!("FLIPS: no state object for section {other}"),
    }
}

/// Renders the base scene with `patches` applied to `section`'s state.
fn render(f: &Flip, patches: &[&str]) -> Result<Vec<u8>, SceneError> {
    let mut states: BTreeMap<&str, Value> = BTreeMap::new();
    states.insert("blend", json!({"rt": [{"colormask": 15}]}));
    states.insert("depth_stencil_alpha", json!({}));
    states.insert("rasterizer", json!({}));
    states.insert("sampler", json!({}));
    for p in patches {
        merge(&mut states, f.section, p);
    }
    let text = scene(f.base, &states).to_string();
    let scene = Scene::parse(&text, Path::new("."))?;
    let report = replay(
        &scene,
        &ReplayOptions {
            threads: 1,
            ..Default::default()
        },
    )?;
    match &report.outputs[0].pixels {
        ferropipe_scene::OutputPixels::Color(px) => Ok(px.clone()),
        _ => panic!("colour output expected"),
    }
}

#[test]
fn flipping_a_member_changes_the_image() {
    let mut problems = Vec::new();
    let mut seen = BTreeSet::new();
    for f in FLIPS {
        assert!(
            seen.insert((f.section, f.member)),
            "FLIPS lists {}.{} twice",
            f.section,
            f.member
        );
        let at = format!("{}.{} = {}", f.section, f.member, f.value);
        match (render(f, &[f.context]), render(f, &[f.context, f.value])) {
            (Ok(a), Ok(b)) => {
                let differ = a.chunks(4).zip(b.chunks(4)).filter(|(x, y)| x != y).count();
                if differ == 0 {
                    problems.push(format!("{at}: same image as without it (ignored?)"));
                }
            }
            (a, b) => problems.push(format!(
                "{at}: did not render: {:?} / {:?}",
                a.err(),
                b.err()
            )),
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

// ---------------------------------------------------------------------------
// Members the flips cannot reach.

/// A scene drawing one full-viewport triangle pair into whatever
/// `set_framebuffer_state` says, with occlusion counter `q` around it.
fn quad_scene(fb: Value, rast: Value) -> Value {
    quad_scene_with(
        fb,
        rast,
        "@fragment fn fs() -> @location(0) vec4<f32> { return vec4<f32>(1.0, 0.0, 0.0, 1.0); }",
    )
}

/// [`quad_scene`] with the fragment shader `fs`.
fn quad_scene_with(fb: Value, rast: Value, fs: &str) -> Value {
    let code = format!(
        "@vertex fn vs(@location(0) p: vec4<f32>) -> @builtin(position) vec4<f32> {{ return p; }}\n{fs}"
    );
    let verts = [
        -1.0f32, -1.0, 0.0, 1.0, 1.0, -1.0, 0.0, 1.0, -1.0, 1.0, 0.0, 1.0, //
        1.0, -1.0, 0.0, 1.0, 1.0, 1.0, 0.0, 1.0, -1.0, 1.0, 0.0, 1.0,
    ];
    json!({"format": "gallium-scene/1", "calls": [
        fb,
        {"op": "set_viewport_states", "viewports": [{"scale": [4.0, 4.0, 0.5], "translate": [4.0, 4.0, 0.5]}]},
        {"op": "create_blend_state", "id": "b", "state": {"rt": [{"colormask": 15}]}},
        {"op": "bind_blend_state", "id": "b"},
        {"op": "create_depth_stencil_alpha_state", "id": "d", "state": {}},
        {"op": "bind_depth_stencil_alpha_state", "id": "d"},
        {"op": "create_rasterizer_state", "id": "r", "state": rast},
        {"op": "bind_rasterizer_state", "id": "r"},
        {"op": "create_vs_state", "id": "vs", "code": code, "entry_point": "vs"},
        {"op": "create_fs_state", "id": "fs", "code": code, "entry_point": "fs"},
        {"op": "bind_vs_state", "id": "vs"},
        {"op": "bind_fs_state", "id": "fs"},
        {"op": "create_vertex_elements_state", "id": "ve", "elements": [
            {"src_offset": 0, "vertex_buffer_index": 0, "src_format": "PIPE_FORMAT_R32G32B32A32_FLOAT"}]},
        {"op": "bind_vertex_elements_state", "id": "ve"},
        {"op": "resource_create", "id": "vb", "target": "PIPE_BUFFER", "width0": 96,
            "bind": ["PIPE_BIND_VERTEX_BUFFER"], "data": verts},
        {"op": "set_vertex_buffers", "buffers": [{"buffer": "vb", "stride": 16}]},
        {"op": "create_query", "id": "q", "query_type": "PIPE_QUERY_OCCLUSION_COUNTER"},
        {"op": "begin_query", "id": "q"},
        {"op": "draw_vbo", "mode": "PIPE_PRIM_TRIANGLES", "count": 6},
        {"op": "end_query", "id": "q"},
        {"op": "get_query_result", "id": "q"},
    ]})
}

fn replay_json(v: &Value) -> Result<ferropipe_scene::ReplayReport, SceneError> {
    let scene = Scene::parse(&v.to_string(), Path::new("."))?;
    replay(
        &scene,
        &ReplayOptions {
            threads: 1,
            ..Default::default()
        },
    )
}

/// `FramebufferState::samples` of a framebuffer without attachments: a
/// multisampled rasterization of the 8x8 framebuffer covers 4 samples a
/// pixel, which the occlusion counter counts (GL's
/// `GL_FRAMEBUFFER_DEFAULT_SAMPLES`; llvmpipe counts samples too).
#[test]
fn framebuffer_samples_without_attachments_count_samples() {
    let count = |samples: u32| {
        let fb =
            json!({"op": "set_framebuffer_state", "width": 8, "height": 8, "samples": samples});
        let report = replay_json(&quad_scene(fb, json!({"multisample": true}))).unwrap();
        report.queries[0].1.as_u64().unwrap()
    };
    assert_eq!(count(0), 64);
    assert_eq!(count(4), 256);
}

/// `ResourceTemplate` members that would change nothing here are refused
/// with `Unsupported` naming them, rather than accepted and ignored.
#[test]
fn resource_members_that_change_nothing_here_are_refused() {
    use ferropipe::Format;
    use ferropipe::{BindFlags, ResourceFlags};
    let screen = ferropipe::Screen::new(ferropipe::ScreenConfig {
        threads: 1,
        ..Default::default()
    })
    .unwrap();
    let rt = ResourceTemplate::texture_2d(Format::R8G8B8A8_UNORM, 8, 8, BindFlags::RENDER_TARGET);
    let refused = |t: ResourceTemplate, member: &str| match screen.resource_create(&t) {
        Err(e) => {
            assert!(e.is_unsupported() && e.to_string().contains(member), "{e}");
        }
        Ok(_) => panic!("{t:?}: created; expected Unsupported naming {member}"),
    };
    // EQAA: fewer stored samples than rasterized ones.
    for storage in [1, 2] {
        refused(
            ResourceTemplate {
                nr_samples: 4,
                nr_storage_samples: storage,
                ..rt
            },
            "nr_storage_samples",
        );
    }
    for ok in [0, 4] {
        let t = ResourceTemplate {
            nr_samples: 4,
            nr_storage_samples: ok,
            ..rt
        };
        assert!(screen.resource_create(&t).is_ok(), "{t:?}");
    }
    for flag in [ResourceFlags::SPARSE, ResourceFlags::MAP_COHERENT] {
        refused(ResourceTemplate { flags: flag, ..rt }, "flags");
    }
    for hint in [
        ResourceFlags::MAP_PERSISTENT,
        ResourceFlags::TEXTURING_MORE_LIKELY,
        ResourceFlags::SINGLE_THREAD_USE,
    ] {
        assert!(
            screen
                .resource_create(&ResourceTemplate { flags: hint, ..rt })
                .is_ok()
        );
    }
}

/// `BlitInfo::render_condition_enable`: a blit under a failing condition
/// is skipped only when it asks to obey it.
#[test]
fn blits_obey_the_render_condition_only_when_enabled() {
    let blit = |enable: bool| {
        let fb =
            json!({"op": "set_framebuffer_state", "width": 8, "height": 8, "cbufs": ["dst_surf"]});
        let mut v = quad_scene(fb, json!({}));
        let calls = v["calls"].as_array_mut().unwrap();
        let setup = [
            json!({"op": "resource_create", "id": "src", "target": "PIPE_TEXTURE_2D",
                "format": "PIPE_FORMAT_R8G8B8A8_UNORM", "width0": 8, "height0": 8,
                "bind": ["PIPE_BIND_SAMPLER_VIEW", "PIPE_BIND_RENDER_TARGET"]}),
            json!({"op": "resource_create", "id": "dst", "target": "PIPE_TEXTURE_2D",
                "format": "PIPE_FORMAT_R8G8B8A8_UNORM", "width0": 8, "height0": 8,
                "bind": ["PIPE_BIND_RENDER_TARGET"]}),
            json!({"op": "create_surface", "id": "src_surf", "resource": "src"}),
            json!({"op": "create_surface", "id": "dst_surf", "resource": "dst"}),
        ];
        for (i, c) in setup.into_iter().enumerate() {
            calls.insert(i, c);
        }
        // Drop the draw: the query counts nothing, so the condition
        // "render when the result is not zero" fails.
        calls.retain(|c| c["op"] != "draw_vbo");
        let full = json!({"x": 0, "y": 0, "z": 0, "width": 8, "height": 8, "depth": 1});
        calls.extend([
            json!({"op": "clear_render_target", "surface": "src_surf", "color": [1.0, 0.0, 0.0, 1.0],
                "width": 8, "height": 8}),
            json!({"op": "clear_render_target", "surface": "dst_surf", "color": [0.0, 0.0, 1.0, 1.0],
                "width": 8, "height": 8}),
            json!({"op": "render_condition", "query": "q", "condition": false,
                "mode": "PIPE_RENDER_COND_WAIT"}),
            json!({"op": "blit", "dst": {"resource": "dst", "box": full},
                "src": {"resource": "src", "box": full}, "render_condition_enable": enable}),
        ]);
        v["outputs"] = json!([{"name": "color", "surface": "dst_surf"}]);
        let report = replay_json(&v).unwrap();
        match &report.outputs[0].pixels {
            ferropipe_scene::OutputPixels::Color(px) => px[..4].to_vec(),
            _ => unreachable!(),
        }
    };
    assert_eq!(
        blit(false),
        [255, 0, 0, 255],
        "the blit ignores the condition"
    );
    assert_eq!(
        blit(true),
        [0, 0, 255, 255],
        "the blit obeys the failing condition"
    );
}

/// The scene format keeps `line_stipple_pattern`'s low 16 bits, as the C
/// bit-field (`unsigned line_stipple_pattern:16`) and the reference do.
#[test]
fn scene_line_stipple_pattern_keeps_the_low_16_bits() {
    let v = json!({"format": "gallium-scene/1", "calls": [
        {"op": "create_rasterizer_state", "id": "r", "state": {"line_stipple_pattern": 0x1_0f0f}}]});
    let scene = Scene::parse(&v.to_string(), Path::new(".")).unwrap();
    assert_eq!(rasterizers(&scene)[0].line_stipple_pattern, 0x0f0f);
}

/// `ConstantBufferBinding`: the fragment shader reads a `vec4` at binding
/// 0 of a 32-byte buffer holding two colours; the offset picks the colour,
/// a size that ends inside the `vec4` reads zeros past it (robust buffer
/// access; GL leaves such a read undefined), and user constants replace
/// the buffer.
#[test]
fn constant_buffer_ranges_select_what_shaders_read() {
    // `None`: user constants (`data`), a third colour.
    let pixel = |offset: Option<u32>, size: Option<u32>| {
        let fb =
            json!({"op": "set_framebuffer_state", "width": 8, "height": 8, "cbufs": ["rt_surf"]});
        let fs = "@group(0) @binding(0) var<uniform> c: vec4<f32>;\n\
                  @fragment fn fs() -> @location(0) vec4<f32> { return c; }";
        let mut v = quad_scene_with(fb, json!({}), fs);
        let calls = v["calls"].as_array_mut().unwrap();
        let mut cb = match offset {
            Some(offset) => json!({"op": "set_constant_buffer", "shader": "PIPE_SHADER_FRAGMENT",
                "index": 0, "buffer": "cb", "buffer_offset": offset}),
            None => json!({"op": "set_constant_buffer", "shader": "PIPE_SHADER_FRAGMENT",
                "index": 0, "data": [0.0, 0.0, 1.0, 1.0]}),
        };
        if let Some(size) = size {
            cb["buffer_size"] = json!(size);
        }
        for (i, c) in [
            json!({"op": "resource_create", "id": "rt", "target": "PIPE_TEXTURE_2D",
                "format": "PIPE_FORMAT_R8G8B8A8_UNORM", "width0": 8, "height0": 8,
                "bind": ["PIPE_BIND_RENDER_TARGET"]}),
            json!({"op": "create_surface", "id": "rt_surf", "resource": "rt"}),
            json!({"op": "resource_create", "id": "cb", "target": "PIPE_BUFFER", "width0": 32,
                "bind": ["PIPE_BIND_CONSTANT_BUFFER"],
                "data": [1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 1.0]}),
            cb,
        ]
        .into_iter()
        .enumerate()
        {
            calls.insert(i, c);
        }
        v["outputs"] = json!([{"name": "color", "surface": "rt_surf"}]);
        let report = replay_json(&v).unwrap();
        match &report.outputs[0].pixels {
            ferropipe_scene::OutputPixels::Color(px) => px[..4].to_vec(),
            _ => unreachable!(),
        }
    };
    assert_eq!(pixel(Some(0), None), [255, 0, 0, 255]);
    assert_eq!(pixel(Some(16), None), [0, 255, 255, 255]);
    assert_eq!(pixel(Some(16), Some(8)), [0, 255, 0, 0]);
    assert_eq!(pixel(None, None), [0, 0, 255, 255]);
}
