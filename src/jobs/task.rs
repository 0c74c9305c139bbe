//! One-off background computations for the viewer (e.g. following an orbital through a series):
//! a named thread runs a closure and hands its result back over a bounded channel of one.
//!
//! Owns [`Task`]. The UI polls [`Task::try_take`] each frame and never blocks; dropping a task that
//! is still running detaches its thread, whose result is then discarded (the closure must not hold
//! anything the UI waits for).

use crossbeam::channel::{Receiver, bounded};
use std::thread::JoinHandle;

/// A computation running on its own named thread.
pub struct Task<T> {
    result: Receiver<T>,
    handle: Option<JoinHandle<()>>,
}

impl<T: Send + 'static> Task<T> {
    /// Starts `work` on a thread named `orbitfield-<name>`.
    pub fn spawn(name: &str, work: impl FnOnce() -> T + Send + 'static) -> Result<Task<T>, String> {
        let (tx, rx) = bounded(1);
        let handle = std::thread::Builder::new()
            .name(format!("orbitfield-{name}"))
            .spawn(move || {
                let _ = tx.send(work());
            })
            .map_err(|e| format!("could not start the {name} thread: {e}"))?;
        Ok(Task {
            result: rx,
            handle: Some(handle),
        })
    }

    /// The result, once, when it is ready.
    pub fn try_take(&mut self) -> Option<T> {
        let r = self.result.try_recv().ok()?;
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
        Some(r)
    }
}
