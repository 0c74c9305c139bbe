//! The test kit: fixtures shared by the tests, the criterion benches and the developer benchmark
//! harness (`benches/harness`), so each is written once. Included with
//! `#[path = "../tests/kit/mod.rs"] mod kit;` (or `kit/mod.rs` from `tests/`); every function returns
//! its error as text, for the caller to unwrap (tests, benches) or to pass on (the harness).

#![allow(dead_code)]

use orbitfield::model::{Lattice, Wavefunction};
use std::path::{Path, PathBuf};

/// A file of the repository's test data (`tests/data/...`), wherever the program runs from.
pub fn data(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(relative)
}

/// Threonine RHF/6-31G* (Cartesian d), written by PySCF 2.14.0: `tests/data/engine/`.
pub fn threonine() -> Result<Wavefunction, String> {
    let path = data("engine/threonine_hf_631gs_cart.molden");
    let system = orbitfield::io::load(std::slice::from_ref(&path)).map_err(|e| e.to_string())?;
    system
        .wavefunctions
        .into_iter()
        .next()
        .ok_or_else(|| format!("{}: no wavefunction", path.display()))
}

/// PySCF cubegen's lattice: `n` points per axis over the atoms' box plus 3 bohr on every side.
pub fn cube_lattice(wf: &Wavefunction, n: usize) -> Lattice {
    let mut lo = [f64::MAX; 3];
    let mut hi = [f64::MIN; 3];
    for a in &wf.atoms {
        for k in 0..3 {
            lo[k] = lo[k].min(a.position_bohr[k] - 3.0);
            hi[k] = hi[k].max(a.position_bohr[k] + 3.0);
        }
    }
    let step = |k: usize| (hi[k] - lo[k]) / (n as f64 - 1.0);
    Lattice {
        origin_bohr: lo,
        steps_bohr: [[step(0), 0.0, 0.0], [0.0, step(1), 0.0], [0.0, 0.0, step(2)]],
        dims: [n, n, n],
    }
}
