//! The draw stage of the representation list: uploads what the representations show to a
//! [`GpuScene`] — atom instances, isosurfaces (the CPU meshes, or marching cubes on the render
//! device), cartoon meshes, the drawn slice, the surface colouring — and says what the colour legends show.
//!
//! One [`SceneSync`] per scene: the window, `render` and the playback bench all draw through it.
//! It redoes only what changed: a field representation's GPU surfaces are extracted again only when
//! its picture's revision moved (into buffers of its own, reused from frame to frame); colour and
//! opacity changes re-upload without extracting. A representation whose field the render device
//! computes (`fields::device`: no host lattice) has the orbital pass recorded into its own lattice
//! buffer first; when the pass fails, the worker pool serves it from the next update on. The GPU marching cubes exists only where the render
//! context's capabilities chose it; elsewhere the surfaces are the CPU mesher's. Without usable 3-D
//! textures a surface coloured by a volume is coloured per vertex, which needs the CPU meshes. A
//! surface coloured by the potential of point charges at its vertices is coloured on the render
//! device where its capabilities allow it (`compute::wgpu::vertex_potential`, each time its surfaces or its
//! frame change); the wavefunction's own potential at the vertices needs the CPU meshes.
//! On request ([`SceneSync::time_stages`], the playback bench) it times the render-device stages:
//! host recording, extraction and counter wait, and GPU timestamps of the pass and the extraction.
//! Cartoons built as per-residue inputs (`AppState::update_cartoon_rep` where `gpu_cartoons` is set)
//! have their meshes written by the cartoon pass on the render device (`compute::wgpu::cartoon`,
//! into buffers of each representation's own, reused from frame to frame; again only when the
//! cartoon shown changed); the others are CPU meshes.

use super::fields::device::DeviceFieldError;
use super::fields::{FieldChoice, FieldKey};
use super::reps::CartoonKey;
use super::reps::{FieldRep, FieldStyle, RepId, RepKind};
use super::state::AppState;
use super::values::Legend;
use crate::compute::wgpu::cartoon::{CartoonBuffers, CartoonCompute, CartoonMesh};
use crate::compute::wgpu::device_field::{DeviceField, DeviceInput};
use crate::compute::wgpu::marching_cubes::{GpuLattice, GpuMesh, LobeBuffers, McCompute, McError};
use crate::compute::wgpu::orbital::MoCompute;
use crate::compute::wgpu::vertex_potential::{GpuCharges, VertexPotential, VertexScreening, VertexValues};
use crate::jobs::cartoon::CartoonBuilt;
use crate::render::{GpuScene, MeshInput, MeshStyle, RenderContext};
use crate::surface::MeshData;
use std::collections::BTreeMap;

/// One field representation's surfaces on the render device.
#[derive(Default)]
struct GpuLobes {
    buffers: LobeBuffers,
    /// The lattice the render device computes its field into (`fields::device`), reused while
    /// large enough.
    device_values: Option<wgpu::Buffer>,
    meshes: Option<[GpuMesh; 2]>,
    /// The pipeline revision they were extracted for.
    revision: Option<u64>,
    /// Their values at the vertices (the potential of the frame's charges), with the revision and
    /// colouring they were computed for, and the charges' buffer.
    values: Option<([VertexValues; 2], (u64, FieldChoice, u32))>,
    charges: Option<GpuCharges>,
}

/// One cartoon representation's mesh on the render device: its buffers and the mesh last written
/// into them, with the cartoon it is of.
#[derive(Default)]
struct DeviceCartoon {
    buffers: CartoonBuffers,
    mesh: Option<(CartoonKey, CartoonMesh)>,
}

/// Colour and opacity of every cartoon (its colours are per vertex; always opaque).
const CARTOON_STYLE: MeshStyle = MeshStyle {
    color: [1.0; 3],
    opacity: 1.0,
};

/// Keeps a scene in step with the state.
pub struct SceneSync {
    /// The cartoon pass, where the device runs compute passes.
    cartoon: Option<CartoonCompute>,
    cartoons: BTreeMap<RepId, DeviceCartoon>,
    /// Marching cubes on the render device, where its capabilities allow it.
    mc: Option<McCompute>,
    /// The orbital pass, where the marching cubes runs and the device can run it.
    mo: Option<MoCompute>,
    /// The potential of point charges at the vertices of those surfaces, where the capabilities
    /// allow it.
    vp: Option<VertexPotential>,
    gpu: BTreeMap<RepId, GpuLobes>,
    /// Stage timings of the representations the render device computes, when asked for.
    clock: Option<StageClock>,
}

/// Where the time of the render-device representations' surfaces goes, summed over the
/// extractions since [`SceneSync::time_stages`] (the playback bench prints the means).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DeviceStageTimes {
    /// Representations' frames computed and extracted on the render device.
    pub extractions: u64,
    /// Host: recording and submitting the orbital pass (packing is not in it).
    pub pass_record_seconds: f64,
    /// Host: recording and submitting both lobes' extraction and waiting for their counters.
    pub extract_seconds: f64,
    /// Of `extract_seconds`: the wait for the counters (the GPU running the pass and extraction).
    pub counter_wait_seconds: f64,
    /// Extractions with GPU timestamps (the adapter has timestamp queries), and on the GPU over
    /// them: the orbital pass (its begin to its end), the extraction (pass end to lobes done),
    /// and the idle time before the pass (the previous frame's last stamp to this pass's begin).
    pub gpu_extractions: u64,
    pub gpu_pass_seconds: f64,
    pub gpu_extract_seconds: f64,
    pub gpu_gap_seconds: f64,
    /// Pairs of consecutive stamped extractions whose gap is counted in `gpu_gap_seconds`.
    pub gpu_gaps: u64,
}

impl DeviceStageTimes {
    /// What was added after `earlier` (a reading of the same clock).
    pub fn since(&self, earlier: &DeviceStageTimes) -> DeviceStageTimes {
        DeviceStageTimes {
            extractions: self.extractions.saturating_sub(earlier.extractions),
            pass_record_seconds: self.pass_record_seconds - earlier.pass_record_seconds,
            extract_seconds: self.extract_seconds - earlier.extract_seconds,
            counter_wait_seconds: self.counter_wait_seconds - earlier.counter_wait_seconds,
            gpu_extractions: self.gpu_extractions.saturating_sub(earlier.gpu_extractions),
            gpu_pass_seconds: self.gpu_pass_seconds - earlier.gpu_pass_seconds,
            gpu_extract_seconds: self.gpu_extract_seconds - earlier.gpu_extract_seconds,
            gpu_gap_seconds: self.gpu_gap_seconds - earlier.gpu_gap_seconds,
            gpu_gaps: self.gpu_gaps.saturating_sub(earlier.gpu_gaps),
        }
    }
}

/// Timestamp queries for [`DeviceStageTimes`]: three per extraction (pass begin, pass end, lobes
/// done), resolved when the times are read.
struct StageClock {
    times: DeviceStageTimes,
    /// `None` where the device has no timestamp queries.
    queries: Option<wgpu::QuerySet>,
    /// Queries written since the last read.
    used: u32,
}

/// Extractions stamped between two reads of the times (three queries each).
const CLOCK_EXTRACTIONS: u32 = 1024;

/// A surface coloured by a field before its colours arrive: neutral grey, which does not read as
/// a finished colouring (the density's orange did).
const AWAITING_COLOURS: [f32; 3] = [0.72, 0.72, 0.72];

/// The colours of a field representation's two lobes (swapped where a followed orbital's phase
/// flips; grey when a field colours them, until its values arrive) and its opacity.
fn lobe_styles(f: &FieldRep, flip: bool) -> [MeshStyle; 2] {
    let [a, b] = if f.coloring.is_some() {
        [AWAITING_COLOURS; 2]
    } else {
        f.colors
    };
    let (first, second) = if flip { (b, a) } else { (a, b) };
    [
        MeshStyle {
            color: first,
            opacity: f.opacity,
        },
        MeshStyle {
            color: second,
            opacity: f.opacity,
        },
    ]
}

impl SceneSync {
    pub fn new(rc: &RenderContext) -> SceneSync {
        SceneSync {
            cartoon: rc
                .capabilities
                .cartoon_pass_supported()
                .then(|| CartoonCompute::new(&rc.device)),
            cartoons: BTreeMap::new(),
            mc: rc.capabilities.gpu_marching_cubes.then(|| McCompute::new(&rc.device)),
            mo: (rc.capabilities.gpu_marching_cubes && rc.capabilities.orbital_pass_supported)
                .then(|| MoCompute::new(&rc.device)),
            vp: (rc.capabilities.gpu_marching_cubes && rc.capabilities.gpu_vertex_potential)
                .then(|| VertexPotential::new(&rc.device)),
            gpu: BTreeMap::new(),
            clock: None,
        }
    }

    /// Times the stages of the representations computed on the render device from now on
    /// (GPU timestamps where the device has timestamp queries); read with [`Self::stage_times`].
    pub fn time_stages(&mut self, rc: &RenderContext) {
        let queries = rc.device.features().contains(wgpu::Features::TIMESTAMP_QUERY).then(|| {
            rc.device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("render-device stage timestamps"),
                ty: wgpu::QueryType::Timestamp,
                count: 3 * CLOCK_EXTRACTIONS,
            })
        });
        self.clock = Some(StageClock {
            times: DeviceStageTimes::default(),
            queries,
            used: 0,
        });
    }

    /// The stage times since [`Self::time_stages`] (the GPU's stamps read back now, waiting for
    /// the device), or `None` when not timing.
    pub fn stage_times(&mut self, rc: &RenderContext) -> Option<DeviceStageTimes> {
        let clock = self.clock.as_mut()?;
        if let Some(set) = &clock.queries
            && clock.used > 0
        {
            let bytes = 8 * u64::from(clock.used);
            let resolved = rc.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("render-device stage timestamps"),
                size: bytes,
                usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            });
            let mut encoder = rc.device.create_command_encoder(&Default::default());
            encoder.resolve_query_set(set, 0..clock.used, &resolved, 0);
            rc.queue.submit([encoder.finish()]);
            if let Ok(raw) = crate::compute::wgpu::marching_cubes::read_buffer(&rc.device, &rc.queue, &resolved, bytes)
            {
                let period_s = f64::from(rc.queue.get_timestamp_period()) * 1e-9;
                let ticks: Vec<u64> = raw
                    .chunks_exact(8)
                    .map(|b| u64::from_ne_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]))
                    .collect();
                let span = |a: u64, b: u64| b.saturating_sub(a) as f64 * period_s;
                let t = &mut clock.times;
                let mut last_end: Option<u64> = None;
                for q in ticks.chunks_exact(3) {
                    let [begin, pass_end, done] = [q[0], q[1], q[2]];
                    t.gpu_extractions += 1;
                    t.gpu_pass_seconds += span(begin, pass_end);
                    t.gpu_extract_seconds += span(pass_end, done);
                    if let Some(prev) = last_end {
                        t.gpu_gap_seconds += span(prev, begin);
                        t.gpu_gaps += 1;
                    }
                    last_end = Some(done);
                }
            }
            clock.used = 0;
        }
        Some(clock.times)
    }

    /// Representation `id`'s two lobes on the render device, as last extracted (tests, checks).
    pub fn gpu_lobes(&self, id: RepId) -> Option<&[GpuMesh; 2]> {
        self.gpu.get(&id)?.meshes.as_ref()
    }

    /// Representation `id`'s values at the vertices of its lobes on the render device (the
    /// potential of the frame's charges), as last computed (tests, checks).
    pub fn gpu_vertex_values(&self, id: RepId) -> Option<&[VertexValues; 2]> {
        self.gpu.get(&id)?.values.as_ref().map(|(v, _)| v)
    }

    /// Uploads what changed in `state` to `scene` and clears the dirty flags.
    pub fn sync(&mut self, rc: &RenderContext, scene: &mut GpuScene, state: &mut AppState) {
        let view = &mut state.view;
        if view.dirty.atoms {
            scene.set_spheres(rc, &view.spheres);
            scene.set_cylinders(rc, &view.cylinders);
            scene.set_lines(rc, &view.lines);
            view.dirty.atoms = false;
        }
        scene.style.background = state.settings.background_srgb().map(|c| f32::from(c) / 255.0);
        scene.style.depth_cue = state.settings.depth_cue;
        if state.view.dirty.meshes || state.view.dirty.style {
            state.view.dirty.meshes = false;
            state.view.dirty.style = false;
            if state.view.gpu_surfaces {
                self.gpu_surfaces(rc, scene, state);
            } else {
                cpu_surfaces(rc, scene, state);
            }
            self.device_cartoons(rc, scene, state);
            // Uploaded meshes take the colour field again.
            state.view.dirty.surface_color = true;
        }
        if state.view.dirty.surface_color {
            state.view.dirty.surface_color = false;
            let coloured = state.doc.reps.fields().find_map(|(r, f)| {
                let c = f
                    .coloring
                    .filter(|_| r.visible && f.is_surface() && !f.colors_by_vertex_values())?;
                Some((c.range?, f.color_grid(state.document()?)?, c.source))
            });
            // Surfaces coloured by a potential at the vertices and cartoons coloured by a field carry
            // their values per vertex (CPU meshes), drawn through the colormap over one range.
            if let Some((source, range)) = state.vertex_value_range() {
                let map = state.settings.colormap.for_values(state.is_electrostatic(source));
                scene.set_value_colors(rc, range, map);
            }
            let needs_cpu_meshes =
                state.doc.reps.fields().any(|(r, f)| {
                    r.visible && f.is_surface() && f.colors_by_vertex_values() && !self.colors_on_device(f)
                });
            let result = match &coloured {
                _ if needs_cpu_meshes && state.view.gpu_surfaces => {
                    Err(crate::render::scene::ColorFieldError::NoVolumeTextures)
                }
                Some((range, g, source)) => scene.set_color_field(
                    rc,
                    Some(crate::render::scene::ColorFieldInput {
                        grid: g,
                        range: *range,
                        colormap: state.settings.colormap.for_values(state.is_electrostatic(*source)),
                    }),
                ),
                None => scene.set_color_field(rc, None),
            };
            if let Err(crate::render::scene::ColorFieldError::NoVolumeTextures) = result
                && state.view.gpu_surfaces
            {
                // Colouring per vertex needs the CPU meshes: the CPU extractor from the next frame on,
                // coloured once its surfaces arrive.
                state.panels.status = if needs_cpu_meshes {
                    "surface colours by a potential at the vertices; extracting on the CPU".into()
                } else {
                    "surface colouring per vertex (no 3-D textures); extracting on the CPU".into()
                };
                self.gpu.clear();
                state.view.gpu_surfaces = false;
                state.extract_surfaces_off_thread();
                state.mark_fields_stale(|_| true);
            } else if let Err(e) = result {
                let coloured_rep = state
                    .doc
                    .reps
                    .fields()
                    .find(|(_, f)| f.coloring.is_some())
                    .map(|(r, _)| r.id);
                if let Some(id) = coloured_rep {
                    state.edit_rep(id, super::reps::RepEdit::ColorBy(None));
                }
                state.panels.status = format!("surface colouring off: {e}");
            }
        }
        if state.view.dirty.slice {
            state.view.dirty.slice = false;
            let colormap = state.settings.colormap;
            let image = state.doc.reps.drawn_slice().and_then(|f| {
                let (_, grid) = f.pipeline.shown.as_ref()?;
                let FieldStyle::Slice(mut plane) = f.style else {
                    return None;
                };
                plane.range = state.slice_range(f, grid);
                super::slice::plane_image(grid, colormap.for_values(state.is_electrostatic(f.field)), plane)
            });
            scene.set_slice(rc, image.as_ref());
        }
    }

    /// Whether the cartoon pass runs on this scene's device.
    pub fn writes_cartoons(&self) -> bool {
        self.cartoon.is_some()
    }

    /// The visible cartoons built as per-residue inputs: their meshes written on the render device
    /// (again only when the cartoon shown changed) and added to the scene. When the pass cannot
    /// run, cartoons are built on the CPU from the next update on.
    fn device_cartoons(&mut self, rc: &RenderContext, scene: &mut GpuScene, state: &mut AppState) {
        let mut failure = None;
        let mut live = Vec::new();
        for (r, c) in state.doc.reps.cartoons().filter(|(r, _)| r.visible) {
            let Some((key, CartoonBuilt::Rings(rings))) = &c.pipeline.shown else {
                continue;
            };
            live.push(r.id);
            let Some(pass) = &self.cartoon else {
                failure = Some("this device runs no compute passes".to_string());
                continue;
            };
            let slot = self.cartoons.entry(r.id).or_default();
            let written = slot.mesh.as_ref().filter(|(k, _)| k == key).map(|(_, m)| m.clone());
            let mesh = match written {
                Some(m) => m,
                None => match pass.build(&rc.device, &rc.queue, rings, &mut slot.buffers) {
                    Ok(m) => {
                        slot.mesh = Some((*key, m.clone()));
                        m
                    }
                    Err(e) => {
                        failure = Some(e.to_string());
                        continue;
                    }
                },
            };
            scene.add_cartoon_mesh(rc, &mesh, CARTOON_STYLE);
        }
        self.cartoons.retain(|id, _| live.contains(id));
        if let Some(e) = failure {
            // The cartoons' keys change with the flag: the next update asks for CPU meshes.
            state.panels.status = format!("cartoon meshes on the CPU: {e}");
            state.view.gpu_cartoons = false;
            self.cartoons.clear();
        }
    }

    /// Surfaces by marching cubes on the render device, extracted again only for representations
    /// whose picture changed.
    fn gpu_surfaces(&mut self, rc: &RenderContext, scene: &mut GpuScene, state: &mut AppState) {
        let flip_main = state.follow_flips_sign();
        let main = state.followed_rep_id();
        let mut meshes = Vec::new();
        let mut failure = None;
        let mut state_status = None;
        let mut first_ranges = Vec::new();
        let Some(mc) = &self.mc else {
            // No compute pass on this device: the CPU extractor from the next frame on.
            state.panels.status = "GPU isosurfaces unavailable on this graphics adapter; extracting on the CPU".into();
            state.view.gpu_surfaces = false;
            state.extract_surfaces_off_thread();
            state.mark_fields_stale(|_| true);
            return;
        };
        let live: Vec<RepId> = state.doc.reps.list.iter().map(|r| r.id).collect();
        self.gpu.retain(|id, _| live.contains(id));
        let mut device_failed = Vec::new();
        for rep in &state.doc.reps.list {
            let RepKind::Field(f) = &rep.kind else {
                continue;
            };
            if !rep.visible || !f.is_surface() {
                continue;
            }
            // A host lattice (uploaded), or a field the render device computes into its own.
            let (grid, device) = match (&f.pipeline.shown, &f.pipeline.device_shown) {
                (Some((_, g)), _) => (Some(g), None),
                (None, Some((_, d))) => (None, Some(d)),
                (None, None) => continue,
            };
            let lobes = self.gpu.entry(rep.id).or_default();
            if lobes.revision != Some(f.pipeline.revision) || lobes.meshes.is_none() {
                let iso = f.pipeline.shown_iso;
                let made = match (grid, device) {
                    (Some(g), _) => mc.extract_lobes_reusing(&rc.device, &rc.queue, g, iso, &mut lobes.buffers),
                    (None, Some(d)) => match device_lobes(rc, mc, self.mo.as_ref(), d, iso, lobes, self.clock.as_mut())
                    {
                        Ok(m) => Ok(m),
                        Err(e) => {
                            device_failed.push((rep.id, e));
                            continue;
                        }
                    },
                    (None, None) => continue,
                };
                match made {
                    Ok(m) => {
                        lobes.meshes = Some(m);
                        lobes.revision = Some(f.pipeline.revision);
                    }
                    Err(e) => {
                        failure = Some(e.to_string());
                        break;
                    }
                }
            }
            let Some([plus, minus]) = lobes.meshes.clone() else {
                continue;
            };
            let values = match &self.vp {
                Some(vp) if f.colors_by_vertex_values() && f.coloring.is_some_and(|c| c.source.is_potential()) => {
                    match potential_on_device(rc, vp, state, f, lobes) {
                        Ok(v) => v,
                        Err(e) => {
                            state_status = Some(format!("surface colours: {e}"));
                            None
                        }
                    }
                }
                _ => None,
            };
            if let Some(v) = &values
                && f.coloring.is_some_and(|c| c.range.is_none())
            {
                first_ranges.push((rep.id, v.clone(), [plus.clone(), minus.clone()]));
            }
            let [vp, vm] = values.map_or([None, None], |[a, b]| [Some(a), Some(b)]);
            let styles = lobe_styles(f, flip_main && Some(rep.id) == main);
            meshes.push((plus, styles[0], vp));
            if grid.map_or(f.field.is_signed(), |g| f.is_signed(g)) {
                meshes.push((minus, styles[1], vm));
            }
        }
        if let Some(msg) = state_status {
            state.panels.status = msg;
        }
        // A colouring's first values choose its range (read back once).
        for (id, values, lobes) in first_ranges {
            let mut all = Vec::new();
            for (v, m) in values.iter().zip(&lobes) {
                if let Ok((n, _)) = m.read_counts(&rc.device, &rc.queue)
                    && let Ok(read) = v.read(&rc.device, &rc.queue, n)
                {
                    all.extend(read);
                }
            }
            let range = super::reps::value_range(all);
            if let Some(RepKind::Field(f)) = state.doc.reps.list.iter_mut().find(|r| r.id == id).map(|r| &mut r.kind)
                && let Some(c) = f.coloring.as_mut()
            {
                c.range = Some(range);
            }
            // These values are the charges' potential at the vertices.
            scene.set_value_colors(rc, range, state.settings.colormap.for_values(true));
        }
        for (id, e) in device_failed {
            // That representation's field comes from the worker pool from the next update on.
            self.gpu.remove(&id);
            state.device_pass_failed(id, e);
        }
        match failure {
            None => {
                scene.set_gpu_meshes_valued(rc, meshes);
                scene.add_meshes(rc, &cartoon_meshes(state));
            }
            Some(e) => {
                // Fall back to the CPU extractor from the next frame on.
                state.panels.status = format!("GPU isosurfaces unavailable ({e}); extracting on the CPU");
                state.view.gpu_surfaces = false;
                state.extract_surfaces_off_thread();
                self.gpu.clear();
                state.mark_fields_stale(|_| true);
            }
        }
    }
}

/// Both lobes of a field the render device computes: the pass recorded into the representation's
/// lattice buffer (reused while large enough, so a frame allocates nothing), then the marching
/// cubes on that buffer.
fn device_lobes(
    rc: &RenderContext,
    mc: &McCompute,
    mo: Option<&MoCompute>,
    field: &DeviceField,
    iso: f32,
    lobes: &mut GpuLobes,
    clock: Option<&mut StageClock>,
) -> Result<[GpuMesh; 2], DeviceFieldError> {
    let mo = mo.ok_or(DeviceFieldError::NoDevice)?;
    let DeviceInput::Orbital(packed) = &field.input;
    let t0 = std::time::Instant::now();
    let need = (4 * field.lattice.n_points() as u64).max(16);
    let values = match lobes.device_values.take() {
        // Not one four times too large (a much larger lattice shown before).
        Some(b) if b.size() >= need && b.size() / 4 <= need => b,
        // With room for a few more planes: a trajectory's lattice follows the atoms, and a new
        // buffer is zero-filled by the device.
        _ => MoCompute::create_values_with_headroom(&rc.device, &field.lattice),
    };
    lobes.device_values = Some(values.clone());
    let mut encoder = rc.device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
        label: Some("orbital pass of a representation"),
    });
    // Three stamps per extraction while timing: the pass's begin and end, the lobes done.
    let stamps = clock.as_ref().and_then(|c| {
        let set = c.queries.as_ref()?;
        (c.used + 3 <= 3 * CLOCK_EXTRACTIONS).then(|| (set.clone(), c.used))
    });
    let writes = stamps.as_ref().map(|(set, q)| wgpu::ComputePassTimestampWrites {
        query_set: set,
        beginning_of_pass_write_index: Some(*q),
        end_of_pass_write_index: Some(q + 1),
    });
    mo.encode(&rc.device, &mut encoder, packed, &field.lattice, &values, writes)?;
    rc.queue.submit([encoder.finish()]);
    let t1 = std::time::Instant::now();
    let draw = |e: McError| DeviceFieldError::Draw(e.to_string());
    let lattice = GpuLattice::from_buffer(values, field.lattice).map_err(draw)?;
    lobes.buffers.end_timestamp = stamps.as_ref().map(|(set, q)| (set.clone(), q + 2));
    let made = mc
        .extract_lobes_on(&rc.device, &rc.queue, &lattice, iso, &mut lobes.buffers)
        .map_err(draw);
    if let Some(c) = clock {
        let t = &mut c.times;
        t.extractions += 1;
        t.pass_record_seconds += (t1 - t0).as_secs_f64();
        t.extract_seconds += t1.elapsed().as_secs_f64();
        t.counter_wait_seconds += lobes.buffers.counter_wait.as_secs_f64();
        if stamps.is_some() && made.is_ok() {
            c.used += 3;
        }
    }
    made
}

impl SceneSync {
    /// True when `f`'s colours at its vertices are computed on the render device (the potential
    /// of point charges on surfaces extracted there).
    fn colors_on_device(&self, f: &FieldRep) -> bool {
        self.vp.is_some() && self.mc.is_some() && f.coloring.is_some_and(|c| c.source.is_potential())
    }
}

/// The potential of the current frame's charges at the vertices of `lobes` (extracted on the render
/// device), computed there when its surfaces or its colouring changed; `None` while the surfaces
/// shown are of another frame than the charges (they are drawn in their plain colours until theirs
/// arrive).
fn potential_on_device(
    rc: &RenderContext,
    vp: &VertexPotential,
    state: &AppState,
    f: &FieldRep,
    lobes: &mut GpuLobes,
) -> Result<Option<[VertexValues; 2]>, String> {
    let (Some(revision), Some(meshes), Some(coloring)) = (lobes.revision, lobes.meshes.as_ref(), f.coloring) else {
        return Ok(None);
    };
    let key = (revision, coloring.source, state.esp.revision);
    if let Some((values, k)) = &lobes.values
        && *k == key
    {
        return Ok(Some(values.clone()));
    }
    let Some(doc) = state.document() else {
        return Ok(None);
    };
    let shown_frame = f.pipeline.shown_key().map(|k| k.frame);
    if shown_frame != Some(doc.frame_index) {
        return Ok(None);
    }
    let screened = !state.vertex_charges_model().dielectric.is_vacuum();
    let Some(q) = doc.point_charges_at(coloring.source, doc.frame_index, &doc.frame, screened) else {
        return Ok(None);
    };
    let positions: Vec<[f32; 3]> = q
        .positions_bohr
        .iter()
        .map(|p| crate::model::units::angstrom_from_bohr3(*p).map(|x| x as f32))
        .collect();
    let charges_e: Vec<f32> = q.charges_e.iter().map(|&c| c as f32).collect();
    let charges = match lobes.charges.take() {
        Some(c) => c.update(&rc.device, &rc.queue, &positions, &charges_e),
        None => GpuCharges::upload(&rc.device, &positions, &charges_e),
    }
    .map_err(|e| e.to_string())?;
    let previous = lobes.values.take().map(|(v, _)| v);
    let [p0, p1] = previous.map_or([None, None], |[a, b]| [Some(a), Some(b)]);
    let values = [
        VertexValues::reuse_or_new(&rc.device, p0, meshes[0].capacity.vertices),
        VertexValues::reuse_or_new(&rc.device, p1, meshes[1].capacity.vertices),
    ];
    let mut encoder = rc.device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
        label: Some("orbitfield surface potentials"),
    });
    // The model's kernel, sampled at the offset along the normals the option asks for.
    let model = state.vertex_charges_model();
    let g = model.dielectric.gpu_angstrom();
    let screen = VertexScreening {
        model: g.model,
        a: g.a as f32,
        b_per_angstrom: g.b as f32,
        offset_angstrom: model.offset_angstrom,
    };
    for (m, v) in meshes.iter().zip(&values) {
        vp.encode_screened(&rc.device, &mut encoder, m, &charges, v, screen)
            .map_err(|e| e.to_string())?;
    }
    rc.queue.submit([encoder.finish()]);
    lobes.charges = Some(charges);
    lobes.values = Some((values.clone(), key));
    Ok(Some(values))
}

/// Surfaces from the CPU meshes the representations hold.
fn cpu_surfaces(rc: &RenderContext, scene: &mut GpuScene, state: &AppState) {
    let flip_main = state.follow_flips_sign();
    let main = state.followed_rep_id();
    let mut inputs: Vec<(MeshInput<'_>, MeshStyle)> = Vec::new();
    for rep in &state.doc.reps.list {
        let RepKind::Field(f) = &rep.kind else {
            continue;
        };
        if !rep.visible || !f.is_surface() {
            continue;
        }
        let styles = lobe_styles(f, flip_main && Some(rep.id) == main);
        // Coloured by a potential at the vertices: its values there (until they arrive, the
        // previous frame's surface with its colours, or none).
        let (lobes, values) = f.drawn_lobes();
        for (k, (m, style)) in lobes.iter().zip(styles).enumerate() {
            if let Some(m) = m {
                let mut input = mesh_input(m);
                if let Some(colors) = f.lobe_atom_colors(k, m) {
                    input.colors_rgba8 = colors;
                }
                if f.colors_by_vertex_values() {
                    input.values = values
                        .and_then(|v| v.get(k))
                        .and_then(|v| v.as_deref())
                        .map_or(&[], |v| v.as_slice());
                }
                inputs.push((input, style));
            }
        }
    }
    inputs.extend(cartoon_meshes(state));
    scene.set_meshes(rc, &inputs);
}

fn mesh_input(m: &MeshData) -> MeshInput<'_> {
    MeshInput {
        positions_angstrom: &m.positions_angstrom,
        normals: &m.normals,
        indices: &m.indices,
        values: &m.values,
        colors_rgba8: &m.colors_rgba8,
    }
}

/// The meshes of the visible cartoon representations (coloured per vertex, opaque): those coloured
/// by a field with their values at the vertices once they have arrived (the mesh they are of), in
/// their own colours before.
fn cartoon_meshes(state: &AppState) -> Vec<(MeshInput<'_>, MeshStyle)> {
    state
        .doc
        .reps
        .cartoons()
        .filter(|(r, _)| r.visible)
        .filter_map(|(_, c)| match c.pipeline.values().filter(|_| c.color_by.is_some()) {
            Some((_, mesh, values)) => Some(MeshInput {
                values,
                colors_rgba8: &[],
                ..mesh_input(mesh)
            }),
            None => c
                .pipeline
                .shown
                .as_ref()
                .and_then(|(_, m)| m.mesh())
                .map(|m| mesh_input(m)),
        })
        .map(|m| (m, CARTOON_STYLE))
        .collect()
}

impl AppState {
    /// The range meshes' values at their vertices are drawn over (one per picture), with the field
    /// they are of: the first visible surface coloured by a potential at its vertices (of charges,
    /// or a wavefunction's own), else the first visible cartoon coloured by a field.
    pub fn vertex_value_range(&self) -> Option<(FieldChoice, [f32; 2])> {
        let surface = self.doc.reps.fields().find_map(|(r, f)| {
            let c = f
                .coloring
                .filter(|_| r.visible && f.is_surface() && f.colors_by_vertex_values())?;
            Some((c.source, c.range?))
        });
        surface.or_else(|| {
            self.doc
                .reps
                .cartoons()
                .filter(|(r, _)| r.visible)
                .find_map(|(_, c)| Some((c.color_by?.source, c.color_by?.range?)))
        })
    }

    /// What the colour legends show: the drawn slice (its colormap range, in the field's unit),
    /// surfaces coloured by a field, and cartoons coloured by a field when no surface's colours
    /// take the picture's range.
    pub fn legends(&self) -> Vec<Legend> {
        let mut out = Vec::new();
        let colormap = self.settings.colormap;
        if let Some(f) = self.doc.reps.drawn_slice()
            && let Some((key, grid)) = f.pipeline.shown.as_ref()
            && let Some([lo, hi]) = self.slice_range(f, grid)
        {
            let unit = self.field_unit(key.field);
            let what = with_model(&self.describe_field(key.field), self.potential_model(key.field, true));
            out.push(Legend {
                title: format!("{what}, slice"),
                range: [unit.show(lo), unit.show(hi)],
                unit: unit.label,
                colormap: colormap.for_values(self.is_electrostatic(key.field)),
                solid_rgb: None,
                lobes: None,
            });
        }
        out.extend(self.ils_legends());
        let surface = self.doc.reps.fields().find_map(|(r, f)| {
            let c = f
                .coloring
                .filter(|c| r.visible && f.is_surface() && c.range.is_some())?;
            let how = if f.colors_by_vertex_values() {
                " at its vertices"
            } else if f.colors_from_lattice() {
                ", trilinear from a lattice"
            } else {
                ""
            };
            Some((c, how))
        });
        // Colours still in flight: the legend says so, or a grey surface would read as "near zero".
        let computing = self.view.vertex_values.as_ref().is_some_and(|w| w.any_in_flight()) || self.pb.solving();
        let cancelled = self.doc.reps.fields().any(|(r, f)| r.visible && f.colours_cancelled());
        // A previous frame's coloured surface drawn meanwhile (`FieldRep::drawn_lobes`) is named.
        let previous = self
            .doc
            .reps
            .fields()
            .find_map(|(r, f)| f.previous_colors_frame().filter(|_| r.visible && f.is_surface()));
        let previous_parameters = self
            .doc
            .reps
            .fields()
            .any(|(r, f)| r.visible && f.is_surface() && f.shows_previous_pb_parameters());
        out.extend(
            surface
                .and_then(|(c, how)| self.coloring_legend("surface", c, how))
                .map(|mut l| {
                    match previous {
                        _ if previous_parameters => l.title.push_str(if self.pb.solving() {
                            " (the previous parameters' colours until the new solve ends…)"
                        } else {
                            " (the previous parameters' colours: the new ones have no solution)"
                        }),
                        Some(frame) => l
                            .title
                            .push_str(&format!(" (frame {frame} shown while the colours are computed…)")),
                        None if computing => l.title.push_str(" (computing the colours…)"),
                        None if cancelled => l.title.push_str(" (colouring cancelled)"),
                        None => {}
                    }
                    l
                }),
        );
        let surface_values = self
            .doc
            .reps
            .fields()
            .any(|(r, f)| r.visible && f.is_surface() && f.colors_by_vertex_values());
        // A cartoon's legend once its values are in: until then it shows its secondary-structure
        // colours, which a potential's colour bar beside it would misname.
        let cartoon = self
            .doc
            .reps
            .cartoons()
            .find_map(|(r, c)| c.color_by.filter(|_| r.visible && c.pipeline.colored.is_some()));
        out.extend(self.lobe_legends());
        out.extend(self.bfactor_legend());
        if !surface_values {
            // A cartoon's potential is evaluated at its vertices; a volume is sampled there.
            out.extend(cartoon.and_then(|c| {
                let how = if matches!(c.source, FieldChoice::Volume(_)) {
                    ""
                } else {
                    " at its vertices"
                };
                self.coloring_legend("cartoon", c, how)
            }));
        }
        out
    }

    /// The legend of `what` ("surface", "cartoon") coloured by `c` (`how`: where its values come
    /// from, e.g. " at its vertices"), once it has a range.
    fn coloring_legend(&self, what: &str, c: super::reps::SurfaceColoring, how: &str) -> Option<Legend> {
        let [lo, hi] = c.range?;
        let unit = self.coloring_unit(c.source);
        // What was summed and how, in the words of the field (`potential_model`).
        let source = with_model(
            &self.describe_field(c.source),
            self.potential_model(c.source, how.contains("lattice")),
        );
        Some(Legend {
            title: format!("{what} coloured by {source}{how}"),
            range: [unit.show(lo), unit.show(hi)],
            unit: unit.label,
            colormap: self.settings.colormap.for_values(self.is_electrostatic(c.source)),
            solid_rgb: None,
            lobes: None,
        })
    }

    /// The key of what representation `id` shows, if anything.
    pub fn shown_key(&self, id: RepId) -> Option<FieldKey> {
        self.doc.reps.field(id)?.pipeline.shown.as_ref().map(|(k, _)| *k)
    }
}

/// A field's name with the model it was computed in, for a legend: the model replaces the name's
/// own parenthesis ("potential (Poisson-Boltzmann)" becomes "potential (Poisson-Boltzmann, 0.15 M,
/// eps 2/78.5)", not a second parenthesis after the first).
fn with_model(name: &str, model: Option<String>) -> String {
    match model {
        Some(m) => {
            let base = name.split_once(" (").map_or(name, |(b, _)| b);
            format!("{base} ({m})")
        }
        None => name.to_string(),
    }
}
