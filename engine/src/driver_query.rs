//! Driver-specific queries (screen.rst `get_driver_query_info`,
//! `get_driver_query_group_info`): the counters of `ferropipe-profiling`
//! (primitives, fragments, tiles, time per stage) described the way
//! `pipe_driver_query_info` / `pipe_driver_query_group_info` describe them,
//! so a Gallium HUD-style tool finds them by name.  The demo overlay reads
//! the same counters directly.

use ferropipe_profiling::{Counter, CounterGroup, CounterResultType, CounterUnit};

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
    pub name: &'static str,
    /// `PIPE_QUERY_DRIVER_SPECIFIC + index`.
    pub query_type: u32,
    /// 0: no fixed maximum (the HUD scales automatically).
    pub max_value: u64,
    pub type_: DriverQueryType,
    pub result_type: DriverQueryResultType,
    /// Index for [`Screen::get_driver_query_group_info`].
    pub group_id: u32,
    /// Counters are read without stalling: no `PIPE_DRIVER_QUERY_FLAG_*`.
    pub flags: u32,
}

/// `struct pipe_driver_query_group_info`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DriverQueryGroupInfo {
    pub name: &'static str,
    /// Counters are free-running totals: any number may be read at once.
    pub max_active_queries: u32,
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
        let index = query_type.checked_sub(PIPE_QUERY_DRIVER_SPECIFIC)?;
        let c = *Counter::ALL.get(index as usize)?;
        let v = ferropipe_profiling::global().snapshot().get(c);
        Some(match c.unit() {
            CounterUnit::Count => v,
            CounterUnit::Nanoseconds => v / 1000,
        })
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
