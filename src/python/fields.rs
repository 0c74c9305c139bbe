//! Fields of a loaded system on lattices and at points, for the `System` class: the field text
//! parsed by the command line's parser ([`FieldSpec`]), the lattice placed as `orbitfield grid`
//! places it, the potential of point charges built by the same per-frame functions as `grid esp`
//! (so the values are those the command writes), and the lattice computed by the jobs pool (CUDA
//! when present) or the CPU engine.

use crate::analysis::esp_series::{
    MAP_BYTES_PER_POINT, MemoryLimit, check_memory, frame_boundary, frame_charges, frame_job, require_charges,
};
use crate::compute::esp::EspMethod;
use crate::compute::{Field, FieldInput, FieldJob, cpu};
use crate::io::System;
use crate::io::cube::CubeAtom;
use crate::jobs::DeviceChoice;
use crate::model::field::{FieldSpec, LatticeSpec};
use crate::model::units::{DEFAULT_TEMPERATURE_KELVIN, PotentialUnit, angstrom_from_bohr3};
use crate::model::{Grid3, Lattice, Wavefunction};
use anyhow::{Context, Result, bail};
use std::path::PathBuf;
use std::sync::Arc;

/// Where the lattice goes.
#[derive(Clone, Debug)]
pub(crate) enum Placement {
    /// Around the field's atoms, as `grid --spacing --padding`.
    AroundAtoms {
        spacing_angstrom: f64,
        padding_angstrom: f64,
    },
    /// Axis-aligned with this first point and these points per axis, as `grid --origin --dims`.
    Explicit {
        origin_angstrom: [f64; 3],
        dims: [usize; 3],
        spacing_angstrom: f64,
    },
    /// The lattice of a cube or DX file, as `grid --like`.
    Like(PathBuf),
}

/// The options of a potential (`esp`) besides the frame.
#[derive(Clone, Debug, Default)]
pub(crate) struct EspOptions {
    /// Output unit text ("kT/e", "kcal/mol/e", "V", "hartree/e"); `None`: kT/e for point charges,
    /// hartree/e for a wavefunction's own potential.
    pub units: Option<String>,
    /// The temperature asked for; `None`: 300 K for Coulomb potentials, 298.15 K (APBS's) for
    /// Poisson-Boltzmann.
    pub temperature_kelvin: Option<f64>,
}

impl EspOptions {
    fn unit(&self, wavefunction: bool) -> Result<PotentialUnit> {
        let default = if wavefunction { "hartree/e" } else { "kT/e" };
        self.unit_at(default, self.temperature_kelvin.unwrap_or(DEFAULT_TEMPERATURE_KELVIN))
    }

    fn unit_at(&self, default: &str, temperature_kelvin: f64) -> Result<PotentialUnit> {
        PotentialUnit::parse(self.units.as_deref().unwrap_or(default), temperature_kelvin)
            .map_err(|e| anyhow::anyhow!("units: {e}"))
    }
}

/// A computed lattice with the atoms for a cube file's header and the unit of its values.
pub(crate) struct Computed {
    pub grid: Grid3,
    pub atoms: Vec<CubeAtom>,
    pub unit: String,
}

/// Parses a device name: auto, cpu, gpu (or cuda).
pub(crate) fn device(text: &str) -> Result<DeviceChoice> {
    text.parse().map_err(|e: String| anyhow::anyhow!("device: {e}"))
}

/// Number of frames: the wavefunctions of a series, else the trajectory's.
pub(crate) fn n_frames(system: &System) -> usize {
    if system.wavefunctions.is_empty() || !system.wavefunction_frames.is_empty() {
        system.trajectory.n_frames()
    } else {
        system.wavefunctions.len()
    }
}

/// The wavefunction of `frame`: the only one (frame 0), or the frame's of a series.
fn frame_wavefunction(system: &System, frame: usize) -> Result<&Wavefunction> {
    system.wavefunction_of_frame(frame).map_err(|e| anyhow::anyhow!(e))
}

/// The coordinates of `frame`, checked against the number of frames.
pub(crate) fn read_frame(system: &mut System, frame: usize) -> Result<crate::model::Frame> {
    let n = system.trajectory.n_frames();
    if frame >= n {
        bail!("frame {frame} requested, the system holds {n} frames");
    }
    system
        .trajectory
        .frame(frame)
        .with_context(|| format!("reading frame {frame}"))
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

/// A field ready for a lattice: what the engines need, the atoms it belongs to, the unit scale.
struct Prepared {
    field: Field,
    input: FieldInput,
    atoms: Vec<CubeAtom>,
    /// Padding the field needs at least (the molecular surface's reach), Angstrom.
    min_padding_angstrom: f64,
    /// Point charges: the potential job is built per lattice (its long-range part depends on it).
    charges: Option<(crate::compute::PointCharges, crate::compute::esp::Boundary)>,
    /// Values are multiplied by this (potentials into their unit), and their unit's label.
    scale: f64,
    unit: String,
    description: String,
}

fn prepare(system: &mut System, spec: FieldSpec, frame: usize, esp: &EspOptions) -> Result<Prepared> {
    if spec.needs_charges() && !system.wavefunctions.is_empty() {
        let wf = frame_wavefunction(system, frame)?;
        let unit = esp.unit(true)?;
        return Ok(Prepared {
            field: Field::QmPotential,
            input: FieldInput::Wavefunction(Arc::new(wf.clone())),
            atoms: wavefunction_atoms(wf),
            min_padding_angstrom: 0.0,
            charges: None,
            scale: unit.per_hartree_per_e(),
            unit: unit.label(),
            description: format!(
                "esp of the wavefunction (nuclei and electron density), frame {frame} ({})",
                unit.label()
            ),
        });
    }
    if spec.needs_charges() {
        let unit = esp.unit(false)?;
        let charges = require_charges(system)?;
        let coords = read_frame(system, frame)?;
        let point = frame_charges(frame, &coords, &charges, None)?;
        let boundary = frame_boundary(frame, &coords, false, &system.trajectory.origin)?;
        let atoms = crate::analysis::esp_series::cube_atoms(&system.structure.elements, &point);
        return Ok(Prepared {
            field: Field::Potential,
            input: FieldInput::Charges(Arc::new(point.clone())),
            atoms,
            min_padding_angstrom: 0.0,
            charges: Some((point, boundary)),
            scale: unit.per_hartree_per_e(),
            unit: unit.label(),
            description: format!(
                "esp of partial charges (direct sum, vacuum), frame {frame} ({})",
                unit.label()
            ),
        });
    }
    if let FieldSpec::MolSurf | FieldSpec::ExcludedSurface = spec {
        let coords = read_frame(system, frame)?;
        let s = &system.structure;
        let model = match spec {
            FieldSpec::ExcludedSurface => crate::compute::molsurf::SurfaceModel::EXCLUDED,
            _ => crate::compute::molsurf::SurfaceModel::default(),
        };
        let atoms = crate::compute::molsurf::MolSurfAtoms::from_frame(s, &coords, None, model)
            .map_err(|e| anyhow::anyhow!("{spec}: {e}"))?;
        if !atoms.has_radii() {
            bail!("{spec}: no atom has a positive radius");
        }
        let cube_atoms = atoms
            .centers_bohr
            .iter()
            .zip(&s.elements)
            .map(|(&p, e)| CubeAtom::nucleus(u32::from(e.number()), p))
            .collect();
        return Ok(Prepared {
            field: Field::MolSurf,
            min_padding_angstrom: atoms.padding_angstrom(),
            input: FieldInput::Spheres(Arc::new(atoms)),
            atoms: cube_atoms,
            charges: None,
            scale: 1.0,
            unit: spec.unit().to_string(),
            description: format!("{}, frame {frame}", model.describe()),
        });
    }
    if system.wavefunctions.is_empty() {
        if let Some(why) = system
            .warnings
            .iter()
            .find(|w| w.contains("no wavefunction can be built") || w.contains("no molecular orbitals in this log"))
        {
            bail!("{spec} needs a wavefunction: {why}");
        }
        bail!("{spec} needs a wavefunction (molden, fchk, wfn or wfx file, or from_pyscf); none was given");
    }
    let wf = frame_wavefunction(system, frame)?;
    let field = spec.resolve(Some(wf))?;
    Ok(Prepared {
        field,
        input: FieldInput::Wavefunction(Arc::new(wf.clone())),
        atoms: wavefunction_atoms(wf),
        min_padding_angstrom: 0.0,
        charges: None,
        scale: 1.0,
        unit: spec.unit().to_string(),
        description: format!("{spec} ({})", spec.unit()),
    })
}

fn place(placement: &Placement, positions_angstrom: &[[f64; 3]], min_padding_angstrom: f64) -> Result<Lattice> {
    let spec = match placement {
        Placement::Like(path) => {
            let bytes = crate::io::read_bytes(path)?;
            let name = crate::io::uncompressed_name(path).to_ascii_lowercase();
            let grid = if name.ends_with(".dx") {
                crate::io::dx::read(path, &bytes)?
            } else {
                crate::io::cube::read(path, &bytes)?
                    .grids
                    .into_iter()
                    .next()
                    .with_context(|| format!("{}: no grid in the file", path.display()))?
            };
            return Ok(grid.lattice);
        }
        Placement::Explicit {
            origin_angstrom,
            dims,
            spacing_angstrom,
        } => LatticeSpec::Explicit {
            origin_angstrom: *origin_angstrom,
            dims: *dims,
            spacing_angstrom: *spacing_angstrom,
        },
        Placement::AroundAtoms {
            spacing_angstrom,
            padding_angstrom,
        } => LatticeSpec::AroundAtoms {
            spacing_angstrom: *spacing_angstrom,
            padding_angstrom: padding_angstrom.max(min_padding_angstrom),
        },
    };
    Ok(spec.build(positions_angstrom)?)
}

/// Computes `job` on `device`: the jobs pool for auto and gpu (gpu fails without a usable CUDA
/// device), the CPU engine in this thread's rayon pool for cpu.
fn evaluate(device: DeviceChoice, job: FieldJob) -> Result<Grid3> {
    match device {
        DeviceChoice::Cpu => Ok(cpu::evaluate_grid(&job)?),
        preference => Ok(crate::jobs::compute_grid(job, preference)?.0),
    }
}

/// The field `field_text` of `system` at `frame` on the lattice `placement` asks for, computed on
/// `device`, in the field's unit (potentials: `esp`'s).
pub(crate) fn grid(
    system: &mut System,
    field_text: &str,
    frame: usize,
    placement: &Placement,
    device: DeviceChoice,
    esp: &EspOptions,
    focus: Option<&PbFocus>,
) -> Result<Computed> {
    if field_text.trim().eq_ignore_ascii_case("pb") {
        return pb_grid(system, frame, placement, device, esp, focus);
    }
    if focus.is_some() {
        bail!("focus= applies to the Poisson-Boltzmann map (\"pb\"), not to {field_text:?}");
    }
    let spec: FieldSpec = field_text.parse()?;
    let prepared = prepare(system, spec, frame, esp)?;
    let positions: Vec<[f64; 3]> = prepared
        .atoms
        .iter()
        .map(|a| angstrom_from_bohr3(a.position_bohr))
        .collect();
    let lattice = place(placement, &positions, prepared.min_padding_angstrom)?;
    check_memory(lattice.dims, MAP_BYTES_PER_POINT, &MemoryLimit::half_of_physical())?;
    let job = match prepared.charges {
        Some((charges, boundary)) => frame_job(charges, EspMethod::Direct, boundary, lattice, frame)?,
        None => FieldJob {
            field: prepared.field,
            lattice,
            input: prepared.input,
        },
    };
    let mut grid = evaluate(device, job)?;
    if prepared.scale != 1.0 {
        let scale = prepared.scale;
        grid.values.iter_mut().for_each(|v| *v = (f64::from(*v) * scale) as f32);
    }
    grid.description = prepared.description;
    Ok(Computed {
        grid,
        atoms: prepared.atoms,
        unit: prepared.unit,
    })
}

/// Focusing of a Poisson-Boltzmann map, as `grid pb --focus` takes it (lengths: one value for a cube
/// or three; `fine_around`: a selection).
#[derive(Clone, Debug, Default)]
pub(crate) struct PbFocus {
    pub fine_center: Option<[f64; 3]>,
    pub fine_length: Option<Vec<f64>>,
    pub fine_around: Option<String>,
    pub coarse_center: Option<[f64; 3]>,
    pub coarse_length: Option<Vec<f64>>,
    pub coarse_spacing: Option<f64>,
}

/// One length for a cube or three, as `--fine-length`/`--coarse-length` take them.
fn focus_lengths(what: &str, v: &Option<Vec<f64>>) -> Result<Option<[f64; 3]>> {
    match v.as_deref() {
        None => Ok(None),
        Some([l]) => Ok(Some([*l; 3])),
        Some([x, y, z]) => Ok(Some([*x, *y, *z])),
        Some(other) => bail!("{what}: one length or three, not {}", other.len()),
    }
}

/// The linearized Poisson-Boltzmann potential of `frame` with the default parameters of `grid pb`
/// (`PbParams::default()` at `esp`'s temperature), on the lattice `grid pb --spacing --padding`
/// places (`compute::pb::setup::lattice_around`) or an explicit one, in `esp`'s unit (kT/e by
/// default): the values `orbitfield grid pb FILES --frame F` writes.
fn pb_grid(
    system: &mut System,
    frame: usize,
    placement: &Placement,
    device: DeviceChoice,
    esp: &EspOptions,
    focus: Option<&PbFocus>,
) -> Result<Computed> {
    use crate::compute::pb::{PbEngine, PbLattice, PbParams, PbSolver, setup};
    use crate::model::units::{bohr_from_angstrom, volt_per_kt_per_e};
    let defaults = PbParams::default();
    let params = PbParams {
        temperature_kelvin: esp.temperature_kelvin.unwrap_or(defaults.temperature_kelvin),
        ..defaults
    };
    let unit = esp.unit_at("kT/e", params.temperature_kelvin)?;
    let scale = volt_per_kt_per_e(params.temperature_kelvin) / unit.volt();
    let coords = read_frame(system, frame)?;
    // The solute: all but the water and the electrolyte's ions, as `grid pb` and the viewer.
    let atoms = setup::solute_atoms(&system.structure, &coords, None)
        .map_err(|e| anyhow::anyhow!("pb, frame {frame}: {e}"))?
        .atoms;
    // focus=: the chain of lattices of `grid pb --focus`, coarsest first.
    let levels = match (focus, placement) {
        (None, _) => None,
        (
            Some(f),
            Placement::AroundAtoms {
                spacing_angstrom,
                padding_angstrom,
            },
        ) => {
            use crate::compute::pb::focus::{FocusSpec, focus_lattices};
            let fine_atoms: Vec<[f64; 3]> = match &f.fine_around {
                Some(text) => {
                    let sel =
                        crate::model::select::Selection::parse(text).map_err(|e| anyhow::anyhow!("fine_around {e}"))?;
                    let flags = sel.evaluate(&system.structure, Some(&coords));
                    let picked: Vec<[f64; 3]> = atoms
                        .positions_angstrom
                        .iter()
                        .zip(&flags)
                        .filter(|(_, on)| **on)
                        .map(|(x, _)| *x)
                        .collect();
                    if picked.is_empty() {
                        bail!("fine_around {text:?} selects no atoms");
                    }
                    picked
                }
                None => Vec::new(),
            };
            let spec = FocusSpec {
                fine_spacing_angstrom: *spacing_angstrom,
                fine_center_angstrom: f.fine_center,
                fine_length_angstrom: focus_lengths("fine_length", &f.fine_length)?,
                padding_angstrom: padding_angstrom.max(setup::MIN_PB_PADDING_ANGSTROM),
                coarse_center_angstrom: f.coarse_center,
                coarse_length_angstrom: focus_lengths("coarse_length", &f.coarse_length)?,
                coarse_spacing_angstrom: f.coarse_spacing,
            };
            Some(
                focus_lattices(&atoms.positions_angstrom, &fine_atoms, &spec)
                    .map_err(|e| anyhow::anyhow!("focus: {e}"))?,
            )
        }
        (Some(_), _) => bail!("focus= places its own lattices: give spacing (and padding), not origin, dims or like"),
    };
    let lattice = match placement {
        _ if levels.is_some() => *levels.as_ref().and_then(|l| l.last()).context("focus: no lattices")?,
        Placement::AroundAtoms {
            spacing_angstrom,
            padding_angstrom,
        } => {
            let h = *spacing_angstrom;
            if !(h.is_finite() && h > 0.0) {
                bail!("pb: spacing {h}: a positive number of Angstrom");
            }
            setup::lattice_around(&atoms.positions_angstrom, h, *padding_angstrom)
        }
        Placement::Explicit {
            origin_angstrom,
            dims,
            spacing_angstrom,
        } => {
            let h = *spacing_angstrom;
            if !(h.is_finite() && h > 0.0) || dims.contains(&0) {
                bail!("pb: spacing {h} and dims {dims:?}: a positive spacing and at least one point per axis");
            }
            PbLattice {
                origin_angstrom: *origin_angstrom,
                spacing_angstrom: h,
                dims: *dims,
            }
        }
        Placement::Like(path) => bail!("pb: like= is not supported ({}): give origin and dims", path.display()),
    };
    check_memory(lattice.dims, MAP_BYTES_PER_POINT, &MemoryLimit::half_of_physical())?;
    let engine = match device {
        DeviceChoice::Cpu => PbEngine::Cpu,
        DeviceChoice::Auto => PbEngine::Auto,
        DeviceChoice::Cuda => PbEngine::Cuda,
        DeviceChoice::Gpu => PbEngine::Gpu,
        DeviceChoice::Wgpu => PbEngine::Wgpu,
    };
    let mut solver = PbSolver::new(engine).map_err(|e| anyhow::anyhow!("device: {e}"))?;
    let sol = match &levels {
        Some(levels) => solver.solve_focused(&atoms, levels, &params, &mut |_| {}),
        None => solver.solve_next(&atoms, &lattice, &params),
    }
    .with_context(|| format!("pb, frame {frame}"))?;
    let cube_atoms = atoms
        .positions_angstrom
        .iter()
        .zip(&system.structure.elements)
        .map(|(p, e)| CubeAtom::nucleus(u32::from(e.number()), p.map(bohr_from_angstrom)))
        .collect();
    let mut description = format!("{}, frame {frame} ({})", params.label(), unit.label());
    description.truncate(200);
    let grid = Grid3 {
        lattice: Lattice::axis_aligned(
            lattice.origin_angstrom.map(bohr_from_angstrom),
            bohr_from_angstrom(lattice.spacing_angstrom),
            lattice.dims,
        ),
        values: sol.potential_kt_per_e.iter().map(|&u| (u * scale) as f32).collect(),
        description,
    };
    Ok(Computed {
        grid,
        atoms: cube_atoms,
        unit: unit.label(),
    })
}

/// The field `field_text` at `points_bohr` by the exact CPU evaluator, in f64 and the field's unit.
pub(crate) fn points(
    system: &mut System,
    field_text: &str,
    frame: usize,
    points_bohr: &[[f64; 3]],
    esp: &EspOptions,
) -> Result<Vec<f64>> {
    let spec: FieldSpec = field_text.parse()?;
    if !points_bohr.iter().flatten().all(|x| x.is_finite()) {
        bail!("points: every coordinate must be a finite number");
    }
    let prepared = prepare(system, spec, frame, esp)?;
    let mut values = cpu::evaluate_points(&prepared.field, &prepared.input, points_bohr)?;
    if prepared.scale != 1.0 {
        values.iter_mut().for_each(|v| *v *= prepared.scale);
    }
    Ok(values)
}

/// The radial distribution function of `sel1` around `sel2` over `frames` (all without), each frame
/// histogrammed by the CPU engine as `orbitfield rdf --device cpu` does; selections are evaluated per
/// frame (they may depend on positions). Returns bin centres (Angstrom), g(r) and cumulative counts.
pub(crate) fn rdf(
    system: &mut System,
    sel1: &str,
    sel2: &str,
    r_max_angstrom: f64,
    bins: usize,
    frames: Option<Vec<usize>>,
    exclude_same_residue: bool,
) -> Result<(Vec<f64>, Vec<f64>, Vec<f64>)> {
    use crate::analysis::rdf::{RdfAccumulator, RdfSettings};
    use crate::model::select::Selection;
    let s1 = Selection::parse(sel1).map_err(|e| anyhow::anyhow!("sel1: {e}"))?;
    let s2 = Selection::parse(sel2).map_err(|e| anyhow::anyhow!("sel2: {e}"))?;
    let mut acc = RdfAccumulator::new(RdfSettings {
        r_max_angstrom,
        bins,
        exclude_same_group: exclude_same_residue,
    })?;
    let groups: Vec<u32> = {
        let starts = system.structure.residue_starts();
        let mut g = vec![0u32; system.structure.len()];
        for (r, w) in starts.windows(2).enumerate() {
            g.get_mut(w[0]..w[1]).into_iter().flatten().for_each(|x| *x = r as u32);
        }
        g
    };
    let n_frames = system.trajectory.n_frames();
    let frames = frames.unwrap_or_else(|| (0..n_frames).collect());
    if frames.is_empty() {
        bail!("rdf: no frames to average (the system holds {n_frames})");
    }
    for f in frames {
        let frame = read_frame(system, f)?;
        let i1 = s1.indices(&system.structure, Some(&frame));
        let i2 = s2.indices(&system.structure, Some(&frame));
        acc.add_frame(f, &frame, &i1, &i2, Some(&groups))
            .with_context(|| format!("rdf, frame {f}"))?;
    }
    let rdf = acc.finish();
    Ok((rdf.r_angstrom, rdf.g, rdf.n_cumulative))
}
