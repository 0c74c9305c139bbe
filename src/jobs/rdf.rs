//! RDF frames across devices: persistent workers that histogram pair distances frame by frame.
//!
//! Owns [`RdfWorkers`]: one named thread per usable CUDA device (kernel in `compute::cuda::rdf`) or,
//! without one, a CPU worker (the cell-list engine of `analysis::rdf`, itself parallel with rayon).
//! A frame is the unit of work: the caller reads frames and evaluates selections on its own thread and
//! submits [`RdfWork`] items over a bounded channel; whichever worker is free takes the next one, so
//! devices of different speed balance by themselves. A frame that fails on a device is computed again on
//! the CPU (with a note), so a device fault never loses a frame. Results come back over a bounded
//! channel as [`RdfDone`], carrying their key (generation and frame index) and the frame's checked box;
//! partial results combine by adding histograms (`RdfAccumulator::add_counts`), in any order.
//! Cancellation is by generation: [`RdfWorkers::cancel_before`] makes workers drop queued items of
//! older generations unseen.
//!
//! Used by the `rdf` command (blocking: [`RdfWorkers::run`]) and the viewer's RDF panel (streaming:
//! `try_submit` each UI frame, `try_recv` the finished frames).

use crate::analysis::rdf::{RdfAccumulator, RdfError, RdfSettings};
use crate::compute::cuda::{self, CudaEngine, rdf::PairGeometry};
use crate::jobs::DevicePreference;
use crate::model::{Frame, UnitCell};
use crossbeam::channel::{Receiver, Sender, TryRecvError, TrySendError, bounded};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::Instant;

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

/// The worker set.
pub struct RdfWorkers {
    work: Option<Sender<RdfWork>>,
    done: Receiver<RdfDone>,
    threads: Vec<JoinHandle<()>>,
    oldest_live: Arc<AtomicU64>,
    names: Vec<String>,
    notes: Vec<String>,
}

enum Engine {
    Gpu(Arc<CudaEngine>),
    Cpu,
}

impl RdfWorkers {
    /// Starts workers as `preference` asks (CUDA devices from `ORBITFIELD_DEVICES` or all). Never
    /// panics; every reason a device is not used is one line in [`RdfWorkers::notes`].
    pub fn new(preference: DevicePreference) -> RdfWorkers {
        let mut notes = Vec::new();
        let mut engines = Vec::new();
        if preference != DevicePreference::Cpu {
            let (selection, env_notes) = cuda::devices_from_env();
            notes.extend(env_notes.iter().map(ToString::to_string));
            let found = cuda::discover(selection.as_deref());
            if found.engines.is_empty() {
                let why = if found.notes.is_empty() {
                    "no CUDA device".to_string()
                } else {
                    found
                        .notes
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join("; ")
                };
                notes.push(format!("RDF on the CPU: {why}"));
            } else {
                notes.extend(found.notes.iter().map(ToString::to_string));
            }
            engines.extend(found.engines.into_iter().map(Engine::Gpu));
        }
        if engines.is_empty() {
            engines.push(Engine::Cpu);
        }
        RdfWorkers::start(engines, notes)
    }

    /// Starts one CPU worker only (tests, and machines without a GPU).
    pub fn cpu_only() -> RdfWorkers {
        RdfWorkers::start(vec![Engine::Cpu], Vec::new())
    }

    fn start(engines: Vec<Engine>, mut notes: Vec<String>) -> RdfWorkers {
        let n = engines.len().max(1);
        let (work_tx, work_rx) = bounded::<RdfWork>(2 * n);
        let (done_tx, done_rx) = bounded::<RdfDone>(4 * n);
        let oldest_live = Arc::new(AtomicU64::new(0));
        let mut threads = Vec::new();
        let mut names = Vec::new();
        for (k, engine) in engines.into_iter().enumerate() {
            let name = match &engine {
                Engine::Gpu(e) => format!("orbitfield-rdf-gpu{k} ({})", e.device_name()),
                Engine::Cpu => format!("orbitfield-rdf-cpu{k}"),
            };
            let (rx, tx, live) = (work_rx.clone(), done_tx.clone(), oldest_live.clone());
            match std::thread::Builder::new()
                .name(format!("orbitfield-rdf{k}"))
                .spawn(move || worker(engine, rx, tx, live))
            {
                Ok(h) => {
                    threads.push(h);
                    names.push(name);
                }
                Err(e) => notes.push(format!("could not start RDF worker {name}: {e}")),
            }
        }
        RdfWorkers {
            work: Some(work_tx),
            done: done_rx,
            threads,
            oldest_live,
            names,
            notes,
        }
    }

    /// Workers by name (device name included).
    pub fn worker_names(&self) -> &[String] {
        &self.names
    }

    /// Why devices are not used (one line each).
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// True when at least one worker runs on a GPU.
    pub fn has_gpu(&self) -> bool {
        self.names.iter().any(|n| n.contains("-gpu"))
    }

    /// Queued items of generations below `generation` are dropped by the workers unseen.
    pub fn cancel_before(&self, generation: u64) {
        self.oldest_live.fetch_max(generation, Ordering::AcqRel);
    }

    /// Submits a frame, waiting while the queue is full. False when the workers have gone.
    pub fn submit(&self, work: RdfWork) -> bool {
        self.work.as_ref().is_some_and(|w| w.send(work).is_ok())
    }

    /// Submits a frame unless the queue is full; gives the item back when it is.
    pub fn try_submit(&self, work: RdfWork) -> Result<(), RdfWork> {
        match self.work.as_ref() {
            Some(w) => match w.try_send(work) {
                Ok(()) => Ok(()),
                Err(TrySendError::Full(x)) | Err(TrySendError::Disconnected(x)) => Err(x),
            },
            None => Err(work),
        }
    }

    /// A finished frame, if one is ready.
    pub fn try_recv(&self) -> Option<RdfDone> {
        match self.done.try_recv() {
            Ok(d) => Some(d),
            Err(TryRecvError::Empty) | Err(TryRecvError::Disconnected) => None,
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
                        match self.done.recv() {
                            Ok(d) if d.generation == generation => {
                                in_flight -= 1;
                                if let Err(e) = finish(d, acc, &mut done) {
                                    return fail(RunError::Rdf(e));
                                }
                            }
                            Ok(_) => {}
                            Err(_) => return fail(RunError::WorkersGone),
                        }
                    }
                }
            }
        }
        while in_flight > 0 {
            match self.done.recv() {
                Ok(d) if d.generation == generation => {
                    in_flight -= 1;
                    if let Err(e) = finish(d, acc, &mut done) {
                        return fail(RunError::Rdf(e));
                    }
                }
                Ok(_) => {}
                Err(_) => return fail(RunError::WorkersGone),
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
        self.cancel_before(u64::MAX);
        // Closing the work channel ends the workers once they finish their current frame; drain the
        // results so none blocks on a full channel.
        self.work = None;
        while !self.threads.iter().all(|t| t.is_finished()) {
            while self.done.try_recv().is_ok() {}
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

fn worker(engine: Engine, work: Receiver<RdfWork>, done: Sender<RdfDone>, oldest_live: Arc<AtomicU64>) {
    while let Ok(w) = work.recv() {
        let generation = w.request.generation;
        if generation < oldest_live.load(Ordering::Acquire) {
            continue;
        }
        let t0 = Instant::now();
        let (result, engine_name, pairs, note) = histogram(&engine, &w);
        let out = RdfDone {
            generation,
            frame_index: w.frame_index,
            result,
            sel1: w.sel1.clone(),
            sel2: w.sel2.clone(),
            engine: engine_name,
            pairs,
            seconds: t0.elapsed().as_secs_f64(),
            note,
        };
        if done.send(out).is_err() {
            return;
        }
    }
}

type Histogram = (
    Result<(Vec<u64>, Option<UnitCell>), RdfError>,
    String,
    u64,
    Option<String>,
);

fn histogram(engine: &Engine, w: &RdfWork) -> Histogram {
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
    if let Engine::Gpu(gpu) = engine {
        let geom = PairGeometry::new(&w.frame, cell, &w.sel1, &w.sel2, groups);
        match gpu.rdf_counts(&geom, &req.settings) {
            Ok(counts) => {
                let name = format!("cuda:{} {}", gpu.ordinal(), gpu.device_name());
                return (Ok((counts, cell)), name, geom.pairs(), None);
            }
            Err(e) => {
                note = Some(format!(
                    "frame {}: the GPU failed ({e}); computed on the CPU instead",
                    w.frame_index
                ))
            }
        }
    }
    let counts = acc.frame_counts_cpu(&w.frame, cell, &w.sel1, &w.sel2, groups);
    let pairs = w.sel1.len() as u64 * w.sel2.len() as u64;
    (counts.map(|c| (c, cell)), "cpu".into(), pairs, note)
}
