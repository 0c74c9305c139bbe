//! An ORCA log whose orbitals cannot be drawn (no `! PrintBasis`) still lists its orbital
//! energies, as GaussView and Avogadro do: the last "ORBITAL ENERGIES" table's energies and
//! occupations, completed from the orbital block's headers past where ORCA 6 ends the table (read
//! from the log here), the HOMO where the occupations end, the gap and the
//! diagram. The rows say they cannot be drawn, and a click on one adds no representation.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

#[path = "common/journey.rs"]
mod journey;
use egui_kittest::kittest::Queryable;
use orbitfield::model::Spin;

/// (occupation, energy in hartree, how closely it is printed) of every orbital of the log's last
/// step, read here: the last "ORBITAL ENERGIES" table (six decimals), which ORCA 6 ends ten virtual
/// orbitals past the HOMO, then the orbitals past its end from the headers of the "MOLECULAR
/// ORBITALS" block after it (orbital numbers, energies to five decimals, occupations).
fn last_table() -> Vec<(f64, f64, f64)> {
    let text = std::fs::read_to_string(journey::data("qm-logs/ORCA6.0_dvb_gopt.out")).unwrap();
    let table = text.rsplit("ORBITAL ENERGIES").next().unwrap();
    let mut rows: Vec<(f64, f64, f64)> = table
        .lines()
        .skip_while(|l| !l.contains("E(Eh)"))
        .skip(1)
        .map_while(|l| {
            let t: Vec<&str> = l.split_whitespace().collect();
            let _: usize = t.first()?.parse().ok()?;
            Some((t.get(1)?.parse().ok()?, t.get(2)?.parse().ok()?, 1e-9))
        })
        .collect();
    let block: Vec<&str> = table.split("MOLECULAR ORBITALS").nth(1).unwrap().lines().collect();
    for w in block.windows(3) {
        let numbers: Option<Vec<usize>> = w[0].split_whitespace().map(|t| t.parse().ok()).collect();
        let Some(numbers) = numbers.filter(|n| !n.is_empty()) else {
            continue;
        };
        let values = |l: &str| -> Option<Vec<f64>> { l.split_whitespace().map(|t| t.parse().ok()).collect() };
        let (Some(e), Some(occ)) = (values(w[1]), values(w[2])) else {
            continue;
        };
        for (k, &i) in numbers.iter().enumerate() {
            if i == rows.len() && k < e.len() && k < occ.len() {
                rows.push((occ[k], e[k], 1e-5));
            }
        }
    }
    rows
}

#[test]
fn a_log_without_its_basis_lists_its_orbital_energies() {
    let want = last_table();
    // dvb in STO-3G: 60 orbitals, the table's 46 and 14 more from the orbital block.
    assert_eq!(want.len(), 60);
    let mut harness = journey::window(journey::opened(&["qm-logs/ORCA6.0_dvb_gopt.out"], false));
    harness.run();
    let state = harness.state();
    assert!(
        state.document().unwrap().wavefunction().is_none(),
        "no wavefunction can be built"
    );
    let rows = state.orbital_rows(Spin::Alpha);
    assert_eq!(rows.len(), want.len());
    for (r, (occ, e, tol)) in rows.iter().zip(&want) {
        assert!(
            (r.energy_hartree - e).abs() < *tol && (r.occupation - occ).abs() < 1e-9,
            "{r:?}"
        );
    }
    let homo = want.iter().rposition(|(occ, _, _)| *occ > 1.0).unwrap();
    assert_eq!(state.homo_index(Spin::Alpha), Some(homo));
    assert_eq!(rows[homo].label, "HOMO");
    assert_eq!(rows[homo + 1].label, "LUMO");
    assert!(harness.query_by_label_contains("gap ").is_some(), "the gap is shown");
    assert!(harness.query_by_label(orbitfield::ui::orbitals::NOT_DRAWABLE).is_some());

    // A click on the LUMO's row draws nothing.
    let reps = harness.state().reps().list.len();
    harness.get_by_label(&format!("{} LUMO", homo + 2)).click();
    harness.run();
    assert_eq!(harness.state().reps().list.len(), reps);
    assert!(harness.state().reps().fields().next().is_none());
}

/// `orbitfield info` lists the same table: text and `--json`, the HOMO where the occupations end.
#[test]
fn info_lists_the_log_s_orbital_energies() {
    let want = last_table();
    let path = journey::data("qm-logs/ORCA6.0_dvb_gopt.out");
    let run = |json: bool| {
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_orbitfield"));
        c.arg("info");
        if json {
            c.arg("--json");
        }
        let o = c.arg(&path).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    };
    let v: serde_json::Value = serde_json::from_str(&run(true)).unwrap();
    let list = v["orbital_list"]["alpha"].as_array().unwrap();
    assert_eq!(list.len(), want.len());
    for (row, (occ, e, tol)) in list.iter().zip(&want) {
        assert!((row["energy_hartree"].as_f64().unwrap() - e).abs() < *tol);
        assert!((row["occupation"].as_f64().unwrap() - occ).abs() < 1e-9);
    }
    let homo = want.iter().rposition(|&(occ, _, _)| occ > 1.0).unwrap() + 1;
    assert_eq!(v["homo"].as_u64(), Some(homo as u64));
    let text = run(false);
    let line = format!("HOMO {homo} ({:.6} Eh), LUMO {}", want[homo - 1].1, homo + 1);
    assert!(text.contains(&line), "{text}");
}
