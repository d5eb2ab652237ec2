//! An offscreen colour + depth target to render a model into and read it
//! back: what the tests, the examples and simple hosts need.

use ferropipe::{
    BindFlags, ClearFlags, ColorUnion, Context, Format, FramebufferTemplate, PipeBox, Resource,
    ResourceTemplate, Screen, SurfaceHandle, SurfaceTemplate, TransferFlags, ViewportState,
};

use crate::camera::Camera;
use crate::error::Result;
use crate::model::{DrawOptions, DrawStats, Model};

/// An RGBA8 colour buffer and a `Z32_FLOAT` depth buffer of one size.
pub struct Offscreen {
    color: Resource,
    _depth: Resource,
    color_surface: SurfaceHandle,
    depth_surface: SurfaceHandle,
    width: u32,
    height: u32,
}

impl Offscreen {
    /// Creates the targets on `screen`, with surfaces in `ctx`.
    pub fn new(screen: &Screen, ctx: &mut Context, width: u32, height: u32) -> Result<Self> {
        let color = screen.resource_create(&ResourceTemplate::texture_2d(
            Format::R8G8B8A8_UNORM,
            width,
            height,
            BindFlags::RENDER_TARGET | BindFlags::SAMPLER_VIEW,
        ))?;
        let depth = screen.resource_create(&ResourceTemplate::texture_2d(
            Format::Z32_FLOAT,
            width,
            height,
            BindFlags::DEPTH_STENCIL,
        ))?;
        let color_surface =
            ctx.create_surface(&color, &SurfaceTemplate::new(Format::R8G8B8A8_UNORM))?;
        let depth_surface = ctx.create_surface(&depth, &SurfaceTemplate::new(Format::Z32_FLOAT))?;
        Ok(Offscreen {
            color,
            _depth: depth,
            color_surface,
            depth_surface,
            width,
            height,
        })
    }

    /// Width / height.
    pub fn aspect(&self) -> f32 {
        self.width as f32 / self.height as f32
    }

    /// Binds the targets and a viewport whose row 0 is the top of the
    /// picture (NDC +y up), and clears colour to `clear` and depth to 1.
    pub fn begin(&self, ctx: &mut Context, clear: [f32; 4]) -> Result<()> {
        ctx.set_framebuffer_state(&FramebufferTemplate {
            width: self.width,
            height: self.height,
            layers: 1,
            samples: 1,
            cbufs: vec![Some(self.color_surface)],
            zsbuf: Some(self.depth_surface),
        })?;
        let (w, h) = (self.width as f32, self.height as f32);
        ctx.set_viewport_states(
            0,
            &[ViewportState {
                scale: [w * 0.5, -h * 0.5, 1.0],
                translate: [w * 0.5, h * 0.5, 0.0],
            }],
        )?;
        ctx.clear(
            ClearFlags::COLOR0 | ClearFlags::DEPTH,
            &ColorUnion::float(clear),
            1.0,
            0,
        )?;
        Ok(())
    }

    /// Reads the colour buffer back: RGBA8, rows top to bottom.
    pub fn read(&self, ctx: &mut Context) -> Result<Vec<u8>> {
        let pbox = PipeBox::new_2d(0, 0, self.width as i32, self.height as i32);
        let t = ctx.transfer_map(&self.color, 0, TransferFlags::READ, &pbox)?;
        let row = self.width as usize * 4;
        let mut out = Vec::with_capacity(row * self.height as usize);
        for y in 0..self.height as usize {
            out.extend_from_slice(&t.data()[y * t.stride()..y * t.stride() + row]);
        }
        ctx.transfer_unmap(t)?;
        Ok(out)
    }

    /// Clears, draws `model` with `camera`, and reads the frame back.
    pub fn render(
        &self,
        ctx: &mut Context,
        model: &mut Model,
        camera: &Camera,
        options: &DrawOptions,
        clear: [f32; 4],
    ) -> Result<(Vec<u8>, DrawStats)> {
        self.begin(ctx, clear)?;
        let stats = model.draw(ctx, camera, options)?;
        ctx.flush()?.wait();
        Ok((self.read(ctx)?, stats))
    }

    /// Unbinds and destroys the surfaces.
    pub fn release(self, ctx: &mut Context) {
        let _ = ctx.set_framebuffer_state(&FramebufferTemplate::default());
        let _ = ctx.surface_destroy(self.color_surface);
        let _ = ctx.surface_destroy(self.depth_surface);
    }
}
