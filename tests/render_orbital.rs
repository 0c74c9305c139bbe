//! Orbitals computed on the render device (`compute::wgpu::orbital`, `shaders/orbital.wgsl`) against
//! independent references: PySCF's cubes of water (`tests/data/engine/water_*_24.cube`, spherical d),
//! and the CPU engine (itself checked against PySCF at ~2500 points per file in `tests/cpu_engine.rs`)
//! on slanted and axis-aligned lattices for Cartesian and spherical bases with d, f and g shells,
//! RHF and UHF; and the meshes that the GPU marching cubes extract from the on-device lattice against
//! the CPU extractor on the CPU engine's lattice. Runs on whatever adapter exists (Mesa lavapipe in
//! CI); skipped, with the reason printed, where none exists.
//!
//! Tolerance of a value: |gpu - reference| <= 1e-5 + 1e-4 |reference| (atomic units). The pass
//! evaluates in f32; what remains is f32 rounding (a few 1e-7 at the largest orbital values).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use orbitfield::compute::cpu::evaluate_grid;
use orbitfield::compute::wgpu::marching_cubes::{GpuLattice, McCompute, MeshCapacity};
use orbitfield::compute::wgpu::orbital::{MoCompute, read_values};
use orbitfield::compute::wgpu::packed_mo::PackedMoField;
use orbitfield::compute::{FieldInput, FieldJob};
use orbitfield::io::cube;
use orbitfield::model::field::FieldSpec;
use orbitfield::model::{Grid3, Lattice, Wavefunction};
use orbitfield::surface::{self, MeshData};
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[path = "common/lattice.rs"]
mod lattice;
use lattice::lattice_around;
#[path = "common/wgpu_device.rs"]
mod wgpu_device;
use wgpu_device::compute_device;

const ABS_TOL: f64 = 1e-5;
const REL_TOL: f64 = 1e-4;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/engine")
        .join(name)
}

fn load_wf(name: &str) -> Arc<Wavefunction> {
    let mut system = orbitfield::io::load(&[data(name)]).unwrap();
    Arc::new(system.wavefunctions.remove(0))
}

fn device() -> Option<(wgpu::Device, wgpu::Queue)> {
    compute_device("render-device orbital")
}

/// The field `spec` of `wf` on `lattice`, computed by the pass into a buffer poisoned with NaN first;
/// returns the values read back and the buffer.
fn on_device(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    mo: &MoCompute,
    wf: &Wavefunction,
    spec: &str,
    lattice: &Lattice,
) -> (Vec<f32>, wgpu::Buffer) {
    let field = spec.parse::<FieldSpec>().unwrap().resolve(Some(wf)).unwrap();
    let packed = PackedMoField::new(wf, &field, lattice.origin_bohr).unwrap();
    let values = MoCompute::create_values(device, lattice);
    let poison = vec![f32::NAN; lattice.n_points()];
    queue.write_buffer(&values, 0, bytemuck::cast_slice(&poison));
    let mut encoder = device.create_command_encoder(&Default::default());
    mo.encode(device, &mut encoder, &packed, lattice, &values, None)
        .unwrap();
    queue.submit([encoder.finish()]);
    let got = read_values(device, queue, &values, lattice.n_points()).unwrap();
    assert!(got.iter().all(|v| v.is_finite()), "{spec}: every point written");
    (got, values)
}

/// The CPU engine's lattice of the same field.
fn on_cpu(wf: &Arc<Wavefunction>, spec: &str, lattice: &Lattice) -> Grid3 {
    let field = spec.parse::<FieldSpec>().unwrap().resolve(Some(wf)).unwrap();
    evaluate_grid(&FieldJob {
        field,
        lattice: *lattice,
        input: FieldInput::Wavefunction(wf.clone()),
    })
    .unwrap()
}

/// Largest |got - want| / (ABS_TOL + REL_TOL |want|) (at most 1 passes), with `sign` applied to got.
fn worst(got: &[f32], want: &[f32], sign: f64) -> f64 {
    assert_eq!(got.len(), want.len());
    got.iter()
        .zip(want)
        .map(|(&g, &w)| (sign * f64::from(g) - f64::from(w)).abs() / (ABS_TOL + REL_TOL * f64::from(w).abs()))
        .fold(0.0, f64::max)
}

/// Water (spherical d) HOMO and density on PySCF's own 24^3 lattice equal PySCF's cubegen output.
/// The cubes print 6 significant digits, well inside the tolerance.
#[test]
fn water_cubes_match_pyscf() {
    let Some((device, queue)) = device() else { return };
    let mo = MoCompute::new(&device);
    let wf = load_wf("water_hf_631gs_sph.molden");
    for (name, spec, up_to_sign) in [
        ("water_homo_24.cube", "mo:homo", true),
        ("water_density_24.cube", "density", false),
    ] {
        let path = data(name);
        let theirs = cube::read(&path, &std::fs::read(&path).unwrap()).unwrap();
        // PySCF's exact lattice: the molecule's box plus 3 bohr, 24 points per axis (the header
        // rounds it to 6 decimals; see tests/cube_dx.rs).
        let mut lattice = theirs.grids[0].lattice;
        for k in 0..3 {
            let (lo, hi) = wf.atoms.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), at| {
                (a.min(at.position_bohr[k]), b.max(at.position_bohr[k]))
            });
            lattice.origin_bohr[k] = lo - 3.0;
            lattice.steps_bohr[k][k] = (hi - lo + 6.0) / 23.0;
        }
        let (got, _) = on_device(&device, &queue, &mo, &wf, spec, &lattice);
        let want = &theirs.grids[0].values;
        let e = if up_to_sign {
            worst(&got, want, 1.0).min(worst(&got, want, -1.0))
        } else {
            worst(&got, want, 1.0)
        };
        println!("{name}: worst error {e:.3} of the tolerance");
        assert!(e <= 1.0, "{name}: {e}");
    }
}

/// Every field kind, Cartesian and spherical, s..g, RHF and UHF, on a slanted and an axis-aligned
/// lattice: the pass equals the CPU engine.
#[test]
fn fields_match_the_cpu_engine() {
    let Some((device, queue)) = device() else { return };
    let mo = MoCompute::new(&device);
    let cases: &[(&str, &[&str])] = &[
        ("water_hf_631gs_cart.molden", &["mo:homo", "mo:1", "density"]),
        ("n2_hf_ccpvqz_cart.molden", &["mo:lumo+3", "mo:homo"]),
        ("n2_hf_ccpvqz_sph.molden", &["mo:homo-1", "density"]),
        (
            "o2_uhf_ccpvtz_sph.molden",
            &["mo:beta:homo", "mo:alpha:lumo", "density", "spin"],
        ),
        ("threonine_hf_631gs_cart.molden", &["mo:homo"]),
    ];
    for (molden, specs) in cases {
        let wf = load_wf(molden);
        // Sheared and axis-aligned, sizes not multiples of the 8 x 8 x 4 bricks.
        for lattice in [lattice_around(&wf, 19, true), lattice_around(&wf, 17, false)] {
            for spec in *specs {
                let cpu = on_cpu(&wf, spec, &lattice);
                let (got, _) = on_device(&device, &queue, &mo, &wf, spec, &lattice);
                let e = worst(&got, &cpu.values, 1.0);
                let max = cpu.values.iter().fold(0.0f32, |m, v| m.max(v.abs()));
                println!(
                    "{molden} {spec} (axis-aligned {}): worst {e:.3} of the tolerance, |max| {max:.3e}",
                    lattice.is_axis_aligned()
                );
                assert!(e <= 1.0, "{molden} {spec}: {e}");
                // The field is not trivially small where the comparison happens.
                assert!(max > 1e-2, "{molden} {spec}: {max}");
            }
        }
    }
}

/// A lattice split into many z-slabs (dispatches of at most 3 workgroups per dimension: 12 planes
/// each, the last one partial) gives the same values as the CPU engine: every plane written once,
/// with the right plane offset, and a density's terms added in order within each slab.
#[test]
fn slabs_of_a_split_lattice_match_the_cpu_engine() {
    let Some((device, queue)) = device() else { return };
    let mo = MoCompute::new(&device).with_max_groups_per_dimension(3);
    let wf = load_wf("water_hf_631gs_sph.molden");
    let lattice = lattice_around(&wf, 23, true);
    for spec in ["mo:homo", "density"] {
        let cpu = on_cpu(&wf, spec, &lattice);
        let field = spec.parse::<FieldSpec>().unwrap().resolve(Some(&wf)).unwrap();
        let packed = PackedMoField::new(&wf, &field, lattice.origin_bohr).unwrap();
        let values = MoCompute::create_values(&device, &lattice);
        queue.write_buffer(&values, 0, bytemuck::cast_slice(&vec![f32::NAN; lattice.n_points()]));
        let mut encoder = device.create_command_encoder(&Default::default());
        let plan = mo
            .encode(&device, &mut encoder, &packed, &lattice, &values, None)
            .unwrap();
        queue.submit([encoder.finish()]);
        assert_eq!((plan.groups_xy, plan.planes_per_slab, plan.slabs), ([3, 3], 12, 2));
        let got = read_values(&device, &queue, &values, lattice.n_points()).unwrap();
        assert!(got.iter().all(|v| v.is_finite()), "{spec}: every point written");
        let e = worst(&got, &cpu.values, 1.0);
        println!("water {spec} in {} slabs: worst {e:.3} of the tolerance", plan.slabs);
        assert!(e <= 1.0, "{spec}: {e}");
    }
}

fn read_mesh(
    mc: &McCompute,
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    lattice: &GpuLattice,
    iso: f32,
    sign: f32,
) -> MeshData {
    let mut encoder = device.create_command_encoder(&Default::default());
    let mesh = mc
        .encode(
            device,
            &mut encoder,
            lattice,
            iso,
            sign,
            MeshCapacity::guess(&lattice.lattice),
        )
        .unwrap();
    queue.submit([encoder.finish()]);
    mesh.read_back(device, queue).unwrap()
}

/// Both lobes extracted on the device from the on-device lattice (no host copy in between) equal
/// the CPU extractor's lobes of the CPU engine's lattice: triangle count and area within 1e-4.
#[test]
fn lobes_from_the_device_lattice_match_the_cpu_meshes() {
    let Some((device, queue)) = device() else { return };
    let mo = MoCompute::new(&device);
    let mc = McCompute::new(&device);
    for (molden, spec, iso) in [
        ("water_hf_631gs_sph.molden", "mo:homo", 0.05f32),
        ("n2_hf_ccpvqz_cart.molden", "mo:lumo", 0.04),
    ] {
        let wf = load_wf(molden);
        let mut lo = [f64::INFINITY; 3];
        for a in &wf.atoms {
            for (l, &p) in lo.iter_mut().zip(&a.position_bohr) {
                *l = l.min(p);
            }
        }
        let lattice = Lattice::axis_aligned(lo.map(|x| x - 4.5), 0.25, [40, 41, 42]);
        let cpu = on_cpu(&wf, spec, &lattice);
        let (_, values) = on_device(&device, &queue, &mo, &wf, spec, &lattice);
        let gpu_lattice = GpuLattice::from_buffer(values, lattice).unwrap();
        let mut negated = cpu.clone();
        negated.values.iter_mut().for_each(|v| *v = -*v);
        for (sign, cpu_mesh) in [
            (1.0f32, surface::extract(&cpu, iso)),
            (-1.0, surface::extract(&negated, iso)),
        ] {
            let gpu_mesh = read_mesh(&mc, &device, &queue, &gpu_lattice, sign * iso, sign);
            let (a, b) = (cpu_mesh.area_angstrom2(), gpu_mesh.area_angstrom2());
            println!(
                "{molden} {spec} lobe {sign}: {} / {} triangles, area {a:.6} / {b:.6} A^2",
                cpu_mesh.triangle_count(),
                gpu_mesh.triangle_count()
            );
            assert!(cpu_mesh.triangle_count() > 100, "{molden}: a real surface");
            assert_eq!(
                gpu_mesh.triangle_count(),
                cpu_mesh.triangle_count(),
                "{molden} lobe {sign}"
            );
            assert!((a - b).abs() <= 1e-4 * a, "{molden} lobe {sign}: area {a} vs {b}");
        }
    }
}

/// Every variant of the pass (`MoPassVariant`, chosen by `ORBITFIELD_ORBITAL_PASS` in the viewer
/// and timed side by side by the bench) equals the CPU engine: Cartesian and spherical shells up to
/// g, a UHF spin density, sheared and axis-aligned lattices whose sizes are not multiples of the
/// bricks, and a lattice split into z-slabs of 16 planes (the four-points variant's own brick
/// height, so it runs split) with a density's terms added in place.
#[test]
fn every_pass_variant_matches_the_cpu_engine() {
    use orbitfield::compute::wgpu::orbital::MoPassVariant;
    let Some((device, queue)) = device() else { return };
    let cases: &[(&str, &[&str])] = &[
        ("water_hf_631gs_sph.molden", &["mo:homo", "density"]),
        ("n2_hf_ccpvqz_cart.molden", &["mo:lumo+3"]),
        ("o2_uhf_ccpvtz_sph.molden", &["spin"]),
    ];
    for variant in MoPassVariant::ALL {
        let mo = MoCompute::new(&device).with_variant(variant);
        for (molden, specs) in cases {
            let wf = load_wf(molden);
            for lattice in [lattice_around(&wf, 19, true), lattice_around(&wf, 21, false)] {
                for spec in *specs {
                    let cpu = on_cpu(&wf, spec, &lattice);
                    let (got, _) = on_device(&device, &queue, &mo, &wf, spec, &lattice);
                    let e = worst(&got, &cpu.values, 1.0);
                    println!("{} {molden} {spec}: worst {e:.3} of the tolerance", variant.name());
                    assert!(e <= 1.0, "{} {molden} {spec}: {e}", variant.name());
                }
            }
        }
        // Slabs of 4 workgroups of 4 planes: 16 planes each.
        let split = MoCompute::new(&device)
            .with_variant(variant)
            .with_max_groups_per_dimension(4);
        let wf = load_wf("water_hf_631gs_sph.molden");
        let lattice = lattice_around(&wf, 23, true);
        for spec in ["mo:homo", "density"] {
            let cpu = on_cpu(&wf, spec, &lattice);
            let (got, _) = on_device(&device, &queue, &split, &wf, spec, &lattice);
            let e = worst(&got, &cpu.values, 1.0);
            println!("{} water {spec} in slabs of 16 planes: worst {e:.3}", variant.name());
            assert!(e <= 1.0, "{} slabs {spec}: {e}", variant.name());
        }
    }
}
