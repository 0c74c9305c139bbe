//! The 3-D view's right-click menu: what ChimeraX's and PyMOL's atom menus offer on the atom under
//! the pointer (`ViewState::menu_atom`, found when the menu opened). Its residue drawn as licorice,
//! the residues around it, their hydrogen bonds, a label, the view centred on it, its description
//! copied; on empty space, the view reset. Every entry is a command, so undo takes it back.

use super::send;
use crate::app::atoms::AtomStyle;
use crate::app::reps::RepSpec;
use crate::app::state::{AppState, Command};
use crate::model::Structure;

/// Distance of "residues around" (Å), as ChimeraX's and PyMOL's usual 5 Å shell.
pub const AROUND_ANGSTROM: f32 = 5.0;

/// The selection of the residue of atom `i`: its residue number with its chain (else its segment;
/// else its residue name), so that it names that residue alone ("chain A and resid 13").
pub fn residue_selection(s: &Structure, i: usize) -> Option<String> {
    s.resids.get(i)?;
    // `163A` with an insertion code: that residue alone.
    let resid = s.resid_text(i);
    let chain = s.chains.get(i).map(|c| c.as_str().trim()).unwrap_or("");
    let seg = s.segids.get(i).map(|c| c.as_str().trim()).unwrap_or("");
    let quote = crate::model::select::literal_word;
    let group = if !chain.is_empty() {
        format!("chain {} and ", quote(chain))
    } else if !seg.is_empty() {
        format!("segid {} and ", quote(seg))
    } else {
        let name = s.resnames.get(i).map(|r| r.as_str().trim()).unwrap_or("");
        if name.is_empty() {
            String::new()
        } else {
            format!("resname {} and ", quote(name))
        }
    };
    Some(format!("{group}resid {resid}"))
}

/// "LYS13" (residue name and number) of atom `i`.
fn residue_name(s: &Structure, i: usize) -> String {
    s.residue_text(i)
}

/// The menu's content (inside `Response::context_menu`).
pub fn atom_menu_ui(ui: &mut egui::Ui, state: &mut AppState) {
    let Some(doc) = state.document() else {
        ui.label("Open a file first.");
        return;
    };
    let atom = state.view.menu_atom.filter(|&a| a < doc.structure.len());
    let Some(atom) = atom else {
        if ui.button("Reset view (0)").clicked() {
            send(state, Command::ResetCamera);
            ui.close();
        }
        return;
    };
    let s = &doc.structure;
    let description = state.view.menu_description.clone();
    let residue = residue_selection(s, atom);
    let res_name = residue_name(s, atom);
    let has_residues = !s.resnames.is_empty() && state.qm_atom_name(atom).is_none();
    let position = doc.frame.positions_angstrom.get(atom).copied();
    let labelled = state.tools.labels.atoms.contains(&atom);
    ui.label(egui::RichText::new(&description).strong());
    ui.separator();
    let mut out = Vec::new();
    if let (true, Some(sel)) = (has_residues, residue.as_ref()) {
        if ui
            .button(format!("Show {res_name} as licorice"))
            .on_hover_text(format!("Adds a representation: {sel}"))
            .clicked()
        {
            out.push(Command::AddRep(RepSpec::atoms(sel, AtomStyle::Licorice)));
        }
        let around = format!("same residue as (within {AROUND_ANGSTROM} of ({sel}))");
        if ui
            .button(format!("Show residues within {AROUND_ANGSTROM} Å of {res_name}"))
            .on_hover_text(format!("Adds a licorice representation: {around}"))
            .clicked()
        {
            out.push(Command::AddRep(RepSpec::atoms(&around, AtomStyle::Licorice)));
        }
        if ui
            .button(format!("Hydrogen bonds around {res_name}"))
            .on_hover_text(format!(
                "Adds the hydrogen bonds among the residues within {AROUND_ANGSTROM} Å: {around}"
            ))
            .clicked()
        {
            out.push(Command::AddRep(RepSpec::atoms(&around, AtomStyle::HBonds)));
        }
        ui.separator();
    }
    if ui
        .button(if labelled { "Remove label" } else { "Label atom" })
        .clicked()
    {
        out.push(Command::ToggleLabel(atom));
    }
    if let Some(q) = position.filter(|q| q.iter().all(|x| x.is_finite()))
        && ui.button("Centre view here").clicked()
    {
        let mut spec = crate::app::session::CameraSpec::of(&state.view.camera);
        spec.target_angstrom = q;
        out.push(Command::SetCamera(spec));
    }
    if ui.button("Copy description").clicked() {
        ui.ctx().copy_text(description.clone());
        ui.close();
    }
    if !out.is_empty() {
        ui.close();
    }
    for c in out {
        send(state, c);
    }
}
