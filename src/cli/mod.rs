//! Command-line interface: argument parsing and dispatch to the subcommands, one file each.

mod bench;
mod grid;
mod info;
mod points;
mod rdf;
mod surface;

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "orbitfield",
    version,
    about = "Molecular orbitals and potential maps, computed per frame and drawn live"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Files to open in the viewer (structures, trajectories, wavefunctions, volumes).
    files: Vec<PathBuf>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Summarise the system that FILE... form together (atoms, frames, residues, charge, box).
    Info(info::InfoArgs),
    /// Radial distribution function g(r) between two atom selections over a trajectory.
    Rdf(rdf::RdfArgs),
    /// Time the field engines (GPU beside CPU): MO lattices and a Coulomb potential map.
    Bench(bench::BenchArgs),
    /// Compute a field (orbital, density, spin density, potential) on a lattice and write a cube or DX file.
    Grid(grid::GridArgs),
    /// Print a field's values (atomic units) at the `x y z` points (Angstrom) of a text file.
    Points(points::PointsArgs),
    /// Extract an isosurface from a volume (cube, DX) and write it as a .ply or .obj mesh.
    Surface(surface::SurfaceArgs),
}

pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    let result = match cli.command {
        Some(Command::Info(args)) => info::run(&args),
        Some(Command::Rdf(args)) => rdf::run(&args),
        Some(Command::Bench(args)) => bench::run(&args),
        Some(Command::Grid(args)) => grid::run(&args),
        Some(Command::Points(args)) => points::run(&args),
        Some(Command::Surface(args)) => surface::run(&args),
        None => info::run_demo(&cli.files),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
    }
}
