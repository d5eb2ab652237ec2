//! SIMD levels chosen at run time (ARCHITECTURE.md, "SIMD levels").
//!
//! The hot kernels are `multiversion` functions: compiled once for the
//! build's own target and once for x86-64-v3, the clone picked by CPUID on
//! first call.  Inside a clone, hand-written AVX2 paths (gathers, byte
//! shuffles, 16-bit multiplies that `wide` built for baseline x86-64 only
//! emulates) are taken when the caller holds an [`X86V3`] token, which
//! exists only where the CPU runs AVX2 and FMA: a safe function cannot
//! reach one of their instructions on a CPU without them.

/// Proof that the CPU runs AVX2 and FMA, the part of x86-64-v3 the
/// hand-written paths use, so `#[target_feature(enable = "avx2,fma")]`
/// functions may be called.  A zero-sized value: passed as
/// `Option<X86V3>` down an inlined kernel whose root made it a constant,
/// the level's branches fold away.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct X86V3(());

impl X86V3 {
    /// The token, when this CPU runs AVX2 and FMA.
    pub fn detect() -> Option<X86V3> {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::is_x86_feature_detected as has;
            if has!("avx2") && has!("fma") {
                return Some(X86V3(()));
            }
        }
        None
    }

    /// The token when the build itself requires AVX2 and FMA (`target-cpu`
    /// or `target-feature`), for code outside the run-time dispatched
    /// kernels; `None` in a baseline build.
    pub const fn of_build() -> Option<X86V3> {
        if cfg!(all(
            target_arch = "x86_64",
            target_feature = "avx2",
            target_feature = "fma"
        )) {
            Some(X86V3(()))
        } else {
            None
        }
    }

    /// The token in a `multiversion` clone: `has` is the clone's
    /// `multiversion::target::target_cfg_f!(all(target_feature = "avx2",
    /// target_feature = "fma"))`, written in the clone's own body (the
    /// macro is resolved per clone there), so it is a constant and the
    /// kernel's level branches fold.
    ///
    /// # Safety
    /// `has` is true only where the CPU runs AVX2 and FMA, as that
    /// expression is.
    pub const unsafe fn in_clone(has: bool) -> Option<X86V3> {
        if has { Some(X86V3(())) } else { None }
    }
}

/// Whether this CPU's AVX2 gathers fetch 8-byte texel pairs faster than
/// scalar loads, which the bilinear kernels ask per lookup.  Measured
/// both ways (paired A/B, one thread): on a Zen 4 host (2026-11-27) 16
/// scalar loads ran postprocess 0.967x against four `vpgatherdq`; on an
/// Intel Xeon with AVX-512 (2026-11-28) the gathers ran it 0.839x
/// against the scalar loads (textured_mesh 0.952x, pbr_barrels 0.952x).
/// So: not on AMD (or Hygon) cores, whose gathers are microcoded, and
/// yes elsewhere.
pub fn fast_gathers() -> bool {
    cfg!(target_arch = "x86_64") && !amd_cores()
}

/// Whether the CPU's vendor is AMD (or Hygon, whose cores are AMD's):
/// the choices measured per vendor ask it ([`fast_gathers`], the JIT's
/// 16-lane regions).  A fact of the CPU, read once (CPUID in a VM can
/// trap to the hypervisor) and kept like `std`'s feature detection
/// cache.
pub fn amd_cores() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        static AMD: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *AMD.get_or_init(|| {
            // (leaf 0: the vendor string, on every x86-64 CPU)
            let r = core::arch::x86_64::__cpuid(0);
            let vendor = [r.ebx, r.edx, r.ecx].map(u32::to_le_bytes).concat();
            vendor == *b"AuthenticAMD" || vendor == *b"HygonGenuine"
        })
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

#[cfg(test)]
mod tests {
    use super::X86V3;

    #[test]
    fn the_build_level_implies_the_cpu_level() {
        if X86V3::of_build().is_some() {
            assert!(X86V3::detect().is_some());
        }
    }
}
