//! The dielectric and ion-accessibility maps of the Poisson-Boltzmann finite differences, built
//! as APBS builds them (`Vpmg_fillco` in APBS's `src/mg/vpmg.c`), so that a solve on the same
//! lattice is comparable with APBS's point by point.
//!
//! Owns [`dielectric_maps`] and [`ion_accessibility`], called by [`super::pb_maps::coefficients`].
//! All lengths in Angstrom.
//!
//! - Molecular surface (`srfm mol`, APBS `fillcoCoefMolDielNoSmooth`): every lattice point starts
//!   as solvent (`eps_out`); every point within radius + probe of an atom of nonzero radius
//!   becomes solute (`eps_in`); then every point within the probe radius of a solvent-accessible
//!   surface point becomes solvent again. The surface points of an atom are a reference sphere
//!   (APBS `VaccSurf_refSphere`: rings of constant polar angle) scaled to radius + probe around
//!   it, kept when no other atom lies closer than its radius + probe; the reference sphere has
//!   `ceil(4 pi R^2 * 10)` points, R the largest atomic radius plus the larger of probe and ion
//!   radius plus 0.5 A (APBS's `sdens 10` and its cell-list radius).
//! - Smoothed molecular surface (`srfm smol`, APBS `fillcoCoefMolDielSmooth`): the `mol` maps, then
//!   each staggered value replaced by the harmonic mean of itself and the 8 staggered values
//!   1/sqrt(2) spacings away (Bruccoleri et al., J. Comput. Chem. 18, 268 (1997)). APBS's `swin`
//!   plays no part in it.
//! - Edge fraction (`PbSurface::Fraction`, not an APBS model): the molecular surface above sampled
//!   at [`EDGE_SAMPLES`] points along each staggered edge (from a lattice point to the next along
//!   the axis); the edge's dielectric is the series mean `1 / (f / eps_in + (1 - f) / eps_out)`
//!   of the fraction f inside. It removes most of the staircase error next to the surface (Born
//!   ion: 0.8 % instead of 2.3 % two spacings outside).
//! - Ion accessibility (APBS `fillcoCoefMolIon`): zero within radius + ion radius of an atom of
//!   nonzero radius, one elsewhere.
//!
//! "Within" includes the sphere's surface (`<=`), as APBS's `markSphere`.

use crate::compute::pb::prep::{SasLayout, TINY_RADIUS_ANGSTROM, exposed_on_sphere, sas_layout};
use crate::compute::pb::{PbAtoms, PbLattice, PbParams, PbSurface};
use rayon::prelude::*;

/// Sets `value` at every point of the lattice shifted by `shift` spacings that lies within
/// `radius[s]` of `centre[s]` for some sphere s (planes in parallel).
fn mark_spheres(
    lattice: &PbLattice,
    shift: [f64; 3],
    centres: &[[f64; 3]],
    radii: &[f64],
    array: &mut [f64],
    value: f64,
) {
    let h = lattice.spacing_angstrom;
    let min: [f64; 3] = std::array::from_fn(|k| lattice.origin_angstrom[k] + shift[k] * h);
    mark_spheres_on(min, [h; 3], lattice.dims, centres, radii, array, value);
}

/// [`mark_spheres`] on the lattice `min + (i hx, j hy, k hz)` of `dims` points.
fn mark_spheres_on<T: Copy + Send + Sync>(
    min: [f64; 3],
    h3: [f64; 3],
    dims: [usize; 3],
    centres: &[[f64; 3]],
    radii: &[f64],
    array: &mut [T],
    value: T,
) {
    let [nx, ny, _] = dims;
    let [hx, hy, hz] = h3;
    // Spheres sorted by their centre's z, to find those that reach a plane.
    let mut order: Vec<usize> = (0..centres.len()).collect();
    let z_of = |s: usize| centres.get(s).map_or(0.0, |c| c[2]);
    order.sort_by(|&a, &b| z_of(a).total_cmp(&z_of(b)));
    let zs: Vec<f64> = order.iter().map(|&s| z_of(s)).collect();
    let rmax = radii.iter().copied().fold(0.0, f64::max);
    let plane = (nx * ny).max(1);
    array.par_chunks_mut(plane).enumerate().for_each(|(k, slab)| {
        let fk = k as f64;
        let lo = zs.partition_point(|&z| z - min[2] < hz * fk - rmax - hz);
        let hi = zs.partition_point(|&z| z - min[2] <= hz * fk + rmax + hz);
        for &s in order.get(lo..hi).unwrap_or(&[]) {
            let (Some(c), Some(&r)) = (centres.get(s), radii.get(s)) else {
                continue;
            };
            let pos = [c[0] - min[0], c[1] - min[1], c[2] - min[2]];
            let r2 = r * r;
            let dz2 = (pos[2] - hz * fk).powi(2);
            if dz2 > r2 {
                continue;
            }
            let yr = r + 0.5 * hy;
            let j0 = ((pos[1] - yr) / hy).ceil().max(0.0) as usize;
            let j1 = ((pos[1] + yr) / hy).floor().min(ny as f64 - 1.0);
            if j1 < 0.0 {
                continue;
            }
            let xr = r + 0.5 * hx;
            let i0 = ((pos[0] - xr) / hx).ceil().max(0.0) as usize;
            let i1 = ((pos[0] + xr) / hx).floor().min(nx as f64 - 1.0);
            if i1 < 0.0 {
                continue;
            }
            for j in j0..=j1 as usize {
                let dy2 = (pos[1] - hy * j as f64).powi(2);
                if dy2 + dz2 > r2 {
                    continue;
                }
                for i in i0..=i1 as usize {
                    let dx2 = (pos[0] - hx * i as f64).powi(2);
                    if dx2 + dy2 + dz2 <= r2
                        && let Some(v) = slab.get_mut(i + nx * j)
                    {
                        *v = value;
                    }
                }
            }
        }
    });
}

/// The solvent-accessible surface points of every atom of nonzero radius (APBS
/// `Vacc_atomSASPoints`): the reference sphere scaled to radius + probe around the atom, kept
/// when no other atom's centre lies closer than its radius + probe.
fn accessible_surface_points(atoms: &PbAtoms, probe: f64, ion_radius: f64) -> Vec<[f64; 3]> {
    let SasLayout {
        reference,
        rmax_atom,
        cell,
    } = sas_layout(atoms, probe, ion_radius);
    let key = |p: &[f64; 3]| p.map(|x| (x / cell).floor() as i64);
    let mut bins: std::collections::HashMap<[i64; 3], Vec<usize>> = std::collections::HashMap::new();
    for (i, p) in atoms.positions_angstrom.iter().enumerate() {
        bins.entry(key(p)).or_default().push(i);
    }
    atoms
        .positions_angstrom
        .par_iter()
        .zip(&atoms.radii_angstrom)
        .enumerate()
        .flat_map_iter(|(i, (a, &r))| {
            if r <= TINY_RADIUS_ANGSTROM {
                return Vec::new();
            }
            let rad = r + probe;
            // Atoms whose inflated sphere can reach this one's.
            let reach = ((rad + rmax_atom + probe) / cell).ceil() as i64;
            let k = key(a);
            let mut near: Vec<([f64; 3], f64)> = Vec::new();
            for dz in -reach..=reach {
                for dy in -reach..=reach {
                    for dx in -reach..=reach {
                        for &j in bins.get(&[k[0] + dx, k[1] + dy, k[2] + dz]).into_iter().flatten() {
                            let (Some(b), Some(&rj)) = (atoms.positions_angstrom.get(j), atoms.radii_angstrom.get(j))
                            else {
                                continue;
                            };
                            let d2 = (a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2);
                            let lim = rad + rj + probe;
                            if j != i && d2 < lim * lim {
                                near.push((*b, (rj + probe) * (rj + probe)));
                            }
                        }
                    }
                }
            }
            exposed_on_sphere(*a, rad, &reference, &near)
        })
        .collect()
}

/// APBS's nine-point harmonic smoothing of the three staggered maps (`fillcoCoefMolDielSmooth`).
fn smooth(lattice: &PbLattice, eps: &[Vec<f64>; 3], eps_out: f64) -> [Vec<f64>; 3] {
    let [nx, ny, nz] = lattice.dims;
    let [a1, a2, a3] = eps;
    let at = |a: &Vec<f64>, i: usize, j: usize, k: usize| a.get(i + nx * (j + ny * k)).copied().unwrap_or(eps_out);
    let plane = (nx * ny).max(1);
    let mut out: [Vec<f64>; 3] = std::array::from_fn(|_| vec![eps_out; lattice.n_points()]);
    let [ox, oy, oz] = &mut out;
    ox.par_chunks_mut(plane)
        .zip(oy.par_chunks_mut(plane))
        .zip(oz.par_chunks_mut(plane))
        .enumerate()
        .for_each(|(k, ((sx, sy), sz))| {
            for j in 0..ny {
                for i in 0..nx {
                    let o = i + nx * j;
                    // x-shifted
                    let mut f = 1.0 / at(a1, i, j, k) + 1.0 / at(a2, i, j, k) + 1.0 / at(a3, i, j, k);
                    let mut n = 3.0;
                    if j > 0 {
                        f += 1.0 / at(a2, i, j - 1, k);
                        n += 1.0;
                    }
                    if k > 0 {
                        f += 1.0 / at(a3, i, j, k - 1);
                        n += 1.0;
                    }
                    if i + 1 < nx {
                        f += 1.0 / at(a2, i + 1, j, k) + 1.0 / at(a3, i + 1, j, k);
                        n += 2.0;
                        if j > 0 {
                            f += 1.0 / at(a2, i + 1, j - 1, k);
                            n += 1.0;
                        }
                        if k > 0 {
                            f += 1.0 / at(a3, i + 1, j, k - 1);
                            n += 1.0;
                        }
                    }
                    if let Some(v) = sx.get_mut(o) {
                        *v = n / f;
                    }
                    // y-shifted
                    let mut f = 1.0 / at(a2, i, j, k) + 1.0 / at(a1, i, j, k) + 1.0 / at(a3, i, j, k);
                    let mut n = 3.0;
                    if i > 0 {
                        f += 1.0 / at(a1, i - 1, j, k);
                        n += 1.0;
                    }
                    if k > 0 {
                        f += 1.0 / at(a3, i, j, k - 1);
                        n += 1.0;
                    }
                    if j + 1 < ny {
                        f += 1.0 / at(a1, i, j + 1, k) + 1.0 / at(a3, i, j + 1, k);
                        n += 2.0;
                        if i > 0 {
                            f += 1.0 / at(a1, i - 1, j + 1, k);
                            n += 1.0;
                        }
                        if k > 0 {
                            f += 1.0 / at(a3, i, j + 1, k - 1);
                            n += 1.0;
                        }
                    }
                    if let Some(v) = sy.get_mut(o) {
                        *v = n / f;
                    }
                    // z-shifted
                    let mut f = 1.0 / at(a3, i, j, k) + 1.0 / at(a1, i, j, k) + 1.0 / at(a2, i, j, k);
                    let mut n = 3.0;
                    if i > 0 {
                        f += 1.0 / at(a1, i - 1, j, k);
                        n += 1.0;
                    }
                    if j > 0 {
                        f += 1.0 / at(a2, i, j - 1, k);
                        n += 1.0;
                    }
                    if k + 1 < nz {
                        f += 1.0 / at(a1, i, j, k + 1) + 1.0 / at(a2, i, j, k + 1);
                        n += 2.0;
                        if i > 0 {
                            f += 1.0 / at(a1, i - 1, j, k + 1);
                            n += 1.0;
                        }
                        if j > 0 {
                            f += 1.0 / at(a2, i, j - 1, k + 1);
                            n += 1.0;
                        }
                    }
                    if let Some(v) = sz.get_mut(o) {
                        *v = n / f;
                    }
                }
            }
        });
    out
}

/// Sub-samples per staggered edge of the edge-fraction surface.
pub const EDGE_SAMPLES: usize = 8;

/// The `fraction` surface: for each staggered edge (from point p to its neighbour along the axis),
/// the fraction `f` of [`EDGE_SAMPLES`] points along it inside the molecular surface, and
/// `eps = 1 / (f / eps_in + (1 - f) / eps_out)` (the series dielectric of the edge).
fn edge_fraction_maps(
    lattice: &PbLattice,
    p: &PbParams,
    centres: &[[f64; 3]],
    inflated: &[f64],
    sas: &[[f64; 3]],
    probe_radii: &[f64],
) -> [Vec<f64>; 3] {
    let h = lattice.spacing_angstrom;
    let m = EDGE_SAMPLES;
    std::array::from_fn(|axis| {
        let mut dims = lattice.dims;
        dims[axis] = m * lattice.dims[axis];
        let mut h3 = [h; 3];
        h3[axis] = h / m as f64;
        let mut min = lattice.origin_angstrom;
        min[axis] += 0.5 * h / m as f64;
        let mut mask = vec![0u8; dims.iter().product()];
        mark_spheres_on(min, h3, dims, centres, inflated, &mut mask, 1);
        mark_spheres_on(min, h3, dims, sas, probe_radii, &mut mask, 0);
        let [nx, ny, nz] = lattice.dims;
        let [sx, sy, _] = dims;
        let mut eps = vec![p.eps_out; lattice.n_points()];
        eps.par_chunks_mut((nx * ny).max(1)).enumerate().for_each(|(k, slab)| {
            for j in 0..ny {
                for i in 0..nx {
                    let mut inside = 0usize;
                    for s in 0..m {
                        let mut q = [i, j, k];
                        q[axis] = m * q[axis] + s;
                        if q[0] < sx
                            && q[1] < sy
                            && q[2] < dims[2]
                            && mask.get(q[0] + sx * (q[1] + sy * q[2])) == Some(&1)
                        {
                            inside += 1;
                        }
                    }
                    let f = inside as f64 / m as f64;
                    if let Some(v) = slab.get_mut(i + nx * j) {
                        *v = 1.0 / (f / p.eps_in + (1.0 - f) / p.eps_out);
                    }
                }
            }
            let _ = nz;
        });
        eps
    })
}

/// The dielectric on the lattices staggered by half a spacing along x, y and z.
pub fn dielectric_maps(atoms: &PbAtoms, lattice: &PbLattice, p: &PbParams) -> [Vec<f64>; 3] {
    let n = lattice.n_points();
    let probe = p.probe_angstrom;
    let (centres, inflated): (Vec<[f64; 3]>, Vec<f64>) = atoms
        .positions_angstrom
        .iter()
        .zip(&atoms.radii_angstrom)
        .filter(|(_, r)| **r > TINY_RADIUS_ANGSTROM)
        .map(|(x, r)| (*x, r + probe))
        .unzip();
    let sas = if probe > TINY_RADIUS_ANGSTROM {
        accessible_surface_points(atoms, probe, p.ion_radius_angstrom)
    } else {
        Vec::new()
    };
    let probe_radii = vec![probe; sas.len()];
    if p.surface == PbSurface::Fraction {
        return edge_fraction_maps(lattice, p, &centres, &inflated, &sas, &probe_radii);
    }
    let raw: [Vec<f64>; 3] = std::array::from_fn(|axis| {
        let mut shift = [0.0; 3];
        shift[axis] = 0.5;
        let mut a = vec![p.eps_out; n];
        mark_spheres(lattice, shift, &centres, &inflated, &mut a, p.eps_in);
        mark_spheres(lattice, shift, &sas, &probe_radii, &mut a, p.eps_out);
        a
    });
    match p.surface {
        PbSurface::Smol => smooth(lattice, &raw, p.eps_out),
        PbSurface::Mol | PbSurface::Fraction => raw,
    }
}

/// One where ions may go, zero within radius + ion radius of an atom (at the lattice points).
pub fn ion_accessibility(atoms: &PbAtoms, lattice: &PbLattice, ion_radius: f64) -> Vec<f64> {
    let (centres, inflated): (Vec<[f64; 3]>, Vec<f64>) = atoms
        .positions_angstrom
        .iter()
        .zip(&atoms.radii_angstrom)
        .filter(|(_, r)| **r > TINY_RADIUS_ANGSTROM)
        .map(|(x, r)| (*x, r + ion_radius))
        .unzip();
    let mut a = vec![1.0; lattice.n_points()];
    mark_spheres(lattice, [0.0; 3], &centres, &inflated, &mut a, 0.0);
    a
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]
    use super::*;
    use crate::compute::pb::prep::reference_sphere;

    #[test]
    fn reference_sphere_is_on_the_unit_sphere_and_about_the_asked_size() {
        let s = reference_sphere(2000);
        assert!((s.len() as f64 - 2000.0).abs() < 100.0, "{}", s.len());
        for u in &s {
            assert!(((u[0] * u[0] + u[1] * u[1] + u[2] * u[2]).sqrt() - 1.0).abs() < 1e-12);
        }
    }

    #[test]
    fn a_lone_atom_marks_its_inflated_sphere_and_the_probe_clears_nothing_inside_it() {
        let atoms = PbAtoms {
            positions_angstrom: vec![[0.0; 3]],
            charges_e: vec![1.0],
            radii_angstrom: vec![2.0],
        };
        let lattice = PbLattice::centered([0.0; 3], 0.5, [25; 3]);
        let p = PbParams {
            surface: PbSurface::Mol,
            ..PbParams::default()
        };
        let eps = dielectric_maps(&atoms, &lattice, &p);
        let [nx, ny, _] = lattice.dims;
        for k in 0..25 {
            for j in 0..25 {
                for i in 0..25 {
                    let x = lattice.point(i, j, k);
                    let r = ((x[0] + 0.25).powi(2) + x[1] * x[1] + x[2] * x[2]).sqrt();
                    let v = eps[0][i + nx * (j + ny * k)];
                    // A lone sphere's molecular surface is its van der Waals surface (up to the
                    // reference sphere's sampling between its points).
                    if r < 2.0 {
                        assert_eq!(v, p.eps_in, "{x:?}");
                    }
                    if r > 2.3 {
                        assert_eq!(v, p.eps_out, "{x:?}");
                    }
                }
            }
        }
    }
}
