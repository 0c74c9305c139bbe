//! The Poisson-Boltzmann solvers on adk (3,341 atoms, CHARMM charges from `adk.psf`, Bondi radii by
//! element, frames of `adk_dims.dcd`): the CUDA solver (`compute::cuda::pb`) on a 161^3 lattice at
//! 0.5 A, cold (first frame, buffers allocated; then the same frame again on the allocated buffers)
//! and warm-started from the previous frame's solution on the device for the next frames, with the
//! multigrid (one, two and three Gauss-Seidel sweeps each way) and the diagonal preconditioner; the CPU engine on the same first frame; and a larger
//! lattice (321^3 at 0.25 A). Reports the CPU time building the maps (`compute::cpu::pb_maps`), the
//! upload, the device solve and the download separately. Plain timings (no criterion): each solve is
//! seconds of setup for milliseconds of device time. Needs a CUDA device. Results:
//! `benches/RESULTS.md` ("Poisson-Boltzmann").

#![allow(clippy::unwrap_used, clippy::expect_used)]

use orbitfield::compute::cpu::pb_maps::coefficients;
use orbitfield::compute::cuda::pb::{CudaPbSolver, Preconditioner, Warm};
use orbitfield::compute::pb::{PbAtoms, PbLattice, PbParams};
use std::path::PathBuf;
use std::time::Instant;

fn frames(count: usize) -> Vec<PbAtoms> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/md");
    let root = std::env::var_os("ORBITFIELD_TEST_ROOT").map_or(root, |r| PathBuf::from(r).join("tests/data/md"));
    let mut system = orbitfield::io::load(&[root.join("adk.psf"), root.join("adk_dims.dcd")]).unwrap();
    let s = &system.structure;
    let charges: Vec<f64> = s.charges_e.as_ref().unwrap().iter().map(|&q| f64::from(q)).collect();
    let radii: Vec<f64> = match &s.radii_angstrom {
        Some(r) => r.iter().map(|&v| f64::from(v)).collect(),
        None => s.elements.iter().map(|e| f64::from(e.vdw_radius_angstrom())).collect(),
    };
    (0..count)
        .map(|i| {
            let f = system.trajectory.frame(i).unwrap();
            PbAtoms {
                positions_angstrom: f.positions_angstrom.iter().map(|p| p.map(f64::from)).collect(),
                charges_e: charges.clone(),
                radii_angstrom: radii.clone(),
            }
        })
        .collect()
}

fn centre(atoms: &PbAtoms) -> [f64; 3] {
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for p in &atoms.positions_angstrom {
        for k in 0..3 {
            lo[k] = lo[k].min(p[k]);
            hi[k] = hi[k].max(p[k]);
        }
    }
    std::array::from_fn(|k| 0.5 * (lo[k] + hi[k]))
}

fn ms(s: f64) -> String {
    format!("{:.2} ms", s * 1e3)
}

fn run(solver: &mut CudaPbSolver, atoms: &PbAtoms, lattice: &PbLattice, what: &str, warm: Warm<'_>) -> Vec<f64> {
    let params = PbParams::default();
    let t = Instant::now();
    let c = coefficients(atoms, lattice, &params).unwrap();
    let maps = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let sol = solver.solve(&c, lattice, &params, warm).unwrap();
    let total = t.elapsed().as_secs_f64();
    let s = solver.stats();
    println!(
        "| {what} | {:?} | {} | {} | **{}** | {} | {} | {} CG / {} corr. / {} levels | {:.1e} |",
        lattice.dims,
        ms(maps),
        ms(s.upload_s),
        ms(s.solve_s),
        ms(s.download_s),
        ms(total),
        s.iterations,
        s.corrections,
        s.levels,
        sol.relative_residual
    );
    sol.potential_kt_per_e
}

fn main() {
    let found = orbitfield::compute::cuda::discover(Some(&[0]));
    let Some(engine) = found.engines.first().cloned() else {
        println!("no CUDA device: {:?}", found.notes);
        return;
    };
    let mut solver = CudaPbSolver::new(engine).unwrap();
    println!("device: {}", solver.device_name());
    let adk = frames(6);
    println!("| run | lattice | maps (CPU) | upload | device solve | download | total solve | work | residual |");
    println!("|---|---|---|---|---|---|---|---|---|");
    let fine = PbLattice::centered(centre(&adk[0]), 0.5, [161, 161, 161]);
    run(
        &mut solver,
        &adk[0],
        &fine,
        "frame 0, cold, first solve (allocation)",
        Warm::None,
    );
    run(&mut solver, &adk[0], &fine, "frame 0, cold", Warm::None);
    for (i, a) in adk.iter().enumerate().skip(1) {
        run(
            &mut solver,
            a,
            &fine,
            &format!("frame {i}, warm from frame {}", i - 1),
            Warm::Previous,
        );
    }
    solver.set_preconditioner(Preconditioner::Jacobi);
    run(
        &mut solver,
        &adk[0],
        &fine,
        "frame 0, cold, diagonal preconditioner",
        Warm::None,
    );
    solver.set_preconditioner(Preconditioner::Multigrid);
    solver.set_sweeps(1);
    run(
        &mut solver,
        &adk[0],
        &fine,
        "frame 0, cold, one sweep each way",
        Warm::None,
    );
    run(
        &mut solver,
        &adk[1],
        &fine,
        "frame 1, warm, one sweep each way",
        Warm::Previous,
    );
    solver.set_sweeps(3);
    run(
        &mut solver,
        &adk[0],
        &fine,
        "frame 0, cold, three sweeps each way",
        Warm::None,
    );
    solver.set_sweeps(orbitfield::compute::cuda::pb::DEFAULT_SWEEPS);
    let t = Instant::now();
    let cpu = orbitfield::compute::cpu::pb::solve(&adk[0], &fine, &PbParams::default(), None).unwrap();
    println!(
        "CPU engine, frame 0, {:?}: {:.2} s with the maps, {} CG iterations ({} threads)",
        fine.dims,
        t.elapsed().as_secs_f64(),
        cpu.iterations,
        rayon::current_num_threads()
    );
    let large = PbLattice::centered(centre(&adk[0]), 0.25, [321, 321, 321]);
    run(
        &mut solver,
        &adk[0],
        &large,
        "0.25 A, frame 0, cold (allocation)",
        Warm::None,
    );
    run(&mut solver, &adk[0], &large, "0.25 A, frame 0, cold", Warm::None);
    run(
        &mut solver,
        &adk[1],
        &large,
        "0.25 A, frame 1, warm from frame 0",
        Warm::Previous,
    );
}
