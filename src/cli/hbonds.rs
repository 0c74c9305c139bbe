//! `orbitfield hbonds TOP [TRAJ...] --sel SEL [--sel2 SEL]`: the hydrogen bonds of a trajectory
//! (`analysis::hbonds`), as VMD's HBonds plugin and MDAnalysis's `HydrogenBondAnalysis` report them:
//! each donor–acceptor bond with the fraction of frames it is present in (its occupancy), or with
//! `--per-frame` the number of bonds in each frame.

use anyhow::{Context, Result, bail};
use orbitfield::analysis::hbonds::{HBondCriteria, find};
use orbitfield::io;
use orbitfield::model::select::Selection;
use orbitfield::model::{Frame, FrameRange, Structure};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct HbondsArgs {
    /// Topology followed by trajectory files (as for `info`).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// The atoms among which bonds are found (donor, hydrogen and acceptor all in it).
    #[arg(long, default_value = "all")]
    pub sel: String,
    /// A second selection: then only bonds between --sel and --sel2 (a donor in one, its acceptor in
    /// the other), as VMD's HBonds plugin's two selections.
    #[arg(long)]
    pub sel2: Option<String>,
    /// Frames: all, N, A:B or A:B:S.
    #[arg(long, default_value = "all")]
    pub frames: String,
    /// Largest donor-acceptor distance in Angstrom (with hydrogens).
    #[arg(long, default_value_t = 3.0, allow_negative_numbers = true)]
    pub distance: f32,
    /// Smallest donor-hydrogen...acceptor angle in degrees (180 is linear).
    #[arg(long, default_value_t = 150.0, allow_negative_numbers = true)]
    pub angle: f32,
    /// Largest donor-acceptor distance in Angstrom when the atoms have no hydrogens.
    #[arg(long, default_value_t = 3.5, allow_negative_numbers = true)]
    pub heavy_distance: f32,
    /// Print the number of bonds in each frame instead of each bond's occupancy.
    #[arg(long)]
    pub per_frame: bool,
    /// Output file; standard output when absent.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
}

/// "A:LYS13:NZ" (chain, residue name and number, atom name; no chain when the file has none).
fn atom_label(s: &Structure, i: usize) -> String {
    let chain = s.chains.get(i).map(|c| c.as_str().trim()).unwrap_or("");
    let seg = s.segids.get(i).map(|c| c.as_str().trim()).unwrap_or("");
    let group = if !chain.is_empty() { chain } else { seg };
    let res = format!(
        "{}{}:{}",
        s.resnames.get(i).map(|r| r.as_str()).unwrap_or("?"),
        s.resids.get(i).copied().unwrap_or(0),
        s.names.get(i).map(|n| n.as_str()).unwrap_or("?")
    );
    if group.is_empty() {
        res
    } else {
        format!("{group}:{res}")
    }
}

pub fn run(args: &HbondsArgs) -> Result<()> {
    let criteria = HBondCriteria {
        distance_angstrom: args.distance,
        angle_degrees: args.angle,
        heavy_distance_angstrom: args.heavy_distance,
    };
    criteria.check().map_err(anyhow::Error::msg)?;
    let sel1 = Selection::parse(&args.sel).map_err(|e| anyhow::anyhow!("--sel: {e}"))?;
    let sel2 = match &args.sel2 {
        Some(t) => Some(Selection::parse(t).map_err(|e| anyhow::anyhow!("--sel2: {e}"))?),
        None => None,
    };
    let range = FrameRange::parse(&args.frames).map_err(anyhow::Error::msg)?;
    let mut system = super::load_noted(&args.files)?;
    let n_frames = system.trajectory.n_frames();
    let frames = range.indices(n_frames).map_err(anyhow::Error::msg)?;
    if frames.is_empty() {
        bail!(
            "the frame range '{}' selects no frames (the files have {n_frames})",
            args.frames
        );
    }
    let s = &system.structure;
    let dynamic = sel1.needs_positions() || sel2.as_ref().is_some_and(Selection::needs_positions);
    let bar = super::rdf::progress_bar(frames.len() as u64);
    let mut frame = Frame::default();
    let mut masks: Option<(Vec<bool>, Option<Vec<bool>>)> = None;
    // Bonds by (donor, hydrogen, acceptor): frames present.
    let mut seen: BTreeMap<(u32, Option<u32>, u32), usize> = BTreeMap::new();
    let mut per_frame = Vec::with_capacity(frames.len());
    let mut with_hydrogens = true;
    for &f in &frames {
        system
            .trajectory
            .read_frame(f, &mut frame)
            .with_context(|| format!("reading frame {f}"))?;
        if masks.is_none() || dynamic {
            let m1 = sel1.evaluate(s, Some(&frame));
            if !m1.iter().any(|&x| x) {
                bail!("--sel '{}' selects no atoms", args.sel);
            }
            let m2 = match &sel2 {
                Some(sel) => {
                    let m = sel.evaluate(s, Some(&frame));
                    if !m.iter().any(|&x| x) {
                        bail!("--sel2 '{}' selects no atoms", args.sel2.as_deref().unwrap_or(""));
                    }
                    Some(m)
                }
                None => None,
            };
            masks = Some((m1, m2));
        }
        let Some((m1, m2)) = masks.as_ref() else {
            continue;
        };
        let picked: Vec<bool> = match m2 {
            Some(m2) => m1.iter().zip(m2).map(|(a, b)| *a || *b).collect(),
            None => m1.clone(),
        };
        let set = find(
            s,
            &frame.positions_angstrom,
            &picked,
            &s.bonds,
            frame.cell.as_ref(),
            &criteria,
        );
        with_hydrogens = set.with_hydrogens;
        let mut count = 0;
        for b in set.bonds {
            let (d, a) = (b.donor as usize, b.acceptor as usize);
            if let Some(m2) = m2 {
                let across = (m1[d] && m2[a]) || (m2[d] && m1[a]);
                if !across {
                    continue;
                }
            }
            count += 1;
            *seen.entry((b.donor, b.hydrogen, b.acceptor)).or_insert(0) += 1;
        }
        per_frame.push((f, count));
        if let Some(b) = &bar {
            b.inc(1);
        }
    }
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    let between = match &args.sel2 {
        Some(t) => format!("between '{}' and '{t}'", args.sel),
        None => format!("among '{}'", args.sel),
    };
    let mut text = format!(
        "# hydrogen bonds {between}, {} frames; {}\n",
        frames.len(),
        criteria.describe(with_hydrogens)
    );
    if args.per_frame {
        text.push_str("# frame bonds\n");
        for (f, c) in &per_frame {
            text.push_str(&format!("{f} {c}\n"));
        }
    } else {
        text.push_str("# occupancy_percent frames donor hydrogen acceptor donor_index hydrogen_index acceptor_index\n");
        let mut rows: Vec<_> = seen.into_iter().collect();
        rows.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        for ((d, h, a), n) in rows {
            let pct = 100.0 * n as f64 / frames.len() as f64;
            let (hl, hi) = match h {
                Some(h) => (atom_label(s, h as usize), h.to_string()),
                None => ("-".to_string(), "-".to_string()),
            };
            text.push_str(&format!(
                "{pct:.1} {n} {} {hl} {} {d} {hi} {a}\n",
                atom_label(s, d as usize),
                atom_label(s, a as usize)
            ));
        }
    }
    match &args.output {
        Some(path) => {
            io::write_atomically(path, text.as_bytes()).with_context(|| format!("writing {}", path.display()))?
        }
        None => std::io::stdout().write_all(text.as_bytes())?,
    }
    Ok(())
}
