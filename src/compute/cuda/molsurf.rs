//! The molecular-surface density on a CUDA device: `kernels/molsurf.cu`, with the atoms binned into
//! lattice cells on the device by the counting sort of `kernels/rdf.cu`.
//!
//! Owns [`MolSurfPlan`] (the host half, independent of CUDA: one [`MsAtom`] record per contributing
//! atom, its position in lattice-index units for the binning, the cell grid) with [`MolSurfPlan::emulate`],
//! the kernel's f32 arithmetic and cell visits on the CPU, which a test of `compute::molsurf` holds
//! to the CPU engine on the binning's edge cases (atoms on cell borders, atoms outside the lattice); and
//! [`MolSurfPrepared`] (the records and the sorted cells on the device, built once per job) with the
//! slab launch. Called by [`CudaEngine`]'s slab path for [`crate::compute::Field::MolSurf`].
//!
//! Only axis-aligned lattices are taken (others are refused as wrong input, and the pool's CPU
//! workers compute them). Atoms farther than their truncation radius from the lattice are dropped on
//! the host; the rest sit in the cell of their position, clamped to the border cells.

use super::dev_err;
use super::engine::{CudaEngine, EngineState};
use super::rdf::{CellPlan, RDF_SRC};
use crate::compute::molsurf::MolSurfAtoms;
use crate::compute::{ComputeError, Field, FieldJob};
use crate::model::Lattice;
use cudarc::driver::{CudaModule, CudaSlice, PushKernelArg};
use std::ops::Range;
use std::sync::Arc;

/// `kernels/molsurf.cu`, embedded at build time.
pub const MOLSURF_SRC: &str = include_str!("../../../kernels/molsurf.cu");

/// Threads of a block (`MS_BX`, `MS_BY`, `MS_BZ` in `kernels/molsurf.cu`).
const BLOCK: (u32, u32, u32) = (8, 8, 4);
/// Points per thread along z (`MS_PZ`).
const POINTS_Z: u32 = 2;
/// The reach exceeds the largest truncation radius by at least this many lattice points: far above
/// the f32 rounding of positions in lattice-index units (below 0.01 points up to [`MAX_DIM`]).
const CELL_MARGIN_POINTS: f64 = 0.05;
/// Most lattice points along one axis (keeps the f32 binning within its margin).
const MAX_DIM: usize = 1 << 16;
/// Most cells of a grid (the scan is one block); finer grids get wider cells.
const CELLS_MAX: usize = 1 << 22;

/// One atom of the kernel. Twin of `struct MsAtom` in `kernels/molsurf.cu` (10 four-byte fields).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MsAtom {
    /// Nearest lattice point.
    pub ix: i32,
    pub iy: i32,
    pub iz: i32,
    /// Centre minus that point (bohr).
    pub ox: f32,
    pub oy: f32,
    pub oz: f32,
    /// Gaussian exponent times log2(e) (bohr^-2) and log2 of the amplitude: the term is
    /// `2^(lamp - expo2 * r^2)`.
    pub expo2: f32,
    pub lamp: f32,
    /// Truncation radius squared (bohr^2).
    pub rc2: f32,
    pub pad: i32,
}

// SAFETY: `#[repr(C)]` plain ints and floats, the layout of `MsAtom` in kernels/molsurf.cu.
unsafe impl cudarc::driver::DeviceRepr for MsAtom {}

/// Lattice, slab and cells of one launch. Twin of `struct MsGrid` in `kernels/molsurf.cu` (16
/// four-byte fields).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MsGrid {
    pub nx: i32,
    pub ny: i32,
    pub k0: i32,
    pub nzs: i32,
    pub hx: f32,
    pub hy: f32,
    pub hz: f32,
    pub cwx: i32,
    pub cwy: i32,
    pub cwz: i32,
    pub cnx: i32,
    pub cny: i32,
    pub cnz: i32,
    /// Reach in lattice points per axis (more than the largest truncation radius).
    pub rx: i32,
    pub ry: i32,
    pub rz: i32,
}

// SAFETY: `#[repr(C)]` plain ints and floats, the layout of `MsGrid` in kernels/molsurf.cu.
unsafe impl cudarc::driver::DeviceRepr for MsGrid {}

/// The host half of a molecular-surface job on the device.
#[derive(Clone, Debug)]
pub struct MolSurfPlan {
    /// The contributing atoms, in input order.
    pub atoms: Vec<MsAtom>,
    /// Each atom's position in lattice-index units, `w` its index in `atoms` as an int bit pattern
    /// (the float4 the cell sort of `kernels/rdf.cu` moves).
    pub positions: Vec<[f32; 4]>,
    /// The cell grid (in lattice-index units: origin 0, inverse width `1 / cell_width`).
    pub cells: CellPlan,
    /// Cell width in lattice points per axis.
    pub cell_width: [i32; 3],
    /// Lattice points per axis beyond which no atom reaches (more than the largest truncation
    /// radius, with a margin).
    pub reach: [i32; 3],
    pub steps_bohr: [f32; 3],
    pub dims: [usize; 3],
}

impl MolSurfPlan {
    /// The plan for `input` on `lattice`; wrong input for a lattice that is not axis-aligned with
    /// positive steps or has more than 65536 points along an axis.
    pub fn new(input: &MolSurfAtoms, lattice: &Lattice) -> Result<MolSurfPlan, ComputeError> {
        let s = &lattice.steps_bohr;
        let h = [s[0][0], s[1][1], s[2][2]];
        if !lattice.is_axis_aligned()
            || !h.iter().all(|x| x.is_finite() && *x > 0.0)
            || lattice.dims.iter().any(|&n| n > MAX_DIM)
        {
            return Err(ComputeError::WrongInput(
                Field::MolSurf,
                "an axis-aligned lattice of at most 65536 points per axis",
            ));
        }
        let o = lattice.origin_bohr;
        let dims = lattice.dims;
        let gaussians = input.gaussians();
        let max_cut = gaussians.iter().map(|g| g.cutoff_bohr).fold(0.0, f64::max);
        let reach = [0, 1, 2].map(|a| ((max_cut / h[a] + CELL_MARGIN_POINTS).floor() + 1.0).min(1e6) as usize);
        // Cells of half the reach: a brick's cells then hold little beyond its reach.
        let mut cw = reach.map(|r| r.div_ceil(2).max(1));
        let count = |cw: &[usize; 3]| [0, 1, 2].map(|a| dims[a].div_ceil(cw[a]).max(1));
        while count(&cw).iter().product::<usize>() > CELLS_MAX {
            cw = cw.map(|w| w * 2);
        }
        let cn = count(&cw);
        let mut atoms = Vec::with_capacity(gaussians.len());
        let mut positions = Vec::with_capacity(gaussians.len());
        for g in &gaussians {
            let mut rec = MsAtom {
                expo2: (g.exponent_per_bohr2 * std::f64::consts::LOG2_E) as f32,
                lamp: g.amplitude.log2() as f32,
                rc2: (g.cutoff_bohr * g.cutoff_bohr) as f32,
                ..MsAtom::default()
            };
            let mut pos = [0.0f32; 4];
            let mut inside = true;
            for a in 0..3 {
                let rel = g.center_bohr[a] - o[a];
                let x = rel / h[a];
                let reach = g.cutoff_bohr / h[a] + 1.0;
                if !(x >= -reach && x <= (dims[a] as f64 - 1.0) + reach) {
                    inside = false;
                    break;
                }
                let nearest = x.round();
                let off = (rel - nearest * h[a]) as f32;
                match a {
                    0 => (rec.ix, rec.ox) = (nearest as i32, off),
                    1 => (rec.iy, rec.oy) = (nearest as i32, off),
                    _ => (rec.iz, rec.oz) = (nearest as i32, off),
                }
                pos[a] = x as f32;
            }
            if !inside || atoms.len() >= i32::MAX as usize / 2 {
                continue;
            }
            pos[3] = f32::from_bits(atoms.len() as u32);
            atoms.push(rec);
            positions.push(pos);
        }
        let cells = CellPlan {
            nx: cn[0] as i32,
            ny: cn[1] as i32,
            nz: cn[2] as i32,
            periodic: 0,
            lo_x: 0.0,
            lo_y: 0.0,
            lo_z: 0.0,
            inv_wx: (1.0 / cw[0] as f64) as f32,
            inv_wy: (1.0 / cw[1] as f64) as f32,
            inv_wz: (1.0 / cw[2] as f64) as f32,
        };
        Ok(MolSurfPlan {
            atoms,
            positions,
            cells,
            cell_width: cw.map(|w| w as i32),
            reach: reach.map(|r| r as i32),
            steps_bohr: h.map(|x| x as f32),
            dims,
        })
    }

    /// The launch parameters of slab `z_range`.
    pub fn grid(&self, z_range: &Range<usize>) -> MsGrid {
        MsGrid {
            nx: self.dims[0] as i32,
            ny: self.dims[1] as i32,
            k0: z_range.start as i32,
            nzs: z_range.len() as i32,
            hx: self.steps_bohr[0],
            hy: self.steps_bohr[1],
            hz: self.steps_bohr[2],
            cwx: self.cell_width[0],
            cwy: self.cell_width[1],
            cwz: self.cell_width[2],
            cnx: self.cells.nx,
            cny: self.cells.ny,
            cnz: self.cells.nz,
            rx: self.reach[0],
            ry: self.reach[1],
            rz: self.reach[2],
        }
    }

    /// The atoms in cell order (a stable counting sort by [`CellPlan::cell_of`], as the device's
    /// sort up to the order within a cell) and the start of each cell (cells + 1 entries).
    pub fn sorted(&self) -> (Vec<usize>, Vec<usize>) {
        let n = self.cells.cells();
        let mut start = vec![0usize; n + 1];
        let cell: Vec<usize> = self.positions.iter().map(|p| self.cells.cell_of(p)).collect();
        for &c in &cell {
            if let Some(s) = start.get_mut(c + 1) {
                *s += 1;
            }
        }
        for c in 0..n {
            start[c + 1] += start[c];
        }
        let mut fill = start.clone();
        let mut order = vec![0usize; cell.len()];
        for (a, &c) in cell.iter().enumerate() {
            if let Some(f) = fill.get_mut(c) {
                if let Some(o) = order.get_mut(*f) {
                    *o = a;
                }
                *f += 1;
            }
        }
        (order, start)
    }

    /// The kernel on the CPU: the same cells visited per block, the same f32 arithmetic (the
    /// summation order within a cell may differ from the device's), for slab `z_range`.
    pub fn emulate(&self, z_range: &Range<usize>) -> Vec<f32> {
        let g = self.grid(z_range);
        let (order, start) = self.sorted();
        let (bx, by, bz) = (BLOCK.0 as i32, BLOCK.1 as i32, (BLOCK.2 * POINTS_Z) as i32);
        let mut out = vec![0.0f32; self.dims[0] * self.dims[1] * z_range.len()];
        for kz in 0..g.nzs {
            for j in 0..g.ny {
                for i in 0..g.nx {
                    let (bi0, bj0, bkz0) = (i / bx * bx, j / by * by, kz / bz * bz);
                    let (bi1, bj1) = ((bi0 + bx).min(g.nx) - 1, (bj0 + by).min(g.ny) - 1);
                    let (bk0, bk1) = (g.k0 + bkz0, g.k0 + (bkz0 + bz).min(g.nzs) - 1);
                    let range =
                        |lo: i32, hi: i32, r: i32, w: i32, n: i32| ((lo - r).max(0) / w, ((hi + r) / w).min(n - 1));
                    let (cx0, cx1) = range(bi0, bi1, g.rx, g.cwx, g.cnx);
                    let (cy0, cy1) = range(bj0, bj1, g.ry, g.cwy, g.cny);
                    let (cz0, cz1) = range(bk0, bk1, g.rz, g.cwz, g.cnz);
                    let k = g.k0 + kz;
                    let mut acc = 0.0f32;
                    for cz in cz0..=cz1 {
                        for cy in cy0..=cy1 {
                            let row = (g.cnx * (cy + g.cny * cz)) as usize;
                            let s0 = start.get(row + cx0 as usize).copied().unwrap_or(0);
                            let s1 = start.get(row + cx1 as usize + 1).copied().unwrap_or(0);
                            for &a in order.get(s0..s1).unwrap_or(&[]) {
                                let Some(at) = self.atoms.get(a) else { continue };
                                let dx = (i - at.ix) as f32 * g.hx - at.ox;
                                let dy = (j - at.iy) as f32 * g.hy - at.oy;
                                let dz = (k - at.iz) as f32 * g.hz - at.oz;
                                let r2 = dx * dx + dy * dy + dz * dz;
                                if r2 <= at.rc2 {
                                    acc += (-at.expo2).mul_add(r2, at.lamp).exp2();
                                }
                            }
                        }
                    }
                    if let Some(o) = out.get_mut((i + g.nx * (j + g.ny * kz)) as usize) {
                        *o = acc;
                    }
                }
            }
        }
        out
    }
}

/// A molecular-surface job on the device: the plan, the atom records and the sorted cells.
pub struct MolSurfPrepared {
    plan: MolSurfPlan,
    module: Arc<CudaModule>,
    atoms: CudaSlice<MsAtom>,
    sorted: CudaSlice<f32>,
    starts: CudaSlice<u32>,
}

impl CudaEngine {
    /// Uploads the atoms of `input` and sorts them into the cells of `lattice` on the device.
    pub(super) fn prepare_molsurf(
        &self,
        st: &mut EngineState,
        input: &MolSurfAtoms,
        lattice: &Lattice,
    ) -> Result<MolSurfPrepared, ComputeError> {
        let plan = MolSurfPlan::new(input, lattice)?;
        let module = self.module(st, MOLSURF_SRC)?;
        let rdf_module = self.module(
            st,
            &format!("#define RDF_MODE 0\n#define RDF_GROUPS 0\n#define RDF_HALF 0\n{RDF_SRC}"),
        )?;
        let ncells = plan.cells.cells();
        let (atoms, sorted, starts) = if plan.atoms.is_empty() {
            (
                self.stream
                    .clone_htod(&[MsAtom::default()])
                    .map_err(dev_err("upload"))?,
                self.stream.alloc_zeros::<f32>(4).map_err(dev_err("allocation"))?,
                self.stream
                    .alloc_zeros::<u32>(ncells + 1)
                    .map_err(dev_err("allocation"))?,
            )
        } else {
            let atoms = self.stream.clone_htod(&plan.atoms).map_err(dev_err("upload"))?;
            let flat: Vec<f32> = plan.positions.iter().flatten().copied().collect();
            let pos = self.stream.clone_htod(&flat).map_err(dev_err("upload"))?;
            let (sorted, starts) = self.rdf_sort(&rdf_module, &pos, plan.positions.len(), &plan.cells)?;
            (atoms, sorted, starts)
        };
        Ok(MolSurfPrepared {
            plan,
            module,
            atoms,
            sorted,
            starts,
        })
    }

    /// Computes the slab `z_range` of `job` into the engine's output buffer.
    pub(super) fn launch_molsurf(
        &self,
        st: &mut EngineState,
        p: &MolSurfPrepared,
        job: &FieldJob,
        z_range: &Range<usize>,
    ) -> Result<(), ComputeError> {
        if job.lattice.dims != p.plan.dims {
            return Err(ComputeError::BadInput("molsurf: the job's lattice changed".into()));
        }
        let g = p.plan.grid(z_range);
        let mut cfg = super::brick_launch([g.nx, g.ny, g.nzs], (BLOCK.0, BLOCK.1, BLOCK.2 * POINTS_Z))?;
        cfg.block_dim = BLOCK;
        let f = Self::function(&p.module, "molsurf_field")?;
        let out = st
            .out
            .as_mut()
            .ok_or_else(|| ComputeError::Device("no output buffer".into()))?;
        let mut b = self.stream.launch_builder(&f);
        b.arg(&p.atoms).arg(&p.sorted).arg(&p.starts).arg(&g).arg(&mut *out);
        // SAFETY: `sorted` holds the atoms in cell order with their indices into `atoms` (below its
        // length), `starts` the cells + 1 starts; the blocks cover the slab's nx * ny * nzs points,
        // each written once within the output buffer (at least that long, poisoned before).
        unsafe { b.launch(cfg) }.map_err(dev_err("molsurf_field launch"))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_lattices_that_are_not_axis_aligned() {
        let atoms = MolSurfAtoms::from_radii_angstrom(&[[0.0; 3]], &[1.5], 0.6).unwrap();
        let mut lattice = Lattice::axis_aligned([0.0; 3], 0.5, [4, 4, 4]);
        lattice.steps_bohr[0][1] = 0.1;
        assert!(matches!(
            MolSurfPlan::new(&atoms, &lattice),
            Err(ComputeError::WrongInput(..))
        ));
    }
}
