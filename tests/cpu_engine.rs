//! The CPU field engine against independent references: PySCF's values at ~2500 points per file
//! (`tests/data/engine/*.ref.txt`), the exact f64 point evaluator (`compute::cpu::points`), and
//! analytic potentials. (PySCF's cubes: `tests/cube_dx.rs`.)

#![allow(clippy::unwrap_used, clippy::expect_used)]

use orbitfield::compute::cpu::points::PointEvaluator;
use orbitfield::compute::cpu::{CpuEngine, evaluate_grid, evaluate_points};
use orbitfield::compute::{ComputeError, Field, FieldInput, FieldJob, PointCharges, SlabEngine};
use orbitfield::model::field::FieldSpec;
use orbitfield::model::units::bohr_from_angstrom3;
use orbitfield::model::{Lattice, Spin, Wavefunction};
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/engine")
        .join(name)
}

fn load_wf(name: &str) -> Arc<Wavefunction> {
    let mut system = orbitfield::io::load(&[data(name)]).unwrap();
    assert_eq!(system.wavefunctions.len(), 1, "{name}");
    Arc::new(system.wavefunctions.remove(0))
}

/// A `.ref.txt` column: its name and the 1-based MO index it holds, if any.
type Column = (String, Option<usize>);

/// Columns of a `.ref.txt` and rows of numbers.
fn read_ref(name: &str) -> (Vec<Column>, Vec<Vec<f64>>) {
    let text = std::fs::read_to_string(data(name)).unwrap();
    let mut columns = Vec::new();
    let mut rows = Vec::new();
    for line in text.lines() {
        if let Some(c) = line.strip_prefix("# columns:") {
            let c = c.replace("x y z (Angstrom)", "").replace("(atomic units)", "");
            for w in c.split_whitespace() {
                let mo = w
                    .split_once("(mo_index_1based=")
                    .and_then(|(_, r)| r.trim_end_matches(')').parse::<usize>().ok());
                columns.push((w.split('(').next().unwrap().to_string(), mo));
            }
        } else if !line.starts_with('#') && !line.trim().is_empty() {
            rows.push(line.split_whitespace().map(|x| x.parse().unwrap()).collect());
        }
    }
    (columns, rows)
}

/// Relative 2-norm difference, optionally allowing an overall sign flip.
fn rel_err(got: &[f64], want: &[f64], up_to_sign: bool) -> f64 {
    let norm: f64 = want.iter().map(|w| w * w).sum::<f64>().sqrt();
    let d = |s: f64| {
        got.iter()
            .zip(want)
            .map(|(g, w)| (s * g - w).powi(2))
            .sum::<f64>()
            .sqrt()
    };
    let e = if up_to_sign { d(1.0).min(d(-1.0)) } else { d(1.0) };
    e / norm
}

fn field_of_column(name: &str, mo: Option<usize>) -> Field {
    let spin = if name.starts_with("beta") {
        Spin::Beta
    } else {
        Spin::Alpha
    };
    match (name, mo) {
        ("total_density", _) => Field::Density,
        ("spin_density", _) => Field::SpinDensity,
        (_, Some(n)) => Field::Orbital { spin, index: n - 1 },
        _ => panic!("unknown column {name}"),
    }
}

fn check_against_pyscf(molden: &str, reference: &str) {
    let wf = load_wf(molden);
    let (columns, rows) = read_ref(reference);
    let points: Vec<[f64; 3]> = rows.iter().map(|r| bohr_from_angstrom3([r[0], r[1], r[2]])).collect();
    let input = FieldInput::Wavefunction(wf);
    assert!(columns.len() >= 4 && rows.len() > 1000);
    for (c, (name, mo)) in columns.iter().enumerate() {
        let field = field_of_column(name, *mo);
        let got = evaluate_points(&field, &input, &points).unwrap();
        let want: Vec<f64> = rows.iter().map(|r| r[3 + c]).collect();
        let e = rel_err(&got, &want, mo.is_some());
        println!("{molden} {name}: relative error {e:.2e}");
        assert!(e < 1e-6, "{molden} {name}: relative error {e:.2e}");
    }
}

#[test]
fn water_spherical_matches_pyscf() {
    check_against_pyscf("water_hf_631gs_sph.molden", "water_hf_631gs_sph.ref.txt");
}

#[test]
fn n2_cartesian_up_to_g_matches_pyscf() {
    check_against_pyscf("n2_hf_ccpvqz_cart.molden", "n2_hf_ccpvqz_cart.ref.txt");
}

#[test]
fn o2_uhf_orbitals_density_and_spin_match_pyscf() {
    check_against_pyscf("o2_uhf_ccpvtz_sph.molden", "o2_uhf_ccpvtz_sph.ref.txt");
}

/// Two small lattices around the molecule with shapes that are not multiples of the 8x8 tiles:
/// a slanted one (general points) and an axis-aligned one (separable Gaussians).
fn test_lattices(wf: &Wavefunction) -> [Lattice; 2] {
    let mut lo = [f64::INFINITY; 3];
    for a in &wf.atoms {
        for (l, &p) in lo.iter_mut().zip(&a.position_bohr) {
            *l = l.min(p);
        }
    }
    [
        Lattice {
            origin_bohr: lo.map(|x| x - 4.0),
            steps_bohr: [[0.55, 0.0, 0.0], [0.03, 0.52, 0.0], [0.0, -0.02, 0.58]],
            dims: [17, 15, 19],
        },
        Lattice {
            origin_bohr: lo.map(|x| x - 3.7),
            steps_bohr: [[0.49, 0.0, 0.0], [0.0, 0.53, 0.0], [0.0, 0.0, 0.61]],
            dims: [19, 17, 13],
        },
    ]
}

/// The lattice engine equals the exact f64 evaluator (`compute::cpu::points`) at the same points
/// for every field kind, Cartesian and spherical, s..g, RHF and UHF: 1e-6 relative in the 2-norm
/// (what remains is the f32 rounding of the lattice, ~3e-8).
#[test]
fn lattice_equals_points_for_every_field() {
    let cases: &[(&str, &[&str])] = &[
        (
            "water_hf_631gs_cart.molden",
            &["mo:homo", "mo:1", "mo2:lumo", "density"],
        ),
        ("threonine_hf_631gs_cart.molden", &["mo:homo"]),
        ("n2_hf_ccpvqz_sph.molden", &["mo:homo-1", "density"]),
        ("n2_hf_ccpvqz_cart.molden", &["mo:lumo+3"]),
        (
            "o2_uhf_ccpvtz_sph.molden",
            &["mo:beta:homo", "mo:alpha:lumo", "density", "spin"],
        ),
    ];
    for (molden, specs) in cases {
        let wf = load_wf(molden);
        for lattice in test_lattices(&wf) {
            let pts: Vec<[f64; 3]> = (0..lattice.dims[2])
                .flat_map(|k| (0..lattice.dims[1]).flat_map(move |j| (0..lattice.dims[0]).map(move |i| (i, j, k))))
                .map(|(i, j, k)| lattice.point_bohr(i, j, k))
                .collect();
            for spec in *specs {
                let field = spec.parse::<FieldSpec>().unwrap().resolve(Some(&wf)).unwrap();
                let input = FieldInput::Wavefunction(wf.clone());
                let job = FieldJob {
                    field: field.clone(),
                    lattice,
                    input: input.clone(),
                };
                let grid = evaluate_grid(&job).unwrap();
                let want = PointEvaluator::new(&wf).values(&field, &pts).unwrap();
                let got: Vec<f64> = grid.values.iter().map(|&v| f64::from(v)).collect();
                let e = rel_err(&got, &want, false);
                // The point API (f64 all the way) is closer still.
                let fast = evaluate_points(&field, &input, &pts).unwrap();
                let e_points = rel_err(&fast, &want, false);
                println!("{molden} {spec} (axis-aligned: {})", lattice.is_axis_aligned());
                println!("  lattice vs exact {e:.2e}, points vs exact {e_points:.2e}");
                assert!(e < 1e-6 && e_points < 1e-9, "{molden} {spec}: {e:.2e} {e_points:.2e}");
                // Slab by slab (as the jobs pool calls it) gives bit-identical values.
                let plane = lattice.dims[0] * lattice.dims[1];
                let mut slab = vec![0.0f32; plane * 5];
                CpuEngine.compute_slab(&job, 7..12, &mut slab).unwrap();
                assert_eq!(&slab[..], &grid.values[7 * plane..12 * plane], "{molden} {spec}");
            }
        }
    }
}

#[test]
fn spin_density_of_restricted_is_zero_and_orbitals_are_normalised() {
    let wf = load_wf("water_hf_631gs_sph.molden");
    let h = 0.3;
    let lattice = Lattice::axis_aligned([-8.0, -8.0, -8.0], h, [54, 54, 54]);
    let input = FieldInput::Wavefunction(wf.clone());
    let spin = evaluate_grid(&FieldJob {
        field: Field::SpinDensity,
        lattice,
        input: input.clone(),
    })
    .unwrap();
    assert!(spin.values.iter().all(|&v| v == 0.0));
    // |HOMO|^2 (a smooth valence orbital) sums to 1 on the lattice.
    let field = "mo2:homo".parse::<FieldSpec>().unwrap().resolve(Some(&wf)).unwrap();
    let psi2 = evaluate_grid(&FieldJob { field, lattice, input }).unwrap();
    let n: f64 = psi2.values.iter().map(|&v| f64::from(v)).sum::<f64>() * h * h * h;
    assert!((n - 1.0).abs() < 1e-3, "integrated |HOMO|^2 = {n}");
}

#[test]
fn bad_requests_are_errors_not_panics() {
    let wf = load_wf("water_hf_631gs_sph.molden");
    let lattice = Lattice::axis_aligned([0.0; 3], 0.5, [4, 4, 4]);
    let input = FieldInput::Wavefunction(wf.clone());
    let job = |field| FieldJob {
        field,
        lattice,
        input: input.clone(),
    };
    let mut out = vec![0.0f32; 16];
    assert!(matches!(
        CpuEngine.compute_slab(
            &job(Field::Orbital {
                spin: Spin::Alpha,
                index: 99
            }),
            0..1,
            &mut out
        ),
        Err(ComputeError::NoSuchOrbital { .. })
    ));
    assert!(matches!(
        CpuEngine.compute_slab(&job(Field::Density), 0..2, &mut out),
        Err(ComputeError::BadOutput { .. })
    ));
    assert!(
        CpuEngine
            .compute_slab(&job(Field::Density), 3..5, &mut [0.0; 32])
            .is_err()
    );
    assert!(CpuEngine.compute_slab(&job(Field::Potential), 0..1, &mut out).is_err());
    let charges = FieldInput::Charges(Arc::new(PointCharges::default()));
    assert!(evaluate_points(&Field::Density, &charges, &[[0.0; 3]]).is_err());
}

/// Potential of point charges against the analytic sum in f64.
#[test]
fn potential_matches_direct_f64_sum() {
    let mut q = PointCharges::default();
    // A dipole and a ring of charges, neutral overall (so cancellation matters).
    q.positions_bohr.push([0.0, 0.0, 1.0]);
    q.charges_e.push(0.8);
    q.positions_bohr.push([0.0, 0.0, -1.0]);
    q.charges_e.push(-0.8);
    for i in 0..500 {
        let t = i as f64 * 0.0125 * std::f64::consts::TAU;
        q.positions_bohr
            .push([6.0 * t.cos(), 6.0 * t.sin(), 0.3 * (3.0 * t).sin()]);
        q.charges_e.push(if i % 2 == 0 { 0.4 } else { -0.4 });
    }
    let lattice = Lattice {
        origin_bohr: [-8.0, -8.1, -4.0],
        steps_bohr: [[0.5, 0.0, 0.0], [0.0, 0.5, 0.0], [0.1, 0.0, 0.5]],
        dims: [33, 30, 17],
    };
    let input = FieldInput::Charges(Arc::new(q.clone()));
    let grid = evaluate_grid(&FieldJob {
        field: Field::Potential,
        lattice,
        input: input.clone(),
    })
    .unwrap();
    let mut got = Vec::new();
    let mut want = Vec::new();
    let mut worst_scaled: f64 = 0.0;
    for k in 0..lattice.dims[2] {
        for j in 0..lattice.dims[1] {
            for i in 0..lattice.dims[0] {
                let p = lattice.point_bohr(i, j, k);
                let (mut v, mut scale) = (0.0, 0.0);
                for (r, &c) in q.positions_bohr.iter().zip(&q.charges_e) {
                    let d = ((p[0] - r[0]).powi(2) + (p[1] - r[1]).powi(2) + (p[2] - r[2]).powi(2)).sqrt();
                    v += c / d;
                    scale += (c / d).abs();
                }
                let g = f64::from(grid.get(i, j, k).unwrap());
                worst_scaled = worst_scaled.max((g - v).abs() / scale);
                got.push(g);
                want.push(v);
            }
        }
    }
    let e = rel_err(&got, &want, false);
    println!("potential: relative 2-norm error {e:.2e}, worst error / sum|terms| {worst_scaled:.2e}");
    assert!(e < 1e-5 && worst_scaled < 1e-6, "{e:.2e} {worst_scaled:.2e}");
    // Points API agrees with the lattice.
    let p = lattice.point_bohr(3, 4, 5);
    let v = evaluate_points(&Field::Potential, &input, &[p]).unwrap();
    assert!((v[0] - f64::from(grid.get(3, 4, 5).unwrap())).abs() < 1e-6 * v[0].abs().max(1.0));
}

/// The potential of a real protein's partial charges (AdK from MDAnalysisTests, PQR charges,
/// total -4 e), lattice engine against an f64 sum over the same charges.
#[test]
fn protein_potential_from_pqr_charges() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/md/adk_open.pqr");
    let mut system = orbitfield::io::load(&[path]).unwrap();
    let charges: Vec<f64> = system
        .structure
        .charges_e
        .clone()
        .unwrap()
        .iter()
        .map(|&q| f64::from(q))
        .collect();
    assert!((charges.iter().sum::<f64>() + 4.0).abs() < 1e-3);
    let frame = system.trajectory.frame(0).unwrap();
    let positions_bohr: Vec<[f64; 3]> = frame
        .positions_angstrom
        .iter()
        .map(|p| bohr_from_angstrom3(p.map(f64::from)))
        .collect();
    let q = PointCharges {
        positions_bohr: positions_bohr.clone(),
        charges_e: charges.clone(),
    };
    let lattice = Lattice::axis_aligned([-50.0, -50.0, -40.0], 17.0, [7, 6, 6]);
    let grid = evaluate_grid(&FieldJob {
        field: Field::Potential,
        lattice,
        input: FieldInput::Charges(Arc::new(q)),
    })
    .unwrap();
    for k in 0..6 {
        for j in 0..6 {
            for i in 0..7 {
                let p = lattice.point_bohr(i, j, k);
                let (mut v, mut scale) = (0.0, 0.0);
                for (r, &c) in positions_bohr.iter().zip(&charges) {
                    let d = ((p[0] - r[0]).powi(2) + (p[1] - r[1]).powi(2) + (p[2] - r[2]).powi(2)).sqrt();
                    v += c / d.max(1e-3);
                    scale += (c / d.max(1e-3)).abs();
                }
                let g = f64::from(grid.get(i, j, k).unwrap());
                assert!((g - v).abs() < 1e-6 * scale, "({i},{j},{k}): {g} vs {v}");
            }
        }
    }
}

/// A batch of orbitals of one wavefunction in one call (`compute_slabs`, as the jobs pool hands the
/// HOMO and LUMO of two representations to an engine) equals the exact f64 evaluator for every
/// orbital of the batch, on a slanted and an axis-aligned lattice, for a whole lattice and for a
/// slab; a batch mixing in a density is computed job by job, as correctly.
#[test]
fn orbital_batches_equal_the_exact_evaluator_channel_by_channel() {
    let cases: &[(&str, &[&str])] = &[
        ("threonine_hf_631gs_cart.molden", &["mo:homo", "mo:lumo", "mo2:homo-1"]),
        ("o2_uhf_ccpvtz_sph.molden", &["mo:beta:homo", "mo:alpha:lumo"]),
        ("water_hf_631gs_sph.molden", &["mo:homo", "density", "mo:lumo"]),
    ];
    for (molden, specs) in cases {
        let wf = load_wf(molden);
        let input = FieldInput::Wavefunction(wf.clone());
        for lattice in test_lattices(&wf) {
            let fields: Vec<Field> = specs
                .iter()
                .map(|s| s.parse::<FieldSpec>().unwrap().resolve(Some(&wf)).unwrap())
                .collect();
            let jobs: Vec<FieldJob> = fields
                .iter()
                .map(|f| FieldJob {
                    field: f.clone(),
                    lattice,
                    input: input.clone(),
                })
                .collect();
            let refs: Vec<&FieldJob> = jobs.iter().collect();
            let n = lattice.n_points();
            let mut bufs: Vec<Vec<f32>> = vec![vec![f32::NAN; n]; jobs.len()];
            let mut outs: Vec<&mut [f32]> = bufs.iter_mut().map(|b| &mut b[..]).collect();
            CpuEngine.compute_slabs(&refs, 0..lattice.dims[2], &mut outs).unwrap();
            let pts: Vec<[f64; 3]> = (0..lattice.dims[2])
                .flat_map(|k| (0..lattice.dims[1]).flat_map(move |j| (0..lattice.dims[0]).map(move |i| (i, j, k))))
                .map(|(i, j, k)| lattice.point_bohr(i, j, k))
                .collect();
            let plane = lattice.dims[0] * lattice.dims[1];
            let mut slabs: Vec<Vec<f32>> = vec![vec![f32::NAN; plane * 4]; jobs.len()];
            let mut slab_outs: Vec<&mut [f32]> = slabs.iter_mut().map(|b| &mut b[..]).collect();
            CpuEngine.compute_slabs(&refs, 3..7, &mut slab_outs).unwrap();
            for (c, (field, got)) in fields.iter().zip(&bufs).enumerate() {
                let want = PointEvaluator::new(&wf).values(field, &pts).unwrap();
                let got64: Vec<f64> = got.iter().map(|&v| f64::from(v)).collect();
                let e = rel_err(&got64, &want, false);
                println!("{molden} {} batch channel {c}: {e:.2e}", specs[c]);
                assert!(e < 1e-6, "{molden} {}: {e:.2e}", specs[c]);
                assert_eq!(&slabs[c][..], &got[3 * plane..7 * plane], "{molden} {}", specs[c]);
            }
        }
    }
    // Mismatched outputs are an error, not a panic.
    let wf = load_wf("water_hf_631gs_sph.molden");
    let job = FieldJob {
        field: Field::Orbital {
            spin: Spin::Alpha,
            index: 0,
        },
        lattice: test_lattices(&wf)[1],
        input: FieldInput::Wavefunction(wf),
    };
    let mut short = [0.0f32; 3];
    assert!(
        CpuEngine
            .compute_slabs(&[&job, &job], 0..1, &mut [&mut short[..]])
            .is_err()
    );
    let mut a = [0.0f32; 3];
    let mut b = [0.0f32; 3];
    assert!(matches!(
        CpuEngine.compute_slabs(&[&job, &job], 0..1, &mut [&mut a[..], &mut b[..]]),
        Err(ComputeError::BadOutput { .. })
    ));
}
