//! A wavefunction's own electrostatic potential (`Field::QmPotential`) on the wgpu engine
//! (`compute::wgpu::qm_esp`, float32; on whatever adapter exists: Mesa lavapipe in CI, the H200's
//! Vulkan driver on the device machine) against the CPU engine (f64, itself held to PySCF in
//! `tests/qm_esp.rs`) and against PySCF's own lattices:
//! - real wavefunctions from `tests/data/qm` (water and threonine 6-31G* with d functions, O2 UHF
//!   cc-pVTZ with f, N2 cc-pVQZ with g) on fresh random sheared lattices (the seed is printed;
//!   `ORBITFIELD_TEST_SEED` replays one), computed in two slabs: every point within
//!   [`TOL_OF_MAX`] of the largest |V| on the lattice, and every point farther than 1 Angstrom from
//!   the nuclei within [`TOL_FAR`] of its own scale (see there: the float32 reason); lattices 20 bohr
//!   and more away from O2 and N2 within [`TOL_FAR`] (V is far below its nuclear and electronic
//!   parts there, so the bound relative to the largest |V| does not apply); a synthetic basis with an s
//!   exponent of 1e5 and shells up to g, through the nuclei and 40 bohr away;
//! - PySCF's lattices (`tests/data/qm/esp/*.esp_lattice.txt.gz`) at the points farther than 1
//!   Angstrom from the nuclei, to the same bound;
//! - the pass with its nuclear term dropped, or with every distribution of one L group dropped, or
//!   with one distribution's coefficients doubled, fails those comparisons (they can fail);
//! - the worker pool with a wgpu worker beside a CPU worker computes a lattice of that field on the
//!   wgpu worker, equal to the CPU engine's; `orbitfield grid esp --device wgpu` writes the CPU
//!   engine's map.
//!
//! Without an adapter with compute shaders the tests print why and pass, unless
//! `ORBITFIELD_REQUIRE_WGPU=1` is set.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use orbitfield::compute::cpu::CpuEngine;
use orbitfield::compute::qm_esp::PreparedQmEsp;
use orbitfield::compute::wgpu::qm_esp::{PackedQmEsp, QmEspPass};
use orbitfield::compute::{Field, FieldInput, FieldJob, SlabEngine};
use orbitfield::io::{self, molden};
use orbitfield::jobs::{EngineSpec, Pool, PoolConfig};
use orbitfield::model::{Lattice, Wavefunction};
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[path = "common/wgpu_test_engine.rs"]
mod wgpu_test_engine;
use wgpu_test_engine::{engine, required};

#[path = "common/rdf_cases.rs"]
mod rdf_cases;

/// Every point within this fraction of the largest |V| on the lattice (the bound).
const TOL_OF_MAX: f64 = 1e-4;
/// Points farther than [`FAR_BOHR`] from every nucleus: the difference within this fraction of
/// `sum_A Z_A / |r - R_A|` there. Float32 reason: the nuclear and electronic parts cancel to a
/// potential far smaller than either (at 2 bohr from an oxygen each is about 4 hartree/e, their sum
/// a few 0.01); each term is f32 (a few ulp, u = 6e-8, offsets from lattice coordinates exact to
/// that) and the terms are summed with Kahan compensation, so what remains is a few ulp of the parts.
const TOL_FAR: f64 = 2e-6;
const FAR_BOHR: f64 = 1.8897;

fn seed() -> u64 {
    let s = std::env::var("ORBITFIELD_TEST_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(rdf_cases::clock_seed);
    println!("seed {s}");
    s
}

fn root() -> PathBuf {
    // ORBITFIELD_TEST_ROOT: where the repository's data lies when the test runs on another machine.
    std::env::var_os("ORBITFIELD_TEST_ROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf())
}

fn data(rel: &str) -> PathBuf {
    root().join("tests/data/qm").join(rel)
}

fn load(name: &str) -> Arc<Wavefunction> {
    let path = data(&format!("{name}.molden.gz"));
    let m = molden::read(&path, &io::read_bytes(&path).unwrap()).unwrap();
    Arc::new(m.wavefunctions.into_iter().next().unwrap())
}

/// A lattice of `job` in two slabs on `engine` (poisoned: every value must be written).
fn run(engine: &dyn SlabEngine, job: &FieldJob) -> Vec<f32> {
    let mut out = vec![f32::NAN; job.lattice.n_points()];
    let nz = job.lattice.dims[2];
    let plane = job.lattice.dims[0] * job.lattice.dims[1];
    let (a, b) = out.split_at_mut(plane * (nz / 2));
    engine.compute_slab(job, 0..nz / 2, a).unwrap();
    engine.compute_slab(job, nz / 2..nz, b).unwrap();
    assert!(out.iter().all(|v| v.is_finite()), "{}: unwritten values", engine.name());
    out
}

/// `sum_A Z_A / max(|r - R_A|, 1e-6)` and the distance to the nearest nucleus.
fn nuclear_scale(wf: &Wavefunction, p: [f64; 3]) -> (f64, f64) {
    let mut sum = 0.0;
    let mut nearest = f64::INFINITY;
    for a in &wf.atoms {
        let r = a.position_bohr;
        let d = ((r[0] - p[0]).powi(2) + (r[1] - p[1]).powi(2) + (r[2] - p[2]).powi(2)).sqrt();
        sum += a.nuclear_charge.abs() / d.max(1e-6);
        nearest = nearest.min(d);
    }
    (sum, nearest)
}

/// How far `got` is from `want` on `lattice`: (largest difference over the largest |want|, largest
/// difference over the nuclear scale at the points farther than [`FAR_BOHR`] from the nuclei,
/// points counted there).
fn errors(wf: &Wavefunction, lattice: &Lattice, got: &[f32], want: &[f64]) -> (f64, f64, usize) {
    let [nx, ny, nz] = lattice.dims;
    let vmax = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let (mut of_max, mut far, mut n_far) = (0.0f64, 0.0f64, 0usize);
    for k in 0..nz {
        for j in 0..ny {
            for i in 0..nx {
                let idx = i + nx * (j + ny * k);
                let diff = (f64::from(got[idx]) - want[idx]).abs();
                of_max = of_max.max(diff / vmax);
                let (scale, nearest) = nuclear_scale(wf, lattice.point_bohr(i, j, k));
                if nearest >= FAR_BOHR {
                    far = far.max(diff / scale);
                    n_far += 1;
                }
            }
        }
    }
    (of_max, far, n_far)
}

fn within(label: &str, e: (f64, f64, usize)) -> bool {
    let (of_max, far, n_far) = e;
    println!(
        "{label}: largest difference {of_max:.2e} of max |V|; {far:.2e} of the nuclear scale at {n_far} far points"
    );
    of_max <= TOL_OF_MAX && far <= TOL_FAR
}

/// A random sheared lattice around the molecule's atoms: 6 to 10 points per axis, 0.3 to 0.9 bohr
/// apart, the origin up to 2 bohr outside the atoms' box.
fn random_lattice(state: &mut u64, wf: &Wavefunction) -> Lattice {
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for a in &wf.atoms {
        for k in 0..3 {
            lo[k] = lo[k].min(a.position_bohr[k]);
            hi[k] = hi[k].max(a.position_bohr[k]);
        }
    }
    let mut r = || rdf_cases::lcg(state);
    let dims: [usize; 3] = std::array::from_fn(|_| 6 + (r() * 5.0) as usize);
    let mut steps = [[0.0; 3]; 3];
    for (a, s) in steps.iter_mut().enumerate() {
        for (b, x) in s.iter_mut().enumerate() {
            *x = if a == b {
                let span = hi[a] - lo[a] + 4.0;
                (span / dims[a] as f64).clamp(0.3, 0.9) * (0.9 + 0.2 * r())
            } else {
                0.15 * (r() - 0.5)
            };
        }
    }
    let origin = std::array::from_fn(|k| lo[k] - 2.0 * r());
    Lattice {
        origin_bohr: origin,
        steps_bohr: steps,
        dims,
    }
}

fn qm_job(wf: &Arc<Wavefunction>, lattice: Lattice) -> FieldJob {
    FieldJob {
        field: Field::QmPotential,
        lattice,
        input: FieldInput::Wavefunction(wf.clone()),
    }
}

const MOLECULES: [&str; 5] = [
    "water_hf_631gs_sph",
    "water_hf_631gs_cart",
    "threonine_hf_631gs_cart",
    "o2_uhf_ccpvtz_sph",
    "n2_hf_ccpvqz_sph",
];

#[test]
fn random_lattices_match_the_cpu_engine() {
    let Some(gpu) = engine("wavefunction potential") else {
        return;
    };
    let mut state = seed();
    for name in MOLECULES {
        let wf = load(name);
        let prep = PreparedQmEsp::new(&wf).unwrap();
        let job = qm_job(&wf, random_lattice(&mut state, &wf));
        let got = run(&gpu, &job);
        let want: Vec<f64> = run(&CpuEngine, &job).into_iter().map(f64::from).collect();
        let label = format!(
            "{name} (L <= {}, {} distributions), {:?} points",
            prep.pairs.max_l(),
            prep.pairs.n_kept,
            job.lattice.dims
        );
        assert!(within(&label, errors(&wf, &job.lattice, &got, &want)), "{label}");
    }
}

/// Lattices 20 bohr and more from the molecule (the Boys function's asymptotic branch, high orders
/// underflowing in f32 while the monomials stay bounded): f and g functions, within [`TOL_FAR`].
#[test]
fn far_lattices_match_the_cpu_engine() {
    let Some(gpu) = engine("far wavefunction potential") else {
        return;
    };
    let mut state = seed();
    for name in ["o2_uhf_ccpvtz_sph", "n2_hf_ccpvqz_sph"] {
        let wf = load(name);
        let mut lattice = random_lattice(&mut state, &wf);
        let away = 20.0 + 15.0 * rdf_cases::lcg(&mut state);
        lattice.origin_bohr = [away, -0.7 * away, 0.3 * away];
        for s in &mut lattice.steps_bohr {
            for x in s.iter_mut() {
                *x *= 5.0;
            }
        }
        let job = qm_job(&wf, lattice);
        let got = run(&gpu, &job);
        let want: Vec<f64> = run(&CpuEngine, &job).into_iter().map(f64::from).collect();
        // Far from a neutral molecule V is orders of magnitude below its nuclear and electronic parts
        // (O2 at 30 bohr: 1e-5 against 0.5 hartree/e each), so the f32 rounding of those parts is a
        // large fraction of the lattice's largest |V|: only the nuclear-scale bound holds there.
        let (of_max, far, n_far) = errors(&wf, &lattice, &got, &want);
        println!(
            "{name} {away:.1} bohr away: {far:.2e} of the nuclear scale at {n_far} points ({of_max:.2e} of max |V|)"
        );
        assert!(n_far == lattice.n_points() && far <= TOL_FAR, "{name}: {far:.2e}");
    }
}

/// Two atoms with s (one of exponent 1e5, as in cc-pVQZ cores), p, d, f and g shells and a random
/// symmetric density matrix: every L up to 8 with tight distributions, on lattices through the
/// nuclei and 40 bohr away (the f32 range of the rescaled coefficients and Boys values).
fn synthetic_wavefunction(state: &mut u64) -> Arc<Wavefunction> {
    use orbitfield::model::wavefunction::DensityMatrix;
    use orbitfield::model::{BasisSet, Element, OrbitalSet, QmAtom, Shell, SpinKind};
    let centres = [[0.0, 0.0, 0.0], [1.3, -0.4, 0.9]];
    let mut shells = Vec::new();
    for (atom, c) in centres.into_iter().enumerate() {
        for (l, pure, e) in [
            (0u8, false, vec![1.0e5, 2.0e3, 3.0, 0.4]),
            (1, false, vec![20.0, 0.9]),
            (2, true, vec![0.7]),
            (3, false, vec![1.1]),
            (4, true, vec![1.6]),
        ] {
            shells.push(Shell {
                l,
                pure,
                atom,
                center_bohr: c,
                exponents: e.clone(),
                coefficients: vec![1.0; e.len()],
            });
        }
    }
    let basis = BasisSet { shells };
    let n = basis.n_functions();
    let mut d = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..=i {
            let v = 0.2 * (rdf_cases::lcg(state) - 0.5);
            d[i * n + j] = v;
            d[j * n + i] = v;
        }
    }
    Arc::new(Wavefunction {
        atoms: vec![
            QmAtom {
                element: Element(7),
                nuclear_charge: 7.0,
                position_bohr: centres[0],
            },
            QmAtom {
                element: Element(8),
                nuclear_charge: 8.0,
                position_bohr: centres[1],
            },
        ],
        basis,
        spin: SpinKind::Restricted,
        alpha: OrbitalSet {
            n_basis: n,
            ..OrbitalSet::default()
        },
        beta: None,
        program: None,
        corrections: Vec::new(),
        energy_hartree: None,
        scf_density: Some(DensityMatrix { n_basis: n, values: d }),
    })
}

#[test]
fn tight_and_high_l_distributions_near_and_far() {
    let Some(gpu) = engine("synthetic wavefunction potential") else {
        return;
    };
    let mut state = seed();
    let wf = synthetic_wavefunction(&mut state);
    assert_eq!(PreparedQmEsp::new(&wf).unwrap().pairs.max_l(), 8);
    // Through both nuclei (lattice points on them: the clamp), then far away.
    let near = Lattice {
        origin_bohr: [-1.3, 0.4, -0.9],
        steps_bohr: [[1.3, -0.4, 0.9], [0.0, 0.45, 0.05], [0.1, 0.0, 0.5]],
        dims: [4, 6, 6],
    };
    let mut far = near;
    far.origin_bohr = [40.0, -10.0, 5.0];
    for (what, lattice) in [("through the nuclei", near), ("40 bohr away", far)] {
        let job = qm_job(&wf, lattice);
        let got = run(&gpu, &job);
        let want: Vec<f64> = run(&CpuEngine, &job).into_iter().map(f64::from).collect();
        assert!(within(what, errors(&wf, &lattice, &got, &want)), "{what}");
    }
}

/// PySCF's lattice (x fastest) of `name`.
fn pyscf_lattice(name: &str) -> (Lattice, Vec<f64>) {
    let path = data(&format!("esp/{name}.esp_lattice.txt.gz"));
    let t = String::from_utf8(io::read_bytes(&path).unwrap()).unwrap();
    let header = |key: &str| -> Vec<f64> {
        let line = t.lines().find(|l| l.starts_with(key)).unwrap();
        line[key.len()..]
            .split_whitespace()
            .map(|x| x.parse().unwrap())
            .collect()
    };
    let (o, s, d) = (header("# origin_bohr:"), header("# steps_bohr:"), header("# dims:"));
    let lattice = Lattice {
        origin_bohr: [o[0], o[1], o[2]],
        steps_bohr: [[s[0], s[1], s[2]], [s[3], s[4], s[5]], [s[6], s[7], s[8]]],
        dims: [d[0] as usize, d[1] as usize, d[2] as usize],
    };
    let values: Vec<f64> = t
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| l.trim().parse().unwrap())
        .collect();
    assert_eq!(values.len(), lattice.n_points());
    (lattice, values)
}

#[test]
fn pyscf_lattices_far_from_the_nuclei() {
    let Some(gpu) = engine("wavefunction potential against PySCF") else {
        return;
    };
    for name in ["water_hf_631gs_sph", "o2_uhf_ccpvtz_sph"] {
        let wf = load(name);
        let (lattice, want) = pyscf_lattice(name);
        let got = run(&gpu, &qm_job(&wf, lattice));
        let (_, far, n_far) = errors(&wf, &lattice, &got, &want);
        println!("{name}: {far:.2e} of the nuclear scale at {n_far} points farther than 1 A from the nuclei");
        assert!(n_far > 600 && far <= TOL_FAR, "{name}: {far:.2e}");
    }
}

/// The pass with altered inputs: each alteration must fail the comparison the tests above make.
#[test]
fn a_broken_pass_fails_the_comparison() {
    let Some(gpu) = engine("altered wavefunction potential") else {
        return;
    };
    let (device, queue) = gpu.device();
    let pass = QmEspPass::new(device);
    let mut state = seed();
    let wf = load("water_hf_631gs_sph");
    let lattice = random_lattice(&mut state, &wf);
    let job = qm_job(&wf, lattice);
    let want: Vec<f64> = run(&CpuEngine, &job).into_iter().map(f64::from).collect();
    let prep = PreparedQmEsp::new(&wf).unwrap();
    let on_device = |packed: &PackedQmEsp| {
        let mut out = vec![f32::NAN; lattice.n_points()];
        pass.slab_packed(device, queue, packed, &lattice, 0..lattice.dims[2], &mut out)
            .unwrap();
        out
    };
    let intact = PackedQmEsp::new(&prep, &lattice).unwrap();
    assert!(within("intact", errors(&wf, &lattice, &on_device(&intact), &want)));
    let mut no_nuclei = intact.clone();
    no_nuclei.nuclei.clear();
    let mut no_group = intact.clone();
    no_group.groups.retain(|g| g.l != 1);
    assert!(no_group.groups.len() < intact.groups.len());
    // The distribution with the largest monopole coefficient, doubled.
    let g0 = intact.groups[0];
    let worst = (0..g0.count)
        .max_by(|&a, &b| {
            let q = |i: usize| intact.records[g0.base + i * g0.stride + 7].abs();
            q(a).total_cmp(&q(b))
        })
        .unwrap();
    let mut doubled = intact.clone();
    for w in &mut doubled.records[g0.base + worst * g0.stride + 7..g0.base + (worst + 1) * g0.stride] {
        *w *= 2.0;
    }
    for (what, packed) in [
        ("without the nuclear term", no_nuclei),
        ("without the s-p distributions", no_group),
        ("with one distribution doubled", doubled),
    ] {
        assert!(
            !within(what, errors(&wf, &lattice, &on_device(&packed), &want)),
            "{what}: still within the bounds"
        );
    }
}

#[test]
fn pool_computes_the_field_on_its_wgpu_worker() {
    let Some(gpu) = engine("pool") else { return };
    let mut state = seed();
    let wf = load("water_hf_631gs_cart");
    let mut lattice = random_lattice(&mut state, &wf);
    lattice.dims = [9, 8, 12];
    let job = qm_job(&wf, lattice);
    let want: Vec<f64> = run(&CpuEngine, &job).into_iter().map(f64::from).collect();
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
            gpu_tile_points: 9 * 8 * 2,
            ..PoolConfig::default()
        },
    );
    assert!(
        pool.workers()[0].engine.starts_with("wgpu:"),
        "{}",
        pool.workers()[0].engine
    );
    let grid = pool.compute_grid(1, job.clone()).unwrap();
    assert!(within("pool", errors(&wf, &lattice, &grid.values, &want)));
    let tiles = pool.workers()[0].tiles_done.load(std::sync::atomic::Ordering::SeqCst);
    println!("wgpu worker tiles: {tiles}");
    assert!(tiles >= 1, "the wgpu worker computed no tile");
}

/// `orbitfield grid esp FILE --device wgpu` (software adapters included when forced) writes the
/// map `--device cpu` writes.
#[test]
fn grid_command_with_device_wgpu() {
    let dir = tempfile::tempdir().unwrap();
    let molden = data("water_hf_631gs_sph.molden.gz");
    let grid = |device: &str, out: &Path| {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_orbitfield"))
            .args(["grid", "esp"])
            .arg(&molden)
            .args([
                "--spacing",
                "0.5",
                "--padding",
                "1.5",
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
    assert!(err.contains("wavefunction esp on wgpu"), "placed: {err}");
    let (ok, err) = grid("cpu", &cpu_out);
    assert!(ok, "--device cpu: {err}");
    let read = |p: &Path| io::cube::read(p, &std::fs::read(p).unwrap()).unwrap();
    let (want, got) = (read(&cpu_out), read(&gpu_out));
    let (want, got) = (&want.grids[0], &got.grids[0]);
    assert_eq!(want.lattice, got.lattice);
    let wf = load("water_hf_631gs_sph");
    let want: Vec<f64> = want.values.iter().map(|&v| f64::from(v)).collect();
    assert!(within(
        "grid --device wgpu",
        errors(&wf, &got.lattice, &got.values, &want)
    ));
}
