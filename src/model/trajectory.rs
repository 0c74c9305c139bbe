//! `Trajectory`: lazy, random-access frames of positions (Angstrom, f32) with optional boxes.
//!
//! A trajectory is a [`FrameSource`] behind a box: readers for multi-frame formats implement the
//! trait (DCD and XTC read frames on demand by file offset; text formats keep parsed frames in
//! memory). Consumers ask for frame `i` into a reusable [`Frame`], so playing a trajectory
//! allocates nothing per frame. [`Trajectory::refresh`] picks up frames a running simulation has
//! appended since the file was opened. [`Trajectory::set_whole`] makes each frame's molecules
//! whole across its box as it is read (`super::whole`).
//!
//! A frame that cannot be read is a [`FrameError`]: the model names no reader's error type, so a
//! reader's own error (file, byte offset, what was expected) travels inside it, and `io` converts
//! both ways (its `ReadError` into a `FrameError` and back, losslessly).

use super::cell::UnitCell;
use super::whole::Whole;
use std::sync::Arc;

/// One frame's coordinates.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Frame {
    pub positions_angstrom: Vec<[f32; 3]>,
    /// Periodic box, when the file gives one for this frame.
    pub cell: Option<UnitCell>,
    /// Simulation time in picoseconds, when known.
    pub time_ps: Option<f64>,
    /// MD step number, when known.
    pub step: Option<i64>,
}

/// Why a frame could not be read.
#[derive(Clone, Debug, thiserror::Error)]
pub enum FrameError {
    /// The index is past the last frame.
    #[error("frame {index} requested, trajectory has {count} frames")]
    OutOfRange { index: usize, count: usize },
    /// The frame source failed; the message names the file and where.
    #[error("{0}")]
    Source(Arc<dyn std::error::Error + Send + Sync>),
}

/// Runs two pieces of work, possibly at the same time on two threads. Readers split the decoding
/// of a large frame with it ([`FrameSource::share_decoding`]); `jobs` implements it (the model only
/// names it, as it spawns no threads).
pub trait Fork: Send + Sync + std::fmt::Debug {
    /// Runs `first` and `second`, each exactly once, and returns when both are done.
    fn join(&self, first: &mut (dyn FnMut() + Send), second: &mut (dyn FnMut() + Send));
}

/// Random access to frames of one trajectory file (or an in-memory list of frames).
pub trait FrameSource: Send {
    /// Atoms per frame.
    fn n_atoms(&self) -> usize;
    /// Number of frames.
    fn n_frames(&self) -> usize;
    /// Reads frame `index` into `out`, reusing its allocation.
    fn read_frame(&mut self, index: usize, out: &mut Frame) -> Result<(), FrameError>;
    /// Looks for frames appended since the file was opened (a simulation still writing it) without
    /// rereading the frames already known; returns how many were added. Sources that cannot grow
    /// (frames in memory, decompressed files) add none.
    fn refresh(&mut self) -> Result<usize, FrameError> {
        Ok(0)
    }
    /// Lets the source decode a large frame in two halves at once with `fork`. Sources whose
    /// frames are cheap to decode, or that decode sequentially by nature, ignore it.
    fn share_decoding(&mut self, _fork: Arc<dyn Fork>) {}
}

/// Frames held in memory (multi-model PDB, multi-frame GRO/XYZ, single-frame files).
#[derive(Clone, Debug, Default)]
pub struct InMemoryFrames {
    pub n_atoms: usize,
    pub frames: Vec<Frame>,
}

impl FrameSource for InMemoryFrames {
    fn n_atoms(&self) -> usize {
        self.n_atoms
    }

    fn n_frames(&self) -> usize {
        self.frames.len()
    }

    fn read_frame(&mut self, index: usize, out: &mut Frame) -> Result<(), FrameError> {
        let f = self.frames.get(index).ok_or(FrameError::OutOfRange {
            index,
            count: self.frames.len(),
        })?;
        out.clone_from(f);
        Ok(())
    }
}

/// A trajectory: a frame source plus a description of where it came from.
pub struct Trajectory {
    source: Box<dyn FrameSource>,
    /// Human-readable origin (file names), for messages.
    pub origin: String,
    /// Molecules made whole across the box in every frame that has one (`super::whole`).
    whole: Option<Arc<Whole>>,
    /// With `whole`: the solute's atoms, around which the other molecules are gathered
    /// (`Whole::wrap_around`).
    wrap_around: Option<Arc<Vec<bool>>>,
}

impl std::fmt::Debug for Trajectory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Trajectory")
            .field("origin", &self.origin)
            .field("n_atoms", &self.n_atoms())
            .field("n_frames", &self.n_frames())
            .finish()
    }
}

impl Trajectory {
    pub fn new(source: Box<dyn FrameSource>, origin: impl Into<String>) -> Trajectory {
        Trajectory {
            source,
            origin: origin.into(),
            whole: None,
            wrap_around: None,
        }
    }

    /// A trajectory of frames already in memory.
    pub fn from_frames(n_atoms: usize, frames: Vec<Frame>, origin: impl Into<String>) -> Trajectory {
        Trajectory::new(Box::new(InMemoryFrames { n_atoms, frames }), origin)
    }

    pub fn n_atoms(&self) -> usize {
        self.source.n_atoms()
    }

    pub fn n_frames(&self) -> usize {
        self.source.n_frames()
    }

    /// Reads frame `index` into `out`, its molecules made whole when [`Trajectory::set_whole`]
    /// asked for it and the frame has a box.
    pub fn read_frame(&mut self, index: usize, out: &mut Frame) -> Result<(), FrameError> {
        self.source.read_frame(index, out)?;
        if let (Some(whole), Some(cell)) = (&self.whole, &out.cell) {
            whole.apply(&mut out.positions_angstrom, cell);
            if let Some(solute) = &self.wrap_around {
                whole.wrap_around(&mut out.positions_angstrom, cell, solute);
            }
        }
        Ok(())
    }

    /// Gathers the molecules outside `solute` around it in every frame made whole (`None`: where
    /// the file put them).
    pub fn set_wrap_around(&mut self, solute: Option<Arc<Vec<bool>>>) {
        self.wrap_around = solute;
    }

    /// Makes every frame's molecules whole across its box with `whole` (`None`: frames as the
    /// file wrote them).
    pub fn set_whole(&mut self, whole: Option<Arc<Whole>>) {
        self.whole = whole;
    }

    /// How frames are made whole, if they are.
    pub fn whole(&self) -> Option<&Arc<Whole>> {
        self.whole.as_ref()
    }

    /// Picks up frames appended to the file since it was opened; returns how many were added.
    pub fn refresh(&mut self) -> Result<usize, FrameError> {
        self.source.refresh()
    }

    /// Lets the source decode large frames in two halves at once (see [`FrameSource::share_decoding`]).
    pub fn share_decoding(&mut self, fork: Arc<dyn Fork>) {
        self.source.share_decoding(fork);
    }

    /// Reads frame `index` into a new `Frame`.
    pub fn frame(&mut self, index: usize) -> Result<Frame, FrameError> {
        let mut f = Frame::default();
        self.read_frame(index, &mut f)?;
        Ok(f)
    }
}

/// A range of frames as users write it: `all`, `N`, `A:B`, `A:B:S` (Python-style, end exclusive,
/// negative indices from the end, empty parts meaning start/end).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrameRange {
    start: Option<i64>,
    stop: Option<i64>,
    step: i64,
    single: bool,
}

impl FrameRange {
    /// Parses `all`, `N`, `A:B` or `A:B:S`.
    pub fn parse(text: &str) -> Result<FrameRange, String> {
        let t = text.trim();
        if t.eq_ignore_ascii_case("all") || t == ":" || t == "::" {
            return Ok(FrameRange {
                start: None,
                stop: None,
                step: 1,
                single: false,
            });
        }
        let parts: Vec<&str> = t.split(':').collect();
        let num = |s: &str| -> Result<Option<i64>, String> {
            let s = s.trim();
            if s.is_empty() {
                Ok(None)
            } else {
                s.parse::<i64>()
                    .map(Some)
                    .map_err(|_| format!("frame range '{text}': '{s}' is not an integer"))
            }
        };
        match parts.as_slice() {
            [n] => {
                let n = num(n)?.ok_or_else(|| format!("frame range '{text}' is empty"))?;
                Ok(FrameRange {
                    start: Some(n),
                    stop: None,
                    step: 1,
                    single: true,
                })
            }
            [a, b] => Ok(FrameRange {
                start: num(a)?,
                stop: num(b)?,
                step: 1,
                single: false,
            }),
            [a, b, s] => {
                let step = num(s)?.unwrap_or(1);
                if step <= 0 {
                    return Err(format!("frame range '{text}': the step must be positive"));
                }
                Ok(FrameRange {
                    start: num(a)?,
                    stop: num(b)?,
                    step,
                    single: false,
                })
            }
            _ => Err(format!("frame range '{text}': expected all, N, A:B or A:B:S")),
        }
    }

    /// The range as users write it (`A:B`, `A:B:S`, `A:`).
    fn text(&self) -> String {
        let part = |x: Option<i64>| x.map(|v| v.to_string()).unwrap_or_default();
        let mut t = format!("{}:{}", part(self.start), part(self.stop));
        if self.step != 1 {
            t.push_str(&format!(":{}", self.step));
        }
        t
    }

    /// The frame indices this range selects from a trajectory of `n_frames`.
    pub fn indices(&self, n_frames: usize) -> Result<Vec<usize>, String> {
        let n = n_frames as i64;
        let resolve = |x: i64| if x < 0 { x + n } else { x };
        if self.single {
            let i = resolve(self.start.unwrap_or(0));
            if i < 0 || i >= n {
                return Err(format!(
                    "frame {} does not exist (the trajectory has {n_frames} frames)",
                    self.start.unwrap_or(0)
                ));
            }
            return Ok(vec![i as usize]);
        }
        // An end past the last frame is refused, as a single frame is (a clamp would average fewer
        // frames than asked for without a word); a range left open (`A:`) runs to the last.
        let last = match n_frames {
            0 => "no frames".to_string(),
            1 => "one frame (frame 0)".to_string(),
            _ => format!("{n_frames} frames, 0 to {}", n_frames - 1),
        };
        let text = self.text();
        let start = resolve(self.start.unwrap_or(0));
        if !(0..n.max(1)).contains(&start) {
            return Err(format!(
                "frames {text}: the range starts at frame {}, and the trajectory has {last}",
                self.start.unwrap_or(0)
            ));
        }
        let stop = resolve(self.stop.unwrap_or(n));
        if !(0..=n).contains(&stop) {
            return Err(format!(
                "frames {text}: the range stops at {} (the end is left out), and the trajectory has \
                 {last}; leave the end out (A:) to run to the last frame",
                self.stop.unwrap_or(n)
            ));
        }
        let picked: Vec<usize> = (start..stop).step_by(self.step as usize).map(|i| i as usize).collect();
        if picked.is_empty() && n_frames > 0 {
            return Err(format!(
                "frames {text}: the range selects no frame (the end must be after the start)"
            ));
        }
        Ok(picked)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_ranges() {
        assert_eq!(FrameRange::parse("all").unwrap().indices(3).unwrap(), vec![0, 1, 2]);
        assert_eq!(FrameRange::parse("1:8:3").unwrap().indices(8).unwrap(), vec![1, 4, 7]);
        assert_eq!(FrameRange::parse("1::3").unwrap().indices(8).unwrap(), vec![1, 4, 7]);
        // Past the end, or nothing: refused in words.
        let e = FrameRange::parse("1:10:3").unwrap().indices(8).unwrap_err();
        assert!(e.contains("stops at 10") && e.contains("8 frames, 0 to 7"), "{e}");
        assert!(FrameRange::parse("9:").unwrap().indices(8).is_err());
        assert!(FrameRange::parse("5:2").unwrap().indices(8).is_err());
        assert!(FrameRange::parse("0:-9").unwrap().indices(8).is_err());
        assert_eq!(FrameRange::parse("0:-1").unwrap().indices(3).unwrap(), vec![0, 1]);
        assert_eq!(FrameRange::parse("-2:").unwrap().indices(5).unwrap(), vec![3, 4]);
        assert_eq!(FrameRange::parse("4").unwrap().indices(5).unwrap(), vec![4]);
        assert!(FrameRange::parse("5").unwrap().indices(5).is_err());
        assert!(FrameRange::parse("1:2:0").is_err());
        assert!(FrameRange::parse("a:b").is_err());
    }
}
