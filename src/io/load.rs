//! `load`: from a list of paths to one [`System`], the way VMD and MDAnalysis combine files.
//!
//! The first file that describes atoms (PDB, PQR, PSF, GRO, XYZ, mmCIF, or a wavefunction) gives
//! the structure; files that only carry coordinates (DCD, XTC) — and coordinate files given after
//! a topology — become the trajectory, concatenated in order. Every trajectory must have the
//! topology's atom count. Several wavefunction files with the same basis form a frame series.

use super::{Format, ReadError, read_bytes};
use crate::model::{Element, Frame, FrameSource, Grid3, Name8, Structure, Trajectory, Wavefunction};
use std::path::{Path, PathBuf};

/// What a structure-type text reader returns: atoms plus zero or more frames of coordinates.
#[derive(Clone, Debug, Default)]
pub struct Parsed {
    pub structure: Structure,
    pub frames: Vec<Frame>,
    /// Non-fatal observations, in words ("atom names longer than 8 characters truncated").
    pub warnings: Vec<String>,
}

/// Everything opened together.
#[derive(Debug)]
pub struct System {
    pub structure: Structure,
    pub trajectory: Trajectory,
    /// Wavefunctions: one per frame for a wavefunction series, one for a single file, else none.
    pub wavefunctions: Vec<Wavefunction>,
    /// Volumetric data read from cube or DX files.
    pub grids: Vec<Grid3>,
    pub warnings: Vec<String>,
    pub paths: Vec<PathBuf>,
}

/// Frames from several sources played one after another.
struct Concatenated {
    parts: Vec<Box<dyn FrameSource>>,
    n_atoms: usize,
}

impl FrameSource for Concatenated {
    fn n_atoms(&self) -> usize {
        self.n_atoms
    }

    fn n_frames(&self) -> usize {
        self.parts.iter().map(|p| p.n_frames()).sum()
    }

    fn read_frame(&mut self, index: usize, out: &mut Frame) -> Result<(), ReadError> {
        let mut i = index;
        for p in &mut self.parts {
            let n = p.n_frames();
            if i < n {
                return p.read_frame(i, out);
            }
            i -= n;
        }
        Err(ReadError::new(
            PathBuf::from("<trajectory>"),
            super::Location::None,
            format!("frame {index} requested, trajectory has {} frames", self.n_frames()),
        ))
    }
}

/// Builds a structure from a wavefunction's atoms (names are element symbols).
pub fn structure_from_wavefunction(wf: &Wavefunction) -> (Structure, Frame) {
    let mut s = Structure::default();
    let mut f = Frame::default();
    for a in &wf.atoms {
        s.push_atom(
            a.element,
            Name8::from(a.element.symbol()),
            Name8::from("QM"),
            1,
            Name8::EMPTY,
            Name8::EMPTY,
        );
        f.positions_angstrom
            .push(crate::model::units::angstrom_from_bohr3(a.position_bohr).map(|x| x as f32));
    }
    s.charges_e = None;
    (s, f)
}

/// What one file contributed.
enum Piece {
    Topology(Parsed),
    Frames(Box<dyn FrameSource>),
    Wavefunctions(Vec<Wavefunction>, Vec<String>),
    Grids(Vec<Grid3>, Structure, Frame),
}

fn read_piece(path: &Path) -> Result<Piece, ReadError> {
    // Binary trajectories are opened by their readers (random access by offset); everything else is
    // read whole, through decompression.
    let head = {
        use std::io::Read;
        let mut buf = vec![0u8; 4096];
        let mut f = std::fs::File::open(path).map_err(|e| ReadError::file(path, format!("cannot open: {e}")))?;
        let n = f
            .read(&mut buf)
            .map_err(|e| ReadError::file(path, format!("cannot read: {e}")))?;
        buf.truncate(n);
        buf
    };
    let compressed = super::compression_of(&head) != super::Compression::None;
    let detect_head = if compressed {
        read_bytes(path)?.into_iter().take(4096).collect()
    } else {
        head
    };
    let format = Format::detect(path, &detect_head).ok_or_else(|| {
        ReadError::file(path, "unknown file format: expected a structure (pdb, pqr, psf, gro, xyz, cif), trajectory (dcd, xtc), wavefunction (molden, fchk, wfn, wfx) or volume (cube, dx) file")
    })?;
    Ok(match format {
        Format::Dcd => Piece::Frames(Box::new(super::dcd::DcdReader::open(path)?)),
        Format::Xtc => Piece::Frames(Box::new(super::xtc::XtcReader::open(path)?)),
        _ => {
            let bytes = read_bytes(path)?;
            match format {
                Format::Pdb => Piece::Topology(super::pdb::read(path, &bytes)?),
                Format::Pqr => Piece::Topology(super::pdb::read_pqr(path, &bytes)?),
                Format::Psf => Piece::Topology(super::psf::read(path, &bytes)?),
                Format::Gro => Piece::Topology(super::gro::read(path, &bytes)?),
                Format::Xyz => Piece::Topology(super::xyz::read(path, &bytes)?),
                Format::Mmcif => Piece::Topology(super::mmcif::read(path, &bytes)?),
                Format::Molden => {
                    let m = super::molden::read(path, &bytes)?;
                    Piece::Wavefunctions(m.wavefunctions, m.warnings)
                }
                Format::Fchk => Piece::Wavefunctions(vec![super::fchk::read(path, &bytes)?], Vec::new()),
                Format::Wfn => Piece::Wavefunctions(vec![super::wfn::read_wfn(path, &bytes)?], Vec::new()),
                Format::Wfx => Piece::Wavefunctions(vec![super::wfn::read_wfx(path, &bytes)?], Vec::new()),
                Format::Cube => {
                    let c = super::cube::read(path, &bytes)?;
                    let (s, f) = c.structure_and_frame();
                    Piece::Grids(c.grids, s, f)
                }
                Format::Dx => Piece::Grids(
                    vec![super::dx::read(path, &bytes)?],
                    Structure::default(),
                    Frame::default(),
                ),
                Format::Dcd | Format::Xtc => unreachable_format(path)?,
            }
        }
    })
}

fn unreachable_format(path: &Path) -> Result<Piece, ReadError> {
    Err(ReadError::file(
        path,
        "internal error: binary trajectory routed to the text readers",
    ))
}

/// Opens `paths` together as one system. See the module documentation for how files combine.
pub fn load(paths: &[PathBuf]) -> Result<System, ReadError> {
    let Some(first_path) = paths.first() else {
        return Err(ReadError::file(Path::new("<none>"), "no files given"));
    };
    let mut structure: Option<(Structure, PathBuf)> = None;
    let mut topology_frames: Vec<Frame> = Vec::new();
    let mut trajectories: Vec<(Box<dyn FrameSource>, PathBuf)> = Vec::new();
    let mut wavefunctions: Vec<Wavefunction> = Vec::new();
    let mut grids = Vec::new();
    let mut warnings = Vec::new();

    for path in paths {
        match read_piece(path)? {
            Piece::Topology(parsed) => {
                warnings.extend(parsed.warnings.into_iter().map(|w| format!("{}: {w}", path.display())));
                if structure.is_none() {
                    topology_frames = parsed.frames;
                    structure = Some((parsed.structure, path.clone()));
                } else if !parsed.frames.is_empty() {
                    let n = parsed.structure.len();
                    trajectories.push((
                        Box::new(crate::model::InMemoryFrames {
                            n_atoms: n,
                            frames: parsed.frames,
                        }),
                        path.clone(),
                    ));
                }
            }
            Piece::Frames(src) => trajectories.push((src, path.clone())),
            Piece::Wavefunctions(wfs, w) => {
                warnings.extend(w.into_iter().map(|w| format!("{}: {w}", path.display())));
                for wf in wfs {
                    if let Some(first) = wavefunctions.first() {
                        check_same_basis(first, &wf, path)?;
                    }
                    let (s, f) = structure_from_wavefunction(&wf);
                    if structure.is_none() {
                        structure = Some((s, path.clone()));
                    }
                    topology_frames.push(f);
                    wavefunctions.push(wf);
                }
            }
            Piece::Grids(g, s, f) => {
                if structure.is_none() && !s.is_empty() {
                    structure = Some((s, path.clone()));
                    topology_frames.push(f);
                }
                grids.extend(g);
            }
        }
    }

    let (structure, topo_path) = structure.unwrap_or_else(|| (Structure::default(), first_path.clone()));
    let n_atoms = structure.len();
    let trajectory = if trajectories.is_empty() {
        Trajectory::from_frames(n_atoms, topology_frames, topo_path.display().to_string())
    } else {
        let mut parts = Vec::new();
        let mut names = Vec::new();
        for (src, p) in trajectories {
            if n_atoms > 0 && src.n_atoms() != n_atoms {
                return Err(ReadError::file(
                    &p,
                    format!(
                        "trajectory has {} atoms but the topology {} has {n_atoms}",
                        src.n_atoms(),
                        topo_path.display()
                    ),
                ));
            }
            names.push(p.display().to_string());
            parts.push(src);
        }
        let n = if n_atoms > 0 {
            n_atoms
        } else {
            parts.first().map_or(0, |p| p.n_atoms())
        };
        Trajectory::new(Box::new(Concatenated { parts, n_atoms: n }), names.join(" + "))
    };
    if structure.is_empty() && trajectory.n_atoms() > 0 {
        return Err(ReadError::file(
            first_path,
            "a trajectory needs a topology file (pdb, psf, gro, ...) to describe its atoms",
        ));
    }
    Ok(System {
        structure,
        trajectory,
        wavefunctions,
        grids,
        warnings,
        paths: paths.to_vec(),
    })
}

fn check_same_basis(first: &Wavefunction, wf: &Wavefunction, path: &Path) -> Result<(), ReadError> {
    let same_atoms =
        first.atoms.len() == wf.atoms.len() && first.atoms.iter().zip(&wf.atoms).all(|(a, b)| a.element == b.element);
    if !same_atoms || first.basis.n_functions() != wf.basis.n_functions() {
        return Err(ReadError::file(
            path,
            format!(
                "this wavefunction ({} atoms, {} basis functions) does not match the first of the series ({} atoms, {} basis functions)",
                wf.atoms.len(),
                wf.basis.n_functions(),
                first.atoms.len(),
                first.basis.n_functions()
            ),
        ));
    }
    Ok(())
}

/// True when an element is known; used by readers to warn about unknown atoms.
pub fn is_known(e: Element) -> bool {
    e != Element::UNKNOWN
}

/// Loads the embedded demo (the ethylene torsion series) as a system.
pub fn load_embedded_demo() -> Result<System, ReadError> {
    let mut wavefunctions = Vec::new();
    let mut frames = Vec::new();
    let mut structure = None;
    for file in crate::assets::DEMO_SERIES {
        let path = PathBuf::from(format!("<demo>/{}", file.name));
        let m = super::molden::read(&path, file.bytes)?;
        for wf in m.wavefunctions {
            let (s, f) = structure_from_wavefunction(&wf);
            structure.get_or_insert(s);
            frames.push(f);
            wavefunctions.push(wf);
        }
    }
    let structure = structure.unwrap_or_default();
    let n = structure.len();
    Ok(System {
        structure,
        trajectory: Trajectory::from_frames(n, frames, "embedded demo: ethylene torsion"),
        wavefunctions,
        grids: Vec::new(),
        warnings: Vec::new(),
        paths: vec![PathBuf::from("<demo>/ethylene_twist")],
    })
}
