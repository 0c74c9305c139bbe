//! `orbitfield convert FILE... -o OUT.pdb|gro|xyz|dcd|xtc|trr|nc [--frames A:B:S] [--sel SEL]
//! [--whole] [--fit [SEL]]`: writes the system that FILE... form (topology + trajectories) to another
//! format, optionally a subset of atoms and frames, optionally with molecules made whole across the
//! box and each frame fitted onto frame 0 (`analysis::fit`).
//!
//! Loads through `io::load`, picks atoms with the selection language and frames with the usual
//! range syntax, and hands the work to `io::write::write_frames` (atomic: nothing is left behind
//! on error), with a progress bar on a terminal.

use super::rdf::progress_bar;
use anyhow::{Context, Result, bail};
use orbitfield::analysis::fit::FrameFit;
use orbitfield::io;
use orbitfield::model::FrameRange;
use orbitfield::model::select::Selection;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct ConvertArgs {
    /// Files that together form the system: a topology or structure, then trajectories.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Output file; its extension picks the format (pdb, pqr: charges and radii, gro, xyz, dcd, xtc,
    /// trr, nc).
    #[arg(short = 'o', long = "output")]
    pub output: PathBuf,
    /// Frames: all, N, A:B or A:B:S (0-based, end exclusive).
    #[arg(long, default_value = "all")]
    pub frames: String,
    /// Atoms to write (selection language, e.g. "protein and name CA"); all when absent.
    #[arg(long)]
    pub sel: Option<String>,
    /// Make molecules written in pieces across the periodic box whole (each atom moved by whole
    /// box vectors beside its bonded neighbours, as GROMACS's `trjconv -pbc mol` without the
    /// centring); frames are written as read otherwise.
    #[arg(long)]
    pub whole: bool,
    /// Fit each frame onto frame 0 by these atoms (least squares, no reflection; as GROMACS's
    /// `trjconv -fit rot+trans`): a selection, or nothing for a protein's C-alpha atoms (else the
    /// heavy atoms). Fitted frames are written without their periodic box.
    #[arg(long, value_name = "SEL", num_args = 0..=1, default_missing_value = "")]
    pub fit: Option<String>,
}

pub fn run(args: &ConvertArgs) -> Result<()> {
    // Refuse an unknown output format before reading anything.
    let out_format = io::write::OutFormat::from_path(&args.output)?;
    let range = FrameRange::parse(&args.frames).map_err(anyhow::Error::msg)?;
    let selection = args
        .sel
        .as_deref()
        .map(|s| Selection::parse(s).map_err(|e| anyhow::anyhow!("--sel: {e}")))
        .transpose()?;
    let mut system = io::load(&args.files)?;
    orbitfield::jobs::pair::share_decoding(&mut system.trajectory);
    for w in &system.warnings {
        // Charges taken from a table concern only a PQR file, the one output that holds them.
        if w.starts_with(orbitfield::model::charges::NOTE_START) && out_format != io::write::OutFormat::Pqr {
            continue;
        }
        eprintln!("warning: {w}");
    }
    if args.whole {
        let n_atoms = system.structure.len();
        if system.structure.bonds.is_empty() {
            bail!("--whole needs bonds, and {} gives none", system.trajectory.origin);
        }
        if let Some(note) = io::load::make_whole(&system.structure.bonds, n_atoms, &mut system.trajectory) {
            eprintln!("note: {note}");
        }
    }
    let fit = match args.fit.as_deref() {
        None => None,
        Some(text) => {
            let sel = Some(text.trim()).filter(|t| !t.is_empty());
            let fit =
                FrameFit::new(&system.structure, &mut system.trajectory, sel).map_err(|e| anyhow::anyhow!("--{e}"))?;
            eprintln!(
                "note: frames fitted onto frame 0 by {} atoms ({}), written without a periodic box",
                fit.n_atoms(),
                fit.selection
            );
            Some(fit)
        }
    };
    let n_frames = system.trajectory.n_frames();
    let frames = range.indices(n_frames).map_err(anyhow::Error::msg)?;
    if frames.is_empty() {
        bail!(
            "the frame range '{}' selects no frames (the system has {n_frames})",
            args.frames
        );
    }
    let atoms = match &selection {
        None => None,
        Some(sel) => {
            let first = system.trajectory.frame(frames[0]).context("reading the first frame")?;
            let idx = sel.indices(&system.structure, Some(&first));
            if idx.is_empty() {
                bail!("--sel '{}' selects no atoms", sel.text());
            }
            Some(idx)
        }
    };
    if matches!(out_format, io::write::OutFormat::Pdb | io::write::OutFormat::Pqr) {
        let notes = [
            io::write::resid_wrap_note(&system.structure, atoms.as_deref()),
            io::write::cut_names_note(&system.structure, atoms.as_deref()),
        ];
        for note in notes.into_iter().flatten() {
            eprintln!("note: {note}");
        }
    }
    let bar = progress_bar(frames.len() as u64);
    if let Some(b) = &bar {
        b.set_message("writing");
    }
    let written = io::write::write_frames_mapped(
        &args.output,
        &system.structure,
        &mut system.trajectory,
        atoms.as_deref(),
        &frames,
        &|frame| {
            if let Some(f) = &fit {
                f.apply(frame);
            }
        },
        &mut |n| {
            if let Some(b) = &bar {
                b.set_position(n as u64);
            }
            std::ops::ControlFlow::Continue(())
        },
    )?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let n_atoms = atoms.as_ref().map_or(system.structure.len(), Vec::len);
    println!(
        "wrote {} ({n_atoms} atoms, {written} frame{})",
        args.output.display(),
        if written == 1 { "" } else { "s" }
    );
    Ok(())
}
