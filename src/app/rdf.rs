//! The viewer's RDF analysis: g(r) between two selections over the open trajectory, filled in as
//! frames stream through the RDF workers.
//!
//! Owns [`RdfPanel`] (the form's values, the running computation and its accumulator). The UI thread
//! reads trajectory frames and evaluates the selections (a few frames per UI frame, never blocking:
//! frames go to the workers with `try_submit`), the viewer's pool workers histogram them through
//! `jobs::rdf` on a GPU or the CPU, and [`RdfPanel::pump`] folds finished frames into the accumulator, so the plot grows while
//! the user keeps working. Starting again or cancelling bumps the generation: frames of the older
//! computation still in flight are dropped when they arrive. Called by `AppState` (commands and the
//! per-frame pump) and drawn by `ui::panels::rdf_ui`.

use crate::analysis::rdf::{Rdf, RdfAccumulator, RdfSettings};
use crate::app::document::Document;
use crate::jobs::rdf::{RdfRequest, RdfWork, RdfWorkers, SelectionPair};
use crate::jobs::{DeviceChoice, DeviceWorkers};
use crate::model::Frame;
use crate::model::select::Selection;
use std::sync::Arc;
use std::time::Instant;

/// Frames read and submitted per UI frame at most (reading a frame takes well under a millisecond
/// for DCD/XTC of a few thousand atoms).
const FRAMES_PER_PUMP: usize = 4;

/// A computation in progress (or finished).
pub struct RdfRun {
    pub request: Arc<RdfRequest>,
    pub document_id: u64,
    pub sel1: Selection,
    pub sel2: Selection,
    pub dynamic: bool,
    /// Selections of the first frame (reused unless `dynamic`).
    pub indices: Option<SelectionPair>,
    pub n_frames: usize,
    pub next_frame: usize,
    pub frames_done: usize,
    pub accumulator: RdfAccumulator,
    /// Last normalised result, recomputed when frames arrive.
    pub rdf: Rdf,
    /// Engine of the last finished frame.
    pub engine: String,
    pub started: Instant,
    pub finished: Option<f64>,
    /// A frame that did not submit last time (queue full).
    held: Option<RdfWork>,
}

/// The RDF form and its computation.
pub struct RdfPanel {
    pub sel1_text: String,
    pub sel2_text: String,
    pub r_max_angstrom: f64,
    pub bins: usize,
    pub run: Option<RdfRun>,
    /// The last error, for the panel (also reported once through the status line).
    pub error: Option<String>,
    /// Set when a computation starts (the panel's button, or the `rdf` command from a script or the
    /// command line): the window opens the panel's section once, so the plot is seen.
    pub reveal: bool,
    /// The plot shows n(r), the cumulative count, instead of g(r) (their scales differ tenfold).
    pub show_cumulative: bool,
    workers: Option<RdfWorkers>,
    generation: u64,
}

impl Default for RdfPanel {
    fn default() -> Self {
        RdfPanel {
            sel1_text: "name OW OH2".into(),
            sel2_text: "name OW OH2".into(),
            r_max_angstrom: 8.0,
            bins: 80,
            run: None,
            error: None,
            reveal: false,
            show_cumulative: false,
            workers: None,
            generation: 0,
        }
    }
}

impl RdfPanel {
    /// True while frames remain to be histogrammed.
    pub fn is_running(&self) -> bool {
        self.run.as_ref().is_some_and(|r| r.finished.is_none())
    }

    /// Fraction of frames done (0 when nothing runs).
    pub fn progress(&self) -> f32 {
        self.run
            .as_ref()
            .map_or(0.0, |r| r.frames_done as f32 / r.n_frames.max(1) as f32)
    }

    /// Starts a computation over all frames of `doc` with the form's values, on `workers` (the
    /// viewer's pool; without one, a pool of its own is started once). Errors (bad selection, empty
    /// selection, bad range) are returned in words for the status line.
    pub fn start(&mut self, doc: &Document, workers: Option<DeviceWorkers>) -> Result<(), String> {
        self.cancel();
        self.error = None;
        let result = self.try_start(doc, workers);
        if let Err(e) = &result {
            self.error = Some(e.clone());
        }
        result
    }

    fn try_start(&mut self, doc: &Document, workers: Option<DeviceWorkers>) -> Result<(), String> {
        let sel1 = Selection::parse(&self.sel1_text).map_err(|e| format!("RDF selection 1: {e}"))?;
        let sel2 = Selection::parse(&self.sel2_text).map_err(|e| format!("RDF selection 2: {e}"))?;
        // An atom is never paired with itself (VMD's `measure gofr` leaves these pairs out; with
        // them, the same selection twice puts one pair per atom at r = 0 and its g(r) is a spike
        // there): each atom is its own exclusion group.
        let settings = RdfSettings {
            r_max_angstrom: self.r_max_angstrom,
            bins: self.bins,
            exclude_same_group: true,
        };
        let groups: Vec<u32> = (0..doc.structure.len() as u32).collect();
        let accumulator = RdfAccumulator::new(settings.clone()).map_err(|e| format!("RDF: {e}"))?;
        if doc.n_frames == 0 {
            return Err("RDF: the document has no coordinates".into());
        }
        // Check the selections on the current frame before anything runs.
        for (sel, text, k) in [(&sel1, &self.sel1_text, 1), (&sel2, &self.sel2_text, 2)] {
            if sel.indices(&doc.structure, Some(&doc.frame)).is_empty() {
                return Err(format!("RDF selection {k} '{text}' selects no atoms"));
            }
        }
        let workers = self.workers.get_or_insert_with(|| match workers {
            Some(w) => RdfWorkers::on(w),
            None => RdfWorkers::new(DeviceChoice::Auto),
        });
        self.generation += 1;
        workers.cancel_before(self.generation);
        let dynamic = sel1.needs_positions() || sel2.needs_positions();
        self.run = Some(RdfRun {
            request: Arc::new(RdfRequest {
                generation: self.generation,
                settings,
                groups: Some(groups),
            }),
            document_id: doc.id,
            sel1,
            sel2,
            dynamic,
            indices: None,
            n_frames: doc.n_frames,
            next_frame: 0,
            frames_done: 0,
            rdf: accumulator.finish(),
            accumulator,
            engine: String::new(),
            started: Instant::now(),
            finished: None,
            held: None,
        });
        Ok(())
    }

    /// Stops the running computation (frames in flight are dropped when they arrive).
    /// Forgets the run of another document (cancelled if it is still going): a g(r) is of the
    /// document it was computed on. The form keeps its values.
    pub fn forget_document(&mut self) {
        self.cancel();
        self.run = None;
        self.error = None;
    }

    pub fn cancel(&mut self) {
        if let Some(run) = &mut self.run
            && run.finished.is_none()
        {
            run.finished = Some(run.started.elapsed().as_secs_f64());
            run.n_frames = run.frames_done;
        }
        self.generation += 1;
        if let Some(w) = &self.workers {
            w.cancel_before(self.generation);
        }
    }

    /// Submits the next frames and takes finished ones; returns true when the plot changed. An error
    /// (a bad frame) stops the computation and is returned once.
    pub fn pump(&mut self, doc: Option<&mut Document>) -> Result<bool, String> {
        let (Some(run), Some(workers)) = (&mut self.run, &self.workers) else {
            return Ok(false);
        };
        if run.finished.is_some() {
            return Ok(false);
        }
        let result = match doc.filter(|d| d.id == run.document_id) {
            Some(doc) => pump_run(run, workers, doc),
            // The document was closed or replaced.
            None => Err(None),
        };
        match result {
            Ok(changed) => Ok(changed),
            Err(msg) => {
                self.cancel();
                self.error = msg.clone();
                msg.map_or(Ok(false), Err)
            }
        }
    }
}

fn pump_run(run: &mut RdfRun, workers: &RdfWorkers, doc: &mut Document) -> Result<bool, Option<String>> {
    for _ in 0..FRAMES_PER_PUMP {
        let work = match run.held.take() {
            Some(w) => w,
            None if run.next_frame < run.n_frames => {
                let f = run.next_frame;
                let mut frame = Frame::default();
                doc.trajectory
                    .read_frame(f, &mut frame)
                    .map_err(|e| Some(format!("RDF stopped: frame {}: {e}", f + 1)))?;
                let (i1, i2) = match &run.indices {
                    Some(x) if !run.dynamic => x.clone(),
                    _ => {
                        let x = (
                            Arc::new(run.sel1.indices(&doc.structure, Some(&frame))),
                            Arc::new(run.sel2.indices(&doc.structure, Some(&frame))),
                        );
                        run.indices = Some(x.clone());
                        x
                    }
                };
                run.next_frame += 1;
                RdfWork {
                    request: run.request.clone(),
                    frame_index: f,
                    frame: Arc::new(frame),
                    sel1: i1,
                    sel2: i2,
                }
            }
            None => break,
        };
        if let Err(w) = workers.try_submit(work) {
            run.held = Some(w);
            break;
        }
    }
    let mut changed = false;
    while let Some(done) = workers.try_recv() {
        if done.generation != run.request.generation {
            continue;
        }
        let (counts, cell) = done
            .result
            .map_err(|e| Some(format!("RDF stopped at frame {}: {e}", done.frame_index + 1)))?;
        run.accumulator
            .add_counts(&counts, cell, &done.sel1, &done.sel2, run.request.groups.as_deref());
        run.frames_done += 1;
        run.engine = done.engine;
        changed = true;
    }
    if changed {
        run.rdf = run.accumulator.finish();
    }
    if run.frames_done >= run.n_frames {
        run.finished = Some(run.started.elapsed().as_secs_f64());
    }
    Ok(changed)
}

/// The finished (or running) g(r) of the RDF panel as `orbitfield rdf -o` writes it: a header, then
/// `r_angstrom g n_cumulative` per bin; `None` before any.
pub fn rdf_text(state: &crate::app::state::AppState) -> Option<String> {
    let panel = &state.panels.rdf;
    let run = panel.run.as_ref()?;
    let mut text = format!(
        "# g(r) of '{}' around '{}', {} frames, r_max {} A, {} bins\n# r_angstrom g n_cumulative\n",
        panel.sel2_text,
        panel.sel1_text,
        run.frames_done,
        panel.r_max_angstrom,
        run.rdf.g.len()
    );
    for k in 0..run.rdf.g.len() {
        text.push_str(&format!(
            "{:.5} {:.6} {:.6}\n",
            run.rdf.r_angstrom[k], run.rdf.g[k], run.rdf.n_cumulative[k]
        ));
    }
    Some(text)
}

/// One line on the RDF panel's g(r): its selections, frames and highest peak.
pub fn rdf_summary(state: &crate::app::state::AppState) -> Option<String> {
    let panel = &state.panels.rdf;
    let run = panel.run.as_ref()?;
    // The highest g(r) past the first bin (which holds each atom's pair with itself when the two
    // selections share atoms).
    let (k, g) = run
        .rdf
        .g
        .iter()
        .enumerate()
        .skip(1)
        .filter(|(_, g)| g.is_finite())
        .max_by(|a, b| a.1.total_cmp(b.1))?;
    Some(format!(
        "rdf '{}' with '{}': {} frames, highest g(r) {g:.3} at {:.2} A (r_max {} A, {} bins)",
        panel.sel1_text,
        panel.sel2_text,
        run.frames_done,
        run.rdf.r_angstrom[k],
        panel.r_max_angstrom,
        run.rdf.g.len()
    ))
}
