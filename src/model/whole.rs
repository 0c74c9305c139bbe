//! Molecules made whole across a periodic box.
//!
//! MD engines write each atom wrapped into the box, so a molecule that straddles a face comes out
//! in pieces on opposite sides (a protein with stretched peptide bonds, a water with an H across
//! the box). [`Whole`] joins them: each bonded component's atoms are moved by whole box vectors so
//! that every bond of a spanning tree takes its minimum image, then the component as a whole is
//! moved by the box vector that leaves most of its atoms where the file put them (the molecule
//! stays where most of it was, whatever the box's origin convention). Components that are already
//! whole are not touched; components bonded to their own periodic images (a crystal's network,
//! where a cycle of bonds wraps around the box) are left as read.
//!
//! A solvated system's water and ions can also be gathered around the solute
//! ([`Whole::wrap_around`]): each molecule outside the solute is moved by whole box vectors to the
//! image nearest the solute's centre, so that the solvent drawn beside the protein is the solvent
//! next to it (as `gmx trjconv -pbc mol -center -ur compact` writes it, the solute left in place).
//!
//! Owns [`Whole`] (built once from the bonds, applied to each frame by `Trajectory::read_frame`)
//! and [`crossing_bonds`] (how many bonds of a frame span the box instead of their minimum image).

use super::cell::UnitCell;

/// A bond whose length exceeds its minimum image by more than this (Angstrom) crosses the box.
const CROSSING_SLACK_ANGSTROM: f64 = 0.5;

/// Box vectors and their inverse, for minimum images of bond vectors.
struct Periodic {
    /// Rows a, b, c (Angstrom).
    m: [[f64; 3]; 3],
    /// Fractional coordinates: s = d inv (row vector times matrix).
    inv: [[f64; 3]; 3],
    /// (Half the narrowest width across the box)^2: a shorter vector is its own minimum image.
    own_image2: f64,
}

impl Periodic {
    fn new(cell: &UnitCell) -> Option<Periodic> {
        if !cell.is_valid() {
            return None;
        }
        let m = cell.matrix_angstrom();
        // Rows are lower-triangular: a = (ax, 0, 0), b = (bx, by, 0), c = (cx, cy, cz).
        let (ax, bx, by, cx, cy, cz) = (m[0][0], m[1][0], m[1][1], m[2][0], m[2][1], m[2][2]);
        if !(ax > 0.0 && by > 0.0 && cz > 0.0) {
            return None;
        }
        let inv = [
            [1.0 / ax, 0.0, 0.0],
            [-bx / (ax * by), 1.0 / by, 0.0],
            [(bx * cy - by * cx) / (ax * by * cz), -cy / (by * cz), 1.0 / cz],
        ];
        // The width across the faces of axis k is 1 / |column k of inv|.
        let width = |k: usize| 1.0 / (inv[0][k] * inv[0][k] + inv[1][k] * inv[1][k] + inv[2][k] * inv[2][k]).sqrt();
        let narrowest = width(0).min(width(1)).min(width(2));
        Some(Periodic {
            m,
            inv,
            own_image2: 0.25 * narrowest * narrowest,
        })
    }

    fn fractional(&self, d: [f64; 3]) -> [f64; 3] {
        let i = &self.inv;
        [
            d[0] * i[0][0] + d[1] * i[1][0] + d[2] * i[2][0],
            d[1] * i[1][1] + d[2] * i[2][1],
            d[2] * i[2][2],
        ]
    }

    fn cartesian(&self, s: [f64; 3]) -> [f64; 3] {
        let m = &self.m;
        [
            s[0] * m[0][0] + s[1] * m[1][0] + s[2] * m[2][0],
            s[1] * m[1][1] + s[2] * m[2][1],
            s[2] * m[2][2],
        ]
    }

    /// The shortest vector equal to `d` up to a box vector (rounded fractions, then the 27
    /// neighbouring images: exact in skewed boxes too).
    fn minimum_image(&self, d: [f64; 3]) -> [f64; 3] {
        if norm2(d) <= self.own_image2 {
            return d;
        }
        let s = self.fractional(d).map(|x| x - x.round());
        let mut best = self.cartesian(s);
        let mut best2 = norm2(best);
        for i in -1..=1 {
            for j in -1..=1 {
                for k in -1..=1 {
                    if i == 0 && j == 0 && k == 0 {
                        continue;
                    }
                    let r = self.cartesian([s[0] + f64::from(i), s[1] + f64::from(j), s[2] + f64::from(k)]);
                    let r2 = norm2(r);
                    if r2 < best2 {
                        best = r;
                        best2 = r2;
                    }
                }
            }
        }
        best
    }

    /// The box vector (integer multiples of a, b, c) closest to `d`.
    fn lattice_steps(&self, d: [f64; 3]) -> [i32; 3] {
        self.fractional(d).map(|x| x.round().clamp(-1e6, 1e6) as i32)
    }
}

fn norm2(d: [f64; 3]) -> f64 {
    d[0] * d[0] + d[1] * d[1] + d[2] * d[2]
}

fn sub(p: [f32; 3], q: [f32; 3]) -> [f64; 3] {
    [0, 1, 2].map(|k| f64::from(p[k]) - f64::from(q[k]))
}

/// One bonded component: its atoms at `Whole::order[order]`, its bonds outside the spanning tree
/// at `Whole::extra[extra]`.
#[derive(Clone, Debug)]
struct Component {
    order: std::ops::Range<u32>,
    extra: std::ops::Range<u32>,
}

/// How to make a frame's molecules whole: the bonded components of a structure, each as a
/// breadth-first spanning tree. Built once from the bonds; applied to each frame that has a box.
#[derive(Clone, Debug, Default)]
pub struct Whole {
    /// (atom, where in `order` the atom it is placed beside sits); a component's root comes first,
    /// beside itself.
    order: Vec<(u32, u32)>,
    /// Bonds closing cycles, as two places in `order` (checked after placing: a cycle that wraps
    /// the box marks a network).
    extra: Vec<[u32; 2]>,
    /// Components of two atoms or more.
    components: Vec<Component>,
    n_atoms: usize,
}

/// What [`Whole::apply`] did to one frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WholeReport {
    /// Molecules whose atoms were moved.
    pub joined: usize,
    /// Components bonded to their own periodic image (left as read).
    pub networks: usize,
}

impl Whole {
    /// The components of `n_atoms` atoms bonded by `bonds` (pairs naming atoms past `n_atoms` are
    /// ignored).
    pub fn new(n_atoms: usize, bonds: &[[u32; 2]]) -> Whole {
        // Adjacency in compressed rows.
        let valid = |b: &&[u32; 2]| (b[0] as usize) < n_atoms && (b[1] as usize) < n_atoms && b[0] != b[1];
        let mut start = vec![0u32; n_atoms + 1];
        for b in bonds.iter().filter(valid) {
            start[b[0] as usize + 1] += 1;
            start[b[1] as usize + 1] += 1;
        }
        for i in 0..n_atoms {
            start[i + 1] += start[i];
        }
        let mut fill = start.clone();
        let mut adj = vec![0u32; start[n_atoms] as usize];
        for b in bonds.iter().filter(valid) {
            for (x, y) in [(b[0], b[1]), (b[1], b[0])] {
                adj[fill[x as usize] as usize] = y;
                fill[x as usize] += 1;
            }
        }
        // Where each atom sits in `order` (u32::MAX: not yet reached).
        let mut place = vec![u32::MAX; n_atoms];
        let mut whole = Whole {
            n_atoms,
            ..Whole::default()
        };
        for root in 0..n_atoms {
            if place[root] != u32::MAX || start[root] == start[root + 1] {
                continue;
            }
            let first = whole.order.len();
            place[root] = first as u32;
            whole.order.push((root as u32, first as u32));
            let extra_first = whole.extra.len();
            let mut head = first;
            while head < whole.order.len() {
                let a = whole.order[head].0 as usize;
                let parent_place = whole.order[head].1;
                for &b in &adj[start[a] as usize..start[a + 1] as usize] {
                    if place[b as usize] == u32::MAX {
                        place[b as usize] = whole.order.len() as u32;
                        whole.order.push((b, head as u32));
                    } else if (place[b as usize] as usize) < head && place[b as usize] != parent_place {
                        // Reached before a and not a's parent: a bond closing a cycle (seen once
                        // here; from b's side a came later).
                        whole.extra.push([head as u32, place[b as usize]]);
                    }
                }
                head += 1;
            }
            whole.components.push(Component {
                order: first as u32..whole.order.len() as u32,
                extra: extra_first as u32..whole.extra.len() as u32,
            });
        }
        whole
    }

    /// Atoms the structure had when this was built.
    pub fn n_atoms(&self) -> usize {
        self.n_atoms
    }

    /// Makes the molecules of `positions_angstrom` whole in `cell` (nothing when the cell is not
    /// a valid box or the frame has another atom count).
    pub fn apply(&self, positions_angstrom: &mut [[f32; 3]], cell: &UnitCell) -> WholeReport {
        let mut report = WholeReport::default();
        let Some(box3) = Periodic::new(cell) else {
            return report;
        };
        if positions_angstrom.len() != self.n_atoms {
            return report;
        }
        let mut placed: Vec<[f64; 3]> = Vec::new();
        let mut steps: Vec<[i32; 3]> = Vec::new();
        for c in &self.components {
            let first = c.order.start as usize;
            let order = &self.order[first..c.order.end as usize];
            let atom_at = |place: u32| self.order[place as usize].0 as usize;
            // Already whole: every tree bond is its own minimum image.
            let crossing = order.iter().skip(1).any(|&(a, parent)| {
                let d = sub(positions_angstrom[a as usize], positions_angstrom[atom_at(parent)]);
                norm2(d) > norm2(box3.minimum_image(d)) + 1e-6
            });
            if !crossing {
                continue;
            }
            // Each atom beside its tree parent (parents come first in breadth-first order), as
            // its read position plus a whole box vector (no rounding drift along long chains).
            placed.clear();
            for &(a, parent) in order {
                let own = positions_angstrom[a as usize].map(f64::from);
                let Some(base) = placed.get(parent as usize - first).copied() else {
                    placed.push(own);
                    continue;
                };
                let d = box3.minimum_image([0, 1, 2].map(|i| own[i] - base[i]));
                let n = box3.lattice_steps([0, 1, 2].map(|i| base[i] + d[i] - own[i]));
                let t = box3.cartesian(n.map(f64::from));
                placed.push([0, 1, 2].map(|i| own[i] + t[i]));
            }
            // A cycle of bonds that wraps around the box: a periodic network, left as read.
            let extra = &self.extra[c.extra.start as usize..c.extra.end as usize];
            let network = extra.iter().any(|&[i, j]| {
                let (pi, pj) = (placed[i as usize - first], placed[j as usize - first]);
                let d = [0, 1, 2].map(|k| pj[k] - pi[k]);
                norm2(d) > norm2(box3.minimum_image(d)) + 1e-3
            });
            if network {
                report.networks += 1;
                continue;
            }
            // Keep the image in which most atoms stay where they were read.
            steps.clear();
            steps.extend(order.iter().zip(&placed).map(|(&(a, _), p)| {
                let own = positions_angstrom[a as usize].map(f64::from);
                box3.lattice_steps([0, 1, 2].map(|i| p[i] - own[i]))
            }));
            steps.sort_unstable();
            let (mut mode, mut best, mut run) = (steps[0], 0usize, 0usize);
            for i in 0..steps.len() {
                run = if i > 0 && steps[i - 1] == steps[i] { run + 1 } else { 1 };
                if run > best {
                    best = run;
                    mode = steps[i];
                }
            }
            let back = box3.cartesian(mode.map(f64::from));
            for (&(a, _), p) in order.iter().zip(&placed) {
                positions_angstrom[a as usize] = [0, 1, 2].map(|i| (p[i] - back[i]) as f32);
            }
            report.joined += 1;
        }
        report
    }
}

impl Whole {
    /// Moves every molecule (bonded component, or lone atom) none of whose atoms is in `solute` by
    /// whole box vectors so that its centre lies at the minimum image from the centre of the
    /// `solute` atoms. Returns how many were moved (0 without a valid box, solute atoms, or with
    /// another atom count).
    pub fn wrap_around(&self, positions_angstrom: &mut [[f32; 3]], cell: &UnitCell, solute: &[bool]) -> usize {
        let Some(box3) = Periodic::new(cell) else {
            return 0;
        };
        if positions_angstrom.len() != self.n_atoms || solute.len() != self.n_atoms {
            return 0;
        }
        let (mut sum, mut n) = ([0.0f64; 3], 0usize);
        for (p, _) in positions_angstrom.iter().zip(solute).filter(|(_, s)| **s) {
            for k in 0..3 {
                sum[k] += f64::from(p[k]);
            }
            n += 1;
        }
        if n == 0 {
            return 0;
        }
        let centre = sum.map(|s| s / n as f64);
        let mut moved = 0;
        // Moves `atoms` by the box vector taking their mean to its image nearest the centre.
        let mut gather = |atoms: &mut dyn Iterator<Item = usize>, positions: &mut [[f32; 3]]| {
            let atoms: Vec<usize> = atoms.collect();
            if atoms.is_empty() || atoms.iter().any(|&a| solute[a]) {
                return;
            }
            let mut mean = [0.0f64; 3];
            for &a in &atoms {
                for k in 0..3 {
                    mean[k] += f64::from(positions[a][k]) / atoms.len() as f64;
                }
            }
            let d = [0, 1, 2].map(|k| mean[k] - centre[k]);
            let n_steps = box3.lattice_steps([0, 1, 2].map(|k| box3.minimum_image(d)[k] - d[k]));
            if n_steps == [0, 0, 0] {
                return;
            }
            let t = box3.cartesian(n_steps.map(f64::from));
            for &a in &atoms {
                positions[a] = [0, 1, 2].map(|k| (f64::from(positions[a][k]) + t[k]) as f32);
            }
            moved += 1;
        };
        let mut in_component = vec![false; self.n_atoms];
        for c in &self.components {
            let order = &self.order[c.order.start as usize..c.order.end as usize];
            for &(a, _) in order {
                in_component[a as usize] = true;
            }
            gather(&mut order.iter().map(|&(a, _)| a as usize), positions_angstrom);
        }
        for (a, _) in in_component.iter().enumerate().filter(|(_, c)| !**c) {
            gather(&mut std::iter::once(a), positions_angstrom);
        }
        moved
    }
}

/// Bonds of `positions_angstrom` longer than their minimum image in `cell` by more than half an
/// Angstrom: bonds drawn across the box. 0 without a valid cell.
pub fn crossing_bonds(positions_angstrom: &[[f32; 3]], cell: &UnitCell, bonds: &[[u32; 2]]) -> usize {
    let Some(box3) = Periodic::new(cell) else {
        return 0;
    };
    bonds.iter().filter(|b| crosses(&box3, positions_angstrom, b)).count()
}

fn crosses(box3: &Periodic, positions_angstrom: &[[f32; 3]], b: &[u32; 2]) -> bool {
    let (Some(p), Some(q)) = (
        positions_angstrom.get(b[0] as usize),
        positions_angstrom.get(b[1] as usize),
    ) else {
        return false;
    };
    let d = sub(*p, *q);
    let m = box3.minimum_image(d);
    norm2(d).sqrt() > norm2(m).sqrt() + CROSSING_SLACK_ANGSTROM
}

/// Keeps the bonds of `bonds` that do not cross the box in `cell` (all of them without a valid
/// cell): what a picture of a wrapped frame should draw.
pub fn bonds_within_box(positions_angstrom: &[[f32; 3]], cell: Option<&UnitCell>, bonds: &[[u32; 2]]) -> Vec<[u32; 2]> {
    match cell.and_then(Periodic::new) {
        Some(box3) => bonds
            .iter()
            .filter(|b| !crosses(&box3, positions_angstrom, b))
            .copied()
            .collect(),
        None => bonds.to_vec(),
    }
}

#[cfg(test)]
mod tests;
