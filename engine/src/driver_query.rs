//! Driver-specific queries (screen.rst `get_driver_query_info`,
//! `get_driver_query_group_info`): the counters of `ferropipe-profiling`
//! (primitives, fragments, tiles, time per stage) described the way
//! `pipe_driver_query_info` / `pipe_driver_query_group_info` describe them,
//! so a Gallium HUD-style tool finds them by name.  The demo overlay reads
//! the same counters directly.
//!
//! The pipeline commits them per flush (`ferropipe_systems::PipelineCounters`)
//! to the context's set and to the process-wide one:
//! [`Screen::get_driver_query_value`] reads the process's totals,
//! [`Context::get_driver_query_value`] one context's, and a driver query
//! object ([`Context::create_driver_query`], the HUD's
//! `create_query(PIPE_QUERY_DRIVER_SPECIFIC + i)`) the difference between
//! its `begin` and `end`, each of which first executes recorded work.

use bevy_ecs::component::Component;
use ferropipe_profiling::{Counter, CounterGroup, CounterResultType, CounterUnit, Counts};
use ferropipe_systems::PipelineCounters;

use crate::context::{Context, Handle};
use crate::error::{Error, QueryError, Result};
use crate::screen::Screen;

/// `PIPE_QUERY_DRIVER_SPECIFIC` (p_defines.h): driver query `i` has query
/// type `PIPE_QUERY_DRIVER_SPECIFIC + i`.
pub const PIPE_QUERY_DRIVER_SPECIFIC: u32 = 256;

/// `enum pipe_driver_query_type`, the values ferropipe reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DriverQueryType {
    /// `PIPE_DRIVER_QUERY_TYPE_UINT64`.
    Uint64,
    /// `PIPE_DRIVER_QUERY_TYPE_MICROSECONDS` (stage times; the counters
    /// keep nanoseconds, divide by 1000).
    Microseconds,
}

/// `enum pipe_driver_query_result_type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DriverQueryResultType {
    /// `PIPE_DRIVER_QUERY_RESULT_TYPE_AVERAGE`.
    Average,
    /// `PIPE_DRIVER_QUERY_RESULT_TYPE_CUMULATIVE`.
    Cumulative,
}

/// `struct pipe_driver_query_info`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DriverQueryInfo {
    /// The counter's name (`GALLIUM_HUD=fragments-shaded`).
    pub name: &'static str,
    /// `PIPE_QUERY_DRIVER_SPECIFIC + index`.
    pub query_type: u32,
    /// 0: no fixed maximum (the HUD scales automatically).
    pub max_value: u64,
    /// What the value is (a count or nanoseconds).
    pub type_: DriverQueryType,
    /// How it accumulates (every ferropipe counter is cumulative).
    pub result_type: DriverQueryResultType,
    /// Index for [`Screen::get_driver_query_group_info`].
    pub group_id: u32,
    /// Counters are read without stalling: no `PIPE_DRIVER_QUERY_FLAG_*`.
    pub flags: u32,
}

/// `struct pipe_driver_query_group_info`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DriverQueryGroupInfo {
    /// The group's name.
    pub name: &'static str,
    /// Counters are free-running totals: any number may be read at once.
    pub max_active_queries: u32,
    /// Counters in the group.
    pub num_queries: u32,
}

impl Screen {
    /// `get_driver_query_info(screen, index, NULL)`: how many driver
    /// queries there are.
    pub fn get_driver_query_count(&self) -> u32 {
        Counter::COUNT as u32
    }

    /// `get_driver_query_info`: driver query `index`, or `None` (the C
    /// call's 0) past the end.
    pub fn get_driver_query_info(&self, index: u32) -> Option<DriverQueryInfo> {
        let c = *Counter::ALL.get(index as usize)?;
        let d = c.desc();
        Some(DriverQueryInfo {
            name: d.name,
            query_type: PIPE_QUERY_DRIVER_SPECIFIC + index,
            max_value: 0,
            type_: match d.unit {
                CounterUnit::Count => DriverQueryType::Uint64,
                CounterUnit::Nanoseconds => DriverQueryType::Microseconds,
            },
            result_type: match d.result_type {
                CounterResultType::Cumulative => DriverQueryResultType::Cumulative,
                CounterResultType::Average => DriverQueryResultType::Average,
            },
            group_id: d.group as u32,
            flags: 0,
        })
    }

    /// `get_driver_query_group_info(screen, index, NULL)`: how many groups.
    pub fn get_driver_query_group_count(&self) -> u32 {
        CounterGroup::ALL.len() as u32
    }

    /// `get_driver_query_group_info`: group `index`, or `None` past the end.
    pub fn get_driver_query_group_info(&self, index: u32) -> Option<DriverQueryGroupInfo> {
        let g = *CounterGroup::ALL.get(index as usize)?;
        Some(DriverQueryGroupInfo {
            name: g.name(),
            max_active_queries: Counter::COUNT as u32,
            num_queries: g.counters().count() as u32,
        })
    }

    /// The current value of driver query `query_type` (process-wide total
    /// since start, in the query's unit): what a HUD samples and
    /// differences over its period.
    pub fn get_driver_query_value(&self, query_type: u32) -> Option<u64> {
        let c = driver_counter(query_type)?;
        Some(in_query_unit(c, ferropipe_profiling::global().get(c)))
    }
}

/// The counter behind driver query type `query_type`.
fn driver_counter(query_type: u32) -> Option<Counter> {
    let index = query_type.checked_sub(PIPE_QUERY_DRIVER_SPECIFIC)?;
    Counter::ALL.get(index as usize).copied()
}

/// A counter value in its query's unit (time counters keep nanoseconds,
/// `PIPE_DRIVER_QUERY_TYPE_MICROSECONDS` reports microseconds).
fn in_query_unit(c: Counter, v: u64) -> u64 {
    match c.unit() {
        CounterUnit::Count => v,
        CounterUnit::Nanoseconds => v / 1000,
    }
}

/// A driver query object: `create_query(PIPE_QUERY_DRIVER_SPECIFIC + i)`.
#[derive(Component, Debug, Clone)]
pub struct DriverQueryObject {
    counter: Counter,
    /// The counter's value at `begin`, while active.
    begun: Option<u64>,
    /// The difference at `end`.
    result: Option<u64>,
}

/// Handle to a driver query object.
pub type DriverQueryHandle = Handle<DriverQueryObject>;

impl Context {
    /// The totals of this context's pipeline counters: everything its
    /// flushes have executed so far (recorded, unflushed work is not in
    /// them).
    pub fn counters(&self) -> Counts {
        self.world.resource::<PipelineCounters>().0.snapshot()
    }

    /// The current value of driver query `query_type` for this context's
    /// work alone (in the query's unit), or `None` for a type that is not
    /// a driver query.  Like [`Context::counters`], without flushing.
    pub fn get_driver_query_value(&self, query_type: u32) -> Option<u64> {
        let c = driver_counter(query_type)?;
        let v = self.world.resource::<PipelineCounters>().0.get(c);
        Some(in_query_unit(c, v))
    }

    /// `create_query(PIPE_QUERY_DRIVER_SPECIFIC + i, 0)`: a query over one
    /// of [`Screen::get_driver_query_info`]'s counters.
    pub fn create_driver_query(&mut self, query_type: u32) -> Result<DriverQueryHandle> {
        let counter = driver_counter(query_type).ok_or_else(|| {
            Error::from(QueryError::UnknownDriverQuery {
                query_type,
                first: PIPE_QUERY_DRIVER_SPECIFIC,
                count: Counter::COUNT,
            })
        })?;
        Ok(self.spawn(DriverQueryObject {
            counter,
            begun: None,
            result: None,
        }))
    }

    /// `destroy_query` of a driver query.
    pub fn destroy_driver_query(&mut self, query: DriverQueryHandle) -> Result<()> {
        self.despawn("destroy_query", query)
    }

    /// `begin_query` of a driver query: executes recorded work (it belongs
    /// before the query), then remembers the counter's value.
    pub fn begin_driver_query(&mut self, query: DriverQueryHandle) -> Result<()> {
        const CALL: &str = "begin_query";
        let q = self.get(CALL, "query", query)?;
        if q.begun.is_some() {
            return Err(QueryError::AlreadyActive { call: CALL }.into());
        }
        let counter = q.counter;
        self.flush_recorded()?;
        let now = self.world.resource::<PipelineCounters>().0.get(counter);
        let mut q = self.driver_query_mut(query);
        q.begun = Some(now);
        q.result = None;
        Ok(())
    }

    /// `end_query` of a driver query: executes recorded work, then stores
    /// how far the counter moved since `begin`.
    pub fn end_driver_query(&mut self, query: DriverQueryHandle) -> Result<()> {
        const CALL: &str = "end_query";
        let q = self.get(CALL, "query", query)?;
        let (Some(begun), counter) = (q.begun, q.counter) else {
            return Err(QueryError::NotActive { call: CALL }.into());
        };
        self.flush_recorded()?;
        let now = self.world.resource::<PipelineCounters>().0.get(counter);
        let mut q = self.driver_query_mut(query);
        q.begun = None;
        q.result = Some(in_query_unit(counter, now.wrapping_sub(begun)));
        Ok(())
    }

    /// `get_query_result` of a driver query: `None` until it has been
    /// ended (the result is final at `end`, so `wait` changes nothing).
    pub fn get_driver_query_result(&self, query: DriverQueryHandle) -> Result<Option<u64>> {
        let q = self.get("get_query_result", "query", query)?;
        if q.begun.is_some() {
            return Err(QueryError::StillActive {
                call: "get_query_result",
            }
            .into());
        }
        Ok(q.result)
    }

    fn driver_query_mut(
        &mut self,
        q: DriverQueryHandle,
    ) -> bevy_ecs::world::Mut<'_, DriverQueryObject> {
        self.world
            .get_mut::<DriverQueryObject>(q.entity)
            .expect("handle checked by the caller")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_counter_is_a_driver_query_in_its_group() {
        let s = Screen::new(Default::default()).unwrap();
        let n = s.get_driver_query_count();
        assert!(n > 0);
        assert!(s.get_driver_query_info(n).is_none());
        let groups = s.get_driver_query_group_count();
        assert!(s.get_driver_query_group_info(groups).is_none());
        let mut per_group = vec![0u32; groups as usize];
        let mut names = std::collections::HashSet::new();
        for i in 0..n {
            let q = s.get_driver_query_info(i).unwrap();
            assert_eq!(q.query_type, PIPE_QUERY_DRIVER_SPECIFIC + i);
            assert!(names.insert(q.name), "{} twice", q.name);
            per_group[q.group_id as usize] += 1;
            assert!(s.get_driver_query_value(q.query_type).is_some());
        }
        for g in 0..groups {
            let info = s.get_driver_query_group_info(g).unwrap();
            assert_eq!(info.num_queries, per_group[g as usize], "{}", info.name);
        }
        assert!(
            s.get_driver_query_value(PIPE_QUERY_DRIVER_SPECIFIC + n)
                .is_none()
        );
        assert!(s.get_driver_query_value(3).is_none());
    }
}
