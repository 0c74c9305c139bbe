//! The jobs pool: tiles assembled in place, failed tiles retried on another device and then on the
//! CPU, latest-wins slots, cancellation within one tile, and a drop that does not hang. Engines here
//! are test doubles computing an analytic field (the linear index of each point), so every value of
//! the assembled grid is known exactly; some tests run the real CPU engine through the pool, one of
//! them under the viewer's own update loop (two orbital representations played, batched per frame).

// Tests may unwrap: a panic is a failed test (house rules).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use orbitfield::compute::{ComputeError, Field, FieldInput, FieldJob, PointCharges, SlabEngine, slab_len};
use orbitfield::jobs::{DeviceChoice, EngineSpec, JobError, Pool, PoolConfig, SlotId};
use orbitfield::model::Lattice;
use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

/// Fills each point with its linear index; can fail, write NaN, or sleep per tile.
struct IndexEngine {
    name: String,
    fail: AtomicBool,
    write_nan: AtomicBool,
    delay: Duration,
    tiles: AtomicUsize,
}

impl IndexEngine {
    fn new(name: &str, delay_ms: u64) -> Arc<IndexEngine> {
        Arc::new(IndexEngine {
            name: name.into(),
            fail: AtomicBool::new(false),
            write_nan: AtomicBool::new(false),
            delay: Duration::from_millis(delay_ms),
            tiles: AtomicUsize::new(0),
        })
    }
}

impl SlabEngine for IndexEngine {
    fn name(&self) -> String {
        self.name.clone()
    }
    fn compute_slab(&self, job: &FieldJob, z: Range<usize>, out: &mut [f32]) -> Result<(), ComputeError> {
        assert_eq!(out.len(), slab_len(&job.lattice, &z));
        std::thread::sleep(self.delay);
        self.tiles.fetch_add(1, Ordering::SeqCst);
        if self.fail.load(Ordering::SeqCst) {
            return Err(ComputeError::Device("injected failure".into()));
        }
        let plane = job.lattice.dims[0] * job.lattice.dims[1];
        for (n, v) in out.iter_mut().enumerate() {
            *v = if self.write_nan.load(Ordering::SeqCst) && n == 3 {
                f32::NAN
            } else {
                (z.start * plane + n) as f32
            };
        }
        Ok(())
    }
}

fn job(dims: [usize; 3]) -> FieldJob {
    FieldJob {
        field: Field::Potential,
        lattice: Lattice::axis_aligned([0.0; 3], 0.5, dims),
        input: FieldInput::Charges(Arc::new(PointCharges::default())),
    }
}

fn config(points_per_tile: usize) -> PoolConfig {
    PoolConfig {
        gpu_tile_points: points_per_tile,
        cpu_tile_points: points_per_tile,
        ..PoolConfig::default()
    }
}

fn assert_index_grid(values: &[f32], n: usize) {
    assert_eq!(values.len(), n);
    for (i, &v) in values.iter().enumerate() {
        assert_eq!(v, i as f32, "point {i}");
    }
}

fn spec(e: &Arc<IndexEngine>, is_gpu: bool) -> EngineSpec {
    EngineSpec {
        engine: e.clone(),
        is_gpu,
    }
}

#[test]
fn tiles_from_all_devices_assemble_the_whole_grid() {
    let (a, b, cpu) = (
        IndexEngine::new("dev-a", 1),
        IndexEngine::new("dev-b", 1),
        IndexEngine::new("cpu", 0),
    );
    let pool: Pool<u32> = Pool::with_engines(
        vec![spec(&a, true), spec(&b, true), spec(&cpu, false)],
        config(16 * 12 * 2),
    );
    let grid = pool.compute_grid(7, job([16, 12, 41])).unwrap();
    assert_index_grid(&grid.values, 16 * 12 * 41);
    // Both devices pulled from the shared queue; the CPU only serves retries when devices exist.
    assert!(a.tiles.load(Ordering::SeqCst) > 0 && b.tiles.load(Ordering::SeqCst) > 0);
    assert_eq!(cpu.tiles.load(Ordering::SeqCst), 0);
}

/// A grid's buffer given back is written by the next large request (same memory, no stale value
/// survives, shorter and longer requests alike); small buffers are not kept.
#[test]
fn recycled_buffers_hold_the_next_grids_whole() {
    let (a, cpu) = (IndexEngine::new("dev-a", 0), IndexEngine::new("cpu", 0));
    let pool: Pool<u32> = Pool::with_engines(vec![spec(&a, true), spec(&cpu, false)], config(128 * 128 * 8));
    let dims = [128, 128, 72];
    let n = dims.iter().product::<usize>();
    let mut first = pool.compute_grid(1, job(dims)).unwrap().values;
    assert_index_grid(&first, n);
    // Stale values that must not survive.
    first.iter_mut().for_each(|v| *v = f32::NAN);
    let ptr = first.as_ptr();
    pool.recycle(first);
    let second = pool.compute_grid(2, job([128, 128, 70])).unwrap().values;
    assert_eq!(second.as_ptr(), ptr, "the given-back buffer is reused");
    assert_index_grid(&second, 128 * 128 * 70);
    // Reused again for a request that needs more than its length (but fits its capacity).
    pool.recycle(second);
    let third = pool.compute_grid(3, job(dims)).unwrap().values;
    assert_eq!(third.as_ptr(), ptr);
    assert_index_grid(&third, n);
    // Too large for it: a fresh buffer.
    pool.recycle(third);
    let fourth = pool.compute_grid(4, job([128, 128, 80])).unwrap().values;
    assert_ne!(fourth.as_ptr(), ptr);
    assert_index_grid(&fourth, 128 * 128 * 80);
    // Small grids do not use (or keep) recycled buffers.
    let small = pool.compute_grid(5, job([16, 12, 41])).unwrap().values;
    assert_ne!(small.as_ptr(), ptr);
    assert_index_grid(&small, 16 * 12 * 41);
}

#[test]
fn failing_device_tiles_are_retried_on_the_other_device() {
    let (a, b, cpu) = (
        IndexEngine::new("dev-a", 1),
        IndexEngine::new("dev-b", 2),
        IndexEngine::new("cpu", 0),
    );
    a.fail.store(true, Ordering::SeqCst);
    let pool: Pool<u32> = Pool::with_engines(vec![spec(&a, true), spec(&b, true), spec(&cpu, false)], config(16 * 12));
    let h = pool.submit(SlotId(1), 11, job([16, 12, 30]));
    let r = pool.results().recv_timeout(Duration::from_secs(30)).unwrap();
    assert_eq!((r.key, r.generation), (11, h.generation));
    assert_index_grid(&r.outcome.unwrap().values, 16 * 12 * 30);
    assert!(h.progress.tiles_retried.load(Ordering::SeqCst) > 0);
    assert!(pool.workers()[0].tiles_failed.load(Ordering::SeqCst) > 0);
    assert!(pool.last_error().unwrap().contains("injected failure"));
}

#[test]
fn tiles_failing_on_every_device_end_on_the_cpu() {
    let (a, b, cpu) = (
        IndexEngine::new("dev-a", 0),
        IndexEngine::new("dev-b", 0),
        IndexEngine::new("cpu", 0),
    );
    a.fail.store(true, Ordering::SeqCst);
    b.write_nan.store(true, Ordering::SeqCst);
    let pool: Pool<u32> = Pool::with_engines(
        vec![spec(&a, true), spec(&b, true), spec(&cpu, false)],
        config(16 * 12 * 3),
    );
    let grid = pool.compute_grid(1, job([16, 12, 20])).unwrap();
    assert_index_grid(&grid.values, 16 * 12 * 20);
    assert!(cpu.tiles.load(Ordering::SeqCst) > 0);
}

#[test]
fn a_failure_on_the_cpu_fails_the_request() {
    let (a, cpu) = (IndexEngine::new("dev-a", 0), IndexEngine::new("cpu", 0));
    a.fail.store(true, Ordering::SeqCst);
    cpu.fail.store(true, Ordering::SeqCst);
    let pool: Pool<u32> = Pool::with_engines(vec![spec(&a, true), spec(&cpu, false)], config(16 * 12 * 3));
    match pool.compute_grid(1, job([16, 12, 20])) {
        Err(JobError::Compute(ComputeError::Device(m))) => assert!(m.contains("injected")),
        other => panic!("expected a device error, got {other:?}"),
    }
}

#[test]
fn cancelled_request_stops_within_one_tile() {
    let dev = IndexEngine::new("dev", 20);
    let cpu = IndexEngine::new("cpu", 0);
    let pool: Pool<u32> = Pool::with_engines(vec![spec(&dev, true), spec(&cpu, false)], config(8 * 8));
    let h = pool.submit(SlotId(3), 5, job([8, 8, 200]));
    while h.progress.tiles_done.load(Ordering::SeqCst) < 2 {
        std::thread::sleep(Duration::from_millis(1));
    }
    h.cancel();
    let started_at_cancel = dev.tiles.load(Ordering::SeqCst);
    let r = pool.results().recv_timeout(Duration::from_secs(30)).unwrap();
    assert!(matches!(r.outcome, Err(JobError::Cancelled)), "{:?}", r.outcome);
    std::thread::sleep(Duration::from_millis(100));
    // At most the tile that was running when the request was cancelled.
    assert!(dev.tiles.load(Ordering::SeqCst) <= started_at_cancel + 1);
    assert!(h.progress.planes_done.load(Ordering::SeqCst) < 200);
}

#[test]
fn a_newer_request_in_the_same_slot_wins() {
    let dev = IndexEngine::new("dev", 5);
    let cpu = IndexEngine::new("cpu", 0);
    let pool: Pool<&'static str> = Pool::with_engines(vec![spec(&dev, true), spec(&cpu, false)], config(8 * 8));
    let old = pool.submit(SlotId(9), "old", job([8, 8, 100]));
    let new = pool.submit(SlotId(9), "new", job([8, 8, 10]));
    assert!(new.generation > old.generation);
    let mut seen = Vec::new();
    for _ in 0..2 {
        let r = pool.results().recv_timeout(Duration::from_secs(30)).unwrap();
        seen.push((r.key, r.outcome.is_ok()));
        if r.key == "new" {
            assert_index_grid(&r.outcome.unwrap().values, 8 * 8 * 10);
        }
    }
    seen.sort();
    assert_eq!(seen, vec![("new", true), ("old", false)]);
}

#[test]
fn dropping_a_busy_pool_returns() {
    let dev = IndexEngine::new("dev", 10);
    let cpu = IndexEngine::new("cpu", 0);
    let pool: Pool<u32> = Pool::with_engines(vec![spec(&dev, true), spec(&cpu, false)], config(8 * 8));
    for i in 0..4 {
        pool.submit(SlotId(i), i as u32, job([8, 8, 500]));
    }
    std::thread::sleep(Duration::from_millis(30));
    drop(pool); // must not wait for the 2000 queued tiles, nor for a full results channel
    assert!(dev.tiles.load(Ordering::SeqCst) < 100);
}

#[test]
fn results_channel_full_does_not_block_drop() {
    let dev = IndexEngine::new("dev", 0);
    let cpu = IndexEngine::new("cpu", 0);
    let cfg = PoolConfig {
        result_capacity: 1,
        ..config(8 * 8)
    };
    let pool: Pool<u32> = Pool::with_engines(vec![spec(&dev, true), spec(&cpu, false)], cfg);
    for i in 0..5 {
        pool.submit(SlotId(i), i as u32, job([8, 8, 2]));
    }
    std::thread::sleep(Duration::from_millis(100));
    drop(pool);
}

#[test]
fn cpu_pool_without_devices_reports_why() {
    // On a machine without CUDA this falls back with a note; with a device it uses it. Either way the
    // potential of one unit charge is right.
    let mut q = PointCharges::default();
    q.positions_bohr.push([0.25, 0.25, 0.25]);
    q.charges_e.push(1.0);
    let job = FieldJob {
        field: Field::Potential,
        lattice: Lattice::axis_aligned([1.0, 2.0, 3.0], 0.5, [6, 5, 4]),
        input: FieldInput::Charges(Arc::new(q)),
    };
    let (grid, notes) = orbitfield::jobs::compute_grid(job.clone(), DeviceChoice::Auto).unwrap();
    println!("notes: {notes:?}");
    for k in 0..4 {
        for j in 0..5 {
            for i in 0..6 {
                let p = job.lattice.point_bohr(i, j, k);
                let r = ((p[0] - 0.25f64).powi(2) + (p[1] - 0.25).powi(2) + (p[2] - 0.25).powi(2)).sqrt();
                let v = grid.get(i, j, k).unwrap() as f64;
                assert!((v - 1.0 / r).abs() <= 1e-5 / r, "{v} vs {}", 1.0 / r);
            }
        }
    }
    let pool: Pool<()> = Pool::new(PoolConfig {
        preference: DeviceChoice::Cpu,
        ..PoolConfig::default()
    });
    assert!(!pool.has_gpu());
}

/// A deliberately slow engine that records, per tile, which request it came from (the request's
/// x size, which each test makes unique), and fills points with their linear index.
struct TagEngine {
    delay: Duration,
    order: std::sync::Mutex<Vec<usize>>,
}

impl TagEngine {
    fn new(delay_ms: u64) -> Arc<TagEngine> {
        Arc::new(TagEngine {
            delay: Duration::from_millis(delay_ms),
            order: std::sync::Mutex::new(Vec::new()),
        })
    }
    fn order(&self) -> Vec<usize> {
        self.order.lock().unwrap().clone()
    }
}

impl SlabEngine for TagEngine {
    fn name(&self) -> String {
        "tag".into()
    }
    fn compute_slab(&self, job: &FieldJob, z: Range<usize>, out: &mut [f32]) -> Result<(), ComputeError> {
        std::thread::sleep(self.delay);
        self.order.lock().unwrap().push(job.lattice.dims[0]);
        let plane = job.lattice.dims[0] * job.lattice.dims[1];
        for (n, v) in out.iter_mut().enumerate() {
            *v = (z.start * plane + n) as f32;
        }
        Ok(())
    }
}

/// One worker taking one plane per tile, so the order of tiles is the scheduling order.
fn tag_pool(engine: &Arc<TagEngine>) -> Pool<&'static str> {
    Pool::with_engines(
        vec![EngineSpec {
            engine: engine.clone(),
            is_gpu: true,
        }],
        config(1),
    )
}

#[test]
fn a_small_request_after_a_big_one_finishes_first() {
    let engine = TagEngine::new(2);
    let pool = tag_pool(&engine);
    let big = pool.submit(SlotId(1), "big", job([8, 2, 60]));
    let small = pool.submit(SlotId(2), "small", job([9, 2, 3]));
    let first = pool.results().recv_timeout(Duration::from_secs(30)).unwrap();
    assert_eq!(
        (first.key, first.generation, first.slot),
        ("small", small.generation, SlotId(2))
    );
    assert_index_grid(&first.outcome.unwrap().values, 9 * 2 * 3);
    let second = pool.results().recv_timeout(Duration::from_secs(30)).unwrap();
    assert_eq!(
        (second.key, second.generation, second.slot),
        ("big", big.generation, SlotId(1))
    );
    assert_index_grid(&second.outcome.unwrap().values, 8 * 2 * 60);
    // The small request's three tiles were interleaved with the big one's, not queued behind all 60.
    let order = engine.order();
    let last_small = order.iter().rposition(|&t| t == 9).unwrap();
    assert!(last_small < 10, "small tiles at {order:?}");
    assert_eq!(order.iter().filter(|&&t| t == 8).count(), 60);
}

#[test]
fn a_look_ahead_request_waits_while_normal_ones_have_tiles() {
    use orbitfield::jobs::Priority;
    let engine = TagEngine::new(2);
    let pool = tag_pool(&engine);
    let a = pool.submit(SlotId(1), "a", job([8, 2, 12]));
    let ahead = pool.submit_with_priority(SlotId(2), "ahead", job([7, 2, 5]), Priority::Prefetch);
    let b = pool.submit(SlotId(3), "b", job([9, 2, 6]));
    let mut got = Vec::new();
    for _ in 0..3 {
        let r = pool.results().recv_timeout(Duration::from_secs(30)).unwrap();
        let g = r.outcome.unwrap();
        let (expect_gen, n) = match r.key {
            "a" => (a.generation, 8 * 2 * 12),
            "b" => (b.generation, 9 * 2 * 6),
            _ => (ahead.generation, 7 * 2 * 5),
        };
        assert_eq!(r.generation, expect_gen);
        assert_index_grid(&g.values, n);
        got.push(r.key);
    }
    assert_eq!(got.last(), Some(&"ahead"), "the look-ahead finishes last: {got:?}");
    let order = engine.order();
    let first_ahead = order.iter().position(|&t| t == 7).unwrap();
    let last_normal = order.iter().rposition(|&t| t != 7).unwrap();
    assert!(
        first_ahead > last_normal,
        "look-ahead tile before a normal one: {order:?}"
    );
}

#[test]
fn cancelling_one_slot_leaves_the_others_running() {
    let engine = TagEngine::new(2);
    let pool = tag_pool(&engine);
    let keep = pool.submit(SlotId(1), "keep", job([8, 2, 20]));
    let old = pool.submit(SlotId(2), "old", job([9, 2, 20]));
    // A newer request in slot 2 supersedes the old one there and nothing else.
    let new = pool.submit(SlotId(2), "new", job([7, 2, 4]));
    let mut got = Vec::new();
    for _ in 0..3 {
        let r = pool.results().recv_timeout(Duration::from_secs(30)).unwrap();
        got.push((r.key, r.generation, r.outcome.is_ok()));
    }
    got.sort();
    assert_eq!(
        got,
        vec![
            ("keep", keep.generation, true),
            ("new", new.generation, true),
            ("old", old.generation, false)
        ]
    );
    // A cancelled request stops handing out tiles.
    assert!(engine.order().iter().filter(|&&t| t == 9).count() <= 2);
}

#[test]
fn a_promoted_look_ahead_request_is_served_with_the_normal_ones() {
    use orbitfield::jobs::Priority;
    let engine = TagEngine::new(2);
    let pool = tag_pool(&engine);
    let _a = pool.submit(SlotId(1), "a", job([8, 2, 40]));
    let _ahead = pool.submit_with_priority(SlotId(2), "ahead", job([7, 2, 3]), Priority::Prefetch);
    // The view now waits for the look-ahead: it joins the round-robin.
    assert!(pool.set_priority(SlotId(2), Priority::Normal));
    assert!(!pool.set_priority(SlotId(99), Priority::Normal));
    let first = pool.results().recv_timeout(Duration::from_secs(30)).unwrap();
    assert_eq!(first.key, "ahead");
    assert_index_grid(&first.outcome.unwrap().values, 7 * 2 * 3);
    let second = pool.results().recv_timeout(Duration::from_secs(30)).unwrap();
    assert_eq!(second.key, "a");
}

/// Random frames in a 20 A cube, open boundaries.
fn random_frames(n_frames: usize, n_atoms: usize, seed: &mut u64) -> Vec<orbitfield::model::Frame> {
    let mut next = || {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        (*seed >> 40) as f32 / (1u64 << 24) as f32 * 20.0
    };
    (0..n_frames)
        .map(|_| orbitfield::model::Frame {
            positions_angstrom: (0..n_atoms).map(|_| [next(), next(), next()]).collect(),
            ..Default::default()
        })
        .collect()
}

#[test]
fn rdf_frames_run_on_the_pools_device_workers_beside_field_requests() {
    use orbitfield::analysis::rdf::{RdfAccumulator, RdfSettings};
    use orbitfield::jobs::rdf::{RdfWorkers, RunError};
    let dev = IndexEngine::new("dev-a", 0);
    let cpu = IndexEngine::new("cpu", 0);
    let pool: Pool<u32> = Pool::with_engines(vec![spec(&dev, true), spec(&cpu, false)], config(8 * 8));
    let workers = RdfWorkers::on(pool.device_workers());
    // The pool's device worker takes the frames; no thread of the RDF's own.
    assert_eq!(workers.worker_names(), ["orbitfield-gpu0 (dev-a)".to_string()]);
    assert!(workers.has_gpu());
    let settings = RdfSettings {
        r_max_angstrom: 6.0,
        bins: 30,
        exclude_same_group: false,
    };
    let mut seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    println!("seed {seed}");
    let frames = random_frames(12, 200, &mut seed);
    let sel1: Arc<Vec<u32>> = Arc::new((0..80).collect());
    let sel2: Arc<Vec<u32>> = Arc::new((50..200).collect());
    let mut direct = RdfAccumulator::new(settings.clone()).unwrap();
    for (f, frame) in frames.iter().enumerate() {
        direct.add_frame(f, frame, &sel1, &sel2, None).unwrap();
    }
    // A field request on the same pool while the frames stream through.
    let handle = pool.submit(SlotId(1), 7, job([8, 8, 6]));
    let mut acc = RdfAccumulator::new(settings.clone()).unwrap();
    let items = frames
        .iter()
        .cloned()
        .enumerate()
        .map(|(f, fr)| Ok::<_, String>((f, fr, sel1.clone(), sel2.clone())));
    let mut engines = Vec::new();
    workers
        .run(&mut acc, None, items, |_, d| engines.push(d.engine.clone()))
        .unwrap();
    assert_eq!(acc, direct);
    assert_eq!(engines.len(), frames.len());
    let r = pool.results().recv_timeout(Duration::from_secs(30)).unwrap();
    assert_eq!(r.generation, handle.generation);
    assert_index_grid(&r.outcome.unwrap().values, 8 * 8 * 6);
    // Once the pool is gone, frames are refused and a run stops instead of waiting.
    drop(pool);
    let mut acc = RdfAccumulator::new(settings).unwrap();
    let items = frames
        .into_iter()
        .take(2)
        .enumerate()
        .map(|(f, fr)| Ok::<_, String>((f, fr, sel1.clone(), sel2.clone())));
    assert!(matches!(
        workers.run(&mut acc, None, items, |_, _| {}),
        Err(RunError::WorkersGone)
    ));
}

/// Counts the engine calls and computes with the real CPU engine.
#[derive(Default)]
struct CountingCpu {
    batches: AtomicUsize,
    batched_jobs: AtomicUsize,
    slabs: AtomicUsize,
}

impl SlabEngine for CountingCpu {
    fn name(&self) -> String {
        "counting cpu".into()
    }
    fn compute_slab(&self, job: &FieldJob, z: Range<usize>, out: &mut [f32]) -> Result<(), ComputeError> {
        self.slabs.fetch_add(1, Ordering::SeqCst);
        orbitfield::compute::cpu::CpuEngine.compute_slab(job, z, out)
    }
    fn compute_batch(&self, jobs: &[&FieldJob], z: Range<usize>, outs: &mut [&mut [f32]]) -> Result<(), ComputeError> {
        self.batches.fetch_add(1, Ordering::SeqCst);
        self.batched_jobs.fetch_add(jobs.len(), Ordering::SeqCst);
        orbitfield::compute::cpu::CpuEngine.compute_batch(jobs, z, outs)
    }
}

/// Requests submitted together (`submit_all`, one frame's HOMO and LUMO in their own slots) leave the
/// queue as batches of tiles computed in one engine call; a density submitted with them is computed
/// on its own; every result carries its own key and equals the CPU engine's direct answer.
#[test]
fn orbitals_submitted_together_are_computed_in_batches_each_in_its_slot() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/gpu/water_hf_631gs_sph.molden");
    let bytes = std::fs::read(&path).unwrap();
    let file = orbitfield::io::molden::read(&path, &bytes).unwrap();
    let wf = Arc::new(file.wavefunctions.into_iter().next().unwrap());
    let homo = wf.homo(orbitfield::model::Spin::Alpha).unwrap();
    let lattice = Lattice::axis_aligned([-6.0, -6.0, -5.0], 0.6, [20, 18, 17]);
    let job = |field: Field| FieldJob {
        field,
        lattice,
        input: FieldInput::Wavefunction(wf.clone()),
    };
    let orbital = |index| Field::Orbital {
        spin: orbitfield::model::Spin::Alpha,
        index,
    };
    let jobs = [
        ("homo", job(orbital(homo))),
        ("lumo", job(orbital(homo + 1))),
        ("density", job(Field::Density)),
    ];
    let engine = Arc::new(CountingCpu::default());
    // One worker, three planes per tile: 6 tiles per request.
    let pool: Pool<&'static str> = Pool::with_engines(
        vec![EngineSpec {
            engine: engine.clone(),
            is_gpu: true,
        }],
        PoolConfig {
            batch_orbitals_on_gpu: true,
            ..config(20 * 18 * 3)
        },
    );
    let requests = jobs
        .iter()
        .enumerate()
        .map(|(i, (key, j))| (SlotId(i as u64), *key, j.clone(), orbitfield::jobs::Priority::Normal))
        .collect();
    let handles = pool.submit_all(requests);
    assert_eq!(handles.len(), 3);
    let mut got = std::collections::BTreeMap::new();
    for _ in 0..3 {
        let r = pool.results().recv_timeout(Duration::from_secs(60)).unwrap();
        got.insert(r.key, (r.slot, r.outcome.unwrap()));
    }
    for (i, (key, j)) in jobs.iter().enumerate() {
        let (slot, grid) = &got[key];
        assert_eq!(*slot, SlotId(i as u64), "{key}");
        let mut want = vec![f32::NAN; lattice.n_points()];
        orbitfield::compute::cpu::CpuEngine
            .compute_slab(j, 0..lattice.dims[2], &mut want)
            .unwrap();
        assert_eq!(grid.values.len(), want.len());
        let (mut num, mut den) = (0.0f64, 0.0f64);
        for (&g, &w) in grid.values.iter().zip(&want) {
            num += (f64::from(g) - f64::from(w)).powi(2);
            den += f64::from(w).powi(2);
        }
        let err = (num / den).sqrt();
        assert!(err < 1e-6, "{key}: relative error {err:.2e}");
    }
    let tiles = lattice.dims[2].div_ceil(3);
    assert_eq!(
        engine.batches.load(Ordering::SeqCst),
        tiles,
        "HOMO and LUMO tiles batched"
    );
    assert_eq!(engine.batched_jobs.load(Ordering::SeqCst), 2 * tiles);
    assert_eq!(engine.slabs.load(Ordering::SeqCst), tiles, "the density alone");
}

/// Playing the threonine MD series with HOMO and LUMO as two field representations through the
/// viewer's own update loop (every frame computed, each representation with its own look-ahead):
/// every orbital tile reaches the (CPU) engine in a batch of the frame's two orbitals, and each
/// representation shows its own orbital of the frame played, equal to the CPU engine's direct answer.
#[test]
fn two_orbital_representations_play_with_one_batch_per_frame() {
    use orbitfield::app::fields::{FieldChoice, FieldService, PoolBackend};
    use orbitfield::app::settings::Settings;
    use orbitfield::app::state::{AppState, Command};
    let engine = Arc::new(CountingCpu::default());
    let pool = Pool::with_engines(
        vec![EngineSpec {
            engine: engine.clone(),
            is_gpu: false,
        }],
        PoolConfig::default(),
    );
    let settings = Settings {
        lattice_points: 20,
        compute_every_frame: true,
        ..Settings::default()
    };
    let fields = FieldService::new(Some(Box::new(PoolBackend::with_pool(pool))), None);
    let mut state = AppState::new(settings, fields);
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/qm/threonine_md");
    let mut paths: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    paths.sort();
    state.apply(Command::OpenFiles(paths));
    assert!(state.document().is_some(), "{}", state.panels.status);
    let homo = state.homo_index(orbitfield::model::Spin::Alpha).unwrap();
    let lumo = FieldChoice::Orbital {
        spin: orbitfield::model::Spin::Alpha,
        index: homo + 1,
    };
    state.apply(Command::AddFieldRep(lumo));
    state.view.timeline.playing = true;
    let n_frames = state.document().unwrap().n_frames;
    assert!(n_frames >= 4);
    for f in [1, 2, 3, 0] {
        state.apply(Command::SetFrame(f));
        let deadline = std::time::Instant::now() + Duration::from_secs(120);
        loop {
            state.update_reps();
            let shown: Vec<_> = state
                .reps()
                .fields()
                .filter(|(r, _)| r.visible)
                .map(|(_, rep)| rep.pipeline.shown.as_ref().map(|(k, _)| k.frame))
                .collect();
            if shown.len() == 2 && shown.iter().all(|s| *s == Some(f)) {
                break;
            }
            assert!(std::time::Instant::now() < deadline, "frame {f}: shown {shown:?}");
            std::thread::sleep(Duration::from_millis(2));
        }
        let mut orbitals = Vec::new();
        for (_, rep) in state.reps().fields() {
            let (key, grid) = rep.pipeline.shown.clone().unwrap();
            let FieldChoice::Orbital { spin, index } = key.field else {
                panic!("{:?}", key.field);
            };
            orbitals.push(index);
            let wf = state.document().unwrap().wavefunction_at(f).unwrap().clone();
            let job = FieldJob {
                field: Field::Orbital { spin, index },
                lattice: grid.lattice,
                input: FieldInput::Wavefunction(wf),
            };
            let mut want = vec![f32::NAN; grid.lattice.n_points()];
            orbitfield::compute::cpu::CpuEngine
                .compute_slab(&job, 0..grid.lattice.dims[2], &mut want)
                .unwrap();
            let max = want
                .iter()
                .zip(&grid.values)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0f32, f32::max);
            assert!(max < 1e-5, "frame {f} orbital {index}: max difference {max:.2e}");
        }
        orbitals.sort();
        assert_eq!(orbitals, vec![homo, homo + 1], "frame {f}");
    }
    assert!(engine.batches.load(Ordering::SeqCst) >= 4);
    assert_eq!(engine.slabs.load(Ordering::SeqCst), 0, "an orbital computed on its own");
}
