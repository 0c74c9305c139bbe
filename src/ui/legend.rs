//! Colour legends over the 3-D view: one bar per legend (the drawn slice, surfaces coloured by a
//! field), stacked up from the bottom-right corner, each with its title (what was summed and how,
//! wrapped to the box, never cut) and its end values in their unit (`AppState::legends`).

use crate::app::values::{Legend, format_number};

/// Width of a legend's box in points (narrower when the view is).
const BOX_WIDTH: f32 = 240.0;

/// Draws `legends` over the bottom-right corner of `view`.
pub fn legends_ui(ui: &egui::Ui, legends: &[Legend], view: egui::Rect) {
    let painter = ui.painter_at(view);
    let font = egui::FontId::proportional(11.0);
    let box_w = BOX_WIDTH.min(view.width() - 16.0);
    if box_w < 80.0 {
        return;
    }
    let mut bottom = view.bottom() - 8.0;
    for legend in legends {
        let inner = box_w - 20.0;
        let title = painter.layout(legend.title.clone(), font.clone(), egui::Color32::WHITE, inner);
        let lo = painter.layout_no_wrap(format_number(legend.range[0]), font.clone(), egui::Color32::WHITE);
        let hi_text = if legend.unit.is_empty() {
            format_number(legend.range[1])
        } else {
            format!("{} {}", format_number(legend.range[1]), legend.unit)
        };
        let hi = painter.layout_no_wrap(hi_text, font.clone(), egui::Color32::WHITE);
        let bar_h = 12.0;
        // Zero marked on the bar (white is the range's middle, zero only when it is symmetric):
        // its "0" under the bar where it clears the end values, else above it.
        let zero = legend.zero_at().map(|t| {
            (
                t,
                painter.layout_no_wrap("0".into(), font.clone(), egui::Color32::WHITE),
            )
        });
        let zero_above = zero.as_ref().is_some_and(|(t, z)| {
            let (x, half) = (t * inner, z.size().x / 2.0);
            !(x - half > lo.size().x + 4.0 && x + half < inner - hi.size().x - 4.0)
        });
        let above_h = match &zero {
            Some((_, z)) if zero_above => z.size().y + 1.0,
            _ => 0.0,
        };
        let box_h = 8.0 + title.size().y + 4.0 + above_h + bar_h + 3.0 + lo.size().y.max(hi.size().y) + 8.0;
        let frame = egui::Rect::from_min_size(
            egui::pos2(view.right() - 8.0 - box_w, bottom - box_h),
            egui::vec2(box_w, box_h),
        );
        painter.rect_filled(frame, 4.0, egui::Color32::from_black_alpha(215));
        let title_pos = egui::pos2(frame.left() + 10.0, frame.top() + 8.0);
        let bar = egui::Rect::from_min_size(
            egui::pos2(frame.left() + 10.0, title_pos.y + title.size().y + 4.0 + above_h),
            egui::vec2(inner, bar_h),
        );
        painter.galley(title_pos, title, egui::Color32::WHITE);
        let steps = 48;
        for s in 0..steps {
            let t0 = s as f32 / steps as f32;
            let t = (s as f32 + 0.5) / steps as f32;
            let [r, g, b] = legend.bar_rgb(t);
            let x0 = bar.left() + t0 * bar.width();
            let cell = egui::Rect::from_min_max(
                egui::pos2(x0, bar.top()),
                egui::pos2(x0 + bar.width() / steps as f32 + 0.5, bar.bottom()),
            );
            painter.rect_filled(cell, 0.0, egui::Color32::from_rgb(r, g, b));
        }
        let below = bar.bottom() + 3.0;
        let hi_w = hi.size().x;
        if legend.solid_rgb.is_none() {
            painter.galley(egui::pos2(bar.left(), below), lo, egui::Color32::WHITE);
        }
        painter.galley(egui::pos2(bar.right() - hi_w, below), hi, egui::Color32::WHITE);
        if let Some((t, zero)) = zero {
            let x = bar.left() + t * bar.width();
            let half = zero.size().x / 2.0;
            let (from, to, at) = if zero_above {
                let h = zero.size().y;
                (
                    bar.top() - 1.0,
                    bar.center().y,
                    egui::pos2(x - half, bar.top() - 1.0 - h),
                )
            } else {
                (bar.center().y, bar.bottom() + 2.0, egui::pos2(x - half, below))
            };
            painter.line_segment(
                [egui::pos2(x, from), egui::pos2(x, to)],
                egui::Stroke::new(1.5, egui::Color32::BLACK),
            );
            painter.galley(at.max(egui::pos2(bar.left(), at.y)), zero, egui::Color32::WHITE);
        }
        bottom = frame.top() - 8.0;
    }
}
