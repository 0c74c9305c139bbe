//! Focusing (`compute::pb::focus`, `PbSolver::solve_focused`, CPU engine) against APBS 3.4.1's
//! `mg-auto` and against closed forms (physical constants typed in here, CODATA 2018).
//!
//! - APBS: `tests/data/pb/make_apbs_focus.py` wrote the inputs (`*_focus.in`: mg-auto, 97^3 on every
//!   level, the model of `tests/pb_apbs.rs`: lpbe, srfm smol, chgm spl2, bcfl sdh on the coarse
//!   lattice, eps 2 / 78.54, +1/-1 ions of radius 2 A at 0.15 M, probe 1.4 A, 298.15 K), ran APBS
//!   and kept the finest level's potential at 1,500 lattice points 1.5-6 A outside the van der
//!   Waals surface (`*_focus.samples.txt.gz`): actin (5,877 atoms; 1.25 A to 0.9 A, two levels) and
//!   adenylate kinase (3,341 atoms; a coarse lattice of 300 A centred off the molecule, 3.125 A to
//!   0.75 A, three levels as APBS chooses them). Every point must agree within 0.1 kT/e or 3 % (the
//!   issue's bound), and, the maps being APBS's, within 0.01 kT/e. The test can fail: the same fine
//!   lattice solved with `sdh` face values instead of the coarse solution (actin), and the focusing
//!   faces read from the coarsest solution displaced by one of its spacings (adk), must do ten
//!   times worse at the 95th percentile.
//! - Born ion (+1 in a sphere of 2 A, no salt): focused from a 64 A lattice at 1 A onto a 16 A
//!   lattice at 0.25 A, the potential from 2 spacings outside the sphere on agrees with
//!   `l_B / (eps_out r)` as well as the same fine lattice solved alone (its `sdh` faces being the
//!   closed form), in a uniform dielectric (0.5 %) and with eps_in 2 inside (the staircase of the
//!   dielectric boundary, `docs/pb.md`); with 0.15 M salt, against the Debye-Hueckel closed form.
//! - A charge outside the focused lattice (+1 and -1 12 A apart, uniform dielectric, the fine
//!   lattice around the +1 only): the -1 adds nothing to the fine lattice's charges, its field
//!   arrives through the faces, and the superposed Coulomb potential holds within 0.5 % of the
//!   larger term; without it (the -1 removed) the potential is off by its whole term.
//! - `grid pb --focus` on the command line: one line per level, the fine lattice written, the
//!   potential the library's focused solve gives; a fine lattice outside the coarse one refused
//!   naming the axis.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use orbitfield::compute::cpu::pb::solve_coefficients;
use orbitfield::compute::cpu::pb_maps::coefficients_with_boundary;
use orbitfield::compute::pb::focus::{FocusStep, focus_boundary, focus_levels};
use orbitfield::compute::pb::{PbAtoms, PbEngine, PbLattice, PbParams, PbSolution, PbSolver, PbSurface, solve};
use std::process::Command;

#[path = "common/pqr.rs"]
mod pqr;
use pqr::{gunzip, read_pqr};

struct Samples {
    fine: PbLattice,
    coarse: PbLattice,
    /// How many levels APBS used.
    apbs_levels: usize,
    points: Vec<([usize; 3], f64)>,
}

fn lattice_of(rest: &str) -> PbLattice {
    let f: Vec<&str> = rest.split_whitespace().collect();
    let num = |i: usize| f[i].parse::<f64>().unwrap();
    PbLattice {
        dims: [num(0) as usize, num(1) as usize, num(2) as usize],
        spacing_angstrom: num(4),
        origin_angstrom: [num(6), num(7), num(8)],
    }
}

fn read_samples(name: &str) -> Samples {
    let text = gunzip(name);
    let (mut fine, mut coarse, mut apbs_levels) = (None, None, None);
    let mut points = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# lattice ") {
            fine = Some(lattice_of(rest));
        } else if let Some(rest) = line.strip_prefix("# coarse ") {
            coarse = Some(lattice_of(rest));
        } else if let Some(rest) = line.strip_prefix("# APBS: NOsh:") {
            apbs_levels = rest.split_whitespace().next().and_then(|v| v.parse().ok());
        } else if !line.starts_with('#') {
            let f: Vec<&str> = line.split_whitespace().collect();
            points.push((
                [f[0].parse().unwrap(), f[1].parse().unwrap(), f[2].parse().unwrap()],
                f[3].parse().unwrap(),
            ));
        }
    }
    Samples {
        fine: fine.unwrap(),
        coarse: coarse.unwrap(),
        apbs_levels: apbs_levels.unwrap(),
        points,
    }
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

/// |ours - APBS| sorted, and the points outside 0.1 kT/e or 3 %.
fn differences(sol: &PbSolution, points: &[([usize; 3], f64)]) -> (Vec<f64>, usize) {
    let [nx, ny, _] = sol.lattice.dims;
    let mut abs = Vec::new();
    let mut off = 0;
    for &([i, j, k], want) in points {
        let got = sol.potential_kt_per_e[i + nx * (j + ny * k)];
        let d = (got - want).abs();
        if d > 0.1f64.max(0.03 * want.abs()) {
            off += 1;
        }
        abs.push(d);
    }
    abs.sort_by(f64::total_cmp);
    (abs, off)
}

fn describe(what: &str, abs: &[f64], off: usize) -> String {
    format!(
        "{what}: |ours - APBS| median {:.1e}, 95th percentile {:.1e}, max {:.1e} kT/e; {off} of {} points outside 0.1 kT/e or 3 %",
        quantile(abs, 0.5),
        quantile(abs, 0.95),
        quantile(abs, 1.0),
        abs.len()
    )
}

fn focused(atoms: &PbAtoms, levels: &[PbLattice], params: &PbParams) -> PbSolution {
    let mut solver = PbSolver::new(PbEngine::Cpu).unwrap();
    let mut progress = |s: &FocusStep| {
        eprintln!(
            "  level {}/{}: {:?} points at {:.4} A from {:.3?} A, {} iterations",
            s.level + 1,
            s.levels,
            s.lattice.dims,
            s.lattice.spacing_angstrom,
            s.lattice.origin_angstrom,
            s.iterations
        );
    };
    solver.solve_focused(atoms, levels, params, &mut progress).unwrap()
}

fn compare(name: &str, pqr: &str, n_atoms: usize, wrong_faces: WrongFaces) {
    let atoms = read_pqr(pqr);
    assert_eq!(atoms.positions_angstrom.len(), n_atoms);
    let s = read_samples(&format!("{name}_focus.samples.txt.gz"));
    assert!(s.points.len() >= 1000);
    let params = PbParams::default();
    let levels = focus_levels(&s.coarse, &s.fine).unwrap();
    assert_eq!(
        levels.len(),
        s.apbs_levels,
        "{name}: APBS focused in {} levels",
        s.apbs_levels
    );
    eprintln!("{name}: {n_atoms} atoms, {} levels", levels.len());
    let sol = focused(&atoms, &levels, &params);
    let (abs, off) = differences(&sol, &s.points);
    let span = s.points.iter().map(|p| p.1.abs()).fold(0.0, f64::max);
    eprintln!(
        "{}",
        describe(&format!("{name} focused (|u| up to {span:.2} kT/e)"), &abs, off)
    );

    assert_eq!(off, 0, "{name}: {off} points outside the bound");
    assert!(
        quantile(&abs, 1.0) < 0.01,
        "{name}: largest difference {}",
        quantile(&abs, 1.0)
    );

    let (what, worse) = match wrong_faces {
        // The same fine lattice with sdh face values instead of the focusing ones.
        WrongFaces::SdhOnTheFineLattice => (
            "fine lattice alone, sdh faces",
            solve(&atoms, &s.fine, &params, None).unwrap(),
        ),
        // Focusing faces read from the coarsest level as if it lay one of its spacings further
        // along x.
        WrongFaces::Misread => {
            let mut wrong = solve(&atoms, &levels[0], &params, None).unwrap();
            wrong.lattice.origin_angstrom[0] += wrong.lattice.spacing_angstrom;
            let faces = focus_boundary(&wrong, &s.fine).unwrap();
            let c = coefficients_with_boundary(&atoms, &s.fine, &params, faces).unwrap();
            (
                "faces misread by one coarsest-level spacing",
                solve_coefficients(&c, &s.fine, &params, None).unwrap(),
            )
        }
    };
    let (abs_bad, off_bad) = differences(&worse, &s.points);
    eprintln!("{}", describe(&format!("{name} {what}"), &abs_bad, off_bad));
    assert!(
        quantile(&abs_bad, 0.95) > 10.0 * quantile(&abs, 0.95),
        "{name}: {what}: as close to APBS's mg-auto as focusing"
    );
}

/// A wrong boundary for the fine lattice, which the comparison must tell apart.
enum WrongFaces {
    SdhOnTheFineLattice,
    Misread,
}

#[test]
fn actin_focused_matches_apbs_mg_auto() {
    compare("actin", "actin_mol1.pqr.gz", 5877, WrongFaces::SdhOnTheFineLattice);
}

#[test]
fn adk_focused_in_three_levels_matches_apbs_mg_auto() {
    compare("adk_open", "adk_open.pqr.gz", 3341, WrongFaces::Misread);
}

/// l_B = e^2 / (4 pi eps0 k T) in Angstrom.
fn bjerrum(t: f64) -> f64 {
    let e = 1.602_176_634e-19;
    let eps0 = 8.854_187_812_8e-12;
    let kb = 1.380_649e-23;
    e * e / (4.0 * std::f64::consts::PI * eps0 * kb * t) * 1e10
}

/// kappa in 1/Angstrom.
fn kappa(eps: f64, ionic: f64, t: f64) -> f64 {
    let e = 1.602_176_634e-19;
    let na = 6.022_140_76e23;
    let eps0 = 8.854_187_812_8e-12;
    let kb = 1.380_649e-23;
    (2.0 * ionic * 1000.0 * na * e * e / (eps0 * eps * kb * t)).sqrt() * 1e-10
}

const ION_AT: [f64; 3] = [0.13, -0.07, 0.05];

fn dist(a: [f64; 3], b: [f64; 3]) -> f64 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
}

/// The largest relative error against `exact` at interior points of `sol` at least `min_gap`
/// outside a sphere of radius `radius` at `ION_AT`.
fn worst(sol: &PbSolution, radius: f64, min_gap: f64, exact: &dyn Fn([f64; 3]) -> f64) -> f64 {
    let l = sol.lattice;
    let [nx, ny, nz] = l.dims;
    let mut w = 0.0f64;
    for k in 1..nz - 1 {
        for j in 1..ny - 1 {
            for i in 1..nx - 1 {
                let p = l.point(i, j, k);
                if dist(p, ION_AT) < radius + min_gap {
                    continue;
                }
                let want = exact(p);
                w = w.max((sol.potential_kt_per_e[i + nx * (j + ny * k)] - want).abs() / want.abs());
            }
        }
    }
    w
}

/// Born ion focused from 1 A onto 0.25 A, against the closed form and against the fine lattice
/// solved alone; returns (focused, alone) worst relative errors from 2 spacings outside.
fn born(eps_in: f64, ionic: f64, surface: PbSurface) -> (f64, f64) {
    let radius = 2.0;
    let t = 298.15;
    let eps_out = 78.54;
    let params = PbParams {
        eps_in,
        eps_out,
        ionic_strength_molar: ionic,
        surface,
        temperature_kelvin: t,
        ..PbParams::default()
    };
    let atoms = PbAtoms {
        positions_angstrom: vec![ION_AT],
        charges_e: vec![1.0],
        radii_angstrom: vec![radius],
    };
    let coarse = PbLattice::centered([0.0; 3], 1.0, [65; 3]);
    // The fine lattice off the coarse one's points, so its faces are interpolated.
    let fine = PbLattice::centered([0.31, -0.22, 0.17], 0.25, [65; 3]);
    let levels = focus_levels(&coarse, &fine).unwrap();
    assert_eq!(levels.len(), 2);
    let lb = bjerrum(t);
    let kap = kappa(eps_out, ionic, t);
    let a = radius + params.ion_radius_angstrom;
    let exact = move |p: [f64; 3]| {
        let r = dist(p, ION_AT);
        if ionic == 0.0 {
            lb / (eps_out * r)
        } else if r <= a {
            lb * (1.0 / r - kap / (1.0 + kap * a)) / eps_out
        } else {
            lb * (-kap * (r - a)).exp() / (eps_out * (1.0 + kap * a) * r)
        }
    };
    let sol = focused(&atoms, &levels, &params);
    let alone = solve(&atoms, &fine, &params, None).unwrap();
    let gap = 2.0 * fine.spacing_angstrom;
    let (f, s) = (worst(&sol, radius, gap, &exact), worst(&alone, radius, gap, &exact));
    eprintln!(
        "Born ion, eps_in {eps_in}, {ionic} M, {surface:?}: worst relative error from 2 spacings outside: focused {:.3} %, fine lattice alone {:.3} %",
        100.0 * f,
        100.0 * s
    );
    (f, s)
}

#[test]
fn born_ion_focused_matches_the_closed_form_as_the_fine_lattice_alone() {
    // Uniform dielectric: the finite differences and the charge spreading alone.
    let (f, s) = born(78.54, 0.0, PbSurface::Smol);
    // (Trilinear interpolation of 1/r on the 1 A lattice 8 A from the ion: h^2 / (4 r^2) = 0.4 %.)
    assert!(f < 0.006 && f < s + 0.004, "uniform: focused {f}, alone {s}");
    // eps_in 2 inside: the staircase of the dielectric boundary dominates, on both lattices.
    let (f, s) = born(2.0, 0.0, PbSurface::Smol);
    assert!(f < 0.03 && f < s + 0.004, "eps_in 2: focused {f}, alone {s}");
    // With salt the sdh faces of the fine lattice alone sit 8 A from the ion, where APBS's sphere
    // (the ion radius left out) is a few percent off the closed form; focusing carries the coarse
    // solution there instead.
    let (f, s) = born(2.0, 0.15, PbSurface::Smol);
    assert!(f < 0.035 && f < s + 0.004, "eps_in 2, 0.15 M: focused {f}, alone {s}");
}

#[test]
fn a_charge_outside_the_focused_lattice_enters_through_its_faces() {
    let t = 298.15;
    let eps = 78.54;
    let params = PbParams {
        eps_in: eps,
        eps_out: eps,
        ionic_strength_molar: 0.0,
        temperature_kelvin: t,
        ..PbParams::default()
    };
    let far = [12.0 + ION_AT[0], ION_AT[1], ION_AT[2]];
    let atoms = PbAtoms {
        positions_angstrom: vec![ION_AT, far],
        charges_e: vec![1.0, -1.0],
        radii_angstrom: vec![2.0, 2.0],
    };
    let coarse = PbLattice::centered([6.0, 0.0, 0.0], 1.0, [65; 3]);
    let fine = PbLattice::centered([0.0; 3], 0.25, [49; 3]);
    // The -1 is outside the fine lattice (it ends at x = 6 A).
    assert!(far[0] > fine.origin_angstrom[0] + 48.0 * 0.25);
    let levels = focus_levels(&coarse, &fine).unwrap();
    let sol = focused(&atoms, &levels, &params);
    let lb = bjerrum(t);
    let [n, _, _] = fine.dims;
    let (mut worst_pair, mut worst_alone) = (0.0f64, f64::INFINITY);
    for k in 1..n - 1 {
        for j in 1..n - 1 {
            for i in 1..n - 1 {
                let p = fine.point(i, j, k);
                let (r1, r2) = (dist(p, ION_AT), dist(p, far));
                if r1 < 2.0 + 2.0 * fine.spacing_angstrom {
                    continue;
                }
                let (t1, t2) = (lb / (eps * r1), -lb / (eps * r2));
                let got = sol.potential_kt_per_e[i + n * (j + n * k)];
                worst_pair = worst_pair.max((got - (t1 + t2)).abs() / t1.abs().max(t2.abs()));
                worst_alone = worst_alone.min((got - t1).abs() / t1.abs().max(t2.abs()));
            }
        }
    }
    eprintln!(
        "+1 inside, -1 outside the fine lattice: worst relative error of the pair {:.3} %; the +1 alone is off by at least {:.1} %",
        100.0 * worst_pair,
        100.0 * worst_alone
    );
    assert!(worst_pair < 0.005, "{worst_pair}");
    assert!(worst_alone > 0.1, "{worst_alone}");
}

const IONS_PQR: &str = "\
ATOM      1  K    K      1       0.000   0.000   0.000  1.0000 2.0000
ATOM      2 CL   CL      2       8.000   0.000   0.000 -1.0000 2.0000
END
";

fn grid_pb(dir: &std::path::Path, extra: &[&str]) -> std::process::Output {
    let pqr = dir.join("ions.pqr");
    std::fs::write(&pqr, IONS_PQR).unwrap();
    Command::new(env!("CARGO_BIN_EXE_orbitfield"))
        .args(["grid", "pb"])
        .arg(&pqr)
        .args(["--device", "cpu", "--focus"])
        .args(extra)
        .arg("-o")
        .arg(dir.join("f.dx"))
        .output()
        .unwrap()
}

#[test]
fn grid_pb_focus_reports_each_level_and_writes_the_fine_lattice() {
    let dir = tempfile::tempdir().unwrap();
    // The fine lattice around the cation only (20 A at 0.5 A); the coarse one 2 A apart.
    let out = grid_pb(
        dir.path(),
        &["--spacing", "0.5", "--fine-around", "resid 1", "--coarse-spacing", "2"],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("focusing level 1/2") && err.contains("sdh faces"), "{err}");
    assert!(
        err.contains("focusing level 2/2") && err.contains("faces from the level before"),
        "{err}"
    );
    let dx = std::fs::read_to_string(dir.path().join("f.dx")).unwrap();
    assert!(dx.contains("counts 41 41 41"), "{}", &dx[..400.min(dx.len())]);
    let origin: Vec<f64> = dx
        .lines()
        .find_map(|l| l.strip_prefix("origin "))
        .unwrap()
        .split_whitespace()
        .map(|v| v.parse().unwrap())
        .collect();
    for (o, want) in origin.iter().zip([-10.0, -10.0, -10.0]) {
        assert!((o - want).abs() < 1e-4, "{origin:?}");
    }
    // The same chain in the library gives the values written (single precision in the file).
    let atoms = PbAtoms {
        positions_angstrom: vec![[0.0; 3], [8.0, 0.0, 0.0]],
        charges_e: vec![1.0, -1.0],
        radii_angstrom: vec![2.0, 2.0],
    };
    let spec = orbitfield::compute::pb::focus::FocusSpec {
        fine_spacing_angstrom: 0.5,
        padding_angstrom: 10.0,
        coarse_spacing_angstrom: Some(2.0),
        ..Default::default()
    };
    let levels = orbitfield::compute::pb::focus::focus_lattices(&atoms.positions_angstrom, &[[0.0; 3]], &spec).unwrap();
    let sol = focused(&atoms, &levels, &PbParams::default());
    let body: Vec<f64> = dx
        .lines()
        .skip_while(|l| !l.starts_with("object 3"))
        .skip(1)
        .take_while(|l| !l.starts_with("attribute") && !l.starts_with("object"))
        .flat_map(|l| {
            l.split_whitespace()
                .map(|v| v.parse::<f64>().unwrap())
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(body.len(), 41 * 41 * 41);
    // DX: z fastest; ours: x fastest.
    let mut worst = 0.0f64;
    for i in 0..41 {
        for j in 0..41 {
            for k in 0..41 {
                let want = sol.potential_kt_per_e[i + 41 * (j + 41 * k)];
                let got = body[k + 41 * (j + 41 * i)];
                worst = worst.max((got - want).abs() / want.abs().max(1.0));
            }
        }
    }
    assert!(worst < 1e-5, "{worst}");
}

#[test]
fn grid_pb_focus_refuses_a_fine_lattice_outside_the_coarse_one() {
    let dir = tempfile::tempdir().unwrap();
    let out = grid_pb(
        dir.path(),
        &[
            "--spacing",
            "0.5",
            "--fine-center",
            "0,0,0",
            "--fine-length",
            "20",
            "--coarse-length",
            "30",
            "--coarse-center",
            "4,9,0",
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("not inside the coarse one: along y"), "{err}");
    assert!(!dir.path().join("f.dx").exists());
}
