//! The files section: open (the desktop's dialog or the built-in browser), the demo, sessions, the
//! recent list and what is open.

use super::{Purpose, send, tokens};
use crate::app::fields::FieldChoice;
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
        // The volumes the files hold, and how to draw them: a cube opened beside a Molden file
        // was otherwise seen only in the field list.
        for (i, grid) in doc.grids.iter().enumerate() {
            let [a, b, c] = grid.lattice.dims;
            ui.label(format!(
                "{} ({a}×{b}×{c} points)",
                state.describe_field(FieldChoice::Volume(i))
            ))
            .on_hover_text(format!(
                "Draw it: + Add > Volume {n}, or the command field add volume:{n}",
                n = i + 1
            ));
        }
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
            let (label, hover) = recent_label(&files);
            if ui.link(label).on_hover_text(hover).clicked() {
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

/// A recent entry in one short line (a series of many frame files as its first and last, with their
/// count), and its files one per line for the hover text (at most a dozen named).
pub fn recent_label(files: &[std::path::PathBuf]) -> (String, String) {
    let name = |p: &std::path::PathBuf| {
        p.file_name()
            .map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into_owned())
    };
    let label = match (files.first(), files.last()) {
        (Some(first), Some(last)) if files.len() > 3 => {
            format!("{} … {} ({} files)", name(first), name(last), files.len())
        }
        _ => files.iter().map(name).collect::<Vec<_>>().join(" + "),
    };
    const NAMED: usize = 12;
    let mut hover: Vec<String> = files.iter().take(NAMED).map(|p| p.display().to_string()).collect();
    if files.len() > NAMED {
        hover.push(format!("… and {} more", files.len() - NAMED));
    }
    (label, hover.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::recent_label;
    use std::path::PathBuf;

    #[test]
    fn a_series_is_one_short_line() {
        let files: Vec<PathBuf> = (0..30)
            .map(|i| PathBuf::from(format!("/data/threonine_md_{i:03}.molden")))
            .collect();
        let (label, hover) = recent_label(&files);
        assert_eq!(label, "threonine_md_000.molden … threonine_md_029.molden (30 files)");
        assert_eq!(hover.lines().count(), 13);
        assert!(hover.ends_with("… and 18 more"), "{hover}");
        let pair = [PathBuf::from("adk.psf"), PathBuf::from("adk_dims.dcd")];
        assert_eq!(recent_label(&pair).0, "adk.psf + adk_dims.dcd");
    }
}
