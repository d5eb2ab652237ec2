//! The blitter's sampler: the pipeline's texture sampling
//! (`Texture::sample`, the code a fragment shader's
//! `TEX` runs) over one image of a blit source with u_blitter's sampler
//! state.  `ferropipe_systems::blit` documents how `Context::blit` uses it.

use crate::texture::{QuadSampler, SampleArgs, Texture};
use ferropipe_components::enums::{Swizzle, TexFilter, TexMipFilter, TexWrap, TextureTarget};
use ferropipe_components::format::Format;
use ferropipe_components::resource::{LevelLayout, ResourceLayout};
use ferropipe_components::shader::{BoundTexture, LANES, Lanes};
use ferropipe_components::state::SamplerState;
use ferropipe_components::view::SamplerViewDesc;

/// One filtered image of a blit source: a 2D slice, or a 3D level whose
/// slices filter like rows, with the blitter's sampler state
/// (`CLAMP_TO_EDGE` on every axis, `filter` for minification and
/// magnification, no mipmapping: u_blitter's view holds the source level
/// alone).
#[derive(Clone, Debug)]
pub struct BlitSource {
    layout: ResourceLayout,
    view: SamplerViewDesc,
    state: SamplerState,
    format: Format,
    size: [f64; 3],
}

/// Geometry of a [`BlitSource`]'s image, in bytes and texels, relative to
/// the image's first texel.
#[derive(Clone, Copy, Debug)]
pub struct BlitImage {
    /// Texels per row.
    pub width: u32,
    /// Rows.
    pub height: u32,
    /// Slices that filter (3D sources); 1 for a 2D slice.
    pub depth: u32,
    /// Bytes from one row to the next.
    pub row_stride: usize,
    /// Bytes from one slice to the next.
    pub slice_stride: usize,
}

impl BlitSource {
    /// The blitter's view of an image in `format` (a colour or depth-only
    /// format), filtered with `filter`.
    pub fn new(format: Format, image: BlitImage, filter: TexFilter) -> BlitSource {
        let bpp = format.desc().block_bytes.max(1);
        let level = LevelLayout {
            offset: 0,
            width: image.width,
            height: image.height,
            depth: image.depth,
            row_stride: image.row_stride,
            slice_stride: image.slice_stride,
            sample_stride: image.slice_stride * image.depth as usize,
        };
        let layout = ResourceLayout {
            levels: vec![level],
            size: level.sample_stride,
            bpp,
            samples: 1,
        };
        let target = if image.depth > 1 {
            TextureTarget::Texture3D
        } else {
            TextureTarget::Texture2D
        };
        let view = SamplerViewDesc {
            target,
            format,
            first_level: 0,
            last_level: 0,
            first_layer: 0,
            last_layer: 0,
            buffer_offset: 0,
            buffer_size: 0,
            swizzle: [Swizzle::X, Swizzle::Y, Swizzle::Z, Swizzle::W],
        };
        let state = SamplerState {
            wrap_s: TexWrap::ClampToEdge,
            wrap_t: TexWrap::ClampToEdge,
            wrap_r: TexWrap::ClampToEdge,
            min_img_filter: filter,
            mag_img_filter: filter,
            min_mip_filter: TexMipFilter::None,
            ..SamplerState::default()
        };
        BlitSource {
            layout,
            view,
            state,
            format,
            size: [image.width, image.height, image.depth].map(f64::from),
        }
    }

    /// A sampler over `data`, whose first byte is the image's first texel
    /// (`None` when `data` is empty).
    pub fn sampler<'a>(&'a self, data: &'a [u8]) -> Option<BlitSampler<'a>> {
        let tex = Texture::new(&BoundTexture {
            view: &self.view,
            layout: &self.layout,
            resource_format: self.format,
            data,
        })?;
        let quad = tex.quad_sampler(Some(&self.state));
        Some(BlitSampler {
            src: self,
            tex,
            quad,
        })
    }
}

/// [`BlitSource`] bound to the source's bytes.
pub struct BlitSampler<'a> {
    src: &'a BlitSource,
    tex: Texture<'a>,
    /// The sampler's planned SIMD path, where it applies (RGBA8-family
    /// 2D sources), built once for the rows this sampler serves.
    quad: Option<QuadSampler<'a>>,
}

impl BlitSampler<'_> {
    /// Samples a destination row: pixel `i` at texel-space coordinates
    /// `(xs[i], y, z)` (the source image of the destination pixel's centre;
    /// `z` is ignored for a 2D slice), normalized as u_blitter's texture
    /// coordinates are and filtered by the pipeline's sampler (implicit
    /// LOD) at the image's only level.  Writes RGBA (depth formats: depth in R) to
    /// `out[..xs.len()]`.
    pub fn sample_row(&self, xs: &[f64], y: f64, z: f64, out: &mut [[f32; 4]]) {
        let [w, h, d] = self.src.size;
        let t = Lanes::splat((y / h) as f32);
        let r = Lanes::splat((z / d) as f32);
        for (xs, out) in xs.chunks(LANES).zip(out.chunks_mut(LANES)) {
            let mut s = [0.0f32; LANES];
            for (s, &x) in s.iter_mut().zip(xs) {
                *s = (x / w) as f32;
            }
            // Lanes past the row's end repeat its last pixel.
            let last = s[xs.len() - 1];
            s[xs.len()..].fill(last);
            // Implicit LOD, as u_blitter's `TEX`: the view has one level
            // and min = mag filter, so the lanes' layout (a row, not 2x2
            // quads) cannot change the result, and RGBA8-family sources
            // take the sampler's SIMD bilinear kernels.
            let coord = [Lanes::new(s), t, r];
            let v = self
                .quad
                .as_ref()
                .and_then(|q| self.tex.sample_quads(q, &coord))
                .unwrap_or_else(|| {
                    self.tex
                        .sample(Some(&self.src.state), &SampleArgs::at(coord))
                })
                .map(|l| l.to_array());
            for (i, o) in out.iter_mut().enumerate() {
                *o = [v[0][i], v[1][i], v[2][i], v[3][i]];
            }
        }
    }
}
