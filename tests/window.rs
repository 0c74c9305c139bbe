//! The real window under a virtual X server: the binary starts, draws, saves a screenshot through
//! its own `--screenshot` option and exits cleanly; a script's `quit` closes it. Skipped (with a
//! message) where `xvfb-run` is not installed; CI installs `xvfb` and `mesa-vulkan-drivers`. And
//! a headless render outside any desktop session prints no error lines when it succeeds.

use std::process::Command;

#[path = "common/viewer.rs"]
mod viewer;

#[test]
fn viewer_starts_draws_screenshots_and_exits_under_xvfb() {
    if !viewer::have_xvfb() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let shot = dir.path().join("window.png");
    let out = viewer::viewer_under_xvfb(&["--no-settings", "--exit-after-frames", "6", "--screenshot"])
        .arg(&shot)
        .env("XDG_CONFIG_HOME", dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "viewer failed: {stderr}");
    let img = image::open(&shot)
        .unwrap_or_else(|e| panic!("no screenshot ({e}); stderr: {stderr}"))
        .to_rgba8();
    assert_eq!((img.width(), img.height()), (1000, 700));
    let first = img.get_pixel(0, 0);
    assert!(img.pixels().any(|p| p != first), "the screenshot is one flat colour");
    // The demo (ethylene with its HOMO) is drawn in the middle of the 3-D view: both lobe colours
    // appear around the centre of the window.
    let (red, blue) = viewer::lobe_pixels(&img);
    assert!(
        red > 200 && blue > 200,
        "lobes in the view: {red} red and {blue} blue pixels"
    );
}

#[test]
fn viewer_without_display_explains_and_fails_cleanly() {
    let out = Command::new(env!("CARGO_BIN_EXE_orbitfield"))
        .arg("--no-settings")
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("orbitfield render"),
        "points to the headless commands: {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// A script's `quit`, after `save image`, closes the window once the image is written (File >
/// Quit and Ctrl+Q send the same command): the process ends by itself with success, with no
/// `--exit-after-frames` to stop it.
#[test]
fn a_script_saves_an_image_then_quits_the_window() {
    if !viewer::have_xvfb() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let shot = dir.path().join("saved.png");
    let script = dir.path().join("figure.ofc");
    std::fs::write(
        &script,
        format!(
            "rep add ball-and-stick all\nsave image \"{}\" size 160x120\nquit\n",
            shot.display()
        ),
    )
    .unwrap();
    let molecule = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/md/Molecule.mol2");
    let mut child = viewer::viewer_under_xvfb(&["--no-settings"])
        .arg(&molecule)
        .arg(&script)
        .env("XDG_CONFIG_HOME", dir.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > std::time::Duration::from_secs(240) {
            let _ = child.kill();
            // xvfb-run's own children keep the pipe open: the viewer is stopped by its script.
            let _ = Command::new("pkill")
                .args(["-f", script.to_str().unwrap_or("figure.ofc")])
                .status();
            panic!("the window did not quit within 240 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    };
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(status.success(), "{stderr}");
    let img = image::open(&shot)
        .unwrap_or_else(|e| panic!("the image was not written before quitting ({e}); {stderr}"))
        .to_rgba8();
    assert_eq!((img.width(), img.height()), (160, 120));
}

/// Outside a desktop session (no `XDG_RUNTIME_DIR`, no Wayland display: a server, a batch job),
/// a headless render that succeeds prints no "error:" line. Mesa's device-select layer used to
/// make libwayland print "error: XDG_RUNTIME_DIR is invalid or not set" twice per run.
#[test]
fn a_headless_render_without_a_session_prints_no_error_lines() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("quiet.png");
    let molecule = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/md/Molecule.mol2");
    let run = Command::new(env!("CARGO_BIN_EXE_orbitfield"))
        .arg("render")
        .arg(&molecule)
        .args(["--size", "64x48", "-o"])
        .arg(&out)
        .env_remove("XDG_RUNTIME_DIR")
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("NODEVICE_SELECT")
        .env_remove("MESA_VK_DEVICE_SELECT")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    if !run.status.success() && stderr.contains("adapter") {
        eprintln!("skipping: no graphics adapter: {stderr}");
        return;
    }
    assert!(run.status.success(), "{stderr}");
    assert!(
        !stderr.lines().any(|l| l.starts_with("error")),
        "a run that succeeded printed errors: {stderr}"
    );
}
