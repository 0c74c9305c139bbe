//! `orbitfield info` on a wavefunction lists its orbitals per spin channel: every orbital's energy
//! and occupation in `--json` (held to the Molden file's own `Ene=`, `Spin=` and `Occup=` lines,
//! read here), the HOMO of each channel (held to PySCF's, named in the reference's header), the
//! charge in JSON as in the text, and a frontier table in the text.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::io::Read;
use std::path::{Path, PathBuf};

fn qm(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/qm").join(name)
}

fn gunzip(path: &Path) -> String {
    let mut s = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_string(&mut s)
        .unwrap();
    s
}

/// (energy, occupation) of each orbital of one spin, in the file's order.
type Channel = Vec<(f64, f64)>;

/// Each spin's orbitals (alpha, beta) as the Molden file lists them.
fn molden_orbitals(text: &str) -> (Channel, Channel) {
    let (mut alpha, mut beta) = (Vec::new(), Vec::new());
    let mut energy = f64::NAN;
    let mut is_beta = false;
    for line in text.lines() {
        let t = line.trim();
        if let Some(v) = t.strip_prefix("Ene=") {
            energy = v.trim().parse().unwrap();
        } else if let Some(v) = t.strip_prefix("Spin=") {
            is_beta = v.trim().eq_ignore_ascii_case("beta");
        } else if let Some(v) = t.strip_prefix("Occup=") {
            let o: f64 = v.trim().parse().unwrap();
            if is_beta { &mut beta } else { &mut alpha }.push((energy, o));
        }
    }
    (alpha, beta)
}

fn info(path: &Path, json: bool) -> String {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_orbitfield"));
    cmd.arg("info").arg(path);
    if json {
        cmd.arg("--json");
    }
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn an_unrestricted_wavefunction_lists_both_channels() {
    let path = qm("o2_uhf_ccpvtz_sph.molden.gz");
    let text = gunzip(&path);
    let (alpha, beta) = molden_orbitals(&text);
    let reference = gunzip(&qm("o2_uhf_ccpvtz_sph.ref.txt.gz"));
    let header = reference.lines().nth(1).unwrap();
    let index_after = |key: &str| -> u64 {
        let at = header.find(key).unwrap() + key.len();
        let rest = &header[at..];
        let digits: String = rest
            .trim_start_matches("(mo_index_1based=")
            .chars()
            .take_while(|c| c.is_ascii_digit())
            .collect();
        digits.parse().unwrap()
    };
    let v: serde_json::Value = serde_json::from_str(&info(&path, true)).unwrap();
    assert_eq!(v["homo"].as_u64(), Some(index_after("alpha_homo")));
    assert_eq!(v["homo_beta"].as_u64(), Some(index_after("beta_homo")));
    assert_eq!(v["total_charge"].as_f64(), Some(0.0));
    for (name, want) in [("alpha", &alpha), ("beta", &beta)] {
        let list = v["orbital_list"][name].as_array().unwrap();
        assert_eq!(list.len(), want.len(), "{name}");
        for (k, (o, (e, occ))) in list.iter().zip(want.iter()).enumerate() {
            assert_eq!(o["orbital"].as_u64(), Some(k as u64 + 1));
            assert!((o["energy_hartree"].as_f64().unwrap() - e).abs() < 1e-8, "{name} {k}");
            assert!((o["occupation"].as_f64().unwrap() - occ).abs() < 1e-8, "{name} {k}");
        }
    }
    let t = info(&path, false);
    let n = alpha.len();
    assert!(
        t.contains(&format!("orbitals:     {n} alpha + {} beta", beta.len())),
        "{t}"
    );
    let homo_line = t.lines().find(|l| l.starts_with("beta:")).unwrap();
    assert!(homo_line.contains(&format!("HOMO {}", index_after("beta_homo"))), "{t}");
    let row = t
        .lines()
        .find(|l| l.split_whitespace().nth(1) == Some("HOMO") && l.trim_start().starts_with("9 "))
        .unwrap();
    assert!(row.contains(&format!("{:.6}", alpha[8].0)), "{row}");
}

#[test]
fn an_orbital_cube_names_its_orbital_spin_and_energy() {
    let path = qm("o2_uhf_ccpvtz_sph.molden.gz");
    let (_, beta) = molden_orbitals(&gunzip(&path));
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("b.cube");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_orbitfield"))
        .args(["grid", "mo:beta:homo"])
        .arg(&path)
        .args(["--spacing", "0.8", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let title = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_string();
    // The beta HOMO is orbital 7 (PySCF's reference header above; the occupations say so too).
    let homo = beta.iter().rposition(|(_, occ)| *occ > 0.5).unwrap();
    assert_eq!(homo, 6);
    assert!(
        title.contains(&format!("(orbital 7, beta, {:.6} Eh)", beta[homo].0)),
        "{title}"
    );
}

/// A single point's log has one energy: `info` prints it as the log's own "SCF Done" line gives it,
/// without calling it the lowest of one or listing a table of one row.
#[test]
fn a_single_point_prints_its_energy_alone() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/qm-logs/Gaussian16_dvb_sp.out");
    let log = std::fs::read_to_string(&path).unwrap();
    let scf: Vec<f64> = log
        .lines()
        .filter(|l| l.contains("SCF Done:"))
        .map(|l| {
            l.split('=')
                .nth(1)
                .unwrap()
                .split_whitespace()
                .next()
                .unwrap()
                .parse()
                .unwrap()
        })
        .collect();
    assert_eq!(scf.len(), 1, "the test file is a single point");
    let text = info(&path, false);
    let line = text
        .lines()
        .find(|l| l.starts_with("energy:"))
        .unwrap_or_else(|| panic!("{text}"));
    let printed: f64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    assert!((printed - scf[0]).abs() < 1e-8, "{line} against {}", scf[0]);
    assert!(!text.contains("lowest"), "{text}");
}
