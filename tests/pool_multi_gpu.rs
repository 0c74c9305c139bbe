//! The worker pool on every CUDA device against one device and against the CPU engine: pipelined
//! slabs (kernels of one chunk beside the copy back of the one before) equal the CPU engine's
//! values; maps computed with their tiles spread over all devices, and potentials averaged over
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
use orbitfield::compute::{Field, FieldInput, FieldJob, PointCharges, SlabEngine};
use orbitfield::jobs::{DeviceChoice, Pool, PoolConfig, SlotId};
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
    // slab starting mid-lattice and a ragged last chunk.
    let job = water_homo_job([130, 120, 150]);
    for z in [0..150, 17..140] {
        let n = 130 * 120 * z.len();
        let mut want = vec![0.0f32; n];
        CpuEngine.compute_slab(&job, z.clone(), &mut want).unwrap();
        let mut got = vec![f32::NAN; n];
        gpu.compute_slab(&job, z.clone(), &mut got).unwrap();
        let d = max_rel_diff(&got, &want);
        println!("planes {z:?}: max diff / max {d:.2e}");
        assert!(d < 1e-5, "planes {z:?}: {d:.2e}");
    }
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
