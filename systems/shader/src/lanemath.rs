//! The WGSL built-in library over SIMD lanes.
//!
//! Every value travels as [`Lanes`] (`f32x8`); integer and boolean views are
//! free bit casts.  Booleans are masks: all bits set for true.  The
//! functions here are `#[inline(always)]` so that the interpreter's per-op
//! loops (and a future JIT's helper calls) compile to straight SIMD code.
//!
//! Precision: arithmetic, `sqrt`, conversions, rounding and all integer and
//! bit operations are exact (IEEE / WGSL).  Transcendentals use `wide`'s
//! polynomial approximations (Cephes-style, a few ulp over the ranges
//! shaders use), which is as good as or better than llvmpipe's
//! `lp_build_sin`/`exp2`/`log2`; the unit tests bound the error against
//! `std`.  `pow(x, y)` is `exp2(y * log2(x))`, as GLSL and llvmpipe define
//! it, with its own log2 and exp2 ([`pow`]).

use ferropipe_components::shader::{ILanes, Lanes, ULanes};
use ferropipe_components::simd::X86V3;
use wide::{f32x8, i32x8, u32x8};

use crate::ir::{Axis, BinOp, PackFn, TriOp, UnOp, UnpackFn};

/// Integer view of a register.
#[inline(always)]
pub fn as_i(v: Lanes) -> ILanes {
    bytemuck::cast(v)
}
/// Unsigned view of a register.
#[inline(always)]
pub fn as_u(v: Lanes) -> ULanes {
    bytemuck::cast(v)
}
/// Register from an integer view.
#[inline(always)]
pub fn from_i(v: ILanes) -> Lanes {
    bytemuck::cast(v)
}
/// Register from an unsigned view.
#[inline(always)]
pub fn from_u(v: ULanes) -> Lanes {
    bytemuck::cast(v)
}
/// A register holding the same bits in every lane.
#[inline(always)]
pub fn splat_bits(bits: u32) -> Lanes {
    from_u(u32x8::splat(bits))
}
/// Mask register: all-ones where `b`.
#[inline(always)]
pub fn mask_from_bools(b: [bool; 8]) -> Lanes {
    from_u(u32x8::new(b.map(|x| if x { !0 } else { 0 })))
}

/// Applies a scalar function lane by lane (for operations without a SIMD
/// form: integer division, bit scans).
#[inline(always)]
fn per_lane_u(a: Lanes, f: impl Fn(u32) -> u32) -> Lanes {
    from_u(u32x8::new(as_u(a).to_array().map(f)))
}

#[inline(always)]
fn per_lane_u2(a: Lanes, b: Lanes, f: impl Fn(u32, u32) -> u32) -> Lanes {
    let a = as_u(a).to_array();
    let b = as_u(b).to_array();
    from_u(u32x8::new(std::array::from_fn(|i| f(a[i], b[i]))))
}

#[inline(always)]
fn per_lane_u3(a: Lanes, b: Lanes, c: Lanes, f: impl Fn(u32, u32, u32) -> u32) -> Lanes {
    let a = as_u(a).to_array();
    let b = as_u(b).to_array();
    let c = as_u(c).to_array();
    from_u(u32x8::new(std::array::from_fn(|i| f(a[i], b[i], c[i]))))
}

#[inline(always)]
fn bool_to_mask(m: Lanes) -> Lanes {
    m
}

/// 1.0 where the mask is set, else 0.0.
#[inline(always)]
fn mask_to_one(m: Lanes) -> Lanes {
    m & f32x8::ONE
}

/// f32 -> u32 with WGSL semantics (truncate, saturate, NaN -> 0).
#[inline(always)]
pub fn f32_to_u32(a: Lanes) -> Lanes {
    const TWO31: f32 = 2147483648.0;
    let nan_free = a & a.simd_eq(a);
    let pos = nan_free.max(f32x8::ZERO);
    let big = pos.simd_ge(f32x8::splat(TWO31));
    let adj = big.select(pos - f32x8::splat(TWO31), pos);
    let lo = as_u(from_i(adj.trunc_int()));
    let r = lo ^ (as_u(big) & u32x8::splat(0x8000_0000));
    let over = pos.simd_ge(f32x8::splat(4294967296.0));
    from_u(as_u(over) | r)
}

/// u32 -> f32, correctly rounded.
#[inline(always)]
pub fn u32_to_f32(a: Lanes) -> Lanes {
    let u = as_u(a);
    let hi = f32x8::from_i32x8(as_i(from_u(u >> 16)));
    let lo = f32x8::from_i32x8(as_i(from_u(u & u32x8::splat(0xffff))));
    hi.mul_add(f32x8::splat(65536.0), lo)
}

/// f32 -> f16 bits (round to nearest even, overflow to infinity), as WGSL
/// `pack2x16float` and `quantizeToF16` need: the same conversion as the
/// half-float texture formats ([`ferropipe_components::pack::f32_to_f16`],
/// the `half` crate), so a value packed by a shader and one stored by a
/// format round alike.
pub fn f32_to_f16_bits(x: f32) -> u16 {
    ferropipe_components::pack::f32_to_f16(x)
}

/// f16 bits -> f32 (exact).
pub fn f16_bits_to_f32(h: u16) -> f32 {
    ferropipe_components::pack::f16_to_f32(h)
}

/// Every lane rounded to the nearest IEEE half value, kept as an f32
/// (WGSL `quantizeToF16`, and the rounding after every f16 operation,
/// docs/shaders.md "f16"): round to nearest even, overflow to ±infinity
/// (from ±65520, the midpoint above the largest half 65504), results below
/// 2^-14 as half subnormals (multiples of 2^-24), NaN quiet with its top
/// ten mantissa bits, so exactly `f16_bits_to_f32(f32_to_f16_bits(x))`
/// (the `half` crate's conversion) for all 2^32 inputs, in ~12 SIMD ops
/// instead of 8 scalar round trips.
/// * Normal range (|x| >= 2^-14): adding `0xfff` plus the lowest kept
///   mantissa bit to the f32 bits and clearing the low 13 bits rounds the
///   23-bit mantissa to 10 bits, ties to even; a carry moves into the
///   exponent, which is the right result (1.11..1 rounds up to 2.0).
/// * Subnormal range: `(|x| + 0.5) - 0.5`.  In [0.5, 1) the f32 spacing is
///   2^-24, the half subnormal spacing, so the add rounds |x| to a multiple
///   of 2^-24 with the FPU's ties-to-even and the subtraction is exact
///   (Sterbenz).  Values that round up to 2^-14 come out as 2^-14.
#[inline(always)]
pub fn quantize_f16(a: Lanes) -> Lanes {
    let bits: u32x8 = as_u(a);
    let sign = bits & u32x8::splat(0x8000_0000);
    let mag: u32x8 = bits & u32x8::splat(0x7fff_ffff);
    // normal: round the mantissa to 10 bits
    let odd: u32x8 = (mag >> 13) & u32x8::splat(1);
    let rounded: u32x8 = (mag + u32x8::splat(0x0fff) + odd) & u32x8::splat(0xffff_e000);
    // 65520 and above (after rounding: above 65504) overflow
    let inf = u32x8::splat(0x7f80_0000);
    let over = rounded.simd_gt(u32x8::splat(0x477f_e000));
    let normal = (over & inf) | (!over & rounded);
    // subnormal: round to a multiple of 2^-24
    let half = f32x8::splat(0.5);
    let sub = as_u((from_u(mag) + half) - half);
    let small = mag.simd_lt(u32x8::splat(0x3880_0000)); // 2^-14
    let finite = (small & sub) | (!small & normal);
    // NaN: quiet, top ten mantissa bits kept (the half crate's choice)
    let nan = mag.simd_gt(inf);
    let qnan = (mag & u32x8::splat(0xffff_e000)) | u32x8::splat(0x0040_0000);
    from_u(sign | (nan & qnan) | (!nan & finite))
}

#[inline(always)]
fn popcount(v: ULanes) -> ULanes {
    let v = v - ((v >> 1) & u32x8::splat(0x5555_5555));
    let v = (v & u32x8::splat(0x3333_3333)) + ((v >> 2) & u32x8::splat(0x3333_3333));
    let v = (v + (v >> 4)) & u32x8::splat(0x0f0f_0f0f);
    (v * u32x8::splat(0x0101_0101)) >> 24
}

#[inline(always)]
fn reverse_bits(v: ULanes) -> ULanes {
    let v = ((v >> 1) & u32x8::splat(0x5555_5555)) | ((v & u32x8::splat(0x5555_5555)) << 1);
    let v = ((v >> 2) & u32x8::splat(0x3333_3333)) | ((v & u32x8::splat(0x3333_3333)) << 2);
    let v = ((v >> 4) & u32x8::splat(0x0f0f_0f0f)) | ((v & u32x8::splat(0x0f0f_0f0f)) << 4);
    let v = ((v >> 8) & u32x8::splat(0x00ff_00ff)) | ((v & u32x8::splat(0x00ff_00ff)) << 8);
    (v >> 16) | (v << 16)
}

/// `ldexp(x, e)` exact for every representable result.
#[inline(always)]
fn ldexp(x: Lanes, e: Lanes) -> Lanes {
    let e = as_i(e).max(i32x8::splat(-300)).min(i32x8::splat(300));
    // two factors so each stays a normal power of two
    let e1 = e >> 1u32;
    let e2 = e - e1;
    let pow2 = |k: ILanes| -> Lanes {
        let k = k.max(i32x8::splat(-126)).min(i32x8::splat(127));
        from_i((k + i32x8::splat(127)) << 23u32)
    };
    let r = x * pow2(e1) * pow2(e2);
    // a third factor for the extremes (|e| > 254 fits denormal/overflow)
    let rest = e
        - e1.max(i32x8::splat(-126)).min(i32x8::splat(127))
        - e2.max(i32x8::splat(-126)).min(i32x8::splat(127));
    r * pow2(rest)
}

#[inline(always)]
fn frexp_parts(a: Lanes) -> (Lanes, Lanes) {
    let arr = a.to_array();
    let mut m = [0f32; 8];
    let mut e = [0i32; 8];
    for i in 0..8 {
        let x = arr[i];
        if x == 0.0 || !x.is_finite() {
            m[i] = x;
            e[i] = 0;
            continue;
        }
        let (xs, bias) = if x.abs() < f32::MIN_POSITIVE {
            (x * 16_777_216.0, 24)
        } else {
            (x, 0)
        };
        let bits = xs.to_bits();
        let exp = ((bits >> 23) & 0xff) as i32;
        e[i] = exp - 126 - bias;
        m[i] = f32::from_bits((bits & !(0xff << 23)) | (126 << 23));
    }
    (f32x8::new(m), from_i(i32x8::new(e)))
}

/// WGSL `min(a, b)`: `b < a ? b : a` (so `min(+0, -0)` is `+0`); that is
/// exactly x86 `minps(b, a)`.
#[inline(always)]
pub fn wgsl_min(a: Lanes, b: Lanes) -> Lanes {
    b.fast_min(a)
}

/// WGSL `max(a, b)`: `a < b ? b : a`, i.e. `maxps(b, a)`.
#[inline(always)]
pub fn wgsl_max(a: Lanes, b: Lanes) -> Lanes {
    b.fast_max(a)
}

/// One-operand op on lanes.
#[inline(always)]
pub fn un(f: UnOp, a: Lanes) -> Lanes {
    match f {
        UnOp::FNeg => -a,
        UnOp::FAbs => a.abs(),
        UnOp::FFloor => a.floor(),
        UnOp::FCeil => a.ceil(),
        UnOp::FTrunc => a.trunc(),
        UnOp::FRound => a.round_ties_even(),
        UnOp::FFract => a - a.floor(),
        UnOp::FSqrt => a.sqrt(),
        UnOp::FInvSqrt => f32x8::ONE / a.sqrt(),
        UnOp::FSin => a.sin(),
        UnOp::FCos => a.cos(),
        UnOp::FTan => a.tan(),
        UnOp::FAsin => a.asin(),
        UnOp::FAcos => a.acos(),
        UnOp::FAtan => a.atan(),
        UnOp::FSinh => a.sinh(),
        UnOp::FCosh => a.cosh(),
        UnOp::FTanh => a.tanh(),
        UnOp::FAsinh => {
            let x = a.abs();
            let r = (x + (x * x + f32x8::ONE).sqrt()).ln();
            r.copysign(a)
        }
        UnOp::FAcosh => (a + (a * a - f32x8::ONE).sqrt()).ln(),
        UnOp::FAtanh => f32x8::HALF * ((f32x8::ONE + a) / (f32x8::ONE - a)).ln(),
        UnOp::FExp => a.exp(),
        UnOp::FExp2 => a.exp2(),
        UnOp::FLog => a.ln(),
        UnOp::FLog2 => a.log2(),
        UnOp::FSign => {
            let pos = a.simd_gt(f32x8::ZERO) & f32x8::ONE;
            let neg = a.simd_lt(f32x8::ZERO) & f32x8::splat(-1.0);
            pos | neg
        }
        UnOp::FSaturate => wgsl_min(wgsl_max(a, f32x8::ZERO), f32x8::ONE),
        UnOp::FIsNan => bool_to_mask(a.simd_ne(a)),
        UnOp::FIsInf => a.abs().simd_eq(f32x8::splat(f32::INFINITY)),
        UnOp::FFrexpMant => frexp_parts(a).0,
        UnOp::FFrexpExp => frexp_parts(a).1,
        UnOp::FQuantizeF16 => quantize_f16(a),
        UnOp::F2S => from_i(a.trunc_int()),
        UnOp::F2U => f32_to_u32(a),
        UnOp::S2F => f32x8::from_i32x8(as_i(a)),
        UnOp::U2F => u32_to_f32(a),
        UnOp::INeg => from_i(i32x8::ZERO - as_i(a)),
        UnOp::SAbs => from_i(as_i(a).abs()),
        UnOp::SSign => {
            let i = as_i(a);
            let pos = i.simd_gt(i32x8::ZERO) & i32x8::ONE;
            let neg = i.simd_lt(i32x8::ZERO);
            from_i(pos | neg)
        }
        UnOp::Not => from_u(!as_u(a)),
        UnOp::CountOneBits => from_u(popcount(as_u(a))),
        UnOp::ReverseBits => from_u(reverse_bits(as_u(a))),
        UnOp::UFirstLeadingBit => per_lane_u(a, |x| {
            if x == 0 {
                u32::MAX
            } else {
                31 - x.leading_zeros()
            }
        }),
        UnOp::SFirstLeadingBit => per_lane_u(a, |x| {
            let v = if (x as i32) < 0 { !x } else { x };
            if v == 0 {
                u32::MAX
            } else {
                31 - v.leading_zeros()
            }
        }),
        UnOp::FirstTrailingBit => {
            per_lane_u(a, |x| if x == 0 { u32::MAX } else { x.trailing_zeros() })
        }
        UnOp::CountLeadingZeros => per_lane_u(a, |x| x.leading_zeros()),
        UnOp::CountTrailingZeros => per_lane_u(a, |x| x.trailing_zeros()),
    }
}

/// `pow(x, y)` as `exp2(y * log2(x))`, GLSL's and llvmpipe's definition,
/// with a log2 and an exp2 made for it: the operation is evaluated the
/// same way as `wide`'s `log2`/`exp2` (range reduction, then an odd
/// series or a Taylor polynomial, then the exponent back) but with the
/// special cases as selects on the two ends instead of `wide`'s per-step
/// checks and early exits, about 60 instructions instead of 170.  `pow`
/// was a quarter of `pbr_barrels`' time at one thread (8 per pixel: the
/// Fresnel term per light, the 2.2 and 1/2.2 gammas per channel).
/// Accuracy: within 2e-7 of `f64` over the ranges shaders use (unit
/// tests), as good as `wide`'s.  Both back ends and the constant folder
/// call this one function, so they stay bit for bit alike.
///
/// At a SIMD level: with the token, the same operations in the
/// same order as 256-bit instructions ([`pow_avx2`]); without it, on
/// `wide`, whose `f32x8` in a baseline build is two SSE halves and whose
/// `mul_add` is a multiply and an add (`pbr_barrels`' pows took 2.5x the
/// time of a v3 build's inside the v3 helper clone).  Bit for bit the same
/// either way (`simd_levels_agree`).
#[inline(always)]
pub fn pow_at(v3: Option<X86V3>, x: Lanes, y: Lanes) -> Lanes {
    #[cfg(target_arch = "x86_64")]
    if v3.is_some() {
        // SAFETY: an `X86V3` token exists only on a CPU with AVX2 and FMA.
        return unsafe { pow_avx2::pow(x, y) };
    }
    let _ = v3;
    exp2_for_pow(y * log2_for_pow(x))
}

/// [`log2_for_pow`] and [`exp2_for_pow`] on AVX2 intrinsics, step for
/// step.  `mul_add` is fused only where `wide`'s is (a build with FMA), so
/// the bits match the portable form in every build.
#[cfg(target_arch = "x86_64")]
mod pow_avx2 {
    use core::arch::x86_64::{
        __m256, __m256i, _CMP_EQ_OQ, _CMP_GT_OQ, _CMP_LT_OQ, _CMP_NEQ_UQ, _mm256_add_epi32,
        _mm256_add_ps, _mm256_and_si256, _mm256_blendv_ps, _mm256_castps_si256,
        _mm256_castsi256_ps, _mm256_cmp_ps, _mm256_cvtepi32_ps, _mm256_cvtps_epi32, _mm256_div_ps,
        _mm256_floor_ps, _mm256_mul_ps, _mm256_or_ps, _mm256_or_si256, _mm256_set1_epi32,
        _mm256_set1_ps, _mm256_slli_epi32, _mm256_srai_epi32, _mm256_sub_epi32, _mm256_sub_ps,
    };

    use super::{POW_EXP2_RANGE, POW_EXP2_TAYLOR, POW_LOG2_SERIES};
    use ferropipe_components::shader::Lanes;

    #[target_feature(enable = "avx2,fma")]
    #[inline]
    fn mul_add(a: __m256, b: __m256, c: __m256) -> __m256 {
        #[cfg(target_feature = "fma")]
        return core::arch::x86_64::_mm256_fmadd_ps(a, b, c);
        #[cfg(not(target_feature = "fma"))]
        _mm256_add_ps(_mm256_mul_ps(a, b), c)
    }

    /// `mask ? t : f`.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn select(mask: __m256, t: __m256, f: __m256) -> __m256 {
        _mm256_blendv_ps(f, t, mask)
    }

    /// `pow(x, y)`.
    ///
    /// # Safety
    /// The CPU has AVX2 and FMA.
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    pub(super) unsafe fn pow(x: Lanes, y: Lanes) -> Lanes {
        let (x, y): (__m256, __m256) = (bytemuck::cast(x), bytemuck::cast(y));
        bytemuck::cast(exp2(_mm256_mul_ps(y, log2(x))))
    }

    #[target_feature(enable = "avx2,fma")]
    #[inline]
    fn log2(x: __m256) -> __m256 {
        let k = |i: usize| _mm256_set1_ps(f32::from_bits(POW_LOG2_SERIES[i]));
        let i = _mm256_set1_epi32;
        let one = _mm256_set1_ps(1.0);
        let sub = _mm256_cmp_ps::<_CMP_LT_OQ>(x, _mm256_set1_ps(f32::MIN_POSITIVE));
        let xs = select(sub, _mm256_mul_ps(x, _mm256_set1_ps(8_388_608.0)), x);
        let bits: __m256i = _mm256_castps_si256(xs);
        let e = _mm256_sub_epi32(
            _mm256_and_si256(_mm256_srai_epi32::<23>(bits), i(0xff)),
            i(127),
        );
        let e = _mm256_sub_epi32(e, _mm256_and_si256(_mm256_castps_si256(sub), i(23)));
        let m = _mm256_castsi256_ps(_mm256_or_si256(
            _mm256_and_si256(bits, i(0x007f_ffff)),
            i(0x3f80_0000),
        ));
        let big = _mm256_cmp_ps::<_CMP_GT_OQ>(m, _mm256_set1_ps(std::f32::consts::SQRT_2));
        let m = select(big, _mm256_mul_ps(m, _mm256_set1_ps(0.5)), m);
        let e = _mm256_sub_epi32(e, _mm256_castps_si256(big));
        let t = _mm256_div_ps(_mm256_sub_ps(m, one), _mm256_add_ps(m, one));
        let t2 = _mm256_mul_ps(t, t);
        let poly = mul_add(t2, k(4), k(3));
        let poly = mul_add(poly, t2, k(2));
        let poly = mul_add(poly, t2, k(1));
        let poly = mul_add(poly, t2, k(0));
        let r = mul_add(t, poly, _mm256_cvtepi32_ps(e));
        let zero = _mm256_set1_ps(0.0);
        let r = select(
            _mm256_cmp_ps::<_CMP_EQ_OQ>(x, zero),
            _mm256_set1_ps(f32::NEG_INFINITY),
            r,
        );
        let inf = _mm256_set1_ps(f32::INFINITY);
        let r = select(_mm256_cmp_ps::<_CMP_EQ_OQ>(x, inf), inf, r);
        let bad = _mm256_or_ps(
            _mm256_cmp_ps::<_CMP_LT_OQ>(x, zero),
            _mm256_cmp_ps::<_CMP_NEQ_UQ>(x, x),
        );
        select(bad, _mm256_set1_ps(f32::NAN), r)
    }

    #[target_feature(enable = "avx2,fma")]
    #[inline]
    fn exp2(y: __m256) -> __m256 {
        let k = |i: usize| _mm256_set1_ps(f32::from_bits(POW_EXP2_TAYLOR[i]));
        let (lo, hi) = (
            _mm256_set1_ps(POW_EXP2_RANGE.0),
            _mm256_set1_ps(POW_EXP2_RANGE.1),
        );
        let yc = select(_mm256_cmp_ps::<_CMP_GT_OQ>(y, lo), y, lo);
        let yc = select(_mm256_cmp_ps::<_CMP_LT_OQ>(yc, hi), yc, hi);
        let i = _mm256_floor_ps(_mm256_add_ps(yc, _mm256_set1_ps(0.5)));
        let f = _mm256_sub_ps(yc, i);
        let p = mul_add(f, k(6), k(5));
        let p = mul_add(p, f, k(4));
        let p = mul_add(p, f, k(3));
        let p = mul_add(p, f, k(2));
        let p = mul_add(p, f, k(1));
        let p = mul_add(p, f, k(0));
        let p = mul_add(p, f, _mm256_set1_ps(1.0));
        let i = _mm256_cvtps_epi32(i);
        let i1 = _mm256_srai_epi32::<1>(i);
        let i2 = _mm256_sub_epi32(i, i1);
        let scale = |k: __m256i| {
            _mm256_castsi256_ps(_mm256_slli_epi32::<23>(_mm256_add_epi32(
                k,
                _mm256_set1_epi32(127),
            )))
        };
        let r = _mm256_mul_ps(_mm256_mul_ps(p, scale(i1)), scale(i2));
        select(
            _mm256_cmp_ps::<_CMP_NEQ_UQ>(y, y),
            _mm256_set1_ps(f32::NAN),
            r,
        )
    }
}

/// `2 / (k ln 2)` for k = 1, 3, 5, 7, 9: [`log2_for_pow`]'s odd series,
/// as bits: exact, and the same values whoever reads them.  (An inline
/// Cranelift `pow` on these constants was tried: byte-identical, but
/// `pbr_barrels` took 25 % more CPU than with the helper call, Cranelift's
/// 128-bit code for a 300-op region spilling around it.)
pub(crate) const POW_LOG2_SERIES: [u32; 5] = [
    0x4038_aa3b,
    0x3f76_384f,
    0x3f13_bb63,
    0x3ed3_0bb1,
    0x3ea4_258a,
];
/// `ln(2)^k / k!` for k = 1..=7: [`exp2_for_pow`]'s Taylor polynomial.
pub(crate) const POW_EXP2_TAYLOR: [u32; 7] = [
    0x3f31_7218,
    0x3e75_fdf0,
    0x3d63_5847,
    0x3c1d_955b,
    0x3aae_c3ff,
    0x3921_8489,
    0x377f_e5fe,
];
/// [`exp2_for_pow`]'s clamp: below -150 every result is 0, from 128 on
/// every result is +inf, and 2^i for i in the clamp splits into two
/// normal halves.
pub(crate) const POW_EXP2_RANGE: (f32, f32) = (-151.0, 129.0);

/// `log2(x)`: `x = m 2^e` with `m` in [sqrt(1/2), sqrt(2)), then
/// `log2(m) = 2/ln 2 (t + t^3/3 + ... + t^9/9)` with `t = (m-1)/(m+1)`
/// (|t| <= 0.172, so the first term left out is below 1e-9).  Positive
/// subnormals are scaled by 2^23 first; 0 gives -inf, +inf gives +inf,
/// negative numbers and NaN give NaN.
#[inline(always)]
fn log2_for_pow(x: Lanes) -> Lanes {
    let k = |i: usize| Lanes::splat(f32::from_bits(POW_LOG2_SERIES[i]));
    let sub = x.simd_lt(Lanes::splat(f32::MIN_POSITIVE));
    let xs = sub.select(x * Lanes::splat(8_388_608.0), x);
    let bits = as_i(xs);
    let e = ((bits >> 23_i32) & i32x8::splat(0xff)) - i32x8::splat(127);
    let e = e - (as_i(sub) & i32x8::splat(23));
    let m = from_i((bits & i32x8::splat(0x007f_ffff)) | i32x8::splat(0x3f80_0000));
    let big = m.simd_gt(Lanes::splat(std::f32::consts::SQRT_2));
    let m = big.select(m * Lanes::splat(0.5), m);
    let e = e - as_i(big); // a mask is -1
    let t = (m - Lanes::ONE) / (m + Lanes::ONE);
    let t2 = t * t;
    let poly = t2
        .mul_add(k(4), k(3))
        .mul_add(t2, k(2))
        .mul_add(t2, k(1))
        .mul_add(t2, k(0));
    let r = t.mul_add(poly, e.round_float());
    // the ends: 0 (and -0) is -inf, +inf is +inf, below 0 or NaN is NaN
    let r = x
        .simd_eq(Lanes::ZERO)
        .select(Lanes::splat(f32::NEG_INFINITY), r);
    let r = x
        .simd_eq(Lanes::splat(f32::INFINITY))
        .select(Lanes::splat(f32::INFINITY), r);
    (x.simd_lt(Lanes::ZERO) | x.simd_ne(x)).select(Lanes::splat(f32::NAN), r)
}

/// `exp2(y)`: `y = i + f` with `i` the nearest integer, `2^f` by its
/// Taylor polynomial to degree 7 (|f| <= 1/2: the first term left out is
/// 5e-9), scaled by `2^i` in two halves so results down to the smallest
/// subnormal and up to overflow come out right.  NaN gives the default
/// NaN; the clamp
/// ([`POW_EXP2_RANGE`], compare-and-select so NaN takes the low end
/// before it is put back) makes -inf 0 and +inf +inf.
#[inline(always)]
fn exp2_for_pow(y: Lanes) -> Lanes {
    let k = |i: usize| Lanes::splat(f32::from_bits(POW_EXP2_TAYLOR[i]));
    let (lo, hi) = (
        Lanes::splat(POW_EXP2_RANGE.0),
        Lanes::splat(POW_EXP2_RANGE.1),
    );
    let yc = y.simd_gt(lo).select(y, lo);
    let yc = yc.simd_lt(hi).select(yc, hi);
    // nearest integer, halves up (`floor(y + 1/2)`: two plain IEEE
    // operations, where `wide`'s `round` adds fix-ups)
    let i = (yc + Lanes::splat(0.5)).floor();
    let f = yc - i;
    let p = f
        .mul_add(k(6), k(5))
        .mul_add(f, k(4))
        .mul_add(f, k(3))
        .mul_add(f, k(2))
        .mul_add(f, k(1))
        .mul_add(f, k(0))
        .mul_add(f, Lanes::ONE);
    let i = i.fast_round_int();
    let i1 = i >> 1_i32;
    let i2 = i - i1;
    let scale = |k: i32x8| from_i((k + i32x8::splat(127)) << 23_i32);
    let r = p * scale(i1) * scale(i2);
    // NaN is the default NaN, whatever came in: which operand's payload
    // a multiply passes on is the compiler's choice (it may commute), so
    // a passed-on payload would differ between the two levels' code
    y.simd_ne(y).select(Lanes::splat(f32::NAN), r)
}

/// Two-operand op on lanes.
#[inline(always)]
pub fn bin(f: BinOp, a: Lanes, b: Lanes) -> Lanes {
    bin_at(X86V3::of_build(), f, a, b)
}

/// [`bin`] at a SIMD level (see [`pow_at`]).
#[inline(always)]
pub fn bin_at(v3: Option<X86V3>, f: BinOp, a: Lanes, b: Lanes) -> Lanes {
    match f {
        BinOp::FAdd => a + b,
        BinOp::FSub => a - b,
        BinOp::FMul => a * b,
        BinOp::FDiv => a / b,
        BinOp::FRem => a - b * (a / b).trunc(),
        BinOp::FMin => wgsl_min(a, b),
        BinOp::FMax => wgsl_max(a, b),
        BinOp::FPow => pow_at(v3, a, b),
        BinOp::FAtan2 => a.atan2(b),
        BinOp::FStep => mask_to_one(b.simd_ge(a)),
        BinOp::FLdexp => ldexp(a, b),
        BinOp::FEq => a.simd_eq(b),
        BinOp::FNe => a.simd_ne(b),
        BinOp::FLt => a.simd_lt(b),
        BinOp::FLe => a.simd_le(b),
        BinOp::FGt => a.simd_gt(b),
        BinOp::FGe => a.simd_ge(b),
        BinOp::IAdd => from_i(as_i(a) + as_i(b)),
        BinOp::ISub => from_i(as_i(a) - as_i(b)),
        BinOp::IMul => from_i(as_i(a) * as_i(b)),
        BinOp::SDiv => per_lane_u2(a, b, |x, y| {
            let (x, y) = (x as i32, y as i32);
            if y == 0 {
                x as u32
            } else {
                x.wrapping_div(y) as u32
            }
        }),
        BinOp::SRem => per_lane_u2(a, b, |x, y| {
            let (x, y) = (x as i32, y as i32);
            if y == 0 { 0 } else { x.wrapping_rem(y) as u32 }
        }),
        BinOp::UDiv => per_lane_u2(a, b, |x, y| x.checked_div(y).unwrap_or(x)),
        BinOp::URem => per_lane_u2(a, b, |x, y| x.checked_rem(y).unwrap_or(0)),
        BinOp::IEq => from_i(as_i(a).simd_eq(as_i(b))),
        BinOp::INe => from_u(!as_u(from_i(as_i(a).simd_eq(as_i(b))))),
        BinOp::SLt => from_i(as_i(a).simd_lt(as_i(b))),
        BinOp::SLe => from_u(!as_u(from_i(as_i(a).simd_gt(as_i(b))))),
        BinOp::SGt => from_i(as_i(a).simd_gt(as_i(b))),
        BinOp::SGe => from_u(!as_u(from_i(as_i(a).simd_lt(as_i(b))))),
        BinOp::ULt => from_u(as_u(a).simd_lt(as_u(b))),
        BinOp::ULe => from_u(!as_u(a).simd_gt(as_u(b))),
        BinOp::UGt => from_u(as_u(a).simd_gt(as_u(b))),
        BinOp::UGe => from_u(!as_u(a).simd_lt(as_u(b))),
        BinOp::And => from_u(as_u(a) & as_u(b)),
        BinOp::Or => from_u(as_u(a) | as_u(b)),
        BinOp::Xor => from_u(as_u(a) ^ as_u(b)),
        BinOp::AndNot => from_u(as_u(a) & !as_u(b)),
        BinOp::Shl => from_u(as_u(a) << (as_u(b) & u32x8::splat(31))),
        BinOp::ShrS => from_i(as_i(a) >> (as_u(b) & u32x8::splat(31))),
        BinOp::ShrU => from_u(as_u(a) >> (as_u(b) & u32x8::splat(31))),
        BinOp::SMin => from_i(as_i(a).min(as_i(b))),
        BinOp::SMax => from_i(as_i(a).max(as_i(b))),
        BinOp::UMin => from_u(as_u(a).min(as_u(b))),
        BinOp::UMax => from_u(as_u(a).max(as_u(b))),
    }
}

/// `extractBits` (WGSL: offset and count are clamped to the width).
#[inline(always)]
fn extract_bits(e: u32, offset: u32, count: u32, signed: bool) -> u32 {
    let o = offset.min(32);
    let c = count.min(32 - o);
    if c == 0 {
        return 0;
    }
    let shl = 32 - o - c;
    let v = e << shl;
    if signed {
        ((v as i32) >> (32 - c)) as u32
    } else {
        v >> (32 - c)
    }
}

/// `insertBits` (WGSL).
#[inline(always)]
pub fn insert_bits_scalar(e: u32, newbits: u32, offset: u32, count: u32) -> u32 {
    let o = offset.min(32);
    let c = count.min(32 - o);
    if c == 0 {
        return e;
    }
    let mask = if c == 32 {
        u32::MAX
    } else {
        ((1u32 << c) - 1) << o
    };
    (e & !mask) | (newbits.wrapping_shl(o) & mask)
}

/// `insertBits` on lanes.
#[inline(always)]
pub fn insert_bits(e: Lanes, n: Lanes, off: Lanes, cnt: Lanes) -> Lanes {
    let (e, n, off, cnt) = (
        as_u(e).to_array(),
        as_u(n).to_array(),
        as_u(off).to_array(),
        as_u(cnt).to_array(),
    );
    from_u(u32x8::new(std::array::from_fn(|i| {
        insert_bits_scalar(e[i], n[i], off[i], cnt[i])
    })))
}

/// Three-operand op on lanes.
#[inline(always)]
pub fn tri(f: TriOp, a: Lanes, b: Lanes, c: Lanes) -> Lanes {
    match f {
        TriOp::FFma => a.mul_add(b, c),
        TriOp::FMix => (b - a).mul_add(c, a),
        TriOp::FClamp => wgsl_min(wgsl_max(a, b), c),
        TriOp::SClamp => from_i(as_i(a).max(as_i(b)).min(as_i(c))),
        TriOp::UClamp => from_u(as_u(a).max(as_u(b)).min(as_u(c))),
        TriOp::FSmoothStep => {
            let t = ((c - a) / (b - a)).max(f32x8::ZERO).min(f32x8::ONE);
            t * t * (f32x8::splat(3.0) - f32x8::splat(2.0) * t)
        }
        TriOp::Select => a.select(b, c),
        TriOp::SExtractBits => per_lane_u3(a, b, c, |e, o, n| extract_bits(e, o, n, true)),
        TriOp::UExtractBits => per_lane_u3(a, b, c, |e, o, n| extract_bits(e, o, n, false)),
    }
}

/// WGSL packing built-ins.
pub fn pack(f: PackFn, a: [Lanes; 4]) -> Lanes {
    let arr = a.map(|v| v.to_array());
    let bits = a.map(|v| as_u(v).to_array());
    let out: [u32; 8] = std::array::from_fn(|l| {
        let x = |i: usize| arr[i][l];
        let u = |i: usize| bits[i][l];
        let snorm8 = |v: f32| ((0.5 + 127.0 * v.clamp(-1.0, 1.0)).floor() as i32 as u32) & 0xff;
        let unorm8 = |v: f32| ((0.5 + 255.0 * v.clamp(0.0, 1.0)).floor() as u32) & 0xff;
        let snorm16 =
            |v: f32| ((0.5 + 32767.0 * v.clamp(-1.0, 1.0)).floor() as i32 as u32) & 0xffff;
        let unorm16 = |v: f32| ((0.5 + 65535.0 * v.clamp(0.0, 1.0)).floor() as u32) & 0xffff;
        match f {
            PackFn::Pack4x8Snorm => (0..4).map(|i| snorm8(x(i)) << (8 * i)).sum(),
            PackFn::Pack4x8Unorm => (0..4).map(|i| unorm8(x(i)) << (8 * i)).sum(),
            PackFn::Pack2x16Snorm => snorm16(x(0)) | (snorm16(x(1)) << 16),
            PackFn::Pack2x16Unorm => unorm16(x(0)) | (unorm16(x(1)) << 16),
            PackFn::Pack2x16Float => {
                f32_to_f16_bits(x(0)) as u32 | ((f32_to_f16_bits(x(1)) as u32) << 16)
            }
            PackFn::Pack4xI8 | PackFn::Pack4xU8 => (0..4).map(|i| (u(i) & 0xff) << (8 * i)).sum(),
            PackFn::Pack4xI8Clamp => (0..4)
                .map(|i| (((u(i) as i32).clamp(-128, 127) as u32) & 0xff) << (8 * i))
                .sum(),
            PackFn::Pack4xU8Clamp => (0..4).map(|i| u(i).min(255) << (8 * i)).sum(),
        }
    });
    from_u(u32x8::new(out))
}

/// WGSL unpacking built-ins: results in `d[0..arity]`.
pub fn unpack(f: UnpackFn, a: Lanes) -> [Lanes; 4] {
    let bits = as_u(a).to_array();
    let mut out = [[0u32; 8]; 4];
    for (l, &v) in bits.iter().enumerate() {
        let r: [u32; 4] = match f {
            UnpackFn::Unpack4x8Snorm => std::array::from_fn(|i| {
                let b = (v >> (8 * i)) as u8 as i8 as f32;
                (b / 127.0).max(-1.0).to_bits()
            }),
            UnpackFn::Unpack4x8Unorm => {
                std::array::from_fn(|i| (((v >> (8 * i)) & 0xff) as f32 / 255.0).to_bits())
            }
            UnpackFn::Unpack2x16Snorm => std::array::from_fn(|i| {
                if i < 2 {
                    let h = (v >> (16 * i)) as u16 as i16 as f32;
                    (h / 32767.0).max(-1.0).to_bits()
                } else {
                    0
                }
            }),
            UnpackFn::Unpack2x16Unorm => std::array::from_fn(|i| {
                if i < 2 {
                    (((v >> (16 * i)) & 0xffff) as f32 / 65535.0).to_bits()
                } else {
                    0
                }
            }),
            UnpackFn::Unpack2x16Float => std::array::from_fn(|i| {
                if i < 2 {
                    f16_bits_to_f32((v >> (16 * i)) as u16).to_bits()
                } else {
                    0
                }
            }),
            UnpackFn::Unpack4xI8 => {
                std::array::from_fn(|i| (v >> (8 * i)) as u8 as i8 as i32 as u32)
            }
            UnpackFn::Unpack4xU8 => std::array::from_fn(|i| (v >> (8 * i)) & 0xff),
        };
        for i in 0..4 {
            out[i][l] = r[i];
        }
    }
    out.map(|c| from_u(u32x8::new(c)))
}

/// Screen-space derivative of `a` over the two 2x2 quads of a fragment
/// group (lanes 0-3: TL, TR, BL, BR of quad 0; 4-7 quad 1).
///
/// Fine derivatives difference the pixel's own row (x) or column (y), as
/// llvmpipe's `lp_build_ddx`/`ddy` do; coarse ones use the top-left pixel's
/// row/column for the whole quad.  Both are exact for values linear in
/// screen space.
#[inline(always)]
pub fn deriv(axis: Axis, fine: bool, a: Lanes) -> Lanes {
    const fn idx(v: [u32; 8]) -> u32x8 {
        u32x8::new(v)
    }
    let (hi, lo) = match (axis, fine) {
        (Axis::X, true) => (idx([1, 1, 3, 3, 5, 5, 7, 7]), idx([0, 0, 2, 2, 4, 4, 6, 6])),
        (Axis::X, false) => (idx([1, 1, 1, 1, 5, 5, 5, 5]), idx([0, 0, 0, 0, 4, 4, 4, 4])),
        (Axis::Y, true) => (idx([2, 3, 2, 3, 6, 7, 6, 7]), idx([0, 1, 0, 1, 4, 5, 4, 5])),
        (Axis::Y, false) => (idx([2, 2, 2, 2, 6, 6, 6, 6]), idx([0, 0, 0, 0, 4, 4, 4, 4])),
    };
    a.shuffle(hi) - a.shuffle(lo)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `pow` at both SIMD levels gives the same bits, on ordinary values
    /// and on every special one (the helper clones take the AVX2 form, the
    /// interpreter and the constant folder may not).
    #[test]
    fn pow_levels_agree() {
        let Some(v3) = X86V3::detect() else {
            return;
        };
        let special = [
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.5,
            2.0,
            f32::MIN_POSITIVE,
            1e-45,
            f32::MAX,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            -150.5,
            128.5,
            1e-3,
        ];
        let mut x = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for round in 0..20_000 {
            let pick = |r: u64| -> f32 {
                if round < 400 {
                    special[(r % special.len() as u64) as usize]
                } else if r.is_multiple_of(3) {
                    f32::from_bits(r as u32)
                } else {
                    (r % 100_000) as f32 / 997.0 - 20.0
                }
            };
            let a = Lanes::new(std::array::from_fn(|l| {
                let v = pick(next());
                if l % 2 == 0 { v.abs() } else { v }
            }));
            let b = Lanes::new(std::array::from_fn(|_| pick(next())));
            let (p, q) = (pow_at(None, a, b), pow_at(Some(v3), a, b));
            let bits = |v: Lanes| v.to_array().map(f32::to_bits);
            assert_eq!(bits(p), bits(q), "pow({a:?}, {b:?})");
        }
    }
    use proptest::prelude::*;

    /// `pow`'s own log2 and exp2 against `f64` on a sweep of bit patterns
    /// (subnormals to f32::MAX) and its ends as WGSL/GLSL define them.
    #[test]
    fn pow_is_accurate_and_keeps_its_ends() {
        let (mut worst_log, mut worst_exp) = (0f64, 0f64);
        for k in 0..200_000u32 {
            // every 2^-? of the positive finite range
            let x = f32::from_bits(1 + k * (0x7f7f_ffff / 200_000));
            let got = log2_for_pow(Lanes::splat(x)).to_array()[0] as f64;
            let want = (x as f64).log2();
            worst_log = worst_log.max((got - want).abs() / want.abs().max(1.0));
            // exp2 over [-150, 128)
            let y = -150.0 + 278.0 * k as f32 / 200_000.0;
            let got = exp2_for_pow(Lanes::splat(y)).to_array()[0] as f64;
            let want = (y as f64).exp2();
            if want > f32::MIN_POSITIVE as f64 && want < f32::MAX as f64 {
                worst_exp = worst_exp.max((got - want).abs() / want);
            }
        }
        assert!(worst_log < 2e-7, "log2 relative error {worst_log}");
        assert!(worst_exp < 4e-7, "exp2 relative error {worst_exp}");
        let p = |x: f32, y: f32| pow_at(None, Lanes::splat(x), Lanes::splat(y)).to_array()[0];
        assert_eq!(p(2.0, 10.0), 1024.0);
        assert_eq!(p(8.0, 1.0 / 3.0).to_bits(), 2.0f32.to_bits());
        assert_eq!(p(1.0, 123.0), 1.0);
        assert_eq!(p(0.37, 0.0), 1.0);
        assert_eq!(p(0.0, 2.5), 0.0);
        assert_eq!(p(0.0, -1.0), f32::INFINITY);
        assert_eq!(p(f32::INFINITY, 1.0), f32::INFINITY);
        assert_eq!(p(f32::INFINITY, -1.0), 0.0);
        assert_eq!(p(2.0, 200.0), f32::INFINITY);
        assert_eq!(p(2.0, -200.0), 0.0);
        assert_eq!(p(2.0, -149.0), f32::from_bits(1));
        assert!(p(-2.0, 2.0).is_nan() && p(f32::NAN, 1.0).is_nan() && p(2.0, f32::NAN).is_nan());
    }

    type IntCase = (BinOp, fn(u32, u32) -> u32);
    type FloatCase = (BinOp, fn(f32, f32) -> f32);

    fn lanes(v: [f32; 8]) -> Lanes {
        f32x8::new(v)
    }

    /// Relative-or-absolute error bound check.
    fn close(got: f32, want: f32, rel: f32, abs: f32) -> bool {
        if want.is_nan() {
            return got.is_nan();
        }
        if want.is_infinite() {
            return got == want || got.abs() > 1e30;
        }
        (got - want).abs() <= abs.max(rel * want.abs())
    }

    macro_rules! check_un {
        ($name:ident, $op:expr, $range:expr, $reference:expr, $rel:expr, $abs:expr) => {
            proptest! {
                #[test]
                fn $name(v in prop::array::uniform8($range)) {
                    let got = un($op, lanes(v)).to_array();
                    for i in 0..8 {
                        let want: f32 = $reference(v[i]);
                        prop_assert!(close(got[i], want, $rel, $abs),
                            "{:?}({}) = {} want {}", $op, v[i], got[i], want);
                    }
                }
            }
        };
    }

    check_un!(
        sin_matches_std,
        UnOp::FSin,
        -100.0f32..100.0,
        f32::sin,
        1e-5,
        2e-6
    );
    check_un!(
        cos_matches_std,
        UnOp::FCos,
        -100.0f32..100.0,
        f32::cos,
        1e-5,
        2e-6
    );
    check_un!(
        tan_matches_std,
        UnOp::FTan,
        -1.5f32..1.5,
        f32::tan,
        2e-6,
        2e-6
    );
    check_un!(
        asin_matches_std,
        UnOp::FAsin,
        -1.0f32..1.0,
        f32::asin,
        2e-6,
        2e-6
    );
    check_un!(
        acos_matches_std,
        UnOp::FAcos,
        -1.0f32..1.0,
        f32::acos,
        2e-6,
        2e-6
    );
    check_un!(
        atan_matches_std,
        UnOp::FAtan,
        -1e4f32..1e4,
        f32::atan,
        2e-6,
        2e-6
    );
    check_un!(
        sinh_matches_std,
        UnOp::FSinh,
        -10.0f32..10.0,
        f32::sinh,
        1e-5,
        1e-6
    );
    check_un!(
        cosh_matches_std,
        UnOp::FCosh,
        -10.0f32..10.0,
        f32::cosh,
        1e-5,
        1e-6
    );
    check_un!(
        tanh_matches_std,
        UnOp::FTanh,
        -10.0f32..10.0,
        f32::tanh,
        1e-5,
        1e-6
    );
    check_un!(
        asinh_matches_std,
        UnOp::FAsinh,
        -100.0f32..100.0,
        f32::asinh,
        1e-5,
        1e-6
    );
    check_un!(
        acosh_matches_std,
        UnOp::FAcosh,
        1.0f32..100.0,
        f32::acosh,
        1e-5,
        1e-5
    );
    check_un!(
        atanh_matches_std,
        UnOp::FAtanh,
        -0.99f32..0.99,
        f32::atanh,
        1e-5,
        1e-6
    );
    check_un!(
        exp_matches_std,
        UnOp::FExp,
        -80.0f32..80.0,
        f32::exp,
        4e-6,
        0.0
    );
    check_un!(
        exp2_matches_std,
        UnOp::FExp2,
        -120.0f32..120.0,
        f32::exp2,
        4e-6,
        0.0
    );
    check_un!(
        log_matches_std,
        UnOp::FLog,
        1e-30f32..1e30,
        f32::ln,
        2e-6,
        2e-6
    );
    check_un!(
        log2_matches_std,
        UnOp::FLog2,
        1e-30f32..1e30,
        f32::log2,
        2e-6,
        2e-6
    );
    check_un!(
        sqrt_is_exact,
        UnOp::FSqrt,
        0.0f32..1e30,
        f32::sqrt,
        0.0,
        0.0
    );
    check_un!(
        inverse_sqrt,
        UnOp::FInvSqrt,
        1e-30f32..1e30,
        |x: f32| 1.0 / x.sqrt(),
        2e-7,
        0.0
    );
    check_un!(
        round_ties_even,
        UnOp::FRound,
        -1e7f32..1e7,
        f32::round_ties_even,
        0.0,
        0.0
    );
    check_un!(
        fract_is_x_minus_floor,
        UnOp::FFract,
        -1e6f32..1e6,
        |x: f32| x - x.floor(),
        0.0,
        0.0
    );
    check_un!(
        quantize_f16,
        UnOp::FQuantizeF16,
        -70000.0f32..70000.0,
        |x: f32| f16_bits_to_f32(f32_to_f16_bits(x)),
        0.0,
        0.0
    );

    proptest! {
        #[test]
        fn conversions_follow_wgsl(v in prop::array::uniform8(prop::num::f32::ANY)) {
            let s = as_i(un(UnOp::F2S, lanes(v))).to_array();
            let u = as_u(un(UnOp::F2U, lanes(v))).to_array();
            for i in 0..8 {
                prop_assert_eq!(s[i], v[i] as i32, "i32({})", v[i]);
                prop_assert_eq!(u[i], v[i] as u32, "u32({})", v[i]);
            }
        }

        #[test]
        fn int_to_float_is_correctly_rounded(v in prop::array::uniform8(any::<u32>())) {
            let r = un(UnOp::U2F, from_u(u32x8::new(v))).to_array();
            let s = un(UnOp::S2F, from_u(u32x8::new(v))).to_array();
            for i in 0..8 {
                prop_assert_eq!(r[i], v[i] as f32);
                prop_assert_eq!(s[i], v[i] as i32 as f32);
            }
        }

        #[test]
        fn bit_ops_match_scalar(v in prop::array::uniform8(any::<u32>())) {
            let a = from_u(u32x8::new(v));
            let pc = as_u(un(UnOp::CountOneBits, a)).to_array();
            let rb = as_u(un(UnOp::ReverseBits, a)).to_array();
            let clz = as_u(un(UnOp::CountLeadingZeros, a)).to_array();
            let ctz = as_u(un(UnOp::CountTrailingZeros, a)).to_array();
            let flu = as_u(un(UnOp::UFirstLeadingBit, a)).to_array();
            let fls = as_u(un(UnOp::SFirstLeadingBit, a)).to_array();
            let ftb = as_u(un(UnOp::FirstTrailingBit, a)).to_array();
            for i in 0..8 {
                let x = v[i];
                prop_assert_eq!(pc[i], x.count_ones());
                prop_assert_eq!(rb[i], x.reverse_bits());
                prop_assert_eq!(clz[i], x.leading_zeros());
                prop_assert_eq!(ctz[i], x.trailing_zeros());
                prop_assert_eq!(flu[i], if x == 0 { u32::MAX } else { 31 - x.leading_zeros() });
                let sx = x as i32;
                let want_s = if sx == 0 || sx == -1 { u32::MAX } else if sx < 0 { 31 - (!x).leading_zeros() } else { 31 - x.leading_zeros() };
                prop_assert_eq!(fls[i], want_s);
                prop_assert_eq!(ftb[i], if x == 0 { u32::MAX } else { x.trailing_zeros() });
            }
        }

        #[test]
        fn integer_binops_match_scalar(a in prop::array::uniform8(any::<u32>()), b in prop::array::uniform8(any::<u32>())) {
            let la = from_u(u32x8::new(a));
            let lb = from_u(u32x8::new(b));
            let cases: &[IntCase] = &[
                (BinOp::IAdd, |x, y| x.wrapping_add(y)),
                (BinOp::ISub, |x, y| x.wrapping_sub(y)),
                (BinOp::IMul, |x, y| x.wrapping_mul(y)),
                (BinOp::SDiv, |x, y| if y == 0 { x } else { (x as i32).wrapping_div(y as i32) as u32 }),
                (BinOp::SRem, |x, y| if y == 0 { 0 } else { (x as i32).wrapping_rem(y as i32) as u32 }),
                (BinOp::UDiv, |x, y| x.checked_div(y).unwrap_or(x)),
                (BinOp::URem, |x, y| x.checked_rem(y).unwrap_or(0)),
                (BinOp::Shl, |x, y| x << (y & 31)),
                (BinOp::ShrS, |x, y| ((x as i32) >> (y & 31)) as u32),
                (BinOp::ShrU, |x, y| x >> (y & 31)),
                (BinOp::SMin, |x, y| (x as i32).min(y as i32) as u32),
                (BinOp::SMax, |x, y| (x as i32).max(y as i32) as u32),
                (BinOp::UMin, |x, y| x.min(y)),
                (BinOp::UMax, |x, y| x.max(y)),
                (BinOp::And, |x, y| x & y),
                (BinOp::Or, |x, y| x | y),
                (BinOp::Xor, |x, y| x ^ y),
                (BinOp::AndNot, |x, y| x & !y),
                (BinOp::IEq, |x, y| if x == y { !0 } else { 0 }),
                (BinOp::INe, |x, y| if x != y { !0 } else { 0 }),
                (BinOp::SLt, |x, y| if (x as i32) < (y as i32) { !0 } else { 0 }),
                (BinOp::SLe, |x, y| if (x as i32) <= (y as i32) { !0 } else { 0 }),
                (BinOp::SGt, |x, y| if (x as i32) > (y as i32) { !0 } else { 0 }),
                (BinOp::SGe, |x, y| if (x as i32) >= (y as i32) { !0 } else { 0 }),
                (BinOp::ULt, |x, y| if x < y { !0 } else { 0 }),
                (BinOp::ULe, |x, y| if x <= y { !0 } else { 0 }),
                (BinOp::UGt, |x, y| if x > y { !0 } else { 0 }),
                (BinOp::UGe, |x, y| if x >= y { !0 } else { 0 }),
            ];
            for (op, reference) in cases {
                let got = as_u(bin(*op, la, lb)).to_array();
                for i in 0..8 {
                    prop_assert_eq!(got[i], reference(a[i], b[i]), "{:?}({:#x}, {:#x})", op, a[i], b[i]);
                }
            }
        }

        #[test]
        fn float_binops_match_scalar(a in prop::array::uniform8(-1e6f32..1e6), b in prop::array::uniform8(-1e6f32..1e6)) {
            let la = lanes(a);
            let lb = lanes(b);
            let cases: &[FloatCase] = &[
                (BinOp::FAdd, |x, y| x + y),
                (BinOp::FSub, |x, y| x - y),
                (BinOp::FMul, |x, y| x * y),
                (BinOp::FDiv, |x, y| x / y),
                (BinOp::FMin, |x, y| if y < x { y } else { x }),
                (BinOp::FMax, |x, y| if x < y { y } else { x }),
                (BinOp::FStep, |e, x| if x >= e { 1.0 } else { 0.0 }),
                (BinOp::FRem, |x, y| x - y * (x / y).trunc()),
            ];
            for (op, reference) in cases {
                let got = bin(*op, la, lb).to_array();
                for i in 0..8 {
                    let want = reference(a[i], b[i]);
                    prop_assert!(got[i] == want || (got[i].is_nan() && want.is_nan()), "{:?}({}, {}) = {} want {}", op, a[i], b[i], got[i], want);
                }
            }
            let atan2 = bin(BinOp::FAtan2, la, lb).to_array();
            for i in 0..8 {
                prop_assert!(close(atan2[i], a[i].atan2(b[i]), 2e-6, 2e-6));
            }
        }

        #[test]
        fn pow_follows_exp2_log2(a in prop::array::uniform8(1e-3f32..100.0), b in prop::array::uniform8(-4.0f32..4.0)) {
            let got = bin(BinOp::FPow, lanes(a), lanes(b)).to_array();
            for i in 0..8 {
                prop_assert!(close(got[i], a[i].powf(b[i]), 2e-5, 0.0), "pow({}, {}) = {}", a[i], b[i], got[i]);
            }
        }

        #[test]
        fn ldexp_is_exact(a in prop::array::uniform8(-1e3f32..1e3), e in prop::array::uniform8(-160i32..160)) {
            let got = bin(BinOp::FLdexp, lanes(a), from_i(i32x8::new(e))).to_array();
            for i in 0..8 {
                let want = (a[i] as f64 * 2f64.powi(e[i])) as f32;
                prop_assert_eq!(got[i], want, "ldexp({}, {})", a[i], e[i]);
            }
        }

        #[test]
        fn frexp_reassembles(a in prop::array::uniform8(prop::num::f32::NORMAL | prop::num::f32::SUBNORMAL)) {
            let m = un(UnOp::FFrexpMant, lanes(a)).to_array();
            let e = as_i(un(UnOp::FFrexpExp, lanes(a))).to_array();
            for i in 0..8 {
                prop_assert!((0.5..1.0).contains(&m[i].abs()), "mant {} of {}", m[i], a[i]);
                prop_assert_eq!((m[i] as f64 * 2f64.powi(e[i])) as f32, a[i]);
            }
        }

        #[test]
        fn bitfields_match_wgsl(e in prop::array::uniform8(any::<u32>()), o in prop::array::uniform8(0u32..40), c in prop::array::uniform8(0u32..40), n in prop::array::uniform8(any::<u32>())) {
            let l = |v: [u32; 8]| from_u(u32x8::new(v));
            let su = as_u(tri(TriOp::SExtractBits, l(e), l(o), l(c))).to_array();
            let uu = as_u(tri(TriOp::UExtractBits, l(e), l(o), l(c))).to_array();
            let ins = as_u(insert_bits(l(e), l(n), l(o), l(c))).to_array();
            for i in 0..8 {
                let off = o[i].min(32);
                let cnt = c[i].min(32 - off);
                // bit-by-bit reference
                let mut want_u = 0u32;
                let mut want_ins = e[i];
                for k in 0..cnt {
                    want_u |= ((e[i] >> (off + k)) & 1) << k;
                    want_ins = (want_ins & !(1 << (off + k))) | (((n[i] >> k) & 1) << (off + k));
                }
                let want_s = if cnt > 0 && cnt < 32 && (want_u >> (cnt - 1)) & 1 == 1 { want_u | (u32::MAX << cnt) } else { want_u };
                prop_assert_eq!(uu[i], want_u);
                prop_assert_eq!(su[i], want_s);
                prop_assert_eq!(ins[i], want_ins);
            }
        }

        #[test]
        fn pack_unpack_round_trip(v in prop::array::uniform4(prop::array::uniform8(-1.5f32..1.5))) {
            let a = v.map(lanes);
            let p = pack(PackFn::Pack4x8Unorm, a);
            let u = unpack(UnpackFn::Unpack4x8Unorm, p);
            let ps = pack(PackFn::Pack4x8Snorm, a);
            let us = unpack(UnpackFn::Unpack4x8Snorm, ps);
            for (c, vc) in v.iter().enumerate() {
                for (l, &x) in vc.iter().enumerate() {
                    let want = (0.5 + 255.0 * x.clamp(0.0, 1.0)).floor() / 255.0;
                    prop_assert_eq!(u[c].to_array()[l], want);
                    let want_s = ((0.5 + 127.0 * x.clamp(-1.0, 1.0)).floor() / 127.0).max(-1.0);
                    prop_assert_eq!(us[c].to_array()[l], want_s);
                }
            }
        }
    }

    #[test]
    fn pack_examples_from_the_wgsl_spec() {
        let v = [
            lanes([1.0; 8]),
            lanes([0.0; 8]),
            lanes([0.5; 8]),
            lanes([-1.0; 8]),
        ];
        assert_eq!(
            as_u(pack(PackFn::Pack4x8Unorm, v)).to_array()[0],
            0x0080_00ff
        );
        assert_eq!(
            as_u(pack(PackFn::Pack4x8Snorm, v)).to_array()[0],
            0x8140_007f
        );
        assert_eq!(
            as_u(pack(PackFn::Pack2x16Unorm, v)).to_array()[0],
            0x0000_ffff
        );
        assert_eq!(
            as_u(pack(
                PackFn::Pack2x16Float,
                [lanes([1.0; 8]), lanes([-2.0; 8]), v[2], v[3]]
            ))
            .to_array()[0],
            0xc000_3c00
        );
        let i = [-1i32, 200, 127, -129].map(|x| from_i(i32x8::splat(x)));
        assert_eq!(as_u(pack(PackFn::Pack4xI8, i)).to_array()[0], 0x7f7f_c8ff);
        assert_eq!(
            as_u(pack(PackFn::Pack4xI8Clamp, i)).to_array()[0],
            0x807f_7fff
        );
        assert_eq!(
            as_u(pack(PackFn::Pack4xU8Clamp, i)).to_array()[0],
            0xff7f_c8ff
        );
        let u = unpack(UnpackFn::Unpack4xI8, splat_bits(0x80ff_7f01));
        assert_eq!(u.map(|x| as_i(x).to_array()[0]), [1, 127, -1, -128]);
        let h = unpack(UnpackFn::Unpack2x16Float, splat_bits(0xc000_3c00));
        assert_eq!([h[0].to_array()[0], h[1].to_array()[0]], [1.0, -2.0]);
    }

    #[test]
    fn derivatives_follow_quads() {
        // value = 10 * x + 100 * y on the 4x2 group layout
        let xs = ferropipe_components::shader::FRAG_LANE_X;
        let ys = ferropipe_components::shader::FRAG_LANE_Y;
        let v = lanes(std::array::from_fn(|i| {
            10.0 * xs[i] as f32 + 100.0 * ys[i] as f32
        }));
        for fine in [false, true] {
            assert_eq!(deriv(Axis::X, fine, v).to_array(), [10.0; 8]);
            assert_eq!(deriv(Axis::Y, fine, v).to_array(), [100.0; 8]);
        }
        // quadratic in x: fine differs per row, coarse uses the top row
        let q = lanes(std::array::from_fn(|i| {
            (xs[i] * xs[i] + 3 * ys[i] * xs[i]) as f32
        }));
        assert_eq!(
            deriv(Axis::X, true, q).to_array(),
            [1.0, 1.0, 4.0, 4.0, 5.0, 5.0, 8.0, 8.0]
        );
        assert_eq!(
            deriv(Axis::X, false, q).to_array(),
            [1.0, 1.0, 1.0, 1.0, 5.0, 5.0, 5.0, 5.0]
        );
        assert_eq!(
            deriv(Axis::Y, true, q).to_array(),
            [0.0, 3.0, 0.0, 3.0, 6.0, 9.0, 6.0, 9.0]
        );
        assert_eq!(
            deriv(Axis::Y, false, q).to_array(),
            [0.0, 0.0, 0.0, 0.0, 6.0, 6.0, 6.0, 6.0]
        );
    }

    /// The vectorised rounding equals the `half` crate's scalar round trip
    /// on every half value, its neighbours and midpoints (±1 ulp of f32),
    /// the overflow edge, f32 subnormals, NaNs and a stride over all f32s.
    #[test]
    fn lane_quantize_is_the_scalar_round_trip() {
        let reference = |x: f32| half::f16::from_f32(x).to_f32().to_bits();
        let mut xs: Vec<u32> = Vec::new();
        for h in 0..=0xffffu32 {
            let f = half::f16::from_bits(h as u16).to_f32().to_bits();
            let next = half::f16::from_bits((h as u16).wrapping_add(1))
                .to_f32()
                .to_bits();
            let mid = ((f as u64 + next as u64) / 2) as u32;
            for d in [0u32, 1, 2] {
                xs.extend([
                    f.wrapping_add(d),
                    f.wrapping_sub(d),
                    mid.wrapping_add(d),
                    mid.wrapping_sub(d),
                ]);
            }
        }
        xs.extend((0..(1u64 << 32)).step_by(4099).map(|x| x as u32));
        xs.extend([
            0x477f_f000,
            0x477f_efff,
            0x7f80_0001,
            0xffc0_0000,
            0x7fff_ffff,
            0x0000_0001,
        ]);
        for c in xs.chunks(8) {
            let mut v = [0u32; 8];
            v[..c.len()].copy_from_slice(c);
            let got = as_u(un(UnOp::FQuantizeF16, from_u(u32x8::new(v)))).to_array();
            for i in 0..c.len() {
                let x = f32::from_bits(v[i]);
                assert_eq!(
                    got[i],
                    reference(x),
                    "quantizeToF16({x:e} = {:#010x})",
                    v[i]
                );
            }
        }
    }

    #[test]
    fn half_floats_round_to_nearest_even() {
        for (x, h) in [
            (1.0f32, 0x3c00u16),
            (65504.0, 0x7bff),
            (65520.0, 0x7c00),
            (5.96e-8, 0x0001),
            (1.0 + 1.0 / 2048.0, 0x3c00),
            (1.0 + 3.0 / 2048.0, 0x3c02),
            (-0.0, 0x8000),
        ] {
            assert_eq!(f32_to_f16_bits(x), h, "{x}");
        }
        for h in 0..=0xffffu16 {
            let f = f16_bits_to_f32(h);
            if !f.is_nan() {
                assert_eq!(f32_to_f16_bits(f), h);
            }
        }
    }
}
