//! Electrostatic potential maps on the CPU: direct Coulomb summation against multilevel summation
//! (defaults a = 12 A, h = 2 A, open boundaries, plan preparation included) on the same map, for
//! water boxes of growing size; first prints the MSM accuracy table on AdK (relative RMS error
//! against the direct sum for a in {8, 10, 12, 14} A and h in {1.5, 2, 2.5} A). The comparison
//! runs twice: wall time (`esp_dcs_vs_msm/...`) and process CPU time (`cpu/esp_dcs_vs_msm/...`,
//! all threads), the latter less sensitive to other load on a shared machine. Results:
//! `benches/RESULTS.md` ("Electrostatics").

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "common/process_cpu.rs"]
mod process_cpu;

use criterion::measurement::Measurement;
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use orbitfield::compute::cpu::evaluate_grid;
use orbitfield::compute::esp::{Boundary, EspMethod, MsmParams, field_input};
use orbitfield::compute::{Field, FieldInput, FieldJob, PointCharges};
use orbitfield::model::Lattice;
use orbitfield::model::units::{ANGSTROM_PER_BOHR, BOHR_PER_ANGSTROM};
use process_cpu::ProcessCpu;
use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// TIP3P-like waters on a jittered cubic lattice at liquid density (0.0334 molecules/A^3):
/// O -0.834 e, two H +0.417 e at 0.9572 A, 104.52 degrees, random orientation.
fn water_box(atoms: usize) -> (PointCharges, f64) {
    let molecules = atoms.div_ceil(3);
    let side_angstrom = (molecules as f64 / 0.0334).cbrt();
    let per_axis = (molecules as f64).cbrt().ceil() as usize;
    let spacing = side_angstrom / per_axis as f64;
    let mut seed = 0x5eed_u64;
    let mut rnd = move || {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (seed >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut q = PointCharges::default();
    let (r, half) = (0.9572, 104.52f64.to_radians() / 2.0);
    'outer: for k in 0..per_axis {
        for j in 0..per_axis {
            for i in 0..per_axis {
                if q.charges_e.len() >= 3 * molecules {
                    break 'outer;
                }
                let o = [i, j, k].map(|n| (n as f64 + 0.5 + 0.2 * (rnd() - 0.5)) * spacing);
                // A random orthonormal frame from two random vectors.
                let u = {
                    let v = [rnd() - 0.5, rnd() - 0.5, rnd() - 0.5];
                    let n = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt().max(1e-9);
                    v.map(|x| x / n)
                };
                let w = {
                    let v = [rnd() - 0.5, rnd() - 0.5, rnd() - 0.5];
                    let d = v[0] * u[0] + v[1] * u[1] + v[2] * u[2];
                    let v = [v[0] - d * u[0], v[1] - d * u[1], v[2] - d * u[2]];
                    let n = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt().max(1e-9);
                    v.map(|x| x / n)
                };
                let h1: [f64; 3] = std::array::from_fn(|a| o[a] + r * (half.cos() * u[a] + half.sin() * w[a]));
                let h2: [f64; 3] = std::array::from_fn(|a| o[a] + r * (half.cos() * u[a] - half.sin() * w[a]));
                for (p, c) in [(o, -0.834), (h1, 0.417), (h2, 0.417)] {
                    q.positions_bohr.push(p.map(|x| x * BOHR_PER_ANGSTROM));
                    q.charges_e.push(c);
                }
            }
        }
    }
    (q, side_angstrom)
}

fn job(input: FieldInput, lattice: Lattice) -> FieldJob {
    FieldJob {
        field: Field::Potential,
        lattice,
        input,
    }
}

fn msm_values(charges: &Arc<PointCharges>, params: MsmParams, lattice: Lattice) -> Vec<f32> {
    let input = field_input(charges.clone(), EspMethod::Msm(params), Boundary::Open, &lattice).unwrap();
    evaluate_grid(&job(input, lattice)).unwrap().values
}

/// MSM accuracy on AdK (3341 charges) against the direct sum, 2 A map over the atoms plus 3 A, at
/// points more than 1 A from every atom.
fn accuracy_table() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/md/adk_open.pqr");
    let mut system = orbitfield::io::load(&[path]).unwrap();
    let charges = system.structure.charges_e.clone().unwrap();
    let frame = system.trajectory.frame(0).unwrap();
    let q = Arc::new(PointCharges {
        positions_bohr: frame
            .positions_angstrom
            .iter()
            .map(|p| p.map(|x| f64::from(x) * BOHR_PER_ANGSTROM))
            .collect(),
        charges_e: charges.iter().map(|&c| f64::from(c)).collect(),
    });
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for p in &q.positions_bohr {
        for k in 0..3 {
            lo[k] = lo[k].min(p[k] * ANGSTROM_PER_BOHR);
            hi[k] = hi[k].max(p[k] * ANGSTROM_PER_BOHR);
        }
    }
    let lattice = Lattice::around_box(lo, hi, 3.0, 2.0);
    let direct = evaluate_grid(&job(FieldInput::Charges(q.clone()), lattice))
        .unwrap()
        .values;
    let [nx, ny, _] = lattice.dims;
    let keep: Vec<usize> = (0..lattice.n_points())
        .filter(|&i| {
            let p = lattice.point_bohr(i % nx, (i / nx) % ny, i / (nx * ny));
            q.positions_bohr.iter().all(|y| {
                let d = [p[0] - y[0], p[1] - y[1], p[2] - y[2]];
                (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt() > BOHR_PER_ANGSTROM
            })
        })
        .collect();
    println!(
        "MSM accuracy, AdK open boundaries, {} map points (2 A lattice, > 1 A from atoms):",
        keep.len()
    );
    println!("| a (A) | h = 1.5 A | h = 2 A | h = 2.5 A |");
    println!("|---|---|---|---|");
    for a in [8.0, 10.0, 12.0, 14.0] {
        let mut row = format!("| {a} |");
        for h in [1.5, 2.0, 2.5] {
            let t = Instant::now();
            let got = msm_values(
                &q,
                MsmParams {
                    cutoff_angstrom: a,
                    spacing_angstrom: h,
                },
                lattice,
            );
            let (mut num, mut den) = (0.0, 0.0);
            for &i in &keep {
                let (g, w) = (f64::from(got[i]), f64::from(direct[i]));
                num += (g - w) * (g - w);
                den += w * w;
            }
            row.push_str(&format!(
                " {:.2e} ({:.2} s) |",
                (num / den).sqrt(),
                t.elapsed().as_secs_f64()
            ));
        }
        println!("{row}");
    }
}

/// DCS and MSM on the same map for growing water boxes, in the group `name` of `c`.
fn dcs_vs_msm<M: Measurement>(c: &mut Criterion<M>, name: &str) {
    let mut group = c.benchmark_group(name);
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    for atoms in [1_000usize, 3_000, 10_000, 30_000, 100_000] {
        let (q, side) = water_box(atoms);
        let q = Arc::new(q);
        // The same map for every size: a 32 A cube at 1 A spacing (33^3 points) at the box centre.
        let centre = side / 2.0;
        let lattice = Lattice::around_box([centre - 16.0; 3], [centre + 16.0; 3], 0.0, 1.0);
        let n = q.charges_e.len();
        group.bench_with_input(BenchmarkId::new("dcs", n), &lattice, |b, l| {
            b.iter(|| black_box(evaluate_grid(&job(FieldInput::Charges(q.clone()), *l)).unwrap()))
        });
        group.bench_with_input(BenchmarkId::new("msm", n), &lattice, |b, l| {
            b.iter(|| black_box(msm_values(&q, MsmParams::default(), *l)))
        });
    }
    group.finish();
}

fn wall_benches(c: &mut Criterion) {
    accuracy_table();
    dcs_vs_msm(c, "esp_dcs_vs_msm");
}

fn cpu_benches(c: &mut Criterion<ProcessCpu>) {
    dcs_vs_msm(c, "cpu/esp_dcs_vs_msm");
}

criterion_group!(wall, wall_benches);
criterion_group! {
    name = cpu;
    config = Criterion::default().with_measurement(ProcessCpu);
    targets = cpu_benches
}
criterion_main!(wall, cpu);
