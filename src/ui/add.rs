//! The "Add" menu: every representation kind the open document can show, one click after opening
//! the menu — atoms, cartoon and molecular surface of the selection typed at its top (the surface
//! also coloured by the charges' potential when the files carry charges), orbitals (HOMO, LUMO, the
//! one selected in the orbital list), the electron and spin density, the potentials, the volumes
//! read from files, a slice of any of these fields, the ligand free energy of a gas probe over the
//! trajectory (implicit ligand sampling, its form in `ui::ils`), and the measure and label modes
//! (distance, angle, dihedral by clicking atoms; labels by clicking).
//!
//! The same menu is reached from the menu bar and from the "+ Add" button of the representations
//! panel (`ui::menu`, `ui::reps`). Adding a representation selects it, so the field panel shows its
//! controls.

use super::tokens;
use crate::app::atoms::AtomStyle;
use crate::app::fields::FieldChoice;
use crate::app::reps::FieldStyle;
use crate::app::reps::spec::{RepSpec, SpecKind, field_text};
use crate::app::slice::SlicePlane;
use crate::app::state::{AppState, Command};
use crate::surface::cartoon::Style as CartoonStyle;
use egui::RichText;

/// Label of the representations panel's button that opens the menu.
pub const ADD_BUTTON: &str = "+ Add";

/// The Add menu's entry of a molecular surface coloured by the charges' potential under `model`
/// (not Poisson-Boltzmann, whose entry is `ui::pb::ADD_PB_SURFACE`): "... potential (eps = 4r)".
pub fn charges_surface_entry(model: crate::app::esp_model::EspModel) -> String {
    use crate::app::esp_model::EspModel;
    let name = match model {
        EspModel::Vacuum => "vacuum".to_string(),
        EspModel::DebyeHuckel { .. } => "Debye-Hueckel".to_string(),
        other => other.label(),
    };
    format!("Molecular surface coloured by potential ({name})")
}

/// A menu entry: a button that closes the menu when clicked.
fn entry(ui: &mut egui::Ui, label: &str, hover: &str) -> bool {
    let clicked = ui.button(label).on_hover_text(hover).clicked();
    if clicked {
        ui.close();
    }
    clicked
}

/// The menu's content (inside `ui.menu_button`): pushes the chosen representation.
pub fn add_menu_ui(ui: &mut egui::Ui, state: &mut AppState) {
    let Some(doc) = state.document() else {
        ui.label("Open a file first.");
        return;
    };
    let has_charges = doc.structure.charges_e.is_some();
    let has_atoms = !doc.structure.is_empty();
    let has_frames = doc.n_frames > 0;
    let mut out: Vec<Command> = Vec::new();
    if has_atoms {
        ui.horizontal(|ui| {
            let l = ui.label("Selection");
            ui.add(
                egui::TextEdit::singleline(&mut state.panels.new_selection)
                    .desired_width(tokens::TEXT_FIELD_WIDTH)
                    .id_salt("add_menu_selection"),
            )
            .labelled_by(l.id);
        });
        let sel = state.panels.new_selection.clone();
        let parses = crate::model::select::Selection::parse(&sel);
        if let Err(e) = &parses {
            ui.label(RichText::new(e.to_string()).color(tokens::ERROR).small());
        }
        ui.add_enabled_ui(parses.is_ok(), |ui| {
            if entry(ui, "Atoms (licorice)", "The selection's atoms as sticks") {
                out.push(Command::AddRep(RepSpec::atoms(&sel, AtomStyle::Licorice)));
            }
            if entry(
                ui,
                "Cartoon",
                "The selection's protein and nucleic residues as a cartoon",
            ) {
                out.push(Command::AddRep(RepSpec::cartoon(&sel, CartoonStyle::Cartoon)));
            }
            if entry(
                ui,
                "Hydrogen bonds",
                "Dashed lines for the hydrogen bonds among the selection's atoms, found at every frame \
                 (donor-acceptor within 3.0 Å, angle at the hydrogen at least 150°; without hydrogens, N and O \
                 within 3.5 Å)",
            ) {
                out.push(Command::AddRep(RepSpec::atoms(&sel, AtomStyle::HBonds)));
            }
            let surface = format!("molsurf:{sel}");
            if entry(
                ui,
                "Molecular surface",
                "The selection's molecular surface (the atoms' summed Gaussians, as VMD's QuickSurf), recomputed per frame",
            ) {
                out.push(Command::AddRep(RepSpec::field(&surface, FieldStyle::Isosurface)));
            }
            if entry(
                ui,
                "Solvent-excluded surface",
                "The selection's solvent-excluded surface: where a 1.4 Å water probe cannot reach (as MSMS, PyMOL \
                 and ChimeraX draw it), recomputed per frame",
            ) {
                out.push(Command::AddRep(RepSpec::field(&format!("ses:{sel}"), FieldStyle::Isosurface)));
            }
            let model = state.esp.model;
            if has_charges
                && !model.is_pb()
                && entry(
                    ui,
                    &charges_surface_entry(model),
                    &format!(
                        "The selection's molecular surface coloured by the potential of the files' charges at \
                         its vertices under {} (the field panel's electrostatic model; red negative, white \
                         zero, blue positive; a screened model leaves the explicit water and ions out)",
                        model.label()
                    ),
                )
            {
                let mut spec = RepSpec::field(&surface, FieldStyle::Isosurface);
                if let SpecKind::Field { color_by, .. } = &mut spec.kind {
                    *color_by = Some("potential".into());
                }
                out.push(Command::AddRep(spec));
            }
            super::pb::add_entry(ui, state, &surface, &mut out);
        });
    }
    if has_atoms && has_frames {
        ui.separator();
        if entry(
            ui,
            super::ils::ILS_MENU,
            "Free-energy map of O2, CO, NO or Xe over the trajectory (implicit ligand sampling), built up \
             frame by frame",
        ) {
            state.panels.ils.form_open = true;
        }
    }
    if has_atoms {
        use crate::app::measure::{ClickMode, MeasureKind};
        ui.separator();
        for (label, hover, mode) in [
            (
                "Measurement: distance",
                "Click two atoms (key 2)",
                ClickMode::Measure(MeasureKind::Distance),
            ),
            (
                "Measurement: angle",
                "Click three atoms (key 3)",
                ClickMode::Measure(MeasureKind::Angle),
            ),
            (
                "Measurement: dihedral",
                "Click four atoms (key 4)",
                ClickMode::Measure(MeasureKind::Dihedral),
            ),
            ("Atom labels", "Click atoms to label them (key 1)", ClickMode::Label),
        ] {
            if entry(ui, label, hover) {
                out.push(Command::SetClickMode(mode));
            }
        }
    }
    let spin = state.doc.spin;
    let rows = state.orbital_rows(spin);
    if let Some(homo) = state.homo_index(spin) {
        ui.separator();
        if entry(ui, "HOMO", "A new representation of the highest occupied orbital") {
            out.push(Command::AddOrbitalRep(homo));
        }
        if homo + 1 < rows.len() && entry(ui, "LUMO", "A new representation of the lowest unoccupied orbital") {
            out.push(Command::AddOrbitalRep(homo + 1));
        }
        if let Some(i) = state
            .doc
            .orbital
            .filter(|i| *i != homo && *i != homo + 1 && *i < rows.len())
        {
            let label = format!("Orbital {} (selected in the list)", i + 1);
            if entry(
                ui,
                &label,
                "A new representation of the orbital selected in the orbital list",
            ) {
                out.push(Command::AddOrbitalRep(i));
            }
        }
    }
    let fields: Vec<FieldChoice> = super::fields::available_fields(state)
        .into_iter()
        .filter(|f| !matches!(f, FieldChoice::Orbital { .. }))
        .collect();
    if !fields.is_empty() {
        ui.separator();
    }
    for &f in &fields {
        if entry(ui, &field_entry_name(state, f), "Isosurfaces of this field") {
            out.push(Command::AddFieldRep(f));
        }
    }
    // The QM user's electrostatic potential map in one step, as GaussView's mapped surface.
    if fields.contains(&FieldChoice::Density)
        && fields.contains(&FieldChoice::WavefunctionPotential)
        && entry(
            ui,
            ESP_MAP,
            "The electron density's surface coloured by the wavefunction's own potential (nuclei and electrons), evaluated at its vertices",
        )
    {
        let mut spec = RepSpec::field("density", FieldStyle::Isosurface);
        if let SpecKind::Field { color_by, .. } = &mut spec.kind {
            *color_by = Some(field_text(FieldChoice::WavefunctionPotential, state.document()));
        }
        out.push(Command::AddRep(spec));
    }
    let panel_field = state.panel_field();
    let sliceable: Vec<FieldChoice> = panel_field
        .filter(|f| !matches!(f, FieldChoice::MolSurf { .. }))
        .into_iter()
        .chain(fields.iter().copied())
        .fold(Vec::new(), |mut v, f| {
            if !v.contains(&f) {
                v.push(f);
            }
            v
        });
    if !sliceable.is_empty() {
        ui.separator();
    }
    for f in sliceable {
        let label = format!("Slice of {}", state.describe_field(f));
        if entry(ui, &label, "The field's values on a plane, through a colormap") {
            let text = field_text(f, state.document());
            out.push(Command::AddRep(RepSpec::field(
                &text,
                FieldStyle::Slice(SlicePlane::default()),
            )));
        }
    }
    for c in out {
        state.push(c);
    }
}

/// The Add menu's entry for the density coloured by the wavefunction's potential.
pub const ESP_MAP: &str = "Density coloured by its potential (ESP map)";

/// What a field's menu entry says.
fn field_entry_name(state: &AppState, f: FieldChoice) -> String {
    match f {
        FieldChoice::Density => "Electron density".into(),
        FieldChoice::SpinDensity => "Spin density".into(),
        FieldChoice::WavefunctionPotential => "Potential (wavefunction)".into(),
        FieldChoice::Potential | FieldChoice::PotentialMean { .. } => "Potential (charges)".into(),
        FieldChoice::Volume(i) => format!("Volume {}", i + 1),
        FieldChoice::Ils(i) => format!("Ligand free energy (ILS) map {}", u32::from(i) + 1),
        FieldChoice::PotentialPb { .. } => super::pb::SOURCE_NAME.into(),
        other => state.describe_field(other),
    }
}
