//! Unit tests of `select`.

use super::*;
use crate::model::Name8;

fn toy() -> (Structure, Frame) {
    let mut s = Structure::default();
    let mut f = Frame::default();
    let atoms = [
        ("N", "ALA", 1, 7, [0.0, 0.0, 0.0]),
        ("CA", "ALA", 1, 6, [1.5, 0.0, 0.0]),
        ("HA", "ALA", 1, 1, [1.5, 1.0, 0.0]),
        ("C", "ALA", 1, 6, [2.5, 0.0, 0.0]),
        ("O", "ALA", 1, 8, [3.5, 0.0, 0.0]),
        ("OW", "SOL", 2, 8, [10.0, 0.0, 0.0]),
        ("HW1", "SOL", 2, 1, [10.9, 0.0, 0.0]),
        ("HW2", "SOL", 2, 1, [9.7, 0.9, 0.0]),
        ("C1", "LIG", 3, 6, [14.0, 0.0, 0.0]),
    ];
    for (name, resname, resid, z, p) in atoms {
        s.push_atom(
            Element(z),
            Name8::from(name),
            Name8::from(resname),
            resid,
            Name8::from("A"),
            Name8::from("P1"),
        );
        f.positions_angstrom.push(p);
    }
    s.charges_e = Some(vec![-0.5, 0.1, 0.1, 0.5, -0.5, -0.8, 0.4, 0.4, 0.0]);
    (s, f)
}

fn count(text: &str) -> usize {
    let (s, f) = toy();
    Selection::parse(text).unwrap().indices(&s, Some(&f)).len()
}

#[test]
fn ions_by_residue_name() {
    let mut s = Structure::default();
    for (name, resname, z) in [("NA", "SOD", 11), ("CL", "CLA", 17), ("OW", "SOL", 8), ("CA", "ALA", 6)] {
        s.push_atom(
            Element(z),
            Name8::from(name),
            Name8::from(resname),
            1,
            Name8::EMPTY,
            Name8::EMPTY,
        );
    }
    let ions = Selection::parse("ion").unwrap().indices(&s, None);
    assert_eq!(ions, vec![0, 1]);
    let solvent = Selection::parse("water or ions").unwrap().indices(&s, None);
    assert_eq!(solvent, vec![0, 1, 2]);
    // Neither polymer nor solvent: none here; a ligand added after them is.
    assert!(Selection::parse("ligand").unwrap().indices(&s, None).is_empty());
    s.push_atom(
        Element(6),
        Name8::from("C1"),
        Name8::from("UNL"),
        2,
        Name8::EMPTY,
        Name8::EMPTY,
    );
    assert_eq!(Selection::parse("ligand").unwrap().indices(&s, None), vec![4]);
}

#[test]
fn alternate_locations() {
    let (mut s, f) = toy();
    assert!(Selection::parse("altloc A").unwrap().indices(&s, Some(&f)).is_empty());
    s.altlocs = Some(b"  AB     ".to_vec());
    let sel = |t: &str| Selection::parse(t).unwrap().indices(&s, Some(&f));
    assert_eq!(sel("altloc A"), vec![2]);
    assert_eq!(sel("altloc A B"), vec![2, 3]);
    assert_eq!(sel("protein and not altloc B").len(), 4);
    assert!(s.are_alternates(2, 3));
    assert!(!s.are_alternates(1, 2));
}

#[test]
fn keywords_and_logic() {
    assert_eq!(count("all"), 9);
    assert_eq!(count("protein"), 5);
    assert_eq!(count("backbone"), 4);
    assert_eq!(count("water"), 3);
    assert_eq!(count("hydrogen"), 3);
    assert_eq!(count("not hydrogen and not water"), 5);
    assert_eq!(count("name C*"), 3);
    assert_eq!(count("name \"C.*\""), 3, "VMD's regular expression");
    assert_eq!(count("name \"^C.*$\""), 3);
    assert_eq!(count("name O or name OW"), 2);
    assert_eq!(count("resid 1 to 2"), 8);
    assert_eq!(count("resid 2:3"), 4);
    assert_eq!(count("index 0 8"), 2);
    assert_eq!(count("bynum 1"), 1);
    assert_eq!(count("charge < -0.4"), 3);
    assert_eq!(count("prop x >= 10"), 3);
    assert_eq!(count("(protein or water) and element O"), 2);
    assert_eq!(count("same residue as name HW1"), 3);
    assert_eq!(count("within 4.5 of resname LIG"), 4);
    assert_eq!(count("around 4.5 resname LIG"), 3);
    assert_eq!(count("water and not within 3 of protein"), 3);
}

#[test]
fn errors_point_at_the_token() {
    let e = Selection::parse("name CA and frobnicate 3").unwrap_err();
    assert_eq!(e.column, 12);
    assert!(e.message.contains("frobnicate"));
    let e = Selection::parse("(name CA").unwrap_err();
    assert!(e.message.contains("')'"), "{e}");
    assert!(Selection::parse("name CA)").unwrap_err().message.contains("unbalanced"));
    assert!(Selection::parse("").is_err());
    assert!(Selection::parse("resid a").is_err());
    assert!(Selection::parse("within of protein").is_err());
    assert!(Selection::parse("x <").is_err());
    assert!(Selection::parse("name").is_err());
}

#[test]
fn minimum_image_triclinic_matches_brute_force() {
    // A triclinic box, and a rectangular one (whose nearest image is found axis by axis).
    for cell in [
        UnitCell::new([20.0, 22.0, 25.0], [70.0, 80.0, 95.0]),
        UnitCell::orthorhombic([17.0, 23.0, 31.0]),
    ] {
        minimum_image_matches_brute_force(cell);
    }
}

fn minimum_image_matches_brute_force(cell: UnitCell) {
    let mi = MinImage::new(&cell);
    let m = cell.matrix_angstrom();
    let mut seed = 12345u64;
    let mut rnd = || {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((seed >> 11) as f64 / (1u64 << 53) as f64) * 40.0 - 20.0
    };
    for _ in 0..200 {
        let p = [rnd(), rnd(), rnd()];
        let q = [rnd(), rnd(), rnd()];
        let mut best = f64::INFINITY;
        for i in -3..=3 {
            for j in -3..=3 {
                for k in -3..=3 {
                    let t = [0, 1, 2].map(|a| f64::from(i) * m[0][a] + f64::from(j) * m[1][a] + f64::from(k) * m[2][a]);
                    let d: f64 = (0..3).map(|a| (p[a] - q[a] + t[a]).powi(2)).sum();
                    best = best.min(d);
                }
            }
        }
        assert!(
            (mi.distance2(p, q) - best).abs() < 1e-9,
            "{} vs {best}",
            mi.distance2(p, q)
        );
        // The vector itself: p - q moved by whole cell vectors.
        let d = mi.delta(p, q);
        let shift = mi.fractional([0, 1, 2].map(|a| p[a] - q[a] - d[a]));
        assert!(shift.iter().all(|x| (x - x.round()).abs() < 1e-9), "{shift:?}");
    }
}

/// `within` in a periodic cell (a cell list in fractional coordinates) flags exactly what the
/// minimum-image distance to every reference atom flags: fresh random points in a triclinic and a
/// rectangular box, inside and outside the cell, with cutoffs from a tenth of the box to more than
/// half of it.
#[test]
fn periodic_within_matches_the_minimum_image_brute_force() {
    let seed = crate::model::fresh::seed();
    let mut mix = crate::model::fresh::Mix(seed);
    let mut rnd = move || mix.uniform(0.0, 1.0);
    for cell in [
        UnitCell::new([30.0, 34.0, 38.0], [70.0, 80.0, 95.0]),
        UnitCell::orthorhombic([27.0, 33.0, 41.0]),
    ] {
        let mi = MinImage::new(&cell);
        let pos: Vec<[f32; 3]> = (0..1500)
            .map(|_| [0, 1, 2].map(|_| (rnd() * 70.0 - 20.0) as f32))
            .collect();
        let reference: Vec<bool> = (0..pos.len()).map(|_| rnd() < 0.1).collect();
        for cutoff in [3.0, 7.5, 14.0, 21.0] {
            let got = super::within::within(&pos, &reference, cutoff, Some(&cell));
            for (i, p) in pos.iter().enumerate() {
                let want = (0..pos.len())
                    .filter(|&j| reference[j])
                    .any(|j| mi.distance2(p.map(f64::from), pos[j].map(f64::from)) <= cutoff * cutoff);
                assert_eq!(
                    got[i], want,
                    "seed {seed}: atom {i} at {p:?}, cutoff {cutoff} A, {cell:?}"
                );
            }
        }
    }
}

#[test]
fn literal_words_name_values_with_dots_and_dashes() {
    let (mut s, f) = toy();
    let odd = Name8::from("S.1-x");
    for seg in s.segids.iter_mut().take(5) {
        *seg = odd;
    }
    for (value, want) in [("S.1-x", 5), ("P1", 4), ("A", 0)] {
        let text = format!("segid {}", literal_word(value));
        let picked = Selection::parse(&text).unwrap().indices(&s, Some(&f)).len();
        assert_eq!(picked, want, "{text}");
    }
    assert_eq!(literal_word("4AKE"), "4AKE");
    assert_eq!(literal_word(""), "''");
}

/// `protein` takes a modified amino acid in by its backbone (atoms N, CA, C), as VMD and ChimeraX
/// do: methionine sulfoxide (SME) between two alanines; a ligand, water and a calcium ion are left
/// out, and `backbone` and `sidechain` split the modified residue as a standard one.
#[test]
fn protein_takes_modified_residues_in_by_their_backbone() {
    let mut s = Structure::default();
    let atoms = [
        ("N", "ALA", 1, 7),
        ("CA", "ALA", 1, 6),
        ("C", "ALA", 1, 6),
        ("O", "ALA", 1, 8),
        ("N", "SME", 2, 7),
        ("CA", "SME", 2, 6),
        ("C", "SME", 2, 6),
        ("O", "SME", 2, 8),
        ("CB", "SME", 2, 6),
        ("SD", "SME", 2, 16),
        ("OD", "SME", 2, 8),
        ("N", "ALA", 3, 7),
        ("CA", "ALA", 3, 6),
        ("C", "ALA", 3, 6),
        ("C1", "LIG", 4, 6),
        ("N1", "LIG", 4, 7),
        ("CA", "CA", 5, 20),
        ("OW", "SOL", 6, 8),
    ];
    for (name, resname, resid, z) in atoms {
        s.push_atom(
            Element(z),
            Name8::from(name),
            Name8::from(resname),
            resid,
            Name8::from("A"),
            Name8::from("P1"),
        );
    }
    let picked = |text: &str| Selection::parse(text).unwrap().indices(&s, None);
    assert_eq!(picked("protein"), (0..14).collect::<Vec<u32>>());
    assert_eq!(picked("resname SME and backbone"), vec![4, 5, 6, 7]);
    assert_eq!(picked("resname SME and sidechain"), vec![8, 9, 10]);
    assert!(picked("not protein").iter().all(|&i| i >= 14));
}
