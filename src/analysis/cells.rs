//! Atoms binned into cubic cells with open boundaries: every atom within one cell width of a point
//! lies in the 27 cells around the point's cell. Shared by the analyses that ask which atoms are
//! near a point (ion placement's exclusion test, the SASA's neighbours).

/// Atoms sorted into cubes at least as wide as asked (wider when the atoms spread far, so that
/// there are never many more cells than atoms).
pub(crate) struct CellList {
    origin: [f64; 3],
    width: f64,
    dims: [usize; 3],
    /// Atom indices sorted by cell; `starts[c]..starts[c + 1]` are the atoms of cell `c`.
    atoms: Vec<usize>,
    starts: Vec<usize>,
}

impl CellList {
    /// The atoms at `positions` for which `include` holds and whose coordinates are finite, in
    /// cubes at least `min_width` wide (same unit as the positions).
    pub(crate) fn new(positions: &[[f64; 3]], include: impl Fn(usize) -> bool, min_width: f64) -> CellList {
        let binned: Vec<usize> = (0..positions.len())
            .filter(|&i| include(i) && positions[i].iter().all(|x| x.is_finite()))
            .collect();
        let mut lo = [f64::INFINITY; 3];
        let mut hi = [f64::NEG_INFINITY; 3];
        for &i in &binned {
            for k in 0..3 {
                lo[k] = lo[k].min(positions[i][k]);
                hi[k] = hi[k].max(positions[i][k]);
            }
        }
        if binned.is_empty() {
            lo = [0.0; 3];
            hi = [0.0; 3];
        }
        // Grow the cells until there are at most a few per atom (and never an absurd number).
        let limit = (8 * binned.len()).max(1 << 12) as f64;
        let mut width = if min_width.is_finite() {
            min_width.max(1e-6)
        } else {
            1e-6
        };
        let count =
            |w: f64| -> [usize; 3] { [0, 1, 2].map(|k| (((hi[k] - lo[k]) / w).floor() as usize).saturating_add(1)) };
        loop {
            let d = count(width);
            if (d[0] as f64) * (d[1] as f64) * (d[2] as f64) <= limit {
                break;
            }
            width *= 1.5;
        }
        let dims = count(width);
        let n_cells = dims[0] * dims[1] * dims[2];
        let cell_of = |p: &[f64; 3]| -> usize {
            let c = [0, 1, 2].map(|k| (((p[k] - lo[k]) / width).floor().max(0.0) as usize).min(dims[k] - 1));
            c[0] + dims[0] * (c[1] + dims[1] * c[2])
        };
        let cells: Vec<usize> = binned.iter().map(|&i| cell_of(&positions[i])).collect();
        let mut starts = vec![0usize; n_cells + 1];
        for &c in &cells {
            starts[c + 1] += 1;
        }
        for c in 0..n_cells {
            starts[c + 1] += starts[c];
        }
        let mut fill = starts.clone();
        let mut atoms = vec![0usize; binned.len()];
        for (&i, &c) in binned.iter().zip(&cells) {
            atoms[fill[c]] = i;
            fill[c] += 1;
        }
        CellList {
            origin: lo,
            width,
            dims,
            atoms,
            starts,
        }
    }

    /// The binned atoms in the 27 cells around `p` (none when `p` lies more than a cell outside
    /// the binned box): every atom within one cell width of `p`, and some farther.
    pub(crate) fn near(&self, p: [f64; 3]) -> impl Iterator<Item = usize> + '_ {
        let mut range = Some([(0usize, 0usize); 3]);
        for k in 0..3 {
            let c = ((p[k] - self.origin[k]) / self.width).floor();
            if !(c >= -1.0 && c <= self.dims[k] as f64) {
                range = None;
                break;
            }
            let c = c as i64;
            if let Some(r) = range.as_mut() {
                r[k] = (
                    (c - 1).max(0) as usize,
                    ((c + 1).min(self.dims[k] as i64 - 1)).max(0) as usize,
                );
            }
        }
        range.into_iter().flat_map(move |r| {
            (r[2].0..=r[2].1).flat_map(move |z| {
                (r[1].0..=r[1].1).flat_map(move |y| {
                    (r[0].0..=r[0].1).flat_map(move |x| {
                        let c = x + self.dims[0] * (y + self.dims[1] * z);
                        self.atoms[self.starts[c]..self.starts[c + 1]].iter().copied()
                    })
                })
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::test_rng::Rng;

    #[test]
    fn the_cells_around_a_point_hold_every_atom_within_a_cell_width() {
        let mut rng = Rng::fresh();
        let positions: Vec<[f64; 3]> = (0..500)
            .map(|_| [rng.next() * 30.0, rng.next() * 20.0 - 10.0, rng.next() * 5.0])
            .collect();
        let width = 0.5 + 3.0 * rng.next();
        let cells = CellList::new(&positions, |i| i % 7 != 0, width);
        for _ in 0..200 {
            let p = [
                rng.next() * 40.0 - 5.0,
                rng.next() * 30.0 - 15.0,
                rng.next() * 10.0 - 2.5,
            ];
            let mut near: Vec<usize> = cells.near(p).collect();
            near.sort_unstable();
            for (i, q) in positions.iter().enumerate() {
                let d = (0..3).map(|k| (q[k] - p[k]).powi(2)).sum::<f64>().sqrt();
                if i % 7 != 0 && d < width {
                    assert!(near.binary_search(&i).is_ok(), "atom {i} at {d} of {p:?} missing");
                }
            }
            assert!(near.iter().all(|i| i % 7 != 0));
        }
    }

    #[test]
    fn far_flung_and_missing_positions_neither_hang_nor_are_binned() {
        let positions = [
            [0.0; 3],
            [1e300, 0.0, 0.0],
            [f64::NAN, 0.0, 0.0],
            [f64::INFINITY, 0.0, 0.0],
        ];
        let cells = CellList::new(&positions, |_| true, 3.0);
        let near: Vec<usize> = cells.near([0.5, 0.0, 0.0]).collect();
        assert_eq!(near, [0]);
        assert_eq!(cells.near([f64::NAN, 0.0, 0.0]).count(), 0);
    }
}
