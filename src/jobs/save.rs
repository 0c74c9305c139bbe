//! Writing atoms and frames of an open system to a file on a thread of its own: the viewer's
//! "Save atoms / frames".
//!
//! Owns [`SaveJob`]. The viewer (`app::state`) resolves the selection and the frame range on the
//! UI thread and hands over what the write needs: the structure, the atoms and frames, and where
//! the frames come from ([`FrameSupply`]: the document's files, opened again on the job's thread
//! so the viewer keeps its own reader for playback, or frames already in memory). The job writes
//! through `io::write::write_frames_until` (temporary file renamed over the output), counts the
//! frames written in an atomic the UI reads for its progress line, and stops at the next frame when
//! cancelled, leaving no file behind. Its one result comes back over [`Task`]'s bounded channel.
//! Frames are written as the viewer shows them: molecules made whole across the box when the
//! viewer makes them whole, and fitted onto frame 0 when it fits them (`analysis::fit`).

use super::task::Task;
use crate::analysis::fit::FrameFit;
use crate::io::write::{WriteError, write_frames_mapped};
use crate::model::{Frame, Structure, Trajectory};
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Where the frames to write come from.
#[derive(Debug)]
pub enum FrameSupply {
    /// The files the document was opened from (topology first), opened again by the job. The job
    /// checks that they still hold the document's atoms.
    Files(Vec<PathBuf>),
    /// Frames in memory (documents not read from trajectory files).
    Frames(Vec<Frame>),
}

/// What to write.
#[derive(Debug)]
pub struct SaveRequest {
    pub path: PathBuf,
    pub structure: Structure,
    pub supply: FrameSupply,
    /// Atom indices to keep (all when `None`).
    pub atoms: Option<Vec<u32>>,
    /// Frame indices, in the order they are written.
    pub frames: Vec<usize>,
    /// Make molecules whole across the periodic box by these bonds, as the viewer does (files only:
    /// frames in memory come as the viewer shows them).
    pub whole_bonds: Option<Vec<[u32; 2]>>,
    /// Fit each frame onto frame 0 as the viewer does (files only, as above).
    pub fit: Option<FrameFit>,
}

/// A finished save: the output and the frames written, or why nothing was written.
#[derive(Debug)]
pub struct SaveDone {
    pub path: PathBuf,
    pub result: Result<usize, String>,
}

/// A write running on its own thread.
pub struct SaveJob {
    task: Task<SaveDone>,
    written: Arc<AtomicUsize>,
    cancel: Arc<AtomicBool>,
    total: usize,
    path: PathBuf,
}

impl std::fmt::Debug for SaveJob {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SaveJob")
            .field("path", &self.path)
            .field("written", &self.written())
            .field("total", &self.total)
            .finish()
    }
}

impl SaveJob {
    /// Starts writing `request` on a thread named `orbitfield-save`.
    pub fn start(request: SaveRequest) -> Result<SaveJob, String> {
        let written = Arc::new(AtomicUsize::new(0));
        let cancel = Arc::new(AtomicBool::new(false));
        let total = request.frames.len();
        let path = request.path.clone();
        let (w, c) = (written.clone(), cancel.clone());
        let task = Task::spawn("save", move || {
            let path = request.path.clone();
            SaveDone {
                path,
                result: run(request, &w, &c),
            }
        })?;
        Ok(SaveJob {
            task,
            written,
            cancel,
            total,
            path,
        })
    }

    /// Frames written so far.
    pub fn written(&self) -> usize {
        self.written.load(Ordering::Acquire)
    }

    /// Frames to write in all.
    pub fn total(&self) -> usize {
        self.total
    }

    /// The output file.
    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// Asks the job to stop after the frame it is writing; its result then says so.
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Release);
    }

    /// The result, once, when the job has finished.
    pub fn try_take(&mut self) -> Option<SaveDone> {
        self.task.try_take()
    }
}

impl Drop for SaveJob {
    fn drop(&mut self) {
        // A job dropped unfinished (the viewer closing) stops at its next frame; its temporary
        // file is removed and the output left as it was.
        self.cancel();
    }
}

/// The write itself, on the job's thread.
fn run(request: SaveRequest, written: &AtomicUsize, cancel: &AtomicBool) -> Result<usize, String> {
    let SaveRequest {
        path,
        structure,
        supply,
        atoms,
        frames,
        whole_bonds,
        fit,
    } = request;
    let mut trajectory = match supply {
        FrameSupply::Frames(list) => Trajectory::from_frames(structure.len(), list, "memory"),
        FrameSupply::Files(files) => {
            let system = crate::io::load(&files).map_err(|e| e.to_string())?;
            if system.structure.len() != structure.len() {
                return Err(format!(
                    "{}: the files now hold {} atoms, the open system {}; reopen them to save",
                    path.display(),
                    system.structure.len(),
                    structure.len()
                ));
            }
            let mut trajectory = system.trajectory;
            if let Some(bonds) = &whole_bonds {
                crate::io::load::make_whole(bonds, structure.len(), &mut trajectory);
            }
            trajectory
        }
    };
    if let Some(&last) = frames.iter().max()
        && last >= trajectory.n_frames()
    {
        return Err(format!(
            "{}: frame {} asked for, the trajectory has {} frames",
            path.display(),
            last + 1,
            trajectory.n_frames()
        ));
    }
    let result = write_frames_mapped(
        &path,
        &structure,
        &mut trajectory,
        atoms.as_deref(),
        &frames,
        &|frame| {
            if let Some(f) = &fit {
                f.apply(frame);
            }
        },
        &mut |k| {
            written.store(k, Ordering::Release);
            if cancel.load(Ordering::Acquire) {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        },
    );
    match result {
        Ok(n) => Ok(n),
        Err(WriteError::Cancelled { frames, .. }) => Err(format!(
            "save to {} cancelled after {frames} frames; no file written",
            path.display()
        )),
        Err(e) => Err(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;
    use std::time::{Duration, Instant};

    fn data(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/md").join(name)
    }

    fn wait(job: &mut SaveJob) -> SaveDone {
        let t0 = Instant::now();
        loop {
            if let Some(d) = job.try_take() {
                return d;
            }
            assert!(t0.elapsed() < Duration::from_secs(60), "the save job did not finish");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// The job writes from the reopened files what `write_frames` reads them to be: every
    /// written frame equals the source frame (PDB precision), atoms picked as asked.
    #[test]
    fn saves_picked_atoms_and_frames_from_the_files() {
        let files = vec![data("tip125_tric_C36.psf"), data("tip125_tric_C36.dcd")];
        let mut sys = crate::io::load(&files).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.pdb");
        let atoms: Vec<u32> = (0..sys.structure.len() as u32).step_by(3).collect();
        let mut job = SaveJob::start(SaveRequest {
            path: out.clone(),
            structure: sys.structure.clone(),
            supply: FrameSupply::Files(files),
            atoms: Some(atoms.clone()),
            frames: vec![7, 2],
            whole_bonds: None,
            fit: None,
        })
        .unwrap();
        let done = wait(&mut job);
        assert_eq!(done.result, Ok(2));
        assert_eq!(job.written(), 2);
        let mut back = crate::io::load(&[out]).unwrap();
        assert_eq!(back.structure.len(), atoms.len());
        for (k, &fi) in [7usize, 2].iter().enumerate() {
            let want = sys.trajectory.frame(fi).unwrap();
            let got = back.trajectory.frame(k).unwrap();
            for (p, &a) in got.positions_angstrom.iter().zip(&atoms) {
                let w = want.positions_angstrom[a as usize];
                for d in 0..3 {
                    assert!((p[d] - w[d]).abs() <= 6e-4, "frame {fi} atom {a}: {p:?} vs {w:?}");
                }
            }
        }
    }

    /// A cancelled job leaves no file and says it was cancelled; an existing output stays as it was.
    #[test]
    fn cancelled_save_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.xyz");
        std::fs::write(&out, "old").unwrap();
        let mut sys = crate::io::load(&[data("tip125_tric_C36.psf"), data("tip125_tric_C36.dcd")]).unwrap();
        let frame = sys.trajectory.frame(0).unwrap();
        let mut job = SaveJob::start(SaveRequest {
            path: out.clone(),
            structure: sys.structure.clone(),
            supply: FrameSupply::Frames(vec![frame; 5000]),
            atoms: None,
            frames: (0..5000).collect(),
            whole_bonds: None,
            fit: None,
        })
        .unwrap();
        job.cancel();
        let done = wait(&mut job);
        let err = done.result.unwrap_err();
        assert!(err.contains("cancelled"), "{err}");
        assert!(job.written() < 5000);
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "old");
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "temporary file left behind");
    }

    /// Files that no longer match the open system are refused, naming the output.
    #[test]
    fn changed_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.dcd");
        let mut job = SaveJob::start(SaveRequest {
            path: out.clone(),
            structure: Structure::default(),
            supply: FrameSupply::Files(vec![data("tip125_tric_C36.psf"), data("tip125_tric_C36.dcd")]),
            atoms: None,
            frames: vec![0],
            whole_bonds: None,
            fit: None,
        })
        .unwrap();
        let err = wait(&mut job).result.unwrap_err();
        assert!(err.contains("atoms"), "{err}");
        assert!(!out.exists());
    }
}
