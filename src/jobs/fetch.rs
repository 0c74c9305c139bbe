//! Downloading a PDB entry on a thread of its own: the viewer's *File > Fetch from PDB* and `fetch`
//! command (`io::fetch` does the work; the entry then opens like a file).
//!
//! Owns [`FetchJob`]: the bytes received and the size announced, in atomics the UI reads for its
//! progress line; cancellation by a flag the download checks between reads (nothing is left
//! behind); the one result over [`Task`]'s bounded channel.

use super::task::Task;
use crate::io::fetch::{FetchError, Source, fetch_entry};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// A finished download: the entry's ID (upper case) and its file, or why there is none.
#[derive(Debug)]
pub struct FetchDone {
    pub id: String,
    /// The file, and whether it was downloaded now (else it came from the cache).
    pub result: Result<(PathBuf, bool), FetchError>,
}

/// A download running on its own thread.
pub struct FetchJob {
    pub id: String,
    task: Task<FetchDone>,
    cancel: Arc<AtomicBool>,
    received: Arc<AtomicU64>,
    total: Arc<AtomicU64>,
}

impl FetchJob {
    /// Starts fetching entry `id` (already checked by `io::fetch::parse_pdb_id`).
    pub fn start(source: Source, id: &str) -> Result<FetchJob, String> {
        let cancel = Arc::new(AtomicBool::new(false));
        let received = Arc::new(AtomicU64::new(0));
        let total = Arc::new(AtomicU64::new(0));
        let (c, r, t) = (cancel.clone(), received.clone(), total.clone());
        let upper = id.to_ascii_uppercase();
        let id_owned = id.to_string();
        let done_id = upper.clone();
        let task = Task::spawn("fetch", move || FetchDone {
            id: done_id,
            result: fetch_entry(&source, &id_owned, &c, &r, &t),
        })?;
        Ok(FetchJob {
            id: upper,
            task,
            cancel,
            received,
            total,
        })
    }

    /// Bytes received so far and the size the server announced (0 when it did not).
    pub fn progress(&self) -> (u64, u64) {
        (
            self.received.load(Ordering::Relaxed),
            self.total.load(Ordering::Relaxed),
        )
    }

    /// Stops the download at its next read.
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }

    /// The result, once, when the download has ended.
    pub fn try_take(&mut self) -> Option<FetchDone> {
        self.task.try_take()
    }
}
