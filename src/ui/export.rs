//! The "Export image…" and "Record movie…" dialogs (`app::export` owns their state and does the
//! work): file name, size up to 4x the view with the aspect locked by default, supersampling,
//! transparent background and legends for images; frame range, size, frame rate and format for
//! movies, with a progress line and Cancel while one is recorded.
//!
//! Called by [`super::main_ui`] every frame; the fields are the dialog's own state, the buttons
//! push commands.

use super::{send, tokens};
use crate::app::export::{
    ExportDialog, ImageRequest, MAX_SCALE_OF_VIEW, MovieRequest, SUPERSAMPLE_FACTORS, frame_list, keep_aspect,
    path_with_extension,
};
use crate::app::state::{AppState, Command};
use crate::io::write::movie::MovieFormat;
use egui::RichText;

/// The image dialog's option that draws the measurements and labels into the image.
pub const ANNOTATIONS_LABEL: &str = "Measurements and labels";

/// Shows the export dialogs that are open.
pub fn export_windows(ctx: &egui::Context, state: &mut AppState) {
    image_window(ctx, state);
    movie_window(ctx, state);
}

/// Width and height fields (pixels) that keep the view's aspect when `lock` is ticked.
fn size_ui(ui: &mut egui::Ui, size: &mut [u32; 2], lock: &mut bool, view_px: [u32; 2], even: bool) {
    let max = view_px.map(|s| s.max(1) * MAX_SCALE_OF_VIEW);
    ui.horizontal(|ui| {
        ui.label("Size");
        let mut changed = None;
        for (k, name) in [(0, "width"), (1, "height")] {
            let r = ui
                .add(
                    egui::DragValue::new(&mut size[k])
                        .update_while_editing(false)
                        .range(1..=max[k])
                        .suffix(" px"),
                )
                .on_hover_text(format!("Image {name} in pixels (at most 4x the view: {} px)", max[k]));
            if r.changed() {
                changed = Some(k);
            }
            if k == 0 {
                ui.label("×");
            }
        }
        if let Some(k) = changed
            && *lock
        {
            *size = keep_aspect(*size, k, view_px, max);
        }
        ui.checkbox(lock, "Lock aspect");
    });
    ui.horizontal(|ui| {
        ui.label("Size of");
        for scale in 1..=MAX_SCALE_OF_VIEW {
            if ui.small_button(format!("{scale}x view")).clicked() {
                *size = view_px.map(|s| s.max(1) * scale);
            }
        }
        ui.label(RichText::new(format!("(view {}x{} px)", view_px[0], view_px[1])).weak());
    });
    if even {
        *size = size.map(|s| (s / 2 * 2).max(2));
    }
}

fn supersample_ui(ui: &mut egui::Ui, factor: &mut u32) {
    ui.horizontal(|ui| {
        ui.label("Supersampling");
        for f in SUPERSAMPLE_FACTORS {
            ui.selectable_value(factor, f, format!("{f}x")).on_hover_text(format!(
                "Rendered {f} times larger on each side, then reduced (box filter)"
            ));
        }
    });
}

fn path_ui(ui: &mut egui::Ui, state: &mut AppState, which: ExportDialog) {
    ui.horizontal(|ui| {
        let label = ui.label("Save to");
        let path = match which {
            ExportDialog::Image => &mut state.panels.export.image.path,
            ExportDialog::Movie => &mut state.panels.export.movie.path,
        };
        ui.add(egui::TextEdit::singleline(path).desired_width(300.0))
            .labelled_by(label.id);
        if ui.button("Browse…").clicked() {
            state.panels.export.browse = Some(which);
        }
    });
}

fn image_window(ctx: &egui::Context, state: &mut AppState) {
    if !state.panels.export.image.open {
        return;
    }
    let view_px = state.view.size_px;
    let mut open = true;
    egui::Window::new("Export image")
        .id(egui::Id::unique("orbitfield_export_image"))
        .pivot(egui::Align2::CENTER_CENTER)
        .default_pos(ctx.content_rect().center())
        .open(&mut open)
        .collapsible(false)
        .resizable(false)
        .show(ctx, |ui| {
            path_ui(ui, state, ExportDialog::Image);
            let d = &mut state.panels.export.image;
            size_ui(ui, &mut d.size_px, &mut d.lock_aspect, view_px, false);
            supersample_ui(ui, &mut d.supersample);
            ui.checkbox(&mut d.transparent, "Transparent background");
            ui.checkbox(&mut d.legend, "Colour legends");
            ui.checkbox(&mut d.annotations, ANNOTATIONS_LABEL)
                .on_hover_text("The measurement lines with their values and the atom labels, as the view shows them");
            ui.label(RichText::new("The 3-D view only: no panels, menus or widgets.").weak());
            let request = ImageRequest {
                path: path_with_extension(&d.path, "png"),
                size_px: d.size_px,
                supersample: d.supersample,
                transparent: d.transparent,
                legend: d.legend,
                annotations: d.annotations,
            };
            ui.horizontal(|ui| {
                if ui.button("Export").clicked() {
                    send(state, Command::ExportImage(request));
                }
                if ui.button("Close").clicked() {
                    send(state, Command::ShowExportDialog(ExportDialog::Image, false));
                }
            });
            if let Some(p) = &state.panels.export.last_written {
                ui.label(RichText::new(format!("Last saved: {}", p.display())).weak());
            }
        });
    if !open {
        send(state, Command::ShowExportDialog(ExportDialog::Image, false));
    }
}

fn movie_window(ctx: &egui::Context, state: &mut AppState) {
    let recording = state.panels.export.recording.is_some();
    if !state.panels.export.movie.open && !recording {
        return;
    }
    let view_px = state.view.size_px;
    let n_frames = state.document().map_or(0, |d| d.n_frames);
    let mut open = true;
    let mut window = egui::Window::new("Record movie")
        .id(egui::Id::unique("orbitfield_record_movie"))
        .pivot(egui::Align2::CENTER_CENTER)
        .default_pos(ctx.content_rect().center())
        .collapsible(false)
        .resizable(false);
    if !recording {
        window = window.open(&mut open);
    }
    window.show(ctx, |ui| {
        if let Some(rec) = &state.panels.export.recording {
            let (done, total) = rec.captured();
            let encoded = rec.encoded();
            // The encoder finishes on its own thread after the last frame is drawn: look again
            // without waiting for the mouse, so "saved" replaces this as soon as the file is written.
            ui.ctx().request_repaint_after(std::time::Duration::from_millis(100));
            ui.label(format!("Recording {}", rec.request.path.display()));
            ui.add(
                egui::ProgressBar::new(encoded as f32 / total.max(1) as f32)
                    .text(format!("frame {done} of {total} drawn, {encoded} encoded")),
            );
            let cancelled = rec.is_cancelled();
            if cancelled {
                ui.label("Cancelling…");
            } else if ui.button("Cancel").clicked() {
                send(state, Command::CancelMovie);
            }
            return;
        }
        path_ui(ui, state, ExportDialog::Movie);
        let d = &mut state.panels.export.movie;
        ui.horizontal(|ui| {
            ui.label("Format");
            for f in [MovieFormat::Mp4, MovieFormat::PngFrames] {
                if ui.selectable_value(&mut d.format, f, f.name()).changed() {
                    let p = std::path::PathBuf::from(d.path.trim());
                    d.path = match f {
                        MovieFormat::Mp4 => p.with_extension("mp4"),
                        MovieFormat::PngFrames => p.with_extension(""),
                    }
                    .display()
                    .to_string();
                }
            }
        });
        let last = n_frames.saturating_sub(1);
        ui.horizontal(|ui| {
            ui.label("Frames");
            ui.add(
                egui::DragValue::new(&mut d.first)
                    .update_while_editing(false)
                    .range(0..=last)
                    .prefix("first "),
            );
            ui.add(
                egui::DragValue::new(&mut d.last)
                    .update_while_editing(false)
                    .range(0..=last)
                    .prefix("last "),
            );
            ui.add(
                egui::DragValue::new(&mut d.step)
                    .update_while_editing(false)
                    .range(1..=last.max(1))
                    .prefix("step "),
            );
        });
        size_ui(
            ui,
            &mut d.size_px,
            &mut d.lock_aspect,
            view_px,
            d.format == MovieFormat::Mp4,
        );
        ui.horizontal(|ui| {
            ui.label("Frame rate");
            ui.add(
                egui::DragValue::new(&mut d.fps)
                    .update_while_editing(false)
                    .range(1.0..=60.0)
                    .speed(0.5)
                    .suffix(" fps"),
            );
        });
        supersample_ui(ui, &mut d.supersample);
        ui.checkbox(&mut d.legend, "Colour legends");
        ui.checkbox(&mut d.annotations, ANNOTATIONS_LABEL)
            .on_hover_text("The measurement lines with their values and the atom labels, at each frame's positions");
        let frames = frame_list(d.first, d.last, d.step, n_frames);
        match &frames {
            Ok(f) => ui.label(
                RichText::new(format!(
                    "{} frame{}, {:.1} s; {}",
                    f.len(),
                    if f.len() == 1 { "" } else { "s" },
                    f.len() as f32 / d.fps.max(1.0),
                    match d.format {
                        MovieFormat::Mp4 => "H.264 (baseline, 4:2:0): plays in slides and browsers",
                        MovieFormat::PngFrames => "one PNG per frame in the folder",
                    }
                ))
                .weak(),
            ),
            Err(e) => ui.label(RichText::new(e).color(tokens::ERROR)),
        };
        let request = frames.ok().map(|frames| MovieRequest {
            path: match d.format {
                MovieFormat::Mp4 => path_with_extension(&d.path, "mp4"),
                MovieFormat::PngFrames => std::path::PathBuf::from(d.path.trim()),
            },
            format: d.format,
            frames,
            size_px: d.size_px,
            supersample: d.supersample,
            fps: d.fps,
            legend: d.legend,
            annotations: d.annotations,
        });
        ui.horizontal(|ui| {
            if ui.add_enabled(request.is_some(), egui::Button::new("Record")).clicked()
                && let Some(r) = request
            {
                send(state, Command::StartMovie(r));
            }
            if ui.button("Close").clicked() {
                send(state, Command::ShowExportDialog(ExportDialog::Movie, false));
            }
        });
    });
    if !open {
        send(state, Command::ShowExportDialog(ExportDialog::Movie, false));
    }
}
