//! `orbitfield grid FIELD FILE... -o OUT.cube|OUT.dx`: a field on a lattice, written to a file.
//!
//! Also owns what `grid` and `points` share: turning loaded files plus a field text into a
//! computable request ([`Source`]), the `--device` choice, and [`evaluate`], the one function every
//! CLI evaluation goes through (so that the jobs pool can take it over in one place).

use anyhow::{Context, Result, bail};
use orbitfield::compute::cpu::{self, CpuEngine};
use orbitfield::compute::{Field, FieldInput, FieldJob, PointCharges, SlabEngine};
use orbitfield::io::cube::CubeAtom;
use orbitfield::io::{self, System};
use orbitfield::model::field::{DEFAULT_PADDING_ANGSTROM, DEFAULT_SPACING_ANGSTROM, FieldSpec, LatticeSpec};
use orbitfield::model::units::{angstrom_from_bohr3, bohr_from_angstrom3};
use orbitfield::model::{Grid3, Lattice, Wavefunction};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// Where to compute.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Device {
    /// The multithreaded CPU engine.
    Cpu,
    /// A CUDA GPU.
    Gpu,
    /// The GPU when one is usable, else the CPU.
    #[default]
    Auto,
}

#[derive(clap::Args, Debug)]
pub struct GridArgs {
    /// The field: mo:homo, mo:lumo+2, mo:homo-1, mo:17 (1-based), mo:beta:homo, mo2:homo (|psi|^2),
    /// density, spin, esp (Coulomb potential of the partial charges).
    pub field: String,
    /// Files that together form the system (a wavefunction; for esp a structure with charges).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Output file: .cube (Gaussian cube, bohr) or .dx (OpenDX, Angstrom).
    #[arg(short = 'o', long = "output")]
    pub output: PathBuf,
    /// Lattice spacing in Angstrom.
    #[arg(long, default_value_t = DEFAULT_SPACING_ANGSTROM)]
    pub spacing: f64,
    /// Padding around the atoms in Angstrom.
    #[arg(long, default_value_t = DEFAULT_PADDING_ANGSTROM)]
    pub padding: f64,
    /// Explicit lattice: origin X,Y,Z of the first point in Angstrom (with --dims and --spacing).
    #[arg(
        long,
        value_delimiter = ',',
        num_args = 3,
        requires = "dims",
        allow_negative_numbers = true
    )]
    pub origin: Option<Vec<f64>>,
    /// Explicit lattice: points NX,NY,NZ along x, y, z (with --origin).
    #[arg(long, value_delimiter = ',', num_args = 3, requires = "origin")]
    pub dims: Option<Vec<usize>>,
    /// Use the lattice of an existing cube or DX file (e.g. to compare with another program's).
    #[arg(long, conflicts_with_all = ["origin", "dims"])]
    pub like: Option<PathBuf>,
    /// Frame (0-based) of a trajectory or wavefunction series.
    #[arg(long, default_value_t = 0)]
    pub frame: usize,
    /// Compute device.
    #[arg(long, value_enum, default_value_t = Device::Auto)]
    pub device: Device,
}

/// The lattice `args` ask for around `source`'s atoms.
fn lattice_of(args: &GridArgs, source: &Source) -> Result<Lattice> {
    if let Some(like) = &args.like {
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
        return Ok(grid.lattice);
    }
    let spec = match (&args.origin, &args.dims) {
        (Some(o), Some(d)) => LatticeSpec::Explicit {
            origin_angstrom: [o.first(), o.get(1), o.get(2)].map(|x| x.copied().unwrap_or(0.0)),
            dims: [d.first(), d.get(1), d.get(2)].map(|x| x.copied().unwrap_or(1)),
            spacing_angstrom: args.spacing,
        },
        _ => LatticeSpec::AroundAtoms {
            spacing_angstrom: args.spacing,
            padding_angstrom: args.padding,
        },
    };
    Ok(spec.build(&source.positions_angstrom())?)
}

/// A field ready to evaluate: what the engines need plus the atoms for file headers.
pub struct Source {
    pub spec: FieldSpec,
    pub field: Field,
    pub input: FieldInput,
    pub atoms: Vec<CubeAtom>,
}

impl Source {
    /// Atom positions in Angstrom (for placing the lattice).
    pub fn positions_angstrom(&self) -> Vec<[f64; 3]> {
        self.atoms
            .iter()
            .map(|a| angstrom_from_bohr3(a.position_bohr))
            .collect()
    }
}

/// Loads `files` and resolves `field_text` against them at `frame`.
pub fn load_source(field_text: &str, files: &[PathBuf], frame: usize) -> Result<Source> {
    let spec: FieldSpec = field_text.parse()?;
    let mut system = io::load(files)?;
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

fn source_from_system(spec: FieldSpec, system: &mut System, frame: usize) -> Result<Source> {
    if spec.needs_charges() {
        let n_frames = system.trajectory.n_frames();
        if frame >= n_frames.max(1) {
            bail!("frame {frame} requested, the files hold {n_frames} frames");
        }
        let positions: Vec<[f32; 3]> = if n_frames == 0 {
            Vec::new()
        } else {
            system.trajectory.frame(frame)?.positions_angstrom
        };
        let s = &system.structure;
        let Some(charges) = s.charges_e.as_ref() else {
            bail!("esp needs partial charges: give a file that carries them (pqr, psf, mol2 ...)");
        };
        if positions.len() != charges.len() {
            bail!(
                "the structure has {} charges but the frame has {} atoms",
                charges.len(),
                positions.len()
            );
        }
        let positions_bohr: Vec<[f64; 3]> = positions
            .iter()
            .map(|p| bohr_from_angstrom3(p.map(f64::from)))
            .collect();
        let atoms = positions_bohr
            .iter()
            .zip(&s.elements)
            .zip(charges)
            .map(|((&p, e), &q)| CubeAtom {
                atomic_number: u32::from(e.number()),
                charge_e: f64::from(q),
                position_bohr: p,
            })
            .collect();
        let charges = PointCharges {
            positions_bohr,
            charges_e: charges.iter().map(|&q| f64::from(q)).collect(),
        };
        return Ok(Source {
            spec,
            field: spec.resolve(None)?,
            input: FieldInput::Charges(Arc::new(charges)),
            atoms,
        });
    }
    let n_wf = system.wavefunctions.len();
    if n_wf == 0 {
        bail!("{spec} needs a wavefunction (molden, fchk, wfn or wfx file); none was given");
    }
    let index = if n_wf == 1 { 0 } else { frame };
    let Some(wf) = system.wavefunctions.get(index) else {
        bail!("frame {frame} requested, the files hold {n_wf} wavefunctions");
    };
    if n_wf == 1 && frame > 0 {
        bail!("frame {frame} requested, the files hold one wavefunction");
    }
    let field = spec.resolve(Some(wf))?;
    Ok(Source {
        spec,
        field,
        atoms: wavefunction_atoms(wf),
        input: FieldInput::Wavefunction(Arc::new(wf.clone())),
    })
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

/// Planes per slab handed to the engine (progress is reported per slab).
const SLAB_PLANES: usize = 8;

/// The one place where the CLI computes fields. Every device currently runs on the CPU engine;
/// `gpu` and `auto` say so in one line on stderr.
pub fn evaluate(device: Device, request: Request<'_>) -> Result<Evaluated> {
    if device != Device::Cpu {
        eprintln!(
            "note: --device {} falls back to the CPU: the GPU engine is not wired into the command line yet",
            if device == Device::Gpu { "gpu" } else { "auto" }
        );
    }
    match request {
        Request::Points {
            field,
            input,
            points_bohr,
        } => Ok(Evaluated::Points(cpu::evaluate_points(field, input, points_bohr)?)),
        Request::Lattice(job) => {
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
            for (s, out) in grid.values.chunks_mut((plane * SLAB_PLANES).max(1)).enumerate() {
                let z0 = s * SLAB_PLANES;
                let z1 = (z0 + SLAB_PLANES).min(nz);
                engine.compute_slab(&job, z0..z1, out)?;
                bar.inc(out.len() as u64);
            }
            bar.finish_and_clear();
            Ok(Evaluated::Lattice(grid))
        }
    }
}

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

pub fn run(args: &GridArgs) -> Result<()> {
    let dx = is_dx(&args.output)?;
    let source = load_source(&args.field, &args.files, args.frame)?;
    let lattice = lattice_of(args, &source)?;
    let job = FieldJob {
        field: source.field.clone(),
        lattice,
        input: source.input.clone(),
    };
    let t0 = Instant::now();
    let Evaluated::Lattice(mut grid) = evaluate(args.device, Request::Lattice(job))? else {
        bail!("internal error: a lattice request returned points");
    };
    let seconds = t0.elapsed().as_secs_f64();
    grid.description = format!("{} ({})", source.spec, source.spec.unit());
    if dx {
        io::dx::write(&args.output, &grid)
    } else {
        io::cube::write(&args.output, &grid, &source.atoms)
    }
    .with_context(|| format!("cannot write {}", args.output.display()))?;
    let [nx, ny, nz] = grid.lattice.dims;
    let (lo, hi) = grid.min_max().unwrap_or((0.0, 0.0));
    eprintln!(
        "{}: {} on {nx}x{ny}x{nz} points in {seconds:.3} s, values {lo:.4e} .. {hi:.4e} {}",
        args.output.display(),
        source.spec,
        source.spec.unit()
    );
    Ok(())
}
