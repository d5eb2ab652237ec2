//! Drawing and flushing (context.rst "Drawing", "Flushing").
//!
//! `draw_vbo` validates the draw against the bound state and *records* it:
//! the draw's parameters plus a state block, a snapshot of the bound state
//! as `Arc`s (a new block only when the state changed since the previous
//! draw, detected with the `BoundState` resource's change tick).  `flush`,
//! and every operation that must observe finished rendering, runs the
//! pipeline schedules once over everything recorded (see
//! `ferropipe_systems::execute_scene`).
//!
//! Recording is bounded: after [`MAX_RECORDED_COMMANDS`] commands the scene
//! is executed and recording carries on, so a host that never flushes
//! still runs in bounded memory (the binned data of a scene is bounded
//! separately, inside the pipeline).

use std::sync::Arc;

use bevy_ecs::change_detection::Tick;
use ferropipe_components::batch::{
    ClearValue, Command, MS_SAMPLES, PipelineState, RecordedScene, StageBindings, StageResources,
    StateBlock,
};
use ferropipe_components::draw::{DrawInfo, StreamOutputBinding};
use ferropipe_components::enums::{ClearFlags, ConservativeRasterMode, PrimType};
use ferropipe_components::format::FormatKind;
use ferropipe_components::resource::ResourceRef;
use ferropipe_components::state::{ColorUnion, RasterizerState};
use ferropipe_systems::merge::{depth_target_supported, render_target_supported};

use super::{BoundState, Context, StreamOutputTargetHandle};
use crate::error::{DrawError, Error, Result, StorageError, StorageKind};
use crate::screen::PolySmooth;

/// Commands recorded before the scene is executed without a flush.
pub const MAX_RECORDED_COMMANDS: usize = 1 << 16;

/// `struct pipe_fence_handle`: signalled once the flushed work is done.
///
/// ferropipe executes a flush before returning, so fences are signalled on
/// creation; the type exists so hosts are written against Gallium's model.
#[derive(Clone, Debug)]
pub struct Fence {
    _private: (),
}

impl Fence {
    /// Whether the work before the fence has finished.
    pub fn is_signalled(&self) -> bool {
        true
    }

    /// Blocks until the work before the fence has finished.
    pub fn wait(&self) {}
}

/// Recording state: the last state block and when it was taken.
#[derive(Default)]
pub(crate) struct DrawRecorder {
    /// Index of the last state block in the recorded scene.
    last_block: Option<u32>,
    /// The world change tick the last block was taken at.
    taken_at: Option<Tick>,
    /// [`PolySmooth::Off`]: rasterizer states with `poly_smooth` set and
    /// their copies with it cleared, which the state blocks take instead.
    /// One copy per state object keeps the plan cache (keyed by the
    /// objects' addresses) hitting; entries whose state object is gone
    /// (only this list holds it) are dropped as new ones come.
    poly_smooth_off: Vec<(Arc<RasterizerState>, Arc<RasterizerState>)>,
    /// Buffers that recorded draws capture into (stream output): a draw
    /// reading one of them, a new offset for a target, or a vertex count
    /// taken from a target executes the recorded work first.
    so_buffers: Vec<ResourceRef>,
    /// The last block of the recorded scene that passed [`check_state`]:
    /// a new block with the very same checked objects skips the check.
    /// Holding it keeps those objects' addresses from being reused; it is
    /// one of the scene's blocks, so it lives no longer than they do.
    checked: Option<Arc<StateBlock>>,
}

impl DrawRecorder {
    /// `r` with `poly_smooth` cleared ([`PolySmooth::Off`]: rendered as
    /// llvmpipe renders it), the same object each time for the same `r`.
    fn without_poly_smooth(&mut self, r: &Arc<RasterizerState>) -> Arc<RasterizerState> {
        if let Some((_, off)) = self.poly_smooth_off.iter().find(|(o, _)| Arc::ptr_eq(o, r)) {
            return off.clone();
        }
        self.poly_smooth_off
            .retain(|(o, _)| Arc::strong_count(o) > 1);
        let off = Arc::new(RasterizerState {
            poly_smooth: false,
            ..**r
        });
        self.poly_smooth_off.push((r.clone(), off.clone()));
        off
    }
}

/// `struct pipe_draw_indirect_info`, the part ferropipe implements:
/// `count_from_stream_output` (indirect argument buffers are not
/// implemented, `PIPE_CAP_DRAW_INDIRECT` = 0).
#[derive(Clone, Copy, Debug, Default)]
pub struct DrawIndirectInfo {
    /// Draw as many vertices as this target holds: its filled size divided
    /// by the stride of vertex buffer 0 (llvmpipe's rule), from
    /// `DrawInfo::start`, non-indexed (`glDrawTransformFeedback`).
    pub count_from_stream_output: Option<StreamOutputTargetHandle>,
}

const CALL: &str = "draw_vbo";

fn missing(what: &'static str) -> Error {
    DrawError::NotBound { what }.into()
}

/// Snapshots the bound state (validated by the setters) into a block,
/// with `rasterizer` (the bound one, or its copy without `poly_smooth`).
/// `prev` is the previous block, whose pipeline state and stage bindings
/// the new block shares where nothing in them changed.
///
/// The block is built straight into its `Arc` once every bound object is
/// known to be there: a `Result<StateBlock>` moved out and into `Arc::new`
/// copied it three more times per draw (many_draws: ~380 instructions of
/// memcpy per draw).
fn snapshot(
    b: &BoundState,
    rasterizer: Arc<RasterizerState>,
    prev: Option<&StateBlock>,
) -> Result<Arc<StateBlock>> {
    let stage = |i: usize, prev: Option<&StageResources>| StageResources {
        constant_buffers: b.constant_buffers[i].clone(),
        bindings: match prev {
            Some(p) if same_bindings(b, i, &p.bindings) => p.bindings.clone(),
            _ => Arc::new(StageBindings {
                sampler_views: b.sampler_views[i].clone(),
                samplers: b.samplers[i].clone(),
                shader_buffers: b.shader_buffers[i].clone(),
                shader_images: b.shader_images[i].clone(),
            }),
        },
    };
    let pipeline = match prev {
        Some(p) if same_pipeline(b, &rasterizer, &p.pipeline) => p.pipeline.clone(),
        _ => Arc::new(pipeline_state(b, rasterizer)?),
    };
    Ok(Arc::new(StateBlock {
        pipeline,
        vs_resources: stage(0, prev.map(|p| &p.vs_resources)),
        fs_resources: stage(1, prev.map(|p| &p.fs_resources)),
        stream_output: stream_output_binding(b),
    }))
}

/// The pipeline part of a new block: the bound objects, each required.
fn pipeline_state(b: &BoundState, rasterizer: Arc<RasterizerState>) -> Result<PipelineState> {
    let dsa = b.depth_stencil_alpha.as_ref();
    let dsa = dsa.ok_or_else(|| missing("depth_stencil_alpha"))?;
    let blend = b.blend.as_ref().ok_or_else(|| missing("blend"))?;
    let velems = b.vertex_elements.as_ref();
    let velems = velems.ok_or_else(|| missing("vertex_elements"))?;
    let vs = b.vs.as_ref().ok_or_else(|| missing("vs"))?;
    let fs = b.fs.as_ref().ok_or_else(|| missing("fs"))?;
    Ok(PipelineState {
        rasterizer,
        dsa: dsa.clone(),
        blend: blend.clone(),
        velems: velems.clone(),
        vs: vs.clone(),
        fs: fs.clone(),
        framebuffer: b.framebuffer.clone(),
        vertex_buffers: b.vertex_buffers.clone(),
        index_buffer: b.index_buffer.clone(),
        blend_color: b.blend_color,
        stencil_ref: b.stencil_ref,
        sample_mask: b.sample_mask,
        min_samples: b.min_samples,
        clip: b.clip,
        poly_stipple: b.poly_stipple,
        viewports: b.viewports.clone(),
        scissors: b.scissors.clone(),
    })
}

/// Whether stage `i`'s bound arrays are the very ones `p` holds.
fn same_bindings(b: &BoundState, i: usize, p: &StageBindings) -> bool {
    let StageBindings {
        sampler_views,
        samplers,
        shader_buffers,
        shader_images,
    } = p;
    Arc::ptr_eq(&b.sampler_views[i], sampler_views)
        && Arc::ptr_eq(&b.samplers[i], samplers)
        && Arc::ptr_eq(&b.shader_buffers[i], shader_buffers)
        && Arc::ptr_eq(&b.shader_images[i], shader_images)
}

/// Whether [`pipeline_state`] would build a state equal to `p`: the very
/// same objects and equal values.  The destructuring is exhaustive, so a
/// new `PipelineState` field does not compile until it is compared here.
fn same_pipeline(b: &BoundState, rast: &Arc<RasterizerState>, p: &PipelineState) -> bool {
    let PipelineState {
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
    } = p;
    let same = |a: &Option<ResourceRef>, b: &Option<ResourceRef>| match (a, b) {
        (Some(a), Some(b)) => Arc::ptr_eq(a, b),
        (None, None) => true,
        _ => false,
    };
    Arc::ptr_eq(rasterizer, rast)
        && b.depth_stencil_alpha
            .as_ref()
            .is_some_and(|o| Arc::ptr_eq(o, dsa))
        && b.blend.as_ref().is_some_and(|o| Arc::ptr_eq(o, blend))
        && b.vertex_elements
            .as_ref()
            .is_some_and(|o| Arc::ptr_eq(o, velems))
        && b.vs.as_ref().is_some_and(|o| Arc::ptr_eq(o, vs))
        && b.fs.as_ref().is_some_and(|o| Arc::ptr_eq(o, fs))
        && Arc::ptr_eq(&b.framebuffer, framebuffer)
        && Arc::ptr_eq(&b.vertex_buffers, vertex_buffers)
        && same(&b.index_buffer.buffer, &index_buffer.buffer)
        && b.index_buffer.index_size == index_buffer.index_size
        && b.index_buffer.offset == index_buffer.offset
        && b.blend_color == *blend_color
        && b.stencil_ref == *stencil_ref
        && b.sample_mask == *sample_mask
        && b.min_samples == *min_samples
        && b.clip == *clip
        && b.poly_stipple == *poly_stipple
        && Arc::ptr_eq(&b.viewports, viewports)
        && Arc::ptr_eq(&b.scissors, scissors)
}

/// What a draw with this state captures: `None` unless the vertex shader
/// has stream-output outputs and a target is bound.
fn stream_output_binding(b: &BoundState) -> Option<Arc<StreamOutputBinding>> {
    let info = b.vs_stream_output.clone()?;
    if b.so_targets.iter().all(Option::is_none) {
        return None;
    }
    Some(Arc::new(StreamOutputBinding {
        info,
        targets: b.so_targets.clone(),
    }))
}

/// Whether a draw with this bound state reads `r` as a vertex, index or
/// constant buffer.
fn reads_buffer(b: &BoundState, r: &ResourceRef) -> bool {
    let same = |o: &Option<ResourceRef>| o.as_ref().is_some_and(|x| Arc::ptr_eq(x, r));
    same(&b.index_buffer.buffer)
        || b.vertex_buffers.iter().any(|vb| same(&vb.buffer))
        || b.constant_buffers
            .iter()
            .any(|cbs| cbs.iter().any(|cb| same(&cb.buffer)))
}

/// Rejects what the pipeline does not implement (yet), naming it: the
/// draw's mode against the block, then the block's state unless `checked`
/// is a block that passed with the very same objects ([`same_checked_state`]).
fn check_supported(info: &DrawInfo, s: &StateBlock, checked: Option<&StateBlock>) -> Result<()> {
    if info.mode == PrimType::Patches {
        return Err(Error::unsupported(
            CALL,
            "PIPE_PRIM_PATCHES (no tessellation stages)".to_string(),
        ));
    }
    if s.stream_output.is_some()
        && matches!(
            info.mode,
            PrimType::LinesAdjacency
                | PrimType::LineStripAdjacency
                | PrimType::TrianglesAdjacency
                | PrimType::TriangleStripAdjacency
        )
    {
        // draw_so_emit_tmp.h: "unexpected primitive type in stream
        // output"; GL allows adjacency only with a geometry shader.
        return Err(DrawError::AdjacencyWithStreamOutput { mode: info.mode }.into());
    }
    if checked.is_some_and(|c| same_checked_state(c, s)) {
        return Ok(());
    }
    check_state(s)
}

/// Whether [`check_state`] of `a` and `b` reads the very same objects:
/// the rasterizer, the framebuffer, both shaders and both stages' shader
/// buffer and image arrays, compared by address.  The caller holds `a`
/// (a block that passed), so none of those objects can have been freed
/// and its address reused; all of them are immutable behind their `Arc`s.
/// A constant buffer per draw (many_draws: 10,000 blocks a flush) then
/// skips the ~1,700 instructions of the full check per draw.
fn same_checked_state(a: &StateBlock, b: &StateBlock) -> bool {
    (Arc::ptr_eq(&a.pipeline, &b.pipeline)
        || Arc::ptr_eq(&a.rasterizer, &b.rasterizer)
            && Arc::ptr_eq(&a.framebuffer, &b.framebuffer)
            && Arc::ptr_eq(&a.vs, &b.vs)
            && Arc::ptr_eq(&a.fs, &b.fs))
        && same_storage(&a.vs_resources, &b.vs_resources)
        && same_storage(&a.fs_resources, &b.fs_resources)
}

/// Whether two stages bind the very same shader buffers and images.
fn same_storage(a: &StageResources, b: &StageResources) -> bool {
    Arc::ptr_eq(&a.bindings, &b.bindings)
        || Arc::ptr_eq(&a.shader_buffers, &b.shader_buffers)
            && Arc::ptr_eq(&a.shader_images, &b.shader_images)
}

/// The part of [`check_supported`] that depends on the block only (see
/// [`same_checked_state`] for what it reads).
fn check_state(s: &StateBlock) -> Result<()> {
    let unsupported = |what: &str| Err(Error::unsupported(CALL, what.to_string()));
    let r = &*s.rasterizer;
    // line_smooth / point_smooth are draw's aaline / aapoint stages
    // (systems/src/aa_stage.rs), and so is poly_smooth's analytic
    // coverage (aa_stage::poly_coverage) unless the screen renders it as
    // llvmpipe does (ScreenConfig::poly_smooth, taken care of above).
    // Polygon offset and unfilled modes are applied in setup
    // (systems/src/setup_plan.rs `PolygonOffset`, setup.rs `setup_unfilled`).
    // Conservative rasterization (systems/src/setup.rs `conservative_dilate`):
    // post- and pre-snap, triangles, lines and points, subpixel precision
    // bias up to the cap; caps say so.
    let max_bias = ferropipe_systems::setup_plan::MAX_SUBPIXEL_PRECISION_BIAS;
    if r.conservative_raster_mode != ConservativeRasterMode::Off
        && r.subpixel_precision_x.max(r.subpixel_precision_y) > max_bias
    {
        // Beyond PIPE_CAP_MAX_CONSERVATIVE_RASTER_SUBPIXEL_PRECISION_BIAS.
        return unsupported(&format!(
            "conservative rasterization subpixel precision bias above {max_bias}"
        ));
    }
    let fb = &*s.framebuffer;
    check_storage(s)?;
    let color_samples = fb
        .cbufs
        .iter()
        .flatten()
        .map(|sf| sf.resource.templ.samples())
        .collect::<Vec<_>>();
    let multisampled = fb.samples > 1 || color_samples.iter().any(|&n| n > 1);
    if multisampled {
        if fb
            .zsbuf
            .as_ref()
            .is_some_and(|z| z.resource.templ.samples() != MS_SAMPLES as u32)
        {
            return unsupported("a depth/stencil buffer of another sample count");
        }
        if color_samples.iter().any(|&n| n != MS_SAMPLES as u32) {
            return unsupported("colour buffers with different sample counts");
        }
    }
    for sf in fb.cbufs.iter().flatten() {
        if !render_target_supported(sf.desc.format) {
            return Err(Error::unsupported(
                CALL,
                format!("render target format {}", sf.desc.format),
            ));
        }
    }
    if let Some(z) = &fb.zsbuf
        && (z.desc.format.desc().kind == FormatKind::Color
            || !depth_target_supported(z.desc.format))
    {
        return Err(Error::unsupported(
            CALL,
            format!("depth/stencil format {}", z.desc.format),
        ));
    }
    Ok(())
}

/// The shader buffers and images the vertex and fragment shaders use are
/// bound, and no image is a resource the framebuffer renders to (GL leaves
/// such a feedback loop undefined; here the colour stores and the shader's
/// atomic words would alias, so it is refused).
fn check_storage(s: &StateBlock) -> Result<()> {
    let fb = &*s.framebuffer;
    let stages = [
        ("vertex", s.vs.info(), &s.vs_resources),
        ("fragment", s.fs.info(), &s.fs_resources),
    ];
    for (name, info, res) in stages {
        for slot in 0..32 {
            if info.shader_buffers_used & (1 << slot) != 0
                && res.shader_buffers.get(slot).is_none_or(Option::is_none)
            {
                return Err(StorageError::Unbound {
                    call: CALL,
                    stage: name,
                    kind: StorageKind::Buffer,
                    slot: slot as u32,
                }
                .into());
            }
            if info.shader_images_used & (1 << slot) != 0
                && res.shader_images.get(slot).is_none_or(Option::is_none)
            {
                return Err(StorageError::Unbound {
                    call: CALL,
                    stage: name,
                    kind: StorageKind::Image,
                    slot: slot as u32,
                }
                .into());
            }
        }
        super::checks::check_storage_access(
            CALL,
            name,
            info,
            &res.shader_buffers,
            &res.shader_images,
        )?;
        for img in res.shader_images.iter().flatten() {
            let rendered = fb
                .cbufs
                .iter()
                .flatten()
                .chain(fb.zsbuf.as_ref())
                .any(|sf| Arc::ptr_eq(&sf.resource, &img.resource));
            if rendered {
                return Err(Error::unsupported(
                    CALL,
                    format!(
                        "a {name} shader image of a resource the framebuffer renders to (a feedback loop)"
                    ),
                ));
            }
        }
    }
    Ok(())
}

impl Context {
    /// `draw_vbo`: validates the draw and records it; nothing is rendered
    /// until the next flush or readback.
    pub fn draw_vbo(&mut self, info: &DrawInfo) -> Result<()> {
        self.alive("draw_vbo")?;
        let draw_index = self.validate.then(|| {
            self.draws += 1;
            self.draws - 1
        });
        if info.indexed && !matches!(self.bound().index_buffer.index_size, 1 | 2 | 4) {
            return Err(DrawError::NoIndexBuffer.into());
        }
        self.record(super::CapturedCall::DrawVbo(info));
        if !self.render_condition_passes()? {
            return Ok(());
        }
        if info.count == 0 || info.instance_count == 0 {
            return Ok(());
        }
        if self.world.resource::<RecordedScene>().commands.len() >= MAX_RECORDED_COMMANDS {
            self.flush_recorded()?;
        }
        // A draw reading what recorded draws capture sees their output.
        // (Each `World::resource` costs ~80 instructions, so the bound
        // state is looked at only when something captures: many_draws
        // records 10,000 draws a flush.)
        let hazard = {
            let rec = &self.recorder;
            !rec.so_buffers.is_empty() && {
                let b = self.bound();
                rec.so_buffers.iter().any(|r| reads_buffer(b, r))
            }
        };
        if hazard {
            self.flush_recorded()?;
        }
        let (state, capture) = self.current_state_block(info)?;
        if let Some(index) = draw_index {
            let observable = capture.is_some() || self.any_query_active();
            let block = &self.world.resource::<RecordedScene>().states[state as usize];
            let causes = super::lint::lint_draw(info, block, observable);
            if !causes.is_empty() {
                log::warn!("ferropipe validate: draw {index}: {}", causes.join("; "));
            }
        }
        if let Some(so) = &capture {
            let rec = &mut self.recorder;
            for t in so.targets.iter().flatten() {
                if !rec.so_buffers.iter().any(|r| Arc::ptr_eq(r, &t.buffer)) {
                    rec.so_buffers.push(t.buffer.clone());
                }
            }
        }
        let bound = self.bound();
        let samples = bound
            .framebuffer
            .cbufs
            .iter()
            .flatten()
            .fold(1, |n, s| n.max(s.resource.templ.samples()));
        if bound.sample_mask & ((1u64 << samples) - 1) as u32 == 0 && capture.is_none() {
            // No sample may be written: the draw does nothing
            // (llvmpipe's lp_setup_zero_sample_mask), unless it captures.
            return Ok(());
        }
        let mut scene = self.world.resource_mut::<RecordedScene>();
        scene.commands.push(Command::Draw { state, info: *info });
        Ok(())
    }

    /// `draw_vbo` with `pipe_draw_indirect_info`: with
    /// `count_from_stream_output`, the vertex count is the target's filled
    /// size over the stride of vertex buffer 0 (`info.count` is ignored);
    /// recorded draws that capture execute first so the size is final.
    /// Such a draw is non-indexed; vertex buffer 0 must have a stride.
    pub fn draw_vbo_indirect(
        &mut self,
        info: &DrawInfo,
        indirect: &DrawIndirectInfo,
    ) -> Result<()> {
        self.alive("draw_vbo_indirect")?;
        let Some(target) = indirect.count_from_stream_output else {
            return self.draw_vbo(info);
        };
        self.record(super::CapturedCall::Inexpressible {
            call: "draw_vbo_indirect",
            why: "count_from_stream_output has no call in gallium-scene/1",
        });
        let t = self
            .get(CALL, "count_from_stream_output", target)?
            .0
            .clone();
        if info.indexed {
            return Err(DrawError::IndexedStreamOutputCount.into());
        }
        let stride = self.bound().vertex_buffers[0].stride;
        if stride == 0 {
            return Err(DrawError::ZeroStrideStreamOutputCount.into());
        }
        self.flush_captures()?;
        let count = t.filled() / stride;
        self.draw_vbo(&DrawInfo { count, ..*info })
    }

    /// Executes the recorded work if a draw in it captures stream output,
    /// so targets' filled sizes are final.
    pub(crate) fn flush_captures(&mut self) -> Result<()> {
        if self.recorder.so_buffers.is_empty() {
            return Ok(());
        }
        self.flush_recorded()
    }

    /// The index of the state block for the bound state: the previous one
    /// if nothing changed since it was taken, else a new snapshot; and
    /// what the block captures.
    fn current_state_block(
        &mut self,
        info: &DrawInfo,
    ) -> Result<(u32, Option<Arc<StreamOutputBinding>>)> {
        let changed = {
            let rec = &self.recorder;
            match (rec.last_block, rec.taken_at) {
                (Some(_), Some(t)) => {
                    let ticks = self
                        .world
                        .get_resource_change_ticks::<BoundState>()
                        .map(|t| t.changed);
                    let now = self.world.read_change_tick();
                    ticks.is_none_or(|c| c.is_newer_than(t, now))
                }
                _ => true,
            }
        };
        if !changed {
            let rec = &self.recorder;
            let idx = rec.last_block.unwrap_or(0);
            let scene = self.world.resource::<RecordedScene>();
            if let Some(block) = scene.states.get(idx as usize) {
                check_supported(info, block, rec.checked.as_deref())?;
                return Ok((idx, block.stream_output.clone()));
            }
        }
        let bound = self.bound();
        let rasterizer = bound.rasterizer.as_ref();
        let rasterizer = rasterizer.ok_or_else(|| missing("rasterizer"))?;
        let block = if rasterizer.poly_smooth && self.screen.poly_smooth() == PolySmooth::Off {
            let rasterizer = rasterizer.clone();
            let rec = &mut self.recorder;
            let off = rec.without_poly_smooth(&rasterizer);
            snapshot(self.bound(), off, self.recorder.checked.as_deref())?
        } else {
            snapshot(bound, rasterizer.clone(), self.recorder.checked.as_deref())?
        };
        let checked = self.recorder.checked.as_deref();
        check_supported(info, &block, checked)?;
        let capture = block.stream_output.clone();
        let mut scene = self.world.resource_mut::<RecordedScene>();
        if scene.framebuffer.is_none() {
            scene.framebuffer = Some(block.framebuffer.clone());
        }
        scene.states.push(block.clone());
        let idx = scene.states.len() as u32 - 1;
        let taken = self.world.increment_change_tick();
        let rec = &mut self.recorder;
        rec.last_block = Some(idx);
        rec.taken_at = Some(taken);
        rec.checked = Some(block);
        Ok((idx, capture))
    }

    /// Records a `clear` of whole attachments of the bound framebuffer into
    /// the scene, where the back end clears tile by tile (no separate pass
    /// over memory, and an opaque draw covering a tile later skips the
    /// clear there).  Returns `false` when the clear cannot be recorded
    /// (layered attachments, which the tile pass renders one layer of),
    /// and the caller clears directly.
    pub(crate) fn record_clear(
        &mut self,
        buffers: ClearFlags,
        color: &ColorUnion,
        depth: f64,
        stencil: u32,
    ) -> Result<bool> {
        let fb = self.bound().framebuffer.clone();
        let single_layer = fb
            .cbufs
            .iter()
            .flatten()
            .chain(fb.zsbuf.iter())
            .all(|s| s.desc.layers() == 1 && s.resource.templ.samples() == 1);
        let formats_ok = fb
            .cbufs
            .iter()
            .flatten()
            .all(|s| render_target_supported(s.desc.format))
            && fb
                .zsbuf
                .iter()
                .all(|s| depth_target_supported(s.desc.format));
        if !single_layer || !formats_ok || fb.width == 0 || fb.height == 0 {
            return Ok(false);
        }
        // Every attachment must cover the framebuffer rectangle, or the
        // tile pass would leave parts of a larger attachment uncleared.
        let covers = fb
            .cbufs
            .iter()
            .flatten()
            .chain(fb.zsbuf.iter())
            .all(|s| s.desc.width <= fb.width && s.desc.height <= fb.height);
        if !covers {
            return Ok(false);
        }
        if self.world.resource::<RecordedScene>().commands.len() >= MAX_RECORDED_COMMANDS {
            self.flush_recorded()?;
        }
        let mut scene = self.world.resource_mut::<RecordedScene>();
        if scene.framebuffer.is_none() {
            scene.framebuffer = Some(fb);
        }
        scene.commands.push(Command::Clear {
            buffers,
            value: ClearValue {
                color: color.0.map(f32::from_bits),
                depth,
                stencil,
            },
        });
        Ok(true)
    }

    /// `flush`: executes all recorded work and returns a fence.
    pub fn flush(&mut self) -> Result<Fence> {
        self.alive("flush")?;
        self.record(super::CapturedCall::Flush);
        self.flush_recorded()?;
        Ok(Fence { _private: () })
    }

    /// Executes recorded work, if any.  Called by every operation that
    /// touches resources outside the recorded command stream (transfers,
    /// copies, clears of unbound surfaces, query results, framebuffer
    /// changes), so they observe draws in submission order.
    pub(crate) fn flush_recorded(&mut self) -> Result<()> {
        if self.world.resource::<RecordedScene>().is_empty() {
            return Ok(());
        }
        let counted = self.counted_commands();
        if let Err(e) = ferropipe_systems::execute_scene(&mut self.world, &counted) {
            return Err(self.lose("flush", e.to_string()));
        }
        self.resolve_query_counts();
        // a shader that stopped a runaway loop left its results incomplete:
        // an error, never a normal completion (every shader is asked, so
        // each flag is cleared)
        let mut incomplete = None;
        for s in &self.world.resource::<RecordedScene>().states {
            if s.vs.take_incomplete() {
                incomplete.get_or_insert("vertex");
            }
            if s.fs.take_incomplete() {
                incomplete.get_or_insert("fragment");
            }
        }
        let rec = &mut self.recorder;
        rec.last_block = None;
        rec.taken_at = None;
        rec.checked = None;
        rec.so_buffers.clear();
        let mut scene = self.world.resource_mut::<RecordedScene>();
        // Harvested and dropped block by block: one pass over the blocks
        // (many_draws: 10,000 of ~1.2 KB, out of L2 by now), not two.
        for mut block in scene.states.drain(..) {
            self.constant_spares.harvest(&mut block);
        }
        scene.clear();
        match incomplete {
            Some(stage) => Err(Error::Shader {
                call: "flush",
                source: ferropipe_shader::ShaderError::LoopLimit { stage },
            }),
            None => Ok(()),
        }
    }
}
