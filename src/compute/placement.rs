//! Where a job is computed: the one placement policy of the crate.
//!
//! Owns the engines ([`Engine`]: CPU, CUDA, wgpu), the user's choice among them ([`DeviceChoice`],
//! `--device cpu|cuda|wgpu|gpu|auto` on every command that computes, the viewer's settings and the
//! worker pool's), the job kinds ([`JobKind`]), the table of which engine has which kind
//! ([`supports`]), the facts the choice is made from ([`Facts`]: CUDA devices, the wgpu adapter),
//! and [`place`], which returns the engine AND the reason as text, or a typed refusal
//! ([`PlacementError`]). The rules that depend on a job's size live here too: multilevel
//! summation against the direct sum ([`potential_map_uses_msm`], [`vertex_potential_uses_msm`]),
//! DSSP on a CUDA device ([`DSSP_DEVICE_MIN_RESIDUES`]), and orbitals on the render device
//! ([`FieldsOn`], [`orbitals_on_render_device`]).
//!
//! Callers: the CLI (`cli::grid_source::evaluate` and every command with `--device`,
//! `orbitfield info --devices`), the jobs pool (`jobs::PoolConfig::preference`), the cartoon
//! worker (DSSP), the viewer's field sources and jobs panel, and the benchmark harness. A forced
//! engine never falls back; `auto` may, and its reason says so.

use crate::compute::{Field, FieldInput, FieldJob};
use std::fmt;

/// A compute engine (a folder under `compute/`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Engine {
    /// `compute::cpu`: rayon and SIMD, the numerical reference.
    Cpu,
    /// `compute::cuda`: NVRTC kernels on CUDA devices, driven by the jobs pool.
    Cuda,
    /// `compute::wgpu`: WGSL compute passes on the wgpu adapter (the render device).
    Wgpu,
}

impl Engine {
    pub const ALL: [Engine; 3] = [Engine::Cpu, Engine::Cuda, Engine::Wgpu];

    pub fn name(self) -> &'static str {
        match self {
            Engine::Cpu => "CPU",
            Engine::Cuda => "CUDA",
            Engine::Wgpu => "wgpu",
        }
    }

    pub fn is_gpu(self) -> bool {
        self != Engine::Cpu
    }
}

impl fmt::Display for Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The user's choice of engine: one enum for the command line, the jobs pool and the viewer.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum DeviceChoice {
    /// The multithreaded CPU engine.
    Cpu,
    /// A CUDA device, or an error (never the CPU).
    Cuda,
    /// The wgpu adapter (the render device), or an error.
    Wgpu,
    /// Any GPU engine that has the job kind (CUDA first), or an error.
    Gpu,
    /// The fastest measured engine present for the job kind; falls back to the CPU and says why.
    #[default]
    Auto,
}

impl DeviceChoice {
    pub fn name(self) -> &'static str {
        match self {
            DeviceChoice::Cpu => "cpu",
            DeviceChoice::Cuda => "cuda",
            DeviceChoice::Wgpu => "wgpu",
            DeviceChoice::Gpu => "gpu",
            DeviceChoice::Auto => "auto",
        }
    }

    /// The engine this choice forces, if it forces one.
    pub fn forced(self) -> Option<Engine> {
        match self {
            DeviceChoice::Cpu => Some(Engine::Cpu),
            DeviceChoice::Cuda => Some(Engine::Cuda),
            DeviceChoice::Wgpu => Some(Engine::Wgpu),
            DeviceChoice::Gpu | DeviceChoice::Auto => None,
        }
    }

    /// True when the choice admits no CPU computation (a missing GPU is an error).
    pub fn requires_gpu(self) -> bool {
        matches!(self, DeviceChoice::Cuda | DeviceChoice::Wgpu | DeviceChoice::Gpu)
    }

    /// True when CUDA devices may take the work (the pool then discovers them).
    pub fn may_use_cuda(self) -> bool {
        matches!(self, DeviceChoice::Cuda | DeviceChoice::Gpu | DeviceChoice::Auto)
    }
}

impl std::str::FromStr for DeviceChoice {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        <DeviceChoice as clap::ValueEnum>::from_str(s, true)
            .map_err(|_| format!("unknown device '{s}' (expected cpu, cuda, wgpu, gpu or auto)"))
    }
}

impl fmt::Display for DeviceChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What is to be computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum JobKind {
    /// Orbitals, densities and spin densities on a lattice whose values reach the host.
    Orbital,
    /// Orbitals and densities drawn as isosurfaces: the values may stay on the render device.
    OrbitalSurface,
    /// A wavefunction's own electrostatic potential (nuclei and electron density).
    QmPotential,
    /// The potential of point charges on a lattice (direct sum, cutoff, multilevel summation).
    Potential,
    /// A field's values at arbitrary points (`points`, surface vertices on the host).
    Points,
    /// The potential of point charges at the vertices of a surface extracted on the render device.
    VertexPotential,
    /// The Gaussian molecular-surface density on a lattice.
    MolSurf,
    /// The solvent-excluded surface's field on a lattice (`compute::ses`).
    ExcludedSurface,
    /// The Poisson-Boltzmann solve.
    PoissonBoltzmann,
    /// Implicit ligand sampling maps.
    Ils,
    /// Radial distribution functions over frames.
    Rdf,
    /// DSSP secondary structure of one frame.
    Dssp,
    /// The cartoon mesh of one frame.
    Cartoon,
}

impl JobKind {
    pub const ALL: [JobKind; 13] = [
        JobKind::Orbital,
        JobKind::OrbitalSurface,
        JobKind::QmPotential,
        JobKind::Potential,
        JobKind::Points,
        JobKind::VertexPotential,
        JobKind::MolSurf,
        JobKind::ExcludedSurface,
        JobKind::PoissonBoltzmann,
        JobKind::Ils,
        JobKind::Rdf,
        JobKind::Dssp,
        JobKind::Cartoon,
    ];

    pub fn name(self) -> &'static str {
        match self {
            JobKind::Orbital => "orbital",
            JobKind::OrbitalSurface => "orbital isosurface",
            JobKind::QmPotential => "wavefunction esp",
            JobKind::Potential => "esp",
            JobKind::Points => "values at points",
            JobKind::VertexPotential => "esp at surface vertices",
            JobKind::MolSurf => "molsurf",
            JobKind::ExcludedSurface => "solvent-excluded surface",
            JobKind::PoissonBoltzmann => "Poisson-Boltzmann",
            JobKind::Ils => "ils",
            JobKind::Rdf => "rdf",
            JobKind::Dssp => "dssp",
            JobKind::Cartoon => "cartoon",
        }
    }
}

impl fmt::Display for JobKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which engine has which job kind: the one table. A kind an engine lacks is refused with
/// [`PlacementError::NotHere`] when the user forces that engine.
pub fn supports(engine: Engine, kind: JobKind) -> bool {
    use JobKind::*;
    match engine {
        Engine::Cpu => true,
        Engine::Cuda => matches!(
            kind,
            Orbital
                | OrbitalSurface
                | QmPotential
                | Potential
                | Points
                | MolSurf
                | ExcludedSurface
                | PoissonBoltzmann
                | Ils
                | Rdf
                | Dssp
        ),
        // Lattices of orbitals, densities, potentials of point charges (direct, cutoff and multilevel
        // summation) and a wavefunction's own potential, and ILS and RDF frames, through the pool's
        // wgpu workers (`jobs::adapter_worker`); the render device's passes for surfaces and cartoons;
        // Poisson-Boltzmann solves on the host's maps (`compute::wgpu::pb`).
        Engine::Wgpu => matches!(
            kind,
            Orbital
                | QmPotential
                | Potential
                | OrbitalSurface
                | VertexPotential
                | Cartoon
                | Ils
                | Rdf
                | PoissonBoltzmann
        ),
    }
}

/// The engines in order of measured speed for `kind` (`benches/RESULTS.md`); `auto` takes the first
/// present one that passes the size rules, `gpu` the first GPU engine.
fn fastest_first(kind: JobKind) -> &'static [Engine] {
    match kind {
        // The render device keeps the values where the isosurface is extracted and drawn.
        JobKind::OrbitalSurface | JobKind::VertexPotential | JobKind::Cartoon => {
            &[Engine::Wgpu, Engine::Cuda, Engine::Cpu]
        }
        // Point lists are short: the exact CPU evaluator answers before a device is set up.
        JobKind::Points => &[Engine::Cpu, Engine::Cuda, Engine::Wgpu],
        _ => &[Engine::Cuda, Engine::Wgpu, Engine::Cpu],
    }
}

/// The job kind of a lattice job.
pub fn kind_of(job: &FieldJob) -> JobKind {
    match job.field {
        Field::Orbital { .. } | Field::OrbitalSquared { .. } | Field::Density | Field::SpinDensity => JobKind::Orbital,
        Field::Potential => JobKind::Potential,
        Field::QmPotential => JobKind::QmPotential,
        Field::MolSurf => match &job.input {
            FieldInput::Spheres(a) if a.is_excluded() => JobKind::ExcludedSurface,
            _ => JobKind::MolSurf,
        },
    }
}

/// What a job is, for reasons: `direct sum, 3,341 charges, 97x97x97 points`.
pub fn describe(job: &FieldJob) -> String {
    use crate::compute::esp::EspMethod;
    let method = |m: &EspMethod| match m {
        EspMethod::Direct => "direct sum",
        EspMethod::Cutoff { .. } => "cutoff sum",
        EspMethod::Msm(_) => "multilevel summation",
    };
    let what = match &job.input {
        FieldInput::Wavefunction(wf) => format!("{} atoms' basis", wf.atoms.len()),
        FieldInput::Charges(c) => format!("direct sum, {} charges", thousands(c.charges_e.len())),
        FieldInput::Electrostatics(p) => format!(
            "{}, {} charges",
            method(&p.method),
            thousands(p.charges().charges_e.len())
        ),
        FieldInput::DeferredElectrostatics(d) => {
            format!("{}, {} charges", method(&d.method()), thousands(d.n_charges()))
        }
        FieldInput::Spheres(a) => format!("{} atoms", thousands(a.centers_bohr.len())),
        FieldInput::ScreenedCharges(c) => {
            format!("screened direct sum, {} charges", thousands(c.charges.charges_e.len()))
        }
    };
    let [nx, ny, nz] = job.lattice.dims;
    format!("{what}, {nx}x{ny}x{nz} points")
}

/// `3341` as `3,341`.
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The wgpu adapter as placement sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdapterFacts {
    /// Name, backend and type, e.g. `NVIDIA H200 (Vulkan, DiscreteGpu)`.
    pub name: String,
    /// A software rasteriser (lavapipe, llvmpipe, WARP): its compute shares the CPU's cores.
    pub software: bool,
    /// It runs the WGSL compute passes (orbital pass and marching cubes).
    pub runs_passes: bool,
}

/// What placement knows of the machine.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Facts {
    /// Names of the usable CUDA devices, by ordinal.
    pub cuda_devices: Vec<String>,
    /// Why there is no CUDA device, when there is none.
    pub cuda_missing: Option<String>,
    /// The wgpu adapter; `None` where none was asked for or found.
    pub adapter: Option<AdapterFacts>,
    /// Why there is no usable adapter, when there is none.
    pub adapter_missing: Option<String>,
}

impl Facts {
    /// The CUDA devices the driver reports (names only; no kernel is compiled). The adapter is the
    /// caller's to add (it lives with the render context).
    pub fn probe_cuda() -> Facts {
        match crate::compute::cuda::discovery::device_names() {
            Ok(names) if !names.is_empty() => Facts {
                cuda_devices: names,
                ..Facts::default()
            },
            Ok(_) => Facts::default(),
            Err(e) => Facts {
                cuda_missing: Some(e.to_string()),
                ..Facts::default()
            },
        }
    }

    fn has(&self, engine: Engine) -> bool {
        match engine {
            Engine::Cpu => true,
            Engine::Cuda => !self.cuda_devices.is_empty(),
            Engine::Wgpu => self.adapter.as_ref().is_some_and(|a| a.runs_passes),
        }
    }

    fn missing(&self, engine: Engine) -> String {
        match engine {
            Engine::Cpu => String::new(),
            Engine::Cuda => match &self.cuda_missing {
                Some(why) => format!("no usable CUDA device ({why})"),
                None => "no usable CUDA device".into(),
            },
            Engine::Wgpu => match &self.adapter {
                Some(a) => format!("the adapter {} cannot run the compute passes", a.name),
                None => self.adapter_missing.clone().unwrap_or_else(|| "no wgpu adapter".into()),
            },
        }
    }

    /// The engine with its device, for reasons: `CUDA (NVIDIA H200)`.
    pub fn label(&self, engine: Engine) -> String {
        match engine {
            Engine::Cpu => format!("CPU ({} threads)", rayon::current_num_threads()),
            Engine::Cuda => match self.cuda_devices.as_slice() {
                [] => "CUDA".into(),
                [one] => format!("CUDA ({one})"),
                [first, rest @ ..] => format!("CUDA ({first} and {} more)", rest.len()),
            },
            Engine::Wgpu => match &self.adapter {
                Some(a) => format!("wgpu ({})", a.name),
                None => "wgpu".into(),
            },
        }
    }
}

/// The size of a job, for the rules that depend on it (zero where unknown).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JobSize {
    /// Protein residues (DSSP).
    pub residues: usize,
}

/// A placement: the engine and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placement {
    pub kind: JobKind,
    pub engine: Engine,
    /// The engine with its device: `CUDA (NVIDIA H200)`.
    pub on: String,
    /// Why this engine: `the fastest measured engine for esp`, `--device cpu`, or what `auto`
    /// passed over.
    pub why: String,
    /// `auto` took a slower engine than the fastest one for the kind (`why` says why).
    pub fell_back: bool,
}

impl Placement {
    /// One line: `esp on CUDA (NVIDIA H200): the fastest measured engine for esp`.
    pub fn reason(&self) -> String {
        format!("{} on {}: {}", self.kind, self.on, self.why)
    }

    /// The reason with what the job is: `esp on CUDA (NVIDIA H200): direct sum, 3,341 charges
    /// (the fastest measured engine for esp)`.
    pub fn reason_with(&self, detail: &str) -> String {
        if detail.is_empty() {
            return self.reason();
        }
        format!("{} on {}: {detail} ({})", self.kind, self.on, self.why)
    }
}

/// Why a job cannot be placed as asked.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PlacementError {
    /// The forced engine lacks the job kind.
    #[error("{kind} is not computed by the {engine} engine (--device {choice}); engines that have it: {have}")]
    NotHere {
        kind: JobKind,
        engine: Engine,
        choice: DeviceChoice,
        have: String,
    },
    /// The forced engine (or any GPU, for `gpu`) is not present.
    #[error("--device {choice}: {why}")]
    Missing { choice: DeviceChoice, why: String },
}

fn engines_having(kind: JobKind) -> String {
    Engine::ALL
        .iter()
        .filter(|&&e| supports(e, kind))
        .map(|e| e.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Where `kind` (of `size`) runs under `choice` on a machine with `facts`.
pub fn place(kind: JobKind, size: JobSize, choice: DeviceChoice, facts: &Facts) -> Result<Placement, PlacementError> {
    let here = |engine: Engine, why: String, fell_back: bool| Placement {
        kind,
        engine,
        on: facts.label(engine),
        why,
        fell_back,
    };
    if let Some(engine) = choice.forced() {
        if !supports(engine, kind) {
            return Err(PlacementError::NotHere {
                kind,
                engine,
                choice,
                have: engines_having(kind),
            });
        }
        if !facts.has(engine) {
            return Err(PlacementError::Missing {
                choice,
                why: facts.missing(engine),
            });
        }
        return Ok(here(engine, format!("--device {choice}"), false));
    }
    let order = fastest_first(kind);
    let mut passed_over: Vec<String> = Vec::new();
    for &engine in order {
        if choice == DeviceChoice::Gpu && !engine.is_gpu() {
            continue;
        }
        if !supports(engine, kind) {
            continue;
        }
        if !facts.has(engine) {
            passed_over.push(facts.missing(engine));
            continue;
        }
        if let Some(why_not) = size_rule(engine, kind, size, facts) {
            passed_over.push(why_not);
            continue;
        }
        let why = if passed_over.is_empty() {
            format!("the fastest measured engine for {kind}")
        } else {
            passed_over.join("; ")
        };
        return Ok(here(engine, why, !passed_over.is_empty()));
    }
    Err(PlacementError::Missing {
        choice,
        why: if passed_over.is_empty() {
            format!(
                "no GPU engine computes {kind} (engines that have it: {})",
                engines_having(kind)
            )
        } else {
            passed_over.join("; ")
        },
    })
}

/// Why `auto`/`gpu` pass over a present `engine` for a job of this size, if they do.
fn size_rule(engine: Engine, kind: JobKind, size: JobSize, facts: &Facts) -> Option<String> {
    match (engine, kind) {
        (Engine::Cuda, JobKind::Dssp) if size.residues < DSSP_DEVICE_MIN_RESIDUES => Some(format!(
            "{} residues: below {DSSP_DEVICE_MIN_RESIDUES} the CPU finishes first",
            size.residues
        )),
        (Engine::Wgpu, _) => facts.adapter.as_ref().filter(|a| a.software).map(|a| {
            format!(
                "the adapter {} is a software rasteriser, slower than the CPU engine",
                a.name
            )
        }),
        _ => None,
    }
}

/// Proteins of at least this many residues get their DSSP codes from a CUDA device (below it the
/// upload and launch cost more than the CPU's cell list).
pub const DSSP_DEVICE_MIN_RESIDUES: usize = 5_000;

/// Above this many charges a per-frame potential map in `auto` is summed by multilevel summation
/// (on the CPU engine MSM is faster from about 5,000 charges; on a GPU the direct sum stays fast up
/// to about 10^5).
pub const POTENTIAL_MAP_MSM_CHARGES: usize = 20_000;

/// Whether `auto` sums a map of `n_charges` charges by multilevel summation.
pub fn potential_map_uses_msm(n_charges: usize) -> bool {
    n_charges > POTENTIAL_MAP_MSM_CHARGES
}

/// Above this many charge-vertex pairs the potential at surface vertices is summed by multilevel
/// summation (exact direct sum below).
pub const VERTEX_DIRECT_LIMIT_TERMS: u64 = 1_000_000_000;

/// Whether the potential of `n_charges` charges at `n_vertices` vertices is summed by MSM.
pub fn vertex_potential_uses_msm(n_vertices: usize, n_charges: usize) -> bool {
    (n_vertices as u64).saturating_mul(n_charges as u64) > VERTEX_DIRECT_LIMIT_TERMS
}

/// Where the viewer (and the harness's playback) computes orbitals, densities and spin densities
/// drawn as isosurfaces.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum FieldsOn {
    /// The render device when its adapter is a real GPU that runs the passes, else the pool.
    #[default]
    Auto,
    /// The WGSL passes on the render device (where it cannot, the pool, said once).
    RenderDevice,
    /// The worker pool (CUDA engine when present, else the CPU engine).
    #[serde(alias = "WorkerPool")]
    #[value(alias = "worker-pool")]
    Pool,
}

impl FieldsOn {
    pub const ALL: [FieldsOn; 3] = [FieldsOn::Auto, FieldsOn::RenderDevice, FieldsOn::Pool];

    pub fn name(self) -> &'static str {
        match self {
            FieldsOn::Auto => "auto",
            FieldsOn::RenderDevice => "render device",
            FieldsOn::Pool => "worker pool",
        }
    }

    /// The same choice in terms of engines: the render device is the wgpu engine.
    pub fn device_choice(self) -> DeviceChoice {
        match self {
            FieldsOn::Auto => DeviceChoice::Auto,
            FieldsOn::RenderDevice => DeviceChoice::Wgpu,
            FieldsOn::Pool => DeviceChoice::Cuda,
        }
    }
}

/// Whether orbital isosurfaces are computed on the render device under `on` with `adapter`:
/// `Ok(reason)` for the render device, `Err(reason)` for the pool.
pub fn orbitals_on_render_device(on: FieldsOn, adapter: Option<&AdapterFacts>) -> Result<String, String> {
    let facts = Facts {
        adapter: adapter.cloned(),
        ..Facts::default()
    };
    match on {
        FieldsOn::Pool => Err("orbitals are set to be computed by the worker pool".into()),
        FieldsOn::RenderDevice if facts.has(Engine::Wgpu) => Ok(format!(
            "{} on {}: orbitals set to the render device",
            JobKind::OrbitalSurface,
            facts.label(Engine::Wgpu)
        )),
        FieldsOn::RenderDevice => Err(facts.missing(Engine::Wgpu)),
        FieldsOn::Auto => {
            if !facts.has(Engine::Wgpu) {
                return Err(facts.missing(Engine::Wgpu));
            }
            match size_rule(Engine::Wgpu, JobKind::OrbitalSurface, JobSize::default(), &facts) {
                Some(why) => Err(why),
                None => Ok(format!(
                    "{} on {}: the fastest measured engine for orbital isosurfaces",
                    JobKind::OrbitalSurface,
                    facts.label(Engine::Wgpu)
                )),
            }
        }
    }
}

/// Every job kind with the engine `choice` would put it on, or why none: the table `orbitfield info
/// --devices` prints.
pub fn table(choice: DeviceChoice, facts: &Facts) -> Vec<(JobKind, Result<Placement, PlacementError>)> {
    JobKind::ALL
        .iter()
        .map(|&k| (k, place(k, JobSize::default(), choice, facts)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h200() -> Facts {
        Facts {
            cuda_devices: vec!["NVIDIA H200".into()],
            adapter: Some(AdapterFacts {
                name: "NVIDIA H200 (Vulkan, DiscreteGpu)".into(),
                software: false,
                runs_passes: true,
            }),
            ..Facts::default()
        }
    }

    fn laptop_without_gpu() -> Facts {
        Facts {
            cuda_missing: Some("libcuda.so not found".into()),
            adapter: Some(AdapterFacts {
                name: "llvmpipe (Vulkan, Cpu)".into(),
                software: true,
                runs_passes: true,
            }),
            ..Facts::default()
        }
    }

    #[test]
    fn auto_takes_cuda_for_maps_and_the_render_device_for_surfaces() {
        let f = h200();
        let p = place(JobKind::Potential, JobSize::default(), DeviceChoice::Auto, &f).unwrap();
        assert_eq!(p.engine, Engine::Cuda);
        assert_eq!(
            p.reason(),
            "esp on CUDA (NVIDIA H200): the fastest measured engine for esp"
        );
        assert_eq!(
            p.reason_with("direct sum, 3,341 charges"),
            "esp on CUDA (NVIDIA H200): direct sum, 3,341 charges (the fastest measured engine for esp)"
        );
        assert!(!p.fell_back);
        let p = place(JobKind::OrbitalSurface, JobSize::default(), DeviceChoice::Auto, &f).unwrap();
        assert_eq!(p.engine, Engine::Wgpu);
    }

    #[test]
    fn auto_falls_back_and_says_why() {
        let f = laptop_without_gpu();
        let p = place(JobKind::Potential, JobSize::default(), DeviceChoice::Auto, &f).unwrap();
        assert_eq!(p.engine, Engine::Cpu);
        assert!(p.fell_back);
        assert!(
            p.why.contains("no usable CUDA device (libcuda.so not found)"),
            "{}",
            p.why
        );
        // The software rasteriser is passed over for orbital surfaces.
        let p = place(JobKind::OrbitalSurface, JobSize::default(), DeviceChoice::Auto, &f).unwrap();
        assert_eq!(p.engine, Engine::Cpu);
        assert!(p.why.contains("software rasteriser"), "{}", p.why);
    }

    #[test]
    fn a_forced_engine_never_falls_back() {
        let f = laptop_without_gpu();
        let e = place(JobKind::Potential, JobSize::default(), DeviceChoice::Cuda, &f).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--device cuda: no usable CUDA device (libcuda.so not found)"
        );
        let e = place(JobKind::Potential, JobSize::default(), DeviceChoice::Gpu, &f).unwrap_err();
        assert!(matches!(e, PlacementError::Missing { .. }), "{e}");
        // A kind the engine lacks is "not here", naming both, even where the engine is present.
        let e = place(JobKind::Dssp, JobSize::default(), DeviceChoice::Wgpu, &h200()).unwrap_err();
        assert_eq!(
            e,
            PlacementError::NotHere {
                kind: JobKind::Dssp,
                engine: Engine::Wgpu,
                choice: DeviceChoice::Wgpu,
                have: "CPU, CUDA".into()
            }
        );
        assert!(
            e.to_string().starts_with("dssp is not computed by the wgpu engine"),
            "{e}"
        );
        // Forced CPU always works.
        let p = place(JobKind::Rdf, JobSize::default(), DeviceChoice::Cpu, &h200()).unwrap();
        assert_eq!((p.engine, p.fell_back), (Engine::Cpu, false));
    }

    #[test]
    fn gpu_takes_any_gpu_engine_that_has_the_kind() {
        let mut f = h200();
        f.cuda_devices.clear();
        let p = place(JobKind::Cartoon, JobSize::default(), DeviceChoice::Gpu, &f).unwrap();
        assert_eq!(p.engine, Engine::Wgpu);
        let p = place(JobKind::Potential, JobSize::default(), DeviceChoice::Gpu, &f).unwrap();
        assert_eq!(p.engine, Engine::Wgpu);
        let p = place(JobKind::Rdf, JobSize::default(), DeviceChoice::Gpu, &f).unwrap();
        assert_eq!(p.engine, Engine::Wgpu);
        let e = place(JobKind::Dssp, JobSize::default(), DeviceChoice::Gpu, &f).unwrap_err();
        assert_eq!(e.to_string(), "--device gpu: no usable CUDA device");
    }

    #[test]
    fn ils_runs_on_wgpu_when_forced_or_without_cuda() {
        let p = place(JobKind::Ils, JobSize::default(), DeviceChoice::Wgpu, &h200()).unwrap();
        assert_eq!(p.engine, Engine::Wgpu);
        assert_eq!(
            place(JobKind::Ils, JobSize::default(), DeviceChoice::Auto, &h200())
                .unwrap()
                .engine,
            Engine::Cuda
        );
        let mut f = h200();
        f.cuda_devices.clear();
        let p = place(JobKind::Ils, JobSize::default(), DeviceChoice::Gpu, &f).unwrap();
        assert_eq!(p.engine, Engine::Wgpu);
    }

    #[test]
    fn dssp_goes_to_the_device_only_for_large_proteins() {
        let f = h200();
        let small = JobSize { residues: 214 };
        let large = JobSize {
            residues: DSSP_DEVICE_MIN_RESIDUES,
        };
        assert_eq!(
            place(JobKind::Dssp, small, DeviceChoice::Auto, &f).unwrap().engine,
            Engine::Cpu
        );
        assert_eq!(
            place(JobKind::Dssp, large, DeviceChoice::Auto, &f).unwrap().engine,
            Engine::Cuda
        );
        // Forced, the size rule does not apply.
        assert_eq!(
            place(JobKind::Dssp, small, DeviceChoice::Cuda, &f).unwrap().engine,
            Engine::Cuda
        );
    }

    #[test]
    fn the_table_has_every_kind_on_the_cpu_and_names_each_engine_once() {
        for k in JobKind::ALL {
            assert!(supports(Engine::Cpu, k), "{k}");
            assert!(fastest_first(k).contains(&Engine::Cpu));
        }
        let names: Vec<&str> = JobKind::ALL.iter().map(|k| k.name()).collect();
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), names.len());
    }

    #[test]
    fn device_choice_parses_every_name() {
        for c in [
            DeviceChoice::Cpu,
            DeviceChoice::Cuda,
            DeviceChoice::Wgpu,
            DeviceChoice::Gpu,
            DeviceChoice::Auto,
        ] {
            assert_eq!(c.name().parse::<DeviceChoice>(), Ok(c));
        }
        assert!("tpu".parse::<DeviceChoice>().unwrap_err().contains("tpu"));
    }

    #[test]
    fn orbitals_on_the_render_device_only_on_hardware_adapters() {
        let hw = h200().adapter;
        let sw = laptop_without_gpu().adapter;
        assert!(orbitals_on_render_device(FieldsOn::Auto, hw.as_ref()).is_ok());
        assert!(orbitals_on_render_device(FieldsOn::Auto, sw.as_ref()).is_err());
        assert!(orbitals_on_render_device(FieldsOn::RenderDevice, sw.as_ref()).is_ok());
        assert!(orbitals_on_render_device(FieldsOn::Pool, hw.as_ref()).is_err());
        assert!(orbitals_on_render_device(FieldsOn::RenderDevice, None).is_err());
    }

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(3_341), "3,341");
        assert_eq!(thousands(1_500_000), "1,500,000");
    }

    #[test]
    fn msm_thresholds() {
        assert!(!potential_map_uses_msm(3_341));
        assert!(potential_map_uses_msm(1_500_000));
        assert!(!vertex_potential_uses_msm(10_000, 3_341));
        assert!(vertex_potential_uses_msm(1_000_000, 1_500_000));
    }
}
