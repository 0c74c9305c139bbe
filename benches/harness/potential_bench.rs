//! `orbitfield bench`'s potential and RDF cases: direct Coulomb maps (kernel variants against
//! float64 sums), an MSM potential map of a water box end to end, and the RDF kernels' methods
//! against the all-pairs histogram.

use super::bench::{CaseResult, Rng, cpu_time, gpu_values, median, rel_err};
use anyhow::{Result, bail};
use orbitfield::compute::FieldInput;
use orbitfield::compute::cpu::CpuEngine;
use orbitfield::compute::cuda::{self, CudaEngine};
use orbitfield::compute::{Field, FieldJob, PointCharges};
use orbitfield::jobs::DeviceChoice;
use orbitfield::model::Lattice;
use serde::Serialize;
use std::sync::Arc;
use std::time::Instant;

/// One MSM potential map of a water box, end to end.
#[derive(Serialize, Debug)]
pub(super) struct MsmResult {
    pub(super) atoms: usize,
    pub(super) box_angstrom: f64,
    pub(super) cutoff_angstrom: f64,
    pub(super) msm_spacing_angstrom: f64,
    pub(super) map_points: usize,
    pub(super) map_spacing_angstrom: f64,
    pub(super) engines: Vec<String>,
    /// Who binned the charges and computed the long-range levels: "host" (with the plan) or
    /// "engine" (the engine that filled the map: the device for a CUDA engine).
    pub(super) stages_on: String,
    /// The plan on the host (median): the bins' and levels' geometry and, with `stages_on` "host",
    /// the binning and every long-range level.
    pub(super) plan_s: f64,
    /// Sorting the charges into bins on the host, timed apart: part of `plan_s` when `stages_on` is
    /// "host", a reference otherwise.
    pub(super) bins_s: f64,
    /// The slab kernel over the whole map on the device alone (CUDA events, median of 3), when a
    /// GPU is present.
    pub(super) kernel_s: Option<f64>,
    /// Binning on the device alone (CUDA events, median of 3; the charges' upload inside), when a
    /// GPU is present, whatever `stages_on`.
    pub(super) device_bins_s: Option<f64>,
    /// Every long-range level on the device alone (CUDA events, median of 3; the charges' lattice
    /// coordinates computed and uploaded inside), when a GPU is present, whatever `stages_on`.
    pub(super) device_levels_s: Option<f64>,
    /// Short-range sums and interpolation of the whole map through the pool (with `stages_on`
    /// "engine", binning and levels on the device first), map on the host (median).
    pub(super) map_s: f64,
    pub(super) total_s: f64,
    /// The first repeat end to end, whose map is written into freshly allocated memory.
    pub(super) first_total_s: f64,
    /// Relative RMS error against a float64 direct sum at sampled map points.
    pub(super) rel_rms_vs_direct: f64,
    pub(super) sampled_points: usize,
}

/// `n_atoms / 3` TIP3P-charged waters (O -0.834 e, H +0.417 e) at liquid density, randomly oriented,
/// one per cell of a cubic lattice with the oxygen anywhere in its cell (no long-range order, which
/// would resonate with some MSM lattice spacings); returns the charges (bohr) and the box side
/// (Angstrom).
pub(super) fn water_box(n_atoms: usize, seed: u64) -> (PointCharges, f64) {
    let waters = (n_atoms / 3).max(1);
    let per_side = (waters as f64).cbrt().ceil() as usize;
    let a = (29.9f64).cbrt();
    let side = per_side as f64 * a;
    let mut rng = Rng(seed);
    let mut q = PointCharges::default();
    let bohr = orbitfield::model::units::bohr_from_angstrom(1.0);
    'fill: for i in 0..per_side {
        for j in 0..per_side {
            for k in 0..per_side {
                if q.charges_e.len() >= 3 * waters {
                    break 'fill;
                }
                let o = [i, j, k].map(|n| (n as f64 + rng.unit()) * a);
                // A random orientation: O-H 0.9572 A, H-O-H 104.52 degrees.
                let u = [rng.unit() - 0.5, rng.unit() - 0.5, rng.unit() - 0.5];
                let nu = (u[0] * u[0] + u[1] * u[1] + u[2] * u[2]).sqrt().max(1e-9);
                let u = u.map(|x| x / nu);
                let t = [rng.unit() - 0.5, rng.unit() - 0.5, rng.unit() - 0.5];
                let d = t[0] * u[0] + t[1] * u[1] + t[2] * u[2];
                let v = [t[0] - d * u[0], t[1] - d * u[1], t[2] - d * u[2]];
                let nv = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt().max(1e-9);
                let v = v.map(|x| x / nv);
                let half = (104.52f64 / 2.0).to_radians();
                let h1 = [0, 1, 2].map(|c| o[c] + 0.9572 * (half.cos() * u[c] + half.sin() * v[c]));
                let h2 = [0, 1, 2].map(|c| o[c] + 0.9572 * (half.cos() * u[c] - half.sin() * v[c]));
                for (p, c) in [(o, -0.834), (h1, 0.417), (h2, 0.417)] {
                    q.positions_bohr.push(p.map(|x| x * bohr));
                    q.charges_e.push(c);
                }
            }
        }
    }
    (q, side)
}

pub(super) fn msm_case(
    n_atoms: usize,
    spacing_angstrom: f64,
    params: orbitfield::compute::esp::MsmParams,
    preference: DeviceChoice,
    repeats: usize,
    stages: orbitfield::compute::esp::StagesOn,
) -> Result<MsmResult> {
    use orbitfield::compute::esp::{Boundary, EspMethod, EspPlan, StagesOn, field_input, field_input_with};
    use orbitfield::jobs::{Pool, PoolConfig};
    let (charges, side) = water_box(n_atoms, 0x6d73_6d00 ^ n_atoms as u64);
    let bohr = orbitfield::model::units::bohr_from_angstrom(1.0);
    let n = (side / spacing_angstrom).round() as usize + 1;
    let lattice = Lattice::axis_aligned([0.0; 3], spacing_angstrom * bohr, [n, n, n]);
    let charges = Arc::new(charges);
    let pool: Pool<()> = Pool::new(PoolConfig {
        preference,
        ..PoolConfig::default()
    });
    // Warm-up on a small map (device contexts exist already; this compiles the kernel).
    let small = Lattice::axis_aligned([0.0; 3], spacing_angstrom * bohr, [n.min(32), n.min(32), n.min(32)]);
    let warm = field_input_with(charges.clone(), EspMethod::Msm(params), Boundary::Open, &small, stages)?;
    pool.compute_grid(
        (),
        FieldJob {
            field: Field::Potential,
            lattice: small,
            input: warm,
        },
    )?;
    let mut plan_t = Vec::new();
    let mut map_t = Vec::new();
    let mut total_t = Vec::new();
    let mut grid: Option<orbitfield::model::Grid3> = None;
    for _ in 0..repeats.max(1) {
        // The last map's buffer goes back to the pool before the clock starts, as a viewer or a
        // trajectory series gives back the map it replaces: the next map is written into memory
        // that is mapped already. The first repeat writes a fresh buffer (`first_total_s`).
        if let Some(g) = grid.take() {
            pool.recycle(g.values);
        }
        let t0 = Instant::now();
        let input = field_input_with(
            charges.clone(),
            EspMethod::Msm(params),
            Boundary::Open,
            &lattice,
            stages,
        )?;
        let t1 = Instant::now();
        let g = pool.compute_grid(
            (),
            FieldJob {
                field: Field::Potential,
                lattice,
                input,
            },
        )?;
        let t2 = Instant::now();
        plan_t.push((t1 - t0).as_secs_f64());
        map_t.push((t2 - t1).as_secs_f64());
        total_t.push((t2 - t0).as_secs_f64());
        grid = Some(g);
    }
    let grid = grid.ok_or_else(|| anyhow::anyhow!("no map"))?;
    let t = Instant::now();
    let a_bohr = orbitfield::model::units::bohr_from_angstrom(params.cutoff_angstrom);
    orbitfield::compute::esp::bins::AtomBins::open(&charges.positions_bohr, &charges.charges_e, a_bohr)
        .map_err(anyhow::Error::msg)?;
    let bins_s = t.elapsed().as_secs_f64();
    let mut kernel_s = None;
    let mut device_bins_s = None;
    let mut device_levels_s = None;
    if preference != DeviceChoice::Cpu
        && let Some(gpu) = cuda::discover(Some(&[0])).engines.into_iter().next()
    {
        let input = field_input(charges.clone(), EspMethod::Msm(params), Boundary::Open, &lattice)?;
        let job = FieldJob {
            field: Field::Potential,
            lattice,
            input,
        };
        kernel_s = Some(median(gpu.time_kernels(&job, 3)?) * 1e-3);
        let plan = EspPlan::build_with(
            charges.clone(),
            EspMethod::Msm(params),
            Boundary::Open,
            &lattice,
            StagesOn::Engine,
        )?;
        device_bins_s = Some(median(gpu.time_msm_bins(&plan, 3)?) * 1e-3);
        device_levels_s = Some(median(gpu.time_msm_levels(&plan, 3)?) * 1e-3);
    }
    // Accuracy: float64 direct sums at sampled points (at least 1 A from every charge).
    let mut rng = Rng(0x00ac_c0de);
    let samples: Vec<(usize, [f64; 3])> = (0..400)
        .map(|_| {
            let idx = [0; 3].map(|_| ((rng.unit() * n as f64) as usize).min(n - 1));
            (
                idx[0] + n * (idx[1] + n * idx[2]),
                lattice.point_bohr(idx[0], idx[1], idx[2]),
            )
        })
        .collect();
    use rayon::prelude::*;
    let min_r = bohr;
    let exact: Vec<Option<f64>> = samples
        .par_iter()
        .map(|(_, p)| {
            let mut v = 0.0;
            for (x, c) in charges.positions_bohr.iter().zip(&charges.charges_e) {
                let r = ((p[0] - x[0]).powi(2) + (p[1] - x[1]).powi(2) + (p[2] - x[2]).powi(2)).sqrt();
                if r < min_r {
                    return None;
                }
                v += c / r;
            }
            Some(v)
        })
        .collect();
    let (mut num, mut den, mut used) = (0.0f64, 0.0f64, 0usize);
    for ((idx, _), e) in samples.iter().zip(&exact) {
        if let (Some(e), Some(&g)) = (e, grid.values.get(*idx)) {
            num += (f64::from(g) - e).powi(2);
            den += e * e;
            used += 1;
        }
    }
    let engines = pool.workers().iter().map(|w| w.engine.clone()).collect();
    Ok(MsmResult {
        atoms: charges.charges_e.len(),
        box_angstrom: side,
        cutoff_angstrom: params.cutoff_angstrom,
        msm_spacing_angstrom: params.spacing_angstrom,
        map_points: lattice.n_points(),
        map_spacing_angstrom: spacing_angstrom,
        engines,
        stages_on: match stages {
            StagesOn::Host => "host",
            StagesOn::Engine => "engine",
        }
        .to_string(),
        plan_s: median(plan_t),
        bins_s,
        kernel_s,
        device_bins_s,
        device_levels_s,
        map_s: median(map_t),
        first_total_s: total_t.first().copied().unwrap_or(f64::NAN),
        total_s: median(total_t),
        rel_rms_vs_direct: (num / den.max(1e-300)).sqrt(),
        sampled_points: used,
    })
}

/// One RDF frame of N x N pairs: all-pairs GPU kernel and the CPU cell-list engine.
#[derive(Serialize, Debug)]
pub(super) struct RdfResult {
    pub(super) atoms: usize,
    pub(super) box_angstrom: f64,
    pub(super) r_max_angstrom: f64,
    pub(super) bins: usize,
    /// Fraction of pairs within r_max.
    pub(super) hit_fraction: f64,
    /// GPU frame time: upload, all N x N distances, histogram download (median).
    pub(super) gpu_ms: Option<f64>,
    pub(super) gpu_pairs_per_s: Option<f64>,
    /// The CPU engine (cell list, rayon) on the same frame; absent above `cpu_limit` atoms.
    pub(super) cpu_ms: Option<f64>,
    /// CPU pair distances per second, counted as N x N (what the cell list replaces).
    pub(super) cpu_pairs_per_s: Option<f64>,
    /// Whether GPU and CPU count the same pairs within r_max, and the fraction of those the GPU
    /// puts in a neighbouring bin (f32 against f64 distances at bin edges).
    pub(super) same_total: Option<bool>,
    pub(super) moved_fraction: Option<f64>,
    /// Every GPU method timed (`--rdf-methods`); `gpu_ms` above is the first.
    pub(super) methods: Vec<RdfMethodResult>,
}

/// One GPU pair-enumeration method on one RDF frame.
#[derive(Serialize, Debug)]
pub(super) struct RdfMethodResult {
    /// The method asked for, and the one that ran (all pairs where the cell list does not apply).
    pub(super) method: String,
    pub(super) used: String,
    pub(super) gpu_ms: f64,
    /// N x N pairs per second (the work the cell list replaces).
    pub(super) pairs_per_s: f64,
    /// Whether its histogram equals the all-pairs kernel's count for count.
    pub(super) identical_to_all_pairs: bool,
}

pub(super) fn rdf_case(
    n: usize,
    r_max: f64,
    gpu: Option<&CudaEngine>,
    repeats: usize,
    methods: &[orbitfield::compute::cuda::rdf::RdfMethod],
) -> Result<RdfResult> {
    use orbitfield::analysis::rdf::{RdfAccumulator, RdfSettings};
    use orbitfield::compute::cuda::rdf::{PairGeometry, RdfMethod};
    use orbitfield::model::{Frame, UnitCell};
    // Water oxygen density: 0.0334 per cubic Angstrom.
    let side = (n as f64 / 0.0334).cbrt();
    let mut rng = Rng(0x5eed_0000_0000_0001 ^ n as u64);
    let frame = Frame {
        positions_angstrom: (0..n).map(|_| [0; 3].map(|_| (rng.next() * side) as f32)).collect(),
        cell: Some(UnitCell::orthorhombic([side; 3])),
        ..Frame::default()
    };
    let sel: Vec<u32> = (0..n as u32).collect();
    let bins = 120;
    let settings = RdfSettings {
        r_max_angstrom: r_max,
        bins,
        exclude_same_group: false,
    };
    let acc = RdfAccumulator::new(settings.clone())?;
    let cell = acc.check_frame(0, &frame, &sel, &sel, None)?;
    let pairs = n as f64 * n as f64;
    let mut out = RdfResult {
        atoms: n,
        box_angstrom: side,
        r_max_angstrom: r_max,
        bins,
        hit_fraction: 0.0,
        gpu_ms: None,
        gpu_pairs_per_s: None,
        cpu_ms: None,
        cpu_pairs_per_s: None,
        same_total: None,
        moved_fraction: None,
        methods: Vec::new(),
    };
    let cpu_counts = if n <= 200_000 {
        let mut times = Vec::new();
        let mut counts = Vec::new();
        for _ in 0..repeats.clamp(1, 3) {
            let t = Instant::now();
            counts = acc.frame_counts_cpu(&frame, cell, &sel, &sel, None)?;
            times.push(t.elapsed().as_secs_f64() * 1e3);
        }
        let ms = median(times);
        out.cpu_ms = Some(ms);
        out.cpu_pairs_per_s = Some(pairs / (ms * 1e-3));
        Some(counts)
    } else {
        None
    };
    if let Some(g) = gpu {
        let geom = PairGeometry::new(&frame, cell, &sel, &sel, None);
        let (all_pairs, _) = g.rdf_counts_with(&geom, &settings, RdfMethod::AllPairs)?;
        let mut first = None;
        for &method in methods {
            let (counts, used) = g.rdf_counts_with(&geom, &settings, method)?;
            let mut times = Vec::new();
            for _ in 0..repeats.max(1) {
                let t = Instant::now();
                let (c, _) = g.rdf_counts_with(&geom, &settings, method)?;
                times.push(t.elapsed().as_secs_f64() * 1e3);
                if c != counts {
                    bail!("RDF kernel ({method}): two runs on the same frame gave different counts");
                }
            }
            let ms = median(times);
            let m = RdfMethodResult {
                method: method.to_string(),
                used: used.to_string(),
                gpu_ms: ms,
                pairs_per_s: pairs / (ms * 1e-3),
                identical_to_all_pairs: counts == all_pairs,
            };
            println!(
                "{}",
                serde_json::json!({
                    "bench": "rdf_method",
                    "atoms": n,
                    "box_angstrom": side,
                    "r_max_angstrom": r_max,
                    "method": m.method,
                    "used": m.used,
                    "gpu_ms": m.gpu_ms,
                    "pairs_per_s": m.pairs_per_s,
                    "identical_to_all_pairs": m.identical_to_all_pairs,
                })
            );
            out.methods.push(m);
            first.get_or_insert((ms, counts));
        }
        let (ms, counts) = first.unwrap_or((f64::NAN, all_pairs));
        out.gpu_ms = Some(ms);
        out.gpu_pairs_per_s = Some(pairs / (ms * 1e-3));
        out.hit_fraction = counts.iter().sum::<u64>() as f64 / pairs;
        if let Some(c) = &cpu_counts {
            let total: u64 = c.iter().sum();
            let moved: u64 = counts.iter().zip(c).map(|(a, b)| a.abs_diff(*b)).sum();
            out.same_total = Some(counts.iter().sum::<u64>() == total);
            out.moved_fraction = Some(moved as f64 / total.max(1) as f64);
        }
    } else if let Some(c) = &cpu_counts {
        out.hit_fraction = c.iter().sum::<u64>() as f64 / pairs;
    }
    Ok(out)
}

pub(super) fn dcs_case(
    n_charges: usize,
    dims: [usize; 3],
    gpu: Option<&CudaEngine>,
    cpu: &CpuEngine,
    repeats: usize,
    variants: &[cuda::DcsVariant],
) -> Result<Vec<CaseResult>> {
    let spacing = 0.5;
    let lattice = Lattice::axis_aligned([0.0; 3], spacing, dims);
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let ext = dims.map(|d| d as f64 * spacing);
    let mut q = PointCharges::default();
    for _ in 0..n_charges {
        q.positions_bohr.push([
            (rng.next() * 0.5 + 0.5) * ext[0],
            (rng.next() * 0.5 + 0.5) * ext[1],
            (rng.next() * 0.5 + 0.5) * ext[2],
        ]);
        q.charges_e.push(rng.next());
    }
    let job = FieldJob {
        field: Field::Potential,
        lattice,
        input: FieldInput::Charges(Arc::new(q)),
    };
    let evals = job.lattice.n_points() as f64 * n_charges as f64;
    let slab = if evals > 2e9 { 1 } else { dims[2] };
    let (cpu_ms, cpu_note, cpu_vals, z) = cpu_time(cpu, &job, slab, repeats.min(3))?;
    let base = CaseResult {
        name: format!("potential {n_charges} charges {}x{}x{}", dims[0], dims[1], dims[2]),
        points: job.lattice.n_points(),
        size: n_charges,
        gpu_ms: None,
        gpu_form: None,
        gpu_general_ms: None,
        gpu_specialised_ms: None,
        cpu_ms,
        cpu_note,
        speedup: None,
        gpu_evals_per_s: None,
        cpu_evals_per_s: Some(evals / (cpu_ms * 1e-3)),
        rel_err_vs_cpu: None,
        cpu_pair_ms: None,
        cpu_batch_ms: None,
        gpu_pair_ms: None,
        gpu_batch_ms: None,
        max_rel_err_vs_f64: None,
    };
    let Some(g) = gpu else { return Ok(vec![base]) };
    let default = g.dcs_variant();
    let list = if variants.is_empty() {
        vec![default]
    } else {
        variants.to_vec()
    };
    let mut out = Vec::new();
    let FieldInput::Charges(q) = &job.input else {
        bail!("the potential case has no charges");
    };
    // Float64 reference at 509 points spread over the compared planes (a prime stride).
    let (nx, ny) = (dims[0], dims[1]);
    let plane = nx * ny;
    let samples: Vec<usize> = (0..509).map(|k| (k * 7919 * 13) % (plane * z.len())).collect();
    let reference: Vec<f64> = samples
        .iter()
        .map(|&idx| {
            let p = [
                (idx % nx) as f64 * spacing,
                (idx / nx % ny) as f64 * spacing,
                (z.start + idx / plane) as f64 * spacing,
            ];
            q.positions_bohr
                .iter()
                .zip(&q.charges_e)
                .map(|(a, &c)| c / ((a[0] - p[0]).powi(2) + (a[1] - p[1]).powi(2) + (a[2] - p[2]).powi(2)).sqrt())
                .sum()
        })
        .collect();
    for v in list {
        g.set_dcs_variant(v);
        let ms = median(g.time_kernels(&job, repeats)?);
        let mut r = CaseResult {
            name: format!("{} [{v}]", base.name),
            cpu_note: base.cpu_note.clone(),
            gpu_form: None,
            ..base
        };
        r.gpu_form = Some(format!(
            "dcs {v}: {} x {} points/thread, {:.3} of 1/sqrt on the FMA pipe",
            v.unroll,
            v.rows,
            v.soft_fraction()
        ));
        r.gpu_ms = Some(ms);
        r.speedup = Some(cpu_ms / ms);
        r.gpu_evals_per_s = Some(evals / (ms * 1e-3));
        let values = gpu_values(g, &job, z.clone())?;
        r.rel_err_vs_cpu = Some(rel_err(&values, &cpu_vals));
        let worst = samples
            .iter()
            .zip(&reference)
            .map(|(&i, &want)| {
                values
                    .get(i)
                    .map_or(f64::INFINITY, |&got| (f64::from(got) - want).abs() / want.abs())
            })
            .fold(0.0, f64::max);
        r.max_rel_err_vs_f64 = Some(worst);
        println!(
            "{}",
            serde_json::json!({
                "bench": "dcs_variant",
                "variant": v.to_string(),
                "soft_fraction": v.soft_fraction(),
                "gpu_ms": ms,
                "evals_per_s": evals / (ms * 1e-3),
                "max_rel_err_vs_f64": worst,
                "rel_err_vs_cpu": r.rel_err_vs_cpu,
            })
        );
        out.push(r);
    }
    g.set_dcs_variant(default);
    Ok(out)
}
