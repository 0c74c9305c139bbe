//! Insertion codes (PDB column 27): 1osm's residues 163, 163A to 163J and 181A are residues of
//! their own, with MDAnalysis 2.11's residue count and numbers, `resid 163A` selects the atoms
//! MDAnalysis's `resid 163A` does, and the same file written as mmCIF by gemmi reads the same.
//! Reference: `tests/data/md/icodes/reference.json` (`make_reference.py`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use orbitfield::model::select::Selection;
use std::path::{Path, PathBuf};

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/md").join(rel)
}

#[test]
fn residues_with_insertion_codes_match_mdanalysis() {
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(data("icodes/reference.json")).unwrap()).unwrap();
    let system = orbitfield::io::load(&[data("1osm.pdb.gz")]).unwrap();
    let s = &system.structure;
    assert_eq!(s.residue_count(), r["residues"].as_u64().unwrap() as usize);
    let starts = s.residue_starts();
    let ours: Vec<String> = starts[..starts.len() - 1].iter().map(|&i| s.resid_text(i)).collect();
    let want: Vec<&str> = r["resids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(ours, want);
    let sels = r["selections"].as_object().unwrap();
    assert!(sels.len() >= 11);
    for (text, atoms) in sels {
        let picked = Selection::parse(text).unwrap().indices(s, None);
        let want: Vec<u32> = atoms
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap() as u32)
            .collect();
        assert_eq!(picked, want, "{text}");
        // The same atoms by `insertion`.
        let (num, code) = text["resid ".len()..].split_at(text.len() - "resid ".len() - 1);
        let by_keyword = Selection::parse(&format!("resid {num} and insertion {code}"))
            .unwrap()
            .indices(s, None);
        assert_eq!(by_keyword, want, "{text}");
    }
    // A plain number takes every insertion code of it (as VMD's resid); several forms together.
    let all_163 = Selection::parse("resid 163").unwrap().indices(s, None);
    let parts: usize = sels
        .iter()
        .filter(|(t, _)| t.starts_with("resid 163") && t.len() == "resid 163A".len())
        .map(|(_, a)| a.as_array().unwrap().len())
        .sum();
    assert!(all_163.len() > parts, "{} against {parts}", all_163.len());
    let two = Selection::parse("resid 163A 163B").unwrap().indices(s, None);
    assert_eq!(
        two.len(),
        sels["resid 163A"].as_array().unwrap().len() + sels["resid 163B"].as_array().unwrap().len()
    );
    assert!(Selection::parse("resid 163AB").is_err());

    // The mmCIF copy: the same residues.
    let cif = orbitfield::io::load(&[data("icodes/1osm.cif.gz")]).unwrap();
    let c = &cif.structure;
    let starts = c.residue_starts();
    let from_cif: Vec<String> = starts[..starts.len() - 1].iter().map(|&i| c.resid_text(i)).collect();
    assert_eq!(from_cif, ours);

    // Written back as PDB (`convert`), the residues and their alternate locations survive.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("1osm.pdb");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_orbitfield"))
        .args(["convert"])
        .arg(data("1osm.pdb.gz"))
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let back = orbitfield::io::load(&[out]).unwrap();
    let b = &back.structure;
    let starts = b.residue_starts();
    let again: Vec<String> = starts[..starts.len() - 1].iter().map(|&i| b.resid_text(i)).collect();
    assert_eq!(again, ours);
    assert_eq!(b.altlocs, s.altlocs);
}
