//! OpenDX reader and writer.
use super::ReadError;
use crate::model::Grid3;
use std::path::Path;

pub fn read(path: &Path, _bytes: &[u8]) -> Result<Grid3, ReadError> {
    Err(ReadError::file(path, "DX reading is not implemented yet"))
}
