//! The solvent-excluded surface's field on a CUDA device: `kernels/ses.cu`, one thread per lattice
//! point, over spheres and probe centres sorted into cells on the host.
//!
//! Owns [`SesPlan`] (the host half, independent of CUDA: the inflated spheres relative to the
//! lattice origin, their neighbour lists, the probe centres, both in cells of the lattice's box) with
//! [`SesPlan::emulate`], the kernel's f32 arithmetic and cell visits on the CPU, which the tests hold
//! to the CPU engine; and [`SesPrepared`] (the same arrays on the device, built once per job) with
//! the slab launch. The probe centres come from [`crate::compute::ses::ExcludedSurface`], found on
//! the host once per request (shared with the CPU engine through the request's atoms). Called by
//! [`CudaEngine`]'s slab path for a molecular-surface job whose atoms ask for the excluded surface.
//!
//! Only axis-aligned lattices are taken (others are refused as wrong input, and the pool's CPU
//! workers compute them).

use super::dev_err;
use super::engine::{CudaEngine, EngineState};
use crate::compute::ses::ExcludedSurface;
use crate::compute::{ComputeError, Field, FieldJob};
use crate::model::Lattice;
use cudarc::driver::{CudaModule, CudaSlice, LaunchConfig, PushKernelArg};
use std::ops::Range;
use std::sync::Arc;

/// `kernels/ses.cu`, embedded at build time.
pub const SES_SRC: &str = include_str!("../../../kernels/ses.cu");

/// Threads of a block (`SES_BLOCK`).
const BLOCK: u32 = 128;
/// Most cells of the box; larger boxes get wider cells.
const CELLS_MAX: usize = 1 << 22;

/// Lattice, slab and cells of one launch. Twin of `struct SesGrid` in `kernels/ses.cu` (20
/// four-byte fields).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SesGrid {
    pub nx: i32,
    pub ny: i32,
    pub k0: i32,
    pub nzs: i32,
    pub hx: f32,
    pub hy: f32,
    pub hz: f32,
    pub lox: f32,
    pub loy: f32,
    pub loz: f32,
    pub cw: f32,
    pub cnx: i32,
    pub cny: i32,
    pub cnz: i32,
    pub probe: f32,
    pub reach: f32,
    pub band: f32,
    pub rmax: f32,
    pub n_total: i32,
    pub pad: i32,
}

// SAFETY: `#[repr(C)]` plain ints and floats, the layout of `SesGrid` in kernels/ses.cu.
unsafe impl cudarc::driver::DeviceRepr for SesGrid {}

/// The host half of an excluded-surface job on the device.
#[derive(Clone, Debug)]
pub struct SesPlan {
    /// Every inflated sphere (centre relative to the lattice origin, radius; bohr), in the surface's
    /// order, which the neighbour lists index.
    pub spheres: Vec<[f32; 4]>,
    /// The spheres in the box, in cell order (indices into `spheres`), and each cell's start
    /// (cells + 1 entries).
    pub sphere_order: Vec<u32>,
    pub sphere_start: Vec<u32>,
    /// Neighbour lists: sphere `i`'s are `nb[nb_start[i]..nb_start[i + 1]]`.
    pub nb_start: Vec<u32>,
    pub nb: Vec<u32>,
    /// Probe centres in the box, in cell order (w unused), and each cell's start.
    pub probes: Vec<[f32; 4]>,
    pub probe_start: Vec<u32>,
    /// The launch parameters without the slab (`k0`, `nzs`, `n_total` set per launch).
    pub grid: SesGrid,
    pub dims: [usize; 3],
}

impl SesPlan {
    /// The plan for `surface` on `lattice`; wrong input for a lattice that is not axis-aligned
    /// with positive steps.
    pub fn new(surface: &ExcludedSurface, lattice: &Lattice) -> Result<SesPlan, ComputeError> {
        let s = &lattice.steps_bohr;
        let h = [s[0][0], s[1][1], s[2][2]];
        if !lattice.is_axis_aligned() || !h.iter().all(|x| x.is_finite() && *x > 0.0) {
            return Err(ComputeError::WrongInput(Field::MolSurf, "an axis-aligned lattice"));
        }
        let dims = lattice.dims;
        let o = lattice.origin_bohr;
        let reach = surface.reach_bohr();
        let rmax = surface.max_inflated_bohr;
        let margin = rmax.max(reach);
        let lo = [0.0 - margin; 3];
        let hi: [f64; 3] = std::array::from_fn(|a| (dims[a].max(1) - 1) as f64 * h[a] + margin);
        let mut cw = margin.max(1e-3);
        let count =
            |cw: f64| -> [usize; 3] { std::array::from_fn(|a| (((hi[a] - lo[a]) / cw).floor() as usize + 1).max(1)) };
        while count(cw).iter().product::<usize>() > CELLS_MAX {
            cw *= 2.0;
        }
        let cn = count(cw);
        let ncells = cn.iter().product::<usize>();
        let rel = |p: [f64; 3]| -> [f64; 3] { std::array::from_fn(|a| p[a] - o[a]) };
        let in_box = |r: &[f64; 3]| (0..3).all(|a| r[a] >= lo[a] - margin && r[a] <= hi[a] + margin);
        let cell_of = |r: &[f64; 3]| -> usize {
            let c: [usize; 3] =
                std::array::from_fn(|a| (((r[a] - lo[a]) / cw).floor().max(0.0) as usize).min(cn[a] - 1));
            c[0] + cn[0] * (c[1] + cn[1] * c[2])
        };
        let spheres: Vec<[f32; 4]> = surface
            .spheres
            .iter()
            .map(|&(c, r)| {
                let q = rel(c);
                [q[0] as f32, q[1] as f32, q[2] as f32, r as f32]
            })
            .collect();
        let boxed: Vec<(usize, u32)> = surface
            .spheres
            .iter()
            .enumerate()
            .filter_map(|(i, &(c, _))| {
                let q = rel(c);
                (in_box(&q) && i < u32::MAX as usize).then(|| (cell_of(&q), i as u32))
            })
            .collect();
        let (sphere_order, sphere_start) = counting_sort(&boxed, ncells);
        let probe_cells: Vec<(usize, u32)> = surface
            .probes
            .iter()
            .enumerate()
            .filter_map(|(i, &c)| {
                let q = rel(c);
                (in_box(&q) && i < u32::MAX as usize).then(|| (cell_of(&q), i as u32))
            })
            .collect();
        let (probe_order, probe_start) = counting_sort(&probe_cells, ncells);
        let probes = probe_order
            .iter()
            .filter_map(|&i| surface.probes.get(i as usize))
            .map(|&c| {
                let q = rel(c);
                [q[0] as f32, q[1] as f32, q[2] as f32, 0.0]
            })
            .collect();
        let mut nb_start = Vec::with_capacity(surface.neighbors.len() + 1);
        let mut nb = Vec::new();
        nb_start.push(0u32);
        for list in &surface.neighbors {
            nb.extend_from_slice(list);
            nb_start.push(u32::try_from(nb.len()).map_err(|_| ComputeError::BadInput("too many neighbours".into()))?);
        }
        let grid = SesGrid {
            nx: dims[0] as i32,
            ny: dims[1] as i32,
            hx: h[0] as f32,
            hy: h[1] as f32,
            hz: h[2] as f32,
            lox: lo[0] as f32,
            loy: lo[1] as f32,
            loz: lo[2] as f32,
            cw: cw as f32,
            cnx: cn[0] as i32,
            cny: cn[1] as i32,
            cnz: cn[2] as i32,
            probe: surface.probe_bohr as f32,
            reach: reach as f32,
            band: surface.exact_band_bohr() as f32,
            rmax: rmax as f32,
            ..SesGrid::default()
        };
        Ok(SesPlan {
            spheres,
            sphere_order,
            sphere_start,
            nb_start,
            nb,
            probes,
            probe_start,
            grid,
            dims,
        })
    }

    /// The launch parameters of slab `z_range`.
    pub fn grid(&self, z_range: &Range<usize>) -> SesGrid {
        let nzs = z_range.len();
        SesGrid {
            k0: z_range.start as i32,
            nzs: nzs as i32,
            n_total: (self.dims[0] * self.dims[1] * nzs).min(i32::MAX as usize) as i32,
            ..self.grid
        }
    }

    /// The kernel on the CPU, in its f32 arithmetic and cell visits, for slab `z_range`.
    pub fn emulate(&self, z_range: &Range<usize>) -> Vec<f32> {
        let g = self.grid(z_range);
        (0..g.n_total.max(0) as usize).map(|t| self.point(&g, t)).collect()
    }

    fn point(&self, g: &SesGrid, t: usize) -> f32 {
        let (nx, ny) = (g.nx.max(1) as usize, g.ny.max(1) as usize);
        let (i, j, kz) = (t % nx, (t / nx) % ny, t / (nx * ny));
        let x = [i as f32 * g.hx, j as f32 * g.hy, (g.k0 as usize + kz) as f32 * g.hz];
        let range = |c: f32, r: f32, lo: f32, n: i32| -> (i32, i32) {
            let a = ((c - r - lo) / g.cw).floor() as i32;
            let b = ((c + r - lo) / g.cw).floor() as i32;
            (a.max(0), b.min(n - 1))
        };
        let cells = |r: f32| {
            [
                range(x[0], r, g.lox, g.cnx),
                range(x[1], r, g.loy, g.cny),
                range(x[2], r, g.loz, g.cnz),
            ]
        };
        let rows =
            |c: [(i32, i32); 3]| (c[2].0..=c[2].1).flat_map(move |cz| (c[1].0..=c[1].1).map(move |cy| (cz, cy, c[0])));
        let span = |start: &[u32], cz: i32, cy: i32, (x0, x1): (i32, i32)| -> Range<usize> {
            let row = (g.cnx * (cy + g.cny * cz)) as usize;
            let a = start.get(row + x0 as usize).copied().unwrap_or(0) as usize;
            let b = start.get(row + x1 as usize + 1).copied().unwrap_or(0) as usize;
            a..b.max(a)
        };
        let sc = cells(g.rmax);
        let inside = rows(sc).any(|(cz, cy, cx)| {
            self.sphere_order
                .get(span(&self.sphere_start, cz, cy, cx))
                .unwrap_or(&[])
                .iter()
                .filter_map(|&s| self.spheres.get(s as usize))
                .any(|a| d2(x, a) < a[3] * a[3])
        });
        if !inside {
            return 0.0;
        }
        let mut best = g.reach * g.reach;
        for (cz, cy, cx) in rows(cells(g.reach)) {
            for c in self.probes.get(span(&self.probe_start, cz, cy, cx)).unwrap_or(&[]) {
                best = best.min(d2(x, c));
            }
        }
        if best < g.band * g.band {
            for (cz, cy, cx) in rows(sc) {
                for &si in self
                    .sphere_order
                    .get(span(&self.sphere_start, cz, cy, cx))
                    .unwrap_or(&[])
                {
                    let Some(a) = self.spheres.get(si as usize) else {
                        continue;
                    };
                    let dd = d2(x, a);
                    if dd >= a[3] * a[3] {
                        continue;
                    }
                    let rho = dd.sqrt();
                    let core = (a[3] - g.reach).max(0.0);
                    if rho <= core || (a[3] - rho) * (a[3] - rho) >= best || rho <= 0.0 {
                        continue;
                    }
                    if let Some(d) = self.boundary(si as usize, x, rho) {
                        best = best.min(d * d);
                    }
                }
            }
        }
        let d = best.sqrt();
        0.5 + 0.5 * ((d - g.probe) / g.probe).clamp(-1.0, 1.0)
    }

    fn neighbours(&self, i: usize) -> &[u32] {
        let a = self.nb_start.get(i).copied().unwrap_or(0) as usize;
        let b = self.nb_start.get(i + 1).copied().unwrap_or(0) as usize;
        self.nb.get(a..b.max(a)).unwrap_or(&[])
    }

    fn boundary(&self, i: usize, x: [f32; 3], rho: f32) -> Option<f32> {
        let a = *self.spheres.get(i)?;
        let big = a[3];
        let s = big / rho;
        let q = [
            a[0] + s * (x[0] - a[0]),
            a[1] + s * (x[1] - a[1]),
            a[2] + s * (x[2] - a[2]),
        ];
        let held = |p: [f32; 3], except: u32| {
            self.neighbours(i)
                .iter()
                .any(|&k| k != except && self.spheres.get(k as usize).is_some_and(|b| d2(p, b) < b[3] * b[3]))
        };
        let mut best: Option<f32> = None;
        let mut buried = false;
        for &j in self.neighbours(i) {
            let Some(b) = self.spheres.get(j as usize) else {
                continue;
            };
            if d2(q, b) >= b[3] * b[3] {
                continue;
            }
            buried = true;
            let d = d2([a[0], a[1], a[2]], b).sqrt();
            if !(d > 0.0 && d < big + b[3] && d > (big - b[3]).abs()) {
                continue;
            }
            let n = [(b[0] - a[0]) / d, (b[1] - a[1]) / d, (b[2] - a[2]) / d];
            let t = (big * big - b[3] * b[3] + d * d) / (2.0 * d);
            let radius = (big * big - t * t).max(0.0).sqrt();
            let c = [a[0] + t * n[0], a[1] + t * n[1], a[2] + t * n[2]];
            let v = [x[0] - c[0], x[1] - c[1], x[2] - c[2]];
            let along = v[0] * n[0] + v[1] * n[1] + v[2] * n[2];
            let w = [v[0] - along * n[0], v[1] - along * n[1], v[2] - along * n[2]];
            let len = (w[0] * w[0] + w[1] * w[1] + w[2] * w[2]).sqrt();
            if len <= 1e-6 * radius.max(1.0) {
                continue;
            }
            let k = radius / len;
            let p = [c[0] + k * w[0], c[1] + k * w[1], c[2] + k * w[2]];
            if held(p, j) {
                continue;
            }
            let dist = d2(x, &[p[0], p[1], p[2], 0.0]).sqrt();
            best = Some(best.map_or(dist, |e| e.min(dist)));
        }
        if buried { best } else { Some(big - rho) }
    }
}

fn d2(x: [f32; 3], a: &[f32; 4]) -> f32 {
    let (dx, dy, dz) = (x[0] - a[0], x[1] - a[1], x[2] - a[2]);
    dx * dx + dy * dy + dz * dz
}

/// Items `(cell, id)` in cell order (stable) and each cell's start (`ncells + 1` entries).
fn counting_sort(items: &[(usize, u32)], ncells: usize) -> (Vec<u32>, Vec<u32>) {
    let mut start = vec![0u32; ncells + 1];
    for &(c, _) in items {
        if let Some(s) = start.get_mut(c + 1) {
            *s += 1;
        }
    }
    for c in 0..ncells {
        let prev = start.get(c).copied().unwrap_or(0);
        if let Some(s) = start.get_mut(c + 1) {
            *s += prev;
        }
    }
    let mut fill = start.clone();
    let mut order = vec![0u32; items.len()];
    for &(c, id) in items {
        if let Some(f) = fill.get_mut(c) {
            if let Some(o) = order.get_mut(*f as usize) {
                *o = id;
            }
            *f += 1;
        }
    }
    (order, start)
}

/// An excluded-surface job on the device.
pub struct SesPrepared {
    plan: SesPlan,
    module: Arc<CudaModule>,
    spheres: CudaSlice<f32>,
    sphere_order: CudaSlice<u32>,
    sphere_start: CudaSlice<u32>,
    nb_start: CudaSlice<u32>,
    nb: CudaSlice<u32>,
    probes: CudaSlice<f32>,
    probe_start: CudaSlice<u32>,
}

impl CudaEngine {
    /// Uploads the spheres, neighbour lists and probe centres of `surface`, in cells of `lattice`.
    pub(super) fn prepare_ses(
        &self,
        st: &mut EngineState,
        surface: &ExcludedSurface,
        lattice: &Lattice,
    ) -> Result<SesPrepared, ComputeError> {
        let plan = SesPlan::new(surface, lattice)?;
        let module = self.module(st, SES_SRC)?;
        // Empty arrays get one element (the driver refuses empty copies); nothing reads it.
        let upload_u32 = |v: &[u32]| {
            let data: Vec<u32> = if v.is_empty() { vec![0] } else { v.to_vec() };
            self.stream.clone_htod(&data).map_err(dev_err("upload"))
        };
        let upload_f32 = |v: &[[f32; 4]]| {
            let mut data: Vec<f32> = v.iter().flatten().copied().collect();
            if data.is_empty() {
                data = vec![0.0; 4];
            }
            self.stream.clone_htod(&data).map_err(dev_err("upload"))
        };
        Ok(SesPrepared {
            spheres: upload_f32(&plan.spheres)?,
            sphere_order: upload_u32(&plan.sphere_order)?,
            sphere_start: upload_u32(&plan.sphere_start)?,
            nb_start: upload_u32(&plan.nb_start)?,
            nb: upload_u32(&plan.nb)?,
            probes: upload_f32(&plan.probes)?,
            probe_start: upload_u32(&plan.probe_start)?,
            plan,
            module,
        })
    }

    /// Computes the slab `z_range` of `job` into the engine's output buffer.
    pub(super) fn launch_ses(
        &self,
        st: &mut EngineState,
        p: &SesPrepared,
        job: &FieldJob,
        z_range: &Range<usize>,
    ) -> Result<(), ComputeError> {
        if job.lattice.dims != p.plan.dims {
            return Err(ComputeError::BadInput("ses: the job's lattice changed".into()));
        }
        let g = p.plan.grid(z_range);
        if g.n_total <= 0 {
            return Ok(());
        }
        let cfg = LaunchConfig {
            grid_dim: ((g.n_total as u32).div_ceil(BLOCK), 1, 1),
            block_dim: (BLOCK, 1, 1),
            shared_mem_bytes: 0,
        };
        let f = Self::function(&p.module, "ses_field")?;
        let out = st
            .out
            .as_mut()
            .ok_or_else(|| ComputeError::Device("no output buffer".into()))?;
        let mut b = self.stream.launch_builder(&f);
        b.arg(&p.spheres)
            .arg(&p.sphere_order)
            .arg(&p.sphere_start)
            .arg(&p.nb_start)
            .arg(&p.nb)
            .arg(&p.probes)
            .arg(&p.probe_start)
            .arg(&g)
            .arg(&mut *out);
        // SAFETY: the starts hold cells + 1 entries of the cell grid `g` names, the orders and the
        // neighbour lists index `spheres` (below its length), the probes are in cell order; each of
        // the slab's n_total threads writes its one value within the output buffer (at least that
        // long, poisoned before).
        unsafe { b.launch(cfg) }.map_err(dev_err("ses_field launch"))?;
        Ok(())
    }
}
