//! The pipeline's pixel kernels as the blitter uses them
//! (`Context::blit`, `engine/src/context/blit.rs`).
//!
//! llvmpipe blits by drawing: `util_blitter_blit` draws a textured quad over
//! the destination box, its fragment shader samples the source view with a
//! `CLAMP_TO_EDGE` sampler at the centre of every destination pixel (a
//! resolve shader fetches every sample and averages them), and the result
//! goes through the blend and store of the pipeline.  ferropipe's blit does
//! not rasterize a quad (its coordinates are exact, see the blit module
//! docs), but every value it filters, averages or blends comes from here:
//! * [`BlitSource`] / [`BlitSampler`]: the pipeline's sampler
//!   (`ferropipe_shader::texture::Texture::sample`, the same code a
//!   fragment shader's `TEX` runs) over one level of the source, with the
//!   blitter's sampler state;
//! * [`resolve_average`]: the resolve shader's arithmetic;
//! * blending is [`crate::merge::blend_store_row`], the tile store's
//!   per-pixel blend and write.
//!
//! Copies of whole texels (nearest sampling, byte permutations, integer
//! conversion) stay in the blit: they pick texels, they do not filter.

pub use ferropipe_shader::blit::{BlitImage, BlitSampler, BlitSource};

/// u_blitter's resolve shader: `out[i]` = the sum over the sample planes
/// (in sample order) of `planes[s][i]`, times `1 / n`.  `sum` is scratch.
pub fn resolve_average(
    out: &mut [[f32; 4]],
    planes: usize,
    mut plane: impl FnMut(usize, &mut [[f32; 4]]),
    sum: &mut Vec<[f32; 4]>,
) {
    sum.clear();
    sum.resize(out.len(), [0.0; 4]);
    for s in 0..planes {
        plane(s, out);
        for (a, v) in sum.iter_mut().zip(out.iter()) {
            for c in 0..4 {
                a[c] += v[c];
            }
        }
    }
    let inv = 1.0 / planes as f32;
    for (o, s) in out.iter_mut().zip(sum.iter()) {
        *o = s.map(|x| x * inv);
    }
}
