//! Wavefunction and volume files from public test suites (iodata, molden2qmc, cclib) that the
//! readers once misread, checked against what the files themselves say: electron counts (nuclear
//! charges minus the molecule's charge, integrated analytically as tr(P S) with the basis overlap),
//! orthonormal orbitals within each spin, and the file's own energies, occupations and coordinates.
//! Provenance of every file: `tests/data/qm/fresh/PROVENANCE`.
// Test helpers may unwrap: a failure is a test failure.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use orbitfield::io;
use orbitfield::model::overlap::{orthonormality_deviation, overlap_matrix};
use orbitfield::model::{OrbitalSet, Spin, SpinKind, Wavefunction};
use std::path::{Path, PathBuf};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/qm/fresh")
        .join(name)
}

fn load_one(name: &str) -> (Wavefunction, Vec<String>) {
    let mut s = io::load(&[data(name)]).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(s.wavefunctions.len(), 1, "{name}");
    (s.wavefunctions.remove(0), s.warnings)
}

/// Electrons of one spin channel: sum over orbitals of (channel occupation) * c^T S c.
fn channel_electrons(wf: &Wavefunction, spin: Spin, s: &[f64]) -> f64 {
    let set = wf.orbitals(spin).unwrap();
    let n = set.n_basis;
    (0..set.len())
        .map(|k| {
            let c = set.orbital(k).unwrap();
            let norm: f64 = (0..n)
                .map(|i| c[i] * (0..n).map(|j| s[i * n + j] * c[j]).sum::<f64>())
                .sum();
            wf.channel_occupation(spin, set.occupations[k]) * norm
        })
        .sum()
}

/// Largest deviation from orthonormality of the occupied orbitals of a set.
fn occupied_deviation(set: &OrbitalSet, s: &[f64]) -> f64 {
    let which: Vec<usize> = (0..set.len()).filter(|&k| set.occupations[k] > 0.0).collect();
    orthonormality_deviation(set, s, &which).unwrap()
}

#[test]
fn wfn_with_coordinates_running_together_loads() {
    // Gaussian's FORMAT (A8,16X,3F12.8) runs coordinates of -100 < x <= -10 bohr into the one
    // before: "0.00000000-94.48630664". Title: CaH110_q+129, so 20 + 110 - 129 = 1 electron.
    let (wf, _) = load_one("cah110_hf_sto3g_g09.wfn.gz");
    assert_eq!(wf.atoms.len(), 111);
    let z: f64 = wf.atoms.iter().map(|a| a.nuclear_charge).sum();
    assert_eq!(z, 130.0);
    // "H    2    (CENTRE  2)   0.00000000-94.48630664  0.00000000  CHARGE =  1.0"
    assert_eq!(wf.atoms[1].position_bohr, [0.0, -94.48630664, 0.0]);
    // "H   27    (CENTRE 27)   0.00000000  0.00000000-47.24315332  CHARGE =  1.0"
    assert_eq!(wf.atoms[26].position_bohr, [0.0, 0.0, -47.24315332]);
    // One electron in spin orbitals: 123 alpha then 123 beta orbitals (the energies start again).
    assert_eq!(wf.spin, SpinKind::Unrestricted);
    assert_eq!(wf.alpha.len(), 123);
    assert_eq!(wf.beta.as_ref().unwrap().len(), 123);
    assert_eq!(wf.alpha.energies_hartree[0], -202.728384);
    assert_eq!(wf.beta.as_ref().unwrap().energies_hartree[0], -190.505088);
    let s = overlap_matrix(&wf.basis);
    let (a, b) = (
        channel_electrons(&wf, Spin::Alpha, &s),
        channel_electrons(&wf, Spin::Beta, &s),
    );
    assert!((a - 1.0).abs() < 1e-5 && b.abs() < 1e-12, "alpha {a}, beta {b}");
}

#[test]
fn wfn_of_an_unrestricted_calculation_keeps_the_spins_apart() {
    // O2 triplet UHF ("O2 m=3"): MO 1..9 are alpha, MO 45..51 beta (the numbers jump, the energies
    // start again); 16 electrons, 2 unpaired.
    let (wf, _) = load_one("o2_uhf.wfn");
    assert_eq!(wf.spin, SpinKind::Unrestricted);
    let beta = wf.beta.as_ref().unwrap();
    assert_eq!((wf.alpha.len(), beta.len()), (9, 7));
    assert_eq!(wf.alpha.energies_hartree[0], -20.752000);
    assert_eq!(wf.alpha.energies_hartree[8], -0.541368);
    assert_eq!(beta.energies_hartree[0], -20.697027);
    assert_eq!(beta.energies_hartree[6], -0.601904);
    let s = overlap_matrix(&wf.basis);
    for set in [&wf.alpha, beta] {
        let d = occupied_deviation(set, &s);
        assert!(d < 1e-6, "orthonormality {d:e}");
    }
    let (a, b) = (
        channel_electrons(&wf, Spin::Alpha, &s),
        channel_electrons(&wf, Spin::Beta, &s),
    );
    assert!((a - 9.0).abs() < 1e-6 && (b - 7.0).abs() < 1e-6, "alpha {a}, beta {b}");
    assert_eq!(wf.homo(Spin::Alpha), Some(8));
    assert_eq!(wf.homo(Spin::Beta), Some(6));
}

#[test]
fn wfn_spins_match_the_wfx_of_the_same_calculation() {
    // The wfx twin names each orbital's spin (Alpha, Alpha, Beta); the wfn has no spin field.
    let (wfn, _) = load_one("lih_cation_uhf.wfn");
    let (wfx, _) = load_one("lih_cation_uhf.wfx");
    let close = |a: &[f64], b: &[f64]| a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-7);
    for wf in [&wfn, &wfx] {
        assert_eq!(wf.spin, SpinKind::Unrestricted);
        assert!(close(&wf.alpha.energies_hartree, &[-2.79723867, -0.82901195]));
        assert!(close(&wf.beta.as_ref().unwrap().energies_hartree, &[-2.79003731]));
    }
    // Multiwfn's $MOSPIN extension (1 alpha, 2 beta) gives the spins where the heuristic cannot:
    // here it calls the second orbital beta.
    let text = std::fs::read_to_string(data("lih_cation_uhf.wfn")).unwrap();
    let dir = std::env::temp_dir().join(format!("orbitfield-mospin-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("lih_mospin.wfn");
    std::fs::write(&p, format!("{text}$MOSPIN $END\n 1 2 2\n")).unwrap();
    let wf = io::load(std::slice::from_ref(&p)).unwrap().wavefunctions.remove(0);
    assert_eq!(wf.alpha.energies_hartree, vec![-2.79723867]);
    assert_eq!(
        wf.beta.as_ref().unwrap().energies_hartree,
        vec![-0.82901195, -2.79003731]
    );
    std::fs::write(&p, format!("{text}$MOSPIN $END\n 1 2\n")).unwrap();
    let e = io::load(std::slice::from_ref(&p)).unwrap_err().to_string();
    assert!(e.contains("lih_mospin.wfn") && e.contains("$MOSPIN"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn molpro_unrestricted_files_one_per_spin_open_together() {
    // N4+ UHF/SVP (the input says charge=1): 28 - 1 = 27 electrons, 14 alpha and 13 beta. Molpro
    // writes the alpha and the beta orbitals to two files; the alpha file alone is no closed shell
    // (its [Molpro variables] say _NELEC= 27), so its occupations are not doubled.
    let (alone, warnings) = load_one("molpro_n4_cation_uhf_alpha.molden.gz");
    assert_eq!(alone.n_electrons(), 14.0);
    assert!(!warnings.iter().any(|w| w.contains("doubled")), "{warnings:?}");
    assert!(
        warnings.iter().any(|w| w.contains("alpha orbitals only")),
        "{warnings:?}"
    );
    let e = io::load(&[data("molpro_n4_cation_uhf_beta.molden.gz")])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("molpro_n4_cation_uhf_beta.molden.gz") && e.contains("beta orbitals only"),
        "{e}"
    );

    let s = io::load(&[
        data("molpro_n4_cation_uhf_alpha.molden.gz"),
        data("molpro_n4_cation_uhf_beta.molden.gz"),
    ])
    .unwrap();
    assert_eq!(s.wavefunctions.len(), 1);
    assert!(
        !s.warnings.iter().any(|w| w.contains("alpha orbitals only")),
        "{:?}",
        s.warnings
    );
    let wf = &s.wavefunctions[0];
    assert_eq!(wf.spin, SpinKind::Unrestricted);
    let beta = wf.beta.as_ref().unwrap();
    // The files' own first energies: " Ene=     -16.1254" (alpha), " Ene=     -16.1155" (beta).
    assert_eq!(wf.alpha.energies_hartree[0], -16.1254);
    assert_eq!(beta.energies_hartree[0], -16.1155);
    let ov = overlap_matrix(&wf.basis);
    for set in [&wf.alpha, beta] {
        let d = occupied_deviation(set, &ov);
        assert!(d < 1e-6, "orthonormality {d:e}");
    }
    let (a, b) = (
        channel_electrons(wf, Spin::Alpha, &ov),
        channel_electrons(wf, Spin::Beta, &ov),
    );
    assert!(
        (a - 14.0).abs() < 1e-6 && (b - 13.0).abs() < 1e-6,
        "alpha {a}, beta {b}"
    );
    let z: f64 = wf.atoms.iter().map(|a| a.nuclear_charge).sum();
    assert!((a + b - (z - 1.0)).abs() < 1e-6);
}

#[test]
fn cube_that_declares_atoms_but_lists_none_loads() {
    // Line 3 says 3 atoms, but the values start on line 7: 2197 numbers, exactly 13x13x13.
    let s = io::load(&[data("cclib_water_mp2_no_atoms.cube.gz")]).unwrap();
    assert!(
        s.warnings
            .iter()
            .any(|w| w.contains("line 3") && w.contains("lists none")),
        "{:?}",
        s.warnings
    );
    assert_eq!(s.grids.len(), 1);
    let g = &s.grids[0];
    assert_eq!(g.lattice.dims, [13, 13, 13]);
    assert_eq!(g.lattice.origin_bohr, [-3.0, -3.0, -2.563058]);
    assert_eq!(
        g.lattice.steps_bohr,
        [[0.5, 0.0, 0.0], [0.0, 0.5, 0.0], [0.0, 0.0, 0.5]]
    );
    // The file's values, z fastest: 1st "1.30269E-06", 2nd "4.08156E-06", 14th "2.00861E-06".
    assert_eq!(g.get(0, 0, 0), Some(1.30269e-6));
    assert_eq!(g.get(0, 0, 1), Some(4.08156e-6));
    assert_eq!(g.get(0, 1, 0), Some(2.00861e-6));
    assert!(s.structure.is_empty());
}

#[test]
fn qchem_optimisation_fchk_takes_the_geometry_of_its_orbitals() {
    // Q-Chem 5.4 writes "Current cartesian coordinates" for each of the 5 optimisation steps and the
    // orbitals after the last. p-divinylbenzene C10H10: 70 electrons.
    let (wf, warnings) = load_one("qchem54_dvb_gopt.fchk.gz");
    assert!(warnings.iter().any(|w| w.contains("5 geometries")), "{warnings:?}");
    // The last block starts "2.67415849E+00  4.54823123E-01  0.00000000E+00" (the first: 2.58290277).
    assert_eq!(wf.atoms[0].position_bohr, [2.67415849, 0.454823123, 0.0]);
    assert!(
        wf.basis
            .shells
            .iter()
            .all(|s| s.center_bohr == wf.atoms[s.atom].position_bohr)
    );
    let s = overlap_matrix(&wf.basis);
    let d = occupied_deviation(&wf.alpha, &s);
    assert!(d < 1e-6, "orthonormality {d:e}");
    let n = 2.0 * channel_electrons(&wf, Spin::Alpha, &s);
    assert!((n - 70.0).abs() < 1e-6, "{n}");
}

#[test]
fn fchk_without_orbitals_opens_its_geometries_and_says_so() {
    // Gaussian's optimisation summary: atoms and geometries of every step, no basis, no orbitals
    // (the geometries are checked against iodata in `qm_references.rs`).
    let system = io::load(&[data("methanol_g16_opt.fchk.gz")]).unwrap();
    assert!(system.wavefunctions.is_empty());
    assert_eq!(system.trajectory.n_frames(), 4);
    let w = system.warnings.join("; ");
    assert!(
        w.contains("methanol_g16_opt.fchk.gz") && w.contains("no basis set and no orbitals") && w.contains("FOpt"),
        "{w}"
    );
}

#[test]
fn xtb_valence_only_molden_takes_valence_nuclear_charges() {
    // xtb (GFN2) writes the full atomic numbers but orbitals of the valence electrons only: 31 atoms
    // (9 C, 1 N, 3 O, 1 S, 17 H), 82 valence electrons of a neutral molecule.
    let (wf, warnings) = load_one("xtb_knf.molden.gz");
    assert!(warnings.iter().any(|w| w.contains("valence-only")), "{warnings:?}");
    for a in &wf.atoms {
        let valence = match a.element.number() {
            1 => 1.0,
            6 => 4.0,
            7 => 5.0,
            8 | 16 => 6.0,
            z => panic!("unexpected element {z}"),
        };
        assert_eq!(a.nuclear_charge, valence, "{:?}", a.element);
    }
    let s = overlap_matrix(&wf.basis);
    let n = 2.0 * channel_electrons(&wf, Spin::Alpha, &s);
    let z: f64 = wf.atoms.iter().map(|a| a.nuclear_charge).sum();
    assert!(
        (n - 82.0).abs() < 1e-6 && z == 82.0,
        "electrons {n}, nuclear charge {z}"
    );
}
