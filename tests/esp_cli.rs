//! Electrostatics from the command line, through the library functions the CLI is built on:
//! potential units, trajectory combination of potential maps (streamed, one accumulator), the
//! method and boundary plumbing, the refusals of bad input, ion placement and Mulliken charges.
//!
//! References are independent: f64 Coulomb sums and naive two-pass statistics written here, analytic
//! ion positions, and PySCF's Mulliken populations (`tests/data/qm/make_mulliken_reference.py`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use orbitfield::analysis::charges::{mulliken_charges_e, nuclear_charges_e};
use orbitfield::analysis::esp_series::{
    Combine, MAP_BYTES_PER_POINT, MapAccumulator, MemoryLimit, SeriesError, SeriesSettings, check_memory,
    combine_frames, frame_boundary, frame_charges, frame_job, method_from_options, require_charges,
};
use orbitfield::analysis::ions::{IonError, IonParams, pdb_text, place_ions};
use orbitfield::compute::esp::{Boundary, EspMethod, MsmParams};
use orbitfield::compute::{FieldInput, FieldJob, cpu};
use orbitfield::io;
use orbitfield::model::units::{
    PotentialUnit, VOLT_PER_HARTREE_PER_E, VOLT_PER_KCAL_PER_MOL_PER_E, angstrom_from_bohr3, bohr_from_angstrom,
    bohr_from_angstrom3, volt_per_kt_per_e,
};
use orbitfield::model::{Element, Frame, Grid3, Lattice, UnitCell};
use std::path::PathBuf;

fn md(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/md")
        .join(name)
}

fn qm(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/qm")
        .join(name)
}

fn unlimited() -> MemoryLimit {
    MemoryLimit::gib(4.0).unwrap()
}

/// Independent f64 Coulomb sum (hartree/e) at lattice point (i, j, k): charges in e, positions in
/// Angstrom as the trajectory stores them.
fn coulomb_f64(lattice: &Lattice, positions_angstrom: &[[f32; 3]], charges_e: &[f64]) -> Vec<f64> {
    let [nx, ny, nz] = lattice.dims;
    let mut out = vec![0.0; nx * ny * nz];
    let atoms: Vec<[f64; 3]> = positions_angstrom
        .iter()
        .map(|a| bohr_from_angstrom3(a.map(f64::from)))
        .collect();
    for k in 0..nz {
        for j in 0..ny {
            for i in 0..nx {
                let p = lattice.point_bohr(i, j, k);
                let mut v = 0.0;
                for (b, &q) in atoms.iter().zip(charges_e) {
                    let (dx, dy, dz) = (p[0] - b[0], p[1] - b[1], p[2] - b[2]);
                    v += q / (dx * dx + dy * dy + dz * dz).sqrt();
                }
                out[i + nx * (j + ny * k)] = v;
            }
        }
    }
    out
}

/// A coarse 4 A lattice (3^3 points) around the centre of ADK's first frame.
fn adk_lattice(frame: &Frame) -> Lattice {
    let n = frame.positions_angstrom.len() as f64;
    let mut c = [0.0f64; 3];
    for p in &frame.positions_angstrom {
        for k in 0..3 {
            c[k] += f64::from(p[k]) / n;
        }
    }
    let origin = [c[0] - 4.0, c[1] - 4.0, c[2] - 4.0];
    Lattice::axis_aligned(bohr_from_angstrom3(origin), bohr_from_angstrom(4.0), [3, 3, 3])
}

fn settings(combine: Combine) -> SeriesSettings {
    SeriesSettings {
        method: EspMethod::Direct,
        periodic: false,
        combine,
        memory: unlimited(),
    }
}

#[test]
fn potential_units_from_codata() {
    assert!((VOLT_PER_HARTREE_PER_E - 27.211_386).abs() < 1e-6);
    assert!((volt_per_kt_per_e(300.0) - 0.025_852).abs() < 5e-7);
    assert!((VOLT_PER_KCAL_PER_MOL_PER_E - 0.043_364_1).abs() < 1e-7);
    // 1 hartree/e = 627.5095 kcal/mol/e (the usual hartree in kcal/mol).
    let kcal = PotentialUnit::KcalPerMolPerE.per_hartree_per_e();
    assert!((kcal - 627.5095).abs() < 1e-3, "{kcal}");
    assert_eq!(PotentialUnit::default().label(), "kT/e at 300 K");
    assert_eq!(
        PotentialUnit::parse("kcal/mol/e", 300.0).unwrap(),
        PotentialUnit::KcalPerMolPerE
    );
    assert!(PotentialUnit::parse("furlongs", 300.0).is_err());
}

#[test]
fn trajectory_average_of_98_frames_equals_the_mean_of_single_frame_maps() {
    let mut system = io::load(&[md("adk.psf"), md("adk_dims.dcd")]).unwrap();
    let charges = require_charges(&system).unwrap();
    let n_frames = system.trajectory.n_frames();
    assert_eq!(n_frames, 98);
    let first = system.trajectory.frame(0).unwrap();
    let lattice = adk_lattice(&first);
    let frames: Vec<usize> = (0..n_frames).collect();
    let mut seen = Vec::new();
    let acc = combine_frames(
        &mut system.trajectory,
        &frames,
        &charges,
        lattice,
        &settings(Combine::Avg),
        &mut |job| cpu::evaluate_grid(&job).map_err(|e| e.to_string()),
        &mut |f| seen.push(f),
    )
    .unwrap();
    assert_eq!(seen, frames);
    assert_eq!(acc.count(), 98);
    let avg = acc.finish(1.0, "avg").unwrap();

    // The same frames, each map computed on its own; and an independent f64 sum per frame.
    let n = lattice.n_points();
    let mut mean_engine = vec![0.0f64; n];
    let mut mean_f64 = vec![0.0f64; n];
    for &f in &frames {
        let frame = system.trajectory.frame(f).unwrap();
        let pc = frame_charges(f, &frame, &charges, None).unwrap();
        let job = FieldJob {
            field: orbitfield::compute::Field::Potential,
            lattice,
            input: FieldInput::Charges(std::sync::Arc::new(pc)),
        };
        let map = cpu::evaluate_grid(&job).unwrap();
        for (m, &v) in mean_engine.iter_mut().zip(&map.values) {
            *m += f64::from(v) / 98.0;
        }
        for (m, v) in mean_f64
            .iter_mut()
            .zip(coulomb_f64(&lattice, &frame.positions_angstrom, &charges))
        {
            *m += v / 98.0;
        }
    }
    let scale = mean_f64.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    assert!(scale > 1e-3, "a potential map of ADK should not vanish ({scale})");
    for p in 0..n {
        let got = f64::from(avg.values[p]);
        // To float precision against the mean of the engine's own single-frame maps ...
        assert!(
            (got - mean_engine[p]).abs() <= 1e-6 * mean_engine[p].abs().max(1e-3),
            "point {p}: streamed {got} vs mean of maps {}",
            mean_engine[p]
        );
        // ... and to the engine's f32 accuracy against independent f64 Coulomb sums.
        assert!(
            (got - mean_f64[p]).abs() <= 1e-5 * scale,
            "point {p}: streamed {got} vs f64 {}",
            mean_f64[p]
        );
    }
}

#[test]
fn min_max_stdev_over_a_few_frames_match_a_two_pass_computation() {
    let mut system = io::load(&[md("adk.psf"), md("adk_dims.dcd")]).unwrap();
    let charges = require_charges(&system).unwrap();
    let first = system.trajectory.frame(0).unwrap();
    let lattice = adk_lattice(&first);
    let frames = [3usize, 20, 41, 77, 97];
    let maps: Vec<Vec<f64>> = frames
        .iter()
        .map(|&f| {
            let fr = system.trajectory.frame(f).unwrap();
            coulomb_f64(&lattice, &fr.positions_angstrom, &charges)
        })
        .collect();
    let n = lattice.n_points();
    let k = frames.len() as f64;
    let mean: Vec<f64> = (0..n).map(|p| maps.iter().map(|m| m[p]).sum::<f64>() / k).collect();
    let stdev: Vec<f64> = (0..n)
        .map(|p| (maps.iter().map(|m| (m[p] - mean[p]).powi(2)).sum::<f64>() / k).sqrt())
        .collect();
    let min: Vec<f64> = (0..n)
        .map(|p| maps.iter().map(|m| m[p]).fold(f64::INFINITY, f64::min))
        .collect();
    let max: Vec<f64> = (0..n)
        .map(|p| maps.iter().map(|m| m[p]).fold(f64::NEG_INFINITY, f64::max))
        .collect();
    let scale = mean.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    let unit = PotentialUnit::Volt;
    for (combine, want) in [
        (Combine::Min, &min),
        (Combine::Max, &max),
        (Combine::Stdev, &stdev),
        (Combine::Avg, &mean),
    ] {
        let acc = combine_frames(
            &mut system.trajectory,
            &frames,
            &charges,
            lattice,
            &settings(combine),
            &mut |job| cpu::evaluate_grid(&job).map_err(|e| e.to_string()),
            &mut |_| {},
        )
        .unwrap();
        let grid = acc.finish(unit.per_hartree_per_e(), "").unwrap();
        assert_eq!(grid.values.len(), n);
        for (p, (&got, &w)) in grid.values.iter().zip(want.iter()).enumerate() {
            let got_volt = f64::from(got);
            let want_volt = w * VOLT_PER_HARTREE_PER_E;
            assert!(
                (got_volt - want_volt).abs() <= 2e-5 * scale * VOLT_PER_HARTREE_PER_E,
                "{combine} point {p}: {got_volt} V vs two-pass {want_volt} V"
            );
        }
    }
    // The spread is real: some point's stdev is well above the engine's f32 noise.
    assert!(stdev.iter().cloned().fold(0.0, f64::max) > 1e-3 * scale);
}

#[test]
fn method_plumbing_goes_through_field_input() {
    assert_eq!(method_from_options("dcs", None, None).unwrap(), EspMethod::Direct);
    assert_eq!(
        method_from_options("cutoff", Some(9.0), None).unwrap(),
        EspMethod::Cutoff { cutoff_angstrom: 9.0 }
    );
    assert_eq!(
        method_from_options("msm", None, Some(1.5)).unwrap(),
        EspMethod::Msm(MsmParams {
            cutoff_angstrom: 12.0,
            spacing_angstrom: 1.5
        })
    );
    assert!(
        method_from_options("dcs", Some(9.0), None)
            .unwrap_err()
            .contains("--cutoff")
    );
    assert!(method_from_options("cutoff", None, Some(1.0)).is_err());
    assert!(
        method_from_options("msm", Some(-1.0), None)
            .unwrap_err()
            .contains("positive")
    );
    assert!(
        method_from_options("pme", None, None)
            .unwrap_err()
            .contains("unknown method")
    );

    // The direct method with an open boundary yields the engines' point-charge input.
    let pc = orbitfield::compute::PointCharges {
        positions_bohr: vec![[0.0; 3]],
        charges_e: vec![1.0],
    };
    let lattice = Lattice::axis_aligned([1.0, 0.0, 0.0], 1.0, [2, 1, 1]);
    let job = frame_job(pc, EspMethod::Direct, Boundary::Open, lattice, 0).unwrap();
    let grid = cpu::evaluate_grid(&job).unwrap();
    assert!((grid.values[0] - 1.0).abs() < 1e-6 && (grid.values[1] - 0.5).abs() < 1e-6);
}

#[test]
fn bad_inputs_are_refused_with_clear_messages() {
    // A structure without partial charges (no residues for the standard charges either).
    let system = io::load(&[md("2r9r-1b.xyz")]).unwrap();
    assert_eq!(
        require_charges(&system).unwrap_err().to_string(),
        "2r9r-1b.xyz has no partial charges; give a file that carries them first (PSF, prmtop, TPR, PQR, mol2), then the coordinates"
    );

    // --pbc with no box, and with a zero-volume box.
    let mut frame = Frame {
        positions_angstrom: vec![[0.0; 3], [1.0, 0.0, 0.0]],
        ..Frame::default()
    };
    let e = frame_boundary(4, &frame, true, "adk_dims.dcd").unwrap_err().to_string();
    assert!(e.contains("frame 4 of adk_dims.dcd has no unit cell"), "{e}");
    assert_eq!(frame_boundary(4, &frame, false, "x").unwrap(), Boundary::Open);
    frame.cell = Some(UnitCell::orthorhombic([0.0, 0.0, 0.0]));
    let e = frame_boundary(5, &frame, true, "box.dcd").unwrap_err().to_string();
    assert!(e.contains("frame 5 of box.dcd has a zero-volume"), "{e}");
    frame.cell = Some(UnitCell::new([10.0, 10.0, 10.0], [90.0, 90.0, 180.0]));
    assert!(frame_boundary(5, &frame, true, "box.dcd").is_err());

    // A real periodic trajectory gives each frame's own cell.
    let mut tip = io::load(&[md("tip125_tric_C36.psf"), md("tip125_tric_C36.dcd")]).unwrap();
    let f3 = tip.trajectory.frame(3).unwrap();
    match frame_boundary(3, &f3, true, "tip125").unwrap() {
        Boundary::Periodic(cell) => assert_eq!(Some(cell), f3.cell),
        other => panic!("expected a periodic boundary, got {other:?}"),
    }
    // ... and ADK's DCD has no box, so --pbc stops at its first frame, before any map is computed.
    let mut adk = io::load(&[md("adk.psf"), md("adk_dims.dcd")]).unwrap();
    let charges = require_charges(&adk).unwrap();
    let mut pbc = settings(Combine::Avg);
    pbc.periodic = true;
    let lattice = Lattice::axis_aligned([0.0; 3], 4.0, [2, 2, 2]);
    let mut computed = 0;
    let e = combine_frames(
        &mut adk.trajectory,
        &[2, 3],
        &charges,
        lattice,
        &pbc,
        &mut |job| {
            computed += 1;
            cpu::evaluate_grid(&job).map_err(|e| e.to_string())
        },
        &mut |_| {},
    )
    .unwrap_err();
    assert!(matches!(e, SeriesError::NoCell { frame: 2, .. }), "{e}");
    assert_eq!(computed, 0);

    // NaN coordinates: the frame and the atom are named.
    frame.positions_angstrom[1] = [1.0, f32::NAN, 0.0];
    let name = |i: usize| format!("OW WAT{}", i + 1);
    let e = frame_charges(7, &frame, &[0.5, -0.5], Some(&name))
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("frame 7: atom 2 (index 1, OW WAT2) has a non-finite coordinate"),
        "{e}"
    );
    assert!(frame_charges(7, &frame, &[0.5], None).is_err());

    // A lattice too large for memory is refused before allocating, naming points and GiB.
    let limit = MemoryLimit::gib(2.0).unwrap();
    let e = check_memory([1000, 1000, 1000], MAP_BYTES_PER_POINT, &limit)
        .unwrap_err()
        .to_string();
    assert!(e.contains("1000x1000x1000 = 1000000000 points"), "{e}");
    assert!(e.contains("18.6 GiB"), "{e}");
    assert!(e.contains("2.0 GiB allowed (--max-memory-gib 2)"), "{e}");
    let huge = Lattice::axis_aligned([0.0; 3], 1.0, [1 << 20, 1 << 20, 1 << 20]);
    assert!(matches!(
        MapAccumulator::new(huge, Combine::Stdev, &MemoryLimit::half_of_physical()),
        Err(SeriesError::TooLarge { .. })
    ));
    assert!(MemoryLimit::gib(0.0).is_none() && MemoryLimit::gib(f64::NAN).is_none());
}

/// A map of a point charge `q` (e) at `center` on a cube lattice from -6 to 6 A, 0.5 A apart.
fn point_charge_map(q: f64, center_angstrom: [f64; 3]) -> Grid3 {
    let lattice = Lattice::axis_aligned(bohr_from_angstrom3([-6.0; 3]), bohr_from_angstrom(0.5), [25, 25, 25]);
    let c = bohr_from_angstrom3(center_angstrom);
    let mut values = Vec::with_capacity(lattice.n_points());
    for k in 0..25 {
        for j in 0..25 {
            for i in 0..25 {
                let p = lattice.point_bohr(i, j, k);
                let r = ((p[0] - c[0]).powi(2) + (p[1] - c[1]).powi(2) + (p[2] - c[2]).powi(2)).sqrt();
                values.push((q / r.max(1e-3)) as f32);
            }
        }
    }
    Grid3 {
        lattice,
        values,
        description: String::new(),
    }
}

/// The anion at the origin, a ring of 8 atoms of radius 2.5 A in the xy plane, one atom at +3 A on z.
fn ring_atoms_bohr() -> Vec<[f64; 3]> {
    let mut atoms = vec![[0.0; 3], [0.0, 0.0, 3.0]];
    for k in 0..8 {
        let t = f64::from(k) * std::f64::consts::FRAC_PI_4;
        atoms.push([2.5 * t.cos(), 2.5 * t.sin(), 0.0]);
    }
    atoms.iter().map(|&a| bohr_from_angstrom3(a)).collect()
}

/// Brute-force placement (every point against every atom and ion), the reference for `place_ions`.
fn brute_force_ions(map: &Grid3, atoms_bohr: &[[f64; 3]], p: &IonParams) -> Vec<[f64; 3]> {
    let l = &map.lattice;
    let [nx, ny, nz] = l.dims;
    let pts: Vec<[f64; 3]> = (0..nz)
        .flat_map(|k| (0..ny).flat_map(move |j| (0..nx).map(move |i| (i, j, k))))
        .map(|(i, j, k)| l.point_bohr(i, j, k))
        .collect();
    let d = |a: [f64; 3], b: [f64; 3]| ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt();
    let da = bohr_from_angstrom(p.min_distance_atoms_angstrom);
    let di = bohr_from_angstrom(p.min_distance_ions_angstrom);
    let mut v: Vec<f64> = map.values.iter().map(|&x| f64::from(x)).collect();
    let mut ions: Vec<[f64; 3]> = Vec::new();
    for _ in 0..p.count {
        let mut best: Option<(usize, f64)> = None;
        for (idx, &x) in pts.iter().enumerate() {
            if atoms_bohr.iter().any(|&a| d(a, x) < da) || ions.iter().any(|&b| d(b, x) < di || d(b, x) == 0.0) {
                continue;
            }
            let e = p.charge_e * v[idx];
            if best.is_none_or(|(_, b)| e < b) {
                best = Some((idx, e));
            }
        }
        let (idx, _) = best.expect("room for every ion");
        let ion = pts[idx];
        ions.push(ion);
        for (x, vx) in pts.iter().zip(v.iter_mut()) {
            *vx += p.charge_e / d(*x, ion).max(1e-3);
        }
    }
    ions
}

fn close(a: [f64; 3], b: [f64; 3]) -> bool {
    (0..3).all(|k| (a[k] - b[k]).abs() < 1e-9)
}

#[test]
fn a_cation_lands_where_the_potential_says() {
    let map = point_charge_map(-1.0, [0.0; 3]);
    let atoms = ring_atoms_bohr();
    let params = IonParams {
        count: 1,
        charge_e: 1.0,
        min_distance_atoms_angstrom: 1.99,
        min_distance_ions_angstrom: 5.0,
    };
    let placed = place_ions(&map, &atoms, &params).unwrap();
    // The closest point to the anion that keeps 1.99 A from the anion and the ring, the +z side
    // being blocked: (0, 0, -2) A, where q V = -1 / (2 A).
    let got = angstrom_from_bohr3(placed.positions_bohr[0]);
    assert!(
        (got[0]).abs() < 1e-9 && got[1].abs() < 1e-9 && (got[2] + 2.0).abs() < 1e-9,
        "{got:?}"
    );
    let want_energy = -1.0 / bohr_from_angstrom(2.0);
    assert!((placed.energies_hartree[0] - want_energy).abs() < 1e-6);
    // An anion would go as far from the charge as the lattice allows: a corner.
    let anion = place_ions(
        &map,
        &atoms,
        &IonParams {
            charge_e: -1.0,
            ..params
        },
    )
    .unwrap();
    let a = angstrom_from_bohr3(anion.positions_bohr[0]);
    assert!(a.iter().all(|x| (x.abs() - 6.0).abs() < 1e-9), "{a:?}");
}

#[test]
fn the_second_ion_feels_the_first_and_keeps_its_distance() {
    let map = point_charge_map(-2.0, [0.0; 3]);
    let atoms = ring_atoms_bohr();
    let params = IonParams {
        count: 2,
        charge_e: 1.0,
        min_distance_atoms_angstrom: 1.99,
        min_distance_ions_angstrom: 1.1,
    };
    let placed = place_ions(&map, &atoms, &params).unwrap();
    let want = brute_force_ions(&map, &atoms, &params);
    assert_eq!(placed.positions_bohr.len(), 2);
    for (g, w) in placed.positions_bohr.iter().zip(&want) {
        assert!(close(*g, *w), "{g:?} vs brute force {w:?}");
    }
    // Without the first ion's repulsion the second would sit elsewhere (next to the first).
    let first = placed.positions_bohr[0];
    let l = map.lattice;
    let naive = {
        let [nx, ny, _] = l.dims;
        let mut best: Option<(usize, f64)> = None;
        let d =
            |a: [f64; 3], b: [f64; 3]| ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt();
        for (idx, &v) in map.values.iter().enumerate() {
            let x = l.point_bohr(idx % nx, (idx / nx) % ny, idx / (nx * ny));
            if atoms.iter().any(|&a| d(a, x) < bohr_from_angstrom(1.99)) || d(x, first) < bohr_from_angstrom(1.1) {
                continue;
            }
            if best.is_none_or(|(_, b)| f64::from(v) < b) {
                best = Some((idx, f64::from(v)));
            }
        }
        let idx = best.unwrap().0;
        l.point_bohr(idx % nx, (idx / nx) % ny, idx / (nx * ny))
    };
    assert!(!close(naive, placed.positions_bohr[1]), "repulsion changed nothing");

    // With 5.1 A between ions, the two keep it.
    let far = place_ions(
        &map,
        &atoms,
        &IonParams {
            min_distance_ions_angstrom: 5.1,
            ..params
        },
    )
    .unwrap();
    let (a, b) = (far.positions_bohr[0], far.positions_bohr[1]);
    let r = ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt();
    assert!(r >= bohr_from_angstrom(5.1), "{r} bohr");
    let want = brute_force_ions(
        &map,
        &atoms,
        &IonParams {
            min_distance_ions_angstrom: 5.1,
            ..params
        },
    );
    assert!(close(a, want[0]) && close(b, want[1]));

    // No room: the error says how many fit.
    let e = place_ions(
        &map,
        &atoms,
        &IonParams {
            count: 50,
            min_distance_ions_angstrom: 6.0,
            ..params
        },
    )
    .unwrap_err();
    assert!(matches!(e, IonError::NoRoom { wanted: 50, .. }), "{e}");
    assert!(
        place_ions(
            &map,
            &atoms,
            &IonParams {
                charge_e: 0.0,
                ..params
            }
        )
        .is_err()
    );
}

#[test]
fn ions_around_adk_keep_their_distances() {
    let mut system = io::load(&[md("adk_open.pqr")]).unwrap();
    let charges = require_charges(&system).unwrap();
    let frame = system.trajectory.frame(0).unwrap();
    let pc = frame_charges(0, &frame, &charges, None).unwrap();
    let atoms = pc.positions_bohr.clone();
    let positions_angstrom: Vec<[f64; 3]> = atoms.iter().map(|&p| angstrom_from_bohr3(p)).collect();
    let lattice = orbitfield::model::field::LatticeSpec::AroundAtoms {
        spacing_angstrom: 4.0,
        padding_angstrom: 8.0,
    }
    .build(&positions_angstrom)
    .unwrap();
    let job = frame_job(pc, EspMethod::Direct, Boundary::Open, lattice, 0).unwrap();
    let map = cpu::evaluate_grid(&job).unwrap();
    let params = IonParams {
        count: 3,
        charge_e: 1.0,
        min_distance_atoms_angstrom: 5.0,
        min_distance_ions_angstrom: 5.0,
    };
    let placed = place_ions(&map, &atoms, &params).unwrap();
    assert_eq!(placed.positions_bohr.len(), 3);
    let d = |a: [f64; 3], b: [f64; 3]| ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt();
    let min_bohr = bohr_from_angstrom(5.0) - 1e-9;
    for (i, &ion) in placed.positions_bohr.iter().enumerate() {
        for &a in &atoms {
            assert!(d(ion, a) >= min_bohr, "ion {i} is {} bohr from an atom", d(ion, a));
        }
        for &other in &placed.positions_bohr[..i] {
            assert!(d(ion, other) >= min_bohr);
        }
    }
    // This ADK carries -4 e in total: a counter-cation finds a favourable (negative q V) spot.
    assert!(placed.energies_hartree[0] < 0.0);
    // The cell list agrees with a brute-force search for the first ion.
    let want = brute_force_ions(&map, &atoms, &IonParams { count: 1, ..params });
    assert!(close(placed.positions_bohr[0], want[0]));

    // The PDB reads back with our own reader: three sodium ions at the placed positions.
    let text = pdb_text(&placed.positions_bohr, Element::from_symbol("Na").unwrap(), 1.0);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ions.pdb");
    io::write_atomically(&path, text.as_bytes()).unwrap();
    let mut back = io::load(std::slice::from_ref(&path)).unwrap();
    assert_eq!(back.structure.len(), 3);
    assert!(
        back.structure
            .elements
            .iter()
            .all(|&e| e == Element::from_symbol("Na").unwrap())
    );
    let f = back.trajectory.frame(0).unwrap();
    for (p, want) in f.positions_angstrom.iter().zip(&placed.positions_bohr) {
        let w = angstrom_from_bohr3(*want);
        assert!((0..3).all(|k| (f64::from(p[k]) - w[k]).abs() < 1e-3));
    }
}

#[test]
fn mulliken_charges_match_pyscf() {
    let text = std::fs::read_to_string(qm("mulliken_reference.json")).unwrap();
    let reference: serde_json::Value = serde_json::from_str(&text).unwrap();
    for name in [
        "water_hf_631gs_sph",
        "water_hf_631gs_cart",
        "threonine_hf_631gs_cart",
        "threonine_hf_631gs_sph",
        "o2_uhf_ccpvtz_sph",
    ] {
        let system = io::load(&[qm(&format!("{name}.molden.gz"))]).unwrap();
        let wf = system.wavefunctions.first().unwrap();
        let want: Vec<f64> = reference[name]["mulliken_charges_e"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        let z: Vec<f64> = reference[name]["nuclear_charges"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        assert_eq!(nuclear_charges_e(wf), z, "{name}");
        let got = mulliken_charges_e(wf).unwrap();
        assert_eq!(got.len(), want.len(), "{name}");
        for (a, (g, w)) in got.iter().zip(&want).enumerate() {
            assert!((g - w).abs() < 1e-4, "{name} atom {a}: {g} vs PySCF {w}");
        }
    }
}

#[test]
fn the_potential_of_mulliken_charges_is_their_coulomb_sum() {
    let system = io::load(&[qm("water_hf_631gs_sph.molden.gz")]).unwrap();
    let wf = system.wavefunctions.first().unwrap();
    let q = mulliken_charges_e(wf).unwrap();
    let pc = orbitfield::analysis::charges::point_charges(wf, q.clone());
    let lattice = Lattice::axis_aligned([4.0, 4.0, 4.0], 1.0, [2, 2, 2]);
    let job = frame_job(pc, EspMethod::Direct, Boundary::Open, lattice, 0).unwrap();
    let grid = cpu::evaluate_grid(&job).unwrap();
    let p = lattice.point_bohr(1, 0, 1);
    let want: f64 = wf
        .atoms
        .iter()
        .zip(&q)
        .map(|(a, &qa)| {
            let c = a.position_bohr;
            qa / ((p[0] - c[0]).powi(2) + (p[1] - c[1]).powi(2) + (p[2] - c[2]).powi(2)).sqrt()
        })
        .sum();
    let got = f64::from(grid.values[lattice.index(1, 0, 1)]);
    assert!((got - want).abs() < 1e-6 * want.abs().max(1e-3), "{got} vs {want}");
}
