//! SIMD levels chosen at run time (ARCHITECTURE.md, "SIMD levels").
//!
//! The hot kernels are `multiversion` functions: compiled once for the
//! build's own target and once for x86-64-v3, the clone picked by CPUID on
//! first call.  Inside a clone, hand-written AVX2 paths (gathers, byte
//! shuffles, 16-bit multiplies that `wide` built for baseline x86-64 only
//! emulates) are taken when the caller holds an [`Avx2`] token, which
//! exists only where the CPU runs AVX2: a safe function cannot reach an
//! AVX2 instruction on a CPU without it.

/// Proof that the CPU runs AVX2 (and so `#[target_feature(enable =
/// "avx2")]` functions may be called).  A zero-sized value: passed as
/// `Option<Avx2>` down an inlined kernel whose root made it a constant,
/// the level's branches fold away.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Avx2(());

impl Avx2 {
    /// The token, when this CPU runs AVX2.
    pub fn detect() -> Option<Avx2> {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            return Some(Avx2(()));
        }
        None
    }

    /// The token when the build itself requires AVX2 (`target-cpu` or
    /// `target-feature`), for code outside the run-time dispatched
    /// kernels; `None` in a baseline build.
    pub const fn of_build() -> Option<Avx2> {
        if cfg!(all(target_arch = "x86_64", target_feature = "avx2")) {
            Some(Avx2(()))
        } else {
            None
        }
    }

    /// The token without a check.
    ///
    /// # Safety
    /// The CPU runs AVX2: for example, the caller is compiled with
    /// `#[target_feature(enable = "avx2")]` (a `multiversion` clone runs
    /// only after its dispatcher found the feature).
    pub const unsafe fn new_unchecked() -> Avx2 {
        Avx2(())
    }
}

#[cfg(test)]
mod tests {
    use super::Avx2;

    #[test]
    fn the_build_level_implies_the_cpu_level() {
        if Avx2::of_build().is_some() {
            assert!(Avx2::detect().is_some());
        }
    }
}
