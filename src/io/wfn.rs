//! AIM wfn and wfx readers.
use super::ReadError;
use crate::model::Wavefunction;
use std::path::Path;

pub fn read_wfn(path: &Path, _bytes: &[u8]) -> Result<Wavefunction, ReadError> {
    Err(ReadError::file(path, "wfn reading is not implemented yet"))
}

pub fn read_wfx(path: &Path, _bytes: &[u8]) -> Result<Wavefunction, ReadError> {
    Err(ReadError::file(path, "wfx reading is not implemented yet"))
}
