//! ferropipe-shader: shaders from source to lanes.
//!
//! WGSL and Vulkan-style GLSL 450 are parsed and validated by naga (the
//! `front` module), lowered once at CSO creation into a compact register
//! program ([`LaneProgram`], built by `lower` and optimised by `opt`), and
//! executed over SIMD lanes by Cranelift-compiled code (`jit`) or the
//! interpreter (`exec`).  The compiled program implements the pipeline's
//! `VertexShader` / `FragmentShader` traits from `ferropipe-components`, the
//! same traits Rust-native shaders implement.
//!
//! ```
//! use ferropipe_components::enums::ShaderType;
//! use ferropipe_shader::{compile, Language};
//!
//! let src = "@fragment fn main(@location(0) c: vec4<f32>) -> @location(0) vec4<f32> { return c; }";
//! let shader = compile(Language::Wgsl, src, "main", ShaderType::Fragment, &[]).unwrap();
//! // a pure copy of the input: the pipeline may skip running it
//! assert!(shader.info().is_passthrough());
//! ```
//!
//! # The JIT boundary
//! Everything naga-specific ends at [`LaneProgram`]; the interpreter
//! (`exec`, and `texture`, which it calls) and the JIT (`jit`) are its only
//! consumers, behind [`CompiledShader`], so neither changes the front end.
//!
//! # Public API
//! The root is the API: [`compile`] and its variants, [`CompiledShader`],
//! [`compile_compute`] and [`ComputeShader`], the errors, the back-end
//! choice ([`Backend`]), the memory a compute call binds ([`ComputeCall`])
//! and the limits the façade's caps report.  `call`, `exec`, `front` and
//! `lower` are public but hidden from the docs: the crate's own tests drive
//! the stages one by one through them (`tests/naga_corpus.rs`,
//! `tests/common`), and nothing else should.  Every other module is
//! private.
#![warn(missing_docs)]

pub mod blit;
#[doc(hidden)]
pub mod call;
mod compute;
mod copies;
#[doc(hidden)]
// Hidden, so documented for `--document-private-items` readers, whose
// links to private items resolve.
#[allow(rustdoc::private_intra_doc_links)]
pub mod exec;
#[doc(hidden)]
pub mod front;
mod ir;
mod jit;
mod lanemath;
#[doc(hidden)]
// Hidden, so documented for `--document-private-items` readers, whose
// links to private items resolve.
#[allow(rustdoc::private_intra_doc_links)]
pub mod lower;
mod memory;
mod opt;
mod texture;

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use ferropipe_components::enums::ShaderType;
use ferropipe_components::shader::{
    FragmentIo, FragmentShader, FragmentShaderRef, Semantic, ShaderInfo, ShaderResources, VertexIo,
    VertexShader, VertexShaderRef,
};
use thiserror::Error;

pub use compute::{
    ComputeShader, ComputeShaderRef, MAX_WORKGROUP_INVOCATIONS, MAX_WORKGROUP_SIZE,
    compile_compute, compile_compute_with_backend, compile_compute_with_overrides,
};
pub use ir::LaneProgram;
pub use jit::{
    BACKEND_ENV, Backend, Codegen, LLVM_COMPILE_NS, LLVM_COMPILE_NS_PER_LOOKUP,
    LLVM_COMPILE_NS_PER_REGION, LLVM_ENV, LLVM_MAX_REGIONS, LOOKUP_OPS, MAX_SAMPLING_VARIANTS,
    REQUIRE_LLVM_ENV, SAVED_PS_PER_OP_GROUP, TieredCode, UnknownBackend,
};
pub use lower::memory::{
    INPUT_CONST_BUFFER, MAX_GLOBAL_BINDINGS, MAX_SHADER_BUFFERS, MAX_SHADER_IMAGES,
    MAX_SHARED_BYTES,
};
pub use memory::{ComputeCall, StorageImage, WordBuffer};

/// Shader source languages the front end accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Language {
    /// WGSL (naga's WGSL front end).
    Wgsl,
    /// Vulkan-style GLSL 450 (naga's GLSL front end).
    Glsl,
}

/// Why a shader could not be created, or (`LoopLimit`) why a call's
/// results are incomplete.
///
/// Every variant that comes from a place in the source carries its 1-based
/// `line` and `column`, 0 when naga gives no span; the message then has no
/// location (never a made-up `0:0`).  Constructs are named once, in WGSL
/// spelling (`@builtin(subgroup_invocation_id)`, `i64`), never with Rust
/// `Debug` names or naga arena handles.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum ShaderError {
    /// naga rejected the source.
    #[error("{language:?} parse error{}: {message}", at(*line, *column))]
    Parse {
        /// The language the source was parsed as.
        language: Language,
        /// naga's message.
        message: String,
        /// 1-based line, 0 when unknown.
        line: u32,
        /// 1-based column, 0 when unknown.
        column: u32,
    },
    /// naga's validator rejected the requested entry point (or what it
    /// uses: other entry points are not validated when the module can be
    /// compacted to this one).
    #[error("validation error{}: {message}", at(*line, *column))]
    Validation {
        /// naga's message.
        message: String,
        /// 1-based line, 0 when unknown.
        line: u32,
        /// 1-based column, 0 when unknown.
        column: u32,
    },
    /// The entry point does not exist for the requested stage.
    #[error("no {stage} entry point named `{name}`")]
    MissingEntryPoint {
        /// The stage asked for (`vertex`, `fragment`, `compute`).
        stage: &'static str,
        /// The entry point's name as given.
        name: String,
    },
    /// A WGSL `override` the entry point uses has no initializer and no
    /// value was given at creation.
    #[error("override `{name}` has no default and no value was given")]
    MissingOverride {
        /// The override's name.
        name: String,
    },
    /// A value was given for an override the module does not declare, or
    /// that the value cannot be converted to (`message` says which).
    #[error("override `{name}`: {message}")]
    BadOverride {
        /// The name or `@id` as given.
        name: String,
        /// What is wrong with it.
        message: String,
    },
    /// A construct ferropipe does not execute yet.
    #[error("unsupported{}: {construct}", at(*line, *column))]
    Unsupported {
        /// The construct, in WGSL spelling.
        construct: String,
        /// 1-based line, 0 when unknown.
        line: u32,
        /// 1-based column, 0 when unknown.
        column: u32,
    },
    /// A call of the shader stopped a runaway loop after
    /// `exec::MAX_LOOP_TRIPS` group-trips of its loops (the GPU analogue
    /// is a device-lost timeout): what the call wrote is incomplete.
    /// Reported by `launch_grid` and by the draw's flush, never at
    /// creation.
    #[error(
        "a {stage} shader loop ran past {} group-trips in one call; its results are incomplete",
        exec::MAX_LOOP_TRIPS
    )]
    LoopLimit {
        /// The stage whose call stopped (`vertex`, `fragment`, `compute`).
        stage: &'static str,
    },
}

/// ` at line:column` when the location is known.
fn at(line: u32, column: u32) -> String {
    if line == 0 {
        String::new()
    } else {
        format!(" at {line}:{column}")
    }
}

impl ShaderError {
    /// A validation error without a source location.
    pub fn validation(message: impl Into<String>) -> Self {
        ShaderError::Validation {
            message: message.into(),
            line: 0,
            column: 0,
        }
    }

    /// An `Unsupported` error without a source location (the lowering
    /// adds the innermost statement's or expression's).
    pub fn unsupported(construct: impl Into<String>) -> Self {
        ShaderError::Unsupported {
            construct: construct.into(),
            line: 0,
            column: 0,
        }
    }

    /// The source location, 1-based, when known.
    pub fn location(&self) -> Option<(u32, u32)> {
        match *self {
            ShaderError::Parse { line, column, .. }
            | ShaderError::Validation { line, column, .. }
            | ShaderError::Unsupported { line, column, .. }
                if line != 0 =>
            {
                Some((line, column))
            }
            _ => None,
        }
    }

    /// Sets the location when none is known yet (inner spans win).
    pub(crate) fn locate(&mut self, l: u32, c: u32) {
        match self {
            ShaderError::Parse { line, column, .. }
            | ShaderError::Validation { line, column, .. }
            | ShaderError::Unsupported { line, column, .. }
                if *line == 0 =>
            {
                (*line, *column) = (l, c);
            }
            _ => {}
        }
    }
}

/// A value for a WGSL `override` constant: its name (or its numeric
/// `@id`, as a decimal string) and the value, converted to the
/// override's type as WebGPU's `GPUProgrammableStage.constants` are
/// (`bool`: non-zero is true; integers: must be integral and in range).
pub type OverrideValue<'a> = (&'a str, f64);

/// A shader compiled to a lane program, runnable by the pipeline.
#[derive(Debug)]
pub struct CompiledShader {
    program: LaneProgram,
    /// The program's native code (`jit`), when the JIT back end
    /// compiled it (none: the interpreter runs it), in its tiers.
    jit: jit::TieredCode,
    /// Set when the program only moves inputs to outputs
    /// (`copies::interface_copies`): it then runs as row copies.
    copies: Option<copies::Copies>,
    /// Set by a run that stopped at `exec::MAX_LOOP_TRIPS`; taken (and
    /// cleared) by the flush through `take_incomplete`.
    loop_limit: std::sync::atomic::AtomicBool,
}

impl CompiledShader {
    /// Whether a run since the last flush stopped at
    /// `exec::MAX_LOOP_TRIPS`.  The flush then fails
    /// ([`VertexShader::take_incomplete`]) whatever the other calls
    /// compute, so they return at once: a runaway loop in a full-screen
    /// draw costs one call's loop budget, not one per call (the fuzz
    /// harness found a nested loop bounded by a constant buffer that
    /// spent 2.4 s per fragment batch that way, a timeout).
    fn stopped(&self) -> bool {
        self.loop_limit.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The lane program (for inspection, tests and alternative back ends).
    pub fn program(&self) -> &LaneProgram {
        &self.program
    }

    /// How many jumps the program's body holds: 0 for straight-line code
    /// (a loop with a constant trip count is unrolled, `tests/loops.rs`).
    #[doc(hidden)]
    pub fn jump_count(&self) -> usize {
        self.program
            .body
            .iter()
            .filter(|op| {
                matches!(
                    op,
                    ir::Op::Jump { .. } | ir::Op::JumpIfAny { .. } | ir::Op::JumpIfNone { .. }
                )
            })
            .count()
    }

    /// The shader's interface.
    pub fn info(&self) -> &ShaderInfo {
        &self.program.info
    }

    /// The program's native code that calls run now, when the JIT back
    /// end compiled it.  Under [`Backend::Jit`] that is Cranelift's until
    /// the shader has run enough to pay for LLVM's ([`TieredCode`]).
    pub fn jit(&self) -> Option<&jit::JitCode> {
        self.jit.current()
    }

    /// Compiles LLVM's code now rather than when the shader's work pays
    /// for it: for a host that knows a shader is hot (loaded with a level,
    /// drawn every frame).  Returns whether LLVM's code runs from now on;
    /// `false` under other back ends than [`Backend::Jit`], for a program
    /// past [`LLVM_MAX_REGIONS`] and on a host without
    /// `libLLVM` 15 or 14.  Costs what `jit_stats` reports for LLVM
    /// (docs/shaders.md "The JIT"), once.
    pub fn tier_up(&self) -> bool {
        self.jit.tier_up(&self.program)
    }

    /// The shader's tiers (for inspection and tests).
    #[doc(hidden)]
    pub fn tiers(&self) -> &jit::TieredCode {
        &self.jit
    }

    /// The lane program, by value.
    pub fn into_program(self) -> LaneProgram {
        self.program
    }
}

/// Compiles entry point `entry_point` of `stage` from `source`.
///
/// `semantics` maps `@location`s of vertex outputs / fragment inputs to
/// `COLORn` / `BCOLORn` (FORMAT.md "Shaders"); unlisted locations are
/// `GENERICn`.
pub fn compile(
    language: Language,
    source: &str,
    entry_point: &str,
    stage: ShaderType,
    semantics: &[(u32, Semantic)],
) -> Result<CompiledShader, ShaderError> {
    compile_with_overrides(language, source, entry_point, stage, semantics, &[])
}

/// [`compile`] with values for WGSL `override` constants, by name or by
/// numeric `@id` (see [`OverrideValue`]); overrides not given take their
/// initializer, and one without an initializer is
/// [`ShaderError::MissingOverride`].
pub fn compile_with_overrides(
    language: Language,
    source: &str,
    entry_point: &str,
    stage: ShaderType,
    semantics: &[(u32, Semantic)],
    overrides: &[OverrideValue<'_>],
) -> Result<CompiledShader, ShaderError> {
    compile_with_backend(
        language,
        source,
        entry_point,
        stage,
        semantics,
        overrides,
        Backend::from_env_or_default(),
    )
}

/// [`compile_with_overrides`] for an explicit back end (the screen's
/// option; the other entry points take [`BACKEND_ENV`]).  The program's
/// regions are compiled here, once per code generator: with
/// [`Backend::Jit`] Cranelift's now and LLVM's when the shader's work pays
/// for it ([`TieredCode`]); a program the JIT cannot compile runs on the
/// interpreter.
pub fn compile_with_backend(
    language: Language,
    source: &str,
    entry_point: &str,
    stage: ShaderType,
    semantics: &[(u32, Semantic)],
    overrides: &[OverrideValue<'_>],
    backend: Backend,
) -> Result<CompiledShader, ShaderError> {
    let naga_stage = front::naga_stage(stage)?;
    // naga is robust, but a panic deep inside a third-party parser must not
    // take the host down: user input gets a typed error, always.
    let compiled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let (parsed, entry) = front::prepare(language, source, entry_point, naga_stage, overrides)?;
        lower::lower_entry(&parsed.module, &parsed.info, entry, semantics, source)
    }));
    match compiled {
        Ok(program) => {
            let program = program?;
            let copies = copies::interface_copies(&program);
            let jit = match copies {
                None => jit::TieredCode::new(&program, backend),
                Some(_) => jit::TieredCode::new(&program, Backend::Interp),
            };
            Ok(CompiledShader {
                program,
                jit,
                copies,
                loop_limit: Default::default(),
            })
        }
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            Err(ShaderError::validation(format!(
                "internal compiler error: {what}"
            )))
        }
    }
}

/// Compiles a vertex shader for `create_vs_state`.
pub fn compile_vertex(
    language: Language,
    source: &str,
    entry_point: &str,
    semantics: &[(u32, Semantic)],
) -> Result<VertexShaderRef, ShaderError> {
    Ok(Arc::new(compile(
        language,
        source,
        entry_point,
        ShaderType::Vertex,
        semantics,
    )?))
}

/// Compiles a fragment shader for `create_fs_state`.
pub fn compile_fragment(
    language: Language,
    source: &str,
    entry_point: &str,
    semantics: &[(u32, Semantic)],
) -> Result<FragmentShaderRef, ShaderError> {
    Ok(Arc::new(compile(
        language,
        source,
        entry_point,
        ShaderType::Fragment,
        semantics,
    )?))
}

impl CompiledShader {
    /// Whether every run writes every output row in every lane, so the
    /// caller need not clear the outputs first: a copy program whose
    /// copies cover every row, or a program whose `StoreOutput`s ahead of
    /// its first jump or kill cover every row (those ops always run, and
    /// `StoreOutput` writes all lanes).  Clearing a 256-vertex segment's
    /// outputs before tiny_tris_1m's vertex shader was ~2 % of the scene.
    fn stores_every_output(&self) -> bool {
        let rows = self.program.info.outputs.len() * 4;
        let mut seen = vec![false; rows];
        let mut mark = |row: u32| {
            if let Some(s) = seen.get_mut(row as usize) {
                *s = true;
            }
        };
        match &self.copies {
            Some(c) => c.iter().for_each(|&(out, _)| mark(out)),
            None => {
                for op in &self.program.body {
                    match op {
                        ir::Op::StoreOutput { slot, .. } => mark(*slot),
                        ir::Op::Jump { .. }
                        | ir::Op::JumpIfNone { .. }
                        | ir::Op::JumpIfAny { .. }
                        | ir::Op::Kill { .. } => break,
                        _ => {}
                    }
                }
            }
        }
        seen.iter().all(|&s| s)
    }
}

impl CompiledShader {
    /// The shader buffers and images a vertex or fragment shader call
    /// sees, when the program uses any (`None` keeps memory-free shaders
    /// exactly as before).
    fn memory<'a>(
        &self,
        resources: &ShaderResources<'a>,
        diverged: &'a AtomicBool,
    ) -> Option<memory::ComputeCall<'a>> {
        let info = &self.program.info;
        (info.shader_buffers_used | info.shader_images_used != 0)
            .then(|| memory::ComputeCall::graphics(resources.buffers, resources.images, diverged))
    }
}

impl VertexShader for CompiledShader {
    fn info(&self) -> &ShaderInfo {
        &self.program.info
    }

    fn writes_all_outputs(&self) -> bool {
        self.stores_every_output()
    }

    fn take_incomplete(&self) -> bool {
        self.loop_limit
            .swap(false, std::sync::atomic::Ordering::Relaxed)
    }

    fn run(&self, resources: &ShaderResources<'_>, io: &mut VertexIo<'_>) {
        if self.stopped() {
            return;
        }
        if let Some(c) = &self.copies {
            copies::run_copies(c, io.groups, io.inputs, io.outputs);
            return;
        }
        let diverged = AtomicBool::new(false);
        let memory = self.memory(resources, &diverged);
        let mut call = call::CallIo {
            resources,
            groups: io.groups,
            inputs: io.inputs,
            frag_coord: &[],
            vertex_id: io.vertex_id,
            instance_id: io.instance_id,
            outputs: io.outputs,
            live: None,
            count: io.count,
            compute: memory.as_ref(),
        };
        if exec::run(
            &self.program,
            self.jit.for_call(&self.program, call.groups),
            &mut call,
        ) {
            self.loop_limit
                .store(true, std::sync::atomic::Ordering::Relaxed);
        }
    }
}

impl FragmentShader for CompiledShader {
    fn info(&self) -> &ShaderInfo {
        &self.program.info
    }

    fn writes_all_outputs(&self) -> bool {
        self.stores_every_output()
    }

    fn take_incomplete(&self) -> bool {
        self.loop_limit
            .swap(false, std::sync::atomic::Ordering::Relaxed)
    }

    fn interface_copies(&self) -> Option<&[(u32, u32)]> {
        self.copies.as_deref()
    }

    fn run(&self, resources: &ShaderResources<'_>, io: &mut FragmentIo<'_>) {
        if self.stopped() {
            return;
        }
        if let Some(c) = &self.copies {
            copies::run_copies(c, io.groups, io.inputs, io.outputs);
            return;
        }
        let diverged = AtomicBool::new(false);
        let memory = self.memory(resources, &diverged);
        let mut call = call::CallIo {
            resources,
            groups: io.groups,
            inputs: io.inputs,
            frag_coord: io.frag_coord,
            vertex_id: &[],
            instance_id: &[],
            outputs: io.outputs,
            live: Some(io.mask),
            count: io.groups * ferropipe_components::shader::LANES,
            compute: memory.as_ref(),
        };
        if exec::run(
            &self.program,
            self.jit.for_call(&self.program, call.groups),
            &mut call,
        ) {
            self.loop_limit
                .store(true, std::sync::atomic::Ordering::Relaxed);
        }
    }
}
