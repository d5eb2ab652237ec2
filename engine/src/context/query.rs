//! Queries and conditional rendering (context.rst "Queries",
//! "Conditional Rendering").
//!
//! # How counting works
//! The pipeline counts per recorded *command* (`DrawCounters` in the
//! recorded scene: assembled vertices and primitives, VS invocations,
//! clipper input and output, FS invocations, passed samples).  A query
//! remembers where in the current scene it began; when the scene executes,
//! every query active during it adds the counters of the commands it
//! spanned (`[begin, end)` of the command list, or the whole scene for a
//! query begun in an earlier one).  Nesting and overlapping queries are
//! therefore free, and results are exact for any thread count.
//!
//! What each counter counts (PIPELINE_STATISTICS, in
//! `pipe_query_data_pipeline_statistics` order):
//! * `ia_vertices`: index/vertex elements consumed by assembly (restart
//!   indices excluded), times instances;
//! * `ia_primitives`: primitives assembled (strips and fans decomposed,
//!   a quad counts as two triangles), times instances;
//! * `vs_invocations`: vertices shaded (after per-segment deduplication of
//!   indexed vertices);
//! * `gs_*`, `hs`, `ds`: 0 (no such stages);
//! * `cs_invocations`: compute invocations, workgroups x threads per
//!   workgroup of every `launch_grid` while the query is active (launches
//!   run outside the recorded scene, so they are added at launch time);
//! * `c_invocations`: primitives entering the clipper;
//! * `c_primitives`: primitives leaving it (each triangle of a clipped fan);
//! * `ps_invocations`: 16 per 4x4 pixel block a primitive covers, counted
//!   before early depth (llvmpipe's definition: it counts the 4x4 blocks
//!   it runs its fragment shader function on).
//!
//! `PRIMITIVES_GENERATED` is `ia_primitives` (no geometry shader: the
//! primitives assembled, whether stream output is active or not).
//!
//! Stream output (counted by the `StreamOut` stage, `stream_out.rs`, per
//! command, for draws that capture):
//! * `PRIMITIVES_EMITTED`: primitives written to the targets;
//! * `SO_STATISTICS`: (written, *storage needed* = primitives the capturing
//!   draws assembled, i.e. what unlimited targets would have taken);
//! * `SO_OVERFLOW_PREDICATE` / `SO_OVERFLOW_ANY_PREDICATE` (identical with
//!   one vertex stream): storage needed > written.  Both work with
//!   `render_condition`.
//!
//! The stream-indexed queries (`PRIMITIVES_EMITTED`, `SO_STATISTICS`,
//! `SO_OVERFLOW_PREDICATE`) take stream index 0, the only stream without a
//! geometry shader (`PIPE_CAP_MAX_VERTEX_STREAMS` = 1).
//!
//! Results become available when the scene that ends the query executes;
//! `get_query_result` executes it if needed, so `wait = false` never
//! starves (a flushed result is final).

use bevy_ecs::component::Component;
use bevy_ecs::entity::Entity;
use bevy_ecs::resource::Resource;
use ferropipe_components::batch::{DrawCounters, RecordedScene};
use ferropipe_components::enums::{QueryType, RenderCondMode};

use super::{Context, Handle};
use crate::error::{Error, QueryError, Result};

/// Timer resolution reported by `PIPE_QUERY_TIMESTAMP_DISJOINT` (ns).
const TIMESTAMP_FREQUENCY: u64 = 1_000_000_000;

/// A query object entity.
#[derive(Component, Debug, Clone)]
pub struct QueryObject {
    /// `PIPE_QUERY_*`.
    pub query_type: QueryType,
    /// The vertex stream or statistics counter the query counts.
    pub index: u32,
    state: QueryState,
}

#[derive(Debug, Clone, Default)]
struct QueryState {
    /// Between `begin_query` and `end_query`.
    active: bool,
    /// Command index in the current scene where counting starts.
    from: usize,
    /// Command index where it stops (set by `end_query` in this scene).
    to: Option<usize>,
    /// Counted so far.
    counts: DrawCounters,
    /// Ended, but the scene that ends it has not executed yet.
    pending: bool,
    /// Has been ended at least once since creation or the last begin.
    ended: bool,
    /// TIME_ELAPSED start / TIMESTAMP value, in screen nanoseconds.
    t0: u64,
    t1: u64,
}

/// Handle to a query object.
pub type QueryHandle = Handle<QueryObject>;

/// `union pipe_query_result`, in the shape each query type returns.
#[derive(Clone, Debug, PartialEq)]
pub enum QueryResult {
    /// Counters and timestamps.
    U64(u64),
    /// Predicates.
    Bool(bool),
    /// `PIPE_QUERY_SO_STATISTICS`: (primitives emitted, storage needed).
    SoStatistics {
        /// Primitives written to the targets.
        num_primitives_written: u64,
        /// Primitives that unlimited targets would have received.
        primitives_storage_needed: u64,
    },
    /// `PIPE_QUERY_TIMESTAMP_DISJOINT`: (frequency in Hz, disjoint).
    TimestampDisjoint {
        /// Timestamp ticks per second: 1,000,000,000 (nanoseconds).
        frequency: u64,
        /// Whether the timestamps may be incomparable (never, here).
        disjoint: bool,
    },
    /// `PIPE_QUERY_PIPELINE_STATISTICS`: the 11 counters in
    /// `pipe_query_data_pipeline_statistics` order.
    PipelineStatistics([u64; 11]),
}

/// The context's query bookkeeping.
#[derive(Resource, Default)]
pub(crate) struct QueryTracker {
    /// Queries that counted in (or are pending on) the current scene.
    live: Vec<Entity>,
    /// `render_condition`: query, condition, mode.
    condition: Option<(Entity, bool, RenderCondMode)>,
}

fn statistics(c: &DrawCounters) -> [u64; 11] {
    [
        c.ia_vertices,
        c.ia_primitives,
        c.vs_invocations,
        0,
        0,
        c.c_invocations,
        c.c_primitives,
        c.ps_invocations,
        0,
        0,
        c.cs_invocations,
    ]
}

/// Whether the query type needs per-command pipeline counts.
fn counts_commands(t: QueryType) -> bool {
    counts_fragments(t)
        || matches!(
            t,
            QueryType::PrimitivesEmitted
                | QueryType::SoStatistics
                | QueryType::SoOverflowPredicate
                | QueryType::SoOverflowAnyPredicate
        )
}

/// Whether the query type counts what the tile pass does (its commands'
/// fragments may then never be skipped).  Stream-output counts come from
/// the front end alone.
fn counts_fragments(t: QueryType) -> bool {
    matches!(
        t,
        QueryType::OcclusionCounter
            | QueryType::OcclusionPredicate
            | QueryType::OcclusionPredicateConservative
            | QueryType::PrimitivesGenerated
            | QueryType::PipelineStatistics
            | QueryType::PipelineStatisticsSingle
    )
}

/// The predicate `render_condition` tests (a counter is true when
/// non-zero): samples passed, or a stream-output overflow.
fn predicate(t: QueryType, c: &DrawCounters) -> bool {
    match t {
        QueryType::SoOverflowPredicate | QueryType::SoOverflowAnyPredicate => {
            c.so_primitives_needed > c.so_primitives_written
        }
        _ => c.samples_passed > 0,
    }
}

impl Context {
    /// `create_query`.
    pub fn create_query(&mut self, query_type: QueryType, index: u32) -> Result<QueryHandle> {
        self.alive("create_query")?;
        match query_type {
            QueryType::PrimitivesEmitted
            | QueryType::SoStatistics
            | QueryType::SoOverflowPredicate
                if index != 0 =>
            {
                return Err(QueryError::StreamIndex { index }.into());
            }
            QueryType::PipelineStatisticsSingle if index > 10 => {
                return Err(QueryError::StatisticIndex { index }.into());
            }
            _ => {}
        }
        let h = self.spawn(QueryObject {
            query_type,
            index,
            state: QueryState::default(),
        });
        self.record_query(h, super::CapturedCall::CreateQuery);
        Ok(h)
    }

    /// Reports a query call to a running capture.
    fn record_query(
        &mut self,
        q: QueryHandle,
        call: fn(super::CapturedQuery) -> super::CapturedCall<'static>,
    ) {
        if self.is_capturing()
            && let Some(cq) = self.captured_query(q)
        {
            self.record(call(cq));
        }
    }

    /// `destroy_query`.
    pub fn destroy_query(&mut self, query: QueryHandle) -> Result<()> {
        self.alive("destroy_query")?;
        self.get("destroy_query", "query", query)?;
        self.record_query(query, super::CapturedCall::DestroyQuery);
        self.despawn("destroy_query", query)?;
        let mut t = self.world.resource_mut::<QueryTracker>();
        t.live.retain(|&e| e != query.entity);
        if t.condition.is_some_and(|(e, _, _)| e == query.entity) {
            t.condition = None;
        }
        Ok(())
    }

    /// `begin_query`: resets the result and starts counting.
    pub fn begin_query(&mut self, query: QueryHandle) -> Result<()> {
        self.alive("begin_query")?;
        const CALL: &str = "begin_query";
        let qt = self.get(CALL, "query", query)?.query_type;
        match qt {
            QueryType::Timestamp | QueryType::GpuFinished => {
                return Err(QueryError::NotBegun { query_type: qt }.into());
            }
            QueryType::TimeElapsed => self.flush_recorded()?,
            _ => {}
        }
        let now = self.screen.get_timestamp();
        let from = self.world.resource::<RecordedScene>().commands.len();
        let mut q = self.query_mut(query);
        if q.state.active {
            return Err(QueryError::AlreadyActive { call: CALL }.into());
        }
        q.state = QueryState {
            active: true,
            from,
            t0: now,
            ..Default::default()
        };
        self.track(query.entity);
        self.record_query(query, super::CapturedCall::BeginQuery);
        Ok(())
    }

    /// Whether a query is active now: a draw it counts has an effect even
    /// when it writes no pixel (the validation layer, lint.rs).
    pub(crate) fn any_query_active(&self) -> bool {
        let live = &self.world.resource::<QueryTracker>().live;
        live.iter().any(|&e| {
            self.world
                .get::<QueryObject>(e)
                .is_some_and(|q| q.state.active)
        })
    }

    /// `end_query`.
    pub fn end_query(&mut self, query: QueryHandle) -> Result<()> {
        self.alive("end_query")?;
        const CALL: &str = "end_query";
        let qt = self.get(CALL, "query", query)?.query_type;
        let begun = self.get(CALL, "query", query)?.state.active;
        let needs_begin = !matches!(qt, QueryType::Timestamp | QueryType::GpuFinished);
        if needs_begin && !begun {
            return Err(QueryError::NotActive { call: CALL }.into());
        }
        if matches!(
            qt,
            QueryType::Timestamp | QueryType::TimeElapsed | QueryType::GpuFinished
        ) {
            // "After all commands issued prior to end_query": run them.
            self.flush_recorded()?;
        }
        let now = self.screen.get_timestamp();
        let to = self.world.resource::<RecordedScene>().commands.len();
        let mut q = self.query_mut(query);
        q.state.active = false;
        q.state.ended = true;
        q.state.t1 = now;
        if counts_commands(qt) {
            q.state.to = Some(to);
            q.state.pending = true;
            self.track(query.entity);
        }
        self.record_query(query, super::CapturedCall::EndQuery);
        Ok(())
    }

    /// `get_query_result`: `Ok(None)` when the result is not available
    /// (the query was never ended).  A result that waits on recorded work
    /// executes it first, whatever `wait` says: once executed, the result
    /// is final.
    pub fn get_query_result(
        &mut self,
        query: QueryHandle,
        wait: bool,
    ) -> Result<Option<QueryResult>> {
        self.alive("get_query_result")?;
        const CALL: &str = "get_query_result";
        let _ = wait;
        let q = self.get(CALL, "query", query)?;
        if q.state.active {
            return Err(QueryError::StillActive { call: CALL }.into());
        }
        if self.is_capturing()
            && let Some(query) = self.captured_query(query)
        {
            self.record(super::CapturedCall::GetQueryResult { query, wait });
        }
        let q = self.get(CALL, "query", query)?;
        if !q.state.ended {
            return Ok(None);
        }
        if q.state.pending {
            self.flush_recorded()?;
        }
        let q = self.get(CALL, "query", query)?;
        let c = &q.state.counts;
        Ok(Some(match q.query_type {
            QueryType::OcclusionCounter => QueryResult::U64(c.samples_passed),
            QueryType::OcclusionPredicate | QueryType::OcclusionPredicateConservative => {
                QueryResult::Bool(c.samples_passed > 0)
            }
            QueryType::PrimitivesGenerated => QueryResult::U64(c.ia_primitives),
            QueryType::PrimitivesEmitted => QueryResult::U64(c.so_primitives_written),
            QueryType::SoStatistics => QueryResult::SoStatistics {
                num_primitives_written: c.so_primitives_written,
                primitives_storage_needed: c.so_primitives_needed,
            },
            QueryType::SoOverflowPredicate | QueryType::SoOverflowAnyPredicate => {
                QueryResult::Bool(predicate(q.query_type, c))
            }
            QueryType::PipelineStatistics => QueryResult::PipelineStatistics(statistics(c)),
            QueryType::PipelineStatisticsSingle => {
                QueryResult::U64(statistics(c)[q.index as usize % 11])
            }
            QueryType::Timestamp => QueryResult::U64(q.state.t1),
            QueryType::TimeElapsed => QueryResult::U64(q.state.t1.saturating_sub(q.state.t0)),
            QueryType::TimestampDisjoint => QueryResult::TimestampDisjoint {
                frequency: TIMESTAMP_FREQUENCY,
                disjoint: false,
            },
            QueryType::GpuFinished => QueryResult::Bool(true),
        }))
    }

    /// `render_condition`; `None` disables conditional rendering.
    pub fn render_condition(
        &mut self,
        query: Option<QueryHandle>,
        condition: bool,
        mode: RenderCondMode,
    ) -> Result<()> {
        self.alive("render_condition")?;
        const CALL: &str = "render_condition";
        let cond = match query {
            Some(q) => {
                let qt = self.get(CALL, "query", q)?.query_type;
                if !matches!(
                    qt,
                    QueryType::OcclusionCounter
                        | QueryType::OcclusionPredicate
                        | QueryType::OcclusionPredicateConservative
                        | QueryType::SoOverflowPredicate
                        | QueryType::SoOverflowAnyPredicate
                ) {
                    return Err(Error::unsupported(
                        CALL,
                        format!("{qt} as a render condition"),
                    ));
                }
                Some((q.entity, condition, mode))
            }
            None => None,
        };
        if self.is_capturing() {
            let query = query.and_then(|q| self.captured_query(q));
            self.record(super::CapturedCall::RenderCondition {
                query,
                condition,
                mode,
            });
        }
        self.world.resource_mut::<QueryTracker>().condition = cond;
        Ok(())
    }

    /// The conditional rendering in force (`render_condition`'s last
    /// arguments), for capture.
    pub fn current_render_condition(&self) -> Option<(super::CapturedQuery, bool, RenderCondMode)> {
        let (e, condition, mode) = self.world.resource::<QueryTracker>().condition?;
        let q = self.captured_query(super::Handle::new(e, self.id))?;
        Some((q, condition, mode))
    }

    /// Whether conditional rendering lets work through now.
    ///
    /// Work is skipped when the query's predicate (a counter is true when
    /// non-zero) equals `condition`.  `*_WAIT` modes execute pending work to
    /// get the result; `*_NO_WAIT` modes render when the result is pending
    /// (context.rst: "the drawing command will be executed normally").  A
    /// query never ended renders too.
    pub(crate) fn render_condition_passes(&mut self) -> Result<bool> {
        let Some((e, condition, mode)) = self.world.resource::<QueryTracker>().condition else {
            return Ok(true);
        };
        let Some(q) = self.world.get::<QueryObject>(e) else {
            return Ok(true);
        };
        if !q.state.ended || q.state.active {
            return Ok(true);
        }
        if q.state.pending {
            if matches!(
                mode,
                RenderCondMode::NoWait | RenderCondMode::ByRegionNoWait
            ) {
                return Ok(true);
            }
            self.flush_recorded()?;
        }
        let Some(q) = self.world.get::<QueryObject>(e) else {
            return Ok(true);
        };
        Ok(predicate(q.query_type, &q.state.counts) != condition)
    }

    fn query_mut(&mut self, q: QueryHandle) -> bevy_ecs::world::Mut<'_, QueryObject> {
        self.world
            .get_mut::<QueryObject>(q.entity)
            .expect("handle checked by the caller")
    }

    fn track(&mut self, e: Entity) {
        let mut t = self.world.resource_mut::<QueryTracker>();
        if !t.live.contains(&e) {
            t.live.push(e);
        }
    }

    /// Per recorded command: whether an active query counts its samples or
    /// statistics (the pipeline then never skips its fragments).
    pub(crate) fn counted_commands(&self) -> Vec<bool> {
        let n = self.world.resource::<RecordedScene>().commands.len();
        let mut counted = vec![false; n];
        for &e in &self.world.resource::<QueryTracker>().live {
            let Some(q) = self.world.get::<QueryObject>(e) else {
                continue;
            };
            if !counts_fragments(q.query_type) {
                continue;
            }
            let s = &q.state;
            if !s.active && !s.pending {
                continue;
            }
            let to = s.to.unwrap_or(n).min(n);
            for c in counted.iter_mut().take(to).skip(s.from) {
                *c = true;
            }
        }
        counted
    }

    /// A `launch_grid` ran `n` compute invocations: active
    /// pipeline-statistics queries count them (`cs_invocations`).
    pub(crate) fn count_compute_invocations(&mut self, n: u64) {
        let live = self.world.resource::<QueryTracker>().live.clone();
        for e in live {
            if let Some(mut q) = self.world.get_mut::<QueryObject>(e)
                && q.state.active
                && matches!(
                    q.query_type,
                    QueryType::PipelineStatistics | QueryType::PipelineStatisticsSingle
                )
            {
                q.state.counts.cs_invocations += n;
            }
        }
    }

    /// After a scene executed: adds its per-command counters to the queries
    /// that spanned them, completes ended queries, and rebases active ones
    /// to the start of the next scene.
    pub(crate) fn resolve_query_counts(&mut self) {
        let live = std::mem::take(&mut self.world.resource_mut::<QueryTracker>().live);
        let counters = std::mem::take(&mut self.world.resource_mut::<RecordedScene>().counters);
        let mut still_live = Vec::new();
        for e in live {
            let Some(mut q) = self.world.get_mut::<QueryObject>(e) else {
                continue;
            };
            let s = &mut q.state;
            if s.active || s.pending {
                let to = s.to.unwrap_or(counters.len()).min(counters.len());
                for c in counters.iter().take(to).skip(s.from) {
                    s.counts.accumulate(c);
                }
            }
            s.from = 0;
            s.to = None;
            s.pending = false;
            if s.active {
                still_live.push(e);
            }
        }
        self.world.resource_mut::<QueryTracker>().live = still_live;
        // Handed back for the next flush (its allocation, ~800 KB for
        // 10,000 draws, is reused instead of faulted in again).
        self.world.resource_mut::<RecordedScene>().counters = counters;
    }
}

#[cfg(test)]
mod tests {
    use crate::error::QueryError;
    use crate::test_util::setup;
    use ferropipe_components::enums::{QueryType, RenderCondMode};

    #[test]
    fn empty_occlusion_query_is_zero_and_nesting_is_allowed() {
        let (_s, mut c) = setup();
        let a = c.create_query(QueryType::OcclusionCounter, 0).unwrap();
        let b = c.create_query(QueryType::OcclusionPredicate, 0).unwrap();
        assert_eq!(c.get_query_result(a, true).unwrap(), None);
        c.begin_query(a).unwrap();
        c.begin_query(b).unwrap();
        assert!(c.begin_query(a).is_err(), "double begin");
        c.end_query(b).unwrap();
        c.end_query(a).unwrap();
        assert_eq!(
            c.get_query_result(a, true).unwrap(),
            Some(super::QueryResult::U64(0))
        );
        assert_eq!(
            c.get_query_result(b, false).unwrap(),
            Some(super::QueryResult::Bool(false))
        );
        // A zero-sample predicate with condition=false skips nothing... and
        // with condition=true everything.
        c.render_condition(Some(b), false, RenderCondMode::Wait)
            .unwrap();
        assert!(c.render_condition_passes().unwrap() == (false != false));
        c.render_condition(Some(b), true, RenderCondMode::Wait)
            .unwrap();
        assert!(c.render_condition_passes().unwrap());
        c.render_condition(None, false, RenderCondMode::Wait)
            .unwrap();
        assert!(c.render_condition_passes().unwrap());
        assert!(matches!(
            c.create_query(QueryType::SoStatistics, 1),
            Err(crate::Error::Query(QueryError::StreamIndex { index: 1 }))
        ));
        // A stream-output query over no capturing draw: nothing written,
        // nothing needed, no overflow.
        let so = c.create_query(QueryType::SoStatistics, 0).unwrap();
        let ov = c.create_query(QueryType::SoOverflowPredicate, 0).unwrap();
        c.begin_query(so).unwrap();
        c.begin_query(ov).unwrap();
        c.end_query(so).unwrap();
        c.end_query(ov).unwrap();
        assert_eq!(
            c.get_query_result(so, true).unwrap(),
            Some(super::QueryResult::SoStatistics {
                num_primitives_written: 0,
                primitives_storage_needed: 0
            })
        );
        assert_eq!(
            c.get_query_result(ov, true).unwrap(),
            Some(super::QueryResult::Bool(false))
        );
        // No overflow: with condition = false, work is skipped.
        c.render_condition(Some(ov), false, RenderCondMode::Wait)
            .unwrap();
        assert!(!c.render_condition_passes().unwrap());
    }
}
