//! Journey 4 of the viewer, driven through egui_kittest: adk open, File > "Export image…" at twice
//! the view's size (read back: the size, the molecule's pixels, nothing of the panels), then File >
//! "Record movie…" of 10 frames to MP4 (read back: the boxes by this test's own parser, the sample
//! table by the `mp4` crate's reader, every frame decoded by OpenH264's decoder). The window's part
//! (drawing the view, then `app::export::service`) is played here by a headless render context on
//! whatever adapter exists (Mesa lavapipe in CI); skipped with a message where there is none. Also
//! `orbitfield render --movie`, read back the same way.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use orbitfield::app::draw::SceneSync;
use orbitfield::app::state::AppState;
use orbitfield::render::{GpuScene, RenderContext};
use std::path::Path;
use std::time::{Duration, Instant};

#[path = "common/adk_state.rs"]
mod adk_state;
use adk_state::{adk, data};

fn context() -> Option<RenderContext> {
    match RenderContext::headless(4) {
        Ok(c) => Some(c),
        Err(e) => {
            eprintln!("skipping: {e}");
            None
        }
    }
}

/// The whole window's panels on `state`, commands applied after each frame as the window does.
fn window(state: AppState) -> Harness<'static, AppState> {
    Harness::builder().with_size(egui::vec2(1000.0, 700.0)).build_ui_state(
        |ui, state: &mut AppState| {
            orbitfield::ui::main_ui(ui, state);
            state.apply_pending();
        },
        state,
    )
}

/// The window's redraw after the layout: the update loop, the draw stage, then the export service.
fn redraw(rc: &RenderContext, scene: &mut GpuScene, sync: &mut SceneSync, state: &mut AppState) {
    state.update_reps();
    sync.sync(rc, scene, state);
    orbitfield::app::export::service(rc, scene, state);
}

/// A box's payloads at `path` (e.g. moov/trak/tkhd) in ISO BMFF bytes: the test's own walk of the
/// box structure (size, type, 64-bit sizes), independent of the muxer crate.
fn boxes<'a>(data: &'a [u8], path: &[&[u8; 4]]) -> Vec<&'a [u8]> {
    let mut out = Vec::new();
    let mut at = 0usize;
    while at + 8 <= data.len() {
        let size32 = u32::from_be_bytes(data[at..at + 4].try_into().unwrap()) as usize;
        let kind = &data[at + 4..at + 8];
        let (header, size) = match size32 {
            0 => (8, data.len() - at),
            1 => (
                16,
                u64::from_be_bytes(data[at + 8..at + 16].try_into().unwrap()) as usize,
            ),
            n => (8, n),
        };
        assert!(
            size >= header && at + size <= data.len(),
            "box {kind:?} at {at} overruns the file"
        );
        let payload = &data[at + header..at + size];
        if kind == path[0] {
            if path.len() == 1 {
                out.push(payload);
            } else {
                out.extend(boxes(payload, &path[1..]));
            }
        }
        at += size;
    }
    out
}

/// What the movie file says of itself: frames (stsz), size (tkhd, avc1), H.264 profile (avcC).
struct MovieFacts {
    frames: u32,
    /// The movie's duration (mvhd), seconds.
    seconds: f64,
    tkhd_size: [u32; 2],
    avc1_size: [u32; 2],
    profile: u8,
}

fn movie_facts(bytes: &[u8]) -> MovieFacts {
    let ftyp = boxes(bytes, &[b"ftyp"]);
    assert_eq!(ftyp.len(), 1, "one ftyp box");
    assert_eq!(boxes(bytes, &[b"mdat"]).len(), 1, "one mdat box");
    let mvhd = boxes(bytes, &[b"moov", b"mvhd"])[0];
    let be32 = |b: &[u8], at: usize| u32::from_be_bytes(b[at..at + 4].try_into().unwrap());
    let seconds = if mvhd[0] == 1 {
        u64::from_be_bytes(mvhd[24..32].try_into().unwrap()) as f64 / f64::from(be32(mvhd, 20))
    } else {
        f64::from(be32(mvhd, 16)) / f64::from(be32(mvhd, 12))
    };
    let trak: &[&[u8; 4]] = &[b"moov", b"trak"];
    let tkhd = boxes(bytes, &[trak[0], trak[1], b"tkhd"]);
    assert_eq!(tkhd.len(), 1, "one track");
    let t = tkhd[0];
    let fixed = |at: usize| u32::from_be_bytes(t[at..at + 4].try_into().unwrap()) >> 16;
    let tkhd_size = [fixed(t.len() - 8), fixed(t.len() - 4)];
    let stbl: [&[u8; 4]; 6] = [b"moov", b"trak", b"mdia", b"minf", b"stbl", b"stsz"];
    let stsz = boxes(bytes, &stbl)[0];
    let frames = u32::from_be_bytes(stsz[8..12].try_into().unwrap());
    let stsd = boxes(bytes, &[b"moov", b"trak", b"mdia", b"minf", b"stbl", b"stsd"])[0];
    // version/flags, entry count, then the sample entry box.
    let entries = &stsd[8..];
    let avc1 = boxes(entries, &[b"avc1"]);
    assert_eq!(avc1.len(), 1, "an avc1 (H.264) sample entry");
    let e = avc1[0];
    let u16_at = |at: usize| u32::from(u16::from_be_bytes(e[at..at + 2].try_into().unwrap()));
    let avc1_size = [u16_at(24), u16_at(26)];
    let avcc = boxes(&e[78..], &[b"avcC"]);
    assert_eq!(avcc.len(), 1, "an avcC box");
    MovieFacts {
        frames,
        seconds,
        tkhd_size,
        avc1_size,
        profile: avcc[0][1],
    }
}

/// Every sample of the file's video track decoded by OpenH264 (parameter sets from the track's
/// avcC, samples from length-prefixed to Annex B): each decoded frame's size and RGB pixels.
fn decode_all(path: &Path) -> Vec<([usize; 2], Vec<u8>)> {
    use openh264::formats::YUVSource;
    let file = std::fs::File::open(path).unwrap();
    let size = file.metadata().unwrap().len();
    let mut reader = mp4::Mp4Reader::read_header(std::io::BufReader::new(file), size).unwrap();
    let track_id = *reader.tracks().keys().next().unwrap();
    let track = &reader.tracks()[&track_id];
    let sps = track.sequence_parameter_set().unwrap().to_vec();
    let pps = track.picture_parameter_set().unwrap().to_vec();
    let n = track.sample_count();
    let mut decoder = openh264::decoder::Decoder::new().unwrap();
    let mut out = Vec::new();
    for id in 1..=n {
        let sample = reader.read_sample(track_id, id).unwrap().unwrap();
        let mut annex_b = Vec::new();
        if id == 1 {
            for ps in [&sps, &pps] {
                annex_b.extend_from_slice(&[0, 0, 0, 1]);
                annex_b.extend_from_slice(ps);
            }
        }
        let b = &sample.bytes[..];
        let mut at = 0;
        while at + 4 <= b.len() {
            let len = u32::from_be_bytes(b[at..at + 4].try_into().unwrap()) as usize;
            annex_b.extend_from_slice(&[0, 0, 0, 1]);
            annex_b.extend_from_slice(&b[at + 4..at + 4 + len]);
            at += 4 + len;
        }
        if let Some(yuv) = decoder.decode(&annex_b).unwrap() {
            let (w, h) = yuv.dimensions();
            let mut rgb = vec![0u8; w * h * 3];
            yuv.write_rgb8(&mut rgb);
            out.push(([w, h], rgb));
        }
    }
    for yuv in decoder.flush_remaining().unwrap() {
        let (w, h) = yuv.dimensions();
        let mut rgb = vec![0u8; w * h * 3];
        yuv.write_rgb8(&mut rgb);
        out.push(([w, h], rgb));
    }
    out
}

/// Pixels brighter than the dark background by a margin (atoms drawn).
fn drawn_rgb(rgb: &[u8]) -> usize {
    rgb.chunks_exact(3)
        .filter(|p| p.iter().map(|&c| u32::from(c)).sum::<u32>() > 120)
        .count()
}

#[test]
fn export_a_2x_image_and_a_10_frame_movie_of_adk() {
    let Some(rc) = context() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut scene = GpuScene::new(&rc);
    let mut sync = SceneSync::new(&rc);
    let mut harness = window(adk());
    harness.run();
    let view = harness.state().view.size_px;
    assert!(view[0] > 200 && view[1] > 200, "the 3-D view is laid out: {view:?}");

    // File > Export image…, twice the view's size, supersampled 2x, legends off.
    harness.get_by_label("File").click();
    harness.run();
    harness.get_by_label("Export image…").click();
    harness.run();
    assert!(harness.state().panels.export.image.open, "the dialog opened");
    let image_path = dir.path().join("adk_2x.png");
    harness.state_mut().panels.export.image.path = image_path.display().to_string();
    harness.get_by_label("2x view").click();
    harness.run();
    harness.get_by_label("Colour legends").click();
    harness.run();
    assert_eq!(harness.state().panels.export.image.size_px, view.map(|s| 2 * s));
    harness.get_by_label("Export").click();
    harness.run();
    assert_eq!(harness.state().panels.export.image_requests.len(), 1);
    redraw(&rc, &mut scene, &mut sync, harness.state_mut());
    let status = harness.state().panels.status.clone();
    let img = image::open(&image_path)
        .unwrap_or_else(|e| panic!("{}: {e}; status: {status}", image_path.display()))
        .to_rgba8();
    assert_eq!([img.width(), img.height()], view.map(|s| 2 * s), "{status}");
    // The 3-D view alone: its background at every edge (no menu bar, side panels, status bar or
    // dialog), the molecule's pixels in the middle.
    let bg = img.get_pixel(0, 0).0;
    let (w, h) = img.dimensions();
    for (x, y) in (0..w)
        .flat_map(|x| [(x, 0), (x, h - 1)])
        .chain((0..h).flat_map(|y| [(0, y), (w - 1, y)]))
    {
        assert_eq!(img.get_pixel(x, y).0, bg, "edge pixel ({x}, {y}) is not the background");
    }
    let drawn = img
        .pixels()
        .filter(|p| {
            (0..3)
                .map(|c| (i32::from(p.0[c]) - i32::from(bg[c])).abs())
                .sum::<i32>()
                > 60
        })
        .count();
    assert!(
        drawn > (w * h / 50) as usize,
        "only {drawn} pixels of the molecule in {w}x{h}"
    );
    let no_files = std::fs::read_dir(dir.path()).unwrap().count();
    assert_eq!(no_files, 1, "only the image in the folder (no temporary file left)");

    // A transparent background: alpha 0 at the corners, opaque atoms.
    {
        let st = harness.state_mut();
        st.panels.export.image.transparent = true;
        st.apply(orbitfield::app::state::Command::ExportImage(
            orbitfield::app::export::ImageRequest {
                path: dir.path().join("adk_clear.png"),
                size_px: view,
                supersample: 1,
                transparent: true,
                legend: false,
                annotations: false,
            },
        ));
        redraw(&rc, &mut scene, &mut sync, st);
        let clear = image::open(dir.path().join("adk_clear.png")).unwrap().to_rgba8();
        assert_eq!(clear.get_pixel(0, 0).0[3], 0, "transparent corner");
        let opaque = clear.pixels().filter(|p| p.0[3] == 255).count();
        assert!(opaque > (view[0] * view[1] / 100) as usize, "{opaque} opaque pixels");
    }

    // The image dialog closed, then File > Record movie…: frames 0..9 at 320x240, 10 fps, MP4.
    harness.get_by_label("Close").click();
    harness.run();
    assert!(!harness.state().panels.export.image.open);
    harness.get_by_label("File").click();
    harness.run();
    harness.get_by_label("Record movie…").click();
    harness.run();
    let movie_path = dir.path().join("adk.mp4");
    {
        let m = &mut harness.state_mut().panels.export.movie;
        assert!(m.open);
        m.path = movie_path.display().to_string();
        m.first = 0;
        m.last = 9;
        m.step = 1;
        m.size_px = [320, 240];
        m.fps = 10.0;
        m.supersample = 2;
    }
    harness.run();
    harness.get_by_label("Record").click();
    harness.run();
    assert!(
        harness.state().panels.export.recording.is_some(),
        "recording: {}",
        harness.state().panels.status
    );
    let t0 = Instant::now();
    let mut saw_progress = false;
    while harness.state().panels.export.recording.is_some() {
        assert!(t0.elapsed() < Duration::from_secs(300), "the movie did not finish");
        redraw(&rc, &mut scene, &mut sync, harness.state_mut());
        if !saw_progress && harness.state().panels.export.recording.is_some() {
            harness.run();
            // The progress line and its Cancel button while recording.
            saw_progress = harness.query_by_label("Cancel").is_some();
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(saw_progress, "no progress line with Cancel while recording");
    let status = harness.state().panels.status.clone();
    assert!(status.contains("movie of 10 frames"), "{status}");
    assert_eq!(
        harness.state().document().unwrap().frame_index,
        0,
        "back at the frame shown before"
    );

    let bytes = std::fs::read(&movie_path).unwrap();
    let facts = movie_facts(&bytes);
    assert_eq!(facts.frames, 10);
    assert!(
        (facts.seconds - 1.0).abs() < 1e-9,
        "10 frames at 10 fps: {} s",
        facts.seconds
    );
    assert_eq!(facts.tkhd_size, [320, 240]);
    assert_eq!(facts.avc1_size, [320, 240]);
    assert_eq!(facts.profile, 66, "constrained baseline H.264");
    let decoded = decode_all(&movie_path);
    assert_eq!(decoded.len(), 10, "every frame decodes");
    for (size, rgb) in &decoded {
        assert_eq!(*size, [320, 240]);
        assert!(drawn_rgb(rgb) > 320 * 240 / 50, "a decoded frame shows the molecule");
    }
    // The frames advance the trajectory: the first and last pictures differ.
    let diff = decoded[0]
        .1
        .iter()
        .zip(&decoded[9].1)
        .filter(|(a, b)| a.abs_diff(**b) > 40)
        .count();
    assert!(diff > 100, "frames 0 and 9 look the same ({diff} pixels differ)");
}

#[test]
fn a_cancelled_recording_leaves_no_file() {
    let Some(rc) = context() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut scene = GpuScene::new(&rc);
    let mut sync = SceneSync::new(&rc);
    let mut state = adk();
    state.view.size_px = [320, 240];
    let movie_path = dir.path().join("never.mp4");
    state.apply(orbitfield::app::state::Command::StartMovie(
        orbitfield::app::export::MovieRequest {
            path: movie_path.clone(),
            format: orbitfield::io::write::movie::MovieFormat::Mp4,
            frames: (0..10).collect(),
            size_px: [160, 120],
            supersample: 1,
            fps: 24.0,
            legend: false,
            annotations: false,
        },
    ));
    for _ in 0..4 {
        redraw(&rc, &mut scene, &mut sync, &mut state);
    }
    state.apply(orbitfield::app::state::Command::CancelMovie);
    let t0 = Instant::now();
    while state.panels.export.recording.is_some() {
        assert!(t0.elapsed() < Duration::from_secs(60), "the cancel did not finish");
        redraw(&rc, &mut scene, &mut sync, &mut state);
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(state.panels.status.contains("cancelled"), "{}", state.panels.status);
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "files left: {left:?}");
}

#[test]
fn render_movie_writes_an_mp4_that_decodes() {
    if context().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let movie = dir.path().join("adk.mp4");
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_orbitfield"))
        .arg("render")
        .arg(data("md/adk.psf"))
        .arg(data("md/adk_dims.dcd"))
        .args([
            "--frames", "0:12", "--step", "2", "--fps", "12", "--size", "161x120", "--movie",
        ])
        .arg(&movie)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "render --movie failed: {stderr}");
    // No progress bar ("[###] 3/6 frames, 1s left") when stderr is not a terminal.
    assert!(!stderr.contains("/6 frames,"), "{stderr}");
    let facts = movie_facts(&std::fs::read(&movie).unwrap());
    assert_eq!(facts.frames, 6, "frames 0, 2, .., 10");
    assert!(
        (facts.seconds - 0.5).abs() < 1e-9,
        "6 frames at 12 fps: {} s",
        facts.seconds
    );
    assert_eq!(facts.tkhd_size, [160, 120], "the odd width made even");
    assert_eq!(facts.profile, 66);
    let decoded = decode_all(&movie);
    assert_eq!(decoded.len(), 6);
    assert!(
        decoded
            .iter()
            .all(|(s, rgb)| *s == [160, 120] && drawn_rgb(rgb) > 160 * 120 / 50)
    );
}

/// `render --fit` draws the frame fitted onto frame 0 (as the viewer's "Fit frames to frame 0"),
/// saying by which atoms; a selection of no atoms is refused before anything is drawn.
#[test]
fn render_fit_draws_the_fitted_frame_and_refuses_an_empty_selection() {
    let dir = tempfile::tempdir().unwrap();
    let render = |out: &std::path::Path, fit: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_orbitfield"))
            .arg("render")
            .arg(data("md/adk.psf"))
            .arg(data("md/adk_dims.dcd"))
            .args(["--frame", "60", "--size", "160x120", "--fit", fit, "-o"])
            .arg(out)
            .output()
            .unwrap()
    };
    let none = dir.path().join("none.png");
    let run = render(&none, "resname XYZ");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(!run.status.success());
    assert!(stderr.contains("--fit: 'resname XYZ' picks 0 atoms"), "{stderr}");
    assert!(!none.exists());
    // A name asking for another image format is refused: no folder of that name, no PNG data
    // under a .jpg name.
    let jpg = dir.path().join("picture.jpg");
    let run = render(&jpg, "protein");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(!run.status.success());
    assert!(stderr.contains("images are written as PNG"), "{stderr}");
    assert!(!jpg.exists());
    if context().is_none() {
        return;
    }
    let out = dir.path().join("fitted.png");
    let run = render(&out, "protein and backbone");
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let img = image::open(&out).unwrap().to_rgba8();
    assert_eq!(img.dimensions(), (160, 120));
}
