//! sRGB colour-buffer conversions as llvmpipe's fragment store does them
//! (`lp_bld_format_srgb.c`), not as `util_format` defines them.
//!
//! llvmpipe stores and blends sRGB render targets through approximations
//! chosen for SIMD speed (its `format_expands_to_float_soa` path):
//! * **linear → sRGB** (every store, blended or not): a "rational
//!   polynomial" `a·x^0.375 + b·x^0.5 + c` (255 folded into the constants),
//!   where `x^0.5 = x · rsqrt(x)` and `x^0.375 = rsqrt(rsqrt(x^1.5))` use the
//!   CPU's *approximate* reciprocal square root (`rsqrtps`, 12 bits, no
//!   Newton step), and `x · 12.92 · 255` below 0.0031308; rounded to
//!   nearest even.  Its error is ±0.17 of a byte before rounding, so about
//!   5 % of the 256 values `k / 255` land on the other side of a rounding
//!   boundary from the exact curve (15 of 256 red bytes of a ramp).
//! * **sRGB → linear** (the destination, when blending): the cubic
//!   `0.3012·s³ + 0.6935·s² + 0.0030·s + 0.0023` on the byte `s` scaled by
//!   1/255, evaluated as `lp_build_polynomial` does (odd and even halves,
//!   each step `lp_build_mad`, which LLVM fuses into an FMA on FMA
//!   hardware), and `s / (12.6 · 255)` for `s ≤ 15`.
//!
//! Blending happens in float between the two.  The exact curves (what
//! ferropipe used before, through `pack.rs`) differ from llvmpipe's bytes
//! by 1 in about 5 % of sRGB colour bytes, and by 2–4 where blends stack
//! (tests/differential/README.md).
//!
//! `rsqrtps` is the CPU's: Intel and AMD return different bits, so on
//! either one these functions give that CPU's llvmpipe bytes.  Off x86 the
//! exact `1 / sqrt(x)` stands in (no llvmpipe reference to match there).

use std::sync::OnceLock;

/// `rsqrtps` on one value (see the module docs).
#[inline]
fn rsqrt(x: f32) -> f32 {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_cvtss_f32, _mm_rsqrt_ss, _mm_set_ss};
        // SAFETY: SSE is part of the x86-64 baseline, so the intrinsics'
        // target feature is always present.
        unsafe { _mm_cvtss_f32(_mm_rsqrt_ss(_mm_set_ss(x))) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        1.0 / x.sqrt()
    }
}

/// llvmpipe's `lp_build_linear_to_srgb` for an 8-bit channel: linear
/// `x` (clamped to [0, 1]; NaN reads 0) to the stored byte.
pub(super) fn linear_to_srgb8(x: f32) -> u8 {
    // lp_build_clamp: min(max(x, 0), 1) with vmaxps's NaN rule (0).
    let x = if x > 0.0 { x.min(1.0) } else { 0.0 };
    // The constants as llvmpipe's C computes them: the `a` and `b`
    // products in double (1.0622 is a double literal), `c` and the linear
    // slope in float.
    let a = (0.675f32 as f64 * 1.0622 * 255.0) as f32;
    let b = (0.325f32 as f64 * 1.0622 * 255.0) as f32;
    let c = -0.0620f32 * 255.0f32;
    let v = if x <= 0.003_130_8 {
        x * (12.92f32 * 255.0f32)
    } else {
        let x05 = x * rsqrt(x);
        let x0375 = rsqrt(rsqrt(x05 * x));
        a * x0375 + b.mul_add(x05, c)
    };
    // lp_build_iround: cvtps2dq, round half to even; v <= 255.06.
    v.round_ties_even().clamp(0.0, 255.0) as u8
}

/// llvmpipe's `lp_build_srgb_to_linear` for 8-bit channels, as a table.
pub(super) fn srgb8_to_linear() -> &'static [f32; 256] {
    static TABLE: OnceLock<[f32; 256]> = OnceLock::new();
    TABLE.get_or_init(|| {
        let c0 = 0.0023f32;
        let c1 = 0.0030f32 / 255.0f32;
        let c2 = 0.6935f32 / (255.0f32 * 255.0f32);
        let c3 = 0.3012f32 / (255.0f32 * 255.0f32 * 255.0f32);
        let lin = 1.0f32 / (12.6f32 * 255.0f32);
        std::array::from_fn(|i| {
            let s = i as f32;
            if s <= 15.0 {
                s * lin
            } else {
                // lp_build_polynomial: odd and even terms in x², then
                // odd · x + even, every step a fused multiply-add.
                let x2 = s * s;
                let odd = x2.mul_add(c3, c1);
                let even = x2.mul_add(c2, c0);
                odd.mul_add(s, even)
            }
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both directions stay within a byte of the exact curves (±0.5 back
    /// to linear), and every byte maps back to itself, the property
    /// llvmpipe's constants were chosen for.  The bytes themselves are
    /// proved against llvmpipe by the blend sweep (tests/differential).
    #[test]
    fn approximations_stay_close_and_round_trip() {
        let t = srgb8_to_linear();
        let mut differ = 0;
        for k in 0..=255u32 {
            let x = k as f32 / 255.0;
            let exact = if x <= 0.003_130_8 {
                x * 12.92
            } else {
                1.055 * x.powf(1.0 / 2.4) - 0.055
            } * 255.0;
            let got = linear_to_srgb8(x) as f32;
            // Rounded, within one step of the exact value (k = 6 stores 43
            // for 42.38: the curve is least accurate near the linear part).
            assert!((got - exact).abs() < 1.0, "{k}: {got} vs {exact}");
            differ += (got != exact.round_ties_even()) as u32;
            let s = k as f32 / 255.0;
            let lin = if s <= 0.04045 {
                s / 12.92
            } else {
                ((s + 0.055) / 1.055).powf(2.4)
            };
            assert!((t[k as usize] - lin).abs() * 255.0 <= 0.5, "{k}");
            assert_eq!(linear_to_srgb8(t[k as usize]) as u32, k, "round trip {k}");
        }
        // Not the exact curve: a handful of the 256 values round the other
        // way (15 on the development machine's CPU).
        assert!((1..40).contains(&differ), "{differ}");
    }

    #[test]
    fn ends_and_nan() {
        assert_eq!(linear_to_srgb8(0.0), 0);
        assert_eq!(linear_to_srgb8(1.0), 255);
        assert_eq!(linear_to_srgb8(f32::NAN), 0);
        assert_eq!(linear_to_srgb8(-3.0), 0);
        assert_eq!(linear_to_srgb8(7.0), 255);
        assert_eq!(srgb8_to_linear()[0], 0.0);
    }
}
