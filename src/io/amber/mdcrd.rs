//! AMBER ASCII trajectories (`.mdcrd`, `.trj`, `.crdbox`): lazy, random-access frames.
//!
//! Called by `io::load` (through [`MdcrdReader::open`], which needs the topology's atom count and
//! periodic box: the format stores neither) and by the fuzz target ([`MdcrdReader::from_bytes`]).
//!
//! Layout: one title line, then per frame `3N` coordinates (Angstrom) in `10F8.3` lines (values
//! may touch, so they are cut by column, not split on blanks), followed, in a periodic run, by a
//! box line `a b c` (`3F8.3`; the angles come from the topology: a truncated octahedron for
//! `IFBOX` 2, else 90 degrees or the topology's beta). Whether box lines are present is read from
//! the file: the line after the first frame's coordinates is a box line when it holds three values
//! and a frame's first line would hold a different number; only where both hold three (one atom)
//! does the topology's `IFBOX` decide. Opening indexes the byte offset of every frame with one pass
//! over the newlines; frame `i` is then parsed from its own bytes. A last frame cut short is
//! reported in [`MdcrdReader::warnings`]; [`FrameSource::refresh`] indexes frames appended later.

use crate::io::dcd::ByteSource;
use crate::io::fields::{float, show};
use crate::io::{ReadError, cut_short_lines_warning};
use crate::model::{Frame, FrameError, FrameSource, UnitCell};
use std::path::{Path, PathBuf};

/// Width of one value (`F8.3`) and values per line.
const WIDTH: usize = 8;
const PER_LINE: usize = 10;
/// Bytes read per pass when indexing.
const CHUNK: usize = 1 << 20;

/// What the topology says about the periodic box of an AMBER run.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BoxHint {
    /// `IFBOX` > 0: the run was periodic (decides only when the file itself is ambiguous).
    pub periodic: Option<bool>,
    /// The topology's box: its angles complete the lengths of each frame's box line.
    pub cell: Option<UnitCell>,
}

/// An AMBER ASCII trajectory opened for random access.
#[derive(Debug)]
pub struct MdcrdReader {
    path: PathBuf,
    source: ByteSource,
    /// File length in bytes when last indexed.
    len: u64,
    n_atoms: usize,
    has_box: bool,
    angles_degree: [f64; 3],
    /// Lines per frame (coordinate lines, plus the box line).
    lines_per_frame: usize,
    /// Byte offset of each complete frame's first line, then the end of the last one.
    starts: Vec<u64>,
    /// Lines of the file before the first frame's first line (the title).
    first_line: usize,
    /// Lines counted past the end of the last complete frame, and where that partial frame starts.
    partial_lines: usize,
    warnings: Vec<String>,
    buf: Vec<u8>,
}

/// Non-blank 8-column fields of a line.
fn n_values(line: &[u8]) -> usize {
    line.chunks(WIDTH).filter(|c| !c.trim_ascii().is_empty()).count()
}

fn strip_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

impl MdcrdReader {
    /// Opens an mdcrd file of `n_atoms` atoms per frame (plain, or gzip/bzip2-compressed, which is
    /// decompressed into memory).
    pub fn open(path: &Path, n_atoms: usize, hint: BoxHint) -> Result<MdcrdReader, ReadError> {
        let (source, len) = ByteSource::open(path)?;
        MdcrdReader::from_source(path, source, len, n_atoms, hint)
    }

    /// Reads mdcrd data already in memory; `path` is only used in messages.
    pub fn from_bytes(path: &Path, bytes: Vec<u8>, n_atoms: usize, hint: BoxHint) -> Result<MdcrdReader, ReadError> {
        let len = bytes.len() as u64;
        MdcrdReader::from_source(path, ByteSource::Memory(bytes), len, n_atoms, hint)
    }

    /// A last frame cut short, in words.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// True when every frame carries a box line.
    pub fn has_box(&self) -> bool {
        self.has_box
    }

    fn from_source(
        path: &Path,
        mut source: ByteSource,
        len: u64,
        n_atoms: usize,
        hint: BoxHint,
    ) -> Result<MdcrdReader, ReadError> {
        if n_atoms == 0 {
            return Err(ReadError::file(path, "an mdcrd trajectory needs a topology with atoms"));
        }
        let coord_lines = (3 * n_atoms as u64).div_ceil(PER_LINE as u64);
        // The title, the first frame's coordinate lines and the two lines after them decide the layout.
        let head_lines = usize::try_from(coord_lines.saturating_add(3)).unwrap_or(usize::MAX);
        let head = read_lines(path, &mut source, len, head_lines)?;
        if head.is_empty() {
            return Err(ReadError::line(path, 1, "expected a title line, found an empty file"));
        }
        let line_of = |k: usize| -> Option<&[u8]> { head.get(k).map(|(_, l)| l.as_slice()) };
        let coord_lines = usize::try_from(coord_lines).unwrap_or(usize::MAX);
        // Check the first frame's first line looks like coordinates, so a wrong file or a topology
        // of the wrong size fails here with a clear message.
        if let Some(first) = line_of(1) {
            let want = (3 * n_atoms).min(PER_LINE);
            let got = n_values(first);
            let numbers = first
                .chunks(WIDTH)
                .filter(|c| !c.trim_ascii().is_empty())
                .all(|c| float(c).is_some());
            if !numbers || (got != want && line_of(2).is_some()) {
                return Err(ReadError::line(
                    path,
                    2,
                    format!(
                        "expected {want} coordinates in 8-column fields (10F8.3) for {n_atoms} atoms, found {:?}",
                        show(first)
                    ),
                ));
            }
        }
        // And its last line: a topology of the wrong size puts a different count there.
        if coord_lines > 1
            && let (Some(last), Some(_)) = (line_of(coord_lines), line_of(1 + coord_lines))
        {
            let rem = (3 * n_atoms) % PER_LINE;
            let want = if rem == 0 { PER_LINE } else { rem };
            let got = n_values(last);
            if got != want {
                return Err(ReadError::line(
                    path,
                    coord_lines + 1,
                    format!(
                        "expected {want} coordinates on the last line of frame 1 for {n_atoms} atoms, found {got}: does the topology belong to this trajectory?"
                    ),
                ));
            }
        }
        let after = line_of(1 + coord_lines);
        let next_first = (3 * n_atoms).min(PER_LINE);
        let has_box = match after.map(n_values) {
            Some(k @ (3 | 6)) if k != next_first => true,
            Some(k) if k == next_first && (k == 3 || k == 6) => hint.periodic.unwrap_or(false),
            Some(_) => false,
            // A single frame: the file ends after it, or after one more line.
            None => false,
        };
        let angles_degree = hint.cell.map_or([90.0; 3], |c| c.angles_degree);
        let lines_per_frame = coord_lines + usize::from(has_box);
        let mut reader = MdcrdReader {
            path: path.to_path_buf(),
            source,
            len: 0,
            n_atoms,
            has_box,
            angles_degree,
            lines_per_frame,
            starts: Vec::new(),
            first_line: 1,
            partial_lines: 0,
            warnings: Vec::new(),
            buf: Vec::new(),
        };
        let title_len = head.first().map_or(0, |&(end, _)| end);
        reader.starts.push(title_len);
        reader.index(len)?;
        if reader.partial_lines > 0 {
            let complete = reader.n_frames() as u64;
            let start_line = reader.first_line + 1 + reader.n_frames() * lines_per_frame;
            let last_line = start_line + reader.partial_lines - 1;
            reader
                .warnings
                .push(cut_short_lines_warning(complete, start_line, last_line));
        }
        Ok(reader)
    }

    /// Counts lines from the end of the last complete frame to `len`, recording frame ends.
    fn index(&mut self, len: u64) -> Result<(), ReadError> {
        let Some(&from) = self.starts.last() else {
            return Ok(());
        };
        let mut offset = from;
        let mut lines = 0usize;
        let mut chunk = vec![0u8; CHUNK];
        // The last line of a frame at the end of the file needs no newline when it is complete.
        let mut last_line_start = from;
        while offset < len {
            let n = (len - offset).min(CHUNK as u64) as usize;
            let buf = &mut chunk[..n];
            self.source.read_at(&self.path, offset, buf)?;
            for nl in memchr::memchr_iter(b'\n', buf) {
                lines += 1;
                let end = offset + nl as u64 + 1;
                last_line_start = end;
                if lines == self.lines_per_frame {
                    self.starts.push(end);
                    lines = 0;
                }
            }
            offset += n as u64;
        }
        if last_line_start < len && lines + 1 == self.lines_per_frame {
            // An unterminated last line completes a frame when it holds all its values.
            let mut tail = vec![0u8; (len - last_line_start) as usize];
            self.source.read_at(&self.path, last_line_start, &mut tail)?;
            let want = if self.has_box {
                3
            } else {
                let rem = (3 * self.n_atoms) % PER_LINE;
                if rem == 0 { PER_LINE } else { rem }
            };
            if n_values(strip_cr(&tail)) >= want {
                self.starts.push(len);
                lines = 0;
            } else {
                lines += 1;
            }
        } else if last_line_start < len {
            lines += 1;
        }
        // Blank lines after the last frame are not a partial frame.
        self.partial_lines = if lines > 0 && !self.tail_is_blank(len)? {
            lines
        } else {
            0
        };
        self.len = len;
        Ok(())
    }

    fn tail_is_blank(&mut self, len: u64) -> Result<bool, ReadError> {
        let from = self.starts.last().copied().unwrap_or(0);
        if len.saturating_sub(from) > 4096 {
            return Ok(false);
        }
        let mut tail = vec![0u8; (len - from) as usize];
        self.source.read_at(&self.path, from, &mut tail)?;
        Ok(tail.trim_ascii().is_empty())
    }
}

/// The first `n` lines of the file with the offset just past each (at most 64 KiB per line).
fn read_lines(path: &Path, source: &mut ByteSource, len: u64, n: usize) -> Result<Vec<(u64, Vec<u8>)>, ReadError> {
    let mut out = Vec::new();
    let mut offset = 0u64;
    let mut buf = vec![0u8; 1 << 16];
    while out.len() < n && offset < len {
        let k = (len - offset).min(buf.len() as u64) as usize;
        source.read_at(path, offset, &mut buf[..k])?;
        let (line, advance) = match memchr::memchr(b'\n', &buf[..k]) {
            Some(i) => (&buf[..i], i + 1),
            None if k == buf.len() => {
                return Err(ReadError::byte(
                    path,
                    offset,
                    format!("line {} is longer than 64 KiB: not an mdcrd file", out.len() + 1),
                ));
            }
            None => (&buf[..k], k),
        };
        offset += advance as u64;
        out.push((offset, strip_cr(line).to_vec()));
    }
    Ok(out)
}

impl MdcrdReader {
    /// Atoms per frame.
    pub fn n_atoms(&self) -> usize {
        self.n_atoms
    }

    /// Complete frames found.
    pub fn n_frames(&self) -> usize {
        self.starts.len().saturating_sub(1)
    }

    /// Reads frame `index` into `out`, reusing its allocation (the reader's own error type).
    pub fn read_frame(&mut self, index: usize, out: &mut Frame) -> Result<(), ReadError> {
        let (Some(&start), Some(&end)) = (self.starts.get(index), self.starts.get(index + 1)) else {
            return Err(ReadError::file(
                &self.path,
                format!("frame {index} requested, the file holds {} frames", self.n_frames()),
            ));
        };
        let mut buf = std::mem::take(&mut self.buf);
        buf.resize((end - start) as usize, 0);
        let result = self
            .source
            .read_at(&self.path, start, &mut buf)
            .and_then(|()| self.decode(index, &buf, out));
        self.buf = buf;
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
        let before = self.n_frames();
        self.index(len)?;
        Ok(self.n_frames() - before)
    }
}

impl FrameSource for MdcrdReader {
    fn n_atoms(&self) -> usize {
        MdcrdReader::n_atoms(self)
    }

    fn n_frames(&self) -> usize {
        MdcrdReader::n_frames(self)
    }

    fn read_frame(&mut self, index: usize, out: &mut Frame) -> Result<(), FrameError> {
        MdcrdReader::read_frame(self, index, out).map_err(FrameError::from)
    }

    fn refresh(&mut self) -> Result<usize, FrameError> {
        MdcrdReader::refresh(self).map_err(FrameError::from)
    }
}

impl MdcrdReader {
    fn decode(&self, index: usize, bytes: &[u8], out: &mut Frame) -> Result<(), ReadError> {
        let first_line = self.first_line + 1 + index * self.lines_per_frame;
        let n = self.n_atoms;
        out.positions_angstrom.clear();
        out.positions_angstrom.reserve(n);
        let mut xyz = [0f32; 3];
        let mut k = 0usize;
        let mut lines = bytes.split(|&b| b == b'\n');
        let bad = |line: usize, col: usize, field: &[u8]| {
            ReadError::line(
                &self.path,
                line,
                format!(
                    "frame {index}: expected a number (F8.3) in columns {}-{}, found {:?}",
                    col * WIDTH + 1,
                    col * WIDTH + WIDTH,
                    show(field)
                ),
            )
        };
        let total = 3 * n;
        let mut line_no = first_line;
        while k < total {
            let Some(line) = lines.next() else {
                return Err(ReadError::line(
                    &self.path,
                    line_no,
                    format!("frame {index}: expected {total} coordinates, found {k}"),
                ));
            };
            let line = strip_cr(line);
            let want = (total - k).min(PER_LINE);
            for c in 0..want {
                let field = line
                    .get(c * WIDTH..((c + 1) * WIDTH).min(line.len()))
                    .unwrap_or_default();
                let v = float(field).ok_or_else(|| bad(line_no, c, field))?;
                xyz[k % 3] = v as f32;
                k += 1;
                if k.is_multiple_of(3) {
                    out.positions_angstrom.push(xyz);
                }
            }
            line_no += 1;
        }
        out.cell = None;
        if self.has_box {
            let line = strip_cr(lines.next().unwrap_or_default());
            let mut v = [0f64; 6];
            let count = n_values(line).min(6);
            for (c, slot) in v.iter_mut().enumerate().take(count.max(3)) {
                let field = line
                    .get(c * WIDTH..((c + 1) * WIDTH).min(line.len()))
                    .unwrap_or_default();
                *slot = float(field).ok_or_else(|| bad(line_no, c, field))?;
            }
            let angles = if count == 6 {
                [v[3], v[4], v[5]]
            } else {
                self.angles_degree
            };
            out.cell = Some(UnitCell::new([v[0], v[1], v[2]], angles)).filter(UnitCell::is_valid);
        }
        out.time_ps = None;
        out.step = None;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two frames of 4 atoms (12 values: lines of 10 and 2), each with a box line.
    fn text(with_box: bool, frames: usize) -> String {
        let mut s = String::from("title line\n");
        for f in 0..frames {
            let v: Vec<f64> = (0..12).map(|k| f as f64 * 100.0 + k as f64 * 1.5 - 5.0).collect();
            for chunk in v.chunks(10) {
                for x in chunk {
                    s.push_str(&format!("{x:8.3}"));
                }
                s.push('\n');
            }
            if with_box {
                s.push_str(&format!("{:8.3}{:8.3}{:8.3}\n", 30.0 + f as f64, 31.0, 32.0));
            }
        }
        s
    }

    #[test]
    fn with_and_without_box() {
        for with_box in [false, true] {
            let t = text(with_box, 3);
            let mut r = MdcrdReader::from_bytes(Path::new("t.mdcrd"), t.into_bytes(), 4, BoxHint::default()).unwrap();
            assert_eq!((r.n_frames(), r.has_box()), (3, with_box));
            assert!(r.warnings().is_empty());
            let mut f = Frame::default();
            r.read_frame(2, &mut f).unwrap();
            assert_eq!(f.positions_angstrom[0], [195.0, 196.5, 198.0]);
            assert_eq!(f.positions_angstrom[3], [208.5, 210.0, 211.5]);
            assert_eq!(
                f.cell.map(|c| c.lengths_angstrom),
                with_box.then_some([32.0, 31.0, 32.0])
            );
        }
    }

    #[test]
    fn touching_values_and_truncation() {
        let t = "t\n-100.000-200.000 300.000\n";
        let mut r = MdcrdReader::from_bytes(Path::new("t"), t.as_bytes().to_vec(), 1, BoxHint::default()).unwrap();
        let mut f = Frame::default();
        r.read_frame(0, &mut f).unwrap();
        assert_eq!(f.positions_angstrom, vec![[-100.0, -200.0, 300.0]]);
        let full = text(true, 3);
        let cut = &full[..full.len() - 30];
        let r = MdcrdReader::from_bytes(Path::new("t"), cut.as_bytes().to_vec(), 4, BoxHint::default()).unwrap();
        assert_eq!(r.n_frames(), 2);
        assert_eq!(r.warnings().len(), 1, "{:?}", r.warnings());
        assert!(
            r.warnings()[0].starts_with("2 complete frames found, the next one starts at line 8"),
            "{:?}",
            r.warnings()
        );
        // Wrong atom count: the first line does not hold 10 values.
        assert!(MdcrdReader::from_bytes(Path::new("t"), full.clone().into_bytes(), 7, BoxHint::default()).is_err());
        let garbled = full.replacen("  95.000", "  9x.000", 1);
        let mut r = MdcrdReader::from_bytes(Path::new("t"), garbled.into_bytes(), 4, BoxHint::default()).unwrap();
        let e = r.read_frame(1, &mut f).unwrap_err();
        assert_eq!(e.location, crate::io::Location::Line(5), "{e}");
    }
}
