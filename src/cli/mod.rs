//! Command-line interface: argument parsing and dispatch to the subcommands, one file each.

//! Without the `gui` feature (a headless build for clusters: `--no-default-features --features mpi`)
//! the viewer and `render` are left out.

mod bench;
mod convert;
mod device;
mod esp_frame;
mod grid;
mod grid_series;
mod grid_source;
mod hbonds;
mod info;
mod info_orbitals;
mod ions;
#[cfg(feature = "gui")]
mod legend;
mod points;
mod rdf;
#[cfg(test)]
mod reference;
#[cfg(feature = "gui")]
mod render;
mod render_parse;
// Command scripts: `run SCRIPT.ofc [--headless]` and `orbitfield SCRIPT.ofc`.
#[cfg(feature = "gui")]
mod script;
mod surface;
// Screened Coulomb models and Poisson-Boltzmann maps.
mod dielectric;
mod pb;
// Implicit ligand sampling: `grid ils` (own parser) and `ils-path`.
mod ils;
mod ils_path;

use clap::{CommandFactory, Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[cfg_attr(not(feature = "gui"), allow(dead_code))]
#[command(
    name = "orbitfield",
    version,
    about = "Molecular orbitals and potential maps, computed per frame and drawn live",
    after_help = "Without FILES the viewer opens its demo (the ethylene torsion). The viewer's command line and \
scripts (.ofc) take the commands `orbitfield help commands` lists; `orbitfield help rep` describes one."
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
    /// Viewer: open a session file (its files, representations, frame and camera), as saved by
    /// File > Save session.
    #[arg(long, value_name = "FILE")]
    session: Option<PathBuf>,
    /// Viewer: graphics backends to choose from, comma-separated (vulkan, gl, metal, dx12); default
    /// WGPU_BACKEND, else all. Without a Vulkan driver the OpenGL backend is used.
    #[arg(long, value_name = "LIST")]
    backend: Option<String>,
    /// Viewer: print the graphics adapter and the rendering paths chosen for it.
    #[arg(long)]
    verbose: bool,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Summarise the system that FILE... form together (atoms, frames, residues, charge, box).
    Info(info::InfoArgs),
    /// Radial distribution function g(r) between two atom selections over a trajectory.
    Rdf(rdf::RdfArgs),
    /// Hydrogen bonds over a trajectory: each bond's occupancy, or the count per frame (--per-frame).
    Hbonds(hbonds::HbondsArgs),
    /// How fast is this machine: a quick suite of field and trajectory cases on built-in inputs.
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
    #[cfg(feature = "gui")]
    Render(render::RenderArgs),
    /// Write the system (or --sel atoms, --frames frames) as PDB, GRO, XYZ, DCD, XTC or TRR.
    Convert(convert::ConvertArgs),
    /// Lowest-barrier path of a probe on a free-energy map (`grid ils`) from a point to another or to bulk.
    IlsPath(ils_path::IlsPathArgs),
    /// Run a command script (.ofc) in the viewer, or without a window with --headless.
    #[cfg(feature = "gui")]
    Run(script::RunArgs),
}

pub fn main() -> ExitCode {
    // Selections know secondary structure (`helix`, `sheet`) through DSSP.
    orbitfield::analysis::dssp::use_for_selections();
    // `grid ils` has options of its own (src/cli/ils.rs).
    if let Some(code) = ils::grid_ils_main() {
        return code;
    }
    if let Some(code) = script_help_main(std::env::args().skip(1).collect()) {
        return code;
    }
    let mut cli = match Cli::try_parse_from(with_negative_lists_joined(std::env::args_os())) {
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
    // Diagnostics on request: `ORBITFIELD_LOG=debug`, or `orbitfield::timing=debug` for the per-slab
    // timings of the GPU engine.
    if let Ok(filter) = std::env::var("ORBITFIELD_LOG") {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
            .with_writer(std::io::stderr)
            .try_init();
    }
    if let Err(e) = expand_file_patterns(&mut cli) {
        eprintln!("error: {e:#}");
        return ExitCode::from(1);
    }
    if let Err(e) = check_output_folder(output_of(&cli)) {
        eprintln!("error: {e:#}");
        return ExitCode::from(1);
    }
    let result = match cli.command {
        Some(Command::Info(args)) => info::run(&args),
        Some(Command::Rdf(args)) => rdf::run(&args),
        Some(Command::Hbonds(args)) => hbonds::run(&args),
        Some(Command::Bench(args)) => bench::run(&args),
        Some(Command::Grid(args)) => grid::run(&args),
        Some(Command::Points(args)) => points::run(&args),
        Some(Command::Ions(args)) => ions::run(&args),
        Some(Command::Surface(args)) => surface::run(&args),
        #[cfg(feature = "gui")]
        Some(Command::Render(args)) => render::run(&args),
        Some(Command::Convert(args)) => convert::run(&args),
        Some(Command::IlsPath(args)) => ils_path::run(&args),
        #[cfg(feature = "gui")]
        Some(Command::Run(args)) => script::run(&args),
        None => run_viewer(&cli),
    };
    exit_code(result)
}

/// `orbitfield help commands` and `orbitfield help VERB`: the viewer's and scripts' commands, as
/// `help` prints them there (a subcommand's name keeps clap's help of the subcommand). `None`
/// for everything else.
fn script_help_main(args: Vec<String>) -> Option<ExitCode> {
    let [help, word, rest @ ..] = args.as_slice() else {
        return None;
    };
    if help != "help" || Cli::command().get_subcommands().any(|s| s.get_name() == word) {
        return None;
    }
    let asked = match word.as_str() {
        "commands" | "verbs" => None,
        _ => Some(
            std::iter::once(word.as_str())
                .chain(rest.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" "),
        ),
    };
    Some(match orbitfield::script::verbs::help_text(asked.as_deref()) {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e} (`orbitfield help commands` lists the commands)");
            ExitCode::from(2)
        }
    })
}

/// The three values of an option that takes `X,Y,Z` or `X Y Z` (`--origin`, `--dims`, `--from`):
/// clap accepts one to three raw values so both spellings parse, and this checks there are three.
fn three<T: Copy + std::fmt::Debug>(flag: &str, values: &[T]) -> anyhow::Result<[T; 3]> {
    match values {
        [x, y, z] => Ok([*x, *y, *z]),
        other => anyhow::bail!("{flag}: expected three values, X,Y,Z (or X Y Z), found {other:?}"),
    }
}

/// The command line with each comma-separated list of numbers that starts with a minus sign
/// (`--origin -2,-2,-2`) joined to its option (`--origin=-2,-2,-2`): clap would read it as short
/// flags, since only a single number passes as a negative value.
fn with_negative_lists_joined(args: impl IntoIterator<Item = std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    let mut out: Vec<std::ffi::OsString> = Vec::new();
    for arg in args {
        let list = arg.to_str().is_some_and(|t| {
            t.starts_with('-') && t.contains(',') && t.split(',').all(|v| v.trim().parse::<f64>().is_ok())
        });
        if let Some(prev) = out.last_mut()
            && list
            && prev
                .to_str()
                .is_some_and(|p| p.starts_with("--") && p.len() > 2 && !p.contains('='))
        {
            prev.push("=");
            prev.push(&arg);
            continue;
        }
        out.push(arg);
    }
    out
}

/// The exit status of a command's result, its error written once. Under an MPI launcher rank 0
/// speaks for all: a rank's own failure reaches it through `batch::Ranks::agree`, and failures every
/// rank meets alike (arguments, files) need no echo. A rank whose failure rank 0 reports ends
/// normally, so that the launcher does not abort the job before rank 0 has said why; rank 0's exit
/// status is the job's.
fn exit_code(result: anyhow::Result<()>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if orbitfield::batch::is_quiet_rank() => {
            if matches!(e.downcast_ref(), Some(orbitfield::batch::BatchError::Elsewhere)) {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }
        Err(e) => {
            // One write, so that a launcher forwarding several ranks' output does not split the line.
            let _ = std::io::Write::write_all(&mut std::io::stderr(), format!("error: {e:#}\n").as_bytes());
            ExitCode::from(1)
        }
    }
}

/// `setup` when every rank's setup succeeded; otherwise the first failure (rank 0 reports it). Every
/// rank must call it at the same point, before any other exchange.
fn agreed<T>(ranks: &orbitfield::batch::Ranks, setup: anyhow::Result<T>) -> anyhow::Result<T> {
    match setup {
        Ok(t) => {
            ranks.agree(Ok(()))?;
            Ok(t)
        }
        Err(e) if ranks.size() <= 1 => Err(e),
        Err(e) => match ranks.agree(Err(format!("{e:#}"))) {
            Err(agreed) => Err(agreed.into()),
            Ok(()) => Err(e),
        },
    }
}

/// A progress bar of `frames` on rank 0 (none elsewhere, and none when standard error is no terminal).
fn root_bar(ranks: &orbitfield::batch::Ranks, frames: usize) -> Option<indicatif::ProgressBar> {
    if ranks.is_root() {
        rdf::progress_bar(frames as u64)
    } else {
        None
    }
}

/// Runs `work` over this rank's share of `frames` (`batch::run_frames`), sizing rank 0's `bar` to its
/// share, and agrees on the outcome with the other ranks (the first failure comes back on rank 0).
fn run_dealt(
    ranks: &orbitfield::batch::Ranks,
    frames: &[usize],
    bar: &Option<indicatif::ProgressBar>,
    work: &mut dyn FnMut(&[usize]) -> Result<(), String>,
) -> anyhow::Result<()> {
    let result = orbitfield::batch::run_frames(ranks, frames, work, &mut |n| {
        if let Some(b) = bar {
            b.set_length(n as u64);
        }
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    ranks.agree(result.map(|_| ()))?;
    Ok(())
}

/// Opens `files` as `io::load` does and says the loader's observations (charges given to a protein,
/// atoms of unknown element, a trajectory cut short) once on standard error: by rank 0 alone under a
/// launcher.
fn load_noted(files: &[PathBuf]) -> anyhow::Result<orbitfield::io::load::System> {
    let system = orbitfield::io::load(files)?;
    say_load_notes(&system.warnings);
    Ok(system)
}

/// The loader's observations on standard error, by rank 0 alone under a launcher.
fn say_load_notes(warnings: &[String]) {
    if !orbitfield::batch::is_quiet_rank() {
        for w in warnings {
            eprintln!("note: {w}");
        }
    }
}

/// A note on standard error, naming the rank when there are several.
fn note(ranks: &orbitfield::batch::Ranks, text: &str) {
    if ranks.size() > 1 {
        eprintln!("note: rank {}: {text}", ranks.rank());
    } else {
        eprintln!("note: {text}");
    }
}

/// Expands file arguments that name no file and hold `*` or `?` in their file name (a quoted
/// `'qm/frame_*.molden'`, or any pattern on shells that do not expand them), and folders, as the viewer opens them (`io::open_paths`).
fn expand_file_patterns(cli: &mut Cli) -> anyhow::Result<()> {
    let files = match &mut cli.command {
        None => &mut cli.files,
        Some(Command::Info(a)) => &mut a.files,
        Some(Command::Rdf(a)) => &mut a.files,
        Some(Command::Hbonds(a)) => &mut a.files,
        Some(Command::Grid(a)) => &mut a.files,
        Some(Command::Points(a)) => &mut a.files,
        Some(Command::Ions(a)) => &mut a.files,
        Some(Command::Surface(a)) => &mut a.files,
        #[cfg(feature = "gui")]
        Some(Command::Render(a)) => &mut a.files,
        Some(Command::Convert(a)) => &mut a.files,
        Some(Command::Bench(_)) | Some(Command::IlsPath(_)) => return Ok(()),
        #[cfg(feature = "gui")]
        Some(Command::Run(_)) => return Ok(()),
    };
    *files = expand_patterns(files)?;
    Ok(())
}

/// Refuses an output (`-o`) whose folder does not exist or cannot be written before any work is
/// done: a long map or sampling run would otherwise end in that error and lose its result.
pub(crate) fn check_output_folder(output: Option<&std::path::Path>) -> anyhow::Result<()> {
    let Some(path) = output.filter(|p| p.as_os_str() != "-") else {
        return Ok(());
    };
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    if !dir.is_dir() {
        anyhow::bail!(
            "cannot write {}: the folder {} does not exist",
            path.display(),
            dir.display()
        );
    }
    let probe = dir.join(format!(".orbitfield-write-check-{}", std::process::id()));
    std::fs::File::create(&probe)
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e} (in {})", path.display(), dir.display()))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// The output a command writes (`-o`, or render's `--movie`).
fn output_of(cli: &Cli) -> Option<&std::path::Path> {
    match &cli.command {
        Some(Command::Rdf(a)) => a.output.as_deref(),
        Some(Command::Hbonds(a)) => a.output.as_deref(),
        Some(Command::Grid(a)) => Some(&a.output),
        Some(Command::Ions(a)) => Some(&a.output),
        Some(Command::Surface(a)) => Some(&a.output),
        #[cfg(feature = "gui")]
        Some(Command::Render(a)) => a.output.as_deref().or(a.movie.as_deref()),
        Some(Command::Convert(a)) => Some(&a.output),
        _ => None,
    }
}

/// The file of the PDB entry a `pdb:ID` argument names: from the cache, else downloaded into it
/// (said once on standard error, by rank 0 alone under a launcher).
fn fetch_argument(arg: &str) -> anyhow::Result<PathBuf> {
    use std::sync::atomic::{AtomicBool, AtomicU64};
    let source = orbitfield::io::fetch::Source::from_environment();
    let id = orbitfield::io::fetch::parse_pdb_id(arg)?;
    let quiet = orbitfield::batch::is_quiet_rank();
    if !quiet && std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        eprintln!(
            "note: fetching PDB entry {} from {}…",
            id.to_ascii_uppercase(),
            source.host()
        );
    }
    let (path, downloaded) = orbitfield::io::fetch::fetch_entry(
        &source,
        &id,
        &AtomicBool::new(false),
        &AtomicU64::new(0),
        &AtomicU64::new(0),
    )?;
    if !quiet {
        let how = if downloaded { "downloaded to" } else { "from the cache," };
        eprintln!("note: PDB entry {} {how} {}", id.to_ascii_uppercase(), path.display());
    }
    Ok(path)
}

pub(crate) fn expand_patterns(files: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let mut out = Vec::with_capacity(files.len());
    for f in files {
        let text = f.to_string_lossy();
        if !f.exists() && orbitfield::io::fetch::is_entry_argument(&text) {
            out.push(fetch_argument(&text)?);
            continue;
        }
        // Folders and patterns as the viewer opens them (`io::open_paths`: the files orbitfield
        // reads, in natural order).
        out.extend(orbitfield::io::open_paths::expand(std::slice::from_ref(f)).map_err(|e| anyhow::anyhow!(e))?);
    }
    Ok(out)
}

#[cfg(not(feature = "gui"))]
fn run_viewer(_cli: &Cli) -> anyhow::Result<()> {
    anyhow::bail!(
        "this orbitfield was built without the viewer (the gui feature); give a subcommand (--help lists them)"
    )
}

#[cfg(feature = "gui")]
fn run_viewer(cli: &Cli) -> anyhow::Result<()> {
    let size = cli.window_size.as_deref().map(render::parse_size).transpose()?;
    let (files, script) = script::split_script(&cli.files)?;
    orbitfield::app::window::run(orbitfield::app::window::ViewerOptions {
        files,
        screenshot: cli.screenshot.clone(),
        exit_after_frames: cli.exit_after_frames,
        size,
        no_settings: cli.no_settings,
        qm_region: cli.qm_region.clone(),
        session: cli.session.clone(),
        backends: cli.backend.as_deref().map(parse_backends).transpose()?,
        verbose: cli.verbose,
        script,
    })
}

/// `--backend vulkan,gl` as wgpu's backend set.
#[cfg(feature = "gui")]
fn parse_backends(list: &str) -> anyhow::Result<wgpu::Backends> {
    let backends = wgpu::Backends::from_comma_list(list);
    if backends.is_empty() {
        anyhow::bail!("--backend: expected a comma-separated list of vulkan, gl, metal, dx12, found '{list}'");
    }
    Ok(backends)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_patterns_and_folders_expand_in_natural_order() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        for n in ["f_2.molden", "f_10.molden", "f_1.molden", "other.xyz"] {
            std::fs::write(dir.path().join(n), "x").unwrap_or_else(|e| panic!("{e}"));
        }
        let files = vec![dir.path().join("other.xyz"), dir.path().join("f_*.molden")];
        let out = expand_patterns(&files).unwrap_or_else(|e| panic!("{e}"));
        let names: Vec<String> = out
            .iter()
            .map(|p| {
                p.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            })
            .collect();
        // Natural order, as the viewer opens them.
        assert_eq!(names, ["other.xyz", "f_1.molden", "f_2.molden", "f_10.molden"]);
        assert!(expand_patterns(&[dir.path().join("g_*.molden")]).is_err());
        // A folder gives its files in the same order (the viewer's `orbitfield scan/`).
        let sub = dir.path().join("scan");
        std::fs::create_dir(&sub).unwrap_or_else(|e| panic!("{e}"));
        for n in ["s_10.molden", "s_9.molden"] {
            std::fs::write(sub.join(n), "x").unwrap_or_else(|e| panic!("{e}"));
        }
        let out = expand_patterns(std::slice::from_ref(&sub)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(out, [sub.join("s_9.molden"), sub.join("s_10.molden")]);
    }
}
