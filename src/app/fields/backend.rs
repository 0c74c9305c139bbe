//! What computes fields off the UI thread: the [`FieldBackend`] trait and its implementation over
//! the jobs pool ([`PoolBackend`]).
//!
//! The [`FieldService`](super::FieldService) owns one backend and talks to it in [`Lane`]s: every
//! representation's slot has a view lane (what the screen waits for) and a look-ahead lane
//! (playback's next frame, served only while no view request has tiles left). A lane is latest
//! wins: a newer request in it supersedes the older one. Results carry their key.

use super::{FieldKey, FieldResult, FieldSlot, JobProgress};
use crate::compute::FieldJob;
use std::collections::BTreeMap;
use std::sync::Arc;

/// One of a slot's two latest-wins request lanes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Lane {
    pub slot: FieldSlot,
    /// The look-ahead lane (lower priority) rather than the view lane.
    pub look_ahead: bool,
}

impl Lane {
    pub fn view(slot: FieldSlot) -> Lane {
        Lane {
            slot,
            look_ahead: false,
        }
    }

    pub fn look_ahead(slot: FieldSlot) -> Lane {
        Lane { slot, look_ahead: true }
    }
}

/// Something that computes fields off the UI thread (the jobs pool).
pub trait FieldBackend: Send {
    /// A short description for the jobs panel ("cpu x16", "cuda:0 NVIDIA H100 + cpu").
    fn name(&self) -> String;
    /// Starts `job` in `lane`; the request pending or running in that lane is superseded (latest
    /// wins), other lanes are untouched. Look-ahead lanes are served behind every view lane.
    fn submit(&mut self, lane: Lane, key: FieldKey, job: FieldJob);
    /// Hands what was submitted since the last call to the workers, together, so that requests
    /// computable in one batch (the orbitals of one frame's representations) are batched. A backend
    /// that starts each request as it is submitted does nothing here.
    fn flush(&mut self) {}
    /// The view now waits for the look-ahead request of `slot`: serve it like a view request.
    fn promote(&mut self, slot: FieldSlot) {
        let _ = slot;
    }
    /// Stops the request of `lane`, if any, at its next tile.
    fn cancel(&mut self, lane: Lane);
    /// Progress of the request running in `lane`, if any.
    fn progress(&self, lane: Lane) -> Option<JobProgress> {
        let _ = lane;
        None
    }
    /// A finished result, if one is ready (never blocks).
    fn try_recv(&mut self) -> Option<FieldResult>;
    /// Requests that ended cancelled (superseded or stopped) and tiles workers dropped because
    /// of that, since the backend started.
    fn cancellations(&self) -> Cancellations {
        Cancellations::default()
    }
    /// The workers and what they have done.
    fn workers(&self) -> Vec<WorkerRow> {
        Vec::new()
    }
    /// Stage timings of the last finished request.
    fn last_stages(&self) -> Option<StageTimes> {
        None
    }
    /// The backend's workers for device tasks other than fields (RDF frames), when it has a pool.
    fn device_workers(&self) -> Option<crate::jobs::DeviceWorkers> {
        None
    }
}

/// One worker of a backend, for the jobs panel.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WorkerRow {
    pub name: String,
    pub engine: String,
    pub busy: bool,
    pub tiles_done: u64,
    pub tiles_failed: u64,
    pub tiles_cancelled: u64,
    pub busy_seconds: f64,
    pub last_error: Option<String>,
}

/// Stage timings of the last finished request (seconds; compute is summed over workers).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StageTimes {
    pub queue: f64,
    pub compute: f64,
    pub assemble: f64,
    pub total: f64,
    pub tiles: usize,
    pub retried: usize,
    pub engines: Vec<String>,
}

/// Cancellation counts of a backend, for the jobs panel and the tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cancellations {
    pub requests: u64,
    pub tiles: u64,
}

/// The jobs pool as the viewer's backend: persistent GPU and CPU workers, one pool slot per lane,
/// results tagged with their key; the UI never waits. Submissions wait in an outbox until
/// [`FieldBackend::flush`] (the end of the representations' update), so one frame's orbital
/// requests reach the pool together and are computed in one batch, each still in its own lane.
pub struct PoolBackend {
    pool: crate::jobs::Pool<FieldKey>,
    /// The request in flight in each lane.
    handles: BTreeMap<Lane, crate::jobs::RequestHandle>,
    /// Requests submitted since the last flush, one per lane (latest wins), in submission order.
    outbox: Vec<(Lane, FieldKey, FieldJob, crate::jobs::Priority)>,
    cancelled_requests: u64,
    last_stages: Option<StageTimes>,
}

/// The pool slot of a lane: two per field slot (view, look-ahead).
fn pool_slot(lane: Lane) -> crate::jobs::SlotId {
    crate::jobs::SlotId(lane.slot.0.saturating_mul(2).saturating_add(u64::from(lane.look_ahead)))
}

impl PoolBackend {
    /// Starts the pool (CUDA devices when present, else the CPU).
    pub fn start() -> PoolBackend {
        PoolBackend::start_with(crate::jobs::PoolConfig::default())
    }

    /// Starts the pool as `config` asks.
    pub fn start_with(config: crate::jobs::PoolConfig) -> PoolBackend {
        let pool = crate::jobs::Pool::new(config);
        for note in pool.notes() {
            tracing::info!("{note}");
        }
        PoolBackend::with_pool(pool)
    }

    /// Over a given pool (tests choose its engines).
    pub fn with_pool(pool: crate::jobs::Pool<FieldKey>) -> PoolBackend {
        PoolBackend {
            pool,
            handles: BTreeMap::new(),
            outbox: Vec::new(),
            cancelled_requests: 0,
            last_stages: None,
        }
    }
}

impl FieldBackend for PoolBackend {
    fn device_workers(&self) -> Option<crate::jobs::DeviceWorkers> {
        Some(self.pool.device_workers())
    }

    fn name(&self) -> String {
        let names: Vec<String> = self.pool.workers().iter().map(|w| w.name.clone()).collect();
        if names.is_empty() {
            "jobs pool (no workers)".to_string()
        } else {
            names.join(", ")
        }
    }

    fn submit(&mut self, lane: Lane, key: FieldKey, job: FieldJob) {
        let priority = if lane.look_ahead {
            crate::jobs::Priority::Prefetch
        } else {
            crate::jobs::Priority::Normal
        };
        self.outbox.retain(|(l, ..)| *l != lane);
        self.outbox.push((lane, key, job, priority));
    }

    fn flush(&mut self) {
        if self.outbox.is_empty() {
            return;
        }
        let lanes: Vec<Lane> = self.outbox.iter().map(|(l, ..)| *l).collect();
        let requests = std::mem::take(&mut self.outbox)
            .into_iter()
            .map(|(lane, key, job, priority)| (pool_slot(lane), key, job, priority))
            .collect();
        for (lane, h) in lanes.into_iter().zip(self.pool.submit_all(requests)) {
            self.handles.insert(lane, h);
        }
    }

    fn promote(&mut self, slot: FieldSlot) {
        let lane = Lane::look_ahead(slot);
        for (l, _, _, priority) in &mut self.outbox {
            if *l == lane {
                *priority = crate::jobs::Priority::Normal;
            }
        }
        self.pool.set_priority(pool_slot(lane), crate::jobs::Priority::Normal);
    }

    fn cancel(&mut self, lane: Lane) {
        self.outbox.retain(|(l, ..)| *l != lane);
        if let Some(h) = self.handles.remove(&lane) {
            h.cancel();
        }
    }

    fn progress(&self, lane: Lane) -> Option<JobProgress> {
        let h = self.handles.get(&lane)?;
        let fraction = h.progress.fraction();
        Some(JobProgress {
            label: format!("computing the field ({:.0}%)", fraction * 100.0),
            fraction,
        })
    }

    fn try_recv(&mut self) -> Option<FieldResult> {
        loop {
            let r = self.pool.results().try_recv().ok()?;
            self.handles.retain(|_, h| h.generation != r.generation);
            if r.outcome.is_ok() {
                use std::sync::atomic::Ordering::Relaxed;
                let p = &r.progress;
                let s = |ns: &std::sync::atomic::AtomicU64| ns.load(Relaxed) as f64 * 1e-9;
                self.last_stages = Some(StageTimes {
                    queue: s(&p.queue_ns),
                    compute: s(&p.compute_ns),
                    assemble: s(&p.assemble_ns),
                    total: s(&p.total_ns),
                    tiles: p.tiles_done.load(Relaxed),
                    retried: p.tiles_retried.load(Relaxed),
                    engines: r.engines.clone(),
                });
            }
            if matches!(r.outcome, Err(crate::jobs::JobError::Cancelled)) {
                // A superseded request: nothing to show and nothing to report.
                self.cancelled_requests += 1;
                continue;
            }
            return Some(FieldResult {
                key: r.key,
                grid: r.outcome.map(Arc::new).map_err(|e| e.to_string()),
            });
        }
    }

    fn workers(&self) -> Vec<WorkerRow> {
        use std::sync::atomic::Ordering::Relaxed;
        self.pool
            .workers()
            .iter()
            .map(|w| WorkerRow {
                name: w.name.clone(),
                engine: w.engine.clone(),
                busy: w.busy.load(Relaxed),
                tiles_done: w.tiles_done.load(Relaxed),
                tiles_failed: w.tiles_failed.load(Relaxed),
                tiles_cancelled: w.tiles_cancelled.load(Relaxed),
                busy_seconds: w.busy_ns.load(Relaxed) as f64 * 1e-9,
                last_error: w.last_error.lock().ok().and_then(|e| e.clone()),
            })
            .collect()
    }

    fn last_stages(&self) -> Option<StageTimes> {
        self.last_stages.clone()
    }

    fn cancellations(&self) -> Cancellations {
        Cancellations {
            requests: self.cancelled_requests,
            tiles: self
                .pool
                .workers()
                .iter()
                .map(|w| w.tiles_cancelled.load(std::sync::atomic::Ordering::Relaxed))
                .sum(),
        }
    }
}

/// Computes each request on the calling thread when it is submitted (batch commands: `render`, the
/// tests): the field service takes the result at once, so every update shows its frame's fields.
pub struct InlineBackend {
    engine: crate::app::BlockingEngine,
    done: std::collections::VecDeque<FieldResult>,
}

impl InlineBackend {
    pub fn new(engine: crate::app::BlockingEngine) -> InlineBackend {
        InlineBackend {
            engine,
            done: std::collections::VecDeque::new(),
        }
    }
}

impl FieldBackend for InlineBackend {
    fn name(&self) -> String {
        "CPU (on the calling thread)".into()
    }

    fn submit(&mut self, _lane: Lane, key: FieldKey, job: FieldJob) {
        let grid = (self.engine)(&job).map(Arc::new);
        self.done.push_back(FieldResult { key, grid });
    }

    fn cancel(&mut self, _lane: Lane) {}

    fn try_recv(&mut self) -> Option<FieldResult> {
        self.done.pop_front()
    }
}
