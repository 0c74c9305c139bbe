//! The CUDA Poisson-Boltzmann solver (`compute::cuda::pb`) on adk (3,341 atoms, CHARMM charges from
//! `adk.psf`, Bondi radii by element, frames of `adk_dims.dcd`) on a 161^3 lattice at 0.5 A: with the
//! maps built on the device (`solve_atoms`, what the CLI and the viewer use), cold and then each next
//! frame warm-started from the previous frame's solution on the device; the same with the maps built
//! by the CPU engine and uploaded (`compute::cpu::pb_maps`); the CPU engine's whole solve of the first
//! frame; the V-cycle launched kernel by kernel instead of replayed from its captured graph; a
//! 321^3 lattice at 0.25 A; and 100,230 atoms (30 copies of adk on a 3 x 2 x 5 grid, 55 A
//! apart) at 1 A. Reports maps (device or CPU), upload, device solve and download separately. Plain
//! timings (no criterion): each row is one solve. Needs a CUDA device. Results: `benches/RESULTS.md`
//! ("Poisson-Boltzmann").

#![allow(clippy::unwrap_used, clippy::expect_used)]

use orbitfield::compute::cpu::pb_maps::coefficients;
use orbitfield::compute::cuda::pb::{AtomsSolve, CudaPbSolver, MAP_STAGES, ResidualStep, Warm};
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

/// One solve with the maps built on the device.
fn run_device(solver: &mut CudaPbSolver, atoms: &PbAtoms, lattice: &PbLattice, what: &str, warm: Warm<'_>) {
    run_device_with(solver, atoms, lattice, what, warm, &PbParams::default());
}

/// As `run_device` with these parameters; prints the maps' stages when they were timed.
fn run_device_with(
    solver: &mut CudaPbSolver,
    atoms: &PbAtoms,
    lattice: &PbLattice,
    what: &str,
    warm: Warm<'_>,
    params: &PbParams,
) {
    let t = Instant::now();
    let sol = match solver.solve_atoms(atoms, lattice, params, warm).unwrap() {
        AtomsSolve::Solved(s) => s,
        AtomsSolve::HostMaps(why) => panic!("{what}: maps left to the host: {why}"),
    };
    let total = t.elapsed().as_secs_f64();
    let s = solver.stats();
    println!(
        "| {what} | {:?} | device: {} | - | **{}** | {} | **{}** | {} CG / {} corr. / {} levels | {:.1e} |",
        lattice.dims,
        ms(s.upload_s),
        ms(s.solve_s),
        ms(s.download_s),
        ms(total),
        s.iterations,
        s.corrections,
        s.levels,
        sol.relative_residual
    );
    if s.map_stages_s.iter().any(|&v| v > 0.0) {
        let parts: Vec<String> = MAP_STAGES
            .iter()
            .zip(s.map_stages_s)
            .map(|(n, v)| format!("{n} {}", ms(v)))
            .collect();
        println!("  maps by stage: {}", parts.join(", "));
    }
    if std::env::var_os("PB_BENCH_TRACE").is_some() {
        let mut f_norm = 1.0;
        let steps: Vec<String> = solver
            .residual_trace()
            .iter()
            .map(|s| match *s {
                ResidualStep::Outer { residual, source } => {
                    f_norm = source.max(1e-300);
                    format!("[{:.1e}]", residual / f_norm)
                }
                ResidualStep::Inner(r) => format!("{:.1e}", r / f_norm),
            })
            .collect();
        println!("  residuals / |f|: {}", steps.join(" "));
    }
}

/// 30 copies of the frame on a 3 x 2 x 5 grid, `gap` Angstrom apart.
fn tiled(atoms: &PbAtoms, gap: f64) -> PbAtoms {
    let mut out = PbAtoms::default();
    for ix in 0..3 {
        for iy in 0..2 {
            for iz in 0..5 {
                let shift = [gap * f64::from(ix), gap * f64::from(iy), gap * f64::from(iz)];
                out.positions_angstrom.extend(
                    atoms
                        .positions_angstrom
                        .iter()
                        .map(|p| [p[0] + shift[0], p[1] + shift[1], p[2] + shift[2]]),
                );
                out.charges_e.extend_from_slice(&atoms.charges_e);
                out.radii_angstrom.extend_from_slice(&atoms.radii_angstrom);
            }
        }
    }
    out
}

/// adk's 161^3 lattice at 0.5 A around frame 0.
fn fine_lattice(first: &PbAtoms) -> PbLattice {
    PbLattice::centered(centre(first), 0.5, [161, 161, 161])
}

/// A variant's rows: frame 0 cold (its graph captured), then frames 1-4 each warm-started.
fn variant_rows(solver: &mut CudaPbSolver, adk: &[PbAtoms], fine: &PbLattice, tag: &str) {
    let Some(first) = adk.first() else { return };
    run_device(solver, first, fine, &format!("frame 0, cold, {tag}"), Warm::None);
    for (i, a) in adk.iter().enumerate().skip(1).take(4) {
        run_device(solver, a, fine, &format!("frame {i}, warm, {tag}"), Warm::Previous);
    }
}

fn main() {
    let found = orbitfield::compute::cuda::discover(Some(&[0]));
    let Some(engine) = found.engines.first().cloned() else {
        println!("no CUDA device: {:?}", found.notes);
        return;
    };
    let mut solver = CudaPbSolver::new(engine).unwrap();
    println!("device: {}", solver.device_name());
    let adk = frames(11);
    println!("| run | lattice | maps | upload | device solve | download | total | work | residual |");
    println!("|---|---|---|---|---|---|---|---|---|");
    let fine = fine_lattice(&adk[0]);
    if std::env::var("PB_BENCH_ONLY").is_ok_and(|v| v == "adk") {
        // The adk rows alone (for a profiler): cold twice, warm frames, stages timed.
        run_device(&mut solver, &adk[0], &fine, "frame 0, cold, first solve", Warm::None);
        run_device(&mut solver, &adk[0], &fine, "frame 0, cold", Warm::None);
        for (i, a) in adk.iter().enumerate().skip(1).take(4) {
            run_device(&mut solver, a, &fine, &format!("frame {i}, warm"), Warm::Previous);
        }
        // The V-cycle's small levels launched pass by pass, or in one launch from 6^3 or 11^3.
        for points in [0, 6 * 6 * 6, 11 * 11 * 11] {
            solver.set_tail_points(points);
            variant_rows(&mut solver, &adk, &fine, &format!("tail from {points} points"));
        }
        solver.set_tail_points(orbitfield::compute::cuda::pb::DEFAULT_TAIL_POINTS);
        // Sweeps each way below the finest level and at the finest.
        for (coarse, finest) in [(1, 2), (3, 2), (3, 1)] {
            solver.set_sweeps(coarse);
            solver.set_fine_sweeps(Some(finest));
            let tag = format!("{coarse} coarse sweeps, {finest} at the finest");
            variant_rows(&mut solver, &adk, &fine, &tag);
        }
        solver.set_sweeps(orbitfield::compute::cuda::pb::DEFAULT_SWEEPS);
        solver.set_fine_sweeps(None);
        solver.set_stage_timing(true);
        run_device(&mut solver, &adk[0], &fine, "frame 0, cold, stages timed", Warm::None);
        run_device(
            &mut solver,
            &adk[1],
            &fine,
            "frame 1, warm, stages timed",
            Warm::Previous,
        );
        return;
    }
    run_device(
        &mut solver,
        &adk[0],
        &fine,
        "frame 0, cold, first solve (allocation, compilation)",
        Warm::None,
    );
    run_device(&mut solver, &adk[0], &fine, "frame 0, cold", Warm::None);
    for (i, a) in adk.iter().enumerate().skip(1) {
        run_device(
            &mut solver,
            a,
            &fine,
            &format!("frame {i}, warm from frame {}", i - 1),
            Warm::Previous,
        );
    }
    solver.set_graphs(false);
    run_device(
        &mut solver,
        &adk[0],
        &fine,
        "frame 0, cold, V-cycle launched kernel by kernel",
        Warm::None,
    );
    run_device(
        &mut solver,
        &adk[1],
        &fine,
        "frame 1, warm, V-cycle launched kernel by kernel",
        Warm::Previous,
    );
    solver.set_graphs(true);
    run(&mut solver, &adk[0], &fine, "frame 0, cold, CPU maps", Warm::None);
    run(&mut solver, &adk[1], &fine, "frame 1, warm, CPU maps", Warm::Previous);
    let large = PbLattice::centered(centre(&adk[0]), 0.25, [321, 321, 321]);
    run_device(
        &mut solver,
        &adk[0],
        &large,
        "0.25 A, frame 0, cold (allocation)",
        Warm::None,
    );
    run_device(
        &mut solver,
        &adk[1],
        &large,
        "0.25 A, frame 1, warm from frame 0",
        Warm::Previous,
    );
    let big: Vec<PbAtoms> = adk.iter().take(3).map(|a| tiled(a, 55.0)).collect();
    let big_lattice = PbLattice::centered(centre(&big[0]), 1.0, [193, 161, 321]);
    println!("100k case: {} atoms", big[0].positions_angstrom.len());
    run_device(
        &mut solver,
        &big[0],
        &big_lattice,
        "100,230 atoms at 1 A, frame 0, cold (allocation)",
        Warm::None,
    );
    run_device(
        &mut solver,
        &big[0],
        &big_lattice,
        "100,230 atoms at 1 A, frame 0, cold",
        Warm::None,
    );
    run_device(
        &mut solver,
        &big[1],
        &big_lattice,
        "100,230 atoms at 1 A, frame 1, warm",
        Warm::Previous,
    );
    run_device(
        &mut solver,
        &big[2],
        &big_lattice,
        "100,230 atoms at 1 A, frame 2, warm",
        Warm::Previous,
    );
    // Variants: the maps' stages timed; the smoothing sweeps per V-cycle; APBS's default tolerance.
    solver.set_stage_timing(true);
    run_device(
        &mut solver,
        &big[0],
        &big_lattice,
        "100k, frame 0, stages timed",
        Warm::None,
    );
    run_device(
        &mut solver,
        &big[1],
        &big_lattice,
        "100k, frame 1, stages timed",
        Warm::Previous,
    );
    run_device(&mut solver, &adk[0], &fine, "frame 0, cold, stages timed", Warm::None);
    solver.set_stage_timing(false);
    // The V-cycle's coefficients in float32 or packed in one byte each; each correction's aim.
    for packed in [false, true] {
        solver.set_packed_coefficients(packed);
        for margin in [0.03, 0.1, 0.3] {
            solver.set_correction_margin(margin);
            let tag = format!(
                "{} coefficients, margin {margin}",
                if packed { "one-byte" } else { "f32" }
            );
            run_device(
                &mut solver,
                &adk[0],
                &fine,
                &format!("frame 0, cold, {tag}"),
                Warm::None,
            );
            run_device(
                &mut solver,
                &adk[1],
                &fine,
                &format!("frame 1, warm, {tag}"),
                Warm::Previous,
            );
            run_device(
                &mut solver,
                &adk[2],
                &fine,
                &format!("frame 2, warm, {tag}"),
                Warm::Previous,
            );
        }
    }
    solver.set_correction_margin(0.3);
    for sweeps in [1, 3, 2] {
        solver.set_sweeps(sweeps);
        run_device(
            &mut solver,
            &adk[0],
            &fine,
            &format!("frame 0, cold, one-byte, margin 0.3, {sweeps} sweeps"),
            Warm::None,
        );
    }
    run_device(
        &mut solver,
        &big[0],
        &big_lattice,
        "100k, frame 0, one-byte, margin 0.3",
        Warm::None,
    );
    run_device(
        &mut solver,
        &big[1],
        &big_lattice,
        "100k, frame 1, one-byte, margin 0.3",
        Warm::Previous,
    );
    // The previous default tolerance (1e-7) beside APBS's 1e-6.
    let p = PbParams {
        tolerance: 1e-7,
        ..PbParams::default()
    };
    run_device_with(
        &mut solver,
        &adk[0],
        &fine,
        "frame 0, cold, tolerance 1e-7",
        Warm::None,
        &p,
    );
    run_device_with(
        &mut solver,
        &adk[1],
        &fine,
        "frame 1, warm, tolerance 1e-7",
        Warm::Previous,
        &p,
    );
    // The wgpu engine on this machine's first hardware adapter: the CPU engine's maps, the solve on
    // the device (float32 corrections, float64 residuals on the host).
    match orbitfield::compute::pb::PbSolver::new(orbitfield::compute::pb::PbEngine::Wgpu) {
        Ok(mut w) => {
            for (i, a) in adk.iter().take(4).enumerate() {
                let t = Instant::now();
                let c = coefficients(a, &fine, &PbParams::default()).unwrap();
                let maps = t.elapsed().as_secs_f64();
                let t = Instant::now();
                let sol = w.solve_next(a, &fine, &PbParams::default()).unwrap();
                println!(
                    "| wgpu ({}), frame {i}{} | {:?} | CPU maps {} | - | - | - | solve with its maps **{}** | {} CG | {:.1e} |",
                    w.engine_name(),
                    if i == 0 { ", cold" } else { ", warm" },
                    fine.dims,
                    ms(maps),
                    ms(t.elapsed().as_secs_f64()),
                    sol.iterations,
                    sol.relative_residual
                );
                drop(c);
            }
        }
        Err(e) => println!("wgpu engine: {e}"),
    }
    let t = Instant::now();
    let cpu = orbitfield::compute::cpu::pb::solve(&adk[0], &fine, &PbParams::default(), None).unwrap();
    println!(
        "CPU engine, frame 0, {:?}: {:.2} s with the maps, {} CG iterations ({} threads)",
        fine.dims,
        t.elapsed().as_secs_f64(),
        cpu.iterations,
        rayon::current_num_threads()
    );
}
