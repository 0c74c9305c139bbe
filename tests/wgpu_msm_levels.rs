//! The long-range levels of multilevel summation on the wgpu engine (`compute::wgpu::msm_levels`, on
//! whatever adapter exists: Mesa lavapipe in CI, the H200's Vulkan driver on the device machine)
//! against the host's f64 cascade ([`LevelGeometry::host_levels`], the numerical reference), on
//! fresh random charges (the seed is printed; `ORBITFIELD_TEST_SEED` replays one):
//! - every level's charges and potential, open lattices (several levels; the top level alone) and
//!   periodic orthorhombic and triclinic cells, the lattice cutoff by workgroup tiles (the default)
//!   and by an invocation per point: the finest potential within [`FINEST_TOL`] of its largest
//!   |value|, every other level within [`LEVEL_TOL`] of its own;
//! - a poisoned cascade (the restriction along y skipped, or one prolongation along x) misses the
//!   reference by far more, so the comparison can fail;
//! - whole maps of plans built with `StagesOn::Engine` on the wgpu engine (levels on the device,
//!   never computed on the host; also a deferred request the wgpu engine plans) against the CPU engine's maps of host-staged plans, open and
//!   periodic, within 1e-4 of the map's largest |value| at the points farther than 0.1 bohr from
//!   every charge (within 1e-3 at every point: `tests/wgpu_msm.rs` gives the short-range pass's f32
//!   reason), and `grid esp --method msm --msm-stages device --device wgpu` against `--device cpu`
//!   through the command (its log says the levels ran on the device; with `--msm-stages host` not).
//!
//! The f32 bound: each level's sums add a few `u = 2^-24` of the sum of their terms' magnitudes
//! (module documentation of `msm_levels`), and the lattice cutoff's terms of both signs cancel to
//! a potential of about a tenth of that sum over these random charges, so a few 1e-6 of the
//! largest |value|; measured on lavapipe over repeated seeds up to 6.7e-7 (finest potential) and
//! 9.1e-7 (every other level), both cutoff kernels alike; whole maps up to 1.2e-5 away from charges
//! and 2.6e-5 everywhere (the
//! short-range pass's f32 coordinates dominate), the device's levels against the host's on the same
//! engine up to 1.4e-7. Skipping a pass misses by 0.5 to 0.8.
//!
//! Without an adapter with compute shaders the tests print why and pass, unless
//! `ORBITFIELD_REQUIRE_WGPU=1` is set.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use orbitfield::compute::cpu::CpuEngine;
use orbitfield::compute::esp::schedule::{Step, schedule};
use orbitfield::compute::esp::{
    Boundary, DeferredPlan, EspMethod, HostLevels, LevelGeometry, MsmParams, StagesOn, field_input_with,
};
use orbitfield::compute::wgpu::msm_levels::{CutoffKernel, FINEST_TOL, MsmLevelsPass};
use orbitfield::compute::{Field, FieldInput, FieldJob, PointCharges, SlabEngine};
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

/// Every level but the finest, relative to the level's largest |value|.
const LEVEL_TOL: f64 = 1e-5;
/// Whole maps: the largest difference over the largest |value| away from charges.
const MAP_TOL: f64 = 1e-4;
/// Whole maps at every point, those near charges included.
const NEAR_TOL: f64 = 1e-3;
/// Points nearer than this to a charge are where the short-range pass's f32 coordinates limit it.
const NEAR_BOHR: f64 = 0.1;

/// Largest |got - want| over the largest |want|.
fn rel(got: &[f64], want: &[f64]) -> f64 {
    assert_eq!(got.len(), want.len());
    let max = want.iter().fold(0f64, |m, v| m.max(v.abs()));
    assert!(max > 0.0, "an all-zero level tests nothing");
    assert!(got.iter().all(|v| v.is_finite()), "a level has unwritten values");
    got.iter().zip(want).map(|(a, b)| (a - b).abs()).fold(0f64, f64::max) / max
}

/// (finest potential, worst other level) relative errors.
fn level_errors(got: &HostLevels, want: &HostLevels) -> (f64, f64) {
    assert_eq!(got.charges.len(), want.charges.len());
    let finest = rel(&got.potentials[0], &want.potentials[0]);
    let mut worst = 0f64;
    for (g, w) in got.charges.iter().zip(&want.charges) {
        worst = worst.max(rel(g, w));
    }
    for (g, w) in got.potentials.iter().zip(&want.potentials).skip(1) {
        worst = worst.max(rel(g, w));
    }
    (finest, worst)
}

fn geometries(q: &PointCharges) -> Vec<(&'static str, LevelGeometry)> {
    let (a, h) = (5.0, 1.6);
    let open = LevelGeometry::open(q, &Lattice::axis_aligned([-3.0, -2.5, -1.0], 1.3, [25, 21, 28]), a, h).unwrap();
    assert!(open.layouts.len() >= 3, "{:?}", open.layouts);
    let single = LevelGeometry::open(q, &Lattice::axis_aligned([0.0; 3], 1.0, [2, 2, 2]), 9.0, 9.0).unwrap();
    assert_eq!(single.layouts.len(), 1);
    let bohr = bohr_from_angstrom(1.0);
    let mut out = vec![("open", open), ("open, top level only", single)];
    for (name, cell) in [
        ("periodic orthorhombic", UnitCell::orthorhombic([16.0, 14.0, 18.0])),
        (
            "periodic triclinic",
            UnitCell::new([17.0, 15.0, 19.0], [80.0, 100.0, 75.0]),
        ),
    ] {
        let m = cell.matrix_angstrom().map(|r| r.map(|x| x * bohr));
        let g = LevelGeometry::periodic(&m, a, 1.1).unwrap();
        assert!(g.layouts.len() >= 2, "{name}: {:?}", g.layouts);
        out.push((name, g));
    }
    out
}

/// Every level on the device against the host cascade, and a poisoned cascade missing it.
#[test]
fn device_levels_match_the_host_cascade_open_and_periodic() {
    let Some(gpu) = engine("MSM levels") else { return };
    let (device, queue) = gpu.device();
    let pass = MsmLevelsPass::new(device);
    let mut points = MsmLevelsPass::new(device);
    points.cutoff_kernel = CutoffKernel::Points;
    let mut state = seed();
    // Charges also outside the periodic cells (wrapped by the anterpolation).
    let q = random_charges(&mut state, 900, [-4.0, -3.0, -2.0], [34.0, 30.0, 36.0]);
    for (name, g) in geometries(&q) {
        let want = g.host_levels(&q);
        let steps = schedule(&g);
        let got = pass.levels(device, queue, &g, &q, &steps).unwrap();
        let (finest, worst) = level_errors(&got, &want);
        println!(
            "{name} ({} levels, finest {:?}): finest potential {finest:.2e}, other levels {worst:.2e}",
            g.layouts.len(),
            g.finest().dims
        );
        assert!(
            finest <= FINEST_TOL,
            "{name}: finest potential {finest:.3e} > {FINEST_TOL:e}"
        );
        assert!(worst <= LEVEL_TOL, "{name}: a level {worst:.3e} > {LEVEL_TOL:e}");
        // The device's finest potential is the host's `long_range` one.
        assert!(rel(&got.potentials[0], &g.long_range(&q).potential) <= FINEST_TOL);
        // The lattice cutoff by an invocation per point instead of workgroup tiles.
        let by_points = points.levels(device, queue, &g, &q, &steps).unwrap();
        let (finest, worst) = level_errors(&by_points, &want);
        println!("{name}, cutoff per point: finest potential {finest:.2e}, other levels {worst:.2e}");
        assert!(
            finest <= FINEST_TOL,
            "{name}: finest potential {finest:.3e} > {FINEST_TOL:e}"
        );
        assert!(worst <= LEVEL_TOL, "{name}: a level {worst:.3e} > {LEVEL_TOL:e}");
        if g.layouts.len() < 2 {
            continue;
        }
        // Poisoned: the restriction along y of the finest level skipped, then the last
        // prolongation along x (onto the finest potential).
        let first_y = steps
            .iter()
            .position(|s| matches!(s, Step::Axis { pass, .. } if pass.restrict && pass.axis == 1))
            .unwrap();
        let last_x = steps
            .iter()
            .rposition(|s| matches!(s, Step::Axis { pass, .. } if !pass.restrict && pass.axis == 0))
            .unwrap();
        for (what, skip) in [("restriction along y", first_y), ("prolongation along x", last_x)] {
            let poisoned: Vec<Step> = steps
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != skip)
                .map(|(_, s)| *s)
                .collect();
            let bad = pass.levels(device, queue, &g, &q, &poisoned).unwrap();
            let e = rel(&bad.potentials[0], &want.potentials[0]);
            println!("{name}, {what} skipped: finest potential {e:.2e}");
            assert!(e > 100.0 * FINEST_TOL, "{name}: {what} skipped still within {e:.2e}");
        }
    }
}

fn msm(a_angstrom: f64, h_angstrom: f64) -> EspMethod {
    EspMethod::Msm(MsmParams {
        cutoff_angstrom: a_angstrom,
        spacing_angstrom: h_angstrom,
    })
}

/// Which lattice points lie within [`NEAR_BOHR`] of a charge (of its nearest image in `cell`).
fn near_mask(lattice: &Lattice, q: &PointCharges, cell: Option<[[f64; 3]; 3]>) -> Vec<bool> {
    let inv = cell.map(|m| orbitfield::compute::esp::kernel::reciprocal(&m).unwrap());
    let [nx, ny, nz] = lattice.dims;
    let mut near = vec![false; lattice.n_points()];
    for k in 0..nz {
        for j in 0..ny {
            for i in 0..nx {
                let p = lattice.point_bohr(i, j, k);
                near[i + nx * (j + ny * k)] = q.positions_bohr.iter().any(|y| {
                    let mut d: [f64; 3] = std::array::from_fn(|a| p[a] - y[a]);
                    if let (Some(m), Some(w)) = (cell, inv) {
                        let f: [f64; 3] = std::array::from_fn(|r| (0..3).map(|a| w[r][a] * d[a]).sum::<f64>().round());
                        d = std::array::from_fn(|a| d[a] - (0..3).map(|r| f[r] * m[r][a]).sum::<f64>());
                    }
                    d.iter().map(|x| x * x).sum::<f64>() < NEAR_BOHR * NEAR_BOHR
                });
            }
        }
    }
    near
}

fn map(engine: &dyn SlabEngine, job: &FieldJob) -> Vec<f32> {
    let mut out = vec![f32::NAN; job.lattice.n_points()];
    engine.compute_slab(job, 0..job.lattice.dims[2], &mut out).unwrap();
    out
}

/// (away from charges, everywhere) largest difference over the largest |reference|.
fn map_errors(got: &[f32], want: &[f32], near: &[bool]) -> (f64, f64) {
    let part = |keep: &dyn Fn(usize) -> bool| {
        let (mut max, mut worst) = (0f64, 0f64);
        for (n, (&g, &w)) in got.iter().zip(want).enumerate() {
            if keep(n) {
                max = max.max(f64::from(w).abs());
                worst = worst.max((f64::from(g) - f64::from(w)).abs());
            }
        }
        assert!(max > 0.0);
        worst / max
    };
    (part(&|n| !near.get(n).copied().unwrap_or(false)), part(&|_| true))
}

/// Whole MSM maps with the levels on the wgpu device against the CPU engine's (host levels).
#[test]
fn engine_staged_msm_maps_match_the_cpu_engine() {
    let Some(gpu) = engine("MSM maps with device levels") else {
        return;
    };
    let mut state = seed();
    let bohr = bohr_from_angstrom(1.0);
    let cell = UnitCell::new([15.0, 13.0, 16.0], [85.0, 95.0, 80.0]);
    let m = cell.matrix_angstrom().map(|r| r.map(|x| x * bohr));
    let cases = [
        (
            "open",
            random_charges(&mut state, 600, [-3.0, 1.0, -2.0], [26.0, 20.0, 18.0]),
            Boundary::Open,
            Lattice::axis_aligned([-7.3, -1.1, -4.2], 0.83, [29, 23, 21]),
            None,
        ),
        (
            "periodic triclinic",
            random_charges(&mut state, 600, [-2.0, -2.0, -2.0], [30.0, 28.0, 32.0]),
            Boundary::Periodic(cell),
            Lattice::axis_aligned([-1.0, 0.5, -2.0], 0.97, [28, 26, 30]),
            Some(m),
        ),
    ];
    for (name, q, boundary, lattice, cell) in cases {
        let q = Arc::new(q);
        let job = |stages| FieldJob {
            field: Field::Potential,
            lattice,
            input: field_input_with(q.clone(), msm(5.0, 1.5), boundary, &lattice, stages).unwrap(),
        };
        let (host, device) = (job(StagesOn::Host), job(StagesOn::Engine));
        let want = map(&CpuEngine, &host);
        let got = map(&gpu, &device);
        let FieldInput::Electrostatics(plan) = &device.input else {
            panic!("{name}: not a plan")
        };
        assert!(
            plan.long_range_computed().is_none(),
            "{name}: the levels were computed on the host"
        );
        let near = near_mask(&lattice, &q, cell);
        let (away, all) = map_errors(&got, &want, &near);
        println!("{name}: max |diff| / max |value| {away:.2e} away from charges, {all:.2e} everywhere");
        assert!(away <= MAP_TOL, "{name}: {away:.3e} > {MAP_TOL:e}");
        assert!(all <= NEAR_TOL, "{name}: {all:.3e} > {NEAR_TOL:e}");
        // A deferred request planned by the wgpu engine leaves its levels to the device too.
        let deferred = FieldJob {
            input: DeferredPlan::field_input(q.clone(), msm(5.0, 1.5), boundary, &lattice).unwrap(),
            ..host.clone()
        };
        let later = map(&gpu, &deferred);
        let FieldInput::DeferredElectrostatics(d) = &deferred.input else {
            panic!("{name}: not deferred")
        };
        assert!(
            d.plan().unwrap().long_range_computed().is_none(),
            "{name}: deferred levels on the host"
        );
        let (away, _) = map_errors(&later, &want, &near);
        println!("{name}, deferred plan: {away:.2e} away from charges");
        assert!(away <= MAP_TOL, "{name}, deferred: {away:.3e} > {MAP_TOL:e}");
        // The same engine with the host's levels differs from the device-levels map by the
        // levels' f32 error only.
        let host_levels = map(&gpu, &host);
        let (_, d) = map_errors(&got, &host_levels, &[]);
        println!("{name}: device levels against host levels on wgpu {d:.2e}");
        assert!(d <= 10.0 * FINEST_TOL, "{name}: {d:.3e}");
    }
}

/// `orbitfield grid esp MOL2 --method msm --msm-stages device --device wgpu` computes the levels on
/// the device and writes the map `--device cpu` writes; `--msm-stages host` leaves them to the host.
#[test]
fn grid_esp_msm_command_levels_on_wgpu() {
    let dir = tempfile::tempdir().unwrap();
    let mol2 = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/md/Molecule.mol2");
    let grid = |device: &str, stages: &str, out: &Path| {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_orbitfield"))
            .args(["grid", "esp"])
            .arg(&mol2)
            .args([
                "--method",
                "msm",
                "--cutoff",
                "5",
                "--msm-spacing",
                "1.2",
                "--spacing",
                "0.5",
                "--units",
                "hartree/e",
                "--device",
                device,
                "--msm-stages",
                stages,
                "--verbose",
                "-o",
            ])
            .arg(out)
            .env_remove("ORBITFIELD_DEVICES")
            .env("ORBITFIELD_LOG", "orbitfield=debug")
            .output()
            .unwrap();
        (o.status.success(), String::from_utf8_lossy(&o.stderr).into_owned())
    };
    let (cpu_out, gpu_out) = (dir.path().join("cpu.cube"), dir.path().join("wgpu.cube"));
    let (ok, err) = grid("wgpu", "device", &gpu_out);
    if !ok && !required() && (err.contains("no wgpu adapter") || err.contains("no usable GPU")) {
        eprintln!("skipping: {err}");
        return;
    }
    assert!(ok, "--device wgpu: {err}");
    assert!(err.contains("esp on wgpu"), "placed: {err}");
    assert!(err.contains("MSM levels on the wgpu device"), "levels: {err}");
    let (ok, err) = grid("cpu", "device", &cpu_out);
    assert!(ok, "--device cpu: {err}");
    let host_out = dir.path().join("host.cube");
    let (ok, err) = grid("wgpu", "host", &host_out);
    assert!(ok, "--msm-stages host: {err}");
    assert!(!err.contains("MSM levels on the wgpu device"), "levels: {err}");
    let read = |p: &Path| orbitfield::io::cube::read(p, &std::fs::read(p).unwrap()).unwrap();
    let (want, got) = (read(&cpu_out), read(&gpu_out));
    let (want, got) = (&want.grids[0], &got.grids[0]);
    assert_eq!(want.lattice, got.lattice);
    let (e, _) = map_errors(&got.values, &want.values, &[]);
    println!("grid esp --method msm --device wgpu: max |diff| / max |value| {e:.2e}");
    assert!(e <= MAP_TOL, "{e:.3e} > {MAP_TOL:e}");
}
