//! The built-in file browser: what the viewer shows when the desktop's file dialog does not
//! answer (no xdg-desktop-portal and no zenity, e.g. a bare window manager or a remote X session).
//!
//! Owns [`FileBrowser`]: the folder shown, its entries (folders first, hidden files left out, in
//! name order; files the viewer reads unless "All files" is chosen), the files ticked, the typed
//! path, and what the choice is for (opening files or sessions, saving a session). The last folder
//! shown is kept in the settings. Lists folders when asked ([`AppState::browser_action`]); `ui::browser` draws it. Also
//! decides whether the desktop's dialog can be tried at all ([`native_dialog_available`]).

use super::state::{AppState, Command};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// What the chosen path is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Purpose {
    /// Open the ticked files together.
    #[default]
    OpenFiles,
    /// Open a session file.
    OpenSession,
    /// Save the session under the typed name.
    SaveSession,
}

/// One entry of the folder shown.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub name: String,
    pub is_dir: bool,
    pub size_bytes: u64,
}

/// A change in the browser.
#[derive(Clone, Debug, PartialEq)]
pub enum BrowserAction {
    /// Show this folder.
    Chdir(PathBuf),
    /// Up to the parent folder.
    Up,
    /// Tick or untick a file of the folder shown.
    Toggle(String),
    /// The name typed (for saving).
    Name(String),
    /// Open (or save) what is chosen.
    Confirm,
    Close,
    /// The path typed into the path field.
    PathText(String),
    /// Go to the typed path: a folder is shown, a file is opened (or, when saving, written).
    GoToPath,
    /// List every file (true) or only those the viewer reads (false).
    ShowAllFiles(bool),
}

/// The browser's state.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FileBrowser {
    pub open: bool,
    pub purpose: Purpose,
    pub dir: PathBuf,
    pub entries: Vec<Entry>,
    pub ticked: BTreeSet<String>,
    /// The file name typed (for saving a session).
    pub name: String,
    /// Why the browser is shown (the desktop's dialog did not answer), or what went wrong.
    pub message: Option<String>,
    /// The path field: a folder or file typed (or pasted) by the user.
    pub path_text: String,
    /// Every file is listed, not only those the viewer reads ("All files").
    pub show_all: bool,
}

impl FileBrowser {
    /// Whether the entry is listed under the current filter: folders always; files the viewer can
    /// read for its purpose (structures, trajectories, wavefunctions, logs and volumes when opening
    /// files, `.ron` for sessions), or every file with "All files".
    pub fn shows(&self, e: &Entry) -> bool {
        e.is_dir
            || self.show_all
            || match self.purpose {
                Purpose::OpenFiles => readable_name(&e.name),
                Purpose::OpenSession | Purpose::SaveSession => e.name.to_ascii_lowercase().ends_with(".ron"),
            }
    }
}

/// Whether the viewer reads a file by its name: an extension of the io module's sniffing table
/// (`io::sniff::Format::from_extension`, after a `.gz`/`.bz2` suffix), or a QM program's log
/// (`.log`, `.out`, recognised by content when read).
pub fn readable_name(name: &str) -> bool {
    let plain = crate::io::uncompressed_name(Path::new(name));
    let ext = Path::new(&plain)
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    crate::io::sniff::Format::from_extension(&ext).is_some() || matches!(ext.as_str(), "log" | "out")
}

/// Lists a folder: folders first, then files, each in name order; hidden entries left out.
pub fn list_dir(dir: &Path) -> std::io::Result<Vec<Entry>> {
    let mut entries: Vec<Entry> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                return None;
            }
            let meta = std::fs::metadata(e.path()).ok()?;
            Some(Entry {
                name,
                is_dir: meta.is_dir(),
                size_bytes: meta.len(),
            })
        })
        .collect();
    entries.sort_by(|a, b| b.is_dir.cmp(&a.is_dir).then_with(|| a.name.cmp(&b.name)));
    Ok(entries)
}

/// Whether the desktop's file dialog can answer: rfd asks the xdg-desktop-portal over the D-Bus
/// session bus and falls back to `zenity`; without either it returns at once as if cancelled.
pub fn native_dialog_available() -> bool {
    if cfg!(not(all(unix, not(target_os = "macos")))) {
        return true;
    }
    let bus = std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_some_and(|v| !v.is_empty());
    let zenity =
        std::env::var_os("PATH").is_some_and(|paths| std::env::split_paths(&paths).any(|d| d.join("zenity").is_file()));
    bus || zenity
}

impl AppState {
    /// Shows the built-in browser for `purpose` in the last folder it showed (kept in the
    /// settings), else the folder of the last opened file, else the working directory, with
    /// `message` saying why.
    pub(crate) fn open_browser(&mut self, purpose: Purpose, message: Option<String>) {
        let start = self
            .settings
            .last_folder
            .clone()
            .filter(|d| d.is_dir())
            .or_else(|| {
                self.settings
                    .recent
                    .first()
                    .and_then(|f| f.first())
                    .and_then(|p| p.parent())
                    .filter(|d| d.is_dir())
                    .map(Path::to_path_buf)
            })
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_else(|| PathBuf::from("."));
        let b = &mut self.panels.browser;
        b.open = true;
        b.purpose = purpose;
        b.message = message;
        b.name = if purpose == Purpose::SaveSession {
            "session.ron".into()
        } else {
            String::new()
        };
        self.browser_action(BrowserAction::Chdir(start));
    }

    /// Applies one browser action.
    pub(crate) fn browser_action(&mut self, action: BrowserAction) {
        let b = &mut self.panels.browser;
        match action {
            BrowserAction::Chdir(dir) => match list_dir(&dir) {
                Ok(entries) => {
                    b.dir = std::fs::canonicalize(&dir).unwrap_or(dir);
                    b.entries = entries;
                    b.ticked.clear();
                    b.path_text = b.dir.display().to_string();
                    self.settings.last_folder = Some(b.dir.clone());
                }
                Err(e) => b.message = Some(format!("{}: {e}", dir.display())),
            },
            BrowserAction::Up => {
                if let Some(parent) = b.dir.parent().map(Path::to_path_buf) {
                    self.browser_action(BrowserAction::Chdir(parent));
                }
            }
            BrowserAction::Toggle(name) => {
                if !b.ticked.remove(&name) {
                    if b.purpose != Purpose::OpenFiles {
                        b.ticked.clear();
                    }
                    if b.purpose == Purpose::SaveSession {
                        b.name = name.clone();
                    }
                    b.ticked.insert(name);
                }
            }
            BrowserAction::Name(name) => b.name = name,
            BrowserAction::Close => b.open = false,
            BrowserAction::PathText(text) => b.path_text = text,
            BrowserAction::ShowAllFiles(all) => b.show_all = all,
            BrowserAction::GoToPath => self.go_to_typed_path(),
            BrowserAction::Confirm => {
                let dir = b.dir.clone();
                let chosen: Vec<PathBuf> = b.ticked.iter().map(|n| dir.join(n)).collect();
                let command = match b.purpose {
                    Purpose::OpenFiles if !chosen.is_empty() => Some(Command::OpenFiles(chosen)),
                    Purpose::OpenSession => chosen.first().cloned().map(Command::OpenSession),
                    Purpose::SaveSession if !b.name.trim().is_empty() => {
                        Some(Command::SaveSession(dir.join(b.name.trim())))
                    }
                    _ => None,
                };
                match command {
                    Some(c) => {
                        b.open = false;
                        self.apply(c);
                    }
                    None => b.message = Some("choose a file first".into()),
                }
            }
        }
    }
}

impl AppState {
    /// The typed path: `~` is the home folder, a relative path is taken from the folder shown. A
    /// folder is shown; a file is opened (a session file for sessions), or, when saving, its folder
    /// shown and its name taken; a path that does not exist says so.
    fn go_to_typed_path(&mut self) {
        let b = &mut self.panels.browser;
        let text = b.path_text.trim();
        if text.is_empty() {
            return;
        }
        let typed = match text.strip_prefix('~') {
            Some(rest) => std::env::var_os("HOME")
                .map(PathBuf::from)
                .unwrap_or_default()
                .join(rest.trim_start_matches('/')),
            None => PathBuf::from(text),
        };
        let path = if typed.is_absolute() { typed } else { b.dir.join(typed) };
        if path.is_dir() {
            self.browser_action(BrowserAction::Chdir(path));
            return;
        }
        let command = match b.purpose {
            Purpose::OpenFiles if path.is_file() => Some(Command::OpenFiles(vec![path.clone()])),
            Purpose::OpenSession if path.is_file() => Some(Command::OpenSession(path.clone())),
            Purpose::SaveSession if path.parent().is_some_and(Path::is_dir) => Some(Command::SaveSession(path.clone())),
            _ => None,
        };
        match command {
            Some(c) => {
                if let Some(parent) = path.parent() {
                    self.settings.last_folder = Some(parent.to_path_buf());
                }
                self.panels.browser.open = false;
                self.apply(c);
            }
            None => self.panels.browser.message = Some(format!("{}: no such file or folder", path.display())),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn folders_first_hidden_left_out() {
        let dir = tempfile::tempdir().unwrap();
        for f in ["b.pdb", "a.xyz", ".hidden"] {
            std::fs::write(dir.path().join(f), "x").unwrap();
        }
        std::fs::create_dir(dir.path().join("zsub")).unwrap();
        let names: Vec<(String, bool)> = list_dir(dir.path())
            .unwrap()
            .into_iter()
            .map(|e| (e.name, e.is_dir))
            .collect();
        assert_eq!(
            names,
            vec![
                ("zsub".to_string(), true),
                ("a.xyz".to_string(), false),
                ("b.pdb".to_string(), false)
            ]
        );
    }
}
