use super::*;
use crate::model::fresh::{Mix, seed};

/// Fractional coordinates by solving the lower-triangular rows directly (independent of
/// `Periodic`).
fn fractional(m: &[[f64; 3]; 3], p: [f64; 3]) -> [f64; 3] {
    let sc = p[2] / m[2][2];
    let sb = (p[1] - sc * m[2][1]) / m[1][1];
    let sa = (p[0] - sc * m[2][0] - sb * m[1][0]) / m[0][0];
    [sa, sb, sc]
}

fn cart(m: &[[f64; 3]; 3], s: [f64; 3]) -> [f64; 3] {
    [0, 1, 2].map(|k| s[0] * m[0][k] + s[1] * m[1][k] + s[2] * m[2][k])
}

fn dist(p: [f32; 3], q: [f32; 3]) -> f64 {
    sub(p, q).map(|x| x * x).iter().sum::<f64>().sqrt()
}

/// Molecules built whole (random trees with a few rings, bonds 1.0-1.6 A), placed at random in a
/// random triclinic box and beyond it: positions, bonds, and each atom's molecule.
fn molecules(rng: &mut Mix, m: &[[f64; 3]; 3], count: usize) -> (Vec<[f32; 3]>, Vec<[u32; 2]>, Vec<usize>) {
    let (mut pos, mut bonds, mut mol) = (Vec::new(), Vec::new(), Vec::new());
    for id in 0..count {
        let size = 1 + rng.below(60);
        let first = pos.len();
        let centre = cart(m, [0; 3].map(|_| rng.uniform(-1.0, 2.0)));
        pos.push(centre.map(|x| x as f32));
        mol.push(id);
        for k in 1..size {
            let parent = first + rng.below(k);
            let dir = [0; 3].map(|_| rng.uniform(-1.0, 1.0));
            let len = dir.iter().map(|x| x * x).sum::<f64>().sqrt().max(1e-3);
            let bond = rng.uniform(1.0, 1.6);
            let p = pos[parent];
            pos.push([0, 1, 2].map(|i| p[i] + (dir[i] / len * bond) as f32));
            mol.push(id);
            bonds.push([parent as u32, (first + k) as u32]);
            // A ring closure now and then: a bond to a near atom of the same molecule.
            if k > 3 && rng.below(6) == 0 {
                let other = first + rng.below(k - 1);
                if other != parent && dist(pos[other], pos[first + k]) < 2.5 {
                    bonds.push([other as u32, (first + k) as u32]);
                }
            }
        }
    }
    (pos, bonds, mol)
}

fn random_cell(rng: &mut Mix) -> UnitCell {
    loop {
        let cell = UnitCell::new(
            [0; 3].map(|_| rng.uniform(22.0, 45.0)),
            [0; 3].map(|_| rng.uniform(60.0, 120.0)),
        );
        if cell.is_valid() && cell.volume_angstrom3() > 0.5 * cell.lengths_angstrom.iter().product::<f64>() {
            return cell;
        }
    }
}

#[test]
fn wrapped_molecules_come_back_whole_by_box_vectors_only() {
    for trial in 0..20 {
        let s = seed().wrapping_add(trial);
        let mut rng = Mix(s);
        let cell = random_cell(&mut rng);
        let m = cell.matrix_angstrom();
        let (original, bonds, mol) = molecules(&mut rng, &m, 30);
        // Every atom wrapped into the cell on its own, as an MD engine writes it.
        let wrapped: Vec<[f32; 3]> = original
            .iter()
            .map(|p| {
                let f = fractional(&m, p.map(f64::from)).map(|x| x - x.floor());
                cart(&m, f).map(|x| x as f32)
            })
            .collect();
        let whole = Whole::new(original.len(), &bonds);
        let mut out = wrapped.clone();
        let report = whole.apply(&mut out, &cell);
        assert_eq!(report.networks, 0, "seed {s}");
        for (i, (o, w)) in out.iter().zip(&wrapped).enumerate() {
            // Moved by a whole box vector only.
            let f = fractional(&m, sub(*o, *w));
            assert!(
                f.iter().all(|x| (x - x.round()).abs() < 1e-3),
                "seed {s}: atom {i} moved by {f:?} cells"
            );
        }
        for b in &bonds {
            let (i, j) = (b[0] as usize, b[1] as usize);
            let (want, got) = (dist(original[i], original[j]), dist(out[i], out[j]));
            assert!(
                (want - got).abs() < 2e-3,
                "seed {s}: bond {i}-{j} {got} A, built {want} A"
            );
        }
        // Each molecule is its built shape moved by one box vector.
        for i in 0..out.len() {
            let first = mol.iter().position(|&x| x == mol[i]).unwrap_or(i);
            let d_i = sub(out[i], original[i]);
            let d_0 = sub(out[first], original[first]);
            assert!(
                d_i.iter().zip(&d_0).all(|(a, b)| (a - b).abs() < 2e-3),
                "seed {s}: atom {i} shifted {d_i:?}, its molecule's first atom {d_0:?}"
            );
        }
        assert_eq!(crossing_bonds(&out, &cell, &bonds), 0, "seed {s}");
    }
}

#[test]
fn whole_molecules_are_left_exactly_as_read_even_outside_the_box() {
    let s = seed();
    let mut rng = Mix(s);
    let cell = random_cell(&mut rng);
    let m = cell.matrix_angstrom();
    let (original, bonds, _) = molecules(&mut rng, &m, 20);
    let mut out = original.clone();
    let report = Whole::new(original.len(), &bonds).apply(&mut out, &cell);
    assert_eq!(report, WholeReport::default(), "seed {s}");
    assert_eq!(out, original, "seed {s}");
}

#[test]
fn a_molecule_stays_on_the_side_where_most_of_its_atoms_were() {
    // A chain of 10 atoms along x across the face x = 20 of a 20 A cube: 6 inside near the face,
    // 4 wrapped to the far side.
    let cell = UnitCell::orthorhombic([20.0; 3]);
    let read: Vec<[f32; 3]> = (0..10)
        .map(|k| {
            let x = 13.5 + 1.2 * k as f32;
            [if x >= 20.0 { x - 20.0 } else { x }, 5.0, 5.0]
        })
        .collect();
    let bonds: Vec<[u32; 2]> = (0..9).map(|k| [k, k + 1]).collect();
    let mut out = read.clone();
    let report = Whole::new(10, &bonds).apply(&mut out, &cell);
    assert_eq!(report.joined, 1);
    for (k, p) in out.iter().enumerate() {
        let want = 13.5 + 1.2 * k as f32;
        assert!((p[0] - want).abs() < 1e-4, "atom {k} at x = {} A, want {want}", p[0]);
    }
    assert_eq!(crossing_bonds(&read, &cell, &bonds), 1);
    assert_eq!(bonds_within_box(&read, Some(&cell), &bonds).len(), 8);
    assert_eq!(bonds_within_box(&read, None, &bonds).len(), 9);
}

#[test]
fn a_network_bonded_to_its_own_image_is_left_as_read() {
    // Atoms 1.5 A apart along x, the last bonded to the first across the face of a 6 A box: an
    // infinite chain, as in a crystal.
    let cell = UnitCell::orthorhombic([6.0, 20.0, 20.0]);
    let read: Vec<[f32; 3]> = (0..4).map(|k| [0.75 + 1.5 * k as f32, 3.0, 3.0]).collect();
    let bonds = vec![[0, 1], [1, 2], [2, 3], [0, 3]];
    let mut out = read.clone();
    let report = Whole::new(4, &bonds).apply(&mut out, &cell);
    assert_eq!(report.networks, 1);
    assert_eq!(out, read);
}

#[test]
fn frames_it_cannot_use_are_left_alone() {
    let bonds = vec![[0, 1]];
    let whole = Whole::new(2, &bonds);
    let mut p = vec![[0.5f32, 0.0, 0.0], [9.8, 0.0, 0.0]];
    let before = p.clone();
    // A degenerate box, and a frame with another atom count.
    assert_eq!(
        whole.apply(&mut p, &UnitCell::orthorhombic([0.0, 10.0, 10.0])),
        WholeReport::default()
    );
    assert_eq!(p, before);
    let mut three = vec![[0.0f32; 3]; 3];
    assert_eq!(
        whole.apply(&mut three, &UnitCell::orthorhombic([10.0; 3])),
        WholeReport::default()
    );
    // Bonds naming atoms past the count are ignored, not a panic.
    let w = Whole::new(2, &[[0, 5], [7, 1]]);
    let mut q = before.clone();
    assert_eq!(
        w.apply(&mut q, &UnitCell::orthorhombic([10.0; 3])),
        WholeReport::default()
    );
    // The usable case joins the pair.
    assert_eq!(whole.apply(&mut p, &UnitCell::orthorhombic([10.0; 3])).joined, 1);
    assert!(dist(p[0], p[1]) < 0.75);
}

/// Molecules gathered around a solute: the solute stays, every other molecule moves by one whole
/// box vector, and its centre ends at the image nearest the solute's centre (checked against the
/// 125 images within two cells, computed here).
#[test]
fn molecules_are_gathered_at_the_image_nearest_the_solute() {
    for trial in 0..10 {
        let s = seed().wrapping_add(trial);
        let mut rng = Mix(s);
        let cell = random_cell(&mut rng);
        let m = cell.matrix_angstrom();
        let (pos, bonds, mol) = molecules(&mut rng, &m, 25);
        // Molecule 0 is the solute; a few lone atoms (ions) besides.
        let mut pos = pos;
        let mut mol = mol;
        for k in 0..4 {
            pos.push(cart(&m, [0; 3].map(|_| rng.uniform(-1.0, 2.0))).map(|x| x as f32));
            mol.push(1000 + k);
        }
        let solute: Vec<bool> = mol.iter().map(|&id| id == 0).collect();
        let mut out = pos.clone();
        Whole::new(pos.len(), &bonds).wrap_around(&mut out, &cell, &solute);
        let n_solute = solute.iter().filter(|s| **s).count() as f64;
        let centre: [f64; 3] = [0, 1, 2].map(|k| {
            pos.iter()
                .zip(&solute)
                .filter(|(_, s)| **s)
                .map(|(p, _)| f64::from(p[k]))
                .sum::<f64>()
                / n_solute
        });
        let ids: std::collections::BTreeSet<usize> = mol.iter().copied().collect();
        for id in ids {
            let atoms: Vec<usize> = (0..pos.len()).filter(|&a| mol[a] == id).collect();
            let shift = sub(out[atoms[0]], pos[atoms[0]]);
            for &a in &atoms {
                let d = sub(out[a], pos[a]);
                assert!(
                    (0..3).all(|k| (d[k] - shift[k]).abs() < 1e-3),
                    "seed {s}: molecule {id} moved apart"
                );
            }
            let f = fractional(&m, shift);
            assert!(f.iter().all(|x| (x - x.round()).abs() < 1e-3), "seed {s}: {f:?}");
            if id == 0 {
                assert!(shift.iter().all(|x| x.abs() < 1e-6), "seed {s}: the solute moved");
                continue;
            }
            let mean = |p: &[[f32; 3]]| -> [f64; 3] {
                [0, 1, 2].map(|k| atoms.iter().map(|&a| f64::from(p[a][k])).sum::<f64>() / atoms.len() as f64)
            };
            let c = mean(&out);
            let got = (0..3).map(|k| (c[k] - centre[k]).powi(2)).sum::<f64>().sqrt();
            let mut best = f64::INFINITY;
            for i in -2..=2 {
                for j in -2..=2 {
                    for l in -2..=2 {
                        let t = cart(&m, [f64::from(i), f64::from(j), f64::from(l)]);
                        let r = (0..3).map(|k| (c[k] + t[k] - centre[k]).powi(2)).sum::<f64>().sqrt();
                        best = best.min(r);
                    }
                }
            }
            assert!(
                got <= best + 1e-3,
                "seed {s}: molecule {id} {got} A from the solute, an image at {best}"
            );
        }
    }
}
