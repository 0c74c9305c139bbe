//! A Gaussian log run without `pop=full` prints no orbitals, only the orbital energies of its
//! population analysis ("Alpha  occ. eigenvalues --", "Alpha virt. eigenvalues --", then "Beta"
//! for an unrestricted job). They are listed as an ORCA log's table is: the last printout's
//! energies in hartree, occupations from occ./virt., alpha and beta apart; `orbitfield info`
//! prints them. References: the logs' own lines, read here by splitting on blanks (no value in
//! these files fills its 10-character field), the electron and basis-function counts the logs
//! print, and HOMO/LUMO energies copied by hand from the logs.
#![allow(clippy::unwrap_used)]

use orbitfield::io;
use orbitfield::model::Spin;
use std::path::{Path, PathBuf};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/qm-logs")
        .join(name)
}

fn text(name: &str) -> String {
    String::from_utf8(io::read_bytes(&data(name)).unwrap()).unwrap()
}

/// The last printout's values of `channel` ("Alpha" or "Beta") as (energy, occupied), read from
/// the text by splitting on blanks.
fn last_printout(text: &str, channel: &str) -> Vec<(f64, bool)> {
    let lines: Vec<&str> = text.lines().collect();
    let is_eig = |l: &str| l.trim_start().starts_with(channel) && l.contains("eigenvalues --");
    let last = lines.iter().rposition(|l| is_eig(l)).unwrap();
    let mut first = last;
    while first > 0 && is_eig(lines[first - 1]) {
        first -= 1;
    }
    lines[first..=last]
        .iter()
        .flat_map(|l| {
            let occupied = l.contains(" occ. ");
            let values = l.split("--").nth(1).unwrap();
            values
                .split_whitespace()
                .map(move |v| (v.parse::<f64>().unwrap(), occupied))
        })
        .collect()
}

/// The first number of the log's "N basis functions," and "A alpha electrons  B beta electrons"
/// lines.
fn counts(text: &str) -> (usize, usize, usize) {
    let field = |pat: &str, k: usize| -> usize {
        let l = text.lines().find(|l| l.contains(pat)).unwrap();
        l.split_whitespace().nth(k).unwrap().parse().unwrap()
    };
    (
        field("basis functions,", 0),
        field("alpha electrons", 0),
        field("alpha electrons", 3),
    )
}

fn check_channel(levels: &orbitfield::model::LevelSet, want: &[(f64, bool)], per_level: f64) {
    assert_eq!(levels.energies_hartree.len(), want.len());
    for (k, (&(e, occupied), (&got, &occ))) in want
        .iter()
        .zip(levels.energies_hartree.iter().zip(&levels.occupations))
        .enumerate()
    {
        assert!((got - e).abs() < 1e-12, "orbital {}: {got} vs {e}", k + 1);
        assert_eq!(occ, if occupied { per_level } else { 0.0 }, "orbital {}", k + 1);
    }
}

/// cclib's Born-Oppenheimer dynamics log of divinylbenzene (B3LYP/STO-3G, restricted, no
/// `pop=full`): two population analyses, after the first and after the last SCF.
#[test]
fn restricted_gaussian_log_lists_its_last_eigenvalues() {
    let name = "Gaussian09_dvb_bomd.out.gz";
    let text = text(name);
    assert!(!text.contains("Molecular Orbital Coefficients"));
    let system = io::load(&[data(name)]).unwrap();
    assert!(system.wavefunctions.is_empty());
    let levels = system.orbital_levels.as_ref().expect("orbital levels");
    assert!(levels.beta.is_none());
    let (n_basis, n_alpha, n_beta) = counts(&text);
    assert_eq!((n_basis, n_alpha, n_beta), (60, 35, 35));
    let want = last_printout(&text, "Alpha");
    assert_eq!(want.len(), n_basis);
    assert_eq!(want.iter().filter(|w| w.1).count(), n_alpha);
    check_channel(&levels.alpha, &want, 2.0);
    // Copied from the log: line 13574 ends with the HOMO, -0.14563; line 13575 starts with the
    // LUMO, 0.03740 (the first printout's HOMO on line 378 differs, so this is the last one).
    let homo = levels.homo(Spin::Alpha).unwrap();
    assert_eq!(homo + 1, 35);
    assert_eq!(levels.alpha.energies_hartree[homo], -0.14563);
    assert_eq!(levels.alpha.energies_hartree[homo + 1], 0.03740);

    // `orbitfield info --json` lists them; the text names the HOMO and LUMO.
    let run = |json: bool| {
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_orbitfield"));
        c.arg("info");
        if json {
            c.arg("--json");
        }
        let o = c.arg(data(name)).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    };
    let v: serde_json::Value = serde_json::from_str(&run(true)).unwrap();
    let list = v["orbital_list"]["alpha"].as_array().unwrap();
    assert_eq!(list.len(), 60);
    assert_eq!(list[34]["energy_hartree"].as_f64(), Some(-0.14563));
    assert_eq!(list[34]["occupation"].as_f64(), Some(2.0));
    assert_eq!(list[35]["occupation"].as_f64(), Some(0.0));
    let out = run(false);
    assert!(out.contains("HOMO 35 (-0.145630 Eh), LUMO 36 (0.037400 Eh)"), "{out}");
}

/// cclib's unrestricted divinylbenzene cation (UB3LYP/STO-3G, 35 alpha and 34 beta electrons),
/// its orbital coefficient blocks left out (as a log without `pop=full` has none).
#[test]
fn unrestricted_gaussian_log_lists_alpha_and_beta() {
    let text = text("Gaussian16_dvb_un_sp.log.gz");
    let lines: Vec<&str> = text.lines().collect();
    let from = lines
        .iter()
        .position(|l| l.contains("Alpha Molecular Orbital Coefficients"))
        .unwrap();
    let to = lines.iter().position(|l| l.contains("Alpha Density Matrix")).unwrap();
    let stripped = [&lines[..from], &lines[to..]].concat().join("\n") + "\n";
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dvb_un_sp.log");
    std::fs::write(&path, stripped).unwrap();
    let system = io::load(&[path]).unwrap();
    assert!(system.wavefunctions.is_empty());
    let levels = system.orbital_levels.as_ref().expect("orbital levels");
    let (n_basis, n_alpha, n_beta) = counts(&text);
    assert_eq!((n_basis, n_alpha, n_beta), (60, 35, 34));
    let alpha = last_printout(&text, "Alpha");
    let beta = last_printout(&text, "Beta");
    assert_eq!((alpha.len(), beta.len()), (n_basis, n_basis));
    assert_eq!(alpha.iter().filter(|w| w.1).count(), n_alpha);
    assert_eq!(beta.iter().filter(|w| w.1).count(), n_beta);
    check_channel(&levels.alpha, &alpha, 1.0);
    check_channel(levels.beta.as_ref().expect("beta levels"), &beta, 1.0);
    // Copied from cclib's data/Gaussian/basicGaussian16/dvb_un_sp.log: alpha HOMO -0.36976 (end
    // of line 3603), LUMO -0.17750 (line 3604); beta HOMO -0.38882 (line 3615), LUMO -0.30053
    // (line 3616).
    let (ha, hb) = (levels.homo(Spin::Alpha).unwrap(), levels.homo(Spin::Beta).unwrap());
    assert_eq!((ha + 1, hb + 1), (35, 34));
    assert_eq!(levels.alpha.energies_hartree[ha], -0.36976);
    assert_eq!(levels.alpha.energies_hartree[ha + 1], -0.17750);
    let b = levels.beta.as_ref().unwrap();
    assert_eq!(b.energies_hartree[hb], -0.38882);
    assert_eq!(b.energies_hartree[hb + 1], -0.30053);
}
