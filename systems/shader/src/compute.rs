//! Compute shaders (llvmpipe's counterpart: `lp_state_cs.c`, which compiles
//! a compute shader to a function run per block of a grid): compiling a
//! WGSL/GLSL `@compute` entry point to a lane program and running it for
//! one workgroup.
//!
//! One call of [`ComputeShader::run_workgroup`] is one workgroup: its
//! invocations are the call's lanes, local invocation index `8 * group +
//! lane`, and the executor runs them as a single chunk (up to 1024
//! invocations = 128 groups), so every op finishes for the whole workgroup
//! before the next one starts.  That is what makes `workgroupBarrier` hold
//! without any code (`lower/memory.rs`).  The grid — many workgroups on the
//! worker pool — is `ferropipe_systems::compute`'s job.

use std::sync::Arc;

use ferropipe_components::enums::ShaderType;
use ferropipe_components::shader::{LANES, ShaderResources};

use crate::call::CallIo;
use crate::exec;
use crate::ir::{ComputeInfo, LaneProgram};
use crate::memory::ComputeCall;
use crate::{Language, ShaderError};

/// Largest workgroup: 1024 invocations (llvmpipe's and GL's
/// `MAX_COMPUTE_WORK_GROUP_INVOCATIONS`).  A workgroup's registers are
/// `varying registers * 128 groups * 32` bytes, 512 KiB for a 128-register
/// program: per worker thread, reused.
pub const MAX_WORKGROUP_INVOCATIONS: u32 = 1024;
/// Largest workgroup size per dimension (x, y: 1024; z: 64, as GL's
/// minimum maxima and llvmpipe).
pub const MAX_WORKGROUP_SIZE: [u32; 3] = [1024, 1024, 64];

/// A compiled compute shader.
#[derive(Debug)]
pub struct ComputeShader {
    program: LaneProgram,
    /// The program's native code ([`crate::jit`]), when the JIT back end
    /// compiled it.
    jit: crate::jit::TieredCode,
    info: ComputeInfo,
}

/// A shared compute shader (what a compute-state CSO holds).
pub type ComputeShaderRef = Arc<ComputeShader>;

/// Compiles compute entry point `entry_point` of `source`.
///
/// Refused here, as typed errors: workgroups above
/// [`MAX_WORKGROUP_INVOCATIONS`] or [`MAX_WORKGROUP_SIZE`], more workgroup
/// memory than `lower::memory::MAX_SHARED_BYTES`, and every construct the
/// lowering does not run.
pub fn compile_compute(
    language: Language,
    source: &str,
    entry_point: &str,
) -> Result<ComputeShaderRef, ShaderError> {
    compile_compute_with_overrides(language, source, entry_point, &[])
}

/// [`compile_compute`] with values for WGSL `override`s (see
/// [`crate::compile_with_overrides`]); `@workgroup_size` may use them.
pub fn compile_compute_with_overrides(
    language: Language,
    source: &str,
    entry_point: &str,
    overrides: &[crate::OverrideValue<'_>],
) -> Result<ComputeShaderRef, ShaderError> {
    compile_compute_with_backend(
        language,
        source,
        entry_point,
        overrides,
        crate::Backend::from_env_or_default(),
    )
}

/// [`compile_compute_with_overrides`] for an explicit back end (see
/// [`crate::compile_with_backend`]).
pub fn compile_compute_with_backend(
    language: Language,
    source: &str,
    entry_point: &str,
    overrides: &[crate::OverrideValue<'_>],
    backend: crate::Backend,
) -> Result<ComputeShaderRef, ShaderError> {
    let compiled = crate::compile_with_backend(
        language,
        source,
        entry_point,
        ShaderType::Compute,
        &[],
        overrides,
        backend,
    )?;
    let crate::CompiledShader { program, jit, .. } = compiled;
    let info = program
        .compute
        .clone()
        .ok_or_else(|| ShaderError::validation("internal compiler error: no compute info"))?;
    let size = info.workgroup_size;
    if size.contains(&0) {
        return Err(ShaderError::validation(format!(
            "@workgroup_size({}, {}, {}) has a zero dimension",
            size[0], size[1], size[2]
        )));
    }
    if info.invocations() > u64::from(MAX_WORKGROUP_INVOCATIONS)
        || size.iter().zip(MAX_WORKGROUP_SIZE).any(|(s, m)| *s > m)
    {
        return Err(ShaderError::unsupported(format!(
            "@workgroup_size({}, {}, {}) (at most {MAX_WORKGROUP_INVOCATIONS} invocations, {:?} per dimension)",
            size[0], size[1], size[2], MAX_WORKGROUP_SIZE
        )));
    }
    Ok(Arc::new(ComputeShader { program, jit, info }))
}

impl ComputeShader {
    /// What the shader needs from a launch.
    pub fn info(&self) -> &ComputeInfo {
        &self.info
    }

    /// The lane program (for inspection and tests).
    pub fn program(&self) -> &LaneProgram {
        &self.program
    }

    /// Words of workgroup memory one workgroup needs.
    pub fn shared_words(&self) -> usize {
        self.info.shared_bytes.div_ceil(4) as usize
    }

    /// Runs one workgroup.  `call.shared` must hold at least
    /// [`ComputeShader::shared_words`] zeroed words (fewer are read as 0,
    /// never out of bounds).  [`ShaderError::LoopLimit`] when a loop ran
    /// past [`exec::MAX_LOOP_TRIPS`]: the workgroup's writes are then
    /// incomplete.
    pub fn run_workgroup(
        &self,
        resources: &ShaderResources<'_>,
        call: &ComputeCall<'_>,
    ) -> Result<(), ShaderError> {
        let count = self.info.invocations() as usize;
        let groups = count.div_ceil(LANES);
        let mut outputs = [];
        let mut io = CallIo {
            resources,
            groups,
            inputs: &[],
            frag_coord: &[],
            vertex_id: &[],
            instance_id: &[],
            outputs: &mut outputs,
            live: None,
            count,
            compute: Some(call),
        };
        let jit = self.jit.for_call(&self.program, groups);
        if exec::run(&self.program, jit, &mut io) {
            return Err(ShaderError::LoopLimit { stage: "compute" });
        }
        Ok(())
    }
}
