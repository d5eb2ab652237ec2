//! The lane-program JIT (llvmpipe's counterpart: `gallivm`, which compiles
//! every shader to native code with LLVM).  Two code generators share the
//! regions and their calling convention: LLVM ([`llvm`], 256-bit code,
//! where the host has `libLLVM` 15 or 14, loaded at run time) and Cranelift
//! ([`codegen`], 128-bit code, pure Rust, everywhere else); see
//! docs/shaders.md "The JIT" for the choice and its numbers.
//!
//! # Shape
//! The JIT is a second back end of [`LaneProgram`] next to the interpreter
//! ([`crate::exec`]), chosen per screen with [`Backend`]
//! (`FERROPIPE_SHADER=interp|jit`).  It does not replace the executor: it
//! compiles **regions**, maximal runs of body ops it supports (arithmetic,
//! compares, selects, conversions, moves, input loads and output stores,
//! and — as calls to the same Rust functions the interpreter runs — the
//! transcendentals, integer division, shifts, bit scans, packing and
//! derivatives), each to one native function that loops over the chunk's
//! groups.  Inside a region a register lives in SSA values (one `<8 x
//! float>` under LLVM, two `f32x4` under Cranelift, whose x86 vectors are
//! 128-bit) and only the
//! registers live after the region are stored back to the register file.
//! Everything else (texture, memory, control flow, `discard`, the
//! prologue) runs through the interpreter's per-op code between regions,
//! on the same register file, chunking and execution mask.  So a construct
//! the JIT does not handle costs one region boundary, never a wrong image,
//! and the interpreter stays the oracle: `tests/random_programs.rs` and
//! every differential test compare the two bit for bit.
//!
//! # Byte identity
//! Each inline op is the same IEEE operation as `lanemath`'s: `fma` only
//! where `lanemath` calls `mul_add` (x86-64-v3 builds fuse it, and so does
//! the JIT: neither contracts anything else), WGSL `min`/`max` as
//! `b < a ? b : a` compares and selects (x86 `minps(b, a)`), selects by the
//! mask's sign bit (`blendv`, as `wide`'s `select`), float to int
//! conversions saturating with NaN to 0.  Ops whose `lanemath` code is not
//! a single IEEE operation call `lanemath` itself ([`helpers`]).
//!
//! # Memory and safety
//! A program's code lives in its own `JITModule` (W^X pages: written, then
//! made read-execute before the first call), owned by [`JitCode`], which
//! the compiled shader holds in an `Arc` beside its [`LaneProgram`] (the
//! IR knows nothing of its back ends), and freed with it ([`Drop`]).  The only `unsafe`
//! call into generated code is [`JitCode::call`].

mod codegen;
mod helpers;
mod llvm;
mod tier;

pub use llvm::LLVM_ENV;
pub use tier::{
    LLVM_COMPILE_NS, LLVM_COMPILE_NS_PER_LOOKUP, LLVM_COMPILE_NS_PER_REGION, LOOKUP_OPS,
    SAVED_PS_PER_OP_GROUP, TieredCode,
};

use std::collections::BTreeSet;
use std::fmt;
use std::sync::Arc;
use std::time::Instant;

use ferropipe_components::shader::Lanes;
use thiserror::Error;

use crate::call::CallIo;
use crate::ir::{InputSrc, LaneProgram, Op, Reg};
use crate::texture::{InlineSample, TexDesc, inline_shape};

/// Which back end runs lane programs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Backend {
    /// The SIMD interpreter ([`crate::exec`]): the oracle and the fallback.
    Interp,
    /// Compiled regions (the crate's `jit` module), falling back to the
    /// interpreter per op (and per shader when compilation fails), in two
    /// tiers ([`TieredCode`]): Cranelift's code from creation, LLVM's once
    /// the shader has run enough to pay for compiling it, where the host
    /// has `libLLVM` 15 or 14.
    #[default]
    Jit,
    /// [`Backend::Jit`] with Cranelift's code generator only.
    Cranelift,
    /// [`Backend::Jit`] with LLVM's code generator only (a shader runs on
    /// the interpreter where the host has no `libLLVM` 15 or 14).
    Llvm,
}

/// The environment variable that picks the [`Backend`] (llvmpipe users
/// pick with `GALLIUM_DRIVER` / `LP_*`): `interp`, `jit`, `cranelift` or
/// `llvm`.
pub const BACKEND_ENV: &str = "FERROPIPE_SHADER";

/// A [`BACKEND_ENV`] value that names no back end.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[error(
    "{BACKEND_ENV}={0:?} names no shader back end (expected `interp`, `jit`, `cranelift` or `llvm`)"
)]
pub struct UnknownBackend(pub String);

impl Backend {
    /// Parses a back end name (`interp`, `jit`, `cranelift` or `llvm`,
    /// any case, surrounding spaces allowed).
    pub fn parse(value: &str) -> Result<Backend, UnknownBackend> {
        match value.trim().to_ascii_lowercase().as_str() {
            "interp" => Ok(Backend::Interp),
            "jit" => Ok(Backend::Jit),
            "cranelift" => Ok(Backend::Cranelift),
            "llvm" => Ok(Backend::Llvm),
            _ => Err(UnknownBackend(value.to_string())),
        }
    }

    /// The back end [`BACKEND_ENV`] names, or the default when it is unset.
    pub fn from_env() -> Result<Backend, UnknownBackend> {
        match std::env::var(BACKEND_ENV) {
            Err(std::env::VarError::NotPresent) => Ok(Backend::default()),
            Err(std::env::VarError::NotUnicode(v)) => {
                Err(UnknownBackend(v.to_string_lossy().into_owned()))
            }
            Ok(v) => Backend::parse(&v),
        }
    }

    /// [`Backend::from_env`], or the default for a value that names no
    /// back end (for callers without an error path: benches, tests; the
    /// screen reports the value as an error instead).
    pub fn from_env_or_default() -> Backend {
        Backend::from_env().unwrap_or_default()
    }
}

/// Set (to anything) to make the tests fail where LLVM's code generator
/// cannot be used, instead of testing Cranelift's alone (CI sets it after
/// installing `libllvm15` and `libllvm14`).
pub const REQUIRE_LLVM_ENV: &str = "FERROPIPE_REQUIRE_LLVM";

/// Which code generator produced a program's native code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Codegen {
    /// Cranelift: 128-bit code, pure Rust, on every x86-64-v3 host.
    Cranelift,
    /// LLVM 15 or 14 (the host's `libLLVM`): 256-bit code.
    Llvm,
}

/// Most regions a program may have for [`Backend::Jit`] to give it to LLVM
/// rather than Cranelift.  LLVM's compile time is ~3.5 ms a program plus
/// ~1.3 ms a region, Cranelift's ~0.15 ms a region (`jit_stats`,
/// docs/shaders.md): at 32 regions a shader costs at most ~45 ms.  Past it
/// are shaders cut by their branches into short regions (the conformance
/// scenes' 146-252, 4-5 ops each, 210-330 ms under LLVM), where 256-bit
/// code gains least.
pub const LLVM_MAX_REGIONS: usize = 32;

/// The code of the first of `gens` that compiles `prog`.  A panic inside a
/// code generator is caught and treated as a failure.
fn compile_with(prog: &LaneProgram, gens: &[Codegen]) -> Option<Arc<JitCode>> {
    gens.iter()
        .find_map(|&g| {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| JitCode::compile(prog, g)))
                .ok()?
                .ok()
        })?
        .map(Arc::new)
}

/// A compiled region: ops `start..end` of the body.
#[derive(Clone, Copy)]
struct Region {
    end: u32,
    func: RegionFn,
}

/// The signature of a region's native code.
type RegionFn = unsafe extern "C" fn(*const RegionCtx);

/// What a region's code reads, laid out for the generated loads
/// (`codegen.rs` reads these fields at their `offset_of!`s).
#[repr(C)]
struct RegionCtx {
    /// The register file (`[uniform][varying]`, varying register `r` of
    /// group `g` at `nu + r * groups + g`).
    file: *mut Lanes,
    /// Groups of this chunk.
    groups: usize,
    /// `io.inputs` at the chunk's first group.
    inputs: *const Lanes,
    frag_coord: *const Lanes,
    vertex_id: *const Lanes,
    instance_id: *const Lanes,
    /// `io.outputs` at the chunk's first group.
    outputs: *mut Lanes,
    /// Bytes between two rows of `inputs` / `outputs` (`io.groups` Lanes).
    io_stride: usize,
    /// The descriptors of the call's inlined texture lookups, by slot
    /// ([`JitCode::variant`]; dangling when the code inlines none).
    tex: *const TexDesc,
}

/// What owns a program's code pages (held for its `Drop`, which frees
/// them).
#[expect(dead_code, reason = "held only to be dropped with the code")]
enum Owner {
    Cranelift(Box<Module>),
    Llvm(llvm::LlvmCode),
    /// A deferred tier's shell: no code pages of its own, the library
    /// its variants and base will be compiled with.
    Library(llvm::Llvm),
}

/// The Cranelift module that owns a program's code pages.
struct Module(Option<cranelift_jit::JITModule>);

// SAFETY: the module is only touched by `Drop` (nothing else holds a
// reference to it after compilation); its code pages are immutable and
// read-execute, so sharing the function pointers between threads is as
// safe as sharing a `fn` item.
unsafe impl Send for Module {}
// SAFETY: as above: no method of the module is called through `&self`.
unsafe impl Sync for Module {}

impl Drop for Module {
    fn drop(&mut self) {
        if let Some(m) = self.0.take() {
            // SAFETY: the module is dropped with its `JitCode`, which the
            // program's `Arc` owns: no call into the code can be running
            // (a call borrows the program) and no function pointer survives
            // (they live only in this `JitCode`).
            unsafe { m.free_memory() };
        }
    }
}

/// What the region code needs from a call's buffers: rows of each input
/// kind it reads.  Checked once per call ([`JitCode::fits`]); a call that
/// does not fit runs on the interpreter, which checks per access.
#[derive(Clone, Copy, Default, Debug)]
struct IoNeeds {
    input_rows: u32,
    frag_rows: u32,
    vertex_id: bool,
    instance_id: bool,
    output_rows: u32,
}

/// How a variant inlines one candidate texture op
/// ([`JitCode::candidates`]), or `None` (the op runs on the interpreter).
pub(crate) type InlineTex = Option<InlineHow>;

/// One inlined lookup of a variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct InlineHow {
    /// The lookup's static half.
    pub spec: InlineSample,
    /// Its descriptor's slot in `RegionCtx::tex` (the lookups of one
    /// (view, sampler) pair share one).
    pub slot: u8,
    /// It takes the previous candidate's level choice, texel addresses
    /// and weights: that lookup is the body op before it, at the same
    /// coordinates, and the call's descriptors have the same layout
    /// (`TexDesc::same_addressing`): a material's maps, as
    /// `QuadSampler::fusable` groups them for the interpreter.
    pub shares: bool,
}

/// Most sampling variants a program's LLVM code keeps
/// (`JitCode::variant`): each is one more LLVM compile (~4-20 ms), paid
/// at the first call with that state; a program drawn with more state
/// combinations runs its other ones on the code without inlined lookups,
/// as llvmpipe bounds its fragment shader variants
/// (`LP_MAX_SHADER_VARIANTS`).
pub const MAX_SAMPLING_VARIANTS: usize = 8;

/// A sampling variant: its key, one entry per candidate lookup, and its
/// code (`None`: the compile failed).
type Variant = (Vec<InlineTex>, Option<Arc<JitCode>>);

/// A program's native code: its regions, by first op.
pub struct JitCode {
    /// Region index per body op that starts one (`u32::MAX`: none).
    starts: Vec<u32>,
    regions: Vec<Region>,
    needs: IoNeeds,
    /// The program compiled: its id, register counts and body length
    /// (see [`JitCode::fits`]).
    compiled_for: (u64, u32, u32, usize),
    /// Body ops inside regions, of all body ops.
    ops_compiled: usize,
    ops_total: usize,
    compile_ns: u64,
    codegen: Codegen,
    /// Body ops whose lookups a sampling variant may inline
    /// ([`inline_shape`]; LLVM's code without inlined lookups only).
    candidates: Vec<u32>,
    /// Descriptor slots this code's inlined lookups read (0: none).
    tex_slots: usize,
    /// The sampling variants compiled so far, by key (one entry per
    /// candidate); `None`: the compile failed.
    variants: std::sync::Mutex<Vec<Variant>>,
    /// `Some` for a deferred tier ([`JitCode::deferred`]): this code has
    /// no regions of its own, only the interface and the sampling
    /// variants, and [`JitCode::base`] compiles the code without inlined
    /// lookups at the first call no variant covers.
    deferred: Option<Deferred>,
    _owner: Owner,
}

/// The code without inlined lookups of a deferred tier, compiled on
/// first need.
struct Deferred {
    base: std::sync::OnceLock<Option<Arc<JitCode>>>,
    /// What runs where LLVM fails to compile it: the tier below
    /// (Cranelift's code), as if the program had never switched.
    below: Option<Arc<JitCode>>,
}

impl fmt::Debug for JitCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JitCode")
            .field("regions", &self.regions.len())
            .field("ops_compiled", &self.ops_compiled)
            .field("ops_total", &self.ops_total)
            .field("compile_ns", &self.compile_ns)
            .field("codegen", &self.codegen)
            .field("deferred", &self.deferred.is_some())
            .finish()
    }
}

/// Why a program got no native code (it then runs on the interpreter).
#[derive(Debug, Error)]
pub enum JitError {
    #[error("the host ISA is not supported by Cranelift: {0}")]
    Isa(String),
    #[error("llvm: {0}")]
    Llvm(String),
    #[error("cranelift: {0}")]
    Codegen(String),
    #[error("program fails verification: {0}")]
    Verify(String),
}

impl JitCode {
    /// Compiles the regions of `prog` with `codegen`.  `Ok(None)` when no
    /// op of the body is supported (nothing to gain).
    pub fn compile(prog: &LaneProgram, codegen: Codegen) -> Result<Option<JitCode>, JitError> {
        let wide = codegen == Codegen::Llvm && llvm::wide()?;
        let mut code = Self::compile_inline(prog, codegen, &[], wide)?;
        if codegen == Codegen::Llvm
            && let Some(c) = &mut code
        {
            c.candidates = candidates(prog);
        }
        Ok(code)
    }

    /// [`Self::compile`] with the lookups of `inline` (`(body op, how)`,
    /// LLVM only) inside the regions; `wide`: LLVM's regions run 16 lanes
    /// ([`llvm::wide`]).
    fn compile_inline(
        prog: &LaneProgram,
        codegen: Codegen,
        inline: &[(u32, InlineHow)],
        wide: bool,
    ) -> Result<Option<JitCode>, JitError> {
        let t0 = Instant::now();
        prog.verify().map_err(JitError::Verify)?;
        let mut how: Vec<InlineTex> = vec![None; prog.body.len()];
        for &(op, h) in inline {
            if codegen == Codegen::Llvm
                && let Some(Op::Texture(t)) = prog.body.get(op as usize)
                && inline_shape(t)
            {
                how[op as usize] = Some(h);
            }
        }
        let tex_slots = how.iter().flatten().map(|h| h.slot as usize + 1).max();
        let wide = wide && codegen == Codegen::Llvm;
        let spans = regions(&prog.body, &how);
        if spans.is_empty() {
            return Ok(None);
        }
        let live = codegen::live_in(prog);
        let none = Vec::new();
        let live_out = |e: usize| live.get(e).unwrap_or(&none);
        let (owner, ptrs) = match codegen {
            Codegen::Cranelift => {
                let mut cg = codegen::Compiler::new(prog)?;
                let mut ids = Vec::with_capacity(spans.len());
                for &(s, e) in &spans {
                    ids.push(cg.region(&prog.body[s..e], live_out(e))?);
                }
                let (module, ptrs) = cg.finish(&ids)?;
                (Owner::Cranelift(Box::new(module)), ptrs)
            }
            Codegen::Llvm => {
                let rs: Vec<llvm::RegionSrc<'_>> = spans
                    .iter()
                    .map(|&(s, e)| (&prog.body[s..e], live_out(e).as_slice(), &how[s..e]))
                    .collect();
                let disasm = std::env::var_os(codegen::DISASM_ENV).is_some();
                let (code, ptrs) = llvm::compile(prog.num_uniform as usize, &rs, wide, disasm)?;
                (Owner::Llvm(code), ptrs)
            }
        };
        let mut starts = vec![u32::MAX; prog.body.len()];
        let mut regions = Vec::with_capacity(spans.len());
        let (needs, ops_compiled) = interface(&prog.body, &spans);
        for (i, (&(s, e), ptr)) in spans.iter().zip(ptrs).enumerate() {
            starts[s] = i as u32;
            // SAFETY: `ptr` is the finalized address of a function
            // Cranelift (`Compiler::region`) or LLVM (`llvm::compile`)
            // compiled with the signature `fn(*const RegionCtx)`, in the
            // system-V calling convention of `extern "C"`; it stays valid
            // while `owner` lives, which `JitCode` owns together with the
            // pointer.
            let func = unsafe { std::mem::transmute::<*const u8, RegionFn>(ptr) };
            regions.push(Region {
                end: e as u32,
                func,
            });
        }
        Ok(Some(JitCode {
            starts,
            regions,
            needs,
            ops_compiled,
            ops_total: prog.body.len(),
            compiled_for: program_key(prog),
            compile_ns: t0.elapsed().as_nanos() as u64,
            codegen,
            candidates: Vec::new(),
            tex_slots: tex_slots.unwrap_or(0),
            variants: std::sync::Mutex::new(Vec::new()),
            deferred: None,
            _owner: owner,
        }))
    }

    /// LLVM's tier of `prog` as the automatic switch makes it
    /// ([`TieredCode`]): for a program with lookups a sampling variant may
    /// inline, a shell that compiles nothing now, whose calls compile the
    /// variant of their bindings ([`Self::variant`]) and, only where no
    /// variant covers a call, the code without inlined lookups
    /// ([`Self::base`]; `below` runs where that fails); otherwise
    /// [`Self::compile`].
    ///
    /// Why: a textured program's calls run a variant, so compiling its
    /// code without lookups first doubled the switch's cost for code no
    /// call ran (textured_mesh: 7.7 ms before its 12.8 ms variant;
    /// postprocess: ~33 ms before ~92 ms, `jit_stats`).
    pub(crate) fn deferred(
        prog: &LaneProgram,
        below: Option<Arc<JitCode>>,
    ) -> Result<Option<JitCode>, JitError> {
        let t0 = Instant::now();
        let candidates = candidates(prog);
        if candidates.is_empty() {
            return Self::compile(prog, Codegen::Llvm);
        }
        prog.verify().map_err(JitError::Verify)?;
        // the shell promises LLVM's code: a host without libLLVM keeps the
        // tier below; and it holds the library for the compiles to come
        let lib = llvm::load()?;
        let spans = regions(&prog.body, &vec![None; prog.body.len()]);
        if spans.is_empty() {
            return Ok(None);
        }
        let (needs, ops_compiled) = interface(&prog.body, &spans);
        Ok(Some(JitCode {
            starts: vec![u32::MAX; prog.body.len()],
            regions: Vec::new(),
            needs,
            ops_compiled,
            ops_total: prog.body.len(),
            compiled_for: program_key(prog),
            compile_ns: t0.elapsed().as_nanos() as u64,
            codegen: Codegen::Llvm,
            candidates,
            tex_slots: 0,
            variants: std::sync::Mutex::new(Vec::new()),
            deferred: Some(Deferred {
                base: std::sync::OnceLock::new(),
                below,
            }),
            _owner: Owner::Library(lib),
        }))
    }

    /// The code a call no sampling variant covers runs: this code, or a
    /// deferred tier's code without inlined lookups, compiled now if no
    /// call has needed it yet (a concurrent call waits for it).  `None`:
    /// neither LLVM nor the tier below has code (the interpreter runs).
    pub(crate) fn base(&self, prog: &LaneProgram) -> Option<&JitCode> {
        let Some(d) = &self.deferred else {
            return Some(self);
        };
        d.base
            .get_or_init(|| {
                // the rest of the switch, paid by the first call without
                // a variant: named in the live profiler's flamegraph
                ferropipe_profiling::scope!("jit_tier_up_base");
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    JitCode::compile_inline(prog, Codegen::Llvm, &[], llvm::wide()?)
                }))
                .ok()
                .and_then(Result::ok)
                .flatten()
                .map(Arc::new)
                .or_else(|| d.below.clone())
            })
            .as_deref()
    }

    /// Whether this is a deferred tier's shell ([`Self::deferred`]) whose
    /// code without inlined lookups no call has compiled yet.
    pub fn is_deferred(&self) -> bool {
        self.deferred
            .as_ref()
            .is_some_and(|d| d.base.get().is_none())
    }

    /// Body ops whose lookups a sampling variant of this code may inline
    /// (LLVM's code only; empty otherwise).
    pub(crate) fn candidates(&self) -> &[u32] {
        &self.candidates
    }

    /// This code's sampling variant for `key` (one entry per
    /// [`Self::candidates`] op), llvmpipe's fragment shader variant keyed
    /// by the static sampler state of each lookup: `prog` compiled by
    /// LLVM with the keyed lookups inside its regions.  Compiled at the
    /// first call with the key (on that call's thread; a concurrent call
    /// waits for it), kept with the code; `None` when no lookup is inlined,
    /// when [`MAX_SAMPLING_VARIANTS`] exist, or when the compile failed
    /// (the call then runs this code).
    pub(crate) fn variant(&self, prog: &LaneProgram, key: &[InlineTex]) -> Option<Arc<JitCode>> {
        if key.len() != self.candidates.len() || key.iter().all(Option::is_none) {
            return None;
        }
        let mut vs = self
            .variants
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((_, code)) = vs.iter().find(|(k, _)| k.as_slice() == key) {
            return code.clone();
        }
        if vs.len() >= MAX_SAMPLING_VARIANTS {
            return None;
        }
        // the compile a new sampler state pays once (4-20 ms), named in
        // the live profiler's flamegraph
        ferropipe_profiling::scope!("jit_sampling_variant");
        let inline: Vec<(u32, InlineHow)> = self
            .candidates
            .iter()
            .zip(key)
            .filter_map(|(&op, k)| k.map(|h| (op, h)))
            .collect();
        let code = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            JitCode::compile_inline(prog, self.codegen, &inline, llvm::wide()?)
        }))
        .ok()
        .and_then(Result::ok)
        .flatten()
        .map(Arc::new);
        vs.push((key.to_vec(), code.clone()));
        code
    }

    /// Sampling variants compiled so far (failed ones included).
    pub fn variant_count(&self) -> usize {
        self.variants
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .len()
    }

    /// For each sampling variant compiled so far, in order: how many
    /// lookups it inlines, and how many of those take the previous one's
    /// addressing (`(0, 0)`: its compile failed).
    pub fn variant_lookups(&self) -> Vec<(usize, usize)> {
        self.variants
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .map(|(key, code)| match code {
                Some(_) => (
                    key.iter().flatten().count(),
                    key.iter().flatten().filter(|h| h.shares).count(),
                ),
                None => (0, 0),
            })
            .collect()
    }

    /// Nanoseconds each sampling variant compiled so far took, in order
    /// (its regions and module, as [`Self::compile_ns`]; failed compiles
    /// left out): what a call that meets a new sampler state pays once.
    pub fn variant_compile_ns(&self) -> Vec<u64> {
        self.variants
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .filter_map(|(_, code)| code.as_ref().map(|c| c.compile_ns()))
            .collect()
    }

    /// Nanoseconds the compilation took (the regions and the module).
    pub fn compile_ns(&self) -> u64 {
        self.compile_ns
    }

    /// `(body ops compiled, body ops)`.
    pub fn coverage(&self) -> (usize, usize) {
        (self.ops_compiled, self.ops_total)
    }

    /// The code generator that produced this code.
    pub fn codegen(&self) -> Codegen {
        self.codegen
    }

    /// Number of regions.
    pub fn region_count(&self) -> usize {
        self.regions.len()
    }

    /// Whether this code may run `prog` on the call's buffers (if not, the
    /// interpreter runs it): `prog` is the program it was compiled from
    /// (`exec::run` is public and takes any code with any program: the
    /// regions address registers by the compiled program's counts, so a
    /// mismatch would reach past the register file), and the buffers hold
    /// every row the regions read or write.
    pub(crate) fn fits(&self, prog: &LaneProgram, io: &CallIo<'_, '_>) -> bool {
        if self.compiled_for != program_key(prog) {
            return false;
        }
        let rows = |n: u32, len: usize| (n as usize).saturating_mul(io.groups) <= len;
        let n = &self.needs;
        rows(n.input_rows, io.inputs.len())
            && rows(n.frag_rows, io.frag_coord.len())
            && (!n.vertex_id || io.groups <= io.vertex_id.len())
            && (!n.instance_id || io.groups <= io.instance_id.len())
            && rows(n.output_rows, io.outputs.len())
    }

    /// The region that starts at body op `pc`: `(its index, the op after
    /// it)`.
    #[inline(always)]
    pub(crate) fn region_at(&self, pc: usize) -> Option<(usize, usize)> {
        match self.starts.get(pc) {
            Some(&r) if r != u32::MAX => Some((r as usize, self.regions[r as usize].end as usize)),
            _ => None,
        }
    }

    /// Runs region `r` over the chunk's groups.
    ///
    /// The call boundary: `file` must be the chunk's register file as
    /// `exec` lays it out (`nu` uniform registers, then every varying
    /// register of the program at stride `groups`), and `io` a call that
    /// [`JitCode::fits`].
    #[inline]
    pub(crate) fn call(
        &self,
        r: usize,
        file: &mut [Lanes],
        chunk: Chunk,
        io: &mut CallIo<'_, '_>,
        tex: &[TexDesc],
    ) {
        let Chunk { nu, nv, groups, g0 } = chunk;
        assert!(file.len() >= nu + nv * groups && g0 + groups <= io.groups);
        assert!(tex.len() >= self.tex_slots, "texture descriptors missing");
        let ctx = RegionCtx {
            file: file.as_mut_ptr(),
            groups,
            inputs: io.inputs.as_ptr().wrapping_add(g0),
            frag_coord: io.frag_coord.as_ptr().wrapping_add(g0),
            vertex_id: io.vertex_id.as_ptr().wrapping_add(g0),
            instance_id: io.instance_id.as_ptr().wrapping_add(g0),
            outputs: io.outputs.as_mut_ptr().wrapping_add(g0),
            io_stride: io.groups * std::mem::size_of::<Lanes>(),
            tex: tex.as_ptr(),
        };
        // SAFETY: the region's code reads and writes `file` at varying
        // registers `< nv` (the program verified at compile time) for groups
        // `< groups` (a 16-lane region's step of two groups masks off the
        // second past the last: `llvm::E::load`/`store`), and uniform
        // registers `< nu`: inside `file` by the assert.  It reads input
        // rows and writes output rows below `needs`, each `io.groups`
        // long, at groups `g0..g0 + groups`:
        // inside the slices because the caller checked `fits` and by the
        // assert.  Its inlined lookups read descriptor slots below
        // `tex_slots` (asserted) and, through each, texels at indices
        // clamped to the descriptor's `max_word` / `max_pair` of its
        // `words` or, in a group whose every footprint is interior,
        // inside a level of its table, whose every texel is inside `words`
        // (`QuadSampler::fill`); `SamplerCache::inline_plan` made both
        // from the call's bound view (alive for the call); their fallback reads the
        // descriptor's resources, the call's.  The helpers it calls are
        // `extern "C"` Rust functions that do not unwind.  `ctx` outlives
        // the call.
        unsafe { (self.regions[r].func)(&ctx) }
    }
}

/// The body ops of `prog` whose lookups a sampling variant may inline
/// ([`inline_shape`]).
pub(super) fn candidates(prog: &LaneProgram) -> Vec<u32> {
    prog.body
        .iter()
        .enumerate()
        .filter(|(_, op)| matches!(op, Op::Texture(t) if inline_shape(t)))
        .map(|(i, _)| i as u32)
        .collect()
}

/// The interface of regions `spans` of `body`: the call buffers' rows
/// they need, and how many ops they hold.
fn interface(body: &[Op], spans: &[(usize, usize)]) -> (IoNeeds, usize) {
    let mut needs = IoNeeds::default();
    let mut ops = 0;
    for &(s, e) in spans {
        ops += e - s;
        for op in &body[s..e] {
            add_needs(&mut needs, op);
        }
    }
    (needs, ops)
}

/// What identifies the program a [`JitCode`] was compiled from: its id
/// (unique per compiled program) and, because `LaneProgram`'s fields are
/// public, the register counts and body length the generated code's
/// addressing and region table depend on.
fn program_key(prog: &LaneProgram) -> (u64, u32, u32, usize) {
    (prog.id, prog.num_uniform, prog.num_varying, prog.body.len())
}

/// The shape of the chunk a region runs on: `nu` uniform and `nv` varying
/// registers, `groups` groups from group `g0` of the call.
#[derive(Clone, Copy)]
pub(crate) struct Chunk {
    pub nu: usize,
    pub nv: usize,
    pub groups: usize,
    pub g0: usize,
}

/// The registers `ops` touch, and the varying ones they write (the others
/// a region only reads: pure loads for both code generators).
fn region_regs(ops: &[Op]) -> (BTreeSet<Reg>, BTreeSet<u32>) {
    let (mut regs, mut written) = (BTreeSet::new(), BTreeSet::new());
    for op in ops {
        op.for_each_use(|r| {
            regs.insert(r);
        });
        op.for_each_def(|r| {
            regs.insert(r);
            if !r.is_uniform() {
                written.insert(r.0);
            }
        });
    }
    (regs, written)
}

/// A row of the call's I/O buffers a region reads or writes; the code
/// generators compute each one's group-0 address once, ahead of the loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum IoRow {
    In(InputSrc),
    Out(u32),
}

impl IoRow {
    /// The row `op` reads or writes (`None`: not a row of `RegionCtx`).
    fn of(op: &Op) -> Option<IoRow> {
        match op {
            Op::LoadInput { src, .. } if !matches!(src, InputSrc::Compute(_)) => {
                Some(IoRow::In(*src))
            }
            Op::StoreOutput { slot, .. } => Some(IoRow::Out(*slot)),
            _ => None,
        }
    }

    /// `(offset of the RegionCtx field with the rows' base, row index)`:
    /// the row is at `base + index * io_stride`.
    fn field_and_row(self) -> (usize, u32) {
        use std::mem::offset_of;
        match self {
            IoRow::In(InputSrc::Slot(s)) => (offset_of!(RegionCtx, inputs), s),
            IoRow::In(InputSrc::FragCoord(c)) => (offset_of!(RegionCtx, frag_coord), c as u32),
            IoRow::In(InputSrc::VertexId) => (offset_of!(RegionCtx, vertex_id), 0),
            IoRow::In(InputSrc::InstanceId) => (offset_of!(RegionCtx, instance_id), 0),
            IoRow::In(InputSrc::Compute(_)) => unreachable!("not a RegionCtx row"),
            IoRow::Out(slot) => (offset_of!(RegionCtx, outputs), slot),
        }
    }
}

fn add_needs(n: &mut IoNeeds, op: &Op) {
    match op {
        Op::LoadInput { src, .. } => match src {
            InputSrc::Slot(sc) => n.input_rows = n.input_rows.max(sc + 1),
            InputSrc::FragCoord(c) => n.frag_rows = n.frag_rows.max(*c as u32 + 1),
            InputSrc::VertexId => n.vertex_id = true,
            InputSrc::InstanceId => n.instance_id = true,
            InputSrc::Compute(_) => {}
        },
        Op::StoreOutput { slot, .. } => n.output_rows = n.output_rows.max(slot + 1),
        _ => {}
    }
}

/// The maximal runs `[start, end)` of supported ops (and of the texture
/// ops `inline` names) that contain no jump target past their first op.
fn regions(body: &[Op], inline: &[InlineTex]) -> Vec<(usize, usize)> {
    let mut target = vec![false; body.len() + 1];
    for op in body {
        if let Some(t) = op.target() {
            target[t as usize] = true;
        }
    }
    let mut out = Vec::new();
    let mut start = None;
    for (i, op) in body.iter().enumerate() {
        if target[i]
            && let Some(s) = start.take()
        {
            out.push((s, i));
        }
        if codegen::supported(op) || inline.get(i).is_some_and(Option::is_some) {
            start.get_or_insert(i);
        } else if let Some(s) = start.take() {
            out.push((s, i));
        }
    }
    if let Some(s) = start {
        out.push((s, body.len()));
    }
    out
}

#[cfg(test)]
mod tests {
    //! One program per op of every family the JIT compiles, on edge values
    //! (±0, ±inf, NaN, denormals, `i32::MIN`, shifts past 31, division by
    //! zero, non-mask selectors), run on the interpreter and on the JIT:
    //! the bits must be the same.
    use super::*;
    use crate::exec;
    use crate::ir::{Axis, BinOp, PackFn, Reg, TriOp, UnOp, UnpackFn};
    use crate::lanemath::{as_u, from_u};
    use ferropipe_components::shader::{ShaderInfo, ShaderResources};
    use wide::u32x8;

    const GROUPS: usize = 9;

    fn value(k: usize) -> u32 {
        const SPECIAL: [u32; 24] = [
            0,
            0x8000_0000,
            0x3f80_0000,
            0xbf80_0000,
            0x7f80_0000,
            0xff80_0000,
            0x7fc0_0000,
            0xffc0_0001,
            0x0000_0001,
            0x8000_0001,
            0x4f00_0000,
            0xcf00_0001,
            0x4f80_0000,
            0x3f00_0000,
            0x4040_0000,
            0xc0a0_0000,
            31,
            32,
            33,
            0xffff_ffff,
            0x7fff_ffff,
            5,
            0x4b00_0001,
            0x3e80_0000,
        ];
        if k < SPECIAL.len() {
            SPECIAL[k]
        } else {
            let h = (k as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            (h >> 29) as u32 ^ (h as u32)
        }
    }

    /// `[slot][component][group]` inputs: operand `i` of lane `l` picks
    /// values so that every pair of the first 24 meets.
    fn inputs() -> Vec<Lanes> {
        let mut v = Vec::new();
        for i in 0..4usize {
            for g in 0..GROUPS {
                v.push(from_u(u32x8::new(std::array::from_fn(|l| {
                    let lane = g * 8 + l;
                    let k = match i {
                        0 => lane % 24,
                        1 => (lane / 3) % 24 + (lane % 3) * 24,
                        2 => (lane * 7 + 3) % 30,
                        _ => (lane * 5 + 1) % 26,
                    };
                    value(k)
                }))));
            }
        }
        v
    }

    fn program(op: Op, uniform_b: bool) -> LaneProgram {
        let b = if uniform_b { Reg::u(0) } else { Reg::v(2) };
        let op = {
            let mut op = op;
            op.map_regs(|r| if r == Reg::v(2) { b } else { r });
            op
        };
        let mut body = vec![
            Op::LoadInput {
                d: Reg::v(1),
                src: InputSrc::Slot(0),
            },
            Op::LoadInput {
                d: Reg::v(2),
                src: InputSrc::Slot(1),
            },
            Op::LoadInput {
                d: Reg::v(3),
                src: InputSrc::Slot(2),
            },
            Op::LoadInput {
                d: Reg::v(4),
                src: InputSrc::Slot(3),
            },
            // a non-trivial EXEC for masked moves (interpreted: SetExec
            // also updates the chunk's flags)
            Op::SetExec { a: Reg::v(3) },
        ];
        // defined destinations for partial writes and unused results
        for r in 5..9 {
            body.push(Op::Mov {
                d: Reg::v(r),
                a: Reg::v(4),
            });
        }
        body.push(op);
        for (slot, r) in (5..9).enumerate() {
            body.push(Op::StoreOutput {
                slot: slot as u32,
                a: Reg::v(r),
            });
        }
        LaneProgram {
            id: 0x5eed_0000 + body.len() as u64,
            info: ShaderInfo::default(),
            consts: vec![crate::lanemath::splat_bits(0x4000_0000)],
            num_uniform: 1,
            num_varying: 9,
            prologue: vec![],
            body,
            dead_lanes_idle: false,
            compute: None,
        }
    }

    fn run(prog: &LaneProgram, jit: Option<&JitCode>) -> Vec<[u32; 8]> {
        let inputs = inputs();
        // outputs start as a pattern, so unwritten rows compare too
        let mut outputs = vec![crate::lanemath::splat_bits(0x1234_5678); 4 * GROUPS];
        let res = ShaderResources::default();
        let mut io = CallIo {
            resources: &res,
            groups: GROUPS,
            inputs: &inputs,
            frag_coord: &[],
            vertex_id: &[],
            instance_id: &[],
            outputs: &mut outputs,
            live: None,
            count: GROUPS * 8,
            compute: None,
        };
        assert!(!exec::run(prog, jit, &mut io));
        outputs.iter().map(|v| as_u(*v).to_array()).collect()
    }

    /// The code generators to test: Cranelift, and LLVM where the host
    /// has `libLLVM` 15 or 14 ([`REQUIRE_LLVM_ENV`] set: it must).
    fn codegens() -> Vec<Codegen> {
        let mut v = vec![Codegen::Cranelift];
        match llvm::available() {
            Ok(()) => v.push(Codegen::Llvm),
            Err(e) if std::env::var_os(REQUIRE_LLVM_ENV).is_some() => {
                panic!("{REQUIRE_LLVM_ENV} is set but LLVM is not usable: {e}")
            }
            Err(_) => {}
        }
        v
    }

    /// The lane widths of LLVM's regions to test: 8, and 16 where the CPU
    /// runs them ([`llvm::wide`]).
    fn widths(g: Codegen) -> Vec<bool> {
        let mut v = vec![false];
        if g == Codegen::Llvm && llvm::cpu_wide() {
            v.push(true);
        }
        v
    }

    fn check(op: Op) {
        for g in codegens() {
            for (wide, uniform_b) in widths(g).into_iter().flat_map(|w| [(w, false), (w, true)]) {
                let interp = program(op.clone(), uniform_b);
                let mut jit = interp.clone();
                jit.id += 1;
                let code = JitCode::compile_inline(&jit, g, &[], wide)
                    .unwrap_or_else(|e| panic!("{g:?}: {e}"))
                    .expect("compiled");
                assert_eq!(code.codegen(), g);
                // everything but SetExec
                assert_eq!(code.coverage().0, jit.body.len() - 1, "{op:?}");
                let (a, b) = (run(&interp, None), run(&jit, Some(&code)));
                for (i, (x, y)) in a.iter().zip(&b).enumerate() {
                    assert_eq!(
                        x, y,
                        "{g:?} (16 lanes: {wide}): {op:?} (uniform b: {uniform_b}), output row {i}"
                    );
                }
            }
        }
    }

    /// Under [`Backend::Jit`] a shader starts on Cranelift's code and
    /// switches to LLVM's at the break-even work, not before; its outputs
    /// are the interpreter's bits on either tier.  Other back ends never
    /// switch.
    #[test]
    fn the_jit_tiers_up_at_the_break_even_work() {
        let prog = program(
            Op::Bin {
                f: BinOp::FAdd,
                d: D,
                a: A,
                b: B,
            },
            false,
        );
        let want = run(&prog, None);
        let tiers = TieredCode::new(&prog, Backend::Jit);
        let base = tiers.current().expect("Cranelift compiles it");
        assert_eq!(base.codegen(), Codegen::Cranelift);
        let ops = base.coverage().0 as u64;
        let threshold = tiers.threshold().expect("few regions: LLVM may take it");
        let regions = base.region_count() as u64;
        assert_eq!(
            threshold,
            (LLVM_COMPILE_NS + LLVM_COMPILE_NS_PER_REGION * regions) * 1000 / SAVED_PS_PER_OP_GROUP
        );
        // calls of GROUPS groups up to just below the threshold stay on
        // Cranelift's code
        let calls = threshold / (ops * GROUPS as u64);
        let code = tiers
            .for_call(&prog, (calls - 1) as usize * GROUPS)
            .expect("code");
        assert_eq!(code.codegen(), Codegen::Cranelift);
        assert!(tiers.may_tier_up());
        assert_eq!(run(&prog, Some(code)), want);
        // the call that passes it runs LLVM's (where the host has it)
        let code = tiers.for_call(&prog, 2 * GROUPS).expect("code");
        assert!(!tiers.may_tier_up());
        if codegens().contains(&Codegen::Llvm) {
            assert_eq!(code.codegen(), Codegen::Llvm);
        } else {
            assert_eq!(code.codegen(), Codegen::Cranelift);
        }
        assert_eq!(run(&prog, Some(code)), want);
        for backend in [Backend::Cranelift, Backend::Llvm, Backend::Interp] {
            let t = TieredCode::new(&prog, backend);
            assert_eq!(t.threshold(), None, "{backend:?}");
            let _ = t.for_call(&prog, usize::MAX / 2);
            assert!(!t.may_tier_up() && !t.tier_up(&prog), "{backend:?}");
        }
    }

    /// Threads calling one shader at once while it passes its break-even
    /// point: one of them compiles LLVM's code, none waits for it, and
    /// every call's outputs are the interpreter's bits on whichever tier
    /// it ran.
    #[test]
    fn concurrent_calls_switch_tiers_once() {
        let prog = program(
            Op::Tri {
                f: TriOp::FFma,
                d: D,
                a: A,
                b: B,
                c: C,
            },
            false,
        );
        let want = run(&prog, None);
        let tiers = TieredCode::new(&prog, Backend::Jit);
        let threshold = tiers.threshold().expect("tiered");
        let ops = tiers.current().expect("code").coverage().0 as u64;
        // each call counts a sixteenth of the break-even work
        let groups = (threshold / ops / 16) as usize + 1;
        let seen = std::sync::Mutex::new(Vec::new());
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..12 {
                        let code = tiers.for_call(&prog, groups).expect("code");
                        assert_eq!(run(&prog, Some(code)), want);
                        seen.lock().expect("lock").push(code.codegen());
                    }
                });
            }
        });
        let seen = seen.into_inner().expect("lock");
        assert_eq!(seen.len(), 48);
        let llvm = codegens().contains(&Codegen::Llvm);
        assert!(!tiers.may_tier_up());
        assert_eq!(
            tiers.current().map(|c| c.codegen()),
            Some(if llvm {
                Codegen::Llvm
            } else {
                Codegen::Cranelift
            })
        );
        // the calls before the switch ran Cranelift's code
        assert!(seen.contains(&Codegen::Cranelift));
    }

    /// `exec::run` is public: code passed with a program it was not
    /// compiled from (here one with fewer registers, whose file the
    /// regions would overrun) is not run; the interpreter runs the
    /// program.
    #[test]
    fn code_runs_only_the_program_it_was_compiled_from() {
        let op = Op::Bin {
            f: BinOp::FAdd,
            d: D,
            a: A,
            b: B,
        };
        let big = program(op.clone(), false);
        let code = JitCode::compile(&big, Codegen::Cranelift)
            .expect("compiles")
            .expect("code");
        // another program of the same shape: the code would add
        let mut other = program(
            Op::Bin {
                f: BinOp::FSub,
                d: D,
                a: A,
                b: B,
            },
            false,
        );
        other.id = big.id ^ 1;
        assert_eq!(run(&other, Some(&code)), run(&other, None));
        // the same id with fewer registers is not the program either
        let mut small = program(op, false);
        small.num_varying -= 1;
        small.body.retain(|o| {
            let mut high = false;
            o.for_each_def(|r| high |= r == Reg::v(8));
            o.for_each_use(|r| high |= r == Reg::v(8));
            !high
        });
        assert!(small.verify().is_ok());
        assert_eq!(run(&small, Some(&code)), run(&small, None));
    }

    /// [`TieredCode::tier_up`] compiles at once, whatever the work.
    #[test]
    fn a_host_can_tier_up_a_hot_shader_ahead_of_time() {
        let prog = program(
            Op::Bin {
                f: BinOp::FMul,
                d: D,
                a: A,
                b: B,
            },
            true,
        );
        let tiers = TieredCode::new(&prog, Backend::Jit);
        let llvm = codegens().contains(&Codegen::Llvm);
        assert_eq!(tiers.tier_up(&prog), llvm);
        let code = tiers.current().expect("code");
        assert_eq!(code.codegen() == Codegen::Llvm, llvm);
        assert_eq!(run(&prog, Some(code)), run(&prog, None));
    }

    const A: Reg = Reg::v(1);
    const B: Reg = Reg::v(2);
    const C: Reg = Reg::v(3);
    const D: Reg = Reg::v(5);

    #[test]
    fn unary_ops_match_the_interpreter() {
        for &f in UnOp::ALL {
            check(Op::Un { f, d: D, a: A });
        }
    }

    #[test]
    fn binary_ops_match_the_interpreter() {
        for &f in BinOp::ALL {
            check(Op::Bin {
                f,
                d: D,
                a: A,
                b: B,
            });
        }
    }

    #[test]
    fn ternary_ops_match_the_interpreter() {
        for &f in TriOp::ALL {
            check(Op::Tri {
                f,
                d: D,
                a: A,
                b: B,
                c: C,
            });
        }
    }

    #[test]
    fn moves_bits_packing_and_derivatives_match_the_interpreter() {
        check(Op::Mov { d: D, a: B });
        check(Op::MovMasked { d: Reg::v(6), a: B });
        check(Op::MovMasked { d: D, a: A });
        check(Op::InsertBits {
            d: D,
            e: A,
            n: B,
            off: C,
            cnt: Reg::v(4),
        });
        for &f in PackFn::ALL {
            check(Op::Pack {
                f,
                d: D,
                a: [A, B, C, Reg::v(4)],
            });
        }
        for &f in UnpackFn::ALL {
            check(Op::Unpack {
                f,
                d: [D, Reg::v(6), Reg::v(7), Reg::v(8)],
                a: B,
            });
        }
        for axis in [Axis::X, Axis::Y] {
            for fine in [false, true] {
                check(Op::Deriv {
                    axis,
                    fine,
                    d: D,
                    a: A,
                });
            }
        }
    }

    #[test]
    fn backend_names_parse_and_unknown_ones_are_errors() {
        assert_eq!(Backend::parse(" JIT "), Ok(Backend::Jit));
        assert_eq!(Backend::parse("interp"), Ok(Backend::Interp));
        assert_eq!(Backend::parse("Cranelift"), Ok(Backend::Cranelift));
        assert_eq!(Backend::parse("llvm"), Ok(Backend::Llvm));
        assert_eq!(
            Backend::parse("swr"),
            Err(UnknownBackend("swr".to_string()))
        );
    }

    /// Dynamically indexed reads and writes (`array[i]` on a local,
    /// matrix columns): indices 0, 1, 5, 31 and huge among the inputs, so
    /// each source is hit and the clamp to the last one too.
    #[test]
    fn extract_and_insert_match_the_interpreter() {
        let v = Reg::v;
        for srcs in [
            vec![A, C],
            vec![A, C, v(4)],
            vec![A, C, v(4), v(6), v(7), v(8)],
        ] {
            for index in [B, v(4)] {
                check(Op::Extract {
                    d: D,
                    index,
                    srcs: srcs.clone().into(),
                });
            }
        }
        for masked in [false, true] {
            for (dsts, srcs) in [
                (vec![D, v(6), v(7)], vec![A, C, v(4)]),
                (vec![D, v(6), v(7), v(8)], vec![D, v(6), v(7), v(8)]),
                (vec![D, v(6)], vec![v(6), D]),
            ] {
                check(Op::Insert {
                    dsts: dsts.into(),
                    srcs: srcs.into(),
                    index: B,
                    value: A,
                    masked,
                });
            }
        }
    }

    /// Programs compiled on several threads at once (an embedder's
    /// contexts on their own threads) each get working code.
    #[test]
    fn code_generators_compile_concurrently() {
        for g in codegens() {
            std::thread::scope(|scope| {
                for t in 0..4u32 {
                    scope.spawn(move || {
                        let op = Op::Bin {
                            f: BinOp::ALL[t as usize % BinOp::ALL.len()],
                            d: D,
                            a: A,
                            b: B,
                        };
                        let interp = program(op, false);
                        let mut jit = interp.clone();
                        jit.id += 1;
                        let code = JitCode::compile(&jit, g)
                            .unwrap_or_else(|e| panic!("{g:?}: {e}"))
                            .expect("compiled");
                        assert_eq!(run(&interp, None), run(&jit, Some(&code)), "{g:?}");
                    });
                }
            });
        }
    }

    #[test]
    fn regions_split_at_unsupported_ops_and_jump_targets() {
        let mov = || Op::Mov { d: A, a: B };
        let body = vec![
            mov(),
            mov(),
            Op::JumpIfNone { target: 4 },
            mov(),
            mov(),
            Op::Kill { exit: false },
            mov(),
        ];
        assert_eq!(regions(&body, &[]), vec![(0, 2), (3, 4), (4, 5), (6, 7)]);
    }
}
