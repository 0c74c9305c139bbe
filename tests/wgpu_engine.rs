//! The wgpu engine (`compute::wgpu::engine::WgpuEngine`, on whatever adapter exists: Mesa lavapipe in
//! CI, the H200's Vulkan driver on the device machine) against the CPU engine, the numerical
//! reference, on fresh random inputs (the seed is printed; `ORBITFIELD_TEST_SEED` replays one):
//! - direct Coulomb maps, vacuum, eps = 4r and Debye-Hueckel, on an axis-aligned lattice with ragged
//!   edges and on a sheared one, whole and as a slab: RMS relative error below 1e-5 (the CUDA
//!   engine's tolerance for the same field in `tests/gpu_engine.rs`; both sum f32 terms) at the
//!   points farther than 0.05 bohr from every charge (eps = 4r: 1e-4), and below 1e-4 with them (f32
//!   coordinates relative to the lattice origin, see `COORD_TOL`); the same map with the charges
//!   moved by 0.2 bohr fails (the comparison can fail);
//! - RDF pair counts in open space and orthorhombic, triclinic and truncated-octahedron cells, with
//!   and without exclusions: the CPU engine's counts to the f32 bin-edge allowance of the CUDA tests
//!   (`rdf_cases::assert_counts_close`), and the CUDA kernel's f32 emulation likewise;
//! - orbitals, densities and spin densities on randomly placed lattices: RMS relative error below
//!   1e-5;
//! - the worker pool with a wgpu worker beside a CPU worker: a potential map equals the CPU engine's,
//!   and a field the wgpu engine does not compute (molecular surface) is passed to the CPU worker
//!   (lavapipe here; the H200's Vulkan adapter on the device machine).
//!
//! Without an adapter with compute shaders the tests print why and pass, unless
//! `ORBITFIELD_REQUIRE_WGPU=1` is set.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use orbitfield::compute::cpu::CpuEngine;
use orbitfield::compute::esp::screening::{Dielectric, ScreenedCharges};
use orbitfield::compute::{Field, FieldInput, FieldJob, PointCharges, SlabEngine};
use orbitfield::jobs::{EngineSpec, Pool, PoolConfig};
use orbitfield::model::{Lattice, Spin, Wavefunction};
use std::path::Path;
use std::sync::Arc;

#[path = "common/wgpu_test_engine.rs"]
mod wgpu_test_engine;
use wgpu_test_engine::engine;

#[path = "common/rdf_cases.rs"]
mod rdf_cases;

const TOL: f64 = 1e-5;
/// The same for spin densities (a difference of two densities).
const TOL_SPIN: f64 = 5e-5;

fn seed() -> u64 {
    let s = std::env::var("ORBITFIELD_TEST_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(rdf_cases::clock_seed);
    println!("seed {s}");
    s
}

fn rel_err(a: &[f32], b: &[f32]) -> f64 {
    assert_eq!(a.len(), b.len());
    let (mut num, mut den) = (0.0f64, 0.0f64);
    for (&x, &y) in a.iter().zip(b) {
        assert!(x.is_finite(), "non-finite wgpu value");
        num += (f64::from(x) - f64::from(y)).powi(2);
        den += f64::from(y).powi(2);
    }
    (num / den.max(1e-300)).sqrt()
}

fn slab(engine: &dyn SlabEngine, job: &FieldJob, z: std::ops::Range<usize>) -> Vec<f32> {
    let n = job.lattice.dims[0] * job.lattice.dims[1] * z.len();
    let mut out = vec![f32::NAN; n];
    engine.compute_slab(job, z, &mut out).unwrap();
    assert!(out.iter().all(|v| v.is_finite()), "{}: unwritten values", engine.name());
    out
}

fn random_charges(state: &mut u64, n: usize, lo: [f64; 3], ext: [f64; 3]) -> PointCharges {
    let mut q = PointCharges::default();
    for _ in 0..n {
        let p = std::array::from_fn(|k| lo[k] + ext[k] * rdf_cases::lcg(state));
        q.positions_bohr.push(p);
        q.charges_e.push(2.0 * rdf_cases::lcg(state) - 1.0);
    }
    q
}

/// Points nearer than this to a charge are where f32 coordinates limit both engines.
const NEAR_BOHR: f64 = 0.05;
/// The bound with those points: the pass rounds coordinates relative to the lattice origin to f32
/// (about 1e-6 bohr over a 20 bohr lattice), the CPU engine relative to each row's start; at a point
/// 0.01 bohr from a charge that is 1e-4 of its term (2e-4 for eps = 4r), and such a term dominates
/// the map's RMS.
const COORD_TOL: f64 = 1e-4;

/// The values at the lattice points farther than [`NEAR_BOHR`] from every charge.
fn away_from_charges(lattice: &Lattice, q: &PointCharges, a: &[f32], b: &[f32]) -> (Vec<f32>, Vec<f32>) {
    let [nx, ny, nz] = lattice.dims;
    let mut keep = (Vec::new(), Vec::new());
    for k in 0..nz {
        for j in 0..ny {
            for i in 0..nx {
                let p = lattice.point_bohr(i, j, k);
                let near = q.positions_bohr.iter().any(|c| {
                    (p[0] - c[0]).powi(2) + (p[1] - c[1]).powi(2) + (p[2] - c[2]).powi(2) < NEAR_BOHR * NEAR_BOHR
                });
                if !near {
                    let n = i + nx * (j + ny * k);
                    keep.0.push(a[n]);
                    keep.1.push(b[n]);
                }
            }
        }
    }
    keep
}

#[test]
fn coulomb_maps_match_the_cpu_engine_in_every_model() {
    let Some(gpu) = engine("coulomb map") else { return };
    let mut state = seed();
    let sheared = Lattice {
        origin_bohr: [-3.1, 1.7, 0.4],
        steps_bohr: [[0.41, 0.0, 0.0], [0.05, 0.39, 0.0], [0.1, -0.07, 0.44]],
        dims: [29, 23, 7],
    };
    for (lattice, n) in [
        // Ragged in x and y for the 32 x 16 workgroup patches; charges beyond one tile and ragged.
        (Lattice::axis_aligned([-2.0, 0.5, 1.0], 0.37, [45, 19, 9]), 1337),
        (sheared, 700),
    ] {
        let q = Arc::new(random_charges(&mut state, n, [-4.0, -2.0, -3.0], [24.0, 13.0, 10.0]));
        for dielectric in [
            Dielectric::Vacuum,
            Dielectric::DistanceDependent {
                slope_per_angstrom: 4.0,
            },
            Dielectric::debye_default(),
        ] {
            let input = if dielectric.is_vacuum() {
                FieldInput::Charges(q.clone())
            } else {
                FieldInput::ScreenedCharges(Arc::new(ScreenedCharges {
                    charges: q.clone(),
                    dielectric,
                }))
            };
            let job = FieldJob {
                field: Field::Potential,
                lattice,
                input,
            };
            let nz = lattice.dims[2];
            let cpu = slab(&CpuEngine, &job, 0..nz);
            let got = slab(&gpu, &job, 0..nz);
            let err = rel_err(&got, &cpu);
            let label = dielectric.label();
            let (far_got, far_cpu) = away_from_charges(&lattice, &q, &got, &cpu);
            let far_err = rel_err(&far_got, &far_cpu);
            println!(
                "{label} on {:?}: wgpu vs CPU RMS relative error {err:.2e}, {far_err:.2e} at the {} points \
                 farther than {NEAR_BOHR} bohr from every charge",
                lattice.dims,
                far_got.len()
            );
            assert!(err <= COORD_TOL, "{label}: {err:.2e}");
            // eps = 4r: the 1/r^2 kernel doubles the coordinates' relative error and weights the
            // nearest charges most, so 0.05 bohr is not far for it (2.3e-5 measured on the H200).
            let far_tol = if dielectric.is_vacuum() || dielectric.kappa_per_bohr() > 0.0 {
                TOL
            } else {
                COORD_TOL
            };
            assert!(far_err <= far_tol, "{label}: {far_err:.2e} away from the charges");
            // A slab in the middle is the same planes of the whole.
            let plane = lattice.dims[0] * lattice.dims[1];
            let mid = slab(&gpu, &job, 2..5);
            let err = rel_err(&mid, &cpu[2 * plane..5 * plane]);
            assert!(err <= COORD_TOL, "{label} slab: {err:.2e}");
            // Charges moved by 0.2 bohr: the comparison fails.
            let moved = PointCharges {
                positions_bohr: q.positions_bohr.iter().map(|p| [p[0] + 0.2, p[1], p[2]]).collect(),
                charges_e: q.charges_e.clone(),
            };
            let moved_job = FieldJob {
                input: FieldInput::ScreenedCharges(Arc::new(ScreenedCharges {
                    charges: Arc::new(moved),
                    dielectric,
                })),
                ..job.clone()
            };
            let wrong = rel_err(&slab(&gpu, &moved_job, 0..nz), &cpu);
            assert!(wrong > 100.0 * COORD_TOL, "{label}: moved charges give {wrong:.2e}");
        }
    }
}

#[test]
fn rdf_counts_match_the_cpu_engine() {
    use orbitfield::analysis::rdf::RdfAccumulator;
    use orbitfield::compute::cuda::rdf::{PairGeometry, PairMode};
    let Some(gpu) = engine("rdf") else { return };
    let mut state = seed();
    for case in rdf_cases::kernel_cases(&mut state, (1500, 1300), (700, 1100)) {
        let g = case.groups.as_deref();
        let acc = RdfAccumulator::new(case.settings.clone()).unwrap();
        let checked = acc.check_frame(0, &case.frame, &case.sel1, &case.sel2, g).unwrap();
        let geom = PairGeometry::new(&case.frame, checked, &case.sel1, &case.sel2, g);
        let got = gpu.rdf_counts(&geom, &case.settings).unwrap();
        let cpu = acc
            .frame_counts_cpu(&case.frame, checked, &case.sel1, &case.sel2, g)
            .unwrap();
        let total: u64 = cpu.iter().sum();
        println!("{}: {total} pairs within r_max", case.name);
        assert!(total > 5_000, "{}: too few pairs within r_max to test", case.name);
        rdf_cases::assert_counts_close(&got, &cpu, rdf_cases::R_MAX, &case.name);
        // The CUDA kernel's arithmetic (same f32 operations; the device's sqrt may round differently).
        rdf_cases::assert_counts_close(&got, &geom.emulate(&case.settings), rdf_cases::R_MAX, &case.name);
    }
    // The comparison can fail: the orthorhombic case without its minimum image loses the pairs
    // across the box's faces.
    let case = &rdf_cases::kernel_cases(&mut state, (600, 600), (10, 10))[2];
    let acc = RdfAccumulator::new(case.settings.clone()).unwrap();
    let checked = acc.check_frame(0, &case.frame, &case.sel1, &case.sel2, None).unwrap();
    let mut geom = PairGeometry::new(&case.frame, checked, &case.sel1, &case.sel2, None);
    assert_eq!(geom.mode, PairMode::Orthorhombic);
    geom.mode = PairMode::Open;
    let got: u64 = gpu.rdf_counts(&geom, &case.settings).unwrap().iter().sum();
    let cpu: u64 = acc
        .frame_counts_cpu(&case.frame, checked, &case.sel1, &case.sel2, None)
        .unwrap()
        .iter()
        .sum();
    assert!(10 * got < 9 * cpu, "{got} of {cpu} pairs without the minimum image");
}

fn load(name: &str) -> Arc<Wavefunction> {
    // ORBITFIELD_TEST_ROOT: where the repository's data lies when the test runs on another machine.
    let root = std::env::var_os("ORBITFIELD_TEST_ROOT")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf());
    let path = root.join("tests/data/gpu").join(name);
    let bytes = std::fs::read(&path).unwrap();
    let file = orbitfield::io::molden::read(&path, &bytes).unwrap();
    Arc::new(file.wavefunctions.into_iter().next().unwrap())
}

/// A lattice over the molecule with a random origin shift, spacing and shear.
fn random_lattice(wf: &Wavefunction, state: &mut u64, n: usize) -> Lattice {
    let mut lo = [f64::MAX; 3];
    for a in &wf.atoms {
        for (l, x) in lo.iter_mut().zip(a.position_bohr) {
            *l = l.min(x - 3.0);
        }
    }
    let s = 0.25 + 0.1 * rdf_cases::lcg(state);
    let t = 0.2 * rdf_cases::lcg(state) - 0.1;
    Lattice {
        origin_bohr: lo.map(|x| x - 0.5 * rdf_cases::lcg(state)),
        steps_bohr: [[s, 0.0, 0.0], [0.0, s, 0.0], [t * s, -t * s, s]],
        dims: [n, n - 3, n + 2],
    }
}

#[test]
fn orbitals_densities_and_spin_densities_match_the_cpu_engine() {
    let Some(gpu) = engine("density") else { return };
    let mut state = seed();
    for (name, spin) in [
        ("water_hf_631gs_sph.molden", Spin::Alpha),
        ("o2_uhf_ccpvtz_sph.molden", Spin::Beta),
    ] {
        let wf = load(name);
        let homo = wf.homo(spin).unwrap();
        let lattice = random_lattice(&wf, &mut state, 28);
        for field in [Field::Orbital { spin, index: homo }, Field::Density, Field::SpinDensity] {
            let job = FieldJob {
                field: field.clone(),
                lattice,
                input: FieldInput::Wavefunction(wf.clone()),
            };
            let nz = lattice.dims[2];
            let cpu = slab(&CpuEngine, &job, 0..nz);
            if cpu.iter().all(|&v| v.abs() < 1e-12) {
                // Closed shell: the spin density is zero on both engines.
                assert!(
                    slab(&gpu, &job, 0..nz).iter().all(|&v| v.abs() < 1e-6),
                    "{name} {field:?}"
                );
                continue;
            }
            // The spin density is the difference of the two spins' densities: float32 rounding
            // follows their sum, so relative to the difference it is several times larger (a slab
            // of O2 at 1.6e-5 in one of 30 fresh lattices).
            let tol = if matches!(field, Field::SpinDensity) {
                TOL_SPIN
            } else {
                TOL
            };
            let err = rel_err(&slab(&gpu, &job, 0..nz), &cpu);
            println!("{name} {field:?}: wgpu vs CPU RMS relative error {err:.2e}");
            assert!(err <= tol, "{name} {field:?}: {err:.2e}");
            let plane = lattice.dims[0] * lattice.dims[1];
            let err = rel_err(&slab(&gpu, &job, 3..11), &cpu[3 * plane..11 * plane]);
            assert!(err <= tol, "{name} {field:?} slab: {err:.2e}");
        }
    }
}

#[test]
fn pool_runs_wgpu_tiles_and_passes_other_fields_to_the_cpu() {
    let Some(gpu) = engine("pool") else { return };
    let mut state = seed();
    let q = Arc::new(random_charges(&mut state, 500, [-4.0, -2.0, -3.0], [20.0, 12.0, 9.0]));
    let job = FieldJob {
        field: Field::Potential,
        lattice: Lattice::axis_aligned([-2.0, 0.5, 1.0], 0.4, [33, 20, 17]),
        input: FieldInput::Charges(q.clone()),
    };
    let reference = slab(&CpuEngine, &job, 0..17);
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
            gpu_tile_points: 33 * 20 * 4,
            ..PoolConfig::default()
        },
    );
    assert!(
        pool.workers()[0].engine.starts_with("wgpu:"),
        "{}",
        pool.workers()[0].engine
    );
    let grid = pool.compute_grid(1, job.clone()).unwrap();
    assert!(rel_err(&grid.values, &reference) <= TOL);
    assert!(pool.workers()[0].tiles_done.load(std::sync::atomic::Ordering::SeqCst) >= 5);
    // The molecular surface is not a wgpu field here: the CPU worker computes it.
    let atoms = orbitfield::compute::molsurf::MolSurfAtoms::from_radii_angstrom(
        &[[0.0, 0.0, 0.0], [1.2, 0.3, 0.0]],
        &[1.7, 1.5],
        orbitfield::compute::molsurf::DEFAULT_RADIUS_SCALE,
    )
    .unwrap();
    let surf = FieldJob {
        field: Field::MolSurf,
        lattice: Lattice::axis_aligned([-6.0, -6.0, -6.0], 0.5, [26, 24, 25]),
        input: FieldInput::Spheres(Arc::new(atoms)),
    };
    let want = slab(&CpuEngine, &surf, 0..25);
    let grid = pool.compute_grid(2, surf).unwrap();
    assert!(rel_err(&grid.values, &want) <= 1e-6);
}
