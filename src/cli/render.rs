//! `orbitfield render FILE... -o out.png|dir/`: draws structures (and a field's isosurfaces) to
//! PNG files without a window, on any wgpu adapter (software Vulkan included). A frame range is
//! dealt over the ranks of an MPI job when started by `mpirun` (see `batch`).

use anyhow::{Context, Result, anyhow, bail};
use glam::Vec3;
use orbitfield::app::fields::{FieldChoice, FieldKey, FieldService, MeshKey};
use orbitfield::app::representation::{ColorBy, DrawStyle, LOBE_NEGATIVE, LOBE_POSITIVE};
use orbitfield::app::settings::Settings;
use orbitfield::app::state::{AppState, Command, IsoMode};
use orbitfield::batch::{self, Ranks, StagedFiles};
use orbitfield::compute::Field;
use orbitfield::model::field::FieldSpec;
use orbitfield::render::camera::ViewAxis;
use orbitfield::render::{GpuScene, MeshInput, MeshStyle, OffscreenTarget, RenderContext};
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct RenderArgs {
    /// Files that together form one system (as for `info`).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Output: a .png file for one frame, or a directory for a frame range.
    #[arg(short, long)]
    pub output: PathBuf,
    /// Field to draw as two-coloured isosurfaces: as for `grid` (mo:homo, mo:lumo+1, mo:beta:homo,
    /// mo:N 1-based, density), homo, lumo, or volume[:N] for a volume read from the files.
    #[arg(long)]
    pub field: Option<String>,
    /// Isovalue (absolute, in the field's units; see --relative).
    #[arg(long, default_value_t = 0.05)]
    pub iso: f32,
    /// Read --iso as a fraction of the field's largest |value|.
    #[arg(long)]
    pub relative: bool,
    /// Frame to draw (0-based).
    #[arg(long, conflicts_with = "frames")]
    pub frame: Option<usize>,
    /// Frame range A:B (0-based, B excluded) drawn into the output directory.
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
    #[arg(long, default_value_t = 1.0)]
    pub zoom: f32,
    /// Drawing style: cpk, vdw, ball-and-stick, licorice.
    #[arg(long, default_value = "cpk")]
    pub style: String,
    /// Colouring: element, residue, chain, charge.
    #[arg(long, default_value = "element")]
    pub color_by: String,
    /// White background instead of black.
    #[arg(long)]
    pub light: bool,
    /// Surface opacity 0..1 (below 1 uses order-independent transparency).
    #[arg(long, default_value_t = 1.0)]
    pub opacity: f32,
    /// Colour the surfaces by the N-th volume of the files (1-based), e.g. a potential map on a
    /// density surface.
    #[arg(long, value_name = "N")]
    pub color_volume: Option<usize>,
    /// Values LO,HI at the colormap's ends (default: from the values on the surface).
    #[arg(long, value_name = "LO,HI", allow_negative_numbers = true, requires = "color_volume")]
    pub color_range: Option<String>,
    /// Colormap: diverging (blue-white-red), viridis or gray.
    #[arg(long, default_value = "diverging")]
    pub colormap: String,
    /// The atoms the wavefunction files describe, when they are the QM region of an MD system
    /// (selection language, e.g. "resname THR"); without it the region is found by geometry.
    #[arg(long, value_name = "SELECTION")]
    pub qm_region: Option<String>,
}

fn parse_colormap(s: &str) -> Result<orbitfield::render::colormap::Colormap> {
    use orbitfield::render::colormap::Colormap;
    Ok(match s.to_ascii_lowercase().as_str() {
        "diverging" | "bwr" | "blue-white-red" => Colormap::Diverging,
        "viridis" => Colormap::Viridis,
        "gray" | "grey" => Colormap::Gray,
        _ => bail!("--colormap: expected diverging, viridis or gray, found {s:?}"),
    })
}

fn parse_color_range(s: &str) -> Result<[f32; 2]> {
    let (a, b) = s
        .split_once(',')
        .ok_or_else(|| anyhow!("--color-range: expected LO,HI, found {s:?}"))?;
    let lo: f32 = a
        .trim()
        .parse()
        .with_context(|| format!("--color-range: bad number {a:?}"))?;
    let hi: f32 = b
        .trim()
        .parse()
        .with_context(|| format!("--color-range: bad number {b:?}"))?;
    if !lo.is_finite() || !hi.is_finite() || lo == hi {
        bail!("--color-range: expected two different finite values, found {s:?}");
    }
    Ok([lo, hi])
}

/// Parses "WxH".
pub fn parse_size(s: &str) -> Result<[u32; 2]> {
    let (w, h) = s
        .split_once(['x', 'X'])
        .ok_or_else(|| anyhow!("--size: expected WxH, found {s:?}"))?;
    let w: u32 = w
        .trim()
        .parse()
        .with_context(|| format!("--size: bad width in {s:?}"))?;
    let h: u32 = h
        .trim()
        .parse()
        .with_context(|| format!("--size: bad height in {s:?}"))?;
    if !(1..=8192).contains(&w) || !(1..=8192).contains(&h) {
        bail!("--size: each side must be 1..8192 pixels, found {w}x{h}");
    }
    Ok([w, h])
}

/// Parses "A:B" into a range (B excluded).
pub fn parse_range(s: &str) -> Result<std::ops::Range<usize>> {
    let (a, b) = s
        .split_once(':')
        .ok_or_else(|| anyhow!("--frames: expected A:B, found {s:?}"))?;
    let a: usize = a
        .trim()
        .parse()
        .with_context(|| format!("--frames: bad start in {s:?}"))?;
    let b: usize = b
        .trim()
        .parse()
        .with_context(|| format!("--frames: bad end in {s:?}"))?;
    if b <= a {
        bail!("--frames: the end must be after the start, found {s:?}");
    }
    Ok(a..b)
}

fn parse_style(s: &str) -> Result<DrawStyle> {
    Ok(match s.to_ascii_lowercase().as_str() {
        "cpk" => DrawStyle::Cpk,
        "vdw" => DrawStyle::Vdw,
        "ball-and-stick" | "bs" => DrawStyle::BallAndStick,
        "licorice" => DrawStyle::Licorice,
        _ => bail!("--style: expected cpk, vdw, ball-and-stick or licorice, found {s:?}"),
    })
}

fn parse_color_by(s: &str) -> Result<ColorBy> {
    Ok(match s.to_ascii_lowercase().as_str() {
        "element" => ColorBy::Element,
        "residue" => ColorBy::Residue,
        "chain" => ColorBy::Chain,
        "charge" => ColorBy::Charge,
        _ => bail!("--color-by: expected element, residue, chain or charge, found {s:?}"),
    })
}

/// The field to draw: the field syntax of `grid` (mo:homo, mo:lumo+1, mo:beta:homo, mo:17,
/// density), the shorthands homo and lumo, or volume[:N] for the N-th volume of the files.
fn parse_field(s: &str, state: &AppState) -> Result<FieldChoice> {
    let lower = s.trim().to_ascii_lowercase();
    if lower == "volume" {
        return Ok(FieldChoice::Volume(0));
    }
    if let Some(n) = lower.strip_prefix("volume:") {
        let n: usize = n
            .parse()
            .with_context(|| format!("--field {s}: expected volume:N (1-based)"))?;
        if n == 0 {
            bail!("--field {s}: volumes are numbered from 1");
        }
        return Ok(FieldChoice::Volume(n - 1));
    }
    let text = match lower.as_str() {
        "homo" | "lumo" => format!("mo:{lower}"),
        _ => lower.clone(),
    };
    let spec: FieldSpec = text.parse().map_err(|e| anyhow!("--field {e}"))?;
    let wf = state
        .document
        .as_ref()
        .and_then(|d| d.wavefunctions.get(d.frame_index).or(d.wavefunctions.first()));
    match spec.resolve(wf.map(|w| &**w)).map_err(|e| anyhow!("--field {e}"))? {
        Field::Orbital { spin, index } => Ok(FieldChoice::Orbital { spin, index }),
        Field::Density => Ok(FieldChoice::Density),
        Field::Potential => Ok(FieldChoice::Potential),
        other => bail!(
            "--field {s}: the renderer draws orbitals, the electron density and volumes from files, not {other:?}; \
             compute it with `orbitfield grid ... -o field.cube` and render that file with --field volume"
        ),
    }
}

fn encode_png(img: &image::RgbaImage) -> Result<Vec<u8>> {
    let mut png = Vec::new();
    img.write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)?;
    Ok(png)
}

pub fn run(args: &RenderArgs) -> Result<()> {
    let size = parse_size(&args.size)?;
    let style = parse_style(&args.style)?;
    let color_by = parse_color_by(&args.color_by)?;
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
    let ranks = Ranks::from_environment()?;
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
    let settings = Settings {
        style,
        color_by,
        dark_background: !args.light,
        iso_value: args.iso,
        surface_opacity: args.opacity.clamp(0.05, 1.0),
        ..Settings::default()
    };
    let mut state = AppState::new(settings, FieldService::new(None, orbitfield::app::default_extractor()));
    state.view_size_px = size;
    let name = args.files.first().map(|p| p.display().to_string()).unwrap_or_default();
    state.open_system_with_qm_region(name, system, region);
    let doc = state.document.as_ref().ok_or_else(|| anyhow!("{}", state.status))?;
    let n_frames = doc.n_frames.max(1);
    let frames: Vec<usize> = match (&args.frames, args.frame) {
        (Some(r), _) => {
            let r = parse_range(r)?;
            if r.end > n_frames {
                bail!("--frames {}:{}: the files have {n_frames} frames", r.start, r.end);
            }
            r.collect()
        }
        (None, Some(f)) if f >= n_frames => {
            bail!("--frame {f}: the files have {n_frames} frames (0..{})", n_frames - 1)
        }
        (None, Some(f)) => vec![f],
        (None, None) => vec![0],
    };
    let to_dir = frames.len() > 1 || args.output.extension().is_none_or(|e| !e.eq_ignore_ascii_case("png"));
    if to_dir {
        std::fs::create_dir_all(&args.output).with_context(|| format!("cannot create {}", args.output.display()))?;
    }
    state.field = match &args.field {
        Some(f) => Some(parse_field(f, &state)?),
        None => None,
    };
    state.iso_mode = if args.relative {
        IsoMode::RelativeToMax
    } else {
        IsoMode::Absolute
    };

    let rc = RenderContext::headless(4)?;
    let mut scene = GpuScene::new(&rc);
    scene.style.background = if args.light { [1.0, 1.0, 1.0] } else { [0.0, 0.0, 0.0] };
    let target = OffscreenTarget::new(&rc, size);
    state.apply(Command::SetFrame(frames[0]));
    state.camera.set_view_axis(axis);
    state.camera.orbit(rotate[0].to_radians(), rotate[1].to_radians());
    let aspect = size[0] as f32 / size[1] as f32;
    let (lo, hi) = state
        .scene_bounds()
        .ok_or_else(|| anyhow!("nothing to draw: the files have no atoms"))?;
    state.camera.fit_to_bounds(Vec3::from(lo), Vec3::from(hi), aspect);
    state.camera.zoom(args.zoom);
    // Under MPI each rank draws its share of the frames (the camera is fitted to the first frame of
    // the whole range on every rank, so each image is the one a single process draws); files are
    // renamed into place only when every rank succeeded.
    let mut staged = StagedFiles::new();
    let mut work = |block: &[usize]| -> Result<(), String> {
        for &f in block {
            draw_frame(&mut state, &mut scene, &rc, &target, args, f, to_dir, &mut staged)
                .map_err(|e| format!("frame {f}: {e:#}"))?;
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
    Ok(())
}

/// Draws frame `f` and stages its PNG (in the output directory, or the output file).
#[allow(clippy::too_many_arguments)]
fn draw_frame(
    state: &mut AppState,
    scene: &mut GpuScene,
    rc: &RenderContext,
    target: &OffscreenTarget,
    args: &RenderArgs,
    f: usize,
    to_dir: bool,
    staged: &mut StagedFiles,
) -> Result<()> {
    state.apply(Command::SetFrame(f));
    scene.set_spheres(rc, &state.spheres);
    scene.set_cylinders(rc, &state.cylinders);
    scene.set_lines(rc, &state.lines);
    if state.field.is_some() {
        draw_field(state, scene, rc, args.opacity)?;
    }
    if let Some(n) = args.color_volume {
        color_surfaces(state, scene, rc, n, args)?;
    }
    orbitfield::render::render_once(rc, scene, target, &state.camera);
    let img = target.read_rgba(rc)?;
    let path = if to_dir {
        args.output.join(super::grid::frame_file_name(f, "png"))
    } else {
        args.output.clone()
    };
    let png = encode_png(&img)?;
    staged
        .write(&path, &png)
        .with_context(|| format!("cannot write {}", path.display()))
}

fn draw_field(state: &mut AppState, scene: &mut GpuScene, rc: &RenderContext, opacity: f32) -> Result<()> {
    let key: FieldKey = state
        .current_field_key()
        .ok_or_else(|| anyhow!("--field: these files have no such field"))?;
    let grid = match key.field {
        FieldChoice::Volume(i) => state.document.as_ref().and_then(|d| d.grids.get(i).cloned()),
        _ => {
            let job = state
                .field_job(&key)
                .ok_or_else(|| anyhow!("--field: no wavefunction in these files"))?;
            let engine = orbitfield::app::blocking_engine()
                .ok_or_else(|| anyhow!("--field: this build has no field engine for orbitals"))?;
            let grid = std::sync::Arc::new(engine(&job).map_err(|e| anyhow!("--field: {e}"))?);
            Some(state.placed_grid(&key, grid))
        }
    }
    .ok_or_else(|| anyhow!("--field: no such volume"))?;
    if !state.fields.can_extract() {
        bail!("--field: this build has no isosurface extractor");
    }
    let iso = state.absolute_iso(&grid);
    let mk = |v: f32| MeshKey {
        field: key,
        iso_bits: v.to_bits(),
    };
    let plus = state.fields.mesh(mk(iso), &grid);
    let minus = state.fields.mesh(mk(-iso), &grid);
    let opacity = opacity.clamp(0.05, 1.0);
    let mut inputs = Vec::new();
    for (m, color) in [(&plus, LOBE_POSITIVE), (&minus, LOBE_NEGATIVE)] {
        if let Some(m) = m {
            inputs.push((
                MeshInput {
                    positions_angstrom: &m.positions_angstrom,
                    normals: &m.normals,
                    indices: &m.indices,
                },
                MeshStyle { color, opacity },
            ));
        }
    }
    scene.set_meshes(rc, &inputs);
    state.lobes = [plus.clone(), minus.clone()];
    Ok(())
}

/// Colours the drawn surfaces by volume `n` (1-based) of the files.
fn color_surfaces(
    state: &mut AppState,
    scene: &mut GpuScene,
    rc: &RenderContext,
    n: usize,
    args: &RenderArgs,
) -> Result<()> {
    let count = state.document.as_ref().map_or(0, |d| d.grids.len());
    if n == 0 || n > count {
        bail!("--color-volume {n}: the files hold {count} volume(s), numbered from 1");
    }
    if state.field.is_none() {
        bail!("--color-volume: there is no surface to colour; add --field");
    }
    let range = args.color_range.as_deref().map(parse_color_range).transpose()?;
    state.settings.colormap = parse_colormap(&args.colormap)?;
    state.apply(Command::SetSurfaceColor(Some((n - 1, range))));
    let c = state
        .surface_color
        .ok_or_else(|| anyhow!("--color-volume {n}: {}", state.status))?;
    let grid = state
        .document
        .as_ref()
        .and_then(|d| d.grids.get(c.volume).cloned())
        .ok_or_else(|| anyhow!("--color-volume {n}: no such volume"))?;
    scene
        .set_color_field(
            rc,
            Some(orbitfield::render::scene::ColorFieldInput {
                grid: &grid,
                range: c.range,
                colormap: state.settings.colormap,
            }),
        )
        .map_err(|e| anyhow!("--color-volume {n}: {e}"))?;
    eprintln!("surface colours: volume {n} from {} to {}", c.range[0], c.range[1]);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_sizes_and_ranges() {
        assert_eq!(parse_size("640x480").unwrap(), [640, 480]);
        assert!(parse_size("0x10").is_err());
        assert!(parse_size("100000x10").is_err());
        assert!(parse_size("abc").is_err());
        assert_eq!(parse_range("2:5").unwrap(), 2..5);
        assert!(parse_range("5:5").is_err());
        assert!(parse_style("wires").is_err());
    }
}
