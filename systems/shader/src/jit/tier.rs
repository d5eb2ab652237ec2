//! Tiered compilation for [`Backend::Jit`]: Cranelift's code from shader
//! creation, LLVM's once the shader has run enough work to pay for it.
//!
//! Why tiers: LLVM's code is up to ~1.7x faster (the fragment_shader bench:
//! 13.5 against 23.0 µs) but costs ~3.5 ms a program plus ~1.3 ms a region
//! to generate, against Cranelift's p50 of 0.6 ms (`jit_stats`,
//! docs/shaders.md "The JIT").  Compiling every shader with LLVM at
//! creation made a host that creates hundreds of shaders stall for seconds
//! (300 shaders at the p50 of 5 ms: 1.5 s), most of them shaders that run
//! little.  So creation pays for Cranelift only, and each shader counts the
//! work it runs; the thread whose call passes the shader's break-even point
//! compiles LLVM's code (the other threads keep running Cranelift's
//! meanwhile) and every later call runs it.  Images do not depend on the
//! tier: both code generators give the interpreter's bits (`jit::tests`,
//! the harness in `tests/common`).
//!
//! The break-even point is the ski-rental rule: switch when the time lost
//! by not having switched equals the switch's cost, which keeps the total
//! within 2x of the best choice made in hindsight whatever the shader's
//! future.  Cost: [`LLVM_COMPILE_NS`] + [`LLVM_COMPILE_NS_PER_REGION`] per
//! region.  Saving: [`SAVED_PS_PER_OP_GROUP`] for each compiled op run on
//! one 8-lane group.
//!
//! There is no background compile: the library runs on the host's threads
//! only, and a worker that pays one compile (3-45 ms, plus ~21 ms for the
//! process's first, which loads `libLLVM`) is what llvmpipe's first draw
//! with a new state pays too.  A host that knows a shader is hot
//! calls [`TieredCode::tier_up`] (through `CompiledShader::tier_up`) ahead
//! of time.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use super::{Backend, Codegen, JitCode, LLVM_MAX_REGIONS, candidates, compile_with};
use crate::ir::LaneProgram;

/// LLVM's fixed compile cost per program, in ns: `jit_stats` over the 43
/// shaders of the conformance and perf scenes fits ~3.5 ms a program
/// (0.3 ms of it creating the `LLJIT`, the rest code generation).
pub const LLVM_COMPILE_NS: u64 = 3_500_000;
/// LLVM's compile cost per region, in ns (the same fit: ~1.3 ms).
pub const LLVM_COMPILE_NS_PER_REGION: u64 = 1_300_000;
/// What LLVM's code saves against Cranelift's per compiled op and 8-lane
/// group, in picoseconds: the fragment_shader bench's 66-op region runs
/// 512 groups in 23.02 µs on Cranelift's code and 13.50 on LLVM's,
/// (23.02 - 13.50) µs / (512 * 66) = 0.28 ns.  Real shaders spread around
/// it: postprocess's 16 short regions between texture ops save ~0.18 ns
/// (6 ms a 1080p frame, 0.933x in the spike), pbr_barrels' region (inline
/// `pow`, more live values than Cranelift's 128-bit code has registers for)
/// ~0.5 ns (0.756x of ~274 ms over 416,545 groups of 320 ops a frame).  So a pbr-like shader switches later than its own break-even
/// (still inside its first frame) and a postprocess-like one earlier (after
/// 2.6 frames rather than ~4): within the rule's 2x either way.
pub const SAVED_PS_PER_OP_GROUP: u64 = 280;

/// What LLVM's code saves per 8-lane group on a texture lookup it may
/// sample inside its region (`JitCode::variant`), in compiled ops (of
/// [`SAVED_PS_PER_OP_GROUP`] each).  The two perf scenes that inline
/// spread 4x apart (2026-11-28, one thread, `FERROPIPE_SHADER=cranelift`
/// against `llvm`, after the ops' share): postprocess's 15 lookups at one
/// level, in calls of 259,200 groups a frame, save 87 ns a group, less
/// the 131 ops' 37: 3.4 ns a lookup and group (12 ops); textured_mesh's
/// one lookup at
/// per-quad levels, in ~10,000 calls of ~60 groups a frame (592,588
/// groups), saves ~10 ms a frame, 15 ns a group (53 ops), the quad
/// sampler's per-call setup included.  Their geometric mean, 25, is
/// within 2x of both, so each switches within the rule's 2x of its own
/// break-even: postprocess after ~2.3 frames (~3.4 at its own 12 ops),
/// textured_mesh after ~2 (~1.2 at 53).
pub const LOOKUP_OPS: u64 = 25;

/// LLVM's compile cost per lookup a sampling variant inlines, in ns, on
/// top of [`LLVM_COMPILE_NS`] and the regions': `jit_stats`' variants
/// against their programs' code without lookups, postprocess (15
/// lookups) ~92 against ~33 ms, textured_mesh (1) 12.8 against 7.7 ms:
/// ~4 ms a lookup.  The automatic switch of such a program compiles the
/// variant its calls run, not the code without lookups too
/// (`JitCode::deferred`): this is its cost.
pub const LLVM_COMPILE_NS_PER_LOOKUP: u64 = 4_000_000;

/// A shader's native code under [`Backend::Jit`]'s tiers, or a single
/// code generator's for the other back ends (which never switch).
#[derive(Debug)]
pub struct TieredCode {
    /// The code every call runs until (and unless) `top` holds LLVM's.
    base: Option<Arc<JitCode>>,
    /// LLVM's code once a call compiled it (`Some(None)`: it failed, or
    /// the host has no `libLLVM`, and `base` stays).
    top: OnceLock<Option<Arc<JitCode>>>,
    /// Work run so far, in compiled op-groups.
    work: AtomicU64,
    /// The work at which to switch; `u64::MAX`: never.
    threshold: u64,
    /// Set by the one call that compiles `top`.
    claimed: AtomicBool,
    /// Work per group of a call: the compiled ops, and [`LOOKUP_OPS`] per
    /// lookup LLVM's code may inline.
    per_group: u64,
}

impl TieredCode {
    /// The code of `prog` for `backend`: [`Backend::Jit`] compiles
    /// Cranelift's now and LLVM's later (see the module's docs); the
    /// others compile their one code generator's now.
    pub fn new(prog: &LaneProgram, backend: Backend) -> TieredCode {
        let (gens, tiered): (&[Codegen], bool) = match backend {
            Backend::Interp => return TieredCode::never(None),
            Backend::Jit => (&[Codegen::Cranelift], true),
            Backend::Cranelift => (&[Codegen::Cranelift], false),
            Backend::Llvm => (&[Codegen::Llvm], false),
        };
        let base = compile_with(prog, gens);
        let regions = base.as_ref().map_or(0, |c| c.region_count());
        if !tiered || base.is_none() || regions > LLVM_MAX_REGIONS {
            return TieredCode::never(base);
        }
        let lookups = candidates(prog).len() as u64;
        let cost_ns = LLVM_COMPILE_NS
            + LLVM_COMPILE_NS_PER_REGION * regions as u64
            + LLVM_COMPILE_NS_PER_LOOKUP * lookups;
        let ops = base.as_ref().map_or(0, |c| c.coverage().0) as u64;
        // op-groups after which LLVM's code has saved what it costs
        let mut t = TieredCode::with(base, cost_ns.saturating_mul(1000) / SAVED_PS_PER_OP_GROUP);
        t.per_group = ops + LOOKUP_OPS * lookups;
        t
    }

    fn never(base: Option<Arc<JitCode>>) -> TieredCode {
        TieredCode::with(base, u64::MAX)
    }

    fn with(base: Option<Arc<JitCode>>, threshold: u64) -> TieredCode {
        TieredCode {
            base,
            top: OnceLock::new(),
            work: AtomicU64::new(0),
            threshold,
            claimed: AtomicBool::new(false),
            per_group: 0,
        }
    }

    /// The code calls run now.
    pub fn current(&self) -> Option<&JitCode> {
        match self.top.get() {
            Some(Some(top)) => Some(top),
            _ => self.base.as_deref(),
        }
    }

    /// [`Self::current`] for a call of `groups` groups of `prog` (the
    /// program the code was compiled from), after counting the call's work:
    /// the call that passes the break-even point compiles LLVM's code first
    /// and runs it.
    pub fn for_call(&self, prog: &LaneProgram, groups: usize) -> Option<&JitCode> {
        if self.threshold != u64::MAX && self.top.get().is_none() {
            let add = self.per_group.saturating_mul(groups as u64);
            let before = self.work.fetch_add(add, Ordering::Relaxed);
            if before.saturating_add(add) >= self.threshold {
                self.switch(prog, false);
            }
        }
        self.current()
    }

    /// Compiles LLVM's code now, whatever the work so far (a no-op when it
    /// exists, is being compiled by another call, or cannot be: other back
    /// ends, programs past [`LLVM_MAX_REGIONS`]).  Returns whether LLVM's
    /// code runs from now on.
    pub fn tier_up(&self, prog: &LaneProgram) -> bool {
        // (after an automatic switch, the code without lookups it may
        // have deferred)
        self.switch(prog, true)
            && self
                .top
                .get()
                .and_then(Option::as_ref)
                .is_some_and(|top| top.base(prog).is_some())
    }

    /// Makes LLVM's tier, once: the whole code (`whole`, a host's
    /// [`Self::tier_up`]) or what the switching call needs
    /// ([`JitCode::deferred`]: a program with candidate lookups compiles
    /// the variants its calls run, and the code without lookups only for
    /// a call no variant covers).  Returns whether LLVM's code runs from
    /// now on.
    fn switch(&self, prog: &LaneProgram, whole: bool) -> bool {
        if self.threshold != u64::MAX && !self.claimed.swap(true, Ordering::AcqRel) {
            // the one compile a hot shader pays mid-frame (3-45 ms, and
            // its first sampling variant's): named in the live profiler's
            // flamegraph
            ferropipe_profiling::scope!("jit_tier_up");
            let top = if whole {
                compile_with(prog, &[Codegen::Llvm])
            } else {
                let below = self.base.clone();
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    JitCode::deferred(prog, below)
                }))
                .ok()
                .and_then(Result::ok)
                .flatten()
                .map(Arc::new)
            };
            let _ = self.top.set(top);
        }
        matches!(self.top.get(), Some(Some(_)))
    }

    /// Whether LLVM's code may still replace the current code.
    pub fn may_tier_up(&self) -> bool {
        self.threshold != u64::MAX && self.top.get().is_none()
    }

    /// The work one group of a call counts (compiled ops, and
    /// [`LOOKUP_OPS`] per candidate lookup).
    pub fn work_per_group(&self) -> u64 {
        self.per_group
    }

    /// The work (compiled op-groups) at which [`Self::for_call`] switches
    /// to LLVM's code (`None`: it never does).
    pub fn threshold(&self) -> Option<u64> {
        (self.threshold != u64::MAX).then_some(self.threshold)
    }
}
