//! *File > Fetch from PDB…*: a small window that takes a PDB ID and downloads the entry
//! (`app::fetch`), and the download's progress line with Cancel in the status bar.

use super::{send, tokens};
use crate::app::state::{AppState, Command};
use egui::RichText;

/// The File menu's entry and the window's title.
pub const FETCH_MENU: &str = "Fetch from PDB…";
/// The window's button.
pub const FETCH_BUTTON: &str = "Fetch";
/// The ID field's label.
pub const ID_LABEL: &str = "PDB ID";

/// The window, while it is open.
pub fn fetch_window(ctx: &egui::Context, state: &mut AppState) {
    let mut open = state.panels.fetch.form_open;
    if !open {
        return;
    }
    egui::Window::new(FETCH_MENU)
        .open(&mut open)
        .collapsible(false)
        .resizable(false)
        .default_width(320.0)
        .default_pos(egui::pos2(300.0, 100.0))
        .show(ctx, |ui| form_ui(ui, state));
    state.panels.fetch.form_open &= open;
}

fn form_ui(ui: &mut egui::Ui, state: &mut AppState) {
    ui.label(
        RichText::new(format!(
            "The entry's mmCIF file from {}, kept so that it opens without a network next time.",
            state.panels.fetch.source.host()
        ))
        .small()
        .weak(),
    );
    let mut go = false;
    ui.horizontal(|ui| {
        let l = ui.label(ID_LABEL);
        let r = ui
            .add(
                egui::TextEdit::singleline(&mut state.panels.fetch.id_text)
                    .hint_text("1ubq")
                    .desired_width(tokens::TEXT_FIELD_WIDTH * 0.6),
            )
            .labelled_by(l.id);
        go |= r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
        let text = state.panels.fetch.id_text.trim().to_string();
        let valid = crate::io::fetch::parse_pdb_id(&text).is_ok();
        go |= ui.add_enabled(valid, egui::Button::new(FETCH_BUTTON)).clicked();
    });
    let text = state.panels.fetch.id_text.trim().to_string();
    if !text.is_empty()
        && let Err(e) = crate::io::fetch::parse_pdb_id(&text)
    {
        ui.label(RichText::new(e.to_string()).color(tokens::ERROR).small());
    }
    if go && crate::io::fetch::parse_pdb_id(&text).is_ok() {
        send(state, Command::FetchPdb(text));
    }
}

/// The running download's progress line with Cancel.
pub fn progress_ui(ui: &mut egui::Ui, state: &mut AppState) {
    let Some(job) = &state.panels.fetch.job else {
        return;
    };
    let (got, total) = job.progress();
    let kb = |b: u64| format!("{:.0} kB", b as f64 / 1024.0);
    let text = if total > 0 {
        format!("fetching {}: {} of {}", job.id, kb(got), kb(total))
    } else {
        format!("fetching {}: {}", job.id, kb(got))
    };
    let fraction = if total > 0 { got as f32 / total as f32 } else { 0.0 };
    ui.horizontal(|ui| {
        ui.add(egui::ProgressBar::new(fraction).text(text).desired_width(200.0));
        if ui
            .button("Cancel")
            .on_hover_text("stop the download; nothing is kept")
            .clicked()
        {
            send(state, Command::CancelFetch);
        }
    });
}
