//! `orbitfield points FILE... --field FIELD --points PTS.txt`: a field at arbitrary points.
//!
//! Reads `x y z` lines in Angstrom (`#` starts a comment, blank lines are skipped) and prints one
//! value per line in atomic units, in input order. Evaluation goes through [`super::grid::evaluate`].

use super::grid::{Device, Evaluated, Request, evaluate, load_source};
use anyhow::{Context, Result, bail};
use orbitfield::model::units::bohr_from_angstrom3;
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug)]
pub struct PointsArgs {
    /// Files that together form the system.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// The field (as for `grid`): mo:homo, mo:17, density, spin, esp, ...
    #[arg(long)]
    pub field: String,
    /// Text file with one `x y z` point (Angstrom) per line; `-` reads standard input.
    #[arg(long)]
    pub points: PathBuf,
    /// Frame (0-based) of a trajectory or wavefunction series.
    #[arg(long, default_value_t = 0)]
    pub frame: usize,
    /// Compute device.
    #[arg(long, value_enum, default_value_t = Device::Auto)]
    pub device: Device,
}

/// Parses `x y z` lines (Angstrom) into points in bohr; errors name the file and line.
pub fn parse_points(path: &Path, text: &str) -> Result<Vec<[f64; 3]>> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let body = line.split('#').next().unwrap_or("").trim();
        if body.is_empty() {
            continue;
        }
        let f: Vec<&str> = body.split_whitespace().collect();
        if f.len() != 3 {
            bail!(
                "{}:{}: expected `x y z` in Angstrom, found {} fields",
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
    let source = load_source(&args.field, &args.files, args.frame)?;
    let request = Request::Points {
        field: &source.field,
        input: &source.input,
        points_bohr: &points,
    };
    let Evaluated::Points(values) = evaluate(args.device, request)? else {
        bail!("internal error: a points request returned a lattice");
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    for v in values {
        writeln!(out, "{v:.10e}")?;
    }
    out.flush()?;
    Ok(())
}
