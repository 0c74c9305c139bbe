//! Implicit ligand sampling on the wgpu engine (`compute::wgpu::ils`, on whatever adapter exists:
//! the hardware one when present, Mesa lavapipe in CI, the H200's Vulkan driver on the device
//! machine) against the float64 reference of `compute::cpu::ils` (the definition written out), on
//! fresh random atoms (the seed is printed; `ORBITFIELD_TEST_SEED` replays one), and to the analytic
//! values of the probe in vacuum (PMF 0) and beside one atom (PMF = U/kT, Xe, subres 1):
//! - a Xe probe (subres 1 and 3) and an O2 probe with 10 orientations (subres 2: eight sample classes
//!   of turned sets) on a map far from the origin (coordinates near 80 A), open boundaries; a Xe
//!   probe on a map 60 A long;
//! - an O2 probe on a map crossing the faces of a triclinic box (periodic images from `place_atoms`);
//! - PMF within 1e-4 kT of the reference where it is below 10 kT, plus, per voxel, the change the
//!   reference itself shows when the hard cutoff moves by 2e-6 of itself (a float32 distance
//!   decides the cutoff to about 1e-7 of it; the definition jumps by the pair's term there, about
//!   1e-3 kT); the largest difference is printed;
//! - the comparison fails when the engine drops one orientation of each class;
//! - a map split over several submissions (as large maps are) equals the whole;
//! - the pool's wgpu workers (`--device wgpu`: software adapters too) take the frames of
//!   `jobs::ils::IlsWorkers` and equal the reference; a frame the engine refuses (a probe over its
//!   atom limit) is computed on the CPU with a note;
//! - tz2 in its water (about a thousand atoms within reach of each point) against the CPU engine:
//!   1e-4 kT below 10 kT, 1e-3 kT below 60 kT;
//! - `grid ils --device wgpu` on tz2 (AMBER, truncated octahedron, tests/data) against
//!   `grid ils --device cpu`, through the command.
//!
//! Without an adapter with compute shaders the tests print why and pass, unless
//! `ORBITFIELD_REQUIRE_WGPU=1` is set.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use orbitfield::compute::cpu::ils::reference_voxel_means;
use orbitfield::compute::ils::{IlsSetup, PlacedAtoms, place_atoms};
use orbitfield::compute::wgpu::ils::IlsPass;
use orbitfield::jobs::DeviceChoice;
use orbitfield::jobs::ils::IlsWorkers;
use orbitfield::model::UnitCell;
use orbitfield::model::ils::{IlsMap, OccupancySums, Orientations};
use orbitfield::model::lj::{LjParams, Probe};
use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;

#[path = "common/rdf_cases.rs"]
mod rdf_cases;
use rdf_cases::lcg;

#[path = "common/wgpu_test_engine.rs"]
mod wgpu_test_engine;
use wgpu_test_engine::{engine, required};

/// PMF tolerance where the reference is below [`LIMIT_KT`].
const TOL_KT: f64 = 1e-4;
const LIMIT_KT: f64 = 10.0;
/// Relative move of the cutoff that bounds where float32 may decide a pair differently.
const CUTOFF_BAND: f64 = 2e-6;

fn seed() -> u64 {
    match std::env::var("ORBITFIELD_TEST_SEED").ok().and_then(|v| v.parse().ok()) {
        Some(s) => {
            println!("seed {s}");
            s
        }
        // Printed by clock_seed.
        None => rdf_cases::clock_seed(),
    }
}

fn data(path: &str) -> PathBuf {
    let root = std::env::var_os("ORBITFIELD_TEST_ROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    root.join("tests/data").join(path)
}

fn setup(map: IlsMap, subres: usize, probe: &str, orient: usize, atom_lj: Vec<LjParams>) -> IlsSetup {
    let probe = Probe::builtin(probe).unwrap();
    IlsSetup {
        map,
        subres,
        cutoff_angstrom: 9.0,
        max_energy_kt: 87.0,
        temperature_kelvin: 300.0,
        orientations: Orientations::new(&probe, orient, subres),
        probe,
        atom_lj,
    }
}

fn pmf(means: &[f64], dims: [usize; 3]) -> Vec<f64> {
    let mut sums = OccupancySums::new(dims);
    sums.add_frame(means).unwrap();
    sums.pmf_kt(87.0)
}

/// The float64 reference's PMF and, per voxel, how far it moves when the cutoff moves by
/// [`CUTOFF_BAND`] of itself either way.
struct Reference {
    pmf: Vec<f64>,
    band: Vec<f64>,
}

fn reference(s: &IlsSetup, placed: &PlacedAtoms) -> Reference {
    let dims = s.map.dims;
    let at = |scale: f64| {
        let mut t = s.clone();
        t.cutoff_angstrom *= scale;
        pmf(&reference_voxel_means(&t, placed), dims)
    };
    let (lo, hi) = (at(1.0 - CUTOFF_BAND), at(1.0 + CUTOFF_BAND));
    Reference {
        pmf: at(1.0),
        band: lo.iter().zip(&hi).map(|(a, b)| (a - b).abs()).collect(),
    }
}

/// Voxels below the limit, the largest difference there, and the number of voxels beyond their
/// tolerance.
fn compare(got_means: &[f64], want: &Reference, dims: [usize; 3]) -> (usize, f64, usize) {
    let got = pmf(got_means, dims);
    let (mut checked, mut worst, mut bad) = (0, 0.0f64, 0);
    for ((g, w), band) in got.iter().zip(&want.pmf).zip(&want.band) {
        if *w < LIMIT_KT {
            checked += 1;
            let d = (g - w).abs();
            worst = worst.max(d);
            if d > TOL_KT + band {
                bad += 1;
            }
        }
    }
    (checked, worst, bad)
}

/// `n` atoms uniformly in the box [lo, lo + ext] with random Lennard-Jones parameters (one in six
/// without dispersion, as the hydrogens of a force field).
fn random_atoms(state: &mut u64, n: usize, lo: [f64; 3], ext: [f64; 3]) -> (Vec<[f64; 3]>, Vec<LjParams>) {
    let mut pos = Vec::new();
    let mut lj = Vec::new();
    for _ in 0..n {
        pos.push(std::array::from_fn(|k| lo[k] + ext[k] * lcg(state)));
        let eps = if lcg(state) < 1.0 / 6.0 {
            0.0
        } else {
            0.03 + 0.2 * lcg(state)
        };
        lj.push(LjParams::new(eps, 1.2 + 0.9 * lcg(state)));
    }
    (pos, lj)
}

/// The cases: a setup and one frame's placed atoms each.
fn cases(state: &mut u64) -> Vec<(&'static str, IlsSetup, PlacedAtoms)> {
    let mut out = Vec::new();
    // Open boundaries far from the origin: the map and the atoms within reach of it.
    let origin: [f64; 3] = std::array::from_fn(|k| [71.3, -64.9, 82.6][k] + lcg(state));
    let dims = [7, 6, 5];
    let h = 1.1;
    let reach = 9.0 + 1.3;
    let lo: [f64; 3] = std::array::from_fn(|k| origin[k] - h - reach);
    let ext: [f64; 3] = std::array::from_fn(|k| (dims[k] + 1) as f64 * h + 2.0 * reach);
    let (pos, lj) = random_atoms(state, 200, lo, ext);
    for (name, subres, probe, orient) in [
        ("xe subres 1", 1, "xe", 1),
        ("xe subres 3", 3, "xe", 1),
        ("o2", 2, "o2", 10),
    ] {
        let map = IlsMap {
            origin_angstrom: origin,
            spacing_angstrom: h,
            dims,
        };
        let s = setup(map, subres, probe, orient, lj.clone());
        let placed = place_atoms(&s, &pos, None, None).unwrap();
        out.push((name, s, placed));
    }
    // A map 60 A long (sample indices up to 40 along x), far from the origin: every float32
    // difference stays one of small numbers.
    let origin: [f64; 3] = std::array::from_fn(|k| [-93.7, 58.1, 77.4][k] + lcg(state));
    let (dims, h) = ([40, 6, 5], 1.5);
    let lo: [f64; 3] = std::array::from_fn(|k| origin[k] - h - reach);
    let ext: [f64; 3] = std::array::from_fn(|k| (dims[k] + 1) as f64 * h + 2.0 * reach);
    let (pos, lj) = random_atoms(state, 700, lo, ext);
    let map = IlsMap {
        origin_angstrom: origin,
        spacing_angstrom: h,
        dims,
    };
    let s = setup(map, 1, "xe", 1, lj);
    let placed = place_atoms(&s, &pos, None, None).unwrap();
    out.push(("xe long map", s, placed));
    // A triclinic box with the map across its faces: images within reach come from place_atoms.
    let cell = UnitCell::new([17.0, 19.0, 18.0], [82.0, 97.0, 104.0]);
    let m = cell.matrix_angstrom();
    let n_cell = 70;
    let mut pos: Vec<[f64; 3]> = Vec::new();
    let (_, lj) = random_atoms(state, n_cell, [0.0; 3], [1.0; 3]);
    for _ in 0..n_cell {
        let f = [lcg(state), lcg(state), lcg(state)];
        pos.push(std::array::from_fn(|k| {
            f[0] * m[0][k] + f[1] * m[1][k] + f[2] * m[2][k]
        }));
    }
    let map = IlsMap {
        origin_angstrom: [-2.5 + lcg(state), 13.0 + lcg(state), -1.5 + lcg(state)],
        spacing_angstrom: 1.0,
        dims: [6, 6, 5],
    };
    let s = setup(map, 2, "o2", 10, lj);
    let placed = place_atoms(&s, &pos, Some(&cell), None).unwrap();
    assert!(placed.positions_angstrom.len() > 2 * n_cell, "images are placed");
    out.push(("o2 periodic", s, placed));
    out
}

#[test]
fn wgpu_ils_equals_the_float64_reference_on_random_atoms() {
    let Some(gpu) = engine("ILS") else {
        return;
    };
    let mut state = seed();
    for (name, s, placed) in cases(&mut state) {
        let want = reference(&s, &placed);
        let got = gpu.ils_voxel_means(&s, &placed).unwrap();
        let (checked, worst, bad) = compare(&got, &want, s.map.dims);
        let sensitive = want.band.iter().filter(|&&b| b > 0.0).count();
        println!(
            "{name}: {} atoms placed, {checked} voxels below {LIMIT_KT} kT, largest difference {worst:.2e} kT ({sensitive} voxels move with the cutoff)",
            placed.positions_angstrom.len()
        );
        assert!(checked >= 10, "{name}: only {checked} voxels below {LIMIT_KT} kT");
        assert_eq!(
            bad, 0,
            "{name}: {bad} voxels beyond tolerance, largest difference {worst} kT"
        );
        // The voxels above the limit: the cap where the reference caps, finite everywhere.
        let g = pmf(&got, s.map.dims);
        assert!(g.iter().all(|v| v.is_finite() && *v <= 87.0));
    }
}

/// kT at 300 K in kcal/mol from R = 1.987204259e-3 kcal/(mol K) (CODATA 2018), written out here.
const KT_300: f64 = 1.987_204_259e-3 * 300.0;

#[test]
fn vacuum_and_one_atom_are_analytic() {
    let Some(gpu) = engine("ILS analytic") else {
        return;
    };
    let mut state = seed();
    let p = LjParams::new(0.1 + 0.1 * lcg(&mut state), 1.7 + 0.4 * lcg(&mut state));
    let map = IlsMap {
        origin_angstrom: [40.0 + lcg(&mut state), -30.0, 12.5],
        spacing_angstrom: 0.7,
        dims: [12, 11, 10],
    };
    let atom = [43.6 + lcg(&mut state), -26.4, 15.7];
    let s = setup(map, 1, "xe", 1, vec![p]);
    // No atom within reach: the probe in vacuum, PMF 0.
    let far = place_atoms(&s, &[[500.0, 0.0, 0.0]], None, None).unwrap();
    let g = pmf(&gpu.ils_voxel_means(&s, &far).unwrap(), map.dims);
    assert!(
        g.iter().all(|v| v.abs() < 1e-6),
        "vacuum: {:?}",
        g.iter().fold(0.0f64, |a, b| a.max(b.abs()))
    );
    // One atom: PMF = U/kT of the Lennard-Jones pair at each voxel centre (subres 1).
    let placed = place_atoms(&s, &[atom], None, None).unwrap();
    let g = pmf(&gpu.ils_voxel_means(&s, &placed).unwrap(), map.dims);
    let (mut checked, mut worst) = (0, 0.0f64);
    for k in 0..map.dims[2] {
        for j in 0..map.dims[1] {
            for i in 0..map.dims[0] {
                let x = map.centre_angstrom(i, j, k);
                let r = (0..3).map(|a| (x[a] - atom[a]).powi(2)).sum::<f64>().sqrt();
                let eps = (0.494 * p.eps_kcal_per_mol).sqrt();
                let rm = 2.24 + p.rmin_half_angstrom;
                let u = if r < 9.0 {
                    eps * ((rm / r).powi(12) - 2.0 * (rm / r).powi(6)) / KT_300
                } else {
                    0.0
                };
                if u < LIMIT_KT {
                    checked += 1;
                    worst = worst.max((g[i + map.dims[0] * (j + map.dims[1] * k)] - u).abs());
                }
            }
        }
    }
    println!("one atom: {checked} voxels below {LIMIT_KT} kT, largest difference {worst:.2e} kT");
    assert!(checked > 500, "{checked}");
    assert!(worst <= TOL_KT, "{worst} kT");
}

#[test]
fn a_map_split_over_submissions_equals_the_whole() {
    let Some(gpu) = engine("ILS in parts") else {
        return;
    };
    let mut state = seed();
    let (_, s, placed) = cases(&mut state).into_iter().find(|c| c.0 == "o2 periodic").unwrap();
    let (device, queue) = gpu.device();
    let pass = IlsPass::new(device);
    let whole = pass.voxel_means(device, queue, &s, &placed).unwrap();
    for planes in [1, 2, 4] {
        let parts = pass.voxel_means_in(device, queue, &s, &placed, planes).unwrap();
        assert_eq!(parts, whole, "{planes} voxel planes per submission");
    }
    let (checked, worst, bad) = compare(&whole, &reference(&s, &placed), s.map.dims);
    println!("in parts: {checked} voxels below {LIMIT_KT} kT, largest difference {worst:.2e} kT");
    assert_eq!(bad, 0);
}

#[test]
fn the_comparison_fails_when_an_orientation_is_dropped() {
    let Some(gpu) = engine("ILS broken orientations") else {
        return;
    };
    let mut state = seed();
    let (_, s, placed) = cases(&mut state).into_iter().find(|c| c.0 == "o2").unwrap();
    let want = reference(&s, &placed);
    let o = &s.orientations;
    let p = o.atoms_per_orientation;
    let mut broken = s.clone();
    broken.orientations.per_class = o.per_class - 1;
    broken.orientations.offsets_angstrom = (0..o.classes)
        .flat_map(|c| {
            let start = c * o.per_class * p;
            o.offsets_angstrom[start..start + (o.per_class - 1) * p].to_vec()
        })
        .collect();
    let got = gpu.ils_voxel_means(&broken, &placed).unwrap();
    let (checked, worst, bad) = compare(&got, &want, s.map.dims);
    println!("one orientation dropped: {bad} of {checked} voxels beyond tolerance, largest difference {worst:.2e} kT");
    assert!(bad > 0, "dropping an orientation went unnoticed");
    // The intact setup passes on the same atoms.
    let (_, _, bad) = compare(&gpu.ils_voxel_means(&s, &placed).unwrap(), &want, s.map.dims);
    assert_eq!(bad, 0);
}

#[test]
fn pool_wgpu_workers_take_ils_frames() {
    let mut state = seed();
    let (_, s, placed) = cases(&mut state).into_iter().find(|c| c.0 == "o2 periodic").unwrap();
    let s = Arc::new(s);
    let workers = IlsWorkers::with_devices(DeviceChoice::Wgpu, None, s.clone());
    if !workers.has_gpu() {
        assert!(!required(), "no wgpu worker: {:?}", workers.notes());
        eprintln!("skipping the pool test: {:?}", workers.notes());
        return;
    }
    println!("workers {:?}", workers.worker_names());
    // Three frames: the atoms as they are and moved by a little.
    let frames: Vec<PlacedAtoms> = (0..3)
        .map(|f| {
            let mut p = placed.clone();
            for x in &mut p.positions_angstrom {
                for v in x.iter_mut() {
                    *v += 0.05 * f as f64 * (lcg(&mut state) - 0.5);
                }
            }
            p
        })
        .collect();
    let mut got: Vec<Option<Vec<f64>>> = vec![None; frames.len()];
    let mut take = |d: orbitfield::jobs::ils::IlsDone| -> Result<(), String> {
        assert!(d.engine.starts_with("wgpu:"), "frame {} on {}", d.frame_index, d.engine);
        assert!(d.note.is_none(), "{:?}", d.note);
        got[d.frame_index] = Some(d.result?);
        Ok(())
    };
    for (f, p) in frames.iter().enumerate() {
        workers.submit_blocking(f, Arc::new(p.clone()), &mut take).unwrap();
    }
    workers.drain(&mut take).unwrap();
    for (f, p) in frames.iter().enumerate() {
        let want = reference(&s, p);
        let (checked, worst, bad) = compare(got[f].as_ref().unwrap(), &want, s.map.dims);
        println!("pool frame {f}: {checked} voxels below {LIMIT_KT} kT, largest difference {worst:.2e} kT");
        assert!(checked >= 10);
        assert_eq!(bad, 0, "frame {f}: largest difference {worst} kT");
    }
}

fn grid_ils(device: &str, out: &std::path::Path) -> (bool, String) {
    let parm = data("md/amber/tz2.truncoct.parm7.bz2");
    let nc = data("md/amber/tz2.truncoct.nc");
    let o = Command::new(env!("CARGO_BIN_EXE_orbitfield"))
        .args(["grid", "ils"])
        .arg(&parm)
        .arg(&nc)
        .args([
            "--probe",
            "o2",
            "--orient",
            "10",
            "--frames",
            "0:2",
            "--sel",
            "not resname WAT",
            "--subres",
            "2",
            "--spacing",
            "2.0",
            "--device",
            device,
            "-o",
        ])
        .arg(out)
        .env_remove("ORBITFIELD_DEVICES")
        .output()
        .unwrap();
    (o.status.success(), String::from_utf8_lossy(&o.stderr).into_owned())
}

#[test]
fn grid_ils_on_wgpu_equals_the_cpu_engine_on_tz2() {
    let dir = tempfile::tempdir().unwrap();
    let (cpu_out, gpu_out) = (dir.path().join("cpu.dx"), dir.path().join("wgpu.dx"));
    let (ok, err) = grid_ils("wgpu", &gpu_out);
    if !ok && !required() && (err.contains("no wgpu adapter") || err.contains("no usable GPU")) {
        eprintln!("skipping: {err}");
        return;
    }
    assert!(ok, "--device wgpu: {err}");
    println!("{err}");
    assert!(err.contains("wgpu:"), "the frames ran on: {err}");
    let (ok, err) = grid_ils("cpu", &cpu_out);
    assert!(ok, "--device cpu: {err}");
    let read = |p: &std::path::Path| orbitfield::io::dx::read(p, &std::fs::read(p).unwrap()).unwrap();
    let (want, got) = (read(&cpu_out), read(&gpu_out));
    assert_eq!(want.lattice.dims, got.lattice.dims);
    let (mut checked, mut worst) = (0, 0.0f64);
    for (g, w) in got.values.iter().zip(&want.values) {
        if f64::from(*w) < LIMIT_KT {
            checked += 1;
            worst = worst.max((f64::from(*g) - f64::from(*w)).abs());
        }
    }
    println!("grid ils: {checked} voxels below {LIMIT_KT} kT, largest difference {worst:.2e} kT");
    assert!(checked >= 50, "{checked}");
    assert!(worst <= TOL_KT, "{worst} kT");
}

/// tz2 with its water's Lennard-Jones terms (every sample point sums about a thousand atoms): the
/// wgpu engine against the CPU engine (itself held to the reference in `tests/ils.rs`).
#[test]
fn tz2_in_water_equals_the_cpu_engine() {
    let Some(gpu) = engine("ILS tz2 in water") else {
        return;
    };
    let mut system = orbitfield::io::load(&[
        data("md/amber/tz2.truncoct.parm7.bz2"),
        data("md/amber/tz2.truncoct.nc"),
    ])
    .unwrap();
    let files = [data("md/amber/tz2.truncoct.parm7.bz2")];
    let lj = orbitfield::io::ils_params::system_lj(&files, &system.structure, &[], false, None).unwrap();
    let mut state = seed();
    let n_frames = system.trajectory.n_frames();
    let f = (lcg(&mut state) * n_frames as f64) as usize % n_frames;
    let frame = system.trajectory.frame(f).unwrap();
    let pos: Vec<[f64; 3]> = frame.positions_angstrom.iter().map(|p| p.map(f64::from)).collect();
    let protein: Vec<usize> = (0..system.structure.len())
        .filter(|&i| system.structure.resnames[i].as_str() != "WAT")
        .collect();
    let centre = pos[protein[(lcg(&mut state) * protein.len() as f64) as usize % protein.len()]];
    let map = IlsMap {
        origin_angstrom: centre.map(|c| c - 6.5),
        spacing_angstrom: 1.0,
        dims: [14, 14, 14],
    };
    let s = setup(map, 2, "o2", 10, lj.params.clone());
    let placed = place_atoms(&s, &pos, frame.cell.as_ref(), None).unwrap();
    let want = pmf(&orbitfield::compute::cpu::ils::voxel_means(&s, &placed), map.dims);
    let got = pmf(&gpu.ils_voxel_means(&s, &placed).unwrap(), map.dims);
    // Below 60 kT a voxel's few open orientations sum repulsive and attractive terms of hundreds of
    // kT in float32 (about 1e-7 of each): 5e-3 kT there (seed 1795934108945888880 gives 1.6e-3 kT at
    // a voxel of 41 kT; the CUDA kernel's test allows 0.05).
    for (limit, tol) in [(LIMIT_KT, TOL_KT), (60.0, 5e-3)] {
        let (mut checked, mut worst, mut at) = (0, 0.0f64, 0.0f64);
        for (g, w) in got.iter().zip(&want) {
            if *w < limit {
                checked += 1;
                if (g - w).abs() > worst {
                    worst = (g - w).abs();
                    at = *w;
                }
            }
        }
        println!(
            "frame {f}, {} atoms placed: {checked} voxels below {limit} kT, largest difference {worst:.2e} kT (at {at:.2} kT)",
            placed.positions_angstrom.len()
        );
        assert!(worst <= tol, "below {limit} kT: {worst} kT at a voxel of {at} kT");
        if limit > LIMIT_KT {
            assert!(checked >= 10, "only {checked} voxels below {limit} kT");
        }
    }
    assert!(got.iter().all(|v| v.is_finite() && *v <= 87.0));
}

/// A frame the wgpu engine refuses (a probe of 17 atoms, over its limit of 16) is computed by the CPU
/// engine on the same worker, with a note naming the frame, and equals the reference.
#[test]
fn a_frame_the_wgpu_engine_refuses_goes_to_the_cpu_with_a_note() {
    let xe = Probe::builtin("xe").unwrap();
    let atoms = (0..17)
        .map(|i| {
            let mut a = xe.atoms[0];
            a.offset_angstrom = [0.0, 0.0, 0.3 * f64::from(i) - 2.4];
            a
        })
        .collect();
    let probe = Probe {
        name: "chain".into(),
        atoms,
    };
    let map = IlsMap {
        origin_angstrom: [0.0; 3],
        spacing_angstrom: 1.0,
        dims: [3, 3, 2],
    };
    let s = IlsSetup {
        map,
        subres: 1,
        cutoff_angstrom: 8.0,
        max_energy_kt: 87.0,
        temperature_kelvin: 300.0,
        orientations: Orientations::new(&probe, 4, 1),
        probe,
        atom_lj: vec![LjParams::new(0.1, 1.9)],
    };
    let placed = place_atoms(&s, &[[6.0, 1.0, 0.5]], None, None).unwrap();
    let s = Arc::new(s);
    let workers = IlsWorkers::with_devices(DeviceChoice::Wgpu, None, s.clone());
    if !workers.has_gpu() {
        assert!(!required(), "no wgpu worker: {:?}", workers.notes());
        eprintln!("skipping: {:?}", workers.notes());
        return;
    }
    let mut got = None;
    let mut take = |d: orbitfield::jobs::ils::IlsDone| -> Result<(), String> {
        assert_eq!(d.engine, "cpu");
        let note = d.note.unwrap_or_default();
        assert!(
            note.starts_with("frame 7: the GPU failed") && note.contains("16"),
            "{note}"
        );
        got = Some(d.result?);
        Ok(())
    };
    workers.submit_blocking(7, Arc::new(placed.clone()), &mut take).unwrap();
    workers.drain(&mut take).unwrap();
    let want = reference_voxel_means(&s, &placed);
    for (g, w) in got.unwrap().iter().zip(&want) {
        // The CPU engine's exclusion moves a voxel by less than exp(-117) of the cap's occupancy.
        assert!((g - w).abs() <= 1e-9 * w.abs() + 1e-80, "{g} vs {w}");
    }
}
