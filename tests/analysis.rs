//! RDF and selections against MDAnalysis (reference values generated once by
//! `tests/data/analysis/mdanalysis_rdf.py` with MDAnalysis 2.x; see that script).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use orbitfield::analysis::rdf::{RdfAccumulator, RdfSettings};
use orbitfield::io;
use orbitfield::model::Frame;
use orbitfield::model::select::Selection;
use std::path::PathBuf;

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name)
}

fn reference() -> serde_json::Value {
    let text = std::fs::read_to_string(data("analysis/mdanalysis_rdf.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn our_rdf(files: &[&str], sel: &str, r_max: f64, bins: usize) -> (Vec<f64>, Vec<f64>, usize) {
    let paths: Vec<PathBuf> = files.iter().map(|f| data(f)).collect();
    let mut system = io::load(&paths).unwrap();
    let selection = Selection::parse(sel).unwrap();
    let mut acc = RdfAccumulator::new(RdfSettings {
        r_max_angstrom: r_max,
        bins,
        exclude_same_group: false,
    })
    .unwrap();
    let mut frame = Frame::default();
    let mut n_sel = 0;
    for f in 0..system.trajectory.n_frames() {
        system.trajectory.read_frame(f, &mut frame).unwrap();
        let idx = selection.indices(&system.structure, Some(&frame));
        n_sel = idx.len();
        acc.add_frame(f, &frame, &idx, &idx, None).unwrap();
    }
    let rdf = acc.finish();
    (rdf.r_angstrom, rdf.g, n_sel)
}

fn compare(key: &str, files: &[&str]) {
    let all = reference();
    let r = &all[key];
    let r_max = r["rmax"].as_f64().unwrap();
    let bins = r["bins"].as_u64().unwrap() as usize;
    let sel = r["sel"].as_str().unwrap();
    let (ours_r, ours_g, n_sel) = our_rdf(files, sel, r_max, bins);
    assert_eq!(n_sel as u64, r["n_sel"].as_u64().unwrap(), "selection size for '{sel}'");
    let ref_r: Vec<f64> = r["r"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    let ref_g: Vec<f64> = r["g"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    assert_eq!(ref_g.len(), ours_g.len());
    let mut worst: f64 = 0.0;
    for k in 0..bins {
        assert!((ours_r[k] - ref_r[k]).abs() < 1e-9, "bin centres differ at {k}");
        if ref_r[k] > 2.0 {
            worst = worst.max((ours_g[k] - ref_g[k]).abs());
        }
    }
    println!("{key}: max |g - g_MDAnalysis| beyond 2 A = {worst:.2e}");
    assert!(worst <= 0.02, "{key}: max deviation {worst}");
    // The test can fail: beyond 2 A (self pairs sit at r = 0), the highest peak is water's first shell.
    let peak = (0..bins)
        .filter(|&k| ours_r[k] > 2.0)
        .max_by(|&a, &b| ours_g[a].total_cmp(&ours_g[b]))
        .unwrap();
    assert!((2.5..3.1).contains(&ours_r[peak]), "first peak at {}", ours_r[peak]);
}

#[test]
fn rdf_matches_mdanalysis_triclinic_tip125() {
    compare("tip125", &["md/tip125_tric_C36.psf", "md/tip125_tric_C36.dcd"]);
}

#[test]
fn rdf_matches_mdanalysis_truncated_dodecahedron_adk_waters() {
    compare("adk_oplsaa", &["md/adk_oplsaa.gro", "md/adk_oplsaa.xtc"]);
}

#[test]
fn selection_counts_match_mdanalysis_on_adk() {
    let all = reference();
    let counts = all["adk_selections"].as_object().unwrap();
    let mut system = io::load(&[data("md/adk.psf"), data("md/adk_dims.dcd")]).unwrap();
    let frame = system.trajectory.frame(0).unwrap();
    let mut failures = Vec::new();
    for (expr, expected) in counts {
        let sel = Selection::parse(expr).unwrap_or_else(|e| panic!("{e}"));
        let n = sel.indices(&system.structure, Some(&frame)).len() as u64;
        if n != expected.as_u64().unwrap() {
            failures.push(format!("'{expr}': ours {n}, MDAnalysis {expected}"));
        }
    }
    assert!(counts.len() >= 12);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
