//! Encoding a movie on a thread of its own: the viewer's "Record movie…".
//!
//! Owns [`MovieJob`]. The viewer (`app::export`) renders each frame on the UI thread (the scene
//! lives on the window's device) and hands the read-back pixels over a bounded channel of two
//! frames; this job reduces them by the supersampling factor (`io::write::movie::downsample_box`),
//! encodes them and writes the file through [`MovieWriter`] (temporary name, renamed when the
//! movie is complete). Memory stays flat: at most the frames in the channel are held. Cancelling
//! (or dropping the job) stops at the next frame and leaves no file behind. The frames encoded
//! so far are counted in an atomic the UI reads for its progress line; the one result comes back
//! over [`Task`]'s bounded channel.

use super::task::Task;
use crate::io::write::movie::{MovieFormat, MovieWriter, downsample_box};
use crossbeam::channel::{Receiver, Sender, TrySendError, bounded};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// One rendered frame: tightly packed RGBA rows, `supersample` times the movie's size.
#[derive(Debug)]
pub struct MovieFrame {
    pub rgba: Vec<u8>,
    pub size_px: [u32; 2],
}

/// What to write.
#[derive(Clone, Debug, PartialEq)]
pub struct MovieSpec {
    pub path: PathBuf,
    pub format: MovieFormat,
    /// Size of the movie's frames (even sides for MP4).
    pub size_px: [u32; 2],
    /// The frames arrive this many times larger on each side and are reduced by a box filter.
    pub supersample: u32,
    pub fps: f32,
}

/// A finished movie: its path and the frames written, or why nothing was written.
#[derive(Debug)]
pub struct MovieDone {
    pub path: PathBuf,
    pub result: Result<usize, String>,
}

/// A movie being encoded on its own thread.
pub struct MovieJob {
    frames: Option<Sender<MovieFrame>>,
    task: Task<MovieDone>,
    encoded: Arc<AtomicUsize>,
    cancel: Arc<AtomicBool>,
    path: PathBuf,
}

impl std::fmt::Debug for MovieJob {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MovieJob")
            .field("path", &self.path)
            .field("encoded", &self.encoded())
            .finish()
    }
}

impl MovieJob {
    /// Opens the output (its temporary file) and starts the encoder on a thread named
    /// `orbitfield-movie`.
    pub fn start(spec: MovieSpec) -> Result<MovieJob, String> {
        let writer = MovieWriter::create(&spec.path, spec.format, spec.size_px, spec.fps).map_err(|e| e.to_string())?;
        let (tx, rx) = bounded::<MovieFrame>(2);
        let encoded = Arc::new(AtomicUsize::new(0));
        let cancel = Arc::new(AtomicBool::new(false));
        let (e, c) = (encoded.clone(), cancel.clone());
        let path = spec.path.clone();
        let task = Task::spawn("movie", move || MovieDone {
            path: spec.path.clone(),
            result: run(writer, &spec, &rx, &e, &c),
        })?;
        Ok(MovieJob {
            frames: Some(tx),
            task,
            encoded,
            cancel,
            path,
        })
    }

    /// Hands a frame to the encoder without waiting; gives it back when the channel is full (try
    /// again at the next redraw) or the job has ended.
    pub fn offer(&self, frame: MovieFrame) -> Result<(), MovieFrame> {
        let Some(tx) = &self.frames else {
            return Err(frame);
        };
        tx.try_send(frame).map_err(|e| match e {
            TrySendError::Full(f) | TrySendError::Disconnected(f) => f,
        })
    }

    /// No more frames: the job closes the movie and renames it into place.
    pub fn finish(&mut self) {
        self.frames = None;
    }

    /// Stops at the next frame; the result then says so and no file is left.
    pub fn cancel(&mut self) {
        self.cancel.store(true, Ordering::Release);
        self.frames = None;
    }

    /// Frames encoded so far.
    pub fn encoded(&self) -> usize {
        self.encoded.load(Ordering::Acquire)
    }

    /// The output.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The result, once, when the job has finished.
    pub fn try_take(&mut self) -> Option<MovieDone> {
        self.task.try_take()
    }
}

impl Drop for MovieJob {
    fn drop(&mut self) {
        // Dropped unfinished (the viewer closing): the temporary file goes, the output is untouched.
        if self.frames.is_some() {
            self.cancel();
        }
    }
}

/// The encoding itself, on the job's thread.
fn run(
    mut writer: MovieWriter,
    spec: &MovieSpec,
    frames: &Receiver<MovieFrame>,
    encoded: &AtomicUsize,
    cancel: &AtomicBool,
) -> Result<usize, String> {
    let cancelled = |n: usize| {
        format!(
            "movie {} cancelled after {n} frames; no file written",
            spec.path.display()
        )
    };
    let factor = spec.supersample.max(1);
    while let Ok(frame) = frames.recv() {
        if cancel.load(Ordering::Acquire) {
            return Err(cancelled(writer.frames()));
        }
        let want = spec.size_px.map(|s| s * factor);
        if frame.size_px != want {
            return Err(format!(
                "{}: frame {} is {}x{} pixels, {}x{} expected",
                spec.path.display(),
                writer.frames(),
                frame.size_px[0],
                frame.size_px[1],
                want[0],
                want[1]
            ));
        }
        let (rgba, _) = downsample_box(&frame.rgba, frame.size_px, factor)
            .ok_or_else(|| format!("{}: frame {}: cannot reduce it", spec.path.display(), writer.frames()))?;
        drop(frame);
        writer.push_rgba(&rgba).map_err(|e| e.to_string())?;
        encoded.store(writer.frames(), Ordering::Release);
    }
    if cancel.load(Ordering::Acquire) {
        return Err(cancelled(writer.frames()));
    }
    writer.finish().map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    fn wait(job: &mut MovieJob) -> MovieDone {
        let t0 = Instant::now();
        loop {
            if let Some(d) = job.try_take() {
                return d;
            }
            assert!(t0.elapsed() < Duration::from_secs(60), "the movie job did not finish");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    fn frame(size: [u32; 2], shade: u8) -> MovieFrame {
        MovieFrame {
            rgba: [shade, shade, shade, 255].repeat((size[0] * size[1]) as usize),
            size_px: size,
        }
    }

    fn offer(job: &MovieJob, mut f: MovieFrame) {
        let t0 = Instant::now();
        while let Err(back) = job.offer(f) {
            assert!(t0.elapsed() < Duration::from_secs(60), "the job takes no frames");
            f = back;
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    #[test]
    fn png_frames_are_reduced_and_renamed_into_place() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("frames");
        let mut job = MovieJob::start(MovieSpec {
            path: out.clone(),
            format: MovieFormat::PngFrames,
            size_px: [8, 6],
            supersample: 2,
            fps: 10.0,
        })
        .unwrap();
        for k in 0..3 {
            offer(&job, frame([16, 12], 40 * k));
        }
        job.finish();
        let done = wait(&mut job);
        assert_eq!(done.result, Ok(3));
        let mut names: Vec<String> = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["frame_00000.png", "frame_00001.png", "frame_00002.png"]);
        let img = image::open(out.join("frame_00002.png")).unwrap().to_rgba8();
        assert_eq!(img.dimensions(), (8, 6));
        assert_eq!(img.get_pixel(3, 3).0, [80, 80, 80, 255]);
    }

    #[test]
    fn a_cancelled_movie_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("cancelled.mp4");
        let mut job = MovieJob::start(MovieSpec {
            path: out.clone(),
            format: MovieFormat::Mp4,
            size_px: [32, 16],
            supersample: 1,
            fps: 24.0,
        })
        .unwrap();
        offer(&job, frame([32, 16], 100));
        job.cancel();
        let done = wait(&mut job);
        assert!(done.result.is_err(), "{:?}", done.result);
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert!(left.is_empty(), "files left: {left:?}");
    }
}
