//! An orbital animated by index through a wavefunction series keeps its phase: where an SCF
//! returned the orbital with the other sign, the viewer swaps its lobes' colours, so consecutive
//! frames' drawn orbitals overlap positively. Checked on the embedded demo's series (the ethylene
//! torsion, whose HOMO changes sign along it) opened as files are, with the analytic cross overlap
//! of consecutive frames' basis sets.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use orbitfield::analysis::tracking::cross_overlap;
use orbitfield::app::state::{AppState, Command};
use orbitfield::model::Spin;

#[test]
fn the_demo_s_homo_keeps_its_phase_from_frame_to_frame() {
    let mut state = AppState::new(Default::default(), orbitfield::app::default_field_service());
    // The demo's series opened as a user's files (the demo itself follows its orbital).
    state.open_system("twist".into(), orbitfield::io::load::load_embedded_demo().unwrap());
    assert!(state.doc.follow.is_none());
    let homo = state.homo_index(Spin::Alpha).unwrap();
    let t0 = std::time::Instant::now();
    while state.phase_pending() || state.doc.phase.is_none() {
        state.update_reps();
        assert!(t0.elapsed().as_secs() < 60, "the phase never arrived");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let wfs = state.document().unwrap().wavefunctions.clone();
    let n = wfs.len();
    assert!(n > 30);
    let mut drawn = Vec::new();
    let id = state.orbital_rep_id().unwrap();
    let shown_frame = |state: &AppState| {
        state
            .reps()
            .field(id)
            .and_then(|f| f.pipeline.shown_key())
            .map(|k| k.frame)
    };
    let sign = |state: &AppState| if state.follow_flips_sign() { -1.0 } else { 1.0 };
    for frame in 0..n {
        let before = sign(&state);
        state.apply(Command::SetFrame(frame));
        // Until the new frame's orbital is drawn, its colours are the drawn frame's: a frame's
        // phase never colours another frame's surfaces.
        if shown_frame(&state) != Some(frame) {
            assert_eq!(
                sign(&state),
                before,
                "frame {frame}: colours swapped before its orbital was drawn"
            );
        }
        let t0 = std::time::Instant::now();
        while shown_frame(&state) != Some(frame) {
            state.update_reps();
            assert!(t0.elapsed().as_secs() < 60, "frame {frame} never drawn");
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        drawn.push(sign(&state));
    }
    let mut raw_flips = 0;
    for k in 1..n {
        let (a, b) = (&wfs[k - 1], &wfs[k]);
        let s = cross_overlap(&a.basis, &b.basis);
        let ca = a.alpha.orbital(homo).unwrap();
        let cb = b.alpha.orbital(homo).unwrap();
        let nb = cb.len();
        let o: f64 = (0..ca.len())
            .map(|m| ca[m] * (0..nb).map(|j| s[m * nb + j] * cb[j]).sum::<f64>())
            .sum();
        if o < 0.0 {
            raw_flips += 1;
        }
        assert!(
            drawn[k - 1] * drawn[k] * o > 0.0,
            "frames {} and {k}: drawn with signs {} and {}, overlap as read {o}",
            k - 1,
            drawn[k - 1],
            drawn[k]
        );
    }
    assert!(raw_flips > 0, "the demo's HOMO changes sign somewhere as read");
}
