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
//! Each stage module owns its plan (`fetch::FetchPlan`, `shade::ShadePlan`,
//! `clip_plan`, `link`, `setup_plan`, `tiles_plan`,
//! `merge::MergePlan`); `derived.rs` composes a state block's plans,
//! `plans.rs` caches them across draws and flushes (one derivation per
//! distinct input to each stage),
//! `lanes.rs` holds the lane and tile helpers every stage may use (a leaf:
//! it imports no stage), `scene.rs` holds the systems and the scene loop,
//! `locks.rs` resource locking, `pool.rs` the worker pool.
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

use bevy_ecs::schedule::{IntoScheduleConfigs, Schedule, ScheduleLabel, SystemSet};
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
pub mod fragment;
pub mod lanes;
pub mod link;
pub mod locks;
pub mod merge;
mod plans;
pub mod pool;
pub mod raster;
pub mod scene;
pub mod setup;
pub mod setup_plan;
pub mod shade;
pub mod stream_out;
#[cfg(test)]
mod tests;
pub mod tiles_plan;

pub use budget::{BudgetExceeded, WorkBudget};
pub use scene::{PipelineCounters, PipelineExecutor, SceneExecution, execute_scene};

/// The stages of the draw pipeline, in order.
///
/// The front-end sets run once per *wave* of jobs (the [`FrontEnd`]
/// schedule), the back-end sets once per tile pass (the [`BackEnd`]
/// schedule); see scene.rs for when each runs.
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PipelineSet {
    /// Vertex fetch: plans the wave's jobs, reads indices (with primitive
    /// restart), assembles primitives with Mesa's provoking-vertex orders
    /// and decodes vertex elements into SoA lanes
    /// (draw's `draw_pt_vsplit.c`, `draw_pt_fetch.c`).  Output:
    /// `FrontJob::segments` ([`fetch::Segment`] with inputs filled).
    Fetch,
    /// Vertex shading over lanes, then `clamp_vertex_color`
    /// (draw's `draw_vs.c`).  Output: segment VS outputs.
    Shade,
    /// Stream output (transform feedback): the assembled primitives of
    /// capturing draws, VS outputs before clipping, written to the bound
    /// targets' buffers in submission order on one thread, with the
    /// per-command written/needed counts (draw's `draw_pt_so_emit.c`).
    /// Does nothing when no draw of the scene captures.  Output: the
    /// targets' buffers and filled sizes.
    StreamOut,
    /// Primitive clipping against guard band, near/far, user planes;
    /// viewport transform; linkage of VS outputs to FS inputs
    /// (draw's `draw_pipe_clip.c`).  Output: `FrontJob::clipped`
    /// ([`ferropipe_components::batch::ClippedPrims`]).
    Clip,
    /// Triangle/line/point setup: fixed-point snapping, culling, edge
    /// functions with the fill rule, attribute planes
    /// (llvmpipe's `lp_setup_tri.c`, `lp_setup_line.c`, `lp_setup_point.c`).
    /// Output: `FrontJob::out.prims` ([`ferropipe_components::batch::SetupPrims`]).
    Setup,
    /// Binning of set-up primitives into 64x64 tiles with per-tile trivial
    /// accept (llvmpipe's `lp_setup_bin_triangle`, `lp_scene.c`).  Output:
    /// `SceneExecution::binned`, in submission order.
    Bin,
    /// The back end, one stage: every tile in parallel walks its bin,
    /// computes coverage (16x16 then 4x2 groups in SIMD), runs early
    /// depth, and shades and merges batches of up to 512 pixels
    /// (llvmpipe's `lp_rast.c`, `lp_rast_tri.c`; fragment.rs is
    /// `lp_state_fs.c`'s shading loop, merge.rs `lp_bld_depth.c` and
    /// `lp_bld_blend.c`).  Raster, fragment and merge are fused per batch
    /// so fragments never leave the cache (ARCHITECTURE.md, "Why the back
    /// end is fused"); then the pass's counts go to their commands (FS
    /// invocations, occlusion samples) and the bins are recycled.  After
    /// this set every render target holds the scene's (or this pass's)
    /// result.
    Tiles,
}

impl PipelineSet {
    /// Every set, in pipeline order (the order [`configure_pipeline`]
    /// chains them).
    pub const ALL: [PipelineSet; 7] = [
        PipelineSet::Fetch,
        PipelineSet::Shade,
        PipelineSet::StreamOut,
        PipelineSet::Clip,
        PipelineSet::Setup,
        PipelineSet::Bin,
        PipelineSet::Tiles,
    ];

    /// The profiling stage whose time counter this set's system adds to
    /// (`ferropipe-profiling` sits below this crate and cannot name the
    /// sets; the match is exhaustive, so a new set does not compile
    /// without its stage, and a test checks the lists agree in order).
    pub const fn stage(self) -> ferropipe_profiling::Stage {
        use ferropipe_profiling::Stage;
        match self {
            PipelineSet::Fetch => Stage::Fetch,
            PipelineSet::Shade => Stage::Shade,
            PipelineSet::StreamOut => Stage::StreamOut,
            PipelineSet::Clip => Stage::Clip,
            PipelineSet::Setup => Stage::Setup,
            PipelineSet::Bin => Stage::Bin,
            PipelineSet::Tiles => Stage::Tiles,
        }
    }
}

/// The schedule of the front-end sets (`Fetch` … `Bin`), run per wave.
#[derive(ScheduleLabel, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FrontEnd;

/// The schedule of the back-end set (`Tiles`), run per tile pass.
#[derive(ScheduleLabel, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BackEnd;

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
        scene::fetch_vertices.in_set(PipelineSet::Fetch),
        scene::shade_vertices.in_set(PipelineSet::Shade),
        stream_out::emit_stream_output.in_set(PipelineSet::StreamOut),
        scene::clip_primitives.in_set(PipelineSet::Clip),
        scene::setup_primitives.in_set(PipelineSet::Setup),
        scene::bin_primitives.in_set(PipelineSet::Bin),
    ));
    let mut back = Schedule::new(BackEnd);
    back.add_systems(
        (scene::rasterize_tiles, scene::reduce_tile_counts)
            .chain()
            .in_set(PipelineSet::Tiles),
    );
    world.add_schedule(front);
    world.add_schedule(back);
    compute::configure_compute(world);
    world.insert_resource(scene::PipelineExecutor(executor));
    world.init_resource::<SceneExecution>();
    world.init_resource::<PipelineCounters>();
    world.init_resource::<plans::PlanCache>();
    world.init_resource::<stream_out::StreamOutCarry>();
    world.init_resource::<ferropipe_components::batch::RecordedScene>();
}
