//! Journey of the Poisson-Boltzmann colouring, driven through egui_kittest on the whole window's UI:
//! on adk (tests/data/md/adk.psf + adk_dims.dcd, CHARMM charges from the PSF, radii by element),
//! add the protein's molecular surface coloured by the Poisson-Boltzmann potential through the
//! "+ Add" menu, then play three frames one at a time. At every frame the surface's colouring shows
//! that frame's solution, the legend names the model and its parameters at +-5 kT/e, and the
//! potential at the surface's vertices takes both signs (a protein's surface has acidic and basic
//! patches). The molecular surface is computed by the CPU engine inline on a small lattice; the
//! Poisson-Boltzmann solve runs on the CPU engine's worker at a coarse spacing (1.5 A for the
//! journey, 2 A for the picture).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use orbitfield::app::fields::{FieldBackend, FieldChoice, FieldService, InlineBackend};
use orbitfield::app::reps::RepId;
use orbitfield::app::settings::Settings;
use orbitfield::app::state::{AppState, Command};
use orbitfield::compute::pb::PbEngine;
use std::time::{Duration, Instant};

#[path = "common/adk_state.rs"]
mod adk_state;
use adk_state::data;

#[path = "common/journey.rs"]
mod journey;
use journey::{type_command, type_command_stepping, window};

/// adk with the CPU engine computing fields inline and the PB worker on the CPU, `spacing_angstrom`
/// apart (coarse: the debug build solves on one core shared with the other tests).
fn adk_with_engines(spacing_angstrom: f64) -> AppState {
    let backend = orbitfield::app::blocking_engine().map(|e| Box::new(InlineBackend::new(e)) as Box<dyn FieldBackend>);
    let settings = Settings {
        lattice_points: 32,
        ..Settings::default()
    };
    let mut state = AppState::new(
        settings,
        FieldService::new(backend, orbitfield::app::default_extractor()),
    );
    state.pb.engine = PbEngine::Cpu;
    state.pb.spacing_angstrom = spacing_angstrom;
    state.apply(Command::OpenFiles(vec![data("md/adk.psf"), data("md/adk_dims.dcd")]));
    assert!(state.document().is_some(), "{}", state.panels.status);
    state
}

/// The protein's molecular surface coloured by the Poisson-Boltzmann potential, added through the
/// "+ Add" menu; its id.
fn add_pb_surface(harness: &mut Harness<'static, AppState>) -> RepId {
    harness.get_by_label(orbitfield::ui::add::ADD_BUTTON).click();
    harness.run();
    harness.get_by_label("Selection").set_text_value_accesskit("protein");
    harness.run();
    harness.get_by_label(orbitfield::ui::pb::ADD_PB_SURFACE).click();
    harness.run_steps(4);
    harness
        .state()
        .reps()
        .fields()
        .find(|(_, f)| matches!(f.field, FieldChoice::MolSurf { .. }))
        .map(|(r, _)| r.id)
        .expect("a molecular surface was added")
}

/// Runs frames until `done` holds, at most two minutes.
fn run_until(harness: &mut Harness<'static, AppState>, what: &str, done: impl Fn(&AppState) -> bool) {
    let t0 = Instant::now();
    while !done(harness.state()) {
        harness.step();
        assert!(t0.elapsed() < Duration::from_secs(120), "{what} never happened");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// At frame `frame`: the colouring shows that frame's Poisson-Boltzmann solution, the legend names
/// the model at +-5 kT/e, and the vertices' potentials take both signs beyond +-0.5 kT/e.
fn check_frame(harness: &mut Harness<'static, AppState>, id: RepId, frame: usize) {
    run_until(harness, &format!("frame {frame}'s PB colours"), |st| {
        st.reps()
            .field(id)
            .is_some_and(|f| f.color_shows_frame(frame) && f.pipeline.lobes[0].is_some())
    });
    let st = harness.state();
    assert!(st.pb.failure.is_none(), "{:?}", st.pb.failure);
    let f = st.reps().field(id).unwrap();
    let c = f.coloring.unwrap();
    assert!(matches!(c.source, FieldChoice::PotentialPb { .. }));
    assert_eq!(c.range, Some([-5.0, 5.0]), "the default range is +-5 kT/e");
    let legends = st.legends();
    let legend = legends
        .iter()
        .find(|l| l.title.contains("Poisson-Boltzmann, 0.15 M, eps 2/78.5"))
        .unwrap_or_else(|| {
            panic!(
                "a legend names the model: {:?}",
                legends.iter().map(|l| &l.title).collect::<Vec<_>>()
            )
        });
    assert_eq!(legend.unit, "kT/e");
    assert_eq!(legend.range, [-5.0, 5.0]);
    let (key, grid) = f.pipeline.color.as_ref().unwrap().shown.as_ref().unwrap();
    assert_eq!(key.frame, frame);
    assert!(grid.description.contains("Poisson-Boltzmann"), "{}", grid.description);
    let mut values = Vec::new();
    for mesh in f.pipeline.lobes.iter().flatten() {
        values.extend(
            mesh.positions_angstrom
                .iter()
                .filter_map(|p| grid.trilinear_at_angstrom(*p, false)),
        );
    }
    let negative = values.iter().filter(|v| **v < -0.5).count();
    let positive = values.iter().filter(|v| **v > 0.5).count();
    let (lo, hi) = values
        .iter()
        .fold((f32::MAX, f32::MIN), |(a, b), v| (a.min(*v), b.max(*v)));
    println!(
        "frame {frame}: {} vertices, {negative} below -0.5 kT/e, {positive} above +0.5 kT/e, range {lo:.2}..{hi:.2} kT/e; last solve {:?}",
        values.len(),
        st.pb.last_solve
    );
    assert!(values.len() > 1000, "{} vertices", values.len());
    assert!(
        negative > 50 && positive > 50,
        "both signs on the surface: {negative} negative, {positive} positive"
    );
    assert!(lo > -1000.0 && hi < 1000.0, "screened, not a vacuum sum: {lo}..{hi}");
}

#[test]
fn surface_coloured_by_poisson_boltzmann_plays_three_frames() {
    let mut state = adk_with_engines(1.5);
    // The van der Waals dielectric boundary (no probe): the debug build's molecular-surface maps
    // take most of a solve's time; the viewer's path is the same.
    state.pb.params.probe_angstrom = 0.0;
    let mut harness = window(state);
    harness.run();
    assert!(harness.state().pb_unavailable().is_none(), "adk's PSF carries charges");

    let id = add_pb_surface(&mut harness);
    check_frame(&mut harness, id, 0);
    // adk's PSF gives no radii: the element radii are said on the status line.
    assert!(
        harness.state().panels.status.contains("radii") || harness.state().panels.errors.is_empty(),
        "{}",
        harness.state().panels.status
    );

    // Play three frames, one at a time.
    for frame in 1..=3 {
        harness.get_by_label("Play").click();
        harness.run_steps(4);
        let fps = harness.state().view.timeline.fps;
        harness.state_mut().tick(1.0 / fps + 1e-4);
        harness.run_steps(4);
        harness.get_by_label("Pause").click();
        harness.run_steps(4);
        assert_eq!(harness.state().document().unwrap().frame_index, frame);
        check_frame(&mut harness, id, frame);
    }

    // Another potential unit converts the map at the solve's temperature (298.15 K): +-5 kT/e is
    // +-2.962 kcal/mol/e (R T = 0.592 kcal/mol), said without a note that it stays in kT/e.
    type_command(&mut harness, "set units kcal/mol/e");
    let st = harness.state();
    assert!(!st.panels.status.contains("stays"), "{}", st.panels.status);
    let legends = st.legends();
    let legend = legends
        .iter()
        .find(|l| l.title.contains("Poisson-Boltzmann"))
        .expect("the PB legend");
    assert_eq!(legend.unit, "kcal/mol/e");
    let rt_kcal = 1.987204e-3 * 298.15;
    for (got, want) in legend.range.iter().zip([-5.0 * rt_kcal, 5.0 * rt_kcal]) {
        assert!((got - want).abs() < 1e-4, "{:?} kcal/mol/e", legend.range);
    }
}

/// Red minus blue, averaged over the drawn (not background) pixels within `radius` of `pixel`,
/// and how many pixels were drawn there.
fn red_minus_blue(img: &image::RgbaImage, pixel: [f32; 2], radius: i32) -> (f32, usize) {
    let (mut sum, mut n) = (0.0f32, 0usize);
    for dy in -radius..=radius {
        for dx in -radius..=radius {
            if dx * dx + dy * dy > radius * radius {
                continue;
            }
            let (x, y) = (pixel[0].round() as i32 + dx, pixel[1].round() as i32 + dy);
            if x < 0 || y < 0 || x >= img.width() as i32 || y >= img.height() as i32 {
                continue;
            }
            let p = img.get_pixel(x as u32, y as u32);
            if u32::from(p[0]) + u32::from(p[1]) + u32::from(p[2]) < 60 {
                continue;
            }
            sum += f32::from(p[0]) - f32::from(p[2]);
            n += 1;
        }
    }
    (sum / n.max(1) as f32, n)
}

/// The centres (Angstrom) of adk's most negative and most positive surface patches, from the
/// PSF's charges alone: each residue far out from the protein's centre (its centroid beyond 70 %
/// of the farthest residue's distance) scores the net charge of all atoms within 8 A of its
/// centroid; the lowest and highest scores, with the scores.
fn charged_patches(structure: &orbitfield::model::Structure, positions: &[[f32; 3]]) -> ([f32; 3], f32, [f32; 3], f32) {
    use glam::Vec3;
    let charges = structure.charges_e.as_ref().unwrap();
    let p: Vec<Vec3> = positions.iter().map(|a| Vec3::from(*a)).collect();
    let centre = p.iter().copied().sum::<Vec3>() / p.len() as f32;
    let mut residues: Vec<Vec3> = Vec::new();
    let mut start = 0;
    for i in 1..=p.len() {
        if i == p.len() || structure.resids[i] != structure.resids[start] {
            residues.push(p[start..i].iter().copied().sum::<Vec3>() / (i - start) as f32);
            start = i;
        }
    }
    let far = residues.iter().map(|c| c.distance(centre)).fold(0.0f32, f32::max);
    let mut lo = (Vec3::ZERO, f32::MAX);
    let mut hi = (Vec3::ZERO, f32::MIN);
    for c in residues.iter().filter(|c| c.distance(centre) > 0.7 * far) {
        let q: f32 = p
            .iter()
            .zip(charges)
            .filter(|(a, _)| a.distance(*c) < 8.0)
            .map(|(_, q)| *q)
            .sum();
        if q < lo.1 {
            lo = (*c, q);
        }
        if q > hi.1 {
            hi = (*c, q);
        }
    }
    (lo.0.to_array(), lo.1, hi.0.to_array(), hi.1)
}

/// Drawn through the window's draw path (Mesa lavapipe or whatever adapter exists): adk's
/// surface coloured by the Poisson-Boltzmann potential is red where the camera looks at the most
/// negative patch of charges and blue at the most positive one. Skipped, with the reason printed,
/// where no adapter exists.
#[test]
fn the_pb_surface_is_red_at_the_acidic_patch_and_blue_at_the_basic_one() {
    use glam::{Quat, Vec3};
    use orbitfield::app::reps::{FieldStyle, RepSpec, SpecKind};
    use orbitfield::render::{GpuScene, OffscreenTarget, RenderContext, render_once};
    const SIZE: [u32; 2] = [320, 240];
    let rc = match RenderContext::headless(1) {
        Ok(rc) => rc,
        Err(e) => {
            eprintln!("skipping: no wgpu adapter: {e}");
            return;
        }
    };
    let mut state = adk_with_engines(2.0);
    let ids: Vec<_> = state.reps().list.iter().map(|r| r.id).collect();
    for id in ids {
        state.apply(Command::DeleteRep(id));
    }
    let mut spec = RepSpec::field("molsurf:protein", FieldStyle::Isosurface);
    if let SpecKind::Field { color_by, .. } = &mut spec.kind {
        *color_by = Some("pb".into());
    }
    state.apply(Command::AddRep(spec));
    let t0 = Instant::now();
    loop {
        state.update_reps();
        let f = state.reps().fields().next().map(|(_, f)| f).unwrap();
        if f.color_shows_frame(0) && f.pipeline.lobes[0].is_some() {
            break;
        }
        assert!(state.pb.failure.is_none(), "{:?}", state.pb.failure);
        assert!(t0.elapsed() < Duration::from_secs(120), "the PB colours never arrived");
        std::thread::sleep(Duration::from_millis(20));
    }
    let doc = state.document().unwrap();
    let (acidic, q_acidic, basic, q_basic) = charged_patches(&doc.structure, &doc.frame.positions_angstrom);
    println!("acidic patch at {acidic:?}: {q_acidic:+.2} e within 8 A; basic patch at {basic:?}: {q_basic:+.2} e");
    assert!(q_acidic < -1.0 && q_basic > 1.0, "{q_acidic} {q_basic}");

    let mut scene = GpuScene::new(&rc);
    let mut sync = orbitfield::app::draw::SceneSync::new(&rc);
    let target = OffscreenTarget::new(&rc, SIZE);
    state.view.size_px = SIZE;
    let (lo, hi) = state.scene_bounds().unwrap();
    let centre = (Vec3::from(lo) + Vec3::from(hi)) * 0.5;
    let mut seen = Vec::new();
    for patch in [acidic, basic] {
        // Look at the patch from outside, along the line from the protein's centre through it.
        let out = (Vec3::from(patch) - centre).normalize();
        state.view.camera.rotation = Quat::from_rotation_arc(Vec3::Z, out);
        state
            .view
            .camera
            .fit_to_bounds(Vec3::from(lo), Vec3::from(hi), SIZE[0] as f32 / SIZE[1] as f32);
        state.view.dirty.meshes = true;
        sync.sync(&rc, &mut scene, &mut state);
        render_once(&rc, &scene, &target, &state.view.camera);
        let img = target.read_rgba(&rc).unwrap();
        let pixel = state.view.camera.project_to_pixel(Vec3::from(patch), SIZE).unwrap().0;
        if let Ok(dir) = std::env::var("ORBITFIELD_TEST_IMAGES") {
            img.save(format!("{dir}/pb_patch_{}.png", seen.len())).unwrap();
        }
        seen.push(red_minus_blue(&img, pixel, 24));
    }
    println!(
        "red minus blue within 24 px of the patch: acidic {:+.1} ({} px), basic {:+.1} ({} px)",
        seen[0].0, seen[0].1, seen[1].0, seen[1].1
    );
    assert!(
        seen[0].1 > 500 && seen[1].1 > 500,
        "the surface is drawn at both patches: {seen:?}"
    );
    assert!(seen[0].0 > 5.0, "the acidic patch is red: {:?}", seen[0]);
    assert!(seen[1].0 < -5.0, "the basic patch is blue: {:?}", seen[1]);
}

/// The solve runs on the CPU worker with its progress line and Cancel in the status bar: a click on
/// Cancel stops it, the field panel and the status line say so, the frame is not solved again by
/// itself, and the next frame solves (its colours show that frame's solution).
#[test]
fn cancel_stops_the_solve_and_the_next_frame_solves_again() {
    let mut state = adk_with_engines(1.0);
    state.pb.params.probe_angstrom = 0.0;
    let mut harness = window(state);
    harness.run();
    let id = add_pb_surface(&mut harness);

    // A solve caught running (a frame solved before the window drew it is stepped past).
    let mut frame = 0;
    let t0 = Instant::now();
    loop {
        harness.step();
        std::thread::sleep(Duration::from_millis(2));
        let st = harness.state();
        if st.pb.solving() && harness.query_all_by_label_contains("solving frame").next().is_some() {
            break;
        }
        if st.reps().field(id).is_some_and(|f| f.color_shows_frame(frame)) {
            frame += 1;
            assert!(frame < 10, "every solve ended before the window showed it running");
            harness.state_mut().apply(Command::SetFrame(frame));
        }
        assert!(t0.elapsed() < Duration::from_secs(120), "no solve started");
    }
    harness.get_all_by_label("Cancel").last().unwrap().click();
    harness.run_steps(3);
    let st = harness.state();
    assert!(!st.pb.solving(), "the solve is cancelled");
    assert!(st.panels.status.contains("cancelled"), "{}", st.panels.status);
    assert!(
        st.pb.failure.as_deref().is_some_and(|f| f.contains("cancelled")),
        "{:?}",
        st.pb.failure
    );
    assert!(
        !st.reps().field(id).unwrap().color_shows_frame(frame),
        "nothing is drawn as if the cancelled frame had been solved"
    );
    harness.run_steps(5);
    assert!(!harness.state().pb.solving(), "the cancelled frame was asked for again");

    let next = frame + 1;
    harness.state_mut().apply(Command::SetFrame(next));
    check_frame(&mut harness, id, next);
    let st = harness.state();
    assert!(!st.panels.status.contains("cancelled"), "{}", st.panels.status);
}

/// New parameters keep the range set and the last solution's colours while they solve, and the
/// legend says whose colours they are; Cancel goes back to the parameters last solved, with their
/// colours at once, and the command log writes the `set` that goes back.
#[test]
fn new_parameters_keep_the_last_colours_and_cancel_goes_back_to_them() {
    let mut state = adk_with_engines(1.5);
    state.observer = Some(Box::new(orbitfield::script::log::ActionLog::default()));
    let mut harness = window(state);
    harness.run();
    let id = add_pb_surface(&mut harness);
    check_frame(&mut harness, id, 0);
    let n = 1 + harness.state().reps().list.iter().position(|r| r.id == id).unwrap();
    type_command(&mut harness, &format!("color {n} pb range -8 2"));
    let solved = harness
        .state()
        .reps()
        .field(id)
        .unwrap()
        .pipeline
        .color
        .as_ref()
        .unwrap()
        .shown
        .clone()
        .unwrap();

    // A finer lattice: minutes in this build, so still solving when Cancel is clicked.
    type_command_stepping(&mut harness, "set pbspacing 0.5");
    harness.run_steps(3);
    let st = harness.state();
    assert!(st.pb.solving(), "the new parameters are being solved");
    let f = st.reps().field(id).unwrap();
    assert_eq!(f.coloring.unwrap().range, Some([-8.0, 2.0]), "the range set is kept");
    assert!(
        !f.color_shows_frame(0),
        "the old colours are not taken for the new parameters'"
    );
    let (key, grid) = f.pipeline.color.as_ref().unwrap().shown.clone().unwrap();
    assert_eq!(key, solved.0, "the last solution is still drawn");
    assert!(std::sync::Arc::ptr_eq(&grid, &solved.1));
    let titles: Vec<String> = st.legends().into_iter().map(|l| l.title).collect();
    assert!(
        titles
            .iter()
            .any(|t| t.contains("the previous parameters' colours until the new solve ends")),
        "{titles:?}"
    );

    harness.get_all_by_label("Cancel").last().unwrap().click();
    harness.run_steps(3);
    let st = harness.state();
    assert!(!st.pb.solving(), "the solve is cancelled");
    assert_eq!(st.pb.spacing_angstrom, 1.5, "back to the spacing last solved");
    assert!(st.pb.failure.is_none(), "{:?}", st.pb.failure);
    assert!(
        st.panels.status.contains("back to the last solved parameters"),
        "{}",
        st.panels.status
    );
    let f = st.reps().field(id).unwrap();
    assert!(
        f.color_shows_frame(0),
        "the last solution's colours are the parameters' own again"
    );
    assert_eq!(f.coloring.unwrap().range, Some([-8.0, 2.0]));
    let (key, grid) = f.pipeline.color.as_ref().unwrap().shown.clone().unwrap();
    assert!(std::sync::Arc::ptr_eq(&grid, &solved.1), "{key:?}: not solved again");
    let titles: Vec<String> = st.legends().into_iter().map(|l| l.title).collect();
    assert!(titles.iter().all(|t| !t.contains("previous parameters")), "{titles:?}");
    let log = orbitfield::script::log::of(st).unwrap().text();
    let tail: Vec<&str> = log.lines().rev().take(2).collect();
    assert_eq!(tail, ["set pbspacing 1.5", "set pbspacing 0.5"], "{log}");
}
