//! `orbitfield grid FIELD FILE... -o OUT.cube|OUT.dx`: a field on a lattice, written to a file.
//!
//! Also owns what `grid`, `points` and `ions` share besides the sources (`grid_source`): the
//! `--device` choice, the potential options ([`EspArgs`]: method, boundary, unit, charge model), the
//! per-frame charges of a potential ([`esp_frame`]), the choice between a wavefunction's own
//! potential and a point-charge model ([`EspArgs::wavefunction_potential`]). `grid esp --frames`
//! with `--combine` lives in `grid_series`.

pub use super::esp_frame::{esp_frame, screened_solute};
use super::grid_series::run_esp_series;
pub use super::grid_source::*;
use anyhow::{Context, Result, bail};
use orbitfield::analysis::esp_series::{self, Combine, MAP_BYTES_PER_POINT, MemoryLimit, check_memory, frame_job};
use orbitfield::batch::{self, Ranks};
use orbitfield::compute::cpu::{self};
use orbitfield::compute::esp::{Boundary, EspMethod, StagesOn, field_input_with};
use orbitfield::compute::{Field, FieldJob};
use orbitfield::io::cube::CubeAtom;
use orbitfield::io::{self, System};
use orbitfield::model::field::{DEFAULT_PADDING_ANGSTROM, DEFAULT_SPACING_ANGSTROM, FieldSpec, LatticeSpec};
use orbitfield::model::units::{DEFAULT_TEMPERATURE_KELVIN, PotentialUnit, angstrom_from_bohr3};
use orbitfield::model::{FrameRange, Grid3, Lattice};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// Coulomb summation method of `esp`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum MethodArg {
    /// Direct Coulomb summation over all charges (exact; VMD's `volmap coulomb`).
    #[default]
    Dcs,
    /// Smoothed short-range sum over the charges within --cutoff only.
    Cutoff,
    /// Multilevel summation (Hardy et al. 2009; VMD's `volmap coulombmsm`): --cutoff splitting distance,
    /// --msm-spacing finest MSM lattice.
    Msm,
}

/// Where the charges of `esp` come from.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChargeModel {
    /// The structure's partial charges (PSF, PQR, ...); the default for structures.
    File,
    /// Bare nuclear charges at the nuclei (effective core charges with pseudopotentials).
    Nuclear,
    /// Mulliken partial charges at the nuclei: Z_A - sum over A's basis functions of (P S)_mu,mu.
    Mulliken,
}

/// How per-frame maps combine.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum CombineArg {
    /// Mean over frames.
    #[default]
    Avg,
    /// Minimum over frames.
    Min,
    /// Maximum over frames.
    Max,
    /// Population standard deviation over frames.
    Stdev,
}

impl From<CombineArg> for Combine {
    fn from(c: CombineArg) -> Combine {
        match c {
            CombineArg::Avg => Combine::Avg,
            CombineArg::Min => Combine::Min,
            CombineArg::Max => Combine::Max,
            CombineArg::Stdev => Combine::Stdev,
        }
    }
}

// Options of Coulomb potentials (`esp`), shared by `grid`, `points` and `ions` (a plain comment: a doc
// comment here would replace the about text of every command that flattens it).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct EspArgs {
    /// esp: Coulomb summation method [default: dcs].
    #[arg(long, value_enum)]
    pub method: Option<MethodArg>,
    /// esp: cutoff of --method cutoff, splitting distance of --method msm, in Angstrom [default: 12].
    #[arg(long, allow_negative_numbers = true)]
    pub cutoff: Option<f64>,
    /// esp: finest MSM lattice spacing in Angstrom (--method msm) [default: 2].
    #[arg(long, allow_negative_numbers = true)]
    pub msm_spacing: Option<f64>,
    /// esp: periodic boundary from each frame's unit cell (refused for frames without a box).
    #[arg(long)]
    pub pbc: bool,
    /// esp: output unit, kT/e (at --temperature), kcal/mol/e, V or hartree/e [default: kT/e; hartree/e
    /// for a wavefunction's own potential].
    #[arg(long)]
    pub units: Option<String>,
    /// esp and pb: temperature in kelvin for kT/e and the Debye length [default: 300 for kT/e;
    /// 298.15 for pb and --dielectric debye, as APBS and the viewer].
    #[arg(long, allow_negative_numbers = true)]
    pub temperature: Option<f64>,
    /// esp: charges to use: file (structure partial charges), nuclear or mulliken (point charges at a
    /// wavefunction's nuclei: the bare nuclei, or Mulliken partial charges). Without it a wavefunction's
    /// esp is its own electrostatic potential (nuclei and electron density, from the nuclear-attraction
    /// integrals of its density matrix) and a structure's the potential of its partial charges.
    #[arg(long, value_enum)]
    pub charges: Option<ChargeModel>,
}

impl EspArgs {
    /// The summation method, with distances checked.
    pub fn method(&self) -> Result<EspMethod> {
        let name = match self.method.unwrap_or_default() {
            MethodArg::Dcs => "dcs",
            MethodArg::Cutoff => "cutoff",
            MethodArg::Msm => "msm",
        };
        esp_series::method_from_options(name, self.cutoff, self.msm_spacing).map_err(anyhow::Error::msg)
    }

    /// The temperature of kT/e for Coulomb potentials: --temperature, or 300 K.
    pub fn temperature_kelvin(&self) -> f64 {
        self.temperature.unwrap_or(DEFAULT_TEMPERATURE_KELVIN)
    }

    /// The output unit (kT/e at --temperature unless --units says otherwise).
    pub fn unit(&self) -> Result<PotentialUnit> {
        PotentialUnit::parse(self.units.as_deref().unwrap_or("kT/e"), self.temperature_kelvin())
            .map_err(|e| anyhow::anyhow!("--units: {e}"))
    }

    /// True when `esp` of `system` is the potential of its wavefunction (nuclei and electron density):
    /// a wavefunction is loaded and no --charges model asks for point charges.
    pub fn wavefunction_potential(&self, system: &System) -> bool {
        !system.wavefunctions.is_empty() && self.charges.is_none()
    }

    /// The output unit of a wavefunction's own potential (hartree/e unless --units says otherwise).
    pub fn wavefunction_potential_unit(&self) -> Result<PotentialUnit> {
        PotentialUnit::parse(self.units.as_deref().unwrap_or("hartree/e"), self.temperature_kelvin())
            .map_err(|e| anyhow::anyhow!("--units: {e}"))
    }

    /// Refuses the point-charge summation options for a wavefunction's own potential.
    pub fn refuse_for_wavefunction_potential(&self) -> Result<()> {
        let given = [
            ("--method", self.method.is_some()),
            ("--cutoff", self.cutoff.is_some()),
            ("--msm-spacing", self.msm_spacing.is_some()),
            ("--pbc", self.pbc),
        ];
        if let Some((flag, _)) = given.iter().find(|(_, g)| *g) {
            bail!(
                "{flag} applies to potentials of point charges; the potential of a wavefunction is computed \
                 from its density matrix (use --charges nuclear or mulliken for point charges at its nuclei)"
            );
        }
        Ok(())
    }

    /// Refuses potential-only options for another field.
    pub fn refuse_for(&self, spec: &FieldSpec) -> Result<()> {
        let given = [
            ("--units", self.units.is_some()),
            ("--method", self.method.is_some()),
            ("--cutoff", self.cutoff.is_some()),
            ("--msm-spacing", self.msm_spacing.is_some()),
            ("--pbc", self.pbc),
            ("--charges", self.charges.is_some()),
            ("--temperature", self.temperature.is_some()),
        ];
        if let Some((flag, _)) = given.iter().find(|(_, g)| *g) {
            bail!(
                "{flag} applies to esp (Coulomb potentials) only; {spec} is in {}",
                spec.unit()
            );
        }
        Ok(())
    }
}

#[derive(clap::Args, Debug)]
pub struct GridArgs {
    /// The field: mo:homo, mo:lumo+2, mo:homo-1, mo:17 (1-based), mo:beta:homo, mo2:homo (|psi|^2),
    /// density, spin, esp (electrostatic potential: a wavefunction's own, or of point charges with
    /// --charges or for structures; see --method, --units); molsurf (the atoms' summed Gaussians, surface
    /// at 0.5); ses (the solvent-excluded surface of a --probe, surface at 0.5: 0 where a probe centre
    /// can be, rising with the distance from there, 1 a probe radius inside); pb (Poisson-Boltzmann:
    /// `grid pb --help`); ils (implicit ligand sampling: `grid ils --help`).
    pub field: String,
    /// Files that together form the system (a wavefunction; for esp a structure with charges and
    /// optionally trajectories).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Output file: .cube (Gaussian cube, bohr) or .dx (OpenDX, Angstrom).
    #[arg(short = 'o', long = "output")]
    pub output: PathBuf,
    /// Lattice spacing in Angstrom [default: 0.15; pb: 0.5, a typical APBS fine lattice].
    #[arg(long, allow_negative_numbers = true)]
    pub spacing: Option<f64>,
    /// Padding around the atoms in Angstrom.
    #[arg(long, default_value_t = DEFAULT_PADDING_ANGSTROM, allow_negative_numbers = true)]
    pub padding: f64,
    /// Explicit lattice: origin X,Y,Z of the first point in Angstrom (with --dims and --spacing).
    #[arg(
        long,
        value_delimiter = ',',
        num_args = 1..=3,
        requires = "dims",
        allow_negative_numbers = true
    )]
    pub origin: Option<Vec<f64>>,
    /// Explicit lattice: points NX,NY,NZ along x, y, z (with --origin).
    #[arg(long, value_delimiter = ',', num_args = 1..=3, requires = "origin")]
    pub dims: Option<Vec<usize>>,
    /// Use the lattice of an existing cube or DX file (e.g. to compare with another program's).
    #[arg(long, conflicts_with_all = ["origin", "dims"])]
    pub like: Option<PathBuf>,
    /// Frame (0-based) of a trajectory or wavefunction series.
    #[arg(long, default_value_t = 0, conflicts_with = "frames")]
    pub frame: usize,
    /// Trajectory frames as the file wrote them: molecules in pieces across the periodic box are
    /// not made whole (by default they are, by whole box vectors, with a note when any were).
    #[arg(long)]
    pub as_written: bool,
    /// esp: combine the maps of these frames (all, N, A:B or A:B:S; 0-based, end exclusive) with
    /// --combine, on the lattice placed around the first of them (or --origin/--dims/--like).
    #[arg(long)]
    pub frames: Option<String>,
    /// esp with --frames: how the frames' maps combine.
    #[arg(long, value_enum, requires = "frames")]
    pub combine: Option<CombineArg>,
    #[command(flatten)]
    pub esp: EspArgs,
    #[command(flatten)]
    pub dielectric: super::dielectric::DielectricArgs,
    #[command(flatten)]
    pub pb: super::pb::PbArgs,
    /// Refuse lattices needing more than this many GiB [default: half of the physical memory].
    #[arg(long, allow_negative_numbers = true)]
    pub max_memory_gib: Option<f64>,
    #[command(flatten)]
    pub device: super::device::DeviceArgs,
    /// esp --method msm or cutoff (vacuum): where the plan's heavy stages run, sorting the charges
    /// into bins and the long-range MSM levels: device (the engine that fills the map: CUDA does both
    /// on its device, wgpu the levels) or host (with the plan) [default: device].
    #[arg(long, value_enum)]
    pub msm_stages: Option<StagesOn>,
    /// molsurf, ses: the atoms of the surface (selection language, e.g. "protein"); the lattice follows
    /// them [default: all]. pb: the solute's atoms [default: all but water molecules and the
    /// electrolyte's monatomic ions (Na+, K+, Cl-...), which the model's solvent stands for]. esp:
    /// the atoms whose charges make the potential, in every --dielectric (the lattice still spans
    /// every atom) [default: all in vacuum; under 4r and debye all but the water and ions].
    #[arg(long, value_name = "SELECTION")]
    pub sel: Option<String>,
    /// molsurf: Gaussian width over atom radius (larger: smoother surface, small crevices closed).
    #[arg(long, default_value_t = orbitfield::compute::molsurf::DEFAULT_RADIUS_SCALE, allow_negative_numbers = true)]
    pub radius_scale: f64,
    /// Orbitals and densities: the atoms the wavefunction files describe when they are the QM region
    /// of an MD system (selection language); the lattice is placed around them in --frame's
    /// coordinates. Without it, a region is found by geometry when the atoms come from a topology.
    #[arg(long, value_name = "SELECTION")]
    pub qm_region: Option<String>,
}

impl GridArgs {
    /// The molecular surface `spec` names with this command's `--radius-scale` or `--probe`.
    pub fn surface_model(&self, spec: FieldSpec) -> Result<orbitfield::compute::molsurf::SurfaceModel> {
        use orbitfield::compute::molsurf::SurfaceModel;
        Ok(match spec {
            FieldSpec::ExcludedSurface => {
                if self.radius_scale != orbitfield::compute::molsurf::DEFAULT_RADIUS_SCALE {
                    anyhow::bail!("--radius-scale shapes the Gaussian surface (molsurf); ses takes --probe");
                }
                let probe = self
                    .pb
                    .probe
                    .unwrap_or(orbitfield::compute::ses::DEFAULT_PROBE_RADIUS_ANGSTROM);
                orbitfield::compute::ses::probe_bohr_checked(probe).map_err(|e| anyhow::anyhow!("--probe: {e}"))?;
                SurfaceModel::Excluded {
                    probe_radius_angstrom: probe,
                }
            }
            _ => SurfaceModel::Gaussian {
                radius_scale: self.radius_scale,
            },
        })
    }

    /// `--spacing`, or the default of fields other than pb (`DEFAULT_SPACING_ANGSTROM`).
    pub fn spacing_angstrom(&self) -> f64 {
        self.spacing.unwrap_or(DEFAULT_SPACING_ANGSTROM)
    }
}

/// The memory limit for lattices: --max-memory-gib or half of the physical memory.
pub fn memory_limit(max_memory_gib: Option<f64>) -> Result<MemoryLimit> {
    match max_memory_gib {
        None => Ok(MemoryLimit::half_of_physical()),
        Some(g) => MemoryLimit::gib(g).with_context(|| format!("--max-memory-gib must be positive, not {g}")),
    }
}

/// Computes the lattices of a frame series: the path of [`evaluate`], but with one jobs pool kept
/// for every frame (GPU devices with the CPU for retries; `evaluate` starts a pool per request), or
/// the CPU engine in this thread for `--device cpu`. Each frame is spread over every worker of the
/// pool; a combined series keeps several frames in flight (`grid_series`).
pub struct LatticeEvaluator {
    pool: Option<orbitfield::jobs::Pool<()>>,
}

impl LatticeEvaluator {
    /// A pool for `device` on the CUDA devices `devices` (`None`: `ORBITFIELD_DEVICES` or all; a batch
    /// rank passes its share of the node's devices), or the CPU engine alone for `cpu`; `--device gpu`
    /// without a usable GPU is an error saying why.
    pub fn with_devices(
        device: &super::device::DeviceArgs,
        kind: orbitfield::compute::placement::JobKind,
        devices: Option<Vec<usize>>,
    ) -> Result<LatticeEvaluator> {
        let preference = device.pool_preference(kind)?;
        if preference == orbitfield::compute::placement::DeviceChoice::Cpu {
            return Ok(LatticeEvaluator { pool: None });
        }
        let pool = orbitfield::jobs::Pool::new(orbitfield::jobs::PoolConfig {
            preference,
            devices,
            ..orbitfield::jobs::PoolConfig::default()
        });
        if preference.requires_gpu()
            && let Some(why) = pool.gpu_missing_reason()
        {
            return Err(orbitfield::jobs::JobError::gpu_missing(preference, why).into());
        }
        for note in pool.notes() {
            eprintln!("note: {note}");
        }
        Ok(LatticeEvaluator { pool: Some(pool) })
    }

    /// The map of `job`.
    pub fn grid(&self, job: FieldJob) -> Result<Grid3> {
        match &self.pool {
            Some(pool) => Ok(pool.compute_grid((), job)?),
            None => Ok(cpu::evaluate_grid(&job)?),
        }
    }

    /// The pool, unless the CPU engine computes in this thread (`--device cpu`).
    pub(super) fn pool(&self) -> Option<&orbitfield::jobs::Pool<()>> {
        self.pool.as_ref()
    }

    /// Gives a map's values back once written, for the next frame's map to be computed into
    /// (`Pool::recycle`; dropped with the CPU engine alone).
    pub fn recycle(&self, values: Vec<f32>) {
        if let Some(pool) = &self.pool {
            pool.recycle(values);
        }
    }
}

/// The lattice `args` ask for around atoms at `positions_angstrom`.
pub(super) fn lattice_of(args: &GridArgs, positions_angstrom: &[[f64; 3]]) -> Result<Lattice> {
    lattice_padded(args, positions_angstrom, args.padding)
}

/// The lattice of the cube or DX file `like` (`--like`).
pub(super) fn like_lattice(like: &Path) -> Result<Lattice> {
    let bytes = io::read_bytes(like)?;
    let name = io::uncompressed_name(like).to_ascii_lowercase();
    let grid = if name.ends_with(".dx") {
        io::dx::read(like, &bytes)?
    } else {
        io::cube::read(like, &bytes)?
            .grids
            .into_iter()
            .next()
            .with_context(|| format!("{}: no grid in the file", like.display()))?
    };
    Ok(grid.lattice)
}

/// [`lattice_of`] with `padding_angstrom` instead of --padding around the atoms.
fn lattice_padded(args: &GridArgs, positions_angstrom: &[[f64; 3]], padding_angstrom: f64) -> Result<Lattice> {
    if let Some(like) = &args.like {
        return like_lattice(like);
    }
    let spec = match (&args.origin, &args.dims) {
        (Some(o), Some(d)) => LatticeSpec::Explicit {
            origin_angstrom: super::three("--origin", o)?,
            dims: super::three("--dims", d)?,
            spacing_angstrom: args.spacing_angstrom(),
        },
        _ => LatticeSpec::AroundAtoms {
            spacing_angstrom: args.spacing_angstrom(),
            padding_angstrom,
        },
    };
    let around_atoms = matches!(spec, LatticeSpec::AroundAtoms { .. });
    let lattice = orbitfield::compute::request::lattice(
        &orbitfield::compute::request::LatticeChoice::Spec(spec),
        positions_angstrom,
        None,
    )?;
    if around_atoms && lattice.dims.iter().any(|&d| d < MIN_USEFUL_POINTS) {
        // A spacing as large as the molecule: the map samples nothing of it.
        eprintln!(
            "warning: the lattice has only {}x{}x{} points ({} A apart): too few to show the field; use a smaller --spacing",
            lattice.dims[0],
            lattice.dims[1],
            lattice.dims[2],
            args.spacing_angstrom()
        );
    }
    Ok(lattice)
}

/// Points along an axis below which a lattice shows nothing of a field (a warning says so).
const MIN_USEFUL_POINTS: usize = 5;

/// Output format from the file name.
fn is_dx(path: &Path) -> Result<bool> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    if name.ends_with(".dx") {
        Ok(true)
    } else if name.ends_with(".cube") || name.ends_with(".cub") {
        Ok(false)
    } else {
        bail!("{}: expected an output name ending in .cube or .dx", path.display())
    }
}

/// Writes `grid` as DX or cube (atomically).
pub(super) fn write_grid(path: &Path, dx: bool, grid: &Grid3, atoms: &[CubeAtom]) -> Result<()> {
    if dx {
        io::dx::write(path, grid)
    } else {
        io::cube::write(path, grid, atoms)
    }
    .with_context(|| format!("cannot write {}", path.display()))
}

/// One line on standard error about a written map.
pub(super) fn report(path: &Path, what: &str, grid: &Grid3, seconds: f64, unit: &str) {
    let [nx, ny, nz] = grid.lattice.dims;
    let (lo, hi) = grid.min_max().unwrap_or((0.0, 0.0));
    eprintln!(
        "{}: {what} on {nx}x{ny}x{nz} points in {seconds:.3} s, values {lo:.4e} .. {hi:.4e} {unit}",
        path.display()
    );
}

/// A short name of a summation method and boundary, for headers.
pub fn method_label(method: &EspMethod, boundary_periodic: bool) -> String {
    let m = match method {
        EspMethod::Direct => "direct sum".to_string(),
        EspMethod::Cutoff { cutoff_angstrom } => format!("cutoff sum {cutoff_angstrom} A"),
        EspMethod::Msm(p) => format!("MSM a={} A h={} A", p.cutoff_angstrom, p.spacing_angstrom),
    };
    if boundary_periodic { format!("{m}, periodic") } else { m }
}

/// True when `grid --frames` writes one file per frame into the directory `output` (a name ending in
/// `/`, or an existing directory).
fn is_frame_directory(output: &Path) -> bool {
    output.as_os_str().to_string_lossy().ends_with('/') || output.is_dir()
}

pub fn run(args: &GridArgs) -> Result<()> {
    if super::pb::is_pb(&args.field) {
        return super::pb::run(args);
    }
    args.pb.refuse_for(&args.field)?;
    let spec: FieldSpec = args.field.parse()?;
    if args.sel.is_some()
        && !matches!(
            spec,
            FieldSpec::Potential | FieldSpec::MolSurf | FieldSpec::ExcludedSurface
        )
    {
        bail!("--sel chooses the atoms of esp, pb, molsurf and ses; {spec} is the wavefunction's, of all its atoms");
    }
    let limit = memory_limit(args.max_memory_gib)?;
    if let Some(frames_text) = &args.frames
        && is_frame_directory(&args.output)
    {
        return run_frames_to_directory(args, spec, &limit, frames_text);
    }
    let dx = is_dx(&args.output)?;
    if spec.needs_charges() {
        if args.qm_region.is_some() {
            bail!("--qm-region places orbitals and densities of a QM region; esp takes the structure's charges");
        }
        return run_esp(args, dx, &limit);
    }
    args.esp.refuse_for(&spec)?;
    if args.msm_stages.is_some() {
        bail!("--msm-stages applies to esp (Coulomb potentials) only");
    }
    if args.frames.is_some() {
        bail!(
            "--frames with {spec} writes one cube per frame: give a directory (-o DIR/); only esp combines frames into one map"
        );
    }
    let (mut system, region) = io::load_with(
        &args.files,
        &io::LoadOptions {
            qm_region: args.qm_region.clone(),
        },
    )?;
    super::say_load_notes(&system.warnings);
    if let Some(region) = region {
        return run_qm_region(args, dx, &limit, spec, &mut system, &region);
    }
    let t0 = Instant::now();
    let out = frame_grid(args, spec, &mut system, args.frame, &limit, &mut |job| {
        evaluate_lattice(&args.device, job)
    })?;
    write_grid(&args.output, dx, &out.grid, &out.atoms)?;
    report(
        &args.output,
        &out.what,
        &out.grid,
        t0.elapsed().as_secs_f64(),
        &out.unit,
    );
    Ok(())
}

/// One frame's field as `grid --frame F` writes it.
struct FrameGrid {
    grid: Grid3,
    atoms: Vec<CubeAtom>,
    /// What the values are ("esp", "mo:homo"), and their unit, for the report line.
    what: String,
    unit: String,
}

/// The field `spec` of frame `frame` on the lattice placed around that frame's atoms (or the
/// explicit one), in the output unit, through `evaluate`: what `grid --frame F` and each file of
/// `grid --frames ... -o DIR/` hold.
fn frame_grid(
    args: &GridArgs,
    spec: FieldSpec,
    system: &mut System,
    frame: usize,
    limit: &MemoryLimit,
    evaluate: &mut dyn FnMut(FieldJob) -> Result<Grid3>,
) -> Result<FrameGrid> {
    if !spec.needs_charges() {
        args.dielectric.refuse_for(&spec.to_string())?;
    }
    if spec.needs_charges() && args.esp.wavefunction_potential(system) {
        args.esp.refuse_for_wavefunction_potential()?;
        args.dielectric.refuse_for("the potential of a wavefunction")?;
        if args.sel.is_some() {
            bail!(
                "--sel chooses among a structure's partial charges; a wavefunction's potential is of all its nuclei and electrons"
            );
        }
        let unit = args.esp.wavefunction_potential_unit()?;
        let source = wavefunction_potential_source(system, frame)?;
        let mut grid = source_lattice(args, &source, limit, evaluate)?;
        let scale = unit.per_hartree_per_e();
        grid.values.iter_mut().for_each(|v| *v = (f64::from(*v) * scale) as f32);
        grid.description = format!(
            "esp of the wavefunction (nuclei and electron density), frame {frame} ({})",
            unit.label()
        );
        return Ok(FrameGrid {
            grid,
            atoms: source.atoms,
            what: "esp".to_string(),
            unit: unit.label(),
        });
    }
    if spec.needs_charges() {
        let unit = args.esp.unit()?;
        let method = args.esp.method()?;
        let mut esp = esp_frame(system, &args.esp, frame)?;
        let lattice = lattice_of(args, &esp.positions_angstrom())?;
        check_memory(lattice.dims, MAP_BYTES_PER_POINT, limit)?;
        let periodic = matches!(esp.boundary, Boundary::Periodic(_));
        // Debye-Hueckel screening at --temperature, else 298.15 K (as the viewer's model and
        // `grid pb`); kT/e stays at 300 K unless --temperature says otherwise.
        let screening_kelvin = args
            .esp
            .temperature
            .unwrap_or(orbitfield::compute::esp::screening::DEFAULT_SCREENING_TEMPERATURE_KELVIN);
        let dielectric = args.dielectric.model(screening_kelvin)?;
        match args.sel.as_deref() {
            Some(sel) => super::esp_frame::selected_charges(system, &mut esp, sel, frame)?,
            None => screened_solute(system, &mut esp, dielectric),
        }
        if args.msm_stages.is_some() && !dielectric.is_vacuum() {
            bail!("--msm-stages applies to vacuum potentials (the screened models' plans stage on the host)");
        }
        let job = if let (Some(stages), true) = (args.msm_stages, dielectric.is_vacuum()) {
            let input = field_input_with(Arc::new(esp.charges), method, esp.boundary, &lattice, stages)
                .map_err(|e| anyhow::anyhow!("frame {frame}: {e}"))?;
            FieldJob {
                field: Field::Potential,
                lattice,
                input,
            }
        } else if dielectric.is_vacuum() {
            frame_job(esp.charges, method, esp.boundary, lattice, frame)?
        } else {
            let input = orbitfield::compute::esp::screening::field_input_screened(
                std::sync::Arc::new(esp.charges),
                method,
                esp.boundary,
                dielectric,
                &lattice,
            )
            .map_err(|e| anyhow::anyhow!("frame {frame}: {e}"))?;
            FieldJob {
                field: Field::Potential,
                lattice,
                input,
            }
        };
        let mut grid = evaluate(job)?;
        let scale = unit.per_hartree_per_e();
        grid.values.iter_mut().for_each(|v| *v = (f64::from(*v) * scale) as f32);
        let of = match args.sel.as_deref() {
            Some(sel) => format!("{} of '{sel}'", esp.model),
            None => esp.model.to_string(),
        };
        grid.description = format!(
            "esp of {of} ({}, {}), frame {} ({})",
            method_label(&method, periodic),
            dielectric.label(),
            frame,
            unit.label()
        );
        return Ok(FrameGrid {
            grid,
            atoms: esp.atoms,
            what: "esp".to_string(),
            unit: unit.label(),
        });
    }
    if let FieldSpec::MolSurf | FieldSpec::ExcludedSurface = spec {
        let model = args.surface_model(spec)?;
        let (source, padding) = molsurf_source(system, frame, args.sel.as_deref(), model)?;
        let lattice = lattice_padded(args, &source.positions_angstrom(), args.padding.max(padding))?;
        check_memory(lattice.dims, MAP_BYTES_PER_POINT, limit)?;
        let mut grid = evaluate(FieldJob {
            field: source.field.clone(),
            lattice,
            input: source.input.clone(),
        })?;
        grid.description = format!("{}, frame {frame}", model.describe());
        return Ok(FrameGrid {
            grid,
            atoms: source.atoms,
            what: spec.to_string(),
            unit: spec.unit().to_string(),
        });
    }
    let source = source_from_system(spec, system, frame)?;
    let mut grid = source_lattice(args, &source, limit, evaluate)?;
    grid.description = super::grid_source::describe(&source, system, frame);
    Ok(FrameGrid {
        grid,
        atoms: source.atoms,
        what: source.spec.to_string(),
        unit: source.spec.unit().to_string(),
    })
}

/// The lattice `args` ask for around `source`'s atoms (checked against `limit`), computed by `evaluate`.
fn source_lattice(
    args: &GridArgs,
    source: &Source,
    limit: &MemoryLimit,
    evaluate: &mut dyn FnMut(FieldJob) -> Result<Grid3>,
) -> Result<Grid3> {
    let lattice = lattice_of(args, &source.positions_angstrom())?;
    check_memory(lattice.dims, MAP_BYTES_PER_POINT, limit)?;
    evaluate(FieldJob {
        field: source.field.clone(),
        lattice,
        input: source.input.clone(),
    })
}

/// The name of frame `frame`'s file in a per-frame output directory.
pub fn frame_file_name(frame: usize, extension: &str) -> String {
    format!("frame_{frame:05}.{extension}")
}

/// `grid FIELD FILES --frames ... -o DIR/`: one cube per frame (each as `grid --frame F` writes it),
/// frames dealt to the ranks of an MPI job; each rank writes its frames under temporary names, and
/// they are renamed only when every rank succeeded.
fn run_frames_to_directory(args: &GridArgs, spec: FieldSpec, limit: &MemoryLimit, frames_text: &str) -> Result<()> {
    let t0 = Instant::now();
    let ranks = Ranks::from_environment()?;
    let prepare = || -> Result<(System, Vec<usize>)> {
        if args.combine.is_some() {
            bail!("--combine makes one map: give -o FILE.cube or FILE.dx, not a directory");
        }
        if args.qm_region.is_some() {
            bail!("--qm-region takes one --frame; per-frame cubes of a QM region are not supported");
        }
        if !spec.needs_charges() {
            args.esp.refuse_for(&spec)?;
        }
        let mut system = super::load_noted(&args.files)?;
        if let Some(note) = super::grid_source::make_whole(&mut system, args.as_written) {
            eprintln!("note: {note}");
        }
        // esp of a wavefunction series (its own potential or point charges at its nuclei) takes the
        // frame's wavefunction, as every other field of a series does.
        let n_frames = if system.wavefunctions.is_empty() {
            system.trajectory.n_frames()
        } else {
            system.wavefunctions.len()
        };
        let range = FrameRange::parse(frames_text).map_err(anyhow::Error::msg)?;
        let frames = range.indices(n_frames).map_err(anyhow::Error::msg)?;
        if frames.is_empty() {
            bail!("the frame range '{frames_text}' selects no frames (the files hold {n_frames})");
        }
        std::fs::create_dir_all(&args.output).with_context(|| format!("cannot create {}", args.output.display()))?;
        Ok((system, frames))
    };
    let (mut system, frames) = super::agreed(&ranks, prepare())?;
    let evaluator = LatticeEvaluator::with_devices(
        &args.device,
        super::device::kind_of_spec(&spec),
        ranks.device_selection(),
    )?;
    let bar = super::root_bar(&ranks, frames.len());
    let mut staged = batch::StagedFiles::new();
    let mut what = String::new();
    let mut work = |block: &[usize]| -> Result<(), String> {
        for &f in block {
            let out = frame_grid(args, spec, &mut system, f, limit, &mut |job| evaluator.grid(job))
                .map_err(|e| format!("frame {f}: {e:#}"))?;
            let path = args.output.join(frame_file_name(f, "cube"));
            staged
                .write_with(&path, |tmp| write_grid(tmp, false, &out.grid, &out.atoms))
                .map_err(|e| format!("frame {f}: {e:#}"))?;
            what = out.what;
            evaluator.recycle(out.grid.values);
            if let Some(b) = &bar {
                b.inc(1);
            }
        }
        Ok(())
    };
    super::run_dealt(&ranks, &frames, &bar, &mut work)?;
    let committed = staged.commit().map_err(|e| format!("renaming the frame files: {e}"));
    ranks.agree(committed.map(|_| ()))?;
    if ranks.is_root() {
        eprintln!(
            "{}: {what} of {} frames, one cube each, in {:.3} s over {} process(es)",
            args.output.display(),
            frames.len(),
            t0.elapsed().as_secs_f64(),
            ranks.size()
        );
    }
    Ok(())
}

/// `grid` of an orbital or density of a QM region inside an MD system: the frame's wavefunction
/// (or the only one, carried rigidly) superposed on the region's atoms, the lattice chosen around
/// them in the MD frame, the cube's atoms the region's atoms there.
fn run_qm_region(
    args: &GridArgs,
    dx: bool,
    limit: &MemoryLimit,
    spec: FieldSpec,
    system: &mut System,
    region: &orbitfield::analysis::qm_region::QmRegion,
) -> Result<()> {
    use orbitfield::analysis::qm_region::{place_grid, placed_job, wavefunction_index};
    let n_frames = system.trajectory.n_frames();
    if args.frame >= n_frames.max(1) {
        bail!("frame {} requested, the files hold {n_frames} frames", args.frame);
    }
    let index = wavefunction_index(system.wavefunctions.len(), n_frames, args.frame)
        .ok_or_else(|| anyhow::anyhow!("{spec} needs a wavefunction"))?;
    let Some(wf) = system.wavefunctions.get(index).cloned() else {
        bail!("{spec} needs a wavefunction");
    };
    if system.wavefunctions.len() == 1 && n_frames > 1 {
        eprintln!(
            "note: one wavefunction for {n_frames} frames: it is carried rigidly with the QM region (an approximation)"
        );
    }
    let frame = system.trajectory.frame(args.frame)?;
    let fit = region.fit(&wf, args.frame, &frame)?;
    if let Some(w) = fit.warning(args.frame) {
        eprintln!("warning: {w}");
    }
    let field = spec.resolve(Some(&wf))?;
    let positions: Vec<[f64; 3]> = fit.positions_bohr.iter().map(|p| angstrom_from_bohr3(*p)).collect();
    let lattice = lattice_of(args, &positions)?;
    check_memory(lattice.dims, MAP_BYTES_PER_POINT, limit)?;
    let atoms: Vec<CubeAtom> = wf
        .atoms
        .iter()
        .zip(&fit.positions_bohr)
        .map(|(a, p)| CubeAtom {
            atomic_number: u32::from(a.element.number()),
            charge_e: a.nuclear_charge,
            position_bohr: *p,
        })
        .collect();
    let placed = placed_job(&fit, field, &Arc::new(wf), lattice);
    let t0 = Instant::now();
    let Evaluated::Lattice(grid) = evaluate(&args.device, Request::Lattice(placed.job))? else {
        bail!("internal error: a lattice request returned points");
    };
    let mut grid = place_grid(grid, placed.lattice_md);
    let seconds = t0.elapsed().as_secs_f64();
    grid.description = format!(
        "{} ({}), QM region of {}, frame {}",
        spec,
        spec.unit(),
        region.describe(),
        args.frame
    );
    write_grid(&args.output, dx, &grid, &atoms)?;
    report(&args.output, &spec.to_string(), &grid, seconds, spec.unit());
    Ok(())
}

/// `grid esp`: one frame's map, or the combination of several frames' maps, in the chosen unit.
fn run_esp(args: &GridArgs, dx: bool, limit: &MemoryLimit) -> Result<()> {
    if let Some(frames_text) = &args.frames {
        args.dielectric
            .refuse_for("--frames (frame series are summed in vacuum only)")?;
        if args.msm_stages.is_some() {
            bail!("--msm-stages applies to one frame's map (-o FILE), not to a frame series");
        }
        if args.sel.is_some() {
            bail!("--sel applies to one frame's map (--frame N); a frame series sums every atom's charges");
        }
        return run_esp_series(args, dx, limit, frames_text);
    }
    let spec: FieldSpec = args.field.parse()?;
    let mut system = super::load_noted(&args.files)?;
    if let Some(note) = super::grid_source::make_whole(&mut system, args.as_written) {
        eprintln!("note: {note}");
    }
    if system.wavefunctions.is_empty()
        && let Some(q) = &system.structure.charges_e
        && !q.is_empty()
        && q.iter().all(|&x| x == 0.0)
    {
        eprintln!("note: every partial charge in the files is zero: the potential is zero everywhere");
    }
    let t0 = Instant::now();
    let out = frame_grid(args, spec, &mut system, args.frame, limit, &mut |job| {
        evaluate_lattice(&args.device, job)
    })?;
    write_grid(&args.output, dx, &out.grid, &out.atoms)?;
    report(&args.output, "esp", &out.grid, t0.elapsed().as_secs_f64(), &out.unit);
    Ok(())
}
