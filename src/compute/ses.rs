//! The solvent-excluded (Connolly) surface as a field: the geometry every engine shares.
//!
//! The solvent-excluded surface (SES, the "molecular surface" of MSMS, PyMOL, ChimeraX and VMD's
//! Surf) is the boundary of the space a spherical probe of radius `p` (1.4 A, water) cannot reach:
//! where the probe touches one atom it is that atom's van der Waals sphere (contact faces); where
//! it touches two or three it is the probe's own sphere, concave (re-entrant faces). A point `x`
//! lies outside it exactly when a probe centred at an accessible position (`|c - a_i| >= r_i + p`
//! for every atom `i`) covers it, `|x - c| < p`. With `d(x)` the distance from `x` to the
//! accessible region (0 when `x` is accessible), the surface is `d = p`.
//!
//! Owns [`ExcludedSurface`]: the atoms' spheres inflated by the probe (the solvent-accessible
//! surface, SAS), each with its neighbours, and probe centres sampled on the exposed part of the
//! SAS, about [`PROBE_SAMPLES_PER_ANGSTROM2`] per square Angstrom (APBS's reference sphere per atom,
//! each point kept when no other atom's inflated sphere holds it). Inside the SAS the nearest
//! accessible point lies on its boundary, so `d(x)` is the smaller of two terms:
//! - *contact*: `R_i - |x - a_i|` for an inflated sphere `i` whose point straight out from its
//!   centre through `x` no other inflated sphere holds (exact: where the probe rolls on one atom,
//!   the surface is that atom's sphere to rounding);
//! - *circle*: where that outward point is held by a neighbour `j`, the distance to the nearest
//!   point of the circle where spheres `i` and `j` meet, when no third sphere holds it (exact: the
//!   probe rolling on two atoms, the toroidal faces);
//! - *samples*: the distance to the nearest sampled centre, which stands for the rest: the points
//!   where three inflated spheres meet (the probe touching three atoms, the concave spherical
//!   triangles). Samples about 0.3 A apart leave those faces within a few hundredths of an
//!   Angstrom of their exact place (`g^2 / 2p` for a gap `g`), below a tenth of the spacings a
//!   lattice takes.
//!
//! The field the engines write ([`value_from_distance`]) is `0.5 + 0.5 clamp((d - p) / p, -1, 1)`:
//! 0 wherever a probe can be (outside the SAS, and within the probe's reach of it), 0.5 on the
//! surface, 1 at least a probe radius inside it, and linear in the distance across the surface, so
//! a marching-cubes surface at [`crate::model::field::MOLSURF_LEVEL`] (0.5) places its vertices by
//! linear interpolation of a distance. The CPU engine fills it ([`crate::compute::cpu::ses`]) and
//! the CUDA engine ([`crate::compute::cuda::ses`], `kernels/ses.cu`: the same terms in f32); the
//! wgpu engine refuses it ([`crate::compute::placement`] puts the job kind on the others).

use crate::compute::pb::prep::{exposed_on_sphere, reference_sphere};
use crate::model::units::{angstrom_from_bohr, bohr_from_angstrom};

/// The default probe radius (water), Angstrom.
pub const DEFAULT_PROBE_RADIUS_ANGSTROM: f64 = 1.4;
/// Probe radii accepted, Angstrom (the field's width across the surface is the probe radius, so a
/// probe much smaller than a lattice spacing would leave the surface unresolved; the Gaussian surface
/// stands for the union of the spheres).
pub const PROBE_RADIUS_RANGE_ANGSTROM: std::ops::RangeInclusive<f64> = 0.2..=5.0;
/// How far past the surface (Angstrom, by the samples' distance) the exact terms are still applied:
/// beyond, a point lies well inside and a lattice's marching cubes take no crossing from it.
pub const EXACT_BAND_ANGSTROM: f64 = 1.0;
/// Probe centres sampled per square Angstrom of each atom's inflated sphere (APBS's `sdens`).
pub const PROBE_SAMPLES_PER_ANGSTROM2: f64 = 10.0;

/// The SES of a set of atoms, ready for evaluation: inflated spheres and sampled probe centres,
/// both sorted by z (bohr throughout).
#[derive(Debug, Default)]
pub struct ExcludedSurface {
    /// The probe radius `p`.
    pub probe_bohr: f64,
    /// Atom centres with their inflated radius `r + p`, sorted by z.
    pub spheres: Vec<([f64; 3], f64)>,
    /// For each sphere, the spheres that cut it (indices into `spheres`).
    pub neighbors: Vec<Vec<u32>>,
    /// The z of each sphere's centre (for windows).
    pub sphere_z: Vec<f64>,
    /// The largest inflated radius.
    pub max_inflated_bohr: f64,
    /// Probe centres on the exposed SAS, sorted by z.
    pub probes: Vec<[f64; 3]>,
    /// The z of each probe centre.
    pub probe_z: Vec<f64>,
}

/// The field value at distance `d` from the accessible region, probe radius `p` (see the module docs).
pub fn value_from_distance(d_bohr: f64, probe_bohr: f64) -> f64 {
    if probe_bohr <= 0.0 {
        return 0.0;
    }
    0.5 + 0.5 * ((d_bohr - probe_bohr) / probe_bohr).clamp(-1.0, 1.0)
}

impl ExcludedSurface {
    /// The SES of the atoms at `centers_bohr` with `radii_bohr` (atoms with a radius that is not
    /// positive and finite, or a position that is not finite, take no part) and probe `probe_bohr`.
    pub fn new(centers_bohr: &[[f64; 3]], radii_bohr: &[f64], probe_bohr: f64) -> ExcludedSurface {
        let p = if probe_bohr.is_finite() {
            probe_bohr.max(0.0)
        } else {
            0.0
        };
        let mut spheres: Vec<([f64; 3], f64)> = centers_bohr
            .iter()
            .zip(radii_bohr)
            .filter(|(c, r)| **r > 0.0 && r.is_finite() && c.iter().all(|x| x.is_finite()))
            .map(|(&c, &r)| (c, r + p))
            .collect();
        spheres.sort_by(|a, b| a.0[2].total_cmp(&b.0[2]));
        let sphere_z: Vec<f64> = spheres.iter().map(|s| s.0[2]).collect();
        let max_inflated_bohr = spheres.iter().map(|s| s.1).fold(0.0, f64::max);
        let neighbors = neighbor_lists(&spheres, &sphere_z, max_inflated_bohr);
        let mut probes = if p > 0.0 {
            exposed_points(&spheres, &neighbors)
        } else {
            Vec::new()
        };
        probes.sort_by(|a, b| a[2].total_cmp(&b[2]));
        let probe_z = probes.iter().map(|c| c[2]).collect();
        ExcludedSurface {
            probe_bohr: p,
            spheres,
            neighbors,
            sphere_z,
            max_inflated_bohr,
            probes,
            probe_z,
        }
    }

    /// The spheres whose centre lies within the largest inflated radius of `z_lo..=z_hi` (indices).
    pub fn sphere_window(&self, z_lo: f64, z_hi: f64) -> std::ops::Range<usize> {
        let a = self.sphere_z.partition_point(|&z| z < z_lo - self.max_inflated_bohr);
        let b = self.sphere_z.partition_point(|&z| z <= z_hi + self.max_inflated_bohr);
        a..b.max(a)
    }

    /// The exact terms of sphere `i` at `x`, `rho = |x - a_i|` (`0 < rho < R_i`): the contact term
    /// `R_i - rho` when no neighbour's inflated sphere holds the point of sphere `i` straight out
    /// through `x`; else, for each neighbour `j` that holds it, the distance to the nearest point of
    /// the circle where spheres `i` and `j` meet, when no third sphere holds that point (the probe
    /// touching two atoms). `None` when neither is exposed (the samples stand for the rest).
    pub fn boundary_distance(&self, i: usize, x: [f64; 3], rho: f64) -> Option<f64> {
        let &(a, big) = self.spheres.get(i)?;
        if !(rho > 0.0 && rho < big) {
            return None;
        }
        let list = self.neighbors.get(i)?;
        let held = |q: [f64; 3], except: u32| {
            list.iter().any(|&k| {
                k != except
                    && self
                        .spheres
                        .get(k as usize)
                        .is_some_and(|(b, rb)| dist2(q, *b) < rb * rb)
            })
        };
        let s = big / rho;
        let q = [
            a[0] + s * (x[0] - a[0]),
            a[1] + s * (x[1] - a[1]),
            a[2] + s * (x[2] - a[2]),
        ];
        let mut best: Option<f64> = None;
        let mut buried = false;
        for &j in list {
            let Some(&(b, rb)) = self.spheres.get(j as usize) else {
                continue;
            };
            if dist2(q, b) >= rb * rb {
                continue;
            }
            buried = true;
            if let Some(c) = nearest_on_circle(a, big, b, rb, x)
                && !held(c, j)
            {
                let d = dist2(x, c).sqrt();
                best = Some(best.map_or(d, |e| e.min(d)));
            }
        }
        if buried { best } else { Some(big - rho) }
    }

    /// The probe centres within `reach` of `z_lo..=z_hi` in z.
    pub fn probe_window(&self, z_lo: f64, z_hi: f64, reach: f64) -> &[[f64; 3]] {
        window(&self.probe_z, &self.probes, z_lo - reach, z_hi + reach)
    }

    /// How far inside the accessible region's boundary the field still changes: `2p` (the field is
    /// 1 beyond it).
    pub fn reach_bohr(&self) -> f64 {
        2.0 * self.probe_bohr
    }

    /// The exact terms are applied where the nearest sampled centre is nearer than this: `p` and
    /// [`EXACT_BAND_ANGSTROM`] (farther, the point lies inside the surface by more than that
    /// margin less the samples' gap, and keeps the samples' distance).
    pub fn exact_band_bohr(&self) -> f64 {
        self.probe_bohr + bohr_from_angstrom(EXACT_BAND_ANGSTROM)
    }

    /// Whether `x` lies strictly inside some inflated sphere (not where a probe centre can be).
    pub fn inside_accessible_boundary(&self, x: [f64; 3]) -> bool {
        self.spheres
            .get(self.sphere_window(x[2], x[2]))
            .unwrap_or(&[])
            .iter()
            .any(|(c, r)| dist2(x, *c) < r * r)
    }

    /// The field at one point (bohr): the module's [`value_from_distance`].
    pub fn value_at(&self, x: [f64; 3]) -> f64 {
        if !self.inside_accessible_boundary(x) {
            return 0.0;
        }
        let reach = self.reach_bohr();
        let mut d2 = self
            .probe_window(x[2], x[2], reach)
            .iter()
            .map(|c| dist2(x, *c))
            .fold(reach * reach, f64::min);
        let band = self.exact_band_bohr();
        if d2 < band * band {
            for i in self.sphere_window(x[2], x[2]) {
                let Some(&(a, r)) = self.spheres.get(i) else { continue };
                let rho = dist2(x, a).sqrt();
                if rho <= (r - reach).max(0.0) || (r - rho) * (r - rho) >= d2 {
                    continue;
                }
                if let Some(d) = self.boundary_distance(i, x, rho) {
                    d2 = d2.min(d * d);
                }
            }
        }
        value_from_distance(d2.sqrt(), self.probe_bohr)
    }

    /// Padding around the atoms' centres (Angstrom) that holds the surface with a layer outside it:
    /// the largest atomic radius and one Angstrom.
    pub fn padding_angstrom(&self) -> f64 {
        angstrom_from_bohr(self.max_inflated_bohr - self.probe_bohr) + 1.0
    }
}

/// The point nearest `x` of the circle where the spheres `(a, ra)` and `(b, rb)` meet; `None` when
/// they do not cut each other or `x` lies on the circle's axis.
fn nearest_on_circle(a: [f64; 3], ra: f64, b: [f64; 3], rb: f64, x: [f64; 3]) -> Option<[f64; 3]> {
    let d = dist2(a, b).sqrt();
    if !(d > 0.0 && d < ra + rb && d > (ra - rb).abs()) {
        return None;
    }
    let n = [(b[0] - a[0]) / d, (b[1] - a[1]) / d, (b[2] - a[2]) / d];
    let t = (ra * ra - rb * rb + d * d) / (2.0 * d);
    let radius = (ra * ra - t * t).max(0.0).sqrt();
    let c = [a[0] + t * n[0], a[1] + t * n[1], a[2] + t * n[2]];
    let v = [x[0] - c[0], x[1] - c[1], x[2] - c[2]];
    let along = v[0] * n[0] + v[1] * n[1] + v[2] * n[2];
    let w = [v[0] - along * n[0], v[1] - along * n[1], v[2] - along * n[2]];
    let len = (w[0] * w[0] + w[1] * w[1] + w[2] * w[2]).sqrt();
    if len <= 1e-12 * radius.max(1.0) {
        return None;
    }
    let s = radius / len;
    Some([c[0] + s * w[0], c[1] + s * w[1], c[2] + s * w[2]])
}

fn window<'a, T>(keys: &[f64], items: &'a [T], lo: f64, hi: f64) -> &'a [T] {
    let a = keys.partition_point(|&z| z < lo);
    let b = keys.partition_point(|&z| z <= hi);
    items.get(a..b.max(a)).unwrap_or(&[])
}

fn dist2(a: [f64; 3], b: [f64; 3]) -> f64 {
    (a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)
}

/// For each sphere (sorted by z), the others that cut it.
fn neighbor_lists(spheres: &[([f64; 3], f64)], sphere_z: &[f64], max_inflated: f64) -> Vec<Vec<u32>> {
    use rayon::prelude::*;
    spheres
        .par_iter()
        .enumerate()
        .map(|(i, &(a, r))| {
            let lo = sphere_z.partition_point(|&z| z < a[2] - r - max_inflated);
            let hi = sphere_z.partition_point(|&z| z <= a[2] + r + max_inflated);
            (lo..hi.max(lo))
                .filter(|&j| j != i)
                .filter(|&j| spheres.get(j).is_some_and(|(b, rb)| dist2(a, *b) < (r + rb) * (r + rb)))
                .filter_map(|j| u32::try_from(j).ok())
                .collect()
        })
        .collect()
}

/// Points of each inflated sphere that no other inflated sphere holds.
fn exposed_points(spheres: &[([f64; 3], f64)], neighbors: &[Vec<u32>]) -> Vec<[f64; 3]> {
    use rayon::prelude::*;
    // One reference sphere per distinct inflated radius (a handful of element radii).
    let mut references: Vec<(f64, Vec<[f64; 3]>)> = Vec::new();
    for &(_, r) in spheres {
        if !references.iter().any(|(q, _)| *q == r) {
            let r_angstrom = angstrom_from_bohr(r);
            let n = (4.0 * std::f64::consts::PI * r_angstrom * r_angstrom * PROBE_SAMPLES_PER_ANGSTROM2).ceil();
            references.push((r, reference_sphere((n as usize).clamp(12, 200_000))));
        }
    }
    spheres
        .par_iter()
        .zip(neighbors)
        .flat_map_iter(|(&(a, r), list)| {
            let near: Vec<([f64; 3], f64)> = list
                .iter()
                .filter_map(|&j| spheres.get(j as usize))
                .map(|&(b, rb)| (b, rb * rb))
                .collect();
            let reference = references
                .iter()
                .find(|(q, _)| *q == r)
                .map(|(_, v)| v.as_slice())
                .unwrap_or(&[]);
            exposed_on_sphere(a, r, reference, &near)
        })
        .collect()
}

/// The probe radius in bohr for `angstrom`, checked against [`PROBE_RADIUS_RANGE_ANGSTROM`].
pub fn probe_bohr_checked(angstrom: f64) -> Result<f64, String> {
    if angstrom.is_finite() && PROBE_RADIUS_RANGE_ANGSTROM.contains(&angstrom) {
        Ok(bohr_from_angstrom(angstrom))
    } else {
        Err(format!(
            "probe radius {angstrom} A is outside {}..={} A",
            PROBE_RADIUS_RANGE_ANGSTROM.start(),
            PROBE_RADIUS_RANGE_ANGSTROM.end()
        ))
    }
}

#[cfg(test)]
mod tests {
    //! The CUDA kernel's host emulation (`compute::cuda::ses::SesPlan::emulate`) against the CPU
    //! engine: here, where both engines may be named.
    use super::ExcludedSurface;
    use crate::compute::cpu::ses::PreparedSes;
    use crate::compute::cuda::ses::SesPlan;
    use crate::model::Lattice;
    use crate::model::units::BOHR_PER_ANGSTROM;
    use std::sync::Arc;

    /// The kernel's emulation against the CPU engine on a random cluster, on a lattice that cuts
    /// through it (atoms outside the box, in its border cells) and with a far-off origin.
    #[test]
    fn emulated_kernel_matches_the_cpu_engine() {
        let mut seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos() as u64)
            .unwrap_or(7)
            | 1;
        let mut rnd = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        let shift = 40.0 * BOHR_PER_ANGSTROM;
        let centers: Vec<[f64; 3]> = (0..40)
            .map(|_| [0, 1, 2].map(|_| shift + 9.0 * BOHR_PER_ANGSTROM * rnd()))
            .collect();
        let radii: Vec<f64> = (0..40).map(|_| (1.1 + 0.8 * rnd()) * BOHR_PER_ANGSTROM).collect();
        let surface = Arc::new(ExcludedSurface::new(&centers, &radii, 1.4 * BOHR_PER_ANGSTROM));
        let h = 0.41 * BOHR_PER_ANGSTROM;
        let lattice = Lattice::axis_aligned([shift + 1.0, shift - 2.0, shift + 3.0], h, [30, 36, 28]);
        let plan = SesPlan::new(&surface, &lattice).unwrap();
        let cpu = PreparedSes::new(Arc::clone(&surface));
        let [nx, ny, _] = lattice.dims;
        let got = plan.emulate(&(4..20));
        let mut want = vec![0.0f32; nx * ny];
        let (mut worst, mut across) = (0.0f32, 0);
        for (kz, k) in (4..20).enumerate() {
            cpu.fill_plane(&lattice, k, &mut want);
            for (p, w) in want.iter().enumerate() {
                let g = got[p + nx * ny * kz];
                worst = worst.max((g - w).abs());
                across += usize::from(*w > 0.0 && *w < 1.0);
            }
        }
        assert!(across > 1000, "{across} points near the surface");
        assert!(worst < 2e-3, "worst difference {worst}");
    }
}
