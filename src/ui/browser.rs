//! The built-in file browser window (`app::browser` owns its state): a path field (type a folder to
//! go there, a file to open it), the filter (files the viewer reads, or all files), the folder's
//! entries with tick boxes, a name field when saving, and why it is shown (the desktop's dialog
//! did not answer). Escape closes it (`ui::menu::shortcuts`).

use super::{Purpose, send, tokens};
use crate::app::browser::BrowserAction;
use crate::app::state::{AppState, Command};
use egui::RichText;

/// Shows the browser window while it is open.
pub fn browser_window(ctx: &egui::Context, state: &mut AppState) {
    if !state.panels.browser.open {
        return;
    }
    let b = state.panels.browser.clone();
    let title = match b.purpose {
        Purpose::OpenFiles => "Open files",
        Purpose::OpenSession => "Open session",
        Purpose::SaveSession => "Save session",
    };
    let mut actions = Vec::new();
    let mut open = true;
    egui::Window::new(title)
        .id(egui::Id::unique("orbitfield_browser"))
        .open(&mut open)
        .default_size([420.0, 360.0])
        .collapsible(false)
        .show(ctx, |ui| {
            // The window keeps its size whatever the folder holds or says (a line kept for the
            // message, a list of fixed height), so its buttons never move under the pointer.
            ui.label(RichText::new(b.message.as_deref().unwrap_or(" ")).color(tokens::ERROR));
            ui.horizontal(|ui| {
                if ui.button("Up").on_hover_text("The parent folder").clicked() {
                    actions.push(BrowserAction::Up);
                }
                let l = ui.label("Path");
                let mut text = b.path_text.clone();
                let edit = ui
                    .add(
                        egui::TextEdit::singleline(&mut text)
                            .id_salt("browser_path")
                            .desired_width((ui.available_width() - 40.0).max(80.0))
                            .hint_text("a folder or a file"),
                    )
                    .labelled_by(l.id)
                    .on_hover_text("Type a folder to go there, or a file to open it; Enter or Go");
                if edit.changed() {
                    actions.push(BrowserAction::PathText(text));
                }
                let enter = edit.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
                if ui.button("Go").clicked() || enter {
                    actions.push(BrowserAction::GoToPath);
                }
            });
            ui.horizontal(|ui| {
                let l = ui.label("Show");
                let readable = match b.purpose {
                    Purpose::OpenFiles => "Files the viewer reads",
                    Purpose::OpenSession | Purpose::SaveSession => "Session files (.ron)",
                };
                let mut all = b.show_all;
                egui::ComboBox::from_id_salt("browser_filter")
                    .selected_text(if all { "All files" } else { readable })
                    .show_ui(ui, |ui| {
                        ui.selectable_value(&mut all, false, readable);
                        ui.selectable_value(&mut all, true, "All files");
                    })
                    .response
                    .labelled_by(l.id);
                if all != b.show_all {
                    actions.push(BrowserAction::ShowAllFiles(all));
                }
            });
            ui.separator();
            egui::ScrollArea::vertical()
                .id_salt("browser_entries")
                .min_scrolled_height(240.0)
                .max_height(240.0)
                .auto_shrink([false, false])
                .show(ui, |ui| {
                    for e in b.entries.iter().filter(|e| b.shows(e)) {
                        if e.is_dir {
                            if ui.link(format!("{}/", e.name)).clicked() {
                                actions.push(BrowserAction::Chdir(b.dir.join(&e.name)));
                            }
                        } else {
                            let mut ticked = b.ticked.contains(&e.name);
                            let text = format!("{}  ({})", e.name, size_text(e.size_bytes));
                            if ui.checkbox(&mut ticked, text).changed() {
                                actions.push(BrowserAction::Toggle(e.name.clone()));
                            }
                        }
                    }
                });
            ui.separator();
            if b.purpose == Purpose::SaveSession {
                let mut name = b.name.clone();
                ui.horizontal(|ui| {
                    let l = ui.label("File name");
                    if ui
                        .add(egui::TextEdit::singleline(&mut name).id_salt("browser_name"))
                        .labelled_by(l.id)
                        .changed()
                    {
                        actions.push(BrowserAction::Name(name.clone()));
                    }
                });
            }
            ui.horizontal(|ui| {
                let confirm = if b.purpose == Purpose::SaveSession {
                    "Save"
                } else {
                    "Open"
                };
                if ui.button(confirm).clicked() {
                    actions.push(BrowserAction::Confirm);
                }
                if ui.button("Cancel").clicked() {
                    actions.push(BrowserAction::Close);
                }
            });
        });
    if !open {
        actions.push(BrowserAction::Close);
    }
    for a in actions {
        send(state, Command::Browser(a));
    }
}

fn size_text(bytes: u64) -> String {
    let b = bytes as f64;
    if b >= 1e9 {
        format!("{:.1} GB", b / 1e9)
    } else if b >= 1e6 {
        format!("{:.1} MB", b / 1e6)
    } else if b >= 1e3 {
        format!("{:.0} kB", b / 1e3)
    } else {
        format!("{bytes} B")
    }
}
