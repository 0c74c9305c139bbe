//! Wavefunctions with effective core potentials: the nuclear charges less the ECP cores, read from
//! a Gaussian log ("Pseudopotential Parameters"), a GAMESS log (`ZCORE`) and a Q-Chem fchk (which
//! keeps the atomic numbers: the cores are inferred from its charge and electrons, and said so).
//! References: the charges Gaussian itself wrote for the same job (its fchk's "Nuclear charges",
//! read here from the text) and each file's printed molecular charge; the potential far from the
//! molecule against the Gaussian fchk's and against the charge's q/r.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/qm-logs/ecp")
        .join(name)
}

const FILES: [&str; 3] = [
    "Gaussian16_MoOCl4_sp.log.gz",
    "GAMESS-US2018_MoOCl4_sp.out.gz",
    "QChem5.4_MoOCl4_sp.fchk.gz",
];

fn text(name: &str) -> String {
    let mut s = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(data(name)).unwrap())
        .read_to_string(&mut s)
        .unwrap();
    s
}

/// The values of an fchk record of `n` reals, read from the file's text.
fn fchk_reals(text: &str, name: &str, n: usize) -> Vec<f64> {
    let start = text.lines().position(|l| l.starts_with(name)).unwrap();
    text.lines()
        .skip(start + 1)
        .flat_map(|l| l.split_whitespace())
        .take(n)
        .map(|v| v.parse().unwrap())
        .collect()
}

/// The molecular charge each file prints.
fn printed_charge(name: &str) -> i32 {
    let t = text(name);
    let found = t.lines().find_map(|l| {
        let l = l.trim();
        if let Some(rest) = l.strip_prefix("Charge =") {
            return rest.split_whitespace().next()?.parse().ok();
        }
        if let Some(rest) = l.strip_prefix("CHARGE OF MOLECULE") {
            return rest
                .trim_start_matches([' ', '='])
                .split_whitespace()
                .next()?
                .parse()
                .ok();
        }
        let rest = l.strip_prefix("Charge")?.trim_start();
        let rest = rest.strip_prefix('I')?;
        rest.split_whitespace().next()?.parse().ok()
    });
    found.unwrap_or_else(|| panic!("{name}: no printed charge"))
}

#[test]
fn nuclear_charges_are_less_the_ecp_cores_and_the_charge_is_the_files() {
    let gaussian_charges = fchk_reals(&text("Gaussian16_MoOCl4_sp.fchk.gz"), "Nuclear charges", 6);
    assert_eq!(gaussian_charges.len(), 6);
    for name in FILES {
        let system = orbitfield::io::load(&[data(name)]).unwrap_or_else(|e| panic!("{name}: {e}"));
        let wf = &system.wavefunctions[0];
        let charges: Vec<f64> = wf.atoms.iter().map(|a| a.nuclear_charge).collect();
        assert_eq!(charges, gaussian_charges, "{name}");
        let electrons: f64 = wf.alpha.occupations.iter().sum::<f64>()
            + wf.beta.as_ref().map_or(0.0, |b| b.occupations.iter().sum::<f64>());
        let total = charges.iter().sum::<f64>() - electrons;
        assert!(
            (total - f64::from(printed_charge(name))).abs() < 1e-9,
            "{name}: {total}"
        );
        // Only the Q-Chem file needed its cores inferred, and it says so.
        let inferred = system
            .warnings
            .iter()
            .any(|w| w.contains("inferred") && w.contains("Mo 28, Cl 10"));
        assert_eq!(inferred, name.starts_with("QChem"), "{name}: {:?}", system.warnings);
    }
}

/// The potential at `at` (Angstrom), hartree/e, from `orbitfield grid esp` at one point.
fn far_potential(path: &Path, at: [f64; 3]) -> f64 {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("esp.cube");
    let o = Command::new(env!("CARGO_BIN_EXE_orbitfield"))
        .args(["grid", "esp"])
        .arg(path)
        .arg("--origin")
        .arg(format!("{},{},{}", at[0], at[1], at[2]))
        .args(["--dims", "1,1,1", "--spacing", "1", "--units", "hartree/e", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let cube = std::fs::read_to_string(&out).unwrap();
    cube.split_whitespace().last().unwrap().parse().unwrap()
}

#[test]
fn the_potential_far_away_is_the_charge_s() {
    let at = [30.0, 4.0, -3.0];
    let r_bohr = at.iter().map(|x| x * x).sum::<f64>().sqrt() / 0.529_177_210_903;
    let reference = far_potential(&data("Gaussian16_MoOCl4_sp.fchk.gz"), at);
    // Within the dipole's share of q/r at 30 A.
    assert!((reference - (-2.0 / r_bohr)).abs() < 0.02 * 2.0 / r_bohr, "{reference}");
    // Each program orients the molecule its own way, so the dipole's share differs; the charge's
    // share is the same (+1.17 hartree/e with the full nuclear charges).
    for name in FILES {
        let v = far_potential(&data(name), at);
        assert!((v - (-2.0 / r_bohr)).abs() < 0.02 * 2.0 / r_bohr, "{name}: {v}");
    }
    // The log of the same Gaussian job, in the same orientation: the same potential.
    let log = far_potential(&data(FILES[0]), at);
    assert!(
        (log - reference).abs() < 1e-4 * reference.abs(),
        "{log} against {reference}"
    );
}
