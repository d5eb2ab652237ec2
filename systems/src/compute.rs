//! Compute grids on the worker pool (llvmpipe's counterpart:
//! `lp_cs_tpool.c`, the compute thread pool that runs the blocks of a
//! `launch_grid`, with the resource binding of `lp_state_cs.c`).
//!
//! A launch is data: the façade validates it and inserts a
//! [`ComputeDispatch`] resource, then runs the [`ComputeGrid`] schedule,
//! whose one system, `dispatch_workgroups`, locks the resources, turns
//! shader buffers and images into word views and runs every workgroup on
//! the screen's pool.
//!
//! # Parallelism and determinism
//! Workgroups are independent by definition (only memory and atomics
//! connect them), so the grid is cut into `4 × threads` jobs of consecutive
//! workgroups (4 per thread so a slow job does not idle the others), each
//! job with its own workgroup memory.  A kernel without data races writes
//! the same bytes for any thread count; integer atomics (add, min, max,
//! and, or, xor) leave the same final values in any order.  What can
//! depend on the order of *workgroups* — never of invocations inside one,
//! which run in a fixed lane order — is the value an atomic returns, and
//! exchanges between workgroups, and the rounding of float atomic sums
//! (`atomic<f32>` adds from several workgroups, `lower/memory.rs`): those
//! are exact, and so thread-count independent, only where every partial
//! sum is representable.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32};

use bevy_ecs::component::Component;
use bevy_ecs::resource::Resource;
use bevy_ecs::schedule::{IntoScheduleConfigs, Schedule, ScheduleLabel, SystemSet};
use bevy_ecs::system::{Res, ResMut};
use bevy_ecs::world::World;
use ferropipe_components::batch::StageResources;
use ferropipe_components::shader::ShaderResources;
use ferropipe_shader::ComputeShaderRef;
use ferropipe_shader::{ComputeCall, StorageImage, WordBuffer};

use crate::job::PipelineExecutor;
use crate::locks::{LockSet, PreparedStage, stage_resource_refs, view_storage_image, word_buffer};

/// A compute-state CSO (`create_compute_state`): the compiled shader and
/// the memory sizes `pipe_compute_state` asked for.
#[derive(Component, Clone, Debug)]
pub struct ComputeShaderCso {
    /// The compiled kernel.
    pub shader: ComputeShaderRef,
    /// `req_input_mem`: bytes of INPUT a launch must provide.
    pub req_input_mem: u32,
    /// `static_shared_mem` / `req_local_mem`: extra LOCAL bytes reserved.
    pub req_local_mem: u32,
}

/// The bindings' types live in `components` (the draw stages' state blocks
/// hold them too); named here as before.
pub use ferropipe_components::batch::{ShaderBufferBinding, ShaderImageBinding};

/// A validated launch, ready to run.
#[derive(Resource, Clone)]
pub struct ComputeDispatch {
    /// The kernel to run.
    pub shader: ComputeShaderRef,
    /// Workgroups per dimension (each at least 1).
    pub grid: [u32; 3],
    /// `grid_base`: added to every `workgroup_id`.
    pub grid_base: [u32; 3],
    /// Constant buffers, sampler views and samplers of the compute stage.
    pub stage: StageResources,
    /// `set_shader_buffers` slots of the compute stage (`@group(3)`).
    pub buffers: Vec<Option<ShaderBufferBinding>>,
    /// `set_global_binding` slots (`@group(6)`): whole buffers.
    pub globals: Vec<Option<ShaderBufferBinding>>,
    /// `set_shader_images` slots of the compute stage (`@group(4)`).
    pub images: Vec<Option<ShaderImageBinding>>,
    /// `pipe_grid_info::last_block`: where non-zero, the last workgroup
    /// along that dimension runs only this many invocations in it.
    pub last_block: [u32; 3],
    /// `pipe_grid_info::input` (INPUT memory, `@group(5) @binding(0)`).
    pub input: Arc<[u8]>,
    /// Words of workgroup memory per workgroup (the shader's plus
    /// `req_local_mem` and `variable_shared_mem`).
    pub shared_words: usize,
    /// The launch's [`crate::budget::WorkBudget`] deadline: no workgroup
    /// starts after it (work units are checked by the façade before the
    /// launch, where they are known exactly).
    pub deadline: Option<std::time::Instant>,
}

/// What the last launch reported.
#[derive(Resource, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ComputeOutcome {
    /// A workgroup executed a barrier with some, not all, of its live
    /// invocations (non-uniform control flow, which WGSL forbids and naga
    /// 30 does not catch): the kernel's results are undefined.
    pub divergent_barrier: bool,
    /// The deadline passed: workgroups after that safe point did not run.
    pub timed_out: bool,
    /// A workgroup stopped a runaway loop at the executor's loop-trip
    /// limit (`ferropipe_shader::exec::MAX_LOOP_TRIPS`, the analogue of a
    /// GPU's device-lost timeout): the launch's results are incomplete.
    /// The workgroups not started yet are skipped.
    pub loop_limit: bool,
}

/// The schedule a launch runs.
#[derive(ScheduleLabel, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ComputeGrid;

/// The compute stage's set, for user systems ordered around it.
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DispatchSet;

/// Installs the [`ComputeGrid`] schedule.
pub(crate) fn configure_compute(world: &mut World) {
    let mut schedule = Schedule::new(ComputeGrid);
    schedule.add_systems(dispatch_workgroups.in_set(DispatchSet));
    world.add_schedule(schedule);
    world.init_resource::<ComputeOutcome>();
}

/// The system: runs the pending [`ComputeDispatch`], if any.
pub(crate) fn dispatch_workgroups(
    dispatch: Option<Res<ComputeDispatch>>,
    exec: Res<PipelineExecutor>,
    mut outcome: ResMut<ComputeOutcome>,
) {
    ferropipe_profiling::scope!("dispatch_workgroups");
    if let Some(d) = dispatch {
        *outcome = run_grid(exec.0.as_ref(), &d);
    }
}

/// Runs every workgroup of `d` on `exec`.
pub(crate) fn run_grid(exec: &dyn crate::pool::Executor, d: &ComputeDispatch) -> ComputeOutcome {
    let writes = d
        .buffers
        .iter()
        .chain(&d.globals)
        .flatten()
        .map(|b| &b.buffer)
        .chain(d.images.iter().flatten().map(|i| &i.resource))
        .map(|r| (r, true));
    let locks = LockSet::acquire(stage_resource_refs(&d.stage).chain(writes));
    let prepared = PreparedStage::new(&d.stage, &locks);
    let base = prepared.resources();
    // constant buffers 0..31, then INPUT at index 32
    let mut constants: Vec<&[u8]> = base.constants.to_vec();
    constants.resize(ferropipe_shader::INPUT_CONST_BUFFER as usize, &[]);
    constants.push(&d.input);
    let resources = ShaderResources {
        constants: &constants,
        ..base
    };
    let word_buffer = |b: &Option<ShaderBufferBinding>| word_buffer(&locks, b.as_ref()?);
    let buffers: Vec<Option<WordBuffer>> = d.buffers.iter().map(word_buffer).collect();
    let globals: Vec<Option<WordBuffer>> = d.globals.iter().map(word_buffer).collect();
    let images: Vec<Option<StorageImage>> = d
        .images
        .iter()
        .map(|i| view_storage_image(&locks, i.as_ref()?))
        .collect();

    let [gx, gy, gz] = d.grid;
    let total = u64::from(gx) * u64::from(gy) * u64::from(gz);
    let jobs = (exec.threads() as u64 * 4).clamp(1, total.max(1));
    let per_job = total.div_ceil(jobs);
    let size = d.shader.info().workgroup_size;
    let diverged = AtomicBool::new(false);
    let timed_out = AtomicBool::new(false);
    let loop_limit = AtomicBool::new(false);
    exec.for_each(jobs as usize, &|j| {
        ferropipe_profiling::scope!("compute job");
        let shared: Vec<AtomicU32> = (0..d.shared_words).map(|_| AtomicU32::new(0)).collect();
        let first = j as u64 * per_job;
        for wg in first..(first + per_job).min(total) {
            if loop_limit.load(std::sync::atomic::Ordering::Relaxed) {
                // a runaway kernel: like a lost device, stop the launch
                break;
            }
            if let Some(deadline) = d.deadline
                && (timed_out.load(std::sync::atomic::Ordering::Relaxed)
                    || std::time::Instant::now() >= deadline)
            {
                // Between workgroups: a safe point.
                timed_out.store(true, std::sync::atomic::Ordering::Relaxed);
                break;
            }
            let id = [
                (wg % u64::from(gx)) as u32,
                (wg / u64::from(gx) % u64::from(gy)) as u32,
                (wg / (u64::from(gx) * u64::from(gy))) as u32,
            ];
            if wg != first {
                // WGSL zero-initialises workgroup memory per workgroup
                for w in &shared {
                    w.store(0, std::sync::atomic::Ordering::Relaxed);
                }
            }
            // the last workgroup along a dimension with a last_block runs
            // only that many invocations in it
            let active = std::array::from_fn(|k| {
                let partial = d.last_block[k] != 0 && id[k] + 1 == d.grid[k];
                if partial {
                    d.last_block[k].min(size[k])
                } else {
                    size[k]
                }
            });
            let call = ComputeCall {
                buffers: &buffers,
                globals: &globals,
                images: &images,
                shared: &shared,
                workgroup_id: std::array::from_fn(|k| id[k].wrapping_add(d.grid_base[k])),
                num_workgroups: d.grid,
                workgroup_size: size,
                active,
                diverged: &diverged,
            };
            if d.shader.run_workgroup(&resources, &call).is_err() {
                loop_limit.store(true, std::sync::atomic::Ordering::Relaxed);
            }
        }
    });
    ComputeOutcome {
        divergent_barrier: diverged.into_inner(),
        timed_out: timed_out.into_inner(),
        loop_limit: loop_limit.into_inner(),
    }
}
