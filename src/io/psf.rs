//! PSF reader.
use super::ReadError;
use super::load::Parsed;
use std::path::Path;

/// Reads a PSF file.
pub fn read(path: &Path, _bytes: &[u8]) -> Result<Parsed, ReadError> {
    Err(ReadError::file(path, "PSF reading is not implemented yet"))
}
