//! The ligand free-energy (implicit ligand sampling) controls: the form of the Add menu's "Ligand
//! free energy (ILS)" entry (probe, spacing, sub-samples, orientations, atoms, frames, alignment,
//! parameters; what is missing when the files carry no Lennard-Jones parameters) and the field
//! panel's section for a map (its progress with Pause, Continue and Cancel, the surface's free
//! energy and the unit, kT or kcal/mol, beside every number). The computation lives in `app::ils`.

use super::{send, tokens};
use crate::app::fields::FieldChoice;
use crate::app::ils::{ProbeChoice, kt_kcal};
use crate::app::state::{AppState, Command};
use crate::app::values::{FieldUnit, PotentialDisplay, format_number};
use egui::RichText;

/// Label of the Add menu's entry that opens the form.
pub const ILS_MENU: &str = "Ligand free energy (ILS)…";
/// Title of the form's window.
pub const ILS_WINDOW: &str = "Ligand free energy (ILS)";
/// Label of the button that starts a map.
pub const ILS_START: &str = "Compute ligand free energy";

fn small_note(ui: &mut egui::Ui, text: impl Into<String>) {
    ui.add(egui::Label::new(RichText::new(text.into()).small()).wrap());
}

/// The form's window, while it is open.
pub fn ils_window(ctx: &egui::Context, state: &mut AppState) {
    let mut open = state.panels.ils.form_open;
    if !open {
        return;
    }
    egui::Window::new(ILS_WINDOW)
        .open(&mut open)
        .collapsible(false)
        .resizable(false)
        .default_width(360.0)
        .show(ctx, |ui| ils_form_ui(ui, state));
    // The form's own button may have closed it too.
    state.panels.ils.form_open &= open;
}

/// The form of a new map (the window the Add menu's "Ligand free energy (ILS)…" opens).
pub fn ils_form_ui(ui: &mut egui::Ui, state: &mut AppState) {
    let Some(doc) = state.doc.document.as_ref() else {
        ui.label("Open a trajectory first.");
        return;
    };
    if doc.n_frames == 0 {
        ui.label("The files hold no coordinates.");
        return;
    }
    let n_frames = doc.n_frames;
    small_note(
        ui,
        "Where a small gas molecule would sit in the protein, averaged over the trajectory's frames \
         (Cohen et al. 2006): the free energy relative to the gas in vacuum, from its Lennard-Jones \
         energy with the atoms; negative where the gas is favoured.",
    );
    let form = &mut state.panels.ils.form;
    egui::Grid::new("ils_form").num_columns(2).show(ui, |ui| {
        let l = ui.label("Probe");
        egui::ComboBox::from_id_salt("ils_probe")
            .selected_text(form.probe.label())
            .show_ui(ui, |ui| {
                for p in ProbeChoice::ALL {
                    ui.selectable_value(&mut form.probe, p, p.label());
                }
            })
            .response
            .labelled_by(l.id);
        ui.end_row();
        let l = ui.label("Spacing");
        ui.add(
            egui::DragValue::new(&mut form.spacing_angstrom)
                .update_while_editing(false)
                .range(0.25..=5.0)
                .speed(0.05)
                .suffix(" Å"),
        )
        .labelled_by(l.id);
        ui.end_row();
        let l = ui.label("Samples per voxel edge");
        ui.add(
            egui::DragValue::new(&mut form.subres)
                .update_while_editing(false)
                .range(1..=8),
        )
        .labelled_by(l.id)
        .on_hover_text("subres³ points per voxel are averaged");
        ui.end_row();
        let l = ui.label("Orientations");
        ui.add(
            egui::DragValue::new(&mut form.orientations)
                .update_while_editing(false)
                .range(1..=2000),
        )
        .labelled_by(l.id)
        .on_hover_text("Evenly spread directions of a diatomic probe (Xe has one)");
        ui.end_row();
        for (label, text, salt, hover) in [
            (
                "Atoms",
                &mut form.selection,
                "ils_sel",
                "The atoms the gas feels (selection language)",
            ),
            (
                "Map around",
                &mut form.around,
                "ils_around",
                "The atoms the map's box is placed around, 2 Å padded (empty: the atoms above)",
            ),
            (
                "Frames",
                &mut form.frames,
                "ils_frames",
                "all, N, A:B or A:B:S (first frame 0, end excluded)",
            ),
            (
                "Align by",
                &mut form.align,
                "ils_align",
                "Fit every frame onto the first by these atoms (empty: frames as they are)",
            ),
            (
                "Parameter file",
                &mut form.params_file,
                "ils_params",
                "A CHARMM .prm or .str file for a PSF's atom types (empty: the topology's own)",
            ),
        ] {
            let l = ui.label(label);
            ui.add(
                egui::TextEdit::singleline(text)
                    .desired_width(tokens::TEXT_FIELD_WIDTH)
                    .id_salt(salt),
            )
            .labelled_by(l.id)
            .on_hover_text(hover);
            ui.end_row();
        }
    });
    let check = match state.doc.document.as_ref() {
        Some(doc) => state.panels.ils.parameters_check(doc),
        None => Err("Open a trajectory first.".into()),
    };
    // Files without a force field take the element table whatever the box says: it shows so.
    let forced = !state.panels.ils.form.element_table
        && check
            .as_ref()
            .is_ok_and(|s| s.starts_with("the element table") && s.contains("no force field"));
    if forced {
        ui.add_enabled(false, egui::Checkbox::new(&mut true, "element table"))
            .on_disabled_hover_text(
                "The files carry no force field: every atom's parameters come from the element table (UFF)",
            );
    } else {
        ui.checkbox(&mut state.panels.ils.form.element_table, "element table")
            .on_hover_text("Generic Lennard-Jones parameters per element (UFF) instead of the force field's");
    }
    small_note(ui, format!("{n_frames} frames in the trajectory; 300 K, cutoff 10 Å."));
    match &check {
        Ok(source) => small_note(ui, format!("Lennard-Jones parameters: {source}")),
        Err(missing) => {
            ui.add(egui::Label::new(RichText::new(missing).color(tokens::ERROR)).wrap());
        }
    }
    // A failed start's reason, unless the parameters line above already says it.
    if let Some(e) = &state.panels.ils.error
        && check.as_ref().err() != Some(e)
    {
        ui.add(egui::Label::new(RichText::new(e).color(tokens::ERROR)).wrap());
    }
    if ui.add_enabled(check.is_ok(), egui::Button::new(ILS_START)).clicked() {
        send(state, Command::StartIls);
        state.panels.ils.form_open = false;
    }
}

/// The field panel's section for map `index`: progress, Pause/Continue/Cancel, the unit and the
/// pathways (the isovalue is `ils_iso_ui`, through the field panel's isovalue controls).
pub fn ils_panel_ui(ui: &mut egui::Ui, state: &mut AppState, index: u16) {
    let Some(map) = state
        .document()
        .and_then(|d| d.ils_maps.get(usize::from(index)))
        .cloned()
    else {
        return;
    };
    let field = FieldChoice::Ils(index);
    let unit = FieldUnit::of(field, state.settings.potential_unit);
    ui.add(egui::Label::new(RichText::new(map.title()).strong()).wrap());
    small_note(ui, map.summary.clone());
    small_note(ui, format!("Lennard-Jones parameters: {}", map.parameters));
    let running_here = state
        .panels
        .ils
        .running_map()
        .is_some_and(|(id, i)| Some(id) == state.document().map(|d| d.id) && i == usize::from(index));
    if running_here {
        // A frame on the CPU takes minutes for a solvated protein: its share done is shown.
        let partly = state.panels.ils.frames_partly_done(&map);
        // "the next", not a number: frames are numbered from 0 on the timeline, and the frames
        // asked for need not start there.
        let within = if partly >= 0.01 && map.frames_done < map.frames_total {
            format!(", the next {:.0} % done", 100.0 * partly.min(0.999))
        } else {
            String::new()
        };
        let text = format!(
            "{} of {} frames{within}{}",
            map.frames_done,
            map.frames_total,
            if map.paused { " (paused)" } else { "" }
        );
        let fraction = (map.frames_done as f32 + partly) / map.frames_total.max(1) as f32;
        ui.add(egui::ProgressBar::new(fraction.min(1.0)).text(text));
        ui.horizontal(|ui| {
            if map.paused {
                if ui.button("Continue").clicked() {
                    send(state, Command::PauseIls(false));
                }
            } else if ui.button("Pause").clicked() {
                send(state, Command::PauseIls(true));
            }
            if ui.button("Cancel").clicked() {
                send(state, Command::CancelIls);
            }
        });
    } else if map.cancelled {
        small_note(
            ui,
            format!("stopped after {} of {} frames", map.frames_done, map.frames_total),
        );
    } else if map.frames_done < map.frames_total {
        small_note(
            ui,
            format!(
                "waiting: starts when the map computing now is done ({} frames)",
                map.frames_total
            ),
        );
    }
    if !map.engine.is_empty() {
        small_note(ui, format!("computed on {}", map.engine));
    }
    // The unit: kT at the map's temperature, or kcal/mol.
    let mut kcal = state.settings.potential_unit == PotentialDisplay::KcalPerMolPerE;
    let before = kcal;
    ui.horizontal(|ui| {
        ui.label("Unit");
        ui.radio_value(&mut kcal, false, "kT");
        ui.radio_value(&mut kcal, true, "kcal/mol");
    });
    if kcal != before {
        send(
            state,
            Command::SetPotentialUnit(if kcal {
                PotentialDisplay::KcalPerMolPerE
            } else {
                PotentialDisplay::KtPerE
            }),
        );
    }
    paths_ui(ui, state, index, &map, &unit);
}

/// The isovalue control of an ILS representation `f` (a free energy, negative where the gas is
/// favoured): a number in the map's unit; the new value in kT when the user changed it.
pub fn ils_iso_ui(ui: &mut egui::Ui, state: &AppState, f: &crate::app::reps::FieldRep) -> Option<f32> {
    let FieldChoice::Ils(index) = f.field else {
        return None;
    };
    let max_kt = state
        .document()
        .and_then(|d| d.ils_maps.get(usize::from(index)))
        .map_or(crate::model::ils::DEFAULT_MAX_ENERGY_KT, |m| m.max_energy_kt);
    let unit = FieldUnit::of(f.field, state.settings.potential_unit);
    let grid = f.pipeline.shown.as_ref().map(|(_, g)| g.clone());
    let iso_kt = match &grid {
        Some(g) => f.absolute_iso(g),
        None => f.iso.value.unwrap_or(crate::app::ils::DEFAULT_ISO_KT),
    };
    let mut shown = unit.show(iso_kt);
    let changed = ui
        .horizontal(|ui| {
            let l = ui.label("Surface at");
            ui.add(
                egui::DragValue::new(&mut shown)
                    .update_while_editing(false)
                    .range(-50.0 * unit.scale..=max_kt * unit.scale)
                    .speed(0.05 * unit.scale)
                    .max_decimals(3)
                    .suffix(format!(" {}", unit.label)),
            )
            .labelled_by(l.id)
            .on_hover_text("The free energy of the surface; it encloses where the gas is favoured (below it)")
            .changed()
        })
        .inner;
    small_note(
        ui,
        format!(
            "surface at {} encloses the regions below it; 1 kT = {} kcal/mol at 300 K",
            unit.format(iso_kt),
            format_number(kt_kcal())
        ),
    );
    if let Some((lo, hi)) = grid.as_deref().and_then(|g| g.min_max()) {
        small_note(
            ui,
            format!(
                "values {} .. {} (capped at {})",
                unit.format(lo),
                unit.format(hi),
                unit.format(max_kt as f32)
            ),
        );
    }
    (changed && shown.is_finite() && shown != 0.0).then(|| unit.computed(shown))
}

/// Label of the button that finds a pathway to bulk.
pub const PATH_TO_BULK: &str = "Path to bulk from the picked atom";
/// Label of the button that marks a pathway's end.
pub const PATH_MARK_END: &str = "Mark the picked atom as the end";
/// Label of the button that finds a pathway between two points.
pub const PATH_TO_END: &str = "Path from the picked atom to the end";

/// The pathways of a map: buttons from the picked atom, and each path's barrier and length.
fn paths_ui(ui: &mut egui::Ui, state: &mut AppState, index: u16, map: &crate::app::ils::IlsMapState, unit: &FieldUnit) {
    ui.separator();
    ui.label(RichText::new("Pathways").strong());
    let picked = state.view.pick.as_ref().map(|p| p.atom);
    let ready = map.grid.is_some();
    small_note(
        ui,
        match picked {
            Some(a) => format!(
                "From the most favoured point within {} Å of atom {} (picked); the path with the lowest \
                 barrier, then the shortest",
                crate::app::ils::PICK_RADIUS_ANGSTROM,
                a + 1
            ),
            None => "Click an atom in the view to start a path near it.".into(),
        },
    );
    ui.horizontal_wrapped(|ui| {
        let can = ready && picked.is_some();
        if ui.add_enabled(can, egui::Button::new(PATH_TO_BULK)).clicked() {
            send(state, Command::IlsPath(index, false));
        }
        if ui.add_enabled(can, egui::Button::new(PATH_MARK_END)).clicked() {
            send(state, Command::IlsMarkPathEnd(index));
        }
        if ui
            .add_enabled(can && map.path_end_angstrom.is_some(), egui::Button::new(PATH_TO_END))
            .clicked()
        {
            send(state, Command::IlsPath(index, true));
        }
    });
    if let Some(e) = map.path_end_angstrom {
        small_note(ui, format!("end at ({:.1}, {:.1}, {:.1}) Å", e[0], e[1], e[2]));
    }
    for p in &map.paths {
        small_note(ui, p.describe(unit));
    }
    if !map.paths.is_empty() && ui.button("Clear paths").clicked() {
        send(state, Command::IlsClearPaths(index));
    }
    ui.separator();
}
