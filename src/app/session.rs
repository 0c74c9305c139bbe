//! Session files (RON): the files of the open document, its representations, the frame, the
//! camera, the measurements and labels, and the view settings — what reopens the same view
//! (`orbitfield --session FILE`, `orbitfield render --session FILE`, File > Save session).
//!
//! Paths are written relative to the session file's folder when they lie under it (so a folder
//! with its session moves as a whole), else absolute; relative paths are read against that folder.
//! Written atomically. Called by `app::apply` for the session commands and by the CLI.

use super::reps::RepSpec;
use super::rmsd::Quantity;
use super::state::AppState;
use super::values::PotentialDisplay;
use crate::render::colormap::Colormap;
use std::path::{Path, PathBuf};

/// The version written by this build.
pub const SESSION_VERSION: u32 = 1;

/// The camera as a session keeps it.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CameraSpec {
    pub target_angstrom: [f32; 3],
    pub distance_angstrom: f32,
    /// Quaternion x, y, z, w.
    pub rotation: [f32; 4],
    pub fov_y_degree: f32,
}

impl CameraSpec {
    pub fn of(camera: &crate::render::Camera) -> CameraSpec {
        CameraSpec {
            target_angstrom: camera.target_angstrom.to_array(),
            distance_angstrom: camera.distance_angstrom,
            rotation: camera.rotation.to_array(),
            fov_y_degree: camera.fov_y_radians.to_degrees(),
        }
    }

    /// Applies the saved view to `camera` (values a hand-edited file may break are ignored).
    pub fn apply(&self, camera: &mut crate::render::Camera) {
        let ok = |v: &[f32]| v.iter().all(|x| x.is_finite());
        if ok(&self.target_angstrom) {
            camera.target_angstrom = glam::Vec3::from(self.target_angstrom);
        }
        if self.distance_angstrom.is_finite() && self.distance_angstrom > 0.0 {
            camera.distance_angstrom = self.distance_angstrom;
        }
        let q = glam::Quat::from_array(self.rotation);
        if ok(&self.rotation) && q.length() > 1e-6 {
            camera.rotation = q.normalize();
        }
        if self.fov_y_degree.is_finite() && (1.0..=150.0).contains(&self.fov_y_degree) {
            camera.fov_y_radians = self.fov_y_degree.to_radians();
        }
    }
}

/// A saved view.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Session {
    pub version: u32,
    /// The files opened together (relative to the session file's folder, or absolute).
    pub files: Vec<PathBuf>,
    /// The selection that named the QM region of the wavefunctions, if one did.
    #[serde(default)]
    pub qm_region: Option<String>,
    #[serde(default)]
    pub frame: usize,
    pub reps: Vec<RepSpec>,
    #[serde(default)]
    pub camera: Option<CameraSpec>,
    #[serde(default)]
    pub potential_unit: PotentialDisplay,
    #[serde(default)]
    pub colormap: Colormap,
    #[serde(default = "dark")]
    pub dark_background: bool,
    /// Points along the longest axis of computed orbital lattices.
    #[serde(default = "lattice_points")]
    pub lattice_points: u32,
    /// Where orbitals, densities and spin densities drawn as isosurfaces are computed.
    #[serde(default)]
    pub orbitals_on: super::fields::device::FieldsOn,
    /// Ligand free-energy maps (implicit ligand sampling), as computed: they start again when the
    /// session opens (`ils:N` representations show them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ils: Vec<super::ils::IlsForm>,
    /// The Poisson-Boltzmann colouring's parameters, when a representation uses it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pb: Option<super::pb::PbSpec>,
    /// The electrostatic model of the charges' potential (`None` in older sessions: the files'
    /// default, `esp_model::EspModel::for_structure`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub esp_model: Option<super::esp_model::EspModel>,
    /// Potential colours sampled 1.4 A outside the surfaces.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ramp_above: bool,
    /// The measurements: each one's 2, 3 or 4 atoms, numbered from 1 (as `measure` takes them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub measurements: Vec<Vec<usize>>,
    /// The RMSD measurements: selection, reference frame, superposed or not.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rmsd: Vec<(String, usize, bool)>,
    /// The radius-of-gyration measurements: their selections.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rgyr: Vec<String>,
    /// The SASA measurements: their selections.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sasa: Vec<String>,
    /// The labelled atoms, numbered from 1.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<usize>,
    /// What the labels say (`None` in older sessions: the format stays as it is).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_format: Option<super::labels::LabelFormat>,
    /// The view's background when a colour was chosen (sRGB); `None`: black or white as
    /// `dark_background` says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub background_rgb: Option<[u8; 3]>,
    /// Whether the unit cell is drawn (older sessions: drawn).
    #[serde(default = "shown")]
    pub show_cell: bool,
    /// Whether molecules are made whole across the periodic box (older sessions: made whole).
    #[serde(default = "shown")]
    pub make_whole: bool,
    /// The selection frames are fitted onto frame 0 by (`app::fit`), when they are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fit: Option<String>,
    /// How far atoms fade with depth, 0 to 1 (`None` in older sessions: the setting stays).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depth_cue: Option<f32>,
}

fn dark() -> bool {
    true
}

fn shown() -> bool {
    true
}

fn lattice_points() -> u32 {
    80
}

/// Why a session cannot be read or written.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("{path}: cannot read the session: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{path}: not a session file: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("{path}: session version {found} is newer than this program reads ({SESSION_VERSION})")]
    Version { path: PathBuf, found: u32 },
    #[error("{path}: cannot write the session: {message}")]
    Write { path: PathBuf, message: String },
}

impl Session {
    /// Reads a session file, its paths resolved against its folder.
    pub fn load(path: &Path) -> Result<Session, SessionError> {
        let text = std::fs::read_to_string(path).map_err(|source| SessionError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let mut s: Session = ron::from_str(&text).map_err(|e| SessionError::Parse {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        if s.version > SESSION_VERSION {
            return Err(SessionError::Version {
                path: path.to_path_buf(),
                found: s.version,
            });
        }
        let dir = path.parent().unwrap_or(Path::new("."));
        for f in &mut s.files {
            if f.is_relative() {
                *f = dir.join(&*f);
            }
        }
        Ok(s)
    }

    /// Writes the session atomically, its paths relative to `path`'s folder where they lie under it.
    pub fn save(&self, path: &Path) -> Result<(), SessionError> {
        let error = |message: String| SessionError::Write {
            path: path.to_path_buf(),
            message,
        };
        let dir = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .map(|d| std::fs::canonicalize(d).unwrap_or_else(|_| d.to_path_buf()));
        let mut copy = self.clone();
        for f in &mut copy.files {
            let absolute = std::fs::canonicalize(&*f).unwrap_or_else(|_| f.clone());
            *f = match dir.as_ref().and_then(|d| absolute.strip_prefix(d).ok()) {
                Some(rel) => rel.to_path_buf(),
                None => absolute,
            };
        }
        let text =
            ron::ser::to_string_pretty(&copy, ron::ser::PrettyConfig::default()).map_err(|e| error(e.to_string()))?;
        crate::io::write_atomically(path, text.as_bytes()).map_err(|e| error(e.to_string()))
    }
}

impl AppState {
    /// The session of what is shown now (`None` without a document).
    pub fn session(&self) -> Option<Session> {
        let doc = self.document()?;
        Some(Session {
            version: SESSION_VERSION,
            files: doc.paths.clone(),
            qm_region: doc.qm_selection.clone(),
            frame: doc.frame_index,
            reps: self.doc.reps.list.iter().map(|r| self.rep_spec(r)).collect(),
            camera: Some(CameraSpec::of(&self.view.camera)),
            potential_unit: self.settings.potential_unit,
            colormap: self.settings.colormap,
            dark_background: self.settings.dark_background,
            lattice_points: self.settings.lattice_points,
            orbitals_on: self.settings.orbitals_on,
            ils: doc.ils_maps.iter().map(|m| m.form.clone()).collect(),
            pb: self.pb_spec(),
            depth_cue: Some(self.settings.depth_cue),
            esp_model: Some(self.esp.model),
            ramp_above: self.esp.ramp_above,
            measurements: self
                .tools
                .measure
                .list
                .iter()
                .filter(|m| m.spec.is_none())
                .map(|m| m.atoms.iter().map(|a| a + 1).collect())
                .collect(),
            rmsd: self
                .tools
                .measure
                .list
                .iter()
                .filter_map(|m| m.spec.as_ref())
                .filter_map(|r| match r.quantity {
                    Quantity::Rmsd {
                        reference_frame, fit, ..
                    } => Some((r.selection.clone(), reference_frame, fit)),
                    Quantity::Rgyr { .. } | Quantity::Sasa { .. } => None,
                })
                .collect(),
            rgyr: self
                .tools
                .measure
                .list
                .iter()
                .filter_map(|m| m.spec.as_ref())
                .filter(|r| matches!(r.quantity, Quantity::Rgyr { .. }))
                .map(|r| r.selection.clone())
                .collect(),
            sasa: self
                .tools
                .measure
                .list
                .iter()
                .filter_map(|m| m.spec.as_ref())
                .filter(|r| matches!(r.quantity, Quantity::Sasa { .. }))
                .map(|r| r.selection.clone())
                .collect(),
            labels: self.tools.labels.atoms.iter().map(|a| a + 1).collect(),
            label_format: Some(self.tools.labels.format),
            background_rgb: self.settings.background_rgb,
            show_cell: doc.cell_shown(self.settings.show_cell),
            make_whole: self.settings.make_whole,
            fit: self.fit_selection().map(str::to_string),
        })
    }

    pub(crate) fn save_session(&mut self, path: &Path) {
        let Some(session) = self.session() else {
            self.error("save session: nothing is open".into());
            return;
        };
        match session.save(path) {
            Ok(()) => self.panels.status = format!("session saved to {}", path.display()),
            Err(e) => self.error(e.to_string()),
        }
    }

    pub(crate) fn open_session(&mut self, path: &Path) {
        match Session::load(path) {
            Ok(s) => self.apply_session(&s),
            Err(e) => self.error(e.to_string()),
        }
    }

    /// Opens a session's files and shows them as it says: representations, frame, camera and the
    /// view settings. Representations that do not fit the files are skipped with a message.
    pub fn apply_session(&mut self, s: &Session) {
        self.settings.potential_unit = s.potential_unit;
        self.settings.colormap = s.colormap;
        self.settings.dark_background = s.dark_background;
        self.settings.background_rgb = s.background_rgb;
        self.settings.show_cell = s.show_cell;
        self.settings.make_whole = s.make_whole;
        if let Some(d) = s.depth_cue.filter(|d| d.is_finite()) {
            self.settings.depth_cue = d.clamp(0.0, 1.0);
        }
        self.settings.lattice_points = s.lattice_points.clamp(16, 512);
        self.set_orbitals_on(s.orbitals_on);
        if let Some(pb) = &s.pb {
            self.apply_pb_spec(pb);
        }
        let before = self.document().map(|d| d.id);
        self.open_files(&s.files, s.qm_region.clone());
        // Files that could not be read leave the open document as it was (the error says why).
        let Some(doc) = self.document_mut().filter(|d| Some(d.id) != before) else {
            return;
        };
        // The session says whether this document's box was drawn (a crystal's cell too).
        doc.show_cell = Some(s.show_cell);
        self.clear_reps();
        if let Some(m) = s.esp_model.filter(|m| m.check().is_ok()) {
            self.esp.model = m;
        }
        self.esp.ramp_above = s.ramp_above;
        self.esp.revision = self.esp.revision.wrapping_add(1);
        // The maps first, so that their representations resolve; they compute one after another.
        for form in &s.ils {
            self.panels.ils.form = form.clone();
            self.start_ils_map(false, true);
        }
        let mut skipped = Vec::new();
        for spec in &s.reps {
            if let Err(e) = self.add_rep(spec) {
                skipped.push(e);
            }
        }
        if let Some(super::fields::FieldChoice::Orbital { spin, index }) = self.main_field() {
            self.doc.spin = spin;
            self.doc.orbital = Some(index);
        }
        self.doc.reps.selected = None;
        if let Some(selection) = &s.fit {
            self.set_fit(Some(Some(selection.clone())));
        }
        self.set_frame(s.frame);
        // Measurements and labels of atoms the files have (a hand-edited number beyond them is
        // reported by `add_measurement`, and dropped for a label).
        for atoms in &s.measurements {
            self.add_measurement(atoms.iter().map(|a| a.saturating_sub(1)).collect());
        }
        for (selection, reference, fit) in &s.rmsd {
            self.add_rmsd_measurement(selection, *reference, *fit);
        }
        for selection in &s.rgyr {
            self.add_selection_measurement(super::measure::MeasureKind::Rgyr, selection);
        }
        for selection in &s.sasa {
            self.add_selection_measurement(super::measure::MeasureKind::Sasa, selection);
        }
        let n_atoms = self.document().map_or(0, |d| d.structure.len());
        if let Some(format) = s.label_format {
            self.tools.labels.format = format;
        }
        for &a in &s.labels {
            if (1..=n_atoms).contains(&a) && !self.tools.labels.atoms.contains(&(a - 1)) {
                self.toggle_label(a - 1);
            }
        }
        if let Some(c) = &s.camera {
            // The scene's bounds (clip planes, depth cue) from the frame, then the saved view.
            self.apply(super::state::Command::ResetCamera);
            c.apply(&mut self.view.camera);
            self.view.fit_pending = false;
        }
        self.view.dirty.style = true;
        self.view.dirty.slice = true;
        if skipped.is_empty() {
            let count = |n: usize, what: &str| match n {
                1 => format!("1 {what}"),
                n => format!("{n} {what}s"),
            };
            let mut status = format!("session: {}", count(s.reps.len(), "representation"));
            for (n, what) in [
                (self.tools.measure.list.len(), "measurement"),
                (self.tools.labels.atoms.len(), "label"),
            ] {
                if n > 0 {
                    status.push_str(&format!(", {}", count(n, what)));
                }
            }
            self.panels.status = status;
        } else {
            self.error(format!("session: skipped {}", skipped.join("; ")));
        }
    }
}
