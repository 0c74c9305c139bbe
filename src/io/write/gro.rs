//! GRO output: one block per frame (title with time and step, atom count, fixed-column atom
//! lines in nm, the box line). Called through `io::write`.

use super::{FrameWriter, nm};
use crate::model::{Frame, Structure};
use std::io::Write;

pub struct GroWriter;

impl FrameWriter for GroWriter {
    fn write_frame(&mut self, out: &mut dyn Write, atoms: &Structure, frame: &Frame) -> std::io::Result<()> {
        let title = if atoms.title.trim().is_empty() {
            "written by orbitfield"
        } else {
            atoms.title.trim()
        };
        write!(out, "{}", title.lines().next().unwrap_or(""))?;
        if let Some(t) = frame.time_ps {
            write!(out, " t= {t:.5}")?;
        }
        if let Some(s) = frame.step {
            write!(out, " step= {s}")?;
        }
        writeln!(out)?;
        writeln!(out, "{:5}", frame.positions_angstrom.len())?;
        for (i, p) in frame.positions_angstrom.iter().enumerate() {
            let name = atoms.names.get(i).map_or("", |n| n.as_str());
            let resname = atoms.resnames.get(i).map_or("", |n| n.as_str());
            let resid = atoms.resids.get(i).copied().unwrap_or(1).rem_euclid(100000);
            let x = nm(*p);
            writeln!(
                out,
                "{resid:>5}{:<5}{:>5}{:>5}{:8.3}{:8.3}{:8.3}",
                resname.get(..5).unwrap_or(resname),
                name.get(..5).unwrap_or(name),
                (i + 1) % 100000,
                x[0],
                x[1],
                x[2]
            )?;
        }
        match frame.cell {
            Some(c) => {
                let m = c
                    .matrix_angstrom()
                    .map(|v| v.map(|x| x / crate::model::units::ANGSTROM_PER_NANOMETRE));
                write!(out, "{:10.5}{:10.5}{:10.5}", m[0][0], m[1][1], m[2][2])?;
                if !c.is_orthorhombic() {
                    for v in [m[0][1], m[0][2], m[1][0], m[1][2], m[2][0], m[2][1]] {
                        write!(out, "{v:10.5}")?;
                    }
                }
                writeln!(out)
            }
            None => writeln!(out, "{:10.5}{:10.5}{:10.5}", 0.0, 0.0, 0.0),
        }
    }

    fn finish(&mut self, _out: &mut std::fs::File, _n_frames: usize) -> std::io::Result<()> {
        Ok(())
    }
}
