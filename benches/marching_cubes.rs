//! CPU marching cubes on 128^3 lattices: a small surface (sphere, ~15k triangles) and a large one
//! (gyroid, ~950k triangles). The same fields are timed in scikit-image by
//! `tests/data/surface/time_skimage.py`; results in `benches/RESULTS.md` under "Marching cubes".
//! Each field is timed twice: `extract` (fresh memory per call, as scikit-image) and an
//! `Extractor` reused between calls.

use criterion::{Criterion, criterion_group, criterion_main};
use orbitfield::model::{Grid3, Lattice};
use orbitfield::surface;
use std::hint::black_box;

const N: usize = 128;

fn field(f: impl Fn(f64, f64, f64) -> f64) -> Grid3 {
    field_n(N, f)
}

fn field_n(n: usize, f: impl Fn(f64, f64, f64) -> f64) -> Grid3 {
    let lattice = Lattice::axis_aligned([0.0; 3], 0.2, [n; 3]);
    let mut grid = Grid3::zeros(lattice, "bench");
    for k in 0..n {
        for j in 0..n {
            for i in 0..n {
                grid.values[lattice.index(i, j, k)] = f(i as f64, j as f64, k as f64) as f32;
            }
        }
    }
    grid
}

fn sphere() -> Grid3 {
    let c = (N as f64 - 1.0) / 2.0;
    field(|i, j, k| 20.0f64.powi(2) - ((i - c).powi(2) + (j - c).powi(2) + (k - c).powi(2)))
}

fn gyroid() -> Grid3 {
    let a = 2.0 * std::f64::consts::PI / 21.0;
    field(|i, j, k| (a * i).sin() * (a * j).cos() + (a * j).sin() * (a * k).cos() + (a * k).sin() * (a * i).cos())
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("marching_cubes_128");
    group.sample_size(20);
    for (name, grid) in [("sphere_r20", sphere()), ("gyroid_p21", gyroid())] {
        let mesh = surface::extract(&grid, 0.0);
        eprintln!(
            "{name}: {} vertices, {} triangles",
            mesh.positions_angstrom.len(),
            mesh.triangle_count()
        );
        group.bench_function(name, |b| b.iter(|| surface::extract(black_box(&grid), 0.0)));
        // Repeated extraction (iso slider, playback): working memory and output reused.
        let mut extractor = surface::Extractor::new();
        let mut out = surface::MeshData::default();
        group.bench_function(format!("{name}_reused"), |b| {
            b.iter(|| extractor.extract_into(black_box(&grid), 0.0, &mut out))
        });
    }
    group.finish();
}

/// GPU marching cubes (wgpu compute pass) on 256^3 lattices already on the GPU: one `encode` (which
/// also allocates its output buffers) or `encode_reusing` (into the previous mesh's buffers), submit,
/// and wait for the device. Skipped with a note when no
/// adapter exists.
fn bench_gpu(c: &mut Criterion) {
    use orbitfield::compute::wgpu::marching_cubes::{GpuLattice, McCompute, MeshCapacity};
    use orbitfield::render::context::RenderContext;
    let ctx = match RenderContext::headless(1) {
        Ok(ctx) => ctx,
        Err(e) => {
            eprintln!("GPU marching cubes not measured: {e}");
            return;
        }
    };
    eprintln!("GPU adapter: {}", ctx.adapter_summary);
    if !ctx.capabilities.mc_compute_supported {
        eprintln!("GPU marching cubes not measured: {}", ctx.capabilities.summary());
        return;
    }
    let n = 256;
    let c0 = (n as f64 - 1.0) / 2.0;
    let a = 2.0 * std::f64::consts::PI / 42.0;
    let cases = [
        (
            "sphere_r80",
            field_n(n, |i, j, k| {
                80.0f64.powi(2) - ((i - c0).powi(2) + (j - c0).powi(2) + (k - c0).powi(2))
            }),
        ),
        (
            "gyroid_p42",
            field_n(n, |i, j, k| {
                (a * i).sin() * (a * j).cos() + (a * j).sin() * (a * k).cos() + (a * k).sin() * (a * i).cos()
            }),
        ),
    ];
    let mc = McCompute::new(&ctx.device);
    let mut group = c.benchmark_group("gpu_marching_cubes_256");
    group.sample_size(20);
    for (name, grid) in cases {
        let Ok(lattice) = GpuLattice::upload(&ctx.device, &grid) else {
            eprintln!("{name}: lattice upload failed");
            continue;
        };
        let capacity = MeshCapacity::guess(&grid.lattice);
        let run = || {
            let mut encoder = ctx.device.create_command_encoder(&Default::default());
            let mesh = mc.encode(&ctx.device, &mut encoder, &lattice, 0.0, 1.0, capacity);
            ctx.queue.submit([encoder.finish()]);
            let _ = ctx.device.poll(wgpu::PollType::wait_indefinitely());
            mesh
        };
        if let Ok(mesh) = run()
            && let Ok((v, i)) = mesh.read_counts(&ctx.device, &ctx.queue)
        {
            eprintln!("{name}: {v} vertices, {} triangles on the GPU", i / 3);
        }
        group.bench_function(name, |b| b.iter(run));
        // Repeated extraction into the buffers of the previous mesh (iso slider, playback).
        let mut previous = run().ok();
        group.bench_function(format!("{name}_reused"), |b| {
            b.iter(|| {
                let mut encoder = ctx.device.create_command_encoder(&Default::default());
                let mesh = mc.encode_reusing(&ctx.device, &mut encoder, &lattice, 0.0, 1.0, capacity, previous.take());
                ctx.queue.submit([encoder.finish()]);
                let _ = ctx.device.poll(wgpu::PollType::wait_indefinitely());
                previous = mesh.ok();
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench, bench_gpu);
criterion_main!(benches);
