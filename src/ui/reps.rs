//! The representation editor, after VMD's Graphical Representations window: one row per
//! representation (shown or hidden, what it is, move up or down, duplicate, delete) with its
//! settings under it — atoms: the selection (checked as it is typed, the error written under it),
//! style and colouring; cartoons: the selection, cartoon/tube/trace and colouring (by a scheme, or
//! by the charges' potential or a volume at the vertices); fields: which field, isosurface or slice, the isovalue in the field's unit,
//! lobe colours and opacity — and, above the list, the "Add" menu (`ui::add`) and "Add atoms".
//! Clicking a representation's name selects it (the Field panel and the orbital list edit it); its
//! box shows or hides it. Also the view options (fit to a selection, depth cue, background).

use super::widgets::choice_combo;
use super::{send, tokens};
use crate::analysis::polymer::Coloring;
use crate::app::atoms::{AtomColoring, AtomStyle};
use crate::app::fields::FieldChoice;
use crate::app::reps::{FieldRep, FieldStyle, RepEdit, RepId, RepKind, RepSpec};
use crate::app::slice::SlicePlane;
use crate::app::state::{AppState, Command};
use crate::surface::cartoon::Style as CartoonStyle;
use egui::{Key, RichText};

/// The representation list and the buttons that add to it.
pub fn reps_ui(ui: &mut egui::Ui, state: &mut AppState) {
    if state.doc.document.is_none() {
        ui.label("No document.");
        return;
    }
    let mut commands = Vec::new();
    add_ui(ui, state, &mut commands);
    ui.separator();
    let n = state.doc.reps.list.len();
    // The representation the panels edit: the selected one, else the first field representation.
    let selected_rep = state.selected_rep_id().or_else(|| state.panel_field_id());
    for (position, rep) in state.doc.reps.list.iter().enumerate() {
        let id = rep.id;
        ui.push_id(("rep", id.0), |ui| {
            ui.horizontal(|ui| {
                let mut visible = rep.visible;
                if ui.checkbox(&mut visible, "").on_hover_text("Show or hide").changed() {
                    commands.push(Command::EditRep(id, RepEdit::Visible(visible)));
                }
                let label = state.rep_label(rep);
                let selected = Some(id) == selected_rep;
                if ui
                    .add(egui::Button::selectable(selected, label).wrap())
                    .on_hover_text("Select: the Field panel and the orbital list edit it")
                    .clicked()
                    && !selected
                {
                    commands.push(Command::SelectRep(id));
                }
            });
            ui.horizontal_wrapped(|ui| {
                if ui
                    .add_enabled(position > 0, egui::Button::new("Up").small())
                    .on_hover_text("Move up")
                    .clicked()
                {
                    commands.push(Command::MoveRep(id, position - 1));
                }
                if ui
                    .add_enabled(position + 1 < n, egui::Button::new("Down").small())
                    .on_hover_text("Move down")
                    .clicked()
                {
                    commands.push(Command::MoveRep(id, position + 1));
                }
                if ui.small_button("Duplicate").clicked() {
                    commands.push(Command::DuplicateRep(id));
                }
                if ui.small_button("Delete").clicked() {
                    commands.push(Command::DeleteRep(id));
                }
            });
            match &rep.kind {
                RepKind::Atoms(a) => {
                    let count = match a.hbond_set().filter(|_| a.style == AtomStyle::HBonds) {
                        Some(set) => format!(
                            "{} atoms, {} hydrogen bonds ({})",
                            a.count,
                            set.bonds.len(),
                            a.hbonds.describe(set.with_hydrogens)
                        ),
                        None => format!("{} atoms", a.count),
                    };
                    selection_ui(ui, id, &a.selection, a.error.as_deref(), &count, &mut commands);
                    atom_style_ui(ui, id, a, &mut commands);
                    if a.style == AtomStyle::HBonds {
                        hbond_criteria_ui(ui, id, a, &mut commands);
                    }
                    atom_coloring_ui(ui, id, a.coloring, &mut commands);
                }
                RepKind::Field(f) => field_rep_ui(ui, state, id, f, &mut commands),
                RepKind::Cartoon(c) => {
                    let count = format!("{} polymer residues", c.residues);
                    selection_ui(ui, id, &c.selection, c.error.as_deref(), &count, &mut commands);
                    if let Some(s) = choice_combo(ui, "Style", c.style, &CartoonStyle::ALL, CartoonStyle::name) {
                        commands.push(Command::EditRep(id, RepEdit::CartoonStyle(s)));
                    }
                    cartoon_coloring_ui(ui, state, id, c, &mut commands);
                }
            }
        });
        ui.separator();
    }
    ui.horizontal_wrapped(|ui| {
        if ui
            .small_button("Save as default")
            .on_hover_text("New documents like this one start with these representations")
            .clicked()
        {
            commands.push(Command::SaveRepsAsDefault);
        }
        if ui
            .small_button("Reset")
            .on_hover_text("The default representations for this document")
            .clicked()
        {
            commands.push(Command::ResetReps);
        }
    });
    for c in commands {
        send(state, c);
    }
}

/// An atom representation's style: the atom styles, and "Cartoon", which turns it into a cartoon of
/// the same selection (VMD lists NewCartoon among its drawing methods too).
fn atom_style_ui(ui: &mut egui::Ui, id: RepId, a: &crate::app::reps::AtomsRep, commands: &mut Vec<Command>) {
    let mut style = Some(a.style);
    egui::ComboBox::new(("atom_style", id.0), "Style")
        .selected_text(a.style.name())
        .show_ui(ui, |ui| {
            for s in AtomStyle::ALL {
                ui.selectable_value(&mut style, Some(s), s.name());
            }
            ui.selectable_value(&mut style, None, "Cartoon")
                .on_hover_text("The selection's protein and nucleic residues as a cartoon, in place of these atoms");
        });
    match style {
        Some(s) if s != a.style => commands.push(Command::EditRep(id, RepEdit::AtomStyle(s))),
        Some(_) => {}
        None => {
            commands.push(Command::AddRep(RepSpec::cartoon(&a.selection, CartoonStyle::Cartoon)));
            commands.push(Command::DeleteRep(id));
        }
    }
}

/// The hydrogen-bond criteria of an atom representation drawn as hydrogen bonds: the donor-acceptor
/// distance and the angle at the hydrogen (the distance for structures without hydrogens on hover).
fn hbond_criteria_ui(ui: &mut egui::Ui, id: RepId, a: &crate::app::reps::AtomsRep, commands: &mut Vec<Command>) {
    let mut c = a.hbonds;
    ui.horizontal(|ui| {
        let with_h = a.hbond_set().is_none_or(|s| s.with_hydrogens);
        if with_h {
            ui.add(
                egui::DragValue::new(&mut c.distance_angstrom)
                    .update_while_editing(false)
                    .range(1.5..=5.0)
                    .speed(0.01)
                    .max_decimals(2)
                    .suffix(" Å"),
            )
            .on_hover_text("Largest donor-acceptor distance");
            ui.label("D…A");
            ui.add(
                egui::DragValue::new(&mut c.angle_degrees)
                    .update_while_editing(false)
                    .range(90.0..=180.0)
                    .speed(0.5)
                    .max_decimals(1)
                    .suffix("°"),
            )
            .on_hover_text("Smallest donor-hydrogen…acceptor angle (180° is linear)");
            ui.label("D-H…A");
        } else {
            ui.add(
                egui::DragValue::new(&mut c.heavy_distance_angstrom)
                    .update_while_editing(false)
                    .range(1.5..=5.0)
                    .speed(0.01)
                    .max_decimals(2)
                    .suffix(" Å"),
            )
            .on_hover_text("Largest donor-acceptor distance (the structure has no hydrogens: N and O atoms by name)");
            ui.label("N/O…N/O");
        }
    });
    if c != a.hbonds && c.check().is_ok() {
        commands.push(Command::EditRep(id, RepEdit::HBondCriteria(c)));
    }
}

/// A cartoon's colouring: its schemes, then the fields the document can colour it by at the vertices
/// (the potential of the charges when the files have charges, each volume).
fn cartoon_coloring_ui(
    ui: &mut egui::Ui,
    state: &AppState,
    id: RepId,
    c: &crate::app::reps::CartoonRep,
    commands: &mut Vec<Command>,
) {
    let doc = state.document();
    let mut fields = Vec::new();
    if doc.is_some_and(|d| d.structure.charges_e.is_some()) {
        fields.push(FieldChoice::Potential);
    }
    fields.extend((0..doc.map_or(0, |d| d.grids.len())).map(FieldChoice::Volume));
    let current = c.color_by.map(|k| k.source);
    let shown = match current {
        Some(f) => state.describe_field(f),
        None => c.coloring.name().to_string(),
    };
    // A potential's name is long ("Potential (Poisson-Boltzmann, ...)"): the combo goes below its
    // label when both do not fit, and its text is cut short, not the label wrapped letter by letter.
    let salt = format!("cartoon_colour_{}", id.0);
    super::widgets::labelled_combo(ui, "Colour", &salt, shown, |ui| {
        for k in Coloring::CHOICES {
            let selected = current.is_none() && c.coloring.same_scheme(k);
            if ui.selectable_label(selected, k.name()).clicked() && !selected {
                commands.push(Command::EditRep(id, RepEdit::CartoonColoring(k)));
            }
        }
        for f in fields {
            if ui
                .selectable_label(current == Some(f), state.describe_field(f))
                .clicked()
                && current != Some(f)
            {
                commands.push(Command::EditRep(id, RepEdit::ColorBy(Some((f, None)))));
            }
        }
    });
    if let (None, Coloring::Solid(rgb)) = (current, c.coloring)
        && let Some(rgb) = solid_color_row(ui, "Cartoon colour", rgb)
    {
        commands.push(Command::EditRep(id, RepEdit::CartoonColoring(Coloring::Solid(rgb))));
    }
}

/// The selection text of a representation (checked as it is typed: the parser's error, else what
/// it picks, under it).
fn selection_ui(
    ui: &mut egui::Ui,
    id: RepId,
    selection: &str,
    error: Option<&str>,
    count: &str,
    commands: &mut Vec<Command>,
) {
    let mut text = selection.to_string();
    let edit = ui.add(
        egui::TextEdit::singleline(&mut text)
            .desired_width(tokens::TEXT_FIELD_WIDTH)
            .hint_text("selection")
            .id_salt(("rep_selection", id.0)),
    );
    if edit.changed() {
        commands.push(Command::EditRep(id, RepEdit::Selection(text)));
    }
    match error {
        Some(e) => ui.label(RichText::new(e).color(tokens::ERROR).small()),
        None => ui.label(RichText::new(count).small().weak()),
    };
}

/// A molecular surface's atoms: typed, taken on Enter (each new selection is a new surface to
/// compute, not one per keystroke); a selection that does not parse is named under it.
fn surface_selection_ui(ui: &mut egui::Ui, state: &AppState, id: RepId, selection: u16, commands: &mut Vec<Command>) {
    let current = state
        .document()
        .and_then(|d| d.surface_selections.get(usize::from(selection)))
        .cloned()
        .unwrap_or_default();
    let memory = ui.make_persistent_id(("surface_selection_text", id.0));
    let mut text = ui
        .data(|d| d.get_temp::<(String, String)>(memory))
        .filter(|(of, _)| *of == current)
        .map_or_else(|| current.clone(), |(_, t)| t);
    let edit = ui
        .add(
            egui::TextEdit::singleline(&mut text)
                .desired_width(tokens::TEXT_FIELD_WIDTH)
                .hint_text("atoms of the surface")
                .id_salt(("surface_selection", id.0)),
        )
        .on_hover_text("The atoms whose molecular surface this is; press Enter to recompute it");
    let parsed = crate::model::select::Selection::parse(&text);
    if edit.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter)) && parsed.is_ok() && text.trim() != current {
        commands.push(Command::EditRep(id, RepEdit::Selection(text.trim().to_string())));
    }
    match parsed {
        Err(e) => ui.label(RichText::new(e.to_string()).color(tokens::ERROR).small()),
        Ok(_) if text.trim() != current => {
            ui.label(RichText::new("press Enter to recompute the surface").small().weak())
        }
        Ok(_) => ui.label(RichText::new("the atoms of this surface").small().weak()),
    };
    ui.data_mut(|d| d.insert_temp(memory, (current, text)));
}

/// A molecular surface's kind: the atoms' summed Gaussians (smooth, fast, on a GPU where there is
/// one) or the solvent-excluded surface of a 1.4 Å probe (MSMS's, PyMOL's and ChimeraX's).
pub(super) fn surface_kind_ui(
    ui: &mut egui::Ui,
    state: &AppState,
    id: RepId,
    selection: u16,
    commands: &mut Vec<Command>,
) {
    use crate::compute::molsurf::SurfaceModel;
    let current = state.document().map(|d| d.surface_model(selection)).unwrap_or_default();
    let mut chosen = current;
    let words = |m: SurfaceModel| match m {
        SurfaceModel::Gaussian { .. } => "Gaussian (smooth, fast)".to_string(),
        SurfaceModel::Excluded { probe_radius_angstrom } => {
            format!("Solvent-excluded (probe {probe_radius_angstrom} Å)")
        }
    };
    ui.horizontal(|ui| {
        let l = ui.label("Surface");
        egui::ComboBox::from_id_salt(("surface_kind", id.0, ui.scope_id()))
            .selected_text(words(current))
            .width((ui.available_width() - 8.0).max(60.0))
            .truncate()
            .show_ui(ui, |ui| {
                for m in [SurfaceModel::default(), SurfaceModel::EXCLUDED] {
                    ui.selectable_value(&mut chosen, m, words(m));
                }
            })
            .response
            .labelled_by(l.id)
            .on_hover_text(
                "Gaussian: the atoms' summed Gaussians (VMD's QuickSurf), computed on a GPU where there is one. \
                 Solvent-excluded: where a 1.4 Å water probe cannot reach (MSMS, PyMOL, ChimeraX), the surface \
                 Poisson-Boltzmann's dielectric follows; computed on a CUDA GPU where there is one, else on \
                 the CPU (slower per frame)",
            );
    });
    if chosen != current {
        commands.push(Command::EditRep(id, RepEdit::SurfaceModel(chosen)));
    }
}

/// The settings of a field representation.
fn field_rep_ui(ui: &mut egui::Ui, state: &AppState, id: RepId, f: &FieldRep, commands: &mut Vec<Command>) {
    let fields = super::fields::available_fields(state);
    let mut field = f.field;
    ui.horizontal(|ui| {
        let l = ui.label("Field");
        egui::ComboBox::from_id_salt(("rep_field", id.0))
            .selected_text(state.describe_field(f.field))
            .width((ui.available_width() - 8.0).max(60.0))
            .truncate()
            .show_ui(ui, |ui| {
                for c in fields {
                    ui.selectable_value(&mut field, c, state.describe_field(c));
                }
            })
            .response
            .labelled_by(l.id);
    });
    if field != f.field {
        commands.push(Command::EditRep(id, RepEdit::Field(field)));
    }
    if let FieldChoice::MolSurf { selection } = f.field {
        surface_selection_ui(ui, state, id, selection, commands);
        surface_kind_ui(ui, state, id, selection, commands);
    }
    ui.horizontal(|ui| {
        let is_slice = matches!(f.style, FieldStyle::Slice(_));
        if ui.selectable_label(!is_slice, "Isosurface").clicked() && is_slice {
            commands.push(Command::EditRep(id, RepEdit::FieldStyle(FieldStyle::Isosurface)));
        }
        // A slice of the molecular surface's level says nothing a chemist reads.
        let can_slice = is_slice || !matches!(f.field, FieldChoice::MolSurf { .. });
        if ui
            .add_enabled(can_slice, egui::Button::selectable(is_slice, "Slice"))
            .on_hover_text("One slice is drawn: the topmost visible slice representation")
            .on_disabled_hover_text(
                "A molecular surface has no values to slice: `slice z` (or x, y) on the command line slices the potential it is coloured by, or add a slice from the Add menu",
            )
            .clicked()
            && !is_slice
        {
            commands.push(Command::EditRep(
                id,
                RepEdit::FieldStyle(FieldStyle::Slice(SlicePlane::default())),
            ));
        }
    });
    if !f.is_surface() {
        return;
    }
    for e in super::fields::iso_controls_ui(ui, state, f) {
        commands.push(Command::EditRep(id, e));
    }
    let grid = f.pipeline.shown.as_ref().map(|(_, g)| g.as_ref());
    ui.horizontal_wrapped(|ui| {
        let lobes = if grid.is_some_and(|g| f.is_signed(g)) || f.field.is_signed() {
            2
        } else {
            1
        };
        // Negative then positive, as the legend reads; where an orbital's colours follow its phase
        // through the frames and are swapped at this one, each swatch still names the sign it
        // colours now.
        let flipped = lobes == 2 && state.follow_flips_sign() && state.followed_rep_id() == Some(id);
        let (positive, negative) = if flipped { (1, 0) } else { (0, 1) };
        let swatches: Vec<(usize, &str, &str)> = if lobes == 2 {
            vec![
                (negative, "−", "The lobe at −isovalue (values below it)"),
                (positive, "+", "The lobe at +isovalue (values above it)"),
            ]
        } else if f.coloring.is_some() {
            // Coloured by a field: its own colour is not what is drawn.
            Vec::new()
        } else {
            vec![(0, "Surface colour", "The surface's colour")]
        };
        for (lobe, name, hover) in swatches {
            let l = ui.label(name);
            let mut rgb = f.colors[lobe];
            let hover = if flipped {
                format!("{hover}. The colours follow the orbital's phase from frame to frame: swapped at this one.")
            } else {
                hover.to_string()
            };
            if ui
                .color_edit_button_rgb(&mut rgb)
                .labelled_by(l.id)
                .on_hover_text(hover)
                .changed()
            {
                commands.push(Command::EditRep(id, RepEdit::Color { lobe, rgb }));
            }
        }
    });
    ui.horizontal(|ui| {
        let l = ui.label("Opacity");
        let mut opacity = f.opacity;
        ui.spacing_mut().slider_width = (ui.available_width() - 60.0).clamp(40.0, 140.0);
        if ui
            .add(
                egui::Slider::new(&mut opacity, 0.05..=1.0)
                    .update_while_editing(false)
                    .max_decimals(2),
            )
            .labelled_by(l.id)
            .changed()
        {
            commands.push(Command::EditRep(id, RepEdit::Opacity(opacity)));
        }
    });
}

/// Adding representations: the "Add" menu (every kind), and atoms by a selection typed here
/// (checked as it is typed).
fn add_ui(ui: &mut egui::Ui, state: &mut AppState, commands: &mut Vec<Command>) {
    ui.menu_button(super::add::ADD_BUTTON, |ui| super::add::add_menu_ui(ui, state))
        .response
        .on_hover_text("Add atoms, cartoon, surface, orbital, density, potential, volume or slice");
    ui.horizontal_wrapped(|ui| {
        let l = ui.label("Atoms");
        let edit = ui
            .add(
                egui::TextEdit::singleline(&mut state.panels.new_selection)
                    .desired_width(tokens::TEXT_FIELD_WIDTH.min(ui.available_width()))
                    .id_salt("new_rep_selection"),
            )
            .labelled_by(l.id);
        let enter = edit.lost_focus() && ui.input(|i| i.key_pressed(Key::Enter));
        if ui.button("Add atoms").clicked() || enter {
            commands.push(Command::AddRep(RepSpec::atoms(
                &state.panels.new_selection,
                AtomStyle::Licorice,
            )));
        }
    });
    if let Err(e) = crate::model::select::Selection::parse(&state.panels.new_selection) {
        ui.label(RichText::new(e.to_string()).color(tokens::ERROR).small());
    }
}

/// View options: fit to a selection, depth cue, background.
pub fn view_options_ui(ui: &mut egui::Ui, state: &mut AppState) {
    ui.horizontal(|ui| {
        let l = ui.label("Fit to");
        let edit = ui
            .add(egui::TextEdit::singleline(&mut state.panels.fit_selection_text).desired_width(110.0))
            .labelled_by(l.id);
        let enter = edit.lost_focus() && ui.input(|i| i.key_pressed(Key::Enter));
        if ui.button("Fit").clicked() || enter {
            send(state, Command::FitToSelection(state.panels.fit_selection_text.clone()));
        }
    });
    // The label first and the slider in the width left, so the row fits the panel (the label
    // after a full-width slider ran past its edge).
    ui.horizontal(|ui| {
        let l = ui.label("Depth cue");
        let mut cue = state.settings.depth_cue;
        ui.spacing_mut().slider_width = (ui.available_width() - 60.0).clamp(40.0, 140.0);
        if ui
            .add(egui::Slider::new(&mut cue, 0.0..=1.0).update_while_editing(false))
            .labelled_by(l.id)
            .on_hover_text("How far atoms fade into the background with depth")
            .changed()
        {
            send(state, Command::SetDepthCue(cue));
        }
    });
    let mut dark = state.settings.dark_background;
    if ui.checkbox(&mut dark, "Dark background").changed() {
        send(state, Command::SetDarkBackground(dark));
    }
    // The file's box (frames fitted onto frame 0 lose theirs while they are).
    let periodic = state.document().is_some_and(|d| d.periodic);
    if periodic {
        let mut cell = state.document().is_some_and(|d| d.cell_shown(state.settings.show_cell));
        if ui
            .checkbox(&mut cell, "Unit cell")
            .on_hover_text(
                "Draw the periodic box (set cell on|off); a crystal structure's unit cell is left out until you ask",
            )
            .changed()
        {
            send(state, Command::ShowCell(cell));
        }
        let mut whole = state.settings.make_whole;
        if ui
            .checkbox(&mut whole, "Whole molecules")
            .on_hover_text(
                "Join molecules the file wrote in pieces across the periodic box, by whole box vectors \
                 (set whole on|off); off: coordinates as written",
            )
            .changed()
        {
            send(state, Command::MakeWhole(whole));
        }
    }
    fit_checkbox(ui, state);
    super::tools::background_ui(ui, state);
}

/// "Fit frames to frame 0" (`fit`, `fit off`), for a document of more than one frame.
pub(super) fn fit_checkbox(ui: &mut egui::Ui, state: &mut AppState) {
    if state.document().is_none_or(|d| d.n_frames <= 1) {
        return;
    }
    let mut fitted = state.fit_selection().is_some();
    let hover = match state.fit_selection() {
        Some(sel) => format!("Frames fitted by '{sel}' (fit off: as read)"),
        None => "Move each frame so that a protein's C-alpha atoms (else the heavy atoms) lie on frame 0's; \
                 'fit SELECTION' fits by other atoms"
            .to_string(),
    };
    if ui
        .checkbox(&mut fitted, "Fit frames to frame 0")
        .on_hover_text(hover)
        .changed()
    {
        send(state, Command::FitFrames(fitted.then_some(None)));
    }
}

/// An atom representation's colouring: a scheme, and a solid colour's picker under it.
fn atom_coloring_ui(ui: &mut egui::Ui, id: RepId, coloring: AtomColoring, commands: &mut Vec<Command>) {
    egui::ComboBox::from_label("Colour")
        .selected_text(coloring.name())
        .show_ui(ui, |ui| {
            for k in AtomColoring::ALL {
                let selected = coloring.same_scheme(k);
                if ui.selectable_label(selected, k.name()).clicked() && !selected {
                    commands.push(Command::EditRep(id, RepEdit::AtomColoring(k)));
                }
            }
        });
    if let AtomColoring::Solid(rgb) = coloring
        && let Some(rgb) = solid_color_row(ui, "Atom colour", rgb)
    {
        commands.push(Command::EditRep(id, RepEdit::AtomColoring(AtomColoring::Solid(rgb))));
    }
}

/// A labelled colour swatch that opens a picker; the colour chosen when it changes.
fn solid_color_row(ui: &mut egui::Ui, label: &str, rgb: [u8; 3]) -> Option<[u8; 3]> {
    ui.horizontal(|ui| {
        let l = ui.label(label);
        let mut edited = rgb;
        let changed = ui
            .color_edit_button_srgb(&mut edited)
            .labelled_by(l.id)
            .on_hover_text("Click to choose the colour (`color N red`, `#rrggbb` or `r,g,b` on the command line)")
            .changed();
        (changed && edited != rgb).then_some(edited)
    })
    .inner
}
