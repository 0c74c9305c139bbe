//! AMBER NetCDF output: the encoding of `io::amber::NetcdfEncoder` (64-bit offset NetCDF-3, float
//! coordinates in Angstrom, float time in ps, double `cell_lengths`/`cell_angles` when the first
//! frame has a box), written through `io::write`'s atomic file. Read back by `io::amber` and by
//! MDAnalysis in the tests.

use super::FrameWriter;
use crate::io::amber::NetcdfEncoder;
use crate::model::{Frame, Structure};
use std::io::{Seek, SeekFrom, Write};
/// The header is written with the first frame, which decides whether the file has a box.
#[derive(Default)]
pub struct NcWriter {
    encoder: Option<NetcdfEncoder>,
    frames: u64,
    buf: Vec<u8>,
}

impl FrameWriter for NcWriter {
    fn write_frame(&mut self, out: &mut dyn Write, _atoms: &Structure, frame: &Frame) -> std::io::Result<()> {
        let encoder = match &self.encoder {
            Some(e) => e,
            None => {
                let e = NetcdfEncoder::new(frame.positions_angstrom.len(), frame.cell.is_some())?;
                out.write_all(&e.header())?;
                self.encoder.insert(e)
            }
        };
        // Frames without a time get 0 ps, as in TRR output.
        let time_ps = frame.time_ps.unwrap_or(0.0);
        encoder.record(self.frames, frame, time_ps, &mut self.buf)?;
        out.write_all(&self.buf)?;
        self.frames += 1;
        Ok(())
    }

    fn finish(&mut self, out: &mut std::fs::File, _n_frames: usize) -> std::io::Result<()> {
        if self.encoder.is_none() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "no frames to write",
            ));
        }
        out.seek(SeekFrom::Start(NetcdfEncoder::NUMRECS_OFFSET))?;
        out.write_all(&NetcdfEncoder::numrecs_bytes(self.frames))?;
        out.seek(SeekFrom::End(0))?;
        Ok(())
    }
}
