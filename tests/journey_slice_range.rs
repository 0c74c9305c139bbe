//! A slice's colour range, driven through egui_kittest on the whole window as a biophysicist sets
//! it: a slice of a Poisson-Boltzmann map starts at the field's convention, -5 to 5 kT/e (it took
//! the 99th percentile of |value|, +-39 kT/e for adk, so the plane read pale); `slice range -2 2`
//! sets the ends in the field's unit and the legend and the drawn plane follow; moving the plane
//! keeps them; the Field panel shows them in their unit with an "Auto" button that goes back;
//! a range whose ends are reversed is refused in words.
//!
//! The input: two ions 6 A apart with charges and radii (PQR), solved by the app's own
//! Poisson-Boltzmann service.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use orbitfield::app::reps::FieldStyle;
use orbitfield::app::slice::SlicePlane;
use orbitfield::app::state::AppState;

#[path = "common/journey.rs"]
mod journey;
use journey::{settle_pb, slice_legend, two_ions_pqr, type_command_stepping, type_line_stepping};

/// The whole window at 1280x800 (as `tests/common/journey.rs` builds it), also keeping the right
/// panel's rectangle where the test can read it.
fn window(state: AppState) -> Harness<'static, AppState> {
    Harness::builder().with_size(egui::vec2(1280.0, 800.0)).build_ui_state(
        |ui, state: &mut AppState| {
            orbitfield::ui::main_ui(ui, state);
            state.apply_pending();
            state.update_reps();
            let id = ui.scope_id().with_salt(egui::IdSalt::new("orbitfield_right"));
            if let Some(p) = egui::containers::panel::PanelState::load(ui.ctx(), id) {
                ui.ctx()
                    .data_mut(|d| d.insert_temp(egui::Id::unique("slice_range_right_panel"), p.outer_rect));
            }
        },
        state,
    )
}

/// The plane of the slice representation.
fn plane(state: &AppState) -> SlicePlane {
    state
        .reps()
        .fields()
        .find_map(|(_, f)| match f.style {
            FieldStyle::Slice(p) => Some(p),
            _ => None,
        })
        .expect("a slice representation")
}

fn close(a: [f64; 2], b: [f64; 2]) -> bool {
    (a[0] - b[0]).abs() < 1e-6 && (a[1] - b[1]).abs() < 1e-6
}

#[test]
fn a_poisson_boltzmann_slice_starts_at_five_kt_per_e_and_takes_the_range_the_user_sets() {
    let dir = std::env::temp_dir().join(format!("orbitfield_slice_range_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let state = two_ions_pqr(&dir);
    let mut harness = window(state);
    harness.run_steps(2);
    type_command_stepping(&mut harness, "rep delete all");
    type_command_stepping(&mut harness, "field add pb");
    settle_pb(&mut harness);
    type_command_stepping(&mut harness, "slice z 0");
    let legend = slice_legend(&mut harness);
    assert_eq!(legend.unit, "kT/e");
    assert!(legend.title.contains("Poisson-Boltzmann"), "{}", legend.title);
    assert!(
        close(legend.range, [-5.0, 5.0]),
        "a Poisson-Boltzmann slice reads at +-5 kT/e: {:?}",
        legend.range
    );
    // The ions' own potential reaches far past 5 kT/e: the range is the convention, not the data's.
    let grid = harness.state().slice_grid().cloned().expect("the slice's grid");
    let (lo, hi) = grid.min_max().unwrap();
    assert!(lo < -5.0 && hi > 5.0, "the map spans {lo}..{hi} kT/e");

    // The Field panel shows the ends beside their unit, inside the right panel.
    harness.run_steps(2);
    let panel: egui::Rect = harness
        .ctx
        .data(|d| d.get_temp(egui::Id::unique("slice_range_right_panel")))
        .expect("the right panel is shown");
    let label = harness.get_by_label("Colour range");
    let row_y = label.rect().center().y;
    assert!(label.rect().max.x <= panel.max.x, "{:?} in {panel:?}", label.rect());
    // Its two ends, labelled "from" and "to", read in kT/e and stay inside the panel.
    let mut ends = 0;
    for word in ["from", "to"] {
        for node in harness.get_all_by_label(word) {
            let r = node.rect();
            if (r.center().y - row_y).abs() < 40.0 && r.min.x > panel.min.x {
                let value = node.value().unwrap_or_default();
                assert!(value.ends_with(" kT/e"), "'{word}' reads '{value}'");
                assert!(r.max.x <= panel.max.x, "'{word}' {r:?} in {panel:?}");
                ends += 1;
            }
        }
    }
    assert!(ends >= 2, "the range's two ends were found ({ends})");

    // The user's range: the legend, the plane's own range and the drawn plane follow.
    type_command_stepping(&mut harness, "slice range -2 2");
    let legend = slice_legend(&mut harness);
    assert!(close(legend.range, [-2.0, 2.0]), "{:?}", legend.range);
    assert_eq!(plane(harness.state()).range, Some([-2.0, 2.0]));
    // Moving the plane keeps the range.
    type_command_stepping(&mut harness, "slice z 0.2");
    let p = plane(harness.state());
    assert_eq!((p.position, p.range), (0.2, Some([-2.0, 2.0])));
    // Reversed ends are refused in words, the range kept.
    let (error, text) = type_line_stepping(&mut harness, "slice range 3 -3").expect("the line says why");
    assert!(error && text.contains("must be above the low end"), "{text}");
    harness.state_mut().panels.console.input.clear();
    assert_eq!(plane(harness.state()).range, Some([-2.0, 2.0]));

    // "Auto" (enabled once a range is chosen) goes back to the convention.
    harness.run_steps(2);
    let auto = harness
        .get_all_by_label("Auto")
        .find(|n| {
            let dy = n.rect().center().y - harness.get_by_label("Colour range").rect().center().y;
            (0.0..80.0).contains(&dy)
        })
        .expect("an Auto button under the range's heading");
    auto.click();
    harness.run_steps(3);
    assert_eq!(plane(harness.state()).range, None);
    let legend = slice_legend(&mut harness);
    assert!(close(legend.range, [-5.0, 5.0]), "{:?}", legend.range);
    // And the typed form does the same.
    type_command_stepping(&mut harness, "slice range -1 1");
    type_command_stepping(&mut harness, "slice range auto");
    assert_eq!(plane(harness.state()).range, None);
    std::fs::remove_dir_all(&dir).ok();
}

/// A slice of the field a shown surface is coloured by takes the surface's range, so a colour
/// means the same value on both; a range set on the slice itself wins.
#[test]
fn a_slice_takes_the_range_of_a_surface_coloured_by_the_same_field() {
    let dir = std::env::temp_dir().join(format!("orbitfield_slice_follows_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut harness = window(two_ions_pqr(&dir));
    harness.run_steps(2);
    type_command_stepping(&mut harness, "rep delete all");
    type_command_stepping(&mut harness, "field add molsurf");
    type_command_stepping(&mut harness, "color 1 pb range -8 2");
    type_command_stepping(&mut harness, "field add pb");
    settle_pb(&mut harness);
    type_command_stepping(&mut harness, "slice z 0");
    let legend = slice_legend(&mut harness);
    assert!(
        close(legend.range, [-8.0, 2.0]),
        "the slice reads as the surface does: {:?}",
        legend.range
    );
    // The surface hidden: the slice goes back to the field's convention.
    type_command_stepping(&mut harness, "rep hide 1");
    let legend = slice_legend(&mut harness);
    assert!(close(legend.range, [-5.0, 5.0]), "{:?}", legend.range);
    type_command_stepping(&mut harness, "rep show 1");
    type_command_stepping(&mut harness, "slice range -1 1");
    let legend = slice_legend(&mut harness);
    assert!(close(legend.range, [-1.0, 1.0]), "{:?}", legend.range);
    std::fs::remove_dir_all(&dir).ok();
}
