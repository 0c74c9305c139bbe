//! The solvent-excluded surface on a CUDA device (`kernels/ses.cu`) against the CPU engine (the
//! numerical reference): a random cluster whose lattice cuts through it, far from the origin, and
//! adenylate kinase (3,341 atoms, its PQR radii) at 0.5 A in slabs; and the worker pool's GPU workers
//! taking the job. The outputs are poisoned before each launch. Times of both engines are printed
//! (the figures of `benches/RESULTS.md` come from `orbitfield bench`-style runs, not from here).
//!
//! Every test needs a CUDA device; without one it prints why and passes, unless
//! `ORBITFIELD_REQUIRE_CUDA=1` is set.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use orbitfield::compute::cpu::CpuEngine;
use orbitfield::compute::molsurf::{MolSurfAtoms, SurfaceModel};
use orbitfield::compute::{Field, FieldInput, FieldJob, SlabEngine};
use orbitfield::jobs::{EngineSpec, Pool, PoolConfig, SlotId};
use orbitfield::model::Lattice;
use orbitfield::model::field::LatticeSpec;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[path = "common/gpu_engine_kit.rs"]
mod gpu_engine_kit;
use gpu_engine_kit::*;
#[path = "common/cuda_device.rs"]
mod cuda_device;
use cuda_device::device;

const BOHR: f64 = orbitfield::model::units::BOHR_PER_ANGSTROM;

/// The device's values against the CPU engine's: every point within 2e-3 (f32 against f64 where
/// the nearest feature changes), and the sign about the surface the same wherever the CPU engine's
/// value is farther than 0.01 from 0.5.
fn check(gpu: &dyn SlabEngine, what: &str, job: &FieldJob) {
    let t0 = Instant::now();
    let want = run(&CpuEngine, job);
    let cpu_s = t0.elapsed().as_secs_f64();
    // Twice: the first launch compiles the kernel.
    let _ = run(gpu, job);
    let t1 = Instant::now();
    let got = run(gpu, job);
    let gpu_s = t1.elapsed().as_secs_f64();
    let mut worst = 0.0f32;
    let mut across = 0;
    for (g, w) in got.iter().zip(&want) {
        worst = worst.max((g - w).abs());
        across += usize::from(*w > 0.0 && *w < 1.0);
        if (w - 0.5).abs() > 0.01 {
            assert_eq!(g > &0.5, w > &0.5, "{what}: {g} against {w}");
        }
    }
    println!(
        "{what}: {:?} points, {across} near the surface, worst difference {worst:.2e}; CPU {cpu_s:.3} s, device {gpu_s:.4} s",
        job.lattice.dims
    );
    assert!(across > 1000, "{what}: {across} points near the surface");
    assert!(worst < 2e-3, "{what}: worst difference {worst}");
}

fn ses_job(atoms: MolSurfAtoms, lattice: Lattice) -> FieldJob {
    FieldJob {
        field: Field::MolSurf,
        lattice,
        input: FieldInput::Spheres(Arc::new(atoms)),
    }
}

#[test]
fn the_device_matches_the_cpu_engine() {
    let Some(gpu) = device() else { return };
    let mut seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    println!("seed {seed}");
    let mut rnd = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 11) as f64 / (1u64 << 53) as f64
    };
    let centers: Vec<[f64; 3]> = (0..600).map(|_| [0, 1, 2].map(|_| 300.0 + 24.0 * rnd())).collect();
    let radii: Vec<f64> = (0..600).map(|_| 1.0 + rnd()).collect();
    let atoms = MolSurfAtoms::from_radii_angstrom(&centers, &radii, 0.6)
        .unwrap()
        .excluded(1.2 + 0.4 * rnd())
        .unwrap();
    let lattice = Lattice::axis_aligned([304.0 * BOHR, 301.5 * BOHR, 298.0 * BOHR], 0.37 * BOHR, [61, 57, 73]);
    check(&*gpu, "random cluster", &ses_job(atoms, lattice));

    let root = std::env::var_os("ORBITFIELD_TEST_ROOT")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf());
    let mut system = orbitfield::io::load(&[root.join("tests/data/md/adk_open.pqr")]).unwrap();
    let frame = system.trajectory.frame(0).unwrap();
    let atoms = MolSurfAtoms::from_frame(&system.structure, &frame, None, SurfaceModel::EXCLUDED).unwrap();
    let lattice = LatticeSpec::AroundAtoms {
        spacing_angstrom: 0.5,
        padding_angstrom: atoms.padding_angstrom(),
    }
    .build(&atoms.positions_angstrom())
    .unwrap();
    let job = ses_job(atoms, lattice);
    check(&*gpu, "adk", &job);
    // Slabs: the same values as one launch.
    let whole = run(&*gpu, &job);
    let [nx, ny, nz] = job.lattice.dims;
    let mut out = vec![f32::NAN; nx * ny * (nz - 17)];
    gpu.compute_slab(&job, 17..nz, &mut out).unwrap();
    assert_eq!(&whole[nx * ny * 17..], &out[..]);
}

#[test]
fn the_pool_takes_the_excluded_surface_on_the_device() {
    let Some(gpu) = device() else { return };
    let centers: Vec<[f64; 3]> = (0..50)
        .map(|i| [i as f64 * 0.9, (i % 7) as f64, (i % 3) as f64])
        .collect();
    let atoms = MolSurfAtoms::from_radii_angstrom(&centers, &vec![1.6; 50], 0.6)
        .unwrap()
        .excluded(1.4)
        .unwrap();
    let lattice = Lattice::axis_aligned([-5.0 * BOHR, -5.0 * BOHR, -5.0 * BOHR], 0.5 * BOHR, [110, 34, 26]);
    let job = ses_job(atoms, lattice);
    let reference = run(&CpuEngine, &job);
    // The device alone: no CPU worker to fall back to.
    let pool: Pool<u8> = Pool::with_engines(
        vec![EngineSpec {
            engine: gpu,
            is_gpu: true,
        }],
        PoolConfig::default(),
    );
    pool.submit(SlotId(0), 1, job);
    let r = pool.results().recv_timeout(Duration::from_secs(60)).unwrap();
    assert!(r.engines.iter().all(|e| e.starts_with("cuda")), "{:?}", r.engines);
    let grid = r.outcome.unwrap();
    let worst = grid
        .values
        .iter()
        .zip(&reference)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0f32, f32::max);
    assert!(worst < 2e-3, "pool: worst difference {worst}");
}
