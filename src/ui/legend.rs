//! Colour legends over the 3-D view: one bar per legend (the drawn slice, surfaces coloured by a
//! volume), stacked up from the bottom-right corner, each with its title and its end values in
//! their unit (`AppState::legends`).

use crate::app::values::{Legend, format_number};

/// Draws `legends` over the bottom-right corner of `view`.
pub fn legends_ui(ui: &egui::Ui, legends: &[Legend], view: egui::Rect) {
    let painter = ui.painter_at(view);
    for (k, legend) in legends.iter().enumerate() {
        let bottom = view.bottom() - 46.0 - 56.0 * k as f32;
        let bar = egui::Rect::from_min_size(egui::pos2(view.right() - 210.0, bottom), egui::vec2(190.0, 12.0));
        painter.rect_filled(
            bar.expand2(egui::vec2(12.0, 22.0)).translate(egui::vec2(0.0, 8.0)),
            4.0,
            egui::Color32::from_black_alpha(150),
        );
        let steps = 48;
        for s in 0..steps {
            let t0 = s as f32 / steps as f32;
            let [r, g, b, _] = legend.colormap.sample((s as f32 + 0.5) / steps as f32);
            let x0 = bar.left() + t0 * bar.width();
            let cell = egui::Rect::from_min_max(
                egui::pos2(x0, bar.top()),
                egui::pos2(x0 + bar.width() / steps as f32 + 0.5, bar.bottom()),
            );
            painter.rect_filled(cell, 0.0, egui::Color32::from_rgb(r, g, b));
        }
        let text = |pos: egui::Pos2, align: egui::Align2, s: String| {
            painter.text(pos, align, s, egui::FontId::proportional(11.0), egui::Color32::WHITE);
        };
        text(
            bar.left_bottom() + egui::vec2(0.0, 3.0),
            egui::Align2::LEFT_TOP,
            format_number(legend.range[0]),
        );
        text(
            bar.right_bottom() + egui::vec2(0.0, 3.0),
            egui::Align2::RIGHT_TOP,
            format!("{} {}", format_number(legend.range[1]), legend.unit),
        );
        text(
            bar.center_top() - egui::vec2(0.0, 3.0),
            egui::Align2::CENTER_BOTTOM,
            legend.title.clone(),
        );
    }
}
