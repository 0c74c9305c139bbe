//! The `System` and `Grid` classes of `orbitfield._native`: a loaded system (structure, frames,
//! wavefunctions) behind a lock, and a computed lattice with the atoms its cube file names.

use super::fields::{self, EspOptions, Placement};
use super::{OrbitfieldError, guard, py_error_chain};
use crate::io::System;
use crate::io::cube::CubeAtom;
use crate::model::Grid3;
use crate::model::units::{angstrom_from_bohr, angstrom_from_bohr3, bohr_from_angstrom3};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// Native-endian bytes of `values`.
pub(crate) fn f64_bytes(values: &[f64]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_ne_bytes()).collect()
}

/// `f64` values from native-endian bytes (a multiple of 8 long).
pub(crate) fn f64_from_bytes(what: &str, bytes: &[u8]) -> PyResult<Vec<f64>> {
    if !bytes.len().is_multiple_of(8) {
        return Err(OrbitfieldError::new_err(format!(
            "{what}: {} bytes is not a whole number of float64 values",
            bytes.len()
        )));
    }
    Ok(bytes
        .chunks_exact(8)
        .map(|c| {
            let mut b = [0u8; 8];
            b.copy_from_slice(c);
            f64::from_ne_bytes(b)
        })
        .collect())
}

/// A loaded system: the files (or arrays) that together form one structure with its frames and
/// wavefunctions.
#[pyclass(name = "System", module = "orbitfield._native", frozen)]
pub struct PySystem {
    inner: Arc<Mutex<System>>,
}

impl PySystem {
    pub(crate) fn new(system: System) -> PySystem {
        PySystem {
            inner: Arc::new(Mutex::new(system)),
        }
    }

    /// Runs `f` on the system with the GIL released.
    fn with<T: Send>(&self, py: Python<'_>, f: impl FnOnce(&mut System) -> anyhow::Result<T> + Send) -> PyResult<T> {
        let inner = Arc::clone(&self.inner);
        guard(py, move || {
            let mut system = inner
                .lock()
                .map_err(|_| anyhow::anyhow!("the system was left inconsistent by an earlier error"))?;
            f(&mut system)
        })
    }
}

/// Labels as Python strings.
fn labels(names: &[crate::model::Name8]) -> Vec<String> {
    names.iter().map(|n| n.as_str().to_string()).collect()
}

/// An optional per-atom column as float64.
fn floats(values: Option<&[f32]>) -> Option<Vec<f64>> {
    values.map(|v| v.iter().map(|&x| f64::from(x)).collect())
}

fn esp_options(units: Option<String>, temperature_kelvin: Option<f64>) -> EspOptions {
    EspOptions {
        units,
        temperature_kelvin,
    }
}

#[pymethods]
impl PySystem {
    /// Number of frames (of the trajectory, or of a wavefunction series).
    #[getter]
    fn n_frames(&self, py: Python<'_>) -> PyResult<usize> {
        self.with(py, |s| Ok(fields::n_frames(s)))
    }

    /// Number of atoms.
    #[getter]
    fn n_atoms(&self, py: Python<'_>) -> PyResult<usize> {
        self.with(py, |s| Ok(s.structure.len()))
    }

    /// Atomic numbers (0 where the element is unknown).
    #[getter]
    fn numbers(&self, py: Python<'_>) -> PyResult<Vec<u32>> {
        self.with(py, |s| {
            Ok(s.structure.elements.iter().map(|e| u32::from(e.number())).collect())
        })
    }

    /// Atom names.
    #[getter]
    fn names(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        self.with(py, |s| {
            Ok(s.structure.names.iter().map(|n| n.as_str().to_string()).collect())
        })
    }

    /// Residue names.
    #[getter]
    fn resnames(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        self.with(py, |s| Ok(labels(&s.structure.resnames)))
    }

    /// Residue numbers as the files give them.
    #[getter]
    fn resids(&self, py: Python<'_>) -> PyResult<Vec<i32>> {
        self.with(py, |s| Ok(s.structure.resids.clone()))
    }

    /// Chain identifiers ("" where the files have none).
    #[getter]
    fn chains(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        self.with(py, |s| Ok(labels(&s.structure.chains)))
    }

    /// Segment identifiers ("" where the files have none).
    #[getter]
    fn segids(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        self.with(py, |s| Ok(labels(&s.structure.segids)))
    }

    /// Force-field atom types, or None when the files carry none.
    #[getter]
    fn types(&self, py: Python<'_>) -> PyResult<Option<Vec<String>>> {
        self.with(py, |s| {
            Ok((!s.structure.types.is_empty()).then(|| labels(&s.structure.types)))
        })
    }

    /// Masses in dalton: the files' where they give them, else the element's standard mass.
    #[getter]
    fn masses(&self, py: Python<'_>) -> PyResult<Vec<f64>> {
        self.with(py, |s| {
            Ok((0..s.structure.len())
                .map(|i| f64::from(s.structure.mass_dalton(i)))
                .collect())
        })
    }

    /// Atomic radii in Angstrom (PQR, prmtop), or None when the files carry none.
    #[getter]
    fn radii(&self, py: Python<'_>) -> PyResult<Option<Vec<f64>>> {
        self.with(py, |s| Ok(floats(s.structure.radii_angstrom.as_deref())))
    }

    /// B-factors in Angstrom^2, or None when the files carry none.
    #[getter]
    fn bfactors(&self, py: Python<'_>) -> PyResult<Option<Vec<f64>>> {
        self.with(py, |s| Ok(floats(s.structure.bfactors.as_deref())))
    }

    /// Occupancies (0 to 1), or None when the files carry none.
    #[getter]
    fn occupancies(&self, py: Python<'_>) -> PyResult<Option<Vec<f64>>> {
        self.with(py, |s| Ok(floats(s.structure.occupancies.as_deref())))
    }

    /// Bonds as pairs of atom indices (the smaller first, sorted): the files' or guessed.
    #[getter]
    fn bonds(&self, py: Python<'_>) -> PyResult<Vec<(u32, u32)>> {
        self.with(py, |s| Ok(s.structure.bonds.iter().map(|&[a, b]| (a, b)).collect()))
    }

    /// Partial charges in e, or None when the files carry none.
    #[getter]
    fn charges(&self, py: Python<'_>) -> PyResult<Option<Vec<f64>>> {
        self.with(py, |s| {
            Ok(s.structure
                .charges_e
                .as_ref()
                .map(|q| q.iter().map(|&x| f64::from(x)).collect()))
        })
    }

    /// Each frame's total energy in hartree (NaN where the step printed none) when the frames are a
    /// QM log's steps (optimisation, scan, dynamics) or a series of wavefunctions with energies;
    /// None otherwise.
    #[getter]
    fn energies(&self, py: Python<'_>) -> PyResult<Option<Vec<f64>>> {
        self.with(py, |s| {
            Ok((!s.frame_energies_hartree.is_empty()).then(|| s.frame_energies_hartree.clone()))
        })
    }

    /// The orbitals of frame `frame`'s wavefunction (a series' or a log's step's) in the spin
    /// channel `spin` ("alpha" or "beta"; a restricted wavefunction's are the same): (energies in
    /// hartree, occupations), in the file's order; None without a wavefunction.
    #[allow(clippy::type_complexity)]
    #[pyo3(signature = (spin = "alpha", frame = 0))]
    fn orbitals(&self, py: Python<'_>, spin: &str, frame: usize) -> PyResult<Option<(Vec<f64>, Vec<f64>)>> {
        let spin = match spin.to_ascii_lowercase().as_str() {
            "alpha" | "a" => crate::model::Spin::Alpha,
            "beta" | "b" => crate::model::Spin::Beta,
            other => {
                return Err(OrbitfieldError::new_err(format!("spin '{other}': alpha or beta")));
            }
        };
        self.with(py, move |s| {
            if s.wavefunctions.is_empty() {
                return Ok(None);
            }
            let wf = s.wavefunction_of_frame(frame).map_err(anyhow::Error::msg)?;
            Ok(wf
                .orbitals(spin)
                .map(|set| (set.energies_hartree.clone(), set.occupations.clone())))
        })
    }

    /// Number of wavefunctions (one per frame of a series, one for a single file, else zero).
    #[getter]
    fn n_wavefunctions(&self, py: Python<'_>) -> PyResult<usize> {
        self.with(py, |s| Ok(s.wavefunctions.len()))
    }

    /// What the readers noticed, one line each.
    #[getter]
    fn warnings(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        self.with(py, |s| Ok(s.warnings.clone()))
    }

    /// Frame `index`: (positions as bytes of f64 [n_atoms, 3] in Angstrom, unit cell lengths and
    /// angles or None, time in ps or None).
    #[allow(clippy::type_complexity)]
    fn frame_data<'py>(
        &self,
        py: Python<'py>,
        index: usize,
    ) -> PyResult<(Bound<'py, PyBytes>, Option<([f64; 3], [f64; 3])>, Option<f64>)> {
        let (bytes, cell, time) = self.with(py, move |s| {
            if s.trajectory.n_frames() == 0 && !s.wavefunctions.is_empty() {
                let wf = s
                    .wavefunctions
                    .get(index)
                    .with_context_text(index, s.wavefunctions.len())?;
                let xyz: Vec<f64> = wf
                    .atoms
                    .iter()
                    .flat_map(|a| angstrom_from_bohr3(a.position_bohr))
                    .collect();
                return Ok((f64_bytes(&xyz), None, None));
            }
            let frame = fields::read_frame(s, index)?;
            let xyz: Vec<f64> = frame.positions_angstrom.iter().flat_map(|p| p.map(f64::from)).collect();
            let cell = frame.cell.map(|c| (c.lengths_angstrom, c.angles_degree));
            Ok((f64_bytes(&xyz), cell, frame.time_ps))
        })?;
        Ok((PyBytes::new(py, &bytes), cell, time))
    }

    /// The field on a lattice: placed around the atoms (`spacing`, `padding`), explicit (`origin`,
    /// `dims`, `spacing`) or that of a cube/DX file (`like`).
    /// `focus` (Poisson-Boltzmann only): the chain of lattices of `grid pb --focus`, with its
    /// `fine_*`/`coarse_*` choices.
    #[pyo3(signature = (field, spacing, padding, frame=0, device="auto", origin=None, dims=None, like=None, units=None, temperature=None, focus=false, fine_center=None, fine_length=None, fine_around=None, coarse_center=None, coarse_length=None, coarse_spacing=None))]
    #[allow(clippy::too_many_arguments)]
    fn grid(
        &self,
        py: Python<'_>,
        field: String,
        spacing: f64,
        padding: f64,
        frame: usize,
        device: &str,
        origin: Option<[f64; 3]>,
        dims: Option<[usize; 3]>,
        like: Option<PathBuf>,
        units: Option<String>,
        temperature: Option<f64>,
        focus: bool,
        fine_center: Option<[f64; 3]>,
        fine_length: Option<Vec<f64>>,
        fine_around: Option<String>,
        coarse_center: Option<[f64; 3]>,
        coarse_length: Option<Vec<f64>>,
        coarse_spacing: Option<f64>,
    ) -> PyResult<PyGrid> {
        let options = fields::PbFocus {
            fine_center,
            fine_length,
            fine_around,
            coarse_center,
            coarse_length,
            coarse_spacing,
        };
        let given = options.fine_center.is_some()
            || options.fine_length.is_some()
            || options.fine_around.is_some()
            || options.coarse_center.is_some()
            || options.coarse_length.is_some()
            || options.coarse_spacing.is_some();
        if given && !focus {
            return Err(OrbitfieldError::new_err(
                "fine_center, fine_length, fine_around, coarse_center, coarse_length and coarse_spacing take focus=True",
            ));
        }
        let focus = focus.then_some(options);
        let device = fields::device(device).map_err(|e| py_error_chain(&e))?;
        let placement = match (like, origin, dims) {
            (Some(path), None, None) => Placement::Like(path),
            (Some(_), _, _) => {
                return Err(OrbitfieldError::new_err(
                    "like= takes the whole lattice: leave out origin and dims",
                ));
            }
            (None, Some(origin_angstrom), Some(dims)) => Placement::Explicit {
                origin_angstrom,
                dims,
                spacing_angstrom: spacing,
            },
            (None, None, None) => Placement::AroundAtoms {
                spacing_angstrom: spacing,
                padding_angstrom: padding,
            },
            _ => return Err(OrbitfieldError::new_err("origin and dims go together")),
        };
        let esp = esp_options(units, temperature);
        let computed = self.with(py, move |s| {
            fields::grid(s, &field, frame, &placement, device, &esp, focus.as_ref())
        })?;
        Ok(PyGrid {
            grid: computed.grid,
            atoms: computed.atoms,
            unit: computed.unit,
        })
    }

    /// The implicit ligand sampling map (kT) of the probe `field` names (`ils:o2`, ...) over
    /// `frames` (all without), the Lennard-Jones parameters read from `paths` (the files the
    /// system was loaded from), on a lattice around the atoms or explicit.
    #[pyo3(signature = (field, paths, spacing, padding=None, frames=None, device="auto", origin=None, dims=None))]
    #[allow(clippy::too_many_arguments)]
    fn ils(
        &self,
        py: Python<'_>,
        field: String,
        paths: Vec<PathBuf>,
        spacing: f64,
        padding: Option<f64>,
        frames: Option<Vec<usize>>,
        device: &str,
        origin: Option<[f64; 3]>,
        dims: Option<[usize; 3]>,
    ) -> PyResult<PyGrid> {
        let device = fields::device(device).map_err(|e| py_error_chain(&e))?;
        let probe = match super::ils::probe_of(&field) {
            Some(p) => p.map_err(|e| py_error_chain(&e))?,
            None => return Err(OrbitfieldError::new_err(format!("{field}: not an ils:PROBE field"))),
        };
        let placement = match (origin, dims) {
            (Some(origin_angstrom), Some(dims)) => Placement::Explicit {
                origin_angstrom,
                dims,
                spacing_angstrom: spacing,
            },
            (None, None) => Placement::AroundAtoms {
                spacing_angstrom: spacing,
                padding_angstrom: padding.unwrap_or(super::ils::ILS_PADDING_ANGSTROM),
            },
            _ => return Err(OrbitfieldError::new_err("origin and dims go together")),
        };
        let computed = self.with(py, move |s| {
            super::ils::ils_grid(s, &paths, probe, frames, &placement, device)
        })?;
        Ok(PyGrid {
            grid: computed.grid,
            atoms: computed.atoms,
            unit: computed.unit,
        })
    }

    /// The field at points given as bytes of f64 [n, 3] in Angstrom; bytes of f64 [n] back.
    #[pyo3(signature = (field, xyz_angstrom, frame=0, units=None, temperature=None))]
    fn points<'py>(
        &self,
        py: Python<'py>,
        field: String,
        xyz_angstrom: &[u8],
        frame: usize,
        units: Option<String>,
        temperature: Option<f64>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let xyz = f64_from_bytes("points", xyz_angstrom)?;
        if !xyz.len().is_multiple_of(3) {
            return Err(OrbitfieldError::new_err("points: expected an array of shape (n, 3)"));
        }
        let points_bohr: Vec<[f64; 3]> = xyz
            .chunks_exact(3)
            .map(|c| bohr_from_angstrom3([c[0], c[1], c[2]]))
            .collect();
        let esp = esp_options(units, temperature);
        let values = self.with(py, move |s| fields::points(s, &field, frame, &points_bohr, &esp))?;
        Ok(PyBytes::new(py, &f64_bytes(&values)))
    }

    /// The radial distribution function g(r) between two selections (selection language) over
    /// `frames` (all without), on the CPU: (bin centres in Angstrom, g, cumulative count).
    #[pyo3(signature = (sel1, sel2, r_max=10.0, bins=200, frames=None, exclude_same_residue=false))]
    #[allow(clippy::too_many_arguments, clippy::type_complexity)]
    fn rdf(
        &self,
        py: Python<'_>,
        sel1: String,
        sel2: String,
        r_max: f64,
        bins: usize,
        frames: Option<Vec<usize>>,
        exclude_same_residue: bool,
    ) -> PyResult<(Vec<f64>, Vec<f64>, Vec<f64>)> {
        self.with(py, move |s| {
            fields::rdf(s, &sel1, &sel2, r_max, bins, frames, exclude_same_residue)
        })
    }

    /// Hydrogen bonds among `sel` at `frame` (`analysis::hbonds`): rows (donor, hydrogen or -1,
    /// acceptor), 0-based atom indices.
    #[pyo3(signature = (sel, frame=0, distance=3.0, angle=150.0, heavy_distance=3.5))]
    fn hbonds(
        &self,
        py: Python<'_>,
        sel: String,
        frame: usize,
        distance: f32,
        angle: f32,
        heavy_distance: f32,
    ) -> PyResult<Vec<[i64; 3]>> {
        let criteria = crate::analysis::hbonds::HBondCriteria {
            distance_angstrom: distance,
            angle_degrees: angle,
            heavy_distance_angstrom: heavy_distance,
        };
        self.with(py, move |s| super::analysis::hbonds(s, &sel, frame, criteria))
    }

    /// The RMSD of `sel` from frame `reference` at each of `frames` (all without), superposed
    /// first when `fit`.
    #[pyo3(signature = (sel, reference=0, fit=true, frames=None))]
    fn rmsd(
        &self,
        py: Python<'_>,
        sel: String,
        reference: usize,
        fit: bool,
        frames: Option<Vec<usize>>,
    ) -> PyResult<Vec<f64>> {
        self.with(py, move |s| super::analysis::rmsd(s, &sel, reference, fit, frames))
    }

    /// The 0-based indices of the atoms `sel` picks at `frame`.
    #[pyo3(signature = (sel, frame=0))]
    fn select(&self, py: Python<'_>, sel: String, frame: usize) -> PyResult<Vec<u32>> {
        self.with(py, move |s| super::analysis::select(s, &sel, frame))
    }

    /// The mass-weighted radius of gyration (Angstrom) of `sel` at each of `frames` (all without).
    #[pyo3(signature = (sel, frames=None))]
    fn rgyr(&self, py: Python<'_>, sel: String, frames: Option<Vec<usize>>) -> PyResult<Vec<f64>> {
        self.with(py, move |s| super::analysis::rgyr(s, &sel, frames))
    }

    /// The solvent-accessible surface area (Å²) of each atom of `sel` at each of `frames`.
    #[pyo3(signature = (sel, frames=None, probe=1.4, n_points=960))]
    fn sasa(
        &self,
        py: Python<'_>,
        sel: String,
        frames: Option<Vec<usize>>,
        probe: f64,
        n_points: usize,
    ) -> PyResult<Vec<Vec<f64>>> {
        self.with(py, move |s| super::analysis::sasa(s, &sel, frames, probe, n_points))
    }

    /// DSSP secondary structure of the protein residues at `frame`, one letter per residue
    /// (H G I E B T S P, '-' for coil).
    #[pyo3(signature = (frame=0))]
    fn dssp(&self, py: Python<'_>, frame: usize) -> PyResult<String> {
        self.with(py, move |s| {
            let coords = fields::read_frame(s, frame)?;
            let backbone = crate::analysis::dssp::ProteinBackbone::new(&s.structure);
            if backbone.is_empty() {
                anyhow::bail!("dssp: the structure has no protein residues with a complete backbone");
            }
            let ss = backbone.assign(
                &coords.positions_angstrom,
                &crate::analysis::dssp::DsspOptions::default(),
            );
            Ok(crate::analysis::dssp::codes(&ss))
        })
    }
}

/// `Option::with_context` for a wavefunction index.
trait WavefunctionIndex<T> {
    fn with_context_text(self, index: usize, n: usize) -> anyhow::Result<T>;
}

impl<T> WavefunctionIndex<T> for Option<T> {
    fn with_context_text(self, index: usize, n: usize) -> anyhow::Result<T> {
        self.ok_or_else(|| anyhow::anyhow!("frame {index} requested, the system holds {n} wavefunction(s)"))
    }
}

/// A field on a lattice.
#[pyclass(name = "Grid", module = "orbitfield._native", frozen)]
pub struct PyGrid {
    grid: Grid3,
    atoms: Vec<CubeAtom>,
    unit: String,
}

#[pymethods]
impl PyGrid {
    /// Points along the three axes.
    #[getter]
    fn dims(&self) -> [usize; 3] {
        self.grid.lattice.dims
    }

    /// The first point, bohr.
    #[getter]
    fn origin_bohr(&self) -> [f64; 3] {
        self.grid.lattice.origin_bohr
    }

    /// The step vectors, bohr (row k: from point i to point i+1 along axis k).
    #[getter]
    fn axes_bohr(&self) -> [[f64; 3]; 3] {
        self.grid.lattice.steps_bohr
    }

    /// The first point, Angstrom.
    #[getter]
    fn origin_angstrom(&self) -> [f64; 3] {
        angstrom_from_bohr3(self.grid.lattice.origin_bohr)
    }

    /// The step vectors, Angstrom.
    #[getter]
    fn axes_angstrom(&self) -> [[f64; 3]; 3] {
        self.grid.lattice.steps_bohr.map(|v| v.map(angstrom_from_bohr))
    }

    /// What the values are.
    #[getter]
    fn description(&self) -> String {
        self.grid.description.clone()
    }

    /// The unit of the values.
    #[getter]
    fn unit(&self) -> String {
        self.unit.clone()
    }

    /// The values as bytes of f64, x fastest.
    fn values_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let values: Vec<f64> = self.grid.values.iter().map(|&v| f64::from(v)).collect();
        PyBytes::new(py, &f64_bytes(&values))
    }

    /// Writes the lattice as a Gaussian cube (.cube, .cub) or OpenDX (.dx) file.
    fn write(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        let dx = if name.ends_with(".dx") {
            true
        } else if name.ends_with(".cube") || name.ends_with(".cub") {
            false
        } else {
            return Err(OrbitfieldError::new_err(format!(
                "{}: expected a file name ending in .cube or .dx",
                path.display()
            )));
        };
        let (grid, atoms) = (&self.grid, &self.atoms);
        guard(py, move || {
            let written = if dx {
                crate::io::dx::write(&path, grid)
            } else {
                crate::io::cube::write(&path, grid, atoms)
            };
            written.map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))
        })
    }
}
