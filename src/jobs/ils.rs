//! Implicit ligand sampling frames across devices, on the worker pool's workers.
//!
//! Owns [`IlsWorkers`]: frames queued as device tasks on a [`Pool`]'s workers (the kernel of
//! `compute::cuda::ils` on each CUDA worker's own engine, the passes of `compute::wgpu::ils` on each
//! wgpu worker's; on a pool without devices its CPU worker runs the CPU engine of
//! `compute::cpu::ils`, itself parallel with rayon), and [`frame_voxel_means`], which the viewer's
//! front end (`ils_live`) shares. A frame is the unit of
//! work: the caller reads frames, fits and places their atoms on its own thread and submits them;
//! whichever worker is free takes the next, so devices of different speed balance by themselves. A
//! frame that fails on a device is computed again on the CPU (with a note). Results come back over a
//! bounded channel with their frame index; the caller adds the voxel means to its
//! `model::ils::OccupancySums` (sums add in any order). At most [`IlsWorkers::capacity`] frames are
//! in flight. Used by the `grid ils` command and the tests.

use crate::compute::ils::{IlsSetup, PlacedAtoms};
use crate::jobs::{DeviceChoice, DeviceWorkers, Pool, PoolConfig, TaskEngines};
use crossbeam::channel::{Receiver, RecvTimeoutError, Sender, bounded};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// One finished frame.
#[derive(Clone, Debug)]
pub struct IlsDone {
    pub frame_index: usize,
    /// Voxel means of the occupancy (x fastest), or why the frame failed.
    pub result: Result<Vec<f64>, String>,
    /// Engine that computed it ("cuda:0 NVIDIA H200", "cpu").
    pub engine: String,
    pub seconds: f64,
    /// Set when a device failed on this frame and the CPU computed it instead.
    pub note: Option<String>,
}

/// Worker threads per CUDA device for ILS frames, each with its own engine and stream: one frame's
/// atom layout on the host overlaps other frames' kernels, and frames in flight at once keep the
/// device busy past each kernel's tail. Two workers fall into step (both lay out their next frame
/// while the device idles); four keep them staggered (`benches/RESULTS.md`, "Implicit ligand
/// sampling", "Frames in flight").
pub const ILS_WORKERS_PER_GPU: usize = 4;

/// The ILS front end of a pool's workers, for one setup.
pub struct IlsWorkers {
    workers: DeviceWorkers,
    _own_pool: Option<Pool<()>>,
    setup: Arc<IlsSetup>,
    done_tx: Sender<IlsDone>,
    done: Receiver<IlsDone>,
    in_flight: Arc<AtomicUsize>,
    capacity: usize,
}

impl IlsWorkers {
    /// Starts a pool of its own as `preference` asks, on the CUDA devices `devices` (`None`:
    /// `ORBITFIELD_DEVICES` or all).
    pub fn with_devices(preference: DeviceChoice, devices: Option<Vec<usize>>, setup: Arc<IlsSetup>) -> IlsWorkers {
        let pool: Pool<()> = Pool::new(PoolConfig {
            preference,
            devices,
            gpu_workers_per_device: ILS_WORKERS_PER_GPU,
            ..PoolConfig::default()
        });
        let workers = pool.device_workers();
        let capacity = 2 * workers.count() + 1;
        let (done_tx, done) = bounded::<IlsDone>(capacity);
        IlsWorkers {
            workers,
            _own_pool: Some(pool),
            setup,
            done_tx,
            done,
            in_flight: Arc::new(AtomicUsize::new(0)),
            capacity,
        }
    }

    /// Workers by name (device name included).
    pub fn worker_names(&self) -> &[String] {
        self.workers.names()
    }

    /// Why devices are not used (one line each).
    pub fn notes(&self) -> &[String] {
        self.workers.notes()
    }

    /// True when frames run on GPU workers.
    pub fn has_gpu(&self) -> bool {
        self.workers.has_gpu()
    }

    /// Frames that may be in flight at once.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Frames submitted and not yet received.
    pub fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::Acquire)
    }

    /// Submits a frame's placed atoms unless [`IlsWorkers::capacity`] frames are in flight or the
    /// workers have gone; gives them back then.
    pub fn try_submit(&self, frame_index: usize, placed: Arc<PlacedAtoms>) -> Result<(), Arc<PlacedAtoms>> {
        if self.in_flight.fetch_add(1, Ordering::AcqRel) >= self.capacity {
            self.in_flight.fetch_sub(1, Ordering::AcqRel);
            return Err(placed);
        }
        let (done, setup, atoms) = (self.done_tx.clone(), self.setup.clone(), placed.clone());
        let task = Box::new(move |on: TaskEngines<'_>| {
            let t0 = Instant::now();
            let (v, engine, note) = frame_voxel_means(on, &setup, &atoms, frame_index, &|| {}, &|| false);
            // Never blocks: the channel holds `capacity` results and at most that many are in flight.
            let _ = done.try_send(IlsDone {
                frame_index,
                result: Ok(v),
                engine,
                seconds: t0.elapsed().as_secs_f64(),
                note,
            });
        });
        match self.workers.push(task) {
            Ok(()) => Ok(()),
            Err(_) => {
                self.in_flight.fetch_sub(1, Ordering::AcqRel);
                Err(placed)
            }
        }
    }

    /// A finished frame, if one is ready.
    pub fn try_recv(&self) -> Option<IlsDone> {
        let d = self.done.try_recv().ok()?;
        self.in_flight.fetch_sub(1, Ordering::AcqRel);
        Some(d)
    }

    /// The next finished frame, waiting for it; `None` once the pool has shut down.
    pub fn recv(&self) -> Option<IlsDone> {
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

    /// Submits `placed`, receiving finished frames into `take` while the queue is full.
    pub fn submit_blocking(
        &self,
        frame_index: usize,
        placed: Arc<PlacedAtoms>,
        take: &mut dyn FnMut(IlsDone) -> Result<(), String>,
    ) -> Result<(), String> {
        let mut placed = placed;
        loop {
            match self.try_submit(frame_index, placed) {
                Ok(()) => return Ok(()),
                Err(p) => {
                    placed = p;
                    let d = self.recv().ok_or("the ILS workers have shut down")?;
                    take(d)?;
                }
            }
        }
    }

    /// Receives every frame still in flight into `take`.
    pub fn drain(&self, take: &mut dyn FnMut(IlsDone) -> Result<(), String>) -> Result<(), String> {
        while self.in_flight() > 0 {
            let d = self.recv().ok_or("the ILS workers have shut down")?;
            take(d)?;
        }
        Ok(())
    }
}

/// One frame's voxel means on the worker's device engine (CUDA or wgpu), or on the CPU engine where
/// the worker has none or the device fails: the means, the engine's name, and a note when a device
/// failed (naming frame `frame_label`) and the CPU computed the frame instead.
pub fn frame_voxel_means(
    on: TaskEngines<'_>,
    setup: &IlsSetup,
    atoms: &PlacedAtoms,
    frame_label: usize,
    row_done: &(dyn Fn() + Sync),
    stop: &(dyn Fn() -> bool + Sync),
) -> (Vec<f64>, String, Option<String>) {
    let failed = |e: &dyn std::fmt::Display| {
        Some(format!(
            "frame {frame_label}: the GPU failed ({e}); computed on the CPU instead"
        ))
    };
    let mut note = None;
    if let Some(gpu) = on.cuda {
        match gpu.ils_voxel_means(setup, atoms) {
            Ok(v) => return (v, format!("cuda:{} {}", gpu.ordinal(), gpu.device_name()), None),
            Err(e) => note = failed(&e),
        }
    }
    #[cfg(feature = "gui")]
    if let Some(gpu) = on.wgpu {
        use crate::compute::SlabEngine;
        match gpu.ils_voxel_means(setup, atoms) {
            Ok(v) => return (v, gpu.name(), None),
            Err(e) => note = failed(&e),
        }
    }
    (
        crate::compute::cpu::ils::voxel_means_counting(setup, atoms, row_done, stop),
        "cpu".into(),
        note,
    )
}
