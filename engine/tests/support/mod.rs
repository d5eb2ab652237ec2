//! Shared set-up of the API tests (`engine/tests/*.rs`, `tests/stress.rs`):
//! a context rendering to one RGBA8 target, pass-through Rust-native
//! shaders and the vertex layout they read.

#![allow(dead_code)] // each test crate uses its part

use std::sync::Arc;

use ferropipe::*;
use ferropipe::{
    BindFlags, BlendState, Context, DepthStencilAlphaState, Format, FramebufferTemplate, PipeBox,
    Resource, ResourceTemplate, Screen, ShaderType, SurfaceTemplate, TransferFlags, VertexElement,
    ViewportState,
};

/// Vertex shader: element 0 to the position (output 0), element 1 to
/// GENERIC 0 (output 1).
pub struct PassVs(ShaderInfo);
/// Fragment shader: GENERIC 0 to colour 0.
pub struct PassFs(ShaderInfo);

/// The pass-through shader pair.
pub fn pass_shaders() -> (Arc<PassVs>, Arc<PassFs>) {
    let vs = ShaderInfo::new(ShaderType::Vertex)
        .with_input(IoSlot::new(Semantic::Generic(0), 0))
        .with_input(IoSlot::new(Semantic::Generic(1), 1))
        .with_output(IoSlot::new(Semantic::Position, 0))
        .with_output(IoSlot::new(Semantic::Generic(0), 0));
    let fs = ShaderInfo::new(ShaderType::Fragment)
        .with_input(IoSlot::new(Semantic::Generic(0), 0))
        .with_output(IoSlot::new(Semantic::Color(0), 0));
    (Arc::new(PassVs(vs)), Arc::new(PassFs(fs)))
}

impl VertexShader for PassVs {
    fn info(&self) -> &ShaderInfo {
        &self.0
    }
    fn run(&self, _: &ShaderResources<'_>, io: &mut VertexIo<'_>) {
        let n = 8 * io.groups;
        io.outputs[..n].copy_from_slice(&io.inputs[..n]);
    }
}

impl FragmentShader for PassFs {
    fn info(&self) -> &ShaderInfo {
        &self.0
    }
    fn run(&self, _: &ShaderResources<'_>, io: &mut FragmentIo<'_>) {
        let n = 4 * io.groups;
        io.outputs[..n].copy_from_slice(&io.inputs[..n]);
    }
}

/// Binds `blend` and a default (all tests off) depth/stencil/alpha state.
pub fn bind_blend_and_default_dsa(ctx: &mut Context, blend: &BlendState) {
    let b = ctx.create_blend_state(blend).unwrap();
    ctx.bind_blend_state(Some(b)).unwrap();
    let d = ctx
        .create_depth_stencil_alpha_state(&DepthStencilAlphaState::default())
        .unwrap();
    ctx.bind_depth_stencil_alpha_state(Some(d)).unwrap();
}

/// Binds the layout the pass-through VS reads: two `R32G32B32A32_FLOAT`
/// elements of vertex buffer 0, at bytes 0 and 16 (a 32-byte vertex).
pub fn bind_vec4_pair_elements(ctx: &mut Context) {
    let el = |off| VertexElement {
        src_offset: off,
        vertex_buffer_index: 0,
        src_format: Format::R32G32B32A32_FLOAT,
        instance_divisor: 0,
    };
    let ve = ctx.create_vertex_elements_state(&[el(0), el(16)]).unwrap();
    ctx.bind_vertex_elements_state(Some(ve)).unwrap();
}

/// Creates a `w` x `h` `R8G8B8A8_UNORM` render target (and a depth/stencil
/// buffer in `depth`, if given), binds them as `ctx`'s framebuffer and
/// sets a viewport covering it (NDC -1..1 to the whole target, depth
/// 0..1).  Returns the colour and depth resources.
pub fn bind_rgba8_target(
    screen: &Screen,
    ctx: &mut Context,
    w: u32,
    h: u32,
    depth: Option<Format>,
) -> (Resource, Option<Resource>) {
    let create = |format, bind| {
        screen
            .resource_create(&ResourceTemplate::texture_2d(format, w, h, bind))
            .unwrap()
    };
    let rt = create(Format::R8G8B8A8_UNORM, BindFlags::RENDER_TARGET);
    let zs = depth.map(|f| create(f, BindFlags::DEPTH_STENCIL));
    let cbuf = ctx
        .create_surface(&rt, &SurfaceTemplate::new(Format::R8G8B8A8_UNORM))
        .unwrap();
    let zsbuf = zs.as_ref().map(|zs| {
        ctx.create_surface(zs, &SurfaceTemplate::new(zs.template().format))
            .unwrap()
    });
    ctx.set_framebuffer_state(&FramebufferTemplate {
        width: w,
        height: h,
        cbufs: vec![Some(cbuf)],
        zsbuf,
        ..Default::default()
    })
    .unwrap();
    let half = [w as f32 / 2.0, h as f32 / 2.0, 0.5];
    ctx.set_viewport_states(
        0,
        &[ViewportState {
            scale: half,
            translate: half,
        }],
    )
    .unwrap();
    (rt, zs)
}

/// Creates and binds the pass-through shader pair ([`pass_shaders`]).
pub fn bind_pass_shaders(ctx: &mut Context) {
    let (vs, fs) = pass_shaders();
    let vs = ctx.create_vs_state_native(vs).unwrap();
    let fs = ctx.create_fs_state_native(fs).unwrap();
    ctx.bind_vs_state(Some(vs)).unwrap();
    ctx.bind_fs_state(Some(fs)).unwrap();
}

/// Reads the `w` x `h` box of level 0 of `rt` back.
pub fn read_level0(ctx: &mut Context, rt: &Resource, w: u32, h: u32) -> Vec<u8> {
    let t = ctx
        .transfer_map(
            rt,
            0,
            TransferFlags::READ,
            &PipeBox::new_2d(0, 0, w as i32, h as i32),
        )
        .unwrap();
    let v = t.data().to_vec();
    ctx.transfer_unmap(t).unwrap();
    v
}
