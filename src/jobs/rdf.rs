//! RDF frames across devices: pair-distance histograms frame by frame, on the worker pool's workers.
//!
//! Owns [`RdfWorkers`]: a front end that queues frames as device tasks on a [`Pool`]'s workers (the
//! kernel in `compute::cuda::rdf` on each CUDA worker's own engine, so a device has one context for
//! the whole process, and the pass of `compute::wgpu::rdf` on each wgpu worker's; on a pool without
//! devices, its CPU worker runs the cell-list engine of `analysis::rdf`, itself parallel with rayon). A frame is the unit of work: the caller reads frames
//! and evaluates selections on its own thread and submits [`RdfWork`] items; whichever worker is free
//! takes the next one, so devices of different speed balance by themselves. A frame that fails on a
//! device is computed again on the CPU (with a note), so a device fault never loses a frame. Results
//! come back over a bounded channel as [`RdfDone`], carrying their key (generation and frame index) and
//! the frame's checked box; partial results combine by adding histograms
//! (`RdfAccumulator::add_counts`), in any order. At most [`RdfWorkers::capacity`] frames are in flight
//! (queued, running or finished but not yet received), so a worker never waits to hand a result
//! over. Cancellation is by generation: [`RdfWorkers::cancel_before`] makes workers drop queued items
//! of older generations unseen.
//!
//! Used by the `rdf` command (its own pool, blocking: [`RdfWorkers::run`]) and the viewer's RDF panel
//! (the viewer's pool, streaming: `try_submit` each UI frame, `try_recv` the finished frames).

use crate::analysis::rdf::{RdfAccumulator, RdfError, RdfSettings};
use crate::compute::cuda::rdf::PairGeometry;
use crate::jobs::{DeviceChoice, DeviceWorkers, Pool, PoolConfig, TaskEngines};
use crate::model::{Frame, UnitCell};
use crossbeam::channel::{Receiver, RecvTimeoutError, Sender, bounded};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Atom indices of selection 1 and selection 2 in one frame.
pub type SelectionPair = (Arc<Vec<u32>>, Arc<Vec<u32>>);

/// What every frame of one computation shares.
#[derive(Debug)]
pub struct RdfRequest {
    pub generation: u64,
    pub settings: RdfSettings,
    /// One exclusion group id per atom, when `settings.exclude_same_group` is set.
    pub groups: Option<Vec<u32>>,
}

/// One frame to histogram.
#[derive(Clone, Debug)]
pub struct RdfWork {
    pub request: Arc<RdfRequest>,
    pub frame_index: usize,
    pub frame: Arc<Frame>,
    pub sel1: Arc<Vec<u32>>,
    pub sel2: Arc<Vec<u32>>,
}

/// One histogrammed frame (or why it could not be).
#[derive(Clone, Debug)]
pub struct RdfDone {
    pub generation: u64,
    pub frame_index: usize,
    /// Counts per bin and the frame's checked box.
    pub result: Result<(Vec<u64>, Option<UnitCell>), RdfError>,
    pub sel1: Arc<Vec<u32>>,
    pub sel2: Arc<Vec<u32>>,
    /// Engine that produced the counts ("cuda:0 NVIDIA H100 ...", "cpu").
    pub engine: String,
    /// Pair distances evaluated (n1 * n2 on a GPU; the cell list evaluates fewer).
    pub pairs: u64,
    pub seconds: f64,
    /// Set when a device failed on this frame and the CPU computed it instead.
    pub note: Option<String>,
}

/// The RDF front end of a pool's workers.
pub struct RdfWorkers {
    workers: DeviceWorkers,
    /// A pool started for these workers alone (the `rdf` command, tests); `None` on a shared pool.
    own_pool: Option<Pool<()>>,
    done_tx: Sender<RdfDone>,
    done: Receiver<RdfDone>,
    /// Frames submitted and not yet received (or dropped as cancelled).
    in_flight: Arc<AtomicUsize>,
    capacity: usize,
    oldest_live: Arc<AtomicU64>,
}

impl RdfWorkers {
    /// Starts a pool of its own as `preference` asks (CUDA devices from `ORBITFIELD_DEVICES` or all).
    /// Never panics; every reason a device is not used is one line in [`RdfWorkers::notes`].
    pub fn new(preference: DeviceChoice) -> RdfWorkers {
        RdfWorkers::with_devices(preference, None)
    }

    /// As [`RdfWorkers::new`] on the CUDA devices `devices` (`None`: `ORBITFIELD_DEVICES` or all), as a
    /// batch rank sharing its node's devices asks.
    pub fn with_devices(preference: DeviceChoice, devices: Option<Vec<usize>>) -> RdfWorkers {
        let pool: Pool<()> = Pool::new(PoolConfig {
            preference,
            devices,
            ..PoolConfig::default()
        });
        let mut w = RdfWorkers::on(pool.device_workers());
        w.own_pool = Some(pool);
        w
    }

    /// Runs on the workers of an existing pool (the viewer's), which must outlive the computation:
    /// once that pool is gone, submissions fail and [`RdfWorkers::run`] stops with
    /// [`RunError::WorkersGone`].
    pub fn on(workers: DeviceWorkers) -> RdfWorkers {
        let capacity = 3 * workers.count();
        let (done_tx, done) = bounded::<RdfDone>(capacity);
        RdfWorkers {
            workers,
            own_pool: None,
            done_tx,
            done,
            in_flight: Arc::new(AtomicUsize::new(0)),
            capacity,
            oldest_live: Arc::new(AtomicU64::new(0)),
        }
    }

    /// Starts one CPU worker only (tests, and machines without a GPU).
    pub fn cpu_only() -> RdfWorkers {
        RdfWorkers::new(DeviceChoice::Cpu)
    }

    /// Workers by name (device name included).
    pub fn worker_names(&self) -> &[String] {
        self.workers.names()
    }

    /// Why devices are not used (one line each).
    pub fn notes(&self) -> &[String] {
        self.workers.notes()
    }

    /// True when the frames run on GPU workers.
    pub fn has_gpu(&self) -> bool {
        self.workers.has_gpu()
    }

    /// Frames that may be in flight at once (queued, running, or finished and not yet received).
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Queued items of generations below `generation` are dropped by the workers unseen.
    pub fn cancel_before(&self, generation: u64) {
        self.oldest_live.fetch_max(generation, Ordering::AcqRel);
    }

    /// Submits a frame unless [`RdfWorkers::capacity`] frames are in flight or the workers have
    /// gone; gives the item back then.
    pub fn try_submit(&self, work: RdfWork) -> Result<(), RdfWork> {
        if self.in_flight.fetch_add(1, Ordering::AcqRel) >= self.capacity {
            self.in_flight.fetch_sub(1, Ordering::AcqRel);
            return Err(work);
        }
        let (done, live, in_flight) = (self.done_tx.clone(), self.oldest_live.clone(), self.in_flight.clone());
        let item = work.clone();
        let task = Box::new(move |on: TaskEngines<'_>| {
            let generation = item.request.generation;
            if generation < live.load(Ordering::Acquire) {
                in_flight.fetch_sub(1, Ordering::AcqRel);
                return;
            }
            let t0 = Instant::now();
            let (result, engine, pairs, note) = histogram(on, &item);
            // Never blocks: the channel holds `capacity` results and at most that many are in flight.
            let _ = done.try_send(RdfDone {
                generation,
                frame_index: item.frame_index,
                result,
                sel1: item.sel1.clone(),
                sel2: item.sel2.clone(),
                engine,
                pairs,
                seconds: t0.elapsed().as_secs_f64(),
                note,
            });
        });
        match self.workers.push(task) {
            Ok(()) => Ok(()),
            Err(_) => {
                self.in_flight.fetch_sub(1, Ordering::AcqRel);
                Err(work)
            }
        }
    }

    /// A finished frame, if one is ready.
    pub fn try_recv(&self) -> Option<RdfDone> {
        let d = self.done.try_recv().ok()?;
        self.in_flight.fetch_sub(1, Ordering::AcqRel);
        Some(d)
    }

    /// The next finished frame, waiting for it; `None` once the pool has shut down.
    fn recv(&self) -> Option<RdfDone> {
        loop {
            match self.done.recv_timeout(Duration::from_millis(100)) {
                Ok(d) => {
                    self.in_flight.fetch_sub(1, Ordering::AcqRel);
                    return Some(d);
                }
                Err(RecvTimeoutError::Timeout) if self.workers.is_open() => {}
                Err(_) => return None,
            }
        }
    }

    /// Histograms every frame `frames` yields into `acc` (blocking), calling `progress` after each
    /// finished frame with (frames done, the finished frame's result). Frames stay in flight on
    /// several workers at once; at most the queue's capacity plus one frame per worker is held.
    /// Stops at the first error (the frame's error or one `frames` returns).
    pub fn run<I, E>(
        &self,
        acc: &mut RdfAccumulator,
        groups: Option<Vec<u32>>,
        frames: I,
        mut progress: impl FnMut(usize, &RdfDone),
    ) -> Result<Vec<String>, RunError<E>>
    where
        I: IntoIterator<Item = Result<(usize, Frame, Arc<Vec<u32>>, Arc<Vec<u32>>), E>>,
    {
        static GENERATION: AtomicU64 = AtomicU64::new(1);
        let generation = GENERATION.fetch_add(1, Ordering::Relaxed);
        let request = Arc::new(RdfRequest {
            generation,
            settings: acc.settings.clone(),
            groups,
        });
        let mut notes = Vec::new();
        let mut in_flight = 0usize;
        let mut done = 0usize;
        let mut finish = |d: RdfDone, acc: &mut RdfAccumulator, done: &mut usize| -> Result<(), RdfError> {
            let (counts, cell) = d.result.clone()?;
            acc.add_counts(&counts, cell, &d.sel1, &d.sel2, request.groups.as_deref());
            if let Some(n) = &d.note {
                notes.push(n.clone());
            }
            *done += 1;
            progress(*done, &d);
            Ok(())
        };
        let fail = |e: RunError<E>| {
            self.cancel_before(generation + 1);
            Err(e)
        };
        for item in frames {
            let (frame_index, frame, sel1, sel2) = match item {
                Ok(x) => x,
                Err(e) => return fail(RunError::Frames(e)),
            };
            let mut work = RdfWork {
                request: request.clone(),
                frame_index,
                frame: Arc::new(frame),
                sel1,
                sel2,
            };
            // Submit, taking finished frames whenever the queue is full.
            loop {
                match self.try_submit(work) {
                    Ok(()) => {
                        in_flight += 1;
                        break;
                    }
                    Err(w) => {
                        work = w;
                        match self.recv() {
                            Some(d) if d.generation == generation => {
                                in_flight -= 1;
                                if let Err(e) = finish(d, acc, &mut done) {
                                    return fail(RunError::Rdf(e));
                                }
                            }
                            Some(_) => {}
                            None => return fail(RunError::WorkersGone),
                        }
                    }
                }
            }
        }
        while in_flight > 0 {
            match self.recv() {
                Some(d) if d.generation == generation => {
                    in_flight -= 1;
                    if let Err(e) = finish(d, acc, &mut done) {
                        return fail(RunError::Rdf(e));
                    }
                }
                Some(_) => {}
                None => return fail(RunError::WorkersGone),
            }
        }
        Ok(notes)
    }
}

/// Why [`RdfWorkers::run`] stopped.
#[derive(Debug, thiserror::Error)]
pub enum RunError<E> {
    #[error("{0}")]
    Rdf(RdfError),
    #[error("{0}")]
    Frames(E),
    #[error("the RDF workers have shut down")]
    WorkersGone,
}

impl Drop for RdfWorkers {
    fn drop(&mut self) {
        // Frames still queued on a shared pool are dropped by its workers unseen.
        self.cancel_before(u64::MAX);
    }
}

type Histogram = (
    Result<(Vec<u64>, Option<UnitCell>), RdfError>,
    String,
    u64,
    Option<String>,
);

/// One frame's counts on the worker's device engine (CUDA or wgpu), or on the CPU engine where the
/// worker has none or the device fails (with a note).
fn histogram(on: TaskEngines<'_>, w: &RdfWork) -> Histogram {
    let req = &w.request;
    let acc = match RdfAccumulator::new(req.settings.clone()) {
        Ok(a) => a,
        Err(e) => return (Err(e), "cpu".into(), 0, None),
    };
    let groups = if req.settings.exclude_same_group {
        req.groups.as_deref()
    } else {
        None
    };
    let cell = match acc.check_frame(w.frame_index, &w.frame, &w.sel1, &w.sel2, groups) {
        Ok(c) => c,
        Err(e) => return (Err(e), "cpu".into(), 0, None),
    };
    let mut note = None;
    let failed = |e: &dyn std::fmt::Display| {
        Some(format!(
            "frame {}: the GPU failed ({e}); computed on the CPU instead",
            w.frame_index
        ))
    };
    if let Some(gpu) = on.cuda {
        let geom = PairGeometry::new(&w.frame, cell, &w.sel1, &w.sel2, groups);
        match gpu.rdf_counts(&geom, &req.settings) {
            Ok(counts) => {
                let name = format!("cuda:{} {}", gpu.ordinal(), gpu.device_name());
                return (Ok((counts, cell)), name, geom.pairs(), None);
            }
            Err(e) => note = failed(&e),
        }
    }
    #[cfg(feature = "gui")]
    if let Some(gpu) = on.wgpu {
        use crate::compute::SlabEngine;
        let geom = PairGeometry::new(&w.frame, cell, &w.sel1, &w.sel2, groups);
        match gpu.rdf_counts(&geom, &req.settings) {
            Ok(counts) => return (Ok((counts, cell)), gpu.name(), geom.pairs(), None),
            Err(e) => note = failed(&e),
        }
    }
    let counts = acc.frame_counts_cpu(&w.frame, cell, &w.sel1, &w.sel2, groups);
    let pairs = w.sel1.len() as u64 * w.sel2.len() as u64;
    (counts.map(|c| (c, cell)), "cpu".into(), pairs, note)
}
