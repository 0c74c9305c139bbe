//! TRR trajectories (GROMACS full-precision coordinates, velocities and forces): a frame index and
//! random-access decoding.
//!
//! Owns the TRR format. Called by `io::load` (through [`TrrReader::open`] and the [`FrameSource`]
//! trait), by the fuzz target (through [`TrrReader::from_bytes`]), by the trajectory benchmarks and
//! by the tests of the TRR writer in `io::write::trr`.
//!
//! A TRR file is a sequence of frames, each an XDR (big-endian) header followed by optional blocks:
//! the box (3 vectors), the virial and pressure tensors, then coordinates, velocities and forces
//! (one vector per atom each). The header gives every block's size in bytes, so the precision
//! (single or double) follows from them, and a frame's size is known before its data is read.
//! Opening scans every header once and records each frame's byte offset, so frame `i` is read with
//! one seek and one read. Frames that carry no coordinates (velocity- or force-only output) are
//! indexed but not offered as frames; a warning says how many. A truncated last frame is reported
//! in words and not read; a file without one complete frame is an error. Lengths are converted from
//! nm to Angstrom, velocities from nm/ps to Angstrom/ps, forces from kJ/mol/nm to kJ/mol/Angstrom.

use super::ReadError;
use super::dcd::ByteSource;
use crate::model::units::ANGSTROM_PER_NANOMETRE;
use crate::model::{Frame, FrameError, FrameSource, UnitCell};
use std::path::{Path, PathBuf};

/// The frame magic number.
const MAGIC: i32 = 1993;
/// Longest version string accepted in a frame header ("GMX_trn_file" in every known writer).
const MAX_VERSION_STRING: u64 = 128;
/// Largest atom count: one block of single-precision vectors must fit a 32-bit size field.
const MAX_ATOMS: u64 = (i32::MAX as u64) / 12;

/// Where one frame lives and what its header says.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TrrFrameEntry {
    /// Byte offset of the frame's header.
    pub offset: u64,
    /// Bytes of the header (the data blocks follow it).
    pub header_bytes: u64,
    /// True for double precision (8-byte reals).
    pub double: bool,
    /// Sizes in bytes of the blocks, in file order: box, virial, pressure, x, v, f.
    pub box_bytes: u64,
    pub virial_bytes: u64,
    pub pressure_bytes: u64,
    pub x_bytes: u64,
    pub v_bytes: u64,
    pub f_bytes: u64,
    pub n_atoms: u64,
    pub step: i64,
    pub time_ps: f64,
    /// The free-energy coupling parameter lambda.
    pub lambda: f64,
}

impl TrrFrameEntry {
    /// Total bytes of the frame, header included.
    pub fn bytes(&self) -> u64 {
        self.header_bytes
            + self.box_bytes
            + self.virial_bytes
            + self.pressure_bytes
            + self.x_bytes
            + self.v_bytes
            + self.f_bytes
    }
}

/// Velocities and forces of one frame, when the file has them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TrrExtras {
    pub velocities_angstrom_per_ps: Option<Vec<[f32; 3]>>,
    pub forces_kj_per_mol_angstrom: Option<Vec<[f32; 3]>>,
    /// The free-energy coupling parameter lambda.
    pub lambda: f64,
}

/// A TRR file opened for random access.
#[derive(Debug)]
pub struct TrrReader {
    path: PathBuf,
    source: ByteSource,
    n_atoms: usize,
    /// Frames with coordinates, in file order.
    frames: Vec<TrrFrameEntry>,
    warnings: Vec<String>,
    buf: Vec<u8>,
}

fn be_u32(b: &[u8], at: usize) -> u32 {
    let mut a = [0u8; 4];
    if let Some(s) = b.get(at..at + 4) {
        a.copy_from_slice(s);
    }
    u32::from_be_bytes(a)
}

fn be_i32(b: &[u8], at: usize) -> i32 {
    be_u32(b, at) as i32
}

fn be_f64(b: &[u8], at: usize) -> f64 {
    let mut a = [0u8; 8];
    if let Some(s) = b.get(at..at + 8) {
        a.copy_from_slice(s);
    }
    f64::from_be_bytes(a)
}

/// A real of the given precision at `at`.
fn be_real(b: &[u8], at: usize, double: bool) -> f64 {
    if double {
        be_f64(b, at)
    } else {
        f64::from(f32::from_bits(be_u32(b, at)))
    }
}

/// A header problem: the offset inside the header and the message.
type HeaderError = (u64, String);

/// Parses the frame header at the start of `head` (which holds the first bytes of the frame, or
/// fewer at the end of the file). `Ok(None)`: the header is cut short by the end of the data.
fn parse_header(head: &[u8], offset: u64) -> Result<Option<TrrFrameEntry>, HeaderError> {
    if head.len() < 4 {
        return Ok(None);
    }
    let magic = be_i32(head, 0);
    if magic != MAGIC {
        let hint = if i32::from_le_bytes([head[0], head[1], head[2], head[3]]) == MAGIC {
            " (the bytes are little-endian; TRR files are big-endian XDR)"
        } else {
            ""
        };
        return Err((0, format!("expected the TRR magic number {MAGIC}, found {magic}{hint}")));
    }
    if head.len() < 12 {
        return Ok(None);
    }
    // The version string: its length plus one, then an XDR string (length, bytes, padding).
    let slen = u64::from(be_u32(head, 4));
    let n = u64::from(be_u32(head, 8));
    if n > MAX_VERSION_STRING || slen != n + 1 {
        return Err((
            8,
            format!(
                "expected a version string of at most {MAX_VERSION_STRING} bytes with its length given twice (n + 1 = {slen}), found a length of {n}"
            ),
        ));
    }
    let ints_at = (12 + n.div_ceil(4) * 4) as usize;
    // 13 integers, then time and lambda as reals of the file's precision.
    if head.len() < ints_at + 13 * 4 {
        return Ok(None);
    }
    let int = |k: usize| be_i32(head, ints_at + 4 * k);
    let names = [
        "ir_size",
        "e_size",
        "box_size",
        "vir_size",
        "pres_size",
        "top_size",
        "sym_size",
        "x_size",
        "v_size",
        "f_size",
        "natoms",
    ];
    let mut v = [0u64; 11];
    for (k, slot) in v.iter_mut().enumerate() {
        let x = int(k);
        if x < 0 {
            return Err((
                (ints_at + 4 * k) as u64,
                format!("expected {} >= 0, found {x}", names[k]),
            ));
        }
        *slot = x as u64;
    }
    let [ir, e, box_bytes, vir, pres, top, sym, x_bytes, v_bytes, f_bytes, natoms] = v;
    for (k, value) in [(0, ir), (1, e), (5, top), (6, sym)] {
        if value != 0 {
            return Err((
                (ints_at + 4 * k) as u64,
                format!(
                    "expected {} 0 (input records, energies and topologies inside TRR frames are not supported), found {value}",
                    names[k]
                ),
            ));
        }
    }
    if natoms == 0 || natoms > MAX_ATOMS {
        return Err((
            (ints_at + 40) as u64,
            format!("expected an atom count between 1 and {MAX_ATOMS}, found {natoms}"),
        ));
    }
    // Precision from the first block present, as GROMACS decides it.
    let real = if box_bytes != 0 {
        box_bytes / 9
    } else if x_bytes != 0 {
        x_bytes / (3 * natoms)
    } else if v_bytes != 0 {
        v_bytes / (3 * natoms)
    } else {
        f_bytes / (3 * natoms)
    };
    if real != 4 && real != 8 {
        return Err((
            (ints_at + 8) as u64,
            format!(
                "expected block sizes of 4-byte or 8-byte reals (box 36 or 72 bytes, vectors 12 or 24 bytes per atom), found box {box_bytes}, x {x_bytes}, v {v_bytes}, f {f_bytes} bytes for {natoms} atoms"
            ),
        ));
    }
    let double = real == 8;
    let tensor = 9 * real;
    let vectors = 3 * real * natoms;
    for (k, size, want, what) in [
        (2, box_bytes, tensor, "box"),
        (3, vir, tensor, "virial"),
        (4, pres, tensor, "pressure"),
        (7, x_bytes, vectors, "coordinate"),
        (8, v_bytes, vectors, "velocity"),
        (9, f_bytes, vectors, "force"),
    ] {
        if size != 0 && size != want {
            return Err((
                (ints_at + 4 * k) as u64,
                format!(
                    "expected a {what} block of 0 or {want} bytes ({} precision, {natoms} atoms), found {size}",
                    if double { "double" } else { "single" }
                ),
            ));
        }
    }
    let reals_at = ints_at + 13 * 4;
    let header_bytes = (reals_at as u64) + 2 * real;
    if (head.len() as u64) < header_bytes {
        return Ok(None);
    }
    Ok(Some(TrrFrameEntry {
        offset,
        header_bytes,
        double,
        box_bytes,
        virial_bytes: vir,
        pressure_bytes: pres,
        x_bytes,
        v_bytes,
        f_bytes,
        n_atoms: natoms,
        step: i64::from(int(11)),
        time_ps: be_real(head, reals_at, double),
        lambda: be_real(head, reals_at + real as usize, double),
    }))
}

impl TrrReader {
    /// Opens a TRR file (plain, or gzip/bzip2-compressed, which is decompressed into memory) and
    /// indexes its frames.
    pub fn open(path: &Path) -> Result<TrrReader, ReadError> {
        let (source, len) = ByteSource::open(path)?;
        TrrReader::from_source(path, source, len)
    }

    /// Reads TRR data already in memory; `path` is only used in messages.
    pub fn from_bytes(path: &Path, bytes: Vec<u8>) -> Result<TrrReader, ReadError> {
        let len = bytes.len() as u64;
        TrrReader::from_source(path, ByteSource::Memory(bytes), len)
    }

    /// The index of the frames with coordinates, built when the file was opened.
    pub fn frame_entries(&self) -> &[TrrFrameEntry] {
        &self.frames
    }

    /// Non-fatal observations made while opening (a truncated last frame, frames without
    /// coordinates); `io::load` reports them with the system.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    fn from_source(path: &Path, mut source: ByteSource, len: u64) -> Result<TrrReader, ReadError> {
        if len == 0 {
            return Err(ReadError::byte(
                path,
                0,
                "expected a TRR frame header, found an empty file",
            ));
        }
        let mut frames = Vec::new();
        let mut warnings = Vec::new();
        let mut n_atoms: Option<u64> = None;
        let mut without_positions = 0usize;
        let mut complete = 0usize;
        let mut offset = 0u64;
        let mut head = vec![0u8; 256];
        let mut truncated_at: Option<(u64, Option<u64>)> = None;
        while offset < len {
            let left = len - offset;
            let want = (head.len() as u64).min(left) as usize;
            let head = &mut head[..want];
            source.read_at(path, offset, head)?;
            let entry = parse_header(head, offset)
                .map_err(|(at, msg)| ReadError::byte(path, offset + at, format!("frame {complete}: {msg}")))?;
            let Some(entry) = entry else {
                truncated_at = Some((offset, None));
                break;
            };
            let natoms = entry.n_atoms;
            match n_atoms {
                None => n_atoms = Some(natoms),
                Some(n) if n != natoms => {
                    return Err(ReadError::byte(
                        path,
                        offset,
                        format!("frame {complete}: expected {n} atoms (as in frame 0), found {natoms}"),
                    ));
                }
                Some(_) => {}
            }
            let bytes = entry.bytes();
            if bytes > left {
                truncated_at = Some((offset, Some(bytes)));
                break;
            }
            complete += 1;
            if entry.x_bytes == 0 {
                without_positions += 1;
            } else {
                frames.push(entry);
            }
            offset += bytes;
        }
        if let Some((at, need)) = truncated_at {
            let need = need.map_or(String::new(), |b| format!(", which needs {b} bytes"));
            if complete == 0 {
                return Err(ReadError::byte(
                    path,
                    at,
                    format!(
                        "no complete TRR frame: the file ends at byte {len}, inside the first frame (from byte {at}{need})"
                    ),
                ));
            }
            warnings.push(format!(
                "{complete} complete frame{} found, file ends at byte {len} inside the next frame (from byte {at}{need}); that partial frame was not read",
                if complete == 1 { "" } else { "s" }
            ));
        }
        if without_positions > 0 {
            warnings.push(format!(
                "{without_positions} of {complete} frames hold no coordinates (only velocities, forces or the box) and are not offered as frames"
            ));
        }
        if frames.is_empty() {
            return Err(ReadError::file(
                path,
                format!("none of the {complete} TRR frames holds coordinates"),
            ));
        }
        Ok(TrrReader {
            path: path.to_path_buf(),
            source,
            n_atoms: n_atoms.unwrap_or(0) as usize,
            frames,
            warnings,
            buf: Vec::new(),
        })
    }

    /// Reads frame `index` into `out` and its velocities and forces (when the frame has them) into
    /// `extras`.
    pub fn read_frame_with_extras(
        &mut self,
        index: usize,
        out: &mut Frame,
        extras: &mut TrrExtras,
    ) -> Result<(), ReadError> {
        self.read(index, out, Some(extras))
    }

    fn read(&mut self, index: usize, out: &mut Frame, extras: Option<&mut TrrExtras>) -> Result<(), ReadError> {
        let Some(&entry) = self.frames.get(index) else {
            return Err(ReadError::file(
                &self.path,
                format!("frame {index} requested, the file holds {} frames", self.frames.len()),
            ));
        };
        let data_at = entry.offset + entry.header_bytes;
        let through_x = entry.box_bytes + entry.virial_bytes + entry.pressure_bytes + entry.x_bytes;
        let wanted = if extras.is_some() {
            through_x + entry.v_bytes + entry.f_bytes
        } else {
            through_x
        };
        let mut buf = std::mem::take(&mut self.buf);
        buf.resize(wanted as usize, 0);
        let result = self.source.read_at(&self.path, data_at, &mut buf);
        if result.is_ok() {
            decode(&buf, &entry, out, extras);
        }
        self.buf = buf;
        result
    }
}

/// Decodes the blocks of one frame (`buf` starts at the box block).
fn decode(buf: &[u8], entry: &TrrFrameEntry, out: &mut Frame, extras: Option<&mut TrrExtras>) {
    let double = entry.double;
    let mut at = 0usize;
    out.cell = None;
    if entry.box_bytes > 0 {
        let m: [[f64; 3]; 3] = std::array::from_fn(|r| {
            std::array::from_fn(|k| {
                be_real(buf, at + (3 * r + k) * if double { 8 } else { 4 }, double) * ANGSTROM_PER_NANOMETRE
            })
        });
        let cell = UnitCell::from_vectors(m);
        out.cell = cell.is_valid().then_some(cell);
        at += entry.box_bytes as usize;
    }
    at += (entry.virial_bytes + entry.pressure_bytes) as usize;
    out.step = Some(entry.step);
    out.time_ps = Some(entry.time_ps);
    let x = buf.get(at..at + entry.x_bytes as usize).unwrap_or_default();
    decode_vectors(x, double, ANGSTROM_PER_NANOMETRE, &mut out.positions_angstrom);
    at += entry.x_bytes as usize;
    if let Some(extras) = extras {
        extras.lambda = entry.lambda;
        let mut block = |bytes: u64, scale: f64, slot: &mut Option<Vec<[f32; 3]>>| {
            if bytes == 0 {
                *slot = None;
            } else {
                let v = slot.get_or_insert_with(Vec::new);
                decode_vectors(buf.get(at..at + bytes as usize).unwrap_or_default(), double, scale, v);
            }
            at += bytes as usize;
        };
        block(
            entry.v_bytes,
            ANGSTROM_PER_NANOMETRE,
            &mut extras.velocities_angstrom_per_ps,
        );
        block(
            entry.f_bytes,
            1.0 / ANGSTROM_PER_NANOMETRE,
            &mut extras.forces_kj_per_mol_angstrom,
        );
    }
}

/// Big-endian 3-vectors (single or double) times `scale`, into `out` (cleared first).
fn decode_vectors(bytes: &[u8], double: bool, scale: f64, out: &mut Vec<[f32; 3]>) {
    out.clear();
    if double {
        out.extend(
            bytes
                .chunks_exact(24)
                .map(|c| std::array::from_fn(|k| (be_f64(c, 8 * k) * scale) as f32)),
        );
    } else {
        let s = scale as f32;
        out.extend(
            bytes
                .chunks_exact(12)
                .map(|c| std::array::from_fn(|k| f32::from_bits(be_u32(c, 4 * k)) * s)),
        );
    }
}

impl FrameSource for TrrReader {
    fn n_atoms(&self) -> usize {
        self.n_atoms
    }

    fn n_frames(&self) -> usize {
        self.frames.len()
    }

    fn read_frame(&mut self, index: usize, out: &mut Frame) -> Result<(), FrameError> {
        self.read(index, out, None).map_err(FrameError::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One single-precision frame with a box and coordinates.
    fn frame_bytes(natoms: u32, step: i32, xs: &[[f32; 3]], box_nm: [f32; 9]) -> Vec<u8> {
        let mut b = Vec::new();
        let i = |b: &mut Vec<u8>, v: i32| b.extend_from_slice(&v.to_be_bytes());
        i(&mut b, 1993);
        i(&mut b, 13);
        i(&mut b, 12);
        b.extend_from_slice(b"GMX_trn_file");
        for v in [0, 0, 36, 0, 0, 0, 0, 12 * natoms as i32, 0, 0, natoms as i32, step, 0] {
            i(&mut b, v);
        }
        b.extend_from_slice(&(step as f32 * 0.5).to_be_bytes());
        b.extend_from_slice(&0f32.to_be_bytes());
        for v in box_nm {
            b.extend_from_slice(&v.to_be_bytes());
        }
        for p in xs {
            for v in p {
                b.extend_from_slice(&v.to_be_bytes());
            }
        }
        b
    }

    #[test]
    fn reads_frames_and_reports_a_partial_one() {
        let xs = [[0.1f32, 0.2, 0.3], [1.0, 2.0, 3.0]];
        let bx = [2.0, 0.0, 0.0, 0.0, 3.0, 0.0, 0.0, 0.0, 4.0];
        let mut bytes = frame_bytes(2, 0, &xs, bx);
        bytes.extend(frame_bytes(2, 10, &xs, bx));
        let whole = bytes.len();
        bytes.extend(&frame_bytes(2, 20, &xs, bx)[..50]);
        let mut r = TrrReader::from_bytes(Path::new("t.trr"), bytes.clone()).unwrap();
        assert_eq!((r.n_atoms(), r.n_frames()), (2, 2));
        assert_eq!(r.warnings().len(), 1);
        assert!(
            r.warnings()[0].contains(&format!("2 complete frames found, file ends at byte {}", whole + 50)),
            "{:?}",
            r.warnings()
        );
        let mut f = Frame::default();
        r.read_frame(1, &mut f).unwrap();
        assert_eq!(f.step, Some(10));
        assert!((f.positions_angstrom[1][2] - 30.0).abs() < 1e-5);
        let c = f.cell.unwrap();
        assert!((c.lengths_angstrom[2] - 40.0).abs() < 1e-9 && c.is_orthorhombic());
        let e = TrrReader::from_bytes(Path::new("t.trr"), bytes[..60].to_vec()).unwrap_err();
        assert!(e.to_string().contains("no complete TRR frame"), "{e}");
    }

    /// One double-precision frame with a box, coordinates and velocities.
    fn double_frame(xs: &[[f64; 3]], vs: &[[f64; 3]], box_nm: [f64; 9]) -> Vec<u8> {
        let n = xs.len() as i32;
        let mut b = Vec::new();
        for v in [1993i32, 13, 12] {
            b.extend_from_slice(&v.to_be_bytes());
        }
        b.extend_from_slice(b"GMX_trn_file");
        for v in [0, 0, 72, 0, 0, 0, 0, 24 * n, 24 * n, 0, n, 7, 0] {
            b.extend_from_slice(&v.to_be_bytes());
        }
        for v in [1.5f64, 0.25]
            .iter()
            .chain(&box_nm)
            .chain(xs.iter().flatten())
            .chain(vs.iter().flatten())
        {
            b.extend_from_slice(&v.to_be_bytes());
        }
        b
    }

    #[test]
    fn double_precision_with_velocities() {
        let xs = [[0.123456789012, 1.0, -2.0], [3.0, 4.0, 5.0]];
        let vs = [[1.0, 0.0, 0.0], [0.0, -1.0, 0.5]];
        let bx = [3.0, 0.0, 0.0, 1.0, 3.0, 0.0, 0.5, 0.5, 3.0];
        let mut bytes = double_frame(&xs, &vs, bx);
        bytes.extend(double_frame(&xs, &vs, bx));
        let mut r = TrrReader::from_bytes(Path::new("d.trr"), bytes).unwrap();
        assert_eq!((r.n_atoms(), r.n_frames()), (2, 2));
        assert!(r.frame_entries()[0].double);
        let (mut f, mut ex) = (Frame::default(), TrrExtras::default());
        r.read_frame_with_extras(1, &mut f, &mut ex).unwrap();
        assert_eq!((f.step, f.time_ps), (Some(7), Some(1.5)));
        assert!((f.positions_angstrom[0][0] - 1.234_567_9).abs() < 1e-6);
        assert_eq!(ex.velocities_angstrom_per_ps.unwrap()[1], [0.0, -10.0, 5.0]);
        assert!(ex.forces_kj_per_mol_angstrom.is_none());
        let c = f.cell.unwrap();
        assert!(!c.is_orthorhombic());
        assert!((c.lengths_angstrom[1] - 10f64.hypot(30.0)).abs() < 1e-9);
    }

    #[test]
    fn little_endian_is_named() {
        let mut bytes = frame_bytes(1, 0, &[[0.0; 3]], [0.0; 9]);
        bytes[..4].copy_from_slice(&1993i32.to_le_bytes());
        let e = TrrReader::from_bytes(Path::new("t.trr"), bytes).unwrap_err();
        assert!(e.to_string().contains("little-endian"), "{e}");
    }
}
