//! `orbitfield bench --molsurf --molsurf-colored-frames N`: a protein of N atoms played as a
//! trajectory with its molecular surface coloured by the per-frame Coulomb potential of its charges,
//! end to end, as the viewer does it on a render device with compute.
//!
//! The system is `bench --molsurf`'s (adk copies from `tests/data/md/adk_open.pqr`, the PQR's radii
//! and charges); each frame moves every atom by up to 0.25 A (a fixed pseudo-random walk). Per frame,
//! each stage waited for before the next is timed: the molecular-surface field of the new
//! coordinates, either on the host (a [`MolSurfFieldSource`]: the worker pool, the CUDA kernel where a
//! device is present, else the CPU engine) or on the render device (`compute::wgpu::molsurf`: the
//! positions uploaded, binned and summed there into the buffer the marching cubes reads, nothing
//! read back), its isosurface at 0.5 by the marching-cubes pass on the render device (with a host
//! field: the lattice uploaded first; counters read back), the potential of the frame's charges
//! at every vertex on the render device (`compute::wgpu::vertex_potential`, charges upload included), and
//! the draw of the coloured surface into a 1280x720 target. Frames per second are over the sum.
//! The peer, timed once on the last frame's vertices in the same run: the CPU path the viewer takes
//! without the pass (`analysis::vertex_values::potential_at_vertices`), with the largest
//! difference of the two; and the pass alone in the variant the run used
//! (`ORBITFIELD_VERTEX_POTENTIAL`, else the default) and in every variant
//! ([`VertexPotentialVariant::ALL`]: vertices per invocation, with and without the Newton step),
//! each with its largest difference from the CPU peer.

use anyhow::{Context, Result, anyhow, bail};
use orbitfield::analysis::vertex_values::{DIRECT_LIMIT_TERMS, potential_at_vertices};
use orbitfield::compute::PointCharges;
use orbitfield::compute::molsurf::{DEFAULT_RADIUS_SCALE, MOLSURF_LEVEL, MolSurfAtoms};
use orbitfield::compute::wgpu::marching_cubes::{GpuLattice, LobeBuffers, McCompute};
use orbitfield::compute::wgpu::molsurf::{DeviceAtoms, MolSurfCompute};
use orbitfield::compute::wgpu::vertex_potential::{GpuCharges, VertexPotential, VertexPotentialVariant, VertexValues};
use orbitfield::compute::{Field, FieldInput, FieldJob};
use orbitfield::jobs::{DeviceChoice, Pool, PoolConfig};
use orbitfield::model::Grid3;
use orbitfield::model::field::LatticeSpec;
use orbitfield::model::units::bohr_from_angstrom3;
use orbitfield::render::{Camera, GpuScene, MeshStyle, OffscreenTarget, RenderContext, render_once};
use serde::Serialize;
use std::sync::Arc;
use std::time::Instant;

/// Where the per-frame molecular-surface field comes from: a parameter of the scene, so another
/// engine (one on the render device) can be timed in the same pipeline.
pub trait MolSurfFieldSource {
    /// What computes the field, for the output.
    fn describe(&self) -> String;
    /// The field of `job`, on the host.
    fn field(&mut self, job: FieldJob) -> Result<Grid3>;
}

/// The viewer's path today: the worker pool (CUDA workers where a device is present, else the CPU
/// engine).
pub struct PoolSource {
    pool: Pool<u64>,
    next: u64,
}

impl PoolSource {
    pub fn new(preference: DeviceChoice) -> PoolSource {
        PoolSource {
            pool: Pool::new(PoolConfig {
                preference,
                ..PoolConfig::default()
            }),
            next: 0,
        }
    }
}

impl MolSurfFieldSource for PoolSource {
    fn describe(&self) -> String {
        let engines = self.pool.device_workers();
        if self.pool.has_gpu() {
            format!("worker pool ({})", engines.names().join(", "))
        } else {
            "worker pool (CPU engine)".into()
        }
    }

    fn field(&mut self, job: FieldJob) -> Result<Grid3> {
        self.next += 1;
        self.pool.compute_grid(self.next, job).map_err(|e| anyhow!("{e}"))
    }
}

/// One coloured playback.
#[derive(Serialize, Debug)]
pub struct ColoredPlaybackResult {
    pub atoms: usize,
    pub spacing_angstrom: f64,
    pub lattice_dims: [usize; 3],
    /// Mean vertices of the surface per frame.
    pub vertices: f64,
    pub frames_timed: usize,
    pub fps: f64,
    /// Means per frame (milliseconds).
    pub field_ms: f64,
    pub surface_ms: f64,
    pub potential_ms: f64,
    pub draw_ms: f64,
    /// The last frame's surface drawn again, best of five (no new mesh set up).
    pub draw_only_ms: f64,
    pub frame_ms: f64,
    /// Charge-vertex pairs per second of the potential stage.
    pub potential_pairs_per_s: f64,
    /// The peer: the CPU path the viewer takes without this pass
    /// (`analysis::vertex_values::potential_at_vertices`, all cores: direct sum up to 1e9 pairs,
    /// multilevel summation above), on the last frame's vertices read back (milliseconds, once).
    pub cpu_potential_ms: f64,
    /// How the CPU peer summed ("direct" or "multilevel"), and the largest
    /// |device - cpu| / max(|cpu|, 1e-3 hartree/e) over the vertices.
    pub cpu_method: String,
    pub max_rel_diff_vs_cpu: f64,
    /// The pass alone on the last frame's surface (charges in place; waited; best of three) in the
    /// variant the playback used, and in every variant with its largest difference from the CPU peer.
    pub pass_variant: String,
    pub pass_ms: f64,
    pub pass_variants: Vec<PassVariantTiming>,
    pub field_on: String,
    pub adapter: String,
    pub image_px: [u32; 2],
}

/// A small deterministic generator (xorshift) for the frames' displacements.
struct Walk(u64);

impl Walk {
    /// Uniform in -0.5..0.5.
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    }
}

/// Plays `frames` frames (after two untimed ones) of each system of `sizes` atoms.
pub fn run(
    sizes: &[usize],
    spacing_angstrom: f64,
    frames: usize,
    mut source: Option<&mut dyn MolSurfFieldSource>,
) -> Result<Vec<ColoredPlaybackResult>> {
    let rc = RenderContext::headless(4).map_err(|e| anyhow!("{e}"))?;
    if !rc.capabilities.mc_compute_supported {
        bail!(
            "the render device runs no compute passes ({}); the coloured playback needs them",
            rc.capabilities.summary()
        );
    }
    let mc = McCompute::new(&rc.device);
    let vp = VertexPotential::new(&rc.device);
    let size = [1280u32, 720u32];
    let target = OffscreenTarget::new(&rc, size);
    let field_on = source.as_ref().map_or_else(
        || format!("render device ({})", rc.capabilities.adapter),
        |s| s.describe(),
    );
    let molsurf_pass = source.is_none().then(|| MolSurfCompute::new(&rc.device));
    println!(
        "coloured playback: field by {field_on}; render device {}",
        rc.capabilities.adapter
    );
    let mut results = Vec::new();
    for &n in sizes {
        let (base, radii, charges) = super::molsurf_bench::adk_copies(n)?;
        let charges_e: Vec<f32> = charges.iter().map(|&q| q as f32).collect();
        let mut camera = Camera::default();
        let (mut lo, mut hi) = (glam::Vec3::splat(f32::INFINITY), glam::Vec3::splat(f32::NEG_INFINITY));
        for p in &base {
            let v = glam::Vec3::new(p[0] as f32, p[1] as f32, p[2] as f32);
            lo = lo.min(v);
            hi = hi.max(v);
        }
        camera.fit_to_bounds(lo, hi, size[0] as f32 / size[1] as f32);
        let mut scene = GpuScene::new(&rc);
        let mut walk = Walk(0x2545_f491_4f6c_dd1d ^ n as u64);
        let mut positions = base.clone();
        let mut lobes = LobeBuffers::default();
        let mut gpu_charges: Option<GpuCharges> = None;
        let mut values: Option<VertexValues> = None;
        let mut range: Option<[f32; 2]> = None;
        let mut dims = [0; 3];
        let mut last_field: Option<LastField> = None;
        // The render-device field: the atoms' Gaussians and binning buffers, and a lattice buffer
        // with room for the lattice to grow by a few planes as the atoms move.
        let mut device_atoms = match &molsurf_pass {
            Some(_) => Some(DeviceAtoms::new(&rc.device, &radii, DEFAULT_RADIUS_SCALE).map_err(|e| anyhow!("{e}"))?),
            None => None,
        };
        let mut device_values: Option<wgpu::Buffer> = None;
        // The lattice's padding depends on the radii alone.
        let padding_angstrom =
            MolSurfAtoms::from_radii_angstrom(&base, &radii, DEFAULT_RADIUS_SCALE)?.padding_angstrom();
        let (mut t_field, mut t_surface, mut t_potential, mut t_draw) = (0.0, 0.0, 0.0, 0.0);
        let mut vertices_sum = 0.0f64;
        let style = MeshStyle {
            color: [0.8, 0.8, 0.8],
            opacity: 1.0,
        };
        for frame in 0..frames + 2 {
            let timed = frame >= 2;
            for (p, b) in positions.iter_mut().zip(&base) {
                for k in 0..3 {
                    p[k] = b[k] + 0.5 * walk.next();
                }
            }
            let t0 = Instant::now();
            // The host's atoms (the pool's input) only where the host computes the field.
            let atoms = match source {
                Some(_) => Some(MolSurfAtoms::from_radii_angstrom(
                    &positions,
                    &radii,
                    DEFAULT_RADIUS_SCALE,
                )?),
                None => None,
            };
            let lattice = LatticeSpec::AroundAtoms {
                spacing_angstrom,
                padding_angstrom: atoms.as_ref().map_or(padding_angstrom, MolSurfAtoms::padding_angstrom),
            }
            .build(&positions)?;
            dims = lattice.dims;
            let field = match (source.as_deref_mut(), atoms, &molsurf_pass, device_atoms.as_mut()) {
                (Some(source), Some(atoms), _, _) => LastField::Host(source.field(FieldJob {
                    field: Field::MolSurf,
                    lattice,
                    input: FieldInput::Spheres(Arc::new(atoms)),
                })?),
                (None, _, Some(pass), Some(device_atoms)) => {
                    pass.fits(&rc.device, &lattice, device_atoms)
                        .map_err(|e| anyhow!("{e}"))?;
                    let need = 4 * lattice.n_points() as u64;
                    let values = match device_values.take() {
                        Some(b) if b.size() >= need => b,
                        _ => rc.device.create_buffer(&wgpu::BufferDescriptor {
                            label: Some("coloured playback molsurf lattice"),
                            size: need.saturating_add(need / 8).max(16),
                            usage: wgpu::BufferUsages::STORAGE
                                | wgpu::BufferUsages::COPY_SRC
                                | wgpu::BufferUsages::COPY_DST,
                            mapped_at_creation: false,
                        }),
                    };
                    device_values = Some(values.clone());
                    let mut encoder = rc.device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
                        label: Some("coloured playback molsurf"),
                    });
                    let pos32: Vec<[f32; 3]> = positions.iter().map(|p| p.map(|x| x as f32)).collect();
                    pass.encode(
                        &rc.device,
                        &rc.queue,
                        &mut encoder,
                        device_atoms,
                        &pos32,
                        &lattice,
                        &values,
                        None,
                    )
                    .map_err(|e| anyhow!("{e}"))?;
                    rc.queue.submit([encoder.finish()]);
                    rc.device
                        .poll(wgpu::PollType::wait_indefinitely())
                        .map_err(|e| anyhow!("{e}"))?;
                    LastField::Device(GpuLattice::from_buffer(values, lattice).map_err(|e| anyhow!("{e}"))?)
                }
                _ => bail!("no molecular-surface field source"),
            };
            let t1 = Instant::now();
            let field = last_field.insert(field);
            let [surface, _] = field.extract(&rc, &mc, &mut lobes)?;
            let t2 = Instant::now();
            let at: Vec<[f32; 3]> = positions.iter().map(|p| p.map(|x| x as f32)).collect();
            let q = match gpu_charges.take() {
                Some(g) => g.update(&rc.device, &rc.queue, &at, &charges_e),
                None => GpuCharges::upload(&rc.device, &at, &charges_e),
            }
            .map_err(|e| anyhow!("{e}"))?;
            let v = VertexValues::reuse_or_new(&rc.device, values.take(), surface.capacity.vertices);
            vp.run(&rc.device, &rc.queue, &surface, &q, &v)
                .map_err(|e| anyhow!("{e}"))?;
            rc.device
                .poll(wgpu::PollType::wait_indefinitely())
                .map_err(|e| anyhow!("{e}"))?;
            let t3 = Instant::now();
            let (n_vertices, _) = surface.read_counts(&rc.device, &rc.queue).map_err(|e| anyhow!("{e}"))?;
            if range.is_none() {
                let read = v.read(&rc.device, &rc.queue, n_vertices).map_err(|e| anyhow!("{e}"))?;
                let r = orbitfield::app::reps::value_range(read);
                scene.set_value_colors(&rc, r, orbitfield::render::colormap::Colormap::RedWhiteBlue);
                range = Some(r);
            }
            let t4 = Instant::now();
            scene.set_gpu_meshes_valued(&rc, vec![(surface, style, Some(v.clone()))]);
            render_once(&rc, &scene, &target, &camera);
            rc.device
                .poll(wgpu::PollType::wait_indefinitely())
                .map_err(|e| anyhow!("{e}"))?;
            let t5 = Instant::now();
            gpu_charges = Some(q);
            values = Some(v);
            if timed {
                t_field += (t1 - t0).as_secs_f64();
                t_surface += (t2 - t1).as_secs_f64();
                t_potential += (t3 - t2).as_secs_f64();
                t_draw += (t5 - t4).as_secs_f64();
                vertices_sum += f64::from(n_vertices);
            }
        }
        // The draw alone, the last frame's surface drawn again (best of five): what the frame's
        // draw costs without the set-up of a new mesh.
        let mut draw_only_ms = f64::INFINITY;
        for _ in 0..5 {
            let t0 = Instant::now();
            render_once(&rc, &scene, &target, &camera);
            rc.device
                .poll(wgpu::PollType::wait_indefinitely())
                .map_err(|e| anyhow!("{e}"))?;
            draw_only_ms = draw_only_ms.min(t0.elapsed().as_secs_f64() * 1e3);
        }
        // The CPU peer on the last frame's surface.
        let [surface, _] = last_field.context("no frame played")?.extract(&rc, &mc, &mut lobes)?;
        let mesh = surface.read_back(&rc.device, &rc.queue).map_err(|e| anyhow!("{e}"))?;
        let at: Vec<[f32; 3]> = positions.iter().map(|p| p.map(|x| x as f32)).collect();
        let q = GpuCharges::upload(&rc.device, &at, &charges_e).map_err(|e| anyhow!("{e}"))?;
        let v = VertexValues::new(&rc.device, surface.capacity.vertices);
        let n_last = mesh.positions_angstrom.len() as u32;
        // Best of three after the playback (or a first run) warmed the pipeline.
        let pass = |vp: &VertexPotential| -> Result<(f64, Vec<f32>)> {
            let mut best = f64::INFINITY;
            for _ in 0..3 {
                let t0 = Instant::now();
                vp.run(&rc.device, &rc.queue, &surface, &q, &v)
                    .map_err(|e| anyhow!("{e}"))?;
                rc.device
                    .poll(wgpu::PollType::wait_indefinitely())
                    .map_err(|e| anyhow!("{e}"))?;
                best = best.min(t0.elapsed().as_secs_f64() * 1e3);
            }
            Ok((best, v.read(&rc.device, &rc.queue, n_last).map_err(|e| anyhow!("{e}"))?))
        };
        let (pass_ms, on_device) = pass(&vp)?;
        let mut variant_values = Vec::new();
        for variant in VertexPotentialVariant::ALL {
            let other = VertexPotential::with_variant(&rc.device, variant);
            variant_values.push((variant.name(), pass(&other)?));
        }
        let point_charges = PointCharges {
            positions_bohr: positions.iter().map(|p| bohr_from_angstrom3(*p)).collect(),
            charges_e: charges.clone(),
        };
        let pairs = (mesh.positions_angstrom.len() as u64).saturating_mul(positions.len() as u64);
        let cpu_method = if pairs <= DIRECT_LIMIT_TERMS {
            "direct"
        } else {
            "multilevel"
        };
        let t0 = Instant::now();
        let on_cpu = potential_at_vertices(&mesh, &point_charges)?;
        let cpu_potential_ms = t0.elapsed().as_secs_f64() * 1e3;
        let max_rel_diff = |device: &[f32]| {
            device
                .iter()
                .zip(&on_cpu)
                .map(|(&d, &c)| (f64::from(d) - f64::from(c)).abs() / f64::from(c).abs().max(1e-3))
                .fold(0.0, f64::max)
        };
        let max_rel_diff_vs_cpu = max_rel_diff(&on_device);
        let last_pairs = f64::from(n_last) * positions.len() as f64;
        let pass_variants = variant_values
            .iter()
            .map(|(name, (ms, values))| PassVariantTiming {
                name: name.clone(),
                ms: *ms,
                pairs_per_s: if *ms > 0.0 { last_pairs / (ms * 1e-3) } else { 0.0 },
                max_rel_diff_vs_cpu: max_rel_diff(values),
            })
            .collect();
        let k = frames.max(1) as f64;
        let frame_s = (t_field + t_surface + t_potential + t_draw) / k;
        let vertices = vertices_sum / k;
        let r = ColoredPlaybackResult {
            atoms: base.len(),
            spacing_angstrom,
            lattice_dims: dims,
            vertices,
            frames_timed: frames,
            fps: if frame_s > 0.0 { 1.0 / frame_s } else { 0.0 },
            field_ms: t_field / k * 1e3,
            surface_ms: t_surface / k * 1e3,
            potential_ms: t_potential / k * 1e3,
            draw_ms: t_draw / k * 1e3,
            draw_only_ms,
            frame_ms: frame_s * 1e3,
            potential_pairs_per_s: if t_potential > 0.0 {
                vertices * base.len() as f64 / (t_potential / k)
            } else {
                0.0
            },
            cpu_potential_ms,
            cpu_method: cpu_method.into(),
            max_rel_diff_vs_cpu,
            pass_variant: vp.variant().name(),
            pass_ms,
            pass_variants,
            field_on: field_on.clone(),
            adapter: rc.capabilities.adapter.clone(),
            image_px: size,
        };
        eprintln!("{r:?}");
        results.push(r);
    }
    Ok(results)
}

/// A frame's molecular-surface field: a host lattice (uploaded for the marching cubes) or one the
/// render device computed into its own buffer.
enum LastField {
    Host(Grid3),
    Device(GpuLattice),
}

impl LastField {
    /// The surface at [`MOLSURF_LEVEL`] (and the empty negative lobe) by the marching-cubes pass.
    fn extract(
        &self,
        rc: &RenderContext,
        mc: &McCompute,
        lobes: &mut LobeBuffers,
    ) -> Result<[orbitfield::compute::wgpu::marching_cubes::GpuMesh; 2]> {
        match self {
            LastField::Host(g) => mc.extract_lobes_reusing(&rc.device, &rc.queue, g, MOLSURF_LEVEL, lobes),
            LastField::Device(l) => mc.extract_lobes_on(&rc.device, &rc.queue, l, MOLSURF_LEVEL, lobes),
        }
        .map_err(|e| anyhow!("{e}"))
    }
}

/// The pass alone in one variant.
#[derive(Serialize, Clone, Debug)]
pub struct PassVariantTiming {
    pub name: String,
    pub ms: f64,
    /// Charge-vertex pairs per second.
    pub pairs_per_s: f64,
    pub max_rel_diff_vs_cpu: f64,
}

/// One line per system.
pub fn print(results: &[ColoredPlaybackResult]) {
    for r in results {
        println!(
            "molsurf coloured by the per-frame potential, {} atoms, {:?} lattice at {} A, {:.0} vertices: {:.1} frames/s ({:.2} ms = field {:.2} + surface {:.2} + potential {:.2} ({:.2e} pairs/s) + draw {:.2} at {}x{}); CPU peer potential {:.1} ms ({}, {:.1}x the device's; max rel diff {:.1e}); the pass alone ({}) {:.2} ms, by variant [{}]; field by {}, render device {}",
            r.atoms,
            r.lattice_dims,
            r.spacing_angstrom,
            r.vertices,
            r.fps,
            r.frame_ms,
            r.field_ms,
            r.surface_ms,
            r.potential_ms,
            r.potential_pairs_per_s,
            r.draw_ms,
            r.image_px[0],
            r.image_px[1],
            r.cpu_potential_ms,
            r.cpu_method,
            r.cpu_potential_ms / r.potential_ms.max(1e-9),
            r.max_rel_diff_vs_cpu,
            r.pass_variant,
            r.pass_ms,
            r.pass_variants
                .iter()
                .map(|p| format!(
                    "{} {:.2} ms {:.2e} pairs/s max rel diff {:.1e}",
                    p.name, p.ms, p.pairs_per_s, p.max_rel_diff_vs_cpu
                ))
                .collect::<Vec<_>>()
                .join(", "),
            r.field_on,
            r.adapter,
        );
    }
}
