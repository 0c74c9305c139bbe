//! A click on a cartoon picks its residue, as in PyMOL and ChimeraX: with adk drawn as a cartoon
//! alone (no atoms drawn), clicking over a residue's CA picks that CA, its read-out names the
//! residue, and a click on empty space picks nothing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use orbitfield::app::fields::FieldService;
use orbitfield::app::settings::Settings;
use orbitfield::app::state::{AppState, Command};
use std::path::PathBuf;
use std::time::{Duration, Instant};

#[test]
fn a_click_on_a_cartoon_picks_its_residue() {
    let mut state = AppState::new(Settings::default(), FieldService::default());
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    orbitfield::script::run_in(
        &mut state,
        "open md/adk.psf md/adk_dims.dcd\nrep delete all\nrep add cartoon protein",
        &dir,
        None,
        orbitfield::script::RunMode::Headless,
    )
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while state.reps().cartoons().all(|(_, c)| c.guide_atoms().is_empty()) {
        assert!(Instant::now() < deadline, "the cartoon was never drawn");
        state.update_reps();
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(state.view.spheres.is_empty(), "no atoms are drawn");
    let size = [500, 500];
    state.view.size_px = size;
    state.apply(Command::ResetCamera);
    let doc = state.document().unwrap();
    let positions = doc.frame.positions_angstrom.clone();
    let names: Vec<String> = doc.structure.names.iter().map(|n| n.to_string()).collect();
    let guides = state.reps().cartoons().next().unwrap().1.guide_atoms();
    assert_eq!(guides.len(), 214, "adk's 214 residues");
    // The CA nearest the eye among those projecting near the view's centre: nothing hides it.
    let camera = state.view.camera;
    let eye_distance = |a: usize| {
        let (o, _) = camera.ray_through_pixel([250.0, 250.0], size);
        (glam::Vec3::from(positions[a]) - o).length()
    };
    let mut near_centre: Vec<(usize, [f32; 2])> = guides
        .iter()
        .filter_map(|&a| {
            let (px, _) = camera.project_to_pixel(glam::Vec3::from(positions[a]), size)?;
            ((px[0] - 250.0).abs() < 60.0 && (px[1] - 250.0).abs() < 60.0).then_some((a, px))
        })
        .collect();
    near_centre.sort_by(|a, b| eye_distance(a.0).total_cmp(&eye_distance(b.0)));
    let (ca, pixel) = near_centre[0];
    state.apply(Command::Pick { pixel, size_px: size });
    let pick = state.view.pick.clone().expect("the cartoon is hit");
    assert_eq!(pick.atom, ca, "{}", pick.text);
    assert_eq!(names[pick.atom], "CA");
    assert!(pick.text.contains(" CA (C) "), "{}", pick.text);
    // A corner of the view holds no residue.
    state.apply(Command::Pick {
        pixel: [2.0, 2.0],
        size_px: size,
    });
    assert!(state.view.pick.is_none());
    // Hidden, the cartoon is not picked.
    let id = state.reps().cartoons().next().unwrap().0.id;
    state.apply(Command::EditRep(id, orbitfield::app::reps::RepEdit::Visible(false)));
    state.apply(Command::Pick { pixel, size_px: size });
    assert!(state.view.pick.is_none(), "a hidden cartoon is picked");
}
