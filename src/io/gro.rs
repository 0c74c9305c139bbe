//! GRO reader.
use super::ReadError;
use super::load::Parsed;
use std::path::Path;

/// Reads a GRO file.
pub fn read(path: &Path, _bytes: &[u8]) -> Result<Parsed, ReadError> {
    Err(ReadError::file(path, "GRO reading is not implemented yet"))
}
