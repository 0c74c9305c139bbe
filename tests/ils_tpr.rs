//! Lennard-Jones parameters of GROMACS run inputs (TPR c6/c12) for implicit ligand sampling,
//! against the force field's own table: the lysozyme system 2lyz (tests/data/md/gromacs, OPLS-AA
//! with SPC/E water), written by GROMACS 4.5, 2021 (double precision) and 2024. Each atom's eps and
//! rmin/2 must be the OPLS-AA values of its type (Jorgensen et al.; sigma and epsilon as GROMACS'
//! oplsaa.ff/ffnonbonded.itp tabulates them, converted here with rmin = 2^(1/6) sigma and
//! 4.184 kJ/kcal), the types being those MDAnalysis reads (tests/data/md/mdanalysis_gromacs_lammps.json).
//! `grid ils` on AdK in TIP4P water leaves the massless MW sites out with a note.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use orbitfield::io::ils_params::system_lj;
use std::path::PathBuf;

fn data(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(rel)
}

/// OPLS-AA types: (name, sigma nm, epsilon kJ/mol), from the force field's nonbonded table.
const OPLS_AA: [(&str, f64, f64); 21] = [
    ("opls_116", 0.316557, 0.650194), // OW, SPC and SPC/E water
    ("opls_117", 0.0, 0.0),           // HW
    ("opls_135", 0.350, 0.276144),    // CT, CH3
    ("opls_136", 0.350, 0.276144),    // CT, CH2
    ("opls_137", 0.350, 0.276144),    // CT, CH
    ("opls_140", 0.250, 0.125520),    // HC
    ("opls_145", 0.355, 0.292880),    // CA, aromatic
    ("opls_146", 0.242, 0.125520),    // HA
    ("opls_154", 0.312, 0.711280),    // OH, alcohol
    ("opls_155", 0.0, 0.0),           // HO
    ("opls_224B", 0.350, 0.276144),   // CT, alpha carbon
    ("opls_235", 0.375, 0.439320),    // C, amide
    ("opls_236", 0.296, 0.878640),    // O, amide
    ("opls_238", 0.325, 0.711280),    // N, amide
    ("opls_240", 0.0, 0.0),           // H on a primary amide's N
    ("opls_241", 0.0, 0.0),           // H on N
    ("opls_271", 0.375, 0.439320),    // C, carboxylate
    ("opls_272", 0.296, 0.878640),    // O2, carboxylate
    ("opls_287", 0.325, 0.711280),    // N3, ammonium
    ("opls_290", 0.0, 0.0),           // H3, ammonium
    ("opls_401", 0.441724, 0.492833), // Cl-
];

/// (eps kcal/mol, rmin/2 A) of an OPLS-AA type.
fn expected(sigma_nm: f64, eps_kj: f64) -> (f64, f64) {
    if sigma_nm == 0.0 || eps_kj == 0.0 {
        return (0.0, 0.0);
    }
    (eps_kj / 4.184, 0.5 * 2f64.powf(1.0 / 6.0) * sigma_nm * 10.0)
}

#[test]
fn tpr_parameters_are_the_force_fields_by_atom_type() {
    let reference: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(data("md/mdanalysis_gromacs_lammps.json")).unwrap()).unwrap();
    for name in [
        "2lyz_gmx_4.5.tpr.gz",
        "2lyz_gmx_2021_double.tpr.gz",
        "2lyz_gmx_2024.tpr.gz",
    ] {
        let tpr = data(&format!("md/gromacs/{name}"));
        let system = orbitfield::io::load(std::slice::from_ref(&tpr)).unwrap();
        let s = &system.structure;
        let lj = system_lj(std::slice::from_ref(&tpr), s, &[], false, None).unwrap();
        assert!(lj.note.is_none(), "{name}: {:?}", lj.note);
        assert!(lj.source.contains("GROMACS TPR"), "{}", lj.source);
        assert_eq!(lj.params.len(), s.len());
        // The types MDAnalysis reads for its chosen atoms are the structure's.
        for a in reference["cases"][format!("tpr_{name}")]["chosen_atoms"]
            .as_array()
            .unwrap()
        {
            let i = a["atom"].as_u64().unwrap() as usize;
            assert_eq!(s.types[i].as_str(), a["type"].as_str().unwrap(), "{name}: atom {i}");
        }
        let mut checked = std::collections::BTreeMap::new();
        for (i, t) in s.types.iter().enumerate() {
            let Some(&(_, sigma, eps)) = OPLS_AA.iter().find(|(n, _, _)| *n == t.as_str()) else {
                continue;
            };
            let (want_eps, want_rmin_half) = expected(sigma, eps);
            let p = lj.params[i];
            assert!(
                (p.eps_kcal_per_mol - want_eps).abs() <= 1e-5 * want_eps.max(1e-3)
                    && (p.rmin_half_angstrom - want_rmin_half).abs() <= 1e-5 * want_rmin_half.max(1.0),
                "{name}: atom {i} ({t}): {p:?}, the force field's eps {want_eps} kcal/mol, rmin/2 {want_rmin_half} A"
            );
            *checked.entry(t.as_str().to_string()).or_insert(0usize) += 1;
        }
        println!(
            "{name}: {} atoms checked over types {checked:?}",
            checked.values().sum::<usize>()
        );
        assert!(
            checked.len() >= 10,
            "{name}: only {} OPLS-AA types checked",
            checked.len()
        );
        assert!(checked.contains_key("opls_116"), "{name}: the water oxygen");
    }
}

#[test]
fn grid_ils_takes_its_parameters_from_a_tpr() {
    // cobrotoxin in TIP4P water (OPLS-AA) with one TRR frame; a small map near the first atom.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("pmf.dx");
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_orbitfield"))
        .args(["grid", "ils"])
        .arg(data("md/gromacs/cobrotoxin.tpr.gz"))
        .arg(data("md/gromacs/cobrotoxin_frame0.trr.gz"))
        .args(["--probe", "o2", "--subres", "1", "--orient", "6", "--device", "cpu"])
        .args(["--origin", "30", "12", "12", "--dims", "4", "4", "4", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{err}");
    assert!(err.contains("parameters from GROMACS TPR"), "{err}");
    let grid = orbitfield::io::dx::read(&out, &std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(grid.values.len(), 64);
    assert!(grid.values.iter().all(|v| v.is_finite()));
}

#[test]
fn grid_ils_leaves_out_the_massless_sites_of_tip4p_water() {
    // AdK in OPLS-AA TIP4P water (GROMACS coordinates, no parameters in the file): per-element
    // parameters for every atom but the water's MW sites, which have no element and no van der Waals
    // parameters; they are left out with a note, where the run used to stop on them.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("pmf.dx");
    // A 4 x 4 x 4 map in the water box, the atoms as `sel` picks them (all by default).
    let grid_ils = |sel: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_orbitfield"))
            .args(["grid", "ils"])
            .arg(data("md/adk_oplsaa.gro"))
            .args([
                "--probe",
                "o2",
                "--subres",
                "1",
                "--orient",
                "6",
                "--device",
                "cpu",
                "--lj-elements",
            ])
            .args(sel)
            .args(["--origin", "30", "30", "30", "--dims", "4", "4", "4", "-o"])
            .arg(&out)
            .output()
            .unwrap()
    };
    let run = grid_ils(&[]);
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{err}");
    assert!(err.contains("11084 massless water sites"), "{err}");
    let grid = orbitfield::io::dx::read(&out, &std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(grid.values.len(), 64);
    assert!(grid.values.iter().all(|v| v.is_finite()));
    // Every MW site is one of those: asked for alone, they are refused in words.
    let run = grid_ils(&["--sel", "name MW"]);
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(!run.status.success());
    assert!(err.contains("only massless water sites"), "{err}");
}
