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
use orbitfield::compute::{Field, FieldInput, FieldJob, PointCharges, SlabEngine};
use orbitfield::jobs::DeviceChoice;
use orbitfield::model::basis::{BasisSet, Shell};
use orbitfield::model::units::bohr_from_angstrom;
use orbitfield::model::{Element, Lattice, OrbitalSet, QmAtom, Spin, SpinKind, Wavefunction};
use serde::Serialize;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// Write the results as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// A reduced suite (under a minute on a 2-core CPU).
    #[arg(long)]
    quick: bool,
    /// cpu, gpu or auto (CUDA devices from ORBITFIELD_DEVICES, else the first).
    #[arg(long, default_value = "auto")]
    device: String,
    /// Timed runs per figure (the median is reported).
    #[arg(long, default_value_t = 9)]
    repeats: usize,
    /// Coulomb kernel variants to time, separated by commas (default: the engine's): "U:S" or
    /// "UxV:S[:newton2]" (U points x V rows per thread, S of the U*V evaluations per charge with 1/sqrt
    /// on the FMA pipe), optionally followed by "/bY/mN/aN/rN/pN/sN/tN" (rows of 32 threads per block,
    /// blocks per multiprocessor for the register allocation, atoms per loop iteration, a register cap
    /// in place of the blocks, a rotation of the FMA-pipe evaluations, atom ranges per chunk with 0
    /// chosen per launch, one or two streams), "sfu", "newton", "mixed:F". One JSON line per variant on
    /// stdout.
    #[arg(long, value_name = "LIST")]
    dcs_variants: Option<String>,
    /// Also time the headline cases (`--pool-cases`) through the worker pool (copy back included) on
    /// the first device alone and on all devices, beside the kernels alone (multi-GPU scaling).
    #[arg(long)]
    pool: bool,
    /// With --pool: the cases, comma separated: orbital (C60 HOMO 256^3), dcs (direct Coulomb map
    /// on 256^3), frames (adk's potential averaged over its frames).
    #[arg(long, value_name = "LIST", default_value = "orbital,dcs,frames")]
    pool_cases: String,
    /// With --pool: charges of the dcs case.
    #[arg(long, default_value_t = 1_000_000)]
    pool_dcs_charges: usize,
    /// Write the generated (specialised) MO kernel sources of the bench inputs to DIR and stop (no
    /// device needed; for offline inspection with ptxas/cuobjdump).
    #[arg(long, value_name = "DIR")]
    dump_specialised: Option<PathBuf>,
    /// Skip the MO cases (Coulomb and pool figures only).
    #[arg(long)]
    no_mo: bool,
    /// Skip the Coulomb cases.
    #[arg(long)]
    no_dcs: bool,
    /// Atom counts of generated water boxes whose MSM potential map (open boundaries, a = 12 A,
    /// h = 2 A) is timed end to end through the worker pool, comma separated (e.g. 1500000).
    #[arg(long, value_name = "LIST")]
    msm_atoms: Option<String>,
    /// MSM splitting distance a of the MSM cases (Angstrom).
    #[arg(long, default_value_t = orbitfield::compute::esp::DEFAULT_MSM_CUTOFF_ANGSTROM, value_name = "A")]
    msm_cutoff: f64,
    /// Finest MSM lattice spacing h of the MSM cases (Angstrom).
    #[arg(long, default_value_t = orbitfield::compute::esp::DEFAULT_MSM_SPACING_ANGSTROM, value_name = "A")]
    msm_h: f64,
    /// Where the MSM cases bin the charges and compute the long-range levels: `host` (with the
    /// plan) or `device` (by the CUDA engine that fills the map, from the plan's bin frame and level
    /// geometry).
    #[arg(long, value_enum, default_value = "device")]
    msm_stages: orbitfield::compute::esp::StagesOn,
    /// Time the viewer's per-frame pipeline headless (field, GPU isosurfaces, draw) playing the
    /// threonine MD series of tests/data/qm/threonine_md and a C60 6-31G* series, at --playback-points,
    /// and the threonine series' density surface coloured by its wavefunction's potential (the
    /// viewer's default lattice).
    #[arg(long)]
    playback: bool,
    /// With --playback or --ui-seconds: only the scenes whose name contains this text (e.g. "two
    /// representations").
    #[arg(long, value_name = "TEXT")]
    playback_only: Option<String>,
    /// With --playback: play the two-representation scenes a second time with the pool's batching of
    /// one frame's orbitals off (the peer of the batched figure, same run).
    #[arg(long)]
    playback_unbatched: bool,
    /// With --playback: where the orbital scenes' fields are computed. `render-device`: the orbital
    /// scenes (HOMO; HOMO + LUMO as two representations; threonine MD, C60) played through the
    /// viewer's update loop, draw stage and draw at 1280x720 with each frame's fields computed by
    /// the WGSL pass on the render device straight into the marching cubes' lattice buffers; frames/s
    /// end to end and the per-frame split (packing, pass + extraction, draw). `pool`: the worker
    /// pool's engines. `auto` (the default) chooses as the viewer's "auto" does: the render device on
    /// a hardware adapter that runs the orbital pass and GPU isosurfaces, else the pool.
    #[arg(long, value_enum, default_value = "auto")]
    orbitals_on: FieldsOn,
    /// With --playback --orbitals-on render-device: also play the HOMO series with the orbital pass
    /// and the marching cubes alone, without the viewer's state and without the draw (the no-draw
    /// figure).
    #[arg(long)]
    playback_no_draw_peer: bool,
    /// Lattice points along the longest axis for --playback and --ui-seconds.
    #[arg(long, default_value_t = 128)]
    playback_points: u32,
    /// Play the --playback scenes for this many seconds each as the viewer does (30 frames/s, frames
    /// dropped when fields arrive late) and report the UI frame rate and the fields shown per second.
    #[arg(long, value_name = "SECONDS")]
    ui_seconds: Option<f64>,
    /// With --ui-seconds: extract isosurfaces with the CPU marching cubes instead of the render
    /// device's compute pass.
    #[arg(long)]
    cpu_surfaces: bool,
    /// Map spacing of the MSM cases (Angstrom).
    #[arg(long, default_value_t = 0.5)]
    msm_spacing: f64,
    /// Atom counts N of the RDF cases (N x N pairs in a periodic water-density box), comma separated;
    /// "none" skips them.
    #[arg(long, value_name = "LIST")]
    rdf_atoms: Option<String>,
    /// GPU RDF methods to time on each RDF case, comma separated: auto, all-pairs, cells. One JSON
    /// line per method on stdout, with whether its histogram equals the all-pairs one.
    #[arg(long, value_name = "LIST", default_value = "auto")]
    rdf_methods: String,
    /// r_max of the RDF cases (Angstrom), comma separated; "half" is 0.49 x the box.
    #[arg(long, value_name = "LIST", default_value = "12,half")]
    rdf_r_max: String,
    /// Time only DSSP and the cartoon mesh per frame (adk, and adk copies up to 100,000 residues, or
    /// 20,000 with --quick) and stop.
    #[arg(long)]
    cartoon: bool,
    /// With --cartoon: `render-device` also times the mesh written by the compute pass on the render
    /// device (per-residue inputs on the CPU, their upload, the passes), beside the CPU figures.
    #[arg(long, value_enum, default_value = "cpu")]
    cartoon_on: CartoonOn,
    /// Time the electrostatic potential of threonine's wavefunction: the CPU engine on one thread
    /// against PySCF's cubegen.mep on one core (same lattice), and the GPU on an 80^3 lattice.
    #[arg(long)]
    qm_esp: bool,
    /// With --qm-esp: the Python that has PySCF, for the peer timing (run from the repository root).
    #[arg(long, default_value = "python3")]
    pyscf_python: String,
    /// With --qm-esp: points per axis of the lattice the CPU engine and PySCF share.
    #[arg(long, default_value_t = 20)]
    qm_esp_peer_points: usize,
    /// Time only the molecular-surface field and its isosurface (protein-like copies of adk, from the
    /// repository root) and stop.
    #[arg(long)]
    molsurf: bool,
    /// With --molsurf: atom counts, comma separated.
    #[arg(long, value_name = "LIST", default_value = "100000,1000000")]
    molsurf_atoms: String,
    /// With --molsurf: lattice spacing (Angstrom).
    #[arg(long, default_value_t = 1.0)]
    molsurf_spacing: f64,
    /// With --molsurf: `render-device` also times each system per frame on the render device (the
    /// WGSL binning and field passes into the marching cubes' buffer, the surface extracted there,
    /// the counters read back), beside the CUDA and CPU figures.
    #[arg(long, value_enum, default_value = "pool")]
    molsurf_on: FieldsOn,
    /// With --molsurf: instead of the field and surface figures, play this many frames of each
    /// system with its surface coloured by the per-frame potential of its charges (field, surface,
    /// potential at the vertices on the render device, draw at 1280x720; frames/s and the split).
    #[arg(long, default_value_t = 0, value_name = "FRAMES")]
    molsurf_colored_frames: usize,
}

/// One MSM potential map of a water box, end to end.
#[derive(Serialize, Debug)]
struct MsmResult {
    atoms: usize,
    box_angstrom: f64,
    cutoff_angstrom: f64,
    msm_spacing_angstrom: f64,
    map_points: usize,
    map_spacing_angstrom: f64,
    engines: Vec<String>,
    /// Who binned the charges and computed the long-range levels: "host" (with the plan) or
    /// "engine" (the engine that filled the map: the device for a CUDA engine).
    stages_on: String,
    /// The plan on the host (median): the bins' and levels' geometry and, with `stages_on` "host",
    /// the binning and every long-range level.
    plan_s: f64,
    /// Sorting the charges into bins on the host, timed apart: part of `plan_s` when `stages_on` is
    /// "host", a reference otherwise.
    bins_s: f64,
    /// The slab kernel over the whole map on the device alone (CUDA events, median of 3), when a
    /// GPU is present.
    kernel_s: Option<f64>,
    /// Binning on the device alone (CUDA events, median of 3; the charges' upload inside), when a
    /// GPU is present, whatever `stages_on`.
    device_bins_s: Option<f64>,
    /// Every long-range level on the device alone (CUDA events, median of 3; the charges' lattice
    /// coordinates computed and uploaded inside), when a GPU is present, whatever `stages_on`.
    device_levels_s: Option<f64>,
    /// Short-range sums and interpolation of the whole map through the pool (with `stages_on`
    /// "engine", binning and levels on the device first), map on the host (median).
    map_s: f64,
    total_s: f64,
    /// The first repeat end to end, whose map is written into freshly allocated memory.
    first_total_s: f64,
    /// Relative RMS error against a float64 direct sum at sampled map points.
    rel_rms_vs_direct: f64,
    sampled_points: usize,
}

/// `n_atoms / 3` TIP3P-charged waters (O -0.834 e, H +0.417 e) at liquid density, randomly oriented,
/// one per cell of a cubic lattice with the oxygen anywhere in its cell (no long-range order, which
/// would resonate with some MSM lattice spacings); returns the charges (bohr) and the box side
/// (Angstrom).
fn water_box(n_atoms: usize, seed: u64) -> (PointCharges, f64) {
    let waters = (n_atoms / 3).max(1);
    let per_side = (waters as f64).cbrt().ceil() as usize;
    let a = (29.9f64).cbrt();
    let side = per_side as f64 * a;
    let mut rng = Rng(seed);
    let mut q = PointCharges::default();
    let bohr = orbitfield::model::units::bohr_from_angstrom(1.0);
    'fill: for i in 0..per_side {
        for j in 0..per_side {
            for k in 0..per_side {
                if q.charges_e.len() >= 3 * waters {
                    break 'fill;
                }
                let o = [i, j, k].map(|n| (n as f64 + rng.unit()) * a);
                // A random orientation: O-H 0.9572 A, H-O-H 104.52 degrees.
                let u = [rng.unit() - 0.5, rng.unit() - 0.5, rng.unit() - 0.5];
                let nu = (u[0] * u[0] + u[1] * u[1] + u[2] * u[2]).sqrt().max(1e-9);
                let u = u.map(|x| x / nu);
                let t = [rng.unit() - 0.5, rng.unit() - 0.5, rng.unit() - 0.5];
                let d = t[0] * u[0] + t[1] * u[1] + t[2] * u[2];
                let v = [t[0] - d * u[0], t[1] - d * u[1], t[2] - d * u[2]];
                let nv = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt().max(1e-9);
                let v = v.map(|x| x / nv);
                let half = (104.52f64 / 2.0).to_radians();
                let h1 = [0, 1, 2].map(|c| o[c] + 0.9572 * (half.cos() * u[c] + half.sin() * v[c]));
                let h2 = [0, 1, 2].map(|c| o[c] + 0.9572 * (half.cos() * u[c] - half.sin() * v[c]));
                for (p, c) in [(o, -0.834), (h1, 0.417), (h2, 0.417)] {
                    q.positions_bohr.push(p.map(|x| x * bohr));
                    q.charges_e.push(c);
                }
            }
        }
    }
    (q, side)
}

fn msm_case(
    n_atoms: usize,
    spacing_angstrom: f64,
    params: orbitfield::compute::esp::MsmParams,
    preference: DeviceChoice,
    repeats: usize,
    stages: orbitfield::compute::esp::StagesOn,
) -> Result<MsmResult> {
    use orbitfield::compute::esp::{Boundary, EspMethod, EspPlan, StagesOn, field_input, field_input_with};
    use orbitfield::jobs::{Pool, PoolConfig};
    let (charges, side) = water_box(n_atoms, 0x6d73_6d00 ^ n_atoms as u64);
    let bohr = orbitfield::model::units::bohr_from_angstrom(1.0);
    let n = (side / spacing_angstrom).round() as usize + 1;
    let lattice = Lattice::axis_aligned([0.0; 3], spacing_angstrom * bohr, [n, n, n]);
    let charges = Arc::new(charges);
    let pool: Pool<()> = Pool::new(PoolConfig {
        preference,
        ..PoolConfig::default()
    });
    // Warm-up on a small map (device contexts exist already; this compiles the kernel).
    let small = Lattice::axis_aligned([0.0; 3], spacing_angstrom * bohr, [n.min(32), n.min(32), n.min(32)]);
    let warm = field_input_with(charges.clone(), EspMethod::Msm(params), Boundary::Open, &small, stages)?;
    pool.compute_grid(
        (),
        FieldJob {
            field: Field::Potential,
            lattice: small,
            input: warm,
        },
    )?;
    let mut plan_t = Vec::new();
    let mut map_t = Vec::new();
    let mut total_t = Vec::new();
    let mut grid: Option<orbitfield::model::Grid3> = None;
    for _ in 0..repeats.max(1) {
        // The last map's buffer goes back to the pool before the clock starts, as a viewer or a
        // trajectory series gives back the map it replaces: the next map is written into memory
        // that is mapped already. The first repeat writes a fresh buffer (`first_total_s`).
        if let Some(g) = grid.take() {
            pool.recycle(g.values);
        }
        let t0 = Instant::now();
        let input = field_input_with(
            charges.clone(),
            EspMethod::Msm(params),
            Boundary::Open,
            &lattice,
            stages,
        )?;
        let t1 = Instant::now();
        let g = pool.compute_grid(
            (),
            FieldJob {
                field: Field::Potential,
                lattice,
                input,
            },
        )?;
        let t2 = Instant::now();
        plan_t.push((t1 - t0).as_secs_f64());
        map_t.push((t2 - t1).as_secs_f64());
        total_t.push((t2 - t0).as_secs_f64());
        grid = Some(g);
    }
    let grid = grid.ok_or_else(|| anyhow::anyhow!("no map"))?;
    let t = Instant::now();
    let a_bohr = orbitfield::model::units::bohr_from_angstrom(params.cutoff_angstrom);
    orbitfield::compute::esp::bins::AtomBins::open(&charges.positions_bohr, &charges.charges_e, a_bohr)
        .map_err(anyhow::Error::msg)?;
    let bins_s = t.elapsed().as_secs_f64();
    let mut kernel_s = None;
    let mut device_bins_s = None;
    let mut device_levels_s = None;
    if preference != DeviceChoice::Cpu
        && let Some(gpu) = cuda::discover(Some(&[0])).engines.into_iter().next()
    {
        let input = field_input(charges.clone(), EspMethod::Msm(params), Boundary::Open, &lattice)?;
        let job = FieldJob {
            field: Field::Potential,
            lattice,
            input,
        };
        kernel_s = Some(median(gpu.time_kernels(&job, 3)?) * 1e-3);
        let plan = EspPlan::build_with(
            charges.clone(),
            EspMethod::Msm(params),
            Boundary::Open,
            &lattice,
            StagesOn::Engine,
        )?;
        device_bins_s = Some(median(gpu.time_msm_bins(&plan, 3)?) * 1e-3);
        device_levels_s = Some(median(gpu.time_msm_levels(&plan, 3)?) * 1e-3);
    }
    // Accuracy: float64 direct sums at sampled points (at least 1 A from every charge).
    let mut rng = Rng(0x00ac_c0de);
    let samples: Vec<(usize, [f64; 3])> = (0..400)
        .map(|_| {
            let idx = [0; 3].map(|_| ((rng.unit() * n as f64) as usize).min(n - 1));
            (
                idx[0] + n * (idx[1] + n * idx[2]),
                lattice.point_bohr(idx[0], idx[1], idx[2]),
            )
        })
        .collect();
    use rayon::prelude::*;
    let min_r = bohr;
    let exact: Vec<Option<f64>> = samples
        .par_iter()
        .map(|(_, p)| {
            let mut v = 0.0;
            for (x, c) in charges.positions_bohr.iter().zip(&charges.charges_e) {
                let r = ((p[0] - x[0]).powi(2) + (p[1] - x[1]).powi(2) + (p[2] - x[2]).powi(2)).sqrt();
                if r < min_r {
                    return None;
                }
                v += c / r;
            }
            Some(v)
        })
        .collect();
    let (mut num, mut den, mut used) = (0.0f64, 0.0f64, 0usize);
    for ((idx, _), e) in samples.iter().zip(&exact) {
        if let (Some(e), Some(&g)) = (e, grid.values.get(*idx)) {
            num += (f64::from(g) - e).powi(2);
            den += e * e;
            used += 1;
        }
    }
    let engines = pool.workers().iter().map(|w| w.engine.clone()).collect();
    Ok(MsmResult {
        atoms: charges.charges_e.len(),
        box_angstrom: side,
        cutoff_angstrom: params.cutoff_angstrom,
        msm_spacing_angstrom: params.spacing_angstrom,
        map_points: lattice.n_points(),
        map_spacing_angstrom: spacing_angstrom,
        engines,
        stages_on: match stages {
            StagesOn::Host => "host",
            StagesOn::Engine => "engine",
        }
        .to_string(),
        plan_s: median(plan_t),
        bins_s,
        kernel_s,
        device_bins_s,
        device_levels_s,
        map_s: median(map_t),
        first_total_s: total_t.first().copied().unwrap_or(f64::NAN),
        total_s: median(total_t),
        rel_rms_vs_direct: (num / den.max(1e-300)).sqrt(),
        sampled_points: used,
    })
}

/// One RDF frame of N x N pairs: all-pairs GPU kernel and the CPU cell-list engine.
#[derive(Serialize, Debug)]
struct RdfResult {
    atoms: usize,
    box_angstrom: f64,
    r_max_angstrom: f64,
    bins: usize,
    /// Fraction of pairs within r_max.
    hit_fraction: f64,
    /// GPU frame time: upload, all N x N distances, histogram download (median).
    gpu_ms: Option<f64>,
    gpu_pairs_per_s: Option<f64>,
    /// The CPU engine (cell list, rayon) on the same frame; absent above `cpu_limit` atoms.
    cpu_ms: Option<f64>,
    /// CPU pair distances per second, counted as N x N (what the cell list replaces).
    cpu_pairs_per_s: Option<f64>,
    /// Whether GPU and CPU count the same pairs within r_max, and the fraction of those the GPU
    /// puts in a neighbouring bin (f32 against f64 distances at bin edges).
    same_total: Option<bool>,
    moved_fraction: Option<f64>,
    /// Every GPU method timed (`--rdf-methods`); `gpu_ms` above is the first.
    methods: Vec<RdfMethodResult>,
}

/// One GPU pair-enumeration method on one RDF frame.
#[derive(Serialize, Debug)]
struct RdfMethodResult {
    /// The method asked for, and the one that ran (all pairs where the cell list does not apply).
    method: String,
    used: String,
    gpu_ms: f64,
    /// N x N pairs per second (the work the cell list replaces).
    pairs_per_s: f64,
    /// Whether its histogram equals the all-pairs kernel's count for count.
    identical_to_all_pairs: bool,
}

fn rdf_case(
    n: usize,
    r_max: f64,
    gpu: Option<&CudaEngine>,
    repeats: usize,
    methods: &[orbitfield::compute::cuda::rdf::RdfMethod],
) -> Result<RdfResult> {
    use orbitfield::analysis::rdf::{RdfAccumulator, RdfSettings};
    use orbitfield::compute::cuda::rdf::{PairGeometry, RdfMethod};
    use orbitfield::model::{Frame, UnitCell};
    // Water oxygen density: 0.0334 per cubic Angstrom.
    let side = (n as f64 / 0.0334).cbrt();
    let mut rng = Rng(0x5eed_0000_0000_0001 ^ n as u64);
    let frame = Frame {
        positions_angstrom: (0..n).map(|_| [0; 3].map(|_| (rng.next() * side) as f32)).collect(),
        cell: Some(UnitCell::orthorhombic([side; 3])),
        ..Frame::default()
    };
    let sel: Vec<u32> = (0..n as u32).collect();
    let bins = 120;
    let settings = RdfSettings {
        r_max_angstrom: r_max,
        bins,
        exclude_same_group: false,
    };
    let acc = RdfAccumulator::new(settings.clone())?;
    let cell = acc.check_frame(0, &frame, &sel, &sel, None)?;
    let pairs = n as f64 * n as f64;
    let mut out = RdfResult {
        atoms: n,
        box_angstrom: side,
        r_max_angstrom: r_max,
        bins,
        hit_fraction: 0.0,
        gpu_ms: None,
        gpu_pairs_per_s: None,
        cpu_ms: None,
        cpu_pairs_per_s: None,
        same_total: None,
        moved_fraction: None,
        methods: Vec::new(),
    };
    let cpu_counts = if n <= 200_000 {
        let mut times = Vec::new();
        let mut counts = Vec::new();
        for _ in 0..repeats.clamp(1, 3) {
            let t = Instant::now();
            counts = acc.frame_counts_cpu(&frame, cell, &sel, &sel, None)?;
            times.push(t.elapsed().as_secs_f64() * 1e3);
        }
        let ms = median(times);
        out.cpu_ms = Some(ms);
        out.cpu_pairs_per_s = Some(pairs / (ms * 1e-3));
        Some(counts)
    } else {
        None
    };
    if let Some(g) = gpu {
        let geom = PairGeometry::new(&frame, cell, &sel, &sel, None);
        let (all_pairs, _) = g.rdf_counts_with(&geom, &settings, RdfMethod::AllPairs)?;
        let mut first = None;
        for &method in methods {
            let (counts, used) = g.rdf_counts_with(&geom, &settings, method)?;
            let mut times = Vec::new();
            for _ in 0..repeats.max(1) {
                let t = Instant::now();
                let (c, _) = g.rdf_counts_with(&geom, &settings, method)?;
                times.push(t.elapsed().as_secs_f64() * 1e3);
                if c != counts {
                    bail!("RDF kernel ({method}): two runs on the same frame gave different counts");
                }
            }
            let ms = median(times);
            let m = RdfMethodResult {
                method: method.to_string(),
                used: used.to_string(),
                gpu_ms: ms,
                pairs_per_s: pairs / (ms * 1e-3),
                identical_to_all_pairs: counts == all_pairs,
            };
            println!(
                "{}",
                serde_json::json!({
                    "bench": "rdf_method",
                    "atoms": n,
                    "box_angstrom": side,
                    "r_max_angstrom": r_max,
                    "method": m.method,
                    "used": m.used,
                    "gpu_ms": m.gpu_ms,
                    "pairs_per_s": m.pairs_per_s,
                    "identical_to_all_pairs": m.identical_to_all_pairs,
                })
            );
            out.methods.push(m);
            first.get_or_insert((ms, counts));
        }
        let (ms, counts) = first.unwrap_or((f64::NAN, all_pairs));
        out.gpu_ms = Some(ms);
        out.gpu_pairs_per_s = Some(pairs / (ms * 1e-3));
        out.hit_fraction = counts.iter().sum::<u64>() as f64 / pairs;
        if let Some(c) = &cpu_counts {
            let total: u64 = c.iter().sum();
            let moved: u64 = counts.iter().zip(c).map(|(a, b)| a.abs_diff(*b)).sum();
            out.same_total = Some(counts.iter().sum::<u64>() == total);
            out.moved_fraction = Some(moved as f64 / total.max(1) as f64);
        }
    } else if let Some(c) = &cpu_counts {
        out.hit_fraction = c.iter().sum::<u64>() as f64 / pairs;
    }
    Ok(out)
}

#[derive(Serialize, Debug)]
struct CaseResult {
    name: String,
    points: usize,
    /// Basis functions (MO) or charges (potential).
    size: usize,
    gpu_ms: Option<f64>,
    gpu_form: Option<String>,
    gpu_general_ms: Option<f64>,
    gpu_specialised_ms: Option<f64>,
    cpu_ms: f64,
    cpu_note: String,
    speedup: Option<f64>,
    /// Atom evaluations per second (potential maps only).
    gpu_evals_per_s: Option<f64>,
    cpu_evals_per_s: Option<f64>,
    /// ||gpu - cpu|| / ||cpu|| on the compared planes.
    rel_err_vs_cpu: Option<f64>,
    /// MO cases: HOMO and LUMO one after the other, and both in one batched call
    /// (`SlabEngine::compute_slabs`, as the pool computes one frame's orbitals), wall clock with the
    /// copy back, milliseconds.
    cpu_pair_ms: Option<f64>,
    cpu_batch_ms: Option<f64>,
    gpu_pair_ms: Option<f64>,
    gpu_batch_ms: Option<f64>,
    /// Potential maps: the largest |gpu - ref| / |ref| over sampled points of the compared planes,
    /// ref the sum in float64.
    max_rel_err_vs_f64: Option<f64>,
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

fn rel_err(a: &[f32], b: &[f32]) -> f64 {
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
struct Rng(u64);
impl Rng {
    /// Uniform in [-1, 1).
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let v = self.0.wrapping_mul(0x2545_f491_4f6c_dd1d);
        (v >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
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

/// C60 with the 6-31G* carbon basis (Cartesian d) and random orbital coefficients.
pub fn synthetic_c60() -> Wavefunction {
    let phi = (1.0 + 5f64.sqrt()) / 2.0;
    let bases = [
        [0.0, 1.0, 3.0 * phi],
        [1.0, 2.0 + phi, 2.0 * phi],
        [phi, 2.0, 2.0 * phi + 1.0],
    ];
    let mut verts: Vec<[f64; 3]> = Vec::new();
    for b in bases {
        for signs in 0..8 {
            let v = [
                if signs & 1 != 0 { -b[0] } else { b[0] },
                if signs & 2 != 0 { -b[1] } else { b[1] },
                if signs & 4 != 0 { -b[2] } else { b[2] },
            ];
            for k in 0..3 {
                let p = [v[k % 3], v[(k + 1) % 3], v[(k + 2) % 3]];
                if !verts.iter().any(|q| (0..3).all(|i| (q[i] - p[i]).abs() < 1e-9)) {
                    verts.push(p);
                }
            }
        }
    }
    // Edge length 2 in these units; carbon-carbon bonds of 1.43 Angstrom.
    let scale = bohr_from_angstrom(1.43) / 2.0;
    let s1 = (
        vec![3047.5249, 457.36951, 103.94869, 29.210155, 9.286663, 3.163927],
        vec![0.0018347, 0.0140373, 0.0688426, 0.2321844, 0.4679413, 0.362312],
    );
    let sp_exp = vec![7.8682724, 1.8812885, 0.5442493];
    let sp_s = vec![-0.1193324, -0.1608542, 1.1434564];
    let sp_p = vec![0.0689991, 0.316424, 0.7443083];
    let mut atoms = Vec::new();
    let mut shells = Vec::new();
    for (i, v) in verts.iter().enumerate() {
        let c = v.map(|x| x * scale);
        atoms.push(QmAtom {
            element: Element(6),
            nuclear_charge: 6.0,
            position_bohr: c,
        });
        let mk = |l: u8, e: &Vec<f64>, k: &Vec<f64>| Shell {
            l,
            pure: false,
            atom: i,
            center_bohr: c,
            exponents: e.clone(),
            coefficients: k.clone(),
        };
        shells.push(mk(0, &s1.0, &s1.1));
        shells.push(mk(0, &sp_exp, &sp_s));
        shells.push(mk(1, &sp_exp, &sp_p));
        shells.push(mk(0, &vec![0.1687144], &vec![1.0]));
        shells.push(mk(1, &vec![0.1687144], &vec![1.0]));
        shells.push(mk(2, &vec![0.8], &vec![1.0]));
    }
    let basis = BasisSet { shells };
    let nbf = basis.n_functions();
    let n_orb = 200.min(nbf);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let coefficients = (0..n_orb * nbf).map(|_| rng.next() * 0.2).collect();
    let alpha = OrbitalSet {
        energies_hartree: (0..n_orb).map(|i| -1.0 + i as f64 * 0.01).collect(),
        occupations: (0..n_orb).map(|i| if i < 180 { 2.0 } else { 0.0 }).collect(),
        symmetries: vec![String::new(); n_orb],
        coefficients,
        n_basis: nbf,
    };
    Wavefunction {
        atoms,
        basis,
        spin: SpinKind::Restricted,
        alpha,
        beta: None,
        program: Some("synthetic".into()),
        corrections: Vec::new(),
        energy_hartree: None,
        scf_density: None,
    }
}

pub(super) fn threonine() -> Result<Wavefunction> {
    crate::kit::threonine().map_err(|e| anyhow::anyhow!("threonine: {e}"))
}

/// CPU time for the whole lattice when it is small, else for `slab` middle planes scaled to the lattice.
fn cpu_time(
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

fn gpu_values(gpu: &CudaEngine, job: &FieldJob, z: std::ops::Range<usize>) -> Result<Vec<f32>> {
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

fn dcs_case(
    n_charges: usize,
    dims: [usize; 3],
    gpu: Option<&CudaEngine>,
    cpu: &CpuEngine,
    repeats: usize,
    variants: &[cuda::DcsVariant],
) -> Result<Vec<CaseResult>> {
    let spacing = 0.5;
    let lattice = Lattice::axis_aligned([0.0; 3], spacing, dims);
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let ext = dims.map(|d| d as f64 * spacing);
    let mut q = PointCharges::default();
    for _ in 0..n_charges {
        q.positions_bohr.push([
            (rng.next() * 0.5 + 0.5) * ext[0],
            (rng.next() * 0.5 + 0.5) * ext[1],
            (rng.next() * 0.5 + 0.5) * ext[2],
        ]);
        q.charges_e.push(rng.next());
    }
    let job = FieldJob {
        field: Field::Potential,
        lattice,
        input: FieldInput::Charges(Arc::new(q)),
    };
    let evals = job.lattice.n_points() as f64 * n_charges as f64;
    let slab = if evals > 2e9 { 1 } else { dims[2] };
    let (cpu_ms, cpu_note, cpu_vals, z) = cpu_time(cpu, &job, slab, repeats.min(3))?;
    let base = CaseResult {
        name: format!("potential {n_charges} charges {}x{}x{}", dims[0], dims[1], dims[2]),
        points: job.lattice.n_points(),
        size: n_charges,
        gpu_ms: None,
        gpu_form: None,
        gpu_general_ms: None,
        gpu_specialised_ms: None,
        cpu_ms,
        cpu_note,
        speedup: None,
        gpu_evals_per_s: None,
        cpu_evals_per_s: Some(evals / (cpu_ms * 1e-3)),
        rel_err_vs_cpu: None,
        cpu_pair_ms: None,
        cpu_batch_ms: None,
        gpu_pair_ms: None,
        gpu_batch_ms: None,
        max_rel_err_vs_f64: None,
    };
    let Some(g) = gpu else { return Ok(vec![base]) };
    let default = g.dcs_variant();
    let list = if variants.is_empty() {
        vec![default]
    } else {
        variants.to_vec()
    };
    let mut out = Vec::new();
    let FieldInput::Charges(q) = &job.input else {
        bail!("the potential case has no charges");
    };
    // Float64 reference at 509 points spread over the compared planes (a prime stride).
    let (nx, ny) = (dims[0], dims[1]);
    let plane = nx * ny;
    let samples: Vec<usize> = (0..509).map(|k| (k * 7919 * 13) % (plane * z.len())).collect();
    let reference: Vec<f64> = samples
        .iter()
        .map(|&idx| {
            let p = [
                (idx % nx) as f64 * spacing,
                (idx / nx % ny) as f64 * spacing,
                (z.start + idx / plane) as f64 * spacing,
            ];
            q.positions_bohr
                .iter()
                .zip(&q.charges_e)
                .map(|(a, &c)| c / ((a[0] - p[0]).powi(2) + (a[1] - p[1]).powi(2) + (a[2] - p[2]).powi(2)).sqrt())
                .sum()
        })
        .collect();
    for v in list {
        g.set_dcs_variant(v);
        let ms = median(g.time_kernels(&job, repeats)?);
        let mut r = CaseResult {
            name: format!("{} [{v}]", base.name),
            cpu_note: base.cpu_note.clone(),
            gpu_form: None,
            ..base
        };
        r.gpu_form = Some(format!(
            "dcs {v}: {} x {} points/thread, {:.3} of 1/sqrt on the FMA pipe",
            v.unroll,
            v.rows,
            v.soft_fraction()
        ));
        r.gpu_ms = Some(ms);
        r.speedup = Some(cpu_ms / ms);
        r.gpu_evals_per_s = Some(evals / (ms * 1e-3));
        let values = gpu_values(g, &job, z.clone())?;
        r.rel_err_vs_cpu = Some(rel_err(&values, &cpu_vals));
        let worst = samples
            .iter()
            .zip(&reference)
            .map(|(&i, &want)| {
                values
                    .get(i)
                    .map_or(f64::INFINITY, |&got| (f64::from(got) - want).abs() / want.abs())
            })
            .fold(0.0, f64::max);
        r.max_rel_err_vs_f64 = Some(worst);
        println!(
            "{}",
            serde_json::json!({
                "bench": "dcs_variant",
                "variant": v.to_string(),
                "soft_fraction": v.soft_fraction(),
                "gpu_ms": ms,
                "evals_per_s": evals / (ms * 1e-3),
                "max_rel_err_vs_f64": worst,
                "rel_err_vs_cpu": r.rel_err_vs_cpu,
            })
        );
        out.push(r);
    }
    g.set_dcs_variant(default);
    Ok(out)
}

fn fmt_opt(v: Option<f64>, digits: usize) -> String {
    v.map(|x| format!("{x:.digits$}")).unwrap_or_else(|| "-".into())
}

/// `--molsurf`: the molecular-surface cases alone.
fn molsurf(args: &BenchArgs, preference: DeviceChoice) -> Result<()> {
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

/// `--playback --orbitals-on render-device`: the orbital scenes (HOMO; HOMO + LUMO as two
/// representations) played through the viewer's own update loop, draw stage and draw at 1280x720,
/// each frame's fields computed on the render device and waited for; then, unless
/// `--playback-no-draw-peer` is off, the HOMO series without the viewer and without the draw
/// (`render_orbital_bench`, labelled as such).
fn render_device_playback(args: &BenchArgs) -> Result<()> {
    use super::playback::Show;
    let c60 = synthetic_c60();
    let mut viewer = Vec::new();
    for (name, system, frames, show) in super::playback::scenes(&c60, true) {
        if !matches!(show, Show::Lobes | Show::HomoAndLumo)
            || args.playback_only.as_ref().is_some_and(|t| !name.contains(t.as_str()))
        {
            continue;
        }
        let on = orbitfield::app::fields::device::FieldsOn::RenderDevice;
        let points = args.playback_points;
        let run = system.and_then(|sys| super::playback::playback_case(name, sys, points, frames, show, true, on));
        match run {
            Ok(r) => {
                println!(
                    "playback {} (viewer, orbitals on the render device, drawn at {}x{}): {:?} lattice, {:.1} \
                     frames/s end to end; per frame: update loop {:.2} ms (frame change, packing of frames not prepared ahead), pass + extraction {:.2} ms, \
                     draw {:.2} ms; packing {:.2} ms per representation and frame (ahead on its thread: {} frames, \
                     when shown: {})",
                    r.name,
                    r.image_px[0],
                    r.image_px[1],
                    r.lattice_dims,
                    r.fps,
                    r.field_ms,
                    r.surface_ms,
                    r.surface_and_draw_ms - r.surface_ms,
                    r.device_pack_ms,
                    r.device_frames_ahead,
                    r.device_frames_inline,
                );
                if let Some(st) = &r.device_stages {
                    println!(
                        "  stages per representation and frame (orbital pass '{}'): {}",
                        orbitfield::compute::wgpu::orbital::MoPassVariant::from_env().name(),
                        st.describe()
                    );
                }
                viewer.push(r);
            }
            Err(e) => eprintln!("note: playback '{name}' skipped: {e:#}"),
        }
    }
    let mut no_draw = Vec::new();
    // The no-draw series once per variant of the orbital pass (the viewer's run above uses the one
    // `ORBITFIELD_ORBITAL_PASS` names).
    let variants = orbitfield::compute::wgpu::orbital::MoPassVariant::ALL;
    for (variant, (name, system, frames, show)) in variants
        .into_iter()
        .flat_map(|v| super::playback::scenes(&c60, false).into_iter().map(move |s| (v, s)))
    {
        if !args.playback_no_draw_peer
            || show != Show::Lobes
            || args.playback_only.as_ref().is_some_and(|t| !name.contains(t.as_str()))
        {
            continue;
        }
        let run = system
            .and_then(|sys| super::render_orbital_bench::run_case(name, sys, args.playback_points, frames, variant));
        match run {
            Ok(r) => {
                println!(
                    "playback {} (NO DRAW, outside the viewer: orbital pass '{}' + both lobes only): {:?} lattice, \
                     {:.1} frames/s (waited for); field pass {:.2} ms ({}), packing {:.2} ms; CPU engine {:.1} ms on \
                     the same lattice ({:.1}x); {} + {} triangles; on {}",
                    r.name,
                    r.variant,
                    r.lattice_dims,
                    r.fps,
                    r.field_ms,
                    r.field_timing,
                    r.pack_ms,
                    r.cpu_field_ms,
                    r.speedup_vs_cpu,
                    r.triangles[0],
                    r.triangles[1],
                    r.adapter
                );
                no_draw.push(r);
            }
            Err(e) => eprintln!("note: playback '{name}' skipped: {e:#}"),
        }
    }
    if let Some(p) = &args.json {
        let text = serde_json::to_string_pretty(&serde_json::json!({ "viewer": viewer, "no_draw": no_draw }))?;
        std::fs::write(p, text).with_context(|| format!("writing {}", p.display()))?;
    }
    Ok(())
}
