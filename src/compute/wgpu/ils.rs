//! Implicit ligand sampling on any wgpu device: one frame's voxel means of the occupancy
//! exp(-U/kT), as `compute::ils` defines them (the same [`IlsSetup`], orientations and sample classes,
//! sub-sampling, hard cutoff and exclusion rule, the periodic images that [`PlacedAtoms`] holds), by
//! the passes of `shaders/ils.wgsl` (one invocation per sample point, tiles of 4^3 points walking the
//! same bins, four orientations per vec4 so that each atom is read once per four).
//!
//! Owns [`IlsPass`] (the two pipelines, once per device), [`IlsLayout`] (the host's float64 layout
//! of a frame: atoms binned on the sample lattice, each relative to its own bin's corner) and
//! [`IlsParams`] (twin of the shader's uniform). Called by `engine::WgpuEngine::ils_voxel_means`
//! (the pool's wgpu workers through `jobs::ils`) and the tests.
//!
//! Precision (float32 on the device, float64 here and in the CPU engine):
//! - positions: an atom's offset from a sample point is its position relative to its bin's corner
//!   (|x| < 4 A, rounded once, 2.4e-7 A) plus an integer number of sample steps (under 20 A within
//!   reach: 2e-6 A at the reach, 2e-7 A within 3 A); the pair term's relative error is 12 |dr|/r,
//!   under 1e-6 for atoms near enough to matter;
//! - the pair term itself: (R^2/r^2)^6 raises the few roundings of r^2 and the division to the
//!   sixth power, about 1e-6 of the repulsive term (measured: 1e-5 to 2e-5 kT beside one atom where
//!   U is 3 to 10 kT, lavapipe);
//! - the energy: the pair terms of one bin (about 6 atoms of 4 A cubes of a protein) are added, then
//!   the bins of a row (about 7), then the rows (about 50): the rounding error is at most about
//!   (6 + 7 + 50) 2^-24 times the sum of the terms' magnitudes, 4e-6 of it (1e-5 kT where repulsion
//!   and attraction of 10 kT each cancel), not the 2,000 2^-24 of one running sum;
//! - the hard cutoff: a pair within about 1e-6 of the cutoff distance may fall on the other side
//!   than in float64 (the definition is discontinuous there; the step is the pair's term at the
//!   cutoff, about 1e-3 kT at 10 A): the tests allow the change the float64 reference itself shows
//!   when the cutoff moves by 2e-6 of itself;
//! - exp(-U) is summed as exp([`SHIFT_KT`] - U) (positive terms: relative error under (M + s^3)
//!   2^-24, M orientations) so that every point under the cap stays a normal float: points above
//!   about 107 kT read as 0, which moves a voxel under the cap by less than exp(-20) of itself.
//!
//! So the map agrees with the float64 reference within 1e-4 kT where PMF < 10 kT (measured in
//! `tests/wgpu_ils.rs`).

use super::marching_cubes::read_buffer;
use super::pass::{compute_layouts, device_err};
use crate::compute::ComputeError;
use crate::compute::ils::{IlsSetup, PlacedAtoms};
use wgpu::util::DeviceExt;

/// The WGSL source of the passes.
pub const SHADER_SOURCE: &str = include_str!("../../../shaders/ils.wgsl");

/// Sample points per tile edge (`TILE` in the shader: workgroups of TILE^3) and voxels per
/// workgroup of the voxel pass (`WG_VOXELS`).
pub const TILE: u32 = 4;
pub const WG_VOXELS: u32 = 64;
/// The occupancy is summed as exp(SHIFT_KT - U/kT) (see the module docs).
pub const SHIFT_KT: f64 = 20.0;
/// Most probe atoms.
pub const MAX_PROBE: usize = 16;
/// Bin edge, Angstrom (rounded up to whole sample steps).
const BIN_ANGSTROM: f64 = 4.0;
/// Most sample values one dispatch holds (128 MB); larger maps go in several.
const MAX_CHUNK_SAMPLES: u64 = 1 << 25;
/// Most sample points times orientations times probe atoms of one submission, so that no command
/// buffer runs long enough for a desktop's GPU watchdog (about 1e12 pair terms with a protein's
/// atoms within reach: a fraction of a second on a discrete GPU).
const MAX_SUBMIT_WORK: u64 = 1 << 30;

/// Uniform parameters of one dispatch. Twin of `Params` in `shaders/ils.wgsl` (which says what each
/// field is): counts and indices in sample steps, `delta` (the step) and `reach` in Angstrom,
/// `cutoff2` in A^2, `shift` in kT.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct IlsParams {
    pub nx: i32,
    pub ny: i32,
    pub nz: i32,
    pub s: i32,
    pub classes: i32,
    pub n_orient: i32,
    pub n_probe: i32,
    pub bx: i32,
    pub by: i32,
    pub bz: i32,
    pub m: i32,
    pub l: i32,
    pub reach_steps: i32,
    pub excl_steps: i32,
    pub z0: i32,
    pub k0: i32,
    pub kn: i32,
    pub vx: i32,
    pub vy: i32,
    pub pad0: i32,
    pub delta: f32,
    pub cutoff2: f32,
    pub reach: f32,
    pub shift: f32,
}

/// One frame laid out for the passes.
#[derive(Clone, Debug, Default)]
pub struct IlsLayout {
    /// Everything but the dispatch's planes (`z0`, `k0`, `kn`).
    pub params: IlsParams,
    /// Two words per atom: (x, y, z relative to the bin's corner, sqrt(eps/kT)), (rmin/2,
    /// exclusion radius squared, 0, 0); atoms without dispersion and beyond reach are left out.
    pub atoms: Vec<[f32; 4]>,
    /// `starts[b]..starts[b + 1]`: bin b's atoms (bins x fastest).
    pub starts: Vec<u32>,
    /// Per probe atom (sqrt(eps/kT), rmin/2, 0, 0).
    pub probe: Vec<[f32; 4]>,
    /// Probe atom offsets, four orientations per word: x, y, z of probe atom j in orientations
    /// 4 q .. 4 q + 3 of class c at 3 ((c * ceil(orientations / 4) + q) * probe atoms + j) + 0, 1, 2.
    pub offsets: Vec<[f32; 4]>,
}

fn bad(msg: String) -> ComputeError {
    ComputeError::BadInput(msg)
}

fn to_i32(v: usize, what: &str) -> Result<i32, ComputeError> {
    i32::try_from(v).map_err(|_| bad(format!("ILS on wgpu: {what} {v} is too large")))
}

/// `a / b` rounded towards minus infinity (b > 0).
fn floor_div(a: i64, b: i64) -> i64 {
    a.div_euclid(b)
}

/// Lays out one frame (see the module docs).
pub fn layout(setup: &IlsSetup, placed: &PlacedAtoms) -> Result<IlsLayout, ComputeError> {
    setup.check().map_err(|e| bad(e.to_string()))?;
    let o = &setup.orientations;
    let p = o.atoms_per_orientation;
    if p == 0 || p > MAX_PROBE || p != setup.probe.atoms.len() {
        return Err(bad(format!(
            "ILS on wgpu takes probes of 1 to {MAX_PROBE} atoms, not {p}"
        )));
    }
    let n_orient = o.evaluated();
    if o.offsets_angstrom.len() != o.classes * n_orient * p {
        return Err(bad(format!(
            "ILS on wgpu: {} probe offsets for {} classes, {n_orient} orientations and {p} atoms",
            o.offsets_angstrom.len(),
            o.classes
        )));
    }
    let map = setup.map;
    let s = setup.subres;
    let h = map.spacing_angstrom;
    let delta = h / s as f64;
    let n = map.dims.map(|d| d * s);
    let first = [0, 1, 2].map(|k| map.origin_angstrom[k] - 0.5 * h + 0.5 * delta);
    let kt = setup.kt_kcal_per_mol();
    let reach = setup.reach_angstrom();
    let reach_steps = (reach / delta).ceil() as i64 + 1;
    let excl2: Vec<f64> = setup
        .atom_lj
        .iter()
        .map(|&lj| setup.exclusion_radius_angstrom(lj).powi(2))
        .collect();
    let excl_max = excl2.iter().fold(0.0f64, |a, &b| a.max(b)).sqrt();
    let excl_steps = if excl_max > 0.0 {
        (excl_max / delta).ceil() as i64 + 1
    } else {
        0
    };
    let m = (BIN_ANGSTROM / delta).ceil().max(1.0) as i64;
    let l = -(reach_steps + 1);
    let bins = n.map(|nk| floor_div(nk as i64 - 1 + reach_steps + 1 - l, m) + 1);
    let n_bins = bins.iter().try_fold(1usize, |acc, &b| acc.checked_mul(b as usize));
    let n_bins = match n_bins {
        Some(v) if v < (u32::MAX as usize) / 2 => v,
        _ => return Err(bad(format!("ILS on wgpu: {bins:?} atom bins are too many"))),
    };
    // Each kept atom: its bin and its position relative to the bin's corner.
    let mut kept: Vec<(usize, [f32; 4], [f32; 4])> = Vec::with_capacity(placed.positions_angstrom.len());
    for (x, &pi) in placed.positions_angstrom.iter().zip(&placed.params) {
        let Some(lj) = setup.atom_lj.get(pi as usize) else {
            return Err(bad(format!("ILS on wgpu: atom parameters {pi} do not exist")));
        };
        let e = (lj.eps_kcal_per_mol / kt).sqrt();
        if e.is_nan() || e <= 0.0 {
            continue;
        }
        let steps = [0, 1, 2].map(|k| (x[k] - first[k]) / delta);
        let nb = [0, 1, 2].map(|k| ((steps[k] - l as f64) / m as f64).floor());
        if (0..3).any(|k| nb[k].is_nan() || nb[k] < 0.0 || nb[k] >= bins[k] as f64) {
            // Beyond reach of every sample point (or not finite).
            continue;
        }
        let nb = nb.map(|v| v as i64);
        let rel = [0, 1, 2].map(|k| ((x[k] - first[k]) - (l + nb[k] * m) as f64 * delta) as f32);
        let b = nb[0] as usize + bins[0] as usize * (nb[1] as usize + bins[1] as usize * nb[2] as usize);
        let ex = excl2.get(pi as usize).copied().unwrap_or(0.0);
        kept.push((
            b,
            [rel[0], rel[1], rel[2], e as f32],
            [lj.rmin_half_angstrom as f32, ex as f32, 0.0, 0.0],
        ));
    }
    let mut starts = vec![0u32; n_bins + 1];
    for (b, _, _) in &kept {
        starts[b + 1] += 1;
    }
    for b in 0..n_bins {
        starts[b + 1] += starts[b];
    }
    let mut fill = starts.clone();
    let mut atoms = vec![[0.0f32; 4]; 2 * kept.len().max(1)];
    for (b, w0, w1) in &kept {
        let slot = fill[*b] as usize;
        fill[*b] += 1;
        atoms[2 * slot] = *w0;
        atoms[2 * slot + 1] = *w1;
    }
    let probe = setup
        .probe
        .atoms
        .iter()
        .map(|a| {
            [
                (a.lj.eps_kcal_per_mol / kt).sqrt() as f32,
                a.lj.rmin_half_angstrom as f32,
                0.0,
                0.0,
            ]
        })
        .collect();
    // Four orientations per word: x, y and z of probe atom j in orientations 4 q .. 4 q + 3.
    let groups = n_orient.div_ceil(4);
    let mut offsets = vec![[0.0f32; 4]; o.classes * groups * p * 3];
    for c in 0..o.classes {
        for or in 0..n_orient {
            for j in 0..p {
                let v = o.offset(c, or, j);
                let base = ((c * groups + or / 4) * p + j) * 3;
                for (axis, x) in v.iter().enumerate() {
                    offsets[base + axis][or % 4] = *x as f32;
                }
            }
        }
    }
    let params = IlsParams {
        nx: to_i32(n[0], "sample points along x")?,
        ny: to_i32(n[1], "sample points along y")?,
        nz: to_i32(n[2], "sample points along z")?,
        s: s as i32,
        classes: to_i32(o.classes, "orientation classes")?,
        n_orient: to_i32(n_orient, "orientations")?,
        n_probe: p as i32,
        bx: bins[0] as i32,
        by: bins[1] as i32,
        bz: bins[2] as i32,
        m: to_i32(m as usize, "bin edge in steps")?,
        l: l as i32,
        reach_steps: to_i32(reach_steps as usize, "reach in steps")?,
        excl_steps: excl_steps as i32,
        vx: map.dims[0] as i32,
        vy: map.dims[1] as i32,
        delta: delta as f32,
        cutoff2: (setup.cutoff_angstrom * setup.cutoff_angstrom) as f32,
        // A little wide: bins are skipped by a float32 distance, the cutoff test decides.
        reach: (reach * 1.0001) as f32,
        shift: SHIFT_KT as f32,
        ..IlsParams::default()
    };
    Ok(IlsLayout {
        params,
        atoms,
        starts,
        probe,
        offsets,
    })
}

/// Voxel planes per dispatch for sample planes of `plane_samples` values and `s` samples per voxel edge.
fn planes_per_dispatch(plane_samples: u64, s: u64, max_samples: u64) -> usize {
    (max_samples / (plane_samples * s).max(1)).max(1) as usize
}

/// The pipelines of the passes, created once per device.
pub struct IlsPass {
    layout: wgpu::BindGroupLayout,
    samples: wgpu::ComputePipeline,
    voxels: wgpu::ComputePipeline,
}

/// Storage buffers the passes bind.
pub const STORAGE_BUFFERS: u32 = 6;

impl IlsPass {
    /// The pipelines on `device`, or why its limits do not allow them.
    pub fn on(device: &wgpu::Device) -> Result<IlsPass, String> {
        let have = device.limits().max_storage_buffers_per_shader_stage;
        if have < STORAGE_BUFFERS {
            return Err(format!(
                "wgpu: the adapter binds {have} storage buffers per shader stage, ILS needs {STORAGE_BUFFERS}"
            ));
        }
        Ok(IlsPass::new(device))
    }

    /// Builds the pipelines on `device` (which must allow [`STORAGE_BUFFERS`] storage buffers per
    /// shader stage: see [`IlsPass::on`]).
    pub fn new(device: &wgpu::Device) -> IlsPass {
        use wgpu::BufferBindingType as B;
        let read = B::Storage { read_only: true };
        let (module, layout, pipeline_layout) = compute_layouts(
            device,
            "ils",
            SHADER_SOURCE,
            &[
                B::Uniform,
                read,
                read,
                read,
                read,
                B::Storage { read_only: false },
                B::Storage { read_only: false },
            ],
        );
        let pipeline = |entry: &str| {
            device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(entry),
                layout: Some(&pipeline_layout),
                module: &module,
                entry_point: Some(entry),
                compilation_options: Default::default(),
                cache: None,
            })
        };
        IlsPass {
            samples: pipeline("ils_samples"),
            voxels: pipeline("ils_voxels"),
            layout,
        }
    }

    /// One frame's voxel means of the occupancy (x fastest), computed on `device`.
    pub fn voxel_means(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        setup: &IlsSetup,
        placed: &PlacedAtoms,
    ) -> Result<Vec<f64>, ComputeError> {
        self.voxel_means_in(device, queue, setup, placed, usize::MAX)
    }

    /// As [`IlsPass::voxel_means`], with at most `most_planes` voxel planes per submission (tests
    /// of the split a large map takes).
    pub fn voxel_means_in(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        setup: &IlsSetup,
        placed: &PlacedAtoms,
        most_planes: usize,
    ) -> Result<Vec<f64>, ComputeError> {
        let t0 = std::time::Instant::now();
        let lay = layout(setup, placed)?;
        let t_host = t0.elapsed().as_secs_f64();
        let base = lay.params;
        let limits = device.limits();
        let max_binding = limits.max_storage_buffer_binding_size;
        let n_voxels = setup.map.n_voxels();
        let s = setup.subres as u64;
        let plane_samples = base.nx as u64 * base.ny as u64;
        let kn = planes_per_dispatch(plane_samples, s, MAX_CHUNK_SAMPLES.min(max_binding / 4));
        let plane_work = plane_samples * s * setup.orientations.evaluated() as u64 * base.n_probe as u64;
        let kn = kn.min((MAX_SUBMIT_WORK / plane_work.max(1)).max(1) as usize);
        let kn = kn.min(setup.map.dims[2]).min(most_planes.max(1));
        let sample_bytes = 4 * plane_samples * s * kn as u64;
        let voxel_bytes = 4 * n_voxels as u64;
        let atom_bytes = 16 * lay.atoms.len() as u64;
        let max_groups = limits.max_compute_workgroups_per_dimension;
        let tiles = |n: u64| n.div_ceil(u64::from(TILE));
        if [sample_bytes, voxel_bytes, atom_bytes].iter().any(|&b| b > max_binding)
            || [tiles(base.nx as u64), tiles(base.ny as u64), tiles(s * kn as u64)]
                .iter()
                .any(|&g| g > u64::from(max_groups))
        {
            return Err(ComputeError::Device(format!(
                "wgpu: the ILS map ({:?} voxels, subres {}) exceeds this adapter's limits",
                setup.map.dims, setup.subres
            )));
        }
        let storage = |label: &str, bytes: &[u8]| {
            device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents: bytes,
                usage: wgpu::BufferUsages::STORAGE,
            })
        };
        let atoms = storage("ils atoms", bytemuck::cast_slice(&lay.atoms));
        let starts = storage("ils bin starts", bytemuck::cast_slice(&lay.starts));
        let probe = storage("ils probe", bytemuck::cast_slice(&lay.probe));
        let offsets = storage("ils offsets", bytemuck::cast_slice(&lay.offsets));
        let samples = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("ils samples"),
            size: sample_bytes.max(4),
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        });
        let voxels = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("ils voxel sums"),
            size: voxel_bytes.max(4),
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let nz_voxels = setup.map.dims[2];
        let mut k0 = 0;
        let mut submissions = 0;
        while k0 < nz_voxels {
            let planes = kn.min(nz_voxels - k0);
            let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("ils") });
            let params = IlsParams {
                z0: (k0 * setup.subres) as i32,
                k0: k0 as i32,
                kn: planes as i32,
                ..base
            };
            let bind_group = super::pass::params_bind_group(
                device,
                &self.layout,
                "ils",
                &params,
                &[&atoms, &starts, &probe, &offsets, &samples, &voxels],
            );
            let voxel_groups = (planes as u64 * base.vx as u64 * base.vy as u64).div_ceil(u64::from(WG_VOXELS));
            let gx = voxel_groups.min(u64::from(max_groups)).max(1);
            let gy = voxel_groups.div_ceil(gx);
            if gy > u64::from(max_groups) {
                return Err(ComputeError::Device(format!(
                    "wgpu: the ILS map ({:?} voxels) exceeds this adapter's limits",
                    setup.map.dims
                )));
            }
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("ils samples"),
                timestamp_writes: None,
            });
            pass.set_bind_group(0, &bind_group, &[]);
            pass.set_pipeline(&self.samples);
            pass.dispatch_workgroups(
                tiles(base.nx as u64) as u32,
                tiles(base.ny as u64) as u32,
                tiles(s * planes as u64) as u32,
            );
            drop(pass);
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("ils voxels"),
                timestamp_writes: None,
            });
            pass.set_bind_group(0, &bind_group, &[]);
            pass.set_pipeline(&self.voxels);
            pass.dispatch_workgroups(gx as u32, gy as u32, 1);
            drop(pass);
            queue.submit([encoder.finish()]);
            submissions += 1;
            k0 += planes;
        }
        let raw = read_buffer(device, queue, &voxels, voxel_bytes).map_err(device_err)?;
        let scale = (-SHIFT_KT).exp() / (setup.orientations.evaluated() as f64 * (s * s * s) as f64);
        let mut out = Vec::with_capacity(n_voxels);
        for w in raw.chunks_exact(4).take(n_voxels) {
            let v = f64::from(f32::from_ne_bytes([w[0], w[1], w[2], w[3]]));
            if !v.is_finite() {
                return Err(ComputeError::NotFinite);
            }
            out.push(v * scale);
        }
        tracing::debug!(
            target: "orbitfield::timing",
            "ILS frame on wgpu: {} atoms with dispersion, {} sample points, {} orientations, {} submission(s), host {:.2} ms, total {:.2} ms",
            lay.starts.last().copied().unwrap_or(0),
            plane_samples * base.nz as u64,
            base.n_orient,
            submissions,
            1e3 * t_host,
            1e3 * t0.elapsed().as_secs_f64()
        );
        if out.len() != n_voxels {
            return Err(ComputeError::Device(format!(
                "wgpu: {} ILS voxels read back, {n_voxels} expected",
                out.len()
            )));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]
    use super::*;
    use crate::model::ils::{IlsMap, Orientations};
    use crate::model::lj::{LjParams, Probe};

    #[test]
    fn shader_layout_and_constants_match_the_host() {
        let module = wgpu::naga::front::wgsl::parse_str(SHADER_SOURCE).unwrap();
        let storage = SHADER_SOURCE.matches("var<storage,").count();
        assert_eq!(storage, STORAGE_BUFFERS as usize);
        assert_eq!(
            crate::compute::wgpu::wgsl_type_size(&module, "Params"),
            std::mem::size_of::<IlsParams>()
        );
        assert!(SHADER_SOURCE.contains(&format!("const TILE: i32 = {TILE};")));
        assert!(SHADER_SOURCE.contains(&format!("const WG_VOXELS: u32 = {WG_VOXELS}u;")));
        assert!(SHADER_SOURCE.contains(&format!("@workgroup_size({WG_VOXELS})")));
    }

    #[test]
    fn atoms_sit_in_their_bins_relative_to_the_corner() {
        let probe = Probe::builtin("o2").unwrap();
        let setup = IlsSetup {
            map: IlsMap {
                origin_angstrom: [31.3, -12.7, 55.1],
                spacing_angstrom: 0.9,
                dims: [5, 4, 3],
            },
            subres: 3,
            cutoff_angstrom: 7.0,
            max_energy_kt: 87.0,
            temperature_kelvin: 300.0,
            orientations: Orientations::new(&probe, 10, 3),
            probe,
            atom_lj: vec![LjParams::new(0.1, 1.9), LjParams::new(0.0, 1.0)],
        };
        let placed = PlacedAtoms {
            positions_angstrom: vec![
                [33.0, -11.0, 56.0],
                [30.0, -20.0, 50.0],
                [34.0, -11.5, 57.0],
                [500.0, 0.0, 0.0],
            ],
            params: vec![0, 0, 1, 0],
        };
        let lay = layout(&setup, &placed).unwrap();
        let p = lay.params;
        // The atom without dispersion and the one far away are left out.
        assert_eq!(*lay.starts.last().unwrap(), 2);
        // 27 classes, 5 orientations in two groups of four, 2 atoms, 3 axes.
        assert_eq!(lay.offsets.len(), 27 * 2 * 2 * 3);
        let o = &setup.orientations;
        for (c, or, j) in [(0, 0, 0), (3, 4, 1), (26, 2, 1)] {
            let v = o.offset(c, or, j);
            let base = ((c * 2 + or / 4) * 2 + j) * 3;
            for (k, x) in v.iter().enumerate() {
                assert_eq!(lay.offsets[base + k][or % 4], *x as f32);
            }
        }
        let delta = 0.3;
        let first = [31.3 - 0.45 + 0.15, -12.7 - 0.45 + 0.15, 55.1 - 0.45 + 0.15];
        let n_bins = (p.bx * p.by * p.bz) as usize;
        let mut found = 0;
        for b in 0..n_bins {
            let (x, y, z) = (
                b % p.bx as usize,
                (b / p.bx as usize) % p.by as usize,
                b / (p.bx * p.by) as usize,
            );
            for a in lay.starts[b]..lay.starts[b + 1] {
                let w = lay.atoms[2 * a as usize];
                let corner = [x, y, z].map(|c| f64::from(p.l + c as i32 * p.m) * delta);
                let pos: [f64; 3] = std::array::from_fn(|k| first[k] + corner[k] + f64::from(w[k]));
                let want = if pos[0] > 32.0 {
                    [33.0, -11.0, 56.0]
                } else {
                    [30.0, -20.0, 50.0]
                };
                for k in 0..3 {
                    assert!((pos[k] - want[k]).abs() < 1e-5, "{pos:?} {want:?}");
                    assert!(w[k] >= 0.0 && f64::from(w[k]) <= f64::from(p.m) * delta + 1e-6);
                }
                found += 1;
            }
        }
        assert_eq!(found, 2);
    }

    #[test]
    fn dispatches_split_large_maps() {
        assert_eq!(planes_per_dispatch(100, 3, 1 << 25), (1 << 25) / 300);
        assert_eq!(planes_per_dispatch(1 << 26, 3, 1 << 25), 1);
    }
}
