//! LAMMPS dump trajectories (`dump atom`/`dump custom` text, `.lammpstrj`, `.dump`): a frame index
//! and random-access parsing of frames.
//!
//! Owns the LAMMPS dump format. Called by `io::load` (through [`LammpsDumpReader::open`] and the
//! [`FrameSource`] trait; the reader also describes the atoms when no topology is given), by the
//! fuzz target (through [`LammpsDumpReader::from_bytes`]), by the trajectory benchmarks and the
//! tests.
//!
//! Each frame is a block of `ITEM:` sections: `TIMESTEP`, `NUMBER OF ATOMS`, `BOX BOUNDS` (with
//! `xy xz yz` for triclinic boxes, whose bounding box is converted to the box as MDAnalysis does)
//! and `ATOMS` with the column names, then one line per atom. Opening reads every frame's header
//! and skips its atom lines by counting newlines, recording byte offsets, so frame `i` is one
//! seek, one read and one parse. Coordinates come from the first of these column sets present (the
//! order MDAnalysis uses): `x y z`, scaled `xs ys zs`, unwrapped `xu yu zu`, scaled unwrapped
//! `xsu ysu zsu`; image flags `ix iy iz` move atoms by whole box vectors when asked for
//! ([`LammpsDumpReader::set_unwrap_images`]). Scaled coordinates are turned
//! into Cartesian ones with the box vectors. As in MDAnalysis, positions are shifted so the box
//! starts at the origin, and atoms are sorted by `id`. A truncated last frame is reported and not
//! read; a file without one complete frame is an error.

use super::ReadError;
use super::dcd::ByteSource;
use super::fields::{float, int, show, tokens};
use super::lammps_data::{LammpsBox, element_from_mass_or_label};
use crate::model::element::guess_from_name;
use crate::model::{Element, Frame, FrameError, FrameSource, Name8, Structure};
use std::io::BufRead;
use std::path::{Path, PathBuf};

/// How a frame's coordinate columns are to be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CoordinateKind {
    /// `x y z`
    Wrapped,
    /// `xs ys zs`
    Scaled,
    /// `xu yu zu`
    Unwrapped,
    /// `xsu ysu zsu`
    ScaledUnwrapped,
}

impl CoordinateKind {
    fn is_scaled(self) -> bool {
        matches!(self, CoordinateKind::Scaled | CoordinateKind::ScaledUnwrapped)
    }
}

/// Column positions in a frame's atom lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Columns {
    pub count: usize,
    pub id: Option<usize>,
    pub kind: CoordinateKind,
    pub xyz: [usize; 3],
    pub image: Option<[usize; 3]>,
    pub atom_type: Option<usize>,
    pub mol: Option<usize>,
    pub element: Option<usize>,
    pub mass: Option<usize>,
    pub charge: Option<usize>,
}

/// Where one frame lives and what its header says.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DumpFrameEntry {
    /// Byte offset of the `ITEM: TIMESTEP` line.
    pub offset: u64,
    /// Byte offset of the first atom line.
    pub atoms_offset: u64,
    /// Byte offset just past the frame.
    pub end: u64,
    /// Line number (1-based) of the first atom line, for messages.
    pub atoms_line: u64,
    pub n_atoms: u64,
    pub step: i64,
    pub time: Option<f64>,
    pub bbox: LammpsBox,
    pub columns: Columns,
}

/// One atom line of the first frame: id, type name, element, molecule, charge, mass.
type AtomRow = (i64, Name8, Element, i32, Option<f32>, Option<f32>);

/// A LAMMPS dump file opened for random access.
#[derive(Debug)]
pub struct LammpsDumpReader {
    path: PathBuf,
    source: ByteSource,
    n_atoms: usize,
    frames: Vec<DumpFrameEntry>,
    warnings: Vec<String>,
    buf: Vec<u8>,
    scratch: Vec<(i64, [f64; 3])>,
    /// Move atoms by their image flags (`ix iy iz`) times the box vectors.
    unwrap_images: bool,
}

/// Reads lines of a `BufRead`, tracking the byte offset and the line number.
struct Scanner<R: BufRead> {
    inner: R,
    offset: u64,
    line: u64,
    text: Vec<u8>,
}

impl<R: BufRead> Scanner<R> {
    /// The next line (without the newline), or `None` at the end.
    fn next_line(&mut self, path: &Path) -> Result<Option<&[u8]>, ReadError> {
        self.text.clear();
        let n = <&mut R as std::io::Read>::take(&mut self.inner, 1 << 16)
            .read_until(b'\n', &mut self.text)
            .map_err(|e| ReadError::byte(path, self.offset, format!("cannot read: {e}")))?;
        if n == 0 {
            return Ok(None);
        }
        self.offset += n as u64;
        self.line += 1;
        let t = self.text.strip_suffix(b"\n").unwrap_or(&self.text);
        Ok(Some(t.strip_suffix(b"\r").unwrap_or(t)))
    }

    /// Skips `n` lines; returns how many were skipped before the end of the data, and the bytes
    /// of a last line that the data ends inside (no newline after it).
    fn skip_lines(&mut self, path: &Path, mut n: u64) -> Result<(u64, Vec<u8>), ReadError> {
        let want = n;
        let mut tail = Vec::new();
        while n > 0 {
            let buf = self
                .inner
                .fill_buf()
                .map_err(|e| ReadError::byte(path, self.offset, format!("cannot read: {e}")))?;
            if buf.is_empty() {
                break;
            }
            let mut used = buf.len();
            let mut last_newline = None;
            for i in memchr::memchr_iter(b'\n', buf) {
                last_newline = Some(i);
                n -= 1;
                if n == 0 {
                    used = i + 1;
                    break;
                }
            }
            if n > 0 {
                let from = last_newline.map_or(0, |i| i + 1);
                if last_newline.is_some() {
                    tail.clear();
                }
                if tail.len() < 1 << 16 {
                    tail.extend_from_slice(&buf[from..]);
                }
            } else {
                tail.clear();
            }
            self.inner.consume(used);
            self.offset += used as u64;
        }
        let skipped = want - n;
        self.line += skipped;
        Ok((skipped, tail))
    }
}

/// Why indexing stopped early.
enum Stop {
    /// The data ends inside the frame that starts at this offset.
    Truncated(u64),
}

fn parse_columns(path: &Path, line_no: u64, names: &[&[u8]]) -> Result<Columns, ReadError> {
    let find = |n: &[u8]| names.iter().position(|c| *c == n);
    let triple = |a: &[u8], b: &[u8], c: &[u8]| Some([find(a)?, find(b)?, find(c)?]);
    let options = [
        (CoordinateKind::Wrapped, triple(b"x", b"y", b"z")),
        (CoordinateKind::Scaled, triple(b"xs", b"ys", b"zs")),
        (CoordinateKind::Unwrapped, triple(b"xu", b"yu", b"zu")),
        (CoordinateKind::ScaledUnwrapped, triple(b"xsu", b"ysu", b"zsu")),
    ];
    let Some((kind, xyz)) = options.iter().find_map(|(k, c)| c.map(|c| (*k, c))) else {
        return Err(ReadError::line(
            path,
            line_no as usize,
            format!(
                "expected coordinate columns (x y z, xs ys zs, xu yu zu or xsu ysu zsu) after \"ITEM: ATOMS\", found {:?}",
                names
                    .iter()
                    .map(|n| String::from_utf8_lossy(n).into_owned())
                    .collect::<Vec<_>>()
                    .join(" ")
            ),
        ));
    };
    let image = triple(b"ix", b"iy", b"iz");
    Ok(Columns {
        count: names.len(),
        id: find(b"id"),
        kind,
        xyz,
        image,
        atom_type: find(b"type"),
        mol: find(b"mol"),
        element: find(b"element"),
        mass: find(b"mass"),
        charge: find(b"q"),
    })
}

/// Parses the numbers of one line of a header item.
fn numbers(path: &Path, line_no: u64, line: &[u8], want: usize, what: &str) -> Result<Vec<f64>, ReadError> {
    let v: Vec<f64> = tokens(line).filter_map(float).collect();
    if v.len() < want || tokens(line).count() != v.len() {
        return Err(ReadError::line(
            path,
            line_no as usize,
            format!("expected {want} numbers ({what}), found {:?}", show(line)),
        ));
    }
    Ok(v)
}

impl LammpsDumpReader {
    /// Opens a dump file (plain, or gzip/bzip2-compressed, which is decompressed into memory) and
    /// indexes its frames.
    pub fn open(path: &Path) -> Result<LammpsDumpReader, ReadError> {
        let (source, len) = ByteSource::open(path)?;
        LammpsDumpReader::from_source(path, source, len)
    }

    /// Reads dump data already in memory; `path` is only used in messages.
    pub fn from_bytes(path: &Path, bytes: Vec<u8>) -> Result<LammpsDumpReader, ReadError> {
        let len = bytes.len() as u64;
        LammpsDumpReader::from_source(path, ByteSource::Memory(bytes), len)
    }

    /// Whether atoms are moved by their image flags (`ix iy iz`, when the dump has them) times the
    /// box vectors. Off by default: coordinates are read as written, as MDAnalysis does.
    pub fn set_unwrap_images(&mut self, on: bool) {
        self.unwrap_images = on;
    }

    /// The frame index built when the file was opened.
    pub fn frame_entries(&self) -> &[DumpFrameEntry] {
        &self.frames
    }

    /// Non-fatal observations made while opening (a truncated last frame); `io::load` reports them
    /// with the system.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    fn from_source(path: &Path, source: ByteSource, len: u64) -> Result<LammpsDumpReader, ReadError> {
        if len == 0 {
            return Err(ReadError::line(
                path,
                1,
                "expected \"ITEM: TIMESTEP\", found an empty file",
            ));
        }
        let (frames, stop) = match &source {
            ByteSource::Memory(bytes) => index(path, std::io::Cursor::new(bytes.as_slice()))?,
            ByteSource::File(f) => {
                let f = f
                    .try_clone()
                    .map_err(|e| ReadError::file(path, format!("cannot read: {e}")))?;
                let mut r = std::io::BufReader::with_capacity(1 << 20, f);
                std::io::Seek::rewind(&mut r).map_err(|e| ReadError::file(path, format!("cannot read: {e}")))?;
                index(path, r)?
            }
        };
        let mut warnings = Vec::new();
        if let Some(Stop::Truncated(at)) = stop {
            if frames.is_empty() {
                return Err(ReadError::byte(
                    path,
                    at,
                    format!("no complete frame: the file ends at byte {len}, inside the first frame"),
                ));
            }
            warnings.push(format!(
                "{} complete frame{} found, file ends at byte {len} inside the next frame (from byte {at}); that partial frame was not read",
                frames.len(),
                if frames.len() == 1 { "" } else { "s" }
            ));
        }
        let n_atoms = frames.first().map_or(0, |f: &DumpFrameEntry| f.n_atoms as usize);
        Ok(LammpsDumpReader {
            path: path.to_path_buf(),
            source,
            n_atoms,
            frames,
            warnings,
            buf: Vec::new(),
            scratch: Vec::new(),
            unwrap_images: false,
        })
    }

    /// Reads frame 0's lines and columns (for [`LammpsDumpReader::structure`]).
    fn frame_text(&mut self, index: usize) -> Result<(DumpFrameEntry, Vec<u8>), ReadError> {
        let Some(&entry) = self.frames.get(index) else {
            return Err(ReadError::file(
                &self.path,
                format!("frame {index} requested, the file holds {} frames", self.frames.len()),
            ));
        };
        let mut buf = std::mem::take(&mut self.buf);
        buf.resize((entry.end - entry.atoms_offset) as usize, 0);
        let r = self.source.read_at(&self.path, entry.atoms_offset, &mut buf);
        match r {
            Ok(()) => Ok((entry, buf)),
            Err(e) => {
                self.buf = buf;
                Err(e)
            }
        }
    }

    /// The atoms as the first frame describes them, for a dump opened without a topology: names
    /// and types from the `type` column (or the element), elements from `element`, else `mass`,
    /// else the type, charges from `q`, residue numbers from `mol`; sorted by id like the frames.
    pub fn structure(&mut self) -> Result<Structure, ReadError> {
        let (entry, text) = self.frame_text(0)?;
        let c = entry.columns;
        let mut rows: Vec<AtomRow> = Vec::with_capacity(self.n_atoms);
        for (k, line) in text.split(|&b| b == b'\n').take(self.n_atoms).enumerate() {
            let f: Vec<&[u8]> = tokens(line).collect();
            let get = |i: Option<usize>| i.and_then(|i| f.get(i).copied());
            let id = get(c.id).and_then(int).unwrap_or(k as i64 + 1);
            let ty = get(c.atom_type).unwrap_or(b"1");
            let element_field = get(c.element);
            let mass = get(c.mass).and_then(float);
            let label = String::from_utf8_lossy(element_field.unwrap_or(ty)).into_owned();
            let element = match element_field.and_then(Element::from_symbol_bytes) {
                Some(e) => e,
                None if element_field.is_some() => guess_from_name(label.as_bytes(), b""),
                None => element_from_mass_or_label(mass, &String::from_utf8_lossy(ty)),
            };
            let resid = get(c.mol)
                .and_then(int)
                .map_or(1, |m| i32::try_from(m).unwrap_or(i32::MAX));
            let q = get(c.charge).and_then(float).map(|q| q as f32);
            rows.push((id, Name8::new(ty), element, resid, q, mass.map(|m| m as f32)));
            let _ = label;
        }
        self.buf = text;
        if c.id.is_some() {
            rows.sort_by_key(|r| r.0);
        }
        let mut s = Structure::default();
        s.reserve(rows.len());
        for r in &rows {
            s.push_atom(r.2, r.1, Name8::EMPTY, r.3, Name8::EMPTY, Name8::EMPTY);
        }
        s.types = rows.iter().map(|r| r.1).collect();
        if c.charge.is_some() {
            s.charges_e = Some(rows.iter().map(|r| r.4.unwrap_or(0.0)).collect());
        }
        if c.mass.is_some() {
            s.masses_dalton = Some(rows.iter().map(|r| r.5.unwrap_or(0.0)).collect());
        }
        Ok(s)
    }
}

/// Indexes every frame of the dump read from `r`.
fn index<R: BufRead>(path: &Path, r: R) -> Result<(Vec<DumpFrameEntry>, Option<Stop>), ReadError> {
    let mut s = Scanner {
        inner: r,
        offset: 0,
        line: 0,
        text: Vec::new(),
    };
    let mut frames: Vec<DumpFrameEntry> = Vec::new();
    loop {
        // Skip blank lines between frames.
        let start = s.offset;
        let line_no = s.line + 1;
        let Some(line) = s.next_line(path)? else { break };
        if line.trim_ascii().is_empty() {
            continue;
        }
        let frame_no = frames.len();
        if line.trim_ascii() != b"ITEM: TIMESTEP" {
            return Err(ReadError::line(
                path,
                line_no as usize,
                format!("frame {frame_no}: expected \"ITEM: TIMESTEP\", found {:?}", show(line)),
            ));
        }
        let Some(mut entry) = frame_header(path, &mut s, start, frame_no, frames.first())? else {
            return Ok((frames, Some(Stop::Truncated(start))));
        };
        let (skipped, tail) = s.skip_lines(path, entry.n_atoms)?;
        // A last line without a newline counts when it has all its columns.
        let complete =
            skipped == entry.n_atoms || (skipped + 1 == entry.n_atoms && tokens(&tail).count() == entry.columns.count);
        if !complete {
            return Ok((frames, Some(Stop::Truncated(start))));
        }
        entry.end = s.offset;
        frames.push(entry);
    }
    Ok((frames, None))
}

/// Reads the `ITEM:` lines of one frame after `ITEM: TIMESTEP`, up to and including `ITEM: ATOMS`.
/// `Ok(None)` when the data ends first.
fn frame_header<R: BufRead>(
    path: &Path,
    s: &mut Scanner<R>,
    start: u64,
    frame_no: usize,
    first: Option<&DumpFrameEntry>,
) -> Result<Option<DumpFrameEntry>, ReadError> {
    let err = |line: u64, msg: String| ReadError::line(path, line as usize, format!("frame {frame_no}: {msg}"));
    let step_no = s.line + 1;
    let Some(step_line) = s.next_line(path)? else {
        return Ok(None);
    };
    let step = int(step_line).ok_or_else(|| {
        err(
            step_no,
            format!("expected the time step (an integer), found {:?}", show(step_line)),
        )
    })?;
    let mut n_atoms: Option<u64> = None;
    let mut bbox: Option<LammpsBox> = None;
    let mut time = None;
    loop {
        let Some(item) = s.next_line(path)? else {
            return Ok(None);
        };
        let item = item.trim_ascii().to_vec();
        let item_line = s.line;
        let Some(rest) = item.strip_prefix(b"ITEM:") else {
            return Err(err(
                item_line,
                format!("expected an \"ITEM:\" line, found {:?}", show(&item)),
            ));
        };
        let rest = rest.trim_ascii();
        if rest == b"NUMBER OF ATOMS" {
            let l_no = s.line + 1;
            let Some(l) = s.next_line(path)? else { return Ok(None) };
            match int(l) {
                Some(n) if n >= 0 => n_atoms = Some(n as u64),
                _ => return Err(err(l_no, format!("expected the number of atoms, found {:?}", show(l)))),
            }
        } else if rest == b"TIME" {
            let Some(l) = s.next_line(path)? else { return Ok(None) };
            time = float(l);
        } else if rest == b"UNITS" {
            if s.next_line(path)?.is_none() {
                return Ok(None);
            }
        } else if let Some(b) = rest.strip_prefix(b"BOX BOUNDS") {
            let flags: Vec<&[u8]> = tokens(b).collect();
            if flags.first() == Some(&&b"abc"[..]) {
                return Err(err(
                    item_line,
                    "general triclinic boxes (\"BOX BOUNDS abc origin\") are not supported".to_string(),
                ));
            }
            let triclinic = flags.first() == Some(&&b"xy"[..]);
            let want = if triclinic { 3 } else { 2 };
            let mut v = [[0.0f64; 3]; 3];
            for row in v.iter_mut() {
                let l_no = s.line + 1;
                let Some(l) = s.next_line(path)? else { return Ok(None) };
                let nums = numbers(path, l_no, l, want, if triclinic { "lo hi tilt" } else { "lo hi" })?;
                for (d, x) in row.iter_mut().zip(nums) {
                    *d = x;
                }
            }
            bbox = Some(if triclinic {
                let (xy, xz, yz) = (v[0][2], v[1][2], v[2][2]);
                LammpsBox {
                    lo: [
                        v[0][0] - 0f64.min(xy).min(xz).min(xy + xz),
                        v[1][0] - 0f64.min(yz),
                        v[2][0],
                    ],
                    hi: [
                        v[0][1] - 0f64.max(xy).max(xz).max(xy + xz),
                        v[1][1] - 0f64.max(yz),
                        v[2][1],
                    ],
                    tilt: [xy, xz, yz],
                }
            } else {
                LammpsBox {
                    lo: [v[0][0], v[1][0], v[2][0]],
                    hi: [v[0][1], v[1][1], v[2][1]],
                    tilt: [0.0; 3],
                }
            });
        } else if let Some(cols) = rest.strip_prefix(b"ATOMS") {
            let names: Vec<&[u8]> = tokens(cols).collect();
            let columns = parse_columns(path, item_line, &names)?;
            let Some(n) = n_atoms else {
                return Err(err(
                    item_line,
                    "expected \"ITEM: NUMBER OF ATOMS\" before \"ITEM: ATOMS\"".to_string(),
                ));
            };
            let Some(bbox) = bbox else {
                return Err(err(
                    item_line,
                    "expected \"ITEM: BOX BOUNDS\" before \"ITEM: ATOMS\"".to_string(),
                ));
            };
            if n == 0 {
                return Err(err(
                    item_line,
                    "expected at least one atom, found \"NUMBER OF ATOMS\" 0".to_string(),
                ));
            }
            if let Some(f0) = first
                && f0.n_atoms != n
            {
                return Err(err(
                    item_line,
                    format!("expected {} atoms (as in frame 0), found {n}", f0.n_atoms),
                ));
            }
            return Ok(Some(DumpFrameEntry {
                offset: start,
                atoms_offset: s.offset,
                atoms_line: s.line + 1,
                n_atoms: n,
                step,
                time,
                bbox,
                columns,
                end: 0,
            }));
        } else {
            return Err(err(
                item_line,
                format!(
                    "expected NUMBER OF ATOMS, BOX BOUNDS, TIME, UNITS or ATOMS after \"ITEM:\", found {:?}",
                    show(rest)
                ),
            ));
        }
    }
}

impl FrameSource for LammpsDumpReader {
    fn n_atoms(&self) -> usize {
        self.n_atoms
    }

    fn n_frames(&self) -> usize {
        self.frames.len()
    }

    fn read_frame(&mut self, index: usize, out: &mut Frame) -> Result<(), FrameError> {
        self.read(index, out).map_err(FrameError::from)
    }
}

impl LammpsDumpReader {
    /// Reads frame `index` into `out` (the reader's own error type, naming the line).
    pub fn read(&mut self, index: usize, out: &mut Frame) -> Result<(), ReadError> {
        let (entry, text) = self.frame_text(index)?;
        let mut scratch = std::mem::take(&mut self.scratch);
        let shape = (self.n_atoms, self.unwrap_images);
        let r = parse_atoms(&self.path, index, &entry, &text, shape, &mut scratch, out);
        self.buf = text;
        self.scratch = scratch;
        r
    }
}

/// Parses the atom lines of one frame into `out`.
fn parse_atoms(
    path: &Path,
    index: usize,
    e: &DumpFrameEntry,
    text: &[u8],
    (n_atoms, unwrap_images): (usize, bool),
    rows: &mut Vec<(i64, [f64; 3])>,
    out: &mut Frame,
) -> Result<(), ReadError> {
    let c = e.columns;
    let m = e.bbox.vectors();
    rows.clear();
    rows.reserve(n_atoms);
    let mut line_no = e.atoms_line;
    let need = c
        .xyz
        .iter()
        .chain(c.image.iter().flatten())
        .chain(c.id.iter())
        .copied()
        .max()
        .unwrap_or(0);
    let mut fields: Vec<&[u8]> = Vec::with_capacity(c.count);
    for (k, line) in text.split(|&b| b == b'\n').take(n_atoms).enumerate() {
        fields.clear();
        fields.extend(tokens(line).take(need + 1));
        if fields.len() <= need {
            return Err(ReadError::line(
                path,
                line_no as usize,
                format!(
                    "frame {index}: expected {} columns, found {} in {:?}",
                    c.count,
                    tokens(line).count(),
                    show(line)
                ),
            ));
        }
        let bad = |col: usize| {
            ReadError::line(
                path,
                line_no as usize,
                format!(
                    "frame {index}: expected a number in column {}, found {:?}",
                    col + 1,
                    show(fields[col])
                ),
            )
        };
        let mut p = [0.0f64; 3];
        for (v, &col) in p.iter_mut().zip(&c.xyz) {
            *v = float(fields[col]).ok_or_else(|| bad(col))?;
        }
        if c.kind.is_scaled() {
            p = std::array::from_fn(|k| p[0] * m[0][k] + p[1] * m[1][k] + p[2] * m[2][k]);
        } else {
            p = std::array::from_fn(|k| p[k] - e.bbox.lo[k]);
        }
        if let Some(img) = c.image.filter(|_| unwrap_images) {
            let mut n = [0.0; 3];
            for (v, &col) in n.iter_mut().zip(&img) {
                *v = int(fields[col]).ok_or_else(|| bad(col))? as f64;
            }
            if n != [0.0; 3] {
                p = e.bbox.unwrap(p, n);
            }
        }
        let id = match c.id {
            Some(col) => int(fields[col]).ok_or_else(|| bad(col))?,
            None => k as i64,
        };
        rows.push((id, p));
        line_no += 1;
    }
    if rows.len() < n_atoms {
        return Err(ReadError::line(
            path,
            line_no as usize,
            format!("frame {index}: expected {n_atoms} atom lines, found {}", rows.len()),
        ));
    }
    out.positions_angstrom.clear();
    out.positions_angstrom.resize(n_atoms, [0.0; 3]);
    // Ids 1..=N in any order go straight to their slot; anything else is sorted.
    let direct = rows.iter().all(|(id, _)| *id >= 1 && *id as u64 <= n_atoms as u64);
    let mut placed = 0usize;
    if direct && c.id.is_some() {
        let mut seen = vec![false; n_atoms];
        for (id, p) in rows.iter() {
            let i = (*id - 1) as usize;
            if let (Some(s), Some(slot)) = (seen.get_mut(i), out.positions_angstrom.get_mut(i))
                && !*s
            {
                *s = true;
                *slot = p.map(|x| x as f32);
                placed += 1;
            }
        }
    }
    if placed != n_atoms {
        if c.id.is_some() {
            rows.sort_by_key(|r| r.0);
        }
        for (slot, (_, p)) in out.positions_angstrom.iter_mut().zip(rows.iter()) {
            *slot = p.map(|x| x as f32);
        }
    }
    // The positions were shifted so the box starts at the origin.
    out.cell = e.bbox.cell().map(|c| c.with_origin([0.0; 3]));
    out.step = Some(e.step);
    out.time_ps = None;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO: &[u8] = b"ITEM: TIMESTEP\n0\nITEM: NUMBER OF ATOMS\n2\nITEM: BOX BOUNDS pp pp pp\n-1 9\n0 10\n0 10\nITEM: ATOMS id type xs ys zs ix iy iz\n2 1 0.5 0.5 0.5 1 0 0\n1 1 0 0 0 0 0 0\nITEM: TIMESTEP\n10\nITEM: NUMBER OF ATOMS\n2\nITEM: BOX BOUNDS xy xz yz pp pp pp\n0 12 2\n0 10 0\n0 10 0\nITEM: ATOMS id type x y z\n1 1 1 2 3\n2 1 4 5 6\n";

    #[test]
    fn scaled_images_and_triclinic() {
        let mut r = LammpsDumpReader::from_bytes(Path::new("t.lammpstrj"), TWO.to_vec()).unwrap();
        assert_eq!((r.n_atoms(), r.n_frames()), (2, 2));
        let mut f = Frame::default();
        r.read_frame(0, &mut f).unwrap();
        assert_eq!(f.positions_angstrom, vec![[0.0, 0.0, 0.0], [5.0, 5.0, 5.0]]);
        r.set_unwrap_images(true);
        r.read_frame(0, &mut f).unwrap();
        assert_eq!(f.positions_angstrom, vec![[0.0, 0.0, 0.0], [15.0, 5.0, 5.0]]);
        r.read_frame(1, &mut f).unwrap();
        assert_eq!(f.step, Some(10));
        let c = f.cell.unwrap();
        assert!((c.lengths_angstrom[0] - 10.0).abs() < 1e-9);
        assert!((c.lengths_angstrom[1] - 104f64.sqrt()).abs() < 1e-9);
        let s = r.structure().unwrap();
        assert_eq!(s.len(), 2);
    }

    #[test]
    fn partial_last_frame() {
        let cut = &TWO[..TWO.len() - 5];
        let r = LammpsDumpReader::from_bytes(Path::new("t.lammpstrj"), cut.to_vec()).unwrap();
        assert_eq!(r.n_frames(), 1);
        assert!(r.warnings()[0].contains("1 complete frame found"), "{:?}", r.warnings());
        let e = LammpsDumpReader::from_bytes(Path::new("t.lammpstrj"), TWO[..60].to_vec()).unwrap_err();
        assert!(e.to_string().contains("no complete frame"), "{e}");
    }
}
