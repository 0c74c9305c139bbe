//! A newcomer's first hour, driven through egui_kittest on the whole window: what a chemist who
//! knows VMD or GaussView tries first, and reads.
//!
//! - adk (tests/data/md/adk.psf + adk_dims.dcd): a molecular surface coloured by the charges'
//!   potential, then `slice z 0.1`: the slice is of the potential (kcal/mol/e), not of the
//!   surface's own dimensionless level (which drew a uniformly blue plane); a surface without
//!   colouring refuses the slice with one message, and its editor's "Slice" button is disabled.
//!   The Add menu names both potentials' slices apart ("Slice of potential" was the
//!   Poisson-Boltzmann one).
//! - threonine (tests/data/qm/threonine_hf_631gs_sph.molden.gz): labels read as the Molden file
//!   names its atoms ("C1", "O5", "H9"), not "QM1:H" for every hydrogen; a measurement on a white
//!   background is drawn in a colour that can be read on it; `frame 5` on a single geometry says
//!   "one frame"; an isovalue of -0.03 for an orbital is the pair ±0.03 (it was dropped without a
//!   word), below zero for the density is refused in words, and one beyond every value says that
//!   nothing can be drawn.
//! - The orbital panel gives the HOMO-LUMO gap beside its units (checked against the Molden file's
//!   energies) and keeps its column names above the scrolled list; for an open shell (O2, UHF) the
//!   spin, unit and gap line wraps inside the panel; HOMO and LUMO shown together (Shift+click)
//!   are both marked in the energy diagram, each in its representation's colour.
//! - Two ions from a PQR: the Poisson-Boltzmann panel names its model once (it was written twice,
//!   small then bold), and offers "Colour 1.4 Å above the surface" for a surface coloured by the
//!   potential only, not for the potential's own isosurfaces; its lengths read in Å, not "A".
//! - Undo and redo say what they took back ("undone: the labels"), not only "undone".
//! - The help window lists Escape once, with all it does.
//! - A saved session reopens with its measurements, labels and chosen background (it kept only the
//!   files, representations, frame and camera).
//! - The View section's background buttons and depth cue stay inside the left panel (the last
//!   button was cut off at its edge); the movie dialog says "1 frame".
//! - A text file opened as a molecule: the whole message fits in the window (it ran off its
//!   right edge).
//! - An exported image carries the measurement lines, values and labels the view shows (they were
//!   drawn over the window only), where the view's camera puts the atoms.
//! - A script that waited for the view reports every command it ran, not only those after the
//!   wait.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use orbitfield::app::fields::FieldChoice;
use orbitfield::app::reps::FieldStyle;
use orbitfield::app::state::{AppState, Command};
use std::path::PathBuf;

#[path = "common/journey.rs"]
mod journey;
use journey::{
    data, opened, settle_pb, slice_legend, two_ions_pqr, type_command, type_command_stepping, type_line, window,
};

/// The slice representations: (field, visible).
fn slices(state: &AppState) -> Vec<(FieldChoice, bool)> {
    state
        .reps()
        .fields()
        .filter(|(_, f)| matches!(f.style, FieldStyle::Slice(_)))
        .map(|(r, f)| (f.field, r.visible))
        .collect()
}

#[test]
fn a_slice_typed_on_a_coloured_molecular_surface_cuts_its_potential() {
    let mut harness = window(opened(&["md/adk.psf", "md/adk_dims.dcd"], true));
    harness.run();
    assert!(
        harness.state().document().is_some(),
        "{}",
        harness.state().panels.status
    );

    // A plain molecular surface: nothing to read on a slice of it.
    type_command(&mut harness, "rep delete all");
    type_command(&mut harness, "rep add surface resid 1 to 30");
    let slice_buttons = harness.get_all_by_label("Slice").collect::<Vec<_>>();
    assert_eq!(slice_buttons.len(), 1, "the surface's editor has one Slice button");
    assert!(
        slice_buttons[0].accesskit_node().is_disabled(),
        "a molecular surface's own level cannot be sliced"
    );
    let message = type_line(&mut harness, "slice z 0.1");
    let (error, text) = message.expect("the line says why");
    assert!(error, "{text}");
    assert!(
        text.contains("a molecular surface has no values to slice") && text.contains("field add pb"),
        "{text}"
    );
    assert!(slices(harness.state()).is_empty(), "no blue plane was added");
    // The failed line stays for correcting, selected: the next line typed replaces it (it was
    // appended to it, and Enter repeated the error).
    assert_eq!(harness.state().panels.console.input, "slice z 0.1");

    // Coloured by the charges' potential, the surface's slice is of that potential, in kT/e.
    type_command(&mut harness, "color 1 potential");
    type_command(&mut harness, "slice z 0.1");
    assert_eq!(
        slices(harness.state()),
        vec![(FieldChoice::Potential, true)],
        "the slice cuts the potential the surface is coloured by"
    );
    let legend = slice_legend(&mut harness);
    // Charges without radii: eps = 4r, in kcal/mol/e (as ChimeraX's coulombic).
    assert_eq!(legend.unit, "kcal/mol/e");
    assert!(legend.title.starts_with("potential ("), "{}", legend.title);
    assert!(
        legend.range[0] < 0.0 && legend.range[1] > 0.0,
        "a protein's potential has both signs: {:?}",
        legend.range
    );
    // Off again.
    type_command(&mut harness, "slice off");
    assert!(slices(harness.state()).iter().all(|(_, visible)| !visible));
}

#[test]
fn the_add_menu_names_each_potential_and_its_slice_apart() {
    let mut harness = window(opened(&["md/adk.psf", "md/adk_dims.dcd"], false));
    harness.run();
    harness.get_by_label(orbitfield::ui::add::ADD_BUTTON).click();
    harness.run();
    for label in [
        "Potential (charges)",
        "Potential (Poisson-Boltzmann)",
        "Slice of potential (charges)",
        "Slice of potential (Poisson-Boltzmann)",
    ] {
        assert!(harness.query_by_label(label).is_some(), "the Add menu offers '{label}'");
    }
    assert!(
        harness.query_by_label("Slice of potential").is_none(),
        "no slice entry leaves its potential unnamed"
    );
    assert_eq!(
        harness.state().describe_field(FieldChoice::PotentialPb { revision: 0 }),
        "potential (Poisson-Boltzmann)",
        "the representation list and field menus name the model"
    );
}

/// The atoms of a Molden file's [Atoms] section as the file names them: label and number.
fn molden_atom_names(path: &std::path::Path) -> Vec<String> {
    use std::io::Read;
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    text.lines()
        .skip_while(|l| !l.starts_with("[Atoms]"))
        .skip(1)
        .take_while(|l| !l.starts_with('['))
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            format!("{}{}", w[0], w[1])
        })
        .collect()
}

#[test]
fn a_molecules_labels_and_measurements_read_as_a_chemist_expects() {
    let mut harness = window(opened(&["qm/threonine_hf_631gs_sph.molden.gz"], false));
    harness.run();
    type_command(&mut harness, "label all");
    let st = harness.state();
    let want = molden_atom_names(&data("qm/threonine_hf_631gs_sph.molden.gz"));
    assert_eq!(want.len(), 17);
    let got: Vec<String> = st.tools.labels.atoms.iter().map(|&a| st.label_text(a)).collect();
    assert_eq!(got, want, "labels name the atoms as the Molden file does");
    type_command(&mut harness, "label format name");
    assert_eq!(harness.state().label_text(8), "H", "the name format: the element alone");
    type_command(&mut harness, "label format both");

    // A distance on a white background: its colour has a contrast of at least 3 against it (WCAG's
    // large-text threshold); the default amber has 1.5 against white.
    type_command(&mut harness, "measure distance 1 2");
    let contrast = |fg: egui::Color32, bg: [u8; 3]| {
        let lum = |c: [u8; 3]| {
            let l = c.map(|x| {
                let x = f64::from(x) / 255.0;
                if x <= 0.04045 {
                    x / 12.92
                } else {
                    ((x + 0.055) / 1.055).powf(2.4)
                }
            });
            0.2126 * l[0] + 0.7152 * l[1] + 0.0722 * l[2]
        };
        let (a, b) = (lum([fg.r(), fg.g(), fg.b()]), lum(bg));
        (a.max(b) + 0.05) / (a.min(b) + 0.05)
    };
    let on_dark = orbitfield::ui::measure::measurement_color(harness.state());
    assert!(contrast(on_dark, harness.state().settings.background_srgb()) >= 3.0);
    type_command(&mut harness, "set background white");
    let st = harness.state();
    assert_eq!(st.settings.background_srgb(), [255, 255, 255]);
    let on_white = orbitfield::ui::measure::measurement_color(st);
    let c = contrast(on_white, [255, 255, 255]);
    assert!(c >= 3.0, "measurement colour {on_white:?} on white: contrast {c:.2}");
    type_command(&mut harness, "set background #e0e0e0");
    let on_grey = orbitfield::ui::measure::measurement_color(harness.state());
    assert!(
        contrast(on_grey, [224, 224, 224]) >= 3.0,
        "a light chosen colour counts as light"
    );

    // A single geometry: "one frame", not "1 frames (0 to 0)".
    let (error, text) = type_line(&mut harness, "frame 5").expect("a message");
    assert!(error);
    assert!(
        text.ends_with("frame 5: the document has one frame (frame 0)"),
        "{text}"
    );
}

#[test]
fn an_unreadable_file_is_explained_in_full_inside_the_window() {
    let state = opened(&["qm/README.md"], false);
    assert!(state.document().is_none());
    let mut harness = window(state);
    harness.run();
    let status = harness.state().panels.status.clone();
    assert!(status.contains("unknown file format"), "{status}");
    let node = harness.get_by_label_contains("unknown file format");
    let rect = node.rect();
    assert!(
        rect.max.x <= 1280.0 && rect.min.x >= 0.0 && rect.max.y <= 800.0,
        "the message lies inside the 1280x800 window: {rect:?}"
    );
    assert!(rect.height() > 20.0, "a message this long wraps: {rect:?}");
    assert!(status.ends_with("volume (cube, dx) file"), "{status}");
}

#[test]
fn a_script_that_waited_for_the_view_reports_every_command() {
    let mut state = opened(&["qm/water_hf_631gs_sph.molden.gz"], false);
    // Four commands ran before the script waited for the view; two remain.
    let resume = orbitfield::app::console::ScriptResume {
        text: "frame 0; label all".into(),
        base_dir: data("qm"),
        file: Some(PathBuf::from("scene.ofc")),
        first_line: 5,
        skip: 0,
        done: 4,
    };
    let report = orbitfield::script::resume(&mut state, &resume).unwrap();
    assert_eq!(report.statements, 6, "the four before the wait and the two after");
    assert!(!report.waiting);
}

#[test]
fn an_isovalue_below_zero_or_beyond_the_values_is_explained() {
    let mut harness = window(opened(&["qm/threonine_hf_631gs_sph.molden.gz"], true));
    harness.run();
    let homo = harness.state().panel_field_id().expect("the HOMO is shown");
    // An orbital is drawn at +iso and -iso: "-0.03" is that pair.
    type_command(&mut harness, "iso -0.03");
    assert_eq!(harness.state().reps().field(homo).unwrap().iso.value, Some(0.03));
    let t0 = std::time::Instant::now();
    while harness.state().reps().field(homo).unwrap().pipeline.shown.is_none() {
        harness.step();
        assert!(t0.elapsed().as_secs() < 60, "the HOMO never arrived");
    }
    // Beyond every value: the panel says nothing can be drawn, and how far the values reach.
    type_command(&mut harness, "iso 5");
    harness.run();
    let notes = harness
        .query_all_by_label_contains("surface at ±5.00 a.u.: nothing to draw, the values reach only ±0.")
        .count();
    assert!(notes >= 1, "the isovalue's note says nothing is drawn");
    // The density has no negative values: one message, and the isovalue stays.
    type_command(&mut harness, "field add density");
    let density = harness.state().panel_field_id().unwrap();
    let before = harness.state().reps().field(density).unwrap().iso.value;
    let (error, text) = type_line(&mut harness, "iso -0.002").expect("a message");
    assert!(error);
    assert!(
        text.ends_with("iso -0.002: the electron density is never negative; give a value above 0"),
        "{text}"
    );
    assert_eq!(harness.state().reps().field(density).unwrap().iso.value, before);
}

#[test]
fn a_saved_session_reopens_with_its_measurements_labels_and_background() {
    let mut harness = window(opened(&["qm/threonine_hf_631gs_sph.molden.gz"], false));
    harness.run();
    type_command(&mut harness, "measure distance 1 2");
    type_command(&mut harness, "measure dihedral 5 4 3 7");
    type_command(&mut harness, "label element O");
    type_command(&mut harness, "set background #203040");
    let dir = std::env::temp_dir().join(format!("orbitfield_first_hour_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("threonine.ron");
    type_command(&mut harness, &format!("save session {}", path.display()));
    type_command(&mut harness, "close");
    type_command(&mut harness, "set background dark");
    assert!(harness.state().tools.measure.list.is_empty());

    type_command(&mut harness, &format!("open session {}", path.display()));
    let st = harness.state();
    let measured: Vec<Vec<usize>> = st.tools.measure.list.iter().map(|m| m.atoms.clone()).collect();
    // Atoms numbered from 1 in the commands, from 0 inside.
    assert_eq!(measured, vec![vec![0, 1], vec![4, 3, 2, 6]]);
    // The Molden file's oxygens are its atoms 5, 6 and 8.
    let mut labelled = st.tools.labels.atoms.clone();
    labelled.sort_unstable();
    assert_eq!(labelled, vec![4, 5, 7]);
    assert_eq!(st.settings.background_srgb(), [0x20, 0x30, 0x40]);
    assert_eq!(st.panels.status, "session: 2 representations, 2 measurements, 3 labels");
    // The Measurements panel lists both again.
    assert!(harness.query_by_label("Delete all measurements").is_some());
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_view_sections_background_and_depth_cue_fit_the_left_panel() {
    let state = opened(&["qm/threonine_hf_631gs_sph.molden.gz"], false);
    let mut harness = Harness::builder().with_size(egui::vec2(1280.0, 800.0)).build_ui_state(
        |ui, state: &mut AppState| {
            orbitfield::ui::main_ui(ui, state);
            state.apply_pending();
            // The left panel's rectangle, kept by egui under the id it derives from its name.
            let id = ui.scope_id().with_salt(egui::IdSalt::new("orbitfield_left"));
            if let Some(p) = egui::containers::panel::PanelState::load(ui.ctx(), id) {
                ui.ctx()
                    .data_mut(|d| d.insert_temp(egui::Id::unique("first_hour_left_panel"), p.outer_rect));
            }
        },
        state,
    );
    harness.run();
    // The left panel's "View" section (the menu bar has a "View" of its own, further up).
    let header_y = {
        let header = harness
            .get_all_by_label("View")
            .max_by(|a, b| a.rect().min.y.total_cmp(&b.rect().min.y))
            .unwrap();
        header.click();
        header.rect().min.y
    };
    harness.run();
    harness.run();
    let panel: egui::Rect = harness
        .ctx
        .data(|d| d.get_temp(egui::Id::unique("first_hour_left_panel")))
        .expect("the left panel is shown");
    assert!(panel.width() < 300.0, "the panel stays narrow: {panel:?}");
    let mut checked = 0;
    for label in ["Black", "White", "Grey", "Depth cue", "Dark background", "Fit"] {
        for node in harness.get_all_by_label(label) {
            let r = node.rect();
            if r.min.x >= panel.min.x && r.min.x < panel.max.x && r.min.y > header_y {
                assert!(
                    r.max.x <= panel.max.x,
                    "'{label}' runs past the left panel's edge: {r:?} in {panel:?}"
                );
                checked += 1;
            }
        }
    }
    assert!(checked >= 6, "the View section's controls were found ({checked})");
    // The depth cue's slider sits in the panel too, its value readable.
    let slider = harness.get_by_value("0.40");
    assert!(slider.rect().max.x <= panel.max.x, "{:?} in {panel:?}", slider.rect());
}

#[test]
fn the_movie_dialog_counts_one_frame_in_the_singular() {
    let mut harness = window(opened(&["qm/threonine_hf_631gs_sph.molden.gz"], false));
    harness.run();
    harness.get_by_label("File").click();
    harness.run();
    harness.get_by_label("Record movie…").click();
    harness.run();
    assert!(harness.query_by_label_contains("1 frame, 0.0 s").is_some());
    assert!(harness.query_by_label_contains("1 frames").is_none());
}

/// The orbital energies (hartree) of a Molden file's [MO] section, in file order.
fn molden_energies(path: &std::path::Path) -> Vec<f64> {
    use std::io::Read;
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("Ene="))
        .map(|v| v.trim().parse().unwrap())
        .collect()
}

#[test]
fn the_orbital_panel_gives_the_gap_and_keeps_its_column_names_in_view() {
    let mut harness = window(opened(&["qm/threonine_hf_631gs_sph.molden.gz"], false));
    harness.run();
    harness.run();
    // Threonine, C4H9NO3: 64 electrons, the HOMO is orbital 32 of the file.
    let e = molden_energies(&data("qm/threonine_hf_631gs_sph.molden.gz"));
    let gap_ev = (e[32] - e[31]) * 27.211_386_245_988;
    let want = format!("gap {gap_ev:.3} eV");
    assert!(harness.query_by_label(&want).is_some(), "the panel says '{want}'");
    // The column names sit above the scrolled list, and above the HOMO's row.
    let homo_row = harness.get_by_label("32 HOMO").rect();
    let follow = harness.get_by_label("hartree").rect();
    for name in ["orbital", "E (eV)", "occ."] {
        let r = harness.get_by_label(name).rect();
        assert!(
            r.max.y <= homo_row.min.y,
            "'{name}' above the list: {r:?} vs {homo_row:?}"
        );
        // Not scrolled away under the diagram: the diagram lies between it and the units.
        assert!(r.min.y >= follow.max.y + 150.0, "'{name}' in view: {r:?}");
        assert!(r.max.x <= 1280.0);
    }
    // Symmetry labels of C1 ("A" everywhere) say nothing, and "2.00 A" read as a length.
    assert!(harness.query_by_label("sym").is_none());
    assert!(harness.query_by_label("A").is_none());
    // In hartree, the same gap.
    harness.get_by_label("hartree").click();
    harness.run();
    let want = format!("gap {:.5} Eh", e[32] - e[31]);
    assert!(harness.query_by_label(&want).is_some(), "the panel says '{want}'");
}

#[test]
fn the_poisson_boltzmann_panel_names_its_model_once_and_offers_sampling_only_for_a_coloured_surface() {
    // Two ions 6 A apart, with charges and radii (PQR).
    let dir = std::env::temp_dir().join(format!("orbitfield_first_hour_pb_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let state = two_ions_pqr(&dir);
    let mut harness = window(state);
    harness.run();
    type_command(&mut harness, "rep delete all");
    type_command_stepping(&mut harness, "rep add surface all color pb");
    settle_pb(&mut harness);
    let legend = harness.state().pb.legend();
    assert!(legend.starts_with("Poisson-Boltzmann"), "{legend}");
    assert_eq!(
        harness.query_all_by_label(&legend).count(),
        1,
        "the model's line '{legend}' is shown once"
    );
    assert!(
        harness
            .query_by_label(orbitfield::ui::esp_model::RAMP_ABOVE_LABEL)
            .is_some(),
        "a surface coloured by the potential can take its colours outside it"
    );
    // Lengths in ångström, written so.
    assert!(harness.query_by_label("Colour 1.4 Å above the surface").is_some());
    let probe = harness.get_by_label("Probe radius");
    let value = probe.accesskit_node().value().unwrap_or_default();
    assert!(value.ends_with(" Å"), "probe radius '{value}'");
    // The potential's own isosurfaces have no colours to sample.
    type_command_stepping(&mut harness, "field add pb");
    settle_pb(&mut harness);
    assert!(
        harness
            .state()
            .panel_field_rep()
            .is_some_and(|f| orbitfield::app::pb::is_pb(f.field))
    );
    assert!(
        harness
            .query_by_label(orbitfield::ui::esp_model::RAMP_ABOVE_LABEL)
            .is_none(),
        "no sampling option for the potential's own isosurfaces"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn undo_and_redo_say_what_they_took_back() {
    let mut harness = window(opened(&["qm/threonine_hf_631gs_sph.molden.gz"], false));
    harness.run();
    type_command(&mut harness, "measure distance 1 2");
    type_command(&mut harness, "label element O");
    type_command(&mut harness, "undo");
    assert!(harness.state().tools.labels.atoms.is_empty());
    assert_eq!(
        harness.state().panels.status,
        "undone: the labels (Ctrl+Shift+Z redoes)"
    );
    type_command(&mut harness, "undo");
    assert!(harness.state().tools.measure.list.is_empty());
    assert_eq!(
        harness.state().panels.status,
        "undone: the measurements (Ctrl+Shift+Z redoes)"
    );
    type_command(&mut harness, "redo");
    assert_eq!(harness.state().tools.measure.list.len(), 1);
    assert_eq!(harness.state().panels.status, "redone: the measurements");
    // The status line shows it.
    assert!(harness.query_by_label("redone: the measurements").is_some());
}

#[test]
fn the_help_lists_each_key_once() {
    let mut harness = window(opened(&["qm/threonine_hf_631gs_sph.molden.gz"], false));
    harness.run();
    harness.state_mut().panels.show_help = true;
    harness.run();
    assert_eq!(
        harness.query_all_by_label("Escape").count(),
        1,
        "Escape has one line saying all it does"
    );
    assert!(
        harness
            .query_by_label_contains("else stop measuring or labelling")
            .is_some()
    );
}

#[test]
fn an_open_shells_spin_units_and_gap_fit_the_orbital_panel() {
    // O2, UHF: alpha and beta, eV and hartree, and the gap on the panel's first lines.
    let mut harness = window(opened(&["qm/o2_uhf_ccpvtz_sph.molden.gz"], false));
    harness.run();
    harness.run();
    let gap = harness.get_by_label_contains("gap ").rect();
    let beta = harness.get_by_label("beta").rect();
    assert!(gap.max.x <= 1280.0 && beta.max.x <= 1280.0, "{gap:?} {beta:?}");
    // The panel did not grow past the window either: its list's names are inside it.
    assert!(harness.get_by_label("occ.").rect().max.x <= 1280.0);
}

#[test]
fn homo_and_lumo_shown_together_are_both_marked_in_the_energy_diagram() {
    let mut harness = window(opened(&["qm/threonine_hf_631gs_sph.molden.gz"], false));
    harness.run();
    // Shift+click on LUMO in the orbital list: a second orbital representation.
    harness.get_by_label("33 LUMO").click_modifiers(egui::Modifiers::SHIFT);
    harness.run();
    let st = harness.state();
    let orbitals: Vec<(usize, [f32; 3])> = st
        .reps()
        .fields()
        .filter_map(|(_, f)| match f.field {
            FieldChoice::Orbital { index, .. } => Some((index, f.colors[0])),
            _ => None,
        })
        .collect();
    assert_eq!(
        orbitals.iter().map(|o| o.0).collect::<Vec<_>>(),
        vec![31, 32],
        "HOMO and LUMO"
    );
    let selected = st.doc.orbital.expect("an orbital is selected");
    for (index, rgb) in orbitals {
        let (color, width) = orbitfield::ui::orbitals::level_style(st, index, index <= 31);
        assert_eq!(width, 3.0, "orbital {} is marked", index + 1);
        if index != selected {
            let want: egui::Color32 = egui::Rgba::from_rgb(rgb[0], rgb[1], rgb[2]).into();
            assert_eq!(color, want, "orbital {} in its representation's colour", index + 1);
        }
    }
    // An orbital shown nowhere keeps the plain style.
    assert_eq!(orbitfield::ui::orbitals::level_style(st, 30, true).1, 1.5);
}

/// Up and Down step the orbital the user sees: with HOMO and LUMO as two representations, the
/// HOMO's hidden and the density selected, Up turns the shown LUMO into LUMO+1 and leaves the
/// hidden HOMO as it was.
#[test]
fn up_steps_the_shown_orbital_not_one_hidden_above_it() {
    let mut harness = window(opened(&["qm/threonine_hf_631gs_sph.molden.gz"], false));
    harness.run();
    harness.get_by_label("33 LUMO").click_modifiers(egui::Modifiers::SHIFT);
    harness.run();
    // The density added (and selected), the HOMO and the density hidden, as the list's boxes do.
    let st = harness.state_mut();
    st.push(Command::AddFieldRep(FieldChoice::Density));
    st.apply_pending();
    let ids: Vec<_> = st.reps().fields().map(|(r, _)| r.id).collect();
    assert_eq!(
        st.selected_rep_id(),
        Some(ids[2]),
        "the density is the selected representation"
    );
    st.push(Command::EditRep(ids[0], orbitfield::app::reps::RepEdit::Visible(false)));
    st.push(Command::EditRep(ids[2], orbitfield::app::reps::RepEdit::Visible(false)));
    st.apply_pending();
    harness.run();
    harness.key_press(egui::Key::ArrowUp);
    harness.run();
    let shown: Vec<(bool, FieldChoice)> = harness
        .state()
        .reps()
        .fields()
        .map(|(r, f)| (r.visible, f.field))
        .collect();
    let orbital = |index| FieldChoice::Orbital {
        spin: orbitfield::model::Spin::Alpha,
        index,
    };
    assert_eq!(shown[0], (false, orbital(31)), "the hidden HOMO is left: {shown:?}");
    assert_eq!(shown[1], (true, orbital(33)), "the shown LUMO steps up: {shown:?}");
    harness.key_press(egui::Key::ArrowDown);
    harness.key_press(egui::Key::ArrowDown);
    harness.run();
    let second = harness
        .state()
        .reps()
        .fields()
        .nth(1)
        .map(|(r, f)| (r.visible, f.field));
    assert_eq!(second, Some((true, orbital(31))), "two steps down from LUMO+1");
}

#[test]
fn an_exported_image_carries_the_measurements_and_labels_the_view_shows() {
    use orbitfield::app::draw::SceneSync;
    use orbitfield::render::{GpuScene, RenderContext};
    let rc = match RenderContext::headless(4) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("skipping: {e}");
            return;
        }
    };
    let mut scene = GpuScene::new(&rc);
    let mut sync = SceneSync::new(&rc);
    let mut harness = window(opened(&["qm/threonine_hf_631gs_sph.molden.gz"], false));
    harness.run();
    // The atoms alone on white, a C-C distance and the oxygens labelled.
    type_command(&mut harness, "rep delete 2");
    type_command(&mut harness, "set background white");
    type_command(&mut harness, "measure distance 1 2");
    type_command(&mut harness, "label element O");
    let dir = std::env::temp_dir().join(format!("orbitfield_first_hour_export_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut export = |harness: &mut Harness<'static, AppState>, name: &str, annotations: bool| {
        let st = harness.state_mut();
        let path = dir.join(name);
        st.apply(Command::ExportImage(orbitfield::app::export::ImageRequest {
            path: path.clone(),
            size_px: [480, 360],
            supersample: 1,
            transparent: false,
            legend: false,
            annotations,
        }));
        st.update_reps();
        sync.sync(&rc, &mut scene, st);
        orbitfield::app::export::service(&rc, &mut scene, st);
        image::open(&path).unwrap().to_rgba8()
    };
    // The dialog offers the option, on by default.
    harness.get_by_label("File").click();
    harness.run();
    harness.get_by_label("Export image…").click();
    harness.run();
    let option = harness.get_by_label(orbitfield::ui::export::ANNOTATIONS_LABEL);
    assert_eq!(
        option.accesskit_node().toggled(),
        Some(egui::accesskit::Toggled::True),
        "'{}' is ticked",
        orbitfield::ui::export::ANNOTATIONS_LABEL
    );
    assert!(harness.state().panels.export.image.annotations);
    let plain = export(&mut harness, "plain.png", false);
    let annotated = export(&mut harness, "annotated.png", true);
    // Where the view's camera puts the two carbons in a 480x360 image: the dashed line between
    // them is the measurement's dark amber there, and only in the annotated image.
    let st = harness.state();
    let doc = st.document().unwrap();
    let px = |atom: usize| {
        let p = glam::Vec3::from(doc.frame.positions_angstrom[atom]);
        st.view.camera.project_to_pixel(p, [480, 360]).unwrap().0
    };
    let amber = |img: &image::RgbaImage| {
        img.pixels()
            .filter(|p| {
                let [r, g, b, _] = p.0.map(i32::from);
                (r - 150).abs() < 40 && (g - 90).abs() < 40 && b < 60
            })
            .count()
    };
    assert_eq!(amber(&plain), 0, "no measurement colour without annotations");
    assert!(
        amber(&annotated) > 40,
        "the line and its value: {} pixels",
        amber(&annotated)
    );
    let (a, b) = (px(0), px(1));
    let near_line = annotated
        .enumerate_pixels()
        .filter(|(x, y, p)| {
            let [r, g, bl, _] = p.0.map(i32::from);
            let amber = (r - 150).abs() < 40 && (g - 90).abs() < 40 && bl < 60;
            // Distance of the pixel from the segment between the carbons.
            let (ax, ay, bx, by) = (a[0], a[1], b[0], b[1]);
            let (qx, qy) = (*x as f32 + 0.5, *y as f32 + 0.5);
            let t = (((qx - ax) * (bx - ax) + (qy - ay) * (by - ay)) / ((bx - ax).powi(2) + (by - ay).powi(2)))
                .clamp(0.0, 1.0);
            let d = ((ax + t * (bx - ax) - qx).powi(2) + (ay + t * (by - ay) - qy).powi(2)).sqrt();
            amber && d < 2.5
        })
        .count();
    assert!(
        near_line > 4,
        "the dashed line lies between the carbons: {near_line} pixels"
    );
    // The images differ only by what was drawn over them: dark label text on its plates.
    let darker = plain
        .pixels()
        .zip(annotated.pixels())
        .filter(|(p, q)| q.0[0] as i32 + 60 < p.0[0] as i32)
        .count();
    assert!(darker > 40, "label and value text: {darker} darker pixels");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_misspelt_or_empty_selection_is_named_in_words() {
    let mut harness = window(opened(&["md/adk.psf"], false));
    harness.run();
    assert!(
        harness.state().document().is_some(),
        "{}",
        harness.state().panels.status
    );
    let before = harness.state().reps().list.len();

    // A valid selection that matches nothing in adk (no residue is named XYZ): added, and said.
    type_command(&mut harness, "rep add licorice resname XYZ");
    assert_eq!(harness.state().reps().list.len(), before + 1);
    let status = harness.state().panels.status.clone();
    assert!(
        status.contains("'resname XYZ' matches no atoms"),
        "status line: {status}"
    );

    // A typo: refused, with the keyword it was probably meant to be.
    let shown = type_line(&mut harness, "rep add licorice protien and name CA");
    let (_, text) = shown.expect("a message under the command line");
    assert!(text.contains("did you mean 'protein'?"), "{text}");
    assert_eq!(harness.state().reps().list.len(), before + 1);
}

#[test]
fn a_failed_open_typed_in_the_command_line_is_said_once() {
    let mut harness = window(opened(&["md/adk.psf"], false));
    harness.run();
    let shown = type_line(&mut harness, "open README.md");
    let (failed, text) = shown.expect("a message under the command line");
    let status = harness.state().panels.status.clone();
    assert!(failed, "{text}");
    // Under the line, where it was typed; not again on the status line, which keeps what it said.
    assert!(text.contains("README.md: unknown file format"), "{text}");
    assert!(!status.contains("unknown file format"), "status line: {status}");
    assert_eq!(status, "adk.psf: 3341 atoms, 0 frames");
    // The error list still has it.
    assert!(
        harness
            .state()
            .panels
            .errors
            .iter()
            .any(|e| e.contains("unknown file format")),
        "{:?}",
        harness.state().panels.errors
    );
}

/// A cube opened beside its Molden file is listed under the files, with its points, and drawn by
/// the command the hover names.
#[test]
fn a_cube_opened_beside_a_wavefunction_is_listed_with_the_files() {
    let mut harness = window(opened(
        &[
            "qm/water_hf_631gs_sph.molden.gz",
            "files2/water_homo_molden_layout.cube",
        ],
        false,
    ));
    harness.run();
    harness.get_by_label("Files").click();
    harness.run();
    assert!(
        harness
            .query_by_label("water_hf_631gs_sph.molden.gz + water_homo_molden_layout.cube")
            .is_some(),
        "both files are named"
    );
    let dims = harness.state().document().unwrap().grids[0].lattice.dims;
    let name = harness.state().describe_field(FieldChoice::Volume(0));
    assert!(name.starts_with("volume 1"), "{name}");
    let volume = format!("{name} ({}×{}×{} points)", dims[0], dims[1], dims[2]);
    assert!(
        harness.query_by_label(&volume).is_some(),
        "the volume is listed: {volume}"
    );
    type_command(&mut harness, "field add volume:1");
    assert!(
        harness
            .state()
            .reps()
            .fields()
            .any(|(_, f)| f.field == FieldChoice::Volume(0)),
        "the command the hover names draws it"
    );
}
