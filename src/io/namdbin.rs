//! NAMD binary coordinates and velocities (`.coor`, `.vel`, also written as restart files): a
//! 4-byte atom count, then x, y, z of every atom as 8-byte floats, in the byte order of the machine
//! that wrote them. The byte order is found from the file length (the count must account for every
//! byte), so files from either kind of machine open.
//!
//! Called by `io::load` (a `.coor` file gives one frame of coordinates after a topology), by the
//! fuzz target and by tests. Velocities are stored in NAMD's internal unit (Angstrom per
//! 1/20.45482706 ps); [`NamdBin::velocities_angstrom_per_ps`] converts them.

use super::ReadError;
use crate::model::{Frame, InMemoryFrames};
use std::path::Path;

/// NAMD's time unit per picosecond: velocities in the file are in Angstrom per (1/this) ps.
pub const NAMD_VELOCITY_PER_ANGSTROM_PER_PS: f64 = 20.454_827_06;

/// Byte order of the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ByteOrder {
    Little,
    Big,
}

/// A NAMD binary file: one vector per atom, as stored.
#[derive(Clone, Debug, PartialEq)]
pub struct NamdBin {
    pub values: Vec<[f64; 3]>,
    pub byte_order: ByteOrder,
}

impl NamdBin {
    /// The values as velocities in Angstrom/ps (for a `.vel` file).
    pub fn velocities_angstrom_per_ps(&self) -> Vec<[f64; 3]> {
        self.values
            .iter()
            .map(|v| v.map(|x| x * NAMD_VELOCITY_PER_ANGSTROM_PER_PS))
            .collect()
    }

    /// The values as one frame of coordinates (for a `.coor` file).
    pub fn frames(&self) -> InMemoryFrames {
        InMemoryFrames {
            n_atoms: self.values.len(),
            frames: vec![Frame {
                positions_angstrom: self.values.iter().map(|p| p.map(|x| x as f32)).collect(),
                ..Frame::default()
            }],
        }
    }
}

/// True when `head` (the first bytes) and `file_len` fit the layout in one byte order.
pub fn looks_like(head: &[u8], file_len: u64) -> bool {
    byte_order(head, file_len).is_some()
}

fn byte_order(head: &[u8], file_len: u64) -> Option<ByteOrder> {
    let b: [u8; 4] = head.get(..4)?.try_into().ok()?;
    let fits = |n: i32| n > 0 && 4 + 24 * n as u64 == file_len;
    if fits(i32::from_le_bytes(b)) {
        Some(ByteOrder::Little)
    } else if fits(i32::from_be_bytes(b)) {
        Some(ByteOrder::Big)
    } else {
        None
    }
}

/// Reads a NAMD binary coordinate or velocity file.
pub fn read(path: &Path, bytes: &[u8]) -> Result<NamdBin, ReadError> {
    let len = bytes.len() as u64;
    let Some(order) = byte_order(bytes, len) else {
        let head = bytes.get(..4).map(|b| {
            let b: [u8; 4] = [b[0], b[1], b[2], b[3]];
            (i32::from_le_bytes(b), i32::from_be_bytes(b))
        });
        return Err(ReadError::byte(
            path,
            0,
            match head {
                Some((le, be)) => format!(
                    "expected a NAMD binary file: a 4-byte atom count N and then 24 N bytes; the count reads {le} (little-endian) or {be} (big-endian), but the file has {len} bytes (N would be {})",
                    len.saturating_sub(4) as f64 / 24.0
                ),
                None => format!("expected a NAMD binary file, found only {len} bytes"),
            },
        ));
    };
    let mut values = Vec::with_capacity((bytes.len() - 4) / 24);
    for (i, chunk) in bytes[4..].chunks_exact(24).enumerate() {
        let mut v = [0.0; 3];
        for (k, x) in v.iter_mut().enumerate() {
            let mut b = [0u8; 8];
            b.copy_from_slice(&chunk[8 * k..8 * k + 8]);
            *x = match order {
                ByteOrder::Little => f64::from_le_bytes(b),
                ByteOrder::Big => f64::from_be_bytes(b),
            };
            if !x.is_finite() {
                return Err(ReadError::byte(
                    path,
                    4 + 24 * i as u64 + 8 * k as u64,
                    format!("atom {}: expected a finite number, found {x}", i + 1),
                ));
            }
        }
        values.push(v);
    }
    Ok(NamdBin {
        values,
        byte_order: order,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(values: &[[f64; 3]], big: bool) -> Vec<u8> {
        let n = values.len() as i32;
        let mut b = if big { n.to_be_bytes() } else { n.to_le_bytes() }.to_vec();
        for v in values {
            for x in v {
                b.extend_from_slice(&if big { x.to_be_bytes() } else { x.to_le_bytes() });
            }
        }
        b
    }

    #[test]
    fn both_byte_orders() {
        let v = [[1.0, -2.5, 3.25], [4.0, 5.0, 6.0]];
        for big in [false, true] {
            let r = read(Path::new("a.coor"), &file(&v, big)).unwrap();
            assert_eq!(r.values, v.to_vec());
            assert_eq!(r.byte_order, if big { ByteOrder::Big } else { ByteOrder::Little });
        }
        let mut b = file(&v, false);
        b.pop();
        assert!(read(Path::new("a.coor"), &b).is_err());
        assert!(read(Path::new("a.coor"), &[1, 0]).is_err());
        let mut nan = file(&v, false);
        nan[4..12].copy_from_slice(&f64::NAN.to_le_bytes());
        assert!(read(Path::new("a.coor"), &nan).is_err());
    }
}
