//! The Poisson-Boltzmann colouring's controls: the Add menu's "Molecular surface coloured by
//! Poisson-Boltzmann potential" entry (or why a structure has none), the field panel's parameters
//! (ionic strength, solute and solvent dielectric, probe radius, lattice spacing, with units) and
//! the progress line while a frame solves. The state and the solves are `app::pb`'s.

use crate::app::fields::FieldChoice;
use crate::app::pb::PbSetting;
use crate::app::reps::{FieldStyle, RepSpec, SpecKind};
use crate::app::state::{AppState, Command};
use egui::RichText;

/// The name of the Poisson-Boltzmann colouring in the field panel's "Colour surface by".
pub const SOURCE_NAME: &str = "Potential (Poisson-Boltzmann)";

/// The Add menu's label of the Poisson-Boltzmann surface.
pub const ADD_PB_SURFACE: &str = "Molecular surface coloured by potential (Poisson-Boltzmann)";

/// The Add menu's Poisson-Boltzmann entry for the molecular surface `surface` ("molsurf:SEL"):
/// pushes the surface coloured by the potential, or says why a structure without charges has none.
pub fn add_entry(ui: &mut egui::Ui, state: &AppState, surface: &str, out: &mut Vec<Command>) {
    if let Some(why) = state.pb_unavailable() {
        ui.add_enabled(false, egui::Button::new(ADD_PB_SURFACE))
            .on_disabled_hover_text(why);
        return;
    }
    let hover = format!(
        "The selection's molecular surface coloured by the Poisson-Boltzmann potential of all the \
         files' charges and radii ({}), solved per frame, red negative, blue positive, +-5 kT/e; the field \
         panel's Surface choice makes it the solvent-excluded surface, the one APBS's dielectric follows",
        state.pb.legend()
    );
    if ui.button(ADD_PB_SURFACE).on_hover_text(hover).clicked() {
        ui.close();
        let mut spec = RepSpec::field(surface, FieldStyle::Isosurface);
        if let SpecKind::Field { color_by, .. } = &mut spec.kind {
            *color_by = Some("pb".into());
        }
        out.push(Command::AddRep(spec));
    }
}

/// True when the panel's representation is, or is coloured by, the Poisson-Boltzmann potential.
fn panel_colours_by_pb(state: &AppState) -> bool {
    state.panel_field_rep().is_some_and(|f| {
        matches!(f.field, FieldChoice::PotentialPb { .. })
            || f.coloring
                .is_some_and(|c| matches!(c.source, FieldChoice::PotentialPb { .. }))
    })
}

/// The parameters of the Poisson-Boltzmann colouring in the field panel, with the last solve and
/// the progress line; nothing unless the panel's representation is coloured by it.
pub fn panel_ui(ui: &mut egui::Ui, state: &mut AppState) {
    if !panel_colours_by_pb(state) {
        return;
    }
    ui.label(RichText::new(state.pb.legend()).strong());
    // Each change is a command (`set ionic 0.05`), so the log and a script repeat it.
    for (which, label) in [
        (PbSetting::IonicStrength, "Ionic strength"),
        (PbSetting::EpsIn, "Solute dielectric"),
        (PbSetting::EpsOut, "Solvent dielectric"),
        (PbSetting::Probe, "Probe radius"),
        (PbSetting::Spacing, "Lattice spacing"),
    ] {
        let (range, unit) = which.range();
        let mut v = state.pb_value(which);
        ui.horizontal(|ui| {
            let l = ui.label(label);
            ui.add(
                egui::DragValue::new(&mut v)
                    .update_while_editing(false)
                    .range(range)
                    .speed(0.01)
                    .suffix(unit),
            )
            .labelled_by(l.id);
        });
        if v != state.pb_value(which) {
            state.push(Command::SetPbValue(which, v));
        }
    }
    if let Some(line) = state.pb.progress() {
        // The line wraps beside its spinner: it names the frame, the model and the time.
        ui.horizontal(|ui| {
            ui.spinner();
            ui.add(egui::Label::new(line).wrap());
        });
        ui.ctx().request_repaint();
    } else if let Some((engine, seconds, iterations)) = &state.pb.last_solve {
        ui.label(
            RichText::new(format!(
                "last frame: {seconds:.2} s on {engine}, {iterations} iterations"
            ))
            .small(),
        );
    }
    if let Some(why) = &state.pb.failure {
        ui.label(
            RichText::new(format!("no potential: {why}"))
                .color(super::tokens::ERROR)
                .small(),
        );
    }
}
