use super::*;
use std::f64::consts::PI;

use crate::analysis::test_rng::Rng;

#[test]
fn the_spiral_spreads_points_evenly_over_the_sphere() {
    let pts = sphere_points(960);
    assert_eq!(pts.len(), 960);
    for p in &pts {
        assert!((p.iter().map(|x| x * x).sum::<f64>() - 1.0).abs() < 1e-12);
    }
    // Their mean is the centre, and each octant holds an eighth of them.
    for k in 0..3 {
        assert!(pts.iter().map(|p| p[k]).sum::<f64>().abs() / 960.0 < 1e-2);
    }
    let octant = pts.iter().filter(|p| p.iter().all(|&x| x > 0.0)).count();
    assert!((octant as f64 - 120.0).abs() < 8.0, "{octant}");
}

#[test]
fn a_lone_atom_exposes_its_whole_sphere() {
    let mut rng = Rng::fresh();
    let r = 1.0 + rng.next();
    let c = [rng.next() * 100.0 - 50.0, rng.next(), -rng.next() * 30.0];
    let a = atom_areas(&[c], &[r], 1.4, 960);
    assert!((a[0] - 4.0 * PI * (r + 1.4).powi(2)).abs() < 1e-9, "{a:?}");
}

/// Two overlapping spheres: each loses the cap inside the other, of area 2 pi R h.
#[test]
fn two_atoms_lose_the_caps_of_their_overlap() {
    let mut rng = Rng::fresh();
    for _ in 0..20 {
        let (r1, r2, probe) = (1.2 + 0.6 * rng.next(), 1.2 + 0.6 * rng.next(), 1.4);
        let (big1, big2) = (r1 + probe, r2 + probe);
        let d = (big1 - big2).abs() + 0.3 + (big1 + big2 - (big1 - big2).abs() - 0.6) * rng.next();
        let u = rng.unit();
        let c1 = [rng.next() * 10.0, rng.next() * 10.0, rng.next() * 10.0];
        let c2 = [c1[0] + d * u[0], c1[1] + d * u[1], c1[2] + d * u[2]];
        let a = atom_areas(&[c1, c2], &[r1, r2], probe, 960);
        for (area, (big, other)) in a.iter().zip([(big1, big2), (big2, big1)]) {
            let h = big - (d * d + big * big - other * other) / (2.0 * d);
            let exact = 4.0 * PI * big * big - 2.0 * PI * big * h;
            let sphere = 4.0 * PI * big * big;
            assert!(
                (area - exact).abs() < 0.01 * sphere,
                "d {d}: {area} vs {exact} (sphere {sphere})"
            );
        }
    }
}

#[test]
fn an_atom_inside_a_shell_of_atoms_is_buried() {
    // One atom at the centre of 200 atoms on a sphere of 3 Å: no water reaches it.
    let mut positions = vec![[0.0; 3]];
    for p in sphere_points(200) {
        positions.push(p.map(|x| 3.0 * x));
    }
    let radii = vec![1.7; positions.len()];
    let a = atom_areas(&positions, &radii, 1.4, 960);
    assert_eq!(a[0], 0.0);
    assert!(a[1..].iter().all(|&x| x > 0.0));
}

#[test]
fn the_cell_list_finds_what_a_search_of_every_pair_finds() {
    let mut rng = Rng::fresh();
    let n = 400;
    let positions: Vec<[f64; 3]> = (0..n)
        .map(|_| [rng.next() * 25.0, rng.next() * 25.0, rng.next() * 25.0])
        .collect();
    let radii: Vec<f64> = (0..n).map(|_| 1.0 + rng.next()).collect();
    let got = atom_areas(&positions, &radii, 1.4, 300);
    // Every pair, every point.
    let sphere = sphere_points(300);
    for i in 0..n {
        let ri = radii[i] + 1.4;
        let accessible = sphere
            .iter()
            .filter(|p| {
                let q = [0, 1, 2].map(|k| positions[i][k] + ri * p[k]);
                (0..n).all(|j| j == i || dist2(q, positions[j]) >= (radii[j] + 1.4).powi(2))
            })
            .count();
        let want = 4.0 * PI * ri * ri * accessible as f64 / 300.0;
        assert!((got[i] - want).abs() < 1e-9, "atom {i}: {} vs {want}", got[i]);
    }
}

#[test]
fn missing_positions_and_far_flung_atoms_do_not_stall_or_panic() {
    let positions = [
        [0.0, 0.0, 0.0],
        [f64::NAN, 0.0, 0.0],
        [1e300, 0.0, 0.0],
        [1.5, 0.0, 0.0],
    ];
    let a = atom_areas(&positions, &[1.7; 4], 1.4, 100);
    assert_eq!(a[1], 0.0);
    assert!(a[0] > 0.0 && a[3] > 0.0 && a[2] > 0.0);
    assert!(atom_areas(&[], &[], 1.4, 960).is_empty());
}
