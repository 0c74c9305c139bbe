//! Implicit ligand sampling frames for the viewer: the running map, fed frame by frame on the
//! viewer's worker pool, cancellable by generation.
//!
//! Owns [`IlsLiveWorkers`]: a front end that queues [`IlsWork`] items (one frame's placed atoms and
//! the setup they share) as device tasks on a pool's workers — the CUDA kernel of
//! `compute::cuda::ils` or the wgpu passes of `compute::wgpu::ils` on a GPU worker's own engine,
//! else the CPU engine of `compute::cpu::ils` — the same engines and fallback as the `grid ils`
//! command's `jobs::ils` (its `frame_voxel_means`). The viewer's thread reads
//! frames and places atoms (a few per UI frame, never blocking: `try_submit`), and takes finished
//! frames with `try_recv`; each carries its generation, so the frames of a cancelled or restarted
//! computation are dropped when they arrive, and queued ones are skipped unseen
//! ([`IlsLiveWorkers::cancel_before`]). At most [`IlsLiveWorkers::capacity`] frames are in flight,
//! so a worker never waits to hand a result over. Used by `app::ils`.

use crate::compute::ils::{IlsSetup, PlacedAtoms};
use crate::jobs::{DeviceChoice, DeviceWorkers, Pool, PoolConfig, TaskEngines};
use crossbeam::channel::{Receiver, Sender, bounded};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// One frame to add to a running map.
#[derive(Clone, Debug)]
pub struct IlsWork {
    pub generation: u64,
    pub frame_index: usize,
    pub setup: Arc<IlsSetup>,
    pub placed: Arc<PlacedAtoms>,
}

/// One finished frame.
#[derive(Clone, Debug)]
pub struct IlsLiveDone {
    pub generation: u64,
    pub frame_index: usize,
    /// Voxel means of the occupancy (x fastest).
    pub voxel_means: Vec<f64>,
    /// Engine that computed it ("cuda:0 NVIDIA H200", "cpu").
    pub engine: String,
    /// Set when a device failed on this frame and the CPU computed it instead.
    pub note: Option<String>,
}

/// The viewer's ILS front end of a pool's workers.
pub struct IlsLiveWorkers {
    workers: DeviceWorkers,
    /// A pool started for these workers alone (no field engine in the viewer, tests).
    _own_pool: Option<Pool<()>>,
    done_tx: Sender<IlsLiveDone>,
    done: Receiver<IlsLiveDone>,
    in_flight: Arc<AtomicUsize>,
    capacity: usize,
    oldest_live: Arc<AtomicU64>,
    /// Rows of voxels finished of the frames still being computed on the CPU engine.
    partial_rows: Arc<AtomicUsize>,
}

impl IlsLiveWorkers {
    /// Runs on the workers of an existing pool (the viewer's), which must outlive the computation.
    pub fn on(workers: DeviceWorkers) -> IlsLiveWorkers {
        let capacity = 2 * workers.count() + 1;
        let (done_tx, done) = bounded::<IlsLiveDone>(capacity);
        IlsLiveWorkers {
            workers,
            _own_pool: None,
            done_tx,
            done,
            in_flight: Arc::new(AtomicUsize::new(0)),
            capacity,
            oldest_live: Arc::new(AtomicU64::new(0)),
            partial_rows: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// Starts a pool of its own as `preference` asks (CUDA devices from `ORBITFIELD_DEVICES` or all).
    pub fn new(preference: DeviceChoice) -> IlsLiveWorkers {
        let pool: Pool<()> = Pool::new(PoolConfig {
            preference,
            gpu_workers_per_device: super::ils::ILS_WORKERS_PER_GPU,
            ..PoolConfig::default()
        });
        let mut w = IlsLiveWorkers::on(pool.device_workers());
        w._own_pool = Some(pool);
        w
    }

    /// Workers by name (device name included).
    pub fn worker_names(&self) -> &[String] {
        self.workers.names()
    }

    /// Frames that may be in flight at once.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Frames submitted and not yet received (or skipped as cancelled).
    pub fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::Acquire)
    }

    /// Rows of voxels finished of the frames still being computed on the CPU engine (a frame
    /// has `ny * nz`; a GPU's frames take milliseconds and count none).
    pub fn partial_rows(&self) -> usize {
        self.partial_rows.load(Ordering::Acquire)
    }

    /// Queued items of generations below `generation` are skipped by the workers unseen.
    pub fn cancel_before(&self, generation: u64) {
        self.oldest_live.fetch_max(generation, Ordering::AcqRel);
    }

    /// Submits a frame unless [`IlsLiveWorkers::capacity`] frames are in flight or the workers have
    /// gone; gives the item back then.
    pub fn try_submit(&self, work: IlsWork) -> Result<(), IlsWork> {
        if self.in_flight.fetch_add(1, Ordering::AcqRel) >= self.capacity {
            self.in_flight.fetch_sub(1, Ordering::AcqRel);
            return Err(work);
        }
        let (done, live, in_flight) = (self.done_tx.clone(), self.oldest_live.clone(), self.in_flight.clone());
        let partial = self.partial_rows.clone();
        let item = work.clone();
        let task = Box::new(move |on: TaskEngines<'_>| {
            if item.generation < live.load(Ordering::Acquire) {
                in_flight.fetch_sub(1, Ordering::AcqRel);
                return;
            }
            let mine = AtomicUsize::new(0);
            let row_done = || {
                mine.fetch_add(1, Ordering::Relaxed);
                partial.fetch_add(1, Ordering::AcqRel);
            };
            // A cancelled run's frame stops within a row on the CPU engine (its result, left
            // incomplete, carries the old generation and is dropped).
            let stop = || item.generation < live.load(Ordering::Acquire);
            let (v, engine, note) =
                super::ils::frame_voxel_means(on, &item.setup, &item.placed, item.frame_index + 1, &row_done, &stop);
            partial.fetch_sub(mine.load(Ordering::Acquire), Ordering::AcqRel);
            // Never blocks: the channel holds `capacity` results and at most that many are in flight.
            let _ = done.try_send(IlsLiveDone {
                generation: item.generation,
                frame_index: item.frame_index,
                voxel_means: v,
                engine,
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
    pub fn try_recv(&self) -> Option<IlsLiveDone> {
        let d = self.done.try_recv().ok()?;
        self.in_flight.fetch_sub(1, Ordering::AcqRel);
        Some(d)
    }
}
