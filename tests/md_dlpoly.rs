//! DL_POLY CONFIG and HISTORY files (`io::dlpoly`) held to MDAnalysis 2.11's readers on
//! MDAnalysisTests's eight DL_POLY files (DL_POLY 4 and Classic, with and without cells, velocities
//! and forces, atoms written out of index order): names in index order, every frame's positions and
//! box; masses and charges against the files' own columns. Reference: `tests/data/md/dlpoly/reference.json`, written by
//! `tests/data/md/dlpoly/make_reference.py`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::path::{Path, PathBuf};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/md/dlpoly")
        .join(name)
}

#[test]
fn every_file_matches_mdanalysis() {
    let text = std::fs::read_to_string(data("reference.json")).unwrap();
    let r: serde_json::Value = serde_json::from_str(&text).unwrap();
    let files = r["files"].as_object().unwrap();
    assert_eq!(files.len(), 8);
    for (name, want) in files {
        let mut system = orbitfield::io::load(&[data(name)]).unwrap_or_else(|e| panic!("{name}: {e}"));
        let s = &system.structure;
        let names: Vec<&str> = want["names"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        let ours: Vec<&str> = s.names.iter().map(|n| n.as_str()).collect();
        assert_eq!(ours, names, "{name}: names");
        // Masses come from a HISTORY's atom lines only.
        assert_eq!(s.masses_dalton.is_some(), name.starts_with("HISTORY"), "{name}: masses");
        let frames = want["frames"].as_array().unwrap();
        assert_eq!(system.trajectory.n_frames(), frames.len(), "{name}: frames");
        for (i, (f, b)) in frames.iter().zip(want["boxes"].as_array().unwrap()).enumerate() {
            let ours = system.trajectory.frame(i).unwrap();
            let mut worst = 0f64;
            for (p, q) in ours.positions_angstrom.iter().zip(f.as_array().unwrap()) {
                for c in 0..3 {
                    worst = worst.max((f64::from(p[c]) - q[c].as_f64().unwrap()).abs());
                }
            }
            assert!(worst < 2e-5, "{name} frame {i}: positions differ by {worst}");
            match (ours.cell, b.as_array()) {
                (None, None) => {}
                (Some(c), Some(b)) => {
                    for k in 0..3 {
                        assert!(
                            (c.lengths_angstrom[k] - b[k].as_f64().unwrap()).abs() < 1e-3,
                            "{name}: box"
                        );
                        assert!(
                            (c.angles_degree[k] - b[k + 3].as_f64().unwrap()).abs() < 1e-3,
                            "{name}: box"
                        );
                    }
                }
                (c, b) => panic!("{name} frame {i}: box {c:?} against {b:?}"),
            }
        }
    }
}

#[test]
fn history_charges_times_and_damage() {
    // HISTORY atom lines are `name index mass charge displacement`: the charges are the fourth column.
    let mut system = orbitfield::io::load(&[data("HISTORY_classic")]).unwrap();
    let q = system.structure.charges_e.as_ref().unwrap();
    assert!(q.iter().all(|&v| (v - 0.994).abs() < 1e-6), "{q:?}");
    let m = system.structure.masses_dalton.as_ref().unwrap();
    assert!(m.iter().all(|&v| (v - 39.0983).abs() < 1e-4), "{m:?}");
    // Classic frames: `timestep nstep natms keytrj imcon tstep`, time = nstep * tstep.
    let f = system.trajectory.frame(0).unwrap();
    assert!((f.time_ps.unwrap() - 0.0005).abs() < 1e-12, "{:?}", f.time_ps);
    assert_eq!(f.step, Some(1));
    // Elements from the names: K+ is potassium; a name of no element is said once.
    let kcl = orbitfield::io::load(&[data("CONFIG.gz")]).unwrap();
    assert_eq!(kcl.structure.elements[0].symbol(), "K");
    assert!(kcl.structure.elements.iter().any(|e| e.symbol() == "Cl"));
    // A HISTORY cut inside its third frame keeps two, with a warning; damaged lines name their line.
    let text = std::fs::read_to_string(data("HISTORY_order")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let third = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.starts_with("timestep"))
        .nth(2)
        .unwrap()
        .0;
    let cut = lines[..third + 3].join("\n");
    let p = orbitfield::io::dlpoly::read(Path::new("HISTORY"), cut.as_bytes()).unwrap();
    assert_eq!(p.frames.len(), 2);
    assert!(
        p.warnings.iter().any(|w| w.contains("2 complete frames")),
        "{:?}",
        p.warnings
    );
    let mut bad = lines.clone();
    bad[1] = "nine zero";
    let e = orbitfield::io::dlpoly::read(Path::new("HISTORY"), bad.join("\n").as_bytes()).unwrap_err();
    assert_eq!(e.location, orbitfield::io::Location::Line(2), "{e}");
    let pos = lines
        .iter()
        .position(|l| l.trim_start().starts_with('-') || l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
        .unwrap();
    let mut bad = lines.clone();
    bad[pos] = "  1.0 one 2.0";
    assert!(orbitfield::io::dlpoly::read(Path::new("HISTORY"), bad.join("\n").as_bytes()).is_err());
    for end in 0..text.len() {
        let _ = orbitfield::io::dlpoly::read(Path::new("HISTORY"), &text.as_bytes()[..end]);
    }
    let _ = system.trajectory.n_frames();
}

/// The window shows the bonds `info` and Python report: none between the K+ and Cl- of a crystal
/// (the window once guessed 981 from the same file).
#[test]
fn an_ionic_crystal_has_no_bonds_in_the_window_either() {
    use orbitfield::app::fields::FieldService;
    use orbitfield::app::settings::Settings;
    use orbitfield::app::state::{AppState, Command};
    let system = orbitfield::io::load(&[data("CONFIG.gz")]).unwrap();
    assert!(system.structure.bonds.is_empty());
    let mut state = AppState::new(Settings::default(), FieldService::default());
    state.apply(Command::OpenFiles(vec![data("CONFIG.gz")]));
    let doc = state.document().expect("open");
    assert!(doc.bonds.is_empty(), "{} bonds", doc.bonds.len());
}
