//! What `grid`, `points`, `ions` and `surface` share: loaded files plus a field text turned into a
//! computable request ([`Source`]: a wavefunction's fields, a point-charge potential, a molecular
//! surface), and [`evaluate`], the one function every CLI evaluation goes through (so that the jobs
//! pool can take it over in one place).

use super::device::DeviceArgs;
use anyhow::{Context, Result, bail};
use orbitfield::analysis::esp_series::require_charges;
use orbitfield::compute::cpu::{self, CpuEngine};
use orbitfield::compute::molsurf::SurfaceModel;
use orbitfield::compute::placement::{self, Engine, JobKind, JobSize};
use orbitfield::compute::request::{self, FieldRequest, SystemView};
use orbitfield::compute::{Field, FieldInput, FieldJob, SlabEngine};
use orbitfield::io::cube::CubeAtom;
use orbitfield::io::{self, System};
use orbitfield::model::field::FieldSpec;
use orbitfield::model::units::{angstrom_from_bohr3, bohr_from_angstrom3};
use orbitfield::model::{Frame, Grid3, Wavefunction};
use std::path::PathBuf;
use std::sync::Arc;

/// A field ready to evaluate (resolved by `compute::request`): what the engines need plus the atoms
/// for file headers.
pub struct Source {
    pub spec: FieldSpec,
    pub field: Field,
    pub input: FieldInput,
    pub atoms: Vec<CubeAtom>,
}

impl Source {
    fn new(spec: FieldSpec, resolved: request::Resolved, atoms: Vec<CubeAtom>) -> Result<Source> {
        let Some(input) = resolved.input().cloned() else {
            bail!("internal error: {spec} resolved to a potential that needs a lattice plan");
        };
        Ok(Source {
            spec,
            field: resolved.field,
            input,
            atoms,
        })
    }

    /// Atom positions in Angstrom (for placing the lattice).
    pub fn positions_angstrom(&self) -> Vec<[f64; 3]> {
        self.atoms
            .iter()
            .map(|a| angstrom_from_bohr3(a.position_bohr))
            .collect()
    }
}

/// Makes the molecules of `system` whole across its periodic box in every frame unless
/// `as_written` (`--as-written`); the note to print when the first frame had any in pieces.
pub(super) fn make_whole(system: &mut System, as_written: bool) -> Option<String> {
    if as_written {
        return None;
    }
    let n_atoms = system.structure.len();
    io::load::make_whole(&system.structure.bonds, n_atoms, &mut system.trajectory)
        .map(|note| format!("{note} (--as-written keeps the frames as the file wrote them)"))
}

/// Loads `files` and resolves `field_text` against them at `frame`.
pub fn load_source(field_text: &str, files: &[PathBuf], frame: usize) -> Result<Source> {
    let spec: FieldSpec = field_text.parse()?;
    let mut system = super::load_noted(files)?;
    source_from_system(spec, &mut system, frame)
}

fn wavefunction_atoms(wf: &Wavefunction) -> Vec<CubeAtom> {
    wf.atoms
        .iter()
        .map(|a| CubeAtom {
            atomic_number: u32::from(a.element.number()),
            charge_e: a.nuclear_charge,
            position_bohr: a.position_bohr,
        })
        .collect()
}

/// The wavefunction of `frame`: the only one, or the frame's of a series.
pub fn frame_wavefunction(system: &System, frame: usize) -> Result<&Wavefunction> {
    system.wavefunction_of_frame(frame).map_err(|e| anyhow::anyhow!(e))
}

/// The potential of the wavefunction of `frame` (nuclei and electron density), as a [`Source`].
pub fn wavefunction_potential_source(system: &System, frame: usize) -> Result<Source> {
    let wf = Arc::new(frame_wavefunction(system, frame)?.clone());
    let resolved = request::resolve(
        &view(system, None, Some(&wf)),
        &FieldRequest::Wavefunction(Field::QmPotential),
    )?;
    Source::new(FieldSpec::Potential, resolved, wavefunction_atoms(&wf))
}

/// The view of `system` the resolver takes.
fn view<'a>(system: &'a System, frame: Option<&'a Frame>, wf: Option<&'a Arc<Wavefunction>>) -> SystemView<'a> {
    SystemView {
        structure: &system.structure,
        frame,
        wavefunction: wf,
        warnings: &system.warnings,
    }
}

/// What to say when the files are a topology without coordinates (a prmtop, TPR or PSF alone).
pub(super) const NO_COORDINATES: &str = "the files hold no coordinates (a topology alone): give a coordinate or trajectory file after it (rst7/inpcrd, nc, mdcrd, crd, pdb, gro, dcd, xtc, trr)";

/// The coordinates of `frame` (0-based), checked against the number of frames.
pub(super) fn read_frame(system: &mut System, frame: usize) -> Result<orbitfield::model::Frame> {
    let n_frames = system.trajectory.n_frames();
    if n_frames == 0 {
        bail!(NO_COORDINATES);
    }
    if frame >= n_frames {
        bail!("frame {frame} requested, the files hold {n_frames} frames");
    }
    system
        .trajectory
        .frame(frame)
        .with_context(|| format!("reading frame {frame}"))
}

/// The molecular-surface density of the atoms `selection` picks (all without one) at `frame`, as a
/// [`Source`], with the padding (Angstrom) its lattice needs around them.
pub fn molsurf_source(
    system: &mut System,
    frame: usize,
    selection: Option<&str>,
    model: SurfaceModel,
) -> Result<(Source, f64)> {
    let coords = read_frame(system, frame)?;
    let s = &system.structure;
    let selected = match selection {
        Some(text) => {
            let sel = orbitfield::model::select::Selection::parse(text).map_err(|e| anyhow::anyhow!("--sel {e}"))?;
            let flags = sel.evaluate(s, Some(&coords));
            if !flags.contains(&true) {
                bail!("--sel {text:?} selects no atoms");
            }
            Some(flags)
        }
        None => None,
    };
    let surface = FieldRequest::MolSurf {
        selected: selected.clone(),
        model,
    };
    let resolved = request::resolve(&view(system, Some(&coords), None), &surface)?;
    let padding = resolved.min_padding_angstrom;
    let cube_atoms = resolved
        .positions_angstrom
        .iter()
        .zip(
            s.elements
                .iter()
                .enumerate()
                .filter(|(i, _)| selected.as_ref().is_none_or(|f| f.get(*i).copied().unwrap_or(false))),
        )
        .map(|(&p, (_, e))| CubeAtom::nucleus(u32::from(e.number()), bohr_from_angstrom3(p)))
        .collect();
    let spec = match model {
        SurfaceModel::Excluded { .. } => FieldSpec::ExcludedSurface,
        SurfaceModel::Gaussian { .. } => FieldSpec::MolSurf,
    };
    Ok((Source::new(spec, resolved, cube_atoms)?, padding))
}

/// The field `spec` of `system` at `frame`; `esp` is the wavefunction's own potential when there is a
/// wavefunction, else that of the structure's partial charges.
pub fn source_from_system(spec: FieldSpec, system: &mut System, frame: usize) -> Result<Source> {
    if let FieldSpec::MolSurf | FieldSpec::ExcludedSurface = spec {
        let model = match spec {
            FieldSpec::ExcludedSurface => SurfaceModel::EXCLUDED,
            _ => SurfaceModel::default(),
        };
        return molsurf_source(system, frame, None, model).map(|(source, _)| source);
    }
    if spec.needs_charges() && !system.wavefunctions.is_empty() {
        return wavefunction_potential_source(system, frame);
    }
    if spec.needs_charges() {
        let n_frames = system.trajectory.n_frames();
        if frame >= n_frames.max(1) {
            bail!("frame {frame} requested, the files hold {n_frames} frames");
        }
        let coords = if n_frames == 0 {
            Frame::default()
        } else {
            system.trajectory.frame(frame)?
        };
        require_charges(system)?;
        let resolved = request::resolve(&view(system, Some(&coords), None), &FieldRequest::Named(spec))?;
        let s = &system.structure;
        let atoms = resolved
            .positions_angstrom
            .iter()
            .zip(&s.elements)
            .map(|(&p, e)| CubeAtom::nucleus(u32::from(e.number()), bohr_from_angstrom3(p)))
            .collect();
        return Source::new(spec, resolved, atoms);
    }
    let wf = if system.wavefunctions.is_empty() {
        None
    } else {
        Some(Arc::new(frame_wavefunction(system, frame)?.clone()))
    };
    let resolved = request::resolve(&view(system, None, wf.as_ref()), &FieldRequest::Named(spec))?;
    let atoms = wf.as_deref().map(wavefunction_atoms).unwrap_or_default();
    Source::new(spec, resolved, atoms)
}

/// What to evaluate.
pub enum Request<'a> {
    /// A whole lattice.
    Lattice(FieldJob),
    /// Arbitrary points in bohr.
    Points {
        field: &'a Field,
        input: &'a FieldInput,
        points_bohr: &'a [[f64; 3]],
    },
}

/// What an evaluation returns.
pub enum Evaluated {
    Lattice(Grid3),
    Points(Vec<f64>),
}

/// Planes per slab handed to the engine (progress is reported per slab): enough for every core.
fn slab_planes() -> usize {
    (2 * rayon::current_num_threads()).max(8)
}

/// The one place where the CLI computes fields: the placement policy decides the engine per job
/// (`--device`, `--verbose` prints where and why). Lattices on a GPU engine (CUDA or wgpu) go through
/// the jobs pool (its devices with the CPU for retries); on the CPU the CPU engine runs here with a
/// progress bar.
/// Points run on the exact CPU evaluator unless a GPU is asked for.
pub fn evaluate(device: &DeviceArgs, request: Request<'_>) -> Result<Evaluated> {
    match request {
        Request::Points {
            field,
            input,
            points_bohr,
        } => {
            let detail = format!("{} points", placement::thousands(points_bohr.len()));
            if device.place(JobKind::Points, JobSize::default(), &detail)?.engine == Engine::Cuda {
                return Ok(Evaluated::Points(super::points::evaluate_points_gpu(
                    field,
                    input,
                    points_bohr,
                )?));
            }
            Ok(Evaluated::Points(cpu::evaluate_points(field, input, points_bohr)?))
        }
        Request::Lattice(job) => {
            let placed = device.place(placement::kind_of(&job), JobSize::default(), &placement::describe(&job))?;
            if placed.engine != Engine::Cpu {
                let (grid, notes) = orbitfield::jobs::compute_grid(job, device.device)?;
                for note in notes {
                    eprintln!("note: {note}");
                }
                return Ok(Evaluated::Lattice(grid));
            }
            Ok(Evaluated::Lattice(cpu_lattice(&job)?))
        }
    }
}

/// `job` on the CPU engine in this thread, slab by slab, with a progress bar for large lattices.
fn cpu_lattice(job: &FieldJob) -> Result<Grid3> {
    let lattice = job.lattice;
    let [nx, ny, nz] = lattice.dims;
    let plane = nx * ny;
    let mut grid = Grid3::zeros(lattice, "");
    let bar = indicatif::ProgressBar::with_draw_target(
        Some(lattice.n_points() as u64),
        indicatif::ProgressDrawTarget::stderr(),
    );
    if lattice.n_points() < 2_000_000 {
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:40} {percent:>3}% {pos}/{len} points, {eta} left")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let engine = CpuEngine;
    let planes = slab_planes();
    for (s, out) in grid.values.chunks_mut((plane * planes).max(1)).enumerate() {
        let z0 = s * planes;
        let z1 = (z0 + planes).min(nz);
        engine.compute_slab(job, z0..z1, out)?;
        bar.inc(out.len() as u64);
    }
    bar.finish_and_clear();
    Ok(grid)
}

/// [`evaluate`] of a lattice.
pub(super) fn evaluate_lattice(device: &DeviceArgs, job: FieldJob) -> Result<Grid3> {
    match evaluate(device, Request::Lattice(job))? {
        Evaluated::Lattice(grid) => Ok(grid),
        Evaluated::Points(_) => bail!("internal error: a lattice request returned points"),
    }
}

/// A map's title line for `source` of `system` at `frame`: the field, and for an orbital its number
/// (from 1), spin channel and energy, as a cube's header should say which orbital it holds
/// ("mo:homo (orbital 32, -0.397866 Eh) (bohr^-3/2)").
pub fn describe(source: &Source, system: &System, frame: usize) -> String {
    let unit = source.spec.unit();
    let (Field::Orbital { spin, index } | Field::OrbitalSquared { spin, index }) = source.field else {
        return format!("{} ({unit})", source.spec);
    };
    let wf = system.wavefunction_of_frame(frame).ok();
    let channel = match (wf.map(|w| w.spin), spin) {
        (Some(orbitfield::model::SpinKind::Unrestricted), orbitfield::model::Spin::Alpha) => ", alpha",
        (Some(orbitfield::model::SpinKind::Unrestricted), orbitfield::model::Spin::Beta) => ", beta",
        _ => "",
    };
    let energy = wf
        .and_then(|w| w.orbitals(spin))
        .and_then(|set| set.energies_hartree.get(index))
        .filter(|e| e.is_finite())
        .map(|e| format!(", {e:.6} Eh"))
        .unwrap_or_default();
    format!("{} (orbital {}{channel}{energy}) ({unit})", source.spec, index + 1)
}
