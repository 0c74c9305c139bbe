//! `orbitfield bench --cartoon`: DSSP and cartoon mesh per frame, wall-clock medians on the rayon
//! pool (all cores, or `RAYON_NUM_THREADS`; each line names the thread count). Cases: adk (the first frame of `tests/data/md/adk_dims.dcd`, 214 residues) and
//! copies of it on a grid up to 100,000 residues, each with DSSP alone, the mesh alone (from given
//! codes) and both together, as the viewer's cartoon worker runs them for every frame: into the
//! previous frame's buffers (as the worker recycles them), and into fresh memory. DSSP is also
//! split by pass (H-bond search and the rest). With `--cartoon-on render-device`, also the mesh
//! written by the compute passes on the render device (`compute::wgpu::cartoon`): the CPU's
//! per-residue inputs, their upload alone, the passes (GPU timestamps where the adapter has them),
//! the whole stage as a frame waits for it, and DSSP then that stage in sequence, as the viewer's
//! cartoon worker and frame run them.

use anyhow::{Context, Result, anyhow, bail};
use orbitfield::analysis::dssp::SecondaryStructure;
use orbitfield::analysis::dssp::{DsspOptions, DsspPassTimes, DsspWorkspace, host_pass_times};
use orbitfield::analysis::polymer::{CartoonWorkspace, Coloring, Polymer, replicate_on_grid};
use orbitfield::compute::cuda::dssp::{DeviceDsspTimes, DeviceDsspWorkspace, DsspRoute};
use orbitfield::compute::cuda::{self, CudaEngine};
use orbitfield::compute::wgpu::cartoon::{CartoonBuffers, CartoonCompute, PassTimestamps};
use orbitfield::compute::wgpu::cartoon_inputs::CartoonRings;
use orbitfield::model::Structure;
use orbitfield::render::RenderContext;
use orbitfield::surface::MeshData;
use orbitfield::surface::cartoon::{self, CartoonParams};
use serde::Serialize;
use std::time::Instant;

/// One system timed.
#[derive(Serialize, Debug)]
pub struct CartoonResult {
    pub name: String,
    pub residues: usize,
    pub threads: usize,
    pub dssp_ms: f64,
    /// DSSP by pass (medians over the repeats of each pass's wall-clock time).
    pub dssp_passes: DsspPassTimes,
    pub mesh_ms: f64,
    /// DSSP and mesh into the previous frame's buffers.
    pub total_ms: f64,
    /// DSSP and mesh into fresh memory.
    pub fresh_ms: f64,
    pub vertices: usize,
    pub triangles: usize,
    /// Bytes of one frame's mesh (positions, normals, colours, values, indices): what the mesh step
    /// writes to memory per frame, its floor on a machine's memory bandwidth.
    pub mesh_bytes: usize,
    /// The mesh on the render device, when asked for.
    pub device: Option<DeviceMeshResult>,
}

/// The cartoon mesh written on the render device, per frame (medians).
#[derive(Serialize, Debug)]
pub struct DeviceMeshResult {
    pub adapter: String,
    /// The per-residue inputs on the CPU from the codes, into the previous frame's buffers
    /// (`Polymer::rings_for`, with the per-ring inputs of the pieces that keep that path:
    /// nucleic-acid tubes, base slabs, protein tubes lacking carbonyls), the counterpart of
    /// `mesh_ms`'s segments and mesh.
    pub rings_ms: f64,
    /// The same inputs by way of the segments (`Polymer::segments`, then
    /// `compute::wgpu::cartoon_inputs::rings_into`).
    pub segments_rings_ms: f64,
    /// The inputs written to the device and waited for, alone.
    pub upload_ms: f64,
    /// The ring, vertex and triangle passes, from GPU timestamps (`None` without timestamp
    /// queries).
    pub pass_ms: Option<f64>,
    /// Inputs written, passes recorded, submitted and waited for (wall clock).
    pub device_ms: f64,
    /// The mesh stage as a frame sees it: `rings_ms + device_ms`.
    pub stage_ms: f64,
    /// Bytes of the inputs that cross to the device per frame.
    pub input_bytes: usize,
    /// DSSP, segments, inputs, upload, passes, waited for: one frame's secondary structure and
    /// cartoon mesh in sequence, as the viewer's cartoon worker and frame run them (median).
    pub frame_ms: f64,
    /// The same with DSSP on the CUDA device, where there is one.
    pub cuda_dssp: Option<CudaDsspResult>,
}

/// DSSP on the CUDA device (`CudaEngine::dssp_frame`), per frame (medians).
#[derive(Serialize, Debug)]
pub struct CudaDsspResult {
    pub device: String,
    /// Which path the frames took ("device", or the CPU path and why).
    pub route: String,
    /// The codes equal the CPU path's.
    pub codes_equal: bool,
    pub dssp_ms: f64,
    /// Backbone atoms into page-locked memory; upload, kernels and download; the host's finishing
    /// passes.
    pub gather_ms: f64,
    pub device_ms: f64,
    pub finish_ms: f64,
    /// The finishing passes (ladders under bridges; helices, turns, bends and polyproline II,
    /// fused, under helices; the codes back in residue order under output).
    pub finish_passes: DsspPassTimes,
    /// DSSP on the CUDA device, then segments, inputs, upload, passes, waited for.
    pub frame_ms: f64,
}

/// The median of each pass over `times`.
fn median_passes(times: &[DsspPassTimes]) -> DsspPassTimes {
    let arrays: Vec<[f64; 6]> = times.iter().map(DsspPassTimes::to_array).collect();
    DsspPassTimes::from_array(std::array::from_fn(|k| {
        let mut v: Vec<f64> = arrays.iter().filter_map(|a| a.get(k).copied()).collect();
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
    }))
}

fn median_ms(repeats: usize, mut f: impl FnMut()) -> f64 {
    f();
    let mut times: Vec<f64> = (0..repeats.max(1))
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times.get(times.len() / 2).copied().unwrap_or(f64::NAN)
}

fn case(
    name: String,
    structure: &Structure,
    positions: &[[f32; 3]],
    repeats: usize,
    rc: Option<&RenderContext>,
    cuda: Option<&CudaEngine>,
) -> Result<CartoonResult> {
    let polymer = Polymer::new(structure);
    let params = CartoonParams::for_residue_count(polymer.residue_count());
    let options = DsspOptions::default();
    let secondary = polymer.protein.assign(positions, &options);
    // Into the previous frame's buffers, as the cartoon worker's thread keeps them.
    let mut workspace = DsspWorkspace::default();
    let mut codes = Vec::new();
    let mut pass_times = Vec::new();
    let dssp_ms = median_ms(repeats, || {
        polymer
            .protein
            .assign_into(positions, &options, &mut workspace, &mut codes);
        pass_times.push(workspace.times());
        std::hint::black_box(&codes);
    });
    // The first call (the warm-up) filled the buffers.
    let dssp_passes = median_passes(pass_times.get(1..).unwrap_or(&[]));
    // Into the previous frame's buffers, as the viewer's cartoon worker recycles them.
    let mut mesh = MeshData::default();
    let mesh_ms = median_ms(repeats, || {
        let segments = polymer.segments(positions, &secondary, Coloring::SecondaryStructure, None);
        cartoon::build_into(&segments, &params, &mut mesh);
        std::hint::black_box(&mesh);
    });
    let total_ms = median_ms(repeats, || {
        std::hint::black_box(polymer.mesh_into(positions, Coloring::SecondaryStructure, None, &params, &mut mesh));
    });
    let fresh_ms = median_ms(repeats, || {
        std::hint::black_box(polymer.mesh(positions, Coloring::SecondaryStructure, None, &params));
    });
    let (vertices, triangles) = (mesh.positions_angstrom.len(), mesh.indices.len() / 3);
    let mesh_bytes = std::mem::size_of_val(mesh.positions_angstrom.as_slice())
        + std::mem::size_of_val(mesh.normals.as_slice())
        + std::mem::size_of_val(mesh.colors_rgba8.as_slice())
        + std::mem::size_of_val(mesh.values.as_slice())
        + std::mem::size_of_val(mesh.indices.as_slice());
    let device = match rc {
        Some(rc) => Some(device_case(
            rc, &polymer, positions, &secondary, &params, &mesh, repeats, cuda,
        )?),
        None => None,
    };
    Ok(CartoonResult {
        name,
        residues: polymer.residue_count(),
        threads: rayon::current_num_threads(),
        dssp_ms,
        dssp_passes,
        mesh_ms,
        total_ms,
        fresh_ms,
        vertices,
        triangles,
        mesh_bytes,
        device,
    })
}

/// The device mesh of one system: the CPU's ring inputs, their upload, the passes; the mesh read
/// back once and checked against `cpu` (counts and indices equal, positions within 1e-3 A). With
/// `cuda`, also DSSP on that device and the frame with it.
#[allow(clippy::too_many_arguments)]
fn device_case(
    rc: &RenderContext,
    polymer: &Polymer,
    positions: &[[f32; 3]],
    secondary: &[SecondaryStructure],
    params: &CartoonParams,
    cpu: &MeshData,
    repeats: usize,
    cuda: Option<&CudaEngine>,
) -> Result<DeviceMeshResult> {
    let (device, queue) = (&rc.device, &rc.queue);
    let pass = CartoonCompute::new(device);
    let mut rings = CartoonRings::default();
    let segments_rings_ms = median_ms(repeats, || {
        let segments = polymer.segments(positions, secondary, Coloring::SecondaryStructure, None);
        orbitfield::compute::wgpu::cartoon_inputs::rings_into(&segments, params, &mut rings);
        std::hint::black_box(&rings);
    });
    // As the viewer's cartoon worker makes them: from the codes, into kept buffers.
    let mut cartoon_ws = CartoonWorkspace::default();
    let rings_ms = median_ms(repeats, || {
        polymer.rings_for(
            positions,
            secondary,
            Coloring::SecondaryStructure,
            None,
            params,
            &mut rings,
            &mut cartoon_ws,
        );
        std::hint::black_box(&rings);
    });
    let mut buffers = CartoonBuffers::default();
    let mesh = pass.build(device, queue, &rings, &mut buffers)?;
    let back = mesh.read_back(device, queue)?;
    let close = back.indices == cpu.indices
        && back.positions_angstrom.len() == cpu.positions_angstrom.len()
        && back
            .positions_angstrom
            .iter()
            .zip(&cpu.positions_angstrom)
            .all(|(a, b)| a.iter().zip(b).all(|(x, y)| (x - y).abs() <= 1e-3));
    if !close {
        bail!("the device's cartoon mesh differs from the CPU's");
    }
    let frames = repeats.max(1) + 2;
    let timestamps = device.features().contains(wgpu::Features::TIMESTAMP_QUERY);
    let n_queries = 2 * frames as u32;
    let query_set = timestamps.then(|| {
        device.create_query_set(&wgpu::QuerySetDescriptor {
            label: Some("cartoon bench timestamps"),
            ty: wgpu::QueryType::Timestamp,
            count: n_queries,
        })
    });
    let wait = || {
        device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| anyhow!("waiting for the device: {e}"))
    };
    let mut device_t = Vec::new();
    for f in 0..frames {
        let t = Instant::now();
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("cartoon bench frame"),
        });
        let stamps = query_set.as_ref().map(|qs| PassTimestamps {
            query_set: qs,
            begin: 2 * f as u32,
            end: 2 * f as u32 + 1,
        });
        pass.encode(device, queue, &mut encoder, &rings, &mut buffers, stamps)?;
        queue.submit([encoder.finish()]);
        wait()?;
        if f >= 2 {
            device_t.push(t.elapsed().as_secs_f64() * 1e3);
        }
    }
    // The inputs alone, written into buffers of their size and waited for.
    let inputs: [&[u8]; 4] = [
        bytemuck::cast_slice(&rings.pieces),
        bytemuck::cast_slice(&rings.residues),
        bytemuck::cast_slice(&rings.host_records),
        bytemuck::cast_slice(&rings.host_bands),
    ];
    let scratch: Vec<wgpu::Buffer> = inputs
        .iter()
        .map(|raw| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("cartoon bench upload"),
                size: (raw.len() as u64).max(16).next_multiple_of(4),
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        })
        .collect();
    let mut upload_t = Vec::new();
    for r in 0..frames {
        let t = Instant::now();
        for (b, raw) in scratch.iter().zip(inputs) {
            if !raw.is_empty() {
                queue.write_buffer(b, 0, raw);
            }
        }
        queue.submit([]);
        wait()?;
        if r >= 2 {
            upload_t.push(t.elapsed().as_secs_f64() * 1e3);
        }
    }
    let pass_ms = match &query_set {
        Some(qs) => {
            let ms = super::render_orbital_bench::read_timestamps_ms(device, queue, qs, n_queries)?;
            Some(median(
                ms.chunks_exact(2).skip(2).map(|q| (q[1] - q[0]).max(0.0)).collect(),
            ))
        }
        None => None,
    };
    let device_ms = median(device_t);
    let input_bytes = rings.input_bytes();
    drop(scratch);
    // DSSP then the device stage, in sequence, as a frame runs them.
    // The mesh stage of one frame from its codes: the inputs into kept buffers, the passes, waited
    // for; and the median of `frames` frames after two to warm up.
    let mut mesh_stage = |codes: &[SecondaryStructure]| -> Result<()> {
        polymer.rings_for(
            positions,
            codes,
            Coloring::SecondaryStructure,
            None,
            params,
            &mut rings,
            &mut cartoon_ws,
        );
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("cartoon bench frame"),
        });
        pass.encode(device, queue, &mut encoder, &rings, &mut buffers, None)?;
        queue.submit([encoder.finish()]);
        wait().map(|_| ())
    };
    let time_frames = |frame: &mut dyn FnMut() -> Result<()>| -> Result<f64> {
        let mut times = Vec::new();
        for f in 0..frames {
            let t = Instant::now();
            frame()?;
            if f >= 2 {
                times.push(t.elapsed().as_secs_f64() * 1e3);
            }
        }
        Ok(median(times))
    };
    let options = DsspOptions::default();
    let mut dssp_ws = DsspWorkspace::default();
    let mut codes = Vec::new();
    let frame_ms = time_frames(&mut || {
        polymer
            .protein
            .assign_into(positions, &options, &mut dssp_ws, &mut codes);
        mesh_stage(&codes)
    })?;
    let cuda_dssp = match cuda {
        Some(engine) => {
            let mut ws = DeviceDsspWorkspace::default();
            let mut route = DsspRoute::Device;
            let mut parts = Vec::new();
            let mut failure = None;
            let dssp_ms = median_ms(repeats, || {
                match engine.dssp_frame(&polymer.protein, positions, &options, &mut ws, &mut codes) {
                    Ok(r) => route = r,
                    Err(e) => failure = Some(e),
                }
                parts.push((ws.times, host_pass_times(&ws)));
            });
            if let Some(e) = failure {
                bail!("DSSP on {}: {e}", engine.device_name());
            }
            let codes_equal = codes == secondary;
            let parts = parts.get(1..).unwrap_or(&[]);
            let part = |f: fn(&DeviceDsspTimes) -> f64| median(parts.iter().map(|p| f(&p.0)).collect());
            let finish_passes = median_passes(&parts.iter().map(|p| p.1).collect::<Vec<_>>());
            let frame_ms = time_frames(&mut || {
                engine
                    .dssp_frame(&polymer.protein, positions, &options, &mut ws, &mut codes)
                    .map_err(|e| anyhow!("DSSP on {}: {e}", engine.device_name()))?;
                mesh_stage(&codes)
            })?;
            Some(CudaDsspResult {
                device: engine.device_name().to_string(),
                route: match route {
                    DsspRoute::Device => "device".to_string(),
                    DsspRoute::Cpu(why) => format!("CPU ({why})"),
                },
                codes_equal,
                dssp_ms,
                gather_ms: part(|t| t.gather_ms),
                device_ms: part(|t| t.device_ms),
                finish_ms: part(|t| t.finish_ms),
                finish_passes,
                frame_ms,
            })
        }
        None => None,
    };
    Ok(DeviceMeshResult {
        cuda_dssp,
        segments_rings_ms,
        adapter: rc.capabilities.adapter.clone(),
        rings_ms,
        upload_ms: median(upload_t),
        pass_ms,
        device_ms,
        stage_ms: rings_ms + device_ms,
        input_bytes,
        frame_ms,
    })
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

/// Times adk and its grids of copies (`residue_targets`: residue counts to reach, e.g. 100,000).
pub fn run(residue_targets: &[usize], repeats: usize, on_render_device: bool) -> Result<Vec<CartoonResult>> {
    let rc = if on_render_device {
        let rc = RenderContext::headless(1).map_err(|e| anyhow!("no render device: {e}"))?;
        if !rc.capabilities.cartoon_pass_supported() {
            bail!("the adapter runs no compute passes ({})", rc.capabilities.summary());
        }
        Some(rc)
    } else {
        None
    };
    let md = crate::test_data("md");
    let files = [md.join("adk.psf"), md.join("adk_dims.dcd")];
    let mut system = orbitfield::io::load(&files).context("reading adk")?;
    let positions = system.trajectory.frame(0)?.positions_angstrom;
    let structure = &system.structure;
    // DSSP on the CUDA device too, where there is one (with the render device's figures).
    let cuda = if on_render_device {
        cuda::discover(Some(&[0])).engines.into_iter().next()
    } else {
        None
    };
    let cuda = cuda.as_deref();
    let mut out = vec![case("adk".into(), structure, &positions, repeats, rc.as_ref(), cuda)?];
    let residues = out.first().map_or(1, |r| r.residues.max(1));
    for &target in residue_targets {
        let copies = target.div_ceil(residues).max(1);
        let (big, big_positions) = replicate_on_grid(structure, &positions, copies, 60.0);
        out.push(case(
            format!("adk x {copies}"),
            &big,
            &big_positions,
            repeats,
            rc.as_ref(),
            cuda,
        )?);
    }
    for r in &out {
        println!(
            "cartoon {:<14} {:>7} residues on {:>2} threads: DSSP {:>9.3} ms + mesh {:>9.3} ms; together {:>9.3} ms \
             ({:.0} frames/s; into fresh memory {:.3} ms; {} vertices, {} triangles, {:.1} MB)",
            r.name,
            r.residues,
            r.threads,
            r.dssp_ms,
            r.mesh_ms,
            r.total_ms,
            1e3 / r.total_ms,
            r.fresh_ms,
            r.vertices,
            r.triangles,
            r.mesh_bytes as f64 / 1e6
        );
        let passes: Vec<String> = DsspPassTimes::NAMES
            .iter()
            .zip(r.dssp_passes.to_array())
            .map(|(name, ms)| format!("{name} {ms:.3}"))
            .collect();
        println!("  DSSP by pass (ms): {}", passes.join(", "));
        if let Some(d) = &r.device {
            let pass = d.pass_ms.map_or("no timestamps".to_string(), |p| format!("{p:.3} ms"));
            println!(
                "cartoon {:<14} on the render device ({}): mesh stage {:.3} ms = residue inputs {:.3} ms + device {:.3} ms \
                 (inputs by way of segments {:.3} ms; upload alone {:.3} ms of {:.1} MB; passes {pass}); \
                 DSSP then mesh stage, one frame: {:.3} ms",
                r.name,
                d.adapter,
                d.stage_ms,
                d.rings_ms,
                d.device_ms,
                d.segments_rings_ms,
                d.upload_ms,
                d.input_bytes as f64 / 1e6,
                d.frame_ms
            );
            if let Some(c) = &d.cuda_dssp {
                println!(
                    "cartoon {:<14} DSSP on {} ({}, codes {}): {:.3} ms = gather {:.3} + device {:.3} + finish {:.3}; \
                     DSSP there then mesh stage, one frame: {:.3} ms",
                    r.name,
                    c.device,
                    c.route,
                    if c.codes_equal {
                        "equal to the CPU's"
                    } else {
                        "DIFFER from the CPU's"
                    },
                    c.dssp_ms,
                    c.gather_ms,
                    c.device_ms,
                    c.finish_ms,
                    c.frame_ms
                );
                println!(
                    "  finish by pass (ms): ladders {:.3}, helices/turns/bends/polyproline {:.3}",
                    c.finish_passes.bridges_ms, c.finish_passes.helices_ms
                );
            }
        }
    }
    Ok(out)
}
