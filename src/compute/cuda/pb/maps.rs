//! The Poisson-Boltzmann coefficient maps built on the device (`kernels/pb_maps.cu`), straight into
//! the solver's float64 buffers, so a trajectory frame needs no map from the host: the atoms, their
//! charges and the boundary's multipoles go up; the charges' spread (the weights of
//! `compute::pb::prep::weights_1d`, by the same rounded operations), the dielectric, ion
//! accessibility, source and boundary maps are made there. A charge spread beyond the lattice's
//! interior is flagged by the device and named by the host (`prep::charge_spread`'s message).
//!
//! Owns [`MapKernels`], [`MapScratch`] and `CudaPbSolver::build_maps`. The maps equal the CPU engine's
//! (`compute::cpu::pb_maps`): the molecular surface's decisions bit for bit (the kernels round every
//! operation of a distance test explicitly, as the host computes it), the smoothing by the same sums in
//! the same order, the source up to the order of the sums over charges, the boundary up to the
//! device's `exp` and `sqrt`. The edge-fraction surface is built on the host (`builds_maps`), and so is
//! a problem whose neighbour lists or cells exceed what the kernels hold ([`MapsOutcome::HostMaps`]).

use super::Warm;
use super::{CudaPbSolver, MAP_STAGES, cfg1, drv};
use crate::compute::cuda::CudaEngine;
use crate::compute::pb::prep::{TINY_RADIUS_ANGSTROM, charge_spread, multipoles, reference_sphere, sas_sphere_points};
use crate::compute::pb::{ChargeAssignment, PbAtoms, PbBoundary, PbError, PbLattice, PbParams, PbSolution, PbSurface};
use cudarc::driver::{CudaFunction, CudaModule, CudaSlice, CudaStream, LaunchConfig, PushKernelArg};
use std::sync::Arc;

/// `kernels/pb_maps.cu`, embedded at build time.
pub const PB_MAPS_SRC: &str = include_str!("../../../../kernels/pb_maps.cu");
/// `PBM_SAS_THREADS` in the kernel.
const SAS_THREADS: u32 = 128;
/// Neighbour cells allowed before the maps are left to the host (an atom far from the others would
/// otherwise make a sparse grid of this many cells).
const MAX_CELLS: usize = 1 << 24;
/// Threads per block of the sphere-marking kernel (one warp per sphere).
const MARK_THREADS: u32 = 128;

pub(super) struct MapKernels {
    sas: CudaFunction,
    mark: CudaFunction,
    dielectric: CudaFunction,
    kbar2: CudaFunction,
    spread: CudaFunction,
    boundary: CudaFunction,
}

impl MapKernels {
    pub(super) fn load(module: &Arc<CudaModule>) -> Result<MapKernels, PbError> {
        let f = |name: &str| CudaEngine::function(module, name).map_err(|e| PbError::Device(e.to_string()));
        Ok(MapKernels {
            sas: f("pbm_sas")?,
            mark: f("pbm_mark")?,
            dielectric: f("pbm_dielectric")?,
            kbar2: f("pbm_kbar2")?,
            spread: f("pbm_spread")?,
            boundary: f("pbm_boundary")?,
        })
    }
}

/// Device scratch kept between frames: the four masks, the surface points and the reference sphere.
#[derive(Default)]
pub(super) struct MapScratch {
    masks: Option<CudaSlice<u8>>,
    sas: Option<CudaSlice<f64>>,
    /// The reference sphere on the device: the points asked for (`sas_sphere_points`), how many it
    /// has, and the points (kept between frames: it depends on the largest radius alone).
    refs_asked: usize,
    refs_len: usize,
    refs: Option<CudaSlice<f64>>,
}

/// Whether the maps are on the device.
pub(super) enum MapsOutcome {
    Built,
    /// The kernels cannot hold this problem; the reason, for a note.
    HostMaps(String),
}

/// What a solve from the atoms gave.
#[derive(Debug)]
pub enum AtomsSolve {
    Solved(PbSolution),
    /// The maps of this problem are the host's to build (the reason); nothing was solved.
    HostMaps(String),
}

fn flat3(v: &[[f64; 3]]) -> Vec<f64> {
    v.iter().flat_map(|p| p.iter().copied()).collect()
}

fn blocks(n: usize, per: u32) -> u32 {
    (n.max(1) as u64).div_ceil(u64::from(per)).min(u64::from(u32::MAX)) as u32
}

/// The host's cell list of the atoms: cells of side `cell` keyed by `floor(x / cell)`, relative to the
/// smallest key; `None` when the grid would exceed [`MAX_CELLS`].
struct Cells {
    key0: [i32; 3],
    dims: [i32; 3],
    start: Vec<i32>,
    atoms: Vec<i32>,
}

fn cells(positions: &[[f64; 3]], cell: f64) -> Option<Cells> {
    let keys: Vec<[i64; 3]> = positions.iter().map(|p| p.map(|x| (x / cell).floor() as i64)).collect();
    let lo: [i64; 3] = std::array::from_fn(|k| keys.iter().map(|q| q[k]).min().unwrap_or(0));
    let hi: [i64; 3] = std::array::from_fn(|k| keys.iter().map(|q| q[k]).max().unwrap_or(0));
    let dims: [i64; 3] = std::array::from_fn(|k| hi[k] - lo[k] + 1);
    let total = dims.iter().try_fold(1i64, |a, &d| a.checked_mul(d))?;
    if total as usize > MAX_CELLS || lo.iter().chain(&hi).any(|&v| v.abs() > i64::from(i32::MAX) / 2) {
        return None;
    }
    let id = |q: &[i64; 3]| ((q[0] - lo[0]) + dims[0] * ((q[1] - lo[1]) + dims[1] * (q[2] - lo[2]))) as usize;
    let mut count = vec![0i32; total as usize + 1];
    for q in &keys {
        if let Some(c) = count.get_mut(id(q) + 1) {
            *c += 1;
        }
    }
    for c in 1..count.len() {
        let prev = count.get(c - 1).copied().unwrap_or(0);
        if let Some(v) = count.get_mut(c) {
            *v += prev;
        }
    }
    let mut fill = count.clone();
    let mut atoms = vec![0i32; keys.len()];
    for (a, q) in keys.iter().enumerate() {
        if let Some(slot) = fill.get_mut(id(q))
            && let Some(dst) = atoms.get_mut(*slot as usize)
        {
            *dst = a as i32;
            *slot += 1;
        }
    }
    Some(Cells {
        key0: lo.map(|v| v as i32),
        dims: dims.map(|v| v as i32),
        start: count,
        atoms,
    })
}

/// The time of each map stage when asked for (the stream waited for at each stage's end).
struct StageClock {
    stream: Option<Arc<CudaStream>>,
    last: std::time::Instant,
    seconds: [f64; MAP_STAGES.len()],
}

impl StageClock {
    fn new(on: bool, stream: &Arc<CudaStream>) -> StageClock {
        StageClock {
            stream: on.then(|| Arc::clone(stream)),
            last: std::time::Instant::now(),
            seconds: [0.0; MAP_STAGES.len()],
        }
    }

    /// Ends stage `i` (adds the time since the last stage's end).
    fn end(&mut self, i: usize) -> Result<(), PbError> {
        let Some(stream) = &self.stream else {
            return Ok(());
        };
        stream.synchronize().map_err(drv("synchronize"))?;
        let now = std::time::Instant::now();
        if let Some(s) = self.seconds.get_mut(i) {
            *s += (now - self.last).as_secs_f64();
        }
        self.last = now;
        Ok(())
    }
}

impl CudaPbSolver {
    /// True when this problem's maps can be built on the device (not the edge-fraction surface).
    pub fn builds_maps(params: &PbParams) -> bool {
        params.surface != PbSurface::Fraction
    }

    /// Solves the linearized equation of `atoms` on `lattice` with the maps built on the device
    /// (`stats().upload_s` is then the maps' time); [`AtomsSolve::HostMaps`] when they are the host's.
    pub fn solve_atoms(
        &mut self,
        atoms: &PbAtoms,
        lattice: &PbLattice,
        params: &PbParams,
        warm: Warm<'_>,
    ) -> Result<AtomsSolve, PbError> {
        self.solve_atoms_with_faces(atoms, lattice, params, None, warm)
    }

    /// As [`CudaPbSolver::solve_atoms`], with the faces' values given when `faces` is some (a
    /// focused lattice: one value per lattice point, read on the faces; each charge's weights on
    /// interior points only).
    pub fn solve_atoms_with_faces(
        &mut self,
        atoms: &PbAtoms,
        lattice: &PbLattice,
        params: &PbParams,
        faces: Option<&[f64]>,
        warm: Warm<'_>,
    ) -> Result<AtomsSolve, PbError> {
        if !Self::builds_maps(params) {
            return Ok(AtomsSolve::HostMaps(
                "the edge-fraction surface is built on the host".into(),
            ));
        }
        let t0 = std::time::Instant::now();
        let had_previous = self.begin(lattice, params)?;
        if let MapsOutcome::HostMaps(why) = self.build_maps(atoms, lattice, params, faces)? {
            return Ok(AtomsSolve::HostMaps(why));
        }
        self.start_iterate(warm, had_previous, lattice.n_points())?;
        self.stream.synchronize().map_err(drv("synchronize"))?;
        self.stats.upload_s = t0.elapsed().as_secs_f64();
        self.finish(lattice, params).map(AtomsSolve::Solved)
    }

    /// The maps the device builds for `atoms`, brought back (for tests against the host's maps).
    pub fn device_maps(
        &mut self,
        atoms: &PbAtoms,
        lattice: &PbLattice,
        params: &PbParams,
        faces: Option<&[f64]>,
    ) -> Result<Option<crate::compute::pb::Coefficients>, PbError> {
        if !Self::builds_maps(params) {
            return Ok(None);
        }
        self.begin(lattice, params)?;
        if let MapsOutcome::HostMaps(_) = self.build_maps(atoms, lattice, params, faces)? {
            return Ok(None);
        }
        let stream = self.stream.clone();
        let b = self
            .bufs
            .as_ref()
            .ok_or_else(|| PbError::Device("no device buffers".into()))?;
        let down = |v: &CudaSlice<f64>| stream.clone_dtoh(v).map_err(drv("download"));
        Ok(Some(crate::compute::pb::Coefficients {
            eps: [down(&b.eps64[0])?, down(&b.eps64[1])?, down(&b.eps64[2])?],
            kbar2: down(&b.k64)?,
            source: down(&b.f)?,
            boundary: down(&b.g)?,
        }))
    }

    fn map_kernels(&mut self) -> Result<Arc<MapKernels>, PbError> {
        if let Some(k) = &self.map_kernels {
            return Ok(Arc::clone(k));
        }
        let module = {
            let mut st = self.engine.lock_state().map_err(super::device)?;
            self.engine.module(&mut st, PB_MAPS_SRC).map_err(super::device)?
        };
        let k = Arc::new(MapKernels::load(&module)?);
        self.map_kernels = Some(Arc::clone(&k));
        Ok(k)
    }

    /// Builds the maps of `atoms` on `lattice` into the solver's buffers (allocated for `lattice`).
    pub(super) fn build_maps(
        &mut self,
        atoms: &PbAtoms,
        lattice: &PbLattice,
        p: &PbParams,
        faces: Option<&[f64]>,
    ) -> Result<MapsOutcome, PbError> {
        let mut stages = StageClock::new(self.stage_timing, &self.stream);
        if let Some(f) = faces
            && (f.len() != lattice.n_points() || f.iter().any(|v| !v.is_finite()))
        {
            return Err(PbError::BadInput(format!(
                "{} boundary values (finite ones expected) for a lattice of {} points",
                f.len(),
                lattice.n_points()
            )));
        }
        stages.end(0)?;
        let probe = p.probe_angstrom;
        let (sphere_points, rmax_atom) = sas_sphere_points(atoms, probe, p.ion_radius_angstrom);
        let sas_cell = (rmax_atom + probe).max(1e-3);
        let with_probe = probe > TINY_RADIUS_ANGSTROM;
        let cell_list = if with_probe {
            match cells(&atoms.positions_angstrom, sas_cell) {
                Some(c) => Some(c),
                None => return Ok(MapsOutcome::HostMaps("the atoms span too many neighbour cells".into())),
            }
        } else {
            None
        };
        stages.end(1)?;
        let k = self.map_kernels()?;
        let stream = self.stream.clone();
        let n = lattice.n_points();
        let [nx, ny, nz] = lattice.dims.map(|v| v as i32);
        let h = lattice.spacing_angstrom;
        let n_atoms = atoms.positions_angstrom.len();
        let up = |v: &[f64]| stream.clone_htod(v).map_err(drv("upload"));
        let pos = up(&flat3(&atoms.positions_angstrom))?;
        let charges = up(&atoms.charges_e)?;
        let radius = up(&atoms.radii_angstrom)?;
        // Spheres of nonzero radius: inflated by the probe (solute), by the ion radius (ions).
        let marked: Vec<usize> = (0..n_atoms)
            .filter(|&a| atoms.radii_angstrom.get(a).is_some_and(|&r| r > TINY_RADIUS_ANGSTROM))
            .collect();
        // Their centres and radii (the atoms' own buffers when every atom marks); each kernel adds the
        // probe or the ion radius to a radius in double, as the host does.
        let subset = if marked.len() == n_atoms {
            None
        } else {
            let centres: Vec<f64> = marked
                .iter()
                .flat_map(|&a| atoms.positions_angstrom.get(a).copied().unwrap_or_default())
                .collect();
            let radii: Vec<f64> = marked
                .iter()
                .map(|&a| atoms.radii_angstrom.get(a).copied().unwrap_or(0.0))
                .collect();
            Some((up(&centres)?, up(&radii)?))
        };
        let (centres, marked_radii) = match &subset {
            Some((c, r)) => (c, r),
            None => (&pos, &radius),
        };
        // Plane minima: x-, y-, z-staggered, then the ion lattice.
        let mut mins = Vec::with_capacity(12);
        for plane in 0..4 {
            for axis in 0..3 {
                let shift = if plane == axis { 0.5 } else { 0.0 };
                mins.push(lattice.origin_angstrom[axis] + shift * h);
            }
        }
        let mins = up(&mins)?;
        stages.end(2)?;
        let scratch = &mut self.map_scratch;
        if scratch.masks.as_ref().is_none_or(|m| m.len() != 4 * n) {
            scratch.masks = None;
            scratch.masks = Some(stream.alloc_zeros::<u8>(4 * n).map_err(drv("device allocation"))?);
        }
        let Some(masks) = scratch.masks.as_mut() else {
            return Err(PbError::Device("no mask buffer".into()));
        };
        stream.memset_zeros(masks).map_err(drv("memset"))?;
        let n_marked = marked.len() as i64;
        let mark = |masks: &mut CudaSlice<u8>,
                    centres: &CudaSlice<f64>,
                    radii: Option<&CudaSlice<f64>>,
                    radius: f64,
                    count: i64,
                    plane0: i32,
                    planes: u32,
                    value: u8|
         -> Result<(), PbError> {
            if count == 0 {
                return Ok(());
            }
            let warps_per_block = i64::from(MARK_THREADS / 32);
            let cfg = LaunchConfig {
                grid_dim: (
                    blocks((count as usize).div_ceil(warps_per_block as usize), 1),
                    planes,
                    1,
                ),
                block_dim: (MARK_THREADS, 1, 1),
                shared_mem_bytes: 0,
            };
            let null: u64 = 0;
            let mut l = stream.launch_builder(&k.mark);
            l.arg(centres);
            match radii {
                Some(r) => l.arg(r),
                None => l.arg(&null),
            };
            l.arg(&radius)
                .arg(&count)
                .arg(&mins)
                .arg(&plane0)
                .arg(&h)
                .arg(&nx)
                .arg(&ny)
                .arg(&nz)
                .arg(masks)
                .arg(&value);
            // SAFETY: reads `count` spheres; writes mask points inside planes plane0..plane0+planes.
            unsafe { l.launch(cfg) }.map_err(drv("pbm_mark"))?;
            Ok(())
        };
        // Solute: every staggered point within radius + probe.
        mark(masks, centres, Some(marked_radii), probe, n_marked, 0, 3, 1)?;
        stages.end(3)?;
        // Solvent again: within the probe of a solvent-accessible surface point.
        if let Some(cl) = cell_list {
            if scratch.refs_asked != sphere_points || scratch.refs.is_none() {
                let reference = reference_sphere(sphere_points);
                scratch.refs = Some(up(&flat3(&reference))?);
                scratch.refs_asked = sphere_points;
                scratch.refs_len = reference.len();
            }
            let nref = scratch.refs_len as i32;
            let reach = ((2.0 * (rmax_atom + probe)) / sas_cell).ceil().max(1.0) as i32;
            let cell_start = stream.clone_htod(&cl.start).map_err(drv("upload"))?;
            let cell_atoms = stream.clone_htod(&cl.atoms).map_err(drv("upload"))?;
            let mut count = stream.alloc_zeros::<u64>(1).map_err(drv("device allocation"))?;
            let mut overflow = stream.alloc_zeros::<i32>(1).map_err(drv("device allocation"))?;
            let mut cap = scratch.sas.as_ref().map_or(0, |s| s.len() / 3);
            if cap == 0 {
                cap = (marked.len() * scratch.refs_len / 4).max(1024);
                scratch.sas = Some(stream.alloc_zeros::<f64>(3 * cap).map_err(drv("device allocation"))?);
            }
            let n_atoms_i = n_atoms as i32;
            let mut kept = 0u64;
            for attempt in 0..2 {
                let Some(sas) = scratch.sas.as_mut() else {
                    return Err(PbError::Device("no surface-point buffer".into()));
                };
                stream.memset_zeros(&mut count).map_err(drv("memset"))?;
                let cap64 = cap as u64;
                let mut l = stream.launch_builder(&k.sas);
                l.arg(&pos)
                    .arg(&radius)
                    .arg(&n_atoms_i)
                    .arg(&cell_start)
                    .arg(&cell_atoms)
                    .arg(&cl.dims[0])
                    .arg(&cl.dims[1])
                    .arg(&cl.dims[2])
                    .arg(&cl.key0[0])
                    .arg(&cl.key0[1])
                    .arg(&cl.key0[2])
                    .arg(&sas_cell)
                    .arg(&reach)
                    .arg(&probe)
                    .arg(&TINY_RADIUS_ANGSTROM)
                    .arg(scratch.refs.as_ref().unwrap_or(&pos))
                    .arg(&nref)
                    .arg(sas)
                    .arg(&cap64)
                    .arg(&mut count)
                    .arg(&mut overflow);
                let cfg = LaunchConfig {
                    grid_dim: (n_atoms.max(1) as u32, 1, 1),
                    block_dim: (SAS_THREADS, 1, 1),
                    shared_mem_bytes: 0,
                };
                // SAFETY: one block per atom; writes at most `cap` points of 3 doubles.
                unsafe { l.launch(cfg) }.map_err(drv("pbm_sas"))?;
                let flags = stream.clone_dtoh(&overflow).map_err(drv("download"))?;
                if flags.first().copied().unwrap_or(0) != 0 {
                    return Ok(MapsOutcome::HostMaps(
                        "an atom has more neighbours than the device's surface kernel holds".into(),
                    ));
                }
                kept = stream
                    .clone_dtoh(&count)
                    .map_err(drv("download"))?
                    .first()
                    .copied()
                    .unwrap_or(0);
                if kept as usize <= cap {
                    break;
                }
                if attempt == 0 {
                    cap = kept as usize + kept as usize / 8;
                    scratch.sas = None;
                    scratch.sas = Some(stream.alloc_zeros::<f64>(3 * cap).map_err(drv("device allocation"))?);
                }
            }
            if kept as usize > cap {
                return Err(PbError::Device("the surface points outgrew their buffer".into()));
            }
            let Some(sas) = scratch.sas.as_ref() else {
                return Err(PbError::Device("no surface-point buffer".into()));
            };
            stages.end(4)?;
            mark(masks, sas, None, probe, kept as i64, 0, 3, 0)?;
            stages.end(5)?;
        }
        let b = self
            .bufs
            .as_mut()
            .ok_or_else(|| PbError::Device("no device buffers".into()))?;
        // Ion lattice (plane 3).
        let kappa2 = p.kappa2_per_angstrom2();
        if kappa2 > 0.0 {
            mark(
                masks,
                centres,
                Some(marked_radii),
                p.ion_radius_angstrom,
                n_marked,
                3,
                1,
                1,
            )?;
        }
        stages.end(6)?;
        // Dielectric maps.
        {
            let smooth = i32::from(p.surface == PbSurface::Smol);
            let [e0, e1, e2] = &mut b.eps64;
            let mut l = stream.launch_builder(&k.dielectric);
            l.arg(&*masks)
                .arg(&nx)
                .arg(&ny)
                .arg(&nz)
                .arg(&p.eps_in)
                .arg(&p.eps_out)
                .arg(&smooth)
                .arg(e0)
                .arg(e1)
                .arg(e2);
            // SAFETY: reads the masks' first three planes, writes n doubles into each map.
            unsafe { l.launch(cfg1(n)) }.map_err(drv("pbm_dielectric"))?;
        }
        {
            let value = if kappa2 > 0.0 { p.eps_out * kappa2 } else { 0.0 };
            let n64 = n as i64;
            let mut l = stream.launch_builder(&k.kbar2);
            l.arg(&*masks).arg(&n64).arg(&value).arg(&mut b.k64);
            // SAFETY: reads the fourth plane of 4 n bytes, writes n doubles.
            unsafe { l.launch(cfg1(n)) }.map_err(drv("pbm_kbar2"))?;
        }
        stages.end(7)?;
        // Source: each charge spread on the device (a focused lattice keeps the interior weights).
        stream.memset_zeros(&mut b.f).map_err(drv("memset"))?;
        let mut bad = stream.clone_htod(&[i32::MAX]).map_err(drv("upload"))?;
        {
            let [ox, oy, oz] = lattice.origin_angstrom;
            let spline = i32::from(p.charge_assignment == ChargeAssignment::Spline);
            let scale = 4.0 * std::f64::consts::PI * p.bjerrum_angstrom() / (h * h * h);
            let partial = i32::from(faces.is_some());
            let n_atoms_i = n_atoms as i32;
            let mut l = stream.launch_builder(&k.spread);
            l.arg(&pos)
                .arg(&charges)
                .arg(&n_atoms_i)
                .arg(&ox)
                .arg(&oy)
                .arg(&oz)
                .arg(&h)
                .arg(&spline)
                .arg(&scale)
                .arg(&partial)
                .arg(&nx)
                .arg(&ny)
                .arg(&nz)
                .arg(&mut b.f)
                .arg(&mut bad);
            // SAFETY: one thread per atom; writes interior lattice points only.
            unsafe { l.launch(cfg1(n_atoms)) }.map_err(drv("pbm_spread"))?;
        }
        stages.end(8)?;
        // Boundary: given (a focused lattice) or from the atoms.
        if let Some(f) = faces {
            self.stream.memcpy_htod(f, &mut b.g).map_err(drv("upload"))?;
        } else {
            let mp = multipoles(atoms);
            let mut m = Vec::with_capacity(21);
            m.extend_from_slice(&mp.centre);
            m.push(mp.solute_radius);
            m.push(mp.charge);
            m.extend_from_slice(&mp.dipole);
            m.extend(mp.quad.iter().flatten());
            m.extend_from_slice(&[kappa2.sqrt(), p.eps_in, p.eps_out, p.bjerrum_angstrom()]);
            let m = up(&m)?;
            let mode = i32::from(p.boundary == PbBoundary::Mdh);
            let [ox, oy, oz] = lattice.origin_angstrom;
            let n_atoms_i = n_atoms as i32;
            let mut l = stream.launch_builder(&k.boundary);
            l.arg(&mode)
                .arg(&m)
                .arg(&ox)
                .arg(&oy)
                .arg(&oz)
                .arg(&h)
                .arg(&nx)
                .arg(&ny)
                .arg(&nz)
                .arg(&pos)
                .arg(&charges)
                .arg(&radius)
                .arg(&n_atoms_i)
                .arg(&mut b.g);
            // SAFETY: writes every lattice point once; reads n_atoms atoms.
            unsafe { l.launch(cfg1(n)) }.map_err(drv("pbm_boundary"))?;
        }
        stages.end(9)?;
        // A charge spread beyond the lattice interior: the host names it.
        let first_bad = stream
            .clone_dtoh(&bad)
            .map_err(drv("download"))?
            .first()
            .copied()
            .unwrap_or(i32::MAX);
        if first_bad != i32::MAX {
            let why = match charge_spread(atoms, lattice, p, false) {
                Err(msg) => msg,
                Ok(_) => format!(
                    "the charge of solute atom {} spreads beyond the lattice interior",
                    first_bad + 1
                ),
            };
            return Err(PbError::BadInput(why));
        }
        self.stats.map_stages_s = stages.seconds;
        Ok(MapsOutcome::Built)
    }
}
