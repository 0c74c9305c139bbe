//! Cube and DX files: PySCF's cubes load with the right lattice and atoms; our cube of the same
//! field on the same lattice matches PySCF's; DX round trips through our reader. (The independent
//! DX/cube check with gridDataFormats is `tests/data/engine/check_griddata.py`.)

#![allow(clippy::unwrap_used, clippy::expect_used)]

use orbitfield::compute::cpu::evaluate_grid;
use orbitfield::compute::{FieldInput, FieldJob};
use orbitfield::io::{cube, dx};
use orbitfield::model::field::FieldSpec;
use orbitfield::model::units::BOHR_PER_ANGSTROM;
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn qm(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/qm").join(name)
}

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/engine")
        .join(name)
}

fn read_cube(name: &str) -> cube::CubeFile {
    let path = data(name);
    let bytes = std::fs::read(&path).unwrap();
    cube::read(&path, &bytes).unwrap()
}

#[test]
fn pyscf_cubes_load_with_their_lattice_and_atoms() {
    for name in ["water_homo_24.cube", "water_density_24.cube"] {
        let c = read_cube(name);
        assert!(!c.angstrom_units);
        assert_eq!(c.grids.len(), 1);
        let l = c.grids[0].lattice;
        assert_eq!(l.dims, [24, 24, 24]);
        assert_eq!(l.origin_bohr, [-3.0, -4.430901, -3.886659]);
        assert_eq!(
            l.steps_bohr,
            [[0.260870, 0.0, 0.0], [0.0, 0.385296, 0.0], [0.0, 0.0, 0.309058]]
        );
        assert_eq!(c.atoms.len(), 3);
        assert_eq!(c.atoms[0].atomic_number, 8);
        assert_eq!(c.atoms[0].position_bohr, [0.0, 0.0, 0.221665]);
        assert_eq!(c.atoms[1].position_bohr, [0.0, 1.430901, -0.886659]);
        // First values of the file are (0,0,0), (0,0,1): z fastest in the file, x fastest in memory.
        let g = &c.grids[0];
        if name.contains("homo") {
            assert_eq!(g.get(0, 0, 0), Some(-1.96228e-6));
            assert_eq!(g.get(0, 0, 1), Some(-3.79611e-6));
        } else {
            assert_eq!(g.get(0, 0, 1), Some(3.53126e-7));
        }
        let (s, f) = c.structure_and_frame();
        assert_eq!(s.len(), 3);
        assert!((f64::from(f.positions_angstrom[1][1]) - 1.430901 / BOHR_PER_ANGSTROM).abs() < 1e-5);
    }
}

/// Relative 2-norm difference, up to sign when asked.
fn rel_err(got: &[f32], want: &[f32], up_to_sign: bool) -> f64 {
    let norm: f64 = want.iter().map(|&w| f64::from(w).powi(2)).sum::<f64>().sqrt();
    let d = |s: f64| {
        got.iter()
            .zip(want)
            .map(|(&g, &w)| (s * f64::from(g) - f64::from(w)).powi(2))
            .sum::<f64>()
            .sqrt()
    };
    (if up_to_sign { d(1.0).min(d(-1.0)) } else { d(1.0) }) / norm
}

/// Our cube of the same field on PySCF's lattice equals PySCF's cube. Both files carry six
/// significant digits; comparing what each wrote, they agree to 1e-6 in the relative 2-norm
/// (differences only where a value sits on a rounding boundary). Before our rounding, the
/// values agree to the 5e-6 that PySCF's rounding allows.
#[test]
fn our_cube_matches_pyscf_cube() {
    let mut system = orbitfield::io::load(&[data("water_hf_631gs_sph.molden")]).unwrap();
    let wf = Arc::new(system.wavefunctions.remove(0));
    let dir = tempfile::tempdir().unwrap();
    for (name, spec) in [("water_homo_24.cube", "mo:homo"), ("water_density_24.cube", "density")] {
        let theirs = read_cube(name);
        let field = spec.parse::<FieldSpec>().unwrap().resolve(Some(&wf)).unwrap();
        // The header prints origin and steps to 6 decimals; PySCF evaluated on its exact lattice
        // (the molecule's box plus 3 bohr on each side, 24 points per axis). Rebuild it and check that it
        // rounds to the header.
        let mut lattice = theirs.grids[0].lattice;
        for k in 0..3 {
            let lo = wf
                .atoms
                .iter()
                .map(|a| a.position_bohr[k])
                .fold(f64::INFINITY, f64::min)
                - 3.0;
            let hi = wf
                .atoms
                .iter()
                .map(|a| a.position_bohr[k])
                .fold(f64::NEG_INFINITY, f64::max)
                + 3.0;
            let step = (hi - lo) / 23.0;
            assert!((step - lattice.steps_bohr[k][k]).abs() <= 5e-7 && (lo - lattice.origin_bohr[k]).abs() <= 5e-7);
            lattice.steps_bohr[k][k] = step;
            lattice.origin_bohr[k] = lo;
        }
        let job = FieldJob {
            field,
            lattice,
            input: FieldInput::Wavefunction(wf.clone()),
        };
        let ours = evaluate_grid(&job).unwrap();
        let raw = rel_err(&ours.values, &theirs.grids[0].values, true);
        // Per value: PySCF's rounding (half a unit in the 6th digit) plus a hair.
        let max = theirs.grids[0].values.iter().fold(0.0f32, |m, v| m.max(v.abs()));
        let sign = if raw == rel_err(&ours.values, &theirs.grids[0].values, false) {
            1.0
        } else {
            -1.0
        };
        let worst = ours
            .values
            .iter()
            .zip(&theirs.grids[0].values)
            .map(|(&a, &b)| (sign * a - b).abs() / (b.abs() + 1e-9 * max))
            .fold(0.0f32, f32::max);
        let out = dir.path().join(name);
        cube::write(&out, &ours, &theirs.atoms).unwrap();
        let text = std::fs::read(&out).unwrap();
        let back = cube::read(&out, &text).unwrap();
        assert_eq!(back.atoms, theirs.atoms);
        // Our header, like PySCF's, prints the lattice to 6 decimals: the same text.
        let header = |t: &[u8]| {
            String::from_utf8_lossy(t)
                .lines()
                .skip(2)
                .take(7)
                .collect::<Vec<_>>()
                .join("\n")
        };
        assert_eq!(header(&text), header(&std::fs::read(data(name)).unwrap()));
        let written = rel_err(&back.grids[0].values, &theirs.grids[0].values, true);
        println!("{name}: unrounded {raw:.2e} (worst value {worst:.2e}), as written {written:.2e}");
        assert!(raw < 5e-6 && worst < 5.1e-6, "{name}: {raw:.2e} {worst:.2e}");
        assert!(written < 1e-6, "{name}: {written:.2e}");
    }
}

#[test]
fn dx_round_trip_of_a_pyscf_cube() {
    let c = read_cube("water_density_24.cube");
    let g = &c.grids[0];
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("density.dx");
    dx::write(&path, g).unwrap();
    let back = dx::read(&path, &std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(back.lattice.dims, g.lattice.dims);
    for a in 0..3 {
        assert!((back.lattice.origin_bohr[a] - g.lattice.origin_bohr[a]).abs() < 1e-8);
        for b in 0..3 {
            assert!((back.lattice.steps_bohr[a][b] - g.lattice.steps_bohr[a][b]).abs() < 1e-8);
        }
    }
    assert_eq!(back.values, g.values);
    // The DX loads through the generic loader too.
    let system = orbitfield::io::load(&[path]).unwrap();
    assert_eq!(system.grids.len(), 1);
}

#[test]
fn truncated_and_garbled_cubes_are_errors() {
    let bytes = std::fs::read(data("water_homo_24.cube")).unwrap();
    let p = Path::new("bad.cube");
    for cut in [10, 100, 200, 300, 400, bytes.len() / 3, bytes.len() - 3] {
        let e = cube::read(p, &bytes[..cut]);
        assert!(e.is_err(), "cut at {cut} accepted");
    }
    let text = String::from_utf8(bytes).unwrap();
    let garbled = text.replacen(" 24    0.000000    0.385296", " 2x    0.000000    0.385296", 1);
    let e = cube::read(p, garbled.as_bytes()).unwrap_err();
    assert_eq!(e.location, orbitfield::io::Location::Line(5), "{e}");
    assert!(e.to_string().starts_with("bad.cube:5: expected a point count"), "{e}");
}

/// `orbitfield grid` end to end: PySCF's lattice taken from its cube (`--like`), DX out, read back.
/// (`--like` uses the header's 6-decimal lattice, so agreement is 1e-5-ish, not the 1e-6 above.)
#[test]
fn grid_command_writes_dx_on_a_given_lattice() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("homo.dx");
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_orbitfield"))
        .args(["grid", "mo:homo"])
        .arg(data("water_hf_631gs_sph.molden"))
        .arg("-o")
        .arg(&out)
        .arg("--like")
        .arg(data("water_homo_24.cube"))
        .args(["--device", "cpu"])
        .status()
        .unwrap();
    assert!(status.success());
    let ours = dx::read(&out, &std::fs::read(&out).unwrap()).unwrap();
    let theirs = read_cube("water_homo_24.cube");
    let e = rel_err(&ours.values, &theirs.grids[0].values, true);
    assert!(e < 3e-5, "{e:.2e}");
    // A refused lattice and an unknown orbital are clear errors, not panics.
    for (field, extra) in [("mo:homo", "--spacing=0.00001"), ("mo:lumo+40", "--spacing=0.5")] {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_orbitfield"))
            .args(["grid", field])
            .arg(data("water_hf_631gs_sph.molden"))
            .arg("-o")
            .arg(dir.path().join("x.cube"))
            .arg(extra)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("points") || err.contains("18 orbitals"), "{err}");
    }
}

/// `orbitfield points` at PySCF's reference points prints PySCF's values.
#[test]
fn points_command_matches_pyscf() {
    let text = std::fs::read_to_string(data("water_hf_631gs_sph.ref.txt")).unwrap();
    let rows: Vec<Vec<f64>> = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split_whitespace().map(|x| x.parse().unwrap()).collect())
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let pts = dir.path().join("pts.txt");
    let body: String = rows
        .iter()
        .map(|r| format!("{} {} {}  # a point\n", r[0], r[1], r[2]))
        .collect();
    std::fs::write(&pts, format!("# x y z in Angstrom\n\n{body}")).unwrap();
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_orbitfield"))
        .arg("points")
        .arg(data("water_hf_631gs_sph.molden"))
        .args(["--field", "density", "--device", "cpu", "--points"])
        .arg(&pts)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let got: Vec<f64> = String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    let want: Vec<f64> = rows.iter().map(|r| r[7]).collect();
    assert_eq!(got.len(), want.len());
    let num: f64 = got.iter().zip(&want).map(|(g, w)| (g - w).powi(2)).sum::<f64>().sqrt();
    let den: f64 = want.iter().map(|w| w * w).sum::<f64>().sqrt();
    assert!(num / den < 1e-6, "{:.2e}", num / den);
}

/// `orbitfield points --field esp` of a wavefunction is its own potential (nuclei and electron density)
/// in hartree/e: PySCF's values at its reference points (`tests/data/qm/esp/make_qm_esp_reference.py`);
/// `--charges nuclear` still gives the bare nuclei's Coulomb sum, and point-charge summation options
/// are refused for the wavefunction's potential.
#[test]
fn points_command_esp_of_a_wavefunction_matches_pyscf() {
    let bytes = orbitfield::io::read_bytes(&qm("esp/water_hf_631gs_sph.esp.txt.gz")).unwrap();
    let rows: Vec<Vec<f64>> = String::from_utf8(bytes)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .take(60)
        .map(|l| l.split_whitespace().map(|x| x.parse().unwrap()).collect())
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let pts = dir.path().join("pts.txt");
    let body: String = rows.iter().map(|r| format!("{} {} {}\n", r[0], r[1], r[2])).collect();
    std::fs::write(&pts, body).unwrap();
    let run = |extra: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_orbitfield"))
            .arg("points")
            .arg(qm("water_hf_631gs_sph.molden.gz"))
            .args(["--field", "esp", "--device", "cpu", "--points"])
            .arg(&pts)
            .args(extra)
            .output()
            .unwrap()
    };
    let values = |o: std::process::Output| -> Vec<f64> {
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout)
            .unwrap()
            .lines()
            .map(|l| l.parse().unwrap())
            .collect()
    };
    let got = values(run(&[]));
    assert_eq!(got.len(), rows.len());
    for (g, r) in got.iter().zip(&rows) {
        assert!((g - r[3]).abs() <= 1e-6 * r[3].abs().max(1e-3), "{g} vs {}", r[3]);
    }
    // The bare nuclei (8, 1, 1 at the file's positions), in hartree/e.
    let wf = orbitfield::io::molden::read(
        &qm("water_hf_631gs_sph.molden.gz"),
        &orbitfield::io::read_bytes(&qm("water_hf_631gs_sph.molden.gz")).unwrap(),
    )
    .unwrap()
    .wavefunctions
    .remove(0);
    let nuclear = values(run(&["--charges", "nuclear", "--units", "hartree/e"]));
    for (v, r) in nuclear.iter().zip(&rows) {
        let p = orbitfield::model::units::bohr_from_angstrom3([r[0], r[1], r[2]]);
        let want: f64 = wf
            .atoms
            .iter()
            .map(|a| {
                let d: f64 = (0..3).map(|k| (p[k] - a.position_bohr[k]).powi(2)).sum();
                a.nuclear_charge / d.sqrt()
            })
            .sum();
        assert!((v - want).abs() <= 1e-6 * want.abs(), "{v} vs {want}");
    }
    let o = run(&["--method", "msm"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--method applies to potentials of point charges"));
}
