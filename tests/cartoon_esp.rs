//! Cartoons coloured by a field at their vertices (`--rep "SEL:cartoon:esp"`, the viewer's cartoon
//! colouring), against independent references:
//! - adk from a PQR file (3341 atoms with charges): the value each cartoon vertex is coloured by
//!   equals a float64 Coulomb sum of the charges at that vertex position, written in the test
//!   (`common/coulomb.rs`), to 1e-4 relative plus the f32 rounding of its terms, on a few hundred
//!   vertices drawn with a fresh seed;
//! - the viewer's path on the adk PSF/DCD trajectory: a cartoon switched to `esp` gets each frame's
//!   values from the vertex-values thread, keeping the previous colours while the next are computed;
//! - the representation editor offers the charges' potential in a cartoon's colour list;
//! - a file without charges: one clear message, and the cartoon keeps its secondary-structure
//!   colours;
//! - `render --rep "resid 1 to 30:cartoon:esp"` (Mesa lavapipe in CI): red and blue ribbon pixels and the
//!   legend in the image. Skipped (with a message) where no graphics adapter exists.

#![cfg(feature = "gui")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use orbitfield::app::fields::{FieldChoice, FieldService};
use orbitfield::app::reps::RepEdit;
use orbitfield::app::reps::spec::parse_atom_rep;
use orbitfield::app::settings::Settings;
use orbitfield::app::state::{AppState, Command};
use std::path::PathBuf;
use std::time::{Duration, Instant};

#[path = "common/adk_state.rs"]
mod adk_state;
#[path = "common/coulomb.rs"]
mod coulomb;
#[path = "common/rdf_cases.rs"]
mod rdf_cases;
use coulomb::{coulomb_f64, coulomb_terms_abs_f64};
use rdf_cases::{clock_seed, lcg};

fn data(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(rel)
}

/// `files` opened in a viewer state without field engines.
fn open(files: &[PathBuf]) -> AppState {
    let mut state = AppState::new(Settings::default(), FieldService::default());
    state.apply(Command::OpenFiles(files.to_vec()));
    assert!(state.document().is_some(), "{}", state.panels.status);
    // The vacuum Coulomb sum is what these tests hold to their f64 reference.
    state.apply(Command::SetEspModel(orbitfield::app::esp_model::EspModel::Vacuum));
    state
}

/// Runs the update loop until the (first) cartoon is coloured by values of frame `frame` (120 s at
/// most: an unoptimised build on a busy machine).
fn wait_for_values(state: &mut AppState, frame: usize) {
    let start = Instant::now();
    loop {
        state.update_reps();
        let (_, c) = state.reps().cartoons().next().expect("a cartoon");
        if c.pipeline.values().is_some_and(|(k, _, _)| k.cartoon.frame == frame) {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "no values for frame {frame}: {}",
            state.panels.status
        );
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Checks `samples` vertices of the cartoon drawn, drawn at random: the value each is coloured by
/// equals the f64 sum of the charges (at `positions`) at its position to 1e-4 relative, plus the f32
/// rounding of each term (1e-7 of the sum of their magnitudes, the engine's documented error: it
/// matters where the terms cancel, near the potential's zeros, about 1 A off the backbone's charges).
/// Returns the values' range.
fn check_values(state: &AppState, positions: &[[f32; 3]], charges: &[f32], samples: usize) -> (f32, f32) {
    let (_, c) = state.reps().cartoons().next().unwrap();
    let (key, mesh, values) = c.pipeline.values().expect("values shown");
    assert_eq!(key.source, FieldChoice::Potential);
    assert_eq!(values.len(), mesh.positions_angstrom.len(), "one value per vertex");
    assert!(values.len() > 2000, "{} vertices", values.len());
    let mut seed = clock_seed();
    // The worst error as a fraction of its tolerance.
    let mut worst = 0.0f64;
    for _ in 0..samples {
        let i = ((lcg(&mut seed) * values.len() as f64) as usize).min(values.len() - 1);
        let p = mesh.positions_angstrom[i].map(f64::from);
        let want = coulomb_f64(positions, charges, p);
        let tolerance = 1e-4 * want.abs() + 1e-7 * coulomb_terms_abs_f64(positions, charges, p);
        worst = worst.max((f64::from(values[i]) - want).abs() / tolerance);
    }
    eprintln!("{samples} random vertices: worst error {worst:.3} of its tolerance");
    assert!(worst < 1.0, "worst error {worst:e} of its tolerance");
    let lo = values.iter().copied().fold(f32::INFINITY, f32::min);
    let hi = values.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    (lo, hi)
}

#[test]
fn cartoon_vertices_are_coloured_by_the_exact_potential_of_the_charges() {
    let path = data("md/adk_open.pqr");
    let mut reference = orbitfield::io::load(std::slice::from_ref(&path)).unwrap();
    let charges = reference.structure.charges_e.clone().unwrap();
    let positions = reference.trajectory.frame(0).unwrap().positions_angstrom;
    assert_eq!(positions.len(), 3341);

    let mut state = open(&[path]);
    // The first 60 residues (the test stays within seconds in an unoptimised build).
    state
        .add_rep(&parse_atom_rep("resid 1 to 60:cartoon:esp").unwrap())
        .unwrap();
    wait_for_values(&mut state, 0);
    let (lo, hi) = check_values(&state, &positions, &charges, 300);
    assert!(
        lo < 0.0 && hi > 0.0,
        "the potential changes sign along the chain: {lo}..{hi}"
    );

    // The range is symmetric about zero, chosen from the values, and named in the legend.
    let (_, c) = state.reps().cartoons().next().unwrap();
    let range = c.color_by.unwrap().range.unwrap();
    assert!(range[0] < 0.0 && range[0] == -range[1], "{range:?}");
    let legends = state.legends();
    assert_eq!(legends.len(), 1);
    assert!(
        legends[0].title.contains("cartoon coloured by potential"),
        "{}",
        legends[0].title
    );
    assert_eq!(legends[0].unit, "kT/e");
}

#[test]
fn the_viewer_cartoon_switched_to_esp_gets_each_frames_values() {
    let files = [data("md/adk.psf"), data("md/adk_dims.dcd")];
    let mut reference = orbitfield::io::load(&files).unwrap();
    let charges = reference.structure.charges_e.clone().unwrap();
    let mut state = open(&files);
    assert!(state.build_cartoons_off_thread());
    assert!(state.color_vertices_off_thread());
    let id = state
        .add_rep(&parse_atom_rep("resid 1 to 40:cartoon").unwrap())
        .unwrap();
    state.apply(Command::EditRep(
        id,
        RepEdit::ColorBy(Some((FieldChoice::Potential, None))),
    ));
    wait_for_values(&mut state, 0);
    let positions = reference.trajectory.frame(0).unwrap().positions_angstrom;
    check_values(&state, &positions, &charges, 200);

    // Another frame: the previous colours stay drawn until the new ones arrive.
    state.apply(Command::SetFrame(7));
    state.update_reps();
    let (_, c) = state.reps().cartoons().next().unwrap();
    assert!(c.pipeline.values().is_some(), "the previous colours are kept meanwhile");
    wait_for_values(&mut state, 7);
    let positions = reference.trajectory.frame(7).unwrap().positions_angstrom;
    check_values(&state, &positions, &charges, 200);

    // Back to a scheme: no values drawn any more.
    state.apply(Command::EditRep(
        id,
        RepEdit::CartoonColoring(orbitfield::analysis::polymer::Coloring::Chain),
    ));
    state.update_reps();
    let (_, c) = state.reps().cartoons().next().unwrap();
    assert!(c.color_by.is_none() && c.pipeline.values().is_none());
}

#[test]
fn without_charges_the_cartoon_keeps_its_colours_with_one_message() {
    let mut state = open(&[data("dssp/4gcnA.pdb.gz")]);
    // The loader gives a PDB protein CHARMM22's charges (`model::charges`); a protein of residues it
    // does not know has none: dropped here.
    assert!(state.document().unwrap().structure.charges_e.is_some());
    state.document_mut().unwrap().structure.charges_e = None;
    let id = state.add_rep(&parse_atom_rep("protein:cartoon:esp").unwrap()).unwrap();
    assert!(
        state.panels.status.contains("no atomic charges"),
        "{}",
        state.panels.status
    );
    assert_eq!(state.panels.errors.len(), 1, "{:?}", state.panels.errors);
    for _ in 0..3 {
        state.update_reps();
    }
    let (rep, c) = state.reps().cartoons().next().unwrap();
    assert_eq!(rep.id, id);
    assert!(c.color_by.is_none());
    let (_, built) = c.pipeline.shown.as_ref().expect("the cartoon is drawn");
    let mesh = built.mesh().expect("a CPU mesh (no render device here)");
    let helix = orbitfield::analysis::polymer::secondary_structure_color(
        orbitfield::analysis::dssp::SecondaryStructure::AlphaHelix,
    );
    assert!(mesh.colors_rgba8.contains(&helix), "secondary-structure colours");
}

#[test]
fn render_draws_a_cartoon_coloured_by_esp_with_its_legend() {
    if let Err(e) = orbitfield::render::RenderContext::headless(1) {
        eprintln!("skipping: {e}");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let render = |name: &str, extra: &[&str]| {
        let out = dir.path().join(name);
        let run = std::process::Command::new(env!("CARGO_BIN_EXE_orbitfield"))
            .arg("render")
            .arg(data("md/adk_open.pqr"))
            .args([
                "--rep",
                "resid 1 to 30:cartoon:esp",
                "--size",
                "320x240",
                "--zoom",
                "0.3",
            ])
            .args(extra)
            .arg("-o")
            .arg(&out)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&run.stderr).to_string();
        assert!(run.status.success(), "{stderr}");
        (image::open(&out).unwrap().to_rgba8(), stderr)
    };
    let (img, stderr) = render("cartoon_esp.png", &[]);
    assert!(stderr.contains("legend: cartoon coloured by potential"), "{stderr}");
    // The same view without its legend: the ribbon's pixels are read there, and the legend is
    // where the two images differ (in whichever corner it was put).
    let (bare, _) = render("cartoon_esp_bare.png", &["--no-legend"]);
    let (w, h) = img.dimensions();
    let legend_rows: Vec<u32> = (0..h)
        .filter(|&y| (0..w).any(|x| img.get_pixel(x, y) != bare.get_pixel(x, y)))
        .collect();
    assert!(!legend_rows.is_empty(), "a legend is drawn");
    // The legend box: 64 px high, its bar centred in it 24 px down.
    let box_y = legend_rows[0];
    assert_eq!(legend_rows.len(), 64, "one 64-px box: rows {legend_rows:?}");
    let rgb = |p: [u8; 4]| p.map(i32::from);
    let red = |p: [u8; 4]| {
        let [r, g, b, _] = rgb(p);
        r > 90 && r > g + 50 && (b - g).abs() < 45
    };
    let blue = |p: [u8; 4]| {
        let [r, g, b, _] = rgb(p);
        b > 90 && b > r + 40 && b > g + 20
    };
    // The helix colour of the secondary-structure scheme (residues 1-30 hold a helix).
    let magenta = |p: [u8; 4]| {
        let [r, g, b, _] = rgb(p);
        r > 60 && r > g + 60 && b > g + 60
    };
    let (mut reds, mut blues, mut helix, mut drawn) = (0, 0, 0, 0);
    for p in bare.pixels() {
        reds += usize::from(red(p.0));
        blues += usize::from(blue(p.0));
        helix += usize::from(magenta(p.0));
        drawn += usize::from(rgb(p.0)[..3].iter().sum::<i32>() > 30);
    }
    eprintln!("ribbon pixels: red {reds}, blue {blues}, helix colour {helix}, drawn {drawn}");
    assert!(drawn > 2000, "the cartoon covers too little of the image");
    assert!(reds > 100 && blues > 100, "red {reds}, blue {blues}");
    assert!(
        helix < drawn / 50,
        "secondary-structure colours drawn: {helix} of {drawn}"
    );
    // The legend's bar runs from red (negative) to blue (positive): its right end is the rightmost
    // blue pixel of its row (the margin and the box's padding right of it are dark), its left end
    // 239 px further left.
    let bar_y = box_y + 24 + 7;
    let right = (0..w)
        .rev()
        .find(|&x| blue(img.get_pixel(x, bar_y).0))
        .expect("a blue end of the legend's bar");
    assert!(right + 16 + 12 <= w && right >= 239, "bar ends at x = {right}");
    let left = right - 239;
    assert!(
        red(img.get_pixel(left + 2, bar_y).0),
        "{:?}",
        img.get_pixel(left + 2, bar_y)
    );
    assert!(blue(img.get_pixel(right - 2, bar_y).0));
}

#[test]
fn the_editor_offers_the_charges_potential_for_a_cartoon() {
    use egui_kittest::kittest::Queryable;
    let mut state = adk_state::adk();
    state
        .add_rep(&parse_atom_rep("resid 1 to 20:cartoon").unwrap())
        .unwrap();
    let mut harness = adk_state::reps_editor(state);
    harness.run();
    harness
        .query_all_by_label("Colour")
        .last()
        .expect("a colour list")
        .click();
    harness.run();
    harness.get_by_label("potential (charges)").click();
    harness.run();
    let state = harness.into_state();
    let (_, c) = state.reps().cartoons().next().unwrap();
    assert_eq!(c.color_by.map(|k| k.source), Some(FieldChoice::Potential));
}
