//! Pair-distance histograms for radial distribution functions on any wgpu device: every pair of two
//! selections of one frame, open boundaries or the minimum image of an orthorhombic or triclinic box,
//! by the compute pass `shaders/rdf.wgsl` (u32 atomic bins in workgroup memory, added into u32 rows
//! in storage, summed in u64 on the host).
//!
//! Owns [`RdfPairs`] (the pipeline, once per device) and [`RdfParams`] (twin of the shader's
//! uniform). The frame is laid out by the CUDA engine's [`PairGeometry`] (positions wrapped into
//! the box, the box reduced so that one rounding per axis gives the minimum image, group ids for
//! exclusions), so both device engines bin the same f32 numbers with the same operations; the CPU
//! engine (`analysis::rdf`, f64) is the reference. Pairs on a bin edge may land in the neighbouring
//! bin (f32 rounding of coordinates up to ~50 A, about 2e-5 A): the counts agree with the CPU
//! engine's to that allowance (`tests/wgpu_engine.rs`). Called by tests, benches and the wgpu
//! pool worker (`jobs::adapter_worker`).

use super::marching_cubes::read_buffer;
use super::pass::{compute_layouts, device_err};
use crate::compute::ComputeError;
use crate::compute::layout::pairs::{PairGeometry, PairMode};
use crate::model::rdf::RdfSettings;
use wgpu::util::DeviceExt;

/// The WGSL source of the pass.
pub const SHADER_SOURCE: &str = include_str!("../../../shaders/rdf.wgsl");

/// Invocations per workgroup, atoms of set A per invocation, atoms of set B per workgroup-memory
/// tile and the most bins (`WG`, `A_PER`, `TILE`, `MAX_BINS` in the shader).
pub const WG: u32 = 256;
pub const A_PER: u32 = 2;
pub const TILE: u32 = 256;
pub const MAX_BINS: u32 = 2048;

/// Pairs one dispatch may count (its histogram row is u32).
const MAX_PAIRS_PER_DISPATCH: u64 = (1 << 32) - 1;

/// Uniform parameters of one dispatch. Twin of `Params` in `shaders/rdf.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct RdfParams {
    pub na: u32,
    pub a_first: u32,
    pub nb: u32,
    pub bins: u32,
    pub mode: u32,
    pub groups: u32,
    pub row: u32,
    pub pad: u32,
    pub r2max: f32,
    pub inv_dr: f32,
    pub ax: f32,
    pub bx: f32,
    pub by: f32,
    pub cx: f32,
    pub cy: f32,
    pub cz: f32,
    pub inv_ax: f32,
    pub inv_by: f32,
    pub inv_cz: f32,
    pub pad2: f32,
}

/// The pipeline of the pass, created once per device.
pub struct RdfPairs {
    layout: wgpu::BindGroupLayout,
    pipeline: wgpu::ComputePipeline,
}

/// How the atoms of set A are split into dispatches: (first, count) runs, each counting fewer than
/// 2^32 pairs against `nb` atoms of B and within `max_groups` workgroups.
pub fn a_runs(na: usize, nb: usize, max_groups: u32) -> Vec<(usize, usize)> {
    let per_group = (WG * A_PER) as usize;
    let by_pairs = (MAX_PAIRS_PER_DISPATCH / (nb.max(1) as u64)).max(1) as usize;
    let by_groups = (max_groups.max(1) as usize).saturating_mul(per_group);
    let run = by_pairs.min(by_groups).max(1);
    (0..na).step_by(run).map(|a| (a, run.min(na - a))).collect()
}

impl RdfPairs {
    /// Builds the pipeline on `device`.
    pub fn new(device: &wgpu::Device) -> RdfPairs {
        use wgpu::BufferBindingType as B;
        let (module, layout, pipeline_layout) = compute_layouts(
            device,
            "rdf pairs",
            SHADER_SOURCE,
            &[
                B::Uniform,
                B::Storage { read_only: true },
                B::Storage { read_only: true },
                B::Storage { read_only: false },
            ],
        );
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("rdf pairs"),
            layout: Some(&pipeline_layout),
            module: &module,
            entry_point: Some("rdf_pairs"),
            compilation_options: Default::default(),
            cache: None,
        });
        RdfPairs { layout, pipeline }
    }

    /// The pair counts per bin of `geom` (64-bit), computed on `device` and read back.
    pub fn counts(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        geom: &PairGeometry,
        settings: &RdfSettings,
    ) -> Result<Vec<u64>, ComputeError> {
        let bins = settings.bins;
        if bins == 0 || bins > MAX_BINS as usize {
            return Err(ComputeError::BadInput(format!(
                "{bins} RDF bins: the wgpu pass takes 1 to {MAX_BINS}"
            )));
        }
        if !(settings.r_max_angstrom.is_finite() && settings.r_max_angstrom > 0.0) {
            return Err(ComputeError::BadInput(format!(
                "RDF r_max {} A: it must be positive and finite",
                settings.r_max_angstrom
            )));
        }
        // A workgroup counts at most WG * A_PER * nb pairs in its u32 bins.
        if geom.b.len() as u64 * u64::from(WG * A_PER) > MAX_PAIRS_PER_DISPATCH {
            return Err(ComputeError::BadInput(format!(
                "{} atoms in the second RDF selection: the wgpu pass takes at most {}",
                geom.b.len(),
                MAX_PAIRS_PER_DISPATCH / u64::from(WG * A_PER)
            )));
        }
        let mut counts = vec![0u64; bins];
        if geom.a.is_empty() || geom.b.is_empty() {
            return Ok(counts);
        }
        let limits = device.limits();
        let runs = a_runs(geom.a.len(), geom.b.len(), limits.max_compute_workgroups_per_dimension);
        let storage = |label: &str, words: &[[f32; 4]]| {
            device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents: bytemuck::cast_slice(words),
                usage: wgpu::BufferUsages::STORAGE,
            })
        };
        let a_buf = storage("rdf set A", &geom.a);
        let b_buf = storage("rdf set B", &geom.b);
        let hist_bytes = 4 * (bins as u64) * (runs.len() as u64);
        let hist = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("rdf histogram rows"),
            contents: &vec![0u8; hist_bytes as usize],
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        });
        let c = geom.cell;
        let base = RdfParams {
            nb: geom.b.len() as u32,
            bins: bins as u32,
            mode: match geom.mode {
                PairMode::Open => 0,
                PairMode::Orthorhombic => 1,
                PairMode::Triclinic => 2,
            },
            groups: u32::from(geom.groups),
            r2max: (settings.r_max_angstrom * settings.r_max_angstrom) as f32,
            inv_dr: (bins as f64 / settings.r_max_angstrom) as f32,
            ax: c.ax,
            bx: c.bx,
            by: c.by,
            cx: c.cx,
            cy: c.cy,
            cz: c.cz,
            inv_ax: c.inv_ax,
            inv_by: c.inv_by,
            inv_cz: c.inv_cz,
            ..RdfParams::default()
        };
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("rdf") });
        for (row, &(first, count)) in runs.iter().enumerate() {
            let params = RdfParams {
                na: count as u32,
                a_first: first as u32,
                row: row as u32,
                ..base
            };
            let bind_group =
                super::pass::params_bind_group(device, &self.layout, "rdf", &params, &[&a_buf, &b_buf, &hist]);
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("rdf pairs"),
                timestamp_writes: None,
            });
            pass.set_pipeline(&self.pipeline);
            pass.set_bind_group(0, &bind_group, &[]);
            pass.dispatch_workgroups((count as u32).div_ceil(WG * A_PER), 1, 1);
        }
        queue.submit([encoder.finish()]);
        let raw = read_buffer(device, queue, &hist, hist_bytes).map_err(device_err)?;
        for (k, w) in raw.chunks_exact(4).take((hist_bytes / 4) as usize).enumerate() {
            if let Some(c) = counts.get_mut(k % bins) {
                *c += u64::from(u32::from_ne_bytes([w[0], w[1], w[2], w[3]]));
            }
        }
        Ok(counts)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]
    use super::*;

    #[test]
    fn shader_layout_and_constants_match_the_host() {
        let module = wgpu::naga::front::wgsl::parse_str(SHADER_SOURCE).unwrap();
        assert_eq!(
            crate::compute::wgpu::wgsl_type_size(&module, "Params"),
            std::mem::size_of::<RdfParams>()
        );
        for (name, v) in [("WG", WG), ("A_PER", A_PER), ("TILE", TILE), ("MAX_BINS", MAX_BINS)] {
            assert!(SHADER_SOURCE.contains(&format!("const {name}: u32 = {v}u;")), "{name}");
        }
    }

    #[test]
    fn runs_cover_set_a_and_bound_the_pairs() {
        for (na, nb) in [(1, 1), (1000, 1000), (200_000, 300_000), (5, 1 << 33)] {
            let runs = a_runs(na, nb, 65_535);
            assert_eq!(runs.iter().map(|r| r.1).sum::<usize>(), na);
            assert!(
                runs.iter()
                    .all(|r| r.1 as u64 * nb as u64 <= MAX_PAIRS_PER_DISPATCH || r.1 == 1)
            );
            assert!(runs.windows(2).all(|w| w[0].0 + w[0].1 == w[1].0));
        }
    }
}
