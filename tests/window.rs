//! The real window under a virtual X server: the binary starts, draws, saves a screenshot through
//! its own `--screenshot` option and exits cleanly. Skipped (with a message) where `xvfb-run` is
//! not installed; CI installs `xvfb` and `mesa-vulkan-drivers`.

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
