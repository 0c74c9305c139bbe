//! One frame's two selections laid out for the GPU engines' RDF kernels (`kernels/rdf.cu` and
//! `shaders/rdf.wgsl` read the same layout): f32 positions wrapped into the box with the exclusion
//! group's bits, the boundary mode and the reduced box. Owns [`PairGeometry`], [`PairMode`],
//! [`RdfBox`] and [`reduce_box`], and the cell-list choices both engines make: [`RdfMethod`],
//! [`CELLS_MIN`] and the cell grid [`CellPlan`]. The CUDA engine adds the kernels' CPU emulation
//! (`compute::cuda::rdf`).

use crate::model::{Frame, UnitCell};

/// The box of `kernels/rdf.cu` (`struct RdfBox`, same field order): rows of the reduced lower-triangular
/// box matrix and the inverses of its diagonal, Angstrom.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RdfBox {
    pub ax: f32,
    pub bx: f32,
    pub by: f32,
    pub cx: f32,
    pub cy: f32,
    pub cz: f32,
    pub inv_ax: f32,
    pub inv_by: f32,
    pub inv_cz: f32,
}

/// Boundary handling of the kernel (`RDF_MODE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PairMode {
    Open = 0,
    Orthorhombic = 1,
    Triclinic = 2,
}

/// One frame's selections in the kernel's layout.
#[derive(Clone, Debug, PartialEq)]
pub struct PairGeometry {
    /// x, y, z (Angstrom) and the group id's bit pattern in w.
    pub a: Vec<[f32; 4]>,
    pub b: Vec<[f32; 4]>,
    pub mode: PairMode,
    pub cell: RdfBox,
    pub groups: bool,
}

impl PairGeometry {
    /// Lays out `sel1` (set A) and `sel2` (set B) of `frame`. `cell` is the frame's checked box
    /// (`RdfAccumulator::check_frame`); `groups` are the exclusion ids when exclusions are on.
    pub fn new(frame: &Frame, cell: Option<UnitCell>, sel1: &[u32], sel2: &[u32], groups: Option<&[u32]>) -> Self {
        let pos = &frame.positions_angstrom;
        let (mode, m) = match cell {
            None => (PairMode::Open, [[0.0f64; 3]; 3]),
            Some(c) if c.is_orthorhombic() => (PairMode::Orthorhombic, c.matrix_angstrom()),
            Some(c) => (PairMode::Triclinic, reduce_box(c.matrix_angstrom())),
        };
        let wrap = |p: [f32; 3]| -> [f64; 3] {
            let r = p.map(f64::from);
            if mode == PairMode::Open {
                return r;
            }
            // Fractional coordinates in the lower-triangular box, wrapped into [0, 1).
            let sc = r[2] / m[2][2];
            let sb = (r[1] - sc * m[2][1]) / m[1][1];
            let sa = (r[0] - sb * m[1][0] - sc * m[2][0]) / m[0][0];
            let [sa, sb, sc] = [sa, sb, sc].map(|x| x - x.floor());
            [
                sa * m[0][0] + sb * m[1][0] + sc * m[2][0],
                sb * m[1][1] + sc * m[2][1],
                sc * m[2][2],
            ]
        };
        let layout = |sel: &[u32]| -> Vec<[f32; 4]> {
            sel.iter()
                .map(|&i| {
                    let p = pos.get(i as usize).copied().unwrap_or([0.0; 3]);
                    let w = wrap(p);
                    let g = groups.and_then(|g| g.get(i as usize)).copied().unwrap_or(0);
                    [w[0] as f32, w[1] as f32, w[2] as f32, f32::from_bits(g)]
                })
                .collect()
        };
        let cell = RdfBox {
            ax: m[0][0] as f32,
            bx: m[1][0] as f32,
            by: m[1][1] as f32,
            cx: m[2][0] as f32,
            cy: m[2][1] as f32,
            cz: m[2][2] as f32,
            inv_ax: if m[0][0] > 0.0 { (1.0 / m[0][0]) as f32 } else { 0.0 },
            inv_by: if m[1][1] > 0.0 { (1.0 / m[1][1]) as f32 } else { 0.0 },
            inv_cz: if m[2][2] > 0.0 { (1.0 / m[2][2]) as f32 } else { 0.0 },
        };
        PairGeometry {
            a: layout(sel1),
            b: layout(sel2),
            mode,
            cell,
            groups: groups.is_some(),
        }
    }
}

/// Reduces a lower-triangular box (rows a, b, c; a along x, b in the xy plane) to the same lattice with
/// |b_x| <= a_x/2, |c_y| <= b_y/2 and |c_x| <= a_x/2, the form in which rounding along c, then b, then a
/// finds the minimum image of any vector shorter than half the smallest box width.
pub fn reduce_box(m: [[f64; 3]; 3]) -> [[f64; 3]; 3] {
    let [a, mut b, mut c] = m;
    let sub = |u: &mut [f64; 3], v: [f64; 3], k: f64| {
        for i in 0..3 {
            u[i] -= k * v[i];
        }
    };
    if b[1] > 0.0 {
        let k = (c[1] / b[1]).round();
        sub(&mut c, b, k);
    }
    if a[0] > 0.0 {
        let k = (c[0] / a[0]).round();
        sub(&mut c, a, k);
        let k = (b[0] / a[0]).round();
        sub(&mut b, a, k);
    }
    [a, b, c]
}

/// How the pairs of a frame are enumerated on the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RdfMethod {
    /// The cell list where it applies and pays off (at least [`CELLS_MIN`] cells), else all pairs.
    Auto,
    AllPairs,
    /// The cell list where it applies (open or orthorhombic boxes with at least 3 cells per periodic
    /// side), else all pairs.
    Cells,
}

/// Text that does not name an RDF method.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is not an RDF method (auto, all-pairs or cells)")]
pub struct BadRdfMethod(pub String);

impl std::str::FromStr for RdfMethod {
    type Err = BadRdfMethod;
    fn from_str(s: &str) -> Result<RdfMethod, BadRdfMethod> {
        match s.trim() {
            "auto" => Ok(RdfMethod::Auto),
            "all-pairs" => Ok(RdfMethod::AllPairs),
            "cells" => Ok(RdfMethod::Cells),
            _ => Err(BadRdfMethod(s.to_string())),
        }
    }
}

impl std::fmt::Display for RdfMethod {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RdfMethod::Auto => "auto",
            RdfMethod::AllPairs => "all-pairs",
            RdfMethod::Cells => "cells",
        })
    }
}

/// Fewest cells for which `RdfMethod::Auto` takes the cell list (a cell's 27 neighbours then cover at
/// most 42% of the box).
pub const CELLS_MIN: usize = 64;
/// Most cells of a grid; larger grids get wider cells.
const CELLS_MAX: usize = 1 << 21;

/// The cell grid of the cell-list kernel (`struct RdfCells` in `kernels/rdf.cu`, same field order):
/// cells per axis, whether the grid wraps (orthorhombic box), and the f32 origin and inverse cell
/// width per axis. A position's cell along an axis is `min(max((int)((p - lo) * inv_w), 0), n - 1)`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CellPlan {
    pub nx: i32,
    pub ny: i32,
    pub nz: i32,
    pub periodic: i32,
    pub lo_x: f32,
    pub lo_y: f32,
    pub lo_z: f32,
    pub inv_wx: f32,
    pub inv_wy: f32,
    pub inv_wz: f32,
}

impl CellPlan {
    /// The grid for `geom` at `r_max`, or None where the cell list does not apply: triclinic boxes,
    /// and periodic boxes with fewer than 3 cells along a side (the 27 neighbours would repeat).
    /// Cells are wider than r_max by 1e-4 relative plus 2^-17 of the coordinates' extent, far above
    /// the f32 rounding of cell indices and distances, so every pair within r_max lies in neighbouring
    /// cells.
    pub fn new(geom: &PairGeometry, r_max: f64) -> Option<CellPlan> {
        if !(r_max.is_finite() && r_max > 0.0) || geom.a.is_empty() || geom.b.is_empty() {
            return None;
        }
        let all = || geom.a.iter().chain(&geom.b);
        match geom.mode {
            PairMode::Triclinic => None,
            PairMode::Orthorhombic => {
                let c = &geom.cell;
                let len = [c.ax, c.by, c.cz].map(f64::from);
                let extent = len.iter().copied().fold(0.0, f64::max);
                let mut w = r_max * (1.0 + 1e-4) + extent * 2f64.powi(-17);
                let mut dims = len.map(|l| (l / w).floor());
                while dims.iter().product::<f64>() > CELLS_MAX as f64 {
                    w *= 1.25;
                    dims = len.map(|l| (l / w).floor());
                }
                if dims.iter().any(|&d| d < 3.0) {
                    return None;
                }
                Some(CellPlan {
                    nx: dims[0] as i32,
                    ny: dims[1] as i32,
                    nz: dims[2] as i32,
                    periodic: 1,
                    lo_x: 0.0,
                    lo_y: 0.0,
                    lo_z: 0.0,
                    inv_wx: (dims[0] / len[0]) as f32,
                    inv_wy: (dims[1] / len[1]) as f32,
                    inv_wz: (dims[2] / len[2]) as f32,
                })
            }
            PairMode::Open => {
                let mut lo = [f32::INFINITY; 3];
                let mut hi = [f32::NEG_INFINITY; 3];
                for p in all() {
                    for k in 0..3 {
                        lo[k] = lo[k].min(p[k]);
                        hi[k] = hi[k].max(p[k]);
                    }
                }
                CellPlan::open(lo, hi, r_max)
            }
        }
    }

    /// The grid of cells at least `r_max` wide over the box `lo..=hi` (open boundaries), as
    /// [`CellPlan::new`] makes it; None where the box is not finite.
    pub fn open(lo: [f32; 3], hi: [f32; 3], r_max: f64) -> Option<CellPlan> {
        let big = lo.iter().chain(&hi).fold(0.0f64, |b, &x| b.max(f64::from(x.abs())));
        let span = [0, 1, 2].map(|k| f64::from(hi[k]) - f64::from(lo[k]));
        let usable = span.iter().all(|s| s.is_finite() && *s >= 0.0) && r_max.is_finite() && r_max > 0.0;
        if !usable {
            return None;
        }
        let extent = span.iter().copied().fold(big, f64::max);
        let mut w = r_max * (1.0 + 1e-4) + extent * 2f64.powi(-17);
        let mut dims = span.map(|s| (s / w).floor() + 1.0);
        while dims.iter().product::<f64>() > CELLS_MAX as f64 {
            w *= 1.25;
            dims = span.map(|s| (s / w).floor() + 1.0);
        }
        let inv_w = (1.0 / w) as f32;
        Some(CellPlan {
            nx: dims[0] as i32,
            ny: dims[1] as i32,
            nz: dims[2] as i32,
            periodic: 0,
            lo_x: lo[0],
            lo_y: lo[1],
            lo_z: lo[2],
            inv_wx: inv_w,
            inv_wy: inv_w,
            inv_wz: inv_w,
        })
    }

    /// Number of cells.
    pub fn cells(&self) -> usize {
        self.nx.max(0) as usize * self.ny.max(0) as usize * self.nz.max(0) as usize
    }

    /// The cell of a position (`rdf_cell_of` in the kernel, same f32 operations).
    pub fn cell_of(&self, p: &[f32; 4]) -> usize {
        let axis = |x: f32, lo: f32, inv: f32, n: i32| (((x - lo) * inv) as i32).clamp(0, n - 1) as usize;
        let cx = axis(p[0], self.lo_x, self.inv_wx, self.nx);
        let cy = axis(p[1], self.lo_y, self.inv_wy, self.ny);
        let cz = axis(p[2], self.lo_z, self.inv_wz, self.nz);
        cx + self.nx as usize * (cy + self.ny as usize * cz)
    }

    /// Neighbour `s` (0..27, offset (s % 3 - 1, s / 3 % 3 - 1, s / 9 - 1); 13 is the cell itself) of
    /// cell `c`, wrapped on periodic grids, None outside an open grid.
    pub fn neighbour(&self, c: usize, s: usize) -> Option<usize> {
        let n = [self.nx as i64, self.ny as i64, self.nz as i64];
        let c = c as i64;
        let pos = [c % n[0], (c / n[0]) % n[1], c / (n[0] * n[1])];
        let off = [(s % 3) as i64 - 1, (s / 3 % 3) as i64 - 1, (s / 9) as i64 - 1];
        let mut q = [0i64; 3];
        for k in 0..3 {
            let v = pos[k] + off[k];
            q[k] = if self.periodic != 0 {
                v.rem_euclid(n[k])
            } else if (0..n[k]).contains(&v) {
                v
            } else {
                return None;
            };
        }
        Some((q[0] + n[0] * (q[1] + n[1] * q[2])) as usize)
    }
}
