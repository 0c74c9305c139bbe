//! Planning the `measure` statements: distances, angles and dihedrals between atoms, a
//! selection's RMSD, radius of gyration and SASA, and deleting or clearing measurements (see
//! `script::plan`).

use super::plan::{Plan, document, problem, selection};
use super::verbs::{Parsed, Problem};
use crate::app::measure::MeasureKind;
use crate::app::state::{AppState, Command};
use crate::model::select::Selection;

/// The selection of a measurement over atoms, refused at its own column when it picks none in the
/// frame shown (as `center` refuses one).
fn picking_selection(p: &Parsed, state: &AppState) -> Result<String, Problem> {
    let text = selection(p, state, "selection")?;
    let doc = document(p, state)?;
    let picked = Selection::parse(&text).map_or(0, |s| s.indices(&doc.structure, Some(&doc.frame)).len());
    if picked == 0 {
        return Err(problem(
            p.column_of("selection"),
            format!("measure {}: '{text}' picks no atoms", p.sub()),
        ));
    }
    Ok(text)
}

pub(super) fn measure(p: &Parsed, state: &AppState) -> Result<Plan, Problem> {
    let doc = document(p, state)?;
    match p.sub() {
        "rmsd" => {
            let selection = picking_selection(p, state)?;
            let reference = p.int("reference").unwrap_or(0) as usize;
            if reference >= doc.n_frames {
                return Err(problem(
                    p.column_of("reference"),
                    format!("reference frame {reference}: the document has {} frames", doc.n_frames),
                ));
            }
            Ok(Plan::Rmsd {
                selection,
                reference,
                fit: p.flag("fit"),
                keep: p.flag("keep"),
            })
        }
        "rgyr" | "sasa" => Ok(Plan::OfSelection {
            kind: if p.sub() == "rgyr" {
                MeasureKind::Rgyr
            } else {
                MeasureKind::Sasa
            },
            selection: picking_selection(p, state)?,
            keep: p.flag("keep"),
        }),
        "clear" => Ok(Plan::Commands(vec![Command::ClearMeasurements])),
        "delete" => {
            let n = p.int("measurement").unwrap_or(0) as usize;
            let list = &state.tools.measure.list;
            match n.checked_sub(1).and_then(|i| list.get(i)) {
                Some(m) => Ok(Plan::Commands(vec![Command::DeleteMeasurement(m.id)])),
                None => Err(problem(
                    p.column_of("measurement"),
                    format!("no measurement {n} (there are {}, numbered from 1)", list.len()),
                )),
            }
        }
        _ => {
            let n_atoms = doc.structure.len();
            let mut atoms = Vec::new();
            for name in ["a", "b", "c", "d"] {
                let Some(a) = p.int(name) else { continue };
                if a == 0 || a as usize > n_atoms {
                    return Err(problem(
                        p.column_of(name),
                        format!("atom {a}: the document has atoms 1 to {n_atoms}"),
                    ));
                }
                let a = a as usize - 1;
                if atoms.contains(&a) {
                    return Err(problem(p.column_of(name), format!("atom {} is named twice", a + 1)));
                }
                atoms.push(a);
            }
            Ok(Plan::Commands(vec![Command::AddMeasurement(atoms)]))
        }
    }
}
