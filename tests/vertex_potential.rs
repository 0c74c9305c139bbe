//! The Coulomb potential at the vertices of a surface extracted on the render device
//! (`compute::wgpu::vertex_potential`, on whatever adapter exists: Mesa lavapipe in CI), against an
//! independent float64 sum:
//! - adk (3341 atoms, PQR charges and radii): its molecular surface extracted by the marching-cubes
//!   pass, the potential of its charges at every vertex read back equals the float64 Coulomb sum of
//!   `tests/common/coulomb.rs` at the read-back vertex positions: relative error
//!   |gpu - f64| / max(|f64|, 1e-3 hartree/e) below 1e-4 at 99.9% of the vertices and below 2e-4 at
//!   every one (the floor of f32 terms where they cancel); with the charges moved by 0.3 A the same
//!   comparison fails (the test can fail);
//! - the surface drawn from the device's own buffers, coloured by those values through red-white-blue,
//!   shows red and blue, and matches the same mesh drawn from the host with the values read back.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use glam::Vec3;
use orbitfield::compute::cpu;
use orbitfield::compute::molsurf::{DEFAULT_RADIUS_SCALE, MOLSURF_LEVEL, MolSurfAtoms};
use orbitfield::compute::wgpu::marching_cubes::McCompute;
use orbitfield::compute::wgpu::vertex_potential::{GpuCharges, VertexPotential, VertexPotentialVariant, VertexValues};
use orbitfield::compute::{Field, FieldInput, FieldJob};
use orbitfield::model::field::LatticeSpec;
use orbitfield::render::colormap::Colormap;
use orbitfield::render::{Camera, GpuScene, MeshInput, MeshStyle, OffscreenTarget, RenderContext, render_once};
use std::sync::Arc;

#[path = "common/coulomb.rs"]
mod coulomb;
use coulomb::coulomb_f64;

/// A render context that can run compute passes, or a printed reason to skip.
fn context() -> Option<RenderContext> {
    match RenderContext::headless(1) {
        Ok(c) if c.capabilities.mc_compute_supported => Some(c),
        Ok(c) => {
            eprintln!("skipping: no compute pass here ({})", c.capabilities.summary());
            None
        }
        Err(e) => {
            eprintln!("skipping: {e}");
            None
        }
    }
}

/// adk's atoms (Angstrom, f32 as in the file), charges (e) and radii.
fn adk() -> (Vec<[f32; 3]>, Vec<f32>, Vec<f64>) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/md/adk_open.pqr");
    let mut system = orbitfield::io::load(&[path]).unwrap();
    let frame = system.trajectory.frame(0).unwrap();
    let s = &system.structure;
    let charges = s.charges_e.clone().unwrap();
    let radii = s
        .radii_angstrom
        .as_ref()
        .unwrap()
        .iter()
        .map(|&r| f64::from(r))
        .collect();
    (frame.positions_angstrom.clone(), charges, radii)
}

/// adk's molecular surface at `spacing_angstrom`, extracted by the marching-cubes pass.
fn adk_surface(
    ctx: &RenderContext,
    positions: &[[f32; 3]],
    radii: &[f64],
    spacing_angstrom: f64,
) -> orbitfield::compute::wgpu::marching_cubes::GpuMesh {
    let centers: Vec<[f64; 3]> = positions.iter().map(|p| p.map(f64::from)).collect();
    let atoms = MolSurfAtoms::from_radii_angstrom(&centers, radii, DEFAULT_RADIUS_SCALE).unwrap();
    let lattice = LatticeSpec::AroundAtoms {
        spacing_angstrom,
        padding_angstrom: atoms.padding_angstrom(),
    }
    .build(&centers)
    .unwrap();
    let grid = cpu::evaluate_grid(&FieldJob {
        field: Field::MolSurf,
        lattice,
        input: FieldInput::Spheres(Arc::new(atoms)),
    })
    .unwrap();
    let mc = McCompute::new(&ctx.device);
    let [surface, _] = mc.extract_lobes(&ctx.device, &ctx.queue, &grid, MOLSURF_LEVEL).unwrap();
    surface
}

/// |got - f64| / max(|f64|, 1e-3 hartree/e) at each vertex, for charges at `charges_at`.
fn relative_errors(vertices: &[[f32; 3]], got: &[f32], charges_at: &[[f32; 3]], charges: &[f32]) -> Vec<f64> {
    errors_against(&reference_at(vertices, charges_at, charges), got)
}

/// The float64 Coulomb sum (hartree/e) at each vertex.
fn reference_at(vertices: &[[f32; 3]], charges_at: &[[f32; 3]], charges: &[f32]) -> Vec<f64> {
    vertices
        .iter()
        .map(|v| coulomb_f64(charges_at, charges, v.map(f64::from)))
        .collect()
}

/// |got - want| / max(|want|, 1e-3 hartree/e) at each vertex.
fn errors_against(want: &[f64], got: &[f32]) -> Vec<f64> {
    assert_eq!(want.len(), got.len(), "one value per vertex");
    want.iter()
        .zip(got)
        .map(|(&w, &g)| (f64::from(g) - w).abs() / w.abs().max(1e-3))
        .collect()
}

fn worst_relative_error(vertices: &[[f32; 3]], got: &[f32], charges_at: &[[f32; 3]], charges: &[f32]) -> f64 {
    relative_errors(vertices, got, charges_at, charges)
        .into_iter()
        .fold(0.0, f64::max)
}

#[test]
fn vertex_potentials_on_adk_match_an_f64_sum_at_every_vertex() {
    let Some(ctx) = context() else { return };
    let (positions, charges, radii) = adk();
    assert_eq!(positions.len(), 3341);
    let surface = adk_surface(&ctx, &positions, &radii, 1.0);
    let mesh = surface.read_back(&ctx.device, &ctx.queue).unwrap();
    let n = mesh.positions_angstrom.len();
    assert!(n > 5000, "{n} vertices");

    let vp = VertexPotential::new(&ctx.device);
    let gpu_charges = GpuCharges::upload(&ctx.device, &positions, &charges).unwrap();
    let values = VertexValues::new(&ctx.device, surface.capacity.vertices);
    vp.run(&ctx.device, &ctx.queue, &surface, &gpu_charges, &values)
        .unwrap();
    let got = values.read(&ctx.device, &ctx.queue, n as u32).unwrap();
    assert_eq!(got.len(), n);
    assert!(got.iter().all(|v| v.is_finite()), "every vertex has a value");
    let mut errors = relative_errors(&mesh.positions_angstrom, &got, &positions, &charges);
    errors.sort_by(f64::total_cmp);
    let worst = errors.last().copied().unwrap_or(0.0);
    let p999 = errors[errors.len() * 999 / 1000];
    let beyond = errors.iter().filter(|&&e| e > 1e-4).count();
    eprintln!("{n} vertices: relative error 99.9th percentile {p999:e}, worst {worst:e}, {beyond} beyond 1e-4");
    // The floor of f32 terms: the f64 sum of the exactly rounded f32 terms of these vertices reaches
    // 9.5e-5 at its worst vertex (where the terms, 2e4 times the potential in magnitude, cancel).
    assert!(p999 < 1e-4, "99.9th percentile {p999:e}");
    assert!(worst < 2e-4, "worst relative error {worst:e}");
    // The surface's potential has both signs (what the colours show).
    assert!(got.iter().any(|&v| v > 0.01) && got.iter().any(|&v| v < -0.01));

    // Control: the same comparison against charges moved by 0.3 A fails.
    let moved: Vec<[f32; 3]> = positions.iter().map(|p| [p[0] + 0.3, p[1], p[2]]).collect();
    let control = worst_relative_error(&mesh.positions_angstrom, &got, &moved, &charges);
    assert!(control > 1e-2, "moved charges give {control:e}");

    // Without the Newton step (the bare hardware 1/sqrt): reported, not judged.
    let mut fast = vp;
    fast.newton = false;
    fast.run(&ctx.device, &ctx.queue, &surface, &gpu_charges, &values)
        .unwrap();
    let got_fast = values.read(&ctx.device, &ctx.queue, n as u32).unwrap();
    let worst_fast = worst_relative_error(&mesh.positions_angstrom, &got_fast, &positions, &charges);
    eprintln!("without the Newton step: worst relative error {worst_fast:e}");
}

fn count(img: &image::RgbaImage, f: impl Fn([u8; 4]) -> bool) -> usize {
    img.pixels().filter(|p| f(p.0)).count()
}

#[test]
fn gpu_surface_coloured_by_its_vertex_potential_shows_red_and_blue() {
    let Some(ctx) = context() else { return };
    let (positions, charges, radii) = adk();
    let surface = adk_surface(&ctx, &positions, &radii, 1.5);
    let vp = VertexPotential::new(&ctx.device);
    let gpu_charges = GpuCharges::upload(&ctx.device, &positions, &charges).unwrap();
    let values = VertexValues::new(&ctx.device, surface.capacity.vertices);
    vp.run(&ctx.device, &ctx.queue, &surface, &gpu_charges, &values)
        .unwrap();

    let mesh = surface.read_back(&ctx.device, &ctx.queue).unwrap();
    let (mut lo, mut hi) = (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY));
    for p in &mesh.positions_angstrom {
        lo = lo.min(Vec3::from_array(*p));
        hi = hi.max(Vec3::from_array(*p));
    }
    let mut camera = Camera::default();
    camera.fit_to_bounds(lo, hi, 1.0);
    let size = [200, 200];
    let target = OffscreenTarget::new(&ctx, size);
    let grey = MeshStyle {
        color: [0.5, 0.5, 0.5],
        opacity: 1.0,
    };
    // The range as the viewer chooses one: the values' 2nd to 98th percentiles.
    let mut sorted = values
        .read(&ctx.device, &ctx.queue, mesh.positions_angstrom.len() as u32)
        .unwrap();
    sorted.sort_by(f32::total_cmp);
    let range = [sorted[sorted.len() / 50], sorted[sorted.len() * 49 / 50]];
    eprintln!("range {range:?} hartree/e");
    let picture = |scene: &mut GpuScene| {
        scene.style.depth_cue = 0.0;
        scene.style.light_dir_view = [0.0, 0.0, 1.0];
        scene.set_value_colors(&ctx, range, Colormap::RedWhiteBlue);
        render_once(&ctx, scene, &target, &camera);
        target.read_rgba(&ctx).unwrap()
    };
    let red = |p: [u8; 4]| p[0] > p[2].saturating_add(60) && p[0] > p[1].saturating_add(40);
    let blue = |p: [u8; 4]| p[2] > p[0].saturating_add(60) && p[2] > p[1].saturating_add(20);

    // The device's buffers, values written there.
    let mut scene = GpuScene::new(&ctx);
    scene.set_gpu_meshes_valued(&ctx, vec![(surface.clone(), grey, Some(values.clone()))]);
    let img = picture(&mut scene);
    let (r, b) = (count(&img, red), count(&img, blue));
    eprintln!("GPU surface coloured on the device: {r} red and {b} blue pixels of 40000");
    assert!(r > 200 && b > 200, "{r} red, {b} blue pixels");

    // Control: the same surface without its values is grey.
    let mut plain = GpuScene::new(&ctx);
    plain.set_gpu_meshes_valued(&ctx, vec![(surface.clone(), grey, None)]);
    let plain_img = picture(&mut plain);
    assert!(count(&plain_img, red) + count(&plain_img, blue) < 50);

    // The same mesh and values through the host: the same picture up to a few edge pixels.
    let host_values = values
        .read(&ctx.device, &ctx.queue, mesh.positions_angstrom.len() as u32)
        .unwrap();
    let mut host = GpuScene::new(&ctx);
    host.set_meshes(
        &ctx,
        &[(
            MeshInput {
                positions_angstrom: &mesh.positions_angstrom,
                normals: &mesh.normals,
                indices: &mesh.indices,
                values: &host_values,
                colors_rgba8: &[],
            },
            grey,
        )],
    );
    let host_img = picture(&mut host);
    let differing = img
        .pixels()
        .zip(host_img.pixels())
        .filter(|(a, b)| a.0.iter().zip(b.0.iter()).any(|(x, y)| x.abs_diff(*y) > 24))
        .count();
    assert!(differing < 400, "{differing} of 40000 pixels differ");
}

/// The viewer's draw stage on a device that extracts surfaces and colours them there (forced on a
/// software adapter): a molsurf representation of adk coloured by the charges' potential stays on
/// the render device (no fall-back to CPU meshes), gets a range from its first values, and shows
/// red and blue on frames 0 and 1.
#[test]
fn viewer_colours_gpu_surfaces_by_the_potential_on_the_render_device() {
    use orbitfield::app::draw::SceneSync;
    use orbitfield::app::fields::FieldChoice;
    use orbitfield::app::reps::{FieldStyle, RepSpec};
    use orbitfield::app::settings::Settings;
    use orbitfield::app::state::{AppState, Command};
    let rc = match RenderContext::headless_with(wgpu::Backends::all(), 1, |_, c| {
        c.gpu_marching_cubes = c.mc_compute_supported;
        c.gpu_vertex_potential = c.mc_compute_supported;
    }) {
        Ok(rc) if rc.capabilities.gpu_vertex_potential => rc,
        Ok(rc) => {
            eprintln!("skipping: no compute pass here ({})", rc.capabilities.summary());
            return;
        }
        Err(e) => {
            eprintln!("skipping: {e}");
            return;
        }
    };
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/md");
    let paths = [dir.join("adk.psf"), dir.join("adk_dims.dcd")];
    let settings = Settings {
        lattice_points: 48,
        ..Settings::default()
    };
    let mut state = AppState::new(settings, orbitfield::app::default_field_service());
    state.view.gpu_surfaces = true;
    state.open_system("adk".into(), orbitfield::io::load(&paths).unwrap());
    // The vacuum Coulomb sum is what this test holds to its reference.
    state.apply(Command::SetEspModel(orbitfield::app::esp_model::EspModel::Vacuum));
    let id = state
        .add_rep(&RepSpec::field("molsurf:protein", FieldStyle::Isosurface))
        .unwrap();
    state.apply(Command::SetSurfaceColor(Some((FieldChoice::Potential, None))));
    let mut sync = SceneSync::new(&rc);
    let mut scene = GpuScene::new(&rc);
    let size = [200u32, 200u32];
    let target = OffscreenTarget::new(&rc, size);
    state.view.size_px = size;
    state.apply(Command::ResetCamera);
    for frame in [0, 1] {
        state.apply(Command::SetFrame(frame));
        let t0 = std::time::Instant::now();
        let shown = |state: &AppState| {
            state
                .reps()
                .field(id)
                .and_then(|f| f.pipeline.shown.as_ref())
                .is_some_and(|(k, _)| k.frame == frame)
        };
        while !shown(&state) {
            state.update_reps();
            assert!(t0.elapsed().as_secs() < 120, "frame {frame} never arrived");
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        state.view.dirty.meshes = true;
        sync.sync(&rc, &mut scene, &mut state);
        assert!(state.view.gpu_surfaces, "fell back to the CPU: {}", state.panels.status);
        let range = state.reps().field(id).and_then(|f| f.coloring?.range);
        let [lo, hi] = range.expect("a range from the first values");
        if frame == 0 {
            assert!(lo < 0.0 && hi > 0.0, "{lo} {hi}");
        } else {
            assert_eq!([lo, hi], [-0.05, 0.05]);
        }
        render_once(&rc, &scene, &target, &state.view.camera);
        let img = target.read_rgba(&rc).unwrap();
        let red = |p: [u8; 4]| p[0] > p[2].saturating_add(30);
        let blue = |p: [u8; 4]| p[2] > p[0].saturating_add(30);
        let (r, b) = (count(&img, red), count(&img, blue));
        eprintln!("frame {frame}: {r} red and {b} blue pixels");
        // Red (negative, the field's convention) dominates adk's surface; over the range the first
        // values chose (their 2nd..98th percentiles, symmetric about zero) its few positive patches
        // stay pale, over a narrower one they are blue.
        assert!(r > 1000, "frame {frame}: {r} red pixels");
        if frame == 1 {
            assert!(b > 100, "frame {frame}: {b} blue pixels");
        } else {
            // The next frame is drawn over a narrower range.
            state.apply(Command::SetSurfaceColor(Some((
                FieldChoice::Potential,
                Some([-0.05, 0.05]),
            ))));
        }
    }
}

#[test]
fn every_variant_of_the_pass_covers_every_vertex_and_meets_the_contract() {
    let Some(ctx) = context() else { return };
    let (positions, charges, radii) = adk();
    let surface = adk_surface(&ctx, &positions, &radii, 1.0);
    let mesh = surface.read_back(&ctx.device, &ctx.queue).unwrap();
    let n = mesh.positions_angstrom.len();
    let gpu_charges = GpuCharges::upload(&ctx.device, &positions, &charges).unwrap();
    // The reference is the same for every variant: summed once.
    let want = reference_at(&mesh.positions_angstrom, &positions, &charges);
    // The shapes with the Newton step (the bare hardware 1/sqrt differs in one pipeline constant and
    // is run for the default shape above; lavapipe is slow, so not for every shape).
    // Each shape once as it chooses (adk's 14 tiles of charges: one run), and the default shape
    // with the charges split into 2 and 5 runs summed by the second pass, as large systems are.
    let runs = VertexPotentialVariant::ALL
        .into_iter()
        .filter(|v| v.newton)
        .map(|v| (v, None))
        .chain([2, 5].map(|p| (VertexPotentialVariant::default(), Some(p))));
    for (variant, parts) in runs {
        let mut vp = VertexPotential::with_variant(&ctx.device, variant);
        assert_eq!(vp.variant(), variant);
        if let Some(p) = parts {
            vp.split_charges_into(p);
        }
        // A fresh NaN-filled buffer: a vertex the dispatch misses stays NaN.
        let values = VertexValues::new(&ctx.device, surface.capacity.vertices);
        vp.run(&ctx.device, &ctx.queue, &surface, &gpu_charges, &values)
            .unwrap();
        let got = values.read(&ctx.device, &ctx.queue, n as u32).unwrap();
        assert!(
            got.iter().all(|v| v.is_finite()),
            "{} ({parts:?} runs): every vertex has a value",
            variant.name()
        );
        let mut errors = errors_against(&want, &got);
        errors.sort_by(f64::total_cmp);
        let worst = errors.last().copied().unwrap_or(0.0);
        let p999 = errors[errors.len() * 999 / 1000];
        eprintln!(
            "{} ({parts:?} runs): relative error 99.9th percentile {p999:e}, worst {worst:e}",
            variant.name()
        );
        // The contract binds the variants with the Newton step; the bare hardware 1/sqrt is
        // reported (its error depends on the device).
        if variant.newton {
            assert!(p999 < 1e-4 && worst < 2e-4, "{}: {p999:e}, {worst:e}", variant.name());
        }
    }
}

/// The viewer's render-device path in the electrostatic model chosen (`app::esp_model`): adk's
/// charges without radii start at eps = 4r, and the values the vertex pass writes at the vertices
/// of a surface extracted there equal `q / (4 r_A r)` summed in f64 here; Debye-Hueckel with the
/// colours taken 1.4 A outside along the normals equals `q exp(-kappa r) / (78.54 r)` at the moved
/// points (kappa of 0.15 M at 298.15 K from its formula), the surfaces staying on the device.
#[test]
fn viewer_colours_gpu_surfaces_in_the_chosen_model_and_above_the_surface() {
    use orbitfield::app::draw::SceneSync;
    use orbitfield::app::esp_model::EspModel;
    use orbitfield::app::fields::FieldChoice;
    use orbitfield::app::reps::{FieldStyle, RepSpec};
    use orbitfield::app::settings::Settings;
    use orbitfield::app::state::{AppState, Command};
    let rc = match RenderContext::headless_with(wgpu::Backends::all(), 1, |_, c| {
        c.gpu_marching_cubes = c.mc_compute_supported;
        c.gpu_vertex_potential = c.mc_compute_supported;
    }) {
        Ok(rc) if rc.capabilities.gpu_vertex_potential => rc,
        Ok(rc) => {
            eprintln!("skipping: no compute pass here ({})", rc.capabilities.summary());
            return;
        }
        Err(e) => {
            eprintln!("skipping: {e}");
            return;
        }
    };
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/md");
    let paths = [dir.join("adk.psf"), dir.join("adk_dims.dcd")];
    let settings = Settings {
        lattice_points: 32,
        ..Settings::default()
    };
    let mut state = AppState::new(settings, orbitfield::app::default_field_service());
    state.view.gpu_surfaces = true;
    state.open_system("adk".into(), orbitfield::io::load(&paths).unwrap());
    assert_eq!(state.esp.model, EspModel::four_r());
    let id = state
        .add_rep(&RepSpec::field("molsurf:resid 1 to 40", FieldStyle::Isosurface))
        .unwrap();
    state.apply(Command::SetSurfaceColor(Some((FieldChoice::Potential, None))));
    let t0 = std::time::Instant::now();
    while state.reps().field(id).and_then(|f| f.pipeline.shown.as_ref()).is_none() {
        state.update_reps();
        assert!(t0.elapsed().as_secs() < 120, "the surface never arrived");
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    let doc = state.document().unwrap();
    let q = doc.structure.charges_e.clone().unwrap();
    let atoms = doc.frame.positions_angstrom.clone();
    let e: f64 = 1.602_176_634e-19;
    let kappa =
        (2.0 * 0.15 * 1000.0 * 6.022_140_76e23 * e * e / (8.854_187_812_8e-12 * 78.54 * 1.380_649e-23 * 298.15)).sqrt()
            * 1e-10;
    let four_r = |r: f64| 1.0 / (4.0 * r * r);
    let debye = |r: f64| (-kappa * r).exp() / (78.54 * r);
    let mut sync = SceneSync::new(&rc);
    let mut scene = GpuScene::new(&rc);
    type Kernel<'a> = &'a dyn Fn(f64) -> f64;
    let cases: [(&str, f32, Kernel); 2] = [("eps = 4r", 0.0, &four_r), ("Debye-Hueckel", 1.4, &debye)];
    for (k, (name, offset, kernel)) in cases.into_iter().enumerate() {
        if k == 1 {
            state.apply(Command::SetEspModel(EspModel::debye()));
            state.apply(Command::SetRampAbove(true));
            state.update_reps();
        }
        state.view.dirty.meshes = true;
        sync.sync(&rc, &mut scene, &mut state);
        assert!(state.view.gpu_surfaces, "fell back to the CPU: {}", state.panels.status);
        let mesh = sync.gpu_lobes(id).expect("lobes on the device")[0]
            .read_back(&rc.device, &rc.queue)
            .unwrap();
        let n = mesh.positions_angstrom.len();
        let got = sync.gpu_vertex_values(id).expect("values on the device")[0]
            .read(&rc.device, &rc.queue, n as u32)
            .unwrap();
        let (mut worst, mut scale) = (0.0f64, 0.0f64);
        for i in (0..n).step_by(n / 40 + 1) {
            let (p, nrm) = (mesh.positions_angstrom[i], mesh.normals[i]);
            let mut sum = 0.0f64;
            let mut abs = 0.0f64;
            for (c, a) in q.iter().zip(&atoms) {
                let r = (0..3)
                    .map(|k| (f64::from(p[k] + offset * nrm[k]) - f64::from(a[k])).powi(2))
                    .sum::<f64>()
                    .sqrt();
                sum += f64::from(*c) * kernel(r);
                abs += (f64::from(*c) * kernel(r)).abs();
            }
            // e/Angstrom to hartree/e.
            let want = sum * 0.529_177_210_903;
            worst = worst.max((f64::from(got[i]) - want).abs() / (abs * 0.529_177_210_903));
            scale = scale.max(want.abs());
        }
        eprintln!(
            "{name} at {offset} A: {n} vertices, worst |gpu - f64| / sum |terms| {worst:.2e} (max |V| {scale:.2e})"
        );
        assert!(scale > 0.0 && worst < 1e-4, "{name}: {worst:e}");
    }
}
