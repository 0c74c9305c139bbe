//! Isosurface extraction off the viewer's thread: one named worker (at lowered priority, like the
//! pool's) extracts the two lobes of a lattice while the UI keeps drawing the previous ones.
//!
//! Owns [`Mesher`]. Latest wins: a request submitted while another waits replaces it, and a result
//! whose generation is no longer the newest is dropped by [`Mesher::try_recv`]. Results carry the
//! key they were asked for. Used by the viewer when isosurfaces are made on the CPU (a software
//! renderer), so that a large surface never stalls a frame.

use crate::model::Grid3;
use crate::surface::MeshData;
use crossbeam::channel::{Receiver, Sender, bounded};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

/// Extracts the surface through an isovalue (the viewer's extractor).
pub type ExtractFn = fn(&Grid3, f32) -> Option<MeshData>;

/// Both lobes of one lattice, with the key and generation of their request.
#[derive(Debug)]
pub struct LobesResult<K> {
    pub key: K,
    pub generation: u64,
    /// Extracted from every second lattice point (see [`Mesher::submit`]).
    pub preview: bool,
    /// At `+iso` and `-iso`; `None` where nothing crosses.
    pub lobes: [Option<Arc<MeshData>>; 2],
}

struct Request<K> {
    key: K,
    generation: u64,
    grid: Arc<Grid3>,
    iso: f32,
    preview: bool,
}

struct Shared<K> {
    pending: Mutex<(Option<Request<K>>, bool)>,
    wake: Condvar,
}

/// The extraction worker.
pub struct Mesher<K: Send + 'static> {
    shared: Arc<Shared<K>>,
    results: Receiver<LobesResult<K>>,
    thread: Option<JoinHandle<()>>,
    generation: u64,
}

impl<K: Send + 'static> Mesher<K> {
    /// Starts the worker (`orbitfield-mesher`). Errors when the thread cannot be started.
    pub fn start(extract: ExtractFn) -> Result<Mesher<K>, String> {
        let shared = Arc::new(Shared {
            pending: Mutex::new((None, false)),
            wake: Condvar::new(),
        });
        let (tx, rx) = bounded(2);
        let sh = shared.clone();
        let thread = std::thread::Builder::new()
            .name("orbitfield-mesher".into())
            .spawn(move || worker(sh, tx, extract))
            .map_err(|e| format!("could not start the isosurface thread: {e}"))?;
        Ok(Mesher {
            shared,
            results: rx,
            thread: Some(thread),
            generation: 0,
        })
    }

    /// Asks for both lobes of `grid` at `+iso` and `-iso`, replacing any request not yet started.
    /// A `preview` is extracted from every second lattice point ([`Grid3::every_second_point`]:
    /// about a quarter of the triangles, for playback on a software renderer). Returns the
    /// request's generation.
    pub fn submit(&mut self, key: K, grid: Arc<Grid3>, iso: f32, preview: bool) -> u64 {
        self.generation += 1;
        let generation = self.generation;
        if let Ok(mut p) = self.shared.pending.lock() {
            p.0 = Some(Request {
                key,
                generation,
                grid,
                iso,
                preview,
            });
        }
        self.shared.wake.notify_one();
        generation
    }

    /// The newest request's result, once it is ready (never blocks; older results are dropped).
    pub fn try_recv(&mut self) -> Option<LobesResult<K>> {
        let mut newest = None;
        while let Ok(r) = self.results.try_recv() {
            if r.generation == self.generation {
                newest = Some(r);
            }
        }
        newest
    }

    /// Generation of the newest request (0 before the first).
    pub fn generation(&self) -> u64 {
        self.generation
    }
}

impl<K: Send + 'static> Drop for Mesher<K> {
    fn drop(&mut self) {
        if let Ok(mut p) = self.shared.pending.lock() {
            p.0 = None;
            p.1 = true;
        }
        self.shared.wake.notify_one();
        // The worker finishes at most the extraction in progress; its send never blocks for long
        // (the channel holds two results and the worker gives up once shut down).
        while self.results.try_recv().is_ok() {}
        if let Some(h) = self.thread.take() {
            let _ = h.join();
        }
    }
}

fn worker<K: Send + 'static>(shared: Arc<Shared<K>>, results: Sender<LobesResult<K>>, extract: ExtractFn) {
    super::lower_thread_priority();
    loop {
        let request = {
            let Ok(mut p) = shared.pending.lock() else { return };
            loop {
                if p.1 {
                    return;
                }
                if let Some(r) = p.0.take() {
                    break r;
                }
                p = match shared.wake.wait(p) {
                    Ok(g) => g,
                    Err(_) => return,
                };
            }
        };
        let grid = if request.preview {
            Arc::new(request.grid.every_second_point())
        } else {
            request.grid
        };
        let lobes = [request.iso, -request.iso].map(|iso| extract(&grid, iso).map(Arc::new));
        let result = LobesResult {
            key: request.key,
            generation: request.generation,
            preview: request.preview,
            lobes,
        };
        // A full channel means the viewer has not polled: wait a little, give up on shutdown.
        let mut result = Some(result);
        while let Some(r) = result.take() {
            match results.send_timeout(r, std::time::Duration::from_millis(50)) {
                Ok(()) => {}
                Err(crossbeam::channel::SendTimeoutError::Timeout(r)) => {
                    if shared.pending.lock().map_or(true, |p| p.1) {
                        return;
                    }
                    result = Some(r);
                }
                Err(crossbeam::channel::SendTimeoutError::Disconnected(_)) => return,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::model::Lattice;
    use std::time::{Duration, Instant};

    fn sphere(radius_steps: f32) -> Arc<Grid3> {
        let lattice = Lattice::around_box([0.0; 3], [6.0; 3], 0.0, 0.25);
        let [nx, ny, nz] = lattice.dims;
        let c = [nx, ny, nz].map(|n| (n as f32 - 1.0) / 2.0);
        let mut values = Vec::with_capacity(nx * ny * nz);
        for k in 0..nz {
            for j in 0..ny {
                for i in 0..nx {
                    let d = ((i as f32 - c[0]).powi(2) + (j as f32 - c[1]).powi(2) + (k as f32 - c[2]).powi(2)).sqrt();
                    values.push(radius_steps - d);
                }
            }
        }
        Arc::new(Grid3 {
            lattice,
            values,
            description: String::new(),
        })
    }

    fn extract(grid: &Grid3, iso: f32) -> Option<MeshData> {
        let m = if iso >= 0.0 {
            crate::surface::extract(grid, iso)
        } else {
            crate::surface::extract_below(grid, iso)
        };
        (!m.is_empty()).then_some(m)
    }

    fn wait<K: Send + 'static>(m: &mut Mesher<K>) -> LobesResult<K> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(r) = m.try_recv() {
                return r;
            }
            assert!(Instant::now() < deadline, "no result");
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    #[test]
    fn the_newest_request_wins_and_matches_a_direct_extraction() {
        let mut m: Mesher<u32> = Mesher::start(extract).unwrap();
        let grids: Vec<_> = (0..6).map(|i| sphere(3.0 + i as f32)).collect();
        for (i, g) in grids.iter().enumerate() {
            m.submit(i as u32, g.clone(), 0.5, false);
        }
        let r = wait(&mut m);
        assert_eq!(r.key, 5, "only the last request's result is delivered");
        assert_eq!(r.generation, m.generation());
        let direct = extract(&grids[5], 0.5).unwrap();
        let got = r.lobes[0].as_ref().unwrap();
        assert_eq!(got.triangle_count(), direct.triangle_count());
        assert_eq!(got.positions_angstrom, direct.positions_angstrom);
        // The negative lobe (the corners, where the field is below -0.5) is the extractor's too.
        let below = extract(&grids[5], -0.5).map(|m| m.triangle_count());
        assert_eq!(r.lobes[1].as_ref().map(|m| m.triangle_count()), below);
        // Nothing more arrives.
        std::thread::sleep(Duration::from_millis(50));
        assert!(m.try_recv().is_none());
        // A preview: the surface of every second point.
        m.submit(9, grids[5].clone(), 0.5, true);
        let r = wait(&mut m);
        assert!(r.preview);
        let coarse = extract(&grids[5].every_second_point(), 0.5).unwrap();
        assert_eq!(
            r.lobes[0].as_ref().unwrap().positions_angstrom,
            coarse.positions_angstrom
        );
        assert!(coarse.triangle_count() * 3 < direct.triangle_count());
    }

    #[test]
    fn dropping_a_busy_mesher_returns() {
        let mut m: Mesher<u32> = Mesher::start(extract).unwrap();
        for i in 0..4 {
            m.submit(i, sphere(8.0), 0.1, i % 2 == 0);
        }
        drop(m);
    }
}
