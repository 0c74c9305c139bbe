//! AMBER NetCDF trajectories and restarts: a NetCDF-3 reader (classic and 64-bit offset) with lazy,
//! random-access frames, and a writer of AMBER NetCDF trajectories.
//!
//! Called by `io::load` (through [`NetcdfReader::open`] and the [`FrameSource`] trait), by the fuzz
//! target ([`NetcdfReader::from_bytes`]), by the trajectory benchmarks, and by what writes
//! coordinates: [`NetcdfWriter`] (a file of its own) and [`NetcdfEncoder`] (the bytes, for
//! `io::write`, which owns the file there), both in `super::netcdf_write` and re-exported here.
//!
//! A NetCDF-3 file is a big-endian header (magic `CDF\x01` or `CDF\x02`, the record count,
//! dimensions, global attributes, variables with their attributes, types and file offsets) followed
//! by fixed-size variables and then records: record `i` of every record variable lies at
//! `begin + i * record_size`. The header is parsed once; frame `i` is then decoded (big-endian to
//! native, one pass) from the file's memory map straight into the caller's [`Frame`]: a plain file is
//! mapped with `io::mapped`, which turns the `SIGBUS` of a file that shrinks while mapped into a
//! normal read error; where no mapping is made (or after such a fault) the coordinates are read with
//! `pread` into the frame and byte-swapped in place. Decompressed files are decoded from memory.
//! The AMBER convention (`Conventions = "AMBER"`) names the variables: `coordinates (frame, atom,
//! spatial)` in Angstrom (times `scale_factor` when given), `cell_lengths` and `cell_angles` (degrees),
//! `time` in ps; a restart (`"AMBERRESTART"`) has the same variables without the frame dimension and
//! is one frame. Velocities and forces are skipped. NetCDF-4 files (HDF5 underneath) and the CDF-5
//! variant are refused with a message naming them.
//!
//! The frame count is the header's record count, limited to the records the file holds in full: a
//! file cut short loads its complete frames and says so once in [`NetcdfReader::warnings`];
//! [`FrameSource::refresh`] picks up records appended by a simulation that is still running.
//! Every count in the header is checked against the file size before anything is allocated.
//!
//! Large frames (256 KiB of coordinates or more) are decoded in two halves at once when the reader
//! has been given a [`Fork`] ([`FrameSource::share_decoding`]: the viewer and the CLI hand it the
//! process's pair worker from `jobs`).

use crate::io::dcd::ByteSource;
use crate::io::mapped::MappedFile;
use crate::io::{ReadError, partial_frames_warning};
use crate::model::{Fork, Frame, FrameError, FrameSource, UnitCell};
use std::path::{Path, PathBuf};
use std::sync::Arc;

mod decode;
mod header;
#[cfg(test)]
mod tests;

use decode::*;
use header::*;
pub(crate) use header::{NC_ATTRIBUTE, NC_DIMENSION, NC_VARIABLE, pad4};

/// An AMBER NetCDF trajectory or restart opened for random access.
#[derive(Debug)]
pub struct NetcdfReader {
    path: PathBuf,
    source: ByteSource,
    /// File length in bytes when last measured.
    len: u64,
    /// 1 classic, 2 64-bit offset.
    version: u8,
    /// False for a restart file (no frame dimension: one frame).
    has_records: bool,
    record_bytes: u64,
    /// Largest end (begin + bytes) of a record variable within record 0.
    record0_end: u64,
    n_atoms: usize,
    n_frames: usize,
    coordinates: Slot,
    coordinate_scale: Option<f64>,
    cell_lengths: Option<Slot>,
    cell_angles: Option<Slot>,
    time: Option<Slot>,
    conventions: String,
    warnings: Vec<String>,
    buf: Vec<u8>,
    /// The plain file mapped into memory (its first `len` bytes); `None`: read with `pread`.
    map: Option<MappedFile>,
    /// Decodes the two halves of a large frame at once ([`FrameSource::share_decoding`]).
    fork: Option<Arc<dyn Fork>>,
}

/// Decodes big-endian values into floats (as many as both slices hold).
type Decode = fn(&[u8], &mut [f32]);

/// Frames with at least this many coordinate bytes (about 22,000 atoms in single precision) are
/// decoded in two halves at once when the reader has a [`Fork`]; below it, handing half over costs
/// more than it saves.
const SPLIT_BYTES: usize = 256 * 1024;

impl NetcdfReader {
    /// Opens an AMBER NetCDF file (plain, or gzip/bzip2-compressed, which is decompressed into memory).
    pub fn open(path: &Path) -> Result<NetcdfReader, ReadError> {
        let (source, len) = ByteSource::open(path)?;
        NetcdfReader::from_source(path, source, len)
    }

    /// Reads NetCDF data already in memory; `path` is only used in messages.
    pub fn from_bytes(path: &Path, bytes: Vec<u8>) -> Result<NetcdfReader, ReadError> {
        let len = bytes.len() as u64;
        NetcdfReader::from_source(path, ByteSource::Memory(bytes), len)
    }

    /// Non-fatal observations made while opening (frames missing from a file cut short, a file
    /// without the AMBER convention attribute).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// `"AMBER"` for a trajectory, `"AMBERRESTART"` for a restart (as the file says).
    pub fn conventions(&self) -> &str {
        &self.conventions
    }

    /// 1 for the classic format, 2 for the 64-bit offset format.
    pub fn format_version(&self) -> u8 {
        self.version
    }

    /// True when frames carry a periodic box.
    pub fn has_box(&self) -> bool {
        self.cell_lengths.is_some()
    }

    /// Parses the header through `cur` (from offset 0).
    fn parse_header(cur: &mut HeaderCursor) -> Result<Header, ReadError> {
        let path = cur.path;
        let len = cur.len;
        if len < 8 {
            let head = cur.take(len, "the file")?;
            if head.starts_with(b"\x89HDF") {
                return Err(hdf5_error(path));
            }
            return Err(ReadError::byte(
                path,
                0,
                format!("expected a NetCDF header (at least 8 bytes), found a file of {len} bytes"),
            ));
        }
        let magic = cur.take(4, "the magic number")?;
        if magic.starts_with(b"\x89HDF") {
            return Err(hdf5_error(path));
        }
        let version = match magic.as_slice() {
            [b'C', b'D', b'F', 1] => 1u8,
            [b'C', b'D', b'F', 2] => 2u8,
            [b'C', b'D', b'F', 5] => {
                return Err(ReadError::byte(
                    path,
                    3,
                    "this is a CDF-5 (64-bit data) NetCDF file; only the classic and 64-bit offset formats are read (convert with `nccopy -k 64-bit-offset`)",
                ));
            }
            other => {
                return Err(ReadError::byte(
                    path,
                    0,
                    format!(
                        "expected the NetCDF magic CDF\\x01 or CDF\\x02, found bytes {}",
                        other.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(" ")
                    ),
                ));
            }
        };
        let numrecs_raw = cur.u32("the record count")?;

        let n_dims = cur.list(NC_DIMENSION, "dimensions", 8)?;
        let mut dims = Vec::with_capacity(n_dims);
        let mut record_dim = None;
        for k in 0..n_dims {
            let name = cur.name("dimension name")?;
            let len_dim = u64::from(cur.u32("dimension length")?);
            if len_dim == 0 {
                record_dim = Some(k);
            }
            dims.push(Dim { name, len: len_dim });
        }
        let global = cur.attrs()?;
        let n_vars = cur.list(NC_VARIABLE, "variables", 24)?;
        let mut vars = Vec::with_capacity(n_vars);
        for _ in 0..n_vars {
            let name = cur.name("variable name")?;
            let nd = cur.count("variable dimensions", 4)?;
            let mut ids = Vec::with_capacity(nd);
            for _ in 0..nd {
                let at = cur.offset;
                let id = cur.u32("dimension id")? as usize;
                if id >= dims.len() {
                    return Err(ReadError::byte(
                        path,
                        at,
                        format!(
                            "variable {name}: expected a dimension id below {}, found {id}",
                            dims.len()
                        ),
                    ));
                }
                ids.push(id);
            }
            let attrs = cur.attrs()?;
            let type_at = cur.offset;
            let code = cur.u32("variable type")?;
            let nc_type = NcType::from_code(code).ok_or_else(|| {
                ReadError::byte(
                    path,
                    type_at,
                    format!("variable {name}: expected a NetCDF-3 type code 1-6, found {code}"),
                )
            })?;
            let _vsize = cur.u32("variable size")?;
            let begin = if version == 1 {
                u64::from(cur.u32("variable offset")?)
            } else {
                cur.u64("variable offset")?
            };
            let is_record = ids.first().is_some_and(|&d| Some(d) == record_dim);
            let mut bytes = nc_type.size();
            for &d in ids.iter().skip(usize::from(is_record)) {
                let l = dims.get(d).map_or(0, |d| d.len);
                bytes = bytes
                    .checked_mul(l)
                    .ok_or_else(|| ReadError::byte(path, type_at, format!("variable {name}: its size overflows")))?;
            }
            vars.push(Var {
                name,
                dims: ids,
                attrs,
                nc_type,
                begin,
                bytes,
                is_record,
            });
        }
        Ok(Header {
            version,
            numrecs_raw,
            dims,
            global,
            vars,
            header_end: cur.offset,
        })
    }

    fn from_source(path: &Path, mut source: ByteSource, len: u64) -> Result<NetcdfReader, ReadError> {
        let Header {
            version,
            numrecs_raw,
            dims,
            global,
            vars,
            header_end,
        } = read_header(path, &mut source, len, 1 << 16)?;

        // Record layout: each record variable's slab is padded to 4 bytes, except when it is the only
        // record variable.
        let record_vars: Vec<&Var> = vars.iter().filter(|v| v.is_record).collect();
        let record_bytes = if record_vars.len() == 1 {
            record_vars.first().map_or(0, |v| v.bytes)
        } else {
            // Saturating: sizes from a damaged header must not wrap (a huge record then holds no frame).
            record_vars
                .iter()
                .fold(0u64, |acc, v| acc.saturating_add(pad4(v.bytes)))
        };
        let record0_end = record_vars
            .iter()
            .map(|v| v.begin.saturating_add(v.bytes))
            .max()
            .unwrap_or(0);

        let conventions = match find_attr(&global, "Conventions") {
            Some(AttrValue::Text(t)) => t.clone(),
            _ => String::new(),
        };
        let mut warnings = Vec::new();
        if !conventions.contains("AMBER") {
            warnings.push(format!(
                "the Conventions attribute is {:?}, not \"AMBER\"; reading the variables by their AMBER names",
                conventions
            ));
        }
        let var = |name: &str| vars.iter().find(|v| v.name == name);
        let coords = var("coordinates").ok_or_else(|| {
            ReadError::byte(
                path,
                header_end,
                "expected a variable named coordinates (AMBER NetCDF convention), found none",
            )
        })?;
        let shape: Vec<&Dim> = coords.dims.iter().filter_map(|&d| dims.get(d)).collect();
        let spatial = shape.last().map_or(0, |d| d.len);
        let atom_dim = if coords.is_record {
            shape.get(1).filter(|_| shape.len() == 3)
        } else {
            shape.first().filter(|_| shape.len() == 2)
        };
        let n_atoms = match atom_dim {
            Some(d) if spatial == 3 && d.len > 0 => d.len,
            _ => {
                return Err(ReadError::byte(
                    path,
                    header_end,
                    format!(
                        "expected coordinates of shape (frame, atom, 3) or (atom, 3), found ({})",
                        shape
                            .iter()
                            .map(|d| format!("{} = {}", d.name, d.len))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ));
            }
        };
        if !matches!(coords.nc_type, NcType::Float | NcType::Double) {
            return Err(ReadError::byte(
                path,
                header_end,
                format!("expected float or double coordinates, found {:?}", coords.nc_type),
            ));
        }
        if let Some(AttrValue::Text(u)) = find_attr(&coords.attrs, "units") {
            let u = u.trim().to_ascii_lowercase();
            if !u.is_empty() && u != "angstrom" && u != "angstroms" {
                return Err(ReadError::byte(
                    path,
                    header_end,
                    format!("coordinates are in {u:?}; only angstrom (the AMBER convention) is read"),
                ));
            }
        }
        let coordinate_scale = match find_attr(&coords.attrs, "scale_factor") {
            Some(AttrValue::Numbers(v)) => v.first().copied().filter(|&s| s.is_finite() && s != 1.0),
            _ => None,
        };
        let n_atoms = usize::try_from(n_atoms).unwrap_or(usize::MAX);
        let slot = |v: &Var| Slot {
            begin: v.begin,
            nc_type: v.nc_type,
            bytes: v.bytes,
        };
        let same_kind =
            |v: &&Var| v.is_record == coords.is_record && matches!(v.nc_type, NcType::Float | NcType::Double);
        let three = |v: &&Var| v.bytes == 3 * v.nc_type.size();
        let cell_lengths = var("cell_lengths").filter(same_kind).filter(three).map(slot);
        let cell_angles = var("cell_angles").filter(same_kind).filter(three).map(slot);
        let time = var("time")
            .filter(|v| v.is_record == coords.is_record && v.bytes == v.nc_type.size())
            .filter(|v| matches!(v.nc_type, NcType::Float | NcType::Double))
            .map(slot);
        if cell_lengths.is_some() != cell_angles.is_some() {
            warnings.push("only one of cell_lengths and cell_angles is present; frames have no box".into());
        }
        let (cell_lengths, cell_angles) = match (cell_lengths, cell_angles) {
            (Some(l), Some(a)) => (Some(l), Some(a)),
            _ => (None, None),
        };

        let mut reader = NetcdfReader {
            path: path.to_path_buf(),
            source,
            len,
            version,
            has_records: coords.is_record,
            record_bytes,
            record0_end,
            n_atoms,
            n_frames: 0,
            coordinates: slot(coords),
            coordinate_scale,
            cell_lengths,
            cell_angles,
            time,
            conventions,
            warnings,
            buf: Vec::new(),
            map: None,
            fork: None,
        };
        if !reader.has_records {
            // A restart: its variables must lie inside the file.
            let end = [Some(reader.coordinates), cell_lengths, cell_angles, time]
                .iter()
                .flatten()
                .map(|s| s.begin.saturating_add(s.bytes))
                .max()
                .unwrap_or(0);
            if end > len {
                return Err(ReadError::byte(
                    path,
                    len,
                    format!(
                        "the file ends at byte {len}, but its coordinates end at byte {end}: the file is cut short"
                    ),
                ));
            }
            reader.n_frames = 1;
            reader.remap();
            return Ok(reader);
        }
        let (n, warning) = reader.count_frames(numrecs_raw);
        reader.n_frames = n;
        reader.remap();
        if let Some(w) = warning {
            reader.warnings.push(w);
        }
        Ok(reader)
    }

    /// Maps the first `self.len` bytes of a plain file (replacing an older, shorter mapping).
    fn remap(&mut self) {
        self.map = None;
        if let ByteSource::File(f) = &self.source {
            self.map = MappedFile::map(f, self.len, &self.path);
        }
    }

    /// Complete records in a file of `self.len` bytes given the header's record count: the count
    /// and, when records are missing, the warning in words.
    fn count_frames(&self, numrecs_raw: u32) -> (usize, Option<String>) {
        let complete = if self.len < self.record0_end {
            0
        } else {
            match (self.len - self.record0_end).checked_div(self.record_bytes) {
                Some(k) => k + 1,
                None => u64::from(numrecs_raw != 0),
            }
        };
        if numrecs_raw == STREAMING {
            return (usize::try_from(complete).unwrap_or(usize::MAX), None);
        }
        let declared = u64::from(numrecs_raw);
        let n = declared.min(complete);
        let warning = (n < declared).then(|| partial_frames_warning(declared, n, self.len));
        (usize::try_from(n).unwrap_or(usize::MAX), warning)
    }

    /// Where `slot`'s bytes of frame `index` start, checked to lie inside the file.
    fn slot_offset(&self, slot: Slot, index: usize) -> Result<u64, ReadError> {
        (index as u64)
            .checked_mul(self.record_bytes)
            .and_then(|o| o.checked_add(slot.begin))
            .filter(|o| o.checked_add(slot.bytes).is_some_and(|e| e <= self.len))
            .ok_or_else(|| {
                ReadError::byte(
                    &self.path,
                    slot.begin,
                    format!(
                        "frame {index}: its data lies past the end of the file (byte {})",
                        self.len
                    ),
                )
            })
    }

    /// Reads `slot`'s bytes of frame `index` into `buf`.
    fn read_slot(&mut self, slot: Slot, index: usize) -> Result<(), ReadError> {
        let offset = self.slot_offset(slot, index)?;
        // The size is the same for every frame: resized (and zero-filled) once.
        if self.buf.len() != slot.bytes as usize {
            self.buf.resize(slot.bytes as usize, 0);
        }
        self.source.read_at(&self.path, offset, &mut self.buf)
    }

    /// Reads a small variable's bytes (box, time: at most 24) of frame `index` into `out`.
    fn read_small(&mut self, slot: Slot, index: usize, out: &mut [u8; 24]) -> Result<(), ReadError> {
        let offset = self.slot_offset(slot, index)?;
        let n = (slot.bytes as usize).min(24);
        self.source
            .read_at(&self.path, offset, out.get_mut(..n).unwrap_or_default())
    }

    /// The whole file's bytes when they are in memory: the mapping of a plain file, or the
    /// decompressed data.
    fn resident(&self) -> Option<&[u8]> {
        match (&self.map, &self.source) {
            (Some(m), _) => Some(m.bytes()),
            (None, ByteSource::Memory(b)) => Some(b),
            (None, ByteSource::File(_)) => None,
        }
    }

    /// Frame `index` decoded straight out of the resident bytes (one pass over them): `Ok(false)`
    /// when they are not resident or the mapping found the file shorter than when it was mapped
    /// (the mapping is then dropped, and the caller reads with `pread`).
    fn read_resident(&mut self, index: usize, out: &mut Frame) -> Result<bool, ReadError> {
        let Some(bytes) = self.resident() else {
            return Ok(false);
        };
        if !self.decode_from(bytes, 0, index, out)? {
            return Ok(false);
        }
        if self.map.as_ref().is_some_and(MappedFile::faulted) {
            tracing::debug!(
                "{}: the file shrank while mapped; reading with pread",
                self.path.display()
            );
            self.map = None;
            return Ok(false);
        }
        Ok(true)
    }

    /// Decodes frame `index` from `bytes`, the file's bytes from offset `base` on: coordinates,
    /// box and time. `Ok(false)` when `bytes` do not hold them all.
    fn decode_from(&self, bytes: &[u8], base: u64, index: usize, out: &mut Frame) -> Result<bool, ReadError> {
        let span = |slot: Slot| -> Result<Option<(NcType, &[u8])>, ReadError> {
            let at = self.slot_offset(slot, index)?;
            let part = at
                .checked_sub(base)
                .and_then(|a| usize::try_from(a).ok())
                .and_then(|a| Some((a, a.checked_add(usize::try_from(slot.bytes).ok()?)?)))
                .and_then(|(a, e)| bytes.get(a..e));
            Ok(part.map(|b| (slot.nc_type, b)))
        };
        let Some((_, raw)) = span(self.coordinates)? else {
            return Ok(false);
        };
        let mut parts: [Option<(NcType, &[u8])>; 3] = [None; 3];
        for (part, slot) in parts.iter_mut().zip([self.cell_lengths, self.cell_angles, self.time]) {
            if let Some(slot) = slot {
                let Some(p) = span(slot)? else {
                    return Ok(false);
                };
                *part = Some(p);
            }
        }
        out.positions_angstrom.resize(self.n_atoms, [0.0; 3]);
        let flat = out.positions_angstrom.as_flattened_mut();
        let (decode, value_bytes): (Decode, usize) = match self.coordinates.nc_type {
            NcType::Double => (decode_be_f64_to_f32, 8),
            _ => (decode_be_f32, 4),
        };
        match &self.fork {
            Some(fork) if raw.len() >= SPLIT_BYTES => {
                // Halves cut at a multiple of 64 values, so both keep whole vectors.
                let mid = (flat.len() / 2) & !63;
                let (flat_a, flat_b) = flat.split_at_mut(mid);
                let (raw_a, raw_b) = raw.split_at(mid.saturating_mul(value_bytes).min(raw.len()));
                fork.join(&mut || decode(raw_a, flat_a), &mut || decode(raw_b, flat_b));
            }
            _ => decode(raw, flat),
        }
        finish_frame(out, self.coordinate_scale, parts);
        Ok(true)
    }

    /// Frame `index` read with `pread`. Coordinates, box and time usually lie together in a
    /// record (nothing else between them): then one read of their span and one decoding pass.
    /// Otherwise (velocities or forces between them) float coordinates are read straight into
    /// `out` and byte-swapped in place, the box and time by small reads of their own.
    fn read_positioned(&mut self, index: usize, out: &mut Frame) -> Result<(), ReadError> {
        let all = [Some(self.coordinates), self.cell_lengths, self.cell_angles, self.time];
        let begin = all.iter().flatten().map(|s| s.begin).min().unwrap_or(0);
        let end = all
            .iter()
            .flatten()
            .map(|s| s.begin.saturating_add(s.bytes))
            .max()
            .unwrap_or(0);
        let needed: u64 = all.iter().flatten().map(|s| s.bytes).sum();
        if end.saturating_sub(begin) <= needed.saturating_add(4096) {
            let span = Slot {
                begin,
                nc_type: NcType::Byte,
                bytes: end.saturating_sub(begin),
            };
            self.read_slot(span, index)?;
            let base = self.slot_offset(span, index)?;
            let buf = std::mem::take(&mut self.buf);
            let decoded = self.decode_from(&buf, base, index, out);
            self.buf = buf;
            if decoded? {
                return Ok(());
            }
        }
        self.read_apart(index, out)
    }

    /// Frame `index` read variable by variable with `pread` (see [`NetcdfReader::read_positioned`]).
    fn read_apart(&mut self, index: usize, out: &mut Frame) -> Result<(), ReadError> {
        let coords = self.coordinates;
        let n = self.n_atoms;
        out.positions_angstrom.resize(n, [0.0; 3]);
        if coords.nc_type == NcType::Double {
            self.read_slot(coords, index)?;
            decode_be_f64_to_f32(&self.buf, out.positions_angstrom.as_flattened_mut());
        } else {
            let offset = self.slot_offset(coords, index)?;
            let flat = out.positions_angstrom.as_flattened_mut();
            let dest: &mut [u8] = bytemuck::cast_slice_mut(flat);
            let want = usize::try_from(coords.bytes).unwrap_or(usize::MAX);
            let Some(dest) = dest.get_mut(..want) else {
                return Err(ReadError::byte(
                    &self.path,
                    coords.begin,
                    format!("expected {} coordinate bytes per frame, found {want}", 12 * n),
                ));
            };
            self.source.read_at(&self.path, offset, dest)?;
            be_to_native_in_place(flat);
        }
        let mut small_bytes = [[0u8; 24]; 3];
        let small = [self.cell_lengths, self.cell_angles, self.time];
        for (slot, bytes) in small.iter().zip(&mut small_bytes) {
            if let Some(slot) = slot {
                self.read_small(*slot, index, bytes)?;
            }
        }
        let mut parts: [Option<(NcType, &[u8])>; 3] = [None; 3];
        for ((part, slot), bytes) in parts.iter_mut().zip(&small).zip(&small_bytes) {
            if let Some(slot) = slot {
                *part = Some((slot.nc_type, &bytes[..(slot.bytes as usize).min(24)]));
            }
        }
        finish_frame(out, self.coordinate_scale, parts);
        Ok(())
    }
}

impl NetcdfReader {
    /// Atoms per frame.
    pub fn n_atoms(&self) -> usize {
        self.n_atoms
    }

    /// Complete frames found.
    pub fn n_frames(&self) -> usize {
        self.n_frames
    }

    /// Reads frame `index` into `out`, reusing its allocation (the reader's own error type).
    ///
    /// Decoded straight out of the file's memory map (or the decompressed bytes); with `pread`
    /// where the file is not mapped or shrank since it was (see `io::mapped`).
    pub fn read_frame(&mut self, index: usize, out: &mut Frame) -> Result<(), ReadError> {
        if index >= self.n_frames {
            return Err(ReadError::file(
                &self.path,
                format!("frame {index} requested, the file holds {} frames", self.n_frames),
            ));
        }
        if self.read_resident(index, out)? {
            return Ok(());
        }
        self.read_positioned(index, out)
    }

    /// Picks up frames appended since the file was opened; returns how many were added.
    pub fn refresh(&mut self) -> Result<usize, ReadError> {
        if !self.has_records {
            return Ok(0);
        }
        let Some(len) = self.source.current_len(&self.path)? else {
            return Ok(0);
        };
        if len <= self.len {
            return Ok(0);
        }
        let mut b = [0u8; 4];
        self.source.read_at(&self.path, 4, &mut b)?;
        self.len = len;
        self.remap();
        let (n, _) = self.count_frames(u32::from_be_bytes(b));
        let added = n.saturating_sub(self.n_frames);
        self.n_frames = self.n_frames.max(n);
        Ok(added)
    }
}

impl FrameSource for NetcdfReader {
    fn n_atoms(&self) -> usize {
        NetcdfReader::n_atoms(self)
    }

    fn n_frames(&self) -> usize {
        NetcdfReader::n_frames(self)
    }

    fn read_frame(&mut self, index: usize, out: &mut Frame) -> Result<(), FrameError> {
        NetcdfReader::read_frame(self, index, out).map_err(FrameError::from)
    }

    fn refresh(&mut self) -> Result<usize, FrameError> {
        NetcdfReader::refresh(self).map_err(FrameError::from)
    }

    fn share_decoding(&mut self, fork: Arc<dyn Fork>) {
        self.fork = Some(fork);
    }
}

pub use super::netcdf_write::{NetcdfEncoder, NetcdfWriter};
