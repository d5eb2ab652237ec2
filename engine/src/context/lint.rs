//! The validation layer for embedders (Vulkan's validation layers, Mesa's
//! `GALLIUM_DEBUG` / `LP_DEBUG` checks): [`crate::ScreenConfig::validate`]
//! or `FERROPIPE_DEBUG=validate`.
//!
//! Gallium's zero defaults are faithful but make silent black images easy:
//! `BlendState::default()` has colour mask 0, a context's viewport is all
//! zeros until `set_viewport_states`, an unbound sampler view samples as
//! zeros.  With validation on, every recorded draw is checked once, at
//! record time, against the state block it will run with; a draw that can
//! produce nothing, or that reads something unbound, logs **one**
//! `log::warn!` naming the draw (its index among the context's `draw_vbo`
//! calls, from 0) and every cause found.  Off, the cost is one branch per
//! draw.  Nothing here changes what is rendered.
//!
//! Precision over recall: a correct scene must produce no warning.  Of
//! the 65 conformance scenes, 62 replay without one; the 4 warnings left
//! are the draws of `colormask`, `cull_face` and `scissor` that test these
//! very rules on purpose (`engine/tests/validate.rs` holds that list; the
//! perf scenes were not checked yet).  So "produces nothing"
//! causes are reported only when the draw has no other observable effect
//! (no stream-output capture, no query active), and vertex-buffer sizes are
//! checked only for non-indexed draws, whose vertex range is known without
//! reading indices.

use ferropipe_components::batch::{StageResources, StateBlock};
use ferropipe_components::draw::DrawInfo;
use ferropipe_components::enums::{Face, PrimType};
use ferropipe_components::shader::{Semantic, ShaderInfo};

/// Why a draw recorded with `block` can produce nothing, or reads something
/// unbound; empty for a draw that is fine.  `observable`: the draw has an
/// effect besides its pixels (it captures stream output, or a query counts
/// it).
pub(crate) fn lint_draw(info: &DrawInfo, block: &StateBlock, observable: bool) -> Vec<String> {
    let mut causes = Vec::new();
    if !observable {
        produces_nothing(info, block, &mut causes);
    }
    let vs = block.vs.info();
    let fs = block.fs.info();
    unbound_stage_resources("vertex", vs, &block.vs_resources, &mut causes);
    if !block.rasterizer.rasterizer_discard {
        unbound_stage_resources("fragment", fs, &block.fs_resources, &mut causes);
    }
    vertex_inputs(info, block, vs, &mut causes);
    causes
}

fn is_triangle_mode(mode: PrimType) -> bool {
    matches!(
        mode,
        PrimType::Triangles
            | PrimType::TriangleStrip
            | PrimType::TriangleFan
            | PrimType::Quads
            | PrimType::QuadStrip
            | PrimType::Polygon
            | PrimType::TrianglesAdjacency
            | PrimType::TriangleStripAdjacency
    )
}

/// The causes that leave every pixel of every buffer unchanged.
fn produces_nothing(info: &DrawInfo, block: &StateBlock, causes: &mut Vec<String>) {
    let r = &*block.rasterizer;
    if r.rasterizer_discard {
        causes.push(
            "rasterizer_discard is set and nothing captures stream output or counts a query".into(),
        );
        return;
    }
    let fb = &*block.framebuffer;
    let zs = fb.zsbuf.as_ref().map(|z| z.desc.format.desc());
    if fb.cbufs.iter().all(Option::is_none) && zs.is_none() {
        causes.push("the framebuffer has no colour and no depth/stencil buffer".into());
        return;
    }
    let color_write = fb
        .cbufs
        .iter()
        .enumerate()
        .any(|(i, cb)| cb.is_some() && block.blend.rt_state(i).colormask & 0xf != 0);
    let dsa = &*block.dsa;
    let depth_write = zs.is_some_and(|d| d.has_depth()) && dsa.depth_enabled && dsa.depth_writemask;
    let stencil_write = zs.is_some_and(|d| d.has_stencil())
        && dsa.stencil.iter().any(|s| s.enabled && s.writemask != 0);
    if !color_write && !depth_write && !stencil_write {
        causes.push(
            "every colour write is masked (blend colormask 0 for each bound colour buffer; \
             BlendState::default() masks everything) and no depth or stencil write is enabled"
                .into(),
        );
    }
    let vp = &block.viewports[0];
    if vp.scale[0] == 0.0 || vp.scale[1] == 0.0 {
        causes.push(format!(
            "viewport 0 is empty (scale x {}, y {}; set_viewport_states never called?)",
            vp.scale[0], vp.scale[1]
        ));
    }
    let s = &block.scissors[0];
    if r.scissor && (s.minx >= s.maxx || s.miny >= s.maxy) {
        causes.push(format!(
            "the scissor test is on and scissor 0 is empty ({}..{} x {}..{})",
            s.minx, s.maxx, s.miny, s.maxy
        ));
    }
    if r.cull_face == Face::FrontAndBack && is_triangle_mode(info.mode) {
        causes.push("cull_face is FRONT_AND_BACK: every triangle is culled".into());
    }
    let samples = fb
        .cbufs
        .iter()
        .flatten()
        .chain(fb.zsbuf.iter())
        .fold(1, |n, s| n.max(s.resource.templ.samples()));
    if block.sample_mask & ((1u64 << samples.min(32)) - 1) as u32 == 0 {
        causes.push("the sample mask is 0".into());
    }
    // Colour buffers the draw writes but no fragment shader output reaches
    // stay unchanged (merge skips them).
    let fs = block.fs.info();
    for (i, cb) in fb.cbufs.iter().enumerate() {
        if cb.is_none() || block.blend.rt_state(i).colormask & 0xf == 0 {
            continue;
        }
        let fed = fs.outputs.iter().any(|o| {
            o.location as usize == i
                && o.blend_src == 0
                && !matches!(
                    o.semantic,
                    Semantic::Depth | Semantic::SampleMask | Semantic::Position
                )
        });
        if !fed {
            causes.push(format!(
                "colour buffer {i} is bound and unmasked but the fragment shader has no output \
                 at location {i}: it stays unchanged"
            ));
        }
    }
}

/// Sampler views, samplers and constant buffers `info` reads but `res`
/// lacks.
fn unbound_stage_resources(
    stage: &str,
    info: &ShaderInfo,
    res: &StageResources,
    causes: &mut Vec<String>,
) {
    for (i, v) in res.sampler_views.iter().enumerate().take(128) {
        if (info.sampler_views_used >> i) & 1 != 0 && v.is_none() {
            causes.push(format!(
                "the {stage} shader reads sampler view {i}, which is unbound (reads zeros)"
            ));
        }
    }
    for (i, s) in res.samplers.iter().enumerate().take(32) {
        if (info.samplers_used >> i) & 1 != 0 && s.is_none() {
            causes.push(format!(
                "the {stage} shader samples with sampler {i}, which is unbound"
            ));
        }
    }
    for (i, cb) in res.constant_buffers.iter().enumerate().take(32) {
        if (info.const_buffers_used >> i) & 1 != 0
            && cb.buffer.is_none()
            && cb.user_buffer.is_none()
        {
            causes.push(format!(
                "the {stage} shader reads constant buffer {i}, which is unbound (reads zeros)"
            ));
        }
    }
}

/// Vertex elements the vertex shader reads from unbound or too-small
/// vertex buffers (non-indexed draws: the vertex range is `start..start +
/// count`).
fn vertex_inputs(info: &DrawInfo, block: &StateBlock, vs: &ShaderInfo, causes: &mut Vec<String>) {
    for input in &vs.inputs {
        let e = input.location as usize;
        let Some(el) = block.velems.get(e) else {
            continue;
        };
        let Some(vb) = block.vertex_buffers.get(el.vertex_buffer_index as usize) else {
            continue;
        };
        let slot = el.vertex_buffer_index;
        let Some(buf) = &vb.buffer else {
            causes.push(format!(
                "vertex element {e} reads vertex buffer {slot}, which is unbound (reads zeros)"
            ));
            continue;
        };
        let last = if el.instance_divisor == 0 {
            if info.indexed {
                continue;
            }
            u64::from(info.start) + u64::from(info.count) - 1
        } else {
            u64::from(info.start_instance)
                + u64::from(info.instance_count - 1) / u64::from(el.instance_divisor)
        };
        let end = u64::from(vb.buffer_offset)
            + u64::from(el.src_offset)
            + last * u64::from(vb.stride)
            + u64::from(el.src_format.desc().block_bytes);
        let size = u64::from(buf.templ.width0);
        if end > size {
            let what = if el.instance_divisor == 0 {
                "vertex"
            } else {
                "instance"
            };
            causes.push(format!(
                "vertex element {e} reads bytes up to {end} of vertex buffer {slot} \
                 ({what} {last}), which holds {size}: the rest reads zeros"
            ));
        }
    }
}
