//! PDB and PQR readers.
use super::ReadError;
use super::load::Parsed;
use std::path::Path;

/// Reads a PDB file (multi-model files give one frame per model).
pub fn read(path: &Path, _bytes: &[u8]) -> Result<Parsed, ReadError> {
    Err(ReadError::file(path, "PDB reading is not implemented yet"))
}

/// Reads a PQR file (charges and radii).
pub fn read_pqr(path: &Path, _bytes: &[u8]) -> Result<Parsed, ReadError> {
    Err(ReadError::file(path, "PQR reading is not implemented yet"))
}
