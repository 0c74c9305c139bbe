//! Journey of the ligand free-energy map (implicit ligand sampling) through the whole window, driven
//! through egui_kittest as a user would: open the tz2 trajectory (AMBER prmtop with its
//! Lennard-Jones A/B coefficients, NetCDF frames; tests/data/md/amber), open "+ Add > Ligand free
//! energy (ILS)", pick the Xe probe, compute over three frames, and watch the map grow frame by
//! frame. The map the viewer holds after the three frames must equal what the `grid ils` command
//! writes for the same frames, lattice, probe and atoms (an independent run of the command line,
//! its DX file read back); the field panel and the legend name the probe and the frame count with
//! the unit beside every number; an offscreen render (Mesa lavapipe in CI; skipped where no adapter
//! exists) shows the isosurface: pixels of its colour inside the view. A topology without
//! Lennard-Jones parameters (adk's CHARMM PSF) gets a message in a chemist's words and no button.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use orbitfield::app::fields::{FieldChoice, FieldService};
use orbitfield::app::reps::RepKind;
use orbitfield::app::settings::Settings;
use orbitfield::app::state::{AppState, Command};
use std::path::PathBuf;
use std::process::Command as Process;
use std::time::{Duration, Instant};

#[path = "common/journey.rs"]
mod journey;
use journey::window;

fn data(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(rel)
}

/// The peptide of tz2 (its waters are left out, as `--sel` does in the command).
const ATOMS: &str = "not resname WAT";

fn open(files: &[PathBuf]) -> AppState {
    let mut state = AppState::new(
        Settings::default(),
        FieldService::new(None, orbitfield::app::default_extractor()),
    );
    state.apply(Command::OpenFiles(files.to_vec()));
    assert!(state.document().is_some(), "{}", state.panels.status);
    state
}

/// Opens "+ Add > Ligand free energy (ILS)".
fn open_ils_form(harness: &mut Harness<'static, AppState>) {
    harness.get_by_label(orbitfield::ui::add::ADD_BUTTON).click();
    harness.run();
    harness.get_by_label(orbitfield::ui::ils::ILS_MENU).click();
    harness.run();
}

/// `grid ils` over the same frames, lattice, probe and atoms: the map it writes (kT).
fn grid_ils(map: &orbitfield::model::ils::IlsMap, dir: &std::path::Path) -> orbitfield::model::Grid3 {
    let out = dir.join("pmf.dx");
    let o = map.origin_angstrom;
    let d = map.dims;
    let result = Process::new(env!("CARGO_BIN_EXE_orbitfield"))
        .args(["grid", "ils"])
        .arg(data("md/amber/tz2.truncoct.parm7.bz2"))
        .arg(data("md/amber/tz2.truncoct.nc"))
        .args([
            "--probe", "xe", "--frames", "0:3", "--sel", ATOMS, "--subres", "1", "--device", "cpu",
        ])
        .arg("--spacing")
        .arg(map.spacing_angstrom.to_string())
        .arg("--origin")
        .args(o.map(|x| x.to_string()))
        .arg("--dims")
        .args(d.map(|x| x.to_string()))
        .arg("-o")
        .arg(&out)
        .env_remove("ORBITFIELD_DEVICES")
        .output()
        .unwrap();
    assert!(
        result.status.success(),
        "grid ils failed: {}",
        String::from_utf8_lossy(&result.stderr)
    );
    let bytes = std::fs::read(&out).unwrap();
    orbitfield::io::dx::read(&out, &bytes).unwrap()
}

#[test]
fn ils_map_grows_over_three_frames_equals_grid_ils_and_its_surface_is_drawn() {
    let state = open(&[
        data("md/amber/tz2.truncoct.parm7.bz2"),
        data("md/amber/tz2.truncoct.nc"),
    ]);
    assert!(state.document().unwrap().n_frames >= 3);
    let mut harness = window(state);
    // A small lattice so that the journey runs in seconds in a debug build; the text fields are
    // filled in as typed.
    {
        let form = &mut harness.state_mut().panels.ils.form;
        form.spacing_angstrom = 1.5;
        form.subres = 1;
        form.selection = ATOMS.into();
        form.around = ATOMS.into();
        form.frames = "0:3".into();
    }
    open_ils_form(&mut harness);
    assert!(
        harness
            .query_all_by_label_contains("Lennard-Jones parameters: AMBER prmtop")
            .count()
            >= 1,
        "the form says where the parameters come from"
    );
    // The probe: Xe (the form starts at O2).
    harness.get_by_label("Probe").click();
    harness.run();
    harness.get_by_label("Xe").click();
    harness.run();
    assert_eq!(
        harness.state().panels.ils.form.probe,
        orbitfield::app::ils::ProbeChoice::Xe
    );
    harness.get_by_label(orbitfield::ui::ils::ILS_START).click();
    harness.run();
    let state = harness.state();
    assert!(state.panels.ils.error.is_none(), "{:?}", state.panels.ils.error);
    let doc = state.document().unwrap();
    assert_eq!(doc.ils_maps.len(), 1, "{}", state.panels.status);
    let field = FieldChoice::Ils(0);
    assert!(
        state.reps().fields().any(|(_, f)| f.field == field),
        "an isosurface representation of the map was added"
    );
    assert_eq!(state.panel_field(), Some(field), "the field panel edits it");

    // Frames accumulate while the window keeps running; the map is redrawn at each count.
    let mut seen_counts = Vec::new();
    let t0 = Instant::now();
    loop {
        harness.run();
        let m = &harness.state().document().unwrap().ils_maps[0];
        if seen_counts.last() != Some(&m.frames_done) {
            seen_counts.push(m.frames_done);
        }
        if !harness.state().panels.ils.is_running() {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(600),
            "the map did not finish: {seen_counts:?}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let state = harness.state();
    let m = &state.document().unwrap().ils_maps[0];
    assert_eq!(m.frames_done, 3, "{}", state.panels.status);
    assert!(!m.cancelled);
    println!("frame counts seen: {seen_counts:?} (engine {})", m.engine);
    let grid = m.grid.clone().unwrap();
    let map = m.map;
    // The representation shows the three-frame map.
    let (_, f) = state.reps().fields().find(|(_, f)| f.field == field).unwrap();
    let (key, shown) = f.pipeline.shown.as_ref().expect("the map is shown");
    assert_eq!(key.frame, 3, "the key counts the frames");
    assert!(std::sync::Arc::ptr_eq(shown, &grid));

    // The same map from `grid ils`.
    let dir = tempfile::tempdir().unwrap();
    let want = grid_ils(&map, dir.path());
    assert_eq!(want.lattice.dims, grid.lattice.dims);
    for k in 0..3 {
        assert!((want.lattice.origin_bohr[k] - grid.lattice.origin_bohr[k]).abs() < 1e-4);
    }
    let mut low = 0;
    let mut favoured = 0;
    let mut worst = 0.0f32;
    for (g, w) in grid.values.iter().zip(&want.values) {
        if *w < 10.0 {
            low += 1;
            worst = worst.max((g - w).abs());
        }
        if *w < -1.0 {
            favoured += 1;
        }
    }
    println!(
        "{low} voxels below 10 kT, {favoured} below -1 kT; largest difference {worst:.2e} kT over {} voxels",
        grid.values.len()
    );
    assert!(low > 100, "only {low} voxels below 10 kT");
    assert!(favoured > 0, "no voxel below -1 kT: the default surface would be empty");
    assert!(worst <= 1e-4, "the viewer's map differs from grid ils by {worst} kT");

    // The surface at -1 kT exists, and the panel and legend name the probe and frames with units.
    assert!(f.pipeline.lobes[0].is_some(), "the -1 kT surface was extracted");
    harness.run();
    assert!(
        harness
            .query_all_by_label_contains("ILS free energy of Xe, 3 frames")
            .count()
            >= 1,
        "the panel names the probe and frame count"
    );
    assert!(harness.query_all_by_label_contains("surface at -1.00 kT").count() >= 1);
    let legends = harness.state().ils_legends();
    assert_eq!(legends.len(), 1);
    assert!(legends[0].title.contains("Xe") && legends[0].title.contains("3 frames"));
    assert_eq!(legends[0].unit, "kT");
    // kcal/mol: the same surface, in the other unit.
    harness.get_by_label("kcal/mol").click();
    harness.run();
    let legends = harness.state().ils_legends();
    assert_eq!(legends[0].unit, "kcal/mol");
    assert!(
        legends[0].title.contains("surface at -0.596 kcal/mol"),
        "{}",
        legends[0].title
    );

    // A slice of the map: its legend names the probe and frames, in the chosen unit.
    harness
        .state_mut()
        .apply(Command::AddRep(orbitfield::app::reps::RepSpec::field(
            "ils:1",
            orbitfield::app::reps::FieldStyle::Slice(orbitfield::app::slice::SlicePlane::default()),
        )));
    harness.run();
    let legends = harness.state().legends();
    assert!(
        legends
            .iter()
            .any(|l| l.title.contains("ILS free energy of Xe, 3 frames, slice") && l.unit == "kcal/mol"),
        "{:?}",
        legends.iter().map(|l| &l.title).collect::<Vec<_>>()
    );

    // An offscreen render of the surface alone: pixels of its colour.
    let mut state = harness.into_state();
    render_shows_the_surface(&mut state);
}

fn render_shows_the_surface(state: &mut AppState) {
    use orbitfield::render::{GpuScene, OffscreenTarget, RenderContext, render_once};
    let rc = match RenderContext::headless(1) {
        Ok(rc) => rc,
        Err(e) => {
            eprintln!("skipping the render: {e}");
            return;
        }
    };
    let ids: Vec<_> = state
        .reps()
        .list
        .iter()
        .filter(|r| !matches!(&r.kind, RepKind::Field(f) if matches!(f.field, FieldChoice::Ils(_)) && f.is_surface()))
        .map(|r| r.id)
        .collect();
    for id in ids {
        state.apply(Command::EditRep(id, orbitfield::app::reps::RepEdit::Visible(false)));
    }
    let size = [160u32, 120u32];
    state.view.size_px = size;
    state.apply(Command::ResetCamera);
    state.update_reps();
    let mut sync = orbitfield::app::draw::SceneSync::new(&rc);
    let mut scene = GpuScene::new(&rc);
    let target = OffscreenTarget::new(&rc, size);
    sync.sync(&rc, &mut scene, state);
    render_once(&rc, &scene, &target, &state.view.camera);
    let img = target.read_rgba(&rc).unwrap();
    let [r0, g0, b0] = orbitfield::app::ils::ILS_SURFACE_RGB;
    let mut hits = 0;
    for p in img.pixels() {
        let [r, g, b, _] = p.0.map(f32::from);
        // Shading scales the colour (and speculars whiten it): compare its proportions.
        if r > 60.0 && (g / r - g0 / r0).abs() < 0.12 && (b / r - b0 / r0).abs() < 0.12 {
            hits += 1;
        }
    }
    println!("{hits} of {} pixels in the surface's colour", size[0] * size[1]);
    assert!(hits > 100, "only {hits} pixels of the surface's colour");
}

#[test]
fn without_lennard_jones_parameters_the_form_says_what_is_missing() {
    let state = open(&[data("md/adk.psf"), data("md/adk_dims.dcd")]);
    let mut harness = window(state);
    open_ils_form(&mut harness);
    assert!(
        harness
            .query_all_by_label_contains("carries no van der Waals (Lennard-Jones) parameters")
            .count()
            >= 1,
        "the form says what is missing"
    );
    assert!(harness.query_all_by_label_contains("parameter file").count() >= 1);
    // The button stays disabled; a start anyway is refused with the same words.
    harness.state_mut().apply(Command::StartIls);
    let state = harness.state();
    assert!(state.document().unwrap().ils_maps.is_empty());
    assert!(state.panels.status.contains("Lennard-Jones"), "{}", state.panels.status);
    // The element table makes it computable.
    harness.get_by_label("element table").click();
    harness.run();
    assert!(
        harness
            .query_all_by_label_contains("Lennard-Jones parameters: the element table")
            .count()
            >= 1
    );
}

/// Files without a force field (a GRO file) take the element table whatever its box says: the box
/// shows ticked and cannot be unticked, beside the note that says so.
#[test]
fn without_a_force_field_the_element_table_box_shows_it_is_used() {
    let dir = tempfile::tempdir().unwrap();
    let gro = dir.path().join("water.gro");
    std::fs::write(
        &gro,
        "one water\n    3\n    1SOL     OW    1   1.000   1.000   1.000\n    1SOL    HW1    2   1.096   1.000   1.000\n    1SOL    HW2    3   0.976   1.093   1.000\n   2.00000   2.00000   2.00000\n",
    )
    .unwrap();
    let mut harness = window(open(&[gro]));
    open_ils_form(&mut harness);
    assert!(
        harness
            .query_all_by_label_contains("the files carry no force field")
            .count()
            >= 1
    );
    let node = harness.get_by_label("element table");
    let a = node.accesskit_node();
    assert!(a.is_disabled(), "the box cannot be unticked");
    assert_eq!(a.toggled(), Some(egui::accesskit::Toggled::True), "the box is ticked");
}

/// The minimax barrier from lattice point `start` to any point on the map's outer faces (or to
/// `end`): the smallest value t such that a 26-connected walk through points at or below t joins
/// them (a flood fill for each candidate t, the test's own reference).
fn barrier_reference(grid: &orbitfield::model::Grid3, start: [usize; 3], end: Option<[usize; 3]>) -> f32 {
    let d = grid.lattice.dims;
    let idx = |p: [usize; 3]| p[0] + d[0] * (p[1] + d[1] * p[2]);
    let mut levels: Vec<f32> = grid.values.clone();
    levels.sort_by(f32::total_cmp);
    levels.dedup();
    let start_v = grid.values[idx(start)];
    let reaches = |t: f32| -> bool {
        if start_v > t {
            return false;
        }
        let mut seen = vec![false; grid.values.len()];
        let mut stack = vec![start];
        seen[idx(start)] = true;
        while let Some(p) = stack.pop() {
            let done = match end {
                Some(e) => p == e,
                None => (0..3).any(|k| p[k] == 0 || p[k] + 1 == d[k]),
            };
            if done {
                return true;
            }
            for dz in -1i64..=1 {
                for dy in -1i64..=1 {
                    for dx in -1i64..=1 {
                        let q = [p[0] as i64 + dx, p[1] as i64 + dy, p[2] as i64 + dz];
                        if (0..3).any(|k| q[k] < 0 || q[k] >= d[k] as i64) {
                            continue;
                        }
                        let q = q.map(|x| x as usize);
                        let i = idx(q);
                        if !seen[i] && grid.values[i] <= t {
                            seen[i] = true;
                            stack.push(q);
                        }
                    }
                }
            }
        }
        false
    };
    // The smallest level that connects (connection grows with t: bisect).
    let (mut lo, mut hi) = (0usize, levels.len() - 1);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if reaches(levels[mid]) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    levels[lo]
}

/// The lattice point nearest `p` (Angstrom).
fn lattice_point(grid: &orbitfield::model::Grid3, p: [f64; 3]) -> [usize; 3] {
    let o = grid.lattice.origin_angstrom();
    let h = grid.lattice.steps_bohr[0][0] * orbitfield::model::units::ANGSTROM_PER_BOHR;
    [0, 1, 2].map(|k| ((p[k] - o[k]) / h).round() as usize)
}

#[test]
fn pathways_from_picked_atoms_follow_the_lowest_barrier_and_are_drawn_as_tubes() {
    let mut state = open(&[
        data("md/amber/tz2.truncoct.parm7.bz2"),
        data("md/amber/tz2.truncoct.nc"),
    ]);
    {
        let form = &mut state.panels.ils.form;
        form.probe = orbitfield::app::ils::ProbeChoice::Xe;
        form.spacing_angstrom = 1.5;
        form.subres = 1;
        form.selection = ATOMS.into();
        form.around = ATOMS.into();
        form.frames = "0:2".into();
    }
    state.apply(Command::StartIls);
    let t0 = Instant::now();
    while state.panels.ils.is_running() {
        state.update_reps();
        assert!(t0.elapsed() < Duration::from_secs(600));
        std::thread::sleep(Duration::from_millis(10));
    }
    let grid = state.document().unwrap().ils_maps[0].grid.clone().unwrap();
    let h = 1.5;
    // Start near a C-alpha in the middle of the peptide.
    let doc = state.document().unwrap();
    let ca: Vec<usize> = (0..doc.structure.len())
        .filter(|&i| doc.structure.names[i].as_str() == "CA")
        .collect();
    let start_atom = ca[ca.len() / 2];
    let end_atom = ca[0];
    let positions: Vec<[f64; 3]> = doc.frame.positions_angstrom.iter().map(|p| p.map(f64::from)).collect();
    let atom_pos = |i: usize| positions[i];
    // The most favoured lattice point within 4 A of a picked atom, by brute force.
    let favoured = |p: [f64; 3]| -> [f64; 3] {
        let l = &grid.lattice;
        let mut best = (f32::INFINITY, [0.0; 3]);
        for k in 0..l.dims[2] {
            for j in 0..l.dims[1] {
                for i in 0..l.dims[0] {
                    let q = [i, j, k].map(|x| x as f64 * h);
                    let q = [0, 1, 2].map(|a| l.origin_angstrom()[a] + q[a]);
                    let d2: f64 = (0..3).map(|a| (q[a] - p[a]).powi(2)).sum();
                    let v = grid.values[l.index(i, j, k)];
                    if d2 <= 16.0 && v < best.0 {
                        best = (v, q);
                    }
                }
            }
        }
        best.1
    };
    let mut harness = window(state);
    harness.state_mut().apply(Command::PickAtom(Some(start_atom)));
    harness.run();
    harness.get_by_label(orbitfield::ui::ils::PATH_TO_BULK).click();
    harness.run();
    let m = harness.state().document().unwrap().ils_maps[0].clone();
    assert_eq!(m.paths.len(), 1, "{}", harness.state().panels.status);
    let path = &m.paths[0].path;
    let from = favoured(atom_pos(start_atom));
    let close = |a: [f64; 3], b: [f64; 3]| (0..3).all(|k| (a[k] - b[k]).abs() < 1e-6);
    assert!(
        close(path.points_angstrom[0], from),
        "the path starts at the favoured point"
    );
    let last = lattice_point(&grid, *path.points_angstrom.last().unwrap());
    assert!(
        (0..3).any(|k| last[k] == 0 || last[k] + 1 == grid.lattice.dims[k]),
        "the path ends on the map's faces (bulk)"
    );
    // Steps join lattice neighbours; values are the map's; the barrier is the largest of them and
    // the reference's minimax barrier; the length is the sum of the steps.
    let mut length = 0.0;
    for (w, v) in path.points_angstrom.windows(2).zip(&path.values) {
        let s: f64 = (0..3).map(|k| (w[1][k] - w[0][k]).powi(2)).sum::<f64>().sqrt();
        assert!(s > 0.5 * h && s < h * 3f64.sqrt() + 1e-6, "step {s} A");
        length += s;
        let p = lattice_point(&grid, w[0]);
        assert_eq!(*v, f64::from(grid.values[grid.lattice.index(p[0], p[1], p[2])]));
    }
    assert!((length - path.length_angstrom).abs() < 1e-6);
    let max = path.values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    assert_eq!(path.barrier, max);
    let want = barrier_reference(&grid, lattice_point(&grid, from), None);
    println!(
        "to bulk: barrier {:.3} kT (reference {want:.3}), {:.1} A, {} points",
        path.barrier,
        path.length_angstrom,
        path.points_angstrom.len()
    );
    assert_eq!(path.barrier as f32, want);
    // The tube: one cylinder per step, through the path's points in order.
    let tube: Vec<_> = harness
        .state()
        .view
        .cylinders
        .iter()
        .filter(|c| c.radius_angstrom == orbitfield::app::ils::PATH_RADIUS_ANGSTROM)
        .copied()
        .collect();
    assert_eq!(tube.len(), path.points_angstrom.len() - 1);
    for (c, w) in tube.iter().zip(path.points_angstrom.windows(2)) {
        assert_eq!(c.a_angstrom, w[0].map(|x| x as f32));
        assert_eq!(c.b_angstrom, w[1].map(|x| x as f32));
    }
    assert!(
        harness.query_all_by_label_contains("to bulk: barrier").count() >= 1,
        "the panel lists the path"
    );

    // Between two points: mark the end near another C-alpha, then go from the first.
    harness.state_mut().apply(Command::PickAtom(Some(end_atom)));
    harness.run();
    harness.get_by_label(orbitfield::ui::ils::PATH_MARK_END).click();
    harness.run();
    harness.state_mut().apply(Command::PickAtom(Some(start_atom)));
    harness.run();
    harness.get_by_label(orbitfield::ui::ils::PATH_TO_END).click();
    harness.run();
    let m = harness.state().document().unwrap().ils_maps[0].clone();
    assert_eq!(m.paths.len(), 2, "{}", harness.state().panels.status);
    let between = &m.paths[1].path;
    let to = favoured(atom_pos(end_atom));
    assert!(close(between.points_angstrom[0], from));
    assert!(close(*between.points_angstrom.last().unwrap(), to));
    let want = barrier_reference(&grid, lattice_point(&grid, from), Some(lattice_point(&grid, to)));
    println!(
        "between: barrier {:.3} kT (reference {want:.3}), {:.1} A",
        between.barrier, between.length_angstrom
    );
    assert_eq!(between.barrier as f32, want);
    let tubes = harness
        .state()
        .view
        .cylinders
        .iter()
        .filter(|c| c.radius_angstrom == orbitfield::app::ils::PATH_RADIUS_ANGSTROM)
        .count();
    assert_eq!(tubes, path.points_angstrom.len() + between.points_angstrom.len() - 2);
}

#[test]
fn pause_continue_and_cancel_from_the_field_panel() {
    let mut state = open(&[
        data("md/amber/tz2.truncoct.parm7.bz2"),
        data("md/amber/tz2.truncoct.nc"),
    ]);
    {
        let form = &mut state.panels.ils.form;
        form.probe = orbitfield::app::ils::ProbeChoice::Xe;
        form.spacing_angstrom = 2.0;
        form.subres = 1;
        form.selection = ATOMS.into();
        form.around = ATOMS.into();
        form.frames = "0:8".into();
    }
    state.apply(Command::StartIls);
    let mut harness = window(state);
    let frames = |h: &Harness<'static, AppState>| h.state().document().unwrap().ils_maps[0].frames_done;
    let t0 = Instant::now();
    while frames(&harness) == 0 {
        harness.run();
        assert!(t0.elapsed() < Duration::from_secs(600));
    }
    harness.get_by_label("Pause").click();
    harness.run();
    assert!(harness.state().document().unwrap().ils_maps[0].paused);
    // Frames already handed to the workers still arrive; then nothing more.
    while harness.state().panels.ils.in_flight() > 0 {
        harness.run();
        assert!(t0.elapsed() < Duration::from_secs(600));
    }
    let held = frames(&harness);
    for _ in 0..20 {
        harness.run();
    }
    assert_eq!(frames(&harness), held, "no frame is added while paused");
    assert!(held < 8, "paused after {held} of 8 frames");
    assert!(harness.query_all_by_label_contains("(paused)").count() >= 1);
    harness.get_by_label("Continue").click();
    while harness.state().panels.ils.is_running() {
        harness.run();
        assert!(t0.elapsed() < Duration::from_secs(600));
    }
    assert_eq!(frames(&harness), 8);

    // A second map, cancelled after its first frame: it keeps what it has.
    harness.state_mut().apply(Command::StartIls);
    let second = |h: &Harness<'static, AppState>| h.state().document().unwrap().ils_maps[1].clone();
    while second(&harness).frames_done == 0 {
        harness.run();
        assert!(t0.elapsed() < Duration::from_secs(600));
    }
    harness.get_by_label("Cancel").click();
    harness.run();
    let m = second(&harness);
    assert!(m.cancelled && !harness.state().panels.ils.is_running());
    let kept = m.frames_done;
    for _ in 0..20 {
        harness.run();
    }
    assert_eq!(second(&harness).frames_done, kept, "frames in flight are dropped");
    assert!(kept < 8 && m.grid.is_some());
}

/// Two maps asked for one after the other: the second waits for the first. A session holding them:
/// opening it computes both, one after the other, and each equals its own computation; `render
/// --session` waits for them and draws.
#[test]
fn a_session_with_two_maps_computes_both_and_render_waits_for_them() {
    let mut state = open(&[
        data("md/amber/tz2.truncoct.parm7.bz2"),
        data("md/amber/tz2.truncoct.nc"),
    ]);
    for frames in ["0:3", "0:2"] {
        let form = &mut state.panels.ils.form;
        form.probe = orbitfield::app::ils::ProbeChoice::Xe;
        form.spacing_angstrom = 1.5;
        form.subres = 1;
        form.selection = ATOMS.into();
        form.around = ATOMS.into();
        form.frames = frames.into();
        state.apply(Command::StartIls);
        assert!(state.panels.ils.error.is_none(), "{:?}", state.panels.ils.error);
    }
    // Started while the first computes, the second waits for it; neither is stopped.
    assert_eq!(state.panels.ils.queued(), 1);
    assert!(state.document().unwrap().ils_maps.iter().all(|m| !m.cancelled));
    let session = state.session().unwrap();
    assert_eq!(session.ils.len(), 2);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("two_maps.ron");
    session.save(&path).unwrap();

    // Opened again in a fresh viewer: both maps fill.
    let mut state = AppState::new(
        Settings::default(),
        FieldService::new(None, orbitfield::app::default_extractor()),
    );
    state.apply_session(&orbitfield::app::session::Session::load(&path).unwrap());
    assert_eq!(state.document().unwrap().ils_maps.len(), 2);
    assert_eq!(state.panels.ils.queued(), 1, "the second map waits for the first");
    let t0 = Instant::now();
    while state.ils_needs_pump() {
        state.update_reps();
        assert!(t0.elapsed() < Duration::from_secs(600), "the maps did not finish");
        std::thread::sleep(Duration::from_millis(5));
    }
    let maps = &state.document().unwrap().ils_maps;
    for (m, frames) in maps.iter().zip([3, 2]) {
        assert!(!m.cancelled, "{}", state.panels.status);
        assert_eq!(m.frames_done, frames);
        assert_eq!(m.frames_total, frames);
    }
    let first = maps[0].grid.clone().unwrap();
    let second = maps[1].grid.clone().unwrap();
    let want = grid_ils(&maps[0].map, dir.path());
    let worst = first
        .values
        .iter()
        .zip(&want.values)
        .filter(|(_, w)| **w < 10.0)
        .fold(0.0f32, |m, (g, w)| m.max((g - w).abs()));
    assert!(worst <= 1e-4, "the first map differs from grid ils by {worst} kT");
    let apart = first
        .values
        .iter()
        .zip(&second.values)
        .fold(0.0f32, |m, (a, b)| m.max((a - b).abs()));
    assert!(apart > 1e-3, "the two-frame map equals the three-frame one");

    // The command draws the session once both maps are whole.
    let png = dir.path().join("two_maps.png");
    let out = Process::new(env!("CARGO_BIN_EXE_orbitfield"))
        .arg("render")
        .arg("--session")
        .arg(&path)
        .arg("-o")
        .arg(&png)
        .env_remove("ORBITFIELD_DEVICES")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("no GPU adapter") || stderr.contains("no adapter") {
        println!("skipped the render: {stderr}");
        return;
    }
    assert!(out.status.success(), "render --session failed: {stderr}");
    assert!(png.exists());
}
