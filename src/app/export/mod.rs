//! Image export and movie recording of the 3-D view: File > "Export image…" and "Record movie…".
//!
//! Owns [`ExportState`] (the two dialogs' fields, the image requests waiting for the window, the
//! recording in progress) and the commands that change it ([`AppState::apply_export`]). What is
//! written is the 3-D view alone — no panels, menus or egui widgets — drawn again through the
//! offscreen path `orbitfield render` uses ([`capture`]: an [`crate::render::OffscreenTarget`] of
//! the asked size times the supersampling factor, read back, reduced by a box filter in linear
//! light), with the colour legends drawn into the pixels when asked ([`legend`]), and the measurements and
//! labels ([`annotations`]). Images are
//! written under a temporary name and renamed into place; movies are encoded on a thread of their
//! own (`jobs::movie`) while [`record`] advances the frames and waits for each frame's fields,
//! surfaces and colours before it captures.
//!
//! The window calls [`service`] once per redraw after drawing the view (and [`browse`] for the
//! desktop's save dialog); the egui dialogs live in `ui::export`; tests call [`service`] with a
//! headless render context.

pub mod annotations;
pub mod capture;
pub mod legend;
pub mod record;

use super::state::{AppState, Command};
use crate::io::write::movie::MovieFormat;
use crate::render::{GpuScene, RenderContext};
use std::path::{Path, PathBuf};

/// Largest export size, as a multiple of the view's size on each side.
pub const MAX_SCALE_OF_VIEW: u32 = 4;

/// The supersampling factors offered.
pub const SUPERSAMPLE_FACTORS: [u32; 3] = [1, 2, 4];

/// Which export dialog.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExportDialog {
    Image,
    Movie,
}

/// One image to write: the 3-D view at `size_px`, rendered `supersample` times larger on each side
/// and reduced.
#[derive(Clone, Debug, PartialEq)]
pub struct ImageRequest {
    pub path: PathBuf,
    pub size_px: [u32; 2],
    pub supersample: u32,
    /// The background left transparent (alpha from two renders, over black and over white).
    pub transparent: bool,
    /// The colour legends drawn into the image.
    pub legend: bool,
    /// The measurements (dashed lines and values) and atom labels drawn into the image, as the
    /// window draws them over the view.
    pub annotations: bool,
}

/// A movie to record over frames of the open document.
#[derive(Clone, Debug, PartialEq)]
pub struct MovieRequest {
    pub path: PathBuf,
    pub format: MovieFormat,
    /// Frame indices in the order they are recorded.
    pub frames: Vec<usize>,
    pub size_px: [u32; 2],
    pub supersample: u32,
    pub fps: f32,
    pub legend: bool,
    /// The measurements and atom labels drawn into every frame, as the view shows them (at the
    /// frame's positions: a distance's value follows the trajectory).
    pub annotations: bool,
}

/// The "Export image…" dialog's fields.
#[derive(Clone, Debug, PartialEq)]
pub struct ImageDialog {
    pub open: bool,
    pub path: String,
    pub size_px: [u32; 2],
    /// Width and height keep the view's aspect ratio.
    pub lock_aspect: bool,
    pub supersample: u32,
    pub transparent: bool,
    pub legend: bool,
    /// Measurements and labels drawn into the image (on by default: what the view shows).
    pub annotations: bool,
}

/// The "Record movie…" dialog's fields.
#[derive(Clone, Debug, PartialEq)]
pub struct MovieDialog {
    pub open: bool,
    pub path: String,
    pub format: MovieFormat,
    /// First and last frame (0-based, both included) and the step between recorded frames.
    pub first: usize,
    pub last: usize,
    pub step: usize,
    pub size_px: [u32; 2],
    pub lock_aspect: bool,
    pub fps: f32,
    pub supersample: u32,
    pub legend: bool,
    /// Measurements and labels drawn into the frames (on by default: what the view shows).
    pub annotations: bool,
}

/// Export dialogs, waiting requests and the recording in progress.
#[derive(Debug)]
pub struct ExportState {
    pub image: ImageDialog,
    pub movie: MovieDialog,
    /// Images for the window to render once the view shows everything of its frame.
    pub image_requests: Vec<ImageRequest>,
    /// Since when the images asked for wait for the view ([`service`]).
    pub image_waiting_since: Option<std::time::Instant>,
    /// The movie being recorded.
    pub recording: Option<record::Recording>,
    /// The dialog whose "Browse…" asked for the desktop's save dialog (the window shows it).
    pub browse: Option<ExportDialog>,
    /// The last image written (for the dialog's status line).
    pub last_written: Option<PathBuf>,
    /// The folder an image or movie was last asked for in: each dialog opens there.
    pub last_folder: Option<PathBuf>,
}

impl Default for ExportState {
    fn default() -> Self {
        // The folder the viewer was started in, unless that is the root (started from a desktop
        // menu): then the home folder.
        let dir = std::env::current_dir()
            .ok()
            .filter(|d| d.parent().is_some())
            .or_else(|| std::env::var_os("HOME").map(PathBuf::from))
            .unwrap_or_default();
        ExportState {
            image_waiting_since: None,
            image: ImageDialog {
                open: false,
                path: dir.join("orbitfield.png").display().to_string(),
                size_px: [0, 0],
                lock_aspect: true,
                supersample: 2,
                transparent: false,
                legend: true,
                annotations: true,
            },
            movie: MovieDialog {
                open: false,
                path: dir.join("orbitfield.mp4").display().to_string(),
                format: MovieFormat::Mp4,
                first: 0,
                last: 0,
                step: 1,
                size_px: [0, 0],
                lock_aspect: true,
                fps: 24.0,
                supersample: 1,
                legend: true,
                annotations: true,
            },
            image_requests: Vec::new(),
            recording: None,
            browse: None,
            last_written: None,
            last_folder: None,
        }
    }
}

impl ExportState {
    /// True while there is work for the window's next redraws (an image to write, a movie).
    pub fn active(&self) -> bool {
        !self.image_requests.is_empty() || self.recording.is_some()
    }
}

/// `size` changed in one dimension (`changed`: 0 width, 1 height) with the other following at the
/// view's aspect ratio; each side kept in 1..=`max`.
pub fn keep_aspect(size: [u32; 2], changed: usize, view_px: [u32; 2], max: [u32; 2]) -> [u32; 2] {
    let aspect = view_px[0].max(1) as f64 / view_px[1].max(1) as f64;
    let mut out = size;
    if changed == 0 {
        out[1] = (f64::from(size[0]) / aspect).round() as u32;
    } else {
        out[0] = (f64::from(size[1]) * aspect).round() as u32;
    }
    [out[0].clamp(1, max[0].max(1)), out[1].clamp(1, max[1].max(1))]
}

/// The frames first..=last by step, within a document of `n_frames`.
pub fn frame_list(first: usize, last: usize, step: usize, n_frames: usize) -> Result<Vec<usize>, String> {
    if n_frames == 0 {
        return Err("the document has no frames".into());
    }
    if last >= n_frames || first > last {
        return Err(format!(
            "frames {first} to {last}: the document has frames 0 to {}",
            n_frames - 1
        ));
    }
    Ok((first..=last).step_by(step.max(1)).collect())
}

/// Image formats other than PNG, by extension: a name that asks for one is refused rather than
/// given PNG data under it.
const OTHER_IMAGE_EXTENSIONS: [&str; 13] = [
    "jpg", "jpeg", "tif", "tiff", "bmp", "gif", "webp", "svg", "pdf", "eps", "ppm", "tga", "exr",
];

/// Why `path` cannot be an image written here (its name asks for another format than PNG), or
/// `None`.
pub fn not_png_problem(path: &Path) -> Option<String> {
    let ext = path.extension()?.to_string_lossy().to_ascii_lowercase();
    OTHER_IMAGE_EXTENSIONS.contains(&ext.as_str()).then(|| {
        format!(
            "{}: images are written as PNG; name the file .png (or convert the PNG afterwards)",
            path.display()
        )
    })
}

/// `text` as a path with `ext` added when it has no extension.
pub fn path_with_extension(text: &str, ext: &str) -> PathBuf {
    let p = PathBuf::from(text.trim());
    if p.extension().is_none() && !ext.is_empty() {
        p.with_extension(ext)
    } else {
        p
    }
}

impl AppState {
    /// Carries out the export commands.
    pub fn apply_export(&mut self, c: Command) {
        match c {
            Command::ShowExportDialog(which, open) => self.show_export_dialog(which, open),
            Command::ExportImage(request) => {
                if let Err(e) = check_image_request(&request, self.view.size_px) {
                    return self.error(format!("export image: {e}"));
                }
                self.panels.export.last_folder = request.path.parent().map(Path::to_path_buf);
                self.panels.export.image_requests.push(request);
            }
            Command::StartMovie(request) => {
                self.panels.export.last_folder = request.path.parent().map(Path::to_path_buf);
                self.start_movie(request);
            }
            Command::CancelMovie => {
                if let Some(rec) = self.panels.export.recording.as_mut() {
                    rec.cancel();
                    self.panels.status = "cancelling the movie…".into();
                }
            }
            _ => {}
        }
    }

    /// Opens (fills from the view: its size, the document's frames) or closes a dialog.
    fn show_export_dialog(&mut self, which: ExportDialog, open: bool) {
        let view = self.view.size_px.map(|s| s.max(1));
        let n_frames = self.document().map_or(1, |d| d.n_frames.max(1));
        let e = &mut self.panels.export;
        // Opened in the folder last written to (by either dialog or a script), its file name kept.
        let into_last_folder = |path: &mut String, folder: &Option<PathBuf>| {
            if let Some(folder) = folder.as_ref().filter(|f| !f.as_os_str().is_empty())
                && let Some(name) = Path::new(path.as_str()).file_name()
            {
                *path = folder.join(name).display().to_string();
            }
        };
        if open {
            match which {
                ExportDialog::Image if !e.image.open => into_last_folder(&mut e.image.path, &e.last_folder),
                ExportDialog::Movie if !e.movie.open => into_last_folder(&mut e.movie.path, &e.last_folder),
                _ => {}
            }
        }
        match which {
            ExportDialog::Image => {
                if open && !e.image.open {
                    e.image.size_px = view;
                }
                e.image.open = open;
            }
            ExportDialog::Movie => {
                if open && !e.movie.open {
                    // Even sides (H.264 in 4:2:0) at the view's size.
                    e.movie.size_px = view.map(|s| (s / 2 * 2).max(2));
                    e.movie.first = e.movie.first.min(n_frames - 1);
                    e.movie.last = n_frames - 1;
                }
                e.movie.open = open;
            }
        }
    }
}

/// Why an image request cannot be carried out (size beyond 4x the view, no file name, a factor
/// not offered).
pub fn check_image_request(r: &ImageRequest, view_px: [u32; 2]) -> Result<(), String> {
    if r.path.as_os_str().is_empty() || r.path.file_name().is_none() {
        return Err("no file name given".into());
    }
    if let Some(problem) = not_png_problem(&r.path) {
        return Err(problem);
    }
    let max = view_px.map(|s| s.max(1) * MAX_SCALE_OF_VIEW);
    if r.size_px[0] == 0 || r.size_px[1] == 0 || r.size_px[0] > max[0] || r.size_px[1] > max[1] {
        return Err(format!(
            "size {}x{}: each side 1 to 4x the view ({}x{} at most)",
            r.size_px[0], r.size_px[1], max[0], max[1]
        ));
    }
    if !SUPERSAMPLE_FACTORS.contains(&r.supersample) {
        return Err(format!("supersampling {}x: 1x, 2x or 4x", r.supersample));
    }
    Ok(())
}

/// The window's part, once per redraw after the view is drawn: writes the images asked for and
/// advances the movie being recorded. `scene` is the view's scene as just synchronised.
pub fn service(rc: &RenderContext, scene: &mut GpuScene, state: &mut AppState) {
    if !state.panels.export.image_requests.is_empty() {
        images(rc, scene, state);
    }
    record::step(rc, scene, state);
}

/// How long an image asked for waits for the view to show everything of its frame.
pub const MAX_IMAGE_WAIT: std::time::Duration = std::time::Duration::from_secs(300);

/// True when the view shows everything of the current frame: fitted, every representation's
/// fields, surfaces, colours and cartoons of that frame (what a movie waits for).
pub fn view_is_complete(state: &AppState) -> bool {
    state
        .document()
        .is_none_or(|d| !state.view.fit_pending && record::frame_is_current(state, d.frame_index))
}

/// Writes the images asked for once the view is complete ([`view_is_complete`]; a script's `save
/// image` right after `open` or `rep add` would otherwise save what the scene held a frame
/// before), or after [`MAX_IMAGE_WAIT`] with a note.
fn images(rc: &RenderContext, scene: &mut GpuScene, state: &mut AppState) {
    let complete = view_is_complete(state);
    let since = *state
        .panels
        .export
        .image_waiting_since
        .get_or_insert_with(std::time::Instant::now);
    if !complete && since.elapsed() < MAX_IMAGE_WAIT {
        state.panels.status = "image: waiting for the view to finish computing…".into();
        return;
    }
    state.panels.export.image_waiting_since = None;
    let early = if complete {
        ""
    } else {
        " (saved before everything shown was computed: it took more than five minutes)"
    };
    for request in std::mem::take(&mut state.panels.export.image_requests) {
        match capture::export_image(rc, scene, state, &request) {
            Ok(note) => {
                state.panels.status = format!(
                    "image {}x{} saved to {}{note}{early}",
                    request.size_px[0],
                    request.size_px[1],
                    request.path.display()
                );
                state.panels.export.last_written = Some(request.path.clone());
            }
            Err(e) => state.error(format!("export image: {e}")),
        }
    }
}

/// The desktop's save dialog for the export dialog that asked (the window calls this after the
/// layout); where the desktop has none, the typed path is the way and the status line says so.
pub fn browse(state: &mut AppState) {
    let Some(which) = state.panels.export.browse.take() else {
        return;
    };
    if !super::browser::native_dialog_available() {
        state.panels.status =
            "No desktop file dialog (no xdg-desktop-portal and no zenity): type the path in the dialog.".into();
        return;
    }
    let e = &mut state.panels.export;
    let (current, title, filter): (&mut String, &str, Option<(&str, &[&str])>) = match which {
        ExportDialog::Image => (&mut e.image.path, "Export image", Some(("PNG image", &["png"]))),
        ExportDialog::Movie => match e.movie.format {
            MovieFormat::Mp4 => (&mut e.movie.path, "Record movie", Some(("MP4 movie", &["mp4"]))),
            MovieFormat::PngFrames => (&mut e.movie.path, "Folder for the PNG frames", None),
        },
    };
    let start = Path::new(current.as_str());
    let mut dialog = rfd::FileDialog::new().set_title(title);
    if let Some(dir) = start.parent().filter(|d| d.is_dir()) {
        dialog = dialog.set_directory(dir);
    }
    if let Some(name) = start.file_name() {
        dialog = dialog.set_file_name(name.to_string_lossy());
    }
    if let Some((name, exts)) = filter {
        dialog = dialog.add_filter(name, exts);
    }
    if let Some(path) = dialog.save_file() {
        *current = path.display().to_string();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aspect_follows_the_view_and_sizes_stay_in_range() {
        assert_eq!(keep_aspect([1600, 1], 0, [800, 600], [3200, 2400]), [1600, 1200]);
        assert_eq!(keep_aspect([1, 300], 1, [800, 600], [3200, 2400]), [400, 300]);
        assert_eq!(keep_aspect([9000, 1], 0, [800, 600], [3200, 2400]), [3200, 2400]);
    }

    #[test]
    fn frame_ranges_are_checked_against_the_document() {
        assert_eq!(frame_list(0, 9, 3, 10).unwrap(), vec![0, 3, 6, 9]);
        assert_eq!(frame_list(2, 2, 0, 10).unwrap(), vec![2]);
        assert!(frame_list(0, 10, 1, 10).is_err());
        assert!(frame_list(5, 4, 1, 10).is_err());
        assert!(frame_list(0, 0, 1, 0).is_err());
    }

    #[test]
    fn image_requests_beyond_four_times_the_view_are_refused() {
        let r = ImageRequest {
            path: "a.png".into(),
            size_px: [3200, 2400],
            supersample: 2,
            transparent: false,
            legend: false,
            annotations: false,
        };
        assert!(check_image_request(&r, [800, 600]).is_ok());
        let big = ImageRequest {
            size_px: [3201, 2400],
            ..r.clone()
        };
        assert!(check_image_request(&big, [800, 600]).is_err());
        let odd = ImageRequest { supersample: 3, ..r };
        assert!(check_image_request(&odd, [800, 600]).is_err());
        assert_eq!(path_with_extension("out", "png"), PathBuf::from("out.png"));
        assert_eq!(path_with_extension("out.PNG", "png"), PathBuf::from("out.PNG"));
        assert!(not_png_problem(Path::new("a/b.JPG")).is_some_and(|m| m.contains("written as PNG")));
        assert!(not_png_problem(Path::new("a/b.png")).is_none());
        assert!(not_png_problem(Path::new("frames.d")).is_none());
    }
}
