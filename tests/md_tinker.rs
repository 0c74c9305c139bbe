//! The Tinker XYZ and archive reader on MDAnalysisTests's Tinker files, checked against what
//! MDAnalysis 2.11.0's TXYZ parser and reader give for the same files
//! (`tests/data/md/tinker/reference.json`, written by `make_reference.py` beside it): every atom's
//! name, type and (where MDAnalysis has them) element, every bond, and every frame's box and
//! positions. Then a Tinker file named `.xyz` told from a plain XYZ, an archive after its
//! topology, and damaged files.
#![allow(clippy::unwrap_used)]

use orbitfield::io;
use orbitfield::model::{Element, Frame};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/md").join(name)
}

fn reference(case: &str) -> Value {
    let text = std::fs::read_to_string(data("tinker/reference.json")).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    let c = v["cases"][case].clone();
    assert!(c.is_object(), "no reference case {case}");
    c
}

fn check(case: &str, sys: &mut io::System) {
    let r = reference(case);
    let s = &sys.structure;
    let n = r["n_atoms"].as_u64().unwrap() as usize;
    assert_eq!(s.len(), n, "{case}: atoms");
    assert_eq!(
        sys.trajectory.n_frames() as u64,
        r["n_frames"].as_u64().unwrap(),
        "{case}: frames"
    );
    for i in 0..n {
        assert_eq!(
            s.names[i].as_str(),
            r["names"][i].as_str().unwrap(),
            "{case}: name of {i}"
        );
        assert_eq!(
            s.types[i].as_str(),
            r["types"][i].as_str().unwrap(),
            "{case}: type of {i}"
        );
        if let Some(e) = r.get("elements") {
            let want = Element::from_symbol(e[i].as_str().unwrap()).unwrap();
            assert_eq!(s.elements[i], want, "{case}: element of {i}");
        }
    }
    let bonds: Vec<[u32; 2]> = r["bonds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| [b[0].as_u64().unwrap() as u32, b[1].as_u64().unwrap() as u32])
        .collect();
    assert_eq!(s.bonds, bonds, "{case}: bonds");
    let mut fr = Frame::default();
    for (k, rf) in r["frames"].as_array().unwrap().iter().enumerate() {
        sys.trajectory.read_frame(k, &mut fr).unwrap();
        match rf["box"].as_array() {
            None => assert!(fr.cell.is_none(), "{case} frame {k}: a box where MDAnalysis has none"),
            Some(b) => {
                let cell = fr.cell.unwrap_or_else(|| panic!("{case} frame {k}: no box"));
                let (lengths, angles) = (cell.lengths_angstrom, cell.angles_degree);
                for c in 0..3 {
                    assert!(
                        (lengths[c] - b[c].as_f64().unwrap()).abs() < 1e-4,
                        "{case} frame {k}: {lengths:?}"
                    );
                    assert!(
                        (angles[c] - b[c + 3].as_f64().unwrap()).abs() < 1e-4,
                        "{case} frame {k}: {angles:?}"
                    );
                }
            }
        }
        for (i, p) in rf["positions_angstrom"].as_array().unwrap().iter().enumerate() {
            for c in 0..3 {
                let want = p[c].as_f64().unwrap();
                let got = f64::from(fr.positions_angstrom[i][c]);
                assert!((got - want).abs() < 1e-4, "{case} frame {k} atom {i}: {got} vs {want}");
            }
        }
    }
}

#[test]
fn tinker_files_read_as_mdanalysis_reads_them() {
    for case in ["test.txyz", "test.arc", "new_hexane.arc"] {
        let mut sys = io::load(&[data(&format!("tinker/{case}"))]).unwrap_or_else(|e| panic!("{case}: {e}"));
        check(case, &mut sys);
    }
}

#[test]
fn a_tinker_file_named_xyz_is_told_from_a_plain_xyz() {
    let dir = std::env::temp_dir().join(format!("orbitfield-tinker-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let named_xyz = dir.join("ethanol.xyz");
    std::fs::copy(data("tinker/test.arc"), &named_xyz).unwrap();
    let mut sys = io::load(&[named_xyz]).unwrap();
    check("test.arc", &mut sys);
    // A plain XYZ file beside it stays a plain XYZ file.
    let plain = io::load(&[data("2r9r-1b.xyz")]).unwrap();
    assert_eq!(plain.structure.len(), 1284);
    assert!(plain.structure.types.is_empty());
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn an_archive_after_its_topology_gives_the_frames() {
    let mut sys = io::load(&[data("tinker/test.txyz"), data("tinker/test.arc")]).unwrap();
    assert_eq!(sys.structure.bonds.len(), 8);
    let r = reference("test.arc");
    assert_eq!(sys.trajectory.n_frames(), 2);
    let mut fr = Frame::default();
    sys.trajectory.read_frame(1, &mut fr).unwrap();
    let want = r["frames"][1]["positions_angstrom"][8][2].as_f64().unwrap();
    assert!((f64::from(fr.positions_angstrom[8][2]) - want).abs() < 1e-4);
}

#[test]
fn damaged_tinker_files_name_their_line() {
    let text = std::fs::read_to_string(data("tinker/new_hexane.arc")).unwrap();
    let dir = std::env::temp_dir().join(format!("orbitfield-tinker-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // A garbled coordinate on the first frame's fourth atom (line 6).
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    lines[5] = lines[5].replacen('.', ",", 1);
    let bad = dir.join("bad.arc");
    std::fs::write(&bad, lines.join("\n")).unwrap();
    let e = io::load(std::slice::from_ref(&bad)).unwrap_err();
    assert_eq!(e.location, io::Location::Line(6), "{e}");
    assert!(e.to_string().contains("bad.arc"), "{e}");
    // Cut in the middle of the last frame: the complete frames are kept, with a warning.
    let cut = dir.join("cut.arc");
    std::fs::write(&cut, &text[..text.len() - 30]).unwrap();
    let sys = io::load(std::slice::from_ref(&cut)).unwrap();
    assert_eq!(sys.trajectory.n_frames(), 2);
    assert!(
        sys.warnings.iter().any(|w| w.contains("2 complete frames")),
        "{:?}",
        sys.warnings
    );
    // Every prefix of the file: a frame count or a message, never a panic.
    for end in 0..text.len() {
        std::fs::write(&cut, &text[..end]).unwrap();
        let _ = io::load(std::slice::from_ref(&cut));
    }
    std::fs::remove_dir_all(&dir).ok();
}
