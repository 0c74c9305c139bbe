//! Implicit ligand sampling against independent references: the analytic Lennard-Jones energy of one
//! atom and a Xe probe (one and two frames), the orientation average of O2 against a dense quadrature,
//! periodic images against explicitly replicated atoms, the AMBER parameters against the published
//! TIP3P values, and a real trajectory (tz2 in a truncated octahedron, AMBER) where the CPU engine
//! and the CUDA kernel (when a device is present; skipped with the reason otherwise, a failure under
//! `ORBITFIELD_REQUIRE_CUDA=1`) equal the float64 reference on fresh random frames. Bad input gives
//! one clear message each (`grid ils` on the command line).

// Tests may unwrap: a panic is a failed test (house rules).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use orbitfield::compute::cpu::ils::{reference_voxel_means, voxel_means};
use orbitfield::compute::ils::{IlsSetup, PlacedAtoms, place_atoms};
use orbitfield::model::UnitCell;
use orbitfield::model::ils::{DEFAULT_ORIENTATIONS, IlsMap, OccupancySums, Orientations};
use orbitfield::model::lj::{LjParams, Probe};
use std::path::PathBuf;
use std::process::Command;

#[path = "common/cuda_device.rs"]
mod cuda_device;
#[path = "common/rdf_cases.rs"]
mod rdf_cases;
use rdf_cases::{clock_seed, lcg};

/// kT at 300 K in kcal/mol from R = 1.987204259e-3 kcal/(mol K) (CODATA 2018), written out here.
const KT_300: f64 = 1.987_204_259e-3 * 300.0;

fn data(path: &str) -> PathBuf {
    let root = std::env::var_os("ORBITFIELD_TEST_ROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    root.join("tests/data").join(path)
}

fn setup(map: IlsMap, subres: usize, probe: Probe, orient: usize, atom_lj: Vec<LjParams>) -> IlsSetup {
    let orientations = Orientations::new(&probe, orient, subres);
    IlsSetup {
        map,
        subres,
        cutoff_angstrom: 10.0,
        max_energy_kt: 87.0,
        temperature_kelvin: 300.0,
        probe,
        orientations,
        atom_lj,
    }
}

fn pmf(sums: &OccupancySums) -> Vec<f64> {
    sums.pmf_kt(87.0)
}

/// The analytic energy (kT) of a Xe probe at `x` from one atom `a` with parameters `p`.
fn xe_energy_kt(x: [f64; 3], a: [f64; 3], p: LjParams) -> f64 {
    let r = ((x[0] - a[0]).powi(2) + (x[1] - a[1]).powi(2) + (x[2] - a[2]).powi(2)).sqrt();
    if r >= 10.0 {
        return 0.0;
    }
    let eps = (0.494 * p.eps_kcal_per_mol).sqrt();
    let rm = 2.24 + p.rmin_half_angstrom;
    eps * ((rm / r).powi(12) - 2.0 * (rm / r).powi(6)) / KT_300
}

fn engines(s: &IlsSetup, placed: &PlacedAtoms) -> Vec<(&'static str, Vec<f64>)> {
    // The viewer's progress within a frame: the CPU engine reports every row of voxels once.
    let rows = std::sync::atomic::AtomicUsize::new(0);
    let counted = orbitfield::compute::cpu::ils::voxel_means_counting(
        s,
        placed,
        &|| {
            rows.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        },
        &|| false,
    );
    let all_rows = s.map.dims[1] * s.map.dims[2];
    assert_eq!(rows.into_inner(), all_rows, "rows of voxels reported");
    // Told to stop after three rows, it begins no more rows than the threads had begun by then.
    let rows = std::sync::atomic::AtomicUsize::new(0);
    orbitfield::compute::cpu::ils::voxel_means_counting(
        s,
        placed,
        &|| {
            rows.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        },
        &|| rows.load(std::sync::atomic::Ordering::Relaxed) >= 3,
    );
    let done = rows.into_inner();
    let threads = rayon::current_num_threads();
    assert!(
        done < all_rows && done <= 3 + threads,
        "{done} of {all_rows} rows after the stop"
    );
    let mut out = vec![
        ("reference", reference_voxel_means(s, placed)),
        ("cpu engine", voxel_means(s, placed)),
        ("cpu engine reporting its rows", counted),
    ];
    if let Some(gpu) = cuda_device::device() {
        out.push(("cuda", gpu.ils_voxel_means(s, placed).unwrap()));
    }
    out
}

#[test]
fn one_atom_and_xe_is_the_analytic_energy_for_one_and_two_frames() {
    let p = LjParams::new(-0.055, 2.175);
    let map = IlsMap {
        origin_angstrom: [-4.0, -4.5, -3.5],
        spacing_angstrom: 0.75,
        dims: [12, 13, 10],
    };
    let s = setup(map, 1, Probe::builtin("xe").unwrap(), 1, vec![p]);
    let frames = [[0.31, -0.22, 0.13], [1.4, 0.9, -0.6]];
    let mut per_engine: Vec<(&str, OccupancySums)> = Vec::new();
    for (f, a) in frames.iter().enumerate() {
        let placed = place_atoms(&s, &[*a], None, None).unwrap();
        for (name, v) in engines(&s, &placed) {
            if f == 0 {
                let mut sums = OccupancySums::new(map.dims);
                sums.add_frame(&v).unwrap();
                // One frame: PMF = U/kT where below the cap.
                let got = pmf(&sums);
                for k in 0..map.dims[2] {
                    for j in 0..map.dims[1] {
                        for i in 0..map.dims[0] {
                            let x = map.centre_angstrom(i, j, k);
                            let want = xe_energy_kt(x, *a, p);
                            let g = got[i + map.dims[0] * (j + map.dims[1] * k)];
                            let tol = if name == "cuda" { 1e-4 } else { 1e-9 };
                            if want < 80.0 {
                                assert!(
                                    (g - want).abs() <= tol * want.abs().max(1.0),
                                    "{name} at {x:?}: {g} vs {want}"
                                );
                            } else if want > 87.0 {
                                assert!(g > 80.0, "{name} at {x:?}: {g} vs {want} (above the cap)");
                            }
                        }
                    }
                }
                per_engine.push((name, sums));
            } else {
                let sums = &mut per_engine.iter_mut().find(|(n, _)| *n == name).unwrap().1;
                sums.add_frame(&v).unwrap();
            }
        }
    }
    // Two frames: -ln of the mean of exp(-U/kT).
    for (name, sums) in &per_engine {
        assert_eq!(sums.frames, 2);
        let got = pmf(sums);
        let mut checked = 0;
        for k in 0..map.dims[2] {
            for j in 0..map.dims[1] {
                for i in 0..map.dims[0] {
                    let x = map.centre_angstrom(i, j, k);
                    let mean = frames.iter().map(|a| (-xe_energy_kt(x, *a, p)).exp()).sum::<f64>() / 2.0;
                    let want = -mean.ln();
                    if want < 20.0 {
                        let g = got[i + map.dims[0] * (j + map.dims[1] * k)];
                        let tol = if *name == "cuda" { 1e-4 } else { 1e-9 };
                        assert!(
                            (g - want).abs() <= tol * want.abs().max(1.0),
                            "{name} at {x:?}: {g} vs {want}"
                        );
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 500, "{checked} voxels checked");
    }
}

/// A cavity: carbon-like atoms about 2 A apart on a sphere of radius 5.5 A.
fn cavity_atoms() -> Vec<[f64; 3]> {
    let mut out = Vec::new();
    let n = 90;
    let golden = std::f64::consts::PI * (3.0 - 5f64.sqrt());
    for i in 0..n {
        let z = 1.0 - (2.0 * i as f64 + 1.0) / n as f64;
        let r = (1.0 - z * z).sqrt();
        let phi = golden * i as f64;
        out.push([5.5 * r * phi.cos(), 5.5 * r * phi.sin(), 5.5 * z]);
    }
    out
}

#[test]
fn o2_orientation_average_converges_to_a_dense_quadrature() {
    let atoms = cavity_atoms();
    let p = LjParams::new(-0.055, 2.175);
    let map = IlsMap {
        origin_angstrom: [-3.0; 3],
        spacing_angstrom: 1.0,
        dims: [7, 7, 7],
    };
    let o2 = Probe::builtin("o2").unwrap();
    let run = |n: usize| {
        let s = setup(map, 3, o2.clone(), n, vec![p; atoms.len()]);
        let placed = place_atoms(&s, &atoms, None, None).unwrap();
        let mut sums = OccupancySums::new(map.dims);
        sums.add_frame(&voxel_means(&s, &placed)).unwrap();
        pmf(&sums)
    };
    let dense = run(2000);
    let worst = |n: usize| {
        let v = run(n);
        v.iter()
            .zip(&dense)
            .filter(|(_, d)| **d < 5.0)
            .map(|(a, d)| (a - d).abs())
            .fold(0.0, f64::max)
    };
    let counted = dense.iter().filter(|d| **d < 5.0).count();
    assert!(counted > 50, "{counted} voxels below 5 kT");
    let errors: Vec<(usize, f64)> = [2, 10, 30, 60, DEFAULT_ORIENTATIONS]
        .iter()
        .map(|&n| (n, worst(n)))
        .collect();
    println!("largest |PMF(n) - PMF(2000)| where PMF < 5 kT: {errors:?}");
    let default = errors.iter().find(|(n, _)| *n == DEFAULT_ORIENTATIONS).unwrap().1;
    assert!(
        default <= 0.05,
        "default {DEFAULT_ORIENTATIONS} orientations: {default} kT from the quadrature"
    );
    assert!(errors[0].1 > default && errors[2].1 > default, "{errors:?}");
}

#[test]
fn periodic_images_equal_explicitly_replicated_atoms() {
    let p = LjParams::new(-0.1521, 1.7682);
    let cell = UnitCell::new([9.0, 9.5, 10.0], [80.0, 100.0, 75.0]);
    let m = cell.matrix_angstrom();
    let atoms = [[0.5, 1.0, 2.0], [3.0, -1.0, 4.0], [6.0, 5.0, 1.0]];
    let map = IlsMap {
        origin_angstrom: [-1.0, -1.0, -1.0],
        spacing_angstrom: 1.0,
        dims: [6, 6, 6],
    };
    let s = setup(map, 2, Probe::builtin("co").unwrap(), 6, vec![p; 3]);
    let periodic = place_atoms(&s, &atoms, Some(&cell), None).unwrap();
    // Replicas over a generous range, without a box, against the same reference.
    let mut replicated = Vec::new();
    let mut lj = Vec::new();
    for a in &atoms {
        for na in -5i32..=5 {
            for nb in -5i32..=5 {
                for nc in -5i32..=5 {
                    let q = [0, 1, 2].map(|k| a[k] + na as f64 * m[0][k] + nb as f64 * m[1][k] + nc as f64 * m[2][k]);
                    replicated.push(q);
                    lj.push(p);
                }
            }
        }
    }
    let s2 = IlsSetup {
        atom_lj: lj,
        ..s.clone()
    };
    let explicit = place_atoms(&s2, &replicated, None, None).unwrap();
    let a = reference_voxel_means(&s, &periodic);
    let b = reference_voxel_means(&s2, &explicit);
    for (x, y) in a.iter().zip(&b) {
        assert!((x - y).abs() <= 1e-12 * y.abs().max(1e-300), "{x} vs {y}");
    }
    assert!(periodic.positions_angstrom.len() > 3 * 20);
}

fn tz2() -> orbitfield::io::System {
    orbitfield::io::load(&[
        data("md/amber/tz2.truncoct.parm7.bz2"),
        data("md/amber/tz2.truncoct.nc"),
    ])
    .unwrap()
}

#[test]
fn amber_parameters_are_the_published_tip3p_values() {
    let system = tz2();
    let files = [data("md/amber/tz2.truncoct.parm7.bz2")];
    let lj = orbitfield::io::ils_params::system_lj(&files, &system.structure, &[], false, None).unwrap();
    assert!(lj.note.is_none());
    let ow = (0..system.structure.len())
        .find(|&i| system.structure.resnames[i].as_str() == "WAT" && system.structure.names[i].as_str() == "O")
        .unwrap();
    let hw = ow + 1;
    // TIP3P (Jorgensen et al. 1983; AMBER's OW): eps 0.1520 kcal/mol, rmin/2 1.7683 A; HW without LJ.
    let o = lj.params[ow];
    assert!((o.eps_kcal_per_mol - 0.1520).abs() < 1e-4, "{o:?}");
    assert!((o.rmin_half_angstrom - 1.7683).abs() < 1e-4, "{o:?}");
    assert_eq!(lj.params[hw].eps_kcal_per_mol, 0.0);
}

#[test]
fn real_trajectory_engines_equal_the_reference_on_random_frames() {
    let mut system = tz2();
    let files = [data("md/amber/tz2.truncoct.parm7.bz2")];
    let lj = orbitfield::io::ils_params::system_lj(&files, &system.structure, &[], false, None).unwrap();
    let n_frames = system.trajectory.n_frames();
    let mut seed = clock_seed();
    let picks: Vec<usize> = (0..2)
        .map(|_| (lcg(&mut seed) * n_frames as f64) as usize % n_frames)
        .collect();
    println!("frames {picks:?}");
    let first = system.trajectory.frame(picks[0]).unwrap();
    // A map around a random protein atom (the peptide is the first residues; waters follow).
    let protein: Vec<usize> = (0..system.structure.len())
        .filter(|&i| system.structure.resnames[i].as_str() != "WAT")
        .collect();
    let centre = first.positions_angstrom[protein[(lcg(&mut seed) * protein.len() as f64) as usize % protein.len()]];
    let map = IlsMap {
        origin_angstrom: centre.map(|c| f64::from(c) - 3.5),
        spacing_angstrom: 1.0,
        dims: [8, 8, 8],
    };
    // The peptide's own parameters; the water's Lennard-Jones terms are left out, so that the map has
    // voxels below 10 kT on every frame (in full water an O2 probe rarely finds one in an 8 A cube,
    // and the comparison below would check nothing).
    let params: Vec<_> = (0..system.structure.len())
        .map(|i| {
            let mut p = lj.params[i];
            if system.structure.resnames[i].as_str() == "WAT" {
                p.eps_kcal_per_mol = 0.0;
            }
            p
        })
        .collect();
    let s = setup(map, 2, Probe::builtin("o2").unwrap(), 10, params);
    let mut sums: Vec<(&str, OccupancySums)> = Vec::new();
    for &f in &picks {
        let frame = system.trajectory.frame(f).unwrap();
        assert!(frame.cell.is_some());
        let pos: Vec<[f64; 3]> = frame.positions_angstrom.iter().map(|p| p.map(f64::from)).collect();
        let placed = place_atoms(&s, &pos, frame.cell.as_ref(), None).unwrap();
        for (name, v) in engines(&s, &placed) {
            match sums.iter_mut().find(|(n, _)| *n == name) {
                Some((_, acc)) => acc.add_frame(&v).unwrap(),
                None => {
                    let mut acc = OccupancySums::new(map.dims);
                    acc.add_frame(&v).unwrap();
                    sums.push((name, acc));
                }
            }
        }
    }
    let reference = pmf(&sums[0].1);
    let low = reference.iter().filter(|&&v| v < 10.0).count();
    println!("{low} of {} voxels below 10 kT", reference.len());
    assert!(
        low >= 10,
        "only {low} voxels below 10 kT: the comparison would check little"
    );
    for (name, acc) in &sums[1..] {
        let got = pmf(acc);
        let worst = got
            .iter()
            .zip(&reference)
            .filter(|(_, r)| **r < 10.0)
            .map(|(g, r)| (g - r).abs())
            .fold(0.0, f64::max);
        println!("{name}: largest difference {worst:.3e} kT where PMF < 10 kT");
        assert!(worst <= 1e-4, "{name}: {worst} kT");
    }
}

/// A map of many regions and bricks of the CUDA kernel's kept-point list (the test above fits in one):
/// the CUDA kernel against the CPU engine (itself held to the reference above) on one tz2 frame, with
/// the water's Lennard-Jones terms left out (voxels below 10 kT: within 1e-4 kT) and kept (most points
/// excluded: the same voxels below 60 kT, within 0.05 kT there).
#[test]
fn cuda_equals_the_cpu_engine_on_a_map_of_many_regions() {
    let Some(gpu) = cuda_device::device() else {
        return;
    };
    let mut system = tz2();
    let files = [data("md/amber/tz2.truncoct.parm7.bz2")];
    let lj = orbitfield::io::ils_params::system_lj(&files, &system.structure, &[], false, None).unwrap();
    let frame = system.trajectory.frame(2).unwrap();
    let pos: Vec<[f64; 3]> = frame.positions_angstrom.iter().map(|p| p.map(f64::from)).collect();
    let protein: Vec<usize> = (0..system.structure.len())
        .filter(|&i| system.structure.resnames[i].as_str() != "WAT")
        .collect();
    let mut centre = [0.0; 3];
    for &i in &protein {
        for k in 0..3 {
            centre[k] += pos[i][k] / protein.len() as f64;
        }
    }
    let map = IlsMap {
        origin_angstrom: [centre[0] - 13.0, centre[1] - 11.0, centre[2] - 9.5],
        spacing_angstrom: 1.0,
        dims: [27, 23, 20],
    };
    for water in [false, true] {
        let params: Vec<_> = (0..system.structure.len())
            .map(|i| {
                let mut p = lj.params[i];
                if !water && system.structure.resnames[i].as_str() == "WAT" {
                    p.eps_kcal_per_mol = 0.0;
                }
                p
            })
            .collect();
        let s = setup(map, 2, Probe::builtin("o2").unwrap(), 10, params);
        let placed = place_atoms(&s, &pos, frame.cell.as_ref(), None).unwrap();
        let mut cpu = OccupancySums::new(map.dims);
        cpu.add_frame(&voxel_means(&s, &placed)).unwrap();
        let mut cuda = OccupancySums::new(map.dims);
        cuda.add_frame(&gpu.ils_voxel_means(&s, &placed).unwrap()).unwrap();
        let (want, got) = (pmf(&cpu), pmf(&cuda));
        let (limit, tol) = if water { (60.0, 0.05) } else { (10.0, 1e-4) };
        let mut checked = 0;
        let mut worst: f64 = 0.0;
        for (g, w) in got.iter().zip(&want) {
            if *w < limit || *g < limit {
                checked += 1;
                worst = worst.max((g - w).abs());
            }
        }
        println!("water {water}: {checked} voxels below {limit} kT, largest difference {worst:.3e} kT");
        assert!(checked >= 10, "only {checked} voxels below {limit} kT");
        assert!(worst <= tol, "water {water}: {worst} kT");
    }
}

#[test]
fn kernel_source_compiles_with_nvrtc() {
    use orbitfield::compute::cuda;
    if let Err(why) = cuda::libraries_present() {
        let required = std::env::var("ORBITFIELD_REQUIRE_CUDA")
            .map(|v| v == "1")
            .unwrap_or(false);
        assert!(!required, "ORBITFIELD_REQUIRE_CUDA=1 but {why}");
        println!("skipped: {why}");
        return;
    }
    let ptx = cuda::compile_ptx(cuda::ils::ILS_SRC, "compute_75").unwrap();
    for name in [
        "ils_bound",
        "ils_scan",
        "ils_points_k1_g1",
        "ils_points_k16_g1",
        "ils_points_k13_g4",
        "ils_voxels",
    ] {
        assert!(ptx.contains(name), "{name} missing from the PTX");
    }
}

fn grid_ils(args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_orbitfield"))
        .arg("grid")
        .arg("ils")
        .args(args)
        .env_remove("ORBITFIELD_DEVICES")
        .output()
        .unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn bad_input_gets_one_clear_message_each() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("pmf.dx");
    let out = out.to_str().unwrap();
    let psf = data("md/adk.psf");
    let dcd = data("md/adk_dims.dcd");
    let (psf, dcd) = (psf.to_str().unwrap(), dcd.to_str().unwrap());
    // A topology with atom types but no Lennard-Jones parameters, and no --params.
    let (ok, err) = grid_ils(&[psf, dcd, "--probe", "xe", "--frames", "0:1", "-o", out]);
    assert!(!ok);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("adk.psf") && err.contains("--params"), "{err}");
    // A probe file with a bad line.
    let probe = dir.path().join("bad.xyz");
    std::fs::write(&probe, "2\nbroken\nO 0 0 0 -0.12 1.70\nO 0 0 1.2 -0.12\n").unwrap();
    let (ok, err) = grid_ils(&[psf, dcd, "--probe", probe.to_str().unwrap(), "--lj-elements", "-o", out]);
    assert!(!ok);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("bad.xyz:4:") && err.contains("6 fields"), "{err}");
    // An empty selection.
    let (ok, err) = grid_ils(&[
        psf,
        dcd,
        "--probe",
        "xe",
        "--lj-elements",
        "--sel",
        "resname XYZ",
        "-o",
        out,
    ]);
    assert!(!ok);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("--sel 'resname XYZ' selects no atoms"), "{err}");
}

#[test]
fn grid_ils_writes_the_map_of_the_library_with_alignment() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("pmf.dx");
    let parm = data("md/amber/tz2.truncoct.parm7.bz2");
    let nc = data("md/amber/tz2.truncoct.nc");
    let (ok, err) = grid_ils(&[
        parm.to_str().unwrap(),
        nc.to_str().unwrap(),
        "--probe",
        "xe",
        "--frames",
        "0:3",
        "--sel",
        "not resname WAT",
        "--align",
        "name CA",
        "--subres",
        "1",
        "--spacing",
        "1.5",
        "--device",
        "cpu",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    let bytes = std::fs::read(&out).unwrap();
    let grid = orbitfield::io::dx::read(&out, &bytes).unwrap();
    // The same map from the library: fit frames 1 and 2 onto frame 0 by the CA atoms (Kabsch, from
    // the library's superposition), engine = float64 reference.
    let mut system = tz2();
    let files = [parm.clone()];
    let lj = orbitfield::io::ils_params::system_lj(&files, &system.structure, &[], false, None).unwrap();
    let sel: Vec<usize> = (0..system.structure.len())
        .filter(|&i| system.structure.resnames[i].as_str() != "WAT")
        .collect();
    let ca: Vec<usize> = sel
        .iter()
        .copied()
        .filter(|&i| system.structure.names[i].as_str() == "CA")
        .collect();
    let l = grid.lattice;
    let map = IlsMap {
        origin_angstrom: l.origin_angstrom(),
        spacing_angstrom: 1.5,
        dims: l.dims,
    };
    let s = setup(
        map,
        1,
        Probe::builtin("xe").unwrap(),
        1,
        sel.iter().map(|&i| lj.params[i]).collect(),
    );
    let f0 = system.trajectory.frame(0).unwrap();
    let pick = |f: &orbitfield::model::Frame, idx: &[usize]| -> Vec<[f64; 3]> {
        idx.iter().map(|&i| f.positions_angstrom[i].map(f64::from)).collect()
    };
    let reference_ca = pick(&f0, &ca);
    let mut sums = OccupancySums::new(map.dims);
    for f in 0..3 {
        let frame = system.trajectory.frame(f).unwrap();
        let (t, _) = orbitfield::analysis::qm_region::superpose(&pick(&frame, &ca), &reference_ca).unwrap();
        let rigid = orbitfield::model::ils::Rigid {
            rotation: t.rotation,
            translation_angstrom: t.translation_bohr,
        };
        let placed = place_atoms(&s, &pick(&frame, &sel), frame.cell.as_ref(), Some(&rigid)).unwrap();
        sums.add_frame(&reference_voxel_means(&s, &placed)).unwrap();
    }
    let want = pmf(&sums);
    let mut low = 0;
    for (g, w) in grid.values.iter().zip(&want) {
        if *w < 10.0 {
            low += 1;
            // The file holds f32 values.
            assert!((f64::from(*g) - w).abs() < 1e-4, "{g} vs {w}");
        }
    }
    assert!(low > 50, "{low}");
}

/// The CUDA engine's upload keeps each position as the float nearest it plus the float of the
/// remainder: together within 1e-10 A of the float64 position relative to the first sample point, on
/// a map of 120 A (where one float alone is off by up to 4e-6 A), and the sample spacing likewise.
#[test]
fn device_atoms_keep_positions_to_1e_10_angstrom_on_a_large_map() {
    use orbitfield::compute::cuda::ils::DeviceAtoms;
    let map = IlsMap {
        origin_angstrom: [-17.3, 4.1, 250.7],
        spacing_angstrom: 1.0,
        dims: [120, 100, 90],
    };
    let mut seed = clock_seed();
    let atoms: Vec<[f64; 3]> = (0..300)
        .map(|_| [0, 1, 2].map(|k| map.origin_angstrom[k] + lcg(&mut seed) * map.dims[k] as f64))
        .collect();
    let p = LjParams::new(-0.1, 1.9);
    let s = setup(map, 3, Probe::builtin("o2").unwrap(), 10, vec![p; atoms.len()]);
    let placed = place_atoms(&s, &atoms, None, None).unwrap();
    let dev = DeviceAtoms::new(&s, &placed).unwrap();
    let step = 1.0 / 3.0;
    let first = [0, 1, 2].map(|k| map.origin_angstrom[k] - 0.5 + 0.5 * step);
    let a = dev.args;
    assert!((f64::from(a.step) + f64::from(a.step_lo) - step).abs() < 1e-15);
    assert_eq!(dev.atoms.len(), atoms.len());
    let mut worst_split: f64 = 0.0;
    let mut worst_float: f64 = 0.0;
    for (hi, lo) in dev.atoms.iter().zip(&dev.lows) {
        let got = [0, 1, 2].map(|k| f64::from(hi[k]) + f64::from(lo[k]));
        // Its atom: the nearest placed position.
        let want = atoms
            .iter()
            .map(|q| [0, 1, 2].map(|k| q[k] - first[k]))
            .min_by(|x, y| {
                let d = |q: &[f64; 3]| (0..3).map(|k| (q[k] - got[k]).powi(2)).sum::<f64>();
                d(x).total_cmp(&d(y))
            })
            .unwrap();
        for k in 0..3 {
            worst_split = worst_split.max((got[k] - want[k]).abs());
            worst_float = worst_float.max((f64::from(hi[k]) - want[k]).abs());
        }
        assert!((f64::from(lo[3]) - 1.9).abs() < 1e-6, "rmin/2 {}", lo[3]);
    }
    println!("largest error: {worst_split:.2e} A (one float: {worst_float:.2e} A)");
    assert!(worst_split < 1e-10, "{worst_split}");
    assert!(
        worst_float > 1e-7,
        "the map is large enough that one float rounds: {worst_float}"
    );
}

/// O2, CO and NO have their two atoms on a line through the probe's centre in every orientation (the
/// CUDA bound pass takes an atom's two terms together); a bent three-atom probe and Xe do not.
#[test]
fn two_atom_probes_are_bounded_jointly() {
    use orbitfield::compute::cuda::ils::linear_pair;
    let map = IlsMap {
        origin_angstrom: [0.0; 3],
        spacing_angstrom: 1.0,
        dims: [2, 2, 2],
    };
    let p = LjParams::new(-0.1, 1.9);
    for name in ["o2", "co", "no"] {
        for subres in [1, 3] {
            let s = setup(
                map,
                subres,
                Probe::builtin(name).unwrap(),
                DEFAULT_ORIENTATIONS,
                vec![p],
            );
            assert!(linear_pair(&s), "{name}, subres {subres}");
        }
    }
    let water = Probe::parse_xyz(
        "water.xyz",
        "3\nbent\nO 0 0 0 -0.15 1.77\nH 0.96 0 0 -0.04 0.2\nH -0.24 0.93 0 -0.04 0.2\n",
    )
    .unwrap();
    assert!(!linear_pair(&setup(map, 2, water, 30, vec![p])));
    assert!(!linear_pair(&setup(map, 2, Probe::builtin("xe").unwrap(), 1, vec![p])));
}

/// O2 close to one atom, on a fine map, up to the cap: the CUDA kernel's exclusion (with the two
/// probe atoms bounded together) leaves out no point below the cap, and the values equal the float64
/// reference (the reference excludes nothing) within 1e-5 relative below 80 kT.
#[test]
fn cuda_o2_near_one_atom_equals_the_reference_up_to_the_cap() {
    let Some(gpu) = cuda_device::device() else {
        return;
    };
    let p = LjParams::new(-0.2, 2.0);
    let map = IlsMap {
        origin_angstrom: [-3.1, -2.9, -3.05],
        spacing_angstrom: 0.25,
        dims: [25, 24, 26],
    };
    let mut seed = clock_seed();
    let atom = [0, 1, 2].map(|_| 0.4 * lcg(&mut seed) - 0.2);
    let s = setup(map, 1, Probe::builtin("o2").unwrap(), 10, vec![p]);
    let placed = place_atoms(&s, &[atom], None, None).unwrap();
    let mut want = OccupancySums::new(map.dims);
    want.add_frame(&reference_voxel_means(&s, &placed)).unwrap();
    let mut got = OccupancySums::new(map.dims);
    got.add_frame(&gpu.ils_voxel_means(&s, &placed).unwrap()).unwrap();
    let (want, got) = (pmf(&want), pmf(&got));
    let mut checked = 0;
    let mut worst: f64 = 0.0;
    for (g, w) in got.iter().zip(&want) {
        if *w < 80.0 {
            checked += 1;
            worst = worst.max((g - w).abs() / w.abs().max(1.0));
        } else if *w >= 87.0 {
            assert!(*g > 80.0, "{g} vs {w} (the cap)");
        }
    }
    let repulsive = want.iter().filter(|w| (20.0..80.0).contains(*w)).count();
    println!("{checked} voxels below 80 kT ({repulsive} of them above 20 kT); largest relative difference {worst:.2e}");
    assert!(repulsive > 100, "{repulsive}");
    assert!(worst <= 1e-5, "{worst}");
}
