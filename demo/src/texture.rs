//! The lit mesh's texture: a procedural RGBA8 albedo with a full mip chain,
//! uploaded level by level with `texture_subdata`, plus its sampler view
//! and a trilinear, repeating sampler state.
//!
//! Sampling it from the Rust-native fragment shader needs
//! `ferropipe-shader`'s sampling entry point, which is not there yet
//! (`systems/shader/src/texture.rs` is a stub); until then the mesh scene
//! is lit but untextured, and this module is exercised by its tests (the
//! chain is built and uploaded through the real façade and read back).

use ferropipe::Format;
use ferropipe::ResourceTemplate;
use ferropipe::SamplerViewDesc;
use ferropipe::{BindFlags, TexFilter, TexMipFilter, TexWrap};
use ferropipe::{Context, Resource, Result, SamplerHandle, SamplerViewHandle, Screen};
use ferropipe::{PipeBox, SamplerState};

/// One RGBA8 mip level, rows top to bottom.
#[derive(Clone, Debug, PartialEq)]
pub struct Level {
    pub width: u32,
    pub height: u32,
    pub rgba: Vec<u8>,
}

/// A warm brick pattern: mortar lines every 32 texels (offset every other
/// row of bricks), bricks varying in tone.  `size` must be a power of two.
pub fn bricks(size: u32) -> Level {
    let mut rgba = Vec::with_capacity((size * size * 4) as usize);
    for y in 0..size {
        for x in 0..size {
            let row = y / 16;
            let xs = x + if row % 2 == 1 { 16 } else { 0 };
            let col = xs / 32;
            let mortar = y % 16 == 0 || xs % 32 == 0;
            let px = if mortar {
                [200, 196, 186, 255]
            } else {
                // A per-brick tone from a small integer hash.
                let h = (row.wrapping_mul(73_856_093) ^ col.wrapping_mul(19_349_663)) % 48;
                [150 + h as u8, 70 + (h / 2) as u8, 50, 255]
            };
            rgba.extend_from_slice(&px);
        }
    }
    Level {
        width: size,
        height: size,
        rgba,
    }
}

/// The mip chain below `base`: each level the 2x2 box average of the one
/// above (rounded), down to 1x1.  Non-square or odd sizes take the last
/// row/column twice.
pub fn mip_chain(base: Level) -> Vec<Level> {
    let mut levels = vec![base];
    loop {
        let prev = levels.last().expect("base level");
        if prev.width == 1 && prev.height == 1 {
            break;
        }
        let (w, h) = ((prev.width / 2).max(1), (prev.height / 2).max(1));
        let mut rgba = Vec::with_capacity((w * h * 4) as usize);
        let at = |x: u32, y: u32, c: usize| {
            let x = x.min(prev.width - 1);
            let y = y.min(prev.height - 1);
            prev.rgba[((y * prev.width + x) * 4) as usize + c] as u32
        };
        for y in 0..h {
            for x in 0..w {
                for c in 0..4 {
                    let s = at(2 * x, 2 * y, c)
                        + at(2 * x + 1, 2 * y, c)
                        + at(2 * x, 2 * y + 1, c)
                        + at(2 * x + 1, 2 * y + 1, c);
                    rgba.push(((s + 2) / 4) as u8);
                }
            }
        }
        levels.push(Level {
            width: w,
            height: h,
            rgba,
        });
    }
    levels
}

/// A sampled texture: the resource, its view and a sampler.
pub struct Texture {
    pub resource: Resource,
    pub view: SamplerViewHandle,
    pub sampler: SamplerHandle,
}

impl Texture {
    /// Creates a mipmapped RGBA8 texture from `levels` (level 0 first) with
    /// a repeating trilinear sampler.
    pub fn create(screen: &Screen, ctx: &mut Context, levels: &[Level]) -> Result<Self> {
        let base = &levels[0];
        let templ = ResourceTemplate {
            last_level: levels.len() as u32 - 1,
            ..ResourceTemplate::texture_2d(
                Format::R8G8B8A8_UNORM,
                base.width,
                base.height,
                BindFlags::SAMPLER_VIEW,
            )
        };
        let resource = screen.resource_create(&templ)?;
        for (i, l) in levels.iter().enumerate() {
            ctx.texture_subdata(
                &resource,
                i as u32,
                &PipeBox::new_2d(0, 0, l.width as i32, l.height as i32),
                &l.rgba,
                l.width as usize * 4,
                l.rgba.len(),
            )?;
        }
        let view = ctx.create_sampler_view(&resource, &SamplerViewDesc::of_resource(&templ))?;
        let sampler = ctx.create_sampler_state(&SamplerState {
            wrap_s: TexWrap::Repeat,
            wrap_t: TexWrap::Repeat,
            min_img_filter: TexFilter::Linear,
            mag_img_filter: TexFilter::Linear,
            min_mip_filter: TexMipFilter::Linear,
            ..SamplerState::default()
        })?;
        Ok(Texture {
            resource,
            view,
            sampler,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferropipe::ScreenConfig;
    use ferropipe::TransferFlags;

    #[test]
    fn chain_halves_to_one_texel_and_averages() {
        let chain = mip_chain(bricks(64));
        let sizes: Vec<_> = chain.iter().map(|l| (l.width, l.height)).collect();
        assert_eq!(sizes, [64, 32, 16, 8, 4, 2, 1].map(|s| (s, s)));
        // Level 1 texel (0, 0) is the rounded mean of level 0's 2x2 block.
        let l0 = &chain[0].rgba;
        let w = 64 * 4;
        for c in 0..4 {
            let s = l0[c] as u32 + l0[4 + c] as u32 + l0[w + c] as u32 + l0[w + 4 + c] as u32;
            assert_eq!(chain[1].rgba[c] as u32, (s + 2) / 4);
        }
        // Alpha stays opaque all the way down.
        assert!(chain.iter().all(|l| l.rgba.chunks(4).all(|p| p[3] == 255)));
    }

    #[test]
    fn odd_sizes_clamp_at_the_edge() {
        let base = Level {
            width: 3,
            height: 1,
            rgba: vec![0, 0, 0, 255, 100, 100, 100, 255, 200, 200, 200, 255],
        };
        let chain = mip_chain(base);
        assert_eq!(chain.len(), 2);
        assert_eq!(chain[1].rgba, vec![50, 50, 50, 255]);
    }

    #[test]
    fn every_level_reaches_the_resource() {
        let screen = Screen::new(ScreenConfig {
            threads: 1,
            ..Default::default()
        })
        .unwrap();
        let mut ctx = screen.context_create().unwrap();
        let chain = mip_chain(bricks(32));
        let tex = Texture::create(&screen, &mut ctx, &chain).unwrap();
        for (i, l) in chain.iter().enumerate() {
            let t = ctx
                .transfer_map(
                    &tex.resource,
                    i as u32,
                    TransferFlags::READ,
                    &PipeBox::new_2d(0, 0, l.width as i32, l.height as i32),
                )
                .unwrap();
            let stride = t.stride();
            let data = t.data().to_vec();
            for y in 0..l.height as usize {
                let row = &data[y * stride..y * stride + l.width as usize * 4];
                let want = &l.rgba[y * l.width as usize * 4..(y + 1) * l.width as usize * 4];
                assert_eq!(row, want, "level {i} row {y}");
            }
            ctx.transfer_unmap(t).unwrap();
        }
    }
}
