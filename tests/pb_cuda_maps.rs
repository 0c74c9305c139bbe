//! The Poisson-Boltzmann maps built on a CUDA device (`compute::cuda::pb`, `kernels/pb_maps.cu`)
//! against the CPU engine's (`compute::cpu::pb_maps::coefficients`, the APBS construction held to
//! APBS in `tests/pb_apbs.rs`): the staggered dielectric maps and the ion accessibility equal point
//! for point (the molecular surface decides each point exactly as the host does), the source within
//! 1e-12 of its largest value (the sums over charges run in another order) and the boundary values
//! within 1e-10 relative (the device's `exp` and `sqrt`). Inputs: adk (PQR charges and radii) at two
//! spacings, and random atom sets (fresh each run, the seed printed) under every model choice the
//! device builds: smoothed and sharp surface, B-spline and trilinear charges, `sdh` and `mdh`
//! boundaries, with and without salt, with and without a probe. The cases run one after another on
//! the same device buffers, so a map left unwritten shows the previous case's numbers and fails. The
//! edge-fraction surface is left to the host (no device maps), and the solve still equals the CPU's.
//! A focused lattice (faces given, charges outside dropped, those at its faces keeping their interior
//! weights) gets the host's maps too, and the focused chain on the device equals the CPU engine's.
//!
//! Needs a CUDA device; without one each test prints why and passes, unless
//! `ORBITFIELD_REQUIRE_CUDA=1` is set.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use orbitfield::compute::cpu::pb::solve as cpu_solve;
use orbitfield::compute::cpu::pb_maps::{coefficients, coefficients_with_boundary};
use orbitfield::compute::cuda::pb::CudaPbSolver;
use orbitfield::compute::pb::{
    ChargeAssignment, Coefficients, PbAtoms, PbBoundary, PbLattice, PbParams, PbSolver, PbSurface,
};

#[path = "common/cuda_device.rs"]
mod cuda_device;
#[path = "common/pb_inputs.rs"]
mod pb_inputs;
use pb_inputs::{adk, centre, numbers};

/// Points where two maps differ, and the largest difference relative to the host map's largest value.
fn compare(name: &str, host: &[f64], device: &[f64]) -> (usize, f64) {
    assert_eq!(host.len(), device.len(), "{name}: lengths");
    let scale = host.iter().fold(0.0f64, |m, v| m.max(v.abs())).max(1e-300);
    let mut differ = 0;
    let mut worst = 0.0f64;
    for (i, (a, b)) in host.iter().zip(device).enumerate() {
        assert!(b.is_finite(), "{name}: point {i} is {b} on the device");
        if a != b {
            differ += 1;
            worst = worst.max((a - b).abs() / scale);
        }
    }
    (differ, worst)
}

fn check_case(gpu: &mut CudaPbSolver, label: &str, atoms: &PbAtoms, lattice: &PbLattice, p: &PbParams) {
    check_maps(gpu, label, atoms, lattice, p, None);
}

/// As `check_case`, with the faces given (a focused lattice) when `faces` is some.
fn check_maps(
    gpu: &mut CudaPbSolver,
    label: &str,
    atoms: &PbAtoms,
    lattice: &PbLattice,
    p: &PbParams,
    faces: Option<&[f64]>,
) {
    let host: Coefficients = match faces {
        Some(f) => coefficients_with_boundary(atoms, lattice, p, f.to_vec()).unwrap(),
        None => coefficients(atoms, lattice, p).unwrap(),
    };
    let device = gpu
        .device_maps(atoms, lattice, p, faces)
        .unwrap()
        .unwrap_or_else(|| panic!("{label}: the device did not build the maps"));
    let mut line = format!("{label}: {:?} points;", lattice.dims);
    for axis in 0..3 {
        let (differ, worst) = compare("eps", &host.eps[axis], &device.eps[axis]);
        line += &format!(" eps[{axis}] {differ} differ;");
        assert_eq!(
            differ, 0,
            "{label}: eps[{axis}] differs at {differ} points (largest {worst:.2e} relative)"
        );
    }
    let (differ, worst) = compare("kbar2", &host.kbar2, &device.kbar2);
    assert_eq!(differ, 0, "{label}: kbar2 differs at {differ} points ({worst:.2e})");
    let (_, source) = compare("source", &host.source, &device.source);
    let (_, boundary) = compare("boundary", &host.boundary, &device.boundary);
    println!("{line} kbar2 equal; source {source:.1e}, boundary {boundary:.1e} relative");
    assert!(
        source <= 1e-12,
        "{label}: source differs by {source:e} of its largest value"
    );
    assert!(
        boundary <= 1e-10,
        "{label}: boundary differs by {boundary:e} of its largest value"
    );
    // The model's maps are not trivial: both dielectrics, both ion states.
    assert!(host.eps[0].contains(&p.eps_in) || p.surface == PbSurface::Smol);
    assert!(host.source.iter().any(|&v| v != 0.0));
}

#[test]
fn device_maps_equal_the_host_maps() {
    let Some(engine) = cuda_device::device() else { return };
    let mut gpu = CudaPbSolver::new(engine).unwrap();
    let adk = adk();
    let c = centre(&adk);
    let default = PbParams::default();
    check_case(
        &mut gpu,
        "adk 1 A",
        &adk,
        &PbLattice::centered(c, 1.0, [81, 81, 81]),
        &default,
    );
    check_case(
        &mut gpu,
        "adk 0.7 A",
        &adk,
        &PbLattice::centered(c, 0.7, [113, 113, 113]),
        &default,
    );
    let mut rnd = numbers();
    let models = [
        ("smol, spl2, sdh, 0.15 M", PbParams::default()),
        (
            "mol, trilinear, mdh, no salt",
            PbParams {
                surface: PbSurface::Mol,
                charge_assignment: ChargeAssignment::Linear,
                boundary: PbBoundary::Mdh,
                ionic_strength_molar: 0.0,
                ..PbParams::default()
            },
        ),
        (
            "smol, no probe, 1 M, eps 4/80, ion radius 1.5",
            PbParams {
                probe_angstrom: 0.0,
                ionic_strength_molar: 1.0,
                eps_in: 4.0,
                eps_out: 80.0,
                ion_radius_angstrom: 1.5,
                ..PbParams::default()
            },
        ),
        (
            "mol, probe 2.2, mdh",
            PbParams {
                surface: PbSurface::Mol,
                probe_angstrom: 2.2,
                boundary: PbBoundary::Mdh,
                ..PbParams::default()
            },
        ),
    ];
    for (label, p) in models {
        let n_atoms = 20 + (rnd() * 200.0) as usize;
        let atoms = PbAtoms {
            positions_angstrom: (0..n_atoms)
                .map(|_| [rnd() * 16.0 - 8.0, rnd() * 16.0 - 8.0, rnd() * 16.0 - 8.0])
                .collect(),
            charges_e: (0..n_atoms).map(|_| rnd() * 2.0 - 1.0).collect(),
            // Some atoms of zero radius (hydrogens of some force fields): they bury, but mark nothing.
            radii_angstrom: (0..n_atoms)
                .map(|_| if rnd() < 0.1 { 0.0 } else { 1.0 + 1.2 * rnd() })
                .collect(),
        };
        let spacing = 0.35 + 0.4 * rnd();
        let dims = [45 + (rnd() * 20.0) as usize, 51, 47 + (rnd() * 10.0) as usize];
        let dims = dims.map(|d| d.max((36.0 / spacing) as usize));
        let lattice = PbLattice::centered([rnd() - 0.5, rnd() - 0.5, rnd() - 0.5], spacing, dims);
        check_case(
            &mut gpu,
            &format!("{label}, {n_atoms} atoms, {spacing:.3} A"),
            &atoms,
            &lattice,
            &p,
        );
    }
}

/// A focused lattice cutting through adk: the faces given (random values, so a boundary computed
/// from the atoms instead cannot pass), the charges outside it dropped, those near its faces keeping
/// their interior weights only; then the focused chain on the device against the CPU engine's.
#[test]
fn focused_lattice_maps_equal_the_host_maps_and_the_chain_solves_alike() {
    let Some(engine) = cuda_device::device() else { return };
    let mut gpu = CudaPbSolver::new(engine.clone()).unwrap();
    let adk = adk();
    let c = centre(&adk);
    let p = PbParams::default();
    let fine = PbLattice::centered([c[0] + 6.0, c[1] - 3.0, c[2]], 0.5, [65, 65, 65]);
    let mut rnd = numbers();
    let faces: Vec<f64> = (0..fine.n_points()).map(|_| rnd() * 4.0 - 2.0).collect();
    let inside = adk
        .positions_angstrom
        .iter()
        .filter(|x| (0..3).all(|k| x[k] > fine.origin_angstrom[k] && x[k] < fine.point(64, 64, 64)[k]))
        .count();
    println!(
        "focused lattice holds {inside} of {} atoms",
        adk.positions_angstrom.len()
    );
    assert!(inside > 100 && inside < adk.positions_angstrom.len());
    check_maps(&mut gpu, "adk, focused 0.5 A lattice", &adk, &fine, &p, Some(&faces));
    // The whole chain (1 A around everything, then the 0.5 A lattice) on both engines.
    let coarse = PbLattice::centered(c, 1.0, [97, 97, 97]);
    let levels = [coarse, fine];
    let mut on_gpu = PbSolver::with_cuda(engine).unwrap();
    let gpu_sol = on_gpu.solve_focused(&adk, &levels, &p, &mut |_| {}).unwrap();
    let mut on_cpu = PbSolver::new(orbitfield::compute::pb::PbEngine::Cpu).unwrap();
    let cpu_sol = on_cpu.solve_focused(&adk, &levels, &p, &mut |_| {}).unwrap();
    let worst = gpu_sol
        .potential_kt_per_e
        .iter()
        .zip(&cpu_sol.potential_kt_per_e)
        .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    println!("focused chain: max |cuda - cpu| {worst:.2e} kT/e");
    assert!(worst <= 1e-3);
}

#[test]
fn edge_fraction_surface_takes_the_host_maps_and_still_solves() {
    let Some(engine) = cuda_device::device() else { return };
    let p = PbParams {
        surface: PbSurface::Fraction,
        ..PbParams::default()
    };
    let mut raw = CudaPbSolver::new(engine.clone()).unwrap();
    let atoms = PbAtoms {
        positions_angstrom: vec![[0.0, 0.0, 0.0], [3.5, 0.5, -0.5]],
        charges_e: vec![1.0, -0.5],
        radii_angstrom: vec![1.8, 1.5],
    };
    let lattice = PbLattice::centered([0.5, 0.0, 0.0], 0.5, [49, 49, 49]);
    assert!(raw.device_maps(&atoms, &lattice, &p, None).unwrap().is_none());
    let mut gpu = PbSolver::with_cuda(engine).unwrap();
    let sol = gpu.solve(&atoms, &lattice, &p, None).unwrap();
    let cpu = cpu_solve(&atoms, &lattice, &p, None).unwrap();
    let worst = sol
        .potential_kt_per_e
        .iter()
        .zip(&cpu.potential_kt_per_e)
        .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    println!("edge fraction: max |cuda - cpu| {worst:.2e} kT/e");
    assert!(worst <= 1e-3);
}
