//! Command-line interface: argument parsing and dispatch to the subcommands, one file each.

mod bench;
mod grid;
mod info;
mod ions;
mod playback;
mod points;
mod rdf;
mod render;
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
    /// Viewer: save a screenshot of the window to this PNG (at --exit-after-frames, else frame 30, once fields are shown).
    #[arg(long)]
    screenshot: Option<PathBuf>,
    /// Viewer: quit after drawing this many frames.
    #[arg(long)]
    exit_after_frames: Option<u64>,
    /// Viewer: window size WxH in logical pixels.
    #[arg(long)]
    window_size: Option<String>,
    /// Viewer: do not read or write the settings file.
    #[arg(long)]
    no_settings: bool,
    /// Viewer: the atoms the wavefunction files describe, when they are the QM region of an MD system
    /// (selection language, e.g. "resname THR"); without it the region is found by geometry.
    #[arg(long, value_name = "SELECTION")]
    qm_region: Option<String>,
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
    /// Print a field's values (atomic units; esp in --units) at the `x y z` points (Angstrom) of a text file.
    Points(points::PointsArgs),
    /// Place counter-ions at the most favourable points of the Coulomb potential (as VMD's cionize) and write PDB.
    Ions(ions::IonsArgs),
    /// Extract an isosurface from a volume (cube, DX) and write it as a .ply or .obj mesh.
    Surface(surface::SurfaceArgs),
    /// Draw FILE... to PNG images without a window (structures, and isosurfaces with --field).
    Render(render::RenderArgs),
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
        Some(Command::Ions(args)) => ions::run(&args),
        Some(Command::Surface(args)) => surface::run(&args),
        Some(Command::Render(args)) => render::run(&args),
        None => run_viewer(&cli),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
    }
}

fn run_viewer(cli: &Cli) -> anyhow::Result<()> {
    let size = cli.window_size.as_deref().map(render::parse_size).transpose()?;
    orbitfield::app::window::run(orbitfield::app::window::ViewerOptions {
        files: cli.files.clone(),
        screenshot: cli.screenshot.clone(),
        exit_after_frames: cli.exit_after_frames,
        size,
        no_settings: cli.no_settings,
        qm_region: cli.qm_region.clone(),
    })
}
