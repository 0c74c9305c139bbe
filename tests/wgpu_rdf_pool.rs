//! RDF frames on the worker pool's wgpu workers (`jobs::rdf` through `compute::wgpu::rdf`, on
//! whatever adapter exists: Mesa lavapipe in CI, the H200's Vulkan driver on the device machine):
//! each frame of the shared RDF cases (open space, orthorhombic, triclinic and truncated-octahedron
//! cells, with and without exclusions; fresh random atoms, the seed printed, `ORBITFIELD_TEST_SEED`
//! replays one) is histogrammed by the wgpu worker and equals the CPU engine's counts to the f32
//! bin-edge allowance of `rdf_cases::assert_counts_close` (the comparison fails for counts moved by
//! one bin); a frame the pass refuses (more bins than it holds) is computed on the CPU with a note.
//!
//! Without an adapter with compute shaders the tests print why and pass, unless
//! `ORBITFIELD_REQUIRE_WGPU=1` is set.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use orbitfield::analysis::rdf::{RdfAccumulator, RdfSettings};
use orbitfield::compute::SlabEngine;
use orbitfield::compute::cpu::CpuEngine;
use orbitfield::compute::wgpu::engine::WgpuEngine;
use orbitfield::jobs::rdf::{RdfDone, RdfWorkers};
use orbitfield::jobs::{EngineSpec, Pool, PoolConfig};
use std::sync::Arc;

#[path = "common/rdf_cases.rs"]
mod rdf_cases;

fn engine() -> Option<WgpuEngine> {
    let required = std::env::var("ORBITFIELD_REQUIRE_WGPU").is_ok_and(|v| v == "1");
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    let adapter = match pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
        power_preference: wgpu::PowerPreference::HighPerformance,
        ..Default::default()
    })) {
        Ok(a) => a,
        Err(e) => {
            assert!(!required, "no wgpu adapter: {e}");
            eprintln!("skipping: no adapter ({e})");
            return None;
        }
    };
    match WgpuEngine::new(&adapter) {
        Ok(e) => {
            eprintln!("RDF frames on {}", e.name());
            Some(e)
        }
        Err(e) => {
            assert!(!required, "no wgpu engine: {e}");
            eprintln!("skipping: {e}");
            None
        }
    }
}

fn seed() -> u64 {
    let s = std::env::var("ORBITFIELD_TEST_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(rdf_cases::clock_seed);
    println!("seed {s}");
    s
}

/// One frame through `workers`: its finished item.
fn one_frame(workers: &RdfWorkers, case: &rdf_cases::RdfCase, settings: &RdfSettings) -> RdfDone {
    let mut acc = RdfAccumulator::new(settings.clone()).unwrap();
    let item = Ok::<_, String>((
        0usize,
        case.frame.clone(),
        Arc::new(case.sel1.clone()),
        Arc::new(case.sel2.clone()),
    ));
    let mut done = None;
    workers
        .run(&mut acc, case.groups.clone(), [item], |_, d| done = Some(d.clone()))
        .unwrap();
    done.unwrap()
}

#[test]
fn rdf_frames_on_a_wgpu_worker_equal_the_cpu_engine() {
    let Some(gpu) = engine() else { return };
    let gpu_name = gpu.name();
    let pool: Pool<()> = Pool::with_engines(
        vec![
            EngineSpec {
                engine: Arc::new(gpu),
                is_gpu: true,
            },
            EngineSpec {
                engine: Arc::new(CpuEngine),
                is_gpu: false,
            },
        ],
        PoolConfig::default(),
    );
    let workers = RdfWorkers::on(pool.device_workers());
    assert!(workers.has_gpu());
    assert!(
        workers.worker_names().iter().all(|n| n.contains("wgpu:")),
        "{:?}",
        workers.worker_names()
    );
    let mut state = seed();
    for case in rdf_cases::kernel_cases(&mut state, (500, 450), (300, 400)) {
        let done = one_frame(&workers, &case, &case.settings);
        assert_eq!(done.engine, gpu_name, "{}: {:?}", case.name, done.note);
        assert!(done.note.is_none(), "{}: {:?}", case.name, done.note);
        let (got, cell) = done.result.unwrap();
        let g = case.groups.as_deref();
        let acc = RdfAccumulator::new(case.settings.clone()).unwrap();
        let checked = acc.check_frame(0, &case.frame, &case.sel1, &case.sel2, g).unwrap();
        assert_eq!(cell, checked, "{}", case.name);
        let want = acc
            .frame_counts_cpu(&case.frame, checked, &case.sel1, &case.sel2, g)
            .unwrap();
        let total: u64 = want.iter().sum();
        println!("{}: {total} pairs within r_max on {}", case.name, done.engine);
        assert!(total > 1_000, "{}: too few pairs to test", case.name);
        rdf_cases::assert_counts_close(&got, &want, rdf_cases::R_MAX, &case.name);
        // The comparison can fail: the same counts one bin further out.
        let mut moved = vec![0u64; got.len()];
        moved[1..].copy_from_slice(&got[..got.len() - 1]);
        // (Quietly: the one test of this file owns the panic hook.)
        let hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let failed = std::panic::catch_unwind(|| {
            rdf_cases::assert_counts_close(&moved, &want, rdf_cases::R_MAX, "moved by one bin")
        });
        std::panic::set_hook(hook);
        assert!(failed.is_err(), "{}: counts moved by one bin passed", case.name);
    }
    // More bins than the pass holds: the worker's device refuses the frame, the CPU computes it.
    let case = &rdf_cases::kernel_cases(&mut state, (200, 200), (10, 10))[0];
    let settings = RdfSettings {
        bins: 3000,
        ..case.settings.clone()
    };
    let done = one_frame(&workers, case, &settings);
    assert_eq!(done.engine, "cpu");
    let note = done.note.unwrap_or_default();
    assert!(note.contains("computed on the CPU instead"), "{note}");
    let acc = RdfAccumulator::new(settings).unwrap();
    let checked = acc.check_frame(0, &case.frame, &case.sel1, &case.sel2, None).unwrap();
    let want = acc
        .frame_counts_cpu(&case.frame, checked, &case.sel1, &case.sel2, None)
        .unwrap();
    assert_eq!(done.result.unwrap().0, want);
}
