//! XTC output: GROMACS compressed coordinates with precision 1000 (0.001 nm), the box and step
//! and time of each frame. Called through `io::write`; read back by `io::xtc` and by MDAnalysis
//! in the tests.
//!
//! Every atom is stored as one mixed-radix integer triple relative to the frame's minimum (the
//! coder's "large" integers) with the run flag cleared; the format's optional run-length coding
//! of small differences between neighbouring atoms is not used. Any XTC reader decodes this, at
//! about a third of the size of the raw single-precision coordinates rather than a fifth.

use super::FrameWriter;
use crate::model::units::ANGSTROM_PER_NANOMETRE;
use crate::model::{Frame, Structure};
use std::io::Write;

/// Integer steps per nm.
pub const PRECISION: f32 = 1000.0;
/// Largest integer coordinate magnitude the format allows.
const MAX_ABS: f64 = (i32::MAX - 2) as f64;
/// The small-integer size index written (the smallest valid one; unused without runs).
const SMALL_IDX: i32 = 9;

pub struct XtcWriter {
    bits: BitWriter,
    ints: Vec<[i32; 3]>,
}

impl XtcWriter {
    pub fn new() -> XtcWriter {
        XtcWriter {
            bits: BitWriter::default(),
            ints: Vec::new(),
        }
    }
}

/// MSB-first bit writer.
#[derive(Default)]
struct BitWriter {
    bytes: Vec<u8>,
    /// Bits used in the last byte (0 = the last byte is full or there is none).
    used: u32,
}

impl BitWriter {
    /// Appends the low `n` bits of `v` (`n` <= 32), most significant first.
    fn put(&mut self, n: u32, v: u32) {
        for k in (0..n).rev() {
            let bit = ((v >> k) & 1) as u8;
            if self.used == 0 {
                self.bytes.push(0);
            }
            if let Some(last) = self.bytes.last_mut() {
                *last |= bit << (7 - self.used);
            }
            self.used = (self.used + 1) % 8;
        }
    }

    /// A mixed-radix triple `x * sy * sz + y * sz + z` in `nbits` bits, bytes least significant
    /// first, as the XTC coder stores it.
    fn put_ints(&mut self, nbits: u32, sizes: [u32; 3], v: [u32; 3]) {
        let n = (u128::from(v[0]) * u128::from(sizes[1]) + u128::from(v[1])) * u128::from(sizes[2]) + u128::from(v[2]);
        let full = nbits / 8;
        for k in 0..full {
            self.put(8, ((n >> (8 * k)) & 0xff) as u32);
        }
        let rest = nbits % 8;
        if rest > 0 {
            self.put(rest, (n >> (8 * full)) as u32);
        }
    }
}

fn bit_length(v: u128) -> u32 {
    128 - v.leading_zeros()
}

impl FrameWriter for XtcWriter {
    fn write_frame(&mut self, out: &mut dyn Write, _atoms: &Structure, frame: &Frame) -> std::io::Result<()> {
        let n = frame.positions_angstrom.len();
        let natoms = i32::try_from(n).map_err(|_| std::io::Error::other("too many atoms for an XTC frame"))?;
        let mut head = Vec::with_capacity(92);
        let int = |b: &mut Vec<u8>, v: i32| b.extend_from_slice(&v.to_be_bytes());
        int(&mut head, 1995);
        int(&mut head, natoms);
        int(&mut head, frame.step.unwrap_or(0) as i32);
        head.extend_from_slice(&(frame.time_ps.unwrap_or(0.0) as f32).to_be_bytes());
        let m = frame.cell.map(|c| c.matrix_angstrom()).unwrap_or([[0.0; 3]; 3]);
        for v in m.iter().flatten() {
            head.extend_from_slice(&((v / ANGSTROM_PER_NANOMETRE) as f32).to_be_bytes());
        }
        int(&mut head, natoms);
        if n <= 9 {
            for p in &frame.positions_angstrom {
                for x in p {
                    head.extend_from_slice(&((f64::from(*x) / ANGSTROM_PER_NANOMETRE) as f32).to_be_bytes());
                }
            }
            return out.write_all(&head);
        }
        self.ints.clear();
        let mut lo = [i32::MAX; 3];
        let mut hi = [i32::MIN; 3];
        for p in &frame.positions_angstrom {
            let mut q = [0i32; 3];
            for k in 0..3 {
                let v = (f64::from(p[k]) / ANGSTROM_PER_NANOMETRE * f64::from(PRECISION)).round();
                if v.is_nan() || v.abs() >= MAX_ABS {
                    return Err(std::io::Error::other(format!(
                        "coordinate {} A is too large (or not a number) for XTC at precision {PRECISION}",
                        p[k]
                    )));
                }
                q[k] = v as i32;
                lo[k] = lo[k].min(q[k]);
                hi[k] = hi[k].max(q[k]);
            }
            self.ints.push(q);
        }
        let sizes: [u32; 3] = std::array::from_fn(|k| (i64::from(hi[k]) - i64::from(lo[k]) + 1) as u32);
        let large = sizes.iter().any(|&s| s > 0x00ff_ffff);
        let bitsize = bit_length(u128::from(sizes[0]) * u128::from(sizes[1]) * u128::from(sizes[2]));
        let bitsizes = sizes.map(|s| bit_length(u128::from(s)));
        self.bits.bytes.clear();
        self.bits.used = 0;
        for q in &self.ints {
            let d: [u32; 3] = std::array::from_fn(|k| (i64::from(q[k]) - i64::from(lo[k])) as u32);
            if large {
                for k in 0..3 {
                    self.bits.put(bitsizes[k], d[k]);
                }
            } else {
                self.bits.put_ints(bitsize, sizes, d);
            }
            // No run of small differences follows.
            self.bits.put(1, 0);
        }
        head.extend_from_slice(&PRECISION.to_be_bytes());
        for v in lo.iter().chain(&hi) {
            int(&mut head, *v);
        }
        int(&mut head, SMALL_IDX);
        let nbytes = self.bits.bytes.len();
        int(
            &mut head,
            i32::try_from(nbytes).map_err(|_| std::io::Error::other("XTC frame over 2 GiB"))?,
        );
        out.write_all(&head)?;
        out.write_all(&self.bits.bytes)?;
        out.write_all(&[0u8; 3][..(4 - nbytes % 4) % 4])
    }

    fn finish(&mut self, _out: &mut std::fs::File, _n_frames: usize) -> std::io::Result<()> {
        Ok(())
    }
}
