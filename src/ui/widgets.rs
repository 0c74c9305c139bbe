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

/// A labelled combo box: beside its label where both fit the panel's width, else on the line below
/// it at the full width, so the chosen item is read whole ("Poisson-Boltzmann", not "Poisso…").
/// `contents` lists the items; the combo is named by the label for screen readers. Returns the
/// combo's response.
pub(super) fn labelled_combo(
    ui: &mut egui::Ui,
    label: &str,
    id_salt: &str,
    selected: String,
    contents: impl FnOnce(&mut egui::Ui),
) -> egui::Response {
    let font = egui::TextStyle::Button.resolve(ui.style());
    let measure = |ui: &egui::Ui, text: &str| {
        ui.painter()
            .layout_no_wrap(text.to_string(), font.clone(), egui::Color32::WHITE)
            .size()
            .x
    };
    let spacing = ui.spacing().clone();
    let combo_width = measure(ui, &selected) + 2.0 * spacing.button_padding.x + spacing.icon_width + 12.0;
    let beside = measure(ui, label) + spacing.item_spacing.x + combo_width <= ui.available_width();
    let combo = |ui: &mut egui::Ui, label_id: egui::Id| {
        egui::ComboBox::from_id_salt(id_salt)
            .selected_text(selected)
            .width((ui.available_width() - 8.0).max(60.0))
            .truncate()
            .show_ui(ui, contents)
            .response
            .labelled_by(label_id)
    };
    if beside {
        ui.horizontal(|ui| {
            let l = ui.label(label);
            combo(ui, l.id)
        })
        .inner
    } else {
        let l = ui.label(label);
        combo(ui, l.id)
    }
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
    // The slider and its number share the panel's width (its text would be clipped otherwise): the
    // number's room is measured with its unit, which can be long ("(file units)").
    let suffix = if relative || unit.label.is_empty() {
        String::new()
    } else {
        format!(" {}", unit.label)
    };
    let sample = if relative {
        "0.0000 × max".to_string()
    } else {
        format!("0.00000{suffix}")
    };
    let font = egui::TextStyle::Button.resolve(ui.style());
    let number_width = ui.painter().layout_no_wrap(sample, font, egui::Color32::WHITE).size().x
        + 2.0 * ui.spacing().button_padding.x
        + ui.spacing().item_spacing.x
        + 4.0;
    ui.spacing_mut().slider_width = (ui.available_width() - number_width).clamp(40.0, 160.0);
    if relative {
        let before = iso.clamp(0.001, 1.0);
        let mut v = before;
        let changed = ui
            .add(
                egui::Slider::new(&mut v, 0.001..=1.0)
                    .update_while_editing(false)
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
    // What was typed and could not be taken as it stands, said under the slider until the next
    // change: a signed value is taken as its size (the lobes are drawn at +iso and -iso), text that
    // is no number leaves the isovalue as it was.
    let note_id = label.with("typed_isovalue_note");
    let problem = std::cell::RefCell::new(None::<String>);
    let unit_label = unit.label.clone();
    let before_text = unit.format(iso);
    let parser = |text: &str| {
        let (value, note) = parse_typed_isovalue(text, &unit_label, &before_text);
        *problem.borrow_mut() = note;
        value
    };
    let changed = ui
        .add(
            egui::Slider::new(&mut v, lo..=hi)
                .update_while_editing(false)
                .logarithmic(true)
                .clamping(egui::SliderClamping::Never)
                .suffix(suffix)
                .max_decimals(6)
                .custom_parser(parser),
        )
        .labelled_by(label)
        .on_hover_text("Drag, or double-click the number to type a value (kept as typed)")
        .changed();
    // Only a move by the user: the slider also reports rounding as changes.
    let moved = changed && v.is_finite() && v > 0.0 && (v - before).abs() > 1e-6 * before.abs().max(f64::MIN_POSITIVE);
    match problem.into_inner() {
        Some(note) => {
            ui.data_mut(|d| d.insert_temp(note_id, note));
        }
        None if moved => ui.data_mut(|d| d.remove::<String>(note_id)),
        None => {}
    }
    if let Some(note) = ui.data(|d| d.get_temp::<String>(note_id)) {
        ui.add(egui::Label::new(egui::RichText::new(note).small().color(ui.visuals().warn_fg_color)).wrap());
    }
    moved.then(|| unit.computed(v))
}

/// A typed isovalue in the slider's unit (`unit_label` may follow the number; U+2212 is a minus)
/// and what to tell the user about it: a negative value is taken as its size, text that is no
/// positive number is refused, the isovalue staying `before_text`.
fn parse_typed_isovalue(text: &str, unit_label: &str, before_text: &str) -> (Option<f64>, Option<String>) {
    let compact: String = text
        .chars()
        .filter(|c| !c.is_whitespace())
        .map(|c| if c == '\u{2212}' { '-' } else { c })
        .collect();
    let unit_compact: String = unit_label.chars().filter(|c| !c.is_whitespace()).collect();
    let number = if unit_compact.is_empty() {
        compact.as_str()
    } else {
        compact.strip_suffix(unit_compact.as_str()).unwrap_or(&compact)
    };
    match number.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => (Some(v), None),
        Ok(v) if v.is_finite() && v < 0.0 => {
            let size = number.trim_start_matches('-');
            let note = format!(
                "{} taken as its size, {size}: signed fields are drawn at +{size} and -{size}",
                text.trim()
            );
            (Some(-v), Some(note))
        }
        _ => (
            None,
            Some(format!(
                "\"{}\" is not a positive number: the isovalue stays {before_text}",
                text.trim()
            )),
        ),
    }
}

/// The plots' grid spacing at its finest, in points (egui_plot's default; [`round_grid_marks`]
/// reads the points per unit from it).
pub(super) const PLOT_GRID_MIN_POINTS: f32 = 8.0;
/// Labelled marks of a plot's x axis at least this far apart (egui_plot hides labels closer than
/// 60 points).
pub(super) const PLOT_X_LABEL_POINTS: f64 = 70.0;
/// Labelled marks of a plot's y axis at least this far apart (egui_plot hides labels closer than
/// 20 points).
pub(super) const PLOT_Y_LABEL_POINTS: f64 = 28.0;

/// Grid marks for a plot axis whose labelled step is a round number (1, 2 or 5 x 10^k) at least
/// `label_points` apart, with fainter lines between and stronger ones every ten labels. egui_plot's
/// own spacer labels powers of ten only, so a g(r) peaking at 0.7 or a distance axis from 0 to 10 Å
/// read "0" alone. The plot must use [`PLOT_GRID_MIN_POINTS`] as its smallest grid spacing.
pub(crate) fn round_grid_marks(input: egui_plot::GridInput, label_points: f64) -> Vec<egui_plot::GridMark> {
    let (lo, hi) = input.bounds;
    let units_per_point = input.base_step_size / f64::from(PLOT_GRID_MIN_POINTS);
    let want = label_points * units_per_point;
    if !(want.is_finite() && want > 0.0 && lo.is_finite() && hi.is_finite() && hi > lo) {
        return Vec::new();
    }
    let decade = 10f64.powf(want.log10().floor());
    let (label, minor) = [(1.0, 5.0), (2.0, 4.0), (5.0, 5.0), (10.0, 5.0)]
        .into_iter()
        .map(|(m, parts)| (m * decade, m * decade / parts))
        .find(|&(step, _)| step >= want * (1.0 - 1e-9))
        .unwrap_or((10.0 * decade, 2.0 * decade));
    if (hi - lo) / minor > 2000.0 {
        return Vec::new();
    }
    let mut marks: Vec<egui_plot::GridMark> = Vec::new();
    for step in [10.0 * label, label, minor] {
        let first = (lo / step).ceil() as i64;
        let last = (hi / step).floor() as i64;
        for k in first..=last {
            let value = k as f64 * step;
            // The larger step was added first: a value it holds keeps it.
            if !marks.iter().any(|m| (m.value - value).abs() < 0.1 * minor) {
                marks.push(egui_plot::GridMark { value, step_size: step });
            }
        }
    }
    marks.sort_by(|a, b| a.value.total_cmp(&b.value));
    marks
}

/// A grid mark's label with the decimals its step needs: 0.5 and 0.2 steps take one decimal, 0.05 two.
/// egui_plot's own formatter rounds the step's decimals, so a 0.5 step wrote "14, 14, 15" for
/// 14.0, 14.5, 15.0. Plots that use [`round_grid_marks`] label their axes with this.
pub(crate) fn round_mark_text(mark: egui_plot::GridMark, _range: &std::ops::RangeInclusive<f64>) -> String {
    let decimals = if mark.step_size.is_finite() && mark.step_size > 0.0 {
        (-mark.step_size.log10() - 1e-9).ceil().clamp(0.0, 12.0) as usize
    } else {
        0
    };
    let text = format!("{:.*}", decimals, mark.value);
    // No "-0.0" at zero.
    if text.trim_start_matches('-').chars().all(|c| c == '0' || c == '.') {
        text.trim_start_matches('-').to_string()
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The marks an axis of `points` over `bounds` labels: those at least `label_points` apart.
    fn labels(bounds: (f64, f64), points: f64, label_points: f64) -> Vec<f64> {
        let points_per_unit = points / (bounds.1 - bounds.0);
        let base_step_size = f64::from(PLOT_GRID_MIN_POINTS) / points_per_unit;
        round_grid_marks(egui_plot::GridInput { bounds, base_step_size }, label_points)
            .iter()
            .filter(|m| m.step_size * points_per_unit >= label_points)
            .map(|m| (m.value * 1e6).round() / 1e6)
            .collect()
    }

    #[test]
    fn plot_axes_are_labelled_at_round_numbers() {
        // A g(r) from 0 to 0.85 on 150 points: 0, 0.2, 0.4, 0.6, 0.8.
        assert_eq!(
            labels((0.0, 0.85), 150.0, PLOT_Y_LABEL_POINTS),
            vec![0.0, 0.2, 0.4, 0.6, 0.8]
        );
        // r from 0 to 10 Å on 200 points: 0, 5, 10.
        assert_eq!(labels((0.0, 10.0), 200.0, PLOT_X_LABEL_POINTS), vec![0.0, 5.0, 10.0]);
        // A dihedral from -180 to 180 degrees on 180 points: every 100.
        assert_eq!(
            labels((-180.0, 180.0), 180.0, PLOT_Y_LABEL_POINTS),
            vec![-100.0, 0.0, 100.0]
        );
        assert!(
            round_grid_marks(
                egui_plot::GridInput {
                    bounds: (1.0, 1.0),
                    base_step_size: 0.1
                },
                28.0
            )
            .is_empty()
        );
    }

    #[test]
    fn typed_isovalues_are_read_or_refused_in_words() {
        assert_eq!(parse_typed_isovalue("0.03", "a.u.", "0.05 a.u."), (Some(0.03), None));
        assert_eq!(
            parse_typed_isovalue(" 0.03 a.u.", "a.u.", "0.05 a.u."),
            (Some(0.03), None)
        );
        let (v, note) = parse_typed_isovalue("\u{2212}0.03", "a.u.", "0.05 a.u.");
        assert_eq!(v, Some(0.03));
        assert!(note.unwrap().contains("taken as its size, 0.03"));
        let (v, note) = parse_typed_isovalue("abc", "a.u.", "0.05 a.u.");
        assert_eq!(v, None);
        assert!(
            note.unwrap()
                .contains("\"abc\" is not a positive number: the isovalue stays 0.05 a.u.")
        );
        assert_eq!(parse_typed_isovalue("0", "", "1").0, None);
        assert_eq!(parse_typed_isovalue("inf", "", "1").0, None);
    }

    /// Every label of an axis reads differently: a distance from 13.25 to 14.93 Å on 180 points is
    /// labelled 13.5, 14.0, 14.5, not 14, 14, 14.
    #[test]
    fn axis_labels_carry_the_decimals_of_their_step() {
        let bounds = (13.25, 14.93);
        let points_per_unit = 180.0 / (bounds.1 - bounds.0);
        let base_step_size = f64::from(PLOT_GRID_MIN_POINTS) / points_per_unit;
        let texts: Vec<String> = round_grid_marks(egui_plot::GridInput { bounds, base_step_size }, PLOT_Y_LABEL_POINTS)
            .into_iter()
            .filter(|m| m.step_size * points_per_unit >= PLOT_Y_LABEL_POINTS)
            .map(|m| round_mark_text(m, &(bounds.0..=bounds.1)))
            .collect();
        assert!(texts.len() >= 3, "{texts:?}");
        let mut unique = texts.clone();
        unique.dedup();
        assert_eq!(unique, texts, "two labels read the same");
        for t in &texts {
            let v: f64 = t.parse().unwrap();
            assert!((13.25..=14.93).contains(&v), "{t}");
        }
        let mark = |value, step_size| egui_plot::GridMark { value, step_size };
        assert_eq!(round_mark_text(mark(14.5, 0.5), &(0.0..=1.0)), "14.5");
        assert_eq!(round_mark_text(mark(0.05, 0.05), &(0.0..=1.0)), "0.05");
        assert_eq!(round_mark_text(mark(150.0, 50.0), &(0.0..=1.0)), "150");
        assert_eq!(round_mark_text(mark(-0.0, 0.2), &(0.0..=1.0)), "0.0");
    }
}
