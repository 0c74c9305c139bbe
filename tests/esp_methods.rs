//! Electrostatics methods against independent references: MSM with open boundaries against the
//! direct Coulomb sum (the CPU engine) on AdK, the cutoff method against an f64 brute-force sum of
//! the same smoothed kernel written here (all periodic images for periodic cells), periodic MSM
//! against an Ewald sum written here (orthorhombic and triclinic boxes, one and two levels, a box
//! smaller than the cutoff, a charged cell; fresh random charges each run, seed printed), bad
//! input, and a pool whose GPU engine refuses a plan.

// Tests may unwrap: a panic is a failed test (house rules).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use orbitfield::compute::cpu::{CpuEngine, evaluate_grid, evaluate_points};
use orbitfield::compute::esp::{Boundary, EspMethod, MsmParams, field_input};
use orbitfield::compute::{ComputeError, Field, FieldInput, FieldJob, PointCharges, SlabEngine};
use orbitfield::jobs::{EngineSpec, Pool, PoolConfig};
use orbitfield::model::units::{ANGSTROM_PER_BOHR, BOHR_PER_ANGSTROM};
use orbitfield::model::{Lattice, UnitCell};
use std::f64::consts::PI;
use std::ops::Range;
use std::path::PathBuf;
use std::sync::Arc;

/// A 64-bit LCG (Knuth's MMIX constants), uniform in [0, 1).
struct Lcg(u64);

impl Lcg {
    fn from_clock(what: &str) -> Lcg {
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(12345);
        println!("{what}: seed {seed}");
        Lcg(seed)
    }
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Hardy's C2 softening, written out independently of the library.
fn soft(r: f64, a: f64) -> f64 {
    if r >= a {
        1.0 / r
    } else {
        let s = (r / a) * (r / a);
        (15.0 - 10.0 * s + 3.0 * s * s) / (8.0 * a)
    }
}

/// `1/r - g_a(r)` inside the cutoff, 0 beyond.
fn short_kernel(r: f64, a: f64) -> f64 {
    if r < a { 1.0 / r - soft(r, a) } else { 0.0 }
}

fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn len(a: [f64; 3]) -> f64 {
    (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt()
}

fn cell_bohr(cell: &UnitCell) -> [[f64; 3]; 3] {
    cell.matrix_angstrom().map(|r| r.map(|x| x * BOHR_PER_ANGSTROM))
}

/// Fractional coordinates through Cramer's rule (independent of the library's inverse).
fn fractional(m: &[[f64; 3]; 3], x: [f64; 3]) -> [f64; 3] {
    let det3 = |a: [f64; 3], b: [f64; 3], c: [f64; 3]| {
        a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) + a[2] * (b[0] * c[1] - b[1] * c[0])
    };
    let d = det3(m[0], m[1], m[2]);
    [
        det3(x, m[1], m[2]) / d,
        det3(m[0], x, m[2]) / d,
        det3(m[0], m[1], x) / d,
    ]
}

fn rel_rms(got: &[f64], want: &[f64]) -> f64 {
    let num: f64 = got.iter().zip(want).map(|(g, w)| (g - w).powi(2)).sum();
    let den: f64 = want.iter().map(|w| w * w).sum();
    (num / den).sqrt()
}

fn demean(v: &[f64]) -> Vec<f64> {
    let m = v.iter().sum::<f64>() / v.len() as f64;
    v.iter().map(|x| x - m).collect()
}

fn random_neutral(rng: &mut Lcg, n: usize, cell: &[[f64; 3]; 3]) -> PointCharges {
    let mut q = PointCharges::default();
    for _ in 0..n {
        let f = [rng.next(), rng.next(), rng.next()];
        q.positions_bohr.push(std::array::from_fn(|i| {
            f[0] * cell[0][i] + f[1] * cell[1][i] + f[2] * cell[2][i]
        }));
        q.charges_e.push(2.0 * rng.next() - 1.0);
    }
    let mean = q.charges_e.iter().sum::<f64>() / n as f64;
    q.charges_e.iter_mut().for_each(|c| *c -= mean);
    q
}

fn adk() -> PointCharges {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/md/adk_open.pqr");
    let mut system = orbitfield::io::load(&[path]).unwrap();
    let charges = system.structure.charges_e.clone().unwrap();
    let frame = system.trajectory.frame(0).unwrap();
    PointCharges {
        positions_bohr: frame
            .positions_angstrom
            .iter()
            .map(|p| p.map(|x| f64::from(x) * BOHR_PER_ANGSTROM))
            .collect(),
        charges_e: charges.iter().map(|&q| f64::from(q)).collect(),
    }
}

fn grid(input: FieldInput, lattice: Lattice) -> Vec<f64> {
    let job = FieldJob {
        field: Field::Potential,
        lattice,
        input,
    };
    evaluate_grid(&job)
        .unwrap()
        .values
        .iter()
        .map(|&v| f64::from(v))
        .collect()
}

fn msm(a: f64, h: f64) -> EspMethod {
    EspMethod::Msm(MsmParams {
        cutoff_angstrom: a,
        spacing_angstrom: h,
    })
}

/// MSM (open) on AdK against the direct sum on a 2 A map, at points more than 1 A from any atom.
#[test]
fn msm_open_adk_matches_direct_sum() {
    let charges = Arc::new(adk());
    let pos = &charges.positions_bohr;
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for p in pos {
        for k in 0..3 {
            lo[k] = lo[k].min(p[k] * ANGSTROM_PER_BOHR);
            hi[k] = hi[k].max(p[k] * ANGSTROM_PER_BOHR);
        }
    }
    let lattice = Lattice::around_box(lo, hi, 3.0, 2.0);
    let direct = grid(FieldInput::Charges(charges.clone()), lattice);
    // Points more than 1 A from every atom.
    let min_bohr = BOHR_PER_ANGSTROM;
    let keep: Vec<usize> = (0..lattice.n_points())
        .filter(|&idx| {
            let [nx, ny, _] = lattice.dims;
            let p = lattice.point_bohr(idx % nx, (idx / nx) % ny, idx / (nx * ny));
            pos.iter().all(|y| len(sub(p, *y)) > min_bohr)
        })
        .collect();
    assert!(keep.len() > 1000, "{} points kept", keep.len());
    let want: Vec<f64> = keep.iter().map(|&i| direct[i]).collect();
    let mut errors = Vec::new();
    for (a, h) in [(12.0, 2.0), (8.0, 2.5), (8.0, 2.0)] {
        let input = field_input(charges.clone(), msm(a, h), Boundary::Open, &lattice).unwrap();
        let got = grid(input, lattice);
        let got: Vec<f64> = keep.iter().map(|&i| got[i]).collect();
        let e = rel_rms(&got, &want);
        println!(
            "MSM open AdK a = {a} A, h = {h} A: relative RMS error {e:.3e} over {} points",
            keep.len()
        );
        errors.push(e);
    }
    assert!(errors[0] <= 5e-3, "defaults: {:.3e}", errors[0]);
    // Error falls as h shrinks (a = 8) and as a grows (h = 2).
    assert!(errors[1] > errors[2], "h 2.5 -> 2: {errors:?}");
    assert!(errors[2] > errors[0], "a 8 -> 12: {errors:?}");
}

/// Brute-force smoothed short-range sum at `p` over all images `n` with `|n_k| <= reach[k]`.
fn brute_cutoff(q: &PointCharges, cell: Option<&[[f64; 3]; 3]>, a: f64, p: [f64; 3]) -> (f64, f64) {
    let reach = match cell {
        None => 0,
        Some(_) => 4,
    };
    let mut sum = 0.0;
    let mut scale = 0.0;
    for n0 in -reach..=reach {
        for n1 in -reach..=reach {
            for n2 in -reach..=reach {
                let shift = match cell {
                    None => [0.0; 3],
                    Some(m) => std::array::from_fn(|i| n0 as f64 * m[0][i] + n1 as f64 * m[1][i] + n2 as f64 * m[2][i]),
                };
                for (y, &c) in q.positions_bohr.iter().zip(&q.charges_e) {
                    let r = len(sub(p, [y[0] + shift[0], y[1] + shift[1], y[2] + shift[2]]));
                    let t = c * short_kernel(r, a);
                    sum += t;
                    scale += t.abs();
                }
            }
        }
    }
    (sum, scale)
}

fn check_cutoff(q: PointCharges, boundary: Boundary, cutoff_angstrom: f64, points: &[[f64; 3]], lattice: Lattice) {
    let cell = match boundary {
        Boundary::Periodic(c) => Some(cell_bohr(&c)),
        Boundary::Open => None,
    };
    let q = Arc::new(q);
    let input = field_input(q.clone(), EspMethod::Cutoff { cutoff_angstrom }, boundary, &lattice).unwrap();
    let a = cutoff_angstrom * BOHR_PER_ANGSTROM;
    let at_points = evaluate_points(&Field::Potential, &input, points).unwrap();
    for (p, got) in points.iter().zip(&at_points) {
        let (want, scale) = brute_cutoff(&q, cell.as_ref(), a, *p);
        assert!(
            (got - want).abs() <= 1e-5 * scale.max(1e-12),
            "point {p:?}: {got} vs {want} (scale {scale})"
        );
    }
    let on_lattice = grid(input, lattice);
    let [nx, ny, _] = lattice.dims;
    for (idx, got) in on_lattice.iter().enumerate() {
        let p = lattice.point_bohr(idx % nx, (idx / nx) % ny, idx / (nx * ny));
        let (want, scale) = brute_cutoff(&q, cell.as_ref(), a, p);
        // The lattice is rounded to f32 on the way out.
        assert!(
            (got - want).abs() <= 1e-5 * scale.max(1e-12) + 1e-7 * want.abs(),
            "lattice point {idx}: {got} vs {want} (scale {scale})"
        );
    }
}

#[test]
fn cutoff_open_matches_brute_force() {
    let mut rng = Lcg::from_clock("cutoff open");
    let side = 20.0 * BOHR_PER_ANGSTROM;
    let box_ = [[side, 0.0, 0.0], [0.0, side, 0.0], [0.0, 0.0, side]];
    let mut q = random_neutral(&mut rng, 300, &box_);
    // A dense cluster: 300 charges in one 0.5 A cube, far more than any fixed-depth bin holds.
    for _ in 0..300 {
        let p: [f64; 3] = std::array::from_fn(|_| (10.0 + 0.5 * rng.next()) * BOHR_PER_ANGSTROM);
        q.positions_bohr.push(p);
        q.charges_e.push(rng.next() - 0.5);
    }
    let points: Vec<[f64; 3]> = (0..60)
        .map(|_| std::array::from_fn(|_| (1.6 * rng.next() - 0.3) * side))
        .collect();
    let lattice = Lattice::axis_aligned([-2.0, -3.0, 5.0], 3.1, [9, 8, 5]);
    check_cutoff(q, Boundary::Open, 8.0, &points, lattice);
}

#[test]
fn cutoff_periodic_matches_brute_force_over_all_images() {
    let mut rng = Lcg::from_clock("cutoff periodic");
    // Cutoffs beyond half the box (and beyond the box) on purpose.
    for (cell, cutoff) in [
        (UnitCell::orthorhombic([11.0, 12.0, 13.0]), 9.0),
        (UnitCell::new([10.0, 11.0, 12.0], [70.0, 80.0, 65.0]), 12.0),
    ] {
        let m = cell_bohr(&cell);
        let q = random_neutral(&mut rng, 40, &m);
        let points: Vec<[f64; 3]> = (0..25)
            .map(|_| {
                let f: [f64; 3] = std::array::from_fn(|_| 3.0 * rng.next() - 1.0);
                std::array::from_fn(|i| f[0] * m[0][i] + f[1] * m[1][i] + f[2] * m[2][i])
            })
            .collect();
        let lattice = Lattice::axis_aligned([-1.0, 2.0, 0.5], 4.3, [5, 4, 3]);
        check_cutoff(q, Boundary::Periodic(cell), cutoff, &points, lattice);
    }
}

/// erfc by Abramowitz and Stegun 7.1.26 (absolute error below 1.5e-7).
fn erfc_as(x: f64) -> f64 {
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let poly =
        t * (0.254_829_592 + t * (-0.284_496_736 + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    poly * (-x * x).exp()
}

/// Ewald potential (tin-foil) of the periodic charges at `points` (bohr, hartree/e): real space
/// `erfc(beta r)/r` over images within `r_cut`, reciprocal space over `|G| < G_max`, and the
/// background term `-pi Q / (beta^2 V)`. The points are not charge sites, so no self term enters.
fn ewald(q: &PointCharges, m: &[[f64; 3]; 3], points: &[[f64; 3]]) -> Vec<f64> {
    let r_cut = 30.0;
    let beta = 5.0 / r_cut;
    let g_max = 2.0 * beta * 30f64.sqrt();
    // Reciprocal vectors through the fractional coordinates of the unit axes.
    let inv: [[f64; 3]; 3] = {
        let cols: Vec<[f64; 3]> = (0..3)
            .map(|i| {
                let mut e = [0.0; 3];
                e[i] = 1.0;
                fractional(m, e)
            })
            .collect();
        // w_k[i] = fractional coordinate k of unit vector i.
        std::array::from_fn(|k| std::array::from_fn(|i| cols[i][k]))
    };
    let volume = {
        let [a, b, c] = *m;
        (a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) + a[2] * (b[0] * c[1] - b[1] * c[0]))
            .abs()
    };
    let total: f64 = q.charges_e.iter().sum();
    let nr: [i64; 3] = std::array::from_fn(|k| (r_cut * len(inv[k])).ceil() as i64 + 2);
    let ng: [i64; 3] = std::array::from_fn(|k| (g_max * len(m[k]) / (2.0 * PI)).ceil() as i64);
    // Structure factors of half the reciprocal lattice (G and -G pair up).
    let mut waves = Vec::new();
    for h in -ng[0]..=ng[0] {
        for k in -ng[1]..=ng[1] {
            for l in -ng[2]..=ng[2] {
                if (h, k, l) <= (0, 0, 0) {
                    continue;
                }
                let g: [f64; 3] = std::array::from_fn(|i| {
                    2.0 * PI * (h as f64 * inv[0][i] + k as f64 * inv[1][i] + l as f64 * inv[2][i])
                });
                let g2 = g[0] * g[0] + g[1] * g[1] + g[2] * g[2];
                if g2 > g_max * g_max {
                    continue;
                }
                let (mut re, mut im) = (0.0, 0.0);
                for (y, &c) in q.positions_bohr.iter().zip(&q.charges_e) {
                    let ph = g[0] * y[0] + g[1] * y[1] + g[2] * y[2];
                    re += c * ph.cos();
                    im += c * ph.sin();
                }
                let coef = 2.0 * 4.0 * PI / volume * (-g2 / (4.0 * beta * beta)).exp() / g2;
                waves.push((g, coef, re, im));
            }
        }
    }
    points
        .iter()
        .map(|p| {
            let mut v = -PI * total / (beta * beta * volume);
            for n0 in -nr[0]..=nr[0] {
                for n1 in -nr[1]..=nr[1] {
                    for n2 in -nr[2]..=nr[2] {
                        let s: [f64; 3] =
                            std::array::from_fn(|i| n0 as f64 * m[0][i] + n1 as f64 * m[1][i] + n2 as f64 * m[2][i]);
                        for (y, &c) in q.positions_bohr.iter().zip(&q.charges_e) {
                            let r = len(sub(*p, [y[0] + s[0], y[1] + s[1], y[2] + s[2]]));
                            if r < r_cut {
                                v += c * erfc_as(beta * r) / r;
                            }
                        }
                    }
                }
            }
            for (g, coef, re, im) in &waves {
                let ph = g[0] * p[0] + g[1] * p[1] + g[2] * p[2];
                // Re[S(G) e^{iG.p}] with S(G) = sum_j q_j e^{-iG.y_j}.
                v += coef * (re * ph.cos() + im * ph.sin());
            }
            v
        })
        .collect()
}

#[test]
fn msm_periodic_matches_ewald() {
    let mut rng = Lcg::from_clock("msm periodic");
    // Single-level (top = finest lattice) boxes, a two-level triclinic box (40 A vectors: 20 points
    // per vector, top 10), and a box much smaller than the 12 A cutoff (stencils wrap many times).
    for (cell, n) in [
        (UnitCell::orthorhombic([20.0, 22.0, 24.0]), 200),
        (UnitCell::new([21.0, 22.0, 23.0], [75.0, 82.0, 68.0]), 200),
        (UnitCell::new([40.0, 36.0, 38.0], [85.0, 95.0, 80.0]), 200),
        (UnitCell::orthorhombic([9.0, 9.0, 9.0]), 30),
        // Net charge +3 e: same additive convention as Ewald's background term, compared raw below.
        (UnitCell::orthorhombic([19.0, 21.0, 20.0]), 150),
    ] {
        let m = cell_bohr(&cell);
        let mut q = random_neutral(&mut rng, n, &m);
        let charged = n == 150;
        if charged {
            q.charges_e.iter_mut().for_each(|c| *c += 3.0 / n as f64);
        }
        let q = Arc::new(q);
        // Map points: a 6^3 fractional lattice, shifted randomly, kept 1 A away from every charge.
        let shift = [rng.next(), rng.next(), rng.next()];
        let mut points = Vec::new();
        for k in 0..6 {
            for j in 0..6 {
                for i in 0..6 {
                    let f = [
                        (i as f64 + shift[0]) / 6.0,
                        (j as f64 + shift[1]) / 6.0,
                        (k as f64 + shift[2]) / 6.0,
                    ];
                    let p: [f64; 3] = std::array::from_fn(|x| f[0] * m[0][x] + f[1] * m[1][x] + f[2] * m[2][x]);
                    points.push(p);
                }
            }
        }
        let lattice = Lattice::axis_aligned([0.0; 3], 1.0, [0, 0, 0]);
        let input = field_input(q.clone(), msm(12.0, 2.0), Boundary::Periodic(cell), &lattice).unwrap();
        let got = evaluate_points(&Field::Potential, &input, &points).unwrap();
        let want = ewald(&q, &m, &points);
        let e = rel_rms(&demean(&got), &demean(&want));
        let mean_got = got.iter().sum::<f64>() / got.len() as f64;
        let mean_want = want.iter().sum::<f64>() / want.len() as f64;
        println!(
            "periodic MSM vs Ewald, cell {:?} {:?}: relative RMS error {e:.3e} (means {mean_got:.3e} vs {mean_want:.3e})",
            cell.lengths_angstrom, cell.angles_degree
        );
        assert!(e <= 5e-3, "{e:.3e}");
        if charged {
            let raw = rel_rms(&got, &want);
            println!("  charged cell, no means removed: relative RMS error {raw:.3e}");
            assert!(raw <= 5e-3, "{raw:.3e}");
        }
    }
}

fn bad_input(charges: PointCharges, method: EspMethod, boundary: Boundary, needle: &str) {
    let lattice = Lattice::axis_aligned([0.0; 3], 1.0, [4, 4, 4]);
    match field_input(Arc::new(charges), method, boundary, &lattice) {
        Err(ComputeError::BadInput(msg)) => assert!(msg.contains(needle), "{msg:?} lacks {needle:?}"),
        other => panic!("expected BadInput naming {needle:?}, got {other:?}"),
    }
}

#[test]
fn bad_input_is_an_error_naming_the_value() {
    let one = || PointCharges {
        positions_bohr: vec![[0.0; 3], [1.0, 2.0, 3.0]],
        charges_e: vec![1.0, -1.0],
    };
    bad_input(one(), msm(12.0, 0.0), Boundary::Open, "h = 0");
    bad_input(one(), msm(12.0, -1.5), Boundary::Open, "h = -1.5");
    bad_input(one(), msm(12.0, f64::NAN), Boundary::Open, "h = NaN");
    bad_input(one(), msm(1.0, 2.0), Boundary::Open, "a = 1");
    bad_input(
        one(),
        EspMethod::Cutoff { cutoff_angstrom: 0.0 },
        Boundary::Open,
        "cutoff = 0",
    );
    let flat = UnitCell::new([10.0, 10.0, 10.0], [90.0, 90.0, 180.0]);
    bad_input(one(), msm(12.0, 2.0), Boundary::Periodic(flat), "180");
    let zero = UnitCell::orthorhombic([10.0, 0.0, 10.0]);
    bad_input(
        one(),
        EspMethod::Cutoff { cutoff_angstrom: 5.0 },
        Boundary::Periodic(zero),
        "[10.0, 0.0, 10.0]",
    );
    let mut nan = one();
    nan.positions_bohr[1][2] = f64::NAN;
    bad_input(nan, msm(12.0, 2.0), Boundary::Open, "charge 1");
    bad_input(PointCharges::default(), msm(12.0, 2.0), Boundary::Open, "empty");
    bad_input(PointCharges::default(), EspMethod::Direct, Boundary::Open, "empty");
    let cell = UnitCell::orthorhombic([10.0; 3]);
    bad_input(one(), EspMethod::Direct, Boundary::Periodic(cell), "msm");
}

/// Absurd but finite input is refused or computed, never a panic.
#[test]
fn absurd_values_do_not_panic() {
    let lattice = Lattice::axis_aligned([0.0; 3], 1.0, [3, 3, 3]);
    let cell = UnitCell::orthorhombic([10.0; 3]);
    let huge = || PointCharges {
        positions_bohr: vec![[1e300, -1e300, 0.0], [0.0, 1e250, 3.0]],
        charges_e: vec![1.0, -1.0],
    };
    let cases = [
        (msm(1e300, 2.0), Boundary::Open),
        (msm(12.0, 1e-300), Boundary::Open),
        (EspMethod::Cutoff { cutoff_angstrom: 1e300 }, Boundary::Open),
        (EspMethod::Cutoff { cutoff_angstrom: 1e300 }, Boundary::Periodic(cell)),
        (msm(1e300, 1e299), Boundary::Periodic(cell)),
        (msm(12.0, 2.0), Boundary::Open),
        (msm(12.0, 2.0), Boundary::Periodic(cell)),
        (EspMethod::Cutoff { cutoff_angstrom: 5.0 }, Boundary::Open),
        (msm(12.0, 2.0), Boundary::Periodic(UnitCell::orthorhombic([1e300; 3]))),
    ];
    for (method, boundary) in cases {
        if let Ok(input) = field_input(Arc::new(huge()), method, boundary, &lattice) {
            let job = FieldJob {
                field: Field::Potential,
                lattice,
                input: input.clone(),
            };
            let _ = evaluate_grid(&job);
            let _ = evaluate_points(&Field::Potential, &input, &[[0.0; 3], [1e300, 0.0, -1e300]]);
        }
    }
}

/// A GPU stand-in with no kernel for prepared plans, as the CUDA engine today.
struct RefusingGpu;

impl SlabEngine for RefusingGpu {
    fn name(&self) -> String {
        "refusing gpu".into()
    }
    fn compute_slab(&self, job: &FieldJob, _z: Range<usize>, _out: &mut [f32]) -> Result<(), ComputeError> {
        Err(ComputeError::WrongInput(job.field.clone(), "direct-sum charges"))
    }
}

#[test]
fn plan_refused_by_the_gpu_runs_on_the_cpu_workers_quietly() {
    let q = Arc::new(PointCharges {
        positions_bohr: vec![[1.0, 2.0, 3.0], [4.0, 1.0, 2.0], [2.0, 5.0, 1.0]],
        charges_e: vec![0.5, -1.0, 0.5],
    });
    let lattice = Lattice::axis_aligned([-2.0; 3], 1.5, [7, 6, 9]);
    let input = field_input(q, msm(6.0, 1.5), Boundary::Open, &lattice).unwrap();
    let job = FieldJob {
        field: Field::Potential,
        lattice,
        input,
    };
    let want = evaluate_grid(&job).unwrap();
    let engines = vec![
        EngineSpec {
            engine: Arc::new(RefusingGpu),
            is_gpu: true,
        },
        EngineSpec {
            engine: Arc::new(CpuEngine),
            is_gpu: false,
        },
    ];
    let config = PoolConfig {
        gpu_tile_points: 42,
        cpu_tile_points: 42,
        ..PoolConfig::default()
    };
    let pool: Pool<u32> = Pool::with_engines(engines, config);
    let got = pool.compute_grid(7, job).unwrap();
    assert_eq!(got.values, want.values);
    assert_eq!(pool.last_error(), None);
}

#[test]
fn a_deferred_plan_is_built_by_the_worker_and_gives_the_eager_plans_values() {
    use orbitfield::compute::esp::DeferredPlan;
    let mut rng = Lcg::from_clock("deferred plan");
    let box_bohr = [[30.0, 0.0, 0.0], [0.0, 26.0, 0.0], [0.0, 0.0, 22.0]];
    let charges = Arc::new(random_neutral(&mut rng, 300, &box_bohr));
    let lattice = Lattice {
        origin_bohr: [-2.0, -2.0, -2.0],
        steps_bohr: [[1.7, 0.0, 0.0], [0.0, 1.7, 0.0], [0.0, 0.0, 1.7]],
        dims: [21, 18, 16],
    };
    let method = EspMethod::Msm(MsmParams::default());
    let deferred = DeferredPlan::field_input(charges.clone(), method, Boundary::Open, &lattice).unwrap();
    let FieldInput::DeferredElectrostatics(d) = &deferred else {
        panic!("MSM needs a plan: {deferred:?}");
    };
    // Nothing is computed when the input is made (the viewer makes it on its own thread).
    assert!(format!("{d:?}").contains("built: false"), "{d:?}");
    let job = |input: FieldInput| FieldJob {
        field: Field::Potential,
        lattice,
        input,
    };
    // Through a pool: the first worker that takes a tile builds the plan, every tile shares it.
    let pool: Pool<u32> = Pool::with_engines(
        vec![EngineSpec {
            engine: Arc::new(CpuEngine),
            is_gpu: false,
        }],
        PoolConfig {
            cpu_tile_points: 21 * 18 * 2,
            ..PoolConfig::default()
        },
    );
    let got = pool.compute_grid(1, job(deferred.clone())).unwrap();
    assert!(format!("{d:?}").contains("built: true"), "{d:?}");
    let eager = evaluate_grid(&job(
        field_input(charges.clone(), method, Boundary::Open, &lattice).unwrap()
    ))
    .unwrap();
    assert_eq!(got.values, eager.values, "same plan, same values");
    // And it is the potential: within MSM accuracy of the direct sum.
    let direct = evaluate_grid(&job(FieldInput::Charges(charges.clone()))).unwrap();
    let as_f64 = |v: &[f32]| v.iter().map(|&x| f64::from(x)).collect::<Vec<_>>();
    let err = rel_rms(&as_f64(&got.values), &as_f64(&direct.values));
    assert!(err < 2e-2, "MSM against the direct sum: {err:.2e}");
    // Direct summation with open boundaries needs no plan at all.
    let plain = DeferredPlan::field_input(charges, EspMethod::Direct, Boundary::Open, &lattice).unwrap();
    assert!(matches!(plain, FieldInput::Charges(_)));
}
