//! The 3-D view (mouse handling, picking, the paint callback, the colour legends and the demo's
//! caption over it), the status bar and the help window's shortcut list.

use super::{SHORTCUTS, send};
use crate::app::state::{AppState, Command};
use egui::{RichText, Sense};

/// FPS, picked atom, progress line, status.
pub fn status_bar_ui(ui: &mut egui::Ui, state: &mut AppState) {
    ui.horizontal(|ui| {
        ui.label(format!("{:5.1} FPS", state.view.fps));
        ui.separator();
        if let Some(p) = &state.view.pick {
            ui.label(&p.text);
            ui.separator();
        }
        super::jobs::progress_ui(ui, state);
        // A long message (an unreadable file lists the formats read) wraps in the width left
        // rather than running out of the window; the progress bars come first so it cannot push
        // them out.
        // An error in the error colour (a grey line was missed).
        let text = match status_error(state) {
            Some(e) => egui::RichText::new(e).color(super::tokens::ERROR),
            None => egui::RichText::new(&state.panels.status),
        };
        ui.add(egui::Label::new(text).wrap());
    });
}

/// The shortcut list.
pub fn help_ui(ui: &mut egui::Ui) {
    egui::Grid::new("help_grid").striped(true).show(ui, |ui| {
        for (keys, what) in SHORTCUTS.iter().chain(super::tools::TOOL_SHORTCUTS) {
            ui.label(RichText::new(*keys).monospace());
            ui.label(*what);
            ui.end_row();
        }
    });
}

/// The 3-D view: reserves the space, turns mouse input into camera commands and picks, adds the
/// paint callback that shows the rendered image and draws the colour legends over it.
pub fn view_ui(ui: &mut egui::Ui, state: &mut AppState) {
    let size = ui.available_size();
    let (rect, response) = ui.allocate_exact_size(size, Sense::click_and_drag());
    let ppp = ui.ctx().pixels_per_point();
    let size_px = [
        (rect.width() * ppp).round().max(1.0) as u32,
        (rect.height() * ppp).round().max(1.0) as u32,
    ];
    state.view.size_px = size_px;
    state.fit_if_pending();
    if response.drag_started() {
        // Each drag is one undo step.
        send(state, Command::SettleHistory);
    }
    if response.dragged_by(egui::PointerButton::Primary) {
        let d = response.drag_delta();
        send(state, Command::Orbit([d.x * 0.01, d.y * 0.01]));
    } else if response.dragged_by(egui::PointerButton::Secondary) || response.dragged_by(egui::PointerButton::Middle) {
        let d = response.drag_delta();
        let h = rect.height().max(1.0);
        send(state, Command::Pan([d.x / h, d.y / h]));
    }
    if response.hovered() {
        let scroll = ui.input(|i| i.smooth_scroll_delta.y);
        if scroll != 0.0 {
            send(state, Command::Zoom((-scroll * 0.002).exp()));
        }
    }
    if response.clicked()
        && let Some(pos) = response.interact_pointer_pos()
    {
        let local = (pos - rect.min) * ppp;
        send(
            state,
            Command::Pick {
                pixel: [local.x, local.y],
                size_px,
            },
        );
    }
    // A double click centres the view on the atom its first click picked.
    if response.double_clicked() && state.view.pick.is_some() {
        super::menu::centre_on_picked_atom(state);
    }
    // A right click opens the atom's menu (a right drag pans).
    if response.secondary_clicked()
        && let Some(pos) = response.interact_pointer_pos()
    {
        let local = (pos - rect.min) * ppp;
        state.view.menu_atom = state.atom_at([local.x, local.y], size_px);
        state.view.menu_description = state.view.menu_atom.map(|a| state.describe_atom(a)).unwrap_or_default();
    }
    response.context_menu(|ui| super::atom_menu::atom_menu_ui(ui, state));
    ui.painter().add(crate::render::callback::view_paint_callback(rect));
    super::measure::view_overlay_ui(ui, state, rect);
    super::legend::legends_ui(ui, &state.legends(), rect);
    if let Some(caption) = state.demo_caption() {
        caption_ui(ui, &caption, rect);
    }
    if state.doc.document.is_none() {
        ui.painter().text(
            rect.center(),
            egui::Align2::CENTER_CENTER,
            "Drop files here, press Ctrl+O, File > Fetch from PDB…, or File > Open demo",
            egui::FontId::proportional(16.0),
            ui.visuals().weak_text_color(),
        );
        // Why the last file did not open, where the user looks (the status line is easy to miss).
        if let Some(e) = status_error(state) {
            let painter = ui.painter_at(rect);
            let galley = painter.layout(
                e.to_string(),
                egui::FontId::proportional(14.0),
                super::tokens::ERROR,
                (rect.width() - 64.0).max(80.0),
            );
            let at = egui::pos2(rect.center().x - 0.5 * galley.size().x, rect.center().y + 24.0);
            painter.galley(at, galley, super::tokens::ERROR);
        }
    }
}

/// The status line's text when it is an error (the last one recorded), else `None`.
fn status_error(state: &AppState) -> Option<&str> {
    let status = state.panels.status.as_str();
    (!status.is_empty() && state.panels.errors.last().is_some_and(|e| e == status)).then_some(status)
}

/// A caption at the top of the 3-D view (what the demo animates), wrapped to the view's width on a
/// dark band.
fn caption_ui(ui: &egui::Ui, text: &str, view: egui::Rect) {
    let painter = ui.painter_at(view);
    let galley = painter.layout(
        text.to_string(),
        egui::FontId::proportional(15.0),
        egui::Color32::WHITE,
        (view.width() - 32.0).max(80.0),
    );
    let pos = egui::pos2(view.center().x - galley.size().x / 2.0, view.top() + 12.0);
    let band = egui::Rect::from_min_size(pos, galley.size()).expand(6.0);
    painter.rect_filled(band, 4.0, egui::Color32::from_black_alpha(160));
    painter.galley(pos, galley, egui::Color32::WHITE);
}
