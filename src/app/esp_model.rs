//! The electrostatic model of the viewer's potentials of charges: vacuum, the distance-dependent
//! dielectric eps = s r, Debye-Hueckel screening, or the Poisson-Boltzmann solve (`app::pb`).
//!
//! Owns [`EspModel`] (what the field panel's "Electrostatic model" combo picks, what a session and
//! the command language's `model=` keep) and [`EspView`] (the model, the option that samples the
//! colours 1.4 A outside the surface along its normals, PyMOL's `surface_ramp_above_mode`, and a
//! revision that names both in the vertex values' keys). A structure with charges and radii from
//! its files starts in Poisson-Boltzmann at +-5 kT/e, one with charges only at eps = 4r at +-10
//! kcal/mol/e (ChimeraX's `coulombic`); vacuum only when chosen. Changing the model retargets every
//! surface, cartoon and field of the charges' potential ([`AppState::set_esp_model`]): the screened
//! models keep [`FieldChoice::Potential`] (summed through `compute::esp::screening`, on the CPU,
//! CUDA and the render device's vertex pass alike), Poisson-Boltzmann is
//! [`FieldChoice::PotentialPb`].

use super::fields::FieldChoice;
use super::reps::{RepEdit, RepKind};
use super::state::AppState;
use super::values::PotentialDisplay;
use crate::compute::esp::screening::{
    DEFAULT_EPS_OUT, DEFAULT_IONIC_STRENGTH_MOLAR, DEFAULT_SCREENING_TEMPERATURE_KELVIN, DEFAULT_SLOPE_PER_ANGSTROM,
    Dielectric, kappa_per_angstrom,
};
use crate::compute::wgpu::vertex_potential::VertexScreening;
use crate::model::Structure;

/// The default colour range of the distance-dependent model, in kcal/mol/e (ChimeraX's
/// `coulombic` palette spans -10..10).
pub const SCREENED_RANGE_KCAL_PER_MOL_PER_E: f64 = 10.0;
/// The default colour range of the Debye-Hueckel model, in kT/e (as a Poisson-Boltzmann map).
pub const DEBYE_RANGE_KT_PER_E: f64 = 5.0;
/// How far outside the surface, along its normals, the colours are sampled when
/// [`EspView::ramp_above`] is on (PyMOL's `surface_ramp_above_mode`: one water radius), Angstrom.
pub const RAMP_ABOVE_ANGSTROM: f32 = 1.4;

/// The medium the charges' potential is computed in.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum EspModel {
    /// Coulomb's law in vacuum (dielectric 1, no ions).
    Vacuum,
    /// eps(r) = slope r, r in Angstrom.
    DistanceDependent { slope_per_angstrom: f64 },
    /// Screened Coulomb of a 1:1 electrolyte in a solvent of dielectric `eps_out`.
    DebyeHuckel {
        eps_out: f64,
        ionic_strength_molar: f64,
        temperature_kelvin: f64,
    },
    /// The Poisson-Boltzmann solve of `app::pb` (its parameters are `PbView`'s).
    PoissonBoltzmann,
}

impl EspModel {
    /// The models as the field panel lists them (each kind with its default parameters).
    pub const KINDS: [EspModel; 4] = [
        EspModel::PoissonBoltzmann,
        EspModel::DistanceDependent {
            slope_per_angstrom: DEFAULT_SLOPE_PER_ANGSTROM,
        },
        EspModel::DebyeHuckel {
            eps_out: DEFAULT_EPS_OUT,
            ionic_strength_molar: DEFAULT_IONIC_STRENGTH_MOLAR,
            temperature_kelvin: DEFAULT_SCREENING_TEMPERATURE_KELVIN,
        },
        EspModel::Vacuum,
    ];

    /// eps = 4r.
    pub fn four_r() -> EspModel {
        EspModel::KINDS[1]
    }

    /// Debye-Hueckel at 0.15 M, eps 78.54, 298.15 K.
    pub fn debye() -> EspModel {
        EspModel::KINDS[2]
    }

    /// The model a structure starts with: Poisson-Boltzmann when its files give charges and radii,
    /// else eps = 4r.
    pub fn for_structure(structure: &Structure) -> EspModel {
        let radii = structure
            .radii_angstrom
            .as_ref()
            .zip(structure.charges_e.as_ref())
            .is_some_and(|(r, q)| r.len() == q.len());
        if radii {
            EspModel::PoissonBoltzmann
        } else {
            EspModel::four_r()
        }
    }

    /// The screened Coulomb model, `None` for Poisson-Boltzmann.
    pub fn dielectric(self) -> Option<Dielectric> {
        match self {
            EspModel::Vacuum => Some(Dielectric::Vacuum),
            EspModel::DistanceDependent { slope_per_angstrom } => {
                Some(Dielectric::DistanceDependent { slope_per_angstrom })
            }
            EspModel::DebyeHuckel {
                eps_out,
                ionic_strength_molar,
                temperature_kelvin,
            } => Some(Dielectric::DebyeHuckel {
                eps_out,
                ionic_strength_molar,
                temperature_kelvin,
            }),
            EspModel::PoissonBoltzmann => None,
        }
    }

    /// True for the Poisson-Boltzmann model.
    pub fn is_pb(self) -> bool {
        self == EspModel::PoissonBoltzmann
    }

    /// True when both are the same kind of model (their parameters may differ).
    pub fn same_kind(self, other: EspModel) -> bool {
        std::mem::discriminant(&self) == std::mem::discriminant(&other)
    }

    /// The kind's name in the field panel's combo.
    pub fn kind_name(self) -> &'static str {
        match self {
            EspModel::Vacuum => "Vacuum (Coulomb, eps = 1)",
            EspModel::DistanceDependent { .. } => "Distance-dependent dielectric (eps = s r)",
            EspModel::DebyeHuckel { .. } => "Debye-Hueckel (screened Coulomb)",
            EspModel::PoissonBoltzmann => "Poisson-Boltzmann",
        }
    }

    /// The kind's short name, shown in the closed combo at the field panel's width.
    pub fn short_name(self) -> &'static str {
        match self {
            EspModel::Vacuum => "Vacuum",
            EspModel::DistanceDependent { .. } => "eps = s r",
            EspModel::DebyeHuckel { .. } => "Debye-Hueckel",
            EspModel::PoissonBoltzmann => "Poisson-Boltzmann",
        }
    }

    /// The model with its parameters, as legends say it ("eps = 4r", "Debye-Hueckel, 0.15 M, eps
    /// 78.54, 298.15 K (Debye length 7.85 A)"); Poisson-Boltzmann's parameters are `PbView::legend`'s.
    pub fn label(self) -> String {
        match self.dielectric() {
            Some(d) => d.label(),
            None => "Poisson-Boltzmann".into(),
        }
    }

    /// The word the command language and the settings use: `vacuum`, `4r` (any slope: `2.5r`),
    /// `debye`, `pb`.
    pub fn word(self) -> String {
        match self {
            EspModel::Vacuum => "vacuum".into(),
            EspModel::DistanceDependent { slope_per_angstrom } => format!("{slope_per_angstrom}r"),
            EspModel::DebyeHuckel { .. } => "debye".into(),
            EspModel::PoissonBoltzmann => "pb".into(),
        }
    }

    /// Parses [`EspModel::word`] (case-insensitive; `dh`, `coulombic` and `poisson-boltzmann` too).
    pub fn parse(text: &str) -> Result<EspModel, String> {
        let t = text.trim().to_ascii_lowercase();
        let model = match t.as_str() {
            "vacuum" | "coulomb" => EspModel::Vacuum,
            "debye" | "dh" | "debye-hueckel" | "debye-huckel" => EspModel::debye(),
            "pb" | "poisson-boltzmann" => EspModel::PoissonBoltzmann,
            "coulombic" | "ddd" => EspModel::four_r(),
            _ => match t.strip_suffix('r').map(str::parse::<f64>) {
                Some(Ok(s)) => EspModel::DistanceDependent { slope_per_angstrom: s },
                _ => {
                    return Err(format!(
                        "unknown electrostatic model '{text}' (expected vacuum, 4r, debye or pb)"
                    ));
                }
            },
        };
        model.check()?;
        Ok(model)
    }

    /// Checks the parameters; the message names the offending value.
    pub fn check(self) -> Result<(), String> {
        self.dielectric()
            .map_or(Ok(()), |d| d.check().map_err(|e| e.to_string()))
    }

    /// The unit its numbers are shown in: kcal/mol/e for eps = s r (ChimeraX's), else `setting`
    /// (Poisson-Boltzmann maps are converted at the solve's temperature: `FieldUnit::of_pb`).
    pub fn display(self, setting: PotentialDisplay) -> PotentialDisplay {
        match self {
            EspModel::DistanceDependent { .. } => PotentialDisplay::KcalPerMolPerE,
            _ => setting,
        }
    }

    /// The colour range a colouring by this model starts with, in hartree/e: +-10 kcal/mol/e for
    /// eps = s r, +-5 kT/e (300 K) for Debye-Hueckel; `None` where the values choose it (vacuum) or
    /// the solve has its own (Poisson-Boltzmann, `app::pb::PB_RANGE_KT_PER_E`).
    pub fn default_range(self) -> Option<[f32; 2]> {
        let (limit, unit) = match self {
            EspModel::DistanceDependent { .. } => (SCREENED_RANGE_KCAL_PER_MOL_PER_E, PotentialDisplay::KcalPerMolPerE),
            EspModel::DebyeHuckel { .. } => (DEBYE_RANGE_KT_PER_E, PotentialDisplay::KtPerE),
            EspModel::Vacuum | EspModel::PoissonBoltzmann => return None,
        };
        let r = (limit / unit.unit().per_hartree_per_e()) as f32;
        Some([-r, r])
    }

    /// The model as the render device's vertex pass reads it (r in Angstrom); vacuum for
    /// Poisson-Boltzmann, which that pass does not compute.
    pub fn vertex_screening(self) -> VertexScreening {
        let g = self.dielectric().unwrap_or(Dielectric::Vacuum).gpu_angstrom();
        VertexScreening {
            model: g.model,
            a: g.a as f32,
            b_per_angstrom: g.b as f32,
            offset_angstrom: 0.0,
        }
    }

    /// The Debye length (Angstrom) of the Debye-Hueckel model.
    pub fn debye_length_angstrom(self) -> Option<f64> {
        match self {
            EspModel::DebyeHuckel {
                eps_out,
                ionic_strength_molar,
                temperature_kelvin,
            } => Some(1.0 / kappa_per_angstrom(eps_out, ionic_strength_molar, temperature_kelvin).max(1e-300)),
            _ => None,
        }
    }
}

/// The viewer's electrostatic model and how its colours are sampled.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EspView {
    pub model: EspModel,
    /// Sample the colours [`RAMP_ABOVE_ANGSTROM`] outside the surface along its normals.
    pub ramp_above: bool,
    /// Counts changes of `model` and `ramp_above` (part of the vertex values' keys).
    pub revision: u32,
}

impl Default for EspView {
    fn default() -> Self {
        EspView {
            model: EspModel::four_r(),
            ramp_above: false,
            revision: 0,
        }
    }
}

impl EspView {
    /// How far outside the surface colours are sampled (Angstrom; 0 on the surface).
    pub fn offset_angstrom(&self) -> f32 {
        if self.ramp_above { RAMP_ABOVE_ANGSTROM } else { 0.0 }
    }
}

/// True for a colouring or field of the structure's charges' potential in any model.
pub fn is_charges_potential(f: FieldChoice) -> bool {
    f.is_potential() || crate::app::pb::is_pb(f)
}

/// The status line after the colouring of surfaces at their vertices was cancelled.
pub const COLOURS_CANCELLED: &str =
    "cancelled: the surfaces stay uncoloured until the frame or their colouring changes";

impl AppState {
    /// The description of the open document's volume that `field` is, if it is one.
    fn volume_description(&self, field: FieldChoice) -> Option<&str> {
        match field {
            FieldChoice::Volume(i) => self.document()?.grids.get(i).map(|g| g.description.as_str()),
            _ => None,
        }
    }

    /// True for an electrostatic potential (`FieldChoice::is_electrostatic`), or a volume whose
    /// header names one (an APBS map): drawn red negative, blue positive.
    pub fn is_electrostatic(&self, field: FieldChoice) -> bool {
        field.is_electrostatic()
            || self
                .volume_description(field)
                .is_some_and(|d| crate::app::values::volume_potential_unit(d).is_some())
    }

    /// The unit `field`'s values are shown in: `FieldUnit::of`, a volume's in the unit its header
    /// names (`FieldUnit::of_volume`).
    pub fn field_unit(&self, field: FieldChoice) -> crate::app::values::FieldUnit {
        match self.volume_description(field) {
            Some(d) => crate::app::values::FieldUnit::of_volume(d),
            None if matches!(field, FieldChoice::PotentialPb { .. }) => {
                crate::app::values::FieldUnit::of_pb(self.settings.potential_unit, self.pb.params.temperature_kelvin)
            }
            None => crate::app::values::FieldUnit::of(field, self.potential_display(field)),
        }
    }

    /// The unit a surface coloured by `source` is shown in (`FieldUnit::of_coloring`; a volume as in
    /// [`AppState::field_unit`]).
    pub fn coloring_unit(&self, source: FieldChoice) -> crate::app::values::FieldUnit {
        match self.volume_description(source) {
            Some(d) => crate::app::values::FieldUnit::of_volume(d),
            None if matches!(source, FieldChoice::PotentialPb { .. }) => {
                crate::app::values::FieldUnit::of_pb(self.settings.potential_unit, self.pb.params.temperature_kelvin)
            }
            None => crate::app::values::FieldUnit::of_coloring(source, self.potential_display(source)),
        }
    }

    /// The unit the values of `field` are shown in: for the charges' potential the current
    /// model's (kcal/mol/e at eps = s r), else the setting.
    pub fn potential_display(&self, field: FieldChoice) -> PotentialDisplay {
        if is_charges_potential(field) {
            self.esp.model.display(self.settings.potential_unit)
        } else {
            self.settings.potential_unit
        }
    }

    /// What the status line says when the potential unit is set to `unit` while the charges'
    /// potential keeps its model's own unit (kcal/mol/e at eps = s r):
    /// the choice would otherwise change nothing on screen without a word. `None` when the unit
    /// applies to everything shown, or the document has no charges.
    pub fn potential_unit_note(&self, unit: PotentialDisplay) -> Option<String> {
        let charges = self.document()?.structure.charges_e.is_some();
        // A Poisson-Boltzmann map follows the setting (`FieldUnit::of_pb`).
        if self.esp.model.is_pb() {
            return None;
        }
        let (kept, why) = (self.esp.model.display(unit), "as ChimeraX shows it");
        (charges && kept != unit).then(|| {
            format!(
                "potentials in {}; the charges' potential ({}) stays in {}, {why}: another \
                 electrostatic model in the Field panel shows it in {}",
                unit.label(),
                self.esp.model.label(),
                kept.label(),
                unit.label()
            )
        })
    }

    /// `source` as the current model computes it: the charges' potential is Poisson-Boltzmann's
    /// under that model and the screened sum's under the others.
    pub fn esp_source(&self, source: FieldChoice) -> FieldChoice {
        match (source, self.esp.model.is_pb()) {
            (s, true) if s.is_potential() || crate::app::pb::is_pb(s) => FieldChoice::PotentialPb {
                revision: self.pb.revision,
            },
            (FieldChoice::PotentialPb { .. }, false) => {
                super::potential::potential_choice(self.settings.potential_window_frames)
            }
            (s, _) => s,
        }
    }

    /// The medium and sampling offset of the charges' potential at surface and cartoon vertices:
    /// the model's (under Poisson-Boltzmann, whose solution is sampled from its lattice instead,
    /// eps = 4r for anything still asking).
    pub fn vertex_charges_model(&self) -> crate::jobs::vertex_values::ChargesModel {
        crate::jobs::vertex_values::ChargesModel {
            dielectric: self.esp.model.dielectric().unwrap_or(Dielectric::DistanceDependent {
                slope_per_angstrom: DEFAULT_SLOPE_PER_ANGSTROM,
            }),
            offset_angstrom: self.esp.offset_angstrom(),
        }
    }

    /// The field a representation of `field` shows: [`AppState::esp_source`]; naming the
    /// Poisson-Boltzmann potential chooses that model.
    pub fn esp_field(&mut self, field: FieldChoice) -> FieldChoice {
        if crate::app::pb::is_pb(field) && !self.esp.model.is_pb() {
            self.set_esp_model(EspModel::PoissonBoltzmann);
        }
        self.esp_source(field)
    }

    /// The Poisson-Boltzmann solution of frame `index`: from the cache, or asked for (latest wins)
    /// when it is the frame shown (the solve takes the shown frame's atoms).
    pub fn pb_grid_of_frame(&mut self, index: usize) -> Option<std::sync::Arc<crate::model::Grid3>> {
        let doc = self.document()?;
        let current = doc.frame_index;
        let key = doc.field_key_at(
            FieldChoice::PotentialPb { revision: 0 },
            index,
            &doc.frame,
            self.field_settings(),
        )?;
        let key = self.pb_key(key);
        if index == current {
            self.pb_grid(key)
        } else {
            self.fields.cached(key)
        }
    }

    /// The colour range a colouring by `source` starts with (hartree/e, or kT/e for
    /// Poisson-Boltzmann), `None` where its values choose it.
    pub fn esp_default_range(&self, source: FieldChoice) -> Option<[f32; 2]> {
        if crate::app::pb::is_pb(source) {
            let r = crate::app::pb::PB_RANGE_KT_PER_E;
            return Some([-r, r]);
        }
        if source.is_potential() {
            return self.esp.model.default_range();
        }
        // A map whose header names a potential in kT/e (APBS's) or kcal/mol/e starts at the range
        // the solver's own map or ChimeraX's coulombic would: the same data looks the same.
        match self
            .volume_description(source)
            .and_then(crate::app::values::volume_potential_unit)
        {
            Some("kT/e") => Some([-crate::app::pb::PB_RANGE_KT_PER_E, crate::app::pb::PB_RANGE_KT_PER_E]),
            Some("kcal/mol/e") => Some([-10.0, 10.0]),
            _ => None,
        }
    }

    /// Chooses the electrostatic model: every surface and cartoon coloured by the charges'
    /// potential, and every field of it, is computed again in `model` (with the model's default
    /// colour range). A model whose parameters are out of range is refused with a message.
    pub fn set_esp_model(&mut self, model: EspModel) {
        if let Err(e) = model.check() {
            self.error(format!("electrostatic model: {e}"));
            return;
        }
        if model == self.esp.model {
            return;
        }
        let kind_changed = !model.same_kind(self.esp.model);
        self.esp.model = model;
        self.esp_changed(kind_changed);
    }

    /// Samples the colours of potentials 1.4 A outside the surfaces (true) or on them.
    pub fn set_ramp_above(&mut self, on: bool) {
        if on != self.esp.ramp_above {
            self.esp.ramp_above = on;
            self.esp_changed(false);
        }
    }

    /// Everything of the charges' potential computed again (the Poisson-Boltzmann parameters
    /// changed: values at vertices sampled from the old solution are dropped too).
    pub fn refresh_esp(&mut self) {
        self.esp_changed(false);
    }

    /// Everything of the charges' potential computed again after a change of model or sampling;
    /// `reset_ranges`: colourings take the model's default range.
    fn esp_changed(&mut self, reset_ranges: bool) {
        self.esp.revision = self.esp.revision.wrapping_add(1);
        let mut colourings = Vec::new();
        let mut fields = Vec::new();
        for rep in &self.doc.reps.list {
            match &rep.kind {
                RepKind::Field(f) => {
                    if let Some(c) = f.coloring.filter(|c| is_charges_potential(c.source)) {
                        colourings.push((rep.id, c.source, c.range));
                    }
                    if is_charges_potential(f.field) {
                        fields.push((rep.id, f.field));
                    }
                }
                RepKind::Cartoon(c) => {
                    if let Some(c) = c.color_by.filter(|c| is_charges_potential(c.source)) {
                        colourings.push((rep.id, c.source, c.range));
                    }
                }
                RepKind::Atoms(_) => {}
            }
        }
        // Maps of the charges' potential were computed in the old model (a Poisson-Boltzmann
        // solution does not depend on it).
        self.fields.forget(FieldChoice::is_potential);
        for (id, field) in fields {
            // A map of the old model still in flight would fill the cache under the same key.
            if let Some(RepKind::Field(f)) = self.doc.reps.get(id).map(|r| &r.kind) {
                let slot = f.pipeline.slot;
                self.fields.cancel(slot);
            }
            let new = self.esp_source(field);
            // A map of new Poisson-Boltzmann parameters is the same representation solved again.
            if new != field && !(crate::app::pb::is_pb(new) && crate::app::pb::is_pb(field)) {
                self.edit_rep(id, RepEdit::Field(new));
            } else if let Some(RepKind::Field(f)) = self.doc.reps.get_mut(id).map(|r| &mut r.kind) {
                f.pipeline.mark_stale();
            }
        }
        for (id, source, range) in colourings {
            let new = self.esp_source(source);
            // New Poisson-Boltzmann parameters keep the range the user set, and the last
            // solution's colours until the new one arrives.
            let both_pb = crate::app::pb::is_pb(new) && crate::app::pb::is_pb(source);
            let range = if reset_ranges || !(new == source || both_pb) {
                self.esp_default_range(new)
            } else {
                range
            };
            self.forget_vertex_values(id, both_pb);
            self.edit_rep(id, RepEdit::ColorBy(Some((new, range))));
        }
        self.view.dirty.meshes = true;
        self.view.dirty.slice = true;
        self.view.dirty.surface_color = true;
    }

    /// Drops representation `id`'s values at its vertices (computed in another model), and with
    /// them the colouring lattice shown unless `keep_lattice`.
    fn forget_vertex_values(&mut self, id: super::reps::RepId, keep_lattice: bool) {
        let revision = self.esp.revision;
        if let Some(RepKind::Field(f)) = self.doc.reps.get_mut(id).map(|r| &mut r.kind)
            && let Some(c) = f.pipeline.color.as_mut()
        {
            c.esp_revision = revision;
            if !keep_lattice {
                c.shown = None;
            }
            c.asked = None;
            c.vertices = None;
            c.asked_vertices = None;
            c.cancelled_vertices = None;
            c.vertex_cache.clear();
            c.colored = None;
        }
    }

    /// Clears the status line's word that colouring was cancelled, once colours are asked for again.
    pub(crate) fn colouring_asked_again(&mut self) {
        if self.panels.status == COLOURS_CANCELLED {
            self.panels.status.clear();
        }
    }

    /// Cancels the values at the vertices being computed for surfaces and cartoons (the progress
    /// line's Cancel): the worker stops within a few thousand vertices, and the representations
    /// it worked for stay uncoloured until their frame, surface or colouring changes. True when
    /// something was being computed.
    pub fn cancel_vertex_values(&mut self) -> bool {
        let Some(w) = self.view.vertex_values.as_mut() else {
            return false;
        };
        let busy = w.cancel_all();
        for rep in &mut self.doc.reps.list {
            if !busy.contains(&rep.id.0) {
                continue;
            }
            match &mut rep.kind {
                RepKind::Field(f) => {
                    if let Some(c) = f.pipeline.color.as_mut() {
                        c.cancelled_vertices = c.asked_vertices;
                    }
                }
                RepKind::Cartoon(c) => c.pipeline.cancel_values(),
                RepKind::Atoms(_) => {}
            }
        }
        self.view.dirty.meshes = true;
        !busy.is_empty()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn words_parse_back_and_ranges_are_in_the_models_units() {
        for m in EspModel::KINDS {
            assert!(EspModel::parse(&m.word()).unwrap().same_kind(m), "{m:?}");
        }
        assert_eq!(
            EspModel::parse("2.5r").unwrap(),
            EspModel::DistanceDependent {
                slope_per_angstrom: 2.5
            }
        );
        assert!(EspModel::parse("-4r").is_err());
        assert!(EspModel::parse("gas").is_err());
        // 10 kcal/mol/e = 0.015936 hartree/e (627.5095 kcal/mol per hartree).
        let [lo, hi] = EspModel::four_r().default_range().unwrap();
        assert!((f64::from(hi) - 10.0 / 627.5095).abs() < 1e-6 && lo == -hi, "{hi}");
        assert_eq!(EspModel::Vacuum.default_range(), None);
        assert_eq!(
            EspModel::four_r().display(PotentialDisplay::KtPerE),
            PotentialDisplay::KcalPerMolPerE
        );
        let g = EspModel::four_r().vertex_screening();
        assert_eq!(g.model, 1);
        assert!((f64::from(g.a) - 0.25).abs() < 1e-6, "a = 1/4 Angstrom: {}", g.a);
    }
}
