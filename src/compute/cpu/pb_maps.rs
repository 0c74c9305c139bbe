//! The coefficient maps of the Poisson-Boltzmann finite differences: dielectric on the three
//! staggered lattices, ion accessibility, charge density, boundary values, each as APBS builds
//! it (`Vpmg_fillco`, `src/mg/vpmg.c`).
//!
//! Owns [`Coefficients`], [`coefficients`] (every map from the atoms) and
//! [`coefficients_with_boundary`] (a focused lattice's: face values given), called by the solvers
//! of the CPU engine ([`super::pb`]) and of the other engines. The dielectric and ion maps are
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
    let (eps, kbar2) = medium_maps(atoms, lattice, p);
    let source = spread_charges(atoms, lattice, p, false)?;
    let boundary = boundary_values(atoms, lattice, p);
    Ok(Coefficients {
        eps,
        kbar2,
        source,
        boundary,
    })
}

/// The maps of a focused lattice (APBS `bcfl focus`): the face values are given (`boundary`, one
/// per lattice point, read on the faces only: the coarser solution interpolated,
/// `compute::pb::focus`); the dielectric and ion maps are built from every atom; each charge adds
/// its weights at the interior points and the weights that fall on the faces or beyond are
/// dropped, so charges outside the lattice add nothing (their field enters through the face
/// values), as APBS's `fillcoChargeSpline1`/`fillcoChargeSpline2` do under `bcfl focus`.
pub fn coefficients_with_boundary(
    atoms: &PbAtoms,
    lattice: &PbLattice,
    p: &PbParams,
    boundary: Vec<f64>,
) -> Result<Coefficients, String> {
    if boundary.len() != lattice.n_points() {
        return Err(format!(
            "{} boundary values for a lattice of {:?} ({} points)",
            boundary.len(),
            lattice.dims,
            lattice.n_points()
        ));
    }
    if let Some(v) = boundary.iter().find(|v| !v.is_finite()) {
        return Err(format!("boundary value {v}: finite values expected"));
    }
    let (eps, kbar2) = medium_maps(atoms, lattice, p);
    let source = spread_charges(atoms, lattice, p, true)?;
    Ok(Coefficients {
        eps,
        kbar2,
        source,
        boundary,
    })
}

/// The dielectric on the staggered lattices and `kbar^2` at the lattice points.
fn medium_maps(atoms: &PbAtoms, lattice: &PbLattice, p: &PbParams) -> ([Vec<f64>; 3], Vec<f64>) {
    let kappa2 = p.kappa2_per_angstrom2();
    let eps = dielectric_maps(atoms, lattice, p);
    let kbar2 = if kappa2 > 0.0 {
        ion_accessibility(atoms, lattice, p.ion_radius_angstrom)
            .into_iter()
            .map(|a| a * p.eps_out * kappa2)
            .collect()
    } else {
        vec![0.0; lattice.n_points()]
    };
    (eps, kbar2)
}

/// `4 pi l_B rho / h^3` at the lattice points. `partial`: keep the weights that land on interior
/// points and drop the rest (a focused lattice); else refuse a charge whose spread leaves the
/// interior.
fn spread_charges(atoms: &PbAtoms, lattice: &PbLattice, p: &PbParams, partial: bool) -> Result<Vec<f64>, String> {
    let [nx, ny, _] = lattice.dims;
    let mut source = vec![0.0; lattice.n_points()];
    let interior = |k: usize, i: i64| i >= 1 && i < lattice.dims[k] as i64 - 1;
    for c in charge_spread(atoms, lattice, p, partial)? {
        for (zc, wz) in c.weights[2].iter().take(c.len[2]).enumerate() {
            let k = c.first[2] + zc as i64;
            if !interior(2, k) {
                continue;
            }
            for (yb, wy) in c.weights[1].iter().take(c.len[1]).enumerate() {
                let j = c.first[1] + yb as i64;
                if !interior(1, j) {
                    continue;
                }
                for (xa, wx) in c.weights[0].iter().take(c.len[0]).enumerate() {
                    let i = c.first[0] + xa as i64;
                    if !interior(0, i) {
                        continue;
                    }
                    if let Some(s) = source.get_mut(i as usize + nx * (j as usize + ny * k as usize)) {
                        *s += c.scaled_charge * wx * wy * wz;
                    }
                }
            }
        }
    }
    Ok(source)
}

/// Boundary values on the faces from the atoms (APBS `bcfl_sdh` and `bcflnew`); zero inside.
fn boundary_values(atoms: &PbAtoms, lattice: &PbLattice, p: &PbParams) -> Vec<f64> {
    let [nx, ny, nz] = lattice.dims;
    let n = lattice.n_points();
    let lb = p.bjerrum_angstrom();
    let kappa = p.kappa2_per_angstrom2().sqrt();
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
    boundary
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]
    use super::*;

    #[test]
    fn a_focused_lattice_spreads_the_charges_inside_and_drops_what_reaches_past_its_faces() {
        let lattice = PbLattice {
            origin_angstrom: [0.0; 3],
            spacing_angstrom: 1.0,
            dims: [9; 3],
        };
        let p = PbParams::default();
        let inside = PbAtoms {
            positions_angstrom: vec![[4.3, 3.6, 4.1]],
            charges_e: vec![1.0],
            radii_angstrom: vec![1.5],
        };
        let faces = vec![0.0; lattice.n_points()];
        let plain = coefficients(&inside, &lattice, &p).unwrap();
        let focused = coefficients_with_boundary(&inside, &lattice, &p, faces.clone()).unwrap();
        assert_eq!(plain.source, focused.source);
        // Past the high x face by half a spacing: nothing lands on an interior point (spl2 reaches
        // 1.5 spacings, the last interior point is 1.5 spacings away).
        let outside = PbAtoms {
            positions_angstrom: vec![[8.5, 4.0, 4.0]],
            ..inside.clone()
        };
        assert!(coefficients(&outside, &lattice, &p).is_err());
        let focused = coefficients_with_boundary(&outside, &lattice, &p, faces.clone()).unwrap();
        assert!(focused.source.iter().all(|&s| s == 0.0));
        // On the last interior plane: the weight on the face is dropped, the rest kept.
        let edge = PbAtoms {
            positions_angstrom: vec![[7.0, 4.0, 4.0]],
            ..inside
        };
        let focused = coefficients_with_boundary(&edge, &lattice, &p, faces).unwrap();
        let scale = 4.0 * std::f64::consts::PI * p.bjerrum_angstrom();
        let total: f64 = focused.source.iter().sum::<f64>() / scale;
        // M3 weights 1/8, 3/4, 1/8 along x: the face's 1/8 goes.
        assert!((total - 0.875).abs() < 1e-12, "{total}");
        assert!(coefficients_with_boundary(&edge, &lattice, &p, vec![0.0; 5]).is_err());
    }
}
