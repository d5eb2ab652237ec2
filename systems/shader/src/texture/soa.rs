//! The general sampling path in SIMD lanes: llvmpipe's SoA float path
//! (`lp_bld_sample_soa.c`: `lp_build_sample_wrap_nearest`,
//! `lp_build_sample_wrap_linear`, `lp_build_sample_image_nearest` /
//! `_linear`, then `lp_build_sample_mipmap`'s level blend), and its AoS
//! path for NEAREST filtering of 8-bit formats
//! (`lp_bld_sample_aos.c`).
//!
//! Why: every lookup the unorm8 bilinear kernels do not take (NEAREST
//! filters, MIRROR / CLAMP / border wraps, float, half, depth and other
//! formats, depth comparison, texel offsets, arrays, 1D and 3D) ran lane
//! by lane through [`Texture::footprint`], ~75 ns a sample: postprocess
//! with a MIRROR_REPEAT sampler took 2.5-3.0 s a frame against
//! llvmpipe's 148 ms, with an RGBA16F source 5.2 s against 145 ms, with
//! NEAREST filtering 1.0 s against 52 ms (2026-11-28, one thread).
//!
//! Both functions here compute, per lane, exactly the operations of the
//! scalar path in the same order (`wrap_linear`, `wrap_nearest`,
//! `mirror`, `fract_safe`, the lerps of [`Texture::sample_level`], the
//! level blend of [`Texture::sample`]), with `wide`'s `floor`,
//! `round_ties_even`, `trunc_int` (Rust's saturating `as`), `min` / `max`
//! (Rust's NaN rule) and selects for `clamp` (which keeps NaN), so the
//! results are the scalar path's bits whatever the inputs
//! (`tests::soa_matches_the_scalar_path`, `aos_nearest_matches_the_scalar_path`).
//! Texel decoding stays per texel ([`decode_f32`], monomorphised per
//! common format; others through a [`pack::Unpacker`] derived once).
//! Cube maps take it face by face (each lane's face a 2D lookup, as the
//! scalar path does) except with seamless LINEAR filtering, which reads
//! across faces; that and anisotropy stay on the scalar path.

use super::{
    ChunkRegs, LevelChoice, Lod, SampleArgs, TexFilter, TexMipFilter, TexWrap, Texture, decode_f32,
    lerp8x8, wrap_uses_border,
};
use ferropipe_components::enums::{Func, TexCompareMode, TextureTarget};
use ferropipe_components::format::{Format, FormatKind};
use ferropipe_components::pack;
use ferropipe_components::shader::{LANES, Lanes};
use ferropipe_components::state::SamplerState;
use wide::{f32x8, i32x8, u32x8};

use crate::lanemath::as_u;
use multiversion::multiversion;

/// Rust's `f32::clamp` per lane: NaN stays NaN (a `max`/`min` pair would
/// give `lo`).
#[inline(always)]
fn clamp_f(x: f32x8, lo: f32x8, hi: f32x8) -> f32x8 {
    let x = x.simd_lt(lo).select(lo, x);
    x.simd_gt(hi).select(hi, x)
}

/// `x.floor() as i32` and `x - x.floor()`, per lane.
#[inline(always)]
fn floor_fract(x: f32x8) -> (i32x8, f32x8) {
    let f = x.floor();
    (f.trunc_int(), x - f)
}

/// [`super::mirror`] per lane.
#[inline(always)]
fn mirror(x: f32x8) -> f32x8 {
    let h = x * f32x8::splat(0.5);
    let f = h - h.round_ties_even();
    (f + f).abs().max(f32x8::ZERO)
}

/// [`super::fract_safe`] per lane.
#[inline(always)]
fn fract_safe(x: f32x8) -> f32x8 {
    let f = x - x.floor();
    let below_one = f32x8::splat(f32::from_bits(0x3f7f_ffff));
    f.simd_ge(f32x8::ONE).select(below_one, f)
}

/// One axis of one lookup: the level's length (at least 1) per lane, the
/// wrap mode and the texel offset.
#[derive(Clone, Copy)]
struct Axis {
    len: i32x8,
    lenf: f32x8,
    /// Lanes whose length is a power of two (REPEAT masks instead of
    /// wrapping through the fraction).
    pot: i32x8,
    wrap: TexWrap,
    offset: i32,
    normalized: bool,
}

impl Axis {
    #[inline(always)]
    fn new(len: i32x8, wrap: TexWrap, offset: i32, normalized: bool) -> Self {
        Axis {
            len,
            lenf: len.round_float(),
            pot: (len & (len - i32x8::ONE)).simd_eq(i32x8::ZERO),
            wrap,
            offset,
            normalized,
        }
    }

    #[inline(always)]
    fn scaled(&self, c: f32x8) -> f32x8 {
        if self.normalized { c * self.lenf } else { c }
    }

    /// `offset as f32`, and `offset as f32 / len` per lane.
    #[inline(always)]
    fn offset_f(&self) -> f32x8 {
        f32x8::splat(self.offset as f32)
    }

    /// [`super::wrap_nearest`] per lane.
    #[inline(always)]
    fn nearest(&self, c: f32x8) -> i32x8 {
        let last = self.len - i32x8::ONE;
        let off = self.offset_f();
        match self.wrap {
            TexWrap::Repeat => {
                let pot = (self.scaled(c).floor().trunc_int() + i32x8::splat(self.offset)) & last;
                let c2 = c + off / self.lenf;
                let npot = (fract_safe(c2) * self.lenf).trunc_int().min(last);
                self.pot.select(pot, npot)
            }
            TexWrap::Clamp | TexWrap::ClampToEdge => (self.scaled(c) + off)
                .trunc_int()
                .max(i32x8::ZERO)
                .min(last),
            TexWrap::ClampToBorder => {
                self.scaled(c).floor().trunc_int() + i32x8::splat(self.offset)
            }
            TexWrap::MirrorRepeat => {
                let c2 = c + off / self.lenf;
                (mirror(c2) * self.lenf).trunc_int().min(last)
            }
            // `(t as u32).min(len - 1)`: `t` is at least 0 (the truncation
            // of an absolute value, NaN giving 0), so the signed `min` is
            // the same.
            TexWrap::MirrorClamp | TexWrap::MirrorClampToEdge => {
                (self.scaled(c) + off).abs().trunc_int().min(last)
            }
            TexWrap::MirrorClampToBorder => (self.scaled(c) + off).abs().trunc_int(),
        }
    }

    /// [`super::wrap_linear`] per lane: the two texels and the weight.
    #[inline(always)]
    fn linear(&self, c: f32x8) -> (i32x8, i32x8, f32x8) {
        let one = i32x8::ONE;
        let last = self.len - one;
        let off = self.offset_f();
        let half = f32x8::splat(0.5);
        match self.wrap {
            TexWrap::Repeat => {
                let (p0, pw) = floor_fract(self.scaled(c) - half + off);
                let (p0, p1) = (p0 & last, (p0 + one) & last);
                let c2 = c + off / self.lenf;
                let u = (c2 - c2.floor()) * self.lenf - half;
                let (n0, nw) = floor_fract(u);
                let below: i32x8 = bytemuck::cast(u.simd_lt(f32x8::ZERO));
                let n0 = below.select(last, n0);
                let n1 = n0.simd_eq(last).select(i32x8::ZERO, n0 + one);
                (
                    self.pot.select(p0, n0),
                    self.pot.select(p1, n1),
                    bytemuck::cast::<i32x8, f32x8>(self.pot).select(pw, nw),
                )
            }
            TexWrap::Clamp => {
                let u = clamp_f(self.scaled(c) + off, f32x8::ZERO, self.lenf) - half;
                let (i0, w) = floor_fract(u);
                (i0, i0 + one, w)
            }
            TexWrap::ClampToEdge => {
                let u = ((self.scaled(c) + off).min(self.lenf) - half).max(f32x8::ZERO);
                let (i0, w) = floor_fract(u);
                (i0, (i0 + one).min(last), w)
            }
            TexWrap::ClampToBorder => {
                let (i0, w) = floor_fract(self.scaled(c) + off - half);
                (i0, i0 + one, w)
            }
            TexWrap::MirrorRepeat => {
                let c2 = c + off / self.lenf;
                let u = mirror(c2) * self.lenf - half;
                let (i0, w) = floor_fract(u);
                (i0.max(i32x8::ZERO), (i0 + one).min(last), w)
            }
            TexWrap::MirrorClamp => {
                let u = (self.scaled(c) + off).abs().min(self.lenf) - half;
                let (i0, w) = floor_fract(u);
                (i0, i0 + one, w)
            }
            TexWrap::MirrorClampToEdge => {
                let u = ((self.scaled(c) + off).abs().min(self.lenf) - half).max(f32x8::ZERO);
                let (i0, w) = floor_fract(u);
                (i0, (i0 + one).min(last), w)
            }
            TexWrap::MirrorClampToBorder => {
                let u = (self.scaled(c) + off).abs() - half;
                let (i0, w) = floor_fract(u);
                (i0, i0 + one, w)
            }
        }
    }
}

/// `wrap_nearest(c, len, 0, wrap, true)` clamped into `0..len`: the
/// texel index of a NEAREST lookup at normalized coordinate `c`
/// (`Texture::aos_level`), for the quad sampler's NEAREST lanes.
#[inline(always)]
pub(super) fn nearest_index(c: f32x8, len: i32x8, wrap: TexWrap) -> i32x8 {
    let axis = Axis::new(len, wrap, 0, true);
    axis.nearest(c).max(i32x8::ZERO).min(len - i32x8::ONE)
}

/// `a + (b - a) * w`, [`Texture::sample_level`]'s lerp, per channel.
#[inline(always)]
fn lerp4(a: &[f32x8; 4], b: &[f32x8; 4], w: f32x8) -> [f32x8; 4] {
    [
        a[0] + (b[0] - a[0]) * w,
        a[1] + (b[1] - a[1]) * w,
        a[2] + (b[2] - a[2]) * w,
        a[3] + (b[3] - a[3]) * w,
    ]
}

/// `func.test(r, d)` ([`Func::test`]) per lane, as a mask.
#[inline(always)]
fn compare(func: Func, r: f32x8, d: f32x8) -> f32x8 {
    let all = f32x8::splat(f32::from_bits(u32::MAX));
    match func {
        Func::Never => f32x8::ZERO,
        Func::Less => r.simd_lt(d),
        Func::Equal => r.simd_eq(d),
        Func::Lequal => r.simd_le(d),
        Func::Greater => r.simd_gt(d),
        // `!=` is true for NaN: the complement of the ordered `==`.
        Func::Notequal => r.simd_eq(d) ^ all,
        Func::Gequal => r.simd_ge(d),
        Func::Always => all,
    }
}

/// [`Texture::soa_level`] compiled per SIMD level (ARCHITECTURE.md, "SIMD
/// levels"): an embedder's baseline x86-64 build runs the AVX2 clone on
/// a CPU that has it, as the bilinear kernels do (`chunk_simd`).
#[multiversion(
    targets("x86_64+avx2+fma+bmi1+bmi2+lzcnt+popcnt+f16c+movbe"),
    attrs(allow(dead_code))
)]
fn level_simd<D: Texels, const DIMS: usize, const LINEAR: bool>(
    t: &Texture<'_>,
    look: &Lookup<'_>,
    levels: &Levels,
    decode: &D,
) -> [f32x8; 4] {
    t.soa_level::<D, DIMS, LINEAR>(look, levels, decode)
}

/// One level of the view's resource as [`Texture::soa_level`] reads it:
/// the size (each at least 1) and the layout in bytes.
#[derive(Clone, Copy, Debug, Default)]
struct LevelRow {
    size: [i32; 3],
    offset: i32,
    row: i32,
    slice: i32,
    /// Every texel a lookup can address (indices clamped into the size,
    /// slices up to the view's last layer or the level's depth) ends
    /// inside the data, below 2 GiB: byte offsets fit i32 lanes and every
    /// load is in range.
    fits: bool,
}

/// [`LevelRow`]s of every level of the resource (levels are absolute).
#[derive(Clone, Debug)]
pub(super) struct LevelTable(Box<[LevelRow]>);

/// The [`LevelRow`]s of 8 lanes' levels as lanes.
struct LaneRows {
    size: [i32x8; 3],
    offset: i32x8,
    row: i32x8,
    slice: i32x8,
    /// Every lane's row fits ([`LevelRow::fits`]).
    fits: bool,
}

impl LevelTable {
    /// The rows of `levels`; one lookup when all lanes share a level (a
    /// constant LOD, or both quads choosing alike).  The caller says
    /// whether they do (`same`), from the values it stored: testing the
    /// array here read it back as one vector right after eight scalar
    /// stores, a store-forwarding stall that `perf annotate` put 11 % of
    /// post_f32 on.
    #[inline(always)]
    fn lanes(&self, levels: &[u32; LANES], same: bool) -> LaneRows {
        if same {
            let r = self.row(levels[0]);
            return LaneRows {
                size: r.size.map(i32x8::splat),
                offset: i32x8::splat(r.offset),
                row: i32x8::splat(r.row),
                slice: i32x8::splat(r.slice),
                fits: r.fits,
            };
        }
        let mut v = [[0i32; LANES]; 6];
        let mut fits = true;
        for l in 0..LANES {
            let r = self.row(levels[l]);
            v[0][l] = r.size[0];
            v[1][l] = r.size[1];
            v[2][l] = r.size[2];
            v[3][l] = r.offset;
            v[4][l] = r.row;
            v[5][l] = r.slice;
            fits &= r.fits;
        }
        LaneRows {
            size: [i32x8::new(v[0]), i32x8::new(v[1]), i32x8::new(v[2])],
            offset: i32x8::new(v[3]),
            row: i32x8::new(v[4]),
            slice: i32x8::new(v[5]),
            fits,
        }
    }

    /// Level `l`'s row; a level past the last has a row that does not
    /// fit, so its lanes take the checked path (which reads zeros there).
    #[inline(always)]
    fn row(&self, l: u32) -> LevelRow {
        self.0.get(l as usize).copied().unwrap_or_default()
    }
}

/// A view format's texel loader ([`Texels`]).
#[derive(Clone, Copy)]
enum Decoder {
    Rgba8(Unorm8x4<false>),
    Bgra8(Unorm8x4<true>),
    F32,
    F16(Float16x4),
    /// Lane by lane ([`Texture::soa_levels_other`]).
    Other,
}

/// What [`Texture::sample`] decides from the view and sampler state
/// alone, for the lookups of one texture op over a chunk that take the
/// general SIMD path: made once per op and chunk instead of per group
/// (`Texture::sample`'s checks, the format's loader, the level choice
/// of a sampler without mip filtering).  Before it, those per-group
/// steps were ~29 % of post_mirror and post_f32 (`perf record`:
/// `Texture::sample`'s own 18-20 %, `select_lods`,
/// `quad_sampler_unplanned`, the lods loop).
pub(super) struct SoaPlan {
    compare: bool,
    /// [`Texture::border`] of the sampler.
    border: [f32; 4],
    decoder: Decoder,
    /// The level choice when it does not depend on the lookup: one image
    /// filter, and no mip filter (`select_lods`' first case) or a view of
    /// one level (every branch of `LodParams::choose` then clamps to it,
    /// the LINEAR mip blend included: a single-level render target read
    /// through a sampler with the default NEAREST mip filter).
    fixed: Option<LevelChoice>,
}

/// Where a planned op's operands besides its coordinates live in the
/// register file (`ir::loc`'s base and mask), and its texel offset.
pub(super) struct PlanOperands {
    pub(super) layer: Option<(usize, usize)>,
    pub(super) depth_ref: Option<(usize, usize)>,
    pub(super) offset: [i32; 3],
}

/// [`Texture::run_planned_chunk`]'s group loop, compiled per SIMD level
/// with the body inlined (one dispatch per op and chunk instead of a
/// call, a dispatch and a call per group).
#[multiversion(
    targets("x86_64+avx2+fma+bmi1+bmi2+lzcnt+popcnt+f16c+movbe"),
    attrs(allow(dead_code))
)]
#[allow(clippy::too_many_arguments)]
fn chunk_simd<D: Texels, const DIMS: usize, const LINEAR: bool>(
    t: &Texture<'_>,
    plan: &SoaPlan,
    s: &SamplerState,
    level: u32,
    file: &mut [Lanes],
    regs: &ChunkRegs,
    ops: &PlanOperands,
    decode: &D,
) {
    let levels = Levels {
        each: [level; LANES],
        same: true,
    };
    // (the caller checked `regs.fits(file.len())`)
    for g in 0..regs.groups {
        // SAFETY: `regs.fits(file.len())` (the caller's check) and
        // `g < regs.groups`: `read`'s contract.
        let coord = unsafe { regs.read(file, g) };
        let layer = match ops.layer {
            Some((b, m)) => file[b + (g & m)],
            None => f32x8::ZERO,
        };
        // (a match, not `Option::map`: a closure keeps its own body,
        // compiled without the clone's features)
        #[allow(clippy::manual_map)]
        let depth_ref = match ops.depth_ref {
            Some((b, m)) => Some(file[b + (g & m)]),
            None => None,
        };
        let args = SampleArgs {
            coord,
            layer,
            // (a fixed level choice reads no LOD)
            lod: Lod::Implicit,
            depth_ref,
            offset: ops.offset,
        };
        let look = t.lookup(s, &args, plan.compare, LINEAR, plan.border);
        let tx = t.soa_level::<D, DIMS, LINEAR>(&look, &levels, decode);
        let out = t.finish_soa(tx);
        // SAFETY: as for `read`.
        unsafe { regs.store(file, g, out) };
    }
}

/// Each lane's absolute level, and whether all lanes share one (the
/// caller knows it from the values it stored; see [`LevelTable::lanes`]).
struct Levels {
    each: [u32; LANES],
    same: bool,
}

/// What one lookup of 8 lanes reads: the per-group values every level
/// shares.
struct Lookup<'l> {
    s: &'l SamplerState,
    /// s, t, r; a cube lookup's face coordinates.
    coord: [f32x8; 3],
    /// The sampler's, or CLAMP_TO_EDGE on a cube's faces.
    wraps: [TexWrap; 3],
    /// Each lane's slice: of a 1D / 2D array, a cube's face (of its cube
    /// in an array), the first layer otherwise.
    slice: [u32; LANES],
    offset: [i32; 3],
    cmp: Option<(Func, f32x8)>,
    border: [f32; 4],
    linear: bool,
}

impl Texture<'_> {
    /// The level rows, derived at the view's first SIMD lookup and kept
    /// for the call (the resource's levels cannot change during one).
    fn soa_table(&self) -> &LevelTable {
        self.soa_table.get_or_init(|| {
            let dims = self.dims();
            let rows = self
                .levels
                .iter()
                .map(|lv| {
                    let size = [lv.width, lv.height, lv.depth].map(|v| v.max(1));
                    // the last slice and row a lookup can address
                    let slice = if dims == 3 {
                        size[2] - 1
                    } else {
                        self.last_layer
                    } as usize;
                    let y = if dims >= 2 { size[1] - 1 } else { 0 } as usize;
                    let end = slice
                        .checked_mul(lv.slice_stride)
                        .and_then(|v| v.checked_add(y.checked_mul(lv.row_stride)?))
                        .and_then(|v| v.checked_add((size[0] as usize).checked_mul(self.bpp)?))
                        .and_then(|v| v.checked_add(lv.offset));
                    let fits = end.is_some_and(|e| e <= self.data.len() && e <= i32::MAX as usize);
                    LevelRow {
                        size: size.map(|v| v.min(i32::MAX as u32) as i32),
                        offset: if fits { lv.offset as i32 } else { 0 },
                        row: if fits { lv.row_stride as i32 } else { 0 },
                        slice: if fits { lv.slice_stride as i32 } else { 0 },
                        fits,
                    }
                })
                .collect();
            LevelTable(rows)
        })
    }

    /// [`Texture::sample`]'s per-lane loop for 8 lanes at once, for
    /// lookups without anisotropy on views that are not cube maps, with
    /// one filter for all lanes (`lods`' filters differ only when the
    /// minification and magnification filters do and the two quads
    /// choose differently).  `None` leaves the group to the scalar loop.
    pub(super) fn sample_soa(
        &self,
        s: &SamplerState,
        lods: &[LevelChoice; LANES],
        args: &SampleArgs,
        compare: bool,
    ) -> Option<[Lanes; 4]> {
        if self.target == TextureTarget::Buffer || self.levels.is_empty() {
            return None;
        }
        let filter = lods[0].filter;
        let linear = filter == TexFilter::Linear;
        if lods.iter().any(|l| l.filter != filter)
            || (self.is_cube() && linear && s.seamless_cube_map && s.normalized_coords)
        {
            // (seamless cube filtering reads across faces: the scalar path)
            return None;
        }
        let look = self.lookup(s, args, compare, linear, self.border(s));
        Some(self.soa_levels_by(self.decoder(), &look, lods))
    }

    /// [`Self::soa_levels`] with `decoder`'s loader.
    #[inline(always)]
    fn soa_levels_by(
        &self,
        decoder: Decoder,
        look: &Lookup<'_>,
        lods: &[LevelChoice; LANES],
    ) -> [Lanes; 4] {
        match decoder {
            Decoder::Rgba8(d) => self.soa_levels(look, lods, &d),
            Decoder::Bgra8(d) => self.soa_levels(look, lods, &d),
            Decoder::F32 => self.soa_levels(look, lods, &Float32x4),
            Decoder::F16(d) => self.soa_levels(look, lods, &d),
            Decoder::Other => self.soa_levels_other(look, lods),
        }
    }

    /// The texel loader of the view's format.
    fn decoder(&self) -> Decoder {
        match self.format {
            Format::R8G8B8A8_UNORM => Decoder::Rgba8(Unorm8x4::detect()),
            Format::B8G8R8A8_UNORM => Decoder::Bgra8(Unorm8x4::detect()),
            Format::R32G32B32A32_FLOAT => Decoder::F32,
            Format::R16G16B16A16_FLOAT => Decoder::F16(Float16x4::detect()),
            _ => Decoder::Other,
        }
    }

    /// [`Self::soa_levels`] for the formats without a loader of their
    /// own: lane by lane through an `Unpacker` (`decode_f32`'s last arm
    /// without deriving the format's decoding per texel), or
    /// `decode_f32` (stencil).
    #[inline(never)]
    fn soa_levels_other(&self, look: &Lookup<'_>, lods: &[LevelChoice; LANES]) -> [Lanes; 4] {
        let format = self.format;
        let d = format.desc();
        if d.kind == FormatKind::Color || d.has_depth() {
            let u = pack::Unpacker::new(format);
            self.soa_levels(look, lods, &PerLane(self.bpp, |px: &[u8]| u.rgba_f32(px)))
        } else {
            self.soa_levels(
                look,
                lods,
                &PerLane(self.bpp, |px: &[u8]| decode_f32(format, px)),
            )
        }
    }

    /// The plan for lookups through `s` whose LOD comes as `lod` does
    /// (only its kind matters), or `None` where [`Texture::sample`] could
    /// take another path than [`Texture::sample_soa`] for some lookup:
    /// the unorm8 AoS paths and the quad sampler, anisotropy, seamless
    /// cube filtering, buffers.
    pub(super) fn soa_plan(&self, s: &SamplerState, lod: Lod) -> Option<SoaPlan> {
        let args = SampleArgs {
            lod,
            ..SampleArgs::at([f32x8::ZERO; 3])
        };
        let any_linear =
            s.min_img_filter == TexFilter::Linear || s.mag_img_filter == TexFilter::Linear;
        if self.target == TextureTarget::Buffer
            || self.levels.is_empty()
            || s.max_anisotropy > 1
            || self.use_aos(s, &args)
            || (self.is_cube() && any_linear && s.seamless_cube_map && s.normalized_coords)
        {
            return None;
        }
        Some(SoaPlan {
            compare: s.compare_mode == TexCompareMode::RToTexture && self.depth,
            border: self.border(s),
            decoder: self.decoder(),
            fixed: ((s.min_mip_filter == TexMipFilter::None
                || self.first_level == self.last_level)
                && s.min_img_filter == s.mag_img_filter)
                .then(|| LevelChoice::single(self.first_level, s.mag_img_filter)),
        })
    }

    /// Every group of a chunk of `plan`'s op (coordinates and results at
    /// `regs`, other operands at `ops`), when the plan's level choice is
    /// fixed: the group loop inside
    /// one multiversioned body per (loader, axes, filter), each group
    /// [`Texture::sample`]'s bits (it is `sample_planned`'s fixed branch).
    /// `false`, having done nothing, otherwise.
    ///
    /// Why: per group, `sample_group`'s operand reads and the calls into
    /// the level body were ~20 % of post_f32 after the plan (`perf
    /// record`: `sample_group` 15 %, `run_texture` 4 %).
    pub(super) fn run_planned_chunk(
        &self,
        plan: &SoaPlan,
        s: &SamplerState,
        file: &mut [Lanes],
        regs: &ChunkRegs,
        ops: &PlanOperands,
    ) -> bool {
        let Some(c) = plan.fixed else {
            return false;
        };
        if !regs.fits(file.len()) {
            return false;
        }
        let linear = c.filter == TexFilter::Linear;
        match plan.decoder {
            Decoder::Rgba8(d) => self.planned_chunk(&d, plan, s, c.level0, linear, file, regs, ops),
            Decoder::Bgra8(d) => self.planned_chunk(&d, plan, s, c.level0, linear, file, regs, ops),
            Decoder::F32 => {
                self.planned_chunk(&Float32x4, plan, s, c.level0, linear, file, regs, ops)
            }
            Decoder::F16(d) => self.planned_chunk(&d, plan, s, c.level0, linear, file, regs, ops),
            Decoder::Other => {
                let format = self.format;
                let d = format.desc();
                if d.kind == FormatKind::Color || d.has_depth() {
                    let u = pack::Unpacker::new(format);
                    let d = PerLane(self.bpp, |px: &[u8]| u.rgba_f32(px));
                    self.planned_chunk(&d, plan, s, c.level0, linear, file, regs, ops);
                } else {
                    let d = PerLane(self.bpp, |px: &[u8]| decode_f32(format, px));
                    self.planned_chunk(&d, plan, s, c.level0, linear, file, regs, ops);
                }
            }
        }
        true
    }

    /// [`chunk_simd`] for the view's axis count and `linear`.
    #[allow(clippy::too_many_arguments)]
    fn planned_chunk<D: Texels>(
        &self,
        d: &D,
        plan: &SoaPlan,
        s: &SamplerState,
        level: u32,
        linear: bool,
        file: &mut [Lanes],
        regs: &ChunkRegs,
        ops: &PlanOperands,
    ) {
        match (self.dims(), linear) {
            (1, false) => chunk_simd::<D, 1, false>(self, plan, s, level, file, regs, ops, d),
            (1, true) => chunk_simd::<D, 1, true>(self, plan, s, level, file, regs, ops, d),
            (2, false) => chunk_simd::<D, 2, false>(self, plan, s, level, file, regs, ops, d),
            (2, true) => chunk_simd::<D, 2, true>(self, plan, s, level, file, regs, ops, d),
            (_, false) => chunk_simd::<D, 3, false>(self, plan, s, level, file, regs, ops, d),
            (_, true) => chunk_simd::<D, 3, true>(self, plan, s, level, file, regs, ops, d),
        }
    }

    /// [`Texture::sample`] for a lookup `plan` covers (the same bits:
    /// the same steps with the per-state decisions taken).
    pub(super) fn sample_planned(
        &self,
        plan: &SoaPlan,
        s: &SamplerState,
        args: &SampleArgs,
    ) -> [Lanes; 4] {
        // (a fixed choice's whole chunks take `run_planned_chunk`; groups
        // come here only from ops it leaves, such as edge-clamped ones)
        let lods = match plan.fixed {
            Some(c) => [c; LANES],
            None => self.select_lods(s, args),
        };
        let filter = lods[0].filter;
        if lods.iter().any(|l| l.filter != filter) {
            return self.sample_scalar(s, &lods, None, args, plan.compare);
        }
        let linear = filter == TexFilter::Linear;
        let look = self.lookup(s, args, plan.compare, linear, plan.border);
        self.soa_levels_by(plan.decoder, &look, &lods)
    }

    /// What a lookup of 8 lanes at `args` reads, every level alike.
    #[inline(always)]
    fn lookup<'s>(
        &self,
        s: &'s SamplerState,
        args: &SampleArgs,
        compare: bool,
        linear: bool,
        border: [f32; 4],
    ) -> Lookup<'s> {
        let cmp = if compare {
            args.depth_ref.map(|r| {
                let r = if self.unorm_depth {
                    clamp_f(r, f32x8::ZERO, f32x8::ONE)
                } else {
                    r
                };
                (s.compare_func, r)
            })
        } else {
            None
        };
        let layers = as_u(args.layer).to_array();
        let nlayers = (self.last_layer - self.first_layer + 1) as i32;
        let mut slice = [self.first_layer; LANES];
        let (mut coord, mut wraps) = (args.coord, [s.wrap_s, s.wrap_t, s.wrap_r]);
        if self.is_cube() {
            // `footprint`'s cube branch: each lane's face becomes a 2D
            // lookup on one layer, clamped to the face's edges
            let c = args.coord.map(|v| v.to_array());
            let mut st = [[0f32; LANES]; 2];
            for l in 0..LANES {
                let (face, fc) = super::cube_face([c[0][l], c[1][l], c[2][l]]);
                let cube = if self.target == TextureTarget::TextureCubeArray {
                    (layers[l] as i32).clamp(0, (nlayers / 6).max(1) - 1) as u32
                } else {
                    0
                };
                slice[l] = self.first_layer + cube * 6 + face;
                st[0][l] = fc[0];
                st[1][l] = fc[1];
            }
            coord = [f32x8::new(st[0]), f32x8::new(st[1]), f32x8::ZERO];
            wraps = [TexWrap::ClampToEdge; 3];
        } else if self.arrayed() {
            for l in 0..LANES {
                slice[l] = self.first_layer + (layers[l] as i32).clamp(0, nlayers - 1) as u32;
            }
        }
        Lookup {
            s,
            coord,
            wraps,
            slice,
            offset: args.offset,
            cmp,
            border,
            linear,
        }
    }

    /// Both levels of each lane, blended, then the view swizzle:
    /// [`Texture::sample`]'s body after the level choice.
    #[inline(always)]
    fn soa_levels<D: Texels>(
        &self,
        look: &Lookup<'_>,
        lods: &[LevelChoice; LANES],
        decode: &D,
    ) -> [Lanes; 4] {
        // (loops, not `map` / `from_fn`: their closures stayed out of
        // line, ~8 % of post_mirror)
        let (mut level0, mut level1, mut weight) = ([0u32; LANES], [0u32; LANES], [0f32; LANES]);
        // lanes whose choice blends two levels
        let mut blend = [0f32; LANES];
        let mut any = false;
        let (mut same0, mut same1) = (true, true);
        for l in 0..LANES {
            let c = &lods[l];
            (level0[l], level1[l], weight[l]) = (c.level0, c.level1, c.weight);
            same0 &= c.level0 == lods[0].level0;
            same1 &= c.level1 == lods[0].level1;
            if c.weight > 0.0 && c.level1 != c.level0 {
                blend[l] = f32::from_bits(u32::MAX);
                any = true;
            }
        }
        let mut t = self.soa_level_any(
            look,
            &Levels {
                each: level0,
                same: same0,
            },
            decode,
        );
        if any {
            let t1 = self.soa_level_any(
                look,
                &Levels {
                    each: level1,
                    same: same1,
                },
                decode,
            );
            let (w, mask) = (f32x8::new(weight), f32x8::new(blend));
            for k in 0..4 {
                t[k] = mask.select(t[k] + (t1[k] - t[k]) * w, t[k]);
            }
        }
        self.finish_soa(t)
    }

    /// The filtered channels as [`Texture::sample`] returns them: the
    /// probe sum of one probe, `0.0 + t` (a -0.0 becomes +0.0), then the
    /// view swizzle.
    #[inline(always)]
    fn finish_soa(&self, mut t: [f32x8; 4]) -> [Lanes; 4] {
        for v in &mut t {
            *v = f32x8::ZERO + *v;
        }
        self.swizzle_lanes(t)
    }

    /// [`Texture::swizzle_f32`] on lanes: the view swizzle of RGBA
    /// channels (constants 0 and 1 for `Zero` / `One`).
    #[inline(always)]
    pub(super) fn swizzle_lanes(&self, rgba: [Lanes; 4]) -> [Lanes; 4] {
        use super::Swizzle::{W, X, Y, Z};
        // (the usual view first: four selects per lookup were ~5 % of
        // post_f32's planned path)
        if self.swizzle == [X, Y, Z, W] {
            return rgba;
        }
        let pick = |sw: super::Swizzle| match sw {
            super::Swizzle::X => rgba[0],
            super::Swizzle::Y => rgba[1],
            super::Swizzle::Z => rgba[2],
            super::Swizzle::W => rgba[3],
            super::Swizzle::Zero | super::Swizzle::None => f32x8::ZERO,
            super::Swizzle::One => f32x8::ONE,
        };
        let sw = self.swizzle;
        [pick(sw[0]), pick(sw[1]), pick(sw[2]), pick(sw[3])]
    }

    /// [`Texture::sample_level`] for 8 lanes, lane `l` at absolute level
    /// `levels[l]`: texels with border and comparison applied, filtered.
    /// One call per level and group; each (axes, filter) body is
    /// monomorphised inside.
    #[inline(never)]
    fn soa_level_any<D: Texels>(
        &self,
        look: &Lookup<'_>,
        levels: &Levels,
        decode: &D,
    ) -> [f32x8; 4] {
        match (self.dims(), look.linear) {
            (1, false) => level_simd::<D, 1, false>(self, look, levels, decode),
            (1, true) => level_simd::<D, 1, true>(self, look, levels, decode),
            (2, false) => level_simd::<D, 2, false>(self, look, levels, decode),
            (2, true) => level_simd::<D, 2, true>(self, look, levels, decode),
            (_, false) => level_simd::<D, 3, false>(self, look, levels, decode),
            (_, true) => level_simd::<D, 3, true>(self, look, levels, decode),
        }
    }

    /// [`Self::soa_level_any`] for `DIMS` axes and the filter (`LINEAR`)
    /// as constants: the axis loops unroll and the other filter's code
    /// goes (the generic form kept a 3.6 KiB stack frame of arrays).
    #[inline(always)]
    fn soa_level<D: Texels, const DIMS: usize, const LINEAR: bool>(
        &self,
        look: &Lookup<'_>,
        levels: &Levels,
        decode: &D,
    ) -> [f32x8; 4] {
        let s = look.s;
        let rows = self.soa_table().lanes(&levels.each, levels.same);
        let levels = levels.each;
        let sizes = rows.size;
        let dims = DIMS;
        let uses_linear =
            s.min_img_filter == TexFilter::Linear || s.mag_img_filter == TexFilter::Linear;
        let wraps = look.wraps;
        // per axis: the two texel indices (clamped), the lanes where
        // each reads the border, and the weight
        let mut idx = [[i32x8::ZERO; 2]; 3];
        let mut border = [[i32x8::ZERO; 2]; 3];
        let mut weights = [f32x8::ZERO; 3];
        // Axis by axis with constant indices, not a loop: LLVM kept the
        // loop over `0..DIMS` and read each axis' size back from a stack
        // array just written lane by lane, a store-forwarding stall (10 %
        // of post_f16, `perf annotate`).
        (idx[0], border[0], weights[0]) =
            AxisTaps::<LINEAR>::new(look, sizes[0], wraps[0], 0, uses_linear);
        if dims >= 2 {
            (idx[1], border[1], weights[1]) =
                AxisTaps::<LINEAR>::new(look, sizes[1], wraps[1], 1, uses_linear);
        }
        if dims >= 3 {
            (idx[2], border[2], weights[2]) =
                AxisTaps::<LINEAR>::new(look, sizes[2], wraps[2], 2, uses_linear);
        }
        // Byte offsets in i32 lanes: every row's level fits (its last
        // texel ends inside the data, below 2 GiB: `LevelRow::fits`),
        // so no lane overflows.  Otherwise lane by lane in `usize`, where
        // a lane past the view's last level reads zeros (`texel_f32`).
        let (fits, base, row, slice) = (rows.fits, rows.offset, rows.row, rows.slice);
        let mut lane_slice = [0i32; LANES];
        for (d, &z) in lane_slice.iter_mut().zip(&look.slice) {
            *d = z as i32;
        }
        let lane_slice = i32x8::new(lane_slice);
        let bpp = i32x8::splat(self.bpp as i32);
        let mut idx_l = [[[0i32; LANES]; 2]; 3];
        if !fits {
            for a in 0..3 {
                idx_l[a] = [idx[a][0].to_array(), idx[a][1].to_array()];
            }
        }
        let corners = Corners {
            t: self,
            look,
            levels,
            dims,
            fits,
            idx,
            idx_l,
            border,
            base,
            row,
            slice,
            lane_slice,
            bpp,
        };
        // (a struct's inlined method, not a closure: a closure is its own
        // function, compiled without the multiversion clone's features)
        if !LINEAR {
            return corners.fetch(decode, 0, 0, 0);
        }
        let t0 = corners.fetch(decode, 0, 0, 0);
        let t1 = corners.fetch(decode, 1, 0, 0);
        // 1D: the second row is the first (index 0, no border)
        let (t2, t3) = if dims >= 2 {
            (
                corners.fetch(decode, 0, 1, 0),
                corners.fetch(decode, 1, 1, 0),
            )
        } else {
            (t0, t1)
        };
        let [wx, wy, wz] = weights;
        let bottom = lerp4(&t0, &t1, wx);
        let top = lerp4(&t2, &t3, wx);
        let mut r = lerp4(&bottom, &top, wy);
        if dims == 3 {
            let b2 = lerp4(
                &corners.fetch(decode, 0, 0, 1),
                &corners.fetch(decode, 1, 0, 1),
                wx,
            );
            let t2 = lerp4(
                &corners.fetch(decode, 0, 1, 1),
                &corners.fetch(decode, 1, 1, 1),
                wx,
            );
            r = lerp4(&r, &lerp4(&b2, &t2, wy), wz);
        }
        r
    }

    /// [`Texture::sample_aos_scalar`] for 8 lanes when every lane filters
    /// with NEAREST: the stored bytes of each lane's texel (blended
    /// between two levels with `lerp8`), times 1/255, through the format's
    /// channel map and the view swizzle.  `None` for other filters.
    pub(super) fn sample_aos_nearest(
        &self,
        s: &SamplerState,
        lods: &[LevelChoice; LANES],
        coords: &[[f32; LANES]; 3],
        layers: &[u32; LANES],
        offset: [i32; 3],
    ) -> Option<[Lanes; 4]> {
        if lods.iter().any(|l| l.filter != TexFilter::Nearest) || self.levels.is_empty() {
            return None;
        }
        let coord = coords.map(f32x8::new);
        let mut t = self.aos_nearest_level(s, lods.map(|l| l.level0), &coord, layers, offset);
        let w: [i32; LANES] = lods.map(|l| ((l.weight * 256.0) as i32).clamp(0, 255));
        let blend: [bool; LANES] =
            std::array::from_fn(|l| w[l] > 0 && lods[l].level1 != lods[l].level0);
        if blend.contains(&true) {
            let t1 = self.aos_nearest_level(s, lods.map(|l| l.level1), &coord, layers, offset);
            let mask = i32x8::new(blend.map(|b| if b { -1 } else { 0 }));
            let w = i32x8::new(w);
            for k in 0..4 {
                t[k] = mask.select(lerp8x8(t[k], t1[k], w), t[k]);
            }
        }
        let scale = f32x8::splat(1.0 / 255.0);
        let rgba = self.channel_of.map(|ch| match ch {
            0..=3 => t[ch as usize].round_float() * scale,
            4 => f32x8::ZERO,
            _ => f32x8::ONE,
        });
        Some(self.swizzle_lanes(rgba))
    }

    /// [`Texture::aos_level`]'s NEAREST branch for 8 lanes: each lane's
    /// stored bytes (0 where the texel is outside the data).
    fn aos_nearest_level(
        &self,
        s: &SamplerState,
        levels: [u32; LANES],
        coord: &[f32x8; 3],
        layers: &[u32; LANES],
        offset: [i32; 3],
    ) -> [i32x8; 4] {
        // `aos_level` reads a level past the last at the last
        let last = self.levels.len() - 1;
        let levels = levels.map(|l| l.min(last as u32));
        let same = levels[1..].iter().all(|&l| l == levels[0]);
        let rows = self.soa_table().lanes(&levels, same);
        let sizes = rows.size;
        let dims = self.dims();
        let nlayers = (self.last_layer - self.first_layer + 1) as i32;
        let wraps = [s.wrap_s, s.wrap_t, s.wrap_r];
        let mut idx = [i32x8::ZERO; 3];
        for a in 0..dims {
            let axis = Axis::new(sizes[a], wraps[a], offset[a], s.normalized_coords);
            let i = axis.nearest(coord[a]);
            idx[a] = i.max(i32x8::ZERO).min(axis.len - i32x8::ONE);
        }
        let mut slice = [self.first_layer as i32; LANES];
        if dims != 3 && self.arrayed() {
            for l in 0..LANES {
                slice[l] =
                    (self.first_layer + (layers[l] as i32).clamp(0, nlayers - 1) as u32) as i32;
            }
        }
        let z = if dims == 3 { idx[2] } else { i32x8::new(slice) };
        let (data, bpp) = (self.data, self.bpp);
        let mut off = [usize::MAX; LANES];
        if rows.fits {
            // i32 lanes: every texel of a fitting level is below 2 GiB
            let o = rows.offset
                + z * rows.slice
                + idx[1] * rows.row
                + idx[0] * i32x8::splat(bpp as i32);
            for (d, &v) in off.iter_mut().zip(&o.to_array()) {
                *d = v as u32 as usize;
            }
        } else {
            let (z, y, x) = (z.to_array(), idx[1].to_array(), idx[0].to_array());
            for (l, d) in off.iter_mut().enumerate() {
                let v = &self.levels[levels[l] as usize];
                *d = v.offset
                    + z[l] as u32 as usize * v.slice_stride
                    + y[l] as u32 as usize * v.row_stride
                    + x[l] as u32 as usize * bpp;
            }
        }
        if bpp == 4 {
            // one word per lane, its bytes as the four channels
            let mut w = [0i32; LANES];
            for l in 0..LANES {
                w[l] = word(data, off[l]);
            }
            let w = i32x8::new(w);
            let byte = i32x8::splat(0xff);
            return [
                w & byte,
                (w >> 8) & byte,
                (w >> 16) & byte,
                (w >> 24) & byte,
            ];
        }
        let mut t = [[0i32; LANES]; 4];
        for l in 0..LANES {
            if let Some(px) = off[l].checked_add(bpp).and_then(|e| data.get(off[l]..e)) {
                for (k, tk) in t.iter_mut().enumerate() {
                    tk[l] = px.get(k).copied().unwrap_or(0) as i32;
                }
            }
        }
        t.map(i32x8::new)
    }
}

/// One axis of [`Texture::soa_level`]: the two texel indices, clamped
/// into the level, the lanes where each reads the border, and the
/// weight (0 for NEAREST).
struct AxisTaps<const LINEAR: bool>;

impl<const LINEAR: bool> AxisTaps<LINEAR> {
    #[inline(always)]
    #[allow(clippy::new_ret_no_self)]
    fn new(
        look: &Lookup<'_>,
        len: i32x8,
        wrap: TexWrap,
        a: usize,
        uses_linear: bool,
    ) -> ([i32x8; 2], [i32x8; 2], f32x8) {
        let axis = Axis::new(len, wrap, look.offset[a], look.s.normalized_coords);
        let (i0, i1, w) = if LINEAR {
            axis.linear(look.coord[a])
        } else {
            let i = axis.nearest(look.coord[a]);
            (i, i, f32x8::ZERO)
        };
        let last = axis.len - i32x8::ONE;
        let mut border = [i32x8::ZERO; 2];
        if wrap_uses_border(wrap, uses_linear) {
            border = [
                i0.simd_lt(i32x8::ZERO) | i0.simd_gt(last),
                i1.simd_lt(i32x8::ZERO) | i1.simd_gt(last),
            ];
        }
        let idx = [i0.max(i32x8::ZERO).min(last), i1.max(i32x8::ZERO).min(last)];
        (idx, border, w)
    }
}

/// What [`Texture::soa_level`] fetches its corner texels from.
struct Corners<'c, 't> {
    t: &'c Texture<'t>,
    look: &'c Lookup<'c>,
    levels: [u32; LANES],
    dims: usize,
    /// Every lane's level fits ([`LevelRow::fits`]): offsets in i32 lanes.
    fits: bool,
    /// Per axis, the two clamped texel indices, as lanes and as arrays.
    idx: [[i32x8; 2]; 3],
    idx_l: [[[i32; LANES]; 2]; 3],
    /// Per axis, the lanes where each index reads the border.
    border: [[i32x8; 2]; 3],
    base: i32x8,
    row: i32x8,
    slice: i32x8,
    lane_slice: i32x8,
    bpp: i32x8,
}

impl Corners<'_, '_> {
    /// The texels of corner (`i`, `j`, `k`) (0 / 1 per axis), border
    /// and comparison applied.
    #[inline(always)]
    fn fetch<D: Texels>(&self, decode: &D, i: usize, j: usize, k: usize) -> [f32x8; 4] {
        let (t, look, dims) = (self.t, self.look, self.dims);
        let mut off = [usize::MAX; LANES];
        if self.fits {
            let z = if dims == 3 {
                self.idx[2][k]
            } else {
                self.lane_slice
            };
            let y = if dims >= 2 {
                self.idx[1][j]
            } else {
                i32x8::ZERO
            };
            let o = self.base + z * self.slice + y * self.row + self.idx[0][i] * self.bpp;
            let tx = decode.fetch_fit(t.data, o);
            return self.finish(tx, i, j, k);
        } else {
            for (l, d) in off.iter_mut().enumerate() {
                let Some(v) = t.levels.get(self.levels[l] as usize) else {
                    continue;
                };
                let z = if dims == 3 {
                    self.idx_l[2][k][l] as u32
                } else {
                    look.slice[l]
                };
                let y = if dims >= 2 {
                    self.idx_l[1][j][l] as u32
                } else {
                    0
                };
                let x = self.idx_l[0][i][l] as u32;
                *d = v.offset
                    + z as usize * v.slice_stride
                    + y as usize * v.row_stride
                    + x as usize * t.bpp;
            }
        }
        let tx = decode.fetch(t.data, &off);
        self.finish(tx, i, j, k)
    }

    /// Border colour and depth comparison on the texels of corner (`i`,
    /// `j`, `k`).
    #[inline(always)]
    fn finish(&self, mut tx: [f32x8; 4], i: usize, j: usize, k: usize) -> [f32x8; 4] {
        let (t, look) = (self.t, self.look);
        let hit = self.border[0][i] | self.border[1][j] | self.border[2][k];
        if hit.any() {
            let hit: f32x8 = bytemuck::cast(hit);
            for ((tc, &present), &b) in tx.iter_mut().zip(&t.present).zip(&look.border) {
                if present {
                    *tc = hit.select(f32x8::splat(b), *tc);
                }
            }
        }
        if let Some((func, r)) = look.cmp {
            let pass = compare(func, r, tx[0]);
            tx = [
                pass.select(f32x8::ONE, f32x8::ZERO),
                f32x8::ZERO,
                f32x8::ZERO,
                f32x8::ONE,
            ];
        }
        tx
    }
}

/// Texel loads of one format: the texels at byte offsets `off` (a texel
/// not wholly inside `data`, `usize::MAX` among them: zeros) as channel lanes, each
/// lane [`decode_f32`]'s bits for its texel.
trait Texels {
    fn fetch(&self, data: &[u8], off: &[usize; LANES]) -> [f32x8; 4];

    /// [`Texels::fetch`] at byte offsets in i32 lanes whose texels all lie
    /// inside `data` ([`LevelRow::fits`]): no per-lane checks or zeros,
    /// and the texels go from loads to lanes in registers.  (Through
    /// `fetch`'s arrays, eight scalar stores read back as one vector per
    /// channel, a store-forwarding stall each: `perf annotate` put most
    /// of post_f32's level body on them.)  Memory safety does not rest on
    /// the caller: [`clamp_offsets`] keeps every load inside `data`.
    #[inline(always)]
    fn fetch_fit(&self, data: &[u8], off: i32x8) -> [f32x8; 4] {
        let mut o = [usize::MAX; LANES];
        for (d, &v) in o.iter_mut().zip(&off.to_array()) {
            *d = v as u32 as usize;
        }
        self.fetch(data, &o)
    }
}

/// `off` as unsigned offsets, each at most `data.len() - bpp` and
/// `i32::MAX` (an
/// unsigned `min`, which leaves every in-range offset as it is): the
/// texel of `bpp` bytes at each is inside `data`.  `None` when `data`
/// holds no whole texel.
#[inline(always)]
fn clamp_offsets(data: &[u8], bpp: usize, off: i32x8) -> Option<[u32; LANES]> {
    // (at most `i32::MAX` too: a gather's indices are signed)
    let max = data.len().checked_sub(bpp)?.min(i32::MAX as usize) as u32;
    let o: u32x8 = bytemuck::cast(off);
    Some(o.min(u32x8::splat(max)).to_array())
}

/// The 4x4 transpose of four registers (`_MM_TRANSPOSE4_PS`): lane `l`
/// of result `k` is lane `k` of input `l`.  Shuffles only: the bits move
/// as they are.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn transpose4(r: [core::arch::x86_64::__m128; 4]) -> [core::arch::x86_64::__m128; 4] {
    use core::arch::x86_64::*;
    // SAFETY: SSE is part of x86-64's baseline; shuffles of registers.
    unsafe {
        let t0 = _mm_unpacklo_ps(r[0], r[1]);
        let t1 = _mm_unpacklo_ps(r[2], r[3]);
        let t2 = _mm_unpackhi_ps(r[0], r[1]);
        let t3 = _mm_unpackhi_ps(r[2], r[3]);
        [
            _mm_movelh_ps(t0, t1),
            _mm_movehl_ps(t1, t0),
            _mm_movelh_ps(t2, t3),
            _mm_movehl_ps(t3, t2),
        ]
    }
}

/// Eight 16-bit values zero-extended to 32-bit lanes.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn widen_u16(h: core::arch::x86_64::__m128i) -> i32x8 {
    use core::arch::x86_64::*;
    // SAFETY: SSE2 is part of x86-64's baseline; unpacks of registers.
    unsafe {
        let z = _mm_setzero_si128();
        bytemuck::cast([_mm_unpacklo_epi16(h, z), _mm_unpackhi_epi16(h, z)])
    }
}

/// Two 4-lane halves as 8 lanes (lanes 0-3 from `lo`).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn join(lo: core::arch::x86_64::__m128, hi: core::arch::x86_64::__m128) -> f32x8 {
    bytemuck::cast([lo, hi])
}

/// The IEEE half in the low 16 bits of each lane, widened exactly:
/// `pack::f16_to_f32`'s bits (`half`'s conversion: a NaN keeps its
/// payload and becomes quiet, a subnormal is `m * 2^-24`).
#[inline(always)]
fn f16_lanes(h: i32x8) -> f32x8 {
    let exp = h & i32x8::splat(0x7c00);
    let man = h & i32x8::splat(0x3ff);
    let sign = (h & i32x8::splat(0x8000)) << 16_i32;
    let normal = ((h & i32x8::splat(0x7fff)) << 13_i32) + i32x8::splat(0x3800_0000);
    let nan = !man.simd_eq(i32x8::ZERO) & i32x8::splat(0x0040_0000);
    let special = i32x8::splat(0x7f80_0000) | (man << 13_i32) | nan;
    let sub: i32x8 = bytemuck::cast(man.round_float() * f32x8::splat(1.0 / 16_777_216.0));
    let v = exp
        .simd_eq(i32x8::splat(0x7c00))
        .select(special, exp.simd_eq(i32x8::ZERO).select(sub, normal));
    bytemuck::cast(v | sign)
}

/// The 4-byte word at `o` (0 where it is not inside `data`).
#[inline(always)]
fn word(data: &[u8], o: usize) -> i32 {
    o.checked_add(4)
        .and_then(|e| data.get(o..e))
        .map_or(0, |p| i32::from_le_bytes([p[0], p[1], p[2], p[3]]))
}

/// R8G8B8A8_UNORM, or B8G8R8A8_UNORM with `BGRA`: one word per lane,
/// each byte times 1/255 ([`decode_f32`]'s arms).
#[derive(Clone, Copy)]
struct Unorm8x4<const BGRA: bool> {
    /// The CPU gathers (AVX2) and its gathers are fast
    /// ([`ferropipe_components::simd::fast_gathers`]): one `vpgatherdd`
    /// for the 8 words, 0.89x post_mirror's time against 8 scalar loads
    /// inserted lane by lane on an Intel Xeon (paired A/B, 3 rounds).
    gather: bool,
}

impl<const BGRA: bool> Texels for Unorm8x4<BGRA> {
    #[inline(always)]
    fn fetch(&self, data: &[u8], off: &[usize; LANES]) -> [f32x8; 4] {
        let mut w = [0i32; LANES];
        for l in 0..LANES {
            w[l] = word(data, off[l]);
        }
        Self::channels(i32x8::new(w))
    }

    #[inline(always)]
    fn fetch_fit(&self, data: &[u8], off: i32x8) -> [f32x8; 4] {
        let Some(o) = clamp_offsets(data, 4, off) else {
            return [f32x8::ZERO; 4];
        };
        let p = data.as_ptr();
        #[cfg(target_arch = "x86_64")]
        if self.gather {
            use core::arch::x86_64::{__m256i, _mm256_i32gather_epi32};
            let idx: __m256i = bytemuck::cast(u32x8::new(o));
            // SAFETY: `gather` is set only where the CPU has AVX2
            // (`Unorm8x4::detect`); every `o[l]` is at most `i32::MAX`
            // and `o[l] + 4 <= data.len()` (`clamp_offsets`), so each
            // lane's 4-byte load (scale 1: `p + o[l]`) is inside `data`;
            // the gather has no alignment requirement.
            let v = unsafe { _mm256_i32gather_epi32::<1>(p.cast::<i32>(), idx) };
            return Self::channels(bytemuck::cast(v));
        }
        let mut w = [0i32; LANES];
        for l in 0..LANES {
            // SAFETY: `o[l] + 4 <= data.len()` (`clamp_offsets`): the
            // unaligned 4-byte read is inside `data`.
            w[l] = i32::from_le(unsafe { p.add(o[l] as usize).cast::<i32>().read_unaligned() });
        }
        Self::channels(i32x8::new(w))
    }
}

impl<const BGRA: bool> Unorm8x4<BGRA> {
    fn detect() -> Self {
        #[cfg(target_arch = "x86_64")]
        {
            Unorm8x4 {
                gather: std::arch::is_x86_feature_detected!("avx2")
                    && ferropipe_components::simd::fast_gathers(),
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        Unorm8x4 { gather: false }
    }

    /// Each lane's word as its channels.
    #[inline(always)]
    fn channels(w: i32x8) -> [f32x8; 4] {
        let k = f32x8::splat(1.0 / 255.0);
        let mask = i32x8::splat(0xff);
        let b0 = (w & mask).round_float() * k;
        let b1 = ((w >> 8_i32) & mask).round_float() * k;
        let b2 = ((w >> 16_i32) & mask).round_float() * k;
        let b3 = ((w >> 24_i32) & mask).round_float() * k;
        // a missing texel is [0; 4] in `decode_f32`'s caller, alpha included
        if BGRA {
            [b2, b1, b0, b3]
        } else {
            [b0, b1, b2, b3]
        }
    }
}

/// R32G32B32A32_FLOAT: four floats per lane.
struct Float32x4;

impl Texels for Float32x4 {
    #[inline(always)]
    fn fetch(&self, data: &[u8], off: &[usize; LANES]) -> [f32x8; 4] {
        let mut ch = [[0f32; LANES]; 4];
        for l in 0..LANES {
            if let Some(p) = off[l].checked_add(16).and_then(|e| data.get(off[l]..e)) {
                for (k, c) in ch.iter_mut().enumerate() {
                    c[l] = f32::from_le_bytes([p[4 * k], p[4 * k + 1], p[4 * k + 2], p[4 * k + 3]]);
                }
            }
        }
        ch.map(f32x8::new)
    }

    /// One 16-byte load per lane and two 4x4 transposes.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn fetch_fit(&self, data: &[u8], off: i32x8) -> [f32x8; 4] {
        use core::arch::x86_64::*;
        let Some(o) = clamp_offsets(data, 16, off) else {
            return [f32x8::ZERO; 4];
        };
        let p = data.as_ptr();
        // SAFETY: every `o[l] + 16 <= data.len()` (`clamp_offsets`), so
        // each 16-byte load reads bytes of `data`; `loadu` has no
        // alignment requirement, and SSE is part of x86-64's baseline.
        let (lo, hi) = unsafe {
            (
                transpose4([
                    _mm_loadu_ps(p.add(o[0] as usize).cast()),
                    _mm_loadu_ps(p.add(o[1] as usize).cast()),
                    _mm_loadu_ps(p.add(o[2] as usize).cast()),
                    _mm_loadu_ps(p.add(o[3] as usize).cast()),
                ]),
                transpose4([
                    _mm_loadu_ps(p.add(o[4] as usize).cast()),
                    _mm_loadu_ps(p.add(o[5] as usize).cast()),
                    _mm_loadu_ps(p.add(o[6] as usize).cast()),
                    _mm_loadu_ps(p.add(o[7] as usize).cast()),
                ]),
            )
        };
        [
            join(lo[0], hi[0]),
            join(lo[1], hi[1]),
            join(lo[2], hi[2]),
            join(lo[3], hi[3]),
        ]
    }
}

/// R16G16B16A16_FLOAT: four halves per lane, widened exactly
/// (`pack::f16_to_f32`, what the format's `Unpacker` does per channel).
#[derive(Clone, Copy)]
struct Float16x4 {
    /// The CPU converts halves (F16C, with AVX): `vcvtph2ps`, which
    /// gives `half`'s bits (exact, a NaN kept and made quiet), 8 lanes an
    /// instruction instead of [`f16_lanes`]' ~15 (post_f16 0.92x).
    f16c: bool,
}

impl Float16x4 {
    fn detect() -> Self {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::is_x86_feature_detected as has;
            Float16x4 {
                f16c: has!("f16c") && has!("avx"),
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        Float16x4 { f16c: false }
    }
}

impl Texels for Float16x4 {
    #[inline(always)]
    fn fetch(&self, data: &[u8], off: &[usize; LANES]) -> [f32x8; 4] {
        let mut ch = [[0f32; LANES]; 4];
        for l in 0..LANES {
            if let Some(p) = off[l].checked_add(8).and_then(|e| data.get(off[l]..e)) {
                for (k, c) in ch.iter_mut().enumerate() {
                    c[l] = pack::f16_to_f32(u16::from_le_bytes([p[2 * k], p[2 * k + 1]]));
                }
            }
        }
        ch.map(f32x8::new)
    }

    /// One 8-byte load per lane, the halves transposed into one
    /// register of 8 per channel, widened by `vcvtph2ps` or
    /// [`f16_lanes`].
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn fetch_fit(&self, data: &[u8], off: i32x8) -> [f32x8; 4] {
        use core::arch::x86_64::*;
        let Some(o) = clamp_offsets(data, 8, off) else {
            return [f32x8::ZERO; 4];
        };
        let p = data.as_ptr();
        // SAFETY: every `o[l] + 8 <= data.len()` (`clamp_offsets`), so
        // each 8-byte load reads bytes of `data`; `loadl_epi64` has no
        // alignment requirement, and SSE2 (loads, unpacks) is part of
        // x86-64's baseline.
        let ch = unsafe {
            let mut q = [_mm_setzero_si128(); LANES];
            for l in 0..LANES {
                q[l] = _mm_loadl_epi64(p.add(o[l] as usize).cast());
            }
            // r0 r1 g0 g1 b0 b1 a0 a1, then r0-r3 g0-g3 and b0-b3 a0-a3
            let (a, b) = (
                _mm_unpacklo_epi16(q[0], q[1]),
                _mm_unpacklo_epi16(q[2], q[3]),
            );
            let (c, d) = (
                _mm_unpacklo_epi16(q[4], q[5]),
                _mm_unpacklo_epi16(q[6], q[7]),
            );
            let (rg0, ba0) = (_mm_unpacklo_epi32(a, b), _mm_unpackhi_epi32(a, b));
            let (rg1, ba1) = (_mm_unpacklo_epi32(c, d), _mm_unpackhi_epi32(c, d));
            // each channel's 8 halves, lane order
            [
                _mm_unpacklo_epi64(rg0, rg1),
                _mm_unpackhi_epi64(rg0, rg1),
                _mm_unpacklo_epi64(ba0, ba1),
                _mm_unpackhi_epi64(ba0, ba1),
            ]
        };
        if self.f16c {
            // SAFETY: `f16c` is set only where the CPU has F16C and AVX
            // (`Float16x4::detect`); the conversion works on registers.
            unsafe {
                return [
                    bytemuck::cast(_mm256_cvtph_ps(ch[0])),
                    bytemuck::cast(_mm256_cvtph_ps(ch[1])),
                    bytemuck::cast(_mm256_cvtph_ps(ch[2])),
                    bytemuck::cast(_mm256_cvtph_ps(ch[3])),
                ];
            }
        }
        [
            f16_lanes(widen_u16(ch[0])),
            f16_lanes(widen_u16(ch[1])),
            f16_lanes(widen_u16(ch[2])),
            f16_lanes(widen_u16(ch[3])),
        ]
    }
}

/// Any format: `.1` per lane on the texel's `.0` bytes.
struct PerLane<F>(usize, F);

impl<F: Fn(&[u8]) -> [f32; 4]> Texels for PerLane<F> {
    #[inline(always)]
    fn fetch(&self, data: &[u8], off: &[usize; LANES]) -> [f32x8; 4] {
        let mut ch = [[0f32; LANES]; 4];
        for l in 0..LANES {
            if let Some(p) = off[l].checked_add(self.0).and_then(|e| data.get(off[l]..e)) {
                let t = (self.1)(p);
                for k in 0..4 {
                    ch[k][l] = t[k];
                }
            }
        }
        ch.map(f32x8::new)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Lod, TexMipFilter};
    use super::*;
    use ferropipe_components::enums::TexCompareMode;
    use ferropipe_components::resource::{ResourceLayout, ResourceTemplate};
    use ferropipe_components::shader::BoundTexture;
    use ferropipe_components::view::SamplerViewDesc;

    const WRAPS: [TexWrap; 8] = [
        TexWrap::Repeat,
        TexWrap::Clamp,
        TexWrap::ClampToEdge,
        TexWrap::ClampToBorder,
        TexWrap::MirrorRepeat,
        TexWrap::MirrorClamp,
        TexWrap::MirrorClampToEdge,
        TexWrap::MirrorClampToBorder,
    ];

    const DEPTHS: [f32; 5] = [0.0, 0.25, 0.5, 1.0, f32::NAN];

    struct Rng(u32);

    impl Rng {
        fn next(&mut self) -> u32 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 17;
            self.0 ^= self.0 << 5;
            self.0
        }

        /// Mostly ordinary coordinates, sometimes edge values.
        fn coord(&mut self, span: f32) -> f32 {
            match self.next() % 40 {
                0 => f32::NAN,
                1 => f32::INFINITY,
                2 => f32::NEG_INFINITY,
                3 => 3e9,
                4 => -3e9,
                5 => -0.0,
                6 => 1.0,
                7 => 0.5,
                _ => (self.next() as i32 as f32) / i32::MAX as f32 * span + 0.25,
            }
        }
    }

    /// A resource with random bytes (float formats: random finite values
    /// and some specials), with its view.
    fn texture(
        templ: ResourceTemplate,
        rng: &mut Rng,
    ) -> (ResourceLayout, SamplerViewDesc, Vec<u8>) {
        let layout = ResourceLayout::new(&templ).unwrap();
        let data: Vec<u8> = match templ.format {
            // depths from a few values that references hit exactly
            Format::Z32_FLOAT => (0..layout.size / 4)
                .flat_map(|_| DEPTHS[(rng.next() % 5) as usize].to_le_bytes())
                .collect(),
            Format::R32G32B32A32_FLOAT => (0..layout.size / 4)
                .flat_map(|_| {
                    let v = match rng.next() % 50 {
                        0 => f32::NAN,
                        1 => f32::INFINITY,
                        2 => -0.0,
                        _ => rng.next() as f32 / u32::MAX as f32 * 4.0 - 1.0,
                    };
                    v.to_le_bytes()
                })
                .collect(),
            _ => (0..layout.size).map(|_| rng.next() as u8).collect(),
        };
        (layout, SamplerViewDesc::of_resource(&templ), data)
    }

    /// `texture`'s resource bound through its view.
    fn bound<'a>(
        layout: &'a ResourceLayout,
        view: &'a SamplerViewDesc,
        data: &'a [u8],
    ) -> Texture<'a> {
        Texture::new(&BoundTexture {
            view,
            layout,
            resource_format: view.format,
            data,
        })
        .unwrap()
    }

    /// The bits of each lane, every NaN as one: a NaN's sign and payload
    /// follow operand order (x86 returns the first operand's NaN, and
    /// LLVM commutes additions), which neither path fixes nor llvmpipe
    /// promises.
    fn bits(v: [Lanes; 4]) -> [[u32; LANES]; 4] {
        v.map(|c| {
            c.to_array()
                .map(|x| if x.is_nan() { u32::MAX } else { x.to_bits() })
        })
    }

    /// The SIMD general path gives the scalar path's bits for every wrap mode, both filters, every mip filter,
    /// normalized and unnormalized coordinates, texel offsets, depth
    /// comparison with every function, 1D / 2D / 2D array / 3D / cube /
    /// cube array views (cubes not seamless, or NEAREST) of
    /// power-of-two and other sizes, RGBA8 / BGRA8 / RGBA32F / RGBA16F /
    /// RG8 / Z32F texels, views starting above level 0, and coordinates,
    /// layers, LODs and references that are NaN, infinite or far outside.
    #[test]
    fn soa_matches_the_scalar_path() {
        let mut rng = Rng(0x5eed_1234);
        let (mut taken, mut total) = (0usize, 0usize);
        let mut seamless_linear = 0usize;
        let mut planned = 0usize;
        let shapes: [(TextureTarget, Format, u32, u32, u32, u32); 12] = [
            // one level: the plan's fixed choice whatever the mip filter
            (
                TextureTarget::Texture2D,
                Format::R32G32B32A32_FLOAT,
                6,
                5,
                1,
                0,
            ),
            (
                TextureTarget::Texture2DArray,
                Format::R8G8B8A8_UNORM,
                7,
                3,
                2,
                0,
            ),
            (
                TextureTarget::Texture2D,
                Format::R8G8B8A8_UNORM,
                16,
                8,
                1,
                4,
            ),
            (
                TextureTarget::Texture2D,
                Format::B8G8R8A8_UNORM,
                12,
                6,
                1,
                2,
            ),
            (
                TextureTarget::Texture2D,
                Format::R32G32B32A32_FLOAT,
                5,
                9,
                1,
                3,
            ),
            (
                TextureTarget::Texture2D,
                Format::R16G16B16A16_FLOAT,
                8,
                8,
                1,
                3,
            ),
            (TextureTarget::Texture1D, Format::R8G8_UNORM, 13, 1, 1, 3),
            (
                TextureTarget::Texture2DArray,
                Format::R8G8B8A8_UNORM,
                8,
                4,
                3,
                2,
            ),
            (
                TextureTarget::Texture3D,
                Format::R16G16B16A16_FLOAT,
                4,
                6,
                5,
                2,
            ),
            (TextureTarget::Texture2D, Format::Z32_FLOAT, 7, 8, 1, 2),
            (
                TextureTarget::TextureCube,
                Format::R8G8B8A8_UNORM,
                8,
                8,
                6,
                3,
            ),
            (
                TextureTarget::TextureCubeArray,
                Format::R16G16B16A16_FLOAT,
                4,
                4,
                12,
                2,
            ),
        ];
        for (target, format, w, h, d, last_level) in shapes {
            let mut templ = ResourceTemplate::texture_2d(format, w, h, Default::default());
            templ.target = target;
            templ.last_level = last_level;
            if target == TextureTarget::Texture3D {
                templ.depth0 = d;
            } else {
                templ.array_size = d;
            }
            let (layout, mut view, data) = texture(templ, &mut rng);
            for first in [0, 1].into_iter().filter(|&f| f <= last_level) {
                view.first_level = first;
                let tex = bound(&layout, &view, &data);
                for case in 0..160 {
                    let filter = |r: u32| {
                        if r.is_multiple_of(2) {
                            TexFilter::Nearest
                        } else {
                            TexFilter::Linear
                        }
                    };
                    let depth = format == Format::Z32_FLOAT;
                    let s = SamplerState {
                        wrap_s: WRAPS[(rng.next() % 8) as usize],
                        wrap_t: WRAPS[(rng.next() % 8) as usize],
                        wrap_r: WRAPS[(rng.next() % 8) as usize],
                        min_img_filter: filter(case),
                        mag_img_filter: filter(case),
                        min_mip_filter: [
                            TexMipFilter::None,
                            TexMipFilter::Nearest,
                            TexMipFilter::Linear,
                        ][(rng.next() % 3) as usize],
                        normalized_coords: !rng.next().is_multiple_of(4),
                        compare_mode: if depth && rng.next().is_multiple_of(2) {
                            TexCompareMode::RToTexture
                        } else {
                            TexCompareMode::None
                        },
                        compare_func: [
                            Func::Never,
                            Func::Less,
                            Func::Equal,
                            Func::Lequal,
                            Func::Greater,
                            Func::Notequal,
                            Func::Gequal,
                            Func::Always,
                        ][(rng.next() % 8) as usize],
                        border_color: [0.25, -2.0, 7.5, 0.5],
                        seamless_cube_map: rng.next().is_multiple_of(2),
                        ..Default::default()
                    };
                    let span = if s.normalized_coords { 3.0 } else { 40.0 };
                    let coord = [0; 3].map(|_| f32x8::new([0; LANES].map(|_| rng.coord(span))));
                    let layer = crate::lanemath::from_u(wide::u32x8::new(
                        [0; LANES].map(|_| (rng.next() % 6).wrapping_sub(1)),
                    ));
                    let lod = match rng.next() % 3 {
                        0 => Lod::Implicit,
                        1 => Lod::Level(f32x8::new([0; LANES].map(|_| rng.coord(4.0)))),
                        _ => Lod::Bias(f32x8::new([0; LANES].map(|_| rng.coord(2.0)))),
                    };
                    let offset = if rng.next().is_multiple_of(3) {
                        [0; 3].map(|_| (rng.next() % 9) as i32 - 4)
                    } else {
                        [0; 3]
                    };
                    let depth_ref = (!rng.next().is_multiple_of(4)).then(|| {
                        f32x8::new([0; LANES].map(|_| match rng.next() % 2 {
                            0 => DEPTHS[(rng.next() % 5) as usize],
                            _ => rng.coord(1.0),
                        }))
                    });
                    let args = SampleArgs {
                        coord,
                        layer,
                        lod,
                        depth_ref,
                        offset,
                    };
                    let compare = s.compare_mode == TexCompareMode::RToTexture && tex.depth;
                    let lods = tex.select_lods(&s, &args);
                    total += 1;
                    if tex.is_cube()
                        && s.seamless_cube_map
                        && s.normalized_coords
                        && lods[0].filter == TexFilter::Linear
                    {
                        seamless_linear += 1;
                    }
                    // The per-op plan gives `sample`'s bits wherever it is
                    // made, with this sampler and with one whose
                    // magnification filter differs (quads then may
                    // choose different filters: the scalar path).
                    let mut mixed = s;
                    mixed.mag_img_filter = filter(case + 1);
                    for s in [&s, &mixed] {
                        if let Some(plan) = tex.soa_plan(s, args.lod) {
                            planned += 1;
                            assert_eq!(
                                bits(tex.sample_planned(&plan, s, &args)),
                                bits(tex.sample(Some(s), &args)),
                                "planned: {target:?} {format:?} first {first} {s:?} {args:?}"
                            );
                        }
                    }
                    let Some(got) = tex.sample_soa(&s, &lods, &args, compare) else {
                        continue;
                    };
                    taken += 1;
                    let want = tex.sample_scalar(&s, &lods, None, &args, compare);
                    assert_eq!(
                        bits(got),
                        bits(want),
                        "{target:?} {format:?} first {first} {s:?} {args:?}"
                    );
                }
            }
        }
        // every case has one filter for all lanes (min == mag); seamless
        // LINEAR cube lookups stay scalar
        assert!(seamless_linear > 0);
        assert_eq!(taken, total - seamless_linear);
        // (RGBA8-sized views with REPEAT / CLAMP_TO_EDGE take the AoS
        // paths and get no plan)
        assert!(planned > total, "{planned} of {}", 2 * total);
    }

    /// Each specialised texel loader gives `decode_f32`'s bits, and zeros
    /// for a texel not wholly inside the data.
    #[test]
    fn texel_loaders_decode_as_decode_f32() {
        let mut rng = Rng(0x0dec_0de5);
        let data: Vec<u8> = (0..4096).map(|_| rng.next() as u8).collect();
        let check = |format: Format, bpp: usize, t: &dyn Fn(&[usize; LANES]) -> [f32x8; 4]| {
            for start in (0..data.len() - 8 * bpp).step_by(8 * bpp + 3) {
                let mut off: [usize; LANES] = std::array::from_fn(|l| start + l * bpp);
                off[5] = usize::MAX;
                off[6] = data.len() - bpp + 1;
                let got = bits(t(&off));
                for l in 0..LANES {
                    let want = match data.get(off[l]..off[l].saturating_add(bpp)) {
                        Some(p) if off[l] != usize::MAX => decode_f32(format, p),
                        _ => [0.0; 4],
                    };
                    let want = want.map(|x| if x.is_nan() { u32::MAX } else { x.to_bits() });
                    for k in 0..4 {
                        assert_eq!(got[k][l], want[k], "{format:?} lane {l} channel {k}");
                    }
                }
            }
        };
        check(Format::R8G8B8A8_UNORM, 4, &|o| {
            Unorm8x4::<false>::detect().fetch(&data, o)
        });
        check(Format::B8G8R8A8_UNORM, 4, &|o| {
            Unorm8x4::<true>::detect().fetch(&data, o)
        });
        check(Format::R32G32B32A32_FLOAT, 16, &|o| {
            Float32x4.fetch(&data, o)
        });
        check(Format::R16G16B16A16_FLOAT, 8, &|o| {
            Float16x4::detect().fetch(&data, o)
        });
        // `fetch_fit`: in-range offsets give `fetch`'s bits, NaN payloads
        // included (random halves hold NaNs, infinities and subnormals);
        // out-of-range ones stay inside the data
        let fit = |t: &dyn Fn(i32x8) -> [f32x8; 4],
                   f: &dyn Fn(&[usize; LANES]) -> [f32x8; 4],
                   bpp: usize| {
            for start in (0..data.len() - 8 * bpp).step_by(8 * bpp + 3) {
                let off: [usize; LANES] = std::array::from_fn(|l| start + l * bpp);
                let lanes = i32x8::new(off.map(|o| o as i32));
                let (got, want) = (t(lanes), f(&off));
                for k in 0..4 {
                    let (g, w) = (got[k].to_array(), want[k].to_array());
                    assert_eq!(
                        g.map(f32::to_bits),
                        w.map(f32::to_bits),
                        "bpp {bpp} channel {k}"
                    );
                }
            }
            let far = i32x8::new([-1, i32::MAX, i32::MIN, 0, 1 << 20, 7, -16, 3]);
            let _ = t(far);
            assert_eq!(bits(t(i32x8::ZERO)), bits(f(&[0; LANES])));
        };
        for gather in [false, Unorm8x4::<false>::detect().gather] {
            let (rgba, bgra) = (Unorm8x4::<false> { gather }, Unorm8x4::<true> { gather });
            fit(&|o| rgba.fetch_fit(&data, o), &|o| rgba.fetch(&data, o), 4);
            fit(&|o| bgra.fetch_fit(&data, o), &|o| bgra.fetch(&data, o), 4);
        }
        fit(
            &|o| Float32x4.fetch_fit(&data, o),
            &|o| Float32x4.fetch(&data, o),
            16,
        );
        for f16c in [false, Float16x4::detect().f16c] {
            let t = Float16x4 { f16c };
            fit(&|o| t.fetch_fit(&data, o), &|o| t.fetch(&data, o), 8);
        }
        // every half, exactly as `pack::f16_to_f32`
        let halves = i32x8::new(std::array::from_fn(|l| l as i32));
        for base in (0..0x10000).step_by(LANES) {
            let got = f16_lanes(halves + i32x8::splat(base)).to_array();
            for (l, g) in got.iter().enumerate() {
                let want = pack::f16_to_f32((base as usize + l) as u16);
                assert_eq!(
                    g.to_bits(),
                    want.to_bits(),
                    "half {:#06x}",
                    base as usize + l
                );
            }
        }
    }

    /// The AoS NEAREST path gives `sample_aos_scalar`'s bits: REPEAT and
    /// CLAMP_TO_EDGE (the AoS wraps), 1D / 2D / array / 3D, RGBA8 / RG8 /
    /// R8 views, mip filters, offsets, edge-valued coordinates.
    #[test]
    fn aos_nearest_matches_the_scalar_path() {
        let mut rng = Rng(0xfeed_0042);
        let mut taken = 0;
        let shapes: [(TextureTarget, Format, u32, u32, u32); 5] = [
            (TextureTarget::Texture2D, Format::R8G8B8A8_UNORM, 16, 8, 1),
            (TextureTarget::Texture2D, Format::R8G8_UNORM, 12, 5, 1),
            (TextureTarget::Texture1D, Format::R8_UNORM, 9, 1, 1),
            (
                TextureTarget::Texture2DArray,
                Format::B8G8R8A8_UNORM,
                8,
                8,
                3,
            ),
            (TextureTarget::Texture3D, Format::R8G8B8A8_UNORM, 4, 4, 4),
        ];
        for (target, format, w, h, d) in shapes {
            let mut templ = ResourceTemplate::texture_2d(format, w, h, Default::default());
            templ.target = target;
            templ.last_level = 2;
            if target == TextureTarget::Texture3D {
                templ.depth0 = d;
            } else {
                templ.array_size = d;
            }
            let (layout, view, data) = texture(templ, &mut rng);
            let tex = bound(&layout, &view, &data);
            for _ in 0..300 {
                let wrap = |r: u32| {
                    if r.is_multiple_of(2) {
                        TexWrap::Repeat
                    } else {
                        TexWrap::ClampToEdge
                    }
                };
                let s = SamplerState {
                    wrap_s: wrap(rng.next()),
                    wrap_t: wrap(rng.next()),
                    wrap_r: wrap(rng.next()),
                    min_img_filter: TexFilter::Nearest,
                    mag_img_filter: TexFilter::Nearest,
                    min_mip_filter: [
                        TexMipFilter::None,
                        TexMipFilter::Nearest,
                        TexMipFilter::Linear,
                    ][(rng.next() % 3) as usize],
                    normalized_coords: !rng.next().is_multiple_of(4),
                    ..Default::default()
                };
                let span = if s.normalized_coords { 3.0 } else { 40.0 };
                let coord = [0; 3].map(|_| f32x8::new([0; LANES].map(|_| rng.coord(span))));
                let layers = [0; LANES].map(|_| (rng.next() % 6).wrapping_sub(1));
                let args = SampleArgs {
                    coord,
                    layer: crate::lanemath::from_u(wide::u32x8::new(layers)),
                    lod: Lod::Level(f32x8::new([0; LANES].map(|_| rng.coord(3.0)))),
                    depth_ref: None,
                    offset: [0; 3].map(|_| (rng.next() % 5) as i32 - 2),
                };
                assert!(tex.use_aos(&s, &args));
                let lods = tex.select_lods(&s, &args);
                let coords = coord.map(|c| c.to_array());
                let got = tex
                    .sample_aos_nearest(&s, &lods, &coords, &layers, args.offset)
                    .expect("NEAREST everywhere");
                taken += 1;
                let want = tex.sample_aos_scalar(&s, &lods, &coords, &layers, args.offset);
                assert_eq!(
                    bits(got),
                    bits(want),
                    "{target:?} {format:?} {s:?} {args:?}"
                );
            }
        }
        assert_eq!(taken, 5 * 300);
    }
}
