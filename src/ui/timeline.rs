//! The timeline: frame slider with the frame count and time, play/pause, speed, loop, new frames of a
//! growing trajectory and "every frame".

use super::send;
use crate::app::state::{AppState, Command};

/// Frame slider, play/pause, speed, loop.
pub fn timeline_ui(ui: &mut egui::Ui, state: &mut AppState) {
    let Some(doc) = &state.doc.document else {
        ui.label("No trajectory.");
        return;
    };
    let n = doc.n_frames;
    let mut frame = doc.frame_index;
    let time_ps = doc.frame.time_ps.filter(|t| t.is_finite());
    // The row's layout must not change with what it shows (Play or Pause, a step's energy): a row
    // that wraps differently moves the command line above it under the pointer.
    let energy = state.frame_energy_text();
    let text_width = |ui: &egui::Ui, text: &str| {
        let font = egui::TextStyle::Body.resolve(ui.style());
        ui.painter()
            .layout_no_wrap(text.to_string(), font, egui::Color32::WHITE)
            .size()
            .x
    };
    ui.horizontal_wrapped(|ui| {
        // A single geometry has nothing to play or step through (pausing stays possible).
        let playing = state.view.timeline.playing;
        let play_label = if playing { "Pause" } else { "Play" };
        let play_width = text_width(ui, "Pause") + 2.0 * ui.spacing().button_padding.x;
        if ui
            .add_enabled(
                n > 1 || playing,
                egui::Button::new(play_label).min_size(egui::vec2(play_width, 0.0)),
            )
            .clicked()
        {
            send(state, Command::TogglePlaying);
        }
        if ui
            .add_enabled(n > 1, egui::Button::new("<"))
            .on_hover_text("Previous frame")
            .clicked()
        {
            send(state, Command::StepFrame(-1));
        }
        if ui
            .add_enabled(n > 1, egui::Button::new(">"))
            .on_hover_text("Next frame")
            .clicked()
        {
            send(state, Command::StepFrame(1));
        }
        // A single frame keeps the (disabled) thumb at the start rather than mid-way along 0..=0.
        let last = n.saturating_sub(1);
        // The controls after the slider take about 530 points, plus the time and energy texts.
        let texts: f32 = time_ps.map_or(0.0, |t| text_width(ui, &time_text(t)))
            + energy
                .as_deref()
                .map_or(0.0, |e| text_width(ui, e) + ui.spacing().item_spacing.x);
        ui.spacing_mut().slider_width = (ui.available_width() - 530.0 - texts).max(80.0);
        // The number beside the slider is the frame (from 0, as `frame N` counts); the text after
        // it says how many there are, and the trajectory's time where the file gives it.
        if ui
            .add_enabled(
                n > 1,
                egui::Slider::new(&mut frame, 0..=last.max(1)).text(frames_text(last)),
            )
            .changed()
        {
            send(state, Command::SetFrame(frame));
        }
        if let Some(t) = time_ps {
            ui.label(time_text(t));
        }
        // A QM log's steps: the frame's energy, a click opens the energy plot.
        if let Some(e) = energy
            && ui
                .link(e)
                .on_hover_text("Energy per step: the plot of every frame's energy")
                .clicked()
        {
            state.panels.energies.open = true;
        }
        let mut fps = state.view.timeline.fps;
        if ui
            .add(
                egui::DragValue::new(&mut fps)
                    .update_while_editing(false)
                    .range(0.5..=120.0)
                    .speed(0.2)
                    .suffix(" fps"),
            )
            .changed()
        {
            send(state, Command::SetPlaybackFps(fps));
        }
        let mut looping = state.view.timeline.looping;
        if ui.checkbox(&mut looping, "loop").changed() {
            send(state, Command::SetLoop(looping));
        }
        if ui
            .button("New frames")
            .on_hover_text("Load frames a running simulation has appended to the trajectory file")
            .clicked()
        {
            send(state, Command::PickUpNewFrames);
        }
        let mut every = state.settings.compute_every_frame;
        if ui
            .checkbox(&mut every, "every frame")
            .on_hover_text("Wait for each frame's surface (for movies) instead of dropping frames to keep the rate")
            .changed()
        {
            send(state, Command::SetComputeEveryFrame(every));
        }
    });
}

/// The text after the frame's number: the frames there are, "of 0–97" (counted from 0, as the
/// demo's caption and `frame N` count them), or "(one frame)".
pub fn frames_text(last: usize) -> String {
    if last == 0 {
        "(one frame)".into()
    } else {
        format!("of 0–{last}")
    }
}

/// The frame's time in the trajectory: "t = 40.0 ps", or in ns from 10 ns on.
pub fn time_text(time_ps: f64) -> String {
    if time_ps.abs() >= 10_000.0 {
        format!("t = {:.2} ns", time_ps / 1000.0)
    } else {
        format!("t = {time_ps:.1} ps")
    }
}
