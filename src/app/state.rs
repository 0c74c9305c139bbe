//! `AppState`: everything the viewer shows, split into document, view and panel state, and the
//! commands that change it.
//!
//! - [`DocState`]: the open [`Document`], its representation list (`app::reps`) and the chosen
//!   orbital;
//! - [`ViewState`]: camera, playback, the view's size, what the renderer must upload (instances,
//!   dirty flags), where isosurfaces are extracted;
//! - [`PanelState`]: the panels' own state (status line, help, forms, the file browser).
//!
//! Panels read the state and push [`Command`]s; [`AppState::apply_pending`] carries them out
//! (`app::apply`) and marks what the renderer must re-upload. No egui or wgpu here, so tests drive
//! the state directly.

use super::document::{Document, FieldSettings};
use super::fields::{FieldChoice, FieldKey, FieldService};
use super::reps::{FieldRep, RepEdit, RepId, RepSpec, Representations};
use super::settings::Settings;
use crate::model::{Frame, Grid3, Spin};
use crate::render::Camera;
use crate::render::gpu::{CylinderInstance, LineVertex, SphereInstance};
use crate::surface::MeshData;
use std::path::PathBuf;
use std::sync::Arc;

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

/// How the isovalue is given.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum IsoMode {
    /// In the field's units.
    Absolute,
    /// As a fraction of the largest |value| of the current grid.
    RelativeToMax,
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
    /// Close the window, saving the settings (File > Quit, Ctrl+Q, a script's `quit`).
    Quit,
    /// Show the save dialog for the atoms and frames named in the files panel.
    SaveDialog,
    /// Show the built-in file browser for this purpose, with a message saying why.
    OpenBrowser(super::browser::Purpose, Option<String>),
    /// A change in the built-in file browser.
    Browser(super::browser::BrowserAction),
    OpenDemo,
    CloseDocument,
    /// Writes the files, representations, frame and camera to a session file.
    SaveSession(PathBuf),
    /// Opens a session file: its files, representations, frame and camera.
    OpenSession(PathBuf),
    SetFrame(usize),
    StepFrame(i64),
    SetPlaying(bool),
    TogglePlaying,
    SetPlaybackFps(f32),
    SetLoop(bool),
    /// Picks up frames a running simulation appended to the trajectory file since it was opened.
    PickUpNewFrames,
    SetSpin(Spin),
    /// Shows orbital N of the current spin in the selected orbital representation (else the topmost
    /// orbital representation, else a new one); other representations are left as they are.
    SelectOrbital(Option<usize>),
    /// The field of the representation the field panel edits (the selected field representation,
    /// else the first; `None` removes it).
    SelectField(Option<FieldChoice>),
    /// Averages the potential map over the last N frames (1: the current frame only; at most
    /// `potential::MAX_POTENTIAL_WINDOW`).
    SetPotentialWindow(u16),
    /// How per-frame potential maps are summed (direct, multilevel, or chosen by size).
    SetPotentialMethod(crate::app::settings::PotentialMethod),
    /// The electrostatic model of the charges' potential (surfaces, cartoons and fields of it).
    SetEspModel(crate::app::esp_model::EspModel),
    /// Samples the potential's colours 1.4 A outside the surfaces along their normals (PyMOL's
    /// `surface_ramp_above_mode`) instead of on them.
    SetRampAbove(bool),
    /// A Poisson-Boltzmann parameter (the field panel's, `set ionic 0.05`).
    SetPbValue(crate::app::pb::PbSetting, f64),
    /// The unit potentials are shown in.
    SetPotentialUnit(crate::app::values::PotentialDisplay),
    /// The isovalue of the representation the field panel edits (computed units, or a fraction of
    /// the maximum).
    SetIsoValue(f32),
    SetIsoMode(IsoMode),
    SetDarkBackground(bool),
    SetDepthCue(f32),
    /// Draw the unit cell of a periodic structure (or hide it).
    ShowCell(bool),
    /// Make molecules whole across the periodic box in every frame (or show frames as written).
    MakeWhole(bool),
    /// Fit every frame onto frame 0 by a selection (`Some(None)`: the default selection, C-alpha
    /// atoms of a protein), or show frames as read (`None`) (`app::fit`).
    FitFrames(Option<Option<String>>),
    SetEnergiesInEv(bool),
    /// Adds (true) or removes a slice representation of the main field.
    SetShowSlice(bool),
    /// Orientation and position of the drawn slice.
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
    /// Stops the running "Save as…" write (no file is left behind).
    CancelSave,
    /// Downloads a PDB entry by its ID (`1ubq`) into the cache and opens it (`io::fetch`).
    FetchPdb(String),
    /// Stops the running download of a PDB entry (nothing is kept).
    CancelFetch,
    /// Colours the main field's surfaces by another field (`None`: lobe colours): a volume of the
    /// document (`FieldChoice::Volume`) or a field computed per frame (e.g. the wavefunction's
    /// potential on the density surface). A range of `None` is chosen from the colouring field's
    /// values on the surfaces.
    SetSurfaceColor(Option<(super::fields::FieldChoice, Option<[f32; 2]>)>),
    /// Points along the longest axis of computed lattices.
    SetLatticePoints(u32),
    /// Frames the atoms a selection picks (the view keeps its direction).
    FitToSelection(String),
    /// Follow the selected orbital through the wavefunction series (true) or show orbitals by index.
    FollowOrbital(bool),
    /// Memory for cached lattices and meshes, MiB.
    SetCacheBudgetMib(u32),
    /// Playback waits for each frame's surfaces (true) or keeps its rate, dropping frames (false).
    SetComputeEveryFrame(bool),
    /// Where orbitals, densities and spin densities drawn as isosurfaces are computed.
    SetOrbitalsOn(super::fields::device::FieldsOn),
    /// The colormap of slices and coloured surfaces.
    SetColormap(crate::render::colormap::Colormap),
    /// Sets the RDF panel's values (its selections, r max and bins), as typed into it.
    SetRdfForm {
        selection1: String,
        selection2: String,
        r_max_angstrom: f64,
        bins: usize,
    },
    /// Starts the RDF of the panel's selections over all frames of the document.
    StartRdf,
    CancelRdf,
    /// Sets every value of the ILS form (`app::ils::IlsForm`), as filled in by hand.
    SetIlsForm(super::ils::IlsForm),
    /// Starts a ligand free-energy map (implicit ligand sampling) of the document with the ILS
    /// form's values and adds its isosurface representation (`app::ils`).
    StartIls,
    /// Pauses (true) or continues the running ligand free-energy map.
    PauseIls(bool),
    /// Stops the running ligand free-energy map where it is (it keeps the frames it has).
    CancelIls,
    /// The lowest-barrier pathway on ligand free-energy map N from the most favoured point near
    /// the picked atom to bulk, or (true) to the end marked before.
    IlsPath(u16, bool),
    /// Marks the most favoured point near the picked atom as the end of the next pathway on map N.
    IlsMarkPathEnd(u16),
    /// Removes the pathways of map N.
    IlsClearPaths(u16),
    /// As [`Command::IlsPath`] from atom A (0-based) instead of the picked atom.
    IlsPathFromAtom(u16, usize, bool),
    /// As [`Command::IlsMarkPathEnd`] near atom A (0-based) instead of the picked atom.
    IlsMarkPathEndAtAtom(u16, usize),
    ToggleHelp,
    Screenshot(PathBuf),
    /// Adds a representation (resolved against the document; refused with a message when it lacks
    /// the field or the selection does not parse).
    AddRep(RepSpec),
    /// Adds an isosurface representation of a field.
    AddFieldRep(FieldChoice),
    /// Adds a copy of a representation just below it.
    DuplicateRep(RepId),
    /// Removes a representation (its requests are cancelled).
    DeleteRep(RepId),
    /// Moves a representation to a position in the list.
    MoveRep(RepId, usize),
    /// Changes one setting of a representation.
    EditRep(RepId, RepEdit),
    /// Keeps the current representations as the defaults for documents like this one.
    SaveRepsAsDefault,
    /// Replaces the representations by the defaults for this document.
    ResetReps,
    /// Selects a representation in the list: the field panel edits it, and the orbital list edits
    /// it when it shows an orbital.
    SelectRep(super::reps::RepId),
    /// Shows orbital N of the current spin in a new orbital representation (shift-click in the
    /// orbital list or the energy diagram).
    AddOrbitalRep(usize),
    // Tools: measurements, labels, undo/redo, background (`app::measure`, `app::labels`,
    // `app::history`).
    /// What a click on an atom does: pick only, label it, or build a distance, angle or dihedral
    /// (`ClickMode::Measure(MeasureKind::Distance)` is "Add > Measurement").
    SetClickMode(super::measure::ClickMode),
    /// Measures between 2, 3 or 4 atoms (0-based): a distance, an angle or a dihedral.
    AddMeasurement(Vec<usize>),
    /// Lists the RMSD of a selection from a reference frame (superposed first when `fit`).
    AddRmsdMeasurement {
        selection: String,
        reference: usize,
        fit: bool,
    },
    /// Lists a selection's mass-weighted radius of gyration (`kind` Rgyr) or its
    /// solvent-accessible surface area (`kind` Sasa).
    AddSelectionMeasurement {
        kind: super::measure::MeasureKind,
        selection: String,
    },
    DeleteMeasurement(u64),
    ClearMeasurements,
    /// Shows a measurement's values over all frames in the plot (`None` closes it).
    PlotMeasurement(Option<u64>),
    /// Writes a measurement's values over all frames as CSV.
    ExportMeasurementCsv(u64, PathBuf),
    /// Adds atom N's label, or removes it when it has one.
    ToggleLabel(usize),
    /// Labels the atoms a selection picks.
    LabelSelection(String),
    ClearLabels,
    SetLabelFormat(super::labels::LabelFormat),
    Undo,
    Redo,
    /// Closes the open history entry: the next continuous edit (a new drag) is an entry of its own.
    SettleHistory,
    /// The 3-D view's background, sRGB.
    SetBackgroundColor([u8; 3]),
    /// A click on atom N (`None`: on empty space), as [`Command::Pick`] resolves it: scripts and
    /// tests pick by atom.
    PickAtom(Option<usize>),
    // Image export and movies (`app::export`).
    /// Shows (true) or closes the "Export image…" or "Record movie…" dialog.
    ShowExportDialog(super::export::ExportDialog, bool),
    /// Writes the 3-D view alone to an image file (the window renders it after its next frame).
    ExportImage(super::export::ImageRequest),
    /// Starts recording a movie over frames of the document.
    StartMovie(super::export::MovieRequest),
    /// Stops the movie being recorded (no file is left behind).
    CancelMovie,
    /// Puts the camera where a saved view says (command scripts and the action log).
    SetCamera(super::session::CameraSpec),
}

/// What changed since the renderer last looked (it clears the flags after uploading).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Dirty {
    pub atoms: bool,
    /// Surfaces must be uploaded again.
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
    /// The orbital representation that follows (the one the orbital list edited when following
    /// started, or the one made for it); others added beside it keep their own orbitals.
    pub rep: Option<RepId>,
    pub spin: Spin,
    pub anchor_frame: usize,
    pub anchor_index: usize,
    /// One step per frame, once computed.
    pub steps: Option<Vec<crate::analysis::tracking::TrackStep>>,
    pub(crate) task: Option<crate::jobs::task::Task<Result<Vec<crate::analysis::tracking::TrackStep>, String>>>,
}

/// The document and how it is shown.
pub struct DocState {
    pub document: Option<Document>,
    /// The representation list (atoms and fields).
    pub reps: Representations,
    /// The spin channel of the orbital list.
    pub spin: Spin,
    /// The orbital selected in the orbital list.
    pub orbital: Option<usize>,
    /// The orbital followed through the series, if the user asked for it.
    pub follow: Option<Follow>,
    /// The shown orbital's phase continued through a wavefunction series (`app::orbitals`), so
    /// an animation by index keeps its lobe colours where an SCF flipped the orbital's sign.
    pub phase: Option<crate::app::orbitals::Phase>,
    pub(crate) next_id: u64,
}

impl Default for DocState {
    fn default() -> Self {
        DocState {
            document: None,
            reps: Representations::default(),
            spin: Spin::Alpha,
            orbital: None,
            follow: None,
            phase: None,
            next_id: 1,
        }
    }
}

/// The 3-D view: camera, playback and what the renderer draws.
pub struct ViewState {
    pub camera: Camera,
    pub timeline: Timeline,
    /// Size of the 3-D view in pixels, as last laid out.
    pub size_px: [u32; 2],
    pub fps: f32,
    /// Whether the camera should frame the document at the next layout.
    pub fit_pending: bool,
    pub pick: Option<PickInfo>,
    /// The atom under the pointer when the view's right-click menu opened (`None`: empty space).
    pub menu_atom: Option<usize>,
    /// That atom's read-out (`AppState::describe_atom`), made once when the menu opened: it
    /// evaluates fields and searches coloured surfaces, too much for every frame the menu shows.
    pub menu_description: String,
    /// Isosurfaces are extracted on the render GPU by the draw stage (marching cubes as a compute
    /// pass) instead of on the CPU; set by the window when its device can.
    pub gpu_surfaces: bool,
    /// Cartoon meshes are written on the render device (`compute::wgpu::cartoon`; the cartoon thread
    /// makes only their per-residue inputs); else on the CPU. Set from the adapter's capabilities.
    pub gpu_cartoons: bool,
    /// CPU isosurfaces extracted on a thread of their own, one lane per field representation
    /// ([`AppState::extract_surfaces_off_thread`]); `None`: extracted in the update loop itself.
    pub mesher: Option<crate::jobs::mesher::Mesher<FieldKey>>,
    /// Cartoon meshes built on a thread of their own, one lane per cartoon representation
    /// ([`AppState::build_cartoons_off_thread`]); `None`: built in the update loop itself.
    pub cartoons: Option<crate::jobs::cartoon::CartoonWorker<super::reps::CartoonKey>>,
    /// Surface colours by the potential of charges and cartoon colours by a field (values at the
    /// vertices) computed on a thread of their own, one lane per representation
    /// ([`AppState::color_vertices_off_thread`]);
    /// `None`: computed in the update loop itself.
    pub vertex_values: Option<crate::jobs::vertex_values::VertexValuesWorker<super::reps::ValuesKey>>,
    /// How far that thread's evaluation has come (the progress line's percentage).
    pub vertex_progress: crate::jobs::vertex_values::VertexProgress,
    /// While playing, the isosurface thread extracts previews from every second lattice point (a
    /// software renderer, where drawing large surfaces is what limits the frame rate); the full
    /// surfaces follow when playback stops.
    pub preview_surfaces_while_playing: bool,
    pub spheres: Vec<SphereInstance>,
    pub cylinders: Vec<CylinderInstance>,
    pub lines: Vec<LineVertex>,
    pub dirty: Dirty,
    /// Screenshot requests for the window to carry out.
    pub screenshot_requests: Vec<PathBuf>,
}

/// The panels' own state.
pub struct PanelState {
    pub status: String,
    pub errors: Vec<String>,
    pub show_help: bool,
    /// The selection text of "fit to selection".
    pub fit_selection_text: String,
    /// Whether the orbital list should scroll to the selected orbital.
    pub scroll_to_orbital: bool,
    /// Set when the user asked for the open-file dialog.
    pub open_dialog_requested: bool,
    /// Set when the user or a script asked to quit (the window closes at the end of its frame).
    pub quit_requested: bool,
    /// Set when the user asked to save atoms and frames (the window shows the save dialog).
    pub save_dialog_requested: bool,
    /// What "Save as…" writes: a selection (empty: all atoms) and a frame range.
    pub save_selection_text: String,
    pub save_frames_text: String,
    /// The write "Save as…" started, while it runs.
    pub save_job: Option<crate::jobs::save::SaveJob>,
    /// The RDF analysis panel and its computation.
    pub rdf: crate::app::rdf::RdfPanel,
    /// The ligand free-energy (ILS) form and its running computation.
    pub ils: crate::app::ils::IlsPanel,
    /// The built-in file browser (when the desktop has no file dialog).
    pub browser: super::browser::FileBrowser,
    /// The side panels are shown (they collapse to give the 3-D view the whole window).
    pub left_open: bool,
    pub right_open: bool,
    /// The selection typed into "add atoms" of the representation editor.
    pub new_selection: String,
    /// Fetching PDB entries by ID: the form and the running download.
    pub fetch: crate::app::fetch::FetchPanel,
    /// The energy-per-step plot window.
    pub energies: crate::app::energies::EnergyPanel,
    /// The Ramachandran plot window.
    pub ramachandran: crate::app::ramachandran::RamachandranPanel,
    /// The sequence panel (chains as one-letter sequences, residues picked in it).
    pub sequence: crate::app::sequence::SequencePanel,
    /// The graphics adapter and the rendering paths chosen for it, and the GPU resources the view
    /// holds (set by the window; shown in the jobs panel).
    pub graphics: [String; 2],
    /// The image export and movie dialogs and the recording in progress.
    pub export: super::export::ExportState,
    /// The command line under the view (`app::console`).
    pub console: super::console::ConsoleState,
    /// Errors reported so far (the list above keeps the last 20).
    pub error_count: u64,
}

impl Default for PanelState {
    fn default() -> Self {
        PanelState {
            status: "Open a file (Ctrl+O) or drop one here".into(),
            errors: Vec::new(),
            show_help: false,
            fit_selection_text: "all".into(),
            scroll_to_orbital: false,
            open_dialog_requested: false,
            quit_requested: false,
            save_dialog_requested: false,
            save_selection_text: String::new(),
            save_frames_text: "all".into(),
            save_job: None,
            rdf: crate::app::rdf::RdfPanel::default(),
            ils: Default::default(),
            browser: Default::default(),
            left_open: true,
            right_open: true,
            new_selection: "all".into(),
            sequence: Default::default(),
            ramachandran: Default::default(),
            energies: Default::default(),
            fetch: Default::default(),
            graphics: Default::default(),
            export: Default::default(),
            console: Default::default(),
            error_count: 0,
        }
    }
}

/// The viewer's state.
pub struct AppState {
    pub doc: DocState,
    pub view: ViewState,
    pub panels: PanelState,
    pub settings: Settings,
    pub fields: FieldService,
    pub(crate) pending: Vec<Command>,
    /// Measurements, labels and the undo history.
    pub tools: super::tools::Tools,
    /// The Poisson-Boltzmann colouring's parameters and worker.
    pub pb: super::pb::PbView,
    /// The electrostatic model of the charges' potential and how its colours are sampled.
    pub esp: super::esp_model::EspView,
    /// Told of every command [`AppState::apply_pending`] carries out (the action log).
    pub observer: Option<Box<dyn super::console::CommandObserver>>,
}

impl AppState {
    pub fn new(settings: Settings, mut fields: FieldService) -> AppState {
        // Selections know secondary structure (`helix`, `sheet`) through DSSP.
        crate::analysis::dssp::use_for_selections();
        fields.set_cache_budget(settings.cache_budget_mib as usize * (1 << 20));
        AppState {
            view: ViewState {
                camera: Camera::default(),
                timeline: Timeline {
                    playing: false,
                    fps: settings.playback_fps,
                    looping: settings.playback_loop,
                    accumulator: 0.0,
                },
                size_px: [800, 600],
                fps: 0.0,
                fit_pending: false,
                pick: None,
                menu_atom: None,
                menu_description: String::new(),
                gpu_surfaces: false,
                gpu_cartoons: false,
                mesher: None,
                cartoons: None,
                vertex_values: None,
                vertex_progress: Default::default(),
                preview_surfaces_while_playing: false,
                spheres: Vec::new(),
                cylinders: Vec::new(),
                lines: Vec::new(),
                dirty: Dirty::default(),
                screenshot_requests: Vec::new(),
            },
            doc: DocState::default(),
            panels: PanelState::default(),
            settings,
            fields,
            pending: Vec::new(),
            tools: Default::default(),
            pb: Default::default(),
            esp: Default::default(),
            observer: None,
        }
    }

    /// Queues a command for [`AppState::apply_pending`].
    pub fn push(&mut self, c: Command) {
        self.pending.push(c);
    }

    /// True while commands wait in the queue (the files given on the command line, before the
    /// first frame applies them).
    pub fn has_pending(&self) -> bool {
        !self.pending.is_empty()
    }

    /// Applies queued commands in order.
    pub fn apply_pending(&mut self) {
        let cmds = std::mem::take(&mut self.pending);
        for c in cmds {
            let Some(mut observer) = self.observer.take() else {
                self.apply_recorded(c);
                continue;
            };
            observer.before(self, &c);
            let errors = self.panels.error_count;
            self.apply_recorded(c.clone());
            let failed = self.panels.error_count != errors;
            observer.after(self, &c, failed);
            if self.observer.is_none() {
                self.observer = Some(observer);
            }
        }
        self.pump_measure_series();
        self.poll_fetch();
    }

    /// Starts writing the `save_selection_text` atoms (all when empty) of the `save_frames_text`
    /// frames of the open document to `path` (format from its extension) as a background job
    /// (`jobs::save`); [`AppState::poll_save`] reports how it went. The selection and frame range are
    /// resolved here; the job reopens the document's files (or takes its in-memory frames) so the
    /// view keeps its own reader.
    pub fn save_to(&mut self, path: &std::path::Path) {
        use crate::jobs::save::{FrameSupply, SaveJob, SaveRequest};
        if let Some(job) = &self.panels.save_job {
            return self.error(format!(
                "save: still writing {}; wait or cancel it",
                job.path().display()
            ));
        }
        let Some(doc) = self.doc.document.as_mut() else {
            return self.error("nothing is open to save".into());
        };
        let sel_text = self.panels.save_selection_text.trim().to_string();
        let atoms = if sel_text.is_empty() || sel_text == "all" {
            None
        } else {
            match crate::model::select::Selection::parse(&sel_text) {
                Ok(sel) => Some(sel.indices(&doc.structure, Some(&doc.frame))),
                Err(e) => return self.error(format!("save: selection '{sel_text}': {e}")),
            }
        };
        let frames_text = self.panels.save_frames_text.clone();
        let frames = crate::model::FrameRange::parse(&frames_text).and_then(|r| r.indices(doc.trajectory.n_frames()));
        let frames = match frames {
            Ok(f) if !f.is_empty() => f,
            Ok(_) => return self.error(format!("save: the frame range '{frames_text}' selects no frames")),
            Err(e) => return self.error(format!("save: frames '{frames_text}': {e}")),
        };
        if let Err(e) = crate::io::write::OutFormat::from_path(path) {
            return self.error(format!("save failed: {e}"));
        }
        let supply = if doc.paths.is_empty() {
            // Frames without files behind them are in memory already.
            let mut list = Vec::with_capacity(frames.len());
            for &i in &frames {
                let mut f = crate::model::Frame::default();
                match doc.read_frame(i, &mut f) {
                    Ok(()) => list.push(f),
                    Err(e) => return self.error(format!("save failed: frame {i}: {e}")),
                }
            }
            let frames_in_list: Vec<usize> = (0..list.len()).collect();
            (FrameSupply::Frames(list), frames_in_list)
        } else {
            (FrameSupply::Files(doc.paths.clone()), frames)
        };
        // Files are read again by the job: it makes molecules whole and fits frames as the view does.
        let from_files = matches!(supply.0, FrameSupply::Files(_));
        let whole_bonds = (from_files && doc.trajectory.whole().is_some()).then(|| doc.bonds.clone());
        let fit = doc.fit.clone().filter(|_| from_files);
        let shown_as = match (doc.trajectory.whole().is_some(), &doc.fit) {
            (_, Some(f)) => format!(" (fitted onto frame 0 by '{}', without the box)", f.selection),
            (true, None) => " (molecules made whole)".to_string(),
            (false, None) => String::new(),
        };
        let request = SaveRequest {
            path: path.to_path_buf(),
            structure: doc.structure.clone(),
            supply: supply.0,
            atoms,
            frames: supply.1,
            whole_bonds,
            fit,
        };
        match SaveJob::start(request) {
            Ok(job) => {
                self.panels.status = format!("saving {} frames to {}{shown_as}…", job.total(), path.display());
                self.panels.save_job = Some(job);
            }
            Err(e) => self.error(format!("save failed: {e}")),
        }
    }

    /// Takes the result of a finished save job and reports it once; true while a save runs or
    /// when one finished now (the window keeps redrawing for its progress line).
    pub fn poll_save(&mut self) -> bool {
        let Some(job) = self.panels.save_job.as_mut() else {
            return false;
        };
        let Some(done) = job.try_take() else {
            return true;
        };
        self.panels.save_job = None;
        match done.result {
            Ok(n) => self.panels.status = format!("saved {n} frames to {}", done.path.display()),
            Err(e) => self.error(format!("save failed: {e}")),
        }
        true
    }

    /// Reports an error on the status line and in the error list (and the log).
    pub fn error(&mut self, msg: String) {
        self.panels.status = msg.clone();
        self.record_error(msg);
    }

    /// Keeps `msg` in the error list (the window also writes it to standard error) without
    /// putting it on the status line: for an error shown elsewhere, under the command line.
    pub fn record_error(&mut self, msg: String) {
        tracing::warn!("{msg}");
        self.panels.error_count += 1;
        self.panels.errors.push(msg);
        if self.panels.errors.len() > 20 {
            self.panels.errors.remove(0);
        }
    }

    /// The open document.
    pub fn document(&self) -> Option<&Document> {
        self.doc.document.as_ref()
    }

    /// The open document, to change it.
    pub fn document_mut(&mut self) -> Option<&mut Document> {
        self.doc.document.as_mut()
    }

    /// The representation list.
    pub fn reps(&self) -> &Representations {
        &self.doc.reps
    }

    /// What the settings say about computing fields.
    pub fn field_settings(&self) -> FieldSettings {
        FieldSettings {
            lattice_points: self.settings.lattice_points,
            potential_method: self.settings.potential_method,
            dielectric: self
                .esp
                .model
                .dielectric()
                .unwrap_or(crate::compute::esp::screening::Dielectric::Vacuum),
        }
    }

    /// The main field: the first field representation's field.
    pub fn main_field(&self) -> Option<FieldChoice> {
        self.doc.reps.main_field().map(|f| f.field)
    }

    /// The main field representation.
    pub fn main_field_rep(&self) -> Option<&FieldRep> {
        self.doc.reps.main_field()
    }

    /// The grid the main field shows (may be an older key while a newer one is computed).
    pub fn shown_field(&self) -> Option<&(FieldKey, Arc<Grid3>)> {
        self.main_field_rep()?.pipeline.shown.as_ref()
    }

    /// The main field's positive and negative lobes.
    pub fn lobes(&self) -> [Option<Arc<MeshData>>; 2] {
        self.main_field_rep()
            .map(|f| f.pipeline.lobes.clone())
            .unwrap_or_default()
    }

    /// The key of the main field now, if any.
    pub fn current_field_key(&self) -> Option<FieldKey> {
        self.document()?.field_key(self.main_field()?, self.field_settings())
    }

    /// The key of `field` at frame `index` whose coordinates are `frame`.
    pub fn field_key_at(&self, field: FieldChoice, index: usize, frame: &Frame) -> Option<FieldKey> {
        self.document()?
            .field_key_at(field, index, frame, self.field_settings())
    }

    /// The job that computes `key` at the current frame.
    pub fn field_job(&self, key: &FieldKey) -> Option<crate::compute::FieldJob> {
        let doc = self.document()?;
        doc.field_job_at(key, &doc.frame, self.field_settings())
    }

    /// The job that computes `key`, `frame` being the coordinates of frame `key.frame`.
    pub fn field_job_at(&self, key: &FieldKey, frame: &Frame) -> Option<crate::compute::FieldJob> {
        self.document()?.field_job_at(key, frame, self.field_settings())
    }

    /// `grid`, the computed result for `key`, on the lattice it is shown on (a QM region's orbitals
    /// are placed back on the MD frame's lattice; the placed grid replaces the computed one in the
    /// cache).
    pub fn placed_grid(&mut self, key: &FieldKey, grid: Arc<Grid3>) -> Arc<Grid3> {
        let Some(doc) = self.document() else {
            return grid;
        };
        let placed = doc.placed_grid(key, Arc::clone(&grid));
        if !Arc::ptr_eq(&placed, &grid) {
            self.fields.insert(*key, Arc::clone(&placed));
        }
        placed
    }

    /// Absolute isovalue of the main field for `grid`.
    pub fn absolute_iso(&self, grid: &Grid3) -> f32 {
        self.main_field_rep().map_or(0.05, |f| f.absolute_iso(grid))
    }

    /// Whether a slice representation is visible.
    pub fn show_slice(&self) -> bool {
        self.doc
            .reps
            .fields()
            .any(|(r, f)| r.visible && matches!(f.style, super::reps::FieldStyle::Slice(_)))
    }

    /// The plane of the drawn slice (the topmost visible slice representation), else the default.
    pub fn slice_plane(&self) -> crate::app::slice::SlicePlane {
        self.doc
            .reps
            .fields()
            .find_map(|(r, f)| match f.style {
                super::reps::FieldStyle::Slice(p) if r.visible => Some(p),
                _ => None,
            })
            .unwrap_or_default()
    }

    /// The values at the ends of `f`'s slice colormap (computed units): the range the user chose,
    /// else that of a shown surface or cartoon coloured by the same field (the same colour means the
    /// same value on both), else the field's conventional one (+-5 kT/e for Poisson-Boltzmann, the
    /// screened models'), else the grid's own ([`crate::app::slice::value_range`]).
    pub fn slice_range(&self, f: &super::reps::FieldRep, grid: &Grid3) -> Option<[f32; 2]> {
        let chosen = match f.style {
            super::reps::FieldStyle::Slice(p) => p.range,
            _ => None,
        };
        let reps = &self.doc.reps;
        let coloured_alike = reps
            .list
            .iter()
            .filter(|r| r.visible)
            .filter_map(|r| match &r.kind {
                super::reps::RepKind::Field(g) => g.coloring,
                super::reps::RepKind::Cartoon(c) => c.color_by,
                super::reps::RepKind::Atoms(_) => None,
            })
            .find(|c| c.source == f.field)
            .and_then(|c| c.range);
        chosen
            .or(coloured_alike)
            .or_else(|| self.esp_default_range(f.field))
            .or_else(|| crate::app::slice::value_range(grid))
    }

    /// The unit the slice's values are shown in (the topmost visible slice representation's, drawn
    /// yet or not; `None` without one).
    pub fn slice_unit(&self) -> Option<super::values::FieldUnit> {
        let (_, f) = self
            .doc
            .reps
            .fields()
            .find(|(r, f)| r.visible && matches!(f.style, super::reps::FieldStyle::Slice(_)))?;
        Some(self.field_unit(f.field))
    }

    /// The grid the slice plane shows: the topmost visible slice representation's.
    pub fn slice_grid(&self) -> Option<&Arc<Grid3>> {
        self.doc.reps.drawn_slice()?.pipeline.shown.as_ref().map(|(_, g)| g)
    }

    /// True while work the screen waits for is in flight (fields, their surfaces, cartoons, the
    /// colours at a surface's or cartoon's vertices).
    pub fn busy(&self) -> bool {
        self.drawing_in_flight()
            || self.view.vertex_values.as_ref().is_some_and(|w| w.any_in_flight())
            || self.pb.solving()
            || self.phase_pending()
    }

    /// True while fields, their surfaces or cartoons are in flight: the window redraws at its full
    /// rate for their progress and partial results.
    pub fn drawing_in_flight(&self) -> bool {
        self.reps_waiting()
            || self.surfaces_pending()
            || self.doc.reps.cartoons().any(|(r, c)| r.visible && c.pipeline.waiting())
    }

    /// True while any work runs off the update loop whose result the window shows when it
    /// arrives (besides [`AppState::busy`]: fields of hidden representations, measurement
    /// series, RDF, ligand maps, saves, downloads): the window keeps polling for it.
    pub fn background_work(&self) -> bool {
        self.busy()
            || self.fields.any_pending()
            || self.measure_series_pending()
            || self.panels.rdf.is_running()
            || self.panels.ils.is_running()
            || self.panels.save_job.is_some()
            || self.panels.fetch.job.is_some()
            || !self.panels.export.image_requests.is_empty()
    }

    /// True while a visible field representation waits for a field in flight (its own or the one
    /// its surfaces are coloured by).
    pub fn reps_waiting(&self) -> bool {
        self.doc.reps.fields().any(|(r, f)| {
            r.visible
                && (self.fields.pending(f.pipeline.slot).is_some()
                    || f.pipeline
                        .color
                        .as_ref()
                        .is_some_and(|c| self.fields.pending(c.slot).is_some()))
        })
    }

    /// Whether lobes are being extracted off this thread for a grid not yet shown.
    pub fn surfaces_pending(&self) -> bool {
        self.doc.reps.fields().any(|(_, f)| f.pipeline.meshing())
    }

    /// From now on, CPU isosurfaces are extracted on a thread of their own (the frame that shows a
    /// new field never waits for its surfaces). Returns false when there is no extractor or the
    /// thread cannot start (extraction then stays in the update loop).
    pub fn extract_surfaces_off_thread(&mut self) -> bool {
        if self.view.mesher.is_none()
            && let Some(extract) = self.fields.extractor()
        {
            self.view.mesher = crate::jobs::mesher::Mesher::start(extract).ok();
        }
        self.view.mesher.is_some()
    }

    pub(crate) fn aspect(&self) -> f32 {
        self.view.size_px[0] as f32 / self.view.size_px[1].max(1) as f32
    }
}
