//! The cartoon mesh written on the render device (`compute::wgpu::cartoon`, `shaders/cartoon.wgsl`)
//! against the CPU mesh of the same segments (`surface::cartoon::build`, the reference, itself
//! checked against analytic shapes in its unit tests): adk (the first frame of adk_dims.dcd, DSSP
//! secondary structure), an RNA hairpin (1K5I: backbone tube and base slabs) and fresh random
//! chains with random resolution, style and values. Output buffers are poisoned (NaN, all-ones
//! indices) before the pass runs into them, so every element must be written. A render of adk's
//! cartoon through the device mesh is compared with the render of the CPU mesh. Protein tubes take
//! the per-residue path (spline and frames evaluated on the device), nucleic-acid tubes and base
//! slabs the per-ring path; chains whose frames the CPU carries from ring to ring (samples without
//! a direction, carbonyls along the chain) check the device's look-back. Runs on whatever
//! adapter exists (Mesa lavapipe in CI); skipped, with the reason printed, where none exists.
//!
//! Tolerance: the same vertex and index counts, indices and colours equal, positions within
//! 2e-5 Angstrom plus 8 ulp of the vertex's largest coordinate, normals within 5e-5, values within
//! 1e-6 relative. The device evaluates the same f32 expressions in the same order, but may fuse
//! multiply-adds and round square roots and quotients less tightly (WGSL allows 2.5 ulp): a spline
//! point is a sum of four control points weighted by at most 1.25 in all, so each of its seven
//! operations may differ by half an ulp of terms up to the largest coordinate (about 4 ulp in
//! all, doubled for margin), and the frame's unit vectors by a few 1e-7, which the sections' half
//! widths (at most 1.6 Angstrom) turn into about 1e-6 Angstrom (the 2e-5). On lavapipe the
//! largest differences are 4e-6 Angstrom and 5e-7 (printed by each case). A random chain can bend
//! so that a frame is taken from nearly parallel directions; there the fused multiply-adds of an
//! NVIDIA H200 moved a normal by 1.0e-5 (0.0006 degrees), hence the 5e-5 for normals. A wrong
//! frame, section or sign differs by tenths.

#![cfg(feature = "gui")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use orbitfield::analysis::dssp::DsspOptions;
use orbitfield::analysis::polymer::{Coloring, Polymer};
use orbitfield::compute::wgpu::cartoon::{CartoonBuffers, CartoonCompute};
use orbitfield::compute::wgpu::cartoon_inputs::{CartoonRings, PIECE_BOXES, PIECE_SPLINE, PIECE_TUBE, rings_into};
use orbitfield::surface::MeshData;
use orbitfield::surface::cartoon::{self, CartoonParams, ProteinResidue, Segment, Shape, Style};
use std::path::{Path, PathBuf};

#[path = "common/wgpu_device.rs"]
mod wgpu_device;
use wgpu_device::compute_device;

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(rel)
}

/// Segments of one frame of `files` as the viewer makes them (DSSP, colours by `coloring`).
fn segments_of(files: &[PathBuf], coloring: Coloring) -> (Vec<Segment>, usize) {
    let mut system = orbitfield::io::load(files).unwrap();
    let positions = system.trajectory.frame(0).unwrap().positions_angstrom;
    let polymer = Polymer::new(&system.structure);
    let secondary = polymer.protein.assign(&positions, &DsspOptions::default());
    let values: Vec<f32> = (0..system.structure.len()).map(|a| (a as f32 * 0.37).sin()).collect();
    let values = (coloring == Coloring::Value).then_some(values.as_slice());
    (
        polymer.segments(&positions, &secondary, coloring, values),
        polymer.residue_count(),
    )
}

/// The device mesh of `segments`, read back, after a first pass into the same buffers and their
/// poisoning.
fn device_mesh(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    pass: &CartoonCompute,
    segments: &[Segment],
    params: &CartoonParams,
) -> (MeshData, CartoonRings) {
    let mut rings = CartoonRings::default();
    rings_into(segments, params, &mut rings);
    let mut buffers = CartoonBuffers::default();
    let first = pass.build(device, queue, &rings, &mut buffers).unwrap();
    for b in [&first.vertices, &first.colors, &first.indices] {
        queue.write_buffer(b, 0, &vec![0xffu8; b.size() as usize]);
    }
    let mesh = pass.build(device, queue, &rings, &mut buffers).unwrap();
    assert!(mesh.vertices == first.vertices, "buffers reused");
    (mesh.read_back(device, queue).unwrap(), rings)
}

fn assert_same(gpu: &MeshData, cpu: &MeshData, what: &str) {
    assert_eq!(
        gpu.positions_angstrom.len(),
        cpu.positions_angstrom.len(),
        "{what}: vertices"
    );
    assert_eq!(gpu.indices.len(), cpu.indices.len(), "{what}: indices");
    assert!(gpu.indices == cpu.indices, "{what}: indices differ");
    let (mut worst_p, mut worst_n) = (0.0f32, 0.0f32);
    for (k, (g, c)) in gpu.positions_angstrom.iter().zip(&cpu.positions_angstrom).enumerate() {
        for a in 0..3 {
            let d = (g[a] - c[a]).abs();
            let largest = c.iter().fold(0.0f32, |m, x| m.max(x.abs()));
            let tol = 2e-5 + 8.0 * f32::EPSILON * largest;
            assert!(d <= tol, "{what}: vertex {k} at {g:?}, CPU {c:?}");
            worst_p = worst_p.max(d);
        }
    }
    for (k, (g, c)) in gpu.normals.iter().zip(&cpu.normals).enumerate() {
        for a in 0..3 {
            let d = (g[a] - c[a]).abs();
            assert!(d <= 5e-5, "{what}: normal {k} {g:?}, CPU {c:?}");
            worst_n = worst_n.max(d);
        }
    }
    let rgb = |m: &MeshData| m.colors_rgba8.iter().map(|c| [c[0], c[1], c[2]]).collect::<Vec<_>>();
    assert!(rgb(gpu) == rgb(cpu), "{what}: colours differ");
    assert_eq!(gpu.values.len(), cpu.values.len(), "{what}: values");
    for (g, c) in gpu.values.iter().zip(&cpu.values) {
        assert!((g - c).abs() <= 1e-6 * c.abs().max(1.0), "{what}: value {g} vs {c}");
    }
    eprintln!(
        "{what}: {} vertices, {} triangles; largest differences: position {worst_p:.2e} A, normal {worst_n:.2e}",
        cpu.positions_angstrom.len(),
        cpu.indices.len() / 3
    );
}

#[test]
fn adk_and_an_rna_hairpin_equal_the_cpu_mesh() {
    let Some((device, queue)) = compute_device("render-device cartoon") else {
        return;
    };
    let pass = CartoonCompute::new(&device);
    let adk = [data("md/adk.psf"), data("md/adk_dims.dcd")];
    for (files, coloring, what) in [
        (&adk[..], Coloring::SecondaryStructure, "adk"),
        (&adk[..], Coloring::Value, "adk with values"),
        (
            &[data("cartoon/1k5i_rna.pdb.gz")][..],
            Coloring::SecondaryStructure,
            "1K5I RNA",
        ),
    ] {
        let (segments, residues) = segments_of(files, coloring);
        assert!(residues > 20, "{what}: {residues} residues");
        for style in Style::ALL {
            let params = CartoonParams {
                style,
                with_values: coloring == Coloring::Value,
                ..CartoonParams::for_residue_count(residues)
            };
            let cpu = cartoon::build(&segments, &params);
            let (gpu, rings) = device_mesh(&device, &queue, &pass, &segments, &params);
            if what.contains("RNA") && style == Style::Cartoon {
                assert!(rings.pieces.iter().any(|p| p.kind == PIECE_BOXES), "base slabs");
            }
            // Protein tubes go the per-residue way (spline on the device), nucleic tubes the
            // per-ring way.
            let kind = if what.contains("RNA") { PIECE_TUBE } else { PIECE_SPLINE };
            assert!(rings.pieces.iter().any(|p| p.kind == kind), "{what}: piece kinds");
            assert_same(&gpu, &cpu, &format!("{what} as {}", style.word()));
        }
    }
}

#[test]
fn fresh_random_chains_equal_the_cpu_mesh() {
    let Some((device, queue)) = compute_device("render-device cartoon") else {
        return;
    };
    let pass = CartoonCompute::new(&device);
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.subsec_nanos() | 1);
    eprintln!("seed {seed:#x}");
    let mut x = seed;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        x
    };
    let shapes = [Shape::Coil, Shape::Helix, Shape::Strand];
    for trial in 0..6 {
        let segments: Vec<Segment> = (0..1 + next() % 5)
            .map(|_| {
                let n = 1 + (next() % 60) as usize;
                let origin = [(next() % 200) as f32 - 100.0, (next() % 200) as f32, 0.0];
                Segment::Protein(
                    (0..n)
                        .map(|k| {
                            let a = k as f32 * 1.745;
                            let trace = [origin[0] + 2.3 * a.cos(), origin[1] + 2.3 * a.sin(), 1.5 * k as f32];
                            ProteinResidue {
                                trace,
                                // Every carbonyl in even trials (all tubes per residue), one in
                                // seven missing in odd ones (most tubes per ring).
                                guide: (trial % 2 == 0 || next() % 7 != 0)
                                    .then(|| [trace[0], trace[1] + 0.4, trace[2] + 1.2]),
                                shape: shapes[(next() % 3) as usize],
                                color: [(next() % 256) as u8, (next() % 256) as u8, 40, 255],
                                value: (next() % 1000) as f32 * 1e-3,
                            }
                        })
                        .collect(),
                )
            })
            .collect();
        let params = CartoonParams {
            style: Style::ALL[trial % 3],
            segments_per_residue: 1 + (next() % 9) as usize,
            sides: 4 + (next() % 29) as usize,
            with_values: next() % 2 == 0,
            ..CartoonParams::default()
        };
        let cpu = cartoon::build(&segments, &params);
        let (gpu, rings) = device_mesh(&device, &queue, &pass, &segments, &params);
        if trial % 2 == 0 {
            assert!(rings.pieces.iter().all(|p| p.kind == PIECE_SPLINE));
        }
        assert_same(&gpu, &cpu, &format!("random trial {trial} ({params:?})"));
    }
}

/// Chains whose spline samples lack a direction or whose carbonyls lie along the chain: the device
/// looks back for the frame the CPU carries from ring to ring.
#[test]
fn degenerate_frames_equal_the_cpu_mesh() {
    let Some((device, queue)) = compute_device("render-device cartoon") else {
        return;
    };
    let pass = CartoonCompute::new(&device);
    let residue = |trace: [f32; 3], guide: [f32; 3], shape: Shape| ProteinResidue {
        trace,
        guide: Some(guide),
        shape,
        color: [200, 100, 50, 255],
        value: trace[0],
    };
    // A straight chain with its carbonyls along it: no side vector anywhere.
    let collinear: Vec<ProteinResidue> = (0..6)
        .map(|k| {
            residue(
                [3.8 * k as f32, 0.0, 0.0],
                [3.8 * k as f32 + 1.2, 0.0, 0.0],
                Shape::Helix,
            )
        })
        .collect();
    // Back and forth between two points, the inner carbonyls along the chain: the spline has no
    // direction at the inner residues, and there their side vectors lie along the carried tangent.
    let folded: Vec<ProteinResidue> = (0..7)
        .map(|k| {
            let x = if k % 2 == 0 { 0.0 } else { 3.8 };
            let guide = if k == 0 || k == 6 {
                [x, 1.2, 0.3]
            } else {
                [x + 1.2, 0.0, 0.0]
            };
            residue([x, 0.0, 0.0], guide, Shape::Coil)
        })
        .collect();
    // A helix, then a strand with an arrowhead; three residues in the helix and the last one
    // without a carbonyl (carried sides).
    let mut mixed: Vec<ProteinResidue> = (0..16)
        .map(|k| {
            let a = (100.0 * k as f32).to_radians();
            let p = [2.3 * a.cos(), 2.3 * a.sin(), 1.5 * k as f32];
            let shape = if k < 9 { Shape::Helix } else { Shape::Strand };
            residue(p, [p[0], p[1], p[2] + 1.2], shape)
        })
        .collect();
    for k in [3, 4, 5, 15] {
        mixed[k].guide = None;
    }
    mixed[15].shape = Shape::Coil;
    let segments = vec![
        Segment::Protein(collinear),
        Segment::Protein(folded),
        Segment::Protein(mixed),
    ];
    for style in Style::ALL {
        for segments_per_residue in [1, 4, 8, 9] {
            let params = CartoonParams {
                style,
                segments_per_residue,
                with_values: true,
                ..CartoonParams::default()
            };
            let cpu = cartoon::build(&segments, &params);
            let (gpu, rings) = device_mesh(&device, &queue, &pass, &segments, &params);
            let kinds: Vec<u32> = rings.pieces.iter().map(|p| p.kind).collect();
            // The straight chain carries its side over all its samples: per residue where they
            // are few, per ring beyond.
            let straight = if 6 * segments_per_residue < 48 {
                PIECE_SPLINE
            } else {
                PIECE_TUBE
            };
            assert_eq!(kinds, [straight, PIECE_SPLINE, PIECE_SPLINE]);
            assert_same(
                &gpu,
                &cpu,
                &format!("degenerate frames as {} x {segments_per_residue}", style.word()),
            );
        }
    }
}

/// A headless render context whose adapter runs the cartoon pass; `None` (reason printed) elsewhere.
fn render_context() -> Option<orbitfield::render::RenderContext> {
    let ctx = match orbitfield::render::RenderContext::headless(1) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("skipping: {e}");
            return None;
        }
    };
    if !ctx.capabilities.cartoon_pass_supported() {
        eprintln!(
            "skipping: the adapter does not write cartoons ({})",
            ctx.capabilities.summary()
        );
        return None;
    }
    Some(ctx)
}

/// The cartoon covers a good part of the image drawn from the CPU mesh, and at most 1 in 1000 of
/// its pixels differs by more than 8 levels in the image drawn from the device mesh.
fn assert_alike(from_cpu: &image::RgbaImage, from_device: &image::RgbaImage, what: &str) {
    let drawn = from_cpu.pixels().filter(|p| p.0[..3].iter().any(|&c| c > 10)).count();
    let differ = from_cpu
        .pixels()
        .zip(from_device.pixels())
        .filter(|(a, b)| a.0.iter().zip(&b.0).any(|(x, y)| x.abs_diff(*y) > 8))
        .count();
    eprintln!("{what}: {drawn} pixels drawn, {differ} differ by more than 8 levels");
    assert!(drawn > 2000, "{what}: the cartoon covers {drawn} pixels");
    assert!(differ * 1000 <= drawn, "{what}: {differ} of {drawn} pixels differ");
}

#[test]
fn adk_drawn_from_the_device_mesh_looks_like_the_cpu_mesh() {
    use glam::Vec3;
    use orbitfield::render::{Camera, GpuScene, MeshInput, MeshStyle, OffscreenTarget, render_once};
    let Some(ctx) = render_context() else {
        return;
    };
    let (segments, residues) = segments_of(
        &[data("md/adk.psf"), data("md/adk_dims.dcd")],
        Coloring::SecondaryStructure,
    );
    let params = CartoonParams::for_residue_count(residues);
    let cpu = cartoon::build(&segments, &params);
    let mut rings = CartoonRings::default();
    rings_into(&segments, &params, &mut rings);
    let pass = CartoonCompute::new(&ctx.device);
    let mut buffers = CartoonBuffers::default();
    let gpu = pass.build(&ctx.device, &ctx.queue, &rings, &mut buffers).unwrap();
    let style = MeshStyle {
        color: [1.0; 3],
        opacity: 1.0,
    };
    let (mut lo, mut hi) = (Vec3::splat(f32::MAX), Vec3::splat(f32::MIN));
    for p in &cpu.positions_angstrom {
        lo = lo.min(Vec3::from_array(*p));
        hi = hi.max(Vec3::from_array(*p));
    }
    let size = [240, 180];
    let mut camera = Camera::default();
    camera.fit_to_bounds(lo, hi, size[0] as f32 / size[1] as f32);
    let draw = |scene: &GpuScene| {
        let target = OffscreenTarget::new(&ctx, size);
        render_once(&ctx, scene, &target, &camera);
        target.read_rgba(&ctx).unwrap()
    };
    let mut scene = GpuScene::new(&ctx);
    let input = MeshInput {
        positions_angstrom: &cpu.positions_angstrom,
        normals: &cpu.normals,
        indices: &cpu.indices,
        values: &[],
        colors_rgba8: &cpu.colors_rgba8,
    };
    scene.set_meshes(&ctx, &[(input, style)]);
    let from_cpu = draw(&scene);
    scene.set_meshes(&ctx, &[]);
    assert!(scene.add_cartoon_mesh(&ctx, &gpu, style));
    let from_device = draw(&scene);
    assert_alike(&from_cpu, &from_device, "adk cartoon");
}

#[test]
fn the_viewer_draws_its_cartoon_from_the_device_as_from_the_cpu() {
    use glam::Vec3;
    use orbitfield::app::draw::SceneSync;
    use orbitfield::app::fields::FieldService;
    use orbitfield::app::reps::spec::parse_atom_rep;
    use orbitfield::app::settings::Settings;
    use orbitfield::app::state::{AppState, Command};
    use orbitfield::jobs::cartoon::CartoonBuilt;
    use orbitfield::render::{Camera, GpuScene, OffscreenTarget, render_once};
    let Some(ctx) = render_context() else {
        return;
    };
    let size = [240, 180];
    let image = |on_device: bool| {
        let mut state = AppState::new(Settings::default(), FieldService::default());
        state.apply(Command::OpenFiles(vec![data("md/adk.psf"), data("md/adk_dims.dcd")]));
        let mut sync = SceneSync::new(&ctx);
        assert!(sync.writes_cartoons());
        state.view.gpu_cartoons = on_device;
        state.add_rep(&parse_atom_rep("protein:cartoon").unwrap()).unwrap();
        for _ in 0..3 {
            state.update_reps();
        }
        let (_, c) = state.reps().cartoons().next().unwrap();
        match &c.pipeline.shown {
            Some((k, CartoonBuilt::Rings(_))) => assert!(on_device && k.on_device),
            Some((k, CartoonBuilt::Mesh(_))) => assert!(!on_device && !k.on_device),
            None => panic!("no cartoon shown: {}", state.panels.status),
        }
        let mut scene = GpuScene::new(&ctx);
        sync.sync(&ctx, &mut scene, &mut state);
        assert_eq!(state.view.gpu_cartoons, on_device, "{}", state.panels.status);
        let (lo, hi) = state.scene_bounds().unwrap();
        let mut camera = Camera::default();
        camera.fit_to_bounds(Vec3::from(lo), Vec3::from(hi), size[0] as f32 / size[1] as f32);
        let target = OffscreenTarget::new(&ctx, size);
        render_once(&ctx, &scene, &target, &camera);
        target.read_rgba(&ctx).unwrap()
    };
    assert_alike(&image(false), &image(true), "viewer adk");
}
