//! The solvent-excluded surface field on the CPU ([`crate::compute::ses`]) on lattice planes.
//!
//! Called by [`super::CpuEngine`] for a molecular-surface job whose atoms ask for the excluded
//! surface (one z-plane per rayon task) and by [`super::evaluate_points`]. A plane is filled by
//! scattering: every inflated sphere that cuts it marks the points strictly inside it (the SAS
//! interior), then every probe centre within `2p` of the plane lowers the squared distance of the
//! points within `2p` of it; the points outside the SAS are 0, the others take
//! [`value_from_distance`] of their nearest centre. Each point's result is the one
//! [`ExcludedSurface::value_at`] gives, to the rounding of the squared distances.

use super::molsurf::index_range;
use crate::compute::ses::{ExcludedSurface, value_from_distance};
use crate::model::Lattice;
use std::sync::Arc;

/// One job's surface (shared by all its slabs: the probe centres are found once per request).
pub struct PreparedSes {
    surface: Arc<ExcludedSurface>,
}

impl PreparedSes {
    pub fn new(surface: Arc<ExcludedSurface>) -> PreparedSes {
        PreparedSes { surface }
    }

    /// Fills plane `k` of `lattice` (`dst` holds `nx * ny` values, x fastest).
    pub fn fill_plane(&self, lattice: &Lattice, k: usize, dst: &mut [f32]) {
        let [nx, ny, _] = lattice.dims;
        let s = &lattice.steps_bohr;
        let (hx, hy) = (s[0][0], s[1][1]);
        if !(lattice.is_axis_aligned() && hx > 0.0 && hy > 0.0) {
            for (j, row) in dst.chunks_mut(nx.max(1)).enumerate() {
                for (i, o) in row.iter_mut().enumerate() {
                    *o = self.surface.value_at(lattice.point_bohr(i, j, k)) as f32;
                }
            }
            return;
        }
        let origin = lattice.point_bohr(0, 0, k);
        let z = origin[2];
        let surface = &*self.surface;
        let (h, n) = ([hx, hy], [nx, ny]);
        // The SAS interior.
        let mut inside = vec![false; nx * ny];
        let mut any_inside = false;
        for i in surface.sphere_window(z, z) {
            let Some(&(c, r)) = surface.spheres.get(i) else {
                continue;
            };
            any_inside |= scatter_disc(c, r, z, origin, h, n, |p, d2| {
                if d2 < r * r
                    && let Some(v) = inside.get_mut(p)
                {
                    *v = true;
                }
            });
        }
        if !any_inside {
            dst.fill(0.0);
            return;
        }
        // The sampled centres.
        let reach = surface.reach_bohr();
        let mut best = vec![reach * reach; nx * ny];
        for &c in surface.probe_window(z, z, reach) {
            scatter_disc(c, reach, z, origin, h, n, |p, d2| {
                if let Some(b) = best.get_mut(p) {
                    *b = b.min(d2);
                }
            });
        }
        // The exact terms, in the band where they can move the surface.
        let band = surface.exact_band_bohr();
        let near: Vec<bool> = inside
            .iter()
            .zip(&best)
            .map(|(&inn, &b)| inn && b < band * band)
            .collect();
        for i in surface.sphere_window(z, z) {
            let Some(&(c, r)) = surface.spheres.get(i) else {
                continue;
            };
            let core = (r - reach).max(0.0);
            scatter_disc(c, r, z, origin, h, n, |p, d2| {
                if !(d2 < r * r && d2 > core * core && near.get(p).copied().unwrap_or(false)) {
                    return;
                }
                let rho = d2.sqrt();
                let Some(b) = best.get_mut(p) else { return };
                // Every point of sphere i is at least r - rho from x: no nearer candidate here.
                if (r - rho) * (r - rho) >= *b {
                    return;
                }
                if let Some(d) = surface.boundary_distance(i, lattice_point(origin, h, nx, p), rho) {
                    *b = b.min(d * d);
                }
            });
        }
        for ((o, &inn), &b) in dst.iter_mut().zip(&inside).zip(&best) {
            *o = if inn {
                value_from_distance(b.sqrt(), surface.probe_bohr) as f32
            } else {
                0.0
            };
        }
    }

    /// The field at arbitrary points (bohr).
    pub fn eval_points(&self, points: &[[f64; 3]], out: &mut [f64]) {
        for (p, o) in points.iter().zip(out.iter_mut()) {
            *o = self.surface.value_at(*p);
        }
    }
}

/// The point of plane `origin` (axis-aligned steps `h`, `nx` points per row) at plane index `p`.
fn lattice_point(origin: [f64; 3], h: [f64; 2], nx: usize, p: usize) -> [f64; 3] {
    let (i, j) = (p % nx.max(1), p / nx.max(1));
    [origin[0] + i as f64 * h[0], origin[1] + j as f64 * h[1], origin[2]]
}

/// Calls `visit(index, squared distance)` for the points of the plane at `z` within `radius` (the
/// bounding rows and columns: `visit` makes the exact test) of `c`; whether any row was visited.
fn scatter_disc(
    c: [f64; 3],
    radius: f64,
    z: f64,
    origin: [f64; 3],
    h: [f64; 2],
    n: [usize; 2],
    mut visit: impl FnMut(usize, f64),
) -> bool {
    let dz2 = (z - c[2]).powi(2);
    let rxy2 = radius * radius - dz2;
    if rxy2 <= 0.0 {
        return false;
    }
    let rxy = rxy2.sqrt();
    let Some((j0, j1)) = index_range(c[1] - rxy, c[1] + rxy, origin[1], h[1], n[1]) else {
        return false;
    };
    let mut any = false;
    for j in j0..=j1 {
        let dy = origin[1] + j as f64 * h[1] - c[1];
        let rx2 = rxy2 - dy * dy;
        if rx2 < 0.0 {
            continue;
        }
        let rx = rx2.sqrt();
        let Some((i0, i1)) = index_range(c[0] - rx, c[0] + rx, origin[0], h[0], n[0]) else {
            continue;
        };
        any = true;
        let row = n[0] * j;
        let dyz2 = dy * dy + dz2;
        for i in i0..=i1 {
            let dx = origin[0] + i as f64 * h[0] - c[0];
            visit(row + i, dx * dx + dyz2);
        }
    }
    any
}
