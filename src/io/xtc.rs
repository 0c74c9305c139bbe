//! XTC reader.
use super::ReadError;
use crate::model::{Frame, FrameSource};
use std::path::Path;

/// A XTC file opened for random access.
pub struct XtcReader {
    n_atoms: usize,
}

impl XtcReader {
    pub fn open(path: &Path) -> Result<XtcReader, ReadError> {
        Err(ReadError::file(path, "XTC reading is not implemented yet"))
    }
}

impl FrameSource for XtcReader {
    fn n_atoms(&self) -> usize {
        self.n_atoms
    }
    fn n_frames(&self) -> usize {
        0
    }
    fn read_frame(&mut self, _index: usize, _out: &mut Frame) -> Result<(), ReadError> {
        Err(ReadError::file(Path::new("xtc"), "not implemented"))
    }
}
