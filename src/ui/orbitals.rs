//! The orbitals section: the orbital list (energy, occupation, symmetry, HOMO/LUMO labels from
//! `Wavefunction::homo`), the spin switch, the energy-level diagram and "follow through frames".
//! Choosing an orbital shows it in the selected orbital representation (else the topmost orbital
//! representation, else a new one; `app::reps::select`), never in a density or potential
//! representation; Shift+click adds another orbital representation.

use super::{send, tokens};
use crate::app::state::{AppState, Command};
use crate::model::Spin;
use crate::model::units::EV_PER_HARTREE;
use egui::RichText;

/// "Follow through frames": match the selected orbital frame by frame by overlap, and say how good
/// the match at this frame is.
fn follow_ui(ui: &mut egui::Ui, state: &mut AppState) {
    let series = state
        .doc
        .document
        .as_ref()
        .is_some_and(|d| d.wavefunctions.len() > 1 && d.wavefunctions.len() == d.n_frames);
    if !series {
        return;
    }
    let mut on = state.doc.follow.is_some();
    if ui
        .checkbox(&mut on, "Follow through frames")
        .on_hover_text("Match this orbital in every frame by maximum overlap, with its phase kept")
        .changed()
    {
        send(state, Command::FollowOrbital(on));
    }
    // What is followed: the orbital picked and the frame it was picked at.
    if let Some(f) = &state.doc.follow {
        let spin = if state.is_unrestricted() {
            format!(" ({:?})", f.spin).to_lowercase()
        } else {
            String::new()
        };
        ui.label(
            RichText::new(format!(
                "following orbital {}{spin} of frame {}",
                f.anchor_index + 1,
                f.anchor_frame
            ))
            .small(),
        );
    }
    if state.doc.follow.as_ref().is_some_and(|f| f.steps.is_none()) {
        ui.horizontal(|ui| {
            ui.spinner();
            ui.label("matching…");
        });
    } else if let Some(step) = state.follow_step() {
        let text = format!(
            "overlap with the previous frame {:.3}{}",
            step.overlap,
            if step.runner_up > 0.0 {
                format!(", next best {:.3}", step.runner_up)
            } else {
                String::new()
            }
        );
        if step.ambiguous {
            ui.label(RichText::new(format!("ambiguous match: {text}")).color(tokens::ERROR));
        } else {
            ui.label(RichText::new(text).small());
        }
    }
}

/// What picking orbital `index` does: shown in the orbital representation the list edits (the
/// selected one, else the topmost, else a new one), or with Shift held in a new representation.
fn pick_command(ui: &egui::Ui, index: usize) -> Command {
    if ui.input(|i| i.modifiers.shift) {
        Command::AddOrbitalRep(index)
    } else {
        Command::SelectOrbital(Some(index))
    }
}

/// What the list says of orbital energies a log printed without orbitals that can be drawn.
pub const NOT_DRAWABLE: &str = "Energies from the log's last ORBITAL ENERGIES table (its last step): the log \
     holds no orbitals to draw (the Files section says which keywords to add)";

/// The orbital list (energy, occupation, symmetry, HOMO/LUMO), spin switch and energy diagram.
pub fn orbitals_ui(ui: &mut egui::Ui, state: &mut AppState) {
    let rows = state.orbital_rows(state.doc.spin);
    if rows.is_empty() {
        match state.document().and_then(|d| d.frames_with_orbitals_text()) {
            Some(frames) => ui.label(format!(
                "No orbitals at this frame: the log printed them at {frames} only."
            )),
            None => ui.label("No wavefunction."),
        };
        return;
    }
    // Wrapped: spin, units and the gap do not fit one line of the panel for an open shell.
    ui.horizontal_wrapped(|ui| {
        if state.is_unrestricted() {
            let mut spin = state.doc.spin;
            ui.selectable_value(&mut spin, Spin::Alpha, "alpha");
            ui.selectable_value(&mut spin, Spin::Beta, "beta");
            if spin != state.doc.spin {
                send(state, Command::SetSpin(spin));
            }
        }
        let mut ev = state.settings.energies_in_ev;
        ui.selectable_value(&mut ev, true, "eV");
        ui.selectable_value(&mut ev, false, "hartree");
        if ev != state.settings.energies_in_ev {
            send(state, Command::SetEnergiesInEv(ev));
        }
        // The frontier orbitals' gap, in the unit chosen beside it.
        let spin = state.doc.spin;
        let energy_of = |i: usize| {
            rows.iter()
                .find(|r| r.index == i)
                .map(|r| r.energy_hartree)
                .filter(|e| e.is_finite())
        };
        if let Some(homo) = state.homo_index(spin)
            && let (Some(h), Some(l)) = (energy_of(homo), energy_of(homo + 1))
        {
            ui.label(format!("gap {}", state.format_energy(l - h)))
                .on_hover_text(format!(
                    "HOMO-LUMO gap: HOMO {}, LUMO {}",
                    state.format_energy(h),
                    state.format_energy(l)
                ));
        }
    });
    // Energies from a log's table without orbitals to draw: listed, not drawn.
    let drawable = state.orbital_levels().is_none();
    if !drawable {
        ui.add(egui::Label::new(RichText::new(NOT_DRAWABLE).small()).wrap());
    }
    energy_diagram_ui(ui, state, &rows);
    let selected = state.doc.orbital;
    let homo = state.homo_index(state.doc.spin).unwrap_or(0);
    follow_ui(ui, state);
    // The column names stay above the list as it scrolls (inside it they scrolled away, leaving
    // "2.00 A" to be read as a length); the symmetry column only when the file gives symmetries
    // other than A (C1).
    let with_symmetry = rows.iter().any(|r| !r.symmetry.is_empty() && r.symmetry != "A");
    let [w_orbital, w_energy, w_occupation, w_symmetry] = column_widths(
        ui.available_width() - ui.spacing().scroll.bar_width - ui.spacing().scroll.bar_outer_margin,
        CELL_GAP,
        with_symmetry,
    );
    let heading = |ui: &mut egui::Ui, width: f32, text: &str, hover: &str| {
        cell(ui, width, |ui| {
            ui.add(egui::Label::new(RichText::new(text).strong()).truncate())
                .on_hover_text(hover);
        });
    };
    ui.horizontal(|ui| {
        ui.spacing_mut().item_spacing.x = CELL_GAP;
        heading(ui, w_orbital, "orbital", "Number in the file, from 1");
        let unit = if state.settings.energies_in_ev { "eV" } else { "Eh" };
        heading(ui, w_energy, &format!("E ({unit})"), "Orbital energy");
        heading(ui, w_occupation, "occ.", "Occupation (electrons)");
        if with_symmetry {
            heading(ui, w_symmetry, "sym", "Symmetry label from the file");
        }
    });
    egui::ScrollArea::vertical()
        .id_salt("orbital_list")
        .max_height(260.0)
        .show(ui, |ui| {
            // Frontier orbitals first in view: list from high to low energy around the gap.
            for row in rows
                .iter()
                .rev()
                .filter(|r| r.index + 12 >= homo && r.index <= homo + 12)
            {
                ui.horizontal(|ui| {
                    ui.spacing_mut().item_spacing.x = CELL_GAP;
                    let text = if row.label.is_empty() {
                        format!("{}", row.index + 1)
                    } else {
                        format!("{} {}", row.index + 1, row.label)
                    };
                    cell(ui, w_orbital, |ui| {
                        let r = ui
                            .add(egui::Button::selectable(selected == Some(row.index), text).truncate())
                            .on_hover_text(if drawable {
                                "Click: show it in the orbital representation; Shift+click: in a new one"
                            } else {
                                NOT_DRAWABLE
                            });
                        if r.clicked() && drawable {
                            send(state, pick_command(ui, row.index));
                        }
                        if state.panels.scroll_to_orbital && selected == Some(row.index) {
                            r.scroll_to_me(Some(egui::Align::Center));
                            state.panels.scroll_to_orbital = false;
                        }
                    });
                    cell(ui, w_energy, |ui| {
                        // The unit is the column's ("energy (eV)").
                        let text = state.format_energy(row.energy_hartree);
                        let number = text.split_once(' ').map_or(text.as_str(), |(n, _)| n);
                        ui.add(egui::Label::new(number).truncate()).on_hover_text(&text);
                    });
                    cell(ui, w_occupation, |ui| {
                        ui.add(egui::Label::new(occupation_text(row.occupation)).truncate());
                    });
                    if with_symmetry {
                        cell(ui, w_symmetry, |ui| {
                            ui.add(egui::Label::new(&row.symmetry).truncate());
                        });
                    }
                });
            }
        });
}

/// Widths of the orbital list's columns (points) where there is room, shared by the names above the
/// list and its rows.
const COLUMN_ORBITAL: f32 = 84.0;
const COLUMN_ENERGY: f32 = 50.0;
const COLUMN_OCCUPATION: f32 = 26.0;
const COLUMN_SYMMETRY: f32 = 24.0;
/// Points between the list's cells.
const CELL_GAP: f32 = 4.0;

/// An occupation as the list shows it: "2" and "0" for whole numbers of electrons, "1.37" else.
fn occupation_text(electrons: f64) -> String {
    if (electrons - electrons.round()).abs() < 1e-6 {
        format!("{:.0}", electrons.round())
    } else {
        format!("{electrons:.2}")
    }
}

/// The columns' widths (orbital, energy, occupation, symmetry) in `available` points with `gap`
/// between cells: the defaults where they fit; else the number columns give up to two fifths of
/// their width first (the orbital's name, "36 LUMO+1", is what is read), then all shrink together, so the
/// list stays inside its panel (a GAMESS log's symmetry column made it wider than the panel).
fn column_widths(available: f32, gap: f32, with_symmetry: bool) -> [f32; 4] {
    let sym = if with_symmetry { COLUMN_SYMMETRY } else { 0.0 };
    let cells = if with_symmetry { 4.0 } else { 3.0 };
    let room = (available - gap * (cells - 1.0)).max(0.0);
    let numbers = COLUMN_ENERGY + COLUMN_OCCUPATION + sym;
    let k_numbers = ((room - COLUMN_ORBITAL) / numbers).clamp(0.6, 1.0);
    let want = COLUMN_ORBITAL + numbers * k_numbers;
    let k = (room / want).min(1.0);
    [
        COLUMN_ORBITAL * k,
        COLUMN_ENERGY * k_numbers * k,
        COLUMN_OCCUPATION * k_numbers * k,
        sym * k_numbers * k,
    ]
}

/// A cell of the orbital list: `width` wide, its content from the left.
fn cell(ui: &mut egui::Ui, width: f32, content: impl FnOnce(&mut egui::Ui)) {
    let height = ui.spacing().interact_size.y;
    ui.allocate_ui_with_layout(
        egui::vec2(width, height),
        egui::Layout::left_to_right(egui::Align::Center),
        |ui| {
            ui.set_min_width(width);
            content(ui);
        },
    );
}

/// Horizontal extent of each shown level in the energy diagram: degenerate levels (within 1e-4
/// hartree) sit side by side, so each can be seen and clicked.
pub fn level_extents(energies_hartree: &[f64]) -> Vec<[f64; 2]> {
    let mut out = vec![[0.0, 1.0]; energies_hartree.len()];
    let mut k = 0;
    while k < energies_hartree.len() {
        let mut end = k + 1;
        while end < energies_hartree.len() && (energies_hartree[end] - energies_hartree[k]).abs() < 1e-4 {
            end += 1;
        }
        let n = (end - k) as f64;
        for (j, slot) in out[k..end].iter_mut().enumerate() {
            let w = 1.0 / n;
            *slot = [j as f64 * w + 0.08 * w, (j as f64 + 1.0) * w - 0.08 * w];
        }
        k = end;
    }
    out
}

/// How the energy diagram draws the level of orbital `index` (of the spin shown): the selected
/// orbital highlighted, another orbital shown by a visible representation in that representation's
/// positive-lobe colour (so HOMO and LUMO shown together are both marked), the rest green when
/// occupied, grey when virtual; (colour, line width in points).
pub fn level_style(state: &AppState, index: usize, occupied: bool) -> (egui::Color32, f32) {
    use crate::app::fields::FieldChoice;
    if state.doc.orbital == Some(index) {
        return (tokens::SELECTED, 3.0);
    }
    let spin = state.doc.spin;
    let shown_in = state
        .reps()
        .fields()
        .find(|(r, f)| r.visible && f.field == FieldChoice::Orbital { spin, index });
    match shown_in {
        Some((_, f)) => {
            let [r, g, b] = f.colors[0];
            (egui::Rgba::from_rgb(r, g, b).into(), 3.0)
        }
        None if occupied => (tokens::OCCUPIED, 1.5),
        None => (tokens::VIRTUAL, 1.5),
    }
}

/// The energy-level diagram around the frontier orbitals; clicking a level selects its orbital.
/// How far below the HOMO (hartree) a level counts as a core level the diagram leaves out.
const CORE_BELOW_HOMO_HARTREE: f64 = 2.0;

fn energy_diagram_ui(ui: &mut egui::Ui, state: &mut AppState, rows: &[crate::app::orbitals::OrbitalRow]) {
    use egui_plot::{Line, Plot, PlotPoints};
    let homo = state.homo_index(state.doc.spin).unwrap_or(0);
    // Core levels (an oxygen 1s at -559 eV) would set the scale and squeeze the frontier into one
    // line: levels more than 2 hartree (54 eV) below the HOMO are left out of the diagram.
    let e_homo = rows
        .iter()
        .find(|r| r.index == homo)
        .map_or(f64::NEG_INFINITY, |r| r.energy_hartree);
    let mut shown: Vec<_> = rows
        .iter()
        .filter(|r| r.index + 5 >= homo && r.index <= homo + 6 && r.energy_hartree.is_finite())
        .filter(|r| r.energy_hartree >= e_homo - CORE_BELOW_HOMO_HARTREE)
        .collect();
    shown.sort_by(|a, b| {
        a.energy_hartree
            .total_cmp(&b.energy_hartree)
            .then(a.index.cmp(&b.index))
    });
    let extents = level_extents(&shown.iter().map(|r| r.energy_hartree).collect::<Vec<_>>());
    let response = Plot::new("energy_levels")
        .height(160.0)
        .allow_drag(false)
        .allow_zoom(false)
        .allow_scroll(false)
        .allow_boxed_zoom(false)
        .allow_double_click_reset(false)
        .show_x(false)
        // The horizontal position only spreads degenerate levels apart: no axis for it.
        .show_axes([false, true])
        .y_axis_label("eV")
        // Round marks (egui_plot's default spacing left a wide range with only "0").
        .y_grid_spacer(|g| super::widgets::round_grid_marks(g, super::widgets::PLOT_Y_LABEL_POINTS))
        .show(ui, |plot| {
            for (r, x) in shown.iter().zip(&extents) {
                let e = r.energy_hartree * EV_PER_HARTREE;
                let (color, width) = level_style(state, r.index, r.occupied);
                let name = if r.label.is_empty() {
                    format!("{}", r.index + 1)
                } else {
                    r.label.clone()
                };
                plot.line(
                    Line::new(name, PlotPoints::from(vec![[x[0], e], [x[1], e]]))
                        .color(color)
                        .width(width),
                );
            }
        });
    if response.response.clicked()
        && let Some(pos) = response.response.interact_pointer_pos()
    {
        // The level under the pointer: inside its horizontal extent, nearest on screen, within 8 points.
        let t = &response.transform;
        let p = t.value_from_position(pos);
        let best = shown
            .iter()
            .zip(&extents)
            .filter(|(_, x)| p.x >= x[0] - 0.05 && p.x <= x[1] + 0.05)
            .map(|(r, _)| {
                let y = t
                    .position_from_point(&egui_plot::PlotPoint::new(0.0, r.energy_hartree * EV_PER_HARTREE))
                    .y;
                (r.index, (y - pos.y).abs())
            })
            .filter(|(_, d)| *d <= 8.0)
            .min_by(|a, b| a.1.total_cmp(&b.1));
        if let Some((index, _)) = best
            && state.orbital_levels().is_none()
        {
            send(state, pick_command(ui, index));
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_orbital_names_keep_their_width_while_the_numbers_give_way() {
        // A 1280-point window's right panel: about 175 points for the list.
        let [orbital, energy, occupation, _] = super::column_widths(175.0, 8.0, false);
        assert!((orbital - super::COLUMN_ORBITAL).abs() < 1e-3, "{orbital}");
        assert!(orbital + energy + occupation + 16.0 <= 175.0 + 1e-3);
        // With a symmetry column (a GAMESS log) at 1280 points the list has about 193: the names
        // ("38 LUMO+2") keep their whole width and the numbers theirs ("-4.065", "2", "BG").
        let w = super::column_widths(193.0, super::CELL_GAP, true);
        assert_eq!(w[0], super::COLUMN_ORBITAL, "{w:?}");
        assert!(w[1] >= 44.0 && w[2] >= 20.0 && w[3] >= 20.0, "{w:?}");
        assert_eq!(super::occupation_text(2.0), "2");
        assert_eq!(super::occupation_text(1.3749), "1.37");
        // Narrower still: everything shrinks, and the list stays inside its panel.
        let w = super::column_widths(120.0, 8.0, true);
        assert!(w.iter().sum::<f32>() + 24.0 <= 120.0 + 1e-3, "{w:?}");
    }
}
