//! Screened Coulomb models (`compute::esp::screening`) on every potential path, against their
//! formulas written out here in float64 with the physical constants typed in (CODATA 2018, not the
//! library's unit module):
//! - eps = 4r: `V = sum q / (4 r_A r)` (hartree/e with r in bohr and r_A in Angstrom);
//! - Debye-Hueckel: `V = sum q exp(-kappa r) / (eps r)`, kappa from the ionic strength (Debye length
//!   7.85 A at 0.15 M, eps 78.54, 298.15 K; 0.304 nm / sqrt(I) is the textbook value at 25 C);
//! - direct sums on the CPU engine (lattice and points), the cutoff method against the smoothed
//!   form `k(r) - Taylor_2(k; u = r^2 at a^2)` whose Taylor coefficients the test takes by finite
//!   differences, the vertex values, and the CUDA engine against the CPU (skipped without a device);
//! - multilevel summation and periodic cells are refused for the screened models.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use orbitfield::analysis::vertex_values::potential_at_vertices_in;
use orbitfield::compute::cpu::{self, CpuEngine};
use orbitfield::compute::esp::screening::{Dielectric, field_input_screened};
use orbitfield::compute::esp::{Boundary, EspMethod, MsmParams};
use orbitfield::compute::{ComputeError, Field, FieldJob, PointCharges, SlabEngine};
use orbitfield::model::{Lattice, UnitCell};
use orbitfield::surface::MeshData;
use std::sync::Arc;

#[path = "common/cuda_device.rs"]
mod cuda_device;

const BOHR_ANGSTROM: f64 = 0.529_177_210_903;

/// kappa (1/bohr) from I (M), eps and T (K), constants typed in.
fn kappa_per_bohr(eps: f64, ionic_molar: f64, t_kelvin: f64) -> f64 {
    let e = 1.602_176_634e-19;
    let na = 6.022_140_76e23;
    let eps0 = 8.854_187_812_8e-12;
    let kb = 1.380_649e-23;
    let k2 = 2.0 * ionic_molar * 1000.0 * na * e * e / (eps0 * eps * kb * t_kelvin);
    k2.sqrt() * 1e-10 * BOHR_ANGSTROM
}

/// The pair kernel of each model (hartree/e per e at r bohr).
fn kernel(model: &Dielectric, r: f64) -> f64 {
    match *model {
        Dielectric::Vacuum => 1.0 / r,
        Dielectric::DistanceDependent { slope_per_angstrom } => 1.0 / (slope_per_angstrom * r * BOHR_ANGSTROM * r),
        Dielectric::DebyeHuckel {
            eps_out,
            ionic_strength_molar,
            temperature_kelvin,
        } => (-kappa_per_bohr(eps_out, ionic_strength_molar, temperature_kelvin) * r).exp() / (eps_out * r),
    }
}

fn dist(a: [f64; 3], b: [f64; 3]) -> f64 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
}

/// The formula at `p` and the sum of its terms' magnitudes.
fn reference(q: &PointCharges, model: &Dielectric, p: [f64; 3]) -> (f64, f64) {
    let mut v = 0.0;
    let mut scale = 0.0;
    for (x, &c) in q.positions_bohr.iter().zip(&q.charges_e) {
        let t = c * kernel(model, dist(p, *x));
        v += t;
        scale += t.abs();
    }
    (v, scale)
}

fn random_charges(seed: u64, n: usize, extent_bohr: f64) -> PointCharges {
    let mut s = seed;
    let mut rnd = || {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((s >> 11) as f64 / (1u64 << 53) as f64) - 0.5
    };
    let mut q = PointCharges::default();
    for _ in 0..n {
        q.positions_bohr
            .push([extent_bohr * rnd(), extent_bohr * rnd(), extent_bohr * rnd()]);
        q.charges_e.push(rnd());
    }
    q
}

fn models() -> [Dielectric; 3] {
    [
        Dielectric::DistanceDependent {
            slope_per_angstrom: 4.0,
        },
        Dielectric::debye_default(),
        Dielectric::DebyeHuckel {
            eps_out: 40.0,
            ionic_strength_molar: 1.0,
            temperature_kelvin: 310.0,
        },
    ]
}

fn lattice() -> Lattice {
    Lattice::axis_aligned([-20.0, -18.0, -19.5], 1.7, [24, 21, 23])
}

fn grid(q: &PointCharges, method: EspMethod, model: Dielectric, l: &Lattice) -> Vec<f32> {
    let input = field_input_screened(Arc::new(q.clone()), method, Boundary::Open, model, l).unwrap();
    cpu::evaluate_grid(&FieldJob {
        field: Field::Potential,
        lattice: *l,
        input,
    })
    .unwrap()
    .values
}

#[test]
fn debye_length_matches_the_textbook() {
    // 0.304 nm / sqrt(I) in water at 25 C.
    let k = kappa_per_bohr(78.54, 0.15, 298.15) / BOHR_ANGSTROM;
    assert!((1.0 / k - 3.04 / 0.15f64.sqrt()).abs() < 0.03, "{}", 1.0 / k);
    let lib = Dielectric::debye_default().kappa_per_bohr();
    assert!((lib - kappa_per_bohr(78.54, 0.15, 298.15)).abs() < 1e-6 * lib);
}

#[test]
fn direct_sums_match_each_formula_on_a_lattice_and_at_points() {
    let q = random_charges(7, 400, 30.0);
    let l = lattice();
    for model in models() {
        let values = grid(&q, EspMethod::Direct, model, &l);
        let mut worst = 0.0f64;
        for k in 0..l.dims[2] {
            for j in 0..l.dims[1] {
                for i in 0..l.dims[0] {
                    let got = f64::from(values[i + l.dims[0] * (j + l.dims[1] * k)]);
                    let (want, scale) = reference(&q, &model, l.point_bohr(i, j, k));
                    worst = worst.max((got - want).abs() / scale.max(1e-12));
                }
            }
        }
        eprintln!("{}: worst |cpu - f64| / sum |terms| = {worst:e}", model.label());
        assert!(worst < 1e-5, "{model:?}: {worst:e}");
        // The model matters: its map is not the vacuum one (the test can fail).
        let (vac, _) = reference(&q, &Dielectric::Vacuum, l.point_bohr(3, 4, 5));
        let got = f64::from(values[3 + l.dims[0] * (4 + l.dims[1] * 5)]);
        assert!((got - vac).abs() > 1e-3 * vac.abs().max(1e-3), "{model:?}");

        // Points (the path of `points` and of vertex colours).
        let input = field_input_screened(Arc::new(q.clone()), EspMethod::Direct, Boundary::Open, model, &l).unwrap();
        let pts: Vec<[f64; 3]> = (0..50)
            .map(|i| [-25.0 + i as f64, 3.0 - 0.3 * i as f64, 0.2 * i as f64])
            .collect();
        let got = cpu::evaluate_points(&Field::Potential, &input, &pts).unwrap();
        for (p, g) in pts.iter().zip(got) {
            let (want, scale) = reference(&q, &model, *p);
            assert!((g - want).abs() < 1e-5 * scale, "{model:?} at {p:?}: {g} vs {want}");
        }
    }
}

/// The smoothed cutoff term of a unit charge: `k(r) - (k0 + k1 s + k2 s^2 / 2)`, `s = r^2 - a^2`,
/// the derivatives with respect to u = r^2 by central differences in f64.
fn smoothed(model: &Dielectric, a: f64, r: f64) -> f64 {
    if r >= a {
        return 0.0;
    }
    let ku = |u: f64| kernel(model, u.sqrt());
    let big_a = a * a;
    let h = 1e-3 * big_a;
    let k0 = ku(big_a);
    let k1 = (ku(big_a + h) - ku(big_a - h)) / (2.0 * h);
    let k2 = (ku(big_a + h) - 2.0 * k0 + ku(big_a - h)) / (h * h);
    let s = r * r - big_a;
    kernel(model, r) - (k0 + k1 * s + 0.5 * k2 * s * s)
}

#[test]
fn cutoff_sums_match_the_smoothed_formula_and_approach_the_direct_sum() {
    let q = random_charges(11, 300, 30.0);
    let l = lattice();
    let cutoff_angstrom = 9.0;
    let a = cutoff_angstrom / BOHR_ANGSTROM;
    for model in models() {
        let values = grid(&q, EspMethod::Cutoff { cutoff_angstrom }, model, &l);
        let mut worst = 0.0f64;
        for k in (0..l.dims[2]).step_by(3) {
            for j in 0..l.dims[1] {
                for i in 0..l.dims[0] {
                    let p = l.point_bohr(i, j, k);
                    let (mut want, mut scale) = (0.0, 0.0);
                    for (x, &c) in q.positions_bohr.iter().zip(&q.charges_e) {
                        let t = c * smoothed(&model, a, dist(p, *x));
                        want += t;
                        scale += (c * kernel(&model, dist(p, *x).min(a))).abs();
                    }
                    let got = f64::from(values[i + l.dims[0] * (j + l.dims[1] * k)]);
                    worst = worst.max((got - want).abs() / scale.max(1e-12));
                }
            }
        }
        eprintln!(
            "{} cutoff {cutoff_angstrom} A: worst error / scale {worst:e}",
            model.label()
        );
        assert!(worst < 1e-5, "{model:?}: {worst:e}");
    }
    // Debye-Hueckel at 1 M (Debye length 3 A): a 30 A cutoff is the direct sum to 1e-4 of the scale.
    let model = models()[2];
    let far = grid(&q, EspMethod::Cutoff { cutoff_angstrom: 30.0 }, model, &l);
    let direct = grid(&q, EspMethod::Direct, model, &l);
    let scale = direct.iter().map(|v| v.abs()).fold(0.0f32, f32::max);
    let diff = far
        .iter()
        .zip(&direct)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0f32, f32::max);
    eprintln!("1 M, cutoff 30 A vs direct: max difference {diff:e} of max |V| {scale:e}");
    assert!(diff < 1e-4 * scale);
}

#[test]
fn msm_and_periodic_cells_are_refused_for_screened_models() {
    let q = Arc::new(random_charges(3, 20, 10.0));
    let l = lattice();
    for model in models() {
        let msm = field_input_screened(
            q.clone(),
            EspMethod::Msm(MsmParams::default()),
            Boundary::Open,
            model,
            &l,
        );
        match msm {
            Err(ComputeError::BadInput(m)) => assert!(m.contains("multilevel"), "{m}"),
            other => panic!("{other:?}"),
        }
        let cell = UnitCell::orthorhombic([30.0; 3]);
        let periodic = field_input_screened(
            q.clone(),
            EspMethod::Cutoff { cutoff_angstrom: 9.0 },
            Boundary::Periodic(cell),
            model,
            &l,
        );
        assert!(matches!(periodic, Err(ComputeError::BadInput(_))), "{periodic:?}");
    }
    let bad = Dielectric::DebyeHuckel {
        eps_out: 78.54,
        ionic_strength_molar: -1.0,
        temperature_kelvin: 298.15,
    };
    assert!(field_input_screened(q, EspMethod::Direct, Boundary::Open, bad, &l).is_err());
}

#[test]
fn vertex_values_match_each_formula() {
    let q = random_charges(5, 200, 20.0);
    let mesh = MeshData {
        positions_angstrom: (0..40)
            .map(|i| [-8.0 + 0.4 * i as f32, 2.0 + 0.1 * i as f32, -1.0 - 0.2 * i as f32])
            .collect(),
        ..MeshData::default()
    };
    for model in models() {
        let got = potential_at_vertices_in(&mesh, &q, model).unwrap();
        for (p, g) in mesh.positions_angstrom.iter().zip(got) {
            let pb = p.map(|x| f64::from(x) / BOHR_ANGSTROM);
            let (want, scale) = reference(&q, &model, pb);
            assert!(
                (f64::from(g) - want).abs() < 2e-6 * scale + 1e-7 * want.abs(),
                "{model:?}"
            );
        }
    }
}

#[test]
fn cuda_direct_sums_match_the_cpu_engine() {
    let Some(gpu) = cuda_device::device() else { return };
    let q = random_charges(13, 5000, 40.0);
    let l = lattice();
    for model in models() {
        let input = field_input_screened(Arc::new(q.clone()), EspMethod::Direct, Boundary::Open, model, &l).unwrap();
        let job = FieldJob {
            field: Field::Potential,
            lattice: l,
            input,
        };
        let n = l.n_points();
        let mut a = vec![0.0f32; n];
        let mut b = vec![0.0f32; n];
        gpu.compute_slab(&job, 0..l.dims[2], &mut a).unwrap();
        CpuEngine.compute_slab(&job, 0..l.dims[2], &mut b).unwrap();
        // Per point, against the float64 formula, relative to the sum of the terms' magnitudes
        // (near a charge 1/r^2 magnifies the f32 rounding of the coordinates on both engines).
        let (mut worst_gpu, mut worst_cpu) = (0.0f64, 0.0f64);
        for k in (0..l.dims[2]).step_by(2) {
            for j in 0..l.dims[1] {
                for i in 0..l.dims[0] {
                    let idx = i + l.dims[0] * (j + l.dims[1] * k);
                    let (want, scale) = reference(&q, &model, l.point_bohr(i, j, k));
                    worst_gpu = worst_gpu.max((f64::from(a[idx]) - want).abs() / scale);
                    worst_cpu = worst_cpu.max((f64::from(b[idx]) - want).abs() / scale);
                }
            }
        }
        println!(
            "{}: worst |engine - f64| / sum |terms|: cuda {worst_gpu:e}, cpu {worst_cpu:e}",
            model.label()
        );
        // The device sums each constant-memory chunk of 4000 charges in f32 with coordinates
        // relative to the lattice origin: 2.9e-5 for eps = 4r on an H200 (1/r^2 doubles the
        // coordinates' rounding), against 4e-6 for the CPU engine.
        assert!(worst_gpu < 1e-4, "{model:?}: cuda {worst_gpu:e}");
        assert!(worst_cpu < 1e-5, "{model:?}: cpu {worst_cpu:e}");
    }
    // The cutoff plan of a screened model is refused on the device with a message naming the way out.
    let input = field_input_screened(
        Arc::new(q),
        EspMethod::Cutoff { cutoff_angstrom: 9.0 },
        Boundary::Open,
        models()[0],
        &l,
    )
    .unwrap();
    let job = FieldJob {
        field: Field::Potential,
        lattice: l,
        input,
    };
    let mut a = vec![0.0f32; l.n_points()];
    let err = gpu.compute_slab(&job, 0..l.dims[2], &mut a).unwrap_err();
    assert!(err.to_string().contains("CPU engine"), "{err}");
}

/// The render device's vertex pass (`compute::wgpu::vertex_potential`, on whatever adapter exists: Mesa
/// lavapipe here) with each screened model, against the formula at the read-back vertices.
#[test]
fn render_device_vertex_pass_matches_each_formula() {
    use orbitfield::compute::molsurf::{DEFAULT_RADIUS_SCALE, MOLSURF_LEVEL, MolSurfAtoms};
    use orbitfield::compute::wgpu::marching_cubes::McCompute;
    use orbitfield::compute::wgpu::vertex_potential::{GpuCharges, VertexPotential, VertexScreening, VertexValues};
    use orbitfield::compute::{FieldInput, cpu as cpu_engine};
    use orbitfield::model::field::LatticeSpec;
    use orbitfield::render::RenderContext;
    let ctx = match RenderContext::headless(1) {
        Ok(c) if c.capabilities.mc_compute_supported => c,
        Ok(c) => {
            eprintln!("skipping: no compute pass here ({})", c.capabilities.summary());
            return;
        }
        Err(e) => {
            eprintln!("skipping: {e}");
            return;
        }
    };
    let q = random_charges(17, 60, 18.0 / BOHR_ANGSTROM);
    let centres: Vec<[f64; 3]> = q.positions_bohr.iter().map(|p| p.map(|x| x * BOHR_ANGSTROM)).collect();
    let radii = vec![1.7; centres.len()];
    let atoms = MolSurfAtoms::from_radii_angstrom(&centres, &radii, DEFAULT_RADIUS_SCALE).unwrap();
    let lattice = LatticeSpec::AroundAtoms {
        spacing_angstrom: 0.8,
        padding_angstrom: atoms.padding_angstrom(),
    }
    .build(&centres)
    .unwrap();
    let grid = cpu_engine::evaluate_grid(&FieldJob {
        field: Field::MolSurf,
        lattice,
        input: FieldInput::Spheres(Arc::new(atoms)),
    })
    .unwrap();
    let mc = McCompute::new(&ctx.device);
    let [surface, _] = mc.extract_lobes(&ctx.device, &ctx.queue, &grid, MOLSURF_LEVEL).unwrap();
    let mesh = surface.read_back(&ctx.device, &ctx.queue).unwrap();
    let n = mesh.positions_angstrom.len();
    assert!(n > 500, "{n} vertices");
    let pos_f32: Vec<[f32; 3]> = centres.iter().map(|p| p.map(|x| x as f32)).collect();
    let q_f32: Vec<f32> = q.charges_e.iter().map(|&c| c as f32).collect();
    let vp = VertexPotential::new(&ctx.device);
    let charges = GpuCharges::upload(&ctx.device, &pos_f32, &q_f32).unwrap();
    let values = VertexValues::new(&ctx.device, surface.capacity.vertices);
    // The charges as the pass sees them (f32 Angstrom), for the reference.
    let q_ref = PointCharges {
        positions_bohr: pos_f32
            .iter()
            .map(|p| p.map(|x| f64::from(x) / BOHR_ANGSTROM))
            .collect(),
        charges_e: q_f32.iter().map(|&c| f64::from(c)).collect(),
    };
    // On the surface, and 1.4 A outside along the vertices' normals (the ramp-above option).
    for (model, offset) in models().into_iter().flat_map(|m| [(m, 0.0f32), (m, 1.4)]) {
        let g = model.gpu_angstrom();
        let screen = VertexScreening {
            model: g.model,
            a: g.a as f32,
            b_per_angstrom: g.b as f32,
            offset_angstrom: offset,
        };
        vp.run_screened(&ctx.device, &ctx.queue, &surface, &charges, &values, screen)
            .unwrap();
        let got = values.read(&ctx.device, &ctx.queue, n as u32).unwrap();
        let mut worst = 0.0f64;
        for ((v, nrm), &x) in mesh.positions_angstrom.iter().zip(&mesh.normals).zip(&got) {
            let at: [f64; 3] = std::array::from_fn(|k| f64::from(v[k] + offset * nrm[k]) / BOHR_ANGSTROM);
            let (want, scale) = reference(&q_ref, &model, at);
            worst = worst.max((f64::from(x) - want).abs() / scale);
        }
        eprintln!(
            "{} at {offset} A: {n} vertices, worst |gpu - f64| / sum |terms| {worst:e}",
            model.label()
        );
        assert!(worst < 1e-4, "{model:?} at {offset} A: {worst:e}");
    }
    // Vacuum through the same entry point is the vacuum pass.
    vp.run_screened(
        &ctx.device,
        &ctx.queue,
        &surface,
        &charges,
        &values,
        VertexScreening::default(),
    )
    .unwrap();
    let got = values.read(&ctx.device, &ctx.queue, n as u32).unwrap();
    let v0 = mesh.positions_angstrom[0].map(|c| f64::from(c) / BOHR_ANGSTROM);
    let (want, scale) = reference(&q_ref, &Dielectric::Vacuum, v0);
    assert!((f64::from(got[0]) - want).abs() < 1e-4 * scale);
}
