//! The one persistent worker pool the heavy systems share.
//!
//! Equivalent of llvmpipe's `lp_rast` thread pool (`lp_rast_priv.h`): created
//! once per screen, never per frame.  Hosts that own their threads implement
//! [`Executor`] over their own job system and hand it to the screen.

use std::any::Any;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

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

/// The default executor: the calling thread and a rayon pool of
/// `threads - 1` workers owned by the screen.
///
/// The caller takes part, and waits only for jobs that have started.  A
/// front-end wave is five `for_each` calls back to back (one per stage),
/// and a frame is 20 to 160 of them.  Entered from outside the pool, a
/// rayon `scope` handed every call to a sleeping worker, which woke the
/// other one to steal, and the parked caller was woken at the end:
/// sixteen 1 µs jobs took 36-48 µs at two threads on the 2-vCPU VM
/// (textured_mesh, 20 calls a frame).  Here the caller starts claiming at
/// once, each worker joins when it wakes, and the call returns when every
/// index is claimed and every claimed job done; a worker that wakes after
/// that finds nothing left and never touches the job.
///
/// Each thread claims from its own contiguous part of `0..count` first,
/// then what is left of the others' parts.  One shared counter (claims in
/// index order) put the two threads on neighbouring tiles, and
/// textured_mesh at two threads went bimodal: one run in five or so took
/// 28 ms instead of 19.  With a part each, as rayon's stealing from the
/// far end of the deque had kept them, against the rayon pool in paired
/// runs at two threads (2026-12-07, Zen 5): textured_mesh 0.945x (8 of 8
/// rounds), tiny_tris_1m 0.91x, small_tris_100k 0.95x, many_draws
/// ~0.85x, blend_overdraw 0.96x, postprocess and pbr_barrels unchanged.
pub struct PoolExecutor {
    pool: Option<rayon::ThreadPool>,
    threads: usize,
}

impl PoolExecutor {
    /// An executor for `threads` threads: the caller and `threads - 1`
    /// pool workers; 1 runs everything on the calling thread.
    pub fn new(threads: usize) -> Result<Self, rayon::ThreadPoolBuildError> {
        let threads = threads.max(1);
        let pool = if threads > 1 {
            Some(
                rayon::ThreadPoolBuilder::new()
                    .num_threads(threads - 1)
                    .thread_name(|i| format!("ferropipe-worker-{i}"))
                    .build()?,
            )
        } else {
            None
        };
        Ok(PoolExecutor { pool, threads })
    }
}

/// One `for_each` call, shared with the workers that join it.
struct Call {
    /// Per part of `0..count` (one a thread, contiguous), the next index
    /// to claim in it (at or past the part's end: all claimed).
    next: Vec<AtomicUsize>,
    /// The length of each part but the last.
    part: usize,
    /// Jobs finished, panicked ones included.
    done: AtomicUsize,
    count: usize,
    /// The caller's job with its lifetime erased; see [`Call::claim`].
    job: *const (dyn Fn(usize) + Sync + 'static),
    /// The caller, unparked by whoever finishes the last job.
    caller: std::thread::Thread,
    /// The first panic of a job, raised again on the caller.
    panic: Mutex<Option<Box<dyn Any + Send>>>,
}

// SAFETY: `job` points to a `Sync` closure, called through a shared
// reference only (`Call::claim`); the other fields are `Send + Sync`.
unsafe impl Send for Call {}
// SAFETY: as above.
unsafe impl Sync for Call {}

impl Call {
    /// Runs jobs until every index is claimed: first those of part
    /// `first`, then what is left of the others.
    fn claim(&self, first: usize) {
        let parts = self.next.len();
        for p in (first..first + parts).map(|p| p % parts) {
            self.claim_part(p);
        }
    }

    fn claim_part(&self, p: usize) {
        let end = ((p + 1) * self.part).min(self.count);
        loop {
            let i = self.next[p].fetch_add(1, Ordering::Relaxed);
            if i >= end {
                return;
            }
            // SAFETY: index `i < count` is claimed and its job not yet
            // done, so the caller is still inside `for_each` (it returns
            // only when `done == count`) and the closure `job` points to
            // is alive.
            let job = unsafe { &*self.job };
            if let Err(p) = std::panic::catch_unwind(AssertUnwindSafe(|| job(i))) {
                let mut first = self.panic.lock().unwrap_or_else(|e| e.into_inner());
                first.get_or_insert(p);
            }
            // Release: the job's writes are visible to the caller that
            // reads `done == count` with Acquire.
            if self.done.fetch_add(1, Ordering::Release) + 1 == self.count {
                self.caller.unpark();
            }
        }
    }
}

impl Executor for PoolExecutor {
    fn threads(&self) -> usize {
        self.threads
    }

    fn for_each(&self, count: usize, job: &(dyn Fn(usize) + Sync)) {
        let Some(pool) = self.pool.as_ref().filter(|_| count > 1) else {
            (0..count).for_each(job);
            return;
        };
        // SAFETY: only the lifetime is erased.  The pointer is dereferenced
        // only for a claimed index whose job is not done (`Call::claim`),
        // and this function does not return before every job is done.
        let job: *const (dyn Fn(usize) + Sync + 'static) = unsafe {
            std::mem::transmute::<*const (dyn Fn(usize) + Sync + '_), _>(job as *const _)
        };
        let threads = self.threads.min(count);
        let part = count.div_ceil(threads);
        let call = Arc::new(Call {
            next: (0..threads).map(|p| AtomicUsize::new(p * part)).collect(),
            part,
            done: AtomicUsize::new(0),
            count,
            job,
            caller: std::thread::current(),
            panic: Mutex::new(None),
        });
        for first in 1..threads {
            let call = call.clone();
            pool.spawn(move || call.claim(first));
        }
        call.claim(0);
        // The other threads' last jobs: spin briefly (they are mostly
        // nearly done), then park until the last one unparks us.
        let mut spins = 0u32;
        while call.done.load(Ordering::Acquire) < count {
            if spins < 2000 {
                spins += 1;
                std::hint::spin_loop();
            } else {
                std::thread::park();
            }
        }
        let first = call.panic.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(p) = first {
            std::panic::resume_unwind(p);
        }
    }
}

/// A shared executor handle.
pub type ExecutorRef = Arc<dyn Executor>;

#[cfg(test)]
mod tests {
    use super::*;

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

    /// Jobs write the caller's stack through the borrowed closure, and
    /// every write is visible when `for_each` returns, call after call
    /// (the waits are the only synchronisation).
    #[test]
    fn results_are_visible_to_the_caller() {
        let exec = PoolExecutor::new(3).unwrap();
        for round in 0..200usize {
            let n = 1 + round % 37;
            let out: Vec<AtomicUsize> = (0..n).map(|_| AtomicUsize::new(0)).collect();
            exec.for_each(n, &|i| out[i].store(i * round + 1, Ordering::Relaxed));
            for (i, o) in out.iter().enumerate() {
                assert_eq!(o.load(Ordering::Relaxed), i * round + 1);
            }
        }
    }

    /// A job's panic reaches the caller.  With workers, it does so after
    /// every other job has run (none is still using the caller's borrowed
    /// data when it unwinds); on one thread the jobs after it never start.
    #[test]
    fn a_panicking_job_panics_the_caller_after_the_others() {
        for threads in [1, 2, 4] {
            let exec = PoolExecutor::new(threads).unwrap();
            let hits: Vec<AtomicUsize> = (0..64).map(|_| AtomicUsize::new(0)).collect();
            let r = std::panic::catch_unwind(AssertUnwindSafe(|| {
                exec.for_each(64, &|i| {
                    if i == 17 {
                        panic!("job 17");
                    }
                    hits[i].fetch_add(1, Ordering::Relaxed);
                })
            }));
            let msg = r.unwrap_err();
            assert_eq!(msg.downcast_ref::<&str>(), Some(&"job 17"));
            for (i, h) in hits.iter().enumerate() {
                let ran = i < 17 || (i > 17 && threads > 1);
                assert_eq!(h.load(Ordering::Relaxed), usize::from(ran), "job {i}");
            }
            // The executor still works afterwards.
            let sum = AtomicUsize::new(0);
            exec.for_each(10, &|i| {
                sum.fetch_add(i, Ordering::Relaxed);
            });
            assert_eq!(sum.load(Ordering::Relaxed), 45);
        }
    }

    /// A job may call `for_each` again (a worker then is the caller).
    #[test]
    fn nested_calls_complete() {
        for threads in [2, 4] {
            let exec = PoolExecutor::new(threads).unwrap();
            let total = AtomicUsize::new(0);
            exec.for_each(8, &|_| {
                exec.for_each(8, &|j| {
                    total.fetch_add(j, Ordering::Relaxed);
                });
            });
            assert_eq!(total.load(Ordering::Relaxed), 8 * 28);
        }
    }
}
