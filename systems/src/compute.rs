//! Compute grids on the worker pool (llvmpipe's counterpart:
//! `lp_cs_tpool.c`, the compute thread pool that runs the blocks of a
//! `launch_grid`, with the resource binding of `lp_state_cs.c`).
//!
//! A launch is data: the façade validates it and inserts a
//! [`ComputeDispatch`] resource, then runs the [`ComputeGrid`] schedule,
//! whose one system, [`dispatch_workgroups`], locks the resources, turns
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
use ferropipe_components::format::Format;
use ferropipe_components::resource::ResourceRef;
use ferropipe_components::shader::ShaderResources;
use ferropipe_shader::ComputeShaderRef;
use ferropipe_shader::memory::{ComputeCall, StorageImage, WordBuffer};

use crate::locks::{LockSet, PreparedStage, stage_resource_refs};
use crate::scene::PipelineExecutor;

/// A compute-state CSO (`create_compute_state`): the compiled shader and
/// the memory sizes `pipe_compute_state` asked for.
#[derive(Component, Clone, Debug)]
pub struct ComputeShaderCso {
    pub shader: ComputeShaderRef,
    /// `req_input_mem`: bytes of INPUT a launch must provide.
    pub req_input_mem: u32,
    /// `static_shared_mem` / `req_local_mem`: extra LOCAL bytes reserved.
    pub req_local_mem: u32,
}

/// One `set_shader_buffers` slot (`struct pipe_shader_buffer`).
#[derive(Clone, Debug)]
pub struct ShaderBufferBinding {
    pub buffer: ResourceRef,
    /// Byte offset (a multiple of 4: `PIPE_CAP_SHADER_BUFFER_OFFSET_ALIGNMENT`).
    pub offset: u32,
    pub size: u32,
}

/// One `set_shader_images` slot (`struct pipe_image_view`).
#[derive(Clone, Debug)]
pub struct ShaderImageBinding {
    pub resource: ResourceRef,
    /// The view's format (texel size 4, 8 or 16 bytes; for a texture
    /// size-compatible with the resource's).
    pub format: Format,
    /// Textures: the viewed level and layers (cube faces are layers).
    pub level: u32,
    pub first_layer: u32,
    pub last_layer: u32,
    /// Buffer images (`texture_storage_1d` over a `PIPE_BUFFER`): the
    /// viewed bytes, `(offset, size)`, offset a multiple of 4; the image
    /// is `size / texel bytes` texels wide.
    pub buffer_range: Option<(u32, u32)>,
}

/// A validated launch, ready to run.
#[derive(Resource, Clone)]
pub struct ComputeDispatch {
    pub shader: ComputeShaderRef,
    /// Workgroups per dimension (each at least 1).
    pub grid: [u32; 3],
    /// `grid_base`: added to every `workgroup_id`.
    pub grid_base: [u32; 3],
    /// Constant buffers, sampler views and samplers of the compute stage.
    pub stage: StageResources,
    pub buffers: Vec<Option<ShaderBufferBinding>>,
    /// `set_global_binding` slots (`@group(6)`): whole buffers.
    pub globals: Vec<Option<ShaderBufferBinding>>,
    pub images: Vec<Option<ShaderImageBinding>>,
    /// `pipe_grid_info::last_block`: where non-zero, the last workgroup
    /// along that dimension runs only this many invocations in it.
    pub last_block: [u32; 3],
    /// `pipe_grid_info::input` (INPUT memory, `@group(5) @binding(0)`).
    pub input: Arc<[u8]>,
    /// Words of workgroup memory per workgroup (the shader's plus
    /// `req_local_mem` and `variable_shared_mem`).
    pub shared_words: usize,
}

/// What the last launch reported.
#[derive(Resource, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ComputeOutcome {
    /// A workgroup executed a barrier with some, not all, of its live
    /// invocations (non-uniform control flow, which WGSL forbids and naga
    /// 30 does not catch): the kernel's results are undefined.
    pub divergent_barrier: bool,
    /// A workgroup stopped a runaway loop at the interpreter's back-edge
    /// limit (`ferropipe_shader::exec::MAX_BACK_EDGES`, the analogue of a
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
pub fn configure_compute(world: &mut World) {
    let mut schedule = Schedule::new(ComputeGrid);
    schedule.add_systems(dispatch_workgroups.in_set(DispatchSet));
    world.add_schedule(schedule);
    world.init_resource::<ComputeOutcome>();
}

/// The system: runs the pending [`ComputeDispatch`], if any.
pub fn dispatch_workgroups(
    dispatch: Option<Res<ComputeDispatch>>,
    exec: Res<PipelineExecutor>,
    mut outcome: ResMut<ComputeOutcome>,
) {
    ferropipe_profiling::scope!("dispatch_workgroups");
    if let Some(d) = dispatch {
        *outcome = run_grid(exec.0.as_ref(), &d);
    }
}

/// Views `len` bytes at `ptr` as words.
///
/// # Safety
/// `ptr` must be 4-byte aligned and valid for reads and writes of `len`
/// bytes for `'a`, with no non-atomic access to them during `'a`.
unsafe fn view_atomic_words<'a>(ptr: *mut u8, len: usize) -> &'a [AtomicU32] {
    // SAFETY: the caller guarantees alignment, validity and exclusivity;
    // `AtomicU32` has the size and alignment of `u32`.
    unsafe { std::slice::from_raw_parts(ptr.cast::<AtomicU32>(), len / 4) }
}

/// The words of a resource locked for writing, or `None` when it is not
/// 4-byte aligned (host memory; the façade refuses such bindings).
fn view_locked_words<'a>(locks: &'a LockSet<'a>, r: &ResourceRef) -> Option<&'a [AtomicU32]> {
    let (ptr, len) = locks.target(r)?;
    if !(ptr as usize).is_multiple_of(4) {
        return None;
    }
    // SAFETY: `locks` holds the resource's write lock for `'a`, so nothing
    // else reads or writes these bytes meanwhile; from here on the
    // workgroups touch them only through atomics; alignment checked above.
    Some(unsafe { view_atomic_words(ptr, len) })
}

/// Runs every workgroup of `d` on `exec`.
pub fn run_grid(exec: &dyn crate::pool::Executor, d: &ComputeDispatch) -> ComputeOutcome {
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
    constants.resize(
        ferropipe_shader::lower::memory::INPUT_CONST_BUFFER as usize,
        &[],
    );
    constants.push(&d.input);
    let resources = ShaderResources {
        constants: &constants,
        ..base
    };
    let word_buffer = |b: &Option<ShaderBufferBinding>| {
        let b = b.as_ref()?;
        let words = view_locked_words(&locks, &b.buffer)?;
        let first = (b.offset / 4) as usize;
        let end = (b.offset as usize + b.size as usize) / 4;
        let words = words.get(first.min(words.len())..end.min(words.len()))?;
        Some(WordBuffer {
            words,
            bytes: b.size,
        })
    };
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
        loop_limit: loop_limit.into_inner(),
    }
}

/// The storage-image view of a bound image.
fn view_storage_image<'a>(
    locks: &'a LockSet<'a>,
    i: &'a ShaderImageBinding,
) -> Option<StorageImage<'a>> {
    let words = view_locked_words(locks, &i.resource)?;
    let bpp = i.format.desc().block_bytes as usize;
    if let Some((offset, size)) = i.buffer_range {
        // a buffer image: one row of `size / bpp` texels at `offset`
        return Some(StorageImage {
            words,
            format: i.format,
            width: size / bpp.max(1) as u32,
            height: 1,
            depth: 1,
            offset: offset as usize,
            row_stride: size as usize,
            slice_stride: size as usize,
            bpp,
        });
    }
    let layout = &i.resource.layout;
    let level = layout.levels.get(i.level as usize)?;
    let is_3d = i.resource.templ.target == ferropipe_components::enums::TextureTarget::Texture3D;
    let (offset, depth) = if is_3d {
        (level.offset, level.depth)
    } else {
        let first = i.first_layer.min(level.depth.saturating_sub(1));
        let last = i.last_layer.min(level.depth.saturating_sub(1)).max(first);
        (
            level.offset + first as usize * level.slice_stride,
            last - first + 1,
        )
    };
    Some(StorageImage {
        words,
        format: i.format,
        width: level.width,
        height: level.height,
        depth,
        offset,
        row_stride: level.row_stride,
        slice_stride: level.slice_stride,
        bpp,
    })
}
