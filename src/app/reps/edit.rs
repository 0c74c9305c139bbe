//! Editing the representation list: add, duplicate, delete, reorder, hide and change a
//! representation; the main field (the first field representation) as the orbital list and the
//! field panel set it; the defaults a document gets, and saving them in the settings.
//!
//! Called by `app::apply` for the representation commands and by session loading.

use super::ranges::{surface_value_range, value_range};
use super::spec::{self, RepSpec, SpecKind};
use super::{
    AtomsRep, CartoonRep, FieldPipeline, FieldRep, FieldStyle, Iso, LOBE_NEGATIVE, LOBE_POSITIVE, MOLSURF_COLOR,
    REPRESENTATION_COLORS, Rep, RepId, RepKind,
};
use crate::app::atoms::{AtomColoring, AtomStyle};
use crate::app::fields::FieldChoice;
use crate::app::slice::SlicePlane;
use crate::app::state::AppState;

/// The opacity a density's surface starts at (the others start opaque).
pub const DENSITY_OPACITY: f32 = 0.5;

/// A change to one representation (the payload of `Command::EditRep`).
#[derive(Clone, Debug, PartialEq)]
pub enum RepEdit {
    Visible(bool),
    /// Atoms and cartoons: the selection text (an error is shown live; the last valid selection
    /// stays).
    Selection(String),
    AtomStyle(AtomStyle),
    AtomColoring(AtomColoring),
    /// Atoms drawn as hydrogen bonds: their criteria.
    HBondCriteria(crate::analysis::hbonds::HBondCriteria),
    /// Fields: which field.
    Field(FieldChoice),
    /// A molecular surface: Gaussian or solvent-excluded, of the same atoms.
    SurfaceModel(crate::compute::molsurf::SurfaceModel),
    FieldStyle(FieldStyle),
    /// Isovalue in computed units, or a fraction of the maximum (must be finite and positive).
    IsoValue(f32),
    IsoRelative(bool),
    /// Colour of the positive (0) or negative (1) lobe.
    Color {
        lobe: usize,
        rgb: [f32; 3],
    },
    Opacity(f32),
    /// Cartoons: cartoon, tube or trace.
    CartoonStyle(crate::surface::cartoon::Style),
    CartoonColoring(crate::analysis::polymer::Coloring),
    /// Colours the surfaces by another field (`None`: lobe colours): a volume of the document
    /// (`FieldChoice::Volume`) or a field computed per frame; a range of `None` is chosen from the
    /// colouring field's values on the surfaces.
    ColorBy(Option<(FieldChoice, Option<[f32; 2]>)>),
}

impl AppState {
    /// The id of the main field representation.
    pub fn main_field_id(&self) -> Option<RepId> {
        self.doc.reps.fields().next().map(|(r, _)| r.id)
    }

    /// The document-independent form of a representation (for settings and session files).
    pub fn rep_spec(&self, rep: &Rep) -> RepSpec {
        let kind = match &rep.kind {
            RepKind::Atoms(a) => SpecKind::Atoms {
                selection: a.selection_in_use().to_string(),
                style: a.style,
                coloring: a.coloring,
                hbonds: a.hbonds,
            },
            RepKind::Field(f) => SpecKind::Field {
                field: spec::field_text(f.field, self.document()),
                style: f.style,
                iso: f.iso,
                colors: Some(f.colors),
                opacity: f.opacity,
                color_volume: f.coloring.and_then(|c| match c.source {
                    FieldChoice::Volume(v) => Some(v),
                    _ => None,
                }),
                color_by: f
                    .coloring
                    .filter(|c| !matches!(c.source, FieldChoice::Volume(_)))
                    .map(|c| spec::field_text(c.source, self.document())),
                color_range: f.coloring.and_then(|c| c.range),
                color_atoms: f.atom_coloring,
            },
            RepKind::Cartoon(c) => SpecKind::Cartoon {
                selection: c.selection_in_use().to_string(),
                style: c.style,
                coloring: c.coloring,
                color_by: c.color_by.map(|k| spec::field_text(k.source, self.document())),
                color_range: c.color_by.and_then(|k| k.range),
            },
        };
        RepSpec {
            visible: rep.visible,
            kind,
        }
    }

    /// True for a volume of the open document whose header names a potential (an APBS map).
    fn volume_is_potential(&self, field: FieldChoice) -> bool {
        match field {
            FieldChoice::Volume(i) => self
                .document()
                .and_then(|d| d.grids.get(i))
                .is_some_and(|g| crate::app::values::volume_potential_unit(&g.description).is_some()),
            _ => false,
        }
    }

    /// True for a volume whose title names a density (PySCF's "Electron density in real space",
    /// Gaussian's "Electron density from Total SCF Density", a spin density) and not a potential
    /// (Gaussian's "Electrostatic potential from Total SCF Density"): its surface starts
    /// translucent, as a computed density's does.
    fn volume_is_density(&self, field: FieldChoice) -> bool {
        match field {
            FieldChoice::Volume(i) => {
                !self.volume_is_potential(field)
                    && self
                        .document()
                        .and_then(|d| d.grids.get(i))
                        .is_some_and(|g| g.description.to_ascii_lowercase().contains("density"))
            }
            _ => false,
        }
    }

    fn new_field_rep(&mut self, field: FieldChoice, style: FieldStyle, colors: Option<[[f32; 3]; 2]>) -> Rep {
        let field = self.esp_field(field);
        let n = self.doc.reps.fields().count();
        let id = self.doc.reps.next_id();
        Rep {
            id,
            visible: true,
            kind: RepKind::Field(FieldRep {
                field,
                style,
                iso: Iso {
                    value: crate::app::values::default_iso(field),
                    relative: false,
                },
                colors: colors.unwrap_or(if matches!(field, FieldChoice::MolSurf { .. }) {
                    // A molecular surface has one side: neutral grey (as PyMOL and ChimeraX draw it), so
                    // it is not read as a potential while its colouring is being computed.
                    [MOLSURF_COLOR; 2]
                } else if crate::app::esp_model::is_charges_potential(field) || self.volume_is_potential(field) {
                    // Red negative, blue positive (the +iso lobe is the first).
                    [LOBE_NEGATIVE, LOBE_POSITIVE]
                } else {
                    REPRESENTATION_COLORS[n % REPRESENTATION_COLORS.len()]
                }),
                // A density's envelope encloses everything else drawn (the atoms, the orbitals): it
                // starts translucent so they stay in sight.
                opacity: if matches!(field, FieldChoice::Density | FieldChoice::SpinDensity)
                    || self.volume_is_density(field)
                {
                    DENSITY_OPACITY
                } else {
                    1.0
                },
                coloring: None,
                atom_coloring: None,
                pipeline: FieldPipeline::new(self.fields.add_slot()),
            }),
        }
    }

    /// A visible representation of `kind` with a fresh id.
    fn new_rep(&mut self, kind: RepKind) -> Rep {
        Rep {
            id: self.doc.reps.next_id(),
            visible: true,
            kind,
        }
    }

    /// Makes the representation `spec` describes for the open document.
    fn make_rep(&mut self, spec: &RepSpec) -> Result<Rep, String> {
        let mut rep = match &spec.kind {
            SpecKind::Atoms {
                selection,
                style,
                coloring,
                hbonds,
            } => {
                let mut a =
                    AtomsRep::new(selection, *style, *coloring).map_err(|e| format!("selection '{selection}': {e}"))?;
                a.hbonds = *hbonds;
                self.new_rep(RepKind::Atoms(a))
            }
            SpecKind::Field {
                field,
                style,
                iso,
                colors,
                opacity,
                color_volume: _,
                color_by: _,
                color_range: _,
                color_atoms: _,
            } => {
                if let Some((sel, model)) = spec::surface_text(field) {
                    self.document_mut()
                        .ok_or_else(|| "add a representation: open a document first".to_string())?
                        .add_surface(sel, model)?;
                }
                let doc = self
                    .document()
                    .ok_or_else(|| "add a representation: open a document first".to_string())?;
                let choice = spec::parse_field(field, doc)?;
                let mut rep = self.new_field_rep(choice, *style, *colors);
                if let RepKind::Field(f) = &mut rep.kind {
                    if iso.value.is_some() || iso.relative {
                        f.iso = *iso;
                    }
                    // A density volume starts translucent where the text gave no opacity of its own
                    // (`volume:1` reads as opaque to `spec::field_opacity`).
                    let volume_default = *opacity == spec::field_opacity(field) && self.volume_is_density(choice);
                    if !volume_default {
                        f.opacity = opacity.clamp(0.05, 1.0);
                    }
                }
                rep
            }
            SpecKind::Cartoon {
                selection,
                style,
                coloring,
                color_by: _,
                color_range: _,
            } => self.new_rep(RepKind::Cartoon(
                CartoonRep::new(selection, *style, *coloring).map_err(|e| format!("selection '{selection}': {e}"))?,
            )),
        };
        rep.visible = spec.visible;
        Ok(rep)
    }

    /// Adds the representation `spec` describes at the end of the list; nothing if its colouring fails.
    pub fn add_rep(&mut self, spec: &RepSpec) -> Result<RepId, String> {
        let range = match &spec.kind {
            SpecKind::Field { color_range, .. } | SpecKind::Cartoon { color_range, .. } => *color_range,
            SpecKind::Atoms { .. } => None,
        };
        let source = match &spec.kind {
            SpecKind::Field {
                color_volume, color_by, ..
            } => match (color_volume, color_by) {
                (Some(v), _) => Some(FieldChoice::Volume(*v)),
                (None, Some(text)) => {
                    let doc = self.document().ok_or_else(|| "no document".to_string())?;
                    Some(spec::parse_field(text, doc).map_err(|e| format!("colour by {e}"))?)
                }
                (None, None) => None,
            },
            _ => None,
        };
        let rep = self.make_rep(spec)?;
        let id = rep.id;
        self.insert_rep(self.doc.reps.list.len(), rep);
        // A selection that matches nothing is kept (the frame may change what it picks), and said.
        if let Some(RepKind::Atoms(a)) = self.doc.reps.list.iter().find(|r| r.id == id).map(|r| &r.kind)
            && a.error.is_none()
            && a.count == 0
            && self.document().is_some()
        {
            self.panels.status = format!(
                "the selection '{}' matches no atoms: the representation draws nothing",
                a.selection
            );
        }
        if let Some(source) = source {
            self.edit_rep(id, RepEdit::ColorBy(Some((source, range))));
        }
        if let SpecKind::Field {
            color_atoms: Some(c), ..
        } = &spec.kind
        {
            self.edit_rep(id, RepEdit::AtomColoring(*c));
        }
        if let SpecKind::Cartoon {
            color_by: Some(text), ..
        } = &spec.kind
        {
            // A colouring the files cannot give leaves the cartoon in its own colours, with a message.
            match spec::cartoon_color_field(text) {
                Some(source) => self.edit_rep(id, RepEdit::ColorBy(Some((source, range)))),
                None => self.error(format!(
                    "cannot colour the cartoon by {text:?}: expected esp or volume:N"
                )),
            }
        }
        Ok(id)
    }

    fn insert_rep(&mut self, at: usize, rep: Rep) {
        let atoms = matches!(rep.kind, RepKind::Atoms(_));
        let at = at.min(self.doc.reps.list.len());
        self.doc.reps.list.insert(at, rep);
        self.after_list_change(atoms);
    }

    fn after_list_change(&mut self, atoms: bool) {
        self.doc.reps.changed = true;
        self.view.dirty.slice = true;
        self.view.dirty.meshes = true;
        self.view.dirty.surface_color = true;
        if atoms {
            self.rebuild_atoms();
        }
    }

    /// Adds an isosurface representation of `field` (refused with a message when the document
    /// lacks it).
    pub fn add_field_rep(&mut self, field: FieldChoice) {
        let Some(doc) = self.document() else {
            self.error("add a representation: open a document first".into());
            return;
        };
        if !doc.has_field(field) {
            let what = self.describe_field(field);
            self.error(format!("the document has no {what} to show"));
            return;
        }
        let rep = self.new_field_rep(field, FieldStyle::Isosurface, None);
        self.insert_rep(self.doc.reps.list.len(), rep);
    }

    /// Adds a copy of representation `id` just below it.
    pub fn duplicate_rep(&mut self, id: RepId) {
        let Some(pos) = self.doc.reps.index_of(id) else {
            return;
        };
        let Some(rep) = self.doc.reps.list.get(pos) else {
            return;
        };
        let visible = rep.visible;
        let mut copy = match &rep.kind {
            RepKind::Atoms(a) => {
                let mut copy = AtomsRep {
                    selection: a.selection.clone(),
                    error: a.error.clone(),
                    parsed: a.parsed.clone(),
                    style: a.style,
                    coloring: a.coloring,
                    hbonds: a.hbonds,
                    count: 0,
                    cache: Default::default(),
                };
                copy.cache.key = None;
                self.new_rep(RepKind::Atoms(copy))
            }
            RepKind::Field(f) => {
                let (field, style, iso, colors, opacity) = (f.field, f.style, f.iso, f.colors, f.opacity);
                let coloring = f.coloring;
                let mut rep = self.new_field_rep(field, style, Some(colors));
                rep.visible = visible;
                if let RepKind::Field(g) = &mut rep.kind {
                    g.iso = iso;
                    g.opacity = opacity;
                }
                if let Some(c) = coloring {
                    let id = rep.id;
                    self.insert_rep(pos + 1, rep);
                    self.color_by(id, c.source, c.range);
                    return;
                }
                rep
            }
            RepKind::Cartoon(c) => {
                let kind = RepKind::Cartoon(c.duplicate());
                self.new_rep(kind)
            }
        };
        copy.visible = visible;
        self.insert_rep(pos + 1, copy);
    }

    /// Removes representation `id` and cancels its requests.
    pub fn delete_rep(&mut self, id: RepId) {
        let Some(pos) = self.doc.reps.index_of(id) else {
            return;
        };
        let rep = self.doc.reps.list.remove(pos);
        let atoms = match rep.kind {
            RepKind::Field(f) => {
                self.fields.remove_slot(f.pipeline.slot);
                if let Some(c) = f.pipeline.color {
                    self.fields.remove_slot(c.slot);
                }
                if let Some(m) = self.view.mesher.as_mut() {
                    m.remove_lane(id.0);
                }
                false
            }
            RepKind::Cartoon(_) => {
                if let Some(w) = self.view.cartoons.as_mut() {
                    w.remove_lane(id.0);
                }
                false
            }
            RepKind::Atoms(_) => true,
        };
        self.after_list_change(atoms);
    }

    /// Moves representation `id` to position `to` (clamped to the list).
    pub fn move_rep(&mut self, id: RepId, to: usize) {
        let Some(pos) = self.doc.reps.index_of(id) else {
            return;
        };
        let rep = self.doc.reps.list.remove(pos);
        let to = to.min(self.doc.reps.list.len());
        self.doc.reps.list.insert(to, rep);
        self.after_list_change(true);
    }

    /// Removes every representation (the document closed or changed).
    pub fn clear_reps(&mut self) {
        for rep in std::mem::take(&mut self.doc.reps.list) {
            if let (RepKind::Cartoon(_), Some(w)) = (&rep.kind, self.view.cartoons.as_mut()) {
                w.remove_lane(rep.id.0);
            }
            if let RepKind::Field(f) = rep.kind {
                self.fields.remove_slot(f.pipeline.slot);
                if let Some(c) = f.pipeline.color {
                    self.fields.remove_slot(c.slot);
                }
                if let Some(m) = self.view.mesher.as_mut() {
                    m.remove_lane(rep.id.0);
                }
            }
        }
        self.doc.reps.context = None;
        self.doc.reps.selected = None;
        self.after_list_change(true);
    }

    /// Replaces the representations by the defaults for the open document: the ones saved in the
    /// settings for its kind (small molecule or macromolecule), else those chosen by its content.
    pub fn reset_reps(&mut self) {
        self.clear_reps();
        let Some(doc) = self.document() else {
            return;
        };
        let macro_ = spec::is_macromolecular(&doc.structure);
        let saved = if macro_ {
            self.settings.default_reps.macromolecule.clone()
        } else {
            self.settings.default_reps.small_molecule.clone()
        };
        let mut specs = match saved {
            Some(s) => s,
            None => {
                let mut s = spec::default_atom_specs(&doc.structure);
                s.extend(spec::default_field_specs(doc));
                s
            }
        };
        // Saved defaults without a field of this document keep the document's own default field.
        if !specs.iter().any(|s| matches!(s.kind, SpecKind::Field { .. })) {
            specs.extend(spec::default_field_specs(doc));
        }
        for s in specs {
            if let Err(e) = self.add_rep(&s) {
                tracing::info!("default representation skipped: {e}");
            }
        }
        if let Some(FieldChoice::Orbital { spin, index }) = self.main_field() {
            self.doc.spin = spin;
            self.doc.orbital = Some(index);
        }
        // The panels start on the first field representation.
        self.doc.reps.selected = None;
        self.rebuild_atoms();
    }

    /// Keeps the current representations as the defaults for documents of this kind.
    pub fn save_reps_as_default(&mut self) {
        let Some(doc) = self.document() else {
            return;
        };
        let macro_ = spec::is_macromolecular(&doc.structure);
        let specs: Vec<RepSpec> = self.doc.reps.list.iter().map(|r| self.rep_spec(r)).collect();
        let kind = if macro_ {
            self.settings.default_reps.macromolecule = Some(specs);
            "proteins and nucleic acids"
        } else {
            self.settings.default_reps.small_molecule = Some(specs);
            "small molecules"
        };
        self.panels.status = format!("these representations are now the default for {kind}");
    }

    /// Marks the field representations whose field satisfies `which` for recomputation.
    pub(crate) fn mark_fields_stale(&mut self, which: impl Fn(FieldChoice) -> bool) {
        for rep in &mut self.doc.reps.list {
            if let RepKind::Field(f) = &mut rep.kind
                && which(f.field)
            {
                f.pipeline.mark_stale();
            }
        }
        self.view.dirty.meshes = true;
        self.view.dirty.slice = true;
    }

    /// Shows `field` in the main field (the first field representation), creating it when there is
    /// none; `None` removes it.
    pub fn set_main_field(&mut self, field: Option<FieldChoice>) {
        let id = self.main_field_id();
        match (field, id) {
            (None, Some(id)) => self.delete_rep(id),
            (None, None) => {}
            (Some(f), Some(id)) => self.edit_rep(id, RepEdit::Field(f)),
            (Some(f), None) => self.add_field_rep(f),
        }
        self.load_potential_windows(None);
    }

    /// Every potential representation averages over `frames` frames.
    pub(crate) fn set_potential_window(&mut self, frames: u16) {
        let choice = crate::app::potential::potential_choice(frames);
        for rep in &mut self.doc.reps.list {
            if let RepKind::Field(f) = &mut rep.kind
                && f.field.is_potential()
                && f.field != choice
            {
                f.field = choice;
                f.pipeline.mark_stale();
            }
        }
        self.load_potential_windows(None);
        self.view.dirty.meshes = true;
    }

    /// The field a slice from the Field panel cuts: for a surface coloured by a field, that field
    /// (the colours the user reads: the potential on a density or molecular surface), else the
    /// field the panel edits (the selected field representation, else the first); a molecular
    /// surface's own values are only the surface's level, not a quantity to read. An error in
    /// words for the status line when there is nothing to slice.
    pub fn slice_field(&self) -> Result<FieldChoice, String> {
        let Some(rep) = self.panel_field_rep() else {
            return Err("slice: there is no field to slice; add one first (Add menu, or 'field add')".into());
        };
        match rep.coloring {
            Some(c) => Ok(c.source),
            None if !matches!(rep.field, FieldChoice::MolSurf { .. }) => Ok(rep.field),
            None => Err(
                "slice: a molecular surface has no values to slice; colour it by a potential \
                         first, or add the potential itself (Add > Potential, or 'field add pb')"
                    .into(),
            ),
        }
    }

    /// Whether the drawn slice (the topmost visible slice representation) cuts the field the Field
    /// panel edits ([`AppState::slice_field`]).
    pub fn panel_slice_shown(&self) -> bool {
        let Ok(field) = self.slice_field() else {
            return false;
        };
        self.doc
            .reps
            .fields()
            .find(|(r, f)| r.visible && matches!(f.style, FieldStyle::Slice(_)))
            .is_some_and(|(_, f)| f.field == field)
    }

    /// Shows (true) the slice of the field the Field panel edits ([`AppState::slice_field`]): its
    /// slice representation, added just below the panel's representation when there is none, and
    /// every other slice hidden (one plane is drawn); or hides (false) every slice.
    pub(crate) fn show_main_slice(&mut self, on: bool) {
        let slices: Vec<(RepId, FieldChoice, bool)> = self
            .doc
            .reps
            .fields()
            .filter(|(_, f)| matches!(f.style, FieldStyle::Slice(_)))
            .map(|(r, f)| (r.id, f.field, r.visible))
            .collect();
        if !on {
            for (id, _, visible) in slices {
                if visible {
                    self.edit_rep(id, RepEdit::Visible(false));
                }
            }
            return;
        }
        let field = match self.slice_field() {
            Ok(f) => f,
            Err(e) => {
                self.error(e);
                return;
            }
        };
        for (id, f, visible) in &slices {
            if *visible && *f != field {
                self.edit_rep(*id, RepEdit::Visible(false));
            }
        }
        let own: Vec<RepId> = slices
            .iter()
            .filter(|(_, f, _)| *f == field)
            .map(|(id, _, _)| *id)
            .collect();
        if own.is_empty() {
            let at = self
                .panel_field_id()
                .and_then(|id| self.doc.reps.index_of(id))
                .map_or(0, |i| i + 1);
            let rep = self.new_field_rep(field, FieldStyle::Slice(SlicePlane::default()), None);
            self.insert_rep(at, rep);
        }
        for id in own {
            self.edit_rep(id, RepEdit::Visible(true));
        }
    }

    /// Moves the drawn slice (the topmost visible slice representation) to `plane`.
    pub(crate) fn set_slice_plane(&mut self, plane: SlicePlane) {
        let target = self
            .doc
            .reps
            .fields()
            .find(|(r, f)| r.visible && matches!(f.style, FieldStyle::Slice(_)))
            .map(|(r, _)| r.id);
        if let Some(id) = target
            && let Some(RepKind::Field(f)) = self.doc.reps.get_mut(id).map(|r| &mut r.kind)
        {
            f.style = FieldStyle::Slice(plane);
            self.view.dirty.slice = true;
        }
    }

    /// Applies one edit to representation `id`.
    pub fn edit_rep(&mut self, id: RepId, edit: RepEdit) {
        let has_field = |state: &AppState, f: FieldChoice| state.document().is_some_and(|d| d.has_field(f));
        if let RepEdit::Field(f) = edit
            && !has_field(self, f)
        {
            let what = self.describe_field(f);
            self.error(format!("the document has no {what} to show"));
            return;
        }
        if let RepEdit::ColorBy(Some((source, range))) = edit {
            self.color_by(id, source, range);
            return;
        }
        // A field representation's selection: the molecular surface of those atoms (the selection
        // registered with the document, as `molsurf:SEL` registers it when added).
        // Its kind (Gaussian or solvent-excluded): the same atoms' other surface.
        if let (RepEdit::Selection(_) | RepEdit::SurfaceModel(_), Some(f)) = (&edit, self.doc.reps.field(id)) {
            let current = match f.field {
                FieldChoice::MolSurf { selection } => self.document().and_then(|d| {
                    Some((
                        d.surface_selections.get(usize::from(selection))?.clone(),
                        d.surface_model(selection),
                    ))
                }),
                _ => None,
            };
            let (text, model) = match (&edit, current) {
                (RepEdit::Selection(text), current) => (text.clone(), current.map(|c| c.1).unwrap_or_default()),
                (RepEdit::SurfaceModel(m), Some((text, _))) => (text, *m),
                _ => {
                    self.error(
                        "only a molecular surface has a surface kind (Gaussian or solvent-excluded)".to_string(),
                    );
                    return;
                }
            };
            match self.document_mut().map(|d| d.add_surface(&text, model)) {
                Some(Ok(selection)) => self.edit_rep(id, RepEdit::Field(FieldChoice::MolSurf { selection })),
                Some(Err(e)) => self.error(e),
                None => {}
            }
            return;
        }
        let edit = match edit {
            RepEdit::Field(f) => RepEdit::Field(self.esp_field(f)),
            e => e,
        };
        let Some(rep) = self.doc.reps.get_mut(id) else {
            return;
        };
        let (mut atoms_changed, mut list_changed) = (false, false);
        match (&mut rep.kind, edit) {
            (_, RepEdit::Visible(v)) => {
                rep.visible = v;
                if let RepKind::Field(f) = &mut rep.kind {
                    f.pipeline.mark_stale();
                }
                atoms_changed = matches!(rep.kind, RepKind::Atoms(_));
                list_changed = true;
            }
            (RepKind::Atoms(a), RepEdit::Selection(text)) => {
                a.set_selection(&text);
                atoms_changed = true;
            }
            (RepKind::Atoms(a), RepEdit::AtomStyle(s)) => {
                a.style = s;
                atoms_changed = true;
            }
            (RepKind::Atoms(a), RepEdit::AtomColoring(c)) => {
                a.coloring = c;
                atoms_changed = true;
            }
            (RepKind::Atoms(a), RepEdit::HBondCriteria(c)) => {
                a.hbonds = c;
                atoms_changed = true;
            }
            (RepKind::Cartoon(c), RepEdit::Selection(text)) => c.set_selection(&text),
            (RepKind::Cartoon(c), RepEdit::CartoonStyle(s)) => c.style = s,
            (RepKind::Cartoon(c), RepEdit::CartoonColoring(k)) => {
                c.coloring = k;
                c.color_by = None;
            }
            (RepKind::Cartoon(c), RepEdit::ColorBy(None)) => c.color_by = None,
            (RepKind::Field(f), RepEdit::Field(field)) if f.field != field => {
                let same_kind = std::mem::discriminant(&f.field) == std::mem::discriminant(&field);
                if !same_kind {
                    f.iso = Iso {
                        value: crate::app::values::default_iso(field),
                        relative: false,
                    };
                    // A colour range chosen for one kind of field means nothing for another.
                    if let FieldStyle::Slice(p) = &mut f.style {
                        p.range = None;
                    }
                }
                if !matches!(field, FieldChoice::MolSurf { .. }) {
                    f.atom_coloring = None;
                }
                f.field = field;
                f.pipeline.mark_stale();
            }
            (RepKind::Field(f), RepEdit::FieldStyle(s)) => {
                f.style = s;
                f.pipeline.mark_stale();
                list_changed = true;
            }
            // A free energy's surfaces are at negative values too (the favoured regions).
            (RepKind::Field(f), RepEdit::IsoValue(v))
                if v.is_finite() && (v > 0.0 || (v != 0.0 && matches!(f.field, FieldChoice::Ils(_)))) =>
            {
                f.iso.value = Some(v);
                f.pipeline.mark_stale();
            }
            (RepKind::Field(f), RepEdit::IsoRelative(relative)) if f.iso.relative != relative => {
                f.iso.relative = relative;
                if relative && f.iso.value.is_none_or(|v| v > 1.0) {
                    f.iso.value = Some(0.1);
                }
                f.pipeline.mark_stale();
            }
            (RepKind::Field(f), RepEdit::Color { lobe, rgb }) => {
                if let Some(c) = f.colors.get_mut(lobe)
                    && rgb.iter().all(|x| x.is_finite())
                {
                    *c = rgb.map(|x| x.clamp(0.0, 1.0));
                    // A colour chosen for a surface coloured by its atoms makes it one colour.
                    f.atom_coloring = None;
                    list_changed = true;
                }
            }
            (RepKind::Field(f), RepEdit::Opacity(o)) if o.is_finite() => {
                f.opacity = o.clamp(0.05, 1.0);
                list_changed = true;
            }
            (RepKind::Field(f), RepEdit::AtomColoring(c)) if matches!(f.field, FieldChoice::MolSurf { .. }) => {
                f.atom_coloring = Some(c);
                f.coloring = None;
                if let Some(c) = f.pipeline.color.take() {
                    self.fields.remove_slot(c.slot);
                }
                self.view.dirty.surface_color = true;
            }
            (RepKind::Field(f), RepEdit::ColorBy(None)) => {
                f.coloring = None;
                f.atom_coloring = None;
                if let Some(c) = f.pipeline.color.take() {
                    self.fields.remove_slot(c.slot);
                }
                self.view.dirty.surface_color = true;
            }
            // An atom edit of a field representation or the reverse: nothing to do.
            _ => {}
        }
        if list_changed {
            self.doc.reps.changed = true;
        }
        self.view.dirty.slice = true;
        self.view.dirty.meshes = true;
        if atoms_changed {
            self.rebuild_atoms();
        }
        self.load_potential_windows(None);
    }

    /// Colours representation `id`'s surfaces by `source`: a volume of the document at once (the
    /// range from its values on the surfaces when not given), a computed field through the
    /// representation's colour slot as each frame's field arrives (`update_reps`; the range chosen
    /// when the first one arrives when not given).
    fn color_by(&mut self, id: RepId, source: FieldChoice, range: Option<[f32; 2]>) {
        // The charges' potential is computed in the electrostatic model (`app::esp_model`); asking
        // for the Poisson-Boltzmann potential by name chooses that model.
        if crate::app::pb::is_pb(source) && !self.esp.model.is_pb() {
            self.set_esp_model(crate::app::esp_model::EspModel::PoissonBoltzmann);
        }
        let source = self.esp_source(source);
        if let Some(RepKind::Cartoon(_)) = self.doc.reps.get(id).map(|r| &r.kind) {
            self.color_cartoon_by(id, source, range);
            return;
        }
        if !self.document().is_some_and(|d| d.has_field(source)) {
            let what = self.describe_field(source);
            self.error(format!("no {what} to colour the surface with"));
            return;
        }
        let model_range = self.esp_default_range(source);
        let esp_revision = self.esp.revision;
        let volume = match source {
            FieldChoice::Volume(v) => self.document().and_then(|d| d.grids.get(v)).cloned(),
            _ => None,
        };
        let Some(f) = self.doc.reps.field(id) else {
            return;
        };
        let same_source = f.coloring.is_some_and(|c| c.source == source);
        // New Poisson-Boltzmann parameters keep the channel: the last solution stays drawn until
        // the new one arrives (the legend says so).
        let pb = crate::app::pb::is_pb;
        let same_channel = same_source || f.coloring.is_some_and(|c| pb(c.source) && pb(source));
        let shown = f.pipeline.color.as_ref().and_then(|c| c.shown.as_ref());
        let range = match (&volume, range, shown) {
            // A new colouring by a potential: its model's range (+-10 kcal/mol/e at 4r, +-5 kT/e for PB or a map).
            (_, None, _) if !same_source && model_range.is_some() => model_range,
            // Before the surface exists its range waits for it (`AppState::update_reps`), unless
            // the render device extracts the surfaces (none on the host: the whole map's range).
            (Some(grid), None, _) if f.has_lobes() || self.view.gpu_surfaces => {
                Some(surface_value_range(&f.pipeline.lobes, grid))
            }
            // Auto range again, from the colouring field shown.
            (None, None, Some((_, grid))) if same_source => Some(surface_value_range(&f.pipeline.lobes, grid)),
            // ... or from the values at the vertices.
            (None, None, None) if same_source && f.vertex_values().is_some() => f
                .vertex_values()
                .map(|v| value_range(v.iter().flatten().flat_map(|v| v.iter().copied()).collect())),
            (_, r, _) => r,
        };
        let mut channel = match self.doc.reps.get_mut(id).map(|r| &mut r.kind) {
            Some(RepKind::Field(f)) => f.pipeline.color.take(),
            _ => None,
        };
        // A computed source has a colour channel (its own request slot); a new source starts afresh.
        if !(volume.is_none() && same_channel)
            && let Some(c) = channel.take()
        {
            self.fields.remove_slot(c.slot);
        }
        if volume.is_none() && channel.is_none() {
            channel = Some(Box::new(super::ColorChannel::new(self.fields.add_slot())));
        }
        if let Some(c) = channel.as_mut() {
            c.esp_revision = esp_revision;
            c.offset_pb = crate::app::pb::is_pb(source) && self.esp.ramp_above;
        }
        if let Some(RepKind::Field(f)) = self.doc.reps.get_mut(id).map(|r| &mut r.kind) {
            f.coloring = Some(super::SurfaceColoring { source, range });
            f.atom_coloring = None;
            f.pipeline.color = channel;
        }
        self.view.dirty.surface_color = true;
    }

    /// The surface colouring of the representation the field panel edits, if any.
    pub fn surface_color(&self) -> Option<super::SurfaceColoring> {
        self.panel_field_rep()?.coloring
    }
}
