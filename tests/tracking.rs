//! Orbital tracking along real series (PySCF wavefunctions): the ethylene torsion (37 frames, 0..180
//! degrees) and a Born-Oppenheimer MD run of threonine (consecutive frames 0.97 fs apart).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use orbitfield::analysis::tracking::track;
use orbitfield::io;
use orbitfield::model::Spin;
use std::path::PathBuf;

#[test]
fn ethylene_pi_orbital_keeps_its_sign_through_the_torsion() {
    let system = io::load::load_embedded_demo().unwrap();
    let series = &system.wavefunctions;
    assert_eq!(series.len(), 37);
    let homo = series[0].homo(Spin::Alpha).unwrap();
    let steps = track(series, Spin::Alpha, homo).unwrap();
    assert_eq!(steps.len(), 37);
    for (f, s) in steps.iter().enumerate().skip(1) {
        println!(
            "frame {f:2}: orbital {:2} sign {:+} overlap {:.4} runner-up {:.4}",
            s.index + 1,
            s.sign,
            s.overlap,
            s.runner_up
        );
        assert!(s.overlap > 0.0, "frame {f}: overlap {}", s.overlap);
    }
    // Independent check of the sign fix: the raw index-based overlaps of consecutive frames are not
    // all positive (the SCF hands out arbitrary signs), so the test exercises the correction.
    let raw_flips = steps.iter().skip(1).filter(|s| s.sign < 0.0).count();
    println!("sign corrections: {raw_flips}");
    // Continuity is strong at every 5-degree step, crossing included.
    assert!(steps.iter().all(|s| s.overlap > 0.95 && !s.ambiguous), "{steps:?}");
    // Orbital correlation of twisted ethylene: followed through the 90-degree crossing, the bonding pi
    // orbital (HOMO at 0 degrees) becomes the antibonding pi* (LUMO) of the planar 180-degree form;
    // tracking by index would have jumped to the other orbital there.
    assert_eq!(steps[0].index, homo);
    let last_homo = series[36].homo(Spin::Alpha).unwrap();
    assert_eq!(steps[36].index, last_homo + 1, "{steps:?}");
    let crossing = steps.iter().position(|s| s.index != homo).unwrap();
    println!("index changes at frame {crossing} ({} degrees)", 5 * crossing);
    assert!(
        (17..=20).contains(&crossing),
        "the pi/pi* crossing is at 90 degrees, found frame {crossing}"
    );
}

#[test]
fn threonine_md_homo_overlaps_its_predecessor_above_0_9() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/qm/threonine_md");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    paths.sort();
    // The full 30-frame series when the shared data is beside the checkout.
    let shared = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data/qm/threonine_md");
    if let Ok(rd) = std::fs::read_dir(&shared) {
        let mut all: Vec<PathBuf> = rd.map(|e| e.unwrap().path()).collect();
        all.sort();
        if all.len() > paths.len() {
            paths = all;
        }
    }
    let system = io::load(&paths).unwrap();
    let series = &system.wavefunctions;
    assert!(series.len() >= 6);
    let homo = series[0].homo(Spin::Alpha).unwrap();
    let steps = track(series, Spin::Alpha, homo).unwrap();
    for (f, s) in steps.iter().enumerate().skip(1) {
        println!(
            "frame {f:2}: orbital {:3} overlap {:.5} runner-up {:.4}",
            s.index + 1,
            s.overlap,
            s.runner_up
        );
        assert!(s.overlap > 0.9, "frame {f}: overlap {}", s.overlap);
        assert!(!s.ambiguous);
    }
}
