//! What `grid`, `points`, `ions` and `surface` share: loaded files plus a field text turned into a
//! computable request ([`Source`]: a wavefunction's fields, a point-charge potential, a molecular
//! surface), and [`evaluate`], the one function every CLI evaluation goes through (so that the jobs
//! pool can take it over in one place).

use super::grid::*;
use anyhow::{Context, Result, bail};
use orbitfield::analysis::esp_series::require_charges;
use orbitfield::compute::cpu::{self, CpuEngine};
use orbitfield::compute::{Field, FieldInput, FieldJob, PointCharges, SlabEngine};
use orbitfield::io::cube::CubeAtom;
use orbitfield::io::{self, System};
use orbitfield::model::field::FieldSpec;
use orbitfield::model::units::{angstrom_from_bohr3, bohr_from_angstrom3};
use orbitfield::model::{Grid3, Wavefunction};
use std::path::PathBuf;
use std::sync::Arc;

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

/// The wavefunction of `frame`: the only one, or the frame's of a series.
pub fn frame_wavefunction(system: &System, frame: usize) -> Result<&Wavefunction> {
    let n_wf = system.wavefunctions.len();
    if n_wf == 1 && frame > 0 {
        bail!("frame {frame} requested, the files hold one wavefunction");
    }
    let index = if n_wf == 1 { 0 } else { frame };
    let Some(wf) = system.wavefunctions.get(index) else {
        bail!("frame {frame} requested, the files hold {n_wf} wavefunction(s)");
    };
    Ok(wf)
}

/// The potential of the wavefunction of `frame` (nuclei and electron density), as a [`Source`].
pub fn wavefunction_potential_source(system: &System, frame: usize) -> Result<Source> {
    let wf = frame_wavefunction(system, frame)?;
    Ok(Source {
        spec: FieldSpec::Potential,
        field: Field::QmPotential,
        atoms: wavefunction_atoms(wf),
        input: FieldInput::Wavefunction(Arc::new(wf.clone())),
    })
}

/// The coordinates of `frame` (0-based), checked against the number of frames.
pub(super) fn read_frame(system: &mut System, frame: usize) -> Result<orbitfield::model::Frame> {
    let n_frames = system.trajectory.n_frames();
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
    radius_scale: f64,
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
    let atoms = orbitfield::compute::molsurf::MolSurfAtoms::from_frame(s, &coords, selected.as_deref(), radius_scale)
        .map_err(|e| anyhow::anyhow!("molsurf: {e}"))?;
    if atoms.gaussians().is_empty() {
        bail!("molsurf: no selected atom has a positive radius");
    }
    let padding = atoms.padding_angstrom();
    let cube_atoms = atoms
        .centers_bohr
        .iter()
        .zip(
            s.elements
                .iter()
                .enumerate()
                .filter(|(i, _)| selected.as_ref().is_none_or(|f| f.get(*i).copied().unwrap_or(false))),
        )
        .map(|(&p, (_, e))| CubeAtom {
            atomic_number: u32::from(e.number()),
            charge_e: 0.0,
            position_bohr: p,
        })
        .collect();
    Ok((
        Source {
            spec: FieldSpec::MolSurf,
            field: Field::MolSurf,
            input: FieldInput::Spheres(Arc::new(atoms)),
            atoms: cube_atoms,
        },
        padding,
    ))
}

/// The field `spec` of `system` at `frame`; `esp` is the wavefunction's own potential when there is a
/// wavefunction, else that of the structure's partial charges.
pub fn source_from_system(spec: FieldSpec, system: &mut System, frame: usize) -> Result<Source> {
    if spec == FieldSpec::MolSurf {
        return molsurf_source(system, frame, None, orbitfield::compute::molsurf::DEFAULT_RADIUS_SCALE)
            .map(|(source, _)| source);
    }
    if spec.needs_charges() && !system.wavefunctions.is_empty() {
        return wavefunction_potential_source(system, frame);
    }
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
        require_charges(system)?;
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
        // A QM log that says why it holds no wavefunction (orbitals printed without the basis, or
        // no orbitals at all) gives its advice, naming the keyword to add, as the error.
        if let Some(why) = system
            .warnings
            .iter()
            .find(|w| w.contains("no wavefunction can be built") || w.contains("no molecular orbitals in this log"))
        {
            bail!("{spec} needs a wavefunction: {why}");
        }
        bail!("{spec} needs a wavefunction (molden, fchk, wfn or wfx file); none was given");
    }
    let wf = frame_wavefunction(system, frame)?;
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

/// Planes per slab handed to the engine (progress is reported per slab): enough for every core.
fn slab_planes() -> usize {
    (2 * rayon::current_num_threads()).max(8)
}

/// The one place where the CLI computes fields. Lattices on `gpu`/`auto` go through the jobs pool
/// (CUDA devices with the CPU for retries, or the CPU alone with one line saying why); `cpu` runs the
/// CPU engine here with a progress bar. Points are always evaluated by the exact CPU evaluator.
pub fn evaluate(device: Device, request: Request<'_>) -> Result<Evaluated> {
    match request {
        Request::Points {
            field,
            input,
            points_bohr,
        } => {
            if device == Device::Gpu {
                return Ok(Evaluated::Points(super::points::evaluate_points_gpu(
                    field,
                    input,
                    points_bohr,
                )?));
            }
            Ok(Evaluated::Points(cpu::evaluate_points(field, input, points_bohr)?))
        }
        Request::Lattice(job) if device != Device::Cpu => {
            let preference = if device == Device::Gpu {
                orbitfield::jobs::DevicePreference::Gpu
            } else {
                orbitfield::jobs::DevicePreference::Auto
            };
            let (grid, notes) = orbitfield::jobs::compute_grid(job, preference)?;
            for note in notes {
                eprintln!("note: {note}");
            }
            Ok(Evaluated::Lattice(grid))
        }
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
            let planes = slab_planes();
            for (s, out) in grid.values.chunks_mut((plane * planes).max(1)).enumerate() {
                let z0 = s * planes;
                let z1 = (z0 + planes).min(nz);
                engine.compute_slab(&job, z0..z1, out)?;
                bar.inc(out.len() as u64);
            }
            bar.finish_and_clear();
            Ok(Evaluated::Lattice(grid))
        }
    }
}

/// [`evaluate`] of a lattice.
pub(super) fn evaluate_lattice(device: Device, job: FieldJob) -> Result<Grid3> {
    match evaluate(device, Request::Lattice(job))? {
        Evaluated::Lattice(grid) => Ok(grid),
        Evaluated::Points(_) => bail!("internal error: a lattice request returned points"),
    }
}
