//! The sampler's half of texture lookups inlined into the JIT's LLVM
//! regions (llvmpipe's counterpart: `lp_build_sample_soa` generated into
//! the fragment shader's function per static sampler state,
//! `lp_sampler_static_sampler_state`, with the dynamic state — texel
//! pointer, sizes, strides — read from `lp_jit_texture` at run time).
//!
//! A lookup through [`QuadSampler`]'s bilinear kernel at one constant
//! level ([`Kernel::Bilinear`] with [`LOD_CONST`] and no second level) is
//! a few dozen vector instructions; run by the interpreter between two JIT
//! regions it also cost a register-file round trip per group (coordinates
//! stored by one region and read back, results stored and read by the
//! next, every live value of the shader stored and reloaded at the
//! boundary: ~30 instructions of postprocess's ~150 per sample, and one
//! region per tap).  Inline, the coordinates and results stay in
//! registers and the shader's taps are one region.
//!
//! The split is the one llvmpipe makes:
//! * [`InlineSample`], the static half (the wrap mode of each axis and
//!   the view's channel map), is part of the key of a JIT variant
//!   (`jit::JitCode::variant`): the generated code depends on it and on
//!   nothing else of the state;
//! * [`TexDesc`], the dynamic half, is filled per call from the call's
//!   plan and read by the generated code (`RegionCtx::tex`).
//!
//! The generated code is [`QuadSampler::group`]'s AVX2 kernel
//! (`bilinear_taps_avx2`, `bilinear_fetch_avx2`, `filter_pairs_avx2`,
//! `channels_f32`), the same operations in the same order, so the same
//! bits (`jit/llvm/sample.rs`; held to the interpreter by
//! `tests/jit_texture.rs`); for NEAREST filters it is
//! [`QuadSampler::nearest_channels`]'s.  Groups the kernel leaves (coordinates beyond
//! i32 after scaling, or NaN) call [`inline_fallback`], which is what the
//! interpreter's fallback runs.

use ferropipe_components::shader::{Lanes, ShaderResources};
use wide::f32x8;

use super::{
    Kernel, LOD_CONST, LOD_ILOG2, LOD_LINEAR, QuadLod, QuadSampler, SampleArgs, SamplerCache,
    TABLE_LEVELS, Texture, bound_sampler, plain_sample,
};
use crate::ir::{TexDim, TexKind, TexOp};
use ferropipe_components::enums::TexWrap;

/// The static half of an inlined lookup: what the generated code is
/// specialised on (a JIT variant's key, per texture op).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct InlineSample {
    /// REPEAT on s (a power-of-two width); else CLAMP_TO_EDGE.
    pub repeat_s: bool,
    /// REPEAT on t (a power-of-two height); else CLAMP_TO_EDGE.
    pub repeat_t: bool,
    /// Which filtered channel feeds result R, G, B, A: 0-3 a stored byte,
    /// 4 zero, 5 one ([`QuadSampler`]'s `out`: the format's channel order,
    /// then the view swizzle).
    pub out: [u8; 4],
    /// How each quad's level is chosen.
    pub lod: InlineLod,
    /// NEAREST min and mag filters (`QuadSampler::nearest_channels`: one
    /// texel per lane); else LINEAR ([`Kernel::Bilinear`]).
    pub nearest: bool,
}

impl InlineSample {
    /// Whether lookups with `self` and `other` compute their level,
    /// texel indices and weights alike (from the same coordinates and
    /// descriptor layout): the same wrap modes, LOD source and filter;
    /// only the channel map may differ.  (A NEAREST and a bilinear
    /// lookup, e.g. one texture through a point and a linear sampler,
    /// must not share.)
    pub fn same_addressing(&self, other: &InlineSample) -> bool {
        (self.repeat_s, self.repeat_t, self.lod, self.nearest)
            == (other.repeat_s, other.repeat_t, other.lod, other.nearest)
    }
}

/// [`InlineSample`]'s level choice: the `QuadSampler` kernel's LOD source.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum InlineLod {
    /// One level for every lane ([`LOD_CONST`]: no mipmapping, or one
    /// level): [`TexDesc`]'s `width`..`base`.
    Const,
    /// `lp_build_ilog2_sqrt` per quad ([`LOD_ILOG2`]: mip filter NEAREST
    /// or NONE without bias or LOD clamps).
    Ilog2,
    /// The quad's two nearest levels and an 8-bit weight ([`LOD_LINEAR`]:
    /// mip filter LINEAR without bias or LOD clamps).
    Linear,
}

/// The columns of [`TexDesc::cols`], per view level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LevelCol {
    Width,
    Height,
    /// The row stride in texels.
    RowStride,
    /// The level's first texel.
    Base,
    /// `(width << 8) as f32`'s bits: the scale of a bilinear lookup's
    /// coordinates (x256, for the 8-bit weights).
    WidthX256,
    HeightX256,
    /// -1 where the kernel may read the level, else 0.
    Fits,
}

impl LevelCol {
    pub const COUNT: usize = 7;
}

/// The dynamic half of an inlined lookup, per call: the level's layout
/// and where its texels are.  `#[repr(C)]`: the generated code reads the
/// fields at their `offset_of!`s.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct TexDesc {
    /// The view's data as 4-byte texels (`QuadSampler::words`).
    pub words: *const u8,
    /// The last texel index an 8-byte pair load may start at
    /// (`words.len() - 2`, at most `i32::MAX`).
    pub max_pair: i32,
    /// The last texel index (`words.len() - 1`, at most `i32::MAX`).
    pub max_word: i32,
    /// The level's width, height, row stride and base, the last two in
    /// texels (`QuadSampler::fill`'s checked table entry), for
    /// [`InlineLod::Const`].
    pub width: i32,
    pub height: i32,
    pub row_stride: i32,
    pub base: i32,
    /// The base level's width and height as floats: the scale of the
    /// coordinates' differences in `rho` (per-quad LOD sources).
    pub size: [f32; 2],
    /// The LOD source's first and last level (absolute).
    pub first: i32,
    pub last: i32,
    /// The view's first level: `table[level - table_first]`.
    pub table_first: i32,
    /// `QuadSampler`'s level table by columns ([`LevelCol`]): entry `i`
    /// of each is view level `table_first + i`, and the fits column is
    /// -1 where the kernel may read that level (`QuadSampler::entry`; a
    /// quad choosing another takes the fallback), else 0 (and the other
    /// columns 0).
    ///
    /// Why columns: the generated code picks each lane's entry with two
    /// `vpermd` (entries 0-7 and 8-15) and a blend, straight from the
    /// vector of per-quad levels.  Rows (width, height, stride, base
    /// together) took each quad's level out to a scalar, loaded the row
    /// and built the vectors back, ~35 instructions a group: the
    /// permutes took textured_mesh to ~0.965x of its time (one thread,
    /// Zen 5).  Most groups of a primitive then skip even these: the
    /// generated code carries the previous group's layouts and reuses
    /// them where the levels are the same (~0.885x more;
    /// docs/performance.md, "Where the time goes", 2026-12-07 fifth
    /// session).
    pub cols: [[i32; TABLE_LEVELS]; LevelCol::COUNT],
    /// The call's resources and the op's slots, for [`inline_fallback`].
    pub res: *const ShaderResources<'static>,
    pub view: u32,
    pub sampler: u32,
}

impl TexDesc {
    /// Whether lookups through `self` and `other` at the same
    /// coordinates take the same level choice, texel addresses and
    /// weights (with equal wrap modes and LOD source): every layout field
    /// and the texel count are equal, so only the texels differ.
    pub fn same_addressing(&self, other: &TexDesc) -> bool {
        let layout = |d: &TexDesc| {
            (
                [
                    d.max_pair,
                    d.max_word,
                    d.width,
                    d.height,
                    d.row_stride,
                    d.base,
                ],
                [d.first, d.last, d.table_first],
                d.cols,
                d.size.map(f32::to_bits),
            )
        };
        layout(self) == layout(other)
    }
}

/// Whether lookup `t`, right after `prev`, reads the coordinates `prev`
/// read: the same registers, which `prev` does not write.
pub fn same_coordinates(prev: &TexOp, t: &TexOp) -> bool {
    let coords = &prev.coord[..2];
    let live = prev.live & ((1u8 << prev.result_count()) - 1);
    t.coord[..2] == *coords
        && (0..4).all(|k| live & (1 << k) == 0 || !coords.contains(&prev.dst[k]))
}

/// Whether `t`'s shape lets the JIT inline it when the bindings allow
/// ([`SamplerCache::inline_plan`]): an implicit-LOD 2D float lookup with
/// nothing but coordinates ([`plain_sample`]).  Decided per program at
/// compile time; the bindings decide per call.
pub fn inline_shape(t: &TexOp) -> bool {
    plain_sample(t) && t.dim == TexDim::D2 && !t.arrayed && t.kind == TexKind::Float
}

impl QuadSampler<'_> {
    /// The static half of this plan's lookups and their descriptor
    /// (without the resources and slots), when its kernel is one the JIT
    /// inlines, on data of at least two texels: bilinear at one constant
    /// level, or at per-quad levels chosen by ILOG2 or LINEAR; NEAREST
    /// (min and mag) at one constant level or per-quad ILOG2 levels.
    ///
    /// Why NEAREST too: pixel art, UI atlases and point-sampled post
    /// passes sample that way, and between two regions such a lookup paid
    /// the register-file round trip the inlined bilinear ones no longer
    /// pay, for a lookup that is one gather.  (NEAREST with a mip filter
    /// LINEAR blends two levels' bytes, `lerp8x8`: not inlined.)
    fn inline_halves(&self) -> Option<(InlineSample, TexDesc)> {
        let (lod, repeat_s, repeat_t, nearest) = match self.kernel {
            Kernel::Bilinear {
                lod,
                repeat_s,
                repeat_t,
            } => (lod, repeat_s, repeat_t, false),
            // `quad_sampler`: the wraps are REPEAT or CLAMP_TO_EDGE
            Kernel::Other if !self.min_linear && !self.mag_linear => {
                let lod = match self.how {
                    QuadLod::Const(c) if c.level1 == c.level0 => LOD_CONST,
                    QuadLod::Ilog2 { .. } => LOD_ILOG2,
                    _ => return None,
                };
                let repeat = |w: TexWrap| w == TexWrap::Repeat;
                (lod, repeat(self.s.wrap_s), repeat(self.s.wrap_t), true)
            }
            Kernel::Other => return None,
        };
        if self.words.len() < 2 {
            return None;
        }
        let lane0 = |v: wide::i32x8| v.to_array()[0];
        let max = |k: usize| (self.words.len() - k).min(i32::MAX as usize) as i32;
        let mut d = TexDesc {
            words: self.words.as_ptr().cast::<u8>(),
            max_pair: max(2),
            max_word: max(1),
            width: 0,
            height: 0,
            row_stride: 0,
            base: 0,
            size: self.size,
            first: 0,
            last: 0,
            table_first: self.first as i32,
            cols: [[0; TABLE_LEVELS]; LevelCol::COUNT],
            res: std::ptr::null(),
            view: 0,
            sampler: 0,
        };
        let lod = match lod {
            LOD_CONST => {
                let first = if nearest {
                    let QuadLod::Const(c) = self.how else {
                        return None;
                    };
                    self.levels_of(c.level0, c.level0)?
                } else {
                    let c = self.const_lv.as_ref()?;
                    if c.second.is_some() {
                        return None;
                    }
                    c.first
                };
                d.width = lane0(first.width);
                d.height = lane0(first.height);
                d.row_stride = lane0(first.row_stride);
                d.base = lane0(first.base);
                InlineLod::Const
            }
            LOD_ILOG2 => {
                let QuadLod::Ilog2 { first, last } = self.how else {
                    return None;
                };
                (d.first, d.last) = (first, last);
                InlineLod::Ilog2
            }
            LOD_LINEAR => {
                (d.first, d.last) = (self.lod.first as i32, self.lod.last as i32);
                InlineLod::Linear
            }
            _ => return None,
        };
        if lod != InlineLod::Const {
            // every level the kernel may choose, as `entry` checks it
            for i in 0..TABLE_LEVELS {
                if let Some([w, h, stride, base]) = self.entry(self.first + i as u32) {
                    let scaled = |len: i32| (len.wrapping_shl(8) as f32).to_bits() as i32;
                    let row = [w, h, stride, base, scaled(w), scaled(h), -1];
                    for (c, v) in row.into_iter().enumerate() {
                        d.cols[c][i] = v;
                    }
                }
            }
        }
        Some((
            InlineSample {
                repeat_s,
                repeat_t,
                out: self.out,
                lod,
                nearest,
            },
            d,
        ))
    }
}

impl<'r> SamplerCache<'r> {
    /// How the JIT may inline `t` under the call's bindings `res`: its
    /// static half and its descriptor, or `None` (the op then runs as the
    /// interpreter runs it).  The pair's plan is made now and kept for
    /// the call, as [`super::exec_texture`]'s second lookup keeps it.
    pub fn inline_plan(
        &mut self,
        res: &ShaderResources<'r>,
        t: &TexOp,
    ) -> Option<(InlineSample, TexDesc)> {
        if !inline_shape(t) {
            return None;
        }
        let i = match self.index(res, t.view, t.sampler, true) {
            Some(i) => i,
            // the pair's first lookup only records it: the second makes it
            None => self.index(res, t.view, t.sampler, true)?,
        };
        let (spec, mut desc) = self.entries[i].quad.as_ref()?.inline_halves()?;
        let res: *const ShaderResources<'r> = res;
        desc.res = res.cast();
        (desc.view, desc.sampler) = (t.view, t.sampler);
        Some((spec, desc))
    }
}

/// The lookup of one group the generated code's kernel leaves, as the
/// interpreter's fallback runs it (`sample_group` for a plain lookup:
/// [`Texture::sample`] at the coordinates, implicit LOD).  `buf[0]` and
/// `buf[1]` hold the coordinates; the four results are written to
/// `buf[0..4]`.
///
/// # Safety
/// `desc` points to a [`TexDesc`] that [`SamplerCache::inline_plan`]
/// made for the running call (so its `res` is alive), and `buf` to four
/// writable, aligned `Lanes`.
pub unsafe extern "C" fn inline_fallback(desc: *const TexDesc, buf: *mut Lanes) {
    // SAFETY: the caller's contract: `desc` and its resources are the
    // running call's, `buf` holds four `Lanes`.
    let (d, res, io) = unsafe {
        let d = &*desc;
        (d, &*d.res, std::slice::from_raw_parts_mut(buf, 4))
    };
    let r = match Texture::bound(res, d.view) {
        Some(tex) => tex.sample(
            bound_sampler(res, d.sampler),
            &SampleArgs::at([io[0], io[1], f32x8::ZERO]),
        ),
        // (unreachable: a descriptor is made only for a bound view; this
        // is what an unbound float view reads)
        None => [f32x8::ZERO, f32x8::ZERO, f32x8::ZERO, f32x8::ONE],
    };
    io.copy_from_slice(&r);
}
