//! The viewer's side of fetching a PDB entry by its ID (*File > Fetch from PDB*, the `fetch`
//! command): starts the download job (`jobs::fetch`), reports its progress, and opens the entry
//! when it has arrived, as `open FILE` does, saying where it came from and where it is kept.

use super::state::{AppState, Command};
use crate::io::fetch::parse_pdb_id;
use crate::jobs::fetch::FetchJob;

/// The fetch form and its running download.
pub struct FetchPanel {
    /// Where entries come from and where they are kept (from the environment; tests point it at a
    /// server of their own).
    pub source: crate::io::fetch::Source,
    /// The form is open.
    pub form_open: bool,
    /// The ID typed into the form.
    pub id_text: String,
    pub job: Option<FetchJob>,
}

impl Default for FetchPanel {
    fn default() -> Self {
        FetchPanel {
            source: crate::io::fetch::Source::from_environment(),
            form_open: false,
            id_text: String::new(),
            job: None,
        }
    }
}

impl AppState {
    /// Starts downloading the entry `text` names (`1ubq`, `pdb:1ubq`), one at a time.
    pub(crate) fn start_fetch(&mut self, text: &str) {
        let id = match parse_pdb_id(text) {
            Ok(id) => id,
            Err(e) => {
                self.error(e.to_string());
                return;
            }
        };
        if let Some(job) = &self.panels.fetch.job {
            self.error(format!(
                "PDB entry {} is still downloading: wait for it or cancel it first",
                job.id
            ));
            return;
        }
        match FetchJob::start(self.panels.fetch.source.clone(), &id) {
            Ok(job) => {
                self.panels.status = format!(
                    "fetching PDB entry {} from {}…",
                    job.id,
                    self.panels.fetch.source.host()
                );
                self.panels.fetch.form_open = false;
                self.panels.fetch.job = Some(job);
            }
            Err(e) => self.error(e),
        }
    }

    /// Takes the result of a finished download and opens the entry (or reports why not) once;
    /// true while a download runs or when one ended now (the window keeps redrawing for its
    /// progress line).
    pub fn poll_fetch(&mut self) -> bool {
        let Some(job) = self.panels.fetch.job.as_mut() else {
            return false;
        };
        let Some(done) = job.try_take() else {
            return true;
        };
        self.panels.fetch.job = None;
        match done.result {
            Ok((path, downloaded)) => {
                self.apply(Command::OpenFiles(vec![path.clone()]));
                if self.document().is_some() {
                    let how = if downloaded {
                        format!("downloaded from {}", self.panels.fetch.source.host())
                    } else {
                        "from the cache".to_string()
                    };
                    let status = std::mem::take(&mut self.panels.status);
                    self.panels.status = format!("PDB entry {} ({how}, {}); {status}", done.id, path.display());
                }
            }
            Err(e) => self.error(e.to_string()),
        }
        true
    }

    /// Cancels the download that runs, if any.
    pub(crate) fn cancel_fetch(&mut self) {
        if let Some(job) = &self.panels.fetch.job {
            job.cancel();
        }
    }
}
