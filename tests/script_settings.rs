//! Commands a new user reached for and did not find, now in the language: the Poisson-Boltzmann
//! model's parameters (`set ionic|epsin|epsout|probe|pbspacing`, what the field panel's rows set,
//! and logged as such), which representation `rep add`/`field add` made, and why a selection of
//! chains picks nothing in a file without chain identifiers.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use orbitfield::app::pb::PbSetting;
use orbitfield::script::{self, RunMode};
use std::path::PathBuf;

fn data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

#[test]
fn poisson_boltzmann_parameters_are_commands() {
    let mut state = script::headless_state([400, 300]);
    let report = script::run_in(
        &mut state,
        "open pb/adk_res1-4.pqr\nset ionic 0.05; set epsin 4; set epsout 80; set probe 1.2; set pbspacing 1.5",
        &data(),
        None,
        RunMode::Headless,
    )
    .unwrap();
    assert_eq!(report.statements, 6);
    let want = [
        (PbSetting::IonicStrength, 0.05),
        (PbSetting::EpsIn, 4.0),
        (PbSetting::EpsOut, 80.0),
        (PbSetting::Probe, 1.2),
        (PbSetting::Spacing, 1.5),
    ];
    for (which, v) in want {
        assert_eq!(state.pb_value(which), v, "{which:?}");
    }
    assert!(state.pb.legend().contains("0.05 M"), "{}", state.pb.legend());
    // Out of range: refused at the value, naming the range; nothing changed.
    let e = script::run_in(&mut state, "set ionic 9", &data(), None, RunMode::Headless).unwrap_err();
    assert!(e.message.contains("from 0 M to 5 M"), "{}", e.message);
    assert_eq!(e.column, 11);
    assert_eq!(state.pb_value(PbSetting::IonicStrength), 0.05);
}

#[test]
fn adding_a_representation_says_its_number_and_empty_chain_selections_say_why() {
    let report = script::run_text(
        "open md/adk_open.pqr\nrep delete all\nrep add cartoon protein\nfield add potential\nselect chain A\nselect segid XYZ\nrep add licorice resname FOO",
        &data(),
        RunMode::Headless,
    )
    .unwrap();
    let out = report.output.join("\n");
    assert!(out.contains("representation 1: "), "{out}");
    // A distance reports its value, as rmsd does (adk_open's atoms 1 and 2 are N and H of MET 1).
    let o = script::run_text("open md/adk_open.pqr\nmeasure distance 1 2", &data(), RunMode::Headless).unwrap();
    let line = o
        .output
        .iter()
        .find(|l| l.starts_with("distance 1-2: "))
        .expect("a distance line");
    let v: f64 = line["distance 1-2: ".len()..]
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    // From the file's coordinates: (-11.921, 26.307, 10.410) and (-11.447, 26.741, 9.595).
    let want = ((-11.921f64 + 11.447).powi(2) + (26.307f64 - 26.741).powi(2) + (10.410f64 - 9.595).powi(2)).sqrt();
    assert!((v - want).abs() < 1e-3, "{line}: {want}");
    assert!(out.contains("representation 2: "), "{out}");
    assert!(
        out.contains("representation 3: resname FOO: Licorice (the selection matches no atoms)"),
        "{out}"
    );
    assert!(
        out.contains("'chain A' selects 0 atoms (the files give no chain identifiers"),
        "{out}"
    );
}

/// `save map potential` writes what the view shows, in the unit its header names: under the vacuum
/// model the Coulomb sum in kT/e at 300 K (checked against the sum at lattice points here), under
/// Poisson-Boltzmann the view's solution with its parameters.
#[test]
fn saved_potential_maps_are_in_their_headers_unit_and_model() {
    let dir = tempfile::tempdir().unwrap();
    let pqr = data().join("pb/adk_res1-4.pqr");
    let script = format!(
        "open \"{}\"\nset model vacuum\nsave map potential \"{}\"\nset model pb\nset ionic 0.05\nsave map potential \"{}\"",
        pqr.display(),
        dir.path().join("vacuum.dx").display(),
        dir.path().join("pb.dx").display()
    );
    script::run_text(&script, dir.path(), RunMode::Headless).unwrap();
    let system = orbitfield::io::load(&[pqr]).unwrap();
    let charges = system.structure.charges_e.clone().unwrap();
    let mut system = system;
    let frame = system.trajectory.frame(0).unwrap();

    let vac = orbitfield::io::dx::read(
        &dir.path().join("vacuum.dx"),
        &std::fs::read(dir.path().join("vacuum.dx")).unwrap(),
    )
    .unwrap();
    assert!(vac.description.contains("kT/e"), "{}", vac.description);
    // hartree/e to kT/e at 300 K (CODATA 2018: 27.211386245988 eV, k_B 8.617333262e-5 eV/K).
    let kt_per_hartree = 27.211386245988 / (8.617333262e-5 * 300.0);
    let bohr = 0.529177210903;
    let dims = vac.lattice.dims;
    let mut worst = 0f64;
    for (i, j, k) in [
        (0, 0, 0),
        (dims[0] / 2, dims[1] / 3, dims[2] - 1),
        (dims[0] - 1, dims[1] / 2, 1),
    ] {
        // The point in Angstrom, the distances in bohr.
        let p = vac.lattice.point_bohr(i, j, k).map(|v| v * bohr);
        let v: f64 = charges
            .iter()
            .zip(&frame.positions_angstrom)
            .map(|(&q, a)| {
                let r = (0..3).map(|c| (p[c] - f64::from(a[c])).powi(2)).sum::<f64>().sqrt() / bohr;
                f64::from(q) / r
            })
            .sum::<f64>()
            * kt_per_hartree;
        let got = f64::from(vac.get(i, j, k).unwrap());
        worst = worst.max((got - v).abs() / v.abs().max(1e-3));
    }
    assert!(worst < 1e-3, "relative difference {worst}");

    let pb = orbitfield::io::dx::read(
        &dir.path().join("pb.dx"),
        &std::fs::read(dir.path().join("pb.dx")).unwrap(),
    )
    .unwrap();
    assert!(
        pb.description.contains("Poisson-Boltzmann, 0.05 M"),
        "{}",
        pb.description
    );
    assert!(pb.description.contains("kT/e"), "{}", pb.description);
    let (lo, hi) = pb.min_max().unwrap();
    assert!(lo < -1.0 && hi > 1.0, "{lo} {hi} kT/e");
}

/// A session keeps the Poisson-Boltzmann parameters its legend names, and the depth cue.
#[test]
fn sessions_keep_the_pb_parameters_and_the_depth_cue() {
    let dir = tempfile::tempdir().unwrap();
    let pqr = data().join("pb/adk_res1-4.pqr");
    let ron = dir.path().join("s.ron");
    let script = format!(
        "open \"{}\"\nset ionic 0.05; set epsin 4; set pbspacing 1.5; set depthcue 0.9\nsave session \"{}\"",
        pqr.display(),
        ron.display()
    );
    script::run_text(&script, dir.path(), RunMode::Headless).unwrap();
    let mut state = script::headless_state([400, 300]);
    script::run_in(
        &mut state,
        &format!("open session \"{}\"", ron.display()),
        dir.path(),
        None,
        RunMode::Headless,
    )
    .unwrap();
    assert_eq!(state.pb_value(PbSetting::IonicStrength), 0.05);
    assert_eq!(state.pb_value(PbSetting::EpsIn), 4.0);
    assert_eq!(state.pb_value(PbSetting::Spacing), 1.5);
    assert_eq!(state.settings.depth_cue, 0.9);
}

/// A movie named .avi (or .gif, .mov) is refused in words, not written as a folder of PNG frames
/// under that name.
#[test]
fn a_movie_of_another_video_format_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let pqr = data().join("pb/adk_res1-4.pqr");
    let movie = dir.path().join("m.avi");
    let e = script::run_text(
        &format!("open \"{}\"\nsave movie \"{}\"", pqr.display(), movie.display()),
        dir.path(),
        RunMode::Headless,
    )
    .unwrap_err();
    assert!(e.message.contains("written as MP4"), "{}", e.message);
    assert_eq!(e.line, 2);
    assert!(!movie.exists());
}

/// `rdf` without a window waits for the g(r), sums it up in one line, and `save rdf` writes it:
/// tip125's water oxygens against MDAnalysis's InterRDF (`tests/data/analysis/mdanalysis_rdf.json`).
/// The viewer never pairs an atom with itself, so past the first bin its g(r) is InterRDF's (which
/// counts those pairs, normalising by N^2) times N/(N-1).
#[test]
fn a_headless_rdf_is_reported_and_saved() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("g.txt");
    let report = script::run_text(
        &format!(
            "open md/tip125_tric_C36.psf md/tip125_tric_C36.dcd\nrdf name OH2 with name OH2 rmax 4 bins 40\nsave rdf {}",
            out.display()
        ),
        &data(),
        RunMode::Headless,
    )
    .unwrap();
    let lines = report.output.join("\n");
    assert!(
        lines.contains("rdf 'name OH2' with 'name OH2': 10 frames, highest g(r)"),
        "{lines}"
    );
    let text = std::fs::read_to_string(&out).unwrap();
    let g: Vec<f64> = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split_whitespace().nth(1).unwrap().parse().unwrap())
        .collect();
    let reference: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(data().join("analysis/mdanalysis_rdf.json")).unwrap()).unwrap();
    let want: Vec<f64> = reference["tip125"]["g"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    let n = reference["tip125"]["n_sel"].as_f64().unwrap();
    assert_eq!(g.len(), want.len());
    for k in 1..g.len() {
        let w = want[k] * n / (n - 1.0);
        assert!((g[k] - w).abs() < 1e-4 * w.max(1.0), "bin {k}: {} vs {w}", g[k]);
    }
    // Nothing computed yet: said so.
    let e = script::run_text("open md/adk_open.pqr\nsave rdf x.txt", &data(), RunMode::Headless).unwrap_err();
    assert!(e.message.contains("no g(r) yet"), "{}", e.message);
}
