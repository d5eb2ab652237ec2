//! Equivalent of llvmpipe's `lp_state_derived.c`: a state block's derived
//! state, as one plan per stage.  Each stage module owns its plan type and
//! derives it from the state objects it reads and from nothing else
//! (`fetch::FetchPlan`, `shade::ShadePlan`, `clip_plan::ClipPlan`,
//! `link::LinkPlan` (the VS→FS linkage clip, setup and fragment
//! share), `setup_plan::SetupPlan`, `tiles_plan::TilesPlan`,
//! `merge::MergePlan`); this file holds what a stage sees of them
//! ([`DerivedShape`], [`DerivedState`]).  plans.rs composes a shape from
//! the plans, deriving each once per distinct input and sharing it across
//! draws and flushes (`DerivedShape::new` is the same composition with
//! nothing cached).

use std::sync::Arc;

use ferropipe_components::batch::{PipelineState, StateBlock};

use crate::clip_plan::ClipPlan;
use crate::fetch_plan::FetchPlan;
use crate::link::LinkPlan;
use crate::merge::MergePlan;
use crate::setup_plan::SetupPlan;
use crate::shade_plan::ShadePlan;
use crate::tiles_plan::{FragmentVariant, TilesPlan};

/// Everything derived from one state block: the block, and the derived
/// part shared (one `Arc`, from plans.rs' `PlanCache`) by every
/// block with the same state objects and value states, in this flush or
/// an earlier one; blocks differing only in bindings the derivation does
/// not read (`same_shape_inputs`: vertex and index buffers, stage
/// resources, stream-output targets) share it.  The per-stage plans of
/// [`DerivedShape`] read through `Deref` (`ds.setup.cull_face`).
pub struct DerivedState {
    /// The state block the derivation is for.
    pub block: Arc<StateBlock>,
    /// Floats per clipped vertex: `[x, y, z, 1/w]` + 4 per attribute (+ 4
    /// for the smooth-primitive varying), padded to the scene's largest
    /// (`scene::begin_scene`), so the draws sharing a job share a layout.
    pub stride: usize,
    shape: Arc<DerivedShape>,
}

impl std::ops::Deref for DerivedState {
    type Target = DerivedShape;

    fn deref(&self) -> &DerivedShape {
        &self.shape
    }
}

/// Whether deriving `a` and `b` gives the same [`DerivedShape`]: every
/// field of the blocks' pipeline states but the bindings the derivation
/// never reads (the stage resources are not read at all).  Blocks that
/// share one pipeline state (many_draws: every draw's block after the
/// first) answer with one pointer compare.  The destructuring is
/// exhaustive, so a new `PipelineState` field does not compile until it
/// is placed on one side or the other.
pub(crate) fn same_shape_inputs(a: &StateBlock, b: &StateBlock) -> bool {
    if Arc::ptr_eq(&a.pipeline, &b.pipeline) {
        return true;
    }
    let PipelineState {
        rasterizer,
        dsa,
        blend,
        velems,
        vs,
        fs,
        framebuffer,
        vertex_buffers: _,
        index_buffer: _,
        blend_color,
        stencil_ref,
        sample_mask,
        min_samples,
        clip,
        poly_stipple,
        viewports,
        scissors,
    } = &*a.pipeline;
    Arc::ptr_eq(rasterizer, &b.rasterizer)
        && Arc::ptr_eq(dsa, &b.dsa)
        && Arc::ptr_eq(blend, &b.blend)
        && Arc::ptr_eq(velems, &b.velems)
        && Arc::ptr_eq(vs, &b.vs)
        && Arc::ptr_eq(fs, &b.fs)
        && Arc::ptr_eq(framebuffer, &b.framebuffer)
        && *blend_color == b.blend_color
        && *stencil_ref == b.stencil_ref
        && *sample_mask == b.sample_mask
        && *min_samples == b.min_samples
        && *clip == b.clip
        && *poly_stipple == b.poly_stipple
        && (Arc::ptr_eq(viewports, &b.viewports) || **viewports == *b.viewports)
        && (Arc::ptr_eq(scissors, &b.scissors) || **scissors == *b.scissors)
}

/// The derived part of a block: one plan per stage, each behind an `Arc`
/// so that blocks (and shapes) whose inputs to that stage agree share it.
#[derive(Clone)]
pub struct DerivedShape {
    /// Vertex fetch: per VS input, its element and decoder.
    pub fetch: Arc<FetchPlan>,
    /// Vertex shading: output slots the later stages look for, clamping.
    pub shade: Arc<ShadePlan>,
    /// Clipping: the user planes / clip distances, near and far.
    pub clip: Arc<ClipPlan>,
    /// The VS→FS linkage: clipped-vertex layout, FS inputs and planes,
    /// and the fragment shader the pipeline runs.
    pub link: Arc<LinkPlan>,
    /// Triangle, line and point setup.
    pub setup: Arc<SetupPlan>,
    /// The tile walk's per-state part (samples, stipple, early depth).
    pub tiles: Arc<TilesPlan>,
    /// Depth, stencil, alpha, blend and store per colour buffer.
    pub merge: Arc<MergePlan>,
    /// How the tile stage shades and merges a batch (from `link`, `tiles`
    /// and `merge`).
    pub fragment: FragmentVariant,
}

impl DerivedState {
    /// Derives the per-block state from scratch (tests and benches; the
    /// pipeline takes the derived part from plans.rs' `PlanCache`).
    /// `block` must have passed the façade's draw validation.
    pub fn new(block: Arc<StateBlock>) -> Self {
        let shape = Arc::new(DerivedShape::new(&block));
        DerivedState::with_shape(block, shape)
    }

    /// The state of `block` with its derived part `shape` (derived from
    /// `block`'s state objects, or from a block with the same ones).
    pub(crate) fn with_shape(block: Arc<StateBlock>, shape: Arc<DerivedShape>) -> Self {
        DerivedState {
            block,
            stride: shape.link.vertex_stride,
            shape,
        }
    }

    /// The derived part, shared by blocks with the same state objects.
    pub fn shape(&self) -> &Arc<DerivedShape> {
        &self.shape
    }
}

impl DerivedState {
    /// Whether the depth or stencil buffer is tested or written at all.
    /// The depth bounds test reads the stored depth whether or not the
    /// depth test is on (EXT_depth_bounds_test, Vulkan's
    /// `depthBoundsTestEnable`), so it counts too.
    pub(crate) fn uses_depth_stencil(&self) -> bool {
        self.merge.depth.is_some()
            || self.merge.stencil_enabled
            || self.merge.depth_bounds.is_some()
    }
}
