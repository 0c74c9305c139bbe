//! `orbitfield bench --qm-esp`: the electrostatic potential of a wavefunction (threonine 6-31G*,
//! the embedded Cartesian Molden file), CPU beside PySCF and GPU beside CPU, in one run.
//!
//! - CPU against PySCF: the CPU engine on one thread and PySCF's `cubegen.mep` on one core
//!   (`benches/pyscf_mep_peer.py`, `OMP_NUM_THREADS=1`, run from the repository root with
//!   `--pyscf-python`) on the same cubegen box of `--qm-esp-peer-points`^3 points; the figure is the
//!   ratio of CPU time per point (thread CPU time for ours, process CPU time for PySCF), which a loaded
//!   machine does not distort.
//! - GPU: the kernels over the 80^3 cubegen box (CUDA events, median of the repeats, after a warm-up
//!   that compiles), end to end through a worker pool (request to lattice on the host), and the
//!   largest relative difference from the CPU engine on four middle planes.
//! - wgpu (the first hardware adapter; software ones only with `ORBITFIELD_WGPU=software` or `all`):
//!   the same lattice through the wgpu engine's slab call (upload of the distributions once, then
//!   dispatches and read-back: median of the repeats after a warm-up that compiles), through a pool
//!   of wgpu workers, and the largest difference from the CPU engine on the four middle planes over
//!   the largest |V| there (the bound of `tests/wgpu_qm_esp.rs`).

use super::bench::{cube_lattice, median};
use super::bench_inputs::threonine;
use anyhow::{Context, Result};
use orbitfield::compute::cpu::CpuEngine;
use orbitfield::compute::cuda::CudaEngine;
use orbitfield::compute::qm_esp::PreparedQmEsp;
use orbitfield::compute::{Field, FieldInput, FieldJob, SlabEngine};
use orbitfield::jobs::{DeviceChoice, Pool, PoolConfig};
use serde::Serialize;
use std::sync::Arc;
use std::time::Instant;

/// The figures of `--qm-esp`.
#[derive(Serialize, Debug, Default)]
pub struct QmEspResult {
    pub case: String,
    pub basis_functions: usize,
    /// Hermite distributions kept after screening, and before.
    pub distributions: usize,
    pub candidates: usize,
    /// CPU engine, one thread, on the peer's lattice: points and CPU time per point (microseconds).
    pub cpu_points: usize,
    pub cpu_us_per_point: f64,
    /// PySCF `cubegen.mep` on one core, same lattice: CPU time per point (microseconds).
    pub pyscf_us_per_point: Option<f64>,
    pub pyscf_version: Option<String>,
    /// PySCF's CPU time per point over ours.
    pub cpu_speedup_vs_pyscf: Option<f64>,
    /// The CPU engine on all threads over the GPU lattice (wall, milliseconds), when measured.
    pub cpu_all_threads_ms: Option<f64>,
    pub gpu_points: usize,
    pub gpu_kernel_ms: Option<f64>,
    pub gpu_pool_ms: Option<f64>,
    pub gpu_max_rel_diff_vs_cpu: Option<f64>,
    /// The wgpu engine's adapter, its slab call over the whole lattice and a wgpu pool (wall,
    /// milliseconds), and its largest difference from the CPU engine over the largest |V|.
    pub wgpu_adapter: Option<String>,
    pub wgpu_slab_ms: Option<f64>,
    pub wgpu_pool_ms: Option<f64>,
    pub wgpu_max_diff_of_max_vs_cpu: Option<f64>,
    pub notes: Vec<String>,
}

/// CPU time of the calling thread (ns), from `/proc/thread-self/schedstat` (0 where unavailable).
fn thread_cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|x| x.parse().ok()))
        .unwrap_or(0)
}

#[derive(serde::Deserialize)]
struct Peer {
    points: usize,
    cpu_s: f64,
    pyscf: String,
}

/// Runs the PySCF peer; `None` (with a note) when Python or PySCF is missing.
fn pyscf_peer(python: &str, molden: &str, n: usize, notes: &mut Vec<String>) -> Option<Peer> {
    let out = std::process::Command::new(python)
        .arg("benches/pyscf_mep_peer.py")
        .arg(molden)
        .arg(n.to_string())
        .env("OMP_NUM_THREADS", "1")
        .env("OPENBLAS_NUM_THREADS", "1")
        .env("MKL_NUM_THREADS", "1")
        .output();
    match out {
        Ok(o) if o.status.success() => {
            let text = String::from_utf8_lossy(&o.stdout);
            match text.lines().last().map(serde_json::from_str::<Peer>) {
                Some(Ok(p)) => Some(p),
                _ => {
                    notes.push(format!("PySCF peer printed no result: {}", text.trim()));
                    None
                }
            }
        }
        Ok(o) => {
            let err = String::from_utf8_lossy(&o.stderr);
            notes.push(format!(
                "PySCF peer failed ({python} benches/pyscf_mep_peer.py): {}",
                err.lines().last().unwrap_or("")
            ));
            None
        }
        Err(e) => {
            notes.push(format!("PySCF peer not run ({python}): {e}"));
            None
        }
    }
}

/// The `--qm-esp` section.
pub fn run(
    gpu: Option<&CudaEngine>,
    python: &str,
    peer_points: usize,
    gpu_points: usize,
    repeats: usize,
) -> Result<QmEspResult> {
    let wf = Arc::new(threonine()?);
    let prep = PreparedQmEsp::new(&wf).context("preparing threonine's potential")?;
    let mut r = QmEspResult {
        case: "threonine 6-31G* (Cartesian)".into(),
        basis_functions: wf.basis.n_functions(),
        distributions: prep.pairs.n_kept,
        candidates: prep.pairs.n_candidates,
        ..QmEspResult::default()
    };
    // Ours on one thread (this one): the peer's lattice in blocks of 64 points.
    let small = cube_lattice(&wf, peer_points);
    let [nx, ny, nz] = small.dims;
    let mut points = Vec::with_capacity(small.n_points());
    for k in 0..nz {
        for j in 0..ny {
            for i in 0..nx {
                points.push(small.point_bohr(i, j, k));
            }
        }
    }
    let mut out = vec![0.0; 64];
    let mut per_point = Vec::new();
    for _ in 0..3 {
        let (c0, t0) = (thread_cpu_ns(), Instant::now());
        for chunk in points.chunks(64) {
            prep.eval_block(chunk, &mut out);
        }
        let cpu_ns = thread_cpu_ns().saturating_sub(c0);
        let ns = if cpu_ns > 0 {
            cpu_ns as f64
        } else {
            t0.elapsed().as_nanos() as f64
        };
        per_point.push(ns * 1e-3 / points.len() as f64);
    }
    r.cpu_points = points.len();
    r.cpu_us_per_point = per_point.iter().copied().fold(f64::INFINITY, f64::min);
    if let Some(p) = pyscf_peer(
        python,
        "assets/bench/threonine_hf_631gs_cart.molden",
        peer_points,
        &mut r.notes,
    ) {
        let us = p.cpu_s * 1e6 / p.points.max(1) as f64;
        r.pyscf_us_per_point = Some(us);
        r.pyscf_version = Some(p.pyscf);
        r.cpu_speedup_vs_pyscf = Some(us / r.cpu_us_per_point);
    }
    // The GPU lattice.
    let lattice = cube_lattice(&wf, gpu_points);
    r.gpu_points = lattice.n_points();
    let job = FieldJob {
        field: Field::QmPotential,
        lattice,
        input: FieldInput::Wavefunction(wf.clone()),
    };
    if let Some(g) = gpu {
        r.gpu_kernel_ms = Some(median(g.time_kernels(&job, repeats.max(3))?));
        let pool: Pool<()> = Pool::new(PoolConfig {
            preference: DeviceChoice::Gpu,
            ..PoolConfig::default()
        });
        pool.compute_grid((), job.clone())?;
        let mut times = Vec::new();
        let mut grid = None;
        for _ in 0..repeats.max(3) {
            let t = Instant::now();
            grid = Some(pool.compute_grid((), job.clone())?);
            times.push(t.elapsed().as_secs_f64() * 1e3);
        }
        r.gpu_pool_ms = Some(median(times));
        if let Some(grid) = grid {
            let (z, cpu_vals, ms) = cpu_middle_planes(&job)?;
            r.cpu_all_threads_ms = Some(ms);
            let plane = job.lattice.dims[0] * job.lattice.dims[1];
            let gpu_vals = grid.values.get(z.start * plane..z.end * plane).unwrap_or(&[]);
            r.gpu_max_rel_diff_vs_cpu = Some(
                gpu_vals
                    .iter()
                    .zip(&cpu_vals)
                    .map(|(a, b)| (f64::from(*a) - f64::from(*b)).abs() / f64::from(b.abs()).max(1e-6))
                    .fold(0.0, f64::max),
            );
        }
    }
    wgpu_figures(&job, repeats, &mut r)?;
    Ok(r)
}

/// The CPU engine's values on the four middle planes of `job` (and the time of the whole lattice on
/// all threads, scaled from them).
fn cpu_middle_planes(job: &FieldJob) -> Result<(std::ops::Range<usize>, Vec<f32>, f64)> {
    let n = job.lattice.dims[2];
    let z = n / 2 - 2..n / 2 + 2;
    let plane = job.lattice.dims[0] * job.lattice.dims[1];
    let mut vals = vec![0f32; plane * z.len()];
    let t = Instant::now();
    CpuEngine.compute_slab(job, z.clone(), &mut vals)?;
    let ms = t.elapsed().as_secs_f64() * 1e3 * n as f64 / z.len() as f64;
    Ok((z, vals, ms))
}

/// The `wgpu_*` figures (a note where no adapter takes the work).
fn wgpu_figures(job: &FieldJob, repeats: usize, r: &mut QmEspResult) -> Result<()> {
    use orbitfield::compute::wgpu::adapters::adapters;
    let software = matches!(
        std::env::var("ORBITFIELD_WGPU").as_deref().map(str::trim),
        Ok("software" | "all")
    );
    let Some(adapter) = adapters().iter().find(|a| software || !a.is_software()) else {
        r.notes
            .push("wgpu: no hardware adapter (ORBITFIELD_WGPU=software to time a software one)".into());
        return Ok(());
    };
    let engine = match adapter.engine() {
        Ok(e) => e,
        Err(e) => {
            r.notes.push(format!("wgpu: {}: {e}", adapter.describe()));
            return Ok(());
        }
    };
    r.wgpu_adapter = Some(engine.name());
    let mut out = vec![0f32; job.lattice.n_points()];
    let all = 0..job.lattice.dims[2];
    engine.compute_slab(job, all.clone(), &mut out)?;
    let mut times = Vec::new();
    for _ in 0..repeats.max(3) {
        let t = Instant::now();
        engine.compute_slab(job, all.clone(), &mut out)?;
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    r.wgpu_slab_ms = Some(median(times));
    let pool: Pool<()> = Pool::new(PoolConfig {
        preference: DeviceChoice::Wgpu,
        ..PoolConfig::default()
    });
    pool.compute_grid((), job.clone())?;
    let mut times = Vec::new();
    for _ in 0..repeats.max(3) {
        let t = Instant::now();
        pool.compute_grid((), job.clone())?;
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    r.wgpu_pool_ms = Some(median(times));
    let (z, cpu_vals, ms) = cpu_middle_planes(job)?;
    r.cpu_all_threads_ms.get_or_insert(ms);
    let plane = job.lattice.dims[0] * job.lattice.dims[1];
    let got = out.get(z.start * plane..z.end * plane).unwrap_or(&[]);
    let vmax = cpu_vals.iter().fold(0f64, |m, v| m.max(f64::from(v.abs())));
    r.wgpu_max_diff_of_max_vs_cpu = Some(
        got.iter()
            .zip(&cpu_vals)
            .map(|(a, b)| (f64::from(*a) - f64::from(*b)).abs() / vmax.max(1e-30))
            .fold(0.0, f64::max),
    );
    Ok(())
}

/// One line per figure.
pub fn print(r: &QmEspResult) {
    println!(
        "qm_esp {}: {} functions, {} of {} distributions kept",
        r.case, r.basis_functions, r.distributions, r.candidates
    );
    println!(
        "qm_esp cpu one thread: {:.2} us/point (CPU time, {} points){}",
        r.cpu_us_per_point,
        r.cpu_points,
        match (r.pyscf_us_per_point, r.cpu_speedup_vs_pyscf) {
            (Some(p), Some(s)) => format!("; PySCF cubegen.mep one core {p:.1} us/point: {s:.1}x"),
            _ => "; PySCF peer not measured".into(),
        }
    );
    if let Some(ms) = r.gpu_kernel_ms {
        println!(
            "qm_esp gpu {} points: kernels {ms:.2} ms, through the pool {} ms, CPU engine (all threads, scaled from 4 planes) {} ms, max rel diff vs CPU {}",
            r.gpu_points,
            r.gpu_pool_ms.map_or("-".into(), |x| format!("{x:.2}")),
            r.cpu_all_threads_ms.map_or("-".into(), |x| format!("{x:.1}")),
            r.gpu_max_rel_diff_vs_cpu.map_or("-".into(), |x| format!("{x:.1e}")),
        );
    }
    if let (Some(name), Some(ms)) = (&r.wgpu_adapter, r.wgpu_slab_ms) {
        println!(
            "qm_esp wgpu {} points on {name}: slab call {ms:.2} ms, through a wgpu pool {} ms, CPU engine (all threads) {} ms, max diff vs CPU {} of max |V|",
            r.gpu_points,
            r.wgpu_pool_ms.map_or("-".into(), |x| format!("{x:.2}")),
            r.cpu_all_threads_ms.map_or("-".into(), |x| format!("{x:.1}")),
            r.wgpu_max_diff_of_max_vs_cpu.map_or("-".into(), |x| format!("{x:.1e}")),
        );
    }
    for n in &r.notes {
        println!("qm_esp note: {n}");
    }
}
