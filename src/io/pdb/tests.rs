//! Unit tests of the PDB and PQR reader.

use super::*;

const TWO_MODELS: &str = "\
CRYST1   10.000   20.000   30.000  90.00  90.00 120.00 P 1           1
MODEL        1
ATOM      1  N   ALA A   1       1.000   2.000   3.000  1.00  0.00           N
ATOM      2  CA AALA A   1       2.000   2.000   3.000  0.50  0.00
ATOM      3  CA BALA A   1       2.100   2.000   3.000  0.50  0.00
HETATM    4 FE   HEM A   2       5.000  -6.000   7.500  1.00  0.00
TER
ENDMDL
MODEL        2
ATOM      1  N   ALA A   1       1.500   2.000   3.000  1.00  0.00           N
ATOM      2  CA AALA A   1       2.500   2.000   3.000  0.50  0.00
ATOM      3  CA BALA A   1       2.600   2.000   3.000  0.50  0.00
HETATM    4 FE   HEM A   2       5.500  -6.000   7.500  1.00  0.00
ENDMDL
CONECT    1    2
CONECT    2    1    4
END
";

#[test]
fn models_altlocs_cell_conect() {
    let p = read(Path::new("t.pdb"), TWO_MODELS.as_bytes()).unwrap();
    let s = &p.structure;
    assert_eq!(s.len(), 4, "both alternate locations are atoms");
    assert_eq!(p.frames.len(), 2);
    assert_eq!(s.elements, vec![Element::N, Element::C, Element::C, Element(26)]);
    assert_eq!(s.altlocs.as_deref(), Some(&b"  AB "[1..]));
    assert_eq!(p.frames[1].positions_angstrom[1], [2.5, 2.0, 3.0]);
    assert_eq!(p.frames[1].positions_angstrom[2], [2.6, 2.0, 3.0]);
    assert_eq!(s.bonds, vec![[0, 1], [1, 3]]);
    let cell = p.frames[0].cell.unwrap();
    assert_eq!(cell.angles_degree[2], 120.0);
    assert_eq!(p.frames[1].cell, Some(cell));
}

#[test]
fn a_file_ending_on_an_atom_line_without_end_is_said_to_be_cut_short() {
    let whole = "\
ATOM      1  N   ALA A   1       1.000   2.000   3.000  1.00  0.00           N
ATOM      2  CA  ALA A   1       2.000   2.000   3.000  1.00  0.00           C
END
";
    let p = read(Path::new("t.pdb"), whole.as_bytes()).unwrap();
    assert!(p.warnings.iter().all(|w| !w.contains("cut short")), "{:?}", p.warnings);
    // Without END (and a TER or other record last): still complete.
    let with_ter = whole.replace("END\n", "TER\n");
    let p = read(Path::new("t.pdb"), with_ter.as_bytes()).unwrap();
    assert!(p.warnings.iter().all(|w| !w.contains("cut short")), "{:?}", p.warnings);
    // Cut after the first atom's line.
    let cut: String = whole.lines().take(1).map(|l| format!("{l}\n")).collect();
    let p = read(Path::new("t.pdb"), cut.as_bytes()).unwrap();
    assert_eq!(p.structure.len(), 1);
    let w = p.warnings.iter().find(|w| w.contains("cut short")).expect("a warning");
    assert!(w.contains("line 1") && w.contains("atoms read: 1"), "{w}");
    // The multi-model file cut inside its first model: the same words.
    let cut: String = TWO_MODELS.lines().take(5).map(|l| format!("{l}\n")).collect();
    let p = read(Path::new("t.pdb"), cut.as_bytes()).unwrap();
    assert!(p.warnings.iter().any(|w| w.contains("cut short")), "{:?}", p.warnings);
}

#[test]
fn a_model_unlike_the_first_ends_the_frames_and_is_named() {
    let fewer = TWO_MODELS.replace(
        "HETATM    4 FE   HEM A   2       5.500  -6.000   7.500  1.00  0.00\n",
        "",
    );
    let more = TWO_MODELS.replace(
        "HETATM    4 FE   HEM A   2       5.500  -6.000   7.500  1.00  0.00\n",
        "HETATM    4 FE   HEM A   2       5.500  -6.000   7.500  1.00  0.00\n\
         HETATM    5 FE   HEM A   3       5.500  -6.000   7.500  1.00  0.00\n",
    );
    for (text, found) in [(fewer, "has 3 atoms"), (more, "has more than 4 atoms")] {
        let p = read(Path::new("t.pdb"), text.as_bytes()).unwrap();
        assert_eq!((p.structure.len(), p.frames.len()), (4, 1));
        let w = p.warnings.join("; ");
        assert!(w.contains("starting at line 9") && w.contains(found), "{w}");
        assert!(!w.contains("cut short") && !w.contains("complete frame"), "{w}");
    }
}

#[test]
fn last_model_cut_short_keeps_the_complete_ones() {
    let cut = &TWO_MODELS[..TWO_MODELS.find("ATOM      3  CA BALA A   1       2.600").unwrap()];
    let p = read(Path::new("t.pdb"), cut.as_bytes()).unwrap();
    assert_eq!(p.frames.len(), 1);
    assert_eq!(
        p.warnings,
        ["1 complete frame found, the next one starts at line 9 but the file ends at line 11"]
    );
}

#[test]
fn hybrid36_and_wide_resids() {
    let text = "\
ATOM  A0000  O   HOH W9999       1.000   2.000   3.000  1.00  0.00           O
ATOM  A0001  O   HOH WA000       1.000   2.000   3.000  1.00  0.00           O
ATOM  A0002  O   TIP3 12345      1.000   2.000   3.000  1.00  0.00      WT1  O
";
    let p = read(Path::new("t.pdb"), text.as_bytes()).unwrap();
    assert_eq!(p.structure.resids, vec![9999, 10000, 12345]);
    assert_eq!(p.structure.resnames[2].as_str(), "TIP3");
    assert_eq!(p.structure.segids[2].as_str(), "WT1");
}

#[test]
fn residue_numbers_that_wrap_past_9999_count_on() {
    let text = "\
ATOM      1  OW  SOL  9998       1.000   2.000   3.000  1.00  0.00
ATOM      2  OW  SOL  9999       1.000   2.000   3.000  1.00  0.00
ATOM      3  OW  SOL     0       1.000   2.000   3.000  1.00  0.00
ATOM      4  OW  SOL  9999       1.000   2.000   3.000  1.00  0.00
ATOM      5  OW  SOL     1       1.000   2.000   3.000  1.00  0.00
ATOM      6  N   ALA B   1       1.000   2.000   3.000  1.00  0.00
ATOM      7  N   ALA B   2       1.000   2.000   3.000  1.00  0.00
";
    let p = read(Path::new("t.pdb"), text.as_bytes()).unwrap();
    // A second wrap within one chain counts on from 20000; a new chain starts again.
    assert_eq!(p.structure.resids, vec![9998, 9999, 10000, 19999, 20001, 1, 2]);
}

#[test]
fn gromos_residue_names_of_four_letters_keep_their_chain() {
    let text = "\
ATOM     44  C   ARG A   3      33.025  27.725  -0.959  1.00  0.00
ATOM     46  N   LYSHA   4      32.464  26.575  -0.595  1.00  0.00
ATOM     47  N   HISBA   5      32.464  26.575  -0.595  1.00  0.00
";
    let p = read(Path::new("t.pdb"), text.as_bytes()).unwrap();
    let names: Vec<&str> = p.structure.resnames.iter().map(|r| r.as_str()).collect();
    assert_eq!(names, ["ARG", "LYSH", "HISB"]);
    assert!(p.structure.chains.iter().all(|c| c.as_str() == "A"));
}

#[test]
fn a_box_given_in_the_first_model_holds_for_the_models_after_it() {
    let text = "\
MODEL 1
CRYST1  216.489  216.489  216.489  90.00  90.00  90.00 P 1           1
ATOM      1  CA  ALA A   1       1.000   2.000   3.000  1.00  0.00
ENDMDL
MODEL 2
ATOM      1  CA  ALA A   1       1.500   2.000   3.000  1.00  0.00
ENDMDL
MODEL 3
CRYST1   50.000   50.000   50.000  90.00  90.00  90.00 P 1           1
ATOM      1  CA  ALA A   1       1.500   2.000   3.000  1.00  0.00
ENDMDL
MODEL 4
ATOM      1  CA  ALA A   1       1.500   2.000   3.000  1.00  0.00
ENDMDL
";
    let p = read(Path::new("t.pdb"), text.as_bytes()).unwrap();
    let a: Vec<f64> = p.frames.iter().map(|f| f.cell.unwrap().lengths_angstrom[0]).collect();
    assert_eq!(a, [216.489, 216.489, 50.0, 50.0]);
}

#[test]
fn bad_coordinates_are_located() {
    let text = "ATOM      1  N   ALA A   1       1.000   x.000   3.000\n";
    let e = read(Path::new("t.pdb"), text.as_bytes()).unwrap_err();
    assert_eq!(e.location, crate::io::Location::Line(1));
    assert!(e.message.contains("y coordinate"), "{e}");
    let e = read(Path::new("t.pdb"), b"ATOM      1  N   ALA A   1       1.000").unwrap_err();
    assert!(e.message.contains("columns 31-54"), "{e}");
}

/// PDB2PQR writes fixed PDB columns; coordinates below -99.999 A run into each other there and
/// are read from the columns, the charge and radius from the two fields after column 54.
#[test]
fn pqr_with_coordinates_run_together() {
    let text = "\
ATOM      1  N   MET A   1    -100.123-200.456  10.410 -0.3000 1.8500
ATOM      2  CA  MET A   1     -99.123 -99.456  10.410  0.3000 1.9000
";
    let p = read_pqr(Path::new("t.pqr"), text.as_bytes()).unwrap();
    let s = &p.structure;
    assert_eq!(s.len(), 2);
    assert_eq!(p.frames[0].positions_angstrom[0], [-100.123, -200.456, 10.41]);
    assert_eq!(s.charges_e.as_deref(), Some(&[-0.3f32, 0.3][..]));
    assert_eq!(s.radii_angstrom.as_deref(), Some(&[1.85f32, 1.9][..]));
    assert_eq!(s.names[0].as_str(), "N");
    assert_eq!(s.chains[0].as_str(), "A");
    assert_eq!(s.elements[0], Element::N);
    // A five-digit serial against HETATM, as fixed columns write it past atom 9999.
    let text = "\
ATOM   9999  N   MET A   1     -11.921  26.307  10.410 -0.3000 1.8500
HETATM10000  O   HOH W   2       1.000   2.000   3.000 -0.8340 1.7682
";
    let p = read_pqr(Path::new("t.pqr"), text.as_bytes()).unwrap();
    let s = &p.structure;
    assert_eq!(s.names[1].as_str(), "O");
    assert_eq!(s.resnames[1].as_str(), "HOH");
    assert_eq!(s.chains[1].as_str(), "W");
    assert_eq!(s.elements[1], Element::O);
    assert_eq!(s.charges_e.as_deref(), Some(&[-0.3f32, -0.834][..]));
    // Not in PDB columns either: the whitespace reading's message stands.
    let e = read_pqr(Path::new("t.pqr"), b"ATOM 1 N MET 1 1.0-2.0 3.0 0.1 1.5\n").unwrap_err();
    assert!(e.message.contains("field"), "{e}");
}

#[test]
fn pqr_with_and_without_chain() {
    let text = "\
ATOM      1  N    MET     1     -11.921   26.307   10.410 -0.3000 1.8500
ATOM      2  CL   CL  B   2       1.000    2.000    3.000 -1.0000 1.9370
";
    let p = read_pqr(Path::new("t.pqr"), text.as_bytes()).unwrap();
    let s = &p.structure;
    assert_eq!(s.charges_e.as_deref(), Some(&[-0.3f32, -1.0][..]));
    assert_eq!(s.radii_angstrom.as_deref(), Some(&[1.85f32, 1.937][..]));
    assert_eq!(s.chains[1].as_str(), "B");
    assert_eq!(s.elements, vec![Element::N, Element(17)]);
    assert_eq!(p.frames[0].positions_angstrom[0], [-11.921, 26.307, 10.41]);
}
