//! Turning a parsed statement into what it does ([`Plan`]), checked against the state but without
//! changing it: representation and atom numbers, selections, fields, frames. Most statements become
//! `app::state::Command`s (as the window's controls push); `script::exec` does the rest.

use super::verbs::{Parsed, Problem, parse_color};
use crate::app::atoms::AtomColoring;
use crate::app::export::{ImageRequest, MovieRequest};
use crate::app::fields::FieldChoice;
use crate::app::reps::spec::{cartoon_color_field, parse_field};
use crate::app::reps::{FieldStyle, Iso, RepEdit, RepId, RepKind, RepSpec, SpecKind};
use crate::app::session::CameraSpec;
use crate::app::slice::SlicePlane;
use crate::app::state::{AppState, Command, IsoMode};
use crate::app::values::FieldUnit;
use crate::model::select::Selection;
use std::path::PathBuf;

/// What a statement does.
#[derive(Debug)]
pub enum Plan {
    Commands(Vec<Command>),
    Report(String),
    Run(PathBuf),
    SaveImage(ImageRequest),
    SaveMovie(MovieRequest),
    SaveMap(FieldChoice, PathBuf),
    SaveMesh(RepId, PathBuf),
    /// `save rdf FILE`: the g(r) of the last `rdf`.
    SaveRdf(PathBuf),
    SaveCoordinates {
        path: PathBuf,
        selection: String,
        frames: String,
    },
    Select(String),
    Rmsd {
        selection: String,
        reference: usize,
        /// After the best rigid superposition of the selection (Kabsch), not as the frames stand.
        fit: bool,
        /// Also list it in the Measurements panel.
        keep: bool,
    },
    /// Report a selection's radius of gyration or SASA (`kind`; `keep`: also list it).
    OfSelection {
        kind: crate::app::measure::MeasureKind,
        selection: String,
        keep: bool,
    },
}

pub(super) fn problem(column: usize, message: impl Into<String>) -> Problem {
    Problem {
        column,
        message: message.into(),
    }
}

/// The statement's plan, or the first problem with it.
pub fn plan(p: &Parsed, state: &AppState) -> Result<Plan, Problem> {
    let cmds = |v: Vec<Command>| Ok(Plan::Commands(v));
    match p.verb.name {
        "open" => match p.get("files") {
            Some(super::verbs::Value::Paths(paths)) => cmds(vec![Command::OpenFiles(paths.clone())]),
            _ => cmds(vec![Command::OpenSession(path(p, "file"))]),
        },
        "close" => cmds(vec![Command::CloseDocument]),
        "fetch" => {
            let id = p.text("id").unwrap_or("").trim();
            crate::io::fetch::parse_pdb_id(id).map_err(|e| problem(p.column_of("id"), e.to_string()))?;
            cmds(vec![Command::FetchPdb(id.to_string())])
        }
        "rep" => rep(p, state),
        "color" => {
            let (id, kind) = rep_at(p, state, "rep")?;
            cmds(super::plan_color::color_edits(
                p,
                state,
                id,
                kind,
                p.text("scheme").unwrap_or(""),
                p.column_of("scheme"),
            )?)
        }
        "field" => field(p, state),
        "iso" => {
            let rep = state
                .panel_field_id()
                .and_then(|id| state.reps().field(id))
                .ok_or_else(|| problem(p.column, "there is no field representation to set the isovalue of"))?;
            let relative = p.flag("relative");
            let v = p.number("value").unwrap_or(0.0);
            let value = if relative {
                v as f32
            } else {
                FieldUnit::of(rep.field, state.settings.potential_unit).computed(v)
            };
            if !(value.is_finite() && value != 0.0) {
                return Err(problem(
                    p.column_of("value"),
                    format!("iso: {v} is not a usable isovalue"),
                ));
            }
            // A free energy's surfaces are at negative values; a field of both signs is drawn at
            // +iso and -iso, so "-0.03" means the same pair; a field of one sign has no surface
            // below zero (the edit would be dropped without a word).
            let value = if value > 0.0 || matches!(rep.field, FieldChoice::Ils(_)) {
                value
            } else if rep.field.is_signed() {
                value.abs()
            } else {
                return Err(problem(
                    p.column_of("value"),
                    format!(
                        "iso {v}: the {} is never negative; give a value above 0",
                        state.describe_field(rep.field)
                    ),
                ));
            };
            let mode = if relative {
                IsoMode::RelativeToMax
            } else {
                IsoMode::Absolute
            };
            cmds(vec![Command::SetIsoMode(mode), Command::SetIsoValue(value)])
        }
        "slice" => super::plan_slice::slice(p, state).map(Plan::Commands),
        "frame" => {
            let n = document(p, state)?.n_frames;
            match p.sub() {
                "next" => cmds(vec![Command::StepFrame(1)]),
                "previous" => cmds(vec![Command::StepFrame(-1)]),
                "first" => cmds(vec![Command::SetFrame(0)]),
                "last" => cmds(vec![Command::SetFrame(n.saturating_sub(1))]),
                _ => {
                    let i = p.int("index").unwrap_or(0) as usize;
                    if i >= n {
                        return Err(problem(
                            p.column_of("index"),
                            match n {
                                0 => format!("frame {i}: the document has no frames"),
                                1 => format!("frame {i}: the document has one frame (frame 0)"),
                                _ => format!("frame {i}: the document has {n} frames (0 to {})", n - 1),
                            },
                        ));
                    }
                    cmds(vec![Command::SetFrame(i)])
                }
            }
        }
        "play" => {
            let mut v = Vec::new();
            if let Some(f) = p.number("fps") {
                if !(0.5..=120.0).contains(&f) {
                    return Err(problem(p.column_of("fps"), format!("fps {f}: from 0.5 to 120")));
                }
                v.push(Command::SetPlaybackFps(f as f32));
            }
            if let Some(l) = p.text("loop") {
                v.push(Command::SetLoop(l == "on"));
            }
            match p.text("state") {
                Some(s) => v.push(Command::SetPlaying(s == "on")),
                None if v.is_empty() => v.push(Command::SetPlaying(true)),
                None => {}
            }
            cmds(v)
        }
        "measure" => super::plan_measure::measure(p, state),
        "ils" => super::plan_tools::ils(p, state).map(Plan::Commands),
        "rdf" => super::plan_tools::rdf(p, state).map(Plan::Commands),
        "label" => match p.sub() {
            "off" => cmds(vec![Command::ClearLabels]),
            "format" => {
                use crate::app::labels::LabelFormat;
                let word = p.text("format").unwrap_or("full");
                let f = LabelFormat::ALL
                    .into_iter()
                    .find(|f| f.word() == word)
                    .unwrap_or(LabelFormat::Full);
                cmds(vec![Command::SetLabelFormat(f)])
            }
            _ => {
                let sel = selection(p, state, "selection")?;
                cmds(vec![Command::LabelSelection(sel)])
            }
        },
        "fit" => match p.sub() {
            "off" => cmds(vec![Command::FitFrames(None)]),
            _ if p.text("selection").is_none() => cmds(vec![Command::FitFrames(Some(None))]),
            _ => cmds(vec![Command::FitFrames(Some(Some(selection(p, state, "selection")?)))]),
        },
        "select" => Ok(Plan::Select(selection(p, state, "selection")?)),
        "view" => view(p, state),
        "turn" => {
            let a = (p.number("degrees").unwrap_or(0.0) as f32).to_radians();
            let d = if p.text("axis") == Some("x") {
                [0.0, a]
            } else {
                [a, 0.0]
            };
            cmds(vec![Command::Orbit(d)])
        }
        "zoom" => {
            let f = p.number("factor").unwrap_or(1.0);
            if f <= 0.0 {
                return Err(problem(
                    p.column_of("factor"),
                    format!("zoom {f}: the factor must be above 0"),
                ));
            }
            cmds(vec![Command::Zoom((1.0 / f) as f32)])
        }
        "center" => {
            let doc = document(p, state)?;
            let sel = selection(p, state, "selection")?;
            let parsed = Selection::parse(&sel).map_err(|e| problem(p.column_of("selection"), e.message))?;
            let picked = parsed.indices(&doc.structure, Some(&doc.frame));
            let points: Vec<[f32; 3]> = picked
                .iter()
                .filter_map(|&i| doc.frame.positions_angstrom.get(i as usize).copied())
                .filter(|q| q.iter().all(|x| x.is_finite()))
                .collect();
            if points.is_empty() {
                return Err(problem(
                    p.column_of("selection"),
                    format!("center: '{sel}' picks no atoms"),
                ));
            }
            let mut c = [0.0f32; 3];
            for q in &points {
                for k in 0..3 {
                    c[k] += q[k] / points.len() as f32;
                }
            }
            let mut spec = CameraSpec::of(&state.view.camera);
            spec.target_angstrom = c;
            cmds(vec![Command::SetCamera(spec)])
        }
        "save" => save(p, state),
        "run" => Ok(Plan::Run(path(p, "file"))),
        "set" => set(p),
        "help" => super::verbs::help_text(p.text("verb"))
            .map(Plan::Report)
            .map_err(|e| problem(p.column_of("verb"), e)),
        "undo" => cmds(vec![Command::Undo]),
        "redo" => cmds(vec![Command::Redo]),
        "quit" => cmds(vec![Command::Quit]),
        other => Err(problem(p.column, format!("'{other}' is not carried out in this build"))),
    }
}

fn path(p: &Parsed, name: &str) -> PathBuf {
    p.path(name).map(PathBuf::from).unwrap_or_default()
}

pub(super) fn document<'a>(p: &Parsed, state: &'a AppState) -> Result<&'a crate::app::document::Document, Problem> {
    state.document().ok_or_else(|| {
        problem(
            p.column,
            format!("{}: nothing is open; 'open' files first", p.verb.name),
        )
    })
}

/// The selection text of value `name` (default `all`), checked by the selection parser.
pub(super) fn selection(p: &Parsed, state: &AppState, name: &str) -> Result<String, Problem> {
    document(p, state)?;
    let text = p.text(name).unwrap_or("all").trim().to_string();
    Selection::parse(&text).map_err(|e| {
        problem(
            p.column_of(name) + e.column,
            format!("bad selection '{text}': {}", e.message),
        )
    })?;
    Ok(text)
}

/// The representation numbered by value `name` (from 1).
fn rep_at<'a>(p: &Parsed, state: &'a AppState, name: &str) -> Result<(RepId, &'a RepKind), Problem> {
    let n = p.int(name).unwrap_or(0) as usize;
    let list = &state.reps().list;
    match n.checked_sub(1).and_then(|i| list.get(i)) {
        Some(r) => Ok((r.id, &r.kind)),
        None => Err(problem(
            p.column_of(name),
            format!("no representation {n} (the list has {}, numbered from 1)", list.len()),
        )),
    }
}

pub(super) fn field_choice(text: &str, column: usize, state: &AppState) -> Result<FieldChoice, Problem> {
    let doc = state
        .document()
        .ok_or_else(|| problem(column, "nothing is open; 'open' files first"))?;
    let f = parse_field(text, doc).map_err(|e| problem(column, format!("field: {e}")))?;
    if !doc.has_field(f) && !matches!(f, FieldChoice::Ils(_) | FieldChoice::PotentialPb { .. }) {
        return Err(problem(
            column,
            format!("field '{text}': the open files do not provide it"),
        ));
    }
    Ok(f)
}

fn rep(p: &Parsed, state: &AppState) -> Result<Plan, Problem> {
    let one = |c: Command| Ok(Plan::Commands(vec![c]));
    match p.sub() {
        "add" => {
            document(p, state)?;
            let sel = selection(p, state, "selection")?;
            let style = p.text("style").unwrap_or("lines");
            let color = p.text("color");
            let color_col = p.column_of("color");
            let opacity = p.number("opacity").map(|o| o as f32);
            if let Some(o) = opacity
                && !(0.0..=1.0).contains(&o)
            {
                return Err(problem(p.column_of("opacity"), format!("opacity {o}: from 0 to 1")));
            }
            let spec = if let Some(s) = crate::app::atoms::AtomStyle::parse(style) {
                let coloring = match color {
                    None => AtomColoring::Element,
                    Some(c) => AtomColoring::parse(c).ok_or_else(|| {
                        problem(
                            color_col,
                            format!("color '{c}': atoms are coloured by element, residue, chain, charge, beta or a colour (a name, #rrggbb or r,g,b)"),
                        )
                    })?,
                };
                RepSpec {
                    visible: true,
                    kind: SpecKind::Atoms {
                        selection: sel,
                        style: s,
                        coloring,
                        hbonds: Default::default(),
                    },
                }
            } else if let Some(s) = crate::surface::cartoon::Style::parse(style) {
                let mut spec = RepSpec::cartoon(&sel, s);
                if let (Some(c), SpecKind::Cartoon { coloring, color_by, .. }) = (color, &mut spec.kind) {
                    if let Some(k) = crate::analysis::polymer::Coloring::parse(c) {
                        *coloring = k;
                    } else if cartoon_color_field(c).is_some() {
                        *color_by = Some(c.to_ascii_lowercase());
                    } else {
                        return Err(problem(
                            color_col,
                            format!(
                                "color '{c}': cartoons are coloured by ss, chain, residue, index (rainbow), beta, esp, volume:N or a colour"
                            ),
                        ));
                    }
                }
                spec
            } else {
                let head = if style.eq_ignore_ascii_case("ses") {
                    "ses"
                } else {
                    "molsurf"
                };
                let field = if sel == "all" {
                    head.to_string()
                } else {
                    format!("{head}:{sel}")
                };
                let mut spec = RepSpec::field(&field, FieldStyle::Isosurface);
                if let SpecKind::Field {
                    color_by,
                    color_volume,
                    color_atoms,
                    opacity: o,
                    ..
                } = &mut spec.kind
                {
                    if let Some(o2) = opacity {
                        *o = o2;
                    }
                    match color.map(str::to_ascii_lowercase).as_deref() {
                        None | Some("none") => {}
                        Some(c) if c == "volume" || c.starts_with("volume:") => match cartoon_color_field(c) {
                            Some(FieldChoice::Volume(n)) => *color_volume = Some(n),
                            _ => {
                                return Err(problem(
                                    color_col,
                                    format!("color '{c}': expected volume:N with N from 1"),
                                ));
                            }
                        },
                        Some(c @ ("esp" | "potential" | "pb")) => {
                            // `esp` is a wavefunction's own potential where there is one (as in
                            // `color N esp`), else the charges'; what the files lack is said here.
                            if let Some(doc) = state.document() {
                                crate::app::reps::spec::parse_field(c, doc)
                                    .map_err(|e| problem(color_col, format!("color {e}")))?;
                            }
                            *color_by = Some(c.into());
                        }
                        // By its atoms (each vertex as the atom nearest it), or in one colour.
                        Some(c) if AtomColoring::parse(c).is_some() => *color_atoms = AtomColoring::parse(c),
                        Some(c) => {
                            return Err(problem(
                                color_col,
                                format!(
                                    "color '{c}': surfaces are coloured by esp, potential, pb, volume:N, by their atoms' element, residue, chain, charge or beta, in a colour, or none"
                                ),
                            ));
                        }
                    }
                }
                spec
            };
            one(Command::AddRep(spec))
        }
        "modify" => {
            let (id, kind) = rep_at(p, state, "rep")?;
            let value = p.text("value").unwrap_or("").trim();
            let col = p.column_of("value");
            let prop = p.text("property").unwrap_or("");
            let edit = match (prop, kind) {
                ("color", kind) => {
                    return Ok(Plan::Commands(super::plan_color::color_edits(
                        p, state, id, kind, value, col,
                    )?));
                }
                ("style", RepKind::Atoms(_)) => {
                    RepEdit::AtomStyle(crate::app::atoms::AtomStyle::parse(value).ok_or_else(|| {
                        problem(
                            col,
                            format!("style '{value}': lines, licorice, ball-and-stick, vdw, cpk or hbonds"),
                        )
                    })?)
                }
                ("style", RepKind::Cartoon(_)) => RepEdit::CartoonStyle(
                    crate::surface::cartoon::Style::parse(value)
                        .ok_or_else(|| problem(col, format!("style '{value}': cartoon, tube or trace")))?,
                ),
                ("style", RepKind::Field(_)) => match value.to_ascii_lowercase().as_str() {
                    "isosurface" | "surface" => RepEdit::FieldStyle(FieldStyle::Isosurface),
                    "slice" => RepEdit::FieldStyle(FieldStyle::Slice(SlicePlane::default())),
                    _ => return Err(problem(col, format!("style '{value}': isosurface or slice"))),
                },
                // A molecular surface's kind: Gaussian or solvent-excluded.
                ("surface", RepKind::Field(f)) if matches!(f.field, FieldChoice::MolSurf { .. }) => {
                    RepEdit::SurfaceModel(
                        crate::compute::molsurf::SurfaceModel::from_keyword(value).map_err(|e| problem(col, e))?,
                    )
                }
                ("surface", _) => {
                    return Err(problem(
                        p.column_of("property"),
                        "surface: only a molecular surface is Gaussian or solvent-excluded".to_string(),
                    ));
                }
                // A molecular surface's atoms; `field molsurf:SEL` says the same of any field.
                ("selection", RepKind::Field(f)) if matches!(f.field, FieldChoice::MolSurf { .. }) => {
                    Selection::parse(value)
                        .map_err(|e| problem(col + e.column, format!("bad selection '{value}': {}", e.message)))?;
                    RepEdit::Selection(value.to_string())
                }
                ("field", RepKind::Field(_)) if crate::app::reps::spec::surface_text(value).is_some() => {
                    let (sel, model) =
                        crate::app::reps::spec::surface_text(value).unwrap_or(("all", Default::default()));
                    Selection::parse(sel).map_err(|e| problem(col, format!("bad selection '{sel}': {}", e.message)))?;
                    return Ok(Plan::Commands(vec![
                        Command::EditRep(id, RepEdit::Selection(sel.to_string())),
                        Command::EditRep(id, RepEdit::SurfaceModel(model)),
                    ]));
                }
                ("selection", RepKind::Atoms(_) | RepKind::Cartoon(_)) => {
                    Selection::parse(value)
                        .map_err(|e| problem(col + e.column, format!("bad selection '{value}': {}", e.message)))?;
                    RepEdit::Selection(value.to_string())
                }
                ("opacity", RepKind::Field(_)) => {
                    let o: f32 = value.parse().ok().filter(|o| (0.0..=1.0).contains(o)).ok_or_else(|| {
                        problem(col, format!("opacity: expected a number from 0 to 1, found '{value}'"))
                    })?;
                    RepEdit::Opacity(o)
                }
                ("iso", RepKind::Field(f)) => {
                    let v: f64 = value
                        .parse()
                        .ok()
                        .filter(|v: &f64| v.is_finite() && *v != 0.0)
                        .ok_or_else(|| problem(col, format!("iso: expected a number other than 0, found '{value}'")))?;
                    let mut v2 = vec![Command::EditRep(id, RepEdit::IsoRelative(false))];
                    v2.push(Command::EditRep(
                        id,
                        RepEdit::IsoValue(FieldUnit::of(f.field, state.settings.potential_unit).computed(v)),
                    ));
                    return Ok(Plan::Commands(v2));
                }
                ("field", RepKind::Field(_)) => RepEdit::Field(field_choice(value, col, state)?),
                ("hbonds", RepKind::Atoms(a)) => RepEdit::HBondCriteria(hbond_criteria(value, a.hbonds, col)?),
                (prop, _) => {
                    return Err(problem(
                        p.column_of("property"),
                        format!(
                            "representation {} has no property '{prop}' (atoms: style, color, selection, hbonds; cartoons: \
                         style, color, selection; fields: field, style, iso, opacity, color, and selection for a \
                         molecular surface)",
                            p.int("rep").unwrap_or(0)
                        ),
                    ));
                }
            };
            one(Command::EditRep(id, edit))
        }
        "delete" => {
            let text = p.text("rep").unwrap_or("").trim();
            if text.eq_ignore_ascii_case("all") {
                return Ok(Plan::Commands(
                    state.reps().list.iter().map(|r| Command::DeleteRep(r.id)).collect(),
                ));
            }
            let n: usize = text.parse().map_err(|_| {
                problem(
                    p.column_of("rep"),
                    format!("rep: expected a number or all, found '{text}'"),
                )
            })?;
            let list = &state.reps().list;
            match n.checked_sub(1).and_then(|i| list.get(i)) {
                Some(r) => one(Command::DeleteRep(r.id)),
                None => Err(problem(
                    p.column_of("rep"),
                    format!("no representation {n} (the list has {}, numbered from 1)", list.len()),
                )),
            }
        }
        "list" => Ok(Plan::Report(state.rep_list_text())),
        "show" | "hide" => {
            let (id, _) = rep_at(p, state, "rep")?;
            one(Command::EditRep(id, RepEdit::Visible(p.sub() == "show")))
        }
        "select" => one(Command::SelectRep(rep_at(p, state, "rep")?.0)),
        "duplicate" => one(Command::DuplicateRep(rep_at(p, state, "rep")?.0)),
        "move" => {
            let (id, _) = rep_at(p, state, "rep")?;
            let to = p.int("to").unwrap_or(0) as usize;
            if to == 0 || to > state.reps().list.len() {
                return Err(problem(
                    p.column_of("to"),
                    format!("move to {to}: from 1 to {}", state.reps().list.len()),
                ));
            }
            one(Command::MoveRep(id, to - 1))
        }
        _ => {
            document(p, state)?;
            one(Command::ResetReps)
        }
    }
}

/// The edits that colour representation `id` by `scheme`.
fn field(p: &Parsed, state: &AppState) -> Result<Plan, Problem> {
    document(p, state)?;
    let text = p.text("field").unwrap_or("").trim();
    let col = p.column_of("field");
    if p.sub() == "add" {
        let mut spec = RepSpec::field(text, FieldStyle::Isosurface);
        if crate::app::reps::spec::surface_selection_text(text).is_none() {
            let f = field_choice(text, col, state)?;
            if let (Some(v), SpecKind::Field { iso, .. }) = (p.number("iso"), &mut spec.kind) {
                *iso = Iso {
                    value: Some(FieldUnit::of(f, state.settings.potential_unit).computed(v)),
                    relative: false,
                };
            }
        } else if let Some(sel) = crate::app::reps::spec::surface_selection_text(text).filter(|s| !s.is_empty()) {
            Selection::parse(sel).map_err(|e| problem(col, format!("bad selection '{sel}': {}", e.message)))?;
        }
        return Ok(Plan::Commands(vec![Command::AddRep(spec)]));
    }
    let f = field_choice(text, col, state)?;
    Ok(Plan::Commands(vec![Command::SelectField(Some(f))]))
}

fn view(p: &Parsed, state: &AppState) -> Result<Plan, Problem> {
    if p.sub() == "camera" {
        let text = p.text("target").unwrap_or("");
        let col = p.column_of("target");
        let nums = |s: &str| -> Option<Vec<f32>> { s.split(',').map(|x| x.trim().parse::<f32>().ok()).collect() };
        let parts: Vec<&str> = text.split_whitespace().collect();
        let bad = || {
            problem(
                col,
                format!("view camera: expected X,Y,Z DISTANCE QX,QY,QZ,QW [FOV], found '{text}'"),
            )
        };
        let (Some(t), Some(d), Some(q)) = (
            parts.first().and_then(|s| nums(s)).filter(|v| v.len() == 3),
            parts.get(1).and_then(|s| s.parse::<f32>().ok()).filter(|d| *d > 0.0),
            parts.get(2).and_then(|s| nums(s)).filter(|v| v.len() == 4),
        ) else {
            return Err(bad());
        };
        let fov = match parts.get(3) {
            Some(f) => f.parse::<f32>().map_err(|_| bad())?,
            None => state.view.camera.fov_y_radians.to_degrees(),
        };
        if parts.len() > 4 {
            return Err(bad());
        }
        return Ok(Plan::Commands(vec![Command::SetCamera(CameraSpec {
            target_angstrom: [t[0], t[1], t[2]],
            distance_angstrom: d,
            rotation: [q[0], q[1], q[2], q[3]],
            fov_y_degree: fov,
        })]));
    }
    match p.text("selection") {
        None => Ok(Plan::Commands(vec![Command::ResetCamera])),
        Some(_) => {
            let sel = selection(p, state, "selection")?;
            Ok(Plan::Commands(vec![Command::FitToSelection(sel)]))
        }
    }
}

fn save(p: &Parsed, state: &AppState) -> Result<Plan, Problem> {
    let file = path(p, "file");
    if p.sub() != "session" && p.sub() != "map" {
        document(p, state)?;
    }
    match p.sub() {
        "image" => {
            let size_px = match p.get("size") {
                Some(super::verbs::Value::Size(s)) => *s,
                _ => state.view.size_px,
            };
            let supersample = p.int("supersample").unwrap_or(1) as u32;
            if ![1, 2, 4].contains(&supersample) {
                return Err(problem(
                    p.column_of("supersample"),
                    format!("supersample {supersample}: 1, 2 or 4"),
                ));
            }
            Ok(Plan::SaveImage(ImageRequest {
                path: file,
                size_px,
                supersample,
                transparent: p.flag("transparent"),
                legend: p.flag("legend"),
                annotations: p.flag("labels"),
            }))
        }
        "movie" => {
            let n = document(p, state)?.n_frames.max(1);
            let frames: Vec<usize> = match p.text("frames") {
                Some(text) => {
                    // A stop past the end is refused, not clamped: the movie would be shorter than asked.
                    let stop = text.split(':').nth(1).and_then(|b| b.trim().parse::<usize>().ok());
                    if let Some(b) = stop.filter(|b| *b > n) {
                        return Err(problem(
                            p.column_of("frames"),
                            format!("frames {text}: stops at {b}, and the document has {n} frames"),
                        ));
                    }
                    let frames = crate::model::FrameRange::parse(text)
                        .and_then(|r| r.indices(n))
                        .map_err(|e| problem(p.column_of("frames"), format!("frames {text}: {e}")))?;
                    if frames.is_empty() {
                        return Err(problem(p.column_of("frames"), format!("frames {text}: no frames")));
                    }
                    frames
                }
                None => (0..n).collect(),
            };
            let size_px = match p.get("size") {
                Some(super::verbs::Value::Size(s)) => *s,
                _ => state.view.size_px,
            };
            if let Some(why) = crate::io::write::movie::MovieFormat::refused(&file) {
                return Err(problem(p.column_of("file"), why));
            }
            let format = crate::io::write::movie::MovieFormat::from_path(&file);
            let size_px = if format == crate::io::write::movie::MovieFormat::Mp4 {
                size_px.map(|s| (s / 2 * 2).max(2))
            } else {
                size_px
            };
            Ok(Plan::SaveMovie(MovieRequest {
                path: file,
                format,
                frames,
                size_px,
                supersample: 1,
                fps: p.number("fps").unwrap_or(24.0) as f32,
                legend: p.flag("legend"),
                annotations: p.flag("labels"),
            }))
        }
        "session" => {
            document(p, state)?;
            Ok(Plan::Commands(vec![Command::SaveSession(file)]))
        }
        "map" => {
            let f = field_choice(p.text("field").unwrap_or(""), p.column_of("field"), state)?;
            let ext = file.extension().map(|e| e.to_string_lossy().to_ascii_lowercase());
            if !matches!(ext.as_deref(), Some("cube" | "dx")) {
                return Err(problem(
                    p.column_of("file"),
                    format!("{}: write a .cube or .dx file", file.display()),
                ));
            }
            Ok(Plan::SaveMap(f, file))
        }
        "rdf" => Ok(Plan::SaveRdf(file)),
        "mesh" => {
            let (id, kind) = rep_at(p, state, "rep")?;
            if !matches!(kind, RepKind::Field(_)) {
                return Err(problem(
                    p.column_of("rep"),
                    "save mesh: that representation has no surfaces",
                ));
            }
            Ok(Plan::SaveMesh(id, file))
        }
        _ => {
            if let Err(e) = crate::io::write::OutFormat::from_path(&file) {
                return Err(problem(p.column_of("file"), e.to_string()));
            }
            let selection = p.text("selection").unwrap_or("all").to_string();
            Selection::parse(&selection).map_err(|e| {
                problem(
                    p.column_of("selection"),
                    format!("bad selection '{selection}': {}", e.message),
                )
            })?;
            let frames = match p.get("frames") {
                Some(super::verbs::Value::Range(Some((a, b)))) => format!("{a}:{b}"),
                _ => "all".into(),
            };
            Ok(Plan::SaveCoordinates {
                path: file,
                selection,
                frames,
            })
        }
    }
}

fn set(p: &Parsed) -> Result<Plan, Problem> {
    let value = p.text("value").unwrap_or("").trim();
    let col = p.column_of("value");
    let on_off = |setting: &str| match value.to_ascii_lowercase().as_str() {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => Err(problem(col, format!("{setting} '{value}': on or off"))),
    };
    let c = match p.text("setting").unwrap_or("") {
        "units" => Command::SetPotentialUnit(
            crate::app::values::PotentialDisplay::parse(value)
                .ok_or_else(|| problem(col, format!("units '{value}': kT/e, kcal/mol/e, V or a.u.")))?,
        ),
        "model" => Command::SetEspModel(
            crate::app::esp_model::EspModel::parse(value).map_err(|e| problem(col, format!("model: {e}")))?,
        ),
        "cell" => Command::ShowCell(on_off("cell")?),
        "whole" => Command::MakeWhole(on_off("whole")?),
        "rampabove" => Command::SetRampAbove(on_off("rampabove")?),
        "follow" => Command::FollowOrbital(on_off("follow")?),
        w if crate::app::pb::PbSetting::ALL.iter().any(|s| s.word() == w) => {
            let which = crate::app::pb::PbSetting::ALL
                .into_iter()
                .find(|s| s.word() == w)
                .unwrap_or(crate::app::pb::PbSetting::IonicStrength);
            let (range, unit) = which.range();
            let v: f64 = value.parse().ok().filter(|v| range.contains(v)).ok_or_else(|| {
                problem(
                    col,
                    format!(
                        "{w} '{value}': a number from {}{unit} to {}{unit}",
                        range.start(),
                        range.end()
                    ),
                )
            })?;
            Command::SetPbValue(which, v)
        }
        "background" => match value.to_ascii_lowercase().as_str() {
            "dark" => Command::SetDarkBackground(true),
            "light" => Command::SetDarkBackground(false),
            v => Command::SetBackgroundColor(
                parse_color(v).ok_or_else(|| problem(col, format!("background '{value}': dark, light or a colour")))?,
            ),
        },
        "depthcue" | "lighting" => {
            let d: f32 = value
                .parse()
                .ok()
                .filter(|d| (0.0..=1.0).contains(d))
                .ok_or_else(|| problem(col, format!("depthcue: expected a number from 0 to 1, found '{value}'")))?;
            Command::SetDepthCue(d)
        }
        "colormap" => Command::SetColormap(
            crate::render::colormap::Colormap::ALL
                .into_iter()
                .find(|c| c.name().eq_ignore_ascii_case(value))
                .ok_or_else(|| {
                    let names: Vec<&str> = crate::render::colormap::Colormap::ALL
                        .iter()
                        .map(|c| c.name())
                        .collect();
                    problem(col, format!("colormap '{value}': {}", names.join(", ")))
                })?,
        ),
        "lattice" => {
            let n: u32 = value
                .parse()
                .ok()
                .filter(|n| (16..=512).contains(n))
                .ok_or_else(|| problem(col, format!("lattice: expected 16 to 512 points, found '{value}'")))?;
            Command::SetLatticePoints(n)
        }
        _ => match value.to_ascii_lowercase().as_str() {
            "ev" => Command::SetEnergiesInEv(true),
            "hartree" => Command::SetEnergiesInEv(false),
            _ => return Err(problem(col, format!("energies '{value}': ev or hartree"))),
        },
    };
    Ok(Plan::Commands(vec![c]))
}

/// `rep modify N hbonds D [ANGLE [D_HEAVY]]`: the hydrogen-bond criteria (Å, degrees, Å), those not
/// given kept from `current`.
fn hbond_criteria(
    value: &str,
    current: crate::analysis::hbonds::HBondCriteria,
    col: usize,
) -> Result<crate::analysis::hbonds::HBondCriteria, Problem> {
    let words: Vec<&str> = value.split_whitespace().collect();
    if words.is_empty() || words.len() > 3 {
        return Err(problem(
            col,
            format!(
                "hbonds: expected a distance in Å, then optionally an angle in degrees and a distance without hydrogens, found '{value}'"
            ),
        ));
    }
    let mut c = current;
    for (k, w) in words.iter().enumerate() {
        let x: f32 = w
            .parse()
            .map_err(|_| problem(col, format!("hbonds: '{w}' is not a number")))?;
        match k {
            0 => c.distance_angstrom = x,
            1 => c.angle_degrees = x,
            _ => c.heavy_distance_angstrom = x,
        }
    }
    c.check().map_err(|e| problem(col, e))?;
    Ok(c)
}
