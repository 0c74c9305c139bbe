//! A second pair of hands for short work that splits in two: [`PairWorker`] runs one half of a job
//! on its own thread while the calling thread runs the other half.
//!
//! Made for work of microseconds (a large trajectory frame decoded out of a memory map, in two
//! halves), where handing work to a pool costs as much as the work itself (a
//! sleeping thread takes tens of microseconds to wake). The worker stays awake for a short while
//! after each job ([`AWAKE_AFTER_JOB`]), so frames read one after another find it ready, then parks.
//! The caller never waits for the worker to wake: after its own half it takes the second half back
//! if the worker has not claimed it yet. A parked or busy worker therefore costs one wake-up call
//! and nothing else. One caller at a time: a caller that finds the worker in use runs both halves.
//!
//! Readers receive it as a [`Fork`] through [`crate::model::Trajectory::share_decoding`]: the
//! viewer's documents and the CLI's frame loops hand the process's worker ([`decoding_fork`]) to
//! the trajectories they read.

use crate::model::{Fork, Trajectory};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, TryLockError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long the worker keeps looking for the next job after one, before it parks.
pub const AWAKE_AFTER_JOB: Duration = Duration::from_micros(200);

/// No job.
const IDLE: u32 = 0;
/// The second half waits to be claimed (by the worker, or back by the caller).
const PENDING: u32 = 1;
/// The worker runs the second half.
const RUNNING: u32 = 2;
/// The worker has finished the second half.
const DONE: u32 = 3;

/// What the caller and the worker share.
#[derive(Debug, Default)]
struct Shared {
    /// [`IDLE`], [`PENDING`], [`RUNNING`] or [`DONE`].
    state: AtomicU32,
    /// The pending half: a pointer to the caller's `&mut (dyn FnMut() + Send)`, on the caller's
    /// stack, valid from the store of [`PENDING`] until the caller sees the half done or takes it
    /// back.
    job: AtomicPtr<()>,
    /// The worker is parked (or about to park): the caller unparks it after posting a job.
    sleeping: AtomicBool,
    quit: AtomicBool,
    /// Held by the caller that uses the worker.
    busy: Mutex<()>,
    /// Second halves the worker ran.
    halves_run: AtomicU64,
}

/// A thread that runs the second half of [`Fork::join`]'s work. Dropping it stops the thread.
#[derive(Debug)]
pub struct PairWorker {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl PairWorker {
    /// Starts the worker thread (named `orbitfield-pair`).
    pub fn start() -> std::io::Result<PairWorker> {
        let shared = Arc::new(Shared::default());
        let for_thread = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("orbitfield-pair".into())
            .spawn(move || work(&for_thread))?;
        Ok(PairWorker {
            shared,
            thread: Some(thread),
        })
    }

    /// How many second halves the worker thread (not the caller) has run.
    pub fn halves_run(&self) -> u64 {
        self.shared.halves_run.load(Ordering::Relaxed)
    }

    fn unpark(&self) {
        if let Some(t) = &self.thread {
            t.thread().unpark();
        }
    }
}

impl Fork for PairWorker {
    fn join(&self, first: &mut (dyn FnMut() + Send), second: &mut (dyn FnMut() + Send)) {
        let shared = &*self.shared;
        let _guard = match shared.busy.try_lock() {
            Ok(g) => g,
            // A caller's half panicked while it held the worker: `Posted` left the state idle.
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
            // Another caller has the worker: both halves here.
            Err(TryLockError::WouldBlock) => {
                first();
                second();
                return;
            }
        };
        let mut slot: &mut (dyn FnMut() + Send) = second;
        let slot_ptr: *mut &mut (dyn FnMut() + Send) = &raw mut slot;
        shared.job.store(slot_ptr.cast(), Ordering::Relaxed);
        shared.state.store(PENDING, Ordering::SeqCst);
        if shared.sleeping.load(Ordering::SeqCst) {
            self.unpark();
        }
        // From here until `retrieve` the worker may be running `slot`: `retrieve` runs also when
        // `first` unwinds, so the caller's frame outlives the worker's use of it.
        let posted = Posted(shared);
        first();
        if posted.retrieve() {
            slot();
        }
    }
}

/// A posted second half, retrieved when dropped (see [`Posted::retrieve`]).
struct Posted<'a>(&'a Shared);

impl Posted<'_> {
    /// Takes the second half back if the worker has not claimed it (`true`: the caller runs it),
    /// or waits until the worker has run it (`false`).
    fn retrieve(self) -> bool {
        let taken_back = self.settle();
        std::mem::forget(self);
        taken_back
    }

    fn settle(&self) -> bool {
        let shared = self.0;
        let taken_back = shared
            .state
            .compare_exchange(PENDING, IDLE, Ordering::AcqRel, Ordering::Acquire)
            .is_ok();
        if !taken_back {
            // Claimed: the worker is running it, so this wait is short.
            let mut spins = 0u32;
            while shared.state.load(Ordering::Acquire) != DONE {
                spins = spins.saturating_add(1);
                if spins < 1 << 14 {
                    std::hint::spin_loop();
                } else {
                    std::thread::yield_now();
                }
            }
            shared.state.store(IDLE, Ordering::Release);
        }
        shared.job.store(std::ptr::null_mut(), Ordering::Relaxed);
        taken_back
    }
}

impl Drop for Posted<'_> {
    /// Reached only when the caller's own half unwinds: the second half is taken back (not run)
    /// or waited for.
    fn drop(&mut self) {
        self.settle();
    }
}

impl Drop for PairWorker {
    fn drop(&mut self) {
        self.shared.quit.store(true, Ordering::SeqCst);
        self.unpark();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The worker thread: claims posted halves and runs them; stays awake [`AWAKE_AFTER_JOB`] after
/// each, then parks until a caller unparks it.
fn work(shared: &Shared) {
    loop {
        let mut since = Instant::now();
        loop {
            if shared.quit.load(Ordering::Acquire) {
                return;
            }
            if shared.state.load(Ordering::Acquire) == PENDING {
                break;
            }
            if since.elapsed() < AWAKE_AFTER_JOB {
                std::hint::spin_loop();
                continue;
            }
            shared.sleeping.store(true, Ordering::SeqCst);
            // Checked after announcing the sleep: a caller posting from now on sees `sleeping`
            // and unparks (park/unpark keep the token when the unpark comes first).
            if shared.state.load(Ordering::SeqCst) != PENDING && !shared.quit.load(Ordering::SeqCst) {
                std::thread::park();
            }
            shared.sleeping.store(false, Ordering::SeqCst);
            since = Instant::now();
        }
        if shared
            .state
            .compare_exchange(PENDING, RUNNING, Ordering::AcqRel, Ordering::Relaxed)
            .is_err()
        {
            continue;
        }
        let job = shared.job.load(Ordering::Acquire).cast::<&mut (dyn FnMut() + Send)>();
        // SAFETY: the claim above succeeded, so the caller posted `job` before storing PENDING
        // (the acquiring claim sees it), did not take the half back, and waits in `join` until it
        // sees DONE: the pointee, a `&mut dyn FnMut` on the caller's stack, is alive and used by
        // nobody else until then.
        let ran = catch_unwind(AssertUnwindSafe(|| unsafe { (*job)() }));
        if ran.is_err() {
            tracing::error!("a half of a split job panicked on the pair worker");
        }
        shared.halves_run.fetch_add(1, Ordering::Relaxed);
        shared.state.store(DONE, Ordering::Release);
    }
}

/// The process's pair worker for decoding frames, started on first use; `None` with a single
/// core, where the thread could start at all, or with `ORBITFIELD_DECODE_THREADS=1`.
pub fn decoding_fork() -> Option<Arc<dyn Fork>> {
    static WORKER: OnceLock<Option<Arc<PairWorker>>> = OnceLock::new();
    let worker = WORKER.get_or_init(|| {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let asked_one = std::env::var("ORBITFIELD_DECODE_THREADS").is_ok_and(|v| v.trim() == "1");
        if cores < 2 || asked_one {
            return None;
        }
        match PairWorker::start() {
            Ok(w) => Some(Arc::new(w)),
            Err(e) => {
                tracing::warn!("frames are decoded on one thread: no second thread ({e})");
                None
            }
        }
    });
    worker.clone().map(|w| w as Arc<dyn Fork>)
}

/// Hands the process's pair worker to `trajectory` (see [`decoding_fork`]).
pub fn share_decoding(trajectory: &mut Trajectory) {
    if let Some(fork) = decoding_fork() {
        trajectory.share_decoding(fork);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fills `out` with `f(i)` in two halves through `fork`.
    fn fill(fork: &dyn Fork, out: &mut [u64], f: impl Fn(u64) -> u64 + Sync) {
        let mid = out.len() / 2;
        let (a, b) = out.split_at_mut(mid);
        let f = &f;
        fork.join(
            &mut || {
                for (i, x) in a.iter_mut().enumerate() {
                    *x = f(i as u64);
                }
            },
            &mut || {
                for (i, x) in b.iter_mut().enumerate() {
                    *x = f((mid + i) as u64);
                }
            },
        );
    }

    #[test]
    fn both_halves_run_exactly_once_whoever_runs_them() {
        let worker = PairWorker::start().unwrap();
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64;
        for round in 0..2000u64 {
            let n = 1 + ((seed ^ round.wrapping_mul(0x9e37_79b9_7f4a_7c15)) % 5000) as usize;
            let mut out = vec![u64::MAX; n];
            let key = seed.wrapping_add(round);
            fill(&worker, &mut out, |i| i.wrapping_mul(key) ^ round);
            for (i, &x) in out.iter().enumerate() {
                assert_eq!(
                    x,
                    (i as u64).wrapping_mul(key) ^ round,
                    "round {round}, element {i} of {n}"
                );
            }
            let mut count = std::sync::atomic::AtomicU32::new(0);
            let c = &count;
            worker.join(
                &mut || {
                    c.fetch_add(1, Ordering::Relaxed);
                },
                &mut || {
                    c.fetch_add(10, Ordering::Relaxed);
                },
            );
            assert_eq!(*count.get_mut(), 11);
            // Now and then let the worker fall asleep, so that posting to a parked worker is tested.
            if round % 500 == 499 {
                std::thread::sleep(AWAKE_AFTER_JOB * 3);
            }
        }
        drop(worker);
    }

    #[test]
    fn the_worker_takes_the_second_half_while_the_caller_is_busy() {
        let worker = PairWorker::start().unwrap();
        let caller = std::thread::current().id();
        let mut elsewhere = 0;
        for _ in 0..20 {
            let mut ran_on = None;
            worker.join(&mut || std::thread::sleep(Duration::from_millis(2)), &mut || {
                ran_on = Some(std::thread::current().id())
            });
            elsewhere += usize::from(ran_on.is_some_and(|t| t != caller));
            assert!(ran_on.is_some());
        }
        assert!(elsewhere > 0, "the worker never ran a half in 20 tries");
        assert_eq!(worker.halves_run(), elsewhere as u64);
    }

    #[test]
    fn callers_on_several_threads_share_one_worker() {
        let worker = Arc::new(PairWorker::start().unwrap());
        std::thread::scope(|s| {
            for t in 0..3u64 {
                let w = Arc::clone(&worker);
                s.spawn(move || {
                    for round in 0..300u64 {
                        let mut out = vec![0u64; 999];
                        fill(w.as_ref(), &mut out, |i| i * 3 + t + round);
                        assert!(out.iter().enumerate().all(|(i, &x)| x == i as u64 * 3 + t + round));
                    }
                });
            }
        });
    }

    #[test]
    fn a_panicking_first_half_waits_for_the_second_and_the_worker_still_works() {
        let worker = PairWorker::start().unwrap();
        for _ in 0..5 {
            let ran = std::sync::atomic::AtomicBool::new(false);
            let r = std::panic::catch_unwind(AssertUnwindSafe(|| {
                worker.join(
                    &mut || {
                        std::thread::sleep(Duration::from_millis(1));
                        panic!("first half fails");
                    },
                    &mut || {
                        std::thread::sleep(Duration::from_millis(3));
                        ran.store(true, Ordering::SeqCst);
                    },
                );
            }));
            assert!(r.is_err());
            // Either the worker ran the second half to its end before the caller went on, or
            // the caller took it back unrun: never half-run.
            let before = ran.load(Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(5));
            assert_eq!(ran.load(Ordering::SeqCst), before);
        }
        let mut out = vec![0u64; 1000];
        fill(&worker, &mut out, |i| i + 1);
        assert!(out.iter().enumerate().all(|(i, &x)| x == i as u64 + 1));
    }

    #[test]
    fn a_worker_stops_when_dropped_even_while_parked() {
        let worker = PairWorker::start().unwrap();
        std::thread::sleep(AWAKE_AFTER_JOB * 5);
        drop(worker);
    }
}
