//! Recording a movie in the window: the frames of a range are shown one after the other, each
//! captured only when everything drawn is of that frame (fields computed, surfaces extracted,
//! colours at the vertices, cartoons built), and handed to the encoder job (`jobs::movie`).
//!
//! Owns [`Recording`] and [`frame_is_current`]. [`AppState::start_movie`] checks the request and
//! starts the job; [`step`] (called by `export::service` once per redraw, after the view is
//! drawn) advances one stage at a time so the UI never blocks: show the next frame, wait for it,
//! capture, offer the pixels to the job (kept for the next redraw when its channel is full). The
//! playback is paused while recording and the frame shown before is shown again after.

use super::{MovieRequest, SUPERSAMPLE_FACTORS, capture};
use crate::app::fields::FieldChoice;
use crate::app::state::{AppState, Command};
use crate::io::write::movie::MovieFormat;
use crate::jobs::movie::{MovieFrame, MovieJob, MovieSpec};
use crate::render::target::MAX_SIDE_PX;
use crate::render::{GpuScene, OffscreenTarget, RenderContext};
use std::time::{Duration, Instant};

/// How long a frame may sit with no work in flight and not be current before the movie stops
/// (a field that cannot be computed at that frame).
const IDLE_LIMIT: Duration = Duration::from_secs(5);

/// What the recorder does at the next redraw.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Stage {
    /// Show the next frame of the list.
    Show,
    /// Wait until everything drawn is of this frame.
    Wait(usize),
    /// All frames are with the job; wait for the file.
    Finishing,
}

/// A movie being recorded.
pub struct Recording {
    pub request: MovieRequest,
    job: MovieJob,
    /// Index into `request.frames` of the next frame to show.
    next: usize,
    stage: Stage,
    /// A captured frame the job's channel had no room for yet.
    held: Option<MovieFrame>,
    /// The render target, made once for the whole movie.
    target: Option<OffscreenTarget>,
    /// Supersampling used (lowered from the request's to fit 8192 pixels per side).
    factor: u32,
    /// Frame and playback to return to.
    return_to: usize,
    was_playing: bool,
    /// Since when nothing is in flight and the frame is not current.
    idle_since: Option<Instant>,
    cancelled: bool,
    /// The legends' corner, chosen on the first frame and kept (legends do not jump around).
    legend_corner: Option<super::legend::Corner>,
}

impl std::fmt::Debug for Recording {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recording")
            .field("request", &self.request)
            .field("next", &self.next)
            .field("stage", &self.stage)
            .finish()
    }
}

impl Recording {
    /// Frames captured so far and in all.
    pub fn captured(&self) -> (usize, usize) {
        (self.next.min(self.request.frames.len()), self.request.frames.len())
    }

    /// Frames the job has encoded.
    pub fn encoded(&self) -> usize {
        self.job.encoded()
    }

    /// Stops at the next frame; no file is left.
    pub fn cancel(&mut self) {
        self.cancelled = true;
        self.held = None;
        self.job.cancel();
    }

    /// True once cancelled (the job is stopping).
    pub fn is_cancelled(&self) -> bool {
        self.cancelled
    }
}

/// True when everything the view draws shows frame `f`: the document is at `f`, nothing the
/// screen waits for is in flight, each visible field shows that frame's field (a volume read from
/// the files: any) at full resolution with its colouring of that frame, each visible cartoon is
/// built for that frame with its colours.
pub fn frame_is_current(state: &AppState, f: usize) -> bool {
    let Some(doc) = state.document() else {
        return false;
    };
    if doc.frame_index != f || state.busy() {
        return false;
    }
    let fields = state.reps().fields().all(|(r, rep)| {
        !r.visible
            || (rep
                .pipeline
                .shown_key()
                .is_some_and(|k| k.frame == f || matches!(k.field, FieldChoice::Volume(_) | FieldChoice::Ils(_)))
                && !rep.pipeline.preview
                && rep.color_shows_frame(f))
    });
    let cartoons = state.reps().cartoons().all(|(r, c)| {
        !r.visible
            || (c.pipeline.shown.as_ref().is_some_and(|(k, _)| k.frame == f)
                && (c.color_by.is_none()
                    || c.pipeline.values().is_some_and(|(k, _, _)| k.cartoon.frame == f)
                    || c.pipeline.colours_cancelled()))
    });
    fields && cartoons
}

impl AppState {
    /// Checks `request` against the open document and starts the encoder job.
    pub(crate) fn start_movie(&mut self, request: MovieRequest) {
        if let Some(rec) = &self.panels.export.recording {
            return self.error(format!(
                "record movie: still recording {}; wait or cancel it",
                rec.request.path.display()
            ));
        }
        let Some(doc) = self.document() else {
            return self.error("record movie: open a trajectory first".into());
        };
        let n_frames = doc.n_frames;
        let return_to = doc.frame_index;
        if request.frames.is_empty() || request.frames.iter().any(|&f| f >= n_frames) {
            return self.error(format!(
                "record movie: the frames asked for are not all in 0 to {}",
                n_frames.saturating_sub(1)
            ));
        }
        let [w, h] = request.size_px;
        let max = self.view.size_px.map(|s| s.max(1) * super::MAX_SCALE_OF_VIEW);
        if w == 0 || h == 0 || w > max[0] || h > max[1] {
            return self.error(format!(
                "record movie: size {w}x{h}: each side 1 to 4x the view ({}x{} at most)",
                max[0], max[1]
            ));
        }
        if request.format == MovieFormat::Mp4 && (w % 2 != 0 || h % 2 != 0) {
            return self.error(format!(
                "record movie: size {w}x{h}: MP4 (H.264, 4:2:0) needs an even width and height"
            ));
        }
        if !SUPERSAMPLE_FACTORS.contains(&request.supersample) {
            return self.error(format!(
                "record movie: supersampling {}x: 1x, 2x or 4x",
                request.supersample
            ));
        }
        let Some(factor) = capture::fitting_factor(request.size_px, request.supersample, MAX_SIDE_PX) else {
            return self.error(format!("record movie: size {w}x{h} is beyond 8192 pixels per side"));
        };
        let spec = MovieSpec {
            path: request.path.clone(),
            format: request.format,
            size_px: request.size_px,
            supersample: factor,
            fps: request.fps,
        };
        let job = match MovieJob::start(spec) {
            Ok(job) => job,
            Err(e) => return self.error(format!("record movie: {e}")),
        };
        let was_playing = self.view.timeline.playing;
        self.apply(Command::SetPlaying(false));
        self.panels.status = format!(
            "recording {} frames to {}…",
            request.frames.len(),
            request.path.display()
        );
        self.panels.export.recording = Some(Recording {
            request,
            job,
            next: 0,
            stage: Stage::Show,
            held: None,
            target: None,
            factor,
            return_to,
            was_playing,
            idle_since: None,
            legend_corner: None,
            cancelled: false,
        });
    }
}

/// One stage of the recording (see the module docs); called once per redraw after the view is
/// drawn with `scene` as just synchronised.
pub fn step(rc: &RenderContext, scene: &mut GpuScene, state: &mut AppState) {
    let Some(mut rec) = state.panels.export.recording.take() else {
        return;
    };
    if let Some(done) = rec.job.try_take() {
        // Finished, failed or cancelled: the frame and playback as they were.
        state.apply(Command::SetFrame(rec.return_to));
        if rec.was_playing {
            state.apply(Command::SetPlaying(true));
        }
        match done.result {
            Ok(n) => state.panels.status = format!("movie of {n} frames saved to {}", done.path.display()),
            Err(e) => state.error(format!("record movie: {e}")),
        }
        return;
    }
    if !rec.cancelled
        && let Err(e) = advance(rc, scene, state, &mut rec)
    {
        rec.cancel();
        state.error(format!("record movie: {e}"));
    }
    state.panels.export.recording = Some(rec);
}

fn advance(rc: &RenderContext, scene: &mut GpuScene, state: &mut AppState, rec: &mut Recording) -> Result<(), String> {
    if let Some(frame) = rec.held.take()
        && let Err(back) = rec.job.offer(frame)
    {
        rec.held = Some(back);
        return Ok(());
    }
    match rec.stage {
        Stage::Show => match rec.request.frames.get(rec.next) {
            Some(&f) => {
                state.apply(Command::SetFrame(f));
                rec.stage = Stage::Wait(f);
                rec.idle_since = None;
            }
            None => {
                rec.job.finish();
                rec.stage = Stage::Finishing;
            }
        },
        Stage::Wait(f) => {
            if frame_is_current(state, f) {
                let frame = capture_frame(rc, scene, state, rec)?;
                if let Err(back) = rec.job.offer(frame) {
                    rec.held = Some(back);
                }
                rec.next += 1;
                rec.stage = Stage::Show;
            } else if state.busy() {
                rec.idle_since = None;
            } else {
                let since = *rec.idle_since.get_or_insert_with(Instant::now);
                if since.elapsed() > IDLE_LIMIT {
                    let why = state
                        .fields
                        .last_error
                        .clone()
                        .unwrap_or_else(|| "its fields are not shown".into());
                    return Err(format!("frame {f} cannot be shown: {why}"));
                }
            }
        }
        Stage::Finishing => {}
    }
    Ok(())
}

/// The view of the current frame at the movie's size times its supersampling, legends, measurements
/// and labels drawn in as asked.
fn capture_frame(
    rc: &RenderContext,
    scene: &GpuScene,
    state: &AppState,
    rec: &mut Recording,
) -> Result<MovieFrame, String> {
    let big = rec.request.size_px.map(|s| s * rec.factor);
    if rec.target.as_ref().is_none_or(|t| t.size_px != big) {
        let target = OffscreenTarget::new(rc, big);
        if target.size_px != big {
            return Err(format!("{}x{} pixels is beyond what the device draws", big[0], big[1]));
        }
        rec.target = Some(target);
    }
    let target = rec.target.as_ref().ok_or("no render target")?;
    let rgba = capture::render_into(rc, scene, target, &state.view.camera)?;
    let rgba = if rec.request.legend || rec.request.annotations {
        let mut img =
            image::RgbaImage::from_raw(big[0], big[1], rgba).ok_or("the rendered image has the wrong size")?;
        let scale = big[1] as f32 / state.view.size_px[1].max(1) as f32;
        if rec.request.legend {
            let legends = state.legends();
            let corner = *rec
                .legend_corner
                .get_or_insert_with(|| super::legend::quietest_corner(&img, &legends, scale.max(1.0)));
            for (k, legend) in legends.iter().enumerate() {
                super::legend::draw_legend_at(&mut img, legend, k, scale.max(1.0), corner);
            }
        }
        if rec.request.annotations {
            super::annotations::draw_annotations(&mut img, state, scale.max(1.0));
        }
        img.into_raw()
    } else {
        rgba
    };
    Ok(MovieFrame { rgba, size_px: big })
}
