//! Writing coordinates back out: PDB, GRO, XYZ, DCD, XTC, TRR and AMBER NetCDF, one file per
//! format, behind one [`FrameWriter`] trait.
//!
//! Owns the output formats and the atomic-write discipline for multi-frame files. Called by
//! `orbitfield convert` (`cli::convert`) and by the viewer's "save selection / frames" action,
//! both through [`write_frames`], which does the whole job: pick the atoms and frames, write
//! every frame to a temporary file beside the output, and rename it over the output only when all
//! went well (an error leaves no file behind and an existing output untouched).
//!
//! What each format keeps: PDB writes CRYST1 and one MODEL per frame, a TER between chains; GRO the box line (nm);
//! DCD the CHARMM unit cell (`A, cos gamma, B, cos beta, cos alpha, C`, as NAMD and MDAnalysis
//! write it); XTC the box, with coordinates at precision 1000 (0.001 nm); TRR the box and
//! coordinates in single precision; AMBER NetCDF float coordinates, time and (when the first frame
//! has one) the box as `cell_lengths`/`cell_angles`; XYZ elements and coordinates only.
//! Partial charges fit none of these (PQR would; it is not offered yet).

mod dcd;
mod gro;
mod nc;
mod pdb;
pub use pdb::{cut_names_note, resid_wrap_note};
mod trr;
mod xtc;
mod xyz;
// Movies (H.264 in MP4, or PNG frames) of rendered images: the viewer's recorder and `render --movie`.
#[cfg(feature = "gui")]
pub mod movie;

use crate::model::{Frame, FrameError, Structure, Trajectory};
use std::io::Write;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

/// Why writing failed.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Frame(#[from] FrameError),
    #[error("{path}: {message}")]
    Unsupported { path: PathBuf, message: String },
    /// The caller stopped the write ([`write_frames_until`]); no file was left behind.
    #[error("{path}: writing cancelled after {frames} frames; nothing was written")]
    Cancelled { path: PathBuf, frames: usize },
}

/// The output formats, from the output's extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutFormat {
    Pdb,
    /// PDB records with each atom's charge and radius in place of occupancy and B-factor, as APBS
    /// and PDB2PQR read them.
    Pqr,
    Gro,
    Xyz,
    Dcd,
    Xtc,
    Trr,
    /// AMBER NetCDF trajectory.
    Nc,
}

impl OutFormat {
    /// From the file extension (case-insensitive).
    pub fn from_path(path: &Path) -> Result<OutFormat, WriteError> {
        let ext = path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        Ok(match ext.as_str() {
            "pdb" | "ent" => OutFormat::Pdb,
            "pqr" => OutFormat::Pqr,
            "gro" => OutFormat::Gro,
            "xyz" => OutFormat::Xyz,
            "dcd" => OutFormat::Dcd,
            "xtc" => OutFormat::Xtc,
            "trr" => OutFormat::Trr,
            "nc" | "ncdf" | "netcdf" => OutFormat::Nc,
            _ => {
                return Err(WriteError::Unsupported {
                    path: path.to_path_buf(),
                    message: format!(
                        "cannot write {ext:?} files: the output must end in .pdb, .pqr, .gro, .xyz, .dcd, .xtc, .nc or .trr"
                    ),
                });
            }
        })
    }
}

/// One output file being written frame by frame.
pub trait FrameWriter {
    /// Appends one frame (its positions are those of the atoms being written, in order).
    fn write_frame(&mut self, out: &mut dyn Write, atoms: &Structure, frame: &Frame) -> std::io::Result<()>;
    /// Writes what follows the last frame and fixes up headers (`out` is at its end).
    fn finish(&mut self, out: &mut std::fs::File, n_frames: usize) -> std::io::Result<()>;
}

/// The writer for `format`.
fn writer_for(format: OutFormat, atoms: &Structure, n_frames: usize) -> Box<dyn FrameWriter> {
    match format {
        OutFormat::Pdb => Box::new(pdb::PdbWriter::new(n_frames)),
        OutFormat::Pqr => Box::new(pdb::PdbWriter::pqr(n_frames)),
        OutFormat::Gro => Box::new(gro::GroWriter),
        OutFormat::Xyz => Box::new(xyz::XyzWriter),
        OutFormat::Dcd => Box::new(dcd::DcdWriter::new(atoms.len())),
        OutFormat::Trr => Box::new(trr::TrrWriter::default()),
        OutFormat::Xtc => Box::new(xtc::XtcWriter::new()),
        OutFormat::Nc => Box::new(nc::NcWriter::default()),
    }
}

/// A file written under a temporary name beside its destination and renamed over it by
/// [`AtomicFile::commit`]; dropped uncommitted, the temporary file is removed.
struct AtomicFile {
    tmp: PathBuf,
    dest: PathBuf,
    file: Option<std::fs::File>,
}

impl AtomicFile {
    fn create(dest: &Path) -> std::io::Result<AtomicFile> {
        let tmp = super::temp_path_beside(dest);
        let file = std::fs::File::create(&tmp)?;
        Ok(AtomicFile {
            tmp,
            dest: dest.to_path_buf(),
            file: Some(file),
        })
    }

    fn commit(mut self) -> std::io::Result<()> {
        if let Some(f) = self.file.take() {
            f.sync_all()?;
        }
        std::fs::rename(&self.tmp, &self.dest)
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.file.take().is_some() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// The atoms `indices` of `structure` (all of it when `None`), bonds among them renumbered.
pub fn subset(structure: &Structure, indices: Option<&[u32]>) -> Structure {
    let Some(idx) = indices else {
        return structure.clone();
    };
    let mut s = Structure {
        title: structure.title.clone(),
        bond_source: structure.bond_source,
        ..Structure::default()
    };
    s.reserve(idx.len());
    let pick = |i: u32| i as usize;
    for &i in idx {
        let i = pick(i);
        let get = |v: &[crate::model::Name8]| v.get(i).copied().unwrap_or(crate::model::Name8::EMPTY);
        s.push_atom(
            structure.elements.get(i).copied().unwrap_or_default(),
            get(&structure.names),
            get(&structure.resnames),
            structure.resids.get(i).copied().unwrap_or(0),
            get(&structure.chains),
            get(&structure.segids),
        );
    }
    if structure.types.len() == structure.len() {
        s.types = idx
            .iter()
            .filter_map(|&i| structure.types.get(pick(i)).copied())
            .collect();
    }
    let take = |v: &Option<Vec<f32>>| {
        v.as_ref()
            .map(|v| idx.iter().map(|&i| v.get(pick(i)).copied().unwrap_or(0.0)).collect())
    };
    s.charges_e = take(&structure.charges_e);
    s.radii_angstrom = take(&structure.radii_angstrom);
    s.masses_dalton = take(&structure.masses_dalton);
    s.bfactors = take(&structure.bfactors);
    s.occupancies = take(&structure.occupancies);
    let mut new_index = vec![u32::MAX; structure.len()];
    for (k, &i) in idx.iter().enumerate() {
        if let Some(slot) = new_index.get_mut(pick(i)) {
            *slot = k as u32;
        }
    }
    s.bonds = structure
        .bonds
        .iter()
        .filter_map(|&[a, b]| {
            let (a, b) = (*new_index.get(pick(a))?, *new_index.get(pick(b))?);
            (a != u32::MAX && b != u32::MAX).then_some([a, b])
        })
        .collect();
    s.multiple_bonds = structure
        .multiple_bonds
        .iter()
        .filter_map(|&([a, b], o)| {
            let (a, b) = (*new_index.get(pick(a))?, *new_index.get(pick(b))?);
            (a != u32::MAX && b != u32::MAX).then_some(([a.min(b), a.max(b)], o))
        })
        .collect();
    s.multiple_bonds.sort_unstable_by_key(|(pair, _)| *pair);
    s
}

/// Writes frames `frames` of `trajectory` (atoms `atoms` of `structure`, all when `None`) to `path`
/// in the format its extension names, atomically. `progress` is called after each frame with the
/// number written so far. Returns the number of frames written.
pub fn write_frames(
    path: &Path,
    structure: &Structure,
    trajectory: &mut Trajectory,
    atoms: Option<&[u32]>,
    frames: &[usize],
    progress: &mut dyn FnMut(usize),
) -> Result<usize, WriteError> {
    write_frames_until(path, structure, trajectory, atoms, frames, &mut |k| {
        progress(k);
        ControlFlow::Continue(())
    })
}

/// As [`write_frames`], but `progress` may stop the write ([`ControlFlow::Break`]): the temporary
/// file is removed, an existing output stays untouched, and the result is
/// [`WriteError::Cancelled`]. Used by the viewer's save job (`jobs::save`).
pub fn write_frames_until(
    path: &Path,
    structure: &Structure,
    trajectory: &mut Trajectory,
    atoms: Option<&[u32]>,
    frames: &[usize],
    progress: &mut dyn FnMut(usize) -> ControlFlow<()>,
) -> Result<usize, WriteError> {
    write_frames_mapped(path, structure, trajectory, atoms, frames, &|_| {}, progress)
}

/// As [`write_frames_until`], each frame passed through `map` as it is read (before the atoms are
/// picked): `orbitfield convert --fit` moves it onto frame 0 there.
pub fn write_frames_mapped(
    path: &Path,
    structure: &Structure,
    trajectory: &mut Trajectory,
    atoms: Option<&[u32]>,
    frames: &[usize],
    map: &dyn Fn(&mut Frame),
    progress: &mut dyn FnMut(usize) -> ControlFlow<()>,
) -> Result<usize, WriteError> {
    let format = OutFormat::from_path(path)?;
    if format == OutFormat::Pqr && structure.charges_e.is_none() {
        return Err(WriteError::Unsupported {
            path: path.to_path_buf(),
            message: "a PQR file holds partial charges, and these files give none (a protein from a PDB, mmCIF or GRO file takes CHARMM22's; a topology such as PSF, prmtop or TPR carries its own)".into(),
        });
    }
    if format == OutFormat::Pqr && frames.len() > 1 {
        return Err(WriteError::Unsupported {
            path: path.to_path_buf(),
            message: format!(
                "a PQR file holds one structure: APBS and pdb2pqr would read {} frames' MODEL records as {} overlapping copies of the atoms; write one frame (convert --frames N, or Save atoms / frames of the current frame)",
                frames.len(),
                frames.len()
            ),
        });
    }
    let sub = subset(structure, atoms);
    let mut writer = writer_for(format, &sub, frames.len());
    let io_err = |source: std::io::Error| WriteError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut file = AtomicFile::create(path).map_err(io_err)?;
    {
        let Some(raw) = file.file.as_mut() else {
            return Err(io_err(std::io::Error::other("output file closed")));
        };
        let mut out = std::io::BufWriter::new(raw);
        let (mut full, mut picked) = (Frame::default(), Frame::default());
        for (k, &i) in frames.iter().enumerate() {
            trajectory.read_frame(i, &mut full)?;
            map(&mut full);
            let frame = match atoms {
                None => &full,
                Some(idx) => {
                    picked.positions_angstrom.clear();
                    picked.positions_angstrom.extend(
                        idx.iter()
                            .map(|&a| full.positions_angstrom.get(a as usize).copied().unwrap_or([0.0; 3])),
                    );
                    picked.cell = full.cell;
                    picked.time_ps = full.time_ps;
                    picked.step = full.step;
                    &picked
                }
            };
            writer.write_frame(&mut out, &sub, frame).map_err(io_err)?;
            if progress(k + 1).is_break() {
                return Err(WriteError::Cancelled {
                    path: path.to_path_buf(),
                    frames: k + 1,
                });
            }
        }
        out.flush().map_err(io_err)?;
    }
    if let Some(raw) = file.file.as_mut() {
        writer.finish(raw, frames.len()).map_err(io_err)?;
    }
    file.commit().map_err(io_err)?;
    Ok(frames.len())
}

/// Positions of a frame in nanometres (GROMACS formats).
fn nm(p: [f32; 3]) -> [f64; 3] {
    p.map(|x| f64::from(x) / crate::model::units::ANGSTROM_PER_NANOMETRE)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Element, Name8, UnitCell};

    pub(super) fn two_atoms() -> (Structure, Vec<Frame>) {
        let mut s = Structure::default();
        s.push_atom(
            Element::O,
            Name8::from("OW"),
            Name8::from("SOL"),
            1,
            Name8::from("A"),
            Name8::EMPTY,
        );
        s.push_atom(
            Element::H,
            Name8::from("HW1"),
            Name8::from("SOL"),
            1,
            Name8::from("A"),
            Name8::EMPTY,
        );
        let frames = (0..3)
            .map(|k| Frame {
                positions_angstrom: vec![[1.0, 2.0, 3.0 + k as f32], [-4.5, 5.25, 6.125]],
                cell: Some(UnitCell::new([20.0, 21.0, 22.0], [90.0, 80.0, 70.0])),
                time_ps: Some(k as f64 * 2.0),
                step: Some(k * 10),
            })
            .collect();
        (s, frames)
    }

    #[test]
    fn subset_renumbers_bonds() {
        let (mut s, _) = two_atoms();
        s.push_atom(
            Element::H,
            Name8::from("HW2"),
            Name8::from("SOL"),
            1,
            Name8::EMPTY,
            Name8::EMPTY,
        );
        s.bonds = vec![[0, 1], [0, 2]];
        let sub = subset(&s, Some(&[0, 2]));
        assert_eq!(sub.len(), 2);
        assert_eq!(sub.bonds, vec![[0, 1]]);
    }

    #[test]
    fn failed_write_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let (s, frames) = two_atoms();
        let mut t = Trajectory::from_frames(2, frames, "test");
        let out = dir.path().join("x.pdb");
        std::fs::write(&out, "old").unwrap();
        let e = write_frames(&out, &s, &mut t, None, &[0, 7], &mut |_| {});
        assert!(e.is_err());
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "old");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    /// Two chains written to PDB are separated by a TER record; residue numbers past 9999 are
    /// named in a note.
    #[test]
    fn chains_end_with_ter_and_wide_residue_numbers_are_noted() {
        let (mut s, frames) = two_atoms();
        s.chains = vec![Name8::from("A"), Name8::from("B")];
        let mut t = Trajectory::from_frames(2, frames, "test");
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("x.pdb");
        write_frames(&out, &s, &mut t, None, &[0], &mut |_| {}).unwrap();
        let text = std::fs::read_to_string(&out).unwrap();
        let records: Vec<&str> = text.lines().map(|l| l.get(..4).unwrap_or(l)).collect();
        // Water is not polymer: HETATM records, as the wwPDB writes them.
        assert_eq!(records, ["REMA", "CRYS", "HETA", "TER", "HETA", "END"], "{text}");
        assert!(resid_wrap_note(&s, None).is_none());
        s.resids[1] = 10_000;
        assert!(
            resid_wrap_note(&s, None)
                .unwrap()
                .starts_with("1 atom has residue numbers")
        );
        assert!(resid_wrap_note(&s, Some(&[0])).is_none());
        // Names past four characters: counted, a few named with what the file holds.
        assert!(cut_names_note(&s, None).is_none());
        s.resnames[1] = Name8::from("WATER");
        let note = cut_names_note(&s, None).unwrap();
        assert!(note.starts_with("1 residue or atom name is longer"), "{note}");
        assert!(note.contains("WATER as WATE"), "{note}");
        assert!(cut_names_note(&s, Some(&[0])).is_none());
    }

    #[test]
    fn a_pqr_of_several_frames_is_refused_and_nothing_is_written() {
        let (mut s, frames) = two_atoms();
        s.charges_e = Some(vec![0.5, -0.5]);
        let mut t = Trajectory::from_frames(2, frames, "test");
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("x.pqr");
        let e = write_frames(&out, &s, &mut t, None, &[0, 1], &mut |_| {}).unwrap_err();
        assert!(e.to_string().contains("overlapping copies"), "{e}");
        assert!(!out.exists());
        write_frames(&out, &s, &mut t, None, &[1], &mut |_| {}).unwrap();
        assert!(out.exists());
    }
}
