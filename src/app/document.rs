//! One opened system ([`Document`]): its structure, lazily read trajectory, wavefunctions and
//! volumes, the current frame, and how a field of it becomes a key and a job.
//!
//! Created by `AppState` when files open; the representation update loop (`app::reps`) and the
//! `render` command ask it for [`FieldKey`]s and [`FieldJob`]s. The lattices live here: computed
//! orbitals on a box around the (QM region's) atoms, potential maps on one lattice fixed for the
//! whole trajectory.

use super::atoms;
use super::fields::{FieldChoice, FieldKey};
use super::settings::PotentialMethod;
use crate::compute::molsurf::SurfaceModel;
use crate::compute::request::{self, FieldRequest, LatticeChoice, SystemView};
use crate::compute::{Field, FieldJob};
use crate::io::{ReadError, System};
use crate::model::{Frame, Grid3, Lattice, Structure, Trajectory, Wavefunction};
use std::path::PathBuf;
use std::sync::Arc;

/// One opened system.
pub struct Document {
    /// Unique within a run; part of every field key.
    pub id: u64,
    pub name: String,
    pub paths: Vec<PathBuf>,
    pub structure: Structure,
    pub trajectory: Trajectory,
    pub n_frames: usize,
    /// Coordinates of the current frame.
    pub frame: Frame,
    pub frame_index: usize,
    pub bonds: Vec<[u32; 2]>,
    /// One per frame for a wavefunction series, one for a single file, else none.
    pub wavefunctions: Vec<Arc<Wavefunction>>,
    /// The frame of each wavefunction when a QM log printed orbitals at some steps only (the
    /// other frames have none); empty otherwise (`io::System::wavefunction_frames`).
    pub wavefunction_frames: Vec<usize>,
    /// Each frame's total energy in hartree (NaN where none) for a QM log's steps or a series of
    /// wavefunctions with energies; empty otherwise (`io::System::frame_energies_hartree`).
    pub frame_energies_hartree: Vec<f64>,
    /// Orbital energies a log printed without orbitals that can be drawn
    /// (`io::System::orbital_levels`): listed, never drawn.
    pub orbital_levels: Option<crate::model::OrbitalLevels>,
    /// The structure's double, triple and aromatic bonds as they are drawn (`app::bond_orders`).
    pub multiple_bonds: crate::app::bond_orders::MultipleBonds,
    /// Which atoms are the solute when the structure has explicit water or electrolyte ions
    /// (`compute::pb::setup::solute`): screened potentials leave the others out. `None` without
    /// solvent.
    pub solute_mask: Option<Arc<Vec<bool>>>,
    pub grids: Vec<Arc<Grid3>>,
    pub warnings: Vec<String>,
    /// The lattice of per-frame potential maps, fixed for the whole trajectory
    /// ([`potential_lattice`]); `None` without partial charges.
    pub potential_lattice: Option<Lattice>,
    /// The QM region the wavefunctions describe, when they cover part of an MD system.
    pub qm: Option<super::qm::QmDocument>,
    /// The selection that named the QM region, if one did (kept for session files).
    pub qm_selection: Option<String>,
    /// Coordinates of the frames around the current one that the running-average potential needs
    /// (`app::potential`), by frame index.
    pub potential_frames: std::collections::BTreeMap<usize, Arc<Vec<[f32; 3]>>>,
    /// The atom selections of molecular-surface representations (`FieldChoice::MolSurf` holds an
    /// index into this list and into `surface_models`; entries are added, never removed, so
    /// indices stay valid).
    pub surface_selections: Vec<String>,
    /// The kind of each registered molecular surface (Gaussian or solvent-excluded), beside its
    /// selection in `surface_selections`.
    pub surface_models: Vec<SurfaceModel>,
    /// The implicit-ligand-sampling maps (`FieldChoice::Ils` holds an index into this list; maps
    /// are added, never removed).
    pub ils_maps: Vec<super::ils::IlsMapState>,
    /// The atoms belong to more than one chain (labels then name the chain).
    pub several_chains: bool,
    /// Frame 0 as read has a periodic box.
    pub periodic: bool,
    /// The box is a crystal's unit cell (a PDB, mmCIF or BinaryCIF structure of one model with
    /// CRYST1 or `_cell`), not a simulation's: it is not drawn unless asked for, as VMD, PyMOL and
    /// ChimeraX leave it out.
    pub crystal_cell: bool,
    /// Whether the box is drawn for this document, once the user has said (`set cell`, the
    /// checkboxes); before that, [`Document::cell_shown`] decides.
    pub show_cell: Option<bool>,
    /// How frames are fitted onto frame 0 for viewing (`app::fit`), if they are.
    pub fit: Option<crate::analysis::fit::FrameFit>,
    /// The spacing of the potential maps' lattice (Angstrom).
    potential_spacing_angstrom: f64,
}

/// How fields of a document are computed: the settings the keys and jobs depend on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FieldSettings {
    /// Points along the longest axis of computed orbital lattices.
    pub lattice_points: u32,
    pub potential_method: PotentialMethod,
    /// The medium of the charges' potential maps (`app::esp_model`); multilevel summation is for
    /// vacuum only, the screened models take the direct sum.
    pub dielectric: crate::compute::esp::screening::Dielectric,
}

/// The lattice of a structure's per-frame potential maps (`compute::request`'s rule for them),
/// fixed for the whole trajectory. `None` without partial charges.
fn potential_lattice(structure: &Structure, frame: &Frame, spacing_angstrom: f64) -> Option<Lattice> {
    structure.charges_e.as_ref()?;
    request::lattice(
        &LatticeChoice::PotentialMap { spacing_angstrom },
        &request::positions_f64(&frame.positions_angstrom),
        frame.cell.as_ref(),
    )
    .ok()
}

/// The lattice computed orbitals are sampled on around `positions_angstrom`
/// ([`LatticeChoice::OrbitalPoints`]).
pub fn orbital_lattice(positions_angstrom: &[[f32; 3]], lattice_points: u32) -> Option<Lattice> {
    request::lattice(
        &LatticeChoice::OrbitalPoints(lattice_points),
        &request::positions_f64(positions_angstrom),
        None,
    )
    .ok()
}

impl Document {
    /// Takes over a loaded system and reads its first frame; potential maps at
    /// `potential_spacing_angstrom`.
    /// With `make_whole`, molecules written in pieces across a periodic box are joined in every
    /// frame (`io::load::make_whole`; a warning says so when the first frame had any).
    pub fn from_system(
        id: u64,
        name: String,
        mut system: System,
        potential_spacing_angstrom: f64,
        make_whole: bool,
    ) -> Result<Document, ReadError> {
        crate::jobs::pair::share_decoding(&mut system.trajectory);
        let n_frames = system.trajectory.n_frames();
        // A log that printed orbitals at some steps only, not the first, opens at the first step
        // with orbitals (a Gaussian optimisation prints them at the optimised geometry).
        let start = match system.wavefunction_frames.first() {
            Some(&f) if f < n_frames && !system.wavefunction_frames.contains(&0) => f,
            _ => 0,
        };
        let mut frame = Frame::default();
        if n_frames > 0 {
            system.trajectory.read_frame(start, &mut frame)?;
        }
        // A structure the loader guessed bonds for keeps that answer, none included (an ionic
        // crystal's K+ and Cl- are not bonded): the window, `info` and Python show the same bonds.
        let guessed = system.structure.bond_source == crate::model::BondSource::Guessed;
        let bonds = if system.structure.bonds.is_empty() && !guessed {
            atoms::guess_bonds(&system.structure, &frame.positions_angstrom)
        } else {
            system.structure.bonds.clone()
        };
        let solute_mask = match crate::compute::pb::setup::solute(&system.structure, None, None) {
            Ok((keep, Some(_))) => Some(Arc::new(keep)),
            _ => None,
        };
        if make_whole && frame.cell.is_some() {
            let n_atoms = system.structure.len();
            if let Some(note) = crate::io::load::make_whole(&bonds, n_atoms, &mut system.trajectory) {
                system.warnings.push(note);
            }
            // The water and ions next to the solute drawn beside it, not a box length away; not
            // in a crystal structure's entry, whose waters are placed as the crystallographers
            // modelled them (`set whole on` asks for it there).
            let crystal_entry = n_frames <= 1 && system.paths.first().is_some_and(|p| is_crystal_format(p));
            if system.trajectory.whole().is_some() && solute_mask.is_some() && !crystal_entry {
                system.trajectory.set_wrap_around(solute_mask.clone());
                system.warnings.push(
                    "water and ions are drawn at their periodic image nearest the solute, in every frame \
                     (set whole off: where the file put them)"
                        .into(),
                );
            }
            system.trajectory.read_frame(start, &mut frame)?;
        }
        let periodic = frame.cell.is_some();
        let crystal_cell = periodic && n_frames <= 1 && system.paths.first().is_some_and(|p| is_crystal_format(p));
        let potential_lattice = potential_lattice(&system.structure, &frame, potential_spacing_angstrom);
        let warnings = std::mem::take(&mut system.warnings);
        let multiple_bonds = crate::app::bond_orders::MultipleBonds::new(&system.structure.multiple_bonds, &bonds);
        let chains = &system.structure.chains;
        let several_chains = chains.iter().any(|c| !c.is_empty() && Some(c) != chains.first());
        Ok(Document {
            id,
            name,
            potential_lattice,
            paths: system.paths,
            structure: system.structure,
            trajectory: system.trajectory,
            n_frames,
            frame,
            frame_index: start,
            bonds,
            wavefunctions: system.wavefunctions.into_iter().map(Arc::new).collect(),
            wavefunction_frames: system.wavefunction_frames,
            frame_energies_hartree: system.frame_energies_hartree,
            orbital_levels: system.orbital_levels,
            multiple_bonds,
            solute_mask,
            grids: system.grids.into_iter().map(Arc::new).collect(),
            warnings,
            qm: None,
            qm_selection: None,
            potential_frames: std::collections::BTreeMap::new(),
            surface_selections: Vec::new(),
            surface_models: Vec::new(),
            ils_maps: Vec::new(),
            several_chains,
            periodic,
            crystal_cell,
            show_cell: None,
            fit: None,
            potential_spacing_angstrom,
        })
    }

    /// Looks for frames appended to the trajectory file since it was opened (a simulation still
    /// running), reading only the new part of the file; returns how many were added. Frame series
    /// tied to wavefunctions or a QM region do not grow.
    pub fn pick_up_new_frames(&mut self) -> Result<usize, crate::model::FrameError> {
        if self.qm.is_some() || !self.wavefunctions.is_empty() {
            return Ok(0);
        }
        let added = self.trajectory.refresh()?;
        self.n_frames = self.trajectory.n_frames();
        Ok(added)
    }

    /// Attaches the QM region the wavefunctions describe (from `io::load_with`).
    pub fn with_qm_region(mut self, region: Option<crate::analysis::qm_region::QmRegion>) -> Document {
        self.qm = region.map(|r| super::qm::QmDocument::new(r, self.wavefunctions.len(), self.n_frames));
        self
    }

    /// The atoms computed orbitals are placed around at frame `index` with coordinates `frame`: the
    /// QM region's atoms (made whole) when there is one, else all atoms.
    pub fn orbital_positions<'a>(&'a self, index: usize, frame: &'a Frame) -> Option<std::borrow::Cow<'a, [[f32; 3]]>> {
        match &self.qm {
            Some(qm) => qm
                .positions_angstrom(&self.wavefunctions, self.n_frames, index, frame)
                .map(std::borrow::Cow::Owned),
            None => Some(std::borrow::Cow::Borrowed(&frame.positions_angstrom)),
        }
    }

    /// Makes molecules whole across the periodic box in every frame (`on`) or leaves frames as
    /// written, and reads the current frame again; the note of `io::load::make_whole`.
    pub fn set_whole(&mut self, on: bool) -> Result<Option<String>, ReadError> {
        let note = if on {
            let note = crate::io::load::make_whole(&self.bonds, self.structure.len(), &mut self.trajectory);
            // As when the files were opened with it on: the solvent gathered around the solute.
            self.trajectory.set_wrap_around(self.solute_mask.clone());
            note
        } else {
            self.trajectory.set_whole(None);
            None
        };
        self.potential_frames.clear();
        self.set_frame(self.frame_index)?;
        Ok(note)
    }

    /// Reads frame `index` (clamped to the last frame).
    pub fn set_frame(&mut self, index: usize) -> Result<(), ReadError> {
        if self.n_frames == 0 {
            return Ok(());
        }
        let index = index.min(self.n_frames - 1);
        let mut frame = std::mem::take(&mut self.frame);
        let read = self.read_frame(index, &mut frame);
        self.frame = frame;
        read?;
        self.frame_index = index;
        Ok(())
    }

    /// Reads frame `index` into `out` as the viewer shows it: made whole when molecules are, and
    /// fitted onto frame 0 when frames are (`app::fit`).
    pub fn read_frame(&mut self, index: usize, out: &mut Frame) -> Result<(), crate::model::FrameError> {
        self.trajectory.read_frame(index, out)?;
        if let Some(fit) = &self.fit {
            fit.apply(out);
        }
        Ok(())
    }

    /// Fits every frame onto frame 0 with `fit` (`None`: frames as read), and reads the current
    /// frame and the potential maps' lattice again.
    pub fn set_fit(&mut self, fit: Option<crate::analysis::fit::FrameFit>) -> Result<(), ReadError> {
        self.fit = fit;
        self.potential_frames.clear();
        if self.n_frames > 0 {
            let mut first = Frame::default();
            self.read_frame(0, &mut first)?;
            self.potential_lattice = potential_lattice(&self.structure, &first, self.potential_spacing_angstrom);
        }
        self.set_frame(self.frame_index)
    }

    /// The wavefunction of frame `index` (the series entry, or the only one).
    pub fn wavefunction_at(&self, index: usize) -> Option<&Arc<Wavefunction>> {
        if !self.wavefunction_frames.is_empty() {
            let k = crate::model::qm_region::wavefunction_of_frame(
                &self.wavefunction_frames,
                self.wavefunctions.len(),
                self.n_frames,
                index,
            )?;
            return self.wavefunctions.get(k);
        }
        if self.wavefunctions.len() == self.n_frames && self.n_frames > 1 {
            self.wavefunctions.get(index)
        } else {
            self.wavefunctions.first()
        }
    }

    /// The frames that have orbitals, numbered as the timeline numbers them ("frame 6", "frames 0
    /// and 6"), when a QM log printed them at some steps only.
    pub fn frames_with_orbitals_text(&self) -> Option<String> {
        let f: Vec<String> = self.wavefunction_frames.iter().map(|i| i.to_string()).collect();
        match f.as_slice() {
            [] => None,
            [one] => Some(format!("frame {one}")),
            [rest @ .., last] => Some(format!("frames {} and {last}", rest.join(", "))),
        }
    }

    /// The wavefunction of the current frame.
    pub fn wavefunction(&self) -> Option<&Arc<Wavefunction>> {
        self.wavefunction_at(self.frame_index)
    }

    /// Whether the document has `field` to show.
    pub fn has_field(&self, field: FieldChoice) -> bool {
        match field {
            FieldChoice::Orbital { spin, index } => self
                .wavefunction()
                .and_then(|w| w.orbitals(spin))
                .is_some_and(|set| index < set.len()),
            FieldChoice::Density | FieldChoice::WavefunctionPotential => self.wavefunction().is_some(),
            FieldChoice::SpinDensity => self
                .wavefunction()
                .is_some_and(|w| w.spin != crate::model::SpinKind::Restricted),
            FieldChoice::Volume(i) => i < self.grids.len(),
            FieldChoice::Potential | FieldChoice::PotentialMean { .. } => self.potential_lattice.is_some(),
            FieldChoice::MolSurf { selection } => self.surface_selections.len() > usize::from(selection),
            FieldChoice::Ils(i) => self.ils_maps.len() > usize::from(i),
            FieldChoice::PotentialPb { .. } => self.structure.charges_e.is_some(),
        }
    }

    /// Registers the molecular surface `model` of the atom selection `text` (checked by parsing
    /// it) and returns its index; a surface already registered keeps its index.
    pub fn add_surface(&mut self, text: &str, model: SurfaceModel) -> Result<u16, String> {
        if let Some(i) = self.surface_index(text, model) {
            return Ok(i);
        }
        crate::model::select::Selection::parse(text).map_err(|e| format!("surface selection '{text}': {e}"))?;
        let i = u16::try_from(self.surface_selections.len()).map_err(|_| "too many surface selections".to_string())?;
        self.surface_selections.push(text.trim().to_string());
        self.surface_models.push(model);
        Ok(i)
    }

    /// The index of the registered surface `model` of selection `text`.
    pub fn surface_index(&self, text: &str, model: SurfaceModel) -> Option<u16> {
        let text = text.trim();
        self.surface_selections
            .iter()
            .zip(&self.surface_models)
            .position(|(s, m)| s == text && *m == model)
            .and_then(|i| u16::try_from(i).ok())
    }

    /// The kind of registered surface `selection` (Gaussian when it is not registered).
    pub fn surface_model(&self, selection: u16) -> SurfaceModel {
        self.surface_models
            .get(usize::from(selection))
            .copied()
            .unwrap_or_default()
    }

    /// The view of this document the resolver takes, at `frame` with the wavefunction of frame
    /// `index`.
    fn view<'a>(&'a self, index: usize, frame: &'a Frame) -> SystemView<'a> {
        SystemView {
            structure: &self.structure,
            frame: Some(frame),
            wavefunction: self.wavefunction_at(index),
            warnings: &self.warnings,
        }
    }

    /// The molecular surface of surface selection `selection` at `frame`, resolved (its atoms with
    /// their radii: the file's, else the element's); `None` when the selection picks no atom with
    /// a radius.
    fn molsurf_request(&self, selection: u16, frame: &Frame) -> Option<request::Resolved> {
        let text = self.surface_selections.get(usize::from(selection))?;
        let flags = crate::model::select::Selection::parse(text)
            .ok()?
            .evaluate(&self.structure, Some(frame));
        let surface = FieldRequest::MolSurf {
            selected: Some(flags),
            model: self.surface_model(selection),
        };
        request::resolve(&self.view(0, frame), &surface).ok()
    }

    /// The key of `field` at frame `index` whose coordinates are `frame`.
    pub fn field_key_at(
        &self,
        field: FieldChoice,
        index: usize,
        frame: &Frame,
        settings: FieldSettings,
    ) -> Option<FieldKey> {
        // A frame without orbitals (a log that printed them at some steps) has no such field: the
        // representation shows nothing there rather than another frame's lobes.
        if field.needs_wavefunction() && self.wavefunction_at(index).is_none() {
            return None;
        }
        let dims = match field {
            FieldChoice::Volume(i) => self.grids.get(i)?.lattice.dims,
            FieldChoice::Potential | FieldChoice::PotentialMean { .. } => self.potential_lattice?.dims,
            // Its lattice follows the frame's atoms (`app::pb`); the key names frame and revision.
            FieldChoice::PotentialPb { .. } => [0; 3],
            FieldChoice::MolSurf { selection } => {
                self.molsurf_request(selection, frame)?
                    .lattice(&LatticeChoice::SurfacePoints(settings.lattice_points), None)
                    .ok()?
                    .dims
            }
            FieldChoice::Ils(i) => self.ils_maps.get(usize::from(i))?.map.dims,
            _ => orbital_lattice(&self.orbital_positions(index, frame)?, settings.lattice_points)?.dims,
        };
        Some(FieldKey {
            document: self.id,
            frame: match field {
                FieldChoice::Volume(_) => 0,
                // The map grows with its frames, whatever frame is shown.
                FieldChoice::Ils(i) => self.ils_maps.get(usize::from(i))?.frames_done,
                _ => index,
            },
            field,
            dims,
        })
    }

    /// The key of `field` at the current frame.
    pub fn field_key(&self, field: FieldChoice, settings: FieldSettings) -> Option<FieldKey> {
        self.field_key_at(field, self.frame_index, &self.frame, settings)
    }

    /// The point charges whose potential `field` is at frame `index` (`frame` being its
    /// coordinates): the structure's charges at the frame's positions, or the mean over a window;
    /// `None` for fields that are not potentials of charges and where charges are missing.
    /// Under a screened model (`screened`: eps = 4r, Debye-Hückel), whose medium stands for the
    /// solvent, the explicit water and electrolyte ions are left out ([`Document::solute_mask`]),
    /// as the Poisson-Boltzmann solute leaves them out.
    pub fn point_charges_at(
        &self,
        field: FieldChoice,
        index: usize,
        frame: &Frame,
        screened: bool,
    ) -> Option<crate::compute::PointCharges> {
        let q = self.all_point_charges_at(field, index, frame)?;
        match (&self.solute_mask, screened) {
            (Some(mask), true) => Some(crate::compute::esp::screening::kept_charges(&q, mask)),
            _ => Some(q),
        }
    }

    fn all_point_charges_at(
        &self,
        field: FieldChoice,
        index: usize,
        frame: &Frame,
    ) -> Option<crate::compute::PointCharges> {
        match field {
            FieldChoice::PotentialMean { frames } => self.potential_mean_charges(index, frames, frame),
            FieldChoice::Potential => {
                let charges = self.structure.charges_e.as_ref()?;
                Some(crate::compute::PointCharges {
                    positions_bohr: frame
                        .positions_angstrom
                        .iter()
                        .map(|p| crate::model::units::bohr_from_angstrom3(p.map(f64::from)))
                        .collect(),
                    charges_e: charges.iter().map(|&c| f64::from(c)).collect(),
                })
            }
            _ => None,
        }
    }

    /// The job that computes `key`'s field, `frame` being the coordinates of frame `key.frame`;
    /// `None` for volumes (nothing to compute) and fields the document lacks. Resolved by
    /// `compute::request`, as the command line's fields are.
    pub fn field_job_at(&self, key: &FieldKey, frame: &Frame, settings: FieldSettings) -> Option<FieldJob> {
        let orbitals = LatticeChoice::OrbitalPoints(settings.lattice_points);
        if key.field.is_potential() {
            let charges = self.point_charges_at(key.field, key.frame, frame, !settings.dielectric.is_vacuum())?;
            if !settings.dielectric.is_vacuum() {
                let lattice = self.potential_lattice?;
                let input = crate::compute::esp::screening::field_input_screened(
                    Arc::new(charges),
                    crate::compute::esp::EspMethod::Direct,
                    crate::compute::esp::Boundary::Open,
                    settings.dielectric,
                    &lattice,
                )
                .ok()?;
                return Some(FieldJob {
                    field: Field::Potential,
                    input,
                    lattice,
                });
            }
            // Multilevel summation (open boundaries, default a and h) has its long-range lattices
            // built by the worker that takes the request.
            let method = if settings.potential_method.uses_msm(charges.charges_e.len()) {
                crate::compute::esp::EspMethod::Msm(crate::compute::esp::MsmParams::default())
            } else {
                crate::compute::esp::EspMethod::Direct
            };
            let potential = FieldRequest::Charges {
                charges: Arc::new(charges),
                method,
                deferred: true,
            };
            let lattice = LatticeChoice::Fixed(self.potential_lattice?);
            return request::job(&self.view(key.frame, frame), &potential, &lattice).ok();
        }
        if let FieldChoice::MolSurf { selection } = key.field {
            return self
                .molsurf_request(selection, frame)?
                .job(&LatticeChoice::SurfacePoints(settings.lattice_points), None)
                .ok();
        }
        if let Some(qm) = &self.qm {
            return qm.job(&self.wavefunctions, self.n_frames, key, frame, |p| {
                request::lattice(&orbitals, &request::positions_f64(p), None).ok()
            });
        }
        let field = match key.field {
            FieldChoice::Orbital { spin, index } => Field::Orbital { spin, index },
            FieldChoice::Density => Field::Density,
            FieldChoice::SpinDensity => Field::SpinDensity,
            FieldChoice::WavefunctionPotential => Field::QmPotential,
            FieldChoice::Volume(_)
            | FieldChoice::Potential
            | FieldChoice::PotentialMean { .. }
            | FieldChoice::MolSurf { .. }
            | FieldChoice::Ils(_)
            | FieldChoice::PotentialPb { .. } => return None,
        };
        // Placed around the frame's atoms (which a wavefunction series moves with).
        let resolved = request::resolve(&self.view(key.frame, frame), &FieldRequest::Wavefunction(field)).ok()?;
        let lattice = request::lattice(&orbitals, &request::positions_f64(&frame.positions_angstrom), None).ok()?;
        Some(FieldJob {
            field: resolved.field.clone(),
            input: resolved.input_on(&lattice).ok()?,
            lattice,
        })
    }

    /// `grid`, the computed result for `key`, on the lattice it is shown on: a QM region's orbitals
    /// are computed in the wavefunction's frame and placed back on the MD frame's lattice.
    pub fn placed_grid(&self, key: &FieldKey, grid: Arc<Grid3>) -> Arc<Grid3> {
        match &self.qm {
            Some(qm) => qm.place(key, grid),
            None => grid,
        }
    }

    /// A QM region's warning (a poor fit), once.
    pub fn take_qm_warning(&self) -> Option<String> {
        self.qm.as_ref().and_then(|q| q.take_warning())
    }
}

/// Whether a file is a PDB, mmCIF or BinaryCIF file (compressed or not), whose cell is a crystal's.
fn is_crystal_format(path: &std::path::Path) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let name = name
        .strip_suffix(".gz")
        .or_else(|| name.strip_suffix(".bz2"))
        .unwrap_or(&name);
    [".pdb", ".ent", ".cif", ".mmcif", ".bcif"]
        .iter()
        .any(|e| name.ends_with(e))
}

impl Document {
    /// Whether the periodic box is drawn: as the user said for this document, else by the setting,
    /// except a crystal's unit cell, which is left out until asked for.
    pub fn cell_shown(&self, setting: bool) -> bool {
        self.show_cell.unwrap_or(setting && !self.crystal_cell)
    }
}

#[cfg(test)]
mod tests {
    use crate::app::fields::{FieldChoice, FieldService};
    use crate::app::reps::{FieldStyle, RepSpec};
    use crate::app::settings::Settings;
    use crate::app::state::{AppState, Command};
    use crate::compute::cpu::evaluate_grid;
    use std::path::PathBuf;

    /// A surface representation of a selection of adk: its field, lattice and text follow the
    /// selected atoms frame by frame; a bad selection is refused.
    #[test]
    fn surface_representation_follows_its_selection() {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/md");
        let system = crate::io::load(&[dir.join("adk.psf"), dir.join("adk_dims.dcd")]).unwrap();
        let settings = Settings {
            lattice_points: 48,
            ..Settings::default()
        };
        let mut state = AppState::new(settings, FieldService::default());
        state.open_system("adk".into(), system);
        assert!(
            state
                .add_rep(&RepSpec::field("molsurf:resid 1 to", FieldStyle::Isosurface))
                .is_err()
        );
        let id = state
            .add_rep(&RepSpec::field("molsurf:resid 1 to 12", FieldStyle::Isosurface))
            .unwrap();
        let field = state.reps().field(id).unwrap().field;
        assert!(matches!(field, FieldChoice::MolSurf { .. }));
        let doc = state.document().unwrap();
        assert_eq!(
            super::super::reps::spec::field_text(field, Some(doc)),
            "molsurf:resid 1 to 12"
        );
        let flags = crate::model::select::Selection::parse("resid 1 to 12")
            .unwrap()
            .evaluate(&doc.structure, None);
        for f in [0, 5] {
            state.apply(Command::SetFrame(f));
            let frame = state.document().unwrap().frame.clone();
            let key = state.field_key_at(field, f, &frame).unwrap();
            let grid = evaluate_grid(&state.field_job_at(&key, &frame).unwrap()).unwrap();
            assert_eq!(grid.lattice.dims, key.dims);
            // Inside at every selected atom, outside at the lattice's corner.
            for (p, _) in frame.positions_angstrom.iter().zip(&flags).filter(|(_, s)| **s) {
                let v = grid.trilinear_at_angstrom(*p, false).unwrap();
                assert!(v > 0.5, "frame {f}: {v} at an atom");
            }
            assert!(grid.values[0] < 0.01);
        }
    }
}
