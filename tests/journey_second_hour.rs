//! A second newcomer's first hour, on other inputs than the first (tests/journey_first_hour.rs):
//! what a user of VMD, ChimeraX or PyMOL tries, and what the window then shows.
//!
//! - 4E43 (tests/data/md/4E43.pdb.gz): its CONECT records name the hetero groups only, as the
//!   wwPDB writes them; the protein's own bonds are guessed as for a file without records (it had
//!   68 bonds and was drawn as loose points).
//!   Residue labels name the chain when there are several ("B:LEU10:CA"; both chains' residue
//!   10 read "LEU10:CA").
//! - The solvated GROMACS AdK (tests/data/md/adk_oplsaa.gro), wrapped atom by atom into its box:
//!   shown as written, the cartoon breaks where a residue's CA lies across the box from the next
//!   one (it drew an 80 A tube through the box). Its ligand map (ILS) with every atom starts: the TIP4P water's
//!   massless MW sites, which no force field gives van der Waals parameters, are left out and
//!   counted in the map's summary (the form refused them and asked for a selection); the Files
//!   panel's "11084 of 47681 atoms have an unknown element" says they are those sites.
//! - A folder of Molden frames (tests/data/qm/threonine_md) opens as a series, as the quoted
//!   pattern does (`open DIR` said "cannot read: Is a directory", and a pattern worked only on the
//!   command line of the shell); a folder of nothing readable is refused in words.
//! - C (or a double click on an atom) centres the view on the atom clicked last, as VMD's and
//!   PyMOL's users expect; the help window lists it (only the `center` command did it).
//! - `sidechain` selects as in VMD (checked against each amino acid's side-chain atom count), a
//!   double-quoted value reads as VMD's regular expression (`name "C.*"` selected nothing), and
//!   `helix`, `sheet`, `turn` and `coil` select by DSSP at the frame, as VMD's keywords do.
//! - A closed shell's orbitals are named without a spin ("HOMO (orbital 32)", not "..., Alpha)");
//!   an open shell's keep theirs.
//! - A cube file's values, in "(file units)", are described by the file's own title line beside
//!   their range ("Orbital value in real space (1/Bohr^3)"), the one place its unit is written;
//!   PySCF's unit for an orbital's values (a density's) is put right in the field's name.
//! - A script that opens a damaged mol2 says so once, under the command line (the status line
//!   repeated it), and what was open stays as the script left it.
//! - The RDF panel says which selection is counted around which ("'name OH2' around 'resid 10'"),
//!   which "Selection 1" and "Selection 2" did not.
//! - A ligand map that cannot start (adk's PSF, no Lennard-Jones parameters) is explained once in
//!   its form (it was written twice, the start's error under the parameters' check).
//! - A periodic structure's unit cell can be hidden ("Unit cell" in the View section and menu,
//!   `set cell off`) and shown again; it could not be hidden at all.
//! - The solvated AdK opens whole: its eight residues in pieces across the box are joined by whole
//!   box vectors, and a warning says so once; "Whole molecules" in the View section (or `set whole
//!   off`) shows the coordinates as written, with the bonds that span the box left undrawn (drawn,
//!   they would be sticks across the whole box).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use egui_kittest::kittest::{NodeT, Queryable};
use orbitfield::analysis::polymer::{Coloring, Polymer};
use orbitfield::app::state::{AppState, Command};
use orbitfield::surface::cartoon::Segment;

#[path = "common/journey.rs"]
mod journey;
#[allow(unused_imports)]
use journey::{data, opened, type_command, type_line, window};

#[test]
fn a_pdb_entrys_protein_is_bonded_beside_its_conect_records() {
    let mut harness = window(opened(&["md/4E43.pdb.gz"], false));
    harness.run();
    let doc = harness.state().document().expect("4E43 opens");
    // Every heavy atom of an amino acid has a bond: a peptide's atoms are all covalently joined.
    let mut bonded = vec![false; doc.structure.len()];
    for b in &doc.bonds {
        bonded[b[0] as usize] = true;
        bonded[b[1] as usize] = true;
    }
    let protein = orbitfield::model::select::Selection::parse("protein and not hydrogen")
        .unwrap()
        .indices(&doc.structure, Some(&doc.frame));
    let lone = protein.iter().filter(|&&i| !bonded[i as usize]).count();
    assert!(protein.len() > 1500);
    assert_eq!(
        lone,
        0,
        "{lone} of {} protein atoms drawn without a bond",
        protein.len()
    );
    assert!(doc.bonds.len() > 1600, "{} bonds", doc.bonds.len());
}

#[test]
fn a_wrapped_trajectorys_cartoon_breaks_across_the_box() {
    let mut state = opened(&["md/adk_oplsaa.gro", "md/adk_oplsaa.xtc"], false);
    // Shown as the file wrote it (it opens whole: the next journey but one).
    state.apply(Command::MakeWhole(false));
    let doc = state.document().expect("adk_oplsaa opens");
    let polymer = Polymer::new(&doc.structure);
    let positions = &doc.frame.positions_angstrom;
    let segments = polymer.segments(positions, &[], Coloring::Chain, None);
    // Consecutive CA of a peptide are 3.8 A apart (2.9 A for a cis peptide).
    let mut longest = 0f32;
    let mut residues = 0;
    for s in &segments {
        if let Segment::Protein(r) = s {
            residues += r.len();
            for w in r.windows(2) {
                let d = (0..3)
                    .map(|k| (w[0].trace[k] - w[1].trace[k]).powi(2))
                    .sum::<f32>()
                    .sqrt();
                longest = longest.max(d);
            }
        }
    }
    assert_eq!(residues, 214, "every residue of AdK is in the cartoon");
    assert!(longest < 4.5, "a cartoon step of {longest} A");
}

/// Opens "+ Add > Ligand free energy (ILS)".
fn open_ils_form(harness: &mut egui_kittest::Harness<'static, AppState>) {
    harness.get_by_label(orbitfield::ui::add::ADD_BUTTON).click();
    harness.run();
    harness.get_by_label(orbitfield::ui::ils::ILS_MENU).click();
    harness.run();
}

#[test]
fn a_four_site_waters_massless_sites_do_not_stop_a_ligand_map() {
    // adk_oplsaa.gro: TIP4P water, whose MW sites have no element and no van der Waals parameters.
    let text = std::fs::read_to_string(data("md/adk_oplsaa.gro")).unwrap();
    let sites = text
        .lines()
        .filter(|l| l.get(10..15).map(str::trim) == Some("MW"))
        .count();
    assert!(sites > 10_000, "{sites} MW sites in the file");
    let mut harness = window(opened(&["md/adk_oplsaa.gro"], false));
    harness.run();
    // The reader's "unknown element" warning says what these atoms are.
    let warnings = harness.state().document().unwrap().warnings.join("\n");
    assert!(
        warnings.contains(&format!(
            "{sites} of 47681 atoms have an unknown element: the massless sites of the water model (MW)"
        )),
        "{warnings}"
    );
    open_ils_form(&mut harness);
    // The form names where the parameters come from, and the button is there to press.
    harness.get_by_label_contains("Lennard-Jones parameters: the element table");
    assert!(
        !harness
            .get_by_label(orbitfield::ui::ils::ILS_START)
            .accesskit_node()
            .is_disabled()
    );
    assert!(harness.query_by_label_contains("leave such atoms out").is_none());
    // Started with every atom: the water's massless sites are left out, and the map says how many.
    type_command(&mut harness, "ils start probe o2 frames 0 spacing 2 orient 1 subres 1");
    let summary = harness.state().document().unwrap().ils_maps[0].summary.clone();
    type_command(&mut harness, "ils cancel");
    assert!(
        summary.contains(&format!("{sites} massless water sites left out")),
        "{summary}"
    );
    let atoms = harness.state().document().unwrap().structure.len();
    assert!(summary.contains(&format!("{} atoms", atoms - sites)), "{summary}");
    assert!(summary.contains("voxels of 2 Å"), "{summary}");
}

#[test]
fn a_failed_ligand_map_is_explained_once_in_its_form() {
    // adk's CHARMM PSF names atom types but carries no Lennard-Jones parameters.
    let mut harness = window(opened(&["md/adk.psf", "md/adk_dims.dcd"], false));
    harness.run();
    let (error, text) = type_line(&mut harness, "ils start probe xe frames 0").expect("a message");
    assert!(error && text.contains("no van der Waals"), "{text}");
    harness.state_mut().panels.console.input.clear();
    // The form, as its Add menu entry opens it (the command line keeps the keyboard's focus).
    harness.state_mut().panels.ils.form_open = true;
    harness.run();
    // The command line's message is one; the form's are the others.
    let shown = harness
        .query_all_by_label_contains("carries no van der Waals")
        .filter(|n| !n.accesskit_node().value().unwrap_or_default().starts_with("^ column"))
        .count();
    assert_eq!(shown, 1, "the form says why once");
    assert!(
        harness
            .get_by_label(orbitfield::ui::ils::ILS_START)
            .accesskit_node()
            .is_disabled()
    );
}

#[test]
fn a_folder_of_molden_frames_opens_as_a_series() {
    let folder = data("qm/threonine_md");
    let frames = std::fs::read_dir(&folder)
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().contains(".molden"))
        .count();
    assert_eq!(frames, 6);
    let mut harness = window(opened(&[], false));
    harness.run();
    type_command(&mut harness, &format!("open {}", folder.display()));
    let doc = harness.state().document().expect("the folder opens");
    assert_eq!(doc.n_frames, frames);
    assert_eq!(doc.wavefunctions.len(), frames, "one wavefunction per frame");
    assert_eq!(doc.name, "threonine_md");
    // Its HOMO is listed, and every frame has its own.
    assert!(harness.query_all_by_label_contains("HOMO").count() > 0);
    type_command(&mut harness, "frame last");
    assert_eq!(harness.state().document().unwrap().frame_index, frames - 1);
    // A pattern typed as on the command line opens the same frames; a folder of nothing readable
    // is refused in words, and what was open stays.
    type_command(
        &mut harness,
        &format!("open {}", folder.join("threonine_md_*.molden.gz").display()),
    );
    assert_eq!(harness.state().document().unwrap().n_frames, frames);
    let empty = tempfile::tempdir().unwrap();
    let (error, text) = type_line(&mut harness, &format!("open {}", empty.path().display())).expect("a message");
    assert!(error && text.contains("holds no file orbitfield reads"), "{text}");
    assert_eq!(harness.state().document().unwrap().n_frames, frames);
}

#[test]
fn the_full_stop_centres_the_view_on_the_clicked_atom_and_0_resets_it() {
    let mut harness = window(opened(&["md/adk.psf", "md/adk_dims.dcd"], false));
    harness.run();
    let start = harness.state().view.camera.target_angstrom;
    // Nothing clicked yet: the status line says how.
    harness.key_press(egui::Key::Period);
    harness.run();
    assert!(
        harness.state().panels.status.contains("click an atom, then press ."),
        "{}",
        harness.state().panels.status
    );
    assert_eq!(harness.state().view.camera.target_angstrom, start);
    // Atom 817 (a CA of the LID domain, away from the centre) clicked, then the full stop.
    harness.state_mut().push(Command::PickAtom(Some(816)));
    harness.run();
    let distance = harness.state().view.camera.distance_angstrom;
    harness.key_press(egui::Key::Period);
    harness.run();
    let atom = harness.state().document().unwrap().frame.positions_angstrom[816];
    let target = harness.state().view.camera.target_angstrom.to_array();
    assert_eq!(target, atom, "the view turns about the atom");
    assert!((start.to_array()[0] - atom[0]).abs() > 1.0, "the atom was off centre");
    assert_eq!(
        harness.state().view.camera.distance_angstrom,
        distance,
        "the zoom stays"
    );
    // The help window lists the key.
    harness.key_press(egui::Key::F1);
    harness.run();
    harness.get_by_label(". or double-click an atom");
    harness.key_press(egui::Key::Escape);
    harness.run();
    // 0 puts the view back.
    harness.key_press(egui::Key::Num0);
    harness.run();
    let back = harness.state().view.camera.target_angstrom.to_array();
    assert!(
        (0..3).all(|k| (back[k] - start.to_array()[k]).abs() < 1e-3),
        "{back:?} vs {start:?}"
    );
}

/// Heavy atoms in the side chain of each amino acid (CB onwards; CHARMM's HSD, HSE, HSP are
/// histidines).
fn side_chain_heavy_atoms(resname: &str) -> Option<usize> {
    Some(match resname {
        "GLY" => 0,
        "ALA" => 1,
        "SER" | "CYS" => 2,
        "VAL" | "THR" | "PRO" => 3,
        "LEU" | "ILE" | "ASN" | "ASP" | "MET" => 4,
        "GLN" | "GLU" | "LYS" => 5,
        "HIS" | "HSD" | "HSE" | "HSP" => 6,
        "PHE" | "ARG" => 7,
        "TYR" => 8,
        "TRP" => 10,
        _ => return None,
    })
}

#[test]
fn sidechain_and_secondary_structure_select_as_in_vmd() {
    let mut harness = window(opened(&["md/adk.psf", "md/adk_dims.dcd"], false));
    harness.run();
    // The side chains' heavy atoms, counted residue by residue from the amino-acid table.
    let doc = harness.state().document().unwrap();
    let s = &doc.structure;
    let mut want = 0;
    let mut last = None;
    for i in 0..s.len() {
        let key = (s.segids[i], s.resids[i]);
        if last != Some(key) {
            last = Some(key);
            want += side_chain_heavy_atoms(s.resnames[i].as_str()).expect("an amino acid");
        }
    }
    let (error, text) = type_line(&mut harness, "select sidechain and not hydrogen").expect("a message");
    assert!(
        !error && text.contains(&format!("selects {want} atoms")),
        "{text}, want {want}"
    );
    type_command(&mut harness, "rep add licorice sidechain and resname LYS");
    // VMD's regular expression in double quotes: the carbons of residue 1, counted by name.
    let doc = harness.state().document().unwrap();
    let carbons = (0..doc.structure.len())
        .filter(|&i| doc.structure.resids[i] == 1 && doc.structure.names[i].as_str().starts_with('C'))
        .count();
    assert!(carbons > 2);
    let (error, text) = type_line(&mut harness, "select name \"C.*\" and resid 1").expect("a message");
    assert!(!error && text.contains(&format!("selects {carbons} atoms")), "{text}");
    // Secondary structure selects as in VMD, by DSSP at the frame shown: adk's helices are most
    // of its 214 residues' CAs and none of its sheets' (tests/dssp.rs holds the codes to mkdssp).
    let count = |text: &str| -> usize {
        let at = text.find("selects ").expect("a count") + "selects ".len();
        text[at..].split_whitespace().next().unwrap().parse().unwrap()
    };
    let (error, text) = type_line(&mut harness, "select helix and name CA").expect("a message");
    assert!(!error, "{text}");
    let helix = count(&text);
    let (error, text) = type_line(&mut harness, "select sheet and name CA").expect("a message");
    assert!(!error, "{text}");
    let sheet = count(&text);
    let (_, text) = type_line(&mut harness, "select (turn or coil) and name CA").expect("a message");
    let rest = count(&text);
    assert!(helix > 60 && sheet > 10, "helix {helix}, sheet {sheet}");
    assert_eq!(helix + sheet + rest, 214, "every residue is in one class");
    // VMD's `structure` property is not a word here: the message names the ones that are.
    let (error, text) = type_line(&mut harness, "select structure H").expect("a message");
    assert!(error && text.contains("helix, alpha_helix"), "{text}");
}

#[test]
fn a_closed_shells_orbital_is_not_called_alpha() {
    // Threonine, RHF: 64 electrons, the HOMO is orbital 32.
    let mut harness = window(opened(&["qm/threonine_hf_631gs_sph.molden.gz"], false));
    harness.run();
    assert!(harness.query_by_label("HOMO (orbital 32): Isosurface").is_some());
    assert_eq!(harness.query_all_by_label_contains("Alpha").count(), 0);
    // O2, UHF: the spin is named.
    let mut harness = window(opened(&["qm/o2_uhf_ccpvtz_sph.molden.gz"], false));
    harness.run();
    assert!(harness.query_all_by_label_contains("HOMO (orbital 9, Alpha)").count() > 0);
}

#[test]
fn a_cube_files_values_are_described_in_its_own_words() {
    let path = data("engine/water_homo_24.cube");
    let title = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .trim()
        .to_string();
    assert_eq!(title, "Orbital value in real space (1/Bohr^3)");
    let mut harness = window(opened(&["engine/water_homo_24.cube"], false));
    harness.run();
    // Both signs of an orbital at a typed value, and the file's own words beside the values.
    type_command(&mut harness, "iso 0.05");
    harness.run();
    assert!(harness.query_all_by_label_contains("surface at ±0.050").count() > 0);
    assert!(
        harness
            .query_all_by_label_contains(&format!("the file says: {title}"))
            .count()
            > 0
    );
    // PySCF labels an orbital's amplitude with a density's unit: the field's name and legend give
    // the orbital's, and the panel says why it differs from the quoted title.
    let name = harness
        .state()
        .describe_field(orbitfield::app::fields::FieldChoice::Volume(0));
    assert_eq!(name, "volume 1: Orbital value in real space (bohr^-3/2)");
    assert!(
        harness
            .query_all_by_label_contains("an orbital's values are in bohr^-3/2")
            .count()
            > 0
    );
    let legends = harness.state().legends();
    assert!(
        legends.iter().all(|l| !l.title.contains("1/Bohr^3")),
        "{:?}",
        legends.iter().map(|l| &l.title).collect::<Vec<_>>()
    );
}

#[test]
fn residue_labels_of_a_several_chain_entry_name_the_chain() {
    // 4E43's residue 10 CA atoms, chain by chain, as the file's ATOM records give them.
    use std::io::Read;
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(data("md/4E43.pdb.gz")).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    let want: Vec<String> = text
        .lines()
        .filter(|l| l.starts_with("ATOM") && l[12..16].trim() == "CA" && l[22..26].trim() == "10")
        .map(|l| format!("{}:{}10:CA", &l[21..22], &l[17..20]))
        .collect();
    assert_eq!(want.len(), 2, "{want:?}");
    assert_ne!(want[0], want[1]);
    let mut harness = window(opened(&["md/4E43.pdb.gz"], false));
    harness.run();
    type_command(&mut harness, "label format both");
    type_command(&mut harness, "label resid 10 and name CA");
    let st = harness.state();
    let got: Vec<String> = st.tools.labels.atoms.iter().map(|&a| st.label_text(a)).collect();
    assert_eq!(got, want, "two chains' residue 10 are told apart");
    // The residue alone, as on a figure with one label per residue.
    type_command(&mut harness, "label format residue");
    let st = harness.state();
    let got: Vec<String> = st.tools.labels.atoms.iter().map(|&a| st.label_text(a)).collect();
    let residues: Vec<String> = want.iter().map(|w| w.trim_end_matches(":CA").to_string()).collect();
    assert_eq!(got, residues, "the residue format names no atom");
}

#[test]
fn a_script_that_opens_a_broken_file_says_so_once_and_keeps_what_was_open() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("scene.ofc");
    std::fs::write(
        &script,
        format!("frame 20\nopen {}\n", data("md/BrokenMolecule.mol2").display()),
    )
    .unwrap();
    let mut state = opened(&["md/adk.psf", "md/adk_dims.dcd"], false);
    state.panels.console.pending_script = Some(script);
    let mut harness = window(state);
    harness.run();
    let (error, text) = harness.state().panels.console.message.clone().expect("a message");
    assert!(error && text.contains("BrokenMolecule.mol2:3:"), "{text}");
    let status = harness.state().panels.status.clone();
    assert!(
        !status.contains("BrokenMolecule"),
        "said once, under the command line: {status}"
    );
    // Nothing half-done: the trajectory stays open at the frame the script reached.
    let doc = harness.state().document().unwrap();
    assert_eq!((doc.structure.len(), doc.frame_index), (3341, 20));
}

#[test]
fn the_rdf_panel_says_which_selection_is_around_which() {
    let mut harness = window(opened(&["md/tip125_tric_C36.psf", "md/tip125_tric_C36.dcd"], false));
    harness.run();
    // Water oxygens around water 10: the panel names the two as they were typed, around which.
    type_command(&mut harness, "rdf resid 10 with name OH2 rmax 4 bins 40");
    harness.run();
    assert!(harness.query_by_label("'name OH2' around 'resid 10'").is_some());
    type_command(&mut harness, "rdf cancel");
}

/// Opens the left panel's "View" section (the menu bar has a "View" of its own, further up).
fn open_view_section(harness: &mut egui_kittest::Harness<'static, AppState>) {
    harness
        .get_all_by_label("View")
        .max_by(|a, b| a.rect().min.y.total_cmp(&b.rect().min.y))
        .unwrap()
        .click();
    harness.run();
}

#[test]
fn a_periodic_boxs_unit_cell_can_be_hidden_and_shown_again() {
    let dir = tempfile::tempdir().unwrap();
    let gro = dir.path().join("water.gro");
    let mut text = String::from("one water in a 2 nm box\n    3\n");
    for (i, (name, x, y, z)) in [
        ("OW", 1.126, 1.164, 1.101),
        ("HW1", 1.190, 1.228, 1.144),
        ("HW2", 1.177, 1.084, 1.087),
    ]
    .into_iter()
    .enumerate()
    {
        text += &format!("{:>5}{:<5}{:>5}{:>5}{x:8.3}{y:8.3}{z:8.3}\n", 1, "SOL", name, i + 1);
    }
    text += "   2.00000   2.00000   2.00000\n";
    std::fs::write(&gro, text).unwrap();
    let mut state = opened(&[], false);
    state.apply(Command::OpenFiles(vec![gro]));
    let mut harness = window(state);
    harness.run();
    // The box is twelve edges of two vertices each, drawn as lines beside the molecule's own.
    let with_box = harness.state().view.lines.len();
    assert!(harness.state().settings.show_cell);
    assert!(with_box >= 24, "{with_box} line vertices with the box shown");
    open_view_section(&mut harness);
    harness.get_by_label("Unit cell").click();
    harness.run();
    harness.run();
    assert!(!harness.state().settings.show_cell, "the checkbox hides the cell");
    assert_eq!(
        harness.state().view.lines.len(),
        with_box - 24,
        "the box's edges are gone"
    );
    type_command(&mut harness, "set cell on");
    harness.run();
    assert!(harness.state().settings.show_cell);
    assert_eq!(harness.state().view.lines.len(), with_box, "the box is drawn again");
    // A session keeps the choice.
    type_command(&mut harness, "set cell off");
    harness.run();
    let session = harness.state().session().expect("a document is open");
    assert!(!session.show_cell);
}

/// The longest bond drawn: cylinders from atom to atom, or lines in half-bond segments (so a line
/// segment counts double).
fn longest_drawn_bond(state: &AppState) -> f32 {
    let len = |a: [f32; 3], b: [f32; 3]| (0..3).map(|k| (a[k] - b[k]).powi(2)).sum::<f32>().sqrt();
    let cylinders = state
        .view
        .cylinders
        .iter()
        .map(|c| len(c.a_angstrom, c.b_angstrom))
        .fold(0f32, f32::max);
    let lines = state
        .view
        .lines
        .chunks_exact(2)
        .map(|s| 2.0 * len(s[0].position_angstrom, s[1].position_angstrom))
        .fold(0f32, f32::max);
    cylinders.max(lines)
}

#[test]
fn a_protein_written_in_pieces_across_its_box_is_made_whole_and_can_be_shown_as_written() {
    let state = opened(&["md/adk_oplsaa.gro", "md/adk_oplsaa.xtc"], false);
    let mut harness = egui_kittest::Harness::builder()
        .with_size(egui::vec2(1280.0, 800.0))
        .build_ui_state(
            |ui, state: &mut AppState| {
                orbitfield::ui::main_ui(ui, state);
                state.apply_pending();
                state.update_reps();
                // The left panel's rectangle, kept by egui under the id it derives from its name.
                let id = ui.scope_id().with_salt(egui::IdSalt::new("orbitfield_left"));
                if let Some(p) = egui::containers::panel::PanelState::load(ui.ctx(), id) {
                    ui.ctx()
                        .data_mut(|d| d.insert_temp(egui::Id::unique("second_hour_left_panel"), p.outer_rect));
                }
            },
            state,
        );
    harness.run();
    let written = orbitfield::io::load(&[data("md/adk_oplsaa.gro"), data("md/adk_oplsaa.xtc")])
        .unwrap()
        .trajectory
        .frame(0)
        .unwrap();
    let ca_steps = |state: &AppState| -> f32 {
        let doc = state.document().unwrap();
        let ca = orbitfield::model::select::Selection::parse("protein and name CA")
            .unwrap()
            .indices(&doc.structure, Some(&doc.frame));
        assert_eq!(ca.len(), 214);
        let p = &doc.frame.positions_angstrom;
        ca.windows(2)
            .map(|w| {
                let (a, b) = (p[w[0] as usize], p[w[1] as usize]);
                (0..3).map(|k| (a[k] - b[k]).powi(2)).sum::<f32>().sqrt()
            })
            .fold(0f32, f32::max)
    };
    // Opened whole, and told so once among the document's warnings.
    assert!(harness.state().settings.make_whole);
    let warnings = harness.state().document().unwrap().warnings.join("\n");
    assert!(
        warnings.contains("molecules are made whole in every frame"),
        "{warnings}"
    );
    assert!(ca_steps(harness.state()) < 4.3, "the chain is one piece");
    type_command(&mut harness, "set cell off");
    harness.run();
    let longest = longest_drawn_bond(harness.state());
    assert!(longest > 0.5 && longest < 2.6, "longest bond drawn {longest} A");
    // The View section's checkbox shows the coordinates as the file wrote them.
    open_view_section(&mut harness);
    let panel: egui::Rect = harness
        .ctx
        .data(|d| d.get_temp(egui::Id::unique("second_hour_left_panel")))
        .expect("the left panel is shown");
    let checkbox = harness.get_by_label("Whole molecules");
    let r = checkbox.rect();
    assert!(
        panel.contains(r.min) && r.max.x <= panel.max.x && r.max.y <= panel.max.y,
        "'Whole molecules' {r:?} outside the left panel {panel:?}"
    );
    assert_eq!(
        r.min.x,
        harness.get_by_label("Unit cell").rect().min.x,
        "aligned with 'Unit cell'"
    );
    checkbox.click();
    harness.run();
    harness.run();
    let state = harness.state();
    assert!(!state.settings.make_whole);
    assert_eq!(state.document().unwrap().frame, written, "frame 0 as written");
    assert!(ca_steps(state) > 20.0, "as written, the chain lies in pieces");
    // Bonds spanning the box are not drawn across it.
    let longest = longest_drawn_bond(state);
    assert!(longest < 2.6, "a bond drawn {longest} A long across the box");
    // The command joins them again, on the next frame too, and a session keeps the choice.
    type_command(&mut harness, "set whole on");
    harness.run();
    assert!(ca_steps(harness.state()) < 4.3);
    type_command(&mut harness, "frame 1");
    harness.run();
    assert_eq!(harness.state().document().unwrap().frame_index, 1);
    assert!(ca_steps(harness.state()) < 4.3, "frame 1 is whole");
    type_command(&mut harness, "set whole off");
    let session = harness.state().session().expect("a document is open");
    assert!(!session.make_whole);
}
