//! `orbitfield bench --playback --orbitals-on render-device`: the orbital series of the playback
//! bench (threonine MD, C60) played with each frame's HOMO computed on the render device by the WGSL
//! orbital pass (`compute::wgpu::orbital`) and both lobes extracted from that buffer by the marching-cubes
//! pass (`compute::wgpu::marching_cubes`), with nothing read back inside the timed loop. Reports frames/s of
//! field + both lobes (host packing, submission, waited for), the field pass alone (GPU timestamps
//! where the adapter has them, else the wall clock of the pass alone, waited for), and the CPU engine
//! on the same frames' lattices in the same run (the peer of the ratio).

use anyhow::{Result, anyhow, bail};
use orbitfield::app::document::orbital_lattice;
use orbitfield::compute::cpu::evaluate_grid;
use orbitfield::compute::wgpu::marching_cubes::{GpuLattice, GpuMesh, McCompute, MeshCapacity};
use orbitfield::compute::wgpu::orbital::{MoCompute, MoPassVariant};
use orbitfield::compute::wgpu::packed_mo::PackedMoField;
use orbitfield::compute::{Field, FieldInput, FieldJob};
use orbitfield::io::System;
use orbitfield::model::units::angstrom_from_bohr3;
use orbitfield::model::{Lattice, Spin, Wavefunction};
use orbitfield::render::RenderContext;
use serde::Serialize;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One series played with the orbital pass.
#[derive(Serialize, Debug)]
pub struct RenderDeviceResult {
    pub name: String,
    pub adapter: String,
    /// The orbital pass's variant (`MoPassVariant::name`).
    pub variant: String,
    pub lattice_dims: [usize; 3],
    pub frames_in_series: usize,
    pub frames_timed: usize,
    /// Frames per second of field + both lobes (pack on the host, passes, waited for).
    pub fps: f64,
    /// Mean host time to pack the frame's basis and coefficients, milliseconds.
    pub pack_ms: f64,
    /// Mean time of the orbital pass alone, milliseconds, and how it was measured.
    pub field_ms: f64,
    pub field_timing: String,
    /// Mean time of the CPU engine for the same field on the same lattice (all cores), milliseconds.
    pub cpu_field_ms: f64,
    pub cpu_frames: usize,
    /// `cpu_field_ms / field_ms`.
    pub speedup_vs_cpu: f64,
    /// Triangles of the two lobes of the last frame (read after the timed loop).
    pub triangles: [u32; 2],
}

/// The device the bench runs on: the render context's own adapter and device (timestamp queries
/// where the adapter has them, see `render::context::device_descriptor`), refused when the adapter
/// cannot run the orbital pass.
fn device() -> Result<(wgpu::Device, wgpu::Queue, String)> {
    let rc = RenderContext::headless(1).map_err(|e| anyhow!("{e}"))?;
    let c = &rc.capabilities;
    if !c.orbital_pass_supported {
        bail!("the adapter cannot run the orbital pass ({})", c.summary());
    }
    let name = c.adapter.clone();
    Ok((rc.device, rc.queue, name))
}

/// The `n` timestamps of `query_set`, resolved and read back, in milliseconds (from the device's
/// own zero).
pub(super) fn read_timestamps_ms(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    query_set: &wgpu::QuerySet,
    n: u32,
) -> Result<Vec<f64>> {
    let resolve = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("bench timestamps"),
        size: 8 * u64::from(n),
        usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    encoder.resolve_query_set(query_set, 0..n, &resolve, 0);
    queue.submit([encoder.finish()]);
    let raw = orbitfield::compute::wgpu::orbital::read_bytes(device, queue, &resolve, 8 * u64::from(n))?;
    let period_ms = f64::from(queue.get_timestamp_period()) * 1e-6;
    Ok(raw
        .chunks_exact(8)
        .map(|b| u64::from_ne_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]) as f64 * period_ms)
        .collect())
}

/// The frame's HOMO (alpha) and the viewer's lattice for it.
fn frame_field(wf: &Wavefunction, points: u32) -> Result<(Field, Lattice)> {
    let index = wf.homo(Spin::Alpha).ok_or_else(|| anyhow!("no occupied orbital"))?;
    let positions: Vec<[f32; 3]> = wf
        .atoms
        .iter()
        .map(|a| angstrom_from_bohr3(a.position_bohr).map(|x| x as f32))
        .collect();
    let lattice = orbital_lattice(&positions, points).ok_or_else(|| anyhow!("no atoms"))?;
    Ok((
        Field::Orbital {
            spin: Spin::Alpha,
            index,
        },
        lattice,
    ))
}

/// Plays `frames` frames of `system`'s wavefunctions (cycling) at `points` along the longest axis.
pub fn run_case(
    name: &str,
    system: System,
    points: u32,
    frames: usize,
    variant: MoPassVariant,
) -> Result<RenderDeviceResult> {
    let wfs: Vec<Arc<Wavefunction>> = system.wavefunctions.into_iter().map(Arc::new).collect();
    let n = wfs.len();
    if n == 0 || frames == 0 {
        bail!("{name}: no wavefunctions to play");
    }
    let (device, queue, adapter) = device()?;
    let mo = MoCompute::new(&device).with_variant(variant);
    let mc = McCompute::new(&device);
    let timestamps = device.features().contains(wgpu::Features::TIMESTAMP_QUERY);
    let n_queries = 2 * frames as u32;
    let query_set = timestamps.then(|| {
        device.create_query_set(&wgpu::QuerySetDescriptor {
            label: Some("orbital pass timestamps"),
            ty: wgpu::QueryType::Timestamp,
            count: n_queries,
        })
    });
    // The jittered frames' lattices differ by a plane now and then: the values buffer and the lobes'
    // mesh buffers are kept while large enough (grown, never shrunk), as the viewer's reuse does, so
    // a frame allocates (and the device zero-fills) nothing.
    let mut values: Option<wgpu::Buffer> = None;
    let mut capacity = MeshCapacity {
        vertices: 0,
        indices: 0,
    };
    let mut meshes: [Option<GpuMesh>; 2] = [None, None];
    let mut dims = [0; 3];
    let mut pack_t = Duration::ZERO;
    // One frame: pack, orbital pass, both lobes, submit, wait. `query`: timestamp pair to write.
    let mut step = |f: usize, query: Option<u32>, pack_t: &mut Duration| -> Result<()> {
        let wf = wfs.get(f % n).ok_or_else(|| anyhow!("frame {f}"))?;
        let t0 = Instant::now();
        let (field, lattice) = frame_field(wf, points)?;
        let packed = PackedMoField::new(wf, &field, lattice.origin_bohr)?;
        *pack_t += t0.elapsed();
        dims = lattice.dims;
        let need_bytes = (4 * lattice.n_points() as u64).max(16);
        let buf = match values.take() {
            Some(b) if b.size() >= need_bytes => b,
            _ => MoCompute::create_values(&device, &lattice),
        };
        values = Some(buf.clone());
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("orbital playback frame"),
        });
        let writes = match (&query_set, query) {
            (Some(qs), Some(q)) => Some(wgpu::ComputePassTimestampWrites {
                query_set: qs,
                beginning_of_pass_write_index: Some(q),
                end_of_pass_write_index: Some(q + 1),
            }),
            _ => None,
        };
        mo.encode(&device, &mut encoder, &packed, &lattice, &buf, writes)?;
        let gpu_lattice = GpuLattice::from_buffer(buf, lattice)?;
        let guess = MeshCapacity::guess(&lattice);
        if guess.vertices > capacity.vertices || guess.indices > capacity.indices {
            capacity = MeshCapacity {
                vertices: guess.vertices.max(capacity.vertices),
                indices: guess.indices.max(capacity.indices),
            };
        }
        for (k, (level, sign)) in [(0.05f32, 1.0f32), (-0.05, -1.0)].into_iter().enumerate() {
            let slot = meshes.get_mut(k).ok_or_else(|| anyhow!("lobe {k}"))?;
            let prev = slot.take();
            let mesh = mc.encode_reusing(&device, &mut encoder, &gpu_lattice, level, sign, capacity, prev)?;
            *slot = Some(mesh);
        }
        queue.submit([encoder.finish()]);
        device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| anyhow!("waiting for the device: {e}"))?;
        Ok(())
    };
    // Warm-up: pipelines, first allocations.
    let mut warm_up = Duration::ZERO;
    for f in 0..2 {
        step(f, None, &mut warm_up)?;
    }
    let t = Instant::now();
    for i in 0..frames {
        step(2 + i, Some(2 * i as u32), &mut pack_t)?;
    }
    let seconds = t.elapsed().as_secs_f64();
    // After the timed loop: the surfaces' sizes (and that they fit), the field pass's own time.
    let mut triangles = [0u32; 2];
    for (t, m) in triangles.iter_mut().zip(&meshes) {
        if let Some(m) = m {
            let (v, i) = m.read_counts(&device, &queue)?;
            if v > m.capacity.vertices || i > m.capacity.indices {
                bail!("{name}: a lobe needed {v} vertices and {i} indices, more than the buffers hold");
            }
            *t = i / 3;
        }
    }
    let (field_ms, field_timing) = match &query_set {
        Some(qs) => {
            let ms = read_timestamps_ms(&device, &queue, qs, n_queries)?;
            let total: f64 = ms.chunks_exact(2).map(|p| (p[1] - p[0]).max(0.0)).sum();
            (total / frames as f64, "GPU timestamps".to_string())
        }
        None => {
            // The pass alone, waited for, on the frames of the series.
            let reps = frames.min(10);
            let mut total = Duration::ZERO;
            for i in 0..reps {
                let wf = wfs.get(i % n).ok_or_else(|| anyhow!("frame {i}"))?;
                let (field, lattice) = frame_field(wf, points)?;
                let packed = PackedMoField::new(wf, &field, lattice.origin_bohr)?;
                let buf = MoCompute::create_values(&device, &lattice);
                let mut encoder = device.create_command_encoder(&Default::default());
                mo.encode(&device, &mut encoder, &packed, &lattice, &buf, None)?;
                let t0 = Instant::now();
                queue.submit([encoder.finish()]);
                device
                    .poll(wgpu::PollType::wait_indefinitely())
                    .map_err(|e| anyhow!("waiting for the device: {e}"))?;
                total += t0.elapsed();
            }
            (
                total.as_secs_f64() * 1e3 / reps as f64,
                "wall clock of the pass alone (no timestamp queries)".to_string(),
            )
        }
    };
    // The peer: the CPU engine on the same fields and lattices.
    let cpu_frames = frames.min(3);
    let mut cpu_t = Duration::ZERO;
    for i in 0..cpu_frames {
        let wf = wfs.get((2 + i) % n).ok_or_else(|| anyhow!("frame {i}"))?;
        let (field, lattice) = frame_field(wf, points)?;
        let t0 = Instant::now();
        evaluate_grid(&FieldJob {
            field,
            lattice,
            input: FieldInput::Wavefunction(wf.clone()),
        })?;
        cpu_t += t0.elapsed();
    }
    let cpu_field_ms = cpu_t.as_secs_f64() * 1e3 / cpu_frames.max(1) as f64;
    Ok(RenderDeviceResult {
        name: name.to_string(),
        adapter,
        variant: variant.name().to_string(),
        lattice_dims: dims,
        frames_in_series: n,
        frames_timed: frames,
        fps: frames as f64 / seconds,
        pack_ms: pack_t.as_secs_f64() * 1e3 / frames as f64,
        field_ms,
        field_timing,
        cpu_field_ms,
        cpu_frames,
        speedup_vs_cpu: cpu_field_ms / field_ms,
        triangles,
    })
}
