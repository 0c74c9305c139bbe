//! Unit tests of `dssp`.

use super::*;
use crate::model::fresh::{Mix, seed};

#[test]
fn codes_round_trip() {
    for s in SecondaryStructure::ALL {
        assert_eq!(SecondaryStructure::from_code(s.code()), Some(s));
    }
    assert_eq!(SecondaryStructure::from_code(' '), Some(SecondaryStructure::Coil));
    assert_eq!(SecondaryStructure::from_code('x'), None);
    assert_eq!(codes(&[SecondaryStructure::AlphaHelix, SecondaryStructure::Coil]), "H-");
}

#[test]
fn energy_of_a_typical_bond_and_its_floor() {
    // A linear N-H...O=C arrangement: N at 0, H at 1 A, O at 2.9 A, C at 4.13 A on one line.
    let n = [0.0, 0.0, 0.0];
    let h = [1.0, 0.0, 0.0];
    let o = [2.9, 0.0, 0.0];
    let c = [4.13, 0.0, 0.0];
    let want = -27.888 * (1.0 / 1.9 - 1.0 / 3.13 + 1.0 / 4.13 - 1.0 / 2.9);
    let e = hbond_energy(h, n, c, o);
    assert!((e - want).abs() < 1.5e-3, "{e} vs {want}");
    assert!(e < MAX_HBOND_ENERGY);
    // Coincident atoms: the floor.
    assert_eq!(hbond_energy(h, n, c, h), MIN_HBOND_ENERGY);
}

/// The scalar formula as mkdssp writes it, one distance and one quotient at a time.
fn scalar_energy(h: [f32; 3], n: [f32; 3], c: [f32; 3], o: [f32; 3]) -> f64 {
    let (d_ho, d_hc, d_nc, d_no) = (distance(h, o), distance(h, c), distance(n, c), distance(n, o));
    let e = if d_ho < MIN_DISTANCE || d_hc < MIN_DISTANCE || d_nc < MIN_DISTANCE || d_no < MIN_DISTANCE {
        MIN_HBOND_ENERGY
    } else {
        COUPLING / f64::from(d_ho) - COUPLING / f64::from(d_hc) + COUPLING / f64::from(d_nc)
            - COUPLING / f64::from(d_no)
    };
    let e = (e * 1000.0).round() / 1000.0;
    if e < MIN_HBOND_ENERGY { MIN_HBOND_ENERGY } else { e }
}

#[test]
fn vector_energy_and_its_screen_equal_the_scalar_formula() {
    let s = seed();
    let mut rng = Mix(s);
    let (mut bonds, mut near) = (0, 0);
    for _ in 0..200_000 {
        // A donor N-H near the origin and an acceptor C=O within a few Angstrom: bonds, near
        // misses, coincident atoms and everything between.
        let n = rng.point(0.2);
        let h = [n[0] + 1.0, n[1], n[2]];
        let o = rng.point(4.0);
        let dir = rng.point(1.0);
        let c = [o[0] + 1.23 * dir[0], o[1] + 1.23 * dir[1], o[2] + 1.23 * dir[2]];
        let want = scalar_energy(h, n, c, o);
        assert_eq!(
            hbond_energy(h, n, c, o).to_bits(),
            want.to_bits(),
            "seed {s}: {h:?} {n:?} {c:?} {o:?}"
        );
        let screened = hbond_energy_if_bond(h, n, c, o);
        if want < MAX_HBOND_ENERGY {
            bonds += 1;
            assert_eq!(screened, Some(want), "seed {s}");
        } else {
            if want < MAX_HBOND_ENERGY + 0.05 {
                near += 1;
            }
            assert_eq!(screened, None, "seed {s}");
        }
    }
    assert!(
        bonds > 1000 && near > 100,
        "seed {s}: {bonds} bonds, {near} near misses"
    );
}

#[test]
fn eight_lane_screen_keeps_every_bond_and_equals_the_four_lane_one() {
    let s = seed();
    let mut rng = Mix(s);
    let mut bonds = 0;
    for _ in 0..20_000 {
        let n = rng.point(0.2);
        let h = [n[0] + 1.0, n[1], n[2]];
        let mut batch = AcceptorBatch::new();
        batch.len = 1 + (rng.next() % 8) as usize;
        let mut pairs = Vec::new();
        for lane in 0..8 {
            let o = rng.point(4.0);
            let dir = rng.point(1.0);
            let c = [o[0] + 1.23 * dir[0], o[1] + 1.23 * dir[1], o[2] + 1.23 * dir[2]];
            for (v, x) in batch.xyz.iter_mut().zip(c.into_iter().chain(o)) {
                v[lane] = x;
            }
            pairs.push((c, o));
        }
        let mask = batch.screen::<f32x8>(h, n);
        if let Some(wide_mask) = batch.screen_avx2(h, n) {
            assert_eq!(wide_mask, mask, "seed {s}: the AVX2 screen differs");
        }
        for (lane, &(c, o)) in pairs.iter().enumerate() {
            let pass = mask & (1 << lane) != 0;
            if lane >= batch.len {
                assert!(!pass, "seed {s}: lane {lane} beyond {}", batch.len);
                continue;
            }
            // The four-lane screen of `hbond_energy_if_bond`.
            let d = bond_distances(h, n, c, o);
            let near = d.cmp_lt(f32x4::splat(MIN_DISTANCE)).move_mask() != 0;
            let q = (f32x4::splat(COUPLING as f32) / d).to_array();
            let estimate = q[0] - q[1] + q[2] - q[3];
            assert_eq!(
                pass,
                near || estimate < (MAX_HBOND_ENERGY + 0.01) as f32,
                "seed {s}: {h:?} {n:?} {c:?} {o:?}"
            );
            if scalar_energy(h, n, c, o) < MAX_HBOND_ENERGY {
                bonds += 1;
                assert!(pass, "seed {s}: a bond screened out: {h:?} {n:?} {c:?} {o:?}");
            }
        }
    }
    assert!(bonds > 100, "seed {s}: {bonds} bonds");
}

#[test]
fn bends_and_polyproline_ranges_without_atan2_equal_the_angles() {
    let s = seed();
    let mut rng = Mix(s);
    let (mut near_70, mut near_edges) = (0, 0);
    let phi = AngleRange::new(-104.0, -46.0);
    let psi = AngleRange::new(116.0, 174.0);
    for _ in 0..200_000 {
        let (a, b) = (rng.point(3.0), rng.point(3.0));
        // c at about 70 degrees from the a->b direction now and then.
        let c = if rng.next().is_multiple_of(2) {
            rng.point(3.0)
        } else {
            let u = sub(b, a);
            let len = dot(u, u).sqrt().max(1e-3);
            let u = u.map(|x| x / len);
            let w = cross(u, rng.point(1.0));
            let wl = dot(w, w).sqrt().max(1e-3);
            let angle = (70.0 + rng.uniform(-0.2, 0.2)).to_radians() as f32;
            [0, 1, 2].map(|k| b[k] + 3.8 * (angle.cos() * u[k] + angle.sin() * w[k] / wl))
        };
        let v12 = sub(b, a);
        let v34 = sub(c, b);
        let x = dot(v12, v12) * dot(v34, v34);
        let ckap = if x > 0.0 { dot(v12, v34) / x.sqrt() } else { 0.0 };
        let kappa = kappa_degrees(ckap);
        near_70 += usize::from((kappa - 70.0).abs() < 0.1);
        assert_eq!(kappa_above_70(a, b, c), kappa > 70.0, "seed {s}: {a:?} {b:?} {c:?}");
        let p = [rng.point(2.0), rng.point(2.0), rng.point(2.0), rng.point(2.0)];
        let angle = dihedral_degrees(p[0], p[1], p[2], p[3]);
        for range in [phi, psi] {
            near_edges += usize::from((angle - range.lo).abs() < 0.1 || (angle - range.hi).abs() < 0.1);
            assert_eq!(
                range.contains_dihedral(p),
                (range.lo..=range.hi).contains(&angle),
                "seed {s}: {p:?} at {angle}"
            );
        }
    }
    assert!(
        near_70 > 100 && near_edges > 50,
        "seed {s}: {near_70} near 70, {near_edges} near the edges"
    );
}

#[test]
fn rounding_equals_the_library_round() {
    let s = seed();
    let mut rng = Mix(s);
    let halves = [
        0.5,
        -0.5,
        1.5,
        -2.5,
        1234.5,
        -0.49999999999999994,
        4.5e15,
        -7.0e15,
        0.0,
        -0.0,
    ];
    for x in halves
        .into_iter()
        .chain((0..100_000).map(|_| rng.uniform(-3.0e5, 3.0e5)))
    {
        assert_eq!(round_half_away(x).to_bits(), x.round().to_bits(), "seed {s}: {x}");
    }
    assert!(round_half_away(f64::NAN).is_nan());
}

#[test]
fn two_best_acceptors_do_not_depend_on_the_order_offered() {
    let s = seed();
    let mut rng = Mix(s);
    for _ in 0..2000 {
        // Few distinct energies, so that ties are common.
        let k = 1 + (rng.next() % 12) as usize;
        let offers: Vec<(u32, f64)> = (0..k)
            .map(|j| {
                (
                    j as u32 * 3,
                    -0.001 * (rng.next() % 8) as f64 - 0.5 * (rng.next() % 2) as f64,
                )
            })
            .collect();
        // mkdssp: ascending acceptors, a strictly lower energy displaces.
        let mut want = Acceptors::new();
        for &(j, e) in &offers {
            if e < want.energy[0] {
                want.index[1] = want.index[0];
                want.energy[1] = want.energy[0];
                want.index[0] = j;
                want.energy[0] = e;
            } else if e < want.energy[1] {
                want.index[1] = j;
                want.energy[1] = e;
            }
        }
        let mut shuffled = offers.clone();
        for i in (1..shuffled.len()).rev() {
            shuffled.swap(i, (rng.next() % (i as u64 + 1)) as usize);
        }
        let mut got = Acceptors::new();
        for &(j, e) in &shuffled {
            got.offer(j, e);
        }
        assert_eq!(
            (got.index, got.energy),
            (want.index, want.energy),
            "seed {s}: {offers:?}"
        );
    }
}

#[test]
fn dihedral_of_known_geometry() {
    let d = dihedral_degrees([1.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 1.0, 1.0]);
    assert!((d.abs() - 90.0).abs() < 1e-4, "{d}");
    let t = dihedral_degrees([1.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [-1.0, 1.0, 0.0]);
    assert!((t.abs() - 180.0).abs() < 1e-4, "{t}");
    assert_eq!(dihedral_degrees([0.0; 3], [0.0; 3], [0.0; 3], [0.0; 3]), 360.0);
}
