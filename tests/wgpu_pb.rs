//! The wgpu Poisson-Boltzmann solver (`compute::wgpu::pb`, on whatever adapter exists: the hardware
//! one when present, Mesa lavapipe in CI, the H200's Vulkan driver on the device machine) against the
//! CPU engine (`compute::cpu::pb`, float64, itself held to closed forms and APBS in `tests/pb_analytic.rs`
//! and `tests/pb_apbs.rs`) on the same maps, and against the Born ion's closed form:
//! - fresh random atoms (the seed is printed) with salt and without, smol and mol surfaces, spl2 and
//!   trilinear charges, on lattices of at most 33^3 points, all solved on one solver in turn (stale
//!   buffers would show the previous problem's numbers): both engines solve to a relative residual of
//!   1e-8, and the largest difference over the lattice is within [`REL_BOUND`] of the largest |u|.
//!   The bound: both iterates satisfy |f - A u| <= 1e-8 |f|, so they differ by at most
//!   2e-8 |A^-1| |f|, about 2e-8 cond(A) |u|; cond(A) of these lattices (33 points per axis, dielectric
//!   contrast 2 / 78.54) is about 4 (n / pi)^2 * 39 = 2e4, so 4e-4 |u| in the worst case, far less where
//!   the error is smooth, as it is after multigrid-preconditioned iterations: the test asks 1e-6 of
//!   max |u| (measured on lavapipe: at most 5e-10). The float32 corrections are solved on the device
//!   alone (no CPU finish) in each case.
//! - a Born ion (+1 e, radius 2 A, uniform dielectric 78.54 and eps_in 2 with 0.15 M salt) against the
//!   closed form outside the sphere: the wgpu solution's worst relative error is within 1e-3 of the
//!   CPU engine's on the same lattice (the discretisation's error, which `tests/pb_analytic.rs`
//!   bounds at h = 0.25 A), and within 2 % (uniform, from 1 A outside; measured 0.9 %) and 4 % (eps_in
//!   2, salt, from 2 A outside; measured 3.6 %, the smoothed surface's staircase at h = 0.5 A and the
//!   `sdh` sphere at the solute radius on a lattice only 16 A wide) at h = 0.5 A;
//! - a poisoned V-cycle (no smoothing sweeps) without the CPU finish does not converge: the tests can
//!   fail; the coarse levels do work: without prolongation the solve takes more iterations;
//! - warm start: solving the same frame again through `PbSolver::solve_next` needs no iteration;
//! - an iteration cap of 2 is `NotConverged` (no potential); the nonlinear form is refused; a lattice
//!   beyond the memory limit or beyond what the adapter binds is refused before anything is
//!   allocated; `PbEngine::Gpu` never takes a software adapter;
//! - focusing (a 33^3 lattice 1 A apart, then one 0.5 A apart inside it) through `PbSolver` on wgpu
//!   equals the CPU engine's within 1e-5 of the largest |u| (tolerance 1e-7 on each level);
//! - `grid pb --device wgpu` equals `grid pb --device cpu` on a four-residue PQR (tests/data/pb) within
//!   1e-5 of the map's largest |u| (the command's tolerance is 1e-7: ten times the bound above;
//!   measured on lavapipe: 6e-8).
//!
//! Without an adapter with compute shaders the tests print why and pass, unless
//! `ORBITFIELD_REQUIRE_WGPU=1` is set.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use orbitfield::compute::cpu::pb::solve_coefficients;
use orbitfield::compute::cpu::pb_maps::coefficients;
use orbitfield::compute::pb::focus::focus_levels;
use orbitfield::compute::pb::{
    ChargeAssignment, PbAtoms, PbEngine, PbError, PbLattice, PbParams, PbSolution, PbSolver, PbSurface,
};
use orbitfield::compute::wgpu::pb::{Warm, WgpuPbSolver};
use orbitfield::compute::wgpu::pb_mg::Poison;
use std::path::PathBuf;
use std::process::Command;

#[path = "common/wgpu_test_engine.rs"]
mod wgpu_test_engine;
use wgpu_test_engine::engine;

#[path = "common/pb_inputs.rs"]
mod pb_inputs;
use pb_inputs::numbers;

/// Largest difference from the CPU engine over the lattice, relative to the largest |u|, both solved
/// to a relative residual of 1e-8.
const REL_BOUND: f64 = 1e-6;

/// The solver on the test's adapter, a stalled solve finished by the CPU engine (as
/// `PbSolver` sets it up), or without a finisher.
fn solver(what: &str, finish: bool) -> Option<WgpuPbSolver> {
    engine(what).map(|e| {
        let mut s = WgpuPbSolver::new(&e);
        s.set_finisher(finish.then_some(solve_coefficients as _));
        s
    })
}

fn largest(a: &PbSolution) -> f64 {
    a.potential_kt_per_e.iter().fold(0.0f64, |m, v| m.max(v.abs()))
}

fn max_difference(a: &PbSolution, b: &PbSolution) -> f64 {
    assert_eq!(a.potential_kt_per_e.len(), b.potential_kt_per_e.len());
    a.potential_kt_per_e
        .iter()
        .zip(&b.potential_kt_per_e)
        .map(|(x, y)| {
            assert!(x.is_finite() && y.is_finite(), "{x} vs {y}");
            (x - y).abs()
        })
        .fold(0.0, f64::max)
}

fn random_atoms(rnd: &mut impl FnMut() -> f64, n: usize, centre: [f64; 3]) -> PbAtoms {
    PbAtoms {
        positions_angstrom: (0..n)
            .map(|_| std::array::from_fn(|k| centre[k] + 10.0 * (rnd() - 0.5)))
            .collect(),
        charges_e: (0..n).map(|_| 2.0 * rnd() - 1.0).collect(),
        radii_angstrom: (0..n).map(|_| 1.2 + 0.8 * rnd()).collect(),
    }
}

#[test]
fn random_atoms_match_the_cpu_engine() {
    let Some(mut gpu) = solver("wgpu Poisson-Boltzmann against the CPU engine", true) else {
        return;
    };
    let mut rnd = numbers();
    let cases = [
        (0.15, PbSurface::Smol, ChargeAssignment::Spline, [33, 33, 33]),
        (0.0, PbSurface::Mol, ChargeAssignment::Linear, [33, 29, 25]),
        (0.15, PbSurface::Mol, ChargeAssignment::Linear, [25, 33, 29]),
        (0.0, PbSurface::Smol, ChargeAssignment::Spline, [32, 30, 33]),
    ];
    for (case, (ionic, surface, charges, dims)) in cases.into_iter().enumerate() {
        let centre = [50.0 * rnd() - 25.0, 50.0 * rnd() - 25.0, 50.0 * rnd() - 25.0];
        let count = 8 + (rnd() * 20.0) as usize;
        let atoms = random_atoms(&mut rnd, count, centre);
        let params = PbParams {
            ionic_strength_molar: ionic,
            surface,
            charge_assignment: charges,
            tolerance: 1e-8,
            ..PbParams::default()
        };
        let lattice = PbLattice::centered(centre, 0.6 + 0.1 * rnd(), dims);
        let c = coefficients(&atoms, &lattice, &params).unwrap();
        let cpu = solve_coefficients(&c, &lattice, &params, None).unwrap();
        let got = gpu.solve(&c, &lattice, &params, Warm::None).unwrap();
        let stats = gpu.stats();
        let (diff, big) = (max_difference(&got, &cpu), largest(&cpu));
        println!(
            "case {case}: {} atoms, {ionic} M, {surface:?}, {charges:?}, {dims:?}: max |u| {big:.4}, max difference \
             {diff:.3e} ({:.2e} of max |u|); {} corrections, {} iterations, {} levels, residual {:.2e}",
            atoms.charges_e.len(),
            diff / big,
            stats.corrections,
            stats.iterations,
            stats.levels,
            got.relative_residual
        );
        assert!(got.relative_residual <= 1e-8);
        assert!(!stats.cpu_finish, "case {case}: the float32 corrections stalled");
        assert!(stats.corrections >= 1 && stats.iterations >= 1);
        assert!(diff <= REL_BOUND * big, "case {case}: {diff} > {REL_BOUND} x {big}");
    }
}

/// l_B = e^2 / (4 pi eps0 k T) in Angstrom (CODATA 2018).
fn bjerrum(t: f64) -> f64 {
    let e = 1.602_176_634e-19;
    let eps0 = 8.854_187_812_8e-12;
    let kb = 1.380_649e-23;
    e * e / (4.0 * std::f64::consts::PI * eps0 * kb * t) * 1e10
}

/// kappa in 1/Angstrom.
fn kappa(eps: f64, ionic: f64, t: f64) -> f64 {
    let e = 1.602_176_634e-19;
    let na = 6.022_140_76e23;
    let eps0 = 8.854_187_812_8e-12;
    let kb = 1.380_649e-23;
    (2.0 * ionic * 1000.0 * na * e * e / (eps0 * eps * kb * t)).sqrt() * 1e-10
}

/// The worst relative error of `sol` against the Born ion's closed form at least `min_gap` outside
/// the sphere (radius 2 A at `c`, ion exclusion radius 2 A).
fn born_error(sol: &PbSolution, c: [f64; 3], ionic: f64, min_gap: f64) -> (f64, usize) {
    let (radius, t) = (2.0, 298.15);
    let lb = bjerrum(t);
    let k = kappa(78.54, ionic, t);
    let a = radius + 2.0;
    let exact = |r: f64| {
        if k == 0.0 {
            lb / (78.54 * r)
        } else if r <= a {
            lb / 78.54 * (1.0 / r - k / (1.0 + k * a))
        } else {
            lb * (-k * (r - a)).exp() / (78.54 * (1.0 + k * a) * r)
        }
    };
    let l = &sol.lattice;
    let half = 0.5 * l.spacing_angstrom * (l.dims[0] - 1) as f64;
    let mut worst = 0.0f64;
    let mut count = 0;
    for (a, b) in [
        (0.0f64, 0.0f64),
        (0.7, 0.3),
        (1.3, 2.1),
        (2.2, 4.0),
        (0.4, 5.5),
        (1.57, 0.0),
    ] {
        let d = [a.sin() * b.cos(), a.sin() * b.sin(), a.cos()];
        let mut r = radius + min_gap;
        while r < half - 2.0 * l.spacing_angstrom - 0.3 {
            if let Some(v) = sol.at(std::array::from_fn(|i| c[i] + r * d[i])) {
                let e = exact(r);
                worst = worst.max((v - e).abs() / e.abs());
                count += 1;
            }
            r += 0.31;
        }
    }
    (worst, count)
}

#[test]
fn born_ion_matches_the_closed_form() {
    let Some(mut gpu) = solver("wgpu Poisson-Boltzmann Born ion", true) else {
        return;
    };
    let c = [0.13, -0.07, 0.05];
    let atoms = PbAtoms {
        positions_angstrom: vec![c],
        charges_e: vec![1.0],
        radii_angstrom: vec![2.0],
    };
    let lattice = PbLattice::centered([0.0; 3], 0.5, [33; 3]);
    // (eps_in, ionic strength, from how far outside the sphere, bound).
    for (eps_in, ionic, gap, bound) in [(78.54, 0.0, 1.0, 0.02), (2.0, 0.15, 2.0, 0.04)] {
        let params = PbParams {
            eps_in,
            ionic_strength_molar: ionic,
            tolerance: 1e-8,
            ..PbParams::default()
        };
        let maps = coefficients(&atoms, &lattice, &params).unwrap();
        let got = gpu.solve(&maps, &lattice, &params, Warm::None).unwrap();
        let cpu = solve_coefficients(&maps, &lattice, &params, None).unwrap();
        let (worst, count) = born_error(&got, c, ionic, gap);
        let (cpu_worst, _) = born_error(&cpu, c, ionic, gap);
        println!(
            "Born ion eps_in {eps_in}, {ionic} M, from {gap} A outside: {count} points, worst relative error \
             wgpu {worst:.4}, CPU engine {cpu_worst:.4}"
        );
        assert!(count > 40);
        assert!((worst - cpu_worst).abs() < 1e-3, "{worst} vs {cpu_worst}");
        assert!(worst < bound, "{worst} >= {bound}");
    }
}

#[test]
fn poisoned_multigrid_fails_and_the_coarse_levels_count() {
    let Some(mut gpu) = solver("wgpu Poisson-Boltzmann poisoned V-cycle", false) else {
        return;
    };
    let mut rnd = numbers();
    let atoms = random_atoms(&mut rnd, 12, [0.0; 3]);
    let lattice = PbLattice::centered([0.0; 3], 0.6, [33; 3]);
    let params = PbParams {
        tolerance: 1e-8,
        ..PbParams::default()
    };
    let c = coefficients(&atoms, &lattice, &params).unwrap();
    let good = gpu.solve(&c, &lattice, &params, Warm::None).unwrap();
    let good_iterations = gpu.stats().iterations;
    gpu.set_poison(Poison::ZeroProlongation);
    let smoother_only = gpu.solve(&c, &lattice, &params, Warm::None);
    let smoother_iterations = gpu.stats().iterations;
    gpu.set_poison(Poison::SkipSmoother);
    let broken = gpu.solve(&c, &lattice, &params, Warm::None);
    println!(
        "V-cycle: {good_iterations} iterations; without prolongation: {smoother_iterations} ({}); without \
         smoothing: {}",
        smoother_only
            .as_ref()
            .map_or_else(|e| e.to_string(), |_| "converged".into()),
        broken.as_ref().map_or_else(|e| e.to_string(), |_| "converged".into())
    );
    assert!(smoother_iterations > good_iterations);
    match broken {
        Err(PbError::NotConverged { residual, .. }) => assert!(residual > params.tolerance),
        Err(other) => println!("the poisoned solve failed otherwise: {other}"),
        Ok(sol) => {
            let diff = max_difference(&sol, &good);
            assert!(diff > REL_BOUND * largest(&good), "a poisoned V-cycle passed: {diff}");
        }
    }
}

#[test]
fn warm_start_cap_and_nonlinear_form() {
    let Some(gpu) = solver("wgpu Poisson-Boltzmann warm start and errors", false) else {
        return;
    };
    let mut solver = PbSolver::with_wgpu(gpu);
    assert!(solver.engine_name().starts_with("wgpu:"), "{}", solver.engine_name());
    let mut rnd = numbers();
    let atoms = random_atoms(&mut rnd, 10, [3.0, -2.0, 1.0]);
    let lattice = PbLattice::centered([3.0, -2.0, 1.0], 0.6, [33; 3]);
    let params = PbParams {
        tolerance: 1e-8,
        ..PbParams::default()
    };
    let cold = solver.solve_next(&atoms, &lattice, &params).unwrap();
    let again = solver.solve_next(&atoms, &lattice, &params).unwrap();
    println!("cold {} iterations, warm {}", cold.iterations, again.iterations);
    assert!(cold.iterations > 0);
    assert_eq!(again.iterations, 0);
    assert_eq!(again.potential_kt_per_e, cold.potential_kt_per_e);
    // The iteration cap: an error, no potential.
    let capped = PbParams {
        max_iterations: 2,
        ..params
    };
    let err = solver.solve(&atoms, &lattice, &capped, None).unwrap_err();
    println!("capped: {err}");
    assert!(matches!(err, PbError::NotConverged { .. }), "{err}");
    assert!(err.to_string().contains("no potential is returned"));
    let nonlinear = PbParams {
        nonlinear: true,
        ..params
    };
    let err = solver.solve(&atoms, &lattice, &nonlinear, None).unwrap_err();
    assert!(err.to_string().contains("wgpu"), "{err}");
    // `PbEngine::Wgpu` opens an adapter (software ones too) or fails naming why; never the CPU.
    match PbSolver::new(PbEngine::Wgpu) {
        Ok(s) => assert!(s.engine_name().starts_with("wgpu:"), "{}", s.engine_name()),
        Err(e) => panic!("an adapter runs these tests, yet PbEngine::Wgpu failed: {e}"),
    }
}

#[test]
fn lattices_beyond_the_adapter_and_gpu_without_hardware_are_errors() {
    let Some(gpu) = solver("wgpu Poisson-Boltzmann limits", false) else {
        return;
    };
    let mut solver = PbSolver::with_wgpu(gpu);
    let atoms = PbAtoms {
        positions_angstrom: vec![[0.0; 3]],
        charges_e: vec![1.0],
        radii_angstrom: vec![2.0],
    };
    // Beyond the memory limit: refused before the maps are built.
    let huge = PbLattice::centered([0.0; 3], 0.05, [1101; 3]);
    let err = solver.solve(&atoms, &huge, &PbParams::default(), None).unwrap_err();
    println!("{err}");
    assert!(matches!(err, PbError::TooLarge { .. }), "{err}");
    // Within an unlimited memory budget but beyond what the adapter binds: the same, naming it.
    let unlimited = PbParams {
        max_bytes: u64::MAX,
        ..PbParams::default()
    };
    let err = solver.solve(&atoms, &huge, &unlimited, None).unwrap_err();
    println!("{err}");
    assert!(matches!(err, PbError::Device(_)), "{err}");
    assert!(err.to_string().contains("wgpu adapter"), "{err}");
    // `gpu` never takes a software adapter: with no CUDA device and no hardware adapter it fails.
    let adapters = orbitfield::compute::wgpu::adapters::adapters();
    let no_cuda = orbitfield::compute::cuda::discover(None).engines.is_empty();
    if no_cuda && adapters.iter().all(|a| a.is_software()) {
        let err = PbSolver::new(PbEngine::Gpu).unwrap_err();
        println!("PbEngine::Gpu with only software adapters: {err}");
        assert!(err.to_string().contains("software rasteriser"), "{err}");
        let auto = PbSolver::new(PbEngine::Auto).unwrap();
        assert_eq!(auto.engine_name(), "cpu");
    }
}

#[test]
fn focusing_matches_the_cpu_engine() {
    let Some(gpu) = solver("wgpu Poisson-Boltzmann focusing", false) else {
        return;
    };
    let mut on_gpu = PbSolver::with_wgpu(gpu);
    let mut on_cpu = PbSolver::new(PbEngine::Cpu).unwrap();
    let mut rnd = numbers();
    let centre = [12.0, -7.0, 3.0];
    let atoms = random_atoms(&mut rnd, 15, centre);
    let coarse = PbLattice::centered(centre, 1.0, [33; 3]);
    let fine = PbLattice::centered([centre[0] + 1.0, centre[1], centre[2] - 0.5], 0.5, [33; 3]);
    let levels = focus_levels(&coarse, &fine).unwrap();
    let params = PbParams::default();
    let got = on_gpu.solve_focused(&atoms, &levels, &params, &mut |_| {}).unwrap();
    let want = on_cpu.solve_focused(&atoms, &levels, &params, &mut |_| {}).unwrap();
    let (diff, big) = (max_difference(&got, &want), largest(&want));
    println!(
        "focusing over {} levels: max |u| {big:.3}, max difference {diff:.3e} ({:.1e} of max |u|)",
        levels.len(),
        diff / big
    );
    assert!(levels.len() >= 2);
    assert!(diff <= 1e-5 * big, "{diff} > 1e-5 x {big}");
}

fn data(path: &str) -> PathBuf {
    pb_inputs::data(path)
}

/// Reads a DX file's values.
fn dx_values(path: &std::path::Path) -> Vec<f64> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut values = Vec::new();
    let mut body = false;
    for line in text.lines() {
        if line.starts_with("object 3") {
            body = true;
            continue;
        }
        if !body || line.starts_with("attribute") || line.starts_with("object") {
            if body && line.starts_with("object") {
                break;
            }
            continue;
        }
        values.extend(line.split_whitespace().map(|v| v.parse::<f64>().unwrap()));
    }
    values
}

#[test]
fn grid_pb_on_wgpu_equals_the_cpu_engine() {
    if engine("grid pb --device wgpu").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let pqr = data("pb/adk_res1-4.pqr");
    let run = |device: &str| {
        let out = dir.path().join(format!("{device}.dx"));
        let o = Command::new(env!("CARGO_BIN_EXE_orbitfield"))
            .args(["grid", "pb"])
            .arg(&pqr)
            .args(["--spacing", "1.0", "--device", device, "-o"])
            .arg(&out)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr).to_string();
        assert!(o.status.success(), "--device {device}: {stderr}");
        (dx_values(&out), stderr)
    };
    let (cpu, _) = run("cpu");
    let (gpu, stderr) = run("wgpu");
    println!("{stderr}");
    assert_eq!(cpu.len(), gpu.len());
    assert!(cpu.len() > 30_000);
    let big = cpu.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let diff = cpu.iter().zip(&gpu).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
    println!(
        "grid pb: {} points, max |u| {big:.3}, max difference {diff:.3e}",
        cpu.len()
    );
    assert!(big > 1.0);
    assert!(diff <= 1e-5 * big, "{diff} > 1e-5 x {big}");
}
