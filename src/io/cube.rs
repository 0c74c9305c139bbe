//! Gaussian cube reader and writer.
use super::ReadError;
use crate::model::{Frame, Grid3, Structure};
use std::path::Path;

/// A cube file: its atoms and one grid per field (several for `-N` multi-orbital headers).
pub struct CubeFile {
    pub grids: Vec<Grid3>,
}

impl CubeFile {
    pub fn structure_and_frame(&self) -> (Structure, Frame) {
        (Structure::default(), Frame::default())
    }
}

pub fn read(path: &Path, _bytes: &[u8]) -> Result<CubeFile, ReadError> {
    Err(ReadError::file(path, "cube reading is not implemented yet"))
}
