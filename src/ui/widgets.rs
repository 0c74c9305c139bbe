//! Small widgets the panels share: a combo box over an enum, and the isovalue slider that shows
//! its number in the field's unit.

use crate::app::values::FieldUnit;

/// A combo box over `all`, showing each choice by `name`; the new choice when the user changed it.
pub(super) fn choice_combo<T: Copy + PartialEq>(
    ui: &mut egui::Ui,
    label: &str,
    current: T,
    all: &[T],
    name: fn(T) -> &'static str,
) -> Option<T> {
    let mut value = current;
    egui::ComboBox::from_label(label)
        .selected_text(name(value))
        .show_ui(ui, |ui| {
            for &v in all {
                ui.selectable_value(&mut value, v, name(v));
            }
        });
    (value != current).then_some(value)
}

/// The logarithmic isovalue slider. `iso` is in computed units; the slider shows it in `unit`
/// (with the unit written after the number) over `range` (in that unit, containing the value:
/// `ui::fields::iso_range`), or as a fraction of the largest |value| (0.001..1) when `relative`.
/// A value typed into its number is kept as typed, never clamped to the range. `label` names it
/// for screen readers. Returns the new computed value when the user moved or typed it.
pub(super) fn iso_slider(
    ui: &mut egui::Ui,
    iso: f32,
    relative: bool,
    unit: &FieldUnit,
    range: [f64; 2],
    label: egui::Id,
) -> Option<f32> {
    // The slider and its number share the panel's width (its text would be clipped otherwise).
    ui.spacing_mut().slider_width = (ui.available_width() - 110.0).clamp(60.0, 160.0);
    if relative {
        let before = iso.clamp(0.001, 1.0);
        let mut v = before;
        let changed = ui
            .add(
                egui::Slider::new(&mut v, 0.001..=1.0)
                    .logarithmic(true)
                    .suffix(" × max")
                    .max_decimals(4),
            )
            .labelled_by(label)
            .on_hover_text("A fraction of the largest |value| on the lattice")
            .changed();
        return (changed && (v - before).abs() > 1e-6 * before).then_some(v);
    }
    let [lo, hi] = range;
    let before = unit.show(iso);
    let mut v = before;
    let suffix = if unit.label.is_empty() {
        String::new()
    } else {
        format!(" {}", unit.label)
    };
    let changed = ui
        .add(
            egui::Slider::new(&mut v, lo..=hi)
                .logarithmic(true)
                .clamping(egui::SliderClamping::Never)
                .suffix(suffix)
                .max_decimals(6),
        )
        .labelled_by(label)
        .on_hover_text("Drag, or double-click the number to type a value (kept as typed)")
        .changed();
    // Only a move by the user: the slider also reports rounding as changes.
    let moved = changed && v.is_finite() && v > 0.0 && (v - before).abs() > 1e-6 * before.abs().max(f64::MIN_POSITIVE);
    moved.then(|| unit.computed(v))
}
