//! Pipeline counters: what the demo overlay shows and what Gallium driver
//! queries (`get_driver_query_info`, screen.rst) expose.
//!
//! # Model
//! Every counter is a monotonically increasing `u64` (a count or a number of
//! nanoseconds).  A reader takes two [`CounterSet::snapshot`]s and subtracts
//! them ([`Counts::since`]): a frame's numbers for the overlay, a driver
//! query's result between `begin_query` and `end_query`.  This is how
//! llvmpipe's and radeonsi's driver queries work too (cumulative counters,
//! difference at `end_query`), and it needs no reset, so any number of
//! readers can watch the same set.
//!
//! # Cost
//! Writers never touch an atomic per pixel, per fragment group or per
//! primitive.  The pipeline counts into plain integers per job or tile and
//! commits the sums once per system run with [`CounterSet::commit`]: one
//! relaxed `fetch_add` per non-zero counter.  Each counter sits on its own
//! cache line so threads committing different counters at once do not
//! false-share.  `docs/profiling.md` lists who counts what.
//!
//! # Sets
//! A [`CounterSet`] belongs to whatever wants separate numbers (a context,
//! so its driver queries see only its own work).  Every commit also lands in
//! the process-wide [`global`] set, which the demo overlay reads without
//! needing a handle to the context.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// What a counter measures, for display and for `pipe_driver_query_info.type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CounterUnit {
    /// A plain count (`PIPE_DRIVER_QUERY_TYPE_UINT64`).
    Count,
    /// Nanoseconds of wall-clock time.  Gallium has no nanosecond type: the
    /// engine reports these as `PIPE_DRIVER_QUERY_TYPE_MICROSECONDS`,
    /// dividing by 1000.
    Nanoseconds,
}

/// How a counter's query result combines over time
/// (`pipe_driver_query_info.result_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CounterResultType {
    /// `PIPE_DRIVER_QUERY_RESULT_TYPE_CUMULATIVE`: the HUD shows the sum
    /// over its sampling period (every counter here is of this kind).
    Cumulative,
    /// `PIPE_DRIVER_QUERY_RESULT_TYPE_AVERAGE`.
    Average,
}

/// A group of counters (`pipe_driver_query_group_info`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CounterGroup {
    /// Work counts: primitives, fragments, tiles.
    Pipeline = 0,
    /// Wall-clock time per pipeline stage.
    StageTime = 1,
}

impl CounterGroup {
    /// Every group, in `get_driver_query_group_info` index order.
    pub const ALL: [CounterGroup; 2] = [CounterGroup::Pipeline, CounterGroup::StageTime];

    /// `pipe_driver_query_group_info.name`.
    pub fn name(self) -> &'static str {
        match self {
            CounterGroup::Pipeline => "ferropipe-pipeline",
            CounterGroup::StageTime => "ferropipe-stage-time",
        }
    }

    /// The counters of this group, in counter order.
    pub fn counters(self) -> impl Iterator<Item = Counter> {
        Counter::ALL
            .iter()
            .copied()
            .filter(move |c| c.group() == self)
    }
}

/// Description of one counter (`pipe_driver_query_info` minus the query
/// type number, which the engine assigns: `PIPE_QUERY_DRIVER_SPECIFIC +
/// counter index`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CounterDesc {
    /// The counter described.
    pub counter: Counter,
    /// Stable, HUD-friendly name (`GALLIUM_HUD=fragments-shaded`).
    pub name: &'static str,
    /// One line for tooltips and docs.
    pub description: &'static str,
    /// What one unit of its value is (a count or nanoseconds).
    pub unit: CounterUnit,
    /// How a query reads it (every ferropipe counter is cumulative).
    pub result_type: CounterResultType,
    /// The driver query group it is listed in.
    pub group: CounterGroup,
}

macro_rules! counters {
    ($($(#[doc = $doc:literal])* $variant:ident = ($name:literal, $unit:ident, $group:ident, $desc:literal),)*) => {
        /// Every counter ferropipe keeps.  The discriminant is the index into
        /// [`Counts`] and into `get_driver_query_info`'s list.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(usize)]
        pub enum Counter {
            $($(#[doc = $doc])* $variant,)*
        }

        impl Counter {
            /// Every counter, in index order.
            pub const ALL: &'static [Counter] = &[$(Counter::$variant),*];
            /// Number of counters.
            pub const COUNT: usize = Counter::ALL.len();

            /// The counter's description.
            pub const fn desc(self) -> CounterDesc {
                match self {
                    $(Counter::$variant => CounterDesc {
                        counter: Counter::$variant,
                        name: $name,
                        description: $desc,
                        unit: CounterUnit::$unit,
                        result_type: CounterResultType::Cumulative,
                        group: CounterGroup::$group,
                    },)*
                }
            }
        }
    };
}

counters! {
    /// Pipeline schedule runs (flushes that had recorded work).
    Flushes = ("flushes", Count, Pipeline, "pipeline schedule runs (flushes with recorded work)"),
    /// Draw commands executed (after render-condition culling).
    Draws = ("draws", Count, Pipeline, "draw_vbo calls executed"),
    /// Vertices run through the vertex shader (after per-segment index
    /// dedup): `PIPE_QUERY_PIPELINE_STATISTICS`'s `vs_invocations`.
    VerticesShaded = ("vertices-shaded", Count, Pipeline, "vertex shader invocations"),
    /// Primitives assembled and entering the clipper, before clipping and
    /// culling (`c_invocations`).
    PrimitivesIn = ("primitives-in", Count, Pipeline, "primitives entering the clipper"),
    /// Primitives leaving the clipper (`c_primitives`): those entirely
    /// outside the clip volume are gone, a clipped polygon counts once per
    /// triangle of its fan.
    PrimitivesAfterClip = ("primitives-after-clip", Count, Pipeline, "primitives leaving the clipper"),
    /// Clipped primitives that setup kept: not culled by facing, not of
    /// zero area, not discarded (`rasterizer_discard`), not outside the
    /// scissored viewport.
    PrimitivesAfterCull = ("primitives-after-cull", Count, Pipeline, "primitives set up after culling"),
    /// Bin entries emitted: one per (primitive or clear, 64x64 tile) pair.
    BinsEmitted = ("bins-emitted", Count, Pipeline, "tile bin entries emitted"),
    /// 64x64 tiles whose bins held at least one primitive in a flush.
    TilesTouched = ("tiles-touched", Count, Pipeline, "64x64 tiles with primitives"),
    /// Tiles that at least one primitive covers entirely (a whole-tile bin
    /// entry: no edge test in that tile).
    TilesFullyCovered = ("tiles-fully-covered", Count, Pipeline, "64x64 tiles a primitive covers entirely"),
    /// Fragments run through the fragment shader (live lanes; helper lanes
    /// are not counted; with sample shading once per sample).
    FragmentsShaded = ("fragments-shaded", Count, Pipeline, "fragments shaded (live lanes)"),
    /// Shaded fragments the fragment shader killed (`discard`).
    FragmentsKilled = ("fragments-killed", Count, Pipeline, "fragments killed by the fragment shader"),
    /// Wall time of the `Fetch` set's system.
    FetchNs = ("fetch-time", Nanoseconds, StageTime, "vertex fetch"),
    /// Wall time of the `Shade` set's system.
    ShadeNs = ("shade-time", Nanoseconds, StageTime, "vertex shading"),
    /// Wall time of the `StreamOut` set's system.
    StreamOutNs = ("stream-out-time", Nanoseconds, StageTime, "stream output"),
    /// Wall time of the `Clip` set's system.
    ClipNs = ("clip-time", Nanoseconds, StageTime, "clipping, viewport, linkage"),
    /// Wall time of the `Setup` set's system.
    SetupNs = ("setup-time", Nanoseconds, StageTime, "primitive setup and culling"),
    /// Wall time of the `Bin` set's system.
    BinNs = ("bin-time", Nanoseconds, StageTime, "binning into tiles"),
    /// Wall time of the `Tiles` set's systems: the tile pass, which runs
    /// raster, fragment shading and output merge fused per batch of
    /// pixels, and its per-command counts.
    TilesNs = ("tiles-time", Nanoseconds, StageTime, "tile pass: raster, fragment shading and merge, fused"),
}

impl Counter {
    /// The counter's index (`Counter::ALL[i] == self`).
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The counter's stable name.
    pub const fn name(self) -> &'static str {
        self.desc().name
    }

    /// The counter's group.
    pub const fn group(self) -> CounterGroup {
        self.desc().group
    }

    /// The counter's unit.
    pub const fn unit(self) -> CounterUnit {
        self.desc().unit
    }

    /// Looks a counter up by its stable name.
    pub fn from_name(name: &str) -> Option<Counter> {
        Counter::ALL.iter().copied().find(|c| c.name() == name)
    }
}

/// The pipeline stages that have a time counter, in pipeline order.
///
/// One per `ferropipe_systems::PipelineSet` variant.  This crate sits below
/// the systems crate (the systems commit counters), so it cannot name
/// `PipelineSet` itself; instead `PipelineSet::stage` maps every set here
/// with an exhaustive match, and a systems test checks that the two lists
/// agree in order and length.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stage {
    /// Vertex fetch (`PipelineSet::Fetch`).
    Fetch,
    /// Vertex shading (`PipelineSet::Shade`).
    Shade,
    /// Stream output (`PipelineSet::StreamOut`).
    StreamOut,
    /// Clipping, viewport and linkage (`PipelineSet::Clip`).
    Clip,
    /// Primitive setup and culling (`PipelineSet::Setup`).
    Setup,
    /// Binning into 64x64 tiles (`PipelineSet::Bin`).
    Bin,
    /// The fused tile pass: raster, fragment shading and merge (`PipelineSet::Tiles`).
    Tiles,
}

impl Stage {
    /// Every stage, in pipeline order.
    pub const ALL: [Stage; 7] = [
        Stage::Fetch,
        Stage::Shade,
        Stage::StreamOut,
        Stage::Clip,
        Stage::Setup,
        Stage::Bin,
        Stage::Tiles,
    ];

    /// The stage's time counter.
    pub const fn time_counter(self) -> Counter {
        match self {
            Stage::Fetch => Counter::FetchNs,
            Stage::Shade => Counter::ShadeNs,
            Stage::StreamOut => Counter::StreamOutNs,
            Stage::Clip => Counter::ClipNs,
            Stage::Setup => Counter::SetupNs,
            Stage::Bin => Counter::BinNs,
            Stage::Tiles => Counter::TilesNs,
        }
    }

    /// The stage's short name.
    pub const fn name(self) -> &'static str {
        match self {
            Stage::Fetch => "fetch",
            Stage::Shade => "shade",
            Stage::StreamOut => "stream-out",
            Stage::Clip => "clip",
            Stage::Setup => "setup",
            Stage::Bin => "bin",
            Stage::Tiles => "tiles",
        }
    }
}

/// Counter values, not shared: what a job accumulates before committing,
/// and what a snapshot or a difference of snapshots holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counts([u64; Counter::COUNT]);

impl Default for Counts {
    fn default() -> Self {
        Counts([0; Counter::COUNT])
    }
}

impl Counts {
    /// All zero.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `n` to `counter` (a plain add: this is the per-job accumulator).
    #[inline]
    pub fn add(&mut self, counter: Counter, n: u64) {
        self.0[counter.index()] = self.0[counter.index()].wrapping_add(n);
    }

    /// The value of `counter`.
    #[inline]
    pub fn get(&self, counter: Counter) -> u64 {
        self.0[counter.index()]
    }

    /// Adds every counter of `other` (combining per-job counts).
    pub fn merge(&mut self, other: &Counts) {
        for (a, b) in self.0.iter_mut().zip(other.0.iter()) {
            *a = a.wrapping_add(*b);
        }
    }

    /// What happened between snapshot `earlier` and this snapshot.
    pub fn since(&self, earlier: &Counts) -> Counts {
        let mut d = Counts::default();
        for i in 0..Counter::COUNT {
            d.0[i] = self.0[i].wrapping_sub(earlier.0[i]);
        }
        d
    }

    /// Whether every counter is zero.
    pub fn is_zero(&self) -> bool {
        self.0.iter().all(|&v| v == 0)
    }

    /// `(counter, value)` for every counter, in index order.
    pub fn iter(&self) -> impl Iterator<Item = (Counter, u64)> + '_ {
        Counter::ALL.iter().map(move |&c| (c, self.get(c)))
    }
}

/// One counter on its own cache line.
#[derive(Default)]
#[repr(align(64))]
struct PaddedCounter(AtomicU64);

/// A set of shared, monotonically increasing counters (see module docs).
pub struct CounterSet {
    values: [PaddedCounter; Counter::COUNT],
    /// Whether commits also go to [`global`] (false for the global set).
    forward_to_global: bool,
}

impl Default for CounterSet {
    fn default() -> Self {
        Self::new()
    }
}

static GLOBAL: CounterSet = CounterSet {
    values: [const { PaddedCounter(AtomicU64::new(0)) }; Counter::COUNT],
    forward_to_global: false,
};

/// The process-wide set: the sum of every [`CounterSet`]'s commits.
pub fn global() -> &'static CounterSet {
    &GLOBAL
}

impl CounterSet {
    /// A set of zeroed counters whose commits also reach [`global`].
    pub fn new() -> Self {
        CounterSet {
            values: std::array::from_fn(|_| PaddedCounter::default()),
            forward_to_global: true,
        }
    }

    /// Adds the non-zero values of a job's `counts`: one relaxed atomic add
    /// per non-zero counter (and as many on the global set).
    pub fn commit(&self, counts: &Counts) {
        for (i, &v) in counts.0.iter().enumerate() {
            if v != 0 {
                self.values[i].0.fetch_add(v, Ordering::Relaxed);
                if self.forward_to_global {
                    GLOBAL.values[i].0.fetch_add(v, Ordering::Relaxed);
                }
            }
        }
    }

    /// Adds `n` to one counter.  For once-per-system events (a flush, a
    /// stage's time); inside jobs accumulate a [`Counts`] and commit it.
    pub fn add(&self, counter: Counter, n: u64) {
        if n != 0 {
            self.values[counter.index()]
                .0
                .fetch_add(n, Ordering::Relaxed);
            if self.forward_to_global {
                GLOBAL.values[counter.index()]
                    .0
                    .fetch_add(n, Ordering::Relaxed);
            }
        }
    }

    /// The current value of one counter.
    pub fn get(&self, counter: Counter) -> u64 {
        self.values[counter.index()].0.load(Ordering::Relaxed)
    }

    /// The current values of every counter.
    ///
    /// Relaxed loads: taken after the work being measured has finished (the
    /// pool's join is the synchronisation), the snapshot is exact; taken
    /// while workers run, each counter is some recent value.
    pub fn snapshot(&self) -> Counts {
        let mut c = Counts::default();
        for (dst, src) in c.0.iter_mut().zip(self.values.iter()) {
            *dst = src.0.load(Ordering::Relaxed);
        }
        c
    }

    /// Starts timing `stage`: the returned guard adds the elapsed
    /// nanoseconds to the stage's time counter when dropped.
    ///
    /// Open it once around a stage system's body, not per job: the stages
    /// run one after another (each system joins its workers before the
    /// next starts), so the wall times of the system runs partition the
    /// time a flush spends in the pipeline and add up to it.  A front-end
    /// stage runs once per wave and a back-end stage once per tile pass;
    /// the runs add up.  Two clock reads and two relaxed atomic adds per
    /// system run.  (The systems open their own puffin scopes.)
    pub fn time_stage(&self, stage: Stage) -> StageTimer<'_> {
        StageTimer {
            set: self,
            stage,
            start: Instant::now(),
        }
    }
}

/// See [`CounterSet::time_stage`].
pub struct StageTimer<'a> {
    set: &'a CounterSet,
    stage: Stage,
    start: Instant,
}

impl Drop for StageTimer<'_> {
    fn drop(&mut self) {
        let ns = self.start.elapsed().as_nanos().min(u64::MAX as u128) as u64;
        self.set.add(self.stage.time_counter(), ns);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_indices_match() {
        for (i, c) in Counter::ALL.iter().enumerate() {
            assert_eq!(c.index(), i);
            assert_eq!(Counter::from_name(c.name()), Some(*c));
        }
        let mut names: Vec<_> = Counter::ALL.iter().map(|c| c.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), Counter::COUNT);
    }

    #[test]
    fn every_stage_has_a_time_counter_in_the_time_group() {
        for s in Stage::ALL {
            let c = s.time_counter();
            assert_eq!(c.group(), CounterGroup::StageTime);
            assert_eq!(c.unit(), CounterUnit::Nanoseconds);
        }
        let n: usize = CounterGroup::ALL.iter().map(|g| g.counters().count()).sum();
        assert_eq!(n, Counter::COUNT);
    }

    #[test]
    fn commits_are_visible_in_snapshots_and_global() {
        let set = CounterSet::new();
        let g0 = global().snapshot();
        let s0 = set.snapshot();
        let mut job = Counts::new();
        job.add(Counter::FragmentsShaded, 40);
        job.add(Counter::FragmentsShaded, 2);
        job.add(Counter::TilesTouched, 1);
        set.commit(&job);
        set.add(Counter::Flushes, 1);
        let d = set.snapshot().since(&s0);
        assert_eq!(d.get(Counter::FragmentsShaded), 42);
        assert_eq!(d.get(Counter::TilesTouched), 1);
        assert_eq!(d.get(Counter::Flushes), 1);
        assert_eq!(d.get(Counter::Draws), 0);
        // Other tests may commit concurrently: the global set grew by at
        // least this set's commits.
        let g = global().snapshot().since(&g0);
        assert!(g.get(Counter::FragmentsShaded) >= 42);
    }

    #[test]
    fn commits_from_many_threads_add_up() {
        let set = CounterSet::new();
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..1000 {
                        let mut c = Counts::new();
                        c.add(Counter::BinsEmitted, 3);
                        set.commit(&c);
                    }
                });
            }
        });
        assert_eq!(set.get(Counter::BinsEmitted), 12_000);
    }

    #[test]
    fn stage_timer_adds_elapsed_time() {
        let set = CounterSet::new();
        {
            let _t = set.time_stage(Stage::Tiles);
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        assert!(set.get(Counter::TilesNs) >= 2_000_000);
        assert_eq!(set.get(Counter::BinNs), 0);
    }
}
