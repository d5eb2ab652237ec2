//! Blits (context.rst "Blitting"): `blit` with scaling, filtering, format
//! conversion, depth/stencil masks, MSAA resolve and a scissor.  llvmpipe's
//! counterpart is `lp_blit` (`lp_surface.c`), which hands everything but
//! plain copies to `util_blitter_blit` (`u_blitter.c`): a textured quad
//! drawn over the destination box with the source sampled at the centre of
//! every destination pixel.  ferropipe computes the same samples without
//! rasterizing the quad, a destination row at a time, but with the
//! pipeline's own kernels (one pixel engine, issue 16): LINEAR filtering
//! is the pipeline's sampler (`Texture::sample` through
//! `ferropipe_systems::blit::BlitSampler`, u_blitter's `CLAMP_TO_EDGE`
//! sampler state, so RGBA8 filters in llvmpipe's 8.8 fixed point), MSAA
//! resolves are `blit::resolve_average` (the resolve shader's arithmetic),
//! `alpha_blend` is the merge stage's blend and store
//! (`merge::blend_store_row`), and every format decode and encode is
//! `pack.rs`, which the pipeline's fetch, sampler and store use too.  What
//! stays here picks whole texels (nearest, byte copies and permutations,
//! integer conversion, depth and stencil bits): copies, not filters.
//!
//! # Coordinate mapping (what u_blitter's quad produces)
//! Along each axis the destination box `[d, d + dw)` maps linearly onto the
//! source box `[s, s + sw)`; either size may be negative, which mirrors that
//! axis (a box `x = 32, width = -32` covers columns 31 down to 0).  The
//! destination pixel `p` samples the source at its centre's image:
//!
//! ```text
//! t(p) = s + (p + 0.5 - d) * sw / dw        (in texels)
//! ```
//!
//! computed exactly in integers (`(2 s dw + (2 (p - d) + 1) sw) / 2 dw`), so
//! ties between texels resolve the same way on every machine.
//! * `NEAREST`: texel `floor(t)`.
//! * `LINEAR`: the pipeline's sampler at the normalized coordinates
//!   `t / size` (what u_blitter's quad interpolates), level of detail 0 of
//!   a view holding the source level alone: texels `floor(t - 0.5)` and the
//!   next, weighted by the fraction of `t - 0.5` (bilinear in x and y;
//!   trilinear across slices of a 3D source).  8-bit UNORM formats filter
//!   in the sampler's 8.8 fixed point (weights rounded to 1/256, llvmpipe's
//!   AoS path), everything else in `f32`.
//! * Source indices clamp to the source *level* (`CLAMP_TO_EDGE`, the
//!   blitter's sampler), not to the source box, so linear filtering next to
//!   a box edge inside the image reads the texels beyond it, as llvmpipe
//!   does.
//! * As in `util_blitter_blit_generic`, an unscaled blit (`|sw| == dw` on
//!   every axis) and any blit from a format with stencil use `NEAREST`;
//!   `LINEAR` on pure-integer formats is `NEAREST` too (integer textures do
//!   not filter).
//! * Layers (1D/2D arrays, cubes and cube arrays: `z` counts faces as in
//!   transfers) follow the same centre rule as 3D slices: destination layer
//!   `k` reads source layer `floor(s + (k + 0.5) * sd / dd)`.  This equals
//!   u_blitter for unscaled, unmirrored boxes (the only ones GL can
//!   express); u_blitter's scaled or mirrored array blits sample
//!   `round(s + k * sd / dd)` instead, which in the mirrored case reads
//!   outside the box — ferropipe keeps to the box.
//!
//! The destination box is clipped to the destination level and, with
//! `scissor_enable`, to the scissor (window coordinates of the destination
//! level; like the rasterizer's scissor it never affects the mapping).
//!
//! # Values
//! * Colour: the source is decoded in `src.format` (sRGB to linear, unorm,
//!   snorm, floats …) and encoded in `dst.format` with `pack.rs`'s rounding
//!   and clamping; filtering happens on the decoded values (linear light
//!   for sRGB).  Pure integer formats convert as integers (`UINT` ↔ `SINT`
//!   clamps, as u_blitter's integer shaders do); integer ↔ non-integer is
//!   `ResourceError::IntegerConversion` (GL's rule).  `mask` selects the colour channels
//!   written; the other bits of each destination pixel are kept.
//!   `alpha_blend` blends `SRC_ALPHA, ONE_MINUS_SRC_ALPHA` over the
//!   destination (colour and alpha), the blitter's blend state, through
//!   the merge stage's store: the source clamped to `[0, 1]` for unorm
//!   destinations, RGBA8-family destinations in llvmpipe's byte
//!   arithmetic, sRGB encoded as the store encodes it.
//! * Depth (`PIPE_MASK_Z`) and stencil (`PIPE_MASK_S`) are written
//!   independently into their bits of the destination; depth converts
//!   through `f32` (clamped into unorm formats), stencil is copied.
//!   Colour ↔ depth/stencil blits are `Unsupported`.
//! * Multisampled sources: a single-sampled destination receives the
//!   average of the samples for non-integer colour (sum in sample order,
//!   times `1 / n`, u_blitter's resolve shader), sample 0 for integer
//!   colour, depth and stencil (GL's rule and u_blitter's) or with
//!   `sample0_only`.  Equal sample counts copy sample by sample; a
//!   single-sampled source is written to every destination sample.
//!
//! # Speed
//! Same-format blits whose samples are whole texels (nearest, no blend,
//! every component written) copy bytes: 1:1 rows are `memcpy`s, scaled rows
//! gather pixels through a precomputed column table.  Nearest conversions
//! decode and encode whole rows (`pack.rs` row functions); linear rows go
//! through the sampler 8 pixels at a time.  Large blits split their destination rows into
//! jobs on the screen's `Executor`; each row's result depends only on its
//! index, so images do not depend on the thread count.

use std::sync::{Arc, Mutex};

use ferropipe_components::enums::{BlendFactor, BlendFunc, BlitMask, TexFilter, TextureTarget};
use ferropipe_components::format::{ChannelType, Format, FormatKind};
use ferropipe_components::pack;
use ferropipe_components::resource::PipeResource;
use ferropipe_components::state::{PipeBox, RtBlendState, ScissorState};
use ferropipe_systems::blit::{BlitImage, BlitSource, resolve_average};
use ferropipe_systems::merge;
use ferropipe_systems::pool::Executor;

use super::Context;
use super::transfer::lock_pair;
use super::views::formats_compatible;
use crate::error::{Error, ResourceError, Result};
use crate::screen::Resource;

const CALL: &str = "blit";

/// One side of a blit (`pipe_blit_info::dst` / `::src`).
#[derive(Clone, Copy, Debug)]
pub struct BlitSide<'a> {
    /// The resource read or written.
    pub resource: &'a Resource,
    /// Its mip level.
    pub level: u32,
    /// The format the pixels are read or written as: the resource's format
    /// or a compatible view of it (`views::formats_compatible`).
    pub format: Format,
    /// `pipe_blit_info`'s `box`: negative sizes mirror (module docs).
    pub pbox: PipeBox,
}

impl<'a> BlitSide<'a> {
    /// A side in the resource's own format.
    pub fn new(resource: &'a Resource, level: u32, pbox: PipeBox) -> Self {
        BlitSide {
            resource,
            level,
            format: resource.template().format,
            pbox,
        }
    }
}

/// `struct pipe_blit_info`.
#[derive(Clone, Copy, Debug)]
pub struct BlitInfo<'a> {
    /// Where the blit writes.
    pub dst: BlitSide<'a>,
    /// What it reads.
    pub src: BlitSide<'a>,
    /// `PIPE_MASK_*`: colour channels, depth and/or stencil to write.
    pub mask: BlitMask,
    /// Nearest or linear filtering when the boxes' sizes differ.
    pub filter: TexFilter,
    /// Whether `scissor` clips the destination.
    pub scissor_enable: bool,
    /// The scissor rectangle, when `scissor_enable`.
    pub scissor: ScissorState,
    /// Whether the blit obeys `render_condition`.
    pub render_condition_enable: bool,
    /// Blend over the destination with `SRC_ALPHA, ONE_MINUS_SRC_ALPHA`.
    pub alpha_blend: bool,
    /// Read only sample 0 of a multisampled source (no averaging).
    pub sample0_only: bool,
}

impl<'a> BlitInfo<'a> {
    /// A nearest-filtered blit of every component, no scissor, no blending.
    pub fn new(dst: BlitSide<'a>, src: BlitSide<'a>) -> Self {
        BlitInfo {
            dst,
            src,
            mask: BlitMask::RGBA | BlitMask::ZS,
            filter: TexFilter::Nearest,
            scissor_enable: false,
            scissor: ScissorState::default(),
            render_condition_enable: false,
            alpha_blend: false,
            sample0_only: false,
        }
    }
}

// ---------------------------------------------------------------------------
// Coordinate mapping
// ---------------------------------------------------------------------------

/// The linear map of one axis: destination `[d0, d0 + dw)` onto source
/// `[s0, s0 + sw)` (signed sizes, both non-zero).
#[derive(Clone, Copy, Debug)]
struct Axis {
    s0: i128,
    sw: i128,
    d0: i128,
    dw: i128,
}

impl Axis {
    fn new(src_pos: i32, src_size: i32, dst_pos: i32, dst_size: i32) -> Axis {
        Axis {
            s0: src_pos.into(),
            sw: src_size.into(),
            d0: dst_pos.into(),
            dw: dst_size.into(),
        }
    }

    /// `t(p)` (or `t(p) - 0.5` with `half`) as numerator / positive
    /// denominator.
    #[inline]
    fn ratio(&self, p: u32, half: bool) -> (i128, i128) {
        let mut n = 2 * self.s0 * self.dw + (2 * (i128::from(p) - self.d0) + 1) * self.sw;
        if half {
            n -= self.dw;
        }
        let d = 2 * self.dw;
        if d < 0 { (-n, -d) } else { (n, d) }
    }

    /// The texel `floor(t(p))`, clamped to `0..extent`.
    #[inline]
    fn nearest(&self, p: u32, extent: u32) -> u32 {
        let (n, d) = self.ratio(p, false);
        clamp_index(n.div_euclid(d), extent)
    }

    /// `t(p)`, the source image of destination pixel `p`'s centre, in
    /// texels (what the blitter's quad feeds the sampler).
    #[inline]
    fn coord(&self, p: u32) -> f64 {
        let (n, d) = self.ratio(p, false);
        n as f64 / d as f64
    }

    fn scaled(&self) -> bool {
        self.sw.abs() != self.dw.abs()
    }
}

#[inline]
fn clamp_index(i: i128, extent: u32) -> u32 {
    i.clamp(0, i128::from(extent.max(1) - 1)) as u32
}

/// u_blitter's blend state for `alpha_blend`: `SRC_ALPHA,
/// ONE_MINUS_SRC_ALPHA` with `ADD` on colour and alpha, writing the
/// channels of `mask`.
fn blitter_blend(mask: BlitMask) -> RtBlendState {
    RtBlendState {
        blend_enable: true,
        rgb_func: BlendFunc::Add,
        rgb_src_factor: BlendFactor::SrcAlpha,
        rgb_dst_factor: BlendFactor::InvSrcAlpha,
        alpha_func: BlendFunc::Add,
        alpha_src_factor: BlendFactor::SrcAlpha,
        alpha_dst_factor: BlendFactor::InvSrcAlpha,
        colormask: (mask.bits() & 0xf) as u8,
    }
}

/// `[min, max)` of a signed box span.
fn span(pos: i32, size: i32) -> (i64, i64) {
    let (a, b) = (i64::from(pos), i64::from(pos) + i64::from(size));
    (a.min(b), a.max(b))
}

// ---------------------------------------------------------------------------
// The plan: what a validated blit does
// ---------------------------------------------------------------------------

/// Which source samples feed a destination sample plane.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SrcSel {
    /// One sample plane.
    Sample(u32),
    /// The average of all `n` planes (colour resolve).
    Average(u32),
}

/// How colour channels are written.
#[derive(Clone, Copy, Debug)]
enum Merge {
    /// Whole pixels.
    Full,
    /// Only the bits set here (per byte of the pixel), the rest kept.
    Bits([u8; 16]),
}

/// One pass over the destination rows.
#[derive(Clone, Copy, Debug)]
enum Pass {
    /// Byte copies of whole source pixels (same format, every component).
    Raw,
    /// Nearest blits between 8-bit unorm array formats of one encoding
    /// (both sRGB or neither): every destination byte is a source byte or
    /// a constant ([`byte_permutation`]).
    Bytes8 { perm: [u8; 4], merge: Merge },
    /// Colour through `f32`: filtering, conversion, resolve; with `blend`,
    /// blended and stored by the pipeline's merge stage.
    Float {
        blend: Option<RtBlendState>,
        merge: Merge,
    },
    /// Pure integer colour (nearest): `signed` picks the value type by the
    /// destination.
    Int { signed: bool, merge: Merge },
    /// Depth into the destination's depth bits.
    Depth,
    /// Stencil into the destination's stencil bits.
    Stencil,
}

/// Geometry of a level of a resource, for addressing pixels.
#[derive(Clone, Copy, Debug)]
struct Image {
    /// Byte offset of pixel (0, 0), slice 0, sample 0.
    base: usize,
    row_stride: usize,
    slice_stride: usize,
    sample_stride: usize,
    width: u32,
    height: u32,
    slices: u32,
    samples: u32,
    bpp: usize,
    format: Format,
}

impl Image {
    fn new(res: &PipeResource, level: u32, format: Format) -> Image {
        let l = &res.layout.levels[level as usize];
        Image {
            base: l.offset,
            row_stride: l.row_stride,
            slice_stride: l.slice_stride,
            sample_stride: l.sample_stride,
            width: l.width,
            height: l.height,
            slices: l.depth,
            samples: res.layout.samples.max(1),
            bpp: res.layout.bpp as usize,
            format,
        }
    }

    /// Byte offset of the start of row `y` of slice `z` in sample plane `s`.
    #[inline]
    fn row(&self, y: u32, z: u32, s: u32) -> usize {
        self.base
            + s as usize * self.sample_stride
            + z as usize * self.slice_stride
            + y as usize * self.row_stride
    }
}

/// A validated blit.
#[derive(Debug)]
struct Plan {
    src: Image,
    dst: Image,
    /// Destination pixels written: `x0..x1`, `y0..y1`, slices `z0..z1`.
    x0: u32,
    x1: u32,
    y0: u32,
    y1: u32,
    z0: u32,
    z1: u32,
    ay: Axis,
    az: Axis,
    /// Whether the source is 3D (slices filter like x and y).
    src_3d: bool,
    linear: bool,
    passes: Vec<Pass>,
    /// (source samples, destination sample planes) pairs.
    planes: Vec<(SrcSel, Vec<u32>)>,
    /// Per destination column `x0..x1`: the nearest source column.
    near_x: Vec<u32>,
    /// Per destination column: the texel-space x the sampler filters at
    /// (empty when nearest).
    lin_x: Vec<f64>,
    /// The source as the pipeline's sampler sees it, when linear.
    lin_src: Option<BlitSource>,
}

/// The bits of a `format` pixel holding the RGBA components in `mask`, or
/// `Merge::Full` when every stored component is written.
fn channel_merge(format: Format, mask: BlitMask) -> Merge {
    let d = format.desc();
    let bpp = d.block_bytes as usize;
    let n = d.nr_channels();
    if matches!(format, Format::R9G9B9E5_FLOAT) {
        // A shared exponent: writing some channels rewrites all of them.
        return Merge::Full;
    }
    let mut shift = [0u32; 4];
    let mut acc = 0;
    for (i, s) in shift.iter_mut().enumerate().take(n) {
        *s = acc;
        acc += u32::from(d.channel_bits[i]);
    }
    let mut bits = [0u8; 16];
    let mut all = true;
    for c in 0..4 {
        let stored = d.swizzle[c] as usize;
        if stored >= n {
            continue; // a constant: nothing stored
        }
        if mask.bits() & (1 << c) == 0 {
            all = false;
            continue;
        }
        for b in shift[stored]..shift[stored] + u32::from(d.channel_bits[stored]) {
            bits[(b / 8) as usize] |= 1 << (b % 8);
        }
    }
    if all {
        return Merge::Full;
    }
    bits[bpp..].fill(0);
    Merge::Bits(bits)
}

/// Whether decoding and re-encoding every value of `format` gives back its
/// bytes, so a nearest same-format blit may copy bytes.  Not so for snorm
/// (the most negative code decodes to -1.0 and re-encodes one higher).
fn round_trips(format: Format) -> bool {
    let d = format.desc();
    d.kind != FormatKind::Color || d.channel_type != ChannelType::Snorm
}

/// In [`byte_permutation`]: the destination byte is 0 / 255.
const PERM_ZERO: u8 = 0xf0;
const PERM_ONE: u8 = 0xf1;

/// For 8-bit unorm array formats of one encoding, where each destination
/// byte comes from: a source byte index, [`PERM_ZERO`] or [`PERM_ONE`].
/// Decoding `src` to RGBA and encoding `dst` is exactly this permutation
/// (unorm8 → f32 → unorm8 is the identity, sRGB included, missing channels
/// read 0 and alpha 1, `X` channels store 0), so conversions such as
/// RGBA8 → BGRA8 or R8G8 → RGBA8 skip the float round trip.
fn byte_permutation(src: Format, dst: Format) -> Option<[u8; 4]> {
    let (s, d) = (src.desc(), dst.desc());
    let bytes8 = |f: &ferropipe_components::format::FormatDesc| {
        f.kind == FormatKind::Color
            && !f.packed
            && f.channel_type == ChannelType::Unorm
            && f.channel_bits[..f.nr_channels()].iter().all(|&b| b == 8)
    };
    if !bytes8(s) || !bytes8(d) || s.srgb != d.srgb {
        return None;
    }
    let mut perm = [PERM_ZERO; 4];
    for (j, p) in perm.iter_mut().enumerate().take(d.nr_channels()) {
        // The RGBA component the destination stores in byte j (the first
        // one mapped there, as the packer does), if any.
        let Some(c) = d.swizzle.iter().position(|&w| w as usize == j) else {
            continue;
        };
        *p = match s.swizzle[c] {
            k @ 0..=3 => k,
            5 => PERM_ONE,
            _ => PERM_ZERO,
        };
    }
    Some(perm)
}

fn validate_side(which: &'static str, side: &BlitSide<'_>) -> Result<()> {
    let (f_res, f_level, f_format) = match which {
        "dst" => ("dst.resource", "dst.level", "dst.format"),
        _ => ("src.resource", "src.level", "src.format"),
    };
    let t = side.resource.template();
    if t.target == TextureTarget::Buffer {
        return Err(ResourceError::IsABuffer {
            call: CALL,
            field: f_res,
            hint: "copy buffers with resource_copy_region",
        }
        .into());
    }
    if side.level > t.last_level {
        return Err(ResourceError::LevelOutOfRange {
            call: CALL,
            field: f_level,
            level: side.level,
            last_level: t.last_level,
        }
        .into());
    }
    if !formats_compatible(t.format, side.format) {
        return Err(ResourceError::FormatIncompatible {
            call: CALL,
            field: f_format,
            format: side.format,
            resource_format: t.format,
        }
        .into());
    }
    let b = &side.pbox;
    let slices = side.resource.layout().levels[side.level as usize].depth;
    let (z0, z1) = span(b.z, b.depth);
    if b.depth != 0 && (z0 < 0 || z1 > i64::from(slices)) {
        return Err(ResourceError::BoxOutOfBounds {
            call: CALL,
            field: if which == "dst" {
                "dst.box.z/depth"
            } else {
                "src.box.z/depth"
            },
            pos: z0,
            size: z1 - z0,
            extent: slices,
            level: side.level,
        }
        .into());
    }
    Ok(())
}

impl Plan {
    /// Validates `info` and works out the passes; `None` when nothing is
    /// written (empty boxes, everything clipped or masked off).
    fn new(info: &BlitInfo<'_>) -> Result<Option<Plan>> {
        validate_side("dst", &info.dst)?;
        validate_side("src", &info.src)?;
        let (db, sb) = (&info.dst.pbox, &info.src.pbox);
        if [db.width, db.height, db.depth, sb.width, sb.height, sb.depth].contains(&0) {
            return Ok(None);
        }
        let (dres, sres) = (info.dst.resource.shared(), info.src.resource.shared());
        let dst = Image::new(dres, info.dst.level, info.dst.format);
        let src = Image::new(sres, info.src.level, info.src.format);
        let (dd, sd) = (info.dst.format.desc(), info.src.format.desc());

        // Samples.
        let planes: Vec<(SrcSel, Vec<u32>)> = if src.samples > 1 && dst.samples > 1 {
            if src.samples != dst.samples && !info.sample0_only {
                return Err(ResourceError::SampleCountMismatch {
                    call: CALL,
                    field: "src.resource",
                    dst: dst.samples,
                    src: src.samples,
                }
                .into());
            }
            if info.sample0_only {
                vec![(SrcSel::Sample(0), (0..dst.samples).collect())]
            } else {
                (0..dst.samples)
                    .map(|s| (SrcSel::Sample(s), vec![s]))
                    .collect()
            }
        } else {
            let average = src.samples > 1
                && !info.sample0_only
                && sd.kind == FormatKind::Color
                && !sd.is_integer();
            let sel = if average {
                SrcSel::Average(src.samples)
            } else {
                SrcSel::Sample(0)
            };
            vec![(sel, (0..dst.samples).collect())]
        };

        // What to write.
        let mut passes = Vec::new();
        let colour = info.mask.intersects(BlitMask::RGBA) && dd.kind == FormatKind::Color;
        let depth = info.mask.contains(BlitMask::Z) && dd.has_depth();
        let stencil = info.mask.contains(BlitMask::S) && dd.has_stencil();
        if colour && sd.kind != FormatKind::Color {
            return Err(Error::unsupported(
                CALL,
                format!("blits from {} to {}", info.src.format, info.dst.format),
            ));
        }
        if (depth || stencil) && sd.kind == FormatKind::Color {
            return Err(Error::unsupported(
                CALL,
                format!("blits from {} to {}", info.src.format, info.dst.format),
            ));
        }
        if depth && !sd.has_depth() {
            return Err(ResourceError::MaskWithoutAspect {
                mask: "PIPE_MASK_Z",
                aspect: "depth",
                format: info.src.format,
            }
            .into());
        }
        if stencil && !sd.has_stencil() {
            return Err(ResourceError::MaskWithoutAspect {
                mask: "PIPE_MASK_S",
                aspect: "stencil",
                format: info.src.format,
            }
            .into());
        }
        if colour && sd.is_integer() != dd.is_integer() {
            return Err(ResourceError::IntegerConversion {
                src: info.src.format,
                dst: info.dst.format,
            }
            .into());
        }

        let ax = Axis::new(sb.x, sb.width, db.x, db.width);
        let ay = Axis::new(sb.y, sb.height, db.y, db.height);
        let az = Axis::new(sb.z, sb.depth, db.z, db.depth);
        let scaled = ax.scaled() || ay.scaled() || az.scaled();
        let linear = info.filter == TexFilter::Linear
            && scaled
            && !sd.has_stencil()
            && !(sd.kind == FormatKind::Color && sd.is_integer());

        let colour_merge = if colour {
            channel_merge(info.dst.format, info.mask)
        } else {
            Merge::Full
        };
        let colour = colour && !matches!(colour_merge, Merge::Bits(b) if b == [0; 16]);
        let raw_ok = info.src.format == info.dst.format
            && round_trips(info.src.format)
            && !linear
            && !planes.iter().any(|(s, _)| matches!(s, SrcSel::Average(_)));
        if colour {
            let blend = info.alpha_blend
                && !dd.is_integer()
                && merge::render_target_supported(info.dst.format);
            let nearest = !linear && matches!(planes[0].0, SrcSel::Sample(_));
            let perm = byte_permutation(info.src.format, info.dst.format);
            if raw_ok && !blend && matches!(colour_merge, Merge::Full) {
                passes.push(Pass::Raw);
            } else if let (Some(perm), true, false) = (perm, nearest, blend) {
                passes.push(Pass::Bytes8 {
                    perm,
                    merge: colour_merge,
                });
            } else if dd.is_integer() {
                passes.push(Pass::Int {
                    signed: dd.channel_type == ChannelType::Sint,
                    merge: colour_merge,
                });
            } else {
                passes.push(Pass::Float {
                    blend: blend.then(|| blitter_blend(info.mask)),
                    merge: colour_merge,
                });
            }
        } else if depth || stencil {
            let every = depth == dd.has_depth() && stencil == dd.has_stencil();
            if raw_ok && every {
                passes.push(Pass::Raw);
            } else {
                if depth {
                    passes.push(Pass::Depth);
                }
                if stencil {
                    passes.push(Pass::Stencil);
                }
            }
        }
        if passes.is_empty() {
            return Ok(None);
        }

        // The destination rectangle: the box, clipped to the level and the
        // scissor.
        let clip = |(a, b): (i64, i64), lo: i64, hi: i64| (a.max(lo), b.min(hi));
        let (mut x0, mut x1) = clip(span(db.x, db.width), 0, dst.width.into());
        let (mut y0, mut y1) = clip(span(db.y, db.height), 0, dst.height.into());
        let (z0, z1) = span(db.z, db.depth);
        if info.scissor_enable {
            let s = &info.scissor;
            (x0, x1) = clip((x0, x1), s.minx.into(), s.maxx.into());
            (y0, y1) = clip((y0, y1), s.miny.into(), s.maxy.into());
        }
        if x0 >= x1 || y0 >= y1 {
            return Ok(None);
        }
        let (x0, x1, y0, y1) = (x0 as u32, x1 as u32, y0 as u32, y1 as u32);

        let near_x: Vec<u32> = (x0..x1).map(|x| ax.nearest(x, src.width)).collect();
        let src_3d = info.src.resource.template().target == TextureTarget::Texture3D;
        let (lin_x, lin_src) = if linear {
            let image = BlitImage {
                width: src.width,
                height: src.height,
                depth: if src_3d { src.slices } else { 1 },
                row_stride: src.row_stride,
                slice_stride: src.slice_stride,
            };
            let xs = (x0..x1).map(|x| ax.coord(x)).collect();
            (
                xs,
                Some(BlitSource::new(src.format, image, TexFilter::Linear)),
            )
        } else {
            (Vec::new(), None)
        };
        Ok(Some(Plan {
            src,
            dst,
            x0,
            x1,
            y0,
            y1,
            z0: z0 as u32,
            z1: z1 as u32,
            ay,
            az,
            src_3d,
            linear,
            passes,
            planes,
            near_x,
            lin_x,
            lin_src,
        }))
    }

    fn nx(&self) -> usize {
        (self.x1 - self.x0) as usize
    }
}

// ---------------------------------------------------------------------------
// Row kernels
// ---------------------------------------------------------------------------

/// Per-job scratch buffers (reused from row to row).
#[derive(Default)]
struct Scratch {
    bytes: Vec<u8>,
    out_bytes: Vec<u8>,
    vals: Vec<[f32; 4]>,
    acc: Vec<[f32; 4]>,
    ints_u: Vec<[u32; 4]>,
    ints_i: Vec<[i32; 4]>,
    zs: Vec<f32>,
    st: Vec<u8>,
}

/// Copies the source pixels `cols` of a row (starting at byte `row`) into
/// `out`, `bpp` bytes each.
#[inline]
fn gather(src: &[u8], row: usize, cols: &[u32], bpp: usize, out: &mut [u8]) {
    let contiguous = cols.windows(2).all(|w| w[1] == w[0] + 1);
    if contiguous && let Some(&c0) = cols.first() {
        let at = row + c0 as usize * bpp;
        let n = cols.len() * bpp;
        out[..n].copy_from_slice(&src[at..at + n]);
        return;
    }
    match bpp {
        4 => {
            for (o, &c) in out.chunks_exact_mut(4).zip(cols) {
                let at = row + c as usize * 4;
                o.copy_from_slice(&src[at..at + 4]);
            }
        }
        _ => {
            for (o, &c) in out.chunks_exact_mut(bpp).zip(cols) {
                let at = row + c as usize * bpp;
                o.copy_from_slice(&src[at..at + bpp]);
            }
        }
    }
}

/// Writes `new` pixels into `dst`, only the bits in `merge`.
#[inline]
fn merge_into(dst: &mut [u8], new: &[u8], merge: Merge, bpp: usize) {
    match merge {
        Merge::Full => dst[..new.len()].copy_from_slice(new),
        Merge::Bits(m) => {
            for (d, n) in dst.chunks_exact_mut(bpp).zip(new.chunks_exact(bpp)) {
                for i in 0..bpp {
                    d[i] = (d[i] & !m[i]) | (n[i] & m[i]);
                }
            }
        }
    }
}

/// Applies a [`byte_permutation`] to a row of `sbpp`-byte pixels.
fn permute_bytes(src: &[u8], sbpp: usize, perm: [u8; 4], out: &mut [u8], dbpp: usize) {
    let pick = |p: &[u8], k: u8| match k {
        0..=3 => p[k as usize],
        PERM_ONE => 0xff,
        _ => 0,
    };
    if sbpp == 4 && dbpp == 4 {
        for (o, p) in out.chunks_exact_mut(4).zip(src.chunks_exact(4)) {
            let p = [p[0], p[1], p[2], p[3]];
            o.copy_from_slice(&perm.map(|k| pick(&p, k)));
        }
        return;
    }
    for (o, p) in out.chunks_exact_mut(dbpp).zip(src.chunks_exact(sbpp)) {
        for (d, &k) in o.iter_mut().zip(&perm) {
            *d = pick(p, k);
        }
    }
}

impl Plan {
    /// The source pixels (bytes) that nearest sampling picks for
    /// destination row `y`, slice `z`, from sample plane `s`.
    fn gather_nearest(&self, src: &[u8], s: u32, y: u32, z: u32, out: &mut Vec<u8>) {
        let sy = self.ay.nearest(y, self.src.height);
        let sz = self.az.nearest(z, self.src.slices);
        out.resize(self.nx() * self.src.bpp, 0);
        gather(
            src,
            self.src.row(sy, sz, s),
            &self.near_x,
            self.src.bpp,
            out,
        );
    }

    /// The `f32` values of destination row `y`, slice `z` (into
    /// `sc.vals`), sampled from `src`: nearest texels decoded by `pack.rs`,
    /// linear filtering by the pipeline's sampler, resolves averaged by the
    /// blitter's resolve arithmetic (`ferropipe_systems::blit`).
    fn sample_row_f32(&self, src: &[u8], sel: SrcSel, y: u32, z: u32, sc: &mut Scratch) {
        let nx = self.nx();
        sc.vals.clear();
        sc.vals.resize(nx, [0.0; 4]);
        let mut vals = std::mem::take(&mut sc.vals);
        let mut acc = std::mem::take(&mut sc.acc);
        match sel {
            SrcSel::Sample(s) => self.sample_plane_f32(src, s, y, z, &mut vals, sc),
            SrcSel::Average(count) => resolve_average(
                &mut vals,
                count as usize,
                |s, out| self.sample_plane_f32(src, s as u32, y, z, out, sc),
                &mut acc,
            ),
        }
        sc.vals = vals;
        sc.acc = acc;
    }

    /// [`Self::sample_row_f32`] from sample plane `s`, into `out`.
    fn sample_plane_f32(
        &self,
        src: &[u8],
        s: u32,
        y: u32,
        z: u32,
        out: &mut [[f32; 4]],
        sc: &mut Scratch,
    ) {
        let Some(lin) = &self.lin_src else {
            self.gather_nearest(src, s, y, z, &mut sc.bytes);
            pack::unpack_rgba_f32_row(self.src.format, &sc.bytes, out);
            return;
        };
        // The image the sampler reads: the whole level of a 3D source (its
        // slices filter), else the one slice the layer rule picks.
        let (slice, tz) = if self.src_3d {
            (0, self.az.coord(z))
        } else {
            (self.az.nearest(z, self.src.slices), 0.5)
        };
        let at = self.src.row(0, slice, s);
        if let Some(sampler) = lin.sampler(&src[at..]) {
            sampler.sample_row(&self.lin_x, self.ay.coord(y), tz, out);
        }
    }

    /// Runs every pass for destination row `y`, slice `z`; `row` holds the
    /// destination pixels `x0..x1` of that row.
    fn run_row(&self, src: &[u8], sel: SrcSel, y: u32, z: u32, row: &mut [u8], sc: &mut Scratch) {
        let nx = self.nx();
        let dbpp = self.dst.bpp;
        for pass in &self.passes {
            match *pass {
                Pass::Raw => {
                    // Straight into the destination row.
                    let SrcSel::Sample(s) = sel else { continue };
                    let sy = self.ay.nearest(y, self.src.height);
                    let sz = self.az.nearest(z, self.src.slices);
                    gather(
                        src,
                        self.src.row(sy, sz, s),
                        &self.near_x,
                        self.src.bpp,
                        row,
                    );
                }
                Pass::Bytes8 { perm, merge } => {
                    let SrcSel::Sample(s) = sel else { continue };
                    self.gather_nearest(src, s, y, z, &mut sc.bytes);
                    sc.out_bytes.resize(nx * dbpp, 0);
                    permute_bytes(&sc.bytes, self.src.bpp, perm, &mut sc.out_bytes, dbpp);
                    merge_into(row, &sc.out_bytes, merge, dbpp);
                }
                Pass::Float { blend, merge } => {
                    self.sample_row_f32(src, sel, y, z, sc);
                    if let Some(rt) = &blend {
                        // The pipeline's blend and store (the blitter's
                        // blend state, the blit's channel mask).
                        let done = merge::blend_store_row(rt, self.dst.format, &sc.vals, row);
                        debug_assert!(done, "blend planned for {}", self.dst.format);
                        continue;
                    }
                    match merge {
                        Merge::Full => {
                            pack::pack_rgba_f32_row(self.dst.format, &sc.vals, row);
                        }
                        Merge::Bits(_) => {
                            sc.out_bytes.resize(nx * dbpp, 0);
                            pack::pack_rgba_f32_row(self.dst.format, &sc.vals, &mut sc.out_bytes);
                            merge_into(row, &sc.out_bytes, merge, dbpp);
                        }
                    }
                }
                Pass::Int { signed, merge } => {
                    let SrcSel::Sample(s) = sel else { continue };
                    self.gather_nearest(src, s, y, z, &mut sc.bytes);
                    sc.out_bytes.resize(nx * dbpp, 0);
                    if signed {
                        sc.ints_i.resize(nx, [0; 4]);
                        pack::unpack_rgba_i32_row(self.src.format, &sc.bytes, &mut sc.ints_i);
                        pack::pack_rgba_i32_row(self.dst.format, &sc.ints_i, &mut sc.out_bytes);
                    } else {
                        sc.ints_u.resize(nx, [0; 4]);
                        pack::unpack_rgba_u32_row(self.src.format, &sc.bytes, &mut sc.ints_u);
                        pack::pack_rgba_u32_row(self.dst.format, &sc.ints_u, &mut sc.out_bytes);
                    }
                    merge_into(row, &sc.out_bytes, merge, dbpp);
                }
                Pass::Depth => {
                    if self.linear {
                        // Depth-only sources filter like colour (R = depth).
                        self.sample_row_f32(src, sel, y, z, sc);
                        sc.zs.clear();
                        sc.zs.extend(sc.vals.iter().map(|v| v[0]));
                    } else {
                        let SrcSel::Sample(s) = sel else { continue };
                        self.gather_nearest(src, s, y, z, &mut sc.bytes);
                        sc.zs.resize(nx, 0.0);
                        pack::unpack_z_row(self.src.format, &sc.bytes, &mut sc.zs);
                    }
                    pack::pack_z_row(self.dst.format, &sc.zs, row);
                }
                Pass::Stencil => {
                    let SrcSel::Sample(s) = sel else { continue };
                    self.gather_nearest(src, s, y, z, &mut sc.bytes);
                    sc.st.resize(nx, 0);
                    pack::unpack_s_row(self.src.format, &sc.bytes, &mut sc.st);
                    pack::pack_s_row(self.dst.format, &sc.st, row);
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Execution
// ---------------------------------------------------------------------------

/// Destination pixels per job below which a blit runs on the calling
/// thread: about 64 K pixels (a 256x256 block) is where handing rows to
/// workers starts to pay for the wake-ups.
const PARALLEL_MIN_PIXELS: usize = 1 << 16;

/// A run of destination rows `y0..y1` of slice `z`.
#[derive(Clone, Copy, Debug)]
struct RowJob {
    z: u32,
    y0: u32,
    y1: u32,
}

impl Plan {
    /// Splits the destination rows into jobs of whole rows within a slice.
    fn jobs(&self, threads: usize) -> Vec<RowJob> {
        let rows = (self.y1 - self.y0) as usize;
        let slices = (self.z1 - self.z0) as usize;
        let pixels = self.nx() * rows * slices;
        let want = if threads <= 1 || pixels < PARALLEL_MIN_PIXELS {
            1
        } else {
            // A few jobs per worker evens out the load.
            (threads * 4).min(rows * slices)
        };
        let per_slice = want.div_ceil(slices).max(1);
        let chunk = rows.div_ceil(per_slice).max(1) as u32;
        let mut jobs = Vec::new();
        for z in self.z0..self.z1 {
            let mut y = self.y0;
            while y < self.y1 {
                let y1 = (y + chunk).min(self.y1);
                jobs.push(RowJob { z, y0: y, y1 });
                y = y1;
            }
        }
        jobs
    }

    /// Runs the blit: `src` holds the source image (`self.src`'s offsets),
    /// `dst` the destination storage.
    fn execute(&self, src: &[u8], dst: &mut [u8], exec: &dyn Executor) {
        let jobs = self.jobs(exec.threads());
        let dbpp = self.dst.bpp;
        let x_off = self.x0 as usize * dbpp;
        let row_len = self.nx() * dbpp;
        for (sel, planes) in &self.planes {
            // Byte ranges of (job, plane), disjoint and in storage order
            // once sorted: rows of one slice of one plane are contiguous.
            let mut ranges: Vec<(usize, usize, usize)> = Vec::new();
            for (j, job) in jobs.iter().enumerate() {
                for (pi, &p) in planes.iter().enumerate() {
                    let start = self.dst.row(job.y0, job.z, p) + x_off;
                    let end = self.dst.row(job.y1 - 1, job.z, p) + x_off + row_len;
                    ranges.push((start, end, j * planes.len() + pi));
                }
            }
            ranges.sort_by_key(|r| r.0);
            let mut slots: Vec<Option<&mut [u8]>> = (0..ranges.len()).map(|_| None).collect();
            let mut rest = &mut *dst;
            let mut consumed = 0usize;
            for &(start, end, slot) in &ranges {
                let (_, tail) = std::mem::take(&mut rest).split_at_mut(start - consumed);
                let (mine, tail) = tail.split_at_mut(end - start);
                slots[slot] = Some(mine);
                rest = tail;
                consumed = end;
            }
            let per_job: Vec<Mutex<Vec<&mut [u8]>>> = slots
                .chunks_mut(planes.len())
                .map(|c| Mutex::new(c.iter_mut().filter_map(Option::take).collect()))
                .collect();
            let run = |j: usize| {
                // One scope per row job (a few per worker), on the thread
                // that runs it.
                ferropipe_profiling::scope!("blit_rows");
                let job = jobs[j];
                let mut bufs = per_job[j].lock().unwrap_or_else(|e| e.into_inner());
                let mut sc = Scratch::default();
                for buf in bufs.iter_mut() {
                    for y in job.y0..job.y1 {
                        let at = (y - job.y0) as usize * self.dst.row_stride;
                        self.run_row(src, *sel, y, job.z, &mut buf[at..at + row_len], &mut sc);
                    }
                }
            };
            if jobs.len() == 1 {
                run(0);
            } else {
                exec.for_each(jobs.len(), &run);
            }
        }
    }
}

impl Context {
    /// `blit`: copies `info.src.box` to `info.dst.box` with scaling,
    /// filtering, format conversion, masks, MSAA resolve and the scissor
    /// (module docs).  With `render_condition_enable` it obeys
    /// `render_condition`.
    pub fn blit(&mut self, info: &BlitInfo<'_>) -> Result<()> {
        self.alive("blit")?;
        let Some(plan) = Plan::new(info)? else {
            return Ok(());
        };
        self.record(super::CapturedCall::Blit(info));
        if info.render_condition_enable && !self.render_condition_passes()? {
            return Ok(());
        }
        self.flush_recorded()?;
        // After the flush, so the scope holds the blit alone; a resolve
        // (multisampled source) is named apart, as the frame's MSAA cost.
        if plan.src.samples > 1 && plan.dst.samples == 1 {
            ferropipe_profiling::scope!("msaa_resolve");
            self.run_blit(info, plan);
        } else {
            ferropipe_profiling::scope!("blit");
            self.run_blit(info, plan);
        }
        Ok(())
    }

    /// Runs a planned blit under the resources' locks.
    fn run_blit(&self, info: &BlitInfo<'_>, plan: Plan) {
        let exec = self.screen.executor().clone();
        let (d, s) = (info.dst.resource.shared(), info.src.resource.shared());
        if Arc::ptr_eq(d, s) {
            // One lock: stage the source level, then write.
            let mut w = d.storage.write();
            let l = &s.layout.levels[info.src.level as usize];
            let len = l.sample_stride * plan.src.samples as usize;
            let staged = w[l.offset..l.offset + len].to_vec();
            let mut plan = plan;
            plan.src.base = 0;
            plan.execute(&staged, &mut w, exec.as_ref());
        } else {
            lock_pair(s, d, |src, dst| plan.execute(src, dst, exec.as_ref()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::{msaa, read_level as read, setup};
    use crate::{Screen, ScreenConfig};
    use ferropipe_components::enums::BindFlags;
    use ferropipe_components::resource::ResourceTemplate;

    fn tex2d(s: &Screen, format: Format, w: u32, h: u32) -> Resource {
        s.resource_create(&ResourceTemplate::texture_2d(
            format,
            w,
            h,
            BindFlags::SAMPLER_VIEW | BindFlags::RENDER_TARGET,
        ))
        .unwrap()
    }

    fn upload(c: &mut Context, r: &Resource, level: u32, bytes: &[u8]) {
        let l = r.layout().levels[level as usize];
        let b = PipeBox::new_3d(0, 0, 0, l.width as i32, l.height as i32, l.depth as i32);
        c.texture_subdata(r, level, &b, bytes, 0, 0).unwrap();
    }

    /// A deterministic pseudo-random byte pattern.
    fn pattern(n: usize, seed: u32) -> Vec<u8> {
        let mut x = seed.wrapping_mul(2_654_435_761).wrapping_add(12345);
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                (x >> 8) as u8
            })
            .collect()
    }

    /// Independent model of the mapping in f64: the source coordinate of
    /// destination pixel `p`'s centre (ties are exact in these tests'
    /// power-of-two and small-integer ratios).
    fn model_t(p: i32, d0: i32, dw: i32, s0: i32, sw: i32) -> f64 {
        f64::from(s0) + (f64::from(p) + 0.5 - f64::from(d0)) * f64::from(sw) / f64::from(dw)
    }

    fn model_nearest(t: f64, extent: u32) -> u32 {
        (t.floor().max(0.0) as u32).min(extent - 1)
    }

    fn blit2d(
        c: &mut Context,
        dst: &Resource,
        db: PipeBox,
        src: &Resource,
        sb: PipeBox,
        filter: TexFilter,
    ) {
        let mut info = BlitInfo::new(BlitSide::new(dst, 0, db), BlitSide::new(src, 0, sb));
        info.filter = filter;
        c.blit(&info).unwrap();
    }

    #[test]
    fn nearest_scaling_and_mirroring_follow_pixel_centres() {
        let (s, mut c) = setup();
        let (sw, sh) = (13u32, 9u32);
        let src = tex2d(&s, Format::R8G8B8A8_UNORM, sw, sh);
        let data = pattern((sw * sh * 4) as usize, 1);
        upload(&mut c, &src, 0, &data);
        // (dst box, src box): magnify, minify by non-integer factors,
        // mirror on either side, boxes partly outside the source.
        let cases = [
            (PipeBox::new_2d(0, 0, 26, 18), PipeBox::new_2d(0, 0, 13, 9)),
            (PipeBox::new_2d(3, 2, 7, 5), PipeBox::new_2d(1, 1, 11, 7)),
            (
                PipeBox::new_2d(0, 0, 20, 10),
                PipeBox::new_2d(13, 9, -13, -9),
            ),
            (
                PipeBox::new_2d(20, 12, -20, -12),
                PipeBox::new_2d(2, 0, 8, 9),
            ),
            (
                PipeBox::new_2d(1, 1, 30, 17),
                PipeBox::new_2d(-3, -2, 20, 14),
            ),
        ];
        for (db, sb) in cases {
            let dst = tex2d(&s, Format::R8G8B8A8_UNORM, 32, 20);
            blit2d(&mut c, &dst, db, &src, sb, TexFilter::Nearest);
            let out = read(&mut c, &dst, 0);
            for y in 0..20 {
                for x in 0..32 {
                    let got = &out[((y * 32 + x) * 4) as usize..][..4];
                    let (dx0, dx1) = span(db.x, db.width);
                    let (dy0, dy1) = span(db.y, db.height);
                    let inside =
                        (dx0..dx1).contains(&i64::from(x)) && (dy0..dy1).contains(&i64::from(y));
                    if !inside {
                        assert_eq!(got, &[0; 4], "{db:?} {sb:?} outside at {x},{y}");
                        continue;
                    }
                    let tx = model_t(x, db.x, db.width, sb.x, sb.width);
                    let ty = model_t(y, db.y, db.height, sb.y, sb.height);
                    let (ix, iy) = (model_nearest(tx, sw), model_nearest(ty, sh));
                    let want = &data[((iy * sw + ix) * 4) as usize..][..4];
                    assert_eq!(got, want, "{db:?} {sb:?} at {x},{y}");
                }
            }
        }
        // Exact ties: a 2:1 minification samples on texel edges and takes
        // the upper texel (floor of the exact centre), a mirrored one the
        // mirror image.
        let dst = tex2d(&s, Format::R8G8B8A8_UNORM, 6, 1);
        blit2d(
            &mut c,
            &dst,
            PipeBox::new_2d(0, 0, 6, 1),
            &src,
            PipeBox::new_2d(0, 0, 12, 1),
            TexFilter::Nearest,
        );
        let out = read(&mut c, &dst, 0);
        for x in 0..6 {
            assert_eq!(out[x * 4..x * 4 + 4], data[(2 * x + 1) * 4..][..4]);
        }
        blit2d(
            &mut c,
            &dst,
            PipeBox::new_2d(0, 0, 6, 1),
            &src,
            PipeBox::new_2d(12, 0, -12, 1),
            TexFilter::Nearest,
        );
        let out = read(&mut c, &dst, 0);
        for x in 0..6 {
            assert_eq!(out[x * 4..x * 4 + 4], data[(11 - 2 * x) * 4..][..4]);
        }
    }

    #[test]
    fn linear_filtering_is_bilinear_at_texel_centres_with_edge_clamp() {
        let (s, mut c) = setup();
        let (sw, sh) = (7u32, 5u32);
        let src = tex2d(&s, Format::R32G32B32A32_FLOAT, sw, sh);
        let vals: Vec<f32> = (0..sw * sh * 4)
            .map(|i| ((i * 37) % 101) as f32 * 0.25)
            .collect();
        let bytes: Vec<u8> = vals.iter().flat_map(|v| v.to_le_bytes()).collect();
        upload(&mut c, &src, 0, &bytes);
        let texel = |x: i64, y: i64, ch: usize| {
            let x = x.clamp(0, i64::from(sw) - 1) as u32;
            let y = y.clamp(0, i64::from(sh) - 1) as u32;
            f64::from(vals[((y * sw + x) * 4) as usize + ch])
        };
        let cases = [
            (PipeBox::new_2d(0, 0, 23, 17), PipeBox::new_2d(0, 0, 7, 5)),
            (PipeBox::new_2d(2, 1, 19, 13), PipeBox::new_2d(6, 4, -5, -3)),
            (PipeBox::new_2d(0, 0, 5, 3), PipeBox::new_2d(1, 1, 6, 4)),
        ];
        for (db, sb) in cases {
            let dst = tex2d(&s, Format::R32G32B32A32_FLOAT, 24, 18);
            blit2d(&mut c, &dst, db, &src, sb, TexFilter::Linear);
            let out = read(&mut c, &dst, 0);
            let (dx0, dx1) = span(db.x, db.width);
            let (dy0, dy1) = span(db.y, db.height);
            for y in dy0 as i32..dy1 as i32 {
                for x in dx0 as i32..dx1 as i32 {
                    let u = model_t(x, db.x, db.width, sb.x, sb.width) - 0.5;
                    let v = model_t(y, db.y, db.height, sb.y, sb.height) - 0.5;
                    let (i, j) = (u.floor() as i64, v.floor() as i64);
                    let (a, b) = (u - u.floor(), v - v.floor());
                    for ch in 0..4 {
                        let top = texel(i, j, ch) * (1.0 - a) + texel(i + 1, j, ch) * a;
                        let bot = texel(i, j + 1, ch) * (1.0 - a) + texel(i + 1, j + 1, ch) * a;
                        let want = top * (1.0 - b) + bot * b;
                        let at = ((y as usize * 24 + x as usize) * 4 + ch) * 4;
                        let got = f32::from_le_bytes(out[at..at + 4].try_into().unwrap());
                        assert!(
                            (f64::from(got) - want).abs() < 1e-4,
                            "{db:?} {sb:?} at {x},{y}.{ch}: {got} vs {want}"
                        );
                    }
                }
            }
        }
        // Unscaled LINEAR is NEAREST (u_blitter): an exact copy even of an
        // interior box, whose neighbours would otherwise bleed in.
        let dst = tex2d(&s, Format::R32G32B32A32_FLOAT, 3, 2);
        blit2d(
            &mut c,
            &dst,
            PipeBox::new_2d(0, 0, 3, 2),
            &src,
            PipeBox::new_2d(2, 1, 3, 2),
            TexFilter::Linear,
        );
        let out = read(&mut c, &dst, 0);
        assert_eq!(&out[..48], &bytes[(7 + 2) * 16..][..48]);
    }

    #[test]
    fn formats_convert_with_srgb_swizzles_and_missing_channels() {
        let (s, mut c) = setup();
        let px = |c: &mut Context, src_f: Format, bytes: &[u8], dst_f: Format| {
            let src = tex2d(&s, src_f, 1, 1);
            let dst = tex2d(&s, dst_f, 1, 1);
            upload(c, &src, 0, bytes);
            blit2d(
                c,
                &dst,
                PipeBox::new_2d(0, 0, 1, 1),
                &src,
                PipeBox::new_2d(0, 0, 1, 1),
                TexFilter::Nearest,
            );
            read(c, &dst, 0)
        };
        use Format::*;
        let f32s = |v: [f32; 4]| -> Vec<u8> { v.iter().flat_map(|x| x.to_le_bytes()).collect() };
        let cases: Vec<(Format, Vec<u8>, Format, Vec<u8>)> = vec![
            // BGRA → RGBA swaps; R8G8 → RGBA fills B = 0, A = 1.
            (
                B8G8R8A8_UNORM,
                vec![1, 2, 3, 4],
                R8G8B8A8_UNORM,
                vec![3, 2, 1, 4],
            ),
            (R8G8_UNORM, vec![9, 8], R8G8B8A8_UNORM, vec![9, 8, 0, 255]),
            // sRGB decodes on read and encodes on write: 188 ≈ 0.5 linear.
            (
                R8G8B8A8_SRGB,
                vec![188, 0, 255, 128],
                R8G8B8A8_UNORM,
                vec![128, 0, 255, 128],
            ),
            (
                R8G8B8A8_UNORM,
                vec![128, 0, 255, 128],
                R8G8B8A8_SRGB,
                vec![188, 0, 255, 128],
            ),
            // Float → unorm clamps.
            (
                R32G32B32A32_FLOAT,
                f32s([2.0, -1.0, 0.5, 1.0]),
                R8G8B8A8_UNORM,
                vec![255, 0, 128, 255],
            ),
            // Integers: UINT → SINT clamps to the destination's range, SINT
            // → UINT clamps negatives to 0.
            (
                R8G8B8A8_UINT,
                vec![200, 100, 0, 255],
                R8G8B8A8_SINT,
                vec![127, 100, 0, 127],
            ),
            (
                R8G8B8A8_SINT,
                vec![0xff, 5, 0x80, 0x7f],
                R16G16B16A16_UINT,
                vec![0, 0, 5, 0, 0, 0, 127, 0],
            ),
            // Snorm stays snorm: -128 reads -1.0 and writes -127 (no byte
            // copy).
            (
                R8G8B8A8_SNORM,
                vec![0x80, 1, 2, 3],
                R8G8B8A8_SNORM,
                vec![0x81, 1, 2, 3],
            ),
        ];
        for (sf, bytes, df, want) in cases {
            assert_eq!(px(&mut c, sf, &bytes, df), want, "{sf} → {df}");
        }
        // unorm → half float.
        let h = px(
            &mut c,
            Format::R8G8B8A8_UNORM,
            &[255, 0, 51, 255],
            Format::R16G16B16A16_FLOAT,
        );
        let half = |i: usize| pack::f16_to_f32(u16::from_le_bytes([h[2 * i], h[2 * i + 1]]));
        assert_eq!([half(0), half(1), half(3)], [1.0, 0.0, 1.0]);
        assert!((half(2) - 0.2).abs() < 1e-3);
    }

    #[test]
    fn byte_permutations_equal_decode_then_encode() {
        let mut pairs = 0;
        for &sf in Format::ALL {
            for &df in Format::ALL {
                let Some(perm) = byte_permutation(sf, df) else {
                    continue;
                };
                pairs += 1;
                let (sb, db) = (
                    sf.desc().block_bytes as usize,
                    df.desc().block_bytes as usize,
                );
                let src = pattern(sb * 64, sb as u32 * 31 + db as u32);
                let mut out = vec![0u8; db * 64];
                permute_bytes(&src, sb, perm, &mut out, db);
                for i in 0..64 {
                    let mut want = vec![0u8; db];
                    pack::pack_rgba_f32(
                        df,
                        pack::unpack_rgba_f32(sf, &src[i * sb..][..sb]),
                        &mut want,
                    );
                    assert_eq!(&out[i * db..][..db], &want[..], "{sf} → {df}");
                }
            }
        }
        // RGBA/BGRA/RGBX/ARGB/ABGR/L/A/I/LA/R/RG/RGB, linear and sRGB.
        assert!(pairs > 150, "{pairs}");
        assert!(byte_permutation(Format::R8G8B8A8_SRGB, Format::R8G8B8A8_UNORM).is_none());
        assert!(byte_permutation(Format::R8G8B8A8_SNORM, Format::R8G8B8A8_UNORM).is_none());
    }

    #[test]
    fn masks_scissor_clipping_and_alpha_blend() {
        let (s, mut c) = setup();
        let src = tex2d(&s, Format::R8G8B8A8_UNORM, 4, 4);
        upload(&mut c, &src, 0, &[200; 64]);
        let dst = tex2d(&s, Format::B8G8R8A8_UNORM, 8, 8);
        upload(&mut c, &dst, 0, &[10; 256]);
        // Only G and A; the box reaches outside the destination; scissor.
        let mut info = BlitInfo::new(
            BlitSide::new(&dst, 0, PipeBox::new_2d(-4, 2, 16, 8)),
            BlitSide::new(&src, 0, PipeBox::new_2d(0, 0, 4, 4)),
        );
        info.mask = BlitMask::G | BlitMask::A;
        info.scissor_enable = true;
        info.scissor = ScissorState {
            minx: 1,
            miny: 3,
            maxx: 6,
            maxy: 100,
        };
        c.blit(&info).unwrap();
        let out = read(&mut c, &dst, 0);
        for y in 0..8 {
            for x in 0..8 {
                let p = &out[(y * 8 + x) * 4..][..4];
                let hit = (1..6).contains(&x) && (3..8).contains(&y);
                // BGRA storage: B, G, R, A.
                let want = if hit { [10, 200, 10, 200] } else { [10; 4] };
                assert_eq!(p, want, "{x},{y}");
            }
        }
        // Alpha blending: src (r=1, a=0.5) over dst 0.
        let a = tex2d(&s, Format::R32G32B32A32_FLOAT, 1, 1);
        let f: Vec<u8> = [1.0f32, 0.0, 0.0, 0.5]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        upload(&mut c, &a, 0, &f);
        let d = tex2d(&s, Format::R8G8B8A8_UNORM, 1, 1);
        upload(&mut c, &d, 0, &[0, 0, 255, 255]);
        let mut info = BlitInfo::new(
            BlitSide::new(&d, 0, PipeBox::new_2d(0, 0, 1, 1)),
            BlitSide::new(&a, 0, PipeBox::new_2d(0, 0, 1, 1)),
        );
        info.alpha_blend = true;
        c.blit(&info).unwrap();
        // The merge stage's RGBA8 blend, llvmpipe's byte arithmetic (as a
        // draw with this blend state): alpha 0.5 is byte 128, so
        // r = 255 * 128 / 255 = 128, b = 255 * (255 - 128) / 255 = 127,
        // a = 128 * 128 / 255 + 255 * 127 / 255 = 64 + 127 (each product
        // rounded as `lp_build_mul_norm`).
        assert_eq!(read(&mut c, &d, 0), [128, 0, 127, 191]);
    }

    #[test]
    fn depth_and_stencil_blits_write_only_their_bits() {
        let (s, mut c) = setup();
        let zs = |f: Format, w: u32, h: u32| {
            s.resource_create(&ResourceTemplate::texture_2d(
                f,
                w,
                h,
                BindFlags::DEPTH_STENCIL | BindFlags::SAMPLER_VIEW,
            ))
            .unwrap()
        };
        let src = zs(Format::Z24_UNORM_S8_UINT, 2, 2);
        let mut bytes = vec![0u8; 16];
        for (i, (z, st)) in [(0.25f32, 1u8), (0.5, 2), (0.75, 3), (1.0, 4)]
            .iter()
            .enumerate()
        {
            pack::pack_z(Format::Z24_UNORM_S8_UINT, *z, &mut bytes[i * 4..]);
            pack::pack_s(Format::Z24_UNORM_S8_UINT, *st, &mut bytes[i * 4..]);
        }
        upload(&mut c, &src, 0, &bytes);
        let dst = zs(Format::Z32_FLOAT_S8X24_UINT, 2, 2);
        let mut init = vec![0u8; 32];
        for i in 0..4 {
            pack::pack_z(Format::Z32_FLOAT_S8X24_UINT, 0.125, &mut init[i * 8..]);
            pack::pack_s(Format::Z32_FLOAT_S8X24_UINT, 9, &mut init[i * 8..]);
        }
        upload(&mut c, &dst, 0, &init);
        let b = PipeBox::new_2d(0, 0, 2, 2);
        let mut info = BlitInfo::new(BlitSide::new(&dst, 0, b), BlitSide::new(&src, 0, b));
        info.mask = BlitMask::Z;
        c.blit(&info).unwrap();
        let out = read(&mut c, &dst, 0);
        let f = Format::Z32_FLOAT_S8X24_UINT;
        let zz: Vec<f32> = (0..4).map(|i| pack::unpack_z(f, &out[i * 8..])).collect();
        let ss: Vec<u8> = (0..4).map(|i| pack::unpack_s(f, &out[i * 8..])).collect();
        for (got, want) in zz.iter().zip([0.25f32, 0.5, 0.75, 1.0]) {
            assert!((got - want).abs() < 1e-7);
        }
        assert_eq!(ss, [9; 4]);
        info.mask = BlitMask::S;
        c.blit(&info).unwrap();
        let out = read(&mut c, &dst, 0);
        let ss: Vec<u8> = (0..4).map(|i| pack::unpack_s(f, &out[i * 8..])).collect();
        assert_eq!(ss, [1, 2, 3, 4]);
        // Same format, both components, mirrored: a byte copy.
        let dst2 = zs(Format::Z24_UNORM_S8_UINT, 2, 2);
        let mut info = BlitInfo::new(
            BlitSide::new(&dst2, 0, PipeBox::new_2d(2, 0, -2, 2)),
            BlitSide::new(&src, 0, b),
        );
        info.filter = TexFilter::Linear; // stencil sources never filter
        c.blit(&info).unwrap();
        let out = read(&mut c, &dst2, 0);
        assert_eq!(out[..4], bytes[4..8]);
        assert_eq!(out[4..8], bytes[..4]);
        // Depth-only sources filter when scaled.
        let z = zs(Format::Z32_FLOAT, 2, 1);
        let zb: Vec<u8> = [0.0f32, 1.0].iter().flat_map(|v| v.to_le_bytes()).collect();
        upload(&mut c, &z, 0, &zb);
        let z4 = zs(Format::Z32_FLOAT, 4, 1);
        let mut info = BlitInfo::new(
            BlitSide::new(&z4, 0, PipeBox::new_2d(0, 0, 4, 1)),
            BlitSide::new(&z, 0, PipeBox::new_2d(0, 0, 2, 1)),
        );
        info.filter = TexFilter::Linear;
        c.blit(&info).unwrap();
        let out = read(&mut c, &z4, 0);
        let zz: Vec<f32> = out
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
            .collect();
        assert_eq!(zz, [0.0, 0.25, 0.75, 1.0]);
    }

    #[test]
    fn arrays_cubes_and_3d_blit_slice_by_slice() {
        let (s, mut c) = setup();
        let mk = |target: TextureTarget, w: u32, h: u32, d: u32, layers: u32| {
            s.resource_create(&ResourceTemplate {
                target,
                format: Format::R8_UNORM,
                width0: w,
                height0: h,
                depth0: d,
                array_size: layers,
                bind: BindFlags::SAMPLER_VIEW | BindFlags::RENDER_TARGET,
                ..Default::default()
            })
            .unwrap()
        };
        // Layer k of the source holds the value k + 1 everywhere.
        let arr = mk(TextureTarget::Texture2DArray, 2, 2, 1, 4);
        upload(
            &mut c,
            &arr,
            0,
            &[1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4],
        );
        let cube = mk(TextureTarget::TextureCube, 2, 2, 1, 6);
        let b = |z: i32, d: i32| PipeBox::new_3d(0, 0, z, 2, 2, d);
        c.blit(&BlitInfo::new(
            BlitSide::new(&cube, 0, b(1, 3)),
            BlitSide::new(&arr, 0, b(0, 3)),
        ))
        .unwrap();
        let layers = |c: &mut Context, r: &Resource| -> Vec<u8> {
            read(c, r, 0).chunks(4).map(|l| l[0]).collect()
        };
        assert_eq!(layers(&mut c, &cube), [0, 1, 2, 3, 0, 0]);
        // Mirrored in z: layers 3, 2, 1, 0 of the box.
        let arr2 = mk(TextureTarget::Texture2DArray, 2, 2, 1, 4);
        c.blit(&BlitInfo::new(
            BlitSide::new(&arr2, 0, b(0, 4)),
            BlitSide::new(&arr, 0, b(4, -4)),
        ))
        .unwrap();
        assert_eq!(layers(&mut c, &arr2), [4, 3, 2, 1]);
        // 3D: 4 slices to 2 with LINEAR averages slice pairs (the sample
        // points are at slice 1.0 and 3.0, between texel centres).
        let v = mk(TextureTarget::Texture3D, 2, 2, 4, 1);
        upload(
            &mut c,
            &v,
            0,
            &[
                0, 0, 0, 0, 100, 100, 100, 100, 200, 200, 200, 200, 250, 250, 250, 250,
            ],
        );
        let v2 = mk(TextureTarget::Texture3D, 1, 1, 2, 1);
        let mut info = BlitInfo::new(
            BlitSide::new(&v2, 0, PipeBox::new_3d(0, 0, 0, 1, 1, 2)),
            BlitSide::new(&v, 0, PipeBox::new_3d(0, 0, 0, 2, 2, 4)),
        );
        info.filter = TexFilter::Linear;
        c.blit(&info).unwrap();
        assert_eq!(read(&mut c, &v2, 0), [50, 225]);
        // Nearest picks slices 1 and 3 (floor of the centres 1.0, 3.0).
        info.filter = TexFilter::Nearest;
        c.blit(&info).unwrap();
        assert_eq!(read(&mut c, &v2, 0), [100, 250]);
        // Out-of-range slices are refused.
        assert!(matches!(
            c.blit(&BlitInfo::new(
                BlitSide::new(&cube, 0, b(4, 3)),
                BlitSide::new(&arr, 0, b(0, 3)),
            )),
            Err(Error::Resource(ResourceError::BoxOutOfBounds {
                field: "dst.box.z/depth",
                pos: 4,
                size: 3,
                extent: 6,
                ..
            }))
        ));
    }

    #[test]
    fn same_resource_mip_downsample_and_parallel_determinism() {
        // A 2-level texture: level 0 → level 1 within one resource (one
        // lock, staged source), then a large linear blit with 1 and 4
        // threads.
        let (s, mut c) = setup();
        let r = s
            .resource_create(&ResourceTemplate {
                format: Format::R8G8B8A8_UNORM,
                width0: 8,
                height0: 8,
                last_level: 1,
                bind: BindFlags::SAMPLER_VIEW | BindFlags::RENDER_TARGET,
                ..Default::default()
            })
            .unwrap();
        let data = pattern(256, 7);
        upload(&mut c, &r, 0, &data);
        let mut info = BlitInfo::new(
            BlitSide::new(&r, 1, PipeBox::new_2d(0, 0, 4, 4)),
            BlitSide::new(&r, 0, PipeBox::new_2d(0, 0, 8, 8)),
        );
        info.filter = TexFilter::Linear;
        c.blit(&info).unwrap();
        let out = read(&mut c, &r, 1);
        // Each level-1 texel filters a 2x2 block (centre at the shared
        // corner, weights 1/2): RGBA8 filters in the pipeline sampler's 8.8
        // fixed point (llvmpipe's AoS path, as u_blitter's quad samples
        // it), `a + ((128 (b - a) + 128) >> 8)` in x, then in y.
        let lerp8 = |a: i32, b: i32| a + ((128 * (b - a) + 128) >> 8);
        for y in 0..4 {
            for x in 0..4 {
                for ch in 0..4 {
                    let t = |dx: usize, dy: usize| {
                        i32::from(data[((2 * y + dy) * 8 + 2 * x + dx) * 4 + ch])
                    };
                    let want = lerp8(lerp8(t(0, 0), t(1, 0)), lerp8(t(0, 1), t(1, 1)));
                    let got = i32::from(out[(y * 4 + x) * 4 + ch]);
                    assert_eq!(got, want, "{x},{y}.{ch}");
                }
            }
        }
        let run = |threads: usize| {
            let s = Screen::new(ScreenConfig {
                threads,
                ..Default::default()
            })
            .unwrap();
            let mut c = s.context_create().unwrap();
            let src = tex2d(&s, Format::R8G8B8A8_SRGB, 97, 61);
            upload(&mut c, &src, 0, &pattern(97 * 61 * 4, 3));
            let dst = tex2d(&s, Format::R16G16B16A16_FLOAT, 512, 300);
            let mut info = BlitInfo::new(
                BlitSide::new(&dst, 0, PipeBox::new_2d(3, 299, 505, -290)),
                BlitSide::new(&src, 0, PipeBox::new_2d(1, 2, 95, 58)),
            );
            info.filter = TexFilter::Linear;
            c.blit(&info).unwrap();
            // And a same-format 1:1 copy (the memcpy path).
            let dst2 = tex2d(&s, Format::R8G8B8A8_SRGB, 97, 61);
            c.blit(&BlitInfo::new(
                BlitSide::new(&dst2, 0, PipeBox::new_2d(0, 0, 97, 61)),
                BlitSide::new(&src, 0, PipeBox::new_2d(0, 0, 97, 61)),
            ))
            .unwrap();
            assert_eq!(read(&mut c, &dst2, 0), read(&mut c, &src, 0));
            read(&mut c, &dst, 0)
        };
        let one = run(1);
        assert!(one.iter().any(|&b| b != 0));
        assert_eq!(one, run(4));
    }

    #[test]
    fn msaa_resolve_averages_colour_and_takes_sample_0_otherwise() {
        let (s, mut c) = setup();
        let planes: Vec<Vec<u8>> = vec![
            vec![0, 10, 255, 1, 40, 40, 40, 40],
            vec![255, 20, 255, 2, 40, 40, 40, 40],
            vec![0, 30, 0, 3, 40, 40, 40, 40],
            vec![255, 41, 0, 4, 40, 40, 40, 40],
        ];
        let b = PipeBox::new_2d(0, 0, 2, 1);
        let src = msaa(Format::R8G8B8A8_UNORM, 2, 1, &planes);
        let dst = tex2d(&s, Format::R8G8B8A8_UNORM, 2, 1);
        c.blit(&BlitInfo::new(
            BlitSide::new(&dst, 0, b),
            BlitSide::new(&src, 0, b),
        ))
        .unwrap();
        // (0+255+0+255)/4 = 127.5 → 128; (10+20+30+41)/4 = 25.25 → 25.
        assert_eq!(read(&mut c, &dst, 0), [128, 25, 128, 3, 40, 40, 40, 40]);
        // sample0_only copies sample 0.
        let mut info = BlitInfo::new(BlitSide::new(&dst, 0, b), BlitSide::new(&src, 0, b));
        info.sample0_only = true;
        c.blit(&info).unwrap();
        assert_eq!(read(&mut c, &dst, 0), planes[0]);
        // Integer formats resolve to sample 0.
        let isrc = msaa(Format::R8G8B8A8_UINT, 2, 1, &planes);
        let idst = tex2d(&s, Format::R8G8B8A8_UINT, 2, 1);
        c.blit(&BlitInfo::new(
            BlitSide::new(&idst, 0, b),
            BlitSide::new(&isrc, 0, b),
        ))
        .unwrap();
        assert_eq!(read(&mut c, &idst, 0), planes[0]);
        // MSAA → MSAA of the same count copies sample by sample; a single
        // sample source fills every sample.
        let mdst = msaa(Format::R8G8B8A8_UNORM, 2, 1, &vec![vec![0; 8]; 4]);
        c.blit(&BlitInfo::new(
            BlitSide::new(&mdst, 0, b),
            BlitSide::new(&src, 0, b),
        ))
        .unwrap();
        let plane = |r: &Resource, s: usize| {
            let l = r.layout().levels[0];
            r.shared().storage.read()[l.offset + s * l.sample_stride..][..8].to_vec()
        };
        for (s, p) in planes.iter().enumerate() {
            assert_eq!(&plane(&mdst, s), p);
        }
        c.blit(&BlitInfo::new(
            BlitSide::new(&mdst, 0, b),
            BlitSide::new(&dst, 0, b),
        ))
        .unwrap();
        for s in 0..4 {
            assert_eq!(plane(&mdst, s), planes[0]);
        }
        // Sample counts that differ are refused.
        let two = msaa(Format::R8G8B8A8_UNORM, 2, 1, &vec![vec![0; 8]; 2]);
        assert!(matches!(
            c.blit(&BlitInfo::new(
                BlitSide::new(&two, 0, b),
                BlitSide::new(&src, 0, b)
            )),
            Err(Error::Resource(ResourceError::SampleCountMismatch {
                call: "blit",
                dst: 2,
                src: 4,
                ..
            }))
        ));
        // A scaled LINEAR resolve filters the per-texel averages.
        let wide = tex2d(&s, Format::R8G8B8A8_UNORM, 4, 1);
        let mut info = BlitInfo::new(
            BlitSide::new(&wide, 0, PipeBox::new_2d(0, 0, 4, 1)),
            BlitSide::new(&src, 0, b),
        );
        info.filter = TexFilter::Linear;
        c.blit(&info).unwrap();
        let out = read(&mut c, &wide, 0);
        // Pixel 1 samples at 0.75 texels: 0.75 * avg0 + 0.25 * avg1.
        let want = (0.75 * 25.25 + 0.25 * 40.0f32).round() as u8;
        assert_eq!(out[4 + 1], want);
    }

    #[test]
    fn invalid_blits_are_typed_errors() {
        let (s, mut c) = setup();
        let rgba = tex2d(&s, Format::R8G8B8A8_UNORM, 4, 4);
        let uint = tex2d(&s, Format::R8G8B8A8_UINT, 4, 4);
        let z = s
            .resource_create(&ResourceTemplate::texture_2d(
                Format::Z32_FLOAT,
                4,
                4,
                BindFlags::DEPTH_STENCIL,
            ))
            .unwrap();
        let buf = s
            .resource_create(&ResourceTemplate::buffer(64, BindFlags::VERTEX_BUFFER))
            .unwrap();
        let b = PipeBox::new_2d(0, 0, 4, 4);
        let blit = |c: &mut Context, d: &Resource, s: &Resource| {
            c.blit(&BlitInfo::new(
                BlitSide::new(d, 0, b),
                BlitSide::new(s, 0, b),
            ))
        };
        assert!(matches!(
            blit(&mut c, &buf, &rgba),
            Err(Error::Resource(ResourceError::IsABuffer {
                field: "dst.resource",
                ..
            }))
        ));
        assert!(matches!(
            blit(&mut c, &rgba, &uint),
            Err(Error::Resource(ResourceError::IntegerConversion {
                src: Format::R8G8B8A8_UINT,
                dst: Format::R8G8B8A8_UNORM,
            }))
        ));
        assert!(blit(&mut c, &rgba, &z).unwrap_err().is_unsupported());
        assert!(blit(&mut c, &z, &rgba).unwrap_err().is_unsupported());
        let mut info = BlitInfo::new(BlitSide::new(&rgba, 1, b), BlitSide::new(&rgba, 0, b));
        assert!(matches!(
            c.blit(&info),
            Err(Error::Resource(ResourceError::LevelOutOfRange {
                field: "dst.level",
                level: 1,
                last_level: 0,
                ..
            }))
        ));
        info.dst.level = 0;
        info.src.format = Format::R16G16_UNORM;
        assert!(matches!(
            c.blit(&info),
            Err(Error::Resource(ResourceError::FormatIncompatible {
                field: "src.format",
                format: Format::R16G16_UNORM,
                resource_format: Format::R8G8B8A8_UNORM,
                ..
            }))
        ));
        // A compatible view (sRGB on UNORM) is fine; so are empty boxes.
        info.src.format = Format::R8G8B8A8_SRGB;
        c.blit(&info).unwrap();
        info.dst.pbox.width = 0;
        c.blit(&info).unwrap();
        // Stencil from a source without stencil.
        let s8 = s
            .resource_create(&ResourceTemplate::texture_2d(
                Format::S8_UINT,
                4,
                4,
                BindFlags::DEPTH_STENCIL,
            ))
            .unwrap();
        let mut info = BlitInfo::new(BlitSide::new(&s8, 0, b), BlitSide::new(&z, 0, b));
        info.mask = BlitMask::S;
        assert!(matches!(
            c.blit(&info),
            Err(Error::Resource(ResourceError::MaskWithoutAspect {
                mask: "PIPE_MASK_S",
                format: Format::Z32_FLOAT,
                ..
            }))
        ));
    }
}
