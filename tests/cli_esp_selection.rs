//! What a computational chemist trying the command line met: `grid esp --sel` (the potential of
//! the selected atoms' charges alone, held to a Coulomb sum over the PQR file's own columns),
//! refused where it means nothing; a structure's cube header with each nucleus's charge in the
//! charge column (as Gaussian's cubegen writes it), not a partial charge; `points` files with
//! commas; a PQR of several frames refused, nothing written.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name)
}

fn orbitfield(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_orbitfield"))
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap()
}

/// (resid, position in Angstrom, charge) of every ATOM line, read from the columns here.
fn pqr_atoms(path: &Path) -> Vec<(i64, [f64; 3], f64)> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("ATOM"))
        .map(|l| {
            let t: Vec<&str> = l.split_whitespace().collect();
            let n = t.len();
            let f = |k: usize| t[k].parse::<f64>().unwrap();
            (t[n - 6].parse().unwrap(), [f(n - 5), f(n - 4), f(n - 3)], f(n - 2))
        })
        .collect()
}

/// e / (4 pi eps0 A) over kT/e at 300 K (CODATA 2018): kT/e per (e / A).
const KT_PER_E_PER_E_PER_ANGSTROM: f64 = 14.399_645_478_425_668 / (8.617_333_262e-5 * 300.0);
const ANGSTROM_PER_BOHR: f64 = 0.529_177_210_903;

#[test]
fn grid_esp_sel_is_the_potential_of_the_selected_charges() {
    let dir = tempfile::tempdir().unwrap();
    let pqr = data("md/adk_open.pqr");
    let atoms = pqr_atoms(&pqr);
    let pqr_text = pqr.display().to_string();
    let lattice = ["--origin=-30,-10,-20", "--dims", "4,4,4", "--spacing", "9"];
    let mut args = vec!["grid", "esp", &pqr_text];
    args.extend(lattice);
    args.extend(["--sel", "resid 1 to 20", "-o", "sel.cube"]);
    let out = orbitfield(&args, dir.path());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let picked: Vec<&(i64, [f64; 3], f64)> = atoms.iter().filter(|a| (1..=20).contains(&a.0)).collect();
    assert!(
        stderr.contains(&format!("{} of {} atoms", picked.len(), atoms.len())),
        "{stderr}"
    );
    let path = dir.path().join("sel.cube");
    let cube = orbitfield::io::cube::read(&path, &std::fs::read(&path).unwrap()).unwrap();
    let grid = &cube.grids[0];
    let [nx, ny, nz] = grid.lattice.dims;
    let mut worst = 0f64;
    let mut largest = 0f64;
    for k in 0..nz {
        for j in 0..ny {
            for i in 0..nx {
                let p = grid.lattice.point_bohr(i, j, k).map(|x| x * ANGSTROM_PER_BOHR);
                let want: f64 = picked
                    .iter()
                    .map(|(_, q, c)| {
                        let r = ((p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2) + (p[2] - q[2]).powi(2)).sqrt();
                        c / r
                    })
                    .sum::<f64>()
                    * KT_PER_E_PER_E_PER_ANGSTROM;
                let got = f64::from(grid.values[grid.lattice.index(i, j, k)]);
                worst = worst.max((got - want).abs());
                largest = largest.max(want.abs());
            }
        }
    }
    assert!(largest > 1.0, "a potential to compare: {largest}");
    assert!(worst < 1e-4 * largest, "worst {worst} kT/e against {largest}");
    // The header: each atom's nuclear charge in the second column (N is 7), not its partial charge.
    assert_eq!(cube.atoms.len(), atoms.len(), "the header lists every atom");
    let first = &cube.atoms[0];
    assert_eq!(first.atomic_number, 7);
    assert_eq!(first.charge_e, 7.0, "the nucleus's charge, not -0.30");
    assert!(cube.atoms.iter().all(|a| a.charge_e == f64::from(a.atomic_number)));

    // Every atom without --sel: a different map.
    let mut all = vec!["grid", "esp", &pqr_text];
    all.extend(lattice);
    all.extend(["-o", "all.cube"]);
    let out = orbitfield(&all, dir.path());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_ne!(
        std::fs::read(dir.path().join("all.cube")).unwrap(),
        std::fs::read(&path).unwrap()
    );

    // A selection that does not parse, or picks nothing, is refused; so is --sel for an orbital.
    for (sel, says) in [("bogus ((", "--sel"), ("resname XYZ", "picks no atoms")] {
        let mut bad = vec!["grid", "esp", &pqr_text];
        bad.extend(lattice);
        bad.extend(["--sel", sel, "-o", "bad.cube"]);
        let out = orbitfield(&bad, dir.path());
        assert!(!out.status.success(), "{sel}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(says),
            "{sel}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!dir.path().join("bad.cube").exists());
    }
    let molden = data("qm/threonine_hf_631gs_sph.molden.gz").display().to_string();
    let out = orbitfield(
        &["grid", "mo:homo", &molden, "--sel", "all", "-o", "homo.cube"],
        dir.path(),
    );
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--sel"));
}

#[test]
fn points_take_commas_and_a_pqr_holds_one_frame() {
    let dir = tempfile::tempdir().unwrap();
    let pqr = data("md/adk_open.pqr").display().to_string();
    std::fs::write(dir.path().join("p.txt"), "0,0,0\n1.5, 2.5 ,3.5\n4\t5\t6\n").unwrap();
    let out = orbitfield(&["points", &pqr, "--field", "esp", "--points", "p.txt"], dir.path());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let rows: Vec<f64> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| l.trim().parse().unwrap())
        .collect();
    assert_eq!(rows.len(), 3, "{text}");
    // The second point as written with blanks instead of commas: the same value.
    std::fs::write(dir.path().join("q.txt"), "1.5 2.5 3.5\n").unwrap();
    let out = orbitfield(&["points", &pqr, "--field", "esp", "--points", "q.txt"], dir.path());
    let again: f64 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    assert_eq!(again, rows[1]);
    std::fs::write(dir.path().join("bad.txt"), "1;2;3\n").unwrap();
    let out = orbitfield(&["points", &pqr, "--field", "esp", "--points", "bad.txt"], dir.path());
    assert!(String::from_utf8_lossy(&out.stderr).contains("apart by blanks or commas"));

    let psf = data("md/adk.psf").display().to_string();
    let dcd = data("md/adk_dims.dcd").display().to_string();
    let out = orbitfield(
        &["convert", &psf, &dcd, "--frames", "0:3", "-o", "three.pqr"],
        dir.path(),
    );
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("overlapping copies"));
    assert!(!dir.path().join("three.pqr").exists());
    let out = orbitfield(&["convert", &psf, &dcd, "--frames", "5", "-o", "one.pqr"], dir.path());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let one = std::fs::read_to_string(dir.path().join("one.pqr")).unwrap();
    assert_eq!(one.lines().filter(|l| l.starts_with("ATOM")).count(), 3341);
}
