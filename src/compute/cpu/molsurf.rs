//! The molecular-surface density on the CPU: a sum of truncated atom Gaussians
//! ([`crate::compute::molsurf`]) on lattice planes.
//!
//! Called by [`super::CpuEngine`] for [`crate::compute::Field::MolSurf`] (one z-plane per rayon task)
//! and by [`super::evaluate_points`]. The atoms are sorted by z once per request; a plane visits
//! only the atoms whose truncation sphere reaches it (a binary search in z: the one-dimensional
//! cell list that suits plane-by-plane filling). On an axis-aligned lattice each atom's Gaussian
//! factorises, `exp(-a dx^2) exp(-a dy^2) exp(-a dz^2)`, so a plane costs one exponential per row
//! and column an atom touches and one multiply-add per point inside its truncation circle. Sums are
//! in f64, rounded to f32 once. Other lattices evaluate point by point through the same atoms.

use crate::compute::molsurf::{AtomGaussian, MolSurfAtoms};
use crate::model::Lattice;

/// The atoms' Gaussians sorted by the z of their centres.
pub struct PreparedMolSurf {
    atoms: Vec<AtomGaussian>,
    z_bohr: Vec<f64>,
    max_cutoff_bohr: f64,
}

impl PreparedMolSurf {
    pub fn new(input: &MolSurfAtoms) -> PreparedMolSurf {
        let mut atoms = input.gaussians();
        atoms.sort_by(|a, b| a.center_bohr[2].total_cmp(&b.center_bohr[2]));
        let z_bohr = atoms.iter().map(|a| a.center_bohr[2]).collect();
        let max_cutoff_bohr = atoms.iter().map(|a| a.cutoff_bohr).fold(0.0, f64::max);
        PreparedMolSurf {
            atoms,
            z_bohr,
            max_cutoff_bohr,
        }
    }

    /// The atoms whose centre is within the largest cutoff of `z_lo..=z_hi` (bohr).
    fn window(&self, z_lo: f64, z_hi: f64) -> &[AtomGaussian] {
        let lo = self.z_bohr.partition_point(|&z| z < z_lo - self.max_cutoff_bohr);
        let hi = self.z_bohr.partition_point(|&z| z <= z_hi + self.max_cutoff_bohr);
        self.atoms.get(lo..hi.max(lo)).unwrap_or(&[])
    }

    /// Fills plane `k` of `lattice` (`dst` holds `nx * ny` values, x fastest).
    pub fn fill_plane(&self, lattice: &Lattice, k: usize, dst: &mut [f32]) {
        let [nx, ny, _] = lattice.dims;
        let s = &lattice.steps_bohr;
        let (hx, hy) = (s[0][0], s[1][1]);
        if !(lattice.is_axis_aligned() && hx > 0.0 && hy > 0.0) {
            self.fill_plane_points(lattice, k, dst);
            return;
        }
        let origin = lattice.point_bohr(0, 0, k);
        let z = origin[2];
        let mut acc = vec![0.0f64; nx * ny];
        let mut ex: Vec<f64> = Vec::new();
        let mut ey: Vec<f64> = Vec::new();
        for a in self.window(z, z) {
            let c = a.center_bohr;
            let dz = z - c[2];
            let rc2 = a.cutoff_bohr * a.cutoff_bohr;
            let rxy2 = rc2 - dz * dz;
            if rxy2 < 0.0 {
                continue;
            }
            let rxy = rxy2.sqrt();
            let ez = a.amplitude * (-a.exponent_per_bohr2 * dz * dz).exp();
            let Some((j0, j1)) = index_range(c[1] - rxy, c[1] + rxy, origin[1], hy, ny) else {
                continue;
            };
            let Some((i0, i1)) = index_range(c[0] - rxy, c[0] + rxy, origin[0], hx, nx) else {
                continue;
            };
            ex.clear();
            ex.extend((i0..=i1).map(|i| {
                let dx = origin[0] + i as f64 * hx - c[0];
                (-a.exponent_per_bohr2 * dx * dx).exp()
            }));
            ey.clear();
            ey.extend((j0..=j1).map(|j| {
                let dy = origin[1] + j as f64 * hy - c[1];
                (-a.exponent_per_bohr2 * dy * dy).exp()
            }));
            for (j, &fy) in (j0..=j1).zip(&ey) {
                let dy = origin[1] + j as f64 * hy - c[1];
                let rx2 = rxy2 - dy * dy;
                if rx2 < 0.0 {
                    continue;
                }
                let rx = rx2.sqrt();
                let Some((r0, r1)) = index_range(c[0] - rx, c[0] + rx, origin[0], hx, nx) else {
                    continue;
                };
                let (r0, r1) = (r0.max(i0), r1.min(i1));
                if r1 < r0 {
                    continue;
                }
                let w = ez * fy;
                let row = nx * j;
                if let (Some(out), Some(fx)) = (acc.get_mut(row + r0..=row + r1), ex.get(r0 - i0..=r1 - i0)) {
                    for (o, &f) in out.iter_mut().zip(fx) {
                        *o += w * f;
                    }
                }
            }
        }
        for (o, v) in dst.iter_mut().zip(&acc) {
            *o = *v as f32;
        }
    }

    /// Plane `k` point by point (lattices that are not axis-aligned).
    fn fill_plane_points(&self, lattice: &Lattice, k: usize, dst: &mut [f32]) {
        let nx = lattice.dims[0].max(1);
        for (j, row) in dst.chunks_mut(nx).enumerate() {
            for (i, o) in row.iter_mut().enumerate() {
                *o = self.at(lattice.point_bohr(i, j, k)) as f32;
            }
        }
    }

    /// The density at one point (bohr).
    pub fn at(&self, p: [f64; 3]) -> f64 {
        self.window(p[2], p[2])
            .iter()
            .map(|a| {
                let c = a.center_bohr;
                let r2 = (p[0] - c[0]).powi(2) + (p[1] - c[1]).powi(2) + (p[2] - c[2]).powi(2);
                a.at(r2)
            })
            .sum()
    }

    /// How many atoms' truncation spheres pass within `rel` (relative, in squared distance) of `p`
    /// (bohr): where engines rounding differently may disagree by a truncated tail
    /// ([`crate::compute::molsurf::TRUNCATION_DENSITY`]) per such atom.
    pub fn near_cutoff(&self, p: [f64; 3], rel: f64) -> usize {
        self.window(p[2], p[2])
            .iter()
            .filter(|a| {
                let c = a.center_bohr;
                let r2 = (p[0] - c[0]).powi(2) + (p[1] - c[1]).powi(2) + (p[2] - c[2]).powi(2);
                let rc2 = a.cutoff_bohr * a.cutoff_bohr;
                (r2 - rc2).abs() <= rel * rc2
            })
            .count()
    }

    /// The density at arbitrary points (bohr).
    pub fn eval_points(&self, points: &[[f64; 3]], out: &mut [f64]) {
        for (p, o) in points.iter().zip(out.iter_mut()) {
            *o = self.at(*p);
        }
    }
}

/// Lattice indices `i` in `0..n` with `lo <= origin + i * h <= hi`, as an inclusive range, or `None`.
pub(super) fn index_range(lo: f64, hi: f64, origin: f64, h: f64, n: usize) -> Option<(usize, usize)> {
    if n == 0 {
        return None;
    }
    let a = ((lo - origin) / h).ceil().max(0.0);
    let b = ((hi - origin) / h).floor().min((n - 1) as f64);
    if !(a.is_finite() && b.is_finite()) || b < a {
        return None;
    }
    Some((a as usize, b as usize))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lattice_planes_match_point_sums() {
        let atoms = MolSurfAtoms::from_radii_angstrom(
            &[[0.0, 0.0, 0.0], [1.2, 0.3, -0.4], [-0.8, 1.1, 0.9]],
            &[1.7, 1.2, 1.55],
            0.6,
        )
        .unwrap();
        let p = PreparedMolSurf::new(&atoms);
        let lattice = Lattice::axis_aligned([-9.0, -8.5, -9.2], 0.37, [50, 48, 52]);
        let [nx, ny, _] = lattice.dims;
        for k in [0, 13, 25, 40] {
            let mut plane = vec![0.0f32; nx * ny];
            p.fill_plane(&lattice, k, &mut plane);
            for j in 0..ny {
                for i in 0..nx {
                    let want = p.at(lattice.point_bohr(i, j, k));
                    let got = f64::from(plane[i + nx * j]);
                    assert!(
                        (got - want).abs() < 1e-6 * want.max(1.0),
                        "{i} {j} {k}: {got} vs {want}"
                    );
                }
            }
        }
    }
}
