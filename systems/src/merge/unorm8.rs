//! The RGBA8-family colour store of llvmpipe's `generate_unswizzled_blend`
//! (`lp_state_fs.c`): one batch of shaded 4x2 groups blended into and
//! stored to a 32-bit unorm8 target, with every per-state decision taken
//! once per batch instead of once per group and channel.
//!
//! Why a separate path: the general store ([`super::blend`]) matches the
//! blend factor and function per channel per group (eight `match`es and a
//! loop with data-dependent `continue`s per 8 pixels), which profiled at
//! ~50 cycles per group on `blend_overdraw` (a third of the frame).  Here
//! the state is resolved into [`Unorm8Plan`] first: each blend factor is a
//! *table index plus an affine map* (`k * value + b`, so `INV_*` factors are
//! `-1 * value + 1`) and the blend function's sign is folded into it, so
//! blending a channel is two loads and three FMAs with no branches.  `MIN`
//! and `MAX` (which ignore the factors) keep the general blend.
//!
//! The arithmetic is the general path's, in the same order (f32 lanes,
//! destination unpacked as `byte * (1/255)`, round-to-nearest-even on
//! packing), so both paths produce identical bytes; the test at the bottom
//! checks that for every factor and function.

use ferropipe_components::enums::{BlendFactor, BlendFunc};
use ferropipe_components::shader::{Lanes, ULanes};
use ferropipe_components::state::RtBlendState;

use super::{ColorTarget, Quad, StoreGroup, TargetMemory, blend};
use crate::fragment::mask_lanes;

/// Entries of the per-group value table factors index into.
const T_ZERO: usize = 0;
const T_ONE: usize = 1;
const T_SRC: usize = 2;
const T_DST: usize = 6;
const T_CONST: usize = 10;
const T_SRC1: usize = 14;
const T_SATURATE: usize = 18;
const TABLE: usize = 19;

/// One blend factor of one channel, resolved: `k * table[at] + b`, with
/// the blend function's sign folded into `k` and `b`.
#[derive(Clone, Copy, Debug)]
struct Factor {
    at: usize,
    k: f32,
    b: f32,
}

/// How one colour buffer of one batch is stored.
#[derive(Clone, Copy, Debug)]
pub(super) struct Unorm8Plan {
    /// Byte shuffles of the target's byte order.
    shuffles: bytes::Shuffles,
    /// Bits of the pixel channel c may write (0 when absent or masked).
    write: [u32; 4],
    /// Destination channel c as read: `byte * scale + default` (absent
    /// channels read 0, absent alpha reads 1).
    scale: [f32; 4],
    default: [f32; 4],
    /// Per channel (source factor, destination factor); `None` without
    /// blending or when the general blend must run (MIN / MAX).
    factors: Option<[(Factor, Factor); 4]>,
    blending: bool,
    uses_src1: bool,
    uses_saturate: bool,
}

impl Unorm8Plan {
    /// `byte[c]`: the byte holding RGBA channel c (255: absent).
    pub(super) fn new(rt: &RtBlendState, byte: [u8; 4], colormask: u8, blending: bool) -> Self {
        let mut plan = Unorm8Plan {
            shuffles: bytes::shuffles(byte),
            write: [0; 4],
            scale: [0.0; 4],
            default: [0.0, 0.0, 0.0, 1.0],
            factors: None,
            blending,
            uses_src1: false,
            uses_saturate: false,
        };
        for c in 0..4 {
            if byte[c] == 255 {
                continue;
            }
            plan.scale[c] = 1.0 / 255.0;
            plan.default[c] = 0.0;
            if colormask & (1 << c) != 0 {
                plan.write[c] = 0xff << (8 * byte[c] as u32);
            }
        }
        if blending {
            plan.factors = resolve_factors(rt);
            plan.uses_src1 = plan
                .factors
                .is_some_and(|f| f.iter().any(|(s, d)| is_src1(s) || is_src1(d)));
            plan.uses_saturate = plan.factors.is_some_and(|f| {
                f.iter()
                    .any(|(s, d)| s.at == T_SATURATE || d.at == T_SATURATE)
            });
        }
        plan
    }

    fn write_bits(&self) -> u32 {
        self.write.iter().fold(0, |m, w| m | w)
    }
}

fn is_src1(f: &Factor) -> bool {
    (T_SRC1..T_SRC1 + 4).contains(&f.at)
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

/// Resolves every channel's factors, or `None` for MIN / MAX.
fn resolve_factors(rt: &RtBlendState) -> Option<[(Factor, Factor); 4]> {
    let sign = |func: BlendFunc| match func {
        BlendFunc::Add => Some((1.0, 1.0)),
        BlendFunc::Subtract => Some((1.0, -1.0)),
        BlendFunc::ReverseSubtract => Some((-1.0, 1.0)),
        BlendFunc::Min | BlendFunc::Max => None,
    };
    let make = |f: BlendFactor, c: usize, s: f32| {
        let (at, inv) = factor_source(f, c);
        let (k, b) = if inv { (-1.0, 1.0) } else { (1.0, 0.0) };
        Factor {
            at,
            k: k * s,
            b: b * s,
        }
    };
    let (rs, rd) = sign(rt.rgb_func)?;
    let (as_, ad) = sign(rt.alpha_func)?;
    Some(std::array::from_fn(|c| {
        if c < 3 {
            (
                make(rt.rgb_src_factor, c, rs),
                make(rt.rgb_dst_factor, c, rd),
            )
        } else {
            (
                make(rt.alpha_src_factor, c, as_),
                make(rt.alpha_dst_factor, c, ad),
            )
        }
    }))
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

    #[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
    use safe_arch::{
        m256i, pack_i16_to_u8_m256i, pack_i32_to_u16_m256i, shuffle_av_i8z_half_m256i,
    };

    /// Per-batch shuffle tables for one byte order.
    #[derive(Clone, Copy, Debug)]
    pub struct Shuffles {
        /// Channel c of each pixel to the low byte of its dword.
        #[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
        unpack: [m256i; 4],
        /// Channel-major bytes (after the packs) back to pixel order.
        #[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
        pack: m256i,
        #[cfg(not(all(target_arch = "x86_64", target_feature = "avx2")))]
        byte: [u8; 4],
    }

    /// `byte[c]`: the byte of the pixel holding RGBA channel c (255:
    /// absent; absent channels unpack as 0 and pack nothing).
    pub fn shuffles(byte: [u8; 4]) -> Shuffles {
        #[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
        {
            let unpack = std::array::from_fn(|c| {
                let mut idx = [0x80u8; 32];
                if byte[c] != 255 {
                    for half in 0..2 {
                        for px in 0..4 {
                            idx[half * 16 + px * 4] = (px * 4) as u8 + byte[c];
                        }
                    }
                }
                m256i::from(idx)
            });
            // After the packs a 128-bit half holds [c0 px0..3, c1 px0..3,
            // c2 px0..3, c3 px0..3]; memory byte k of pixel px is the
            // channel stored there.
            let mut idx = [0x80u8; 32];
            for half in 0..2 {
                for px in 0..4 {
                    for c in 0..4 {
                        if byte[c] != 255 {
                            idx[half * 16 + px * 4 + byte[c] as usize] = (c * 4 + px) as u8;
                        }
                    }
                }
            }
            Shuffles {
                unpack,
                pack: m256i::from(idx),
            }
        }
        #[cfg(not(all(target_arch = "x86_64", target_feature = "avx2")))]
        Shuffles { byte }
    }

    /// Channel c of eight pixels as integers 0..=255 (0 when absent).
    #[inline(always)]
    pub fn unpack(px: ULanes, t: &Shuffles, c: usize) -> ILanes {
        #[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
        {
            let v = shuffle_av_i8z_half_m256i(m256i::from(px.to_array()), t.unpack[c]);
            ILanes::new(<[i32; 8]>::from(v))
        }
        #[cfg(not(all(target_arch = "x86_64", target_feature = "avx2")))]
        {
            if t.byte[c] == 255 {
                return ILanes::ZERO;
            }
            let v = px.unbounded_shr_scalar(8 * t.byte[c] as u32) & ULanes::splat(0xff);
            wide::bytemuck::cast(v)
        }
    }

    /// Packs four channels in [0, 1] (anything else is clamped, NaN to 0)
    /// into eight pixels; absent channels' bytes are 0.
    #[inline(always)]
    pub fn pack(q: &[Lanes; 4], t: &Shuffles) -> ULanes {
        let k255 = Lanes::splat(255.0);
        // min(255, x): vminps returns its second operand (x) for NaN.
        let v = |c: usize| k255.fast_min(q[c] * k255).fast_round_int();
        #[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
        {
            let m = |c: usize| m256i::from(v(c).to_array());
            let lo = pack_i32_to_u16_m256i(m(0), m(1));
            let hi = pack_i32_to_u16_m256i(m(2), m(3));
            let b = pack_i16_to_u8_m256i(lo, hi);
            ULanes::new(<[u32; 8]>::from(shuffle_av_i8z_half_m256i(b, t.pack)))
        }
        #[cfg(not(all(target_arch = "x86_64", target_feature = "avx2")))]
        {
            let mut out = ULanes::ZERO;
            for c in 0..4 {
                if t.byte[c] != 255 {
                    let x = v(c).max(ILanes::ZERO).cast_unsigned();
                    out |= x.unbounded_shl_scalar(8 * t.byte[c] as u32);
                }
            }
            out
        }
    }
}

/// What [`store_batch_unorm8`] needs besides the plan.
pub(super) struct Unorm8Batch<'a> {
    pub target: &'a ColorTarget,
    pub rt: &'a RtBlendState,
    pub groups: &'a [StoreGroup],
    /// FS outputs `[slot][comp][group]`.
    pub outputs: &'a [Lanes],
    pub slot: usize,
    pub slot1: Option<usize>,
    /// Blend colour, clamped.
    pub cc: Quad,
}

/// The blend equations common enough to get their own monomorphised loop
/// (`blend_overdraw`'s "over" with `ONE, INV_SRC_ALPHA` alpha, additive
/// particles, premultiplied alpha); everything else runs the table.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kernel {
    Replace,
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

fn kernel_of(rt: &RtBlendState, blending: bool) -> Kernel {
    use BlendFactor::{InvSrcAlpha, One, SrcAlpha};
    if !blending {
        return Kernel::Replace;
    }
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
pub(super) fn store_batch_unorm8(
    plan: &Unorm8Plan,
    b: &Unorm8Batch<'_>,
    leftover: &mut Vec<usize>,
) {
    // The closures repeat the general blend's operations in its order
    // (`s * sf + d * df`, `1 - a` for inverse factors), so the bits agree.
    let one = Lanes::ONE;
    match kernel_of(b.rt, plan.blending) {
        Kernel::Replace => store_groups(plan, b, leftover, |s, _, _| *s),
        Kernel::Over { alpha_one } => store_groups(plan, b, leftover, |s, d, _| {
            let a = s[3];
            let ia = one - a;
            let alpha = if alpha_one {
                s[3] + d[3] * ia
            } else {
                s[3] * a + d[3] * ia
            };
            [
                s[0] * a + d[0] * ia,
                s[1] * a + d[1] * ia,
                s[2] * a + d[2] * ia,
                alpha,
            ]
        }),
        Kernel::Premultiplied => store_groups(plan, b, leftover, |s, d, _| {
            let ia = one - s[3];
            [
                s[0] + d[0] * ia,
                s[1] + d[1] * ia,
                s[2] + d[2] * ia,
                s[3] + d[3] * ia,
            ]
        }),
        Kernel::Additive => store_groups(plan, b, leftover, |s, d, _| {
            [s[0] + d[0], s[1] + d[1], s[2] + d[2], s[3] + d[3]]
        }),
        Kernel::Table => {
            let mut table = [Lanes::ZERO; TABLE];
            table[T_ONE] = one;
            table[T_CONST..T_CONST + 4].copy_from_slice(&b.cc);
            let n = b.groups.len();
            store_groups(plan, b, leftover, |src, dst, g| {
                let src1: Quad = match b.slot1 {
                    Some(s1) if plan.uses_src1 || plan.factors.is_none() => {
                        std::array::from_fn(|c| {
                            b.outputs[(s1 * 4 + c) * n + g]
                                .fast_max(Lanes::ZERO)
                                .fast_min(one)
                        })
                    }
                    _ => [Lanes::ZERO; 4],
                };
                let Some(factors) = &plan.factors else {
                    return blend(b.rt, src, &src1, dst, &b.cc);
                };
                table[T_SRC..T_SRC + 4].copy_from_slice(src);
                table[T_DST..T_DST + 4].copy_from_slice(dst);
                table[T_SRC1..T_SRC1 + 4].copy_from_slice(&src1);
                if plan.uses_saturate {
                    table[T_SATURATE] = src[3].min(one - dst[3]);
                }
                std::array::from_fn(|c| {
                    let (fs, fd) = factors[c];
                    let sf = table[fs.at].mul_add(Lanes::splat(fs.k), Lanes::splat(fs.b));
                    let df = table[fd.at].mul_add(Lanes::splat(fd.k), Lanes::splat(fd.b));
                    src[c] * sf + dst[c] * df
                })
            })
        }
    }
}

/// The group loop, monomorphised per blend closure `f(src, dst, group)`.
#[inline(always)]
fn store_groups(
    plan: &Unorm8Plan,
    b: &Unorm8Batch<'_>,
    leftover: &mut Vec<usize>,
    mut f: impl FnMut(&Quad, &Quad, usize) -> Quad,
) {
    let n = b.groups.len();
    let mem: &TargetMemory = &b.target.mem;
    let write_bits = plan.write_bits();
    // Padding bytes (X channels) keep their contents, as the per-pixel path
    // keeps them, so only a store of all 32 bits may skip the load.
    let full_channels = write_bits == u32::MAX;
    let zero = Lanes::ZERO;
    let one = Lanes::ONE;
    let shuffles = plan.shuffles;
    let scale = plan.scale.map(Lanes::splat);
    let default = plan.default.map(Lanes::splat);
    for (g, grp) in b.groups.iter().enumerate() {
        if grp.mask == 0 {
            continue;
        }
        let Some(rows) = mem.group_rows32(grp.x, grp.y) else {
            leftover.push(g);
            continue;
        };
        // Explicit four-element arrays, not `array::from_fn`: the latter
        // was left as an out-of-line call per group (6 % of blend_overdraw).
        let load = |c: usize| {
            b.outputs[(b.slot * 4 + c) * n + g]
                .fast_max(zero)
                .fast_min(one)
        };
        let src: Quad = [load(0), load(1), load(2), load(3)];
        let need_old = plan.blending || grp.mask != 0xff || !full_channels;
        let old = if need_old {
            // SAFETY: rows from group_rows32; tile jobs own disjoint pixels.
            ULanes::new(unsafe { mem.load_group32(rows) })
        } else {
            ULanes::ZERO
        };
        let result = if plan.blending {
            let unpack = |c: usize| {
                Lanes::from_i32x8(bytes::unpack(old, &shuffles, c)).mul_add(scale[c], default[c])
            };
            let dst: Quad = [unpack(0), unpack(1), unpack(2), unpack(3)];
            f(&src, &dst, g)
        } else {
            src
        };
        let new = bytes::pack(&result, &shuffles);
        let lane_mask: ULanes = wide::bytemuck::cast(mask_lanes(grp.mask));
        let w = lane_mask & ULanes::splat(write_bits);
        let out = (new & w) | (old & !w);
        // SAFETY: as above.
        unsafe { mem.store_group32(rows, out.to_array()) };
    }
}

#[cfg(test)]
mod tests {
    use super::super::{ColorFormat, GroupStore, store_group_generic};
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

        let mut fast = start.clone();
        let t = target(&mut fast, format);
        let plan = Unorm8Plan::new(rt, byte, rt.colormask, rt.blend_enable);
        let batch = Unorm8Batch {
            target: &t,
            rt,
            groups: &[group],
            outputs: &outputs,
            slot: 0,
            slot1: Some(1),
            cc,
        };
        let mut leftover = Vec::new();
        store_batch_unorm8(&plan, &batch, &mut leftover);
        assert!(leftover.is_empty());

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
                assert_ne!(kernel_of(&rt, true), Kernel::Table);
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
        let batch = Unorm8Batch {
            target: &t,
            rt: &rt,
            groups: &[StoreGroup {
                x: 2,
                y: 0,
                mask: 0xff,
            }],
            outputs: &outputs,
            slot: 0,
            slot1: None,
            cc: [Lanes::ZERO; 4],
        };
        let mut leftover = Vec::new();
        store_batch_unorm8(&plan, &batch, &mut leftover);
        assert_eq!(leftover, vec![0]);
        assert!(px.iter().all(|&b| b == 7));
    }
}
