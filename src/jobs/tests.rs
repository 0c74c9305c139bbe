//! Unit tests of `jobs`.

#![allow(clippy::unwrap_used, clippy::expect_used)]
use super::*;
use crate::compute::{Field, FieldInput, PointCharges};
use crate::model::Lattice;

/// Records the scheduling priority (`nice`) of the threads its slabs and their data-parallel
/// parts run on.
struct NiceProbe {
    seen: Mutex<Vec<i32>>,
}

#[cfg(target_os = "linux")]
fn current_nice() -> i32 {
    // SAFETY: no pointers; the thread's own priority.
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
        libc::getpriority(libc::PRIO_PROCESS, tid)
    }
}

impl SlabEngine for NiceProbe {
    fn name(&self) -> String {
        "probe".into()
    }
    fn compute_slab(&self, _job: &FieldJob, _z: Range<usize>, out: &mut [f32]) -> Result<(), ComputeError> {
        use rayon::prelude::*;
        #[cfg(target_os = "linux")]
        {
            let inner: Vec<i32> = (0..64).into_par_iter().map(|_| current_nice()).collect();
            if let Ok(mut s) = self.seen.lock() {
                s.push(current_nice());
                s.extend(inner);
            }
        }
        out.par_iter_mut().for_each(|v| *v = 1.0);
        Ok(())
    }
}

#[test]
fn cpu_tiles_run_at_lowered_priority() {
    let probe = Arc::new(NiceProbe {
        seen: Mutex::new(Vec::new()),
    });
    let pool: Pool<u32> = Pool::with_engines(
        vec![EngineSpec {
            engine: probe.clone(),
            is_gpu: false,
        }],
        PoolConfig {
            cpu_tile_points: 64,
            ..PoolConfig::default()
        },
    );
    let job = FieldJob {
        field: Field::Potential,
        lattice: Lattice::around_box([0.0; 3], [1.0; 3], 0.0, 0.25),
        input: FieldInput::Charges(Arc::new(PointCharges {
            positions_bohr: vec![[0.0; 3]],
            charges_e: vec![1.0],
        })),
    };
    let grid = pool.compute_grid(7, job).unwrap();
    assert!(grid.values.iter().all(|&v| v == 1.0));
    #[cfg(target_os = "linux")]
    {
        let seen = probe.seen.lock().unwrap().clone();
        assert!(!seen.is_empty());
        // The caller's priority plus 10 (a test runner already at a lowered priority may be
        // capped at 19).
        let expected = (current_nice() + 10).min(19);
        assert!(seen.iter().all(|&n| n == expected), "{seen:?} (expected {expected})");
    }
}
