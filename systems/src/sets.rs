//! The pipeline's system sets, one per stage, and its two schedules.  `configure_pipeline`
//! (lib.rs) chains them in diagram order; this leaf holds only the names,
//! so a stage's system can say which set it times itself under without
//! importing the crate root that imports every stage.

use bevy_ecs::schedule::{ScheduleLabel, SystemSet};

/// The stages of the draw pipeline, in order.
///
/// The front-end sets run once per *wave* of jobs (the [`FrontEnd`](crate::FrontEnd)
/// schedule), the back-end sets once per tile pass (the [`BackEnd`](crate::BackEnd)
/// schedule); see scene.rs for when each runs.
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PipelineSet {
    /// Vertex fetch: plans the wave's jobs, reads indices (with primitive
    /// restart), assembles primitives with Mesa's provoking-vertex orders
    /// and decodes vertex elements into SoA lanes
    /// (draw's `draw_pt_vsplit.c`, `draw_pt_fetch.c`).  Output:
    /// `FrontJob::segments` ([`crate::fetch::Segment`] with inputs filled).
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
    /// depth, and shades and merges batches of up to 2048 pixels
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
    /// Every set, in pipeline order (the order [`configure_pipeline`](crate::configure_pipeline)
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
