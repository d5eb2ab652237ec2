//! Executing a parsed scene on one [`Screen`] and one [`Context`].

use std::collections::HashMap;
use std::ops::Range;
use std::time::{Duration, Instant};

use ferropipe_components::enums::{ClearFlags, RenderCondMode, ShaderType, TextureTarget};
use ferropipe_components::format::{ChannelType, Format};
use ferropipe_components::resource::level_extent;
use ferropipe_components::state::{BlendColor, ColorUnion, PipeBox, StencilRef};
use ferropipe_components::view::{SamplerViewDesc, SurfaceTemplate};
use serde_json::Value;

use super::SceneError;
use super::output::{OutputData, py_eq, py_json};
use super::parse::{BlitSide, Call, ConstantSource, ImageSpec, Kind, OutputSource, Scene};
use ferropipe::{
    BlendHandle, BoundState, ConstantBuffer, Context, DsaHandle, Error, FramebufferTemplate,
    FsHandle, IndexBuffer, QueryHandle, QueryResult, RasterizerHandle, Resource, SamplerHandle,
    SamplerViewHandle, Screen, ScreenConfig, ShaderBuffer, SurfaceHandle, VertexBuffer,
    VertexElementsHandle, VsHandle, read_box,
};

/// A live scene object.
enum Object {
    Resource(Resource),
    Surface(SurfaceHandle),
    View(SamplerViewHandle),
    Blend(BlendHandle),
    Dsa(DsaHandle),
    Rasterizer(RasterizerHandle),
    Sampler(SamplerHandle),
    VertexElements(VertexElementsHandle),
    Vs(VsHandle),
    Fs(FsHandle),
    Cs(ferropipe::CsHandle),
    Query(QueryHandle),
    SoTarget(ferropipe::StreamOutputTargetHandle),
}

/// Turns a façade error of call `i` into the replayer's error: not
/// implemented (and too large for this driver) → exit 3, anything else the
/// scene got wrong → exit 2.
fn call_error(i: usize, op: &str, e: Error) -> SceneError {
    let msg = format!("call {i} ({op}): {e}");
    if matches!(e, Error::DeviceLost { .. }) {
        SceneError::DeviceLost(msg)
    } else if e.is_unsupported() || matches!(e, Error::OutOfMemory { .. }) {
        SceneError::Unsupported(msg)
    } else {
        SceneError::Malformed(msg)
    }
}

/// `QueryResult` as the JSON value `queries.jsonl` prints.
pub fn query_json(r: &Option<QueryResult>) -> Value {
    match r {
        None => Value::Null,
        Some(QueryResult::U64(v)) => Value::from(*v),
        Some(QueryResult::Bool(b)) => Value::Bool(*b),
        Some(QueryResult::PipelineStatistics(s)) => Value::from(s.to_vec()),
        Some(QueryResult::SoStatistics {
            num_primitives_written,
            primitives_storage_needed,
        }) => Value::from(vec![*num_primitives_written, *primitives_storage_needed]),
        Some(QueryResult::TimestampDisjoint {
            frequency,
            disjoint,
        }) => Value::Array(vec![Value::from(*frequency), Value::Bool(*disjoint)]),
    }
}

/// The colour a scene wrote, as the union a surface of `format` reads
/// (FORMAT.md: integer formats take the numbers as integers, truncated like
/// the reference's `int()` and wrapped like its C casts).
fn color_for(format: Format, c: [f64; 4]) -> ColorUnion {
    match format.desc().channel_type {
        ChannelType::Uint => ColorUnion::uint(c.map(|v| v.trunc() as i64 as u32)),
        ChannelType::Sint => ColorUnion::sint(c.map(|v| v.trunc() as i64 as i32)),
        _ => ColorUnion::float(c.map(|v| v as f32)),
    }
}

/// Replays scenes on one screen and context.
pub struct Replayer {
    /// The screen the scene's resources live on.
    pub screen: Screen,
    /// The context the calls run on.
    pub ctx: Context,
    objects: HashMap<String, Object>,
    /// `get_query_result` lines recorded so far.
    pub query_log: Vec<(String, Value)>,
    /// `expect` mismatches ("query q: expected 3, got 4").
    pub expect_failures: Vec<String>,
    /// Print a progress line to stderr every few seconds.
    pub progress: bool,
    /// Development aid: keep going past `Unsupported` calls (and calls that
    /// use objects such calls failed to create), remembering the first.
    /// [`Replayer::run`] still fails with it at the end, so a scene is never
    /// reported as replayed; this only exercises everything else.
    pub keep_going: bool,
    first_unsupported: Option<SceneError>,
    /// Ids whose creation was skipped in `keep_going` mode.
    poisoned: std::collections::HashSet<String>,
}

impl Replayer {
    /// A replayer on a new screen with `threads` workers (0 = all CPUs).
    pub fn new(threads: usize) -> Result<Self, SceneError> {
        Self::with_config(ScreenConfig {
            threads,
            ..Default::default()
        })
    }

    /// A replayer on a new screen made with `config`.
    pub fn with_config(config: ScreenConfig) -> Result<Self, SceneError> {
        let screen = Screen::new(config).map_err(|e| SceneError::Unsupported(e.to_string()))?;
        Self::on_screen(&screen)
    }

    /// A replayer on a new context of an existing `screen`: several
    /// replayers on one screen may run in different threads at once
    /// (screen.rst "Thread safety"; `tests/stress.rs` does exactly that).
    pub fn on_screen(screen: &Screen) -> Result<Self, SceneError> {
        let screen = screen.clone();
        let ctx = screen
            .context_create()
            .map_err(|e| SceneError::Unsupported(e.to_string()))?;
        Ok(Replayer {
            screen,
            ctx,
            objects: HashMap::new(),
            query_log: Vec::new(),
            expect_failures: Vec::new(),
            progress: false,
            keep_going: false,
            first_unsupported: None,
            poisoned: Default::default(),
        })
    }

    fn lookup(&self, i: usize, op: &str, id: &str) -> Result<&Object, SceneError> {
        if self.poisoned.contains(id) {
            return Err(SceneError::Unsupported(format!(
                "call {i} ({op}): {id:?} could not be created"
            )));
        }
        self.objects.get(id).ok_or_else(|| {
            SceneError::Malformed(format!(
                "call {i} ({op}): {id:?} no longer exists (destroyed by an earlier timed run?)"
            ))
        })
    }

    /// Executes `scene.calls[range]`.  With `record` false (timed re-runs)
    /// query results are neither logged nor checked.
    pub fn run(
        &mut self,
        scene: &Scene,
        range: Range<usize>,
        record: bool,
    ) -> Result<(), SceneError> {
        let total = scene.calls.len();
        let mut last_report = Instant::now();
        let start = Instant::now();
        for i in range {
            let call = &scene.calls[i];
            match self.exec(i, call, record) {
                Ok(()) => {}
                Err(e @ SceneError::Unsupported(_)) if self.keep_going => {
                    if let Some(id) = created_id(call) {
                        self.poisoned.insert(id.to_string());
                    }
                    self.first_unsupported.get_or_insert(e);
                }
                // After a skipped call, later failures may be its
                // consequences (a draw with the skipped shader unbound):
                // keep going; the run still fails with the first skip.
                Err(_) if self.keep_going && self.first_unsupported.is_some() => {}
                Err(e) => return Err(e),
            }
            if self.progress && last_report.elapsed() > Duration::from_secs(2) {
                last_report = Instant::now();
                eprintln!(
                    "replay: call {}/{total} ({}) after {:.1} s",
                    i + 1,
                    call.op(),
                    start.elapsed().as_secs_f64()
                );
            }
        }
        match self.first_unsupported.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn exec(&mut self, i: usize, call: &Call, record: bool) -> Result<(), SceneError> {
        let op = call.op();
        let err = |e: Error| call_error(i, op, e);
        macro_rules! handle {
            ($variant:ident, $id:expr) => {
                match self.lookup(i, op, $id)? {
                    Object::$variant(h) => *h,
                    _ => {
                        return Err(SceneError::Malformed(format!(
                            "call {i} ({op}): {:?} has the wrong kind",
                            $id
                        )))
                    }
                }
            };
        }
        macro_rules! opt_handle {
            ($variant:ident, $id:expr) => {
                match $id {
                    Some(id) => Some(handle!($variant, id)),
                    None => None,
                }
            };
        }
        match call {
            Call::ResourceCreate { id, templ, data } => {
                self.forget(id);
                let r = self.screen.resource_create(templ).map_err(err)?;
                if let Some(d) = data {
                    if templ.target == TextureTarget::Buffer {
                        self.ctx.buffer_subdata(&r, 0, d).map_err(err)?;
                    } else {
                        let (w, h, _) = level_extent(templ, 0);
                        let b = PipeBox::new_2d(0, 0, w as i32, h as i32);
                        self.ctx.texture_subdata(&r, 0, &b, d, 0, 0).map_err(err)?;
                    }
                }
                self.objects.insert(id.clone(), Object::Resource(r));
            }
            Call::ResourceDestroy { id } => {
                if let Some(Object::Resource(r)) = self.objects.remove(id) {
                    self.screen.resource_destroy(r);
                }
            }
            Call::BufferSubdata {
                resource,
                offset,
                data,
            } => {
                let r = res(&self.objects, &self.poisoned, i, op, resource)?;
                self.ctx.buffer_subdata(r, *offset, data).map_err(err)?;
            }
            Call::TextureSubdata {
                resource,
                level,
                pbox,
                data,
                stride,
                layer_stride,
            } => {
                let r = res(&self.objects, &self.poisoned, i, op, resource)?;
                self.ctx
                    .texture_subdata(r, *level, pbox, data, *stride, *layer_stride)
                    .map_err(err)?;
            }
            Call::CreateSurface {
                id,
                resource,
                format,
                level,
                first_layer,
                last_layer,
            } => {
                self.forget(id);
                let r = res(&self.objects, &self.poisoned, i, op, resource)?;
                let t = SurfaceTemplate {
                    format: format.unwrap_or(r.template().format),
                    level: *level,
                    first_layer: *first_layer,
                    last_layer: last_layer.unwrap_or(*first_layer),
                };
                let h = self.ctx.create_surface(r, &t).map_err(err)?;
                self.objects.insert(id.clone(), Object::Surface(h));
            }
            Call::SurfaceDestroy { id } => {
                let h = handle!(Surface, id);
                self.ctx.surface_destroy(h).map_err(err)?;
                self.objects.remove(id);
            }
            Call::CreateSamplerView {
                id,
                resource,
                target,
                format,
                first_level,
                last_level,
                first_layer,
                last_layer,
                swizzle,
            } => {
                self.forget(id);
                let r = res(&self.objects, &self.poisoned, i, op, resource)?;
                let full = SamplerViewDesc::of_resource(r.template());
                let desc = SamplerViewDesc {
                    target: target.unwrap_or(full.target),
                    format: format.unwrap_or(full.format),
                    first_level: *first_level,
                    last_level: last_level.unwrap_or(full.last_level),
                    first_layer: *first_layer,
                    last_layer: last_layer.unwrap_or(full.last_layer),
                    swizzle: *swizzle,
                    ..full
                };
                let h = self.ctx.create_sampler_view(r, &desc).map_err(err)?;
                self.objects.insert(id.clone(), Object::View(h));
            }
            Call::SamplerViewDestroy { id } => {
                let h = handle!(View, id);
                self.ctx.sampler_view_destroy(h).map_err(err)?;
                self.objects.remove(id);
            }
            Call::CreateBlendState { id, state } => {
                self.create(id, err, |c| c.create_blend_state(state).map(Object::Blend))?
            }
            Call::CreateDepthStencilAlphaState { id, state } => self.create(id, err, |c| {
                c.create_depth_stencil_alpha_state(state).map(Object::Dsa)
            })?,
            Call::CreateRasterizerState { id, state } => self.create(id, err, |c| {
                c.create_rasterizer_state(state).map(Object::Rasterizer)
            })?,
            Call::CreateSamplerState { id, state } => self.create(id, err, |c| {
                c.create_sampler_state(state).map(Object::Sampler)
            })?,
            Call::CreateVertexElementsState { id, elements } => self.create(id, err, |c| {
                c.create_vertex_elements_state(elements)
                    .map(Object::VertexElements)
            })?,
            Call::CreateShader { id, stage, state } => {
                self.forget(id);
                let obj = if *stage == ShaderType::Vertex {
                    Object::Vs(self.ctx.create_vs_state(state).map_err(err)?)
                } else {
                    Object::Fs(self.ctx.create_fs_state(state).map_err(err)?)
                };
                self.objects.insert(id.clone(), obj);
            }
            Call::CreateComputeState { id, state } => {
                self.create(id, err, |c| c.create_compute_state(state).map(Object::Cs))?
            }
            Call::SetShaderBuffers {
                shader,
                start_slot,
                buffers,
                writable_bitmask,
            } => {
                let mut bs = Vec::with_capacity(buffers.len());
                for b in buffers {
                    bs.push(match b {
                        Some((id, offset, size)) => {
                            let r = res(&self.objects, &self.poisoned, i, op, id)?;
                            Some(ShaderBuffer {
                                buffer: r,
                                offset: *offset,
                                size: size.unwrap_or(r.template().width0.saturating_sub(*offset)),
                            })
                        }
                        None => None,
                    });
                }
                self.ctx
                    .set_shader_buffers(*shader, *start_slot, &bs, *writable_bitmask)
                    .map_err(err)?;
            }
            Call::SetShaderImages {
                shader,
                start_slot,
                images,
            } => {
                let mut vs = Vec::with_capacity(images.len());
                for v in images {
                    vs.push(match v {
                        Some(v) => Some(image_view(
                            v,
                            res(&self.objects, &self.poisoned, i, op, &v.resource)?,
                        )),
                        None => None,
                    });
                }
                self.ctx
                    .set_shader_images(*shader, *start_slot, &vs)
                    .map_err(err)?;
            }
            Call::LaunchGrid(g) => {
                let info = ferropipe::GridInfo {
                    input: &g.input,
                    work_dim: 3,
                    block: g.block,
                    last_block: g.last_block,
                    grid: g.grid,
                    grid_base: g.grid_base,
                    ..Default::default()
                };
                self.ctx.launch_grid(&info).map_err(err)?;
            }
            Call::Bind { kind, id } => {
                let id = id.as_deref();
                match kind {
                    Kind::Blend => self.ctx.bind_blend_state(opt_handle!(Blend, id)),
                    Kind::DepthStencilAlpha => self
                        .ctx
                        .bind_depth_stencil_alpha_state(opt_handle!(Dsa, id)),
                    Kind::Rasterizer => self.ctx.bind_rasterizer_state(opt_handle!(Rasterizer, id)),
                    Kind::VertexElements => self
                        .ctx
                        .bind_vertex_elements_state(opt_handle!(VertexElements, id)),
                    Kind::VertexShader => self.ctx.bind_vs_state(opt_handle!(Vs, id)),
                    Kind::ComputeShader => self.ctx.bind_compute_state(opt_handle!(Cs, id)),
                    _ => self.ctx.bind_fs_state(opt_handle!(Fs, id)),
                }
                .map_err(err)?;
            }
            Call::Delete { kind, id } => {
                match kind {
                    Kind::Blend => self.ctx.delete_blend_state(handle!(Blend, id)),
                    Kind::DepthStencilAlpha => {
                        self.ctx.delete_depth_stencil_alpha_state(handle!(Dsa, id))
                    }
                    Kind::Rasterizer => self.ctx.delete_rasterizer_state(handle!(Rasterizer, id)),
                    Kind::Sampler => self.ctx.delete_sampler_state(handle!(Sampler, id)),
                    Kind::VertexElements => self
                        .ctx
                        .delete_vertex_elements_state(handle!(VertexElements, id)),
                    Kind::VertexShader => self.ctx.delete_vs_state(handle!(Vs, id)),
                    Kind::ComputeShader => self.ctx.delete_compute_state(handle!(Cs, id)),
                    _ => self.ctx.delete_fs_state(handle!(Fs, id)),
                }
                .map_err(err)?;
                self.objects.remove(id);
            }
            Call::BindSamplerStates {
                shader,
                start_slot,
                samplers,
            } => {
                let mut hs = Vec::with_capacity(samplers.len());
                for s in samplers {
                    hs.push(opt_handle!(Sampler, s.as_deref()));
                }
                self.ctx
                    .bind_sampler_states(*shader, *start_slot, &hs)
                    .map_err(err)?;
            }
            Call::SetFramebufferState {
                width,
                height,
                layers,
                samples,
                cbufs,
                zsbuf,
            } => {
                let mut cb = Vec::with_capacity(cbufs.len());
                for s in cbufs {
                    cb.push(opt_handle!(Surface, s.as_deref()));
                }
                let fb = FramebufferTemplate {
                    width: *width,
                    height: *height,
                    layers: *layers,
                    samples: *samples,
                    cbufs: cb,
                    zsbuf: opt_handle!(Surface, zsbuf.as_deref()),
                };
                self.ctx.set_framebuffer_state(&fb).map_err(err)?;
            }
            Call::SetViewportStates {
                start_slot,
                viewports,
            } => self
                .ctx
                .set_viewport_states(*start_slot, viewports)
                .map_err(err)?,
            Call::SetScissorStates {
                start_slot,
                scissors,
            } => self
                .ctx
                .set_scissor_states(*start_slot, scissors)
                .map_err(err)?,
            Call::SetVertexBuffers {
                start_slot,
                buffers,
            } => {
                let mut vbs = Vec::with_capacity(buffers.len());
                for b in buffers {
                    vbs.push(match b {
                        Some((id, stride, offset)) => VertexBuffer {
                            buffer: Some(res(&self.objects, &self.poisoned, i, op, id)?),
                            stride: *stride,
                            buffer_offset: *offset,
                        },
                        None => VertexBuffer::default(),
                    });
                }
                self.ctx
                    .set_vertex_buffers(*start_slot, &vbs)
                    .map_err(err)?;
            }
            Call::SetIndexBuffer(ib) => {
                let ib = match ib {
                    Some((id, size, offset)) => Some(IndexBuffer {
                        buffer: res(&self.objects, &self.poisoned, i, op, id)?,
                        index_size: *size,
                        offset: *offset,
                    }),
                    None => None,
                };
                self.ctx.set_index_buffer(ib).map_err(err)?;
            }
            Call::SetConstantBuffer {
                shader,
                index,
                source,
            } => {
                let cb = match source {
                    ConstantSource::Unbind => None,
                    ConstantSource::User(d) => Some(ConstantBuffer::User(d)),
                    ConstantSource::Buffer { id, offset, size } => {
                        let r = res(&self.objects, &self.poisoned, i, op, id)?;
                        Some(ConstantBuffer::Buffer {
                            resource: r,
                            offset: *offset,
                            size: size.unwrap_or(r.template().width0.saturating_sub(*offset)),
                        })
                    }
                };
                self.ctx
                    .set_constant_buffer(*shader, *index, cb)
                    .map_err(err)?;
            }
            Call::SetSamplerViews {
                shader,
                start_slot,
                views,
            } => {
                let mut hs = Vec::with_capacity(views.len());
                for v in views {
                    hs.push(opt_handle!(View, v.as_deref()));
                }
                self.ctx
                    .set_sampler_views(*shader, *start_slot, &hs)
                    .map_err(err)?;
            }
            Call::SetBlendColor(c) => self
                .ctx
                .set_blend_color(&BlendColor { color: *c })
                .map_err(err)?,
            Call::SetStencilRef(r) => self
                .ctx
                .set_stencil_ref(StencilRef { ref_value: *r })
                .map_err(err)?,
            Call::SetSampleMask(m) => self.ctx.set_sample_mask(*m).map_err(err)?,
            Call::SetMinSamples(m) => self.ctx.set_min_samples(*m).map_err(err)?,
            Call::SetClipState(c) => self.ctx.set_clip_state(c).map_err(err)?,
            Call::SetPolygonStipple(s) => self.ctx.set_polygon_stipple(s).map_err(err)?,
            Call::Clear {
                buffers,
                color,
                depth,
                stencil,
            } => self
                .clear(*buffers, *color, *depth, *stencil)
                .map_err(err)?,
            Call::ClearRenderTarget {
                surface,
                color,
                dstx,
                dsty,
                width,
                height,
                render_condition_enabled,
            } => {
                let h = handle!(Surface, surface);
                let format = self.ctx.surface(h).map_err(err)?.desc.format;
                self.ctx
                    .clear_render_target(
                        h,
                        &color_for(format, *color),
                        *dstx,
                        *dsty,
                        *width,
                        *height,
                        *render_condition_enabled,
                    )
                    .map_err(err)?;
            }
            Call::ClearDepthStencil {
                surface,
                clear_flags,
                depth,
                stencil,
                dstx,
                dsty,
                width,
                height,
                render_condition_enabled,
            } => {
                let h = handle!(Surface, surface);
                self.ctx
                    .clear_depth_stencil(
                        h,
                        *clear_flags,
                        *depth,
                        *stencil,
                        *dstx,
                        *dsty,
                        *width,
                        *height,
                        *render_condition_enabled,
                    )
                    .map_err(err)?;
            }
            Call::ClearBuffer {
                resource,
                offset,
                size,
                value,
            } => {
                let r = res(&self.objects, &self.poisoned, i, op, resource)?;
                self.ctx
                    .clear_buffer(r, *offset, *size, value)
                    .map_err(err)?;
            }
            Call::DrawVbo(info) => self.ctx.draw_vbo(info).map_err(err)?,
            Call::CreateQuery {
                id,
                query_type,
                index,
            } => {
                self.forget(id);
                let h = self.ctx.create_query(*query_type, *index).map_err(err)?;
                self.objects.insert(id.clone(), Object::Query(h));
            }
            Call::CreateStreamOutputTarget {
                id,
                buffer,
                buffer_offset,
                buffer_size,
            } => {
                let r = res(&self.objects, &self.poisoned, i, op, buffer)?.clone();
                self.create(id, err, |c| {
                    c.create_stream_output_target(&r, *buffer_offset, *buffer_size)
                        .map(Object::SoTarget)
                })?
            }
            Call::StreamOutputTargetDestroy { id } => {
                let h = handle!(SoTarget, id);
                self.ctx.stream_output_target_destroy(h).map_err(err)?;
                self.objects.remove(id);
            }
            Call::SetStreamOutputTargets { targets, offsets } => {
                let mut hs = Vec::with_capacity(targets.len());
                for t in targets {
                    hs.push(match t {
                        Some(id) => Some(handle!(SoTarget, id)),
                        None => None,
                    });
                }
                self.ctx
                    .set_stream_output_targets(&hs, offsets)
                    .map_err(err)?;
            }
            Call::DestroyQuery { id } => {
                let h = handle!(Query, id);
                self.ctx.destroy_query(h).map_err(err)?;
                self.objects.remove(id);
            }
            Call::BeginQuery { id } => {
                let h = handle!(Query, id);
                self.ctx.begin_query(h).map_err(err)?;
            }
            Call::EndQuery { id } => {
                let h = handle!(Query, id);
                self.ctx.end_query(h).map_err(err)?;
            }
            Call::GetQueryResult { id, wait, expect } => {
                let h = handle!(Query, id);
                let r = self.ctx.get_query_result(h, *wait).map_err(err)?;
                if record {
                    let v = query_json(&r);
                    if let Some(e) = expect
                        && !py_eq(e, &v)
                    {
                        self.expect_failures.push(format!(
                            "call {i}: query {id:?}: expected {}, got {}",
                            py_json(e),
                            py_json(&v)
                        ));
                    }
                    self.query_log.push((id.clone(), v));
                }
            }
            Call::RenderCondition {
                query,
                condition,
                mode,
            } => {
                let q = opt_handle!(Query, query.as_deref());
                self.ctx
                    .render_condition(q, *condition, *mode)
                    .map_err(err)?;
            }
            Call::ResourceCopyRegion {
                dst,
                dst_level,
                dstx,
                dsty,
                dstz,
                src,
                src_level,
                src_box,
            } => {
                let (d, s) = (
                    res(&self.objects, &self.poisoned, i, op, dst)?,
                    res(&self.objects, &self.poisoned, i, op, src)?,
                );
                self.ctx
                    .resource_copy_region(
                        d, *dst_level, *dstx, *dsty, *dstz, s, *src_level, src_box,
                    )
                    .map_err(err)?;
            }
            Call::Blit(b) => {
                let (dr, sr) = (
                    res(&self.objects, &self.poisoned, i, op, &b.dst.resource)?,
                    res(&self.objects, &self.poisoned, i, op, &b.src.resource)?,
                );
                let info = ferropipe::BlitInfo {
                    dst: blit_side(&b.dst, dr),
                    src: blit_side(&b.src, sr),
                    mask: b.mask,
                    filter: b.filter,
                    scissor_enable: b.scissor.is_some(),
                    scissor: b.scissor.unwrap_or_default(),
                    render_condition_enable: b.render_condition_enable,
                    alpha_blend: b.alpha_blend,
                    sample0_only: false,
                };
                self.ctx.blit(&info).map_err(err)?;
            }
            Call::Flush => {
                self.ctx.flush().map_err(err)?;
            }
            Call::FlushResource { resource } => {
                res(&self.objects, &self.poisoned, i, op, resource)?;
            }
            Call::TextureBarrier => self.ctx.texture_barrier().map_err(err)?,
            Call::MemoryBarrier(flags) => self.ctx.memory_barrier(*flags).map_err(err)?,
            Call::TimingBegin => {}
        }
        Ok(())
    }

    /// `clear` with the scene's numbers: each colour buffer gets the colour
    /// converted for its format; buffers of different classes (float,
    /// UINT, SINT) are cleared by separate calls, as GL's per-buffer
    /// `glClearBuffer` does in the reference.
    fn clear(
        &mut self,
        buffers: ClearFlags,
        color: [f64; 4],
        depth: f64,
        stencil: u32,
    ) -> ferropipe::Result<()> {
        let fb = self.ctx.bound().framebuffer.clone();
        let mut groups: Vec<(ColorUnion, ClearFlags)> = Vec::new();
        for (k, s) in fb.cbufs.iter().enumerate() {
            let bit = ClearFlags::from_bits_truncate(ClearFlags::COLOR0.bits() << k);
            let Some(s) = s else { continue };
            if !buffers.contains(bit) {
                continue;
            }
            let c = color_for(s.desc.format, color);
            match groups.iter_mut().find(|(u, _)| *u == c) {
                Some((_, f)) => *f |= bit,
                None => groups.push((c, bit)),
            }
        }
        let zs = buffers & ClearFlags::DEPTHSTENCIL;
        if groups.is_empty() {
            return self.ctx.clear(zs, &ColorUnion::default(), depth, stencil);
        }
        for (n, (c, f)) in groups.into_iter().enumerate() {
            let flags = if n == 0 { f | zs } else { f };
            self.ctx.clear(flags, &c, depth, stencil)?;
        }
        Ok(())
    }

    /// Creates the object `id` names with `f` (dropping a previous one).
    fn create(
        &mut self,
        id: &str,
        err: impl Fn(Error) -> SceneError,
        f: impl FnOnce(&mut Context) -> ferropipe::Result<Object>,
    ) -> Result<(), SceneError> {
        self.forget(id);
        let obj = f(&mut self.ctx).map_err(err)?;
        self.objects.insert(id.to_string(), obj);
        Ok(())
    }

    /// Drops an object an id names before the id is created again (only in
    /// timed re-runs: the parser forbids duplicate ids).
    fn forget(&mut self, id: &str) {
        let Some(obj) = self.objects.remove(id) else {
            return;
        };
        // Deleting can only fail for handles that are already gone.
        let _ = match obj {
            Object::Resource(_) => Ok(()),
            Object::Surface(h) => self.ctx.surface_destroy(h),
            Object::View(h) => self.ctx.sampler_view_destroy(h),
            Object::Blend(h) => self.ctx.delete_blend_state(h),
            Object::Dsa(h) => self.ctx.delete_depth_stencil_alpha_state(h),
            Object::Rasterizer(h) => self.ctx.delete_rasterizer_state(h),
            Object::Sampler(h) => self.ctx.delete_sampler_state(h),
            Object::VertexElements(h) => self.ctx.delete_vertex_elements_state(h),
            Object::Vs(h) => self.ctx.delete_vs_state(h),
            Object::Fs(h) => self.ctx.delete_fs_state(h),
            Object::Cs(h) => self.ctx.delete_compute_state(h),
            Object::Query(h) => self.ctx.destroy_query(h),
            Object::SoTarget(h) => self.ctx.stream_output_target_destroy(h),
        };
    }

    /// The bound state (for `--time`'s restore point).
    pub fn snapshot(&self) -> BoundState {
        self.ctx.bound().clone()
    }

    /// Restores a snapshot and turns conditional rendering off, as the
    /// reference does before each timed run.
    pub fn restore(&mut self, state: BoundState) -> Result<(), SceneError> {
        match self.ctx.render_condition(None, false, RenderCondMode::Wait) {
            Ok(()) => {}
            // No conditional rendering yet: nothing can be active.
            Err(e) if e.is_unsupported() => {}
            Err(e) => return Err(SceneError::Malformed(e.to_string())),
        }
        self.ctx
            .restore_bound_state(state)
            .map_err(|e| call_error(0, "timing restore", e))
    }

    /// Starts capturing this replay's context into `dir/NAME.json`
    /// (issue 18; the conformance round trip uses it).
    pub fn start_capture(&mut self, dir: &std::path::Path, name: &str) -> Result<(), SceneError> {
        self.ctx
            .start_capture(Box::new(crate::capture::SceneCapture::named(dir, name)))
            .map_err(|e| SceneError::Unsupported(e.to_string()))
    }

    /// Stops the capture and writes it, naming `scene`'s outputs as the
    /// captured scene's outputs (so both replays write the same files).
    pub fn finish_capture(
        &mut self,
        scene: &Scene,
    ) -> Result<crate::capture::CaptureSummary, SceneError> {
        let unsupported = |e: crate::capture::CaptureError| SceneError::Unsupported(e.to_string());
        let mut w = crate::capture::SceneCapture::stop(&mut self.ctx).map_err(unsupported)?;
        for o in &scene.outputs {
            let gone = || SceneError::Malformed(format!("output {:?}: object gone", o.name));
            match &o.source {
                OutputSource::Surface(id) => {
                    let Some(Object::Surface(h)) = self.objects.get(id) else {
                        return Err(gone());
                    };
                    let s = self
                        .ctx
                        .surface(*h)
                        .map_err(|e| SceneError::Malformed(e.to_string()))?;
                    w.add_output_view(
                        &o.name,
                        &s.resource,
                        s.desc.format,
                        s.desc.level,
                        s.desc.first_layer,
                    )
                    .map_err(unsupported)?;
                }
                OutputSource::Resource { id, level, layer } => {
                    let Some(Object::Resource(r)) = self.objects.get(id) else {
                        return Err(gone());
                    };
                    w.add_output(&o.name, r.shared(), *level, *layer)
                        .map_err(unsupported)?;
                }
                OutputSource::Buffer { id, offset, size } => {
                    let Some(Object::Resource(r)) = self.objects.get(id) else {
                        return Err(gone());
                    };
                    w.add_output_buffer(&o.name, r.shared(), *offset, *size)
                        .map_err(unsupported)?;
                }
            }
        }
        w.write().map_err(|e| SceneError::Io(e.to_string()))
    }

    /// Reads every output (after a final flush).
    pub fn read_outputs(&mut self, scene: &Scene) -> Result<Vec<OutputData>, SceneError> {
        self.ctx
            .flush()
            .map_err(|e| call_error(scene.calls.len(), "flush", e))?;
        let mut out = Vec::with_capacity(scene.outputs.len());
        for o in &scene.outputs {
            let what = format!("output {:?}", o.name);
            let (resource, level, layer, format) = match &o.source {
                OutputSource::Surface(id) => {
                    let Some(Object::Surface(h)) = self.objects.get(id) else {
                        return Err(SceneError::Malformed(format!(
                            "{what}: surface {id:?} no longer exists"
                        )));
                    };
                    // The surface holds its resource even after
                    // resource_destroy.
                    let s = self
                        .ctx
                        .surface(*h)
                        .map_err(|e| SceneError::Malformed(format!("{what}: {e}")))?;
                    (
                        s.resource.clone(),
                        s.desc.level,
                        s.desc.first_layer,
                        s.desc.format,
                    )
                }
                OutputSource::Buffer { id, offset, size } => {
                    let Some(Object::Resource(r)) = self.objects.get(id) else {
                        return Err(SceneError::Malformed(format!(
                            "{what}: resource {id:?} no longer exists"
                        )));
                    };
                    // FORMAT.md: read back through transfer_map
                    let b = PipeBox::new_2d(*offset as i32, 0, *size as i32, 1);
                    let bytes = if *size == 0 {
                        Vec::new()
                    } else {
                        let t = self
                            .ctx
                            .transfer_map(
                                r,
                                0,
                                ferropipe_components::enums::TransferFlags::READ,
                                &b,
                            )
                            .map_err(|e| call_error(scene.calls.len(), "outputs", e))?;
                        let bytes = t.data().to_vec();
                        self.ctx
                            .transfer_unmap(t)
                            .map_err(|e| call_error(scene.calls.len(), "outputs", e))?;
                        bytes
                    };
                    out.push(OutputData::from_buffer(&o.name, bytes));
                    continue;
                }
                OutputSource::Resource { id, level, layer } => {
                    let Some(Object::Resource(r)) = self.objects.get(id) else {
                        return Err(SceneError::Malformed(format!(
                            "{what}: resource {id:?} no longer exists"
                        )));
                    };
                    (r.shared().clone(), *level, *layer, r.template().format)
                }
            };
            let t = &resource.templ;
            if t.target == TextureTarget::Buffer {
                return Err(SceneError::Unsupported(format!("{what}: buffer outputs")));
            }
            if t.samples() > 1 {
                return Err(SceneError::Unsupported(format!(
                    "{what}: multisampled outputs (resolve with a blit first)"
                )));
            }
            let (w, h, _) = level_extent(t, level);
            let b = PipeBox::new_3d(0, 0, layer as i32, w as i32, h as i32, 1);
            let bytes = read_box(&resource, level, &b)
                .map_err(|e| SceneError::Malformed(format!("{what}: {e}")))?;
            out.push(OutputData::from_pixels(&o.name, format, w, h, &bytes));
        }
        Ok(out)
    }
}

/// The id a call creates, if any.
fn created_id(call: &Call) -> Option<&str> {
    Some(match call {
        Call::ResourceCreate { id, .. }
        | Call::CreateSurface { id, .. }
        | Call::CreateSamplerView { id, .. }
        | Call::CreateBlendState { id, .. }
        | Call::CreateDepthStencilAlphaState { id, .. }
        | Call::CreateRasterizerState { id, .. }
        | Call::CreateSamplerState { id, .. }
        | Call::CreateVertexElementsState { id, .. }
        | Call::CreateShader { id, .. }
        | Call::CreateComputeState { id, .. }
        | Call::CreateQuery { id, .. }
        | Call::CreateStreamOutputTarget { id, .. } => id,
        _ => return None,
    })
}

/// A scene's image view on a live resource, FORMAT.md's defaults
/// resolved: the resource's format; `last_layer` the last layer (3D: the
/// last slice of the level) of array, cube and 3D resources, else
/// `first_layer`.  `access` (the reader's mask, READ | WRITE when
/// omitted) becomes the view's: a shader that reads an image the view
/// says is write-only, or the reverse, fails its draw or launch.
fn image_view<'a>(v: &ImageSpec, r: &'a Resource) -> ferropipe::ImageView<'a> {
    let t = r.template();
    let layered = matches!(
        t.target,
        TextureTarget::Texture1DArray
            | TextureTarget::Texture2DArray
            | TextureTarget::TextureCube
            | TextureTarget::TextureCubeArray
            | TextureTarget::Texture3D
    );
    let last_layer = v.last_layer.unwrap_or(if layered {
        ferropipe_components::resource::level_extent(t, v.level)
            .2
            .saturating_sub(1)
    } else {
        v.first_layer
    });
    // a buffer image (FORMAT.md gives no range): the whole buffer
    let size = if t.target == TextureTarget::Buffer {
        t.width0.min(ferropipe::MAX_SHADER_BUFFER_SIZE)
    } else {
        0
    };
    ferropipe::ImageView {
        resource: r,
        format: v.format.unwrap_or(t.format),
        level: v.level,
        first_layer: v.first_layer,
        last_layer,
        offset: 0,
        size,
        access: ferropipe_components::enums::ImageAccess::from_bits_truncate(v.access),
    }
}

/// A scene's blit side on a live resource (the format defaults to the
/// resource's).
fn blit_side<'a>(s: &BlitSide, r: &'a Resource) -> ferropipe::BlitSide<'a> {
    ferropipe::BlitSide {
        resource: r,
        level: s.level,
        format: s.format.unwrap_or(r.template().format),
        pbox: s.pbox,
    }
}

/// The resource an id names (ids were resolved at parse time; only a timed
/// re-run of work that destroys setup objects can miss).
fn res<'a>(
    objects: &'a HashMap<String, Object>,
    poisoned: &std::collections::HashSet<String>,
    i: usize,
    op: &str,
    id: &str,
) -> Result<&'a Resource, SceneError> {
    if poisoned.contains(id) {
        return Err(SceneError::Unsupported(format!(
            "call {i} ({op}): {id:?} could not be created"
        )));
    }
    match objects.get(id) {
        Some(Object::Resource(r)) => Ok(r),
        _ => Err(SceneError::Malformed(format!(
            "call {i} ({op}): resource {id:?} no longer exists (destroyed by an earlier timed run?)"
        ))),
    }
}
