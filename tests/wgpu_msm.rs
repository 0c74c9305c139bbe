//! Cutoff and multilevel-summation maps on the wgpu engine (`compute::wgpu::msm`, on whatever
//! adapter exists: Mesa lavapipe in CI, the H200's Vulkan driver on the device machine) against the
//! CPU engine (`EspPlan::fill_slab`, f64), the numerical reference, on fresh random charges (the seed
//! is printed; `ORBITFIELD_TEST_SEED` replays one):
//! - the cutoff method and MSM, open boundaries and periodic orthorhombic and triclinic cells (charges
//!   also outside the cell, lattices reaching past it), plans built with their stages on the host
//!   and deferred ones (planned by the wgpu engine with `StagesOn::Engine`: MSM levels on the device,
//!   `tests/wgpu_msm_levels.rs`), whole maps and a slab;
//! - the cutoff method with the screened models (eps = 4r, Debye-Hueckel);
//! - an open MSM plan filled past its MSM lattice: those points get the direct sum (the pass marks
//!   them, the host evaluates them);
//! - the worker pool with a wgpu worker beside a CPU worker, and `grid esp --method msm --device
//!   wgpu` against `--device cpu` through the command.
//!
//! Both short-range kernels (`msm_tiles`, the default, and `msm_slab`) are compared.
//!
//! Bound: at the lattice points farther than [`NEAR_BOHR`] from every charge (and periodic image),
//! the largest difference within [`TOL`] of the largest |value| there and the RMS relative error
//! within [`RMS_TOL`]; at every point within [`NEAR_TOL`]. The f32 reason: coordinates relative to
//! the bins' origin (and the lattice steps) rounded to f32 carry `delta`, a few 1e-6 bohr over these
//! 20 to 35 bohr boxes, which gives a point `r` from a charge a relative error of about `delta / r`
//! in that charge's term, and the map's largest values are at such points: 5e-5 at r = 0.1 bohr,
//! 1e-3 at 0.005 bohr. Measured on lavapipe over repeated seeds (both kernels alike): away from
//! charges largest difference up to 5.9e-6 (open), 1.9e-5 (periodic orthorhombic and triclinic),
//! 1.7e-5 (eps = 4r) of the largest |value|, RMS relative up to 8.7e-6; with the near points up to
//! 5.3e-5. The comparison fails when the kernel is broken: the same maps without the long-range interpolation
//! and with one neighbour bin dropped from the CPU's bins miss it by far more than [`TOL`].
//!
//! Without an adapter with compute shaders the tests print why and pass, unless
//! `ORBITFIELD_REQUIRE_WGPU=1` is set.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use orbitfield::compute::cpu::CpuEngine;
use orbitfield::compute::esp::bins::{AtomBins, short_range_slab};
use orbitfield::compute::esp::kernel::reciprocal;
use orbitfield::compute::esp::screening::{Dielectric, field_input_screened};
use orbitfield::compute::esp::{Boundary, DeferredPlan, EspMethod, MsmParams, StagesOn, field_input_with};
use orbitfield::compute::wgpu::engine::WgpuEngine;
use orbitfield::compute::wgpu::msm::MsmKernel;
use orbitfield::compute::{Field, FieldInput, FieldJob, PointCharges, SlabEngine};
use orbitfield::jobs::{EngineSpec, Pool, PoolConfig};
use orbitfield::model::units::bohr_from_angstrom;
use orbitfield::model::{Lattice, UnitCell};
use std::path::Path;
use std::sync::Arc;

#[path = "common/seeded_charges.rs"]
mod seeded_charges;
#[path = "common/wgpu_test_engine.rs"]
mod wgpu_test_engine;
use seeded_charges::{random_charges, seed};
use wgpu_test_engine::{engine, required};

/// Largest difference over the largest |value| of the CPU engine's map.
const TOL: f64 = 1e-4;
/// RMS relative error away from charges (eps = 4r, whose 1/r^2 doubles the coordinate error near
/// charges, measured up to 8.7e-6; vacuum up to 2.8e-6).
const RMS_TOL: f64 = 5e-5;

fn slab(engine: &dyn SlabEngine, job: &FieldJob, z: std::ops::Range<usize>) -> Vec<f32> {
    let n = job.lattice.dims[0] * job.lattice.dims[1] * z.len();
    let mut out = vec![f32::NAN; n];
    engine.compute_slab(job, z, &mut out).unwrap();
    assert!(out.iter().all(|v| v.is_finite()), "{}: unwritten values", engine.name());
    out
}

/// Lattice points nearer than this to a charge (or a periodic image) are where f32 coordinates
/// limit the pass (see the module documentation): their bound is [`NEAR_TOL`].
const NEAR_BOHR: f64 = 0.1;
/// The bound at every point, those near charges included: a point `r` from a charge sees a relative
/// error of about `delta / r` with `delta` a few 1e-6 bohr (the coordinates' f32 rounding), 1e-3 at
/// r = 0.003 bohr, and the largest |value| is such a point's.
const NEAR_TOL: f64 = 1e-3;

/// Which lattice points lie within [`NEAR_BOHR`] of a charge or of one of its periodic images.
fn near_mask(lattice: &Lattice, q: &PointCharges, boundary: Boundary) -> Vec<bool> {
    let inv = reciprocal(&lattice.steps_bohr).unwrap();
    let dims = lattice.dims;
    let mut near = vec![false; lattice.n_points()];
    let mut shifts = vec![[0.0; 3]];
    if let Boundary::Periodic(cell) = boundary {
        let m = cell.matrix_angstrom().map(|r| r.map(bohr_from_angstrom));
        shifts.clear();
        for a in -2..=2 {
            for b in -2..=2 {
                for c in -2..=2 {
                    let f = [a as f64, b as f64, c as f64];
                    shifts.push(std::array::from_fn(|k| {
                        f[0] * m[0][k] + f[1] * m[1][k] + f[2] * m[2][k]
                    }));
                }
            }
        }
    }
    for p in &q.positions_bohr {
        for s in &shifts {
            let d: [f64; 3] = std::array::from_fn(|k| p[k] + s[k] - lattice.origin_bohr[k]);
            let t: [f64; 3] = std::array::from_fn(|k| inv[k][0] * d[0] + inv[k][1] * d[1] + inv[k][2] * d[2]);
            for corner in 0..8 {
                let idx: [f64; 3] = std::array::from_fn(|k| {
                    if corner & (1 << k) == 0 {
                        t[k].floor()
                    } else {
                        t[k].ceil()
                    }
                });
                if (0..3).any(|k| idx[k] < 0.0 || idx[k] >= dims[k] as f64) {
                    continue;
                }
                let (i, j, kk) = (idx[0] as usize, idx[1] as usize, idx[2] as usize);
                let x = lattice.point_bohr(i, j, kk);
                let r2: f64 = (0..3).map(|k| (x[k] - p[k] - s[k]).powi(2)).sum();
                if r2 < NEAR_BOHR * NEAR_BOHR {
                    near[i + dims[0] * (j + dims[1] * kk)] = true;
                }
            }
        }
    }
    near
}

/// (largest difference / largest |reference|, RMS relative error) over the points `keep` holds.
fn errors_where(got: &[f32], want: &[f32], keep: impl Fn(usize) -> bool) -> (f64, f64) {
    assert_eq!(got.len(), want.len());
    let (mut max, mut worst, mut num, mut den) = (0f64, 0f64, 0f64, 0f64);
    for (n, (&g, &w)) in got.iter().zip(want).enumerate() {
        if !keep(n) {
            continue;
        }
        let d = f64::from(g) - f64::from(w);
        max = max.max(f64::from(w.abs()));
        worst = worst.max(d.abs());
        num += d * d;
        den += f64::from(w) * f64::from(w);
    }
    assert!(max > 0.0, "an all-zero map tests nothing");
    (worst / max, (num / den).sqrt())
}

/// (largest difference / largest |reference|, RMS relative error) over every point.
fn errors(got: &[f32], want: &[f32]) -> (f64, f64) {
    errors_where(got, want, |_| true)
}

/// The map against the reference: within [`TOL`] and [`RMS_TOL`] at the points `near` leaves out,
/// within [`NEAR_TOL`] everywhere.
fn check(what: &str, got: &[f32], want: &[f32], near: &[bool]) {
    let (max_rel, rms) = errors_where(got, want, |n| !near.get(n).copied().unwrap_or(false));
    let (all_rel, _) = errors(got, want);
    let n_near = near.iter().filter(|&&b| b).count();
    println!(
        "{what}: max |diff| / max |value| {max_rel:.2e}, RMS relative {rms:.2e}; \
         with the {n_near} points within {NEAR_BOHR} bohr of a charge {all_rel:.2e}"
    );
    assert!(max_rel <= TOL, "{what}: {max_rel:.3e} > {TOL:e}");
    assert!(rms <= RMS_TOL, "{what}: RMS {rms:.3e} > {RMS_TOL:e}");
    assert!(
        all_rel <= NEAR_TOL,
        "{what}: {all_rel:.3e} > {NEAR_TOL:e} with the near points"
    );
}

fn msm(a_angstrom: f64, h_angstrom: f64) -> EspMethod {
    EspMethod::Msm(MsmParams {
        cutoff_angstrom: a_angstrom,
        spacing_angstrom: h_angstrom,
    })
}

/// One case: the wgpu map against the CPU engine's, whole and as a middle slab, the plan built
/// with its stages on the host and deferred; returns the wgpu map of the host-staged plan.
fn compare(
    gpus: &[WgpuEngine],
    what: &str,
    charges: &Arc<PointCharges>,
    method: EspMethod,
    boundary: Boundary,
    lattice: Lattice,
) -> (Vec<f32>, Vec<f32>) {
    let nz = lattice.dims[2];
    let input = field_input_with(charges.clone(), method, boundary, &lattice, StagesOn::Host).unwrap();
    assert!(matches!(input, FieldInput::Electrostatics(_)));
    let job = FieldJob {
        field: Field::Potential,
        lattice,
        input,
    };
    assert!(WgpuEngine::supports(&job));
    let want = slab(&CpuEngine, &job, 0..nz);
    let near = near_mask(&lattice, charges, boundary);
    let mut first = None;
    for (gpu, kernel) in gpus.iter().zip(["tiles", "points"]) {
        let what = format!("{what} ({kernel})");
        let got = slab(gpu, &job, 0..nz);
        check(&what, &got, &want, &near);
        let plane = lattice.dims[0] * lattice.dims[1];
        let mid = nz / 3..nz - 1;
        let part = slab(gpu, &job, mid.clone());
        check(
            &format!("{what}, slab {mid:?}"),
            &part,
            &want[mid.start * plane..mid.end * plane],
            &near[mid.start * plane..mid.end * plane],
        );
        let deferred = FieldJob {
            input: DeferredPlan::field_input(charges.clone(), method, boundary, &lattice).unwrap(),
            ..job.clone()
        };
        assert!(WgpuEngine::supports(&deferred));
        let later = slab(gpu, &deferred, 0..nz);
        check(&format!("{what}, deferred plan"), &later, &want, &near);
        first.get_or_insert(got);
    }
    (first.unwrap(), want)
}

/// The engine with each short-range kernel: `msm_tiles` (the default) and `msm_slab`.
fn both_kernels(what: &str) -> Option<Vec<WgpuEngine>> {
    let tiles = engine(what)?.with_msm_kernel(MsmKernel::Tiles);
    let points = engine(what)?.with_msm_kernel(MsmKernel::Points);
    Some(vec![tiles, points])
}

#[test]
fn cutoff_and_msm_maps_match_the_cpu_engine_open_and_periodic() {
    let Some(gpu) = both_kernels("cutoff and MSM maps") else {
        return;
    };
    let mut state = seed();
    // Open: charges in a 26 x 20 x 18 bohr box; the lattice reaches 6 bohr past it on some sides.
    let q = Arc::new(random_charges(&mut state, 700, [-3.0, 1.0, -2.0], [26.0, 20.0, 18.0]));
    let open = Lattice::axis_aligned([-7.3, -1.1, -4.2], 0.83, [29, 23, 21]);
    compare(
        &gpu,
        "cutoff, open",
        &q,
        EspMethod::Cutoff { cutoff_angstrom: 5.0 },
        Boundary::Open,
        open,
    );
    let (msm_map, msm_cpu) = compare(&gpu, "msm, open", &q, msm(5.0, 1.5), Boundary::Open, open);
    // Dropping the long-range part misses the reference by far (the comparison can fail).
    let cutoff_only = FieldJob {
        field: Field::Potential,
        lattice: open,
        input: field_input_with(
            q.clone(),
            EspMethod::Cutoff { cutoff_angstrom: 5.0 },
            Boundary::Open,
            &open,
            StagesOn::Host,
        )
        .unwrap(),
    };
    let short = slab(&CpuEngine, &cutoff_only, 0..open.dims[2]);
    let (e, _) = errors(&short, &msm_cpu);
    println!("msm without the long range: {e:.2e}");
    assert!(e > 100.0 * TOL, "{e}");
    // And so does one neighbour bin dropped from the short-range sum.
    let a_bohr = bohr_from_angstrom(5.0);
    let mut bins = AtomBins::open(&q.positions_bohr, &q.charges_e, a_bohr).unwrap();
    let all_bins = {
        let mut v = vec![0.0; open.n_points()];
        short_range_slab(&bins, &open, 0..open.dims[2], &mut v);
        v
    };
    bins.neighbours.retain(|d| *d != [1, 0, 0]);
    let mut missing = vec![0.0; open.n_points()];
    short_range_slab(&bins, &open, 0..open.dims[2], &mut missing);
    let broken: Vec<f32> = msm_cpu
        .iter()
        .zip(all_bins.iter().zip(&missing))
        .map(|(&m, (&full, &less))| (f64::from(m) - full + less) as f32)
        .collect();
    let (e, _) = errors(&broken, &msm_map);
    println!("msm with a neighbour bin dropped: {e:.2e}");
    assert!(e > 10.0 * TOL, "{e}");

    // Periodic orthorhombic: charges also outside the cell (wrapped), the lattice past its faces.
    let cell = UnitCell::orthorhombic([15.0, 13.0, 17.0]);
    let m = cell.matrix_angstrom().map(|r| r.map(bohr_from_angstrom));
    let ext = [m[0][0], m[1][1], m[2][2]];
    let q = Arc::new(random_charges(
        &mut state,
        600,
        [-2.0, -1.0, -3.0],
        [ext[0] + 3.0, ext[1] + 2.0, ext[2] + 4.0],
    ));
    let lat = Lattice::axis_aligned([-1.7, -2.3, 0.4], 1.1, [28, 25, 31]);
    let pbc = Boundary::Periodic(cell);
    compare(
        &gpu,
        "cutoff, orthorhombic",
        &q,
        EspMethod::Cutoff { cutoff_angstrom: 6.0 },
        pbc,
        lat,
    );
    compare(&gpu, "msm, orthorhombic", &q, msm(6.0, 1.6), pbc, lat);

    // Periodic triclinic on a sheared lattice.
    let cell = UnitCell::new([16.0, 14.0, 15.0], [80.0, 100.0, 70.0]);
    let q = Arc::new(random_charges(&mut state, 500, [-1.0, -1.0, -1.0], [30.0, 27.0, 28.0]));
    let lat = Lattice {
        origin_bohr: [-1.0, 0.5, -0.3],
        steps_bohr: [[1.2, 0.0, 0.0], [0.3, 1.1, 0.0], [0.1, -0.2, 1.15]],
        dims: [24, 25, 23],
    };
    let pbc = Boundary::Periodic(cell);
    compare(
        &gpu,
        "cutoff, triclinic",
        &q,
        EspMethod::Cutoff { cutoff_angstrom: 6.0 },
        pbc,
        lat,
    );
    compare(&gpu, "msm, triclinic", &q, msm(6.0, 1.6), pbc, lat);
}

#[test]
fn screened_cutoff_maps_match_the_cpu_engine() {
    let Some(gpus) = both_kernels("screened cutoff maps") else {
        return;
    };
    let mut state = seed();
    let q = Arc::new(random_charges(&mut state, 500, [0.0, 0.0, 0.0], [22.0, 18.0, 20.0]));
    let lattice = Lattice::axis_aligned([-3.1, -2.7, -2.2], 0.9, [30, 26, 28]);
    for dielectric in [
        Dielectric::DistanceDependent {
            slope_per_angstrom: 4.0,
        },
        Dielectric::debye_default(),
    ] {
        let input = field_input_screened(
            q.clone(),
            EspMethod::Cutoff { cutoff_angstrom: 6.0 },
            Boundary::Open,
            dielectric,
            &lattice,
        )
        .unwrap();
        let job = FieldJob {
            field: Field::Potential,
            lattice,
            input,
        };
        assert!(WgpuEngine::supports(&job));
        let want = slab(&CpuEngine, &job, 0..lattice.dims[2]);
        for (gpu, kernel) in gpus.iter().zip(["tiles", "points"]) {
            let got = slab(gpu, &job, 0..lattice.dims[2]);
            let near = near_mask(&lattice, &q, Boundary::Open);
            check(
                &format!("cutoff, {} ({kernel})", dielectric.label()),
                &got,
                &want,
                &near,
            );
        }
    }
}

#[test]
fn pool_runs_msm_tiles_on_wgpu() {
    let Some(gpu) = engine("pool") else { return };
    let mut state = seed();
    let q = Arc::new(random_charges(&mut state, 400, [-4.0, -2.0, -3.0], [20.0, 14.0, 12.0]));
    let lattice = Lattice::axis_aligned([-5.0, -3.5, -4.0], 0.9, [27, 20, 19]);
    let job = FieldJob {
        field: Field::Potential,
        lattice,
        input: DeferredPlan::field_input(q.clone(), msm(5.0, 1.5), Boundary::Open, &lattice).unwrap(),
    };
    let want = slab(&CpuEngine, &job, 0..lattice.dims[2]);
    let near = near_mask(&lattice, &q, Boundary::Open);
    let engines = vec![
        EngineSpec {
            engine: Arc::new(gpu),
            is_gpu: true,
        },
        EngineSpec {
            engine: Arc::new(CpuEngine),
            is_gpu: false,
        },
    ];
    let pool: Pool<u8> = Pool::with_engines(
        engines,
        PoolConfig {
            gpu_tile_points: 27 * 20 * 3,
            ..PoolConfig::default()
        },
    );
    assert!(pool.workers()[0].engine.starts_with("wgpu:"));
    let grid = pool.compute_grid(1, job).unwrap();
    check("pool, msm", &grid.values, &want, &near);
    let tiles = pool.workers()[0].tiles_done.load(std::sync::atomic::Ordering::SeqCst);
    println!("wgpu worker tiles: {tiles}");
    assert!(tiles >= 1, "the wgpu worker computed no tile");
}

/// `orbitfield grid esp MOL2 --method msm --device wgpu` (software adapters included when forced)
/// writes the map `--device cpu` writes.
#[test]
fn grid_esp_msm_command_with_device_wgpu() {
    let dir = tempfile::tempdir().unwrap();
    let mol2 = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/md/Molecule.mol2");
    let grid = |device: &str, out: &Path| {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_orbitfield"))
            .args(["grid", "esp"])
            .arg(&mol2)
            .args([
                "--method",
                "msm",
                "--cutoff",
                "6",
                "--msm-spacing",
                "1.5",
                "--spacing",
                "0.6",
                "--units",
                "hartree/e",
                "--device",
                device,
                "--verbose",
                "-o",
            ])
            .arg(out)
            .env_remove("ORBITFIELD_DEVICES")
            .output()
            .unwrap();
        (o.status.success(), String::from_utf8_lossy(&o.stderr).into_owned())
    };
    let (cpu_out, gpu_out) = (dir.path().join("cpu.cube"), dir.path().join("wgpu.cube"));
    let (ok, err) = grid("wgpu", &gpu_out);
    if !ok && !required() && (err.contains("no wgpu adapter") || err.contains("no usable GPU")) {
        eprintln!("skipping: {err}");
        return;
    }
    assert!(ok, "--device wgpu: {err}");
    println!("{err}");
    assert!(err.contains("esp on wgpu"), "placed: {err}");
    let (ok, err) = grid("cpu", &cpu_out);
    assert!(ok, "--device cpu: {err}");
    let read = |p: &Path| orbitfield::io::cube::read(p, &std::fs::read(p).unwrap()).unwrap();
    let (want, got) = (read(&cpu_out), read(&gpu_out));
    let (want, got) = (&want.grids[0], &got.grids[0]);
    assert_eq!(want.lattice, got.lattice);
    check("grid esp --method msm --device wgpu", &got.values, &want.values, &[]);
}

/// An open MSM plan prepared for a small lattice, filled on a larger one: the points whose
/// interpolation stencil leaves the plan's MSM lattice get the exact direct sum on both engines.
#[test]
fn points_outside_an_open_msm_lattice_get_the_direct_sum() {
    let Some(gpu) = engine("MSM outside its lattice") else {
        return;
    };
    let mut state = seed();
    let q = Arc::new(random_charges(&mut state, 300, [0.0, 0.0, 0.0], [14.0, 12.0, 10.0]));
    let planned = Lattice::axis_aligned([0.0, 0.0, 0.0], 1.0, [15, 13, 11]);
    let wide = Lattice::axis_aligned([-14.0, -3.0, -2.0], 1.3, [34, 14, 12]);
    let input = field_input_with(q.clone(), msm(5.0, 1.5), Boundary::Open, &planned, StagesOn::Host).unwrap();
    let job = FieldJob {
        field: Field::Potential,
        lattice: wide,
        input,
    };
    let want = slab(&CpuEngine, &job, 0..wide.dims[2]);
    let got = slab(&gpu, &job, 0..wide.dims[2]);
    check(
        "msm outside its lattice",
        &got,
        &want,
        &near_mask(&wide, &q, Boundary::Open),
    );
    // The first point lies outside: its value is the direct sum.
    let p = wide.point_bohr(0, 0, 0);
    let direct: f64 = q
        .positions_bohr
        .iter()
        .zip(&q.charges_e)
        .map(|(c, qi)| qi / ((p[0] - c[0]).powi(2) + (p[1] - c[1]).powi(2) + (p[2] - c[2]).powi(2)).sqrt())
        .sum();
    assert!(
        (f64::from(got[0]) - direct).abs() <= 1e-5 * direct.abs().max(1e-3),
        "{} vs {direct}",
        got[0]
    );
}
