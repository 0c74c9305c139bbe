//! Real files from other programs' test suites and examples (APBS, MDAnalysis, cpptraj) that the
//! readers and the electrostatics and ligand-sampling commands once mishandled; each test checks
//! the file against what the file itself says (its own records counted, its charges summed) or
//! what the writing program's reader reports for it. Provenance: tests/data/inputs/README.md.

use orbitfield::io;
use std::path::{Path, PathBuf};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/inputs")
        .join(name)
}

fn bytes(name: &str) -> Vec<u8> {
    std::fs::read(data(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The whitespace-separated fields of a file's lines that start with ATOM (any case), as APBS
/// splits them.
fn atom_fields(name: &str) -> Vec<Vec<String>> {
    String::from_utf8_lossy(&bytes(name))
        .lines()
        .map(|l| l.split_whitespace().map(str::to_string).collect::<Vec<_>>())
        .filter(|t| t.first().is_some_and(|k| k.eq_ignore_ascii_case("ATOM")))
        .collect()
}

/// APBS's own example PQR files write `ATOM 5 C PRO 1 ...` with a single space after the
/// keyword; APBS reads them by whitespace. Every atom is read with its charge and radius.
#[test]
fn pqr_with_one_space_after_atom() {
    let want = atom_fields("twob2.pqr");
    assert_eq!(want.len(), 2);
    let p = io::pdb::read_pqr(&data("twob2.pqr"), &bytes("twob2.pqr")).unwrap();
    let s = &p.structure;
    assert_eq!(s.len(), want.len());
    for (i, f) in want.iter().enumerate() {
        let x: f32 = f[5].parse().unwrap();
        let q: f32 = f[8].parse().unwrap();
        let r: f32 = f[9].parse().unwrap();
        assert_eq!(p.frames[0].positions_angstrom[i][0], x);
        assert_eq!(s.charges_e.as_ref().unwrap()[i], q);
        assert_eq!(s.radii_angstrom.as_ref().unwrap()[i], r);
    }
}

/// APBS's pbsam-gly example writes the chain id against the residue number (`CHG A0`); APBS reads
/// that as chain A, residue 0. All 34 atoms come in with the file's charges and radii.
#[test]
fn pqr_with_chain_written_against_the_residue_number() {
    let want = atom_fields("gly_cg.pqr");
    assert_eq!(want.len(), 34);
    let p = io::pdb::read_pqr(&data("gly_cg.pqr"), &bytes("gly_cg.pqr")).unwrap();
    let s = &p.structure;
    assert_eq!(s.len(), want.len());
    assert!(s.chains.iter().all(|c| c.as_str() == "A"), "{:?}", s.chains);
    assert!(s.resids.iter().all(|&r| r == 0), "{:?}", s.resids);
    let q = s.charges_e.as_ref().unwrap();
    let r = s.radii_angstrom.as_ref().unwrap();
    for (i, f) in want.iter().enumerate() {
        assert_eq!(q[i], f[f.len() - 2].parse::<f32>().unwrap(), "atom {i}");
        assert_eq!(r[i], f[f.len() - 1].parse::<f32>().unwrap(), "atom {i}");
    }
}

/// GROMACS writes box values as `%10.5f`; a 40000 nm box fills the fields and they run together.
/// MDAnalysis reads this file's box as 4e5 A a side (its test_gro.py `test_huge_box_gro`).
#[test]
fn gro_box_values_that_run_together() {
    let p = io::gro::read(&data("huge_box.gro"), &bytes("huge_box.gro")).unwrap();
    let cell = p.frames[0].cell.expect("a box");
    for k in 0..3 {
        assert!((cell.lengths_angstrom[k] - 4.0e5).abs() < 1e-3, "{cell:?}");
        assert!((cell.angles_degree[k] - 90.0).abs() < 1e-9, "{cell:?}");
    }
}
