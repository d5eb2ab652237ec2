//! The demo's Gallium plumbing: render targets in host memory, mesh
//! buffers, the per-frame state, the resolve and the readback.
//!
//! Everything the demo asks of ferropipe goes through this module, in
//! Gallium's own terms (`set_framebuffer_state`, `draw_vbo`, `blit`, ...),
//! so a reader can follow one frame from top to bottom here.  Façade calls
//! that ferropipe does not offer yet come back as
//! `Error::Unsupported { call, .. }` naming the call,
//! which the window and the headless mode show as they would any other
//! unsupported feature: the demo never shows a picture ferropipe did not
//! render.

use std::ptr::NonNull;

use ferropipe::DrawInfo;
use ferropipe::Format;
use ferropipe::ResourceTemplate;
use ferropipe::SurfaceTemplate;
use ferropipe::{BindFlags, ClearFlags, Func, PrimType, ShaderType};
use ferropipe::{
    BlendHandle, ConstantBuffer, Context, DsaHandle, Error, FramebufferTemplate, FsHandle,
    IndexBuffer, RasterizerHandle, Resource, Result, Screen, SurfaceHandle, VertexBuffer,
    VertexElementsHandle, VsHandle,
};
use ferropipe::{
    BlendState, ColorUnion, DepthStencilAlphaState, RasterizerState, ScissorState, VertexElement,
    ViewportState,
};
use ferropipe::{FragmentShaderRef, VertexShaderRef};

use crate::mesh::Mesh;

/// One 64-byte line: host images start on a cache line like ferropipe's own
/// storage, so tile writes into them are as fast.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line([u8; 64]);

/// RGBA8 pixels owned by the demo, which ferropipe renders into through
/// `resource_from_user_memory`: the finished frame needs no copy out of the
/// driver before it is uploaded to the window.
pub struct HostImage {
    lines: Box<[Line]>,
    width: u32,
    height: u32,
}

impl HostImage {
    /// A zeroed image, or `None` when the size overflows.
    pub fn new(width: u32, height: u32) -> Option<Self> {
        let len = (width as usize)
            .checked_mul(height as usize)?
            .checked_mul(4)?;
        Some(HostImage {
            lines: vec![Line([0; 64]); len.div_ceil(64).max(1)].into_boxed_slice(),
            width,
            height,
        })
    }

    pub fn width(&self) -> u32 {
        self.width
    }

    pub fn height(&self) -> u32 {
        self.height
    }

    /// Bytes of pixel data (`width * height * 4`, rows top to bottom).
    pub fn len(&self) -> usize {
        self.width as usize * self.height as usize * 4
    }

    /// Whether the image has no pixels.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The pixels.  Only meaningful once the frame's fence was waited on.
    pub fn as_bytes(&self) -> &[u8] {
        // SAFETY: `lines` is `lines.len() * 64 >= len()` initialised bytes
        // (Line is plain bytes, align 64 >= 1), borrowed immutably for the
        // returned lifetime.
        unsafe { std::slice::from_raw_parts(self.lines.as_ptr().cast::<u8>(), self.len()) }
    }

    fn ptr(&mut self) -> NonNull<u8> {
        NonNull::from(&mut self.lines[..]).cast()
    }
}

/// Render targets for one frame size and sample count.
///
/// `display` is a single-sampled RGBA8 resource backed by [`HostImage`];
/// with MSAA the scene renders into `msaa` and is resolved into `display`
/// by a `blit`.  Field order matters: the resources drop before the host
/// memory they may point into.
pub struct Targets {
    /// The surface draws go to: `msaa`'s with MSAA, `display`'s without.
    pub color_surface: SurfaceHandle,
    pub depth_surface: SurfaceHandle,
    pub display: Resource,
    pub msaa: Option<Resource>,
    pub depth: Resource,
    pub width: u32,
    pub height: u32,
    pub samples: u32,
    image: HostImage,
}

impl Targets {
    /// Creates the targets.  The host image must outlive every reference
    /// ferropipe holds to `display`; [`Targets::release`] drops them in the
    /// safe order.
    pub fn new(
        screen: &Screen,
        ctx: &mut Context,
        width: u32,
        height: u32,
        samples: u32,
    ) -> Result<Self> {
        const CALL: &str = "Targets::new";
        let mut image = HostImage::new(width, height).ok_or(Error::OutOfMemory {
            call: CALL,
            bytes: u64::MAX,
        })?;
        let bind = BindFlags::RENDER_TARGET | BindFlags::SAMPLER_VIEW;
        let templ = ResourceTemplate::texture_2d(Format::R8G8B8A8_UNORM, width, height, bind);
        let (ptr, len) = (image.ptr(), image.len());
        // SAFETY: `image` lives in the returned `Targets`, which drops (or
        // `release`s) `display` before `image`, and the renderer only reads
        // the pixels after waiting on the frame's fence.
        let display = unsafe { screen.resource_from_user_memory(&templ, ptr, len)? };
        let msaa = if samples > 1 {
            Some(screen.resource_create(&ResourceTemplate {
                nr_samples: samples,
                ..ResourceTemplate::texture_2d(
                    Format::R8G8B8A8_UNORM,
                    width,
                    height,
                    BindFlags::RENDER_TARGET,
                )
            })?)
        } else {
            None
        };
        let depth = screen.resource_create(&ResourceTemplate {
            nr_samples: if samples > 1 { samples } else { 0 },
            ..ResourceTemplate::texture_2d(
                Format::Z32_FLOAT,
                width,
                height,
                BindFlags::DEPTH_STENCIL,
            )
        })?;
        let color_surface = ctx.create_surface(
            msaa.as_ref().unwrap_or(&display),
            &SurfaceTemplate::new(Format::R8G8B8A8_UNORM),
        )?;
        let depth_surface = ctx.create_surface(&depth, &SurfaceTemplate::new(Format::Z32_FLOAT))?;
        Ok(Targets {
            color_surface,
            depth_surface,
            display,
            msaa,
            depth,
            width,
            height,
            samples,
            image,
        })
    }

    /// The finished frame (valid after [`end_frame`]).
    pub fn pixels(&self) -> &[u8] {
        self.image.as_bytes()
    }

    /// Unbinds the targets from `ctx` and drops them.
    pub fn release(self, ctx: &mut Context) {
        // The context may still reference the surfaces through its
        // framebuffer state; unbinding and flushing lets go of them before
        // the host memory is freed.
        let _ = ctx.set_framebuffer_state(&FramebufferTemplate::default());
        let _ = ctx.surface_destroy(self.color_surface);
        let _ = ctx.surface_destroy(self.depth_surface);
        let _ = ctx.flush();
        drop(self);
    }
}

/// Everything a frame binds before the scene draws.
pub struct FrameSetup<'a> {
    pub rasterizer: &'a RasterizerState,
    pub scissor: Option<ScissorState>,
    pub clear_color: [f32; 4],
}

/// Binds the framebuffer, viewport (y flipped so row 0 is the top of the
/// picture), rasterizer and scissor, and clears colour and depth.
pub fn begin_frame(
    ctx: &mut Context,
    targets: &Targets,
    cache: &mut StateCache,
    setup: &FrameSetup<'_>,
) -> Result<()> {
    ctx.set_framebuffer_state(&FramebufferTemplate {
        width: targets.width,
        height: targets.height,
        layers: 1,
        samples: targets.samples,
        cbufs: vec![Some(targets.color_surface)],
        zsbuf: Some(targets.depth_surface),
    })?;
    let (w, h) = (targets.width as f32, targets.height as f32);
    ctx.set_viewport_states(
        0,
        &[ViewportState {
            // Negative y scale: NDC +y is row 0, so the picture is upright
            // in memory (top row first) like a window's.
            scale: [w * 0.5, -h * 0.5, 1.0],
            translate: [w * 0.5, h * 0.5, 0.0],
        }],
    )?;
    if let Some(s) = setup.scissor {
        ctx.set_scissor_states(0, &[s])?;
    }
    let rasterizer = cache.rasterizer(ctx, setup.rasterizer)?;
    ctx.bind_rasterizer_state(Some(rasterizer))?;
    let dsa = cache.depth_test(ctx)?;
    ctx.bind_depth_stencil_alpha_state(Some(dsa))?;
    let blend = cache.opaque_blend(ctx)?;
    ctx.bind_blend_state(Some(blend))?;
    ctx.clear(
        ClearFlags::COLOR0 | ClearFlags::DEPTH,
        &ColorUnion::float(setup.clear_color),
        1.0,
        0,
    )
}

/// CSOs the frame setup reuses: a rasterizer per distinct state (the side
/// panel flips between a handful), one depth-test and one opaque blend
/// state.  Gallium CSOs are meant to be created once and bound many times.
#[derive(Default)]
pub struct StateCache {
    rasterizers: Vec<(RasterizerState, RasterizerHandle)>,
    dsa: Option<DsaHandle>,
    blend: Option<BlendHandle>,
}

impl StateCache {
    /// Keeps at most this many rasterizer CSOs (oldest deleted first).
    const MAX_RASTERIZERS: usize = 16;

    fn rasterizer(
        &mut self,
        ctx: &mut Context,
        state: &RasterizerState,
    ) -> Result<RasterizerHandle> {
        if let Some((_, h)) = self.rasterizers.iter().find(|(s, _)| s == state) {
            return Ok(*h);
        }
        let h = ctx.create_rasterizer_state(state)?;
        if self.rasterizers.len() >= Self::MAX_RASTERIZERS {
            let (_, old) = self.rasterizers.remove(0);
            let _ = ctx.delete_rasterizer_state(old);
        }
        self.rasterizers.push((*state, h));
        Ok(h)
    }

    fn depth_test(&mut self, ctx: &mut Context) -> Result<DsaHandle> {
        if let Some(h) = self.dsa {
            return Ok(h);
        }
        let h = ctx.create_depth_stencil_alpha_state(&DepthStencilAlphaState {
            depth_enabled: true,
            depth_writemask: true,
            depth_func: Func::Less,
            ..Default::default()
        })?;
        self.dsa = Some(h);
        Ok(h)
    }

    fn opaque_blend(&mut self, ctx: &mut Context) -> Result<BlendHandle> {
        if let Some(h) = self.blend {
            return Ok(h);
        }
        let mut state = BlendState::default();
        state.rt[0].colormask = 0xf;
        let h = ctx.create_blend_state(&state)?;
        self.blend = Some(h);
        Ok(h)
    }
}

/// Resolves MSAA into the display target, flushes, and waits for the
/// fence: afterwards [`Targets::pixels`] is the frame.
pub fn end_frame(ctx: &mut Context, targets: &Targets) -> Result<()> {
    if let Some(msaa) = &targets.msaa {
        // Resolve: the 4x target averaged into the displayed image.
        let whole = ferropipe::PipeBox::new_2d(0, 0, targets.width as i32, targets.height as i32);
        let mut info = ferropipe::BlitInfo::new(
            ferropipe::BlitSide::new(&targets.display, 0, whole),
            ferropipe::BlitSide::new(msaa, 0, whole),
        );
        info.mask = ferropipe::BlitMask::RGBA;
        ctx.blit(&info)?;
    }
    ctx.flush()?.wait();
    Ok(())
}

/// A mesh's vertex and index buffers.
pub struct MeshBuffers {
    pub vertices: Resource,
    pub indices: Resource,
    pub index_count: u32,
}

impl MeshBuffers {
    /// Creates and fills the buffers.
    pub fn upload(screen: &Screen, ctx: &mut Context, mesh: &Mesh) -> Result<Self> {
        let vertices =
            buffer_with_data(screen, ctx, &mesh.vertex_bytes(), BindFlags::VERTEX_BUFFER)?;
        let indices = buffer_with_data(screen, ctx, &mesh.index_bytes(), BindFlags::INDEX_BUFFER)?;
        Ok(MeshBuffers {
            vertices,
            indices,
            index_count: mesh.indices.len() as u32,
        })
    }
}

/// A buffer resource holding `data`.
pub fn buffer_with_data(
    screen: &Screen,
    ctx: &mut Context,
    data: &[u8],
    bind: BindFlags,
) -> Result<Resource> {
    let size = u32::try_from(data.len().max(1))
        .map_err(|_| Error::invalid("buffer_with_data", "data", "larger than 4 GiB"))?;
    let buffer = screen.resource_create(&ResourceTemplate::buffer(size, bind))?;
    ctx.buffer_subdata(&buffer, 0, data)?;
    Ok(buffer)
}

/// Sets user constants for `shader`'s constant buffer 0.
pub fn set_constants(ctx: &mut Context, shader: ShaderType, bytes: &[u8]) -> Result<()> {
    ctx.set_constant_buffer(shader, 0, Some(ConstantBuffer::User(bytes)))
}

/// A vertex and a fragment shader and the vertex layout they read.
pub struct Program {
    pub vs: VsHandle,
    pub fs: FsHandle,
    pub elements: VertexElementsHandle,
}

impl Program {
    /// Creates the shader CSOs (Rust-native shaders) and the vertex
    /// elements CSO.
    pub fn new(
        ctx: &mut Context,
        vs: VertexShaderRef,
        fs: FragmentShaderRef,
        elements: &[VertexElement],
    ) -> Result<Self> {
        Ok(Program {
            vs: ctx.create_vs_state_native(vs)?,
            fs: ctx.create_fs_state_native(fs)?,
            elements: ctx.create_vertex_elements_state(elements)?,
        })
    }

    /// Binds the shaders and the vertex elements.
    pub fn bind(&self, ctx: &mut Context) -> Result<()> {
        ctx.bind_vs_state(Some(self.vs))?;
        ctx.bind_fs_state(Some(self.fs))?;
        ctx.bind_vertex_elements_state(Some(self.elements))
    }

    /// Deletes the CSOs.
    pub fn delete(self, ctx: &mut Context) {
        let _ = ctx.delete_vs_state(self.vs);
        let _ = ctx.delete_fs_state(self.fs);
        let _ = ctx.delete_vertex_elements_state(self.elements);
    }
}

/// A float vertex element of `components` (1..=4) at `offset` in buffer
/// `buffer`, advancing per instance when `per_instance`.
pub fn float_element(
    buffer: u32,
    offset: u32,
    components: u32,
    per_instance: bool,
) -> VertexElement {
    VertexElement {
        src_offset: offset,
        vertex_buffer_index: buffer,
        src_format: match components {
            1 => Format::R32_FLOAT,
            2 => Format::R32G32_FLOAT,
            3 => Format::R32G32B32_FLOAT,
            _ => Format::R32G32B32A32_FLOAT,
        },
        instance_divisor: per_instance as u32,
    }
}

/// Binds vertex buffers from slot 0: `(buffer, stride)` each.
pub fn set_vertex_buffers(ctx: &mut Context, buffers: &[(&Resource, u32)]) -> Result<()> {
    let slots: Vec<VertexBuffer<'_>> = buffers
        .iter()
        .map(|&(buffer, stride)| VertexBuffer {
            buffer: Some(buffer),
            stride,
            buffer_offset: 0,
        })
        .collect();
    ctx.set_vertex_buffers(0, &slots)
}

/// Binds a u32 index buffer.
pub fn set_index_buffer(ctx: &mut Context, buffer: &Resource) -> Result<()> {
    ctx.set_index_buffer(Some(IndexBuffer {
        buffer,
        index_size: 4,
        offset: 0,
    }))
}

/// Draws `count` u32 indices as triangles, `instances` times.
pub fn draw_indexed(ctx: &mut Context, count: u32, instances: u32) -> Result<()> {
    ctx.draw_vbo(&DrawInfo {
        mode: PrimType::Triangles,
        count,
        indexed: true,
        instance_count: instances,
        ..DrawInfo::default()
    })
}
