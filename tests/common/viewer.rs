//! The real viewer under a virtual X server, shared by `tests/window.rs` and `tests/adapters.rs`.

use std::process::Command;

/// True when `xvfb-run` can be started; prints why the test is skipped otherwise.
pub fn have_xvfb() -> bool {
    if Command::new("xvfb-run").arg("--help").output().is_err() {
        eprintln!("skipping: xvfb-run is not installed");
        return false;
    }
    true
}

/// The viewer binary under `xvfb-run` with a 1000x700 window and `args` after it.
pub fn viewer_under_xvfb(args: &[&str]) -> Command {
    let mut c = Command::new("xvfb-run");
    c.args(["-a", "-s", "-screen 0 1280x800x24"])
        .arg(env!("CARGO_BIN_EXE_orbitfield"))
        .args(["--window-size", "1000x700"])
        .args(args);
    c
}

/// Red and blue pixels around the centre of the 3-D view of a 1000x700 window (the demo's lobes).
pub fn lobe_pixels(img: &image::RgbaImage) -> (u32, u32) {
    let (mut red, mut blue) = (0, 0);
    for y in 250..450 {
        for x in 400..600 {
            let p = img.get_pixel(x, y).0;
            let (r, b) = (i32::from(p[0]), i32::from(p[2]));
            if r > b + 60 {
                red += 1;
            }
            if b > r + 60 {
                blue += 1;
            }
        }
    }
    (red, blue)
}
