//! Pixel packing and unpacking for every [`Format`] (Mesa's `util_format`
//! pack/unpack, `u_pack_color.h`, `u_format_zs.c`).
//!
//! # The API (stable: the pipeline, texture and output code build on it)
//!
//! Colour, as four RGBA values after the format's swizzle (channels the
//! format lacks read as 0, alpha as 1):
//!
//! | call | what |
//! | --- | --- |
//! | [`unpack_rgba_f32`] / [`pack_rgba_f32`] | one pixel as `[f32; 4]`: unorm/snorm normalised, sRGB decoded to linear (alpha stays linear), half and small floats widened, scaled and integer formats as their value |
//! | [`unpack_rgba_u32`] / [`pack_rgba_u32`] | one pixel as `[u32; 4]` values (for `UINT` formats) |
//! | [`unpack_rgba_i32`] / [`pack_rgba_i32`] | one pixel as `[i32; 4]` values (for `SINT` formats) |
//! | `*_row` variants | `n` consecutive pixels, format decoded once per row |
//! | [`pack_color_union`] | a `pipe_color_union` clear colour, read as the format wants |
//!
//! Depth and stencil, read and written independently inside combined formats
//! (writing depth keeps the stencil bits and vice versa):
//!
//! | call | what |
//! | --- | --- |
//! | [`unpack_z`] / [`pack_z`] | depth as `f32` in [0, 1] (`Z32_FLOAT*` store any float) |
//! | [`unpack_z_raw`] / [`pack_z_raw`], [`z_unorm_max`] | depth in the format's own integer domain (`Z24`: 0..=0xFFFFFF), for exact depth tests |
//! | [`unpack_s`] / [`pack_s`] | stencil as `u8` |
//! | `*_row` variants | rows |
//!
//! Helpers: [`f32_to_f16`] / [`f16_to_f32`], [`linear_to_srgb`] /
//! [`srgb_to_linear`], [`srgb8_to_linear`].
//!
//! # Rules (as GL and Mesa's `util_format` define them)
//!
//! * unorm: `v / (2^n - 1)`; packing clamps to [0, 1] and rounds to nearest,
//!   ties to even (`_mesa_float_to_unorm`, `lrintf`).  NaN packs as 0.
//! * snorm: `max(v / (2^(n-1) - 1), -1)`; packing clamps to [-1, 1], rounds
//!   to nearest even.
//! * sRGB: decoding is exact per the sRGB curve (a 256-entry table for 8-bit
//!   channels); encoding computes the curve and rounds to nearest.
//! * half float: round to nearest even, overflow to infinity, subnormals
//!   kept, NaN stays NaN (F16C `vcvtps2ph` with rounding mode 0).
//! * R11G11B10 / R9G9B9E5 (unsigned small floats): negative and NaN-free
//!   rules of EXT_packed_float / EXT_texture_shared_exponent: negatives
//!   become 0, finite values too large clamp to the largest finite value,
//!   rounding to nearest even.
//! * integer formats: the integer APIs work on *values*: packing clamps each
//!   value to the channel's range (`R8_UINT` ← 300 stores 255, `R8_SINT` ←
//!   -300 stores -128), unpacking a value the API's type cannot hold
//!   saturates (`unpack_rgba_u32` of `SINT` -5 gives 0).  The float API on an
//!   integer format converts the value (`R8_UINT` 200 ↔ 200.0); the integer
//!   API on a non-integer format goes through the float value, truncated.
//!   (A `pipe_color_union` is read as `ui` for `UINT` and `i` for `SINT`
//!   formats by its users, which then call the matching API.)
//! * depth: unorm depth packs as `lrint(clamp(z, 0, 1) * (2^n - 1))` in double
//!   precision (`util_pack_z`), unpacks as `v / (2^n - 1)`.
//!
//! # Robustness
//! Every function takes the pixel's bytes as a slice; a slice shorter than
//! the format's block reads the missing bytes as 0 and writes nothing past
//! its end, so bad sizes can never crash (callers validate sizes anyway).
//! Row functions process `min(values.len(), bytes.len() / block_bytes)`
//! pixels and return that count.

use std::sync::OnceLock;

use crate::format::{ChannelType, Format, FormatKind};
use crate::state::ColorUnion;

// ---------------------------------------------------------------------------
// Scalar helpers
// ---------------------------------------------------------------------------

/// Converts an `f32` to IEEE half bits, rounding to nearest even (the
/// `half` crate's conversion: overflow to infinity, NaN stays a quiet NaN
/// with the top mantissa bits kept).
pub fn f32_to_f16(f: f32) -> u16 {
    half::f16::from_f32(f).to_bits()
}

/// Converts IEEE half bits to `f32` (exact).
pub fn f16_to_f32(h: u16) -> f32 {
    half::f16::from_bits(h).to_f32()
}

/// Encodes the absolute value bits `abs` (a non-negative, non-NaN f32) as an
/// unsigned float with a 5-bit exponent (bias 15) and `mbits` mantissa bits,
/// rounding to nearest even.  Finite overflow goes to infinity when
/// `overflow_to_inf` (IEEE half) or to the largest finite value (the packed
/// float formats).
fn encode_small_float(abs: u32, mbits: u32, overflow_to_inf: bool) -> u32 {
    let inf = 0x1f << mbits;
    let max_finite = inf - 1;
    if abs >= 0x7f80_0000 {
        return inf; // +Inf (NaN handled by callers)
    }
    let exp = (abs >> 23) as i32;
    let man = abs & 0x7f_ffff;
    let e = exp - 127 + 15;
    let drop = 23 - mbits;
    let out = if e >= 31 {
        inf
    } else if e <= 0 {
        // Subnormal (or zero) in the small format.  value = m24 * 2^(exp-150);
        // the small subnormal unit is 2^(-14 - mbits).
        let m24 = if exp == 0 { man } else { man | 0x80_0000 };
        let shift = (drop as i32 + 1 - e) as u32;
        if shift > 24 {
            0
        } else {
            round_shift(m24, shift)
        }
    } else {
        let v = ((e as u32) << mbits) | (man >> drop);
        let rem = man & ((1 << drop) - 1);
        let half = 1 << (drop - 1);
        if rem > half || (rem == half && v & 1 == 1) {
            v + 1
        } else {
            v
        }
    };
    if out >= inf && !overflow_to_inf {
        max_finite
    } else {
        out
    }
}

/// `v >> shift` rounded to nearest, ties to even (`1 <= shift <= 31`).
#[inline]
fn round_shift(v: u32, shift: u32) -> u32 {
    let q = v >> shift;
    let rem = v & ((1 << shift) - 1);
    let half = 1 << (shift - 1);
    if rem > half || (rem == half && q & 1 == 1) {
        q + 1
    } else {
        q
    }
}

/// Decodes an unsigned float with a 5-bit exponent (bias 15) and `mbits`
/// mantissa bits.
fn decode_small_float(v: u32, mbits: u32) -> f32 {
    let exp = (v >> mbits) & 0x1f;
    let man = v & ((1 << mbits) - 1);
    if exp == 0 {
        man as f32 * f32::from_bits((127 - 14 - mbits) << 23)
    } else if exp == 31 {
        if man == 0 { f32::INFINITY } else { f32::NAN }
    } else {
        f32::from_bits(((exp + 112) << 23) | (man << (23 - mbits)))
    }
}

/// `f32` → unsigned small float (R11G11B10): negatives and NaN handled per
/// EXT_packed_float (negative → 0, NaN → NaN, +Inf → Inf).
fn f32_to_ufloat(f: f32, mbits: u32) -> u32 {
    if f.is_nan() {
        return (0x1f << mbits) | 1;
    }
    if f <= 0.0 {
        return 0;
    }
    encode_small_float(f.to_bits(), mbits, false)
}

/// Decodes one sRGB-encoded value in [0, 1] to linear.
pub fn srgb_to_linear(v: f32) -> f32 {
    if v <= 0.04045 {
        v / 12.92
    } else {
        ((v + 0.055) / 1.055).powf(2.4)
    }
}

/// Encodes one linear value to sRGB (input clamped to [0, 1]; NaN → 0).
pub fn linear_to_srgb(v: f32) -> f32 {
    let v = if v > 0.0 { v.min(1.0) } else { 0.0 };
    if v < 0.003_130_8 {
        v * 12.92
    } else {
        1.055 * v.powf(1.0 / 2.4) - 0.055
    }
}

/// The linear value of each 8-bit sRGB code (exact table, computed once).
pub fn srgb8_to_linear() -> &'static [f32; 256] {
    static TABLE: OnceLock<[f32; 256]> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t = [0.0f32; 256];
        for (i, v) in t.iter_mut().enumerate() {
            let c = i as f64 / 255.0;
            *v = if c <= 0.04045 {
                (c / 12.92) as f32
            } else {
                ((c + 0.055) / 1.055).powf(2.4) as f32
            };
        }
        t
    })
}

/// unorm: float → n-bit code, clamped, round to nearest even; NaN → 0.
#[inline(always)]
fn float_to_unorm(v: f32, bits: u32) -> u32 {
    if bits >= 24 {
        if v.is_nan() || v <= 0.0 {
            return 0;
        }
        let max = ((1u64 << bits) - 1) as f64;
        return ((v.min(1.0) as f64) * max).round_ties_even() as u32;
    }
    // Branch-free (rows of these vectorise): NaN stays NaN through the
    // clamp and Rust's saturating float → int cast turns it into 0.
    let max = ((1u32 << bits) - 1) as f32;
    (v.clamp(0.0, 1.0) * max).round_ties_even() as u32
}

/// snorm: float → n-bit two's-complement code (masked to n bits).
#[inline]
fn float_to_snorm(v: f32, bits: u32) -> u32 {
    let max = ((1u64 << (bits - 1)) - 1) as f64;
    let v = if v.is_nan() {
        0.0
    } else {
        v.clamp(-1.0, 1.0) as f64
    };
    let i = (v * max).round_ties_even() as i64;
    (i as u32) & mask(bits)
}

#[inline]
fn mask(bits: u32) -> u32 {
    if bits >= 32 { !0 } else { (1 << bits) - 1 }
}

#[inline]
fn sign_extend(v: u32, bits: u32) -> i32 {
    if bits >= 32 {
        v as i32
    } else {
        let s = 32 - bits;
        ((v << s) as i32) >> s
    }
}

/// Float → integer code of an n-bit (un)signed integer channel, clamped,
/// rounded to nearest even (USCALED/SSCALED packing, float API on integer
/// formats).
#[inline]
fn float_to_int_code(v: f32, bits: u32, signed: bool) -> u32 {
    let v = if v.is_nan() { 0.0 } else { v as f64 };
    if signed {
        let max = ((1u64 << (bits - 1)) - 1) as f64;
        let i = v.clamp(-max - 1.0, max).round_ties_even() as i64;
        (i as u32) & mask(bits)
    } else {
        let max = mask(bits) as f64;
        v.clamp(0.0, max).round_ties_even() as u32
    }
}

// ---------------------------------------------------------------------------
// Colour codec: the format decoded once, then applied to many pixels
// ---------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Store {
    /// `n` little-endian elements of `bytes` bytes each.
    Array { bytes: u8 },
    /// Channels packed LSB-first into one little-endian word of `bytes` bytes.
    Packed { bytes: u8 },
    /// Three unsigned small floats 11/11/10.
    R11G11B10,
    /// Shared-exponent 9/9/9/5.
    R9G9B9E5,
    /// Depth / stencil formats (handled by the depth/stencil functions).
    DepthStencil,
}

/// Everything needed to pack and unpack pixels of one colour format.
#[derive(Clone, Copy, Debug)]
struct Codec {
    format: Format,
    store: Store,
    ty: ChannelType,
    n: usize,
    bits: [u32; 4],
    shift: [u32; 4],
    swizzle: [u8; 4],
    /// For each stored channel, the RGBA component it is packed from
    /// (4 = nothing: X channels pack as 0).
    source: [u8; 4],
    srgb: bool,
}

impl Codec {
    fn new(format: Format) -> Codec {
        let d = format.desc();
        let n = d.nr_channels();
        let mut bits = [0u32; 4];
        let mut shift = [0u32; 4];
        let mut acc = 0;
        for i in 0..n {
            bits[i] = u32::from(d.channel_bits[i]);
            shift[i] = acc;
            acc += bits[i];
        }
        let store = if d.kind != FormatKind::Color {
            Store::DepthStencil
        } else if format == Format::R11G11B10_FLOAT {
            Store::R11G11B10
        } else if format == Format::R9G9B9E5_FLOAT {
            Store::R9G9B9E5
        } else if d.packed {
            Store::Packed {
                bytes: d.block_bytes as u8,
            }
        } else {
            Store::Array {
                bytes: (bits[0] / 8) as u8,
            }
        };
        let mut source = [4u8; 4];
        for (stored, src) in source.iter_mut().enumerate().take(n) {
            if let Some(c) = d.swizzle.iter().position(|&s| s as usize == stored) {
                *src = c as u8;
            }
        }
        // An X channel (void) in a format whose type says otherwise is still
        // "nothing": channels no swizzle reads are packed as 0.
        Codec {
            format,
            store,
            ty: d.channel_type,
            n,
            bits,
            shift,
            swizzle: d.swizzle,
            source,
            srgb: d.srgb,
        }
    }

    /// Reads the raw stored channel codes.
    #[inline]
    fn read_raw(&self, px: &[u8]) -> [u32; 4] {
        let mut raw = [0u32; 4];
        match self.store {
            Store::Array { bytes } => {
                let b = bytes as usize;
                for (i, r) in raw.iter_mut().enumerate().take(self.n) {
                    *r = read_le(px, i * b, b);
                }
            }
            Store::Packed { bytes } => {
                let w = read_le(px, 0, bytes as usize);
                for (i, r) in raw.iter_mut().enumerate().take(self.n) {
                    *r = (w >> self.shift[i]) & mask(self.bits[i]);
                }
            }
            Store::R11G11B10 | Store::R9G9B9E5 => {
                let w = read_le(px, 0, 4);
                for (i, r) in raw.iter_mut().enumerate().take(self.n) {
                    *r = (w >> self.shift[i]) & mask(self.bits[i]);
                }
            }
            Store::DepthStencil => {}
        }
        raw
    }

    /// Writes raw stored channel codes.
    #[inline]
    fn write_raw(&self, raw: [u32; 4], px: &mut [u8]) {
        match self.store {
            Store::Array { bytes } => {
                let b = bytes as usize;
                for (i, &r) in raw.iter().enumerate().take(self.n) {
                    write_le(px, i * b, b, r);
                }
            }
            Store::Packed { bytes } => {
                let mut w = 0u32;
                for (i, &r) in raw.iter().enumerate().take(self.n) {
                    w |= (r & mask(self.bits[i])) << self.shift[i];
                }
                write_le(px, 0, bytes as usize, w);
            }
            Store::R11G11B10 | Store::R9G9B9E5 => {
                let mut w = 0u32;
                for (i, &r) in raw.iter().enumerate().take(self.n) {
                    w |= (r & mask(self.bits[i])) << self.shift[i];
                }
                write_le(px, 0, 4, w);
            }
            Store::DepthStencil => {}
        }
    }

    /// Stored channel code → float value (before swizzle and sRGB).
    #[inline]
    fn chan_to_f32(&self, raw: u32, bits: u32) -> f32 {
        match self.ty {
            ChannelType::Unorm => {
                if bits >= 24 {
                    (raw as f64 / mask(bits) as f64) as f32
                } else {
                    raw as f32 / mask(bits) as f32
                }
            }
            ChannelType::Snorm => {
                let v = sign_extend(raw, bits);
                let max = ((1u64 << (bits - 1)) - 1) as f64;
                ((v as f64 / max) as f32).max(-1.0)
            }
            ChannelType::Uscaled | ChannelType::Uint => raw as f32,
            ChannelType::Sscaled | ChannelType::Sint => sign_extend(raw, bits) as f32,
            ChannelType::Float => match bits {
                32 => f32::from_bits(raw),
                16 => f16_to_f32(raw as u16),
                b => decode_small_float(raw, b - 5),
            },
            ChannelType::Void => 0.0,
        }
    }

    /// Float value → stored channel code.
    #[inline]
    fn f32_to_chan(&self, v: f32, bits: u32) -> u32 {
        match self.ty {
            ChannelType::Unorm => float_to_unorm(v, bits),
            ChannelType::Snorm => float_to_snorm(v, bits),
            ChannelType::Uscaled | ChannelType::Uint => float_to_int_code(v, bits, false),
            ChannelType::Sscaled | ChannelType::Sint => float_to_int_code(v, bits, true),
            ChannelType::Float => match bits {
                32 => v.to_bits(),
                16 => u32::from(f32_to_f16(v)),
                b => f32_to_ufloat(v, b - 5),
            },
            ChannelType::Void => 0,
        }
    }

    #[inline]
    fn swizzle_f32(&self, stored: [f32; 4]) -> [f32; 4] {
        let mut out = [0.0; 4];
        for (o, &s) in out.iter_mut().zip(self.swizzle.iter()) {
            *o = match s {
                0..=3 => stored[s as usize],
                5 => 1.0,
                _ => 0.0,
            };
        }
        out
    }

    #[inline]
    fn unpack_f32(&self, px: &[u8]) -> [f32; 4] {
        let stored = match self.store {
            Store::R9G9B9E5 => {
                let raw = self.read_raw(px);
                let scale = f32::from_bits((raw[3] + 127 - 15 - 9) << 23);
                [
                    raw[0] as f32 * scale,
                    raw[1] as f32 * scale,
                    raw[2] as f32 * scale,
                    0.0,
                ]
            }
            Store::DepthStencil => return unpack_zs_rgba(self.format, px),
            _ => {
                let raw = self.read_raw(px);
                let mut s = [0.0f32; 4];
                for (i, v) in s.iter_mut().enumerate().take(self.n) {
                    *v = self.chan_to_f32(raw[i], self.bits[i]);
                }
                if self.srgb {
                    // sRGB formats are 8-bit: exact table lookup for colour.
                    let t = srgb8_to_linear();
                    for (i, v) in s.iter_mut().enumerate().take(self.n.min(3)) {
                        let c = self.swizzle.iter().position(|&w| w as usize == i);
                        if c.is_some_and(|c| c < 3) {
                            *v = t[(raw[i] & 0xff) as usize];
                        }
                    }
                }
                s
            }
        };
        self.swizzle_f32(stored)
    }

    #[inline]
    fn pack_f32(&self, rgba: [f32; 4], px: &mut [u8]) {
        match self.store {
            Store::R9G9B9E5 => {
                write_le(px, 0, 4, float3_to_rgb9e5([rgba[0], rgba[1], rgba[2]]));
            }
            Store::DepthStencil => pack_zs_rgba(self.format, rgba, px),
            _ => {
                let mut raw = [0u32; 4];
                for (i, r) in raw.iter_mut().enumerate().take(self.n) {
                    let c = self.source[i];
                    if c < 4 {
                        let mut v = rgba[c as usize];
                        if self.srgb && c < 3 {
                            v = linear_to_srgb(v);
                        }
                        *r = self.f32_to_chan(v, self.bits[i]);
                    }
                }
                self.write_raw(raw, px);
            }
        }
    }

    /// One pixel as integer values (exact for pure integer formats; the
    /// float value truncated towards zero for the others).
    #[inline]
    fn unpack_int(&self, px: &[u8]) -> [i64; 4] {
        let integer = matches!(self.ty, ChannelType::Uint | ChannelType::Sint)
            && self.store != Store::DepthStencil;
        if !integer {
            return self.unpack_f32(px).map(|v| v as i64);
        }
        let raw = self.read_raw(px);
        let mut stored = [0i64; 4];
        for (i, v) in stored.iter_mut().enumerate().take(self.n) {
            *v = if self.ty == ChannelType::Sint {
                i64::from(sign_extend(raw[i], self.bits[i]))
            } else {
                i64::from(raw[i])
            };
        }
        let mut out = [0i64; 4];
        for (o, &s) in out.iter_mut().zip(self.swizzle.iter()) {
            *o = match s {
                0..=3 => stored[s as usize],
                5 => 1,
                _ => 0,
            };
        }
        out
    }

    /// Integer values → one pixel, each clamped to its channel's range
    /// (non-integer formats: through the float value).
    #[inline]
    fn pack_int(&self, vals: [i64; 4], px: &mut [u8]) {
        let integer = matches!(self.ty, ChannelType::Uint | ChannelType::Sint)
            && self.store != Store::DepthStencil;
        if !integer {
            self.pack_f32(vals.map(|v| v as f32), px);
            return;
        }
        let mut raw = [0u32; 4];
        for (i, r) in raw.iter_mut().enumerate().take(self.n) {
            let c = self.source[i];
            if c >= 4 {
                continue;
            }
            let v = vals[c as usize];
            let b = self.bits[i];
            *r = if self.ty == ChannelType::Uint {
                v.clamp(0, i64::from(mask(b))) as u32
            } else {
                let max = ((1u64 << (b - 1)) - 1) as i64;
                (v.clamp(-max - 1, max) as u32) & mask(b)
            };
        }
        self.write_raw(raw, px);
    }
}

/// Reads a little-endian `bytes`-byte (1..=4) value at `at`; bytes past the
/// end of `px` read as 0.  The common widths are fixed-size loads (a
/// variable-length copy would be a `memmove` call per channel).
#[inline(always)]
fn read_le(px: &[u8], at: usize, bytes: usize) -> u32 {
    match (bytes, px.get(at..at + bytes)) {
        (1, Some(s)) => u32::from(s[0]),
        (2, Some(s)) => u32::from(u16::from_le_bytes([s[0], s[1]])),
        (4, Some(s)) => u32::from_le_bytes([s[0], s[1], s[2], s[3]]),
        _ => {
            let mut b = [0u8; 4];
            if let Some(src) = px.get(at..) {
                let n = src.len().min(bytes).min(4);
                b[..n].copy_from_slice(&src[..n]);
            }
            u32::from_le_bytes(b)
        }
    }
}

/// Writes the low `bytes` (1..=4) bytes of `v` at `at`, little-endian,
/// nothing past the end of `px`.
#[inline(always)]
fn write_le(px: &mut [u8], at: usize, bytes: usize, v: u32) {
    let b = v.to_le_bytes();
    match (bytes, px.get_mut(at..at + bytes)) {
        (1, Some(d)) => d[0] = b[0],
        (2, Some(d)) => d.copy_from_slice(&b[..2]),
        (4, Some(d)) => d.copy_from_slice(&b),
        _ => {
            if let Some(dst) = px.get_mut(at..) {
                let n = dst.len().min(bytes).min(4);
                dst[..n].copy_from_slice(&b[..n]);
            }
        }
    }
}

/// RGB → R9G9B9E5 per EXT_texture_shared_exponent (round to nearest).
fn float3_to_rgb9e5(rgb: [f32; 3]) -> u32 {
    const MBITS: i32 = 9;
    const BIAS: i32 = 15;
    const EMAX: i32 = 31;
    // (2^9 - 1) / 2^9 * 2^(31 - 15)
    let max_val = ((1 << MBITS) - 1) as f32 * 2f32.powi(EMAX - BIAS - MBITS);
    let c = rgb.map(|v| if v > 0.0 { v.min(max_val) } else { 0.0 }); // NaN → 0
    let maxc = c[0].max(c[1]).max(c[2]);
    // floor(log2(maxc)), exact on the float's exponent field.
    let log2 = if maxc > 0.0 {
        ((maxc.to_bits() >> 23) as i32 - 127).max(-BIAS - 1)
    } else {
        -BIAS - 1
    };
    let mut exp = log2 + 1 + BIAS;
    let mut denom = 2f64.powi(exp - BIAS - MBITS);
    let maxm = (maxc as f64 / denom + 0.5).floor() as i32;
    if maxm == 1 << MBITS {
        denom *= 2.0;
        exp += 1;
    }
    let m = c.map(|v| ((v as f64 / denom + 0.5).floor() as u32).min(511));
    m[0] | (m[1] << 9) | (m[2] << 18) | ((exp.clamp(0, 31) as u32) << 27)
}

// ---------------------------------------------------------------------------
// Depth / stencil
// ---------------------------------------------------------------------------

/// The largest raw depth value of a unorm depth format (`Z24*`: 0xFFFFFF),
/// `None` for float depth and formats without depth.
pub fn z_unorm_max(format: Format) -> Option<u32> {
    match format {
        Format::Z16_UNORM => Some(0xffff),
        Format::Z24_UNORM_S8_UINT
        | Format::S8_UINT_Z24_UNORM
        | Format::Z24X8_UNORM
        | Format::X8Z24_UNORM => Some(0xff_ffff),
        Format::Z32_UNORM => Some(0xffff_ffff),
        _ => None,
    }
}

/// Raw depth bits of one pixel: the unorm code, or the float's bits for
/// `Z32_FLOAT*`.  0 for formats without depth.
#[inline]
pub fn unpack_z_raw(format: Format, px: &[u8]) -> u32 {
    match format {
        Format::Z16_UNORM => read_le(px, 0, 2),
        Format::Z32_UNORM | Format::Z32_FLOAT | Format::Z32_FLOAT_S8X24_UINT => read_le(px, 0, 4),
        Format::Z24_UNORM_S8_UINT | Format::Z24X8_UNORM => read_le(px, 0, 4) & 0xff_ffff,
        Format::S8_UINT_Z24_UNORM | Format::X8Z24_UNORM => read_le(px, 0, 4) >> 8,
        _ => 0,
    }
}

/// Writes raw depth bits (see [`unpack_z_raw`]), keeping stencil/X bits.
#[inline]
pub fn pack_z_raw(format: Format, z: u32, px: &mut [u8]) {
    match format {
        Format::Z16_UNORM => write_le(px, 0, 2, z),
        Format::Z32_UNORM | Format::Z32_FLOAT | Format::Z32_FLOAT_S8X24_UINT => {
            write_le(px, 0, 4, z)
        }
        Format::Z24_UNORM_S8_UINT | Format::Z24X8_UNORM => {
            let w = read_le(px, 0, 4);
            write_le(px, 0, 4, (w & 0xff00_0000) | (z & 0xff_ffff));
        }
        Format::S8_UINT_Z24_UNORM | Format::X8Z24_UNORM => {
            let w = read_le(px, 0, 4);
            write_le(px, 0, 4, (w & 0xff) | (z << 8));
        }
        _ => {}
    }
}

/// Depth value → raw bits of `format` (`util_pack_z`: clamp, scale in
/// double precision, round to nearest even; float formats store `z`).
#[inline]
pub fn z_to_raw(format: Format, z: f32) -> u32 {
    match z_unorm_max(format) {
        Some(max) => {
            if z.is_nan() || z <= 0.0 {
                0
            } else if z >= 1.0 {
                max
            } else {
                (z as f64 * max as f64).round_ties_even() as u32
            }
        }
        None => z.to_bits(),
    }
}

/// Raw bits of `format` → depth value.
#[inline]
pub fn raw_to_z(format: Format, raw: u32) -> f32 {
    match z_unorm_max(format) {
        Some(max) => (raw as f64 / max as f64) as f32,
        None => f32::from_bits(raw),
    }
}

/// Depth of one pixel as `f32` (0 for formats without depth).
#[inline]
pub fn unpack_z(format: Format, px: &[u8]) -> f32 {
    if !format.desc().has_depth() {
        return 0.0;
    }
    raw_to_z(format, unpack_z_raw(format, px))
}

/// Writes the depth of one pixel, keeping its stencil bits.
#[inline]
pub fn pack_z(format: Format, z: f32, px: &mut [u8]) {
    if format.desc().has_depth() {
        pack_z_raw(format, z_to_raw(format, z), px);
    }
}

/// Stencil of one pixel (0 for formats without stencil).
#[inline]
pub fn unpack_s(format: Format, px: &[u8]) -> u8 {
    match format {
        Format::S8_UINT | Format::S8_UINT_Z24_UNORM => px.first().copied().unwrap_or(0),
        Format::Z24_UNORM_S8_UINT => px.get(3).copied().unwrap_or(0),
        Format::Z32_FLOAT_S8X24_UINT => px.get(4).copied().unwrap_or(0),
        _ => 0,
    }
}

/// Writes the stencil of one pixel, keeping its depth bits.
#[inline]
pub fn pack_s(format: Format, s: u8, px: &mut [u8]) {
    let at = match format {
        Format::S8_UINT | Format::S8_UINT_Z24_UNORM => 0,
        Format::Z24_UNORM_S8_UINT => 3,
        Format::Z32_FLOAT_S8X24_UINT => 4,
        _ => return,
    };
    if let Some(b) = px.get_mut(at) {
        *b = s;
    }
}

fn unpack_zs_rgba(format: Format, px: &[u8]) -> [f32; 4] {
    // FormatDesc::swizzle: R = depth, G = stencil where present.
    let d = format.desc();
    let z = unpack_z(format, px);
    let s = f32::from(unpack_s(format, px));
    let mut out = [0.0, 0.0, 0.0, 1.0];
    match d.kind {
        FormatKind::Depth => out[0] = z,
        FormatKind::DepthStencil => {
            out[0] = z;
            out[1] = s;
        }
        FormatKind::Stencil => out[1] = s,
        FormatKind::Color => {}
    }
    out
}

fn pack_zs_rgba(format: Format, rgba: [f32; 4], px: &mut [u8]) {
    let d = format.desc();
    if d.has_depth() {
        pack_z(format, rgba[0], px);
    }
    if d.has_stencil() {
        let s = if rgba[1] > 0.0 {
            rgba[1].min(255.0).round_ties_even() as u8
        } else {
            0
        };
        pack_s(format, s, px);
    }
}

// ---------------------------------------------------------------------------
// Public per-pixel API
// ---------------------------------------------------------------------------

/// [`unpack_rgba_f32`] with the format's decoding derived once: for a
/// caller that decodes many single pixels of one format (a sampler's
/// texel fetches, scattered over a level), where `unpack_rgba_f32`
/// derives it again per pixel (that derivation was 15 % of sampling an
/// RGBA16F texture, `perf record`).
pub struct Unpacker(Codec);

impl Unpacker {
    /// The decoder of `format`.
    pub fn new(format: Format) -> Self {
        Unpacker(Codec::new(format))
    }

    /// [`unpack_rgba_f32`] of `px`.
    #[inline]
    pub fn rgba_f32(&self, px: &[u8]) -> [f32; 4] {
        self.0.unpack_f32(px)
    }
}

/// One pixel → RGBA floats.  Depth/stencil formats give `[z, s, 0, 1]`
/// (depth in R, stencil in G, as `FormatDesc::swizzle` documents).
#[inline]
pub fn unpack_rgba_f32(format: Format, px: &[u8]) -> [f32; 4] {
    Codec::new(format).unpack_f32(px)
}

/// RGBA floats → one pixel.
#[inline]
pub fn pack_rgba_f32(format: Format, rgba: [f32; 4], px: &mut [u8]) {
    Codec::new(format).pack_f32(rgba, px)
}

/// One pixel → RGBA unsigned integers (pure integer formats; see module docs
/// for the others).
#[inline]
pub fn unpack_rgba_u32(format: Format, px: &[u8]) -> [u32; 4] {
    Codec::new(format).unpack_int(px).map(sat_u32)
}

/// RGBA unsigned integers → one pixel, clamped to each channel's range.
#[inline]
pub fn pack_rgba_u32(format: Format, rgba: [u32; 4], px: &mut [u8]) {
    Codec::new(format).pack_int(rgba.map(i64::from), px)
}

/// One pixel → RGBA signed integers.
#[inline]
pub fn unpack_rgba_i32(format: Format, px: &[u8]) -> [i32; 4] {
    Codec::new(format).unpack_int(px).map(sat_i32)
}

/// RGBA signed integers → one pixel, clamped to each channel's range.
#[inline]
pub fn pack_rgba_i32(format: Format, rgba: [i32; 4], px: &mut [u8]) {
    Codec::new(format).pack_int(rgba.map(i64::from), px)
}

/// Packs a `pipe_color_union` into one pixel of `format`, reading the
/// union as `ui` for `UINT` formats, `i` for `SINT` formats and `f`
/// otherwise (what every Gallium driver's clear does).
pub fn pack_color_union(format: Format, color: ColorUnion, px: &mut [u8]) {
    match format.desc().channel_type {
        ChannelType::Uint if format.desc().kind == FormatKind::Color => {
            pack_rgba_u32(format, color.ui(), px)
        }
        ChannelType::Sint => pack_rgba_i32(format, color.i(), px),
        _ => pack_rgba_f32(format, color.f(), px),
    }
}

#[inline]
fn sat_u32(v: i64) -> u32 {
    v.clamp(0, i64::from(u32::MAX)) as u32
}

#[inline]
fn sat_i32(v: i64) -> i32 {
    v.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32
}

// ---------------------------------------------------------------------------
// Row API
// ---------------------------------------------------------------------------

#[inline]
fn row_len(format: Format, bytes: usize, values: usize) -> (usize, usize) {
    let bpp = format.desc().block_bytes as usize;
    (values.min(bytes / bpp.max(1)), bpp)
}

/// Unpacks `min(dst.len(), src.len() / bpp)` pixels; returns that count.
pub fn unpack_rgba_f32_row(format: Format, src: &[u8], dst: &mut [[f32; 4]]) -> usize {
    let (n, bpp) = row_len(format, src.len(), dst.len());
    match format {
        // The formats render targets use most: straight-line loops.
        Format::R8G8B8A8_UNORM => {
            for (d, s) in dst[..n].iter_mut().zip(src.chunks_exact(4)) {
                *d = [s[0], s[1], s[2], s[3]].map(|v| f32::from(v) / 255.0);
            }
        }
        Format::B8G8R8A8_UNORM => {
            for (d, s) in dst[..n].iter_mut().zip(src.chunks_exact(4)) {
                *d = [s[2], s[1], s[0], s[3]].map(|v| f32::from(v) / 255.0);
            }
        }
        Format::R32G32B32A32_FLOAT => {
            for (d, s) in dst[..n].iter_mut().zip(src.chunks_exact(16)) {
                *d = std::array::from_fn(|i| {
                    f32::from_le_bytes([s[4 * i], s[4 * i + 1], s[4 * i + 2], s[4 * i + 3]])
                });
            }
        }
        _ => {
            let c = Codec::new(format);
            for (d, s) in dst[..n].iter_mut().zip(src.chunks_exact(bpp)) {
                *d = c.unpack_f32(s);
            }
        }
    }
    n
}

/// Packs `min(src.len(), dst.len() / bpp)` pixels; returns that count.
pub fn pack_rgba_f32_row(format: Format, src: &[[f32; 4]], dst: &mut [u8]) -> usize {
    let (n, bpp) = row_len(format, dst.len(), src.len());
    match format {
        // The formats render targets and blits write most: straight-line
        // loops (same rounding as the codec: `float_to_unorm`).
        Format::R8G8B8A8_UNORM => {
            for (s, d) in src[..n].iter().zip(dst.chunks_exact_mut(4)) {
                for c in 0..4 {
                    d[c] = float_to_unorm(s[c], 8) as u8;
                }
            }
        }
        Format::B8G8R8A8_UNORM => {
            for (s, d) in src[..n].iter().zip(dst.chunks_exact_mut(4)) {
                for (c, &from) in [2, 1, 0, 3].iter().enumerate() {
                    d[c] = float_to_unorm(s[from], 8) as u8;
                }
            }
        }
        _ => {
            let c = Codec::new(format);
            for (s, d) in src[..n].iter().zip(dst.chunks_exact_mut(bpp)) {
                c.pack_f32(*s, d);
            }
        }
    }
    n
}

/// Unpacks a row to unsigned integers; returns the pixel count.
pub fn unpack_rgba_u32_row(format: Format, src: &[u8], dst: &mut [[u32; 4]]) -> usize {
    let (n, bpp) = row_len(format, src.len(), dst.len());
    let c = Codec::new(format);
    for (d, s) in dst[..n].iter_mut().zip(src.chunks_exact(bpp)) {
        *d = c.unpack_int(s).map(sat_u32);
    }
    n
}

/// Packs a row of unsigned integers (clamped); returns the pixel count.
pub fn pack_rgba_u32_row(format: Format, src: &[[u32; 4]], dst: &mut [u8]) -> usize {
    let (n, bpp) = row_len(format, dst.len(), src.len());
    let c = Codec::new(format);
    for (s, d) in src[..n].iter().zip(dst.chunks_exact_mut(bpp)) {
        c.pack_int(s.map(i64::from), d);
    }
    n
}

/// Unpacks a row to signed integers; returns the pixel count.
pub fn unpack_rgba_i32_row(format: Format, src: &[u8], dst: &mut [[i32; 4]]) -> usize {
    let (n, bpp) = row_len(format, src.len(), dst.len());
    let c = Codec::new(format);
    for (d, s) in dst[..n].iter_mut().zip(src.chunks_exact(bpp)) {
        *d = c.unpack_int(s).map(sat_i32);
    }
    n
}

/// Packs a row of signed integers (clamped); returns the pixel count.
pub fn pack_rgba_i32_row(format: Format, src: &[[i32; 4]], dst: &mut [u8]) -> usize {
    let (n, bpp) = row_len(format, dst.len(), src.len());
    let c = Codec::new(format);
    for (s, d) in src[..n].iter().zip(dst.chunks_exact_mut(bpp)) {
        c.pack_int(s.map(i64::from), d);
    }
    n
}

/// Unpacks the depth of a row; returns the pixel count.
pub fn unpack_z_row(format: Format, src: &[u8], dst: &mut [f32]) -> usize {
    let (n, bpp) = row_len(format, src.len(), dst.len());
    if format == Format::Z32_FLOAT {
        for (d, s) in dst[..n].iter_mut().zip(src.chunks_exact(4)) {
            *d = f32::from_le_bytes([s[0], s[1], s[2], s[3]]);
        }
    } else {
        for (d, s) in dst[..n].iter_mut().zip(src.chunks_exact(bpp)) {
            *d = unpack_z(format, s);
        }
    }
    n
}

/// Packs the depth of a row, keeping stencil; returns the pixel count.
pub fn pack_z_row(format: Format, src: &[f32], dst: &mut [u8]) -> usize {
    let (n, bpp) = row_len(format, dst.len(), src.len());
    for (s, d) in src[..n].iter().zip(dst.chunks_exact_mut(bpp)) {
        pack_z(format, *s, d);
    }
    n
}

/// Unpacks the stencil of a row; returns the pixel count.
pub fn unpack_s_row(format: Format, src: &[u8], dst: &mut [u8]) -> usize {
    let (n, bpp) = row_len(format, src.len(), dst.len());
    for (d, s) in dst[..n].iter_mut().zip(src.chunks_exact(bpp)) {
        *d = unpack_s(format, s);
    }
    n
}

/// Packs the stencil of a row, keeping depth; returns the pixel count.
pub fn pack_s_row(format: Format, src: &[u8], dst: &mut [u8]) -> usize {
    let (n, bpp) = row_len(format, dst.len(), src.len());
    for (s, d) in src[..n].iter().zip(dst.chunks_exact_mut(bpp)) {
        pack_s(format, *s, d);
    }
    n
}

/// Fills `dst` (whole pixels) with copies of the one-pixel pattern `pixel`
/// (`pixel.len()` = block size): the fast path of clears.
pub fn fill_row(pixel: &[u8], dst: &mut [u8]) {
    let bpp = pixel.len();
    if bpp == 0 {
        return;
    }
    if pixel.iter().all(|&b| b == pixel[0]) {
        let n = dst.len() / bpp * bpp;
        dst[..n].fill(pixel[0]);
        return;
    }
    for d in dst.chunks_exact_mut(bpp) {
        d.copy_from_slice(pixel);
    }
}

/// Fills the depth and/or stencil part of whole pixels in `dst` with
/// `z` / `s`, keeping the other part (combined formats).  `None` leaves that
/// part untouched.
pub fn fill_zs_row(format: Format, z: Option<f32>, s: Option<u8>, dst: &mut [u8]) {
    let bpp = format.desc().block_bytes as usize;
    let d = format.desc();
    let full_z = z.is_some() || !d.has_depth();
    let full_s = s.is_some() || !d.has_stencil();
    let has_x = matches!(
        format,
        Format::Z24X8_UNORM | Format::X8Z24_UNORM | Format::Z32_FLOAT_S8X24_UINT
    );
    if full_z && full_s && !has_x {
        // Every bit is rewritten: pack one pixel and replicate it.
        let mut px = [0u8; 8];
        if let Some(z) = z {
            pack_z(format, z, &mut px[..bpp]);
        }
        if let Some(s) = s {
            pack_s(format, s, &mut px[..bpp]);
        }
        fill_row(&px[..bpp], dst);
        return;
    }
    let raw = z.map(|z| z_to_raw(format, z));
    for px in dst.chunks_exact_mut(bpp) {
        if let Some(r) = raw {
            pack_z_raw(format, r, px);
        }
        if let Some(s) = s {
            pack_s(format, s, px);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn bpp(f: Format) -> usize {
        f.desc().block_bytes as usize
    }

    /// Every stored bit pattern that means a value (X bits zero, no NaN
    /// payload differences) survives unpack → pack unchanged.
    fn canonical(f: Format, px: &mut [u8]) {
        let d = f.desc();
        let c = Codec::new(f);
        match c.store {
            Store::DepthStencil => {
                // Zero the X bits.
                match f {
                    Format::Z24X8_UNORM => px[3] = 0,
                    Format::X8Z24_UNORM => px[0] = 0,
                    Format::Z32_FLOAT_S8X24_UINT => {
                        px[5..8].fill(0);
                        let z = f32::from_le_bytes(px[0..4].try_into().unwrap());
                        if z.is_nan() {
                            px[0..4].copy_from_slice(&0f32.to_le_bytes());
                        }
                    }
                    Format::Z32_FLOAT => {
                        let z = f32::from_le_bytes(px[0..4].try_into().unwrap());
                        if z.is_nan() {
                            px[0..4].copy_from_slice(&0f32.to_le_bytes());
                        }
                    }
                    _ => {}
                }
            }
            _ => {
                let mut raw = c.read_raw(px);
                #[allow(clippy::needless_range_loop)]
                for i in 0..c.n {
                    if c.source[i] >= 4 {
                        raw[i] = 0;
                    }
                    let b = c.bits[i];
                    match d.channel_type {
                        // The most negative snorm code aliases -1.
                        ChannelType::Snorm if raw[i] == 1 << (b - 1) => raw[i] += 1,
                        ChannelType::Float => {
                            let nan = match b {
                                32 => f32::from_bits(raw[i]).is_nan(),
                                16 => f16_to_f32(raw[i] as u16).is_nan(),
                                _ if c.store == Store::R9G9B9E5 => false,
                                _ => decode_small_float(raw[i], b - 5).is_nan(),
                            };
                            if nan {
                                raw[i] = 0;
                            }
                        }
                        _ => {}
                    }
                }
                if c.store == Store::R9G9B9E5 {
                    // Canonical shared-exponent encodings: re-encode.
                    let v = c.unpack_f32(px);
                    write_le(px, 0, 4, float3_to_rgb9e5([v[0], v[1], v[2]]));
                    return;
                }
                c.write_raw(raw, px);
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn every_format_round_trips_stored_bits(bytes in proptest::collection::vec(any::<u8>(), 16)) {
            for &f in Format::ALL {
                let n = bpp(f);
                let mut px = bytes[..n].to_vec();
                canonical(f, &mut px);
                let d = f.desc();
                let mut out = vec![0u8; n];
                if d.kind != FormatKind::Color {
                    if f != Format::Z32_UNORM {
                        // (32-bit unorm depth does not fit an f32 exactly.)
                        pack_z(f, unpack_z(f, &px), &mut out);
                        pack_s(f, unpack_s(f, &px), &mut out);
                        prop_assert_eq!(&out, &px, "{} depth/stencil", f);
                    }
                    let mut out2 = vec![0u8; n];
                    pack_z_raw(f, unpack_z_raw(f, &px), &mut out2);
                    pack_s(f, unpack_s(f, &px), &mut out2);
                    prop_assert_eq!(&out2, &px, "{} raw depth", f);
                    continue;
                }
                if d.channel_type == ChannelType::Uint {
                    pack_rgba_u32(f, unpack_rgba_u32(f, &px), &mut out);
                    prop_assert_eq!(&out, &px, "{} u32", f);
                    out.fill(0);
                }
                if d.channel_type == ChannelType::Sint {
                    pack_rgba_i32(f, unpack_rgba_i32(f, &px), &mut out);
                    prop_assert_eq!(&out, &px, "{} i32", f);
                    out.fill(0);
                }
                pack_rgba_f32(f, unpack_rgba_f32(f, &px), &mut out);
                let c = Codec::new(f);
                if d.channel_type != ChannelType::Float && c.bits[0] == 32 {
                    // 32-bit fixed-point codes do not fit an f32's 24-bit
                    // significand: the round trip is exact to 2^-24.
                    let (a, b) = (c.read_raw(&px), c.read_raw(&out));
                    for i in 0..c.n {
                        let (x, y) = (a[i] as i32 as i64, b[i] as i32 as i64);
                        let (x, y) = if matches!(d.channel_type, ChannelType::Snorm | ChannelType::Sscaled | ChannelType::Sint) {
                            (x, y)
                        } else {
                            (a[i] as i64, b[i] as i64)
                        };
                        prop_assert!((x - y).abs() <= (x.abs() >> 23) + 1, "{} {} {}", f, x, y);
                    }
                } else {
                    prop_assert_eq!(&out, &px, "{} f32 {:?}", f, unpack_rgba_f32(f, &px));
                }
            }
        }

        #[test]
        fn unorm8_pack_rounds_to_nearest(v in 0.0f32..=1.0) {
            let mut px = [0u8; 4];
            pack_rgba_f32(Format::R8G8B8A8_UNORM, [v; 4], &mut px);
            let exact = v * 255.0;
            prop_assert!((px[0] as f32 - exact).abs() <= 0.5);
        }

        #[test]
        fn half_matches_reference(v in any::<f32>()) {
            // Reference: round through f64 arithmetic with explicit ties-to-even.
            let h = f32_to_f16(v);
            if v.is_nan() {
                prop_assert!(f16_to_f32(h).is_nan());
            } else {
                let back = f16_to_f32(h) as f64;
                let vd = v as f64;
                // No other half is closer.
                for cand in [h.wrapping_sub(1), h.wrapping_add(1)] {
                    let c = f16_to_f32(cand);
                    if c.is_nan() || (cand ^ h) & 0x8000 != 0 { continue; }
                    let (dc, db) = ((c as f64 - vd).abs(), (back - vd).abs());
                    prop_assert!(db < dc || (db == dc && h & 1 == 0) || back.is_infinite(),
                        "{} -> {:#x} ({}), neighbour {:#x} ({})", v, h, back, cand, c);
                }
            }
        }

        #[test]
        fn depth_round_trip(z in 0.0f32..=1.0) {
            for f in [Format::Z16_UNORM, Format::Z24_UNORM_S8_UINT, Format::S8_UINT_Z24_UNORM,
                      Format::Z24X8_UNORM, Format::X8Z24_UNORM, Format::Z32_UNORM] {
                let mut px = [0u8; 4];
                pack_z(f, z, &mut px);
                let back = unpack_z(f, &px);
                let ulp = 1.0 / z_unorm_max(f).unwrap() as f32;
                prop_assert!((back - z).abs() <= ulp * 0.5 + 1e-7, "{} {} {}", f, z, back);
            }
            for f in [Format::Z32_FLOAT, Format::Z32_FLOAT_S8X24_UINT] {
                let mut px = [0u8; 8];
                pack_z(f, z, &mut px);
                prop_assert_eq!(unpack_z(f, &px), z);
            }
        }
    }

    #[test]
    fn known_values() {
        let mut px = [0u8; 4];
        pack_rgba_f32(Format::B8G8R8A8_UNORM, [1.0, 0.5, 0.0, 0.25], &mut px);
        assert_eq!(px, [0, 128, 255, 64]);
        assert_eq!(
            unpack_rgba_f32(Format::B8G8R8A8_UNORM, &px),
            [1.0, 128.0 / 255.0, 0.0, 64.0 / 255.0]
        );
        // 565: blue in the low bits.
        let mut p2 = [0u8; 2];
        pack_rgba_f32(Format::B5G6R5_UNORM, [1.0, 0.0, 0.0, 0.0], &mut p2);
        assert_eq!(u16::from_le_bytes(p2), 0xf800);
        // 10/10/10/2: R in the low bits, A on top.
        pack_rgba_f32(Format::R10G10B10A2_UNORM, [1.0, 0.0, 0.0, 1.0], &mut px);
        assert_eq!(u32::from_le_bytes(px), 0xc000_03ff);
        // snorm: -1 and the aliasing most negative code.
        let mut p1 = [0u8; 1];
        pack_rgba_f32(Format::R8_SNORM, [-2.0, 0.0, 0.0, 0.0], &mut p1);
        assert_eq!(p1[0], 0x81);
        assert_eq!(unpack_rgba_f32(Format::R8_SNORM, &[0x80])[0], -1.0);
        // sRGB: 0.5 linear encodes to 188 (0.7354 * 255 = 187.5 → 188).
        pack_rgba_f32(Format::R8G8B8A8_SRGB, [0.5, 0.0, 1.0, 0.5], &mut px);
        assert_eq!(px, [188, 0, 255, 128]);
        let lin = unpack_rgba_f32(Format::R8G8B8A8_SRGB, &px);
        assert!((lin[0] - 0.5028).abs() < 1e-3 && lin[3] == 128.0 / 255.0);
        // Swizzles: L8 replicates, A8 is alpha only, X reads 1.
        assert_eq!(
            unpack_rgba_f32(Format::L8_UNORM, &[255]),
            [1.0, 1.0, 1.0, 1.0]
        );
        assert_eq!(
            unpack_rgba_f32(Format::A8_UNORM, &[0]),
            [0.0, 0.0, 0.0, 0.0]
        );
        assert_eq!(
            unpack_rgba_f32(Format::R8G8B8X8_UNORM, &[0, 0, 0, 0]),
            [0.0, 0.0, 0.0, 1.0]
        );
        // Half floats.
        assert_eq!(f32_to_f16(1.0), 0x3c00);
        assert_eq!(f32_to_f16(65504.0), 0x7bff);
        assert_eq!(f32_to_f16(65520.0), 0x7c00); // rounds to infinity
        assert_eq!(f32_to_f16(5.960_464_5e-8), 0x0001); // smallest subnormal
        assert_eq!(f32_to_f16(2.980_232_2e-8), 0x0000); // tie → even (0)
        assert_eq!(f16_to_f32(0x0001), 5.960_464_5e-8);
        assert_eq!(f32_to_f16(-0.0), 0x8000);
        // R11G11B10: 1.0 in each, negatives clamp to 0, overflow to max.
        pack_rgba_f32(Format::R11G11B10_FLOAT, [1.0, -5.0, 1e9, 0.0], &mut px);
        let w = u32::from_le_bytes(px);
        assert_eq!(w & 0x7ff, 15 << 6);
        assert_eq!((w >> 11) & 0x7ff, 0);
        assert_eq!(w >> 22, (30 << 5) | 31);
        assert_eq!(
            unpack_rgba_f32(Format::R11G11B10_FLOAT, &px),
            [1.0, 0.0, 64512.0, 1.0]
        );
        // R9G9B9E5.
        pack_rgba_f32(Format::R9G9B9E5_FLOAT, [1.0, 0.5, 0.25, 1.0], &mut px);
        assert_eq!(
            unpack_rgba_f32(Format::R9G9B9E5_FLOAT, &px),
            [1.0, 0.5, 0.25, 1.0]
        );
        // Integers clamp.
        let mut p8 = [0u8; 8];
        pack_rgba_u32(Format::R16G16B16A16_UINT, [70000, 5, 0, 1], &mut p8);
        assert_eq!(
            unpack_rgba_u32(Format::R16G16B16A16_UINT, &p8),
            [65535, 5, 0, 1]
        );
        pack_rgba_i32(Format::R16G16B16A16_SINT, [-70000, 5, 40000, -1], &mut p8);
        assert_eq!(
            unpack_rgba_i32(Format::R16G16B16A16_SINT, &p8),
            [-32768, 5, 32767, -1]
        );
        pack_rgba_i32(Format::R8G8B8A8_UINT, [-3, 300, 7, 0], &mut px);
        assert_eq!(px, [0, 255, 7, 0]);
        // Missing integer channels read 0, alpha 1.
        assert_eq!(
            unpack_rgba_u32(Format::R32_UINT, &7u32.to_le_bytes()),
            [7, 0, 0, 1]
        );
    }

    #[test]
    fn depth_stencil_are_independent() {
        let mut px = [0u8; 4];
        pack_z(Format::Z24_UNORM_S8_UINT, 1.0, &mut px);
        pack_s(Format::Z24_UNORM_S8_UINT, 0x5a, &mut px);
        assert_eq!(u32::from_le_bytes(px), 0x5aff_ffff);
        pack_z(Format::Z24_UNORM_S8_UINT, 0.25, &mut px);
        assert_eq!(u32::from_le_bytes(px), 0x5a40_0000); // lrint(0.25 * 0xffffff)
        assert_eq!(unpack_s(Format::Z24_UNORM_S8_UINT, &px), 0x5a);
        pack_s(Format::S8_UINT_Z24_UNORM, 3, &mut px);
        pack_z(Format::S8_UINT_Z24_UNORM, 1.0, &mut px);
        assert_eq!(u32::from_le_bytes(px), 0xffff_ff03);
        let mut p8 = [0u8; 8];
        pack_z(Format::Z32_FLOAT_S8X24_UINT, 0.75, &mut p8);
        pack_s(Format::Z32_FLOAT_S8X24_UINT, 9, &mut p8);
        assert_eq!(unpack_z(Format::Z32_FLOAT_S8X24_UINT, &p8), 0.75);
        assert_eq!(unpack_s(Format::Z32_FLOAT_S8X24_UINT, &p8), 9);
        assert_eq!(
            unpack_rgba_f32(Format::Z32_FLOAT_S8X24_UINT, &p8),
            [0.75, 9.0, 0.0, 1.0]
        );
        // Clamping of unorm depth.
        pack_z(Format::Z16_UNORM, 2.0, &mut px);
        assert_eq!(unpack_z(Format::Z16_UNORM, &px), 1.0);
        pack_z(Format::Z16_UNORM, -1.0, &mut px);
        assert_eq!(unpack_z(Format::Z16_UNORM, &px), 0.0);
        // Rows and fills keep the other component.
        let mut row = [0u8; 16];
        fill_zs_row(Format::Z24_UNORM_S8_UINT, Some(1.0), Some(7), &mut row);
        fill_zs_row(Format::Z24_UNORM_S8_UINT, None, Some(9), &mut row[4..12]);
        let mut z = [0.0f32; 4];
        let mut s = [0u8; 4];
        assert_eq!(unpack_z_row(Format::Z24_UNORM_S8_UINT, &row, &mut z), 4);
        unpack_s_row(Format::Z24_UNORM_S8_UINT, &row, &mut s);
        assert_eq!(z, [1.0; 4]);
        assert_eq!(s, [7, 9, 9, 7]);
    }

    #[test]
    fn rows_match_pixels_and_never_overrun() {
        for &f in Format::ALL {
            let n = bpp(f);
            let bytes: Vec<u8> = (0..n * 5).map(|i| (i * 37 + 11) as u8).collect();
            let mut rgba = [[0.0f32; 4]; 5];
            // A short destination limits the count.
            assert_eq!(unpack_rgba_f32_row(f, &bytes, &mut rgba[..3]), 3);
            assert_eq!(unpack_rgba_f32_row(f, &bytes[..n * 3 - 1], &mut rgba), 2);
            assert_eq!(unpack_rgba_f32_row(f, &bytes, &mut rgba), 5);
            for (i, v) in rgba.iter().enumerate() {
                let p = unpack_rgba_f32(f, &bytes[i * n..][..n]);
                assert!(
                    v.iter()
                        .zip(p.iter())
                        .all(|(a, b)| a == b || a.is_nan() && b.is_nan()),
                    "{f}"
                );
            }
            let mut out = vec![0u8; n * 5];
            assert_eq!(pack_rgba_f32_row(f, &rgba, &mut out[..n * 5 - 1]), 4);
            // Rows pack exactly as pixels do (fast paths included), for
            // out-of-range values, NaN and ties too.
            let vals = [
                [0.3, -0.2, 1.7, f32::NAN],
                [0.5 / 255.0, 1.5 / 255.0, 254.5 / 255.0, 1.0],
                [0.0, 1.0, 0.25, 0.75],
                [-1.0, 2.0, 0.001, 0.999],
                [100.0, -100.0, 0.5, 0.1],
            ];
            let mut row = vec![0u8; n * 5];
            assert_eq!(pack_rgba_f32_row(f, &vals, &mut row), 5);
            for (i, v) in vals.iter().enumerate() {
                let mut px = vec![0u8; n];
                pack_rgba_f32(f, *v, &mut px);
                assert_eq!(&row[i * n..][..n], &px[..], "{f} {v:?}");
            }
            // Short pixel slices never panic.
            let _ = unpack_rgba_f32(f, &bytes[..1]);
            pack_rgba_f32(f, [0.5; 4], &mut out[..1]);
            let _ = unpack_z(f, &bytes[..1]);
            pack_s(f, 1, &mut out[..0]);
        }
    }

    #[test]
    fn every_half_round_trips() {
        for h in 0..=u16::MAX {
            let f = f16_to_f32(h);
            if f.is_nan() {
                assert!(f16_to_f32(f32_to_f16(f)).is_nan());
            } else {
                assert_eq!(f32_to_f16(f), h, "{h:#x} {f}");
            }
        }
        // Every 11- and 10-bit unsigned float too.
        for mbits in [6, 5] {
            for v in 0..(32u32 << mbits) {
                let f = decode_small_float(v, mbits);
                if !f.is_nan() {
                    assert_eq!(f32_to_ufloat(f, mbits), v, "{v:#x} {f}");
                }
            }
        }
    }

    #[test]
    fn srgb_table_matches_curve_and_encode_inverts() {
        let t = srgb8_to_linear();
        for i in 0..=255u32 {
            let lin = t[i as usize];
            assert!((srgb_to_linear(i as f32 / 255.0) - lin).abs() < 1e-6);
            let back = (linear_to_srgb(lin) * 255.0).round_ties_even() as u32;
            assert_eq!(back, i);
        }
    }
}
