//! `orbitfield grid ils TOP TRAJ... --probe xe|o2|co|no|PROBE.xyz -o pmf.dx|cube`: implicit ligand
//! sampling (Cohen et al. 2006; VMD's `volmap ils`), a free-energy map of a small probe over a
//! trajectory.
//!
//! Owns the command's arguments and run: the system and its Lennard-Jones parameters
//! (`io::ils_params`), the probe and its orientations, the reference frame and the fit of each frame
//! onto it (`--align`, Kabsch on the selection via `analysis::qm_region::superpose`), the map's
//! lattice, frames dealt to MPI ranks (`batch`) and within a rank to the pool's workers
//! (`jobs::ils`), occupancy sums reduced over ranks, and the map written in kT (or kcal/mol).
//! `grid ils` has options of its own, so `cli::main` hands it here before the common parser
//! ([`grid_ils_main`]).

use anyhow::{Context, Result, bail};
use clap::Parser;
use orbitfield::analysis::qm_region::superpose;
use orbitfield::batch::{Partial, Ranks};
use orbitfield::compute::ils::{IlsSetup, place_atoms};
use orbitfield::io;
use orbitfield::io::cube::CubeAtom;
use orbitfield::jobs::ils::{IlsDone, IlsWorkers};
use orbitfield::model::ils::{
    DEFAULT_CUTOFF_ANGSTROM, DEFAULT_MAX_ENERGY_KT, DEFAULT_ORIENTATIONS, DEFAULT_SUBRES, IlsMap, OccupancySums,
    Orientations, Rigid,
};
use orbitfield::model::lj::{Probe, kt_kcal_per_mol};
use orbitfield::model::select::Selection;
use orbitfield::model::units::{ANGSTROM_PER_BOHR, BOHR_PER_ANGSTROM, DEFAULT_TEMPERATURE_KELVIN};
use orbitfield::model::{Frame, FrameRange, Grid3, Lattice};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

/// Map units.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum IlsUnits {
    #[default]
    #[value(name = "kT")]
    Kt,
    #[value(name = "kcal/mol")]
    KcalPerMol,
}

#[derive(clap::Parser, Debug)]
#[command(
    name = "orbitfield grid ils",
    about = "Implicit ligand sampling: the free-energy map (PMF, kT) of a small probe (O2, CO, NO, Xe or a probe file) over the frames of a trajectory"
)]
pub struct IlsArgs {
    /// Topology and trajectory files (e.g. a prmtop and NetCDF, or a PSF and DCD with --params).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Output map: .dx (OpenDX, Angstrom) or .cube (Gaussian cube, bohr).
    #[arg(short = 'o', long = "output")]
    pub output: PathBuf,
    /// The probe: xe, o2, co, no, or an XYZ-like file (count, comment, `element x y z eps rmin/2` per atom).
    #[arg(long)]
    pub probe: String,
    /// Frames (all, N, A:B or A:B:S; 0-based, end exclusive) [default: all].
    #[arg(long)]
    pub frames: Option<String>,
    /// The atoms that interact with the probe (selection language, taken at the reference frame; the
    /// massless sites of four- and five-site water are left out) [default: all].
    #[arg(long, value_name = "SELECTION")]
    pub sel: Option<String>,
    /// Fit every frame onto the reference frame by these atoms (Kabsch) before sampling.
    #[arg(long, value_name = "SELECTION")]
    pub align: Option<String>,
    /// The reference frame (0-based) [default: the first of --frames].
    #[arg(long)]
    pub align_frame: Option<usize>,
    /// Voxel spacing in Angstrom.
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    pub spacing: f64,
    /// Sample points per voxel edge (subres^3 per voxel).
    #[arg(long, default_value_t = DEFAULT_SUBRES)]
    pub subres: usize,
    /// Probe orientations: evenly spread directions on the sphere (half evaluated for a symmetric probe).
    #[arg(long, default_value_t = DEFAULT_ORIENTATIONS)]
    pub orient: usize,
    /// Lennard-Jones cutoff in Angstrom (hard, no switching).
    #[arg(long, default_value_t = DEFAULT_CUTOFF_ANGSTROM, allow_negative_numbers = true)]
    pub cutoff: f64,
    /// Cap of the map in kT.
    #[arg(long, default_value_t = DEFAULT_MAX_ENERGY_KT, allow_negative_numbers = true)]
    pub max_energy: f64,
    /// Temperature in kelvin.
    #[arg(long, default_value_t = DEFAULT_TEMPERATURE_KELVIN, allow_negative_numbers = true)]
    pub temperature: f64,
    /// Map units.
    #[arg(long, value_enum, default_value_t = IlsUnits::Kt)]
    pub units: IlsUnits,
    /// Explicit lattice: the first voxel centre X,Y,Z in Angstrom (with --dims).
    #[arg(
        long,
        value_delimiter = ',',
        num_args = 1..=3,
        requires = "dims",
        allow_negative_numbers = true
    )]
    pub origin: Option<Vec<f64>>,
    /// Explicit lattice: voxels NX,NY,NZ (with --origin).
    #[arg(long, value_delimiter = ',', num_args = 1..=3, requires = "origin")]
    pub dims: Option<Vec<usize>>,
    /// Use the lattice of an existing cube or DX map.
    #[arg(long, conflicts_with_all = ["origin", "dims"])]
    pub like: Option<PathBuf>,
    /// Place the lattice around these atoms of the reference frame [default: the --sel atoms].
    #[arg(long, value_name = "SELECTION")]
    pub around: Option<String>,
    /// Padding around the --around atoms, Angstrom.
    #[arg(long, default_value_t = 2.0, allow_negative_numbers = true)]
    pub padding: f64,
    /// CHARMM parameter files (.prm, .str; NONBONDED section) for a topology's atom types.
    #[arg(long, value_name = "FILE")]
    pub params: Vec<PathBuf>,
    /// Take every atom's parameters from the element table (UFF) whatever the files hold.
    #[arg(long)]
    pub lj_elements: bool,
    #[command(flatten)]
    pub device: super::device::DeviceArgs,
}

/// True when the command line is `orbitfield grid ils ...`.
fn is_grid_ils(args: &[String]) -> bool {
    args.get(1).is_some_and(|a| a == "grid") && args.get(2).is_some_and(|a| a == "ils")
}

/// Runs `grid ils` when the command line asks for it (`None` otherwise: the common parser goes on).
pub fn grid_ils_main() -> Option<ExitCode> {
    let argv: Vec<String> = std::env::args().collect();
    if !is_grid_ils(&argv) {
        return None;
    }
    let rest = super::with_negative_lists_joined(
        std::iter::once("orbitfield grid ils".to_string())
            .chain(argv.into_iter().skip(3))
            .map(std::ffi::OsString::from),
    );
    let args = match IlsArgs::try_parse_from(rest) {
        Ok(a) => a,
        Err(e) => {
            let _ = e.print();
            return Some(if e.use_stderr() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            });
        }
    };
    // Diagnostics as for the other commands: `ORBITFIELD_LOG=orbitfield::timing=debug` prints each
    // GPU frame's kept sample points and time.
    if let Ok(filter) = std::env::var("ORBITFIELD_LOG") {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
            .with_writer(std::io::stderr)
            .try_init();
    }
    let mut args = args;
    let ready = super::expand_patterns(&args.files)
        .map(|files| args.files = files)
        .and_then(|()| super::check_output_folder(Some(&args.output)));
    Some(super::exit_code(ready.and_then(|()| run(&args))))
}

/// Occupancy sums travelling between ranks.
struct SumsPartial(OccupancySums);

impl Partial for SumsPartial {
    fn to_bytes(&self) -> Vec<u8> {
        self.0.to_bytes()
    }
    fn merge_bytes(&mut self, bytes: &[u8]) -> Result<(), String> {
        self.0.merge(&OccupancySums::from_bytes(bytes)?)
    }
}

/// The probe `text` names: a built-in name or a probe file.
pub fn load_probe(text: &str) -> Result<Probe> {
    if let Some(p) = Probe::builtin(text) {
        return Ok(p);
    }
    let path = Path::new(text);
    if !path.exists() {
        return Err(orbitfield::model::lj::ProbeError::Unknown(text.to_string()).into());
    }
    let bytes = io::read_bytes(path)?;
    Ok(Probe::parse_xyz(text, &String::from_utf8_lossy(&bytes))?)
}

/// Positions of `indices` in `frame`, Angstrom.
fn positions_of(frame: &Frame, indices: &[u32]) -> Vec<[f64; 3]> {
    indices
        .iter()
        .filter_map(|&i| frame.positions_angstrom.get(i as usize))
        .map(|p| p.map(f64::from))
        .collect()
}

/// Atom indices of `text` (or all atoms) at `frame`; an empty selection is an error naming the option.
fn select(option: &str, text: Option<&str>, system: &io::System, frame: &Frame) -> Result<Vec<u32>> {
    let Some(text) = text else {
        return Ok((0..system.structure.len() as u32).collect());
    };
    let sel = Selection::parse(text).map_err(|e| anyhow::anyhow!("{option}: {e}"))?;
    let idx = sel.indices(&system.structure, Some(frame));
    if idx.is_empty() {
        bail!("{option} '{text}' selects no atoms");
    }
    Ok(idx)
}

/// The fit of `positions` (the align atoms of a frame) onto `reference`.
fn fit(positions: &[[f64; 3]], reference: &[[f64; 3]], frame: usize) -> Result<Rigid> {
    let (t, _rmsd) = superpose(positions, reference)
        .with_context(|| format!("frame {frame}: the --align atoms cannot be fitted (non-finite coordinates)"))?;
    Ok(Rigid {
        rotation: t.rotation,
        translation_angstrom: t.translation_bohr,
    })
}

/// The map's voxel lattice as `args` ask for it, around `around_angstrom`.
fn map_of(args: &IlsArgs, around_angstrom: &[[f64; 3]]) -> Result<IlsMap> {
    if let Some(like) = &args.like {
        let l = super::grid::like_lattice(like)?;
        let h = l.steps_bohr[0][0];
        if !l.is_axis_aligned()
            || (l.steps_bohr[1][1] - h).abs() > 1e-9 * h
            || (l.steps_bohr[2][2] - h).abs() > 1e-9 * h
        {
            bail!(
                "--like {}: ILS maps need an axis-aligned lattice with one spacing",
                like.display()
            );
        }
        return Ok(IlsMap {
            origin_angstrom: l.origin_angstrom(),
            spacing_angstrom: h * ANGSTROM_PER_BOHR,
            dims: l.dims,
        });
    }
    if let (Some(o), Some(d)) = (&args.origin, &args.dims) {
        return Ok(IlsMap {
            origin_angstrom: super::three("--origin", o)?,
            spacing_angstrom: args.spacing,
            dims: super::three("--dims", d)?,
        });
    }
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for p in around_angstrom {
        for k in 0..3 {
            lo[k] = lo[k].min(p[k]);
            hi[k] = hi[k].max(p[k]);
        }
    }
    if !(lo[0].is_finite() && hi[0].is_finite()) {
        bail!("no atoms to place the lattice around");
    }
    let l = Lattice::around_box(lo, hi, args.padding, args.spacing);
    Ok(IlsMap {
        origin_angstrom: l.origin_angstrom(),
        spacing_angstrom: args.spacing,
        dims: l.dims,
    })
}

/// Frames whose float64 maps may be in flight at once (`jobs::ils` holds two per worker and one
/// more; four workers, a CPU and three GPUs, are assumed).
const FRAMES_IN_FLIGHT: u128 = 9;

/// Refuses a map whose voxel arrays would not fit in half of the physical memory (the running sums
/// in float64, one float64 map per frame in flight, the float32 map written), before anything is
/// allocated: a fine --spacing over a large system otherwise ends in an allocation failure.
fn check_map_memory(map: &IlsMap) -> Result<()> {
    let bytes_per_voxel: u128 = 8 + 4 + 8 * FRAMES_IN_FLIGHT;
    let voxels = map.dims.iter().fold(1u128, |n, &d| n.saturating_mul(d as u128));
    let need = voxels.saturating_mul(bytes_per_voxel);
    let limit = orbitfield::analysis::esp_series::MemoryLimit::half_of_physical();
    if need > u128::from(limit.bytes) {
        let gib = |b: u128| b as f64 / (1u64 << 30) as f64;
        bail!(
            "the map {}x{}x{} = {voxels} voxels would need about {:.1} GiB, more than the {:.1} GiB allowed ({}); use a larger --spacing or a smaller map (--around, --padding, --origin/--dims)",
            map.dims[0],
            map.dims[1],
            map.dims[2],
            gib(need),
            gib(u128::from(limit.bytes)),
            limit.source
        );
    }
    Ok(())
}

/// The parameters' note with the massless water sites left out, if any.
fn join_notes(note: Option<String>, water_sites: usize) -> Option<String> {
    if water_sites == 0 {
        return note;
    }
    let sites = format!(
        "{water_sites} massless water sites (TIP4P's MW, TIP5P's lone pairs) left out: they have no van der Waals \
         parameters"
    );
    Some(match note {
        Some(n) => format!("{n}; {sites}"),
        None => sites,
    })
}

/// What the run shares after setup.
struct Prepared {
    system: io::System,
    setup: Arc<IlsSetup>,
    frames: Vec<usize>,
    sel: Vec<u32>,
    align: Option<(Vec<u32>, Vec<[f64; 3]>)>,
    atoms: Vec<CubeAtom>,
    source: String,
}

fn prepare(args: &IlsArgs) -> Result<(Prepared, Option<String>)> {
    if !(args.spacing.is_finite() && args.spacing > 0.0) {
        bail!("--spacing must be positive, not {}", args.spacing);
    }
    if args.orient == 0 {
        bail!("--orient must be at least 1");
    }
    if !args.padding.is_finite() {
        bail!("--padding must be a finite number of Angstrom, not {}", args.padding);
    }
    if let Some(o) = &args.origin
        && o.iter().any(|x| !x.is_finite())
    {
        bail!("--origin {o:?}: expected finite coordinates in Angstrom");
    }
    let probe = load_probe(&args.probe)?;
    let mut system = io::load(&args.files)?;
    let n_frames = system.trajectory.n_frames();
    if n_frames == 0 {
        bail!("the files hold no frames (give a trajectory or coordinates after the topology)");
    }
    let frames_text = args.frames.as_deref().unwrap_or("all");
    let range = FrameRange::parse(frames_text).map_err(anyhow::Error::msg)?;
    let frames = range.indices(n_frames).map_err(anyhow::Error::msg)?;
    let Some(&first) = frames.first() else {
        bail!("the frame range '{frames_text}' selects no frames (the files hold {n_frames})");
    };
    let reference_index = args.align_frame.unwrap_or(first);
    if reference_index >= n_frames {
        bail!("--align-frame {reference_index}: the files hold {n_frames} frames");
    }
    let reference = system.trajectory.frame(reference_index)?;
    let sel = select("--sel", args.sel.as_deref(), &system, &reference)?;
    let (sel, water_sites) = orbitfield::compute::ils::without_water_sites(&system.structure, sel);
    if sel.is_empty() {
        bail!("--sel picks only massless water sites (TIP4P's MW, TIP5P's lone pairs), which the probe does not feel");
    }
    let mut used = vec![false; system.structure.len()];
    for &i in &sel {
        if let Some(u) = used.get_mut(i as usize) {
            *u = true;
        }
    }
    let lj = io::ils_params::system_lj(
        &args.files,
        &system.structure,
        &args.params,
        args.lj_elements,
        Some(&used),
    )?;
    let align = match &args.align {
        Some(text) => {
            let idx = select("--align", Some(text), &system, &reference)?;
            let pos = positions_of(&reference, &idx);
            Some((idx, pos))
        }
        None => None,
    };
    let around_idx = match &args.around {
        Some(text) => select("--around", Some(text), &system, &reference)?,
        None => sel.clone(),
    };
    let map = map_of(args, &positions_of(&reference, &around_idx))?;
    check_map_memory(&map)?;
    let orientations = Orientations::new(&probe, args.orient, args.subres);
    let setup = IlsSetup {
        map,
        subres: args.subres,
        cutoff_angstrom: args.cutoff,
        max_energy_kt: args.max_energy,
        temperature_kelvin: args.temperature,
        probe,
        orientations,
        atom_lj: sel
            .iter()
            .map(|&i| lj.params.get(i as usize).copied().unwrap_or_default())
            .collect(),
    };
    setup.check()?;
    let atoms = sel
        .iter()
        .filter_map(|&i| {
            let p = reference.positions_angstrom.get(i as usize)?;
            Some(CubeAtom::nucleus(
                u32::from(system.structure.elements.get(i as usize)?.number()),
                p.map(|x| f64::from(x) * BOHR_PER_ANGSTROM),
            ))
        })
        .collect();
    system.warnings.clear();
    Ok((
        Prepared {
            system,
            setup: Arc::new(setup),
            frames,
            sel,
            align,
            atoms,
            source: lj.source,
        },
        join_notes(lj.note, water_sites),
    ))
}

pub fn run(args: &IlsArgs) -> Result<()> {
    let t0 = Instant::now();
    let name = args
        .output
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let dx = if name.ends_with(".dx") {
        true
    } else if name.ends_with(".cube") || name.ends_with(".cub") {
        false
    } else {
        bail!(
            "{}: expected an output name ending in .dx or .cube",
            args.output.display()
        );
    };
    let ranks = Ranks::from_environment()?;
    let (mut p, note) = super::agreed(&ranks, prepare(args))?;
    if let Some(n) = note
        && ranks.is_root()
    {
        eprintln!("note: {n}");
    }
    let preference = args
        .device
        .pool_preference(orbitfield::compute::placement::JobKind::Ils)?;
    let workers = IlsWorkers::with_devices(preference, ranks.device_selection(), p.setup.clone());
    if preference.requires_gpu() && !workers.has_gpu() {
        let why = workers.notes().join("; ");
        bail!("--device {preference}: no usable GPU ({why})");
    }
    if ranks.is_root() {
        for n in workers.notes() {
            eprintln!("note: {n}");
        }
    }
    let bar = super::root_bar(&ranks, p.frames.len());
    let mut sums = OccupancySums::new(p.setup.map.dims);
    let mut engines: Vec<String> = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    let mut first_done: Option<Instant> = None;
    let mut last_done = Instant::now();
    let t_frames = Instant::now();
    let setup = p.setup.clone();
    let mut take = |d: IlsDone| -> Result<(), String> {
        let v = d.result.map_err(|e| format!("frame {}: {e}", d.frame_index))?;
        sums.add_frame(&v)?;
        if !engines.contains(&d.engine) {
            engines.push(d.engine);
        }
        if let Some(n) = d.note {
            notes.push(n);
        }
        let now = Instant::now();
        first_done.get_or_insert(now);
        last_done = now;
        if let Some(b) = &bar {
            b.inc(1);
        }
        Ok(())
    };
    let system = &mut p.system;
    let (sel, align) = (&p.sel, &p.align);
    let mut frame = Frame::default();
    let mut work = |block: &[usize]| -> Result<(), String> {
        for &f in block {
            let t_read = Instant::now();
            system
                .trajectory
                .read_frame(f, &mut frame)
                .map_err(|e| format!("frame {f}: {e}"))?;
            let read_ms = 1e3 * t_read.elapsed().as_secs_f64();
            let positions = positions_of(&frame, sel);
            let rigid = match align {
                Some((idx, reference)) => {
                    Some(fit(&positions_of(&frame, idx), reference, f).map_err(|e| format!("{e:#}"))?)
                }
                None => None,
            };
            let placed = place_atoms(&setup, &positions, frame.cell.as_ref(), rigid.as_ref())
                .map_err(|e| format!("frame {f}: {e}"))?;
            let placed_ms = 1e3 * t_read.elapsed().as_secs_f64() - read_ms;
            let t_submit = Instant::now();
            workers.submit_blocking(f, Arc::new(placed), &mut take)?;
            tracing::debug!(
                target: "orbitfield::timing",
                "ILS frame {f} read in {read_ms:.2} ms, placed in {placed_ms:.2} ms, submitted after {:.2} ms",
                1e3 * t_submit.elapsed().as_secs_f64()
            );
        }
        workers.drain(&mut take)
    };
    super::run_dealt(&ranks, &p.frames, &bar, &mut work)?;
    let frames_seconds = t_frames.elapsed().as_secs_f64();
    let steady = first_done.map(|t| (last_done - t).as_secs_f64());
    let local_frames = sums.frames;
    let Some(SumsPartial(total)) = ranks.reduce_to_root(SumsPartial(sums))? else {
        return Ok(());
    };
    let kt = kt_kcal_per_mol(args.temperature);
    let (scale, unit) = match args.units {
        IlsUnits::Kt => (1.0, "kT"),
        IlsUnits::KcalPerMol => (kt, "kcal/mol"),
    };
    let pmf = total.pmf_kt(args.max_energy);
    let map = p.setup.map;
    let lattice = Lattice::axis_aligned(
        map.origin_angstrom.map(|x| x * BOHR_PER_ANGSTROM),
        map.spacing_angstrom * BOHR_PER_ANGSTROM,
        map.dims,
    );
    let grid = Grid3 {
        lattice,
        values: pmf.iter().map(|&v| (v * scale) as f32).collect(),
        description: format!(
            "ILS free energy of {} ({unit}, {} K), {} frames, {}, subres {}, cutoff {} A, cap {} kT",
            p.setup.probe.name,
            args.temperature,
            total.frames,
            p.setup.orientations.describe(),
            args.subres,
            args.cutoff,
            args.max_energy
        ),
    };
    if dx {
        io::dx::write(&args.output, &grid)
    } else {
        io::cube::write(&args.output, &grid, &p.atoms)
    }
    .with_context(|| format!("cannot write {}", args.output.display()))?;
    for n in &notes {
        eprintln!("note: {n}");
    }
    let [nx, ny, nz] = map.dims;
    let below = pmf.iter().filter(|&&v| v < -1.0).count();
    eprintln!(
        "{}: ILS map of {} over {} atoms on {nx}x{ny}x{nz} voxels ({} A, subres {}), {}, {} frames over {} process(es) in {:.3} s ({} frames/s on this rank, {}); {} voxels below -1 kT; parameters from {}",
        args.output.display(),
        p.setup.probe.name,
        p.sel.len(),
        map.spacing_angstrom,
        args.subres,
        p.setup.orientations.describe(),
        total.frames,
        ranks.size(),
        t0.elapsed().as_secs_f64(),
        rate(local_frames, frames_seconds, steady),
        engines.join(", "),
        below,
        p.source
    );
    Ok(())
}

/// "12.3 (after the first: 14.1)": frames per second over the frame loop, and over the frames
/// after the first finished one (the first carries kernel compilation and start-up).
fn rate(frames: u64, seconds: f64, steady_seconds: Option<f64>) -> String {
    let all = if seconds > 0.0 { frames as f64 / seconds } else { 0.0 };
    match steady_seconds {
        Some(s) if frames > 2 && s > 0.0 => format!("{all:.2} (after the first: {:.2})", (frames - 1) as f64 / s),
        _ => format!("{all:.2}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_grid_ils() {
        let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert!(is_grid_ils(&v(&["orbitfield", "grid", "ils", "a.parm7"])));
        assert!(!is_grid_ils(&v(&["orbitfield", "grid", "esp", "a.pqr"])));
    }
}
