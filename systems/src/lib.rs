//! ferropipe-systems: the draw pipeline as scheduled ECS systems.
//!
//! A draw flows through the stages of [`PipelineSet`], in the order
//! [`configure_pipeline`] chains them; that chain *is* the pipeline diagram.
//! Each stage lives in its own file, opening with a line that names its
//! llvmpipe / draw-module counterpart.
//!
//! **Architecture invariants**
//! 1. Systems never see the Gallium `Context`: they read recorded draws and
//!    batches from the world and write batches back.
//! 2. Only the merge stage writes render targets.
//! 3. Output is identical for any thread count (see [`pool::Executor`]).
//! 4. Inputs were validated at the façade; stages assume valid input but
//!    clamp every memory access (robust buffer access), so bad data cannot
//!    crash them.

use bevy_ecs::schedule::{IntoScheduleConfigs, Schedule, SystemSet};

pub mod pool;

/// The stages of the draw pipeline, in order.
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PipelineSet {
    /// Vertex fetch: vertex/index buffers to SoA attribute lanes
    /// (draw's `draw_pt_fetch.c`, `draw_pt_vsplit.c`).
    Fetch,
    /// Vertex shading over lanes (draw's `draw_vs.c`).
    Shade,
    /// Primitive assembly, clipping, culling, viewport transform
    /// (draw's `draw_pipe_clip.c`, `draw_pipe_cull.c`).
    Clip,
    /// Triangle/line/point setup: fixed-point edges, attribute planes
    /// (llvmpipe's `lp_setup_tri.c`, `lp_setup_line.c`, `lp_setup_point.c`).
    Setup,
    /// Binning of set-up primitives into 64x64 tiles (llvmpipe's `lp_scene.c`).
    Bin,
    /// Per-tile hierarchical coverage, 16x16 -> 4x4 blocks (llvmpipe's `lp_rast_tri.c`).
    Raster,
    /// Attribute interpolation and fragment shading (llvmpipe's `lp_state_fs.c`).
    Fragment,
    /// Depth/stencil/alpha tests, blending, render-target writes
    /// (llvmpipe's `lp_bld_depth.c`, `lp_bld_blend.c`).
    Merge,
}

/// Chains the pipeline stages in `schedule`, in diagram order.
pub fn configure_pipeline(schedule: &mut Schedule) {
    schedule.configure_sets(
        (
            PipelineSet::Fetch,
            PipelineSet::Shade,
            PipelineSet::Clip,
            PipelineSet::Setup,
            PipelineSet::Bin,
            PipelineSet::Raster,
            PipelineSet::Fragment,
            PipelineSet::Merge,
        )
            .chain(),
    );
}
