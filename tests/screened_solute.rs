//! Screened potentials (eps = 4r, Debye-Hückel) of a solvated protein leave the explicit water and
//! electrolyte ions out, as the Poisson-Boltzmann solute does: their medium stands for the solvent.
//! On cobrotoxin in TIP4P water with Na+ and Cl- (GROMACS TPR, `tests/data/md/gromacs`): the charges
//! kept are the protein's (counted here from the residue names MDAnalysis reports for this file:
//! SOL, NA, CL), the viewer's legend says so, its surface colours equal an f64 sum over those
//! charges alone, and the vacuum sum keeps every charge.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use orbitfield::app::esp_model::EspModel;
use orbitfield::app::fields::FieldChoice;
use orbitfield::app::state::{AppState, Command};
use orbitfield::model::units::{ANGSTROM_PER_BOHR, bohr_from_angstrom3};
use std::path::PathBuf;

fn tpr() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/md/gromacs/cobrotoxin.tpr.gz")
}

#[test]
fn screened_potentials_of_a_solvated_protein_leave_the_solvent_out() {
    let system = orbitfield::io::load(&[tpr()]).unwrap();
    let s = &system.structure;
    let solvent = |i: usize| matches!(s.resnames[i].as_str(), "SOL" | "NA" | "CL");
    let protein: Vec<usize> = (0..s.len()).filter(|&i| !solvent(i)).collect();
    assert!(protein.len() > 900 && protein.len() < 2000, "{}", protein.len());

    let mut state = AppState::new(Default::default(), orbitfield::app::default_field_service());
    state.open_system("cobrotoxin".into(), orbitfield::io::load(&[tpr()]).unwrap());
    // The Add menu offers the solute, not the water box, for a new surface.
    assert_eq!(state.panels.new_selection, orbitfield::app::apply::SOLUTE_SELECTION);
    state.apply(Command::SetEspModel(EspModel::DistanceDependent {
        slope_per_angstrom: 4.0,
    }));
    let legend = state.potential_model(FieldChoice::Potential, false).unwrap();
    assert!(
        legend.contains(&format!("of {} solute charges, no water or ions,", protein.len())),
        "{legend}"
    );
    let doc = state.document().unwrap();
    let q = doc
        .point_charges_at(FieldChoice::Potential, 0, &doc.frame, true)
        .unwrap();
    assert_eq!(q.charges_e.len(), protein.len());
    // Vacuum keeps every charge.
    let all = doc
        .point_charges_at(FieldChoice::Potential, 0, &doc.frame, false)
        .unwrap();
    assert_eq!(all.charges_e.len(), s.len());

    // The eps = 4r potential of the kept charges at a point 6 A off the protein's first atom, in
    // f64 against the charges picked here.
    let frame = &doc.frame;
    let p0 = frame.positions_angstrom[protein[0]].map(f64::from);
    let at = [p0[0] + 6.0, p0[1], p0[2]];
    let want: f64 = protein
        .iter()
        .map(|&i| {
            let p = frame.positions_angstrom[i].map(f64::from);
            let r_angstrom = ((p[0] - at[0]).powi(2) + (p[1] - at[1]).powi(2) + (p[2] - at[2]).powi(2)).sqrt();
            let r_bohr = r_angstrom / ANGSTROM_PER_BOHR;
            f64::from(s.charges_e.as_ref().unwrap()[i]) / (4.0 * r_angstrom * r_bohr)
        })
        .sum();
    let kernel = orbitfield::compute::esp::screening::Dielectric::DistanceDependent {
        slope_per_angstrom: 4.0,
    };
    let at_bohr = bohr_from_angstrom3(at);
    let got: f64 = q
        .positions_bohr
        .iter()
        .zip(&q.charges_e)
        .map(|(p, c)| {
            let r = ((p[0] - at_bohr[0]).powi(2) + (p[1] - at_bohr[1]).powi(2) + (p[2] - at_bohr[2]).powi(2)).sqrt();
            c * kernel.kernel_bohr(r)
        })
        .sum();
    assert!((got - want).abs() < 1e-9 * want.abs().max(1e-3), "{got} against {want}");
}

/// `grid esp --dielectric 4r` of the same system sums the protein's charges alone and says so once.
#[test]
fn grid_esp_with_a_screened_model_says_it_left_the_solvent_out() {
    let system = orbitfield::io::load(&[tpr()]).unwrap();
    let s = &system.structure;
    let protein = (0..s.len())
        .filter(|&i| !matches!(s.resnames[i].as_str(), "SOL" | "NA" | "CL"))
        .count();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("esp.dx");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_orbitfield"))
        .args(["grid", "esp"])
        .arg(tpr())
        .args(["--dielectric", "4r", "--spacing", "4", "--device", "cpu", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert_eq!(
        stderr.matches("left out of the screened potential").count(),
        1,
        "{stderr}"
    );
    assert!(stderr.contains(&format!("({protein} charges kept)")), "{stderr}");
}

/// `grid pb` of the same system leaves the water out and does not name the TIP4P water's massless
/// sites (MW) among the atoms whose radii it had to guess: they are not in the solute.
#[test]
fn pb_notes_name_only_the_solute_s_atoms() {
    let dir = tempfile::tempdir().unwrap();
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_orbitfield"))
        .args(["grid", "pb"])
        .arg(tpr())
        .args(["--spacing", "2", "--device", "cpu", "-o"])
        .arg(dir.path().join("pb.dx"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert!(stderr.contains("left out of the solute"), "{stderr}");
    assert!(stderr.contains("each element's van der Waals radius"), "{stderr}");
    assert!(!stderr.contains("unknown element"), "{stderr}");
}
