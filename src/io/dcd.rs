//! DCD trajectories (CHARMM, NAMD, X-PLOR): random-access frame reading by byte offset.
//!
//! Owns the DCD format and the small random-access byte source ([`ByteSource`]) that the XTC
//! reader shares. Called by `io::load` (through [`DcdReader::open`] and the [`FrameSource`] trait),
//! by the fuzz target (through [`DcdReader::from_bytes`]) and by the trajectory benchmarks.
//!
//! A DCD file is a sequence of Fortran unformatted records, each framed by a leading and trailing
//! length marker (4 bytes, or 8 in files from some 64-bit Fortran compilers). The endianness and
//! marker width are detected from the first record, which must be the 84-byte header starting
//! with `CORD`. Frames have a constant size (the first one is larger when atoms are fixed: it
//! holds every atom, later frames only the free ones), so frame `i` lives at an offset computed
//! from the header and is read with one seek and one read. The frame count comes from the file
//! size; a truncated last frame is reported in [`DcdReader::warnings`] and not read.
//!
//! Unit cells follow the CHARMM layout `A, gamma, B, beta, alpha, C`. Like MDAnalysis and VMD,
//! the three angles are taken as cosines when all of them lie in [-1, 1] (CHARMM, NAMD >= 2.5)
//! and as degrees otherwise.

use super::{ReadError, read_bytes};
use crate::model::{Frame, FrameError, FrameSource, UnitCell};
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

/// AKMA time unit in picoseconds (CHARMM's internal time unit; the DCD `DELTA` is given in it).
pub const PS_PER_AKMA: f64 = 0.048_888_21;

/// Where a binary trajectory's bytes come from: an open file (read with `pread`) or memory
/// (decompressed `.gz`/`.bz2` input, or bytes handed in by a caller). Shared with the XTC reader.
#[derive(Debug)]
pub(crate) enum ByteSource {
    File(File),
    Memory(Vec<u8>),
}

impl ByteSource {
    /// Opens `path`: a plain file stays on disk and is read at offsets, a gzip/bzip2 file is
    /// decompressed into memory. Returns the source and its (uncompressed) length in bytes.
    pub(crate) fn open(path: &Path) -> Result<(ByteSource, u64), ReadError> {
        let mut file = File::open(path).map_err(|e| ReadError::file(path, format!("cannot open: {e}")))?;
        let mut head = [0u8; 4];
        let mut n = 0;
        while n < head.len() {
            match file.read(&mut head[n..]) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(ReadError::file(path, format!("cannot read: {e}"))),
            }
        }
        if super::compression_of(&head[..n]) != super::Compression::None {
            let bytes = read_bytes(path)?;
            let len = bytes.len() as u64;
            return Ok((ByteSource::Memory(bytes), len));
        }
        let len = file
            .metadata()
            .map_err(|e| ReadError::file(path, format!("cannot read the file size: {e}")))?
            .len();
        Ok((ByteSource::File(file), len))
    }

    /// The current length of a plain file (it may have grown since it was opened); `None` for data
    /// held in memory, which never grows.
    pub(crate) fn current_len(&self, path: &Path) -> Result<Option<u64>, ReadError> {
        match self {
            ByteSource::File(f) => f
                .metadata()
                .map(|m| Some(m.len()))
                .map_err(|e| ReadError::file(path, format!("cannot read the file size: {e}"))),
            ByteSource::Memory(_) => Ok(None),
        }
    }

    /// Fills `buf` with the bytes at `offset`. The caller has checked that the range lies inside
    /// the source's length; a failure here is an I/O error (or a file that shrank).
    pub(crate) fn read_at(&mut self, path: &Path, offset: u64, buf: &mut [u8]) -> Result<(), ReadError> {
        match self {
            ByteSource::File(f) => read_exact_at(f, offset, buf)
                .map_err(|e| ReadError::byte(path, offset, format!("cannot read {} bytes: {e}", buf.len()))),
            ByteSource::Memory(bytes) => {
                let start = usize::try_from(offset).ok();
                let src = start.and_then(|s| s.checked_add(buf.len()).and_then(|e| bytes.get(s..e)));
                match src {
                    Some(src) => {
                        buf.copy_from_slice(src);
                        Ok(())
                    }
                    None => Err(ReadError::byte(
                        path,
                        offset,
                        format!(
                            "expected {} more bytes, the data ends at byte {}",
                            buf.len(),
                            bytes.len()
                        ),
                    )),
                }
            }
        }
    }
}

/// `buf.len()` bytes at `offset`: one positioned read (`pread`) where the system has it.
fn read_exact_at(f: &mut File, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::read_exact_at(f, buf, offset)
    }
    #[cfg(not(unix))]
    {
        use std::io::{Seek, SeekFrom};
        f.seek(SeekFrom::Start(offset)).and_then(|_| f.read_exact(buf))
    }
}

/// Byte order of a binary file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Endian {
    Little,
    Big,
}

impl Endian {
    fn u32(self, b: [u8; 4]) -> u32 {
        match self {
            Endian::Little => u32::from_le_bytes(b),
            Endian::Big => u32::from_be_bytes(b),
        }
    }
    fn i32(self, b: [u8; 4]) -> i32 {
        self.u32(b) as i32
    }
    fn f32(self, b: [u8; 4]) -> f32 {
        f32::from_bits(self.u32(b))
    }
    fn u64(self, b: [u8; 8]) -> u64 {
        match self {
            Endian::Little => u64::from_le_bytes(b),
            Endian::Big => u64::from_be_bytes(b),
        }
    }
    fn f64(self, b: [u8; 8]) -> f64 {
        f64::from_bits(self.u64(b))
    }
}

/// What the DCD header says, as parsed.
#[derive(Clone, Debug, PartialEq)]
pub struct DcdHeader {
    pub endian: Endian,
    /// Width of the Fortran record markers: 4 or 8 bytes.
    pub marker_bytes: u8,
    /// True when the file was written by CHARMM or NAMD (the last control word is the CHARMM version).
    pub charmm: bool,
    /// Frame count the header declares (NSET); often 0 or stale in files still being written.
    pub declared_frames: i64,
    /// First step (ISTART) and steps between frames (NSAVC).
    pub first_step: i64,
    pub steps_per_frame: i64,
    /// Integration time step in AKMA units (DELTA).
    pub timestep_akma: f64,
    pub has_unit_cell: bool,
    /// CHARMM four-dimensional dynamics: a fourth coordinate record per frame (skipped).
    pub has_fourth_dimension: bool,
    pub n_atoms: usize,
    /// Number of fixed atoms (NAMNF).
    pub n_fixed: usize,
    /// Title lines, trailing blanks removed.
    pub titles: Vec<String>,
}

/// A DCD file opened for random access.
#[derive(Debug)]
pub struct DcdReader {
    path: PathBuf,
    source: ByteSource,
    header: DcdHeader,
    n_atoms: usize,
    n_frames: usize,
    /// Byte offset of the first frame.
    data_offset: u64,
    first_frame_bytes: u64,
    later_frame_bytes: u64,
    /// 0-based indices of the atoms stored in frames after the first, when atoms are fixed.
    free_atoms: Vec<u32>,
    /// Positions of every atom in the first frame, when atoms are fixed (later frames start from them).
    fixed_positions: Vec<[f32; 3]>,
    warnings: Vec<String>,
    buf: Vec<u8>,
}

/// Reads `n` bytes at `*offset` of a fully known range, advancing the offset (also the NetCDF
/// header reader's cursor).
pub(crate) struct Cursor<'a> {
    pub(crate) path: &'a Path,
    pub(crate) source: &'a mut ByteSource,
    pub(crate) len: u64,
    pub(crate) offset: u64,
}

impl Cursor<'_> {
    /// The end of `n` bytes from the offset, or an error naming `what` when the file ends first.
    fn end_of(&self, n: u64, what: &str) -> Result<u64, ReadError> {
        self.offset.checked_add(n).filter(|&e| e <= self.len).ok_or_else(|| {
            ReadError::byte(
                self.path,
                self.offset,
                format!(
                    "expected {what} ({n} bytes), found the end of the file at byte {}",
                    self.len
                ),
            )
        })
    }

    /// Skips `n` bytes.
    pub(crate) fn skip(&mut self, n: u64, what: &str) -> Result<(), ReadError> {
        self.offset = self.end_of(n, what)?;
        Ok(())
    }

    pub(crate) fn take(&mut self, n: u64, what: &str) -> Result<Vec<u8>, ReadError> {
        let end = self.end_of(n, what)?;
        let mut buf = vec![0u8; n as usize];
        self.source.read_at(self.path, self.offset, &mut buf)?;
        self.offset = end;
        Ok(buf)
    }
}

fn arr4(b: &[u8], at: usize) -> [u8; 4] {
    let mut out = [0u8; 4];
    if let Some(s) = b.get(at..at + 4) {
        out.copy_from_slice(s);
    }
    out
}

fn arr8(b: &[u8], at: usize) -> [u8; 8] {
    let mut out = [0u8; 8];
    if let Some(s) = b.get(at..at + 8) {
        out.copy_from_slice(s);
    }
    out
}

/// Upper bound on atoms: the 32-bit record marker of one coordinate record holds 4 bytes per atom.
const MAX_ATOMS: u64 = (i32::MAX as u64) / 4;

impl DcdReader {
    /// Opens a DCD file (plain, or gzip/bzip2-compressed, which is decompressed into memory).
    pub fn open(path: &Path) -> Result<DcdReader, ReadError> {
        let (source, len) = ByteSource::open(path)?;
        DcdReader::from_source(path, source, len)
    }

    /// Reads DCD data already in memory; `path` is only used in messages.
    pub fn from_bytes(path: &Path, bytes: Vec<u8>) -> Result<DcdReader, ReadError> {
        let len = bytes.len() as u64;
        DcdReader::from_source(path, ByteSource::Memory(bytes), len)
    }

    /// The parsed header.
    pub fn header(&self) -> &DcdHeader {
        &self.header
    }

    /// Non-fatal observations made while opening (frames missing from a file cut short, a stale
    /// frame count), in words.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    fn from_source(path: &Path, mut source: ByteSource, len: u64) -> Result<DcdReader, ReadError> {
        let mut cur = Cursor {
            path,
            source: &mut source,
            len,
            offset: 0,
        };
        if len == 0 {
            return Err(ReadError::byte(path, 0, "expected a DCD header, found an empty file"));
        }
        // Detect byte order and marker width from the first record: marker 84, then "CORD".
        let head_len = len.min(12);
        let head = cur.take(head_len, "the DCD header record marker")?;
        cur.offset = 0;
        let (endian, mw) = detect_layout(&head).ok_or_else(|| {
            ReadError::byte(
                path,
                0,
                format!(
                    "expected a DCD header (record marker 84 followed by \"CORD\" or \"VELD\"), found bytes {}",
                    hex(&head)
                ),
            )
        })?;
        let marker = |cur: &mut Cursor<'_>, what: &str| -> Result<u64, ReadError> {
            let b = cur.take(u64::from(mw), what)?;
            Ok(if mw == 4 {
                u64::from(endian.u32(arr4(&b, 0)))
            } else {
                endian.u64(arr8(&b, 0))
            })
        };
        let expect_marker = |cur: &mut Cursor<'_>, want: u64, what: &str| -> Result<(), ReadError> {
            let at = cur.offset;
            let got = marker(cur, what)?;
            if got != want {
                return Err(ReadError::byte(
                    path,
                    at,
                    format!("expected record marker {want} ({what}), found {got}"),
                ));
            }
            Ok(())
        };

        // Header record.
        expect_marker(&mut cur, 84, "start of the header record")?;
        let hdr_at = cur.offset;
        let h = cur.take(84, "the 84-byte header record")?;
        expect_marker(&mut cur, 84, "end of the header record")?;
        let icntrl = |k: usize| endian.i32(arr4(&h, 4 + 4 * k));
        let charmm = icntrl(19) != 0;
        let timestep_akma = if charmm {
            f64::from(endian.f32(arr4(&h, 4 + 4 * 9)))
        } else {
            endian.f64(arr8(&h, 4 + 4 * 9))
        };
        let has_unit_cell = charmm && icntrl(10) != 0;
        let has_fourth_dimension = charmm && icntrl(11) == 1;
        let n_fixed_raw = icntrl(8);
        if n_fixed_raw < 0 {
            return Err(ReadError::byte(
                path,
                hdr_at + 4 + 4 * 8,
                format!("expected a fixed-atom count (NAMNF) >= 0, found {n_fixed_raw}"),
            ));
        }

        // Title record: a count of 80-character lines.
        let title_at = cur.offset;
        let title_len = marker(&mut cur, "start of the title record")?;
        if title_len < 4 || title_len > len.saturating_sub(cur.offset) {
            return Err(ReadError::byte(
                path,
                title_at,
                format!(
                    "expected a title record marker between 4 and the {} bytes left, found {title_len}",
                    len.saturating_sub(cur.offset)
                ),
            ));
        }
        // Titles are a few 80-character lines; keep at most 64 KiB of them and skip the rest.
        let kept = title_len.min(1 << 16);
        let body_at = cur.offset;
        let t = cur.take(kept, "the title record")?;
        cur.offset += title_len - kept;
        let n_titles = endian.i32(arr4(&t, 0)).max(0) as usize;
        if let Err(e) = expect_marker(&mut cur, title_len, "end of the title record") {
            // Some writers (MDAnalysis before 2.0) put NTITLE lines of 80 characters in a record
            // whose markers both say fewer; VMD's reader takes NTITLE. Accept that layout when
            // the closing marker sits after NTITLE lines.
            let by_count = 4 + 80 * n_titles as u64;
            cur.offset = body_at + by_count;
            if by_count == title_len
                || by_count > len
                || expect_marker(&mut cur, title_len, "end of the title record").is_err()
            {
                return Err(e);
            }
        }
        let t = if t.len() as u64 >= (4 + 80 * n_titles as u64).min(1 << 16) {
            t
        } else {
            let mut all = vec![0u8; (4 + 80 * n_titles).min(1 << 16)];
            cur.source.read_at(path, body_at, &mut all)?;
            all
        };
        let titles = t
            .get(4..)
            .unwrap_or_default()
            .chunks(80)
            .take(n_titles)
            .map(|l| String::from_utf8_lossy(l).trim_end_matches([' ', '\0']).to_string())
            .collect();

        // Atom count record.
        expect_marker(&mut cur, 4, "start of the atom count record")?;
        let natoms_at = cur.offset;
        let n = cur.take(4, "the atom count")?;
        expect_marker(&mut cur, 4, "end of the atom count record")?;
        let n_atoms_raw = endian.i32(arr4(&n, 0));
        if n_atoms_raw <= 0 || n_atoms_raw as u64 > MAX_ATOMS {
            return Err(ReadError::byte(
                path,
                natoms_at,
                format!("expected an atom count between 1 and {MAX_ATOMS}, found {n_atoms_raw}"),
            ));
        }
        let n_atoms = n_atoms_raw as usize;
        let n_fixed = n_fixed_raw as usize;
        if n_fixed > n_atoms {
            return Err(ReadError::byte(
                path,
                hdr_at + 4 + 4 * 8,
                format!("expected at most {n_atoms} fixed atoms (the atom count), found {n_fixed}"),
            ));
        }

        // Free-atom indices, when some atoms are fixed.
        let mut free_atoms = Vec::new();
        if n_fixed > 0 {
            let n_free = (n_atoms - n_fixed) as u64;
            expect_marker(&mut cur, 4 * n_free, "start of the free-atom index record")?;
            let idx_at = cur.offset;
            let b = cur.take(4 * n_free, "the free-atom indices")?;
            expect_marker(&mut cur, 4 * n_free, "end of the free-atom index record")?;
            free_atoms.reserve_exact(n_free as usize);
            for (k, c) in b.chunks_exact(4).enumerate() {
                let i = endian.i32(arr4(c, 0));
                if i < 1 || i as usize > n_atoms {
                    return Err(ReadError::byte(
                        path,
                        idx_at + 4 * k as u64,
                        format!("expected a free-atom index between 1 and {n_atoms}, found {i}"),
                    ));
                }
                free_atoms.push((i - 1) as u32);
            }
        }

        let data_offset = cur.offset;
        let m = u64::from(mw);
        let frame_bytes = |n: u64| {
            let rec = 2 * m + 4 * n;
            let cell = if has_unit_cell { 2 * m + 48 } else { 0 };
            cell + rec * if has_fourth_dimension { 4 } else { 3 }
        };
        let first_frame_bytes = frame_bytes(n_atoms as u64);
        let later_frame_bytes = frame_bytes((n_atoms - n_fixed) as u64);
        let declared_frames = i64::from(icntrl(0));
        let (n_frames, warnings) =
            count_frames(len, data_offset, first_frame_bytes, later_frame_bytes, declared_frames);

        let header = DcdHeader {
            endian,
            marker_bytes: mw,
            charmm,
            declared_frames,
            first_step: i64::from(icntrl(1)),
            steps_per_frame: i64::from(icntrl(2)),
            timestep_akma,
            has_unit_cell,
            has_fourth_dimension,
            n_atoms,
            n_fixed,
            titles,
        };
        let mut reader = DcdReader {
            path: path.to_path_buf(),
            source,
            header,
            n_atoms,
            n_frames,
            data_offset,
            first_frame_bytes,
            later_frame_bytes,
            free_atoms,
            fixed_positions: Vec::new(),
            warnings,
            buf: Vec::new(),
        };
        if n_fixed > 0 && n_frames > 0 {
            // The first frame holds the fixed atoms' positions for every later frame.
            let mut first = Frame::default();
            reader.read_frame(0, &mut first)?;
            reader.fixed_positions = first.positions_angstrom;
        }
        Ok(reader)
    }

    fn frame_offset(&self, index: usize) -> u64 {
        if index == 0 {
            self.data_offset
        } else {
            self.data_offset + self.first_frame_bytes + (index as u64 - 1) * self.later_frame_bytes
        }
    }
}

/// Complete frames in a file of `len` bytes whose frames start at `data_offset`, and the warnings
/// in words: frames the header declares but the file lacks (or a last frame cut short), and a frame
/// count the header understates.
fn count_frames(
    len: u64,
    data_offset: u64,
    first_frame_bytes: u64,
    later_frame_bytes: u64,
    declared_frames: i64,
) -> (usize, Vec<String>) {
    let remaining = len.saturating_sub(data_offset);
    let (n_frames, leftover) = if remaining < first_frame_bytes {
        (0u64, remaining)
    } else {
        let rest = remaining - first_frame_bytes;
        (1 + rest / later_frame_bytes.max(1), rest % later_frame_bytes.max(1))
    };
    let mut warnings = Vec::new();
    if declared_frames > 0 && declared_frames as u64 > n_frames {
        warnings.push(super::partial_frames_warning(declared_frames as u64, n_frames, len));
    } else if leftover > 0 {
        warnings.push(super::cut_short_warning(n_frames, len - leftover, len));
    }
    if declared_frames > 0 && (declared_frames as u64) < n_frames {
        warnings.push(format!(
            "header says {declared_frames} frames but the file holds {n_frames} complete frames; using {n_frames}"
        ));
    }
    (usize::try_from(n_frames).unwrap_or(usize::MAX), warnings)
}

fn detect_layout(head: &[u8]) -> Option<(Endian, u8)> {
    let magic_ok = |m: Option<&[u8]>| matches!(m, Some(b"CORD") | Some(b"VELD"));
    if magic_ok(head.get(4..8)) {
        let b = arr4(head, 0);
        if u32::from_le_bytes(b) == 84 {
            return Some((Endian::Little, 4));
        }
        if u32::from_be_bytes(b) == 84 {
            return Some((Endian::Big, 4));
        }
    }
    if magic_ok(head.get(8..12)) {
        let b = arr8(head, 0);
        if u64::from_le_bytes(b) == 84 {
            return Some((Endian::Little, 8));
        }
        if u64::from_be_bytes(b) == 84 {
            return Some((Endian::Big, 8));
        }
    }
    None
}

fn hex(b: &[u8]) -> String {
    if b.is_empty() {
        return "(none)".into();
    }
    b.iter().map(|x| format!("{x:02x}")).collect::<Vec<_>>().join(" ")
}

/// The CHARMM cell record `A, gamma, B, beta, alpha, C` as a cell, decided as MDAnalysis does:
/// angles as cosines when all three lie in [-1, 1] (CHARMM, NAMD >= 2.5); the lower triangle of
/// the box matrix when a value is negative or an "angle" exceeds 180 (newer CHARMM); degrees
/// otherwise (NAMD 2.5). `None` when the values do not form a valid box (e.g. all zeros).
fn cell_from_charmm(v: [f64; 6]) -> Option<UnitCell> {
    let [a, gamma, b, beta, alpha, c] = v;
    let angles = [alpha, beta, gamma];
    let cell = if angles.iter().all(|x| (-1.0..=1.0).contains(x)) {
        // 90 - asin(cos) equals acos(cos) but keeps right angles exact.
        UnitCell::new([a, b, c], angles.map(|x| 90.0 - x.asin().to_degrees()))
    } else if v.iter().any(|&x| x < 0.0) || angles.iter().any(|&x| x > 180.0) {
        let [h0, h1, h2, h3, h4, h5] = v;
        UnitCell::from_vectors([[h0, h1, h3], [h1, h2, h4], [h3, h4, h5]])
    } else {
        UnitCell::new([a, b, c], angles)
    };
    cell.is_valid().then_some(cell)
}

impl FrameSource for DcdReader {
    fn n_atoms(&self) -> usize {
        self.n_atoms
    }

    fn n_frames(&self) -> usize {
        self.n_frames
    }

    fn read_frame(&mut self, index: usize, out: &mut Frame) -> Result<(), FrameError> {
        DcdReader::read_frame(self, index, out).map_err(FrameError::from)
    }

    fn refresh(&mut self) -> Result<usize, FrameError> {
        DcdReader::refresh(self).map_err(FrameError::from)
    }
}

impl DcdReader {
    /// Reads frame `index` into `out`, reusing its allocation (the reader's own error type, with
    /// the byte offset where the frame went wrong).
    pub fn read_frame(&mut self, index: usize, out: &mut Frame) -> Result<(), ReadError> {
        if index >= self.n_frames {
            return Err(ReadError::file(
                &self.path,
                format!("frame {index} requested, the file holds {} frames", self.n_frames),
            ));
        }
        let offset = self.frame_offset(index);
        let size = if index == 0 {
            self.first_frame_bytes
        } else {
            self.later_frame_bytes
        };
        let mut buf = std::mem::take(&mut self.buf);
        buf.resize(size as usize, 0);
        let result = self
            .source
            .read_at(&self.path, offset, &mut buf)
            .and_then(|()| self.decode_frame(index, offset, &buf, out));
        self.buf = buf;
        result
    }

    /// Picks up frames appended since the file was opened; returns how many were added.
    pub fn refresh(&mut self) -> Result<usize, ReadError> {
        let Some(len) = self.source.current_len(&self.path)? else {
            return Ok(0);
        };
        let (n, _) = count_frames(len, self.data_offset, self.first_frame_bytes, self.later_frame_bytes, 0);
        if n <= self.n_frames {
            return Ok(0);
        }
        let before = self.n_frames;
        self.n_frames = n;
        if self.header.n_fixed > 0 && before == 0 {
            let mut first = Frame::default();
            if let Err(e) = self.read_frame(0, &mut first) {
                self.n_frames = 0;
                return Err(e);
            }
            self.fixed_positions = first.positions_angstrom;
        }
        Ok(n - before)
    }
}

impl DcdReader {
    /// Checks the markers of the record at `at` in a frame buffer and returns its payload.
    fn record<'b>(
        &self,
        buf: &'b [u8],
        frame: (usize, u64),
        at: usize,
        len: usize,
        what: &str,
    ) -> Result<&'b [u8], ReadError> {
        let (index, offset) = frame;
        let endian = self.header.endian;
        let mw = usize::from(self.header.marker_bytes);
        for (pos, which) in [(at, "start"), (at + mw + len, "end")] {
            let got = if mw == 4 {
                u64::from(endian.u32(arr4(buf, pos)))
            } else {
                endian.u64(arr8(buf, pos))
            };
            if got != len as u64 {
                return Err(ReadError::byte(
                    &self.path,
                    offset + pos as u64,
                    format!("frame {index}: expected record marker {len} ({which} of the {what} record), found {got}"),
                ));
            }
        }
        buf.get(at + mw..at + mw + len).ok_or_else(|| {
            ReadError::byte(
                &self.path,
                offset + at as u64,
                format!("frame {index}: the {what} record is cut short"),
            )
        })
    }

    fn decode_frame(&self, index: usize, offset: u64, buf: &[u8], out: &mut Frame) -> Result<(), ReadError> {
        let endian = self.header.endian;
        let mw = usize::from(self.header.marker_bytes);
        let n_stored = if index == 0 || self.no_fixed_atoms() {
            self.n_atoms
        } else {
            self.free_atoms.len()
        };
        let frame = (index, offset);
        let mut at = 0usize;
        out.cell = None;
        if self.header.has_unit_cell {
            let c = self.record(buf, frame, at, 48, "unit cell")?;
            let v: [f64; 6] = std::array::from_fn(|k| endian.f64(arr8(c, 8 * k)));
            out.cell = cell_from_charmm(v);
            at += 2 * mw + 48;
        }
        let rec_len = 4 * n_stored;
        let x = self.record(buf, frame, at, rec_len, "x coordinate")?;
        at += 2 * mw + rec_len;
        let y = self.record(buf, frame, at, rec_len, "y coordinate")?;
        at += 2 * mw + rec_len;
        let z = self.record(buf, frame, at, rec_len, "z coordinate")?;
        if self.header.has_fourth_dimension {
            at += 2 * mw + rec_len;
            self.record(buf, frame, at, rec_len, "fourth coordinate")?;
        }

        let step = self.header.first_step + index as i64 * self.header.steps_per_frame;
        out.step = Some(step);
        out.time_ps = Some(step as f64 * self.header.timestep_akma * PS_PER_AKMA);

        let coords = x
            .chunks_exact(4)
            .zip(y.chunks_exact(4))
            .zip(z.chunks_exact(4))
            .map(|((x, y), z)| [endian.f32(arr4(x, 0)), endian.f32(arr4(y, 0)), endian.f32(arr4(z, 0))]);
        if n_stored == self.n_atoms {
            out.positions_angstrom.clear();
            out.positions_angstrom.extend(coords);
        } else {
            out.positions_angstrom.clone_from(&self.fixed_positions);
            for (&i, p) in self.free_atoms.iter().zip(coords) {
                if let Some(slot) = out.positions_angstrom.get_mut(i as usize) {
                    *slot = p;
                }
            }
        }
        Ok(())
    }

    /// True when no atom is fixed (every frame stores every atom).
    fn no_fixed_atoms(&self) -> bool {
        self.header.n_fixed == 0
    }
}
