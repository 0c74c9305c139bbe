//! The wavefunction conformance corpus (`tests/data/conformance`): its manifest and how orbitfield
//! reads each file. Shared by `tests/conformance.rs` (CPU against independent references) and
//! `tests/gpu_conformance.rs` (CUDA engine against the CPU engine).
#![allow(dead_code)]

use orbitfield::io::{self, fchk, mkl, molden};
use orbitfield::model::Wavefunction;
use orbitfield::model::wavefunction::DensityMatrix;
use serde::Deserialize;
use std::path::{Path, PathBuf};

#[derive(Deserialize)]
pub struct Manifest {
    pub files: Vec<Entry>,
}

#[derive(Deserialize)]
pub struct Entry {
    pub file: String,
    pub format: String,
    pub program: String,
    pub version: String,
    pub method: String,
    #[serde(default)]
    pub orthonormality: Option<f64>,
    /// A looser limit for the reference columns of files printed with few digits.
    #[serde(default)]
    pub tolerance: Option<f64>,
    #[serde(default)]
    pub rerun: Option<serde_json::Value>,
    #[serde(default = "yes")]
    pub iodata: bool,
}

fn yes() -> bool {
    true
}

pub fn corpus() -> PathBuf {
    // ORBITFIELD_TEST_ROOT: where the repository's data lies when the test runs on another machine.
    std::env::var_os("ORBITFIELD_TEST_ROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf())
        .join("tests/data/conformance")
}

pub fn manifest() -> Manifest {
    let text = std::fs::read_to_string(corpus().join("manifest.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// A file as orbitfield reads it.
pub struct Read {
    pub wf: Wavefunction,
    pub total_density: Option<DensityMatrix>,
    pub warnings: Vec<String>,
}

pub fn read(path: &Path, format: &str) -> Result<Read, String> {
    let bytes = io::read_bytes(path).map_err(|e| e.to_string())?;
    match format {
        "molden" => molden::read(path, &bytes)
            .map(|m| Read {
                wf: m.wavefunctions.into_iter().next().unwrap(),
                total_density: None,
                warnings: m.warnings,
            })
            .map_err(|e| e.to_string()),
        "fchk" => fchk::read_full(path, &bytes)
            .map(|f| Read {
                wf: f.wavefunction,
                total_density: f.total_density,
                warnings: f.warnings,
            })
            .map_err(|e| e.to_string()),
        "mkl" => mkl::read(path, &bytes)
            .map(|m| Read {
                wf: m.wavefunction,
                total_density: None,
                warnings: m.warnings,
            })
            .map_err(|e| e.to_string()),
        other => Err(format!("unknown format {other}")),
    }
}
