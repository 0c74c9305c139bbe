//! The jobs section: the field engine, its workers, the last request's stage times, one line per
//! field representation (what it computes and how far it is), the cache and its budget.

use super::{send, tokens};
use crate::app::state::{AppState, Command};
use egui::RichText;

/// Field engine, running jobs with progress and cancel.
pub fn jobs_ui(ui: &mut egui::Ui, state: &mut AppState) {
    ui.label(format!("Engine: {}", state.fields.backend_name()));
    for line in state.panels.graphics.iter().filter(|l| !l.is_empty()) {
        ui.label(RichText::new(line).small());
    }
    progress_ui(ui, state);
    // One wrapped line per worker: a grid's cells do not wrap, and its widest row widened the
    // whole side panel when the section opened.
    for w in state.fields.workers() {
        let line = format!(
            "{} ({}): {} tiles done, {} failed, {} dropped; busy {:.2} s",
            w.engine,
            if w.busy { "busy" } else { "idle" },
            w.tiles_done,
            w.tiles_failed,
            w.tiles_cancelled,
            w.busy_seconds
        );
        let label = ui.add(egui::Label::new(RichText::new(line).small()).wrap());
        if let Some(e) = &w.last_error {
            label.on_hover_text(format!("last error: {e}"));
        }
    }
    if let Some(w) = &state.view.vertex_values {
        // The worker that colours surfaces and cartoons at their vertices is not one of the
        // field pool's: its own row, so "idle" above does not read as nothing running.
        let busy = if w.any_in_flight() { "busy" } else { "idle" };
        ui.label(RichText::new(format!("surface colours at vertices: own worker ({busy})")).small());
    }
    if let Some(t) = state.fields.last_stages() {
        ui.label(
            RichText::new(format!(
                "last field: {:.1} ms (queued {:.1}, computing {:.1} over {} tiles{}, assembling {:.1}) on {}",
                t.total * 1e3,
                t.queue * 1e3,
                t.compute * 1e3,
                t.tiles,
                if t.retried > 0 {
                    format!(", {} retried", t.retried)
                } else {
                    String::new()
                },
                t.assemble * 1e3,
                t.engines.join(" + ")
            ))
            .small(),
        );
    }
    if let Some(e) = &state.fields.last_error {
        ui.label(RichText::new(e).color(tokens::ERROR));
    }
    // One line per field representation: what it computes and how far it is.
    let lines: Vec<(String, Option<String>)> = state
        .doc
        .reps
        .fields()
        .map(|(r, f)| {
            let label = state.rep_label(r);
            let why = placement_reason(state, f.field, f.pipeline.device_shown.is_some());
            let line = match (state.fields.pending(f.pipeline.slot), f.pipeline.shown_key()) {
                (Some(k), _) => {
                    let pct = state
                        .fields
                        .progress(f.pipeline.slot)
                        .map_or(String::new(), |p| format!(" ({:.0}%)", p.fraction * 100.0));
                    format!("{label}: computing frame {}{pct}", k.frame)
                }
                (None, Some(k)) if f.pipeline.device_shown.is_some() => {
                    format!("{label}: frame {} shown, computed on the render device", k.frame)
                }
                (None, Some(k)) => format!("{label}: frame {} shown", k.frame),
                (None, None) if r.visible => format!("{label}: waiting"),
                (None, None) => format!("{label}: hidden"),
            };
            (line, why)
        })
        .collect();
    for (line, why) in lines {
        ui.label(RichText::new(line).small());
        // Where the placement policy puts it, and why.
        if let Some(why) = why {
            ui.label(RichText::new(format!("  {why}")).small().weak());
        }
    }
    let cache = state.fields.cache_use();
    let mib = |b: usize| b as f64 / f64::from(1u32 << 20);
    ui.label(format!(
        "Cache: {:.1} of {:.0} MiB ({} lattices, {} meshes)",
        mib(cache.bytes),
        mib(cache.budget_bytes),
        cache.grids,
        cache.meshes
    ));
    let mut budget = state.settings.cache_budget_mib;
    ui.horizontal(|ui| {
        let l = ui.label("Cache budget");
        if ui
            .add(
                egui::DragValue::new(&mut budget)
                    .update_while_editing(false)
                    .range(16..=65536)
                    .suffix(" MiB"),
            )
            .labelled_by(l.id)
            .changed()
        {
            send(state, Command::SetCacheBudgetMib(budget));
        }
    });
    let c = state.fields.cancellations();
    if c.requests > 0 {
        ui.label(
            RichText::new(format!(
                "{} superseded requests cancelled ({} tiles dropped)",
                c.requests, c.tiles
            ))
            .small(),
        );
    }
}

/// A progress bar (or a spinner) with a cancel button while the view waits for fields, and one
/// while "Save as…" writes.
pub fn progress_ui(ui: &mut egui::Ui, state: &mut AppState) {
    super::fetch::progress_ui(ui, state);
    if let Some(job) = &state.panels.save_job {
        let (written, total) = (job.written(), job.total().max(1));
        let name = job
            .path()
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        ui.horizontal(|ui| {
            ui.add(
                egui::ProgressBar::new(written as f32 / total as f32)
                    .text(format!("saving {name}: {written} of {total} frames"))
                    .desired_width(200.0),
            );
            if ui
                .button("Cancel")
                .on_hover_text("stop writing; no file is left")
                .clicked()
            {
                send(state, Command::CancelSave);
            }
        });
    }
    if let Some(p) = state.fields.overall_progress() {
        ui.horizontal(|ui| {
            ui.add(egui::ProgressBar::new(p.fraction).text(&p.label).desired_width(160.0));
            if ui.button("Cancel").clicked() {
                send(state, Command::CancelJobs);
            }
        });
    } else if let Some(line) = state.pb.progress() {
        ui.horizontal(|ui| {
            ui.spinner();
            ui.label(line);
            if ui
                .button("Cancel")
                .on_hover_text("stop the solve; the frame is solved again when it or a parameter changes")
                .clicked()
            {
                send(state, Command::CancelJobs);
            }
        });
        ui.ctx().request_repaint();
    } else if state.view.vertex_values.as_ref().is_some_and(|w| w.any_in_flight()) {
        // A surface's or cartoon's colours by a potential, evaluated at every vertex on their own
        // thread (minutes for a protein on a CPU): said here, not only in the legend's title.
        ui.horizontal(|ui| {
            ui.spinner();
            ui.label("colouring surfaces at their vertices…")
                .on_hover_text("The potential is evaluated at every vertex of the coloured surfaces; the previous colours stay until it is done");
            if let Some(f) = state.view.vertex_progress.fraction() {
                ui.label(format!("{:.0} %", 100.0 * f));
            }
            if ui
                .button("Cancel")
                .on_hover_text("stop colouring; the surfaces stay uncoloured until the frame or their colouring changes")
                .clicked()
            {
                send(state, Command::CancelJobs);
            }
        });
    } else if state.fields.any_pending() {
        ui.horizontal(|ui| {
            ui.spinner();
            ui.label("computing…");
            if ui.button("Cancel").clicked() {
                send(state, Command::CancelJobs);
            }
        });
    }
}

/// Where the placement policy puts `field` of a representation and why (`on_device`: the render
/// device computed what is shown); `None` for volumes read from files.
fn placement_reason(state: &AppState, field: crate::app::fields::FieldChoice, on_device: bool) -> Option<String> {
    use crate::app::fields::FieldChoice as F;
    use crate::compute::placement::{self, DeviceChoice, Facts, JobKind, JobSize};
    let render = state.fields.device.render.as_ref().map(|r| r.placement_facts());
    let kind = match field {
        F::Orbital { .. } | F::Density | F::SpinDensity if on_device => {
            return placement::orbitals_on_render_device(state.settings.orbitals_on, render.as_ref()).ok();
        }
        F::Orbital { .. } | F::Density | F::SpinDensity => JobKind::Orbital,
        F::WavefunctionPotential => JobKind::QmPotential,
        F::Potential | F::PotentialMean { .. } => JobKind::Potential,
        F::MolSurf { .. } => JobKind::MolSurf,
        F::Ils(_) => JobKind::Ils,
        F::PotentialPb { .. } => JobKind::PoissonBoltzmann,
        F::Volume(_) => return None,
    };
    // The pool's CUDA workers are the CUDA devices the policy may use.
    let facts = Facts {
        cuda_devices: state
            .fields
            .workers()
            .into_iter()
            .filter(|w| w.engine.starts_with("cuda"))
            .map(|w| w.engine)
            .collect(),
        adapter: render,
        ..Facts::default()
    };
    placement::place(kind, JobSize::default(), DeviceChoice::Auto, &facts)
        .ok()
        .map(|p| p.reason())
}
