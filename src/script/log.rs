//! The action log: every command `AppState::apply_pending` carries out (the panels' and the
//! scripts' alike) written as the command text that does the same, so that the log saved as a
//! `.ofc` script replays the session. Representations are named by their number in the list at
//! the time; camera moves are written as the absolute `view camera …` they end at (one line for a
//! run of moves); frame steps as the frame reached; starting a ligand free-energy map or an RDF
//! as the statement that sets every value of its form (`ils start …`, `rdf …`). Commands with no
//! effect on what is shown (dialogs, cancellations of nothing) are left out; failed ones too.

use crate::app::console::CommandObserver;
use crate::app::reps::spec::field_text;
use crate::app::reps::{FieldStyle, RepEdit, RepId, RepSpec, SpecKind};
use crate::app::rmsd::{Quantity, SelectionSpec};
use crate::app::session::CameraSpec;
use crate::app::slice::SliceNormal;
use crate::app::state::{AppState, Command};
use crate::app::values::FieldUnit;
use std::path::Path;

/// The log kept as command lines.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ActionLog {
    pub lines: Vec<String>,
    /// The line of the command being applied (from `before`), or what to read after it.
    pending: Option<Pending>,
}

#[derive(Clone, Debug, PartialEq)]
enum Pending {
    Text(Vec<String>),
    /// Written from the state after the command.
    After(After),
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum After {
    Camera,
    Frame,
    Playing,
    /// The isovalue of the representation the Field panel edits.
    PanelIso,
    /// The isovalue of representation N (its number).
    RepIso(usize),
    /// The lobe colours of representation N.
    RepColors(usize),
    /// Measurements and labels a click made.
    Pick {
        measurements: usize,
    },
}

impl ActionLog {
    /// The log as a script.
    pub fn text(&self) -> String {
        let mut s = String::from("# orbitfield command log\n");
        for l in &self.lines {
            s.push_str(l);
            s.push('\n');
        }
        s
    }

    /// Writes the log as a script (atomically).
    pub fn save(&self, path: &Path) -> Result<(), String> {
        crate::io::write_atomically(path, self.text().as_bytes()).map_err(|e| format!("{}: {e}", path.display()))
    }

    fn push(&mut self, line: String) {
        // A run of camera moves is one line: where it ended.
        if line.starts_with("view camera ") && self.lines.last().is_some_and(|l| l.starts_with("view camera ")) {
            self.lines.pop();
        }
        // A colour dragged in a picker is one line: where it ended (`color N` with colours alone
        // sets the whole colouring, so the earlier line says nothing the later one does not).
        let solid = |l: &str| {
            let (n, words) = l.strip_prefix("color ")?.split_once(' ')?;
            words
                .split_whitespace()
                .all(|w| crate::model::color::parse_color(w).is_some())
                .then(|| (n.to_string(), words.split_whitespace().count()))
        };
        if let Some((n, count)) = solid(&line)
            && self
                .lines
                .last()
                .and_then(|l| solid(l))
                .is_some_and(|(m, c)| m == n && c <= count)
        {
            self.lines.pop();
        }
        // A range dragged in the field panel is one line: where it ended.
        if let Some((colouring, _)) = line.split_once(" range ")
            && line.starts_with("color ")
            && self
                .lines
                .last()
                .and_then(|l| l.split_once(" range "))
                .is_some_and(|(c, _)| c == colouring)
        {
            self.lines.pop();
        }
        self.lines.push(line);
    }
}

/// A word or path quoted when it holds blanks, quotes, `;` or `#`.
pub fn quote(text: &str) -> String {
    if text.is_empty() || text.contains(|c: char| c.is_whitespace() || matches!(c, ';' | '#' | '"' | '\'')) {
        if text.contains('"') {
            format!("'{text}'")
        } else {
            format!("\"{text}\"")
        }
    } else {
        text.to_string()
    }
}

fn path_text(p: &Path) -> String {
    quote(&p.display().to_string())
}

/// The number (from 1) of representation `id` in the list.
fn rep_number(state: &AppState, id: RepId) -> Option<usize> {
    state.reps().list.iter().position(|r| r.id == id).map(|i| i + 1)
}

fn rgb_hex(rgb: [f32; 3]) -> String {
    let c = rgb.map(|x| (x.clamp(0.0, 1.0) * 255.0).round() as u8);
    format!("#{:02x}{:02x}{:02x}", c[0], c[1], c[2])
}

/// `view camera X,Y,Z D QX,QY,QZ,QW FOV` for the camera now.
pub fn camera_line(state: &AppState) -> String {
    let c = CameraSpec::of(&state.view.camera);
    let t = c.target_angstrom;
    let q = c.rotation;
    format!(
        "view camera {},{},{} {} {},{},{},{} {}",
        t[0], t[1], t[2], c.distance_angstrom, q[0], q[1], q[2], q[3], c.fov_y_degree
    )
}

/// The `rep add`/`field add` line that makes `spec`.
pub fn spec_line(spec: &RepSpec) -> String {
    match &spec.kind {
        SpecKind::Atoms {
            selection,
            style,
            coloring,
            hbonds: _,
        } => format!("rep add {} {selection} color {}", style.keyword(), coloring.keyword()),
        SpecKind::Cartoon {
            selection,
            style,
            coloring,
            color_by,
            ..
        } => {
            let color = color_by.clone().unwrap_or_else(|| coloring.word().to_string());
            format!("rep add {} {selection} color {color}", style.word())
        }
        SpecKind::Field {
            field,
            style,
            iso,
            opacity,
            color_volume,
            color_by,
            color_atoms,
            ..
        } => {
            if let Some((sel, model)) = crate::app::reps::spec::surface_text(field) {
                let sel = if sel.is_empty() { "all" } else { sel };
                let style = match model {
                    crate::compute::molsurf::SurfaceModel::Excluded { .. } => "ses",
                    crate::compute::molsurf::SurfaceModel::Gaussian { .. } => "surface",
                };
                let mut s = format!("rep add {style} {sel}");
                if let Some(v) = color_volume {
                    s.push_str(&format!(" color volume:{}", v + 1));
                } else if let Some(c) = color_by {
                    s.push_str(&format!(" color {c}"));
                } else if let Some(c) = color_atoms {
                    s.push_str(&format!(" color {}", c.keyword()));
                }
                if *opacity < 1.0 {
                    s.push_str(&format!(" opacity {opacity}"));
                }
                return s;
            }
            let mut s = format!("field add {}", quote(field));
            if let (Some(v), true) = (iso.value, iso.relative) {
                s.push_str(&format!("; iso {v} relative"));
            }
            if matches!(style, FieldStyle::Slice(_)) {
                s.push_str("; slice");
            }
            s
        }
    }
}

/// The lines that rebuild what `state` shows from nothing: its files, representations, frame and
/// camera (what the log starts with when it begins on an open document).
pub fn state_lines(state: &AppState) -> Vec<String> {
    let Some(doc) = state.document() else {
        return Vec::new();
    };
    if doc.paths.is_empty() {
        return vec!["# the open document has no files (the demo); the log starts here".into()];
    }
    let mut out = vec![format!(
        "open {}",
        doc.paths.iter().map(|p| path_text(p)).collect::<Vec<_>>().join(" ")
    )];
    // Ligand free-energy maps first: the representations below may show them.
    out.extend(doc.ils_maps.iter().map(|m| ils_start_line(&m.form)));
    out.push("rep delete all".into());
    for (k, r) in state.reps().list.iter().enumerate() {
        out.push(spec_line(&state.rep_spec(r)));
        if !r.visible {
            out.push(format!("rep hide {}", k + 1));
        }
    }
    out.push(format!("frame {}", doc.frame_index));
    out.push(camera_line(state));
    out
}

impl ActionLog {
    /// The text of `c` applied to `state` (as it is before), or what to read after it.
    fn plan(state: &AppState, c: &Command) -> Option<Pending> {
        let text = |s: String| Some(Pending::Text(vec![s]));
        let after = |a: After| Some(Pending::After(a));
        let num = |id: RepId| rep_number(state, id);
        match c {
            Command::OpenFiles(paths) => text(format!(
                "open {}",
                paths.iter().map(|p| path_text(p)).collect::<Vec<_>>().join(" ")
            )),
            Command::OpenFilesWithQmRegion { paths, qm_region } => text(format!(
                "# opened with the QM region '{qm_region}': open {}",
                paths.iter().map(|p| path_text(p)).collect::<Vec<_>>().join(" ")
            )),
            Command::OpenSession(p) => text(format!("open session {}", path_text(p))),
            Command::SaveSession(p) => text(format!("save session {}", path_text(p))),
            Command::CloseDocument => text("close".into()),
            Command::SetFrame(_) | Command::StepFrame(_) => after(After::Frame),
            Command::SetPlaying(_) | Command::TogglePlaying => after(After::Playing),
            Command::SetPlaybackFps(f) => text(format!("play fps {f}")),
            Command::SetLoop(l) => text(format!("play loop {}", if *l { "on" } else { "off" })),
            Command::SelectOrbital(Some(i)) => {
                let f = crate::app::fields::FieldChoice::Orbital {
                    spin: state.doc.spin,
                    index: *i,
                };
                let text_f = field_text(f, state.document());
                // The representation it changes, named (the replay's selection may differ).
                match state.orbital_rep_id().and_then(num) {
                    Some(n) => text(format!("rep modify {n} field {text_f}")),
                    None => text(format!("field add {text_f}")),
                }
            }
            Command::SelectField(Some(f)) => {
                let text_f = quote(&field_text(*f, state.document()));
                match state.panel_field_id().and_then(num) {
                    Some(n) if !f.is_potential() => text(format!("rep modify {n} field {text_f}")),
                    _ => text(format!("field {text_f}")),
                }
            }
            Command::SetSurfaceColor(choice) => {
                let n = state.panel_field_id().and_then(num)?;
                match choice {
                    Some((f, range)) => text(color_line(state, n, *f, *range)),
                    None => text(format!("color {n} none")),
                }
            }
            Command::SetIsoValue(_) | Command::SetIsoMode(_) => after(After::PanelIso),
            Command::SetDarkBackground(d) => text(format!("set background {}", if *d { "dark" } else { "light" })),
            Command::SetBackgroundColor(c) => text(format!("set background #{:02x}{:02x}{:02x}", c[0], c[1], c[2])),
            Command::SetDepthCue(d) => text(format!("set depthcue {d}")),
            Command::ShowCell(on) => text(format!("set cell {}", if *on { "on" } else { "off" })),
            Command::MakeWhole(on) => text(format!("set whole {}", if *on { "on" } else { "off" })),
            Command::FitFrames(None) => text("fit off".into()),
            Command::FitFrames(Some(None)) => text("fit".into()),
            Command::FitFrames(Some(Some(sel))) => text(format!("fit {sel}")),
            Command::SetEnergiesInEv(e) => text(format!("set energies {}", if *e { "ev" } else { "hartree" })),
            Command::SetPotentialUnit(u) => text(format!(
                "set units {}",
                match u {
                    crate::app::values::PotentialDisplay::KtPerE => "kT/e",
                    crate::app::values::PotentialDisplay::KcalPerMolPerE => "kcal/mol/e",
                    crate::app::values::PotentialDisplay::Volt => "V",
                    crate::app::values::PotentialDisplay::HartreePerE => "a.u.",
                }
            )),
            Command::SetColormap(c) => text(format!("set colormap {}", c.name())),
            Command::SetEspModel(m) => text(format!("set model {}", m.word())),
            Command::SetRampAbove(on) => text(format!("set rampabove {}", if *on { "on" } else { "off" })),
            Command::FollowOrbital(on) => text(format!("set follow {}", if *on { "on" } else { "off" })),
            Command::SetPbValue(which, v) => text(format!("set {} {v}", which.word())),
            Command::SetLatticePoints(n) => text(format!("set lattice {n}")),
            Command::SetShowSlice(true) => text("slice".into()),
            Command::SetShowSlice(false) => text("slice off".into()),
            Command::SetSlicePlane(p) => {
                let plane = match p.normal {
                    SliceNormal::X => format!("slice x {}", p.position),
                    SliceNormal::Y => format!("slice y {}", p.position),
                    SliceNormal::Z => format!("slice z {}", p.position),
                    SliceNormal::Free { .. } => "# an oblique slice plane (set in the Field panel)".into(),
                };
                let range = match (p.range, state.slice_unit()) {
                    (Some([lo, hi]), Some(u)) => format!("slice range {} {}", u.show(lo), u.show(hi)),
                    _ => "slice range auto".into(),
                };
                // Only what changed: the plane, the range, or both.
                let before = state.slice_plane();
                let mut lines = Vec::new();
                if before.normal != p.normal || before.position != p.position || !state.show_slice() {
                    lines.push(plane);
                }
                if before.range != p.range {
                    lines.push(range);
                }
                Some(Pending::Text(lines))
            }
            Command::ResetCamera
            | Command::Orbit(_)
            | Command::Pan(_)
            | Command::Zoom(_)
            | Command::FitToSelection(_)
            | Command::SetCamera(_) => after(After::Camera),
            Command::Pick { .. } | Command::PickAtom(_) => after(After::Pick {
                measurements: state.tools.measure.list.len(),
            }),
            Command::AddRep(spec) => text(spec_line(spec)),
            Command::AddFieldRep(f) => text(format!("field add {}", quote(&field_text(*f, state.document())))),
            Command::AddOrbitalRep(i) => {
                let f = crate::app::fields::FieldChoice::Orbital {
                    spin: state.doc.spin,
                    index: *i,
                };
                text(format!("field add {}", field_text(f, state.document())))
            }
            Command::DuplicateRep(id) => text(format!("rep duplicate {}", num(*id)?)),
            Command::DeleteRep(id) => text(format!("rep delete {}", num(*id)?)),
            Command::MoveRep(id, to) => text(format!("rep move {} {}", num(*id)?, to + 1)),
            Command::SelectRep(id) => text(format!("rep select {}", num(*id)?)),
            Command::ResetReps => text("rep reset".into()),
            Command::EditRep(id, edit) => {
                let n = num(*id)?;
                match edit {
                    RepEdit::Visible(v) => text(format!("rep {} {n}", if *v { "show" } else { "hide" })),
                    RepEdit::Selection(s) => text(format!("rep modify {n} selection {s}")),
                    RepEdit::AtomStyle(s) => text(format!("rep modify {n} style {}", s.keyword())),
                    RepEdit::AtomColoring(c) => text(format!("color {n} {}", c.keyword())),
                    RepEdit::HBondCriteria(c) => text(format!(
                        "rep modify {n} hbonds {} {} {}",
                        c.distance_angstrom, c.angle_degrees, c.heavy_distance_angstrom
                    )),
                    RepEdit::Field(f) => text(format!("rep modify {n} field {}", field_text(*f, state.document()))),
                    RepEdit::SurfaceModel(m) => text(format!("rep modify {n} surface {}", m.keyword())),
                    RepEdit::FieldStyle(FieldStyle::Isosurface) => text(format!("rep modify {n} style isosurface")),
                    RepEdit::FieldStyle(FieldStyle::Slice(_)) => text(format!("rep modify {n} style slice")),
                    RepEdit::IsoValue(_) | RepEdit::IsoRelative(_) => after(After::RepIso(n)),
                    RepEdit::Color { .. } => after(After::RepColors(n)),
                    RepEdit::Opacity(o) => text(format!("rep modify {n} opacity {o}")),
                    RepEdit::CartoonStyle(s) => text(format!("rep modify {n} style {}", s.word())),
                    RepEdit::CartoonColoring(c) => text(format!("color {n} {}", c.word())),
                    RepEdit::ColorBy(None) => text(format!("color {n} none")),
                    RepEdit::ColorBy(Some((f, range))) => text(color_line(state, n, *f, *range)),
                }
            }
            Command::AddMeasurement(atoms) => measure_line(atoms).map(|l| Pending::Text(vec![l])),
            Command::AddRmsdMeasurement {
                selection,
                reference,
                fit,
            } => Some(Pending::Text(vec![rmsd_line(selection, *reference, *fit)])),
            Command::AddSelectionMeasurement { kind, selection } => {
                Some(Pending::Text(vec![selection_measure_line(*kind, selection)]))
            }
            Command::DeleteMeasurement(id) => {
                let k = state.tools.measure.list.iter().position(|m| m.id == *id)?;
                text(format!("measure delete {}", k + 1))
            }
            Command::ClearMeasurements => text("measure clear".into()),
            Command::ToggleLabel(_) => after(After::Pick {
                measurements: state.tools.measure.list.len(),
            }),
            Command::LabelSelection(s) => text(format!("label {s}")),
            Command::ClearLabels => text("label off".into()),
            Command::SetLabelFormat(f) => text(format!("label format {}", f.word())),
            Command::Undo => text("undo".into()),
            Command::Redo => text("redo".into()),
            Command::ExportImage(r) => {
                let mut s = format!(
                    "save image {} size {}x{} supersample {}",
                    path_text(&r.path),
                    r.size_px[0],
                    r.size_px[1],
                    r.supersample
                );
                if r.transparent {
                    s.push_str(" transparent");
                }
                if r.legend {
                    s.push_str(" legend");
                }
                if r.annotations {
                    s.push_str(" labels");
                }
                text(s)
            }
            Command::StartMovie(r) => {
                let (a, b) = (r.frames.first()?, r.frames.last()?);
                let step = match r.frames.as_slice() {
                    [x, y, ..] if y > x && y - x > 1 => format!(":{}", y - x),
                    _ => String::new(),
                };
                let mut s = format!(
                    "save movie {} frames {a}:{}{step} fps {} size {}x{}",
                    path_text(&r.path),
                    b + 1,
                    r.fps,
                    r.size_px[0],
                    r.size_px[1]
                );
                if r.legend {
                    s.push_str(" legend");
                }
                if r.annotations {
                    s.push_str(" labels");
                }
                text(s)
            }
            Command::Screenshot(p) => text(format!("# screenshot {}", path_text(p))),
            Command::StartIls => text(ils_start_line(&state.panels.ils.form)),
            // Pausing, continuing and stopping change only a running map.
            Command::PauseIls(true) if state.panels.ils.is_running() => text("ils pause".into()),
            Command::PauseIls(false) if state.panels.ils.is_running() => text("ils continue".into()),
            Command::CancelIls if state.panels.ils.is_running() => text("ils cancel".into()),
            Command::IlsPath(map, to_end) => text(ils_path_line(*map, state.view.pick.as_ref()?.atom, *to_end)),
            Command::IlsPathFromAtom(map, atom, to_end) => text(ils_path_line(*map, *atom, *to_end)),
            Command::IlsMarkPathEnd(map) => text(format!(
                "ils path end {} {}",
                map + 1,
                state.view.pick.as_ref()?.atom + 1
            )),
            Command::IlsMarkPathEndAtAtom(map, atom) => text(format!("ils path end {} {}", map + 1, atom + 1)),
            Command::IlsClearPaths(map) => text(format!("ils path clear {}", map + 1)),
            Command::StartRdf => text(rdf_line(&state.panels.rdf)),
            Command::CancelRdf if state.panels.rdf.is_running() => text("rdf cancel".into()),
            // Cancelling a solve of new parameters goes back to the last solved ones.
            Command::CancelJobs => {
                let back = state.pb.cancel_returns_to()?;
                Some(Pending::Text(crate::app::pb::set_lines_back_to(&state.pb, &back)))
            }
            _ => None,
        }
    }

    fn read_after(&self, state: &AppState, a: After) -> Vec<String> {
        match a {
            After::Camera => vec![camera_line(state)],
            After::Frame => state
                .document()
                .map(|d| vec![format!("frame {}", d.frame_index)])
                .unwrap_or_default(),
            After::Playing => vec![format!(
                "play {}",
                if state.view.timeline.playing { "on" } else { "off" }
            )],
            After::PanelIso => {
                let Some(id) = state.panel_field_id() else {
                    return Vec::new();
                };
                let Some(n) = rep_number(state, id) else {
                    return Vec::new();
                };
                iso_lines(state, id, n)
            }
            After::RepIso(n) => state
                .reps()
                .list
                .get(n - 1)
                .map(|r| iso_lines(state, r.id, n))
                .unwrap_or_default(),
            After::RepColors(n) => {
                if state
                    .reps()
                    .list
                    .get(n - 1)
                    .and_then(|r| state.reps().field(r.id))
                    .is_none()
                {
                    return Vec::new();
                }
                let spec = state.rep_spec(&state.reps().list[n - 1]);
                let colors = match spec.kind {
                    SpecKind::Field { colors: Some(c), .. } => c,
                    _ => return Vec::new(),
                };
                vec![format!("color {n} {} {}", rgb_hex(colors[0]), rgb_hex(colors[1]))]
            }
            After::Pick { measurements } => {
                let mut out = Vec::new();
                for m in state.tools.measure.list.iter().skip(measurements) {
                    match m.spec.as_deref() {
                        Some(SelectionSpec {
                            selection,
                            quantity:
                                Quantity::Rmsd {
                                    reference_frame, fit, ..
                                },
                        }) => out.push(rmsd_line(selection, *reference_frame, *fit)),
                        Some(spec) => out.push(selection_measure_line(spec.kind(), &spec.selection)),
                        None => out.extend(measure_line(&m.atoms)),
                    }
                }
                out
            }
        }
    }
}

/// The isovalue of representation `id` (number `n`) as `rep modify N iso V`, in the unit shown.
fn iso_lines(state: &AppState, id: RepId, n: usize) -> Vec<String> {
    let Some(f) = state.reps().field(id) else {
        return Vec::new();
    };
    let spec = state.rep_spec(&state.reps().list[n - 1]);
    let SpecKind::Field { iso, .. } = spec.kind else {
        return Vec::new();
    };
    let Some(v) = iso.value else {
        return Vec::new();
    };
    if iso.relative {
        return vec![format!("rep select {n}"), format!("iso {v} relative")];
    }
    let scale = FieldUnit::of(f.field, state.settings.potential_unit).scale;
    if scale == 1.0 {
        return vec![format!("rep modify {n} iso {v}")];
    }
    vec![format!("rep modify {n} iso {}", f64::from(v) * scale)]
}

/// `color N SOURCE [range LOW HIGH]`: a colouring by a field, with its range in the legend's unit
/// (as `color` reads it) when one was set.
fn color_line(state: &AppState, n: usize, f: crate::app::fields::FieldChoice, range: Option<[f32; 2]>) -> String {
    let mut line = format!("color {n} {}", field_text(f, state.document()));
    if let Some([lo, hi]) = range {
        let unit = state.coloring_unit(state.esp_source(f));
        line.push_str(&format!(
            " range {} {}",
            short_number(unit.show(lo)),
            short_number(unit.show(hi))
        ));
    }
    line
}

/// `v` to six significant digits, without trailing zeros (a range kept in f32 reads -2, not
/// -1.9999999523).
fn short_number(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{}", if v.is_finite() { 0.0 } else { v });
    }
    let decimals = (5 - v.abs().log10().floor() as i32).clamp(0, 15) as usize;
    let text = format!("{v:.decimals$}");
    let text = if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    };
    if text == "-0" { "0".into() } else { text }
}

/// A selection as the value of an `ils start` option: quoted when it has blanks or is an option's
/// word.
fn option_value(text: &str) -> String {
    let is_option = super::verbs_tools::ILS.forms[0]
        .opts
        .iter()
        .any(|o| o.name.eq_ignore_ascii_case(text.trim()));
    if is_option && !text.contains('"') {
        format!("\"{text}\"")
    } else {
        quote(text)
    }
}

/// The `ils start` line that sets every value of `form` and starts the map.
pub fn ils_start_line(form: &crate::app::ils::IlsForm) -> String {
    let none_if_empty = |s: &str, v: String| if s.trim().is_empty() { "none".to_string() } else { v };
    format!(
        "ils start probe {} sel {} around {} frames {} spacing {} subres {} orient {} align {} params {} elements {}",
        form.probe.name(),
        option_value(&form.selection),
        option_value(&form.around),
        quote(&form.frames),
        form.spacing_angstrom,
        form.subres,
        form.orientations,
        none_if_empty(&form.align, option_value(&form.align)),
        none_if_empty(&form.params_file, quote(&form.params_file)),
        if form.element_table { "on" } else { "off" }
    )
}

/// `ils path MAP ATOM [to end]` (map and atom numbered from 1).
fn ils_path_line(map: u16, atom: usize, to_end: bool) -> String {
    let to = if to_end { " to end" } else { "" };
    format!("ils path {} {}{to}", map + 1, atom + 1)
}

/// The `rdf` line that sets every value of the RDF panel and starts it.
pub fn rdf_line(panel: &crate::app::rdf::RdfPanel) -> String {
    format!(
        "rdf {} with {} rmax {} bins {}",
        panel.sel1_text.trim(),
        panel.sel2_text.trim(),
        panel.r_max_angstrom,
        panel.bins
    )
}

/// `measure rmsd SEL reference N [fit] keep`: the command that adds an RMSD measurement.
pub fn rmsd_line(selection: &str, reference: usize, fit: bool) -> String {
    format!(
        "measure rmsd {selection} reference {reference}{} keep",
        if fit { " fit" } else { "" }
    )
}

/// `measure rgyr SEL keep` or `measure sasa SEL keep`: the command that adds a radius-of-gyration
/// or SASA measurement.
pub fn selection_measure_line(kind: crate::app::measure::MeasureKind, selection: &str) -> String {
    format!("measure {} {selection} keep", kind.name())
}

fn measure_line(atoms: &[usize]) -> Option<String> {
    let kind = match atoms.len() {
        2 => "distance",
        3 => "angle",
        4 => "dihedral",
        _ => return None,
    };
    let list: Vec<String> = atoms.iter().map(|a| (a + 1).to_string()).collect();
    Some(format!("measure {kind} {}", list.join(" ")))
}

impl CommandObserver for ActionLog {
    fn before(&mut self, state: &AppState, command: &Command) {
        if self.lines.is_empty() && !matches!(command, Command::OpenFiles(_) | Command::OpenSession(_)) {
            // The log starts on an open document: first what rebuilds it.
            self.lines.extend(state_lines(state));
        }
        self.pending = ActionLog::plan(state, command);
    }

    fn after(&mut self, state: &AppState, _command: &Command, failed: bool) {
        let Some(pending) = self.pending.take() else {
            return;
        };
        if failed {
            return;
        }
        let lines = match pending {
            Pending::Text(lines) => lines,
            Pending::After(a) => self.read_after(state, a),
        };
        for l in lines {
            self.push(l);
        }
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}

/// The action log of `state`, when one is kept.
pub fn of(state: &AppState) -> Option<&ActionLog> {
    state.observer.as_ref()?.as_any().downcast_ref::<ActionLog>()
}
