//! The field panel's electrostatic model: a combo (Poisson-Boltzmann, eps = s r, Debye-Hueckel,
//! vacuum) with the chosen model's parameters below it, in their units, and, for a surface coloured
//! by the potential, the option that samples the colours 1.4 A outside it (PyMOL's
//! `surface_ramp_above_mode`). Shown when the representation the panel edits is, or is coloured
//! by, the charges' potential. The state is `app::esp_model`'s; Poisson-Boltzmann's own parameters
//! are `ui::pb`'s.

use crate::app::esp_model::{EspModel, RAMP_ABOVE_ANGSTROM, is_charges_potential};
use crate::app::state::{AppState, Command};
use egui::RichText;

/// The combo's label.
pub const MODEL_LABEL: &str = "Electrostatic model";
/// The option's label.
pub const RAMP_ABOVE_LABEL: &str = "Colour 1.4 Å above the surface";

/// True when the panel's representation shows or is coloured by the charges' potential.
pub fn panel_uses_esp(state: &AppState) -> bool {
    state
        .panel_field_rep()
        .is_some_and(|f| is_charges_potential(f.field) || f.coloring.is_some_and(|c| is_charges_potential(c.source)))
}

/// The model combo, its parameters and the sampling option (nothing unless
/// [`panel_uses_esp`]).
pub fn esp_model_ui(ui: &mut egui::Ui, state: &mut AppState) {
    if !panel_uses_esp(state) {
        return;
    }
    let now = state.esp.model;
    let mut chosen = now;
    super::widgets::labelled_combo(ui, MODEL_LABEL, "esp_model", now.short_name().to_string(), |ui| {
        for m in EspModel::KINDS {
            // The kind keeps its parameters when it is the current one.
            let m = if m.same_kind(now) { now } else { m };
            ui.selectable_value(&mut chosen, m, m.kind_name());
        }
    })
    .on_hover_text(
        "How the charges' potential is computed: Poisson-Boltzmann (solvent, ions, the \
         molecule's dielectric boundary), ChimeraX's distance-dependent dielectric eps = 4r, \
         Debye-Hueckel screening in water, or Coulomb's law in vacuum",
    );
    let row = |ui: &mut egui::Ui, label: &str, v: &mut f64, range: std::ops::RangeInclusive<f64>, unit: &str| {
        ui.horizontal(|ui| {
            let l = ui.label(label);
            ui.add(
                egui::DragValue::new(v)
                    .update_while_editing(false)
                    .range(range)
                    .speed(0.01)
                    .suffix(unit),
            )
            .labelled_by(l.id);
        });
    };
    match &mut chosen {
        EspModel::DistanceDependent { slope_per_angstrom } => {
            row(ui, "Dielectric slope s", slope_per_angstrom, 0.1..=100.0, " /Å");
        }
        EspModel::DebyeHuckel {
            eps_out,
            ionic_strength_molar,
            temperature_kelvin,
        } => {
            row(ui, "Ionic strength", ionic_strength_molar, 0.0..=5.0, " M");
            row(ui, "Solvent dielectric", eps_out, 1.0..=200.0, "");
            row(ui, "Temperature", temperature_kelvin, 200.0..=400.0, " K");
        }
        EspModel::Vacuum | EspModel::PoissonBoltzmann => {}
    }
    if chosen != now {
        state.push(Command::SetEspModel(chosen));
    }
    // Poisson-Boltzmann's line heads its own parameters just below (`ui::pb`): not twice.
    if !chosen.is_pb() {
        ui.add(egui::Label::new(RichText::new(chosen.label()).small()).wrap());
    }
    // Sampling outside the surface concerns a surface coloured by the potential, not the
    // potential's own isosurfaces or slice.
    let colours_a_surface = state
        .panel_field_rep()
        .is_some_and(|f| f.is_surface() && f.coloring.is_some_and(|c| is_charges_potential(c.source)));
    if !colours_a_surface {
        return;
    }
    let mut above = state.esp.ramp_above;
    if ui
        .checkbox(&mut above, RAMP_ABOVE_LABEL)
        .on_hover_text(format!(
            "Take each vertex's colour {RAMP_ABOVE_ANGSTROM} Å outside the surface along its normal, \
             where a ligand or a water would sit (PyMOL's surface_ramp_above_mode)"
        ))
        .changed()
    {
        state.push(Command::SetRampAbove(above));
    }
}
