//! `orbitfield bench --playback`: the viewer's per-frame pipeline timed headless, end to end — frame
//! change, field request through the worker pool (GPU when present), isosurfaces by the marching-cubes
//! compute pass on the render device, and the draw into an offscreen target (waited for). Every frame
//! is computed (the viewer's "every frame" mode, as for a movie), the field cache holds nothing but the
//! shown lattice and the look-ahead, so no frame is answered from an earlier pass; as in the viewer's
//! playback, the next frame's field is requested while the current one is drawn.

use anyhow::{Context, Result, anyhow, bail};
use orbitfield::app::draw::{DeviceStageTimes, SceneSync};
use orbitfield::app::fields::device::FieldsOn;
use orbitfield::app::fields::{FieldChoice, FieldService, PoolBackend};
use orbitfield::app::reps::{FieldStyle, RepEdit, RepSpec, SpecKind};
use orbitfield::app::settings::Settings;
use orbitfield::app::state::{AppState, Command};
use orbitfield::io::System;
use orbitfield::model::units::angstrom_from_bohr3;
use orbitfield::model::{Frame, Name8, Spin, Structure, Trajectory, Wavefunction};
use orbitfield::render::{GpuScene, OffscreenTarget, RenderContext, render_once};
use serde::Serialize;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::bench::BenchArgs;
use super::bench_inputs::synthetic_c60;

/// One playback figure.
#[derive(Serialize, Debug)]
pub struct PlaybackResult {
    pub name: String,
    pub lattice_dims: [usize; 3],
    pub frames_in_series: usize,
    pub frames_timed: usize,
    pub fps: f64,
    /// Mean per frame: waiting for the field (request to grid on the host), extraction + draw.
    pub field_ms: f64,
    pub surface_and_draw_ms: f64,
    /// Of `surface_and_draw_ms`: the isosurface extraction (lattice upload, passes, counter read-back)
    /// or the slice image, before the draw.
    pub surface_ms: f64,
    /// Mean of the pool's stage timings of the shown requests (request to result, and the workers'
    /// compute time including the copy back), milliseconds.
    pub pool_total_ms: f64,
    pub pool_compute_ms: f64,
    pub engines: String,
    pub image_px: [u32; 2],
    /// Whether the pool computed one frame's orbitals in one engine call on every worker
    /// (`PoolConfig::batch_orbitals` and `batch_orbitals_on_gpu`).
    pub batched: bool,
    /// Where the orbitals were computed (`settings.orbitals_on`), and, on the render device, how
    /// many shown frames were prepared ahead (packed on the look-ahead thread) or packed when shown.
    pub orbitals_on: String,
    pub device_frames_ahead: u64,
    pub device_frames_inline: u64,
    /// Mean time of one representation's packing for the render device (on the look-ahead thread,
    /// overlapping the frame shown, or in the update loop when not prepared ahead), milliseconds.
    pub device_pack_ms: f64,
    /// On the render device: the stages of one representation's frame (means, milliseconds).
    pub device_stages: Option<DeviceStagesMs>,
}

/// Means per representation and frame of the render-device stages ([`DeviceStageTimes`]),
/// milliseconds; the GPU figures from timestamps, `None` where the adapter has none.
#[derive(Serialize, Debug, Clone, Copy)]
pub struct DeviceStagesMs {
    pub pass_record_ms: f64,
    pub extract_ms: f64,
    pub counter_wait_ms: f64,
    pub gpu_pass_ms: Option<f64>,
    pub gpu_extract_ms: Option<f64>,
    /// GPU idle from one frame's lobes done to the next frame's pass begin (host work between:
    /// draw, update loop, recording).
    pub gpu_gap_ms: Option<f64>,
}

impl DeviceStagesMs {
    fn of(t: &DeviceStageTimes) -> Option<DeviceStagesMs> {
        if t.extractions == 0 {
            return None;
        }
        let per = |s: f64, n: u64| (n > 0).then(|| s * 1e3 / n as f64);
        let n = t.extractions as f64;
        Some(DeviceStagesMs {
            pass_record_ms: t.pass_record_seconds * 1e3 / n,
            extract_ms: t.extract_seconds * 1e3 / n,
            counter_wait_ms: t.counter_wait_seconds * 1e3 / n,
            gpu_pass_ms: per(t.gpu_pass_seconds, t.gpu_extractions),
            gpu_extract_ms: per(t.gpu_extract_seconds, t.gpu_extractions),
            gpu_gap_ms: per(t.gpu_gap_seconds, t.gpu_gaps),
        })
    }

    /// One line for the bench's report.
    pub fn describe(&self) -> String {
        let gpu = |v: Option<f64>| v.map_or_else(|| "n/a".to_string(), |v| format!("{v:.2} ms"));
        format!(
            "host: pass recorded {:.2} ms, extraction {:.2} ms of which counter wait {:.2} ms; GPU timestamps:              pass {}, extraction {}, idle between frames {}",
            self.pass_record_ms,
            self.extract_ms,
            self.counter_wait_ms,
            gpu(self.gpu_pass_ms),
            gpu(self.gpu_extract_ms),
            gpu(self.gpu_gap_ms),
        )
    }
}

/// A series of `frames` copies of `wf` whose atoms move by up to `jitter_angstrom` (the same orbital
/// coefficients: the cost per frame is what is timed).
pub fn jittered_series(wf: &Wavefunction, frames: usize, jitter_angstrom: f64, name: &str) -> System {
    let mut s = Structure::default();
    for a in &wf.atoms {
        s.push_atom(
            a.element,
            Name8::from(a.element.symbol()),
            Name8::from("MOL"),
            1,
            Name8::EMPTY,
            Name8::EMPTY,
        );
    }
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    };
    let mut list = Vec::new();
    let mut wfs = Vec::new();
    let bohr = orbitfield::model::units::bohr_from_angstrom(1.0);
    for _ in 0..frames {
        let mut w = wf.clone();
        for a in &mut w.atoms {
            for c in &mut a.position_bohr {
                *c += 2.0 * jitter_angstrom * next() * bohr;
            }
        }
        list.push(Frame {
            positions_angstrom: w
                .atoms
                .iter()
                .map(|a| angstrom_from_bohr3(a.position_bohr).map(|x| x as f32))
                .collect(),
            ..Frame::default()
        });
        wfs.push(w);
    }
    System {
        trajectory: Trajectory::from_frames(s.len(), list, name),
        structure: s,
        wavefunctions: wfs,
        grids: Vec::new(),
        warnings: Vec::new(),
        paths: vec![PathBuf::from(name)],
        wavefunction_frames: Vec::new(),
        frame_energies_hartree: Vec::new(),
        orbital_levels: None,
    }
}

/// The threonine MD series of the test data (Molden files), when present under `dir`.
pub fn threonine_md(dir: &std::path::Path) -> Result<System> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().contains(".molden"))
        .collect();
    paths.sort();
    if paths.is_empty() {
        bail!("{}: no Molden files", dir.display());
    }
    Ok(orbitfield::io::load(&paths)?)
}

/// The scenes `bench --playback` and `--ui-seconds` play: (name, system, frames timed, what is
/// drawn). `two_representations` adds the HOMO + LUMO cases. The MD series and trajectories
/// are read from the repository's `tests/data`.
pub fn scenes(c60: &Wavefunction, two_representations: bool) -> Vec<(&'static str, Result<System>, usize, Show)> {
    let md = crate::test_data("md");
    let threonine = || threonine_md(&crate::test_data("qm/threonine_md"));
    let mut cases = vec![
        ("threonine 6-31G* MD series, HOMO", threonine(), 60, Show::Lobes),
        (
            "C60 6-31G* series (synthetic, jittered), HOMO",
            Ok(jittered_series(c60, 8, 0.05, "c60")),
            40,
            Show::Lobes,
        ),
        (
            "adk (3341 atoms) DCS potential slice, 1 A lattice",
            orbitfield::io::load(&[md.join("adk.psf"), md.join("adk_dims.dcd")]).map_err(anyhow::Error::from),
            60,
            Show::PotentialSlice,
        ),
    ];
    if two_representations {
        cases.push((
            "threonine 6-31G* MD series, HOMO + LUMO (two representations)",
            threonine(),
            60,
            Show::HomoAndLumo,
        ));
        cases.push((
            "C60 6-31G* series, HOMO + LUMO (two representations)",
            Ok(jittered_series(c60, 8, 0.05, "c60")),
            40,
            Show::HomoAndLumo,
        ));
        cases.push((
            "threonine 6-31G* MD series, density surface coloured by the wavefunction's potential",
            threonine(),
            37,
            Show::DensityByPotential,
        ));
        cases.push((
            "adk (3341 atoms) molecular surface coloured by Poisson-Boltzmann, solved per frame",
            orbitfield::io::load(&[md.join("adk.psf"), md.join("adk_dims.dcd")]).map_err(anyhow::Error::from),
            60,
            Show::MolSurfByPb,
        ));
    }
    cases
}

/// The scenes `--ui-seconds` plays: those of `--playback` and adk's molecular surface coloured by the
/// potential of its charges (exact at the vertices), per frame of its trajectory.
pub fn ui_scenes(c60: &Wavefunction) -> Vec<(&'static str, Result<System>, usize, Show)> {
    let md = crate::test_data("md");
    let mut cases = scenes(c60, false);
    cases.push((
        "adk (3341 atoms) molecular surface coloured by its charges' potential",
        orbitfield::io::load(&[md.join("adk.psf"), md.join("adk_dims.dcd")]).map_err(anyhow::Error::from),
        60,
        Show::MolSurfByPotential,
    ));
    cases
}

/// What a playback case draws each frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Show {
    /// Both lobes of the document's default field (the HOMO), extracted on the render GPU.
    Lobes,
    /// A z slice through the potential map of the structure's charges.
    PotentialSlice,
    /// Both lobes of the HOMO (the main field) and of the LUMO (a second representation with its own
    /// pool slot), four surfaces per frame.
    HomoAndLumo,
    /// The electron density's isosurface (0.002 a.u.) coloured by the electrostatic potential of the
    /// frame's wavefunction at a fixed colour range, on the viewer's default lattice: the potential
    /// is evaluated every frame at the surface's vertices (on the CPU, in the update loop), so the
    /// surface is extracted on the CPU from the first draw on.
    DensityByPotential,
    /// The molecular surface of all atoms (`molsurf`) alone, coloured by the Coulomb potential of the
    /// frame's charges evaluated at its vertices (`esp`), on the viewer's default lattice.
    MolSurfByPotential,
    /// The molecular surface of all atoms coloured by the frame's Poisson-Boltzmann potential (the
    /// viewer's solver worker, warm-started frame to frame, sampled at the vertices).
    MolSurfByPb,
}

/// Colour range (hartree/e) of the potential on the density surface.
const POTENTIAL_COLOR_RANGE: [f32; 2] = [-0.05, 0.05];

/// Sets up the representations a case draws: the document's default field (the HOMO); the
/// potential as a slice alone; or HOMO and LUMO as two field representations.
fn prepare_show(state: &mut AppState, show: Show, name: &str) -> Result<()> {
    match show {
        Show::Lobes => {}
        Show::PotentialSlice => {
            state.apply(Command::SelectField(Some(FieldChoice::Potential)));
            state.apply(Command::SetShowSlice(true));
            // The slice alone: the potential's isosurfaces are hidden.
            if let Some(id) = state.main_field_id() {
                state.apply(Command::EditRep(id, RepEdit::Visible(false)));
            }
        }
        Show::HomoAndLumo => {
            let lumo = state
                .homo_index(Spin::Alpha)
                .map(|h| FieldChoice::Orbital {
                    spin: Spin::Alpha,
                    index: h + 1,
                })
                .ok_or_else(|| anyhow!("{name}: no HOMO"))?;
            state.apply(Command::AddFieldRep(lumo));
        }
        Show::DensityByPotential => {
            state.apply(Command::SelectField(Some(FieldChoice::Density)));
            state.apply(Command::SetSurfaceColor(Some((
                FieldChoice::WavefunctionPotential,
                Some(POTENTIAL_COLOR_RANGE),
            ))));
            if state.surface_color().is_none() {
                bail!("{name}: {}", state.panels.status);
            }
        }
        Show::MolSurfByPotential | Show::MolSurfByPb => {
            if show == Show::MolSurfByPb {
                state.apply(Command::SetEspModel(
                    orbitfield::app::esp_model::EspModel::PoissonBoltzmann,
                ));
            }
            // The surface alone: the document's default field representations are removed.
            let ids: Vec<_> = state.reps().fields().map(|(r, _)| r.id).collect();
            for id in ids {
                state.apply(Command::DeleteRep(id));
            }
            let mut spec = RepSpec::field("molsurf", FieldStyle::Isosurface);
            if let SpecKind::Field { color_by, .. } = &mut spec.kind {
                *color_by = Some(if show == Show::MolSurfByPb { "pb" } else { "esp" }.into());
            }
            state.add_rep(&spec).map_err(|e| anyhow!("{name}: {e}"))?;
            if state.main_field_rep().and_then(|r| r.coloring).is_none() {
                bail!("{name}: the surface is not coloured by the potential");
            }
        }
    }
    Ok(())
}

/// True when every visible field representation shows frame `f` (and its colouring field, if
/// computed, is that frame's).
fn all_shown(state: &AppState, f: usize) -> bool {
    state
        .reps()
        .fields()
        .filter(|(r, _)| r.visible)
        .all(|(_, rep)| rep.pipeline.shown_key().is_some_and(|k| k.frame == f) && rep.color_shows_frame(f))
}

/// Plays `system` (`lattice_points` along the longest axis for orbitals) for `frames` frames, the
/// orbitals computed where `orbitals_on` says (on the render device: packed in the update loop or
/// ahead on the packing thread, then the pass and the marching cubes in the draw stage).
pub fn playback_case(
    name: &str,
    system: System,
    lattice_points: u32,
    frames: usize,
    show: Show,
    batch: bool,
    orbitals_on: FieldsOn,
) -> Result<PlaybackResult> {
    // The ESP-on-density scene is timed on the viewer's default lattice, where the interactive
    // target is set.
    let lattice_points = if matches!(show, Show::DensityByPotential | Show::MolSurfByPb) {
        Settings::default().lattice_points
    } else {
        lattice_points
    };
    let settings = Settings {
        lattice_points,
        cache_budget_mib: 16,
        compute_every_frame: true,
        orbitals_on,
        ..Settings::default()
    };
    let fields = FieldService::new(
        Some(Box::new(PoolBackend::start_with(orbitfield::jobs::PoolConfig {
            batch_orbitals: batch,
            batch_orbitals_on_gpu: batch,
            ..Default::default()
        }))),
        orbitfield::app::default_extractor(),
    );
    let mut state = AppState::new(settings, fields);
    // Nothing but the shown lattice stays cached: every frame is computed.
    state.fields.set_cache_budget(1);
    state.view.gpu_surfaces = true;
    state.open_system(name.to_string(), system);
    // The vacuum Coulomb sum, as the figures in RESULTS.md were measured.
    state.apply(Command::SetEspModel(orbitfield::app::esp_model::EspModel::Vacuum));
    // Playing (frames are stepped below): each representation asks for its next frame ahead of time.
    state.view.timeline.playing = true;
    prepare_show(&mut state, show, name)?;
    let n_series = state.document().map_or(0, |d| d.n_frames);
    if n_series < 3 || state.main_field().is_none() {
        bail!("{name}: needs a series of at least 3 frames with a field to show");
    }
    let rc = RenderContext::headless(4).map_err(|e| anyhow!("{e}"))?;
    if !rc.capabilities.gpu_marching_cubes {
        bail!(
            "{name}: times the GPU marching cubes, which this adapter does not run ({})",
            rc.capabilities.summary()
        );
    }
    if orbitals_on != FieldsOn::Pool {
        if !rc.capabilities.orbital_pass_supported {
            bail!(
                "{name}: the adapter cannot run the orbital pass ({})",
                rc.capabilities.summary()
            );
        }
        state.use_render_device(&rc);
    }
    let mut sync = SceneSync::new(&rc);
    if orbitals_on != FieldsOn::Pool {
        sync.time_stages(&rc);
    }
    let mut scene = GpuScene::new(&rc);
    let size = [1280u32, 720u32];
    let target = OffscreenTarget::new(&rc, size);
    state.view.size_px = size;
    state.apply(Command::ResetCamera);
    let mut field_t = Duration::ZERO;
    let mut draw_t = Duration::ZERO;
    let mut surface_t = Duration::ZERO;
    let (mut pool_total, mut pool_compute) = (0.0f64, 0.0f64);
    let mut dims = [0; 3];
    let mut step = |state: &mut AppState,
                    sync: &mut SceneSync,
                    f: usize,
                    timed: bool,
                    field_t: &mut Duration,
                    draw_t: &mut Duration,
                    surface_t: &mut Duration,
                    pool: &mut (f64, f64)|
     -> Result<()> {
        let t0 = Instant::now();
        state.apply(Command::SetFrame(f));
        let deadline = t0 + Duration::from_secs(60);
        loop {
            state.update_reps();
            if all_shown(state, f) {
                break;
            }
            if Instant::now() > deadline {
                bail!("{name}: frame {f} never arrived ({:?})", state.fields.last_error);
            }
            std::thread::yield_now();
        }
        let t1 = Instant::now();
        if let Some(k) = state.main_field_rep().and_then(|r| r.pipeline.shown_key()) {
            dims = k.dims;
        }
        // Surfaces (marching cubes on the render device) or the slice image, for every
        // representation, through the draw stage the viewer uses.
        sync.sync(&rc, &mut scene, state);
        let t2 = Instant::now();
        render_once(&rc, &scene, &target, &state.view.camera);
        let _ = rc.device.poll(wgpu::PollType::wait_indefinitely());
        if timed {
            *field_t += t1 - t0;
            *draw_t += t1.elapsed();
            *surface_t += t2 - t1;
            if let Some(st) = state.fields.last_stages() {
                pool.0 += st.total * 1e3;
                pool.1 += st.compute * 1e3;
            }
        }
        Ok(())
    };
    // Warm-up: device contexts, kernel compiles, pipelines.
    for f in 1..3 {
        step(
            &mut state,
            &mut sync,
            f,
            false,
            &mut field_t,
            &mut draw_t,
            &mut surface_t,
            &mut (0.0, 0.0),
        )?;
    }
    // The stage times of the warm-up are not counted.
    let warm = sync.stage_times(&rc).unwrap_or_default();
    let t = Instant::now();
    for i in 0..frames {
        // Never the frame shown last, so every step is a new field.
        let mut pool = (pool_total, pool_compute);
        step(
            &mut state,
            &mut sync,
            (3 + i) % n_series,
            true,
            &mut field_t,
            &mut draw_t,
            &mut surface_t,
            &mut pool,
        )?;
        (pool_total, pool_compute) = pool;
    }
    let seconds = t.elapsed().as_secs_f64();
    let device_stages = sync.stage_times(&rc).and_then(|t| DeviceStagesMs::of(&t.since(&warm)));
    if let Some(why) = state
        .reps()
        .fields()
        .find_map(|(_, f)| f.pipeline.device_fallback.clone())
    {
        bail!("{name}: {why}");
    }
    let served = state.fields.device.served;
    Ok(PlaybackResult {
        name: name.to_string(),
        lattice_dims: dims,
        frames_in_series: n_series,
        frames_timed: frames,
        fps: frames as f64 / seconds,
        field_ms: field_t.as_secs_f64() * 1e3 / frames as f64,
        surface_and_draw_ms: draw_t.as_secs_f64() * 1e3 / frames as f64,
        surface_ms: surface_t.as_secs_f64() * 1e3 / frames as f64,
        pool_total_ms: pool_total / frames as f64,
        pool_compute_ms: pool_compute / frames as f64,
        engines: state.fields.backend_name(),
        image_px: size,
        batched: batch,
        orbitals_on: orbitals_on.name().to_string(),
        device_frames_ahead: served.ahead,
        device_frames_inline: served.inline,
        device_pack_ms: served.pack_seconds * 1e3 / served.packed.max(1) as f64,
        device_stages,
    })
}

/// How the viewer's own loop fares while fields are computed: UI frames (tick, field poll, surfaces
/// when a field arrived, draw, waited for) against the fields shown.
#[derive(Serialize, Debug)]
pub struct ResponsivenessResult {
    pub name: String,
    pub lattice_dims: [usize; 3],
    pub seconds: f64,
    /// UI frames per second over the run (at most the 60 Hz display rate the loop is paced to).
    pub ui_fps: f64,
    /// 95th percentile and worst UI frame time (milliseconds of work, before waiting for the next
    /// display refresh).
    pub ui_p95_ms: f64,
    pub ui_max_ms: f64,
    /// Mean time of the draw alone (scene into the target, waited for), milliseconds.
    pub draw_ms: f64,
    /// Distinct trajectory frames whose field was shown, per second.
    pub fields_per_second: f64,
    /// Distinct trajectory frames shown complete (every visible field representation shows that
    /// frame's surfaces, previews included, with that frame's colours), per second.
    pub complete_frames_per_second: f64,
    /// Playback rate asked for (frames of the trajectory per second; frames the engines cannot
    /// keep up with are dropped).
    pub playback_fps: f32,
    pub engines: String,
    /// Isosurfaces extracted on the render device (else on the CPU).
    pub gpu_surfaces: bool,
    pub image_px: [u32; 2],
}

/// Display refresh rate the responsiveness loop paces itself to (the viewer presents with vsync).
const DISPLAY_HZ: f64 = 60.0;

/// Plays `system` for `seconds` as the viewer does (a fixed playback rate, frames dropped when fields
/// arrive late, `compute_every_frame` off), drawing a UI frame per display refresh into the offscreen
/// target of a 1280x720 view (as the viewer: 4x MSAA on a hardware adapter; on a software rasteriser
/// no multisampling and half resolution while playing), and reports how smooth the loop stayed.
/// `gpu_surfaces` asks for the marching-cubes pass on the render device (taken, as in the viewer,
/// only on a hardware adapter), else the CPU extractor.
pub fn responsiveness_case(
    name: &str,
    system: System,
    lattice_points: u32,
    seconds: f64,
    show: Show,
    gpu_surfaces: bool,
) -> Result<ResponsivenessResult> {
    // The coloured molecular surface is played on the viewer's default lattice.
    let lattice_points = if matches!(show, Show::MolSurfByPotential | Show::MolSurfByPb) {
        Settings::default().lattice_points
    } else {
        lattice_points
    };
    let settings = Settings {
        lattice_points,
        compute_every_frame: false,
        ..Settings::default()
    };
    // As the viewer: the paths (MSAA, isosurface extractor) the adapter's capabilities choose.
    let rc = RenderContext::headless(4).map_err(|e| anyhow!("{e}"))?;
    let gpu_surfaces = gpu_surfaces && rc.capabilities.gpu_marching_cubes;
    let fields = FieldService::new(
        Some(Box::new(PoolBackend::start())),
        orbitfield::app::default_extractor(),
    );
    let mut state = AppState::new(settings, fields);
    state.view.gpu_surfaces = gpu_surfaces;
    // Nothing but the shown lattice stays cached: every frame shown was computed in this run.
    state.fields.set_cache_budget(1);
    if !gpu_surfaces {
        // As the viewer: CPU isosurfaces on a thread of their own; on a software renderer, previews
        // from every second lattice point while playing.
        state.extract_surfaces_off_thread();
        state.view.preview_surfaces_while_playing = rc.software_adapter;
    }
    // As the viewer: surface colours at the vertices on a thread of their own.
    state.color_vertices_off_thread();
    state.open_system(name.to_string(), system);
    // The vacuum Coulomb sum, as the figures in RESULTS.md were measured.
    state.apply(Command::SetEspModel(orbitfield::app::esp_model::EspModel::Vacuum));
    prepare_show(&mut state, show, name)?;
    if state.document().map_or(0, |d| d.n_frames) < 3 || state.main_field().is_none() {
        bail!("{name}: needs a series of at least 3 frames with a field to show");
    }
    state.view.timeline.playing = true;
    state.view.timeline.looping = true;
    state.view.timeline.fps = 30.0;
    let mut sync = SceneSync::new(&rc);
    let mut scene = GpuScene::new(&rc);
    let view = [1280u32, 720u32];
    // As the viewer: a software rasteriser draws at half resolution while playing.
    let size = if rc.software_adapter { view.map(|s| s / 2) } else { view };
    let target = OffscreenTarget::new(&rc, size);
    state.view.size_px = view;
    state.apply(Command::ResetCamera);
    let mut frame_ms = Vec::new();
    let mut draw_total = Duration::ZERO;
    let mut shown_frames = 0usize;
    let (mut complete_frames, mut last_complete) = (0usize, None);
    let mut dims = [0; 3];
    let start = Instant::now();
    let mut last = start;
    while start.elapsed().as_secs_f64() < seconds {
        let now = Instant::now();
        state.tick((now - last).as_secs_f32());
        last = now;
        if state.update_reps() {
            shown_frames += 1;
            if let Some((_, grid)) = state.shown_field() {
                dims = grid.lattice.dims;
            }
        }
        if let Some(f) = state
            .reps()
            .fields()
            .find(|(r, _)| r.visible)
            .and_then(|(_, f)| f.pipeline.shown_key())
            .map(|k| k.frame)
            && last_complete != Some(f)
            && all_shown(&state, f)
        {
            complete_frames += 1;
            last_complete = Some(f);
        }
        sync.sync(&rc, &mut scene, &mut state);
        let t_draw = Instant::now();
        render_once(&rc, &scene, &target, &state.view.camera);
        let _ = rc.device.poll(wgpu::PollType::wait_indefinitely());
        draw_total += t_draw.elapsed();
        frame_ms.push(now.elapsed().as_secs_f64() * 1e3);
        // As the viewer, whose window presents with vsync: at most one frame per display refresh
        // (60 Hz); the time left over belongs to the field workers.
        if let Some(rest) = Duration::from_secs_f64(1.0 / DISPLAY_HZ).checked_sub(now.elapsed()) {
            std::thread::sleep(rest);
        }
    }
    let elapsed = start.elapsed().as_secs_f64();
    frame_ms.sort_by(f64::total_cmp);
    let pick = |q: f64| {
        frame_ms
            .get(((frame_ms.len() as f64 - 1.0) * q).round() as usize)
            .copied()
            .unwrap_or(0.0)
    };
    Ok(ResponsivenessResult {
        name: name.to_string(),
        lattice_dims: dims,
        seconds: elapsed,
        ui_fps: frame_ms.len() as f64 / elapsed,
        ui_p95_ms: pick(0.95),
        ui_max_ms: pick(1.0),
        draw_ms: draw_total.as_secs_f64() * 1e3 / frame_ms.len().max(1) as f64,
        fields_per_second: shown_frames as f64 / elapsed,
        complete_frames_per_second: complete_frames as f64 / elapsed,
        playback_fps: state.view.timeline.fps,
        engines: state.fields.backend_name(),
        gpu_surfaces,
        image_px: size,
    })
}

/// `--playback --orbitals-on render-device`: the orbital scenes (HOMO; HOMO + LUMO as two
/// representations) played through the viewer's own update loop, draw stage and draw at 1280x720,
/// each frame's fields computed on the render device and waited for; then, unless
/// `--playback-no-draw-peer` is off, the HOMO series without the viewer and without the draw
/// (`render_orbital_bench`, labelled as such).
pub(super) fn render_device_playback(args: &BenchArgs) -> Result<()> {
    use super::playback::Show;
    let c60 = synthetic_c60();
    let mut viewer = Vec::new();
    for (name, system, frames, show) in super::playback::scenes(&c60, true) {
        if !matches!(show, Show::Lobes | Show::HomoAndLumo)
            || args.playback_only.as_ref().is_some_and(|t| !name.contains(t.as_str()))
        {
            continue;
        }
        let on = orbitfield::app::fields::device::FieldsOn::RenderDevice;
        let points = args.playback_points;
        let run = system.and_then(|sys| super::playback::playback_case(name, sys, points, frames, show, true, on));
        match run {
            Ok(r) => {
                println!(
                    "playback {} (viewer, orbitals on the render device, drawn at {}x{}): {:?} lattice, {:.1} \
                     frames/s end to end; per frame: update loop {:.2} ms (frame change, packing of frames not prepared ahead), pass + extraction {:.2} ms, \
                     draw {:.2} ms; packing {:.2} ms per representation and frame (ahead on its thread: {} frames, \
                     when shown: {})",
                    r.name,
                    r.image_px[0],
                    r.image_px[1],
                    r.lattice_dims,
                    r.fps,
                    r.field_ms,
                    r.surface_ms,
                    r.surface_and_draw_ms - r.surface_ms,
                    r.device_pack_ms,
                    r.device_frames_ahead,
                    r.device_frames_inline,
                );
                if let Some(st) = &r.device_stages {
                    println!(
                        "  stages per representation and frame (orbital pass '{}'): {}",
                        orbitfield::compute::wgpu::orbital::MoPassVariant::from_env().name(),
                        st.describe()
                    );
                }
                viewer.push(r);
            }
            Err(e) => eprintln!("note: playback '{name}' skipped: {e:#}"),
        }
    }
    let mut no_draw = Vec::new();
    // The no-draw series once per variant of the orbital pass (the viewer's run above uses the one
    // `ORBITFIELD_ORBITAL_PASS` names).
    let variants = orbitfield::compute::wgpu::orbital::MoPassVariant::ALL;
    for (variant, (name, system, frames, show)) in variants
        .into_iter()
        .flat_map(|v| super::playback::scenes(&c60, false).into_iter().map(move |s| (v, s)))
    {
        if !args.playback_no_draw_peer
            || show != Show::Lobes
            || args.playback_only.as_ref().is_some_and(|t| !name.contains(t.as_str()))
        {
            continue;
        }
        let run = system
            .and_then(|sys| super::render_orbital_bench::run_case(name, sys, args.playback_points, frames, variant));
        match run {
            Ok(r) => {
                println!(
                    "playback {} (NO DRAW, outside the viewer: orbital pass '{}' + both lobes only): {:?} lattice, \
                     {:.1} frames/s (waited for); field pass {:.2} ms ({}), packing {:.2} ms; CPU engine {:.1} ms on \
                     the same lattice ({:.1}x); {} + {} triangles; on {}",
                    r.name,
                    r.variant,
                    r.lattice_dims,
                    r.fps,
                    r.field_ms,
                    r.field_timing,
                    r.pack_ms,
                    r.cpu_field_ms,
                    r.speedup_vs_cpu,
                    r.triangles[0],
                    r.triangles[1],
                    r.adapter
                );
                no_draw.push(r);
            }
            Err(e) => eprintln!("note: playback '{name}' skipped: {e:#}"),
        }
    }
    if let Some(p) = &args.json {
        let text = serde_json::to_string_pretty(&serde_json::json!({ "viewer": viewer, "no_draw": no_draw }))?;
        std::fs::write(p, text).with_context(|| format!("writing {}", p.display()))?;
    }
    Ok(())
}
