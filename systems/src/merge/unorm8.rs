//! The RGBA8-family colour store of llvmpipe's `generate_unswizzled_blend`
//! (`lp_state_fs.c`): one batch of shaded 4x2 groups blended into and
//! stored to a 32-bit unorm8 target, with every per-state decision taken
//! once per batch instead of once per group and channel.
//!
//! **Arithmetic: llvmpipe's 8-bit blend, byte for byte.**  For 8-bit unorm
//! targets llvmpipe does not blend in float: `lp_blend_type_from_format_desc`
//! gives an unorm8 row type, so the shader's colour (and the second source
//! and the blend colour) is first converted to bytes (`lp_build_conv`:
//! `min(1, x) * 255`, `cvtps2dq` round-to-nearest-even, saturating packs),
//! and `lp_build_blend_aos` / `lp_build_blend` (`lp_bld_blend.c`) then
//! work on bytes:
//! * a factor is a byte: `ONE` 255, `INV_x` `255 - x` (`lp_build_comp`:
//!   a bitwise not), `SRC_ALPHA_SATURATE` `min(As, 255 - Ad)` (alpha: 255);
//! * each term is `lp_build_mul` of normalized bytes, `lp_build_mul_norm`:
//!   `t = a * b; (t + (t >> 8) + 0x80) >> 8` (an approximation of
//!   `a * b / 255` that rounds 24 of the 65,536 products down, e.g.
//!   152 * 229 gives 136 for 136.502), rounded *per term*;
//! * `ADD` / `SUBTRACT` / `REVERSE_SUBTRACT` are saturating byte adds and
//!   subtracts (`paddusb` / `psubusb`); `MIN` / `MAX` compare bytes (the GL
//!   state tracker sets their factors to `ONE`, which multiplies exactly).
//!
//! A float blend rounded once at the end, which this store did before,
//! differs from that by up to 2/255 where blends stack (issue 17: constant
//! colours, `INV_SRC_ALPHA`, `REVERSE_SUBTRACT` alpha).  llvmpipe's
//! shortcut for complementary factors (`lp_build_lerp`) is never taken for
//! four-channel targets: its `rgb_alpha_same` compares the source factor
//! with the destination factor, so it only holds for equal factors.
//!
//! Why a separate path: the general store ([`super::blend`]) matches the
//! blend factor and function per channel per group, which profiled at ~50
//! cycles per group on `blend_overdraw`.  Here the state is resolved into
//! [`Unorm8Plan`] first: each blend factor is a *table index plus an xor*
//! (`INV_*` is `v ^ 255`), so a factor is one load and one xor, and the
//! common equations ("over", premultiplied, additive) get their own
//! monomorphised loops.  The per-pixel path ([`super::store_group_generic`])
//! calls [`blend_bytes`] for these targets, so both produce the same bytes
//! (the tests at the bottom check that, and check the lanes against a
//! scalar transcription of llvmpipe's operations).

use ferropipe_components::enums::{BlendFactor, BlendFunc};
use ferropipe_components::shader::{ILanes, Lanes, ULanes};
use ferropipe_components::simd::X86V3;
use ferropipe_components::state::RtBlendState;
use multiversion::multiversion;

use super::{ColorTarget, Quad, SlotColors, StoreGroup, TargetMemory};
use crate::lanes::{clamp_at, mask_lanes_at, select_bits_at};

/// Four channels of eight pixels as bytes in i32 lanes (0..=255).
pub(super) type ByteQuad = [ILanes; 4];

/// Entries of the per-group byte table factors index into.
const T_ZERO: usize = 0;
const T_ONE: usize = 1;
const T_SRC: usize = 2;
const T_DST: usize = 6;
const T_CONST: usize = 10;
const T_SRC1: usize = 14;
const T_SATURATE: usize = 18;
const TABLE: usize = 19;

/// One blend factor of one channel, resolved: `table[at] ^ inv` (`inv` is
/// 255 for the `INV_*` factors: `255 - v == v ^ 255` for a byte).
#[derive(Clone, Copy, Debug)]
struct Factor {
    at: usize,
    inv: i32,
}

/// A channel's blend function.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Op {
    Add,
    Sub,
    RevSub,
    Min,
    Max,
}

/// One channel's blend, resolved.
#[derive(Clone, Copy, Debug)]
struct Channel {
    src: Factor,
    dst: Factor,
    op: Op,
}

/// The blend of all four channels, resolved once per state.
#[derive(Clone, Copy, Debug)]
pub(super) struct BlendBytes {
    channels: [Channel; 4],
    uses_src1: bool,
    uses_saturate: bool,
}

/// The width llvmpipe blends a unorm target in: its
/// `lp_blend_type_from_format_desc` rounds the widest channel up to 8 or
/// 16 bits (RGBA8 and B5G6R5 blend in bytes, R10G10B10A2 in 16-bit words).
/// The arithmetic is the same at both widths, with `max` = 2^bits - 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum NormWidth {
    W8,
    W16,
}

impl NormWidth {
    #[inline(always)]
    pub(super) const fn max(self) -> i32 {
        match self {
            NormWidth::W8 => 0xff,
            NormWidth::W16 => 0xffff,
        }
    }

    #[inline(always)]
    pub(super) const fn bits(self) -> u32 {
        match self {
            NormWidth::W8 => 8,
            NormWidth::W16 => 16,
        }
    }
}

impl BlendBytes {
    pub(super) fn new(rt: &RtBlendState) -> Self {
        Self::with_width(rt, NormWidth::W8)
    }

    /// The blend of a target blended at `width` (`INV_x` is `max ^ x`).
    pub(super) fn with_width(rt: &RtBlendState, width: NormWidth) -> Self {
        let op = |f: BlendFunc| match f {
            BlendFunc::Add => Op::Add,
            BlendFunc::Subtract => Op::Sub,
            BlendFunc::ReverseSubtract => Op::RevSub,
            BlendFunc::Min => Op::Min,
            BlendFunc::Max => Op::Max,
        };
        let make = |f: BlendFactor, c: usize| {
            let (at, inv) = factor_source(f, c);
            Factor {
                at,
                inv: if inv { width.max() } else { 0 },
            }
        };
        let channels: [Channel; 4] = std::array::from_fn(|c| {
            let (func, sf, df) = if c < 3 {
                (rt.rgb_func, rt.rgb_src_factor, rt.rgb_dst_factor)
            } else {
                (rt.alpha_func, rt.alpha_src_factor, rt.alpha_dst_factor)
            };
            Channel {
                src: make(sf, c),
                dst: make(df, c),
                op: op(func),
            }
        });
        let linear = |ch: &Channel| !matches!(ch.op, Op::Min | Op::Max);
        let any = |p: &dyn Fn(&Factor) -> bool| {
            channels
                .iter()
                .any(|ch| linear(ch) && (p(&ch.src) || p(&ch.dst)))
        };
        BlendBytes {
            channels,
            uses_src1: any(&|f| (T_SRC1..T_SRC1 + 4).contains(&f.at)),
            uses_saturate: any(&|f| f.at == T_SATURATE),
        }
    }
}

/// llvmpipe's `lp_build_mul_norm` for bytes: `a * b / 255` as
/// `(t + (t >> 8) + 0x80) >> 8` with `t = a * b` (exact for `b` = 0 or
/// 255, within one of the rounded quotient otherwise).
#[inline(always)]
fn mul_norm(a: ILanes, b: ILanes) -> ILanes {
    let t = a * b;
    (t + t.unbounded_shr_scalar(8) + ILanes::splat(0x80)).unbounded_shr_scalar(8)
}

/// `lp_build_mul_norm` at `width`: for 16-bit words `t = a * b` needs all
/// 32 bits (65535² > 2³¹), so the shifts are logical (arithmetic shift,
/// then the low 16 bits); `t + (t >> 16) + 0x8000` stays below 2³².
#[inline(always)]
fn mul_norm_at(width: NormWidth, a: ILanes, b: ILanes) -> ILanes {
    match width {
        NormWidth::W8 => mul_norm(a, b),
        NormWidth::W16 => {
            let lo = ILanes::splat(0xffff);
            let t = a * b;
            let r = t + (t.unbounded_shr_scalar(16) & lo) + ILanes::splat(0x8000);
            r.unbounded_shr_scalar(16) & lo
        }
    }
}

/// `min(255, a + b)`: `paddusb` on bytes.
#[inline(always)]
fn add_sat(a: ILanes, b: ILanes) -> ILanes {
    (a + b).min(ILanes::splat(0xff))
}

/// `max(0, a - b)`: `psubusb` on bytes.
#[inline(always)]
fn sub_sat(a: ILanes, b: ILanes) -> ILanes {
    (a - b).max(ILanes::ZERO)
}

/// Shader output in [0, 1] (clamped, NaN already 0) to bytes, as
/// `lp_build_conv` does: `x * 255` rounded to nearest even.
#[inline(always)]
pub(super) fn unit_to_byte(x: Lanes) -> ILanes {
    (x * Lanes::splat(255.0)).fast_round_int()
}

/// Blends one group's bytes per `b` (`table` holds ONE and the blend
/// colour; the rest is filled here).
#[inline(always)]
fn blend_table(
    b: &BlendBytes,
    table: &mut [ILanes; TABLE],
    src: &ByteQuad,
    src1: &ByteQuad,
    dst: &ByteQuad,
) -> ByteQuad {
    blend_table_at(NormWidth::W8, b, table, src, src1, dst)
}

/// [`blend_table`] at `width` (monomorphised per call site: `width` is a
/// constant in every caller).
#[inline(always)]
fn blend_table_at(
    width: NormWidth,
    b: &BlendBytes,
    table: &mut [ILanes; TABLE],
    src: &ByteQuad,
    src1: &ByteQuad,
    dst: &ByteQuad,
) -> ByteQuad {
    let max = ILanes::splat(width.max());
    table[T_SRC..T_SRC + 4].copy_from_slice(src);
    table[T_DST..T_DST + 4].copy_from_slice(dst);
    if b.uses_src1 {
        table[T_SRC1..T_SRC1 + 4].copy_from_slice(src1);
    }
    if b.uses_saturate {
        table[T_SATURATE] = src[3].min(dst[3] ^ max);
    }
    let channel = |c: usize| {
        let ch = &b.channels[c];
        let (s, d) = (src[c], dst[c]);
        match ch.op {
            Op::Min => s.min(d),
            Op::Max => s.max(d),
            op => {
                let sf = table[ch.src.at] ^ ILanes::splat(ch.src.inv);
                let df = table[ch.dst.at] ^ ILanes::splat(ch.dst.inv);
                let (ts, td) = (mul_norm_at(width, s, sf), mul_norm_at(width, d, df));
                match op {
                    Op::Add => (ts + td).min(max),
                    Op::Sub => sub_sat(ts, td),
                    _ => sub_sat(td, ts),
                }
            }
        }
    };
    [channel(0), channel(1), channel(2), channel(3)]
}

/// One group's blend on bytes, for the per-pixel store of RGBA8-family
/// targets (the batch store's table path, so both write the same bytes).
/// `src`, `src1` and `cc` are clamped to [0, 1]; `dst` holds bytes (absent
/// channels 0, absent alpha 255).
pub(super) fn blend_bytes(
    b: &BlendBytes,
    src: &Quad,
    src1: &Quad,
    dst: &ByteQuad,
    cc: &Quad,
) -> ByteQuad {
    let mut table = [ILanes::ZERO; TABLE];
    table[T_ONE] = ILanes::splat(0xff);
    for c in 0..4 {
        table[T_CONST + c] = unit_to_byte(cc[c]);
    }
    blend_table(
        b,
        &mut table,
        &src.map(unit_to_byte),
        &src1.map(unit_to_byte),
        dst,
    )
}

/// Shader output in [0, 1] to a unorm value of `width`, as `lp_build_conv`
/// converts it: bytes as [`unit_to_byte`]; 16-bit words through
/// `lp_build_clamped_float_to_unsigned_norm`'s magic-number rounding,
/// `x * (65535 / 65536) + 2^7` in f32 (whose ulp at 128 is 2^-16), the low
/// 16 bits of the sum's bits being the result.  Two f32 roundings, so not
/// always `x * 65535` rounded; this is the reference's arithmetic.
#[inline(always)]
pub(super) fn unit_to_norm(width: NormWidth, x: Lanes) -> ILanes {
    match width {
        NormWidth::W8 => unit_to_byte(x),
        NormWidth::W16 => {
            let t = x * Lanes::splat(65535.0 / 65536.0) + Lanes::splat(128.0);
            bytemuck::cast::<Lanes, ILanes>(t) & ILanes::splat(0xffff)
        }
    }
}

/// [`blend_bytes`] at `width`: `src`, `src1` and `cc` are clamped to
/// [0, 1]; `dst` holds values of `width` (absent alpha `max`).
pub(super) fn blend_norm(
    width: NormWidth,
    b: &BlendBytes,
    src: &Quad,
    src1: &Quad,
    dst: &ByteQuad,
    cc: &Quad,
) -> ByteQuad {
    let mut table = [ILanes::ZERO; TABLE];
    table[T_ONE] = ILanes::splat(width.max());
    for c in 0..4 {
        table[T_CONST + c] = unit_to_norm(width, cc[c]);
    }
    let conv = |q: &Quad| q.map(|x| unit_to_norm(width, x));
    blend_table_at(width, b, &mut table, &conv(src), &conv(src1), dst)
}

/// How one colour buffer of one batch is stored.
#[derive(Clone, Copy, Debug)]
pub(super) struct Unorm8Plan {
    /// Byte shuffles of the target's byte order.
    shuffles: bytes::Shuffles,
    /// Bits of the pixel channel c may write (0 when absent or masked).
    write: [u32; 4],
    /// Destination channel c when the format lacks it (alpha reads 255,
    /// others 0; unpacking gives 0).
    absent: [i32; 4],
    /// The blend, `None` without blending.
    blend: Option<BlendBytes>,
}

impl Unorm8Plan {
    /// `byte[c]`: the byte holding RGBA channel c (255: absent).
    pub(super) fn new(rt: &RtBlendState, byte: [u8; 4], colormask: u8, blending: bool) -> Self {
        let mut plan = Unorm8Plan {
            shuffles: bytes::shuffles(byte),
            write: [0; 4],
            absent: [0; 4],
            blend: blending.then(|| BlendBytes::new(rt)),
        };
        if byte[3] == 255 {
            plan.absent[3] = 0xff;
        }
        for c in 0..4 {
            if byte[c] != 255 && colormask & (1 << c) != 0 {
                plan.write[c] = 0xff << (8 * byte[c] as u32);
            }
        }
        plan
    }

    fn write_bits(&self) -> u32 {
        self.write.iter().fold(0, |m, w| m | w)
    }
}

/// The table entry and inversion of `f` for channel `c`.
fn factor_source(f: BlendFactor, c: usize) -> (usize, bool) {
    use BlendFactor::*;
    match f {
        One => (T_ONE, false),
        Zero => (T_ZERO, false),
        SrcColor => (T_SRC + c, false),
        SrcAlpha => (T_SRC + 3, false),
        DstColor => (T_DST + c, false),
        DstAlpha => (T_DST + 3, false),
        SrcAlphaSaturate if c == 3 => (T_ONE, false),
        SrcAlphaSaturate => (T_SATURATE, false),
        ConstColor => (T_CONST + c, false),
        ConstAlpha => (T_CONST + 3, false),
        Src1Color => (T_SRC1 + c, false),
        Src1Alpha => (T_SRC1 + 3, false),
        InvSrcColor => (T_SRC + c, true),
        InvSrcAlpha => (T_SRC + 3, true),
        InvDstAlpha => (T_DST + 3, true),
        InvDstColor => (T_DST + c, true),
        InvConstColor => (T_CONST + c, true),
        InvConstAlpha => (T_CONST + 3, true),
        InvSrc1Color => (T_SRC1 + c, true),
        InvSrc1Alpha => (T_SRC1 + 3, true),
    }
}
/// Moving 8-bit channels between pixels and f32 lanes.
///
/// With AVX2 a channel is unpacked by one byte shuffle (its byte of each
/// pixel into the low byte of a dword), and four channels are packed by
/// two saturating dword->word packs, one word->byte pack and one shuffle
/// back into pixel order: 16 instructions per 8 pixels where shifts, masks,
/// clamps and ORs took 28.  The saturation does the clamp: values are
/// limited to 255 in float first (`min(255, x)`, which also keeps NaN, so
/// `cvtps2dq` turns it into `i32::MIN`, which saturates to 0 as unorm
/// packing wants), and everything below 0 saturates to 0.
mod bytes {
    use ferropipe_components::shader::{ILanes, Lanes, ULanes};
    use ferropipe_components::simd::X86V3;

    /// Per-batch shuffle tables for one byte order: the byte positions for
    /// the portable path, and the `vpshufb` tables the AVX2 path uses when
    /// the running clone has it (ARCHITECTURE.md, "SIMD levels").
    #[derive(Clone, Copy, Debug)]
    pub(crate) struct Shuffles {
        /// Channel c of each pixel to the low byte of its dword.
        unpack: [[u8; 32]; 4],
        /// Channel-major bytes (after the packs) back to pixel order.
        pack: [u8; 32],
        /// Pixels to [`Words`]: channels 0 and 1, channels 2 and 3.
        unpack16: [[u8; 32]; 2],
        /// Words an absent channel reads (alpha 255) in the second vector.
        absent_hi: [i16; 16],
        /// `byte[c]`: the byte of the pixel holding channel c (255: absent).
        byte: [u8; 4],
    }

    /// `byte[c]`: the byte of the pixel holding RGBA channel c (255:
    /// absent; absent channels unpack as 0 and pack nothing).
    pub fn shuffles(byte: [u8; 4]) -> Shuffles {
        let unpack = std::array::from_fn(|c| {
            let mut idx = [0x80u8; 32];
            if byte[c] != 255 {
                for half in 0..2 {
                    for px in 0..4 {
                        idx[half * 16 + px * 4] = (px * 4) as u8 + byte[c];
                    }
                }
            }
            idx
        });
        // After the packs a 128-bit half holds [c0 px0..3, c1 px0..3,
        // c2 px0..3, c3 px0..3]; memory byte k of pixel px is the channel
        // stored there.
        let mut pack = [0x80u8; 32];
        for half in 0..2 {
            for px in 0..4 {
                for c in 0..4 {
                    if byte[c] != 255 {
                        pack[half * 16 + px * 4 + byte[c] as usize] = (c * 4 + px) as u8;
                    }
                }
            }
        }
        // Words: in each 128-bit half (pixels 4h..4h+3), words 0..3 hold the
        // first channel of the four pixels, words 4..7 the second, the
        // order the dword->word pack leaves channels in.
        let unpack16 = std::array::from_fn(|v| {
            let mut w = [0x80u8; 32];
            for half in 0..2 {
                for j in 0..8 {
                    let c = 2 * v + j / 4;
                    if byte[c] != 255 {
                        w[half * 16 + 2 * j] = ((j % 4) * 4) as u8 + byte[c];
                    }
                }
            }
            w
        });
        let mut absent_hi = [0i16; 16];
        if byte[3] == 255 {
            for half in 0..2 {
                for j in 4..8 {
                    absent_hi[half * 8 + j] = 0xff;
                }
            }
        }
        Shuffles {
            unpack,
            pack,
            unpack16,
            absent_hi,
            byte,
        }
    }

    /// Channel c of eight pixels as integers 0..=255 (0 when absent).
    #[inline(always)]
    pub fn unpack(v3: Option<X86V3>, px: ULanes, t: &Shuffles, c: usize) -> ILanes {
        #[cfg(target_arch = "x86_64")]
        if v3.is_some() {
            // SAFETY: an `X86V3` token exists only on a CPU with AVX2 and FMA.
            return unsafe { avx2::unpack(px, t, c) };
        }
        if t.byte[c] == 255 {
            return ILanes::ZERO;
        }
        let v = px.unbounded_shr_scalar(8 * t.byte[c] as u32) & ULanes::splat(0xff);
        bytemuck::cast(v)
    }

    /// Packs four channels in [0, 1] (anything else is clamped, NaN to 0)
    /// into eight pixels; absent channels' bytes are 0.
    #[inline(always)]
    pub fn pack(v3: Option<X86V3>, q: &[Lanes; 4], t: &Shuffles) -> ULanes {
        let k255 = Lanes::splat(255.0);
        // min(255, x): vminps returns its second operand (x) for NaN.
        let v = |c: usize| k255.fast_min(q[c] * k255).fast_round_int();
        pack_ints(v3, &[v(0), v(1), v(2), v(3)], t)
    }

    /// Packs four channels of integers (at most 255; anything below 0
    /// saturates to 0) into eight pixels; absent channels' bytes are 0.
    #[inline(always)]
    pub(crate) fn pack_ints(v3: Option<X86V3>, v: &[ILanes; 4], t: &Shuffles) -> ULanes {
        #[cfg(target_arch = "x86_64")]
        if v3.is_some() {
            // SAFETY: an `X86V3` token exists only on a CPU with AVX2 and FMA.
            return unsafe { avx2::pack_ints(v, t) };
        }
        let mut out = ULanes::ZERO;
        for c in 0..4 {
            if t.byte[c] != 255 {
                let x = v[c].max(ILanes::ZERO).cast_unsigned();
                out |= x.unbounded_shl_scalar(8 * t.byte[c] as u32);
            }
        }
        out
    }

    /// Four channels of eight pixels as 16-bit words in two vectors
    /// (channels 0 and 1, channels 2 and 3), the layout of the saturating
    /// dword->word packs: the hot blend equations run on these, sixteen
    /// values per `vpmullw` (bytes times bytes fit in 16 bits, and
    /// `mul_norm`'s sums stay below 65,408).
    #[cfg(target_arch = "x86_64")]
    pub type Words = [core::arch::x86_64::__m256i; 2];

    /// The AVX2 forms.  Each is `#[target_feature(enable = "avx2")]`, so
    /// it inlines into the x86-64-v3 clones that call it and nowhere else;
    /// the intrinsics exist whatever the build's own target features.
    ///
    /// # Safety
    /// Every function here needs a CPU with AVX2.
    #[cfg(target_arch = "x86_64")]
    pub(crate) mod avx2 {
        use core::arch::x86_64::{
            __m256i, _mm256_add_epi16, _mm256_mullo_epi16, _mm256_or_si256, _mm256_packus_epi16,
            _mm256_packus_epi32, _mm256_set1_epi16, _mm256_shuffle_epi8, _mm256_srli_epi16,
        };

        use super::{Shuffles, Words};
        use ferropipe_components::shader::{ILanes, ULanes};

        #[inline(always)]
        fn m(v: ILanes) -> __m256i {
            bytemuck::cast(v)
        }

        #[inline(always)]
        fn table(t: &[u8; 32]) -> __m256i {
            bytemuck::cast(*t)
        }

        /// [`super::unpack`].
        #[target_feature(enable = "avx2")]
        #[inline]
        pub(crate) fn unpack(px: ULanes, t: &Shuffles, c: usize) -> ILanes {
            let v = _mm256_shuffle_epi8(bytemuck::cast(px), table(&t.unpack[c]));
            bytemuck::cast(v)
        }

        /// [`super::pack_ints`]: two saturating dword->word packs, one
        /// word->byte pack and one shuffle back into pixel order.
        #[target_feature(enable = "avx2")]
        #[inline]
        pub(crate) fn pack_ints(v: &[ILanes; 4], t: &Shuffles) -> ULanes {
            let lo = _mm256_packus_epi32(m(v[0]), m(v[1]));
            let hi = _mm256_packus_epi32(m(v[2]), m(v[3]));
            let b = _mm256_packus_epi16(lo, hi);
            bytemuck::cast(_mm256_shuffle_epi8(b, table(&t.pack)))
        }

        /// Byte values (0..=255) of four channels as [`Words`].
        #[target_feature(enable = "avx2")]
        #[inline]
        pub(crate) fn words_of_ints(v: &[ILanes; 4]) -> Words {
            [
                _mm256_packus_epi32(m(v[0]), m(v[1])),
                _mm256_packus_epi32(m(v[2]), m(v[3])),
            ]
        }

        /// One byte channel as both halves of a word vector (a factor
        /// shared by two channels), or `a` beside `b`.
        #[target_feature(enable = "avx2")]
        #[inline]
        pub(crate) fn word_pair(a: ILanes, b: ILanes) -> __m256i {
            _mm256_packus_epi32(m(a), m(b))
        }

        /// The pixels' channels as [`Words`] (absent channels 0, absent
        /// alpha 255).
        #[target_feature(enable = "avx2")]
        #[inline]
        pub(crate) fn words_of_pixels(px: ULanes, t: &Shuffles) -> Words {
            let p: __m256i = bytemuck::cast(px);
            [
                _mm256_shuffle_epi8(p, table(&t.unpack16[0])),
                _mm256_or_si256(
                    _mm256_shuffle_epi8(p, table(&t.unpack16[1])),
                    bytemuck::cast(t.absent_hi),
                ),
            ]
        }

        /// [`Words`] (at most 510; the byte pack saturates to 255) to
        /// pixels.
        #[target_feature(enable = "avx2")]
        #[inline]
        pub(crate) fn pack_words(w: &Words, t: &Shuffles) -> ULanes {
            let b = _mm256_packus_epi16(w[0], w[1]);
            bytemuck::cast(_mm256_shuffle_epi8(b, table(&t.pack)))
        }

        /// `mul_norm` on words.
        #[target_feature(enable = "avx2")]
        #[inline]
        pub(crate) fn mul_norm_words(a: __m256i, b: __m256i) -> __m256i {
            let t = _mm256_mullo_epi16(a, b);
            let t = _mm256_add_epi16(t, _mm256_srli_epi16::<8>(t));
            _mm256_srli_epi16::<8>(_mm256_add_epi16(t, _mm256_set1_epi16(0x80)))
        }

        /// Word-wise sum (the byte pack saturates it).
        #[target_feature(enable = "avx2")]
        #[inline]
        pub(crate) fn add_words(a: __m256i, b: __m256i) -> __m256i {
            _mm256_add_epi16(a, b)
        }
    }
}

/// What [`store_batch_unorm8`] needs besides the plan.
/// What [`store_batch_unorm8`] needs besides the plan.
pub(super) struct Unorm8Batch<'a, C: SlotColors> {
    pub target: &'a ColorTarget,
    pub rt: &'a RtBlendState,
    pub groups: &'a [StoreGroup],
    /// The colours to store, per group.
    pub colors: &'a C,
    /// The second source colours (dual-source blending), if bound.
    pub colors1: Option<&'a C>,
    /// Blend colour, clamped.
    pub cc: Quad,
}

/// The blend equations common enough to get their own monomorphised loop
/// (`blend_overdraw`'s "over" with `ONE, INV_SRC_ALPHA` alpha, additive
/// particles, premultiplied alpha); everything else runs the table.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kernel {
    /// RGB `SRC_ALPHA, INV_SRC_ALPHA`; alpha the same or `ONE, INV_SRC_ALPHA`.
    Over {
        alpha_one: bool,
    },
    /// `ONE, INV_SRC_ALPHA` everywhere.
    Premultiplied,
    /// `ONE, ONE` everywhere.
    Additive,
    Table,
}

fn kernel_of(rt: &RtBlendState) -> Kernel {
    use BlendFactor::{InvSrcAlpha, One, SrcAlpha};
    if rt.rgb_func != BlendFunc::Add || rt.alpha_func != BlendFunc::Add {
        return Kernel::Table;
    }
    let rgb = (rt.rgb_src_factor, rt.rgb_dst_factor);
    let alpha = (rt.alpha_src_factor, rt.alpha_dst_factor);
    match (rgb, alpha) {
        ((SrcAlpha, InvSrcAlpha), (SrcAlpha, InvSrcAlpha)) => Kernel::Over { alpha_one: false },
        ((SrcAlpha, InvSrcAlpha), (One, InvSrcAlpha)) => Kernel::Over { alpha_one: true },
        ((One, InvSrcAlpha), (One, InvSrcAlpha)) => Kernel::Premultiplied,
        ((One, One), (One, One)) => Kernel::Additive,
        _ => Kernel::Table,
    }
}

/// Stores a batch into an RGBA8-family target.  Groups that cannot take
/// the two-row path (hanging off the surface) are pushed to `leftover`
/// for the per-pixel store.
#[multiversion(
    targets("x86_64+avx2+fma+bmi1+bmi2+lzcnt+popcnt+f16c+movbe"),
    attrs(allow(dead_code))
)]
pub(super) fn store_batch_unorm8<C: SlotColors>(
    plan: &Unorm8Plan,
    b: &Unorm8Batch<'_, C>,
    leftover: &mut Vec<usize>,
) {
    // SAFETY: the expression is true only in the x86-64-v3 clone (run
    // where the CPU has those features) or in a build that requires them.
    let v3 = unsafe {
        X86V3::in_clone(multiversion::target::target_cfg_f!(all(
            target_feature = "avx2",
            target_feature = "fma"
        )))
    };
    store_batch_at(v3, plan, b, leftover)
}

/// [`store_batch_unorm8`] at one SIMD level: AVX2 with the token.
#[inline(always)]
fn store_batch_at<C: SlotColors>(
    v3: Option<X86V3>,
    plan: &Unorm8Plan,
    b: &Unorm8Batch<'_, C>,
    leftover: &mut Vec<usize>,
) {
    let sh = plan.shuffles;
    let Some(blend) = &plan.blend else {
        return store_groups(
            v3,
            plan,
            b,
            leftover,
            |s| bytes::pack(v3, s, &sh),
            |p, _, _| *p,
        );
    };
    // The kernels are the table's operations for their factors (a factor
    // of ONE multiplies exactly), so every path writes the same bytes; with
    // AVX2 they run on 16-bit words (`bytes::Words`): on 32-bit lanes
    // (`vpmulld`) `blend_overdraw` took 44.6 ms against 31.0 ms for the
    // float blend before; on words it is at parity (0.96x the CPU time).
    // Each is split into the source's half (once per colour) and the
    // destination's (per group).
    let kernel = kernel_of(b.rt);
    #[cfg(target_arch = "x86_64")]
    if v3.is_some() {
        // SAFETY (each `word_kernels` call below): an `X86V3` token exists
        // only on a CPU with AVX2.
        match kernel {
            Kernel::Over { alpha_one } => {
                return store_groups(
                    v3,
                    plan,
                    b,
                    leftover,
                    |s| unsafe { word_kernels::over_src(s, alpha_one) },
                    |p, old, _| unsafe { word_kernels::over(p, old, &sh) },
                );
            }
            Kernel::Premultiplied => {
                return store_groups(
                    v3,
                    plan,
                    b,
                    leftover,
                    |s| unsafe { word_kernels::premultiplied_src(s) },
                    |p, old, _| unsafe { word_kernels::premultiplied(p, old, &sh) },
                );
            }
            Kernel::Additive => {
                return store_groups(
                    v3,
                    plan,
                    b,
                    leftover,
                    |s| unsafe { word_kernels::additive_src(s) },
                    |p, old, _| unsafe { word_kernels::additive(p, old, &sh) },
                );
            }
            Kernel::Table => {}
        }
    }
    let k255 = ILanes::splat(0xff);
    match kernel {
        Kernel::Over { alpha_one } => store_bytes(v3, plan, b, leftover, |s, d, _| {
            let a = s[3];
            let ia = a ^ k255;
            let alpha = if alpha_one { s[3] } else { mul_norm(s[3], a) };
            [
                add_sat(mul_norm(s[0], a), mul_norm(d[0], ia)),
                add_sat(mul_norm(s[1], a), mul_norm(d[1], ia)),
                add_sat(mul_norm(s[2], a), mul_norm(d[2], ia)),
                add_sat(alpha, mul_norm(d[3], ia)),
            ]
        }),
        Kernel::Premultiplied => store_bytes(v3, plan, b, leftover, |s, d, _| {
            let ia = s[3] ^ k255;
            [
                add_sat(s[0], mul_norm(d[0], ia)),
                add_sat(s[1], mul_norm(d[1], ia)),
                add_sat(s[2], mul_norm(d[2], ia)),
                add_sat(s[3], mul_norm(d[3], ia)),
            ]
        }),
        Kernel::Additive => store_bytes(v3, plan, b, leftover, |s, d, _| {
            [
                add_sat(s[0], d[0]),
                add_sat(s[1], d[1]),
                add_sat(s[2], d[2]),
                add_sat(s[3], d[3]),
            ]
        }),
        Kernel::Table => {
            let mut table = [ILanes::ZERO; TABLE];
            table[T_ONE] = k255;
            for c in 0..4 {
                table[T_CONST + c] = unit_to_byte(b.cc[c]);
            }
            let zero = Lanes::ZERO;
            let one = Lanes::ONE;
            store_bytes(v3, plan, b, leftover, |src, dst, g| {
                let src1: ByteQuad = match b.colors1 {
                    Some(c1) if blend.uses_src1 => {
                        let q = c1.color(v3, g);
                        std::array::from_fn(|c| unit_to_byte(q[c].fast_max(zero).fast_min(one)))
                    }
                    _ => [ILanes::ZERO; 4],
                };
                blend_table(blend, &mut table, src, &src1, dst)
            })
        }
    }
}

/// The common blend equations on 16-bit words (`bytes::Words`), AVX2 only.
///
/// # Safety
/// Every function here needs a CPU with AVX2.
#[cfg(target_arch = "x86_64")]
mod word_kernels {
    use super::Quad;
    use super::bytes::Shuffles;
    use super::bytes::Words;
    use super::bytes::avx2::{
        add_words, mul_norm_words, pack_words, word_pair, words_of_ints, words_of_pixels,
    };
    use core::arch::x86_64::{__m256i, _mm256_cvtps_epi32, _mm256_mul_ps, _mm256_set1_ps};
    use ferropipe_components::shader::{ILanes, Lanes, ULanes};

    /// The source's bytes as words, and its alpha bytes.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn src_words(s: &Quad) -> (Words, ILanes) {
        // [`super::unit_to_byte`] in AVX2 (`wide`'s form is two SSE halves
        // in a baseline build, even here).  A nested `#[inline(always)]`
        // function, not a closure: closures keep featureless bodies.
        /// # Safety
        /// The CPU has AVX2.
        #[inline(always)]
        unsafe fn byte(x: Lanes) -> ILanes {
            // SAFETY: the caller's contract.
            unsafe {
                bytemuck::cast(_mm256_cvtps_epi32(_mm256_mul_ps(
                    bytemuck::cast(x),
                    _mm256_set1_ps(255.0),
                )))
            }
        }
        // SAFETY: this function runs only with AVX2 (its contract).
        let v = unsafe { [byte(s[0]), byte(s[1]), byte(s[2]), byte(s[3])] };
        (words_of_ints(&v), v[3])
    }

    /// [`super::Kernel::Over`]'s source half: the source times its
    /// factors, and the destination's factor.
    #[derive(Clone, Copy)]
    pub(super) struct OverSrc {
        terms: Words,
        ia: __m256i,
    }

    /// [`OverSrc`] of `s`.
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(super) fn over_src(s: &Quad, alpha_one: bool) -> OverSrc {
        let k255 = ILanes::splat(0xff);
        let (ws, a) = src_words(s);
        let fa = word_pair(a, a);
        let ia = word_pair(a ^ k255, a ^ k255);
        let fa_hi = if alpha_one { word_pair(a, k255) } else { fa };
        OverSrc {
            terms: [mul_norm_words(ws[0], fa), mul_norm_words(ws[1], fa_hi)],
            ia,
        }
    }

    /// [`super::Kernel::Over`]: `src * factor + dst * (1 - src alpha)`.
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(super) fn over(p: &OverSrc, old: ULanes, sh: &Shuffles) -> ULanes {
        let d = words_of_pixels(old, sh);
        let out = [
            add_words(p.terms[0], mul_norm_words(d[0], p.ia)),
            add_words(p.terms[1], mul_norm_words(d[1], p.ia)),
        ];
        pack_words(&out, sh)
    }

    /// [`super::Kernel::Premultiplied`]'s source half: the source's words
    /// and `1 - src alpha`.
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(super) fn premultiplied_src(s: &Quad) -> (Words, __m256i) {
        let k255 = ILanes::splat(0xff);
        let (ws, a) = src_words(s);
        (ws, word_pair(a ^ k255, a ^ k255))
    }

    /// [`super::Kernel::Premultiplied`].
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(super) fn premultiplied(p: &(Words, __m256i), old: ULanes, sh: &Shuffles) -> ULanes {
        let (ws, ia) = *p;
        let d = words_of_pixels(old, sh);
        let out = [
            add_words(ws[0], mul_norm_words(d[0], ia)),
            add_words(ws[1], mul_norm_words(d[1], ia)),
        ];
        pack_words(&out, sh)
    }

    /// [`super::Kernel::Additive`]'s source half: the source's words.
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(super) fn additive_src(s: &Quad) -> Words {
        src_words(s).0
    }

    /// [`super::Kernel::Additive`].
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(super) fn additive(ws: &Words, old: ULanes, sh: &Shuffles) -> ULanes {
        let d = words_of_pixels(old, sh);
        pack_words(&[add_words(ws[0], d[0]), add_words(ws[1], d[1])], sh)
    }
}

/// [`store_groups`] with a blend closure `f(src, dst, group)` on bytes in
/// 32-bit lanes.
#[inline(always)]
fn store_bytes<C: SlotColors>(
    v3: Option<X86V3>,
    plan: &Unorm8Plan,
    b: &Unorm8Batch<'_, C>,
    leftover: &mut Vec<usize>,
    mut f: impl FnMut(&ByteQuad, &ByteQuad, usize) -> ByteQuad,
) {
    let sh = plan.shuffles;
    let absent = plan.absent.map(ILanes::splat);
    store_groups(
        v3,
        plan,
        b,
        leftover,
        |src| -> ByteQuad {
            [
                unit_to_byte(src[0]),
                unit_to_byte(src[1]),
                unit_to_byte(src[2]),
                unit_to_byte(src[3]),
            ]
        },
        |s, old, g| {
            let unpack = |c: usize| bytes::unpack(v3, old, &sh, c) | absent[c];
            let dst: ByteQuad = [unpack(0), unpack(1), unpack(2), unpack(3)];
            bytes::pack_ints(v3, &f(s, &dst, g), &sh)
        },
    )
}

/// The group loop, monomorphised per kernel: `prepare(src)` is the
/// kernel's source half (`src` clamped to [0, 1]), `apply(prepared, old
/// pixels, group)` its destination half, returning the new pixels.  Groups
/// whose colour the source says is the previous prepared group's
/// ([`SlotColors::same_color`]: a constant colour over a primitive, as in
/// blend_overdraw and fill_overdraw) reuse its prepared half, which for
/// the "over" blend is the clamp, the conversion to bytes and the
/// source's two products (~35 of ~110 instructions a group).  The loads,
/// the clamp, the mask and the stores go through the `lanes` helpers at
/// the clone's level: in a baseline build's AVX2 clone their `wide` forms
/// were two SSE halves each, +17 % of this function's instructions on
/// blend_overdraw.
#[inline(always)]
fn store_groups<C: SlotColors, P: Copy>(
    v3: Option<X86V3>,
    plan: &Unorm8Plan,
    b: &Unorm8Batch<'_, C>,
    leftover: &mut Vec<usize>,
    mut prepare: impl FnMut(&Quad) -> P,
    mut apply: impl FnMut(&P, ULanes, usize) -> ULanes,
) {
    let n = b.groups.len();
    let mem: &TargetMemory = &b.target.mem;
    let bits = plan.write_bits();
    let write_bits = ULanes::splat(bits);
    // Padding bytes (X channels) keep their contents, as the per-pixel path
    // keeps them, so only a store of all 32 bits may skip the load.
    let full_channels = bits == u32::MAX;
    let zero = Lanes::ZERO;
    let one = Lanes::ONE;
    let blending = plan.blend.is_some();
    // A local copy (LLVM cannot tell that the stores below leave the
    // source's slices alone, and reloaded them per group: +10
    // instructions a group on blend_overdraw), and every group's colour
    // there, which lets LLVM drop the per-group bounds checks.
    let colors = *b.colors;
    assert!(colors.holds(n), "a colour source shorter than its batch");
    let Some(at) = mem.rows32() else {
        leftover.extend((0..n).filter(|&g| b.groups[g].mask != 0));
        return;
    };
    // The last prepared group and its source half.
    let mut prepared: Option<(usize, P)> = None;
    // By index, not `enumerate`: `g < n` is then what LLVM sees, with the
    // assert above enough to drop the colour reads' bounds checks.
    for g in 0..n {
        let grp = &b.groups[g];
        if grp.mask == 0 {
            continue;
        }
        let Some(rows) = at.at(grp.x, grp.y) else {
            leftover.push(g);
            continue;
        };
        let p = match prepared {
            Some((last, p)) if colors.same_color(last, g) => p,
            _ => {
                // Explicit four-element arrays, not `array::from_fn`: the
                // latter was left as an out-of-line call per group (6 % of
                // blend_overdraw).
                let [c0, c1, c2, c3] = colors.color(v3, g);
                let src: Quad = [
                    clamp_at(v3, c0, zero, one),
                    clamp_at(v3, c1, zero, one),
                    clamp_at(v3, c2, zero, one),
                    clamp_at(v3, c3, zero, one),
                ];
                let p = prepare(&src);
                prepared = Some((g, p));
                p
            }
        };
        let need_old = blending || grp.mask != 0xff || !full_channels;
        let old = if need_old {
            // SAFETY: rows from GroupRows32::at; tile jobs own disjoint
            // pixels.
            unsafe { mem.load_group32_at(v3, rows) }
        } else {
            ULanes::ZERO
        };
        let new = apply(&p, old, g);
        let lane_mask: ULanes = bytemuck::cast(mask_lanes_at(v3, grp.mask));
        let out = select_bits_at(v3, lane_mask & write_bits, new, old);
        // SAFETY: as above.
        unsafe { mem.store_group32_at(v3, rows, out) };
    }
}

#[cfg(test)]
mod tests {
    use super::super::{ColorFormat, ColorSource, GroupStore, OutputRows, store_group_generic};
    use super::*;
    use ferropipe_components::format::Format;

    /// A tiny xorshift so the test needs no dependency and is reproducible.
    struct Rng(u32);
    impl Rng {
        fn next(&mut self) -> u32 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 17;
            self.0 ^= self.0 << 5;
            self.0
        }
        fn unit(&mut self) -> f32 {
            // [-0.25, 1.25): out-of-range values exercise the clamps.
            (self.next() % 1500) as f32 / 1000.0 - 0.25
        }
    }

    fn target(pixels: &mut [u8], format: Format) -> ColorTarget {
        let mem = TargetMemory {
            ptr: pixels.as_mut_ptr(),
            len: pixels.len(),
            base: 0,
            row_stride: 4 * 4,
            bpp: 4,
            width: 4,
            height: 2,
            samples: 1,
            sample_stride: 0,
        };
        ColorTarget::new(mem, format).unwrap()
    }

    /// Runs one random group through both paths and compares the bytes.
    fn check(rng: &mut Rng, format: Format, rt: &RtBlendState) {
        let ColorFormat::Unorm8x4 { byte, .. } = ColorFormat::classify(format).unwrap() else {
            panic!("{format} is not on the fast path");
        };
        let mask = if rng.next().is_multiple_of(2) {
            0xff
        } else {
            rng.next() as u8
        };
        let outputs: Vec<Lanes> = (0..8)
            .map(|_| Lanes::new(std::array::from_fn(|_| rng.unit())))
            .collect();
        let cc: Quad = std::array::from_fn(|_| Lanes::splat(rng.unit().clamp(0.0, 1.0)));
        let start: Vec<u8> = (0..32).map(|_| rng.next() as u8).collect();
        let group = StoreGroup { x: 0, y: 0, mask };

        // Both SIMD levels, whatever this build's target features: the
        // portable kernels, and the AVX2 ones where the CPU has it.
        let levels = [None, X86V3::detect()];
        let mut fast = Vec::new();
        for (level, v3) in levels.into_iter().enumerate() {
            if level > 0 && v3.is_none() {
                continue;
            }
            let mut bytes = start.clone();
            let t = target(&mut bytes, format);
            let plan = Unorm8Plan::new(rt, byte, rt.colormask, rt.blend_enable);
            let rows = OutputRows {
                outputs: &outputs,
                groups: 1,
            };
            let (c0, c1) = (rows.slot(0), rows.slot(1));
            let batch = Unorm8Batch {
                target: &t,
                rt,
                groups: &[group],
                colors: &c0,
                colors1: Some(&c1),
                cc,
            };
            let mut leftover = Vec::new();
            store_batch_at(v3, &plan, &batch, &mut leftover);
            assert!(leftover.is_empty());
            if level == 0 {
                fast = bytes;
            } else {
                assert_eq!(bytes, fast, "levels differ: {format} {rt:?} mask {mask:#x}");
            }
        }

        let mut general = start.clone();
        let t = target(&mut general, format);
        let quad = |s: usize| -> Quad {
            std::array::from_fn(|c| {
                outputs[s * 4 + c]
                    .fast_max(Lanes::ZERO)
                    .fast_min(Lanes::ONE)
            })
        };
        let args = GroupStore {
            gx: 0,
            gy: 0,
            mask,
            colormask: rt.colormask,
            blending: rt.blend_enable,
            clamp: true,
            logicop: None,
        };
        store_group_generic(rt, &t, &args, &quad(0), &quad(1), &cc);
        assert_eq!(fast, general, "{format} {rt:?} mask {mask:#x}");
    }

    const FORMATS: [Format; 3] = [
        Format::R8G8B8A8_UNORM,
        Format::B8G8R8A8_UNORM,
        Format::B8G8R8X8_UNORM,
    ];

    /// The batch path writes exactly the bytes the general per-pixel path
    /// writes, for every blend factor and function, byte order, lane mask
    /// and colour mask.
    #[test]
    fn batch_store_matches_general_store() {
        let mut rng = Rng(0x1234_5678);
        for format in FORMATS {
            for &func in BlendFunc::ALL {
                for &sf in BlendFactor::ALL {
                    for &df in BlendFactor::ALL {
                        let rt = RtBlendState {
                            blend_enable: !rng.next().is_multiple_of(8),
                            rgb_func: func,
                            rgb_src_factor: sf,
                            rgb_dst_factor: df,
                            alpha_func: BlendFunc::ALL[rng.next() as usize % 5],
                            alpha_src_factor: BlendFactor::ALL[rng.next() as usize % 19],
                            alpha_dst_factor: BlendFactor::ALL[rng.next() as usize % 19],
                            colormask: (rng.next() % 16) as u8,
                        };
                        check(&mut rng, format, &rt);
                    }
                }
            }
        }
    }

    /// The monomorphised kernels (over, premultiplied, additive) agree with
    /// the general path bit for bit.
    #[test]
    fn special_kernels_match_general_store() {
        use BlendFactor::{InvSrcAlpha, One, SrcAlpha};
        let mut rng = Rng(0x9e37_79b9);
        let modes = [
            ((SrcAlpha, InvSrcAlpha), (SrcAlpha, InvSrcAlpha)),
            ((SrcAlpha, InvSrcAlpha), (One, InvSrcAlpha)),
            ((One, InvSrcAlpha), (One, InvSrcAlpha)),
            ((One, One), (One, One)),
        ];
        for format in FORMATS {
            for ((sf, df), (asf, adf)) in modes {
                let mut rt = RtBlendState {
                    blend_enable: true,
                    rgb_func: BlendFunc::Add,
                    rgb_src_factor: sf,
                    rgb_dst_factor: df,
                    alpha_func: BlendFunc::Add,
                    alpha_src_factor: asf,
                    alpha_dst_factor: adf,
                    colormask: 0xf,
                };
                assert_ne!(kernel_of(&rt), Kernel::Table);
                for _ in 0..200 {
                    rt.colormask = if rng.next().is_multiple_of(2) {
                        0xf
                    } else {
                        (rng.next() % 16) as u8
                    };
                    check(&mut rng, format, &rt);
                }
            }
        }
    }

    /// llvmpipe's 8-bit blend of one channel, transcribed from
    /// `lp_bld_blend.c` / `lp_bld_blend_aos.c` / `lp_bld_arit.c` as scalar
    /// code: bytes in, a byte out.
    fn llvmpipe_channel(
        rt: &RtBlendState,
        c: usize,
        s: [u32; 4],
        s1: [u32; 4],
        d: [u32; 4],
        k: [u32; 4],
    ) -> u32 {
        use BlendFactor::*;
        let mul = |a: u32, b: u32| {
            let t = a * b;
            (t + (t >> 8) + 0x80) >> 8
        };
        let factor = |f: BlendFactor| match f {
            Zero => 0,
            One => 255,
            SrcColor => s[c],
            SrcAlpha => s[3],
            DstColor => d[c],
            DstAlpha => d[3],
            SrcAlphaSaturate if c == 3 => 255,
            SrcAlphaSaturate => s[3].min(255 - d[3]),
            ConstColor => k[c],
            ConstAlpha => k[3],
            Src1Color => s1[c],
            Src1Alpha => s1[3],
            InvSrcColor => 255 - s[c],
            InvSrcAlpha => 255 - s[3],
            InvDstColor => 255 - d[c],
            InvDstAlpha => 255 - d[3],
            InvConstColor => 255 - k[c],
            InvConstAlpha => 255 - k[3],
            InvSrc1Color => 255 - s1[c],
            InvSrc1Alpha => 255 - s1[3],
        };
        let (func, sf, df) = if c < 3 {
            (rt.rgb_func, rt.rgb_src_factor, rt.rgb_dst_factor)
        } else {
            (rt.alpha_func, rt.alpha_src_factor, rt.alpha_dst_factor)
        };
        let ts = mul(s[c], factor(sf));
        let td = mul(d[c], factor(df));
        match func {
            BlendFunc::Add => (ts + td).min(255),
            BlendFunc::Subtract => ts.saturating_sub(td),
            BlendFunc::ReverseSubtract => td.saturating_sub(ts),
            BlendFunc::Min => s[c].min(d[c]),
            BlendFunc::Max => s[c].max(d[c]),
        }
    }

    /// The lanes compute llvmpipe's bytes for every factor pair and
    /// function, from shader values converted as `lp_build_conv` does.
    #[test]
    fn blend_bytes_match_llvmpipe_transcription() {
        let mut rng = Rng(0x2545_f491);
        let to_byte = |x: f32| (x.clamp(0.0, 1.0) * 255.0).round_ties_even() as u32;
        for &func in BlendFunc::ALL {
            for &sf in BlendFactor::ALL {
                for &df in BlendFactor::ALL {
                    let rt = RtBlendState {
                        blend_enable: true,
                        rgb_func: func,
                        rgb_src_factor: sf,
                        rgb_dst_factor: df,
                        alpha_func: BlendFunc::ALL[rng.next() as usize % 5],
                        alpha_src_factor: BlendFactor::ALL[rng.next() as usize % 19],
                        alpha_dst_factor: BlendFactor::ALL[rng.next() as usize % 19],
                        colormask: 0xf,
                    };
                    let unit = |rng: &mut Rng| rng.unit().clamp(0.0, 1.0);
                    let src: Quad = std::array::from_fn(|_| {
                        Lanes::new(std::array::from_fn(|_| unit(&mut rng)))
                    });
                    let src1: Quad = std::array::from_fn(|_| {
                        Lanes::new(std::array::from_fn(|_| unit(&mut rng)))
                    });
                    let cc: Quad = std::array::from_fn(|_| Lanes::splat(unit(&mut rng)));
                    let dst: ByteQuad = std::array::from_fn(|_| {
                        ILanes::new(std::array::from_fn(|_| (rng.next() % 256) as i32))
                    });
                    let got = blend_bytes(&BlendBytes::new(&rt), &src, &src1, &dst, &cc);
                    for l in 0..8 {
                        let s = std::array::from_fn(|c| to_byte(src[c].as_array()[l]));
                        let s1 = std::array::from_fn(|c| to_byte(src1[c].as_array()[l]));
                        let d = std::array::from_fn(|c| dst[c].as_array()[l] as u32);
                        let k = std::array::from_fn(|c| to_byte(cc[c].as_array()[l]));
                        for c in 0..4 {
                            let want = llvmpipe_channel(&rt, c, s, s1, d, k);
                            assert_eq!(
                                got[c].as_array()[l] as u32,
                                want,
                                "{rt:?} channel {c} s {s:?} s1 {s1:?} d {d:?} k {k:?}"
                            );
                        }
                    }
                }
            }
        }
    }

    /// `lp_build_mul_norm` is not `a * b / 255` rounded: 24 of the 65,536
    /// byte products land just above a half and round down (152 * 229 /
    /// 255 = 136.502 gives 136), which the lanes keep.
    #[test]
    fn mul_norm_keeps_llvmpipes_rounding() {
        let got = mul_norm(ILanes::splat(152), ILanes::splat(229));
        assert_eq!(got.as_array()[0], 136);
        let mut off = 0;
        for a in 0..256 {
            for b in 0..256 {
                let m = mul_norm(ILanes::splat(a), ILanes::splat(b)).as_array()[0];
                if m != ((a * b) as f64 / 255.0).round() as i32 {
                    off += 1;
                }
            }
        }
        assert_eq!(off, 24);
    }

    /// A group hanging off the surface is handed back, not written.
    #[test]
    fn off_surface_group_is_left_over() {
        let mut px = vec![7u8; 32];
        let t = target(&mut px, Format::R8G8B8A8_UNORM);
        let rt = RtBlendState::default();
        let ColorFormat::Unorm8x4 { byte, .. } = t.kind else {
            unreachable!()
        };
        let plan = Unorm8Plan::new(&rt, byte, 0xf, false);
        let outputs = vec![Lanes::ONE; 4];
        let rows = OutputRows {
            outputs: &outputs,
            groups: 1,
        };
        let rows = rows.slot(0);
        let batch = Unorm8Batch {
            target: &t,
            rt: &rt,
            groups: &[StoreGroup {
                x: 2,
                y: 0,
                mask: 0xff,
            }],
            colors: &rows,
            colors1: None,
            cc: [Lanes::ZERO; 4],
        };
        let mut leftover = Vec::new();
        store_batch_unorm8(&plan, &batch, &mut leftover);
        assert_eq!(leftover, vec![0]);
        assert!(px.iter().all(|&b| b == 7));
    }
}
