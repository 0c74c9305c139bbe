//! `orbitfield render FILE... -o out.png|dir/`: draws structures (and a field's isosurfaces) to
//! PNG files without a window, on any wgpu adapter (software Vulkan included).

use anyhow::{Context, Result, anyhow, bail};
use glam::Vec3;
use orbitfield::app::fields::{FieldChoice, FieldKey, FieldService, MeshKey};
use orbitfield::app::representation::{ColorBy, DrawStyle, LOBE_NEGATIVE, LOBE_POSITIVE};
use orbitfield::app::settings::Settings;
use orbitfield::app::state::{AppState, Command, IsoMode};
use orbitfield::render::camera::ViewAxis;
use orbitfield::render::{GpuScene, MeshInput, MeshStyle, OffscreenTarget, RenderContext};
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug)]
pub struct RenderArgs {
    /// Files that together form one system (as for `info`).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Output: a .png file for one frame, or a directory for a frame range.
    #[arg(short, long)]
    pub output: PathBuf,
    /// Field to draw as two-coloured isosurfaces: homo, lumo, mo:N (1-based), density, volume[:N].
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

fn parse_field(s: &str, state: &AppState) -> Result<FieldChoice> {
    let lower = s.to_ascii_lowercase();
    let spin = orbitfield::model::Spin::Alpha;
    let homo = || {
        state
            .homo_index(spin)
            .ok_or_else(|| anyhow!("--field {s}: no occupied orbitals in these files"))
    };
    Ok(match lower.as_str() {
        "homo" => FieldChoice::Orbital { spin, index: homo()? },
        "lumo" => FieldChoice::Orbital {
            spin,
            index: homo()? + 1,
        },
        "density" => FieldChoice::Density,
        "volume" => FieldChoice::Volume(0),
        _ => {
            if let Some(n) = lower.strip_prefix("mo:") {
                let n: usize = n.parse().with_context(|| format!("--field {s}: expected mo:N"))?;
                if n == 0 {
                    bail!("--field {s}: orbitals are numbered from 1");
                }
                FieldChoice::Orbital { spin, index: n - 1 }
            } else if let Some(n) = lower.strip_prefix("volume:") {
                let n: usize = n.parse().with_context(|| format!("--field {s}: expected volume:N"))?;
                FieldChoice::Volume(n.saturating_sub(1))
            } else {
                bail!("--field: expected homo, lumo, mo:N, density or volume[:N], found {s:?}")
            }
        }
    })
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
    let system = orbitfield::io::load(&args.files)?;
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
    state.open_system(name, system);
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
    for &f in &frames {
        state.apply(Command::SetFrame(f));
        scene.set_spheres(&rc, &state.spheres);
        scene.set_cylinders(&rc, &state.cylinders);
        scene.set_lines(&rc, &state.lines);
        if state.field.is_some() {
            draw_field(&mut state, &mut scene, &rc, args.opacity)?;
        }
        orbitfield::render::render_once(&rc, &scene, &target, &state.camera);
        let img = target.read_rgba(&rc)?;
        let path = if to_dir {
            args.output.join(format!("frame_{f:05}.png"))
        } else {
            args.output.clone()
        };
        write_png(&path, &img)?;
        println!("{}", path.display());
    }
    Ok(())
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
            Some(std::sync::Arc::new(engine(&job).map_err(|e| anyhow!("--field: {e}"))?))
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
    Ok(())
}

fn write_png(path: &Path, img: &image::RgbaImage) -> Result<()> {
    let png = encode_png(img)?;
    orbitfield::io::write_atomically(path, &png).with_context(|| format!("cannot write {}", path.display()))
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
