//! `load`: from a list of paths to one [`System`], the way VMD and MDAnalysis combine files.
//!
//! The first file that describes atoms (PDB, PQR, PSF, GRO, XYZ, mmCIF, mol2, AMBER prmtop, or a
//! wavefunction) gives the structure; files that only carry coordinates (DCD, XTC, AMBER NetCDF,
//! mdcrd and rst7) — and coordinate files given after a topology — become the trajectory,
//! concatenated in order. Every trajectory must have the topology's atom count (an mdcrd file is
//! read with it, and with the prmtop's box). A trajectory file cut short contributes its complete
//! frames and one warning in words; one without a complete frame is an error. Several wavefunction
//! files with the same basis form a frame series.
//!
//! [`load_with`] also places wavefunctions of a QM region inside an MD system (`system.psf
//! traj.dcd qm/frame_*.molden --qm-region "resname THR"`): when the atoms come from a topology and
//! the orbitals from wavefunction files, it resolves which system atoms the wavefunctions describe
//! ([`crate::model::qm_region`]) and checks that there is one wavefunction per frame, or one.

use super::{Format, ReadError, read_bytes};
use crate::model::{Element, Frame, FrameError, FrameSource, Grid3, Name8, Structure, Trajectory, Wavefunction};
use std::path::{Path, PathBuf};

/// What a structure-type text reader returns: atoms plus zero or more frames of coordinates.
#[derive(Clone, Debug, Default)]
pub struct Parsed {
    pub structure: Structure,
    pub frames: Vec<Frame>,
    /// Non-fatal observations, in words ("atom names longer than 8 characters truncated").
    pub warnings: Vec<String>,
    /// Each frame's total energy in hartree (NaN where none) when the file gives them (the comment
    /// lines of an optimisation's XYZ trajectory); empty otherwise.
    pub frame_energies_hartree: Vec<f64>,
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
    /// The frame of each wavefunction when a QM log printed orbitals at some of its steps only
    /// (a GAMESS optimisation: the first and the last); empty otherwise, when the wavefunctions
    /// are one per frame or one for all (`model::qm_region::wavefunction_of_frame`).
    pub wavefunction_frames: Vec<usize>,
    /// Each frame's total energy in hartree (NaN where the file printed none) when the frames are a
    /// QM log's steps or a series of wavefunctions that carry their energies; empty otherwise.
    pub frame_energies_hartree: Vec<f64>,
    /// Orbital energies and occupations a QM log printed without orbitals that can be drawn
    /// (`io::qmlog::QmLog::levels`): the orbital list and diagram without a wavefunction.
    pub orbital_levels: Option<crate::model::OrbitalLevels>,
}

impl System {
    /// The wavefunction of `frame`: the only one (frame 0 only), the frame's of a series, or the
    /// one a QM log printed at that step; otherwise a message naming the frames that have one.
    pub fn wavefunction_of_frame(&self, frame: usize) -> Result<&Wavefunction, String> {
        let n_wf = self.wavefunctions.len();
        if let Some(last) = self.wavefunction_frames.last() {
            let k = crate::model::qm_region::wavefunction_of_frame(
                &self.wavefunction_frames,
                n_wf,
                self.trajectory.n_frames(),
                frame,
            );
            let frames: Vec<String> = self.wavefunction_frames.iter().map(|f| f.to_string()).collect();
            return k.and_then(|k| self.wavefunctions.get(k)).ok_or_else(|| {
                format!(
                    "frame {frame} has no orbitals: the log printed them at frame(s) {} only (0 to {last})",
                    frames.join(", ")
                )
            });
        }
        if n_wf == 1 && frame > 0 {
            return Err(format!("frame {frame} requested, the files hold one wavefunction"));
        }
        let index = if n_wf == 1 { 0 } else { frame };
        self.wavefunctions
            .get(index)
            .ok_or_else(|| format!("frame {frame} requested, the files hold {n_wf} wavefunction(s)"))
    }
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

    fn read_frame(&mut self, index: usize, out: &mut Frame) -> Result<(), FrameError> {
        let mut i = index;
        for p in &mut self.parts {
            let n = p.n_frames();
            if i < n {
                return p.read_frame(i, out);
            }
            i -= n;
        }
        Err(FrameError::OutOfRange {
            index,
            count: self.n_frames(),
        })
    }

    /// Only the last file can grow: frames appended to an earlier one would renumber the rest.
    fn refresh(&mut self) -> Result<usize, FrameError> {
        match self.parts.last_mut() {
            Some(p) => p.refresh(),
            None => Ok(0),
        }
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
    /// An AMBER topology: a structure, and the box its coordinate files need.
    AmberTopology(super::amber::Prmtop),
    /// A trajectory, the atoms it describes when it is opened without a topology (LAMMPS dumps),
    /// and what its reader noticed (frames missing from a file cut short).
    Frames(Box<dyn FrameSource>, Option<Structure>, Vec<String>),
    /// Wavefunctions, warnings, and extra geometry frames without orbitals (Molden `[GEOMETRIES]`).
    Wavefunctions(Vec<Wavefunction>, Vec<String>, Vec<Frame>),
    Grids(Vec<Grid3>, Structure, Frame, Vec<String>),
    /// A QM program log: atoms, one frame per step, wavefunctions of the steps that printed them.
    QmLog(super::qmlog::QmLog),
}

/// What the files before a coordinate file told about the atoms (formats that store neither the
/// atom count nor the box need it).
#[derive(Clone, Copy, Debug, Default)]
struct Context {
    n_atoms: usize,
    amber_box: super::amber::BoxHint,
}

fn read_piece(path: &Path, context: &Context) -> Result<Piece, ReadError> {
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
        ReadError::file(path, "unknown file format: expected a structure or topology (pdb, pqr, psf, gro, xyz, cif, bcif, mol2, sdf/mol, prmtop/parm7, tpr, CHARMM crd, LAMMPS data, Tinker txyz/arc, DL_POLY CONFIG/HISTORY), trajectory (dcd, xtc, trr, nc, mdcrd/crd, rst7, NAMD coor, lammpstrj), wavefunction (molden, fchk, wfn, wfx), QM log (Gaussian, GAMESS, ORCA) or volume (cube, dx) file")
    })?;
    let read = || -> Result<Piece, ReadError> {
        Ok(match format {
            Format::Dcd => {
                let r = super::dcd::DcdReader::open(path)?;
                let w = r.warnings().to_vec();
                Piece::Frames(Box::new(r), None, w)
            }
            Format::Xtc => {
                let r = super::xtc::XtcReader::open(path)?;
                let w = r.warnings().to_vec();
                Piece::Frames(Box::new(r), None, w)
            }
            Format::AmberNetcdf => {
                let r = super::amber::NetcdfReader::open(path)?;
                let w = r.warnings().to_vec();
                Piece::Frames(Box::new(r), None, w)
            }
            Format::Mdcrd => {
                if context.n_atoms == 0 {
                    return Err(ReadError::file(
                        path,
                        "an AMBER ASCII trajectory (mdcrd) stores no atom count: give its topology (prmtop) before it",
                    ));
                }
                let r = super::amber::MdcrdReader::open(path, context.n_atoms, context.amber_box)?;
                let w = r.warnings().to_vec();
                Piece::Frames(Box::new(r), None, w)
            }
            Format::Trr => {
                let r = super::trr::TrrReader::open(path)?;
                let warnings = r.warnings().to_vec();
                Piece::Frames(Box::new(r), None, warnings)
            }
            Format::LammpsDump => {
                let mut r = super::lammps_dump::LammpsDumpReader::open(path)?;
                let atoms = r.structure()?;
                let warnings = r.warnings().to_vec();
                Piece::Frames(Box::new(r), Some(atoms), warnings)
            }
            _ => {
                let bytes = read_bytes(path)?;
                match format {
                    Format::Pdb => {
                        let mut parsed = super::pdb::read(path, &bytes)?;
                        if let Some(f) = parsed.frames.first() {
                            crate::model::bonds::complete_conect_bonds(&mut parsed.structure, &f.positions_angstrom);
                        }
                        Piece::Topology(parsed)
                    }
                    Format::Pqr => Piece::Topology(super::pdb::read_pqr(path, &bytes)?),
                    Format::Psf => Piece::Topology(super::psf::read(path, &bytes)?),
                    Format::Gro => Piece::Topology(super::gro::read(path, &bytes)?),
                    Format::Xyz => Piece::Topology(super::xyz::read(path, &bytes)?),
                    Format::Tinker => Piece::Topology(super::tinker::read(path, &bytes)?),
                    Format::Sdf => Piece::Topology(super::sdf::read(path, &bytes)?),
                    Format::DlPoly => Piece::Topology(super::dlpoly::read(path, &bytes)?),
                    Format::Mmcif => Piece::Topology(super::mmcif::read(path, &bytes)?),
                    Format::Mol2 => Piece::Topology(super::mol2::read(path, &bytes)?),
                    Format::Prmtop => Piece::AmberTopology(super::amber::prmtop::read(path, &bytes)?),
                    Format::Rst7 => {
                        let r = super::amber::rst7::read(path, &bytes)?;
                        let n = r.frame.positions_angstrom.len();
                        Piece::Frames(
                            Box::new(crate::model::InMemoryFrames {
                                n_atoms: n,
                                frames: vec![r.frame],
                            }),
                            None,
                            Vec::new(),
                        )
                    }
                    Format::Tpr => Piece::Topology(super::tpr::read(path, &bytes)?),
                    Format::CharmmCrd => Piece::Topology(super::charmm_crd::read(path, &bytes)?),
                    Format::Bcif => Piece::Topology(super::bcif::read(path, &bytes)?),
                    Format::NamdBin => {
                        let name = super::uncompressed_name(path).to_ascii_lowercase();
                        if name.ends_with(".vel") {
                            return Err(ReadError::file(
                                path,
                                "a NAMD velocity file holds velocities, not coordinates: open its .coor or trajectory file to see atoms",
                            ));
                        }
                        Piece::Frames(Box::new(super::namdbin::read(path, &bytes)?.frames()), None, Vec::new())
                    }
                    Format::LammpsData => Piece::Topology(super::lammps_data::read(path, &bytes)?),
                    Format::Molden => {
                        let m = super::molden::read(path, &bytes)?;
                        let frames = m
                            .geometries_bohr
                            .iter()
                            .map(|g| Frame {
                                positions_angstrom: g
                                    .iter()
                                    .map(|p| crate::model::units::angstrom_from_bohr3(*p).map(|x| x as f32))
                                    .collect(),
                                ..Frame::default()
                            })
                            .collect();
                        Piece::Wavefunctions(m.wavefunctions, m.warnings, frames)
                    }
                    Format::Fchk => match super::fchk::read_geometries(path, &bytes)? {
                        Some(parsed) => Piece::Topology(parsed),
                        None => {
                            let f = super::fchk::read_full(path, &bytes)?;
                            Piece::Wavefunctions(vec![f.wavefunction], f.warnings, Vec::new())
                        }
                    },
                    Format::Mkl => {
                        let m = super::mkl::read(path, &bytes)?;
                        Piece::Wavefunctions(vec![m.wavefunction], m.warnings, Vec::new())
                    }
                    Format::Wfn => {
                        Piece::Wavefunctions(vec![super::wfn::read_wfn(path, &bytes)?], Vec::new(), Vec::new())
                    }
                    Format::Wfx => {
                        Piece::Wavefunctions(vec![super::wfn::read_wfx(path, &bytes)?], Vec::new(), Vec::new())
                    }
                    Format::Cube => {
                        let c = super::cube::read(path, &bytes)?;
                        let (s, f) = c.structure_and_frame();
                        Piece::Grids(c.grids, s, f, c.warnings)
                    }
                    Format::QmLog => Piece::QmLog(super::qmlog::read(path, &bytes)?),
                    Format::Dx => Piece::Grids(
                        vec![super::dx::read(path, &bytes)?],
                        Structure::default(),
                        Frame::default(),
                        Vec::new(),
                    ),
                    Format::Dcd
                    | Format::Xtc
                    | Format::AmberNetcdf
                    | Format::Mdcrd
                    | Format::Trr
                    | Format::LammpsDump => unreachable_format(path)?,
                }
            }
        })
    };
    // A reader that fails on a file whose content another reader recognises: the name's extension
    // is likely wrong (an fchk saved as .molden), which the message says.
    read().map_err(|mut e| {
        // PQR is PDB's layout by design: a damaged PQR looks like a PDB, which says nothing.
        let same_layout = |o: Format| matches!((o, format), (Format::Pdb, Format::Pqr) | (Format::Pqr, Format::Pdb));
        if let Some(other) = Format::from_content(&detect_head).filter(|&o| o != format && !same_layout(o)) {
            e.message.push_str(&format!(
                " (the content looks like the {} format: is the file's extension right?)",
                other.name()
            ));
        }
        e
    })
}

fn unreachable_format(path: &Path) -> Result<Piece, ReadError> {
    Err(ReadError::file(
        path,
        "internal error: binary trajectory routed to the text readers",
    ))
}

/// What [`load_with`] may be told besides the paths.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoadOptions {
    /// The system atoms the wavefunctions describe, in the selection language (`--qm-region`);
    /// `None`: the identity when the system is the wavefunction's atoms, else found by geometry.
    pub qm_region: Option<String>,
}

/// Opens `paths` together as one system. See the module documentation for how files combine.
/// A QM region is not resolved: see [`load_with`].
pub fn load(paths: &[PathBuf]) -> Result<System, ReadError> {
    load_system(paths).map(|(system, _)| system)
}

/// Opens `paths` as [`load`] does and, when the system's atoms come from a topology and orbitals
/// from wavefunction files (or `options.qm_region` names the QM atoms), resolves the QM region the
/// wavefunctions describe. Errors name the first wavefunction file and ask for `--qm-region` where
/// the atoms cannot be found unambiguously.
pub fn load_with(
    paths: &[PathBuf],
    options: &LoadOptions,
) -> Result<(System, Option<crate::model::qm_region::QmRegion>), ReadError> {
    use crate::model::qm_region::{QmRegion, check_series};
    let (mut system, origin) = load_system(paths)?;
    let Some(first_wf) = system.wavefunctions.first() else {
        if options.qm_region.is_some() {
            return Err(ReadError::file(
                paths.first().map_or(Path::new("<none>"), |p| p.as_path()),
                "--qm-region needs wavefunction files (molden, fchk, wfn, wfx) among the files",
            ));
        }
        return Ok((system, None));
    };
    if options.qm_region.is_none() && !origin.structure_from_topology {
        return Ok((system, None));
    }
    let wf_path = origin
        .first_wavefunction
        .unwrap_or_else(|| PathBuf::from("<wavefunction>"));
    let frame0 = if system.trajectory.n_frames() > 0 {
        Some(system.trajectory.frame(0)?)
    } else {
        None
    };
    let region = QmRegion::resolve(
        options.qm_region.as_deref(),
        &system.structure,
        frame0.as_ref(),
        first_wf,
    )
    .map_err(|e| ReadError::file(&wf_path, e.to_string()))?;
    check_series(system.wavefunctions.len(), system.trajectory.n_frames())
        .map_err(|e| ReadError::file(&wf_path, e.to_string()))?;
    Ok((system, Some(region)))
}

/// Where the parts of a loaded system came from.
struct Origin {
    /// The atoms came from a structure file, not from a wavefunction or QM log.
    structure_from_topology: bool,
    first_wavefunction: Option<PathBuf>,
}

fn load_system(paths: &[PathBuf]) -> Result<(System, Origin), ReadError> {
    let Some(first_path) = paths.first() else {
        return Err(ReadError::file(Path::new("<none>"), "no files given"));
    };
    let mut structure: Option<(Structure, PathBuf)> = None;
    let mut topology_frames: Vec<Frame> = Vec::new();
    // (frames, file, whether the file is a structure file giving coordinates)
    let mut trajectories: Vec<(Box<dyn FrameSource>, PathBuf, bool)> = Vec::new();
    let mut wavefunctions: Vec<Wavefunction> = Vec::new();
    let mut grids = Vec::new();
    let mut warnings = Vec::new();
    let mut structure_from_topology = false;
    let mut first_wavefunction: Option<PathBuf> = None;
    let mut wavefunction_frames: Vec<usize> = Vec::new();
    let mut log_energies_hartree: Vec<f64> = Vec::new();
    let mut orbital_levels: Option<crate::model::OrbitalLevels> = None;
    let mut context = Context::default();
    // Structure files of other molecules, joined to the first (`io::join`).
    let mut joined: Vec<(Structure, Vec<Frame>, PathBuf)> = Vec::new();

    for path in paths {
        context.n_atoms = structure.as_ref().map_or(0, |(s, _)| s.len());
        let piece = match read_piece(path, &context)? {
            Piece::AmberTopology(prmtop) => {
                if structure.is_none() {
                    context.amber_box = super::amber::BoxHint {
                        periodic: Some(prmtop.ifbox > 0),
                        cell: prmtop.cell,
                    };
                }
                Piece::Topology(prmtop.parsed)
            }
            other => other,
        };
        match piece {
            Piece::AmberTopology(_) => {}
            Piece::Topology(parsed) => {
                // A structure file after the topology only gives coordinates: what it says about its
                // own atoms' elements does not concern the system (a GRO of TIP4P water beside its
                // TPR has MW sites of no element; the TPR has their elements).
                let coordinates_only = structure.is_some();
                warnings.extend(
                    parsed
                        .warnings
                        .into_iter()
                        .filter(|w| !(coordinates_only && w.ends_with("have an unknown element")))
                        .map(|w| format!("{}: {w}", path.display())),
                );
                let other_atoms = structure
                    .as_ref()
                    .is_some_and(|(s, _)| !parsed.structure.is_empty() && parsed.structure.len() != s.len());
                if structure.is_none() {
                    topology_frames = parsed.frames;
                    structure = Some((parsed.structure, path.clone()));
                    structure_from_topology = true;
                    log_energies_hartree = parsed.frame_energies_hartree;
                } else if other_atoms
                    && !parsed.frames.is_empty()
                    && !topology_frames.is_empty()
                    && trajectories.is_empty()
                    && wavefunctions.is_empty()
                {
                    // Another molecule beside the first (a ligand beside its protein).
                    joined.push((parsed.structure, parsed.frames, path.clone()));
                } else if !parsed.frames.is_empty() {
                    if let Some((s, topology)) = &structure {
                        super::series::check_same_atoms(s, topology, &parsed.structure, path)?;
                    }
                    let n = parsed.structure.len();
                    trajectories.push((
                        Box::new(crate::model::InMemoryFrames {
                            n_atoms: n,
                            frames: parsed.frames,
                        }),
                        path.clone(),
                        true,
                    ));
                }
            }
            Piece::Frames(src, atoms, w) => {
                if src.n_frames() == 0 {
                    let why = if w.is_empty() {
                        "the file holds no frames".to_string()
                    } else {
                        w.join("; ")
                    };
                    return Err(ReadError::file(path, format!("no complete frame: {why}")));
                }
                warnings.extend(w.into_iter().map(|w| format!("{}: {w}", path.display())));
                if structure.is_none()
                    && let Some(atoms) = atoms
                {
                    structure = Some((atoms, path.clone()));
                }
                trajectories.push((src, path.clone(), false));
            }
            Piece::Wavefunctions(wfs, w, geometry_frames) => {
                warnings.extend(w.into_iter().map(|w| format!("{}: {w}", path.display())));
                // A multi-geometry file with one set of orbitals: the geometries are the frames, and
                // the single wavefunction (usually of the last geometry) serves all of them.
                let geometry_series = wfs.len() == 1 && wavefunctions.is_empty() && geometry_frames.len() > 1;
                if !wfs.is_empty() && first_wavefunction.is_none() {
                    first_wavefunction = Some(path.clone());
                }
                for wf in wfs {
                    if wf.alpha.is_empty() {
                        // Only beta orbitals (Molpro writes each spin of an unrestricted calculation
                        // to a file of its own): they join the alpha orbitals of the file before.
                        super::series::join_beta(wavefunctions.last_mut(), wf, path)?;
                        warnings.retain(|w| !w.contains("holds the alpha orbitals only"));
                        warnings.push(format!(
                            "{}: beta orbitals joined to the alpha orbitals of the file before",
                            path.display()
                        ));
                        continue;
                    }
                    if let Some(first) = wavefunctions.first() {
                        super::series::check_same_basis(first, &wf, path)?;
                    }
                    let (s, f) = structure_from_wavefunction(&wf);
                    if structure.is_none() {
                        structure = Some((s, path.clone()));
                    }
                    // With a topology, the wavefunctions' geometries are not frames of its atoms.
                    if !structure_from_topology {
                        topology_frames.push(f);
                    }
                    wavefunctions.push(wf);
                }
                if !structure_from_topology
                    && geometry_series
                    && geometry_frames
                        .iter()
                        .all(|g| g.positions_angstrom.len() == topology_frames[0].positions_angstrom.len())
                {
                    topology_frames = geometry_frames;
                }
            }
            Piece::QmLog(log) => {
                warnings.extend(log.warnings.iter().map(|w| format!("{}: {w}", path.display())));
                orbital_levels = orbital_levels.or_else(|| log.levels.clone());
                for wf in &log.wavefunctions {
                    if let Some(first) = wavefunctions.first() {
                        super::series::check_same_basis(first, wf, path)?;
                    }
                }
                // Orbitals at some steps only: each belongs to its own step's frame.
                if structure.is_none()
                    && wavefunctions.is_empty()
                    && !log.wavefunctions.is_empty()
                    && log.wavefunctions.len() < log.frames.len()
                {
                    wavefunction_frames = log.wavefunction_frames();
                }
                wavefunctions.extend(log.wavefunctions);
                if structure.is_none() {
                    log_energies_hartree = log
                        .steps
                        .iter()
                        .map(|s| s.scf_energy_hartree.unwrap_or(f64::NAN))
                        .collect();
                    topology_frames = log.frames;
                    structure = Some((log.structure, path.clone()));
                } else {
                    if let Some((s, topology)) = &structure {
                        super::series::check_same_atoms(s, topology, &log.structure, path)?;
                    }
                    let n = log.structure.len();
                    trajectories.push((
                        Box::new(crate::model::InMemoryFrames {
                            n_atoms: n,
                            frames: log.frames,
                        }),
                        path.clone(),
                        false,
                    ));
                }
            }
            Piece::Grids(g, s, f, w) => {
                warnings.extend(w.into_iter().map(|w| format!("{}: {w}", path.display())));
                if structure.is_none() && !s.is_empty() {
                    structure = Some((s, path.clone()));
                    topology_frames.push(f);
                }
                grids.extend(g);
            }
        }
    }

    // A log's step mapping holds for that log opened alone.
    if wavefunction_frames.len() != wavefunctions.len() || !trajectories.is_empty() {
        wavefunction_frames.clear();
    }
    let (mut structure, topo_path) = structure.unwrap_or_else(|| (Structure::default(), first_path.clone()));
    for (other, frames, path) in joined {
        topology_frames = super::join::join_frames(&topology_frames, &frames).map_err(|m| ReadError::file(&path, m))?;
        warnings.extend(super::join::append_structure(
            &mut structure,
            &other,
            &path.display().to_string(),
        ));
    }
    let n_atoms = structure.len();
    let guess = structure.bonds.is_empty() && structure.bond_source == crate::model::BondSource::None && n_atoms > 0;
    if guess && let Some(f) = topology_frames.first() {
        crate::model::bonds::guess_bonds_in_place(&mut structure, &f.positions_angstrom, f.cell.as_ref());
    }
    if !trajectories.is_empty() {
        // The frames are the trajectories', not the log's steps.
        log_energies_hartree.clear();
    }
    let mut trajectory = if trajectories.is_empty() {
        Trajectory::from_frames(n_atoms, topology_frames, topo_path.display().to_string())
    } else {
        let mut parts = Vec::new();
        let mut names = Vec::new();
        for (src, p, structure_file) in trajectories {
            if n_atoms > 0 && src.n_atoms() != n_atoms && structure_file {
                return Err(ReadError::file(
                    &p,
                    format!(
                        "holds {} atoms where {} holds {n_atoms}: a structure file of other atoms joins the first only when \
                         the first has coordinates and comes with no trajectory; open the molecules' files before the trajectories",
                        src.n_atoms(),
                        topo_path.display()
                    ),
                ));
            }
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
    if guess && structure.bond_source == crate::model::BondSource::None && trajectory.n_frames() > 0 {
        // Topology without coordinates (a PSF without bonds): guess on the trajectory's first frame.
        match trajectory.frame(0) {
            Ok(f) => crate::model::bonds::guess_bonds_in_place(&mut structure, &f.positions_angstrom, f.cell.as_ref()),
            Err(e) => warnings.push(format!("bonds not guessed: {e}")),
        }
    }
    if structure.is_empty() && trajectory.n_atoms() > 0 {
        return Err(ReadError::file(
            first_path,
            "a trajectory needs a topology file (pdb, psf, gro, ...) to describe its atoms",
        ));
    }
    if structure.charges_e.is_none() && wavefunctions.is_empty() {
        give_standard_charges(&mut structure, &mut trajectory, &mut warnings);
    }
    if !structure.is_empty() && trajectory.n_frames() == 0 && wavefunctions.is_empty() && grids.is_empty() {
        warnings.push(format!(
            "{} describes {} atoms but gives no coordinates: open it together with a trajectory or a coordinate file (DCD, XTC, NetCDF, CRD, PDB, ...)",
            first_path.display(),
            structure.len()
        ));
    }
    let warnings = explain_water_sites(warnings, &structure);
    let frame_energies_hartree = frame_energies(log_energies_hartree, &wavefunctions, trajectory.n_frames());
    Ok((
        System {
            structure,
            trajectory,
            wavefunctions,
            grids,
            warnings,
            paths: paths.to_vec(),
            wavefunction_frames,
            frame_energies_hartree,
            orbital_levels,
        },
        Origin {
            structure_from_topology,
            first_wavefunction,
        },
    ))
}

/// Each frame's energy: a log's steps' (the log opened alone, one frame per step), else the
/// wavefunctions' of a series with one per frame; empty when no frame has one.
fn frame_energies(log_hartree: Vec<f64>, wavefunctions: &[Wavefunction], n_frames: usize) -> Vec<f64> {
    let energies = if !log_hartree.is_empty() {
        log_hartree
    } else if wavefunctions.len() > 1 {
        wavefunctions
            .iter()
            .map(|w| w.energy_hartree.unwrap_or(f64::NAN))
            .collect()
    } else {
        Vec::new()
    };
    if energies.len() != n_frames || energies.iter().all(|e| !e.is_finite()) {
        return Vec::new();
    }
    energies
}

/// A protein whose files carry no charges takes CHARMM22's by residue and atom name
/// (`model::charges`), said in a warning; the first frame finds its disulfides and hydrogens.
fn give_standard_charges(structure: &mut Structure, trajectory: &mut Trajectory, warnings: &mut Vec<String>) {
    // Coordinates find disulfides and put the file's hydrogens' charges on them.
    let cysteines = structure.names.iter().any(|n| n.as_str() == "SG");
    let hydrogens = structure.elements.iter().any(|e| e.number() == 1);
    let positions = if (cysteines || hydrogens) && trajectory.n_frames() > 0 {
        trajectory.frame(0).map(|f| f.positions_angstrom).unwrap_or_default()
    } else {
        Vec::new()
    };
    if let Some(c) = crate::model::charges::standard_charges(structure, &positions) {
        warnings.push(c.note());
        structure.charges_e = Some(c.charges_e);
    }
}

/// Makes every frame of `trajectory` whole across its box from now on (`model::whole`), for the
/// `n_atoms` atoms bonded by `bonds` (`None` without bonds: frames as written). Returns a note in
/// words when the first frame, as written, had molecules in pieces across its box (what the user
/// would otherwise have seen), or bonded networks that wrap around it (left as written).
pub fn make_whole(bonds: &[[u32; 2]], n_atoms: usize, trajectory: &mut Trajectory) -> Option<String> {
    trajectory.set_whole(None);
    if bonds.is_empty() || n_atoms == 0 {
        return None;
    }
    let whole = std::sync::Arc::new(crate::model::whole::Whole::new(n_atoms, bonds));
    let first = if trajectory.n_frames() > 0 {
        trajectory.frame(0).ok()
    } else {
        None
    };
    trajectory.set_whole(Some(std::sync::Arc::clone(&whole)));
    let first = first?;
    let cell = first.cell.as_ref()?;
    let crossing = crate::model::whole::crossing_bonds(&first.positions_angstrom, cell, bonds);
    if crossing == 0 {
        return None;
    }
    let mut joined = first.positions_angstrom.clone();
    let report = whole.apply(&mut joined, cell);
    let plural = |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let mut parts = Vec::new();
    if report.joined > 0 {
        parts.push(format!(
            "{} in pieces across the periodic box in the first frame ({} crossing it): molecules are \
             made whole in every frame (atoms moved by whole box vectors)",
            plural(report.joined, "molecule lay", "molecules lay"),
            plural(crossing, "bond", "bonds"),
        ));
    }
    if report.networks > 0 {
        parts.push(format!(
            "{} bonded to {} own periodic image (a crystal's network) left as written",
            plural(report.networks, "group of atoms", "groups of atoms"),
            if report.networks == 1 { "its" } else { "their" }
        ));
    }
    let note = format!("{}: {}", trajectory.origin, parts.join("; "));
    Some(note)
}

/// True when an element is known; used by readers to warn about unknown atoms.
pub fn is_known(e: Element) -> bool {
    e != Element::UNKNOWN
}

/// `warnings` with the readers' "N of M atoms have an unknown element" explained when those atoms
/// are all the massless sites of a four- or five-site water model (TIP4P's MW): they have no element
/// by design, are drawn without bonds and left out of ligand maps.
fn explain_water_sites(mut warnings: Vec<String>, s: &Structure) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for (i, e) in s.elements.iter().enumerate() {
        if e.number() != 0 {
            continue;
        }
        let water = s
            .resnames
            .get(i)
            .is_some_and(|r| crate::model::element::is_water_resname(r.as_str().as_bytes()));
        if !water {
            return warnings;
        }
        let name = s.names.get(i).map(|n| n.to_string()).unwrap_or_default();
        if !names.contains(&name) && names.len() < 4 {
            names.push(name);
        }
    }
    if names.is_empty() {
        return warnings;
    }
    for w in warnings.iter_mut().filter(|w| w.ends_with("have an unknown element")) {
        w.push_str(&format!(
            ": the massless sites of the water model ({}), which have none; drawn without bonds and \
             left out of ligand maps",
            names.join(", ")
        ));
    }
    warnings
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
        wavefunction_frames: Vec::new(),
        frame_energies_hartree: Vec::new(),
        orbital_levels: None,
    })
}
