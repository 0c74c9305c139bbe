//! The colour convention of electrostatic potentials: red = negative, white = 0, blue = positive,
//! as APBS, PyMOL, ChimeraX and VMD draw them. Two ions 8 A apart (a -1 e "NEG" on the left, a
//! +1 e "POS" on the right, a PQR file): their molecular surface coloured by the charges'
//! potential at its vertices is red around the negative ion and blue around the positive one —
//! drawn through the window's draw path with the viewer's default settings (`app::draw`, on Mesa
//! lavapipe or whatever adapter exists) and by the `render` command; the legends run from red to
//! blue and name what was summed. Skipped, with the reason printed, where no adapter exists.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use glam::Vec3;
use orbitfield::app::fields::{FieldChoice, FieldService, InlineBackend};
use orbitfield::app::reps::{FieldStyle, RepSpec};
use orbitfield::app::settings::Settings;
use orbitfield::app::state::{AppState, Command};
use orbitfield::render::camera::ViewAxis;
use orbitfield::render::{GpuScene, OffscreenTarget, RenderContext, render_once};

const NEG_ANGSTROM: [f32; 3] = [-4.0, 0.0, 0.0];
const POS_ANGSTROM: [f32; 3] = [4.0, 0.0, 0.0];
const SIZE: [u32; 2] = [200, 120];

fn ions_pqr(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("ions.pqr");
    let text = format!(
        "ATOM      1  CL   NEG     1     {:7.3} {:7.3} {:7.3} -1.0000 1.8000\n\
         ATOM      2  NA   POS     2     {:7.3} {:7.3} {:7.3}  1.0000 1.8000\nEND\n",
        NEG_ANGSTROM[0], NEG_ANGSTROM[1], NEG_ANGSTROM[2], POS_ANGSTROM[0], POS_ANGSTROM[1], POS_ANGSTROM[2]
    );
    std::fs::write(&path, text).unwrap();
    path
}

/// Mean colour of the 5x5 pixels around `pixel`.
fn mean_rgb(img: &image::RgbaImage, pixel: [f32; 2]) -> [f32; 3] {
    let mut sum = [0.0f32; 3];
    let mut n = 0.0;
    for dy in -2i32..=2 {
        for dx in -2i32..=2 {
            let x = (pixel[0].round() as i32 + dx).clamp(0, img.width() as i32 - 1) as u32;
            let y = (pixel[1].round() as i32 + dy).clamp(0, img.height() as i32 - 1) as u32;
            let p = img.get_pixel(x, y);
            for k in 0..3 {
                sum[k] += f32::from(p[k]);
            }
            n += 1.0;
        }
    }
    sum.map(|s| s / n)
}

fn is_red(c: [f32; 3]) -> bool {
    c[0] > c[2] + 40.0 && c[0] > c[1] + 20.0
}

fn is_blue(c: [f32; 3]) -> bool {
    c[2] > c[0] + 40.0
}

/// Where an ion's centre lands in an image of `SIZE` from `camera`.
fn pixel_of(camera: &orbitfield::render::Camera, p: [f32; 3]) -> [f32; 2] {
    camera.project_to_pixel(Vec3::from(p), SIZE).unwrap().0
}

#[test]
fn the_window_draws_negative_potential_red_and_positive_blue() {
    let rc = match RenderContext::headless(1) {
        Ok(rc) => rc,
        Err(e) => {
            eprintln!("skipping: no wgpu adapter: {e}");
            return;
        }
    };
    let dir = tempfile::tempdir().unwrap();
    let path = ions_pqr(dir.path());
    let backend = orbitfield::app::blocking_engine()
        .map(|e| Box::new(InlineBackend::new(e)) as Box<dyn orbitfield::app::fields::FieldBackend>);
    let settings = Settings {
        lattice_points: 48,
        ..Settings::default()
    };
    let mut state = AppState::new(
        settings,
        FieldService::new(backend, orbitfield::app::default_extractor()),
    );
    state.open_system(
        "ions".into(),
        orbitfield::io::load(std::slice::from_ref(&path)).unwrap(),
    );
    // The vacuum Coulomb sum (the file's radii would make Poisson-Boltzmann the default).
    state.apply(Command::SetEspModel(orbitfield::app::esp_model::EspModel::Vacuum));
    let ids: Vec<_> = state.reps().fields().map(|(r, _)| r.id).collect();
    for id in ids {
        state.apply(Command::DeleteRep(id));
    }
    // As the Add menu's "Molecular surface coloured by potential" adds it.
    let mut spec = RepSpec::field("molsurf", FieldStyle::Isosurface);
    if let orbitfield::app::reps::SpecKind::Field { color_by, .. } = &mut spec.kind {
        *color_by = Some("potential".into());
    }
    state.apply(Command::AddRep(spec));
    for _ in 0..6 {
        state.update_reps();
    }
    let rep = state.reps().fields().next().map(|(_, f)| f).unwrap();
    assert_eq!(rep.coloring.map(|c| c.source), Some(FieldChoice::Potential));
    assert!(rep.vertex_values().is_some(), "{}", state.panels.status);

    let mut scene = GpuScene::new(&rc);
    let mut sync = orbitfield::app::draw::SceneSync::new(&rc);
    let target = OffscreenTarget::new(&rc, SIZE);
    state.view.size_px = SIZE;
    state.view.camera.set_view_axis(ViewAxis::Front);
    let (lo, hi) = state.scene_bounds().unwrap();
    state
        .view
        .camera
        .fit_to_bounds(Vec3::from(lo), Vec3::from(hi), SIZE[0] as f32 / SIZE[1] as f32);
    sync.sync(&rc, &mut scene, &mut state);
    render_once(&rc, &scene, &target, &state.view.camera);
    let img = target.read_rgba(&rc).unwrap();
    let neg = mean_rgb(&img, pixel_of(&state.view.camera, NEG_ANGSTROM));
    let pos = mean_rgb(&img, pixel_of(&state.view.camera, POS_ANGSTROM));
    assert!(is_red(neg), "the negative ion's surface is red: {neg:?}");
    assert!(is_blue(pos), "the positive ion's surface is blue: {pos:?}");

    // The legend: red at the negative end, blue at the positive end, and what was summed.
    let legends = state.legends();
    let legend = legends.first().expect("a legend");
    assert!(legend.range[0] < 0.0 && legend.range[1] > 0.0, "{:?}", legend.range);
    let [r0, _, b0, _] = legend.colormap.sample(0.0);
    let [r1, _, b1, _] = legend.colormap.sample(1.0);
    assert!(r0 > b0 + 100 && b1 > r1 + 100, "{:?}", legend.colormap);
    assert!(
        legend.title.contains("Coulomb sum of 2 charges, vacuum"),
        "{}",
        legend.title
    );
    assert_eq!(legend.unit, "kT/e");
}

#[test]
fn render_draws_negative_potential_red_and_positive_blue() {
    let dir = tempfile::tempdir().unwrap();
    let path = ions_pqr(dir.path());
    let out = dir.path().join("ions.png");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_orbitfield"))
        .arg("render")
        .arg(&path)
        .args([
            "--surface",
            "molsurf",
            "--color-by",
            "esp",
            "--camera",
            "front",
            "--no-legend",
        ])
        .args(["--size", &format!("{}x{}", SIZE[0], SIZE[1]), "-o"])
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    if !o.status.success() && stderr.contains("adapter") {
        eprintln!("skipping: no wgpu adapter: {stderr}");
        return;
    }
    assert!(o.status.success(), "{stderr}");
    let img = image::open(&out).unwrap().to_rgba8();
    assert_eq!(img.dimensions(), (SIZE[0], SIZE[1]));
    // The command frames the atoms looking down -z: the negative ion on the left half, the
    // positive on the right; each half's surface pixels take its ion's colour.
    let (mut left_red, mut left_blue, mut right_red, mut right_blue) = (0, 0, 0, 0);
    for (x, _, p) in img.enumerate_pixels() {
        let c = [f32::from(p[0]), f32::from(p[1]), f32::from(p[2])];
        let left = x < SIZE[0] / 2;
        match (left, is_red(c), is_blue(c)) {
            (true, true, _) => left_red += 1,
            (true, _, true) => left_blue += 1,
            (false, true, _) => right_red += 1,
            (false, _, true) => right_blue += 1,
            _ => {}
        }
    }
    assert!(
        left_red > 200 && right_blue > 200 && left_blue * 10 < left_red && right_red * 10 < right_blue,
        "left: {left_red} red, {left_blue} blue; right: {right_red} red, {right_blue} blue"
    );
}
