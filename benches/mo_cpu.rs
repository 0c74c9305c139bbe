//! CPU field engine benchmarks: threonine 6-31G* HOMO on PySCF's 80^3 cubegen box (1 and 2
//! threads), the density, replicated threonine for the growth of cost with atoms, and the direct
//! Coulomb sum. Results and the peers measured beside them: `benches/RESULTS.md`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/kit/mod.rs"]
mod kit;
#[path = "common/process_cpu.rs"]
mod process_cpu;

use criterion::measurement::Measurement;
use criterion::{Criterion, criterion_group, criterion_main};
use orbitfield::compute::cpu::evaluate_grid;
use orbitfield::compute::{Field, FieldInput, FieldJob, PointCharges};
use orbitfield::model::field::{FieldSpec, LatticeSpec};
use orbitfield::model::units::angstrom_from_bohr3;
use orbitfield::model::{Lattice, OrbitalSet, Spin, Wavefunction};
use process_cpu::ProcessCpu;
use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

fn threonine() -> Wavefunction {
    kit::threonine().expect("threonine molden loads")
}

/// `copies` threonines side by side along x (10 A apart), the HOMO coefficients on each.
fn replicated(wf: &Wavefunction, copies: usize) -> (Wavefunction, Field) {
    let field = "mo:homo".parse::<FieldSpec>().unwrap().resolve(Some(wf)).unwrap();
    let Field::Orbital { index, .. } = field else {
        unreachable!()
    };
    let homo = wf.alpha.orbital(index).unwrap().to_vec();
    let mut out = wf.clone();
    out.basis.shells.clear();
    out.atoms.clear();
    let shift = 10.0 / 0.529_177_210_92;
    for c in 0..copies {
        let dx = c as f64 * shift;
        for a in &wf.atoms {
            let mut a = a.clone();
            a.position_bohr[0] += dx;
            out.atoms.push(a);
        }
        for s in &wf.basis.shells {
            let mut s = s.clone();
            s.center_bohr[0] += dx;
            s.atom += c * wf.atoms.len();
            out.basis.shells.push(s);
        }
    }
    let coefficients: Vec<f64> = (0..copies).flat_map(|_| homo.iter().copied()).collect();
    out.alpha = OrbitalSet {
        energies_hartree: vec![-0.4],
        occupations: vec![2.0],
        symmetries: vec![String::new()],
        n_basis: coefficients.len(),
        coefficients,
    };
    out.beta = None;
    (
        out,
        Field::Orbital {
            spin: Spin::Alpha,
            index: 0,
        },
    )
}

fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("rayon pool")
}

fn benches<M: Measurement>(c: &mut Criterion<M>, clock: &str) {
    let wf = Arc::new(threonine());
    let homo = "mo:homo".parse::<FieldSpec>().unwrap().resolve(Some(&wf)).unwrap();
    let lattice = kit::cube_lattice(&wf, 80);
    let mut g = c.benchmark_group(format!("{clock}/threonine_631gs_cart_80cubed"));
    g.sample_size(10).measurement_time(Duration::from_secs(4));
    for threads in [1, 2] {
        let p = pool(threads);
        for (name, field) in [("homo", homo.clone()), ("density", Field::Density)] {
            let job = FieldJob {
                field,
                lattice,
                input: FieldInput::Wavefunction(wf.clone()),
            };
            g.bench_function(format!("{name}_{threads}thread"), |b| {
                b.iter(|| p.install(|| black_box(evaluate_grid(&job).unwrap())))
            });
        }
    }
    g.finish();

    // A QM region's orbital: the same 80^3 lattice carried into the wavefunction's frame by a rigid
    // motion (rotated steps), as `analysis::qm_region` computes it; the engine takes its general-point
    // path instead of the separable axis-aligned tiles. Peer: the axis-aligned case above.
    let rotated = {
        use orbitfield::analysis::qm_region::{RigidTransform, superpose};
        let pts: Vec<[f64; 3]> = wf.atoms.iter().map(|a| a.position_bohr).collect();
        let (s, c) = 0.7f64.sin_cos();
        // A rotation about (1, 1, 1)/sqrt 3 by 0.7 rad, fitted back from moved atoms.
        let k = 1.0 / 3.0f64.sqrt();
        let r = [
            [
                c + k * k * (1.0 - c),
                k * k * (1.0 - c) - k * s,
                k * k * (1.0 - c) + k * s,
            ],
            [
                k * k * (1.0 - c) + k * s,
                c + k * k * (1.0 - c),
                k * k * (1.0 - c) - k * s,
            ],
            [
                k * k * (1.0 - c) - k * s,
                k * k * (1.0 - c) + k * s,
                c + k * k * (1.0 - c),
            ],
        ];
        let motion = RigidTransform {
            rotation: r,
            translation_bohr: [20.0, -5.0, 3.0],
        };
        let moved: Vec<[f64; 3]> = pts.iter().map(|p| motion.apply(*p)).collect();
        let (fit, _) = superpose(&pts, &moved).unwrap();
        // The MD-frame lattice around the moved atoms, then into the wavefunction's frame.
        let mut lo = [f64::INFINITY; 3];
        let mut hi = [f64::NEG_INFINITY; 3];
        for p in &moved {
            for k in 0..3 {
                lo[k] = lo[k].min(p[k]);
                hi[k] = hi[k].max(p[k]);
            }
        }
        let mut steps = [[0.0; 3]; 3];
        for k in 0..3 {
            steps[k][k] = (hi[k] - lo[k] + 6.0) / 79.0;
        }
        let md = Lattice {
            origin_bohr: lo.map(|x| x - 3.0),
            steps_bohr: steps,
            dims: [80; 3],
        };
        fit.lattice_to_wavefunction(&md)
    };
    let mut g = c.benchmark_group(format!("{clock}/qm_region_threonine_80cubed_rotated"));
    g.sample_size(10).measurement_time(Duration::from_secs(4));
    let p = pool(1);
    let job = FieldJob {
        field: homo.clone(),
        lattice: rotated,
        input: FieldInput::Wavefunction(wf.clone()),
    };
    g.bench_function("homo_1thread", |b| {
        b.iter(|| p.install(|| black_box(evaluate_grid(&job).unwrap())))
    });
    g.finish();

    // Growth with atoms: copies of threonine in a row, lattice around them (0.15 A, 4 A padding).
    let mut g = c.benchmark_group(format!("{clock}/replicated_threonine_homo_1thread"));
    g.sample_size(10).measurement_time(Duration::from_secs(4));
    let p = pool(1);
    for copies in [1usize, 2, 4, 8] {
        let (w, field) = replicated(&wf, copies);
        let positions: Vec<[f64; 3]> = w.atoms.iter().map(|a| angstrom_from_bohr3(a.position_bohr)).collect();
        let lattice = LatticeSpec::AroundAtoms {
            spacing_angstrom: 0.3,
            padding_angstrom: 4.0,
        }
        .build(&positions)
        .unwrap();
        let job = FieldJob {
            field,
            lattice,
            input: FieldInput::Wavefunction(Arc::new(w)),
        };
        g.bench_function(
            format!("{}atoms_{}points", copies * wf.atoms.len(), lattice.n_points()),
            |b| b.iter(|| p.install(|| black_box(evaluate_grid(&job).unwrap()))),
        );
    }
    g.finish();

    // Direct Coulomb sum: 4000 charges on 32^3 points = 1.3e8 evaluations.
    let mut q = PointCharges::default();
    let mut seed = 7u64;
    for i in 0..4000 {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let u = |s: u64, k: u32| ((s >> k) & 0xffff) as f64 / 65536.0 * 60.0;
        q.positions_bohr.push([u(seed, 0), u(seed, 16), u(seed, 32)]);
        q.charges_e.push(if i % 2 == 0 { 0.5 } else { -0.5 });
    }
    let job = FieldJob {
        field: Field::Potential,
        lattice: Lattice::axis_aligned([0.0; 3], 60.0 / 31.0, [32, 32, 32]),
        input: FieldInput::Charges(Arc::new(q)),
    };
    let mut g = c.benchmark_group(format!("{clock}/coulomb_4000charges_32cubed"));
    g.sample_size(10).measurement_time(Duration::from_secs(3));
    for threads in [1, 2] {
        let p = pool(threads);
        g.bench_function(format!("{threads}thread"), |b| {
            b.iter(|| p.install(|| black_box(evaluate_grid(&job).unwrap())))
        });
    }
    g.finish();
}

fn wall_benches(c: &mut Criterion) {
    benches(c, "wall");
}

fn cpu_benches(c: &mut Criterion<ProcessCpu>) {
    benches(c, "cpu");
}

criterion_group!(wall, wall_benches);
criterion_group! {
    name = cpu_time;
    config = Criterion::default().with_measurement(ProcessCpu);
    targets = cpu_benches
}
criterion_main!(wall, cpu_time);
