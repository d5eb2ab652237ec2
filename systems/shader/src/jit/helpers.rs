//! The Rust functions generated code calls for ops that are not one IEEE
//! operation (transcendentals, integer division, shifts, bit scans,
//! packing, derivatives): `lanemath`'s own code, so the JIT's bytes are the
//! interpreter's by construction.
//!
//! Every helper has one signature, `extern "C" fn(*mut Lanes)`: the
//! generated code stores the operands to an 8-`Lanes` stack buffer, the
//! helper reads them all and writes its results from the start of the same
//! buffer (one `Lanes`, or four for `unpack`).  A call costs ~2 ns against
//! the op's own ~5-40 ns for the functions routed here.
//!
//! Each helper's body is a `multiversion` function (ARCHITECTURE.md, "SIMD
//! width and levels"): in a baseline build the helper runs its x86-64-v3
//! clone where the CPU has it, and `pow` takes the level token.  The
//! dispatch is one atomic load and an indirect call per helper call, and
//! none in a v3 build.

use ferropipe_components::shader::Lanes;
use ferropipe_components::simd::X86V3;

use crate::ir::{Axis, BinOp, PackFn, TriOp, UnOp, UnpackFn};
use crate::lanemath;

/// A helper's signature.
pub(super) type Helper = extern "C" fn(*mut Lanes);

/// Reads operand `i` of a helper buffer.
///
/// # Safety
/// `buf` points to at least `i + 1` `Lanes`, 16-byte aligned (the
/// generated code's helper buffer is a 32-byte aligned stack slot,
/// `codegen::Gen::call_helper`).
///
/// The generated code stores each operand as two 16-byte halves (Cranelift's
/// x86-64 vectors are 128-bit), so the halves are read back as two 16-byte
/// loads: one 32-byte load over two pending stores cannot take its data
/// from the store buffer and waits for both to reach the cache.  That
/// store-forwarding stall was the top line of every helper in `perf
/// annotate` (`pow` in `pbr_barrels`: an eighth of the helper's samples on
/// the instruction after its load).  The loads are volatile so LLVM does
/// not merge them back into one.
#[inline(always)]
unsafe fn arg(buf: *mut Lanes, i: usize) -> Lanes {
    // SAFETY: the caller's contract: `buf + i` holds 32 readable bytes at
    // a 16-byte aligned address, read as two aligned `f32x4`.
    unsafe {
        let p = buf.add(i).cast::<wide::f32x4>();
        let (lo, hi) = (
            p.read_volatile().to_array(),
            p.add(1).read_volatile().to_array(),
        );
        Lanes::new([lo[0], lo[1], lo[2], lo[3], hi[0], hi[1], hi[2], hi[3]])
    }
}

/// Writes result `i` of a helper buffer.
///
/// # Safety
/// `buf` points to at least `i + 1` `Lanes` (any alignment).
#[inline(always)]
unsafe fn put(buf: *mut Lanes, i: usize, v: Lanes) {
    // SAFETY: the caller's contract.
    unsafe { buf.add(i).write_unaligned(v) }
}

macro_rules! helper_fn {
    ($ty:ident :: $v:ident, $call:ident ($($tok:ident)?), [$($a:ident = $i:literal),*]) => {{
        extern "C" fn h(buf: *mut Lanes) {
            #[multiversion::multiversion(targets("x86_64+avx2+fma+bmi1+bmi2+lzcnt+popcnt+f16c+movbe"), attrs(allow(dead_code)))]
            unsafe fn run(buf: *mut Lanes) {
                // SAFETY: `h`'s caller's contract.
                unsafe {
                    $(
                        // SAFETY: the expression is true only in the
                        // x86-64-v3 clone (run where the CPU has those
                        // features) or in a build that requires them.
                        let $tok = X86V3::in_clone(multiversion::target::target_cfg_f!(
                            all(target_feature = "avx2", target_feature = "fma")
                        ));
                    )?
                    $( let $a = arg(buf, $i); )*
                    put(buf, 0, lanemath::$call($($tok,)? $ty::$v, $($a),*));
                }
            }
            // SAFETY: the generated code passes its 8-`Lanes` helper
            // buffer (`codegen::Gen::call_helper`).
            unsafe { run(buf) }
        }
        h
    }};
}

macro_rules! helper_table {
    ($name:ident, $ty:ident, $args:tt $call:ident $tok:tt; $($v:ident)*) => {
        /// The helper of each op of the family.
        pub(super) fn $name(f: $ty) -> Helper {
            match f {
                $( $ty::$v => helper_fn!($ty::$v, $call $tok, $args), )*
            }
        }
    };
}

helper_table!(un, UnOp, [a = 0] un();
    FNeg FAbs FFloor FCeil FTrunc FRound FFract FSqrt FInvSqrt FSin FCos FTan FAsin
    FAcos FAtan FSinh FCosh FTanh FAsinh FAcosh FAtanh FExp FExp2 FLog FLog2 FSign
    FSaturate FIsNan FIsInf FFrexpMant FFrexpExp FQuantizeF16 F2S F2U S2F U2F INeg SAbs
    SSign Not CountOneBits ReverseBits SFirstLeadingBit UFirstLeadingBit
    FirstTrailingBit CountLeadingZeros CountTrailingZeros);

helper_table!(bin, BinOp, [a = 0, b = 1] bin_at(v3);
    FAdd FSub FMul FDiv FRem FMin FMax FPow FAtan2 FStep FLdexp FEq FNe FLt FLe FGt
    FGe IAdd ISub IMul SDiv SRem UDiv URem IEq INe SLt SLe SGt SGe ULt ULe UGt UGe And
    Or Xor AndNot Shl ShrS ShrU SMin SMax UMin UMax);

helper_table!(tri, TriOp, [a = 0, b = 1, c = 2] tri();
    FFma FMix FClamp SClamp UClamp FSmoothStep Select SExtractBits UExtractBits);

/// `insertBits(e, newbits, offset, count)`.
pub(super) extern "C" fn insert_bits(buf: *mut Lanes) {
    #[multiversion::multiversion(
        targets("x86_64+avx2+fma+bmi1+bmi2+lzcnt+popcnt+f16c+movbe"),
        attrs(allow(dead_code))
    )]
    unsafe fn run(buf: *mut Lanes) {
        // SAFETY: `insert_bits`'s caller's contract.
        unsafe {
            let (e, n, o, c) = (arg(buf, 0), arg(buf, 1), arg(buf, 2), arg(buf, 3));
            put(buf, 0, lanemath::insert_bits(e, n, o, c));
        }
    }
    // SAFETY: the generated code passes its 8-`Lanes` helper buffer.
    unsafe { run(buf) }
}

macro_rules! packed_table {
    ($name:ident, $ty:ident, |$buf:ident, $f:ident| $body:block; $($v:ident)*) => {
        /// The helper of each function of the family.
        pub(super) fn $name(f: $ty) -> Helper {
            match f {
                $( $ty::$v => {
                    extern "C" fn h(buf: *mut Lanes) {
                        #[multiversion::multiversion(targets("x86_64+avx2+fma+bmi1+bmi2+lzcnt+popcnt+f16c+movbe"), attrs(allow(dead_code)))]
                        fn run($buf: *mut Lanes) {
                            let $f = $ty::$v;
                            $body
                        }
                        run(buf)
                    }
                    h
                } )*
            }
        }
    };
}

packed_table!(pack, PackFn, |buf, f| {
    // SAFETY: the generated code passes its 8-`Lanes` helper buffer.
    unsafe {
        let a = [arg(buf, 0), arg(buf, 1), arg(buf, 2), arg(buf, 3)];
        put(buf, 0, lanemath::pack(f, a));
    }
}; Pack4x8Snorm Pack4x8Unorm Pack2x16Snorm Pack2x16Unorm Pack2x16Float Pack4xI8 Pack4xU8
    Pack4xI8Clamp Pack4xU8Clamp);

packed_table!(unpack, UnpackFn, |buf, f| {
    // SAFETY: the generated code passes its 8-`Lanes` helper buffer.
    unsafe {
        let r = lanemath::unpack(f, arg(buf, 0));
        for (i, v) in r.into_iter().enumerate() {
            put(buf, i, v);
        }
    }
}; Unpack4x8Snorm Unpack4x8Unorm Unpack2x16Snorm Unpack2x16Unorm Unpack2x16Float Unpack4xI8
    Unpack4xU8);

/// The helper of a derivative.
pub(super) fn deriv(axis: Axis, fine: bool) -> Helper {
    macro_rules! d {
        ($axis:expr, $fine:expr) => {{
            extern "C" fn h(buf: *mut Lanes) {
                #[multiversion::multiversion(
                    targets("x86_64+avx2+fma+bmi1+bmi2+lzcnt+popcnt+f16c+movbe"),
                    attrs(allow(dead_code))
                )]
                unsafe fn run(buf: *mut Lanes) {
                    // SAFETY: `h`'s caller's contract.
                    unsafe { put(buf, 0, lanemath::deriv($axis, $fine, arg(buf, 0))) }
                }
                // SAFETY: the generated code passes its 8-`Lanes` helper
                // buffer.
                unsafe { run(buf) }
            }
            h
        }};
    }
    match (axis, fine) {
        (Axis::X, false) => d!(Axis::X, false),
        (Axis::X, true) => d!(Axis::X, true),
        (Axis::Y, false) => d!(Axis::Y, false),
        (Axis::Y, true) => d!(Axis::Y, true),
    }
}

/// Most `pow`s one [`pow_run`] helper computes: four operand pairs fill
/// the 8-`Lanes` helper buffer.
pub(super) const MAX_POW_RUN: usize = 4;

/// The helper computing `n` independent `pow`s (2 ≤ `n` ≤
/// [`MAX_POW_RUN`]): operands `2i`, `2i + 1` give result `i`.  Each is
/// `lanemath::pow`, so the bytes are those of `n` single calls; the
/// chains run side by side.
pub(super) fn pow_run(n: usize) -> Helper {
    extern "C" fn h<const N: usize>(buf: *mut Lanes) {
        // SAFETY: the generated code passes its 8-`Lanes` helper buffer
        // (32-byte aligned) holding `2 N <= 8` operands.
        unsafe { run::<N>(buf) }
    }
    #[multiversion::multiversion(
        targets("x86_64+avx2+fma+bmi1+bmi2+lzcnt+popcnt+f16c+movbe"),
        attrs(allow(dead_code))
    )]
    unsafe fn run<const N: usize>(buf: *mut Lanes) {
        // SAFETY: `h`'s caller's contract.
        unsafe {
            let mut a = [Lanes::ZERO; N];
            let mut b = [Lanes::ZERO; N];
            for i in 0..N {
                a[i] = arg(buf, 2 * i);
                b[i] = arg(buf, 2 * i + 1);
            }
            // SAFETY: the expression is true only in the x86-64-v3 clone
            // (run where the CPU has those features) or in a build that requires them.
            let v3 = X86V3::in_clone(multiversion::target::target_cfg_f!(all(
                target_feature = "avx2",
                target_feature = "fma"
            )));
            let mut r = [Lanes::ZERO; N];
            for i in 0..N {
                r[i] = lanemath::pow_at(v3, a[i], b[i]);
            }
            for (i, v) in r.into_iter().enumerate() {
                put(buf, i, v);
            }
        }
    }
    match n {
        2 => h::<2>,
        3 => h::<3>,
        _ => h::<4>,
    }
}
