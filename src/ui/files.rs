//! The files section: open (the desktop's dialog or the built-in browser), the demo, sessions, the
//! recent list and what is open.

use super::{Purpose, send, tokens};
use crate::app::state::{AppState, Command};
use egui::RichText;

/// Files: open, demo, sessions, recent list, and what is open.
pub fn files_ui(ui: &mut egui::Ui, state: &mut AppState) {
    ui.horizontal_wrapped(|ui| {
        if ui.button("Open…").clicked() {
            send(state, Command::OpenDialog);
        }
        if ui
            .button("Browse…")
            .on_hover_text("The built-in file browser (for desktops without a file dialog)")
            .clicked()
        {
            send(state, Command::OpenBrowser(Purpose::OpenFiles, None));
        }
        if ui.button("Demo").clicked() {
            send(state, Command::OpenDemo);
        }
    });
    ui.horizontal_wrapped(|ui| session_buttons_ui(ui, state));
    if let Some(doc) = &state.doc.document {
        ui.label(RichText::new(&doc.name).strong());
        ui.label(format!(
            "{} atoms, {} bonds, {} frame{}",
            doc.structure.len(),
            doc.bonds.len(),
            doc.n_frames,
            if doc.n_frames == 1 { "" } else { "s" }
        ));
        for w in doc.warnings.iter().take(5) {
            // The files' folders make these long: their names alone here, the whole text on hover.
            let short = doc.paths.iter().fold(w.clone(), |text, path| match path.file_name() {
                Some(name) => text.replace(&path.display().to_string(), &name.to_string_lossy()),
                None => text,
            });
            // Notes about the files (charges taken from a table, molecules made whole, atoms of no
            // element) change what the user sees: readable, not fine print.
            ui.label(format!("• {short}")).on_hover_text(w);
        }
        ui.collapsing("Save atoms / frames", |ui| {
            ui.horizontal(|ui| {
                let l = ui.label("Atoms");
                ui.add(
                    egui::TextEdit::singleline(&mut state.panels.save_selection_text)
                        .hint_text("all")
                        .desired_width(120.0),
                )
                .labelled_by(l.id);
            });
            ui.horizontal(|ui| {
                let l = ui.label("Frames");
                ui.add(egui::TextEdit::singleline(&mut state.panels.save_frames_text).desired_width(80.0))
                    .labelled_by(l.id);
            });
            if ui
                .button("Save as…")
                .on_hover_text("PDB, GRO, XYZ, DCD, XTC, TRR or AMBER NetCDF (.nc), by the file's extension")
                .clicked()
            {
                send(state, Command::SaveDialog);
            }
        });
    } else {
        ui.label("Drop files here or open them.");
    }
    if !state.settings.recent.is_empty() {
        ui.add_space(tokens::SECTION_GAP);
        ui.label(RichText::new("Recent").weak());
        let recent = state.settings.recent.clone();
        for files in recent {
            let label = files
                .iter()
                .map(|p| {
                    p.file_name()
                        .map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into_owned())
                })
                .collect::<Vec<_>>()
                .join(" + ");
            if ui.link(label).on_hover_text(format!("{:?}", files)).clicked() {
                send(state, Command::OpenFiles(files));
            }
        }
    }
}

/// "Open session…" and "Save session…" (the files panel and the File menu).
pub fn session_buttons_ui(ui: &mut egui::Ui, state: &mut AppState) {
    if ui.button("Open session…").clicked() {
        send(state, Command::OpenBrowser(Purpose::OpenSession, None));
    }
    if ui
        .add_enabled(state.doc.document.is_some(), egui::Button::new("Save session…"))
        .on_hover_text("Files, representations, frame and camera, to reopen this view")
        .clicked()
    {
        send(state, Command::OpenBrowser(Purpose::SaveSession, None));
    }
}
