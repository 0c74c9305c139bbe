//! The CUDA Poisson-Boltzmann solver (`compute::cuda::pb`) against the CPU engine's solve of the same
//! maps (`compute::cpu::pb`, float64 Jacobi-preconditioned conjugate gradients, itself held to closed
//! forms in `tests/pb_analytic.rs`): random charge sets (fresh each run, the seed printed) and adk
//! (3,341 atoms, PQR charges and radii) agree within 1e-3 kT/e at every lattice point, cold and
//! warm-started from the previous frame, with the multigrid and with the diagonal preconditioner.
//! The solver fills its device buffers with NaN when it allocates them and refuses a solution that
//! is not finite; the tests also solve a different problem first on the same buffers, so a kernel
//! that leaves a buffer unwritten shows the other problem's numbers and fails. Bad input: a solve
//! stopped by its iteration cap is an error naming the residual, the nonlinear form is refused on the
//! device, `PbEngine::Cuda` without a device is an error (never a CPU result).
//!
//! Needs a CUDA device; without one each test prints why and passes, unless
//! `ORBITFIELD_REQUIRE_CUDA=1` is set.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use orbitfield::compute::cpu::pb::solve as cpu_solve;
use orbitfield::compute::cuda::pb::Preconditioner;
use orbitfield::compute::pb::{PbAtoms, PbEngine, PbError, PbLattice, PbParams, PbSolution, PbSolver};

#[path = "common/cuda_device.rs"]
mod cuda_device;
#[path = "common/pb_inputs.rs"]
mod pb_inputs;
use pb_inputs::{adk, centre, numbers};

/// Largest allowed difference between the engines (kT/e).
const TOLERANCE_KT_PER_E: f64 = 1e-3;

fn max_difference(a: &PbSolution, b: &PbSolution) -> (f64, usize) {
    assert_eq!(a.potential_kt_per_e.len(), b.potential_kt_per_e.len());
    let mut worst = (0.0f64, 0usize);
    for (i, (x, y)) in a.potential_kt_per_e.iter().zip(&b.potential_kt_per_e).enumerate() {
        let d = (x - y).abs();
        assert!(d.is_finite(), "point {i}: {x} vs {y}");
        if d > worst.0 {
            worst = (d, i);
        }
    }
    worst
}

fn largest(a: &PbSolution) -> f64 {
    a.potential_kt_per_e.iter().fold(0.0f64, |m, v| m.max(v.abs()))
}

fn gpu_solver() -> Option<PbSolver> {
    cuda_device::device().map(|e| PbSolver::with_cuda(e).unwrap())
}

#[test]
fn random_charge_sets_match_the_cpu_engine() {
    let Some(mut gpu) = gpu_solver() else { return };
    let mut rnd = numbers();
    let params = PbParams::default();
    // A different problem first: stale buffers would show its numbers below.
    let mut previous: Option<PbSolution> = None;
    for case in 0..3 {
        let n_atoms = 10 + (rnd() * 30.0) as usize;
        let atoms = PbAtoms {
            positions_angstrom: (0..n_atoms)
                .map(|_| [rnd() * 10.0 - 5.0, rnd() * 10.0 - 5.0, rnd() * 10.0 - 5.0])
                .collect(),
            charges_e: (0..n_atoms).map(|_| rnd() * 2.0 - 1.0).collect(),
            radii_angstrom: (0..n_atoms).map(|_| 1.2 + rnd()).collect(),
        };
        let spacing = [0.5, 0.6, 0.45][case];
        let lattice = PbLattice::centered([0.3, -0.2, 0.1], spacing, [49, 57, 65]);
        let cpu = cpu_solve(&atoms, &lattice, &params, None).unwrap();
        for pre in [Preconditioner::Multigrid, Preconditioner::Jacobi] {
            gpu.cuda_mut().unwrap().set_preconditioner(pre);
            let sol = gpu.solve(&atoms, &lattice, &params, None).unwrap();
            let (d, at) = max_difference(&cpu, &sol);
            let stats = gpu.cuda_stats().unwrap();
            println!(
                "case {case}: {n_atoms} atoms, {pre:?}: max |cuda - cpu| {d:.2e} kT/e at point {at} (potential up to {:.1} \
                 kT/e), {} CG iterations ({} in float64) in {} corrections on {} levels, residual {:.1e} (cpu {} \
                 iterations)",
                largest(&cpu),
                stats.iterations,
                stats.polish_iterations,
                stats.corrections,
                stats.levels,
                sol.relative_residual,
                cpu.iterations
            );
            assert!(d <= TOLERANCE_KT_PER_E, "max difference {d} kT/e at point {at}");
            assert!(sol.relative_residual <= params.tolerance);
            if let Some(p) = &previous {
                assert!(max_difference(p, &sol).0 > 10.0 * TOLERANCE_KT_PER_E);
            }
        }
        previous = Some(cpu);
    }
}

#[test]
fn adk_matches_the_cpu_engine_cold_and_warm_started() {
    let Some(mut gpu) = gpu_solver() else { return };
    let params = PbParams::default();
    let atoms = adk();
    let lattice = PbLattice::centered(centre(&atoms), 1.0, [81, 81, 81]);
    let cpu = cpu_solve(&atoms, &lattice, &params, None).unwrap();
    let cold = gpu.solve_next(&atoms, &lattice, &params).unwrap();
    let cold_stats = gpu.cuda_stats().unwrap();
    let (d, at) = max_difference(&cpu, &cold);
    println!(
        "adk 81^3 at 1 A cold: max |cuda - cpu| {d:.2e} kT/e at {at} (potential up to {:.1} kT/e); {:?}; cpu {} iterations",
        largest(&cpu),
        cold_stats,
        cpu.iterations
    );
    assert!(d <= TOLERANCE_KT_PER_E, "cold: {d} kT/e at point {at}");
    // The next frame: every atom moved by a few tenths of an Angstrom.
    let mut rnd = numbers();
    let mut next = atoms.clone();
    for p in &mut next.positions_angstrom {
        for c in p.iter_mut() {
            *c += 0.3 * (rnd() - 0.5) + 0.1;
        }
    }
    let cpu_next = cpu_solve(&next, &lattice, &params, None).unwrap();
    let warm = gpu.solve_next(&next, &lattice, &params).unwrap();
    let warm_stats = gpu.cuda_stats().unwrap();
    let (d, at) = max_difference(&cpu_next, &warm);
    println!("adk next frame warm-started: max |cuda - cpu| {d:.2e} kT/e at {at}; {warm_stats:?}");
    assert!(d <= TOLERANCE_KT_PER_E, "warm: {d} kT/e at point {at}");
    assert!(max_difference(&cpu, &cpu_next).0 > 10.0 * TOLERANCE_KT_PER_E);
    // Host warm start (the CPU's solution of the next frame): converges at once to the same.
    let host = gpu
        .solve(&next, &lattice, &params, Some(&cpu_next.potential_kt_per_e))
        .unwrap();
    assert!(max_difference(&cpu_next, &host).0 <= TOLERANCE_KT_PER_E);
    assert!(gpu.cuda_stats().unwrap().iterations <= warm_stats.iterations);
}

#[test]
fn iteration_cap_nonlinear_form_and_missing_device_are_errors() {
    let Some(e) = cuda_device::device() else {
        // Without a device, asking for CUDA is an error, never the CPU's answer.
        let err = PbSolver::new(PbEngine::Cuda).unwrap_err();
        println!("PbEngine::Cuda without a device: {err}");
        assert!(matches!(err, PbError::Device(_)));
        return;
    };
    let mut gpu = PbSolver::with_cuda(e).unwrap();
    let atoms = PbAtoms {
        positions_angstrom: vec![[0.0, 0.0, 0.0], [4.0, 0.5, -0.5]],
        charges_e: vec![1.0, -0.5],
        radii_angstrom: vec![1.5, 2.0],
    };
    let lattice = PbLattice::centered([2.0, 0.0, 0.0], 0.5, [49, 49, 49]);
    let capped = PbParams {
        max_iterations: 2,
        ..PbParams::default()
    };
    let err = gpu.solve(&atoms, &lattice, &capped, None).unwrap_err();
    println!("{err}");
    assert!(matches!(err, PbError::NotConverged { residual, .. } if residual > capped.tolerance));
    let nonlinear = PbParams {
        nonlinear: true,
        ..PbParams::default()
    };
    assert!(matches!(
        gpu.solve(&atoms, &lattice, &nonlinear, None),
        Err(PbError::BadInput(_))
    ));
    let uncharged = PbAtoms {
        charges_e: vec![0.0, 0.0],
        ..atoms.clone()
    };
    assert!(matches!(
        gpu.solve(&uncharged, &lattice, &PbParams::default(), None),
        Err(PbError::BadInput(_))
    ));
    let huge = PbLattice::centered([0.0; 3], 0.5, [4001, 4001, 4001]);
    assert!(matches!(
        gpu.solve(&atoms, &huge, &PbParams::default(), None),
        Err(PbError::TooLarge { .. })
    ));
    // After the failures the solver still solves.
    let ok = gpu.solve(&atoms, &lattice, &PbParams::default(), None).unwrap();
    let cpu = cpu_solve(&atoms, &lattice, &PbParams::default(), None).unwrap();
    assert!(max_difference(&cpu, &ok).0 <= TOLERANCE_KT_PER_E);
}

#[test]
fn playback_worker_solves_the_newest_frame_warm_started() {
    // The CUDA device where one is usable (required under ORBITFIELD_REQUIRE_CUDA=1), else the CPU.
    let engine = if cuda_device::device().is_some() {
        PbEngine::Cuda
    } else {
        PbEngine::Cpu
    };
    let mut worker = orbitfield::jobs::pb::start::<usize>(engine).unwrap();
    let params = PbParams::default();
    let lattice = PbLattice::centered([0.0; 3], 0.5, [41, 41, 41]);
    let frame = |f: usize| PbAtoms {
        positions_angstrom: vec![[-2.0 + 0.2 * f as f64, 0.0, 0.0], [2.5, 0.3 * f as f64, -0.4]],
        charges_e: vec![1.0, -1.0],
        radii_angstrom: vec![1.8, 1.6],
    };
    for f in 0..3 {
        worker.submit(
            0,
            orbitfield::jobs::pb::PbRequest {
                key: f,
                atoms: std::sync::Arc::new(frame(f)),
                lattice,
                params,
            },
        );
    }
    let t0 = std::time::Instant::now();
    let done = loop {
        if let Some(d) = worker.try_recv().into_iter().next() {
            break d;
        }
        assert!(t0.elapsed().as_secs() < 100, "no result");
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    // Only the newest frame's result is delivered, and it is frame 2's potential.
    assert_eq!(done.output.key, 2);
    let sol = done.output.solution.unwrap();
    let cpu = cpu_solve(&frame(2), &lattice, &params, None).unwrap();
    let (d, at) = max_difference(&cpu, &sol);
    println!(
        "worker on {}: frame 2, max difference {d:.2e} kT/e at {at}",
        done.output.engine
    );
    assert!(d <= TOLERANCE_KT_PER_E);
}

/// The V-cycle's sweeps plain (omega 1), over-relaxed by the default and by more, with one, two or
/// three sweeps at the finest level: every variant is a symmetric positive preconditioner, so each
/// solve converges to the CPU engine's potential; only the iterations may differ.
#[test]
fn over_relaxed_and_plain_sweeps_reach_the_cpu_solution() {
    let Some(mut gpu) = gpu_solver() else { return };
    let params = PbParams::default();
    let atoms = adk();
    let lattice = PbLattice::centered(centre(&atoms), 1.0, [81, 81, 81]);
    let cpu = cpu_solve(&atoms, &lattice, &params, None).unwrap();
    for (omega, fine) in [(1.0, None), (1.5, None), (1.15, Some(1)), (1.15, Some(3))] {
        let cuda = gpu.cuda_mut().unwrap();
        cuda.set_over_relaxation(omega);
        cuda.set_fine_sweeps(fine);
        let sol = gpu.solve(&atoms, &lattice, &params, None).unwrap();
        let stats = gpu.cuda_stats().unwrap();
        let (d, at) = max_difference(&cpu, &sol);
        println!(
            "omega {omega}, fine sweeps {fine:?}: max |cuda - cpu| {d:.2e} kT/e at {at}; {} CG in {} corrections",
            stats.iterations, stats.corrections
        );
        assert!(
            d <= TOLERANCE_KT_PER_E,
            "omega {omega}, fine sweeps {fine:?}: {d} kT/e at point {at}"
        );
        assert!(sol.relative_residual <= params.tolerance);
    }
    let cuda = gpu.cuda_mut().unwrap();
    cuda.set_over_relaxation(orbitfield::compute::cuda::pb::DEFAULT_OMEGA);
    cuda.set_fine_sweeps(None);
}

/// The V-cycle's small levels in one launch (`pb_tail`) against the same levels launched pass by
/// pass: the same preconditioner, so the same iterations (one more or fewer, where the device's
/// compiler fuses a product differently) and the same potential, on a cube and on a lattice whose
/// axes differ (any mix-up of the axes' strides shows there). A tail that leaves its output unwritten
/// hands conjugate gradients the previous cycle's values and takes the count far off.
#[test]
fn the_one_launch_tail_is_the_level_by_level_cycle() {
    let Some(mut gpu) = gpu_solver() else { return };
    let params = PbParams::default();
    let atoms = adk();
    for dims in [[81, 81, 81], [97, 81, 65]] {
        let lattice = PbLattice::centered(centre(&atoms), 1.0, dims);
        let mut runs = Vec::new();
        for points in [0, 6 * 6 * 6, 11 * 11 * 11] {
            gpu.cuda_mut().unwrap().set_tail_points(points);
            let sol = gpu.solve(&atoms, &lattice, &params, None).unwrap();
            let stats = gpu.cuda_stats().unwrap();
            println!(
                "{dims:?}, tail from {points} points: {} CG in {} corrections, residual {:.2e}",
                stats.iterations, stats.corrections, sol.relative_residual
            );
            assert!(sol.relative_residual <= params.tolerance);
            runs.push((sol, stats.iterations));
        }
        let (reference, its) = &runs[0];
        for (sol, n) in &runs[1..] {
            let (d, at) = max_difference(reference, sol);
            assert!(
                n.abs_diff(*its) <= 1,
                "{dims:?}: {n} iterations with the tail, {its} without"
            );
            assert!(
                d <= TOLERANCE_KT_PER_E,
                "{dims:?}: {d} kT/e at point {at} of {}",
                largest(reference)
            );
        }
    }
    gpu.cuda_mut()
        .unwrap()
        .set_tail_points(orbitfield::compute::cuda::pb::DEFAULT_TAIL_POINTS);
}
