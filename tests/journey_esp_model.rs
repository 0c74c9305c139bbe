//! Journey of the electrostatic model, driven through egui_kittest on the whole window's UI: open
//! adk (tests/data/md/adk.psf + adk_dims.dcd: CHARMM charges, no radii), add its molecular surface
//! coloured by the potential through the "+ Add" menu, and see the default a biophysicist expects:
//! eps = 4r at +-10 kcal/mol/e (ChimeraX's `coulombic`), with a legend naming the model, red
//! negative and blue positive. Then the field panel's "Electrostatic model" combo switches to
//! Debye-Hueckel (+-5 kT/e) and to Poisson-Boltzmann, and the legends and colours follow; the
//! "Potential (Poisson-Boltzmann)" field shows two lobes at -1 and +1 kT/e, red and blue.
//!
//! The values at a few vertices are held to the screened Coulomb formulas summed here in f64 over
//! the PSF's charges: eps = 4r is `q / (4 r_A r)`, Debye-Hueckel `q exp(-kappa r) / (eps_out r)` with
//! kappa from `kappa^2 = 2 I N_A 1000 e^2 / (eps0 eps_out k_B T)` (CODATA constants written here).
//! Fields are computed by the CPU engine inline on a small lattice, the Poisson-Boltzmann solve on
//! the CPU engine's worker at 2 A (a debug build shares its cores with other tests).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use orbitfield::app::esp_model::EspModel;
use orbitfield::app::fields::{FieldBackend, FieldChoice, FieldService, InlineBackend};
use orbitfield::app::reps::RepId;
use orbitfield::app::settings::Settings;
use orbitfield::app::state::{AppState, Command};
use orbitfield::compute::pb::PbEngine;
use std::time::{Duration, Instant};

#[path = "common/adk_state.rs"]
mod adk_state;
use adk_state::data;

const BOHR_PER_ANGSTROM: f64 = 1.0 / 0.529_177_210_903;
/// hartree/e in kcal/mol/e (CODATA 2018 hartree energy, 4184 J/kcal, Avogadro's number).
const KCAL_PER_MOL_PER_HARTREE: f64 = 4.359_744_722_207_1e-18 * 6.022_140_76e23 / 4184.0;

/// A fresh state whose fields are computed inline, on small lattices.
fn with_engines() -> AppState {
    let backend = orbitfield::app::blocking_engine().map(|e| Box::new(InlineBackend::new(e)) as Box<dyn FieldBackend>);
    let settings = Settings {
        lattice_points: 32,
        potential_spacing_angstrom: 4.0,
        ..Settings::default()
    };
    AppState::new(
        settings,
        FieldService::new(backend, orbitfield::app::default_extractor()),
    )
}

fn adk_with_engines() -> AppState {
    let mut state = with_engines();
    state.pb.engine = PbEngine::Cpu;
    state.pb.spacing_angstrom = 2.0;
    // The van der Waals dielectric boundary keeps the debug build's solves short.
    state.pb.params.probe_angstrom = 0.0;
    state.apply(Command::OpenFiles(vec![data("md/adk.psf"), data("md/adk_dims.dcd")]));
    assert!(state.document().is_some(), "{}", state.panels.status);
    state
}

fn window(state: AppState) -> Harness<'static, AppState> {
    Harness::builder().with_size(egui::vec2(1280.0, 1000.0)).build_ui_state(
        |ui, state: &mut AppState| {
            orbitfield::ui::main_ui(ui, state);
            state.apply_pending();
            state.update_reps();
        },
        state,
    )
}

/// Runs frames until `done` holds, at most two minutes.
fn run_until(harness: &mut Harness<'static, AppState>, what: &str, done: impl Fn(&AppState) -> bool) {
    let t0 = Instant::now();
    while !done(harness.state()) {
        harness.step();
        assert!(t0.elapsed() < Duration::from_secs(120), "{what} never happened");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// "+ Add", the selection typed, "Molecular surface coloured by potential": the surface's id.
fn add_potential_surface(harness: &mut Harness<'static, AppState>, selection: &str) -> RepId {
    harness.get_by_label(orbitfield::ui::add::ADD_BUTTON).click();
    harness.run();
    harness.get_by_label("Selection").set_text_value_accesskit(selection);
    harness.run();
    let entry = orbitfield::ui::add::charges_surface_entry(harness.state().esp.model);
    harness.get_by_label(&entry).click();
    harness.run_steps(4);
    harness
        .state()
        .reps()
        .fields()
        .find(|(_, f)| matches!(f.field, FieldChoice::MolSurf { .. }))
        .map(|(r, _)| r.id)
        .expect("a molecular surface was added")
}

/// Picks `item` in the field panel's "Electrostatic model" combo.
fn choose_model(harness: &mut Harness<'static, AppState>, item: &str) {
    harness
        .query_all_by_role(egui::accesskit::Role::ComboBox)
        .find(|n| n.accesskit_node().label().as_deref() == Some(orbitfield::ui::esp_model::MODEL_LABEL))
        .expect("the model combo in the field panel")
        .click();
    harness.run();
    harness
        .query_all_by_label(item)
        .last()
        .unwrap_or_else(|| panic!("{item} in the combo"))
        .click();
    harness.run_steps(4);
}

/// The f64 screened sum of the PSF's charges at `p` (Angstrom) in hartree/e: `kernel(r_angstrom)`
/// is the potential of a unit charge in e/Angstrom.
fn screened_sum(charges: &[f32], positions: &[[f32; 3]], p: [f32; 3], kernel: impl Fn(f64) -> f64) -> f64 {
    let mut v = 0.0;
    for (q, a) in charges.iter().zip(positions) {
        let r = (0..3)
            .map(|k| (f64::from(p[k]) - f64::from(a[k])).powi(2))
            .sum::<f64>()
            .sqrt();
        v += f64::from(*q) * kernel(r);
    }
    // e/Angstrom to hartree/e (e/bohr).
    v / BOHR_PER_ANGSTROM
}

/// Waits for the surface's values at its vertices of the current frame and checks `samples`
/// vertices against `kernel`'s f64 sum; returns the values of all vertices.
fn check_vertex_values(
    harness: &mut Harness<'static, AppState>,
    id: RepId,
    what: &str,
    kernel: impl Fn(f64) -> f64,
) -> Vec<f32> {
    check_vertex_values_at(harness, id, what, 0.0, kernel)
}

/// As [`check_vertex_values`], the sums taken `offset` Angstrom outside along the normals.
fn check_vertex_values_at(
    harness: &mut Harness<'static, AppState>,
    id: RepId,
    what: &str,
    offset: f32,
    kernel: impl Fn(f64) -> f64,
) -> Vec<f32> {
    run_until(harness, &format!("{what} colours"), |st| {
        st.reps()
            .field(id)
            .is_some_and(|f| f.color_shows_frame(0) && f.vertex_values().is_some())
    });
    let st = harness.state();
    let f = st.reps().field(id).unwrap();
    let doc = st.document().unwrap();
    let charges = doc.structure.charges_e.clone().unwrap();
    let positions = doc.frame.positions_angstrom.clone();
    let mesh = f.pipeline.lobes[0].as_ref().expect("the surface");
    let values = f.vertex_values().unwrap()[0].as_ref().unwrap();
    assert_eq!(values.len(), mesh.positions_angstrom.len());
    let n = values.len();
    let mut worst = 0.0f64;
    let mut scale = 0.0f64;
    for k in 0..8 {
        let i = k * (n - 1) / 7;
        let (p, n) = (mesh.positions_angstrom[i], mesh.normals[i]);
        let at = std::array::from_fn(|k| p[k] + offset * n[k]);
        let want = screened_sum(&charges, &positions, at, &kernel);
        worst = worst.max((f64::from(values[i]) - want).abs());
        scale = scale.max(want.abs());
    }
    println!("{what}: {n} vertices, 8 checked, max |diff| {worst:.2e} of max |V| {scale:.2e} hartree/e");
    assert!(scale > 0.0 && worst <= 1e-5 * scale, "{what}: {worst} vs {scale}");
    values.to_vec()
}

/// The legend of the surface's colouring.
fn surface_legend(st: &AppState) -> orbitfield::app::values::Legend {
    st.legends()
        .into_iter()
        .find(|l| l.title.starts_with("surface coloured by"))
        .unwrap_or_else(|| {
            panic!(
                "a surface legend: {:?}",
                st.legends().iter().map(|l| l.title.clone()).collect::<Vec<_>>()
            )
        })
}

/// Red negative, blue positive: values beyond the range's ends take its end colours.
fn check_colours(st: &AppState, values: &[f32]) {
    let range = st.reps().fields().find_map(|(_, f)| f.coloring?.range).unwrap();
    let map = st.settings.colormap.for_values(true);
    let colour = |v: f32| map.sample((v - range[0]) / (range[1] - range[0]));
    // Values beyond a quarter of the range on either side.
    let strong = |v: f32| v < 0.25 * range[0] || v > 0.25 * range[1];
    let below = values.iter().filter(|&&v| v < 0.25 * range[0]).count();
    let above = values.iter().filter(|&&v| v > 0.25 * range[1]).count();
    println!(
        "{below} vertices below a quarter of the range {range:?}, {above} above, of {}",
        values.len()
    );
    assert!(below > 0 && above > 0, "both signs on adk's surface");
    for &v in values.iter().filter(|&&v| strong(v)).take(200) {
        let [r, _, b, _] = colour(v);
        if v < 0.0 {
            assert!(r > b + 20, "negative {v} is red: {r} {b}");
        } else {
            assert!(b > r + 20, "positive {v} is blue: {r} {b}");
        }
    }
}

#[test]
fn adk_surface_starts_at_eps_4r_and_the_panel_switches_to_debye_and_poisson_boltzmann() {
    let mut harness = window(adk_with_engines());
    harness.run();
    assert!(
        matches!(harness.state().esp.model, EspModel::DistanceDependent { slope_per_angstrom } if slope_per_angstrom == 4.0),
        "charges without radii start at eps = 4r: {:?}",
        harness.state().esp.model
    );

    // + Add > Molecular surface coloured by potential, of resid 1 to 60.
    let id = add_potential_surface(&mut harness, "resid 1 to 60");

    // eps = 4r: q / (4 r r) with r in Angstrom, at +-10 kcal/mol/e.
    let values = check_vertex_values(&mut harness, id, "eps = 4r", |r| 1.0 / (4.0 * r * r));
    {
        let st = harness.state();
        let c = st.reps().field(id).unwrap().coloring.unwrap();
        assert_eq!(c.source, FieldChoice::Potential);
        let r = c.range.unwrap();
        assert!(
            (f64::from(r[1]) * KCAL_PER_MOL_PER_HARTREE - 10.0).abs() < 1e-4 && r[0] == -r[1],
            "{r:?}"
        );
        let legend = surface_legend(st);
        println!("{}: {:?} {}", legend.title, legend.range, legend.unit);
        assert!(legend.title.contains("eps = 4r"), "{}", legend.title);
        assert_eq!(legend.unit, "kcal/mol/e");
        assert!((legend.range[1] - 10.0).abs() < 1e-3 && (legend.range[0] + 10.0).abs() < 1e-3);
        check_colours(st, &values);
    }

    // The colours 1.4 A above the surface (PyMOL's surface_ramp_above_mode), then on it again.
    harness
        .get_by_label(orbitfield::ui::esp_model::RAMP_ABOVE_LABEL)
        .click();
    harness.run_steps(4);
    assert!(harness.state().esp.ramp_above);
    let above = check_vertex_values_at(&mut harness, id, "eps = 4r, 1.4 A above", 1.4, |r| 1.0 / (4.0 * r * r));
    assert!(
        surface_legend(harness.state())
            .title
            .contains("1.4 Å above the surface")
    );
    // (A surface of part of the protein: outside it may lie other residues, so not always weaker.)
    let moved = above
        .iter()
        .zip(&values)
        .filter(|(a, b)| (**a - **b).abs() > 0.01 * b.abs().max(1e-4))
        .count();
    println!("{moved} of {} vertices' values changed by more than 1 %", values.len());
    assert!(moved > values.len() / 2, "the values are taken elsewhere");
    harness
        .get_by_label(orbitfield::ui::esp_model::RAMP_ABOVE_LABEL)
        .click();
    harness.run_steps(4);
    assert!(!harness.state().esp.ramp_above);

    // Debye-Hueckel through the panel: 0.15 M, eps 78.54, 298.15 K, at +-5 kT/e.
    choose_model(&mut harness, EspModel::debye().kind_name());
    assert!(matches!(harness.state().esp.model, EspModel::DebyeHuckel { .. }));
    let e: f64 = 1.602_176_634e-19;
    let kappa2_per_m2 =
        2.0 * 0.15 * 1000.0 * 6.022_140_76e23 * e * e / (8.854_187_812_8e-12 * 78.54 * 1.380_649e-23 * 298.15);
    let kappa = kappa2_per_m2.sqrt() * 1e-10;
    assert!((1.0 / kappa - 7.85).abs() < 0.02, "Debye length {}", 1.0 / kappa);
    let debye = check_vertex_values(&mut harness, id, "Debye-Hueckel", |r| (-kappa * r).exp() / (78.54 * r));
    {
        let st = harness.state();
        let legend = surface_legend(st);
        println!("{}: {:?} {}", legend.title, legend.range, legend.unit);
        assert!(
            legend.title.contains("Debye-Hueckel, 0.15 M, eps 78.54"),
            "{}",
            legend.title
        );
        assert_eq!(legend.unit, "kT/e");
        assert!((legend.range[1] - 5.0).abs() < 1e-3, "{:?}", legend.range);
        check_colours(st, &debye);
        // Not the eps = 4r values still shown.
        assert!(
            debye
                .iter()
                .zip(&values)
                .any(|(a, b)| (a - b).abs() > 1e-4 * b.abs().max(1e-6))
        );
    }

    // Poisson-Boltzmann through the panel: the solve's lattice sampled at the vertices, +-5 kT/e.
    choose_model(&mut harness, EspModel::PoissonBoltzmann.kind_name());
    assert!(harness.state().esp.model.is_pb());
    run_until(&mut harness, "the Poisson-Boltzmann colours", |st| {
        st.reps().field(id).is_some_and(|f| {
            f.coloring
                .is_some_and(|c| matches!(c.source, FieldChoice::PotentialPb { .. }))
                && f.color_grid(st.document().unwrap()).is_some()
        }) || st.pb.failure.is_some()
    });
    let st = harness.state();
    assert!(st.pb.failure.is_none(), "{:?}", st.pb.failure);
    let legend = surface_legend(st);
    println!("{}: {:?} {}", legend.title, legend.range, legend.unit);
    assert!(
        legend.title.contains("Poisson-Boltzmann, 0.15 M, eps 2/78.5"),
        "{}",
        legend.title
    );
    assert_eq!(legend.unit, "kT/e");
    assert_eq!(legend.range, [-5.0, 5.0]);

    // Poisson-Boltzmann 1.4 A above: the solution sampled at the moved vertices.
    harness
        .get_by_label(orbitfield::ui::esp_model::RAMP_ABOVE_LABEL)
        .click();
    harness.run_steps(4);
    run_until(&mut harness, "the Poisson-Boltzmann colours above the surface", |st| {
        st.reps()
            .field(id)
            .is_some_and(|f| f.colors_by_vertex_values() && f.vertex_values().is_some())
    });
    let st = harness.state_mut();
    let key = st
        .document()
        .and_then(|d| d.field_key(FieldChoice::PotentialPb { revision: 0 }, st.field_settings()))
        .unwrap();
    let key = st.pb_key(key);
    let grid = st.fields.cached(key).expect("the frame's Poisson-Boltzmann solution");
    let st = harness.state();
    let f = st.reps().field(id).unwrap();
    let mesh = f.pipeline.lobes[0].as_ref().unwrap();
    let values = f.vertex_values().unwrap()[0].as_ref().unwrap();
    let mut worst = 0.0f32;
    for i in (0..values.len()).step_by(53) {
        let (p, n) = (mesh.positions_angstrom[i], mesh.normals[i]);
        let at = std::array::from_fn(|k| p[k] + 1.4 * n[k]);
        let want = grid.trilinear_at_angstrom(at, true).unwrap();
        worst = worst.max((values[i] - want).abs());
    }
    println!("Poisson-Boltzmann 1.4 A above: max |diff| {worst:.2e} kT/e");
    assert!(worst < 1e-5, "{worst}");
    assert!(surface_legend(st).title.contains("1.4 Å above the surface"));
}

#[test]
fn poisson_boltzmann_field_shows_two_lobes_red_and_blue_and_a_slice_in_kt_per_e() {
    let mut harness = window(adk_with_engines());
    harness.run();
    harness.get_by_label(orbitfield::ui::add::ADD_BUTTON).click();
    harness.run();
    harness.get_by_label(orbitfield::ui::pb::SOURCE_NAME).click();
    harness.run_steps(4);
    assert!(harness.state().esp.model.is_pb(), "naming the field chooses the model");
    let id = harness
        .state()
        .reps()
        .fields()
        .find(|(_, f)| matches!(f.field, FieldChoice::PotentialPb { .. }))
        .map(|(r, _)| r.id)
        .expect("a Poisson-Boltzmann field representation");
    run_until(&mut harness, "the Poisson-Boltzmann lobes", |st| {
        st.reps()
            .field(id)
            .is_some_and(|f| f.pipeline.lobes.iter().all(Option::is_some))
            || st.pb.failure.is_some()
    });
    let st = harness.state();
    assert!(st.pb.failure.is_none(), "{:?}", st.pb.failure);
    let f = st.reps().field(id).unwrap();
    let (key, grid) = f.pipeline.shown.as_ref().unwrap();
    assert_eq!(key.frame, 0);
    assert_eq!(f.pipeline.shown_iso, 1.0, "+-1 kT/e");
    let [plus, minus] = [0, 1].map(|k| f.pipeline.lobes[k].clone().unwrap());
    println!(
        "{} vertices at +1 kT/e, {} at -1 kT/e; grid {:?}",
        plus.positions_angstrom.len(),
        minus.positions_angstrom.len(),
        grid.lattice.dims
    );
    assert!(plus.positions_angstrom.len() > 100 && minus.positions_angstrom.len() > 100);
    // The lobes lie where the solution crosses +1 and -1 kT/e.
    for (mesh, iso) in [(&plus, 1.0f32), (&minus, -1.0)] {
        for p in mesh.positions_angstrom.iter().step_by(97) {
            let v = grid.trilinear_at_angstrom(*p, false).unwrap();
            assert!((v - iso).abs() < 0.05, "{v} at an isovalue of {iso}");
        }
    }
    // Blue positive, red negative.
    let [pc, nc] = f.colors;
    assert!(pc[2] > pc[0] && nc[0] > nc[2], "{pc:?} {nc:?}");

    // Its slice, in kT/e.
    harness.state_mut().apply(Command::SetShowSlice(true));
    harness.run_steps(4);
    run_until(&mut harness, "the slice", |st| {
        st.legends().iter().any(|l| l.title.ends_with(", slice"))
    });
    let legends = harness.state().legends();
    let slice = legends.iter().find(|l| l.title.ends_with(", slice")).unwrap();
    println!("{}: {:?} {}", slice.title, slice.range, slice.unit);
    assert_eq!(slice.unit, "kT/e");
    assert!(slice.title.contains("Poisson-Boltzmann"), "{}", slice.title);
    assert!(slice.range[0] < -1.0 && slice.range[1] > 1.0, "{:?}", slice.range);
}

fn open_md(paths: &[&str]) -> AppState {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/md");
    let files: Vec<_> = paths.iter().map(|p| dir.join(p)).collect();
    let mut state = AppState::new(Settings::default(), FieldService::default());
    state.open_system("test".into(), orbitfield::io::load(&files).unwrap());
    state
}

/// Defaults by what the files give; the command language and a session carry the model and
/// the sampling option.
#[test]
fn files_choose_the_default_and_scripts_and_sessions_carry_the_model() {
    let mut state = open_md(&["adk.psf", "adk_dims.dcd"]);
    assert_eq!(state.esp.model, EspModel::four_r(), "charges without radii");
    assert_eq!(
        open_md(&["adk_open.pqr"]).esp.model,
        EspModel::PoissonBoltzmann,
        "charges and radii"
    );
    // `color ... potential` under the model: eps = 4r at +-10 kcal/mol/e.
    let id = state
        .add_rep(&orbitfield::app::reps::RepSpec::field(
            "molsurf:resid 1 to 5",
            orbitfield::app::reps::FieldStyle::Isosurface,
        ))
        .unwrap();
    state.edit_rep(
        id,
        orbitfield::app::reps::RepEdit::ColorBy(Some((FieldChoice::Potential, None))),
    );
    let c = state.doc.reps.field(id).unwrap().coloring.unwrap();
    assert_eq!(c.range, EspModel::four_r().default_range());
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    orbitfield::script::run_in(
        &mut state,
        "set model debye\nset rampabove on\n",
        &dir,
        None,
        orbitfield::script::RunMode::Window,
    )
    .unwrap();
    assert_eq!(state.esp.model, EspModel::debye());
    assert!(state.esp.ramp_above);
    let c = state.doc.reps.field(id).unwrap().coloring.unwrap();
    assert_eq!(c.source, FieldChoice::Potential);
    assert_eq!(c.range, EspModel::debye().default_range(), "the model's range");
    orbitfield::script::run_in(
        &mut state,
        "set model pb\n",
        &dir,
        None,
        orbitfield::script::RunMode::Window,
    )
    .unwrap();
    let c = state.doc.reps.field(id).unwrap().coloring.unwrap();
    assert!(orbitfield::app::pb::is_pb(c.source), "{:?}", c.source);
    assert!(
        orbitfield::script::run_in(
            &mut state,
            "set model gas\n",
            &dir,
            None,
            orbitfield::script::RunMode::Window
        )
        .is_err()
    );
    orbitfield::script::run_in(
        &mut state,
        "set model 2.5r\n",
        &dir,
        None,
        orbitfield::script::RunMode::Window,
    )
    .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("s.ofs");
    state.session().unwrap().save(&path).unwrap();
    let mut other = open_md(&["adk.psf", "adk_dims.dcd"]);
    other.apply_session(&orbitfield::app::session::Session::load(&path).unwrap());
    assert_eq!(
        other.esp.model,
        EspModel::DistanceDependent {
            slope_per_angstrom: 2.5
        }
    );
    assert!(other.esp.ramp_above);
}

/// A cartoon coloured by the charges' potential follows the model: at eps = 4r its values are
/// the screened sum's (its legend says so), under Poisson-Boltzmann the frame's solution sampled at
/// its vertices, in kT/e at +-5 kT/e.
#[test]
fn a_cartoon_follows_the_model_to_the_poisson_boltzmann_solution() {
    use orbitfield::app::reps::RepEdit;
    let mut state = adk_with_engines();
    let id = state
        .add_rep(&orbitfield::app::reps::spec::parse_atom_rep("resid 1 to 40:cartoon").unwrap())
        .unwrap();
    state.apply(Command::EditRep(
        id,
        RepEdit::ColorBy(Some((FieldChoice::Potential, None))),
    ));
    let wait = |state: &mut AppState, pb: bool| {
        let t0 = Instant::now();
        loop {
            state.update_reps();
            let (_, c) = state.reps().cartoons().next().expect("a cartoon");
            if c.pipeline
                .values()
                .is_some_and(|(k, _, _)| orbitfield::app::pb::is_pb(k.source) == pb)
            {
                return;
            }
            assert!(state.pb.failure.is_none(), "{:?}", state.pb.failure);
            assert!(t0.elapsed() < Duration::from_secs(120), "no cartoon values ({pb})");
            std::thread::sleep(Duration::from_millis(5));
        }
    };
    wait(&mut state, false);
    let legend = |st: &AppState| {
        st.legends()
            .into_iter()
            .find(|l| l.title.starts_with("cartoon coloured by"))
            .expect("a cartoon legend")
    };
    let l = legend(&state);
    println!("{}: {:?} {}", l.title, l.range, l.unit);
    assert!(l.title.contains("eps = 4r") && l.unit == "kcal/mol/e", "{}", l.title);

    state.apply(Command::SetEspModel(EspModel::PoissonBoltzmann));
    wait(&mut state, true);
    let key = state
        .document()
        .and_then(|d| d.field_key(FieldChoice::PotentialPb { revision: 0 }, state.field_settings()))
        .unwrap();
    let key = state.pb_key(key);
    let grid = state.fields.cached(key).expect("the frame's solution");
    let (_, c) = state.reps().cartoons().next().unwrap();
    let (_, mesh, values) = c.pipeline.values().unwrap();
    let mut worst = 0.0f32;
    for (p, v) in mesh.positions_angstrom.iter().zip(values) {
        worst = worst.max((grid.trilinear_at_angstrom(*p, true).unwrap() - v).abs());
    }
    let l = legend(&state);
    println!(
        "{}: {:?} {}; {} vertices, max |diff| {worst:.1e} kT/e",
        l.title,
        l.range,
        l.unit,
        values.len()
    );
    assert!(worst < 1e-5, "{worst}");
    assert!(
        l.title.contains("Poisson-Boltzmann, 0.15 M") && l.unit == "kT/e",
        "{}",
        l.title
    );
    assert_eq!(l.range, [-5.0, 5.0]);
}

/// A crystal structure without charges (4E43.pdb.gz: two chains, no hydrogens, glycerol and DMSO
/// among its ligands): the Files section says it took CHARMM22's charges and names the ligands left
/// at zero, and "+ Add > Molecular surface coloured by potential" colours chain A at eps = 4r from
/// them, red and blue (no "no such field"), the values the f64 sum of those charges.
#[test]
fn a_pdb_protein_takes_standard_charges_and_is_coloured() {
    let mut state = with_engines();
    state.apply(Command::OpenFiles(vec![data("md/4E43.pdb.gz")]));
    assert!(state.document().is_some(), "{}", state.panels.status);
    let mut harness = window(state);
    harness.run();
    // The status line says it; the Files section (opened here) gives the whole note.
    assert!(
        harness.state().panels.status.contains("CHARMM22"),
        "{}",
        harness.state().panels.status
    );
    harness.get_by_label("Files").click();
    harness.run();
    let notes: Vec<String> = harness
        .query_all_by_label_contains("CHARMM22")
        .filter_map(|n| n.accesskit_node().value().map(|v| v.to_string()))
        .collect();
    let text = notes
        .iter()
        .find(|t| t.contains("residues take"))
        .expect("the note in Files");
    assert!(text.contains("GOL") && text.contains("DMS"), "{text}");
    assert!(
        matches!(harness.state().esp.model, EspModel::DistanceDependent { .. }),
        "charges without radii: eps = 4r, {:?}",
        harness.state().esp.model
    );
    let id = add_potential_surface(&mut harness, "protein and chain A");
    assert!(
        harness.query_by_label_contains("no such field").is_none(),
        "the potential is refused"
    );
    let values = check_vertex_values(&mut harness, id, "4E43 at eps = 4r", |r| 1.0 / (4.0 * r * r));
    let st = harness.state();
    assert!(surface_legend(st).title.contains("eps = 4r"));
    check_colours(st, &values);
}
