//! Gaussian formatted checkpoint reader.
use super::ReadError;
use crate::model::Wavefunction;
use std::path::Path;

pub fn read(path: &Path, _bytes: &[u8]) -> Result<Wavefunction, ReadError> {
    Err(ReadError::file(path, "fchk reading is not implemented yet"))
}
