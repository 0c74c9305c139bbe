//! egui panels; functions taking `&mut egui::Ui` are named `*_ui`.
//!
//! The window (in `app`) calls [`main_ui`] once per frame with the [`AppState`]; panels read the
//! state and push [`Command`]s, which the app applies after the layout. Nothing here touches files,
//! threads or the GPU beyond adding the 3-D view's paint callback where the view goes.
//!
//! Layout: a menu bar, a collapsible representations panel on the left (files, the representation
//! list, jobs), a collapsible fields panel on the right (main field, orbitals, RDF), the timeline,
//! status bar and command line ([`console`]) at the bottom, and the 3-D view with its colour legends taking the rest — most of the
//! window. One file per panel; [`panels`] names them for the tests. [`measure`] draws the
//! measurements, labels and pick highlight over the view and lists them; [`tools`] adds the Edit
//! and Measure menus and their keys.

pub mod add;
pub mod atom_menu;
pub mod browser;
pub mod console;
pub mod energies;
pub mod esp_model;
pub mod export;
pub mod fetch;
pub mod fields;
pub mod files;
pub mod ils;
pub mod jobs;
pub mod legend;
pub mod measure;
pub mod menu;
pub mod orbitals;
pub mod panels;
pub mod pb;
pub mod ramachandran;
pub mod rdf;
pub mod reps;
pub mod sequence;
pub mod timeline;
pub mod tokens;
pub mod tools;
pub mod view;
mod widgets;

use crate::app::browser::Purpose;
use crate::app::state::{AppState, Command};

/// Keyboard shortcuts: (keys, what they do). Shown in the help window and handled by
/// [`menu::shortcuts`].
pub const SHORTCUTS: &[(&str, &str)] = &[
    ("Ctrl+O", "Open files"),
    ("Space", "Play / pause the trajectory"),
    ("Left / Right", "Previous / next frame"),
    ("Home / End", "First / last frame"),
    ("Up / Down", "Previous / next orbital"),
    ("+ / -", "Raise / lower the isovalue"),
    ("0", "Reset the view"),
    (". or double-click an atom", "Centre the view on the atom clicked last"),
    (
        "Letters",
        "Typed anywhere but in a text field, start a command on the command line (as in ChimeraX and PyMOL)",
    ),
    (
        "Escape",
        "Close the open menu or dialog; else stop measuring or labelling; else cancel running field jobs and surface colouring",
    ),
    ("F1 or ?", "Show this help"),
    ("Left drag", "Rotate"),
    ("Right or middle drag", "Pan"),
    ("Wheel", "Zoom"),
    ("Click an atom", "Show its name, residue, charge and field value"),
    (
        "Right-click an atom",
        "Its menu: show its residue or the residues around it, their hydrogen bonds, label it, centre on it",
    ),
];

/// A side panel's width as the user left it, given back when the window grows again: egui keeps a
/// panel's width clamped to the most a small window allowed, so after a window was made small and
/// large again the panels stayed narrow and cut their rows (the orbital energies). Kept in egui's
/// memory, per panel.
#[derive(Clone, Copy, Debug, Default)]
struct SideWidth {
    /// The width the panel had before the window squeezed it (points): as first drawn, or as the
    /// user dragged it.
    wanted: Option<f32>,
    /// The width drawn at the last frame, and the window's width then.
    shown: Option<(f32, f32)>,
}

impl SideWidth {
    /// Where the record of the panel `name` is kept.
    fn id(name: &str) -> egui::Id {
        egui::Id::unique(("side_width", name))
    }

    /// `panel` (named `name`) with its default and range; at the frame the window grows, at its
    /// wanted width where it is drawn narrower than that and the window now allows more.
    fn panel(ui: &egui::Ui, panel: egui::Panel, name: &str, default: f32, max: f32) -> egui::Panel {
        let w: SideWidth = ui.ctx().data(|d| d.get_temp(Self::id(name))).unwrap_or_default();
        let panel = panel
            .default_size(default)
            .size_range(tokens::SIDE_PANEL_MIN_WIDTH..=max);
        let window = ui.ctx().content_rect().width();
        match (w.wanted, w.shown) {
            (Some(wanted), Some((shown, window_before)))
                if window > window_before + 0.5 && wanted > shown + 0.5 && max > shown + 0.5 =>
            {
                panel.exact_size(wanted.min(max))
            }
            _ => panel,
        }
    }

    /// Records the width drawn (the panel's outer width, as egui keeps it under the id it derives
    /// from `ui`'s scope and the panel's name). The first width drawn is the one wanted; later, a
    /// change while the mouse is held and the window keeps its width is the user dragging the
    /// panel's edge.
    fn note(ui: &egui::Ui, name: &str) {
        let panel = ui.scope_id().with_salt(egui::IdSalt::new(name));
        let Some(shown) = egui::containers::panel::PanelState::load(ui.ctx(), panel).map(|p| p.size().x) else {
            return;
        };
        let window = ui.ctx().content_rect().width();
        let dragging = ui.input(|i| i.pointer.any_down());
        ui.ctx().data_mut(|d| {
            let w: &mut SideWidth = d.get_temp_mut_or_default(Self::id(name));
            match w.shown {
                None => w.wanted = Some(shown),
                Some((before, window_before))
                    if dragging && (window - window_before).abs() < 0.5 && (shown - before).abs() > 0.5 =>
                {
                    w.wanted = Some(shown);
                }
                Some(_) => {}
            }
            w.shown = Some((shown, window));
        });
    }
}

/// The side panels' names (egui derives their ids from them).
const LEFT: &str = "orbitfield_left";
const RIGHT: &str = "orbitfield_right";

/// Pushes a command (shorthand used by the panels).
fn send(state: &mut AppState, c: Command) {
    state.push(c);
}

/// The whole window: menu, side panels, timeline and status bar, and the 3-D view in the middle.
pub fn main_ui(ui: &mut egui::Ui, state: &mut AppState) {
    console::take_typed_letters(ui, state);
    menu::shortcuts(ui, state);
    tools::shortcuts(ui, state);
    menu::dropped_files(ui, state);
    egui::Panel::top("orbitfield_menu").show(ui, |ui| menu::menu_ui(ui, state));
    let status = egui::Panel::bottom("orbitfield_status").show(ui, |ui| view::status_bar_ui(ui, state));
    let timeline = egui::Panel::bottom("orbitfield_timeline").show(ui, |ui| timeline::timeline_ui(ui, state));
    let console = egui::Panel::bottom("orbitfield_console").show(ui, |ui| console::console_ui(ui, state));
    for (name, rect) in [
        ("status", status.response.rect),
        ("timeline", timeline.response.rect),
        ("console", console.response.rect),
    ] {
        lay_out_again_if_resized(ui, name, rect);
    }
    // Side panels take at most a fifth of the window each (resizable up to that), so the 3-D view
    // keeps most of it; each collapses to give the view the whole width. On a narrow window (1024
    // points) a fifth is less than the panels' rows need: they keep their default width there, as
    // content wider than a panel is cut off at its edges.
    let width = ui.available_width();
    let max_side = (0.22 * width)
        .max(tokens::SIDE_PANEL_WIDTH.min(0.3 * width))
        .max(tokens::SIDE_PANEL_MIN_WIDTH);
    let default_side = tokens::SIDE_PANEL_WIDTH.min(max_side);
    if state.panels.left_open {
        SideWidth::panel(ui, egui::Panel::left(LEFT), LEFT, default_side, max_side).show(ui, |ui| {
            collapse_button_ui(ui, &mut state.panels.left_open, "Hide this panel");
            egui::ScrollArea::vertical().id_salt("left_scroll").show(ui, |ui| {
                egui::CollapsingHeader::new("Files")
                    .default_open(state.doc.document.is_none())
                    .show(ui, |ui| files::files_ui(ui, state));
                egui::CollapsingHeader::new("Representations")
                    .default_open(true)
                    .show(ui, |ui| reps::reps_ui(ui, state));
                egui::CollapsingHeader::new("View")
                    .default_open(false)
                    .show(ui, |ui| reps::view_options_ui(ui, state));
                egui::CollapsingHeader::new("Jobs")
                    .default_open(false)
                    .show(ui, |ui| jobs::jobs_ui(ui, state));
            });
        });
        SideWidth::note(ui, LEFT);
    }
    if state.panels.right_open {
        SideWidth::panel(ui, egui::Panel::right(RIGHT), RIGHT, default_side, max_side).show(ui, |ui| {
            collapse_button_ui(ui, &mut state.panels.right_open, "Hide this panel");
            egui::ScrollArea::vertical().id_salt("right_scroll").show(ui, |ui| {
                egui::CollapsingHeader::new("Field")
                    .default_open(true)
                    .show(ui, |ui| fields::fields_ui(ui, state));
                egui::CollapsingHeader::new("Orbitals")
                    .default_open(true)
                    .show(ui, |ui| orbitals::orbitals_ui(ui, state));
                let reveal = std::mem::take(&mut state.panels.rdf.reveal);
                egui::CollapsingHeader::new("RDF")
                    .default_open(false)
                    .open(reveal.then_some(true))
                    .show(ui, |ui| rdf::rdf_ui(ui, state));
                egui::CollapsingHeader::new("Measurements")
                    .default_open(true)
                    .show(ui, |ui| measure::measurements_ui(ui, state));
                egui::CollapsingHeader::new("Labels")
                    .default_open(false)
                    .show(ui, |ui| measure::labels_ui(ui, state));
            });
        });
        SideWidth::note(ui, RIGHT);
    }
    egui::CentralPanel::default().frame(egui::Frame::NONE).show(ui, |ui| {
        // The sequence sits under the 3-D view, between the side panels (which keep their height).
        if sequence::wanted(state) {
            egui::Panel::bottom("orbitfield_sequence")
                .frame(egui::Frame::side_top_panel(ui.style()))
                .show(ui, |ui| sequence::sequence_ui(ui, state));
        }
        view::view_ui(ui, state)
    });
    let mut open = state.panels.show_help;
    egui::Window::new("Keyboard and mouse")
        .open(&mut open)
        .collapsible(false)
        .show(ui.ctx(), view::help_ui);
    if open != state.panels.show_help {
        send(state, Command::ToggleHelp);
    }
    browser::browser_window(ui.ctx(), state);
    measure::plot_window(ui.ctx(), state);
    export::export_windows(ui.ctx(), state);
    ils::ils_window(ui.ctx(), state);
    fetch::fetch_window(ui.ctx(), state);
    ramachandran::ramachandran_window(ui.ctx(), state);
    energies::energy_window(ui.ctx(), state);
}

/// The small button at the top of a side panel that collapses it.
fn collapse_button_ui(ui: &mut egui::Ui, open: &mut bool, hover: &str) {
    ui.horizontal(|ui| {
        if ui.small_button("×").on_hover_text(hover).clicked() {
            *open = false;
        }
    });
}

/// A bottom panel is placed by the height it had in the frame before, and content that grew
/// (a message above the command line) is laid out past its lower edge, over the panel below,
/// until something repaints. When a panel's height changes, the frame is laid out again before it
/// is shown, so the command line never moves down a row under the pointer.
fn lay_out_again_if_resized(ui: &egui::Ui, name: &'static str, rect: egui::Rect) {
    let key = egui::Id::unique(("orbitfield_panel_height", name));
    let before: Option<f32> = ui.data_mut(|d| {
        let before = d.get_temp(key);
        d.insert_temp(key, rect.height());
        before
    });
    if before.is_some_and(|h| (h - rect.height()).abs() > 0.5) {
        ui.ctx().request_discard(format!("the {name} panel changed height"));
    }
}
