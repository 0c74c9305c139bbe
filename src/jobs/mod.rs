//! Threads, queues and scheduling: the only module that spawns threads.
//!
//! A [`Pool`] owns one persistent, named worker thread per CUDA device (its context and stream are
//! created once, at pool start) and CPU worker threads. Requests are split into z-slab tiles that all
//! workers pull from one shared queue, each sized for the worker that takes it (large slabs for GPUs,
//! guided ones from the devices' measured rates when there are several, `tiles`; thin ones for the
//! CPU), so fast and slow devices balance by themselves. A tile whose launch fails
//! (out of memory, launch error, NaN in the output) goes to a retry stack: once more on another
//! device, then on the CPU engine; a failure there fails the request. Requests live in latest-wins
//! slots: submitting to a slot cancels the request pending there (the running one stops before its
//! next tile). Tiles are handed out round-robin over the live requests (one tile of each in turn), so
//! a large request never starves a small one submitted after it; look-ahead requests
//! ([`Priority::Prefetch`]) get tiles only while no normal request has tiles left. Every request
//! reports progress atomics; results come back over a bounded channel, tagged with the request's key
//! and generation. Requests that one engine call can compute together ([`crate::compute::batchable`]:
//! several orbitals of one frame, asked for by several representations) leave the queue as one batch
//! of tiles ([`SlabEngine::compute_slabs`]); each keeps its own slot, generation, cancellation and
//! result, and a failed batch is retried request by request. [`Pool::submit_all`] queues such
//! requests together, before any worker can take the first alone. Large grids given back
//! ([`Pool::recycle`]) are written into by the next large request (`pool_buffers`: kept buffers,
//! optionally registered with the CUDA driver while the pool owns them).
//!
//! The same workers run device tasks other than field tiles (RDF frames, [`rdf`]; ILS frames,
//! [`ils`], on CUDA and wgpu workers alike: a task receives its worker's engine, [`TaskEngines`]): a
//! [`DeviceWorkers`] handle queues them, and a worker takes one whenever no normal request has tiles
//! left, before look-ahead tiles. So each device has one context and one stream for the whole
//! process, whatever it computes.
//!
//! wgpu devices (AMD, Intel, Apple, any Vulkan/Metal/DirectX 12 adapter) get workers of the same kind
//! through [`adapter_worker`] (one per hardware adapter, `compute::wgpu::engine::WgpuEngine`; NVIDIA
//! adapters only where CUDA found no device; `ORBITFIELD_WGPU` changes that); fields that engine does not compute go to the CPU workers.
//!
//! Besides the pool: [`task::Task`] runs one-off viewer computations on a thread of their own,
//! [`save::SaveJob`] the viewer's writes of atoms and frames to a file, [`fetch::FetchJob`] PDB entries'
//! downloads, [`pair::PairWorker`] the second half of a large frame's decoding, and [`pb::PbWorker`]
//! Poisson-Boltzmann potentials frame by frame.
//!
//! Used by the CLI (`compute_grid`), the bench command and the viewer.

#[cfg(feature = "gui")]
pub mod adapter_worker;
pub mod cartoon;
pub mod fetch;
pub mod lanes;
pub mod mesher;
#[cfg(feature = "gui")]
pub mod movie;
pub mod packer;
pub mod pair;
pub mod pb;
pub mod rdf;
pub mod save;
pub mod task;
pub mod vertex_values;
// Implicit ligand sampling frames on the pool's workers.
pub mod ils;
pub mod ils_live;

use crate::compute::cpu::CpuEngine;
use crate::compute::cuda::{self, CudaEngine};
use crate::compute::{ComputeError, FieldJob, SlabEngine, slab_len};
use crate::model::Grid3;
use crossbeam::channel::{Receiver, Sender, bounded};
use std::collections::{BTreeMap, VecDeque};
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

mod worker;
use worker::*;

mod output;
use output::*;

mod tiles;

mod pool_buffers;
use pool_buffers::RECYCLE_MIN_POINTS;

/// Which engines a pool (or one computation) may use: the placement policy's choice. `cpu` and
/// `wgpu` start no CUDA worker; `cuda`/`gpu` use CUDA devices with the CPU only for retries (a pool
/// started so without a working device runs on the CPU with a note; [`compute_grid`] fails instead,
/// [`JobError::NoGpu`]); `auto` uses CUDA devices when present, else the CPU.
pub use crate::compute::placement::DeviceChoice;

/// Why a request produced no grid.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum JobError {
    #[error("cancelled")]
    Cancelled,
    #[error(transparent)]
    Compute(#[from] ComputeError),
    #[error("the lattice has {points} points, more than the {limit} a request may have")]
    TooLarge { points: usize, limit: usize },
    #[error("the worker pool has shut down")]
    Shutdown,
    /// A GPU was required and none is usable; says why (no libcuda, no device, NVRTC missing).
    #[error("no usable CUDA device: {0}")]
    NoGpu(String),
    /// A wgpu adapter was required and none can compute; says why.
    #[error("no usable GPU for the wgpu engine: {0}")]
    NoWgpu(String),
}

impl JobError {
    /// A required GPU that is missing, in the words of what was asked: the wgpu engine's for
    /// `--device wgpu`, CUDA's otherwise.
    pub fn gpu_missing(preference: DeviceChoice, why: String) -> JobError {
        if preference == DeviceChoice::Wgpu {
            JobError::NoWgpu(why)
        } else {
            JobError::NoGpu(why)
        }
    }
}

/// Lattices above this many points are refused before allocating (4 GiB of f32).
pub const MAX_POINTS: usize = 1 << 30;

/// A latest-wins slot: at most one request per slot is pending or running.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SlotId(pub u64);

/// How urgently a request's tiles are wanted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum Priority {
    /// What is on screen now: served round-robin with the other normal requests.
    #[default]
    Normal,
    /// Look-ahead (playback's next frame): served only when no normal request has tiles left.
    Prefetch,
}

/// Progress of one request, readable from any thread while it runs.
#[derive(Debug, Default)]
pub struct Progress {
    /// z planes computed and assembled.
    pub planes_done: AtomicUsize,
    /// z planes of the lattice.
    pub planes_total: AtomicUsize,
    /// Tiles computed (a tile is a slab of one or more planes).
    pub tiles_done: AtomicUsize,
    /// Tiles that failed and were retried.
    pub tiles_retried: AtomicUsize,
    /// Nanoseconds from submission to the first tile starting.
    pub queue_ns: AtomicU64,
    /// Nanoseconds workers spent computing tiles (summed over workers).
    pub compute_ns: AtomicU64,
    /// Nanoseconds spent copying tiles into the grid.
    pub assemble_ns: AtomicU64,
    /// Nanoseconds from submission to the result being sent.
    pub total_ns: AtomicU64,
    /// Set when the request was cancelled.
    pub cancelled: AtomicBool,
}

impl Progress {
    /// Fraction of planes done, 0..=1.
    pub fn fraction(&self) -> f32 {
        let total = self.planes_total.load(Ordering::Relaxed);
        if total == 0 {
            0.0
        } else {
            self.planes_done.load(Ordering::Relaxed) as f32 / total as f32
        }
    }
}

/// What one worker is doing, for the jobs panel.
#[derive(Debug)]
pub struct WorkerStatus {
    /// Thread name ("orbitfield-cuda0", "orbitfield-cpu0").
    pub name: String,
    /// Engine name ("cuda:0 NVIDIA H100 80GB HBM3", "cpu").
    pub engine: String,
    pub is_gpu: bool,
    pub busy: AtomicBool,
    /// Generation of the request it works on (0 when idle).
    pub current_generation: AtomicU64,
    pub tiles_done: AtomicU64,
    pub tiles_failed: AtomicU64,
    /// Tiles this worker dropped because their request had been cancelled (before or after
    /// computing them).
    pub tiles_cancelled: AtomicU64,
    pub busy_ns: AtomicU64,
    pub last_error: Mutex<Option<String>>,
}

/// A finished request: its key, slot and generation, the grid or the reason there is none.
#[derive(Debug)]
pub struct JobResult<K> {
    pub key: K,
    pub slot: SlotId,
    pub generation: u64,
    pub outcome: Result<Grid3, JobError>,
    pub progress: Arc<Progress>,
    /// Engines that computed tiles of it, sorted ("cpu", "cuda:0 ...").
    pub engines: Vec<String>,
}

/// A handle on a submitted request.
#[derive(Clone, Debug)]
pub struct RequestHandle {
    pub slot: SlotId,
    pub generation: u64,
    pub progress: Arc<Progress>,
    cancelled: Arc<AtomicBool>,
}

impl RequestHandle {
    /// Cancels the request: no tile starts after this; a running tile finishes and is discarded.
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::Release);
        self.progress.cancelled.store(true, Ordering::Relaxed);
    }
}

/// Pool settings.
#[derive(Clone, Debug)]
pub struct PoolConfig {
    pub preference: DeviceChoice,
    /// CUDA device ordinals; `None` = `ORBITFIELD_DEVICES` or all.
    pub devices: Option<Vec<usize>>,
    /// CPU worker threads (each CPU tile is itself parallel inside the CPU engine).
    pub cpu_workers: usize,
    /// Capacity of the results channel.
    pub result_capacity: usize,
    /// Largest GPU tile, in points: one device takes tiles this large; several take guided tiles
    /// up to this size, chosen from their measured rates (`tiles`).
    pub gpu_tile_points: usize,
    /// Target points per CPU tile.
    pub cpu_tile_points: usize,
    /// Compute the same planes of batchable requests in one engine call
    /// ([`crate::compute::batchable`]) on CPU workers; off, every request is computed on its own (for
    /// comparison).
    pub batch_orbitals: bool,
    /// The same on GPU workers. Off by default: on an H200 playing HOMO and LUMO, one request after
    /// the other measured faster end to end (the first orbital's isosurface is extracted while the
    /// second is computed) than both in one launch (`benches/RESULTS.md`, "One frame's orbitals").
    pub batch_orbitals_on_gpu: bool,
    /// Register the large grid buffers given back ([`Pool::recycle`]) with the CUDA driver, so the
    /// next request's orbital slabs are copied by the device straight into them (`pool_buffers`).
    /// Off by default: the registration (2.4 ms for 64 MiB on an H200 host) and the
    /// unregistration before the grid leaves the pool (1.4 ms) cost more per request than the
    /// host copy they save (`benches/RESULTS.md`, "The pool's copy back").
    pub register_recycled: bool,
    /// Worker threads per CUDA device, each with an engine (a stream) of its own. With two, a task's
    /// host work and copies (the ILS frame's atom layout and upload) overlap the other worker's
    /// kernels, and the device is not left idle between tasks.
    pub gpu_workers_per_device: usize,
}

impl Default for PoolConfig {
    fn default() -> Self {
        PoolConfig {
            preference: DeviceChoice::Auto,
            devices: None,
            cpu_workers: 1,
            result_capacity: 16,
            gpu_tile_points: 1 << 24,
            cpu_tile_points: 1 << 15,
            batch_orbitals: true,
            batch_orbitals_on_gpu: false,
            register_recycled: false,
            gpu_workers_per_device: 1,
        }
    }
}

struct Request<K> {
    key: K,
    slot: SlotId,
    generation: u64,
    /// True for a look-ahead request ([`Priority::Prefetch`]); may be cleared while it waits
    /// ([`Pool::set_priority`]). Read under the queue lock.
    look_ahead: AtomicBool,
    job: FieldJob,
    values: OutputBuffer,
    progress: Arc<Progress>,
    cancelled: Arc<AtomicBool>,
    /// First z plane not yet handed out (guarded by the queue lock).
    next_z: AtomicUsize,
    /// Set once the result (or failure) has been sent.
    finished: AtomicBool,
    engines: Mutex<Vec<String>>,
    submitted: Instant,
    first_start: AtomicBool,
    reply: Option<Sender<JobResult<K>>>,
}

impl<K> Request<K> {
    fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Acquire)
    }
}

struct Tile<K> {
    req: Arc<Request<K>>,
    z: Range<usize>,
    /// Workers on which this tile failed.
    failed_on: Vec<usize>,
    /// Other requests whose same planes are computed in the same engine call
    /// ([`crate::compute::batchable`] with `req`: the orbitals of one frame's representations).
    batch: Vec<Arc<Request<K>>>,
}

impl<K> Tile<K> {
    fn single(req: Arc<Request<K>>, z: Range<usize>, failed_on: Vec<usize>) -> Tile<K> {
        Tile {
            req,
            z,
            failed_on,
            batch: Vec::new(),
        }
    }
}

struct QueueState<K> {
    /// Requests with tiles left to hand out, in round-robin order (the one served moves to the back).
    requests: VecDeque<Arc<Request<K>>>,
    /// Tiles that failed once on a device: for another device.
    retry_device: Vec<Tile<K>>,
    /// Tiles for the CPU (failed twice, or failed where no other device exists).
    retry_cpu: Vec<Tile<K>>,
    /// Device tasks ([`DeviceWorkers::push`]), oldest first.
    tasks: VecDeque<DeviceTask>,
    slots: BTreeMap<SlotId, Arc<Request<K>>>,
    next_generation: u64,
    shutdown: bool,
    /// Output buffers of finished grids given back by their owners ([`Pool::recycle`]), for the
    /// next large requests.
    recycled: pool_buffers::RecycleList,
    /// Measured points per second of each GPU worker per job kind: the guided tiles' sizes.
    rates: tiles::Rates,
}

struct Shared<K> {
    queue: Mutex<QueueState<K>>,
    wake: Condvar,
    results: Sender<JobResult<K>>,
    shutdown: AtomicBool,
    gpu_workers: usize,
    cpu_takes_main_queue: bool,
    /// True when some worker runs a CPU engine (it takes the tiles a GPU engine has no kernel for).
    has_cpu_workers: bool,
    config: PoolConfig,
    last_error: Mutex<Option<String>>,
}

impl<K> Shared<K> {
    fn lock(&self) -> MutexGuard<'_, QueueState<K>> {
        // A worker never panics while holding the lock (no user code runs under it); recover anyway.
        self.queue.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn set_error(slot: &Mutex<Option<String>>, msg: String) {
    if let Ok(mut g) = slot.lock() {
        *g = Some(msg);
    }
}

/// Work other than field tiles for the pool's workers (an RDF frame). Called on a worker thread with
/// that worker's engines (a CUDA worker's CUDA engine, a wgpu worker's wgpu engine, neither on a CPU
/// worker); it reports its result itself, over its own channel.
pub type DeviceTask = Box<dyn FnOnce(TaskEngines<'_>) + Send>;

/// The device engine of the worker running a [`DeviceTask`]: at most one is set.
#[derive(Clone, Copy, Default)]
pub struct TaskEngines<'a> {
    pub cuda: Option<&'a CudaEngine>,
    #[cfg(feature = "gui")]
    pub wgpu: Option<&'a crate::compute::wgpu::engine::WgpuEngine>,
}

/// What a worker takes next.
enum Work<K> {
    Tile(Tile<K>),
    Task(DeviceTask),
}

/// The pool's task queue as its users see it, whatever the pool's key type.
trait TaskQueue: Send + Sync {
    /// Queues a task and wakes a worker; gives it back when the pool has shut down.
    fn push(&self, task: DeviceTask) -> Result<(), DeviceTask>;
    fn is_open(&self) -> bool;
}

impl<K: Send + Sync> TaskQueue for Shared<K> {
    fn push(&self, task: DeviceTask) -> Result<(), DeviceTask> {
        let mut q = self.lock();
        if q.shutdown {
            return Err(task);
        }
        q.tasks.push_back(task);
        drop(q);
        self.wake.notify_all();
        Ok(())
    }

    fn is_open(&self) -> bool {
        !self.shutdown.load(Ordering::Acquire)
    }
}

/// A handle on a pool's workers for device tasks ([`Pool::device_workers`]); cloneable and free of
/// the pool's key type. It does not keep the workers alive: once the pool is dropped, pushes fail.
#[derive(Clone)]
pub struct DeviceWorkers {
    queue: Arc<dyn TaskQueue>,
    names: Vec<String>,
    has_gpu: bool,
    notes: Vec<String>,
}

impl std::fmt::Debug for DeviceWorkers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceWorkers").field("names", &self.names).finish()
    }
}

impl DeviceWorkers {
    /// Queues `task` for the next free worker; gives it back when the pool has shut down.
    pub fn push(&self, task: DeviceTask) -> Result<(), DeviceTask> {
        self.queue.push(task)
    }

    /// False once the pool has shut down (queued tasks are then dropped unrun).
    pub fn is_open(&self) -> bool {
        self.queue.is_open()
    }

    /// The workers that take tasks, by thread and engine ("orbitfield-gpu0 (cuda:0 NVIDIA H100)").
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Number of workers that take tasks (at least 1).
    pub fn count(&self) -> usize {
        self.names.len().max(1)
    }

    /// True when the tasks run on GPU workers.
    pub fn has_gpu(&self) -> bool {
        self.has_gpu
    }

    /// The pool's notes: why devices are not used.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }
}

/// How a request just put in its slot goes on ([`Pool::enqueue`]).
enum Queued<K> {
    /// In the queue for the workers.
    Waiting,
    /// Refused (shutdown, too large).
    Fails(Arc<Request<K>>, JobError),
    /// Nothing to compute: an empty grid.
    Empty(Arc<Request<K>>),
}

/// The worker pool.
pub struct Pool<K: Clone + Send + Sync + 'static> {
    shared: Arc<Shared<K>>,
    threads: Vec<JoinHandle<()>>,
    results: Receiver<JobResult<K>>,
    workers: Vec<Arc<WorkerStatus>>,
    notes: Vec<String>,
}

/// An engine with the flag saying whether it is a GPU (takes big tiles and retries for devices).
pub struct EngineSpec {
    pub engine: Arc<dyn SlabEngine>,
    pub is_gpu: bool,
}

impl<K: Clone + Send + Sync + 'static> Pool<K> {
    /// Starts a pool: discovers CUDA devices as `config` asks, and wgpu adapters as
    /// [`adapter_worker::WgpuOptions::from_env`] says (never panics; every reason a device is not used
    /// becomes one line in [`Pool::notes`]) and starts the workers.
    pub fn new(config: PoolConfig) -> Pool<K> {
        let mut notes = Vec::new();
        let mut engines: Vec<EngineSpec> = Vec::new();
        let mut device_notes: Vec<String> = Vec::new();
        if config.preference.may_use_cuda() {
            let (env_devices, env_notes) = cuda::devices_from_env();
            notes.extend(env_notes.iter().map(ToString::to_string));
            let selection = config.devices.clone().or(env_devices);
            let found = cuda::discover(selection.as_deref());
            for e in found.engines {
                engines.push(EngineSpec {
                    engine: e,
                    is_gpu: true,
                });
            }
            // Further workers per device: engines of their own on the same devices (the same
            // context, another stream), so one's copies and kernels overlap the other's.
            if !engines.is_empty() {
                for _ in 1..config.gpu_workers_per_device.max(1) {
                    for e in cuda::discover(selection.as_deref()).engines {
                        engines.push(EngineSpec {
                            engine: e,
                            is_gpu: true,
                        });
                    }
                }
            }
            device_notes.extend(found.notes.iter().map(ToString::to_string));
        }
        // wgpu adapters: every one (software adapters too) when the choice is the wgpu engine, the
        // hardware ones for `gpu`, for `auto` as `ORBITFIELD_WGPU` says (hardware ones by default).
        #[cfg(feature = "gui")]
        if !matches!(config.preference, DeviceChoice::Cpu | DeviceChoice::Cuda) {
            let options = match config.preference {
                DeviceChoice::Wgpu => adapter_worker::WgpuOptions::forced(),
                DeviceChoice::Gpu => adapter_worker::WgpuOptions::hardware(),
                _ => adapter_worker::WgpuOptions::from_env(),
            };
            let found = adapter_worker::discover(options, engines.len());
            device_notes.extend(found.notes);
            for e in found.engines {
                engines.push(EngineSpec {
                    engine: e,
                    is_gpu: true,
                });
            }
        }
        if config.preference != DeviceChoice::Cpu {
            if engines.is_empty() {
                // One line saying why the CPU computes everything.
                let why = if !device_notes.is_empty() {
                    device_notes.join("; ")
                } else if config.preference == DeviceChoice::Wgpu {
                    "no wgpu adapter".to_string()
                } else {
                    "no CUDA device".to_string()
                };
                notes.push(format!("using the CPU engine: {why}"));
            } else {
                notes.extend(device_notes);
            }
        }
        let cpu: Arc<dyn SlabEngine> = Arc::new(CpuEngine);
        for _ in 0..config.cpu_workers.max(1) {
            engines.push(EngineSpec {
                engine: cpu.clone(),
                is_gpu: false,
            });
        }
        let mut pool = Pool::with_engines(engines, config);
        pool.notes = notes;
        pool
    }

    /// Starts a pool over the given engines (tests, benchmarks). CPU engines (`is_gpu == false`) take
    /// main-queue tiles only when no GPU engine is present; they always take the final retries.
    pub fn with_engines(engines: Vec<EngineSpec>, config: PoolConfig) -> Pool<K> {
        let (tx, rx) = bounded(config.result_capacity.max(1));
        let gpu_workers = engines.iter().filter(|e| e.is_gpu).count();
        let register_with = pool_buffers::registration_context(&engines, &config);
        let shared = Arc::new(Shared {
            queue: Mutex::new(QueueState {
                requests: VecDeque::new(),
                retry_device: Vec::new(),
                retry_cpu: Vec::new(),
                tasks: VecDeque::new(),
                slots: BTreeMap::new(),
                next_generation: 1,
                recycled: pool_buffers::RecycleList::new(register_with),
                rates: tiles::Rates::default(),
                shutdown: false,
            }),
            wake: Condvar::new(),
            results: tx,
            shutdown: AtomicBool::new(false),
            gpu_workers,
            cpu_takes_main_queue: gpu_workers == 0,
            has_cpu_workers: engines.len() > gpu_workers,
            config,
            last_error: Mutex::new(None),
        });
        let mut threads = Vec::new();
        let mut workers = Vec::new();
        let (mut n_gpu, mut n_cpu) = (0, 0);
        let cpu_threads = if shared.has_cpu_workers {
            cpu_thread_pool()
        } else {
            None
        };
        for (id, spec) in engines.into_iter().enumerate() {
            let name = if spec.is_gpu {
                n_gpu += 1;
                format!("orbitfield-gpu{}", n_gpu - 1)
            } else {
                n_cpu += 1;
                format!("orbitfield-cpu{}", n_cpu - 1)
            };
            let status = Arc::new(WorkerStatus {
                name: name.clone(),
                engine: spec.engine.name(),
                is_gpu: spec.is_gpu,
                busy: AtomicBool::new(false),
                current_generation: AtomicU64::new(0),
                tiles_done: AtomicU64::new(0),
                tiles_failed: AtomicU64::new(0),
                tiles_cancelled: AtomicU64::new(0),
                busy_ns: AtomicU64::new(0),
                last_error: Mutex::new(None),
            });
            let sh = shared.clone();
            let st = status.clone();
            let par = cpu_threads.clone();
            match std::thread::Builder::new()
                .name(name.clone())
                .spawn(move || worker_loop(id, spec, sh, st, par))
            {
                Ok(h) => {
                    threads.push(h);
                    workers.push(status);
                }
                Err(e) => set_error(&shared.last_error, format!("could not start worker {name}: {e}")),
            }
        }
        Pool {
            shared,
            threads,
            results: rx,
            workers,
            notes: Vec::new(),
        }
    }

    /// One line per reason a device is not used (empty when all went well).
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// The workers' status, GPU workers first.
    pub fn workers(&self) -> &[Arc<WorkerStatus>] {
        &self.workers
    }

    /// True when at least one GPU worker runs.
    pub fn has_gpu(&self) -> bool {
        self.workers.iter().any(|w| w.is_gpu)
    }

    /// Why no GPU worker runs, in one line (from the discovery notes), or `None` when one does.
    pub fn gpu_missing_reason(&self) -> Option<String> {
        if self.has_gpu() {
            return None;
        }
        Some(if self.notes.is_empty() {
            "no CUDA device".to_string()
        } else {
            self.notes
                .iter()
                .map(|n| n.strip_prefix("using the CPU engine: ").unwrap_or(n))
                .collect::<Vec<_>>()
                .join("; ")
        })
    }

    /// A handle that queues device tasks on this pool's workers: the GPU workers, or the CPU workers
    /// when the pool has no device.
    pub fn device_workers(&self) -> DeviceWorkers {
        let has_gpu = self.has_gpu();
        let names = self
            .workers
            .iter()
            .filter(|w| w.is_gpu == has_gpu)
            .map(|w| format!("{} ({})", w.name, w.engine))
            .collect();
        let queue: Arc<dyn TaskQueue> = self.shared.clone();
        DeviceWorkers {
            queue,
            names,
            has_gpu,
            notes: self.notes.clone(),
        }
    }

    /// The last error any worker reported.
    pub fn last_error(&self) -> Option<String> {
        self.shared.last_error.lock().ok().and_then(|g| g.clone())
    }

    /// Results of requests submitted with [`Pool::submit`].
    pub fn results(&self) -> &Receiver<JobResult<K>> {
        &self.results
    }

    /// Submits `job` to `slot` at normal priority, cancelling the request pending or running there.
    pub fn submit(&self, slot: SlotId, key: K, job: FieldJob) -> RequestHandle {
        self.submit_inner(slot, key, job, Priority::Normal, None)
    }

    /// Submits `job` to `slot` at `priority`, cancelling the request pending or running there.
    pub fn submit_with_priority(&self, slot: SlotId, key: K, job: FieldJob, priority: Priority) -> RequestHandle {
        self.submit_inner(slot, key, job, priority, None)
    }

    /// Submits several requests (each as [`Pool::submit_with_priority`]) before any worker looks at
    /// the queue, so the ones that can be computed together ([`crate::compute::batchable`]: the
    /// orbitals of one frame's representations) leave in one batch of tiles.
    pub fn submit_all(&self, requests: Vec<(SlotId, K, FieldJob, Priority)>) -> Vec<RequestHandle> {
        let mut q = self.shared.lock();
        let queued: Vec<(RequestHandle, Queued<K>)> = requests
            .into_iter()
            .map(|(slot, key, job, priority)| self.enqueue(&mut q, slot, key, job, priority, None))
            .collect();
        drop(q);
        let mut handles = Vec::with_capacity(queued.len());
        for (h, outcome) in queued {
            self.settle(outcome);
            handles.push(h);
        }
        self.shared.wake.notify_all();
        handles
    }

    fn submit_inner(
        &self,
        slot: SlotId,
        key: K,
        job: FieldJob,
        priority: Priority,
        reply: Option<Sender<JobResult<K>>>,
    ) -> RequestHandle {
        let mut q = self.shared.lock();
        let (handle, outcome) = self.enqueue(&mut q, slot, key, job, priority, reply);
        drop(q);
        self.settle(outcome);
        self.shared.wake.notify_all();
        handle
    }

    /// Puts a request in `slot` (cancelling the one there) and in the queue, or says how it ends at
    /// once (to be settled outside the lock).
    fn enqueue(
        &self,
        q: &mut QueueState<K>,
        slot: SlotId,
        key: K,
        job: FieldJob,
        priority: Priority,
        reply: Option<Sender<JobResult<K>>>,
    ) -> (RequestHandle, Queued<K>) {
        let nz = job.lattice.dims[2];
        let progress = Arc::new(Progress::default());
        progress.planes_total.store(nz, Ordering::Relaxed);
        let cancelled = Arc::new(AtomicBool::new(false));
        let points = job.lattice.n_points();
        let generation = q.next_generation;
        q.next_generation += 1;
        let req = Arc::new(Request {
            key,
            slot,
            generation,
            look_ahead: AtomicBool::new(priority == Priority::Prefetch),
            values: {
                let n = if points > MAX_POINTS || q.shutdown { 0 } else { points };
                match q.recycled.take(n) {
                    Some(b) => OutputBuffer::reuse(b, n),
                    None => OutputBuffer::new(n),
                }
            },
            job,
            progress: progress.clone(),
            cancelled: cancelled.clone(),
            next_z: AtomicUsize::new(0),
            finished: AtomicBool::new(false),
            engines: Mutex::new(Vec::new()),
            submitted: Instant::now(),
            first_start: AtomicBool::new(false),
            reply,
        });
        if let Some(old) = q.slots.insert(slot, req.clone()) {
            old.cancelled.store(true, Ordering::Release);
            old.progress.cancelled.store(true, Ordering::Relaxed);
        }
        let handle = RequestHandle {
            slot,
            generation,
            progress,
            cancelled,
        };
        let outcome = if q.shutdown {
            Queued::Fails(req, JobError::Shutdown)
        } else if points > MAX_POINTS {
            Queued::Fails(
                req,
                JobError::TooLarge {
                    points,
                    limit: MAX_POINTS,
                },
            )
        } else if points == 0 {
            Queued::Empty(req)
        } else {
            q.requests.push_back(req);
            Queued::Waiting
        };
        (handle, outcome)
    }

    fn settle(&self, outcome: Queued<K>) {
        match outcome {
            Queued::Waiting => {}
            Queued::Fails(req, e) => finish(&self.shared, &req, Err(e)),
            Queued::Empty(req) => finish_success(&self.shared, &req),
        }
    }

    /// Changes the priority of the request pending or running in `slot` (e.g. a look-ahead the view
    /// now waits for becomes normal); returns false when the slot has none.
    pub fn set_priority(&self, slot: SlotId, priority: Priority) -> bool {
        let q = self.shared.lock();
        match q.slots.get(&slot) {
            Some(r) => {
                r.look_ahead.store(priority == Priority::Prefetch, Ordering::Relaxed);
                true
            }
            None => false,
        }
    }

    /// Gives a finished grid's values back for the pool to write the next large request into
    /// (one at least [`RECYCLE_MIN_POINTS`] long that fits in it): that request's workers then
    /// write memory that is mapped already instead of faulting in fresh pages. The pool keeps at
    /// two per GPU worker (at least [`pool_buffers::MAX_RECYCLED`]) within
    /// [`pool_buffers::MAX_RECYCLED_BYTES`], the largest; smaller ones are dropped. With
    /// [`PoolConfig::register_recycled`] the buffer is registered with the CUDA driver here.
    pub fn recycle(&self, values: Vec<f32>) {
        if values.capacity() < RECYCLE_MIN_POINTS {
            return;
        }
        let ctx = self.shared.lock().recycled.register_with();
        let buffer = pool_buffers::prepare_recycled(values, ctx.as_ref());
        let dropped = self.shared.lock().recycled.keep(buffer, self.shared.gpu_workers);
        // Returning memory to the system takes time: outside the lock.
        drop(dropped);
    }

    /// Computes `job` and waits for its grid (its own slot, so it never cancels other requests).
    pub fn compute_grid(&self, key: K, job: FieldJob) -> Result<Grid3, JobError> {
        let (tx, rx) = bounded(1);
        let slot = SlotId(u64::MAX - self.shared.lock().next_generation);
        self.submit_inner(slot, key, job, Priority::Normal, Some(tx));
        match rx.recv() {
            Ok(r) => r.outcome,
            Err(_) => Err(JobError::Shutdown),
        }
    }
}

impl<K: Clone + Send + Sync + 'static> Drop for Pool<K> {
    fn drop(&mut self) {
        self.shared.shutdown.store(true, Ordering::Release);
        let unrun = {
            let mut q = self.shared.lock();
            q.shutdown = true;
            for r in q.requests.iter() {
                r.cancelled.store(true, Ordering::Release);
            }
            (std::mem::take(&mut q.tasks), q.recycled.clear())
        };
        // Tasks never started are dropped unrun (outside the lock: they own channels and data).
        drop(unrun);
        self.shared.wake.notify_all();
        // Workers finish at most their current tile; sends give up once shutdown is set.
        for h in self.threads.drain(..) {
            let _ = h.join();
        }
    }
}

/// Computes one grid with a pool started for this call (the CLI's entry point). Prints nothing;
/// device notes come back with the grid.
pub fn compute_grid(job: FieldJob, preference: DeviceChoice) -> Result<(Grid3, Vec<String>), JobError> {
    let pool: Pool<()> = Pool::new(PoolConfig {
        preference,
        ..PoolConfig::default()
    });
    if preference.requires_gpu()
        && let Some(why) = pool.gpu_missing_reason()
    {
        return Err(JobError::gpu_missing(preference, why));
    }
    let notes = pool.notes().to_vec();
    pool.compute_grid((), job).map(|g| (g, notes))
}

/// Planes a worker takes at once: about `target` points, at least one plane.
#[cfg(test)]
mod tests;
