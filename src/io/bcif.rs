//! BinaryCIF reader (`.bcif`, `.bcif.gz`): mmCIF tables stored column by column in MessagePack,
//! each column a byte blob with the chain of encodings that made it.
//!
//! Called by `io::load`, the parse benchmarks and the fuzz target. MessagePack is read by `rmpv`
//! (borrowing the blobs, nesting limited); the column decoders are ours: byte arrays (little-endian
//! integers and floats), fixed point, interval quantisation, run-length, delta, integer packing
//! and string arrays, applied in reverse order of the column's encoding list, with the mask
//! (`.`/`?`) applied last. Only `_atom_site` and `_cell` of the first data block are decoded; their
//! rows go through the mmCIF reader's own table logic ([`super::mmcif`]), so a `.bcif` file gives
//! the same atoms, alternate locations, chains, models and box as its `.cif` twin.

use super::ReadError;
use super::fields::{float, int, leading_int, show};
use super::load::Parsed;
use super::mmcif::{AtomSite, Columns, Locator, SiteRow, finish};
use rmpv::ValueRef;
use std::path::Path;

/// Deepest MessagePack nesting accepted (BinaryCIF needs 8).
const MAX_DEPTH: usize = 32;

/// A decoded column: numbers or strings (string values as ranges into one shared buffer).
#[derive(Clone, Debug, PartialEq)]
enum Data {
    Int(Vec<i64>),
    Float(Vec<f64>),
    Str { text: String, ranges: Vec<(u32, u32)> },
}

impl Data {
    fn len(&self) -> usize {
        match self {
            Data::Int(v) => v.len(),
            Data::Float(v) => v.len(),
            Data::Str { ranges, .. } => ranges.len(),
        }
    }
}

/// A column and its mask (0: value, 1: `.`, 2: `?`).
struct Column {
    data: Data,
    mask: Option<Vec<i64>>,
}

impl Column {
    fn present(&self, i: usize) -> bool {
        self.mask.as_ref().is_none_or(|m| m.get(i).copied().unwrap_or(0) == 0)
    }

    fn text(&self, i: usize) -> &[u8] {
        if !self.present(i) {
            return &[];
        }
        match &self.data {
            Data::Str { text, ranges } => ranges
                .get(i)
                .and_then(|&(a, b)| text.as_bytes().get(a as usize..b as usize))
                .unwrap_or(&[]),
            _ => &[],
        }
    }

    fn number(&self, i: usize) -> Option<f64> {
        if !self.present(i) {
            return None;
        }
        match &self.data {
            Data::Int(v) => v.get(i).map(|&x| x as f64),
            Data::Float(v) => v.get(i).copied(),
            Data::Str { .. } => float(self.text(i)),
        }
    }

    /// Numbers as strings, for columns read as text (names that happen to be numeric).
    fn into_strings(self) -> Column {
        let data = match self.data {
            Data::Str { .. } => self.data,
            Data::Int(v) => strings(v.iter().map(|x| x.to_string())),
            Data::Float(v) => strings(v.iter().map(|x| x.to_string())),
        };
        Column { data, mask: self.mask }
    }
}

fn strings(values: impl Iterator<Item = String>) -> Data {
    let mut text = String::new();
    let mut ranges = Vec::new();
    for s in values {
        let a = text.len() as u32;
        text.push_str(&s);
        ranges.push((a, text.len() as u32));
    }
    Data::Str { text, ranges }
}

/// One `_atom_site` row of decoded columns.
struct BinRow<'c> {
    columns: &'c [Column],
    i: usize,
}

impl SiteRow for BinRow<'_> {
    #[inline]
    fn text(&self, col: Option<usize>) -> &[u8] {
        col.and_then(|k| self.columns.get(k)).map_or(&[], |c| c.text(self.i))
    }
    #[inline]
    fn number(&self, col: Option<usize>) -> Option<f64> {
        col.and_then(|k| self.columns.get(k))?.number(self.i)
    }
    fn int_exact(&self, col: Option<usize>) -> Option<i64> {
        let c = col.and_then(|k| self.columns.get(k))?;
        match &c.data {
            Data::Str { .. } => int(c.text(self.i)),
            _ => c.number(self.i).filter(|x| x.fract() == 0.0).map(|x| x as i64),
        }
    }
    fn int_leading(&self, col: Option<usize>) -> Option<i64> {
        let c = col.and_then(|k| self.columns.get(k))?;
        match &c.data {
            Data::Str { .. } => leading_int(c.text(self.i)),
            _ => c.number(self.i).map(|x| x as i64),
        }
    }
    fn is_empty(&self, col: Option<usize>) -> bool {
        col.and_then(|k| self.columns.get(k))
            .is_none_or(|c| !c.present(self.i) || matches!(c.data, Data::Str { .. }) && c.text(self.i).is_empty())
    }
    fn show(&self, col: Option<usize>) -> String {
        match col.and_then(|k| self.columns.get(k)) {
            Some(c) => match &c.data {
                Data::Str { .. } => show(c.text(self.i)),
                _ => c.number(self.i).map_or_else(|| "null".to_string(), |x| x.to_string()),
            },
            None => "nothing".to_string(),
        }
    }
}

/// Reads a BinaryCIF file (already decompressed).
pub fn read(path: &Path, bytes: &[u8]) -> Result<Parsed, ReadError> {
    let err = |m: String| ReadError::file(path, m);
    // The document is walked without building values; only `_atom_site` and `_cell` of the first
    // data block are decoded into MessagePack values.
    let mut parsed: Vec<ValueRef<'_>> = Vec::new();
    for span in category_spans(bytes).map_err(|m| err(format!("expected a BinaryCIF document: {m}")))? {
        let mut rd = span;
        parsed.push(
            rmpv::decode::read_value_ref_with_max_depth(&mut rd, MAX_DEPTH)
                .map_err(|e| err(format!("a category is damaged MessagePack: {e}")))?,
        );
    }
    let categories = &parsed;
    let mut cell = [None::<f64>; 6];
    let mut site_table: Option<(&[ValueRef<'_>], usize)> = None;
    for cat in categories {
        let name = get(cat, "name").and_then(as_str).unwrap_or("");
        let columns = get(cat, "columns").and_then(ValueRef::as_array);
        let rows = get(cat, "rowCount").and_then(ValueRef::as_u64).unwrap_or(0) as usize;
        match (name.trim_start_matches('_').to_ascii_lowercase().as_str(), columns) {
            ("atom_site", Some(cols)) => site_table = Some((cols.as_slice(), rows)),
            ("cell", Some(cols)) => {
                for col in cols {
                    let k = match get(col, "name").and_then(as_str).unwrap_or("") {
                        "length_a" => 0,
                        "length_b" => 1,
                        "length_c" => 2,
                        "angle_alpha" => 3,
                        "angle_beta" => 4,
                        "angle_gamma" => 5,
                        _ => continue,
                    };
                    let c = column(path, "_cell", col, rows.max(1))?;
                    cell[k] = c.number(0);
                }
            }
            _ => {}
        }
    }
    let Some((cols, rows)) = site_table else {
        return Err(err("expected an _atom_site category with atoms, found none".into()));
    };
    let tags: Vec<Vec<u8>> = cols
        .iter()
        .map(|col| format!("_atom_site.{}", get(col, "name").and_then(as_str).unwrap_or("")).into_bytes())
        .collect();
    let tag_refs: Vec<&[u8]> = tags.iter().map(Vec::as_slice).collect();
    let c = Columns::new(&tag_refs);
    if c.x.is_none() || c.y.is_none() || c.z.is_none() {
        return Err(err("expected _atom_site.Cartn_x, Cartn_y and Cartn_z columns".into()));
    }
    // Only the columns the table logic reads are decoded; the rest stay empty placeholders.
    let used = [
        c.type_symbol,
        c.name,
        c.altloc,
        c.icode,
        c.resname,
        c.chain,
        c.resid,
        c.x,
        c.y,
        c.z,
        c.model,
        c.charge,
        c.occupancy,
        c.bfactor,
    ];
    let mut columns: Vec<Column> = Vec::with_capacity(cols.len());
    for (k, col) in cols.iter().enumerate() {
        columns.push(if used.contains(&Some(k)) {
            column(path, "_atom_site", col, rows)?
        } else {
            Column {
                data: Data::Int(Vec::new()),
                mask: None,
            }
        });
    }
    // Columns read as text must hold strings.
    for k in [c.type_symbol, c.name, c.altloc, c.icode, c.resname, c.chain]
        .into_iter()
        .flatten()
    {
        if let Some(slot) = columns.get_mut(k)
            && !matches!(slot.data, Data::Str { .. })
        {
            let col = std::mem::replace(
                slot,
                Column {
                    data: Data::Int(Vec::new()),
                    mask: None,
                },
            );
            *slot = col.into_strings();
        }
    }
    let mut site = AtomSite::default();
    for i in 0..rows {
        site.row(path, &Locator::Rows, &c, &BinRow { columns: &columns, i }, i)?;
    }
    site.finish_frame(path, &Locator::Rows)?;
    finish(path, site, cell)
}

/// Where a MessagePack value starting at `pos` ends (`None`: damaged or nested deeper than
/// [`MAX_DEPTH`]). Walks the bytes without building values.
fn skip(b: &[u8], pos: usize, depth: usize) -> Option<usize> {
    if depth > MAX_DEPTH {
        return None;
    }
    let m = *b.get(pos)?;
    let be = |at: usize, n: usize| -> Option<usize> {
        let bytes = b.get(at..at + n)?;
        Some(bytes.iter().fold(0usize, |acc, &x| (acc << 8) | usize::from(x)))
    };
    let end = |at: usize| (at <= b.len()).then_some(at);
    let (header, items): (usize, usize) = match m {
        0x00..=0x7f | 0xe0..=0xff | 0xc0 | 0xc2 | 0xc3 => return end(pos + 1),
        0xcc | 0xd0 => return end(pos + 2),
        0xcd | 0xd1 | 0xd4 => return end(pos + 3),
        0xd5 => return end(pos + 4),
        0xca | 0xce | 0xd2 => return end(pos + 5),
        0xd6 => return end(pos + 6),
        0xcb | 0xcf | 0xd3 => return end(pos + 9),
        0xd7 => return end(pos + 10),
        0xd8 => return end(pos + 18),
        0xa0..=0xbf => return end(pos + 1 + usize::from(m & 0x1f)),
        0xc4 | 0xd9 => return end(pos + 2 + be(pos + 1, 1)?),
        0xc5 | 0xda => return end(pos + 3 + be(pos + 1, 2)?),
        0xc6 | 0xdb => return end((pos + 5).checked_add(be(pos + 1, 4)?)?),
        0xc7 => return end(pos + 3 + be(pos + 1, 1)?),
        0xc8 => return end(pos + 4 + be(pos + 1, 2)?),
        0xc9 => return end((pos + 6).checked_add(be(pos + 1, 4)?)?),
        0x90..=0x9f => (1, usize::from(m & 0x0f)),
        0x80..=0x8f => (1, 2 * usize::from(m & 0x0f)),
        0xdc => (3, be(pos + 1, 2)?),
        0xdd => (5, be(pos + 1, 4)?),
        0xde => (3, 2 * be(pos + 1, 2)?),
        0xdf => (5, 2usize.checked_mul(be(pos + 1, 4)?)?),
        0xc1 => return None,
    };
    let mut at = pos + header;
    for _ in 0..items {
        at = skip(b, at, depth + 1)?;
    }
    Some(at)
}

/// The entry count and first entry of a map (`None` for anything else).
fn map_header(b: &[u8], pos: usize) -> Option<(usize, usize)> {
    let m = *b.get(pos)?;
    let be = |n: usize| {
        b.get(pos + 1..pos + 1 + n)
            .map(|x| x.iter().fold(0usize, |a, &y| (a << 8) | usize::from(y)))
    };
    match m {
        0x80..=0x8f => Some((usize::from(m & 0x0f), pos + 1)),
        0xde => Some((be(2)?, pos + 3)),
        0xdf => Some((be(4)?, pos + 5)),
        _ => None,
    }
}

/// The element count and first element of an array.
fn array_header(b: &[u8], pos: usize) -> Option<(usize, usize)> {
    let m = *b.get(pos)?;
    let be = |n: usize| {
        b.get(pos + 1..pos + 1 + n)
            .map(|x| x.iter().fold(0usize, |a, &y| (a << 8) | usize::from(y)))
    };
    match m {
        0x90..=0x9f => Some((usize::from(m & 0x0f), pos + 1)),
        0xdc => Some((be(2)?, pos + 3)),
        0xdd => Some((be(4)?, pos + 5)),
        _ => None,
    }
}

/// A string value at `pos` (`None` for anything else).
fn str_at(b: &[u8], pos: usize) -> Option<&[u8]> {
    let m = *b.get(pos)?;
    let (start, len) = match m {
        0xa0..=0xbf => (pos + 1, usize::from(m & 0x1f)),
        0xd9 => (pos + 2, usize::from(*b.get(pos + 1)?)),
        0xda => (
            pos + 3,
            usize::from(u16::from_be_bytes([*b.get(pos + 1)?, *b.get(pos + 2)?])),
        ),
        0xdb => (
            pos + 5,
            u32::from_be_bytes(b.get(pos + 1..pos + 5)?.try_into().ok()?) as usize,
        ),
        _ => return None,
    };
    b.get(start..start.checked_add(len)?)
}

/// The value of `key` in the map at `pos`: its start.
fn find_key(b: &[u8], pos: usize, key: &[u8]) -> Option<usize> {
    let (n, mut at) = map_header(b, pos)?;
    for _ in 0..n {
        let is_key = str_at(b, at) == Some(key);
        at = skip(b, at, 1)?;
        if is_key {
            return Some(at);
        }
        at = skip(b, at, 1)?;
    }
    None
}

/// The bytes of the `_atom_site` and `_cell` categories of the first data block.
fn category_spans(b: &[u8]) -> Result<Vec<&[u8]>, String> {
    let blocks = find_key(b, 0, b"dataBlocks").ok_or("no `dataBlocks` in a top-level map")?;
    let (n_blocks, first) = array_header(b, blocks).ok_or("`dataBlocks` is not an array")?;
    if n_blocks == 0 {
        return Err("the file holds no data block".into());
    }
    let cats = find_key(b, first, b"categories").ok_or("no `categories` in the first data block")?;
    let (n, mut at) = array_header(b, cats).ok_or("`categories` is not an array")?;
    let mut out = Vec::new();
    for _ in 0..n {
        let end = skip(b, at, 2).ok_or("a category is damaged")?;
        let name = find_key(b, at, b"name").and_then(|p| str_at(b, p)).unwrap_or(b"");
        let name = name.strip_prefix(b"_").unwrap_or(name);
        if name.eq_ignore_ascii_case(b"atom_site") || name.eq_ignore_ascii_case(b"cell") {
            out.push(&b[at..end]);
        }
        at = end;
    }
    Ok(out)
}

fn as_f64(v: &ValueRef<'_>) -> Option<f64> {
    match v {
        ValueRef::Integer(i) => i.as_f64(),
        ValueRef::F32(x) => Some(f64::from(*x)),
        ValueRef::F64(x) => Some(*x),
        _ => None,
    }
}

fn as_i64(v: &ValueRef<'_>) -> Option<i64> {
    match v {
        ValueRef::Integer(i) => i.as_i64(),
        _ => None,
    }
}

fn as_str<'a>(v: &'a ValueRef<'_>) -> Option<&'a str> {
    match v {
        ValueRef::String(s) => s.as_str(),
        _ => None,
    }
}

/// The value of `key` in a MessagePack map.
fn get<'v, 'a>(map: &'v ValueRef<'a>, key: &str) -> Option<&'v ValueRef<'a>> {
    match map {
        ValueRef::Map(entries) => entries.iter().find(|(k, _)| as_str(k) == Some(key)).map(|(_, v)| v),
        _ => None,
    }
}

/// Decodes one column (`{name, data: {data, encoding}, mask}`) of a category with `rows` rows.
fn column(path: &Path, category: &str, col: &ValueRef<'_>, rows: usize) -> Result<Column, ReadError> {
    let name = get(col, "name").and_then(as_str).unwrap_or("?");
    let what = format!("{category}.{name}");
    let data = get(col, "data").ok_or_else(|| ReadError::file(path, format!("{what}: no data")))?;
    let data = decode_encoded(data, rows).map_err(|m| ReadError::file(path, format!("{what}: {m}")))?;
    if data.len() != rows {
        return Err(ReadError::file(
            path,
            format!(
                "{what}: expected {rows} values (the category's rowCount), decoded {}",
                data.len()
            ),
        ));
    }
    let mask = match get(col, "mask") {
        None | Some(ValueRef::Nil) => None,
        Some(m) => match decode_encoded(m, rows).map_err(|e| ReadError::file(path, format!("{what} mask: {e}")))? {
            Data::Int(v) if v.len() == rows => Some(v),
            other => {
                return Err(ReadError::file(
                    path,
                    format!(
                        "{what}: expected a mask of {rows} integers, decoded {} values",
                        other.len()
                    ),
                ));
            }
        },
    };
    Ok(Column { data, mask })
}

/// Decodes `{data: bytes, encoding: [..]}`. `limit` bounds every intermediate array (a damaged
/// run-length or packing step cannot allocate more than the file's row count allows).
fn decode_encoded(v: &ValueRef<'_>, rows: usize) -> Result<Data, String> {
    let bytes = match get(v, "data") {
        Some(ValueRef::Binary(b)) => *b,
        _ => return Err("expected binary data".into()),
    };
    let encodings = get(v, "encoding")
        .and_then(ValueRef::as_array)
        .ok_or("expected an encoding list")?;
    decode(Stage::Bytes(bytes), encodings, rows)
}

/// A value between decoding steps.
enum Stage<'a> {
    Bytes(&'a [u8]),
    Data(Data),
}

/// Largest array any step may produce, relative to the row count (run-length and packing expand;
/// string offsets have one more entry than strings).
fn cap(rows: usize) -> usize {
    rows.saturating_mul(2).saturating_add(16)
}

fn decode(input: Stage<'_>, encodings: &[ValueRef<'_>], rows: usize) -> Result<Data, String> {
    let mut cur = input;
    for enc in encodings.iter().rev() {
        let kind = get(enc, "kind").and_then(as_str).ok_or("an encoding without `kind`")?;
        let num = |key: &str| get(enc, key).and_then(as_f64);
        let int_of = |key: &str| get(enc, key).and_then(as_i64);
        cur = Stage::Data(match (kind, cur) {
            ("ByteArray", Stage::Bytes(b)) => byte_array(b, int_of("type").ok_or("ByteArray without `type`")?)?,
            ("StringArray", Stage::Bytes(b)) => string_array(enc, b, rows)?,
            ("FixedPoint", Stage::Data(Data::Int(v))) => {
                let factor = num("factor")
                    .filter(|f| *f != 0.0 && f.is_finite())
                    .ok_or("FixedPoint without a factor")?;
                Data::Float(v.iter().map(|&x| x as f64 / factor).collect())
            }
            ("IntervalQuantization", Stage::Data(Data::Int(v))) => {
                let min = num("min").ok_or("IntervalQuantization without `min`")?;
                let max = num("max").ok_or("IntervalQuantization without `max`")?;
                let steps = int_of("numSteps")
                    .filter(|&n| n >= 2)
                    .ok_or("IntervalQuantization needs numSteps >= 2")?;
                let delta = (max - min) / (steps - 1) as f64;
                Data::Float(v.iter().map(|&x| min + delta * x as f64).collect())
            }
            ("RunLength", Stage::Data(Data::Int(v))) => {
                let size = int_of("srcSize").unwrap_or(0).max(0) as usize;
                if size > cap(rows) {
                    return Err(format!("RunLength declares {size} values for {rows} rows"));
                }
                let mut out = Vec::with_capacity(size);
                for pair in v.chunks_exact(2) {
                    let count = usize::try_from(pair[1]).map_err(|_| "RunLength with a negative count")?;
                    if out.len() + count > size {
                        return Err(format!("RunLength expands past its declared size {size}"));
                    }
                    out.extend(std::iter::repeat_n(pair[0], count));
                }
                Data::Int(out)
            }
            ("Delta", Stage::Data(Data::Int(mut v))) => {
                let mut acc = int_of("origin").unwrap_or(0);
                for x in &mut v {
                    acc = acc.wrapping_add(*x);
                    *x = acc;
                }
                Data::Int(v)
            }
            ("IntegerPacking", Stage::Data(Data::Int(v))) => {
                let bytes = int_of("byteCount").unwrap_or(1);
                let unsigned = matches!(get(enc, "isUnsigned"), Some(ValueRef::Boolean(true)));
                let (upper, lower) = match (bytes, unsigned) {
                    (1, true) => (0xFF, None),
                    (2, true) => (0xFFFF, None),
                    (1, false) => (0x7F, Some(-0x80)),
                    (2, false) => (0x7FFF, Some(-0x8000)),
                    _ => return Err(format!("IntegerPacking with byteCount {bytes}")),
                };
                let size = int_of("srcSize").unwrap_or(0).max(0) as usize;
                let mut out = Vec::with_capacity(size.min(cap(rows)));
                let mut acc = 0i64;
                for &x in &v {
                    acc = acc.wrapping_add(x);
                    if x == upper || Some(x) == lower {
                        continue;
                    }
                    if out.len() >= cap(rows) {
                        return Err(format!("IntegerPacking unpacks to more than {} values", cap(rows)));
                    }
                    out.push(acc);
                    acc = 0;
                }
                Data::Int(out)
            }
            (kind, Stage::Bytes(_)) => return Err(format!("encoding {kind} applied to raw bytes")),
            (kind, Stage::Data(d)) => {
                return Err(format!(
                    "encoding {kind} cannot decode {}",
                    match d {
                        Data::Int(_) => "integers",
                        Data::Float(_) => "floats",
                        Data::Str { .. } => "strings",
                    }
                ));
            }
        });
    }
    match cur {
        Stage::Data(d) => Ok(d),
        Stage::Bytes(_) => Err("no encoding turns the bytes into values".into()),
    }
}

/// Little-endian numbers of one of BinaryCIF's types (as many as the bytes hold: packed integers
/// may outnumber the rows; the file's size bounds them).
fn byte_array(b: &[u8], kind: i64) -> Result<Data, String> {
    let size = match kind {
        1 | 4 => 1,
        2 | 5 => 2,
        3 | 6 | 32 => 4,
        33 => 8,
        _ => return Err(format!("ByteArray of unknown type {kind}")),
    };
    if !b.len().is_multiple_of(size) {
        return Err(format!(
            "ByteArray of {} bytes is not a whole number of {size}-byte values",
            b.len()
        ));
    }
    let chunks = b.chunks_exact(size);
    Ok(match kind {
        1 => Data::Int(chunks.map(|c| i64::from(c[0] as i8)).collect()),
        4 => Data::Int(chunks.map(|c| i64::from(c[0])).collect()),
        2 => Data::Int(chunks.map(|c| i64::from(i16::from_le_bytes([c[0], c[1]]))).collect()),
        5 => Data::Int(chunks.map(|c| i64::from(u16::from_le_bytes([c[0], c[1]]))).collect()),
        3 => Data::Int(
            chunks
                .map(|c| i64::from(i32::from_le_bytes([c[0], c[1], c[2], c[3]])))
                .collect(),
        ),
        6 => Data::Int(
            chunks
                .map(|c| i64::from(u32::from_le_bytes([c[0], c[1], c[2], c[3]])))
                .collect(),
        ),
        32 => Data::Float(
            chunks
                .map(|c| f64::from(f32::from_le_bytes([c[0], c[1], c[2], c[3]])))
                .collect(),
        ),
        _ => Data::Float(
            chunks
                .map(|c| f64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
                .collect(),
        ),
    })
}

/// `StringArray`: the distinct strings concatenated, their offsets, and per row an index.
fn string_array(enc: &ValueRef<'_>, b: &[u8], rows: usize) -> Result<Data, String> {
    let text = get(enc, "stringData")
        .and_then(as_str)
        .ok_or("StringArray without `stringData`")?;
    let offsets_bytes = match get(enc, "offsets") {
        Some(ValueRef::Binary(o)) => *o,
        _ => return Err("StringArray without `offsets`".into()),
    };
    let offset_enc = get(enc, "offsetEncoding")
        .and_then(ValueRef::as_array)
        .ok_or("StringArray without `offsetEncoding`")?;
    let data_enc = get(enc, "dataEncoding")
        .and_then(ValueRef::as_array)
        .ok_or("StringArray without `dataEncoding`")?;
    let Data::Int(offsets) = decode(Stage::Bytes(offsets_bytes), offset_enc, text.len().max(rows))? else {
        return Err("StringArray offsets are not integers".into());
    };
    let Data::Int(indices) = decode(Stage::Bytes(b), data_enc, rows)? else {
        return Err("StringArray indices are not integers".into());
    };
    let mut distinct = Vec::with_capacity(offsets.len().saturating_sub(1));
    for w in offsets.windows(2) {
        let (a, z) = (w[0], w[1]);
        if a < 0
            || z < a
            || z as usize > text.len()
            || !text.is_char_boundary(a as usize)
            || !text.is_char_boundary(z as usize)
        {
            return Err(format!(
                "StringArray offsets {a}..{z} outside its {} bytes of text",
                text.len()
            ));
        }
        distinct.push((a as u32, z as u32));
    }
    let mut ranges = Vec::with_capacity(indices.len());
    for &i in &indices {
        ranges.push(match usize::try_from(i).ok().and_then(|i| distinct.get(i)) {
            Some(&r) => r,
            None if i < 0 => (0, 0),
            None => return Err(format!("StringArray index {i} past its {} strings", distinct.len())),
        });
    }
    Ok(Data::Str {
        text: text.to_string(),
        ranges,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(pairs: &[(&'static str, ValueRef<'static>)]) -> ValueRef<'static> {
        ValueRef::Map(pairs.iter().map(|(k, v)| (ValueRef::from(*k), v.clone())).collect())
    }

    #[test]
    fn integer_packing_delta_run_length_fixed_point() {
        // Encoded (in order): FixedPoint(100) -> Delta(origin 0) -> IntegerPacking(1 byte, signed) -> ByteArray(Int8).
        let values = [1.0, 2.5, 4.0, 4.0, 300.0];
        // ints 100, 250, 400, 400, 30000; deltas 100, 150, 150, 0, 29600; packed i8.
        let mut packed: Vec<i8> = Vec::new();
        for d in [100i64, 150, 150, 0, 29600] {
            let mut r = d;
            while r >= 127 {
                packed.push(127);
                r -= 127;
            }
            packed.push(r as i8);
        }
        let bytes: Vec<u8> = packed.iter().map(|&x| x as u8).collect();
        let encs = vec![
            enc(&[
                ("kind", "FixedPoint".into()),
                ("factor", ValueRef::F64(100.0)),
                ("srcType", 33.into()),
            ]),
            enc(&[("kind", "Delta".into()), ("origin", 0.into()), ("srcType", 3.into())]),
            enc(&[
                ("kind", "IntegerPacking".into()),
                ("byteCount", 1.into()),
                ("isUnsigned", ValueRef::Boolean(false)),
                ("srcSize", 5.into()),
            ]),
            enc(&[("kind", "ByteArray".into()), ("type", 1.into())]),
        ];
        let d = decode(Stage::Bytes(&bytes), &encs, 5).unwrap();
        assert_eq!(d, Data::Float(values.to_vec()));
        // RunLength: (7 x3), (9 x2)
        let rl: Vec<u8> = [7i32, 3, 9, 2].iter().flat_map(|x| x.to_le_bytes()).collect();
        let encs = vec![
            enc(&[
                ("kind", "RunLength".into()),
                ("srcType", 3.into()),
                ("srcSize", 5.into()),
            ]),
            enc(&[("kind", "ByteArray".into()), ("type", 3.into())]),
        ];
        assert_eq!(
            decode(Stage::Bytes(&rl), &encs, 5).unwrap(),
            Data::Int(vec![7, 7, 7, 9, 9])
        );
        // A run-length past its declared size is refused.
        let encs = vec![
            enc(&[
                ("kind", "RunLength".into()),
                ("srcType", 3.into()),
                ("srcSize", 4.into()),
            ]),
            enc(&[("kind", "ByteArray".into()), ("type", 3.into())]),
        ];
        assert!(decode(Stage::Bytes(&rl), &encs, 5).is_err());
    }

    #[test]
    fn damaged_documents_are_errors() {
        for b in [&b""[..], b"\x93\x01", b"\x81\xa4data\xc0", b"\xdf\xff\xff\xff\xff"] {
            assert!(read(Path::new("x.bcif"), b).is_err());
        }
    }
}
