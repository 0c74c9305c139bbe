//! `orbitfield ils-path MAP --from X,Y,Z [--to X,Y,Z|bulk]`: the lowest-barrier path of a probe on a
//! free-energy map (as `grid ils` writes), printed point by point with its barrier and length.
//!
//! Owns the command's arguments and output; the search is `analysis::ils_path` (minimax Dijkstra for
//! the barrier, then the shortest path below it).

use anyhow::{Context, Result, bail};
use orbitfield::analysis::ils_path::lowest_barrier_path;
use orbitfield::io;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct IlsPathArgs {
    /// The map: a DX or cube file (values in the map's unit, kT from `grid ils`).
    pub map: PathBuf,
    /// Start point X,Y,Z in Angstrom (the nearest lattice point is taken).
    #[arg(
        long,
        required = true,
        value_delimiter = ',',
        num_args = 1..=3,
        allow_negative_numbers = true
    )]
    pub from: Vec<f64>,
    /// End point X,Y,Z in Angstrom, or `bulk` (any point on the map's outer faces).
    #[arg(long, default_value = "bulk", allow_hyphen_values = true)]
    pub to: String,
}

fn point(v: &[f64], what: &str) -> Result<[f64; 3]> {
    match v {
        [x, y, z] if v.iter().all(|a| a.is_finite()) => Ok([*x, *y, *z]),
        _ => bail!("{what}: expected X,Y,Z in Angstrom"),
    }
}

pub fn run(args: &IlsPathArgs) -> Result<()> {
    let bytes = io::read_bytes(&args.map)?;
    let name = io::uncompressed_name(&args.map).to_ascii_lowercase();
    let grid = if name.ends_with(".dx") {
        io::dx::read(&args.map, &bytes)?
    } else {
        io::cube::read(&args.map, &bytes)?
            .grids
            .into_iter()
            .next()
            .with_context(|| format!("{}: no grid in the file", args.map.display()))?
    };
    let from = point(&args.from, "--from")?;
    let to = if args.to.trim().eq_ignore_ascii_case("bulk") {
        None
    } else {
        let v: Vec<f64> = args
            .to
            .split(',')
            .map(|s| s.trim().parse::<f64>())
            .collect::<Result<_, _>>()
            .map_err(|_| anyhow::anyhow!("--to: expected X,Y,Z in Angstrom or bulk, found '{}'", args.to))?;
        Some(point(&v, "--to")?)
    };
    let path = lowest_barrier_path(&grid, from, to).with_context(|| format!("{}", args.map.display()))?;
    println!(
        "# lowest-barrier path on {} (minimax Dijkstra, 26 neighbours; shortest among the paths of that barrier)",
        args.map.display()
    );
    println!("# x_A y_A z_A value");
    for (p, v) in path.points_angstrom.iter().zip(&path.values) {
        println!("{:.3} {:.3} {:.3} {v:.4}", p[0], p[1], p[2]);
    }
    let start = path.values.first().copied().unwrap_or(0.0);
    println!(
        "barrier {:.4} (map units; {:.4} above the start) length {:.3} A, {} points, to {}",
        path.barrier,
        path.barrier - start,
        path.length_angstrom,
        path.points_angstrom.len(),
        if to.is_some() {
            "the end point"
        } else {
            "bulk (the map's faces)"
        }
    );
    // A barrier at the map's ceiling is the cap `grid ils --max-energy` put on blocked voxels: no
    // sampled path exists between the points, whatever the number says.
    if orbitfield::analysis::ils_path::barrier_is_cap(&grid, &path) {
        eprintln!(
            "note: the barrier is the map's largest value ({:.4}), the cap of blocked voxels: every \
             path between the points crosses them, so no sampled path exists and the barrier is not a free \
             energy",
            path.barrier
        );
    }
    Ok(())
}
