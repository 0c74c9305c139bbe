//! Solvent-accessible surface area by the Shrake-Rupley method: each atom's sphere of its van der
//! Waals radius plus the probe's (1.4 Å, water, by default) carries points spread evenly by the
//! golden-section spiral (960 of them, as MDTraj's `shrake_rupley` places them); a point is
//! accessible when it lies inside no other atom's enlarged sphere, and the atom's area is its
//! sphere's area times the accessible fraction. VMD's `measure sasa`, MDTraj's `shrake_rupley` and
//! FreeSASA's Shrake-Rupley mode compute the same quantity.
//!
//! The atoms given are the whole environment (VMD's convention: the SASA of a protein is that of
//! the protein alone, its waters and ions not blocking). Periodic images are not considered: the
//! viewer's frames have molecules made whole. Neighbours come from a cell list
//! (`analysis::cells`), so the cost grows with the atoms, not their square. Used by the viewer's
//! SASA measurement (`app::rmsd`), scripts and the Python `System.sasa`.

use crate::model::Element;

/// The probe radius of a water molecule, in Å.
pub const WATER_PROBE_ANGSTROM: f64 = 1.4;
/// Points per atom sphere (MDTraj's default; FreeSASA uses 100, VMD 500 at most).
pub const DEFAULT_SPHERE_POINTS: usize = 960;

/// The radius an atom of `element` takes in the SASA (Bondi's van der Waals radii, 1.5 Å for an
/// unknown element).
pub fn radius_angstrom(element: Element) -> f64 {
    f64::from(element.vdw_radius_angstrom())
}

/// `n` points on the unit sphere along the golden-section spiral (y from -1 to 1 in equal steps,
/// turning by the golden angle).
pub fn sphere_points(n: usize) -> Vec<[f64; 3]> {
    let inc = std::f64::consts::PI * (3.0 - 5f64.sqrt());
    let offset = 2.0 / n.max(1) as f64;
    (0..n)
        .map(|k| {
            let y = k as f64 * offset - 1.0 + offset / 2.0;
            let r = (1.0 - y * y).max(0.0).sqrt();
            let phi = k as f64 * inc;
            [phi.cos() * r, y, phi.sin() * r]
        })
        .collect()
}

/// The accessible area of each atom in Å² (0 for an atom without a finite position), the atoms
/// at `positions_angstrom` with radii `radii_angstrom`, a probe of `probe_angstrom`, `n_points`
/// points per sphere.
pub fn atom_areas(
    positions_angstrom: &[[f64; 3]],
    radii_angstrom: &[f64],
    probe_angstrom: f64,
    n_points: usize,
) -> Vec<f64> {
    let n = positions_angstrom.len().min(radii_angstrom.len());
    let sphere = sphere_points(n_points.max(1));
    let enlarged: Vec<f64> = radii_angstrom[..n]
        .iter()
        .map(|r| (r + probe_angstrom).max(0.0))
        .collect();
    let ok: Vec<bool> = (0..n)
        .map(|i| positions_angstrom[i].iter().all(|x| x.is_finite()) && enlarged[i].is_finite())
        .collect();
    // Two enlarged spheres that overlap are closer than the largest enlarged diameter.
    let reach = enlarged
        .iter()
        .zip(&ok)
        .filter(|(_, o)| **o)
        .map(|(r, _)| 2.0 * r)
        .fold(0.0, f64::max);
    let cells = super::cells::CellList::new(&positions_angstrom[..n], |i| ok[i], reach);
    let mut areas = vec![0.0; n];
    // Each neighbour as its position relative to the atom and its enlarged radius squared, nearest
    // first (the nearest cover the most points).
    let mut neighbours: Vec<(f64, [f64; 3], f64)> = Vec::new();
    for i in 0..n {
        if !ok[i] {
            continue;
        }
        let (c, ri) = (positions_angstrom[i], enlarged[i]);
        neighbours.clear();
        for j in cells.near(c) {
            if j != i {
                let p = positions_angstrom[j];
                let rel = [p[0] - c[0], p[1] - c[1], p[2] - c[2]];
                let d2 = rel[0] * rel[0] + rel[1] * rel[1] + rel[2] * rel[2];
                let reach = ri + enlarged[j];
                if d2 < reach * reach {
                    neighbours.push((d2, rel, enlarged[j] * enlarged[j]));
                }
            }
        }
        neighbours.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
        // The neighbour that covered the last point is tried first (neighbouring points are
        // usually covered by the same atom).
        let mut last = 0usize;
        let mut accessible = 0usize;
        for p in &sphere {
            let q = [ri * p[0], ri * p[1], ri * p[2]];
            let covered = |&(_, rel, r2): &(f64, [f64; 3], f64)| dist2(q, rel) < r2;
            if neighbours.get(last).is_some_and(covered) {
                continue;
            }
            match neighbours.iter().position(covered) {
                Some(k) => last = k,
                None => accessible += 1,
            }
        }
        areas[i] = 4.0 * std::f64::consts::PI * ri * ri * accessible as f64 / sphere.len() as f64;
    }
    areas
}

fn dist2(a: [f64; 3], b: [f64; 3]) -> f64 {
    (0..3).map(|k| (a[k] - b[k]).powi(2)).sum()
}

#[cfg(test)]
mod tests;
