//! QM logs of cclib's regression data that orbitfield once read differently from cclib, held to
//! cclib's reading (`tests/data/qm-logs/cclib/reference.json`, written by `make_reference.py`
//! beside it): atoms, last geometry, charge and multiplicity, each frame's SCF energy, and the
//! last orbital energies.
#![allow(clippy::unwrap_used)] // helpers outside #[test] functions: missing data must fail loudly

use orbitfield::io::qmlog::{self, QmLog};
use orbitfield::model::{OrbitalLevels, Spin};
use std::path::{Path, PathBuf};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/qm-logs/cclib")
        .join(name)
}

fn load(name: &str) -> QmLog {
    let path = data(name);
    let raw = orbitfield::io::read_bytes(&path).unwrap();
    let bytes = orbitfield::io::decompress(&path, raw).unwrap();
    qmlog::read(&path, &bytes).unwrap()
}

fn reference(name: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(data("reference.json")).unwrap();
    let all: serde_json::Value = serde_json::from_str(&text).unwrap();
    all["logs"][name].clone()
}

fn floats(v: &serde_json::Value) -> Vec<f64> {
    v.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect()
}

/// The atoms, last geometry, charge and multiplicity are cclib's.
fn check_molecule(log: &QmLog, r: &serde_json::Value) {
    let numbers: Vec<u64> = log.structure.elements.iter().map(|e| u64::from(e.number())).collect();
    let expected: Vec<u64> = r["atomic_numbers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|z| z.as_u64().unwrap())
        .collect();
    assert_eq!(numbers, expected);
    let last = log.frames.last().unwrap();
    for (p, q) in last
        .positions_angstrom
        .iter()
        .zip(r["last_positions_angstrom"].as_array().unwrap())
    {
        for (a, b) in p.iter().zip(floats(q)) {
            assert!((f64::from(*a) - b).abs() < 1e-4, "{p:?} against {q}");
        }
    }
    assert_eq!(log.charge, r["charge"].as_i64().map(|q| q as i32));
    assert_eq!(log.multiplicity, r["multiplicity"].as_u64().map(|m| m as u32));
}

/// The orbital energies (hartree) and the alpha HOMO of a log's last table are cclib's.
fn check_levels(levels: &OrbitalLevels, r: &serde_json::Value, tolerance_hartree: f64) {
    let expected = floats(&r["orbital_energies_hartree"][0]);
    let got = &levels.alpha.energies_hartree;
    assert_eq!(got.len(), expected.len(), "orbital count");
    for (k, (a, b)) in got.iter().zip(&expected).enumerate() {
        assert!(
            (a - b).abs() < tolerance_hartree,
            "orbital {k}: {a} against cclib's {b}"
        );
    }
    assert_eq!(levels.homo(Spin::Alpha), r["homos"][0].as_u64().map(|h| h as usize));
}

/// A TD-DFT single point: ORCA's `FINAL SINGLE POINT ENERGY` is the excited root's (0.197 hartree
/// above the SCF); the frame carries the ground state's SCF energy, as a Gaussian log's frame does.
#[test]
fn orca_td_dft_frame_energy_is_the_scf_energy() {
    let name = "ORCA5.0_dvb_td.out.gz";
    let (log, r) = (load(name), reference(name));
    check_molecule(&log, &r);
    assert_eq!(log.steps.len(), 1);
    let scf = floats(&r["scf_energies_hartree"]);
    let e = log.steps[0].scf_energy_hartree.unwrap();
    assert!((e - scf[0]).abs() < 1e-8, "{e} against cclib's {}", scf[0]);
    assert!((e - -381.858426608871).abs() > 0.1, "the excited root's energy");
    check_levels(log.levels.as_ref().unwrap(), &r, 1e-6);
}

/// A DFT-D3 single point: the SCF energy plus ORCA's dispersion correction, to the final line's
/// digits.
#[test]
fn orca_dispersion_correction_is_part_of_the_frame_energy() {
    let name = "ORCA5.0_dvb_dispersion_bp86_d3zero.out.gz";
    let (log, r) = (load(name), reference(name));
    check_molecule(&log, &r);
    let scf = floats(&r["scf_energies_hartree"]);
    let e = log.steps[0].scf_energy_hartree.unwrap();
    assert!((e - scf[0]).abs() < 1e-8, "{e} against cclib's {}", scf[0]);
    assert_eq!(e, -382.331679396225);
}

/// ORCA 6 lists only the first ten virtual orbitals in its "ORBITAL ENERGIES" table: the levels of
/// a log without its basis set take the rest from the orbital block printed after it.
#[test]
fn orca6_levels_include_the_virtual_orbitals_the_table_leaves_out() {
    let name = "../ORCA6.0_dvb_gopt.out";
    let (log, r) = (load(name), reference(name));
    check_molecule(&log, &r);
    let scf = floats(&r["scf_energies_hartree"]);
    assert_eq!(log.steps.len(), scf.len());
    for (s, e) in log.steps.iter().zip(&scf) {
        assert!((s.scf_energy_hartree.unwrap() - e).abs() < 1e-8);
    }
    assert!(log.wavefunctions.is_empty());
    let levels = log.levels.as_ref().unwrap();
    // cclib reads the block's five decimals; the table's own rows keep their six.
    check_levels(levels, &r, 6e-6);
    assert_eq!(levels.alpha.energies_hartree[34], -0.149429);
    assert_eq!(levels.alpha.symmetries[45], "Bu");
    assert_eq!(levels.alpha.occupations[59], 0.0);
}

/// A numerical Hessian (GAMESS `RUNTYP=HESSIAN`, AM1) and a numerical Raman job (Firefly) print an
/// SCF energy at every displaced geometry or applied field after the one geometry: its frame
/// carries the first, the energy at that geometry.
#[test]
fn gamess_numerical_derivative_jobs_keep_the_energy_of_their_geometry() {
    for name in ["GAMESS-US2018_nh3_ts_ir.out.gz", "Firefly8.0_dvb_raman.out.gz"] {
        let (log, r) = (load(name), reference(name));
        check_molecule(&log, &r);
        assert_eq!(log.frames.len(), 1, "{name}");
        let scf = floats(&r["scf_energies_hartree"]);
        assert!(scf.len() > 10, "{name}: the displaced points' energies");
        let e = log.steps[0].scf_energy_hartree.unwrap();
        assert!(
            (e - scf[0]).abs() < 1e-9,
            "{name}: {e} against cclib's first {}",
            scf[0]
        );
        assert!(
            (e - scf.last().unwrap()).abs() > 1e-7,
            "{name}: the last displaced point's"
        );
    }
}

/// A semi-empirical GAMESS job prints its orbitals but no basis set: their energies and the
/// occupied count still make the orbital list.
#[test]
fn gamess_orbitals_without_a_basis_set_are_listed() {
    let name = "GAMESS-US2018_nh3_ts_ir.out.gz";
    let (log, r) = (load(name), reference(name));
    assert!(log.wavefunctions.is_empty());
    check_levels(log.levels.as_ref().unwrap(), &r, 1e-6);
    assert_eq!(r["basis_functions"].as_u64(), Some(7));
}

/// A log that prints natural orbitals in place of the canonical ones (`Pop=(Full,NaturalOrbitals)`)
/// says so: `pop=full` is in its route already, so "add `pop=full`" would send its user in a circle.
#[test]
fn a_log_of_natural_orbitals_says_they_are_not_read() {
    let log = load("Gaussian16_water_mp2_natural.log.gz");
    let said = log.warnings.join("\n");
    assert!(said.contains("natural orbitals"), "{said}");
    assert!(!said.contains("add `pop=full`"), "{said}");
    // A log without the keyword is still told to add it.
    let plain = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/qm-logs/Gaussian16_dvb_un_sp.log.gz");
    let raw = orbitfield::io::read_bytes(&plain).unwrap();
    let text = String::from_utf8(orbitfield::io::decompress(&plain, raw).unwrap()).unwrap();
    // Its orbital blocks left out, as a job without `pop=full` prints it.
    let cut: String = match (text.find("Molecular Orbital Coefficients"), text.find("Density Matrix")) {
        (Some(a), Some(b)) if a < b => format!("{}{}", &text[..a], &text[b..]),
        _ => panic!("the log's orbital block"),
    };
    let log = qmlog::read(&plain, cut.as_bytes()).unwrap();
    let said = log.warnings.join("\n");
    assert!(
        said.contains("add `pop=full`") && !said.contains("natural orbitals"),
        "{said}"
    );
}
