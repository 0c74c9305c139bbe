//! `convert … -o x.pdb` writes the standard amino acids and nucleotides as ATOM records and the rest
//! (a ligand, a modified residue, water, an ion) as HETATM, as the wwPDB does, in the fixed columns
//! of the format (coordinates in columns 31-54); the file reads back with the same atoms.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

const PQR: &str = "\
ATOM      1  N   ALA A   1      10.000  20.000  30.000 -0.3000 1.8500
ATOM      2  CA  ALA A   1      11.000  20.000  30.000  0.1000 1.9000
ATOM      3  SG  CSO A   2      12.000  21.000  30.000 -0.1000 2.0000
ATOM      4  P     G B   1       9.000  19.000  31.000  1.0000 2.0000
ATOM      5  C1  XK2 A 301     -12.345 -98.765 100.125  0.0500 1.9000
ATOM      6  O   HOH W   1      15.000  25.000  35.000 -0.8300 1.7700
ATOM      7 NA    NA I   1      16.000  26.000  36.000  1.0000 1.8680
END
";

#[test]
fn ligands_water_ions_and_modified_residues_are_hetatm() {
    let dir = tempfile::tempdir().unwrap();
    let pqr = dir.path().join("mix.pqr");
    std::fs::write(&pqr, PQR).unwrap();
    let pdb = dir.path().join("mix.pdb");
    let o = Command::new(env!("CARGO_BIN_EXE_orbitfield"))
        .arg("convert")
        .arg(&pqr)
        .arg("-o")
        .arg(&pdb)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&pdb).unwrap();
    let records: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("ATOM") || l.starts_with("HETATM"))
        .collect();
    assert_eq!(records.len(), 7, "{text}");
    let kinds: Vec<(&str, &str)> = records.iter().map(|l| (l[17..20].trim(), l[..6].trim())).collect();
    assert_eq!(
        kinds,
        [
            ("ALA", "ATOM"),
            ("ALA", "ATOM"),
            ("CSO", "HETATM"),
            ("G", "ATOM"),
            ("XK2", "HETATM"),
            ("HOH", "HETATM"),
            ("NA", "HETATM")
        ]
    );
    // Fixed columns: x, y, z in 31-38, 39-46, 47-54.
    let ligand = records[4];
    let xyz: Vec<f64> = [30..38, 38..46, 46..54]
        .into_iter()
        .map(|r| ligand[r].trim().parse().unwrap())
        .collect();
    assert_eq!(xyz, [-12.345, -98.765, 100.125]);
    let back = orbitfield::io::load(std::slice::from_ref(&pdb)).unwrap();
    assert_eq!(back.structure.len(), 7);
    assert_eq!(back.structure.resnames[4].as_str(), "XK2");
}
