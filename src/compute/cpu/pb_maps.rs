//! The coefficient maps of the Poisson-Boltzmann finite differences: dielectric on the three
//! staggered lattices, ion accessibility, charge density, boundary values.
//!
//! Owns [`Coefficients`] and [`coefficients`], called by the solver in [`super::pb`] only. The
//! molecular surface (APBS `srfm mol`): a point is solvent when a probe sphere that touches no atom
//! (its centre at least radius + probe from every atom centre) covers it; the probe centres tried
//! are points on every atom's sphere of radius + probe that no other such sphere buries
//! ([`SPHERE_DENSITY_PER_ANGSTROM2`] per square Angstrom, as APBS samples them). Points inside an
//! atom's radius are always solute; points farther than the probe from every atom surface are
//! always solvent. The ion accessibility is the complement of the atoms
//! inflated by the ion exclusion radius. All lengths in Angstrom.

use crate::compute::pb::{ChargeAssignment, PbAtoms, PbBoundary, PbLattice, PbParams};
use rayon::prelude::*;

/// Everything the operator and the right-hand side need.
pub struct Coefficients {
    /// Dielectric at (i + 1/2, j, k), (i, j + 1/2, k), (i, j, k + 1/2), x fastest.
    pub eps: [Vec<f64>; 3],
    /// `kbar^2` at the lattice points (1/Angstrom^2): `eps_out kappa^2` where ions may go.
    pub kbar2: Vec<f64>,
    /// `4 pi l_B rho / h^3` at the lattice points (1/Angstrom^2).
    pub source: Vec<f64>,
    /// Boundary values (kT/e) on the faces; zero inside.
    pub boundary: Vec<f64>,
}

/// The smallest signed distance from `p` to the atoms' surfaces inflated by `inflate`, over the
/// atoms near it, into `d` (one per lattice point), by splatting each atom over the points within
/// `reach` of its inflated surface.
fn min_surface_distance(atoms: &PbAtoms, lattice: &PbLattice, shift: [f64; 3], inflate: f64, reach: f64) -> Vec<f32> {
    let [nx, ny, _] = lattice.dims;
    let h = lattice.spacing_angstrom;
    let origin: [f64; 3] = std::array::from_fn(|k| lattice.origin_angstrom[k] + shift[k] * h);
    let plane = nx * ny;
    let mut d = vec![f32::INFINITY; lattice.n_points()];
    d.par_chunks_mut(plane.max(1)).enumerate().for_each(|(k, slab)| {
        let z = origin[2] + h * k as f64;
        for (a, &r) in atoms.positions_angstrom.iter().zip(&atoms.radii_angstrom) {
            let big = r + inflate + reach;
            let dz = z - a[2];
            if dz.abs() > big {
                continue;
            }
            let ry = (big * big - dz * dz).max(0.0).sqrt();
            let j0 = (((a[1] - ry - origin[1]) / h).ceil().max(0.0)) as usize;
            let j1 = (((a[1] + ry - origin[1]) / h).floor()).min(ny as f64 - 1.0);
            if j1 < 0.0 {
                continue;
            }
            for j in j0..=j1 as usize {
                let dy = origin[1] + h * j as f64 - a[1];
                let rx2 = big * big - dz * dz - dy * dy;
                if rx2 < 0.0 {
                    continue;
                }
                let rx = rx2.sqrt();
                let i0 = (((a[0] - rx - origin[0]) / h).ceil().max(0.0)) as usize;
                let i1 = ((a[0] + rx - origin[0]) / h).floor().min(nx as f64 - 1.0);
                if i1 < 0.0 {
                    continue;
                }
                for i in i0..=i1 as usize {
                    let dx = origin[0] + h * i as f64 - a[0];
                    let dist = (dx * dx + dy * dy + dz * dz).sqrt() - r - inflate;
                    if let Some(v) = slab.get_mut(i + nx * j) {
                        *v = v.min(dist as f32);
                    }
                }
            }
        }
    });
    d
}

/// Points per square Angstrom of the probe-centre spheres (APBS's `sdens` default).
pub const SPHERE_DENSITY_PER_ANGSTROM2: f64 = 10.0;

/// About `n` points evenly spread on the unit sphere (a Fibonacci lattice).
fn unit_sphere(n: usize) -> Vec<[f64; 3]> {
    let golden = std::f64::consts::PI * (3.0 - 5f64.sqrt());
    (0..n)
        .map(|i| {
            let z = 1.0 - (2.0 * i as f64 + 1.0) / n as f64;
            let r = (1.0 - z * z).max(0.0).sqrt();
            let phi = golden * i as f64;
            [r * phi.cos(), r * phi.sin(), z]
        })
        .collect()
}

/// The probe centres on the boundary of the accessible region: points of every atom's sphere of
/// radius `r + probe` that lie outside every other atom's such sphere.
fn accessible_probe_centres(atoms: &PbAtoms, probe: f64) -> Vec<[f64; 3]> {
    let rmax = atoms.radii_angstrom.iter().copied().fold(0.0, f64::max) + probe;
    let cell = (2.0 * rmax).max(1e-3);
    let key = |p: &[f64; 3]| p.map(|x| (x / cell).floor() as i64);
    let mut bins: std::collections::BTreeMap<[i64; 3], Vec<usize>> = std::collections::BTreeMap::new();
    for (i, p) in atoms.positions_angstrom.iter().enumerate() {
        bins.entry(key(p)).or_default().push(i);
    }
    atoms
        .positions_angstrom
        .par_iter()
        .zip(&atoms.radii_angstrom)
        .enumerate()
        .flat_map_iter(|(i, (a, &r))| {
            let big = r + probe;
            let n = ((4.0 * std::f64::consts::PI * big * big * SPHERE_DENSITY_PER_ANGSTROM2).ceil() as usize).max(12);
            let k = key(a);
            let mut near: Vec<usize> = Vec::new();
            for dz in -1..=1 {
                for dy in -1..=1 {
                    for dx in -1..=1 {
                        if let Some(list) = bins.get(&[k[0] + dx, k[1] + dy, k[2] + dz]) {
                            near.extend(list.iter().copied().filter(|&j| j != i));
                        }
                    }
                }
            }
            unit_sphere(n).into_iter().filter_map(move |u| {
                let c = [a[0] + big * u[0], a[1] + big * u[1], a[2] + big * u[2]];
                let buried = near.iter().any(|&j| {
                    let (Some(b), Some(&rj)) = (atoms.positions_angstrom.get(j), atoms.radii_angstrom.get(j)) else {
                        return false;
                    };
                    let d2 = (c[0] - b[0]).powi(2) + (c[1] - b[1]).powi(2) + (c[2] - b[2]).powi(2);
                    d2 < (rj + probe) * (rj + probe)
                });
                (!buried).then_some(c)
            })
        })
        .collect()
}

/// Solute (true) or solvent at every point of `lattice` shifted by `shift` spacings: the molecular
/// surface of the atoms and a probe of radius `probe`. A point within an atom's radius is solute;
/// one farther than `probe` from every atom surface is solvent; one in between is solvent when an
/// accessible probe centre ([`accessible_probe_centres`], APBS's construction) lies within `probe`.
pub fn solute_mask(atoms: &PbAtoms, lattice: &PbLattice, shift: [f64; 3], probe: f64) -> Vec<bool> {
    let [nx, ny, _] = lattice.dims;
    let h = lattice.spacing_angstrom;
    // Distance to the vdW surfaces, where below `probe`.
    let d = min_surface_distance(atoms, lattice, shift, 0.0, probe);
    let mut mask: Vec<bool> = d.iter().map(|&v| v < 0.0 || f64::from(v) < probe).collect();
    if probe <= 0.0 {
        return mask;
    }
    let origin: [f64; 3] = std::array::from_fn(|k| lattice.origin_angstrom[k] + shift[k] * h);
    let centres = accessible_probe_centres(atoms, probe);
    // Each centre clears the in-between points within `probe` of it (planes in parallel).
    let plane = nx * ny;
    mask.par_chunks_mut(plane.max(1)).enumerate().for_each(|(k, slab)| {
        let z = origin[2] + h * k as f64;
        for c in &centres {
            let dz = z - c[2];
            let rr = probe * probe - dz * dz;
            if rr < 0.0 {
                continue;
            }
            let ry = rr.sqrt();
            let j0 = ((c[1] - ry - origin[1]) / h).ceil().max(0.0) as usize;
            let j1 = ((c[1] + ry - origin[1]) / h).floor().min(ny as f64 - 1.0);
            if j1 < 0.0 {
                continue;
            }
            for j in j0..=j1 as usize {
                let dy = origin[1] + h * j as f64 - c[1];
                let rx2 = rr - dy * dy;
                if rx2 < 0.0 {
                    continue;
                }
                let rx = rx2.sqrt();
                let i0 = ((c[0] - rx - origin[0]) / h).ceil().max(0.0) as usize;
                let i1 = ((c[0] + rx - origin[0]) / h).floor().min(nx as f64 - 1.0);
                if i1 < 0.0 {
                    continue;
                }
                for i in i0..=i1 as usize {
                    let idx = i + nx * j;
                    let inside_atom = d.get(idx + plane * k).is_none_or(|&v| v < 0.0);
                    if !inside_atom && let Some(m) = slab.get_mut(idx) {
                        *m = false;
                    }
                }
            }
        }
    });
    mask
}

/// 1-D weights of a point charge at lattice coordinate `t`: first index and weights.
fn weights_1d(t: f64, scheme: ChargeAssignment) -> (i64, [f64; 4], usize) {
    let f = t.floor();
    let u = t - f;
    match scheme {
        ChargeAssignment::Linear => (f as i64, [1.0 - u, u, 0.0, 0.0], 2),
        ChargeAssignment::Spline => {
            let v = 1.0 - u;
            (
                f as i64 - 1,
                [
                    v * v * v / 6.0,
                    (3.0 * u * u * u - 6.0 * u * u + 4.0) / 6.0,
                    (-3.0 * u * u * u + 3.0 * u * u + 3.0 * u + 1.0) / 6.0,
                    u * u * u / 6.0,
                ],
                4,
            )
        }
    }
}

/// The Debye-Hueckel potential (kT/e) at distance `r` of a sphere of radius `a` holding `q`.
fn debye_sphere(q: f64, r: f64, a: f64, kappa: f64, eps_out: f64, lb: f64) -> f64 {
    let r = r.max(1e-6);
    lb * q * (-kappa * (r - a)).exp() / (eps_out * (1.0 + kappa * a) * r)
}

/// Builds every map; refuses a charge whose spread leaves the interior of the lattice.
pub fn coefficients(atoms: &PbAtoms, lattice: &PbLattice, p: &PbParams) -> Result<Coefficients, String> {
    let [nx, ny, nz] = lattice.dims;
    let n = lattice.n_points();
    let h = lattice.spacing_angstrom;
    let lb = p.bjerrum_angstrom();
    let kappa2 = p.kappa2_per_angstrom2();
    let kappa = kappa2.sqrt();
    // Dielectric on the staggered lattices.
    let eps: [Vec<f64>; 3] = std::array::from_fn(|axis| {
        let mut shift = [0.0; 3];
        shift[axis] = 0.5;
        solute_mask(atoms, lattice, shift, p.probe_angstrom)
            .into_iter()
            .map(|s| if s { p.eps_in } else { p.eps_out })
            .collect()
    });
    // Ion accessibility.
    let kbar2 = if kappa2 > 0.0 {
        min_surface_distance(atoms, lattice, [0.0; 3], p.ion_radius_angstrom, 0.0)
            .into_iter()
            .map(|d| if d < 0.0 { 0.0 } else { p.eps_out * kappa2 })
            .collect()
    } else {
        vec![0.0; n]
    };
    // Charges.
    let mut source = vec![0.0; n];
    let scale = 4.0 * std::f64::consts::PI * lb / (h * h * h);
    for (idx, (x, &q)) in atoms.positions_angstrom.iter().zip(&atoms.charges_e).enumerate() {
        if q == 0.0 {
            continue;
        }
        let w: [(i64, [f64; 4], usize); 3] =
            std::array::from_fn(|k| weights_1d((x[k] - lattice.origin_angstrom[k]) / h, p.charge_assignment));
        for (k, &(first, _, len)) in w.iter().enumerate() {
            if first < 1 || first + len as i64 > lattice.dims[k] as i64 - 1 {
                return Err(format!(
                    "atom {idx} at {x:?} A spreads its charge beyond the lattice interior: enlarge the lattice"
                ));
            }
        }
        for c in 0..w[2].2 {
            for b in 0..w[1].2 {
                for a in 0..w[0].2 {
                    let (i, j, k) = (w[0].0 + a as i64, w[1].0 + b as i64, w[2].0 + c as i64);
                    let id = i as usize + nx * (j as usize + ny * k as usize);
                    if let Some(s) = source.get_mut(id) {
                        *s += scale * q * w[0].1[a] * w[1].1[b] * w[2].1[c];
                    }
                }
            }
        }
    }
    // Boundary values.
    let (lo, hi) = atoms
        .positions_angstrom
        .iter()
        .fold(([f64::INFINITY; 3], [f64::NEG_INFINITY; 3]), |(lo, hi), x| {
            (
                std::array::from_fn(|k| lo[k].min(x[k])),
                std::array::from_fn(|k| hi[k].max(x[k])),
            )
        });
    let centre: [f64; 3] = std::array::from_fn(|k| 0.5 * (lo[k] + hi[k]));
    let dist =
        |a: [f64; 3], b: [f64; 3]| ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt();
    let solute_radius = atoms
        .positions_angstrom
        .iter()
        .zip(&atoms.radii_angstrom)
        .map(|(x, r)| dist(*x, centre) + r)
        .fold(0.0, f64::max);
    let total: f64 = atoms.charges_e.iter().sum();
    let value_at = |x: [f64; 3]| match p.boundary {
        PbBoundary::Sdh => debye_sphere(
            total,
            dist(x, centre),
            solute_radius + p.ion_radius_angstrom,
            kappa,
            p.eps_out,
            lb,
        ),
        PbBoundary::Mdh => atoms
            .positions_angstrom
            .iter()
            .zip(&atoms.charges_e)
            .zip(&atoms.radii_angstrom)
            .map(|((a, &q), &r)| debye_sphere(q, dist(x, *a), r + p.ion_radius_angstrom, kappa, p.eps_out, lb))
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
