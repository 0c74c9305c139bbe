//! Colouring by B-factor shows its scale, as ChimeraX's `color bfactor` key does: a legend from
//! blue to red whose ends are the 2nd and 98th percentiles of the B-factors coloured (Å²), read
//! here from 4E43's ATOM/HETATM records: every atom's for atoms, the C-alphas' for a cartoon.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use orbitfield::app::state::AppState;
use std::io::Read;

#[path = "common/journey.rs"]
mod journey;

/// (atom name, B-factor) of the first model's ATOM and HETATM records.
fn bfactors() -> Vec<(String, f64)> {
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(journey::data("md/4E43.pdb.gz")).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    text.lines()
        .take_while(|l| !l.starts_with("ENDMDL"))
        .filter(|l| l.starts_with("ATOM") || l.starts_with("HETATM"))
        .map(|l| (l[12..16].trim().to_string(), l[60..66].trim().parse().unwrap()))
        .collect()
}

/// The values at the 2nd and 98th percentiles (nearest rank on the sorted values).
fn percentiles(mut v: Vec<f64>) -> [f64; 2] {
    v.sort_by(f64::total_cmp);
    let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
    [at(0.02), at(0.98)]
}

fn bfactor_legend(state: &AppState) -> Option<orbitfield::app::values::Legend> {
    state.legends().into_iter().find(|l| l.title.contains("B-factor"))
}

#[test]
fn colouring_by_b_factor_shows_its_scale() {
    let records = bfactors();
    let mut harness = journey::window(journey::opened(&["md/4E43.pdb.gz"], false));
    harness.run();
    assert!(
        bfactor_legend(harness.state()).is_none(),
        "no legend before colouring by B-factor"
    );

    journey::type_command(&mut harness, "rep add cartoon protein color beta");
    harness.run();
    let t0 = std::time::Instant::now();
    while bfactor_legend(harness.state()).is_none() {
        assert!(t0.elapsed().as_secs() < 60, "the cartoon's legend never showed");
        harness.step();
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let legend = bfactor_legend(harness.state()).unwrap();
    let ca: Vec<f64> = records.iter().filter(|(n, _)| n == "CA").map(|(_, b)| *b).collect();
    let want = percentiles(ca);
    assert!(legend.title.starts_with("cartoon"), "{}", legend.title);
    assert_eq!(legend.unit, "Å²");
    for k in 0..2 {
        assert!(
            (legend.range[k] - want[k]).abs() < 1e-3,
            "{:?} against {want:?}",
            legend.range
        );
    }

    journey::type_command(&mut harness, "rep modify 1 color beta");
    harness.run();
    let legend = bfactor_legend(harness.state()).unwrap();
    let want = percentiles(records.iter().map(|(_, b)| *b).collect());
    assert!(legend.title.starts_with("atoms"), "{}", legend.title);
    for k in 0..2 {
        assert!(
            (legend.range[k] - want[k]).abs() < 1e-3,
            "{:?} against {want:?}",
            legend.range
        );
    }
    // Low B-factors blue, high red: the bar's ends.
    let [lo, hi] = [legend.bar_rgb(0.0), legend.bar_rgb(1.0)];
    assert!(lo[2] > lo[0] && hi[0] > hi[2], "{lo:?} .. {hi:?}");
}
