//! Resource binding state and non-CSO state (context.rst "Resource Binding
//! State", "Non-CSO State", `set_sampler_views`).
//!
//! Each setter validates its arguments once (slot ranges, targets, bind
//! flags, formats, strides, index sizes) and writes [`BoundState`]
//! copy-on-write, so snapshots taken by recorded draws stay intact.
//! `set_framebuffer_state` first executes recorded work when the framebuffer
//! actually changes: draws recorded against the old attachments must land
//! there, and readers of the old attachments must see them.

use std::sync::Arc;

use ferropipe_components::batch::{ConstantBufferSlots, StateBlock};
use ferropipe_components::draw::{
    ConstantBufferBinding, FramebufferState, IndexBufferBinding, VertexBufferBinding,
};
use ferropipe_components::enums::{BindFlags, ShaderType, TextureTarget};
use ferropipe_components::format::FormatKind;
use ferropipe_components::state::*;

use super::checks::{resolve_stage, slot_range};
use super::{BoundState, Context, SamplerViewHandle, SurfaceHandle};
use crate::caps;
use crate::error::{BindError, Error, ResourceError, Result};
use crate::screen::Resource;

/// What `set_framebuffer_state` takes: surfaces by handle.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FramebufferTemplate {
    /// Width of the rendered area in pixels.
    pub width: u32,
    /// Height of the rendered area in pixels.
    pub height: u32,
    /// Layers / samples of a framebuffer without attachments (0 = 1).
    pub layers: u32,
    /// Samples of a framebuffer without attachments (0 = 1).
    pub samples: u32,
    /// Colour buffers (at most 8); `None` leaves a slot unbound.
    pub cbufs: Vec<Option<SurfaceHandle>>,
    /// The depth/stencil surface; `None` leaves it unbound.
    pub zsbuf: Option<SurfaceHandle>,
}

/// One `set_vertex_buffers` slot (`struct pipe_vertex_buffer`).
#[derive(Clone, Copy, Debug, Default)]
pub struct VertexBuffer<'a> {
    /// `None` unbinds the slot.
    pub buffer: Option<&'a Resource>,
    /// Bytes between consecutive vertices (0 = every vertex reads the same
    /// element); at most `PIPE_CAP_MAX_VERTEX_ATTRIB_STRIDE`.
    pub stride: u32,
    /// Byte offset of vertex 0 in the buffer.
    pub buffer_offset: u32,
}

/// `set_index_buffer`'s argument.
#[derive(Clone, Copy, Debug)]
pub struct IndexBuffer<'a> {
    /// The index buffer.
    pub buffer: &'a Resource,
    /// 1, 2 or 4 bytes.
    pub index_size: u32,
    /// Byte offset of index 0.
    pub offset: u32,
}

/// `set_constant_buffer`'s argument (`struct pipe_constant_buffer`).
#[derive(Clone, Copy, Debug)]
pub enum ConstantBuffer<'a> {
    /// A range of a buffer resource, read when draws execute.
    Buffer {
        /// The buffer.
        resource: &'a Resource,
        /// Byte offset of the constants.
        offset: u32,
        /// Bytes visible to the shader.
        size: u32,
    },
    /// User constants: copied at `set_constant_buffer` time.
    User(&'a [u8]),
}

/// Checks that `r` is a buffer (the only target `call` accepts).
fn need_buffer(call: &'static str, field: &'static str, r: &Resource) -> Result<()> {
    if r.template().target != TextureTarget::Buffer {
        return Err(ResourceError::NotABuffer {
            call,
            field,
            target: r.template().target,
        }
        .into());
    }
    Ok(())
}

/// Constant-buffer slot arrays and user-constant buffers that executed
/// state blocks no longer need, for `set_constant_buffer` to fill instead
/// of allocating.
///
/// A constant buffer per draw (many_draws: 10,000 a flush) allocated two
/// buffers per call, a 528-byte slot array (copy-on-write: the previous
/// block holds the old one) and the user constants, and freed them all at
/// the flush, ~900 instructions of malloc and free per draw (glibc's
/// tcache holds 7 chunks per size, so the rest went through its bins).
/// Holding them costs nothing else: the arrays are emptied (no resource
/// stays referenced) and user constants are plain bytes.
#[derive(Default)]
pub(crate) struct ConstantSpares {
    /// Unshared slot arrays, every slot unbound.
    pub(crate) arrays: Vec<Arc<ConstantBufferSlots>>,
    /// Unshared user-constant buffers, all of one length.
    user: Vec<Arc<[u8]>>,
    /// The array put into a block in place of the one taken.
    empty: Option<Arc<ConstantBufferSlots>>,
}

impl ConstantSpares {
    /// Spares kept of each kind: enough for a flush that changes a
    /// stage's constants per draw 16,384 times (at most ~9 MB of arrays).
    const MAX: usize = 1 << 14;

    /// `data` in a reference-counted buffer: a spare of its length
    /// overwritten, or a new one.
    fn user_constants(&mut self, data: &[u8]) -> Arc<[u8]> {
        if let Some(mut spare) = self.user.pop() {
            if spare.len() == data.len()
                && let Some(bytes) = Arc::get_mut(&mut spare)
            {
                bytes.copy_from_slice(data);
                return spare;
            }
            // Another length: the draws changed their constants' size.
            self.user.clear();
        }
        Arc::from(data)
    }

    /// Takes the constant-buffer arrays of `block` (if only the block
    /// holds it and them) and their user constants as spares.
    pub(crate) fn harvest(&mut self, block: &mut Arc<StateBlock>) {
        let Some(block) = Arc::get_mut(block) else {
            return;
        };
        for stage in [&mut block.vs_resources, &mut block.fs_resources] {
            if self.arrays.len() >= Self::MAX {
                return;
            }
            let Some(slots) = Arc::get_mut(&mut stage.constant_buffers) else {
                continue;
            };
            // (Unbound slots are already `default()`: most of the 16.)
            let bound =
                |s: &&mut ConstantBufferBinding| s.buffer.is_some() || s.user_buffer.is_some();
            for slot in slots.iter_mut().filter(bound) {
                if let Some(mut user) = slot.user_buffer.take()
                    && self.user.len() < Self::MAX
                    && Arc::get_mut(&mut user).is_some()
                    && self.user.last().is_none_or(|u| u.len() == user.len())
                {
                    self.user.push(user);
                }
                *slot = ConstantBufferBinding::default();
            }
            let empty = self
                .empty
                .get_or_insert_with(|| Arc::new(Default::default()))
                .clone();
            self.arrays
                .push(std::mem::replace(&mut stage.constant_buffers, empty));
        }
    }
}

impl Context {
    /// `set_framebuffer_state`.  Colour surfaces need a colour format and
    /// `PIPE_BIND_RENDER_TARGET`, the depth/stencil surface a depth or
    /// stencil format and `PIPE_BIND_DEPTH_STENCIL` (screen.rst).  Executes
    /// recorded work first when the framebuffer changes.
    pub fn set_framebuffer_state(&mut self, fb: &FramebufferTemplate) -> Result<()> {
        self.alive("set_framebuffer_state")?;
        const CALL: &str = "set_framebuffer_state";
        if fb.cbufs.len() > MAX_COLOR_BUFS {
            return Err(BindError::TooManyColorBuffers {
                count: fb.cbufs.len(),
                limit: MAX_COLOR_BUFS,
            }
            .into());
        }
        let max = caps::MAX_TEXTURE_2D_SIZE;
        if fb.width > max || fb.height > max {
            return Err(BindError::FramebufferTooLarge {
                width: fb.width,
                height: fb.height,
                limit: max,
            }
            .into());
        }
        if fb.samples > 1 && fb.samples as usize != ferropipe_components::batch::MS_SAMPLES {
            return Err(Error::unsupported(
                CALL,
                format!("{}x multisampled framebuffer (4x only)", fb.samples),
            ));
        }
        let mut cbufs = Vec::with_capacity(fb.cbufs.len());
        for h in &fb.cbufs {
            let Some(h) = h else {
                cbufs.push(None);
                continue;
            };
            let s = self.get(CALL, "cbufs", *h)?.0.clone();
            if s.desc.format.desc().kind != FormatKind::Color {
                return Err(ResourceError::FormatKind {
                    call: CALL,
                    field: "cbufs",
                    format: s.desc.format,
                    expected: "colour",
                }
                .into());
            }
            if !s.resource.templ.bind.contains(BindFlags::RENDER_TARGET) {
                return Err(ResourceError::MissingBind {
                    call: CALL,
                    field: "cbufs",
                    bind: "PIPE_BIND_RENDER_TARGET",
                }
                .into());
            }
            cbufs.push(Some(s));
        }
        let zsbuf = match fb.zsbuf {
            Some(h) => {
                let s = self.get(CALL, "zsbuf", h)?.0.clone();
                if s.desc.format.desc().kind == FormatKind::Color {
                    return Err(ResourceError::FormatKind {
                        call: CALL,
                        field: "zsbuf",
                        format: s.desc.format,
                        expected: "depth/stencil",
                    }
                    .into());
                }
                if !s.resource.templ.bind.contains(BindFlags::DEPTH_STENCIL) {
                    return Err(ResourceError::MissingBind {
                        call: CALL,
                        field: "zsbuf",
                        bind: "PIPE_BIND_DEPTH_STENCIL",
                    }
                    .into());
                }
                Some(s)
            }
            None => None,
        };
        let state = FramebufferState {
            width: fb.width,
            height: fb.height,
            layers: fb.layers,
            samples: fb.samples,
            cbufs,
            zsbuf,
        };
        if !self.bound().framebuffer.same_as(&state) {
            self.flush_recorded()?;
            self.bound_mut().framebuffer = Arc::new(state);
        }
        Ok(())
    }

    /// `set_vertex_buffers`: slots `start_slot..start_slot + buffers.len()`.
    pub fn set_vertex_buffers(&mut self, start_slot: u32, buffers: &[VertexBuffer]) -> Result<()> {
        self.alive("set_vertex_buffers")?;
        const CALL: &str = "set_vertex_buffers";
        slot_range(
            CALL,
            "start_slot",
            start_slot,
            buffers.len(),
            MAX_VERTEX_BUFFERS,
        )?;
        let max_stride = caps::get_param(ferropipe_components::Cap::MaxVertexAttribStride) as u32;
        for b in buffers {
            if let Some(r) = b.buffer {
                need_buffer(CALL, "buffer", r)?;
            }
            if b.stride > max_stride {
                return Err(BindError::StrideTooLarge {
                    stride: b.stride,
                    limit: max_stride,
                }
                .into());
            }
        }
        let mut bound = self.bound_mut();
        let slots = Arc::make_mut(&mut bound.vertex_buffers);
        for (i, b) in buffers.iter().enumerate() {
            slots[start_slot as usize + i] = match b.buffer {
                Some(r) => VertexBufferBinding {
                    buffer: Some(r.shared().clone()),
                    stride: b.stride,
                    buffer_offset: b.buffer_offset,
                },
                None => VertexBufferBinding::default(),
            };
        }
        Ok(())
    }

    /// `set_index_buffer`; `None` unbinds.
    pub fn set_index_buffer(&mut self, ib: Option<IndexBuffer>) -> Result<()> {
        self.alive("set_index_buffer")?;
        const CALL: &str = "set_index_buffer";
        let binding = match ib {
            Some(ib) => {
                need_buffer(CALL, "buffer", ib.buffer)?;
                if !matches!(ib.index_size, 1 | 2 | 4) {
                    return Err(BindError::IndexSize {
                        index_size: ib.index_size,
                    }
                    .into());
                }
                IndexBufferBinding {
                    buffer: Some(ib.buffer.shared().clone()),
                    index_size: ib.index_size,
                    offset: ib.offset,
                }
            }
            None => IndexBufferBinding::default(),
        };
        self.bound_mut().index_buffer = binding;
        Ok(())
    }

    /// `set_constant_buffer`: binds constant buffer `index` of `shader`;
    /// `None` unbinds.  User constants are copied now.  A buffer range must
    /// lie inside the buffer.
    pub fn set_constant_buffer(
        &mut self,
        shader: ShaderType,
        index: u32,
        cb: Option<ConstantBuffer>,
    ) -> Result<()> {
        self.alive("set_constant_buffer")?;
        const CALL: &str = "set_constant_buffer";
        let stage = resolve_stage(CALL, shader)?;
        slot_range(CALL, "index", index, 1, MAX_CONSTANT_BUFFERS)?;
        let binding = match cb {
            None => ConstantBufferBinding::default(),
            Some(ConstantBuffer::Buffer {
                resource,
                offset,
                size,
            }) => {
                need_buffer(CALL, "buffer", resource)?;
                let len = u64::from(resource.template().width0);
                if u64::from(offset) + u64::from(size) > len {
                    return Err(ResourceError::RangePastEnd {
                        call: CALL,
                        field: "buffer_offset/buffer_size",
                        offset: offset.into(),
                        size: size.into(),
                        buffer_size: len,
                    }
                    .into());
                }
                ConstantBufferBinding {
                    buffer: Some(resource.shared().clone()),
                    buffer_offset: offset,
                    buffer_size: size,
                    user_buffer: None,
                }
            }
            Some(ConstantBuffer::User(data)) => {
                if data.len() > caps::MAX_CONST_BUFFER_SIZE as usize {
                    return Err(BindError::UserConstantsTooLarge {
                        len: data.len(),
                        limit: caps::MAX_CONST_BUFFER_SIZE,
                    }
                    .into());
                }
                ConstantBufferBinding {
                    buffer: None,
                    buffer_offset: 0,
                    buffer_size: data.len() as u32,
                    user_buffer: Some(self.constant_spares.user_constants(data)),
                }
            }
        };
        let mut spares = std::mem::take(&mut self.constant_spares.arrays);
        self.stage_slots_mut(stage)
            .constant_buffers_from(&mut spares)[index as usize] = binding;
        self.constant_spares.arrays = spares;
        Ok(())
    }

    /// `set_sampler_views`: slots `start_slot..start_slot + views.len()` of
    /// `shader`; `None` entries unbind.
    pub fn set_sampler_views(
        &mut self,
        shader: ShaderType,
        start_slot: u32,
        views: &[Option<SamplerViewHandle>],
    ) -> Result<()> {
        self.alive("set_sampler_views")?;
        const CALL: &str = "set_sampler_views";
        let stage = resolve_stage(CALL, shader)?;
        slot_range(
            CALL,
            "start_slot",
            start_slot,
            views.len(),
            MAX_SAMPLER_VIEWS,
        )?;
        let mut refs = Vec::with_capacity(views.len());
        for v in views {
            refs.push(match v {
                Some(h) => Some(self.get(CALL, "views", *h)?.0.clone()),
                None => None,
            });
        }
        let slots = self.stage_slots_mut(stage).sampler_views();
        for (i, v) in refs.into_iter().enumerate() {
            slots[start_slot as usize + i] = v;
        }
        Ok(())
    }

    /// `set_blend_color`.
    pub fn set_blend_color(&mut self, color: &BlendColor) -> Result<()> {
        self.alive("set_blend_color")?;
        if color.color.iter().any(|c| c.is_nan()) {
            return Err(BindError::Nan {
                call: "set_blend_color",
                field: "color",
            }
            .into());
        }
        self.bound_mut().blend_color = *color;
        Ok(())
    }

    /// `set_stencil_ref`.
    pub fn set_stencil_ref(&mut self, stencil_ref: StencilRef) -> Result<()> {
        self.alive("set_stencil_ref")?;
        self.bound_mut().stencil_ref = stencil_ref;
        Ok(())
    }

    /// `set_sample_mask`.
    pub fn set_sample_mask(&mut self, sample_mask: u32) -> Result<()> {
        self.alive("set_sample_mask")?;
        self.bound_mut().sample_mask = sample_mask;
        Ok(())
    }

    /// `set_min_samples` (at least 1).
    pub fn set_min_samples(&mut self, min_samples: u32) -> Result<()> {
        self.alive("set_min_samples")?;
        if min_samples == 0 || min_samples > 32 {
            return Err(BindError::MinSamples { min_samples }.into());
        }
        self.bound_mut().min_samples = min_samples;
        Ok(())
    }

    /// `set_clip_state`: the user clip planes.
    pub fn set_clip_state(&mut self, clip: &ClipState) -> Result<()> {
        self.alive("set_clip_state")?;
        if clip.ucp.iter().flatten().any(|v| !v.is_finite()) {
            return Err(BindError::NotFinite {
                call: "set_clip_state",
                field: "ucp",
            }
            .into());
        }
        self.bound_mut().clip = *clip;
        Ok(())
    }

    /// `set_polygon_stipple`.
    pub fn set_polygon_stipple(&mut self, stipple: &PolyStipple) -> Result<()> {
        self.alive("set_polygon_stipple")?;
        self.bound_mut().poly_stipple = *stipple;
        Ok(())
    }

    /// `set_scissor_states`: slots `start_slot..`.  A scissor whose max is
    /// not above its min is empty (nothing passes).
    pub fn set_scissor_states(&mut self, start_slot: u32, scissors: &[ScissorState]) -> Result<()> {
        self.alive("set_scissor_states")?;
        const CALL: &str = "set_scissor_states";
        slot_range(
            CALL,
            "start_slot",
            start_slot,
            scissors.len(),
            MAX_VIEWPORTS,
        )?;
        let mut bound = self.bound_mut();
        Arc::make_mut(&mut bound.scissors)[start_slot as usize..][..scissors.len()]
            .copy_from_slice(scissors);
        Ok(())
    }

    /// `set_viewport_states`: slots `start_slot..`; values must be finite.
    pub fn set_viewport_states(
        &mut self,
        start_slot: u32,
        viewports: &[ViewportState],
    ) -> Result<()> {
        self.alive("set_viewport_states")?;
        const CALL: &str = "set_viewport_states";
        slot_range(
            CALL,
            "start_slot",
            start_slot,
            viewports.len(),
            MAX_VIEWPORTS,
        )?;
        for v in viewports {
            if v.scale.iter().chain(&v.translate).any(|c| !c.is_finite()) {
                return Err(BindError::NotFinite {
                    call: CALL,
                    field: "viewports",
                }
                .into());
            }
        }
        let mut bound = self.bound_mut();
        Arc::make_mut(&mut bound.viewports)[start_slot as usize..][..viewports.len()]
            .copy_from_slice(viewports);
        Ok(())
    }

    /// Replaces the whole bound state (the replayer's `--time` mode restores
    /// the state of `timing_begin` this way).  Executes recorded work first
    /// when the framebuffer differs, as `set_framebuffer_state` does.
    pub fn restore_bound_state(&mut self, state: BoundState) -> Result<()> {
        self.alive("restore_bound_state")?;
        if !self.bound().framebuffer.same_as(&state.framebuffer) {
            self.flush_recorded()?;
        }
        *self.bound_mut() = state;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::setup;
    use ferropipe_components::format::Format;
    use ferropipe_components::resource::ResourceTemplate;
    use ferropipe_components::view::SurfaceTemplate;

    #[test]
    fn framebuffer_checks_formats_and_binds() {
        let (s, mut c) = setup();
        let rt = s
            .resource_create(&ResourceTemplate::texture_2d(
                Format::R8G8B8A8_UNORM,
                16,
                8,
                BindFlags::RENDER_TARGET,
            ))
            .unwrap();
        let tex = s
            .resource_create(&ResourceTemplate::texture_2d(
                Format::R8G8B8A8_UNORM,
                16,
                8,
                BindFlags::SAMPLER_VIEW,
            ))
            .unwrap();
        let zs = s
            .resource_create(&ResourceTemplate::texture_2d(
                Format::Z24_UNORM_S8_UINT,
                16,
                8,
                BindFlags::DEPTH_STENCIL,
            ))
            .unwrap();
        let rt_s = c
            .create_surface(&rt, &SurfaceTemplate::new(Format::R8G8B8A8_UNORM))
            .unwrap();
        // A surface needs the matching bind flag on its resource.
        assert!(matches!(
            c.create_surface(&tex, &SurfaceTemplate::new(Format::R8G8B8A8_UNORM)),
            Err(Error::Resource(ResourceError::MissingBind {
                call: "create_surface",
                bind: "PIPE_BIND_RENDER_TARGET",
                ..
            }))
        ));
        let zs_s = c
            .create_surface(&zs, &SurfaceTemplate::new(Format::Z24_UNORM_S8_UINT))
            .unwrap();
        let fb = |cbufs: Vec<Option<SurfaceHandle>>, zsbuf| FramebufferTemplate {
            width: 16,
            height: 8,
            cbufs,
            zsbuf,
            ..Default::default()
        };
        c.set_framebuffer_state(&fb(vec![Some(rt_s), None], Some(zs_s)))
            .unwrap();
        let b = c.bound();
        assert_eq!(b.framebuffer.cbufs.len(), 2);
        assert_eq!(b.framebuffer.cbuf(0).unwrap().desc.width, 16);
        assert!(b.framebuffer.zsbuf.is_some());
        let err = |c: &mut Context, bad| c.set_framebuffer_state(&bad).unwrap_err();
        assert!(matches!(
            err(&mut c, fb(vec![Some(zs_s)], None)),
            Error::Resource(ResourceError::FormatKind {
                field: "cbufs",
                format: Format::Z24_UNORM_S8_UINT,
                expected: "colour",
                ..
            })
        ));
        assert!(matches!(
            err(&mut c, fb(vec![], Some(rt_s))),
            Error::Resource(ResourceError::FormatKind { field: "zsbuf", .. })
        ));
        assert_eq!(
            err(&mut c, fb(vec![None; 9], None)),
            Error::Bind(BindError::TooManyColorBuffers { count: 9, limit: 8 })
        );
        // Surfaces keep their resource alive after the host drops it.
        drop(rt);
        assert_eq!(s.resource_usage().0, 3);
    }

    #[test]
    fn buffers_and_non_cso_state() {
        let (s, mut c) = setup();
        let vb = s
            .resource_create(&ResourceTemplate::buffer(64, BindFlags::VERTEX_BUFFER))
            .unwrap();
        let tex = s
            .resource_create(&ResourceTemplate::texture_2d(
                Format::R8_UNORM,
                4,
                4,
                BindFlags::SAMPLER_VIEW,
            ))
            .unwrap();
        c.set_vertex_buffers(
            1,
            &[VertexBuffer {
                buffer: Some(&vb),
                stride: 16,
                buffer_offset: 4,
            }],
        )
        .unwrap();
        assert_eq!(c.bound().vertex_buffers[1].stride, 16);
        assert!(c.bound().vertex_buffers[0].buffer.is_none());
        assert!(
            c.set_vertex_buffers(
                0,
                &[VertexBuffer {
                    buffer: Some(&tex),
                    ..Default::default()
                }]
            )
            .is_err()
        );
        assert_eq!(
            c.set_vertex_buffers(
                0,
                &[VertexBuffer {
                    buffer: Some(&vb),
                    stride: 4096,
                    buffer_offset: 0
                }]
            ),
            Err(Error::Bind(BindError::StrideTooLarge {
                stride: 4096,
                limit: 2048
            }))
        );
        assert_eq!(
            c.set_vertex_buffers(32, &[VertexBuffer::default()]),
            Err(Error::Bind(BindError::SlotOutOfRange {
                call: "set_vertex_buffers",
                field: "start_slot",
                start: 32,
                count: 1,
                limit: 32
            }))
        );
        c.set_index_buffer(Some(IndexBuffer {
            buffer: &vb,
            index_size: 2,
            offset: 0,
        }))
        .unwrap();
        assert_eq!(
            c.set_index_buffer(Some(IndexBuffer {
                buffer: &vb,
                index_size: 3,
                offset: 0
            })),
            Err(Error::Bind(BindError::IndexSize { index_size: 3 }))
        );
        // User constants are copied at set time.
        let mut data = vec![1u8, 2, 3, 4];
        c.set_constant_buffer(ShaderType::Fragment, 3, Some(ConstantBuffer::User(&data)))
            .unwrap();
        data[0] = 9;
        let cb = &c.bound().constant_buffers[1][3];
        assert_eq!(&cb.user_buffer.as_ref().unwrap()[..], &[1, 2, 3, 4]);
        assert_eq!(
            c.set_constant_buffer(
                ShaderType::Vertex,
                0,
                Some(ConstantBuffer::Buffer {
                    resource: &vb,
                    offset: 32,
                    size: 64
                })
            ),
            Err(Error::Resource(ResourceError::RangePastEnd {
                call: "set_constant_buffer",
                field: "buffer_offset/buffer_size",
                offset: 32,
                size: 64,
                buffer_size: 64
            }))
        );
        assert!(c.set_constant_buffer(ShaderType::Vertex, 16, None).is_err());
        assert!(
            c.set_constant_buffer(ShaderType::Geometry, 0, None)
                .unwrap_err()
                .is_unsupported()
        );
        c.set_stencil_ref(StencilRef { ref_value: [3, 4] }).unwrap();
        c.set_sample_mask(5).unwrap();
        assert_eq!(
            c.set_min_samples(0),
            Err(Error::Bind(BindError::MinSamples { min_samples: 0 }))
        );
        c.set_scissor_states(
            15,
            &[ScissorState {
                minx: 1,
                miny: 2,
                maxx: 3,
                maxy: 4,
            }],
        )
        .unwrap();
        assert!(
            c.set_scissor_states(15, &[ScissorState::default(); 2])
                .is_err()
        );
        assert!(
            c.set_viewport_states(
                0,
                &[ViewportState {
                    scale: [f32::INFINITY, 1.0, 1.0],
                    translate: [0.0; 3]
                }]
            )
            .is_err()
        );
        let b = c.bound();
        assert_eq!(b.stencil_ref.ref_value, [3, 4]);
        assert_eq!(b.sample_mask, 5);
        assert_eq!(b.scissors[15].maxy, 4);
    }
}
