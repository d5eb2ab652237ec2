//! Clears (context.rst "Clearing"): `clear`, `clear_render_target`,
//! `clear_depth_stencil` (`clear_buffer` lives with the transfers).
//!
//! Clears ignore write masks, scissors and the rest of the pipeline state;
//! they write every layer of the surfaces they touch.  In a combined
//! depth/stencil surface depth and stencil are cleared independently (the
//! other component's bits are kept).  Each clear executes recorded work
//! first, then fills rows with one packed pixel (`pack::fill_row`), so a
//! 1080p RGBA8 clear is a 8 MB memset.
//!
//! Conditional rendering: `clear` always obeys `render_condition`,
//! `clear_render_target` / `clear_depth_stencil` only when
//! `render_condition_enabled` is set; both go through
//! `Context::render_condition_passes` (query.rs).
//!
//! A `clear` of single-layer attachments covering the framebuffer is
//! recorded into the scene instead (`Context::record_clear`, draw.rs): the
//! tile pass clears each tile in cache right before drawing into it.

use ferropipe_components::enums::ClearFlags;
use ferropipe_components::format::FormatKind;
use ferropipe_components::pack;
use ferropipe_components::state::{ColorUnion, PipeBox};
use ferropipe_components::view::Surface;

use super::transfer::resolve_plane_box;
use super::{Context, SurfaceHandle};
use crate::error::{DrawError, ResourceError, Result};

/// The rectangle `x, y, w, h` of `surface` clipped to its size, as a box
/// over all its layers (`None` when empty).
fn surface_box(s: &Surface, x: u32, y: u32, w: u32, h: u32) -> Option<PipeBox> {
    let (sw, sh) = (s.desc.width, s.desc.height);
    let x1 = x.saturating_add(w).min(sw);
    let y1 = y.saturating_add(h).min(sh);
    if x >= x1 || y >= y1 {
        return None;
    }
    Some(PipeBox::new_3d(
        x as i32,
        y as i32,
        s.desc.first_layer as i32,
        (x1 - x) as i32,
        (y1 - y) as i32,
        s.desc.layers() as i32,
    ))
}

/// Fills a box of a colour surface with one colour.
fn fill_color(call: &'static str, s: &Surface, b: &PipeBox, color: &ColorUnion) -> Result<()> {
    let res = &s.resource;
    // Every sample plane (multisampled colour buffers are cleared whole).
    let region = resolve_plane_box(call, res, s.desc.level, b)?;
    let mut px = [0u8; 16];
    let bpp = s.desc.format.desc().block_bytes as usize;
    // Pack in the surface's format: a cast view (sRGB on UNORM, UINT on
    // UNORM) clears with its own encoding, as GL does.
    pack::pack_color_union(s.desc.format, *color, &mut px[..bpp]);
    let mut storage = res.storage.write();
    let sample_stride = res.layout.levels[s.desc.level as usize].sample_stride;
    for sample in 0..res.layout.samples.max(1) as usize {
        for z in 0..region.slices {
            for y in 0..region.rows {
                let at = region.row_offset(y, z) + sample * sample_stride;
                pack::fill_row(&px[..bpp], &mut storage[at..at + region.row_bytes]);
            }
        }
    }
    Ok(())
}

/// Fills the depth and/or stencil of a box of a depth/stencil surface.
fn fill_zs(
    call: &'static str,
    s: &Surface,
    b: &PipeBox,
    depth: Option<f64>,
    stencil: Option<u32>,
) -> Result<()> {
    let d = s.desc.format.desc();
    let z = depth.filter(|_| d.has_depth()).map(|z| z as f32);
    let st = stencil.filter(|_| d.has_stencil()).map(|v| v as u8);
    if z.is_none() && st.is_none() {
        return Ok(());
    }
    let res = &s.resource;
    let region = resolve_plane_box(call, res, s.desc.level, b)?;
    let mut storage = res.storage.write();
    let sample_stride = res.layout.levels[s.desc.level as usize].sample_stride;
    for sample in 0..res.layout.samples.max(1) as usize {
        for zz in 0..region.slices {
            for y in 0..region.rows {
                let at = region.row_offset(y, zz) + sample * sample_stride;
                pack::fill_zs_row(
                    s.desc.format,
                    z,
                    st,
                    &mut storage[at..at + region.row_bytes],
                );
            }
        }
    }
    Ok(())
}

impl Context {
    /// `clear`: clears the bound framebuffer's colour buffers named by
    /// `PIPE_CLEAR_COLORi` to `color`, its depth to `depth` and its stencil
    /// to `stencil` (low 8 bits), whole surfaces, every layer.
    pub fn clear(
        &mut self,
        buffers: ClearFlags,
        color: &ColorUnion,
        depth: f64,
        stencil: u32,
    ) -> Result<()> {
        self.alive("clear")?;
        const CALL: &str = "clear";
        if depth.is_nan() {
            return Err(DrawError::NanDepth { call: CALL }.into());
        }
        self.record(super::CapturedCall::Clear {
            buffers,
            color,
            depth,
            stencil,
        });
        if !self.render_condition_passes()? {
            return Ok(());
        }
        if self.record_clear(buffers, color, depth, stencil)? {
            return Ok(());
        }
        self.flush_recorded()?;
        // The clear the tile pass could not take (layered or multisampled
        // attachments, e.g. the demo's 4x MSAA target), on this thread.
        ferropipe_profiling::scope!("clear");
        let fb = self.bound().framebuffer.clone();
        for (i, cbuf) in fb.cbufs.iter().enumerate() {
            let bit = ClearFlags::from_bits_truncate(ClearFlags::COLOR0.bits() << i);
            if let (Some(s), true) = (cbuf, buffers.contains(bit))
                && let Some(b) = surface_box(s, 0, 0, u32::MAX, u32::MAX)
            {
                fill_color(CALL, s, &b, color)?;
            }
        }
        if let Some(s) = &fb.zsbuf {
            let z = buffers.contains(ClearFlags::DEPTH).then_some(depth);
            let st = buffers.contains(ClearFlags::STENCIL).then_some(stencil);
            if let Some(b) = surface_box(s, 0, 0, u32::MAX, u32::MAX) {
                fill_zs(CALL, s, &b, z, st)?;
            }
        }
        Ok(())
    }

    /// `clear_render_target`: clears the rectangle (clipped to the surface)
    /// of every layer of a colour surface, bound or not.
    #[allow(clippy::too_many_arguments)]
    pub fn clear_render_target(
        &mut self,
        surface: SurfaceHandle,
        color: &ColorUnion,
        dstx: u32,
        dsty: u32,
        width: u32,
        height: u32,
        render_condition_enabled: bool,
    ) -> Result<()> {
        self.alive("clear_render_target")?;
        const CALL: &str = "clear_render_target";
        let s = self.get(CALL, "surface", surface)?.0.clone();
        if s.desc.format.desc().kind != FormatKind::Color {
            return Err(ResourceError::FormatKind {
                call: CALL,
                field: "surface",
                format: s.desc.format,
                expected: "colour",
            }
            .into());
        }
        self.record(super::CapturedCall::ClearRenderTarget {
            surface: &s,
            color,
            dstx,
            dsty,
            width,
            height,
            render_condition_enabled,
        });
        if render_condition_enabled && !self.render_condition_passes()? {
            return Ok(());
        }
        self.flush_recorded()?;
        ferropipe_profiling::scope!("clear_render_target");
        if let Some(b) = surface_box(&s, dstx, dsty, width, height) {
            fill_color(CALL, &s, &b, color)?;
        }
        Ok(())
    }

    /// `clear_depth_stencil`: clears depth (`PIPE_CLEAR_DEPTH`) and/or
    /// stencil (`PIPE_CLEAR_STENCIL`) in the rectangle (clipped to the
    /// surface) of every layer of a depth/stencil surface, bound or not.
    #[allow(clippy::too_many_arguments)]
    pub fn clear_depth_stencil(
        &mut self,
        surface: SurfaceHandle,
        clear_flags: ClearFlags,
        depth: f64,
        stencil: u32,
        dstx: u32,
        dsty: u32,
        width: u32,
        height: u32,
        render_condition_enabled: bool,
    ) -> Result<()> {
        self.alive("clear_depth_stencil")?;
        const CALL: &str = "clear_depth_stencil";
        let s = self.get(CALL, "surface", surface)?.0.clone();
        if s.desc.format.desc().kind == FormatKind::Color {
            return Err(ResourceError::FormatKind {
                call: CALL,
                field: "surface",
                format: s.desc.format,
                expected: "depth/stencil",
            }
            .into());
        }
        if depth.is_nan() {
            return Err(DrawError::NanDepth { call: CALL }.into());
        }
        self.record(super::CapturedCall::ClearDepthStencil {
            surface: &s,
            clear_flags,
            depth,
            stencil,
            dstx,
            dsty,
            width,
            height,
            render_condition_enabled,
        });
        if render_condition_enabled && !self.render_condition_passes()? {
            return Ok(());
        }
        self.flush_recorded()?;
        ferropipe_profiling::scope!("clear_depth_stencil");
        let z = clear_flags.contains(ClearFlags::DEPTH).then_some(depth);
        let st = clear_flags.contains(ClearFlags::STENCIL).then_some(stencil);
        if let Some(b) = surface_box(&s, dstx, dsty, width, height) {
            fill_zs(CALL, &s, &b, z, st)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::FramebufferTemplate;
    use crate::test_util::{read_level as read_all, setup};
    use ferropipe_components::enums::{BindFlags, TextureTarget};
    use ferropipe_components::format::Format;
    use ferropipe_components::resource::ResourceTemplate;
    use ferropipe_components::view::SurfaceTemplate;

    #[test]
    fn clear_sub_rectangles_like_the_clear_subrect_scene() {
        let (s, mut c) = setup();
        let rt = s
            .resource_create(&ResourceTemplate::texture_2d(
                Format::R8G8B8A8_UNORM,
                64,
                64,
                BindFlags::RENDER_TARGET,
            ))
            .unwrap();
        let zs = s
            .resource_create(&ResourceTemplate::texture_2d(
                Format::Z24_UNORM_S8_UINT,
                64,
                64,
                BindFlags::DEPTH_STENCIL,
            ))
            .unwrap();
        let rs = c
            .create_surface(&rt, &SurfaceTemplate::new(Format::R8G8B8A8_UNORM))
            .unwrap();
        let zss = c
            .create_surface(&zs, &SurfaceTemplate::new(Format::Z24_UNORM_S8_UINT))
            .unwrap();
        c.set_framebuffer_state(&FramebufferTemplate {
            width: 64,
            height: 64,
            cbufs: vec![Some(rs)],
            zsbuf: Some(zss),
            ..Default::default()
        })
        .unwrap();
        c.clear(
            ClearFlags::COLOR | ClearFlags::DEPTH | ClearFlags::STENCIL,
            &ColorUnion::float([0.0, 0.0, 1.0, 1.0]),
            1.0,
            0,
        )
        .unwrap();
        c.clear_render_target(
            rs,
            &ColorUnion::float([1.0, 0.0, 0.0, 1.0]),
            8,
            8,
            20,
            12,
            false,
        )
        .unwrap();
        // Clipped at the surface's edge.
        c.clear_render_target(
            rs,
            &ColorUnion::float([1.0, 1.0, 0.0, 1.0]),
            40,
            30,
            30,
            40,
            false,
        )
        .unwrap();
        c.clear_depth_stencil(zss, ClearFlags::DEPTHSTENCIL, 0.25, 5, 30, 4, 20, 50, false)
            .unwrap();
        c.clear_depth_stencil(zss, ClearFlags::STENCIL, 0.0, 9, 2, 40, 10, 10, false)
            .unwrap();
        let color = read_all(&mut c, &rt, 0);
        let px = |x: usize, y: usize| &color[(y * 64 + x) * 4..][..4];
        assert_eq!(px(0, 0), &[0, 0, 255, 255]);
        assert_eq!(px(8, 8), &[255, 0, 0, 255]);
        assert_eq!(px(27, 19), &[255, 0, 0, 255]);
        assert_eq!(px(28, 19), &[0, 0, 255, 255]);
        assert_eq!(px(63, 63), &[255, 255, 0, 255]);
        assert_eq!(px(39, 63), &[0, 0, 255, 255]);
        let zbytes = read_all(&mut c, &zs, 0);
        let z = |x: usize, y: usize| {
            pack::unpack_z(Format::Z24_UNORM_S8_UINT, &zbytes[(y * 64 + x) * 4..])
        };
        let st = |x: usize, y: usize| {
            pack::unpack_s(Format::Z24_UNORM_S8_UINT, &zbytes[(y * 64 + x) * 4..])
        };
        assert_eq!(z(0, 0), 1.0);
        assert!((z(30, 4) - 0.25).abs() < 1e-7);
        assert_eq!(st(30, 4), 5);
        assert_eq!(st(49, 53), 5);
        assert_eq!(st(50, 53), 0);
        // The stencil-only clear kept depth.
        assert_eq!((z(2, 40), st(2, 40)), (1.0, 9));
        // Wrong kinds are refused.
        assert!(
            c.clear_render_target(zss, &ColorUnion::default(), 0, 0, 1, 1, false)
                .is_err()
        );
        assert!(
            c.clear_depth_stencil(rs, ClearFlags::DEPTH, 0.0, 0, 0, 0, 1, 1, false)
                .is_err()
        );
    }

    #[test]
    fn clears_cover_every_layer_and_respect_formats() {
        let (s, mut c) = setup();
        let arr = s
            .resource_create(&ResourceTemplate {
                target: TextureTarget::Texture2DArray,
                format: Format::R16G16B16A16_UINT,
                width0: 4,
                height0: 4,
                array_size: 4,
                last_level: 1,
                bind: BindFlags::RENDER_TARGET,
                ..Default::default()
            })
            .unwrap();
        let surf = c
            .create_surface(
                &arr,
                &SurfaceTemplate {
                    format: Format::R16G16B16A16_UINT,
                    level: 1,
                    first_layer: 1,
                    last_layer: 2,
                },
            )
            .unwrap();
        c.set_framebuffer_state(&FramebufferTemplate {
            width: 2,
            height: 2,
            cbufs: vec![None, Some(surf)],
            ..Default::default()
        })
        .unwrap();
        // COLOR0 names an unbound slot: nothing happens; COLOR1 clears.
        c.clear(ClearFlags::COLOR0, &ColorUnion::uint([1, 2, 3, 4]), 0.0, 0)
            .unwrap();
        assert!(read_all(&mut c, &arr, 1).iter().all(|&b| b == 0));
        c.clear(
            ClearFlags::COLOR1,
            &ColorUnion::uint([1, 70000, 3, 4]),
            0.0,
            0,
        )
        .unwrap();
        let bytes = read_all(&mut c, &arr, 1);
        let layer = |l: usize| &bytes[l * 32..(l + 1) * 32];
        assert!(layer(0).iter().all(|&b| b == 0));
        assert!(layer(3).iter().all(|&b| b == 0));
        for l in [1, 2] {
            assert_eq!(
                pack::unpack_rgba_u32(Format::R16G16B16A16_UINT, &layer(l)[24..]),
                [1, 65535, 3, 4]
            );
        }
        assert!(read_all(&mut c, &arr, 0).iter().all(|&b| b == 0));
        // sRGB surface on an sRGB resource: 0.5 linear stores 188.
        let srgb = s
            .resource_create(&ResourceTemplate::texture_2d(
                Format::R8G8B8A8_SRGB,
                2,
                1,
                BindFlags::RENDER_TARGET,
            ))
            .unwrap();
        let ss = c
            .create_surface(&srgb, &SurfaceTemplate::new(Format::R8G8B8A8_SRGB))
            .unwrap();
        c.clear_render_target(
            ss,
            &ColorUnion::float([0.5, 0.5, 0.5, 0.5]),
            0,
            0,
            2,
            1,
            false,
        )
        .unwrap();
        assert_eq!(
            read_all(&mut c, &srgb, 0),
            vec![188, 188, 188, 128, 188, 188, 188, 128]
        );
        // Float depth stores the value as given; Z16 clamps.
        for (f, want) in [
            (Format::Z32_FLOAT_S8X24_UINT, 0.75f32),
            (Format::Z16_UNORM, 1.0),
        ] {
            let r = s
                .resource_create(&ResourceTemplate::texture_2d(
                    f,
                    3,
                    3,
                    BindFlags::DEPTH_STENCIL,
                ))
                .unwrap();
            let zs = c.create_surface(&r, &SurfaceTemplate::new(f)).unwrap();
            let d = if f == Format::Z16_UNORM { 1.5 } else { 0.75 };
            c.clear_depth_stencil(zs, ClearFlags::DEPTHSTENCIL, d, 0x1ff, 1, 1, 5, 5, false)
                .unwrap();
            let b = read_all(&mut c, &r, 0);
            let bpp = f.desc().block_bytes as usize;
            assert_eq!(pack::unpack_z(f, &b[(3 + 1) * bpp..]), want);
            assert_eq!(pack::unpack_z(f, &b[..]), 0.0);
            if f.desc().has_stencil() {
                assert_eq!(pack::unpack_s(f, &b[8 * bpp..]), 0xff);
            }
        }
    }
}
