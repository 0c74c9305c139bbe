//! Host-side preparation every engine's Poisson-Boltzmann maps share, so the CPU and the device
//! build the same maps from the same numbers: the solvent-accessible surface's reference sphere and
//! neighbour cells (APBS `VaccSurf_refSphere`, `Vacc_atomSASPoints`), the spread of each charge onto
//! the lattice (APBS `spl0` trilinear or `spl2` B-spline weights, `fillcoCharge`), and the multipoles
//! of the `sdh` boundary. Called by the CPU engine's maps (`compute::cpu::pb_maps`,
//! `compute::cpu::pb_surface`) and the CUDA engine's (`compute::cuda::pb`). Lengths in Angstrom.

use super::{ChargeAssignment, PbAtoms, PbLattice, PbParams};

/// Radii at or below this count as zero (the atom marks nothing).
pub const TINY_RADIUS_ANGSTROM: f64 = 1e-9;

/// Points per square Angstrom of APBS's reference sphere (`sdens`).
pub const SPHERE_DENSITY_PER_ANGSTROM2: f64 = 10.0;

/// APBS's extra cell-list radius for spline windows (`MAX_SPLINE_WINDOW`).
pub const CELL_LIST_EXTRA_ANGSTROM: f64 = 0.5;

/// APBS's reference sphere of about `npts` unit vectors (`VaccSurf_refSphere`).
pub fn reference_sphere(npts: usize) -> Vec<[f64; 3]> {
    let round = |x: f64| (x + 0.5).floor();
    let frac = npts as f64 / 4.0;
    let ntheta = round((std::f64::consts::PI * frac).sqrt()).max(1.0) as usize;
    let dtheta = std::f64::consts::PI / ntheta as f64;
    let nphimax = 2.0 * ntheta as f64;
    let mut out = Vec::new();
    for itheta in 0..ntheta {
        let theta = dtheta * itheta as f64;
        let (st, ct) = theta.sin_cos();
        let nphi = round(st * nphimax).max(0.0) as usize;
        if nphi == 0 {
            continue;
        }
        let dphi = 2.0 * std::f64::consts::PI / nphi as f64;
        for iphi in 0..nphi {
            let (sp, cp) = (dphi * iphi as f64).sin_cos();
            out.push([cp * st, sp * st, ct]);
        }
    }
    out
}

/// The points `centre + radius * u` of the unit vectors `reference` that no sphere of `near`
/// (centre, squared radius) holds strictly: a sphere's exposed part, as APBS keeps its accessible
/// surface points (`Vacc_atomSASPoints`). Shared by the Poisson-Boltzmann maps and the
/// solvent-excluded surface (`compute::ses`).
pub fn exposed_on_sphere(
    centre: [f64; 3],
    radius: f64,
    reference: &[[f64; 3]],
    near: &[([f64; 3], f64)],
) -> Vec<[f64; 3]> {
    let mut kept = Vec::new();
    // Neighbouring reference points are mostly buried by the same sphere: try it first.
    let mut last = 0usize;
    for u in reference {
        let c = [
            radius * u[0] + centre[0],
            radius * u[1] + centre[1],
            radius * u[2] + centre[2],
        ];
        let buries = |(b, l2): &([f64; 3], f64)| {
            let d = [c[0] - b[0], c[1] - b[1], c[2] - b[2]];
            d[0] * d[0] + d[1] * d[1] + d[2] * d[2] < *l2
        };
        if near.get(last).is_some_and(buries) {
            continue;
        }
        match near.iter().position(buries) {
            Some(j) => last = j,
            None => kept.push(c),
        }
    }
    kept
}

/// What every engine's solvent-accessible surface points share: APBS's reference sphere (unit
/// vectors), the largest atomic radius and the side of the neighbour cells (`floor(x / cell)`).
pub struct SasLayout {
    pub reference: Vec<[f64; 3]>,
    pub rmax_atom: f64,
    pub cell: f64,
}

/// The [`SasLayout`] of `atoms` with this probe and ion radius.
pub fn sas_layout(atoms: &PbAtoms, probe: f64, ion_radius: f64) -> SasLayout {
    let (points, rmax_atom) = sas_sphere_points(atoms, probe, ion_radius);
    SasLayout {
        reference: reference_sphere(points),
        rmax_atom,
        cell: (rmax_atom + probe).max(1e-3),
    }
}

/// The points asked of [`sas_layout`]'s reference sphere (`reference_sphere`'s argument) and the
/// largest atomic radius: the sphere depends on these alone, so a trajectory's frames can share it.
pub fn sas_sphere_points(atoms: &PbAtoms, probe: f64, ion_radius: f64) -> (usize, f64) {
    let rmax_atom = atoms.radii_angstrom.iter().copied().fold(0.0, f64::max);
    let list_radius = probe.max(ion_radius) + CELL_LIST_EXTRA_ANGSTROM;
    let big = rmax_atom + list_radius;
    let points = (4.0 * std::f64::consts::PI * big * big * SPHERE_DENSITY_PER_ANGSTROM2).ceil() as usize;
    (points, rmax_atom)
}

/// APBS's `bspline2`: the quadratic B-spline M3 on [0, 3].
fn bspline2(x: f64) -> f64 {
    let m2m = if (0.0..=2.0).contains(&x) {
        1.0 - (x - 1.0).abs()
    } else {
        0.0
    };
    let m2 = if (1.0..=3.0).contains(&x) {
        1.0 - (x - 2.0).abs()
    } else {
        0.0
    };
    if (0.0..=3.0).contains(&x) {
        0.5 * x * m2m + 0.5 * (3.0 - x) * m2
    } else {
        0.0
    }
}

/// 1-D weights of a point charge at lattice coordinate `t`: first index and weights.
pub fn weights_1d(t: f64, scheme: ChargeAssignment) -> (i64, [f64; 4], usize) {
    let f = t.floor();
    match scheme {
        ChargeAssignment::Linear => {
            let u = t - f;
            (f as i64, [1.0 - u, u, 0.0, 0.0], 2)
        }
        ChargeAssignment::Spline => {
            // APBS: indices floor(t) - 1 ..= ceil(t) + 1, weight M3(1.5 + i - t); keep the
            // points of nonzero weight (3, or 4 when t is not an integer but one end is 0).
            let first = f as i64 - 1;
            let w: [f64; 4] = std::array::from_fn(|a| bspline2(1.5 + (first + a as i64) as f64 - t));
            if w[3] == 0.0 { (first, w, 3) } else { (first, w, 4) }
        }
    }
}

/// One charge spread onto the lattice: the first lattice index and the weights along each axis
/// (`len[k]` of them used), and `4 pi l_B q / h^3`.
#[derive(Clone, Copy, Debug)]
pub struct ChargeSpread {
    pub first: [i64; 3],
    pub len: [usize; 3],
    pub weights: [[f64; 4]; 3],
    pub scaled_charge: f64,
}

/// The spread of every nonzero charge (APBS `fillcoCharge`), shared by every engine's maps; refuses a
/// charge whose spread leaves the interior of the lattice, unless `partial` (a focused lattice: the
/// caller keeps the weights on interior points only).
pub fn charge_spread(
    atoms: &PbAtoms,
    lattice: &PbLattice,
    p: &PbParams,
    partial: bool,
) -> Result<Vec<ChargeSpread>, String> {
    use rayon::prelude::*;
    let h = lattice.spacing_angstrom;
    let scale = 4.0 * std::f64::consts::PI * p.bjerrum_angstrom() / (h * h * h);
    let one = |idx: usize, x: &[f64; 3], q: f64| -> Result<ChargeSpread, String> {
        // A lattice coordinate past any lattice (an absurd spacing or origin) is outside it, not an
        // index to overflow.
        let inside_any = (0..3).all(|k| ((x[k] - lattice.origin_angstrom[k]) / h).abs() < 1e12);
        if !inside_any {
            return Err(format!(
                "the charge of solute atom {} at ({:.3}, {:.3}, {:.3}) A lies outside the lattice",
                idx + 1,
                x[0],
                x[1],
                x[2]
            ));
        }
        let w: [(i64, [f64; 4], usize); 3] =
            std::array::from_fn(|k| weights_1d((x[k] - lattice.origin_angstrom[k]) / h, p.charge_assignment));
        for (k, &(first, _, len)) in w.iter().enumerate() {
            if !partial && (first < 1 || first + len as i64 > lattice.dims[k] as i64 - 1) {
                return Err(format!(
                    "the charge of solute atom {} at ({:.3}, {:.3}, {:.3}) A spreads beyond the lattice interior: \
                     enlarge the lattice or move it over the atoms",
                    idx + 1,
                    x[0],
                    x[1],
                    x[2]
                ));
            }
        }
        Ok(ChargeSpread {
            first: w.map(|(f, _, _)| f),
            len: w.map(|(_, _, l)| l),
            weights: w.map(|(_, v, _)| v),
            scaled_charge: scale * q,
        })
    };
    // In parallel pieces, kept in the atoms' order; on an error, the first atom at fault is named.
    let pieces: Result<Vec<Vec<ChargeSpread>>, String> = atoms
        .positions_angstrom
        .par_chunks(4096)
        .zip(atoms.charges_e.par_chunks(4096))
        .enumerate()
        .map(|(c, (xs, qs))| {
            let mut out = Vec::with_capacity(xs.len());
            for (i, (x, &q)) in xs.iter().zip(qs).enumerate() {
                if q != 0.0 {
                    out.push(one(c * 4096 + i, x, q)?);
                }
            }
            Ok(out)
        })
        .collect::<Vec<_>>()
        .into_iter()
        .collect();
    Ok(pieces?.concat())
}

/// The atoms' multipoles for the `sdh` boundary: about the centre of their bounding box, in a sphere
/// of the solute radius (the farthest atom surface from that centre); APBS's traceless quadrupole.
#[derive(Clone, Copy, Debug)]
pub struct Multipoles {
    pub centre: [f64; 3],
    pub solute_radius: f64,
    pub charge: f64,
    pub dipole: [f64; 3],
    pub quad: [[f64; 3]; 3],
}

/// [`Multipoles`] of `atoms`.
pub fn multipoles(atoms: &PbAtoms) -> Multipoles {
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
    let mut charge = 0.0;
    let mut dipole = [0.0; 3];
    let mut quad = [[0.0; 3]; 3];
    for (x, &q) in atoms.positions_angstrom.iter().zip(&atoms.charges_e) {
        let d: [f64; 3] = std::array::from_fn(|k| x[k] - centre[k]);
        charge += q;
        for a in 0..3 {
            dipole[a] += d[a] * q;
        }
        let trace = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]) * q / 3.0;
        for a in 0..3 {
            for b in 0..3 {
                let t = d[a] * d[b] * q - if a == b { trace } else { 0.0 };
                quad[a][b] += 1.5 * t / 3.0;
            }
        }
    }
    Multipoles {
        centre,
        solute_radius,
        charge,
        dipole,
        quad,
    }
}

/// `spread` with each charge's weights limited to the interior points of a lattice of `dims` (a
/// focused lattice, APBS `bcfl focus`): weights on the faces or beyond are dropped, and a charge with
/// none left on some axis is dropped.
pub fn interior_only(spread: Vec<ChargeSpread>, dims: [usize; 3]) -> Vec<ChargeSpread> {
    spread
        .into_iter()
        .filter_map(|mut c| {
            for (k, &dim) in dims.iter().enumerate() {
                let last = dim as i64 - 2;
                let mut kept = [0.0; 4];
                let mut n = 0usize;
                let mut first = None;
                for (a, &w) in c.weights[k].iter().enumerate().take(c.len[k]) {
                    let i = c.first[k] + a as i64;
                    if (1..=last).contains(&i)
                        && let Some(slot) = kept.get_mut(n)
                    {
                        first.get_or_insert(i);
                        *slot = w;
                        n += 1;
                    }
                }
                c.first[k] = first?;
                c.weights[k] = kept;
                c.len[k] = n;
            }
            Some(c)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]
    use super::*;

    #[test]
    fn interior_only_keeps_the_weights_on_interior_points() {
        let lattice = PbLattice {
            origin_angstrom: [0.0; 3],
            spacing_angstrom: 1.0,
            dims: [9; 3],
        };
        let p = PbParams::default();
        // On the last interior plane along x (M3 weights 1/8, 3/4, 1/8 there): the face's 1/8 goes;
        // a spacing and a half past the high x face: nothing is left, the charge goes.
        let atoms = PbAtoms {
            positions_angstrom: vec![[7.0, 4.0, 4.0], [9.5, 4.0, 4.0], [4.2, 3.7, 4.4]],
            charges_e: vec![1.0, 1.0, -1.0],
            radii_angstrom: vec![1.5; 3],
        };
        let all = charge_spread(&atoms, &lattice, &p, true).unwrap();
        assert_eq!(all.len(), 3);
        let kept = interior_only(all.clone(), lattice.dims);
        assert_eq!(kept.len(), 2);
        let edge = &kept[0];
        assert_eq!((edge.first[0], edge.len[0]), (6, 2));
        assert!((edge.weights[0][..2].iter().sum::<f64>() - 0.875).abs() < 1e-12);
        // A charge well inside is unchanged.
        assert_eq!(kept[1].first, all[2].first);
        assert_eq!(kept[1].weights, all[2].weights);
    }
}
