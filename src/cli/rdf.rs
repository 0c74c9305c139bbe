//! `orbitfield rdf TOP TRAJ... --sel1 SEL --sel2 SEL`: g(r) between two selections over a trajectory.

use anyhow::{Context, Result, bail};
use orbitfield::analysis::rdf::{RdfAccumulator, RdfSettings};
use orbitfield::io;
use orbitfield::model::select::Selection;
use orbitfield::model::{Frame, FrameRange};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct RdfArgs {
    /// Topology followed by trajectory files (as for `info`).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// First selection (reference atoms).
    #[arg(long)]
    pub sel1: String,
    /// Second selection (counted around the first).
    #[arg(long)]
    pub sel2: String,
    /// Largest distance in Angstrom.
    #[arg(long, default_value_t = 12.0)]
    pub rmax: f64,
    /// Number of histogram bins over (0, rmax].
    #[arg(long, default_value_t = 120)]
    pub bins: usize,
    /// Frames: all, N, A:B or A:B:S.
    #[arg(long, default_value = "all")]
    pub frames: String,
    /// Skip pairs of atoms in the same residue.
    #[arg(long)]
    pub exclude_same_residue: bool,
    /// Where to compute: cpu, gpu or auto.
    #[arg(long, default_value = "auto")]
    pub device: String,
    /// Output file (columns r g(r) n(r)); standard output when absent.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
}

pub fn run(args: &RdfArgs) -> Result<()> {
    match args.device.as_str() {
        "cpu" | "auto" => {}
        "gpu" => {
            eprintln!("note: the RDF runs on the CPU engine in this version; --device gpu is not available for it yet")
        }
        other => bail!("--device must be cpu, gpu or auto, not '{other}'"),
    }
    let sel1 = Selection::parse(&args.sel1).map_err(|e| anyhow::anyhow!("--sel1: {e}"))?;
    let sel2 = Selection::parse(&args.sel2).map_err(|e| anyhow::anyhow!("--sel2: {e}"))?;
    let range = FrameRange::parse(&args.frames).map_err(anyhow::Error::msg)?;
    let mut system = io::load(&args.files)?;
    let frames = range
        .indices(system.trajectory.n_frames())
        .map_err(anyhow::Error::msg)?;
    if frames.is_empty() {
        bail!(
            "the frame range '{}' selects no frames (the trajectory has {})",
            args.frames,
            system.trajectory.n_frames()
        );
    }
    let mut acc = RdfAccumulator::new(RdfSettings {
        r_max_angstrom: args.rmax,
        bins: args.bins,
        exclude_same_group: args.exclude_same_residue,
    })?;
    let groups: Vec<u32> = {
        let starts = system.structure.residue_starts();
        let mut g = vec![0u32; system.structure.len()];
        for (r, w) in starts.windows(2).enumerate() {
            g[w[0]..w[1]].iter_mut().for_each(|x| *x = r as u32);
        }
        g
    };
    let dynamic = sel1.needs_positions() || sel2.needs_positions();
    let mut frame = Frame::default();
    let mut idx1 = Vec::new();
    let mut idx2 = Vec::new();
    let bar = progress_bar(frames.len() as u64);
    for (n, &f) in frames.iter().enumerate() {
        system
            .trajectory
            .read_frame(f, &mut frame)
            .with_context(|| format!("reading frame {f}"))?;
        if n == 0 || dynamic {
            idx1 = sel1.indices(&system.structure, Some(&frame));
            idx2 = sel2.indices(&system.structure, Some(&frame));
            if idx1.is_empty() {
                bail!("--sel1 '{}' selects no atoms", args.sel1);
            }
            if idx2.is_empty() {
                bail!("--sel2 '{}' selects no atoms", args.sel2);
            }
        }
        acc.add_frame(f, &frame, &idx1, &idx2, Some(&groups))
            .with_context(|| format!("frame {f}"))?;
        if let Some(b) = &bar {
            b.inc(1);
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    if acc.volume_sum_angstrom3 == 0.0 {
        eprintln!(
            "note: the trajectory has no periodic box, so g(r) is normalised by pair count and shell volume only"
        );
    }
    let rdf = acc.finish();
    let mut text = format!(
        "# g(r) of '{}' around '{}', {} frames, r_max {} A, {} bins\n# r_angstrom g n_cumulative\n",
        args.sel2, args.sel1, acc.frames, args.rmax, args.bins
    );
    for k in 0..rdf.g.len() {
        text.push_str(&format!(
            "{:.5} {:.6} {:.6}\n",
            rdf.r_angstrom[k], rdf.g[k], rdf.n_cumulative[k]
        ));
    }
    match &args.output {
        Some(path) => {
            io::write_atomically(path, text.as_bytes()).with_context(|| format!("writing {}", path.display()))?
        }
        None => std::io::stdout().write_all(text.as_bytes())?,
    }
    Ok(())
}

/// A terminal progress bar, or none when standard error is not a terminal.
pub fn progress_bar(len: u64) -> Option<indicatif::ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::new(len);
    if let Ok(style) = indicatif::ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} frames, {eta} left") {
        bar.set_style(style.progress_chars("=> "));
    }
    Some(bar)
}
