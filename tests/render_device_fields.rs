//! The viewer computing orbitals and densities on the render device (`app::fields::device`, the
//! orbital pass recorded by the draw stage into the lattice buffer its GPU marching cubes reads)
//! against the worker pool's CPU engine (the numerical reference) through the same update loop and
//! draw stage: two representations (the HOMO and the density) over several played frames of the
//! threonine MD series give the same surfaces (triangles, area within 1e-4 relative); the next
//! frame is prepared ahead while one is shown; a lattice the device cannot bind and a missing
//! orbital pass fall back to the pool, said once; a picked atom's read-out and a surface coloured by
//! another computed field still work; an orbital coloured by the potential of the frame's charges
//! stays on the render device with its colours computed there, equal to a float64 sum at every
//! vertex; the setting round-trips through a session file.
//! Small lattices; runs on whatever adapter exists (Mesa lavapipe in CI, where the GPU marching
//! cubes is forced on); skipped, with the reason printed, where none can run the passes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use orbitfield::app::draw::SceneSync;
use orbitfield::app::fields::device::FieldsOn;
use orbitfield::app::fields::{FieldChoice, FieldKey};
use orbitfield::app::reps::RepId;
use orbitfield::app::settings::Settings;
use orbitfield::app::state::{AppState, Command};
use orbitfield::render::{GpuScene, RenderContext};

#[path = "common/coulomb.rs"]
mod coulomb;
use coulomb::coulomb_f64;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const REL_AREA_TOL: f64 = 1e-4;
const LATTICE_POINTS: u32 = 28;

fn context() -> Option<RenderContext> {
    let mut rc = match RenderContext::headless(1) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("skipping: no render context ({e})");
            return None;
        }
    };
    let c = &rc.capabilities;
    if !c.mc_compute_supported || !c.orbital_pass_supported {
        eprintln!(
            "skipping: the adapter cannot run the orbital pass and the marching cubes ({})",
            c.summary()
        );
        return None;
    }
    // The GPU marching cubes and vertex potential even on a software rasteriser (the viewer picks
    // the CPU there).
    rc.capabilities.gpu_marching_cubes = true;
    rc.capabilities.gpu_vertex_potential = true;
    Some(rc)
}

fn threonine_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/qm/threonine_md");
    (0..4)
        .map(|i| dir.join(format!("threonine_md_{i:03}.molden.gz")))
        .collect()
}

/// A viewer state on the threonine series showing the HOMO (main field) and the density, playing
/// frame by frame, its orbitals computed where `on` says.
fn viewer(rc: &RenderContext, on: FieldsOn) -> (AppState, [RepId; 2]) {
    viewer_with_charges(rc, on, None)
}

/// As [`viewer`], with `charges_e` on the atoms (the wavefunction files carry none).
fn viewer_with_charges(rc: &RenderContext, on: FieldsOn, charges_e: Option<Vec<f32>>) -> (AppState, [RepId; 2]) {
    let settings = Settings {
        lattice_points: LATTICE_POINTS,
        compute_every_frame: true,
        orbitals_on: on,
        ..Settings::default()
    };
    let mut state = AppState::new(settings, orbitfield::app::default_field_service());
    state.view.gpu_surfaces = true;
    let mut system = orbitfield::io::load(&threonine_files()).unwrap();
    if charges_e.is_some() {
        system.structure.charges_e = charges_e;
    }
    state.open_system("threonine".into(), system);
    // The vacuum Coulomb sum is what the colouring tests hold to their reference.
    state.apply(Command::SetEspModel(orbitfield::app::esp_model::EspModel::Vacuum));
    assert!(matches!(state.main_field(), Some(FieldChoice::Orbital { .. })));
    state.apply(Command::AddFieldRep(FieldChoice::Density));
    state.use_render_device(rc);
    state.view.timeline.playing = true;
    let ids: Vec<RepId> = state.reps().fields().map(|(r, _)| r.id).collect();
    assert_eq!(ids.len(), 2);
    (state, [ids[0], ids[1]])
}

fn shown_key(state: &AppState, id: RepId) -> Option<FieldKey> {
    state.reps().field(id)?.pipeline.shown_key()
}

/// Shows frame `f` (waiting for every representation), then runs the draw stage.
fn play(state: &mut AppState, sync: &mut SceneSync, scene: &mut GpuScene, rc: &RenderContext, f: usize) {
    state.apply(Command::SetFrame(f));
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        state.update_reps();
        let ids: Vec<RepId> = state.reps().fields().map(|(r, _)| r.id).collect();
        if ids.iter().all(|&id| shown_key(state, id).is_some_and(|k| k.frame == f)) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "frame {f} never shown: {:?}",
            state.fields.last_error
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    sync.sync(rc, scene, state);
}

/// (triangles, area in A^2) of the lobes a representation draws (the negative one for signed fields).
fn surfaces(sync: &SceneSync, rc: &RenderContext, id: RepId, signed: bool) -> Vec<(usize, f64)> {
    let lobes = sync.gpu_lobes(id).expect("lobes extracted on the render device");
    lobes
        .iter()
        .take(if signed { 2 } else { 1 })
        .map(|m| {
            let mesh = m.read_back(&rc.device, &rc.queue).unwrap();
            (mesh.indices.len() / 3, mesh.area_angstrom2())
        })
        .collect()
}

#[test]
fn render_device_surfaces_match_the_pool_over_played_frames_with_two_representations() {
    let Some(rc) = context() else { return };
    let mut runs = Vec::new();
    for on in [FieldsOn::Pool, FieldsOn::RenderDevice] {
        let (mut state, ids) = viewer(&rc, on);
        let mut sync = SceneSync::new(&rc);
        // The stage clock (GPU timestamps where the adapter has them) on: it must not change what
        // is drawn, and it counts every representation's frame.
        sync.time_stages(&rc);
        let mut scene = GpuScene::new(&rc);
        let mut per_frame = Vec::new();
        for f in [1, 2, 3, 0] {
            play(&mut state, &mut sync, &mut scene, &rc, f);
            for (k, id) in ids.iter().enumerate() {
                let p = &state.reps().field(*id).unwrap().pipeline;
                assert!(p.device_fallback.is_none(), "{:?}", p.device_fallback);
                assert_eq!(
                    p.device_shown.is_some(),
                    on == FieldsOn::RenderDevice,
                    "{on:?}: representation {k} at frame {f}"
                );
                assert_eq!(p.shown.is_some(), on == FieldsOn::Pool);
                per_frame.push(surfaces(&sync, &rc, *id, k == 0));
            }
        }
        let t = sync.stage_times(&rc).unwrap();
        println!("{on:?}: {t:?}");
        if on == FieldsOn::RenderDevice {
            assert_eq!(t.extractions, 8, "two representations, four frames");
            assert!(t.extract_seconds >= t.counter_wait_seconds && t.counter_wait_seconds > 0.0);
            assert!(t.gpu_extractions == 0 || (t.gpu_extractions == 8 && t.gpu_pass_seconds > 0.0));
        } else {
            assert_eq!(t.extractions, 0, "no render-device field");
        }
        runs.push(per_frame);
    }
    let (pool, device) = (&runs[0], &runs[1]);
    for (i, (a, b)) in pool.iter().zip(device).enumerate() {
        for ((ta, aa), (tb, ab)) in a.iter().zip(b) {
            assert!(*ta > 20, "surface {i}: only {ta} triangles");
            assert_eq!(ta, tb, "surface {i}: triangles, pool {ta} vs render device {tb}");
            let rel = (aa - ab).abs() / aa.abs();
            assert!(rel <= REL_AREA_TOL, "surface {i}: area {aa} vs {ab} ({rel:e})");
        }
    }
}

#[test]
fn the_next_frame_is_prepared_ahead_while_one_is_shown() {
    let Some(rc) = context() else { return };
    let (mut state, ids) = viewer(&rc, FieldsOn::RenderDevice);
    let mut sync = SceneSync::new(&rc);
    let mut scene = GpuScene::new(&rc);
    play(&mut state, &mut sync, &mut scene, &rc, 0);
    let slots: Vec<_> = ids
        .iter()
        .map(|id| state.reps().field(*id).unwrap().pipeline.slot)
        .collect();
    // Every representation's frame 1, packed on the look-ahead thread before it is shown.
    let deadline = Instant::now() + Duration::from_secs(60);
    while !slots
        .iter()
        .all(|s| state.fields.device.prepared_ahead(*s).is_some_and(|k| k.frame == 1))
    {
        assert!(Instant::now() < deadline, "frame 1 never prepared ahead");
        state.fields.device.receive();
        std::thread::sleep(Duration::from_millis(2));
    }
    let before = state.fields.device.served;
    play(&mut state, &mut sync, &mut scene, &rc, 1);
    let after = state.fields.device.served;
    assert_eq!(after.ahead, before.ahead + 2, "both frames came from the look-ahead");
    assert_eq!(after.inline, before.inline);
    // No host lattice: a picked atom's read-out is evaluated at the atom.
    let text = state.describe_atom(0);
    assert!(
        text.contains("(orbital ") && text.ends_with(" a.u. (at the atom)"),
        "{text}"
    );
    // And frame 2 is on its way.
    for s in &slots {
        assert_eq!(state.fields.device.looking_ahead(*s).map(|k| k.frame), Some(2));
    }
}

fn wait_for_pool(state: &mut AppState, id: RepId, f: usize) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while state
        .reps()
        .field(id)
        .unwrap()
        .pipeline
        .shown
        .as_ref()
        .is_none_or(|(k, _)| k.frame != f)
    {
        assert!(Instant::now() < deadline, "the pool never served frame {f}");
        state.update_reps();
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[test]
fn a_lattice_the_device_cannot_bind_falls_back_to_the_pool_said_once() {
    let Some(rc) = context() else { return };
    let (mut state, ids) = viewer(&rc, FieldsOn::RenderDevice);
    // A device whose storage bindings hold 1 KiB: no lattice fits.
    if let Some(r) = state.fields.device.render.as_mut() {
        r.limits.max_storage_buffer_binding_size = 1024;
    }
    state.apply(Command::SetFrame(1));
    state.update_reps();
    let status = state.panels.status.clone();
    assert!(status.contains("worker pool") && status.contains("bytes"), "{status}");
    for id in ids {
        let p = &state.reps().field(id).unwrap().pipeline;
        assert!(p.device_fallback.is_some());
        assert!(p.device_shown.is_none());
        wait_for_pool(&mut state, id, 1);
    }
    // Said once: the next frames are served by the pool without a word.
    state.panels.status.clear();
    state.apply(Command::SetFrame(2));
    for id in ids {
        wait_for_pool(&mut state, id, 2);
    }
    assert!(
        !state.panels.status.contains("render device"),
        "{}",
        state.panels.status
    );
}

#[test]
fn without_the_orbital_pass_the_pool_serves_silently_on_auto_and_says_so_when_asked_for() {
    let Some(rc) = context() else { return };
    for on in [FieldsOn::Auto, FieldsOn::RenderDevice] {
        let (mut state, ids) = viewer(&rc, on);
        state.fields.device.render = None;
        state.panels.status.clear();
        state.apply(Command::SetFrame(1));
        state.update_reps();
        let said = state.panels.status.contains("not on the render device");
        assert_eq!(said, on == FieldsOn::RenderDevice, "{on:?}: {}", state.panels.status);
        for id in ids {
            wait_for_pool(&mut state, id, 1);
            assert!(state.reps().field(id).unwrap().pipeline.device_shown.is_none());
        }
    }
    // `auto` on a software rasteriser: the pool, without a word.
    if rc.software_adapter {
        let (mut state, ids) = viewer(&rc, FieldsOn::Auto);
        state.apply(Command::SetFrame(1));
        state.update_reps();
        for id in ids {
            wait_for_pool(&mut state, id, 1);
            let p = &state.reps().field(id).unwrap().pipeline;
            assert!(p.device_shown.is_none() && p.device_fallback.is_none());
        }
    }
}

#[test]
fn the_setting_round_trips_through_a_session_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("view.ron");
    for on in FieldsOn::ALL {
        let settings = Settings {
            lattice_points: LATTICE_POINTS,
            orbitals_on: on,
            ..Settings::default()
        };
        let mut state = AppState::new(settings, orbitfield::app::default_field_service());
        let system = orbitfield::io::load(&threonine_files()).unwrap();
        state.open_system("threonine".into(), system);
        let session = state.session().unwrap();
        session.save(&path).unwrap();
        let loaded = orbitfield::app::session::Session::load(&path).unwrap();
        assert_eq!(loaded.orbitals_on, on);
        let mut other = AppState::new(Settings::default(), orbitfield::app::default_field_service());
        other.apply_session(&loaded);
        assert_eq!(other.settings.orbitals_on, on);
    }
}

/// A surface computed on the render device coloured by another computed field (the density,
/// from the pool on the same lattice, sampled as a 3-D texture): the colouring follows the frames
/// and the surface stays on the render device.
#[test]
fn a_render_device_surface_coloured_by_a_computed_field_follows_the_frames() {
    let Some(rc) = context() else { return };
    if !rc.capabilities.volume_textures {
        eprintln!("skipping: no 3-D textures on this adapter");
        return;
    }
    let (mut state, ids) = viewer(&rc, FieldsOn::RenderDevice);
    state.apply(Command::DeleteRep(ids[1]));
    state.apply(Command::SetSurfaceColor(Some((FieldChoice::Density, Some([0.0, 0.1])))));
    let mut sync = SceneSync::new(&rc);
    let mut scene = GpuScene::new(&rc);
    for f in [1, 2] {
        play(&mut state, &mut sync, &mut scene, &rc, f);
        let deadline = Instant::now() + Duration::from_secs(120);
        while !state.reps().field(ids[0]).unwrap().color_shows_frame(f) {
            assert!(
                Instant::now() < deadline,
                "the colouring field of frame {f} never arrived"
            );
            state.update_reps();
            std::thread::sleep(Duration::from_millis(2));
        }
        sync.sync(&rc, &mut scene, &mut state);
        let rep = state.reps().field(ids[0]).unwrap();
        assert!(rep.pipeline.device_shown.is_some() && rep.pipeline.device_fallback.is_none());
        assert!(rep.coloring.is_some(), "colouring kept: {}", state.panels.status);
        assert_eq!(surfaces(&sync, &rc, ids[0], true).len(), 2);
    }
}

/// An orbital coloured by the potential of the frame's charges: the render device computes both the
/// orbital and the potential at its vertices, frame after frame, and each vertex's value equals a
/// float64 sum over the charges at that frame's positions.
#[test]
fn an_orbital_coloured_by_the_charges_potential_stays_on_the_render_device() {
    let Some(rc) = context() else { return };
    // Fresh charges on threonine's atoms, summing to zero.
    let n = orbitfield::io::load(&threonine_files()).unwrap().structure.len();
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.subsec_nanos() | 1);
    let mut x = u64::from(seed);
    let mut charges: Vec<f32> = (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            ((x >> 11) as f64 / (1u64 << 53) as f64 - 0.5) as f32
        })
        .collect();
    let mean = charges.iter().sum::<f32>() / n as f32;
    charges.iter_mut().for_each(|q| *q -= mean);
    let (mut state, ids) = viewer_with_charges(&rc, FieldsOn::RenderDevice, Some(charges.clone()));
    state.apply(Command::DeleteRep(ids[1]));
    state.apply(Command::SetSurfaceColor(Some((
        FieldChoice::Potential,
        Some([-0.05, 0.05]),
    ))));
    let mut sync = SceneSync::new(&rc);
    let mut scene = GpuScene::new(&rc);
    for f in [1, 2] {
        play(&mut state, &mut sync, &mut scene, &rc, f);
        let rep = state.reps().field(ids[0]).unwrap();
        assert!(
            rep.pipeline.device_shown.is_some() && rep.pipeline.device_fallback.is_none(),
            "served by the render device: {}",
            state.panels.status
        );
        let values = sync.gpu_vertex_values(ids[0]).unwrap_or_else(|| {
            panic!(
                "frame {f}: no colours computed on the render device: {}",
                state.panels.status
            )
        });
        let lobes = sync.gpu_lobes(ids[0]).unwrap();
        let positions = state.document().unwrap().frame.positions_angstrom.clone();
        let mut checked = 0;
        for (mesh, v) in lobes.iter().zip(values) {
            let mesh = mesh.read_back(&rc.device, &rc.queue).unwrap();
            let got = v
                .read(&rc.device, &rc.queue, mesh.positions_angstrom.len() as u32)
                .unwrap();
            assert_eq!(got.len(), mesh.positions_angstrom.len());
            for (p, &g) in mesh.positions_angstrom.iter().zip(&got) {
                let want = coulomb_f64(&positions, &charges, p.map(f64::from));
                let err = (f64::from(g) - want).abs() / want.abs().max(1e-3);
                assert!(err < 2e-4, "frame {f}: {g} against {want}");
                checked += 1;
            }
        }
        assert!(checked > 100, "frame {f}: {checked} vertices");
    }
}

/// A relative isovalue needs the lattice's values on the host: the pool serves it (said once), and
/// the render device again once the isovalue is absolute.
#[test]
fn a_relative_isovalue_is_served_by_the_pool_until_it_is_absolute_again() {
    use orbitfield::app::state::IsoMode;
    let Some(rc) = context() else { return };
    let (mut state, ids) = viewer(&rc, FieldsOn::RenderDevice);
    let mut sync = SceneSync::new(&rc);
    let mut scene = GpuScene::new(&rc);
    play(&mut state, &mut sync, &mut scene, &rc, 1);
    assert!(state.reps().field(ids[0]).unwrap().pipeline.device_shown.is_some());
    // The isovalue controls edit the selected representation.
    state.apply(Command::SelectRep(ids[0]));
    state.apply(Command::SetIsoMode(IsoMode::RelativeToMax));
    state.update_reps();
    assert!(
        state.panels.status.contains("relative isovalue"),
        "{}",
        state.panels.status
    );
    wait_for_pool(&mut state, ids[0], 1);
    state.apply(Command::SetIsoMode(IsoMode::Absolute));
    play(&mut state, &mut sync, &mut scene, &rc, 2);
    let p = &state.reps().field(ids[0]).unwrap().pipeline;
    assert!(p.device_shown.is_some() && p.device_fallback.is_none());
}
