//! Direct Coulomb summation of point charges onto a lattice on any wgpu device: the potential map
//! of `Field::Potential` from [`FieldInput::Charges`] (vacuum, `q / r`) or
//! [`FieldInput::ScreenedCharges`] (the screened models of `compute::esp::screening`: `q a / r^2`
//! for the distance-dependent dielectric, `q a exp(-b r) / r` for Debye-Hueckel), by the compute
//! pass `shaders/coulomb_map.wgsl`.
//!
//! Owns [`DirectCoulomb`] (the pipelines, built once per device) and [`CoulombMapParams`] (twin of
//! the shader's uniform). [`DirectCoulomb::map`] fills a z-slab of a lattice and reads it back;
//! [`DirectCoulomb::encode`] records the same into a caller's encoder with the values left on the
//! device. Called by the wgpu slab engine (`super::engine`), tests and benches.
//!
//! Precision (f32 on the device; WGSL has no guaranteed f64): charge positions are taken relative to
//! the lattice origin in f64 and rounded once to f32; each term's 1/r is `inverseSqrt` refined by a
//! Newton step (about one ulp); the terms are summed in blocks of 8, the 32 blocks of a tile of 256
//! charges plainly, and the tiles' sums with Kahan compensation. The accumulated rounding is thus
//! bounded by about 42 u sum_j |q_j k(r_j)| (u = 2^-24, 2.5e-6 of the sum of absolute terms) whatever
//! the number of charges, and in practice (random signs) far less; the coordinate rounding (about
//! 1e-7 relative of the lattice's extent in bohr, about 1e-6 bohr on a 20 bohr lattice) dominates
//! near charges: a point 0.01 bohr from a charge sees 1e-4 of that term (2e-4 for eps = 4r). Measured
//! against the CPU engine (f32 terms with Kahan sums, coordinates relative to each row's start) on
//! fresh random inputs, on lavapipe and on an H200 (`tests/wgpu_engine.rs`): RMS relative error
//! 3e-7 to 1.4e-6 (vacuum, Debye-Hueckel) at the points farther than 0.05 bohr from every charge,
//! within the CUDA engine's 1e-5; eps = 4r up to 2.3e-5 there; every map within 1e-4 with the near
//! points. Distances are clamped below at [`MIN_DISTANCE_BOHR`] as by the other engines.

use super::marching_cubes::read_buffer;
use super::pass::{compute_layouts, device_err, slab_extent};
use crate::compute::esp::screening::{Dielectric, ScreenGpu};
use crate::compute::{ComputeError, FieldInput, MIN_DISTANCE_BOHR, PointCharges};
use crate::model::Lattice;
use std::ops::Range;
use wgpu::util::DeviceExt;

/// The WGSL source of the pass.
pub const SHADER_SOURCE: &str = include_str!("../../../shaders/coulomb_map.wgsl");

/// Invocations per workgroup along x and y, lattice rows per invocation and charges per
/// workgroup-memory tile (`WX`, `WY`, `ROWS`, `TILE` in the shader).
pub const WX: u32 = 32;
pub const WY: u32 = 2;
pub const ROWS: u32 = 8;
pub const TILE: u32 = 256;

/// Where padding charges (zero) sit, bohr: 1/r is tiny there and r^2 stays finite in f32.
const PAD_POSITION_BOHR: f32 = 1.0e15;

/// Uniform parameters of one dispatch. Twin of `Params` in `shaders/coulomb_map.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct CoulombMapParams {
    pub step_x: [f32; 4],
    pub step_y: [f32; 4],
    pub step_z: [f32; 4],
    /// nx, ny, planes of the slab, its first plane.
    pub dims: [u32; 4],
    pub n_charges: u32,
    pub model: u32,
    pub screen_a: f32,
    pub screen_b: f32,
    pub min2: f32,
    pub keep: u32,
    /// Slab plane of the dispatch's first plane in the values buffer.
    pub out_plane: u32,
    pub pad: u32,
}

/// The pipelines of the pass, created once per device.
pub struct DirectCoulomb {
    layout: wgpu::BindGroupLayout,
    /// [axis-aligned, general lattice] x [vacuum, screened].
    pipelines: [[wgpu::ComputePipeline; 2]; 2],
}

/// Charges on the device relative to one lattice origin (bohr, f32), padded with zero charges to
/// whole tiles.
pub struct CoulombCharges {
    buffer: wgpu::Buffer,
    padded: u32,
    screen: ScreenGpu,
}

/// The charges and the medium of a potential job: `None` for a job that is not a direct sum.
pub fn charges_of(input: &FieldInput) -> Option<(&PointCharges, Dielectric)> {
    match input {
        FieldInput::Charges(q) => Some((q, Dielectric::Vacuum)),
        FieldInput::ScreenedCharges(s) => Some((&s.charges, s.dielectric)),
        _ => None,
    }
}

/// The charge words of `charges` relative to `origin_bohr`: (x, y, z, q) in f32, non-finite or zero
/// charges left out, padded to a multiple of [`TILE`] with zero charges far away.
pub fn charge_words(charges: &PointCharges, origin_bohr: [f64; 3]) -> Vec<[f32; 4]> {
    let mut words: Vec<[f32; 4]> = charges
        .positions_bohr
        .iter()
        .zip(&charges.charges_e)
        .filter(|(p, q)| q.is_finite() && **q != 0.0 && p.iter().all(|c| c.is_finite()))
        .map(|(p, &q)| {
            [
                (p[0] - origin_bohr[0]) as f32,
                (p[1] - origin_bohr[1]) as f32,
                (p[2] - origin_bohr[2]) as f32,
                q as f32,
            ]
        })
        .collect();
    let padded = words.len().div_ceil(TILE as usize).max(1) * TILE as usize;
    words.resize(padded, [PAD_POSITION_BOHR, PAD_POSITION_BOHR, PAD_POSITION_BOHR, 0.0]);
    words
}

/// True when every step vector of `lattice` lies along its own axis (the pass's fast path).
pub fn axis_aligned(lattice: &Lattice) -> bool {
    let s = lattice.steps_bohr;
    s[0][1] == 0.0 && s[0][2] == 0.0 && s[1][0] == 0.0 && s[1][2] == 0.0 && s[2][0] == 0.0 && s[2][1] == 0.0
}

impl DirectCoulomb {
    /// Builds the pipelines on `device`.
    pub fn new(device: &wgpu::Device) -> DirectCoulomb {
        use wgpu::BufferBindingType as B;
        let (module, layout, pipeline_layout) = compute_layouts(
            device,
            "coulomb map",
            SHADER_SOURCE,
            &[
                B::Uniform,
                B::Storage { read_only: true },
                B::Storage { read_only: false },
            ],
        );
        let pipeline = |axis: bool, screened: bool| {
            device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some("coulomb map"),
                layout: Some(&pipeline_layout),
                module: &module,
                entry_point: Some("coulomb_map"),
                compilation_options: wgpu::PipelineCompilationOptions {
                    constants: &[
                        ("AXIS", f64::from(u8::from(axis))),
                        ("SCREENED", f64::from(u8::from(screened))),
                    ],
                    zero_initialize_workgroup_memory: false,
                },
                cache: None,
            })
        };
        DirectCoulomb {
            layout,
            pipelines: [
                [pipeline(true, false), pipeline(true, true)],
                [pipeline(false, false), pipeline(false, true)],
            ],
        }
    }

    /// Uploads `charges` (relative to `lattice`'s origin) in `dielectric`.
    pub fn upload(
        device: &wgpu::Device,
        charges: &PointCharges,
        dielectric: Dielectric,
        lattice: &Lattice,
    ) -> Result<CoulombCharges, ComputeError> {
        dielectric.check()?;
        if charges.positions_bohr.len() != charges.charges_e.len() {
            return Err(ComputeError::BadInput(format!(
                "{} charge positions but {} charges",
                charges.positions_bohr.len(),
                charges.charges_e.len()
            )));
        }
        let words = charge_words(charges, lattice.origin_bohr);
        let buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("coulomb map charges"),
            contents: bytemuck::cast_slice(&words),
            usage: wgpu::BufferUsages::STORAGE,
        });
        Ok(CoulombCharges {
            buffer,
            padded: words.len() as u32,
            screen: dielectric.gpu(),
        })
    }

    /// Records the potential of `charges` on the planes `z_range` of `lattice` into `values` (at
    /// least `4 * slab points` bytes, x fastest, slab-local). Nothing is submitted.
    pub fn encode(
        &self,
        device: &wgpu::Device,
        encoder: &mut wgpu::CommandEncoder,
        lattice: &Lattice,
        z_range: Range<usize>,
        charges: &CoulombCharges,
        values: &wgpu::Buffer,
    ) -> Result<(), ComputeError> {
        let [nx, ny, _] = lattice.dims;
        let (planes, need) = slab_extent(lattice, &z_range, values)?;
        let limits = device.limits();
        let per_dim = u64::from(limits.max_compute_workgroups_per_dimension);
        let gx = (nx as u64).div_ceil(u64::from(WX));
        let gy = (ny as u64).div_ceil(u64::from(WY * ROWS));
        if gx > per_dim || gy > per_dim || need > limits.max_storage_buffer_binding_size.min(limits.max_buffer_size) {
            return Err(ComputeError::Device(format!(
                "wgpu: a {nx} x {ny} lattice slab of {planes} planes exceeds this device's dispatch limits"
            )));
        }
        let s = lattice.steps_bohr;
        let v4 = |v: [f64; 3]| [v[0] as f32, v[1] as f32, v[2] as f32, 0.0];
        let axis = axis_aligned(lattice);
        let screened = charges.screen.model != 0;
        let pipeline = &self.pipelines[usize::from(!axis)][usize::from(screened)];
        // One dispatch per run of planes within the per-dimension limit.
        let mut k0 = z_range.start;
        while k0 < z_range.end {
            let planes_here = (z_range.end - k0).min(per_dim as usize);
            let params = CoulombMapParams {
                step_x: v4(s[0]),
                step_y: v4(s[1]),
                step_z: v4(s[2]),
                dims: [nx as u32, ny as u32, planes_here as u32, k0 as u32],
                n_charges: charges.padded,
                model: charges.screen.model,
                screen_a: charges.screen.a as f32,
                screen_b: charges.screen.b as f32,
                min2: (MIN_DISTANCE_BOHR * MIN_DISTANCE_BOHR) as f32,
                keep: 1,
                out_plane: (k0 - z_range.start) as u32,
                pad: 0,
            };
            let bind_group = super::pass::params_bind_group(
                device,
                &self.layout,
                "coulomb map",
                &params,
                &[&charges.buffer, values],
            );
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("coulomb map"),
                timestamp_writes: None,
            });
            pass.set_pipeline(pipeline);
            pass.set_bind_group(0, &bind_group, &[]);
            pass.dispatch_workgroups(gx as u32, gy as u32, planes_here as u32);
            drop(pass);
            k0 += planes_here;
        }
        Ok(())
    }

    /// The potential (hartree/e) of `charges` in `dielectric` on the planes `z_range` of `lattice`
    /// into `out` (x fastest, exactly the slab's length), computed and read back.
    #[allow(clippy::too_many_arguments)]
    pub fn map(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        charges: &PointCharges,
        dielectric: Dielectric,
        lattice: &Lattice,
        z_range: Range<usize>,
        out: &mut [f32],
    ) -> Result<(), ComputeError> {
        let need = crate::compute::slab_len(lattice, &z_range);
        if out.len() != need {
            return Err(ComputeError::BadOutput { got: out.len(), need });
        }
        if need == 0 {
            return Ok(());
        }
        let gpu_charges = DirectCoulomb::upload(device, charges, dielectric, lattice)?;
        let values = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("coulomb map values"),
            size: (4 * need as u64).max(16),
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("coulomb map"),
        });
        self.encode(device, &mut encoder, lattice, z_range, &gpu_charges, &values)?;
        queue.submit([encoder.finish()]);
        let raw = read_buffer(device, queue, &values, 4 * need as u64).map_err(device_err)?;
        for (o, c) in out.iter_mut().zip(raw.chunks_exact(4)) {
            *o = f32::from_ne_bytes([c[0], c[1], c[2], c[3]]);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]
    use super::*;

    #[test]
    fn shader_layout_and_constants_match_the_host() {
        let module = wgpu::naga::front::wgsl::parse_str(SHADER_SOURCE).unwrap();
        assert!(module.entry_points.iter().any(|e| e.name == "coulomb_map"));
        assert_eq!(
            crate::compute::wgpu::wgsl_type_size(&module, "Params"),
            std::mem::size_of::<CoulombMapParams>()
        );
        for (name, v) in [("WX", WX), ("WY", WY), ("ROWS", ROWS), ("TILE", TILE)] {
            assert!(SHADER_SOURCE.contains(&format!("const {name}: u32 = {v}u;")), "{name}");
        }
    }

    #[test]
    fn charges_are_shifted_filtered_and_padded() {
        let q = PointCharges {
            positions_bohr: vec![[1.5, 2.0, 3.0], [0.0; 3], [f64::NAN, 0.0, 0.0]],
            charges_e: vec![0.5, 0.0, 1.0],
        };
        let w = charge_words(&q, [1.0, 1.0, 1.0]);
        assert_eq!(w.len(), TILE as usize);
        assert_eq!(w[0], [0.5, 1.0, 2.0, 0.5]);
        assert!(w[1..].iter().all(|c| c[3] == 0.0 && c[0] == PAD_POSITION_BOHR));
        assert!((3.0 * PAD_POSITION_BOHR * PAD_POSITION_BOHR).is_finite());
    }
}
