//! The timeline: frame slider, play/pause, speed, loop and "every frame".

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
    ui.horizontal_wrapped(|ui| {
        let play_label = if state.view.timeline.playing { "Pause" } else { "Play" };
        if ui.button(play_label).clicked() {
            send(state, Command::TogglePlaying);
        }
        if ui.button("<").on_hover_text("Previous frame").clicked() {
            send(state, Command::StepFrame(-1));
        }
        if ui.button(">").on_hover_text("Next frame").clicked() {
            send(state, Command::StepFrame(1));
        }
        // A single frame keeps the (disabled) thumb at the start rather than mid-way along 0..=0.
        let last = n.saturating_sub(1);
        ui.spacing_mut().slider_width = (ui.available_width() - 380.0).max(80.0);
        if ui
            .add_enabled(n > 1, egui::Slider::new(&mut frame, 0..=last.max(1)).text("frame"))
            .changed()
        {
            send(state, Command::SetFrame(frame));
        }
        let mut fps = state.view.timeline.fps;
        if ui
            .add(
                egui::DragValue::new(&mut fps)
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
            .button("+")
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
