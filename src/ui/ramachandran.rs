//! The Ramachandran plot window (*Measure > Ramachandran plot*): phi against psi of every protein
//! residue at the frame shown (`app::ramachandran`), glycine and proline in their own colours (they
//! have regions of their own), the picked residue ringed. A click on a point picks that residue's
//! CA, as a click on it in the view; hovering names the residue.

use super::send;
use crate::analysis::ramachandran::PhiPsi;
use crate::app::state::{AppState, Command};
use egui::Color32;

const GLY: Color32 = Color32::from_rgb(240, 150, 40);
const PRO: Color32 = Color32::from_rgb(60, 180, 90);
const OTHER: Color32 = Color32::from_rgb(90, 140, 230);

/// The window's title and the Measure menu's entry.
pub const TITLE: &str = "Ramachandran plot";

/// The window, while open.
pub fn ramachandran_window(ctx: &egui::Context, state: &mut AppState) {
    use egui_plot::{Plot, PlotPoints, Points};
    if !state.panels.ramachandran.open {
        return;
    }
    state.refresh_ramachandran();
    let picked_ca = state.view.pick.as_ref().map(|p| p.atom as u32);
    let mut open = true;
    let mut clicked: Option<u32> = None;
    let Some((_, points)) = state.panels.ramachandran.points.as_ref() else {
        state.panels.ramachandran.open = false;
        return;
    };
    let defined: Vec<&(PhiPsi, &'static str, String)> = points
        .iter()
        .filter(|(p, _, _)| p.phi_degree.is_some() && p.psi_degree.is_some())
        .collect();
    let series = |class: &str| -> Vec<[f64; 2]> {
        defined
            .iter()
            .filter(|(_, c, _)| *c == class)
            .filter_map(|(p, _, _)| Some([p.phi_degree?, p.psi_degree?]))
            .collect()
    };
    let picked: Vec<[f64; 2]> = defined
        .iter()
        .filter(|(p, _, _)| Some(p.ca) == picked_ca)
        .filter_map(|(p, _, _)| Some([p.phi_degree?, p.psi_degree?]))
        .collect();
    let count = defined.len();
    let screen = ctx.content_rect();
    egui::Window::new(TITLE)
        .open(&mut open)
        .default_pos(egui::pos2(screen.center().x - 190.0, screen.min.y + 80.0))
        .default_size([380.0, 400.0])
        .show(ctx, |ui| {
            if count == 0 {
                ui.label("No protein residue with both phi and psi (the backbone needs N, CA, C and its neighbours).");
                return;
            }
            ui.label(
                egui::RichText::new(format!(
                    "{count} residues at this frame; phi and psi in degrees. Click a point to pick its residue."
                ))
                .small(),
            );
            let response = Plot::new("ramachandran_plot")
                .height(320.0)
                .data_aspect(1.0)
                // The torsions' own square, -180 to 180 degrees, marked every 60 (30 between).
                .default_x_bounds(-180.0, 180.0)
                .default_y_bounds(-180.0, 180.0)
                .set_margin_fraction(egui::Vec2::ZERO)
                .x_grid_spacer(|g| degree_marks(g, 90.0))
                .y_grid_spacer(|g| degree_marks(g, 60.0))
                .x_axis_formatter(super::widgets::round_mark_text)
                .y_axis_formatter(super::widgets::round_mark_text)
                .legend(egui_plot::Legend::default())
                .x_axis_label("phi (°)")
                .y_axis_label("psi (°)")
                .show(ui, |plot| {
                    for (name, class, color) in [
                        ("other", "other", OTHER),
                        ("glycine", "GLY", GLY),
                        ("proline", "PRO", PRO),
                    ] {
                        plot.points(
                            Points::new(name, PlotPoints::from(series(class)))
                                .color(color)
                                .radius(2.5),
                        );
                    }
                    if !picked.is_empty() {
                        plot.points(
                            // White, where glycine's orange and the selection's yellow looked
                            // alike.
                            Points::new("picked", PlotPoints::from(picked.clone()))
                                .color(Color32::WHITE)
                                .radius(6.0)
                                .filled(false),
                        );
                    }
                    plot.pointer_coordinate()
                });
            // The point nearest the pointer (within 8 degrees) names its residue; a click picks it.
            if let Some(at) = response.inner {
                let near = defined
                    .iter()
                    .filter_map(|(p, _, label)| {
                        let d = (p.phi_degree? - at.x).hypot(p.psi_degree? - at.y);
                        (d < 8.0).then_some((d, p.ca, label))
                    })
                    .min_by(|a, b| a.0.total_cmp(&b.0));
                if let Some((_, ca, label)) = near {
                    response.response.clone().on_hover_text_at_pointer(label.as_str());
                    if response.response.clicked() {
                        clicked = Some(ca);
                    }
                }
            }
        });
    if !open {
        state.panels.ramachandran.open = false;
    }
    if let Some(ca) = clicked {
        send(state, Command::PickAtom(Some(ca as usize)));
    }
}

/// Grid marks of a torsion axis: every 30 degrees from -180 to 180, those at multiples of
/// `label_degree` with that larger step (so they are the labelled ones: the x axis's labels need
/// more room than the y axis's).
fn degree_marks(input: egui_plot::GridInput, label_degree: f64) -> Vec<egui_plot::GridMark> {
    let (lo, hi) = input.bounds;
    (-12..=12)
        .map(|k| f64::from(k) * 30.0)
        .filter(|v| (lo..=hi).contains(v))
        .map(|value| egui_plot::GridMark {
            value,
            step_size: if value % label_degree == 0.0 {
                label_degree
            } else {
                30.0
            },
        })
        .collect()
}
