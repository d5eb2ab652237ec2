//! Bounded work per flush: the counterpart of a GPU driver's timeout
//! detection and recovery (Windows TDR, Linux `amdgpu.lockup_timeout`),
//! which llvmpipe has no equivalent of.
//!
//! A draw of 2^31 vertices over a 12-byte buffer is valid Gallium and takes
//! minutes; a host that runs untrusted content (a browser-style sandbox, a
//! fuzzer) must be able to stop it.  A [`WorkBudget`] inserted into a
//! context's world bounds each flush (and each `launch_grid`) two ways:
//!
//! * **Work units** — deterministic, so tests and fuzzers get the same
//!   verdict on every machine and thread count.  One unit is one assembled
//!   primitive (per instance, counted as the planner cuts jobs, *before*
//!   anything is fetched or allocated for it), one bin entry (a primitive
//!   or clear over one 64x64 tile: at most 4096 pixels of tile work,
//!   counted before the tile pass that would run it), or one compute
//!   invocation (workgroups x workgroup size, counted before the launch).
//!   Units are not equal in time; they bound it: a unit costs at most a
//!   few vertex-shader runs, 4096 fragment-shader runs or one kernel run.
//! * **A wall-clock deadline** — what hosts think in ("two seconds per
//!   frame"), but timing-dependent, so a scene near the limit may pass on
//!   one run and fail on the next.  It is checked at the safe points:
//!   before each front-end wave, before each tile pass, before each tile
//!   of a pass, and before each compute workgroup.
//!
//! When either is exceeded the flush stops at the next safe point: no
//! further wave, tile or workgroup starts, recorded work is dropped and the
//! context reports the loss (the façade's `Error::DeviceLost`).  Resources
//! the lost flush did not write are untouched; those it was writing (render
//! targets, stream-output buffers, written shader buffers and images) may
//! hold any mix of old and new values, as after a GPU reset.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use bevy_ecs::resource::Resource;

/// The limits of one flush or launch; insert it into a context's world
/// (the façade's `Context::set_work_budget`).  Both `None`: unbounded,
/// Gallium's behaviour.
#[derive(Resource, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WorkBudget {
    /// Work units (see the module docs) one flush or launch may spend.
    pub units: Option<u64>,
    /// Wall-clock time one flush or launch may take, checked at safe points.
    pub time: Option<Duration>,
}

/// Why a flush or launch stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BudgetExceeded {
    /// More work units were needed than the budget allows.
    Units {
        /// Units the work needed (at least this many).
        needed: u64,
        /// The budget's units.
        limit: u64,
    },
    /// The deadline passed at a safe point.
    Time {
        /// The budget's wall-clock time.
        limit: Duration,
    },
}

impl std::fmt::Display for BudgetExceeded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BudgetExceeded::Units { needed, limit } => write!(
                f,
                "work budget exceeded: at least {needed} work units needed, {limit} allowed"
            ),
            BudgetExceeded::Time { limit } => {
                write!(f, "work budget exceeded: ran past its {limit:?} deadline")
            }
        }
    }
}

/// A running budget: units spent so far and the deadline.  Shared by
/// reference with the worker threads, which only read the deadline and set
/// the `timed_out` flag.
#[derive(Debug, Default)]
pub struct BudgetMeter {
    limit: Option<u64>,
    spent: u64,
    time: Option<Duration>,
    deadline: Option<Instant>,
    over_units: Option<u64>,
    timed_out: AtomicBool,
}

impl BudgetMeter {
    /// Starts measuring now.
    pub fn start(budget: WorkBudget) -> Self {
        BudgetMeter {
            limit: budget.units,
            spent: 0,
            time: budget.time,
            deadline: budget.time.map(|t| Instant::now() + t),
            over_units: None,
            timed_out: AtomicBool::new(false),
        }
    }

    /// Spends `units`; returns false (and remembers it) when that goes past
    /// the limit.  The work they stand for must then not start.
    pub(crate) fn charge(&mut self, units: u64) -> bool {
        self.spent = self.spent.saturating_add(units);
        match self.limit {
            Some(limit) if self.spent > limit => {
                self.over_units.get_or_insert(self.spent);
                false
            }
            _ => true,
        }
    }

    /// Whether the deadline has passed (checked now; once true, stays
    /// true).  Costs one relaxed load when no deadline is set.
    pub(crate) fn out_of_time(&self) -> bool {
        let Some(deadline) = self.deadline else {
            return false;
        };
        if self.timed_out.load(Ordering::Relaxed) {
            return true;
        }
        if Instant::now() >= deadline {
            self.timed_out.store(true, Ordering::Relaxed);
            return true;
        }
        false
    }

    /// Why the work must stop, if it must (units first: deterministic).
    pub fn exceeded(&self) -> Option<BudgetExceeded> {
        if let (Some(needed), Some(limit)) = (self.over_units, self.limit) {
            return Some(BudgetExceeded::Units { needed, limit });
        }
        if self.timed_out.load(Ordering::Relaxed) {
            return self.time.map(|limit| BudgetExceeded::Time { limit });
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_and_deadline() {
        let mut m = BudgetMeter::start(WorkBudget {
            units: Some(10),
            time: None,
        });
        assert!(m.charge(10));
        assert_eq!(m.exceeded(), None);
        assert!(!m.charge(1));
        assert_eq!(
            m.exceeded(),
            Some(BudgetExceeded::Units {
                needed: 11,
                limit: 10
            })
        );
        assert!(!m.out_of_time());

        let m = BudgetMeter::start(WorkBudget {
            units: None,
            time: Some(Duration::ZERO),
        });
        assert!(m.out_of_time());
        assert_eq!(
            m.exceeded(),
            Some(BudgetExceeded::Time {
                limit: Duration::ZERO
            })
        );
        let mut unbounded = BudgetMeter::start(WorkBudget::default());
        assert!(unbounded.charge(u64::MAX) && unbounded.charge(u64::MAX));
        assert!(!unbounded.out_of_time() && unbounded.exceeded().is_none());
    }
}
