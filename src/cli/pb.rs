//! `orbitfield grid pb TOP [TRAJ...] -o map.dx|cube`: the Poisson-Boltzmann potential of a
//! structure's charges (`compute::pb`), one frame (`--frame`) or a series (`--frames`, one file per
//! frame into a directory, each frame's solve warm-started from the previous one's), on the engine
//! `--device` names: `cpu`, `cuda` (a CUDA device or a failure), `wgpu` (a wgpu adapter, a hardware
//! one first, software ones included, or a failure), `gpu` (a CUDA device, else a hardware wgpu
//! adapter, or a failure) or `auto` (a CUDA device when one is usable and the form is linearized, else
//! a hardware wgpu adapter, else the CPU, said once).
//!
//! Owns [`PbArgs`] (flattened into `grid`'s arguments) and [`run`], which `grid` calls for the
//! field `pb`. Charges and radii come from the files (PQR, prmtop, PSF, mol2, TPR where they carry
//! them); atoms without radii take the element's van der Waals radius (Bondi 1964 where Bondi gives
//! one, `model::element`), said once on standard error. The lattice: `--spacing` apart around the
//! atoms with at least 10 A of padding (or `--padding` if larger; the point counts rounded up to
//! 8 m + 1, or 16 m + 1 beyond 65, for the multigrid), or `--origin`/`--dims`, or `--focus`
//! (APBS `mg-auto`: a coarse lattice, then finer ones down to the one written, placed by
//! `--fine-center`/`--fine-length`/`--fine-around` and `--coarse-center`/`--coarse-length`/
//! `--coarse-spacing`, `compute::pb::focus`; one line per level on standard error). Output in
//! kT/e at the solve's temperature unless `--units` says otherwise.

use super::grid::GridArgs;
use anyhow::{Context, Result, bail};
use orbitfield::compute::pb::focus::{FocusSpec, FocusStep, focus_lattices};
use orbitfield::compute::pb::{
    ChargeAssignment, PbAtoms, PbBoundary, PbEngine, PbLattice, PbParams, PbSolver, PbSurface, setup,
};
use orbitfield::io::{self, cube::CubeAtom};
use orbitfield::model::units::{PotentialUnit, bohr_from_angstrom, volt_per_kt_per_e};
use orbitfield::model::{Grid3, Lattice};
use std::path::Path;
use std::time::Instant;

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChargeAssignmentArg {
    Linear,
    Spline,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum SurfaceArg {
    Mol,
    Smol,
    Fraction,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum BoundaryArg {
    Sdh,
    Mdh,
}

// Options of `grid pb` (a plain comment: a doc comment would replace `grid`'s about text).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct PbArgs {
    /// pb: solute dielectric [default: 2].
    #[arg(long, allow_negative_numbers = true)]
    pub eps_in: Option<f64>,
    /// pb: solvent probe radius of the molecular surface in Angstrom [default: 1.4]; ses: the probe
    /// of the solvent-excluded surface [default: 1.4].
    #[arg(long, allow_negative_numbers = true)]
    pub probe: Option<f64>,
    /// pb: ion exclusion radius in Angstrom [default: 2.0].
    #[arg(long, allow_negative_numbers = true)]
    pub ion_radius: Option<f64>,
    /// pb: dielectric boundary: the molecular surface (mol), APBS's smoothed molecular surface
    /// (smol), or the molecular surface's fraction along each staggered edge (fraction, not an
    /// APBS model; more accurate next to the surface) [default: smol].
    #[arg(long, value_enum)]
    pub surface: Option<SurfaceArg>,
    /// pb: how charges are spread on the lattice: linear (trilinear, APBS spl0) or spline (APBS
    /// spl2 B-spline) [default: spline].
    #[arg(long, value_enum)]
    pub charge_assignment: Option<ChargeAssignmentArg>,
    /// pb: boundary values from one Debye-Hueckel sphere (sdh) or one per atom (mdh) [default: sdh].
    #[arg(long, value_enum)]
    pub boundary: Option<BoundaryArg>,
    /// pb: solve the nonlinear Poisson-Boltzmann equation (default: linearized).
    #[arg(long)]
    pub nonlinear: bool,
    /// pb: focus as APBS's mg-auto: solve a coarse lattice holding the molecule (sdh/mdh faces),
    /// then finer ones down to the fine lattice (--spacing apart), each taking its faces from the
    /// one before; the map written is the fine lattice's.
    #[arg(long, conflicts_with_all = ["origin", "dims", "like"])]
    pub focus: bool,
    /// pb --focus: the fine lattice's centre X,Y,Z in Angstrom [default: the centre of
    /// --fine-around's atoms, else of all atoms].
    #[arg(
        long,
        value_delimiter = ',',
        num_args = 1..=3,
        allow_negative_numbers = true,
        requires = "focus",
        conflicts_with = "fine_around"
    )]
    pub fine_center: Option<Vec<f64>>,
    /// pb --focus: the fine lattice's side in Angstrom, L (a cube) or LX,LY,LZ [default: the extent
    /// of its atoms plus twice the padding, at least 10 A a side].
    #[arg(long, value_delimiter = ',', num_args = 1..=3, requires = "focus")]
    pub fine_length: Option<Vec<f64>>,
    /// pb --focus: place the fine lattice around these atoms (selection language, e.g. "resid 10
    /// to 40"); the charges outside it still count, through the coarse lattice.
    #[arg(long, value_name = "SELECTION", requires = "focus")]
    pub fine_around: Option<String>,
    /// pb --focus: the coarse lattice's centre X,Y,Z in Angstrom [default: the centre of all atoms].
    #[arg(
        long,
        value_delimiter = ',',
        num_args = 1..=3,
        allow_negative_numbers = true,
        requires = "focus"
    )]
    pub coarse_center: Option<Vec<f64>>,
    /// pb --focus: the coarse lattice's side in Angstrom, L or LX,LY,LZ [default: 1.7 times the
    /// atoms' extent (APBS's psize), at least the extent plus twice the padding, and enough to hold
    /// the fine lattice].
    #[arg(long, value_delimiter = ',', num_args = 1..=3, requires = "focus")]
    pub coarse_length: Option<Vec<f64>>,
    /// pb --focus: the coarse lattice's spacing in Angstrom [default: the fine lattice's point
    /// counts over the coarse side, as APBS's dime].
    #[arg(long, requires = "focus", allow_negative_numbers = true)]
    pub coarse_spacing: Option<f64>,
}

impl PbArgs {
    fn given(&self) -> bool {
        self.probe.is_some() || self.given_without_probe()
    }

    fn given_without_probe(&self) -> bool {
        self.eps_in.is_some()
            || self.surface.is_some()
            || self.ion_radius.is_some()
            || self.charge_assignment.is_some()
            || self.boundary.is_some()
            || self.nonlinear
            || self.focus
    }

    /// Refuses the options for a field other than pb (`--probe` alone is also the solvent-excluded
    /// surface's).
    pub fn refuse_for(&self, field: &str) -> Result<()> {
        let ses = field
            .parse::<orbitfield::model::field::FieldSpec>()
            .is_ok_and(|s| s == orbitfield::model::field::FieldSpec::ExcludedSurface);
        let others = self.given_without_probe();
        if ses && !others {
            return Ok(());
        }
        if self.given() {
            bail!(
                "--eps-in, --probe, --surface, --ion-radius, --charge-assignment, --boundary, --nonlinear and --focus apply to pb, not to {field}"
            );
        }
        Ok(())
    }
}

/// True when `field` names the Poisson-Boltzmann potential.
pub fn is_pb(field: &str) -> bool {
    field.trim().eq_ignore_ascii_case("pb")
}

fn params(args: &GridArgs) -> Result<PbParams> {
    let d = PbParams::default();
    let p = &args.pb;
    if args.dielectric.dielectric.is_some() {
        bail!("--dielectric applies to esp; pb solves the Poisson-Boltzmann equation (see --eps-in, --eps-out)");
    }
    Ok(PbParams {
        eps_in: p.eps_in.unwrap_or(d.eps_in),
        eps_out: args.dielectric.eps_out.unwrap_or(d.eps_out),
        ionic_strength_molar: args.dielectric.ionic_strength.unwrap_or(d.ionic_strength_molar),
        ion_radius_angstrom: p.ion_radius.unwrap_or(d.ion_radius_angstrom),
        probe_angstrom: p.probe.unwrap_or(d.probe_angstrom),
        surface: match p.surface {
            Some(SurfaceArg::Mol) => PbSurface::Mol,
            Some(SurfaceArg::Fraction) => PbSurface::Fraction,
            Some(SurfaceArg::Smol) | None => PbSurface::Smol,
        },
        temperature_kelvin: args.esp.temperature.unwrap_or(d.temperature_kelvin),
        charge_assignment: match p.charge_assignment {
            Some(ChargeAssignmentArg::Linear) => ChargeAssignment::Linear,
            Some(ChargeAssignmentArg::Spline) | None => ChargeAssignment::Spline,
        },
        boundary: match p.boundary {
            Some(BoundaryArg::Mdh) => PbBoundary::Mdh,
            Some(BoundaryArg::Sdh) | None => PbBoundary::Sdh,
        },
        nonlinear: p.nonlinear,
        // --max-memory-gib, as for the other lattices (default: half of the physical memory).
        max_bytes: super::grid::memory_limit(args.max_memory_gib)?.bytes,
        ..d
    })
}

/// The lattice of `args` around `positions`.
/// `grid pb`'s lattice spacing without `--spacing` (Angstrom): a typical APBS fine lattice.
pub const PB_DEFAULT_SPACING_ANGSTROM: f64 = 0.5;

fn lattice(args: &GridArgs, positions: &[[f64; 3]]) -> Result<PbLattice> {
    let h = args.spacing.unwrap_or(PB_DEFAULT_SPACING_ANGSTROM);
    if !(h.is_finite() && h > 0.0) {
        bail!("--spacing {h}: a positive number of Angstrom");
    }
    if let (Some(o), Some(d)) = (&args.origin, &args.dims) {
        if let ([x, y, z], [a, b, c]) = (o.as_slice(), d.as_slice()) {
            return Ok(PbLattice {
                origin_angstrom: [*x, *y, *z],
                spacing_angstrom: h,
                dims: [*a, *b, *c],
            });
        }
        bail!("--origin and --dims take three values each");
    }
    if let Some(like) = &args.like {
        return pb_lattice_like(like, &super::grid::like_lattice(like)?);
    }
    Ok(lattice_around(positions, h, args.padding))
}

/// `lattice` (of the file `like`) as the solver's: axis-aligned, one spacing on every axis (an
/// APBS map's is, when its lengths and points were chosen so), else refused with the spacings.
fn pb_lattice_like(like: &Path, lattice: &Lattice) -> Result<PbLattice> {
    let s = lattice.steps_bohr;
    let h = [s[0][0], s[1][1], s[2][2]].map(orbitfield::model::units::angstrom_from_bohr);
    let off_axis = !lattice.is_axis_aligned();
    let uneven = h.iter().any(|&x| (x - h[0]).abs() > 1e-6 * h[0].abs());
    if off_axis || uneven || h[0].is_nan() || h[0] <= 0.0 {
        bail!(
            "--like {}: the solver's lattice is axis-aligned with one spacing, and this one's spacings are \
             {:.6}, {:.6}, {:.6} A{}; give --origin, --dims and --spacing",
            like.display(),
            h[0],
            h[1],
            h[2],
            if off_axis { " along tilted axes" } else { "" }
        );
    }
    Ok(PbLattice {
        origin_angstrom: orbitfield::model::units::angstrom_from_bohr3(lattice.origin_bohr),
        spacing_angstrom: h[0],
        dims: lattice.dims,
    })
}

/// Three values from one (a cube) or three.
fn lengths(flag: &str, v: &Option<Vec<f64>>) -> Result<Option<[f64; 3]>> {
    match v.as_deref() {
        None => Ok(None),
        Some([l]) => Ok(Some([*l; 3])),
        Some([x, y, z]) => Ok(Some([*x, *y, *z])),
        Some(other) => bail!("{flag} {other:?}: one length (a cube) or three"),
    }
}

/// X,Y,Z (or X Y Z).
fn point(flag: &str, v: &Option<Vec<f64>>) -> Result<Option<[f64; 3]>> {
    match v.as_deref() {
        None => Ok(None),
        Some([x, y, z]) => Ok(Some([*x, *y, *z])),
        Some(other) => bail!("{flag} {other:?}: three coordinates X,Y,Z in Angstrom"),
    }
}

/// The focusing chain of `--focus` for `atoms` (frame `frame` of `system`), coarsest first.
fn focus_chain(args: &GridArgs, system: &mut io::System, frame: usize, atoms: &PbAtoms) -> Result<Vec<PbLattice>> {
    let p = &args.pb;
    let fine_atoms: Vec<[f64; 3]> = match &p.fine_around {
        Some(text) => {
            let sel =
                orbitfield::model::select::Selection::parse(text).map_err(|e| anyhow::anyhow!("--fine-around {e}"))?;
            let f = system
                .trajectory
                .frame(frame)
                .with_context(|| format!("reading frame {frame}"))?;
            let flags = sel.evaluate(&system.structure, Some(&f));
            let picked: Vec<[f64; 3]> = atoms
                .positions_angstrom
                .iter()
                .zip(&flags)
                .filter(|(_, on)| **on)
                .map(|(x, _)| *x)
                .collect();
            if picked.is_empty() {
                bail!("--fine-around {text:?} selects no atoms");
            }
            picked
        }
        None => Vec::new(),
    };
    let spec = FocusSpec {
        fine_spacing_angstrom: args.spacing.unwrap_or(PB_DEFAULT_SPACING_ANGSTROM),
        fine_center_angstrom: point("--fine-center", &p.fine_center)?,
        fine_length_angstrom: lengths("--fine-length", &p.fine_length)?,
        padding_angstrom: args.padding.max(setup::MIN_PB_PADDING_ANGSTROM),
        coarse_center_angstrom: point("--coarse-center", &p.coarse_center)?,
        coarse_length_angstrom: lengths("--coarse-length", &p.coarse_length)?,
        coarse_spacing_angstrom: p.coarse_spacing,
    };
    focus_lattices(&atoms.positions_angstrom, &fine_atoms, &spec).map_err(|e| anyhow::anyhow!("--focus: {e}"))
}

pub use orbitfield::compute::pb::setup::{lattice_around, legend};

/// The solute's atoms of `frame` (`sel`, by default all but water and bulk ions:
/// `setup::solute`): positions, charges and radii (element radii where the files give none). The
/// notes are said once (`said`).
pub fn atoms(
    system: &mut io::System,
    frame: usize,
    sel: Option<&str>,
    said: &mut bool,
) -> Result<(PbAtoms, Vec<CubeAtom>)> {
    let n_frames = system.trajectory.n_frames();
    if n_frames == 0 {
        bail!(super::grid_source::NO_COORDINATES);
    }
    if frame >= n_frames {
        bail!("frame {frame} requested, the files hold {n_frames} frames");
    }
    let f = system
        .trajectory
        .frame(frame)
        .with_context(|| format!("reading frame {frame}"))?;
    let setup::Solute {
        atoms,
        keep,
        radii_by_element: by_element,
        solvent_note,
    } = setup::solute_atoms(&system.structure, &f, sel).map_err(anyhow::Error::msg)?;
    if !*said {
        if let Some(note) = solvent_note {
            eprintln!("note: {note} (--sel)");
        }
        if by_element {
            eprintln!("note: {}", setup::radii_note(&system.structure, Some(&keep)));
        }
        *said = true;
    }
    let elements: Vec<_> = system
        .structure
        .elements
        .iter()
        .zip(&keep)
        .filter_map(|(e, &k)| k.then_some(*e))
        .collect();
    let cube = atoms
        .positions_angstrom
        .iter()
        .zip(&elements)
        .map(|(p, e)| CubeAtom::nucleus(u32::from(e.number()), p.map(bohr_from_angstrom)))
        .collect();
    Ok((atoms, cube))
}

/// The frames `--frames` names (all, N, A:B or A:B:S), as every command reads them
/// (`model::FrameRange`).
fn frame_list(text: &str, n_frames: usize) -> Result<Vec<usize>> {
    orbitfield::model::FrameRange::parse(text)
        .and_then(|r| r.indices(n_frames))
        .map_err(|e| anyhow::anyhow!("--{e}"))
}

fn write(path: &Path, grid: &Grid3, atoms: &[CubeAtom]) -> Result<()> {
    let name = path.to_string_lossy().to_ascii_lowercase();
    if name.ends_with(".dx") {
        io::dx::write(path, grid)
    } else if name.ends_with(".cube") || name.ends_with(".cub") {
        io::cube::write(path, grid, atoms)
    } else {
        bail!("{}: expected an output name ending in .cube or .dx", path.display())
    }
    .with_context(|| format!("cannot write {}", path.display()))
}

/// The solver for `--device` (`cuda`, `wgpu`, `gpu`: that device or an error; `auto`: CUDA, else a
/// hardware wgpu adapter, else the CPU with one line saying why).
pub fn new_solver(device: &super::device::DeviceArgs) -> Result<PbSolver> {
    use orbitfield::compute::placement::{DeviceChoice, Engine, JobKind};
    let placed = device.place(JobKind::PoissonBoltzmann, Default::default(), "")?;
    let engine = match (placed.engine, device.device) {
        (Engine::Cpu, _) => PbEngine::Cpu,
        (_, DeviceChoice::Auto) => PbEngine::Auto,
        (Engine::Cuda, DeviceChoice::Gpu) | (Engine::Wgpu, DeviceChoice::Gpu) => PbEngine::Gpu,
        (Engine::Cuda, _) => PbEngine::Cuda,
        (Engine::Wgpu, _) => PbEngine::Wgpu,
    };
    let solver = PbSolver::new(engine).map_err(|e| anyhow::anyhow!("--device: {e}"))?;
    if let Some(note) = solver.note() {
        eprintln!("note: {note}");
    }
    Ok(solver)
}

/// The Poisson-Boltzmann potential (kT/e, default parameters) of the first frame of `system` as a
/// volume on a lattice `spacing_angstrom` apart, solved on `device`, and the legend's name of the
/// model ("Poisson-Boltzmann, 0.15 M, eps 2/78.5").
pub fn volume(
    system: &mut io::System,
    spacing_angstrom: f64,
    device: &super::device::DeviceArgs,
) -> Result<(Grid3, String)> {
    if !(spacing_angstrom.is_finite() && spacing_angstrom > 0.0) {
        bail!("--pb-spacing {spacing_angstrom}: a positive number of Angstrom");
    }
    let params = PbParams::default();
    let mut said = false;
    let (atoms, _) = atoms(system, 0, None, &mut said)?;
    let lat = lattice_around(&atoms.positions_angstrom, spacing_angstrom, 0.0);
    let mut solver = new_solver(device)?;
    let sol = solver.solve(&atoms, &lat, &params, None)?;
    let name = legend(&params);
    let grid = setup::grid_of(
        &sol,
        format!("{name} (kT/e, {}, {:?} points)", solver.engine_name(), lat.dims),
    );
    Ok((grid, name))
}

/// Lattices from this many points get a line before their solve (tens of seconds and more).
const LARGE_LATTICE_POINTS: u64 = 20_000_000;

/// `grid pb`.
pub fn run(args: &GridArgs) -> Result<()> {
    let params = params(args)?;
    let unit = PotentialUnit::parse(args.esp.units.as_deref().unwrap_or("kT/e"), params.temperature_kelvin)
        .map_err(|e| anyhow::anyhow!("--units: {e}"))?;
    let scale = volt_per_kt_per_e(params.temperature_kelvin) / unit.volt();
    let mut system = super::load_noted(&args.files)?;
    if let Some(note) = super::grid_source::make_whole(&mut system, args.as_written) {
        eprintln!("note: {note}");
    }
    let frames = match &args.frames {
        Some(text) => frame_list(text, system.trajectory.n_frames())?,
        None => vec![args.frame],
    };
    let to_directory = args.frames.is_some();
    if to_directory {
        std::fs::create_dir_all(&args.output).with_context(|| format!("creating {}", args.output.display()))?;
    }
    let mut said = false;
    let mut solver = new_solver(&args.device)?;
    let mut previous: Option<PbLattice> = None;
    let mut chain: Option<Vec<PbLattice>> = None;
    for (n, &frame) in frames.iter().enumerate() {
        let t0 = Instant::now();
        let (atoms, cube) = atoms(&mut system, frame, args.sel.as_deref(), &mut said)?;
        if args.pb.focus && chain.is_none() {
            chain = Some(focus_chain(args, &mut system, frame, &atoms)?);
        }
        let lat = match (&previous, &chain) {
            (Some(l), _) => *l,
            (None, Some(levels)) => *levels.last().context("--focus: no lattices")?,
            (None, None) => lattice(args, &atoms.positions_angstrom)?,
        };
        let warm = previous.is_some() && chain.is_none();
        // A lattice this large takes minutes on the CPU: say so before the wait, once (one past the
        // memory limit is refused by the solver instead).
        let points = lat.dims.iter().fold(1u64, |a, &d| a.saturating_mul(d as u64));
        let host_bytes = points.saturating_mul(orbitfield::compute::pb::engine::HOST_BYTES_PER_POINT);
        // Charges outside a lattice that fits in memory are refused before its memory is taken (a
        // lattice given by --origin/--dims can miss the atoms); once, at the first frame (the
        // solver checks every frame's charges as it spreads them).
        if n == 0 && chain.is_none() && host_bytes <= params.max_bytes {
            orbitfield::compute::pb::prep::charge_spread(&atoms, &lat, &params, false)
                .map_err(|e| anyhow::anyhow!("pb frame {frame}: {e}"))?;
        }
        if n == 0 && points >= LARGE_LATTICE_POINTS && host_bytes <= params.max_bytes {
            eprintln!(
                "pb frame {frame}: solving on {:?} points ({:.1} GiB on the host) on {}; this can take minutes",
                lat.dims,
                host_bytes as f64 / (1u64 << 30) as f64,
                solver.engine_name()
            );
        }
        let sol = match &chain {
            Some(levels) => {
                let mut progress = |s: &FocusStep| {
                    let c: [f64; 3] = std::array::from_fn(|k| {
                        s.lattice.origin_angstrom[k] + 0.5 * s.lattice.spacing_angstrom * (s.lattice.dims[k] - 1) as f64
                    });
                    eprintln!(
                        "pb frame {frame}: focusing level {}/{}: {:?} points {:.4} A apart centred at ({:.3}, {:.3}, {:.3}) A, {}, {} CG iterations, {:.2} s",
                        s.level + 1,
                        s.levels,
                        s.lattice.dims,
                        s.lattice.spacing_angstrom,
                        c[0],
                        c[1],
                        c[2],
                        if s.level > 0 {
                            "faces from the level before"
                        } else if params.boundary == PbBoundary::Mdh {
                            "mdh faces"
                        } else {
                            "sdh faces"
                        },
                        s.iterations,
                        s.seconds
                    );
                };
                solver.solve_focused(&atoms, levels, &params, &mut progress)
            }
            None => solver.solve_next(&atoms, &lat, &params),
        }
        .with_context(|| format!("frame {frame}"))?;
        let mut grid = Grid3 {
            lattice: Lattice::axis_aligned(
                lat.origin_angstrom.map(bohr_from_angstrom),
                bohr_from_angstrom(lat.spacing_angstrom),
                lat.dims,
            ),
            values: sol.potential_kt_per_e.iter().map(|&u| (u * scale) as f32).collect(),
            description: format!("{}, frame {frame} ({})", params.label(), unit.label()),
        };
        grid.description.truncate(200);
        let path = if to_directory {
            args.output.join(super::grid::frame_file_name(frame, "dx"))
        } else {
            args.output.clone()
        };
        write(&path, &grid, &cube)?;
        eprintln!(
            "{}: pb frame {frame} ({}/{}) on {:?} points, {}, {} CG iterations{}, {:.2} s",
            path.display(),
            n + 1,
            frames.len(),
            lat.dims,
            solver.engine_name(),
            sol.iterations,
            if warm { " (warm start)" } else { "" },
            t0.elapsed().as_secs_f64()
        );
        previous = Some(lat);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use orbitfield::compute::pb::setup::multigrid_points;

    #[test]
    fn lattices_coarsen_and_legends_name_the_model() {
        assert_eq!(multigrid_points(161), 161);
        assert_eq!(multigrid_points(150), 161);
        assert_eq!(multigrid_points(20), 25);
        assert_eq!(multigrid_points(66), 81);
        assert_eq!(multigrid_points(3), 9);
        assert_eq!(legend(&PbParams::default()), "Poisson-Boltzmann, 0.15 M, eps 2/78.5");
    }
}
