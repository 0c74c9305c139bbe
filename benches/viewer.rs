//! Viewer benchmarks: building instances for a million atoms (what a frame change costs on the
//! CPU) and drawing a million sphere impostors offscreen (what a redraw costs on the GPU).

use criterion::{Criterion, criterion_group, criterion_main};
use orbitfield::app::atoms::{self as representation, AtomColoring as ColorBy, AtomStyle as DrawStyle};
use orbitfield::model::{Element, Name8, Structure};
use orbitfield::render::{Camera, GpuScene, OffscreenTarget, RenderContext, render_once};
use std::hint::black_box;

/// A cubic lattice of `n` atoms (C, N, O, H in turn) 1.5 A apart.
fn lattice_system(n: usize) -> (Structure, Vec<[f32; 3]>) {
    let side = (n as f64).cbrt().ceil() as usize;
    let mut s = Structure::default();
    s.reserve(n);
    let mut p = Vec::with_capacity(n);
    for i in 0..n {
        let e = [6u8, 7, 8, 1][i % 4];
        s.push_atom(
            Element(e),
            Name8::from("X"),
            Name8::from("RES"),
            (i / 20) as i32,
            Name8::from("A"),
            Name8::EMPTY,
        );
        let (x, y, z) = (i % side, (i / side) % side, i / (side * side));
        p.push([x as f32 * 1.5, y as f32 * 1.5, z as f32 * 1.5]);
    }
    (s, p)
}

fn bench(c: &mut Criterion) {
    let n = 1_000_000;
    let (s, p) = lattice_system(n);
    let colors = representation::atom_colors(&s, ColorBy::Element);
    let mut spheres = Vec::new();
    c.bench_function("build_spheres_1M", |b| {
        b.iter(|| {
            representation::build_spheres(&s, black_box(&p), &colors, DrawStyle::Cpk, &mut spheres);
            black_box(spheres.len())
        })
    });
    let Ok(rc) = RenderContext::headless(4) else {
        eprintln!("no graphics adapter: skipping the draw benchmark");
        return;
    };
    eprintln!("adapter: {}", rc.adapter_summary);
    let mut scene = GpuScene::new(&rc);
    representation::build_spheres(&s, &p, &colors, DrawStyle::Cpk, &mut spheres);
    scene.set_spheres(&rc, &spheres);
    let (lo, hi) = representation::bounds(&p, 2.0).unwrap_or(([0.0; 3], [1.0; 3]));
    let mut camera = Camera::default();
    camera.orbit(0.4, 0.3);
    camera.fit_to_bounds(glam::Vec3::from(lo), glam::Vec3::from(hi), 16.0 / 9.0);
    let target = OffscreenTarget::new(&rc, [1280, 720]);
    let mut g = c.benchmark_group("draw");
    g.sample_size(10);
    g.bench_function("draw_1M_spheres_1280x720_msaa4", |b| {
        b.iter(|| {
            render_once(&rc, &scene, &target, &camera);
            let _ = rc.device.poll(wgpu::PollType::wait_indefinitely());
        })
    });
    g.bench_function("upload_positions_1M", |b| {
        b.iter(|| {
            scene.set_spheres(&rc, &spheres);
            let _ = rc.device.poll(wgpu::PollType::wait_indefinitely());
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
