//! The energy plot window (*Measure > Energy per step*, or the timeline's energy line): each
//! frame's total energy above the lowest, in kcal/mol, for a QM log's optimisation, scan or
//! dynamics steps or a series of wavefunctions with energies (`app::energies`). The frame shown is
//! ringed; a click on a point goes to that frame.

use super::{send, tokens};
use crate::app::energies::{lowest, relative_kcal_per_mol, total_energy_text};
use crate::app::state::{AppState, Command};

/// The window's title and the Measure menu's entry.
pub const TITLE: &str = "Energy per step";

/// The window, while open.
pub fn energy_window(ctx: &egui::Context, state: &mut AppState) {
    use egui_plot::{Line, Plot, PlotPoints, Points};
    if !state.panels.energies.open {
        return;
    }
    let Some(energies) = state.frame_energies() else {
        state.panels.energies.open = false;
        return;
    };
    let points = relative_kcal_per_mol(energies);
    let Some((low_frame, low)) = lowest(energies) else {
        state.panels.energies.open = false;
        return;
    };
    let frame = state.doc.document.as_ref().map_or(0, |d| d.frame_index);
    let n = energies.len();
    let missing = energies.iter().filter(|e| !e.is_finite()).count();
    let summary = format!(
        "{} frames with an energy{}; the lowest, {} at frame {low_frame}, is the zero. Click a point to go to its frame.",
        n - missing,
        if missing > 0 {
            format!(" ({missing} without)")
        } else {
            String::new()
        },
        total_energy_text(low),
    );
    let current: Vec<[f64; 2]> = points.iter().filter(|p| p[0] as usize == frame).copied().collect();
    let now = state.frame_energy_text();
    let mut open = true;
    let mut clicked: Option<usize> = None;
    let screen = ctx.content_rect();
    egui::Window::new(TITLE)
        .open(&mut open)
        // Low in the view, beside the right panel: the molecule stays in sight.
        .default_pos(egui::pos2(
            (screen.max.x - 700.0).max(screen.min.x),
            (screen.max.y - 480.0).max(screen.min.y + 40.0),
        ))
        .default_size([420.0, 330.0])
        .show(ctx, |ui| {
            ui.label(summary);
            if let Some(now) = &now {
                ui.label(format!("Frame {frame}: {now}"));
            }
            // Round marks on both axes, as the measurement plots have: egui_plot's own spacer
            // labels powers of ten only, so 7 frames read "0" alone.
            let response = Plot::new("energy_plot")
                .height(240.0)
                .include_y(0.0)
                .grid_spacing(egui::Rangef::new(super::widgets::PLOT_GRID_MIN_POINTS, 300.0))
                .x_grid_spacer(|g| super::widgets::round_grid_marks(g, super::widgets::PLOT_X_LABEL_POINTS))
                .y_grid_spacer(|g| super::widgets::round_grid_marks(g, super::widgets::PLOT_Y_LABEL_POINTS))
                .x_axis_formatter(super::widgets::round_mark_text)
                .y_axis_formatter(super::widgets::round_mark_text)
                .x_axis_label("frame")
                .y_axis_label("E − E(lowest) (kcal/mol)")
                .show(ui, |plot| {
                    plot.line(Line::new("energy", PlotPoints::from(points.clone())));
                    plot.points(Points::new("steps", PlotPoints::from(points.clone())).radius(3.0));
                    if !current.is_empty() {
                        plot.points(
                            Points::new("frame shown", PlotPoints::from(current.clone()))
                                .color(tokens::SELECTED)
                                .radius(7.0)
                                .filled(false),
                        );
                    }
                    plot.pointer_coordinate()
                });
            // The step nearest the pointer along the frame axis; a click goes to it.
            if let Some(at) = response.inner
                && response.response.clicked()
            {
                clicked = points
                    .iter()
                    .min_by(|a, b| (a[0] - at.x).abs().total_cmp(&(b[0] - at.x).abs()))
                    .map(|p| p[0] as usize);
            }
        });
    if !open {
        state.panels.energies.open = false;
    }
    if let Some(f) = clicked
        && f != frame
    {
        send(state, Command::SetFrame(f));
    }
}
