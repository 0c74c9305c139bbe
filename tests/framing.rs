//! A fit of the view frames what is drawn: a solvated protein (cobrotoxin in its 52 Å water box,
//! `tests/data/md/gromacs`) opens framed on the protein, and so does its cartoon alone; with the
//! water drawn too, or an orbital, the fit takes every atom.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use orbitfield::app::atoms::AtomStyle;
use orbitfield::app::reps::RepSpec;
use orbitfield::app::state::{AppState, Command};
use orbitfield::surface::cartoon::Style as CartoonStyle;
use std::path::PathBuf;

fn data(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(rel)
}

/// The radius of the smallest box-centred sphere around `idx`'s atoms, computed here.
fn radius_of(positions: &[[f32; 3]], idx: &[usize]) -> f32 {
    let (mut lo, mut hi) = ([f32::MAX; 3], [f32::MIN; 3]);
    for &i in idx {
        for k in 0..3 {
            lo[k] = lo[k].min(positions[i][k]);
            hi[k] = hi[k].max(positions[i][k]);
        }
    }
    let c: [f32; 3] = std::array::from_fn(|k| 0.5 * (lo[k] + hi[k]));
    idx.iter()
        .map(|&i| (0..3).map(|k| (positions[i][k] - c[k]).powi(2)).sum::<f32>().sqrt())
        .fold(0.0, f32::max)
}

#[test]
fn the_view_frames_the_atoms_drawn() {
    let mut state = AppState::new(Default::default(), orbitfield::app::default_field_service());
    state.open_system(
        "cobrotoxin".into(),
        orbitfield::io::load(&[data("md/gromacs/cobrotoxin.tpr.gz")]).unwrap(),
    );
    let doc = state.document().unwrap();
    let s = &doc.structure;
    let positions = doc.frame.positions_angstrom.clone();
    let protein: Vec<usize> = (0..s.len())
        .filter(|&i| !matches!(s.resnames[i].as_str(), "SOL" | "NA" | "CL"))
        .collect();
    let everything: Vec<usize> = (0..s.len()).collect();
    let (r_protein, r_all) = (radius_of(&positions, &protein), radius_of(&positions, &everything));
    assert!(r_protein < 0.7 * r_all, "{r_protein} {r_all}");

    let fit = |state: &AppState| state.scene_sphere().unwrap().1;
    // As opened: the water is not drawn on a box this size.
    let shown = state.shown_atoms().expect("the drawn atoms");
    assert!(shown.len() < s.len());
    assert!(
        (fit(&state) - (r_protein + 2.0)).abs() < 0.5,
        "{} against {r_protein}",
        fit(&state)
    );
    // The cartoon alone.
    let ids: Vec<_> = state.reps().list.iter().map(|r| r.id).collect();
    for id in ids {
        state.apply(Command::DeleteRep(id));
    }
    state.apply(Command::AddRep(RepSpec::cartoon("protein", CartoonStyle::Cartoon)));
    assert!((fit(&state) - (r_protein + 2.0)).abs() < 0.5, "{}", fit(&state));
    // The water drawn as well: every atom.
    state.apply(Command::AddRep(RepSpec::atoms("water", AtomStyle::Lines)));
    assert!(
        (fit(&state) - (r_all + 2.0)).abs() < 0.5,
        "{} against {r_all}",
        fit(&state)
    );
}
