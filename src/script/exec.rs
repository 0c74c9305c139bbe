//! Carrying out planned statements on an [`AppState`]: commands through
//! [`AppState::apply_pending`] (the path the window's controls take, so the action log sees them),
//! and the statements that write files. Without a window ([`RunMode::Headless`]) fields are
//! computed on this thread and awaited, and images and movies are drawn by an offscreen render
//! context through `app::export` (the window's own export path).

use super::plan::{Plan, plan};
use super::verbs::{self, Problem};
use super::{RunMode, ScriptError};
use crate::app::draw::SceneSync;
use crate::app::measure::MeasureKind;
use crate::app::state::{AppState, Command};
use crate::render::{GpuScene, RenderContext};
use std::path::{Path, PathBuf};

/// Scripts run inside scripts at most this deep.
const MAX_DEPTH: usize = 16;

/// The offscreen renderer of a headless run, made at the first image.
struct Gfx {
    rc: RenderContext,
    scene: GpuScene,
    sync: SceneSync,
}

/// Runs statements on a state.
pub struct Runner<'a> {
    pub state: &'a mut AppState,
    pub mode: RunMode,
    /// What statements reported (help, selections, RMSD, files written).
    pub output: Vec<String>,
    /// Statements carried out.
    pub statements: usize,
    gfx: Option<Gfx>,
    depth: usize,
    /// In the window: the rest of the script, waiting for the view before a `save image` or
    /// `save movie`.
    pub resume: Option<crate::app::console::ScriptResume>,
}

impl<'a> Runner<'a> {
    pub fn new(state: &'a mut AppState, mode: RunMode) -> Runner<'a> {
        Runner {
            state,
            mode,
            output: Vec::new(),
            statements: 0,
            gfx: None,
            depth: 0,
            resume: None,
        }
    }

    /// Runs `text` (its paths relative to `base_dir`; `file` names it in errors), stopping at the
    /// first failing statement.
    pub fn run_text(&mut self, text: &str, base_dir: &Path, file: Option<&Path>) -> Result<(), ScriptError> {
        self.run_from(text, base_dir, file, 1, 0)
    }

    /// Runs `text`, whose first line is line `first_line` of the script, skipping the first
    /// `skip` commands of that line. In the window, a `save image` or `save movie` waits for the
    /// view to show the current frame: the rest of the script is left in [`Runner::resume`].
    pub fn run_from(
        &mut self,
        text: &str,
        base_dir: &Path,
        file: Option<&Path>,
        first_line: usize,
        skip: usize,
    ) -> Result<(), ScriptError> {
        let at = |line: usize, column: usize, message: String| ScriptError {
            file: file.map(Path::to_path_buf),
            line: line + first_line - 1,
            column,
            message,
        };
        let statements =
            super::lex::statements(text).map_err(|u| at(u.line, u.column, "a quote is not closed".into()))?;
        for (k, st) in statements.iter().enumerate() {
            if st.line == 1 && k < skip {
                continue;
            }
            let parsed = verbs::parse(st, base_dir).map_err(|p| at(st.line, p.column, p.message))?;
            if self.mode == RunMode::Window && self.depth == 0 && self.must_wait(&parsed) {
                self.resume = Some(crate::app::console::ScriptResume {
                    text: text.lines().skip(st.line - 1).collect::<Vec<_>>().join("\n"),
                    base_dir: base_dir.to_path_buf(),
                    file: file.map(Path::to_path_buf),
                    first_line: first_line + st.line - 1,
                    skip: statements[..k].iter().filter(|s| s.line == st.line).count(),
                    done: self.statements,
                });
                return Ok(());
            }
            if parsed.verb.name == "run" {
                let path = parsed.path("file").map(Path::to_path_buf).unwrap_or_default();
                self.run_nested(&path).map_err(|e| match e.file {
                    Some(_) => e,
                    None => at(st.line, parsed.column, e.message),
                })?;
                if self.state.panels.quit_requested {
                    return Ok(());
                }
                continue;
            }
            let planned = plan(&parsed, self.state).map_err(|p| at(st.line, p.column, p.message))?;
            let reps_before = self.state.reps().list.len();
            self.carry_out(planned, parsed.column)
                .map_err(|p| at(st.line, p.column, p.message))?;
            // `quit`: nothing after it runs (the window closes at the end of its frame).
            if self.state.panels.quit_requested {
                self.statements += 1;
                return Ok(());
            }
            if matches!(
                (parsed.verb.name, parsed.sub()),
                ("measure", "distance" | "angle" | "dihedral")
            ) {
                // What the measurement reads at the shown frame, as rmsd, rgyr and sasa report.
                let m = self.state.tools.measure.list.last();
                if let Some((m, v)) = m.and_then(|m| Some((m, self.state.measurement_value(m)?)))
                    && let Some(kind) = m.kind()
                {
                    let atoms: Vec<String> = m.atoms.iter().map(|a| (a + 1).to_string()).collect();
                    self.output
                        .push(format!("{} {}: {v:.3} {}", kind.name(), atoms.join("-"), kind.unit()));
                }
            }
            if matches!((parsed.verb.name, parsed.sub()), ("rep" | "field", "add")) {
                // Which number the new representation took: `color N`, `rep modify N` refer to it.
                let reps = &self.state.reps().list;
                if reps.len() > reps_before
                    && let Some(r) = reps.last()
                {
                    // A selection that matches nothing is kept, and said (as the status line says it).
                    let empty = match &r.kind {
                        crate::app::reps::RepKind::Atoms(a) => a.error.is_none() && a.count == 0,
                        _ => false,
                    };
                    let note = if empty { " (the selection matches no atoms)" } else { "" };
                    self.output.push(format!(
                        "representation {}: {}{note}",
                        reps.len(),
                        self.state.rep_label(r)
                    ));
                }
            }
            if self.mode == RunMode::Headless && parsed.verb.name == "rdf" && parsed.sub() != "cancel" {
                // Without a window the g(r) is waited for and summed up (`save rdf` writes it).
                self.finish_analyses();
                if let Some(e) = self.state.panels.rdf.error.clone() {
                    return Err(at(st.line, parsed.column, format!("rdf: {e}")));
                }
                if let Some(line) = crate::app::rdf::rdf_summary(self.state) {
                    self.output.push(line);
                }
            }
            if self.mode == RunMode::Headless && parsed.verb.name == "fetch" {
                let errors = self.state.panels.error_count;
                while self.state.panels.fetch.job.is_some() {
                    self.state.poll_fetch();
                    std::thread::sleep(std::time::Duration::from_millis(5));
                }
                if self.state.panels.error_count != errors {
                    return Err(at(st.line, parsed.column, self.state.panels.status.clone()));
                }
            }
            self.statements += 1;
        }
        Ok(())
    }

    /// In the window: whether statement `p` waits, with the rest of the script, for what the
    /// window computes over the next redraws: images and movies for the view to show the current
    /// frame, pathways for the ligand free-energy map that is filling in (unless it is paused).
    fn must_wait(&self, p: &verbs::Parsed) -> bool {
        match (p.verb.name, p.sub()) {
            ("save", "image" | "movie") => !self.view_is_current(),
            ("ils", "path") => self.state.ils_needs_pump(),
            // Whatever follows a `fetch` waits for the entry to arrive and open.
            _ => self.state.panels.fetch.job.is_some(),
        }
    }

    /// Whether the view shows the current frame with everything computed (the window's fields
    /// arrive over several redraws).
    fn view_is_current(&self) -> bool {
        crate::app::export::view_is_complete(self.state)
    }

    fn run_nested(&mut self, path: &Path) -> Result<(), ScriptError> {
        if self.depth >= MAX_DEPTH {
            return Err(ScriptError {
                file: None,
                line: 0,
                column: 0,
                message: format!(
                    "run {}: scripts nested deeper than {MAX_DEPTH} (a script runs itself?)",
                    path.display()
                ),
            });
        }
        let text = std::fs::read_to_string(path).map_err(|e| ScriptError {
            file: None,
            line: 0,
            column: 0,
            message: format!("run {}: {e}", path.display()),
        })?;
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        self.depth += 1;
        let result = self.run_text(&text, &dir, Some(path));
        self.depth -= 1;
        result
    }

    /// Applies commands as the window does; a command that reports an error fails the statement.
    fn apply(&mut self, commands: Vec<Command>, column: usize) -> Result<(), Problem> {
        let errors = self.state.panels.error_count;
        for c in commands {
            self.state.push(c);
        }
        self.state.apply_pending();
        // A document just opened is framed now (the window's view would do it at its next
        // frame, after the script's camera commands).
        self.state.fit_if_pending();
        if self.mode == RunMode::Headless {
            self.settle();
            self.finish_analyses();
        }
        if self.state.panels.error_count != errors {
            return Err(Problem {
                column,
                message: self.state.panels.errors.last().cloned().unwrap_or_default(),
            });
        }
        Ok(())
    }

    /// Headless: runs the update loop until what is shown is computed (fields inline).
    fn settle(&mut self) {
        for k in 0..2000 {
            self.state.update_reps();
            self.state.pump_measure_series();
            let saving = self.state.poll_save() && self.state.panels.save_job.is_some();
            if !self.state.busy() && !saving {
                break;
            }
            if k > 8 {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        }
    }

    /// Headless: waits for the ligand free-energy maps and the RDF that are computing (a paused
    /// map is left as it is), then for the surfaces that show them.
    fn finish_analyses(&mut self) {
        let running = |s: &AppState| s.ils_needs_pump() || s.panels.rdf.is_running();
        if !running(self.state) {
            return;
        }
        while running(self.state) {
            self.state.update_reps();
            self.state.pump_rdf();
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        self.settle();
    }

    fn gfx(&mut self) -> Result<&mut Gfx, String> {
        if self.gfx.is_none() {
            let rc = RenderContext::headless(4).map_err(|e| format!("no offscreen renderer: {e}"))?;
            let scene = GpuScene::new(&rc);
            let sync = SceneSync::new(&rc);
            self.state.view.gpu_cartoons = sync.writes_cartoons() && rc.capabilities.gpu_cartoons();
            self.gfx = Some(Gfx { rc, scene, sync });
        }
        self.gfx.as_mut().ok_or_else(|| "no offscreen renderer".to_string())
    }

    /// One redraw of the window's view without a window: the update loop, the draw stage, then
    /// the export service (images asked for, the movie being recorded).
    fn redraw(&mut self) -> Result<(), String> {
        self.settle();
        self.gfx()?;
        let Some(gfx) = self.gfx.as_mut() else {
            return Err("no offscreen renderer".into());
        };
        let state = &mut *self.state;
        gfx.sync.sync(&gfx.rc, &mut gfx.scene, state);
        crate::app::export::service(&gfx.rc, &mut gfx.scene, state);
        Ok(())
    }

    fn carry_out(&mut self, planned: Plan, column: usize) -> Result<(), Problem> {
        let fail = |message: String| Problem { column, message };
        match planned {
            Plan::Commands(c) => self.apply(c, column),
            Plan::Report(text) => {
                self.output.push(text);
                Ok(())
            }
            Plan::Run(path) => self.run_nested(&path).map_err(|e| fail(e.to_string())),
            Plan::Select(sel) => {
                self.state.panels.new_selection = sel.clone();
                let n = self.count(&sel);
                let hint = if n == 0 { self.empty_hint(&sel) } else { String::new() };
                self.output.push(format!("'{sel}' selects {n} atoms{hint}"));
                Ok(())
            }
            Plan::Rmsd {
                selection,
                reference,
                fit,
                keep,
            } => {
                let value = self.rmsd(&selection, reference, fit).map_err(fail)?;
                let how = if fit { ", superposed" } else { "" };
                self.output
                    .push(format!("rmsd of '{selection}' to frame {reference}{how}: {value:.4} A"));
                if keep {
                    self.apply(
                        vec![Command::AddRmsdMeasurement {
                            selection,
                            reference,
                            fit,
                        }],
                        column,
                    )?;
                }
                Ok(())
            }
            Plan::OfSelection { kind, selection, keep } => {
                let value = self.of_selection(kind, &selection).map_err(fail)?;
                self.output.push(match kind {
                    MeasureKind::Sasa => format!(
                        "SASA of '{selection}' (probe {} A): {value:.1} A^2",
                        crate::analysis::sasa::WATER_PROBE_ANGSTROM
                    ),
                    _ => format!("radius of gyration of '{selection}': {value:.4} A"),
                });
                if keep {
                    self.apply(vec![Command::AddSelectionMeasurement { kind, selection }], column)?;
                }
                Ok(())
            }
            Plan::SaveImage(request) => {
                if self.mode == RunMode::Headless {
                    // The view takes the image's size (the window's view has its own).
                    self.state.view.size_px = request.size_px;
                    self.apply(vec![Command::ExportImage(request.clone())], column)?;
                    let errors = self.state.panels.error_count;
                    self.redraw().map_err(fail)?;
                    if self.state.panels.error_count != errors {
                        return Err(fail(self.state.panels.status.clone()));
                    }
                    self.output.push(format!("image {}", request.path.display()));
                    Ok(())
                } else {
                    self.apply(vec![Command::ExportImage(request)], column)
                }
            }
            Plan::SaveMovie(request) => {
                if self.mode == RunMode::Headless {
                    self.state.view.size_px = request.size_px;
                    let path = request.path.clone();
                    self.apply(vec![Command::StartMovie(request)], column)?;
                    let errors = self.state.panels.error_count;
                    let mut rounds = 0usize;
                    while self.state.panels.export.recording.is_some() {
                        self.redraw().map_err(fail)?;
                        rounds += 1;
                        if rounds > 1_000_000 {
                            return Err(fail("the movie did not finish".into()));
                        }
                    }
                    if self.state.panels.error_count != errors {
                        return Err(fail(self.state.panels.status.clone()));
                    }
                    self.output.push(format!("movie {}", path.display()));
                    Ok(())
                } else {
                    self.apply(vec![Command::StartMovie(request)], column)
                }
            }
            Plan::SaveMap(field, path) => {
                self.save_map(field, &path).map_err(fail)?;
                self.output.push(format!("map {}", path.display()));
                Ok(())
            }
            Plan::SaveRdf(path) => {
                if self.mode == RunMode::Headless {
                    self.finish_analyses();
                }
                let text = crate::app::rdf::rdf_text(self.state)
                    .ok_or_else(|| fail("save rdf: no g(r) yet; compute one with `rdf A with B`".into()))?;
                crate::io::write_atomically(&path, text.as_bytes())
                    .map_err(|e| fail(format!("{}: {e}", path.display())))?;
                self.output.push(format!("rdf {}", path.display()));
                Ok(())
            }
            Plan::SaveMesh(id, path) => {
                if self.mode == RunMode::Headless {
                    self.settle();
                }
                let mesh = self
                    .state
                    .reps()
                    .field(id)
                    .and_then(|f| {
                        let [a, b] = &f.pipeline.lobes;
                        merge(a.as_deref(), b.as_deref())
                    })
                    .ok_or_else(|| fail("save mesh: the representation shows no surface yet".into()))?;
                let (_, bytes) = crate::surface::export::mesh_file_bytes(&path, &mesh, "")
                    .map_err(|e| fail(format!("{}: {e}", path.display())))?;
                crate::io::write_atomically(&path, &bytes).map_err(|e| fail(format!("{}: {e}", path.display())))?;
                self.output.push(format!("mesh {}", path.display()));
                Ok(())
            }
            Plan::SaveCoordinates {
                path,
                selection,
                frames,
            } => {
                self.state.panels.save_selection_text = selection;
                self.state.panels.save_frames_text = frames;
                let errors = self.state.panels.error_count;
                self.state.save_to(&path);
                if self.mode == RunMode::Headless {
                    while self.state.panels.save_job.is_some() {
                        self.state.poll_save();
                        std::thread::sleep(std::time::Duration::from_millis(5));
                    }
                }
                if self.state.panels.error_count != errors {
                    return Err(fail(self.state.panels.status.clone()));
                }
                self.output.push(format!("coordinates {}", path.display()));
                Ok(())
            }
        }
    }

    fn count(&self, sel: &str) -> usize {
        let (Some(doc), Ok(s)) = (self.state.document(), crate::model::select::Selection::parse(sel)) else {
            return 0;
        };
        s.indices(&doc.structure, Some(&doc.frame)).len()
    }

    /// The mass-weighted radius of gyration (`kind` Rgyr) or the SASA (`kind` Sasa) of `sel` at
    /// the current frame.
    fn of_selection(&mut self, kind: MeasureKind, sel: &str) -> Result<f64, String> {
        let parsed = crate::model::select::Selection::parse(sel).map_err(|e| e.message)?;
        let doc = self.state.document().ok_or("nothing is open")?;
        let atoms = parsed.indices(&doc.structure, Some(&doc.frame));
        if atoms.is_empty() {
            return Err(format!("{}: '{sel}' picks no atoms", kind.name()));
        }
        let positions = &doc.frame.positions_angstrom;
        if let Some(&i) = atoms.iter().find(|&&i| {
            !positions
                .get(i as usize)
                .is_some_and(|q| q.iter().all(|x| x.is_finite()))
        }) {
            return Err(format!("{}: atom {} has no finite position", kind.name(), i + 1));
        }
        let atoms: Vec<usize> = atoms.iter().map(|&i| i as usize).collect();
        let spec = crate::app::rmsd::SelectionSpec::of_atoms(kind, sel, &doc.structure, &atoms).ok_or_else(|| {
            format!("rgyr: the atoms '{sel}' picks have no mass (unknown elements and no masses in the files)")
        })?;
        crate::app::rmsd::value(&atoms, Some(&spec), positions)
            .ok_or_else(|| format!("{}: '{sel}' cannot be measured", kind.name()))
    }

    /// The RMSD of `sel` between the current frame and frame `reference`, after the best rigid
    /// superposition of the selection when `fit` (`model::qm_region::superpose`).
    fn rmsd(&mut self, sel: &str, reference: usize, fit: bool) -> Result<f64, String> {
        let parsed = crate::model::select::Selection::parse(sel).map_err(|e| e.message)?;
        let doc = self.state.document_mut().ok_or("nothing is open")?;
        let atoms = parsed.indices(&doc.structure, Some(&doc.frame));
        if atoms.is_empty() {
            return Err(format!("rmsd: '{sel}' picks no atoms"));
        }
        // As the viewer shows it (fitted onto frame 0 when frames are), like the current frame.
        let mut other = crate::model::Frame::default();
        doc.read_frame(reference, &mut other).map_err(|e| e.to_string())?;
        if fit {
            let pick = |f: &[[f32; 3]]| -> Vec<[f64; 3]> {
                atoms
                    .iter()
                    .filter_map(|&i| f.get(i as usize))
                    .map(|p| p.map(f64::from))
                    .collect()
            };
            let (here, there) = (pick(&doc.frame.positions_angstrom), pick(&other.positions_angstrom));
            return crate::model::qm_region::superpose(&here, &there)
                .map(|(_, rmsd)| rmsd)
                .ok_or_else(|| format!("rmsd: '{sel}' has coordinates that cannot be superposed"));
        }
        let mut sum = 0.0f64;
        for &i in &atoms {
            let (a, b) = (
                doc.frame.positions_angstrom[i as usize],
                other.positions_angstrom[i as usize],
            );
            sum += (0..3).map(|k| f64::from(a[k] - b[k]).powi(2)).sum::<f64>();
        }
        Ok((sum / atoms.len() as f64).sqrt())
    }

    /// Why a selection that names chains, segments or insertion codes picks nothing, when the files
    /// give none of them (a GRO or PQR file has no chain identifiers).
    fn empty_hint(&self, sel: &str) -> String {
        let Some(doc) = self.state.document() else {
            return String::new();
        };
        let s = &doc.structure;
        let words: Vec<String> = sel.split_whitespace().map(str::to_ascii_lowercase).collect();
        let names = |w: &[&str]| words.iter().any(|x| w.contains(&x.as_str()));
        let blank = |v: &[crate::model::Name8]| v.iter().all(|c| c.as_str().trim().is_empty());
        if names(&["chain", "chainid"]) && blank(&s.chains) {
            return " (the files give no chain identifiers: segid, resid or resname may name the part)".into();
        }
        if names(&["segid", "segname"]) && blank(&s.segids) {
            return " (the files give no segment identifiers)".into();
        }
        if names(&["insertion", "icode"]) && s.icodes.is_none() {
            return " (the files give no insertion codes)".into();
        }
        String::new()
    }

    fn save_map(&mut self, field: crate::app::fields::FieldChoice, path: &Path) -> Result<(), String> {
        // The charges' potential in the model the view uses (Poisson-Boltzmann, eps = 4r, ...).
        let field = self.state.esp_source(field);
        let mut grid = if crate::app::pb::is_pb(field) {
            self.state.pb_grid_blocking().map_err(|e| format!("save map: {e}"))?
        } else {
            let key = self
                .state
                .document()
                .and_then(|d| d.field_key(field, self.state.field_settings()))
                .ok_or("save map: the field cannot be computed for this document")?;
            let job = self
                .state
                .field_job(&key)
                .ok_or("save map: the field cannot be computed at this frame")?;
            let engine = crate::app::blocking_engine().ok_or("save map: no field engine in this build")?;
            let mut grid = engine(&job)?;
            // Computed in hartree/e (potentials) or a.u.: written in the unit the view shows and the
            // header names.
            let unit = self.state.field_unit(field);
            if unit.scale != 1.0 {
                grid.values.iter_mut().for_each(|v| *v = unit.show(*v) as f32);
            }
            let model = self
                .state
                .potential_model(field, false)
                .map(|m| format!(", {m}"))
                .unwrap_or_default();
            grid.description = format!("{}{model} ({})", self.state.describe_field(field), unit.label);
            grid
        };
        grid.description.truncate(200);
        // The frame's atoms, as cubegen and `grid` write them (the nuclear charge in the second
        // column), so the map reopens with its molecule.
        let atoms: Vec<crate::io::cube::CubeAtom> = self
            .state
            .document()
            .map(|d| {
                d.structure
                    .elements
                    .iter()
                    .zip(&d.frame.positions_angstrom)
                    .map(|(e, p)| crate::io::cube::CubeAtom {
                        atomic_number: u32::from(e.number()),
                        charge_e: f64::from(e.number()),
                        position_bohr: p.map(|v| f64::from(v) * crate::model::units::BOHR_PER_ANGSTROM),
                    })
                    .collect()
            })
            .unwrap_or_default();
        let ext = path.extension().map(|e| e.to_string_lossy().to_ascii_lowercase());
        let written = if ext.as_deref() == Some("dx") {
            crate::io::dx::write(path, &grid)
        } else {
            crate::io::cube::write(path, &grid, &atoms)
        };
        written.map_err(|e| format!("{}: {e}", path.display()))
    }
}

/// Both lobes of a field representation as one mesh.
fn merge(
    a: Option<&crate::surface::MeshData>,
    b: Option<&crate::surface::MeshData>,
) -> Option<crate::surface::MeshData> {
    match (a, b) {
        (None, None) => None,
        (Some(m), None) | (None, Some(m)) => Some(m.clone()),
        (Some(a), Some(b)) => {
            let mut m = a.clone();
            let base = m.positions_angstrom.len() as u32;
            m.positions_angstrom.extend_from_slice(&b.positions_angstrom);
            m.normals.extend_from_slice(&b.normals);
            m.indices.extend(b.indices.iter().map(|i| i + base));
            if m.values.len() == a.positions_angstrom.len() && b.values.len() == b.positions_angstrom.len() {
                m.values.extend_from_slice(&b.values);
            } else {
                m.values.clear();
            }
            m.colors_rgba8.clear();
            Some(m)
        }
    }
}

/// Where a script file's relative paths are read from.
pub fn base_dir_of(path: &Path) -> PathBuf {
    path.parent().map(Path::to_path_buf).unwrap_or_default()
}
