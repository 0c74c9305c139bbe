//! Whether the window's widgets stay inside their panels: a harness over the whole window that
//! keeps the panels' rectangles each frame ([`window_of`]), and the widgets whose rectangle
//! (egui_kittest's accesskit node bounds) leaves the window or the panel it belongs to
//! ([`outside_their_panels`]): the controls a panel's edge would clip. Shared by `layout.rs` and
//! `journey_third_hour.rs`.

#![allow(dead_code)]

use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use orbitfield::app::state::AppState;

/// The panels of the window by their ids (`ui::main_ui`).
pub const PANELS: [&str; 6] = [
    "orbitfield_left",
    "orbitfield_right",
    "orbitfield_menu",
    "orbitfield_timeline",
    "orbitfield_status",
    "orbitfield_console",
];

/// Where the test closure leaves the panels' rectangles.
const PANEL_RECTS: &str = "panel_fit_panel_rects";

/// A node's rectangle on screen (none for containers without bounds).
pub fn bounds(node: &egui_kittest::Node<'_>) -> Option<egui::Rect> {
    let b = node.accesskit_node().bounding_box()?;
    Some(egui::Rect::from_min_max(
        egui::pos2(b.x0 as f32, b.y0 as f32),
        egui::pos2(b.x1 as f32, b.y1 as f32),
    ))
}

/// The whole window over `state` at `size`: the UI, the pending commands applied (and the
/// representations updated, with `update_reps`) after each frame, the panels' rectangles kept.
pub fn window_of(state: AppState, size: [f32; 2], update_reps: bool) -> Harness<'static, AppState> {
    window_stepping(state, size, update_reps, 0.25)
}

/// As [`window_of`], each frame `step_dt` seconds after the one before (egui counts two clicks as a
/// double click within 0.3 s).
pub fn window_stepping(state: AppState, size: [f32; 2], update_reps: bool, step_dt: f32) -> Harness<'static, AppState> {
    Harness::builder()
        .with_size(egui::vec2(size[0], size[1]))
        .with_step_dt(step_dt)
        // Opening a header re-measures the grids of the other sections of its panel (egui grids take
        // a frame per change of their column widths), which can take a dozen frames to settle.
        .with_max_steps(32)
        .build_ui_state(
            move |ui, state: &mut AppState| {
                orbitfield::ui::main_ui(ui, state);
                state.apply_pending();
                if update_reps {
                    state.update_reps();
                }
                // Where the panels went: egui keeps each panel's rectangle under the id it derives
                // from the parent's scope and the panel's name.
                let rects: Vec<(&'static str, egui::Rect)> = PANELS
                    .iter()
                    .filter_map(|name| {
                        let id = ui.scope_id().with_salt(egui::IdSalt::new(*name));
                        egui::containers::panel::PanelState::load(ui.ctx(), id).map(|p| (*name, p.outer_rect))
                    })
                    .collect();
                ui.ctx()
                    .data_mut(|d| d.insert_temp(egui::Id::unique(PANEL_RECTS), rects));
            },
            state,
        )
}

/// The panels' rectangles of the last frame, by panel id.
pub fn panel_rects(h: &Harness<'_, AppState>) -> Vec<(&'static str, egui::Rect)> {
    h.ctx
        .data(|d| d.get_temp::<Vec<(&'static str, egui::Rect)>>(egui::Id::unique(PANEL_RECTS)))
        .unwrap_or_default()
}

/// Opens the collapsed headers of the side panels (the menu bar has a "View" of its own).
pub fn open_side_headers(harness: &mut Harness<'static, AppState>) {
    for header in ["Files", "View", "Jobs", "RDF"] {
        let panels = panel_rects(harness);
        let sides: Vec<egui::Rect> = panels
            .iter()
            .filter(|(id, _)| id.ends_with("left") || id.ends_with("right"))
            .map(|(_, r)| *r)
            .collect();
        let node = harness
            .query_all_by_label(header)
            .find(|n| bounds(n).is_some_and(|b| sides.iter().any(|r| r.contains(b.center()))));
        if let Some(n) = node {
            n.click();
            harness.run();
        }
    }
    harness.run();
}

/// Fails listing the widgets [`outside_their_panels`] finds.
pub fn assert_inside_their_panels(harness: &Harness<'static, AppState>, size: [f32; 2], edge_points: f32, what: &str) {
    let bad = outside_their_panels(harness, size, edge_points, what);
    assert!(
        bad.is_empty(),
        "{what} at {}x{}: {} widgets outside their panel:\n{}",
        size[0],
        size[1],
        bad.len(),
        bad.join("\n")
    );
}

/// The widgets outside the window (by more than half a point) or outside the panel they belong to
/// (by more than `edge_points`: egui rounds a panel and its content apart by up to a point on some
/// window sizes), each as its role, label, rectangle and why; empty when everything fits. Both side
/// panels must be shown.
pub fn outside_their_panels(
    harness: &Harness<'static, AppState>,
    size: [f32; 2],
    edge_points: f32,
    what: &str,
) -> Vec<String> {
    let panels = panel_rects(harness);
    assert!(
        panels.iter().any(|(id, _)| *id == "orbitfield_left") && panels.iter().any(|(id, _)| *id == "orbitfield_right"),
        "{what}: both side panels are shown: {panels:?}"
    );
    let window = egui::Rect::from_min_size(egui::Pos2::ZERO, egui::vec2(size[0], size[1]));
    // Every node with its parent and bounds; a node belongs to the panel most of the widgets
    // beside it (under its nearest ancestor holding three or more widgets) start in, so a button
    // pushed wholly past a panel's edge still counts as that panel's.
    let root = harness.root();
    let nodes: Vec<(String, Option<String>, Option<egui::Rect>, String)> = root
        .children_recursive()
        .map(|n| {
            let a = n.accesskit_node();
            let label = format!("{:?} {:?}", a.role(), a.label().unwrap_or_default());
            let key = |n: &egui_kittest::kittest::AccessKitNode<'_>| format!("{:?}", n.id());
            (key(&a), a.parent().map(|p| key(&p)), bounds(&n), label)
        })
        .collect();
    let parent: std::collections::BTreeMap<&str, Option<&str>> =
        nodes.iter().map(|(id, p, _, _)| (id.as_str(), p.as_deref())).collect();
    let start_panel = |r: &egui::Rect| -> Option<usize> {
        let start = egui::pos2(r.min.x + 0.5, (r.min.y + 0.5).min(window.max.y - 1.0));
        panels.iter().position(|(_, p)| p.contains(start))
    };
    // Per ancestor: how many widgets under it start in each panel (index PANELS.len(): none).
    let mut counts: std::collections::BTreeMap<&str, Vec<usize>> = Default::default();
    for (id, _, r, _) in &nodes {
        let Some(r) = r else { continue };
        let k = start_panel(r).unwrap_or(panels.len());
        let mut up = parent.get(id.as_str()).copied().flatten();
        while let Some(a) = up {
            counts.entry(a).or_insert_with(|| vec![0; panels.len() + 1])[k] += 1;
            up = parent.get(a).copied().flatten();
        }
    }
    let panel_of = |id: &str| -> Option<usize> {
        let mut up = parent.get(id).copied().flatten();
        while let Some(a) = up {
            if let Some(c) = counts.get(a) {
                let total: usize = c.iter().sum();
                if total >= 3 {
                    let (k, n) = c.iter().enumerate().max_by_key(|(_, n)| **n)?;
                    return (2 * n > total && k < panels.len()).then_some(k);
                }
            }
            up = parent.get(a).copied().flatten();
        }
        None
    };
    let mut bad = Vec::new();
    for (id, _, r, label) in &nodes {
        let Some(r) = r else { continue };
        if !r.is_finite() || r.width() <= 0.0 || r.height() <= 0.0 {
            continue;
        }
        if r.min.x < window.min.x - 0.5 || r.max.x > window.max.x + 0.5 || r.min.y < window.min.y - 0.5 {
            bad.push(format!("{label} {r:?} outside the window"));
            continue;
        }
        // The panel's own resize handle sits on its edge; the 3-D view takes the middle.
        let view = start_panel(r).is_none() && r.width() > 300.0 && r.height() > 300.0;
        if label.starts_with("Splitter") || view {
            continue;
        }
        if let Some(k) = panel_of(id) {
            let (name, p) = panels[k];
            if r.max.x > p.max.x + edge_points || r.min.x < p.min.x - edge_points {
                bad.push(format!("{label} {r:?} outside {name} {p:?}"));
            }
        }
    }
    bad
}
