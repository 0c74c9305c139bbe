//! One named worker thread that serves requests in lanes, latest wins per lane: the machinery under
//! the isosurface thread ([`super::mesher`]) and the cartoon thread ([`super::cartoon`]).
//!
//! Owns [`LaneWorker`]. A request submitted to a lane replaces that lane's request not yet started;
//! lanes with work are served in turn (the one after the lane served last goes first); every
//! request gets a generation, and [`LaneWorker::try_recv`] drops a result whose generation is no
//! longer its lane's newest. Results come back over a bounded channel carrying their lane and
//! generation; the worker runs at lowered priority, and dropping the worker returns after at most
//! the request in progress.

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
    shutdown: bool,
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
        let shared = Arc::new(Shared {
            pending: Mutex::new(Pending {
                lanes: BTreeMap::new(),
                last_lane: 0,
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

    /// Forgets `lane` (its request not yet started is dropped; a running one's result is ignored).
    pub fn remove_lane(&mut self, lane: u64) {
        self.generations.remove(&lane);
        self.in_flight.remove(&lane);
        if let Ok(mut p) = self.shared.pending.lock() {
            p.lanes.remove(&lane);
        }
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
    work: impl Fn(Q) -> R,
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
        let result = Done {
            lane,
            generation: queued.generation,
            output: work(queued.request),
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
