//! Molecules made whole across a periodic box, on a real wrapped GROMACS trajectory: AdK in water
//! in a rhombic dodecahedron (tests/data/md/adk_oplsaa.gro + .xtc, MDAnalysis's test files), written
//! atom by atom into the box, so eight of its residues lie in pieces on opposite faces.
//!
//! Checked with this file's own geometry (fractional coordinates solved from the box rows, the
//! 27 nearest images), never with `model::whole`'s:
//! - the guessed bonds include all 213 peptide bonds of the chain, across the box too;
//! - as written, some bonds span the box; made whole, none does, in every frame;
//! - each atom moved by a whole box vector only;
//! - the chain is one piece (consecutive CA within 4.3 A);
//! - `convert --whole --fit` writes frames that are least-squares fits of their C-alpha atoms onto
//!   frame 0's (`common/fit_checks.rs`), without a box, and names the atoms.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use orbitfield::io;
use orbitfield::model::{Frame, Structure, UnitCell};
use std::path::PathBuf;

#[path = "common/fit_checks.rs"]
mod fit_checks;

fn data(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(rel)
}

fn files() -> Vec<PathBuf> {
    vec![data("md/adk_oplsaa.gro"), data("md/adk_oplsaa.xtc")]
}

/// Fractional coordinates of `d` in the lower-triangular rows of `cell`.
fn fractional(cell: &UnitCell, d: [f64; 3]) -> [f64; 3] {
    let m = cell.matrix_angstrom();
    let sc = d[2] / m[2][2];
    let sb = (d[1] - sc * m[2][1]) / m[1][1];
    let sa = (d[0] - sc * m[2][0] - sb * m[1][0]) / m[0][0];
    [sa, sb, sc]
}

fn dist(p: [f32; 3], q: [f32; 3]) -> f64 {
    (0..3)
        .map(|k| (f64::from(p[k]) - f64::from(q[k])).powi(2))
        .sum::<f64>()
        .sqrt()
}

/// The nearest-image distance, by trying the 125 images around the rounded one.
fn nearest(cell: &UnitCell, p: [f32; 3], q: [f32; 3]) -> f64 {
    let m = cell.matrix_angstrom();
    let d = [0, 1, 2].map(|k| f64::from(p[k]) - f64::from(q[k]));
    let s = fractional(cell, d).map(|x| x - x.round());
    let mut best = f64::INFINITY;
    for i in -2..=2 {
        for j in -2..=2 {
            for k in -2..=2 {
                let f = [s[0] + f64::from(i), s[1] + f64::from(j), s[2] + f64::from(k)];
                let r = [0, 1, 2].map(|c| f[0] * m[0][c] + f[1] * m[1][c] + f[2] * m[2][c]);
                best = best.min((r[0] * r[0] + r[1] * r[1] + r[2] * r[2]).sqrt());
            }
        }
    }
    best
}

fn atom(s: &Structure, resid: i32, name: &str) -> Option<usize> {
    (0..s.len()).find(|&i| s.resids[i] == resid && s.names[i].as_str() == name && s.resnames[i].as_str() != "SOL")
}

fn spanning(cell: &UnitCell, f: &Frame, bonds: &[[u32; 2]]) -> usize {
    bonds
        .iter()
        .filter(|b| {
            let (p, q) = (f.positions_angstrom[b[0] as usize], f.positions_angstrom[b[1] as usize]);
            dist(p, q) > nearest(cell, p, q) + 0.5
        })
        .count()
}

#[test]
fn a_wrapped_proteins_peptide_bonds_are_guessed_across_the_box() {
    let system = io::load(&files()).unwrap();
    let s = &system.structure;
    let bonded = |a: usize, b: usize| {
        let key = [a.min(b) as u32, a.max(b) as u32];
        s.bonds.binary_search(&key).is_ok()
    };
    let mut peptide = 0;
    for resid in 1..214 {
        let (c, n) = (atom(s, resid, "C").unwrap(), atom(s, resid + 1, "N").unwrap());
        assert!(bonded(c, n), "no bond from C of residue {resid} to N of {}", resid + 1);
        peptide += 1;
    }
    assert_eq!(peptide, 213);
    // Water keeps three bonds per molecule (O-H, O-H; never H-H), across the box too.
    let ow = (0..s.len()).filter(|&i| s.names[i].as_str() == "OW").count();
    let water_bonds = s
        .bonds
        .iter()
        .filter(|b| s.resnames[b[0] as usize].as_str() == "SOL")
        .count();
    assert_eq!(water_bonds, 2 * ow, "{ow} waters");
}

#[test]
fn every_frame_of_a_wrapped_protein_is_made_whole_by_box_vectors() {
    let mut written = io::load(&files()).unwrap();
    let mut whole = io::load(&files()).unwrap();
    let n = whole.structure.len();
    let bonds = whole.structure.bonds.clone();
    let note = io::load::make_whole(&bonds, n, &mut whole.trajectory).expect("frame 0 has molecules in pieces");
    assert!(note.contains("made whole"), "{note}");
    let ca: Vec<usize> = (1..=214).map(|r| atom(&whole.structure, r, "CA").unwrap()).collect();
    let frames = whole.trajectory.n_frames();
    assert!(frames >= 2, "{frames} frames");
    for index in 0..frames {
        let raw = written.trajectory.frame(index).unwrap();
        let made = whole.trajectory.frame(index).unwrap();
        let cell = raw.cell.expect("every frame has its box");
        if index == 0 {
            assert!(
                spanning(&cell, &raw, &bonds) > 0,
                "frame 0 as written has bonds across the box"
            );
        }
        assert_eq!(
            spanning(&cell, &made, &bonds),
            0,
            "frame {index}: a bond still spans the box"
        );
        for (i, (p, q)) in made.positions_angstrom.iter().zip(&raw.positions_angstrom).enumerate() {
            let d = [0, 1, 2].map(|k| f64::from(p[k]) - f64::from(q[k]));
            let s = fractional(&cell, d);
            assert!(
                s.iter().all(|x| (x - x.round()).abs() < 1e-4),
                "frame {index}: atom {i} moved by {s:?} box vectors"
            );
        }
        for w in ca.windows(2) {
            let d = dist(made.positions_angstrom[w[0]], made.positions_angstrom[w[1]]);
            assert!(d < 4.3, "frame {index}: CA {} to CA {} is {d} A", w[0], w[1]);
        }
    }
    // Turned off, frames are as written again.
    whole.trajectory.set_whole(None);
    assert_eq!(whole.trajectory.frame(0).unwrap(), written.trajectory.frame(0).unwrap());
}

#[test]
fn convert_whole_writes_the_molecules_joined_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let run = |out: &std::path::Path, whole: bool| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_orbitfield"));
        cmd.arg("convert")
            .args(files())
            .args(["--frames", "0:2", "-o"])
            .arg(out);
        if whole {
            cmd.arg("--whole");
        }
        let o = cmd.output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    let (joined, written) = (dir.path().join("whole.xtc"), dir.path().join("written.xtc"));
    let said = run(&joined, true);
    assert!(said.contains("made whole"), "{said}");
    let quiet = run(&written, false);
    assert!(!quiet.contains("made whole"), "{quiet}");
    for (path, want_whole) in [(&joined, true), (&written, false)] {
        let mut back = io::load(&[data("md/adk_oplsaa.gro"), path.clone()]).unwrap();
        let bonds = back.structure.bonds.clone();
        for index in 0..2 {
            let f = back.trajectory.frame(index).unwrap();
            let cell = f.cell.expect("the box is written");
            let n = spanning(&cell, &f, &bonds);
            assert_eq!(
                n == 0,
                want_whole,
                "{}: frame {index}: {n} bonds span the box",
                path.display()
            );
        }
    }
}

#[test]
fn convert_fit_writes_each_frame_fitted_onto_frame_0() {
    let dir = tempfile::tempdir().unwrap();
    let convert = |out: &std::path::Path, fit: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_orbitfield"))
            .arg("convert")
            .args(files())
            .args(["--whole", "-o"])
            .arg(out)
            .args(fit)
            .output()
            .unwrap()
    };
    // DCD keeps float32 coordinates (XTC would round them to 0.01 A).
    let out = dir.path().join("fitted.dcd");
    let o = convert(&out, &["--fit"]);
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{said}");
    assert!(
        said.contains("fitted onto frame 0 by 214 atoms (protein and name CA)"),
        "{said}"
    );
    let whole = {
        let mut s = io::load(&files()).unwrap();
        let bonds = s.structure.bonds.clone();
        io::load::make_whole(&bonds, s.structure.len(), &mut s.trajectory);
        s
    };
    let mut back = io::load(&[data("md/adk_oplsaa.gro"), out]).unwrap();
    let ca: Vec<usize> = orbitfield::model::select::Selection::parse("protein and name CA")
        .unwrap()
        .indices(&back.structure, None)
        .into_iter()
        .map(|i| i as usize)
        .collect();
    let pick = |f: &Frame| -> Vec<[f64; 3]> { ca.iter().map(|&i| f.positions_angstrom[i].map(f64::from)).collect() };
    let mut whole_traj = whole.trajectory;
    let reference = pick(&whole_traj.frame(0).unwrap());
    let n = back.trajectory.n_frames();
    assert_eq!(n, whole_traj.n_frames());
    for index in 0..n {
        let f = back.trajectory.frame(index).unwrap();
        assert!(
            f.cell.is_none(),
            "frame {index}: a fitted frame is written without a box"
        );
        fit_checks::assert_least_squares(&pick(&f), &reference, 2e-3, &format!("frame {index}"));
        // A rigid motion of the frame as read: its distances kept.
        let raw = whole_traj.frame(index).unwrap();
        for (i, j) in [(0, 3000), (10, 2000), (100, 47000)] {
            let d = |g: &Frame| dist(g.positions_angstrom[i], g.positions_angstrom[j]);
            assert!((d(&f) - d(&raw)).abs() < 2e-3, "frame {index}: atoms {i}-{j}");
        }
    }
    // A selection of no atoms is refused, naming the option, and writes nothing.
    let none = dir.path().join("none.dcd");
    let o = convert(&none, &["--fit", "resname XYZ"]);
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(said.contains("--fit: 'resname XYZ' picks 0 atoms"), "{said}");
    assert!(!none.exists());
}

/// In the viewer, a solvated protein's water and ions are gathered around it: the water shell a
/// user selects (`same residue as (water and within 3 of protein)`, minimum-image distances) is the
/// water drawn next to the protein, each of its molecules within 3 A of a protein atom in the
/// coordinates drawn, in every frame checked. The protein itself is where the file put it, whole.
#[test]
fn the_viewer_draws_the_water_shell_beside_the_protein() {
    use orbitfield::app::fields::FieldService;
    use orbitfield::app::settings::Settings;
    use orbitfield::app::state::{AppState, Command};
    use orbitfield::model::select::Selection;
    let mut state = AppState::new(Settings::default(), FieldService::default());
    state.apply(Command::OpenFiles(files()));
    let reference = io::load(&files()).unwrap();
    let structure = &reference.structure;
    let protein = Selection::parse("protein").unwrap();
    let shell = Selection::parse("same residue as (water and within 3 of protein)").unwrap();
    for frame in [0usize, 9] {
        state.apply(Command::SetFrame(frame));
        let doc = state.document().unwrap();
        let pos = &doc.frame.positions_angstrom;
        let protein_atoms = protein.indices(structure, Some(&doc.frame));
        let shell_atoms = shell.indices(structure, Some(&doc.frame));
        assert!(shell_atoms.len() > 300, "{} shell atoms", shell_atoms.len());
        let mut far = 0usize;
        let mut residues = std::collections::BTreeMap::<i32, Vec<usize>>::new();
        for &a in &shell_atoms {
            residues
                .entry(structure.resids[a as usize])
                .or_default()
                .push(a as usize);
        }
        for atoms in residues.values() {
            let near = atoms.iter().any(|&w| {
                protein_atoms
                    .iter()
                    .any(|&p| dist(pos[w], pos[p as usize]) <= 3.0 + 1e-3)
            });
            far += usize::from(!near);
        }
        println!(
            "frame {frame}: {} waters in the shell, {far} drawn away from the protein",
            residues.len()
        );
        assert_eq!(far, 0, "frame {frame}: waters of the shell drawn away from the protein");
    }
    // Opened with whole molecules off, then turned on: the same coordinates as opened with it on.
    let drawn = state.document().unwrap().frame.positions_angstrom.clone();
    let settings = Settings {
        make_whole: false,
        ..Settings::default()
    };
    let mut later = AppState::new(settings, FieldService::default());
    later.apply(Command::OpenFiles(files()));
    later.apply(Command::SetFrame(9));
    assert!(
        later.document().unwrap().frame.positions_angstrom != drawn,
        "off: the file's coordinates"
    );
    later.apply(Command::MakeWhole(true));
    assert!(
        later.document().unwrap().frame.positions_angstrom == drawn,
        "turned on later: not the coordinates of the files opened with it on"
    );
}

/// A crystal structure's entry keeps its waters where the crystallographers modelled them: an
/// alanine and a water 25 Å away in a 30 Å cell. The same atoms written as a GROMACS frame (an
/// MD snapshot) get the water drawn at its image 5 Å from the alanine, and say so; the PDB entry
/// opens with the file's coordinates and no such note.
#[test]
fn a_crystal_entry_keeps_its_waters_where_the_file_puts_them() {
    use orbitfield::app::fields::FieldService;
    use orbitfield::app::settings::Settings;
    use orbitfield::app::state::{AppState, Command};
    let atoms: [(&str, &str, i32, [f64; 3]); 8] = [
        ("N", "ALA", 1, [0.0, 0.0, 0.0]),
        ("CA", "ALA", 1, [1.46, 0.0, 0.0]),
        ("C", "ALA", 1, [2.0, 1.42, 0.0]),
        ("O", "ALA", 1, [1.25, 2.39, 0.0]),
        ("CB", "ALA", 1, [1.98, -0.77, -1.21]),
        ("OW", "SOL", 2, [25.0, 0.5, 0.0]),
        ("HW1", "SOL", 2, [25.96, 0.5, 0.0]),
        ("HW2", "SOL", 2, [24.76, 1.43, 0.0]),
    ];
    let dir = tempfile::tempdir().unwrap();
    let mut pdb = String::from("CRYST1   30.000   30.000   30.000  90.00  90.00  90.00 P 21 21 21    4\n");
    let mut gro = format!("alanine and a water\n{:5}\n", atoms.len());
    for (i, (name, res, resid, p)) in atoms.iter().enumerate() {
        let record = if *res == "ALA" { "ATOM  " } else { "HETATM" };
        let resname = if *res == "SOL" { "HOH" } else { res };
        pdb.push_str(&format!(
            "{record}{:5} {:<4} {resname:>3} A{resid:4}    {:8.3}{:8.3}{:8.3}  1.00  0.00          {:>2}\n",
            i + 1,
            if name.len() < 4 {
                format!(" {name}")
            } else {
                name.to_string()
            },
            p[0],
            p[1],
            p[2],
            &name[..1]
        ));
        gro.push_str(&format!(
            "{resid:5}{res:<5}{name:>5}{:5}{:8.3}{:8.3}{:8.3}\n",
            i + 1,
            p[0] / 10.0,
            p[1] / 10.0,
            p[2] / 10.0
        ));
    }
    pdb.push_str("END\n");
    gro.push_str("   3.00000   3.00000   3.00000\n");
    let open = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let mut state = AppState::new(Settings::default(), FieldService::default());
        state.apply(Command::OpenFiles(vec![path]));
        let doc = state
            .document()
            .unwrap_or_else(|| panic!("{name}: {}", state.panels.status));
        let x = doc.frame.positions_angstrom[5][0];
        let noted = doc
            .warnings
            .iter()
            .any(|w| w.contains("periodic image nearest the solute"));
        (x, noted)
    };
    let (x, noted) = open("snapshot.gro", &gro);
    assert!(
        (x + 5.0).abs() < 1e-3 && noted,
        "the MD frame's water at its image: x = {x}, noted {noted}"
    );
    let (x, noted) = open("entry.pdb", &pdb);
    assert!(
        (x - 25.0).abs() < 1e-3 && !noted,
        "the entry's water where the file has it: x = {x}, noted {noted}"
    );
}
