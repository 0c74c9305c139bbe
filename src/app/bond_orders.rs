//! Double, triple and aromatic bonds as they are drawn: the document's multiple bonds
//! (`Structure::multiple_bonds`, from SDF and mol2 files), each with a neighbouring atom that fixes
//! the plane of its sticks, and the offset sticks or lines themselves (PyMOL's `valence` picture:
//! two thin sticks for a double bond, three for a triple one; an aromatic bond keeps its stick and
//! gains a thin, shorter one on the ring's side). Used by `app::atoms`.

use crate::model::BondOrder;

/// A stick from one point to another with its radius, all in Angstrom.
pub type Stick = ([f32; 3], [f32; 3], f32);

/// One multiple bond: its pair, order, and an atom bonded to one of its ends (not the other end),
/// preferably by a bond of the same ring.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Entry {
    pair: [u32; 2],
    order: BondOrder,
    neighbour: Option<u32>,
}

/// A document's multiple bonds, sorted by pair for lookups while bonds are drawn.
#[derive(Clone, Debug, Default)]
pub struct MultipleBonds {
    entries: Vec<Entry>,
}

impl MultipleBonds {
    /// The multiple bonds `orders` of a structure bonded by `bonds`.
    pub fn new(orders: &[([u32; 2], BondOrder)], bonds: &[[u32; 2]]) -> MultipleBonds {
        if orders.is_empty() {
            return MultipleBonds::default();
        }
        let mut ends: Vec<u32> = orders.iter().flat_map(|(p, _)| *p).collect();
        ends.sort_unstable();
        ends.dedup();
        // Neighbours of the atoms in multiple bonds only (a ligand's few atoms in a protein's many).
        let mut neighbours: Vec<Vec<u32>> = vec![Vec::new(); ends.len()];
        for &[a, b] in bonds {
            for (x, y) in [(a, b), (b, a)] {
                if let Ok(k) = ends.binary_search(&x)
                    && let Some(list) = neighbours.get_mut(k)
                {
                    list.push(y);
                }
            }
        }
        let order_of = |p: [u32; 2]| {
            let key = [p[0].min(p[1]), p[0].max(p[1])];
            orders.iter().find(|(q, _)| *q == key).map(|(_, o)| *o)
        };
        let mut entries: Vec<Entry> = orders
            .iter()
            .map(|&(pair, order)| {
                let candidates = |end: u32, other: u32| -> Vec<u32> {
                    ends.binary_search(&end)
                        .ok()
                        .and_then(|k| neighbours.get(k))
                        .map(|l| l.iter().copied().filter(|&n| n != other).collect())
                        .unwrap_or_default()
                };
                let all: Vec<(u32, u32)> = candidates(pair[0], pair[1])
                    .into_iter()
                    .map(|n| (pair[0], n))
                    .chain(candidates(pair[1], pair[0]).into_iter().map(|n| (pair[1], n)))
                    .collect();
                // An aromatic bond's inner stick lies on its ring's side: a neighbour by an
                // aromatic bond too.
                let ring = all
                    .iter()
                    .find(|&&(end, n)| order_of([end, n]) == Some(BondOrder::Aromatic))
                    .map(|&(_, n)| n);
                Entry {
                    pair,
                    order,
                    neighbour: ring.or(all.first().map(|&(_, n)| n)),
                }
            })
            .collect();
        entries.sort_unstable_by_key(|e| e.pair);
        MultipleBonds { entries }
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn get(&self, pair: [u32; 2]) -> Option<&Entry> {
        let key = [pair[0].min(pair[1]), pair[0].max(pair[1])];
        self.entries
            .binary_search_by_key(&key, |e| e.pair)
            .ok()
            .and_then(|k| self.entries.get(k))
    }

    /// The sticks that draw bond `pair` from `a` to `c` with bond radius `radius` (Angstrom), or
    /// `None` for a single bond: (from, to, radius) each.
    pub fn sticks(
        &self,
        pair: [u32; 2],
        a: [f32; 3],
        c: [f32; 3],
        radius: f32,
        positions_angstrom: &[[f32; 3]],
    ) -> Option<Vec<Stick>> {
        let e = self.get(pair)?;
        let side = side_direction(a, c, e.neighbour.and_then(|n| positions_angstrom.get(n as usize)));
        Some(layout(e.order, a, c, side, radius))
    }

    /// The line segments that draw bond `pair` from `a` to `c` in the lines style, or `None` for a
    /// single bond.
    pub fn lines(
        &self,
        pair: [u32; 2],
        a: [f32; 3],
        c: [f32; 3],
        positions_angstrom: &[[f32; 3]],
    ) -> Option<Vec<([f32; 3], [f32; 3])>> {
        // A stick of radius 0.12 A laid out as for ball-and-stick, its axes as lines.
        self.sticks(pair, a, c, 0.12, positions_angstrom)
            .map(|s| s.into_iter().map(|(p, q, _)| (p, q)).collect())
    }
}

fn sub(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn dot(a: [f32; 3], b: [f32; 3]) -> f32 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn normalized(v: [f32; 3]) -> Option<[f32; 3]> {
    let n = dot(v, v).sqrt();
    (n > 1e-6 && n.is_finite()).then(|| v.map(|x| x / n))
}

/// A unit vector across the bond from `a` to `c`, in the plane of `neighbour` and towards it; any
/// perpendicular when there is none or it lies on the bond's line.
fn side_direction(a: [f32; 3], c: [f32; 3], neighbour: Option<&[f32; 3]>) -> [f32; 3] {
    let Some(u) = normalized(sub(c, a)) else {
        return [1.0, 0.0, 0.0];
    };
    let across = |v: [f32; 3]| {
        let along = dot(v, u);
        normalized([v[0] - along * u[0], v[1] - along * u[1], v[2] - along * u[2]])
    };
    if let Some(n) = neighbour.and_then(|n| across(sub(*n, a))) {
        return n;
    }
    // The axis least along the bond.
    let k = (0..3).min_by(|&i, &j| u[i].abs().total_cmp(&u[j].abs())).unwrap_or(0);
    let mut e = [0.0; 3];
    e[k] = 1.0;
    across(e).unwrap_or([1.0, 0.0, 0.0])
}

/// The sticks of a bond of `order` from `a` to `c`, offset along the unit vector `side`.
fn layout(order: BondOrder, a: [f32; 3], c: [f32; 3], side: [f32; 3], radius: f32) -> Vec<Stick> {
    let shift = |p: [f32; 3], d: f32| [p[0] + d * side[0], p[1] + d * side[1], p[2] + d * side[2]];
    let pair = |d: f32, r: f32| (shift(a, d), shift(c, d), r);
    match order {
        BondOrder::Double => vec![pair(-0.75 * radius, 0.5 * radius), pair(0.75 * radius, 0.5 * radius)],
        BondOrder::Triple => vec![
            pair(-1.1 * radius, 0.38 * radius),
            pair(0.0, 0.38 * radius),
            pair(1.1 * radius, 0.38 * radius),
        ],
        BondOrder::Aromatic => {
            // The inner stick from 20 % to 80 % of the bond.
            let inner_a: [f32; 3] = std::array::from_fn(|k| a[k] + 0.2 * (c[k] - a[k]));
            let inner_c: [f32; 3] = std::array::from_fn(|k| a[k] + 0.8 * (c[k] - a[k]));
            let d = 1.9 * radius;
            vec![(a, c, radius), (shift(inner_a, d), shift(inner_c, d), 0.4 * radius)]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dist_to_line(p: [f32; 3], a: [f32; 3], c: [f32; 3]) -> f32 {
        let u = normalized(sub(c, a)).unwrap();
        let v = sub(p, a);
        let along = dot(v, u);
        (dot(v, v) - along * along).max(0.0).sqrt()
    }

    /// Ethene-like: C0=C1 with H2 on C0. The double bond's two sticks lie in the molecule's plane
    /// (z = 0), either side of the bond; single bonds have none.
    #[test]
    fn a_double_bond_is_two_sticks_in_the_plane_of_its_neighbours() {
        let p = [[0.0, 0.0, 0.0], [1.33, 0.0, 0.0], [-0.55, 0.95, 0.0]];
        let m = MultipleBonds::new(&[([0, 1], BondOrder::Double)], &[[0, 1], [0, 2]]);
        assert!(m.sticks([0, 2], p[0], p[2], 0.2, &p).is_none());
        let s = m.sticks([1, 0], p[1], p[0], 0.2, &p).unwrap();
        assert_eq!(s.len(), 2);
        for (x, y, r) in &s {
            assert!(x[2].abs() < 1e-6 && y[2].abs() < 1e-6, "{s:?}");
            assert!((dist_to_line(*x, p[0], p[1]) - 0.15).abs() < 1e-5);
            assert!((r - 0.1).abs() < 1e-6);
        }
        assert!(s[0].0[1] * s[1].0[1] < 0.0, "one each side: {s:?}");
    }

    /// Benzene's aromatic bonds: each keeps its full stick and gains a thinner, shorter one
    /// towards the ring's centre.
    #[test]
    fn an_aromatic_bond_s_inner_stick_is_on_the_ring_s_side() {
        let p: Vec<[f32; 3]> = (0..6)
            .map(|k| {
                let t = k as f32 * std::f32::consts::PI / 3.0;
                [1.39 * t.cos(), 1.39 * t.sin(), 0.0]
            })
            .collect();
        let bonds: Vec<[u32; 2]> = (0..6u32).map(|k| [k.min((k + 1) % 6), k.max((k + 1) % 6)]).collect();
        let orders: Vec<([u32; 2], BondOrder)> = bonds.iter().map(|&b| (b, BondOrder::Aromatic)).collect();
        let m = MultipleBonds::new(&orders, &bonds);
        for &[i, j] in &bonds {
            let s = m.sticks([i, j], p[i as usize], p[j as usize], 0.2, &p).unwrap();
            assert_eq!(s.len(), 2);
            assert_eq!(s[0], (p[i as usize], p[j as usize], 0.2));
            let mid = |x: [f32; 3], y: [f32; 3]| dot(x, x).sqrt() + dot(y, y).sqrt();
            assert!(
                mid(s[1].0, s[1].1) < mid(s[0].0, s[0].1) - 0.3,
                "inside the ring: {s:?}"
            );
        }
    }

    #[test]
    fn a_triple_bond_without_neighbours_still_has_three_sticks() {
        let p = [[0.0, 0.0, 0.0], [0.0, 0.0, 1.2]];
        let m = MultipleBonds::new(&[([0, 1], BondOrder::Triple)], &[[0, 1]]);
        let s = m.sticks([0, 1], p[0], p[1], 0.2, &p).unwrap();
        assert_eq!(s.len(), 3);
        assert!(s.iter().all(|(x, y, _)| x.iter().chain(y).all(|v| v.is_finite())));
        assert!(MultipleBonds::new(&[], &[[0, 1]]).is_empty());
    }
}
