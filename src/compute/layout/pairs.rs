//! One frame's two selections laid out for the GPU engines' RDF kernels (`kernels/rdf.cu` and
//! `shaders/rdf.wgsl` read the same layout): f32 positions wrapped into the box with the exclusion
//! group's bits, the boundary mode and the reduced box. Owns [`PairGeometry`], [`PairMode`],
//! [`RdfBox`] and [`reduce_box`]; the CUDA engine adds the kernels' CPU emulation
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
