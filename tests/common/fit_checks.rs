//! Properties any least-squares rigid fit must have, checked without the fit's own code (shared
//! by `journey_fit.rs` and `whole_molecules.rs`): centroids, RMSD, and the same points turned and
//! shifted a little.

#![allow(dead_code)]

pub type P = [f64; 3];

pub fn centroid(p: &[P]) -> P {
    let mut c = [0.0; 3];
    for q in p {
        for k in 0..3 {
            c[k] += q[k] / p.len() as f64;
        }
    }
    c
}

pub fn rmsd(a: &[P], b: &[P]) -> f64 {
    let s: f64 = a
        .iter()
        .zip(b)
        .map(|(p, q)| (0..3).map(|k| (p[k] - q[k]).powi(2)).sum::<f64>())
        .sum();
    (s / a.len() as f64).sqrt()
}

/// `p` turned by `angle` radians about axis `k` (0 x, 1 y, 2 z) through `c`, then shifted by `t`.
pub fn moved(p: &[P], c: P, k: usize, angle: f64, t: P) -> Vec<P> {
    let (s, co) = angle.sin_cos();
    let (a, b) = ((k + 1) % 3, (k + 2) % 3);
    p.iter()
        .map(|q| {
            let mut r = [q[0] - c[0], q[1] - c[1], q[2] - c[2]];
            let (x, y) = (r[a], r[b]);
            r[a] = co * x - s * y;
            r[b] = s * x + co * y;
            [r[0] + c[0] + t[0], r[1] + c[1] + t[1], r[2] + c[2] + t[2]]
        })
        .collect()
}

/// Checks that `fitted` is a least-squares fit onto `reference`: the centroids coincide within
/// `tol_angstrom`, and no turn of 0.01 rad about an axis through the centroid nor a shift of 0.05 A
/// lowers the RMSD.
pub fn assert_least_squares(fitted: &[P], reference: &[P], tol_angstrom: f64, what: &str) {
    let (c, c0) = (centroid(fitted), centroid(reference));
    for k in 0..3 {
        assert!((c[k] - c0[k]).abs() < tol_angstrom, "{what}: centroid {c:?} vs {c0:?}");
    }
    let best = rmsd(fitted, reference);
    for k in 0..3 {
        for angle in [-0.01, 0.01] {
            let r = rmsd(&moved(fitted, c, k, angle, [0.0; 3]), reference);
            assert!(
                r >= best - 1e-4,
                "{what}: a turn of {angle} rad about axis {k}: {r} < {best}"
            );
        }
        let mut t = [0.0; 3];
        t[k] = 0.05;
        assert!(
            rmsd(&moved(fitted, c, k, 0.0, t), reference) >= best - 1e-4,
            "{what}: a shift"
        );
    }
}
