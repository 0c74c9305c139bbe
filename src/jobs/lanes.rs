//! One named worker thread that serves requests in lanes, latest wins per lane: the machinery under
//! the isosurface thread ([`super::mesher`]) and the cartoon thread ([`super::cartoon`]).
//!
//! Owns [`LaneWorker`]. A request submitted to a lane replaces that lane's request not yet started;
//! lanes with work are served in turn (the one after the lane served last goes first); every
//! request gets a generation, and [`LaneWorker::try_recv`] drops a result whose generation is no
//! longer its lane's newest. Results come back over a bounded channel carrying their lane and
//! generation; the worker runs at lowered priority, and dropping the worker returns after at most
//! the request in progress. Work started with [`LaneWorker::start_cancellable`] is also told when
//! its request was cancelled (its lane removed or cancelled, or the worker dropped) and may end
//! early; a newer request in the same lane does not cancel the one running (during playback each
//! result is still shown).

use crossbeam::channel::{Receiver, Sender, bounded};
use std::collections::BTreeMap;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

/// A result with the lane and generation of its request.
#[derive(Debug)]
pub struct Done<R> {
    pub lane: u64,
    pub generation: u64,
    pub output: R,
}

struct Queued<Q> {
    generation: u64,
    request: Q,
}

struct Pending<Q> {
    /// The newest unstarted request of each lane.
    lanes: BTreeMap<u64, Queued<Q>>,
    /// The lane served last (the next one after it goes first).
    last_lane: u64,
    /// Per lane, the newest generation cancelled (its requests up to it are stale).
    cancelled_through: BTreeMap<u64, u64>,
    shutdown: bool,
}

impl<Q> Pending<Q> {
    fn is_cancelled(&self, lane: u64, generation: u64) -> bool {
        self.shutdown || self.cancelled_through.get(&lane).is_some_and(|&g| generation <= g)
    }
}

struct Shared<Q> {
    pending: Mutex<Pending<Q>>,
    wake: Condvar,
}

/// The worker and its lanes.
pub struct LaneWorker<Q: Send + 'static, R: Send + 'static> {
    shared: Arc<Shared<Q>>,
    results: Receiver<Done<R>>,
    thread: Option<JoinHandle<()>>,
    /// The newest generation asked for in each lane.
    generations: BTreeMap<u64, u64>,
    next_generation: u64,
    /// Requests submitted whose result has not been received (or dropped as stale) yet, per lane.
    in_flight: BTreeMap<u64, u64>,
}

impl<Q: Send + 'static, R: Send + 'static> LaneWorker<Q, R> {
    /// Starts the worker thread `name`, which runs `work` on each request. Errors when the thread
    /// cannot be started (the message names what it is for: `what`).
    pub fn start(name: &str, what: &str, work: impl Fn(Q) -> R + Send + 'static) -> Result<Self, String> {
        Self::start_cancellable(name, what, move |q, _| work(q))
    }

    /// As [`LaneWorker::start`], with `work` given a check that turns true once its request is
    /// cancelled ([`LaneWorker::remove_lane`], [`LaneWorker::cancel_all`], or the worker dropped):
    /// long work looks at it now and then and returns early (its result is dropped unseen).
    pub fn start_cancellable(
        name: &str,
        what: &str,
        work: impl Fn(Q, &(dyn Fn() -> bool + Sync)) -> R + Send + 'static,
    ) -> Result<Self, String> {
        let shared = Arc::new(Shared {
            pending: Mutex::new(Pending {
                lanes: BTreeMap::new(),
                last_lane: 0,
                cancelled_through: BTreeMap::new(),
                shutdown: false,
            }),
            wake: Condvar::new(),
        });
        let (tx, rx) = bounded(8);
        let sh = shared.clone();
        let thread = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || worker(sh, tx, work))
            .map_err(|e| format!("could not start the {what} thread: {e}"))?;
        Ok(LaneWorker {
            shared,
            results: rx,
            thread: Some(thread),
            generations: BTreeMap::new(),
            next_generation: 0,
            in_flight: BTreeMap::new(),
        })
    }

    /// Asks for `request` in `lane`, replacing that lane's request not yet started. Returns the
    /// request's generation.
    pub fn submit(&mut self, lane: u64, request: Q) -> u64 {
        self.next_generation += 1;
        let generation = self.next_generation;
        self.generations.insert(lane, generation);
        self.in_flight.insert(lane, generation);
        if let Ok(mut p) = self.shared.pending.lock() {
            p.lanes.insert(lane, Queued { generation, request });
        }
        self.shared.wake.notify_one();
        generation
    }

    /// Forgets `lane`: its request not yet started is dropped, a running one is told it is
    /// cancelled (work started by [`LaneWorker::start_cancellable`]) and its result is ignored.
    pub fn remove_lane(&mut self, lane: u64) {
        let newest = self.generations.remove(&lane);
        self.in_flight.remove(&lane);
        if let Ok(mut p) = self.shared.pending.lock() {
            p.lanes.remove(&lane);
            if let Some(g) = newest {
                p.cancelled_through.insert(lane, g);
            }
        }
    }

    /// Cancels every lane's request, queued or running ([`LaneWorker::remove_lane`] for each);
    /// returns the lanes that had one in flight.
    pub fn cancel_all(&mut self) -> Vec<u64> {
        let busy: Vec<u64> = self.in_flight.keys().copied().collect();
        let lanes: Vec<u64> = self.generations.keys().copied().collect();
        for lane in lanes {
            self.remove_lane(lane);
        }
        busy
    }

    /// The newest request's result of every lane whose result is ready (never blocks; older
    /// results are dropped), in lane order.
    pub fn try_recv(&mut self) -> Vec<Done<R>> {
        let mut newest: BTreeMap<u64, Done<R>> = BTreeMap::new();
        while let Ok(r) = self.results.try_recv() {
            if self.generations.get(&r.lane) == Some(&r.generation) {
                self.in_flight.remove(&r.lane);
                newest.insert(r.lane, r);
            }
        }
        newest.into_values().collect()
    }

    /// Generation of `lane`'s newest request (0 before the first).
    pub fn generation(&self, lane: u64) -> u64 {
        self.generations.get(&lane).copied().unwrap_or(0)
    }

    /// True while `lane`'s newest request has not come back through [`LaneWorker::try_recv`].
    pub fn in_flight(&self, lane: u64) -> bool {
        self.in_flight.contains_key(&lane)
    }

    /// True while some lane's newest request has not come back.
    pub fn any_in_flight(&self) -> bool {
        !self.in_flight.is_empty()
    }
}

impl<Q: Send + 'static, R: Send + 'static> Drop for LaneWorker<Q, R> {
    fn drop(&mut self) {
        if let Ok(mut p) = self.shared.pending.lock() {
            p.lanes.clear();
            p.shutdown = true;
        }
        self.shared.wake.notify_one();
        // The worker finishes at most the request in progress; its send never blocks for long (the
        // worker gives up once shut down).
        while self.results.try_recv().is_ok() {}
        if let Some(h) = self.thread.take() {
            let _ = h.join();
        }
    }
}

fn worker<Q: Send + 'static, R: Send + 'static>(
    shared: Arc<Shared<Q>>,
    results: Sender<Done<R>>,
    work: impl Fn(Q, &(dyn Fn() -> bool + Sync)) -> R,
) {
    super::lower_thread_priority();
    loop {
        let (lane, queued) = {
            let Ok(mut p) = shared.pending.lock() else { return };
            loop {
                if p.shutdown {
                    return;
                }
                // The first lane with work after the one served last, wrapping around.
                let after = p.last_lane;
                let next = p
                    .lanes
                    .range(after.saturating_add(1)..)
                    .next()
                    .or_else(|| p.lanes.iter().next())
                    .map(|(l, _)| *l);
                if let Some(lane) = next
                    && let Some(q) = p.lanes.remove(&lane)
                {
                    p.last_lane = lane;
                    break (lane, q);
                }
                p = match shared.wake.wait(p) {
                    Ok(g) => g,
                    Err(_) => return,
                };
            }
        };
        let generation = queued.generation;
        let cancelled = || shared.pending.lock().map_or(true, |p| p.is_cancelled(lane, generation));
        let result = Done {
            lane,
            generation,
            output: work(queued.request, &cancelled),
        };
        // A full channel means the viewer has not polled: wait a little, give up on shutdown.
        let mut result = Some(result);
        while let Some(r) = result.take() {
            match results.send_timeout(r, std::time::Duration::from_millis(50)) {
                Ok(()) => {}
                Err(crossbeam::channel::SendTimeoutError::Timeout(r)) => {
                    if shared.pending.lock().map_or(true, |p| p.shutdown) {
                        return;
                    }
                    result = Some(r);
                }
                Err(crossbeam::channel::SendTimeoutError::Disconnected(_)) => return,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::{Duration, Instant};

    /// Work that runs until it is told it was cancelled (or 20 s pass), saying whether it was.
    fn until_cancelled(started: Arc<AtomicBool>) -> impl Fn(u32, &(dyn Fn() -> bool + Sync)) -> bool {
        move |_q, cancelled| {
            started.store(true, Ordering::SeqCst);
            let t0 = Instant::now();
            while t0.elapsed() < Duration::from_secs(20) {
                if cancelled() {
                    return true;
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            false
        }
    }

    fn wait_for(flag: &AtomicBool) {
        let t0 = Instant::now();
        while !flag.load(Ordering::SeqCst) && t0.elapsed() < Duration::from_secs(20) {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(flag.load(Ordering::SeqCst), "the work never started");
    }

    #[test]
    fn cancelling_ends_running_work_and_drops_its_result() {
        let started = Arc::new(AtomicBool::new(false));
        let mut w = LaneWorker::start_cancellable("lanes-test", "test", until_cancelled(started.clone())).unwrap();
        w.submit(3, 1);
        w.submit(4, 2);
        wait_for(&started);
        assert!(w.in_flight(3) && w.in_flight(4));
        let t0 = Instant::now();
        let busy = w.cancel_all();
        assert_eq!(busy, vec![3, 4]);
        assert!(!w.any_in_flight());
        // The worker is free again well before the 20 s the work would take uncancelled: a new
        // request in a cancelled lane runs, and is not itself cancelled.
        started.store(false, Ordering::SeqCst);
        w.submit(3, 5);
        wait_for(&started);
        assert!(t0.elapsed() < Duration::from_secs(10), "cancelled work kept running");
        std::thread::sleep(Duration::from_millis(50));
        assert!(w.try_recv().is_empty(), "a cancelled request's result came back");
        assert!(w.in_flight(3));
        // Dropping the worker cancels the running request too.
        let t1 = Instant::now();
        drop(w);
        assert!(
            t1.elapsed() < Duration::from_secs(10),
            "drop waited for the whole request"
        );
    }

    #[test]
    fn a_newer_request_does_not_cancel_the_running_one() {
        let seen: Arc<Mutex<Vec<(u32, bool)>>> = Arc::default();
        let record = seen.clone();
        let mut w = LaneWorker::start_cancellable("lanes-test", "test", move |q: u32, cancelled| {
            std::thread::sleep(Duration::from_millis(100));
            if let Ok(mut s) = record.lock() {
                s.push((q, cancelled()));
            }
            q
        })
        .unwrap();
        w.submit(1, 10);
        std::thread::sleep(Duration::from_millis(20));
        w.submit(1, 11);
        let t0 = Instant::now();
        let mut got = Vec::new();
        while got.is_empty() && t0.elapsed() < Duration::from_secs(20) {
            got = w.try_recv();
            std::thread::sleep(Duration::from_millis(5));
        }
        // Only the newest result is handed over, and neither request was told to stop.
        assert_eq!(got.iter().map(|d| d.output).collect::<Vec<_>>(), vec![11]);
        assert_eq!(*seen.lock().unwrap(), vec![(10, false), (11, false)]);
    }
}
