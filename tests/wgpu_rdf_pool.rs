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
use orbitfield::jobs::rdf::{RdfDone, RdfWorkers};
use orbitfield::jobs::{EngineSpec, Pool, PoolConfig};
use std::sync::Arc;

#[path = "common/wgpu_test_engine.rs"]
mod wgpu_test_engine;
use wgpu_test_engine::engine;

#[path = "common/rdf_cases.rs"]
mod rdf_cases;

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
    let Some(gpu) = engine("RDF frames") else { return };
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

/// `orbitfield rdf --device wgpu` (software adapters included when forced) histograms the frames on
/// the wgpu engine (no frame falls back to the CPU) and prints the CPU engine's g(r), up to pairs on
/// a bin edge.
#[test]
fn rdf_command_with_device_wgpu() {
    let root = std::env::var_os("ORBITFIELD_TEST_ROOT")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf());
    let md = root.join("tests/data/md");
    let rdf = |device: &str| {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_orbitfield"))
            .args(["rdf", "--sel1", "name OH2", "--sel2", "name OH2", "--rmax", "6"])
            .args(["--frames", "0:4", "--verbose", "--device", device])
            .arg(md.join("tip125_tric_C36.psf"))
            .arg(md.join("tip125_tric_C36.dcd"))
            .env_remove("ORBITFIELD_DEVICES")
            .output()
            .unwrap();
        (
            o.status.success(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let (ok, got, err) = rdf("wgpu");
    let required = std::env::var("ORBITFIELD_REQUIRE_WGPU").is_ok_and(|v| v == "1");
    if !ok && !required && err.contains("no wgpu adapter") {
        eprintln!("skipping: {err}");
        return;
    }
    assert!(ok, "--device wgpu: {err}");
    assert!(err.contains("rdf on wgpu"), "placed: {err}");
    assert!(!err.contains("computed on the CPU instead"), "{err}");
    let (ok, want, err) = rdf("cpu");
    assert!(ok, "--device cpu: {err}");
    let columns = |text: &str| -> Vec<[f64; 3]> {
        text.lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| {
                let v: Vec<f64> = l.split_whitespace().map(|x| x.parse().unwrap()).collect();
                [v[0], v[1], v[2]]
            })
            .collect()
    };
    let (got, want) = (columns(&got), columns(&want));
    assert_eq!(got.len(), want.len());
    assert!(got.len() >= 50);
    // n_cumulative counts pairs per atom of the first selection per frame (125 atoms, 4 frames): a
    // pair on a bin edge moves it by 1/500 in one bin.
    let mut moved = 0.0;
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g[0], w[0]);
        moved += (g[2] - w[2]).abs() * 500.0;
    }
    println!("rdf --device wgpu: {moved:.1} pair-bins apart from --device cpu");
    assert!(moved <= 4.0, "{moved} pair-bins apart");
}
