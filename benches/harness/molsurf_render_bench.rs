//! `orbitfield bench --molsurf --molsurf-on render-device`: one system's molecular surface per frame
//! on the render device, from host coordinates: the positions uploaded into buffers kept across
//! frames, the atoms binned and the field written by `compute::wgpu::molsurf`, the isosurface at 0.5
//! extracted from that buffer by `compute::wgpu::marching_cubes`, and the mesh's counters read back (the
//! counts a draw or a resize needs), waited for. Reports the frame's wall clock, each stage by GPU
//! timestamps where the adapter has them, and the upload alone (wall clock of the same positions
//! written and waited for), medians after two warm-up frames. Called by `molsurf_bench` beside the
//! CUDA and CPU figures of the same system.

use anyhow::{Result, anyhow, bail};
use orbitfield::compute::molsurf::{DEFAULT_RADIUS_SCALE, MOLSURF_LEVEL};
use orbitfield::compute::wgpu::marching_cubes::{GpuLattice, GpuMesh, McCompute, MeshCapacity, map_staging};
use orbitfield::compute::wgpu::molsurf::{DeviceAtoms, MolSurfCompute};
use orbitfield::model::Lattice;
use orbitfield::render::RenderContext;
use serde::Serialize;
use std::time::Instant;

use super::bench::median;

/// Timestamps written per frame: binning start and end, field start and end, extraction end.
const QUERIES_PER_FRAME: u32 = 5;

/// One system on the render device.
#[derive(Serialize, Debug, Clone)]
pub struct RenderDeviceMolSurf {
    pub adapter: String,
    /// Frame from host coordinates to the mesh's counters on the host (wall clock, median).
    pub frame_ms: f64,
    /// The positions written and waited for alone (wall clock, median).
    pub upload_ms: f64,
    /// GPU timestamps (medians), when the adapter has them: binning (count, scan, scatter), field,
    /// extraction (marching cubes and the counter copy).
    pub binning_ms: Option<f64>,
    pub field_ms: Option<f64>,
    pub extraction_ms: Option<f64>,
    pub triangles: u64,
    /// Largest |device - cpu| / cpu over points where the CPU value exceeds 1e-3, and how many such
    /// points differ by more than 1e-5 relative (points on an atom's truncation radius may differ by
    /// its truncated tail), when the CPU engine's lattice was computed.
    pub max_rel_err_vs_cpu: Option<f64>,
    pub points_beyond_1e5: Option<usize>,
}

/// The frames of one system: `positions`/`radii` (Angstrom) on `lattice`, `repeats` timed frames;
/// `cpu_values`, when given, the CPU engine's lattice to compare the device's with.
pub fn run(
    rc: &RenderContext,
    positions: &[[f64; 3]],
    radii: &[f64],
    lattice: &Lattice,
    repeats: usize,
    cpu_values: Option<&[f32]>,
) -> Result<RenderDeviceMolSurf> {
    if !rc.capabilities.mc_compute_supported {
        bail!(
            "the adapter cannot run the marching-cubes pass ({})",
            rc.capabilities.summary()
        );
    }
    let (device, queue) = (&rc.device, &rc.queue);
    let pass = MolSurfCompute::new(device);
    let mc = McCompute::new(device);
    let mut atoms = DeviceAtoms::new(device, radii, DEFAULT_RADIUS_SCALE)?;
    let pos32: Vec<[f32; 3]> = positions.iter().map(|p| p.map(|x| x as f32)).collect();
    pass.fits(device, lattice, &atoms)?;
    let values = MolSurfCompute::create_values(device, lattice);
    let gpu_lattice = GpuLattice::from_buffer(values.clone(), *lattice)?;
    let frames = repeats.max(1) + 2;
    let timestamps = device.features().contains(wgpu::Features::TIMESTAMP_QUERY);
    let n_queries = QUERIES_PER_FRAME * frames as u32;
    let query_set = timestamps.then(|| {
        device.create_query_set(&wgpu::QuerySetDescriptor {
            label: Some("molsurf bench timestamps"),
            ty: wgpu::QueryType::Timestamp,
            count: n_queries,
        })
    });
    let staging = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("molsurf bench counters"),
        size: 8,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut capacity = MeshCapacity::guess(lattice);
    let mut mesh: Option<GpuMesh> = None;
    let mut frame_t = Vec::new();
    let mut triangles = 0u64;
    for f in 0..frames {
        let t0 = Instant::now();
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("molsurf bench frame"),
        });
        let q0 = QUERIES_PER_FRAME * f as u32;
        pass.encode(
            device,
            queue,
            &mut encoder,
            &mut atoms,
            &pos32,
            lattice,
            &values,
            query_set.as_ref().map(|qs| (qs, q0)),
        )?;
        let m = mc.encode_reusing(
            device,
            &mut encoder,
            &gpu_lattice,
            MOLSURF_LEVEL,
            1.0,
            capacity,
            mesh.take(),
        )?;
        encoder.copy_buffer_to_buffer(&m.counters, 0, &staging, 0, 8);
        if let Some(qs) = &query_set {
            // The end of the extraction: a pass that only writes a timestamp, after the others.
            encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("molsurf bench extraction end"),
                timestamp_writes: Some(wgpu::ComputePassTimestampWrites {
                    query_set: qs,
                    beginning_of_pass_write_index: Some(q0 + 4),
                    end_of_pass_write_index: None,
                }),
            });
        }
        queue.submit([encoder.finish()]);
        let raw = map_staging(device, &staging)?;
        let (v, i) = (word(&raw, 0), word(&raw, 1));
        let dt = t0.elapsed().as_secs_f64() * 1e3;
        if v > m.capacity.vertices || i > m.capacity.indices {
            if f + 1 >= frames {
                bail!("the surface needed {v} vertices and {i} indices, more than the buffers hold");
            }
            eprintln!("note: frame {f}: the surface needs {v} vertices and {i} indices; buffers grown");
        }
        // Sized from this frame's surface with room to grow (a frame of another system may need more).
        capacity = MeshCapacity {
            vertices: v.saturating_add(v / 4).saturating_add(4096),
            indices: i.saturating_add(i / 4).saturating_add(12_288),
        };
        triangles = u64::from(i / 3);
        mesh = Some(m);
        if f >= 2 {
            frame_t.push(dt);
        }
    }
    // The upload alone: the same positions written and waited for.
    let mut upload_t = Vec::new();
    let upload_buf = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("molsurf bench upload"),
        size: (12 * pos32.len() as u64).max(16),
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    for r in 0..frames {
        let t0 = Instant::now();
        queue.write_buffer(&upload_buf, 0, bytemuck::cast_slice(&pos32));
        queue.submit([]);
        device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| anyhow!("waiting for the device: {e}"))?;
        if r >= 2 {
            upload_t.push(t0.elapsed().as_secs_f64() * 1e3);
        }
    }
    let (mut binning_ms, mut field_ms, mut extraction_ms) = (None, None, None);
    if let Some(qs) = &query_set {
        let ms = super::render_orbital_bench::read_timestamps_ms(device, queue, qs, n_queries)?;
        let stage = |a: usize, b: usize| {
            median(
                ms.chunks_exact(QUERIES_PER_FRAME as usize)
                    .skip(2)
                    .map(|q| (q[b] - q[a]).max(0.0))
                    .collect(),
            )
        };
        binning_ms = Some(stage(0, 1));
        field_ms = Some(stage(2, 3));
        extraction_ms = Some(stage(3, 4));
    }
    let (mut max_rel, mut beyond) = (None, None);
    if let Some(cpu) = cpu_values {
        let got = orbitfield::compute::wgpu::orbital::read_values(device, queue, &values, lattice.n_points())?;
        let (worst, count) = rel_errors(&got, cpu);
        max_rel = Some(worst);
        beyond = Some(count);
    }
    Ok(RenderDeviceMolSurf {
        adapter: rc.capabilities.adapter.clone(),
        frame_ms: median(frame_t),
        upload_ms: median(upload_t),
        binning_ms,
        field_ms,
        extraction_ms,
        triangles,
        max_rel_err_vs_cpu: max_rel,
        points_beyond_1e5: beyond,
    })
}

/// Largest |got - cpu| / cpu over points where the CPU value exceeds 1e-3, and how many of those
/// differ by more than 1e-5 relative.
pub fn rel_errors(got: &[f32], cpu: &[f32]) -> (f64, usize) {
    let (mut worst, mut count) = (0.0f64, 0usize);
    for (&g, &c) in got.iter().zip(cpu) {
        let c = f64::from(c);
        if c > 1e-3 {
            let e = (f64::from(g) - c).abs() / c;
            worst = worst.max(e);
            count += usize::from(e > 1e-5);
        }
    }
    (worst, count)
}

fn word(raw: &[u8], k: usize) -> u32 {
    raw.get(4 * k..4 * k + 4)
        .map_or(u32::MAX, |b| u32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
}
