//! Implicit ligand sampling maps for the `System` class: the free energy (kT) of a built-in probe
//! (`ils:o2`, `ils:xe`, `ils:co`, `ils:no`) over frames, with the defaults of `orbitfield grid ils`
//! (all atoms, no fit, Lennard-Jones parameters from the files: prmtop or TPR), the lattice placed
//! as the command places it, frames computed by the jobs pool's ILS workers and summed as the
//! command sums them.

use super::fields::{Computed, Placement, read_frame};
use crate::compute::ils::{IlsSetup, place_atoms};
use crate::io::System;
use crate::io::cube::CubeAtom;
use crate::jobs::DeviceChoice;
use crate::jobs::ils::{IlsDone, IlsWorkers};
use crate::model::ils::{
    DEFAULT_CUTOFF_ANGSTROM, DEFAULT_MAX_ENERGY_KT, DEFAULT_ORIENTATIONS, DEFAULT_SUBRES, IlsMap, OccupancySums,
    Orientations,
};
use crate::model::lj::Probe;
use crate::model::units::{BOHR_PER_ANGSTROM, DEFAULT_TEMPERATURE_KELVIN};
use crate::model::{Frame, Grid3, Lattice};
use anyhow::{Context, Result, bail};
use std::path::PathBuf;
use std::sync::Arc;

/// The padding `grid ils` puts around the atoms by default, Angstrom.
pub(crate) const ILS_PADDING_ANGSTROM: f64 = 2.0;

/// The probe of a field text `ils:NAME`, or `None` when the text names another field.
pub(crate) fn probe_of(field_text: &str) -> Option<Result<Probe>> {
    let t = field_text.trim();
    let (head, name) = t.split_once(':')?;
    if !head.eq_ignore_ascii_case("ils") {
        return None;
    }
    Some(Probe::builtin(name.trim()).with_context(|| format!("{t}: the probes are ils:o2, ils:xe, ils:co and ils:no")))
}

fn map_of(placement: &Placement, positions_angstrom: &[[f64; 3]]) -> Result<IlsMap> {
    match placement {
        Placement::Explicit {
            origin_angstrom,
            dims,
            spacing_angstrom,
        } => Ok(IlsMap {
            origin_angstrom: *origin_angstrom,
            spacing_angstrom: *spacing_angstrom,
            dims: *dims,
        }),
        Placement::Like(path) => bail!("ils: like= is not supported ({}): give origin and dims", path.display()),
        Placement::AroundAtoms {
            spacing_angstrom,
            padding_angstrom,
        } => {
            let mut lo = [f64::INFINITY; 3];
            let mut hi = [f64::NEG_INFINITY; 3];
            for p in positions_angstrom {
                for k in 0..3 {
                    lo[k] = lo[k].min(p[k]);
                    hi[k] = hi[k].max(p[k]);
                }
            }
            if !(lo[0].is_finite() && hi[0].is_finite()) {
                bail!("ils: no atoms to place the lattice around");
            }
            let l = Lattice::around_box(lo, hi, *padding_angstrom, *spacing_angstrom);
            Ok(IlsMap {
                origin_angstrom: l.origin_angstrom(),
                spacing_angstrom: *spacing_angstrom,
                dims: l.dims,
            })
        }
    }
}

fn positions_of(frame: &Frame) -> Vec<[f64; 3]> {
    frame.positions_angstrom.iter().map(|p| p.map(f64::from)).collect()
}

/// The ILS free energy (kT) of `probe` over `frames` (all without) of `system`, whose files are
/// `paths` (the Lennard-Jones parameters are read from them), on `device`.
pub(crate) fn ils_grid(
    system: &mut System,
    paths: &[PathBuf],
    probe: Probe,
    frames: Option<Vec<usize>>,
    placement: &Placement,
    device: DeviceChoice,
) -> Result<Computed> {
    if let Placement::AroundAtoms { spacing_angstrom, .. } | Placement::Explicit { spacing_angstrom, .. } = placement
        && !(spacing_angstrom.is_finite() && *spacing_angstrom > 0.0)
    {
        bail!("ils: spacing must be positive, not {spacing_angstrom}");
    }
    if paths.is_empty() {
        bail!(
            "ils needs Lennard-Jones parameters from the files (prmtop or TPR): this system was not loaded from files"
        );
    }
    let n_frames = system.trajectory.n_frames();
    let frames = frames.unwrap_or_else(|| (0..n_frames).collect());
    let Some(&first) = frames.first() else {
        bail!("ils: no frames to average (the system holds {n_frames})");
    };
    let reference = read_frame(system, first)?;
    let lj = crate::io::ils_params::system_lj(paths, &system.structure, &[], false, None)?;
    let map = map_of(placement, &positions_of(&reference))?;
    let orientations = Orientations::new(&probe, DEFAULT_ORIENTATIONS, DEFAULT_SUBRES);
    let setup = IlsSetup {
        map,
        subres: DEFAULT_SUBRES,
        cutoff_angstrom: DEFAULT_CUTOFF_ANGSTROM,
        max_energy_kt: DEFAULT_MAX_ENERGY_KT,
        temperature_kelvin: DEFAULT_TEMPERATURE_KELVIN,
        probe,
        orientations,
        atom_lj: lj.params.clone(),
    };
    setup.check()?;
    let setup = Arc::new(setup);
    let atoms: Vec<CubeAtom> = reference
        .positions_angstrom
        .iter()
        .zip(&system.structure.elements)
        .map(|(p, e)| CubeAtom::nucleus(u32::from(e.number()), p.map(|x| f64::from(x) * BOHR_PER_ANGSTROM)))
        .collect();
    let workers = IlsWorkers::with_devices(device, None, setup.clone());
    if device.requires_gpu() && !workers.has_gpu() {
        bail!("device gpu: no usable CUDA device ({})", workers.notes().join("; "));
    }
    let mut sums = OccupancySums::new(setup.map.dims);
    let mut take = |d: IlsDone| -> Result<(), String> {
        let v = d.result.map_err(|e| format!("frame {}: {e}", d.frame_index))?;
        sums.add_frame(&v)
    };
    let mut frame = Frame::default();
    for &f in &frames {
        if f >= n_frames {
            bail!("frame {f} requested, the system holds {n_frames} frames");
        }
        system
            .trajectory
            .read_frame(f, &mut frame)
            .with_context(|| format!("reading frame {f}"))?;
        let placed = place_atoms(&setup, &positions_of(&frame), frame.cell.as_ref(), None)
            .map_err(|e| anyhow::anyhow!("ils, frame {f}: {e}"))?;
        workers
            .submit_blocking(f, Arc::new(placed), &mut take)
            .map_err(anyhow::Error::msg)?;
    }
    workers.drain(&mut take).map_err(anyhow::Error::msg)?;
    let pmf = sums.pmf_kt(DEFAULT_MAX_ENERGY_KT);
    let map = setup.map;
    let grid = Grid3 {
        lattice: Lattice::axis_aligned(
            map.origin_angstrom.map(|x| x * BOHR_PER_ANGSTROM),
            map.spacing_angstrom * BOHR_PER_ANGSTROM,
            map.dims,
        ),
        values: pmf.iter().map(|&v| v as f32).collect(),
        description: format!(
            "ILS free energy of {} (kT, {} K), {} frames, {}, parameters from {}",
            setup.probe.name,
            DEFAULT_TEMPERATURE_KELVIN,
            sums.frames,
            setup.orientations.describe(),
            lj.source
        ),
    };
    Ok(Computed {
        grid,
        atoms,
        unit: "kT".to_string(),
    })
}
