//! Offscreen rendering on whatever adapter exists (Mesa lavapipe in CI): pixel assertions computed
//! from the camera matrices, and naga validation of every WGSL module.

use glam::Vec3;
use orbitfield::app::atoms::{self as representation, AtomColoring as ColorBy, AtomStyle as DrawStyle};
use orbitfield::app::reps::{LOBE_NEGATIVE, LOBE_POSITIVE};
use orbitfield::model::{Element, Name8, Structure};
use orbitfield::render::gpu::SphereInstance;
use orbitfield::render::{Camera, GpuScene, MeshInput, MeshStyle, OffscreenTarget, RenderContext, render_once};

fn context() -> Option<RenderContext> {
    match RenderContext::headless(4) {
        Ok(c) => Some(c),
        Err(e) => {
            eprintln!("skipping: {e}");
            None
        }
    }
}

fn px(img: &image::RgbaImage, p: [f32; 2]) -> [u8; 4] {
    img.get_pixel(p[0] as u32, p[1] as u32).0
}

#[test]
fn every_wgsl_module_validates() {
    let modules = orbitfield::render::shaders::all_modules()
        .into_iter()
        .chain(orbitfield::compute::wgpu::all_modules());
    for (name, src) in modules {
        let module =
            naga::front::wgsl::parse_str(&src).unwrap_or_else(|e| panic!("{name}: {}", e.emit_to_string(&src)));
        let mut v =
            naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::empty());
        v.validate(&module).unwrap_or_else(|e| panic!("{name}: {e:?}"));
    }
}

#[test]
fn empty_scene_is_background() {
    let Some(ctx) = context() else { return };
    let mut scene = GpuScene::new(&ctx);
    scene.style.background = [0.1, 0.2, 0.3];
    let target = OffscreenTarget::new(&ctx, [64, 48]);
    render_once(&ctx, &scene, &target, &Camera::default());
    let img = target.read_rgba(&ctx).unwrap();
    let want = [26u8, 51, 77, 255];
    for p in img.pixels() {
        for k in 0..3 {
            assert!(
                (i32::from(p.0[k]) - i32::from(want[k])).abs() <= 1,
                "{:?} vs {want:?}",
                p.0
            );
        }
    }
}

fn water() -> (Structure, Vec<[f32; 3]>) {
    let mut s = Structure::default();
    for (e, n) in [(8u8, "O"), (1, "H1"), (1, "H2")] {
        s.push_atom(
            Element(e),
            Name8::from(n),
            Name8::from("HOH"),
            1,
            Name8::from("A"),
            Name8::EMPTY,
        );
    }
    (s, vec![[0.0, 0.0, 0.0], [0.9572, 0.0, 0.0], [-0.2400, 0.9266, 0.0]])
}

#[test]
fn atoms_appear_where_the_camera_projects_them() {
    let Some(ctx) = context() else { return };
    let (s, p) = water();
    let colors = representation::atom_colors(&s, ColorBy::Element);
    let mut spheres = Vec::new();
    representation::build_spheres(&s, &p, &colors, DrawStyle::BallAndStick, &mut spheres);
    let bonds = representation::guess_bonds(&s, &p);
    let mut cylinders = Vec::new();
    representation::build_cylinders(&bonds, &p, &colors, DrawStyle::BallAndStick, 3.0, &mut cylinders);
    let mut scene = GpuScene::new(&ctx);
    scene.style.depth_cue = 0.0;
    scene.set_spheres(&ctx, &spheres);
    scene.set_cylinders(&ctx, &cylinders);
    let size = [320, 240];
    let (lo, hi) = representation::bounds(&p, 1.0).unwrap();
    let mut camera = Camera::default();
    camera.orbit(0.5, 0.3);
    camera.fit_to_bounds(Vec3::from(lo), Vec3::from(hi), 320.0 / 240.0);
    let target = OffscreenTarget::new(&ctx, size);
    render_once(&ctx, &scene, &target, &camera);
    let img = target.read_rgba(&ctx).unwrap();

    let (o, _) = camera.project_to_pixel(Vec3::from(p[0]), size).unwrap();
    let c = px(&img, o);
    assert!(c[0] > 150 && c[1] < 100 && c[2] < 100, "oxygen at {o:?} is {c:?}");
    for h in [p[1], p[2]] {
        let (hp, _) = camera.project_to_pixel(Vec3::from(h), size).unwrap();
        let c = px(&img, hp);
        assert!(c[0] > 150 && c[1] > 150 && c[2] > 150, "hydrogen at {hp:?} is {c:?}");
    }
    // Midway along the O-H1 bond, on the hydrogen's half: the bond shows the hydrogen's white.
    let m = Vec3::from(p[0]).lerp(Vec3::from(p[1]), 0.6);
    let (mp, _) = camera.project_to_pixel(m, size).unwrap();
    let c = px(&img, mp);
    assert!(c[1] > 100 && c[2] > 100, "bond at {mp:?} is {c:?}");
    // Corners stay black.
    assert_eq!(px(&img, [1.0, 1.0]), [0, 0, 0, 255]);
    assert_eq!(px(&img, [318.0, 238.0]), [0, 0, 0, 255]);
    // The oxygen's colour does not leak to a point far from every atom.
    let (far, _) = camera.project_to_pixel(Vec3::new(0.0, -1.5, 0.0), size).unwrap();
    assert_eq!(px(&img, far), [0, 0, 0, 255]);
}

/// A UV sphere mesh (positions and outward normals).
fn sphere_mesh(center: [f32; 3], r: f32) -> (Vec<[f32; 3]>, Vec<[f32; 3]>, Vec<u32>) {
    let (nu, nv) = (24u32, 12u32);
    let mut pos = Vec::new();
    let mut nrm = Vec::new();
    for j in 0..=nv {
        let th = std::f32::consts::PI * j as f32 / nv as f32;
        for i in 0..=nu {
            let ph = 2.0 * std::f32::consts::PI * i as f32 / nu as f32;
            let n = [th.sin() * ph.cos(), th.sin() * ph.sin(), th.cos()];
            nrm.push(n);
            pos.push([center[0] + r * n[0], center[1] + r * n[1], center[2] + r * n[2]]);
        }
    }
    let mut idx = Vec::new();
    for j in 0..nv {
        for i in 0..nu {
            let a = j * (nu + 1) + i;
            let b = a + nu + 1;
            idx.extend_from_slice(&[a, b, a + 1, a + 1, b, b + 1]);
        }
    }
    (pos, nrm, idx)
}

#[test]
fn two_lobes_have_their_colours_in_the_expected_regions() {
    let Some(ctx) = context() else { return };
    // Synthetic p orbital along x: positive lobe at +x, negative at -x.
    let plus = sphere_mesh([2.0, 0.0, 0.0], 1.2);
    let minus = sphere_mesh([-2.0, 0.0, 0.0], 1.2);
    let mut scene = GpuScene::new(&ctx);
    scene.style.background = [1.0, 1.0, 1.0];
    scene.style.depth_cue = 0.0;
    scene.set_meshes(
        &ctx,
        &[
            (
                MeshInput {
                    positions_angstrom: &plus.0,
                    normals: &plus.1,
                    indices: &plus.2,
                    ..MeshInput::default()
                },
                MeshStyle {
                    color: LOBE_POSITIVE,
                    opacity: 1.0,
                },
            ),
            (
                MeshInput {
                    positions_angstrom: &minus.0,
                    normals: &minus.1,
                    indices: &minus.2,
                    ..MeshInput::default()
                },
                MeshStyle {
                    color: LOBE_NEGATIVE,
                    opacity: 1.0,
                },
            ),
        ],
    );
    let size = [200, 100];
    let mut camera = Camera::default();
    camera.fit_to_bounds(Vec3::new(-3.2, -1.2, -1.2), Vec3::new(3.2, 1.2, 1.2), 2.0);
    let target = OffscreenTarget::new(&ctx, size);
    render_once(&ctx, &scene, &target, &camera);
    let img = target.read_rgba(&ctx).unwrap();
    let (right, _) = camera.project_to_pixel(Vec3::new(2.0, 0.0, 1.2), size).unwrap();
    let (left, _) = camera.project_to_pixel(Vec3::new(-2.0, 0.0, 1.2), size).unwrap();
    let r = px(&img, right);
    let l = px(&img, left);
    assert!(r[0] > r[2] + 80, "positive lobe at {right:?} is {r:?}");
    assert!(l[2] > l[0] + 80, "negative lobe at {left:?} is {l:?}");
    let (mid, _) = camera.project_to_pixel(Vec3::ZERO, size).unwrap();
    assert_eq!(px(&img, mid), [255, 255, 255, 255], "between the lobes");
}

#[test]
fn transparent_mesh_blends_over_an_atom() {
    let Some(ctx) = context() else { return };
    let shell = sphere_mesh([0.0, 0.0, 0.0], 2.0);
    let mut scene = GpuScene::new(&ctx);
    scene.style.depth_cue = 0.0;
    scene.set_spheres(
        &ctx,
        &[SphereInstance {
            center_angstrom: [0.0, 0.0, 0.0],
            radius_angstrom: 1.0,
            color: orbitfield::render::gpu::pack_rgba([0, 255, 0, 255]),
        }],
    );
    let style = MeshStyle {
        color: [1.0, 0.0, 0.0],
        opacity: 0.5,
    };
    scene.set_meshes(
        &ctx,
        &[(
            MeshInput {
                positions_angstrom: &shell.0,
                normals: &shell.1,
                indices: &shell.2,
                ..MeshInput::default()
            },
            style,
        )],
    );
    let size = [96, 96];
    let mut camera = Camera::default();
    camera.fit_to_bounds(Vec3::splat(-2.0), Vec3::splat(2.0), 1.0);
    let target = OffscreenTarget::new(&ctx, size);
    render_once(&ctx, &scene, &target, &camera);
    let img = target.read_rgba(&ctx).unwrap();
    let c = px(&img, [48.0, 48.0]);
    assert!(
        c[0] > 60 && c[1] > 60 && c[2] < 60,
        "green atom behind a half-transparent red shell: {c:?}"
    );
    // Opaque again: the atom disappears behind the shell (uniform change only).
    scene.set_mesh_style(&ctx, 0, MeshStyle { opacity: 1.0, ..style });
    render_once(&ctx, &scene, &target, &camera);
    let c = px(&target.read_rgba(&ctx).unwrap(), [48.0, 48.0]);
    assert!(c[0] > 150 && c[1] < 40, "opaque shell hides the atom: {c:?}");
}

/// Centroid (Angstrom) of the lattice points whose value is beyond `iso` on one side.
fn lobe_centroid(grid: &orbitfield::model::Grid3, iso: f32, positive: bool) -> Vec3 {
    let l = &grid.lattice;
    let mut sum = Vec3::ZERO;
    let mut w = 0.0f32;
    for k in 0..l.dims[2] {
        for j in 0..l.dims[1] {
            for i in 0..l.dims[0] {
                let v = grid.get(i, j, k).unwrap_or(0.0);
                if (positive && v > iso) || (!positive && v < -iso) {
                    let p = orbitfield::model::units::angstrom_from_bohr3(l.point_bohr(i, j, k));
                    sum += Vec3::new(p[0] as f32, p[1] as f32, p[2] as f32) * v.abs();
                    w += v.abs();
                }
            }
        }
    }
    sum / w
}

/// The water HOMO from PySCF's cubegen (an independent reference): the positive lobe is drawn red
/// and the negative blue, each where the cube's values put it once projected by the camera.
#[test]
fn water_homo_cube_lobes_have_their_colours_where_the_values_are() {
    let Some(ctx) = context() else { return };
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/engine/water_homo_24.cube");
    let system = orbitfield::io::load(&[path]).unwrap();
    let settings = orbitfield::app::settings::Settings::default();
    let mut state = orbitfield::app::state::AppState::new(settings, orbitfield::app::default_field_service());
    state.open_system("water homo".into(), system);
    assert_eq!(
        state.main_field(),
        Some(orbitfield::app::fields::FieldChoice::Volume(0))
    );
    let id = state.main_field_id().unwrap();
    state.apply(orbitfield::app::state::Command::EditRep(
        id,
        orbitfield::app::reps::RepEdit::IsoValue(0.05),
    ));
    assert!(state.update_reps());
    let (_, grid) = state.shown_field().cloned().unwrap();
    let plus = lobe_centroid(&grid, 0.05, true);
    let minus = lobe_centroid(&grid, 0.05, false);
    let lobes: Vec<_> = state.lobes().iter().flatten().cloned().collect();
    assert_eq!(lobes.len(), 2, "both lobes extracted");

    let mut scene = GpuScene::new(&ctx);
    scene.style.depth_cue = 0.0;
    let styles = [LOBE_POSITIVE, LOBE_NEGATIVE];
    let inputs: Vec<_> = lobes
        .iter()
        .zip(styles)
        .map(|(m, color)| {
            (
                MeshInput {
                    positions_angstrom: &m.positions_angstrom,
                    normals: &m.normals,
                    indices: &m.indices,
                    ..MeshInput::default()
                },
                MeshStyle { color, opacity: 1.0 },
            )
        })
        .collect();
    scene.set_meshes(&ctx, &inputs);
    // Look at the lobes side on: the camera's right axis along minus -> plus.
    let axis = (plus - minus).normalize();
    let mut camera = Camera {
        rotation: glam::Quat::from_rotation_arc(Vec3::X, axis),
        ..Camera::default()
    };
    let mid = (plus + minus) * 0.5;
    let half = (plus - minus).length() + 1.5;
    camera.fit_to_bounds(mid - Vec3::splat(half), mid + Vec3::splat(half), 1.0);
    let size = [200, 200];
    let target = OffscreenTarget::new(&ctx, size);
    render_once(&ctx, &scene, &target, &camera);
    let img = target.read_rgba(&ctx).unwrap();
    let (pp, _) = camera.project_to_pixel(plus, size).unwrap();
    let (mp, _) = camera.project_to_pixel(minus, size).unwrap();
    assert!(pp[0] > mp[0] + 20.0, "the positive lobe is to the right: {pp:?} {mp:?}");
    let (r, b) = (px(&img, pp), px(&img, mp));
    assert!(r[0] > r[2] + 60, "positive lobe at {pp:?} is {r:?}");
    assert!(b[2] > b[0] + 60, "negative lobe at {mp:?} is {b:?}");
    assert_eq!(px(&img, [2.0, 2.0]), [0, 0, 0, 255]);

    // The viewer's path: both lobes extracted by the compute pass on the render device and drawn
    // from the GPU's own buffers (indirect draw) give the same picture.
    if !ctx.capabilities.mc_compute_supported {
        eprintln!("GPU marching cubes skipped: {}", ctx.capabilities.summary());
        return;
    }
    let mc = orbitfield::compute::wgpu::marching_cubes::McCompute::new(&ctx.device);
    let [gp, gm] = mc.extract_lobes(&ctx.device, &ctx.queue, &grid, 0.05).unwrap();
    let mut gpu_scene = GpuScene::new(&ctx);
    gpu_scene.style.depth_cue = 0.0;
    gpu_scene.set_gpu_meshes(
        &ctx,
        vec![
            (
                gp,
                MeshStyle {
                    color: styles[0],
                    opacity: 1.0,
                },
            ),
            (
                gm,
                MeshStyle {
                    color: styles[1],
                    opacity: 1.0,
                },
            ),
        ],
    );
    render_once(&ctx, &gpu_scene, &target, &camera);
    let gpu_img = target.read_rgba(&ctx).unwrap();
    let (gr, gb) = (px(&gpu_img, pp), px(&gpu_img, mp));
    assert!(gr[0] > gr[2] + 60, "GPU-extracted positive lobe at {pp:?} is {gr:?}");
    assert!(gb[2] > gb[0] + 60, "GPU-extracted negative lobe at {mp:?} is {gb:?}");
    // Same surfaces, same pixels up to rasterisation of a few edge pixels.
    let differing = img
        .pixels()
        .zip(gpu_img.pixels())
        .filter(|(a, b)| a.0.iter().zip(b.0.iter()).any(|(x, y)| x.abs_diff(*y) > 24))
        .count();
    assert!(
        differing < 400,
        "{differing} of 40000 pixels differ between CPU and GPU meshes"
    );
}

/// A slice through a signed field shows the colormap's blue on the negative side and red on the
/// positive side; the periodic box outline is drawn along its edges.
#[test]
fn slice_plane_and_box_outline() {
    let Some(ctx) = context() else { return };
    use orbitfield::model::units::bohr_from_angstrom;
    let lattice = orbitfield::model::Lattice::axis_aligned([0.0; 3], bohr_from_angstrom(0.5), [21, 21, 3]);
    let mut grid = orbitfield::model::Grid3::zeros(lattice, "x - 5 A");
    for k in 0..3 {
        for j in 0..21 {
            for i in 0..21 {
                grid.values[lattice.index(i, j, k)] = i as f32 - 10.0;
            }
        }
    }
    let slice = orbitfield::app::slice::slice_image(&grid, orbitfield::render::colormap::Colormap::Diverging).unwrap();
    let cell = orbitfield::model::UnitCell::orthorhombic([10.0, 10.0, 1.0]);
    let lines = representation::box_lines(&cell, [0.0, 0.0, 0.0], [255, 255, 0, 255]);
    let mut scene = GpuScene::new(&ctx);
    scene.style.depth_cue = 0.0;
    scene.set_slice(&ctx, Some(&slice));
    scene.set_lines(&ctx, &lines);
    let mut camera = Camera::default();
    camera.fit_to_bounds(Vec3::new(-1.0, -1.0, 0.0), Vec3::new(11.0, 11.0, 1.0), 1.0);
    let size = [160, 160];
    let target = OffscreenTarget::new(&ctx, size);
    render_once(&ctx, &scene, &target, &camera);
    let img = target.read_rgba(&ctx).unwrap();
    let (left, _) = camera.project_to_pixel(Vec3::new(1.0, 5.0, 0.5), size).unwrap();
    let (right, _) = camera.project_to_pixel(Vec3::new(9.0, 5.0, 0.5), size).unwrap();
    let (l, r) = (px(&img, left), px(&img, right));
    assert!(l[2] > l[0] + 60, "negative side at {left:?} is {l:?}");
    assert!(r[0] > r[2] + 60, "positive side at {right:?} is {r:?}");
    // The box's front bottom edge (y = 0, z = 1) runs across the image in yellow.
    let (edge, _) = camera.project_to_pixel(Vec3::new(5.0, 0.0, 1.0), size).unwrap();
    let hit = (-2..=2).any(|dy| {
        let c = px(&img, [edge[0], edge[1] + dy as f32]);
        c[0] > 150 && c[1] > 150 && c[2] < 80
    });
    assert!(hit, "box edge near {edge:?}");
}

/// f(x, y, z) = x (Angstrom) on a 17^3 lattice over -4..4 A: a linear "potential".
fn linear_x_grid() -> orbitfield::model::Grid3 {
    let bohr = orbitfield::model::units::bohr_from_angstrom(1.0);
    let n = 17;
    let lattice = orbitfield::model::Lattice::axis_aligned([-4.0 * bohr; 3], 0.5 * bohr, [n, n, n]);
    let mut values = Vec::with_capacity(n * n * n);
    for _k in 0..n {
        for _j in 0..n {
            for i in 0..n {
                values.push(-4.0 + 0.5 * i as f32);
            }
        }
    }
    orbitfield::model::Grid3 {
        lattice,
        values,
        description: "x (linear test field)".into(),
    }
}

/// Colours the scene's surfaces by `grid`, -2..2 over the blue-white-red colormap.
fn colour_by(ctx: &RenderContext, scene: &mut GpuScene, grid: &orbitfield::model::Grid3) {
    let field = orbitfield::render::scene::ColorFieldInput {
        grid,
        range: [-2.0, 2.0],
        colormap: orbitfield::render::colormap::Colormap::Diverging,
    };
    if let Err(e) = scene.set_color_field(ctx, Some(field)) {
        panic!("colouring by the field: {e}");
    }
    assert!(scene.has_color_field());
}

#[test]
fn surface_coloured_by_a_second_field_follows_its_values() {
    let Some(ctx) = context() else { return };
    // One grey sphere of radius 2 A, coloured by f(x, y, z) = x (a linear "potential"): the left side
    // must come out at the colormap's blue end, the right at its red end, the middle near white.
    let sphere = sphere_mesh([0.0, 0.0, 0.0], 2.0);
    let grid = linear_x_grid();
    let mut scene = GpuScene::new(&ctx);
    scene.style.background = [0.0, 0.0, 0.0];
    scene.style.depth_cue = 0.0;
    scene.style.light_dir_view = [0.0, 0.0, 1.0];
    let mesh = |scene: &mut GpuScene| {
        scene.set_meshes(
            &ctx,
            &[(
                MeshInput {
                    positions_angstrom: &sphere.0,
                    normals: &sphere.1,
                    indices: &sphere.2,
                    ..MeshInput::default()
                },
                MeshStyle {
                    color: [0.5, 0.5, 0.5],
                    opacity: 1.0,
                },
            )],
        )
    };
    mesh(&mut scene);
    colour_by(&ctx, &mut scene, &grid);
    let size = [160, 160];
    let mut camera = Camera::default();
    camera.fit_to_bounds(Vec3::splat(-2.2), Vec3::splat(2.2), 1.0);
    let target = OffscreenTarget::new(&ctx, size);
    let shot = |scene: &GpuScene| {
        render_once(&ctx, scene, &target, &camera);
        target.read_rgba(&ctx).unwrap()
    };
    let img = shot(&scene);
    let at = |img: &image::RgbaImage, p: Vec3| px(img, camera.project_to_pixel(p, size).unwrap().0);
    let left = at(&img, Vec3::new(-1.5, 0.0, 1.3));
    let right = at(&img, Vec3::new(1.5, 0.0, 1.3));
    let middle = at(&img, Vec3::new(0.0, 0.0, 2.0));
    assert!(left[2] > left[0] + 60, "x = -1.5 should be blue: {left:?}");
    assert!(right[0] > right[2] + 60, "x = +1.5 should be red: {right:?}");
    assert!(
        middle.iter().take(3).all(|&c| c > 150) && middle[0].abs_diff(middle[2]) < 40,
        "x = 0 should be near white: {middle:?}"
    );
    // Meshes uploaded after the field is set are coloured too; removing the field restores grey.
    mesh(&mut scene);
    let again = at(&shot(&scene), Vec3::new(-1.5, 0.0, 1.3));
    assert!(
        again[2] > again[0] + 60,
        "re-uploaded mesh should stay coloured: {again:?}"
    );
    scene.set_color_field(&ctx, None).unwrap();
    assert!(!scene.has_color_field());
    let grey = at(&shot(&scene), Vec3::new(-1.5, 0.0, 1.3));
    assert!(
        grey[0].abs_diff(grey[2]) < 10 && grey[0] > 30,
        "plain colour again: {grey:?}"
    );
}

#[test]
fn bonds_show_from_every_side() {
    // The bond impostors rasterise only one side of their boxes; from any direction (except straight
    // down the axis) the middle of a bond must still be drawn.
    let Some(ctx) = context() else { return };
    let white = u32::from_le_bytes([255, 255, 255, 255]);
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.subsec_nanos());
    let axes = [
        Vec3::X,
        Vec3::Y,
        Vec3::Z,
        Vec3::new(1.0, 1.0, 0.3).normalize(),
        Vec3::new((seed % 97) as f32 / 97.0 - 0.5, 0.7, -0.4).normalize(),
    ];
    let size = [96, 72];
    let target = OffscreenTarget::new(&ctx, size);
    for axis in axes {
        let a = -axis;
        let b = axis;
        let mut scene = GpuScene::new(&ctx);
        scene.style.depth_cue = 0.0;
        scene.set_cylinders(
            &ctx,
            &[orbitfield::render::gpu::CylinderInstance {
                a_angstrom: a.to_array(),
                b_angstrom: b.to_array(),
                radius_angstrom: 0.25,
                color_a: white,
                color_b: white,
            }],
        );
        for k in 0..8 {
            let mut camera = Camera::default();
            camera.orbit(k as f32 * 0.8 + 0.1, (k as f32 * 0.37).sin());
            camera.fit_to_bounds(Vec3::splat(-1.3), Vec3::splat(1.3), 96.0 / 72.0);
            // Skip views nearly along the bond (it shrinks to a disc).
            let view_dir = (camera.eye_angstrom() - camera.target_angstrom).normalize();
            if view_dir.dot(axis).abs() > 0.9 {
                continue;
            }
            render_once(&ctx, &scene, &target, &camera);
            let img = target.read_rgba(&ctx).unwrap();
            let (mid, _) = camera.project_to_pixel(Vec3::ZERO, size).unwrap();
            let c = px(&img, mid);
            assert!(
                c[0] > 60 && c[1] > 60 && c[2] > 60,
                "axis {axis:?}, view {k}: bond middle is {c:?}"
            );
        }
    }
}

/// The same scene drawn by a context with the adapter's full paths and by one with a degraded path.
fn full_and_degraded(
    adjust: impl FnOnce(&orbitfield::render::capabilities::AdapterFacts, &mut orbitfield::render::Capabilities),
) -> Option<(RenderContext, RenderContext)> {
    let backends = wgpu::Backends::from_env().unwrap_or(wgpu::Backends::all());
    let full = context()?;
    match RenderContext::headless_with(backends, 4, adjust) {
        Ok(degraded) => Some((full, degraded)),
        Err(e) => {
            eprintln!("skipping: {e}");
            None
        }
    }
}

/// Largest and mean per-channel difference of two images of one size.
fn image_difference(a: &image::RgbaImage, b: &image::RgbaImage) -> (u8, f64) {
    let mut max = 0u8;
    let mut sum = 0u64;
    for (p, q) in a.pixels().zip(b.pixels()) {
        for k in 0..4 {
            let d = p.0[k].abs_diff(q.0[k]);
            max = max.max(d);
            sum += u64::from(d);
        }
    }
    (max, sum as f64 / (a.len() as f64))
}

/// A half-transparent red square in front of a green atom, drawn by `ctx`.
fn transparent_square_over_atom(ctx: &RenderContext, sample_count_note: &str) -> image::RgbaImage {
    let mut scene = GpuScene::new(ctx);
    scene.style.depth_cue = 0.0;
    scene.set_spheres(
        ctx,
        &[SphereInstance {
            center_angstrom: [0.0, 0.0, -1.0],
            radius_angstrom: 1.0,
            color: orbitfield::render::gpu::pack_rgba([0, 255, 0, 255]),
        }],
    );
    let square = [[-1.5, -1.5, 1.0], [1.5, -1.5, 1.0], [1.5, 1.5, 1.0], [-1.5, 1.5, 1.0]];
    let normals = [[0.0, 0.0, 1.0]; 4];
    scene.set_meshes(
        ctx,
        &[(
            MeshInput {
                positions_angstrom: &square,
                normals: &normals,
                indices: &[0, 1, 2, 0, 2, 3],
                ..MeshInput::default()
            },
            MeshStyle {
                color: [1.0, 0.0, 0.0],
                opacity: 0.5,
            },
        )],
    );
    let size = [96, 96];
    let mut camera = Camera::default();
    camera.fit_to_bounds(Vec3::splat(-2.0), Vec3::splat(2.0), 1.0);
    let target = OffscreenTarget::new(ctx, size);
    render_once(ctx, &scene, &target, &camera);
    target
        .read_rgba(ctx)
        .unwrap_or_else(|e| panic!("{sample_count_note}: {e}"))
}

#[test]
fn plain_alpha_transparency_matches_weighted_blended_for_one_layer() {
    let Some((full, plain)) = full_and_degraded(|_, c| c.transparency = orbitfield::render::Transparency::PlainAlpha)
    else {
        return;
    };
    if full.capabilities.transparency != orbitfield::render::Transparency::WeightedBlended {
        eprintln!("skipping: this adapter has no weighted blended transparency to compare with");
        return;
    }
    let a = transparent_square_over_atom(&full, "weighted blended");
    let b = transparent_square_over_atom(&plain, "plain alpha");
    // Both paths blend the one layer the same way; a reddish-green mix in the middle.
    let c = px(&b, [48.0, 48.0]);
    assert!(c[0] > 60 && c[1] > 60 && c[2] < 60, "square over the atom: {c:?}");
    let (max, mean) = image_difference(&a, &b);
    assert!(max <= 6 && mean < 0.5, "pictures differ: max {max}, mean {mean}");
}

#[test]
fn single_sample_picture_matches_msaa_within_edge_tolerance() {
    let Some((one, four)) = full_and_degraded(|facts, c| {
        if facts.msaa4 {
            c.sample_count = 4;
        }
    }) else {
        return;
    };
    if four.sample_count != 4 {
        eprintln!("skipping: the adapter takes no 4 samples");
        return;
    }
    let one = if one.sample_count == 1 {
        one
    } else {
        match RenderContext::headless(1) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("skipping: {e}");
                return;
            }
        }
    };
    let a = transparent_square_over_atom(&one, "1 sample");
    let b = transparent_square_over_atom(&four, "4 samples");
    // Interiors agree; only edge pixels differ (by their coverage).
    assert_eq!(px(&a, [48.0, 48.0]), px(&b, [48.0, 48.0]));
    let (_, mean) = image_difference(&a, &b);
    assert!(mean < 2.0, "pictures differ by {mean} levels per channel on average");
}

/// A sphere of radius 2 A at the origin, lit from the viewer, drawn by `ctx` into a 160 x 160 image
/// after `prepare` has set it up (colours, colour field); returns the image and the camera.
fn sphere_picture(
    ctx: &RenderContext,
    mesh: MeshInput<'_>,
    prepare: impl FnOnce(&mut GpuScene),
) -> (image::RgbaImage, Camera) {
    let mut scene = GpuScene::new(ctx);
    scene.style.depth_cue = 0.0;
    scene.style.light_dir_view = [0.0, 0.0, 1.0];
    scene.set_meshes(
        ctx,
        &[(
            mesh,
            MeshStyle {
                color: [0.5, 0.5, 0.5],
                opacity: 1.0,
            },
        )],
    );
    prepare(&mut scene);
    let mut camera = Camera::default();
    camera.fit_to_bounds(Vec3::splat(-2.2), Vec3::splat(2.2), 1.0);
    let target = OffscreenTarget::new(ctx, SPHERE_PICTURE_PX);
    render_once(ctx, &scene, &target, &camera);
    let img = target
        .read_rgba(ctx)
        .unwrap_or_else(|e| panic!("reading the sphere picture: {e}"));
    (img, camera)
}

const SPHERE_PICTURE_PX: [u32; 2] = [160, 160];

/// The colour of `img` where `camera` projects `p`.
fn colour_at(img: &image::RgbaImage, camera: &Camera, p: Vec3) -> [u8; 4] {
    let Some((at, _)) = camera.project_to_pixel(p, SPHERE_PICTURE_PX) else {
        panic!("{p} is behind the camera");
    };
    px(img, at)
}

/// Categorical colours per vertex (green for x < 0, magenta for x > 0) show on their halves; values
/// per vertex (x) go through the colormap and range the scene is given.
#[test]
fn mesh_with_per_vertex_colours_shows_them() {
    use orbitfield::render::colormap::Colormap;
    let Some(ctx) = context() else { return };
    let (pos, nrm, idx) = sphere_mesh([0.0, 0.0, 0.0], 2.0);
    let colors: Vec<[u8; 4]> = pos
        .iter()
        .map(|p| {
            if p[0] < 0.0 {
                [0, 220, 0, 255]
            } else {
                [220, 0, 220, 255]
            }
        })
        .collect();
    let mesh = MeshInput {
        positions_angstrom: &pos,
        normals: &nrm,
        indices: &idx,
        colors_rgba8: &colors,
        ..MeshInput::default()
    };
    let (img, camera) = sphere_picture(&ctx, mesh, |_| {});
    let left = colour_at(&img, &camera, Vec3::new(-1.2, 0.3, 1.5));
    let right = colour_at(&img, &camera, Vec3::new(1.2, -0.3, 1.5));
    assert!(
        left[1] > left[0] + 80 && left[1] > left[2] + 80,
        "x < 0 should be green: {left:?}"
    );
    assert!(
        right[0] > right[1] + 80 && right[2] > right[1] + 80,
        "x > 0 should be magenta: {right:?}"
    );
    assert_eq!(px(&img, [2.0, 2.0]), [0, 0, 0, 255], "background");

    let values: Vec<f32> = pos.iter().map(|p| p[0]).collect();
    let mesh = MeshInput {
        positions_angstrom: &pos,
        normals: &nrm,
        indices: &idx,
        values: &values,
        ..MeshInput::default()
    };
    let (img, camera) = sphere_picture(&ctx, mesh, |scene| {
        scene.set_value_colors(&ctx, [-2.0, 2.0], Colormap::Diverging);
    });
    let left = colour_at(&img, &camera, Vec3::new(-1.5, 0.0, 1.3));
    let right = colour_at(&img, &camera, Vec3::new(1.5, 0.0, 1.3));
    let middle = colour_at(&img, &camera, Vec3::new(0.0, 0.0, 2.0));
    assert!(left[2] > left[0] + 60, "value -1.5 should be blue: {left:?}");
    assert!(right[0] > right[2] + 60, "value +1.5 should be red: {right:?}");
    assert!(
        middle.iter().take(3).all(|&c| c > 150) && middle[0].abs_diff(middle[2]) < 40,
        "value 0 should be near white: {middle:?}"
    );
}

/// Without usable 3-D textures a surface coloured by a volume is coloured by the volume's values at
/// its vertices (sampled on the CPU): for a linear field the picture is the 3-D texture path's.
#[test]
fn per_vertex_volume_colouring_matches_the_3d_texture_path() {
    let Some((full, degraded)) = full_and_degraded(|_, c| c.volume_textures = false) else {
        return;
    };
    if !full.capabilities.volume_textures {
        eprintln!("skipping: this adapter has no 3-D textures to compare with");
        return;
    }
    let grid = linear_x_grid();
    let (pos, nrm, idx) = sphere_mesh([0.0, 0.0, 0.0], 2.0);
    let picture = |ctx: &RenderContext| {
        let mesh = MeshInput {
            positions_angstrom: &pos,
            normals: &nrm,
            indices: &idx,
            ..MeshInput::default()
        };
        sphere_picture(ctx, mesh, |scene| colour_by(ctx, scene, &grid))
    };
    let (a, _) = picture(&full);
    let (b, camera) = picture(&degraded);
    let left = colour_at(&b, &camera, Vec3::new(-1.5, 0.0, 1.3));
    let right = colour_at(&b, &camera, Vec3::new(1.5, 0.0, 1.3));
    assert!(left[2] > left[0] + 60, "x = -1.5 should be blue: {left:?}");
    assert!(right[0] > right[2] + 60, "x = +1.5 should be red: {right:?}");
    let (max, mean) = image_difference(&a, &b);
    eprintln!("3-D texture vs per-vertex colouring: max {max}, mean {mean}");
    assert!(max <= 6 && mean < 0.5, "pictures differ: max {max}, mean {mean}");
}
