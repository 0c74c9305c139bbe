//! `orbitfield rdf TOP TRAJ... --sel1 SEL --sel2 SEL`: g(r) between two selections over a trajectory,
//! over the ranks of an MPI job when started by `mpirun` (histograms summed on rank 0, see `batch`).

use anyhow::{Context, Result, bail};
use orbitfield::analysis::rdf::{RdfAccumulator, RdfSettings};
use orbitfield::batch::Ranks;
use orbitfield::io;
use orbitfield::jobs::DeviceChoice;
use orbitfield::jobs::rdf::{RdfWorkers, RunError, SelectionPair};
use orbitfield::model::select::Selection;
use orbitfield::model::{Frame, FrameRange};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;

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
    #[arg(long, default_value_t = 12.0, allow_negative_numbers = true)]
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
    #[command(flatten)]
    pub device: super::device::DeviceArgs,
    /// Output file (columns r g(r) n(r)); standard output when absent.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
}

/// What every rank prepares before the frames are dealt.
struct Prepared {
    system: io::System,
    frames: Vec<usize>,
    acc: RdfAccumulator,
    groups: Vec<u32>,
    preference: DeviceChoice,
    sel1: Selection,
    sel2: Selection,
}

fn prepare(args: &RdfArgs) -> Result<Prepared> {
    let preference = args
        .device
        .pool_preference(orbitfield::compute::placement::JobKind::Rdf)?;
    let sel1 = Selection::parse(&args.sel1).map_err(|e| anyhow::anyhow!("--sel1: {e}"))?;
    let sel2 = Selection::parse(&args.sel2).map_err(|e| anyhow::anyhow!("--sel2: {e}"))?;
    let range = FrameRange::parse(&args.frames).map_err(anyhow::Error::msg)?;
    let mut system = super::load_noted(&args.files)?;
    orbitfield::jobs::pair::share_decoding(&mut system.trajectory);
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
    let acc = RdfAccumulator::new(RdfSettings {
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
    Ok(Prepared {
        system,
        frames,
        acc,
        groups,
        preference,
        sel1,
        sel2,
    })
}

/// Under MPI the frames are dealt to the ranks, each histograms its share on its node's devices, and
/// the histograms are summed on rank 0, which writes the result.
pub fn run(args: &RdfArgs) -> Result<()> {
    let ranks = Ranks::from_environment()?;
    let Prepared {
        mut system,
        frames,
        mut acc,
        groups,
        preference,
        sel1,
        sel2,
    } = super::agreed(&ranks, prepare(args))?;
    let workers = RdfWorkers::with_devices(preference, ranks.device_selection());
    if preference.requires_gpu() && !workers.has_gpu() {
        let why = workers.notes().join("; ");
        let why = why.strip_prefix("using the CPU engine: ").unwrap_or(&why);
        match preference {
            DeviceChoice::Wgpu => bail!("--device wgpu: no usable wgpu adapter: {why}"),
            _ => bail!("--device gpu: no usable CUDA device: {why}"),
        }
    }
    for n in workers.notes() {
        if preference.requires_gpu() || workers.has_gpu() {
            super::note(&ranks, n);
        }
    }
    let dynamic = sel1.needs_positions() || sel2.needs_positions();
    let bar = super::root_bar(&ranks, frames.len());
    let mut idx: Option<SelectionPair> = None;
    let structure = &system.structure;
    let trajectory = &mut system.trajectory;
    let mut notes = Vec::new();
    let mut work = |block: &[usize]| -> Result<(), String> {
        let items = block.iter().map(|&f| -> Result<_> {
            let mut frame = Frame::default();
            trajectory
                .read_frame(f, &mut frame)
                .with_context(|| format!("reading frame {f}"))?;
            let (i1, i2) = match &idx {
                Some(x) if !dynamic => x.clone(),
                _ => {
                    let i1 = sel1.indices(structure, Some(&frame));
                    let i2 = sel2.indices(structure, Some(&frame));
                    if i1.is_empty() {
                        bail!("--sel1 '{}' selects no atoms", args.sel1);
                    }
                    if i2.is_empty() {
                        bail!("--sel2 '{}' selects no atoms", args.sel2);
                    }
                    let x = (Arc::new(i1), Arc::new(i2));
                    idx = Some(x.clone());
                    x
                }
            };
            Ok((f, frame, i1, i2))
        });
        let got = workers
            .run(&mut acc, Some(groups.clone()), items, |_, done| {
                if let Some(b) = &bar {
                    b.inc(1);
                    b.set_message(done.engine.clone());
                }
            })
            .map_err(|e| match e {
                RunError::Frames(e) => format!("{e:#}"),
                RunError::Rdf(e) => e.to_string(),
                RunError::WorkersGone => "the RDF workers stopped unexpectedly".to_string(),
            })?;
        notes.extend(got);
        Ok(())
    };
    if let Err(e) = super::run_dealt(&ranks, &frames, &bar, &mut work) {
        // A box that shrinks (NPT): the limit of the frames asked for, not only of the first one
        // found too narrow, so one more try is enough.
        let text = format!("{e:#}");
        if text.contains(orbitfield::analysis::rdf::HALF_BOX_WORDS)
            && let Some((half, f)) = narrowest_box(&mut system.trajectory, &frames)
        {
            bail!(
                "{text}\nover the {} frames asked for the box is narrowest at frame {f}: give --rmax {:.2} or less",
                frames.len(),
                (half * 100.0).floor() / 100.0
            );
        }
        return Err(e);
    }
    for n in notes {
        super::note(&ranks, &n);
    }
    let Some(acc) = ranks.reduce_to_root(acc)? else {
        return Ok(());
    };
    if acc.volume_sum_angstrom3 == 0.0 {
        eprintln!(
            "note: the trajectory has no periodic box, so g(r) is normalised by pair count and shell volume only"
        );
    }
    let rdf = acc.finish();
    let mut text = format!(
        "# g(r) of '{}' around '{}', {} frames, r_max {} A, {} bins\n",
        args.sel2, args.sel1, acc.frames, args.rmax, args.bins
    );
    if !args.exclude_same_residue && args.sel1.trim() == args.sel2.trim() {
        // As MDAnalysis's InterRDF without exclusion_block: each atom's pair with itself, at 0 A.
        text.push_str(
            "# the first bin counts each atom's pair with itself (r = 0), as MDAnalysis's InterRDF does; \
             --exclude-same-residue leaves them out\n",
        );
        eprintln!(
            "note: the first bin counts each atom's pair with itself (r = 0), as MDAnalysis's InterRDF does; \
             --exclude-same-residue leaves them out"
        );
    }
    text.push_str("# r_angstrom g n_cumulative\n");
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

/// Half the smallest box width over `frames` (the largest r_max all of them allow) and the frame it
/// is at; `None` where the frames have no box or cannot be read.
fn narrowest_box(trajectory: &mut orbitfield::model::Trajectory, frames: &[usize]) -> Option<(f64, usize)> {
    let mut frame = Frame::default();
    let mut best: Option<(f64, usize)> = None;
    for &f in frames {
        trajectory.read_frame(f, &mut frame).ok()?;
        let half = orbitfield::analysis::rdf::half_min_width(&frame.cell?)?;
        if best.is_none_or(|(b, _)| half < b) {
            best = Some((half, f));
        }
    }
    best
}

/// A terminal progress bar, or none when standard error is not a terminal.
/// A spinner with the elapsed time for one long step that reports no progress of its own (none when
/// standard error is no terminal).
pub fn spinner(message: String) -> Option<indicatif::ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::new_spinner();
    if let Ok(style) = indicatif::ProgressStyle::with_template("{spinner} {msg} ({elapsed})") {
        bar.set_style(style);
    }
    bar.set_message(message);
    bar.enable_steady_tick(std::time::Duration::from_millis(200));
    Some(bar)
}

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
