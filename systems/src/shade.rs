//! Equivalent of draw's `draw_vs.c` / `draw_vs_llvm.c`: runs the vertex
//! shader over a segment's SoA lanes, then applies `clamp_vertex_color`.
//!
//! One `VertexShader::run` call covers a whole segment (up to
//! `fetch::SEGMENT_MAX_VERTS` = 256 vertices = 32 lane groups), so an
//! interpreter pays its dispatch once per 256 vertices.

use ferropipe_components::batch::VertexBatch;
use ferropipe_components::shader::{Lanes, ShaderResources, VertexIo};
use multiversion::multiversion;

use crate::derived::DerivedState;
use crate::lanes::resize_lanes;

/// Runs the VS of `ds` over `batch` (inputs already fetched).
#[multiversion(
    targets("x86_64+avx2+fma+bmi1+bmi2+lzcnt+popcnt+f16c+movbe"),
    attrs(allow(dead_code))
)]
pub fn shade_batch(batch: &mut VertexBatch, ds: &DerivedState, resources: &ShaderResources<'_>) {
    let groups = batch.groups;
    let n_out = ds.vs_info.outputs.len();
    resize_lanes(&mut batch.outputs, n_out * 4 * groups);
    if !ds.vs_writes_all_outputs {
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
        ds.block.vs.run(resources, &mut io);
    }
    // clamp_vertex_color: COLOR/BCOLOR outputs to [0, 1] before clipping and
    // interpolation (rasterizer.rst "Linkage").
    for &slot in &ds.clamp_slots {
        for l in &mut batch.outputs[slot * 4 * groups..(slot + 1) * 4 * groups] {
            *l = l.fast_max(Lanes::ZERO).fast_min(Lanes::ONE);
        }
    }
}
