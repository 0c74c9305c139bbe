//! `orbitfield points FILE... --field FIELD --points PTS.txt`: a field at arbitrary points.
//!
//! Reads `x y z` lines in Angstrom (`#` starts a comment, blank lines are skipped) and prints one
//! value per line, in input order: atomic units for orbitals and densities, the `--units` unit for
//! `esp` (hartree/e for a wavefunction's own potential, kT/e at 300 K for point charges, unless told
//! otherwise). Evaluation goes through [`super::grid::evaluate`]; `esp` takes its charges, method and
//! boundary from the same options as `grid esp` ([`EspArgs`]).
//!
//! `--device gpu` evaluates on a CUDA device or fails saying why ([`evaluate_points_gpu`]); it never
//! falls back to the CPU. `auto` and `cpu` use the exact CPU evaluator.

use super::grid::{EspArgs, Evaluated, Request, esp_frame, evaluate, load_source, wavefunction_potential_source};
use anyhow::{Context, Result, bail};
use orbitfield::analysis::esp_series::frame_job;
use orbitfield::compute::{Field, FieldInput, FieldJob};
use orbitfield::jobs::{DeviceChoice, Pool, PoolConfig};
use orbitfield::model::Lattice;
use orbitfield::model::field::FieldSpec;
use orbitfield::model::units::bohr_from_angstrom3;
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug)]
pub struct PointsArgs {
    /// Files that together form the system.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// The field (as for `grid`): mo:homo, mo:17, density, spin, esp, ...; volume (or volume:N) samples
    /// a cube or DX map of the files trilinearly, in its units
    #[arg(long)]
    pub field: String,
    /// Text file with one `x y z` point (Angstrom) per line; `-` reads standard input.
    #[arg(long)]
    pub points: PathBuf,
    /// Frame (0-based) of a trajectory or wavefunction series.
    #[arg(long, default_value_t = 0)]
    pub frame: usize,
    #[command(flatten)]
    pub esp: EspArgs,
    #[command(flatten)]
    pub device: super::device::DeviceArgs,
}

/// Parses `x y z` lines (Angstrom; blanks, commas or tabs between the numbers, as a CSV or numpy's
/// `savetxt` writes them) into points in bohr; errors name the file and line.
pub fn parse_points(path: &Path, text: &str) -> Result<Vec<[f64; 3]>> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let body = line.split('#').next().unwrap_or("").trim();
        if body.is_empty() {
            continue;
        }
        let f: Vec<&str> = body
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|t| !t.is_empty())
            .collect();
        if f.len() != 3 {
            bail!(
                "{}:{}: expected `x y z` in Angstrom (three numbers, apart by blanks or commas), found {} fields",
                path.display(),
                i + 1,
                f.len()
            );
        }
        let mut p = [0.0; 3];
        for (k, s) in f.iter().enumerate() {
            p[k] = match s.parse::<f64>() {
                Ok(v) if v.is_finite() => v,
                _ => bail!(
                    "{}:{}: expected a finite coordinate, found {s:?}",
                    path.display(),
                    i + 1
                ),
            };
        }
        out.push(bohr_from_angstrom3(p));
    }
    Ok(out)
}

pub fn run(args: &PointsArgs) -> Result<()> {
    let text = if args.points.as_os_str() == "-" {
        std::io::read_to_string(std::io::stdin()).context("cannot read points from standard input")?
    } else {
        std::fs::read_to_string(&args.points).with_context(|| format!("cannot read {}", args.points.display()))?
    };
    let points = parse_points(&args.points, &text)?;
    if super::pb::is_pb(&args.field) {
        bail!(
            "--field pb: the Poisson-Boltzmann potential is solved on a lattice, not at points; \
             `orbitfield grid pb FILES -o map.dx` writes the map (in kT/e), which `orbitfield points map.dx \
             --field volume --points PTS.txt` samples trilinearly, as APBS's multivalue samples its map"
        );
    }
    if let Some(which) = volume_index(&args.field)? {
        return print_values(volume_values(args, which, &points)?);
    }
    let spec: FieldSpec = args.field.parse()?;
    let values = if spec.needs_charges() {
        esp_values(args, &points)?
    } else {
        args.esp.refuse_for(&spec)?;
        let source = load_source(&args.field, &args.files, args.frame)?;
        let request = Request::Points {
            field: &source.field,
            input: &source.input,
            points_bohr: &points,
        };
        let Evaluated::Points(values) = evaluate(&args.device, request)? else {
            bail!("internal error: a points request returned a lattice");
        };
        values
    };
    print_values(values)
}

fn print_values(values: Vec<f64>) -> Result<()> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    for v in values {
        writeln!(out, "{v:.10e}")?;
    }
    out.flush()?;
    Ok(())
}

/// `volume` (the first volume of the files) or `volume:N` (1-based): its 0-based index.
fn volume_index(field: &str) -> Result<Option<usize>> {
    let f = field.trim().to_ascii_lowercase();
    if f == "volume" {
        return Ok(Some(0));
    }
    let Some(n) = f.strip_prefix("volume:") else {
        return Ok(None);
    };
    match n.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(Some(n - 1)),
        _ => bail!("--field {field}: expected volume or volume:N, N from 1"),
    }
}

/// A volume of the files (a cube or DX map) sampled trilinearly at the points, in the file's
/// units, as APBS's multivalue samples its map; a point outside the map is an error naming it.
fn volume_values(args: &PointsArgs, which: usize, points_bohr: &[[f64; 3]]) -> Result<Vec<f64>> {
    let system = super::load_noted(&args.files)?;
    let Some(grid) = system.grids.get(which) else {
        bail!(
            "--field {}: the files hold {} volume(s)",
            args.field,
            system.grids.len()
        );
    };
    if !grid.lattice.is_axis_aligned() {
        bail!(
            "--field {}: the map's axes are not along x, y and z; it cannot be sampled here",
            args.field
        );
    }
    points_bohr
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let a = orbitfield::model::units::angstrom_from_bohr3(*p).map(|x| x as f32);
            grid.trilinear_at_angstrom(a, false).map(f64::from).ok_or_else(|| {
                anyhow::anyhow!(
                    "{}: point {} ({:.3} {:.3} {:.3} Å) lies outside the map",
                    args.points.display(),
                    i + 1,
                    a[0],
                    a[1],
                    a[2]
                )
            })
        })
        .collect()
}

/// The potential at `points_bohr` in the `--units` unit: a wavefunction's own, or that of point
/// charges through the method plumbing of `grid esp` (methods that prepare a long-range part get a
/// lattice spanning the points).
fn esp_values(args: &PointsArgs, points_bohr: &[[f64; 3]]) -> Result<Vec<f64>> {
    let unit = args.esp.unit()?;
    let method = args.esp.method()?;
    let mut system = super::load_noted(&args.files)?;
    let (field, input, unit) = if args.esp.wavefunction_potential(&system) {
        args.esp.refuse_for_wavefunction_potential()?;
        let source = wavefunction_potential_source(&system, args.frame)?;
        (source.field, source.input, args.esp.wavefunction_potential_unit()?)
    } else {
        let frame = esp_frame(&mut system, &args.esp, args.frame)?;
        let lattice = points_lattice(points_bohr);
        let job = frame_job(frame.charges, method, frame.boundary, lattice, args.frame)?;
        (job.field, job.input, unit)
    };
    let request = Request::Points {
        field: &field,
        input: &input,
        points_bohr,
    };
    let Evaluated::Points(values) = evaluate(&args.device, request)? else {
        bail!("internal error: a points request returned a lattice");
    };
    let scale = unit.per_hartree_per_e();
    Ok(values.into_iter().map(|v| v * scale).collect())
}

/// An axis-aligned lattice of at most 64 points a side spanning the bounding box of `points_bohr`
/// (one point at the origin when there are none).
pub fn points_lattice(points_bohr: &[[f64; 3]]) -> Lattice {
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for p in points_bohr {
        for k in 0..3 {
            lo[k] = lo[k].min(p[k]);
            hi[k] = hi[k].max(p[k]);
        }
    }
    if points_bohr.is_empty() {
        return Lattice::axis_aligned([0.0; 3], 1.0, [1, 1, 1]);
    }
    let extent = (0..3).map(|k| hi[k] - lo[k]).fold(0.0f64, f64::max);
    let spacing = (extent / 63.0).max(1.0);
    let dims = [0, 1, 2].map(|k| ((hi[k] - lo[k]) / spacing).ceil() as usize + 1);
    Lattice::axis_aligned(lo, spacing, dims)
}

/// Evaluates `field` at `points_bohr` on the CUDA devices: each point is a one-point lattice
/// computed by a GPU worker of a pool started for this call. Fails, never falls back to the CPU,
/// when no GPU is usable, when the field's input is one the GPU engines evaluate only on lattices
/// (cutoff and multilevel potentials), or when a point could not be computed on a GPU.
pub fn evaluate_points_gpu(field: &Field, input: &FieldInput, points_bohr: &[[f64; 3]]) -> Result<Vec<f64>> {
    if !matches!(input, FieldInput::Wavefunction(_) | FieldInput::Charges(_)) {
        bail!(
            "--device gpu: points of this field and method are evaluated by the CPU only \
             (direct-sum potentials and wavefunction fields run on the GPU); use --device cpu or auto"
        );
    }
    let pool: Pool<()> = Pool::new(PoolConfig {
        preference: DeviceChoice::Gpu,
        ..PoolConfig::default()
    });
    if let Some(why) = pool.gpu_missing_reason() {
        bail!("--device gpu: no usable CUDA device ({why}); use --device cpu or auto to evaluate on the CPU");
    }
    let mut values = Vec::with_capacity(points_bohr.len());
    for p in points_bohr {
        let job = FieldJob {
            field: field.clone(),
            lattice: Lattice::axis_aligned(*p, 1.0, [1, 1, 1]),
            input: input.clone(),
        };
        let grid = pool
            .compute_grid((), job)
            .map_err(|e| anyhow::anyhow!("--device gpu: the point {p:?} (bohr) was not computed: {e}"))?;
        let Some(&v) = grid.values.first() else {
            bail!("--device gpu: the device returned no value for the point {p:?} (bohr)");
        };
        values.push(f64::from(v));
    }
    // A tile that failed on the device is retried on the CPU inside the pool: refuse such results.
    let on_cpu: u64 = pool
        .workers()
        .iter()
        .filter(|w| !w.is_gpu)
        .map(|w| w.tiles_done.load(std::sync::atomic::Ordering::Relaxed))
        .sum();
    if on_cpu > 0 {
        let why = pool
            .workers()
            .iter()
            .filter(|w| w.is_gpu)
            .find_map(|w| w.last_error.lock().ok().and_then(|e| e.clone()))
            .unwrap_or_else(|| "no error recorded".into());
        bail!("--device gpu: {on_cpu} point(s) failed on the GPU and were computed by the CPU ({why})");
    }
    Ok(values)
}
