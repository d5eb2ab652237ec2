//! Equivalent of draw's `draw_vs.c` / `draw_vs_llvm.c`: runs the vertex
//! shader over a segment's SoA lanes, then applies `clamp_vertex_color`.
//!
//! One `VertexShader::run` call covers a whole segment (up to
//! `fetch::SEGMENT_MAX_VERTS` = 256 vertices = 32 lane groups), so an
//! interpreter pays its dispatch once per 256 vertices.

use ferropipe_components::batch::VertexBatch;
use ferropipe_components::shader::{
    Lanes, Semantic, ShaderInfo, ShaderResources, VertexIo, VertexShaderRef,
};
use ferropipe_components::state::RasterizerState;
use multiversion::multiversion;

use crate::lanes::resize_lanes;

/// What the shade stage derives from the vertex shader and the rasterizer
/// state (draw's `draw_vs` output mapping): where the outputs the later
/// stages look for are, and which outputs to clamp.  Cached with the rest
/// of a block's plans (plans.rs).
#[derive(Clone, Debug)]
pub struct ShadePlan {
    /// The vertex shader's interface.
    pub vs_info: ShaderInfo,
    /// VS output slot of the position (`None`: the shader writes none and
    /// nothing is drawn).
    pub pos_slot: Option<usize>,
    /// VS output slot of the point size, when the shader writes one (points
    /// read it with `point_size_per_vertex`).
    pub psize_slot: Option<usize>,
    /// VS output slots that `clamp_vertex_color` clamps (COLOR/BCOLOR).
    pub clamp_slots: Vec<usize>,
    /// `VertexShader::writes_all_outputs`: the output lanes need no
    /// clearing before a call.
    pub writes_all_outputs: bool,
}

impl ShadePlan {
    /// The plan of `vs` under `rast` (only `clamp_vertex_color` is read).
    pub fn derive(vs: &VertexShaderRef, rast: &RasterizerState) -> Self {
        let vs_info = vs.info().clone();
        let clamp_slots = if rast.clamp_vertex_color {
            vs_info
                .outputs
                .iter()
                .enumerate()
                .filter(|(_, o)| matches!(o.semantic, Semantic::Color(_) | Semantic::BColor(_)))
                .map(|(i, _)| i)
                .collect()
        } else {
            Vec::new()
        };
        ShadePlan {
            pos_slot: vs_info.output_slot(Semantic::Position),
            psize_slot: vs_info.output_slot(Semantic::PointSize),
            clamp_slots,
            writes_all_outputs: vs.writes_all_outputs(),
            vs_info,
        }
    }
}

/// Runs `vs` over `batch` (inputs already fetched) as `plan` says.
#[multiversion(
    targets("x86_64+avx2+fma+bmi1+bmi2+lzcnt+popcnt+f16c+movbe"),
    attrs(allow(dead_code))
)]
pub fn shade_batch(
    batch: &mut VertexBatch,
    plan: &ShadePlan,
    vs: &VertexShaderRef,
    resources: &ShaderResources<'_>,
) {
    let groups = batch.groups;
    let n_out = plan.vs_info.outputs.len();
    resize_lanes(&mut batch.outputs, n_out * 4 * groups);
    if !plan.writes_all_outputs {
        batch.outputs.iter_mut().for_each(|l| *l = Lanes::ZERO);
    }
    {
        let VertexBatch {
            groups,
            count,
            inputs,
            vertex_id,
            instance_id,
            outputs,
        } = batch;
        let mut io = VertexIo {
            groups: *groups,
            count: *count,
            inputs,
            vertex_id,
            instance_id,
            outputs,
        };
        vs.run(resources, &mut io);
    }
    // clamp_vertex_color: COLOR/BCOLOR outputs to [0, 1] before clipping and
    // interpolation (rasterizer.rst "Linkage").
    for &slot in &plan.clamp_slots {
        for l in &mut batch.outputs[slot * 4 * groups..(slot + 1) * 4 * groups] {
            *l = l.fast_max(Lanes::ZERO).fast_min(Lanes::ONE);
        }
    }
}
