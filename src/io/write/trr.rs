//! TRR output: single-precision frames with the box and coordinates (nm), the header GROMACS
//! writes (`GMX_trn_file`, block sizes, atom count, step, time). Called through `io::write`; read
//! back by `io::trr` and by MDAnalysis in the tests.

use super::{FrameWriter, nm};
use crate::model::{Frame, Structure};
use std::io::Write;

#[derive(Default)]
pub struct TrrWriter {
    frames: usize,
}

impl FrameWriter for TrrWriter {
    fn write_frame(&mut self, out: &mut dyn Write, _atoms: &Structure, frame: &Frame) -> std::io::Result<()> {
        let n = frame.positions_angstrom.len();
        let x_bytes = i32::try_from(12 * n).map_err(|_| std::io::Error::other("too many atoms for a TRR frame"))?;
        let box_bytes = if frame.cell.is_some() { 36 } else { 0 };
        let mut w = |v: i32| out.write_all(&v.to_be_bytes());
        w(1993)?;
        w(13)?;
        w(12)?;
        out.write_all(b"GMX_trn_file")?;
        let step = frame.step.unwrap_or(self.frames as i64);
        for v in [0, 0, box_bytes, 0, 0, 0, 0, x_bytes, 0, 0, n as i32, step as i32, 0] {
            out.write_all(&v.to_be_bytes())?;
        }
        out.write_all(&(frame.time_ps.unwrap_or(0.0) as f32).to_be_bytes())?;
        out.write_all(&0f32.to_be_bytes())?;
        if let Some(c) = frame.cell {
            for v in c.matrix_angstrom() {
                for x in v {
                    out.write_all(&((x / crate::model::units::ANGSTROM_PER_NANOMETRE) as f32).to_be_bytes())?;
                }
            }
        }
        for p in &frame.positions_angstrom {
            for x in nm(*p) {
                out.write_all(&(x as f32).to_be_bytes())?;
            }
        }
        self.frames += 1;
        Ok(())
    }

    fn finish(&mut self, _out: &mut std::fs::File, _n_frames: usize) -> std::io::Result<()> {
        Ok(())
    }
}
