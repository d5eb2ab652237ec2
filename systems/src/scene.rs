//! Equivalent of llvmpipe's `lp_setup.c` scene management and `lp_scene.c`:
//! executing a recorded scene.  The front end runs in *waves* of jobs (each
//! job a run of primitives from one or more draws), the back end runs once
//! the bins hold the whole scene or reach `SCENE_BIN_BUDGET` (96 MiB), and then the
//! front end carries on (llvmpipe's "flush and restart" when scene memory
//! runs out).
//!
//! This file holds the planner and the loop: `begin_scene` (derived
//! state per block from the plan cache, the resources to lock), the wave
//! planner (`plan_wave`, the head of the `Fetch` set), and
//! [`execute_scene`], which runs the `FrontEnd` schedule per wave and the
//! `BackEnd` schedule per tile pass.  Each stage's system lives in the
//! stage's own file, beside its plan and kernels; what they share (the
//! [`SceneExecution`] resource, the wave's jobs, the pool) is job.rs.

use std::sync::Arc;

use bevy_ecs::prelude::*;
use ferropipe_components::batch::{
    Command, DrawCounters, RecordedScene, StageResources, StateBlock,
};
use ferropipe_components::draw::DrawInfo;
use ferropipe_components::enums::PrimType;
use ferropipe_components::resource::ResourceRef;
use ferropipe_profiling::{Counter, Counts};

use crate::budget::{BudgetExceeded, BudgetMeter, WorkBudget};
use crate::derived::{DerivedState, same_shape_inputs};
use crate::fetch::{JobPart, Topology, restart_runs};
use crate::job::{FrontJob, PipelineCounters, PipelineExecutor, SceneExecution, binned_size};
use crate::lanes::TileGrid;
use crate::locks::LockSet;
use crate::plans::PlanCache;
use crate::sets::PipelineSet;

/// Primitives per front-end job: enough to amortise per-job costs (a
/// job's bins are scanned by every tile), few enough that a wave of jobs
/// keeps every worker busy.
pub const JOB_PRIMS: u32 = 2048;

/// Jobs per worker in a front-end wave, and the most jobs a wave holds.
///
/// Each front-end set runs its system over the whole wave and the next set
/// starts when the slowest job is done: a wave is five barriers, and
/// whatever one thread's jobs take beyond the other's is idle time.  Two
/// jobs a worker (before 2026-11-28, under a rayon `scope` per set) made
/// tiny_tris_1m ~120 waves a frame and many_draws ~200 context switches a
/// frame; eight a worker then measured tiny_tris_1m 246 → 218 ms at two
/// threads.  Since the executor's caller takes part (`pool.rs`) a barrier
/// costs little, and the wave's memory decides: every job in flight keeps
/// its scratch and its binned records (~1 MiB at 2048 primitives), which
/// the next set and the tile pass read back.  Four a worker (2026-12-07,
/// Zen 5, paired runs of one binary, `replay --time`): at two threads
/// tiny_tris_1m **0.93x** (100.5 / 103.6 / 105.6 / 103.0 → 91.2 / 94.8 /
/// 97.2 / 99.0 ms) and small_tris_100k 0.93x, textured_mesh, many_draws,
/// blend_overdraw level; at one thread many_draws 0.91x, tiny_tris_1m
/// and small_tris_100k 0.97-0.98x, textured_mesh level.  Sixteen a worker
/// was 1.06x slower on tiny_tris_1m at two threads, two a worker the same
/// as four.
pub(crate) const WAVE_JOBS_PER_THREAD: usize = 4;
/// The most draw jobs a wave holds ([`WAVE_JOBS_PER_THREAD`]: the memory
/// cap); clear jobs, which hold no front-end scratch, ride along, up to
/// twice this many jobs in all.
pub(crate) const MAX_WAVE_JOBS: usize = 64;

/// Binned data (set-up primitives, planes, bin entries) after which the
/// back end runs mid-scene and the bins start over: bounds scene memory
/// whatever the number of draws, like llvmpipe's `LP_SCENE_MAX_SIZE`.
pub(crate) const SCENE_BIN_BUDGET: usize = 96 << 20;

/// Overrides [`SCENE_BIN_BUDGET`] for one context (insert it into the
/// world): hosts short of memory lower it; the tests set it tiny to force
/// a tile pass after every wave and check the image does not change.
#[derive(Resource, Clone, Copy, Debug)]
pub(crate) struct SceneBinBudget(pub usize);

/// Where planning stands in the command stream: the planner's own state,
/// a resource so that [`plan_wave`] keeps it from wave to wave.
#[derive(Resource, Default)]
pub(crate) struct Planner {
    command: usize,
    instance: u32,
    run: usize,
    prim: u32,
    /// Restart runs of the current command (`(start, len)`).
    runs: Vec<(u32, u32)>,
    runs_for: Option<usize>,
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

/// The head of the `Fetch` set: plans the next wave of jobs, at most
/// [`WAVE_JOBS_PER_THREAD`] × threads (4 to [`MAX_WAVE_JOBS`]) of up to
/// [`JOB_PRIMS`] primitives each, plus the clear jobs among them, from
/// where the previous wave stopped
/// (draw's `draw_pt_vsplit.c` splits a draw the same way; llvmpipe's
/// scene is one job).  Fetch then runs the wave.
pub(crate) fn plan_wave(
    pool: Res<PipelineExecutor>,
    scene: Res<RecordedScene>,
    mut exec: ResMut<SceneExecution>,
    mut planner: ResMut<Planner>,
    counters: Res<PipelineCounters>,
) {
    ferropipe_profiling::scope!("plan_wave");
    let _time = counters.0.time_stage(PipelineSet::Fetch.stage());
    let exec = &mut *exec;
    let planner = &mut *planner;
    let resources = std::mem::take(&mut exec.vertex_resources);
    {
        // Primitive restart reads the index buffers.
        let locks = LockSet::acquire(resources.iter().map(|r| (r, false)));
        let wave_jobs = (pool.0.threads() * WAVE_JOBS_PER_THREAD).clamp(4, MAX_WAVE_JOBS);
        // Clear jobs do not count against the wave: they cost the front
        // end nothing, and counted, a frame's leading clear pushed the
        // last of its draw's jobs into a wave of its own, run on one
        // thread while the others wait (textured_mesh at two threads: 64
        // draw jobs in waves of 16, then a 65th wave of one, ~0.25 ms of
        // a 19 ms frame).  The memory cap still bounds the whole wave.
        let mut drawing = exec.wave.iter().filter(|j| j.clear.is_none()).count();
        exec.meter.out_of_time();
        while drawing < wave_jobs
            && exec.wave.len() < 2 * MAX_WAVE_JOBS
            && !exec.planned_all
            && exec.meter.exceeded().is_none()
        {
            let mut job = exec.spare_jobs.pop().unwrap_or_default();
            job.reset();
            if plan_job(
                &scene,
                &exec.states,
                &locks,
                planner,
                &mut exec.counters,
                &mut exec.meter,
                &mut job,
            ) {
                drawing += usize::from(job.clear.is_none());
                exec.wave.push(job);
            } else {
                exec.spare_jobs.push(job);
            }
            if planner.command >= scene.commands.len() {
                exec.planned_all = true;
            }
        }
        if exec.meter.exceeded().is_some() {
            // A lost flush: this wave does not run either.
            exec.planned_all = true;
            exec.spare_jobs.append(&mut exec.wave);
        }
    }
    exec.vertex_resources = resources;
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
    *world.resource_mut::<Planner>() = Planner::default();
    let budget = world
        .get_resource::<SceneBinBudget>()
        .map_or(SCENE_BIN_BUDGET, |b| b.0);
    let mut passes = 0u32;
    let mut lost: Option<BudgetExceeded>;
    loop {
        world.run_schedule(crate::sets::FrontEnd);
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
    *world.resource_mut::<Planner>() = Planner::default();
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
    world.run_schedule(crate::sets::BackEnd);
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
