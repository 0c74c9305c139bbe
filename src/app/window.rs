//! The desktop window: a winit `ApplicationHandler` that runs egui, renders the 3-D view into its
//! offscreen target and composites it through egui-wgpu, takes screenshots and saves settings.
//!
//! Called by the CLI when no subcommand is given. Without a display it returns an error that
//! points to the headless commands instead of panicking.

use super::state::AppState;
use crate::render::callback::BlitResources;
use crate::render::{GpuScene, OffscreenTarget, RenderContext};
use anyhow::{Context as _, Result, anyhow};
use std::num::NonZeroU32;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use winit::application::ApplicationHandler;
use winit::event::WindowEvent;
use winit::event_loop::{ActiveEventLoop, ControlFlow, EventLoop, OwnedDisplayHandle};
use winit::window::{Window, WindowId};

/// How the viewer starts.
#[derive(Clone, Debug, Default)]
pub struct ViewerOptions {
    /// Files to open; the embedded demo when empty.
    pub files: Vec<PathBuf>,
    /// Save a screenshot of the whole window here (at `exit_after_frames`, or the 30th frame, once
    /// the field in flight is shown; at most a minute later).
    pub screenshot: Option<PathBuf>,
    /// Quit after this many frames (for scripted runs and CI).
    pub exit_after_frames: Option<u64>,
    /// Initial window size in logical pixels.
    pub size: Option<[u32; 2]>,
    /// Do not read or write the settings file.
    pub no_settings: bool,
    /// The atoms the wavefunction files describe, when they are a QM region of an MD system.
    pub qm_region: Option<String>,
    /// A session file to open (its files, representations, frame and camera) instead of `files`.
    pub session: Option<PathBuf>,
    /// The graphics backends to choose from (`--backend`); else `WGPU_BACKEND`, else all.
    pub backends: Option<wgpu::Backends>,
    /// Print the adapter and the rendering paths chosen for it to stderr.
    pub verbose: bool,
    /// A command script to run once the window is up, after `files` open (`orbitfield [FILE...] SCRIPT.ofc`).
    pub script: Option<PathBuf>,
}

/// Opens the viewer and runs until the window closes.
pub fn run(options: ViewerOptions) -> Result<()> {
    #[cfg(all(unix, not(target_os = "macos")))]
    if std::env::var_os("DISPLAY").is_none() && std::env::var_os("WAYLAND_DISPLAY").is_none() {
        return Err(no_display("neither DISPLAY nor WAYLAND_DISPLAY is set"));
    }
    let event_loop = EventLoop::new().map_err(|e| no_display(&e.to_string()))?;
    let display = event_loop.owned_display_handle();
    let mut app = Viewer::new(options, display);
    event_loop.run_app(&mut app).context("the window's event loop failed")?;
    app.result
}

fn no_display(why: &str) -> anyhow::Error {
    anyhow!(
        "cannot open a window: {why}.\nWithout a display, use the headless commands: \
         `orbitfield render FILE... -o out.png` draws an image, `orbitfield info FILE...` summarises files \
         (or run the viewer under `xvfb-run`)."
    )
}

struct Gfx {
    window: Arc<Window>,
    egui_state: egui_winit::State,
    painter: egui_wgpu::winit::Painter,
    rc: RenderContext,
    scene: GpuScene,
    target: Option<OffscreenTarget>,
    /// The draw stage of the representation list (GPU isosurfaces without a round trip through
    /// the host).
    sync: super::draw::SceneSync,
}

struct Viewer {
    options: ViewerOptions,
    display: OwnedDisplayHandle,
    egui_ctx: egui::Context,
    state: AppState,
    gfx: Option<Gfx>,
    frames: u64,
    last_frame: Instant,
    next_repaint: Option<Instant>,
    /// Whether work off the update loop was in flight at the last frame: the frame after it ends
    /// is drawn once more, for what the results changed after the panels were laid out.
    background_last_frame: bool,
    /// Errors already written to standard error (`PanelState::error_count` then).
    errors_reported: u64,
    settings_path: Option<PathBuf>,
    result: Result<()>,
    screenshot_taken: Arc<std::sync::atomic::AtomicBool>,
    shot_requested: bool,
    started: Instant,
}

impl Viewer {
    fn new(options: ViewerOptions, display: OwnedDisplayHandle) -> Viewer {
        let settings_path = if options.no_settings {
            None
        } else {
            super::settings::Settings::default_path()
        };
        let settings = match &settings_path {
            Some(p) => {
                let (s, msg) = super::settings::Settings::load(p);
                if let Some(m) = msg {
                    tracing::warn!("{m}");
                }
                s
            }
            None => super::settings::Settings::default(),
        };
        let mut state = AppState::new(settings, super::default_field_service());
        state.panels.console.pending_script = options.script.clone();
        if let Some(session) = &options.session {
            state.push(super::state::Command::OpenSession(session.clone()));
        } else if options.script.is_some() && options.files.is_empty() {
            // The script opens what it shows.
        } else if options.files.is_empty() {
            state.push(super::state::Command::OpenDemo);
        } else if let Some(selection) = &options.qm_region {
            state.push(super::state::Command::OpenFilesWithQmRegion {
                paths: options.files.clone(),
                qm_region: selection.clone(),
            });
        } else {
            state.push(super::state::Command::OpenFiles(options.files.clone()));
        }
        Viewer {
            options,
            display,
            egui_ctx: egui::Context::default(),
            state,
            gfx: None,
            frames: 0,
            last_frame: Instant::now(),
            next_repaint: None,
            background_last_frame: false,
            errors_reported: 0,
            settings_path,
            result: Ok(()),
            screenshot_taken: Arc::new(std::sync::atomic::AtomicBool::new(false)),
            shot_requested: false,
            started: Instant::now(),
        }
    }

    fn init(&mut self, event_loop: &ActiveEventLoop) -> Result<Gfx> {
        let size = self.options.size.unwrap_or_else(|| default_window_size(event_loop));
        let attrs = Window::default_attributes()
            .with_title("orbitfield")
            .with_inner_size(winit::dpi::LogicalSize::new(size[0], size[1]));
        let window = Arc::new(event_loop.create_window(attrs).context("cannot create the window")?);
        // The backends asked for (`--backend`, else `WGPU_BACKEND`, else all); when none of them gives
        // a device for the window, OpenGL is tried before giving up.
        let asked = self
            .options
            .backends
            .or_else(wgpu::Backends::from_env)
            .unwrap_or(wgpu::Backends::all());
        let mut tries = vec![asked];
        if asked != wgpu::Backends::GL {
            tries.push(wgpu::Backends::GL);
        }
        let mut failures = Vec::new();
        let mut painter = None;
        for backends in tries {
            let mut setup = egui_wgpu::WgpuSetupCreateNew::from_display_handle(self.display.clone());
            setup.instance_descriptor.backends = backends;
            // The adapter's own limits: egui's defaults on the OpenGL backend allow no storage buffers.
            setup.device_descriptor = Arc::new(crate::render::context::device_descriptor);
            let config = egui_wgpu::WgpuConfiguration {
                wgpu_setup: egui_wgpu::WgpuSetup::CreateNew(setup),
                ..Default::default()
            };
            let mut p = pollster::block_on(egui_wgpu::winit::Painter::new(
                self.egui_ctx.clone(),
                config,
                false,
                egui_wgpu::RendererOptions::default(),
            ));
            match pollster::block_on(p.set_window(egui::ViewportId::ROOT, Some(Arc::clone(&window)))) {
                Ok(()) if p.render_state().is_some() => {
                    painter = Some(p);
                    break;
                }
                Ok(()) => failures.push(format!("{backends:?}: no graphics device")),
                Err(e) => {
                    tracing::warn!("no window device on {backends:?}: {e}");
                    failures.push(format!("{backends:?}: {e}"));
                }
            }
        }
        let painter = painter.ok_or_else(|| anyhow!("cannot draw into the window: {}", failures.join("; ")))?;
        let rs = painter
            .render_state()
            .ok_or_else(|| anyhow!("no graphics device for the window"))?;
        crate::render::context::install_error_handler(&rs.device);
        // Every path (isosurface extractor, transparency, volume colouring, MSAA) is chosen here,
        // once, from what the adapter and its device can do.
        let caps = crate::render::Capabilities::read(&rs.adapter, &rs.device, 4);
        tracing::info!("rendering on {}", caps.summary());
        if self.options.verbose {
            eprintln!("rendering on {}", caps.summary());
        }
        let rc = RenderContext::new(rs.device.clone(), rs.queue.clone(), caps);
        rs.renderer
            .write()
            .callback_resources
            .insert(BlitResources::new(&rs.device, rs.target_format, 1));
        let egui_state = egui_winit::State::new(
            self.egui_ctx.clone(),
            egui::ViewportId::ROOT,
            &window,
            Some(window.scale_factor() as f32),
            None,
            painter.max_texture_side(),
        );
        let scene = GpuScene::new(&rc);
        let sync = super::draw::SceneSync::new(&rc);
        Ok(Gfx {
            window,
            egui_state,
            painter,
            rc,
            scene,
            target: None,
            sync,
        })
    }

    fn save_settings(&self) {
        if let Some(p) = &self.settings_path
            && let Err(e) = self.state.settings.save(p)
        {
            tracing::warn!("{}: settings not saved: {e}", p.display());
        }
    }

    fn redraw(&mut self, event_loop: &ActiveEventLoop) {
        let Some(gfx) = self.gfx.as_mut() else {
            return;
        };
        let now = Instant::now();
        let dt = now.duration_since(self.last_frame).as_secs_f32();
        self.last_frame = now;
        if dt > 0.0 {
            let inst = 1.0 / dt;
            let fps = &mut self.state.view.fps;
            *fps = if *fps == 0.0 { inst } else { *fps * 0.9 + inst * 0.1 };
        }
        self.state.tick(dt);
        let followed = self.state.poll_follow();
        let saving = self.state.poll_save() || self.state.panels.fetch.job.is_some();
        let sampling = self.state.ils_needs_pump();
        if self.state.pump_rdf() || self.state.panels.rdf.is_running() || followed || saving || sampling {
            gfx.window.request_redraw();
        }
        let raw = gfx.egui_state.take_egui_input(&gfx.window);
        let state = &mut self.state;
        let mut full = self.egui_ctx.run_ui(raw, |ui| crate::ui::main_ui(ui, state));
        gfx.egui_state
            .handle_platform_output(&gfx.window, std::mem::take(&mut full.platform_output));
        self.state.apply_pending();
        // File > Quit, Ctrl+Q or a script's `quit`; and egui's own request to close the window
        // (the window carries out no other viewport command).
        let close_asked = full
            .viewport_output
            .get(&egui::ViewportId::ROOT)
            .is_some_and(|v| v.commands.iter().any(|c| matches!(c, egui::ViewportCommand::Close)));
        // An image or a movie being written is finished first (a script's `save image` then
        // `quit`); the window's close button does not wait.
        let writing = self.state.panels.export.active();
        if (self.state.panels.quit_requested && !writing) || close_asked {
            // Nothing of this frame is painted (egui asks that its textures be handled or let go).
            full.textures_delta.clear();
            self.save_settings();
            event_loop.exit();
            return;
        }
        if self.state.panels.quit_requested {
            let waiting = "quitting once the image or movie is written…";
            if self.state.panels.status != waiting {
                self.state.panels.status = waiting.into();
            }
            gfx.window.request_redraw();
        }
        if std::mem::take(&mut self.state.panels.open_dialog_requested) {
            open_dialog(&mut self.state);
        }
        if std::mem::take(&mut self.state.panels.save_dialog_requested)
            && let Some(path) = rfd::FileDialog::new()
                .set_title("Save atoms and frames")
                .add_filter("coordinates", &["pdb", "pqr", "gro", "xyz", "dcd", "xtc", "trr", "nc"])
                .save_file()
        {
            self.state.save_to(&path);
        }
        super::export::browse(&mut self.state);
        self.state.update_reps();
        gfx.sync.sync(&gfx.rc, &mut gfx.scene, &mut self.state);

        // A software rasteriser draws at half resolution while playing, so the frames keep their
        // rate on the cores the field engines share; the full resolution returns when playback stops.
        let size = if gfx.rc.software_adapter && self.state.view.timeline.playing {
            self.state.view.size_px.map(|s| (s / 2).max(1))
        } else {
            self.state.view.size_px
        };
        if gfx
            .target
            .as_ref()
            .is_none_or(|t| t.size_px != size.map(|s| s.clamp(1, crate::render::target::MAX_SIDE_PX)))
        {
            let t = OffscreenTarget::new(&gfx.rc, size);
            if let Some(rs) = gfx.painter.render_state()
                && let Some(blit) = rs.renderer.write().callback_resources.get_mut::<BlitResources>()
            {
                blit.set_source(&gfx.rc.device, &t.color_view);
            }
            gfx.target = Some(t);
        }
        if let Some(target) = &gfx.target {
            crate::render::render_once(&gfx.rc, &gfx.scene, target, &self.state.view.camera);
        }
        // Images and movie frames of the view alone, drawn again at their own size.
        super::export::service(&gfx.rc, &mut gfx.scene, &mut self.state);

        self.frames += 1;
        if self.frames % 30 == 1 {
            let errors = crate::render::context::device_errors();
            let resources = crate::render::context::GpuResources::read(&gfx.rc.device)
                .map_or_else(|| "GPU memory: no report on this backend".to_string(), |r| r.line());
            self.state.panels.graphics[1] = if errors > 0 {
                format!("{resources}; {errors} graphics errors (see the log)")
            } else {
                resources
            };
        }
        let mut captures = Vec::new();
        let shot_frame = self.options.exit_after_frames.unwrap_or(30).max(1);
        // Scripted runs wait (up to a minute) for field work in flight, so the picture is complete.
        let settled =
            (!self.state.busy() && !self.state.view.dirty.meshes) || self.started.elapsed() > Duration::from_secs(60);
        if let Some(path) = self.options.screenshot.clone()
            && !self.shot_requested
            && self.frames >= shot_frame
            && settled
        {
            captures.push(screenshot_callback(path, Arc::clone(&self.screenshot_taken)));
            self.shot_requested = true;
        }
        for path in std::mem::take(&mut self.state.view.screenshot_requests) {
            self.state.panels.status = format!("screenshot saved to {}", path.display());
            captures.push(screenshot_callback(
                path,
                Arc::new(std::sync::atomic::AtomicBool::new(false)),
            ));
        }
        let capturing = !captures.is_empty();
        let clipped = self
            .egui_ctx
            .tessellate(std::mem::take(&mut full.shapes), full.pixels_per_point);
        let bg = if self.state.settings.dark_background {
            [0.08, 0.08, 0.09, 1.0]
        } else {
            [0.95, 0.95, 0.95, 1.0]
        };
        gfx.painter.paint_and_update_textures(
            egui::ViewportId::ROOT,
            full.pixels_per_point,
            bg,
            &clipped,
            &mut full.textures_delta,
            captures,
            &gfx.window,
        );
        if capturing {
            // Screenshots arrive through a buffer mapping that completes when the device is polled.
            let _ = gfx.rc.device.poll(wgpu::PollType::Wait {
                submission_index: None,
                timeout: Some(Duration::from_secs(30)),
            });
        }

        // Errors reach a terminal too (a script or file given on the command line that fails): each
        // once, as the window shows it.
        let count = self.state.panels.error_count;
        if count > self.errors_reported {
            let new = usize::try_from(count - self.errors_reported).unwrap_or(usize::MAX);
            let shown = &self.state.panels.errors;
            for e in &shown[shown.len().saturating_sub(new)..] {
                eprintln!("error: {e}");
            }
            self.errors_reported = count;
        }
        if let Some(n) = self.options.exit_after_frames
            && self.frames >= n
            && (self.shot_requested || self.options.screenshot.is_none())
        {
            if self.options.screenshot.is_some() && !self.screenshot_taken.load(std::sync::atomic::Ordering::SeqCst) {
                self.result = Err(anyhow!("the screenshot could not be taken"));
            } else if self.errors_reported > 0 && self.result.is_ok() {
                // A scripted run whose files or commands failed ends with a failure status.
                self.result = Err(anyhow!(
                    "{} error{} while the window ran (above)",
                    self.errors_reported,
                    if self.errors_reported == 1 { "" } else { "s" }
                ));
            }
            self.save_settings();
            event_loop.exit();
            return;
        }
        let busy = self.state.view.timeline.playing
            || self.state.drawing_in_flight()
            || self.options.exit_after_frames.is_some()
            || self.state.panels.export.active();
        let delay = full
            .viewport_output
            .get(&egui::ViewportId::ROOT)
            .map_or(Duration::MAX, |v| v.repaint_delay);
        // Work off the update loop (a surface's colours, a series, a download) is polled ten times a
        // second, so its result shows when it arrives, without a mouse move to wake the window.
        let background = self.state.background_work();
        let polled = poll_delay(delay, background || self.background_last_frame);
        self.background_last_frame = background;
        if busy || polled.is_zero() {
            gfx.window.request_redraw();
            self.next_repaint = None;
        } else if polled < Duration::from_secs(3600) {
            self.next_repaint = Some(Instant::now() + polled);
        } else {
            self.next_repaint = None;
        }
    }
}

/// Whether `events` (egui's input gathered since the last frame) hold typing: text, keys or a
/// paste, which a mouse press in the same frame would take from the field they were typed into.
fn keys_not_yet_drawn(events: &[egui::Event]) -> bool {
    events.iter().any(|e| {
        matches!(
            e,
            egui::Event::Text(_) | egui::Event::Key { .. } | egui::Event::Paste(_) | egui::Event::Ime(_)
        )
    })
}

/// Whether `events` hold a mouse button going down or up, which the keys after it must follow.
fn clicks_not_yet_drawn(events: &[egui::Event]) -> bool {
    events.iter().any(|e| matches!(e, egui::Event::PointerButton { .. }))
}

/// How long the window may sleep before its next frame: egui's `delay`, at most 100 ms while work
/// off the update loop is in flight (or ended at the last frame).
fn poll_delay(delay: Duration, background: bool) -> Duration {
    if background {
        delay.min(Duration::from_millis(100))
    } else {
        delay
    }
}

fn screenshot_callback(path: PathBuf, done: Arc<std::sync::atomic::AtomicBool>) -> egui::ScreenshotCallback {
    egui::ScreenshotCallback::new(move |img: Arc<egui::ColorImage>| {
        let [w, h] = img.size;
        let bytes: Vec<u8> = img.pixels.iter().flat_map(|c| c.to_srgba_unmultiplied()).collect();
        let result = image::RgbaImage::from_raw(w as u32, h as u32, bytes)
            .ok_or_else(|| "image size mismatch".to_string())
            .and_then(|im| {
                let mut png = Vec::new();
                im.write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
                    .map_err(|e| e.to_string())?;
                crate::io::write_atomically(&path, &png).map_err(|e| e.to_string())
            });
        match result {
            Ok(()) => {
                tracing::info!("screenshot saved to {}", path.display());
                done.store(true, std::sync::atomic::Ordering::SeqCst);
            }
            Err(e) => tracing::error!("{}: screenshot not saved: {e}", path.display()),
        }
    })
}

/// Shows the desktop's file dialog, or the built-in browser (with a message saying why) when the
/// desktop has none or it returns at once without asking (no xdg portal answered).
fn open_dialog(state: &mut AppState) {
    use super::browser::Purpose;
    use super::state::Command;
    if !super::browser::native_dialog_available() {
        state.apply(Command::OpenBrowser(
            Purpose::OpenFiles,
            Some("No desktop file dialog (no xdg-desktop-portal on the session bus and no zenity): the built-in browser instead.".into()),
        ));
        return;
    }
    let asked = Instant::now();
    match rfd::FileDialog::new().set_title("Open files").pick_files() {
        Some(files) => state.apply(Command::OpenFiles(files)),
        None if asked.elapsed() < Duration::from_millis(300) => state.apply(Command::OpenBrowser(
            Purpose::OpenFiles,
            Some(
                "The desktop's file dialog did not answer (no xdg-desktop-portal?): the built-in browser instead."
                    .into(),
            ),
        )),
        None => {}
    }
}

impl ApplicationHandler for Viewer {
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        if self.gfx.is_some() {
            return;
        }
        match self.init(event_loop) {
            Ok(g) => {
                g.window.request_redraw();
                let software = g.rc.software_adapter;
                let gpu_surfaces = g.rc.capabilities.gpu_marching_cubes;
                self.state.panels.graphics[0] = g.rc.capabilities.summary();
                // Orbitals and densities may be computed on this device (`settings.orbitals_on`).
                self.state.use_render_device(&g.rc);
                self.gfx = Some(g);
                // Isosurfaces from now on come from the compute pass on this device where the
                // capabilities chose it (not on a software rasteriser: its compute runs on the cores
                // the field engines need, and the CPU marching cubes is faster there).
                self.state.view.gpu_surfaces = gpu_surfaces;
                if !gpu_surfaces {
                    // ... on a thread of its own, so a large surface never stalls a frame.
                    self.state.extract_surfaces_off_thread();
                }
                // Cartoons (secondary structure and mesh per frame) on a thread of their own too; their
                // meshes written on this device where the capabilities chose it (a hardware adapter
                // with compute passes; the thread then makes only the per-residue inputs).
                self.state.view.gpu_cartoons = self.gfx.as_ref().is_some_and(|g| g.rc.capabilities.gpu_cartoons());
                self.state.build_cartoons_off_thread();
                // Surface colours by the charges' potential (exact at the vertices) on one as well.
                self.state.color_vertices_off_thread();
                if software {
                    // From every second lattice point while playing (drawing large surfaces is what
                    // limits a software renderer's frame rate; the full ones follow at a stop).
                    self.state.view.preview_surfaces_while_playing = true;
                }
                self.state.mark_fields_stale(|_| true);
            }
            Err(e) => {
                self.result = Err(e);
                event_loop.exit();
            }
        }
    }

    fn window_event(&mut self, event_loop: &ActiveEventLoop, _id: WindowId, event: WindowEvent) {
        // Typing and clicks are drawn in separate frames, in the order they came. Keys typed since
        // the last frame reach the text field that has them before a mouse press moves the focus:
        // egui lets go of a field's focus when a press lands elsewhere in the same frame, before
        // the field reads its keys, so on a slow frame the end of a typed path was lost when the
        // next field was clicked at once. And a click that opens a field for typing (a number's
        // box) takes effect before the keys that follow it. Tab moves the focus at the start of a
        // frame, so it too waits for the keys typed before it.
        let pending = |g: &Gfx, what: fn(&[egui::Event]) -> bool| what(&g.egui_state.egui_input().events);
        let flush = match &event {
            WindowEvent::MouseInput { .. } => self.gfx.as_ref().is_some_and(|g| pending(g, keys_not_yet_drawn)),
            WindowEvent::KeyboardInput { event: key, .. }
                if key.logical_key == winit::keyboard::Key::Named(winit::keyboard::NamedKey::Tab) =>
            {
                self.gfx
                    .as_ref()
                    .is_some_and(|g| pending(g, keys_not_yet_drawn) || pending(g, clicks_not_yet_drawn))
            }
            WindowEvent::KeyboardInput { .. } | WindowEvent::Ime(_) => {
                self.gfx.as_ref().is_some_and(|g| pending(g, clicks_not_yet_drawn))
            }
            _ => false,
        };
        if flush {
            self.redraw(event_loop);
        }
        let Some(gfx) = self.gfx.as_mut() else {
            return;
        };
        let response = gfx.egui_state.on_window_event(&gfx.window, &event);
        match event {
            WindowEvent::CloseRequested => {
                self.save_settings();
                event_loop.exit();
            }
            WindowEvent::Resized(size) => {
                if let (Some(w), Some(h)) = (NonZeroU32::new(size.width), NonZeroU32::new(size.height)) {
                    gfx.painter.on_window_resized(egui::ViewportId::ROOT, w, h);
                }
                gfx.window.request_redraw();
            }
            WindowEvent::RedrawRequested => self.redraw(event_loop),
            _ => {
                if response.repaint {
                    gfx.window.request_redraw();
                }
            }
        }
    }

    fn about_to_wait(&mut self, event_loop: &ActiveEventLoop) {
        match self.next_repaint {
            Some(t) if Instant::now() >= t => {
                self.next_repaint = None;
                if let Some(g) = &self.gfx {
                    g.window.request_redraw();
                }
                event_loop.set_control_flow(ControlFlow::Wait);
            }
            Some(t) => event_loop.set_control_flow(ControlFlow::WaitUntil(t)),
            None => event_loop.set_control_flow(ControlFlow::Wait),
        }
    }

    fn exiting(&mut self, _event_loop: &ActiveEventLoop) {
        if let Some(mut g) = self.gfx.take() {
            g.painter.destroy();
        }
    }
}

/// The window's first size when none is asked for: 1400x900 logical points, shrunk to fit the
/// primary monitor (a 1280x800 screen gets a window that fits, panels and all).
fn default_window_size(event_loop: &ActiveEventLoop) -> [u32; 2] {
    let wanted = [1400u32, 900];
    let Some(monitor) = event_loop
        .primary_monitor()
        .or_else(|| event_loop.available_monitors().next())
    else {
        return wanted;
    };
    let logical: winit::dpi::LogicalSize<f64> = monitor.size().to_logical(monitor.scale_factor());
    if logical.width < 1.0 || logical.height < 1.0 {
        return wanted;
    }
    // Room for a title bar and a panel of the desktop.
    let fit = [logical.width * 0.96, (logical.height - 60.0) * 0.96];
    [
        wanted[0].min(fit[0].max(640.0) as u32),
        wanted[1].min(fit[1].max(480.0) as u32),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn background_work_is_polled_ten_times_a_second() {
        assert_eq!(poll_delay(Duration::MAX, true), Duration::from_millis(100));
        assert_eq!(poll_delay(Duration::from_millis(20), true), Duration::from_millis(20));
        assert_eq!(poll_delay(Duration::MAX, false), Duration::MAX);
    }

    #[test]
    fn typing_is_drawn_before_a_press_but_pointer_moves_are_not() {
        let key = egui::Event::Key {
            key: egui::Key::A,
            physical_key: None,
            pressed: true,
            repeat: false,
            modifiers: egui::Modifiers::NONE,
        };
        assert!(keys_not_yet_drawn(&[egui::Event::Text("ui.mp4".into())]));
        assert!(keys_not_yet_drawn(&[
            egui::Event::PointerMoved(egui::pos2(1.0, 2.0)),
            key
        ]));
        assert!(!keys_not_yet_drawn(&[egui::Event::PointerMoved(egui::pos2(1.0, 2.0))]));
        assert!(!keys_not_yet_drawn(&[]));
        let press = egui::Event::PointerButton {
            pos: egui::pos2(1.0, 2.0),
            button: egui::PointerButton::Primary,
            pressed: false,
            modifiers: egui::Modifiers::NONE,
        };
        assert!(clicks_not_yet_drawn(&[press]));
        assert!(!clicks_not_yet_drawn(&[egui::Event::Text("2".into())]));
    }
}
