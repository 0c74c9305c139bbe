//! Batch work over trajectory frames spread across processes: the frame range is the unit of work,
//! partial results combine by an associative reduction, and rank 0 writes what is combined.
//!
//! Owns the process group ([`Ranks`]: one process, or the MPI world under `mpirun`/`srun` when the
//! crate is built with the `mpi` feature), the dealing of frames to ranks by measured cost
//! ([`split_even`], [`split_weighted`], [`run_frames`]), the agreement on failure ([`Ranks::agree`]:
//! every rank learns whether all succeeded, rank 0 gets the first failure's message), the tree
//! reduction of partial results in rank order ([`Ranks::reduce_to_root`] over [`Partial`]: potential
//! map accumulators and RDF histograms as flat buffers) and the staged per-frame files that are renamed
//! only when every rank succeeded ([`StagedFiles`]). The CLI's `grid`, `rdf` and `render` commands
//! call it; everything but the MPI transport (`mpi.rs`, behind the feature) is plain Rust and is
//! unit-tested without MPI.
//!
//! Dealing: with one rank the frames run in order, as without MPI. With several, the frames are first
//! cut into equal contiguous blocks and each rank runs the first two frames of its block (the probe),
//! timing the second (the first carries kernel compilation and cold caches); the probe times are
//! gathered, and the remaining frames are cut into contiguous blocks in rank order with sizes
//! proportional to each rank's measured speed (speeds within 1.5x of the fastest count as equal), so a
//! rank with a GPU takes more frames than a CPU-only one. Contiguous blocks keep trajectory reads sequential and make the rank-order reduction
//! fold the frames nearly in order.

#[cfg(feature = "mpi")]
mod mpi;

use crate::analysis::esp_series::MapAccumulator;
use crate::analysis::rdf::RdfAccumulator;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Why a batch step failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BatchError {
    /// A rank's work failed; reported once, by rank 0.
    #[error("{}{message}", rank_prefix(*rank, *size))]
    Rank { rank: usize, size: usize, message: String },
    /// Another rank failed: rank 0 reports it, this rank stays quiet.
    #[error("another rank failed (rank 0 reports why)")]
    Elsewhere,
    /// The process group itself could not be set up.
    #[error("{0}")]
    Launch(String),
    /// A partial result that does not fit the others (different lattice or settings).
    #[error("partial results do not match: {0}")]
    Partial(String),
}

fn rank_prefix(rank: usize, size: usize) -> String {
    if size > 1 {
        format!("rank {rank} of {size}: ")
    } else {
        String::new()
    }
}

/// Environment variables a launcher (Open MPI's mpirun, MPICH's hydra, Slurm's srun with PMI/PMIx)
/// sets in every process it starts, holding the process's rank.
const RANK_VARIABLES: [&str; 3] = ["OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"];
/// The same for the number of processes (Slurm's for srun with PMIx, which sets no PMIx size).
const SIZE_VARIABLES: [&str; 3] = ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_STEP_NUM_TASKS"];

/// This process's rank and the number of processes as the launcher's environment says, when a
/// launcher started this process (a rank variable is set).
pub fn launcher_rank_size() -> Option<(usize, usize)> {
    let read = |names: &[&str]| {
        names
            .iter()
            .find_map(|n| std::env::var(n).ok().and_then(|v| v.trim().parse::<usize>().ok()))
    };
    let rank = read(&RANK_VARIABLES)?;
    let size = read(&SIZE_VARIABLES).unwrap_or(rank + 1).max(rank + 1);
    Some((rank, size))
}

/// True when this process is one of several a launcher started and is not rank 0 (its errors are
/// reported by rank 0, so it prints none).
pub fn is_quiet_rank() -> bool {
    launcher_rank_size().is_some_and(|(r, s)| s > 1 && r > 0)
}

/// The processes working on one batch command: this one alone, or the MPI world.
pub struct Ranks {
    rank: usize,
    size: usize,
    local_rank: usize,
    local_size: usize,
    #[cfg(feature = "mpi")]
    comm: Option<mpi::Comm>,
}

impl Ranks {
    /// This process alone.
    pub fn single() -> Ranks {
        Ranks {
            rank: 0,
            size: 1,
            local_rank: 0,
            local_size: 1,
            #[cfg(feature = "mpi")]
            comm: None,
        }
    }

    /// The MPI world when a launcher started this process (and the crate has the `mpi` feature),
    /// else this process alone. Started several times by a launcher without the feature, it refuses
    /// (each process would otherwise do all the work and write the same files).
    pub fn from_environment() -> Result<Ranks, BatchError> {
        let launched = launcher_rank_size();
        #[cfg(feature = "mpi")]
        if launched.is_some() {
            let comm = mpi::Comm::init().map_err(BatchError::Launch)?;
            return Ok(Ranks {
                rank: comm.rank(),
                size: comm.size(),
                local_rank: comm.local_rank(),
                local_size: comm.local_size(),
                comm: Some(comm),
            });
        }
        if let Some((_, size)) = launched
            && size > 1
        {
            return Err(BatchError::Launch(format!(
                "started as one of {size} processes, but this orbitfield was built without MPI: rebuild it with \
                 `cargo build --release --features mpi`, or run it as one process"
            )));
        }
        Ok(Ranks::single())
    }

    pub fn rank(&self) -> usize {
        self.rank
    }

    pub fn size(&self) -> usize {
        self.size
    }

    pub fn is_root(&self) -> bool {
        self.rank == 0
    }

    /// This rank's place among the ranks on its node (shared memory), for choosing devices.
    pub fn local_rank(&self) -> usize {
        self.local_rank
    }

    /// Ranks on this node.
    pub fn local_size(&self) -> usize {
        self.local_size
    }

    /// Every rank's `value`, in rank order, on every rank.
    pub fn all_gather_f64(&self, value: f64) -> Vec<f64> {
        #[cfg(feature = "mpi")]
        if let Some(c) = &self.comm {
            return c.all_gather_f64(value);
        }
        vec![value]
    }

    /// Every rank learns whether all of them succeeded; rank 0 gets the message of the lowest failing
    /// rank ([`BatchError::Rank`]), the others [`BatchError::Elsewhere`] (or their own failure).
    pub fn agree(&self, local: Result<(), String>) -> Result<(), BatchError> {
        #[cfg(feature = "mpi")]
        if let Some(c) = &self.comm {
            let failed = c.all_gather_f64(if local.is_err() { 1.0 } else { 0.0 });
            let failing: Vec<usize> = (0..self.size)
                .filter(|&r| failed.get(r).is_some_and(|&f| f != 0.0))
                .collect();
            let Some(&first) = failing.first() else {
                return Ok(());
            };
            if self.rank != 0 {
                if let Err(message) = &local {
                    c.send_bytes(0, message.as_bytes());
                }
                return Err(BatchError::Elsewhere);
            }
            let mut first_message = String::new();
            for &r in &failing {
                let text = if r == 0 {
                    local.as_ref().err().cloned().unwrap_or_default()
                } else {
                    String::from_utf8_lossy(&c.receive_bytes(r)).into_owned()
                };
                if r == first {
                    first_message = text;
                }
            }
            return Err(BatchError::Rank {
                rank: first,
                size: self.size,
                message: first_message,
            });
        }
        local.map_err(|message| BatchError::Rank {
            rank: 0,
            size: 1,
            message,
        })
    }

    /// Combines every rank's `local` partial on rank 0 by a binary tree in rank order (rank r folds in
    /// rank r + 2^k), so rank 0 holds at most two partials at a time and the reduction takes
    /// ceil(log2 ranks) transfer steps. Returns the total on rank 0 and `None` elsewhere. Call it only
    /// after [`Ranks::agree`] said every rank succeeded.
    pub fn reduce_to_root<P: Partial>(&self, local: P) -> Result<Option<P>, BatchError> {
        #[cfg(feature = "mpi")]
        if let Some(c) = &self.comm {
            let t0 = Instant::now();
            let mut moved = 0usize;
            let mut acc = Some(local);
            let mut error: Option<String> = None;
            let mut step = 1;
            while step < self.size {
                if self.rank % (2 * step) == step {
                    // Send up and stop; an empty buffer tells the receiver that this branch failed.
                    let bytes = acc
                        .take()
                        .map(|p| p.to_bytes())
                        .filter(|_| error.is_none())
                        .unwrap_or_default();
                    c.send_bytes(self.rank - step, &bytes);
                    moved += bytes.len();
                    break;
                }
                if self.rank.is_multiple_of(2 * step) && self.rank + step < self.size {
                    let bytes = c.receive_bytes(self.rank + step);
                    moved += bytes.len();
                    if let Some(a) = acc.as_mut()
                        && error.is_none()
                    {
                        if bytes.is_empty() {
                            error = Some(format!("rank {} sent no partial result", self.rank + step));
                        } else if let Err(e) = a.merge_bytes(&bytes) {
                            error = Some(e);
                        }
                    }
                }
                step *= 2;
            }
            tracing::debug!(
                target: "orbitfield::batch",
                "rank {}: reduction moved {moved} bytes in {:.3} s (waiting included)",
                self.rank,
                t0.elapsed().as_secs_f64()
            );
            if self.rank != 0 {
                return Ok(None);
            }
            return match error {
                Some(e) => Err(BatchError::Partial(e)),
                None => Ok(acc),
            };
        }
        Ok(Some(local))
    }

    /// The CUDA devices for this rank's worker pool: `None` (the pool's own choice:
    /// `ORBITFIELD_DEVICES`, else all) when `ORBITFIELD_DEVICES` is set or the rank is alone on its
    /// node, else its share of the node's devices ([`Ranks::local_devices`]).
    pub fn device_selection(&self) -> Option<Vec<usize>> {
        let listed = std::env::var_os("ORBITFIELD_DEVICES").is_some_and(|v| !v.is_empty());
        if self.local_size <= 1 || listed {
            return None;
        }
        Some(self.local_devices(crate::compute::cuda::device_count()))
    }

    /// The CUDA devices this rank should use out of `count` on its node: every local_size-th one
    /// starting at its local rank (all of them when it is alone on the node; none when the node has
    /// more ranks than devices and this rank is past the last device).
    pub fn local_devices(&self, count: usize) -> Vec<usize> {
        share_devices(count, self.local_rank, self.local_size)
    }
}

/// Devices `local_rank` takes of `count` shared by `local_size` ranks.
pub fn share_devices(count: usize, local_rank: usize, local_size: usize) -> Vec<usize> {
    let stride = local_size.max(1);
    (0..count).filter(|d| d % stride == local_rank).collect()
}

/// `n` items cut into `parts` contiguous blocks of sizes differing by at most one (earlier blocks
/// larger), in order.
pub fn split_even(n: usize, parts: usize) -> Vec<Range<usize>> {
    split_weighted(n, &vec![1.0; parts.max(1)])
}

/// `n` items cut into contiguous blocks in order, one per weight, with sizes proportional to the
/// weights (largest remainders get the leftover items, ties to the earlier block). Weights that are
/// not finite or not positive count as zero; when none is positive the split is even.
pub fn split_weighted(n: usize, weights: &[f64]) -> Vec<Range<usize>> {
    if weights.is_empty() {
        return Vec::new();
    }
    let clean: Vec<f64> = weights
        .iter()
        .map(|&w| if w.is_finite() && w > 0.0 { w } else { 0.0 })
        .collect();
    let total: f64 = clean.iter().sum();
    let clean = if total > 0.0 { clean } else { vec![1.0; weights.len()] };
    let total: f64 = clean.iter().sum();
    let exact: Vec<f64> = clean.iter().map(|w| w / total * n as f64).collect();
    let mut sizes: Vec<usize> = exact.iter().map(|x| x.floor() as usize).collect();
    let assigned: usize = sizes.iter().sum();
    let mut order: Vec<usize> = (0..clean.len()).collect();
    // Largest fractional part first; ties keep rank order (the sort is stable).
    order.sort_by(|&a, &b| {
        let fa = exact.get(a).map_or(0.0, |x| x - x.floor());
        let fb = exact.get(b).map_or(0.0, |x| x - x.floor());
        fb.total_cmp(&fa)
    });
    for &i in order.iter().cycle().take(n.saturating_sub(assigned)) {
        if let Some(s) = sizes.get_mut(i) {
            *s += 1;
        }
    }
    let mut start = 0;
    sizes
        .into_iter()
        .map(|s| {
            let r = start..start + s;
            start += s;
            r
        })
        .collect()
}

/// Frames each rank runs first, timing the last of them (the first may carry one-off costs: kernel
/// compilation, caches).
pub const PROBE_FRAMES: usize = 2;

/// Speeds within this factor of the fastest rank's count as equal: one timed frame on a busy node is
/// noisy, and ranks on alike hardware should get even shares, while a GPU rank (many times faster than
/// a CPU rank) still takes more.
pub const SPEED_TOLERANCE: f64 = 1.5;

/// The probe frames (positions in the frame list) of each rank: the first [`PROBE_FRAMES`] of its even
/// block.
pub fn probe_blocks(n: usize, ranks: usize) -> Vec<Range<usize>> {
    split_even(n, ranks.max(1))
        .into_iter()
        .map(|r| r.start..r.end.min(r.start + PROBE_FRAMES))
        .collect()
}

/// Which frames (as positions in the frame list) each rank computes after the probes: the probe
/// positions ([`probe_blocks`]) are taken out, and the rest is split by the ranks' speeds, one over
/// the probe's seconds (speeds within [`SPEED_TOLERANCE`] of the fastest count as the fastest). A
/// rank whose probe failed (`NaN`) gets nothing more; a rank that had no probe (more ranks than
/// frames) gets the mean speed of the others.
pub fn deal_after_probe(n: usize, probe_seconds: &[f64]) -> (Vec<Option<usize>>, Vec<Vec<usize>>) {
    let ranks = probe_seconds.len().max(1);
    let blocks = probe_blocks(n, ranks);
    let probed: Vec<usize> = blocks.iter().flat_map(|r| r.clone()).collect();
    let probes: Vec<Option<usize>> = blocks
        .iter()
        .map(|r| if r.is_empty() { None } else { Some(r.start) })
        .collect();
    let rest: Vec<usize> = (0..n).filter(|i| !probed.contains(i)).collect();
    let speeds: Vec<Option<f64>> = probe_seconds
        .iter()
        .zip(&probes)
        .map(|(&s, p)| match p {
            None => None,
            Some(_) if s.is_finite() && s >= 0.0 => Some(1.0 / s.max(1e-6)),
            Some(_) => Some(0.0),
        })
        .collect();
    let known: Vec<f64> = speeds.iter().flatten().copied().filter(|&v| v > 0.0).collect();
    let mean = if known.is_empty() {
        1.0
    } else {
        known.iter().sum::<f64>() / known.len() as f64
    };
    let fastest = known.iter().copied().fold(0.0, f64::max);
    let weights: Vec<f64> = speeds
        .iter()
        .map(|s| s.unwrap_or(mean))
        .map(|v| if v * SPEED_TOLERANCE >= fastest { fastest } else { v })
        .collect();
    let blocks = split_weighted(rest.len(), &weights)
        .into_iter()
        .map(|r| rest.get(r).map(|s| s.to_vec()).unwrap_or_default())
        .collect();
    (probes, blocks)
}

/// Runs `work` on this rank's share of `frames` (values passed through; see the module docs for the
/// dealing) and returns the frames it ran, in order, or this rank's first failure (after which it runs
/// nothing more but still takes part in the probe exchange). `work` gets blocks of frames (with one
/// rank: all of them at once; with several: the probe frame, then the rest of this rank's share), so
/// it can keep its devices busy over a block. `on_plan(n)` tells how many frames this rank will run
/// in all, before the block holding most of them. Every rank must call it with the same frames.
pub fn run_frames(
    ranks: &Ranks,
    frames: &[usize],
    work: &mut dyn FnMut(&[usize]) -> Result<(), String>,
    on_plan: &mut dyn FnMut(usize),
) -> Result<Vec<usize>, String> {
    if ranks.size() <= 1 {
        on_plan(frames.len());
        work(frames)?;
        return Ok(frames.to_vec());
    }
    let probe: Vec<usize> = probe_blocks(frames.len(), ranks.size())
        .get(ranks.rank())
        .and_then(|r| frames.get(r.clone()))
        .map(<[usize]>::to_vec)
        .unwrap_or_default();
    let mut failure: Option<String> = None;
    let mut done = Vec::new();
    // Seconds of the last probe frame; infinite without one, NaN on failure.
    let mut seconds = f64::INFINITY;
    for &f in &probe {
        let t0 = Instant::now();
        if let Err(e) = work(&[f]) {
            failure = Some(e);
            seconds = f64::NAN;
            break;
        }
        done.push(f);
        seconds = t0.elapsed().as_secs_f64();
    }
    let all = ranks.all_gather_f64(seconds);
    let (_, blocks) = deal_after_probe(frames.len(), &all);
    let mine: Vec<usize> = blocks
        .get(ranks.rank())
        .map(|b| b.iter().filter_map(|&i| frames.get(i).copied()).collect())
        .unwrap_or_default();
    if let Some(e) = failure {
        return Err(e);
    }
    tracing::debug!(
        target: "orbitfield::batch",
        "rank {} of {}: probe {seconds:.3} s, {} more frames of {}",
        ranks.rank(),
        ranks.size(),
        mine.len(),
        frames.len()
    );
    on_plan(done.len() + mine.len());
    if !mine.is_empty() {
        let t0 = Instant::now();
        let n = mine.len();
        work(&mine)?;
        done.extend(mine);
        tracing::debug!(
            target: "orbitfield::batch",
            "rank {}: {n} frames in {:.3} s",
            ranks.rank(),
            t0.elapsed().as_secs_f64()
        );
    }
    Ok(done)
}

/// A partial result that travels between ranks as bytes and merges associatively.
pub trait Partial: Sized {
    fn to_bytes(&self) -> Vec<u8>;
    /// Folds `bytes` (another rank's partial, of later frames) into this one.
    fn merge_bytes(&mut self, bytes: &[u8]) -> Result<(), String>;
}

/// Little-endian u64 words of `bytes` from word `at` on.
fn words(bytes: &[u8]) -> Vec<u64> {
    bytes
        .chunks_exact(8)
        .map(|c| {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            u64::from_le_bytes(w)
        })
        .collect()
}

fn push_words(out: &mut Vec<u8>, words: impl IntoIterator<Item = u64>) {
    for w in words {
        out.extend_from_slice(&w.to_le_bytes());
    }
}

/// Map accumulators as [count, values..., m2...] (f64 bits; m2 only for stdev).
impl Partial for MapAccumulator {
    fn to_bytes(&self) -> Vec<u8> {
        let (count, values, m2) = self.parts();
        let mut out = Vec::with_capacity(8 * (1 + values.len() + m2.len()));
        push_words(&mut out, [count]);
        push_words(&mut out, values.iter().chain(m2).map(|v| v.to_bits()));
        out
    }

    fn merge_bytes(&mut self, bytes: &[u8]) -> Result<(), String> {
        let w = words(bytes);
        let n = self.parts().1.len();
        let with_m2 = !self.parts().2.is_empty();
        let need = 1 + n + if with_m2 { n } else { 0 };
        if w.len() != need || bytes.len() != 8 * need {
            return Err(format!("a map partial of {} bytes, expected {}", bytes.len(), 8 * need));
        }
        let count = w.first().copied().unwrap_or(0);
        let floats =
            |r: Range<usize>| -> Vec<f64> { w.get(r).unwrap_or(&[]).iter().map(|&b| f64::from_bits(b)).collect() };
        let values = floats(1..1 + n);
        let m2 = if with_m2 { floats(1 + n..1 + 2 * n) } else { Vec::new() };
        let other = self.with_parts(count, values, m2).map_err(|e| e.to_string())?;
        self.merge(&other).map_err(|e| e.to_string())
    }
}

/// RDF accumulators as [frames, counts..., volume, pairs, n1] (the sums as f64 bits).
impl Partial for RdfAccumulator {
    fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(8 * (4 + self.counts.len()));
        push_words(&mut out, [self.frames]);
        push_words(&mut out, self.counts.iter().copied());
        push_words(
            &mut out,
            [self.volume_sum_angstrom3, self.pair_sum, self.n1_sum].map(f64::to_bits),
        );
        out
    }

    fn merge_bytes(&mut self, bytes: &[u8]) -> Result<(), String> {
        let w = words(bytes);
        let bins = self.counts.len();
        if w.len() != bins + 4 || bytes.len() != 8 * (bins + 4) {
            return Err(format!(
                "an RDF partial of {} bytes, expected {}",
                bytes.len(),
                8 * (bins + 4)
            ));
        }
        let mut other = self.clone();
        other.frames = w.first().copied().unwrap_or(0);
        other.counts = w.get(1..1 + bins).unwrap_or(&[]).to_vec();
        let tail = |i: usize| w.get(1 + bins + i).map_or(0.0, |&b| f64::from_bits(b));
        other.volume_sum_angstrom3 = tail(0);
        other.pair_sum = tail(1);
        other.n1_sum = tail(2);
        self.merge(&other);
        Ok(())
    }
}

/// Per-frame output files written under temporary names next to their final ones and renamed only
/// when every rank succeeded ([`StagedFiles::commit`]); dropped without a commit, they are removed.
/// So a failed run leaves no partial set of frames behind.
#[derive(Debug, Default)]
pub struct StagedFiles {
    /// (temporary, final) paths written by this rank.
    files: Vec<(PathBuf, PathBuf)>,
}

impl StagedFiles {
    pub fn new() -> StagedFiles {
        StagedFiles::default()
    }

    /// The temporary name for `target` (hidden, in the same directory, so the rename is atomic).
    pub fn temporary_for(target: &Path) -> PathBuf {
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        target.with_file_name(format!(".{name}.partial-{}", std::process::id()))
    }

    /// Writes `bytes` to `target`'s temporary name, to be renamed by [`StagedFiles::commit`].
    pub fn write(&mut self, target: &Path, bytes: &[u8]) -> std::io::Result<()> {
        self.write_with(target, |tmp| std::fs::write(tmp, bytes))
    }

    /// Lets `write` write the file at the temporary name it is given (e.g. a cube writer).
    pub fn write_with<E>(&mut self, target: &Path, write: impl FnOnce(&Path) -> Result<(), E>) -> Result<(), E> {
        let tmp = StagedFiles::temporary_for(target);
        self.files.push((tmp.clone(), target.to_path_buf()));
        write(&tmp)
    }

    /// Files staged so far.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Renames every staged file to its final name.
    pub fn commit(mut self) -> std::io::Result<Vec<PathBuf>> {
        let files = std::mem::take(&mut self.files);
        let mut out = Vec::with_capacity(files.len());
        let mut iter = files.into_iter();
        while let Some((tmp, target)) = iter.next() {
            if let Err(e) = std::fs::rename(&tmp, &target) {
                // Put the rest back so that dropping removes them.
                self.files.push((tmp, target));
                self.files.extend(iter);
                return Err(e);
            }
            out.push(target);
        }
        Ok(out)
    }
}

impl Drop for StagedFiles {
    fn drop(&mut self) {
        for (tmp, _) in &self.files {
            let _ = std::fs::remove_file(tmp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::esp_series::{Combine, MemoryLimit};
    use crate::analysis::rdf::RdfSettings;
    use crate::model::Lattice;

    #[test]
    fn even_and_weighted_splits_cover_in_order() {
        assert_eq!(split_even(10, 3), vec![0..4, 4..7, 7..10]);
        assert_eq!(split_even(2, 3), vec![0..1, 1..2, 2..2]);
        assert_eq!(split_weighted(12, &[1.0, 2.0, 3.0]), vec![0..2, 2..6, 6..12]);
        // A rank three times as fast takes three times the frames.
        assert_eq!(split_weighted(8, &[3.0, 1.0]), vec![0..6, 6..8]);
        assert_eq!(split_weighted(5, &[f64::NAN, 0.0]), vec![0..3, 3..5]);
        assert_eq!(split_weighted(4, &[0.0, 1.0]), vec![0..0, 0..4]);
        for n in 0..40 {
            for w in [&[1.0, 1.0, 1.0][..], &[0.3, 5.0, 1.1, 2.0], &[7.0]] {
                let s = split_weighted(n, w);
                assert_eq!(s.len(), w.len());
                assert_eq!(s.first().map(|r| r.start), Some(0));
                assert_eq!(s.last().map(|r| r.end), Some(n));
                assert!(s.windows(2).all(|p| p[0].end == p[1].start));
            }
        }
    }

    #[test]
    fn probe_dealing_gives_fast_ranks_more_and_covers_every_frame_once() {
        // Rank 1 is four times as fast as ranks 0 and 2.
        let (probes, blocks) = deal_after_probe(30, &[0.4, 0.1, 0.4]);
        assert_eq!(probes, vec![Some(0), Some(10), Some(20)]);
        let sizes: Vec<usize> = blocks.iter().map(Vec::len).collect();
        assert_eq!(sizes, vec![4, 16, 4]);
        let probed: Vec<usize> = probe_blocks(30, 3).into_iter().flatten().collect();
        assert_eq!(probed, vec![0, 1, 10, 11, 20, 21]);
        let mut all: Vec<usize> = probed.into_iter().chain(blocks.concat()).collect();
        all.sort();
        assert_eq!(all, (0..30).collect::<Vec<_>>());
        // Speeds within the tolerance of the fastest count as equal (noise on a busy node).
        let (_, blocks) = deal_after_probe(26, &[0.10, 0.13]);
        assert_eq!(blocks.iter().map(Vec::len).collect::<Vec<_>>(), vec![11, 11]);
        // A failed probe takes nothing more; more ranks than frames leave some idle.
        let (_, blocks) = deal_after_probe(12, &[0.1, f64::NAN, 0.1]);
        assert!(blocks[1].is_empty());
        let (probes, blocks) = deal_after_probe(2, &[0.1, 0.1, f64::INFINITY]);
        assert_eq!(probes, vec![Some(0), Some(1), None]);
        assert!(blocks.iter().all(Vec::is_empty));
    }

    #[test]
    fn single_rank_runs_frames_in_order_and_reports_failure() {
        let ranks = Ranks::single();
        let mut seen = Vec::new();
        let mut planned = 0;
        let done = run_frames(
            &ranks,
            &[3, 1, 4, 1, 5],
            &mut |block| {
                seen.extend_from_slice(block);
                Ok(())
            },
            &mut |n| planned = n,
        )
        .unwrap();
        assert_eq!(done, vec![3, 1, 4, 1, 5]);
        assert_eq!(seen, done);
        assert_eq!(planned, 5);
        let r = run_frames(
            &ranks,
            &[0, 1, 2],
            &mut |block| {
                if block.contains(&1) {
                    Err("bad frame 1".into())
                } else {
                    Ok(())
                }
            },
            &mut |_| {},
        );
        assert_eq!(r, Err("bad frame 1".to_string()));
        let e = ranks.agree(Err("bad frame 1".into())).unwrap_err();
        assert_eq!(e.to_string(), "bad frame 1");
        assert!(ranks.agree(Ok(())).is_ok());
    }

    #[test]
    fn device_shares() {
        assert_eq!(share_devices(4, 0, 1), vec![0, 1, 2, 3]);
        assert_eq!(share_devices(4, 1, 2), vec![1, 3]);
        assert_eq!(share_devices(2, 3, 4), Vec::<usize>::new());
        assert_eq!(share_devices(0, 0, 1), Vec::<usize>::new());
    }

    fn random_maps(seed: u64, frames: usize, n: usize) -> Vec<Vec<f32>> {
        let mut s = seed;
        let mut next = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 11) as f64 / (1u64 << 53) as f64
        };
        (0..frames)
            .map(|_| (0..n).map(|_| (next() * 200.0 - 100.0) as f32).collect())
            .collect()
    }

    #[test]
    fn map_partials_through_bytes_equal_one_pass() {
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(7, |d| d.as_nanos() as u64)
            | 1;
        let lattice = Lattice::axis_aligned([0.0; 3], 0.5, [3, 2, 2]);
        let limit = MemoryLimit {
            bytes: u64::MAX,
            source: "test".into(),
        };
        let maps = random_maps(seed, 11, 12);
        for combine in [Combine::Avg, Combine::Min, Combine::Max, Combine::Stdev] {
            let mut one = MapAccumulator::new(lattice, combine, &limit).unwrap();
            for m in &maps {
                one.add(m).unwrap();
            }
            // Three ranks with uneven contiguous blocks, merged in rank order through bytes.
            let blocks = split_weighted(maps.len(), &[1.0, 3.0, 0.5]);
            let mut parts: Vec<MapAccumulator> = blocks
                .iter()
                .map(|b| {
                    let mut a = MapAccumulator::new(lattice, combine, &limit).unwrap();
                    for m in &maps[b.clone()] {
                        a.add(m).unwrap();
                    }
                    a
                })
                .collect();
            let mut total = parts.remove(0);
            for p in &parts {
                total.merge_bytes(&p.to_bytes()).unwrap();
            }
            assert_eq!(total.count(), 11);
            let (a, b) = (one.finish(1.0, "").unwrap(), total.finish(1.0, "").unwrap());
            let max = a.values.iter().fold(0f32, |m, v| m.max(v.abs()));
            for (x, y) in a.values.iter().zip(&b.values) {
                assert!((x - y).abs() <= 1e-6 * max, "{combine} seed {seed}: {x} vs {y}");
            }
            assert!(total.merge_bytes(&[0u8; 16]).is_err());
        }
    }

    #[test]
    fn rdf_partials_through_bytes_sum_exactly() {
        let settings = RdfSettings {
            r_max_angstrom: 5.0,
            bins: 5,
            exclude_same_group: false,
        };
        let mut a = RdfAccumulator::new(settings.clone()).unwrap();
        a.counts = vec![1, 2, 3, 4, u64::MAX / 4];
        a.frames = 2;
        a.pair_sum = 10.0;
        a.n1_sum = 4.0;
        a.volume_sum_angstrom3 = 1000.5;
        let mut b = RdfAccumulator::new(settings).unwrap();
        b.counts = vec![5, 0, 1, 0, 7];
        b.frames = 1;
        b.pair_sum = 5.0;
        b.n1_sum = 2.0;
        b.volume_sum_angstrom3 = 500.25;
        let mut expected = a.clone();
        expected.merge(&b);
        a.merge_bytes(&b.to_bytes()).unwrap();
        assert_eq!(a, expected);
        assert_eq!(a.counts, vec![6, 2, 4, 4, u64::MAX / 4 + 7]);
        assert!(a.merge_bytes(&[1, 2, 3]).is_err());
    }

    #[test]
    fn staged_files_appear_only_on_commit() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("frame_00001.cube");
        let mut staged = StagedFiles::new();
        staged.write(&target, b"abc").unwrap();
        assert!(!target.exists());
        assert_eq!(staged.commit().unwrap(), vec![target.clone()]);
        assert_eq!(std::fs::read(&target).unwrap(), b"abc");
        let other = dir.path().join("frame_00002.cube");
        {
            let mut staged = StagedFiles::new();
            staged.write(&other, b"x").unwrap();
        }
        assert!(!other.exists());
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }
}
