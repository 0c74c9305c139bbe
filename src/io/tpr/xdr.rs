//! The XDR layer of TPR files: a cursor over the bytes (big-endian integers and reals, strings in
//! the two serializers) and the file header. Used by the topology reader in `io::tpr`.

use super::super::ReadError;
use super::{SUPPORTED_VERSIONS, TPXV_ADD_SIZE_FIELD, TPXV_ADD_SIZE_FIELD_GENERATION};
use std::path::Path;

/// XDR cursor over the whole file.
pub(super) struct Cursor<'a> {
    pub(super) path: &'a Path,
    pub(super) bytes: &'a [u8],
    pub(super) pos: usize,
    /// 8-byte reals.
    pub(super) double: bool,
    /// The body of a GROMACS 2020+ file (in-memory serializer).
    pub(super) modern: bool,
}

impl<'a> Cursor<'a> {
    pub(super) fn err(&self, at: usize, message: impl Into<String>) -> ReadError {
        ReadError::byte(self.path, at as u64, message)
    }

    pub(super) fn left(&self) -> usize {
        self.bytes.len().saturating_sub(self.pos)
    }

    pub(super) fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], ReadError> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.bytes.len());
        match end.and_then(|e| self.bytes.get(self.pos..e)) {
            Some(s) => {
                self.pos += n;
                Ok(s)
            }
            None => Err(self.err(
                self.pos,
                format!(
                    "expected {what} ({n} bytes), found the end of the file at byte {}",
                    self.bytes.len()
                ),
            )),
        }
    }

    pub(super) fn int(&mut self, what: &str) -> Result<i32, ReadError> {
        let b = self.take(4, what)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    pub(super) fn i64(&mut self, what: &str) -> Result<i64, ReadError> {
        let b = self.take(8, what)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(i64::from_be_bytes(a))
    }

    pub(super) fn real(&mut self, what: &str) -> Result<f64, ReadError> {
        if self.double {
            Ok(f64::from_bits(self.i64(what)? as u64))
        } else {
            Ok(f64::from(f32::from_bits(self.int(what)? as u32)))
        }
    }

    pub(super) fn real_bytes(&self) -> usize {
        if self.double { 8 } else { 4 }
    }

    /// Skips `n_reals` reals and `n_ints` integers.
    pub(super) fn skip(&mut self, n_reals: usize, n_ints: usize, what: &str) -> Result<(), ReadError> {
        self.take(n_reals * self.real_bytes() + 4 * n_ints, what).map(|_| ())
    }

    /// A 1-byte value in modern bodies, a 4-byte one before.
    pub(super) fn uchar(&mut self, what: &str) -> Result<u32, ReadError> {
        if self.modern {
            Ok(u32::from(self.take(1, what)?[0]))
        } else {
            Ok(self.int(what)? as u32)
        }
    }

    /// A 2-byte value in modern bodies, a 4-byte one before.
    pub(super) fn ushort(&mut self, what: &str) -> Result<u32, ReadError> {
        if self.modern {
            let b = self.take(2, what)?;
            Ok(u32::from(u16::from_be_bytes([b[0], b[1]])))
        } else {
            Ok(self.int(what)? as u32)
        }
    }

    /// A non-negative count of items of at least `item_bytes` bytes each that must fit in the
    /// rest of the file.
    pub(super) fn count(&mut self, what: &str, item_bytes: usize) -> Result<usize, ReadError> {
        let at = self.pos;
        let n = self.int(what)?;
        let room = self.left() / item_bytes.max(1);
        if n < 0 || n as usize > room {
            return Err(self.err(
                at,
                format!("expected {what} between 0 and {room} (what the rest of the file can hold), found {n}"),
            ));
        }
        Ok(n as usize)
    }

    /// A string: in old bodies and every header, its length plus one then an XDR string (length,
    /// bytes, padding to 4); in modern bodies a 64-bit length and the bytes.
    pub(super) fn string(&mut self, what: &str) -> Result<&'a [u8], ReadError> {
        let at = self.pos;
        let (n, padded) = if self.modern {
            let n = self.i64(what)?;
            (n, false)
        } else {
            let _ = self.int(what)?;
            (i64::from(self.int(what)? as u32), true)
        };
        if n < 0 || n as u64 > self.left() as u64 {
            return Err(self.err(
                at,
                format!(
                    "expected {what}: a string of at most {} bytes, found a length of {n}",
                    self.left()
                ),
            ));
        }
        let n = n as usize;
        let s = self.take(n, what)?;
        if padded {
            self.take(n.div_ceil(4) * 4 - n, what)?;
        }
        Ok(s.strip_suffix(b"\0").unwrap_or(s))
    }
}

/// What the header says.
pub(super) struct Header {
    pub(super) version_string: String,
    pub(super) file_version: i32,
    pub(super) natoms: usize,
    pub(super) ngtc: usize,
    pub(super) has_topology: bool,
    pub(super) has_coordinates: bool,
    pub(super) has_box: bool,
    pub(super) body_size: Option<i64>,
}

pub(super) fn read_header(c: &mut Cursor<'_>) -> Result<Header, ReadError> {
    let version = c.string("the version string")?;
    if !version.starts_with(b"VERSION") {
        return Err(c.err(
            0,
            format!(
                "expected a TPR header starting with \"VERSION\", found {:?}",
                super::super::text::shorten(&String::from_utf8_lossy(version))
            ),
        ));
    }
    let version_string = String::from_utf8_lossy(version.strip_prefix(b"VERSION ").unwrap_or(version))
        .trim()
        .to_string();
    let prec_at = c.pos;
    let precision = c.int("the precision")?;
    c.double = match precision {
        4 => false,
        8 => true,
        _ => {
            return Err(c.err(
                prec_at,
                format!("expected the precision 4 (single) or 8 (double), found {precision}"),
            ));
        }
    };
    let file_version = c.int("the file version")?;
    if !SUPPORTED_VERSIONS.iter().any(|(v, _)| *v == file_version) {
        let list: Vec<String> = SUPPORTED_VERSIONS.iter().map(|(v, _)| v.to_string()).collect();
        return Err(c.err(
            prec_at + 4,
            format!(
                "TPR file version {file_version} (GROMACS {version_string}) is not supported: orbitfield reads tpx versions {} (GROMACS 4.0 to 2026)",
                list.join(", ")
            ),
        ));
    }
    let generation = c.int("the file generation")?;
    if file_version >= 81 {
        c.string("the file tag")?;
    }
    let natoms_at = c.pos;
    let natoms = c.int("the atom count")?;
    if natoms < 0 {
        return Err(c.err(natoms_at, format!("expected an atom count >= 0, found {natoms}")));
    }
    let ngtc_at = c.pos;
    let ngtc = c.int("the number of temperature-coupling groups")?;
    if ngtc < 0 || ngtc as usize > c.left() / 4 {
        return Err(c.err(
            ngtc_at,
            format!(
                "expected a number of temperature-coupling groups between 0 and {}, found {ngtc}",
                c.left() / 4
            ),
        ));
    }
    if file_version < 62 {
        c.int("an unused integer")?;
        c.real("an unused real")?;
    }
    if file_version >= 79 {
        c.int("the free-energy state")?;
    }
    c.real("lambda")?;
    let mut flags = [false; 6];
    for (k, flag) in flags.iter_mut().enumerate() {
        let what = ["bIr", "bTop", "bX", "bV", "bF", "bBox"][k];
        *flag = c.int(what)? != 0;
    }
    let body_size = if file_version >= TPXV_ADD_SIZE_FIELD && generation >= TPXV_ADD_SIZE_FIELD_GENERATION {
        Some(c.i64("the body size")?)
    } else {
        None
    };
    Ok(Header {
        version_string,
        file_version,
        natoms: natoms as usize,
        ngtc: ngtc as usize,
        has_topology: flags[1],
        has_coordinates: flags[2],
        has_box: flags[5],
        body_size,
    })
}
