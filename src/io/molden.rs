//! Molden reader.
use super::ReadError;
use crate::model::Wavefunction;
use std::path::Path;

/// A Molden file: one wavefunction, or several for multi-geometry files.
pub struct MoldenFile {
    pub wavefunctions: Vec<Wavefunction>,
    pub warnings: Vec<String>,
}

pub fn read(path: &Path, _bytes: &[u8]) -> Result<MoldenFile, ReadError> {
    Err(ReadError::file(path, "Molden reading is not implemented yet"))
}
