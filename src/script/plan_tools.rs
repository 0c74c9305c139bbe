//! Planning the analyses' statements (`ils`, `rdf`; their table is `script::verbs_tools`): the
//! form's values merged with the state's, each checked against the open document, as the
//! `app::state::Command`s the ILS form, its field panel and the RDF panel push.

use super::plan::{document, problem};
use super::verbs::{Parsed, Problem, Value};
use crate::app::ils::{IlsForm, ProbeChoice};
use crate::app::state::{AppState, Command};
use crate::model::FrameRange;
use crate::model::select::Selection;

/// The commands of an `ils` statement.
pub(super) fn ils(p: &Parsed, state: &AppState) -> Result<Vec<Command>, Problem> {
    let words = p.form.words;
    match words {
        ["start"] => {
            let form = ils_form(p, state)?;
            Ok(vec![Command::SetIlsForm(form), Command::StartIls])
        }
        ["pause"] => Ok(vec![Command::PauseIls(true)]),
        ["continue"] => Ok(vec![Command::PauseIls(false)]),
        ["cancel"] => Ok(vec![Command::CancelIls]),
        ["path", "clear"] => Ok(vec![Command::IlsClearPaths(map_index(p, state)?)]),
        ["path", "end"] => {
            let map = map_index(p, state)?;
            Ok(vec![Command::IlsMarkPathEndAtAtom(map, atom_index(p, state)?)])
        }
        _ => {
            let map = map_index(p, state)?;
            let atom = atom_index(p, state)?;
            Ok(vec![Command::IlsPathFromAtom(map, atom, p.text("to") == Some("end"))])
        }
    }
}

/// The ILS form the `ils start` statement asks for: the state's form with the options given.
fn ils_form(p: &Parsed, state: &AppState) -> Result<IlsForm, Problem> {
    let doc = document(p, state)?;
    let mut f = state.panels.ils.form.clone();
    if let Some(w) = p.text("probe") {
        f.probe = ProbeChoice::ALL
            .into_iter()
            .find(|c| c.name().eq_ignore_ascii_case(w))
            .ok_or_else(|| problem(p.column_of("probe"), format!("probe '{w}': o2, co, no or xe")))?;
    }
    if let Some(s) = p.text("sel") {
        f.selection = checked_selection(p, "sel", s)?;
    }
    if let Some(s) = p.text("around") {
        f.around = if s.trim().is_empty() {
            String::new()
        } else {
            checked_selection(p, "around", s)?
        };
    }
    if let Some(s) = p.text("align") {
        f.align = if s.trim().is_empty() || s.trim().eq_ignore_ascii_case("none") {
            String::new()
        } else {
            checked_selection(p, "align", s)?
        };
    }
    if let Some(text) = p.text("frames") {
        let picked = FrameRange::parse(text).and_then(|r| r.indices(doc.n_frames));
        match picked {
            Ok(v) if !v.is_empty() => f.frames = text.to_string(),
            Ok(_) => {
                return Err(problem(
                    p.column_of("frames"),
                    format!("frames '{text}' pick no frame (the document has {})", doc.n_frames),
                ));
            }
            Err(e) => return Err(problem(p.column_of("frames"), format!("frames '{text}': {e}"))),
        }
    }
    if let Some(x) = p.number("spacing") {
        if !(x.is_finite() && x >= 0.1) {
            return Err(problem(
                p.column_of("spacing"),
                format!("spacing {x}: the lattice spacing must be at least 0.1 A"),
            ));
        }
        f.spacing_angstrom = x;
    }
    if let Some(n) = p.int("subres") {
        if !(1..=8).contains(&n) {
            return Err(problem(p.column_of("subres"), format!("subres {n}: from 1 to 8")));
        }
        f.subres = n as usize;
    }
    if let Some(n) = p.int("orient") {
        if !(1..=2000).contains(&n) {
            return Err(problem(
                p.column_of("orient"),
                format!("orient {n}: from 1 to 2000 orientations"),
            ));
        }
        f.orientations = n as usize;
    }
    match p.get("params") {
        Some(Value::Path(path)) => f.params_file = path.display().to_string(),
        Some(_) => f.params_file = String::new(),
        None => {}
    }
    if let Some(w) = p.text("elements") {
        f.element_table = w == "on";
    }
    Ok(f)
}

/// `text` (trimmed) when it is a selection, else the problem naming option `name` and the text.
fn checked_selection(p: &Parsed, name: &str, text: &str) -> Result<String, Problem> {
    let text = text.trim();
    Selection::parse(text).map_err(|e| {
        problem(
            p.column_of(name),
            format!("{name}: bad selection '{text}': {}", e.message),
        )
    })?;
    Ok(text.to_string())
}

/// The map numbered (from 1) by value `map`, as its index.
fn map_index(p: &Parsed, state: &AppState) -> Result<u16, Problem> {
    let doc = document(p, state)?;
    let n = p.int("map").unwrap_or(0);
    let count = doc.ils_maps.len();
    n.checked_sub(1)
        .filter(|&i| (i as usize) < count)
        .and_then(|i| u16::try_from(i).ok())
        .ok_or_else(|| {
            problem(
                p.column_of("map"),
                format!("no map ils:{n} (the document has {count}, numbered from 1)"),
            )
        })
}

/// The atom numbered (from 1) by value `atom`, as its index.
fn atom_index(p: &Parsed, state: &AppState) -> Result<usize, Problem> {
    let n_atoms = document(p, state)?.structure.len();
    let a = p.int("atom").unwrap_or(0);
    if a == 0 || a as usize > n_atoms {
        return Err(problem(
            p.column_of("atom"),
            format!("atom {a}: the document has atoms 1 to {n_atoms}"),
        ));
    }
    Ok(a as usize - 1)
}

/// The two selections of `SELECTION with SELECTION`, each trimmed: split at the first word
/// `with`.
pub fn split_pair(text: &str) -> Option<(&str, &str)> {
    let bytes = text.as_bytes();
    let blank = |i: usize| bytes.get(i).is_none_or(|b| b.is_ascii_whitespace());
    text.match_indices("with")
        .find(|(i, _)| (*i == 0 || blank(i - 1)) && blank(i + 4))
        .map(|(i, _)| (text[..i].trim(), text[i + 4..].trim()))
}

/// The commands of an `rdf` statement.
pub(super) fn rdf(p: &Parsed, state: &AppState) -> Result<Vec<Command>, Problem> {
    if p.sub() == "cancel" {
        return Ok(vec![Command::CancelRdf]);
    }
    document(p, state)?;
    let text = p.text("selections").unwrap_or("").trim();
    let col = p.column_of("selections");
    let (a, b) = split_pair(text)
        .filter(|(a, b)| !a.is_empty() && !b.is_empty())
        .ok_or_else(|| problem(col, format!("rdf: expected SELECTION with SELECTION, found '{text}'")))?;
    for (k, s) in [(1, a), (2, b)] {
        Selection::parse(s).map_err(|e| problem(col, format!("rdf: bad selection {k} '{s}': {}", e.message)))?;
    }
    let panel = &state.panels.rdf;
    let r_max_angstrom = match p.number("rmax") {
        Some(x) if (0.5..=100.0).contains(&x) => x,
        Some(x) => {
            return Err(problem(p.column_of("rmax"), format!("rmax {x}: from 0.5 to 100 A")));
        }
        None => panel.r_max_angstrom,
    };
    let bins = match p.int("bins") {
        Some(n) if (1..=10_000).contains(&n) => n as usize,
        Some(n) => return Err(problem(p.column_of("bins"), format!("bins {n}: from 1 to 10000"))),
        None => panel.bins,
    };
    Ok(vec![
        Command::SetRdfForm {
            selection1: a.to_string(),
            selection2: b.to_string(),
            r_max_angstrom,
            bins,
        },
        Command::StartRdf,
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::fields::FieldService;
    use crate::app::settings::Settings;
    use crate::script::lex::statements;
    use crate::script::plan::{Plan, plan};
    use crate::script::verbs::parse;
    use std::path::PathBuf;

    fn data(rel: &str) -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(rel)
    }

    /// tz2 (AMBER prmtop and NetCDF frames), without field engines.
    fn tz2() -> AppState {
        let mut state = AppState::new(Settings::default(), FieldService::default());
        state.apply(Command::OpenFiles(vec![
            data("md/amber/tz2.truncoct.parm7.bz2"),
            data("md/amber/tz2.truncoct.nc"),
        ]));
        assert!(state.document().is_some(), "{}", state.panels.status);
        state
    }

    fn planned(state: &AppState, line: &str) -> Result<Vec<Command>, Problem> {
        let st = statements(line).unwrap_or_default();
        let parsed = parse(&st[0], &data("md"))?;
        match plan(&parsed, state)? {
            Plan::Commands(c) => Ok(c),
            other => panic!("{line}: {other:?}"),
        }
    }

    fn fails(state: &AppState, line: &str) -> Problem {
        match planned(state, line) {
            Ok(c) => panic!("{line} was accepted: {c:?}"),
            Err(e) => e,
        }
    }

    #[test]
    fn ils_start_merges_the_options_into_the_form() {
        let mut state = tz2();
        state.panels.ils.form.selection = "not resname WAT".into();
        let c = planned(&state, "ils start probe xe spacing 2 subres 1 frames 0:2").unwrap_or_else(|e| panic!("{e:?}"));
        let want = IlsForm {
            probe: ProbeChoice::Xe,
            spacing_angstrom: 2.0,
            subres: 1,
            frames: "0:2".into(),
            selection: "not resname WAT".into(),
            ..IlsForm::default()
        };
        assert_eq!(c, vec![Command::SetIlsForm(want), Command::StartIls]);
        let c = planned(
            &state,
            "ils start sel \"resid 1 to 5\" around \"\" orient 12 align \"name CA\" elements on frames 1:8:2 params none",
        )
        .unwrap_or_else(|e| panic!("{e:?}"));
        let Command::SetIlsForm(f) = &c[0] else { panic!("{c:?}") };
        assert_eq!(
            (
                f.selection.as_str(),
                f.around.as_str(),
                f.orientations,
                f.align.as_str(),
                f.element_table,
                f.frames.as_str(),
                f.params_file.as_str()
            ),
            ("resid 1 to 5", "", 12, "name CA", true, "1:8:2", "")
        );
    }

    #[test]
    fn ils_controls_and_pathways() {
        let mut state = tz2();
        assert_eq!(planned(&state, "ils pause").ok(), Some(vec![Command::PauseIls(true)]));
        assert_eq!(
            planned(&state, "ils continue").ok(),
            Some(vec![Command::PauseIls(false)])
        );
        assert_eq!(planned(&state, "ils cancel").ok(), Some(vec![Command::CancelIls]));
        // No map yet: the map's number is the problem.
        let e = fails(&state, "ils path 1 12");
        assert!(e.message.contains("no map ils:1"), "{}", e.message);
        assert_eq!(e.column, 10);
        state.panels.ils.form.selection = "not resname WAT".into();
        state.panels.ils.form.frames = "0:1".into();
        state.panels.ils.form.spacing_angstrom = 3.0;
        state.panels.ils.form.subres = 1;
        state.apply(Command::StartIls);
        state.apply(Command::CancelIls);
        assert_eq!(
            state.document().map(|d| d.ils_maps.len()),
            Some(1),
            "{}",
            state.panels.status
        );
        assert_eq!(
            planned(&state, "ils path 1 12").ok(),
            Some(vec![Command::IlsPathFromAtom(0, 11, false)])
        );
        assert_eq!(
            planned(&state, "ils path 1 12 to end").ok(),
            Some(vec![Command::IlsPathFromAtom(0, 11, true)])
        );
        assert_eq!(
            planned(&state, "ils path end 1 40").ok(),
            Some(vec![Command::IlsMarkPathEndAtAtom(0, 39)])
        );
        assert_eq!(
            planned(&state, "ils path clear 1").ok(),
            Some(vec![Command::IlsClearPaths(0)])
        );
        let n = state.document().map_or(0, |d| d.structure.len());
        let e = fails(&state, &format!("ils path 1 {}", n + 1));
        assert!(e.message.contains(&format!("atom {}", n + 1)), "{}", e.message);
        let e = fails(&state, "ils path 2 1");
        assert!(e.message.contains("no map ils:2"), "{}", e.message);
    }

    #[test]
    fn bad_ils_values_name_the_value() {
        let state = tz2();
        for (line, word, column) in [
            ("ils start spacing -1", "-1", 11),
            ("ils start probe argon", "argon", 17),
            ("ils start orient 0", "orient 0", 11),
            ("ils start subres 9", "subres 9", 11),
            ("ils start sel \"name CA and\"", "name CA and", 11),
            ("ils start around \"name CA or\"", "name CA or", 11),
            ("ils start frames 5:x", "5:x", 18),
            ("ils start frames 500:600", "500:600", 11),
            ("ils start params nowhere.prm", "nowhere.prm", 18),
            ("ils start elements maybe", "maybe", 20),
            ("ils start spacing wide", "wide", 19),
        ] {
            let e = fails(&state, line);
            assert!(e.message.contains(word), "{line}: {}", e.message);
            assert_eq!(e.column, column, "{line}: {}", e.message);
        }
        let empty = AppState::new(Settings::default(), FieldService::default());
        let e = fails(&empty, "ils start");
        assert!(e.message.contains("nothing is open"), "{}", e.message);
    }

    #[test]
    fn rdf_sets_the_panel_and_starts() {
        let mut state = tz2();
        let c = planned(&state, "rdf name O with resname WAT and name O rmax 10 bins 100")
            .unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(
            c,
            vec![
                Command::SetRdfForm {
                    selection1: "name O".into(),
                    selection2: "resname WAT and name O".into(),
                    r_max_angstrom: 10.0,
                    bins: 100,
                },
                Command::StartRdf
            ]
        );
        // Values not given keep the panel's.
        state.panels.rdf.bins = 33;
        let c = planned(&state, "rdf within 3 of resid 1 with all").unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(
            c[0],
            Command::SetRdfForm {
                selection1: "within 3 of resid 1".into(),
                selection2: "all".into(),
                r_max_angstrom: 8.0,
                bins: 33,
            }
        );
        // Each side may be quoted, as selections are elsewhere.
        let c = planned(&state, r#"rdf "name O" with "resname WAT and name O" rmax 10"#)
            .unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(
            c[0],
            Command::SetRdfForm {
                selection1: "name O".into(),
                selection2: "resname WAT and name O".into(),
                r_max_angstrom: 10.0,
                bins: 33,
            }
        );
        assert_eq!(planned(&state, "rdf cancel").ok(), Some(vec![Command::CancelRdf]));
        for (line, word) in [
            ("rdf name O", "'name O'"),
            ("rdf name O with", "'name O with'"),
            ("rdf name O with name O or", "name O or"),
            ("rdf name O with name O rmax 0", "rmax 0"),
            ("rdf name O with name O bins 0", "bins 0"),
            ("rdf name O with name O bins many", "many"),
        ] {
            let e = fails(&state, line);
            assert!(e.message.contains(word), "{line}: {}", e.message);
        }
        assert_eq!(split_pair("withinx with y"), Some(("withinx", "y")));
        assert_eq!(split_pair("a within 3 of b"), None);
    }
}
