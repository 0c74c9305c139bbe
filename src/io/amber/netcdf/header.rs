//! The NetCDF-3 header: types, dimensions, attributes, variables and their file offsets, parsed
//! once and checked against the file size.

use super::*;

pub(crate) const NC_DIMENSION: u32 = 0x0A;
pub(crate) const NC_VARIABLE: u32 = 0x0B;
pub(crate) const NC_ATTRIBUTE: u32 = 0x0C;
pub(super) const STREAMING: u32 = 0xFFFF_FFFF;
/// Attribute values larger than this are skipped, not read (AMBER's are a few bytes).
pub(super) const MAX_KEPT_ATTRIBUTE_BYTES: u64 = 1 << 16;

/// NetCDF external data types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum NcType {
    Byte,
    Char,
    Short,
    Int,
    Float,
    Double,
}

impl NcType {
    pub(super) fn from_code(code: u32) -> Option<NcType> {
        Some(match code {
            1 => NcType::Byte,
            2 => NcType::Char,
            3 => NcType::Short,
            4 => NcType::Int,
            5 => NcType::Float,
            6 => NcType::Double,
            _ => return None,
        })
    }

    pub(super) fn size(self) -> u64 {
        match self {
            NcType::Byte | NcType::Char => 1,
            NcType::Short => 2,
            NcType::Int | NcType::Float => 4,
            NcType::Double => 8,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub(super) enum AttrValue {
    Text(String),
    Numbers(Vec<f64>),
    /// Present but not kept (too large).
    Skipped,
}

#[derive(Clone, Debug)]
pub(super) struct Attr {
    pub(super) name: String,
    pub(super) value: AttrValue,
}

#[derive(Clone, Debug)]
pub(super) struct Dim {
    pub(super) name: String,
    /// 0 for the record (unlimited) dimension.
    pub(super) len: u64,
}

#[derive(Clone, Debug)]
pub(super) struct Var {
    pub(super) name: String,
    pub(super) dims: Vec<usize>,
    pub(super) attrs: Vec<Attr>,
    pub(super) nc_type: NcType,
    pub(super) begin: u64,
    /// Bytes of one record (record variables) or of the whole variable, from the dimensions.
    pub(super) bytes: u64,
    pub(super) is_record: bool,
}

pub(super) fn find_attr<'a>(attrs: &'a [Attr], name: &str) -> Option<&'a AttrValue> {
    attrs.iter().find(|a| a.name == name).map(|a| &a.value)
}

/// Where one variable's values are, per frame.
#[derive(Clone, Copy, Debug)]
pub(super) struct Slot {
    pub(super) begin: u64,
    pub(super) nc_type: NcType,
    /// Bytes per frame.
    pub(super) bytes: u64,
}

/// Reads the header through the byte source, checking every length against the file size.
pub(super) type HeaderCursor<'a> = crate::io::dcd::Cursor<'a>;

/// The NetCDF header's big-endian values and counted lists, on the shared cursor.
impl HeaderCursor<'_> {
    pub(super) fn u32(&mut self, what: &str) -> Result<u32, ReadError> {
        let b = self.take(4, what)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    pub(super) fn u64(&mut self, what: &str) -> Result<u64, ReadError> {
        let b = self.take(8, what)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(&b);
        Ok(u64::from_be_bytes(a))
    }

    /// A count of list elements, each at least `min_bytes` long: more than the rest of the file
    /// could hold is an error, not an allocation.
    pub(super) fn count(&mut self, what: &str, min_bytes: u64) -> Result<usize, ReadError> {
        let at = self.offset;
        let n = self.u32(what)?;
        let room = self.len.saturating_sub(self.offset) / min_bytes.max(1);
        if u64::from(n) > room {
            return Err(ReadError::byte(
                self.path,
                at,
                format!("the header declares {n} {what}, but the rest of the file has room for at most {room}"),
            ));
        }
        Ok(n as usize)
    }

    pub(super) fn name(&mut self, what: &str) -> Result<String, ReadError> {
        let at = self.offset;
        let n = u64::from(self.u32(what)?);
        if n > self.len.saturating_sub(self.offset) || n > 4096 {
            return Err(ReadError::byte(
                self.path,
                at,
                format!("expected the length of a {what} (at most 4096 bytes), found {n}"),
            ));
        }
        let b = self.take(n, what)?;
        self.skip(pad4(n) - n, "name padding")?;
        Ok(String::from_utf8_lossy(&b).into_owned())
    }

    /// `ABSENT` (two zero words) or `tag nelems`: the element count, 0 for absent.
    pub(super) fn list(&mut self, tag: u32, what: &str, min_bytes: u64) -> Result<usize, ReadError> {
        let at = self.offset;
        let t = self.u32(what)?;
        if t == 0 {
            let n = self.u32(what)?;
            if n != 0 {
                return Err(ReadError::byte(
                    self.path,
                    at,
                    format!("expected an absent {what} (two zero words), found 0 then {n}"),
                ));
            }
            return Ok(0);
        }
        if t != tag {
            return Err(ReadError::byte(
                self.path,
                at,
                format!("expected the {what} tag {tag:#x}, found {t:#x}"),
            ));
        }
        self.count(what, min_bytes)
    }

    pub(super) fn attrs(&mut self) -> Result<Vec<Attr>, ReadError> {
        let n = self.list(NC_ATTRIBUTE, "attributes", 12)?;
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            let name = self.name("attribute name")?;
            let type_at = self.offset;
            let code = self.u32("attribute type")?;
            let nc_type = NcType::from_code(code).ok_or_else(|| {
                ReadError::byte(
                    self.path,
                    type_at,
                    format!("attribute {name}: expected a NetCDF-3 type code 1-6, found {code}"),
                )
            })?;
            let count_at = self.offset;
            let count = u64::from(self.u32("attribute length")?);
            let bytes = count.checked_mul(nc_type.size()).ok_or_else(|| {
                ReadError::byte(
                    self.path,
                    count_at,
                    format!("attribute {name}: length {count} overflows"),
                )
            })?;
            let value = if bytes <= MAX_KEPT_ATTRIBUTE_BYTES {
                let b = self.take(bytes, "attribute values")?;
                decode_attr(nc_type, &b)
            } else {
                self.skip(bytes, "attribute values")?;
                AttrValue::Skipped
            };
            self.skip(pad4(bytes) - bytes, "attribute padding")?;
            out.push(Attr { name, value });
        }
        Ok(out)
    }
}

pub(super) fn decode_attr(t: NcType, b: &[u8]) -> AttrValue {
    match t {
        NcType::Char => AttrValue::Text(String::from_utf8_lossy(b).trim_end_matches('\0').to_string()),
        NcType::Byte => AttrValue::Numbers(b.iter().map(|&x| f64::from(x as i8)).collect()),
        NcType::Short => AttrValue::Numbers(
            b.chunks_exact(2)
                .map(|c| f64::from(i16::from_be_bytes([c[0], c[1]])))
                .collect(),
        ),
        NcType::Int => AttrValue::Numbers(
            b.chunks_exact(4)
                .map(|c| f64::from(i32::from_be_bytes([c[0], c[1], c[2], c[3]])))
                .collect(),
        ),
        NcType::Float => AttrValue::Numbers(
            b.chunks_exact(4)
                .map(|c| f64::from(f32::from_be_bytes([c[0], c[1], c[2], c[3]])))
                .collect(),
        ),
        NcType::Double => AttrValue::Numbers(b.chunks_exact(8).map(be_f64).collect()),
    }
}

pub(super) fn be_f64(c: &[u8]) -> f64 {
    let mut a = [0u8; 8];
    if let Some(s) = c.get(..8) {
        a.copy_from_slice(s);
    }
    f64::from_be_bytes(a)
}

pub(crate) fn pad4(n: u64) -> u64 {
    n.div_ceil(4).saturating_mul(4)
}

/// What the header holds, as parsed.
pub(super) struct Header {
    pub(super) version: u8,
    pub(super) numrecs_raw: u32,
    pub(super) dims: Vec<Dim>,
    pub(super) global: Vec<Attr>,
    pub(super) vars: Vec<Var>,
    pub(super) header_end: u64,
}

/// The header of a plain file parsed from its first `first_bytes` read in one go (then 8 times more
/// while the header is longer), not field by field from the file: a few reads instead of hundreds.
pub(super) fn read_header(
    path: &Path,
    source: &mut ByteSource,
    len: u64,
    first_bytes: u64,
) -> Result<Header, ReadError> {
    const MOST_BYTES: u64 = 1 << 24;
    let mut want = first_bytes.max(8);
    while matches!(source, ByteSource::File(_)) && want <= MOST_BYTES {
        let n = want.min(len);
        let mut head = vec![0u8; n as usize];
        source.read_at(path, 0, &mut head)?;
        let mut head = ByteSource::Memory(head);
        let parsed = NetcdfReader::parse_header(&mut HeaderCursor {
            path,
            source: &mut head,
            len,
            offset: 0,
        });
        // With the whole file read an error is final; otherwise it may only be the end of the
        // bytes read (a longer header): read more, and at last parse from the file itself.
        if parsed.is_ok() || n == len {
            return parsed;
        }
        want *= 8;
    }
    NetcdfReader::parse_header(&mut HeaderCursor {
        path,
        source,
        len,
        offset: 0,
    })
}
