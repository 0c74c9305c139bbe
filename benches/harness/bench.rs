//! `orbitfield bench`: times the field engines on fixed inputs, GPU beside CPU in the same run.
//!
//! Cases: the HOMO of threonine 6-31G* (the embedded PySCF Molden file) and of a synthesised C60
//! 6-31G* (see `assets/bench/README.md`) on 80^3, 128^3 and 256^3 lattices spanning the molecule plus
//! 3 bohr, and a Coulomb potential map of 100k random charges on 256x256x64. GPU figures are CUDA-event
//! medians of several runs after a warm-up (NVRTC compilation and context creation excluded), kernels
//! only (the lattice stays on the device). CPU figures are wall-clock medians of the CPU engine over the
//! whole lattice, or, for the big cases, over a middle slab scaled to the lattice (said in the output).
//! Each GPU result is checked against the CPU values on the planes both computed.
//!
//! `--dcs-variants 8:0,8x2:3:newton2,mixed:0.25` times several variants of the Coulomb kernel (points
//! per thread : evaluations whose reciprocal square root runs on the FMA pipe; see `DcsVariant`), each
//! against a float64 sum at sampled points. `--rdf-methods all-pairs,cells` times the RDF kernels and
//! checks that every method's histogram equals the all-pairs one. `--pool` adds multi-GPU scaling of
//! the headline cases through the worker pool on the first device and on all devices
//! (`ORBITFIELD_DEVICES` or every one found), beside the kernels alone (`pool_bench`).

use anyhow::{Context, Result, bail};
use orbitfield::compute::cpu::CpuEngine;
use orbitfield::compute::cuda::{self, CudaEngine, MoForm};
use orbitfield::compute::placement::FieldsOn;
use orbitfield::compute::{Field, FieldInput, FieldJob, SlabEngine};
use orbitfield::jobs::DeviceChoice;
use orbitfield::model::{Spin, Wavefunction};
use serde::Serialize;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use super::bench_inputs::{synthetic_c60, threonine};
use super::molsurf_bench::molsurf;
use super::playback::render_device_playback;
use super::potential_bench::dcs_case;
use super::potential_bench::{MsmResult, RdfResult, msm_case, rdf_case};

#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// Write the results as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    pub(super) json: Option<PathBuf>,
    /// A reduced suite (under a minute on a 2-core CPU).
    #[arg(long)]
    pub(super) quick: bool,
    /// cpu, gpu or auto (CUDA devices from ORBITFIELD_DEVICES, else the first).
    #[arg(long, default_value = "auto")]
    pub(super) device: String,
    /// Timed runs per figure (the median is reported).
    #[arg(long, default_value_t = 9)]
    pub(super) repeats: usize,
    /// Coulomb kernel variants to time, separated by commas (default: the engine's): "U:S" or
    /// "UxV:S[:newton2]" (U points x V rows per thread, S of the U*V evaluations per charge with 1/sqrt
    /// on the FMA pipe), optionally followed by "/bY/mN/aN/rN/pN/sN/tN" (rows of 32 threads per block,
    /// blocks per multiprocessor for the register allocation, atoms per loop iteration, a register cap
    /// in place of the blocks, a rotation of the FMA-pipe evaluations, atom ranges per chunk with 0
    /// chosen per launch, one or two streams), "sfu", "newton", "mixed:F". One JSON line per variant on
    /// stdout.
    #[arg(long, value_name = "LIST")]
    pub(super) dcs_variants: Option<String>,
    /// Also time the headline cases (`--pool-cases`) through the worker pool (copy back included) on
    /// the first device alone and on all devices, beside the kernels alone (multi-GPU scaling).
    #[arg(long)]
    pub(super) pool: bool,
    /// With --pool: the cases, comma separated: orbital (C60 HOMO 256^3), dcs (direct Coulomb map
    /// on 256^3), frames (adk's potential averaged over its frames).
    #[arg(long, value_name = "LIST", default_value = "orbital,dcs,frames")]
    pub(super) pool_cases: String,
    /// With --pool: charges of the dcs case.
    #[arg(long, default_value_t = 1_000_000)]
    pub(super) pool_dcs_charges: usize,
    /// Write the generated (specialised) MO kernel sources of the bench inputs to DIR and stop (no
    /// device needed; for offline inspection with ptxas/cuobjdump).
    #[arg(long, value_name = "DIR")]
    pub(super) dump_specialised: Option<PathBuf>,
    /// Skip the MO cases (Coulomb and pool figures only).
    #[arg(long)]
    pub(super) no_mo: bool,
    /// Skip the Coulomb cases.
    #[arg(long)]
    pub(super) no_dcs: bool,
    /// Atom counts of generated water boxes whose MSM potential map (open boundaries, a = 12 A,
    /// h = 2 A) is timed end to end through the worker pool, comma separated (e.g. 1500000).
    #[arg(long, value_name = "LIST")]
    pub(super) msm_atoms: Option<String>,
    /// MSM splitting distance a of the MSM cases (Angstrom).
    #[arg(long, default_value_t = orbitfield::compute::esp::DEFAULT_MSM_CUTOFF_ANGSTROM, value_name = "A")]
    pub(super) msm_cutoff: f64,
    /// Finest MSM lattice spacing h of the MSM cases (Angstrom).
    #[arg(long, default_value_t = orbitfield::compute::esp::DEFAULT_MSM_SPACING_ANGSTROM, value_name = "A")]
    pub(super) msm_h: f64,
    /// Where the MSM cases bin the charges and compute the long-range levels: `host` (with the
    /// plan) or `device` (by the CUDA engine that fills the map, from the plan's bin frame and level
    /// geometry).
    #[arg(long, value_enum, default_value = "device")]
    pub(super) msm_stages: orbitfield::compute::esp::StagesOn,
    /// Time the viewer's per-frame pipeline headless (field, GPU isosurfaces, draw) playing the
    /// threonine MD series of tests/data/qm/threonine_md and a C60 6-31G* series, at --playback-points,
    /// and the threonine series' density surface coloured by its wavefunction's potential (the
    /// viewer's default lattice).
    #[arg(long)]
    pub(super) playback: bool,
    /// With --playback or --ui-seconds: only the scenes whose name contains this text (e.g. "two
    /// representations").
    #[arg(long, value_name = "TEXT")]
    pub(super) playback_only: Option<String>,
    /// With --playback: play the two-representation scenes a second time with the pool's batching of
    /// one frame's orbitals off (the peer of the batched figure, same run).
    #[arg(long)]
    pub(super) playback_unbatched: bool,
    /// With --playback: where the orbital scenes' fields are computed. `render-device`: the orbital
    /// scenes (HOMO; HOMO + LUMO as two representations; threonine MD, C60) played through the
    /// viewer's update loop, draw stage and draw at 1280x720 with each frame's fields computed by
    /// the WGSL pass on the render device straight into the marching cubes' lattice buffers; frames/s
    /// end to end and the per-frame split (packing, pass + extraction, draw). `pool`: the worker
    /// pool's engines. `auto` (the default) chooses as the viewer's "auto" does: the render device on
    /// a hardware adapter that runs the orbital pass and GPU isosurfaces, else the pool.
    #[arg(long, value_enum, default_value = "auto")]
    pub(super) orbitals_on: FieldsOn,
    /// With --playback --orbitals-on render-device: also play the HOMO series with the orbital pass
    /// and the marching cubes alone, without the viewer's state and without the draw (the no-draw
    /// figure).
    #[arg(long)]
    pub(super) playback_no_draw_peer: bool,
    /// Lattice points along the longest axis for --playback and --ui-seconds.
    #[arg(long, default_value_t = 128)]
    pub(super) playback_points: u32,
    /// Play the --playback scenes for this many seconds each as the viewer does (30 frames/s, frames
    /// dropped when fields arrive late) and report the UI frame rate and the fields shown per second.
    #[arg(long, value_name = "SECONDS")]
    pub(super) ui_seconds: Option<f64>,
    /// With --ui-seconds: extract isosurfaces with the CPU marching cubes instead of the render
    /// device's compute pass.
    #[arg(long)]
    pub(super) cpu_surfaces: bool,
    /// Map spacing of the MSM cases (Angstrom).
    #[arg(long, default_value_t = 0.5)]
    pub(super) msm_spacing: f64,
    /// Atom counts N of the RDF cases (N x N pairs in a periodic water-density box), comma separated;
    /// "none" skips them.
    #[arg(long, value_name = "LIST")]
    pub(super) rdf_atoms: Option<String>,
    /// GPU RDF methods to time on each RDF case, comma separated: auto, all-pairs, cells. One JSON
    /// line per method on stdout, with whether its histogram equals the all-pairs one.
    #[arg(long, value_name = "LIST", default_value = "auto")]
    pub(super) rdf_methods: String,
    /// r_max of the RDF cases (Angstrom), comma separated; "half" is 0.49 x the box.
    #[arg(long, value_name = "LIST", default_value = "12,half")]
    pub(super) rdf_r_max: String,
    /// Time only DSSP and the cartoon mesh per frame (adk, and adk copies up to 100,000 residues, or
    /// 20,000 with --quick) and stop.
    #[arg(long)]
    pub(super) cartoon: bool,
    /// With --cartoon: `render-device` also times the mesh written by the compute pass on the render
    /// device (per-residue inputs on the CPU, their upload, the passes), beside the CPU figures.
    #[arg(long, value_enum, default_value = "cpu")]
    pub(super) cartoon_on: CartoonOn,
    /// Time the electrostatic potential of threonine's wavefunction: the CPU engine on one thread
    /// against PySCF's cubegen.mep on one core (same lattice), and the GPU on an 80^3 lattice.
    #[arg(long)]
    pub(super) qm_esp: bool,
    /// With --qm-esp: the Python that has PySCF, for the peer timing (run from the repository root).
    #[arg(long, default_value = "python3")]
    pub(super) pyscf_python: String,
    /// With --qm-esp: points per axis of the lattice the CPU engine and PySCF share.
    #[arg(long, default_value_t = 20)]
    pub(super) qm_esp_peer_points: usize,
    /// Time only the molecular-surface field and its isosurface (protein-like copies of adk, from the
    /// repository root) and stop.
    #[arg(long)]
    pub(super) molsurf: bool,
    /// With --molsurf: atom counts, comma separated.
    #[arg(long, value_name = "LIST", default_value = "100000,1000000")]
    pub(super) molsurf_atoms: String,
    /// With --molsurf: lattice spacing (Angstrom).
    #[arg(long, default_value_t = 1.0)]
    pub(super) molsurf_spacing: f64,
    /// With --molsurf: `render-device` also times each system per frame on the render device (the
    /// WGSL binning and field passes into the marching cubes' buffer, the surface extracted there,
    /// the counters read back), beside the CUDA and CPU figures.
    #[arg(long, value_enum, default_value = "pool")]
    pub(super) molsurf_on: FieldsOn,
    /// With --molsurf: instead of the field and surface figures, play this many frames of each
    /// system with its surface coloured by the per-frame potential of its charges (field, surface,
    /// potential at the vertices on the render device, draw at 1280x720; frames/s and the split).
    #[arg(long, default_value_t = 0, value_name = "FRAMES")]
    pub(super) molsurf_colored_frames: usize,
}

#[derive(Serialize, Debug)]
pub(super) struct CaseResult {
    pub(super) name: String,
    pub(super) points: usize,
    /// Basis functions (MO) or charges (potential).
    pub(super) size: usize,
    pub(super) gpu_ms: Option<f64>,
    pub(super) gpu_form: Option<String>,
    pub(super) gpu_general_ms: Option<f64>,
    pub(super) gpu_specialised_ms: Option<f64>,
    pub(super) cpu_ms: f64,
    pub(super) cpu_note: String,
    pub(super) speedup: Option<f64>,
    /// Atom evaluations per second (potential maps only).
    pub(super) gpu_evals_per_s: Option<f64>,
    pub(super) cpu_evals_per_s: Option<f64>,
    /// ||gpu - cpu|| / ||cpu|| on the compared planes.
    pub(super) rel_err_vs_cpu: Option<f64>,
    /// MO cases: HOMO and LUMO one after the other, and both in one batched call
    /// (`SlabEngine::compute_slabs`, as the pool computes one frame's orbitals), wall clock with the
    /// copy back, milliseconds.
    pub(super) cpu_pair_ms: Option<f64>,
    pub(super) cpu_batch_ms: Option<f64>,
    pub(super) gpu_pair_ms: Option<f64>,
    pub(super) gpu_batch_ms: Option<f64>,
    /// Potential maps: the largest |gpu - ref| / |ref| over sampled points of the compared planes,
    /// ref the sum in float64.
    pub(super) max_rel_err_vs_f64: Option<f64>,
}

#[derive(Serialize, Debug)]
struct Report {
    device: String,
    cpu_threads: usize,
    notes: Vec<String>,
    cases: Vec<CaseResult>,
    pool: Vec<super::pool_bench::PoolCase>,
    rdf: Vec<RdfResult>,
    msm: Vec<MsmResult>,
    playback: Vec<super::playback::PlaybackResult>,
    responsiveness: Vec<super::playback::ResponsivenessResult>,
    qm_esp: Option<super::qm_esp_bench::QmEspResult>,
}

pub(super) fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    if v.is_empty() { f64::NAN } else { v[v.len() / 2] }
}

pub(super) fn rel_err(a: &[f32], b: &[f32]) -> f64 {
    let (mut num, mut den) = (0.0f64, 0.0f64);
    for (&x, &y) in a.iter().zip(b) {
        num += (x as f64 - y as f64).powi(2);
        den += (y as f64).powi(2);
    }
    if den == 0.0 { num.sqrt() } else { (num / den).sqrt() }
}

/// The HOMO (alpha) of a bench case, by the one definition ([`Wavefunction::homo`]).
pub(super) fn homo_index(wf: &Wavefunction) -> Result<usize> {
    wf.homo(Spin::Alpha)
        .ok_or_else(|| anyhow::anyhow!("the wavefunction has no occupied orbital"))
}

pub(super) use crate::kit::cube_lattice;

/// Deterministic pseudo-random numbers in [-1, 1) (xorshift64*).
pub(super) struct Rng(pub(super) u64);
impl Rng {
    /// Uniform in [-1, 1).
    pub(super) fn next(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let v = self.0.wrapping_mul(0x2545_f491_4f6c_dd1d);
        (v >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
    /// Uniform in [0, 1).
    pub(super) fn unit(&mut self) -> f64 {
        0.5 * (self.next() + 1.0)
    }
}

/// Where `bench --cartoon` builds the cartoon mesh.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum CartoonOn {
    /// The CPU (all cores), as the viewer's cartoon thread does.
    #[default]
    Cpu,
    /// Also the compute pass on the render device (`compute::wgpu::cartoon`).
    RenderDevice,
}

/// Whether `--orbitals-on` plays the orbital scenes on the render device: `auto` asks a headless
/// render context, as the viewer's "auto" setting does (a hardware adapter with the orbital pass and
/// GPU isosurfaces).
fn orbitals_on_render_device(on: FieldsOn) -> bool {
    match on {
        // Forced: played there (a failure there is the scene's error).
        FieldsOn::RenderDevice => true,
        FieldsOn::Pool => false,
        FieldsOn::Auto => orbitfield::render::RenderContext::headless(1).is_ok_and(|rc| {
            let c = &rc.capabilities;
            let adapter = orbitfield::compute::placement::AdapterFacts {
                name: c.adapter.clone(),
                software: c.software,
                runs_passes: c.orbital_pass_supported && c.gpu_marching_cubes,
            };
            orbitfield::compute::placement::orbitals_on_render_device(on, Some(&adapter)).is_ok()
        }),
    }
}

/// CPU time for the whole lattice when it is small, else for `slab` middle planes scaled to the lattice.
pub(super) fn cpu_time(
    cpu: &CpuEngine,
    job: &FieldJob,
    slab: usize,
    repeats: usize,
) -> Result<(f64, String, Vec<f32>, std::ops::Range<usize>)> {
    let nz = job.lattice.dims[2];
    let z = if slab >= nz {
        0..nz
    } else {
        (nz - slab) / 2..(nz + slab) / 2
    };
    let n = job.lattice.dims[0] * job.lattice.dims[1] * z.len();
    let mut out = vec![0f32; n];
    let mut times = Vec::new();
    let budget = Instant::now();
    for _ in 0..repeats.max(1) {
        let t = Instant::now();
        cpu.compute_slab(job, z.clone(), &mut out)?;
        times.push(t.elapsed().as_secs_f64() * 1e3);
        if budget.elapsed().as_secs_f64() > 5.0 {
            break;
        }
    }
    let scale = nz as f64 / z.len() as f64;
    let note = if z.len() == nz {
        format!("whole lattice, median of {}", times.len())
    } else {
        format!(
            "planes {}..{} of {nz} scaled x{scale:.1}, median of {}",
            z.start,
            z.end,
            times.len()
        )
    };
    Ok((median(times) * scale, note, out, z))
}

/// The HOMO of `homo` and the orbital above it on planes `z`, one after the other and in one batched
/// call: (one by one, batch) in milliseconds, medians after a warm-up, scaled to the whole lattice.
fn pair_times(
    engine: &dyn SlabEngine,
    homo: &FieldJob,
    z: std::ops::Range<usize>,
    repeats: usize,
) -> Result<(f64, f64)> {
    let Field::Orbital { spin, index } = homo.field else {
        bail!("pair_times: expected an orbital, found {:?}", homo.field);
    };
    let lumo = FieldJob {
        field: Field::Orbital { spin, index: index + 1 },
        ..homo.clone()
    };
    let n = homo.lattice.dims[0] * homo.lattice.dims[1] * z.len();
    let (mut a, mut b) = (vec![0f32; n], vec![0f32; n]);
    let (mut pair, mut batch) = (Vec::new(), Vec::new());
    let budget = Instant::now();
    for round in 0..=repeats.max(1) {
        let t = Instant::now();
        engine.compute_slab(homo, z.clone(), &mut a)?;
        engine.compute_slab(&lumo, z.clone(), &mut b)?;
        let t_pair = t.elapsed().as_secs_f64() * 1e3;
        let t = Instant::now();
        engine.compute_slabs(&[homo, &lumo], z.clone(), &mut [&mut a[..], &mut b[..]])?;
        let t_batch = t.elapsed().as_secs_f64() * 1e3;
        // Round 0 warms up (preparation, kernel choices).
        if round > 0 {
            pair.push(t_pair);
            batch.push(t_batch);
        }
        if budget.elapsed().as_secs_f64() > 10.0 && round > 0 {
            break;
        }
    }
    let scale = homo.lattice.dims[2] as f64 / z.len().max(1) as f64;
    Ok((median(pair) * scale, median(batch) * scale))
}

pub(super) fn gpu_values(gpu: &CudaEngine, job: &FieldJob, z: std::ops::Range<usize>) -> Result<Vec<f32>> {
    let n = job.lattice.dims[0] * job.lattice.dims[1] * z.len();
    let mut out = vec![0f32; n];
    gpu.compute_slab(job, z, &mut out)?;
    Ok(out)
}

fn mo_case(
    name: &str,
    wf: &Arc<Wavefunction>,
    n: usize,
    gpu: Option<&CudaEngine>,
    cpu: &CpuEngine,
    repeats: usize,
) -> Result<CaseResult> {
    let job = FieldJob {
        field: Field::Orbital {
            spin: Spin::Alpha,
            index: homo_index(wf)?,
        },
        lattice: cube_lattice(wf, n),
        input: FieldInput::Wavefunction(wf.clone()),
    };
    let (cpu_ms, cpu_note, cpu_vals, z) = cpu_time(cpu, &job, if n > 128 { 16 } else { n }, repeats.min(5))?;
    let mut r = CaseResult {
        name: format!("{name} HOMO {n}^3"),
        points: job.lattice.n_points(),
        size: wf.basis.n_functions(),
        gpu_ms: None,
        gpu_form: None,
        gpu_general_ms: None,
        gpu_specialised_ms: None,
        cpu_ms,
        cpu_note,
        speedup: None,
        gpu_evals_per_s: None,
        cpu_evals_per_s: None,
        rel_err_vs_cpu: None,
        cpu_pair_ms: None,
        cpu_batch_ms: None,
        gpu_pair_ms: None,
        gpu_batch_ms: None,
        max_rel_err_vs_f64: None,
    };
    let (pair, batch) = pair_times(cpu, &job, z.clone(), repeats.min(5))?;
    (r.cpu_pair_ms, r.cpu_batch_ms) = (Some(pair), Some(batch));
    if let Some(g) = gpu {
        g.set_mo_form(MoForm::Auto);
        let (pair, batch) = pair_times(g, &job, 0..job.lattice.dims[2], repeats)?;
        (r.gpu_pair_ms, r.gpu_batch_ms) = (Some(pair), Some(batch));
        let ms = median(g.time_kernels(&job, repeats)?);
        r.gpu_form = Some(g.mo_form_used(&job)?.to_string());
        r.gpu_ms = Some(ms);
        r.speedup = Some(cpu_ms / ms);
        r.rel_err_vs_cpu = Some(rel_err(&gpu_values(g, &job, z)?, &cpu_vals));
        g.set_mo_form(MoForm::General);
        r.gpu_general_ms = Some(median(g.time_kernels(&job, repeats)?));
        g.set_mo_form(MoForm::Specialised);
        r.gpu_specialised_ms = Some(median(g.time_kernels(&job, repeats)?));
        g.set_mo_form(MoForm::Auto);
    }
    Ok(r)
}

pub(super) fn fmt_opt(v: Option<f64>, digits: usize) -> String {
    v.map(|x| format!("{x:.digits$}")).unwrap_or_else(|| "-".into())
}

pub fn run(args: &BenchArgs) -> Result<()> {
    if args.cartoon {
        let targets: &[usize] = if args.quick { &[20_000] } else { &[10_000, 100_000] };
        let on_device = args.cartoon_on == CartoonOn::RenderDevice;
        let results = super::cartoon_bench::run(targets, args.repeats, on_device)?;
        if let Some(p) = &args.json {
            let text = serde_json::to_string_pretty(&results)?;
            std::fs::write(p, text).with_context(|| format!("writing {}", p.display()))?;
        }
        return Ok(());
    }
    if let Some(dir) = &args.dump_specialised {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        for (name, wf) in [("threonine", threonine()?), ("c60", synthetic_c60())] {
            let plan = cuda::mo::BasisPlan::new(&wf.basis)?;
            let header = format!("{}\n", cuda::MO_COMMON_SRC);
            let Some(spec) = cuda::mo::SpecialisedPlan::new(&plan, &header) else {
                eprintln!("{name}: the basis does not fit the specialised form");
                continue;
            };
            let path = dir.join(format!("{name}_specialised.cu"));
            std::fs::write(&path, &spec.source).with_context(|| format!("writing {}", path.display()))?;
        }
        return Ok(());
    }
    if args.playback && orbitals_on_render_device(args.orbitals_on) {
        return render_device_playback(args);
    }
    let preference: DeviceChoice = args.device.parse().map_err(anyhow::Error::msg)?;
    if args.molsurf {
        return molsurf(args, preference);
    }
    let mut notes = Vec::new();
    let mut gpu_engine: Option<Arc<CudaEngine>> = None;
    if preference != DeviceChoice::Cpu {
        let (sel, env_notes) = cuda::devices_from_env();
        notes.extend(env_notes.iter().map(ToString::to_string));
        let found = cuda::discover(sel.as_ref().map(|s| s.get(..1).unwrap_or(&[])));
        notes.extend(found.notes.iter().map(ToString::to_string));
        gpu_engine = found.engines.into_iter().next();
        if gpu_engine.is_none() {
            if preference == DeviceChoice::Gpu {
                bail!("no usable CUDA device: {}", notes.join("; "));
            }
            notes.push("no usable CUDA device: CPU figures only".into());
        }
    }
    for n in &notes {
        eprintln!("note: {n}");
    }
    let device = gpu_engine.as_ref().map(|g| g.name()).unwrap_or_else(|| "none".into());
    let cpu = CpuEngine;
    let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    eprintln!("device: {device}; CPU engine on {threads} threads");
    let thr = Arc::new(threonine()?);
    let c60 = Arc::new(synthetic_c60());
    let sizes: &[usize] = if args.quick { &[80] } else { &[80, 128, 256] };
    let g = gpu_engine.as_deref();
    let mut cases = Vec::new();
    let sizes = if args.no_mo { &[][..] } else { sizes };
    for &n in sizes {
        cases.push(mo_case("threonine 6-31G*", &thr, n, g, &cpu, args.repeats)?);
        eprintln!("{:?}", cases.last());
    }
    for &n in sizes {
        cases.push(mo_case("C60 6-31G* (synthetic)", &c60, n, g, &cpu, args.repeats)?);
        eprintln!("{:?}", cases.last());
    }
    let variants = match &args.dcs_variants {
        Some(list) => list
            .split(',')
            .map(|v| v.parse::<cuda::DcsVariant>().map_err(anyhow::Error::msg))
            .collect::<Result<Vec<_>>>()?,
        None => Vec::new(),
    };
    if !args.no_dcs {
        let (charges, dims) = if args.quick {
            (10_000, [64, 64, 32])
        } else {
            (100_000, [256, 256, 64])
        };
        cases.extend(dcs_case(charges, dims, g, &cpu, args.repeats, &variants)?);
    }
    let rdf_methods = args
        .rdf_methods
        .split(',')
        .map(|m| m.parse::<cuda::rdf::RdfMethod>().map_err(anyhow::Error::msg))
        .collect::<Result<Vec<_>>>()
        .context("--rdf-methods")?;
    let rdf_atoms: Vec<usize> = match args.rdf_atoms.as_deref() {
        Some("none") => Vec::new(),
        Some(list) => list
            .split(',')
            .map(|v| {
                v.trim()
                    .parse::<usize>()
                    .with_context(|| format!("--rdf-atoms: '{v}' is not a count"))
            })
            .collect::<Result<Vec<_>>>()?,
        None if args.quick => vec![20_000],
        None => vec![100_000, 1_000_000],
    };
    let qm_esp = if args.qm_esp {
        let r = super::qm_esp_bench::run(g, &args.pyscf_python, args.qm_esp_peer_points, 80, args.repeats)?;
        eprintln!("{r:?}");
        Some(r)
    } else {
        None
    };
    let mut playback = Vec::new();
    if args.playback {
        let cases = super::playback::scenes(&c60, true);
        for (name, system, frames, show) in cases {
            if args.playback_only.as_ref().is_some_and(|t| !name.contains(t.as_str())) {
                continue;
            }
            let peer = args.playback_unbatched && show == super::playback::Show::HomoAndLumo;
            let mut system = Some(system);
            for batch in [true, false] {
                // The unbatched peer plays a fresh copy of the same scene.
                let system = match system.take() {
                    Some(s) => s,
                    None if peer && !batch => super::playback::scenes(&c60, true)
                        .into_iter()
                        .find(|c| c.0 == name)
                        .map_or_else(|| Err(anyhow::anyhow!("no scene {name}")), |c| c.1),
                    None => break,
                };
                let pool = orbitfield::app::fields::device::FieldsOn::Pool;
                let points = args.playback_points;
                match system
                    .and_then(|sys| super::playback::playback_case(name, sys, points, frames, show, batch, pool))
                {
                    Ok(r) => {
                        eprintln!("{r:?}");
                        playback.push(r);
                    }
                    Err(e) => eprintln!("note: playback '{name}' skipped: {e:#}"),
                }
            }
        }
    }
    let mut responsiveness = Vec::new();
    if let Some(secs) = args.ui_seconds {
        if !(secs.is_finite() && secs > 0.0 && secs <= 3600.0) {
            bail!("--ui-seconds: expected a number of seconds between 0 and 3600, found {secs}");
        }
        let gpu_surfaces = !args.cpu_surfaces;
        let cases = super::playback::ui_scenes(&c60);
        for (name, system, _, show) in cases {
            if args.playback_only.as_ref().is_some_and(|t| !name.contains(t.as_str())) {
                continue;
            }
            match system.and_then(|sys| {
                super::playback::responsiveness_case(name, sys, args.playback_points, secs, show, gpu_surfaces)
            }) {
                Ok(r) => {
                    eprintln!("{r:?}");
                    responsiveness.push(r);
                }
                Err(e) => eprintln!("note: responsiveness '{name}' skipped: {e:#}"),
            }
        }
    }
    let mut msm = Vec::new();
    if let Some(list) = &args.msm_atoms {
        for v in list.split(',') {
            let n: usize = v
                .trim()
                .parse()
                .with_context(|| format!("--msm-atoms: '{v}' is not a count"))?;
            let params = orbitfield::compute::esp::MsmParams {
                cutoff_angstrom: args.msm_cutoff,
                spacing_angstrom: args.msm_h,
            };
            msm.push(msm_case(
                n,
                args.msm_spacing,
                params,
                preference,
                args.repeats.min(3),
                args.msm_stages,
            )?);
            eprintln!("{:?}", msm.last());
        }
    }
    let mut rdf = Vec::new();
    for &n in &rdf_atoms {
        // Sparse (r_max 12 A, as `orbitfield rdf` defaults) and dense (r_max near half the box:
        // about half of all pairs are counted, so the shared-memory atomics are exercised).
        let side = (n as f64 / 0.0334).cbrt();
        for r_max in args.rdf_r_max.split(',') {
            let r_max = match r_max.trim() {
                "half" => 0.49 * side,
                v => v
                    .parse::<f64>()
                    .ok()
                    .filter(|r| *r > 0.0)
                    .with_context(|| format!("--rdf-r-max: '{v}' is not a distance"))?,
            };
            rdf.push(rdf_case(n, r_max, g, args.repeats.min(5), &rdf_methods)?);
            eprintln!("{:?}", rdf.last());
        }
    }
    let mut pool = Vec::new();
    if args.pool
        && let Some(g) = g
    {
        let (sel, _) = cuda::devices_from_env();
        let devices = match sel {
            Some(s) => s,
            None => (0..cuda::discover(None).engines.len()).collect(),
        };
        let which: Vec<String> = args.pool_cases.split(',').map(|c| c.trim().to_string()).collect();
        pool = super::pool_bench::run(
            &which,
            &c60,
            g,
            &devices,
            args.quick,
            args.repeats,
            args.pool_dcs_charges,
        );
    }
    println!("device: {device}");
    println!(
        "{:<44} {:>10} {:>12} {:>12} {:>12} {:>9} {:>10}  cpu figure",
        "case", "points", "gpu ms", "general ms", "cpu ms", "speedup", "rel err"
    );
    for c in &cases {
        println!(
            "{:<44} {:>10} {:>12} {:>12} {:>12.3} {:>9} {:>10}  {}{}",
            c.name,
            c.points,
            fmt_opt(c.gpu_ms, 4),
            fmt_opt(c.gpu_general_ms, 4),
            c.cpu_ms,
            fmt_opt(c.speedup, 1),
            c.rel_err_vs_cpu
                .map(|e| format!("{e:.1e}"))
                .unwrap_or_else(|| "-".into()),
            c.cpu_note,
            c.gpu_evals_per_s
                .map(|r| format!("; gpu {r:.3e} evals/s"))
                .unwrap_or_default(),
        );
    }
    for c in cases.iter().filter(|c| c.cpu_pair_ms.is_some()) {
        println!(
            "{}, HOMO + LUMO one by one / one batch (with copy back): cpu {} / {} ms, gpu {} / {} ms",
            c.name,
            fmt_opt(c.cpu_pair_ms, 2),
            fmt_opt(c.cpu_batch_ms, 2),
            fmt_opt(c.gpu_pair_ms, 3),
            fmt_opt(c.gpu_batch_ms, 3),
        );
    }
    for p in &pool {
        println!(
            "pool {}: kernels {} ms, copy back {} ms ({} GB/s); pool one GPU {:.3} ms (fresh memory {} ms, {} x kernels + copy), all {:?}: {} ms, efficiency {}, tiles {:?}, max diff {}",
            p.case,
            fmt_opt(p.kernel_ms, 3),
            fmt_opt(p.copy_back_ms, 3),
            fmt_opt(p.copy_gb_per_s, 1),
            p.pool_one_ms,
            fmt_opt(p.pool_one_fresh_ms, 3),
            fmt_opt(p.pool_over_kernel_and_copy, 2),
            p.devices,
            fmt_opt(p.pool_all_ms, 3),
            p.efficiency
                .map(|e| format!("{:.1}%", e * 100.0))
                .unwrap_or_else(|| "-".into()),
            p.tiles_per_gpu,
            p.max_diff_all_vs_one
                .map(|e| format!("{e:.1e}"))
                .unwrap_or_else(|| "-".into()),
        );
    }
    for r in &rdf {
        println!(
            "rdf {} x {} atoms, box {:.1} A, r_max {:.1} A ({:.2}% of pairs within): gpu {} ms ({}), cpu {} ms ({}){}",
            r.atoms,
            r.atoms,
            r.box_angstrom,
            r.r_max_angstrom,
            100.0 * r.hit_fraction,
            fmt_opt(r.gpu_ms, 3),
            r.gpu_pairs_per_s
                .map(|p| format!("{p:.3e} pairs/s"))
                .unwrap_or_else(|| "-".into()),
            fmt_opt(r.cpu_ms, 1),
            r.cpu_pairs_per_s
                .map(|p| format!("{p:.3e} pairs/s as N x N"))
                .unwrap_or_else(|| "-".into()),
            match (r.same_total, r.moved_fraction) {
                (Some(true), Some(f)) => format!(", same pairs as the CPU, {f:.1e} of them in a neighbouring bin"),
                (Some(false), _) => ", PAIR TOTALS DIFFER FROM THE CPU".to_string(),
                _ => String::new(),
            }
        );
    }
    for m in &msm {
        println!(
            "msm {} atoms, box {:.1} A, a = {} A, h = {} A, map {} points at {} A on {:?}, binning and levels by the {} (host binning alone {:.3} s): plan {:.3} s + map {:.3} s (kernel {}, device bins {}, device levels {}) = {:.3} s end to end (first, into a fresh buffer: {:.3} s); rel RMS vs direct {:.2e} ({} points)",
            m.atoms,
            m.box_angstrom,
            m.cutoff_angstrom,
            m.msm_spacing_angstrom,
            m.map_points,
            m.map_spacing_angstrom,
            m.engines,
            m.stages_on,
            m.bins_s,
            m.plan_s,
            m.map_s,
            m.kernel_s.map(|k| format!("{k:.3} s")).unwrap_or_else(|| "-".into()),
            m.device_bins_s
                .map(|k| format!("{k:.3} s"))
                .unwrap_or_else(|| "-".into()),
            m.device_levels_s
                .map(|k| format!("{k:.3} s"))
                .unwrap_or_else(|| "-".into()),
            m.total_s,
            m.first_total_s,
            m.rel_rms_vs_direct,
            m.sampled_points
        );
    }
    if let Some(r) = &qm_esp {
        super::qm_esp_bench::print(r);
    }
    for r in &responsiveness {
        println!(
            "responsiveness {}: {:?} lattice, UI {:.1} frames/s (95th percentile {:.1} ms, worst {:.1} ms, draw {:.1} ms), fields shown {:.2}/s \
             (complete with colours {:.2}/s) while playing at {} frames/s, surfaces on the {} on {}",
            r.name,
            r.lattice_dims,
            r.ui_fps,
            r.ui_p95_ms,
            r.ui_max_ms,
            r.draw_ms,
            r.fields_per_second,
            r.complete_frames_per_second,
            r.playback_fps,
            if r.gpu_surfaces { "render device" } else { "CPU" },
            r.engines
        );
    }
    for p in &playback {
        println!(
            "playback {}: {:?} lattice, {:.1} frames/s end to end (field {:.2} ms + isosurfaces and draw {:.2} ms per frame, \
             of which surface {:.2} ms; pool request {:.2} ms, compute {:.2} ms) on {}{}",
            p.name,
            p.lattice_dims,
            p.fps,
            p.field_ms,
            p.surface_and_draw_ms,
            p.surface_ms,
            p.pool_total_ms,
            p.pool_compute_ms,
            p.engines,
            if p.batched { "" } else { ", orbital batching off" }
        );
    }
    let report = Report {
        device,
        cpu_threads: threads,
        notes,
        cases,
        pool,
        rdf,
        msm,
        playback,
        responsiveness,
        qm_esp,
    };
    if let Some(p) = &args.json {
        let text = serde_json::to_string_pretty(&report)?;
        std::fs::write(p, text).with_context(|| format!("writing {}", p.display()))?;
    }
    Ok(())
}
