//! Throughput of the wgpu engine's kernels beside the CUDA engine and the CPU engine, in one run on
//! one machine: direct Coulomb maps (vacuum and Debye-Hueckel), cutoff and multilevel-summation
//! maps of a periodic box, an orbital and the density of threonine, and RDF pair counts. Figures go to `benches/RESULTS.md`.
//!
//! `cargo run --release --example wgpu_throughput [-- --quick] [-- --no-cpu]` (the adapter: the first hardware one,
//! else any; `WGPU_BACKEND=vulkan` picks the backend). Each case is run once to warm up (pipelines,
//! module compilation) and then timed over several repetitions; the wgpu and CUDA figures include
//! the upload of inputs and the read-back of the slab, as the pool's tiles do.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use orbitfield::analysis::rdf::{RdfAccumulator, RdfSettings};
use orbitfield::compute::cpu::CpuEngine;
use orbitfield::compute::cuda::CudaEngine;
use orbitfield::compute::cuda::rdf::{PairGeometry, RdfMethod};
use orbitfield::compute::esp::screening::{Dielectric, ScreenedCharges};
use orbitfield::compute::esp::{Boundary, EspMethod, MsmParams, StagesOn, field_input_with};
use orbitfield::compute::wgpu::engine::WgpuEngine;
use orbitfield::compute::wgpu::rdf::RdfPairs;
use orbitfield::compute::{Field, FieldInput, FieldJob, PointCharges, SlabEngine};
use orbitfield::model::{Frame, Lattice, Spin, UnitCell};
use std::sync::Arc;
use std::time::Instant;

fn lcg(s: &mut u64) -> f64 {
    *s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    (*s >> 11) as f64 / (1u64 << 53) as f64
}

/// Seconds per call of `f` (best of `reps` after one warm-up call).
fn time(reps: usize, mut f: impl FnMut()) -> f64 {
    f();
    let mut best = f64::MAX;
    for _ in 0..reps {
        let t = Instant::now();
        f();
        best = best.min(t.elapsed().as_secs_f64());
    }
    best
}

fn slab_time(engine: &dyn SlabEngine, job: &FieldJob, planes: usize, reps: usize) -> f64 {
    let mut out = vec![0.0f32; job.lattice.dims[0] * job.lattice.dims[1] * planes];
    time(reps, || {
        if let Err(e) = engine.compute_slab(job, 0..planes, &mut out) {
            println!("  {}: {e}", engine.name());
        }
    })
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    // The GPU engines only (the CPU engine's figures are the slow part of a debug build).
    let with_cpu = !std::env::args().any(|a| a == "--no-cpu");
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
        power_preference: wgpu::PowerPreference::HighPerformance,
        ..Default::default()
    }))
    .expect("a wgpu adapter");
    let wgpu_engine = WgpuEngine::new(&adapter).expect("a wgpu device");
    let cuda = CudaEngine::new(0).ok();
    println!("wgpu: {}", wgpu_engine.name());
    println!("cuda: {}", cuda.as_ref().map_or("none".to_string(), |c| c.name()));
    let mut engines: Vec<(&str, &dyn SlabEngine)> = vec![("wgpu", &wgpu_engine)];
    if let Some(c) = &cuda {
        engines.push(("cuda", c));
    }
    let reps = if quick { 1 } else { 3 };

    // Coulomb: 20,000 charges onto a 128 x 128 x 64 lattice (the CPU: 4 planes).
    let mut s = 7u64;
    let n = if quick { 2_000 } else { 20_000 };
    let mut q = PointCharges::default();
    for _ in 0..n {
        q.positions_bohr.push([0; 3].map(|_| 60.0 * lcg(&mut s)));
        q.charges_e.push(2.0 * lcg(&mut s) - 1.0);
    }
    let q = Arc::new(q);
    let lattice = Lattice::axis_aligned([0.0; 3], 0.47, [128, 128, if quick { 8 } else { 64 }]);
    for (label, input) in [
        ("coulomb vacuum", FieldInput::Charges(q.clone())),
        (
            "coulomb Debye-Hueckel",
            FieldInput::ScreenedCharges(Arc::new(ScreenedCharges {
                charges: q.clone(),
                dielectric: Dielectric::debye_default(),
            })),
        ),
    ] {
        let job = FieldJob {
            field: Field::Potential,
            lattice,
            input,
        };
        let per_plane = (128 * 128 * n) as f64;
        for (name, e) in &engines {
            let t = slab_time(*e, &job, lattice.dims[2], reps);
            let rate = per_plane * lattice.dims[2] as f64 / t / 1e9;
            println!("{label}: {name} {:.1} ms, {rate:.1} G pair terms/s", 1e3 * t);
        }
        if !with_cpu {
            continue;
        }
        let t = slab_time(&CpuEngine, &job, 4, 1);
        println!(
            "{label}: cpu {:.1} ms for 4 planes, {:.2} G pair terms/s",
            1e3 * t,
            per_plane * 4.0 / t / 1e9
        );
    }

    // Cutoff and MSM: 100,000 charges in a 100 A periodic box (liquid density), a = 12 A, h = 2 A,
    // onto a 128 x 128 x 64 lattice (0.78 A); the plan (bins, levels) is built once on the host and
    // each engine keeps its upload between calls, as for a pool's tiles (the CPU: 2 planes).
    let (n, box_angstrom) = if quick { (10_000, 46.4) } else { (100_000, 100.0) };
    let box_bohr = orbitfield::model::units::bohr_from_angstrom(box_angstrom);
    let mut q = PointCharges::default();
    for _ in 0..n {
        q.positions_bohr.push([0; 3].map(|_| box_bohr * lcg(&mut s)));
        q.charges_e.push(2.0 * lcg(&mut s) - 1.0);
    }
    let q = Arc::new(q);
    let lattice = Lattice::axis_aligned([0.0; 3], box_bohr / 128.0, [128, 128, if quick { 8 } else { 64 }]);
    let cell = Boundary::Periodic(UnitCell::orthorhombic([box_angstrom; 3]));
    for (label, method) in [
        ("cutoff 12 A", EspMethod::Cutoff { cutoff_angstrom: 12.0 }),
        ("msm a = 12 A, h = 2 A", EspMethod::Msm(MsmParams::default())),
    ] {
        let input = field_input_with(q.clone(), method, cell, &lattice, StagesOn::Host).unwrap();
        let job = FieldJob {
            field: Field::Potential,
            lattice,
            input,
        };
        let points = (128 * 128 * lattice.dims[2]) as f64;
        for (name, e) in &engines {
            let t = slab_time(*e, &job, lattice.dims[2], reps);
            println!(
                "{label}, {n} charges, periodic: {name} {:.1} ms, {:.2} M points/s",
                1e3 * t,
                points / t / 1e6
            );
        }
        if !with_cpu {
            continue;
        }
        let t = slab_time(&CpuEngine, &job, 2, 1);
        println!(
            "{label}, {n} charges, periodic: cpu {:.1} ms for 2 planes, {:.2} M points/s",
            1e3 * t,
            (128 * 128 * 2) as f64 / t / 1e6
        );
    }

    // MSM with its levels on each engine's device (`StagesOn::Engine`): a fresh plan per run, so each
    // time holds the levels (anterpolation, restriction, lattice cutoffs, prolongation) and the whole
    // lattice's slab; the smallest of three.
    for (name, e) in &engines {
        let mut best = f64::INFINITY;
        for _ in 0..3 {
            let method = EspMethod::Msm(MsmParams::default());
            let input = field_input_with(q.clone(), method, cell, &lattice, StagesOn::Engine).unwrap();
            let job = FieldJob {
                field: Field::Potential,
                lattice,
                input,
            };
            best = best.min(slab_time(*e, &job, lattice.dims[2], 1));
        }
        println!(
            "msm a = 12 A, h = 2 A, {n} charges, periodic, levels on the device and the whole lattice: {name} {:.1} ms",
            1e3 * best
        );
    }

    // Orbitals: threonine's HOMO and density on a 96^3 lattice (the CPU: 8 planes).
    let root = std::env::var_os("ORBITFIELD_TEST_ROOT")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf());
    let path = root.join("assets/bench/threonine_hf_631gs_cart.molden");
    let bytes = std::fs::read(&path).unwrap();
    let wf = Arc::new(
        orbitfield::io::molden::read(&path, &bytes)
            .unwrap()
            .wavefunctions
            .into_iter()
            .next()
            .unwrap(),
    );
    let mut lo = [f64::MAX; 3];
    let mut hi = [f64::MIN; 3];
    for a in &wf.atoms {
        for k in 0..3 {
            lo[k] = lo[k].min(a.position_bohr[k] - 4.0);
            hi[k] = hi[k].max(a.position_bohr[k] + 4.0);
        }
    }
    let m = if quick { 32 } else { 96 };
    let spacing = (0..3).map(|k| (hi[k] - lo[k]) / (m as f64 - 1.0)).fold(0.0, f64::max);
    let lattice = Lattice::axis_aligned(lo, spacing, [m, m, m]);
    let homo = wf.homo(Spin::Alpha).unwrap();
    for (label, field) in [
        (
            "orbital (HOMO)",
            Field::Orbital {
                spin: Spin::Alpha,
                index: homo,
            },
        ),
        ("density", Field::Density),
    ] {
        let job = FieldJob {
            field,
            lattice,
            input: FieldInput::Wavefunction(wf.clone()),
        };
        for (name, e) in &engines {
            let t = slab_time(*e, &job, m, reps);
            println!(
                "threonine {label} {m}^3: {name} {:.2} ms, {:.0} M points/s",
                1e3 * t,
                (m * m * m) as f64 / t / 1e6
            );
        }
        if !with_cpu {
            continue;
        }
        let t = slab_time(&CpuEngine, &job, 8, 1);
        println!(
            "threonine {label}: cpu {:.1} ms for 8 planes, {:.1} M points/s",
            1e3 * t,
            (m * m * 8) as f64 / t / 1e6
        );
    }

    // RDF: 40,000 x 40,000 atoms in a 100 A orthorhombic box, r_max 15 A, 300 bins.
    let na = if quick { 4_000 } else { 40_000 };
    let frame = Frame {
        positions_angstrom: (0..na).map(|_| [0; 3].map(|_| (100.0 * lcg(&mut s)) as f32)).collect(),
        cell: Some(UnitCell::orthorhombic([100.0, 100.0, 100.0])),
        ..Frame::default()
    };
    let settings = RdfSettings {
        r_max_angstrom: 15.0,
        bins: 300,
        exclude_same_group: false,
    };
    let sel: Vec<u32> = (0..na as u32).collect();
    let acc = RdfAccumulator::new(settings.clone()).unwrap();
    let cell = acc.check_frame(0, &frame, &sel, &sel, None).unwrap();
    let geom = PairGeometry::new(&frame, cell, &sel, &sel, None);
    let pairs = (na * na) as f64;
    {
        let (device, queue) = wgpu_engine.device();
        let pass = RdfPairs::new(device);
        for method in [RdfMethod::AllPairs, RdfMethod::Auto] {
            let mut ran = method;
            let t = time(reps, || {
                ran = pass.counts_with(device, queue, &geom, &settings, method).unwrap().1;
            });
            println!(
                "rdf {na}x{na}: wgpu {method} ({ran}) {:.1} ms, {:.1} G pairs/s (all-pairs equivalent)",
                1e3 * t,
                pairs / t / 1e9
            );
        }
        let all = pass
            .counts_with(device, queue, &geom, &settings, RdfMethod::AllPairs)
            .unwrap()
            .0;
        let cells = pass
            .counts_with(device, queue, &geom, &settings, RdfMethod::Cells)
            .unwrap()
            .0;
        println!(
            "rdf {na}x{na}: wgpu cell-list counts {} the all-pairs counts",
            if cells == all { "equal" } else { "DIFFER FROM" }
        );
    }
    if let Some(c) = &cuda {
        for method in [RdfMethod::AllPairs, RdfMethod::Auto] {
            let t = time(reps, || {
                c.rdf_counts_with(&geom, &settings, method).unwrap();
            });
            println!(
                "rdf {na}x{na}: cuda {method} {:.1} ms, {:.1} G pairs/s (all-pairs equivalent)",
                1e3 * t,
                pairs / t / 1e9
            );
        }
    }
    if !with_cpu {
        return;
    }
    let t = time(1, || {
        acc.frame_counts_cpu(&frame, cell, &sel, &sel, None).unwrap();
    });
    println!(
        "rdf {na}x{na}: cpu (cell list) {:.1} ms, {:.2} G pairs/s (all-pairs equivalent)",
        1e3 * t,
        pairs / t / 1e9
    );
}
