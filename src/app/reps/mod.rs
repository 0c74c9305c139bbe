//! The representation list: what the 3-D view shows, as VMD's reps and Mol*'s representations.
//!
//! Each [`Rep`] is *what* (atoms picked by a selection, the polymer residues a selection picks, or a
//! field: an orbital, the density, the spin density, the potential of the charges or of the
//! wavefunction, a volume read from a file) + *how* (an atom style, cartoon/tube/trace, or an
//! isosurface or slice) + colouring + opacity + visibility. A field
//! representation owns its
//! whole pipeline ([`FieldPipeline`]): a request slot in the [`FieldService`](super::fields), the key
//! it asked for, the grid and meshes it shows (or, computed on the render device, the field the draw
//! stage computes there: `device`), its look-ahead and its lane of the isosurface thread.
//! One update loop drives them all ([`AppState::update_reps`], in `update`); the "main field" is
//! simply the first field representation. The field panel edits the representation selected in the
//! list (else the main field), and the orbital list the selected orbital representation (else the
//! topmost one, else a new one): see `edit`. Atoms are drawn
//! as the union of the visible atom representations, each with its own style and colouring.
//!
//! New kinds plug in here: a variant of [`RepKind`] (and of [`spec::SpecKind`] for files), with one
//! arm in each stage — `label`, the update loop, the draw stage (`app::draw`), the editor
//! (`ui::reps`) and the spec conversion. Commands that edit the list are applied in `edit`;
//! `spec` holds the document-independent form saved in settings and session files.

pub mod cartoon;
mod device;
mod edit;
mod ranges;
mod select;
pub mod spec;
mod surface_atoms;
mod update;

pub use cartoon::{CartoonKey, CartoonRep, CartoonValuesKey};
pub use edit::{DENSITY_OPACITY, RepEdit};
pub use ranges::{surface_value_range, value_range};
pub use spec::{RepSpec, SpecKind};

use super::atoms::{AtomColoring, AtomStyle};
use super::fields::{FieldChoice, FieldKey, FieldSlot, MeshKey};
use super::slice::SlicePlane;
use crate::analysis::hbonds::{HBondCriteria, HBondSet};
use crate::compute::wgpu::device_field::DeviceField;
use crate::jobs::vertex_values::LobeValues;
use crate::model::Grid3;
use crate::model::select::Selection;
use crate::surface::MeshData;
use std::sync::Arc;

/// Names a representation within a run (commands name representations by it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RepId(pub u64);

/// One representation.
pub struct Rep {
    pub id: RepId,
    pub visible: bool,
    pub kind: RepKind,
}

/// What a representation shows and how.
pub enum RepKind {
    Atoms(AtomsRep),
    Field(FieldRep),
    /// Polymer residues as cartoon, tube or trace.
    Cartoon(CartoonRep),
}

/// Atoms picked by a selection, drawn in an atom style and coloured by a scheme.
pub struct AtomsRep {
    /// The selection text as typed.
    pub selection: String,
    /// Why the text does not parse (the representation keeps its last valid selection meanwhile).
    pub error: Option<String>,
    parsed: Selection,
    pub style: AtomStyle,
    pub coloring: AtomColoring,
    /// The criteria of the hydrogen bonds drawn in the `HBonds` style.
    pub hbonds: HBondCriteria,
    /// Atoms the selection picks (for the editor), once evaluated.
    pub count: usize,
    pub(crate) cache: AtomCache,
}

/// What an atom representation computed for its document (and frame, for geometric selections).
#[derive(Default)]
pub(crate) struct AtomCache {
    /// (document, frame for selections that depend on coordinates).
    pub(crate) key: Option<(u64, Option<usize>)>,
    pub(crate) indices: Vec<u32>,
    /// Bonds with both atoms selected.
    pub(crate) bonds: Vec<[u32; 2]>,
    /// Selected atoms without a selected bond (drawn as crosses in the lines style).
    pub(crate) lone: Vec<u32>,
    /// Colours of every atom under `coloring`, for the document.
    pub(crate) colors: Option<(u64, AtomColoring, Vec<[u8; 4]>)>,
    /// The hydrogen bonds among the selected atoms (style `HBonds`), for (document, frame, criteria).
    pub(crate) hbonds: Option<((u64, usize, HBondCriteria), HBondSet)>,
}

/// A representation's selection text edited: keeps `text`, and either its parsed form (true) or
/// the parser's error, the last valid selection staying in use (false).
fn reparse(text: &str, selection: &mut String, parsed: &mut Selection, error: &mut Option<String>) -> bool {
    *selection = text.to_string();
    match Selection::parse(text) {
        Ok(s) => {
            *parsed = s;
            *error = None;
            true
        }
        Err(e) => {
            *error = Some(e.to_string());
            false
        }
    }
}

impl AtomsRep {
    /// The selection in use: the text typed, or while that does not parse the last valid one.
    pub fn selection_in_use(&self) -> &str {
        self.parsed.text()
    }

    /// Atoms picked by `selection` (`Err` with the parser's message when it does not parse).
    pub fn new(selection: &str, style: AtomStyle, coloring: AtomColoring) -> Result<AtomsRep, String> {
        let parsed = Selection::parse(selection).map_err(|e| e.to_string())?;
        Ok(AtomsRep {
            selection: selection.to_string(),
            error: None,
            parsed,
            style,
            coloring,
            hbonds: HBondCriteria::default(),
            count: 0,
            cache: AtomCache::default(),
        })
    }

    /// Sets the selection text: parsed at once; an error is kept for the editor and the last valid
    /// selection stays in use.
    pub fn set_selection(&mut self, text: &str) {
        if reparse(text, &mut self.selection, &mut self.parsed, &mut self.error) {
            self.cache.key = None;
        }
    }

    /// The selection in use (the last one that parsed).
    pub fn parsed(&self) -> &Selection {
        &self.parsed
    }

    /// The hydrogen bonds drawn (style `HBonds`), as last found.
    pub fn hbond_set(&self) -> Option<&HBondSet> {
        self.cache.hbonds.as_ref().map(|(_, s)| s)
    }
}

/// How a field representation draws its field.
#[derive(Clone, Copy, Debug, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub enum FieldStyle {
    /// Isosurfaces at +iso and -iso (one for fields of one sign).
    #[default]
    Isosurface,
    /// The values on a plane through a colormap (one slice is drawn: the topmost visible).
    Slice(SlicePlane),
}

impl FieldStyle {
    pub fn name(self) -> &'static str {
        match self {
            FieldStyle::Isosurface => "Isosurface",
            FieldStyle::Slice(_) => "Slice",
        }
    }
}

/// The isovalue of a field representation.
#[derive(Clone, Copy, Debug, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct Iso {
    /// In the field's computed units (atomic units for orbitals and densities, hartree/e for
    /// potentials, file units for volumes) or, when `relative`, a fraction of the largest |value|.
    /// `None`: the default of the field kind, chosen when the first grid arrives
    /// (`values::default_iso_for_grid`).
    pub value: Option<f32>,
    pub relative: bool,
}

/// Surfaces coloured by another field: a volume of the document (e.g. a density isosurface by a
/// potential map read from a file), a potential evaluated exactly at the vertices of the surfaces
/// (of the structure's charges, or the wavefunction's own: the ESP-on-density picture), or another
/// field computed for the frame shown on the representation's lattice and sampled trilinearly
/// (through the representation's colour slot; also the wavefunction's potential on surfaces too
/// large for its values at the vertices, `analysis::vertex_values::qm_vertices_fit`). Cartoons
/// coloured by a field use it too (a volume, or the potential of the charges at their vertices).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SurfaceColoring {
    /// The colouring field: `FieldChoice::Volume(i)` for the document's volume `i`.
    pub source: FieldChoice,
    /// Values at the colormap's start and end; `None` until the colouring field first arrives (then
    /// chosen from its values on the surfaces).
    pub range: Option<[f32; 2]>,
}

/// A field drawn as an isosurface or a slice.
pub struct FieldRep {
    pub field: FieldChoice,
    pub style: FieldStyle,
    pub iso: Iso,
    /// Colours of the positive and negative lobes (linear RGB 0..1).
    pub colors: [[f32; 3]; 2],
    /// Surface opacity 0.05..1 (below 1: order-independent transparency).
    pub opacity: f32,
    /// Colours the surfaces by another field instead of the lobe colours.
    pub coloring: Option<SurfaceColoring>,
    /// A molecular surface coloured by its atoms (each vertex as the atom whose sphere lies
    /// nearest it, `surface_atoms`) instead of one colour; never set with `coloring`.
    pub atom_coloring: Option<crate::app::atoms::AtomColoring>,
    pub pipeline: FieldPipeline,
}

/// A field representation's pipeline: request slot, key asked for, what is shown, its meshes and
/// its lane of the isosurface thread.
pub struct FieldPipeline {
    /// Its own request slot (view and look-ahead lanes) in the field service.
    pub slot: FieldSlot,
    /// The grid shown (an older key while a newer one is computed).
    pub shown: Option<(FieldKey, Arc<Grid3>)>,
    /// Its positive and negative lobes (CPU extraction; empty when the window extracts on the GPU
    /// or the style is a slice).
    pub lobes: [Option<Arc<MeshData>>; 2],
    /// The absolute isovalue of what is shown.
    pub shown_iso: f32,
    /// Bumped whenever what is shown changes (the draw stage redoes only what changed).
    pub revision: u64,
    /// The key last asked for (a failed request is not repeated every frame).
    pub(crate) asked: Option<FieldKey>,
    /// Settings changed since `shown` was made.
    pub(crate) stale: bool,
    /// The grid (isovalue, preview or not) whose lobes the isosurface thread is extracting; it is
    /// shown with them.
    pub(crate) meshing: Option<(FieldKey, Arc<Grid3>, f32, bool)>,
    /// The lobes shown are a preview (from every second lattice point, while playing).
    pub(crate) preview: bool,
    /// The channel of a computed colouring field (none for lobe colours or a volume).
    pub color: Option<Box<ColorChannel>>,
    /// The field shown when the render device computes it (`fields::device`): its lattice and
    /// packed inputs, no values on the host (`shown` is then `None`); the draw stage records the
    /// pass into the lattice buffer its marching cubes reads.
    pub device_shown: Option<(FieldKey, Arc<DeviceField>)>,
    /// The colours of the lobes' vertices by their atoms (`FieldRep::atom_coloring`).
    pub(crate) atom_rgba: Option<surface_atoms::VertexAtomColors>,
    /// Why the render device does not serve this representation although it was chosen (said
    /// once per reason).
    pub device_fallback: Option<String>,
    /// The render device failed this representation (packing, limits, the pass): the worker pool
    /// serves it until the setting changes.
    pub(crate) device_failed: bool,
}

/// Where a representation's computed colouring field comes from: its own request slot, the key last
/// asked for and the grid shown (the frame shown, or the newest that arrived). A potential (of point
/// charges, or a wavefunction's own) is not computed on a lattice: its values at the vertices of the
/// lobes shown are (`vertices`, computed exactly by `analysis::vertex_values`), unless the surfaces
/// outgrew that (`lattice_fallback`).
pub struct ColorChannel {
    pub slot: FieldSlot,
    pub(crate) asked: Option<FieldKey>,
    pub shown: Option<(FieldKey, Arc<Grid3>)>,
    /// The potential at the vertices of the lobes (hartree/e), with what they are of.
    pub vertices: Option<(VertexKey, LobeValues)>,
    /// The vertex values last asked for (a failed request is not repeated every frame).
    pub(crate) asked_vertices: Option<VertexKey>,
    /// Vertex values the user cancelled while they were computed: not asked for again until the
    /// lobes, the frame or the colouring change.
    pub(crate) cancelled_vertices: Option<VertexKey>,
    /// Vertex values made, oldest first (at most [`VERTEX_CACHE_ENTRIES`]).
    pub(crate) vertex_cache: Vec<(VertexKey, LobeValues)>,
    /// The lobes last shown with their values at the vertices: drawn, coloured, while a later
    /// frame's lobes wait for theirs ([`FieldRep::drawn_lobes`]).
    pub(crate) colored: Option<ColoredLobes>,
    /// The electrostatic model's revision (`AppState::esp`) its values at the vertices are of.
    pub esp_revision: u32,
    /// A Poisson-Boltzmann colouring sampled outside the surface (`AppState::esp`'s ramp-above
    /// option): the solution is sampled at the moved vertices, per vertex, instead of by the
    /// renderer at the vertices themselves.
    pub offset_pb: bool,
    /// A wavefunction's potential is sampled trilinearly from its lattice instead of evaluated at
    /// the vertices (the surfaces outgrew `analysis::vertex_values::qm_vertices_fit`, or the
    /// wavefunction describes a QM region placed on MD frames); said once, kept while the
    /// representation keeps that colouring.
    pub lattice_fallback: bool,
}

/// Lobes with their values at the vertices, and what those are of.
pub struct ColoredLobes {
    pub key: VertexKey,
    pub lobes: [Option<Arc<MeshData>>; 2],
    pub values: LobeValues,
}

/// Vertex values a colour channel keeps (the frames played last).
const VERTEX_CACHE_ENTRIES: usize = 8;

/// What a surface's vertex values are of: its lobes (field key and isovalue, preview or not) and
/// the colouring field (a potential of charges or a wavefunction's, at the lobes' frame).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VertexKey {
    pub mesh: MeshKey,
    pub preview: bool,
    pub source: FieldChoice,
    /// The electrostatic model's revision (model and sampling offset).
    pub esp_revision: u32,
}

impl ColorChannel {
    pub fn new(slot: FieldSlot) -> ColorChannel {
        ColorChannel {
            slot,
            asked: None,
            shown: None,
            vertices: None,
            asked_vertices: None,
            cancelled_vertices: None,
            vertex_cache: Vec::new(),
            colored: None,
            esp_revision: 0,
            offset_pb: false,
            lattice_fallback: false,
        }
    }

    pub(crate) fn cached_vertices(&self, key: &VertexKey) -> Option<LobeValues> {
        self.vertex_cache.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone())
    }

    pub(crate) fn insert_vertices(&mut self, key: VertexKey, values: LobeValues) {
        insert_bounded(&mut self.vertex_cache, key, values, VERTEX_CACHE_ENTRIES);
    }
}

/// Puts `value` for `key` last in `cache` (replacing an older one for it), dropping the oldest
/// beyond `max` entries.
pub(crate) fn insert_bounded<K: PartialEq, V>(cache: &mut Vec<(K, V)>, key: K, value: V, max: usize) {
    cache.retain(|(k, _)| *k != key);
    cache.push((key, value));
    while cache.len() > max {
        cache.remove(0);
    }
}

/// What values computed at the vertices of a representation's meshes are of (the key of the
/// vertex-values thread's requests): a field representation's lobes or a cartoon's mesh.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValuesKey {
    Lobes(VertexKey),
    Cartoon(CartoonValuesKey),
}

impl FieldPipeline {
    pub fn new(slot: FieldSlot) -> FieldPipeline {
        FieldPipeline {
            slot,
            shown: None,
            lobes: [None, None],
            shown_iso: 0.0,
            revision: 0,
            asked: None,
            stale: true,
            meshing: None,
            preview: false,
            color: None,
            device_shown: None,
            atom_rgba: None,
            device_fallback: None,
            device_failed: false,
        }
    }

    /// Makes it rebuild its picture at the next update.
    pub fn mark_stale(&mut self) {
        self.stale = true;
        self.asked = None;
    }

    /// Forgets what is shown.
    pub(crate) fn clear(&mut self) -> bool {
        self.meshing = None;
        self.preview = false;
        // Both taken (not `||`: a short circuit would keep the device field when a grid was shown).
        let host = self.shown.take().is_some();
        let device = self.device_shown.take().is_some();
        let had = host || device || self.lobes.iter().any(|l| l.is_some());
        self.lobes = [None, None];
        if had {
            self.revision += 1;
        }
        had
    }

    /// Shows a new picture: a host grid (with its lobes, for the CPU extractor) or a field the render
    /// device computes, at the absolute isovalue `iso`.
    pub(crate) fn show(
        &mut self,
        host: Option<(FieldKey, Arc<Grid3>)>,
        device: Option<(FieldKey, Arc<DeviceField>)>,
        lobes: [Option<Arc<MeshData>>; 2],
        iso: f32,
        preview: bool,
    ) {
        self.shown = host;
        self.device_shown = device;
        self.lobes = lobes;
        self.shown_iso = iso;
        self.preview = preview;
        self.meshing = None;
        self.stale = false;
        self.revision += 1;
    }

    /// The key of what is shown: a host grid, or a field the render device computes.
    pub fn shown_key(&self) -> Option<FieldKey> {
        self.shown
            .as_ref()
            .map(|(k, _)| *k)
            .or_else(|| self.device_shown.as_ref().map(|(k, _)| *k))
    }

    /// Whether its lobes are being extracted off the UI thread for a grid not yet shown.
    pub fn meshing(&self) -> bool {
        self.meshing.is_some()
    }
}

impl FieldRep {
    /// Absolute isovalue for `grid` (the default of its kind when none is set).
    pub fn absolute_iso(&self, grid: &Grid3) -> f32 {
        let value = self
            .iso
            .value
            .unwrap_or_else(|| super::values::default_iso_for_grid(self.field, grid));
        if self.iso.relative {
            let max = grid.min_max().map_or(0.0, |(lo, hi)| lo.abs().max(hi.abs()));
            value.min(1.0) * max
        } else {
            value
        }
    }

    /// True when the surfaces have two signs: a signed field, or a volume with negative values.
    pub fn is_signed(&self, grid: &Grid3) -> bool {
        match self.field {
            FieldChoice::Volume(_) => grid.min_max().is_some_and(|(lo, _)| lo < 0.0),
            f => f.is_signed(),
        }
    }

    /// True when it has surfaces to show (extracted on the host).
    pub fn has_lobes(&self) -> bool {
        self.pipeline.lobes.iter().any(Option::is_some)
    }

    /// True when it draws isosurfaces.
    pub fn is_surface(&self) -> bool {
        self.style == FieldStyle::Isosurface
    }

    /// The grid its surfaces are coloured by: the document's volume, or the computed colouring
    /// field that arrived last; none for a potential evaluated at the vertices
    /// ([`FieldRep::vertex_values`]).
    pub fn color_grid(&self, doc: &super::document::Document) -> Option<Arc<Grid3>> {
        match self.coloring?.source {
            FieldChoice::Volume(v) => doc.grids.get(v).cloned(),
            _ if self.colors_by_vertex_values() => None,
            _ => self.pipeline.color.as_ref()?.shown.as_ref().map(|(_, g)| Arc::clone(g)),
        }
    }

    /// True when its surfaces are coloured by a potential evaluated at their vertices: that of point
    /// charges, or the wavefunction's own (unless it fell back to its lattice).
    pub fn colors_by_vertex_values(&self) -> bool {
        self.coloring.is_some_and(|c| match c.source {
            FieldChoice::WavefunctionPotential => !self.pipeline.color.as_ref().is_some_and(|ch| ch.lattice_fallback),
            FieldChoice::PotentialPb { .. } => self.pipeline.color.as_ref().is_some_and(|ch| ch.offset_pb),
            s => s.is_potential(),
        })
    }

    /// True when its surfaces are coloured by a field computed on a lattice and sampled
    /// trilinearly at the vertices (not a volume of the files, not values at the vertices).
    pub fn colors_from_lattice(&self) -> bool {
        self.coloring
            .is_some_and(|c| !matches!(c.source, FieldChoice::Volume(_)) && !self.colors_by_vertex_values())
    }

    /// The key of the vertex values its lobes shown need (when coloured by a potential at the
    /// vertices and there are lobes).
    pub fn wanted_vertex_key(&self) -> Option<VertexKey> {
        let source = self
            .coloring
            .map(|c| c.source)
            .filter(|_| self.colors_by_vertex_values())?;
        let p = &self.pipeline;
        let (key, _) = p.shown.as_ref()?;
        if p.lobes.iter().all(|l| l.is_none()) {
            return None;
        }
        Some(VertexKey {
            mesh: MeshKey::new(*key, p.shown_iso),
            preview: p.preview,
            source,
            esp_revision: p.color.as_ref().map_or(0, |c| c.esp_revision),
        })
    }

    /// True when the values at the vertices its lobes shown need were cancelled by the user (they
    /// stay uncoloured until the frame, the surface or the colouring changes).
    pub fn colours_cancelled(&self) -> bool {
        let want = self.wanted_vertex_key();
        want.is_some()
            && self
                .pipeline
                .color
                .as_ref()
                .is_some_and(|c| c.cancelled_vertices == want)
    }

    /// The values its lobes are coloured by (hartree/e, one per vertex of each lobe): the potential
    /// at their vertices, once computed for the lobes shown.
    pub fn vertex_values(&self) -> Option<&LobeValues> {
        let want = self.wanted_vertex_key()?;
        let (key, values) = self.pipeline.color.as_ref()?.vertices.as_ref()?;
        (*key == want).then_some(values)
    }

    /// The lobes to draw and their values at the vertices: the lobes shown with theirs once they
    /// have arrived. Until then, when the lobes shown are a later frame's of the same field,
    /// isovalue, colouring and model, the previous frame's lobes with their colours (a surface
    /// greyed on every frame step reads as "near zero"); else the lobes shown, uncoloured.
    pub fn drawn_lobes(&self) -> (&[Option<Arc<MeshData>>; 2], Option<&LobeValues>) {
        if let Some(values) = self.vertex_values() {
            return (&self.pipeline.lobes, Some(values));
        }
        match self.previous_colored() {
            Some(c) => (&c.lobes, Some(&c.values)),
            None => (&self.pipeline.lobes, None),
        }
    }

    /// The earlier frame whose coloured lobes are drawn while the lobes shown wait for their
    /// values at the vertices ([`FieldRep::drawn_lobes`]).
    pub fn previous_colors_frame(&self) -> Option<usize> {
        match self.vertex_values() {
            Some(_) => None,
            None => self.previous_colored().map(|c| c.key.mesh.field.frame),
        }
    }

    fn previous_colored(&self) -> Option<&ColoredLobes> {
        let want = self.wanted_vertex_key()?;
        let c = self.pipeline.color.as_ref()?.colored.as_ref()?;
        let (a, b) = (c.key, want);
        let same = a.source == b.source
            && a.esp_revision == b.esp_revision
            && a.preview == b.preview
            && a.mesh.iso_bits == b.mesh.iso_bits
            && a.mesh.field.document == b.mesh.field.document
            && a.mesh.field.field == b.mesh.field.field
            && a.mesh.field.frame != b.mesh.field.frame;
        same.then_some(c)
    }

    /// Keeps the lobes shown with their values at the vertices (once they have them) for
    /// [`FieldRep::drawn_lobes`].
    pub(crate) fn keep_colored_lobes(&mut self) {
        let (Some(key), Some(values)) = (self.wanted_vertex_key(), self.vertex_values().cloned()) else {
            return;
        };
        let lobes = self.pipeline.lobes.clone();
        if let Some(c) = self.pipeline.color.as_mut() {
            c.colored = Some(ColoredLobes { key, lobes, values });
        }
    }

    /// True when its colouring (if any) is ready for frame `frame`: a volume always, a computed
    /// field once that frame's has arrived, a potential at the vertices once its values at the
    /// vertices of that frame's lobes have.
    pub fn color_shows_frame(&self, frame: usize) -> bool {
        match self.coloring.map(|c| c.source) {
            None | Some(FieldChoice::Volume(_)) => true,
            Some(_) if self.colors_by_vertex_values() => match self.wanted_vertex_key() {
                // No lobes: nothing to colour.
                None => true,
                // Cancelled colours are not waited for (a movie or script would wait for ever).
                Some(k) => k.mesh.field.frame == frame && (self.vertex_values().is_some() || self.colours_cancelled()),
            },
            Some(source) => self
                .pipeline
                .color
                .as_ref()
                .and_then(|c| c.shown.as_ref())
                .is_some_and(|(k, _)| k.frame == frame && (k.field == source || !crate::app::pb::is_pb(source))),
        }
    }

    /// True when its surfaces are drawn in the colours of a Poisson-Boltzmann solution of earlier
    /// parameters, while (or after failing) to solve with the new ones.
    pub fn shows_previous_pb_parameters(&self) -> bool {
        let Some(source) = self.coloring.map(|c| c.source).filter(|s| crate::app::pb::is_pb(*s)) else {
            return false;
        };
        !self.colors_by_vertex_values()
            && self
                .pipeline
                .color
                .as_ref()
                .and_then(|c| c.shown.as_ref())
                .is_some_and(|(k, _)| k.field != source)
    }
}

/// Lobe colour pairs given to field representations in turn (positive, negative): the first is the
/// classic red/blue.
pub const REPRESENTATION_COLORS: [[[f32; 3]; 2]; 5] = [
    [[0.85, 0.2, 0.2], [0.2, 0.35, 0.9]],
    [[0.95, 0.6, 0.1], [0.1, 0.7, 0.7]],
    [[0.3, 0.8, 0.3], [0.7, 0.3, 0.8]],
    [[0.95, 0.85, 0.2], [0.3, 0.5, 1.0]],
    [[0.9, 0.4, 0.6], [0.4, 0.8, 0.95]],
];

/// The colour of a new molecular surface (linear RGB 0..1).
pub const MOLSURF_COLOR: [f32; 3] = [0.78, 0.78, 0.78];

/// Default lobe colours: positive phase, negative phase (linear RGB 0..1).
pub const LOBE_POSITIVE: [f32; 3] = REPRESENTATION_COLORS[0][0];
pub const LOBE_NEGATIVE: [f32; 3] = REPRESENTATION_COLORS[0][1];

/// The representations of the open document, topmost first.
#[derive(Default)]
pub struct Representations {
    pub list: Vec<Rep>,
    next_id: u64,
    /// What the field keys were last worked out for (document, frame, lattice points): while it
    /// stays and nothing arrives or changes, an update costs no key computation.
    pub(crate) context: Option<(u64, usize, u32)>,
    /// A representation was added, removed, reordered or hidden since the draw stage last looked.
    pub(crate) changed: bool,
    /// The representation selected in the list (the field panel edits it when it is a field; the
    /// orbital list edits it when it shows an orbital). `None`: the first field representation.
    pub selected: Option<RepId>,
}

impl Representations {
    fn next_id(&mut self) -> RepId {
        self.next_id += 1;
        RepId(self.next_id)
    }

    /// Position of representation `id` in the list.
    pub fn index_of(&self, id: RepId) -> Option<usize> {
        self.list.iter().position(|r| r.id == id)
    }

    pub fn get(&self, id: RepId) -> Option<&Rep> {
        self.list.iter().find(|r| r.id == id)
    }

    pub fn get_mut(&mut self, id: RepId) -> Option<&mut Rep> {
        self.list.iter_mut().find(|r| r.id == id)
    }

    /// The field representations with their positions and ids.
    pub fn fields(&self) -> impl Iterator<Item = (&Rep, &FieldRep)> {
        self.list.iter().filter_map(|r| match &r.kind {
            RepKind::Field(f) => Some((r, f)),
            RepKind::Atoms(_) | RepKind::Cartoon(_) => None,
        })
    }

    /// The atom representations.
    pub fn atoms(&self) -> impl Iterator<Item = (&Rep, &AtomsRep)> {
        self.list.iter().filter_map(|r| match &r.kind {
            RepKind::Atoms(a) => Some((r, a)),
            RepKind::Field(_) | RepKind::Cartoon(_) => None,
        })
    }

    /// The cartoon representations.
    pub fn cartoons(&self) -> impl Iterator<Item = (&Rep, &CartoonRep)> {
        self.list.iter().filter_map(|r| match &r.kind {
            RepKind::Cartoon(c) => Some((r, c)),
            RepKind::Field(_) | RepKind::Atoms(_) => None,
        })
    }

    /// Index of the main field: the first field representation.
    pub fn main_field_index(&self) -> Option<usize> {
        self.list.iter().position(|r| matches!(r.kind, RepKind::Field(_)))
    }

    /// The main field representation.
    pub fn main_field(&self) -> Option<&FieldRep> {
        self.fields().next().map(|(_, f)| f)
    }

    pub fn main_field_mut(&mut self) -> Option<&mut FieldRep> {
        self.list.iter_mut().find_map(|r| match &mut r.kind {
            RepKind::Field(f) => Some(f),
            RepKind::Atoms(_) | RepKind::Cartoon(_) => None,
        })
    }

    /// The field representation `id`.
    pub fn field(&self, id: RepId) -> Option<&FieldRep> {
        match &self.get(id)?.kind {
            RepKind::Field(f) => Some(f),
            RepKind::Atoms(_) | RepKind::Cartoon(_) => None,
        }
    }

    /// The slice drawn: the topmost visible slice representation that has a grid.
    pub fn drawn_slice(&self) -> Option<&FieldRep> {
        // A grid of another kind of field (the Poisson-Boltzmann map while the charges' potential
        // of a new model computes) is not drawn: its values are in another unit than the range
        // and legend the slice now has.
        let same_kind = |f: &FieldRep| {
            f.pipeline
                .shown
                .as_ref()
                .is_some_and(|(k, _)| std::mem::discriminant(&k.field) == std::mem::discriminant(&f.field))
        };
        self.fields()
            .find(|(r, f)| r.visible && matches!(f.style, FieldStyle::Slice(_)) && same_kind(f))
            .map(|(_, f)| f)
    }
}
