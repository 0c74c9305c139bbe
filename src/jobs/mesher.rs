//! Isosurface extraction off the viewer's thread: one named worker (at lowered priority, like the
//! pool's) extracts the lobes of lattices while the UI keeps drawing the previous ones.
//!
//! Owns [`Mesher`], a [`LaneWorker`] for lattices. Requests come in lanes (one per field
//! representation): latest wins per lane, a request submitted while another of its lane waits
//! replaces it, lanes with work are served in turn, and a result whose generation is no longer its
//! lane's newest is dropped by [`Mesher::try_recv`]. Results carry the lane and key they were asked for. Used by the viewer
//! when isosurfaces are made on the CPU (a software renderer), so that a large surface never stalls
//! a frame.

use super::lanes::LaneWorker;
use crate::model::Grid3;
use crate::surface::MeshData;
use std::sync::Arc;

/// Extracts the surface through an isovalue (the viewer's extractor).
pub type ExtractFn = fn(&Grid3, f32) -> Option<MeshData>;

/// The lobes of one lattice, with the lane, key and generation of their request.
#[derive(Debug)]
pub struct LobesResult<K> {
    pub lane: u64,
    pub key: K,
    pub generation: u64,
    /// Extracted from every second lattice point (see [`Mesher::submit`]).
    pub preview: bool,
    /// At `+iso` and `-iso` (the second only for signed requests); `None` where nothing crosses.
    pub lobes: [Option<Arc<MeshData>>; 2],
}

/// One extraction asked for.
pub struct LobesRequest<K> {
    pub key: K,
    pub grid: Arc<Grid3>,
    pub iso: f32,
    /// Also the surface at `-iso` (fields with both signs).
    pub signed: bool,
    /// From every second lattice point ([`Grid3::every_second_point`]: about a quarter of the
    /// triangles, for playback on a software renderer).
    pub preview: bool,
}

/// The extraction worker: a [`LaneWorker`] whose requests are lattices and isovalues.
pub struct Mesher<K: Send + 'static> {
    lanes: LaneWorker<LobesRequest<K>, LobesResult<K>>,
}

impl<K: Send + 'static> Mesher<K> {
    /// Starts the worker (`orbitfield-mesher`). Errors when the thread cannot be started.
    pub fn start(extract: ExtractFn) -> Result<Mesher<K>, String> {
        let lanes = LaneWorker::start("orbitfield-mesher", "isosurface", move |r: LobesRequest<K>| {
            let grid = if r.preview {
                Arc::new(r.grid.every_second_point())
            } else {
                r.grid
            };
            let plus = extract(&grid, r.iso).map(Arc::new);
            let minus = if r.signed {
                extract(&grid, -r.iso).map(Arc::new)
            } else {
                None
            };
            LobesResult {
                lane: 0,
                key: r.key,
                generation: 0,
                preview: r.preview,
                lobes: [plus, minus],
            }
        })?;
        Ok(Mesher { lanes })
    }

    /// Asks for the lobes of `request` in `lane`, replacing that lane's request not yet started.
    /// Returns the request's generation.
    pub fn submit(&mut self, lane: u64, request: LobesRequest<K>) -> u64 {
        self.lanes.submit(lane, request)
    }

    /// Forgets `lane` (its request not yet started is dropped; a running one's result is ignored).
    pub fn remove_lane(&mut self, lane: u64) {
        self.lanes.remove_lane(lane);
    }

    /// The newest request's result of every lane whose result is ready (never blocks; older
    /// results are dropped), in lane order.
    pub fn try_recv(&mut self) -> Vec<LobesResult<K>> {
        self.lanes
            .try_recv()
            .into_iter()
            .map(|d| LobesResult {
                lane: d.lane,
                generation: d.generation,
                ..d.output
            })
            .collect()
    }

    /// Generation of `lane`'s newest request (0 before the first).
    pub fn generation(&self, lane: u64) -> u64 {
        self.lanes.generation(lane)
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

    fn request(key: u32, grid: Arc<Grid3>, iso: f32, preview: bool) -> LobesRequest<u32> {
        LobesRequest {
            key,
            grid,
            iso,
            signed: true,
            preview,
        }
    }

    /// Waits until every lane in `lanes` has delivered its newest result.
    fn wait(m: &mut Mesher<u32>, lanes: &[u64]) -> Vec<LobesResult<u32>> {
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut got: Vec<LobesResult<u32>> = Vec::new();
        loop {
            for r in m.try_recv() {
                got.retain(|g| g.lane != r.lane);
                got.push(r);
            }
            if lanes.iter().all(|l| got.iter().any(|r| r.lane == *l)) {
                got.sort_by_key(|r| r.lane);
                return got;
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
            m.submit(7, request(i as u32, g.clone(), 0.5, false));
        }
        let r = wait(&mut m, &[7]).remove(0);
        assert_eq!(r.key, 5, "only the last request's result is delivered");
        assert_eq!(r.generation, m.generation(7));
        let direct = extract(&grids[5], 0.5).unwrap();
        let got = r.lobes[0].as_ref().unwrap();
        assert_eq!(got.triangle_count(), direct.triangle_count());
        assert_eq!(got.positions_angstrom, direct.positions_angstrom);
        // The negative lobe (the corners, where the field is below -0.5) is the extractor's too.
        let below = extract(&grids[5], -0.5).map(|m| m.triangle_count());
        assert_eq!(r.lobes[1].as_ref().map(|m| m.triangle_count()), below);
        // Nothing more arrives.
        std::thread::sleep(Duration::from_millis(50));
        assert!(m.try_recv().is_empty());
        // A preview: the surface of every second point.
        m.submit(7, request(9, grids[5].clone(), 0.5, true));
        let r = wait(&mut m, &[7]).remove(0);
        assert!(r.preview);
        let coarse = extract(&grids[5].every_second_point(), 0.5).unwrap();
        assert_eq!(
            r.lobes[0].as_ref().unwrap().positions_angstrom,
            coarse.positions_angstrom
        );
        assert!(coarse.triangle_count() * 3 < direct.triangle_count());
    }

    #[test]
    fn lanes_are_independent_and_unsigned_requests_have_one_lobe() {
        let mut m: Mesher<u32> = Mesher::start(extract).unwrap();
        let (a, b) = (sphere(4.0), sphere(6.0));
        m.submit(1, request(10, a.clone(), 0.5, false));
        m.submit(
            2,
            LobesRequest {
                signed: false,
                ..request(20, b.clone(), 0.5, false)
            },
        );
        let got = wait(&mut m, &[1, 2]);
        assert_eq!((got[0].key, got[1].key), (10, 20), "each lane keeps its own request");
        assert_eq!(
            got[0].lobes[0].as_ref().unwrap().positions_angstrom,
            extract(&a, 0.5).unwrap().positions_angstrom
        );
        assert!(got[1].lobes[1].is_none(), "no negative lobe for an unsigned request");
        // A removed lane's results are dropped.
        m.submit(3, request(30, a, 0.5, false));
        m.remove_lane(3);
        std::thread::sleep(Duration::from_millis(100));
        assert!(m.try_recv().iter().all(|r| r.lane != 3));
    }

    #[test]
    fn dropping_a_busy_mesher_returns() {
        let mut m: Mesher<u32> = Mesher::start(extract).unwrap();
        for i in 0..4 {
            m.submit(u64::from(i % 2), request(i, sphere(8.0), 0.1, i % 2 == 0));
        }
        drop(m);
    }
}
