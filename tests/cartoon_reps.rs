//! Cartoon representations in the viewer's representation list, on the adk trajectory: the editor
//! adds one, its mesh follows the frame (built in the update loop, or on the cartoon thread with the
//! same result), meshes are cached per frame, style and colouring edits rebuild it, and the
//! secondary structure it draws is the one DSSP assigns to that frame.

#![cfg(feature = "gui")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use egui_kittest::kittest::Queryable;
use orbitfield::analysis::polymer::{Coloring, Polymer, secondary_structure_color};
use orbitfield::app::reps::{RepEdit, RepKind};
use orbitfield::app::state::{AppState, Command};
use orbitfield::surface::MeshData;
use orbitfield::surface::cartoon::{CartoonParams, Style};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[path = "common/adk_state.rs"]
mod adk_state;
use adk_state::{adk, reps_editor};

/// The cartoon representation's shown mesh and the frame it is of.
fn shown(state: &AppState) -> Option<(usize, Arc<MeshData>)> {
    let (_, c) = state.reps().cartoons().next()?;
    c.pipeline
        .shown
        .as_ref()
        .and_then(|(k, m)| Some((k.frame, Arc::clone(m.mesh()?))))
}

/// The cartoon of the current frame built directly from the document.
fn direct(state: &AppState, style: Style, coloring: Coloring) -> MeshData {
    let doc = state.document().unwrap();
    let polymer = Polymer::new(&doc.structure);
    let params = CartoonParams {
        style,
        ..CartoonParams::for_residue_count(polymer.residue_count())
    };
    polymer.mesh(&doc.frame.positions_angstrom, coloring, None, &params).1
}

/// Runs the update loop until the cartoon of `frame` is shown (at most 20 s).
fn wait_for(state: &mut AppState, frame: usize) -> Arc<MeshData> {
    let start = Instant::now();
    loop {
        state.update_reps();
        if let Some((f, m)) = shown(state)
            && f == frame
        {
            return m;
        }
        assert!(start.elapsed() < Duration::from_secs(20), "no cartoon of frame {frame}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn the_editor_adds_a_cartoon_that_follows_the_frames() {
    let mut state = adk();
    state.panels.new_selection = "protein".into();
    let mut harness = reps_editor(state);
    harness.run();
    harness.get_by_label(orbitfield::ui::add::ADD_BUTTON).click();
    harness.run();
    harness.get_by_label("Cartoon").click();
    harness.run();
    let mut state = harness.into_state();
    let (rep, c) = state.reps().cartoons().next().expect("a cartoon representation");
    assert_eq!(state.rep_label(rep), "protein: Cartoon");
    assert_eq!((c.style, c.coloring), (Style::Cartoon, Coloring::SecondaryStructure));
    let id = rep.id;

    // Built in the update loop (no cartoon thread): the frame's cartoon, as built directly.
    let m0 = wait_for(&mut state, 0);
    let (_, c) = state.reps().cartoons().next().unwrap();
    assert_eq!(c.residues, 214, "adk's residues");
    assert_eq!(*m0, direct(&state, Style::Cartoon, Coloring::SecondaryStructure));
    assert!(m0.indices.len() > 10_000);

    // Its colours are those of DSSP's classes on this frame: helices (magenta) and strands (yellow).
    let has = |m: &MeshData, c: [u8; 4]| m.colors_rgba8.contains(&c);
    use orbitfield::analysis::dssp::SecondaryStructure as Ss;
    assert!(has(&m0, secondary_structure_color(Ss::AlphaHelix)));
    assert!(has(&m0, secondary_structure_color(Ss::Strand)));

    // Another frame: another mesh; the first frame comes back from the cache (the same mesh).
    state.apply(Command::SetFrame(40));
    let m40 = wait_for(&mut state, 40);
    assert_ne!(m40.positions_angstrom, m0.positions_angstrom);
    assert_eq!(*m40, direct(&state, Style::Cartoon, Coloring::SecondaryStructure));
    state.apply(Command::SetFrame(0));
    let again = wait_for(&mut state, 0);
    assert!(Arc::ptr_eq(&again, &m0), "frame 0's mesh is taken from the cache");
    // Nothing is in flight: a frame shown from the cache is not waited for (a movie or a script
    // waited for ever when it was).
    assert!(!state.busy(), "frame 0 from the cache after frame 40 was built");

    // On the cartoon thread: the same meshes, per frame.
    assert!(state.build_cartoons_off_thread());
    for frame in [10, 97, 11] {
        state.apply(Command::SetFrame(frame));
        let m = wait_for(&mut state, frame);
        assert_eq!(
            *m,
            direct(&state, Style::Cartoon, Coloring::SecondaryStructure),
            "frame {frame}"
        );
    }
    // Back to a frame built on the thread: shown from the cache, nothing waited for.
    state.apply(Command::SetFrame(97));
    wait_for(&mut state, 97);
    assert!(
        !state.busy(),
        "frame 97 from the cache after frame 11 was built on the thread"
    );

    // Style and colouring edits rebuild it.
    state.apply(Command::EditRep(id, RepEdit::CartoonStyle(Style::Tube)));
    state.apply(Command::EditRep(id, RepEdit::CartoonColoring(Coloring::Chain)));
    let start = Instant::now();
    let tube = loop {
        state.update_reps();
        let (_, c) = state.reps().cartoons().next().unwrap();
        if let Some((k, m)) = &c.pipeline.shown
            && k.style == Style::Tube
            && k.coloring == Coloring::Chain
            && let Some(m) = m.mesh()
        {
            break Arc::clone(m);
        }
        assert!(start.elapsed() < Duration::from_secs(20), "no tube");
        std::thread::sleep(Duration::from_millis(5));
    };
    assert_eq!(*tube, direct(&state, Style::Tube, Coloring::Chain));
    let rep = state.reps().list.iter().find(|r| r.id == id).unwrap();
    assert_eq!(state.rep_label(rep), "protein: Tube");

    // A selection of no polymer residues gives an empty cartoon, not an error.
    state.apply(Command::EditRep(id, RepEdit::Selection("resname SOL".into())));
    let start = Instant::now();
    loop {
        state.update_reps();
        let (_, c) = state.reps().cartoons().next().unwrap();
        if c.residues == 0
            && c.pipeline
                .shown
                .as_ref()
                .and_then(|(_, m)| m.mesh())
                .is_some_and(|m| m.indices.is_empty())
        {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(20), "no empty cartoon");
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(matches!(
        state.reps().list.iter().find(|r| r.id == id).map(|r| &r.kind),
        Some(RepKind::Cartoon(_))
    ));
}
