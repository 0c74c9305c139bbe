//! `orbitfield bench --molsurf`: the molecular-surface field (`Field::MolSurf`) of protein-like
//! systems of N atoms and its isosurface at 0.5, per frame.
//!
//! The system is adk (`tests/data/md/adk_open.pqr`, 3341 atoms with the PQR's radii) repeated on a
//! grid of copies whose bounding boxes touch, cut at N atoms (run from the repository root); the
//! lattice spans it plus the Gaussians' padding at `--molsurf-spacing` (1 A). Figures, medians of
//! `--repeats` after one warm-up: the CUDA kernel alone (CUDA events, atoms already binned), the
//! field on the host as for a new frame (atoms uploaded and binned, kernel, copy back; wall clock),
//! the isosurface extraction at 0.5 (the render
//! device's marching-cubes pass, the one the viewer and `--playback` use, lattice upload included;
//! the CPU marching cubes where the adapter has no such pass, said in the output), and their sum.
//! Up to `CPU_LIMIT` atoms the CPU engine's field (all cores) is timed beside it and the GPU values
//! are compared with it. With `--molsurf-on render-device` the same system is also computed and
//! extracted per frame on the render device (`molsurf_render_bench`), beside these figures.

use anyhow::{Context, Result, anyhow, bail};
use orbitfield::compute::cpu::CpuEngine;
use orbitfield::compute::cuda::{self, CudaEngine};
use orbitfield::compute::molsurf::{DEFAULT_RADIUS_SCALE, MOLSURF_LEVEL, MolSurfAtoms, atom_radii_angstrom};
use orbitfield::compute::placement::FieldsOn;
use orbitfield::compute::{Field, FieldInput, FieldJob, SlabEngine};
use orbitfield::jobs::DeviceChoice;
use orbitfield::model::field::LatticeSpec;
use orbitfield::model::{Grid3, Lattice};
use serde::Serialize;
use std::sync::Arc;
use std::time::Instant;

use super::bench::{BenchArgs, median};

/// Largest system whose CPU field is timed beside the GPU's.
const CPU_LIMIT: usize = 200_000;

/// One system's molecular surface.
#[derive(Serialize, Debug)]
pub struct MolSurfResult {
    pub atoms: usize,
    pub spacing_angstrom: f64,
    pub lattice_dims: [usize; 3],
    pub points: usize,
    /// The CUDA kernel over the whole lattice, atoms already binned (CUDA events, median), when a GPU
    /// is present.
    pub gpu_kernel_ms: Option<f64>,
    /// The GPU field on the host for a new frame: atoms uploaded and binned, kernel, copy back (wall
    /// clock, median).
    pub gpu_field_ms: Option<f64>,
    /// The isosurface at 0.5 from the field on the host (median).
    pub surface_ms: f64,
    /// "render device" (wgpu marching cubes) or "CPU".
    pub surface_on: String,
    pub triangles: u64,
    /// `gpu_field_ms + surface_ms`.
    pub field_and_surface_ms: Option<f64>,
    /// The CPU engine's field (all cores, wall clock, median), up to `CPU_LIMIT` atoms.
    pub cpu_field_ms: Option<f64>,
    /// Largest |gpu - cpu| / cpu over points where the CPU value exceeds 1e-3, and how many such
    /// points differ by more than 1e-5 relative (points on an atom's truncation radius may differ
    /// by its truncated tail, 1e-3).
    pub max_rel_err_vs_cpu: Option<f64>,
    pub points_beyond_1e5: Option<usize>,
    /// The frame on the render device (`--molsurf-on render-device`).
    pub render_device: Option<super::molsurf_render_bench::RenderDeviceMolSurf>,
}

/// Angstrom positions, radii (Angstrom) and charges (e) of a system's atoms.
pub(super) type AtomsRadiiCharges = (Vec<[f64; 3]>, Vec<f64>, Vec<f64>);

/// adk copied on a grid until `n` atoms: Angstrom positions, radii and the PQR's charges (e).
pub(super) fn adk_copies(n: usize) -> Result<AtomsRadiiCharges> {
    let path = crate::test_data("md/adk_open.pqr");
    let mut system = orbitfield::io::load(&[path]).context("reading adk")?;
    let frame = system.trajectory.frame(0).map_err(|e| anyhow!("{e}"))?;
    let radii = atom_radii_angstrom(&system.structure);
    let charges: Vec<f64> = system
        .structure
        .charges_e
        .as_ref()
        .context("adk_open.pqr has no charges")?
        .iter()
        .map(|&q| f64::from(q))
        .collect();
    let pos: Vec<[f64; 3]> = frame.positions_angstrom.iter().map(|p| p.map(f64::from)).collect();
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for p in &pos {
        for a in 0..3 {
            lo[a] = lo[a].min(p[a]);
            hi[a] = hi[a].max(p[a]);
        }
    }
    let size = [0, 1, 2].map(|a| hi[a] - lo[a]);
    let copies = n.div_ceil(pos.len().max(1));
    let per_side = (copies as f64).cbrt().ceil().max(1.0) as usize;
    let (mut out_p, mut out_r, mut out_q) = (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
    'fill: for c in 0..per_side.pow(3) {
        let shift = [c % per_side, c / per_side % per_side, c / (per_side * per_side)].map(|k| k as f64);
        for ((p, &r), &q) in pos.iter().zip(&radii).zip(&charges) {
            if out_p.len() >= n {
                break 'fill;
            }
            // Rounded to f32, as a frame holds positions: every engine sees the same atoms.
            out_p.push([0, 1, 2].map(|a| f64::from((p[a] - lo[a] + shift[a] * size[a]) as f32)));
            out_r.push(r);
            out_q.push(q);
        }
    }
    Ok((out_p, out_r, out_q))
}

/// Times the systems of `sizes` atoms.
pub fn run(
    sizes: &[usize],
    spacing_angstrom: f64,
    gpu: Option<&CudaEngine>,
    repeats: usize,
    render_device: bool,
) -> Result<Vec<MolSurfResult>> {
    let rc = match orbitfield::render::RenderContext::headless(1) {
        Ok(rc) => Some(rc),
        Err(e) if render_device => return Err(anyhow!("--molsurf-on render-device: {e}")),
        Err(_) => None,
    };
    let mc = rc
        .as_ref()
        .filter(|rc| rc.capabilities.gpu_marching_cubes)
        .map(|rc| orbitfield::compute::wgpu::marching_cubes::McCompute::new(&rc.device));
    let surface_on = if mc.is_some() { "render device" } else { "CPU" };
    let repeats = repeats.max(1);
    let mut results = Vec::new();
    for &n in sizes {
        let (pos, radii, _) = adk_copies(n)?;
        let atoms = MolSurfAtoms::from_radii_angstrom(&pos, &radii, DEFAULT_RADIUS_SCALE)?;
        let lattice: Lattice = LatticeSpec::AroundAtoms {
            spacing_angstrom,
            padding_angstrom: atoms.padding_angstrom(),
        }
        .build(&pos)?;
        let atoms = Arc::new(atoms);
        let job = FieldJob {
            field: Field::MolSurf,
            lattice,
            input: FieldInput::Spheres(atoms.clone()),
        };
        let npts = lattice.n_points();
        let z = 0..lattice.dims[2];
        let mut values = vec![f32::NAN; npts];
        let (mut gpu_kernel_ms, mut gpu_field_ms) = (None, None);
        if let Some(g) = gpu {
            gpu_kernel_ms = Some(median(g.time_kernels(&job, repeats)?));
            // Every repetition a new frame: the atoms are uploaded and binned again.
            let mut t = Vec::new();
            for _ in 0..=repeats {
                let frame = FieldJob {
                    input: FieldInput::Spheres(Arc::new((*atoms).clone())),
                    ..job.clone()
                };
                let t0 = Instant::now();
                g.compute_slab(&frame, z.clone(), &mut values)?;
                t.push(t0.elapsed().as_secs_f64() * 1e3);
            }
            t.remove(0);
            gpu_field_ms = Some(median(t));
        }
        let (mut cpu_field_ms, mut max_rel, mut beyond) = (None, None, None);
        let mut cpu_reference: Option<Vec<f32>> = None;
        if n <= CPU_LIMIT || gpu.is_none() {
            let mut cpu_values = vec![0.0f32; npts];
            let mut t = Vec::new();
            for _ in 0..repeats.min(3) {
                let t0 = Instant::now();
                CpuEngine.compute_slab(&job, z.clone(), &mut cpu_values)?;
                t.push(t0.elapsed().as_secs_f64() * 1e3);
            }
            cpu_field_ms = Some(median(t));
            if gpu.is_some() {
                let (worst, count) = super::molsurf_render_bench::rel_errors(&values, &cpu_values);
                max_rel = Some(worst);
                beyond = Some(count);
            } else {
                values.clone_from(&cpu_values);
            }
            cpu_reference = Some(cpu_values);
        }
        let on_render_device = match (&rc, render_device) {
            (Some(rc), true) => Some(super::molsurf_render_bench::run(
                rc,
                &pos,
                &radii,
                &lattice,
                repeats,
                cpu_reference.as_deref(),
            )?),
            _ => None,
        };
        drop(cpu_reference);
        let grid = Grid3 {
            lattice,
            values,
            description: "molsurf".into(),
        };
        let mut t = Vec::new();
        let mut triangles = 0u64;
        for _ in 0..=repeats {
            let t0 = Instant::now();
            triangles = match (&mc, &rc) {
                (Some(mc), Some(rc)) => {
                    let lobes = mc
                        .extract_lobes(&rc.device, &rc.queue, &grid, MOLSURF_LEVEL)
                        .map_err(|e| anyhow!("{e}"))?;
                    let (_, i) = lobes[0]
                        .read_counts(&rc.device, &rc.queue)
                        .map_err(|e| anyhow!("{e}"))?;
                    u64::from(i / 3)
                }
                _ => orbitfield::surface::extract(&grid, MOLSURF_LEVEL).triangle_count() as u64,
            };
            t.push(t0.elapsed().as_secs_f64() * 1e3);
        }
        t.remove(0);
        let surface_ms = median(t);
        let r = MolSurfResult {
            atoms: pos.len(),
            spacing_angstrom,
            lattice_dims: lattice.dims,
            points: npts,
            gpu_kernel_ms,
            gpu_field_ms,
            surface_ms,
            surface_on: surface_on.into(),
            triangles,
            field_and_surface_ms: gpu_field_ms.map(|f| f + surface_ms),
            cpu_field_ms,
            max_rel_err_vs_cpu: max_rel,
            points_beyond_1e5: beyond,
            render_device: on_render_device,
        };
        eprintln!("{r:?}");
        results.push(r);
    }
    Ok(results)
}

/// One line per system.
pub fn print(results: &[MolSurfResult]) {
    let ms = |v: Option<f64>| v.map(|x| format!("{x:.3} ms")).unwrap_or_else(|| "-".into());
    for r in results {
        println!(
            "molsurf {} atoms, {:?} lattice at {} A ({} points): gpu kernel {}, field on host {} + surface {:.3} ms ({} triangles, {}) = {}; cpu field {}{}",
            r.atoms,
            r.lattice_dims,
            r.spacing_angstrom,
            r.points,
            ms(r.gpu_kernel_ms),
            ms(r.gpu_field_ms),
            r.surface_ms,
            r.triangles,
            r.surface_on,
            ms(r.field_and_surface_ms),
            ms(r.cpu_field_ms),
            match (r.max_rel_err_vs_cpu, r.points_beyond_1e5) {
                (Some(e), Some(c)) => format!("; max rel err vs cpu {e:.1e} ({c} points beyond 1e-5)"),
                _ => String::new(),
            }
        );
        if let Some(d) = &r.render_device {
            let cpu = r
                .cpu_field_ms
                .map(|c| format!("; CPU engine field / render-device frame {:.2}x", c / d.frame_ms));
            println!(
                "molsurf {} atoms on the render device ({}): frame {:.3} ms (upload alone {:.3} ms; GPU binning {}, field {}, extraction {}); {} triangles{}{}",
                r.atoms,
                d.adapter,
                d.frame_ms,
                d.upload_ms,
                ms(d.binning_ms),
                ms(d.field_ms),
                ms(d.extraction_ms),
                d.triangles,
                match (d.max_rel_err_vs_cpu, d.points_beyond_1e5) {
                    (Some(e), Some(c)) => format!("; max rel err vs cpu {e:.1e} ({c} points beyond 1e-5)"),
                    _ => String::new(),
                },
                cpu.unwrap_or_default()
            );
        }
    }
}

/// `--molsurf`: the molecular-surface cases alone.
pub(super) fn molsurf(args: &BenchArgs, preference: DeviceChoice) -> Result<()> {
    let sizes = args
        .molsurf_atoms
        .split(',')
        .map(|v| {
            v.trim()
                .parse::<usize>()
                .ok()
                .filter(|n| *n > 0)
                .with_context(|| format!("--molsurf-atoms: '{v}' is not a count"))
        })
        .collect::<Result<Vec<_>>>()?;
    if !(args.molsurf_spacing.is_finite() && args.molsurf_spacing >= 0.1) {
        bail!(
            "--molsurf-spacing: expected a spacing of at least 0.1 A, found {}",
            args.molsurf_spacing
        );
    }
    if args.molsurf_colored_frames > 0 {
        // `--molsurf-on render-device`: the field on the render device too; else through the pool.
        let mut pool_source;
        let source: Option<&mut dyn super::molsurf_colored::MolSurfFieldSource> =
            if args.molsurf_on == FieldsOn::RenderDevice {
                None
            } else {
                pool_source = super::molsurf_colored::PoolSource::new(preference);
                Some(&mut pool_source)
            };
        let results = super::molsurf_colored::run(&sizes, args.molsurf_spacing, args.molsurf_colored_frames, source)?;
        super::molsurf_colored::print(&results);
        if let Some(p) = &args.json {
            let text = serde_json::to_string_pretty(&serde_json::json!({ "molsurf_colored": results }))?;
            std::fs::write(p, text).with_context(|| format!("writing {}", p.display()))?;
        }
        return Ok(());
    }
    let gpu = if preference == DeviceChoice::Cpu {
        None
    } else {
        let (sel, _) = cuda::devices_from_env();
        let found = cuda::discover(sel.as_ref().map(|s| s.get(..1).unwrap_or(&[])));
        for n in &found.notes {
            eprintln!("note: {n}");
        }
        let g = found.engines.into_iter().next();
        if g.is_none() && preference == DeviceChoice::Gpu {
            bail!("no usable CUDA device");
        }
        g
    };
    let device = gpu.as_ref().map(|g| g.name()).unwrap_or_else(|| "none".into());
    println!("device: {device}");
    let results = super::molsurf_bench::run(
        &sizes,
        args.molsurf_spacing,
        gpu.as_deref(),
        args.repeats,
        args.molsurf_on == FieldsOn::RenderDevice,
    )?;
    super::molsurf_bench::print(&results);
    if let Some(p) = &args.json {
        let text = serde_json::to_string_pretty(&serde_json::json!({ "device": device, "molsurf": results }))?;
        std::fs::write(p, text).with_context(|| format!("writing {}", p.display()))?;
    }
    Ok(())
}
