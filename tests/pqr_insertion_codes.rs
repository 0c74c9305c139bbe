//! Insertion codes in PQR files as pdb2pqr writes them (thrombin's chymotrypsin numbering: `60`,
//! `60A`, `60B` in one whitespace field, with or without a chain field): read as residue 60 with
//! its code, selected by `resid 60A`, and written back by the PQR and PDB writers.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use orbitfield::model::select::Selection;

/// Lines in pdb2pqr's layout; the residue field of each atom, as the test expects it read.
const PQR: &str = "\
REMARK   1 PQR file in pdb2pqr's layout
ATOM      1  N    TRP    60      26.922  -10.301   14.716 -0.4157 1.8240
ATOM      2  CA   TRP    60      26.690  -10.620   16.125 -0.0275 1.9080
ATOM      3  N    TYR    60A     26.260  -11.444   15.279 -0.4700 1.8500
ATOM      4  CA   TYR    60A     25.978  -12.607   16.150  0.0700 2.2750
ATOM      5  N    PRO H  60B     27.100  -13.200   17.000 -0.2900 1.8500
ATOM      6  CA   PRO H  60B     27.900  -14.100   17.700  0.0200 2.2750
ATOM      7  N    GLY H  61      28.500  -15.000   18.300 -0.4157 1.8240
END
";

fn load(path: &std::path::Path) -> orbitfield::io::System {
    orbitfield::io::load(&[path.to_path_buf()]).unwrap()
}

fn codes(system: &orbitfield::io::System) -> Vec<(i32, char)> {
    let s = &system.structure;
    (0..s.len()).map(|i| (s.resids[i], s.icode(i) as char)).collect()
}

#[test]
fn insertion_codes_are_read_selected_and_written_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("thrombin.pqr");
    std::fs::write(&path, PQR).unwrap();
    let mut system = load(&path);
    let want = vec![
        (60, ' '),
        (60, ' '),
        (60, 'A'),
        (60, 'A'),
        (60, 'B'),
        (60, 'B'),
        (61, ' '),
    ];
    assert_eq!(codes(&system), want);
    assert_eq!(system.structure.chains[4].as_str(), "H");
    let frame = system.trajectory.frame(0).unwrap();
    let pick = |text: &str| -> Vec<usize> {
        Selection::parse(text)
            .unwrap()
            .evaluate(&system.structure, Some(&frame))
            .iter()
            .enumerate()
            .filter_map(|(i, &m)| m.then_some(i))
            .collect()
    };
    assert_eq!(pick("resid 60A"), vec![2, 3]);
    assert_eq!(pick("resid 60B and name CA"), vec![5]);
    assert_eq!(pick("resid 60").len(), 6, "every code of 60, as VMD's resid");
    assert_eq!(pick("resid 60 and insertion \"\""), vec![0, 1]);
    // Charges and radii are the file's.
    assert!((system.structure.charges_e.as_ref().unwrap()[3] - 0.07).abs() < 1e-6);
    // Written back as PQR and as PDB: the same codes.
    let n = system.trajectory.n_frames();
    assert_eq!(n, 1);
    for name in ["again.pqr", "again.pdb"] {
        let out = dir.path().join(name);
        orbitfield::io::write::write_frames(&out, &system.structure, &mut system.trajectory, None, &[0], &mut |_| {})
            .unwrap();
        assert_eq!(codes(&load(&out)), want, "{name}");
    }
}
