//! ferropipe-systems: the draw pipeline as scheduled ECS systems.
//!
//! A draw flows through the stages of [`PipelineSet`], in the order
//! [`configure_pipeline`] chains them; that chain *is* the pipeline diagram.
//! Each stage lives in its own file, opening with a line that names its
//! llvmpipe / draw-module counterpart:
//!
//! | set | file | does |
//! | --- | --- | --- |
//! | `Fetch` | fetch.rs | index lookup, restart, assembly, vertex decode to SoA |
//! | `Shade` | shade.rs | vertex shader over lanes, `clamp_vertex_color` |
//! | `StreamOut` | stream_out.rs | stream output: primitives' VS outputs to buffers, in submission order |
//! | `Clip` | clip.rs | clip codes, guard band, homogeneous clipping, viewport, linkage |
//! | `Setup` | setup.rs | fixed point, culling, edge functions, plane equations |
//! | (in `Setup`) | aa_stage.rs | smooth lines / points as quads, smooth polygons' analytic coverage; coverage-scaled alpha |
//! | `Bin` | bin.rs | 64x64 tile bins with trivial accept/reject |
//! | `Tiles` | raster.rs | the tile pass: per-tile coverage, early depth; drives fragment.rs and merge.rs per batch |
//! | (in `Tiles`) | fragment.rs | interpolation, fragment shader (called per batch by raster) |
//! | (in `Tiles`) | merge.rs | depth/stencil/alpha, blend, logic op, stores (called per batch) |
//!
//! Compute (`launch_grid`) is a schedule of its own, [`compute::ComputeGrid`]
//! (compute.rs: workgroups on the worker pool).
//!
//! Each stage module owns its system, its kernels and its plan.  The plans
//! sit in sibling files (`fetch_plan`, `shade_plan`, `clip_plan`, `link`,
//! `setup_plan`, `tiles_plan`; merge's `MergePlan` is in merge.rs, which has
//! no system of its own), so that `derived.rs`, which composes a state
//! block's plans, is imported by the stage systems and imports no file
//! that holds one.
//! `plans.rs` caches the plans across draws and flushes (one derivation per
//! distinct input to each stage).  `job.rs` holds what the stage systems
//! share (the scene being executed, the wave's jobs, the pool), `sets.rs`
//! the set and schedule names, `scene.rs` the planner and the loop,
//! `lanes.rs` the lane and tile helpers every stage may use, `locks.rs`
//! resource locking, `pool.rs` the worker pool.  Every import between these
//! files runs one way: no file imports, directly or through others, a file
//! that imports it.
//!
//! **Architecture invariants**
//! 1. Systems never see the Gallium `Context`: they read the recorded scene
//!    and write batches and counters back.
//! 2. Only the merge stage writes render targets.
//! 3. Output is identical for any thread count (see [`pool::Executor`]).
//! 4. Inputs were validated at the façade; stages assume valid input but
//!    clamp every memory access (robust buffer access), so bad data cannot
//!    crash them.
#![warn(missing_docs)]
// SoA code indexes several parallel arrays with one counter; iterator
// chains would obscure that, so index loops are the house style here.
#![allow(clippy::needless_range_loop)]

use bevy_ecs::schedule::{IntoScheduleConfigs, Schedule};
use bevy_ecs::world::World;

mod aa_stage;
mod aa_state;
pub mod bin;
pub mod blit;
pub mod budget;
pub mod clip;
pub mod clip_plan;
pub mod compute;
pub mod derived;
pub mod fetch;
pub mod fetch_plan;
pub mod fragment;
pub mod job;
pub mod lanes;
pub mod link;
pub mod locks;
pub mod merge;
mod plans;
pub mod pool;
pub mod raster;
pub mod scene;
mod sets;
pub mod setup;
pub mod setup_plan;
pub mod shade;
pub mod shade_plan;
pub mod stream_out;
#[cfg(test)]
mod tests;
pub mod tiles_plan;

pub use budget::{BudgetExceeded, WorkBudget};
pub use job::{PipelineCounters, PipelineExecutor, SceneExecution};
pub use raster::TilePass;
pub use scene::execute_scene;
pub use sets::{BackEnd, FrontEnd, PipelineSet};

/// Chains the pipeline stages in diagram order, adds the default systems,
/// and installs both schedules and the pipeline's resources in `world`.
pub fn configure_pipeline(world: &mut World, executor: pool::ExecutorRef) {
    let mut front = Schedule::new(FrontEnd);
    front.configure_sets(
        (
            PipelineSet::Fetch,
            PipelineSet::Shade,
            PipelineSet::StreamOut,
            PipelineSet::Clip,
            PipelineSet::Setup,
            PipelineSet::Bin,
        )
            .chain(),
    );
    front.add_systems((
        (scene::plan_wave, fetch::fetch_vertices)
            .chain()
            .in_set(PipelineSet::Fetch),
        shade::shade_vertices.in_set(PipelineSet::Shade),
        stream_out::emit_stream_output.in_set(PipelineSet::StreamOut),
        clip::clip_primitives.in_set(PipelineSet::Clip),
        setup::setup_primitives.in_set(PipelineSet::Setup),
        bin::bin_primitives.in_set(PipelineSet::Bin),
    ));
    let mut back = Schedule::new(BackEnd);
    back.add_systems(
        (raster::rasterize_tiles, raster::reduce_tile_counts)
            .chain()
            .in_set(PipelineSet::Tiles),
    );
    world.add_schedule(front);
    world.add_schedule(back);
    compute::configure_compute(world);
    world.insert_resource(PipelineExecutor(executor));
    world.init_resource::<SceneExecution>();
    world.init_resource::<scene::Planner>();
    world.init_resource::<TilePass>();
    world.init_resource::<PipelineCounters>();
    world.init_resource::<plans::PlanCache>();
    world.init_resource::<stream_out::StreamOutCarry>();
    world.init_resource::<ferropipe_components::batch::RecordedScene>();
}
