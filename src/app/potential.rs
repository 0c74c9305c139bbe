//! The running-average potential map: the mean Coulomb potential of the last W frames' charges.
//!
//! The potential is linear in the charges, so the mean over frames `f-W+1..=f` (clamped at frame 0)
//! is the potential of all those frames' charges at once, each weighted by 1/(frames used): one
//! direct-sum job with W x N charges on the document's fixed potential lattice, instead of W maps
//! summed. Owns the window arithmetic, the frames a document keeps for it
//! ([`Document::load_potential_window`]) and the job's charges; `AppState::field_job_at` calls
//! [`mean_charges`] for [`FieldChoice::PotentialMean`].

use super::document::Document;
use super::fields::FieldChoice;
use crate::compute::PointCharges;
use crate::io::ReadError;
use crate::model::Frame;
use crate::model::units::bohr_from_angstrom3;
use std::ops::Range;
use std::sync::Arc;

impl super::state::AppState {
    /// What a potential is the sum of and how, in words for its legend's title ("Coulomb sum of
    /// 1689 solute charges, no water or ions, eps = 4r", "Coulomb sum of 3341 charges, vacuum"); `None` for fields that are not potentials. `on_lattice`: the values
    /// come from a map on a lattice (which the settings may sum by multilevel summation) rather
    /// than from an exact sum at each point.
    pub fn potential_model(&self, field: FieldChoice, on_lattice: bool) -> Option<String> {
        match field {
            FieldChoice::Potential | FieldChoice::PotentialMean { .. } => {
                let vacuum = self.esp.model == super::esp_model::EspModel::Vacuum;
                let doc = self.document();
                let all = doc.and_then(|d| d.structure.charges_e.as_ref()).map_or(0, Vec::len);
                // A screened model leaves the explicit water and ions out (`Document::point_charges_at`).
                let solute = doc
                    .and_then(|d| d.solute_mask.as_ref())
                    .filter(|_| !vacuum)
                    .map(|m| m.iter().filter(|&&k| k).count());
                let n = solute.unwrap_or(all);
                // No parenthesis inside the legend's own: "1689 solute charges (no water or ions)"
                // read as nested brackets on a figure.
                let whose = if solute.is_some() {
                    "solute charges, no water or ions"
                } else {
                    "charges"
                };
                let msm = vacuum && on_lattice && self.settings.potential_method.uses_msm(n);
                let how = if msm { "multilevel Coulomb sum" } else { "Coulomb sum" };
                let mean = match field {
                    FieldChoice::PotentialMean { frames } => format!(", mean of {frames} frames"),
                    _ => String::new(),
                };
                let model = self.vertex_charges_model().dielectric.label();
                let above = if self.esp.ramp_above && !on_lattice {
                    format!(", {} Å above the surface", super::esp_model::RAMP_ABOVE_ANGSTROM)
                } else {
                    String::new()
                };
                Some(format!("{how} of {n} {whose}{mean}, {model}{above}"))
            }
            FieldChoice::WavefunctionPotential => Some("wavefunction: nuclei and electron density, vacuum".into()),
            FieldChoice::PotentialPb { .. } if self.esp.ramp_above && !on_lattice => Some(format!(
                "{}, {} Å above the surface",
                self.pb.legend(),
                super::esp_model::RAMP_ABOVE_ANGSTROM
            )),
            FieldChoice::PotentialPb { .. } => Some(self.pb.legend()),
            _ => None,
        }
    }
}

/// The largest averaging window. The job sums W x N charges at every lattice point, so its cost
/// grows linearly with W (W = 100 on a 3341-atom protein is 334,100 charges per point, some seconds
/// per map on the CPU), and the document keeps up to about 4 W frames of coordinates in memory.
pub const MAX_POTENTIAL_WINDOW: u16 = 100;

/// The field choice for a window of `frames` (1 or less: the plain per-frame potential).
pub fn potential_choice(frames: u16) -> FieldChoice {
    match frames.min(MAX_POTENTIAL_WINDOW) {
        0 | 1 => FieldChoice::Potential,
        frames => FieldChoice::PotentialMean { frames },
    }
}

/// Frames averaged at frame `index`: the last `frames` up to and including it, clamped at frame 0.
pub fn window(index: usize, frames: u16) -> Range<usize> {
    let w = usize::from(frames.clamp(1, MAX_POTENTIAL_WINDOW));
    (index + 1).saturating_sub(w)..index + 1
}

/// Point charges of several frames' coordinates (Angstrom), each frame's charges weighted by 1/(number
/// of frames): their potential is the frames' mean potential. `None` when a frame's atom count
/// differs from the charges' or there is no frame.
pub fn mean_charges(charges_e: &[f32], frames: &[&[[f32; 3]]]) -> Option<PointCharges> {
    if frames.is_empty() || frames.iter().any(|f| f.len() != charges_e.len()) {
        return None;
    }
    let weight = 1.0 / frames.len() as f64;
    let n = charges_e.len().checked_mul(frames.len())?;
    let mut q = PointCharges {
        positions_bohr: Vec::with_capacity(n),
        charges_e: Vec::with_capacity(n),
    };
    for f in frames {
        q.positions_bohr
            .extend(f.iter().map(|p| bohr_from_angstrom3(p.map(f64::from))));
        q.charges_e.extend(charges_e.iter().map(|&c| f64::from(c) * weight));
    }
    Some(q)
}

impl Document {
    /// Reads the coordinates of the frames of the window of `frames` ending at `index` that are
    /// not held yet, and forgets those more than 2 W frames away (so playback reads one new frame
    /// per step, and the look-ahead's window overlaps the shown one's).
    pub fn load_potential_window(&mut self, index: usize, frames: u16) -> Result<(), ReadError> {
        let w = window(index, frames);
        let keep = 2 * usize::from(frames.clamp(1, MAX_POTENTIAL_WINDOW));
        self.potential_frames
            .retain(|&f, _| f + keep >= index && f <= index.saturating_add(keep));
        for f in w {
            if f < self.n_frames && !self.potential_frames.contains_key(&f) {
                let mut frame = Frame::default();
                self.read_frame(f, &mut frame)?;
                self.potential_frames.insert(f, Arc::new(frame.positions_angstrom));
            }
        }
        Ok(())
    }

    /// The mean-potential charges of the window of `frames` ending at `index`, `frame` being the
    /// coordinates of frame `index`; `None` when a frame of the window has not been read
    /// ([`Document::load_potential_window`]) or the structure has no charges.
    pub fn potential_mean_charges(&self, index: usize, frames: u16, frame: &Frame) -> Option<PointCharges> {
        let charges = self.structure.charges_e.as_ref()?;
        let mut coordinates: Vec<&[[f32; 3]]> = Vec::new();
        for f in window(index, frames) {
            if f == index {
                coordinates.push(&frame.positions_angstrom);
            } else {
                coordinates.push(self.potential_frames.get(&f)?.as_slice());
            }
        }
        mean_charges(charges, &coordinates)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use crate::app::fields::FieldService;
    use crate::app::settings::Settings;
    use crate::app::state::{AppState, Command};
    use crate::compute::cpu::evaluate_grid;
    use crate::model::units::bohr_from_angstrom;
    use crate::model::{Element, Name8, Structure};
    use std::path::PathBuf;

    #[test]
    fn windows_clamp_at_the_first_frame_and_at_the_cap() {
        assert_eq!(window(5, 3), 3..6);
        assert_eq!(window(1, 4), 0..2);
        assert_eq!(window(7, 1), 7..8);
        assert_eq!(window(7, 0), 7..8);
        assert_eq!(window(500, 1000).len(), usize::from(MAX_POTENTIAL_WINDOW));
        assert_eq!(potential_choice(1), FieldChoice::Potential);
        assert_ne!(potential_choice(2), potential_choice(3));
        assert_eq!(
            potential_choice(u16::MAX),
            FieldChoice::PotentialMean {
                frames: MAX_POTENTIAL_WINDOW
            }
        );
    }

    fn adk_state(spacing_angstrom: f64) -> AppState {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/md");
        let system = crate::io::load(&[dir.join("adk.psf"), dir.join("adk_dims.dcd")]).unwrap();
        let settings = Settings {
            potential_spacing_angstrom: spacing_angstrom,
            ..Settings::default()
        };
        let mut state = AppState::new(settings, FieldService::default());
        state.open_system("adk".into(), system);
        state
    }

    /// The averaged map of adk frames 3..=6 equals the mean of the four single-frame maps, each
    /// computed by its own job.
    #[test]
    fn averaged_map_is_the_mean_of_single_frame_maps() {
        // A coarse lattice keeps the debug build quick.
        let mut state = adk_state(9.0);
        state.apply(Command::SetPotentialWindow(4));
        state.apply(Command::SelectField(Some(FieldChoice::Potential)));
        assert_eq!(state.main_field(), Some(FieldChoice::PotentialMean { frames: 4 }));
        state.apply(Command::SetFrame(6));
        let doc = state.document().unwrap();
        let frame = doc.frame.clone();
        let field = state.main_field().unwrap();
        let key = state.field_key_at(field, 6, &frame).unwrap();
        let mean = evaluate_grid(&state.field_job_at(&key, &frame).unwrap()).unwrap();
        let mut singles = Vec::new();
        for f in 3..=6 {
            let frame = state.document_mut().unwrap().trajectory.frame(f).unwrap();
            let mut k = state.field_key_at(field, f, &frame).unwrap();
            k.field = FieldChoice::Potential;
            singles.push(evaluate_grid(&state.field_job_at(&k, &frame).unwrap()).unwrap());
        }
        assert_eq!(mean.lattice, singles[0].lattice);
        let scale = mean.values.iter().fold(0.0f64, |m, v| m.max(f64::from(v.abs())));
        let mut worst = 0.0f64;
        for (i, v) in mean.values.iter().enumerate() {
            let expected: f64 = singles.iter().map(|g| f64::from(g.values[i])).sum::<f64>() / 4.0;
            worst = worst.max((f64::from(*v) - expected).abs());
        }
        println!(
            "{} points, max |diff| / max |value| = {:.2e}",
            mean.values.len(),
            worst / scale
        );
        assert!(scale > 0.0 && worst <= 1e-5 * scale, "{worst} vs {scale}");
        // The frames differ, so the test could tell a window from a single frame.
        let spread = singles[0]
            .values
            .iter()
            .zip(&singles[3].values)
            .map(|(a, b)| f64::from((a - b).abs()))
            .fold(0.0, f64::max);
        assert!(spread > 1e-3 * scale, "{spread}");
        // Keys differ by window.
        let mut other = key;
        other.field = FieldChoice::PotentialMean { frames: 5 };
        assert_ne!(key, other);
    }

    /// Random charges on a few frames: the averaged map against the mean Coulomb sum written here.
    #[test]
    fn averaged_map_matches_an_analytic_mean() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut rnd = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        let n_atoms = 7;
        let n_frames = 5;
        let mut structure = Structure::default();
        for _ in 0..n_atoms {
            structure.push_atom(
                Element::C,
                Name8::from("C"),
                Name8::from("X"),
                1,
                Name8::EMPTY,
                Name8::EMPTY,
            );
        }
        structure.charges_e = Some((0..n_atoms).map(|_| (rnd() * 2.0 - 1.0) as f32).collect());
        let frames: Vec<Frame> = (0..n_frames)
            .map(|_| Frame {
                positions_angstrom: (0..n_atoms).map(|_| [0; 3].map(|_| (rnd() * 6.0) as f32)).collect(),
                ..Frame::default()
            })
            .collect();
        let system = crate::io::System {
            structure,
            trajectory: crate::model::Trajectory::from_frames(n_atoms, frames.clone(), "random"),
            wavefunctions: Vec::new(),
            grids: Vec::new(),
            warnings: Vec::new(),
            paths: vec![PathBuf::from("random.pqr")],
            wavefunction_frames: Vec::new(),
            frame_energies_hartree: Vec::new(),
            orbital_levels: None,
        };
        let settings = Settings {
            potential_spacing_angstrom: 2.0,
            ..Settings::default()
        };
        let mut state = AppState::new(settings, FieldService::default());
        state.open_system("random".into(), system);
        // The vacuum Coulomb sum is what this test holds to its formula.
        state.apply(Command::SetEspModel(crate::app::esp_model::EspModel::Vacuum));
        state.apply(Command::SelectField(Some(FieldChoice::Potential)));
        state.apply(Command::SetPotentialWindow(3));
        state.apply(Command::SetFrame(4));
        let charges = state.document().unwrap().structure.charges_e.clone().unwrap();
        let frame = frames[4].clone();
        let key = state.field_key_at(state.main_field().unwrap(), 4, &frame).unwrap();
        let grid = evaluate_grid(&state.field_job_at(&key, &frame).unwrap()).unwrap();
        let l = grid.lattice;
        let mut worst = 0.0f64;
        let mut scale = 0.0f64;
        for k in 0..l.dims[2] {
            for j in 0..l.dims[1] {
                for i in 0..l.dims[0] {
                    let p = l.point_bohr(i, j, k);
                    let mut v = 0.0;
                    for f in &frames[2..5] {
                        for (q, a) in charges.iter().zip(&f.positions_angstrom) {
                            let d: f64 = (0..3)
                                .map(|c| (p[c] - bohr_from_angstrom(f64::from(a[c]))).powi(2))
                                .sum::<f64>()
                                .sqrt();
                            v += f64::from(*q) / d / 3.0;
                        }
                    }
                    let g = f64::from(grid.get(i, j, k).unwrap());
                    worst = worst.max((g - v).abs());
                    scale = scale.max(v.abs());
                }
            }
        }
        println!(
            "max |diff| / max |V| = {:.2e} (max |V| {scale:.3} hartree/e)",
            worst / scale
        );
        assert!(worst <= 1e-5 * scale, "{worst} vs {scale}");
        // At frame 1 the window is frames 0..=1 (clamped), weighted 1/2.
        state.apply(Command::SetFrame(1));
        let q = state
            .document()
            .unwrap()
            .potential_mean_charges(1, 3, &frames[1])
            .unwrap();
        assert_eq!(q.charges_e.len(), 2 * n_atoms);
        assert!((q.charges_e[0] - f64::from(charges[0]) / 2.0).abs() < 1e-12);
    }
}

#[cfg(test)]
mod ui_tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use crate::app::fields::FieldService;
    use crate::app::settings::Settings;
    use crate::app::state::{AppState, Command};
    use egui_kittest::Harness;
    use egui_kittest::kittest::Queryable;

    /// The window setting sits next to the field choice of a structure with charges; typing a
    /// window there turns the potential into its running average.
    #[test]
    fn fields_panel_sets_the_running_average_window() {
        let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/md");
        let system = crate::io::load(&[dir.join("adk.psf"), dir.join("adk_dims.dcd")]).unwrap();
        let mut state = AppState::new(Settings::default(), FieldService::default());
        state.open_system("adk".into(), system);
        state.apply(Command::SelectField(Some(FieldChoice::Potential)));
        let mut harness = Harness::new_ui_state(
            |ui, state: &mut AppState| {
                crate::ui::panels::fields_ui(ui, state);
                state.apply_pending();
            },
            state,
        );
        harness.run();
        assert!(harness.query_by_label_contains("Potential: mean of last").is_some());
        harness
            .query_all_by_role(egui::accesskit::Role::SpinButton)
            .find(|n| n.value().is_some_and(|v| v.contains("frames")))
            .expect("the window's drag value")
            .set_value_accesskit(6.0);
        harness.run();
        assert_eq!(harness.state().settings.potential_window_frames, 6);
        assert_eq!(
            harness.state().main_field(),
            Some(FieldChoice::PotentialMean { frames: 6 })
        );
        let doc = harness.state().document().unwrap();
        assert!(doc.potential_frames.contains_key(&0), "the window's frames were read");
    }
}
