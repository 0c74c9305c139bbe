//! `Lattice` and `Grid3`: regular 3-D lattices and scalar fields sampled on them.
//!
//! A lattice is an origin, three step vectors (not necessarily orthogonal) and point counts, all in
//! bohr. Values are stored with x fastest: `index = ix + nx * (iy + ny * iz)`, so a z-slab (the
//! tile unit of the compute engines) is one contiguous run. Writers of formats with another order
//! (cube, DX: z fastest) transpose on the way out.

use super::units::{ANGSTROM_PER_BOHR, BOHR_PER_ANGSTROM};

/// Geometry of a regular lattice, in bohr.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Lattice {
    /// Position of point (0,0,0).
    pub origin_bohr: [f64; 3],
    /// Step vectors: point (i,j,k) is `origin + i*steps[0] + j*steps[1] + k*steps[2]`.
    pub steps_bohr: [[f64; 3]; 3],
    /// Points along each axis.
    pub dims: [usize; 3],
}

impl Lattice {
    /// An axis-aligned lattice with the same spacing on every axis.
    pub fn axis_aligned(origin_bohr: [f64; 3], spacing_bohr: f64, dims: [usize; 3]) -> Lattice {
        Lattice {
            origin_bohr,
            steps_bohr: [
                [spacing_bohr, 0.0, 0.0],
                [0.0, spacing_bohr, 0.0],
                [0.0, 0.0, spacing_bohr],
            ],
            dims,
        }
    }

    /// A lattice covering a bounding box (in Angstrom) grown by `padding_angstrom` on every side,
    /// with points `spacing_angstrom` apart; the box is centred on the points.
    pub fn around_box(
        min_angstrom: [f64; 3],
        max_angstrom: [f64; 3],
        padding_angstrom: f64,
        spacing_angstrom: f64,
    ) -> Lattice {
        let mut origin = [0.0; 3];
        let mut dims = [1usize; 3];
        for k in 0..3 {
            let lo = min_angstrom[k] - padding_angstrom;
            let hi = max_angstrom[k] + padding_angstrom;
            let span = (hi - lo).max(0.0);
            // Saturating: a spacing of 1e-300 A gives an absurd count that the callers' size checks
            // refuse, not an overflow.
            let n = ((span / spacing_angstrom).ceil().max(0.0) as usize).saturating_add(1);
            let covered = (n - 1) as f64 * spacing_angstrom;
            origin[k] = (lo - 0.5 * (covered - span)) * BOHR_PER_ANGSTROM;
            dims[k] = n;
        }
        Lattice::axis_aligned(origin, spacing_angstrom * BOHR_PER_ANGSTROM, dims)
    }

    /// Number of points (saturating, so absurd dims never overflow).
    pub fn n_points(&self) -> usize {
        self.dims[0].saturating_mul(self.dims[1]).saturating_mul(self.dims[2])
    }

    /// Position of point (i, j, k) in bohr.
    #[inline]
    pub fn point_bohr(&self, i: usize, j: usize, k: usize) -> [f64; 3] {
        let (fi, fj, fk) = (i as f64, j as f64, k as f64);
        let s = &self.steps_bohr;
        [
            self.origin_bohr[0] + fi * s[0][0] + fj * s[1][0] + fk * s[2][0],
            self.origin_bohr[1] + fi * s[0][1] + fj * s[1][1] + fk * s[2][1],
            self.origin_bohr[2] + fi * s[0][2] + fj * s[1][2] + fk * s[2][2],
        ]
    }

    /// True when the step vectors are along x, y and z.
    pub fn is_axis_aligned(&self) -> bool {
        let s = &self.steps_bohr;
        s[0][1] == 0.0 && s[0][2] == 0.0 && s[1][0] == 0.0 && s[1][2] == 0.0 && s[2][0] == 0.0 && s[2][1] == 0.0
    }

    /// Linear index of point (i, j, k).
    #[inline]
    pub fn index(&self, i: usize, j: usize, k: usize) -> usize {
        i + self.dims[0] * (j + self.dims[1] * k)
    }

    /// Origin in Angstrom.
    pub fn origin_angstrom(&self) -> [f64; 3] {
        self.origin_bohr.map(|x| x * ANGSTROM_PER_BOHR)
    }
}

/// A scalar field on a lattice.
#[derive(Clone, Debug, PartialEq)]
pub struct Grid3 {
    pub lattice: Lattice,
    /// One value per lattice point, x fastest.
    pub values: Vec<f32>,
    /// What the values are ("mo:homo (bohr^-3/2)"); written into file headers.
    pub description: String,
}

impl Grid3 {
    /// A grid of zeros.
    pub fn zeros(lattice: Lattice, description: impl Into<String>) -> Grid3 {
        Grid3 {
            lattice,
            values: vec![0.0; lattice.n_points()],
            description: description.into(),
        }
    }

    /// Value at point (i, j, k); `None` outside the lattice.
    pub fn get(&self, i: usize, j: usize, k: usize) -> Option<f32> {
        let d = self.lattice.dims;
        if i < d[0] && j < d[1] && k < d[2] {
            self.values.get(self.lattice.index(i, j, k)).copied()
        } else {
            None
        }
    }

    /// Every second point along each axis (points 0, 2, 4, ... of the lattice; the last one of an
    /// axis with an even count is dropped): a quarter of the surface triangles for an interactive
    /// preview. A lattice with fewer than 3 points along an axis keeps that axis.
    pub fn every_second_point(&self) -> Grid3 {
        let d = self.lattice.dims;
        let keep = |n: usize| if n < 3 { n } else { n.div_ceil(2) };
        let stride = |n: usize| if n < 3 { 1 } else { 2 };
        let nd = d.map(keep);
        let st = d.map(stride);
        let mut values = Vec::with_capacity(nd.iter().product());
        for k in 0..nd[2] {
            for j in 0..nd[1] {
                let row = self.lattice.index(0, j * st[1], k * st[2]);
                values.extend((0..nd[0]).map(|i| self.values.get(row + i * st[0]).copied().unwrap_or(f32::NAN)));
            }
        }
        let s = self.lattice.steps_bohr;
        Grid3 {
            lattice: Lattice {
                origin_bohr: self.lattice.origin_bohr,
                steps_bohr: [0, 1, 2].map(|a| s[a].map(|x| x * st[a] as f64)),
                dims: nd,
            },
            values,
            description: self.description.clone(),
        }
    }

    /// Trilinear value at a point in Angstrom on an axis-aligned lattice; `None` for a rotated or
    /// sheared lattice, a degenerate step, or (unless `clamp`) a point outside the lattice. With
    /// `clamp` the point is first moved onto the lattice's box, as a 3-D texture read would be.
    /// Used by the viewer's value read-out and by surfaces coloured per vertex (`render::scene`).
    pub fn trilinear_at_angstrom(&self, p_angstrom: [f32; 3], clamp: bool) -> Option<f32> {
        let l = &self.lattice;
        if !l.is_axis_aligned() {
            return None;
        }
        let p = super::units::bohr_from_angstrom3(p_angstrom.map(f64::from));
        let mut lo = [0usize; 3];
        let mut hi = [0usize; 3];
        let mut frac = [0f32; 3];
        for k in 0..3 {
            let step = l.steps_bohr[k][k];
            let n = l.dims[k];
            if step == 0.0 || n == 0 || (!clamp && n < 2) {
                return None;
            }
            let top = (n - 1) as f64;
            let mut x = (p[k] - l.origin_bohr[k]) / step;
            if clamp {
                x = x.clamp(0.0, top);
            } else if !(0.0..=top).contains(&x) {
                return None;
            }
            let i = (x.floor() as usize).min(n.saturating_sub(2));
            lo[k] = i;
            hi[k] = (i + 1).min(n - 1);
            frac[k] = (x - i as f64) as f32;
        }
        let mut v = 0.0;
        for c in 0..8usize {
            let (di, dj, dk) = (c & 1 == 1, (c >> 1) & 1 == 1, (c >> 2) & 1 == 1);
            let w = (if di { frac[0] } else { 1.0 - frac[0] })
                * (if dj { frac[1] } else { 1.0 - frac[1] })
                * (if dk { frac[2] } else { 1.0 - frac[2] });
            let pick = |on: bool, k: usize| if on { hi[k] } else { lo[k] };
            v += w * self.get(pick(di, 0), pick(dj, 1), pick(dk, 2))?;
        }
        Some(v)
    }

    /// Smallest and largest finite value, or `None` when there is none.
    pub fn min_max(&self) -> Option<(f32, f32)> {
        self.values
            .iter()
            .filter(|v| v.is_finite())
            .fold(None, |acc, &v| match acc {
                None => Some((v, v)),
                Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A linear field is reproduced exactly inside the lattice; outside, the clamped sample is the
    /// value at the nearest point of the lattice's box and the unclamped one is `None`.
    #[test]
    fn trilinear_sample_of_a_linear_field_with_and_without_clamping() {
        let lattice = Lattice::axis_aligned([-1.0, 0.0, 2.0], 0.5, [5, 4, 3]);
        let f = |p: [f64; 3]| (2.0 * p[0] - p[1] + 0.5 * p[2]) as f32;
        let mut g = Grid3::zeros(lattice, "linear");
        for k in 0..3 {
            for j in 0..4 {
                for i in 0..5 {
                    g.values[lattice.index(i, j, k)] = f(lattice.point_bohr(i, j, k));
                }
            }
        }
        let to_angstrom = |p: [f64; 3]| crate::model::units::angstrom_from_bohr3(p).map(|x| x as f32);
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(7, |d| d.subsec_nanos());
        for n in 0..20u32 {
            // Strictly inside the box: a point on its face may round outwards on the way
            // through single-precision Ångström, and the unclamped sample is then `None`.
            let r = |k: u32| {
                let u = (seed.wrapping_mul(2_654_435_761).wrapping_add(n * 97 + k * 31) % 1000) as f64 / 1000.0;
                0.01 + 0.98 * u
            };
            let p = [-1.0 + 2.0 * r(0), 1.5 * r(1), 2.0 + r(2)];
            for clamp in [false, true] {
                let v = g.trilinear_at_angstrom(to_angstrom(p), clamp).unwrap();
                assert!((v - f(p)).abs() < 1e-4, "{p:?}: {v} vs {}", f(p));
            }
        }
        let outside = [-3.0, 5.0, 2.5];
        assert_eq!(g.trilinear_at_angstrom(to_angstrom(outside), false), None);
        let v = g.trilinear_at_angstrom(to_angstrom(outside), true).unwrap();
        let nearest = f([-1.0, 1.5, 2.5]);
        assert!((v - nearest).abs() < 1e-4, "{v} vs {nearest}");
    }

    #[test]
    fn every_second_point_keeps_the_points_and_their_positions() {
        let lattice = Lattice {
            origin_bohr: [0.5, -1.0, 2.0],
            steps_bohr: [[0.3, 0.0, 0.0], [0.1, 0.25, 0.0], [0.0, 0.05, 0.2]],
            dims: [7, 6, 2],
        };
        // A field that names its point: value = i + 10 j + 100 k.
        let mut g = Grid3::zeros(lattice, "probe");
        for k in 0..2 {
            for j in 0..6 {
                for i in 0..7 {
                    let at = lattice.index(i, j, k);
                    g.values[at] = (i + 10 * j + 100 * k) as f32;
                }
            }
        }
        let c = g.every_second_point();
        assert_eq!(c.lattice.dims, [4, 3, 2]);
        assert_eq!(c.values.len(), 24);
        for k in 0..2 {
            for j in 0..3 {
                for i in 0..4 {
                    let (fi, fj, fk) = (2 * i, 2 * j, k);
                    assert_eq!(c.get(i, j, k), Some((fi + 10 * fj + 100 * fk) as f32));
                    let (a, b) = (c.lattice.point_bohr(i, j, k), lattice.point_bohr(fi, fj, fk));
                    for x in 0..3 {
                        assert!((a[x] - b[x]).abs() < 1e-12, "{a:?} vs {b:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn around_box_covers_padding() {
        let l = Lattice::around_box([0.0; 3], [1.0, 2.0, 3.0], 3.0, 0.2);
        let o = l.origin_angstrom();
        assert!(o.iter().all(|&x| x <= -3.0 + 1e-9), "{o:?}");
        let far = l
            .point_bohr(l.dims[0] - 1, l.dims[1] - 1, l.dims[2] - 1)
            .map(|x| x * ANGSTROM_PER_BOHR);
        assert!(far[0] >= 4.0 - 1e-9 && far[1] >= 5.0 - 1e-9 && far[2] >= 6.0 - 1e-9);
        assert_eq!(l.index(1, 0, 0), 1);
        assert_eq!(l.index(0, 0, 1), l.dims[0] * l.dims[1]);
    }
}
