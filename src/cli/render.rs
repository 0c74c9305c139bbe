//! `orbitfield render FILE... -o out.png|dir/`: draws structures, fields and their colour legends
//! to PNG files without a window, on any wgpu adapter (software Vulkan included), through the
//! viewer's representation list and draw stage: `--rep` atoms by selection, `--field` isosurfaces
//! and `--slice` slices (repeated), or a saved `--session`. A frame range is dealt over the ranks of
//! an MPI job when started by `mpirun` (see `batch`).

use anyhow::{Context, Result, anyhow, bail};
use glam::Vec3;
use orbitfield::app::atoms::AtomColoring;
use orbitfield::app::draw::SceneSync;
use orbitfield::app::fields::{FieldChoice, FieldService, InlineBackend};
use orbitfield::app::reps::spec::parse_atom_rep;
use orbitfield::app::reps::{FieldStyle, RepEdit, RepId, RepKind, RepSpec, SpecKind};
use orbitfield::app::session::Session;
use orbitfield::app::settings::Settings;
use orbitfield::app::slice::SlicePlane;
use orbitfield::app::state::{AppState, Command};
use orbitfield::app::values::{FieldUnit, PotentialDisplay, format_number};
use orbitfield::batch::{self, Ranks, StagedFiles};
use orbitfield::render::camera::ViewAxis;
use orbitfield::render::{GpuScene, OffscreenTarget, RenderContext};
use std::path::PathBuf;

use super::render_parse::{parse_color_range, parse_colormap};
pub use super::render_parse::{parse_range, parse_size};

#[derive(clap::Args, Debug)]
pub struct RenderArgs {
    /// Files that together form one system (as for `info`); not needed with --session.
    #[arg(required_unless_present = "session")]
    pub files: Vec<PathBuf>,
    /// Output: a .png file for one frame, or a directory for a frame range (not needed with --movie).
    #[arg(short, long, required_unless_present = "movie")]
    pub output: Option<PathBuf>,
    /// A session file (File > Save session in the viewer): its files, representations, frame and
    /// camera. --rep, --field and --slice add to its representations.
    #[arg(long, value_name = "FILE")]
    pub session: Option<PathBuf>,
    /// An atom representation "SELECTION:STYLE[:COLOURING]" (STYLE: lines, licorice,
    /// ball-and-stick, vdw, cpk, hbonds; COLOURING: element, residue, chain, charge, beta, or a colour:
    /// a name or #rrggbb), or the polymer residues of the selection as STYLE cartoon, tube or trace
    /// (COLOURING: ss, the default, chain, residue, index, beta (the CA's B-factor), a colour; or
    /// esp: the potential of the frame's charges at each vertex of the mesh, in --potential-unit; or
    /// volume:N: the N-th volume of the files sampled there), repeated for more.
    /// Without any, the atoms are drawn as the viewer draws a new document (by its content).
    #[arg(long, value_name = "SEL:STYLE[:COLOURING]")]
    pub rep: Vec<String>,
    /// A field drawn as isosurfaces, repeated for more (each its own colour pair): homo, lumo, the
    /// orbital syntax of `grid` (mo:homo-1, mo:beta:lumo, mo:17), density, spin, esp (a wavefunction's
    /// own electrostatic potential, hartree/e), potential (of the structure's charges),
    /// potential:mean:N, volume[:N] (a volume read from the files, 1-based).
    #[arg(long, value_name = "FIELD")]
    pub field: Vec<String>,
    /// A surface drawn as a representation: molsurf (the Gaussian molecular surface of the atoms
    /// --sel picks, recomputed per frame on a lattice that follows them) or ses (their
    /// solvent-excluded surface, a 1.4 A probe).
    #[arg(long, value_name = "KIND")]
    pub surface: Option<String>,
    /// The atoms of --surface (selection language, e.g. "protein") [default: all].
    #[arg(long, value_name = "SELECTION", requires = "surface")]
    pub sel: Option<String>,
    /// A field drawn as a slice through the middle of its lattice (normal z), with a colour legend.
    #[arg(long, value_name = "FIELD")]
    pub slice: Vec<String>,
    /// Isovalue of every --field, in the unit the field is shown in (a.u. for orbitals and
    /// densities and a wavefunction's potential, --potential-unit for potentials of charges, file
    /// units for volumes); default: by field kind (orbitals 0.05, densities 0.002, a wavefunction's
    /// potential 0.03, potentials of charges 1 kT/e).
    #[arg(long, allow_negative_numbers = true)]
    pub iso: Option<f32>,
    /// Read --iso as a fraction of each field's largest |value|.
    #[arg(long)]
    pub relative: bool,
    /// The unit potentials are shown in: kT/e (at 300 K), kcal/mol/e, V or a.u. (hartree/e).
    #[arg(long, default_value = "kT/e")]
    pub potential_unit: String,
    /// Frame to draw (0-based).
    #[arg(long, conflicts_with = "frames")]
    pub frame: Option<usize>,
    /// Frame range A:B or A:B:S (0-based, B excluded, every S-th) drawn into the output directory or
    /// --movie.
    #[arg(long)]
    pub frames: Option<String>,
    /// Image size WxH in pixels.
    #[arg(long, default_value = "1024x768")]
    pub size: String,
    /// View direction: front, back, top, right.
    #[arg(long, default_value = "front")]
    pub camera: String,
    /// Extra rotation "YAW,PITCH" in degrees after the view direction.
    #[arg(long)]
    pub rotate: Option<String>,
    /// Multiplies the framing distance (below 1 zooms in).
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    pub zoom: f32,
    /// All atoms in one style (cpk, vdw, ball-and-stick, licorice, lines) instead of the defaults;
    /// ignored with --rep.
    #[arg(long)]
    pub style: Option<String>,
    /// Colouring of --style: element, residue, chain, charge, beta (B-factor); or esp: the --surface or first
    /// --field's surfaces (default: the density) coloured by each frame's potential evaluated exactly
    /// at each vertex (the wavefunction's own: the ESP-on-density picture; else that of the
    /// structure's charges), in --potential-unit; or volume:N: the surfaces coloured by the N-th
    /// volume of the files (as --color-volume); or pb: the surfaces coloured by the
    /// Poisson-Boltzmann potential of the first frame's charges and radii (`grid pb`'s model and
    /// defaults, kT/e, default range +-5), trilinear from its lattice at each vertex.
    /// With --surface, a scheme (or a colour) given here colours the surface by its atoms too: each
    /// point as the atom whose sphere lies nearest it. Default: element (the surface in its own colour).
    #[arg(long)]
    pub color_by: Option<String>,
    #[command(flatten)]
    pub screening: super::dielectric::DielectricArgs,
    /// --color-by pb: spacing of the Poisson-Boltzmann lattice in Angstrom.
    #[arg(long, default_value_t = 0.5, allow_negative_numbers = true)]
    pub pb_spacing: f64,
    /// --color-by pb: where to solve: cpu, cuda (a CUDA device or a failure), wgpu (a wgpu adapter,
    /// software ones included, or a failure), gpu (CUDA, else a hardware wgpu adapter) or auto.
    #[arg(long, value_enum, default_value_t = orbitfield::compute::placement::DeviceChoice::Auto)]
    pub pb_device: orbitfield::compute::placement::DeviceChoice,
    /// White background instead of black.
    #[arg(long)]
    pub light: bool,
    /// Surface opacity 0..1 (below 1 uses order-independent transparency).
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    pub opacity: f32,
    /// Colour the first field's surfaces by the N-th volume of the files (1-based), e.g. a
    /// potential map on a density surface.
    #[arg(long, value_name = "N")]
    pub color_volume: Option<usize>,
    /// Values LO,HI at the colormap's ends, in the unit the legend shows: for --color-volume and
    /// volume:N the file's (kT/e for an APBS map), for --color-by esp and cartoons coloured by esp
    /// --potential-unit (kcal/mol/e at --dielectric 4r), for --color-by pb kT/e (default: the
    /// model's range, +-10 kcal/mol/e at 4r and +-5 kT/e for Debye-Hueckel or PB; else symmetric
    /// about 0 from the values on the surface or cartoon).
    #[arg(long, value_name = "LO,HI", allow_negative_numbers = true)]
    pub color_range: Option<String>,
    /// Colormap of slices and coloured surfaces: diverging (blue-white-red; potentials always
    /// red-white-blue: negative red, zero white, positive blue), red-white-blue, viridis or gray
    /// [default: diverging].
    #[arg(long)]
    pub colormap: Option<String>,
    /// Leave the colour legends of slices and coloured surfaces out of the image.
    #[arg(long)]
    pub no_legend: bool,
    /// The atoms the wavefunction files describe, when they are the QM region of an MD system
    /// (selection language, e.g. "resname THR"); without it the region is found by geometry.
    #[arg(long, value_name = "SELECTION")]
    pub qm_region: Option<String>,
    /// Write the frames of --frames (default: all) as a movie: FILE.mp4 (H.264 baseline, 4:2:0,
    /// plays in slide software and browsers; --size rounded down to even sides) or, for any other
    /// name, a new folder of PNG frames. Encoded in the program itself (no ffmpeg).
    #[arg(long, value_name = "FILE.mp4", conflicts_with = "output")]
    pub movie: Option<PathBuf>,
    /// Frames per second of --movie.
    #[arg(long, default_value_t = 24.0, requires = "movie", allow_negative_numbers = true)]
    pub fps: f32,
    /// Every N-th frame of the range is drawn (A:B:S in --frames says the same).
    #[arg(long, default_value_t = 1)]
    pub step: usize,
    /// Fit each frame onto frame 0 by these atoms before drawing it, as the viewer's "Fit frames to
    /// frame 0" (a selection, or nothing for a protein's C-alpha atoms, else the heavy atoms).
    #[arg(long, value_name = "SEL", num_args = 0..=1, default_missing_value = "")]
    pub fit: Option<String>,
}

fn encode_png(img: &image::RgbaImage) -> Result<Vec<u8>> {
    let mut png = Vec::new();
    img.write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)?;
    Ok(png)
}

/// The representations the arguments ask for.
fn arg_specs(args: &RenderArgs) -> Result<(Vec<RepSpec>, Vec<RepSpec>)> {
    let mut atoms = Vec::new();
    for r in &args.rep {
        atoms.push(parse_atom_rep(r).map_err(|e| anyhow!("--rep {e}"))?);
    }
    let color_esp = colors_by_esp(args);
    if atoms.is_empty()
        && let Some(style) = &args.style
    {
        let surface_colouring =
            color_esp || colors_by_pb(args) || color_by(args).trim().to_ascii_lowercase().starts_with("volume:");
        let coloring = if surface_colouring { "element" } else { color_by(args) };
        let text = format!("all:{style}:{coloring}");
        atoms.push(parse_atom_rep(&text).map_err(|e| anyhow!("--style/--color-by {e}"))?);
    }
    if let Some(v) = args.iso
        && !(v.is_finite() && v > 0.0)
    {
        bail!("--iso: expected a positive number, found {v}");
    }
    let mut fields = Vec::new();
    if let Some(kind) = &args.surface {
        let head = kind.trim().to_ascii_lowercase();
        if !matches!(head.as_str(), "molsurf" | "ses") {
            bail!("--surface: expected molsurf or ses, found {kind:?}");
        }
        let text = match &args.sel {
            Some(sel) => format!("{head}:{sel}"),
            None => head,
        };
        let mut spec = RepSpec::field(&text, FieldStyle::Isosurface);
        if let SpecKind::Field {
            opacity, color_atoms, ..
        } = &mut spec.kind
        {
            *opacity = args.opacity.clamp(0.05, 1.0);
            *color_atoms = args.color_by.as_deref().and_then(AtomColoring::parse);
        }
        fields.push(spec);
    }
    let density = ["density".to_string()];
    let surfaces: &[String] = if color_esp && args.field.is_empty() && args.surface.is_none() {
        &density
    } else {
        &args.field
    };
    for f in surfaces {
        let mut spec = RepSpec::field(f, FieldStyle::Isosurface);
        if let SpecKind::Field { opacity, .. } = &mut spec.kind {
            *opacity = args.opacity.clamp(0.05, 1.0);
        }
        fields.push(spec);
    }
    for f in &args.slice {
        fields.push(RepSpec::field(f, FieldStyle::Slice(SlicePlane::default())));
    }
    Ok((atoms, fields))
}

/// --color-by as given, else element.
fn color_by(args: &RenderArgs) -> &str {
    args.color_by.as_deref().unwrap_or("element")
}

/// True for `--color-by pb` (the surfaces by the first frame's Poisson-Boltzmann potential).
fn colors_by_pb(args: &RenderArgs) -> bool {
    color_by(args).trim().eq_ignore_ascii_case("pb")
}

/// The default colour range of `--color-by pb` (kT/e), as APBS users look at it.
const PB_RANGE_KT_PER_E: [f32; 2] = [-5.0, 5.0];

/// True for `--color-by esp` (the surfaces by the frame's potential, not the atoms).
fn colors_by_esp(args: &RenderArgs) -> bool {
    color_by(args).trim().eq_ignore_ascii_case("esp")
}

/// The colouring field text of a cartoon representation coloured by a field (`esp`, `volume:N`).
fn cartoon_color_by(spec: &RepSpec) -> Option<&str> {
    match &spec.kind {
        SpecKind::Cartoon { color_by, .. } => color_by.as_deref(),
        SpecKind::Atoms { .. } | SpecKind::Field { .. } => None,
    }
}

/// The volume (1-based) of `--color-by volume:N`, else --color-volume.
fn color_volume(args: &RenderArgs) -> Result<Option<usize>> {
    let text = color_by(args).trim().to_ascii_lowercase();
    let Some(n) = text.strip_prefix("volume:") else {
        return Ok(args.color_volume);
    };
    if args.color_volume.is_some() {
        bail!("--color-by volume:N and --color-volume both colour the surfaces; give one");
    }
    let n: usize = n
        .parse()
        .with_context(|| format!("--color-by: expected volume:N, found {:?}", color_by(args)))?;
    Ok(Some(n))
}

fn spec_style(spec: &RepSpec) -> FieldStyle {
    match &spec.kind {
        SpecKind::Field { style, .. } => *style,
        SpecKind::Atoms { .. } | SpecKind::Cartoon { .. } => FieldStyle::Isosurface,
    }
}

pub fn run(args: &RenderArgs) -> Result<()> {
    let mut size = parse_size(&args.size)?;
    if let Some(why) = args
        .movie
        .as_deref()
        .and_then(orbitfield::io::write::movie::MovieFormat::refused)
    {
        anyhow::bail!("--movie {why}");
    }
    let movie_format = args
        .movie
        .as_deref()
        .map(orbitfield::io::write::movie::MovieFormat::from_path);
    if movie_format == Some(orbitfield::io::write::movie::MovieFormat::Mp4) {
        // H.264 in 4:2:0 needs even sides.
        size = size.map(|s| (s / 2 * 2).max(2));
    }
    let axis = match args.camera.to_ascii_lowercase().as_str() {
        "front" => ViewAxis::Front,
        "back" => ViewAxis::Back,
        "top" => ViewAxis::Top,
        "right" => ViewAxis::Right,
        other => bail!("--camera: expected front, back, top or right, found {other:?}"),
    };
    let rotate = match &args.rotate {
        Some(r) => {
            let (a, b) = r
                .split_once(',')
                .ok_or_else(|| anyhow!("--rotate: expected YAW,PITCH, found {r:?}"))?;
            [a.trim().parse::<f32>()?, b.trim().parse::<f32>()?]
        }
        None => [0.0, 0.0],
    };
    let potential_unit = PotentialDisplay::parse(&args.potential_unit).ok_or_else(|| {
        anyhow!(
            "--potential-unit: expected kT/e, kcal/mol/e, V or a.u., found {:?}",
            args.potential_unit
        )
    })?;
    let (atom_specs, field_specs) = arg_specs(args)?;
    let settings = Settings {
        dark_background: !args.light,
        colormap: match &args.colormap {
            Some(c) => parse_colormap(c)?,
            None if colors_by_esp(args)
                || colors_by_pb(args)
                || atom_specs
                    .iter()
                    .filter_map(cartoon_color_by)
                    .any(|c| orbitfield::app::reps::spec::cartoon_color_field(c) == Some(FieldChoice::Potential)) =>
            {
                orbitfield::render::colormap::Colormap::RedWhiteBlue
            }
            None => orbitfield::render::colormap::Colormap::Diverging,
        },
        potential_unit,
        ..Settings::default()
    };
    // Fields are computed on this thread as each frame is drawn (the CPU reference engine).
    let backend = orbitfield::app::blocking_engine()
        .map(|e| Box::new(InlineBackend::new(e)) as Box<dyn orbitfield::app::fields::FieldBackend>);
    let mut state = AppState::new(
        settings,
        FieldService::new(backend, orbitfield::app::default_extractor()),
    );
    state.view.size_px = size;
    let ranks = Ranks::from_environment()?;
    let session = args.session.as_deref().map(Session::load).transpose()?;
    if colors_by_pb(args) && session.is_some() {
        bail!("--color-by pb takes the structure's files, not --session");
    }
    // --color-by pb: the potential joins the files' volumes; its number and the legend's title.
    let mut pb_volume: Option<(usize, String)> = None;
    match &session {
        Some(s) => {
            state.apply_session(s);
            if args.screening.given() {
                state.apply(Command::SetEspModel(screening_model(args)?));
            }
            wait_for_ils_maps(&mut state)?;
            if args.light {
                state.settings.dark_background = false;
            }
        }
        None => {
            let (system, region) = super::agreed(
                &ranks,
                orbitfield::io::load_with(
                    &args.files,
                    &orbitfield::io::LoadOptions {
                        qm_region: args.qm_region.clone(),
                    },
                )
                .map_err(anyhow::Error::from),
            )?;
            super::say_load_notes(&system.warnings);
            let mut system = system;
            if colors_by_pb(args) {
                let (grid, legend) = super::pb::volume(
                    &mut system,
                    args.pb_spacing,
                    &super::device::DeviceArgs {
                        device: args.pb_device,
                        verbose: false,
                    },
                )
                .context("--color-by pb")?;
                system.grids.push(grid);
                pb_volume = Some((system.grids.len(), legend));
            }
            let name = args.files.first().map(|p| p.display().to_string()).unwrap_or_default();
            state.open_system_with_qm_region(name, system, region);
            // The command line's esp is the vacuum Coulomb sum (`--color-by pb` solves
            // Poisson-Boltzmann); the viewer's default model is not.
            state.esp.model = orbitfield::app::esp_model::EspModel::Vacuum;
            if args.screening.given() {
                state.esp.model = screening_model(args)?;
            }
            // Fields only where asked for; atoms as asked for, else the defaults.
            let drop: Vec<RepId> = state
                .reps()
                .list
                .iter()
                .filter(|r| matches!(r.kind, RepKind::Field(_)) || !atom_specs.is_empty())
                .map(|r| r.id)
                .collect();
            for id in drop {
                state.apply(Command::DeleteRep(id));
            }
        }
    }
    let n_frames = state
        .document()
        .ok_or_else(|| anyhow!("{}", state.panels.status))?
        .n_frames
        .max(1);
    let color_range = args.color_range.as_deref().map(parse_color_range).transpose()?;
    let mut cartoons_coloured = false;
    for spec in &atom_specs {
        let id = state.add_rep(spec).map_err(|e| anyhow!("--rep {e}"))?;
        if cartoon_color_by(spec).is_some() {
            // Files that cannot colour it leave the cartoon in its own colours, with a message.
            match state.reps().get(id).map(|r| &r.kind) {
                Some(RepKind::Cartoon(c)) if c.color_by.is_some() => {
                    cartoons_coloured = true;
                    if let Some(range) = color_range {
                        let source = c.color_by.map(|k| k.source);
                        if let Some(source) = source {
                            let range = computed_range(&state, source, range);
                            state.apply(Command::EditRep(id, RepEdit::ColorBy(Some((source, Some(range))))));
                        }
                    }
                }
                _ => eprintln!("warning: --rep {}", state.panels.status),
            }
        }
    }
    for spec in &field_specs {
        let id = state.add_rep(spec).map_err(|e| anyhow!("--field {e}"))?;
        if let (Some(v), Some(field), FieldStyle::Isosurface) =
            (args.iso, state.reps().field(id).map(|f| f.field), spec_style(spec))
        {
            // --iso is in the unit the field is shown in.
            let value = if args.relative {
                v
            } else {
                FieldUnit::of(field, potential_unit).computed(f64::from(v))
            };
            state.apply(Command::EditRep(id, RepEdit::IsoRelative(args.relative)));
            state.apply(Command::EditRep(id, RepEdit::IsoValue(value)));
        }
    }
    if let Some(text) = &args.fit {
        let selection = Some(text.trim().to_string()).filter(|t| !t.is_empty());
        let errors = state.panels.error_count;
        state.apply(Command::FitFrames(Some(selection)));
        if state.panels.error_count != errors {
            bail!("--{}", state.panels.status);
        }
    }
    let mut color_volume = color_volume(args)?;
    if let Some((n, _)) = &pb_volume {
        if color_volume.is_some() {
            bail!("--color-by pb and --color-volume both colour the surfaces; give one");
        }
        color_volume = Some(*n);
    }
    if colors_by_esp(args) {
        if color_volume.is_some() {
            bail!("--color-by esp and --color-volume both colour the surfaces; give one");
        }
        // Computed with each frame's field by the representation's colour slot: the wavefunction's
        // own potential where there is one, else that of the structure's charges.
        let doc = state.document().ok_or_else(|| anyhow!("{}", state.panels.status))?;
        let source = orbitfield::app::reps::spec::parse_field("esp", doc).map_err(|e| anyhow!("--color-by {e}"))?;
        color_surfaces(&mut state, source, "--color-by esp", args, None)?;
    } else if args.color_range.is_some() && color_volume.is_none() && !cartoons_coloured {
        bail!("--color-range applies to --color-volume, --color-by esp and cartoons coloured by a field");
    }
    let frames: Vec<usize> = match (&args.frames, args.frame) {
        (None, None) if args.movie.is_some() => (0..n_frames).step_by(args.step.max(1)).collect(),
        (Some(r), _) => {
            let (r, step) = parse_range(r)?;
            if r.end > n_frames {
                bail!("--frames {}:{}: the files have {n_frames} frames", r.start, r.end);
            }
            r.step_by(step.unwrap_or(args.step).max(1)).collect()
        }
        (None, Some(f)) if f >= n_frames => {
            bail!("--frame {f}: the files have {n_frames} frames (0..{})", n_frames - 1)
        }
        (None, Some(f)) => vec![f],
        (None, None) => vec![session.as_ref().map_or(0, |s| s.frame.min(n_frames - 1))],
    };
    let output = args.output.clone().unwrap_or_default();
    if args.movie.is_none()
        && let Some(problem) = orbitfield::app::export::not_png_problem(&output)
    {
        bail!("-o {problem}; for several frames give a folder");
    }
    let to_dir =
        args.movie.is_none() && (frames.len() > 1 || output.extension().is_none_or(|e| !e.eq_ignore_ascii_case("png")));
    if to_dir {
        std::fs::create_dir_all(&output).with_context(|| format!("cannot create {}", output.display()))?;
    }

    let rc = RenderContext::headless(4)?;
    let mut scene = GpuScene::new(&rc);
    let mut sync = SceneSync::new(&rc);
    // Cartoon meshes written on the render device where the viewer would write them there.
    state.view.gpu_cartoons = sync.writes_cartoons() && rc.capabilities.gpu_cartoons();
    let target = OffscreenTarget::new(&rc, size);
    state.apply(Command::SetFrame(frames[0]));
    if session.as_ref().is_none_or(|s| s.camera.is_none()) {
        let camera = &mut state.view.camera;
        camera.set_view_axis(axis);
        camera.orbit(rotate[0].to_radians(), rotate[1].to_radians());
        let aspect = size[0] as f32 / size[1] as f32;
        let (center, radius) = state
            .scene_sphere()
            .ok_or_else(|| anyhow!("nothing to draw: the files have no atoms"))?;
        let camera = &mut state.view.camera;
        camera.fit_to_sphere(Vec3::from(center), radius, aspect);
        camera.zoom(args.zoom);
    }
    let mut coloured = false;
    let mut view = FrameDrawer {
        rc: &rc,
        scene: &mut scene,
        sync: &mut sync,
        target: &target,
        color_volume,
        pb_legend: pb_volume.map(|(_, legend)| legend),
        coloured: &mut coloured,
        legend_corner: None,
    };
    if let (Some(path), Some(format)) = (&args.movie, movie_format) {
        if ranks.size() > 1 {
            bail!("--movie: the frames are encoded in order by one process; run it without mpirun");
        }
        return write_movie(&mut state, &mut view, &frames, path, format, size, args);
    }
    // Under MPI each rank draws its share of the frames (the camera is fitted to the first frame of
    // the whole range on every rank, so each image is the one a single process draws); files are
    // renamed into place only when every rank succeeded.
    let mut staged = StagedFiles::new();
    let mut work = |block: &[usize]| -> Result<(), String> {
        for &f in block {
            let mut draw = || -> Result<()> {
                let img = view.draw(&mut state, f, args)?;
                let path = if to_dir {
                    output.join(super::grid::frame_file_name(f, "png"))
                } else {
                    output.clone()
                };
                let png = encode_png(&img)?;
                staged
                    .write(&path, &png)
                    .with_context(|| format!("cannot write {}", path.display()))
            };
            draw().map_err(|e| format!("frame {f}: {e:#}"))?;
        }
        Ok(())
    };
    let result = batch::run_frames(&ranks, &frames, &mut work, &mut |_| {});
    ranks.agree(result.map(|_| ()))?;
    let committed = staged.commit();
    let written = match &committed {
        Ok(paths) => paths.clone(),
        Err(_) => Vec::new(),
    };
    ranks.agree(committed.map(|_| ()).map_err(|e| format!("renaming the images: {e}")))?;
    for path in written {
        println!("{}", path.display());
    }
    for legend in state.legends() {
        let legend = view.named(&legend);
        eprintln!(
            "legend: {} from {} to {} {}",
            legend.title,
            format_number(legend.range[0]),
            format_number(legend.range[1]),
            legend.unit
        );
    }
    Ok(())
}

/// What draws one frame of the view into pixels (the same for images and movies).
struct FrameDrawer<'a> {
    rc: &'a RenderContext,
    scene: &'a mut GpuScene,
    sync: &'a mut SceneSync,
    target: &'a OffscreenTarget,
    color_volume: Option<usize>,
    /// The legend title of `--color-by pb` (the model), which colours through `color_volume`.
    pb_legend: Option<String>,
    coloured: &'a mut bool,
    /// Where the legends go: the first image's emptiest corner, kept for the frames after it.
    legend_corner: Option<orbitfield::app::export::legend::Corner>,
}

impl FrameDrawer<'_> {
    /// `legend`, or for the surface coloured by `--color-by pb` the same named by its model.
    fn named(&self, legend: &orbitfield::app::values::Legend) -> orbitfield::app::values::Legend {
        let mut out = legend.clone();
        if let (Some(title), Some(n)) = (&self.pb_legend, self.color_volume)
            && legend.title.contains(&format!("volume {n}"))
        {
            out.title = format!("surface: {title}");
            out.unit = "kT/e".into();
        }
        out
    }

    /// Shows frame `f` (fields computed on this thread), draws it and reads it back, legends in.
    fn draw(&mut self, state: &mut AppState, f: usize, args: &RenderArgs) -> Result<image::RgbaImage> {
        state.apply(Command::SetFrame(f));
        show_fields(state, f)?;
        if let Some(n) = self.color_volume
            && !*self.coloured
        {
            let count = state.document().map_or(0, |d| d.grids.len());
            if n == 0 || n > count {
                bail!("--color-volume {n}: the files hold {count} volume(s), numbered from 1");
            }
            let (flag, default) = match self.pb_legend {
                Some(_) => ("--color-by pb", Some(PB_RANGE_KT_PER_E)),
                None => ("--color-volume", None),
            };
            color_surfaces(state, FieldChoice::Volume(n - 1), flag, args, default)?;
            *self.coloured = true;
        }
        self.sync.sync(self.rc, self.scene, state);
        orbitfield::render::render_once(self.rc, self.scene, self.target, &state.view.camera);
        let mut img = self.target.read_rgba(self.rc)?;
        if !args.no_legend {
            let legends: Vec<_> = state.legends().iter().map(|l| self.named(l)).collect();
            super::legend::draw_legends(&mut img, &legends, &mut self.legend_corner);
        }
        Ok(img)
    }
}

/// `render --movie`: the frames drawn in order into the movie writer (`io::write::movie`, the
/// viewer's encoder), with a progress bar on a terminal; the file appears only when complete.
fn write_movie(
    state: &mut AppState,
    view: &mut FrameDrawer<'_>,
    frames: &[usize],
    path: &std::path::Path,
    format: orbitfield::io::write::movie::MovieFormat,
    size: [u32; 2],
    args: &RenderArgs,
) -> Result<()> {
    let mut writer = orbitfield::io::write::movie::MovieWriter::create(path, format, size, args.fps)?;
    // Drawn only on a terminal (indicatif hides it when stderr is piped).
    let bar = indicatif::ProgressBar::new(frames.len() as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} frames, {eta} left")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    bar.set_message(format!("{}", path.display()));
    for &f in frames {
        let img = view.draw(state, f, args).with_context(|| format!("frame {f}"))?;
        writer.push_rgba(img.as_raw())?;
        bar.inc(1);
    }
    bar.finish_and_clear();
    let n = writer.finish()?;
    println!("{}", path.display());
    eprintln!("movie: {n} frames of {}x{} at {} fps", size[0], size[1], args.fps);
    Ok(())
}

/// A session's ligand free-energy maps are computed over all their frames before anything is drawn
/// (a bar on a terminal), so each map is drawn whole; a map stopped by an error stops the command.
fn wait_for_ils_maps(state: &mut AppState) -> Result<()> {
    let frames = |state: &AppState| {
        state.document().map_or((0, 0), |d| {
            d.ils_maps
                .iter()
                .fold((0, 0), |(a, b), m| (a + m.frames_done, b + m.frames_total))
        })
    };
    if !state.ils_needs_pump() {
        return Ok(());
    }
    let bar = indicatif::ProgressBar::new(frames(state).1 as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} frames, {eta} left")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    bar.set_message("ligand free-energy maps");
    while state.ils_needs_pump() {
        state.update_reps();
        bar.set_position(frames(state).0 as u64);
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    bar.finish_and_clear();
    if let Some(m) = state.document().and_then(|d| d.ils_maps.iter().find(|m| m.cancelled)) {
        bail!(
            "{}: stopped after {} of {} frames: {}",
            m.title(),
            m.frames_done,
            m.frames_total,
            state.panels.status
        );
    }
    Ok(())
}

/// Runs the update loop until every visible field representation shows frame `f` (computed on this
/// thread); an error names the field that could not be shown.
fn show_fields(state: &mut AppState, f: usize) -> Result<()> {
    for _ in 0..4 {
        state.update_reps();
        if !state.busy() {
            break;
        }
    }
    let missing: Vec<String> =
        state
            .reps()
            .fields()
            .filter(|(r, rep)| {
                r.visible
                    && (rep.pipeline.shown_key().is_none_or(|k| {
                        k.frame != f && !matches!(k.field, FieldChoice::Volume(_) | FieldChoice::Ils(_))
                    }) || !rep.color_shows_frame(f))
            })
            .map(|(r, _)| state.rep_label(r))
            .collect();
    if !missing.is_empty() {
        let why = state
            .fields
            .last_error
            .clone()
            .unwrap_or_else(|| state.panels.status.clone());
        bail!("cannot show {} at frame {f}: {why}", missing.join(", "));
    }
    let uncoloured: Vec<String> = state
        .reps()
        .cartoons()
        .filter(|(r, c)| {
            r.visible && c.color_by.is_some() && c.pipeline.values().is_none_or(|(k, _, _)| k.cartoon.frame != f)
        })
        .map(|(r, _)| state.rep_label(r))
        .collect();
    if !uncoloured.is_empty() {
        bail!(
            "cannot colour {} at frame {f}: {}",
            uncoloured.join(", "),
            state.panels.status
        );
    }
    let empty: Vec<String> = state
        .reps()
        .cartoons()
        .filter(|(r, c)| r.visible && c.residues == 0)
        .map(|(r, _)| state.rep_label(r))
        .collect();
    if !empty.is_empty() {
        bail!(
            "--rep {}: the selection picks no protein or nucleic-acid residues",
            empty.join(", ")
        );
    }
    if !state.fields.can_extract() && state.reps().fields().any(|(_, r)| r.is_surface()) {
        bail!("--field: this build has no isosurface extractor");
    }
    Ok(())
}

/// Colours the first field's surfaces by `source` (a volume of the files, or a field computed per
/// frame through the representation list's colouring), the range from --color-range or the values
/// on the surface; `flag` names the option in messages.
fn color_surfaces(
    state: &mut AppState,
    source: FieldChoice,
    flag: &str,
    args: &RenderArgs,
    default_range: Option<[f32; 2]>,
) -> Result<()> {
    if !state.main_field_rep().is_some_and(|f| f.is_surface()) {
        bail!("{flag}: there is no surface to colour; add --field");
    }
    let range = args
        .color_range
        .as_deref()
        .map(parse_color_range)
        .transpose()?
        .map(|r| computed_range(state, source, r))
        .or(default_range);
    state.apply(Command::SetSurfaceColor(Some((source, range))));
    if state.surface_color().is_none() {
        bail!("{flag}: {}", state.panels.status);
    }
    Ok(())
}

/// A --color-range given in the unit the legend of a colouring by `source` shows, in computed units.
fn computed_range(state: &AppState, source: FieldChoice, [lo, hi]: [f32; 2]) -> [f32; 2] {
    let unit = state.coloring_unit(source);
    [unit.computed(f64::from(lo)), unit.computed(f64::from(hi))]
}

/// The model of the charges' potential --dielectric asks for; refused where nothing is coloured
/// by that potential.
fn screening_model(args: &RenderArgs) -> Result<orbitfield::app::esp_model::EspModel> {
    let cartoons = arg_specs(args)?
        .0
        .iter()
        .filter_map(cartoon_color_by)
        .any(|c| orbitfield::app::reps::spec::cartoon_color_field(c) == Some(FieldChoice::Potential));
    if !colors_by_esp(args) && !cartoons {
        bail!("--dielectric, --ionic-strength and --eps-out apply to --color-by esp and cartoons coloured by esp");
    }
    args.screening.esp_model()
}
