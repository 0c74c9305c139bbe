//! The RDF section: g(r) between two selections over the trajectory (the form, progress with
//! cancel, and the plot growing as frames arrive). The computation lives in `app::rdf`.

use super::{send, tokens};
use crate::app::state::{AppState, Command};
use egui::RichText;

/// g(r) between two selections over the trajectory: the form, a progress line with cancel, and the
/// plot, which grows as frames arrive.
pub fn rdf_ui(ui: &mut egui::Ui, state: &mut AppState) {
    use egui_plot::{Line, Plot, PlotPoints};
    let running = state.panels.rdf.is_running();
    egui::Grid::new("rdf_form").num_columns(2).show(ui, |ui| {
        let l = ui.label("Selection 1");
        // As wide as the panel leaves (a text field's default, 280 points, widened the panel).
        let width = ui.available_width().max(60.0);
        ui.add(
            egui::TextEdit::singleline(&mut state.panels.rdf.sel1_text)
                .id_salt("rdf_sel1")
                .desired_width(width),
        )
        .labelled_by(l.id)
        .on_hover_text("The centres: g(r) counts selection 2 in shells around these atoms");
        ui.end_row();
        let l = ui.label("Selection 2");
        // As wide as the panel leaves (a text field's default, 280 points, widened the panel).
        let width = ui.available_width().max(60.0);
        ui.add(
            egui::TextEdit::singleline(&mut state.panels.rdf.sel2_text)
                .id_salt("rdf_sel2")
                .desired_width(width),
        )
        .labelled_by(l.id)
        .on_hover_text("The atoms counted around selection 1 (water oxygens around a residue: name OW)");
        ui.end_row();
        let l = ui.label("r max (Å)");
        ui.add(
            egui::DragValue::new(&mut state.panels.rdf.r_max_angstrom)
                .update_while_editing(false)
                .range(0.5..=100.0)
                .speed(0.1),
        )
        .labelled_by(l.id);
        ui.end_row();
        let l = ui.label("Bins");
        ui.add(
            egui::DragValue::new(&mut state.panels.rdf.bins)
                .update_while_editing(false)
                .range(1..=10000),
        )
        .labelled_by(l.id);
        ui.end_row();
    });
    // Wrapped: the button, the progress bar and Cancel in one row were wider than the panel,
    // which then grew for good and cut its fields at the window's edge.
    ui.horizontal_wrapped(|ui| {
        let can_start = state.doc.document.as_ref().is_some_and(|d| d.n_frames > 0);
        if ui
            .add_enabled(can_start, egui::Button::new("Compute g(r)"))
            .on_hover_text(
                "Over every frame, with the minimum image in periodic boxes; an atom is never paired with itself",
            )
            .clicked()
        {
            send(state, Command::StartRdf);
        }
        if running {
            ui.add(
                egui::ProgressBar::new(state.panels.rdf.progress())
                    .desired_width(90.0)
                    .show_percentage(),
            );
            if ui.button("Cancel").clicked() {
                send(state, Command::CancelRdf);
            }
        }
    });
    if let Some(e) = &state.panels.rdf.error {
        ui.label(RichText::new(e).color(tokens::ERROR));
    }
    let Some(run) = &state.panels.rdf.run else {
        return;
    };
    let seconds = run.finished.unwrap_or_else(|| run.started.elapsed().as_secs_f64());
    ui.label(format!(
        "{} of {} frames, {:.1} s{}",
        run.frames_done,
        run.n_frames,
        seconds,
        if run.engine.is_empty() {
            String::new()
        } else {
            format!(", {}", run.engine)
        }
    ));
    // Which selection is around which: the panel's two fields do not say it by their names.
    ui.add(
        egui::Label::new(RichText::new(format!("'{}' around '{}'", run.sel2.text(), run.sel1.text())).small()).wrap(),
    );
    // Without a box there is no bulk density to divide by (`analysis::rdf`'s normalisation).
    if state.document().is_some_and(|d| d.frame.cell.is_none()) {
        ui.add(
            egui::Label::new(
                RichText::new(
                    "No periodic box: g(r) is normalised to one pair per Å³, not to a bulk density; n(r) counts the neighbours",
                )
                .small(),
            )
            .wrap(),
        );
    }
    let cumulative = state.panels.rdf.show_cumulative;
    let values = if cumulative { &run.rdf.n_cumulative } else { &run.rdf.g };
    let points: Vec<[f64; 2]> = run.rdf.r_angstrom.iter().zip(values).map(|(&r, &v)| [r, v]).collect();
    let (name, colour) = if cumulative {
        ("n(r)", tokens::VIRTUAL)
    } else {
        ("g(r)", tokens::POSITIVE)
    };
    let mut show = cumulative;
    ui.horizontal(|ui| {
        ui.selectable_value(&mut show, false, "g(r)");
        ui.selectable_value(&mut show, true, "n(r)")
            .on_hover_text("Cumulative: the mean number of selection-2 atoms within r of a selection-1 atom");
    });
    state.panels.rdf.show_cumulative = show;
    Plot::new("rdf_plot")
        .height(180.0)
        .grid_spacing(egui::Rangef::new(super::widgets::PLOT_GRID_MIN_POINTS, 300.0))
        .x_grid_spacer(|g| super::widgets::round_grid_marks(g, super::widgets::PLOT_X_LABEL_POINTS))
        .y_grid_spacer(|g| super::widgets::round_grid_marks(g, super::widgets::PLOT_Y_LABEL_POINTS))
        .x_axis_formatter(super::widgets::round_mark_text)
        .y_axis_formatter(super::widgets::round_mark_text)
        .include_y(0.0)
        .x_axis_label("r (Å)")
        .y_axis_label(name)
        .show(ui, |plot| {
            plot.line(Line::new(name, PlotPoints::from(points)).color(colour));
        });
}
