//! Bond guessing from covalent radii, in linear time with a cell list.
//!
//! `io::load` calls [`guess_bonds_in_place`] on the first frame when the files gave no bonds
//! (GRO, XYZ, PQR, mmCIF, PDB without CONECT, wavefunctions); the viewer draws the result. Two
//! atoms are bonded when their distance is below `r_i + r_j + 0.4 A` (Cordero covalent radii)
//! and above 0.1 A (coincident atoms are not bonded). Rules that keep the picture chemical:
//! - alkali and alkaline-earth metals (Na+, K+, Mg2+, Ca2+, ...) are ions in these systems and
//!   get no bonds, while transition metals bond to their ligands (Zn-S, Fe-N);
//! - the two hydrogens of one water molecule are never bonded to each other;
//! - atoms of unknown element and atoms with non-finite coordinates get no bonds.
//!
//! No periodic images: bonds across the box edge of a wrapped trajectory are not made.

use super::element::{Element, is_water_resname};
use super::structure::{BondSource, Structure};

/// Added to the sum of covalent radii to form the bonding cut-off.
pub const TOLERANCE_ANGSTROM: f32 = 0.4;
/// Pairs closer than this are overlapping atoms (duplicates, alternate locations), not bonds.
pub const MIN_DISTANCE_ANGSTROM: f32 = 0.1;

/// Whether an element takes part in guessed bonds.
fn bonds_allowed(e: Element) -> bool {
    e != Element::UNKNOWN && !e.is_alkali_or_alkaline_earth()
}

/// Guesses bonds for `structure` from `positions_angstrom` (one entry per atom; extra entries are
/// ignored, missing ones mean no bonds for those atoms). Returns pairs with the smaller index
/// first, sorted.
pub fn guess_bonds(structure: &Structure, positions_angstrom: &[[f32; 3]]) -> Vec<[u32; 2]> {
    let n = structure.len().min(positions_angstrom.len()).min(u32::MAX as usize);
    // Eligible atoms with their radii.
    let mut atoms: Vec<u32> = Vec::with_capacity(n);
    let mut max_r = 0f32;
    let mut lo = [f32::INFINITY; 3];
    let mut hi = [f32::NEG_INFINITY; 3];
    for (i, (e, p)) in structure.elements.iter().zip(positions_angstrom).enumerate().take(n) {
        if !bonds_allowed(*e) || !p.iter().all(|x| x.is_finite()) {
            continue;
        }
        atoms.push(i as u32);
        max_r = max_r.max(e.covalent_radius_angstrom());
        for k in 0..3 {
            lo[k] = lo[k].min(p[k]);
            hi[k] = hi[k].max(p[k]);
        }
    }
    if atoms.len() < 2 {
        return Vec::new();
    }
    let cutoff = 2.0 * max_r + TOLERANCE_ANGSTROM;
    // Cell edge at least the largest cut-off; grown when the box is sparse so that the number of
    // cells stays proportional to the number of atoms.
    let extent: [f64; 3] = std::array::from_fn(|k| (f64::from(hi[k]) - f64::from(lo[k])).max(0.0));
    let max_cells = (2 * atoms.len() + 64) as f64;
    let mut edge = f64::from(cutoff);
    let cells_for = |edge: f64| -> [f64; 3] { extent.map(|x| ((x / edge).floor() + 1.0).clamp(1.0, 1e12)) };
    let mut dims_f = cells_for(edge);
    for _ in 0..200 {
        if dims_f.iter().product::<f64>() <= max_cells {
            break;
        }
        edge *= (dims_f.iter().product::<f64>() / max_cells).cbrt().max(1.01);
        dims_f = cells_for(edge);
    }
    if dims_f.iter().product::<f64>() > max_cells {
        // Not reachable for finite input; one cell keeps it correct if it ever is.
        dims_f = [1.0; 3];
        edge = f64::MAX;
    }
    let dims = dims_f.map(|d| d as usize);
    let n_cells = dims[0] * dims[1] * dims[2];
    let inv_edge = 1.0 / edge;
    let cell_coord = |p: &[f32; 3], k: usize| -> usize {
        let c = (f64::from(p[k] - lo[k]) * inv_edge) as usize;
        c.min(dims[k] - 1)
    };
    let cell_of = |p: &[f32; 3]| (cell_coord(p, 2) * dims[1] + cell_coord(p, 1)) * dims[0] + cell_coord(p, 0);

    // Counting sort of the eligible atoms by cell (CSR layout).
    let mut start = vec![0u32; n_cells + 1];
    let mut cell_ids = Vec::with_capacity(atoms.len());
    for &i in &atoms {
        let c = cell_of(&positions_angstrom[i as usize]);
        cell_ids.push(c);
        start[c + 1] += 1;
    }
    for c in 0..n_cells {
        start[c + 1] += start[c];
    }
    let mut fill = start.clone();
    let mut sorted_pos = vec![[0f32; 3]; atoms.len()];
    let mut sorted_r = vec![0f32; atoms.len()];
    let mut sorted_idx = vec![0u32; atoms.len()];
    for (&i, &c) in atoms.iter().zip(&cell_ids) {
        let slot = fill[c] as usize;
        fill[c] += 1;
        sorted_pos[slot] = positions_angstrom[i as usize];
        sorted_r[slot] = structure.elements[i as usize].covalent_radius_angstrom();
        sorted_idx[slot] = i;
    }
    drop(fill);
    drop(cell_ids);

    let water_h = |i: u32, j: u32| -> bool {
        let (i, j) = (i as usize, j as usize);
        structure.elements[i] == Element::H
            && structure.elements[j] == Element::H
            && structure.resids[i] == structure.resids[j]
            && structure.resnames[i] == structure.resnames[j]
            && structure.segids[i] == structure.segids[j]
            && structure.chains[i] == structure.chains[j]
            && is_water_resname(structure.resnames[i].as_str().as_bytes())
    };
    let min2 = MIN_DISTANCE_ANGSTROM * MIN_DISTANCE_ANGSTROM;
    let mut bonds: Vec<[u32; 2]> = Vec::with_capacity(atoms.len() + atoms.len() / 4);
    let test_pair = |a: usize, b: usize, bonds: &mut Vec<[u32; 2]>| {
        let (p, q) = (sorted_pos[a], sorted_pos[b]);
        let d = [p[0] - q[0], p[1] - q[1], p[2] - q[2]];
        let d2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
        let cut = sorted_r[a] + sorted_r[b] + TOLERANCE_ANGSTROM;
        if d2 < cut * cut && d2 > min2 {
            let (i, j) = (sorted_idx[a], sorted_idx[b]);
            if !water_h(i, j) {
                bonds.push([i.min(j), i.max(j)]);
            }
        }
    };
    // Half of the 26 neighbours (the other half is visited from the neighbour's side).
    const HALF: [[isize; 3]; 13] = [
        [1, 0, 0],
        [-1, 1, 0],
        [0, 1, 0],
        [1, 1, 0],
        [-1, -1, 1],
        [0, -1, 1],
        [1, -1, 1],
        [-1, 0, 1],
        [0, 0, 1],
        [1, 0, 1],
        [-1, 1, 1],
        [0, 1, 1],
        [1, 1, 1],
    ];
    for cz in 0..dims[2] {
        for cy in 0..dims[1] {
            for cx in 0..dims[0] {
                let c = (cz * dims[1] + cy) * dims[0] + cx;
                let (a0, a1) = (start[c] as usize, start[c + 1] as usize);
                if a0 == a1 {
                    continue;
                }
                for a in a0..a1 {
                    for b in a + 1..a1 {
                        test_pair(a, b, &mut bonds);
                    }
                }
                for off in HALF {
                    let nx = cx as isize + off[0];
                    let ny = cy as isize + off[1];
                    let nz = cz as isize + off[2];
                    if nx < 0
                        || ny < 0
                        || nz < 0
                        || nx >= dims[0] as isize
                        || ny >= dims[1] as isize
                        || nz >= dims[2] as isize
                    {
                        continue;
                    }
                    let d = (nz as usize * dims[1] + ny as usize) * dims[0] + nx as usize;
                    let (b0, b1) = (start[d] as usize, start[d + 1] as usize);
                    for a in a0..a1 {
                        for b in b0..b1 {
                            test_pair(a, b, &mut bonds);
                        }
                    }
                }
            }
        }
    }
    bonds.sort_unstable();
    bonds.dedup();
    bonds
}

/// Replaces the structure's bonds with guessed ones and marks them [`BondSource::Guessed`].
pub fn guess_bonds_in_place(structure: &mut Structure, positions_angstrom: &[[f32; 3]]) {
    structure.bonds = guess_bonds(structure, positions_angstrom);
    structure.bond_source = BondSource::Guessed;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Name8;

    fn structure(atoms: &[(u8, &str, i32)]) -> Structure {
        let mut s = Structure::default();
        for &(z, res, id) in atoms {
            s.push_atom(
                Element(z),
                Name8::EMPTY,
                Name8::from(res),
                id,
                Name8::EMPTY,
                Name8::EMPTY,
            );
        }
        s
    }

    /// Every pair, the slow way, for comparison.
    fn brute_force(s: &Structure, p: &[[f32; 3]]) -> Vec<[u32; 2]> {
        let mut out = Vec::new();
        for i in 0..s.len() {
            for j in i + 1..s.len() {
                let (ei, ej) = (s.elements[i], s.elements[j]);
                if !bonds_allowed(ei) || !bonds_allowed(ej) {
                    continue;
                }
                let d = ((0..3).map(|k| (p[i][k] - p[j][k]).powi(2)).sum::<f32>()).sqrt();
                let cut = ei.covalent_radius_angstrom() + ej.covalent_radius_angstrom() + TOLERANCE_ANGSTROM;
                if d < cut && d > MIN_DISTANCE_ANGSTROM {
                    out.push([i as u32, j as u32]);
                }
            }
        }
        out
    }

    #[test]
    fn water_and_ion() {
        // One water (O-H 0.96 A, H-H 1.51 A) squeezed so H-H is under the H-H cut-off, and a Na+
        // 2.4 A from the oxygen.
        let s = structure(&[(8, "HOH", 1), (1, "HOH", 1), (1, "HOH", 1), (11, "NA", 2)]);
        let p = [[0.0, 0.0, 0.0], [0.96, 0.0, 0.0], [0.0, 0.9, 0.0], [-2.4, 0.0, 0.0]];
        assert_eq!(guess_bonds(&s, &p), vec![[0, 1], [0, 2]]);
    }

    #[test]
    fn zinc_binds_sulfur() {
        let s = structure(&[(30, "ZN", 1), (16, "CYS", 2), (6, "CYS", 2)]);
        let p = [[0.0, 0.0, 0.0], [2.3, 0.0, 0.0], [4.1, 0.0, 0.0]];
        assert_eq!(guess_bonds(&s, &p), vec![[0, 1], [1, 2]]);
    }

    #[test]
    fn matches_brute_force_on_a_random_cloud() {
        // A deterministic pseudo-random cloud of C, N, O, H, S at liquid density.
        let mut state = 12345u64;
        let mut rnd = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 33) as f32) / (1u64 << 31) as f32
        };
        let zs = [1u8, 6, 7, 8, 16, 1, 1, 6];
        let n = 1500;
        let mut atoms = Vec::new();
        let mut p = Vec::new();
        for i in 0..n {
            atoms.push((zs[i % zs.len()], "LIG", i as i32));
            p.push([rnd() * 25.0, rnd() * 25.0, rnd() * 12.0]);
        }
        p.push([f32::NAN, 0.0, 0.0]);
        atoms.push((6, "LIG", -1));
        let s = structure(&atoms);
        let fast = guess_bonds(&s, &p);
        let mut slow = brute_force(&s, &p);
        slow.retain(|b| b.iter().all(|&i| p[i as usize][0].is_finite()));
        assert!(!fast.is_empty());
        assert_eq!(fast, slow);
    }

    #[test]
    fn sparse_outlier_does_not_blow_up_the_grid() {
        let s = structure(&[(6, "X", 1), (6, "X", 1), (6, "X", 2)]);
        let p = [[0.0, 0.0, 0.0], [1.5, 0.0, 0.0], [1.0e30, 1.0e30, 1.0e30]];
        assert_eq!(guess_bonds(&s, &p), vec![[0, 1]]);
        assert!(guess_bonds(&s, &p[..1]).is_empty());
    }
}
