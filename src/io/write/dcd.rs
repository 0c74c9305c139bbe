//! DCD output (CHARMM flavour, little-endian, 4-byte markers): the header with the frame count
//! patched in at the end, the unit cell `A, cos gamma, B, cos beta, cos alpha, C` per frame (zeros
//! without a box, as MDAnalysis writes), X, Y and Z records in Angstrom. Called through
//! `io::write`; read back by `io::dcd` and by MDAnalysis in the tests.

use super::FrameWriter;
use crate::io::dcd::PS_PER_AKMA;
use crate::model::{Frame, Structure};
use std::io::{Seek, SeekFrom, Write};

pub struct DcdWriter {
    n_atoms: usize,
    frames: usize,
    times_ps: [Option<f64>; 2],
    first_step: Option<i64>,
}

impl DcdWriter {
    pub fn new(n_atoms: usize) -> DcdWriter {
        DcdWriter {
            n_atoms,
            frames: 0,
            times_ps: [None; 2],
            first_step: None,
        }
    }

    /// The 84-byte control record (without its markers).
    fn control(&self, n_frames: usize) -> [u8; 84] {
        let mut b = [0u8; 84];
        b[..4].copy_from_slice(b"CORD");
        let mut put = |k: usize, v: [u8; 4]| b[4 + 4 * k..8 + 4 * k].copy_from_slice(&v);
        let n = i32::try_from(n_frames).unwrap_or(i32::MAX);
        put(0, n.to_le_bytes());
        put(1, (self.first_step.unwrap_or(0) as i32).to_le_bytes());
        put(2, 1i32.to_le_bytes());
        put(3, n.to_le_bytes());
        let delta_akma = match self.times_ps {
            [Some(a), Some(b)] if b > a => (b - a) / PS_PER_AKMA,
            _ => 1.0,
        };
        put(9, (delta_akma as f32).to_le_bytes());
        put(10, 1i32.to_le_bytes());
        put(19, 24i32.to_le_bytes());
        b
    }
}

fn record(out: &mut dyn Write, bytes: &[u8]) -> std::io::Result<()> {
    let n = u32::try_from(bytes.len()).map_err(|_| std::io::Error::other("DCD record over 4 GiB"))?;
    out.write_all(&n.to_le_bytes())?;
    out.write_all(bytes)?;
    out.write_all(&n.to_le_bytes())
}

impl FrameWriter for DcdWriter {
    fn write_frame(&mut self, out: &mut dyn Write, _atoms: &Structure, frame: &Frame) -> std::io::Result<()> {
        if self.frames == 0 {
            self.first_step = frame.step;
            record(out, &self.control(0))?;
            let mut title = [b' '; 84];
            title[..4].copy_from_slice(&1i32.to_le_bytes());
            let text = b"REMARKS written by orbitfield";
            title[4..4 + text.len()].copy_from_slice(text);
            record(out, &title)?;
            record(out, &(self.n_atoms as i32).to_le_bytes())?;
        }
        if self.frames < 2 {
            self.times_ps[self.frames] = frame.time_ps;
        }
        let mut cell = [0.0f64; 6];
        if let Some(c) = frame.cell {
            let [a, b, cc] = c.lengths_angstrom;
            let [al, be, ga] = c.angles_degree.map(|d| {
                let r = d.to_radians().cos();
                if (d - 90.0).abs() < 1e-9 { 0.0 } else { r }
            });
            cell = [a, ga, b, be, al, cc];
        }
        let bytes: Vec<u8> = cell.iter().flat_map(|v| v.to_le_bytes()).collect();
        record(out, &bytes)?;
        let mut buf = Vec::with_capacity(4 * self.n_atoms);
        for k in 0..3 {
            buf.clear();
            buf.extend(frame.positions_angstrom.iter().flat_map(|p| p[k].to_le_bytes()));
            record(out, &buf)?;
        }
        self.frames += 1;
        Ok(())
    }

    fn finish(&mut self, out: &mut std::fs::File, n_frames: usize) -> std::io::Result<()> {
        out.seek(SeekFrom::Start(4))?;
        out.write_all(&self.control(n_frames))?;
        out.seek(SeekFrom::End(0))?;
        Ok(())
    }
}
