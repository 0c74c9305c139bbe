//! `Trajectory`: lazy, random-access frames of positions (Angstrom, f32) with optional boxes.
//!
//! A trajectory is a [`FrameSource`] behind a box: readers for multi-frame formats implement the
//! trait (DCD and XTC read frames on demand by file offset; text formats keep parsed frames in
//! memory). Consumers ask for frame `i` into a reusable [`Frame`], so playing a trajectory
//! allocates nothing per frame.

use super::cell::UnitCell;
use crate::io::ReadError;

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

/// Random access to frames of one trajectory file (or an in-memory list of frames).
pub trait FrameSource: Send {
    /// Atoms per frame.
    fn n_atoms(&self) -> usize;
    /// Number of frames.
    fn n_frames(&self) -> usize;
    /// Reads frame `index` into `out`, reusing its allocation.
    fn read_frame(&mut self, index: usize, out: &mut Frame) -> Result<(), ReadError>;
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

    fn read_frame(&mut self, index: usize, out: &mut Frame) -> Result<(), ReadError> {
        let f = self.frames.get(index).ok_or_else(|| {
            ReadError::new(
                std::path::PathBuf::from("<memory>"),
                crate::io::Location::None,
                format!("frame {index} requested, trajectory has {} frames", self.frames.len()),
            )
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

    /// Reads frame `index` into `out`.
    pub fn read_frame(&mut self, index: usize, out: &mut Frame) -> Result<(), ReadError> {
        self.source.read_frame(index, out)
    }

    /// Reads frame `index` into a new `Frame`.
    pub fn frame(&mut self, index: usize) -> Result<Frame, ReadError> {
        let mut f = Frame::default();
        self.read_frame(index, &mut f)?;
        Ok(f)
    }
}
