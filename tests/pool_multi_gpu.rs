//! The worker pool on every CUDA device against one device and against the CPU engine: pipelined
//! slabs (kernels of one chunk beside the copy back of the one before) equal the CPU engine's
//! values at several chunk sizes, copied back through page-locked chunk buffers or straight into
//! memory registered with the driver (as the pool registers the grid buffers given back to it); a
//! NaN a kernel writes is an error on every way back, and the pool then computes the tile
//! elsewhere; maps computed with their tiles spread over all devices, and potentials averaged over
//! frames that are in flight on all devices at once, equal the one-device maps within float
//! rounding.
//!
//! Every test needs a CUDA device; without one it prints why and passes, unless
//! `ORBITFIELD_REQUIRE_CUDA=1` is set (the device machine runs these with it set). On a one-device
//! machine "all devices" is that device (the test then checks the pool against itself and says so).
//! Data: `tests/data` (or `$ORBITFIELD_TEST_ROOT/tests/data` where the tests run on another machine).

// Tests may unwrap: a panic is a failed test (house rules).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use orbitfield::analysis::esp_series::{self, Combine, MapAccumulator, MemoryLimit, SeriesSettings};
use orbitfield::compute::cpu::CpuEngine;
use orbitfield::compute::cuda;
use orbitfield::compute::esp::EspMethod;
use orbitfield::compute::{ComputeError, Field, FieldInput, FieldJob, PointCharges, SlabEngine};
use orbitfield::jobs::{DeviceChoice, EngineSpec, Pool, PoolConfig, SlotId};
use orbitfield::model::{Grid3, Lattice, Spin};
use std::path::PathBuf;
use std::sync::Arc;

#[path = "common/cuda_device.rs"]
mod cuda_device;
use cuda_device::device;

fn data(relative: &str) -> PathBuf {
    std::env::var_os("ORBITFIELD_TEST_ROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")))
        .join("tests/data")
        .join(relative)
}

fn all_devices() -> Vec<usize> {
    let n = cuda::discover(None).engines.len().max(1);
    println!("{n} CUDA device(s)");
    (0..n).collect()
}

fn gpu_pool(devices: &[usize]) -> Pool<usize> {
    let pool = Pool::new(PoolConfig {
        preference: DeviceChoice::Gpu,
        devices: Some(devices.to_vec()),
        ..PoolConfig::default()
    });
    assert!(pool.has_gpu(), "no GPU worker over {devices:?}: {:?}", pool.notes());
    pool
}

/// Largest |a - b| over the largest |b|.
fn max_rel_diff(a: &[f32], b: &[f32]) -> f64 {
    assert_eq!(a.len(), b.len());
    let scale = b.iter().fold(0.0f64, |m, v| m.max(f64::from(v.abs())));
    let d = a.iter().zip(b).fold(0.0f64, |m, (x, y)| {
        assert!(x.is_finite() && y.is_finite());
        m.max(f64::from((x - y).abs()))
    });
    assert!(scale > 0.0, "an all-zero map proves nothing");
    d / scale
}

fn water_homo_job(dims: [usize; 3]) -> FieldJob {
    let path = data("gpu/water_hf_631gs_cart.molden");
    let bytes = std::fs::read(&path).unwrap();
    let file = orbitfield::io::molden::read(&path, &bytes).unwrap();
    let wf = Arc::new(file.wavefunctions.into_iter().next().unwrap());
    let index = wf.homo(Spin::Alpha).unwrap();
    // About 3 bohr around the molecule, the spacing set by the dims.
    let origin = [-6.0, -6.0, -6.0];
    let spacing = 12.0 / dims[2] as f64;
    FieldJob {
        field: Field::Orbital {
            spin: Spin::Alpha,
            index,
        },
        lattice: Lattice::axis_aligned(origin, spacing, dims),
        input: FieldInput::Wavefunction(wf),
    }
}

#[test]
fn pipelined_slabs_equal_the_cpu_engine_at_any_offset() {
    let Some(gpu) = device() else { return };
    // Over a million points: computed in chunks whose copies overlap the next chunk's kernels; a
    // slab starting mid-lattice and a ragged last chunk; chunks of 1M and 64k points, through
    // page-locked chunk buffers and straight into registered memory.
    let job = water_homo_job([130, 120, 150]);
    for z in [0..150, 17..140] {
        let n = 130 * 120 * z.len();
        let mut want = vec![0.0f32; n];
        CpuEngine.compute_slab(&job, z.clone(), &mut want).unwrap();
        for chunk in [1 << 20, 1 << 16] {
            gpu.set_pipeline_chunk_points(chunk).unwrap();
            for register in [false, true] {
                let mut got = vec![f32::NAN; n];
                let registration =
                    // SAFETY: `got` is neither moved nor freed before the registration drops.
                    register.then(|| unsafe { cuda::HostRegistration::new(gpu.context(), &mut got) }.unwrap());
                gpu.compute_slab(&job, z.clone(), &mut got).unwrap();
                drop(registration);
                let stats = gpu.take_pipeline_stats().unwrap();
                assert_eq!(
                    (stats.staged_slabs, stats.direct_slabs),
                    if register { (0, 1) } else { (1, 0) },
                    "{stats:?}"
                );
                let d = max_rel_diff(&got, &want);
                println!(
                    "planes {z:?}, chunk {chunk}, registered {register}: {} chunks, max diff / max {d:.2e}",
                    stats.chunks
                );
                assert!(d < 1e-5, "planes {z:?}, chunk {chunk}, registered {register}: {d:.2e}");
            }
        }
    }
}

#[test]
fn a_nan_written_by_a_kernel_is_an_error_on_every_way_back() {
    let Some(gpu) = device() else { return };
    let dims = [130, 120, 150];
    let job = water_homo_job(dims);
    let plane = dims[0] * dims[1];
    // A point in the middle of the lattice, inside a middle chunk of the small chunk size.
    let at = 77 * plane + 61 * dims[0] + 5;
    gpu.set_nan_at(Some(at)).unwrap();
    // Pipelined (staged and direct, two chunk sizes), and one copy of a slab smaller than a chunk.
    for (z, chunk) in [(0..150, 1 << 20), (0..150, 1 << 16), (70..80, 1 << 20)] {
        gpu.set_pipeline_chunk_points(chunk).unwrap();
        for register in [false, true] {
            let mut got = vec![0.0f32; plane * z.len()];
            // SAFETY: `got` is neither moved nor freed before the registration drops.
            let registration =
                register.then(|| unsafe { cuda::HostRegistration::new(gpu.context(), &mut got) }.unwrap());
            let r = gpu.compute_slab(&job, z.clone(), &mut got);
            drop(registration);
            println!("planes {z:?}, chunk {chunk}, registered {register}: {r:?}");
            assert!(
                matches!(r, Err(ComputeError::NotFinite)),
                "{z:?} {chunk} {register}: {r:?}"
            );
        }
    }
    // Slabs without the point are unaffected.
    let mut got = vec![0.0f32; plane * 40];
    gpu.compute_slab(&job, 100..140, &mut got).unwrap();
    gpu.set_nan_at(None).unwrap();
    gpu.set_pipeline_chunk_points(0).unwrap();
}

/// A pool over the CUDA engines of `devices` (returned too, to tune and inspect them) and one CPU
/// worker, registering the grid buffers given back.
fn registering_pool(devices: &[usize], chunk_points: usize) -> (Pool<usize>, Vec<Arc<cuda::CudaEngine>>) {
    let found = cuda::discover(Some(devices));
    assert!(!found.engines.is_empty(), "{:?}", found.notes);
    let mut specs: Vec<EngineSpec> = found
        .engines
        .iter()
        .map(|e| {
            e.set_pipeline_chunk_points(chunk_points).unwrap();
            EngineSpec {
                engine: e.clone() as Arc<dyn SlabEngine>,
                is_gpu: true,
            }
        })
        .collect();
    specs.push(EngineSpec {
        engine: Arc::new(CpuEngine),
        is_gpu: false,
    });
    let config = PoolConfig {
        preference: DeviceChoice::Gpu,
        register_recycled: true,
        ..PoolConfig::default()
    };
    (Pool::with_engines(specs, config), found.engines)
}

/// Planes `z` of `job` on the CPU engine against the same planes of `grid`: the largest difference
/// over the largest magnitude of the whole grid (planes at the lattice's edge hold only the
/// orbital's tail).
fn planes_against_cpu(job: &FieldJob, grid: &Grid3, z: std::ops::Range<usize>) -> f64 {
    let plane = job.lattice.dims[0] * job.lattice.dims[1];
    let mut want = vec![0.0f32; plane * z.len()];
    CpuEngine.compute_slab(job, z.clone(), &mut want).unwrap();
    let got = &grid.values[z.start * plane..z.end * plane];
    let scale = grid.values.iter().fold(0.0f64, |m, v| m.max(f64::from(v.abs())));
    assert!(scale > 0.0, "an all-zero map proves nothing");
    let d = got.iter().zip(&want).fold(0.0f64, |m, (x, y)| {
        assert!(x.is_finite() && y.is_finite());
        m.max(f64::from((x - y).abs()))
    });
    d / scale
}

#[test]
fn grids_written_into_registered_buffers_equal_the_cpu_engine() {
    if device().is_none() {
        return;
    }
    let devices = all_devices();
    let job = water_homo_job([160, 160, 160]);
    let (pool, engines) = registering_pool(&devices, 1 << 18);
    let first = pool.compute_grid(0, job.clone()).unwrap();
    let fresh = engines
        .iter()
        .map(|e| e.take_pipeline_stats().unwrap())
        .collect::<Vec<_>>();
    assert!(
        fresh.iter().all(|s| s.direct_slabs == 0),
        "fresh memory is not registered: {fresh:?}"
    );
    let mut last = first.values.clone();
    pool.recycle(first.values);
    // Twice into the registered buffer (each given back again), then the values left the pool
    // unregistered: giving them back registers them once more.
    for round in 0..2 {
        let g = pool.compute_grid(0, job.clone()).unwrap();
        let stats = engines
            .iter()
            .map(|e| e.take_pipeline_stats().unwrap())
            .collect::<Vec<_>>();
        println!("round {round}: {stats:?}");
        assert!(stats.iter().map(|s| s.direct_slabs).sum::<u64>() > 0, "{stats:?}");
        assert!(!cuda::is_registered(&g.values), "a grid left the pool registered");
        let d = max_rel_diff(&g.values, &last);
        assert!(d < 1e-6, "round {round} against the fresh grid: {d:.2e}");
        for z in [0..3, 78..82, 157..160] {
            let d = planes_against_cpu(&job, &g, z.clone());
            println!("round {round}, planes {z:?} against the CPU engine: {d:.2e}");
            assert!(d < 1e-5, "round {round} planes {z:?}: {d:.2e}");
        }
        last = g.values.clone();
        pool.recycle(g.values);
    }
    // A NaN written by a kernel into a registered buffer: the tile fails on the device and is
    // computed again elsewhere; the grid still equals the CPU engine's.
    let plane = 160 * 160;
    for e in &engines {
        e.set_nan_at(Some(80 * plane + 80 * 160 + 80)).unwrap();
    }
    let g = pool.compute_grid(0, job.clone()).unwrap();
    let failed: u64 = pool
        .workers()
        .iter()
        .filter(|w| w.is_gpu)
        .map(|w| w.tiles_failed.load(std::sync::atomic::Ordering::Relaxed))
        .sum();
    println!("tiles failed on the devices: {failed}");
    assert!(failed > 0, "the NaN went unnoticed");
    let d = planes_against_cpu(&job, &g, 78..82);
    println!("after the failed tiles, planes 78..82 against the CPU engine: {d:.2e}");
    assert!(d < 1e-5, "{d:.2e}");
}

#[test]
fn maps_with_tiles_on_all_devices_equal_the_one_device_maps() {
    if device().is_none() {
        return;
    }
    let devices = all_devices();
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut q = PointCharges::default();
    for _ in 0..20_000 {
        q.positions_bohr.push([next() * 60.0, next() * 60.0, next() * 45.0]);
        q.charges_e.push(next() * 2.0 - 1.0);
    }
    let coulomb = FieldJob {
        field: Field::Potential,
        lattice: Lattice::axis_aligned([0.0; 3], 0.5, [128, 128, 96]),
        input: FieldInput::Charges(Arc::new(q)),
    };
    let orbital = water_homo_job([160, 160, 160]);
    let one = gpu_pool(&devices[..1]);
    let all = gpu_pool(&devices);
    for (name, job) in [("coulomb", coulomb), ("orbital", orbital)] {
        let a = one.compute_grid(0, job.clone()).unwrap();
        // Twice: the second request's tiles are sized from the measured rates.
        for round in 0..2 {
            let b = all.compute_grid(0, job.clone()).unwrap();
            let d = max_rel_diff(&b.values, &a.values);
            println!("{name} round {round} on {devices:?}: max diff / max {d:.2e}");
            assert!(d < 1e-6, "{name} round {round}: {d:.2e}");
        }
    }
    let tiles: Vec<u64> = all
        .workers()
        .iter()
        .filter(|w| w.is_gpu)
        .map(|w| w.tiles_done.load(std::sync::atomic::Ordering::Relaxed))
        .collect();
    println!("tiles per device {tiles:?}");
    if devices.len() > 1 {
        assert!(tiles.iter().all(|&t| t > 0), "a device computed no tile: {tiles:?}");
    }
}

fn averaged(devices: &[usize], in_flight: bool) -> Grid3 {
    let mut system = orbitfield::io::load(&[data("md/adk.psf"), data("md/adk_dims.dcd")]).unwrap();
    let charges = esp_series::require_charges(&system).unwrap();
    let frames: Vec<usize> = (0..system.trajectory.n_frames()).collect();
    assert!(frames.len() >= 90, "{} frames", frames.len());
    let mut f0 = orbitfield::model::Frame::default();
    system.trajectory.read_frame(0, &mut f0).unwrap();
    let (mut lo, mut hi) = ([f64::INFINITY; 3], [f64::NEG_INFINITY; 3]);
    for p in &f0.positions_angstrom {
        for k in 0..3 {
            lo[k] = lo[k].min(f64::from(p[k]));
            hi[k] = hi[k].max(f64::from(p[k]));
        }
    }
    let lattice = Lattice::around_box(lo, hi, 4.0, 1.0);
    let settings = SeriesSettings {
        method: EspMethod::Direct,
        periodic: false,
        combine: Combine::Avg,
        memory: MemoryLimit {
            bytes: u64::MAX,
            source: "test".into(),
        },
    };
    let pool = gpu_pool(devices);
    let mut acc = MapAccumulator::new(lattice, Combine::Avg, &settings.memory).unwrap();
    if in_flight {
        esp_series::fold_frames_ahead(
            &mut system.trajectory,
            &frames,
            &charges,
            &settings,
            &mut acc,
            2 * devices.len(),
            &mut |i, job| {
                pool.submit(SlotId(i as u64), i, job);
                Ok(())
            },
            &mut || {
                let r = pool.results().recv().map_err(|e| e.to_string())?;
                r.outcome.map(|g| (r.key, g)).map_err(|e| e.to_string())
            },
            &mut |values| pool.recycle(values),
            &mut |_| {},
        )
        .unwrap();
    } else {
        let mut eval = |job: FieldJob| pool.compute_grid(0, job).map_err(|e| e.to_string());
        esp_series::fold_frames(
            &mut system.trajectory,
            &frames,
            &charges,
            &settings,
            &mut acc,
            &mut eval,
            &mut |_| {},
        )
        .unwrap();
    }
    assert_eq!(acc.count() as usize, frames.len());
    acc.finish(1.0, "").unwrap()
}

#[test]
fn potentials_averaged_over_frames_in_flight_on_all_devices_equal_one_device() {
    if device().is_none() {
        return;
    }
    let devices = all_devices();
    let one = averaged(&devices[..1], false);
    let all = averaged(&devices, true);
    let d = max_rel_diff(&all.values, &one.values);
    println!("adk average over {devices:?}: max diff / max {d:.2e}");
    assert!(d < 1e-6, "{d:.2e}");
    // The CPU engine, on a few planes of one frame, is the independent check of the device maps
    // themselves (gpu_engine covers the kernel); here the average must at least be a potential:
    // finite everywhere and not constant.
    let (lo, hi) = one
        .values
        .iter()
        .fold((f32::INFINITY, f32::NEG_INFINITY), |(a, b), &v| (a.min(v), b.max(v)));
    assert!(lo < hi && lo.is_finite() && hi.is_finite());
}
