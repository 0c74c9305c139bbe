//! The field service against scripted backends: cache hits never submit, a look-ahead is awaited
//! rather than asked again, and slots sharing a key share one request.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use crate::compute::{Field, FieldInput, PointCharges};
use crate::model::Lattice;
use std::collections::VecDeque;
use std::sync::Mutex;

/// Finishes each job at once with a constant grid; remembers what it was asked.
struct Instant {
    done: VecDeque<FieldResult>,
    submitted: Vec<FieldKey>,
}

impl FieldBackend for Instant {
    fn name(&self) -> String {
        "instant".into()
    }
    fn submit(&mut self, _lane: Lane, key: FieldKey, job: FieldJob) {
        self.submitted.push(key);
        let grid = Grid3 {
            values: vec![1.0; job.lattice.n_points()],
            lattice: job.lattice,
            description: "test".into(),
        };
        self.done.push_back(FieldResult {
            key,
            grid: Ok(Arc::new(grid)),
        });
    }
    fn cancel(&mut self, _lane: Lane) {}
    fn try_recv(&mut self) -> Option<FieldResult> {
        self.done.pop_front()
    }
}

fn job() -> Option<FieldJob> {
    Some(FieldJob {
        field: Field::Potential,
        lattice: Lattice::axis_aligned([0.0; 3], 1.0, [2, 2, 2]),
        input: FieldInput::Charges(Arc::new(PointCharges::default())),
    })
}

fn key(frame: usize) -> FieldKey {
    FieldKey {
        document: 1,
        frame,
        field: FieldChoice::Density,
        dims: [2, 2, 2],
    }
}

#[test]
fn miss_submits_once_then_hits() {
    let mut s = FieldService::new(
        Some(Box::new(Instant {
            done: VecDeque::new(),
            submitted: Vec::new(),
        })),
        None,
    );
    let slot = s.add_slot();
    // This backend finishes at submit, so the first request already answers.
    assert!(s.request(slot, key(3), job).is_some());
    assert_eq!(s.pending(slot), None);
    assert!(s.poll().is_empty());
    let g = s
        .request(slot, key(3), || panic!("a cached key must not submit"))
        .unwrap();
    assert_eq!(g.values.len(), 8);
    assert!(s.mesh(MeshKey::new(key(3), 0.5), &g).is_none(), "no extractor");
}

/// What a scripted backend was asked: (lane, key, lattice), and the lanes cancelled.
#[derive(Default)]
struct Log {
    asked: Vec<(Lane, FieldKey, Lattice)>,
    cancelled: Vec<Lane>,
    promoted: Vec<FieldSlot>,
    ready: VecDeque<FieldResult>,
}

/// Holds every job until the test finishes it.
struct Manual(Arc<Mutex<Log>>);

impl FieldBackend for Manual {
    fn name(&self) -> String {
        "manual".into()
    }
    fn submit(&mut self, lane: Lane, key: FieldKey, job: FieldJob) {
        self.0.lock().unwrap().asked.push((lane, key, job.lattice));
    }
    fn promote(&mut self, slot: FieldSlot) {
        self.0.lock().unwrap().promoted.push(slot);
    }
    fn cancel(&mut self, lane: Lane) {
        self.0.lock().unwrap().cancelled.push(lane);
    }
    fn try_recv(&mut self) -> Option<FieldResult> {
        self.0.lock().unwrap().ready.pop_front()
    }
}

fn finish(log: &Arc<Mutex<Log>>, k: FieldKey) {
    let lattice = Lattice::axis_aligned([0.0; 3], 1.0, [2, 2, 2]);
    log.lock().unwrap().ready.push_back(FieldResult {
        key: k,
        grid: Ok(Arc::new(Grid3::zeros(lattice, "test"))),
    });
}

#[test]
fn a_prefetched_key_is_awaited_not_asked_again_and_one_look_ahead_at_a_time() {
    let log = Arc::new(Mutex::new(Log::default()));
    let mut s = FieldService::new(Some(Box::new(Manual(log.clone()))), None);
    let slot = s.add_slot();
    s.prefetch(slot, key(1), job);
    assert_eq!(log.lock().unwrap().asked.len(), 1);
    assert!(
        log.lock().unwrap().asked[0].0.look_ahead,
        "asked in the look-ahead lane"
    );
    // The view now wants frame 1: it waits for the look-ahead instead of asking again.
    assert!(s.request(slot, key(1), || panic!("must not ask again")).is_none());
    assert_eq!(s.pending(slot), Some(key(1)));
    assert_eq!(log.lock().unwrap().promoted, vec![slot]);
    // While it is in flight, no second look-ahead (it would cancel the awaited one).
    s.prefetch(slot, key(2), job);
    assert_eq!(log.lock().unwrap().asked.len(), 1);
    finish(&log, key(1));
    assert_eq!(s.poll(), vec![key(1)]);
    assert_eq!(s.pending(slot), None);
    assert!(s.request(slot, key(1), || panic!("cached now")).is_some());
    s.prefetch(slot, key(2), job);
    assert_eq!(log.lock().unwrap().asked.len(), 2);
    // Once that look-ahead is in, a cached key is never asked for again.
    finish(&log, key(2));
    assert_eq!(s.poll(), vec![key(2)]);
    s.prefetch(slot, key(1), || panic!("cached"));
    assert_eq!(log.lock().unwrap().asked.len(), 2);
}

#[test]
fn each_slot_looks_ahead_in_its_own_lane_and_shares_keys() {
    let log = Arc::new(Mutex::new(Log::default()));
    let mut s = FieldService::new(Some(Box::new(Manual(log.clone()))), None);
    let (a, b) = (s.add_slot(), s.add_slot());
    let other = |frame| FieldKey {
        field: FieldChoice::Potential,
        ..key(frame)
    };
    assert!(s.request(a, key(0), job).is_none());
    assert!(s.request(b, other(0), job).is_none());
    s.prefetch(a, key(1), job);
    s.prefetch(b, other(1), job);
    {
        let l = log.lock().unwrap();
        let lanes: Vec<Lane> = l.asked.iter().map(|x| x.0).collect();
        assert_eq!(
            lanes,
            vec![Lane::view(a), Lane::view(b), Lane::look_ahead(a), Lane::look_ahead(b)]
        );
    }
    // A third slot wanting slot a's look-ahead key shares it (promoted), asking nothing.
    let c = s.add_slot();
    assert!(s.request(c, key(1), || panic!("shared")).is_none());
    assert_eq!(s.pending(c), Some(key(1)));
    assert_eq!(log.lock().unwrap().promoted, vec![a]);
    // Cancelling slot a orphans c, which must ask for itself.
    s.cancel(a);
    assert!(s.take_orphaned(c));
    assert_eq!(s.pending(c), None);
    assert_eq!(log.lock().unwrap().cancelled, vec![Lane::view(a), Lane::look_ahead(a)]);
    assert!(s.request(c, key(1), job).is_none());
    assert_eq!(log.lock().unwrap().asked.last().map(|x| x.0), Some(Lane::view(c)));
    // The result reaches the slot that waits for it even if the cache cannot keep it.
    s.set_cache_budget(1);
    finish(&log, key(1));
    s.poll();
    assert!(s.take_delivered(c).is_some_and(|(k, _)| k == key(1)));
}

use crate::compute::SlabEngine as _;

/// Counts the engine calls and computes with the CPU engine.
#[derive(Default)]
struct Counting {
    batches: std::sync::atomic::AtomicUsize,
    slabs: std::sync::atomic::AtomicUsize,
}

impl crate::compute::SlabEngine for Counting {
    fn name(&self) -> String {
        "counting".into()
    }
    fn compute_slab(
        &self,
        job: &FieldJob,
        z: std::ops::Range<usize>,
        out: &mut [f32],
    ) -> Result<(), crate::compute::ComputeError> {
        self.slabs.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        crate::compute::cpu::CpuEngine.compute_slab(job, z, out)
    }
    fn compute_batch(
        &self,
        jobs: &[&FieldJob],
        z: std::ops::Range<usize>,
        outs: &mut [&mut [f32]],
    ) -> Result<(), crate::compute::ComputeError> {
        self.batches.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        crate::compute::cpu::CpuEngine.compute_batch(jobs, z, outs)
    }
}

#[test]
fn one_updates_orbitals_of_two_slots_reach_the_pool_as_one_batch() {
    use std::sync::atomic::Ordering::SeqCst;
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/gpu/water_hf_631gs_sph.molden");
    let bytes = std::fs::read(&path).unwrap();
    let file = crate::io::molden::read(&path, &bytes).unwrap();
    let wf = Arc::new(file.wavefunctions.into_iter().next().unwrap());
    let homo = wf.homo(crate::model::Spin::Alpha).unwrap();
    let lattice = Lattice::axis_aligned([-5.0, -5.0, -4.0], 0.7, [14, 14, 12]);
    let engine = Arc::new(Counting::default());
    let pool = crate::jobs::Pool::with_engines(
        vec![crate::jobs::EngineSpec {
            engine: engine.clone(),
            // CPU workers batch by default (GPU workers compute one request after the other).
            is_gpu: false,
        }],
        crate::jobs::PoolConfig::default(),
    );
    let mut s = FieldService::new(Some(Box::new(PoolBackend::with_pool(pool))), None);
    let (a, b) = (s.add_slot(), s.add_slot());
    let key_of = |index| FieldKey {
        field: FieldChoice::Orbital {
            spin: crate::model::Spin::Alpha,
            index,
        },
        dims: lattice.dims,
        ..key(0)
    };
    let job_of = |index| FieldJob {
        field: Field::Orbital {
            spin: crate::model::Spin::Alpha,
            index,
        },
        lattice,
        input: FieldInput::Wavefunction(wf.clone()),
    };
    assert!(s.request(a, key_of(homo), || Some(job_of(homo))).is_none());
    assert!(s.request(b, key_of(homo + 1), || Some(job_of(homo + 1))).is_none());
    // Nothing leaves before the flush that ends the update.
    std::thread::sleep(std::time::Duration::from_millis(50));
    assert_eq!(engine.batches.load(SeqCst) + engine.slabs.load(SeqCst), 0);
    s.flush();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let mut arrived = Vec::new();
    while arrived.len() < 2 && std::time::Instant::now() < deadline {
        arrived.extend(s.poll());
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    arrived.sort();
    let mut want = vec![key_of(homo), key_of(homo + 1)];
    want.sort();
    assert_eq!(arrived, want);
    assert!(engine.batches.load(SeqCst) >= 1);
    assert_eq!(engine.slabs.load(SeqCst), 0, "every tile batched");
    for (slot, index) in [(a, homo), (b, homo + 1)] {
        let (k, grid) = s.take_delivered(slot).unwrap();
        assert_eq!(k, key_of(index));
        let mut direct = vec![f32::NAN; lattice.n_points()];
        crate::compute::cpu::CpuEngine
            .compute_slab(&job_of(index), 0..lattice.dims[2], &mut direct)
            .unwrap();
        let max = direct
            .iter()
            .zip(&grid.values)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0f32, f32::max);
        assert!(max < 1e-5, "slot for orbital {index}: max difference {max:.2e}");
    }
}
