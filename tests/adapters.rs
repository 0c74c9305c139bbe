//! The real viewer on the adapters many users have: wgpu's OpenGL backend (Mesa llvmpipe, as on a
//! machine without a Vulkan driver) and Mesa's software Vulkan (lavapipe) with fields recomputed
//! for every frame, its resident memory sampled. Skipped (with a message) where `xvfb-run` is not
//! installed; CI installs `xvfb`, `mesa-vulkan-drivers` and Mesa's EGL/GL.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

#[path = "common/viewer.rs"]
mod viewer;
use viewer::{have_xvfb, lobe_pixels, viewer_under_xvfb};

#[test]
fn viewer_on_the_opengl_backend_draws_the_demo_and_exits_cleanly() {
    if !have_xvfb() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let shot = dir.path().join("gl.png");
    let out = viewer_under_xvfb(&[
        "--no-settings",
        "--verbose",
        "--backend",
        "gl",
        "--exit-after-frames",
        "40",
        "--screenshot",
    ])
    .arg(&shot)
    // No Vulkan driver at all, as on the machines this path is for.
    .env("VK_DRIVER_FILES", "/nonexistent.json")
    .env("VK_ICD_FILENAMES", "/nonexistent.json")
    .env("XDG_CONFIG_HOME", dir.path())
    .output()
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "viewer failed: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        stderr.contains("rendering on") && stderr.contains("Gl"),
        "the capabilities line names the OpenGL backend: {stderr}"
    );
    assert!(
        !stderr.contains("graphics device error"),
        "no validation error on the OpenGL backend: {stderr}"
    );
    let img = image::open(&shot)
        .unwrap_or_else(|e| panic!("no screenshot ({e}); stderr: {stderr}"))
        .to_rgba8();
    assert_eq!((img.width(), img.height()), (1000, 700));
    let (red, blue) = lobe_pixels(&img);
    assert!(
        red > 200 && blue > 200,
        "lobes in the view: {red} red and {blue} blue pixels; {stderr}"
    );
}

/// Resident memory of a process in kB (`VmRSS` of /proc), if it is still running.
fn rss_kb(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// The parent pid of a process.
fn parent(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (in parentheses) may hold spaces: the fields after its closing one.
    let rest = stat.get(stat.rfind(')')? + 2..)?;
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// The viewer process started (through `xvfb-run`) by `child`.
fn viewer_pid(child: &Child) -> Option<u32> {
    let exe = std::fs::canonicalize(env!("CARGO_BIN_EXE_orbitfield")).ok()?;
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        if std::fs::read_link(format!("/proc/{pid}/exe")).ok().as_ref() != Some(&exe) {
            continue;
        }
        let mut p = pid;
        for _ in 0..8 {
            match parent(p) {
                Some(q) if q == child.id() => return Some(pid),
                Some(q) if q > 1 => p = q,
                _ => break,
            }
        }
    }
    None
}

#[test]
fn viewer_memory_stays_bounded_while_fields_change_on_software_vulkan() {
    if !have_xvfb() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // Every frame's field computed afresh (nothing replayed from the cache), as in a long trajectory.
    let settings = dir.path().join("orbitfield");
    std::fs::create_dir_all(&settings).unwrap();
    std::fs::write(settings.join("settings.ron"), "(compute_every_frame: true)").unwrap();
    let seconds: u64 = std::env::var("ORBITFIELD_SOAK_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(50);
    let mut child = viewer_under_xvfb(&["--exit-after-frames", "100000000"])
        .env("XDG_CONFIG_HOME", dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let mut pid = None;
    let mut samples = Vec::new();
    while start.elapsed() < Duration::from_secs(seconds) {
        std::thread::sleep(Duration::from_secs(1));
        if pid.is_none() {
            pid = viewer_pid(&child);
        }
        if let Some(kb) = pid.and_then(rss_kb) {
            samples.push((start.elapsed().as_secs_f64(), kb));
        }
        if let Ok(Some(status)) = child.try_wait() {
            panic!("the viewer stopped early: {status}; samples {samples:?}");
        }
    }
    // Ends the viewer through its X server: xvfb-run stops both when its child is ended.
    if let Some(p) = pid {
        let _ = Command::new("kill").arg(p.to_string()).status();
    }
    let _ = child.wait();
    assert!(samples.len() > 20, "too few samples: {samples:?}");
    // After a warm-up (a fifth of the run, at least 10 s: pipelines, caches, the first fields),
    // resident memory stays within 150 MB of its value then.
    let warm = (seconds as f64 / 5.0).max(10.0);
    let base = samples.iter().find(|(t, _)| *t >= warm).map(|s| s.1).unwrap_or(0);
    let peak = samples
        .iter()
        .filter(|(t, _)| *t >= warm)
        .map(|s| s.1)
        .max()
        .unwrap_or(0);
    eprintln!(
        "viewer resident memory: {} MB after warm-up, peak {} MB, last {} MB over {seconds} s",
        base / 1024,
        peak / 1024,
        samples.last().map_or(0, |s| s.1) / 1024
    );
    assert!(
        peak <= base + 150 * 1024,
        "resident memory grew from {base} kB to {peak} kB: {samples:?}"
    );
}
