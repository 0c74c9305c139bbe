use super::*;
use crate::model::Name8;

use crate::analysis::test_rng::Rng;

/// Waters (O, H, H) at the given oxygen positions, each with its hydrogens along random directions
/// 0.96 Å away (bonds O-H given), residue names HOH.
fn waters(rng: &mut Rng, oxygens: &[[f64; 3]]) -> (Structure, Vec<[f32; 3]>, Vec<[u32; 2]>) {
    let mut s = Structure::default();
    let mut pos = Vec::new();
    let mut bonds = Vec::new();
    for (w, o) in oxygens.iter().enumerate() {
        let base = (3 * w) as u32;
        pos.push(o.map(|x| x as f32));
        for _ in 0..2 {
            let u = rng.unit();
            pos.push([0, 1, 2].map(|k| (o[k] + 0.96 * u[k]) as f32));
        }
        for (e, name) in [(8, "O"), (1, "H1"), (1, "H2")] {
            s.elements.push(Element(e));
            s.names.push(Name8::new(name.as_bytes()));
            s.resnames.push(Name8::new(b"HOH"));
            s.resids.push(w as i32 + 1);
        }
        bonds.push([base, base + 1]);
        bonds.push([base, base + 2]);
    }
    (s, pos, bonds)
}

/// Every (D, H, A) that the rule with hydrogens accepts, by trying every pair.
fn brute(
    s: &Structure,
    pos: &[[f32; 3]],
    bonds: &[[u32; 2]],
    cell: Option<&UnitCell>,
    c: &HBondCriteria,
) -> Vec<HBond> {
    // The nearest image by the full search of MinImage::delta (the search itself takes the rounded
    // image when the cell is large enough).
    let mi = cell.map(MinImage::new);
    let delta = |mi: Option<&MinImage>, a: [f64; 3], b: [f64; 3]| match mi {
        Some(m) => m.delta(a, b),
        None => [a[0] - b[0], a[1] - b[1], a[2] - b[2]],
    };
    let p = |i: u32| pos[i as usize].map(f64::from);
    let mut out = Vec::new();
    for b in bonds {
        let (d, h) = if s.elements[b[0] as usize] == Element(1) {
            (b[1], b[0])
        } else {
            (b[0], b[1])
        };
        for a in 0..s.len() as u32 {
            if a == d || s.elements[a as usize] == Element(1) {
                continue;
            }
            let da = delta(mi.as_ref(), p(a), p(d));
            let hd = delta(mi.as_ref(), p(d), p(h));
            let ha = delta(mi.as_ref(), p(a), p(h));
            let angle = (dot(hd, ha) / (dot(hd, hd) * dot(ha, ha)).sqrt()).acos().to_degrees();
            if dot(da, da).sqrt() <= f64::from(c.distance_angstrom) && angle >= f64::from(c.angle_degrees) {
                out.push(HBond {
                    donor: d,
                    hydrogen: Some(h),
                    acceptor: a,
                });
            }
        }
    }
    out.sort_unstable();
    out
}

#[test]
fn a_linear_water_dimer_bonds_until_its_distance_or_angle_is_past_the_criteria() {
    let mut rng = Rng::fresh();
    let c = HBondCriteria::default();
    // Donor water at a random place; its H1 points at the acceptor oxygen along a random direction.
    for (d_oa, angle_off, expect) in [
        (2.9, 0.0, true),
        (3.05, 0.0, false),
        (2.8, 25.0, true),
        (2.8, 35.0, false),
    ] {
        let o = [0, 1, 2].map(|_| 20.0 * rng.next());
        let (mut s, mut pos, bonds) = waters(&mut rng, &[o, [0.0; 3]]);
        let u = rng.unit();
        // H on the line O->A, then turned about O by `angle_off` so that D-H...A bends.
        let a = [0, 1, 2].map(|k| o[k] + d_oa * u[k]);
        let w = {
            let r = rng.unit();
            let k = dot(r, u);
            let v = [0, 1, 2].map(|i| r[i] - k * u[i]);
            let n = dot(v, v).sqrt();
            v.map(|x| x / n)
        };
        // Place H so that the angle D-H...A is 180 - angle_off (law of sines in the triangle O, H, A).
        let dh = 0.96;
        let theta_h = (180.0_f64 - angle_off).to_radians();
        // Angle at O between O->H and O->A: from the triangle with sides dh, |HA| and d_oa.
        let ha = {
            // Solve d_oa^2 = dh^2 + x^2 - 2 dh x cos(theta_h) for x > 0.
            let b = -2.0 * dh * theta_h.cos();
            let cc = dh * dh - d_oa * d_oa;
            (-b + (b * b - 4.0 * cc).sqrt()) / 2.0
        };
        let cos_o = (dh * dh + d_oa * d_oa - ha * ha) / (2.0 * dh * d_oa);
        let sin_o = (1.0 - cos_o * cos_o).max(0.0).sqrt();
        let h = [0, 1, 2].map(|k| o[k] + dh * (cos_o * u[k] + sin_o * w[k]));
        pos[1] = h.map(|x| x as f32);
        // The other hydrogen points away from the acceptor.
        pos[2] = [0, 1, 2].map(|k| (o[k] - dh * u[k]) as f32);
        // The acceptor water: its oxygen at `a`, its hydrogens away from the donor.
        pos[3] = a.map(|x| x as f32);
        for (j, sign) in [(4, 1.0), (5, 1.0)] {
            let r = rng.unit();
            let v = [0, 1, 2].map(|k| u[k] + 0.5 * r[k] * sign);
            let n = dot(v, v).sqrt();
            pos[j] = [0, 1, 2].map(|k| (a[k] + dh * v[k] / n) as f32);
        }
        s.names[3] = Name8::new(b"O");
        let set = find(&s, &pos, &[true; 6], &bonds, None, &c);
        assert!(set.with_hydrogens);
        let found = set.bonds.contains(&HBond {
            donor: 0,
            hydrogen: Some(1),
            acceptor: 3,
        });
        assert_eq!(
            found, expect,
            "O...O {d_oa} Å, {angle_off} degrees off linear: {:?}",
            set.bonds
        );
        // Nothing but that one bond can be formed by this geometry.
        assert!(set.bonds.len() <= 1, "{:?}", set.bonds);
    }
}

#[test]
fn the_cell_list_finds_what_every_pair_finds_in_open_and_triclinic_boxes() {
    let mut rng = Rng::fresh();
    let c = HBondCriteria::default();
    for cell in [
        None,
        Some(UnitCell::new([19.0, 23.0, 21.0], [90.0, 90.0, 90.0])),
        Some(UnitCell::new([18.0, 20.0, 22.0], [70.0, 80.0, 65.0])),
    ] {
        // Waters at random: 250 in a 20 Å region (many pairs near the criteria), wrapped or not.
        let oxygens: Vec<[f64; 3]> = (0..250).map(|_| [0, 1, 2].map(|_| -5.0 + 30.0 * rng.next())).collect();
        let (s, pos, bonds) = waters(&mut rng, &oxygens);
        let got = find(&s, &pos, &vec![true; s.len()], &bonds, cell.as_ref(), &c);
        let want = brute(&s, &pos, &bonds, cell.as_ref(), &c);
        assert!(!want.is_empty());
        assert_eq!(got.bonds, want, "cell {cell:?}");
    }
}

#[test]
fn a_bond_across_the_periodic_boundary_is_found_by_the_minimum_image() {
    let mut rng = Rng::fresh();
    let cell = UnitCell::new([20.0, 22.0, 24.0], [75.0, 85.0, 70.0]);
    let m = cell.matrix_angstrom();
    // Donor oxygen just inside the a face, acceptor just beyond the opposite face's image.
    let o = [0.5, 5.0, 5.0];
    let (s, mut pos, bonds) = waters(&mut rng, &[o, [0.0; 3]]);
    let a_img = [o[0] - 2.85, o[1], o[2]];
    let a = [0, 1, 2].map(|k| a_img[k] + m[0][k]);
    pos[1] = [0, 1, 2].map(|k| (o[k] + 0.96 * (a_img[k] - o[k]) / 2.85) as f32);
    pos[3] = a.map(|x| x as f32);
    let set = find(&s, &pos, &[true; 6], &bonds, Some(&cell), &HBondCriteria::default());
    assert!(
        set.bonds.contains(&HBond {
            donor: 0,
            hydrogen: Some(1),
            acceptor: 3
        }),
        "{:?}",
        set.bonds
    );
    let open = find(&s, &pos, &[true; 6], &bonds, None, &HBondCriteria::default());
    assert!(open.bonds.is_empty(), "{:?}", open.bonds);
}

#[test]
fn without_hydrogens_roles_come_from_names_and_near_neighbours_are_left_out() {
    // A glycine's own N and O at 2.8 Å (three bonds apart) are no bond; a proline's N donates nothing;
    // an aspartate's OD1 only accepts; a lysine's NZ donates to it.
    let mut s = Structure::default();
    let atoms = [
        (7, "N", "GLY", 1, [0.0, 0.0, 0.0]),
        (6, "CA", "GLY", 1, [1.45, 0.0, 0.0]),
        (6, "C", "GLY", 1, [2.0, 1.4, 0.0]),
        (8, "O", "GLY", 1, [1.2, 2.35, 0.0]),
        (7, "N", "PRO", 2, [1.2, 2.35, 2.9]),
        (8, "OD1", "ASP", 3, [10.0, 0.0, 0.0]),
        (7, "NZ", "LYS", 4, [12.8, 0.0, 0.0]),
        (8, "OD2", "ASP", 3, [10.0, 3.0, 0.0]),
    ];
    let mut pos = Vec::new();
    for (e, name, res, id, p) in atoms {
        s.elements.push(Element(e));
        s.names.push(Name8::new(name.as_bytes()));
        s.resnames.push(Name8::new(res.as_bytes()));
        s.resids.push(id);
        pos.push(p.map(|x: f64| x as f32));
    }
    let bonds = vec![[0, 1], [1, 2], [2, 3]];
    assert!((0..3).map(|k| (pos[0][k] - pos[3][k]).powi(2)).sum::<f32>().sqrt() < 3.5);
    let set = find(&s, &pos, &[true; 8], &bonds, None, &HBondCriteria::default());
    assert!(!set.with_hydrogens);
    assert_eq!(
        set.bonds,
        vec![HBond {
            donor: 6,
            hydrogen: None,
            acceptor: 5
        }]
    );
}

#[test]
fn criteria_out_of_range_are_refused_in_words() {
    let bad = HBondCriteria {
        angle_degrees: 200.0,
        ..HBondCriteria::default()
    };
    assert!(bad.check().unwrap_err().contains("200"));
    let bad = HBondCriteria {
        distance_angstrom: -1.0,
        ..HBondCriteria::default()
    };
    assert!(bad.check().unwrap_err().contains("-1"));
    assert!(HBondCriteria::default().check().is_ok());
}

#[test]
fn two_waters_without_hydrogens_are_one_bond_and_alternate_locations_never_meet() {
    let mut s = Structure::default();
    for (name, res, id) in [("O", "HOH", 1), ("O", "HOH", 2), ("OG", "SER", 3), ("OG", "SER", 3)] {
        s.elements.push(Element(8));
        s.names.push(Name8::new(name.as_bytes()));
        s.resnames.push(Name8::new(res.as_bytes()));
        s.resids.push(id);
    }
    // Two waters 2.8 Å apart; a serine's OG in two alternate locations 1.6 Å apart, far away.
    let pos = vec![[0.0, 0.0, 0.0], [2.8, 0.0, 0.0], [20.0, 0.0, 0.0], [21.6, 0.0, 0.0]];
    s.altlocs = Some(vec![b' ', b' ', b'A', b'B']);
    let set = find(&s, &pos, &[true; 4], &[], None, &HBondCriteria::default());
    assert_eq!(
        set.bonds,
        vec![HBond {
            donor: 0,
            hydrogen: None,
            acceptor: 1
        }]
    );
}

#[test]
fn far_flung_and_huge_coordinates_neither_panic_nor_hang() {
    let mut rng = Rng::fresh();
    let (s, mut pos, bonds) = waters(&mut rng, &[[0.0; 3], [2.9, 0.0, 0.0]]);
    // One water a long way off (finite), another at the edge of f32.
    pos[3] = [1e30, -1e30, 3e38];
    let set = find(&s, &pos, &[true; 6], &bonds, None, &HBondCriteria::default());
    assert!(set.bonds.is_empty(), "{:?}", set.bonds);
    let huge = UnitCell::orthorhombic([1e300, 1e300, 1e300]);
    let set = find(&s, &pos, &[true; 6], &bonds, Some(&huge), &HBondCriteria::default());
    assert!(set.bonds.is_empty(), "{:?}", set.bonds);
}
