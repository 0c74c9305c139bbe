//! The coefficient maps of the Poisson-Boltzmann finite differences: dielectric on the three
//! staggered lattices, ion accessibility, charge density, boundary values, each as APBS builds
//! it (`Vpmg_fillco`, `src/mg/vpmg.c`).
//!
//! Owns [`Coefficients`] and [`coefficients`], called by the solvers of the CPU engine
//! ([`super::pb`]) and of the other engines. The dielectric and ion maps are
//! [`super::pb_surface`]'s. Charges: trilinear (APBS `spl0`) or APBS's `spl2` B-spline
//! (`fillcoChargeSpline2`: the piecewise-quadratic B-spline M3 centred on the charge, 3 points
//! per axis, which APBS's manual calls cubic). Boundary values (APBS `bcfl_sdh`, `bcflnew`):
//! `sdh`, the charge, dipole and quadrupole of all atoms about the centre of their bounding box
//! in a sphere of the solute radius (the farthest atom surface from that centre) of dielectric
//! `eps_in` in the screened solvent; `mdh`, one Debye-Hueckel sphere per atom of the atom's
//! radius. All lengths in Angstrom.

use super::pb_surface::{dielectric_maps, ion_accessibility};
pub use crate::compute::pb::Coefficients;
use crate::compute::pb::prep::{Multipoles, charge_spread, multipoles};
use crate::compute::pb::{PbAtoms, PbBoundary, PbLattice, PbParams};
use rayon::prelude::*;

/// The Debye-Hueckel potential (kT/e) at distance `r` of a sphere of radius `a` holding `q`.
fn debye_sphere(q: f64, r: f64, a: f64, kappa: f64, eps_out: f64, lb: f64) -> f64 {
    let r = r.max(1e-6);
    lb * q * (-kappa * (r - a)).exp() / (eps_out * (1.0 + kappa * a) * r)
}

/// APBS's `multipolebc`: the radial factors of the monopole, dipole and quadrupole potentials
/// outside a sphere of radius `a` and dielectric `eps_p` in a solvent `eps_w` with `kappa`.
fn multipole_factors(r: f64, kappa: f64, eps_p: f64, eps_w: f64, a: f64) -> [f64; 3] {
    let eps_r = eps_w / eps_p;
    let (r2, r3) = (r * r, r * r * r);
    let r5 = r3 * r2;
    let mut t = [1.0 / eps_w / r, -1.0 / eps_w / r3, 3.0 / eps_w / r5];
    if kappa < 1e-12 {
        t[1] *= 3.0 * eps_r / (1.0 + 2.0 * eps_r);
        t[2] *= 5.0 * eps_r / (2.0 + 3.0 * eps_r);
    } else {
        let (ka, kr) = (kappa * a, kappa * r);
        let (ka2, ka3, kr2) = (ka * ka, ka * ka * ka, kr * kr);
        let e = (ka - kr).exp();
        t[0] *= e / (1.0 + ka);
        t[1] *= 3.0 * eps_r * e * (1.0 + kr) / (1.0 + ka + eps_r * (2.0 + 2.0 * ka + ka2));
        t[2] *= 5.0 * eps_r * e * (3.0 + 3.0 * kr + kr2)
            / (6.0 + 6.0 * ka + 2.0 * ka2 + eps_r * (9.0 + 9.0 * ka + 4.0 * ka2 + ka3));
    }
    t
}

/// Builds every map; refuses a charge whose spread leaves the interior of the lattice.
pub fn coefficients(atoms: &PbAtoms, lattice: &PbLattice, p: &PbParams) -> Result<Coefficients, String> {
    let [nx, ny, nz] = lattice.dims;
    let n = lattice.n_points();
    let lb = p.bjerrum_angstrom();
    let kappa2 = p.kappa2_per_angstrom2();
    let kappa = kappa2.sqrt();
    let eps = dielectric_maps(atoms, lattice, p);
    let kbar2 = if kappa2 > 0.0 {
        ion_accessibility(atoms, lattice, p.ion_radius_angstrom)
            .into_iter()
            .map(|a| a * p.eps_out * kappa2)
            .collect()
    } else {
        vec![0.0; n]
    };
    // Charges.
    let mut source = vec![0.0; n];
    for c in charge_spread(atoms, lattice, p)? {
        for (zc, wz) in c.weights[2].iter().take(c.len[2]).enumerate() {
            for (yb, wy) in c.weights[1].iter().take(c.len[1]).enumerate() {
                for (xa, wx) in c.weights[0].iter().take(c.len[0]).enumerate() {
                    let (i, j, k) = (c.first[0] + xa, c.first[1] + yb, c.first[2] + zc);
                    if let Some(s) = source.get_mut(i + nx * (j + ny * k)) {
                        *s += c.scaled_charge * wx * wy * wz;
                    }
                }
            }
        }
    }
    // Boundary values (APBS `bcfl_sdh` and `bcflnew`).
    let Multipoles {
        centre,
        solute_radius,
        charge,
        dipole,
        quad,
    } = multipoles(atoms);
    let dist =
        |a: [f64; 3], b: [f64; 3]| ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt();
    let value_at = |x: [f64; 3]| match p.boundary {
        PbBoundary::Sdh => {
            let d: [f64; 3] = std::array::from_fn(|k| x[k] - centre[k]);
            let r = dist(x, centre).max(1e-6);
            let t = multipole_factors(r, kappa, p.eps_in, p.eps_out, solute_radius);
            let mut v = charge * t[0];
            v -= (dipole[0] * d[0] + dipole[1] * d[1] + dipole[2] * d[2]) * t[1];
            v += (quad[0][0] * d[0] * d[0]
                + quad[1][1] * d[1] * d[1]
                + quad[2][2] * d[2] * d[2]
                + 2.0 * quad[0][1] * d[0] * d[1]
                + 2.0 * quad[0][2] * d[0] * d[2]
                + 2.0 * quad[1][2] * d[1] * d[2])
                * t[2];
            lb * v
        }
        PbBoundary::Mdh => atoms
            .positions_angstrom
            .iter()
            .zip(&atoms.charges_e)
            .zip(&atoms.radii_angstrom)
            .map(|((a, &q), &r)| debye_sphere(q, dist(x, *a), r, kappa, p.eps_out, lb))
            .sum(),
    };
    let mut boundary = vec![0.0; n];
    boundary
        .par_chunks_mut((nx * ny).max(1))
        .enumerate()
        .for_each(|(k, slab)| {
            for j in 0..ny {
                for i in 0..nx {
                    let face = i == 0 || j == 0 || k == 0 || i + 1 == nx || j + 1 == ny || k + 1 == nz;
                    if face && let Some(v) = slab.get_mut(i + nx * j) {
                        *v = value_at(lattice.point(i, j, k));
                    }
                }
            }
        });
    Ok(Coefficients {
        eps,
        kbar2,
        source,
        boundary,
    })
}
