//! Pair-distance histograms on a CUDA device, for radial distribution functions.
//!
//! Owns [`PairGeometry`] (one frame's two selections laid out for `kernels/rdf.cu`: f32 positions
//! wrapped into the box, the box reduced so that the kernel's one-rounding-per-axis minimum image is
//! exact, group ids for exclusions) and [`CudaEngine::rdf_counts`] (uploads, launches over set A in
//! blocks and set B in bounded chunks, returns 64-bit counts). The kernel computes every pair (no cell
//! list), so its cost is `n1 * n2` whatever r_max is. Called by the RDF scheduler in `jobs::rdf`; the
//! CPU engine in `analysis::rdf` is the reference the tests hold this to. [`PairGeometry::emulate`]
//! runs the kernel's f32 arithmetic on the CPU, so the layout and the minimum image are tested on
//! machines without a GPU.

use super::{CudaEngine, dev_err};
use crate::analysis::rdf::RdfSettings;
use crate::compute::ComputeError;
use crate::model::{Frame, UnitCell};
use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};

/// `kernels/rdf.cu`, embedded at build time.
pub const RDF_SRC: &str = include_str!("../../../kernels/rdf.cu");

/// `RDF_THREADS`, `RDF_A_PER_THREAD`, `RDF_TILE` and `RDF_WARPS` in `kernels/rdf.cu`.
const THREADS: u32 = 256;
const A_PER_THREAD: usize = 2;
const TILE: usize = 512;
const WARPS: usize = 8;
/// Atoms of set B per launch: a block then counts at most THREADS * A_PER_THREAD * B_CHUNK < 2^32 pairs.
const B_CHUNK: usize = 1 << 23;
/// Shared memory a block may use without opting in to more (bytes).
const SHARED_LIMIT: usize = 48 * 1024;

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

// SAFETY: `#[repr(C)]` plain floats, the layout of `RdfBox` in kernels/rdf.cu.
unsafe impl cudarc::driver::DeviceRepr for RdfBox {}

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

    /// Pairs the kernel will evaluate.
    pub fn pairs(&self) -> u64 {
        self.a.len() as u64 * self.b.len() as u64
    }

    /// The kernel's arithmetic, in the same f32 operations, on the CPU: counts per bin. For tests
    /// (O(n1 n2), single-threaded).
    pub fn emulate(&self, settings: &RdfSettings) -> Vec<u64> {
        let bins = settings.bins.max(1);
        let mut counts = vec![0u64; bins];
        let r_max = settings.r_max_angstrom as f32;
        let r2max = r_max * r_max;
        let inv_dr = (settings.bins as f64 / settings.r_max_angstrom) as f32;
        let c = &self.cell;
        for p in &self.a {
            for q in &self.b {
                let mut dx = p[0] - q[0];
                let mut dy = p[1] - q[1];
                let mut dz = p[2] - q[2];
                match self.mode {
                    PairMode::Open => {}
                    PairMode::Orthorhombic => {
                        dx = dx.abs();
                        dy = dy.abs();
                        dz = dz.abs();
                        dx = dx.min(c.ax - dx);
                        dy = dy.min(c.by - dy);
                        dz = dz.min(c.cz - dz);
                    }
                    PairMode::Triclinic => {
                        let s = (dz * c.inv_cz).round_ties_even();
                        dz = (-s).mul_add(c.cz, dz);
                        dy = (-s).mul_add(c.cy, dy);
                        dx = (-s).mul_add(c.cx, dx);
                        let s = (dy * c.inv_by).round_ties_even();
                        dy = (-s).mul_add(c.by, dy);
                        dx = (-s).mul_add(c.bx, dx);
                        let s = (dx * c.inv_ax).round_ties_even();
                        dx = (-s).mul_add(c.ax, dx);
                    }
                }
                let d2 = dx.mul_add(dx, dy.mul_add(dy, dz * dz));
                let same = self.groups && p[3].to_bits() == q[3].to_bits();
                if d2 <= r2max && !same {
                    let bin = ((d2.sqrt() * inv_dr) as usize).min(bins - 1);
                    counts[bin] += 1;
                }
            }
        }
        counts
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

impl CudaEngine {
    /// Pair counts of one frame's geometry on this device (`settings.bins` 64-bit counts).
    pub fn rdf_counts(&self, geom: &PairGeometry, settings: &RdfSettings) -> Result<Vec<u64>, ComputeError> {
        let bins = settings.bins;
        if bins == 0 || geom.a.is_empty() || geom.b.is_empty() {
            return Ok(vec![0; bins]);
        }
        let per_warp = WARPS * bins * 4 + TILE * 16 <= SHARED_LIMIT;
        let shared = if per_warp { WARPS * bins * 4 } else { bins * 4 };
        let shared = shared.div_ceil(16) * 16 + TILE * 16;
        if shared > SHARED_LIMIT {
            return Err(ComputeError::Device(format!(
                "{bins} histogram bins do not fit in a block's shared memory on the GPU (at most {})",
                (SHARED_LIMIT - TILE * 16) / 4
            )));
        }
        let src = format!(
            "#define RDF_MODE {}\n#define RDF_GROUPS {}\n{RDF_SRC}",
            geom.mode as i32,
            i32::from(geom.groups)
        );
        let mut st = self.lock_state()?;
        let module = self.module(&mut st, &src)?;
        drop(st);
        let pairs = CudaEngine::function(&module, "rdf_pairs")?;
        let zero = CudaEngine::function(&module, "rdf_zero")?;
        let na = i32::try_from(geom.a.len()).map_err(|_| ComputeError::Device("selection 1 too large".into()))?;
        let a_dev: CudaSlice<f32> = self
            .stream
            .clone_htod(bytemuck::cast_slice::<[f32; 4], f32>(&geom.a))
            .map_err(dev_err("upload"))?;
        let b_dev: CudaSlice<f32> = self
            .stream
            .clone_htod(bytemuck::cast_slice::<[f32; 4], f32>(&geom.b))
            .map_err(dev_err("upload"))?;
        let mut hist = self.stream.alloc_zeros::<u64>(bins).map_err(dev_err("allocation"))?;
        let bins_i = bins as i32;
        {
            let mut l = self.stream.launch_builder(&zero);
            l.arg(&mut hist).arg(&bins_i);
            // SAFETY: writes `bins` values into a buffer of `bins`.
            unsafe { l.launch(LaunchConfig::for_num_elems(bins as u32)) }.map_err(dev_err("rdf_zero launch"))?;
        }
        let r2max = (settings.r_max_angstrom * settings.r_max_angstrom) as f32;
        let inv_dr = (settings.bins as f64 / settings.r_max_angstrom) as f32;
        let per_warp_i = i32::from(per_warp);
        let blocks = (geom.a.len()).div_ceil(THREADS as usize * A_PER_THREAD) as u32;
        let cfg = LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (THREADS, 1, 1),
            shared_mem_bytes: shared as u32,
        };
        for start in (0..geom.b.len()).step_by(B_CHUNK) {
            let n = (geom.b.len() - start).min(B_CHUNK);
            let nb = n as i32;
            let b_view = b_dev.slice(start * 4..(start + n) * 4);
            let mut l = self.stream.launch_builder(&pairs);
            l.arg(&a_dev)
                .arg(&na)
                .arg(&b_view)
                .arg(&nb)
                .arg(&mut hist)
                .arg(&bins_i)
                .arg(&per_warp_i)
                .arg(&r2max)
                .arg(&inv_dr)
                .arg(&geom.cell);
            // SAFETY: reads `na` and `nb` float4 positions from buffers of that size, writes `bins`
            // counts; the shared-memory size matches the kernel's layout (histograms, then the tile).
            unsafe { l.launch(cfg) }.map_err(dev_err("rdf_pairs launch"))?;
        }
        let counts = self.stream.clone_dtoh(&hist).map_err(dev_err("download"))?;
        self.stream.synchronize().map_err(dev_err("synchronize"))?;
        Ok(counts)
    }
}
