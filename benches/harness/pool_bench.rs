//! `--pool`: the headline cases through the worker pool on the first GPU and on all GPUs
//! (`ORBITFIELD_DEVICES` or every one found), beside the kernels alone on the first GPU:
//!
//! - `orbital`: the synthetic C60 6-31G* HOMO on 256^3 (128^3 with `--quick`): kernels alone (CUDA
//!   events), one copy of the whole lattice into page-locked memory (CUDA events: the copy
//!   bandwidth), and one request through the pool, submission to grid in host memory, median of the
//!   repeats after warm-up requests, each written into the last grid's buffer given back
//!   (`Pool::recycle`, as the viewer does), plus the first request into fresh memory;
//! - `dcs`: the direct Coulomb map of `--pool-dcs-charges` random charges on 256^3 (kernels alone
//!   timed on 16 planes and scaled to the lattice; one timed request per pool after a warm-up on two
//!   planes, which also measures the devices' rates);
//! - `orbital-sweep`: the C60 HOMO of `orbital` through pools whose engines take pipelined chunks of
//!   1M to 16M points, copied back through the page-locked chunk buffers or (recycled buffers
//!   registered with the driver, `PoolConfig::register_recycled`) straight into the grid: per
//!   variant the median request and the median `Pool::recycle` call (the registration's cost) on
//!   the first device and on all, the engines' pipeline figures, and the engine alone (no pool);
//! - `frames`: the potential of adk's partial charges averaged over its 98 frames (tests/data/md) on
//!   a 0.5 A lattice around the first frame, frames in flight on the pool's devices
//!   (`esp_series::fold_frames_ahead`), end to end.
//!
//! Each case reports the scaling efficiency (one-GPU time / (devices x all-GPU time)) and how far
//! the all-GPU map is from the one-GPU map (largest difference over the largest magnitude).

use super::bench::median;
use anyhow::{Context, Result, anyhow};
use orbitfield::analysis::esp_series::{self, Combine, MapAccumulator, MemoryLimit, SeriesSettings};
use orbitfield::compute::SlabEngine;
use orbitfield::compute::cpu::CpuEngine;
use orbitfield::compute::cuda::{self, CudaEngine, PipelineStats};
use orbitfield::compute::esp::EspMethod;
use orbitfield::compute::{Field, FieldInput, FieldJob, PointCharges};
use orbitfield::jobs::{DeviceChoice, EngineSpec, Pool, PoolConfig, SlotId};
use orbitfield::model::{Grid3, Lattice, Spin, Wavefunction};
use serde::Serialize;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

/// One headline case on one GPU and on all.
#[derive(Serialize, Debug, Default)]
pub struct PoolCase {
    pub case: String,
    pub points: usize,
    pub devices: Vec<usize>,
    /// Kernels alone over the whole lattice on the first device, ms (CUDA events, median; for
    /// `dcs` scaled from 16 planes).
    pub kernel_ms: Option<f64>,
    /// One copy of the whole lattice from the first device into page-locked memory, ms (CUDA
    /// events, median), and the bandwidth it gives.
    pub copy_back_ms: Option<f64>,
    pub copy_gb_per_s: Option<f64>,
    /// Through the pool on the first device, ms (median; into a recycled buffer where said).
    pub pool_one_ms: f64,
    /// The first timed request on the first device, written into fresh memory, ms.
    pub pool_one_fresh_ms: Option<f64>,
    /// Pool on one device / (kernels + one copy back).
    pub pool_over_kernel_and_copy: Option<f64>,
    /// Through the pool on all devices, ms.
    pub pool_all_ms: Option<f64>,
    /// One-device time / (devices x all-device time).
    pub efficiency: Option<f64>,
    /// Tiles each GPU worker of the all-device pool computed in the timed requests.
    pub tiles_per_gpu: Vec<u64>,
    /// max |all - one| / max |one| over the map.
    pub max_diff_all_vs_one: Option<f64>,
    pub note: String,
    /// `orbital-sweep`: one row per way of copying back.
    pub sweep: Vec<SweepRow>,
}

/// One way of copying the orbital back, through the pool on the first device and on all.
#[derive(Serialize, Debug, Default)]
pub struct SweepRow {
    /// Points per pipelined chunk (a slab up to this size comes back in one copy).
    pub chunk_points: usize,
    /// Recycled buffers registered with the driver (`PoolConfig::register_recycled`).
    pub register: bool,
    /// The engine alone (`compute_slab` of the whole lattice into one reused vector, registered
    /// when `register`), ms, median.
    pub engine_ms: f64,
    /// Per request on the first device: median ms, median `Pool::recycle` ms before it.
    pub one_ms: f64,
    pub one_recycle_ms: f64,
    /// The first device's pipeline figures over the timed requests, per request.
    pub one_stats: PipelineStats,
    pub all_ms: Option<f64>,
    pub all_recycle_ms: Option<f64>,
    pub all_stats: Vec<PipelineStats>,
    pub efficiency: Option<f64>,
    /// max |all - one| / max |one|, and the one-device map against the default pool's.
    pub max_diff_all_vs_one: Option<f64>,
    pub max_diff_vs_default: f64,
}

/// How a variant's pool copies back.
#[derive(Clone, Copy, Debug)]
struct Variant {
    chunk_points: usize,
    register: bool,
}

/// A pool over `devices` whose CUDA engines use `v`, with the engines.
fn variant_pool(devices: &[usize], v: Variant) -> Result<(Pool<usize>, Vec<Arc<CudaEngine>>)> {
    let found = cuda::discover(Some(devices));
    if found.engines.is_empty() {
        return Err(anyhow!("no CUDA device among {devices:?}"));
    }
    let mut specs = Vec::new();
    for e in &found.engines {
        e.set_pipeline_chunk_points(v.chunk_points)?;
        e.take_pipeline_stats()?;
        specs.push(EngineSpec {
            engine: e.clone() as Arc<dyn SlabEngine>,
            is_gpu: true,
        });
    }
    specs.push(EngineSpec {
        engine: Arc::new(CpuEngine),
        is_gpu: false,
    });
    let config = PoolConfig {
        preference: DeviceChoice::Gpu,
        register_recycled: v.register,
        ..PoolConfig::default()
    };
    Ok((Pool::with_engines(specs, config), found.engines))
}

/// `time_pool` over a variant's pool: median request ms, median recycle ms, the last grid, and the
/// engines' pipeline figures per timed request.
fn time_variant(
    devices: &[usize],
    v: Variant,
    job: &FieldJob,
    warm: usize,
    repeats: usize,
) -> Result<(f64, f64, Grid3, Vec<PipelineStats>)> {
    let (pool, engines) = variant_pool(devices, v)?;
    for _ in 0..warm {
        let g = pool.compute_grid(0, job.clone())?;
        pool.recycle(g.values);
    }
    for e in &engines {
        e.take_pipeline_stats()?;
    }
    let (mut times, mut recycles) = (Vec::new(), Vec::new());
    let mut grid: Option<Grid3> = None;
    for _ in 0..repeats.max(1) {
        if let Some(g) = grid.take() {
            let t = Instant::now();
            pool.recycle(g.values);
            recycles.push(t.elapsed().as_secs_f64() * 1e3);
        }
        let t = Instant::now();
        let g = pool.compute_grid(0, job.clone())?;
        times.push(t.elapsed().as_secs_f64() * 1e3);
        grid = Some(g);
    }
    let per = times.len() as f64;
    let stats = engines
        .iter()
        .map(|e| {
            e.take_pipeline_stats().map(|s| PipelineStats {
                wait_ms: s.wait_ms / per,
                host_copy_ms: s.host_copy_ms / per,
                slab_ms: s.slab_ms / per,
                ..s
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let grid = grid.ok_or_else(|| anyhow!("no grid"))?;
    // The warm-up gave a buffer back: every timed request wrote into a recycled one.
    Ok((median(times), median(recycles), grid, stats))
}

/// The engine alone: the whole lattice into one reused vector (registered when `register`).
fn time_engine(gpu: &CudaEngine, job: &FieldJob, v: Variant, repeats: usize) -> Result<f64> {
    gpu.set_pipeline_chunk_points(v.chunk_points)?;
    let z = 0..job.lattice.dims[2];
    let mut values = vec![0.0f32; job.lattice.n_points()];
    let registration = if v.register {
        // SAFETY: `values` is neither moved nor freed before the registration is dropped below.
        Some(unsafe { cuda::HostRegistration::new(gpu.context(), &mut values) }?)
    } else {
        None
    };
    let mut times = Vec::new();
    for k in 0..repeats + 1 {
        let t = Instant::now();
        gpu.compute_slab(job, z.clone(), &mut values)?;
        if k > 0 {
            times.push(t.elapsed().as_secs_f64() * 1e3);
        }
    }
    drop(registration);
    gpu.set_pipeline_chunk_points(0)?;
    Ok(median(times))
}

fn orbital_sweep(
    c60: &Arc<Wavefunction>,
    gpu: &CudaEngine,
    devices: &[usize],
    n: usize,
    repeats: usize,
) -> Result<PoolCase> {
    let job = c60_homo_job(c60, n)?;
    let points = job.lattice.n_points();
    let first = devices.get(..1).unwrap_or(&[]);
    let reference = time_pool(first, &job, None, 1, 1)?.2;
    let m = 1 << 20;
    let variants = [
        (m, false),
        (2 * m, false),
        (4 * m, false),
        (8 * m, false),
        (points, false),
        (m, true),
        (2 * m, true),
        (4 * m, true),
    ];
    let mut rows = Vec::new();
    for (chunk_points, register) in variants {
        let v = Variant { chunk_points, register };
        let engine_ms = time_engine(gpu, &job, v, repeats)?;
        let (one, one_recycle, g1, one_stats) = time_variant(first, v, &job, 3, repeats + 1)?;
        let mut row = SweepRow {
            chunk_points,
            register,
            engine_ms,
            one_ms: one,
            one_recycle_ms: one_recycle,
            one_stats: one_stats.first().copied().unwrap_or_default(),
            max_diff_vs_default: max_diff(&g1.values, &reference.values),
            ..SweepRow::default()
        };
        if devices.len() > 1 {
            let (all, all_recycle, g2, all_stats) = time_variant(devices, v, &job, 3, repeats + 1)?;
            row.all_ms = Some(all);
            row.all_recycle_ms = Some(all_recycle);
            row.all_stats = all_stats;
            row.efficiency = Some(one / (devices.len() as f64 * all));
            row.max_diff_all_vs_one = Some(max_diff(&g2.values, &g1.values));
        }
        eprintln!("{row:?}");
        rows.push(row);
    }
    Ok(PoolCase {
        case: format!("C60 6-31G* (synthetic) HOMO {n}^3, ways of copying back"),
        points,
        devices: devices.to_vec(),
        note: "per variant: median request into a recycled buffer, median Pool::recycle before it".into(),
        sweep: rows,
        ..PoolCase::default()
    })
}

fn gpu_pool(devices: &[usize]) -> Pool<usize> {
    let pool = Pool::new(PoolConfig {
        preference: DeviceChoice::Gpu,
        devices: Some(devices.to_vec()),
        cpu_workers: 1,
        ..PoolConfig::default()
    });
    for note in pool.notes() {
        eprintln!("pool note: {note}");
    }
    pool
}

fn gpu_tiles(pool: &Pool<usize>) -> Vec<u64> {
    pool.workers()
        .iter()
        .filter(|w| w.is_gpu)
        .map(|w| w.tiles_done.load(Ordering::Relaxed))
        .collect()
}

/// Times `job` through a pool over `devices`: `warm` untimed requests (`warm_job` when given, else
/// `job`), then `repeats` timed ones, each into the last grid's buffer. Returns the median ms, the
/// first timed request's ms (fresh memory), the last grid and the tiles per GPU of the timed requests.
fn time_pool(
    devices: &[usize],
    job: &FieldJob,
    warm_job: Option<&FieldJob>,
    warm: usize,
    repeats: usize,
) -> Result<(f64, f64, Grid3, Vec<u64>)> {
    let pool = gpu_pool(devices);
    if !pool.has_gpu() {
        return Err(anyhow!("no GPU in the pool over {devices:?}"));
    }
    for _ in 0..warm {
        pool.compute_grid(0, warm_job.unwrap_or(job).clone())?;
    }
    let before = gpu_tiles(&pool);
    let mut times = Vec::new();
    let mut grid: Option<Grid3> = None;
    for _ in 0..repeats.max(1) {
        if let Some(g) = grid.take() {
            pool.recycle(g.values);
        }
        let t = Instant::now();
        let g = pool.compute_grid(0, job.clone())?;
        times.push(t.elapsed().as_secs_f64() * 1e3);
        grid = Some(g);
    }
    let tiles = gpu_tiles(&pool).iter().zip(before).map(|(a, b)| a - b).collect();
    let fresh = times.first().copied().unwrap_or(f64::NAN);
    let grid = grid.ok_or_else(|| anyhow!("no grid"))?;
    // The first request wrote fresh memory: the median is over the recycled ones when there are.
    let recycled = if times.len() > 1 { times[1..].to_vec() } else { times };
    Ok((median(recycled), fresh, grid, tiles))
}

/// adk's topology and frames: under `$ORBITFIELD_TEST_ROOT/tests/data` where the harness runs on
/// another machine, else this repository's.
fn adk_files() -> [std::path::PathBuf; 2] {
    let data = |rel: &str| match std::env::var_os("ORBITFIELD_TEST_ROOT") {
        Some(root) => std::path::PathBuf::from(root).join("tests/data").join(rel),
        None => crate::test_data(rel),
    };
    [data("md/adk.psf"), data("md/adk_dims.dcd")]
}

fn max_diff(a: &[f32], b: &[f32]) -> f64 {
    if a.len() != b.len() {
        return f64::INFINITY;
    }
    let scale = a.iter().fold(0.0f64, |m, v| m.max(f64::from(v.abs())));
    let diff = a
        .iter()
        .zip(b)
        .fold(0.0f64, |m, (x, y)| m.max(f64::from((x - y).abs())));
    diff / scale.max(f64::MIN_POSITIVE)
}

/// Runs the cases named in `which` (orbital, dcs, frames).
pub fn run(
    which: &[String],
    c60: &Arc<Wavefunction>,
    gpu: &CudaEngine,
    devices: &[usize],
    quick: bool,
    repeats: usize,
    dcs_charges: usize,
) -> Vec<PoolCase> {
    let mut out = Vec::new();
    for w in which {
        let r = match w.as_str() {
            "orbital" => orbital(c60, gpu, devices, if quick { 128 } else { 256 }, repeats),
            "orbital-sweep" => orbital_sweep(c60, gpu, devices, if quick { 128 } else { 256 }, repeats),
            "dcs" => dcs(gpu, devices, dcs_charges),
            "frames" => frames(devices),
            other => Err(anyhow!(
                "unknown pool case '{other}' (orbital, orbital-sweep, dcs, frames)"
            )),
        };
        match r {
            Ok(c) => {
                eprintln!("{c:?}");
                out.push(c);
            }
            Err(e) => eprintln!("note: pool case '{w}' skipped: {e:#}"),
        }
    }
    out
}

/// C60's HOMO on the harness's cube of `n` points per side.
fn c60_homo_job(c60: &Arc<Wavefunction>, n: usize) -> Result<FieldJob> {
    Ok(FieldJob {
        field: Field::Orbital {
            spin: Spin::Alpha,
            index: super::bench::homo_index(c60)?,
        },
        lattice: super::bench::cube_lattice(c60, n),
        input: FieldInput::Wavefunction(c60.clone()),
    })
}

fn scaling(case: &mut PoolCase, devices: &[usize], all_ms: Option<f64>) {
    case.pool_all_ms = all_ms;
    if devices.len() > 1 {
        case.efficiency = all_ms.map(|a| case.pool_one_ms / (devices.len() as f64 * a));
    }
}

fn orbital(c60: &Arc<Wavefunction>, gpu: &CudaEngine, devices: &[usize], n: usize, repeats: usize) -> Result<PoolCase> {
    let job = c60_homo_job(c60, n)?;
    let points = job.lattice.n_points();
    let kernel = median(gpu.time_kernels(&job, repeats)?);
    let copy = median(gpu.time_copy_back(points, repeats)?);
    let first = devices.get(..1).unwrap_or(&[]);
    let (one, fresh, g1, _) = time_pool(first, &job, None, 3, repeats + 1)?;
    let mut case = PoolCase {
        case: format!("C60 6-31G* (synthetic) HOMO {n}^3"),
        points,
        devices: devices.to_vec(),
        kernel_ms: Some(kernel),
        copy_back_ms: Some(copy),
        copy_gb_per_s: Some(points as f64 * 4.0 / (copy * 1e-3) * 1e-9),
        pool_one_ms: one,
        pool_one_fresh_ms: Some(fresh),
        pool_over_kernel_and_copy: Some(one / (kernel + copy)),
        note: "pool figures: median of the requests into a recycled buffer".into(),
        ..PoolCase::default()
    };
    if devices.len() > 1 {
        let (all, _, g2, tiles) = time_pool(devices, &job, None, 3, repeats + 1)?;
        scaling(&mut case, devices, Some(all));
        case.tiles_per_gpu = tiles;
        case.max_diff_all_vs_one = Some(max_diff(&g1.values, &g2.values));
    }
    Ok(case)
}

fn random_charges(n: usize, ext: [f64; 3]) -> PointCharges {
    let mut seed = 0x1234_5678_9abc_def1u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut q = PointCharges::default();
    for _ in 0..n {
        q.positions_bohr
            .push([next() * ext[0], next() * ext[1], next() * ext[2]]);
        q.charges_e.push(next() * 2.0 - 1.0);
    }
    q
}

fn dcs(gpu: &CudaEngine, devices: &[usize], n_charges: usize) -> Result<PoolCase> {
    let spacing = 0.5;
    let dims = [256, 256, 256];
    let lattice = Lattice::axis_aligned([0.0; 3], spacing, dims);
    let q = Arc::new(random_charges(n_charges, dims.map(|d| d as f64 * spacing)));
    let job = FieldJob {
        field: Field::Potential,
        lattice,
        input: FieldInput::Charges(q.clone()),
    };
    let part = |nz: usize| FieldJob {
        lattice: Lattice::axis_aligned([0.0; 3], spacing, [dims[0], dims[1], nz]),
        ..job.clone()
    };
    let kernel16 = median(gpu.time_kernels(&part(16), 1)?);
    let warm = part(2);
    let first = devices.get(..1).unwrap_or(&[]);
    let (one, _, g1, _) = time_pool(first, &job, Some(&warm), 2, 1)?;
    let mut case = PoolCase {
        case: format!("potential {n_charges} charges 256^3"),
        points: job.lattice.n_points(),
        devices: devices.to_vec(),
        kernel_ms: Some(kernel16 * dims[2] as f64 / 16.0),
        pool_one_ms: one,
        pool_over_kernel_and_copy: None,
        note: "one timed request per pool after two on 2 planes; kernels alone from 16 planes".into(),
        ..PoolCase::default()
    };
    if devices.len() > 1 {
        let (all, _, g2, tiles) = time_pool(devices, &job, Some(&warm), 2, 1)?;
        scaling(&mut case, devices, Some(all));
        case.tiles_per_gpu = tiles;
        case.max_diff_all_vs_one = Some(max_diff(&g1.values, &g2.values));
    }
    Ok(case)
}

/// The averaged map of adk's frames through a pool over `devices`: seconds and the map.
fn frames_map(devices: &[usize], lattice: Lattice) -> Result<(f64, Grid3, Vec<u64>)> {
    let files = adk_files();
    let mut system = orbitfield::io::load(&files).context("adk.psf + adk_dims.dcd")?;
    let charges = esp_series::require_charges(&system)?;
    let frames: Vec<usize> = (0..system.trajectory.n_frames()).collect();
    let settings = SeriesSettings {
        method: EspMethod::Direct,
        periodic: false,
        combine: Combine::Avg,
        memory: MemoryLimit {
            bytes: u64::MAX,
            source: "bench".into(),
        },
    };
    let pool = gpu_pool(devices);
    if !pool.has_gpu() {
        return Err(anyhow!("no GPU in the pool over {devices:?}"));
    }
    // Warm-up: two frames (compilation, the devices' rates).
    let mut warm = MapAccumulator::new(lattice, Combine::Avg, &settings.memory)?;
    let mut eval = |job: FieldJob| pool.compute_grid(0, job).map_err(|e| e.to_string());
    esp_series::fold_frames(
        &mut system.trajectory,
        &frames[..2.min(frames.len())],
        &charges,
        &settings,
        &mut warm,
        &mut eval,
        &mut |_| {},
    )?;
    let before = gpu_tiles(&pool);
    let mut acc = MapAccumulator::new(lattice, Combine::Avg, &settings.memory)?;
    let depth = 2 * devices.len().max(1);
    let t = Instant::now();
    esp_series::fold_frames_ahead(
        &mut system.trajectory,
        &frames,
        &charges,
        &settings,
        &mut acc,
        depth,
        &mut |i, job| {
            pool.submit(SlotId(i as u64), i, job);
            Ok(())
        },
        &mut || {
            let r = pool
                .results()
                .recv()
                .map_err(|_| "the pool has shut down".to_string())?;
            r.outcome.map(|g| (r.key, g)).map_err(|e| e.to_string())
        },
        &mut |values| pool.recycle(values),
        &mut |_| {},
    )?;
    let seconds = t.elapsed().as_secs_f64();
    let tiles = gpu_tiles(&pool).iter().zip(before).map(|(a, b)| a - b).collect();
    Ok((seconds, acc.finish(1.0, "")?, tiles))
}

fn frames(devices: &[usize]) -> Result<PoolCase> {
    let files = adk_files();
    let mut system = orbitfield::io::load(&files).context("adk.psf + adk_dims.dcd")?;
    let mut f0 = orbitfield::model::Frame::default();
    system.trajectory.read_frame(0, &mut f0)?;
    let (mut lo, mut hi) = ([f64::INFINITY; 3], [f64::NEG_INFINITY; 3]);
    for p in &f0.positions_angstrom {
        for k in 0..3 {
            lo[k] = lo[k].min(f64::from(p[k]));
            hi[k] = hi[k].max(f64::from(p[k]));
        }
    }
    let lattice = Lattice::around_box(lo, hi, 5.0, 0.5);
    let n_frames = system.trajectory.n_frames();
    let first = devices.get(..1).unwrap_or(&[]);
    let (one, g1, _) = frames_map(first, lattice)?;
    let mut case = PoolCase {
        case: format!(
            "adk potential averaged over {n_frames} frames, {}x{}x{} at 0.5 A",
            lattice.dims[0], lattice.dims[1], lattice.dims[2]
        ),
        points: lattice.n_points(),
        devices: devices.to_vec(),
        pool_one_ms: one * 1e3,
        note: format!(
            "frames in flight: 2 per device; end to end (frames read, maps folded); {:.1} frames/s on one device",
            n_frames as f64 / one
        ),
        ..PoolCase::default()
    };
    if devices.len() > 1 {
        let (all, g2, tiles) = frames_map(devices, lattice)?;
        scaling(&mut case, devices, Some(all * 1e3));
        case.tiles_per_gpu = tiles;
        case.max_diff_all_vs_one = Some(max_diff(&g1.values, &g2.values));
        case.note += &format!(", {:.1} frames/s on all", n_frames as f64 / all);
    }
    Ok(case)
}
