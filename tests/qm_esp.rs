//! The electrostatic potential of wavefunctions (`esp` on wavefunction inputs) against PySCF's
//! `cubegen.mep` integrals (water and threonine 6-31G* spherical and Cartesian, N2 cc-pVQZ with g
//! functions, O2 UHF cc-pVTZ), at points and on lattices, on the CPU and on a CUDA device; the
//! far-field limit of the dipole; effective nuclear charges; a file's own SCF density.
//!
//! GPU tests need a CUDA device; without one they print why and pass, unless
//! `ORBITFIELD_REQUIRE_CUDA=1` is set. The kernel source is compiled by NVRTC whenever that library
//! can be loaded (no device needed).

// Tests may unwrap: a panic is a failed test (house rules).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use orbitfield::compute::cpu::{self, CpuEngine};
use orbitfield::compute::cuda;
use orbitfield::compute::qm_esp::PreparedQmEsp;
use orbitfield::compute::{Field, FieldInput, FieldJob, SlabEngine};
use orbitfield::io::{self, fchk, molden};
use orbitfield::model::units::bohr_from_angstrom3;
use orbitfield::model::{Lattice, Wavefunction};
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[path = "common/cuda_device.rs"]
mod cuda_device;
use cuda_device::device;

/// Relative tolerance against PySCF at points at least 1 Angstrom from every nucleus.
const TOL: f64 = 1e-6;

fn root() -> PathBuf {
    // ORBITFIELD_TEST_ROOT: where the repository's data lies when the test runs on another machine.
    std::env::var_os("ORBITFIELD_TEST_ROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf())
}

fn data(rel: &str) -> PathBuf {
    root().join("tests/data/qm").join(rel)
}

fn text(path: &Path) -> String {
    String::from_utf8(io::read_bytes(path).unwrap()).unwrap()
}

fn load(name: &str) -> Arc<Wavefunction> {
    let path = data(&format!("{name}.molden.gz"));
    let m = molden::read(&path, &io::read_bytes(&path).unwrap()).unwrap();
    Arc::new(m.wavefunctions.into_iter().next().unwrap())
}

fn header_numbers(t: &str, key: &str) -> Vec<f64> {
    let line = t
        .lines()
        .find(|l| l.starts_with(key))
        .unwrap_or_else(|| panic!("no {key}"));
    line[key.len()..]
        .split_whitespace()
        .map(|x| x.parse().unwrap())
        .collect()
}

struct PointReference {
    points_bohr: Vec<[f64; 3]>,
    values: Vec<f64>,
    dipole_au: [f64; 3],
    nuclear_charges: Vec<f64>,
}

fn points_reference(name: &str) -> PointReference {
    let t = text(&data(&format!("esp/{name}.esp.txt.gz")));
    let d = header_numbers(&t, "# dipole_au:");
    let mut points_bohr = Vec::new();
    let mut values = Vec::new();
    for l in t.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
        let v: Vec<f64> = l.split_whitespace().map(|x| x.parse().unwrap()).collect();
        points_bohr.push(bohr_from_angstrom3([v[0], v[1], v[2]]));
        values.push(v[3]);
    }
    assert!(values.len() >= 300, "{name}: {} points", values.len());
    PointReference {
        points_bohr,
        values,
        dipole_au: [d[0], d[1], d[2]],
        nuclear_charges: header_numbers(&t, "# nuclear_charges:"),
    }
}

struct LatticeReference {
    lattice: Lattice,
    values: Vec<f64>,
}

fn lattice_reference(name: &str) -> LatticeReference {
    let t = text(&data(&format!("esp/{name}.esp_lattice.txt.gz")));
    let o = header_numbers(&t, "# origin_bohr:");
    let s = header_numbers(&t, "# steps_bohr:");
    let d = header_numbers(&t, "# dims:");
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
    LatticeReference { lattice, values }
}

fn min_distance_bohr(wf: &Wavefunction, p: [f64; 3]) -> f64 {
    wf.atoms
        .iter()
        .map(|a| {
            let r = a.position_bohr;
            ((r[0] - p[0]).powi(2) + (r[1] - p[1]).powi(2) + (r[2] - p[2]).powi(2)).sqrt()
        })
        .fold(f64::INFINITY, f64::min)
}

/// Worst relative error of `got` against `want`; every pair must be within `tol`.
fn worst_relative(label: &str, got: &[f64], want: &[f64], tol: f64) -> f64 {
    let mut worst: f64 = 0.0;
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let rel = (g - w).abs() / w.abs();
        assert!(
            rel <= tol,
            "{label}: point {i}: {g:.15e} vs {w:.15e} (relative {rel:.2e})"
        );
        worst = worst.max(rel);
    }
    println!("{label}: {} points, worst relative error {worst:.2e}", got.len());
    worst
}

/// The CPU engine at the reference points, and its lattice on the reference lattice.
fn check_cpu(name: &str) -> Arc<Wavefunction> {
    let wf = load(name);
    let r = points_reference(name);
    let charges: Vec<f64> = wf.atoms.iter().map(|a| a.nuclear_charge).collect();
    assert_eq!(charges, r.nuclear_charges, "{name}: nuclear charges");
    for p in &r.points_bohr {
        assert!(
            min_distance_bohr(&wf, *p) >= 1.88,
            "{name}: a reference point is near a nucleus"
        );
    }
    let input = FieldInput::Wavefunction(wf.clone());
    let got = cpu::evaluate_points(&Field::QmPotential, &input, &r.points_bohr).unwrap();
    worst_relative(&format!("{name} cpu points"), &got, &r.values, TOL);
    let lr = lattice_reference(name);
    let job = FieldJob {
        field: Field::QmPotential,
        lattice: lr.lattice,
        input,
    };
    let values = run(&CpuEngine, &job);
    compare_lattice(&format!("{name} cpu lattice"), &wf, &lr, &values);
    wf
}

/// Lattice values (f32) against the PySCF lattice at points >= 1 Angstrom from the nuclei; the f32
/// rounding adds 6e-8 relative.
fn compare_lattice(label: &str, wf: &Wavefunction, lr: &LatticeReference, values: &[f32]) {
    let [nx, ny, nz] = lr.lattice.dims;
    let mut got = Vec::new();
    let mut want = Vec::new();
    for k in 0..nz {
        for j in 0..ny {
            for i in 0..nx {
                let idx = i + nx * (j + ny * k);
                if min_distance_bohr(wf, lr.lattice.point_bohr(i, j, k)) >= 1.8897 {
                    got.push(f64::from(values[idx]));
                    want.push(lr.values[idx]);
                }
            }
        }
    }
    assert!(
        got.len() > 600,
        "{label}: only {} lattice points far from the nuclei",
        got.len()
    );
    worst_relative(label, &got, &want, TOL);
}

fn run(engine: &dyn SlabEngine, job: &FieldJob) -> Vec<f32> {
    // Poisoned: every value must be overwritten.
    let mut out = vec![f32::NAN; job.lattice.n_points()];
    // Two slabs, so slab offsets are exercised.
    let nz = job.lattice.dims[2];
    let plane = job.lattice.dims[0] * job.lattice.dims[1];
    let (a, b) = out.split_at_mut(plane * (nz / 2));
    engine.compute_slab(job, 0..nz / 2, a).unwrap();
    engine.compute_slab(job, nz / 2..nz, b).unwrap();
    assert!(out.iter().all(|v| v.is_finite()), "{}: unwritten values", engine.name());
    out
}

#[test]
fn water_spherical_and_cartesian_match_pyscf() {
    check_cpu("water_hf_631gs_sph");
    check_cpu("water_hf_631gs_cart");
}

#[test]
fn threonine_spherical_and_cartesian_match_pyscf() {
    check_cpu("threonine_hf_631gs_sph");
    check_cpu("threonine_hf_631gs_cart");
}

#[test]
fn n2_with_g_functions_matches_pyscf() {
    let s = check_cpu("n2_hf_ccpvqz_sph");
    let c = check_cpu("n2_hf_ccpvqz_cart");
    assert_eq!((s.basis.max_l(), c.basis.max_l()), (4, 4));
}

#[test]
fn o2_unrestricted_matches_pyscf() {
    let wf = check_cpu("o2_uhf_ccpvtz_sph");
    assert_eq!(wf.spin, orbitfield::model::SpinKind::Unrestricted);
}

/// Far from a neutral molecule V(R n) R^2 -> mu . n (the quadrupole adds O(1/R)): the deviation
/// must be small at 10^4 bohr and shrink about tenfold from 10^3 bohr.
#[test]
fn far_field_tends_to_the_dipole_potential() {
    for name in ["water_hf_631gs_sph", "threonine_hf_631gs_cart"] {
        let wf = load(name);
        let r = points_reference(name);
        let mu = r.dipole_au;
        let mu_norm = (mu[0] * mu[0] + mu[1] * mu[1] + mu[2] * mu[2]).sqrt();
        assert!(mu_norm > 0.5, "{name}: |mu| = {mu_norm}");
        let prep = PreparedQmEsp::new(&wf).unwrap();
        let n = wf.atoms.len() as f64;
        let centre: [f64; 3] = std::array::from_fn(|k| wf.atoms.iter().map(|a| a.position_bohr[k]).sum::<f64>() / n);
        let mut seed = 0x00d1_9013u64;
        for _ in 0..12 {
            let mut u = [0.0f64; 3];
            for x in &mut u {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                *x = (seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
            }
            let norm = (u[0] * u[0] + u[1] * u[1] + u[2] * u[2]).sqrt();
            let u = u.map(|x| x / norm);
            let dipole = mu[0] * u[0] + mu[1] * u[1] + mu[2] * u[2];
            let deviation = |big_r: f64| {
                let p: [f64; 3] = std::array::from_fn(|k| centre[k] + big_r * u[k]);
                (prep.value_at(p) * big_r * big_r - dipole).abs() / mu_norm
            };
            let (d3, d4) = (deviation(1e3), deviation(1e4));
            println!("{name}: direction {u:.3?}: deviation {d3:.2e} at 1e3 bohr, {d4:.2e} at 1e4 bohr");
            assert!(
                d4 < 2e-3,
                "{name}: R^2 V differs from mu.n by {d4:.2e} |mu| at 1e4 bohr"
            );
            assert!(d4 < 0.2 * d3 + 1e-6, "{name}: no 1/R approach: {d3:.2e} then {d4:.2e}");
        }
    }
}

/// With pseudopotentials the file gives effective core charges: the potential uses them.
#[test]
fn effective_nuclear_charges_are_used() {
    let wf = load("water_hf_631gs_sph");
    let mut ecp = (*wf).clone();
    ecp.atoms[0].nuclear_charge = 6.0;
    let o = ecp.atoms[0].position_bohr;
    let full = PreparedQmEsp::new(&wf).unwrap();
    let reduced = PreparedQmEsp::new(&ecp).unwrap();
    for p in [[3.0, 1.0, -2.0], [0.5, 4.0, 1.0]] {
        let d = ((p[0] - o[0]).powi(2) + (p[1] - o[1]).powi(2) + (p[2] - o[2]).powi(2)).sqrt();
        let shift = full.value_at(p) - reduced.value_at(p);
        assert!((shift - 2.0 / d).abs() < 1e-12, "{shift} vs {}", 2.0 / d);
    }
}

/// A formatted checkpoint's own SCF density is what the potential integrates; for an SCF
/// wavefunction it agrees with the orbitals' density.
#[test]
fn fchk_scf_density_is_used_and_agrees_with_the_orbitals() {
    let path = data("fchk/nh2_uhf_ccpvtz_sph.fchk.gz");
    let f = fchk::read_full(&path, &io::read_bytes(&path).unwrap()).unwrap();
    let wf = f.wavefunction;
    assert!(wf.scf_density.is_some(), "the reader keeps the Total SCF Density");
    let mut from_orbitals = wf.clone();
    from_orbitals.scf_density = None;
    let a = PreparedQmEsp::new(&wf).unwrap();
    let b = PreparedQmEsp::new(&from_orbitals).unwrap();
    let mut scaled = wf.clone();
    if let Some(d) = scaled.scf_density.as_mut() {
        d.values.iter_mut().for_each(|v| *v *= 0.5);
    }
    let c = PreparedQmEsp::new(&scaled).unwrap();
    for p in [[3.0, 1.0, -2.0], [0.5, 4.0, 1.0], [-2.5, -2.5, 2.0]] {
        let (va, vb, vc) = (a.value_at(p), b.value_at(p), c.value_at(p));
        // The file holds the matrix to 9 digits (5E16.8): the two agree to about 1e-7.
        assert!((va - vb).abs() < 1e-6 * va.abs().max(1e-3), "{va} vs {vb}");
        assert!(
            (va - vc).abs() > 1e-2,
            "the file's density matrix is not used: {va} vs {vc}"
        );
    }
}

/// The lattice engine equals the point evaluator at the same points (any slab split, slanted axes).
#[test]
fn lattice_slabs_equal_point_values() {
    let wf = load("water_hf_631gs_cart");
    let lattice = Lattice {
        origin_bohr: [-4.0, -3.5, -3.0],
        steps_bohr: [[0.4, 0.05, 0.0], [0.0, 0.45, 0.1], [0.05, 0.0, 0.5]],
        dims: [19, 13, 14],
    };
    let job = FieldJob {
        field: Field::QmPotential,
        lattice,
        input: FieldInput::Wavefunction(wf.clone()),
    };
    let values = run(&CpuEngine, &job);
    let mut points = Vec::new();
    for k in 0..14 {
        for j in 0..13 {
            for i in 0..19 {
                points.push(lattice.point_bohr(i, j, k));
            }
        }
    }
    let exact = cpu::evaluate_points(&Field::QmPotential, &job.input, &points).unwrap();
    for (v, e) in values.iter().zip(&exact) {
        assert_eq!(*v, *e as f32);
    }
}

#[test]
fn kernel_source_compiles_with_nvrtc() {
    // NVRTC alone (no driver, no device) is enough to compile.
    // SAFETY: only tries to load the library.
    let present = std::panic::catch_unwind(|| unsafe { cudarc::nvrtc::sys::is_culib_present() }).unwrap_or(false);
    if !present {
        let required = std::env::var("ORBITFIELD_REQUIRE_CUDA")
            .map(|v| v == "1")
            .unwrap_or(false);
        assert!(!required, "ORBITFIELD_REQUIRE_CUDA=1 but no NVRTC library");
        println!("skipped: no NVRTC library");
        return;
    }
    for max_l in [0, 2, 8, 14] {
        let src = cuda::qm_esp::kernel_source(max_l);
        let ptx = cuda::compile_ptx(&src, "compute_80").unwrap_or_else(|e| panic!("L {max_l}: {e}"));
        for l in 0..=max_l {
            assert!(
                ptx.contains(&format!("qm_esp_group_{l}")),
                "L {max_l}: no kernel for {l}"
            );
        }
        assert!(ptx.contains("qm_esp_nuclei") && ptx.contains("qm_esp_finish"));
    }
}

/// The GPU against PySCF on the reference lattices, and against the CPU engine point by point.
#[test]
fn gpu_matches_pyscf_and_the_cpu_engine() {
    let Some(gpu) = device() else { return };
    for name in [
        "water_hf_631gs_sph",
        "water_hf_631gs_cart",
        "threonine_hf_631gs_sph",
        "threonine_hf_631gs_cart",
        "n2_hf_ccpvqz_sph",
        "n2_hf_ccpvqz_cart",
        "o2_uhf_ccpvtz_sph",
    ] {
        let wf = load(name);
        let lr = lattice_reference(name);
        let job = FieldJob {
            field: Field::QmPotential,
            lattice: lr.lattice,
            input: FieldInput::Wavefunction(wf.clone()),
        };
        let g = run(&*gpu, &job);
        compare_lattice(&format!("{name} gpu lattice"), &wf, &lr, &g);
        let c = run(&CpuEngine, &job);
        let mut worst: f64 = 0.0;
        for (i, (a, b)) in g.iter().zip(&c).enumerate() {
            let (a, b) = (f64::from(*a), f64::from(*b));
            // Both round the same f64 sum to f32: one f32 step apart at most.
            let err = (a - b).abs() / b.abs().max(1e-6);
            assert!(err <= 2.5e-7, "{name}: point {i}: gpu {a} cpu {b}");
            worst = worst.max(err);
        }
        println!("{name}: gpu vs cpu worst relative difference {worst:.2e}");
    }
}

/// A larger lattice through the GPU engine's slab path, against the CPU engine.
#[test]
fn gpu_threonine_lattice_matches_the_cpu_engine() {
    let Some(gpu) = device() else { return };
    let wf = load("threonine_hf_631gs_sph");
    let lr = lattice_reference("threonine_hf_631gs_sph");
    let mut lattice = lr.lattice;
    lattice.dims = [40, 37, 33];
    for s in &mut lattice.steps_bohr {
        for x in s.iter_mut() {
            *x *= 11.0 / 39.0;
        }
    }
    let job = FieldJob {
        field: Field::QmPotential,
        lattice,
        input: FieldInput::Wavefunction(wf),
    };
    let g = run(&*gpu, &job);
    let c = run(&CpuEngine, &job);
    for (i, (a, b)) in g.iter().zip(&c).enumerate() {
        let (a, b) = (f64::from(*a), f64::from(*b));
        assert!(
            (a - b).abs() <= 2.5e-7 * b.abs().max(1e-6),
            "point {i}: gpu {a} cpu {b}"
        );
    }
}

/// A density isosurface and PySCF's potential at its vertices (`esp/make_vertex_reference.py`):
/// the mesh orbitfield extracts from PySCF's density lattice, its vertices matched one to one with
/// the reference's edge crossings.
struct VertexCase {
    mesh: orbitfield::surface::MeshData,
    /// PySCF's potential (hartree/e) at each vertex of `mesh`, in the mesh's order.
    reference: Vec<f64>,
    density: orbitfield::model::Grid3,
}

fn vertex_case(name: &str) -> VertexCase {
    let cube_path = data(&format!("esp/{name}.density_lattice.cube.gz"));
    let cube = io::cube::read(&cube_path, &io::read_bytes(&cube_path).unwrap()).unwrap();
    let density = cube.grids.into_iter().next().unwrap();
    let mesh = orbitfield::surface::extract(&density, 0.002);
    let t = text(&data(&format!("esp/{name}.vertex_esp.txt.gz")));
    let rows: Vec<[f64; 4]> = t
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let v: Vec<f64> = l.split_whitespace().map(|x| x.parse().unwrap()).collect();
            [v[0], v[1], v[2], v[3]]
        })
        .collect();
    assert_eq!(
        mesh.positions_angstrom.len(),
        rows.len(),
        "{name}: one vertex per crossed edge"
    );
    let mut used = vec![false; rows.len()];
    let reference = mesh
        .positions_angstrom
        .iter()
        .map(|p| {
            let (k, d) = rows
                .iter()
                .enumerate()
                .map(|(k, r)| {
                    let d2: f64 = (0..3).map(|a| (f64::from(p[a]) - r[a]).powi(2)).sum();
                    (k, d2.sqrt())
                })
                .min_by(|a, b| a.1.total_cmp(&b.1))
                .unwrap();
            assert!(d < 1e-4, "{name}: vertex {p:?} is {d} A from every reference point");
            assert!(!used[k], "{name}: two vertices at reference point {k}");
            used[k] = true;
            rows[k][3]
        })
        .collect();
    VertexCase {
        mesh,
        reference,
        density,
    }
}

/// 1e-4 relative, or 1e-6 hartree/e where the potential is tiny.
fn vertex_tolerance(want: f64) -> f64 {
    (1e-4 * want.abs()).max(1e-6)
}

/// Surfaces coloured by a wavefunction's own potential get PySCF's value at each vertex (water
/// 6-31G* spherical, threonine 6-31G* Cartesian), through the analysis function and through the
/// vertex-values worker's request path; the potential sampled trilinearly from a lattice of the
/// same spacing as the density's (the colouring before) misses that tolerance on these coarse
/// lattices, so this test fails if colouring goes back to the lattice.
#[test]
fn density_surface_vertices_carry_pyscf_potential() {
    use orbitfield::analysis::vertex_values::{qm_potential_at_vertices, volume_at_vertices};
    use orbitfield::jobs::vertex_values::{VertexSource, VertexValuesRequest, compute};
    for name in ["water_hf_631gs_sph", "threonine_hf_631gs_cart"] {
        let wf = load(name);
        let case = vertex_case(name);
        assert!(case.reference.len() >= 200, "{name}: {} vertices", case.reference.len());
        let got = qm_potential_at_vertices(&case.mesh, &wf).unwrap();
        let mut worst = 0.0f64;
        for (g, want) in got.iter().zip(&case.reference) {
            let err = (f64::from(*g) - want).abs();
            assert!(err <= vertex_tolerance(*want), "{name}: {g} vs PySCF {want}");
            worst = worst.max(err / vertex_tolerance(*want));
        }
        eprintln!(
            "{name}: {} vertices, worst error {worst:.3} of the tolerance",
            got.len()
        );
        let mesh = Arc::new(case.mesh.clone());
        let done = compute(VertexValuesRequest {
            key: 7u32,
            lobes: [Some(Arc::clone(&mesh)), None],
            source: VertexSource::Wavefunction(Arc::clone(&wf)),
        });
        assert_eq!(done.key, 7);
        let lobes = done.values.unwrap();
        assert_eq!(lobes[0].as_deref(), Some(&got));
        assert!(lobes[1].is_none());

        // The potential on the density's lattice, sampled at the vertices.
        let job = FieldJob {
            field: Field::QmPotential,
            lattice: case.density.lattice,
            input: FieldInput::Wavefunction(Arc::clone(&wf)),
        };
        let lattice = cpu::evaluate_grid(&job).unwrap();
        let trilinear = volume_at_vertices(&case.mesh, &lattice).unwrap();
        let (worst_trilinear, at) = trilinear
            .iter()
            .zip(&case.reference)
            .map(|(t, want)| ((f64::from(*t) - want).abs() / vertex_tolerance(*want), *want))
            .fold((0.0f64, 0.0), |a, b| if b.0 > a.0 { b } else { a });
        eprintln!("{name}: trilinear worst error {worst_trilinear:.1} x the tolerance (at V = {at:.4})");
        assert!(
            worst_trilinear > 3.0,
            "{name}: the trilinear colours are within {worst_trilinear} x the tolerance: this lattice is not coarse enough to tell"
        );
    }
}

/// `orbitfield surface DENSITY.cube WAVEFUNCTION --color-by esp` writes PySCF's potential at each
/// vertex into the PLY file (vertex property `value`, in the unit asked for); OBJ is refused.
#[test]
fn surface_command_writes_the_potential_at_the_vertices() {
    let name = "water_hf_631gs_sph";
    let case = vertex_case(name);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("esp.ply");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_orbitfield"))
        .arg("surface")
        .arg(data(&format!("esp/{name}.density_lattice.cube.gz")))
        .arg(data(&format!("{name}.molden.gz")))
        .args(["--iso", "0.002", "--color-by", "esp", "--potential-unit", "V", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let bytes = std::fs::read(&out).unwrap();
    let end = b"end_header\n";
    let at = bytes.windows(end.len()).position(|w| w == end).unwrap() + end.len();
    let header = String::from_utf8_lossy(&bytes[..at]).to_string();
    assert!(
        header.contains("comment value: electrostatic potential (wavefunction, vacuum) at the vertex, V"),
        "{header}"
    );
    assert!(header.contains("property float nz\nproperty float value\n"), "{header}");
    let n: usize = header
        .lines()
        .find_map(|l| l.strip_prefix("element vertex "))
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(n, case.reference.len());
    let float = |k: usize| f32::from_le_bytes(bytes[at + 4 * k..at + 4 * k + 4].try_into().unwrap());
    // 1 hartree/e = 27.211386 V.
    const VOLT_PER_HARTREE: f64 = 27.211_386_245_988;
    for (v, (p, want)) in case.mesh.positions_angstrom.iter().zip(&case.reference).enumerate() {
        let record: Vec<f32> = (0..7).map(|k| float(7 * v + k)).collect();
        assert_eq!(&record[..3], p.as_slice(), "vertex {v} in the mesh's order");
        let got = f64::from(record[6]) / VOLT_PER_HARTREE;
        assert!(
            (got - want).abs() <= vertex_tolerance(*want),
            "vertex {v}: {got} vs PySCF {want}"
        );
    }
    let obj = dir.path().join("esp.obj");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_orbitfield"))
        .arg("surface")
        .arg(data(&format!("esp/{name}.density_lattice.cube.gz")))
        .arg(data(&format!("{name}.molden.gz")))
        .args(["--iso", "0.002", "--color-by", "esp", "-o"])
        .arg(&obj)
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("write a .ply"));
    assert!(!obj.exists());
}
