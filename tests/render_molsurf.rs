//! The molecular surface computed on the render device (`compute::wgpu::molsurf`,
//! `shaders/molsurf.wgsl`) against the CPU engine (itself checked against the analytic density in
//! `tests/molsurf.rs`) on a fresh random cluster (with atoms on and beyond the lattice's edges and
//! atoms without radius), on a lattice split into many z-slabs, and on adk (3341 atoms, the PQR's
//! radii); the surface that the GPU marching cubes extract from the on-device lattice against the
//! CPU extractor's on the CPU engine's lattice; and the analytic one-atom sphere. Runs on whatever
//! adapter exists (Mesa lavapipe in CI); skipped, with the reason printed, where none exists.
//!
//! Tolerance of a value: |gpu - cpu| <= 1e-5 max(cpu, 1e-3), except at points on an atom's
//! truncation sphere (to 1e-5 relative in r^2), which may differ by that atom's truncated tail
//! (1e-3) each. The pass evaluates in f32 (exp2 of the Gaussians' exponents, the z factor by a
//! recurrence of at most 7 steps); the CPU engine sums in f64.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use orbitfield::compute::cpu::{self, molsurf::PreparedMolSurf};
use orbitfield::compute::molsurf::{DEFAULT_RADIUS_SCALE, MOLSURF_LEVEL, MolSurfAtoms};
use orbitfield::compute::wgpu::marching_cubes::{GpuLattice, McCompute, MeshCapacity};
use orbitfield::compute::wgpu::molsurf::{DeviceAtoms, MolSurfCompute};
use orbitfield::compute::wgpu::orbital::read_values;
use orbitfield::compute::{Field, FieldInput, FieldJob};
use orbitfield::model::field::LatticeSpec;
use orbitfield::model::units::bohr_from_angstrom;
use orbitfield::model::{Grid3, Lattice};
use orbitfield::surface::{self, MeshData};
use std::f64::consts::PI;
use std::sync::Arc;

#[path = "common/wgpu_device.rs"]
mod wgpu_device;
use wgpu_device::compute_device;

const REL_TOL: f64 = 1e-5;

fn device() -> Option<(wgpu::Device, wgpu::Queue)> {
    compute_device("render-device molecular surface")
}

/// The pass's lattice of `positions`/`radii` (Angstrom), into a buffer poisoned with NaN first;
/// returns the values read back and the buffer.
fn on_device(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    pass: &MolSurfCompute,
    positions: &[[f64; 3]],
    radii: &[f64],
    lattice: &Lattice,
) -> (Vec<f32>, wgpu::Buffer) {
    let mut atoms = DeviceAtoms::new(device, radii, DEFAULT_RADIUS_SCALE).unwrap();
    let pos32: Vec<[f32; 3]> = positions.iter().map(|p| p.map(|x| x as f32)).collect();
    let values = MolSurfCompute::create_values(device, lattice);
    queue.write_buffer(&values, 0, bytemuck::cast_slice(&vec![f32::NAN; lattice.n_points()]));
    // Two frames through the same buffers: the second (other positions first) must not see the
    // first's bins.
    let shifted: Vec<[f32; 3]> = pos32.iter().map(|p| [p[0] + 0.7, p[1] - 1.3, p[2] + 2.1]).collect();
    for frame in [&shifted, &pos32] {
        let mut encoder = device.create_command_encoder(&Default::default());
        pass.encode(device, queue, &mut encoder, &mut atoms, frame, lattice, &values, None)
            .unwrap();
        queue.submit([encoder.finish()]);
    }
    let got = read_values(device, queue, &values, lattice.n_points()).unwrap();
    assert!(got.iter().all(|v| v.is_finite()), "every point written");
    (got, values)
}

/// The CPU engine's lattice of the same atoms, as the positions reach the pass (f32 Angstrom).
fn on_cpu(positions: &[[f64; 3]], radii: &[f64], lattice: &Lattice) -> (Grid3, PreparedMolSurf) {
    let pos: Vec<[f64; 3]> = positions.iter().map(|p| p.map(|x| f64::from(x as f32))).collect();
    let atoms = MolSurfAtoms::from_radii_angstrom(&pos, radii, DEFAULT_RADIUS_SCALE).unwrap();
    let prepared = PreparedMolSurf::new(&atoms);
    let grid = cpu::evaluate_grid(&FieldJob {
        field: Field::MolSurf,
        lattice: *lattice,
        input: FieldInput::Spheres(Arc::new(atoms)),
    })
    .unwrap();
    (grid, prepared)
}

/// Checks every point; returns the largest relative difference over points above 1e-3 away from
/// truncation spheres, and how many points sat on one.
fn compare(got: &[f32], cpu: &Grid3, prepared: &PreparedMolSurf) -> (f64, usize) {
    let l = &cpu.lattice;
    let [nx, ny, _] = l.dims;
    let (mut worst, mut tails) = (0.0f64, 0usize);
    for (p, (&g, &w)) in got.iter().zip(&cpu.values).enumerate() {
        let (g, w) = (f64::from(g), f64::from(w));
        let err = (g - w).abs();
        if err <= REL_TOL * w.max(1e-3) {
            if w > 1e-3 {
                worst = worst.max(err / w);
            }
            continue;
        }
        let (i, j, k) = (p % nx, p / nx % ny, p / (nx * ny));
        let near = prepared.near_cutoff(l.point_bohr(i, j, k), 1e-5);
        assert!(
            err <= 1.01e-3 * near as f64 + REL_TOL * w.max(1e-3),
            "point ({i}, {j}, {k}): {g} vs {w} ({near} atoms at their cutoff)"
        );
        tails += 1;
    }
    (worst, tails)
}

fn xorshift(seed: u64) -> impl FnMut() -> f64 {
    let mut s = seed | 1;
    move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn fresh_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(7)
        ^ u64::from(std::process::id())
}

/// A random cluster: atoms inside, on the edges of and beyond a lattice whose sizes are not
/// multiples of the bricks, some without radius, some far away; values equal the CPU engine's.
/// The same atoms with the field pass split into z-slabs of 3 workgroups (48 planes) agree too.
#[test]
fn random_cluster_matches_the_cpu_engine() {
    let Some((device, queue)) = device() else { return };
    let seed = fresh_seed();
    eprintln!("seed {seed}");
    let mut rnd = xorshift(seed);
    let h = 0.37;
    let dims = [21, 19, 131];
    let origin = [-1.5, 2.0, -3.0];
    let lattice = Lattice::axis_aligned(origin.map(bohr_from_angstrom), bohr_from_angstrom(h), dims);
    let span = dims.map(|d| (d - 1) as f64 * h);
    let mut positions: Vec<[f64; 3]> = (0..400)
        .map(|_| [0, 1, 2].map(|a| origin[a] - 3.0 + rnd() * (span[a] + 6.0)))
        .collect();
    let mut radii: Vec<f64> = (0..positions.len()).map(|_| 1.0 + rnd()).collect();
    // On lattice points and cell borders, far outside, without radius.
    positions.push(origin);
    radii.push(1.6);
    positions.push([origin[0] + span[0], origin[1] + span[1], origin[2] + span[2]]);
    radii.push(1.9);
    positions.push([origin[0] - 50.0, origin[1], origin[2]]);
    radii.push(1.5);
    positions.push([1e4, 1e4, 1e4]);
    radii.push(1.5);
    positions.push([origin[0] + 3.0, origin[1] + 2.0, origin[2] + 10.0]);
    radii.push(0.0);
    let (cpu, prepared) = on_cpu(&positions, &radii, &lattice);
    let above = cpu.values.iter().filter(|&&v| v > MOLSURF_LEVEL).count();
    assert!(above > 1000, "a real surface: {above} points inside");
    for max_groups in [u32::MAX, 3] {
        let pass = MolSurfCompute::new(&device).with_max_groups_per_dimension(max_groups);
        let (got, _) = on_device(&device, &queue, &pass, &positions, &radii, &lattice);
        let (worst, tails) = compare(&got, &cpu, &prepared);
        println!(
            "random cluster (groups per dimension {max_groups}): worst relative {worst:.2e}, {tails} points at a cutoff"
        );
    }
}

fn adk() -> (Vec<[f64; 3]>, Vec<f64>) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/md/adk_open.pqr");
    let mut system = orbitfield::io::load(&[path]).unwrap();
    let frame = system.trajectory.frame(0).unwrap();
    let positions: Vec<[f64; 3]> = frame.positions_angstrom.iter().map(|p| p.map(f64::from)).collect();
    let radii = orbitfield::compute::molsurf::atom_radii_angstrom(&system.structure);
    assert_eq!(positions.len(), 3341);
    (positions, radii)
}

fn lattice_around(positions: &[[f64; 3]], radii: &[f64], spacing_angstrom: f64) -> Lattice {
    let atoms = MolSurfAtoms::from_radii_angstrom(positions, radii, DEFAULT_RADIUS_SCALE).unwrap();
    LatticeSpec::AroundAtoms {
        spacing_angstrom,
        padding_angstrom: atoms.padding_angstrom(),
    }
    .build(positions)
    .unwrap()
}

fn read_mesh(device: &wgpu::Device, queue: &wgpu::Queue, values: wgpu::Buffer, lattice: Lattice) -> MeshData {
    let mc = McCompute::new(device);
    let gpu_lattice = GpuLattice::from_buffer(values, lattice).unwrap();
    let mut encoder = device.create_command_encoder(&Default::default());
    let mesh = mc
        .encode(
            device,
            &mut encoder,
            &gpu_lattice,
            MOLSURF_LEVEL,
            1.0,
            MeshCapacity::guess(&lattice),
        )
        .unwrap();
    queue.submit([encoder.finish()]);
    mesh.read_back(device, queue).unwrap()
}

/// adk at 0.9 A: the lattice equals the CPU engine's, and the surface extracted on the device from
/// it equals the CPU extractor's surface of the CPU lattice (triangle count, area within 1e-4).
#[test]
fn adk_lattice_and_surface_match_the_cpu_engine() {
    let Some((device, queue)) = device() else { return };
    let (positions, radii) = adk();
    let lattice = lattice_around(&positions, &radii, 0.9);
    let (cpu, prepared) = on_cpu(&positions, &radii, &lattice);
    let pass = MolSurfCompute::new(&device);
    let (got, values) = on_device(&device, &queue, &pass, &positions, &radii, &lattice);
    let (worst, tails) = compare(&got, &cpu, &prepared);
    println!(
        "adk {:?}: worst relative {worst:.2e}, {tails} points at a cutoff",
        lattice.dims
    );
    let cpu_mesh = surface::extract(&cpu, MOLSURF_LEVEL);
    let gpu_mesh = read_mesh(&device, &queue, values, lattice);
    let (a, b) = (cpu_mesh.area_angstrom2(), gpu_mesh.area_angstrom2());
    // Points whose value is within the tolerance of the level could fall on either side of it.
    let ambiguous = cpu
        .values
        .iter()
        .filter(|&&v| (f64::from(v) - f64::from(MOLSURF_LEVEL)).abs() <= REL_TOL)
        .count();
    println!(
        "adk surface: {} / {} triangles (CPU / device), area {a:.4} / {b:.4} A^2, {ambiguous} points at the level",
        cpu_mesh.triangle_count(),
        gpu_mesh.triangle_count()
    );
    assert!(cpu_mesh.triangle_count() > 20_000, "a real surface");
    let dt = cpu_mesh.triangle_count().abs_diff(gpu_mesh.triangle_count());
    assert!(dt <= 8 * ambiguous, "triangles differ by {dt}");
    assert!((a - b).abs() <= 1e-4 * a, "area {a} vs {b}");
}

/// One atom: the surface extracted on the device from the device's lattice is the sphere of its
/// radius (every vertex within a tenth of the spacing, area within 2 %).
#[test]
fn one_atom_is_a_sphere_of_its_radius_on_the_device() {
    let Some((device, queue)) = device() else { return };
    let pass = MolSurfCompute::new(&device);
    for (r, spacing) in [(1.7, 0.2), (1.2, 0.15)] {
        let center = [0.3, -0.2, 0.1];
        let lattice = lattice_around(&[center], &[r], spacing);
        let (_, values) = on_device(&device, &queue, &pass, &[center], &[r], &lattice);
        let mesh = read_mesh(&device, &queue, values, lattice);
        let area = mesh.area_angstrom2();
        let want = 4.0 * PI * r * r;
        println!("one atom R {r} at {spacing} A: area {area:.4} vs {want:.4} A^2");
        assert!((area / want - 1.0).abs() < 0.02, "R {r}: area {area} vs {want}");
        assert!(mesh.positions_angstrom.len() > 100);
        for p in &mesh.positions_angstrom {
            let d = (0..3)
                .map(|k| (f64::from(p[k]) - center[k]).powi(2))
                .sum::<f64>()
                .sqrt();
            assert!((d - r).abs() < 0.1 * spacing, "vertex at {d} A, radius {r}");
        }
    }
}
