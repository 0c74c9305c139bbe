//! The AMBER NetCDF writer: [`NetcdfEncoder`] (the bytes of a trajectory, for `io::write`, which
//! owns the file there) and [`NetcdfWriter`] (a file of its own, written to a temporary name and
//! renamed when finished). The reader and the format's description are in `super::netcdf`, whose
//! header constants this writer shares.

use super::netcdf::{NC_ATTRIBUTE, NC_DIMENSION, NC_VARIABLE, pad4};
use crate::model::Frame;
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// The bytes of an AMBER NetCDF trajectory (64-bit offset format, as cpptraj and MDAnalysis write),
/// apart from the file they go to: the header, one record per frame, and the record count that is
/// patched into the header at the end. Coordinates are float Angstrom, time float ps, and with a box
/// `cell_lengths` and `cell_angles` (double, Angstrom and degrees).
///
/// Used by [`NetcdfWriter`] and by `io::write` (`orbitfield convert -o OUT.nc`, the viewer's save).
#[derive(Clone, Debug)]
pub struct NetcdfEncoder {
    n_atoms: usize,
    with_box: bool,
}

impl NetcdfEncoder {
    /// Offset of the record count in the header (a big-endian u32, see
    /// [`NetcdfEncoder::numrecs_bytes`]).
    pub const NUMRECS_OFFSET: u64 = 4;

    /// `n_atoms` atoms per frame; `with_box`: every frame carries a periodic box. Errors (here and
    /// in [`NetcdfEncoder::record`]) do not name the file; the caller adds it.
    pub fn new(n_atoms: usize, with_box: bool) -> std::io::Result<NetcdfEncoder> {
        // Records are addressed with 64-bit offsets, but one record's size must fit in 32 bits.
        if n_atoms == 0 || (n_atoms as u64).saturating_mul(12) > u64::from(u32::MAX) - 64 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("cannot write {n_atoms} atoms per frame to AMBER NetCDF (1 to 357913941)"),
            ));
        }
        Ok(NetcdfEncoder { n_atoms, with_box })
    }

    /// Whether every frame carries a periodic box.
    pub fn with_box(&self) -> bool {
        self.with_box
    }

    /// The record count as it goes at [`NetcdfEncoder::NUMRECS_OFFSET`].
    pub fn numrecs_bytes(n_frames: u64) -> [u8; 4] {
        u32::try_from(n_frames).unwrap_or(u32::MAX - 1).to_be_bytes()
    }

    /// The header: dimensions, the AMBER global attributes, variables and their offsets, and the
    /// fixed label variables (record count 0).
    pub fn header(&self) -> Vec<u8> {
        let n = self.n_atoms as u32;
        let mut h = Vec::with_capacity(1024);
        h.extend_from_slice(b"CDF\x02");
        put_u32(&mut h, 0); // numrecs, patched at the end
        let mut dims: Vec<(&str, u32)> = vec![("frame", 0), ("spatial", 3), ("atom", n)];
        if self.with_box {
            dims.extend([("cell_spatial", 3), ("label", 5), ("cell_angular", 3)]);
        }
        put_u32(&mut h, NC_DIMENSION);
        put_u32(&mut h, dims.len() as u32);
        for (name, len) in &dims {
            put_name(&mut h, name);
            put_u32(&mut h, *len);
        }
        put_u32(&mut h, NC_ATTRIBUTE);
        let globals = [
            ("title", "orbitfield"),
            ("application", "AMBER"),
            ("program", "orbitfield"),
            ("programVersion", env!("CARGO_PKG_VERSION")),
            ("Conventions", "AMBER"),
            ("ConventionVersion", "1.0"),
        ];
        put_u32(&mut h, globals.len() as u32);
        for (k, v) in globals {
            put_text_attr(&mut h, k, v);
        }
        // (name, dimension ids, type code, units, per-record or fixed bytes)
        let mut vars: Vec<VarSpec> = vec![
            ("spatial", vec![1], 2, None, 3, false),
            ("time", vec![0], 5, Some("picosecond"), 4, true),
            (
                "coordinates",
                vec![0, 2, 1],
                5,
                Some("angstrom"),
                12 * u64::from(n),
                true,
            ),
        ];
        if self.with_box {
            vars.insert(1, ("cell_spatial", vec![3], 2, None, 3, false));
            vars.insert(2, ("cell_angular", vec![5, 4], 2, None, 15, false));
            vars.push(("cell_lengths", vec![0, 3], 6, Some("angstrom"), 24, true));
            vars.push(("cell_angles", vec![0, 5], 6, Some("degree"), 24, true));
        }
        // Header size first (offsets are 8 bytes each), then the offsets themselves.
        let mut probe = Vec::new();
        for (name, ids, _, units, _, _) in &vars {
            put_name(&mut probe, name);
            put_u32(&mut probe, ids.len() as u32);
            probe.resize(probe.len() + 4 * ids.len(), 0);
            match units {
                Some(u) => {
                    put_u32(&mut probe, NC_ATTRIBUTE);
                    put_u32(&mut probe, 1);
                    put_text_attr(&mut probe, "units", u);
                }
                None => probe.resize(probe.len() + 8, 0),
            }
            probe.resize(probe.len() + 4 + 4 + 8, 0);
        }
        let header_len = h.len() as u64 + 8 + probe.len() as u64;
        let fixed: u64 = vars.iter().filter(|v| !v.5).map(|v| pad4(v.4)).sum();
        let mut fixed_at = header_len;
        let mut record_at = header_len + fixed;
        put_u32(&mut h, NC_VARIABLE);
        put_u32(&mut h, vars.len() as u32);
        for (name, ids, code, units, bytes, is_record) in &vars {
            put_name(&mut h, name);
            put_u32(&mut h, ids.len() as u32);
            for id in ids {
                put_u32(&mut h, *id);
            }
            match units {
                Some(u) => {
                    put_u32(&mut h, NC_ATTRIBUTE);
                    put_u32(&mut h, 1);
                    put_text_attr(&mut h, "units", u);
                }
                None => {
                    put_u32(&mut h, 0);
                    put_u32(&mut h, 0);
                }
            }
            put_u32(&mut h, *code);
            put_u32(&mut h, pad4(*bytes) as u32);
            let begin = if *is_record {
                let b = record_at;
                record_at += pad4(*bytes);
                b
            } else {
                let b = fixed_at;
                fixed_at += pad4(*bytes);
                b
            };
            h.extend_from_slice(&begin.to_be_bytes());
        }
        // Fixed variables' data: the labels.
        let mut labels: Vec<u8> = Vec::new();
        for (name, ..) in vars.iter().filter(|v| !v.5) {
            let text: &[u8] = match *name {
                "spatial" => b"xyz",
                "cell_spatial" => b"abc",
                _ => b"alphabeta gamma",
            };
            labels.extend_from_slice(text);
            labels.resize(pad4(labels.len() as u64) as usize, 0);
        }
        h.extend_from_slice(&labels);
        h
    }

    /// Replaces `buf` with the record of frame number `index` (`frame.positions_angstrom` must hold
    /// the encoder's atoms; with a box, `frame.cell` must be set) at time `time_ps`.
    pub fn record(&self, index: u64, frame: &Frame, time_ps: f64, buf: &mut Vec<u8>) -> std::io::Result<()> {
        let invalid = |m: String| std::io::Error::new(std::io::ErrorKind::InvalidInput, m);
        if frame.positions_angstrom.len() != self.n_atoms {
            return Err(invalid(format!(
                "frame {index} has {} atoms, the trajectory {}",
                frame.positions_angstrom.len(),
                self.n_atoms
            )));
        }
        let cell = match (self.with_box, frame.cell) {
            (true, Some(c)) => Some(c),
            (true, None) => {
                return Err(invalid(format!(
                    "frame {index} has no periodic box, but the trajectory was created with one"
                )));
            }
            (false, _) => None,
        };
        if index >= u64::from(u32::MAX - 1) {
            return Err(invalid("too many frames for NetCDF-3".into()));
        }
        buf.clear();
        buf.reserve(4 + 12 * self.n_atoms + 48);
        buf.extend_from_slice(&(time_ps as f32).to_be_bytes());
        for p in &frame.positions_angstrom {
            for x in p {
                buf.extend_from_slice(&x.to_be_bytes());
            }
        }
        if let Some(c) = cell {
            for x in c.lengths_angstrom.iter().chain(&c.angles_degree) {
                buf.extend_from_slice(&x.to_be_bytes());
            }
        }
        Ok(())
    }
}

/// Writes an AMBER NetCDF trajectory ([`NetcdfEncoder`]) frame by frame, into a temporary file
/// beside the target that [`NetcdfWriter::finish`] renames over it: an interrupted write never
/// leaves a half-written trajectory.
pub struct NetcdfWriter {
    path: PathBuf,
    tmp: PathBuf,
    file: Option<std::io::BufWriter<std::fs::File>>,
    encoder: NetcdfEncoder,
    n_frames: u64,
    buf: Vec<u8>,
}

/// A variable the writer declares: name, dimension ids, type code, units, bytes (per record or in
/// all), and whether it is a record variable.
type VarSpec = (&'static str, Vec<u32>, u32, Option<&'static str>, u64, bool);

impl std::fmt::Debug for NetcdfWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NetcdfWriter")
            .field("path", &self.path)
            .field("encoder", &self.encoder)
            .field("n_frames", &self.n_frames)
            .finish()
    }
}

/// `e` with the file it concerns in its message.
fn in_file(path: &Path, e: std::io::Error) -> std::io::Error {
    std::io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_be_bytes());
}

fn put_name(out: &mut Vec<u8>, name: &str) {
    put_u32(out, name.len() as u32);
    out.extend_from_slice(name.as_bytes());
    out.resize(out.len() + (pad4(name.len() as u64) - name.len() as u64) as usize, 0);
}

fn put_text_attr(out: &mut Vec<u8>, name: &str, text: &str) {
    put_name(out, name);
    put_u32(out, 2);
    put_name(out, text);
}

impl NetcdfWriter {
    /// Starts writing `n_atoms` atoms per frame to `path` (through a temporary file beside it);
    /// `with_box`: every frame carries a periodic box.
    pub fn create(path: &Path, n_atoms: usize, with_box: bool) -> std::io::Result<NetcdfWriter> {
        let encoder = NetcdfEncoder::new(n_atoms, with_box).map_err(|e| in_file(path, e))?;
        let tmp = crate::io::temp_path_beside(path);
        let file = std::fs::File::create(&tmp)?;
        let mut w = NetcdfWriter {
            path: path.to_path_buf(),
            tmp,
            file: Some(std::io::BufWriter::with_capacity(1 << 20, file)),
            encoder,
            n_frames: 0,
            buf: Vec::new(),
        };
        let header = w.encoder.header();
        if let Err(e) = w.writer().and_then(|f| f.write_all(&header)) {
            w.discard();
            return Err(e);
        }
        Ok(w)
    }

    fn writer(&mut self) -> std::io::Result<&mut std::io::BufWriter<std::fs::File>> {
        self.file
            .as_mut()
            .ok_or_else(|| std::io::Error::other("the NetCDF writer is already finished"))
    }

    /// Appends one frame (`frame.positions_angstrom` must hold `n_atoms` positions; with a box,
    /// `frame.cell` must be set) at time `time_ps`.
    pub fn write_frame(&mut self, frame: &Frame, time_ps: f64) -> std::io::Result<()> {
        let mut buf = std::mem::take(&mut self.buf);
        let result = self
            .encoder
            .record(self.n_frames, frame, time_ps, &mut buf)
            .map_err(|e| in_file(&self.path, e))
            .and_then(|()| self.writer().and_then(|f| f.write_all(&buf)));
        self.buf = buf;
        result?;
        self.n_frames += 1;
        Ok(())
    }

    /// Frames written so far.
    pub fn n_frames(&self) -> u64 {
        self.n_frames
    }

    /// Writes the frame count into the header, flushes, and renames the file over the target.
    pub fn finish(mut self) -> std::io::Result<()> {
        let n = self.n_frames;
        let result = (|| {
            let mut w = self
                .file
                .take()
                .ok_or_else(|| std::io::Error::other("already finished"))?;
            w.flush()?;
            let mut f = w.into_inner().map_err(|e| e.into_error())?;
            f.seek(SeekFrom::Start(NetcdfEncoder::NUMRECS_OFFSET))?;
            f.write_all(&NetcdfEncoder::numrecs_bytes(n))?;
            f.sync_all()?;
            std::fs::rename(&self.tmp, &self.path)
        })();
        if result.is_err() {
            self.discard();
        }
        result
    }

    fn discard(&mut self) {
        self.file = None;
        let _ = std::fs::remove_file(&self.tmp);
    }
}

impl Drop for NetcdfWriter {
    /// A writer dropped without [`NetcdfWriter::finish`] leaves nothing behind.
    fn drop(&mut self) {
        if self.file.is_some() {
            self.discard();
        }
    }
}
