//! The one persistent worker pool the heavy systems share.
//!
//! Equivalent of llvmpipe's `lp_rast` thread pool (`lp_rast_priv.h`): created
//! once per screen, never per frame.  Hosts that own their threads implement
//! [`Executor`] over their own job system and hand it to the screen.

use std::sync::Arc;

/// Runs independent jobs, possibly in parallel.
///
/// Determinism rule: callers give every job index its own output slot and
/// combine results in index order, so images never depend on which thread
/// ran what (ARCHITECTURE.md, "Determinism").
pub trait Executor: Send + Sync {
    /// How many jobs can usefully run at once; work is split by it.
    fn threads(&self) -> usize;

    /// Runs `job(i)` for every `i` in `0..count` and returns when all are done.
    fn for_each(&self, count: usize, job: &(dyn Fn(usize) + Sync));
}

/// The default executor: a rayon thread pool owned by the screen.
pub struct PoolExecutor {
    pool: Option<rayon::ThreadPool>,
    threads: usize,
}

impl PoolExecutor {
    /// A pool of `threads` workers; 1 runs everything on the calling thread.
    pub fn new(threads: usize) -> Result<Self, rayon::ThreadPoolBuildError> {
        let threads = threads.max(1);
        let pool = if threads > 1 {
            Some(
                rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .thread_name(|i| format!("ferropipe-worker-{i}"))
                    .build()?,
            )
        } else {
            None
        };
        Ok(PoolExecutor { pool, threads })
    }
}

impl Executor for PoolExecutor {
    fn threads(&self) -> usize {
        self.threads
    }

    fn for_each(&self, count: usize, job: &(dyn Fn(usize) + Sync)) {
        match &self.pool {
            Some(pool) if count > 1 => pool.scope(|s| {
                for i in 0..count {
                    s.spawn(move |_| job(i));
                }
            }),
            _ => (0..count).for_each(job),
        }
    }
}

/// A shared executor handle.
pub type ExecutorRef = Arc<dyn Executor>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn runs_every_job_once() {
        for threads in [1, 2, 4] {
            let exec = PoolExecutor::new(threads).unwrap();
            let hits: Vec<AtomicUsize> = (0..100).map(|_| AtomicUsize::new(0)).collect();
            exec.for_each(100, &|i| {
                hits[i].fetch_add(1, Ordering::Relaxed);
            });
            assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1));
        }
    }
}
