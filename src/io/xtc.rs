//! XTC trajectories (GROMACS compressed coordinates): a frame index and random-access decoding.
//!
//! Owns the XTC format. Called by `io::load` (through [`XtcReader::open`] and the [`FrameSource`]
//! trait), by the fuzz target (through [`XtcReader::from_bytes`]) and by the trajectory benchmarks.
//!
//! Opening scans every frame header once (magic 1995 or 2023, atom count, step, time, box,
//! precision, compressed size) and records each frame's byte offset, so that frame `i` is read
//! with one seek and one read. Positions are stored as integers on a lattice of `1/precision` nm,
//! packed with the xdr3dfcoord scheme (a bounding box, mixed-radix integers, and runs of small
//! differences between consecutive atoms). The unpacking is implemented here with every index and
//! bit count checked, because damaged frames must turn into errors, never into panics or huge
//! allocations; the `molly` crate decodes the same frames independently and the test suite
//! compares the two. Coordinates and boxes are converted from nm to Angstrom; time is in ps.

use super::ReadError;
use super::dcd::ByteSource;
use crate::model::{Frame, FrameError, FrameSource, UnitCell};
use std::path::{Path, PathBuf};

/// Angstrom per nanometre (XTC stores nm).
const ANGSTROM_PER_NM: f32 = 10.0;
/// Frame magic numbers: the classic format and the 2023 one with a 64-bit compressed size.
const MAGIC_1995: i32 = 1995;
const MAGIC_2023: i32 = 2023;
/// Largest atom count the 1995 format can hold (GROMACS' own limit).
const MAX_ATOMS_1995: u64 = 298_261_617;
/// Header bytes before the coordinates: magic, natoms, step, time, 3x3 box, natoms again.
const HEADER_BYTES: u64 = 4 * 14;
/// Bytes of the compressed-coordinate prelude: precision, minint[3], maxint[3], smallidx.
const PRELUDE_BYTES: u64 = 4 * 8;

/// Integer sizes the run-length coder switches between; the index of one is `smallidx`.
const MAGIC_INTS: [u32; 73] = [
    0, 0, 0, 0, 0, 0, 0, 0, 0, 8, 10, 12, 16, 20, 25, 32, 40, 50, 64, 80, 101, 128, 161, 203, 256, 322, 406, 512, 645,
    812, 1024, 1290, 1625, 2048, 2580, 3250, 4096, 5060, 6501, 8192, 10321, 13003, 16384, 20642, 26007, 32768, 41285,
    52015, 65536, 82570, 104031, 131072, 165140, 208063, 262144, 330280, 416127, 524287, 660561, 832255, 1048576,
    1321122, 1664510, 2097152, 2642245, 3329021, 4194304, 5284491, 6658042, 8388607, 10568983, 13316085, 16777216,
];
/// First usable index into [`MAGIC_INTS`].
const FIRST_IDX: usize = 9;

/// Where one frame lives and what its header says.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct XtcFrameEntry {
    /// Byte offset of the frame's header.
    pub offset: u64,
    /// Total bytes of the frame, header included.
    pub bytes: u64,
    pub step: i64,
    pub time_ps: f32,
}

/// An XTC file opened for random access.
#[derive(Debug)]
pub struct XtcReader {
    path: PathBuf,
    source: ByteSource,
    n_atoms: usize,
    /// File length in bytes when last indexed.
    len: u64,
    frames: Vec<XtcFrameEntry>,
    warnings: Vec<String>,
    buf: Vec<u8>,
    ints: Vec<[i32; 3]>,
}

fn be_i32(b: &[u8], at: usize) -> i32 {
    be_u32(b, at) as i32
}

fn be_u32(b: &[u8], at: usize) -> u32 {
    let mut a = [0u8; 4];
    if let Some(s) = b.get(at..at + 4) {
        a.copy_from_slice(s);
    }
    u32::from_be_bytes(a)
}

fn be_f32(b: &[u8], at: usize) -> f32 {
    f32::from_bits(be_u32(b, at))
}

fn be_u64(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    if let Some(s) = b.get(at..at + 8) {
        a.copy_from_slice(s);
    }
    u64::from_be_bytes(a)
}

fn padded4(n: u64) -> u64 {
    n.div_ceil(4) * 4
}

impl XtcReader {
    /// Opens an XTC file (plain, or gzip/bzip2-compressed, which is decompressed into memory) and
    /// indexes its frames.
    pub fn open(path: &Path) -> Result<XtcReader, ReadError> {
        let (source, len) = ByteSource::open(path)?;
        XtcReader::from_source(path, source, len)
    }

    /// Reads XTC data already in memory; `path` is only used in messages.
    pub fn from_bytes(path: &Path, bytes: Vec<u8>) -> Result<XtcReader, ReadError> {
        let len = bytes.len() as u64;
        XtcReader::from_source(path, ByteSource::Memory(bytes), len)
    }

    /// The frame index built when the file was opened.
    pub fn frame_entries(&self) -> &[XtcFrameEntry] {
        &self.frames
    }

    /// Non-fatal observations made while opening (a last frame cut short), in words.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    fn from_source(path: &Path, mut source: ByteSource, len: u64) -> Result<XtcReader, ReadError> {
        if len == 0 {
            return Err(ReadError::byte(
                path,
                0,
                "expected an XTC frame header, found an empty file",
            ));
        }
        let mut frames = Vec::new();
        let mut n_atoms: Option<u32> = None;
        let cut = scan(path, &mut source, len, 0, &mut n_atoms, &mut frames)?;
        let warnings = cut
            .map(|at| super::cut_short_warning(frames.len() as u64, at, len))
            .into_iter()
            .collect();
        let n_atoms = n_atoms.unwrap_or(0) as usize;
        Ok(XtcReader {
            path: path.to_path_buf(),
            source,
            n_atoms,
            len,
            frames,
            warnings,
            buf: Vec::new(),
            ints: Vec::new(),
        })
    }
}

/// Indexes the frames of `source` from `offset` to `len`, appending to `frames`. Returns the offset
/// of a last frame that the file holds only in part (cut short, or still being written).
fn scan(
    path: &Path,
    source: &mut ByteSource,
    len: u64,
    mut offset: u64,
    n_atoms: &mut Option<u32>,
    frames: &mut Vec<XtcFrameEntry>,
) -> Result<Option<u64>, ReadError> {
    let mut head = [0u8; (HEADER_BYTES + PRELUDE_BYTES + 8) as usize];
    while offset < len {
        let left = len - offset;
        let want = (head.len() as u64).min(left) as usize;
        let head = &mut head[..want];
        source.read_at(path, offset, head)?;
        if left < 4 {
            return Ok(Some(offset));
        }
        let magic = be_i32(head, 0);
        if magic != MAGIC_1995 && magic != MAGIC_2023 {
            return Err(ReadError::byte(
                path,
                offset,
                format!(
                    "frame {}: expected the XTC magic number 1995 or 2023, found {magic}",
                    frames.len()
                ),
            ));
        }
        if left < HEADER_BYTES {
            return Ok(Some(offset));
        }
        let natoms = be_u32(head, 4);
        let natoms2 = be_u32(head, 52);
        if natoms != natoms2 {
            return Err(ReadError::byte(
                path,
                offset + 52,
                format!(
                    "frame {}: expected the atom count repeated ({natoms}), found {natoms2}",
                    frames.len()
                ),
            ));
        }
        if natoms == 0 || u64::from(natoms) > MAX_ATOMS_1995 {
            return Err(ReadError::byte(
                path,
                offset + 4,
                format!(
                    "frame {}: expected an atom count between 1 and {MAX_ATOMS_1995}, found {natoms}",
                    frames.len()
                ),
            ));
        }
        match *n_atoms {
            None => *n_atoms = Some(natoms),
            Some(n) if n != natoms => {
                return Err(ReadError::byte(
                    path,
                    offset + 4,
                    format!(
                        "frame {}: expected {n} atoms (as in frame 0), found {natoms}",
                        frames.len()
                    ),
                ));
            }
            Some(_) => {}
        }
        let bytes = if natoms <= 9 {
            HEADER_BYTES + 12 * u64::from(natoms)
        } else {
            let size_bytes = if magic == MAGIC_2023 { 8 } else { 4 };
            let fixed = HEADER_BYTES + PRELUDE_BYTES + size_bytes;
            if left < fixed {
                return Ok(Some(offset));
            }
            let at = (HEADER_BYTES + PRELUDE_BYTES) as usize;
            let nbytes = if magic == MAGIC_2023 {
                be_u64(head, at)
            } else {
                u64::from(be_u32(head, at))
            };
            // Every atom costs at least one bit of compressed data, which bounds what a frame
            // may make us allocate by the size of the file.
            if nbytes.saturating_mul(8).saturating_add(64) < u64::from(natoms) {
                return Err(ReadError::byte(
                    path,
                    offset + HEADER_BYTES + PRELUDE_BYTES,
                    format!(
                        "frame {}: expected at least {} bytes of compressed coordinates for {natoms} atoms, found a size of {nbytes}",
                        frames.len(),
                        u64::from(natoms).div_ceil(8).saturating_sub(8)
                    ),
                ));
            }
            fixed.saturating_add(padded4(nbytes.min(u64::MAX / 2)))
        };
        if bytes > left {
            return Ok(Some(offset));
        }
        frames.push(XtcFrameEntry {
            offset,
            bytes,
            step: i64::from(be_i32(head, 8)),
            time_ps: be_f32(head, 12),
        });
        offset += bytes;
    }
    Ok(None)
}

impl FrameSource for XtcReader {
    fn n_atoms(&self) -> usize {
        self.n_atoms
    }

    fn n_frames(&self) -> usize {
        self.frames.len()
    }

    fn read_frame(&mut self, index: usize, out: &mut Frame) -> Result<(), FrameError> {
        XtcReader::read_frame(self, index, out).map_err(FrameError::from)
    }

    fn refresh(&mut self) -> Result<usize, FrameError> {
        XtcReader::refresh(self).map_err(FrameError::from)
    }
}

impl XtcReader {
    /// Reads frame `index` into `out`, reusing its allocation (the reader's own error type, with
    /// the byte offset where the frame went wrong).
    pub fn read_frame(&mut self, index: usize, out: &mut Frame) -> Result<(), ReadError> {
        let Some(&entry) = self.frames.get(index) else {
            return Err(ReadError::file(
                &self.path,
                format!("frame {index} requested, the file holds {} frames", self.frames.len()),
            ));
        };
        let mut buf = std::mem::take(&mut self.buf);
        // Eight zero bytes after the data let the bit reader load whole words without bounds
        // checks; reading into them is detected and reported as damaged data.
        buf.clear();
        buf.resize(entry.bytes as usize + 8, 0);
        let mut ints = std::mem::take(&mut self.ints);
        let result = match buf.get_mut(..entry.bytes as usize) {
            Some(b) => self.source.read_at(&self.path, entry.offset, b),
            None => Ok(()),
        }
        .and_then(|()| decode_frame(&self.path, index, entry, &buf, self.n_atoms, &mut ints, out));
        self.buf = buf;
        self.ints = ints;
        result
    }

    /// Picks up frames appended since the file was opened; returns how many were added.
    pub fn refresh(&mut self) -> Result<usize, ReadError> {
        let Some(len) = self.source.current_len(&self.path)? else {
            return Ok(0);
        };
        if len <= self.len {
            return Ok(0);
        }
        let from = self.frames.last().map_or(0, |f| f.offset + f.bytes);
        let before = self.frames.len();
        let mut n_atoms = (self.n_atoms > 0).then_some(self.n_atoms as u32);
        scan(&self.path, &mut self.source, len, from, &mut n_atoms, &mut self.frames)?;
        self.n_atoms = n_atoms.unwrap_or(0) as usize;
        self.len = len;
        Ok(self.frames.len() - before)
    }
}

/// Decodes one frame held in `buf` (its bytes plus eight zero bytes of padding).
fn decode_frame(
    path: &Path,
    index: usize,
    entry: XtcFrameEntry,
    buf: &[u8],
    n_atoms: usize,
    ints: &mut Vec<[i32; 3]>,
    out: &mut Frame,
) -> Result<(), ReadError> {
    let err = |at: u64, msg: String| ReadError::byte(path, entry.offset + at, format!("frame {index}: {msg}"));
    let magic = be_i32(buf, 0);
    out.step = Some(entry.step);
    out.time_ps = Some(f64::from(entry.time_ps));
    let bv: [f32; 9] = std::array::from_fn(|k| be_f32(buf, 16 + 4 * k));
    out.cell = cell_from_box_nm(bv);
    out.positions_angstrom.clear();
    if n_atoms <= 9 {
        out.positions_angstrom
            .extend((0..n_atoms).map(|i| std::array::from_fn(|k| be_f32(buf, 56 + 12 * i + 4 * k) * ANGSTROM_PER_NM)));
        return Ok(());
    }
    let precision = be_f32(buf, 56);
    if !(precision.is_finite() && precision > 0.0) {
        return Err(err(56, format!("expected a positive precision, found {precision}")));
    }
    let minint: [i32; 3] = std::array::from_fn(|k| be_i32(buf, 60 + 4 * k));
    let maxint: [i32; 3] = std::array::from_fn(|k| be_i32(buf, 72 + 4 * k));
    let smallidx = be_u32(buf, 84) as usize;
    let data_at = if magic == MAGIC_2023 { 96 } else { 92 };
    let nbytes = (entry.bytes - data_at as u64) as usize;
    let data = buf.get(data_at..).unwrap_or_default();
    let data_end_bits = nbytes.min(data.len()) * 8;
    ints.clear();
    ints.reserve(n_atoms);
    unpack(data, data_end_bits, n_atoms, minint, maxint, smallidx, ints).map_err(|(at, msg)| match at {
        Some(bit) => err(data_at as u64 + bit / 8, msg),
        None => err(60, msg),
    })?;
    let scale = precision.recip();
    out.positions_angstrom
        .extend(ints.iter().map(|c| c.map(|v| v as f32 * scale * ANGSTROM_PER_NM)));
    Ok(())
}

/// The box from its three vectors in nm (rows a, b, c), or `None` for a zero or degenerate box.
fn cell_from_box_nm(bv: [f32; 9]) -> Option<UnitCell> {
    let v = |r: usize| std::array::from_fn(|k| f64::from(bv[3 * r + k]) * f64::from(ANGSTROM_PER_NM));
    let cell = UnitCell::from_vectors([v(0), v(1), v(2)]);
    cell.is_valid().then_some(cell)
}

/// MSB-first bit reader over a byte slice followed by at least eight readable bytes.
struct Bits<'a> {
    data: &'a [u8],
    pos: usize,
}

impl Bits<'_> {
    /// The next `n` bits (`n` <= 32) as an unsigned integer. Reads past the slice yield zeros.
    #[inline(always)]
    fn take(&mut self, n: u32) -> u32 {
        if n == 0 {
            return 0;
        }
        let byte = self.pos >> 3;
        let word = match self.data.get(byte..byte + 8) {
            Some(s) => {
                let mut a = [0u8; 8];
                a.copy_from_slice(s);
                u64::from_be_bytes(a)
            }
            None => {
                let mut a = [0u8; 8];
                for (k, slot) in a.iter_mut().enumerate() {
                    *slot = self.data.get(byte + k).copied().unwrap_or(0);
                }
                u64::from_be_bytes(a)
            }
        };
        let v = (word << (self.pos & 7)) >> (64 - n);
        self.pos += n as usize;
        v as u32
    }

    /// The next `n` bits (`n` <= 57) as an unsigned integer, from one 8-byte load.
    #[inline(always)]
    fn take_wide(&mut self, n: u32) -> u64 {
        if n == 0 {
            return 0;
        }
        let byte = self.pos >> 3;
        let mut a = [0u8; 8];
        match self.data.get(byte..byte + 8) {
            Some(s) => a.copy_from_slice(s),
            None => {
                for (k, slot) in a.iter_mut().enumerate() {
                    *slot = self.data.get(byte + k).copied().unwrap_or(0);
                }
            }
        }
        let v = (u64::from_be_bytes(a) << (self.pos & 7)) >> (64 - n);
        self.pos += n as usize;
        v
    }

    /// `nbits` bits holding a mixed-radix number with digit sizes `sizes` (`nbits` <= 96): the
    /// bits come as bytes, least significant first (a last partial byte holds the top bits), and
    /// the number splits as `x * sizes[1] * sizes[2] + y * sizes[2] + z`.
    #[inline(always)]
    fn take_ints(&mut self, nbits: u32, sizes: [u32; 3]) -> [i32; 3] {
        let full = nbits / 8;
        let rest = nbits % 8;
        if nbits <= 57 {
            // Read the whole field at once, then put its bytes in little-endian order.
            let w = self.take_wide(nbits);
            let bytes = w >> rest;
            let low = if full == 0 {
                0
            } else {
                bytes.swap_bytes() >> (64 - 8 * full)
            };
            let v = low | ((w & ((1u64 << rest) - 1)) << (8 * full));
            if v <= u64::from(u32::MAX) {
                let v = v as u32;
                let (sz, sy) = (sizes[2], sizes[1]);
                let z = v % sz;
                let v = v / sz;
                return [(v / sy) as i32, (v % sy) as i32, z as i32];
            }
            let (sz, sy) = (u64::from(sizes[2]), u64::from(sizes[1]));
            let z = v % sz;
            let v = v / sz;
            return [(v / sy) as i32, (v % sy) as i32, z as i32];
        }
        let mut v = 0u128;
        for k in 0..full {
            v |= u128::from(self.take(8)) << (8 * k);
        }
        if rest > 0 {
            v |= u128::from(self.take(rest)) << (8 * full);
        }
        let sz = u128::from(sizes[2]);
        let sy = u128::from(sizes[1]);
        let z = v % sz;
        let v = v / sz;
        [(v / sy) as i32, (v % sy) as i32, z as i32]
    }
}

/// Bits the coder uses for one coordinate of range `size`: the bit length of `size` (at most 32).
fn bits_for(size: u32) -> u32 {
    32 - size.leading_zeros()
}

/// Bits needed to store the product of the three sizes (as the mixed-radix coder counts them).
fn bits_for_product(sizes: [u32; 3]) -> u32 {
    let p = u128::from(sizes[0]) * u128::from(sizes[1]) * u128::from(sizes[2]);
    128 - p.leading_zeros()
}

type UnpackError = (Option<u64>, String);

/// Unpacks `n_atoms` integer triples from the compressed bit stream into `out`.
fn unpack(
    data: &[u8],
    end_bits: usize,
    n_atoms: usize,
    minint: [i32; 3],
    maxint: [i32; 3],
    smallidx: usize,
    out: &mut Vec<[i32; 3]>,
) -> Result<(), UnpackError> {
    let mut sizes = [0u32; 3];
    for ((size, &lo), &hi) in sizes.iter_mut().zip(&minint).zip(&maxint) {
        let span = i64::from(hi) - i64::from(lo) + 1;
        if !(1..=i64::from(u32::MAX)).contains(&span) {
            return Err((
                None,
                format!("expected a coordinate range with minimum <= maximum, found {lo} .. {hi}"),
            ));
        }
        *size = span as u32;
    }
    let large = sizes.iter().any(|&s| s > 0x00ff_ffff);
    let bitsize = if large { 0 } else { bits_for_product(sizes) };
    let bitsizes = sizes.map(bits_for);
    let mut smallidx = smallidx;
    if !(FIRST_IDX..MAGIC_INTS.len()).contains(&smallidx) {
        return Err((
            None,
            format!(
                "expected a small-integer size index between {FIRST_IDX} and {}, found {smallidx}",
                MAGIC_INTS.len() - 1
            ),
        ));
    }
    let magic = |i: usize| MAGIC_INTS.get(i).copied().unwrap_or(0);
    let mut smaller = (magic(FIRST_IDX.max(smallidx - 1)) / 2) as i32;
    let mut smallnum = (magic(smallidx) / 2) as i32;
    let mut sizesmall = [magic(smallidx); 3];

    let mut bits = Bits { data, pos: 0 };
    let mut run: u32 = 0;
    while out.len() < n_atoms {
        let mut c = if large {
            [
                bits.take(bitsizes[0]) as i32,
                bits.take(bitsizes[1]) as i32,
                bits.take(bitsizes[2]) as i32,
            ]
        } else {
            bits.take_ints(bitsize, sizes)
        };
        for (v, lo) in c.iter_mut().zip(minint) {
            *v = v.wrapping_add(lo);
        }
        let mut prev = c;
        let mut is_smaller: i32 = 0;
        if bits.take(1) == 1 {
            run = bits.take(5);
            is_smaller = (run % 3) as i32;
            run -= run % 3;
            is_smaller -= 1;
        }
        if run > 0 {
            if out.len() + 1 + run as usize / 3 > n_atoms {
                return Err((
                    Some(bits.pos as u64),
                    format!("the compressed data holds more than the {n_atoms} atoms the header declares"),
                ));
            }
            for k in 0..run / 3 {
                let d = bits.take_ints(smallidx as u32, sizesmall);
                let mut cur: [i32; 3] = std::array::from_fn(|j| d[j].wrapping_add(prev[j]).wrapping_sub(smallnum));
                if k == 0 {
                    // The coder swaps the first two atoms of a run (better packing of water).
                    std::mem::swap(&mut cur, &mut prev);
                    out.push(prev);
                } else {
                    prev = cur;
                }
                out.push(cur);
            }
        } else {
            out.push(c);
        }
        if is_smaller != 0 {
            let next = smallidx as i64 + i64::from(is_smaller);
            if next < FIRST_IDX as i64 || next >= MAGIC_INTS.len() as i64 {
                return Err((
                    Some(bits.pos as u64),
                    format!("damaged compressed data: the small-integer size index left its range ({next})"),
                ));
            }
            smallidx = next as usize;
            if is_smaller < 0 {
                smallnum = smaller;
                smaller = if smallidx > FIRST_IDX {
                    (magic(smallidx - 1) / 2) as i32
                } else {
                    0
                };
            } else {
                smaller = smallnum;
                smallnum = (magic(smallidx) / 2) as i32;
            }
            sizesmall = [magic(smallidx); 3];
        }
        if bits.pos > end_bits {
            return Err((
                Some((end_bits / 8) as u64),
                format!(
                    "the compressed coordinates end after {} of {n_atoms} atoms",
                    out.len().min(n_atoms)
                ),
            ));
        }
    }
    Ok(())
}
