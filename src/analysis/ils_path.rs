//! Pathways on a free-energy map (implicit ligand sampling): the lowest-barrier path of a probe from
//! a point to another point or to bulk solvent.
//!
//! Owns [`lowest_barrier_path`]. The map's lattice points are the nodes, each joined to its 26
//! neighbours. The path minimises the barrier, the largest map value along it (a minimax path:
//! Dijkstra with the running maximum as the cost); among the paths with that barrier it is the
//! shortest in Angstrom (a second Dijkstra on the points at or below the barrier). "Bulk" is any point
//! on the map's outer faces. Called by `orbitfield ils-path` and the tests.

use crate::model::Grid3;
use crate::model::units::ANGSTROM_PER_BOHR;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// A path on the map.
#[derive(Clone, Debug, PartialEq)]
pub struct IlsPath {
    /// Lattice points along the path, Angstrom, from the start.
    pub points_angstrom: Vec<[f64; 3]>,
    /// The map's value at each point.
    pub values: Vec<f64>,
    /// The largest value along the path.
    pub barrier: f64,
    pub length_angstrom: f64,
}

/// Why no path was found.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum PathError {
    #[error("the map's lattice is not axis-aligned")]
    NotAxisAligned,
    #[error("{what} ({x:.3}, {y:.3}, {z:.3}) A lies outside the map")]
    Outside { what: &'static str, x: f64, y: f64, z: f64 },
    #[error("the map holds a value that is not a number")]
    NotFinite,
    #[error("no path joins the points")]
    NoPath,
}

/// Heap entry: smallest cost first.
#[derive(Clone, Copy, PartialEq)]
struct Entry {
    cost: f64,
    node: usize,
}

impl Eq for Entry {}

impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        other.cost.total_cmp(&self.cost).then(other.node.cmp(&self.node))
    }
}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// True when `path`'s barrier is `grid`'s largest value: the cap implicit ligand sampling puts on
/// blocked voxels (`grid ils --max-energy`), so no sampled path joins its ends and the barrier is
/// not a free energy.
pub fn barrier_is_cap(grid: &Grid3, path: &IlsPath) -> bool {
    let ceiling = grid
        .values
        .iter()
        .copied()
        .filter(|v| v.is_finite())
        .fold(f32::MIN, f32::max);
    path.barrier >= f64::from(ceiling) - 1e-4 * f64::from(ceiling).abs().max(1.0)
}

/// The lowest-barrier path on `map` from `from_angstrom` to `to_angstrom` (the nearest lattice points)
/// or, with `None`, to the nearest-in-barrier point on the map's outer faces.
pub fn lowest_barrier_path(
    map: &Grid3,
    from_angstrom: [f64; 3],
    to_angstrom: Option<[f64; 3]>,
) -> Result<IlsPath, PathError> {
    let lat = &map.lattice;
    if !lat.is_axis_aligned() {
        return Err(PathError::NotAxisAligned);
    }
    if map.values.iter().any(|v| v.is_nan()) {
        return Err(PathError::NotFinite);
    }
    let dims = lat.dims;
    let h = [0, 1, 2].map(|k| lat.steps_bohr[k][k] * ANGSTROM_PER_BOHR);
    let origin = lat.origin_angstrom();
    let node_of = |p: [f64; 3], what: &'static str| -> Result<usize, PathError> {
        let mut ijk = [0usize; 3];
        for k in 0..3 {
            let t = ((p[k] - origin[k]) / h[k]).round();
            if !(t >= 0.0 && t < dims[k] as f64) {
                return Err(PathError::Outside {
                    what,
                    x: p[0],
                    y: p[1],
                    z: p[2],
                });
            }
            ijk[k] = t as usize;
        }
        Ok(lat.index(ijk[0], ijk[1], ijk[2]))
    };
    let start = node_of(from_angstrom, "the start")?;
    let goal = to_angstrom.map(|p| node_of(p, "the end")).transpose()?;
    let n = lat.n_points();
    let value = |v: usize| f64::from(map.values.get(v).copied().unwrap_or(f32::INFINITY));
    let coords = |v: usize| [v % dims[0], (v / dims[0]) % dims[1], v / (dims[0] * dims[1])];
    let is_goal = |v: usize| match goal {
        Some(g) => v == g,
        None => {
            let c = coords(v);
            (0..3).any(|k| c[k] == 0 || c[k] + 1 == dims[k])
        }
    };
    let neighbours = |v: usize, out: &mut Vec<(usize, f64)>| {
        out.clear();
        let c = coords(v);
        for dz in -1i64..=1 {
            for dy in -1i64..=1 {
                for dx in -1i64..=1 {
                    if dx == 0 && dy == 0 && dz == 0 {
                        continue;
                    }
                    let q = [c[0] as i64 + dx, c[1] as i64 + dy, c[2] as i64 + dz];
                    if (0..3).any(|k| q[k] < 0 || q[k] >= dims[k] as i64) {
                        continue;
                    }
                    let step =
                        ((dx as f64 * h[0]).powi(2) + (dy as f64 * h[1]).powi(2) + (dz as f64 * h[2]).powi(2)).sqrt();
                    out.push((lat.index(q[0] as usize, q[1] as usize, q[2] as usize), step));
                }
            }
        }
    };
    // 1. The barrier: minimax Dijkstra.
    let mut best = vec![f64::INFINITY; n];
    let mut heap = BinaryHeap::new();
    let mut nb = Vec::with_capacity(26);
    best[start] = value(start);
    heap.push(Entry {
        cost: best[start],
        node: start,
    });
    let mut barrier = None;
    while let Some(Entry { cost, node }) = heap.pop() {
        if cost > best[node] {
            continue;
        }
        if is_goal(node) {
            barrier = Some(cost);
            break;
        }
        neighbours(node, &mut nb);
        for &(m, _) in &nb {
            let c = cost.max(value(m));
            if c < best[m] {
                best[m] = c;
                heap.push(Entry { cost: c, node: m });
            }
        }
    }
    let barrier = barrier.ok_or(PathError::NoPath)?;
    // 2. The shortest path through points at or below the barrier.
    let mut dist = vec![f64::INFINITY; n];
    let mut prev = vec![usize::MAX; n];
    dist[start] = 0.0;
    heap.clear();
    heap.push(Entry { cost: 0.0, node: start });
    let mut end = None;
    while let Some(Entry { cost, node }) = heap.pop() {
        if cost > dist[node] {
            continue;
        }
        if is_goal(node) {
            end = Some(node);
            break;
        }
        neighbours(node, &mut nb);
        for &(m, step) in &nb {
            if value(m) > barrier {
                continue;
            }
            let c = cost + step;
            if c < dist[m] {
                dist[m] = c;
                prev[m] = node;
                heap.push(Entry { cost: c, node: m });
            }
        }
    }
    let end = end.ok_or(PathError::NoPath)?;
    let mut nodes = vec![end];
    while let Some(&last) = nodes.last() {
        let p = prev.get(last).copied().unwrap_or(usize::MAX);
        if p == usize::MAX {
            break;
        }
        nodes.push(p);
    }
    nodes.reverse();
    let points_angstrom = nodes
        .iter()
        .map(|&v| {
            let c = coords(v);
            [0, 1, 2].map(|k| origin[k] + c[k] as f64 * h[k])
        })
        .collect();
    Ok(IlsPath {
        points_angstrom,
        values: nodes.iter().map(|&v| value(v)).collect(),
        barrier,
        length_angstrom: dist[end],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Lattice;
    use crate::model::units::BOHR_PER_ANGSTROM;

    #[test]
    fn goes_round_a_wall_through_its_gap() {
        // 9 x 9 x 1 map: a wall of 10 kT at x = 4 with a 2 kT gap at y = 8; start at (1, 1), end at (7, 1).
        let dims = [9, 9, 1];
        let lattice = Lattice::axis_aligned([0.0; 3], BOHR_PER_ANGSTROM, dims);
        let mut g = Grid3::zeros(lattice, "pmf");
        for y in 0..9 {
            let v = if y == 8 { 2.0 } else { 10.0 };
            let i = lattice.index(4, y, 0);
            g.values[i] = v;
        }
        let p = lowest_barrier_path(&g, [1.0, 1.0, 0.0], Some([7.0, 1.0, 0.0])).unwrap();
        assert_eq!(p.barrier, 2.0);
        assert!(
            p.points_angstrom
                .iter()
                .any(|q| (q[0] - 4.0).abs() < 1e-9 && (q[1] - 8.0).abs() < 1e-9)
        );
        // Shortest: 3 diagonal and 4 straight steps up to the gap, the same down.
        assert!(
            (p.length_angstrom - (6.0 * 2f64.sqrt() + 8.0)).abs() < 1e-9,
            "{}",
            p.length_angstrom
        );
        let bulk = lowest_barrier_path(&g, [1.0, 1.0, 0.0], None).unwrap();
        assert_eq!(bulk.barrier, 0.0);
        assert!(lowest_barrier_path(&g, [20.0, 1.0, 0.0], None).is_err());
    }
}
