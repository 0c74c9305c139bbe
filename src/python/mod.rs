//! The Python extension module `orbitfield._native` (cargo feature `python`): a front end beside the
//! command line. It owns the boundary only: Python values in, the library's readers and engines
//! called as the `grid` and `points` commands call them, numbers and exceptions out. The Python
//! package in `python/orbitfield` wraps it (numpy arrays, the PySCF and MDAnalysis adapters).
//!
//! Conventions at the boundary:
//! - Arrays travel as `bytes` of native-endian `f64` (positions, values) or `f32` (MD frames); the
//!   Python side wraps them in numpy arrays without another copy.
//! - Every error is an `orbitfield.OrbitfieldError` (a `ValueError`) carrying the library's message;
//!   a panic is caught at the boundary ([`guard`]) and raised as that error too.
//! - Computations release the GIL.
//!
//! [`system`] holds the `System` class (files, frames, fields on lattices and at points),
//! [`adapters`] makes systems from arrays (wavefunctions from PySCF, MD frames from MDAnalysis).

mod adapters;
mod analysis;
mod fields;
mod ils;
mod system;

use pyo3::prelude::*;
use std::panic::AssertUnwindSafe;

pyo3::create_exception!(
    _native,
    OrbitfieldError,
    pyo3::exceptions::PyValueError,
    "An input orbitfield cannot use: a file it cannot read, a field it cannot compute, a bad argument."
);

/// The Python exception of an error, with its chain of causes as the command line prints it.
pub(crate) fn py_error_chain(error: &anyhow::Error) -> PyErr {
    OrbitfieldError::new_err(format!("{error:#}"))
}

/// Runs `f` with the GIL released; a panic inside becomes an `OrbitfieldError` naming it.
pub(crate) fn guard<T, F>(py: Python<'_>, f: F) -> PyResult<T>
where
    F: FnOnce() -> anyhow::Result<T> + Send,
    T: Send,
{
    let outcome = py.detach(move || std::panic::catch_unwind(AssertUnwindSafe(f)));
    match outcome {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(e)) => Err(py_error_chain(&e)),
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown cause".to_string());
            Err(OrbitfieldError::new_err(format!(
                "internal error (please report): {what}"
            )))
        }
    }
}

/// Reads the files that together form one system (as `orbitfield info FILE...` does); with
/// `whole`, the molecules are made whole across a periodic box in every frame, as the viewer and
/// `orbitfield grid` do (a note among the warnings says when the file had any in pieces).
#[pyfunction]
#[pyo3(signature = (paths, whole=true))]
fn load(py: Python<'_>, paths: Vec<std::path::PathBuf>, whole: bool) -> PyResult<system::PySystem> {
    if paths.is_empty() {
        return Err(OrbitfieldError::new_err("load needs at least one file"));
    }
    let loaded = guard(py, move || {
        let mut system = crate::io::load(&paths)?;
        if whole {
            let n = system.structure.len();
            if let Some(note) = crate::io::load::make_whole(&system.structure.bonds, n, &mut system.trajectory) {
                system
                    .warnings
                    .push(format!("{note} (whole=False keeps the frames as the file wrote them)"));
            }
        }
        Ok(system)
    })?;
    Ok(system::PySystem::new(loaded))
}

/// The exponents (a, b, c) of x^a y^b z^c of a Cartesian shell's functions, in the order orbitfield
/// stores them (Molden order).
#[pyfunction]
fn cartesian_powers(l: u8) -> PyResult<Vec<[u32; 3]>> {
    if l > crate::model::basis::MAX_L {
        return Err(OrbitfieldError::new_err(format!(
            "angular momentum {l} is above the highest supported ({})",
            crate::model::basis::MAX_L
        )));
    }
    Ok(crate::model::basis::cartesian_powers(l)
        .into_iter()
        .map(|p| p.map(u32::from))
        .collect())
}

/// Runs commands of the command language without a window (`orbitfield run --headless`), their
/// relative paths taken from `base_dir` (the current folder by default); returns what the commands
/// reported (measurements, files written, help text), in order. A failing command raises
/// `OrbitfieldError` naming its line and column; the commands before it have been carried out.
#[cfg(feature = "gui")]
#[pyfunction]
#[pyo3(signature = (commands, base_dir=None))]
fn run(py: Python<'_>, commands: String, base_dir: Option<std::path::PathBuf>) -> PyResult<Vec<String>> {
    guard(py, move || {
        let base = match base_dir {
            Some(dir) => dir,
            None => std::env::current_dir()?,
        };
        crate::script::run_text(&commands, &base, crate::script::RunMode::Headless)
            .map(|report| report.output)
            .map_err(|e| anyhow::anyhow!("{e}"))
    })
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // Selections know secondary structure (`helix`, `sheet`) through DSSP.
    crate::analysis::dssp::use_for_selections();
    m.add("OrbitfieldError", m.py().get_type::<OrbitfieldError>())?;
    m.add(
        "DEFAULT_SPACING_ANGSTROM",
        crate::model::field::DEFAULT_SPACING_ANGSTROM,
    )?;
    m.add(
        "DEFAULT_PADDING_ANGSTROM",
        crate::model::field::DEFAULT_PADDING_ANGSTROM,
    )?;
    m.add("ANGSTROM_PER_BOHR", crate::model::units::ANGSTROM_PER_BOHR)?;
    m.add_function(wrap_pyfunction!(load, m)?)?;
    m.add_function(wrap_pyfunction!(cartesian_powers, m)?)?;
    #[cfg(feature = "gui")]
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(adapters::wavefunction_system, m)?)?;
    m.add_function(wrap_pyfunction!(adapters::md_system, m)?)?;
    m.add_class::<system::PySystem>()?;
    m.add_class::<system::PyGrid>()?;
    Ok(())
}
