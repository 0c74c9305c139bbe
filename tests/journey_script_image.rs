//! A script run from the window's command line opens other files, draws them as a cartoon and
//! saves an image: the image holds the cartoon (it once held what the scene had a frame before:
//! nothing). Driven as the window runs a frame: the UI (the command line runs the script), the
//! representations' update, the scene's upload, then the export service, on lavapipe.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use orbitfield::app::draw::SceneSync;
use orbitfield::render::{GpuScene, RenderContext};

#[path = "common/journey.rs"]
mod journey;
use journey::{data, opened, type_command_stepping, window};

#[test]
fn a_script_run_in_the_window_saves_the_cartoon_it_drew() {
    let rc = match RenderContext::headless(4) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("skipping: {e}");
            return;
        }
    };
    let mut scene = GpuScene::new(&rc);
    let mut sync = SceneSync::new(&rc);
    // The NMR models playing, as they do once opened.
    // Cartoons built on their thread and meshed on the render device, as the window does.
    let mut state = opened(&["md/nmr_neopetrosiamide.pdb"], false);
    state.view.gpu_cartoons = rc.capabilities.gpu_cartoons();
    state.build_cartoons_off_thread();
    state.extract_surfaces_off_thread();
    let mut harness = window(state);
    harness.step();
    type_command_stepping(&mut harness, "play on");
    for _ in 0..5 {
        harness.step();
        let state = harness.state_mut();
        sync.sync(&rc, &mut scene, state);
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let dir = tempfile::tempdir().unwrap();
    let image = dir.path().join("cartoon.png");
    let script = dir.path().join("figure.ofc");
    std::fs::write(
        &script,
        format!(
            "open \"{}\" \"{}\"\nrep delete all\nrep add cartoon protein\nsave image \"{}\" size 160x120\n",
            data("md/2r9r-1b.psf").display(),
            data("md/2r9r-1b.xyz").display(),
            image.display()
        ),
    )
    .unwrap();
    type_command_stepping(&mut harness, &format!("run \"{}\"", script.display()));
    let t0 = std::time::Instant::now();
    while !image.exists() {
        harness.step();
        let state = harness.state_mut();
        sync.sync(&rc, &mut scene, state);
        orbitfield::app::export::service(&rc, &mut scene, state);
        assert!(t0.elapsed().as_secs() < 120, "no image: {}", state.panels.status);
    }
    let img = image::open(&image).unwrap().to_rgba8();
    let lit = img.pixels().filter(|p| p[0] > 60 || p[1] > 60 || p[2] > 60).count();
    assert!(
        lit > 500,
        "the cartoon is in the image: {lit} lit pixels of {}",
        img.pixels().len()
    );
}
