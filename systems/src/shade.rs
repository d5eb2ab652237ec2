//! Equivalent of draw's `draw_vs.c` / `draw_vs_llvm.c`: runs the vertex
//! shader over a segment's SoA lanes, then applies `clamp_vertex_color`.
//!
//! One `VertexShader::run` call covers a whole segment (up to
//! `fetch::SEGMENT_MAX_VERTS` = 256 vertices = 32 lane groups), so an
//! interpreter pays its dispatch once per 256 vertices.

use ferropipe_components::batch::VertexBatch;
use ferropipe_components::shader::{Lanes, ShaderResources, VertexIo, VertexShaderRef};
use multiversion::multiversion;

use crate::lanes::resize_lanes;
pub use crate::shade_plan::ShadePlan;
use bevy_ecs::prelude::*;

use crate::job::{FrontJob, PipelineCounters, PipelineExecutor, SceneExecution, for_each_job};
use crate::locks::{LockSet, PreparedStage};
use crate::sets::PipelineSet;

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

// ---------------------------------------------------------------------------
// The system
// ---------------------------------------------------------------------------

/// The `Shade` system: runs the vertex shader over every segment of the wave.
pub(crate) fn shade_vertices(
    pool: Res<PipelineExecutor>,
    mut exec: ResMut<SceneExecution>,
    counters: Res<PipelineCounters>,
) {
    ferropipe_profiling::scope!("shade_vertices");
    let _time = counters.0.time_stage(PipelineSet::Shade.stage());
    let exec = &mut *exec;
    let resources = std::mem::take(&mut exec.vs_resources);
    let storage = std::mem::take(&mut exec.vs_storage);
    {
        let locks = LockSet::acquire(
            resources
                .iter()
                .map(|r| (r, false))
                .chain(storage.iter().map(|r| (r, true))),
        );
        let states = &exec.states;
        let locks = &locks;
        for_each_job(&pool.0, &mut exec.wave, &|job: &mut FrontJob| {
            ferropipe_profiling::scope!("shade_job");
            let mut prepared: Option<(u32, PreparedStage<'_>)> = None;
            let n = job.used;
            for si in 0..n {
                let state = job.segments[si].part.state;
                let ds = &states[state as usize];
                let now = &ds.block.vs_resources;
                // Blocks with the very same VS bindings share one
                // preparation; blocks that differ in constant buffers only
                // re-resolve those.
                let fresh = match &mut prepared {
                    Some((s, _)) if *s == state => false,
                    Some((s, p)) => {
                        let was = &states[*s as usize].block.vs_resources;
                        if was.same_as(now) {
                            false
                        } else if was.same_bindings(now) {
                            p.rebind_constants(now, locks);
                            *s = state;
                            false
                        } else {
                            true
                        }
                    }
                    None => true,
                };
                if fresh {
                    prepared = Some((state, PreparedStage::new(now, locks)));
                }
                let res = prepared
                    .as_ref()
                    .map(|(_, p)| p.resources())
                    .unwrap_or_default();
                let seg = &mut job.segments[si];
                shade_batch(&mut seg.batch, &ds.shade, &ds.block.vs, &res);
                let cmd = seg.part.command;
                let count = seg.batch.count as u64;
                job.count(cmd, |c| c.vs_invocations += count);
            }
        });
    }
    exec.vs_resources = resources;
    exec.vs_storage = storage;
}
