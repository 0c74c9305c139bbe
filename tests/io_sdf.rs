//! MDL molfiles and SD files (`io::sdf`) against RDKit (and IOData for V2000): every record of
//! five files (PubChem V2000 records, V3000 records with continued lines, a lower-case `v2000`, a
//! Marvin file, RDKit conformers) read alone equals RDKit's atoms, positions and bonds; a file of
//! conformers opens as one molecule with a frame per record; a library of different molecules
//! opens its first with a warning. Reference: `tests/data/sdf/reference.json`, written by
//! `tests/data/sdf/make_reference.py`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use orbitfield::io::sdf;
use std::path::{Path, PathBuf};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sdf").join(name)
}

fn reference() -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(data("reference.json")).unwrap()).unwrap()
}

/// The file's records, each with its `$$$$` line.
fn records(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for line in text.lines() {
        current.push_str(line);
        current.push('\n');
        if line.trim() == "$$$$" {
            out.push(std::mem::take(&mut current));
        }
    }
    if !current.trim().is_empty() {
        out.push(current);
    }
    out
}

#[test]
fn every_record_matches_rdkit() {
    let r = reference();
    let files = r["files"].as_object().unwrap();
    assert_eq!(files.len(), 5);
    let mut checked = 0;
    for (name, refs) in files {
        let text = std::fs::read_to_string(data(name)).unwrap();
        let recs = records(&text);
        let refs = refs.as_array().unwrap();
        assert_eq!(recs.len(), refs.len(), "{name}: records");
        for (k, (rec, want)) in recs.iter().zip(refs).enumerate() {
            let p = sdf::read(Path::new(name), rec.as_bytes()).unwrap_or_else(|e| panic!("{name} record {k}: {e}"));
            let s = &p.structure;
            let atnums: Vec<u64> = want["atnums"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_u64().unwrap())
                .collect();
            let ours: Vec<u64> = s.elements.iter().map(|e| u64::from(e.number())).collect();
            assert_eq!(ours, atnums, "{name} record {k}: elements");
            assert_eq!(
                s.title,
                want["title"].as_str().unwrap().trim(),
                "{name} record {k}: title"
            );
            let mut worst = 0f64;
            for (p, q) in p.frames[0]
                .positions_angstrom
                .iter()
                .zip(want["positions"].as_array().unwrap())
            {
                for c in 0..3 {
                    worst = worst.max((f64::from(p[c]) - q[c].as_f64().unwrap()).abs());
                }
            }
            assert!(worst < 1e-4, "{name} record {k}: positions differ by {worst} A");
            let bonds: Vec<[u32; 2]> = want["bonds"]
                .as_array()
                .unwrap()
                .iter()
                .map(|b| [b[0].as_u64().unwrap() as u32, b[1].as_u64().unwrap() as u32])
                .collect();
            let mut ours = s.bonds.clone();
            ours.sort_unstable();
            assert_eq!(ours, bonds, "{name} record {k}: bonds");
            // Double, triple and aromatic bonds keep their orders (RDKit's as read: 2, 3, 1.5).
            let orders: Vec<([u32; 2], f64)> = want["multiple_bonds"]
                .as_array()
                .unwrap()
                .iter()
                .map(|b| {
                    let b = b.as_array().unwrap();
                    let atom = |i: usize| b[i].as_u64().unwrap() as u32;
                    ([atom(0), atom(1)], b[2].as_f64().unwrap())
                })
                .collect();
            let ours: Vec<([u32; 2], f64)> = s
                .multiple_bonds
                .iter()
                .map(|&(pair, o)| {
                    let v = match o {
                        orbitfield::model::BondOrder::Double => 2.0,
                        orbitfield::model::BondOrder::Triple => 3.0,
                        orbitfield::model::BondOrder::Aromatic => 1.5,
                    };
                    (pair, v)
                })
                .collect();
            assert_eq!(ours, orders, "{name} record {k}: bond orders");
            checked += 1;
        }
    }
    assert_eq!(checked, 10);
}

#[test]
fn conformers_are_frames_and_a_library_opens_its_first_molecule() {
    let r = reference();
    let mut system = orbitfield::io::load(&[data("conformers.sdf")]).unwrap();
    let refs = r["files"]["conformers.sdf"].as_array().unwrap();
    assert_eq!(system.trajectory.n_frames(), 3);
    assert_eq!(system.structure.len(), 13);
    assert_eq!(system.structure.names[0].as_str(), "C1");
    assert_eq!(system.structure.resnames[0].as_str(), "UNL");
    for (i, want) in refs.iter().enumerate() {
        let f = system.trajectory.frame(i).unwrap();
        let q = &want["positions"][12];
        let p = f.positions_angstrom[12];
        for c in 0..3 {
            assert!((f64::from(p[c]) - q[c].as_f64().unwrap()).abs() < 1e-4, "frame {i}");
        }
    }
    assert!(system.warnings.is_empty(), "{:?}", system.warnings);

    // A library of different molecules: the first, and a warning naming the record that differs.
    let system = orbitfield::io::load(&[data("molv3000.sdf")]).unwrap();
    assert_eq!(system.structure.len(), 21);
    assert_eq!(system.trajectory.n_frames(), 1);
    assert!(
        system
            .warnings
            .iter()
            .any(|w| w.contains("record 2") && w.contains("nicardipine")),
        "{:?}",
        system.warnings
    );
    // A drawing (the program line says 2D) is said to be flat.
    assert!(
        system.warnings.iter().any(|w| w.contains("2D")),
        "{:?}",
        system.warnings
    );
}

#[test]
fn pubchem_partial_charges_are_read_and_formal_charges_are_not() {
    // formamide.sdf (PubChem 3D) carries PUBCHEM_MMFF94_PARTIAL_CHARGES for its atoms.
    let text = std::fs::read_to_string(data("formamide.sdf")).unwrap();
    let p = sdf::read(Path::new("formamide.sdf"), text.as_bytes()).unwrap();
    let q = p.structure.charges_e.as_ref().expect("partial charges");
    let lines: Vec<&str> = text.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.contains("PUBCHEM_MMFF94_PARTIAL_CHARGES"))
        .unwrap();
    let n: usize = lines[at + 1].trim().parse().unwrap();
    assert!(n > 0);
    for l in &lines[at + 2..at + 2 + n] {
        let mut t = l.split_whitespace();
        let i: usize = t.next().unwrap().parse().unwrap();
        let v: f32 = t.next().unwrap().parse().unwrap();
        assert_eq!(q[i - 1], v);
    }
    // molecule.sdf has a charged nitrogen (charge column 3 = +1) and no partial charges.
    let p = sdf::read(Path::new("m.sdf"), &std::fs::read(data("molecule.sdf")).unwrap()).unwrap();
    assert!(p.structure.charges_e.is_none());
}

#[test]
fn damaged_files_name_their_line() {
    let text = std::fs::read_to_string(data("conformers.sdf")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    // An atom line with a word for a coordinate.
    let mut bad = lines.clone();
    bad[6] = "    1.0000    zero    0.0000 C   0  0";
    let e = sdf::read(Path::new("b.sdf"), bad.join("\n").as_bytes()).unwrap_err();
    assert_eq!(e.location, orbitfield::io::Location::Line(7), "{e}");
    // A bond to an atom the record does not have.
    let bond = lines.iter().position(|l| l.starts_with("  1  2")).unwrap();
    let mut bad = lines.clone();
    bad[bond] = " 99  2  1  0";
    let e = sdf::read(Path::new("b.sdf"), bad.join("\n").as_bytes()).unwrap_err();
    assert!(e.message.contains("atoms 1 to 13"), "{e}");
    // Cut short inside the second record: the first is kept, with a warning.
    let second = lines.iter().position(|l| l.starts_with("alanine conformer 1")).unwrap();
    let cut = lines[..second + 8].join("\n");
    let p = sdf::read(Path::new("c.sdf"), cut.as_bytes()).unwrap();
    assert_eq!(p.frames.len(), 1);
    assert!(
        p.warnings.iter().any(|w| w.contains("1 complete record")),
        "{:?}",
        p.warnings
    );
    // Cut short inside the first record: an error.
    assert!(sdf::read(Path::new("c.sdf"), lines[..8].join("\n").as_bytes()).is_err());
    // Counts beyond the file, an empty file, garbage.
    let mut bad = lines.clone();
    bad[3] = "999999  0  0  0  0  0  0  0  0  0999 V2000";
    assert!(sdf::read(Path::new("b.sdf"), bad[..10].join("\n").as_bytes()).is_err());
    assert!(sdf::read(Path::new("e.sdf"), b"").is_err());
    assert!(sdf::read(Path::new("g.sdf"), b"\x00\x01\x02garbage\n\n\n").is_err());
}

#[test]
fn every_prefix_and_damaged_copy_reads_without_panic() {
    for name in ["conformers.sdf", "molv3000.sdf", "formamide.sdf"] {
        let bytes = std::fs::read(data(name)).unwrap();
        for end in (0..bytes.len()).step_by(7) {
            let _ = sdf::read(Path::new(name), &bytes[..end]);
        }
        // Fresh damage each run: bytes replaced by digits, signs, letters and line ends.
        let mut seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64
            | 1;
        for _ in 0..300 {
            let mut b = bytes.clone();
            for _ in 0..4 {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                let at = (seed % b.len() as u64) as usize;
                b[at] = b"0-9Ml\n $>VE"[(seed >> 32) as usize % 11];
            }
            let _ = sdf::read(Path::new(name), &b);
        }
    }
}

/// A ligand's file opened after its protein's joins it (a chain of its own, a frame per pose); a
/// structure file of other atoms after a topology without coordinates is refused in words.
#[test]
fn a_ligand_joins_its_protein_and_poses_are_frames() {
    let md = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/md");
    let mut system = orbitfield::io::load(&[md.join("4E43.pdb.gz"), data("conformers.sdf")]).unwrap();
    assert_eq!(system.structure.len(), 1877 + 13);
    assert_eq!(system.trajectory.n_frames(), 3);
    assert!(system.structure.check_consistent().is_ok());
    let ligand = 1877;
    assert_eq!(system.structure.resnames[ligand].as_str(), "UNL");
    let chain = system.structure.chains[ligand];
    assert!(system.structure.chains[..ligand].iter().all(|c| *c != chain));
    assert!(
        system.warnings.iter().any(|w| w.contains("joined the system as chain")),
        "{:?}",
        system.warnings
    );
    let r = reference();
    let poses = r["files"]["conformers.sdf"].as_array().unwrap();
    let first = system.trajectory.frame(0).unwrap().positions_angstrom[0];
    for (i, pose) in poses.iter().enumerate() {
        let f = system.trajectory.frame(i).unwrap();
        // The protein stays; the ligand takes each pose.
        assert_eq!(f.positions_angstrom[0], first);
        let want = &pose["positions"][0];
        for c in 0..3 {
            assert!((f64::from(f.positions_angstrom[ligand][c]) - want[c].as_f64().unwrap()).abs() < 1e-4);
        }
    }
    // A PSF has no coordinates to stand beside the ligand's.
    let e = orbitfield::io::load(&[md.join("adk.psf"), data("formamide.sdf")]).unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("formamide.sdf") && text.contains("holds 6 atoms"),
        "{text}"
    );
    assert!(text.contains("joins the first only when"), "{text}");
}
