//! Texture sampling (llvmpipe: `lp_bld_sample.c`, `lp_bld_sample_soa.c`;
//! softpipe: `sp_tex_sample.c`).
//!
//! Used by compiled programs ([`exec_texture`], [`exec_query`]) and by
//! Rust-native shaders ([`Texture`]), over the same lane groups: a group is
//! 8 lanes, two 2x2 quads in fragment shaders (`FRAG_LANE_X/Y`).
//!
//! # What is implemented
//! Targets 1D, 2D, 3D, cube, their arrays, RECT and buffers; every wrap mode
//! (border colour, `GL_CLAMP`, the mirror variants); nearest and linear
//! min/mag filters; mip filters none, nearest and linear; `lod_bias`,
//! `min_lod`, `max_lod`, shader bias, explicit LOD and gradients; depth
//! comparison (per texel, before filtering); unnormalized coordinates;
//! gather; texel fetch; anisotropic filtering (the EXT spec's recommended
//! form: up to `max_anisotropy` probes along the major axis); sampler-view
//! formats, swizzles (incl. 0/1), level and layer ranges;
//! `seamless_cube_map`: LINEAR lookups of cubes and cube arrays (every
//! level, so trilinear too; sampling with and without comparison, and
//! gather) take the texels that fall off a face from the adjacent faces,
//! and at the cube's corners share the missing texel's weight among the
//! three that exist, as llvmpipe (`Texture::seamless_cube`).  NEAREST and
//! texel fetch read one texel of one face, so the flag does not change
//! them; cubes never take the 8-bit or SIMD quad paths.
//!
//! # Matching llvmpipe
//! Where the GL specification leaves room, this does what the reference
//! llvmpipe does (measured against it, see `tests/sampler.rs`):
//! * the level of detail comes from *coarse* quad differences (top-right
//!   minus top-left, bottom-left minus top-left), one value per quad for
//!   implicit LOD, per lane for explicit LOD, bias and gradients, with
//!   `rho^2 = max(|d(size*st)/dx|^2, |d(size*st)/dy|^2)` (no rho
//!   approximation);
//! * `log2` is llvmpipe's piecewise-linear `fast_log2` (the exponent plus
//!   the mantissa minus one) of `rho^2`, halved; LINEAR mip filtering uses
//!   the plain fraction (no "brilinear" band);
//! * wrap modes compute texel indices exactly as `lp_build_sample_wrap_*`
//!   do (e.g. `CLAMP_TO_EDGE` clamps the scaled coordinate to
//!   `[0.5, size - 0.5]` before `floor`, `GL_CLAMP` pre-clamps to
//!   `[0, size]` and blends with the border);
//! * 8-bit UNORM textures sampled with REPEAT / CLAMP_TO_EDGE (llvmpipe's
//!   "AoS" path) are filtered in 8.8 fixed point: coordinates rounded to
//!   1/256 texel, `v0 + ((w * (v1 - v0) + 128) >> 8)` per lerp, the mip
//!   weight truncated to 8 bits.
//!
//! Everything else is filtered in `f32`.
//!
//! # Sampling plans
//! Implicit-LOD lookups of plain 2D RGBA8-sized UNORM8 views build a
//! [`QuadSampler`] per op and chunk, whose plan picks one of 16
//! monomorphised kernels (REPEAT / CLAMP_TO_EDGE per axis × LOD source,
//! LINEAR filters; `Kernel`), as llvmpipe generates its sampling code per
//! static sampler state.  Every other lookup, and any group a kernel
//! cannot take, runs the general path; the kernels are bit for bit the
//! scalar 8-bit path (`kernels_match_the_scalar_path`).

use ferropipe_components::enums::{
    Swizzle, TexCompareMode, TexFilter, TexMipFilter, TexWrap, TextureTarget,
};
use ferropipe_components::format::{ChannelType, Format, FormatKind};
use ferropipe_components::pack;
use ferropipe_components::resource::LevelLayout;
use ferropipe_components::shader::{BoundTexture, LANES, Lanes, ShaderResources};
use ferropipe_components::state::SamplerState;
use std::cell::Cell;

use smallvec::SmallVec;

use ferropipe_components::simd::X86V3;
use multiversion::multiversion;
use wide::{f32x8, i16x16, i32x8, u16x16, u32x8};

use crate::ir::{Op, Reg, TexDim, TexFn, TexKind, TexOp, TexQuery, TexQueryFn, loc};
use crate::lanemath::{as_u, from_u};

mod inline;
mod soa;

pub use inline::{
    InlineLod, InlineSample, LevelCol, TexDesc, inline_fallback, inline_shape, same_coordinates,
};

/// `PIPE_MAX_TEXTURE_LEVELS` (llvmpipe applies `max_lod` only below it - 1).
const MAX_TEXTURE_LEVELS: f32 = 16.0;

/// How the level of detail is given.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Lod {
    /// From the quad's derivatives (fragment shaders).
    Implicit,
    /// Implicit plus a per-lane bias.
    Bias(Lanes),
    /// Explicit per lane.
    Level(Lanes),
    /// From explicit gradients (d/dx and d/dy of each coordinate).
    Grad([Lanes; 3], [Lanes; 3]),
}

/// One sampling request for a group of 8 lanes.
#[derive(Clone, Copy, Debug)]
pub struct SampleArgs {
    /// s, t, r (cube: direction x, y, z).  Unused components are ignored.
    pub coord: [Lanes; 3],
    /// Array layer (i32 bits), for array targets.
    pub layer: Lanes,
    pub lod: Lod,
    /// Depth reference for comparison sampling.
    pub depth_ref: Option<Lanes>,
    /// Constant texel offset.
    pub offset: [i32; 3],
}

impl SampleArgs {
    /// Implicit-LOD sampling at `coord` (no layer, no offset).
    pub fn at(coord: [Lanes; 3]) -> Self {
        SampleArgs {
            coord,
            layer: f32x8::ZERO,
            lod: Lod::Implicit,
            depth_ref: None,
            offset: [0; 3],
        }
    }
}

/// A bound sampler view prepared for sampling.
#[derive(Clone, Debug)]
pub struct Texture<'a> {
    data: &'a [u8],
    levels: &'a [LevelLayout],
    bpp: usize,
    format: Format,
    target: TextureTarget,
    first_level: u32,
    last_level: u32,
    first_layer: u32,
    last_layer: u32,
    buffer_offset: u32,
    buffer_size: u32,
    swizzle: [Swizzle; 4],
    /// Which of R, G, B, A the format stores (the others read as 0 / 1 and
    /// never take the border colour).
    present: [bool; 4],
    depth: bool,
    integer: bool,
    signed: bool,
    unorm_depth: bool,
    /// Every stored channel is an 8-bit UNORM byte (llvmpipe's AoS path).
    bytes8: bool,
    /// Which stored byte feeds R, G, B, A (4: constant 0, 5: constant 1).
    channel_of: [u8; 4],
    /// The general SIMD path's level rows ([`soa`]), made at its first
    /// lookup.
    soa_table: std::cell::OnceCell<soa::LevelTable>,
}

/// The sampler state used when none is bound (`pipe_sampler_state` zeroed
/// plus FORMAT.md's defaults).
fn default_sampler() -> &'static SamplerState {
    use std::sync::OnceLock;
    static D: OnceLock<SamplerState> = OnceLock::new();
    D.get_or_init(SamplerState::default)
}

impl<'a> Texture<'a> {
    /// Prepares a bound view; `None` when the view has no levels.
    pub fn new(b: &BoundTexture<'a>) -> Option<Self> {
        let v = b.view;
        let nlevels = b.layout.levels.len() as u32;
        if nlevels == 0 {
            return None;
        }
        let first_level = v.first_level.min(nlevels - 1);
        let last_level = v.last_level.clamp(first_level, nlevels - 1);
        let desc = v.format.desc();
        let present = std::array::from_fn(|c| desc.swizzle[c] < 4);
        Some(Texture {
            data: b.data,
            levels: &b.layout.levels,
            // element size of the view's format (buffer views and casts)
            bpp: v.format.desc().block_bytes.max(1) as usize,
            format: v.format,
            target: v.target,
            first_level,
            last_level,
            first_layer: v.first_layer,
            last_layer: v.last_layer.max(v.first_layer),
            buffer_offset: v.buffer_offset,
            buffer_size: v.buffer_size,
            swizzle: v.swizzle,
            present,
            depth: desc.has_depth(),
            integer: desc.is_integer(),
            signed: desc.channel_type == ChannelType::Sint,
            unorm_depth: desc.has_depth() && desc.channel_type == ChannelType::Unorm,
            bytes8: desc.kind == FormatKind::Color
                && desc.channel_type == ChannelType::Unorm
                && !desc.srgb
                && !desc.packed
                && desc.channel_bits.iter().all(|&b| b == 0 || b == 8)
                && desc.block_bytes as usize == desc.nr_channels(),
            channel_of: desc.swizzle,
            soa_table: Default::default(),
        })
    }

    /// The texture bound at view slot `view` (None when unbound or empty).
    pub fn bound(res: &ShaderResources<'a>, view: u32) -> Option<Self> {
        res.textures
            .get(view as usize)
            .copied()
            .flatten()
            .and_then(|b| Texture::new(&b))
    }

    /// Number of view levels.
    pub fn num_levels(&self) -> u32 {
        self.last_level - self.first_level + 1
    }

    /// Number of view layers (cube arrays: cubes).
    pub fn num_layers(&self) -> u32 {
        let n = self.last_layer - self.first_layer + 1;
        if self.target == TextureTarget::TextureCubeArray {
            n / 6
        } else {
            n
        }
    }

    /// Size of view level `level` (width, height, depth or layers).
    pub fn size(&self, level: u32) -> [u32; 3] {
        if self.target == TextureTarget::Buffer {
            return [self.buffer_size / self.bpp as u32, 1, 1];
        }
        let l = (self.first_level + level).min(self.last_level) as usize;
        let lv = &self.levels[l];
        let layers = self.num_layers();
        match self.target {
            TextureTarget::Texture1D => [lv.width, 1, 1],
            TextureTarget::Texture1DArray => [lv.width, layers, 1],
            TextureTarget::Texture3D => [lv.width, lv.height, lv.depth],
            TextureTarget::Texture2DArray | TextureTarget::TextureCubeArray => {
                [lv.width, lv.height, layers]
            }
            _ => [lv.width, lv.height, 1],
        }
    }

    /// Reads texel (x, y, slice) of absolute level `level` as RGBA floats
    /// (format decode, before the view swizzle); out-of-range reads return
    /// zeros (the callers clamp, this is only a guard).
    #[inline]
    fn texel_f32(&self, level: usize, x: u32, y: u32, z: u32) -> [f32; 4] {
        let Some(px) = self.pixel(level, x, y, z) else {
            return [0.0; 4];
        };
        decode_f32(self.format, px)
    }

    #[inline]
    fn pixel(&self, level: usize, x: u32, y: u32, z: u32) -> Option<&'a [u8]> {
        let lv = self.levels.get(level)?;
        let off = lv.offset
            + z as usize * lv.slice_stride
            + y as usize * lv.row_stride
            + x as usize * self.bpp;
        self.data.get(off..off + self.bpp)
    }

    /// Integer texel as bits (sint / uint formats).
    fn texel_bits(&self, level: usize, x: u32, y: u32, z: u32) -> [u32; 4] {
        let Some(px) = self.pixel(level, x, y, z) else {
            return [0; 4];
        };
        if self.signed {
            pack::unpack_rgba_i32(self.format, px).map(|v| v as u32)
        } else {
            pack::unpack_rgba_u32(self.format, px)
        }
    }

    /// Applies the view swizzle; `zero` / `one` are the constants in the
    /// texel's type.
    #[inline]
    fn swizzle<T: Copy>(&self, t: [T; 4], zero: T, one: T) -> [T; 4] {
        self.swizzle.map(|s| match s {
            Swizzle::X => t[0],
            Swizzle::Y => t[1],
            Swizzle::Z => t[2],
            Swizzle::W => t[3],
            Swizzle::Zero | Swizzle::None => zero,
            Swizzle::One => one,
        })
    }

    #[inline]
    fn swizzle_f32(&self, t: [f32; 4]) -> [f32; 4] {
        self.swizzle(t, 0.0, 1.0)
    }

    fn swizzle_bits(&self, t: [u32; 4]) -> [u32; 4] {
        self.swizzle(t, 0, 1)
    }

    fn dims(&self) -> usize {
        match self.target {
            TextureTarget::Buffer | TextureTarget::Texture1D | TextureTarget::Texture1DArray => 1,
            TextureTarget::Texture3D => 3,
            _ => 2,
        }
    }

    fn is_cube(&self) -> bool {
        matches!(
            self.target,
            TextureTarget::TextureCube | TextureTarget::TextureCubeArray
        )
    }

    fn arrayed(&self) -> bool {
        matches!(
            self.target,
            TextureTarget::Texture1DArray
                | TextureTarget::Texture2DArray
                | TextureTarget::TextureCubeArray
        )
    }

    /// Border colour as llvmpipe uses it: clamped to the format's range,
    /// replacing only the channels the format has.
    fn border(&self, s: &SamplerState) -> [f32; 4] {
        let desc = self.format.desc();
        let b = s.border_color;
        match desc.channel_type {
            ChannelType::Unorm => b.map(|v| v.clamp(0.0, 1.0)),
            ChannelType::Snorm => b.map(|v| v.clamp(-1.0, 1.0)),
            _ => b,
        }
    }

    /// Samples 8 lanes (filtered; depth comparison if the sampler asks for
    /// it and `args.depth_ref` is given).  Results are RGBA floats after the
    /// view swizzle (depth textures: depth or comparison result in R).
    pub fn sample(&self, sampler: Option<&SamplerState>, args: &SampleArgs) -> [Lanes; 4] {
        let s: &SamplerState = match sampler {
            Some(s) => s,
            None => default_sampler(),
        };
        // The textured-surface fast path: implicit derivatives, one level
        // choice per quad, bilinear in SIMD (no anisotropy, no comparison).
        if matches!(args.lod, Lod::Implicit)
            && args.offset == [0, 0, 0]
            && let Some(q) = self.quad_sampler_unplanned(Some(s))
            && let Some(out) = self.sample_quads(&q, &args.coord)
        {
            return out;
        }
        // anisotropic filtering replaces the LOD and takes several probes
        let aniso = self.anisotropy(s, args);
        let lods = match &aniso {
            Some(a) => self.select_lods(
                s,
                &SampleArgs {
                    lod: Lod::Level(f32x8::new(a.lod)),
                    ..*args
                },
            ),
            None => self.select_lods(s, args),
        };
        let compare = s.compare_mode == TexCompareMode::RToTexture && self.depth;
        if aniso.is_none() && !compare && self.use_aos(s, args) {
            let coords = args.coord.map(|c| c.to_array());
            let layers = as_u(args.layer).to_array();
            return self.sample_aos(s, &lods, &coords, &layers, args.offset);
        }
        if aniso.is_none()
            && let Some(out) = self.sample_soa(s, &lods, args, compare)
        {
            return out;
        }
        self.sample_scalar(s, &lods, aniso.as_ref(), args, compare)
    }

    /// [`Self::sample`] lane by lane after the level choice: every case
    /// (cube maps, anisotropy, a filter per quad), and the definition
    /// [`Self::sample_soa`] is held to.
    fn sample_scalar(
        &self,
        s: &SamplerState,
        lods: &[LevelChoice; LANES],
        aniso: Option<&Aniso>,
        args: &SampleArgs,
        compare: bool,
    ) -> [Lanes; 4] {
        let coords = args.coord.map(|c| c.to_array());
        let layers = as_u(args.layer).to_array();
        let refs = args.depth_ref.map(|r| r.to_array());
        let border = self.border(s);
        let mut out = [[0f32; LANES]; 4];
        for l in 0..LANES {
            let refv = refs.map(|r| {
                let v = r[l];
                if self.unorm_depth {
                    v.clamp(0.0, 1.0)
                } else {
                    v
                }
            });
            let cmp = if compare {
                refv.map(|r| (s.compare_func, r))
            } else {
                None
            };
            let lo = &lods[l];
            let (probes, axis) = match aniso {
                Some(a) => (a.probes[l], a.axis[l]),
                None => (1, [0.0; 2]),
            };
            let mut acc = [0f32; 4];
            for p in 0..probes {
                let k = (p as f32 + 0.5) / probes as f32 - 0.5;
                let c = [
                    coords[0][l] + axis[0] * k,
                    coords[1][l] + axis[1] * k,
                    coords[2][l],
                ];
                let mut t = self.sample_level(
                    s,
                    lo.level0,
                    lo.filter,
                    c,
                    layers[l],
                    args.offset,
                    cmp,
                    &border,
                );
                if lo.weight > 0.0 && lo.level1 != lo.level0 {
                    let t1 = self.sample_level(
                        s,
                        lo.level1,
                        lo.filter,
                        c,
                        layers[l],
                        args.offset,
                        cmp,
                        &border,
                    );
                    for k in 0..4 {
                        t[k] += (t1[k] - t[k]) * lo.weight;
                    }
                }
                for k in 0..4 {
                    acc[k] += t[k];
                }
            }
            let inv = 1.0 / probes as f32;
            let t = self.swizzle_f32(acc.map(|v| if probes == 1 { v } else { v * inv }));
            for k in 0..4 {
                out[k][l] = t[k];
            }
        }
        out.map(f32x8::new)
    }

    /// Whether llvmpipe would filter this lookup in its 8-bit AoS path
    /// (`lp_build_sample_soa_code`'s `use_aos`): an 8-bit UNORM format,
    /// REPEAT / CLAMP_TO_EDGE on the used axes, and a LOD per quad unless
    /// min and mag filters agree.
    fn use_aos(&self, s: &SamplerState, args: &SampleArgs) -> bool {
        let simple = |w: TexWrap| matches!(w, TexWrap::Repeat | TexWrap::ClampToEdge);
        let dims = self.dims();
        let per_lane_lod = matches!(args.lod, Lod::Bias(_) | Lod::Level(_) | Lod::Grad(..))
            && (s.min_mip_filter != TexMipFilter::None || s.min_img_filter != s.mag_img_filter);
        self.bytes8
            && !self.is_cube()
            && self.target != TextureTarget::Buffer
            && simple(s.wrap_s)
            && (dims < 2 || simple(s.wrap_t))
            && (dims < 3 || simple(s.wrap_r))
            && (!per_lane_lod || s.min_img_filter == s.mag_img_filter)
    }

    /// The 8.8 fixed-point path: raw bytes filtered with llvmpipe's integer
    /// lerp, then converted to floats.
    fn sample_aos(
        &self,
        s: &SamplerState,
        lods: &[LevelChoice; LANES],
        coords: &[[f32; LANES]; 3],
        layers: &[u32; LANES],
        offset: [i32; 3],
    ) -> [Lanes; 4] {
        if let Some(out) = self.sample_bilinear_2d_rgba8(s, lods, coords, offset) {
            return out;
        }
        if let Some(out) = self.sample_aos_nearest(s, lods, coords, layers, offset) {
            return out;
        }
        self.sample_aos_scalar(s, lods, coords, layers, offset)
    }

    /// [`Self::sample_aos`] lane by lane: every case.
    fn sample_aos_scalar(
        &self,
        s: &SamplerState,
        lods: &[LevelChoice; LANES],
        coords: &[[f32; LANES]; 3],
        layers: &[u32; LANES],
        offset: [i32; 3],
    ) -> [Lanes; 4] {
        let mut out = [[0f32; LANES]; 4];
        for l in 0..LANES {
            let lo = &lods[l];
            let c = [coords[0][l], coords[1][l], coords[2][l]];
            let mut t = self.aos_level(s, lo.level0, lo.filter, c, layers[l], offset);
            let w = ((lo.weight * 256.0) as i32).clamp(0, 255);
            if w > 0 && lo.level1 != lo.level0 {
                let t1 = self.aos_level(s, lo.level1, lo.filter, c, layers[l], offset);
                for k in 0..4 {
                    t[k] = lerp8(t[k], t1[k], w);
                }
            }
            let rgba = self.channel_of.map(|ch| match ch {
                0..=3 => t[ch as usize] as f32 * (1.0 / 255.0),
                4 => 0.0,
                _ => 1.0,
            });
            let rgba = self.swizzle_f32(rgba);
            for k in 0..4 {
                out[k][l] = rgba[k];
            }
        }
        out.map(f32x8::new)
    }

    /// The common textured-surface case of [`Self::sample_aos`] in SIMD
    /// across the 8 lanes: a 2D view of a 4-byte UNORM8 format, bilinear,
    /// REPEAT (power-of-two size) or CLAMP_TO_EDGE, normalized coordinates,
    /// no texel offset, each lane at its own level or pair of levels (lanes
    /// carry the level layout: requiring one level for all 8 lanes sent
    /// every group whose two quads chose different levels to the scalar
    /// path, ~10 % of textured_mesh).  The arithmetic is `wrap_linear_8` + `lerp8` lane for lane, so the
    /// result is bit-identical to the scalar path; `None` sends anything
    /// else (or coordinates beyond i32 after scaling, NaN) to it.
    ///
    /// Why: the scalar path was two thirds of `textured_mesh`
    /// (docs/performance.md); this one gathers the four texels of each
    /// lane as `u32`s and filters all lanes' channels at once.
    fn sample_bilinear_2d_rgba8(
        &self,
        s: &SamplerState,
        lods: &[LevelChoice; LANES],
        coords: &[[f32; LANES]; 3],
        offset: [i32; 3],
    ) -> Option<[Lanes; 4]> {
        if !self.bilinear_simd_applies(s, offset)
            || lods.iter().any(|l| l.filter != TexFilter::Linear)
        {
            return None;
        }
        // Each lane may use its own level (the two quads of a group often
        // pick different ones): the level's size, row stride and base
        // offset travel as lanes.
        let lv0 = self.lane_levels(s, lods.map(|l| l.level0))?;
        let second = if lods.iter().any(|l| l.level1 != l.level0) {
            let w = lods.map(|l| ((l.weight * 256.0) as i32).clamp(0, 255));
            Some((self.lane_levels(s, lods.map(|l| l.level1))?, w))
        } else {
            None
        };
        self.filter_rgba8(s, &lv0, second.as_ref(), coords)
    }

    /// The sampler and view conditions of the SIMD bilinear path: a 2D
    /// view of a 4-byte UNORM8 format, normalized coordinates, REPEAT or
    /// CLAMP_TO_EDGE, no texel offset, data under 2 GiB (texel offsets are
    /// computed in i32 lanes).
    fn bilinear_simd_applies(&self, s: &SamplerState, offset: [i32; 3]) -> bool {
        let wrap_ok = |w: TexWrap| matches!(w, TexWrap::Repeat | TexWrap::ClampToEdge);
        self.bpp == 4
            && matches!(
                self.target,
                TextureTarget::Texture2D | TextureTarget::TextureRect
            )
            && s.normalized_coords
            && offset == [0, 0, 0]
            && wrap_ok(s.wrap_s)
            && wrap_ok(s.wrap_t)
            && self.data.len() <= i32::MAX as usize
    }

    /// Bilinear texels at `lv0` (blended towards `second`'s levels by its
    /// 8-bit weights), converted to floats and swizzled.
    fn filter_rgba8(
        &self,
        s: &SamplerState,
        lv0: &LaneLevels,
        second: Option<&(LaneLevels, [i32; LANES])>,
        coords: &[[f32; LANES]; 3],
    ) -> Option<[Lanes; 4]> {
        let cx = f32x8::new(coords[0]);
        let cy = f32x8::new(coords[1]);
        let t0 = self.bilinear_level_rgba8(s, lv0, cx, cy)?;
        // Explicit indexing below, not `array::from_fn` / `map`: those
        // closures over SIMD arrays did not inline and cost 11 % of
        // textured_mesh on their own.
        let mut texels = t0;
        if let Some((lv1, w)) = second {
            let t1 = self.bilinear_level_rgba8(s, lv1, cx, cy)?;
            // A lane with one level lerps between equal texels: no change.
            let w = i32x8::new(*w);
            for k in 0..4 {
                texels[k] = lerp8x8(t0[k], t1[k], w);
            }
        }
        let scale = f32x8::splat(1.0 / 255.0);
        let channel = |ch: u8| match ch {
            0..=3 => texels[ch as usize].round_float() * scale,
            4 => f32x8::ZERO,
            _ => f32x8::ONE,
        };
        let c = self.channel_of;
        let rgba = [channel(c[0]), channel(c[1]), channel(c[2]), channel(c[3])];
        Some(self.swizzle_lanes(rgba))
    }

    /// Size, row stride and base offset of each lane's level, or `None`
    /// when one of them cannot take the SIMD path (empty, or REPEAT on a
    /// size that is not a power of two).
    fn lane_levels(&self, s: &SamplerState, levels: [u32; LANES]) -> Option<LaneLevels> {
        let mut out = [[0i32; LANES]; 4];
        for l in 0..LANES {
            let lv = &self.levels[(levels[l] as usize).min(self.levels.len() - 1)];
            if !level_fits_simd(lv, s) {
                return None;
            }
            out[0][l] = lv.width as i32;
            out[1][l] = lv.height as i32;
            out[2][l] = lv.row_stride as i32;
            out[3][l] = (lv.offset + self.first_layer as usize * lv.slice_stride) as i32;
        }
        Some(LaneLevels {
            width: i32x8::new(out[0]),
            height: i32x8::new(out[1]),
            row_stride: i32x8::new(out[2]),
            base: i32x8::new(out[3]),
        })
    }

    /// Bilinear filtering for 8 lanes, each at its own level: the stored
    /// bytes of each channel, filtered in 8.8 fixed point (0..=255).
    fn bilinear_level_rgba8(
        &self,
        s: &SamplerState,
        lv: &LaneLevels,
        cx: f32x8,
        cy: f32x8,
    ) -> Option<[i32x8; 4]> {
        let (x0, x1, wx) = wrap_linear_8x8(cx, lv.width, s.wrap_s)?;
        let (y0, y1, wy) = wrap_linear_8x8(cy, lv.height, s.wrap_t)?;
        // Byte offsets in lanes: indices are inside the level (wrapped or
        // clamped above) and the data is under 2 GiB, so i32 holds them.
        let (base, stride) = (lv.base, lv.row_stride);
        let four = i32x8::splat(4);
        let (r0, r1) = (base + y0 * stride, base + y1 * stride);
        let (c0, c1) = (x0 * four, x1 * four);
        let offs = [
            (r0 + c0).to_array(),
            (r0 + c1).to_array(),
            (r1 + c0).to_array(),
            (r1 + c1).to_array(),
        ];
        let fetch = |off: i32| -> i32 {
            let off = off as u32 as usize;
            match self.data.get(off..off + 4) {
                Some(px) => i32::from_le_bytes([px[0], px[1], px[2], px[3]]),
                None => 0,
            }
        };
        let mut t = [[0i32; LANES]; 4];
        for k in 0..4 {
            for l in 0..LANES {
                t[k][l] = fetch(offs[k][l]);
            }
        }
        let t = [
            i32x8::new(t[0]),
            i32x8::new(t[1]),
            i32x8::new(t[2]),
            i32x8::new(t[3]),
        ];
        let (e, o) = filter_pairs(X86V3::of_build(), t, wx, wy);
        let (e, o): (i32x8, i32x8) = (bytemuck::cast(e), bytemuck::cast(o));
        let lo = i32x8::splat(0xffff);
        Some([e & lo, o & lo, e >> 16_i32, o >> 16_i32])
    }

    /// One level of the AoS path: raw stored bytes (0..255), filtered.
    fn aos_level(
        &self,
        s: &SamplerState,
        level: u32,
        filter: TexFilter,
        c: [f32; 3],
        layer: u32,
        offset: [i32; 3],
    ) -> [i32; 4] {
        let level = level as usize;
        let lv = &self.levels[level.min(self.levels.len() - 1)];
        let dims = self.dims();
        let nlayers = self.last_layer - self.first_layer + 1;
        let slice = if self.arrayed() {
            self.first_layer + (layer as i32).clamp(0, nlayers as i32 - 1) as u32
        } else {
            self.first_layer
        };
        let size = [lv.width as i32, lv.height as i32, lv.depth as i32];
        let wraps = [s.wrap_s, s.wrap_t, s.wrap_r];
        // Texel fetch with the level's layout hoisted: this closure runs 4
        // times per bilinear lane and was 40 % of textured_mesh before
        // (docs/performance.md).  Indices come wrapped and clamped; the
        // checked slice is only a guard (zeros out of range).
        let (data, bpp) = (self.data, self.bpp);
        let slice_base = lv.offset + slice as usize * lv.slice_stride;
        let raw = |x: i32, y: i32, z: i32| -> [i32; 4] {
            let base = if dims == 3 {
                lv.offset + z as u32 as usize * lv.slice_stride
            } else {
                slice_base
            };
            let off = base + y as u32 as usize * lv.row_stride + x as u32 as usize * bpp;
            if bpp == 4 {
                return match data.get(off..off + 4) {
                    Some(px) => [px[0] as i32, px[1] as i32, px[2] as i32, px[3] as i32],
                    None => [0; 4],
                };
            }
            match data.get(off..off + bpp) {
                Some(px) => std::array::from_fn(|i| px.get(i).copied().unwrap_or(0) as i32),
                None => [0; 4],
            }
        };
        if filter == TexFilter::Nearest {
            let mut i = [0i32; 3];
            for a in 0..dims {
                i[a] = wrap_nearest(
                    c[a],
                    size[a].max(1),
                    offset[a],
                    wraps[a],
                    s.normalized_coords,
                )
                .clamp(0, size[a].max(1) - 1);
            }
            return raw(i[0], i[1], i[2]);
        }
        let mut i0 = [0i32; 3];
        let mut i1 = [0i32; 3];
        let mut w = [0i32; 3];
        for a in 0..dims {
            (i0[a], i1[a], w[a]) = wrap_linear_8(
                c[a],
                size[a].max(1),
                offset[a],
                wraps[a],
                s.normalized_coords,
            );
        }
        let lerp4 = |a: [i32; 4], b: [i32; 4], w: i32| -> [i32; 4] {
            std::array::from_fn(|k| lerp8(a[k], b[k], w))
        };
        let row = |y: i32, z: i32| lerp4(raw(i0[0], y, z), raw(i1[0], y, z), w[0]);
        match dims {
            1 => row(0, 0),
            2 => lerp4(row(i0[1], 0), row(i1[1], 0), w[1]),
            _ => {
                let near = lerp4(row(i0[1], i0[2]), row(i1[1], i0[2]), w[1]);
                let far = lerp4(row(i0[1], i1[2]), row(i1[1], i1[2]), w[1]);
                lerp4(near, far, w[2])
            }
        }
    }

    /// Anisotropic footprint per lane (EXT_texture_filter_anisotropic's
    /// recommended form): `N = min(ceil(Pmax / Pmin), max_anisotropy)`
    /// probes along the major axis, LOD `log2(Pmax / N)` (plus any shader
    /// bias).  `None` when the sampler or the lookup is not anisotropic.
    fn anisotropy(&self, s: &SamplerState, args: &SampleArgs) -> Option<Aniso> {
        if s.max_anisotropy <= 1
            || self.dims() != 2
            || self.is_cube()
            || s.min_img_filter != TexFilter::Linear
        {
            return None;
        }
        let size = self.base_size(s);
        let c = args.coord.map(|v| v.to_array());
        let (dx, dy, bias): ([[f32; LANES]; 2], [[f32; LANES]; 2], [f32; LANES]) = match args.lod {
            Lod::Implicit | Lod::Bias(_) => {
                let mut dx = [[0f32; LANES]; 2];
                let mut dy = [[0f32; LANES]; 2];
                for q in 0..LANES / 4 {
                    let b = q * 4;
                    for a in 0..2 {
                        let x = c[a][b + 1] - c[a][b];
                        let y = c[a][b + 2] - c[a][b];
                        for l in b..b + 4 {
                            dx[a][l] = x;
                            dy[a][l] = y;
                        }
                    }
                }
                let bias = if let Lod::Bias(b) = args.lod {
                    b.to_array()
                } else {
                    [0.0; LANES]
                };
                (dx, dy, bias)
            }
            Lod::Grad(gx, gy) => (
                [gx[0].to_array(), gx[1].to_array()],
                [gy[0].to_array(), gy[1].to_array()],
                [0.0; LANES],
            ),
            Lod::Level(_) => return None,
        };
        let mut a = Aniso {
            probes: [1; LANES],
            axis: [[0.0; 2]; LANES],
            lod: [0.0; LANES],
        };
        for l in 0..LANES {
            let px = (dx[0][l] * size[0]).hypot(dx[1][l] * size[1]);
            let py = (dy[0][l] * size[0]).hypot(dy[1][l] * size[1]);
            let (pmax, pmin, axis) = if px >= py {
                (px, py, [dx[0][l], dx[1][l]])
            } else {
                (py, px, [dy[0][l], dy[1][l]])
            };
            let n = if pmin > 0.0 {
                (pmax / pmin).ceil()
            } else {
                f32::INFINITY
            };
            let n = n.min(s.max_anisotropy as f32).max(1.0);
            a.probes[l] = if n.is_finite() { n as u32 } else { 1 };
            a.axis[l] = axis;
            let lod = (pmax / n).log2() + bias[l];
            a.lod[l] = if lod.is_nan() { 0.0 } else { lod };
        }
        Some(a)
    }

    /// `textureGather`: component `comp` (after the view swizzle) of the
    /// four texels of the bilinear footprint at the base level, in the order
    /// (i0, j1), (i1, j1), (i1, j0), (i0, j0).
    pub fn gather(
        &self,
        sampler: Option<&SamplerState>,
        args: &SampleArgs,
        comp: usize,
    ) -> [Lanes; 4] {
        let s: &SamplerState = match sampler {
            Some(s) => s,
            None => default_sampler(),
        };
        let coords = args.coord.map(|c| c.to_array());
        let layers = as_u(args.layer).to_array();
        let refs = args.depth_ref.map(|r| r.to_array());
        let compare = s.compare_mode == TexCompareMode::RToTexture && self.depth;
        let border = self.border(s);
        let mut out = [[0f32; LANES]; 4];
        for l in 0..LANES {
            let c = [coords[0][l], coords[1][l], coords[2][l]];
            let cmp = if compare {
                refs.map(|r| (s.compare_func, r[l]))
            } else {
                None
            };
            let (_, mut texels, corner) = self.footprint(
                s,
                self.first_level as usize,
                c,
                layers[l],
                args.offset,
                cmp,
                &border,
                true,
            );
            // A seamless cube corner has three texels; llvmpipe gathers
            // their mean as the fourth (integer formats: the clamped
            // neighbour it fetched).
            if let Some(k) = corner
                && !self.integer
            {
                let mut sum = [0f32; 4];
                for (i, t) in texels.iter().enumerate().take(4) {
                    if i != k {
                        for ch in 0..4 {
                            sum[ch] += t[ch];
                        }
                    }
                }
                texels[k] = sum.map(|v| v * (1.0 / 3.0));
            }
            let order = [2usize, 3, 1, 0];
            for (k, &i) in order.iter().enumerate() {
                out[k][l] = self.swizzle_f32(texels[i])[comp & 3];
            }
        }
        out.map(f32x8::new)
    }

    /// `textureLoad`: unfiltered texel of view level `level` (i32 lanes),
    /// integer coordinates; out of range reads zeros.  Results are floats,
    /// or integer bits for integer formats.
    pub fn load(
        &self,
        coord: [Lanes; 3],
        layer: Lanes,
        level: Lanes,
        sample: Option<Lanes>,
    ) -> [Lanes; 4] {
        let _ = sample; // single-sampled storage: sample 0 is the only one
        let x = as_u(coord[0]).to_array();
        let y = as_u(coord[1]).to_array();
        let z = as_u(coord[2]).to_array();
        let layers = as_u(layer).to_array();
        let lv = as_u(level).to_array();
        let mut out = [[0u32; LANES]; 4];
        let nlayers = self.last_layer - self.first_layer + 1;
        for l in 0..LANES {
            let level = lv[l] as i32;
            if self.target == TextureTarget::Buffer {
                let e = x[l] as i32;
                let n = (self.buffer_size / self.bpp as u32) as i32;
                if e < 0 || e >= n {
                    continue;
                }
                let off = self.buffer_offset as usize + e as usize * self.bpp;
                let Some(px) = self.data.get(off..off + self.bpp) else {
                    continue;
                };
                let t = if self.integer {
                    self.swizzle_bits(if self.signed {
                        pack::unpack_rgba_i32(self.format, px).map(|v| v as u32)
                    } else {
                        pack::unpack_rgba_u32(self.format, px)
                    })
                } else {
                    self.swizzle_f32(decode_f32(self.format, px))
                        .map(f32::to_bits)
                };
                for k in 0..4 {
                    out[k][l] = t[k];
                }
                continue;
            }
            if level < 0 || level as u32 > self.last_level - self.first_level {
                continue;
            }
            let abs = (self.first_level + level as u32) as usize;
            let lvl = &self.levels[abs];
            let (w, h) = (lvl.width as i32, lvl.height as i32);
            let (xi, yi) = (x[l] as i32, y[l] as i32);
            let (zi, ok) = match self.target {
                TextureTarget::Texture1D => (0, xi >= 0 && xi < w),
                TextureTarget::Texture1DArray => {
                    let li = layers[l] as i32;
                    (
                        self.first_layer as i32 + li,
                        xi >= 0 && xi < w && li >= 0 && (li as u32) < nlayers,
                    )
                }
                TextureTarget::Texture3D => {
                    let zi = z[l] as i32;
                    (
                        zi,
                        xi >= 0 && xi < w && yi >= 0 && yi < h && zi >= 0 && zi < lvl.depth as i32,
                    )
                }
                TextureTarget::Texture2DArray
                | TextureTarget::TextureCube
                | TextureTarget::TextureCubeArray => {
                    let li = layers[l] as i32;
                    (
                        self.first_layer as i32 + li,
                        xi >= 0 && xi < w && yi >= 0 && yi < h && li >= 0 && (li as u32) < nlayers,
                    )
                }
                _ => (
                    self.first_layer as i32,
                    xi >= 0 && xi < w && yi >= 0 && yi < h,
                ),
            };
            if !ok {
                continue;
            }
            let yy = if self.dims() == 1 { 0 } else { yi as u32 };
            let t = if self.integer {
                self.swizzle_bits(self.texel_bits(abs, xi as u32, yy, zi as u32))
            } else {
                self.swizzle_f32(self.texel_f32(abs, xi as u32, yy, zi as u32))
                    .map(f32::to_bits)
            };
            for k in 0..4 {
                out[k][l] = t[k];
            }
        }
        out.map(|c| from_u(u32x8::new(c)))
    }

    // ------------------------------------------------------------------
    // level of detail

    fn select_lods(&self, s: &SamplerState, args: &SampleArgs) -> [LevelChoice; LANES] {
        // `LodParams::fixed`, which `choose` returns whatever the LOD
        // source, without building the parameters: reading `fixed` back
        // from the struct just stored field by field stalled on store
        // forwarding, 13 % of postprocess with a MIRROR_REPEAT sampler
        // (`perf annotate`)
        if (s.min_mip_filter == TexMipFilter::None && s.min_img_filter == s.mag_img_filter)
            || self.target == TextureTarget::Buffer
        {
            return [LevelChoice::single(self.first_level, s.mag_img_filter); LANES];
        }
        if let Some(quads) = self.quad_lods(s, args) {
            let mut out = [quads[0]; LANES];
            out[LANES / 2..].fill(quads[1]);
            return out;
        }
        let p = LodParams::new(self, s, args);
        // rho squared per lane
        let rho2: [f32; LANES] = match args.lod {
            Lod::Level(_) => [0.0; LANES],
            Lod::Implicit | Lod::Bias(_) => self.rho2_implicit(s, &args.coord),
            Lod::Grad(dx, dy) => self.rho2_grad(s, &dx, &dy),
        };
        let bias = match args.lod {
            Lod::Bias(b) => b.to_array(),
            _ => [0.0; LANES],
        };
        let explicit = match args.lod {
            Lod::Level(l) => Some(l.to_array()),
            _ => None,
        };
        std::array::from_fn(|l| p.choose(s, rho2[l], bias[l], explicit.map(|e| e[l])))
    }

    /// The level choice of each 2x2 quad (lanes 0-3, 4-7) when the LOD
    /// comes from implicit derivatives: one `rho` per quad and no per-lane
    /// bias, so one choice per quad (select_lods was 17 % of textured_mesh
    /// when it ran per lane).  `None` for the other LOD sources.
    fn quad_lods(&self, s: &SamplerState, args: &SampleArgs) -> Option<[LevelChoice; 2]> {
        if !matches!(args.lod, Lod::Implicit) {
            return None;
        }
        Some(self.choose_quads(s, &LodParams::new(self, s, args), &args.coord))
    }

    /// One level choice per quad from the implicit derivatives of `coord`.
    #[inline]
    fn choose_quads(
        &self,
        s: &SamplerState,
        p: &LodParams,
        coord: &[Lanes; 3],
    ) -> [LevelChoice; 2] {
        if let Some(fixed) = p.fixed {
            return [fixed; 2];
        }
        let rho2 = self.rho2_implicit(s, coord);
        [
            p.choose(s, rho2[0], 0.0, None),
            p.choose(s, rho2[LANES / 2], 0.0, None),
        ]
    }

    /// Texture size at the view's base level, per axis, as llvmpipe scales
    /// derivatives (1 for unnormalized coordinates).
    fn base_size(&self, s: &SamplerState) -> [f32; 3] {
        if !s.normalized_coords {
            return [1.0; 3];
        }
        let lv = &self.levels[self.first_level as usize];
        [
            lv.width as f32,
            lv.height as f32,
            if self.target == TextureTarget::Texture3D {
                lv.depth as f32
            } else {
                1.0
            },
        ]
    }

    /// Squared `rho` for implicit derivatives, per quad: llvmpipe's
    /// `lp_build_rho` without its approximation (the reference runs with
    /// `no_rho_approx`): `max(sum_axes (size * ds/dx)^2, sum_axes (size *
    /// ds/dy)^2)` from coarse differences (top-right minus top-left,
    /// bottom-left minus top-left).
    fn rho2_implicit(&self, s: &SamplerState, coord: &[Lanes; 3]) -> [f32; LANES] {
        if self.is_cube() {
            return self.rho2_cube_implicit(coord);
        }
        let dims = self.dims();
        let size = self.base_size(s);
        let c = coord.map(|v| v.to_array());
        let mut out = [0f32; LANES];
        for q in 0..LANES / 4 {
            let b = q * 4;
            let (mut sx, mut sy) = (0f32, 0f32);
            for (a, &sz) in size.iter().enumerate().take(dims) {
                let dx = (c[a][b + 1] - c[a][b]) * sz;
                let dy = (c[a][b + 2] - c[a][b]) * sz;
                sx += dx * dx;
                sy += dy * dy;
            }
            let rho2 = sx.max(sy);
            for o in &mut out[b..b + 4] {
                *o = rho2;
            }
        }
        out
    }

    /// Squared `rho` of a cube lookup with implicit derivatives, per quad:
    /// llvmpipe (`lp_build_cube_lookup` with `need_derivs`) takes the
    /// coarse differences of the *direction*, projects them onto the face
    /// of each lane (`d(sc / ma) = (d sc - sc d ma / ma) / ma`, halved for
    /// the [0, 1] face coordinates), and `lp_build_rho` keeps the quad's
    /// top-left lane.  So a quad straddling two faces gets the LOD of its
    /// top-left pixel's face, not the jump between the faces' coordinates.
    fn rho2_cube_implicit(&self, coord: &[Lanes; 3]) -> [f32; LANES] {
        let lv = &self.levels[self.first_level as usize];
        let size = lv.width as f32;
        let c = coord.map(|v| v.to_array());
        let mut out = [0f32; LANES];
        for q in 0..LANES / 4 {
            let b = q * 4;
            let at = |l: usize| [c[0][l], c[1][l], c[2][l]];
            let d = |l: usize| std::array::from_fn(|k| c[k][l] - c[k][b]);
            let rho2 = cube_rho2(size, at(b), d(b + 1), d(b + 2));
            for o in &mut out[b..b + 4] {
                *o = rho2;
            }
        }
        out
    }

    /// Squared `rho` from explicit gradients, per lane (0 for inf / NaN).
    fn rho2_grad(&self, s: &SamplerState, dx: &[Lanes; 3], dy: &[Lanes; 3]) -> [f32; LANES] {
        let dims = self.dims().min(3);
        let size = self.base_size(s);
        let dx = dx.map(|v| v.to_array());
        let dy = dy.map(|v| v.to_array());
        std::array::from_fn(|l| {
            let (mut sx, mut sy) = (0f32, 0f32);
            for a in 0..dims {
                sx += (dx[a][l] * size[a]) * (dx[a][l] * size[a]);
                sy += (dy[a][l] * size[a]) * (dy[a][l] * size[a]);
            }
            let r = sx.max(sy);
            if r.is_finite() { r } else { 0.0 }
        })
    }

    // ------------------------------------------------------------------
    // one level

    /// Samples absolute level `level` at one lane's coordinates.
    #[allow(clippy::too_many_arguments)]
    fn sample_level(
        &self,
        s: &SamplerState,
        level: u32,
        filter: TexFilter,
        c: [f32; 3],
        layer: u32,
        offset: [i32; 3],
        cmp: Option<(ferropipe_components::enums::Func, f32)>,
        border: &[f32; 4],
    ) -> [f32; 4] {
        let linear = filter == TexFilter::Linear;
        let (weights, texels, corner) =
            self.footprint(s, level as usize, c, layer, offset, cmp, border, linear);
        if !linear {
            return texels[0];
        }
        let [wx, wy, wz] = weights;
        if let Some(k) = corner {
            return corner_filter(&texels, wx, wy, k);
        }
        let lerp = |a: [f32; 4], b: [f32; 4], w: f32| -> [f32; 4] {
            std::array::from_fn(|k| a[k] + (b[k] - a[k]) * w)
        };
        let bottom = lerp(texels[0], texels[1], wx);
        let top = lerp(texels[2], texels[3], wx);
        let mut r = lerp(bottom, top, wy);
        if self.dims() == 3 {
            let b2 = lerp(texels[4], texels[5], wx);
            let t2 = lerp(texels[6], texels[7], wx);
            r = lerp(r, lerp(b2, t2, wy), wz);
        }
        r
    }

    /// Texel indices and weights of one lane at one level, and the texels
    /// (border and comparison applied, swizzle not yet).  Nearest: texel 0.
    /// Linear: (i0,j0), (i1,j0), (i0,j1), (i1,j1) [, the same at k1].
    /// The third value is the missing texel of a seamless cube corner
    /// (see [`Self::seamless_cube`]).
    #[allow(clippy::too_many_arguments)]
    fn footprint(
        &self,
        s: &SamplerState,
        level: usize,
        c: [f32; 3],
        layer: u32,
        offset: [i32; 3],
        cmp: Option<(ferropipe_components::enums::Func, f32)>,
        border: &[f32; 4],
        linear: bool,
    ) -> ([f32; 3], [[f32; 4]; 8], Option<usize>) {
        let lv = &self.levels[level.min(self.levels.len() - 1)];
        let normalized = s.normalized_coords;
        let uses_linear =
            s.min_img_filter == TexFilter::Linear || s.mag_img_filter == TexFilter::Linear;
        let nlayers = self.last_layer - self.first_layer + 1;
        // cube faces become a 2D lookup on one layer
        let (coords, slice, wraps, dims) = if self.is_cube() {
            let (face, st) = cube_face(c);
            let cube = if self.target == TextureTarget::TextureCubeArray {
                (layer as i32).clamp(0, (nlayers / 6).max(1) as i32 - 1) as u32
            } else {
                0
            };
            let first = self.first_layer + cube * 6;
            if linear && s.seamless_cube_map && normalized {
                return self.seamless_cube(level, lv.width, first, face, st, cmp);
            }
            let slice = first + face;
            ([st[0], st[1], 0.0], slice, [TexWrap::ClampToEdge; 3], 2)
        } else {
            let dims = self.dims();
            let slice = if self.arrayed() {
                self.first_layer + (layer as i32).clamp(0, nlayers as i32 - 1) as u32
            } else {
                self.first_layer
            };
            (c, slice, [s.wrap_s, s.wrap_t, s.wrap_r], dims)
        };
        let size = [lv.width, lv.height, lv.depth];
        let mut idx = [[0i32; 2]; 3];
        let mut weights = [0f32; 3];
        let mut out_of_range = [[false; 2]; 3];
        for a in 0..3 {
            if a >= dims {
                idx[a] = [0, 0];
                continue;
            }
            let len = size[a].max(1) as i32;
            let uses_border = wrap_uses_border(wraps[a], uses_linear);
            if linear {
                let (i0, i1, w) = wrap_linear(coords[a], len, offset[a], wraps[a], normalized);
                idx[a] = [i0, i1];
                weights[a] = w;
            } else {
                let i = wrap_nearest(coords[a], len, offset[a], wraps[a], normalized);
                idx[a] = [i, i];
            }
            for k in 0..2 {
                let i = idx[a][k];
                if uses_border && (i < 0 || i >= len) {
                    out_of_range[a][k] = true;
                }
                idx[a][k] = i.clamp(0, len - 1);
            }
        }
        let fetch = |i: usize, j: usize, k: usize| -> [f32; 4] {
            let border_hit = out_of_range[0][i] || out_of_range[1][j] || out_of_range[2][k];
            let z = if dims == 3 { idx[2][k] as u32 } else { slice };
            let mut t = self.texel_f32(
                level,
                idx[0][i] as u32,
                if dims >= 2 { idx[1][j] as u32 } else { 0 },
                z,
            );
            if border_hit {
                for ch in 0..4 {
                    if self.present[ch] {
                        t[ch] = border[ch];
                    }
                }
            }
            if let Some((func, r)) = cmp {
                // result = (ref FUNC texel): ordered, except NOTEQUAL
                let d = t[0];
                let pass = func.test(r, d);
                t = [if pass { 1.0 } else { 0.0 }, 0.0, 0.0, 1.0];
            }
            t
        };
        let mut texels = [[0f32; 4]; 8];
        if !linear {
            texels[0] = fetch(0, 0, 0);
        } else {
            texels[0] = fetch(0, 0, 0);
            texels[1] = fetch(1, 0, 0);
            texels[2] = fetch(0, 1, 0);
            texels[3] = fetch(1, 1, 0);
            if dims == 3 {
                texels[4] = fetch(0, 0, 1);
                texels[5] = fetch(1, 0, 1);
                texels[6] = fetch(0, 1, 1);
                texels[7] = fetch(1, 1, 1);
            }
        }
        (weights, texels, None)
    }

    /// The bilinear footprint of a cube lookup with `seamless_cube_map`
    /// (llvmpipe's seamless branch of `lp_build_sample_image_linear`): the
    /// face coordinates are scaled without clamping, and each of the four
    /// texels that falls off the face is read from the adjacent face
    /// ([`cube_neighbour`]).  At a corner of the cube only three texels
    /// exist; the one off both edges is returned as the third value (its
    /// slot holds the x neighbour at the clamped row, which llvmpipe
    /// fetches there too) and the callers drop it: filtering spreads its
    /// weight over the other three, gather replaces it by their mean.
    fn seamless_cube(
        &self,
        level: usize,
        size: u32,
        first: u32,
        face: u32,
        st: [f32; 2],
        cmp: Option<(ferropipe_components::enums::Func, f32)>,
    ) -> ([f32; 3], [[f32; 4]; 8], Option<usize>) {
        let n = size.max(1) as i32;
        let max = n - 1;
        // max() also turns a NaN coordinate into 0, as llvmpipe does
        let split = |c: f32| {
            let u = c.max(0.0) * n as f32 - 0.5;
            let f = u.floor();
            (f as i32, u - f)
        };
        let (x0, wx) = split(st[0]);
        let (y0, wy) = split(st[1]);
        let xs = [x0, x0 + 1];
        let ys = [y0, y0 + 1];
        let off_x = [xs[0] < 0, xs[1] > max];
        let off_y = [ys[0] < 0, ys[1] > max];
        let mut texels = [[0f32; 4]; 8];
        let mut corner = None;
        for j in 0..2 {
            for i in 0..2 {
                let k = i + 2 * j;
                let yc = ys[j].clamp(0, max);
                let (f, x, y) = if off_x[i] {
                    if off_y[j] {
                        corner = Some(k);
                    }
                    cube_neighbour(face, i, yc, max)
                } else if off_y[j] {
                    cube_neighbour(face, 2 + j, xs[i], max)
                } else {
                    (face, xs[i], ys[j])
                };
                let mut t = self.texel_f32(
                    level,
                    x.clamp(0, max) as u32,
                    y.clamp(0, max) as u32,
                    first + f,
                );
                if let Some((func, r)) = cmp {
                    t = [if func.test(r, t[0]) { 1.0 } else { 0.0 }, 0.0, 0.0, 1.0];
                }
                texels[k] = t;
            }
        }
        ([wx, wy, 0.0], texels, corner)
    }
}

/// Bilinear filtering of a seamless cube corner whose texel `missing`
/// does not exist: a third of its weight goes to each of the other three
/// (llvmpipe's `ACCURATE_CUBE_CORNERS`), summed as weights times texels.
fn corner_filter(texels: &[[f32; 4]; 8], wx: f32, wy: f32, missing: usize) -> [f32; 4] {
    let (ux, uy) = (1.0 - wx, 1.0 - wy);
    let mut w = [ux * uy, wx * uy, ux * wy, wx * wy];
    let share = w[missing] * (1.0 / 3.0);
    for (k, wk) in w.iter_mut().enumerate() {
        *wk = if k == missing { 0.0 } else { *wk + share };
    }
    std::array::from_fn(|ch| {
        let mut v = w[0] * texels[0][ch];
        v += w[1] * texels[1][ch];
        v += w[2] * texels[2][ch];
        v += w[3] * texels[3][ch];
        v
    })
}

/// The texel across cube edge `side` (0: x < 0, 1: x > max, 2: y < 0,
/// 3: y > max) of face `face` (0..6 = +X, -X, +Y, -Y, +Z, -Z), for the
/// texel at position `a` along that edge (its row for x edges, its column
/// for y edges) on a face of `max + 1` texels: (new face, x, y).  The
/// table is GL's face orientation (the major-axis table of `cube_face`)
/// walked across each of the 24 face edges; llvmpipe's
/// `lp_build_cube_new_coords` computes the same one with selects.
fn cube_neighbour(face: u32, side: usize, a: i32, max: i32) -> (u32, i32, i32) {
    let r = max - a;
    match (side, face) {
        // x < 0
        (0, 0) => (4, max, a),
        (0, 1) => (5, max, a),
        (0, 2) => (1, a, 0),
        (0, 3) => (1, r, max),
        (0, 4) => (1, max, a),
        (0, _) => (0, max, a),
        // x > max
        (1, 0) => (5, 0, a),
        (1, 1) => (4, 0, a),
        (1, 2) => (0, r, 0),
        (1, 3) => (0, a, max),
        (1, 4) => (0, 0, a),
        (1, _) => (1, 0, a),
        // y < 0
        (2, 0) => (2, max, r),
        (2, 1) => (2, 0, a),
        (2, 2) => (5, r, 0),
        (2, 3) => (4, a, max),
        (2, 4) => (2, a, max),
        (2, _) => (2, r, 0),
        // y > max
        (_, 0) => (3, max, a),
        (_, 1) => (3, 0, r),
        (_, 2) => (4, a, 0),
        (_, 3) => (5, r, max),
        (_, 4) => (3, a, 0),
        (_, _) => (3, r, max),
    }
}

/// Anisotropic probes per lane.
struct Aniso {
    probes: [u32; LANES],
    /// Major axis of the footprint in coordinate units.
    axis: [[f32; 2]; LANES],
    lod: [f32; LANES],
}

/// What the LOD selection of one lookup depends on besides `rho`:
/// llvmpipe's static sampler flags (`lp_sampler_static_sampler_state`).
struct LodParams {
    mip: TexMipFilter,
    first: u32,
    last: u32,
    /// One level for everything (no mipmapping and equal min/mag filters,
    /// or a buffer).
    fixed: Option<LevelChoice>,
    min_max_equal: bool,
    apply_min_lod: bool,
    apply_max_lod: bool,
    /// The shortcut without post-log2 adjustments (`lp_build_lod_selector`).
    fast: bool,
}

impl LodParams {
    fn new(t: &Texture<'_>, s: &SamplerState, args: &SampleArgs) -> Self {
        let mip = s.min_mip_filter;
        let no_lod = mip == TexMipFilter::None && s.min_img_filter == s.mag_img_filter;
        let fixed = (no_lod || t.target == TextureTarget::Buffer)
            .then(|| LevelChoice::single(t.first_level, s.mag_img_filter));
        let apply_min_lod = s.min_lod > 0.0;
        let apply_max_lod = s.max_lod < MAX_TEXTURE_LEVELS - 1.0;
        LodParams {
            mip,
            first: t.first_level,
            last: t.last_level,
            fixed,
            min_max_equal: s.min_lod == s.max_lod,
            apply_min_lod,
            apply_max_lod,
            fast: matches!(args.lod, Lod::Implicit | Lod::Grad(..))
                && s.lod_bias == 0.0
                && !apply_min_lod
                && !apply_max_lod,
        }
    }

    /// The level(s) and filter for squared scale factor `rho2`, per-lane
    /// bias `bias` and explicit LOD `explicit`.
    #[inline]
    fn choose(&self, s: &SamplerState, rho2: f32, bias: f32, explicit: Option<f32>) -> LevelChoice {
        if let Some(fixed) = self.fixed {
            return fixed;
        }
        let mip = self.mip;
        let (ipart, fpart, minify);
        if self.min_max_equal {
            let lod = s.min_lod;
            minify = lod > 0.0;
            (ipart, fpart) = split_lod(lod, mip);
        } else if self.fast && explicit.is_none() && mip != TexMipFilter::Linear {
            // lp_build_ilog2_sqrt: round(log2(sqrt(rho^2))) from the
            // exponent alone
            minify = rho2 > 1.0;
            ipart = (exponent_mantissa(rho2).0 + 1) >> 1;
            fpart = 0.0;
        } else {
            let mut lod = match explicit {
                Some(e) => e,
                None => 0.5 * fast_log2(rho2) + bias,
            };
            lod += s.lod_bias;
            if self.apply_max_lod {
                lod = lod.min(s.max_lod);
            }
            if self.apply_min_lod {
                lod = lod.max(s.min_lod);
            }
            minify = lod > 0.0;
            (ipart, fpart) = split_lod(lod, mip);
        }
        let filter = if minify {
            s.min_img_filter
        } else {
            s.mag_img_filter
        };
        let (first, last) = (self.first, self.last);
        match mip {
            TexMipFilter::None => LevelChoice::single(first, filter),
            TexMipFilter::Nearest => {
                let level = (first as i64 + ipart as i64).clamp(first as i64, last as i64) as u32;
                LevelChoice::single(level, filter)
            }
            TexMipFilter::Linear => {
                let l0 = first as i64 + ipart as i64;
                if l0 < first as i64 {
                    LevelChoice::single(first, filter)
                } else if l0 >= last as i64 {
                    LevelChoice::single(last, filter)
                } else {
                    LevelChoice {
                        level0: l0 as u32,
                        level1: l0 as u32 + 1,
                        weight: fpart.clamp(0.0, 1.0),
                        filter,
                    }
                }
            }
        }
    }
}

/// Most view levels [`QuadSampler`]'s level table holds (the full chain of
/// a 32768-texel texture, 16 levels); views with more take the general
/// path.
pub(crate) const TABLE_LEVELS: usize = 16;

/// [`Texture::sample`]'s textured-surface fast path with every per-call
/// decision taken once per shader op instead of once per 8 lanes: the
/// sampler, view and LOD-source checks, [`LodParams`], the layout of
/// every view level (validated once, see `table`) and the composed
/// format + view swizzle.  What remains per group is derivatives, one
/// level choice per quad (both quads in the same SIMD lanes) and the SIMD
/// bilinear filter.
///
/// Why: in textured_mesh the per-group level lookups, per-quad scalar LOD
/// code and per-texel bounds checks were about half of the texture path
/// (rho2_implicit 4.7 %, LodParams::choose 2.0 %, sample_bilinear_quads
/// 5.2 % of all samples before this struct took them over).
pub struct QuadSampler<'s> {
    s: &'s SamplerState,
    lod: LodParams,
    how: QuadLod,
    /// The view's data as 4-byte texels (the SIMD path is RGBA8-sized).
    words: &'s [[u8; 4]],
    /// Base level width and height: the derivative scale of `rho`.
    size: [f32; 2],
    /// The view's levels, first to last: `table[level - first]`.
    levels: &'s [LevelLayout],
    first: u32,
    first_layer: usize,
    /// Width, height, row stride and base of each view level, the last
    /// two in texels (4-byte words of `words`), filled on first use
    /// ([`Self::entry`]): a call often has only a few groups and touches
    /// one or two levels, and filling all 11 of textured_mesh's up front
    /// cost 1.8 % of its samples.
    table: [Cell<[i32; 4]>; TABLE_LEVELS],
    /// Bit `i`: `table[i]` is filled.
    known: Cell<u32>,
    /// Bit `i`: `table[i]` fits the SIMD path (see [`Self::entry`]).
    fits: Cell<u32>,
    min_linear: bool,
    mag_linear: bool,
    /// Which filtered channel feeds output R, G, B, A: 0-3 a stored byte,
    /// 4 zero, 5 one (the format's channel map, then the view swizzle).
    out: [u8; 4],
    /// The monomorphised chunk kernel this (sampler, view) pair runs, see
    /// [`Kernel`].
    kernel: Kernel,
    /// [`QuadLod::Const`]'s level layout (and the second level with its
    /// weight), resolved once: the constant-LOD kernel reads no table.
    const_lv: Option<ConstLevels>,
}

/// The sampling plan's kernel choice: which static sampler state × view
/// format combination a chunk runs as its own monomorphised loop
/// ([`QuadSampler::chunk`]), as llvmpipe generates one sampling function
/// per static sampler state (`lp_sampler_static_sampler_state`,
/// `lp_build_sample_soa_code`).  Every kernel is RGBA8-sized UNORM8,
/// LINEAR min and mag filters, 2D, normalized coordinates: what varies is
/// the wrap mode of each axis (REPEAT or CLAMP_TO_EDGE, const generics)
/// and how the level is chosen.  Any other combination runs
/// [`QuadSampler::sample_channels`] per group (filters that differ
/// between minification and magnification decide per quad there).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kernel {
    /// Linear filters, the LOD source of `lod` (`LOD_*`), REPEAT on s / t.
    Bilinear {
        lod: u8,
        repeat_s: bool,
        repeat_t: bool,
    },
    /// Anything else the quad path takes.
    Other,
}

/// [`Kernel::Bilinear`]'s LOD sources.
const LOD_CONST: u8 = 0;
const LOD_ILOG2: u8 = 1;
/// Mip filter LINEAR without bias or LOD clamps: [`linear_lods`] in SIMD.
const LOD_LINEAR: u8 = 2;
/// Everything else: [`LodParams::choose`] per quad.
const LOD_GENERAL: u8 = 3;

/// [`QuadSampler::const_lv`]: the level every lane reads, and the second
/// level with its 8-bit weight in both 16-bit halves ([`both16`]) when
/// the constant choice blends two.
#[derive(Clone, Copy)]
struct ConstLevels {
    first: LaneLevels,
    second: Option<(LaneLevels, u16x16)>,
}

/// What a chunk kernel reads in every group, copied out of the
/// [`QuadSampler`] before the loop (see [`QuadSampler::chunk_body`]).
struct Invariants<'s> {
    words: &'s [[u8; 4]],
    const_lv: Option<ConstLevels>,
}

/// How [`QuadSampler`] chooses each quad's level.
#[derive(Clone, Copy)]
enum QuadLod {
    /// One choice for everything (no mipmapping with equal min / mag
    /// filters, or `min_lod == max_lod`): nothing per group.
    Const(LevelChoice),
    /// `lp_build_ilog2_sqrt` (no bias, no LOD clamps, no LINEAR mip
    /// filter): the level is `(exponent(rho^2) + 1) >> 1` clamped to
    /// `first..=last` (`last == first` for mip filter NONE), computed for
    /// both quads in the same lanes.
    Ilog2 { first: i32, last: i32 },
    /// Everything else: [`LodParams::choose`] per quad on the SIMD `rho^2`.
    General,
}

impl<'a> Texture<'a> {
    /// The fast path for implicit-LOD sampling with `sampler` (`None`: the
    /// default sampler), with its sampling plan, or `None` when a lookup
    /// needs the general path.  Build it once and sample many groups: the
    /// plan resolves level layouts up front.
    pub fn quad_sampler<'s>(&self, sampler: Option<&'s SamplerState>) -> Option<QuadSampler<'s>>
    where
        'a: 's,
    {
        let mut q = self.quad_sampler_unplanned(sampler)?;
        q.plan();
        Some(q)
    }

    /// [`Self::quad_sampler`] without the plan (its kernel is
    /// [`Kernel::Other`]): for [`Self::sample`], which builds one per
    /// group and would pay the plan's setup each time.
    fn quad_sampler_unplanned<'s>(
        &self,
        sampler: Option<&'s SamplerState>,
    ) -> Option<QuadSampler<'s>>
    where
        'a: 's,
    {
        let s: &'s SamplerState = sampler.unwrap_or_else(|| default_sampler());
        let args = SampleArgs {
            lod: Lod::Implicit,
            ..SampleArgs::at([f32x8::ZERO; 3])
        };
        let ok = s.max_anisotropy <= 1
            && !(s.compare_mode == TexCompareMode::RToTexture && self.depth)
            && self.use_aos(s, &args)
            && self.bilinear_simd_applies(s, [0; 3]);
        let (first, last) = (self.first_level as usize, self.last_level as usize);
        if !ok || last - first >= TABLE_LEVELS {
            return None;
        }
        let lod = LodParams::new(self, s, &args);
        let how = if let Some(fixed) = lod.fixed {
            QuadLod::Const(fixed)
        } else if lod.min_max_equal {
            // choose() ignores rho here
            QuadLod::Const(lod.choose(s, 0.0, 0.0, None))
        } else if lod.fast && lod.mip != TexMipFilter::Linear {
            let first = self.first_level as i32;
            let last = if lod.mip == TexMipFilter::None {
                first
            } else {
                self.last_level as i32
            };
            QuadLod::Ilog2 { first, last }
        } else {
            QuadLod::General
        };
        let size = self.base_size(s);
        let c = self.channel_of;
        let out = self.swizzle.map(|sw| match sw {
            Swizzle::X => c[0],
            Swizzle::Y => c[1],
            Swizzle::Z => c[2],
            Swizzle::W => c[3],
            Swizzle::Zero | Swizzle::None => 4,
            Swizzle::One => 5,
        });
        Some(QuadSampler {
            s,
            lod,
            how,
            words: self.data.as_chunks::<4>().0,
            size: [size[0], size[1]],
            levels: &self.levels[first..=last],
            first: self.first_level,
            first_layer: self.first_layer as usize,
            table: Default::default(),
            known: Cell::new(0),
            fits: Cell::new(0),
            min_linear: s.min_img_filter == TexFilter::Linear,
            mag_linear: s.mag_img_filter == TexFilter::Linear,
            out,
            kernel: Kernel::Other,
            const_lv: None,
        })
    }

    /// Samples 8 lanes at `coord` (normalized, layer 0, no offset) with the
    /// checks of `q` already made; `None` sends the lookup to
    /// [`Self::sample`] (a quad minified or magnified with NEAREST, or
    /// coordinates the SIMD path leaves to the scalar one).
    #[inline]
    pub fn sample_quads(&self, q: &QuadSampler<'_>, coord: &[Lanes; 3]) -> Option<[Lanes; 4]> {
        q.sample(coord)
    }
}

impl QuadSampler<'_> {
    /// See [`Texture::sample_quads`].
    #[inline(always)]
    fn sample(&self, coord: &[Lanes; 3]) -> Option<[Lanes; 4]> {
        let ch = self.planned(coord)?;
        Some(if self.identity_swizzle() {
            ch
        } else {
            self.swizzle(ch)
        })
    }

    /// One group through the plan's kernel (before the view's swizzle):
    /// [`Self::run_chunk`]'s per-group step for callers that sample group
    /// by group (Rust-native shaders, generated code).
    pub fn planned(&self, coord: &[Lanes; 3]) -> Option<[Lanes; 4]> {
        let inv = &Invariants {
            words: self.words,
            const_lv: self.const_lv,
        };
        macro_rules! arms {
            ($k:expr; $($rs:literal $rt:literal)*) => {
                match $k {
                    $( Kernel::Bilinear { lod: LOD_CONST, repeat_s: $rs, repeat_t: $rt } =>
                        self.group::<$rs, $rt, LOD_CONST>(inv, coord, X86V3::of_build()),
                       Kernel::Bilinear { lod: LOD_ILOG2, repeat_s: $rs, repeat_t: $rt } =>
                        self.group::<$rs, $rt, LOD_ILOG2>(inv, coord, X86V3::of_build()),
                       Kernel::Bilinear { lod: LOD_LINEAR, repeat_s: $rs, repeat_t: $rt } =>
                        self.group::<$rs, $rt, LOD_LINEAR>(inv, coord, X86V3::of_build()),
                       Kernel::Bilinear { repeat_s: $rs, repeat_t: $rt, .. } =>
                        self.group::<$rs, $rt, LOD_GENERAL>(inv, coord, X86V3::of_build()), )*
                    Kernel::Other => self.sample_channels(coord),
                }
            };
        }
        arms!(self.kernel; false false false true true false true true)
    }

    /// [`Self::sample`] before the view's swizzle.
    #[inline(always)]
    fn sample_channels(&self, coord: &[Lanes; 3]) -> Option<[Lanes; 4]> {
        let quads = self.choose(coord);
        self.filter_channels(&quads, coord[0], coord[1])
    }

    /// Each quad's level choice: [`Texture::choose_quads`] (the test
    /// `quad_sampler_lods_match_the_scalar_choice` holds it to that), with
    /// the derivatives, `rho^2` and the usual `ilog2` level of both quads
    /// computed in the same SIMD lanes.
    #[inline(always)]
    fn choose(&self, coord: &[Lanes; 3]) -> [LevelChoice; 2] {
        match self.how {
            QuadLod::Const(c) => [c; 2],
            QuadLod::Ilog2 { first, last } => {
                let rho2 = rho2_quads(coord, self.size);
                let (level, minify) = ilog2_levels(rho2, first, last);
                let filter = |q: usize| {
                    let linear = if minify & (1 << (q * LANES / 2)) != 0 {
                        self.min_linear
                    } else {
                        self.mag_linear
                    };
                    if linear {
                        TexFilter::Linear
                    } else {
                        TexFilter::Nearest
                    }
                };
                let level = level.to_array();
                [
                    LevelChoice::single(level[0] as u32, filter(0)),
                    LevelChoice::single(level[LANES / 2] as u32, filter(1)),
                ]
            }
            QuadLod::General => {
                let r = rho2_quads(coord, self.size).to_array();
                [
                    self.lod.choose(self.s, r[0], 0.0, None),
                    self.lod.choose(self.s, r[LANES / 2], 0.0, None),
                ]
            }
        }
    }

    /// Bilinear texels of each quad's choice (lanes 0-3: `quads[0]`, 4-7:
    /// `quads[1]`), blended between two levels where a choice has them,
    /// converted to floats and swizzled.  Bit for bit
    /// [`Texture::sample_aos_scalar`] (`wrap_linear_8` + `lerp8`).
    #[cfg(test)]
    #[inline(always)]
    fn filter_quads(&self, quads: &[LevelChoice; 2], cx: f32x8, cy: f32x8) -> Option<[Lanes; 4]> {
        let ch = self.filter_channels(quads, cx, cy)?;
        Some(if self.identity_swizzle() {
            ch
        } else {
            self.swizzle(ch)
        })
    }

    /// [`Self::filter_quads`] before the view's swizzle.
    #[inline(always)]
    fn filter_channels(
        &self,
        quads: &[LevelChoice; 2],
        cx: f32x8,
        cy: f32x8,
    ) -> Option<[Lanes; 4]> {
        if quads[0].filter != quads[1].filter {
            // (a filter per quad: the general path, lane by lane)
            return None;
        }
        if quads[0].filter == TexFilter::Nearest {
            return self.nearest_channels(quads, cx, cy);
        }
        let lv0 = self.levels_of(quads[0].level0, quads[1].level0)?;
        let (mut even, mut odd) = self.bilinear(&lv0, cx, cy)?;
        if quads[0].level1 != quads[0].level0 || quads[1].level1 != quads[1].level0 {
            let lv1 = self.levels_of(quads[0].level1, quads[1].level1)?;
            let (e1, o1) = self.bilinear(&lv1, cx, cy)?;
            // A quad with one level lerps between equal texels: no change.
            // lerp8x16 is lerp8 per 16-bit channel (see there), so the
            // mip blend runs on the channel pairs too.
            let w = |q: &LevelChoice| ((q.weight * 256.0) as i32).clamp(0, 255);
            let w = both16(halves(w(&quads[0]), w(&quads[1])));
            even = lerp8x16(X86V3::of_build(), even, e1, w);
            odd = lerp8x16(X86V3::of_build(), odd, o1, w);
        }
        let (even, odd): (i32x8, i32x8) = (bytemuck::cast(even), bytemuck::cast(odd));
        // Channel k of the stored texel is byte k: even / odd words hold
        // bytes 0 and 2 / 1 and 3 in their low / high 16 bits.
        let lo = i32x8::splat(0xffff);
        let scale = f32x8::splat(1.0 / 255.0);
        let to_f = |v: i32x8| v.round_float() * scale;
        Some([
            to_f(even & lo),
            to_f(odd & lo),
            to_f(even >> 16_i32),
            to_f(odd >> 16_i32),
        ])
    }

    /// [`Self::filter_channels`] for NEAREST quads: each lane's stored
    /// bytes at its level (blended towards the second level by the quad's
    /// 8-bit weight, `lerp8`), times 1/255.  Bit for bit
    /// [`Texture::sample_aos_scalar`]'s NEAREST lanes
    /// (`nearest_quads_match_the_scalar_path`): a quad with one level, or
    /// weight 0, lerps to its own bytes, so the blend needs no mask.
    ///
    /// Why: NEAREST lookups of RGBA8-sized views (pixel art, UI, point
    /// sampled post passes) went group by group through the general
    /// path's per-group checks; here they take the plan's level table
    /// and one chunk loop like the bilinear kernels.
    #[inline(always)]
    fn nearest_channels(
        &self,
        quads: &[LevelChoice; 2],
        cx: f32x8,
        cy: f32x8,
    ) -> Option<[Lanes; 4]> {
        let lv0 = self.levels_of(quads[0].level0, quads[1].level0)?;
        let mut t = self.nearest_words(&lv0, cx, cy);
        let byte = i32x8::splat(0xff);
        let bytes = |w: i32x8| {
            [
                w & byte,
                (w >> 8) & byte,
                (w >> 16) & byte,
                (w >> 24) & byte,
            ]
        };
        let mut b = bytes(t);
        if quads[0].level1 != quads[0].level0 || quads[1].level1 != quads[1].level0 {
            let lv1 = self.levels_of(quads[0].level1, quads[1].level1)?;
            t = self.nearest_words(&lv1, cx, cy);
            let b1 = bytes(t);
            let w = |q: &LevelChoice| ((q.weight * 256.0) as i32).clamp(0, 255);
            let w = halves(w(&quads[0]), w(&quads[1]));
            for k in 0..4 {
                b[k] = lerp8x8(b[k], b1[k], w);
            }
        }
        let scale = f32x8::splat(1.0 / 255.0);
        Some(b.map(|v| v.round_float() * scale))
    }

    /// The texel words a NEAREST lookup reads at `lv`: `wrap_nearest` per
    /// axis, clamped into the level as `aos_level` does, on the level
    /// table (every such index is inside `words`, see [`Self::fill`]).
    #[inline(always)]
    fn nearest_words(&self, lv: &LaneLevels, cx: f32x8, cy: f32x8) -> i32x8 {
        let x = soa::nearest_index(cx, lv.width, self.s.wrap_s);
        let y = soa::nearest_index(cy, lv.height, self.s.wrap_t);
        fetch_words(
            X86V3::of_build(),
            self.words,
            lv.base + y * lv.row_stride + x,
        )
    }

    /// Whether [`Self::swizzle`] is the identity (the view's channels in
    /// order): `exec_texture` then stores the filtered channels as they are.
    #[inline(always)]
    fn identity_swizzle(&self) -> bool {
        self.out == [0, 1, 2, 3]
    }

    /// The view's swizzle applied to filtered channels `ch`.
    #[inline(always)]
    fn swizzle(&self, ch: [Lanes; 4]) -> [Lanes; 4] {
        apply_swizzle(self.out, ch)
    }

    /// Table entry of absolute level `l`, or `None` when `l` is outside
    /// the view or does not fit the fast path.
    #[inline(always)]
    fn entry(&self, l: u32) -> Option<[i32; 4]> {
        let i = l.wrapping_sub(self.first) as usize;
        if i >= TABLE_LEVELS {
            return None;
        }
        if self.known.get() & (1 << i) == 0 {
            self.fill(i);
        }
        (self.fits.get() & (1 << i) != 0).then(|| self.table[i].get())
    }

    /// Fills `table[i]`.  A view level fits when [`level_fits_simd`]
    /// holds, its base and row stride are whole texels, rows do not
    /// overlap, and its last texel ends inside the data
    /// (`base + (height - 1) * row_stride + 4 * width <= 4 * words.len()`,
    /// in bytes): then every index
    /// the wrap modes produce (`x < width`, `y < height`) is inside
    /// `words`.  A quad choosing a level that does not fit goes to the
    /// general path, which guards every texel.
    #[inline(never)]
    fn fill(&self, i: usize) {
        self.known.set(self.known.get() | 1 << i);
        let Some(lv) = self.levels.get(i) else {
            return;
        };
        let (w, h) = (lv.width as usize, lv.height as usize);
        let base = self
            .first_layer
            .checked_mul(lv.slice_stride)
            .and_then(|b| b.checked_add(lv.offset));
        let end = base.and_then(|b| {
            (h.checked_sub(1)?)
                .checked_mul(lv.row_stride)?
                .checked_add(b)?
                .checked_add(4 * w)
        });
        if let (Some(base), Some(end)) = (base, end)
            && level_fits_simd(lv, self.s)
            && w <= MAX_KERNEL_LEVEL
            && h <= MAX_KERNEL_LEVEL
            && base % 4 == 0
            && lv.row_stride % 4 == 0
            && lv.row_stride >= 4 * w
            && end <= 4 * self.words.len()
        {
            // all four are at most data.len() / 4 < 2^31
            // (bilinear_simd_applies)
            self.table[i].set([
                w as i32,
                h as i32,
                (lv.row_stride / 4) as i32,
                (base / 4) as i32,
            ]);
            self.fits.set(self.fits.get() | 1 << i);
        }
    }

    /// Layout lanes for absolute levels `l0` (lanes 0-3) and `l1` (4-7),
    /// or `None` when one of them does not fit the fast path.
    #[inline(always)]
    fn levels_of(&self, l0: u32, l1: u32) -> Option<LaneLevels> {
        let (a, b) = (self.entry(l0)?, self.entry(l1)?);
        Some(LaneLevels {
            width: halves(a[0], b[0]),
            height: halves(a[1], b[1]),
            row_stride: halves(a[2], b[2]),
            base: halves(a[3], b[3]),
        })
    }

    /// [`Texture::bilinear_level_rgba8`] on the validated level table,
    /// before the channels are split: the two filtered channel pairs
    /// (bytes 0 and 2, bytes 1 and 3) as 16-bit halves of each lane.
    #[inline(always)]
    fn bilinear(&self, lv: &LaneLevels, cx: f32x8, cy: f32x8) -> Option<(u16x16, u16x16)> {
        let s = self.s;
        let (x0, x1, wx) = wrap_linear_8x8(cx, lv.width, s.wrap_s)?;
        let (y0, y1, wy) = wrap_linear_8x8(cy, lv.height, s.wrap_t)?;
        // Texel indices: inside the level (wrapped or clamped above), so
        // inside `words` (the table's check); below 2^31 (data < 2 GiB).
        let (r0, r1) = (lv.base + y0 * lv.row_stride, lv.base + y1 * lv.row_stride);
        // One bounds check per 8 indices, in SIMD: `0 <= i < len`.  It
        // never fails (the table's check already keeps every index
        // inside), but it makes the unchecked loads locally sound.
        // Per-texel checks cost ~7 instructions each (texture/rest sample
        // ratio 0.54 with them, 0.45 without): `words[i]` kept a panicking
        // check per texel, which LLVM hoisted ahead of all 32 loads,
        // spilling the indices; clamping with `min(len - 1)` became a
        // compare-and-branch per texel, also hoisted and spilled; the
        // guarded `get(..).map_or(0, ..)` leaves a branch merge behind
        // each load.  On AVX2 the 8 loads are one `vpgatherdd` (textured_mesh
        // 6 % faster at one thread than 8 scalar loads and inserts, paired
        // A/B runs on the Zen 4 host); elsewhere they are scalar.
        #[inline(always)]
        fn fetch(words: &[[u8; 4]], i: i32x8) -> Option<i32x8> {
            let len = i32x8::splat(words.len().min(i32::MAX as usize) as i32);
            if !(i.simd_gt(i32x8::splat(-1)) & len.simd_gt(i)).all() {
                return None;
            }
            #[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
            {
                use core::arch::x86_64::{__m256i, _mm256_i32gather_epi32};
                let idx: __m256i = bytemuck::cast(i);
                // SAFETY: every lane of `i` is in `0..words.len()` (checked
                // just above), so each 4-byte load at `words + 4 * i` reads
                // one whole `[u8; 4]` of `words`; the gather has no
                // alignment requirement and AVX2 is enabled (cfg).
                let v = unsafe { _mm256_i32gather_epi32::<4>(words.as_ptr().cast::<i32>(), idx) };
                return Some(bytemuck::cast(v));
            }
            #[allow(unreachable_code)]
            let i = i.to_array();
            let w = |l: usize| {
                // SAFETY: every lane of `i` is in `0..words.len()`: checked
                // just above (`len` is `words.len()`, or i32::MAX when that
                // is larger, which only narrows the range).
                i32::from_le_bytes(*unsafe { words.get_unchecked(i[l] as usize) })
            };
            Some(i32x8::new([w(0), w(1), w(2), w(3), w(4), w(5), w(6), w(7)]))
        }
        let w = self.words;
        let t = [
            fetch(w, r0 + x0)?,
            fetch(w, r0 + x1)?,
            fetch(w, r1 + x0)?,
            fetch(w, r1 + x1)?,
        ];
        Some(filter_pairs(X86V3::of_build(), t, wx, wy))
    }
}

/// Register locations of one texture op in a chunk (see
/// [`crate::ir::loc`]): the coordinates it reads and the results it
/// writes, resolved and bounds-checked once per op and chunk
/// ([`ChunkRegs::new`]), so the per-group accesses are unchecked.  With
/// a check per access, reading 2 coordinates and writing 4 results took
/// 50 of a bilinear sample's 193 instructions in postprocess (callgrind).
pub struct ChunkRegs {
    coord: [(usize, usize); 3],
    /// Coordinates read (1 to 3).
    coords: usize,
    dst: [(usize, usize); 4],
    /// Bit `k`: result `k` is written ([`TexOp::live`]).
    live: u8,
    groups: usize,
    /// One past the largest file index any group touches.
    end: usize,
}

impl ChunkRegs {
    /// The locations of `t`'s operands for a chunk of `groups` groups in
    /// a file with `nu` uniform registers.
    #[inline]
    pub(crate) fn new(t: &TexOp, nu: usize, groups: usize) -> Self {
        let n = t.coord_count();
        let at = |r: Reg| loc(r, nu, groups);
        let coord: [(usize, usize); 3] =
            std::array::from_fn(|k| if k < n { at(t.coord[k]) } else { (0, 0) });
        let live = t.live & ((1u8 << t.result_count()) - 1);
        let dst: [(usize, usize); 4] = std::array::from_fn(|k| {
            if live & (1 << k) != 0 {
                at(t.dst[k])
            } else {
                (0, 0)
            }
        });
        // the last index an operand reaches: its base, plus `groups - 1`
        // for a varying register (`mask == usize::MAX`)
        let reach = |(b, m): (usize, usize)| b + ((groups.max(1) - 1) & m) + 1;
        let end = coord[..n]
            .iter()
            .chain((0..4).filter(|k| live & (1 << k) != 0).map(|k| &dst[k]))
            .map(|&l| reach(l))
            .max()
            .unwrap_or(0);
        ChunkRegs {
            coord,
            coords: n,
            dst,
            live,
            groups,
            end,
        }
    }

    /// Whether every access fits a file of `len` registers: what the
    /// unchecked accesses of [`Self::read`] and [`Self::store`] rely on,
    /// asserted once per op and chunk ([`QuadSampler::run_chunk`],
    /// [`exec_texture`]).
    fn fits(&self, len: usize) -> bool {
        self.end <= len
    }

    /// Group `g`'s coordinates.
    ///
    /// # Safety
    /// [`Self::fits`] holds for `file.len()`, and `g < self.groups`.
    #[inline(always)]
    unsafe fn read(&self, file: &[Lanes], g: usize) -> [Lanes; 3] {
        debug_assert!(self.fits(file.len()) && g < self.groups);
        let mut coord = [f32x8::ZERO; 3];
        for (k, (c, &(b, m))) in coord.iter_mut().zip(&self.coord).enumerate() {
            if k < self.coords {
                // SAFETY: `b + (g & m) < self.end <= file.len()` (the
                // caller's contract: `fits`, and `g < groups`).
                *c = unsafe { *file.get_unchecked(b + (g & m)) };
            }
        }
        coord
    }

    /// Stores group `g`'s live results `r`.
    ///
    /// # Safety
    /// [`Self::fits`] holds for `file.len()`, and `g < self.groups`.
    #[inline(always)]
    unsafe fn store(&self, file: &mut [Lanes], g: usize, r: [Lanes; 4]) {
        debug_assert!(self.fits(file.len()) && g < self.groups);
        // The four results are stored from registers one by one: a
        // dynamic loop over the result array (or zipping it by value)
        // kept it in a misaligned stack slot, stored and reloaded every
        // group, a store-forwarding stall at each of the 4 reloads.
        let [r0, r1, r2, r3] = r;
        let mut put = |k: usize, v: Lanes| {
            if self.live & (1 << k) != 0 {
                let (b, m) = self.dst[k];
                // SAFETY: as in `read`: every live result's reach is
                // inside `self.end <= file.len()`.
                unsafe { *file.get_unchecked_mut(b + (g & m)) = v };
            }
        };
        put(0, r0);
        put(1, r1);
        put(2, r2);
        put(3, r3);
    }
}

/// The general path for one group a kernel leaves (`file`, group, the
/// group's coordinates): [`exec_texture`] passes its `sample_group`.
pub type Fallback<'f> = dyn FnMut(&[Lanes], usize, [Lanes; 3]) -> [Lanes; 4] + 'f;

/// [`Fallback`] for op `k` of a fused group ([`exec_texture_group`]).
pub type FallbackN<'f> = dyn FnMut(usize, &[Lanes], usize, [Lanes; 3]) -> [Lanes; 4] + 'f;

impl QuadSampler<'_> {
    /// Derives the sampling plan once per (sampler, view): which
    /// [`Kernel`] runs, and for a constant level choice its layout.
    fn plan(&mut self) {
        if !(self.min_linear && self.mag_linear) {
            return;
        }
        let lod = match self.how {
            QuadLod::Const(c) => {
                let Some(first) = self.levels_of(c.level0, c.level0) else {
                    return;
                };
                let second = if c.level1 != c.level0 {
                    let Some(lv) = self.levels_of(c.level1, c.level1) else {
                        return;
                    };
                    let w = ((c.weight * 256.0) as i32).clamp(0, 255);
                    Some((lv, both16(i32x8::splat(w))))
                } else {
                    None
                };
                self.const_lv = Some(ConstLevels { first, second });
                LOD_CONST
            }
            QuadLod::Ilog2 { .. } => LOD_ILOG2,
            // General with `fast` is mip filter LINEAR (`quad_sampler`)
            QuadLod::General if self.lod.fast && self.lod.mip == TexMipFilter::Linear => LOD_LINEAR,
            QuadLod::General => LOD_GENERAL,
        };
        self.kernel = Kernel::Bilinear {
            lod,
            repeat_s: self.s.wrap_s == TexWrap::Repeat,
            repeat_t: self.s.wrap_t == TexWrap::Repeat,
        };
    }

    /// Runs the op for every group of a chunk: the plan's kernel, one
    /// dispatch per chunk.  Groups a kernel cannot take (coordinates
    /// beyond i32 after scaling, NaN, a level outside the fast path) go
    /// to `fallback`, which must return what [`Texture::sample`] would.
    ///
    /// # Panics
    /// If `regs` reach past `file` (the executor sizes the file for the
    /// program, so this is an internal error).
    pub fn run_chunk(&self, file: &mut [Lanes], regs: &ChunkRegs, fallback: &mut Fallback<'_>) {
        assert!(
            regs.fits(file.len()),
            "texture operands outside the register file"
        );
        macro_rules! kernel {
            ($lod:expr, $($rs:literal $rt:literal)*) => {
                match (self.kernel, $lod) {
                    $( (Kernel::Bilinear { repeat_s: $rs, repeat_t: $rt, .. }, LOD_CONST) =>
                        self.chunk::<$rs, $rt, LOD_CONST>(file, regs, fallback),
                       (Kernel::Bilinear { repeat_s: $rs, repeat_t: $rt, .. }, LOD_ILOG2) =>
                        self.chunk::<$rs, $rt, LOD_ILOG2>(file, regs, fallback),
                       (Kernel::Bilinear { repeat_s: $rs, repeat_t: $rt, .. }, LOD_LINEAR) =>
                        self.chunk::<$rs, $rt, LOD_LINEAR>(file, regs, fallback),
                       (Kernel::Bilinear { repeat_s: $rs, repeat_t: $rt, .. }, _) =>
                        self.chunk::<$rs, $rt, LOD_GENERAL>(file, regs, fallback), )*
                    (Kernel::Other, _) => self.chunk_other(file, regs, fallback),
                }
            };
        }
        let lod = match self.kernel {
            Kernel::Bilinear { lod, .. } => lod,
            Kernel::Other => LOD_GENERAL,
        };
        kernel!(lod, false false false true true false true true)
    }

    /// Whether `other`'s lookups at the same coordinates take this plan's
    /// level choice, texel addresses and weights: the same bilinear
    /// kernel with a per-group or constant LOD source, sampler state, view
    /// levels, layer and data length, so only the texels (and the channel
    /// order) differ.  A glTF material's maps often are such views
    /// (pbr_barrels: three 1024x1024 maps, one UV set, equal samplers).
    fn fusable(&self, other: &QuadSampler<'_>) -> bool {
        matches!(self.kernel, Kernel::Bilinear { lod, .. } if lod != LOD_GENERAL)
            && self.kernel == other.kernel
            && *self.s == *other.s
            && self.levels == other.levels
            && (self.first, self.first_layer) == (other.first, other.first_layer)
            && self.size == other.size
            && self.words.len() == other.words.len()
    }

    /// [`Self::run_chunk`] for the `N` ops of a fused group: `quads[0]`
    /// plans for all ([`Self::fusable`] with each), `regs[k]` and
    /// `fallback(k, ..)` are op `k`'s, and every op reads the same
    /// coordinate registers ([`fusable_ops`]).
    ///
    /// # Panics
    /// If `regs` reach past `file` or differ in group count (internal
    /// errors, as in [`Self::run_chunk`]).
    fn run_chunk_n<const N: usize>(
        quads: &[&QuadSampler<'_>; N],
        file: &mut [Lanes],
        regs: &[ChunkRegs; N],
        fallback: &mut FallbackN<'_>,
    ) {
        assert!(
            regs.iter()
                .all(|r| r.fits(file.len()) && r.groups == regs[0].groups),
            "texture operands outside the register file"
        );
        macro_rules! kernel {
            ($($rs:literal $rt:literal)*) => {
                match quads[0].kernel {
                    $( Kernel::Bilinear { repeat_s: $rs, repeat_t: $rt, lod: LOD_CONST } =>
                        chunk_n_simd::<$rs, $rt, LOD_CONST, N>(quads, file, regs, fallback),
                       Kernel::Bilinear { repeat_s: $rs, repeat_t: $rt, lod: LOD_ILOG2 } =>
                        chunk_n_simd::<$rs, $rt, LOD_ILOG2, N>(quads, file, regs, fallback),
                       Kernel::Bilinear { repeat_s: $rs, repeat_t: $rt, lod: LOD_LINEAR } =>
                        chunk_n_simd::<$rs, $rt, LOD_LINEAR, N>(quads, file, regs, fallback), )*
                    // (`fusable` admits no other kernel)
                    _ => unreachable!("an unfusable plan in a fused texture group"),
                }
            };
        }
        kernel!(false false false true true false true true)
    }

    /// The group loop of [`Self::run_chunk_n`], as [`Self::chunk_body`].
    #[inline(always)]
    fn chunk_n_body<const RS: bool, const RT: bool, const LOD: u8, const N: usize>(
        quads: &[&QuadSampler<'_>; N],
        file: &mut [Lanes],
        regs: &[ChunkRegs; N],
        fallback: &mut FallbackN<'_>,
        v3: Option<X86V3>,
    ) {
        let lead = quads[0];
        let inv = Invariants {
            words: lead.words,
            const_lv: lead.const_lv,
        };
        let mut words = [lead.words; N];
        let mut identity = [true; N];
        let mut outs = [[0u8; 4]; N];
        for k in 0..N {
            words[k] = quads[k].words;
            identity[k] = quads[k].identity_swizzle();
            outs[k] = quads[k].out;
        }
        for g in 0..regs[0].groups {
            // SAFETY (every access below): `run_chunk_n` asserted that
            // every `regs[k]` fits `file` and has `regs[0]`'s group count,
            // and `g < regs[0].groups`.
            let coord = unsafe { regs[0].read(file, g) };
            match lead.group_n::<RS, RT, LOD, N>(&inv, &words, &coord, v3) {
                Some(chs) => {
                    for k in 0..N {
                        let ch = if identity[k] {
                            chs[k]
                        } else {
                            apply_swizzle(outs[k], chs[k])
                        };
                        unsafe { regs[k].store(file, g, ch) };
                    }
                }
                None => {
                    for (k, r) in regs.iter().enumerate() {
                        let v = fallback(k, file, g, coord);
                        unsafe { r.store(file, g, v) };
                    }
                }
            }
        }
    }

    /// The groups of a chunk through [`Self::sample_channels`] (kernel
    /// [`Kernel::Other`]).
    fn chunk_other(&self, file: &mut [Lanes], regs: &ChunkRegs, fallback: &mut Fallback<'_>) {
        chunk_other_simd(self, file, regs, fallback)
    }

    #[inline(always)]
    fn chunk_other_body(&self, file: &mut [Lanes], regs: &ChunkRegs, fallback: &mut Fallback<'_>) {
        let identity = self.identity_swizzle();
        let out = self.out;
        for g in 0..regs.groups {
            // SAFETY (every access below): `run_chunk` asserted
            // `regs.fits(file.len())`, and `g < regs.groups`.
            // Each arm stores its own results (see `ChunkRegs::store`).
            let coord = unsafe { regs.read(file, g) };
            match self.sample_channels(&coord) {
                Some(ch) if identity => unsafe { regs.store(file, g, ch) },
                Some(ch) => unsafe { regs.store(file, g, apply_swizzle(out, ch)) },
                None => {
                    let r = fallback(file, g, coord);
                    unsafe { regs.store(file, g, r) };
                }
            }
        }
    }

    /// One monomorphised kernel over a chunk: REPEAT (`RS`, `RT`) or
    /// CLAMP_TO_EDGE per axis, LOD source `LOD`.  No state branches per
    /// group beyond the LOD's level choice.
    fn chunk<const RS: bool, const RT: bool, const LOD: u8>(
        &self,
        file: &mut [Lanes],
        regs: &ChunkRegs,
        fallback: &mut Fallback<'_>,
    ) {
        chunk_simd::<RS, RT, LOD>(self, file, regs, fallback)
    }

    #[inline(always)]
    fn chunk_body<const RS: bool, const RT: bool, const LOD: u8>(
        &self,
        file: &mut [Lanes],
        regs: &ChunkRegs,
        fallback: &mut Fallback<'_>,
        v3: Option<X86V3>,
    ) {
        let identity = self.identity_swizzle();
        let out = self.out;
        // Copies of what every group reads: `self` holds `Cell`s (the
        // level table) and the fallback is an opaque call, so LLVM must
        // assume either may change `self` and reloads (and recomputes
        // from) its fields every group; locals it hoists (the level's
        // scale factors, the pair-fetch test, for LOD_CONST all of them).
        let inv = Invariants {
            words: self.words,
            const_lv: self.const_lv,
        };
        for g in 0..regs.groups {
            // SAFETY (every access below): `run_chunk` asserted
            // `regs.fits(file.len())`, and `g < regs.groups`.
            let coord = unsafe { regs.read(file, g) };
            match self.group::<RS, RT, LOD>(&inv, &coord, v3) {
                Some(ch) if identity => unsafe { regs.store(file, g, ch) },
                Some(ch) => unsafe { regs.store(file, g, apply_swizzle(out, ch)) },
                None => {
                    let r = fallback(file, g, coord);
                    unsafe { regs.store(file, g, r) };
                }
            }
        }
    }

    /// Each quad's level (lanes 0-3 and 4-7), its second level and the
    /// 8-bit weight between them (`None`: one level), for the kernels'
    /// per-group LOD sources (not [`LOD_CONST`]).
    #[inline(always)]
    fn quad_levels<const LOD: u8>(
        &self,
        coord: &[Lanes; 3],
        v3: Option<X86V3>,
    ) -> Option<([i32; 2], [i32; 2], Option<i32x8>)> {
        Some(match LOD {
            LOD_ILOG2 => {
                let QuadLod::Ilog2 { first, last } = self.how else {
                    return None;
                };
                let (l, _) = ilog2_levels(rho2_quads_at(v3, coord, self.size), first, last);
                let l = l.to_array();
                ([l[0], l[4]], [l[0], l[4]], None)
            }
            LOD_LINEAR => {
                let (first, last) = (self.lod.first as i32, self.lod.last as i32);
                let rho2 = rho2_quads_at(v3, coord, self.size);
                let (l0, l1, w) = linear_lods_at(v3, rho2, first, last)?;
                let (l0, l1) = (l0.to_array(), l1.to_array());
                ([l0[0], l0[4]], [l1[0], l1[4]], Some(w))
            }
            _ => {
                let r = rho2_quads_at(v3, coord, self.size).to_array();
                let q = [
                    self.lod.choose(self.s, r[0], 0.0, None),
                    self.lod.choose(self.s, r[LANES / 2], 0.0, None),
                ];
                let w = |q: &LevelChoice| ((q.weight * 256.0) as i32).clamp(0, 255);
                (
                    [q[0].level0 as i32, q[1].level0 as i32],
                    [q[0].level1 as i32, q[1].level1 as i32],
                    Some(halves(w(&q[0]), w(&q[1]))),
                )
            }
        })
    }

    /// 8 lanes through the plan's kernel, before the view's swizzle; `None`
    /// sends the group to the general path.  Bit for bit
    /// [`Self::sample_channels`] (`kernels_match_the_quad_path`).
    ///
    /// [`Self::group_n`]'s body for one view, written out rather than
    /// `group_n::<.., 1>`: through the arrays LLVM kept ~7 more
    /// instructions per sample (postprocess +1.9 %, callgrind).  Both
    /// share the level choice ([`Self::quad_levels`]).
    #[inline(always)]
    fn group<const RS: bool, const RT: bool, const LOD: u8>(
        &self,
        inv: &Invariants<'_>,
        coord: &[Lanes; 3],
        v3: Option<X86V3>,
    ) -> Option<[Lanes; 4]> {
        let (cx, cy) = (coord[0], coord[1]);
        let words = inv.words;
        let (even, odd) = if LOD == LOD_CONST {
            let c = inv.const_lv.as_ref()?;
            let (e, o) = bilinear_k::<RS, RT>(words, &c.first, cx, cy, v3)?;
            match &c.second {
                None => (e, o),
                Some((lv, w)) => {
                    let (e1, o1) = bilinear_k::<RS, RT>(words, lv, cx, cy, v3)?;
                    (lerp8x16(v3, e, e1, *w), lerp8x16(v3, o, o1, *w))
                }
            }
        } else {
            // per quad: level 0 (lanes 0-3 and 4-7), level 1, 8-bit weight
            let (l0, l1, w) = self.quad_levels::<LOD>(coord, v3)?;
            let lv0 = self.levels_of(l0[0] as u32, l0[1] as u32)?;
            let (mut e, mut o) = bilinear_k::<RS, RT>(words, &lv0, cx, cy, v3)?;
            if let Some(w) = w
                && l1 != l0
            {
                // A quad with one level lerps between equal texels (its
                // weight is 0): no change.
                let lv1 = self.levels_of(l1[0] as u32, l1[1] as u32)?;
                let (e1, o1) = bilinear_k::<RS, RT>(words, &lv1, cx, cy, v3)?;
                let w = both16(w);
                e = lerp8x16(v3, e, e1, w);
                o = lerp8x16(v3, o, o1, w);
            }
            (e, o)
        };
        // Only where `wide` is SSE2 halves: in a v3 build it already emits
        // these instructions, and the explicit path measured 3 % slower
        // there (postprocess, code placement).
        #[cfg(all(target_arch = "x86_64", not(target_feature = "avx2")))]
        if v3.is_some() {
            // SAFETY: an `X86V3` token exists only on a CPU with AVX2.
            return Some(unsafe { avx2_lanes::channels_f32(even, odd) });
        }
        Some(channels_f32(even, odd))
    }

    /// [`Self::group`] for `N` views whose lookups share this one's
    /// addressing ([`Self::fusable`]): the level choice, texel addresses
    /// and weights once, the fetch and filter per view (`words`, this
    /// view's first).  Each view's channels are bit for bit its own
    /// [`Self::group`]'s: the same operations on the same operands.
    #[inline(always)]
    fn group_n<const RS: bool, const RT: bool, const LOD: u8, const N: usize>(
        &self,
        inv: &Invariants<'_>,
        words: &[&[[u8; 4]]; N],
        coord: &[Lanes; 3],
        v3: Option<X86V3>,
    ) -> Option<[[Lanes; 4]; N]> {
        let (cx, cy) = (coord[0], coord[1]);
        let pairs = if LOD == LOD_CONST {
            let c = inv.const_lv.as_ref()?;
            let mut r = bilinear_n::<RS, RT, N>(words, &c.first, cx, cy, v3)?;
            if let Some((lv, w)) = &c.second {
                let r1 = bilinear_n::<RS, RT, N>(words, lv, cx, cy, v3)?;
                for k in 0..N {
                    r[k] = (
                        lerp8x16(v3, r[k].0, r1[k].0, *w),
                        lerp8x16(v3, r[k].1, r1[k].1, *w),
                    );
                }
            }
            r
        } else {
            // per quad: level 0 (lanes 0-3 and 4-7), level 1, 8-bit weight
            let (l0, l1, w) = self.quad_levels::<LOD>(coord, v3)?;
            let lv0 = self.levels_of(l0[0] as u32, l0[1] as u32)?;
            let mut r = bilinear_n::<RS, RT, N>(words, &lv0, cx, cy, v3)?;
            if let Some(w) = w
                && l1 != l0
            {
                // A quad with one level lerps between equal texels (its
                // weight is 0): no change.
                let lv1 = self.levels_of(l1[0] as u32, l1[1] as u32)?;
                let r1 = bilinear_n::<RS, RT, N>(words, &lv1, cx, cy, v3)?;
                let w = both16(w);
                for k in 0..N {
                    r[k] = (
                        lerp8x16(v3, r[k].0, r1[k].0, w),
                        lerp8x16(v3, r[k].1, r1[k].1, w),
                    );
                }
            }
            r
        };
        let mut out = [[Lanes::ZERO; 4]; N];
        for k in 0..N {
            let (even, odd) = pairs[k];
            // Only where `wide` is SSE2 halves: in a v3 build it already
            // emits these instructions, and the explicit path measured 3 %
            // slower there (postprocess, code placement).
            #[cfg(all(target_arch = "x86_64", not(target_feature = "avx2")))]
            if v3.is_some() {
                // SAFETY: an `X86V3` token exists only on a CPU with AVX2.
                out[k] = unsafe { avx2_lanes::channels_f32(even, odd) };
                continue;
            }
            out[k] = channels_f32(even, odd);
        }
        Some(out)
    }
}

/// [`QuadSampler::swizzle`] with the map `out` as a value: the chunk
/// loops copy it out of the sampler before their group loop, as they do
/// the other invariants (`self` holds `Cell`s, so LLVM reloaded
/// `self.out` and branched on each entry every group), and index the six
/// sources instead of matching: no branches.  postprocess with a
/// B8G8R8A8 source (`benches/sampler_variants.py`) ran 0.971x, then
/// 0.899x with the indexing below (paired A/B, 3 rounds each): 97 ms,
/// within ~8 % of the R8G8B8A8 scene.
#[inline(always)]
fn apply_swizzle(out: [u8; 4], ch: [Lanes; 4]) -> [Lanes; 4] {
    let src = [ch[0], ch[1], ch[2], ch[3], f32x8::ZERO, f32x8::ONE];
    // (`out` entries are 0..=5, see `QuadSampler::out`; indexed one by
    // one, not `out.map(..)`, whose closure stayed out of line: 8 % of
    // postprocess with a B8G8R8A8 source)
    let at = |k: usize| (out[k] as usize).min(5);
    [src[at(0)], src[at(1)], src[at(2)], src[at(3)]]
}

/// [`bilinear_k`] for `N` views of one level layout at the same
/// coordinates: with AVX2 the addresses and weights once
/// ([`bilinear_taps_avx2`]) and the fetch and filter per view, otherwise
/// each view on its own.  Per view the bits of its own [`bilinear_k`].
#[inline(always)]
fn bilinear_n<const RS: bool, const RT: bool, const N: usize>(
    words: &[&[[u8; 4]]; N],
    lv: &LaneLevels,
    cx: f32x8,
    cy: f32x8,
    v3: Option<X86V3>,
) -> Option<[(u16x16, u16x16); N]> {
    let mut out = [(u16x16::ZERO, u16x16::ZERO); N];
    #[cfg(target_arch = "x86_64")]
    if v3.is_some() && words.iter().all(|w| w.len() >= 2) {
        // SAFETY: an `X86V3` token exists only on a CPU with AVX2, and
        // every `words` holds at least two texels (tested above).
        unsafe {
            let taps = bilinear_taps_avx2::<RS, RT>(lv, cx, cy)?;
            for k in 0..N {
                out[k] = bilinear_fetch_avx2::<RS>(words[k], &taps);
            }
        }
        return Some(out);
    }
    for k in 0..N {
        out[k] = bilinear_k::<RS, RT>(words[k], lv, cx, cy, v3)?;
    }
    Some(out)
}

/// [`QuadSampler::bilinear`] with the wrap modes as constants and texel
/// fetches in pairs.  Where a lane's two columns are adjacent in memory
/// (CLAMP_TO_EDGE on levels at least 2 wide, REPEAT away from the
/// wrap), one 8-byte load per row fetches both: half the gathered
/// elements.  A CLAMP_TO_EDGE lane off the left or right edge reads the
/// pair at the edge with weight 0, its edge texel moved to the left
/// slot, which is what the equal pair of the scalar path gives.
#[inline(always)]
fn bilinear_k<const RS: bool, const RT: bool>(
    words: &[[u8; 4]],
    lv: &LaneLevels,
    cx: f32x8,
    cy: f32x8,
    v3: Option<X86V3>,
) -> Option<(u16x16, u16x16)> {
    let wrap = |r: bool| {
        if r {
            TexWrap::Repeat
        } else {
            TexWrap::ClampToEdge
        }
    };
    #[cfg(target_arch = "x86_64")]
    if v3.is_some() && words.len() >= 2 {
        // SAFETY: an `X86V3` token exists only on a CPU with AVX2.
        return unsafe { bilinear_avx2::<RS, RT>(words, lv, cx, cy) };
    }
    let (y0, y1, wy) = wrap_linear_8x8(cy, lv.height, wrap(RT))?;
    let (r0, r1) = (lv.base + y0 * lv.row_stride, lv.base + y1 * lv.row_stride);
    let (i0, wx) = scaled_8x8(cx, lv.width)?;
    let last = lv.width - i32x8::ONE;
    #[cfg(target_arch = "x86_64")]
    if let Some(v3) = v3
        && words.len() >= 2
    {
        // (left texel, weight, lanes whose left texel is the right one)
        let pair = if RS {
            let x0 = i0 & last;
            x0.simd_lt(last).all().then_some((x0, wx, i32x8::ZERO))
        } else {
            last.simd_gt(i32x8::ZERO).all().then(|| {
                let p = i0.max(i32x8::ZERO).min(last - i32x8::ONE);
                let right = !i0.simd_lt(last);
                let edge = i0.simd_lt(i32x8::ZERO) | right;
                (p, edge.select(i32x8::ZERO, wx), right)
            })
        };
        if let Some((p, w, right)) = pair {
            let mut t = fetch_pairs(v3, words, r0 + p, r1 + p);
            if !RS {
                t[0] = right.select(t[1], t[0]);
                t[2] = right.select(t[3], t[2]);
            }
            return Some(filter_pairs(Some(v3), t, w, wy));
        }
    }
    let (x0, x1) = if RS {
        let x0 = i0 & last;
        (x0, (x0 + i32x8::ONE) & last)
    } else {
        let inside = i0.simd_gt(i32x8::splat(-1)) & i0.simd_lt(last);
        let c0 = i0.max(i32x8::ZERO).min(last);
        (c0, inside.select(c0 + i32x8::ONE, c0))
    };
    let w = words;
    let t = [
        fetch_words(v3, w, r0 + x0),
        fetch_words(v3, w, r0 + x1),
        fetch_words(v3, w, r1 + x0),
        fetch_words(v3, w, r1 + x1),
    ];
    Some(filter_pairs(v3, t, wx, wy))
}

/// The filtered channel pairs (see [`filter_pairs`]) as floats: stored
/// byte `k` in channel `k`, `v / 255`.
#[inline(always)]
fn channels_f32(even: u16x16, odd: u16x16) -> [Lanes; 4] {
    let (even, odd): (i32x8, i32x8) = (bytemuck::cast(even), bytemuck::cast(odd));
    let lo = i32x8::splat(0xffff);
    let scale = f32x8::splat(1.0 / 255.0);
    let to_f = |v: i32x8| v.round_float() * scale;
    [
        to_f(even & lo),
        to_f(odd & lo),
        to_f(even >> 16_i32),
        to_f(odd >> 16_i32),
    ]
}

/// The first half of [`wrap_linear_8x8`]: the texel left of each sample
/// point (unwrapped) and the 8-bit weight, or `None` for coordinates
/// beyond i32 after scaling, or NaN.
#[inline(always)]
fn scaled_8x8(c: f32x8, len: i32x8) -> Option<(i32x8, i32x8)> {
    let scaled = c * (len * i32x8::splat(256)).round_float();
    let limit = f32x8::splat(2147483520.0);
    if !(scaled.abs().simd_lt(limit)).all() {
        return None;
    }
    let u = scaled.fast_round_int() - i32x8::splat(128);
    Some((u >> 8_i32, u & i32x8::splat(255)))
}

/// Loads the 4-byte texels at word indices `i`.  Callers pass indices
/// inside `words` (the level table's check, see [`QuadSampler::fill`]);
/// the unsigned `min` with the last index is the local guard that keeps
/// the unchecked loads in bounds whatever they pass (one instruction
/// for 8 lanes, no branch; it never changes a valid index).
#[inline(always)]
fn fetch_words(v3: Option<X86V3>, words: &[[u8; 4]], i: i32x8) -> i32x8 {
    let Some(max) = words.len().checked_sub(1) else {
        return i32x8::ZERO;
    };
    let max = u32x8::splat(max.min(i32::MAX as usize) as u32);
    let i: u32x8 = bytemuck::cast(i);
    let i = i.min(max);
    #[cfg(target_arch = "x86_64")]
    if v3.is_some() {
        // SAFETY: an `X86V3` token exists only on a CPU with AVX2 and FMA; every
        // lane of `i` is at most `words.len() - 1` (the `min` above).
        return unsafe { gather_words(words, i) };
    }
    let i = i.to_array();
    let w = |l: usize| i32::from_le_bytes(words[i[l] as usize]);
    i32x8::new([w(0), w(1), w(2), w(3), w(4), w(5), w(6), w(7)])
}

/// [`fetch_words`]' eight loads as one `vpgatherdd`.
///
/// # Safety
/// Every lane of `i` is at most `words.len() - 1` and below 2^31, and the
/// CPU has AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn gather_words(words: &[[u8; 4]], i: u32x8) -> i32x8 {
    use core::arch::x86_64::{__m256i, _mm256_i32gather_epi32};
    let idx: __m256i = bytemuck::cast(i);
    // SAFETY: the caller's contract: each 4-byte load at `words + 4 * i`
    // reads one whole `[u8; 4]` of `words` (the signed index is the same
    // below 2^31); the gather has no alignment requirement.
    let v = unsafe { _mm256_i32gather_epi32::<4>(words.as_ptr().cast::<i32>(), idx) };
    bytemuck::cast(v)
}

/// The four texels of each lane's bilinear footprint (top-left,
/// top-right, bottom-left, bottom-right) when each row's two texels are
/// adjacent: `i0` / `i1` index the left texel of the top / bottom row,
/// and one 8-byte load per lane and row fetches both.  The 16 loads are
/// scalar (`vmovsd`, paired with `vmovlhps`) on AMD cores, four
/// 4-element `vpgatherdq` elsewhere
/// ([`ferropipe_components::simd::fast_gathers`]): on a Zen 4 host
/// a microbenchmark fetched 8 pairs in ~2.2 ns with scalar loads against
/// ~3.5 ns with the gathers, and postprocess ran 0.967x (paired A/B, 9
/// rounds, every round faster; textured_mesh 0.989x, pbr_barrels 0.992x);
/// on an Intel Xeon the gathers ran postprocess 0.839x against the
/// scalar loads.  The loads fill lanes 0, 1, 4, 5 and 2,
/// 3, 6, 7 of two registers, so one in-lane shuffle per texel gives the
/// lane order.  Needs `words.len() >= 2`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn fetch_pairs(_: X86V3, words: &[[u8; 4]], i0: i32x8, i1: i32x8) -> [i32x8; 4] {
    // SAFETY: an `X86V3` token exists only on a CPU with AVX2 and FMA.
    unsafe { fetch_pairs_avx2(words, i0, i1) }
}

/// [`fetch_pairs`]' instructions, the loads this CPU does faster.
///
/// # Safety
/// The CPU has AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn fetch_pairs_avx2(words: &[[u8; 4]], i0: i32x8, i1: i32x8) -> [i32x8; 4] {
    let gather = ferropipe_components::simd::fast_gathers();
    // SAFETY: the caller's contract (AVX2).
    unsafe { fetch_pairs_by(words, i0, i1, gather) }
}

/// [`fetch_pairs_avx2`] by gathers or by scalar loads (the same texels).
///
/// # Safety
/// The CPU has AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn fetch_pairs_by(words: &[[u8; 4]], i0: i32x8, i1: i32x8, gather: bool) -> [i32x8; 4] {
    use core::arch::x86_64::{
        __m256, __m256i, _mm256_castsi256_si128, _mm256_extracti128_si256, _mm256_i32gather_epi64,
        _mm256_permutevar8x32_epi32, _mm256_setr_epi32, _mm256_setr_epi64x, _mm256_shuffle_ps,
    };
    // the last index whose 8 bytes are inside `words`
    let max = u32x8::splat((words.len().min(i32::MAX as usize) - 2) as u32);
    let p = words.as_ptr().cast::<u8>();
    if gather {
        let row = |i: i32x8| -> (i32x8, i32x8) {
            let i: u32x8 = bytemuck::cast(i);
            let i: __m256i = bytemuck::cast(i.min(max));
            // SAFETY: every lane of `i` is at most `words.len() - 2` and
            // below 2^31 (the `min` above), so each 8-byte element the
            // gathers read at `words + 4 * i` is two whole `[u8; 4]` of
            // `words`; gathers have no alignment requirement.  AVX2 is
            // the caller's contract; the permute and shuffles only move
            // register lanes.
            unsafe {
                // lanes 0, 1, 4, 5 and 2, 3, 6, 7, as the scalar loads below
                let i = _mm256_permutevar8x32_epi32(i, _mm256_setr_epi32(0, 1, 4, 5, 2, 3, 6, 7));
                let q = p.cast::<i64>();
                let lo = _mm256_i32gather_epi64::<4>(q, _mm256_castsi256_si128(i));
                let hi = _mm256_i32gather_epi64::<4>(q, _mm256_extracti128_si256::<1>(i));
                let (lo, hi): (__m256, __m256) = (bytemuck::cast(lo), bytemuck::cast(hi));
                (
                    bytemuck::cast(_mm256_shuffle_ps::<0b10_00_10_00>(lo, hi)),
                    bytemuck::cast(_mm256_shuffle_ps::<0b11_01_11_01>(lo, hi)),
                )
            }
        };
        let (tl, tr) = row(i0);
        let (bl, br) = row(i1);
        return [tl, tr, bl, br];
    }
    let row = |i: i32x8| -> (i32x8, i32x8) {
        let i: u32x8 = bytemuck::cast(i);
        let i = i.min(max).to_array();
        // SAFETY: every lane of `i` is at most `words.len() - 2` (the
        // `min` above), so each 8-byte read at `words + 4 * i` covers two
        // whole `[u8; 4]` of `words`; unaligned reads have no alignment
        // requirement.  AVX2 is enabled (cfg), so the intrinsics exist;
        // the shuffles only move register lanes.
        unsafe {
            let q = |k: usize| std::ptr::read_unaligned(p.add(4 * i[k] as usize).cast::<i64>());
            // Lanes 0, 1, 4, 5 and 2, 3, 6, 7: one in-lane shuffle per
            // texel then restores the lane order.
            let lo = _mm256_setr_epi64x(q(0), q(1), q(4), q(5));
            let hi = _mm256_setr_epi64x(q(2), q(3), q(6), q(7));
            let (lo, hi): (__m256, __m256) = (bytemuck::cast(lo), bytemuck::cast(hi));
            (
                bytemuck::cast(_mm256_shuffle_ps::<0b10_00_10_00>(lo, hi)),
                bytemuck::cast(_mm256_shuffle_ps::<0b11_01_11_01>(lo, hi)),
            )
        }
    };
    let (tl, tr) = row(i0);
    let (bl, br) = row(i1);
    [tl, tr, bl, br]
}

/// [`bilinear_k`] in AVX2 instructions, the same operations
/// lane for lane (so the same bits): `wide`'s 8-lane types are two SSE2
/// halves in a baseline x86-64 build even inside an AVX2 clone, and SSE2
/// has no 32-bit `min`/`max`/multiply or blend, so the same kernel took
/// 41 % more instructions there (postprocess 1.32x slower than the v3
/// build).  Needs `words.len() >= 2`.
///
/// Not a `#[target_feature]` function: those cannot be
/// `#[inline(always)]`, and LLVM left this one out of line in the AVX2
/// clone (a call per level and group, 10-20 % slower).  Inlined, its
/// intrinsics become the clone's own instructions.
///
/// # Safety
/// The CPU has AVX2.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn bilinear_avx2<const RS: bool, const RT: bool>(
    words: &[[u8; 4]],
    lv: &LaneLevels,
    cx: f32x8,
    cy: f32x8,
) -> Option<(u16x16, u16x16)> {
    // SAFETY: the caller's contract (AVX2, `words.len() >= 2`).
    unsafe {
        let taps = bilinear_taps_avx2::<RS, RT>(lv, cx, cy)?;
        Some(bilinear_fetch_avx2::<RS>(words, &taps))
    }
}

/// The texel addresses and weights of one 8-lane bilinear lookup: the
/// first half of [`bilinear_avx2`], which depends on the level layout and
/// the coordinates but not on the texels, so lookups of views with the
/// same layout at the same coordinates share it ([`QuadSampler::fusable`]).
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
struct BilinearTaps {
    /// The pair fetch (one 8-byte load per row and lane): `i` is the left
    /// texel's index in rows 0 and 1 and the lanes whose left texel is the
    /// right one (CLAMP_TO_EDGE at the right edge); otherwise the four
    /// texels' indices (rows 0 and 1, columns 0 and 1).
    pairs: bool,
    i: [core::arch::x86_64::__m256i; 4],
    wx: core::arch::x86_64::__m256i,
    wy: core::arch::x86_64::__m256i,
}

/// [`BilinearTaps`] of a lookup, or `None` where [`bilinear_avx2`] gives
/// up (coordinates beyond i32 after scaling, or NaN).
///
/// # Safety
/// The CPU has AVX2.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn bilinear_taps_avx2<const RS: bool, const RT: bool>(
    lv: &LaneLevels,
    cx: f32x8,
    cy: f32x8,
) -> Option<BilinearTaps> {
    use avx2_lanes::*;
    use core::arch::x86_64::*;
    // No closures here or in the helpers: a closure is its own function,
    // compiled without the clone's features, and in a baseline build LLVM
    // left them out of line with every intrinsic a call (13x slower).
    // SAFETY: the caller's contract (AVX2) makes the intrinsics and the
    // helpers callable; they compute on register lanes only.
    unsafe {
        let one = _mm256_set1_epi32(1);
        let zero = _mm256_setzero_si256();
        let (width, height) = (m(lv.width), m(lv.height));
        let (iy, wy) = scaled(cy, height)?;
        let last_y = _mm256_sub_epi32(height, one);
        let (y0, y1) = if RT {
            repeat_pair(iy, last_y)
        } else {
            clamp_pair(iy, last_y)
        };
        let (base, stride) = (m(lv.base), m(lv.row_stride));
        let r0 = _mm256_add_epi32(base, _mm256_mullo_epi32(y0, stride));
        let r1 = _mm256_add_epi32(base, _mm256_mullo_epi32(y1, stride));
        let (i0, wx) = scaled(cx, width)?;
        let last = _mm256_sub_epi32(width, one);
        // The pair fetch (see `bilinear_k`): (left texel, weight, lanes
        // whose left texel is the right one).
        let pair = if RS {
            let x0 = _mm256_and_si256(i0, last);
            all(_mm256_cmpgt_epi32(last, x0)).then_some((x0, wx, zero))
        } else if all(_mm256_cmpgt_epi32(last, zero)) {
            let p = _mm256_min_epi32(_mm256_max_epi32(i0, zero), _mm256_sub_epi32(last, one));
            let right = _mm256_xor_si256(_mm256_cmpgt_epi32(last, i0), _mm256_set1_epi32(-1));
            let edge = _mm256_or_si256(_mm256_cmpgt_epi32(zero, i0), right);
            Some((p, _mm256_blendv_epi8(wx, zero, edge), right))
        } else {
            None
        };
        if let Some((p, w, right)) = pair {
            return Some(BilinearTaps {
                pairs: true,
                i: [
                    _mm256_add_epi32(r0, p),
                    _mm256_add_epi32(r1, p),
                    right,
                    zero,
                ],
                wx: w,
                wy,
            });
        }
        let (x0, x1) = if RS {
            repeat_pair(i0, last)
        } else {
            clamp_pair(i0, last)
        };
        Some(BilinearTaps {
            pairs: false,
            i: [
                _mm256_add_epi32(r0, x0),
                _mm256_add_epi32(r0, x1),
                _mm256_add_epi32(r1, x0),
                _mm256_add_epi32(r1, x1),
            ],
            wx,
            wy,
        })
    }
}

/// The second half of [`bilinear_avx2`]: the texels of `taps` in
/// `words`, filtered.  Every load is guarded by `words`' own length.
///
/// # Safety
/// The CPU has AVX2, and `words.len() >= 2`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn bilinear_fetch_avx2<const RS: bool>(
    words: &[[u8; 4]],
    taps: &BilinearTaps,
) -> (u16x16, u16x16) {
    use avx2_lanes::*;
    use core::arch::x86_64::*;
    // SAFETY: the caller's contract (AVX2) makes the intrinsics and the
    // helpers callable; the loads' contracts are stated where they are
    // called.
    unsafe {
        let [a, b, c, d] = taps.i;
        if taps.pairs {
            // (`words.len() >= 2`: the caller's contract.)
            let mut t = fetch_pairs_avx2(words, v(a), v(b));
            if !RS {
                t[0] = v(_mm256_blendv_epi8(m(t[0]), m(t[1]), c));
                t[2] = v(_mm256_blendv_epi8(m(t[2]), m(t[3]), c));
            }
            return filter_pairs_avx2(t, taps.wx, taps.wy);
        }
        // `fetch_words`' guard: every index at most the last word.
        let max = _mm256_set1_epi32((words.len() - 1).min(i32::MAX as usize) as i32);
        let zero = _mm256_setzero_si256();
        let t = [
            gather_clamped(words, a, zero, max),
            gather_clamped(words, b, zero, max),
            gather_clamped(words, c, zero, max),
            gather_clamped(words, d, zero, max),
        ];
        filter_pairs_avx2(t, taps.wx, taps.wy)
    }
}

/// `gather_words(words, min(row + x, max))`: the unsigned `min` with the
/// last word's index keeps every lane inside `words` (and below 2^31),
/// which is `gather_words`' contract.
///
/// # Safety
/// The CPU has AVX2; `max` is at most `words.len() - 1` and below 2^31.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn gather_clamped(
    words: &[[u8; 4]],
    row: core::arch::x86_64::__m256i,
    x: core::arch::x86_64::__m256i,
    max: core::arch::x86_64::__m256i,
) -> i32x8 {
    use core::arch::x86_64::*;
    // SAFETY: the caller's contract: AVX2, and `max` bounds the indices.
    unsafe {
        let i = _mm256_min_epu32(_mm256_add_epi32(row, x), max);
        gather_words(words, bytemuck::cast(i))
    }
}

/// [`filter_pairs`] in AVX2 instructions (the same operations); the
/// weights are 8-bit values per 32-bit lane.
///
/// # Safety
/// The CPU has AVX2.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn filter_pairs_avx2(
    t: [i32x8; 4],
    wx: core::arch::x86_64::__m256i,
    wy: core::arch::x86_64::__m256i,
) -> (u16x16, u16x16) {
    use avx2_lanes::*;
    use core::arch::x86_64::*;
    // SAFETY: the caller's contract (AVX2) makes the intrinsics callable;
    // they compute on register lanes only.
    unsafe {
        let pairs = _mm256_set1_epi32(0x00ff_00ff);
        let (wx, wy) = (both16_avx2(wx), both16_avx2(wy));
        let (t0, t1, t2, t3) = (m(t[0]), m(t[1]), m(t[2]), m(t[3]));
        let even = lerp16(
            lerp16(_mm256_and_si256(t0, pairs), _mm256_and_si256(t1, pairs), wx),
            lerp16(_mm256_and_si256(t2, pairs), _mm256_and_si256(t3, pairs), wx),
            wy,
        );
        let (t0, t1) = (_mm256_srai_epi32::<8>(t0), _mm256_srai_epi32::<8>(t1));
        let (t2, t3) = (_mm256_srai_epi32::<8>(t2), _mm256_srai_epi32::<8>(t3));
        let odd = lerp16(
            lerp16(_mm256_and_si256(t0, pairs), _mm256_and_si256(t1, pairs), wx),
            lerp16(_mm256_and_si256(t2, pairs), _mm256_and_si256(t3, pairs), wx),
            wy,
        );
        (bytemuck::cast(even), bytemuck::cast(odd))
    }
}

/// The AVX2 kernels' lane steps, each the `wide` expression it replaces.
/// `#[inline(always)]` functions, not `#[target_feature]` ones (which
/// cannot be) or closures (which keep their own, featureless bodies): they
/// become the calling clone's instructions.  Every function needs AVX2.
#[cfg(target_arch = "x86_64")]
mod avx2_lanes {
    #[cfg(not(target_feature = "avx2"))]
    use super::u16x16;
    use super::{f32x8, i32x8};
    use core::arch::x86_64::*;

    /// The register of `v`.
    #[inline(always)]
    pub(super) fn m(v: i32x8) -> __m256i {
        bytemuck::cast(v)
    }

    /// The lanes of `v`.
    #[inline(always)]
    pub(super) fn v(r: __m256i) -> i32x8 {
        bytemuck::cast(r)
    }

    /// Whether every 32-bit lane of the mask `r` is set.
    ///
    /// # Safety
    /// The CPU has AVX2.
    #[inline(always)]
    pub(super) unsafe fn all(r: __m256i) -> bool {
        // SAFETY: the caller's contract (AVX).
        unsafe { _mm256_movemask_ps(_mm256_castsi256_ps(r)) == 0xff }
    }

    /// `scaled_8x8`: the texel left of the sample point (`u >> 8`) and its
    /// 8-bit weight, or `None` beyond i32 or NaN (an ordered compare is
    /// false for NaN).
    ///
    /// # Safety
    /// The CPU has AVX2.
    #[inline(always)]
    pub(super) unsafe fn scaled(c: f32x8, len: __m256i) -> Option<(__m256i, __m256i)> {
        // SAFETY: the caller's contract (AVX2).
        unsafe {
            let f = _mm256_cvtepi32_ps(_mm256_slli_epi32::<8>(len));
            let s = _mm256_mul_ps(bytemuck::cast(c), f);
            let abs = _mm256_and_ps(s, _mm256_castsi256_ps(_mm256_set1_epi32(0x7fff_ffff)));
            let ok = _mm256_cmp_ps::<_CMP_LT_OQ>(abs, _mm256_set1_ps(2147483520.0));
            if _mm256_movemask_ps(ok) != 0xff {
                return None;
            }
            let u = _mm256_sub_epi32(_mm256_cvtps_epi32(s), _mm256_set1_epi32(128));
            Some((
                _mm256_srai_epi32::<8>(u),
                _mm256_and_si256(u, _mm256_set1_epi32(255)),
            ))
        }
    }

    /// REPEAT on a power-of-two size: `(i & last, (i + 1) & last)`.
    ///
    /// # Safety
    /// The CPU has AVX2.
    #[inline(always)]
    pub(super) unsafe fn repeat_pair(i: __m256i, last: __m256i) -> (__m256i, __m256i) {
        // SAFETY: the caller's contract (AVX2).
        unsafe {
            let i0 = _mm256_and_si256(i, last);
            let i1 = _mm256_and_si256(_mm256_add_epi32(i0, _mm256_set1_epi32(1)), last);
            (i0, i1)
        }
    }

    /// CLAMP_TO_EDGE: `c0 = clamp(i, 0, last)`, and `c0 + 1` where `i` is
    /// inside `0..last`, else `c0`.
    ///
    /// # Safety
    /// The CPU has AVX2.
    #[inline(always)]
    pub(super) unsafe fn clamp_pair(i: __m256i, last: __m256i) -> (__m256i, __m256i) {
        // SAFETY: the caller's contract (AVX2).
        unsafe {
            let inside = _mm256_and_si256(
                _mm256_cmpgt_epi32(i, _mm256_set1_epi32(-1)),
                _mm256_cmpgt_epi32(last, i),
            );
            let c0 = _mm256_min_epi32(_mm256_max_epi32(i, _mm256_setzero_si256()), last);
            let c1 = _mm256_blendv_epi8(c0, _mm256_add_epi32(c0, _mm256_set1_epi32(1)), inside);
            (c0, c1)
        }
    }

    /// `both16`: an 8-bit weight per 32-bit lane in both 16-bit halves,
    /// times 128.
    ///
    /// # Safety
    /// The CPU has AVX2.
    #[inline(always)]
    pub(super) unsafe fn both16_avx2(w: __m256i) -> __m256i {
        // SAFETY: the caller's contract (AVX2).
        unsafe { _mm256_slli_epi32::<7>(_mm256_or_si256(w, _mm256_slli_epi32::<16>(w))) }
    }

    /// [`super::channels_f32`]: the filtered channel pairs as floats,
    /// stored byte `k` in channel `k`, `v / 255`.
    ///
    /// # Safety
    /// The CPU has AVX2.
    #[cfg(not(target_feature = "avx2"))]
    #[inline(always)]
    pub(super) unsafe fn channels_f32(even: u16x16, odd: u16x16) -> [f32x8; 4] {
        // SAFETY: the caller's contract (AVX2).
        unsafe {
            let (even, odd): (__m256i, __m256i) = (bytemuck::cast(even), bytemuck::cast(odd));
            let lo = _mm256_set1_epi32(0xffff);
            let scale = _mm256_set1_ps(1.0 / 255.0);
            let (a, b) = (_mm256_and_si256(even, lo), _mm256_and_si256(odd, lo));
            let (c, d) = (_mm256_srai_epi32::<16>(even), _mm256_srai_epi32::<16>(odd));
            [
                bytemuck::cast(_mm256_mul_ps(_mm256_cvtepi32_ps(a), scale)),
                bytemuck::cast(_mm256_mul_ps(_mm256_cvtepi32_ps(b), scale)),
                bytemuck::cast(_mm256_mul_ps(_mm256_cvtepi32_ps(c), scale)),
                bytemuck::cast(_mm256_mul_ps(_mm256_cvtepi32_ps(d), scale)),
            ]
        }
    }

    /// [`super::rho2_quads`]: the same differences, products, sums and
    /// `f32::max` NaN rule (`wide`'s `max`: a NaN second operand gives the
    /// first), with in-lane permutes.
    ///
    /// # Safety
    /// The CPU has AVX2.
    #[inline(always)]
    pub(super) unsafe fn rho2_quads(c0: f32x8, c1: f32x8, size: [f32; 2]) -> f32x8 {
        // SAFETY: the caller's contract (AVX).
        unsafe {
            /// `[a1, a2, a1, a2] - [a0, a0, a0, a0]` in each quad's half
            /// (a function, not a closure: see the module's note).
            #[inline(always)]
            unsafe fn diffs(c: __m256) -> __m256 {
                // SAFETY: the caller's contract (AVX).
                unsafe { _mm256_sub_ps(_mm256_permute_ps::<0x99>(c), _mm256_permute_ps::<0x00>(c)) }
            }
            let ds = _mm256_mul_ps(diffs(bytemuck::cast(c0)), _mm256_set1_ps(size[0]));
            let dt = _mm256_mul_ps(diffs(bytemuck::cast(c1)), _mm256_set1_ps(size[1]));
            let sum = _mm256_add_ps(_mm256_mul_ps(ds, ds), _mm256_mul_ps(dt, dt));
            let swapped = _mm256_permute_ps::<0xb1>(sum);
            let nan = _mm256_cmp_ps::<_CMP_UNORD_Q>(swapped, swapped);
            let m = _mm256_blendv_ps(_mm256_max_ps(sum, swapped), sum, nan);
            bytemuck::cast(_mm256_permute_ps::<0x00>(m))
        }
    }

    /// [`super::linear_lods`], operation for operation.
    ///
    /// # Safety
    /// The CPU has AVX2.
    #[inline(always)]
    pub(super) unsafe fn linear_lods(
        rho2: f32x8,
        first: i32,
        last: i32,
    ) -> Option<(i32x8, i32x8, i32x8)> {
        // SAFETY: the caller's contract (AVX2).
        unsafe {
            let bits: __m256i = bytemuck::cast(rho2);
            let e = _mm256_sub_epi32(
                _mm256_and_si256(_mm256_srai_epi32::<23>(bits), _mm256_set1_epi32(0xff)),
                _mm256_set1_epi32(127),
            );
            let m = _mm256_castsi256_ps(_mm256_or_si256(
                _mm256_and_si256(bits, _mm256_set1_epi32(0x007f_ffff)),
                _mm256_set1_epi32(127 << 23),
            ));
            let one = _mm256_set1_ps(1.0);
            let lod = _mm256_mul_ps(
                _mm256_set1_ps(0.5),
                _mm256_add_ps(_mm256_cvtepi32_ps(e), _mm256_sub_ps(m, one)),
            );
            if _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_EQ_OQ>(lod, lod)) != 0xff {
                return None;
            }
            let ip = _mm256_floor_ps(lod);
            let fpart = _mm256_sub_ps(lod, ip);
            let l0 = _mm256_add_epi32(_mm256_set1_epi32(first), _mm256_cvtps_epi32(ip));
            let (first, last) = (_mm256_set1_epi32(first), _mm256_set1_epi32(last));
            let below = _mm256_cmpgt_epi32(first, l0);
            let above = _mm256_xor_si256(_mm256_cmpgt_epi32(last, l0), _mm256_set1_epi32(-1));
            let single = _mm256_or_si256(below, above);
            let level0 = _mm256_blendv_epi8(_mm256_blendv_epi8(l0, last, above), first, below);
            let level1 =
                _mm256_blendv_epi8(_mm256_add_epi32(l0, _mm256_set1_epi32(1)), level0, single);
            let clamped = _mm256_min_ps(_mm256_max_ps(fpart, _mm256_setzero_ps()), one);
            let w = _mm256_cvttps_epi32(_mm256_mul_ps(clamped, _mm256_set1_ps(256.0)));
            let w = _mm256_min_epi32(
                _mm256_max_epi32(w, _mm256_setzero_si256()),
                _mm256_set1_epi32(255),
            );
            let w = _mm256_blendv_epi8(w, _mm256_setzero_si256(), single);
            Some((v(level0), v(level1), v(w)))
        }
    }

    /// `lerp8x16`: `a + mulhrs(b - a, w)` per 16-bit lane.
    ///
    /// # Safety
    /// The CPU has AVX2.
    #[inline(always)]
    pub(super) unsafe fn lerp16(a: __m256i, b: __m256i, w: __m256i) -> __m256i {
        // SAFETY: the caller's contract (AVX2).
        unsafe { _mm256_add_epi16(a, _mm256_mulhrs_epi16(_mm256_sub_epi16(b, a), w)) }
    }
}

/// [`LodParams::choose`] for mip filter LINEAR without bias or LOD clamps
/// (`fast`), on both quads' `rho^2` at once: `lod = 0.5 * fast_log2(rho2)`,
/// level `first + floor(lod)` and the next one blended by the fraction's
/// 8-bit weight; below `first` or at `last` and beyond a single level
/// (weight 0).  The same operations in the same order as the scalar
/// code; `None` when a lane's LOD is NaN (the scalar casts differ there).
#[inline(always)]
fn linear_lods(rho2: f32x8, first: i32, last: i32) -> Option<(i32x8, i32x8, i32x8)> {
    let bits: i32x8 = bytemuck::cast(rho2);
    let e = ((bits >> 23_i32) & i32x8::splat(0xff)) - i32x8::splat(127);
    let m: f32x8 = bytemuck::cast((bits & i32x8::splat(0x007f_ffff)) | i32x8::splat(127 << 23));
    let lod = f32x8::splat(0.5) * (e.round_float() + (m - f32x8::ONE));
    if !lod.simd_eq(lod).all() {
        return None;
    }
    let ip = lod.floor();
    let fpart = lod - ip;
    // |lod| <= 65: the conversion is exact
    let l0 = i32x8::splat(first) + ip.fast_round_int();
    let (first, last) = (i32x8::splat(first), i32x8::splat(last));
    let below = l0.simd_lt(first);
    let above = !l0.simd_lt(last);
    let single = below | above;
    let level0 = below.select(first, above.select(last, l0));
    let level1 = single.select(level0, l0 + i32x8::ONE);
    let w = (fpart.max(f32x8::ZERO).min(f32x8::ONE) * f32x8::splat(256.0))
        .fast_trunc_int()
        .max(i32x8::ZERO)
        .min(i32x8::splat(255));
    Some((level0, level1, single.select(i32x8::ZERO, w)))
}

/// [`rho2_quads`] at a SIMD level: with the token, in-lane permutes where
/// `wide`'s form moves the lanes through memory (`to_array`, `new`), which
/// a baseline build does on SSE halves (pbr_barrels' sampler ran 14 %
/// more instructions there).
#[inline(always)]
fn rho2_quads_at(v3: Option<X86V3>, coord: &[Lanes; 3], size: [f32; 2]) -> f32x8 {
    #[cfg(target_arch = "x86_64")]
    if v3.is_some() {
        // SAFETY: an `X86V3` token exists only on a CPU with AVX2.
        return unsafe { avx2_lanes::rho2_quads(coord[0], coord[1], size) };
    }
    let _ = v3;
    rho2_quads(coord, size)
}

/// [`linear_lods`] at a SIMD level (in a baseline build, `wide`'s
/// `floor` without SSE4.1 is a software rounding on each half).
#[inline(always)]
fn linear_lods_at(
    v3: Option<X86V3>,
    rho2: f32x8,
    first: i32,
    last: i32,
) -> Option<(i32x8, i32x8, i32x8)> {
    #[cfg(target_arch = "x86_64")]
    if v3.is_some() {
        // SAFETY: an `X86V3` token exists only on a CPU with AVX2.
        return unsafe { avx2_lanes::linear_lods(rho2, first, last) };
    }
    let _ = v3;
    linear_lods(rho2, first, last)
}

/// Lanes 0-3 `a`, lanes 4-7 `b` (one value per quad).
#[inline(always)]
fn halves(a: i32, b: i32) -> i32x8 {
    i32x8::new([a, a, a, a, b, b, b, b])
}

/// An 8-bit weight (0..=255) per 32-bit lane in both 16-bit halves, as
/// [`lerp8x16`] takes it: times 128 (at most 32640, so it fits `i16`).
#[inline(always)]
fn both16(w: i32x8) -> u16x16 {
    bytemuck::cast((w | (w << 16_i32)) << 7_i32)
}

/// Squared `rho` of each quad in all its lanes, for a 2D view: exactly
/// [`Texture::rho2_implicit`] (the same differences, products and sums in
/// the same order, and `f32::max`'s NaN rule), but both quads at once in
/// SIMD lanes instead of per quad through an array.
///
/// Each 128-bit half is one quad (top-left, top-right, bottom-left,
/// bottom-right): the in-half shuffles build `[dx, dy, dx, dy]` per axis.
#[inline(always)]
fn rho2_quads(coord: &[Lanes; 3], size: [f32; 2]) -> f32x8 {
    let diffs = |c: f32x8| {
        let a = c.to_array();
        let next = f32x8::new([a[1], a[2], a[1], a[2], a[5], a[6], a[5], a[6]]);
        let tl = f32x8::new([a[0], a[0], a[0], a[0], a[4], a[4], a[4], a[4]]);
        next - tl
    };
    let ds = diffs(coord[0]) * f32x8::splat(size[0]);
    let dt = diffs(coord[1]) * f32x8::splat(size[1]);
    // [sx, sy, sx, sy] per quad
    let sum = ds * ds + dt * dt;
    let a = sum.to_array();
    let swapped = f32x8::new([a[1], a[0], a[3], a[2], a[5], a[4], a[7], a[6]]);
    // f32x8::max is f32::max lane for lane, NaN included: lane 0 of each
    // quad is max(sx, sy)
    let m = sum.max(swapped).to_array();
    f32x8::new([m[0], m[0], m[0], m[0], m[4], m[4], m[4], m[4]])
}

/// [`LodParams::choose`]'s `lp_build_ilog2_sqrt` branch on all lanes: the
/// level `clamp(first + ((exponent(rho2) + 1) >> 1), first, last)` and the
/// bitmask of minified lanes (`rho2 > 1`).
#[inline(always)]
fn ilog2_levels(rho2: f32x8, first: i32, last: i32) -> (i32x8, u32) {
    let bits: i32x8 = bytemuck::cast(rho2);
    let e = ((bits >> 23_i32) & i32x8::splat(0xff)) - i32x8::splat(127);
    let ipart = (e + i32x8::ONE) >> 1_i32;
    let level = (i32x8::splat(first) + ipart)
        .max(i32x8::splat(first))
        .min(i32x8::splat(last));
    (level, rho2.simd_gt(f32x8::ONE).to_bitmask())
}

/// [`wrap_linear_8`] on 8 lanes for REPEAT on a power-of-two size and
/// CLAMP_TO_EDGE, normalized coordinates, no offset: texel indices and
/// 8-bit weight.  `None` when a scaled coordinate is outside i32 or NaN
/// (the scalar cast saturates where the SIMD conversion does not).
#[inline(always)]
fn wrap_linear_8x8(c: f32x8, len: i32x8, wrap: TexWrap) -> Option<(i32x8, i32x8, i32x8)> {
    let scaled = c * (len * i32x8::splat(256)).round_float();
    let limit = f32x8::splat(2147483520.0);
    if !(scaled.abs().simd_lt(limit)).all() {
        return None;
    }
    // In range and not NaN (checked above): the plain conversion, round to
    // nearest even like the scalar `round_ties_even`, without round_int's
    // NaN / overflow fix-ups (4 instructions per axis).
    let u = scaled.fast_round_int() - i32x8::splat(128);
    let i0: i32x8 = u >> 8_i32;
    let w = u & i32x8::splat(255);
    let last = len - i32x8::ONE;
    Some(if wrap == TexWrap::Repeat {
        let i0 = i0 & last;
        (i0, (i0 + i32x8::ONE) & last, w)
    } else {
        let inside = i0.simd_gt(i32x8::splat(-1)) & i0.simd_lt(last);
        let c0 = i0.max(i32x8::ZERO).min(last);
        (c0, inside.select(c0 + i32x8::ONE, c0), w)
    })
}

/// The bilinear blend of four texels per lane (top-left, top-right,
/// bottom-left, bottom-right) in 8.8 fixed point, two channels per 32-bit
/// lane as 16-bit halves: bytes 0 and 2 ("even") and bytes 1 and 3
/// ("odd") of every texel, so each lerp filters two channels at once
/// (llvmpipe's AoS 8-bit trick).
#[inline(always)]
fn filter_pairs(v3: Option<X86V3>, t: [i32x8; 4], wx: i32x8, wy: i32x8) -> (u16x16, u16x16) {
    let pairs = i32x8::splat(0x00ff_00ff);
    let even = |v: i32x8| -> u16x16 { bytemuck::cast(v & pairs) };
    let odd = |v: i32x8| -> u16x16 { bytemuck::cast((v >> 8_i32) & pairs) };
    let (wx, wy) = (both16(wx), both16(wy));
    let filter = |c: [u16x16; 4]| -> u16x16 {
        let top = lerp8x16(v3, c[0], c[1], wx);
        let bottom = lerp8x16(v3, c[2], c[3], wx);
        lerp8x16(v3, top, bottom, wy)
    };
    (
        filter([even(t[0]), even(t[1]), even(t[2]), even(t[3])]),
        filter([odd(t[0]), odd(t[1]), odd(t[2]), odd(t[3])]),
    )
}

/// Whether a level can take the SIMD bilinear path: not empty, and a
/// power-of-two size on REPEAT axes (the wrap is a mask).
/// The widest and tallest level the RGBA8 kernels (and the JIT's inlined
/// lookups, which repeat them) read: their scale `sitofp(len << 8)` is
/// exact only while `len << 8` fits an `i32` (`len < 2^23`), and the
/// generated interior test relies on a coordinate beyond `i32`, whose
/// texel index becomes 0x7f_ffff, being past every level's last texel.
/// 2^16 keeps both with room to spare; the engine caps textures at 16384
/// (`PIPE_CAP_MAX_TEXTURE_2D_SIZE`), and larger levels (a standalone
/// embedder's) take the general path, which guards every texel.
const MAX_KERNEL_LEVEL: usize = 1 << 16;

fn level_fits_simd(lv: &LevelLayout, s: &SamplerState) -> bool {
    let ok = |len: u32, w: TexWrap| len != 0 && (w != TexWrap::Repeat || len.is_power_of_two());
    ok(lv.width, s.wrap_s) && ok(lv.height, s.wrap_t)
}

/// Per-lane level layout for the SIMD bilinear path.
#[derive(Clone, Copy)]
struct LaneLevels {
    width: i32x8,
    height: i32x8,
    row_stride: i32x8,
    base: i32x8,
}

/// Per-lane level choice.
#[derive(Clone, Copy, Debug)]
struct LevelChoice {
    level0: u32,
    level1: u32,
    weight: f32,
    filter: TexFilter,
}

impl LevelChoice {
    fn single(level: u32, filter: TexFilter) -> Self {
        LevelChoice {
            level0: level,
            level1: level,
            weight: 0.0,
            filter,
        }
    }
}

/// `floor(log2(x))` and the mantissa in [1, 2) from the float's bits
/// (llvmpipe's `extract_exponent` / `extract_mantissa`).
#[inline]
fn exponent_mantissa(x: f32) -> (i32, f32) {
    let b = x.to_bits();
    let e = ((b >> 23) & 0xff) as i32 - 127;
    let m = f32::from_bits((b & 0x007f_ffff) | (127 << 23));
    (e, m)
}

/// llvmpipe's `lp_build_fast_log2`: exponent + mantissa - 1.
#[inline]
fn fast_log2(x: f32) -> f32 {
    let (e, m) = exponent_mantissa(x);
    e as f32 + (m - 1.0)
}

/// Integer and fractional LOD for the mip filter: floor / fraction for
/// LINEAR (no "brilinear"), round to nearest even otherwise.
fn split_lod(lod: f32, mip: TexMipFilter) -> (i32, f32) {
    match mip {
        TexMipFilter::Linear => {
            let ip = lod.floor();
            (ip as i32, lod - ip)
        }
        _ => (lod.round_ties_even() as i32, 0.0),
    }
}

/// llvmpipe's 8-bit lerp (`pmulhrsw`-based): `a + round((b - a) * w / 256)`
/// with `w` in 0..=255.
#[inline]
fn lerp8(a: i32, b: i32, w: i32) -> i32 {
    a + ((w * (b - a) + 128) >> 8)
}

/// [`lerp8`] on 16 lanes of 16 bits with `w128 = 128 w` ([`both16`]):
/// `a + pmulhrsw(b - a, 128 w)`.  `pmulhrsw` is `(x y + 2^14) >> 15`, so
/// with `y = 128 w` it is `(w (b - a) + 128) >> 8` (arithmetic shift) for
/// `b - a` in -255..=255 and `w` in 0..=255: [`lerp8`] bit for bit, in
/// three instructions instead of six (llvmpipe's `lp_build_lerp` uses
/// the same instruction for 8.8 weights).
#[inline(always)]
fn lerp8x16(v3: Option<X86V3>, a: u16x16, b: u16x16, w128: u16x16) -> u16x16 {
    #[cfg(target_arch = "x86_64")]
    if v3.is_some() {
        // SAFETY: an `X86V3` token exists only on a CPU with AVX2 and FMA.
        return unsafe { lerp8x16_avx2(a, b, w128) };
    }
    let (a, b, w): (i16x16, i16x16, i16x16) =
        (bytemuck::cast(a), bytemuck::cast(b), bytemuck::cast(w128));
    bytemuck::cast(a + (b - a).mul_scale_round(w))
}

/// [`lerp8x16`] in three AVX2 instructions (`vpsubw`, `vpmulhrsw`,
/// `vpaddw`): `wide` built for baseline x86-64 emulates `mul_scale_round`
/// on 128-bit halves with unpacks and 32-bit multiplies, which made the
/// bilinear kernel 2.3x slower in a baseline build even inside the v3
/// clone.
///
/// # Safety
/// The CPU has AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn lerp8x16_avx2(a: u16x16, b: u16x16, w128: u16x16) -> u16x16 {
    use core::arch::x86_64::{__m256i, _mm256_add_epi16, _mm256_mulhrs_epi16, _mm256_sub_epi16};
    let (a, b, w): (__m256i, __m256i, __m256i) =
        (bytemuck::cast(a), bytemuck::cast(b), bytemuck::cast(w128));
    bytemuck::cast(_mm256_add_epi16(
        a,
        _mm256_mulhrs_epi16(_mm256_sub_epi16(b, a), w),
    ))
}

/// [`lerp8`] on 8 lanes.
#[inline]
fn lerp8x8(a: i32x8, b: i32x8, w: i32x8) -> i32x8 {
    a + ((w * (b - a) + i32x8::splat(128)) >> 8_i32)
}

/// Texel indices and 8-bit weight for llvmpipe's fixed-point linear path
/// (`lp_build_sample_image_linear` + `lp_build_sample_wrap_linear_int`):
/// coordinates rounded to 1/256 texel.  REPEAT and CLAMP_TO_EDGE only.
fn wrap_linear_8(
    coord: f32,
    len: i32,
    offset: i32,
    wrap: TexWrap,
    normalized: bool,
) -> (i32, i32, i32) {
    let lenf = len as f32;
    let pot = len & (len - 1) == 0;
    let scaled = if normalized {
        coord * (len * 256) as f32
    } else {
        coord * 256.0
    };
    let u = (scaled.round_ties_even() as i32).wrapping_sub(128);
    let mut i0 = (u >> 8).wrapping_add(offset);
    let mut w = u & 255;
    match wrap {
        TexWrap::Repeat if pot => {
            i0 &= len - 1;
            (i0, if i0 != len - 1 { i0 + 1 } else { 0 }, w)
        }
        TexWrap::Repeat => {
            let cf = coord + offset as f32 / lenf;
            let f = cf - cf.floor();
            let u = (((f * lenf) * 256.0).round_ties_even() as i32) - 128;
            w = u & 255;
            i0 = u >> 8;
            if i0 < 0 {
                i0 = len - 1;
            }
            i0 = i0.min(len - 1);
            (i0, if i0 != len - 1 { i0 + 1 } else { 0 }, w)
        }
        _ => {
            let inside = i0 >= 0 && i0 < len - 1;
            let c0 = i0.clamp(0, len - 1);
            (c0, if inside { c0 + 1 } else { c0 }, w)
        }
    }
}

/// Whether a wrap mode can read the border colour (llvmpipe:
/// `lp_sampler_wrap_mode_uses_border_color`).
fn wrap_uses_border(w: TexWrap, any_linear: bool) -> bool {
    match w {
        TexWrap::ClampToBorder | TexWrap::MirrorClampToBorder => true,
        TexWrap::Clamp | TexWrap::MirrorClamp => any_linear,
        _ => false,
    }
}

/// `2 * (x/2 - round(x/2))`, then `|.|` (llvmpipe's `lp_build_coord_mirror`).
#[inline]
fn mirror(x: f32) -> f32 {
    let h = x * 0.5;
    let f = h - h.round_ties_even();
    (f + f).abs().max(0.0)
}

#[inline]
fn fract_safe(x: f32) -> f32 {
    let f = x - x.floor();
    if f >= 1.0 {
        f32::from_bits(0x3f7f_ffff)
    } else {
        f
    }
}

/// Texel index for nearest filtering (llvmpipe's
/// `lp_build_sample_wrap_nearest`); may be out of range for border modes.
fn wrap_nearest(coord: f32, len: i32, offset: i32, wrap: TexWrap, normalized: bool) -> i32 {
    let lenf = len as f32;
    let pot = len & (len - 1) == 0;
    let scaled = |c: f32| if normalized { c * lenf } else { c };
    let itrunc = |x: f32| x as i32;
    let ifloor = |x: f32| x.floor() as i32;
    match wrap {
        TexWrap::Repeat => {
            if pot {
                (ifloor(scaled(coord)).wrapping_add(offset)) & (len - 1)
            } else {
                let c = coord + offset as f32 / lenf;
                itrunc(fract_safe(c) * lenf).min(len - 1)
            }
        }
        TexWrap::Clamp | TexWrap::ClampToEdge => {
            itrunc(scaled(coord) + offset as f32).clamp(0, len - 1)
        }
        TexWrap::ClampToBorder => ifloor(scaled(coord)).wrapping_add(offset),
        TexWrap::MirrorRepeat => {
            let c = coord + offset as f32 / lenf;
            itrunc(mirror(c) * lenf).min(len - 1)
        }
        TexWrap::MirrorClamp | TexWrap::MirrorClampToEdge => {
            let c = (scaled(coord) + offset as f32).abs();
            (itrunc(c) as u32).min(len as u32 - 1) as i32
        }
        TexWrap::MirrorClampToBorder => itrunc((scaled(coord) + offset as f32).abs()),
    }
}

/// Texel indices and weight for linear filtering (llvmpipe's
/// `lp_build_sample_wrap_linear`); may be out of range for border modes.
fn wrap_linear(
    coord: f32,
    len: i32,
    offset: i32,
    wrap: TexWrap,
    normalized: bool,
) -> (i32, i32, f32) {
    let lenf = len as f32;
    let pot = len & (len - 1) == 0;
    let scaled = |c: f32| if normalized { c * lenf } else { c };
    let floor_fract = |x: f32| {
        let f = x.floor();
        (f as i32, x - f)
    };
    match wrap {
        TexWrap::Repeat => {
            if pot {
                let (i0, w) = floor_fract(scaled(coord) - 0.5 + offset as f32);
                (i0 & (len - 1), i0.wrapping_add(1) & (len - 1), w)
            } else {
                let c = coord + offset as f32 / lenf;
                let u = (c - c.floor()) * lenf - 0.5;
                let (mut i0, w) = floor_fract(u);
                if u < 0.0 {
                    i0 = len - 1;
                }
                let i1 = if i0 != len - 1 { i0 + 1 } else { 0 };
                (i0, i1, w)
            }
        }
        TexWrap::Clamp => {
            let u = (scaled(coord) + offset as f32).clamp(0.0, lenf) - 0.5;
            let (i0, w) = floor_fract(u);
            (i0, i0 + 1, w)
        }
        TexWrap::ClampToEdge => {
            let u = ((scaled(coord) + offset as f32).min(lenf) - 0.5).max(0.0);
            let (i0, w) = floor_fract(u);
            (i0, (i0 + 1).min(len - 1), w)
        }
        TexWrap::ClampToBorder => {
            let (i0, w) = floor_fract(scaled(coord) + offset as f32 - 0.5);
            (i0, i0.wrapping_add(1), w)
        }
        TexWrap::MirrorRepeat => {
            let c = coord + offset as f32 / lenf;
            let u = mirror(c) * lenf - 0.5;
            let (i0, w) = floor_fract(u);
            (i0.max(0), (i0 + 1).min(len - 1), w)
        }
        TexWrap::MirrorClamp => {
            let u = (scaled(coord) + offset as f32).abs().min(lenf) - 0.5;
            let (i0, w) = floor_fract(u);
            (i0, i0 + 1, w)
        }
        TexWrap::MirrorClampToEdge => {
            let u = ((scaled(coord) + offset as f32).abs().min(lenf) - 0.5).max(0.0);
            let (i0, w) = floor_fract(u);
            (i0, (i0 + 1).min(len - 1), w)
        }
        TexWrap::MirrorClampToBorder => {
            let u = (scaled(coord) + offset as f32).abs() - 0.5;
            let (i0, w) = floor_fract(u);
            (i0, i0.wrapping_add(1), w)
        }
    }
}

/// Cube face (0..6 = +X, -X, +Y, -Y, +Z, -Z) and face coordinates in
/// [0, 1] of a direction (GL's major-axis table).  The sign of each minor
/// coordinate follows the table; ties between axes go to z, then y.
fn cube_face(d: [f32; 3]) -> (u32, [f32; 2]) {
    let [x, y, z] = d;
    let (ax, ay, az) = (x.abs(), y.abs(), z.abs());
    // ties: z over y over x (llvmpipe's `lp_build_cube_lookup`, D3D's rule)
    let (face, sc, tc, ma) = if az >= ax.max(ay) {
        if z >= 0.0 {
            (4, x, -y, az)
        } else {
            (5, -x, -y, az)
        }
    } else if ax > ay {
        if x >= 0.0 {
            (0, -z, -y, ax)
        } else {
            (1, z, -y, ax)
        }
    } else if y >= 0.0 {
        (2, x, z, ay)
    } else {
        (3, x, -z, ay)
    };
    let inv = if ma > 0.0 { 0.5 / ma } else { 0.0 };
    (face, [sc * inv + 0.5, tc * inv + 0.5])
}

/// Squared `rho` of a cube lookup at direction `d` whose direction
/// derivatives are `dx`, `dy` (llvmpipe's derivative transform in
/// `lp_build_cube_lookup`, operations in its order), on faces of `size`
/// texels; 0 for inf / NaN.
fn cube_rho2(size: f32, d: [f32; 3], dx: [f32; 3], dy: [f32; 3]) -> f32 {
    let [x, y, z] = d;
    let (ax, ay, az) = (x.abs(), y.abs(), z.abs());
    // major axis (ties: z over y over x, as cube_face) and, per face,
    // which component and sign gives sc and tc
    type Pick = fn(f32, [f32; 3]) -> f32;
    let (m, ma, sc, tc): (usize, f32, Pick, Pick) = if az >= ax.max(ay) {
        (2, z, |sg, v| sg * v[0], |_, v| -v[1])
    } else if ax > ay {
        (0, x, |sg, v| sg * -v[2], |_, v| -v[1])
    } else {
        (1, y, |_, v| v[0], |sg, v| sg * v[2])
    };
    let sg = if ma.is_sign_negative() { -1.0 } else { 1.0 };
    let ima = 1.0 / ma;
    let imahalf = 0.5 * ima;
    let (fs, ft) = (sc(sg, d), tc(sg, d));
    let proj = |g: [f32; 3]| {
        let madiv = g[m] * ima;
        let ds = (sc(sg, g) - madiv * fs) * imahalf * size;
        let dt = (tc(sg, g) - madiv * ft) * imahalf * size;
        ds * ds + dt * dt
    };
    let r = proj(dx).max(proj(dy));
    if r.is_finite() { r } else { 0.0 }
}

/// Decodes one pixel to RGBA floats (format swizzle applied, missing
/// channels 0 / alpha 1), with fast paths for the common 8-bit and float
/// formats; everything else goes through `ferropipe_components::pack`.
#[inline]
pub fn decode_f32(format: Format, px: &[u8]) -> [f32; 4] {
    const K: f32 = 1.0 / 255.0;
    match format {
        Format::R8G8B8A8_UNORM if px.len() >= 4 => [
            px[0] as f32 * K,
            px[1] as f32 * K,
            px[2] as f32 * K,
            px[3] as f32 * K,
        ],
        Format::B8G8R8A8_UNORM if px.len() >= 4 => [
            px[2] as f32 * K,
            px[1] as f32 * K,
            px[0] as f32 * K,
            px[3] as f32 * K,
        ],
        Format::R8_UNORM if !px.is_empty() => [px[0] as f32 * K, 0.0, 0.0, 1.0],
        // `pack.rs`'s decode (exact table; alpha `a / 255`), without its
        // per-call codec setup.
        Format::R8G8B8A8_SRGB | Format::B8G8R8A8_SRGB if px.len() >= 4 => {
            let t = pack::srgb8_to_linear();
            let (r, b) = if format == Format::R8G8B8A8_SRGB {
                (px[0], px[2])
            } else {
                (px[2], px[0])
            };
            [
                t[r as usize],
                t[px[1] as usize],
                t[b as usize],
                px[3] as f32 / 255.0,
            ]
        }
        Format::R32G32B32A32_FLOAT if px.len() >= 16 => std::array::from_fn(|i| {
            f32::from_le_bytes([px[4 * i], px[4 * i + 1], px[4 * i + 2], px[4 * i + 3]])
        }),
        _ => {
            let d = format.desc();
            if d.kind == FormatKind::Color || d.has_depth() {
                pack::unpack_rgba_f32(format, px)
            } else {
                // stencil-only views read the stencil value in R
                let s = pack::unpack_s(format, px) as f32;
                [s, 0.0, 0.0, 1.0]
            }
        }
    }
}

// ----------------------------------------------------------------------
// the lane-program ops

/// [`QuadSampler::chunk`] compiled per SIMD level (ARCHITECTURE.md, "SIMD
/// levels"): the bilinear kernels are 62 % of `postprocess`, and built for
/// baseline x86-64 they ran 3.1x slower.
#[multiversion(
    targets("x86_64+avx2+fma+bmi1+bmi2+lzcnt+popcnt+f16c+movbe"),
    attrs(allow(dead_code))
)]
fn chunk_simd<const RS: bool, const RT: bool, const LOD: u8>(
    q: &QuadSampler<'_>,
    file: &mut [Lanes],
    regs: &ChunkRegs,
    fallback: &mut Fallback<'_>,
) {
    // SAFETY: the expression is true only in the x86-64-v3 clone (run
    // where the CPU has those features) or in a build that requires them.
    let v3 = unsafe {
        X86V3::in_clone(multiversion::target::target_cfg_f!(all(
            target_feature = "avx2",
            target_feature = "fma"
        )))
    };
    q.chunk_body::<RS, RT, LOD>(file, regs, fallback, v3)
}

/// [`QuadSampler::run_chunk_n`]'s loop compiled per SIMD level, as
/// [`chunk_simd`].
#[multiversion(
    targets("x86_64+avx2+fma+bmi1+bmi2+lzcnt+popcnt+f16c+movbe"),
    attrs(allow(dead_code))
)]
fn chunk_n_simd<const RS: bool, const RT: bool, const LOD: u8, const N: usize>(
    quads: &[&QuadSampler<'_>; N],
    file: &mut [Lanes],
    regs: &[ChunkRegs; N],
    fallback: &mut FallbackN<'_>,
) {
    // SAFETY: the expression is true only in the x86-64-v3 clone (run
    // where the CPU has those features) or in a build that requires them.
    let v3 = unsafe {
        X86V3::in_clone(multiversion::target::target_cfg_f!(all(
            target_feature = "avx2",
            target_feature = "fma"
        )))
    };
    QuadSampler::chunk_n_body::<RS, RT, LOD, N>(quads, file, regs, fallback, v3)
}

/// [`QuadSampler::chunk_other`] compiled per SIMD level.
#[multiversion(
    targets("x86_64+avx2+fma+bmi1+bmi2+lzcnt+popcnt+f16c+movbe"),
    attrs(allow(dead_code))
)]
fn chunk_other_simd(
    q: &QuadSampler<'_>,
    file: &mut [Lanes],
    regs: &ChunkRegs,
    fallback: &mut Fallback<'_>,
) {
    q.chunk_other_body(file, regs, fallback)
}

/// Runs a texture access for every group of a chunk.
pub fn exec_texture<'r>(
    t: &TexOp,
    file: &mut [Lanes],
    nu: usize,
    groups: usize,
    res: &ShaderResources<'r>,
    cache: &mut SamplerCache<'r>,
) {
    // Implicit-LOD sampling of a plain 2D lookup: decide the fast path once.
    let plain = plain_sample(t);
    if let Some(e) = cache.entry(res, t.view, t.sampler, plain) {
        let quad = if plain { e.quad.as_ref() } else { None };
        return run_texture(t, file, nu, groups, e.tex.as_ref(), e.sampler, quad);
    }
    let tex = Texture::bound(res, t.view);
    let sampler = bound_sampler(res, t.sampler);
    let quad = match (&tex, plain) {
        (Some(tex), true) => tex.quad_sampler(sampler),
        _ => None,
    };
    run_texture(t, file, nu, groups, tex.as_ref(), sampler, quad.as_ref())
}

/// Implicit-LOD sampling without layer, depth reference, edge clamp or
/// offset: what a [`QuadSampler`] may take.
fn plain_sample(t: &TexOp) -> bool {
    t.func == TexFn::SampleAuto
        && t.layer.is_none()
        && t.depth_ref.is_none()
        && !t.clamp_to_edge
        && t.offset == [0, 0, 0]
}

/// Most texture ops [`exec_texture_group`] runs in one chunk loop.
pub const MAX_FUSED: usize = 3;

/// How many ops opening `ops` [`exec_texture_group`] may run in one chunk
/// loop: up to [`MAX_FUSED`] adjacent plain ([`plain_sample`]) texture ops
/// of one function and dimension that read the same coordinate registers,
/// where no result any of them writes is one of those registers and no
/// two write the same register.  Then running them group by group gives
/// what running them op after op gives: each group's coordinates are read
/// before any result is written, and every result has one writer.  0 when
/// `ops` does not open with a texture op.
pub fn fusable_ops(ops: &[Op]) -> usize {
    let (Some(Op::Texture(t0)), Some(Op::Texture(_))) = (ops.first(), ops.get(1)) else {
        // (the usual case, first: a lookup followed by arithmetic)
        return usize::from(matches!(ops.first(), Some(Op::Texture(_))));
    };
    let coords = &t0.coord[..t0.coord_count().min(3)];
    let mut written: SmallVec<[Reg; 4 * MAX_FUSED]> = SmallVec::new();
    let mut n = 0;
    for op in ops.iter().take(MAX_FUSED) {
        let Op::Texture(t) = op else {
            break;
        };
        if !plain_sample(t)
            || (t.func, t.dim, t.arrayed, t.kind) != (t0.func, t0.dim, t0.arrayed, t0.kind)
            || t.coord[..t.coord_count().min(3)] != *coords
        {
            break;
        }
        let live = t.live & ((1u8 << t.result_count()) - 1);
        let dsts = (0..4).filter(|k| live & (1 << k) != 0).map(|k| t.dst[k]);
        if dsts
            .clone()
            .any(|d| coords.contains(&d) || written.contains(&d))
        {
            break;
        }
        written.extend(dsts);
        n += 1;
    }
    n.max(1)
}

/// Runs `ts` ([`fusable_ops`]) for every group of a chunk.  Where every op
/// has a sampling plan and the plans share their addressing
/// ([`QuadSampler::fusable`]), one chunk loop computes each group's level
/// choice, texel addresses and weights once and fetches and filters per
/// view ([`QuadSampler::run_chunk_n`]); otherwise the ops run one by one
/// ([`exec_texture`]).  The results are the same bits either way.
pub fn exec_texture_group<'r>(
    ts: &[&TexOp],
    file: &mut [Lanes],
    nu: usize,
    groups: usize,
    res: &ShaderResources<'r>,
    cache: &mut SamplerCache<'r>,
) {
    match ts {
        [a, b] => run_group(&[*a, *b], file, nu, groups, res, cache),
        [a, b, c] => run_group(&[*a, *b, *c], file, nu, groups, res, cache),
        _ => {
            for t in ts {
                exec_texture(t, file, nu, groups, res, cache);
            }
        }
    }
}

/// [`exec_texture_group`] for `N` ops: their views, samplers and plans
/// resolved, then the fused loop or, where the plans do not allow it, the
/// ops one by one.
fn run_group<'r, const N: usize>(
    ts: &[&TexOp; N],
    file: &mut [Lanes],
    nu: usize,
    groups: usize,
    res: &ShaderResources<'r>,
    cache: &mut SamplerCache<'r>,
) {
    // Each op's view, sampler and plan: the cache's, or at a pair's first
    // lookup in the call (the cache keeps pairs from their second on) made
    // here, as `exec_texture` makes them.  A fragment call is often one
    // chunk, so most lookups are first ones.
    let mut at: [Option<usize>; N] = [None; N];
    let mut own_tex: [Option<Texture<'r>>; N] = std::array::from_fn(|_| None);
    for k in 0..N {
        let t = ts[k];
        at[k] = cache.index(res, t.view, t.sampler, true);
        if at[k].is_none() {
            own_tex[k] = Texture::bound(res, t.view);
        }
    }
    let own_quad: [Option<QuadSampler<'r>>; N] = std::array::from_fn(|k| match at[k] {
        Some(_) => None,
        None => own_tex[k]
            .as_ref()
            .and_then(|tex| tex.quad_sampler(bound_sampler(res, ts[k].sampler))),
    });
    let mut tex: [Option<&Texture<'r>>; N] = [None; N];
    let mut sampler: [Option<&SamplerState>; N] = [None; N];
    let mut quads: [Option<&QuadSampler<'_>>; N] = [None; N];
    for k in 0..N {
        match at[k] {
            Some(i) => {
                let e = &cache.entries[i];
                (tex[k], sampler[k], quads[k]) = (e.tex.as_ref(), e.sampler, e.quad.as_ref());
            }
            None => {
                tex[k] = own_tex[k].as_ref();
                sampler[k] = bound_sampler(res, ts[k].sampler);
                quads[k] = own_quad[k].as_ref();
            }
        }
    }
    let fused = quads[0].filter(|lead| quads.iter().all(|q| q.is_some_and(|q| lead.fusable(q))));
    let Some(lead) = fused else {
        for k in 0..N {
            run_texture(ts[k], file, nu, groups, tex[k], sampler[k], quads[k]);
        }
        return;
    };
    let quads = quads.map(|q| q.unwrap_or(lead));
    let regs: [ChunkRegs; N] = std::array::from_fn(|k| ChunkRegs::new(ts[k], nu, groups));
    let mut fallback = |k: usize, file: &[Lanes], g: usize, coord: [Lanes; 3]| {
        sample_group(ts[k], file, nu, groups, g, coord, tex[k], sampler[k], None)
    };
    QuadSampler::run_chunk_n(&quads, file, &regs, &mut fallback);
}

/// [`exec_texture`] with the view, sampler and fast path resolved.
fn run_texture(
    t: &TexOp,
    file: &mut [Lanes],
    nu: usize,
    groups: usize,
    tex: Option<&Texture<'_>>,
    sampler: Option<&SamplerState>,
    quad: Option<&QuadSampler<'_>>,
) {
    // Register locations once per op and chunk, not per group (the fast
    // path is a handful of instructions per lane; per-group loc() lookups
    // were a visible part of exec_texture in textured_mesh).
    let regs = ChunkRegs::new(t, nu, groups);
    if let Some(q) = quad {
        // The plan's kernel runs the whole chunk (one dispatch per op and
        // chunk); the groups it leaves take the general path.
        let mut fallback = |file: &[Lanes], g: usize, coord: [Lanes; 3]| {
            sample_group(t, file, nu, groups, g, coord, tex, sampler, None)
        };
        q.run_chunk(file, &regs, &mut fallback);
        return;
    }
    assert!(
        regs.fits(file.len()),
        "texture operands outside the register file"
    );
    // The general SIMD path's per-state decisions, once per op and chunk.
    let lod = match t.func {
        TexFn::SampleAuto => Some(Lod::Implicit),
        TexFn::SampleBias => Some(Lod::Bias(f32x8::ZERO)),
        TexFn::SampleLevel => Some(Lod::Level(f32x8::ZERO)),
        TexFn::SampleGrad => Some(Lod::Grad([f32x8::ZERO; 3], [f32x8::ZERO; 3])),
        _ => None,
    };
    let s = sampler.unwrap_or_else(|| default_sampler());
    let plan = tex.zip(lod).and_then(|(x, lod)| x.soa_plan(s, lod));
    if let (Some(p), Some(x)) = (&plan, tex)
        && !t.clamp_to_edge
    {
        let ops = soa::PlanOperands {
            layer: t.layer.map(|r| loc(r, nu, groups)),
            depth_ref: t.depth_ref.map(|r| loc(r, nu, groups)),
            offset: t.offset,
        };
        if x.run_planned_chunk(p, s, file, &regs, &ops) {
            return;
        }
    }
    for g in 0..groups {
        // SAFETY: `regs.fits(file.len())` is asserted above, and
        // `g < groups`.
        let coord = unsafe { regs.read(file, g) };
        let r = sample_group(t, file, nu, groups, g, coord, tex, sampler, plan.as_ref());
        unsafe { regs.store(file, g, r) };
    }
}

/// The sampler state bound at slot `slot` (`None`: unbound, the default
/// sampler applies).
fn bound_sampler<'r>(res: &ShaderResources<'r>, slot: u32) -> Option<&'r SamplerState> {
    res.samplers.get(slot as usize).copied().flatten()
}

/// The views, samplers and sampling plans of one call of a program, by
/// (view slot, sampler slot), for the pairs the call reads more than once
/// (several texture ops, or one op over several chunks): made at the
/// second lookup and kept for every later op and chunk of the call, as
/// llvmpipe binds its sampler state once per draw.  Built per op and chunk
/// they were ~1,150 instructions per texture op and chunk of 64 groups
/// (`Texture::new`, `quad_sampler` and its lazily filled level table):
/// 5.5 % of postprocess, whose 15 taps read one pair.
///
/// A pair's first lookup only records it: the plans are 700-byte values,
/// and moving every one into the cache cost pbr_barrels (three ops, three
/// pairs, one chunk per call) 0.5 % more instructions than it saved.  The
/// storage is inline (a heap vector was an aligned allocation per call,
/// `posix_memalign`, ~900 instructions).
#[derive(Default)]
pub struct SamplerCache<'r> {
    /// Pairs looked up once so far.
    seen: SmallVec<[(u32, u32); 8]>,
    entries: SmallVec<[SamplerEntry<'r>; 1]>,
}

/// One (view, sampler) pair of a [`SamplerCache`].
struct SamplerEntry<'r> {
    view: u32,
    sampler_slot: u32,
    tex: Option<Texture<'r>>,
    sampler: Option<&'r SamplerState>,
    /// The planned fast path, made at the first plain lookup (`None` as
    /// well when the pair has none).
    quad: Option<QuadSampler<'r>>,
    quad_made: bool,
}

impl<'r> SamplerCache<'r> {
    /// The pair `(view, sampler)` of `res`, with its fast path made when
    /// `plain` asks for it, or `None` at the pair's first lookup (the
    /// caller resolves it itself).  The resources are the call's: one
    /// cache serves one call (`exec::run_with`), so the bindings cannot
    /// change under it.
    fn entry(
        &mut self,
        res: &ShaderResources<'r>,
        view: u32,
        sampler: u32,
        plain: bool,
    ) -> Option<&SamplerEntry<'r>> {
        let i = self.index(res, view, sampler, plain)?;
        Some(&self.entries[i])
    }

    /// [`Self::entry`]'s index in `entries` (inlined: out of line it was
    /// ~60 instructions a call more on postprocess, 15 lookups a chunk).
    #[inline(always)]
    fn index(
        &mut self,
        res: &ShaderResources<'r>,
        view: u32,
        sampler: u32,
        plain: bool,
    ) -> Option<usize> {
        let key = (view, sampler);
        let i = match self
            .entries
            .iter()
            .position(|e| (e.view, e.sampler_slot) == key)
        {
            Some(i) => i,
            None if !self.seen.contains(&key) => {
                self.seen.push(key);
                return None;
            }
            None => {
                self.entries.push(SamplerEntry {
                    view,
                    sampler_slot: sampler,
                    tex: Texture::bound(res, view),
                    sampler: bound_sampler(res, sampler),
                    quad: None,
                    quad_made: false,
                });
                self.entries.len() - 1
            }
        };
        let e = &mut self.entries[i];
        if plain && !e.quad_made {
            e.quad = e.tex.as_ref().and_then(|t| t.quad_sampler(e.sampler));
            e.quad_made = true;
        }
        Some(i)
    }
}

/// The general path of [`exec_texture`] for group `g`: every texture
/// function, format, filter and addressing mode.  `plan`, made for
/// `t`'s lookups through `tex` and `sampler`, takes the general SIMD
/// path's per-state decisions.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
fn sample_group(
    t: &TexOp,
    file: &[Lanes],
    nu: usize,
    groups: usize,
    g: usize,
    mut coord: [Lanes; 3],
    tex: Option<&Texture<'_>>,
    sampler: Option<&SamplerState>,
    plan: Option<&soa::SoaPlan>,
) -> [Lanes; 4] {
    let n = t.coord_count();
    let get = |r: crate::ir::Reg| {
        let (b, m) = loc(r, nu, groups);
        file[b + (g & m)]
    };
    let layer = t.layer.map(get).unwrap_or(f32x8::ZERO);
    if t.clamp_to_edge
        && let Some(tex) = tex
    {
        // textureSampleBaseClampToEdge: half a texel inside the edges
        let size = tex.size(0);
        for k in 0..n.min(2) {
            let half = 0.5 / size[k].max(1) as f32;
            coord[k] = coord[k]
                .max(f32x8::splat(half))
                .min(f32x8::splat(1.0 - half));
        }
    }
    match tex {
        None => [
            f32x8::ZERO,
            f32x8::ZERO,
            f32x8::ZERO,
            if t.kind == TexKind::Float {
                f32x8::ONE
            } else {
                f32x8::ZERO
            },
        ],
        Some(tex) => match t.func {
            TexFn::Load => {
                let level = t.lod.map(get).unwrap_or(f32x8::ZERO);
                tex.load(coord, layer, level, t.sample.map(get))
            }
            TexFn::Gather => {
                let args = SampleArgs {
                    coord,
                    layer,
                    lod: Lod::Level(f32x8::ZERO),
                    depth_ref: t.depth_ref.map(get),
                    offset: t.offset,
                };
                let r = tex.gather(sampler, &args, t.gather as usize);
                // integer textures gather integer values
                match t.kind {
                    TexKind::Sint => {
                        r.map(|v| from_u(as_u(crate::lanemath::un(crate::ir::UnOp::F2S, v))))
                    }
                    TexKind::Uint => r.map(|v| crate::lanemath::un(crate::ir::UnOp::F2U, v)),
                    _ => r,
                }
            }
            _ => {
                let lod = match t.func {
                    TexFn::SampleAuto => Lod::Implicit,
                    TexFn::SampleBias => Lod::Bias(t.lod.map(get).unwrap_or(f32x8::ZERO)),
                    TexFn::SampleLevel => Lod::Level(t.lod.map(get).unwrap_or(f32x8::ZERO)),
                    _ => {
                        let gr = t.grad.unwrap_or([[t.coord[0]; 3]; 2]);
                        let mut dx = [f32x8::ZERO; 3];
                        let mut dy = [f32x8::ZERO; 3];
                        for k in 0..n {
                            dx[k] = get(gr[0][k]);
                            dy[k] = get(gr[1][k]);
                        }
                        Lod::Grad(dx, dy)
                    }
                };
                let args = SampleArgs {
                    coord,
                    layer,
                    lod,
                    depth_ref: t.depth_ref.map(get),
                    offset: t.offset,
                };
                match plan {
                    Some(p) => {
                        tex.sample_planned(p, sampler.unwrap_or_else(|| default_sampler()), &args)
                    }
                    None => tex.sample(sampler, &args),
                }
            }
        },
    }
}

/// Runs a texture query (results are u32).
pub fn exec_query(
    q: &TexQuery,
    file: &mut [Lanes],
    nu: usize,
    groups: usize,
    res: &ShaderResources<'_>,
) {
    let tex = Texture::bound(res, q.view);
    for g in 0..groups {
        let level = q.level.map(|r| {
            let (b, m) = loc(r, nu, groups);
            as_u(file[b + (g & m)]).to_array()
        });
        let mut out = [[0u32; LANES]; 3];
        if let Some(tex) = &tex {
            for l in 0..LANES {
                match q.func {
                    TexQueryFn::Size => {
                        let lv = level.map_or(0, |v| v[l]);
                        // out-of-range levels: zero size (WGSL leaves it open)
                        let size = if lv < tex.num_levels() {
                            tex.size(lv)
                        } else {
                            [0; 3]
                        };
                        let n = q.result_count();
                        let size = match (q.dim, tex.arrayed()) {
                            (TexDim::Cube, _) => [size[0], size[1], 0],
                            (TexDim::D1, _) => [size[0], 0, 0],
                            (TexDim::D2, _) => [size[0], size[1], 0],
                            (TexDim::D3, _) => size,
                        };
                        for k in 0..n {
                            out[k][l] = size[k];
                        }
                    }
                    TexQueryFn::NumLevels => out[0][l] = tex.num_levels(),
                    TexQueryFn::NumLayers => out[0][l] = tex.num_layers(),
                    TexQueryFn::NumSamples => out[0][l] = 1,
                }
            }
        }
        for (k, d) in q.dst[..q.result_count()].iter().enumerate() {
            let (b, m) = loc(*d, nu, groups);
            file[b + (g & m)] = from_u(u32x8::new(out[k]));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Texel pairs by gathers and by scalar loads are the same texels,
    /// for indices inside the words and clamped ones past them.
    #[test]
    fn pair_fetches_agree() {
        if X86V3::detect().is_none() {
            return;
        }
        let mut next = xorshift(0x9a7e_5e75);
        let words: Vec<[u8; 4]> = (0..77).map(|_| next().to_le_bytes()).collect();
        for _ in 0..500 {
            let mut idx = || i32x8::new(std::array::from_fn(|_| (next() % 90) as i32 - 5));
            let (i0, i1) = (idx(), idx());
            // SAFETY: the CPU has AVX2 (`detect` above).
            let (a, b) = unsafe {
                (
                    fetch_pairs_by(&words, i0, i1, true),
                    fetch_pairs_by(&words, i0, i1, false),
                )
            };
            assert_eq!(a.map(|v| v.to_array()), b.map(|v| v.to_array()));
        }
    }

    /// The AVX2 forms of the chunk kernels' leaves give the portable
    /// forms' bits, whatever this build's target features (the clone a
    /// CPU runs is chosen at run time, so both must be right).
    #[test]
    fn simd_levels_agree() {
        let Some(v3) = X86V3::detect() else {
            return;
        };
        let mut x = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let words: Vec<[u8; 4]> = (0..97).map(|_| (next() as u32).to_le_bytes()).collect();
        for _ in 0..2000 {
            let byte16 = |r: u64| -> u16x16 {
                u16x16::new(std::array::from_fn(|k| ((r >> (k * 4)) & 0xff) as u16))
            };
            let (a, b) = (byte16(next()), byte16(next()));
            let w = both16(i32x8::new(std::array::from_fn(|_| (next() % 256) as i32)));
            assert_eq!(
                lerp8x16(None, a, b, w).to_array(),
                lerp8x16(Some(v3), a, b, w).to_array()
            );
            let i = i32x8::new(std::array::from_fn(|_| (next() % 200) as i32 - 50));
            assert_eq!(
                fetch_words(None, &words, i).to_array(),
                fetch_words(Some(v3), &words, i).to_array()
            );
            // LOD selection on coordinates of every scale, NaN and
            // infinities included.
            let coord = |r: u64| -> Lanes {
                Lanes::new(std::array::from_fn(|k| match (r >> (k * 8)) & 0x3f {
                    0 => f32::NAN,
                    1 => f32::INFINITY,
                    2 => -0.0,
                    x => (x as f32 - 31.0) * f32::from_bits(0x3000_0000 + (r as u32 % 0x0c00_0000)),
                }))
            };
            let cs = [coord(next()), coord(next()), Lanes::ZERO];
            let size = [(next() % 4096) as f32 + 1.0, (next() % 4096) as f32 + 1.0];
            let (r_p, r_a) = (rho2_quads(&cs, size), rho2_quads_at(Some(v3), &cs, size));
            assert_eq!(
                bytemuck::cast::<_, [u32; 8]>(r_p),
                bytemuck::cast::<_, [u32; 8]>(r_a)
            );
            let (first, last) = ((next() % 4) as i32, (next() % 13) as i32);
            let lods = |l: Option<(i32x8, i32x8, i32x8)>| {
                l.map(|(a, b, c)| (a.to_array(), b.to_array(), c.to_array()))
            };
            assert_eq!(
                lods(linear_lods(r_p, first, last)),
                lods(linear_lods_at(Some(v3), r_p, first, last))
            );
            let i1 = i32x8::new(std::array::from_fn(|_| (next() % 96) as i32));
            let pairs = fetch_pairs(v3, &words, i1, i1);
            let one = i32x8::ONE;
            assert_eq!(
                pairs[0].to_array(),
                fetch_words(None, &words, i1).to_array()
            );
            assert_eq!(
                pairs[1].to_array(),
                fetch_words(None, &words, i1 + one).to_array()
            );
        }
    }
    use ferropipe_components::enums::Func;
    use ferropipe_components::resource::{ResourceLayout, ResourceTemplate};
    use ferropipe_components::view::SamplerViewDesc;

    struct Owned {
        layout: ResourceLayout,
        view: SamplerViewDesc,
        data: Vec<u8>,
        format: Format,
    }

    impl Owned {
        fn new(templ: ResourceTemplate, data: Vec<u8>) -> Self {
            let layout = ResourceLayout::new(&templ).unwrap();
            let mut d = vec![0; layout.size];
            d[..data.len()].copy_from_slice(&data);
            Owned {
                view: SamplerViewDesc::of_resource(&templ),
                layout,
                data: d,
                format: templ.format,
            }
        }
        fn tex(&self) -> Texture<'_> {
            Texture::new(&BoundTexture {
                view: &self.view,
                layout: &self.layout,
                resource_format: self.format,
                data: &self.data,
            })
            .unwrap()
        }
    }

    fn lanes(v: [f32; 8]) -> Lanes {
        f32x8::new(v)
    }

    /// The call's cache keeps a (view, sampler) pair from its second
    /// lookup on, each pair apart, and makes the fast path only once a
    /// plain lookup asks for it (and never for a pair that has none).
    #[test]
    fn the_sampler_cache_keeps_pairs_read_twice() {
        let a = rgba8(8, 8, |x, y| [x as u8, y as u8, 0, 255]);
        let b = rgba8(4, 4, |x, _| [0, x as u8, 0, 255]);
        fn bound(o: &Owned) -> Option<BoundTexture<'_>> {
            Some(BoundTexture {
                view: &o.view,
                layout: &o.layout,
                resource_format: o.format,
                data: &o.data,
            })
        }
        let views = [bound(&a), bound(&b)];
        let linear = SamplerState {
            min_img_filter: TexFilter::Linear,
            mag_img_filter: TexFilter::Linear,
            ..Default::default()
        };
        let aniso = SamplerState {
            max_anisotropy: 4,
            ..linear
        };
        let samplers = [Some(&linear), Some(&aniso)];
        let res = ShaderResources {
            textures: &views,
            samplers: &samplers,
            ..Default::default()
        };
        let mut c = SamplerCache::default();
        // first lookups only record their pair
        assert!(c.entry(&res, 0, 0, false).is_none());
        assert!(c.entry(&res, 1, 0, true).is_none());
        assert!(c.entry(&res, 0, 1, true).is_none());
        // a second non-plain lookup caches the pair without a fast path
        let e = c.entry(&res, 0, 0, false).expect("cached");
        assert!(e.quad.is_none() && !e.quad_made);
        assert_eq!(e.tex.as_ref().map(|t| t.size(0)), Some([8, 8, 1]));
        // a plain one then makes it, once
        let e = c.entry(&res, 0, 0, true).expect("cached");
        assert!(e.quad_made && e.quad.is_some());
        let e = c.entry(&res, 1, 0, true).expect("cached");
        assert_eq!(e.tex.as_ref().map(|t| t.size(0)), Some([4, 4, 1]));
        assert!(e.quad.is_some());
        // anisotropic sampling has no fast path: made, and empty
        let e = c.entry(&res, 0, 1, true).expect("cached");
        assert!(e.quad_made && e.quad.is_none());
        assert!(std::ptr::eq(e.sampler.unwrap(), &aniso));
        // an unbound view is cached as unbound
        assert!(c.entry(&res, 5, 0, true).is_none());
        let e = c.entry(&res, 5, 0, true).expect("cached");
        assert!(e.tex.is_none() && e.quad.is_none());
        assert_eq!(c.entries.len(), 4);
    }

    /// Lookups run as one fused loop ([`exec_texture_group`]) give the
    /// bits of running them one by one: views of one layout with other
    /// texels and another channel order (BGRA8) fused, a view of another
    /// size beside them not, for each kernel kind, at coordinates that
    /// also send groups to the general path, at a pair's first lookup and
    /// from the call's cache.
    #[test]
    fn fused_lookups_match_one_by_one() {
        use crate::ir::{Reg, TexOp};
        let mut rng = 0x5eed_1234u32;
        let mut next = move || {
            rng ^= rng << 13;
            rng ^= rng >> 17;
            rng ^= rng << 5;
            rng
        };
        let mip = |format: Format, w: u32, next: &mut dyn FnMut() -> u32| {
            let mut templ = ResourceTemplate::texture_2d(format, w, w, Default::default());
            templ.last_level = w.ilog2();
            let size = ResourceLayout::new(&templ).unwrap().size;
            Owned::new(templ, (0..size).map(|_| next() as u8).collect())
        };
        let owned = [
            mip(Format::R8G8B8A8_UNORM, 16, &mut next),
            mip(Format::R8G8B8A8_UNORM, 16, &mut next),
            mip(Format::B8G8R8A8_UNORM, 16, &mut next),
            mip(Format::R8G8B8A8_UNORM, 8, &mut next),
        ];
        let views: Vec<Option<BoundTexture<'_>>> = owned
            .iter()
            .map(|o| {
                Some(BoundTexture {
                    view: &o.view,
                    layout: &o.layout,
                    resource_format: o.format,
                    data: &o.data,
                })
            })
            .collect();
        let (groups, nu) = (6usize, 1usize);
        let op = |view: u32, first_dst: u32| TexOp {
            live: if view == 1 { 0b0110 } else { 0xf },
            ..TexOp::sample_2d(view, Reg::v(0), Reg::v(1), first_dst)
        };
        let (rep, clamp) = (TexWrap::Repeat, TexWrap::ClampToEdge);
        let mut fused_kernels = std::collections::HashSet::new();
        for (ws, wt, mip_filter) in [
            (rep, rep, TexMipFilter::Linear),
            (clamp, rep, TexMipFilter::Nearest),
            (rep, clamp, TexMipFilter::None),
            (clamp, clamp, TexMipFilter::Linear),
        ] {
            let s = SamplerState {
                wrap_s: ws,
                wrap_t: wt,
                min_img_filter: TexFilter::Linear,
                mag_img_filter: TexFilter::Linear,
                min_mip_filter: mip_filter,
                ..Default::default()
            };
            let samplers = [Some(&s); 4];
            let res = ShaderResources {
                textures: &views,
                samplers: &samplers,
                ..Default::default()
            };
            let q: Vec<QuadSampler<'_>> = owned
                .iter()
                .map(|o| o.tex().quad_sampler(Some(&s)).expect("a plain view"))
                .collect();
            assert!(q[0].fusable(&q[1]) && q[0].fusable(&q[2]), "{s:?}");
            assert!(!q[0].fusable(&q[3]), "another size");
            fused_kernels.insert(format!("{:?}", q[0].kernel));
            for round in 0..20 {
                let c = |next: &mut dyn FnMut() -> u32| -> f32 {
                    match next() % 40 {
                        0 => f32::NAN,
                        1 => 3e9,
                        _ => (next() as i32 as f32) / i32::MAX as f32 * 1.5 + 0.5,
                    }
                };
                let mut file = vec![f32x8::ZERO; nu + 14 * groups];
                for g in 0..groups {
                    let (u, v) = (c(&mut next), c(&mut next));
                    let d = (next() % 64) as f32 / 256.0;
                    file[nu + g] = f32x8::new(std::array::from_fn(|l| u + (l % 2) as f32 * d));
                    file[nu + groups + g] =
                        f32x8::new(std::array::from_fn(|l| v + (l / 2 % 2) as f32 * d));
                }
                let ops = [op(0, 2), op(1, 6), op(2, 10)];
                let mut one_by_one = file.clone();
                let mut cache = SamplerCache::default();
                for t in &ops {
                    exec_texture(t, &mut one_by_one, nu, groups, &res, &mut cache);
                }
                // the first lookups, then the cached pairs, then the
                // unfusable view in the group (run one by one)
                let mut cache = SamplerCache::default();
                for pass in 0..3 {
                    let mut fused = file.clone();
                    let ts: Vec<&TexOp> = ops.iter().collect();
                    exec_texture_group(&ts, &mut fused, nu, groups, &res, &mut cache);
                    assert_eq!(
                        fused
                            .iter()
                            .map(|v| v.to_array().map(f32::to_bits))
                            .collect::<Vec<_>>(),
                        one_by_one
                            .iter()
                            .map(|v| v.to_array().map(f32::to_bits))
                            .collect::<Vec<_>>(),
                        "{s:?} round {round} pass {pass}"
                    );
                }
                let odd = [op(0, 2), op(3, 6)];
                let (mut a, mut b) = (file.clone(), file.clone());
                let mut cache = SamplerCache::default();
                exec_texture_group(&[&odd[0], &odd[1]], &mut a, nu, groups, &res, &mut cache);
                let mut cache = SamplerCache::default();
                for t in &odd {
                    exec_texture(t, &mut b, nu, groups, &res, &mut cache);
                }
                assert!(
                    a.iter()
                        .zip(&b)
                        .all(|(x, y)| x.to_array().map(f32::to_bits)
                            == y.to_array().map(f32::to_bits))
                );
            }
        }
        assert_eq!(fused_kernels.len(), 4, "{fused_kernels:?}");
    }

    fn rgba8(w: u32, h: u32, f: impl Fn(u32, u32) -> [u8; 4]) -> Owned {
        let mut data = Vec::new();
        for y in 0..h {
            for x in 0..w {
                data.extend(f(x, y));
            }
        }
        Owned::new(
            ResourceTemplate::texture_2d(Format::R8G8B8A8_UNORM, w, h, Default::default()),
            data,
        )
    }

    fn level_args(u: [f32; 8], v: [f32; 8]) -> SampleArgs {
        SampleArgs {
            lod: Lod::Level(f32x8::ZERO),
            ..SampleArgs::at([lanes(u), lanes(v), f32x8::ZERO])
        }
    }

    /// The SIMD bilinear path gives exactly the scalar path's bits: random
    /// coordinates (inside, outside, negative, on texel centres), REPEAT
    /// and CLAMP_TO_EDGE, one level and a blended pair of levels with
    /// per-lane weights, different levels per lane, RGBA8 and BGRA8 with a
    /// view swizzle.
    #[test]
    fn simd_bilinear_matches_the_scalar_path() {
        let mut rng = 0x9e37_79b9u32;
        let mut next = move || {
            rng ^= rng << 13;
            rng ^= rng >> 17;
            rng ^= rng << 5;
            rng
        };
        for format in [Format::R8G8B8A8_UNORM, Format::B8G8R8A8_UNORM] {
            let mut templ = ResourceTemplate::texture_2d(format, 16, 8, Default::default());
            templ.last_level = 2;
            let layout = ResourceLayout::new(&templ).unwrap();
            let data: Vec<u8> = (0..layout.size).map(|_| next() as u8).collect();
            let mut t = Owned::new(templ, data);
            t.view.swizzle = [Swizzle::Z, Swizzle::X, Swizzle::One, Swizzle::W];
            let tex = t.tex();
            for wrap in [TexWrap::Repeat, TexWrap::ClampToEdge] {
                let s = SamplerState {
                    wrap_s: wrap,
                    wrap_t: wrap,
                    min_img_filter: TexFilter::Linear,
                    mag_img_filter: TexFilter::Linear,
                    ..Default::default()
                };
                for round in 0..200 {
                    let mut coord = || {
                        let r = next();
                        match r % 4 {
                            0 => (r % 64) as f32 / 16.0 + 1.0 / 32.0,
                            _ => (r as i32 as f32) / i32::MAX as f32 * 3.0,
                        }
                    };
                    let coords = [
                        std::array::from_fn(|_| coord()),
                        std::array::from_fn(|_| coord()),
                        [0.0; LANES],
                    ];
                    let (l0, l1) = [(0, 0), (1, 1), (0, 1), (1, 2), (9, 9)][round % 5];
                    let lods: [LevelChoice; LANES] = std::array::from_fn(|l| {
                        // (9, 9): every lane its own levels, as when the two
                        // quads of a group pick different ones.
                        let (l0, l1) = if l0 == 9 {
                            let a = next() % 3;
                            (a, (a + next() % 2).min(2))
                        } else {
                            (l0, l1)
                        };
                        LevelChoice {
                            level0: l0,
                            level1: l1,
                            weight: if l0 == l1 { 0.0 } else { l as f32 / 7.0 },
                            filter: TexFilter::Linear,
                        }
                    });
                    let fast = tex
                        .sample_bilinear_2d_rgba8(&s, &lods, &coords, [0; 3])
                        .expect("the fast path applies");
                    // One choice per quad: the quad path agrees with the
                    // lane path given the same choices.
                    let quads = [lods[0], lods[LANES / 2]];
                    let per_quad: [LevelChoice; LANES] =
                        std::array::from_fn(|l| quads[l / (LANES / 2)]);
                    let q = tex.quad_sampler(Some(&s)).expect("the quad path applies");
                    assert_eq!(
                        q.filter_quads(&quads, f32x8::new(coords[0]), f32x8::new(coords[1]))
                            .expect("the quad path applies")
                            .map(|v| v.to_array().map(f32::to_bits)),
                        tex.sample_bilinear_2d_rgba8(&s, &per_quad, &coords, [0; 3])
                            .unwrap()
                            .map(|v| v.to_array().map(f32::to_bits)),
                    );
                    let slow = tex.sample_aos_scalar(&s, &lods, &coords, &[0; LANES], [0; 3]);
                    for k in 0..4 {
                        assert_eq!(
                            fast[k].to_array().map(f32::to_bits),
                            slow[k].to_array().map(f32::to_bits),
                            "{format:?} {wrap:?} levels {l0}/{l1} channel {k} at {coords:?}"
                        );
                    }
                }
            }
        }
    }

    /// The quad sampler's SIMD level choice equals the scalar
    /// `choose_quads` (derivatives, rho^2, log2, clamps) bit for bit over
    /// random coordinates: tiny to huge derivatives, zero, negative,
    /// infinite and NaN ones, for every LOD mode it has (constant, ilog2,
    /// general) and views starting above level 0.
    #[test]
    fn quad_sampler_lods_match_the_scalar_choice() {
        let mut rng = 0x1234_5678u32;
        let mut next = move || {
            rng ^= rng << 13;
            rng ^= rng >> 17;
            rng ^= rng << 5;
            rng
        };
        let mut templ =
            ResourceTemplate::texture_2d(Format::R8G8B8A8_UNORM, 64, 32, Default::default());
        templ.last_level = 6;
        let layout = ResourceLayout::new(&templ).unwrap();
        let mut t = Owned::new(templ, vec![0; layout.size]);
        let lin = TexFilter::Linear;
        let near = TexFilter::Nearest;
        let mut checked = [0usize; 3];
        for first in [0, 2] {
            t.view.first_level = first;
            t.view.last_level = 5;
            let tex = t.tex();
            for mip in [
                TexMipFilter::None,
                TexMipFilter::Nearest,
                TexMipFilter::Linear,
            ] {
                for (min, mag) in [(lin, lin), (lin, near), (near, lin)] {
                    for (bias, min_lod, max_lod) in [
                        (0.0, 0.0, 1000.0),
                        (0.5, 0.0, 1000.0),
                        (0.0, 1.0, 3.5),
                        (0.0, 2.0, 2.0),
                    ] {
                        let s = SamplerState {
                            min_img_filter: min,
                            mag_img_filter: mag,
                            min_mip_filter: mip,
                            lod_bias: bias,
                            min_lod,
                            max_lod,
                            ..Default::default()
                        };
                        let q = tex.quad_sampler(Some(&s)).expect("a plain 2D RGBA8 view");
                        checked[match q.how {
                            QuadLod::Const(_) => 0,
                            QuadLod::Ilog2 { .. } => 1,
                            QuadLod::General => 2,
                        }] += 1;
                        let args = SampleArgs::at([f32x8::ZERO; 3]);
                        let p = LodParams::new(&tex, &s, &args);
                        for _ in 0..300 {
                            let scale = f32::from_bits(((next() % 60) + 97) << 23); // 2^-30..2^29
                            let mut c = || -> f32 {
                                match next() % 16 {
                                    0 => 0.0,
                                    1 => f32::NAN,
                                    2 => f32::INFINITY,
                                    3 => -1e30,
                                    _ => (next() as i32 as f32 / i32::MAX as f32) * scale,
                                }
                            };
                            let coord = [
                                f32x8::new(std::array::from_fn(|_| c())),
                                f32x8::new(std::array::from_fn(|_| c())),
                                f32x8::ZERO,
                            ];
                            let fast = q.choose(&coord);
                            let slow = tex.choose_quads(&s, &p, &coord);
                            for (a, b) in fast.iter().zip(&slow) {
                                assert_eq!(
                                    (a.level0, a.level1, a.weight.to_bits(), a.filter),
                                    (b.level0, b.level1, b.weight.to_bits(), b.filter),
                                    "{s:?} first {first} at {coord:?}"
                                );
                            }
                            // rho^2 itself (a NaN's sign may differ: SIMD and
                            // scalar NaN generation differ, and no choice
                            // reads it)
                            let bits = |v: f32| if v.is_nan() { 0x7fc0_0000 } else { v.to_bits() };
                            let r = rho2_quads(&coord, q.size).to_array();
                            let rs = tex.rho2_implicit(&s, &coord);
                            assert_eq!(r.map(bits), rs.map(bits));
                        }
                    }
                }
            }
        }
        assert!(
            checked.iter().all(|&n| n > 0),
            "every LOD mode ran: {checked:?}"
        );
    }

    /// Every monomorphised kernel of the sampling plan gives exactly the
    /// scalar 8-bit path's bits (`sample_aos_scalar` at the levels the
    /// scalar `choose_quads` picks): REPEAT and CLAMP_TO_EDGE per axis,
    /// every LOD source (constant, one level or two, ilog2, LINEAR mip
    /// filter with and without bias and clamps), levels down to 1x1 (the
    /// paired fetch needs two columns), power-of-two and other sizes,
    /// views starting above level 0, derivatives from tiny to huge,
    /// coordinates far outside, infinite and NaN.  A group a kernel leaves
    /// to the general path is counted, and most must not be.
    #[test]
    fn kernels_match_the_scalar_path() {
        let mut next = xorshift(0x0bad_cafeu32);
        let (rep, clamp) = (TexWrap::Repeat, TexWrap::ClampToEdge);
        let mut kernels = std::collections::HashSet::new();
        let (mut fast, mut total) = (0usize, 0usize);
        for (w, h, last_level) in [(16, 8, 4), (12, 6, 2), (2, 32, 5)] {
            let mut templ =
                ResourceTemplate::texture_2d(Format::R8G8B8A8_UNORM, w, h, Default::default());
            templ.last_level = last_level;
            let layout = ResourceLayout::new(&templ).unwrap();
            let data: Vec<u8> = (0..layout.size).map(|_| next() as u8).collect();
            let mut t = Owned::new(templ, data);
            for first in [0, 1] {
                t.view.first_level = first;
                let tex = t.tex();
                for (ws, wt) in [(rep, rep), (rep, clamp), (clamp, rep), (clamp, clamp)] {
                    for mip in [
                        TexMipFilter::None,
                        TexMipFilter::Nearest,
                        TexMipFilter::Linear,
                    ] {
                        for (bias, min_lod, max_lod) in [
                            (0.0, 0.0, 1000.0),
                            (0.5, 0.0, 1000.0),
                            (0.0, 1.0, 3.5),
                            (0.0, 1.25, 1.25),
                        ] {
                            let s = SamplerState {
                                wrap_s: ws,
                                wrap_t: wt,
                                min_img_filter: TexFilter::Linear,
                                mag_img_filter: TexFilter::Linear,
                                min_mip_filter: mip,
                                lod_bias: bias,
                                min_lod,
                                max_lod,
                                ..Default::default()
                            };
                            let q = tex.quad_sampler(Some(&s)).expect("a plain 2D RGBA8 view");
                            kernels.insert(format!("{:?}", q.kernel));
                            let args = SampleArgs::at([f32x8::ZERO; 3]);
                            let p = LodParams::new(&tex, &s, &args);
                            for _ in 0..150 {
                                let coord = quad_coords(&mut next);
                                total += 1;
                                let Some(got) = q.planned(&coord) else {
                                    continue;
                                };
                                fast += 1;
                                let quads = tex.choose_quads(&s, &p, &coord);
                                let lods: [LevelChoice; LANES] =
                                    std::array::from_fn(|l| quads[l / (LANES / 2)]);
                                let coords = coord.map(|v| v.to_array());
                                let want =
                                    tex.sample_aos_scalar(&s, &lods, &coords, &[0; LANES], [0; 3]);
                                for k in 0..4 {
                                    assert_eq!(
                                        got[k].to_array().map(f32::to_bits),
                                        want[k].to_array().map(f32::to_bits),
                                        "{w}x{h} first {first} {s:?} channel {k} at {coord:?}"
                                    );
                                }
                            }
                        }
                    }
                }
            }
        }
        // 4 wrap pairs x 4 LOD sources (REPEAT on the 12x6 view leaves
        // every group to the general path: not a power of two)
        let bilinear = kernels.iter().filter(|k| k.starts_with("Bilinear")).count();
        assert_eq!(bilinear, 16, "{kernels:?}");
        assert!(fast * 2 > total, "{fast} of {total} groups took a kernel");
    }

    /// A level wider than [`MAX_KERNEL_LEVEL`] takes the general path:
    /// the kernels' `len << 8` scale and the JIT's interior test hold
    /// only up to it.  Both sides of the bound, a one-row CLAMP_TO_EDGE
    /// view sampled in its middle.
    #[test]
    fn levels_past_the_kernels_bound_take_the_general_path() {
        for (w, kernel) in [
            (MAX_KERNEL_LEVEL as u32, true),
            (MAX_KERNEL_LEVEL as u32 + 1, false),
        ] {
            let templ =
                ResourceTemplate::texture_2d(Format::R8G8B8A8_UNORM, w, 1, Default::default());
            let layout = ResourceLayout::new(&templ).unwrap();
            let t = Owned::new(templ, vec![7; layout.size]);
            let tex = t.tex();
            let s = SamplerState {
                wrap_s: TexWrap::ClampToEdge,
                wrap_t: TexWrap::ClampToEdge,
                min_img_filter: TexFilter::Linear,
                mag_img_filter: TexFilter::Linear,
                ..Default::default()
            };
            let q = tex.quad_sampler(Some(&s)).expect("a plain 2D RGBA8 view");
            let coord = [f32x8::splat(0.5), f32x8::splat(0.5), f32x8::ZERO];
            assert_eq!(q.planned(&coord).is_some(), kernel, "{w} texels wide");
        }
    }

    /// A xorshift32 stream from `seed` (the tests' reproducible noise).
    /// A planned op's chunk loop (`Texture::run_planned_chunk`) gives
    /// `Texture::sample`'s bits group by group: float, half, RGBA8 with
    /// MIRROR_REPEAT / CLAMP_TO_BORDER, a depth view compared against a
    /// reference register, and an array view with a layer register;
    /// uniform and varying operands.
    #[test]
    fn planned_chunks_match_sample() {
        use crate::ir::{Reg, TexOp};
        let mut next = xorshift(0x0c4a_11ed);
        let (groups, nu) = (5usize, 2usize);
        let cases: [(Format, TextureTarget, TexWrap, bool); 6] = [
            (
                Format::R32G32B32A32_FLOAT,
                TextureTarget::Texture2D,
                TexWrap::Repeat,
                false,
            ),
            (
                Format::R16G16B16A16_FLOAT,
                TextureTarget::Texture2D,
                TexWrap::ClampToEdge,
                false,
            ),
            (
                Format::R8G8B8A8_UNORM,
                TextureTarget::Texture2D,
                TexWrap::MirrorRepeat,
                false,
            ),
            (
                Format::B8G8R8A8_UNORM,
                TextureTarget::Texture2D,
                TexWrap::ClampToBorder,
                false,
            ),
            (
                Format::Z32_FLOAT,
                TextureTarget::Texture2D,
                TexWrap::ClampToEdge,
                true,
            ),
            (
                Format::R16G16B16A16_FLOAT,
                TextureTarget::Texture2DArray,
                TexWrap::MirrorClampToEdge,
                false,
            ),
        ];
        let mut ran = 0;
        for (format, target, wrap, depth) in cases {
            let mut templ = ResourceTemplate::texture_2d(format, 11, 6, Default::default());
            templ.target = target;
            templ.array_size = if target == TextureTarget::Texture2DArray {
                3
            } else {
                1
            };
            let size = ResourceLayout::new(&templ).unwrap().size;
            let data: Vec<u8> = if format == Format::Z32_FLOAT {
                (0..size / 4)
                    .flat_map(|_| ((next() % 5) as f32 * 0.25).to_le_bytes())
                    .collect()
            } else if format == Format::R32G32B32A32_FLOAT {
                (0..size / 4)
                    .flat_map(|_| (next() as f32 / u32::MAX as f32 * 4.0 - 1.0).to_le_bytes())
                    .collect()
            } else {
                (0..size).map(|_| next() as u8).collect()
            };
            let owned = Owned::new(templ, data);
            let tex = owned.tex();
            for filter in [TexFilter::Nearest, TexFilter::Linear] {
                let s = SamplerState {
                    wrap_s: wrap,
                    wrap_t: TexWrap::MirrorRepeat,
                    min_img_filter: filter,
                    mag_img_filter: filter,
                    min_mip_filter: TexMipFilter::None,
                    compare_mode: if depth {
                        TexCompareMode::RToTexture
                    } else {
                        TexCompareMode::None
                    },
                    compare_func: Func::Lequal,
                    border_color: [0.25, 0.5, 2.0, -1.0],
                    ..Default::default()
                };
                // coordinates in v0 / v1, layer u1, reference v2, results v3..
                let t = TexOp {
                    layer: (target == TextureTarget::Texture2DArray).then_some(Reg::u(1)),
                    depth_ref: depth.then_some(Reg::v(2)),
                    offset: [1, -2, 0],
                    live: 0b1011,
                    ..TexOp::sample_2d(0, Reg::v(0), Reg::v(1), 3)
                };
                let mut file = vec![f32x8::ZERO; nu + 7 * groups];
                for v in file.iter_mut() {
                    *v = f32x8::new(std::array::from_fn(|_| {
                        (next() as i32 as f32) / i32::MAX as f32 * 2.5 + 0.5
                    }));
                }
                file[1] = f32x8::splat(1.0 + (next() % 3) as f32);
                let before = file.clone();
                let regs = ChunkRegs::new(&t, nu, groups);
                let plan = tex.soa_plan(&s, Lod::Implicit).expect("a plan");
                assert!(tex.run_planned_chunk(
                    &plan,
                    &s,
                    &mut file,
                    &regs,
                    &soa::PlanOperands {
                        layer: t.layer.map(|r| loc(r, nu, groups)),
                        depth_ref: t.depth_ref.map(|r| loc(r, nu, groups)),
                        offset: t.offset,
                    }
                ));
                ran += 1;
                let at = |f: &[Lanes], r: Reg, g: usize| {
                    let (b, m) = loc(r, nu, groups);
                    f[b + (g & m)]
                };
                for g in 0..groups {
                    let args = SampleArgs {
                        coord: [
                            at(&before, t.coord[0], g),
                            at(&before, t.coord[1], g),
                            f32x8::ZERO,
                        ],
                        layer: t.layer.map_or(f32x8::ZERO, |r| at(&before, r, g)),
                        lod: Lod::Implicit,
                        depth_ref: t.depth_ref.map(|r| at(&before, r, g)),
                        offset: t.offset,
                    };
                    let want = tex.sample(Some(&s), &args);
                    for (k, &w) in want.iter().enumerate() {
                        let got = at(&file, t.dst[k], g);
                        let expect = if t.live & (1 << k) != 0 {
                            w
                        } else {
                            at(&before, t.dst[k], g)
                        };
                        // (every NaN as one: its sign follows operand
                        // order, which LLVM may commute per copy)
                        let bits = |v: Lanes| {
                            v.to_array()
                                .map(|x| if x.is_nan() { u32::MAX } else { x.to_bits() })
                        };
                        assert_eq!(
                            bits(got),
                            bits(expect),
                            "{format:?} {filter:?} group {g} channel {k}"
                        );
                    }
                }
            }
        }
        assert_eq!(ran, 12);
    }

    fn xorshift(mut rng: u32) -> impl FnMut() -> u32 {
        move || {
            rng ^= rng << 13;
            rng ^= rng >> 17;
            rng ^= rng << 5;
            rng
        }
    }

    /// Two quads' 2D coordinates for the quad-sampler tests: a random
    /// base per quad (sometimes NaN, infinite or far outside), stepped by
    /// derivatives from 2^-12 to 2^3 texels' worth, rotated per axis.
    fn quad_coords(next: &mut impl FnMut() -> u32) -> [Lanes; 3] {
        let mut c = || -> f32 {
            match next() % 32 {
                0 => f32::NAN,
                1 => f32::INFINITY,
                2 => 3e9,
                3 => -40.0,
                _ => (next() as i32 as f32) / i32::MAX as f32 * 2.0 + 0.5,
            }
        };
        let base = [[c(), c()], [c(), c()]];
        let step = f32::from_bits(((next() % 16) + 115) << 23); // 2^-12..2^3
        let (dx, dy) = ((next() % 5) as f32 * step, (next() % 5) as f32 * step);
        let coord = [0, 1].map(|a| {
            f32x8::new(std::array::from_fn(|l| {
                let (px, py) = ((l % 2) as f32, ((l / 2) % 2) as f32);
                let d = if a == 0 { [dx, dy] } else { [dy, -dx] };
                base[l / 4][a] + px * d[0] + py * d[1]
            }))
        });
        [coord[0], coord[1], f32x8::ZERO]
    }

    /// NEAREST quads (both filters NEAREST, or LINEAR minification with
    /// NEAREST magnification decided per quad) through the quad sampler
    /// give the scalar 8-bit path's bits: every mip filter, bias and LOD
    /// clamps, REPEAT and CLAMP_TO_EDGE, coordinates far outside,
    /// infinite and NaN.  Groups whose quads differ in filter go to the
    /// general path; most groups must not.
    #[test]
    fn nearest_quads_match_the_scalar_path() {
        let mut next = xorshift(0x5a5a_1234u32);
        let (rep, clamp) = (TexWrap::Repeat, TexWrap::ClampToEdge);
        let (mut fast, mut nearest, mut total) = (0usize, 0usize, 0usize);
        for (w, h, last_level) in [(16, 8, 4), (12, 6, 2)] {
            let mut templ =
                ResourceTemplate::texture_2d(Format::B8G8R8A8_UNORM, w, h, Default::default());
            templ.last_level = last_level;
            let layout = ResourceLayout::new(&templ).unwrap();
            let data: Vec<u8> = (0..layout.size).map(|_| next() as u8).collect();
            let t = Owned::new(templ, data);
            let tex = t.tex();
            for (ws, wt) in [(rep, rep), (rep, clamp), (clamp, rep), (clamp, clamp)] {
                for (min, mag) in [
                    (TexFilter::Nearest, TexFilter::Nearest),
                    (TexFilter::Linear, TexFilter::Nearest),
                ] {
                    for mip in [
                        TexMipFilter::None,
                        TexMipFilter::Nearest,
                        TexMipFilter::Linear,
                    ] {
                        for (bias, min_lod, max_lod) in
                            [(0.0, 0.0, 1000.0), (0.5, 0.0, 1000.0), (0.0, 1.25, 1.25)]
                        {
                            let s = SamplerState {
                                wrap_s: ws,
                                wrap_t: wt,
                                min_img_filter: min,
                                mag_img_filter: mag,
                                min_mip_filter: mip,
                                lod_bias: bias,
                                min_lod,
                                max_lod,
                                ..Default::default()
                            };
                            let q = tex.quad_sampler(Some(&s)).expect("a plain 2D RGBA8 view");
                            let args = SampleArgs::at([f32x8::ZERO; 3]);
                            let p = LodParams::new(&tex, &s, &args);
                            for _ in 0..100 {
                                let coord = quad_coords(&mut next);
                                let quads = tex.choose_quads(&s, &p, &coord);
                                total += 1;
                                let Some(got) = q.planned(&coord) else {
                                    continue;
                                };
                                fast += 1;
                                if quads[0].filter == TexFilter::Nearest {
                                    nearest += 1;
                                }
                                let lods: [LevelChoice; LANES] =
                                    std::array::from_fn(|l| quads[l / (LANES / 2)]);
                                let coords = coord.map(|v| v.to_array());
                                let want =
                                    tex.sample_aos_scalar(&s, &lods, &coords, &[0; LANES], [0; 3]);
                                // `planned` is before the view swizzle
                                let got = q.swizzle(got);
                                for k in 0..4 {
                                    assert_eq!(
                                        got[k].to_array().map(f32::to_bits),
                                        want[k].to_array().map(f32::to_bits),
                                        "{w}x{h} {s:?} channel {k} at {coord:?}"
                                    );
                                }
                            }
                        }
                    }
                }
            }
        }
        assert!(
            fast * 2 > total,
            "{fast} of {total} groups took the quad sampler"
        );
        assert!(
            nearest * 3 > total,
            "{nearest} of {total} groups were NEAREST"
        );
    }

    #[test]
    fn depth_comparison_is_per_texel_before_filtering() {
        // 2x1 depth texture: 0.25, 0.75
        let data: Vec<u8> = [0.25f32, 0.75]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let t = Owned::new(
            ResourceTemplate::texture_2d(Format::Z32_FLOAT, 2, 1, Default::default()),
            data,
        );
        let tex = t.tex();
        let mut s = SamplerState {
            compare_mode: TexCompareMode::RToTexture,
            compare_func: Func::Lequal,
            min_mip_filter: TexMipFilter::None,
            wrap_s: TexWrap::ClampToEdge,
            wrap_t: TexWrap::ClampToEdge,
            ..Default::default()
        };
        // nearest: texel 0 for u < 0.5, texel 1 above
        let u = [0.1, 0.1, 0.1, 0.1, 0.9, 0.9, 0.9, 0.9];
        let refs = [0.2, 0.25, 0.3, 0.8, 0.7, 0.75, 0.76, -1.0];
        let args = SampleArgs {
            depth_ref: Some(lanes(refs)),
            ..level_args(u, [0.5; 8])
        };
        let r = tex.sample(Some(&s), &args)[0].to_array();
        assert_eq!(
            r,
            [1.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 1.0],
            "ref <= D, ref clamped to [0, 1]"
        );
        // linear: halfway between the texels, the comparison results blend
        s.min_img_filter = TexFilter::Linear;
        s.mag_img_filter = TexFilter::Linear;
        let args = SampleArgs {
            depth_ref: Some(lanes([0.5; 8])),
            ..level_args([0.5; 8], [0.5; 8])
        };
        let r = tex.sample(Some(&s), &args)[0].to_array();
        assert!(r.iter().all(|&v| (v - 0.5).abs() < 1e-6), "{r:?}");
        s.compare_func = Func::Greater;
        let args = SampleArgs {
            depth_ref: Some(lanes([0.5; 8])),
            ..level_args([0.25; 8], [0.5; 8])
        };
        assert_eq!(tex.sample(Some(&s), &args)[0].to_array(), [1.0; 8]);
    }

    #[test]
    fn gather_returns_the_bilinear_footprint_in_wgsl_order() {
        // R = 10 * x + y on a 4x4 texture
        let t = rgba8(4, 4, |x, y| [(10 * x + y) as u8, 200, 0, 255]);
        let tex = t.tex();
        let s = SamplerState {
            min_mip_filter: TexMipFilter::None,
            ..Default::default()
        };
        // centre between texels (1,1), (2,1), (1,2), (2,2)
        let args = level_args([0.5; 8], [0.5; 8]);
        let r = tex.gather(Some(&s), &args, 0);
        let want = [12.0, 22.0, 21.0, 11.0].map(|v: f32| v / 255.0);
        for (k, w) in want.iter().enumerate() {
            assert!((r[k].to_array()[0] - *w).abs() < 1e-6, "component {k}");
        }
        // component selection goes through the view swizzle
        let g = tex.gather(Some(&s), &args, 1);
        assert!((g[0].to_array()[0] - 200.0 / 255.0).abs() < 1e-6);
    }

    #[test]
    fn unnormalized_coordinates_address_texels() {
        let t = rgba8(4, 2, |x, y| [(x * 50) as u8, (y * 100) as u8, 0, 255]);
        let tex = t.tex();
        let s = SamplerState {
            normalized_coords: false,
            wrap_s: TexWrap::ClampToEdge,
            wrap_t: TexWrap::ClampToEdge,
            min_mip_filter: TexMipFilter::None,
            ..Default::default()
        };
        let args = level_args(
            [0.5, 1.5, 2.5, 3.5, 9.0, -3.0, 2.0, 2.9],
            [0.5, 1.5, 0.5, 1.5, 0.5, 0.5, 0.5, 1.0],
        );
        let r = tex.sample(Some(&s), &args);
        assert_eq!(
            r[0].to_array().map(|v| (v * 255.0).round()),
            [0.0, 50.0, 100.0, 150.0, 150.0, 0.0, 100.0, 100.0]
        );
        assert_eq!(
            r[1].to_array().map(|v| (v * 255.0).round()),
            [0.0, 100.0, 0.0, 100.0, 0.0, 0.0, 0.0, 100.0]
        );
    }

    #[test]
    fn buffer_views_fetch_elements_and_zero_out_of_range() {
        let templ = ResourceTemplate::buffer(16, Default::default());
        let mut t = Owned::new(templ, (0u8..16).collect());
        t.view.format = Format::R8G8B8A8_UNORM;
        t.view.buffer_offset = 4;
        t.view.buffer_size = 8;
        let tex = t.tex();
        let idx = from_u(u32x8::new([0, 1, 2, u32::MAX, 0, 0, 0, 0]));
        let r = tex.load(
            [idx, f32x8::ZERO, f32x8::ZERO],
            f32x8::ZERO,
            f32x8::ZERO,
            None,
        );
        let red = r[0].to_array().map(|v| (v * 255.0).round());
        assert_eq!(&red[..4], &[4.0, 8.0, 0.0, 0.0]);
        assert_eq!(tex.size(0), [2, 1, 1]);
    }

    #[test]
    fn anisotropic_probes_follow_the_major_axis() {
        // vertical stripes: filtering across x averages them, along y does not
        let t = rgba8(64, 64, |x, _| {
            if x % 2 == 0 {
                [255, 255, 255, 255]
            } else {
                [0, 0, 0, 255]
            }
        });
        let tex = t.tex();
        let mut s = SamplerState {
            min_img_filter: TexFilter::Linear,
            mag_img_filter: TexFilter::Linear,
            min_mip_filter: TexMipFilter::None,
            ..Default::default()
        };
        // a footprint 4 texels long in x, 1 in y
        let dx = [lanes([4.0 / 64.0; 8]), f32x8::ZERO, f32x8::ZERO];
        let dy = [f32x8::ZERO, lanes([1.0 / 64.0; 8]), f32x8::ZERO];
        let u = [0.3 / 64.0 + 10.0 / 64.0; 8];
        let args = SampleArgs {
            lod: Lod::Grad(dx, dy),
            ..SampleArgs::at([lanes(u), lanes([0.5; 8]), f32x8::ZERO])
        };
        let iso = tex.sample(Some(&s), &args)[0].to_array()[0];
        s.max_anisotropy = 16;
        let a = tex.anisotropy(&s, &args).unwrap();
        assert_eq!(a.probes[0], 4);
        assert!((a.lod[0] - 0.0).abs() < 1e-6, "lod of the minor axis");
        let aniso = tex.sample(Some(&s), &args)[0].to_array()[0];
        // four probes across alternating stripes average to about one half
        assert!((aniso - 0.5).abs() < 0.05, "aniso {aniso}, iso {iso}");
    }

    #[test]
    fn lod_math_matches_llvmpipe_helpers() {
        assert_eq!(fast_log2(8.0), 3.0);
        assert_eq!(fast_log2(12.0), 3.5);
        assert_eq!(exponent_mantissa(0.75), (-1, 1.5));
        assert_eq!(split_lod(2.75, TexMipFilter::Linear), (2, 0.75));
        assert_eq!(split_lod(2.5, TexMipFilter::Nearest), (2, 0.0));
        assert_eq!(split_lod(3.5, TexMipFilter::Nearest), (4, 0.0));
        assert_eq!(lerp8(0, 255, 128), 128);
        assert_eq!(lerp8(255, 0, 128), 128);
        assert_eq!(lerp8(255, 0, 129), 127);
        assert_eq!(lerp8(10, 20, 0), 10);
    }

    /// A 2x2-per-face RGBA8 cube (optionally `cubes` of them, an array)
    /// whose every texel is `f(face, x, y)`.
    fn cube(cubes: u32, f: impl Fn(u32, u32, u32) -> [u8; 4]) -> Owned {
        let mut data = Vec::new();
        for layer in 0..6 * cubes {
            for y in 0..2 {
                for x in 0..2 {
                    data.extend(f(layer, x, y));
                }
            }
        }
        let target = if cubes > 1 {
            TextureTarget::TextureCubeArray
        } else {
            TextureTarget::TextureCube
        };
        Owned::new(
            ResourceTemplate {
                target,
                array_size: 6 * cubes,
                ..ResourceTemplate::texture_2d(Format::R8G8B8A8_UNORM, 2, 2, Default::default())
            },
            data,
        )
    }

    fn cube_args(d: [f32; 3]) -> SampleArgs {
        SampleArgs {
            lod: Lod::Level(f32x8::ZERO),
            ..SampleArgs::at(d.map(f32x8::splat))
        }
    }

    fn linear_cube_sampler(seamless: bool) -> SamplerState {
        SamplerState {
            min_img_filter: TexFilter::Linear,
            mag_img_filter: TexFilter::Linear,
            min_mip_filter: TexMipFilter::None,
            seamless_cube_map: seamless,
            ..Default::default()
        }
    }

    /// Every cube edge, walked from both sides: with `seamless_cube_map`
    /// a lookup exactly on the edge between two faces is the mean of the
    /// two faces' colours (each face one colour, 40 * face in red), from
    /// whichever face the major axis picks; without it, one face only.
    #[test]
    fn seamless_cube_edges_blend_the_two_faces() {
        let t = cube(1, |f, _, _| [40 * f as u8, 0, 0, 255]);
        let tex = t.tex();
        let red = |d: [f32; 3], seamless: bool| {
            tex.sample(Some(&linear_cube_sampler(seamless)), &cube_args(d))[0].to_array()[0]
        };
        // the 12 edges: two axes (with signs) both major
        let mut edges = 0;
        for a in 0..3 {
            for b in a + 1..3 {
                for sa in [1.0f32, -1.0] {
                    for sb in [1.0f32, -1.0] {
                        let face = |axis: usize, sign: f32| 2 * axis as u32 + (sign < 0.0) as u32;
                        let want =
                            (40.0 * (face(a, sa) + face(b, sb)) as f32 / 2.0).round() / 255.0;
                        // a quarter texel (1/8 of the face) off centre
                        // along the edge, so no corner is involved
                        let other = 3 - a - b;
                        let mut d = [0f32; 3];
                        d[a] = sa;
                        d[b] = sb;
                        d[other] = 0.25;
                        let got = red(d, true);
                        assert!(
                            (got - want).abs() < 1.5 / 255.0,
                            "edge {d:?}: {got} vs {want}"
                        );
                        let plain = red(d, false) * 255.0;
                        assert!(
                            [face(a, sa), face(b, sb)]
                                .iter()
                                .any(|&f| (plain - 40.0 * f as f32).abs() < 0.5),
                            "edge {d:?} without seamless: {plain}"
                        );
                        edges += 1;
                    }
                }
            }
        }
        assert_eq!(edges, 12);
    }

    /// At each of the 8 cube corners three faces meet: the missing fourth
    /// texel's weight is shared, so the exact corner is the mean of three
    /// face colours; gather returns that mean in the missing slot.
    #[test]
    fn seamless_cube_corners_average_three_faces() {
        let colours = [10u8, 50, 90, 130, 170, 210];
        let t = cube(1, |f, _, _| [colours[f as usize], 0, 0, 255]);
        let tex = t.tex();
        let s = linear_cube_sampler(true);
        for sx in [1.0f32, -1.0] {
            for sy in [1.0f32, -1.0] {
                for sz in [1.0f32, -1.0] {
                    let faces = [
                        (sx < 0.0) as usize,
                        2 + (sy < 0.0) as usize,
                        4 + (sz < 0.0) as usize,
                    ];
                    let want = faces.iter().map(|&f| colours[f] as f32).sum::<f32>() / 3.0;
                    let got = tex.sample(Some(&s), &cube_args([sx, sy, sz]))[0].to_array()[0];
                    assert!(
                        (got * 255.0 - want).abs() < 0.01,
                        "corner {sx} {sy} {sz}: {got}"
                    );
                    let g = tex.gather(Some(&s), &cube_args([sx, sy, sz]), 0);
                    let mut vals: Vec<f32> = g.iter().map(|v| v.to_array()[0] * 255.0).collect();
                    vals.sort_by(f32::total_cmp);
                    let mut expect: Vec<f32> = faces.iter().map(|&f| colours[f] as f32).collect();
                    expect.push(want);
                    expect.sort_by(f32::total_cmp);
                    for (v, e) in vals.iter().zip(&expect) {
                        assert!((v - e).abs() < 0.01, "gather {sx} {sy} {sz}: {vals:?}");
                    }
                }
            }
        }
    }

    /// The texel across an edge is the right one, not only the right
    /// face: per-texel colours on +X and +Z, sampled on +X's edge towards
    /// +Z (x < 0 there), row by row; a cube array reads the lookup's cube.
    #[test]
    fn seamless_cube_neighbours_are_the_adjacent_texels() {
        let t = cube(2, |l, x, y| [(l * 20 + x * 4 + y) as u8, 0, 0, 255]);
        let tex = t.tex();
        let s = linear_cube_sampler(true);
        for cube_index in 0..2u32 {
            // +X at s = 0 (sc = -z = -x): the border with +Z, whose texel
            // column max touches +X's column 0 row by row
            for (row, tc) in [(0u32, -0.5f32), (1, 0.5)] {
                let d = [1.0, -tc, 1.0 - 1e-6];
                let args = SampleArgs {
                    layer: from_u(u32x8::splat(cube_index)),
                    ..cube_args(d)
                };
                let got = tex.sample(Some(&s), &args)[0].to_array()[0] * 255.0;
                let base = cube_index * 6 * 20;
                let px = (base + row) as f32; // +X (face 0, row)
                let pz = (base + 4 * 20 + 4 + row) as f32; // +Z (1, row)
                let want = (px + pz) / 2.0;
                assert!(
                    (got - want).abs() < 0.6,
                    "cube {cube_index} row {row}: {got} vs {want}"
                );
            }
        }
    }

    #[test]
    fn cube_neighbour_table_is_symmetric() {
        // crossing an edge and crossing back lands on the start texel
        let max = 3;
        for face in 0..6u32 {
            for side in 0..4usize {
                for a in 0..=max {
                    let (f, x, y) = cube_neighbour(face, side, a, max);
                    assert_ne!(f, face);
                    // the texel just off f's face in the direction of `face`
                    let back = (0..4).find_map(|s2| {
                        let a2 = if s2 < 2 { y } else { x };
                        let edge = match s2 {
                            0 => x == 0,
                            1 => x == max,
                            2 => y == 0,
                            _ => y == max,
                        };
                        let r = cube_neighbour(f, s2, a2, max);
                        (edge && r.0 == face).then_some(r)
                    });
                    let (bf, bx, by) = back.expect("an edge back");
                    assert_eq!(bf, face);
                    let (ex, ey) = match side {
                        0 => (0, a),
                        1 => (max, a),
                        2 => (a, 0),
                        _ => (a, max),
                    };
                    assert_eq!((bx, by), (ex, ey), "face {face} side {side} at {a}");
                }
            }
        }
    }

    #[test]
    fn cube_faces_follow_the_major_axis_table() {
        assert_eq!(cube_face([1.0, 0.0, 0.0]), (0, [0.5, 0.5]));
        assert_eq!(cube_face([-1.0, 0.5, 0.0]).0, 1);
        assert_eq!(cube_face([0.2, 1.0, -0.5]), (2, [0.6, 0.25]));
        assert_eq!(cube_face([0.0, -1.0, 0.0]).0, 3);
        assert_eq!(cube_face([0.5, 0.5, 1.0]), (4, [0.75, 0.25]));
        assert_eq!(cube_face([0.0, 0.0, -1.0]).0, 5);
        // ties: z over y over x
        assert_eq!(cube_face([1.0, 1.0, 1.0]).0, 4);
        assert_eq!(cube_face([1.0, -1.0, 0.0]).0, 3);
    }
}
