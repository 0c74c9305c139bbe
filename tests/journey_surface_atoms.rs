//! A molecular surface coloured by its atoms, as ChimeraX colours a surface by chain and VMD's
//! QuickSurf by any colouring method: picked in the field panel's "Colour surface by" (or typed,
//! `color 1 chain`, `rep add surface protein color element`), each vertex takes the colour of the
//! atom whose van der Waals sphere lies nearest it, checked here against a search over every atom;
//! undo, the representation list, the log and a session keep it; a headless image and `render
//! --color-by chain` show the two chains of 4E43 in their two colours where the uncoloured surface
//! is grey.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use orbitfield::app::atoms::{AtomColoring, atom_colors};
use orbitfield::app::fields::FieldChoice;
use orbitfield::app::reps::{RepKind, SpecKind};
use orbitfield::app::state::AppState;
use std::path::Path;

#[path = "common/journey.rs"]
mod journey;
use journey::{data, opened, type_command, type_line, window};

const COMBO: &str = "Colour surface by";

fn surface_coloring(state: &AppState, n: usize) -> Option<AtomColoring> {
    match &state.reps().list[n - 1].kind {
        RepKind::Field(f) => f.atom_coloring,
        _ => panic!("representation {n} is not a field"),
    }
}

/// Steps the window until representation `n`'s surface has its colours by atoms (two minutes at
/// most); returns how many vertices were checked against every atom.
fn check_vertex_colours(harness: &mut Harness<'static, AppState>, n: usize, scheme: AtomColoring) -> usize {
    let t0 = std::time::Instant::now();
    loop {
        harness.step();
        let state = harness.state();
        let RepKind::Field(f) = &state.reps().list[n - 1].kind else {
            panic!("not a field");
        };
        let Some(mesh) = f.pipeline.lobes[0].clone() else {
            assert!(t0.elapsed().as_secs() < 120, "no surface: {}", state.panels.status);
            std::thread::sleep(std::time::Duration::from_millis(20));
            continue;
        };
        let Some(colors) = f.lobe_atom_colors(0, &mesh) else {
            assert!(t0.elapsed().as_secs() < 120, "no colours by atoms");
            continue;
        };
        // Every 97th vertex against the nearest sphere among all the surface's atoms.
        let doc = state.document().unwrap();
        let FieldChoice::MolSurf { selection } = f.field else {
            panic!("not a molecular surface")
        };
        let flags = orbitfield::model::select::Selection::parse(&doc.surface_selections[usize::from(selection)])
            .unwrap()
            .evaluate(&doc.structure, Some(&doc.frame));
        let (radii, _) = doc.structure.radii_or_element();
        let palette = atom_colors(&doc.structure, scheme);
        let mut checked = 0;
        for (v, c) in mesh.positions_angstrom.iter().zip(colors).step_by(97) {
            let gap = |i: usize| {
                let p = doc.frame.positions_angstrom[i];
                (0..3).map(|k| (p[k] - v[k]).powi(2)).sum::<f32>().sqrt() - radii[i]
            };
            let best = (0..flags.len())
                .filter(|&i| flags[i])
                .map(gap)
                .fold(f32::INFINITY, f32::min);
            // The atoms whose spheres lie nearest (ties within rounding) and their colours.
            let near: Vec<[u8; 4]> = (0..flags.len())
                .filter(|&i| flags[i] && gap(i) <= best + 1e-3)
                .map(|i| palette[i])
                .collect();
            assert!(near.contains(c), "vertex {v:?}: {c:?}, nearest atoms' colours {near:?}");
            checked += 1;
        }
        return checked;
    }
}

#[test]
fn a_surface_is_coloured_by_its_atoms_from_the_panel_and_the_command_line() {
    let mut harness = window(opened(&["md/4E43.pdb.gz"], true));
    harness.run();
    type_command(&mut harness, "rep delete all");
    type_command(&mut harness, "rep add surface protein");
    type_command(&mut harness, "rep select 1");
    assert_eq!(surface_coloring(harness.state(), 1), None);

    // The field panel's combo, as a user picks it.
    harness
        .query_all_by_role(egui::accesskit::Role::ComboBox)
        .find(|n| n.accesskit_node().label().as_deref() == Some(COMBO))
        .expect("the colouring combo in the field panel")
        .click();
    harness.run();
    harness.get_by_label("Chain of its atoms").click();
    harness.run();
    assert_eq!(surface_coloring(harness.state(), 1), Some(AtomColoring::Chain));
    let checked = check_vertex_colours(&mut harness, 1, AtomColoring::Chain);
    assert!(checked > 20, "{checked} vertices checked");
    let list = type_line(&mut harness, "rep list").unwrap().1;
    assert!(
        list.contains("molecular surface (protein), coloured by chain"),
        "{list}"
    );
    assert!(!list.contains("chain, coloured by"), "said once: {list}");

    // By element on the command line; undo goes back to the chains, then to one colour.
    type_command(&mut harness, "color 1 element");
    assert_eq!(surface_coloring(harness.state(), 1), Some(AtomColoring::Element));
    check_vertex_colours(&mut harness, 1, AtomColoring::Element);
    type_command(&mut harness, "undo");
    assert_eq!(surface_coloring(harness.state(), 1), Some(AtomColoring::Chain));
    type_command(&mut harness, "undo");
    assert_eq!(surface_coloring(harness.state(), 1), None);
    type_command(&mut harness, "redo");
    type_command(&mut harness, "redo");
    assert_eq!(surface_coloring(harness.state(), 1), Some(AtomColoring::Element));

    // The log says it as a command, and a session keeps it.
    let log = orbitfield::script::log::state_lines(harness.state()).join("\n");
    assert!(log.contains("rep add surface protein color element"), "{log}");
    let spec = harness.state().rep_spec(&harness.state().reps().list[0]);
    assert!(
        matches!(
            spec.kind,
            SpecKind::Field {
                color_atoms: Some(AtomColoring::Element),
                ..
            }
        ),
        "{spec:?}"
    );

    // A colour name makes the surface one colour; `none` its own colour.
    type_command(&mut harness, "color 1 chain");
    type_command(&mut harness, "color 1 orange");
    assert_eq!(surface_coloring(harness.state(), 1), None);
    type_command(&mut harness, "color 1 chain");
    type_command(&mut harness, "color 1 none");
    assert_eq!(surface_coloring(harness.state(), 1), None);
    // A word that is neither a scheme nor a colour is refused, with the choices.
    let (error, text) = type_line(&mut harness, "rep add surface protein color rainbowish").unwrap();
    assert!(
        error && text.contains("'rainbowish'") && text.contains("chain"),
        "{text}"
    );
}

/// Pixels of a headless image: colour classes of the lit pixels.
fn census(path: &Path) -> (usize, usize, usize) {
    let img = image::open(path).unwrap().to_rgba8();
    let (mut orange, mut blue, mut grey) = (0, 0, 0);
    for p in img.pixels() {
        let [r, g, b] = [p[0], p[1], p[2]].map(i32::from);
        if r.max(g).max(b) < 40 {
            continue;
        }
        if r > b + 60 && g > b + 20 {
            orange += 1;
        } else if b > r + 60 {
            blue += 1;
        } else if (r - g).abs() < 12 && (g - b).abs() < 12 {
            grey += 1;
        }
    }
    (orange, blue, grey)
}

#[test]
fn a_headless_image_shows_the_two_chains_in_their_colours() {
    if let Err(e) = orbitfield::render::RenderContext::headless(1) {
        eprintln!("skipping: {e}");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let chains = dir.path().join("chains.png");
    let plain = dir.path().join("plain.png");
    let script = dir.path().join("surface.ofc");
    std::fs::write(
        &script,
        format!(
            "open \"{}\"\nrep delete all\nrep add surface protein color chain\nsave image \"{}\" size 240x180\ncolor 1 none\nsave image \"{}\" size 240x180\n",
            data("md/4E43.pdb.gz").display(),
            chains.display(),
            plain.display()
        ),
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_orbitfield"))
        .args(["run", "--headless"])
        .arg(&script)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // Chain A orange and chain B sky blue (the categorical palette's first two), each a large
    // part of the picture; the surface in its own colour is grey.
    let (orange, blue, grey) = census(&chains);
    eprintln!("chains: orange {orange}, blue {blue}, grey {grey}");
    assert!(
        orange > 1500 && blue > 1500,
        "orange {orange}, blue {blue}, grey {grey}"
    );
    let (orange, blue, grey) = census(&plain);
    assert!(
        orange < 50 && blue < 50 && grey > 3000,
        "orange {orange}, blue {blue}, grey {grey}"
    );

    // `render --surface molsurf --color-by chain` draws the same; without --color-by, grey.
    for (color_by, coloured) in [(Some("chain"), true), (None, false)] {
        let out = dir.path().join("render.png");
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_orbitfield"));
        cmd.arg("render").arg(data("md/4E43.pdb.gz"));
        cmd.args(["--surface", "molsurf", "--sel", "protein", "--size", "240x180", "-o"])
            .arg(&out);
        if let Some(c) = color_by {
            cmd.args(["--color-by", c]);
        }
        let run = cmd.output().unwrap();
        assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
        let (orange, blue, grey) = census(&out);
        eprintln!("render {color_by:?}: orange {orange}, blue {blue}, grey {grey}");
        if coloured {
            assert!(
                orange > 500 && blue > 500,
                "render: orange {orange}, blue {blue}, grey {grey}"
            );
        } else {
            assert!(
                orange < 50 && blue < 50 && grey > 3000,
                "render: orange {orange}, blue {blue}, grey {grey}"
            );
        }
    }
}
