//! Where a periodic box starts (`UnitCell::origin_angstrom`), which decides where the viewer draws it:
//! a LAMMPS data file's box starts at its `xlo ylo zlo` (read here from the file's own header
//! lines), a LAMMPS dump's at zero (its positions are shifted there, as MDAnalysis does), a DL_POLY
//! cell is centred on the origin. The test that matters to a user: the atoms of an equilibrated
//! (wrapped) configuration lie inside the box as drawn, which fails for every file here when the
//! box is drawn from zero.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::needless_range_loop
)]

use orbitfield::model::UnitCell;
use std::io::Read;
use std::path::{Path, PathBuf};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/md").join(name)
}

/// The fraction of `positions` whose fractional coordinates in the box drawn from `origin` lie
/// within [-0.01, 1.01].
fn inside(cell: &UnitCell, origin: [f64; 3], positions: &[[f32; 3]]) -> f64 {
    let m = cell.matrix_angstrom();
    // Rows a = (ax, 0, 0), b = (bx, by, 0), c = (cx, cy, cz): solve by back substitution.
    let count = positions
        .iter()
        .filter(|p| {
            let d: [f64; 3] = std::array::from_fn(|k| f64::from(p[k]) - origin[k]);
            let w = d[2] / m[2][2];
            let v = (d[1] - w * m[2][1]) / m[1][1];
            let u = (d[0] - w * m[2][0] - v * m[1][0]) / m[0][0];
            [u, v, w].iter().all(|f| (-0.01..=1.01).contains(f))
        })
        .count();
    count as f64 / positions.len() as f64
}

fn text_of(path: &Path) -> String {
    let bytes = std::fs::read(path).unwrap();
    if path.extension().is_some_and(|e| e == "bz2") {
        let mut s = String::new();
        bzip2_text(&bytes, &mut s);
        s
    } else {
        String::from_utf8(bytes).unwrap()
    }
}

fn bzip2_text(bytes: &[u8], out: &mut String) {
    bzip2::read::BzDecoder::new(bytes).read_to_string(out).unwrap();
}

/// `xlo ylo zlo` from a LAMMPS data file's header lines.
fn lammps_lo(text: &str) -> [f64; 3] {
    let mut lo = [f64::NAN; 3];
    for line in text.lines().take(60) {
        let t: Vec<&str> = line.split_whitespace().collect();
        for (k, key) in ["xlo", "ylo", "zlo"].iter().enumerate() {
            if t.len() >= 4 && t[2] == *key {
                lo[k] = t[0].parse().unwrap();
            }
        }
    }
    lo
}

#[test]
fn a_lammps_data_box_starts_at_its_lower_bounds_and_holds_its_atoms() {
    for name in [
        "lammps/ifabp_apo_100mM.data.bz2",
        "lammps/albite_triclinic.data",
        "lammps/mini.data",
    ] {
        let path = data(name);
        let lo = lammps_lo(&text_of(&path));
        let mut system = orbitfield::io::load(std::slice::from_ref(&path)).unwrap();
        let frame = system.trajectory.frame(0).unwrap();
        let cell = frame.cell.expect("a box");
        for k in 0..3 {
            assert!(
                (cell.origin_angstrom[k] - lo[k]).abs() < 1e-9,
                "{name}: origin {:?} against {lo:?}",
                cell.origin_angstrom
            );
        }
        if name.contains("mini") {
            // Its one atom lies outside its box (y 48.4 A, yhi 40 A): only the origin is checked.
            continue;
        }
        let ours = inside(&cell, cell.origin_angstrom, &frame.positions_angstrom);
        assert!(ours >= 0.99, "{name}: {ours} of the atoms inside the box drawn");
        if name.contains("ifabp") {
            // The box spans -25.8..25.7 A: drawn from zero it would hold about an eighth of them.
            let from_zero = inside(&cell, [0.0; 3], &frame.positions_angstrom);
            assert!(from_zero < 0.5, "{name}: {from_zero} inside a box drawn from zero");
        }
    }
}

#[test]
fn a_lammps_dump_box_starts_at_zero_where_its_positions_were_shifted() {
    let path = data("lammps/albite_triclinic.dump");
    let mut system = orbitfield::io::load(&[data("lammps/albite_triclinic.data"), path]).unwrap();
    let frame = system.trajectory.frame(0).unwrap();
    let cell = frame.cell.expect("a box");
    assert_eq!(cell.origin_angstrom, [0.0; 3]);
    let ours = inside(&cell, cell.origin_angstrom, &frame.positions_angstrom);
    assert!(ours >= 0.99, "{ours} of the atoms inside the box drawn");
}

#[test]
fn a_dl_poly_cell_is_centred_on_the_origin_and_holds_its_atoms() {
    for name in ["dlpoly/CONFIG.gz", "dlpoly/HISTORY.gz"] {
        let mut system = orbitfield::io::load(&[data(name)]).unwrap();
        let n = system.trajectory.n_frames();
        for i in 0..n {
            let frame = system.trajectory.frame(i).unwrap();
            let cell = frame.cell.expect("a box");
            let m = cell.matrix_angstrom();
            for k in 0..3 {
                let centre = cell.origin_angstrom[k] + 0.5 * (m[0][k] + m[1][k] + m[2][k]);
                assert!(centre.abs() < 1e-9, "{name} frame {i}: centre {centre}");
            }
            let ours = inside(&cell, cell.origin_angstrom, &frame.positions_angstrom);
            assert!(
                ours >= 0.99,
                "{name} frame {i}: {ours} of the atoms inside the box drawn"
            );
            let from_zero = inside(&cell, [0.0; 3], &frame.positions_angstrom);
            assert!(
                from_zero < 0.5,
                "{name} frame {i}: {from_zero} inside a box drawn from zero"
            );
        }
    }
}

#[test]
fn info_names_where_the_box_starts() {
    let path = data("lammps/ifabp_apo_100mM.data.bz2");
    let lo = lammps_lo(&text_of(&path));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_orbitfield"))
        .arg("info")
        .arg(&path)
        .arg("--json")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for k in 0..3 {
        assert!(
            (v["box_origin_angstrom"][k].as_f64().unwrap() - lo[k]).abs() < 1e-6,
            "{v}"
        );
    }
    let text = std::process::Command::new(env!("CARGO_BIN_EXE_orbitfield"))
        .arg("info")
        .arg(&path)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains(&format!("from ({:.3}, ", lo[0])), "{text}");
}

#[test]
fn a_box_the_file_does_not_place_is_drawn_where_its_atoms_are() {
    // CHARMM's triclinic water box and a LAMMPS box of -L/2..L/2 read through DCD (which stores no
    // origin) are centred on zero; GROMACS's are from zero. The drawn box holds the atoms.
    let cases: [(&[&str], bool); 3] = [
        (&["tip125_tric_C36.psf", "tip125_tric_C36.dcd"], true),
        (
            &["lammps/ifabp_apo_100mM.data.bz2", "lammps/ifabp_apo_100mM.dcd.gz"],
            true,
        ),
        (&["adk_oplsaa.gro", "adk_oplsaa.xtc"], false),
    ];
    for (names, centred) in cases {
        let paths: Vec<PathBuf> = names.iter().map(|n| data(n)).collect();
        let mut system = orbitfield::io::load(&paths).unwrap();
        let frame = system.trajectory.frame(system.trajectory.n_frames() - 1).unwrap();
        let cell = frame.cell.expect("a box");
        assert_eq!(
            cell.origin_angstrom, [0.0; 3],
            "{names:?}: the trajectory gives no origin"
        );
        let drawn = cell.drawn_origin_angstrom(&frame.positions_angstrom);
        let want = if centred {
            cell.centred_on([0.0; 3]).origin_angstrom
        } else {
            [0.0; 3]
        };
        assert_eq!(drawn, want, "{names:?}");
        let held = inside(&cell, drawn, &frame.positions_angstrom);
        let other = if centred {
            [0.0; 3]
        } else {
            cell.centred_on([0.0; 3]).origin_angstrom
        };
        let elsewhere = inside(&cell, other, &frame.positions_angstrom);
        assert!(
            held > elsewhere + 0.3,
            "{names:?}: {held} inside the box drawn, {elsewhere} the other way"
        );
        // CHARMM and GROMACS wrap a triclinic box's water into the image's own compact shape, not
        // the parallelepiped drawn.
        let enough = if cell.is_orthorhombic() { 0.9 } else { 0.6 };
        assert!(held > enough, "{names:?}: {held} of the atoms inside the box drawn");
    }
}
