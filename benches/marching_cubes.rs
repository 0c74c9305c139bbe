//! CPU marching cubes on 128^3 lattices: a small surface (sphere, ~15k triangles) and a large one
//! (gyroid, ~950k triangles). The same fields are timed in scikit-image by
//! `tests/data/surface/time_skimage.py`; results in `benches/RESULTS.md` under "Marching cubes".

use criterion::{Criterion, criterion_group, criterion_main};
use orbitfield::model::{Grid3, Lattice};
use orbitfield::surface;
use std::hint::black_box;

const N: usize = 128;

fn field(f: impl Fn(f64, f64, f64) -> f64) -> Grid3 {
    let lattice = Lattice::axis_aligned([0.0; 3], 0.2, [N; 3]);
    let mut grid = Grid3::zeros(lattice, "bench");
    for k in 0..N {
        for j in 0..N {
            for i in 0..N {
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
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
