//! File readers and writers, and format detection.
//!
//! One file per format. Every reader reports problems as a [`ReadError`] naming the file, the line
//! (text formats) or byte offset (binary formats), and what was expected versus found; no reader
//! panics or allocates from an unchecked count. Compressed files (`.gz`, `.bz2`, or by magic bytes)
//! are decompressed transparently by [`read_bytes`]. [`load`] turns a list of paths into a
//! [`System`] (structure + trajectory + wavefunctions), which is what the CLI and the viewer open;
//! [`load_with`] also resolves the QM region that wavefunctions of part of an MD system describe.

pub mod amber;
pub mod bcif;
pub mod charmm_crd;
pub mod cube;
pub mod dcd;
pub mod dlpoly;
pub mod dx;
pub(crate) mod ecp;
pub mod fchk;
pub mod fetch;
pub mod fields;
pub mod gro;
pub mod join;
pub mod lammps_data;
pub mod lammps_dump;
pub mod load;
pub(crate) mod mapped;
pub mod mkl;
pub mod mmcif;
pub mod mol2;
pub mod molden;
pub mod namdbin;
pub mod open_paths;
pub mod pdb;
pub mod psf;
pub mod qmlog;
pub mod sdf;
mod series;
pub mod sniff;
pub mod text;
pub mod tinker;
pub mod tpr;
pub mod trr;
pub mod wfn;
pub mod wfx;
pub mod write;
pub mod xtc;
pub mod xyz;
// Implicit ligand sampling: CHARMM NONBONDED parameters and the per-atom Lennard-Jones resolver.
pub mod charmm_prm;
pub mod ils_params;

use crate::model::FrameError;
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

pub use load::{LoadOptions, System, load, load_with};
pub use sniff::Format;

/// Where in a file a problem was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Location {
    /// No particular place (e.g. the file could not be opened).
    None,
    /// 1-based line number.
    Line(usize),
    /// 0-based byte offset.
    Byte(u64),
}

/// A problem reading a file: which file, where, and what was expected versus found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ReadError {
    pub path: PathBuf,
    pub location: Location,
    pub message: String,
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.location {
            Location::None => write!(f, "{}: {}", self.path.display(), self.message),
            Location::Line(n) => write!(f, "{}:{}: {}", self.path.display(), n, self.message),
            Location::Byte(b) => write!(f, "{} (byte {}): {}", self.path.display(), b, self.message),
        }
    }
}

impl ReadError {
    pub fn new(path: impl Into<PathBuf>, location: Location, message: impl Into<String>) -> ReadError {
        ReadError {
            path: path.into(),
            location,
            message: message.into(),
        }
    }

    /// A problem on a 1-based line of a text file.
    pub fn line(path: &Path, line: usize, message: impl Into<String>) -> ReadError {
        ReadError::new(path, Location::Line(line), message)
    }

    /// A problem at a byte offset of a binary file.
    pub fn byte(path: &Path, offset: u64, message: impl Into<String>) -> ReadError {
        ReadError::new(path, Location::Byte(offset), message)
    }

    /// A problem with the file as a whole.
    pub fn file(path: &Path, message: impl Into<String>) -> ReadError {
        ReadError::new(path, Location::None, message)
    }
}

/// A reader's error travels through the model's frame sources inside a `FrameError`.
impl From<ReadError> for FrameError {
    fn from(e: ReadError) -> FrameError {
        FrameError::Source(std::sync::Arc::new(e))
    }
}

/// Back from a frame source: the reader's own error when it was one, else the model's message
/// (no file to name: `<trajectory>`).
impl From<FrameError> for ReadError {
    fn from(e: FrameError) -> ReadError {
        if let FrameError::Source(s) = &e
            && let Some(r) = s.downcast_ref::<ReadError>()
        {
            return r.clone();
        }
        ReadError::new("<trajectory>", Location::None, e.to_string())
    }
}

/// The one warning a trajectory reader gives when its header promises more frames than the file
/// holds in full: "header says 98 frames, 1 complete frame found, file ends at byte 50000".
pub fn partial_frames_warning(declared_frames: u64, complete_frames: u64, file_bytes: u64) -> String {
    format!(
        "header says {declared_frames} frame{}, {complete_frames} complete frame{} found, file ends at byte {file_bytes}",
        plural(declared_frames),
        plural(complete_frames)
    )
}

/// The one warning a trajectory reader without a declared frame count gives when its last frame is
/// cut short: "3 complete frames found, the next one starts at byte 45000 but the file ends at
/// byte 50000".
pub fn cut_short_warning(complete_frames: u64, partial_frame_offset: u64, file_bytes: u64) -> String {
    format!(
        "{complete_frames} complete frame{} found, the next one starts at byte {partial_frame_offset} but the file ends at byte {file_bytes}",
        plural(complete_frames)
    )
}

/// The same for text formats, which count lines: "3 complete frames found, the next one starts at
/// line 1200 but the file ends at line 1290".
pub fn cut_short_lines_warning(complete_frames: u64, partial_frame_line: usize, last_line: usize) -> String {
    format!(
        "{complete_frames} complete frame{} found, the next one starts at line {partial_frame_line} but the file ends at line {last_line}",
        plural(complete_frames)
    )
}

fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Compression wrapper detected from magic bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    None,
    Gzip,
    Bzip2,
}

/// Detects gzip/bzip2 from the first bytes of a file.
pub fn compression_of(head: &[u8]) -> Compression {
    if head.starts_with(&[0x1f, 0x8b]) {
        Compression::Gzip
    } else if head.starts_with(b"BZh") && head.get(3).is_some_and(|c| (b'1'..=b'9').contains(c)) {
        Compression::Bzip2
    } else {
        Compression::None
    }
}

/// The file name with a `.gz`/`.bz2` suffix removed, for extension-based format detection.
pub fn uncompressed_name(path: &Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    for suffix in [".gz", ".bz2", ".GZ", ".BZ2"] {
        if let Some(stripped) = name.strip_suffix(suffix) {
            return stripped.to_string();
        }
    }
    name
}

/// Reads a whole file, decompressing gzip or bzip2 content. Errors name the file.
pub fn read_bytes(path: &Path) -> Result<Vec<u8>, ReadError> {
    let raw = std::fs::read(path).map_err(|e| ReadError::file(path, format!("cannot read: {e}")))?;
    decompress(path, raw)
}

/// Decompresses `raw` when it carries a gzip or bzip2 header; returns it unchanged otherwise.
pub fn decompress(path: &Path, raw: Vec<u8>) -> Result<Vec<u8>, ReadError> {
    match compression_of(&raw) {
        Compression::None => Ok(raw),
        Compression::Gzip => {
            let mut out = Vec::new();
            flate2::read::MultiGzDecoder::new(raw.as_slice())
                .read_to_end(&mut out)
                .map_err(|e| ReadError::file(path, format!("gzip data is damaged: {e}")))?;
            Ok(out)
        }
        Compression::Bzip2 => {
            let mut out = Vec::new();
            bzip2::read::MultiBzDecoder::new(raw.as_slice())
                .read_to_end(&mut out)
                .map_err(|e| ReadError::file(path, format!("bzip2 data is damaged: {e}")))?;
            Ok(out)
        }
    }
}

/// A temporary file name in the directory of `path` (hidden, with the process id), for writing a
/// file that is then renamed over `path`.
pub fn temp_path_beside(path: &Path) -> std::path::PathBuf {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    dir.join(format!(".{name}.tmp{}", std::process::id()))
}

/// Writes `bytes` to `path` atomically: to a temporary file beside it, then renamed over it, so a
/// failure never leaves a half-written file.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let tmp = temp_path_beside(path);
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_file_warnings_in_words() {
        assert_eq!(
            partial_frames_warning(98, 1, 50000),
            "header says 98 frames, 1 complete frame found, file ends at byte 50000"
        );
        assert_eq!(
            cut_short_warning(3, 45000, 50000),
            "3 complete frames found, the next one starts at byte 45000 but the file ends at byte 50000"
        );
    }

    #[test]
    fn detects_compression() {
        assert_eq!(compression_of(&[0x1f, 0x8b, 8]), Compression::Gzip);
        assert_eq!(compression_of(b"BZh9"), Compression::Bzip2);
        assert_eq!(compression_of(b"ATOM  "), Compression::None);
        assert_eq!(uncompressed_name(Path::new("/a/b/x.pdb.gz")), "x.pdb");
    }

    #[test]
    fn gzip_round_trip() {
        use std::io::Write;
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(b"hello").ok();
        let gz = enc.finish().unwrap_or_default();
        assert_eq!(decompress(Path::new("x.gz"), gz).ok().as_deref(), Some(&b"hello"[..]));
        assert!(decompress(Path::new("x.gz"), vec![0x1f, 0x8b, 8, 0, 1, 2]).is_err());
    }
}
