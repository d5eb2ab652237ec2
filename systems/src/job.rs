//! The work the stage systems share, as llvmpipe's `lp_scene` is shared by
//! `lp_setup.c` (which fills its bins) and `lp_rast.c` (which empties
//! them): the scene being executed ([`SceneExecution`]), the front end's
//! wave of jobs ([`FrontJob`]), and the pool and counters every system
//! takes.
//!
//! It sits below every stage file and above the plans: a stage's system
//! (in the stage's own file) reads the jobs and the derived state from
//! here and writes its output into the job, while its scratch memory is
//! the system's own (`Local`).  So no stage type appears here, and no
//! stage file is imported by a file it imports.

use std::sync::Arc;

use bevy_ecs::prelude::*;
use ferropipe_components::batch::{
    BinnedJob, ClearValue, ClippedPrims, DrawCounters, JobBins, JobPart, Plane, Segment, SetupPrim,
    SetupPrims,
};
use ferropipe_components::enums::ClearFlags;
use ferropipe_components::resource::ResourceRef;
use ferropipe_profiling::CounterSet;

use crate::budget::BudgetMeter;
use crate::derived::DerivedState;
use crate::lanes::TileGrid;
use crate::pool::ExecutorRef;

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
}

impl FrontJob {
    /// Empties the job for the planner, keeping its allocations.
    pub(crate) fn reset(&mut self) {
        self.parts.clear();
        self.clear = None;
        self.used = 0;
        self.clipped.verts.clear();
        self.clipped.prims.clear();
        self.counters.clear();
        self.kept = 0;
    }

    /// Adds to the counters of `command` (consecutive parts mostly belong
    /// to one command, so only the last entry is looked at).
    pub(crate) fn count(&mut self, command: u32, f: impl FnOnce(&mut DrawCounters)) {
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
    /// Bytes held by `binned` (a tile pass runs when it reaches
    /// `scene::SCENE_BIN_BUDGET`).
    pub binned_bytes: usize,
    /// All commands planned.
    pub planned_all: bool,
    /// Per tile over the whole scene (all passes): bit 0 touched, bit 1
    /// fully covered (see `raster::TileTotals`).
    pub(crate) tile_seen: Vec<u8>,
    /// Per-command counters of the scene.
    pub counters: Vec<DrawCounters>,
    /// The flush's `WorkBudget` as it is spent (budget.rs).
    pub meter: BudgetMeter,
    /// Spare jobs and binned buffers, reused across waves and scenes.
    pub(crate) spare_jobs: Vec<FrontJob>,
    pub(crate) spare_binned: Vec<BinnedJob>,
    /// Resources the front end reads (vertex and index buffers; VS).
    pub(crate) vertex_resources: Vec<ResourceRef>,
    pub(crate) vs_resources: Vec<ResourceRef>,
    /// VS shader buffers and images (locked for writing).
    pub(crate) vs_storage: Vec<ResourceRef>,
    /// Resources the back end writes (targets) and reads (FS).
    pub(crate) targets: Vec<ResourceRef>,
    pub(crate) fs_resources: Vec<ResourceRef>,
    /// FS shader buffers and images (locked for writing).
    pub(crate) fs_storage: Vec<ResourceRef>,
}

impl SceneExecution {
    /// Whether the front end has nothing left to do.
    pub(crate) fn front_done(&self) -> bool {
        self.planned_all && self.wave.is_empty()
    }
}

/// Runs `f(job)` for every job of the wave on the pool.  Each system's
/// closure opens its own puffin scope (`fetch_job`, `shade_job`, ...): a
/// scope's name is fixed per call site, and the worker threads' rows of the
/// flamegraph then show which stage each job belongs to.  One scope per job
/// (a wave is 8 jobs a thread, 4 to 64) costs one relaxed atomic load
/// each while profiling is off.
pub(crate) fn for_each_job(
    exec: &ExecutorRef,
    wave: &mut [FrontJob],
    f: &(dyn Fn(&mut FrontJob) + Sync),
) {
    let cells: Vec<std::sync::Mutex<&mut FrontJob>> =
        wave.iter_mut().map(std::sync::Mutex::new).collect();
    exec.for_each(cells.len(), &|i| {
        let mut job = cells[i].lock().unwrap_or_else(|e| e.into_inner());
        f(&mut job);
    });
}

/// [`for_each_job`] with a stage's own scratch per job: `scratch` (the
/// system's `Local`) grows to the wave's length and job `i` gets entry `i`.
/// Scratch holds no results, so which entry a job gets does not change
/// the image.
pub(crate) fn for_each_job_with<S: Default + Send>(
    exec: &ExecutorRef,
    wave: &mut [FrontJob],
    scratch: &mut Vec<S>,
    f: &(dyn Fn(&mut FrontJob, &mut S) + Sync),
) {
    if scratch.len() < wave.len() {
        scratch.resize_with(wave.len(), S::default);
    }
    let cells: Vec<std::sync::Mutex<(&mut FrontJob, &mut S)>> = wave
        .iter_mut()
        .zip(scratch.iter_mut())
        .map(std::sync::Mutex::new)
        .collect();
    exec.for_each(cells.len(), &|i| {
        let mut cell = cells[i].lock().unwrap_or_else(|e| e.into_inner());
        let (job, s) = &mut *cell;
        f(job, s);
    });
}

/// Bytes a binned job holds (what `SceneExecution::binned_bytes` adds up).
pub(crate) fn binned_size(b: &BinnedJob) -> usize {
    b.prims.prims.len() * std::mem::size_of::<SetupPrim>()
        + b.prims.planes.len() * std::mem::size_of::<Plane>()
        + b.bins.entries.len() * 8
        + b.bins.tile_start.len() * 4
}

#[allow(dead_code)]
fn _assert_send() {
    fn is_send<T: Send>() {}
    is_send::<FrontJob>();
    is_send::<JobBins>();
    is_send::<SetupPrims>();
}
