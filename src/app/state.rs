//! `AppState`: everything the viewer shows and the commands that change it.
//!
//! Panels read the state and push [`Command`]s; [`AppState::apply_pending`] carries them out
//! (loading files, moving the frame, choosing an orbital) and marks what the renderer must
//! re-upload. No egui or wgpu here, so tests drive the state directly.

use super::fields::{FieldChoice, FieldKey, FieldService, MeshKey};
use super::representation::{self, ColorBy, DrawStyle};
use super::settings::Settings;
use crate::compute::{Field, FieldInput, FieldJob};
use crate::io::{ReadError, System};
use crate::model::units::EV_PER_HARTREE;
use crate::model::{Frame, Grid3, Lattice, Spin, SpinKind, Structure, Trajectory, Wavefunction};
use crate::render::Camera;
use crate::render::gpu::{CylinderInstance, LineVertex, SphereInstance};
use crate::surface::MeshData;
use glam::Vec3;
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
    pub grids: Vec<Arc<Grid3>>,
    pub warnings: Vec<String>,
    /// The lattice of per-frame potential maps, fixed for the whole trajectory (the first frame's
    /// periodic box, or its atoms padded by 8 A, at `settings.potential_spacing_angstrom`); `None`
    /// without partial charges.
    pub potential_lattice: Option<Lattice>,
    /// The QM region the wavefunctions describe, when they cover part of an MD system.
    pub qm: Option<super::qm::QmDocument>,
    /// Coordinates of the frames around the current one that the running-average potential needs
    /// (`app::potential`), by frame index.
    pub potential_frames: std::collections::BTreeMap<usize, Arc<Vec<[f32; 3]>>>,
}

fn potential_lattice(structure: &Structure, frame: &Frame, spacing_angstrom: f64) -> Option<Lattice> {
    structure.charges_e.as_ref()?;
    if let Some(cell) = frame.cell.filter(|c| c.is_valid() && c.is_orthorhombic()) {
        return Some(Lattice::around_box(
            [0.0; 3],
            cell.lengths_angstrom,
            0.0,
            spacing_angstrom,
        ));
    }
    let (lo, hi) = representation::bounds(&frame.positions_angstrom, 0.0)?;
    Some(Lattice::around_box(
        lo.map(f64::from),
        hi.map(f64::from),
        8.0,
        spacing_angstrom,
    ))
}

impl Document {
    /// Takes over a loaded system and reads its first frame.
    pub fn from_system(id: u64, name: String, mut system: System) -> Result<Document, ReadError> {
        let n_frames = system.trajectory.n_frames();
        let mut frame = Frame::default();
        if n_frames > 0 {
            system.trajectory.read_frame(0, &mut frame)?;
        }
        let bonds = if system.structure.bonds.is_empty() {
            representation::guess_bonds(&system.structure, &frame.positions_angstrom)
        } else {
            system.structure.bonds.clone()
        };
        let potential_lattice = potential_lattice(&system.structure, &frame, 1.0);
        Ok(Document {
            id,
            name,
            potential_lattice,
            paths: system.paths,
            structure: system.structure,
            trajectory: system.trajectory,
            n_frames,
            frame,
            frame_index: 0,
            bonds,
            wavefunctions: system.wavefunctions.into_iter().map(Arc::new).collect(),
            grids: system.grids.into_iter().map(Arc::new).collect(),
            warnings: system.warnings,
            qm: None,
            potential_frames: std::collections::BTreeMap::new(),
        })
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

    /// Reads frame `index` (clamped to the last frame).
    pub fn set_frame(&mut self, index: usize) -> Result<(), ReadError> {
        if self.n_frames == 0 {
            return Ok(());
        }
        let index = index.min(self.n_frames - 1);
        self.trajectory.read_frame(index, &mut self.frame)?;
        self.frame_index = index;
        Ok(())
    }

    /// The wavefunction of the current frame (the series entry, or the only one).
    pub fn wavefunction(&self) -> Option<&Arc<Wavefunction>> {
        if self.wavefunctions.len() == self.n_frames && self.n_frames > 1 {
            self.wavefunctions.get(self.frame_index)
        } else {
            self.wavefunctions.first()
        }
    }
}

/// How the isovalue is given.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum IsoMode {
    /// In the field's units.
    Absolute,
    /// As a fraction of the largest |value| of the current grid.
    RelativeToMax,
}

/// Trajectory playback.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Timeline {
    pub playing: bool,
    pub fps: f32,
    pub looping: bool,
    /// Seconds accumulated towards the next frame.
    pub accumulator: f32,
}

/// What was picked in the 3-D view.
#[derive(Clone, Debug, PartialEq)]
pub struct PickInfo {
    pub atom: usize,
    pub text: String,
}

/// One row of the orbital list.
#[derive(Clone, Debug, PartialEq)]
pub struct OrbitalRow {
    pub index: usize,
    pub energy_hartree: f64,
    pub occupation: f64,
    pub symmetry: String,
    /// "HOMO", "LUMO", "HOMO-1", "LUMO+2", or empty.
    pub label: String,
}

/// Something the user asked for.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    OpenFiles(Vec<PathBuf>),
    /// Opens files whose wavefunctions describe the atoms a selection picks (`--qm-region`).
    OpenFilesWithQmRegion {
        paths: Vec<PathBuf>,
        qm_region: String,
    },
    /// Show the platform's open-file dialog (the window carries it out).
    OpenDialog,
    OpenDemo,
    CloseDocument,
    SetFrame(usize),
    StepFrame(i64),
    SetPlaying(bool),
    TogglePlaying,
    SetPlaybackFps(f32),
    SetLoop(bool),
    SetStyle(DrawStyle),
    SetColorBy(ColorBy),
    SetSpin(Spin),
    SelectOrbital(Option<usize>),
    SelectField(Option<FieldChoice>),
    /// Averages the potential map over the last N frames (1: the current frame only; at most
    /// `potential::MAX_POTENTIAL_WINDOW`).
    SetPotentialWindow(u16),
    /// How per-frame potential maps are summed (direct, multilevel, or chosen by size).
    SetPotentialMethod(crate::app::settings::PotentialMethod),
    SetIsoValue(f32),
    SetIsoMode(IsoMode),
    SetOpacity(f32),
    SetDarkBackground(bool),
    SetDepthCue(f32),
    SetEnergiesInEv(bool),
    SetShowSlice(bool),
    /// Orientation and position of the slice plane.
    SetSlicePlane(crate::app::slice::SlicePlane),
    ResetCamera,
    Orbit([f32; 2]),
    Pan([f32; 2]),
    Zoom(f32),
    /// A click in the view at a pixel of a view of this size.
    Pick {
        pixel: [f32; 2],
        size_px: [u32; 2],
    },
    CancelJobs,
    /// Colours the surfaces by a volume of the document (`None`: plain lobe colours). A range of
    /// `None` is chosen from the values on the current surfaces (symmetric about zero for signed
    /// fields), or from the volume when no surface is shown.
    SetSurfaceColor(Option<(usize, Option<[f32; 2]>)>),
    /// Points along the longest axis of computed lattices.
    SetLatticePoints(u32),
    /// Frames the atoms a selection picks (the selection language of `rdf`; the view keeps its
    /// direction).
    FitToSelection(String),
    /// Follow the selected orbital through the wavefunction series (true) or show orbitals by index.
    FollowOrbital(bool),
    /// Memory for cached lattices and meshes, MiB.
    SetCacheBudgetMib(u32),
    /// Playback waits for each frame's surface (true) or keeps its rate, dropping frames (false).
    SetComputeEveryFrame(bool),
    /// The colormap of slices and coloured surfaces.
    SetColormap(crate::render::colormap::Colormap),
    /// Starts the RDF of the panel's selections over all frames of the document.
    StartRdf,
    CancelRdf,
    ToggleHelp,
    Screenshot(PathBuf),
    /// Adds an extra field representation (its own field, isovalue, colours and request slot).
    AddRepresentation(FieldChoice),
    /// Removes the extra representation with this id (its request is cancelled).
    RemoveRepresentation(u64),
    /// Changes one setting of the extra representation with this id.
    EditRepresentation(u64, crate::app::multi::RepresentationEdit),
}

/// What changed since the renderer last looked (it clears the flags after uploading).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Dirty {
    pub atoms: bool,
    pub meshes: bool,
    pub style: bool,
    pub slice: bool,
    /// The surface colouring field or its range changed.
    pub surface_color: bool,
}

/// Following one orbital through a wavefunction series by maximum overlap (`analysis::tracking`):
/// the orbital chosen at `anchor_frame` is matched frame by frame in both directions, and each
/// frame shows its match with the phase continued (lobe colours swapped where the sign flips).
pub struct Follow {
    pub document: u64,
    pub spin: Spin,
    pub anchor_frame: usize,
    pub anchor_index: usize,
    /// One step per frame, once computed.
    pub steps: Option<Vec<crate::analysis::tracking::TrackStep>>,
    task: Option<crate::jobs::task::Task<Result<Vec<crate::analysis::tracking::TrackStep>, String>>>,
}

/// Surfaces coloured by a volume of the document (e.g. a density isosurface by a potential map).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SurfaceColor {
    /// Index into the document's volumes.
    pub volume: usize,
    /// Values at the colormap's start and end.
    pub range: [f32; 2],
}

/// The viewer's state.
pub struct AppState {
    pub document: Option<Document>,
    pub settings: Settings,
    pub camera: Camera,
    pub timeline: Timeline,
    pub spin: Spin,
    pub orbital: Option<usize>,
    pub field: Option<FieldChoice>,
    pub iso_mode: IsoMode,
    pub show_slice: bool,
    pub slice_plane: crate::app::slice::SlicePlane,
    pub show_help: bool,
    pub pick: Option<PickInfo>,
    pub status: String,
    pub errors: Vec<String>,
    pub fps: f32,
    /// The graphics adapter and the rendering paths chosen for it, and the GPU resources the view
    /// holds (set by the window; shown in the jobs panel).
    pub graphics: [String; 2],
    pub fields: FieldService,
    /// Isosurfaces are extracted on the render GPU by the window (marching cubes as a compute pass)
    /// instead of on the CPU into `lobes`; set by the window when its device can.
    pub gpu_surfaces: bool,
    /// The selection text of "fit to selection".
    pub fit_selection_text: String,
    /// The orbital followed through the series, if the user asked for it.
    pub follow: Option<Follow>,
    /// Colouring of the surfaces by a second field, with the colormap of the settings.
    pub surface_color: Option<SurfaceColor>,
    /// The RDF analysis panel and its computation.
    pub rdf: crate::app::rdf::RdfPanel,
    /// The field grid shown (may be an older key while a newer one is computed).
    pub shown_field: Option<(FieldKey, Arc<Grid3>)>,
    /// CPU isosurfaces extracted on a thread of their own ([`AppState::extract_surfaces_off_thread`];
    /// the window on a software renderer); `None`: extracted in [`AppState::update_field`] itself.
    pub mesher: Option<crate::jobs::mesher::Mesher<FieldKey>>,
    /// The grid (isovalue, preview or not) whose lobes the mesher is extracting; it is shown with
    /// them.
    lobes_pending: Option<(FieldKey, Arc<Grid3>, f32, bool)>,
    /// While playing, the mesher extracts previews from every second lattice point (the window on a
    /// software renderer, where drawing large surfaces is what limits the frame rate); the full
    /// surfaces follow when playback stops.
    pub preview_surfaces_while_playing: bool,
    /// The lobes shown are such a preview.
    lobes_preview: bool,
    /// The positive and negative lobes shown.
    pub lobes: [Option<Arc<MeshData>>; 2],
    /// Extra field representations shown beside the main field (`app::multi`).
    pub representations: crate::app::multi::Representations,
    /// A representation was added, removed or hidden since the window last looked.
    pub(crate) representations_changed: bool,
    pub spheres: Vec<SphereInstance>,
    pub cylinders: Vec<CylinderInstance>,
    pub lines: Vec<LineVertex>,
    pub dirty: Dirty,
    pub pending: Vec<Command>,
    /// Screenshot requests for the window to carry out.
    pub screenshot_requests: Vec<PathBuf>,
    /// Set when the user asked for the open-file dialog.
    pub open_dialog_requested: bool,
    /// Size of the 3-D view in pixels, as last laid out.
    pub view_size_px: [u32; 2],
    next_id: u64,
    /// Whether the camera should frame the document at the next layout.
    pub fit_pending: bool,
    /// Whether the orbital list should scroll to the selected orbital.
    pub scroll_to_orbital: bool,
}

impl AppState {
    pub fn new(settings: Settings, mut fields: FieldService) -> AppState {
        fields.set_cache_budget(settings.cache_budget_mib as usize * (1 << 20));
        AppState {
            document: None,
            timeline: Timeline {
                playing: false,
                fps: settings.playback_fps,
                looping: settings.playback_loop,
                accumulator: 0.0,
            },
            iso_mode: if settings.iso_relative {
                IsoMode::RelativeToMax
            } else {
                IsoMode::Absolute
            },
            settings,
            camera: Camera::default(),
            spin: Spin::Alpha,
            orbital: None,
            field: None,
            show_slice: false,
            slice_plane: crate::app::slice::SlicePlane::default(),
            show_help: false,
            pick: None,
            status: "Open a file (Ctrl+O) or drop one here".into(),
            errors: Vec::new(),
            fps: 0.0,
            graphics: Default::default(),
            fields,
            surface_color: None,
            follow: None,
            fit_selection_text: "all".into(),
            gpu_surfaces: false,
            rdf: crate::app::rdf::RdfPanel::default(),
            shown_field: None,
            mesher: None,
            lobes_pending: None,
            preview_surfaces_while_playing: false,
            lobes_preview: false,
            lobes: [None, None],
            representations: crate::app::multi::Representations::default(),
            representations_changed: false,
            spheres: Vec::new(),
            cylinders: Vec::new(),
            lines: Vec::new(),
            dirty: Dirty::default(),
            pending: Vec::new(),
            screenshot_requests: Vec::new(),
            open_dialog_requested: false,
            view_size_px: [800, 600],
            next_id: 1,
            fit_pending: false,
            scroll_to_orbital: false,
        }
    }

    /// Queues a command for [`AppState::apply_pending`].
    pub fn push(&mut self, c: Command) {
        self.pending.push(c);
    }

    /// Applies queued commands in order.
    pub fn apply_pending(&mut self) {
        let cmds = std::mem::take(&mut self.pending);
        for c in cmds {
            self.apply(c);
        }
    }

    fn error(&mut self, msg: String) {
        tracing::warn!("{msg}");
        self.status = msg.clone();
        self.errors.push(msg);
        if self.errors.len() > 20 {
            self.errors.remove(0);
        }
    }

    /// Opens a loaded system as the current document.
    pub fn open_system(&mut self, name: String, system: System) {
        self.open_system_with_qm_region(name, system, None);
    }

    /// Opens a loaded system whose wavefunctions describe a QM region of it (`io::load_with`).
    pub fn open_system_with_qm_region(
        &mut self,
        name: String,
        system: System,
        region: Option<crate::analysis::qm_region::QmRegion>,
    ) {
        let id = self.next_id;
        self.next_id += 1;
        match Document::from_system(id, name, system).map(|d| d.with_qm_region(region)) {
            Ok(mut doc) => {
                doc.potential_lattice =
                    potential_lattice(&doc.structure, &doc.frame, self.settings.potential_spacing_angstrom);
                self.status = format!(
                    "{}: {} atoms, {} frames{}",
                    doc.name,
                    doc.structure.len(),
                    doc.n_frames,
                    if doc.wavefunctions.is_empty() {
                        String::new()
                    } else {
                        format!(", {} wavefunctions", doc.wavefunctions.len())
                    }
                );
                if let Some(qm) = &doc.qm {
                    self.status.push_str("; ");
                    self.status.push_str(&qm.summary());
                }
                for w in &doc.warnings {
                    tracing::info!("{w}");
                }
                let has_wf = !doc.wavefunctions.is_empty();
                let first_grid = !doc.grids.is_empty();
                self.clear_representations();
                self.document = Some(doc);
                self.pick = None;
                self.shown_field = None;
                self.lobes_pending = None;
                self.lobes_preview = false;
                self.lobes = [None, None];
                self.timeline.playing = false;
                self.orbital = None;
                self.field = None;
                if has_wf {
                    self.spin = Spin::Alpha;
                    self.orbital = self.homo_index(Spin::Alpha);
                    self.field = self.orbital.map(|index| FieldChoice::Orbital {
                        spin: Spin::Alpha,
                        index,
                    });
                } else if first_grid {
                    self.field = Some(FieldChoice::Volume(0));
                }
                self.rebuild_atoms();
                self.fit_pending = true;
                self.scroll_to_orbital = true;
                self.dirty.meshes = true;
            }
            Err(e) => self.error(e.to_string()),
        }
    }

    /// Applies one command.
    pub fn apply(&mut self, c: Command) {
        match c {
            Command::OpenFiles(paths) => self.open_files(&paths, None),
            Command::OpenFilesWithQmRegion { paths, qm_region } => self.open_files(&paths, Some(qm_region)),
            Command::OpenDialog => self.open_dialog_requested = true,
            Command::OpenDemo => match crate::io::load::load_embedded_demo() {
                Ok(system) => {
                    self.open_system("ethylene torsion (demo)".into(), system);
                    self.timeline.playing = true;
                }
                Err(e) => self.error(format!("the embedded demo could not be read: {e}")),
            },
            Command::CloseDocument => {
                self.clear_representations();
                self.document = None;
                self.shown_field = None;
                self.lobes_pending = None;
                self.lobes_preview = false;
                self.lobes = [None, None];
                self.orbital = None;
                self.field = None;
                self.pick = None;
                self.spheres.clear();
                self.cylinders.clear();
                self.lines.clear();
                self.surface_color = None;
                self.dirty = Dirty {
                    atoms: true,
                    meshes: true,
                    style: true,
                    slice: true,
                    surface_color: true,
                };
            }
            Command::SetFrame(i) => self.set_frame(i),
            Command::StepFrame(d) => {
                if let Some(doc) = &self.document {
                    let n = doc.n_frames as i64;
                    if n > 0 {
                        let mut i = doc.frame_index as i64 + d;
                        i = if self.timeline.looping {
                            i.rem_euclid(n)
                        } else {
                            i.clamp(0, n - 1)
                        };
                        self.set_frame(i as usize);
                    }
                }
            }
            Command::SetPlaying(p) => self.timeline.playing = p,
            Command::TogglePlaying => self.timeline.playing = !self.timeline.playing,
            Command::SetPlaybackFps(f) => {
                self.timeline.fps = f.clamp(0.5, 120.0);
                self.settings.playback_fps = self.timeline.fps;
            }
            Command::SetLoop(l) => {
                self.timeline.looping = l;
                self.settings.playback_loop = l;
            }
            Command::SetStyle(s) => {
                self.settings.style = s;
                self.rebuild_atoms();
            }
            Command::SetColorBy(c) => {
                self.settings.color_by = c;
                self.rebuild_atoms();
            }
            Command::SetSpin(s) => {
                self.spin = s;
                if let Some(FieldChoice::Orbital { index, .. }) = self.field {
                    self.field = Some(FieldChoice::Orbital { spin: s, index });
                    self.dirty.meshes = true;
                }
            }
            Command::SelectOrbital(o) => {
                if self.follow.is_some() && self.follow_step().map(|s| s.index) != o {
                    // Picking another orbital by hand stops following.
                    self.follow = None;
                }
                self.orbital = o;
                self.field = o.map(|index| FieldChoice::Orbital { spin: self.spin, index });
                self.dirty.meshes = true;
            }
            Command::SelectField(f) => {
                // The potential is shown averaged over the window the settings give.
                self.field = match f {
                    Some(FieldChoice::Potential | FieldChoice::PotentialMean { .. }) => Some(
                        super::potential::potential_choice(self.settings.potential_window_frames),
                    ),
                    f => f,
                };
                if let Some(FieldChoice::Orbital { index, spin }) = f {
                    self.orbital = Some(index);
                    self.spin = spin;
                }
                self.load_potential_window_at(None);
                self.dirty.meshes = true;
            }
            Command::SetPotentialMethod(m) => {
                if m != self.settings.potential_method {
                    self.settings.potential_method = m;
                    // Cached maps were summed the other way: computed again.
                    self.fields.clear_cache();
                    self.dirty.meshes = true;
                }
            }
            Command::SetPotentialWindow(n) => {
                let n = n.clamp(1, super::potential::MAX_POTENTIAL_WINDOW);
                self.settings.potential_window_frames = n;
                if matches!(
                    self.field,
                    Some(FieldChoice::Potential | FieldChoice::PotentialMean { .. })
                ) {
                    self.field = Some(super::potential::potential_choice(n));
                    self.load_potential_window_at(None);
                    self.dirty.meshes = true;
                }
            }
            Command::SetIsoValue(v) => {
                if v.is_finite() && v > 0.0 {
                    self.settings.iso_value = v;
                    self.dirty.meshes = true;
                }
            }
            Command::SetIsoMode(m) => {
                self.iso_mode = m;
                self.settings.iso_relative = m == IsoMode::RelativeToMax;
                self.dirty.meshes = true;
            }
            Command::SetOpacity(o) => {
                self.settings.surface_opacity = o.clamp(0.05, 1.0);
                self.dirty.style = true;
            }
            Command::SetDarkBackground(d) => {
                self.settings.dark_background = d;
                self.dirty.style = true;
            }
            Command::SetDepthCue(d) => {
                self.settings.depth_cue = d.clamp(0.0, 1.0);
                self.dirty.style = true;
            }
            Command::SetEnergiesInEv(e) => self.settings.energies_in_ev = e,
            Command::SetShowSlice(s) => {
                self.show_slice = s;
                self.dirty.slice = true;
            }
            Command::SetSlicePlane(p) => {
                self.slice_plane = p;
                self.dirty.slice = true;
            }
            Command::ResetCamera => {
                let aspect = self.aspect();
                if let Some((lo, hi)) = self.scene_bounds() {
                    // A three-quarter view: planar molecules and their orbitals show depth.
                    self.camera.reset(Vec3::from(lo), Vec3::from(hi), aspect);
                    self.camera.orbit(0.5, 0.6);
                    self.camera.fit_to_bounds(Vec3::from(lo), Vec3::from(hi), aspect);
                }
            }
            Command::Orbit([dx, dy]) => self.camera.orbit(dx, dy),
            Command::Pan([dx, dy]) => self.camera.pan(dx, dy),
            Command::Zoom(f) => self.camera.zoom(f),
            Command::Pick { pixel, size_px } => self.pick_at(pixel, size_px),
            Command::CancelJobs => {
                self.fields.cancel();
                self.status = "cancelled".into();
            }
            Command::SetSurfaceColor(choice) => {
                self.surface_color = match choice {
                    None => None,
                    Some((volume, range)) => match self.document.as_ref().and_then(|d| d.grids.get(volume)) {
                        Some(grid) => {
                            let range = range.unwrap_or_else(|| self.surface_value_range(grid));
                            Some(SurfaceColor { volume, range })
                        }
                        None => {
                            self.error(format!("no volume {} to colour the surface with", volume + 1));
                            None
                        }
                    },
                };
                self.dirty.surface_color = true;
            }
            Command::FitToSelection(text) => self.fit_to_selection(&text),
            Command::FollowOrbital(on) => {
                self.follow = None;
                if on {
                    self.start_follow();
                }
                self.dirty.meshes = true;
                self.dirty.style = true;
            }
            Command::SetLatticePoints(n) => {
                self.settings.lattice_points = n.clamp(16, 512);
                self.dirty.meshes = true;
            }
            Command::SetCacheBudgetMib(mib) => {
                self.settings.cache_budget_mib = mib.clamp(16, 1 << 20);
                self.fields
                    .set_cache_budget(self.settings.cache_budget_mib as usize * (1 << 20));
            }
            Command::SetComputeEveryFrame(on) => self.settings.compute_every_frame = on,
            Command::SetColormap(c) => {
                self.settings.colormap = c;
                self.dirty.slice = true;
                self.dirty.surface_color = true;
            }
            Command::StartRdf => match &self.document {
                Some(doc) => {
                    if let Err(e) = self.rdf.start(doc, self.fields.device_workers()) {
                        self.error(e);
                    }
                }
                None => self.error("RDF: open a trajectory first".into()),
            },
            Command::CancelRdf => {
                self.rdf.cancel();
                self.status = "RDF cancelled".into();
            }
            Command::ToggleHelp => self.show_help = !self.show_help,
            Command::Screenshot(p) => self.screenshot_requests.push(p),
            Command::AddRepresentation(f) => self.add_representation(f),
            Command::RemoveRepresentation(id) => self.remove_representation(id),
            Command::EditRepresentation(id, edit) => self.edit_representation(id, edit),
        }
    }

    /// Reads the frames the running-average potential needs at frame `index` (the current frame
    /// when `None`), when that is the field shown.
    fn load_potential_window_at(&mut self, index: Option<usize>) {
        let Some(FieldChoice::PotentialMean { frames }) = self.field else {
            return;
        };
        let Some(doc) = self.document.as_mut() else {
            return;
        };
        let index = index.unwrap_or(doc.frame_index);
        if let Err(e) = doc.load_potential_window(index, frames) {
            self.error(format!("running-average potential: {e}"));
        }
    }

    fn open_files(&mut self, paths: &[PathBuf], qm_region: Option<String>) {
        match crate::io::load_with(paths, &crate::io::LoadOptions { qm_region }) {
            Ok((system, region)) => {
                let name = paths
                    .first()
                    .and_then(|p| p.file_name())
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                self.settings.push_recent(paths);
                self.open_system_with_qm_region(name, system, region);
            }
            Err(e) => self.error(e.to_string()),
        }
    }

    fn aspect(&self) -> f32 {
        self.view_size_px[0] as f32 / self.view_size_px[1].max(1) as f32
    }

    fn set_frame(&mut self, i: usize) {
        let Some(doc) = self.document.as_mut() else {
            return;
        };
        if let Err(e) = doc.set_frame(i) {
            self.error(e.to_string());
            return;
        }
        self.load_potential_window_at(None);
        self.rebuild_atoms();
        self.apply_follow();
        self.dirty.meshes = true;
    }

    fn fit_to_selection(&mut self, text: &str) {
        let Some(doc) = self.document.as_ref() else {
            return;
        };
        let selection = match crate::model::select::Selection::parse(text) {
            Ok(s) => s,
            Err(e) => {
                self.error(format!("fit to selection: {e}"));
                return;
            }
        };
        let picked: Vec<[f32; 3]> = selection
            .indices(&doc.structure, Some(&doc.frame))
            .iter()
            .filter_map(|&i| doc.frame.positions_angstrom.get(i as usize).copied())
            .collect();
        match representation::bounds(&picked, 2.0) {
            Some((lo, hi)) => {
                let aspect = self.aspect();
                self.camera.fit_to_bounds(Vec3::from(lo), Vec3::from(hi), aspect);
                self.status = format!("view fitted to {} atoms of '{text}'", picked.len());
            }
            None => self.error(format!("fit to selection: '{text}' selects no atoms")),
        }
    }

    /// Starts following the selected orbital from the current frame (a background task).
    fn start_follow(&mut self) {
        let Some(doc) = self.document.as_ref() else {
            return;
        };
        let (Some(index), n) = (self.orbital, doc.wavefunctions.len()) else {
            self.error("select an orbital to follow".into());
            return;
        };
        if n < 2 || n != doc.n_frames {
            self.error("following an orbital needs one wavefunction per frame".into());
            return;
        }
        let anchor = doc.frame_index.min(n - 1);
        let spin = self.spin;
        let wfs = doc.wavefunctions.clone();
        let task = crate::jobs::task::Task::spawn("follow", move || {
            use crate::analysis::tracking::track;
            let forward = track(&wfs[anchor..], spin, index).map_err(|e| e.to_string())?;
            let back: Vec<Arc<Wavefunction>> = wfs[..=anchor].iter().rev().cloned().collect();
            let backward = track(&back, spin, index).map_err(|e| e.to_string())?;
            // Frames 0..anchor from the backward pass (reversed), anchor.. from the forward one.
            let mut steps: Vec<_> = backward.into_iter().skip(1).rev().collect();
            steps.extend(forward);
            Ok(steps)
        });
        match task {
            Ok(task) => {
                self.follow = Some(Follow {
                    document: doc.id,
                    spin,
                    anchor_frame: anchor,
                    anchor_index: index,
                    steps: None,
                    task: Some(task),
                });
                self.status = "matching the orbital through the frames…".into();
            }
            Err(e) => self.error(e),
        }
    }

    /// Takes a finished follow computation; true when it arrived.
    pub fn poll_follow(&mut self) -> bool {
        let Some(f) = self.follow.as_mut() else {
            return false;
        };
        let Some(result) = f.task.as_mut().and_then(|t| t.try_take()) else {
            return false;
        };
        f.task = None;
        match result {
            Ok(steps) => {
                let ambiguous = steps.iter().filter(|s| s.ambiguous).count();
                f.steps = Some(steps);
                self.status = if ambiguous > 0 {
                    format!("orbital followed through the frames; {ambiguous} matches are ambiguous")
                } else {
                    "orbital followed through the frames".into()
                };
                self.apply_follow();
                self.dirty.meshes = true;
                self.dirty.style = true;
            }
            Err(e) => {
                self.follow = None;
                self.error(format!("cannot follow the orbital: {e}"));
            }
        }
        true
    }

    /// The followed orbital's step at the current frame.
    pub fn follow_step(&self) -> Option<&crate::analysis::tracking::TrackStep> {
        let doc = self.document.as_ref()?;
        let f = self.follow.as_ref().filter(|f| f.document == doc.id)?;
        f.steps.as_ref()?.get(doc.frame_index)
    }

    /// Selects the followed orbital's match at the current frame.
    fn apply_follow(&mut self) {
        let Some((index, spin)) = self
            .follow_step()
            .map(|s| s.index)
            .zip(self.follow.as_ref().map(|f| f.spin))
        else {
            return;
        };
        self.orbital = Some(index);
        self.spin = spin;
        if matches!(self.field, Some(FieldChoice::Orbital { .. }) | None) {
            self.field = Some(FieldChoice::Orbital { spin, index });
        }
    }

    /// True when the shown orbital's phase is flipped to continue the followed one (lobe colours
    /// swap).
    pub fn follow_flips_sign(&self) -> bool {
        matches!(self.field, Some(FieldChoice::Orbital { .. })) && self.follow_step().is_some_and(|s| s.sign < 0.0)
    }

    /// A colormap range for `grid` on the shown surfaces: the 2nd..98th percentile of its values at
    /// their vertices (made symmetric about zero when the values change sign), or of the whole volume
    /// when no surface is shown.
    pub fn surface_value_range(&self, grid: &Grid3) -> [f32; 2] {
        let mut values: Vec<f32> = self
            .lobes
            .iter()
            .flatten()
            .flat_map(|m| m.positions_angstrom.iter())
            .filter_map(|p| sample_grid(grid, *p))
            .filter(|v| v.is_finite())
            .collect();
        if values.is_empty() {
            values = grid.values.iter().copied().filter(|v| v.is_finite()).collect();
        }
        if values.is_empty() {
            return [-1.0, 1.0];
        }
        values.sort_by(f32::total_cmp);
        let at = |q: f64| values[((values.len() - 1) as f64 * q).round() as usize];
        let (lo, hi) = (at(0.02), at(0.98));
        let range = if lo < 0.0 && hi > 0.0 {
            let m = lo.abs().max(hi.abs());
            [-m, m]
        } else {
            [lo, hi]
        };
        if range[0] == range[1] {
            [range[0] - 1.0, range[1] + 1.0]
        } else {
            range
        }
    }

    /// Feeds the RDF computation the next frames and takes its finished ones; true when its plot
    /// changed.
    pub fn pump_rdf(&mut self) -> bool {
        match self.rdf.pump(self.document.as_mut()) {
            Ok(changed) => changed,
            Err(e) => {
                self.error(e);
                true
            }
        }
    }

    /// Advances playback by `dt` seconds; returns true when the frame changed.
    pub fn tick(&mut self, dt_seconds: f32) -> bool {
        let Some(doc) = &self.document else {
            return false;
        };
        if !self.timeline.playing || doc.n_frames < 2 {
            return false;
        }
        // "Compute every frame" (movie export): hold the frame until its surface is shown. Otherwise
        // playback keeps its rate and the surface follows as fast as frames are computed.
        if self.settings.compute_every_frame
            && self.field.is_some()
            && self.fields.can_compute()
            && self.fields.pending().is_some()
        {
            return false;
        }
        if self.settings.compute_every_frame && self.representations_waiting() {
            return false;
        }
        self.timeline.accumulator += dt_seconds.clamp(0.0, 1.0);
        let step = 1.0 / self.timeline.fps.max(0.5);
        if self.timeline.accumulator < step {
            return false;
        }
        self.timeline.accumulator = 0.0;
        let (i, n) = (doc.frame_index, doc.n_frames);
        if i + 1 >= n {
            if self.timeline.looping {
                self.set_frame(0);
            } else {
                self.timeline.playing = false;
                return false;
            }
        } else {
            self.set_frame(i + 1);
        }
        true
    }

    /// Rebuilds sphere, cylinder and box instances from the current frame.
    pub fn rebuild_atoms(&mut self) {
        self.spheres.clear();
        self.cylinders.clear();
        self.lines.clear();
        if let Some(doc) = &self.document {
            let colors = representation::atom_colors(&doc.structure, self.settings.color_by);
            let pos = &doc.frame.positions_angstrom;
            representation::build_spheres(&doc.structure, pos, &colors, self.settings.style, &mut self.spheres);
            representation::build_cylinders(&doc.bonds, pos, &colors, self.settings.style, 4.0, &mut self.cylinders);
            if let Some(cell) = doc.frame.cell.filter(|c| c.is_valid()) {
                self.lines = representation::box_lines(&cell, [0.0; 3], [200, 200, 120, 255]);
            }
        }
        self.dirty.atoms = true;
    }

    /// Bounds of the current frame's atoms (padded), or of the shown grid.
    pub fn scene_bounds(&self) -> Option<([f32; 3], [f32; 3])> {
        let doc = self.document.as_ref()?;
        representation::bounds(&doc.frame.positions_angstrom, 2.0)
    }

    /// Frames the document if a fit is pending; called by the view once it knows its size.
    pub fn fit_if_pending(&mut self) {
        if self.fit_pending {
            self.fit_pending = false;
            self.apply(Command::ResetCamera);
        }
    }

    fn pick_at(&mut self, pixel: [f32; 2], size_px: [u32; 2]) {
        let Some(doc) = &self.document else {
            return;
        };
        let (o, d) = self.camera.ray_through_pixel(pixel, size_px);
        let centers: Vec<[f32; 3]> = self.spheres.iter().map(|s| s.center_angstrom).collect();
        let radii: Vec<f32> = self.spheres.iter().map(|s| s.radius_angstrom).collect();
        // Spheres skip atoms with non-finite coordinates; map back through positions.
        let hit = crate::render::camera::pick_sphere(o, d, &centers, &radii).and_then(|(k, _)| {
            let c = centers.get(k)?;
            doc.frame.positions_angstrom.iter().position(|p| p == c)
        });
        self.pick = hit.map(|atom| PickInfo {
            atom,
            text: self.describe_atom(atom),
        });
    }

    /// "C2 ETH 1 (chain A) charge -0.120 e; field 0.0123" for the status line.
    pub fn describe_atom(&self, atom: usize) -> String {
        let Some(doc) = &self.document else {
            return String::new();
        };
        let s = &doc.structure;
        let mut text = format!(
            "atom {} {} ({}) {} {}",
            atom + 1,
            s.names.get(atom).map(|n| n.to_string()).unwrap_or_default(),
            s.elements.get(atom).map(|e| e.symbol()).unwrap_or("?"),
            s.resnames.get(atom).map(|n| n.to_string()).unwrap_or_default(),
            s.resids.get(atom).copied().unwrap_or(0)
        );
        if let Some(c) = s.chains.get(atom).filter(|c| !c.is_empty()) {
            text.push_str(&format!(" chain {c}"));
        }
        if let Some(q) = s.charges_e.as_ref().and_then(|q| q.get(atom)) {
            text.push_str(&format!(", charge {q:+.3} e"));
        }
        if let (Some(p), Some((_, grid))) = (doc.frame.positions_angstrom.get(atom), &self.shown_field)
            && let Some(v) = sample_grid(grid, *p)
        {
            text.push_str(&format!(", field {v:.4e}"));
        }
        text
    }

    /// Rows of the orbital list for a spin channel.
    pub fn orbital_rows(&self, spin: Spin) -> Vec<OrbitalRow> {
        let Some(wf) = self.document.as_ref().and_then(|d| d.wavefunction()) else {
            return Vec::new();
        };
        let Some(set) = wf.orbitals(spin) else {
            return Vec::new();
        };
        let homo = homo_of(&set.occupations);
        (0..set.len())
            .map(|i| OrbitalRow {
                index: i,
                energy_hartree: set.energies_hartree.get(i).copied().unwrap_or(f64::NAN),
                occupation: set.occupations.get(i).copied().unwrap_or(0.0),
                symmetry: set.symmetries.get(i).cloned().unwrap_or_default(),
                label: frontier_label(i, homo),
            })
            .collect()
    }

    /// Index of the highest occupied orbital of a spin channel.
    pub fn homo_index(&self, spin: Spin) -> Option<usize> {
        let wf = self.document.as_ref()?.wavefunction()?;
        homo_of(&wf.orbitals(spin)?.occupations)
    }

    /// True when the wavefunction has separate beta orbitals.
    pub fn is_unrestricted(&self) -> bool {
        self.document
            .as_ref()
            .and_then(|d| d.wavefunction())
            .is_some_and(|w| w.spin == SpinKind::Unrestricted)
    }

    /// Formats an energy in the chosen unit.
    pub fn format_energy(&self, hartree: f64) -> String {
        if self.settings.energies_in_ev {
            format!("{:.3} eV", hartree * EV_PER_HARTREE)
        } else {
            format!("{hartree:.5} Eh")
        }
    }

    /// The key of the field to show now, if any.
    pub fn current_field_key(&self) -> Option<FieldKey> {
        let doc = self.document.as_ref()?;
        self.field_key_at(doc.frame_index, &doc.frame)
    }

    /// The key of the current field at frame `index` whose coordinates are `frame`.
    pub fn field_key_at(&self, index: usize, frame: &Frame) -> Option<FieldKey> {
        let doc = self.document.as_ref()?;
        let field = self.field?;
        let dims = match field {
            FieldChoice::Volume(i) => doc.grids.get(i)?.lattice.dims,
            FieldChoice::Potential | FieldChoice::PotentialMean { .. } => doc.potential_lattice?.dims,
            _ => self.orbital_lattice_for(&doc.orbital_positions(index, frame)?)?.dims,
        };
        Some(FieldKey {
            document: doc.id,
            frame: if matches!(field, FieldChoice::Volume(_)) {
                0
            } else {
                index
            },
            field,
            dims,
        })
    }

    /// The lattice computed orbitals are sampled on: the molecule's box padded by 4 A, at most
    /// `settings.lattice_points` points along its longest axis (80 by default), at least 0.05 A apart.
    pub fn orbital_lattice(&self) -> Option<Lattice> {
        let doc = self.document.as_ref()?;
        self.orbital_lattice_for(&doc.frame.positions_angstrom)
    }

    /// [`AppState::orbital_lattice`] around given coordinates.
    fn orbital_lattice_for(&self, positions_angstrom: &[[f32; 3]]) -> Option<Lattice> {
        let (lo, hi) = representation::bounds(positions_angstrom, 0.0)?;
        let span = (0..3).map(|k| hi[k] - lo[k] + 8.0).fold(0.0f32, f32::max);
        let points = self.settings.lattice_points.clamp(16, 512) as f32;
        let spacing = (span / (points - 1.0)).max(0.05);
        Some(Lattice::around_box(
            lo.map(f64::from),
            hi.map(f64::from),
            4.0,
            f64::from(spacing),
        ))
    }

    /// The job that computes `key`'s field (at the current frame).
    pub fn field_job(&self, key: &FieldKey) -> Option<FieldJob> {
        let doc = self.document.as_ref()?;
        self.field_job_at(key, &doc.frame)
    }

    /// How the potential of `charges` on `lattice` is summed under the settings: the direct sum,
    /// or multilevel summation (open boundaries, default a and h) whose long-range lattices the
    /// worker that takes the request builds. `None` for charges the engines refuse (non-finite).
    fn potential_input(&self, charges: crate::compute::PointCharges, lattice: &Lattice) -> Option<FieldInput> {
        use crate::compute::esp::{Boundary, DeferredPlan, EspMethod, MsmParams};
        let msm = self.settings.potential_method.uses_msm(charges.charges_e.len());
        let method = if msm {
            EspMethod::Msm(MsmParams::default())
        } else {
            EspMethod::Direct
        };
        DeferredPlan::field_input(Arc::new(charges), method, Boundary::Open, lattice).ok()
    }

    /// The job that computes `key`'s field, `frame` being the coordinates of frame `key.frame`.
    pub fn field_job_at(&self, key: &FieldKey, frame: &Frame) -> Option<FieldJob> {
        let doc = self.document.as_ref()?;
        if let FieldChoice::PotentialMean { frames } = key.field {
            let q = doc.potential_mean_charges(key.frame, frames, frame)?;
            let lattice = doc.potential_lattice?;
            return Some(FieldJob {
                field: Field::Potential,
                lattice,
                input: self.potential_input(q, &lattice)?,
            });
        }
        if key.field == FieldChoice::Potential {
            let charges = doc.structure.charges_e.as_ref()?;
            let q = crate::compute::PointCharges {
                positions_bohr: frame
                    .positions_angstrom
                    .iter()
                    .map(|p| crate::model::units::bohr_from_angstrom3(p.map(f64::from)))
                    .collect(),
                charges_e: charges.iter().map(|&c| f64::from(c)).collect(),
            };
            let lattice = doc.potential_lattice?;
            return Some(FieldJob {
                field: Field::Potential,
                lattice,
                input: self.potential_input(q, &lattice)?,
            });
        }
        if let Some(qm) = &doc.qm {
            return qm.job(&doc.wavefunctions, doc.n_frames, key, frame, |p| {
                self.orbital_lattice_for(p)
            });
        }
        let wf = if doc.wavefunctions.len() == doc.n_frames && doc.n_frames > 1 {
            doc.wavefunctions.get(key.frame)?
        } else {
            doc.wavefunctions.first()?
        };
        let field = match key.field {
            FieldChoice::Orbital { spin, index } => Field::Orbital { spin, index },
            FieldChoice::Density => Field::Density,
            FieldChoice::Volume(_) | FieldChoice::Potential | FieldChoice::PotentialMean { .. } => return None,
        };
        Some(FieldJob {
            field,
            lattice: self.orbital_lattice_for(&frame.positions_angstrom)?,
            input: FieldInput::Wavefunction(Arc::clone(wf)),
        })
    }

    /// `grid`, the computed result for `key`, on the lattice it is shown on: a QM region's orbitals
    /// are computed in the wavefunction's frame and placed back on the MD frame's lattice (the placed
    /// grid replaces the computed one in the cache).
    pub fn placed_grid(&mut self, key: &FieldKey, grid: Arc<Grid3>) -> Arc<Grid3> {
        let Some(qm) = self.document.as_ref().and_then(|d| d.qm.as_ref()) else {
            return grid;
        };
        let placed = qm.place(key, Arc::clone(&grid));
        if !Arc::ptr_eq(&placed, &grid) {
            self.fields.insert(*key, Arc::clone(&placed));
        }
        placed
    }

    /// During playback, asks for the next frame's field ahead of time (queued behind the shown one).
    fn prefetch_next(&mut self) {
        // Reading the next frame is only worth it when the look-ahead slot is free.
        if !self.timeline.playing
            || matches!(self.field, None | Some(FieldChoice::Volume(_)))
            || !self.fields.can_prefetch()
        {
            return;
        }
        let Some(doc) = self.document.as_mut() else {
            return;
        };
        let n = doc.n_frames;
        let next = if doc.frame_index + 1 < n {
            doc.frame_index + 1
        } else if self.timeline.looping && n > 1 {
            0
        } else {
            return;
        };
        let mut frame = Frame::default();
        if doc.trajectory.read_frame(next, &mut frame).is_err() {
            return;
        }
        if let Some(FieldChoice::PotentialMean { frames }) = self.field
            && doc.load_potential_window(next, frames).is_err()
        {
            return;
        }
        let Some(key) = self.field_key_at(next, &frame) else {
            return;
        };
        let job = self.field_job_at(&key, &frame);
        self.fields.prefetch(key, || job);
    }

    /// Absolute isovalue for a grid under the current mode.
    pub fn absolute_iso(&self, grid: &Grid3) -> f32 {
        match self.iso_mode {
            IsoMode::Absolute => self.settings.iso_value,
            IsoMode::RelativeToMax => {
                let max = grid.min_max().map_or(0.0, |(lo, hi)| lo.abs().max(hi.abs()));
                self.settings.iso_value.min(1.0) * max
            }
        }
    }

    /// From now on, CPU isosurfaces are extracted on a thread of their own (the frame that shows a
    /// new field never waits for its surfaces). Returns false when there is no extractor or the
    /// thread cannot start (extraction then stays in [`AppState::update_field`]).
    pub fn extract_surfaces_off_thread(&mut self) -> bool {
        if self.mesher.is_none()
            && let Some(extract) = self.fields.extractor()
        {
            self.mesher = crate::jobs::mesher::Mesher::start(extract).ok();
        }
        self.mesher.is_some()
    }

    /// Whether lobes are being extracted off this thread for a grid not yet shown.
    pub fn surfaces_pending(&self) -> bool {
        self.lobes_pending.is_some()
    }

    /// Requests the current field; when its grid is available, extracts both lobes. Returns true
    /// when what is shown changed.
    pub fn update_field(&mut self) -> bool {
        let arrived = self.fields.poll();
        if let Some(done) = self.mesher.as_mut().and_then(|m| m.try_recv())
            && let Some((key, grid, iso, preview)) = self
                .lobes_pending
                .take_if(|(k, _, _, p)| *k == done.key && *p == done.preview)
        {
            // The lobes extracted off this thread: show them with their grid (previews are not cached).
            let [plus, minus] = done.lobes;
            if !preview {
                let mk = |v: f32| MeshKey {
                    field: key,
                    iso_bits: v.to_bits(),
                };
                self.fields.insert_mesh(mk(iso), plus.clone());
                self.fields.insert_mesh(mk(-iso), minus.clone());
            }
            self.lobes = [plus, minus];
            self.lobes_preview = preview;
            self.shown_field = Some((key, grid));
            self.dirty.slice = true;
            if !arrived.is_empty() {
                self.dirty.meshes = true;
            }
            return true;
        }
        if self.lobes_preview && !self.timeline.playing && self.lobes_pending.is_none() {
            // Playback stopped on a preview: the full surfaces.
            self.dirty.meshes = true;
        }
        if !self.dirty.meshes && arrived.is_empty() {
            return false;
        }
        let Some(key) = self.current_field_key() else {
            if let Some(w) = self
                .document
                .as_ref()
                .and_then(|d| d.qm.as_ref())
                .and_then(|q| q.take_warning())
            {
                self.error(w);
            }
            let changed = self.shown_field.is_some();
            self.shown_field = None;
            self.lobes_pending = None;
            self.lobes_preview = false;
            self.lobes = [None, None];
            self.dirty.meshes = false;
            return changed;
        };
        let dropping = self.timeline.playing && !self.settings.compute_every_frame;
        let mut grid = if let FieldChoice::Volume(i) = key.field {
            self.document.as_ref().and_then(|d| d.grids.get(i).cloned())
        } else if dropping && self.fields.pending().is_some_and(|p| p != key) {
            // Playing faster than frames are computed: let the request in flight finish (a new one
            // would cancel it and nothing would ever be shown); the frames in between are dropped.
            None
        } else {
            let job = self.field_job(&key);
            let grid = self.fields.request(key, || job);
            self.prefetch_next();
            grid
        };
        let mut key = key;
        if grid.is_none() && dropping {
            // Show the newest finished frame while the playhead's own is computed.
            let shown = self.shown_field.as_ref().map(|(k, _)| *k);
            if let Some((k, g)) = self.fields.latest_other_frame(key)
                && Some(k) != shown
            {
                key = k;
                grid = Some(g);
            }
        }
        let Some(grid) = grid else {
            // Keep the previous picture until the new field arrives.
            return false;
        };
        let grid = self.placed_grid(&key, grid);
        if let Some(w) = self
            .document
            .as_ref()
            .and_then(|d| d.qm.as_ref())
            .and_then(|q| q.take_warning())
        {
            self.error(w);
        }
        let iso = self.absolute_iso(&grid);
        let mk = |v: f32| MeshKey {
            field: key,
            iso_bits: v.to_bits(),
        };
        self.lobes = if self.gpu_surfaces {
            // The window extracts the lobes on the render GPU from `shown_field`.
            [None, None]
        } else if let Some(mesher) = self.mesher.as_mut() {
            let preview = self.preview_surfaces_while_playing && self.timeline.playing;
            let cached = if preview {
                [None, None]
            } else {
                [self.fields.cached_mesh(mk(iso)), self.fields.cached_mesh(mk(-iso))]
            };
            match cached {
                [Some(plus), Some(minus)] => [plus, minus],
                _ => {
                    // Extracted off this thread; the previous picture stays until the lobes arrive.
                    let asked = (key, iso, preview);
                    if self
                        .lobes_pending
                        .as_ref()
                        .is_none_or(|(k, _, i, p)| (*k, *i, *p) != asked)
                    {
                        mesher.submit(key, grid.clone(), iso, preview);
                        self.lobes_pending = Some((key, grid, iso, preview));
                    }
                    self.dirty.meshes = false;
                    return false;
                }
            }
        } else {
            [self.fields.mesh(mk(iso), &grid), self.fields.mesh(mk(-iso), &grid)]
        };
        self.lobes_pending = None;
        self.lobes_preview = false;
        self.shown_field = Some((key, grid));
        self.dirty.meshes = false;
        self.dirty.slice = true;
        true
    }
}

/// Index of the highest orbital with occupation above 0.5 (of 2 or 1).
fn homo_of(occupations: &[f64]) -> Option<usize> {
    occupations.iter().rposition(|&o| o > 0.5)
}

fn frontier_label(i: usize, homo: Option<usize>) -> String {
    let Some(h) = homo else {
        return String::new();
    };
    let d = i as i64 - h as i64;
    match d {
        0 => "HOMO".into(),
        1 => "LUMO".into(),
        -3..=-1 => format!("HOMO{d}"),
        2..=4 => format!("LUMO+{}", d - 1),
        _ => String::new(),
    }
}

/// Trilinear sample of a grid at a point in Angstrom (axis-aligned lattices only).
pub fn sample_grid(grid: &Grid3, p_angstrom: [f32; 3]) -> Option<f32> {
    let l = &grid.lattice;
    if !l.is_axis_aligned() {
        return None;
    }
    let p = crate::model::units::bohr_from_angstrom3(p_angstrom.map(f64::from));
    let mut idx = [0usize; 3];
    let mut frac = [0f32; 3];
    for k in 0..3 {
        let step = l.steps_bohr[k][k];
        if step == 0.0 || l.dims[k] < 2 {
            return None;
        }
        let x = (p[k] - l.origin_bohr[k]) / step;
        if !(0.0..=(l.dims[k] - 1) as f64).contains(&x) {
            return None;
        }
        let i = (x.floor() as usize).min(l.dims[k] - 2);
        idx[k] = i;
        frac[k] = (x - i as f64) as f32;
    }
    let mut v = 0.0;
    for c in 0..8usize {
        let (di, dj, dk) = (c & 1, (c >> 1) & 1, (c >> 2) & 1);
        let w = (if di == 1 { frac[0] } else { 1.0 - frac[0] })
            * (if dj == 1 { frac[1] } else { 1.0 - frac[1] })
            * (if dk == 1 { frac[2] } else { 1.0 - frac[2] });
        v += w * grid.get(idx[0] + di, idx[1] + dj, idx[2] + dk)?;
    }
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frontier_labels() {
        let occ = [2.0, 2.0, 2.0, 0.0, 0.0];
        let h = homo_of(&occ);
        assert_eq!(h, Some(2));
        let labels: Vec<String> = (0..5).map(|i| frontier_label(i, h)).collect();
        assert_eq!(labels, ["HOMO-2", "HOMO-1", "HOMO", "LUMO", "LUMO+1"]);
        assert_eq!(homo_of(&[0.0, 0.0]), None);
    }

    #[test]
    fn trilinear_sample_of_a_linear_field_is_exact() {
        let lattice = Lattice::axis_aligned([0.0; 3], 1.0, [4, 4, 4]);
        let mut g = Grid3::zeros(lattice, "x");
        for k in 0..4 {
            for j in 0..4 {
                for i in 0..4 {
                    let idx = lattice.index(i, j, k);
                    g.values[idx] = i as f32 + 2.0 * j as f32 - k as f32;
                }
            }
        }
        let p_bohr = [1.5, 0.25, 2.0];
        let p = crate::model::units::angstrom_from_bohr3(p_bohr).map(|x| x as f32);
        let v = sample_grid(&g, p).unwrap();
        assert!((v - (1.5 + 0.5 - 2.0)).abs() < 1e-4, "{v}");
        assert_eq!(sample_grid(&g, [-1.0, 0.0, 0.0]), None);
    }
}
