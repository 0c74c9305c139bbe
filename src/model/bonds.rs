//! Bond guessing from covalent radii with a cell list (sorted cell keys: time n log n for the
//! sort, linear for the search; memory linear in the atoms, whatever the box).
//!
//! `io::load` calls [`guess_bonds_in_place`] on the first frame when the files gave no bonds
//! (GRO, XYZ, PQR, mmCIF, PDB without CONECT, wavefunctions); the viewer draws the result. Two
//! atoms are bonded when their distance is below `r_i + r_j + 0.4 A` (Cordero covalent radii)
//! and above 0.1 A (coincident atoms are not bonded). Rules that keep the picture chemical:
//! - alkali and alkaline-earth metals (Na+, K+, Mg2+, Ca2+, ...) are ions in these systems and
//!   get no bonds, while transition metals bond to their ligands (Zn-S, Fe-N);
//! - the two hydrogens of one water molecule are never bonded to each other;
//! - different alternate locations of one site (altloc A and B) are never bonded to each other,
//!   as in VMD; each is bonded to the atoms without an alternate location;
//! - atoms of unknown element and atoms with non-finite coordinates get no bonds;
//! - more than [`MAX_ATOMS_PER_CELL`] atoms within one cut-off cell (placeholder coordinates all
//!   at one point) get no bonds.
//!
//! A PDB file's CONECT records cover hetero groups and disulfides only: `io::load` completes them
//! with [`complete_conect_bonds`] (guessed bonds for the atoms no record names).
//!
//! With a periodic box ([`guess_bonds_periodic`], what `io::load` calls when the first frame has
//! one), bonds across its faces are found by minimum-image distances, so a molecule written in
//! pieces on opposite sides keeps its bonds (`super::whole` then joins the pieces).

use super::cell::UnitCell;
use super::element::{Element, is_water_resname};
use super::structure::{BondSource, Structure};

/// Added to the sum of covalent radii to form the bonding cut-off.
pub const TOLERANCE_ANGSTROM: f32 = 0.4;
/// Pairs closer than this are overlapping atoms (duplicates, alternate locations), not bonds.
pub const MIN_DISTANCE_ANGSTROM: f32 = 0.1;
/// A cell one cut-off wide holds a few tens of atoms in any real structure (about 15 in water);
/// more means placeholder coordinates piled on one point, which get no bonds rather than a
/// quadratic pair search.
pub const MAX_ATOMS_PER_CELL: u32 = 256;

/// Whether an element takes part in guessed bonds.
fn bonds_allowed(e: Element) -> bool {
    e != Element::UNKNOWN && !e.is_alkali_or_alkaline_earth()
}

/// Guesses bonds for `structure` from `positions_angstrom` (one entry per atom; extra entries are
/// ignored, missing ones mean no bonds for those atoms). Returns pairs with the smaller index
/// first, sorted.
pub fn guess_bonds(structure: &Structure, positions_angstrom: &[[f32; 3]]) -> Vec<[u32; 2]> {
    search(structure, eligible(structure, positions_angstrom))
}

/// As [`guess_bonds`], with bonds across the faces of `cell` too (minimum-image distances), so a
/// molecule an MD engine wrote in pieces on opposite sides of its box keeps all its bonds. Without
/// a cell, or in a box narrower than twice the longest bonding cut-off (a crystal's cell, where
/// images are ambiguous), the same as [`guess_bonds`].
pub fn guess_bonds_periodic(
    structure: &Structure,
    positions_angstrom: &[[f32; 3]],
    cell: Option<&UnitCell>,
) -> Vec<[u32; 2]> {
    let atoms = eligible(structure, positions_angstrom);
    let Some(cell) = cell.filter(|c| c.is_valid()) else {
        return search(structure, atoms);
    };
    let max_r = atoms
        .iter()
        .map(|&(i, _)| structure.elements[i as usize].covalent_radius_angstrom())
        .fold(0f32, f32::max);
    let cut = f64::from(2.0 * max_r + TOLERANCE_ANGSTROM);
    let m = cell.matrix_angstrom();
    // Fractional coordinates of the lower-triangular rows a, b, c.
    let frac = |p: [f64; 3]| -> [f64; 3] {
        let sc = p[2] / m[2][2];
        let sb = (p[1] - sc * m[2][1]) / m[1][1];
        let sa = (p[0] - sc * m[2][0] - sb * m[1][0]) / m[0][0];
        [sa, sb, sc]
    };
    let cart = |s: [f64; 3]| -> [f64; 3] { [0, 1, 2].map(|k| s[0] * m[0][k] + s[1] * m[1][k] + s[2] * m[2][k]) };
    // The box's width across each pair of faces, as a fraction: the cut-off in cell units.
    let volume = cell.volume_angstrom3();
    let cross = |u: [f64; 3], w: [f64; 3]| {
        let c = [
            u[1] * w[2] - u[2] * w[1],
            u[2] * w[0] - u[0] * w[2],
            u[0] * w[1] - u[1] * w[0],
        ];
        (c[0] * c[0] + c[1] * c[1] + c[2] * c[2]).sqrt()
    };
    let widths = [cross(m[1], m[2]), cross(m[0], m[2]), cross(m[0], m[1])].map(|a| volume / a.max(1e-300));
    if widths.iter().any(|&w| w.is_nan() || w <= 2.0 * cut) {
        return search(structure, atoms);
    }
    let reach = widths.map(|w| cut / w);
    // Every atom wrapped into the cell, and a ghost beyond each face it is within a cut-off of.
    let mut entries = Vec::with_capacity(atoms.len() + atoms.len() / 4);
    for &(i, p) in &atoms {
        let s = frac(p.map(f64::from)).map(|x| x - x.floor());
        let options = [0, 1, 2].map(|k| {
            let mut o = vec![0.0];
            if s[k] < reach[k] {
                o.push(1.0);
            }
            if 1.0 - s[k] < reach[k] {
                o.push(-1.0);
            }
            o
        });
        for &dx in &options[0] {
            for &dy in &options[1] {
                for &dz in &options[2] {
                    let q = cart([s[0] + dx, s[1] + dy, s[2] + dz]);
                    entries.push((i, q.map(|x| x as f32)));
                }
            }
        }
    }
    search(structure, entries)
}

/// The atoms that take part in guessed bonds, with their positions.
fn eligible(structure: &Structure, positions_angstrom: &[[f32; 3]]) -> Vec<(u32, [f32; 3])> {
    let n = structure.len().min(positions_angstrom.len()).min(u32::MAX as usize);
    structure
        .elements
        .iter()
        .zip(positions_angstrom)
        .enumerate()
        .take(n)
        .filter(|(_, (e, p))| bonds_allowed(**e) && p.iter().all(|x| x.is_finite()))
        .map(|(i, (_, p))| (i as u32, *p))
        .collect()
}

/// Bonds among `atoms` (an atom may appear more than once: its periodic images, never bonded to
/// each other).
fn search(structure: &Structure, atoms: Vec<(u32, [f32; 3])>) -> Vec<[u32; 2]> {
    let n = atoms.len();
    let mut max_r = 0f32;
    let mut lo = [f32::INFINITY; 3];
    for &(i, p) in &atoms {
        max_r = max_r.max(structure.elements[i as usize].covalent_radius_angstrom());
        for (l, x) in lo.iter_mut().zip(p) {
            *l = l.min(x);
        }
    }
    if atoms.len() < 2 {
        return Vec::new();
    }
    // Cells one and a half cut-offs wide hold about five atoms at liquid density: fewer, emptier
    // cells cost more in bookkeeping than the extra distance tests.
    let edge = f64::from(2.0 * max_r + TOLERANCE_ANGSTROM) * CELL_EDGE_PER_CUTOFF;

    // Cells of one cut-off edge, keyed z-major and sorted: memory and time follow the number of
    // atoms, however sparse the box (no dense grid over the bounding box).
    let coord = |x: f32, k: usize| -> u64 {
        let c = ((f64::from(x) - f64::from(lo[k])) / edge).floor();
        if c.is_finite() {
            c.clamp(0.0, (AXIS_CELLS - 1) as f64) as u64
        } else {
            0
        }
    };
    let mut keyed: Vec<(u64, u32)> = atoms
        .iter()
        .enumerate()
        .map(|(slot, &(_, p))| (encode(coord(p[0], 0), coord(p[1], 1), coord(p[2], 2)), slot as u32))
        .collect();
    keyed.sort_unstable();
    let mut keys: Vec<u64> = Vec::new();
    let mut start: Vec<u32> = Vec::new();
    for (slot, &(k, _)) in keyed.iter().enumerate() {
        if keys.last() != Some(&k) {
            keys.push(k);
            start.push(slot as u32);
        }
    }
    start.push(keyed.len() as u32);
    let sorted_pos: Vec<[f32; 3]> = keyed.iter().map(|&(_, s)| atoms[s as usize].1).collect();
    let sorted_idx: Vec<u32> = keyed.iter().map(|&(_, s)| atoms[s as usize].0).collect();
    let sorted_r: Vec<f32> = sorted_idx
        .iter()
        .map(|&i| structure.elements[i as usize].covalent_radius_angstrom())
        .collect();
    drop(keyed);
    drop(atoms);

    let water_h = |i: u32, j: u32| -> bool {
        let (i, j) = (i as usize, j as usize);
        structure.elements.get(i) == Some(&Element::H)
            && structure.elements.get(j) == Some(&Element::H)
            && same_entry(&structure.resids, i, j)
            && same_entry(&structure.resnames, i, j)
            && same_entry(&structure.segids, i, j)
            && same_entry(&structure.chains, i, j)
            && structure
                .resnames
                .get(i)
                .is_some_and(|r| is_water_resname(r.as_str().as_bytes()))
    };
    let min2 = MIN_DISTANCE_ANGSTROM * MIN_DISTANCE_ANGSTROM;
    let mut bonds: Vec<[u32; 2]> = Vec::with_capacity(n + n / 4);
    let test_pair = |a: usize, b: usize, bonds: &mut Vec<[u32; 2]>| {
        let (p, q) = (sorted_pos[a], sorted_pos[b]);
        let d = [p[0] - q[0], p[1] - q[1], p[2] - q[2]];
        let d2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
        let cut = sorted_r[a] + sorted_r[b] + TOLERANCE_ANGSTROM;
        if d2 < cut * cut && d2 > min2 {
            let (i, j) = (sorted_idx[a], sorted_idx[b]);
            if i != j && !water_h(i, j) && !structure.are_alternates(i as usize, j as usize) {
                bonds.push([i.min(j), i.max(j)]);
            }
        }
    };
    let range = |c: usize| (start[c] as usize, start[c + 1] as usize);
    let crowded = |c: usize| start[c + 1] - start[c] > MAX_ATOMS_PER_CELL;
    // The 13 forward neighbours of a cell are its +x neighbour and, in the rows (y+1, z),
    // (y-1, z+1), (y, z+1) and (y+1, z+1), the cells x-1..=x+1. Each row's first candidate moves
    // forward monotonically with the cell, so one pointer per row walks the keys once.
    const ROWS: [(i64, i64); 4] = [(1, 0), (-1, 1), (0, 1), (1, 1)];
    let mut row_ptr = [0usize; 4];
    let m = keys.len();
    for c in 0..m {
        if crowded(c) {
            continue;
        }
        let (a0, a1) = range(c);
        for a in a0..a1 {
            for b in a + 1..a1 {
                test_pair(a, b, &mut bonds);
            }
        }
        let (x, y, z) = decode(keys[c]);
        if x + 1 < AXIS_CELLS && c + 1 < m && keys[c + 1] == encode(x + 1, y, z) && !crowded(c + 1) {
            let (b0, b1) = range(c + 1);
            for a in a0..a1 {
                for b in b0..b1 {
                    test_pair(a, b, &mut bonds);
                }
            }
        }
        for (r, &(dy, dz)) in ROWS.iter().enumerate() {
            let ny = y as i64 + dy;
            let nz = z as i64 + dz;
            if ny < 0 || ny >= AXIS_CELLS as i64 || nz >= AXIS_CELLS as i64 {
                continue;
            }
            let (ny, nz) = (ny as u64, nz as u64);
            let first = encode(x.saturating_sub(1), ny, nz);
            let last = encode((x + 1).min(AXIS_CELLS - 1), ny, nz);
            while row_ptr[r] < m && keys[row_ptr[r]] < first {
                row_ptr[r] += 1;
            }
            let mut q = row_ptr[r];
            while q < m && keys[q] <= last {
                if !crowded(q) {
                    let (b0, b1) = range(q);
                    for a in a0..a1 {
                        for b in b0..b1 {
                            test_pair(a, b, &mut bonds);
                        }
                    }
                }
                q += 1;
            }
        }
    }
    bonds.sort_unstable();
    bonds.dedup();
    bonds
}

/// True when both indices exist in `v` and hold equal values.
fn same_entry<T: PartialEq>(v: &[T], i: usize, j: usize) -> bool {
    matches!((v.get(i), v.get(j)), (Some(a), Some(b)) if a == b)
}

/// Cell edge over the largest bonding cut-off (at least 1).
const CELL_EDGE_PER_CUTOFF: f64 = 1.5;

/// Cells per axis of the key space (21 bits each).
const AXIS_CELLS: u64 = 1 << 21;

fn encode(x: u64, y: u64, z: u64) -> u64 {
    (z << 42) | (y << 21) | x
}

fn decode(key: u64) -> (u64, u64, u64) {
    (key & (AXIS_CELLS - 1), (key >> 21) & (AXIS_CELLS - 1), key >> 42)
}

/// Completes bonds read from a PDB file's CONECT records, which by the wwPDB convention list only
/// hetero groups and disulfides: bonds guessed from `positions_angstrom` are added where at least
/// one of the two atoms is in no CONECT bond (so the standard residues get theirs, as VMD guesses
/// them, while the bonds among the atoms the records describe stay as the file gives them). The
/// source stays [`BondSource::File`].
pub fn complete_conect_bonds(structure: &mut Structure, positions_angstrom: &[[f32; 3]]) {
    if structure.bond_source != BondSource::File || structure.bonds.is_empty() {
        return;
    }
    let mut listed = vec![false; structure.len()];
    for &[a, b] in &structure.bonds {
        for i in [a, b] {
            if let Some(l) = listed.get_mut(i as usize) {
                *l = true;
            }
        }
    }
    let is_listed = |i: u32| listed.get(i as usize).copied().unwrap_or(true);
    let guessed = guess_bonds(structure, positions_angstrom);
    structure
        .bonds
        .extend(guessed.into_iter().filter(|&[a, b]| !is_listed(a) || !is_listed(b)));
    structure.bonds.sort_unstable();
    structure.bonds.dedup();
}

/// Replaces the structure's bonds with guessed ones (across the faces of `cell` too, when there is
/// one: [`guess_bonds_periodic`]) and marks them [`BondSource::Guessed`].
pub fn guess_bonds_in_place(structure: &mut Structure, positions_angstrom: &[[f32; 3]], cell: Option<&UnitCell>) {
    structure.bonds = guess_bonds_periodic(structure, positions_angstrom, cell);
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

    #[test]
    fn conect_bonds_are_completed_for_atoms_the_records_leave_out() {
        // A chain C0-C1-C2 (no records) and a hetero pair C3-C4 the records join to C2 only:
        // C3-C4 are 1.5 A apart but the file does not bond them, so they stay unbonded.
        let mut s = structure(&[
            (6, "ALA", 1),
            (6, "ALA", 1),
            (6, "ALA", 1),
            (6, "LIG", 2),
            (6, "LIG", 2),
        ]);
        let p = [
            [0.0, 0.0, 0.0],
            [1.5, 0.0, 0.0],
            [3.0, 0.0, 0.0],
            [4.5, 0.0, 0.0],
            [6.0, 0.0, 0.0],
        ];
        s.bonds = vec![[2, 3], [2, 4]];
        s.bond_source = BondSource::File;
        complete_conect_bonds(&mut s, &p);
        assert_eq!(s.bonds, vec![[0, 1], [1, 2], [2, 3], [2, 4]]);
        assert_eq!(s.bond_source, BondSource::File);
        // Guessed bonds are left alone.
        let mut g = structure(&[(6, "ALA", 1), (6, "ALA", 1)]);
        g.bond_source = BondSource::Guessed;
        complete_conect_bonds(&mut g, &p[..2]);
        assert!(g.bonds.is_empty());
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
    fn periodic_guess_matches_brute_force_nearest_images_in_a_triclinic_box() {
        let cell = UnitCell::new([21.0, 24.0, 19.0], [75.0, 105.0, 68.0]);
        let m = cell.matrix_angstrom();
        let mut state = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(7, |d| d.as_nanos() as u64);
        let seed = state;
        let mut rnd = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            f64::from((state >> 33) as u32) / (1u64 << 31) as f64
        };
        let zs = [1u8, 6, 7, 8, 16, 1, 1, 6];
        let n = 900;
        let mut atoms = Vec::new();
        let mut p = Vec::new();
        for i in 0..n {
            atoms.push((zs[i % zs.len()], "LIG", i as i32));
            // Fractions in [-0.2, 1.2): most atoms inside, some a little outside.
            let f = [0; 3].map(|_| rnd() * 1.4 - 0.2);
            p.push([0, 1, 2].map(|k| (f[0] * m[0][k] + f[1] * m[1][k] + f[2] * m[2][k]) as f32));
        }
        let s = structure(&atoms);
        // Brute force over the 125 images of each pair (pairs within float rounding of the cut-off
        // may go either way).
        let (mut slow, mut ambiguous) = (Vec::new(), Vec::new());
        for i in 0..n {
            for j in i + 1..n {
                let (ei, ej) = (s.elements[i], s.elements[j]);
                let cut = ei.covalent_radius_angstrom() + ej.covalent_radius_angstrom() + TOLERANCE_ANGSTROM;
                let mut best = f32::INFINITY;
                for a in -2..=2 {
                    for b in -2..=2 {
                        for c in -2..=2 {
                            let t = [0, 1, 2].map(|k| {
                                (f64::from(a) * m[0][k] + f64::from(b) * m[1][k] + f64::from(c) * m[2][k]) as f32
                            });
                            let d = (0..3).map(|k| (p[i][k] - p[j][k] + t[k]).powi(2)).sum::<f32>().sqrt();
                            best = best.min(d);
                        }
                    }
                }
                if (best - cut).abs() < 1e-3 {
                    ambiguous.push([i as u32, j as u32]);
                } else if best < cut && best > MIN_DISTANCE_ANGSTROM {
                    slow.push([i as u32, j as u32]);
                }
            }
        }
        let fast = guess_bonds_periodic(&s, &p, Some(&cell));
        assert!(
            slow.len() > guess_bonds(&s, &p).len(),
            "seed {seed}: some bonds cross the faces"
        );
        let differ: Vec<_> = fast
            .iter()
            .filter(|b| !slow.contains(b))
            .chain(slow.iter().filter(|b| !fast.contains(b)))
            .filter(|b| !ambiguous.contains(b))
            .collect();
        assert!(differ.is_empty(), "seed {seed}: {differ:?}");
        // A box narrower than two cut-offs (a crystal's cell): bonds as without one.
        let small = UnitCell::orthorhombic([5.0, 30.0, 30.0]);
        assert_eq!(guess_bonds_periodic(&s, &p, Some(&small)), guess_bonds(&s, &p));
        assert_eq!(guess_bonds_periodic(&s, &p, None), guess_bonds(&s, &p));
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
    fn alternate_locations_are_not_bonded_to_each_other() {
        // CA, then CB in locations A and B 0.5 A apart: each CB bonds to CA, not to the other CB.
        let mut s = structure(&[(6, "SER", 1), (6, "SER", 1), (6, "SER", 1)]);
        let p = [[0.0, 0.0, 0.0], [1.5, 0.0, 0.0], [1.4, 0.5, 0.0]];
        assert_eq!(guess_bonds(&s, &p), vec![[0, 1], [0, 2], [1, 2]]);
        s.altlocs = Some(b" AB".to_vec());
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
    fn matches_brute_force_with_far_apart_clusters() {
        // Two small molecules kilometres apart, and one across a cell-row boundary.
        let s = structure(&[
            (6, "A", 1),
            (8, "A", 1),
            (6, "B", 2),
            (7, "B", 2),
            (1, "C", 3),
            (6, "C", 3),
        ]);
        let p = [
            [0.0, 0.0, 0.0],
            [1.2, 0.3, -0.2],
            [1.0e7, -3.0e6, 5.0e5],
            [1.0e7 + 1.1, -3.0e6 + 0.5, 5.0e5],
            [-2.0, 2.37, 2.39],
            [-2.0, 2.37, 2.39 + 1.09],
        ];
        assert_eq!(guess_bonds(&s, &p), brute_force(&s, &p));
        assert_eq!(guess_bonds(&s, &p).len(), 3);
    }

    #[test]
    fn atoms_piled_on_one_point_get_no_bonds_quickly() {
        let n = 20_000;
        let atoms: Vec<(u8, &str, i32)> = (0..n).map(|i| (6, "X", i)).collect();
        let s = structure(&atoms);
        let mut p = vec![[0.0f32; 3]; n as usize];
        p[0] = [50.0, 0.0, 0.0];
        p[1] = [51.5, 0.0, 0.0];
        assert_eq!(guess_bonds(&s, &p), vec![[0, 1]]);
    }

    #[test]
    fn sparse_outlier_does_not_blow_up_the_grid() {
        let s = structure(&[(6, "X", 1), (6, "X", 1), (6, "X", 2)]);
        let p = [[0.0, 0.0, 0.0], [1.5, 0.0, 0.0], [1.0e30, 1.0e30, 1.0e30]];
        assert_eq!(guess_bonds(&s, &p), vec![[0, 1]]);
        assert!(guess_bonds(&s, &p[..1]).is_empty());
    }
}
