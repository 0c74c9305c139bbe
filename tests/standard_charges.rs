//! Charges given to a structure whose files carry none (`model::charges`: CHARMM22 by residue and atom
//! name, each hydrogen's charge on its heavy atom) against two independent sources of the same force
//! field on adenylate kinase: `adk.psf` (psfgen's CHARMM22 charges for every atom, CHARMM names, the
//! file's bonds) and `adk_open.pqr` (PDB2PQR 1.5 `--ff=charmm`: PDB names such as `OXT` and `CD1`,
//! hydrogens placed by PDB2PQR). With the files' hydrogens every atom must carry the file's own charge
//! (the N terminus NH3+ and the C terminus COO- included); with the hydrogens removed (a crystal
//! structure's atoms) each heavy atom must carry its own charge plus its hydrogens'. Then what the loader does with a
//! PDB file (charges given, said once) and a residue the table lacks (zero, named in the note).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use orbitfield::io::load::load;
use orbitfield::model::Structure;
use orbitfield::model::charges::standard_charges;
use std::path::PathBuf;

fn data(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(rel)
}

/// The file's charges with each hydrogen's moved onto the heavy atom `parent` names.
fn united(charges: &[f32], hydrogen: &[bool], parent: &dyn Fn(usize) -> usize) -> Vec<f64> {
    let mut out: Vec<f64> = charges.iter().map(|&q| f64::from(q)).collect();
    for h in (0..charges.len()).filter(|&i| hydrogen[i]) {
        out[parent(h)] += out[h];
        out[h] = 0.0;
    }
    out
}

/// The atoms of `s` for which `keep` holds, in order (bonds dropped).
fn subset(s: &Structure, keep: &[bool]) -> Structure {
    let mut out = Structure::default();
    for i in (0..s.len()).filter(|&i| keep[i]) {
        out.push_atom(
            s.elements[i],
            s.names[i],
            s.resnames[i],
            s.resids[i],
            s.chains[i],
            s.segids[i],
        );
    }
    out
}

/// Assigns charges to `s` without its own and compares with `reference` per atom (e).
fn check(what: &str, s: &Structure, positions: &[[f32; 3]], reference: &[f64]) -> f64 {
    let mut bare = s.clone();
    bare.charges_e = None;
    let got = standard_charges(&bare, positions).expect("a protein gets charges");
    assert!(got.unknown.is_empty(), "{what}: {:?}", got.unknown);
    assert_eq!(got.unknown_atoms, 0, "{what}");
    let mut worst = (0.0f64, 0usize);
    for (i, (&q, &r)) in got.charges_e.iter().zip(reference).enumerate() {
        let d = (f64::from(q) - r).abs();
        if d > worst.0 {
            worst = (d, i);
        }
    }
    let i = worst.1;
    assert!(
        worst.0 < 1e-4,
        "{what}: atom {i} ({} {} {}): {} against {}",
        s.names[i],
        s.resnames[i],
        s.resids[i],
        got.charges_e[i],
        reference[i]
    );
    let net: f64 = reference.iter().sum();
    assert!(
        (got.net_e - net).abs() < 1e-3,
        "{what}: net {} against {net}",
        got.net_e
    );
    got.net_e
}

#[test]
fn charges_match_psfgen_and_pdb2pqr_with_and_without_hydrogens() {
    // psfgen's charges, hydrogens found by the file's bonds.
    let mut psf = load(&[data("md/adk.psf"), data("md/adk_dims.dcd")]).unwrap();
    let s = psf.structure.clone();
    let frame = psf.trajectory.frame(0).unwrap();
    let hydrogen: Vec<bool> = s.elements.iter().map(|e| e.number() == 1).collect();
    let partner = |h: usize| {
        s.bonds
            .iter()
            .find_map(|&[a, b]| match (a as usize, b as usize) {
                (a, b) if a == h => Some(b),
                (a, b) if b == h => Some(a),
                _ => None,
            })
            .unwrap()
    };
    let own: Vec<f64> = s.charges_e.as_ref().unwrap().iter().map(|&q| f64::from(q)).collect();
    let net = check("adk.psf", &s, &frame.positions_angstrom, &own);
    let reference = united(s.charges_e.as_ref().unwrap(), &hydrogen, &partner);
    assert!((net - -4.0).abs() < 1e-3, "adk's net charge {net}");
    let heavy: Vec<bool> = hydrogen.iter().map(|h| !h).collect();
    let heavy_positions: Vec<[f32; 3]> = (0..s.len())
        .filter(|&i| heavy[i])
        .map(|i| frame.positions_angstrom[i])
        .collect();
    let heavy_reference: Vec<f64> = (0..s.len()).filter(|&i| heavy[i]).map(|i| reference[i]).collect();
    check(
        "adk.psf, heavy atoms",
        &subset(&s, &heavy),
        &heavy_positions,
        &heavy_reference,
    );

    // PDB2PQR's charges, PDB names, hydrogens on the nearest heavy atom of their residue.
    let mut pqr = load(&[data("md/adk_open.pqr")]).unwrap();
    let s = pqr.structure.clone();
    let frame = pqr.trajectory.frame(0).unwrap();
    let x = &frame.positions_angstrom;
    let hydrogen: Vec<bool> = s.elements.iter().map(|e| e.number() == 1).collect();
    let nearest = |h: usize| {
        let d2 = |j: usize| (0..3).map(|k| (x[h][k] - x[j][k]).powi(2)).sum::<f32>();
        (0..s.len())
            .filter(|&j| !hydrogen[j] && s.resids[j] == s.resids[h])
            .min_by(|&a, &b| d2(a).total_cmp(&d2(b)))
            .unwrap()
    };
    let own: Vec<f64> = s.charges_e.as_ref().unwrap().iter().map(|&q| f64::from(q)).collect();
    check("adk_open.pqr", &s, x, &own);
    let reference = united(s.charges_e.as_ref().unwrap(), &hydrogen, &nearest);
    let heavy: Vec<bool> = hydrogen.iter().map(|h| !h).collect();
    let heavy_positions: Vec<[f32; 3]> = (0..s.len()).filter(|&i| heavy[i]).map(|i| x[i]).collect();
    let heavy_reference: Vec<f64> = (0..s.len()).filter(|&i| heavy[i]).map(|i| reference[i]).collect();
    check(
        "adk_open.pqr, heavy atoms",
        &subset(&s, &heavy),
        &heavy_positions,
        &heavy_reference,
    );
    drop(psf.trajectory);
}

#[test]
fn a_pdb_file_gets_charges_said_once_and_unknown_residues_are_named() {
    let system = load(&[data("md/4E43.pdb.gz")]).unwrap();
    // Cysteine sulphurs within 2.3 A of another cysteine's are a disulfide (CHARMM's DISU: SG -0.08,
    // CB -0.10 with its two HB at +0.09), the others a free thiol (SG -0.23 with its HG1 at +0.16).
    // 4E43 has none, but a cysteine in two alternate locations whose copies of SG lie within 2.3 A;
    // BPTI (5PTI) has three.
    for (file, want_bridged) in [("md/4E43.pdb.gz", 0), ("dssp/5PTI.cif.gz", 6)] {
        let mut sys = load(&[data(file)]).unwrap();
        let s = &sys.structure;
        let x = sys.trajectory.frame(0).unwrap().positions_angstrom;
        let q = s.charges_e.as_ref().unwrap();
        let sg: Vec<usize> = (0..s.len()).filter(|&i| s.names[i].as_str() == "SG").collect();
        // Of alternate locations the first carries the charges (`A`, or none).
        let first = |i: usize| matches!(s.altloc(i), b' ' | b'A');
        let mut bridges = 0;
        for &i in sg.iter().filter(|&&i| first(i)) {
            let bridged = sg.iter().any(|&j| {
                (s.resids[j], s.chains[j]) != (s.resids[i], s.chains[i])
                    && (0..3).map(|k| (x[i][k] - x[j][k]).powi(2)).sum::<f32>() < 2.3 * 2.3
            });
            let want = if bridged { -0.08 } else { -0.23 + 0.16 };
            assert!((q[i] - want).abs() < 1e-5, "{file}: SG {i}: {} against {want}", q[i]);
            bridges += usize::from(bridged);
        }
        assert_eq!(bridges, want_bridged, "{file}");
    }
    let charges = system.structure.charges_e.as_ref().expect("charges given");
    let notes: Vec<&String> = system.warnings.iter().filter(|w| w.contains("CHARMM22")).collect();
    assert_eq!(notes.len(), 1, "{:?}", system.warnings);
    // Whole residues' charges: every amino acid's sum is a whole number of e.
    let s = &system.structure;
    let starts = s.residue_starts();
    let mut whole = 0;
    for w in starts.windows(2) {
        let sum: f64 = (w[0]..w[1]).map(|i| f64::from(charges[i])).sum();
        if (sum - sum.round()).abs() < 1e-3 {
            whole += 1;
        }
    }
    assert!(
        whole * 10 >= (starts.len() - 1) * 9,
        "{whole} of {} residues whole",
        starts.len() - 1
    );

    // A residue the table lacks: zero, and named.
    let mut s = load(&[data("md/adk.psf"), data("md/adk_dims.dcd")]).unwrap();
    let frame = s.trajectory.frame(0).unwrap();
    let mut st = s.structure.clone();
    st.charges_e = None;
    let start = st.residue_starts()[9];
    let end = st.residue_starts()[10];
    for i in start..end {
        st.resnames[i] = "XYZ".into();
    }
    let got = standard_charges(&st, &frame.positions_angstrom).unwrap();
    assert_eq!(got.unknown, vec![("XYZ".to_string(), end - start)]);
    assert!(got.charges_e[start..end].iter().all(|&q| q == 0.0));
    assert!(got.note().contains("XYZ"), "{}", got.note());

    // A file without residues (a small molecule) gets none.
    let xyz = load(&[data("md/2r9r-1b.xyz")]).unwrap();
    assert!(xyz.structure.charges_e.is_none());
}

/// The command line says the note once: `grid esp` on the PDB file (no charges in it) maps the
/// potential of the charges given, the note on standard error.
#[test]
fn the_command_line_says_the_note_once() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("esp.cube");
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_orbitfield"))
        .args(["grid", "esp"])
        .arg(data("md/4E43.pdb.gz"))
        .args(["--spacing", "3", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    assert_eq!(stderr.matches("CHARMM22").count(), 1, "{stderr}");
    assert!(out.exists());
}

/// A PQR file written from a PDB file holds the charges given and the radii the solver takes (the
/// element's van der Waals radius), and reads back as such; a PQR file read and written keeps its
/// own charges and radii; a structure without charges is refused, naming why, with no file left.
#[test]
fn a_pqr_file_holds_the_charges_and_radii() {
    let dir = tempfile::tempdir().unwrap();
    let mut pdb = load(&[data("md/4E43.pdb.gz")]).unwrap();
    let out = dir.path().join("4e43.pqr");
    let s = pdb.structure.clone();
    orbitfield::io::write::write_frames(&out, &s, &mut pdb.trajectory, None, &[0], &mut |_| {}).unwrap();
    let mut back = load(std::slice::from_ref(&out)).unwrap();
    let b = &back.structure;
    assert_eq!(b.len(), s.len());
    let (q0, q1) = (s.charges_e.as_ref().unwrap(), b.charges_e.as_ref().unwrap());
    let radii = b.radii_angstrom.as_ref().unwrap();
    for i in 0..s.len() {
        assert!((q0[i] - q1[i]).abs() < 1e-4, "atom {i}: {} against {}", q1[i], q0[i]);
        let want = s.elements[i].vdw_radius_angstrom();
        assert!(
            (radii[i] - want).abs() < 1e-4,
            "atom {i}: radius {} against {want}",
            radii[i]
        );
        assert_eq!(b.names[i], s.names[i]);
        assert_eq!(b.resids[i], s.resids[i]);
    }
    let (p0, p1) = (pdb.trajectory.frame(0).unwrap(), back.trajectory.frame(0).unwrap());
    for (a, c) in p0.positions_angstrom.iter().zip(&p1.positions_angstrom) {
        assert!((0..3).all(|k| (a[k] - c[k]).abs() < 1e-3));
    }

    let mut pqr = load(&[data("md/adk_open.pqr")]).unwrap();
    let again = dir.path().join("adk.pqr");
    let s = pqr.structure.clone();
    orbitfield::io::write::write_frames(&again, &s, &mut pqr.trajectory, None, &[0], &mut |_| {}).unwrap();
    let b = load(&[again]).unwrap().structure;
    for i in 0..s.len() {
        assert!((s.charges_e.as_ref().unwrap()[i] - b.charges_e.as_ref().unwrap()[i]).abs() < 1e-4);
        assert!((s.radii_angstrom.as_ref().unwrap()[i] - b.radii_angstrom.as_ref().unwrap()[i]).abs() < 1e-4);
    }

    let mut xyz = load(&[data("md/2r9r-1b.xyz")]).unwrap();
    let refused = dir.path().join("x.pqr");
    let s = xyz.structure.clone();
    let e = orbitfield::io::write::write_frames(&refused, &s, &mut xyz.trajectory, None, &[0], &mut |_| {})
        .unwrap_err()
        .to_string();
    assert!(e.contains("partial charges"), "{e}");
    assert!(!refused.exists());
}

/// The names that carry a protonation or a terminus: AMBER's and GROMACS's `NALA` (an N terminus
/// wherever it stands), `ASH` and `GLH` (neutral acids: CHARMM's ASPP and GLUP patches). On adk's
/// heavy atoms: a residue renamed `N` + its name gains one e, its N carrying NH3+'s charge; an ASP
/// renamed ASH and a GLU renamed GLH lose their charge, OD2 (OE2) carrying its hydrogen's.
#[test]
fn terminal_and_protonated_names() {
    let mut pqr = load(&[data("md/adk_open.pqr")]).unwrap();
    let s = pqr.structure.clone();
    let frame = pqr.trajectory.frame(0).unwrap();
    let heavy: Vec<bool> = s.elements.iter().map(|e| e.number() != 1).collect();
    let mut h = subset(&s, &heavy);
    let positions: Vec<[f32; 3]> = (0..s.len())
        .filter(|&i| heavy[i])
        .map(|i| frame.positions_angstrom[i])
        .collect();
    let before = standard_charges(&h, &positions).unwrap().charges_e;
    let starts = h.residue_starts();
    let residue_of = |want: &str, skip: usize| {
        (skip..starts.len() - 1)
            .find(|&r| h.resnames[starts[r]].as_str() == want)
            .unwrap()
    };
    let (asp, glu, ala) = (residue_of("ASP", 1), residue_of("GLU", 1), residue_of("ALA", 1));
    let rename = |h: &mut Structure, r: usize, name: &str| {
        for i in starts[r]..starts[r + 1] {
            h.resnames[i] = name.into();
        }
    };
    rename(&mut h, asp, "ASH");
    rename(&mut h, glu, "GLH");
    rename(&mut h, ala, "NALA");
    let after = standard_charges(&h, &positions).unwrap();
    assert!(after.unknown.is_empty(), "{:?}", after.unknown);
    let sum = |q: &[f32], r: usize| (starts[r]..starts[r + 1]).map(|i| f64::from(q[i])).sum::<f64>();
    let at = |r: usize, name: &str| {
        (starts[r]..starts[r + 1])
            .find(|&i| h.names[i].as_str() == name)
            .unwrap()
    };
    assert!((sum(&before, asp) + 1.0).abs() < 1e-4 && sum(&after.charges_e, asp).abs() < 1e-4);
    assert!((sum(&before, glu) + 1.0).abs() < 1e-4 && sum(&after.charges_e, glu).abs() < 1e-4);
    assert!((after.charges_e[at(asp, "OD2")] - (-0.61 + 0.44)).abs() < 1e-5);
    assert!((after.charges_e[at(glu, "OE2")] - (-0.61 + 0.44)).abs() < 1e-5);
    assert!((sum(&after.charges_e, ala) - sum(&before, ala) - 1.0).abs() < 1e-4);
    assert!((after.charges_e[at(ala, "N")] - (-0.30 + 3.0 * 0.33)).abs() < 1e-5);
}
