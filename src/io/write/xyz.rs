//! XYZ output: atom count, a comment line (time and step), `element x y z` in Angstrom, one block
//! per frame. Called through `io::write`.

use super::FrameWriter;
use crate::model::{Frame, Structure};
use std::io::Write;

pub struct XyzWriter;

impl FrameWriter for XyzWriter {
    fn write_frame(&mut self, out: &mut dyn Write, atoms: &Structure, frame: &Frame) -> std::io::Result<()> {
        writeln!(out, "{}", frame.positions_angstrom.len())?;
        match (frame.step, frame.time_ps) {
            (Some(s), Some(t)) => writeln!(out, "step {s} time {t} ps")?,
            (Some(s), None) => writeln!(out, "step {s}")?,
            _ => writeln!(out, "written by orbitfield")?,
        }
        for (i, p) in frame.positions_angstrom.iter().enumerate() {
            let symbol = match atoms.elements.get(i).map(|e| e.symbol()) {
                Some(s) if s != "X" => s,
                _ => atoms.names.get(i).map_or("X", |n| n.as_str()),
            };
            writeln!(out, "{symbol:<2} {:12.5} {:12.5} {:12.5}", p[0], p[1], p[2])?;
        }
        Ok(())
    }

    fn finish(&mut self, _out: &mut std::fs::File, _n_frames: usize) -> std::io::Result<()> {
        Ok(())
    }
}
