//! The store of llvmpipe's "arithmetic" unorm formats (`lp_state_fs.c`:
//! `is_arithmetic_format`, `convert_to_blend_type`,
//! `convert_from_blend_type`, `scale_bits`): packed formats whose channels
//! differ in size or are not whole bytes (B5G6R5, B5G5R5A1, B4G4R4A4,
//! R10G10B10A2, B10G10R10A2).
//!
//! llvmpipe neither blends nor stores these through `util_format`'s
//! `round(x * (2^n - 1))`.  Every colour write, blended or not, goes:
//! 1. shader colour (clamped) → the blend width, 8 bits when the widest
//!    channel fits in a byte and 16 bits otherwise
//!    (`lp_blend_type_from_format_desc`), converted as `lp_build_conv`
//!    does ([`unit_to_norm`]);
//! 2. destination channels widened to that width by bit replication
//!    (`scale_bits` up: `(c << 3) | (c >> 2)` for 5 → 8);
//! 3. the blend (when enabled) in integers of that width, the same
//!    arithmetic as the RGBA8 store ([`blend_norm`]);
//! 4. narrowed by `scale_bits` down, which *truncates* when the width
//!    loses at most as many bits as the channel keeps (8 → 5 is `>> 3`,
//!    16 → 10 is `>> 6`), rounds with a multiply when it loses more
//!    (16 → 2: `((v >> 2) * 3 + 2^13) >> 14`), and for 4-bit channels goes
//!    through float (`x / 255` then `round(x * 15)`, magic-number rounding).
//!
//! So a B5G6R5 write of 0.025 stores red 0 (`round(6.375) = 6`, `6 >> 3`),
//! where `util_format` would store `round(0.775) = 1`.  Before this store,
//! ferropipe blended these in float and packed with `util_format`'s
//! rounding: 1,150 of 24,576 B5G6R5 bytes of the blend sweep
//! (tests/differential/README.md) were one 5- or 6-bit step off.
//!
//! Logic ops work on the widened values, as llvmpipe's
//! `lp_build_blend_aos` applies them in the blend type; masked channels keep
//! their bits (widening then narrowing is the identity).

use ferropipe_components::enums::LogicOp;
use ferropipe_components::format::{ChannelType, FormatDesc, FormatKind};
use ferropipe_components::shader::{FRAG_LANE_X, FRAG_LANE_Y, ILanes, LANES, Lanes};

use super::unorm8::{BlendBytes, ByteQuad, NormWidth, blend_norm, unit_to_norm};
use super::{ColorTarget, Quad, channel_bits};

/// A packed unorm format llvmpipe stores through its arithmetic path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PackedUnorm {
    width: NormWidth,
    /// RGBA channel c: (bit offset in the pixel, bit count; 0 when absent).
    chan: [(u32, u32); 4],
    /// Bytes per pixel (2 or 4).
    bytes: usize,
}

impl PackedUnorm {
    /// `Some` for unorm colour formats `is_arithmetic_format` calls
    /// arithmetic (a channel whose size differs from the first's, or is not
    /// a multiple of 8) that fit a 32-bit word.
    pub(crate) fn classify(d: &FormatDesc) -> Option<PackedUnorm> {
        if d.kind != FormatKind::Color
            || d.channel_type != ChannelType::Unorm
            || d.srgb
            || !d.packed
            || d.block_bytes > 4
        {
            return None;
        }
        let stored = d
            .channel_bits
            .iter()
            .filter(|&&b| b != 0)
            .map(|&b| b as u32);
        let first = stored.clone().next()?;
        if !stored.clone().any(|b| b != first || b % 8 != 0) {
            return None;
        }
        let widest = stored.max()?;
        let width = match widest {
            0..=8 => NormWidth::W8,
            9..=16 => NormWidth::W16,
            _ => return None,
        };
        Some(PackedUnorm {
            width,
            chan: std::array::from_fn(|c| channel_bits(d, c)),
            bytes: d.block_bytes as usize,
        })
    }

    /// The width llvmpipe blends this format in.
    pub(super) fn width(&self) -> NormWidth {
        self.width
    }

    /// The pixel's bits as a little-endian word.
    fn load(&self, px: &[u8]) -> u32 {
        let mut w = [0u8; 4];
        let n = self.bytes.min(px.len());
        w[..n].copy_from_slice(&px[..n]);
        u32::from_le_bytes(w)
    }

    fn store(&self, px: &mut [u8], v: u32) {
        let n = self.bytes.min(px.len());
        px[..n].copy_from_slice(&v.to_le_bytes()[..n]);
    }

    /// RGBA of one pixel at the blend width (absent colour channels 0,
    /// absent alpha the maximum, as the other stores read X channels).
    fn widen_pixel(&self, word: u32) -> [i32; 4] {
        let w = self.width.bits();
        std::array::from_fn(|c| {
            let (off, n) = self.chan[c];
            if n == 0 {
                return if c == 3 { self.width.max() } else { 0 };
            }
            widen((word >> off) & ((1 << n) - 1), n, w) as i32
        })
    }
}

/// `scale_bits` up from `n` to `w` bits: bit replication.
fn widen(v: u32, n: u32, w: u32) -> u32 {
    let db = w - n;
    let mut r = v << db;
    if db <= n {
        r |= v >> (n - db);
    } else {
        let mut k = n;
        while k < w {
            r |= r >> k;
            k *= 2;
        }
    }
    r
}

/// `scale_bits` down from `w` to `n` bits (see the module docs).
fn narrow(v: u32, w: u32, n: u32) -> u32 {
    let delta = w - n;
    if delta <= n {
        if n == 4 {
            // lp_build_unsigned_norm_to_float, then
            // lp_build_clamped_float_to_unsigned_norm's magic rounding.
            let x = v as f32 * (1.0 / ((1u32 << w) - 1) as f32);
            let t = x * (15.0 / 16.0) + (1u32 << (23 - 4)) as f32;
            t.to_bits() & 0xf
        } else {
            v >> delta
        }
    } else {
        (((v >> n) * ((1 << n) - 1)) + (1 << (delta - 1))) >> delta
    }
}

/// One generic group's store into a [`PackedUnorm`] target (`mask`:
/// covered lanes; `src`, `src1`, `cc` clamped to [0, 1]).
#[allow(clippy::too_many_arguments)]
pub(super) fn store_group(
    p: &PackedUnorm,
    target: &ColorTarget,
    (gx, gy, mask): (i32, i32, u8),
    colormask: u8,
    blend: Option<&BlendBytes>,
    logicop: Option<LogicOp>,
    src: &Quad,
    src1: &Quad,
    cc: &Quad,
) {
    let mut words = [0u32; LANES];
    let mut dst = [[0i32; LANES]; 4];
    let mut pixels: [Option<&mut [u8]>; LANES] = Default::default();
    for (l, slot) in pixels.iter_mut().enumerate() {
        if mask & (1 << l) == 0 {
            continue;
        }
        let x = gx + FRAG_LANE_X[l] as i32;
        let y = gy + FRAG_LANE_Y[l] as i32;
        // SAFETY: tile jobs own disjoint pixels (merge module docs).
        let Some(px) = (unsafe { target.mem.pixel(x, y) }) else {
            continue;
        };
        words[l] = p.load(px);
        let d = p.widen_pixel(words[l]);
        for c in 0..4 {
            dst[c][l] = d[c];
        }
        *slot = Some(px);
    }
    let dst: ByteQuad = dst.map(ILanes::new);
    let out: ByteQuad = match blend {
        Some(b) => blend_norm(p.width, b, src, src1, &dst, cc),
        None => src.map(|x: Lanes| unit_to_norm(p.width, x)),
    };
    let out = out.map(|v| v.to_array());
    let dst = dst.map(|v| v.to_array());
    let w = p.width.bits();
    for (l, slot) in pixels.iter_mut().enumerate() {
        let Some(px) = slot else { continue };
        let mut word = words[l];
        for c in 0..4 {
            let (off, n) = p.chan[c];
            if n == 0 || colormask & (1 << c) == 0 {
                continue;
            }
            let mut v = out[c][l] as u32;
            if let Some(op) = logicop {
                v = op.apply(v, dst[c][l] as u32) & ((1 << w) - 1);
            }
            let bits = (1u32 << n) - 1;
            word = (word & !(bits << off)) | (narrow(v, w, n) << off);
        }
        p.store(px, word);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferropipe_components::format::Format;

    #[test]
    fn classifies_what_llvmpipe_calls_arithmetic() {
        for (f, width) in [
            (Format::B5G6R5_UNORM, Some(NormWidth::W8)),
            (Format::B5G5R5A1_UNORM, Some(NormWidth::W8)),
            (Format::B4G4R4A4_UNORM, Some(NormWidth::W8)),
            (Format::R10G10B10A2_UNORM, Some(NormWidth::W16)),
            (Format::B10G10R10A2_UNORM, Some(NormWidth::W16)),
            (Format::R8G8B8A8_UNORM, None),
            (Format::R16G16B16A16_UNORM, None),
            (Format::R8G8B8A8_SRGB, None),
        ] {
            assert_eq!(
                PackedUnorm::classify(f.desc()).map(|p| p.width),
                width,
                "{f}"
            );
        }
    }

    /// `scale_bits` round trips: widening then narrowing keeps every value
    /// (masked channels keep their bits), and widening replicates bits.
    #[test]
    fn widen_then_narrow_is_identity() {
        for (n, w) in [(5, 8), (6, 8), (4, 8), (1, 8), (10, 16), (2, 16)] {
            for v in 0..(1u32 << n) {
                assert_eq!(narrow(widen(v, n, w), w, n), v, "{n} -> {w}: {v}");
            }
        }
        assert_eq!(widen(0b10110, 5, 8), 0b1011_0101);
        assert_eq!(widen(1, 2, 16), 0x5555);
        assert_eq!(widen(0x3ff, 10, 16), 0xffff);
    }

    /// The stored value of a shader colour with blending off: bytes
    /// truncated to 5 bits, unlike `util_format`'s rounding.
    #[test]
    fn unblended_b5g6r5_truncates_the_byte() {
        let q = |x: f32| {
            let v = unit_to_norm(NormWidth::W8, Lanes::splat(x)).to_array()[0] as u32;
            narrow(v, 8, 5)
        };
        assert_eq!(q(0.025), 0); // byte 6; util_format: round(0.775) = 1
        assert_eq!(q(0.5), 16); // byte 128
        assert_eq!(q(1.0), 31);
        assert_eq!(q(0.49), 15); // byte 125
    }

    /// Unsigned-norm 16-bit conversion: the magic-number sum's low bits.
    #[test]
    fn unit_to_16_bits_ends() {
        let v = |x: f32| unit_to_norm(NormWidth::W16, Lanes::splat(x)).to_array()[0];
        assert_eq!(v(0.0), 0);
        assert_eq!(v(1.0), 0xffff);
        assert_eq!(v(0.5), 32768);
    }
}
