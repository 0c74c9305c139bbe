//! DCD reader.
use super::ReadError;
use crate::model::{Frame, FrameSource};
use std::path::Path;

/// A DCD file opened for random access.
pub struct DcdReader {
    n_atoms: usize,
}

impl DcdReader {
    pub fn open(path: &Path) -> Result<DcdReader, ReadError> {
        Err(ReadError::file(path, "DCD reading is not implemented yet"))
    }
}

impl FrameSource for DcdReader {
    fn n_atoms(&self) -> usize {
        self.n_atoms
    }
    fn n_frames(&self) -> usize {
        0
    }
    fn read_frame(&mut self, _index: usize, _out: &mut Frame) -> Result<(), ReadError> {
        Err(ReadError::file(Path::new("dcd"), "not implemented"))
    }
}
