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
