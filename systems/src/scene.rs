//! Equivalent of llvmpipe's `lp_setup.c` scene management and `lp_scene.c`:
//! executing a recorded scene.  The front end runs in *waves* of jobs (each
//! job a run of primitives from one or more draws), the back end runs once
//! the bins hold the whole scene or reach `SCENE_BIN_BUDGET` (96 MiB), and then the
//! front end carries on (llvmpipe's "flush and restart" when scene memory
//! runs out).
//!
//! This file holds the scheduling glue: the [`SceneExecution`] resource, the
//! wave planner, one system per pipeline stage (each parallel over the
//! wave's jobs or the scene's tiles on the [`PipelineExecutor`]), and
//! [`execute_scene`], the loop that runs the schedules.

use std::sync::Arc;

use bevy_ecs::prelude::*;
use ferropipe_components::batch::{
    BinnedJob, ClearValue, ClippedPrims, Command, DrawCounters, JobBins, Plane, RecordedScene,
    SetupPrim, SetupPrims, StageResources, StateBlock,
};
use ferropipe_components::draw::DrawInfo;
use ferropipe_components::enums::{ClearFlags, PrimType};
use ferropipe_components::resource::ResourceRef;
use ferropipe_profiling::{Counter, CounterSet, Counts};

use crate::PipelineSet;
use crate::bin::{BinScratch, bin_clear, bin_prims, order_prims_by_tile};
use crate::budget::{BudgetExceeded, BudgetMeter, WorkBudget};
use crate::clip::{ClipCounters, ClipScratch, clip_segment};
use crate::derived::{DerivedState, same_shape_inputs};
use crate::fetch::{
    BufferView, IndexSource, JobPart, Segment, Topology, VertexDedup, assemble_part, fetch_segment,
    restart_runs,
};
use crate::lanes::TileGrid;
use crate::locks::{LockSet, PreparedStage, same_except_constants};
use crate::merge::{ColorTarget, DepthFormat, DepthTarget, TargetMemory, Targets};
use crate::plans::PlanCache;
use crate::pool::ExecutorRef;
use crate::raster::{ScratchPool, TileContext, TileCount, TileScratch, TileTotals, rasterize_tile};
use crate::setup::setup_prims;
use crate::shade::shade_batch;

/// Primitives per front-end job: enough to amortise per-job costs (a
/// job's bins are scanned by every tile), few enough that a wave of jobs
/// keeps every worker busy.
pub const JOB_PRIMS: u32 = 2048;

/// Binned data (set-up primitives, planes, bin entries) after which the
/// back end runs mid-scene and the bins start over: bounds scene memory
/// whatever the number of draws, like llvmpipe's `LP_SCENE_MAX_SIZE`.
pub(crate) const SCENE_BIN_BUDGET: usize = 96 << 20;

/// Overrides [`SCENE_BIN_BUDGET`] for one context (insert it into the
/// world): hosts short of memory lower it; the tests set it tiny to force
/// a tile pass after every wave and check the image does not change.
#[derive(Resource, Clone, Copy, Debug)]
pub(crate) struct SceneBinBudget(pub usize);

/// The worker pool the heavy systems split their work over.
#[derive(Resource, Clone)]
pub struct PipelineExecutor(pub ExecutorRef);

/// Where the pipeline commits its counters (`docs/profiling.md`): the
/// owner's [`CounterSet`] (a context's, so its driver queries see its own
/// work), whose commits also reach the process-wide
/// `ferropipe_profiling::global()` set.
///
/// Counts are integer sums taken per job or tile into plain integers and
/// added up in job / tile index order once per system run, so they are
/// exact and the same for any thread count; the stage times are each
/// system run's wall time (`CounterSet::time_stage`).
#[derive(Resource, Clone, Default)]
pub struct PipelineCounters(pub Arc<CounterSet>);

/// A front-end job: its plan, then each stage's output.
#[derive(Default)]
pub struct FrontJob {
    /// The primitive runs the job assembles, in order.
    pub parts: Vec<JobPart>,
    /// A clear job (no parts).
    pub clear: Option<(ClearFlags, ClearValue)>,
    /// Fetch → shade: assembled segments (only `used` are live).
    pub segments: Vec<Segment>,
    /// Live entries of `segments` (the rest are kept for reuse).
    pub used: usize,
    /// Clip → setup.
    pub clipped: ClippedPrims,
    /// Setup → bin → raster.
    pub out: BinnedJob,
    /// Per-command counters collected by the front end.
    pub counters: Vec<(u32, DrawCounters)>,
    /// Setup: clipped primitives that survived culling.
    pub kept: u64,
    dedup: VertexDedup,
    clip_scratch: ClipScratch,
    bin_scratch: BinScratch,
}

impl FrontJob {
    fn reset(&mut self) {
        self.parts.clear();
        self.clear = None;
        self.used = 0;
        self.clipped.verts.clear();
        self.clipped.prims.clear();
        self.counters.clear();
        self.kept = 0;
    }

    fn count(&mut self, command: u32, f: impl FnOnce(&mut DrawCounters)) {
        match self.counters.last_mut() {
            Some((c, d)) if *c == command => f(d),
            _ => {
                let mut d = DrawCounters::default();
                f(&mut d);
                self.counters.push((command, d));
            }
        }
    }
}

/// Where planning stands in the command stream.
#[derive(Default)]
struct Planner {
    command: usize,
    instance: u32,
    run: usize,
    prim: u32,
    /// Restart runs of the current command (`(start, len)`).
    runs: Vec<(u32, u32)>,
    runs_for: Option<usize>,
}

/// State of the scene being executed (systems read and write it).
#[derive(Resource, Default)]
pub struct SceneExecution {
    /// Derived state per state block of the scene.
    pub states: Vec<DerivedState>,
    /// A block of the scene captures stream output (the StreamOut stage
    /// has work; found once per scene, not per wave over every block).
    pub captures: bool,
    /// The framebuffer's tile grid.
    pub grid: TileGrid,
    /// Per command: its samples are counted by an active query (its bin
    /// entries may not be skipped).
    pub counted: Vec<bool>,
    /// The current wave.
    pub wave: Vec<FrontJob>,
    /// Jobs binned since the back end last ran, in submission order.
    pub binned: Vec<BinnedJob>,
    /// Bytes held by `binned` (a tile pass runs when it reaches `SCENE_BIN_BUDGET`).
    pub binned_bytes: usize,
    /// All commands planned.
    pub planned_all: bool,
    /// Per-tile counts of the last back-end pass.
    pub tile_counts: Vec<Vec<TileCount>>,
    /// Per-tile pipeline-counter totals of the last back-end pass.
    pub tile_totals: Vec<TileTotals>,
    /// Per tile over the whole scene (all passes): bit 0 touched, bit 1
    /// fully covered (see [`TileTotals`]).
    tile_seen: Vec<u8>,
    /// Per-command counters of the scene.
    pub counters: Vec<DrawCounters>,
    /// The flush's [`WorkBudget`] as it is spent (budget.rs).
    pub meter: BudgetMeter,
    planner: Planner,
    /// Spare jobs and binned buffers, reused across waves and scenes.
    spare_jobs: Vec<FrontJob>,
    spare_binned: Vec<BinnedJob>,
    scratch: Arc<ScratchPool>,
    /// Resources the front end reads (vertex and index buffers; VS).
    vertex_resources: Vec<ResourceRef>,
    vs_resources: Vec<ResourceRef>,
    /// VS shader buffers and images (locked for writing).
    vs_storage: Vec<ResourceRef>,
    /// Resources the back end writes (targets) and reads (FS).
    targets: Vec<ResourceRef>,
    fs_resources: Vec<ResourceRef>,
    /// FS shader buffers and images (locked for writing).
    fs_storage: Vec<ResourceRef>,
}

impl SceneExecution {
    /// Whether the front end has nothing left to do.
    pub(crate) fn front_done(&self) -> bool {
        self.planned_all && self.wave.is_empty()
    }
}

/// Prepares `exec` for `scene`: derived state per block (from `plans`,
/// which derives only what no earlier block or flush did), the tile grid,
/// the resource lists to lock.
pub(crate) fn begin_scene(
    scene: &RecordedScene,
    exec: &mut SceneExecution,
    plans: &mut PlanCache,
    counted: &[bool],
) {
    exec.states.clear();
    exec.captures = false;
    // The resources to lock, each binding array visited once: blocks share
    // their predecessor's arrays unless a setter replaced them (many_draws:
    // 10,000 blocks, one new constant-buffer array each), so comparing with
    // the previous block skips most before the hash sets see them.
    let mut vr = Vec::new();
    let mut vsr = Vec::new();
    let mut fsr = Vec::new();
    let mut vss = Vec::new();
    let mut fss = Vec::new();
    let mut seen: std::collections::HashSet<(u8, usize)> = Default::default();
    // (One pass over the blocks for the resource lists and the derived
    // state: many_draws' 10,000 blocks of ~1.2 KB do not all stay in L2.)
    plans.begin_flush();
    let mut prev: Option<&StateBlock> = None;
    for block in &scene.states {
        let b = &**block;
        let same = |f: fn(&StateBlock) -> usize| prev.is_some_and(|p| f(p) == f(b));
        if let Some(ib) = &b.index_buffer.buffer
            && !prev.is_some_and(|p| {
                p.index_buffer
                    .buffer
                    .as_ref()
                    .is_some_and(|q| Arc::ptr_eq(q, ib))
            })
        {
            vr.push(ib.clone());
        }
        if !same(|b| Arc::as_ptr(&b.vertex_buffers) as usize)
            && seen.insert((0, Arc::as_ptr(&b.vertex_buffers) as usize))
        {
            vr.extend(b.vertex_buffers.iter().filter_map(|vb| vb.buffer.clone()));
        }
        // (Keys tagged per stage and array: one `Arc` bound to both stages
        // is listed for each.)
        for (tag, stage, list, storage, of) in [
            (
                1,
                &b.vs_resources,
                &mut vsr,
                &mut vss,
                (|b| &b.vs_resources) as fn(&StateBlock) -> &StageResources,
            ),
            (5, &b.fs_resources, &mut fsr, &mut fss, |b| &b.fs_resources),
        ] {
            let was = prev.map(of);
            let mut kind = tag;
            let mut new = |p: usize, q: Option<usize>| {
                kind += 1;
                q != Some(p) && seen.insert((kind, p))
            };
            // Constant buffers change per draw (many_draws) and rarely bind
            // a resource: pushed without hashing the array, deduplicated
            // below.
            if !was.is_some_and(|w| Arc::ptr_eq(&w.constant_buffers, &stage.constant_buffers)) {
                list.extend(
                    stage
                        .constant_buffers
                        .iter()
                        .filter_map(|c| c.buffer.clone()),
                );
            }
            let p = Arc::as_ptr(&stage.sampler_views) as usize;
            if new(p, was.map(|w| Arc::as_ptr(&w.sampler_views) as usize)) {
                list.extend(
                    stage
                        .sampler_views
                        .iter()
                        .flatten()
                        .map(|v| v.resource.clone()),
                );
            }
            let p = Arc::as_ptr(&stage.shader_buffers) as usize;
            if new(p, was.map(|w| Arc::as_ptr(&w.shader_buffers) as usize)) {
                storage.extend(
                    stage
                        .shader_buffers
                        .iter()
                        .flatten()
                        .map(|b| b.buffer.clone()),
                );
            }
            let p = Arc::as_ptr(&stage.shader_images) as usize;
            if new(p, was.map(|w| Arc::as_ptr(&w.shader_images) as usize)) {
                storage.extend(
                    stage
                        .shader_images
                        .iter()
                        .flatten()
                        .map(|i| i.resource.clone()),
                );
            }
        }
        exec.captures |= b.stream_output.is_some();
        // Consecutive blocks mostly differ in bindings only (a constant
        // buffer per draw): comparing with the predecessor is cheaper than
        // the cache's hash.
        let shape = match exec.states.last() {
            Some(prev) if same_shape_inputs(&prev.block, b) => {
                plans.count_shared();
                prev.shape().clone()
            }
            _ => plans.shape(b),
        };
        exec.states
            .push(DerivedState::with_shape(block.clone(), shape));
        prev = Some(b);
    }
    // One clipped-vertex layout per scene: draws of different blocks share
    // a job's vertex buffer (clip pads every vertex to it).
    let stride = exec.states.iter().map(|s| s.stride).max().unwrap_or(4);
    for s in &mut exec.states {
        s.stride = stride;
    }
    let fb = scene.framebuffer.as_deref().cloned().unwrap_or_default();
    exec.grid = TileGrid::new(fb.width, fb.height);
    exec.counted.clear();
    exec.counted.extend_from_slice(counted);
    exec.counted.resize(scene.commands.len(), false);
    exec.counters.clear();
    exec.counters
        .resize(scene.commands.len(), DrawCounters::default());
    exec.planner = Planner::default();
    exec.planned_all = scene.commands.is_empty();
    exec.binned_bytes = 0;
    exec.tile_seen.clear();
    exec.tile_seen.resize(exec.grid.tiles(), 0);
    dedup_refs(&mut vr);
    dedup_refs(&mut vsr);
    dedup_refs(&mut fsr);
    dedup_refs(&mut vss);
    dedup_refs(&mut fss);
    exec.vertex_resources = vr;
    exec.vs_resources = vsr;
    exec.fs_resources = fsr;
    exec.vs_storage = vss;
    exec.fs_storage = fss;
    let mut targets: Vec<ResourceRef> = fb
        .cbufs
        .iter()
        .flatten()
        .map(|s| s.resource.clone())
        .chain(fb.zsbuf.iter().map(|s| s.resource.clone()))
        .collect();
    dedup_refs(&mut targets);
    exec.targets = targets;
}

fn dedup_refs(v: &mut Vec<ResourceRef>) {
    v.sort_by_key(|r| Arc::as_ptr(r) as usize);
    v.dedup_by(|a, b| Arc::ptr_eq(a, b));
}

/// Forgets the scene's per-block state and releases resource references.
pub(crate) fn end_scene(exec: &mut SceneExecution) {
    exec.states.clear();
    exec.vertex_resources.clear();
    exec.vs_resources.clear();
    exec.fs_resources.clear();
    exec.vs_storage.clear();
    exec.fs_storage.clear();
    exec.targets.clear();
    exec.planner = Planner::default();
}

// ---------------------------------------------------------------------------
// Planning
// ---------------------------------------------------------------------------

/// Fills `job` from the planner's position; returns false when no command
/// is left.
fn plan_job(
    scene: &RecordedScene,
    states: &[DerivedState],
    locks: &LockSet<'_>,
    planner: &mut Planner,
    counters: &mut [DrawCounters],
    meter: &mut BudgetMeter,
    job: &mut FrontJob,
) -> bool {
    let mut prims_in_job = 0u32;
    while planner.command < scene.commands.len() {
        let ci = planner.command;
        match &scene.commands[ci] {
            Command::Clear { buffers, value } => {
                if !job.parts.is_empty() {
                    return true;
                }
                job.clear = Some((*buffers, *value));
                planner.command += 1;
                return true;
            }
            Command::Draw { state, info } => {
                let ds = &states[*state as usize];
                let topo = Topology::new(info.mode, ds.setup.flatshade_first);
                if planner.runs_for != Some(ci) {
                    plan_runs(info, ds, locks, planner);
                    planner.runs_for = Some(ci);
                    planner.instance = 0;
                    planner.run = 0;
                    planner.prim = 0;
                    let elems: u64 = planner.runs.iter().map(|r| r.1 as u64).sum();
                    let prims: u64 = planner
                        .runs
                        .iter()
                        .map(|r| topo.prims_in_run(r.1) as u64)
                        .sum();
                    let c = &mut counters[ci];
                    c.ia_vertices += elems * info.instance_count as u64;
                    c.ia_primitives += prims * info.instance_count as u64;
                    if prims == 0 {
                        // Nothing to assemble in any instance: do not walk
                        // 2^32 - 1 empty instances.
                        planner.instance = info.instance_count;
                    }
                }
                while planner.instance < info.instance_count {
                    while planner.run < planner.runs.len() {
                        let (rs, rl) = planner.runs[planner.run];
                        let total = topo.prims_in_run(rl);
                        if planner.prim < total {
                            let room = JOB_PRIMS - prims_in_job;
                            // A stippled line strip or loop is never split
                            // across jobs: its stipple counter runs through
                            // the whole run in one job's setup.
                            let whole = ds.setup.line_stipple.is_some()
                                && matches!(
                                    info.mode,
                                    PrimType::LineStrip
                                        | PrimType::LineLoop
                                        | PrimType::LineStripAdjacency
                                );
                            if whole && prims_in_job > 0 && total - planner.prim > room {
                                return true;
                            }
                            let take = if whole {
                                total - planner.prim
                            } else {
                                (total - planner.prim).min(room)
                            };
                            if !meter.charge(u64::from(take)) {
                                // Over budget: nothing more is planned, and
                                // nothing was allocated for this part.
                                planner.command = scene.commands.len();
                                return !job.parts.is_empty();
                            }
                            job.parts.push(JobPart {
                                command: ci as u32,
                                state: *state,
                                instance: planner.instance,
                                run_start: rs,
                                run_len: rl,
                                first_prim: planner.prim,
                                num_prims: take,
                            });
                            planner.prim += take;
                            prims_in_job += take;
                            if prims_in_job >= JOB_PRIMS {
                                return true;
                            }
                        }
                        planner.run += 1;
                        planner.prim = 0;
                    }
                    planner.instance += 1;
                    planner.run = 0;
                }
                planner.command += 1;
            }
        }
    }
    !job.parts.is_empty()
}

fn plan_runs(info: &DrawInfo, ds: &DerivedState, locks: &LockSet<'_>, planner: &mut Planner) {
    planner.runs.clear();
    if info.count == 0 || info.instance_count == 0 {
        return;
    }
    if info.indexed && info.primitive_restart {
        let ib = &ds.block.index_buffer;
        let bytes = ib.buffer.as_deref().map_or(&[][..], |r| locks.bytes(r));
        restart_runs(
            bytes,
            ib.offset,
            ib.index_size,
            info.start,
            info.count,
            info.restart_index,
            &mut planner.runs,
        );
    } else {
        planner.runs.push((0, info.count));
    }
}

// ---------------------------------------------------------------------------
// Front-end systems
// ---------------------------------------------------------------------------

/// Runs `f(job)` for every job of the wave on the pool.  Each system's
/// closure opens its own puffin scope (`fetch_job`, `shade_job`, ...): a
/// scope's name is fixed per call site, and the worker threads' rows of the
/// flamegraph then show which stage each job belongs to.  One scope per job
/// (a wave is `2 × threads` jobs, at least 4) costs one relaxed atomic load
/// each while profiling is off.
fn for_each_job(exec: &ExecutorRef, wave: &mut [FrontJob], f: &(dyn Fn(&mut FrontJob) + Sync)) {
    let cells: Vec<std::sync::Mutex<&mut FrontJob>> =
        wave.iter_mut().map(std::sync::Mutex::new).collect();
    exec.for_each(cells.len(), &|i| {
        let mut job = cells[i].lock().unwrap_or_else(|e| e.into_inner());
        f(&mut job);
    });
}

/// Fetch: plans the next wave of jobs, then assembles primitives and
/// fetches vertex attributes into SoA lanes, in parallel over jobs.
pub(crate) fn fetch_vertices(
    pool: Res<PipelineExecutor>,
    scene: Res<RecordedScene>,
    mut exec: ResMut<SceneExecution>,
    counters: Res<PipelineCounters>,
) {
    ferropipe_profiling::scope!("fetch_vertices");
    let _time = counters.0.time_stage(PipelineSet::Fetch.stage());
    let exec = &mut *exec;
    let resources = std::mem::take(&mut exec.vertex_resources);
    {
        let locks = LockSet::acquire(resources.iter().map(|r| (r, false)));
        // Plan the wave.
        let wave_jobs = (pool.0.threads() * 2).max(4);
        exec.meter.out_of_time();
        while exec.wave.len() < wave_jobs && !exec.planned_all && exec.meter.exceeded().is_none() {
            let mut job = exec.spare_jobs.pop().unwrap_or_default();
            job.reset();
            if plan_job(
                &scene,
                &exec.states,
                &locks,
                &mut exec.planner,
                &mut exec.counters,
                &mut exec.meter,
                &mut job,
            ) {
                exec.wave.push(job);
            } else {
                exec.spare_jobs.push(job);
            }
            if exec.planner.command >= scene.commands.len() {
                exec.planned_all = true;
            }
        }
        if exec.meter.exceeded().is_some() {
            // A lost flush: this wave does not run either.
            exec.planned_all = true;
            exec.spare_jobs.append(&mut exec.wave);
        }
        let states = &exec.states;
        let scene = &*scene;
        let locks = &locks;
        for_each_job(&pool.0, &mut exec.wave, &|job: &mut FrontJob| {
            ferropipe_profiling::scope!("fetch_job");
            let FrontJob {
                parts,
                segments,
                used,
                dedup,
                ..
            } = job;
            // The vertex-buffer views, rebuilt only when a part's block
            // binds another array (not per part: one draw per part is
            // many_draws' 10,000 collects).
            let mut buffers: Vec<BufferView<'_>> = Vec::new();
            let mut buffers_of: Option<*const ferropipe_components::batch::VertexBufferSlots> =
                None;
            for part in parts.iter() {
                let Command::Draw { info, .. } = &scene.commands[part.command as usize] else {
                    continue;
                };
                let ds = &states[part.state as usize];
                let topo = Topology::new(info.mode, ds.setup.flatshade_first);
                let ib = &ds.block.index_buffer;
                let index = if info.indexed {
                    Some(IndexSource {
                        bytes: ib.buffer.as_deref().map_or(&[][..], |r| locks.bytes(r)),
                        offset: ib.offset,
                        size: ib.index_size,
                    })
                } else {
                    None
                };
                let first_new = *used;
                assemble_part(*part, info, topo, index, dedup, segments, used);
                let vbs = &ds.block.vertex_buffers;
                if buffers_of != Some(Arc::as_ptr(vbs)) {
                    buffers_of = Some(Arc::as_ptr(vbs));
                    buffers.clear();
                    buffers.extend(vbs.iter().map(|vb| BufferView {
                        bytes: vb.buffer.as_deref().map_or(&[][..], |r| locks.bytes(r)),
                        stride: vb.stride,
                        offset: vb.buffer_offset,
                    }));
                }
                for seg in &mut segments[first_new..*used] {
                    fetch_segment(seg, info, &ds.fetch.elements, &ds.shade.vs_info, &buffers);
                }
            }
        });
    }
    exec.vertex_resources = resources;
}

/// Shade: runs the vertex shader over every segment of the wave.
pub(crate) fn shade_vertices(
    pool: Res<PipelineExecutor>,
    mut exec: ResMut<SceneExecution>,
    counters: Res<PipelineCounters>,
) {
    ferropipe_profiling::scope!("shade_vertices");
    let _time = counters.0.time_stage(PipelineSet::Shade.stage());
    let exec = &mut *exec;
    let resources = std::mem::take(&mut exec.vs_resources);
    let storage = std::mem::take(&mut exec.vs_storage);
    {
        let locks = LockSet::acquire(
            resources
                .iter()
                .map(|r| (r, false))
                .chain(storage.iter().map(|r| (r, true))),
        );
        let states = &exec.states;
        let locks = &locks;
        for_each_job(&pool.0, &mut exec.wave, &|job: &mut FrontJob| {
            ferropipe_profiling::scope!("shade_job");
            let mut prepared: Option<(u32, PreparedStage<'_>)> = None;
            let n = job.used;
            for si in 0..n {
                let state = job.segments[si].part.state;
                let ds = &states[state as usize];
                let now = &ds.block.vs_resources;
                // Blocks with the very same VS bindings share one
                // preparation; blocks that differ in constant buffers only
                // re-resolve those.
                let fresh = match &mut prepared {
                    Some((s, _)) if *s == state => false,
                    Some((s, p)) => {
                        let was = &states[*s as usize].block.vs_resources;
                        if was.same_as(now) {
                            false
                        } else if same_except_constants(was, now) {
                            p.rebind_constants(now, locks);
                            *s = state;
                            false
                        } else {
                            true
                        }
                    }
                    None => true,
                };
                if fresh {
                    prepared = Some((state, PreparedStage::new(now, locks)));
                }
                let res = prepared
                    .as_ref()
                    .map(|(_, p)| p.resources())
                    .unwrap_or_default();
                let seg = &mut job.segments[si];
                shade_batch(&mut seg.batch, &ds.shade, &ds.block.vs, &res);
                let cmd = seg.part.command;
                let count = seg.batch.count as u64;
                job.count(cmd, |c| c.vs_invocations += count);
            }
        });
    }
    exec.vs_resources = resources;
    exec.vs_storage = storage;
}

/// Clip: clips, culls trivially, applies the viewport, links attributes.
pub(crate) fn clip_primitives(
    pool: Res<PipelineExecutor>,
    mut exec: ResMut<SceneExecution>,
    counters: Res<PipelineCounters>,
) {
    ferropipe_profiling::scope!("clip_primitives");
    let _time = counters.0.time_stage(PipelineSet::Clip.stage());
    let exec = &mut *exec;
    let states = &exec.states;
    for_each_job(&pool.0, &mut exec.wave, &|job: &mut FrontJob| {
        ferropipe_profiling::scope!("clip_job");
        let FrontJob {
            segments,
            used,
            clipped,
            clip_scratch,
            ..
        } = job;
        let mut counts: Vec<(u32, ClipCounters)> = Vec::new();
        for seg in &segments[..*used] {
            let ds = &states[seg.part.state as usize];
            let mut c = ClipCounters::default();
            clip_segment(
                seg,
                ds,
                seg.part.command,
                seg.part.state,
                clipped,
                clip_scratch,
                &mut c,
            );
            counts.push((seg.part.command, c));
        }
        for (cmd, c) in counts {
            job.count(cmd, |d| {
                d.c_invocations += c.c_invocations;
                d.c_primitives += c.c_primitives;
            });
        }
    });
}

/// Setup: fixed-point edges and plane equations.
pub(crate) fn setup_primitives(
    pool: Res<PipelineExecutor>,
    mut exec: ResMut<SceneExecution>,
    counters: Res<PipelineCounters>,
) {
    ferropipe_profiling::scope!("setup_primitives");
    let _time = counters.0.time_stage(PipelineSet::Setup.stage());
    let exec = &mut *exec;
    let states = &exec.states;
    for_each_job(&pool.0, &mut exec.wave, &|job: &mut FrontJob| {
        ferropipe_profiling::scope!("setup_job");
        job.out.prims.clear();
        job.kept = setup_prims(&job.clipped, states, &mut job.out.prims);
    });
}

/// Bin: sorts each job's primitives into tiles, then hands the jobs to the
/// back end in submission order, adding up the wave's front-end counters
/// in job order.
pub(crate) fn bin_primitives(
    pool: Res<PipelineExecutor>,
    mut exec: ResMut<SceneExecution>,
    counters: Res<PipelineCounters>,
) {
    ferropipe_profiling::scope!("bin_primitives");
    let _time = counters.0.time_stage(PipelineSet::Bin.stage());
    let exec = &mut *exec;
    let states = &exec.states;
    let grid = exec.grid;
    let counted = &exec.counted;
    let opaque_clear = |buffers: ClearFlags| -> bool {
        // A clear replaces everything only if it writes every attachment.
        let fb = states
            .first()
            .map(|s| s.block.framebuffer.clone())
            .unwrap_or_default();
        let colors_ok =
            fb.cbufs.iter().enumerate().all(|(i, c)| {
                c.is_none() || buffers.bits() & (ClearFlags::COLOR0.bits() << i) != 0
            });
        let zs_ok = fb.zsbuf.as_ref().is_none_or(|z| {
            let f = DepthFormat::classify(z.desc.format);
            let need_d = f.is_some_and(|f| f.has_depth());
            let need_s = f.is_some_and(|f| f.has_stencil());
            (!need_d || buffers.contains(ClearFlags::DEPTH))
                && (!need_s || buffers.contains(ClearFlags::STENCIL))
        });
        colors_ok && zs_ok
    };
    for_each_job(&pool.0, &mut exec.wave, &|job: &mut FrontJob| {
        ferropipe_profiling::scope!("bin_job");
        if let Some((buffers, value)) = job.clear {
            job.out.prims.clear();
            bin_clear(
                &grid,
                buffers,
                value,
                opaque_clear(buffers),
                &mut job.out.bins,
            );
            return;
        }
        let FrontJob {
            out, bin_scratch, ..
        } = job;
        bin_prims(
            &out.prims,
            states,
            &grid,
            &|cmd| counted.get(cmd as usize).copied().unwrap_or(false),
            bin_scratch,
            &mut out.bins,
        );
        order_prims_by_tile(&mut out.prims, states, &mut out.bins, bin_scratch);
    });
    // Hand over in order.
    let mut wave = Counts::new();
    for mut job in exec.wave.drain(..) {
        for (cmd, c) in job.counters.drain(..) {
            wave.add(Counter::VerticesShaded, c.vs_invocations);
            wave.add(Counter::PrimitivesIn, c.c_invocations);
            wave.add(Counter::PrimitivesAfterClip, c.c_primitives);
            if let Some(d) = exec.counters.get_mut(cmd as usize) {
                d.accumulate(&c);
            }
        }
        wave.add(Counter::PrimitivesAfterCull, job.kept);
        wave.add(Counter::BinsEmitted, job.out.bins.entries.len() as u64);
        let mut binned = exec.spare_binned.pop().unwrap_or_default();
        std::mem::swap(&mut binned, &mut job.out);
        exec.binned_bytes += binned_size(&binned);
        exec.binned.push(binned);
        exec.spare_jobs.push(job);
    }
    counters.0.commit(&wave);
}

fn binned_size(b: &BinnedJob) -> usize {
    b.prims.prims.len() * std::mem::size_of::<SetupPrim>()
        + b.prims.planes.len() * std::mem::size_of::<Plane>()
        + b.bins.entries.len() * 8
        + b.bins.tile_start.len() * 4
}

// ---------------------------------------------------------------------------
// Back-end systems
// ---------------------------------------------------------------------------

/// Raster (with fragment and merge fused per batch, see raster.rs): renders
/// every tile of the scene in parallel.
pub(crate) fn rasterize_tiles(
    pool: Res<PipelineExecutor>,
    scene: Res<RecordedScene>,
    mut exec: ResMut<SceneExecution>,
    counters: Res<PipelineCounters>,
) {
    ferropipe_profiling::scope!("rasterize_tiles");
    let _time = counters.0.time_stage(PipelineSet::Tiles.stage());
    let exec = &mut *exec;
    if exec.binned.is_empty() {
        return;
    }
    let Some(fb) = scene.framebuffer.clone() else {
        return;
    };
    let targets_res = std::mem::take(&mut exec.targets);
    let fs_res = std::mem::take(&mut exec.fs_resources);
    let fs_storage = std::mem::take(&mut exec.fs_storage);
    {
        let locks = LockSet::acquire(
            targets_res
                .iter()
                .map(|r| (r, true))
                .chain(fs_res.iter().map(|r| (r, false)))
                .chain(fs_storage.iter().map(|r| (r, true))),
        );
        let mut targets = Targets::default();
        for cb in &fb.cbufs {
            targets.color.push(cb.as_ref().and_then(|s| {
                let (ptr, len) = locks.target(&s.resource)?;
                ColorTarget::new(TargetMemory::for_surface(s, ptr, len)?, s.desc.format)
            }));
        }
        targets.depth = fb.zsbuf.as_ref().and_then(|s| {
            let (ptr, len) = locks.target(&s.resource)?;
            Some(DepthTarget {
                mem: TargetMemory::for_surface(s, ptr, len)?,
                format: DepthFormat::classify(s.desc.format)?,
                pipe_format: s.desc.format,
            })
        });
        // One prepared stage per run of state blocks with the very same
        // fragment bindings (blocks that differ in vertex-stage state only,
        // e.g. a constant buffer per draw, share it).
        let mut prepared: Vec<PreparedStage<'_>> = Vec::new();
        let mut which = Vec::with_capacity(exec.states.len());
        for (i, ds) in exec.states.iter().enumerate() {
            let fs = &ds.block.fs_resources;
            if i == 0 || !fs.same_as(&exec.states[i - 1].block.fs_resources) {
                prepared.push(PreparedStage::new(fs, &locks));
            }
            which.push(prepared.len() as u32 - 1);
        }
        let fs_resources: Vec<_> = prepared.iter().map(PreparedStage::resources).collect();
        let ctx = TileContext {
            grid: exec.grid,
            jobs: &exec.binned,
            states: &exec.states,
            targets: &targets,
            fs_resources: &fs_resources,
            fs_resources_of: &which,
        };
        let n = exec.grid.tiles();
        exec.tile_counts.resize_with(n, Vec::new);
        exec.tile_totals.clear();
        exec.tile_totals.resize(n, TileTotals::default());
        type Slot<'s> = (&'s mut Vec<TileCount>, &'s mut TileTotals);
        let slots: Vec<std::sync::Mutex<Slot<'_>>> = exec
            .tile_counts
            .iter_mut()
            .zip(exec.tile_totals.iter_mut())
            .map(std::sync::Mutex::new)
            .collect();
        let pool_scratch = exec.scratch.clone();
        let meter = &exec.meter;
        pool.0.for_each(n, &|t| {
            ferropipe_profiling::scope!("rasterize_tile");
            if meter.out_of_time() {
                return; // a safe point: tiles own disjoint pixels
            }
            let mut scratch: TileScratch = pool_scratch.take();
            let mut slot = slots[t].lock().unwrap_or_else(|e| e.into_inner());
            let (stats, totals) = &mut *slot;
            stats.clear();
            **totals = rasterize_tile(&ctx, t, &mut scratch, stats);
            pool_scratch.give(scratch);
        });
        for (seen, t) in exec.tile_seen.iter_mut().zip(&exec.tile_totals) {
            *seen |= t.touched as u8 | (t.fully_covered as u8) << 1;
        }
    }
    exec.targets = targets_res;
    exec.fs_resources = fs_res;
    exec.fs_storage = fs_storage;
}

/// The tile pass's bookkeeping: attributes fragment-shader invocations
/// (`ps_invocations`) and passed samples (occlusion) to their commands,
/// adds up the fragments shaded and killed in tile order, and recycles the
/// bins for the rest of the scene.
pub(crate) fn reduce_tile_counts(
    mut exec: ResMut<SceneExecution>,
    counters: Res<PipelineCounters>,
) {
    ferropipe_profiling::scope!("reduce_tile_counts");
    let _time = counters.0.time_stage(PipelineSet::Tiles.stage());
    let exec = &mut *exec;
    for tile in &mut exec.tile_counts {
        for c in tile.iter() {
            if let Some(d) = exec.counters.get_mut(c.command as usize) {
                d.ps_invocations += c.ps_invocations;
                d.samples_passed += c.samples_passed;
            }
        }
        tile.clear();
    }
    let mut pass = Counts::new();
    for t in exec.tile_totals.drain(..) {
        pass.add(Counter::FragmentsShaded, t.frags.shaded);
        pass.add(Counter::FragmentsKilled, t.frags.killed);
    }
    counters.0.commit(&pass);
    let binned = std::mem::take(&mut exec.binned);
    exec.spare_binned.extend(binned);
    exec.binned_bytes = 0;
}

/// Runs a recorded scene: front-end waves until the bins are full or the
/// scene is exhausted, then the back end, until done.  `counted[i]` marks
/// commands whose samples an active query counts.  Counters end up in
/// `RecordedScene::counters` (per command, for queries) and in
/// [`PipelineCounters`] (per flush, for the driver queries and overlay).
///
/// With a [`WorkBudget`] in the world, the scene stops at the first safe
/// point past it (before a wave, a tile pass or a tile) and the error says
/// why; the caller treats the context as lost (budget.rs).
pub fn execute_scene(world: &mut World, counted: &[bool]) -> Result<(), BudgetExceeded> {
    ferropipe_profiling::scope!("execute_scene");
    if world.resource::<RecordedScene>().is_empty() {
        return Ok(());
    }
    let draws = {
        let scene = world.resource::<RecordedScene>();
        scene
            .commands
            .iter()
            .filter(|c| matches!(c, Command::Draw { .. }))
            .count() as u64
    };
    let work = world
        .get_resource::<WorkBudget>()
        .copied()
        .unwrap_or_default();
    world.resource_scope(|world, mut exec: Mut<SceneExecution>| {
        world.resource_scope(|world, mut plans: Mut<PlanCache>| {
            let scene = world.resource::<RecordedScene>();
            begin_scene(scene, &mut exec, &mut plans, counted);
        });
        exec.meter = BudgetMeter::start(work);
    });
    let budget = world
        .get_resource::<SceneBinBudget>()
        .map_or(SCENE_BIN_BUDGET, |b| b.0);
    let mut passes = 0u32;
    let mut lost: Option<BudgetExceeded>;
    loop {
        world.run_schedule(crate::FrontEnd);
        lost = world.resource::<SceneExecution>().meter.exceeded();
        if lost.is_some() {
            break;
        }
        match run_full_passes(world, budget) {
            Ok(n) => passes += n,
            Err(e) => {
                lost = Some(e);
                break;
            }
        }
        let (done, left) = {
            let e = world.resource::<SceneExecution>();
            (e.front_done(), !e.binned.is_empty())
        };
        if done {
            if left || passes == 0 {
                lost = run_back_end(world).err();
            }
            break;
        }
    }
    let mut scene_counts = Counts::new();
    scene_counts.add(Counter::Flushes, 1);
    scene_counts.add(Counter::Draws, draws);
    world.resource_scope(|world, mut exec: Mut<SceneExecution>| {
        for &seen in &exec.tile_seen {
            scene_counts.add(Counter::TilesTouched, (seen & 1) as u64);
            scene_counts.add(Counter::TilesFullyCovered, (seen >> 1) as u64);
        }
        let mut scene = world.resource_mut::<RecordedScene>();
        // Swapped, not taken: the scene's old (cleared) vector comes back
        // for the next flush, so its ~800 KB (many_draws) is not allocated
        // and faulted in again each flush.
        std::mem::swap(&mut scene.counters, &mut exec.counters);
        if lost.is_some() {
            let exec = &mut *exec;
            exec.spare_jobs.append(&mut exec.wave);
            exec.spare_binned.append(&mut exec.binned);
            exec.binned_bytes = 0;
        }
        end_scene(&mut exec);
    });
    world.resource::<PipelineCounters>().0.commit(&scene_counts);
    lost.map_or(Ok(()), Err)
}

/// Charges the binned entries about to run to the work budget (one unit
/// per bin entry) and runs the back end on them, unless that spends the
/// budget: the check comes before the pass, so a lost flush never starts
/// a pass it cannot finish.
fn run_back_end(world: &mut World) -> Result<(), BudgetExceeded> {
    {
        let mut e = world.resource_mut::<SceneExecution>();
        let e = &mut *e;
        let entries = e.binned.iter().map(|b| b.bins.entries.len() as u64);
        e.meter.charge(entries.sum());
        e.meter.out_of_time();
        if let Some(lost) = e.meter.exceeded() {
            return Err(lost);
        }
    }
    world.run_schedule(crate::BackEnd);
    world
        .resource::<SceneExecution>()
        .meter
        .exceeded()
        .map_or(Ok(()), Err)
}

/// While the binned jobs reach `budget`, runs the back end on the shortest
/// prefix of them that does and keeps the rest for later.  Cutting at a
/// job, not at the end of a wave (whose size depends on the thread count),
/// makes the tile passes, and so what they count, the same for any thread
/// count.  Returns how many passes ran.
fn run_full_passes(world: &mut World, budget: usize) -> Result<u32, BudgetExceeded> {
    let mut passes = 0;
    loop {
        let rest = {
            let mut e = world.resource_mut::<SceneExecution>();
            if e.binned.is_empty() || e.binned_bytes < budget {
                return Ok(passes);
            }
            let mut sum = 0;
            let mut cut = e.binned.len();
            for (k, b) in e.binned.iter().enumerate() {
                sum += binned_size(b);
                if sum >= budget {
                    cut = k + 1;
                    break;
                }
            }
            e.binned_bytes = sum;
            e.binned.split_off(cut)
        };
        let ran = run_back_end(world);
        passes += 1;
        let mut e = world.resource_mut::<SceneExecution>();
        if let Err(lost) = ran {
            // The unrun prefix and the rest go back together, to be
            // recycled by the caller.
            e.binned.extend(rest);
            return Err(lost);
        }
        e.binned_bytes = rest.iter().map(binned_size).sum();
        e.binned = rest;
    }
}

#[allow(dead_code)]
fn _assert_send() {
    fn is_send<T: Send>() {}
    is_send::<FrontJob>();
    is_send::<JobBins>();
    is_send::<SetupPrims>();
}
