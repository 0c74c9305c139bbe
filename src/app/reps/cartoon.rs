//! Cartoon representations: the polymer residues a selection picks, drawn as cartoon (helix
//! ribbons, strand arrows, coil tubes; nucleic acids as a backbone tube with base slabs), tube or
//! trace, coloured by secondary structure, chain, residue type or index along the chain, or by a
//! field at each vertex of the mesh (the frame's potential of the charges, a loaded volume).
//!
//! Owns [`CartoonRep`] and its [`CartoonPipeline`]: the polymer of its selection (found once per
//! document), the key it asked for, the mesh it shows and a cache of meshes per frame. The update
//! loop (`update`) calls [`AppState::update_cartoon_rep`] for each one every UI frame: a frame's
//! secondary structure and mesh ([`Polymer::mesh`]) are built on the cartoon thread
//! (`jobs::cartoon`, one lane per representation, latest wins) when the viewer started it, else in
//! the update loop itself (`render`, the tests). The previous mesh stays on screen until the new
//! one arrives; while playing, a request in flight is let finish (then the frame shown at that
//! moment is asked for), so playback faster than the meshes shows the newest finished frame.
//!
//! Coloured by a field ([`CartoonRep::color_by`]), each mesh shown is then given its values at the
//! vertices ([`AppState::update_cartoon_values`]): the potential of the frame's charges exactly at
//! each vertex, or a volume sampled there, computed on the vertex-values thread in the
//! representation's lane (`jobs::vertex_values`, shared with surfaces; latest wins) or in the update
//! loop. The mesh with its values ([`CartoonPipeline::colored`]) stays drawn until the next one's
//! values arrive; until the first arrive the mesh shows its secondary-structure colours.
//!
//! Where the render device writes cartoon meshes (`ViewState::gpu_cartoons`, from the adapter's
//! capabilities: a hardware adapter with compute passes), a cartoon not coloured by a field is built as per-residue inputs only
//! ([`CartoonBuilt::Rings`]) and `app::draw` runs the compute pass that writes its mesh on the
//! device; coloured by a field it keeps the CPU mesh, whose vertices the values are computed at.

use super::{RepKind, SurfaceColoring, ValuesKey};
use crate::analysis::polymer::{Coloring, Polymer};
use crate::app::fields::FieldChoice;
use crate::app::state::AppState;
use crate::jobs::cartoon::{CartoonBuilt, CartoonOutput, CartoonRequest, CartoonResult, CartoonWorker};
use crate::jobs::lanes::Done;
use crate::jobs::vertex_values::{VertexSource, VertexValuesRequest, VertexValuesResult};
use crate::model::select::Selection;
use crate::surface::MeshData;
use crate::surface::cartoon::{CartoonParams, Style};
use std::sync::Arc;

/// Meshes a cartoon representation keeps per frame, in bytes of vertices and indices.
const CACHE_BUDGET_BYTES: usize = 256 << 20;

/// What one cartoon mesh is of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CartoonKey {
    pub document: u64,
    pub frame: usize,
    pub style: Style,
    pub coloring: Coloring,
    /// Bumped whenever the selection changes.
    pub selection: u64,
    /// Built as the render device's per-residue inputs (its mesh written there), not as a CPU mesh.
    pub on_device: bool,
}

impl CartoonKey {
    /// The same picture settings (a mesh of another frame of it may stand in while playing).
    fn same_settings(&self, other: &CartoonKey) -> bool {
        CartoonKey {
            frame: other.frame,
            ..*self
        } == *other
    }
}

/// What a cartoon's values at the vertices are of: its mesh and the colouring field (a volume, or
/// a potential of charges at the mesh's frame).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CartoonValuesKey {
    pub cartoon: CartoonKey,
    pub source: FieldChoice,
    /// The electrostatic model's revision (`AppState::esp`).
    pub esp_revision: u32,
}

/// Values at the vertices a cartoon representation keeps (the frames played last).
const VALUES_CACHE_ENTRIES: usize = 8;

/// The document a selection's polymer was found in, and the frame for selections that depend on
/// coordinates.
type PolymerKey = (u64, Option<usize>);

/// Polymer residues picked by a selection, drawn as a cartoon.
pub struct CartoonRep {
    /// The selection text as typed.
    pub selection: String,
    /// Why the text does not parse (the last valid selection stays in use).
    pub error: Option<String>,
    parsed: Selection,
    pub style: Style,
    pub coloring: Coloring,
    /// Colours the mesh by a field at its vertices instead (`coloring` until the values arrive);
    /// the range is chosen from the first values when `None`.
    pub color_by: Option<SurfaceColoring>,
    /// Polymer residues the selection picks, once evaluated.
    pub residues: usize,
    pub pipeline: CartoonPipeline,
}

/// A cartoon representation's pipeline.
#[derive(Default)]
pub struct CartoonPipeline {
    /// The polymer of the selection, with the document (and, for selections that depend on
    /// coordinates, the frame) it was found for.
    polymer: Option<(PolymerKey, Arc<Polymer>)>,
    /// The cartoon shown (possibly of an older frame while the newer one is built).
    pub shown: Option<(CartoonKey, CartoonBuilt)>,
    /// The key of the request in flight on the cartoon thread (`None` once its mesh has come back,
    /// or when a frame was shown from the cache with nothing in flight).
    asked: Option<CartoonKey>,
    /// Cartoons made, oldest first (bounded by [`CACHE_BUDGET_BYTES`]).
    cache: Vec<(CartoonKey, CartoonBuilt)>,
    /// Cartoons dropped from the cache, whose buffers the next request may reuse once nothing else
    /// holds them.
    retired: Vec<CartoonBuilt>,
    selection_revision: u64,
    /// Bumped whenever what is shown changes.
    pub revision: u64,
    /// Coloured by a field: the mesh drawn with its values at the vertices (possibly of an older
    /// frame while the newer one's values are computed).
    pub colored: Option<(CartoonValuesKey, Arc<MeshData>, Arc<Vec<f32>>)>,
    /// The values last asked for (a failed request is not repeated every frame).
    asked_values: Option<CartoonValuesKey>,
    /// Whether the values last asked for are still being computed on the vertex-values thread.
    values_in_flight: bool,
    /// Values the user cancelled while they were computed: not asked for again until the frame or
    /// the colouring changes.
    cancelled_values: Option<CartoonValuesKey>,
    /// Values made, oldest first (at most [`VALUES_CACHE_ENTRIES`]).
    values_cache: Vec<(CartoonValuesKey, Arc<Vec<f32>>)>,
}

impl CartoonPipeline {
    fn cached(&self, key: &CartoonKey) -> Option<CartoonBuilt> {
        self.cache.iter().find(|(k, _)| k == key).map(|(_, m)| m.clone())
    }

    fn insert(&mut self, key: CartoonKey, built: CartoonBuilt) {
        self.cache.retain(|(k, _)| k.same_settings(&key) && *k != key);
        self.cache.push((key, built));
        let mut total: usize = self.cache.iter().map(|(_, m)| m.bytes()).sum();
        while total > CACHE_BUDGET_BYTES && self.cache.len() > 1 {
            let (_, m) = self.cache.remove(0);
            total -= m.bytes();
            self.retired.push(m);
        }
        // Two are enough to find one free (the other may still be on screen).
        while self.retired.len() > 2 {
            self.retired.remove(0);
        }
    }

    /// What to build for `key`, into the buffers of a retired cartoon of that kind that nothing
    /// else holds any more (else fresh ones).
    fn spare(&mut self, key: &CartoonKey) -> CartoonOutput {
        while let Some(m) = self.retired.pop() {
            match m {
                CartoonBuilt::Mesh(m) if !key.on_device => {
                    if let Ok(m) = Arc::try_unwrap(m) {
                        return CartoonOutput::Mesh(m);
                    }
                }
                CartoonBuilt::Rings(r) if key.on_device => {
                    if let Ok(r) = Arc::try_unwrap(r) {
                        return CartoonOutput::Rings(r);
                    }
                }
                _ => {}
            }
        }
        if key.on_device {
            CartoonOutput::Rings(Default::default())
        } else {
            CartoonOutput::Mesh(MeshData::default())
        }
    }

    fn show(&mut self, key: CartoonKey, built: CartoonBuilt) {
        self.shown = Some((key, built));
        self.revision += 1;
    }

    /// Whether a mesh of the current settings is asked for and not shown yet, or the values of the
    /// mesh shown.
    ///
    /// A frame shown from the cache after another was asked for is not waited for: the wait is for
    /// requests in flight only (a movie or a script would otherwise wait for ever).
    pub fn waiting(&self) -> bool {
        self.asked
            .is_some_and(|a| self.shown.as_ref().is_none_or(|(k, _)| *k != a))
            || (self.values_in_flight
                && self
                    .asked_values
                    .is_some_and(|a| self.colored.as_ref().is_none_or(|(k, _, _)| *k != a)))
    }

    /// Marks the values being computed as cancelled by the user
    /// (`AppState::cancel_vertex_values`): not asked for again for the same mesh and colouring.
    pub(crate) fn cancel_values(&mut self) {
        if self.values_in_flight {
            self.values_in_flight = false;
            self.cancelled_values = self.asked_values;
        }
    }

    /// True when the values last asked for were cancelled by the user (not waited for).
    pub fn colours_cancelled(&self) -> bool {
        self.cancelled_values.is_some() && self.cancelled_values == self.asked_values
    }

    /// The values at the vertices of the mesh drawn, with what they are of.
    pub fn values(&self) -> Option<(&CartoonValuesKey, &MeshData, &[f32])> {
        self.colored.as_ref().map(|(k, m, v)| (k, &**m, v.as_slice()))
    }

    /// Shows the values `values` of `key`'s mesh (found on screen or in the cache) when they are of
    /// the current settings; caches them either way. True when the colours drawn changed.
    fn take_values(&mut self, key: CartoonValuesKey, values: Arc<Vec<f32>>, current: &CartoonKey) -> bool {
        super::insert_bounded(&mut self.values_cache, key, Arc::clone(&values), VALUES_CACHE_ENTRIES);
        let mesh = match &self.shown {
            Some((k, m)) if *k == key.cartoon => m.mesh().cloned(),
            _ => self.cached(&key.cartoon).and_then(|m| m.mesh().cloned()),
        };
        match mesh {
            Some(mesh) if key.cartoon.same_settings(current) => {
                self.colored = Some((key, mesh, values));
                self.revision += 1;
                true
            }
            _ => false,
        }
    }
}

impl CartoonRep {
    /// The selection in use: the text typed, or while that does not parse the last valid one.
    pub fn selection_in_use(&self) -> &str {
        self.parsed.text()
    }

    /// The B-factors (Å²) at the ends of its colour scale when coloured by B-factor, once its
    /// polymer is known.
    pub fn bfactor_range(&self) -> Option<[f32; 2]> {
        let (_, polymer) = self.pipeline.polymer.as_ref()?;
        (self.coloring == Coloring::BFactor && self.color_by.is_none()).then_some(polymer.bfactor_range)
    }
}

impl CartoonRep {
    /// Polymer residues picked by `selection` (`Err` with the parser's message when it does not
    /// parse).
    pub fn new(selection: &str, style: Style, coloring: Coloring) -> Result<CartoonRep, String> {
        let parsed = Selection::parse(selection).map_err(|e| e.to_string())?;
        Ok(CartoonRep {
            selection: selection.to_string(),
            error: None,
            parsed,
            style,
            coloring,
            color_by: None,
            residues: 0,
            pipeline: CartoonPipeline::default(),
        })
    }

    /// A copy with the same settings and nothing computed.
    pub fn duplicate(&self) -> CartoonRep {
        CartoonRep {
            selection: self.selection.clone(),
            error: self.error.clone(),
            parsed: self.parsed.clone(),
            style: self.style,
            coloring: self.coloring,
            color_by: self.color_by,
            residues: 0,
            pipeline: CartoonPipeline::default(),
        }
    }

    /// The atoms a click on this cartoon picks, once its polymer is found and drawn: each protein
    /// residue's CA and each nucleotide's trace atom (P, or C4').
    pub fn guide_atoms(&self) -> Vec<usize> {
        let (Some((_, polymer)), Some(_)) = (&self.pipeline.polymer, &self.pipeline.shown) else {
            return Vec::new();
        };
        let protein = polymer.protein.residues.iter().filter_map(|r| r.ca);
        let nucleic = polymer.nucleic.iter().map(|n| n.trace);
        protein.chain(nucleic).map(|a| a as usize).collect()
    }

    /// The selection in use (the last one that parsed).
    pub fn parsed(&self) -> &Selection {
        &self.parsed
    }

    /// Sets the selection text: parsed at once; an error is kept for the editor and the last valid
    /// selection stays in use.
    pub fn set_selection(&mut self, text: &str) {
        if super::reparse(text, &mut self.selection, &mut self.parsed, &mut self.error) {
            self.pipeline.polymer = None;
            self.pipeline.selection_revision += 1;
            self.pipeline.cache.clear();
        }
    }

    /// The mesh resolution for this representation's residues and style.
    fn params(&self, residues: usize) -> CartoonParams {
        CartoonParams {
            style: self.style,
            ..CartoonParams::for_residue_count(residues)
        }
    }
}

impl AppState {
    /// Colours cartoon `id` by `source` at its vertices (`update_cartoon_values`): the potential of
    /// each frame's charges, or a volume of the document; the range from the first values when not
    /// given. Files without charges (or without that volume) give one message, and the cartoon
    /// keeps its own colours.
    pub(super) fn color_cartoon_by(&mut self, id: super::RepId, source: FieldChoice, range: Option<[f32; 2]>) {
        let what = self.describe_field(source);
        let why = match self.document() {
            None => Some("no document is open".to_string()),
            Some(d) => match source {
                FieldChoice::Potential | FieldChoice::PotentialPb { .. } if d.structure.charges_e.is_none() => {
                    Some(format!(
                        "{} has no atomic charges (they come from PSF, prmtop, PQR or MOL2 files)",
                        d.name
                    ))
                }
                FieldChoice::Potential | FieldChoice::PotentialPb { .. } => None,
                FieldChoice::Volume(v) if v >= d.grids.len() => {
                    Some(format!("{} holds {} volume(s)", d.name, d.grids.len()))
                }
                FieldChoice::Volume(_) => None,
                _ => Some("cartoons are coloured by the charges' potential or a volume".to_string()),
            },
        };
        if let Some(why) = why {
            self.error(format!(
                "cannot colour the cartoon by the {what}: {why}; it keeps its own colours"
            ));
            return;
        }
        let model_range = self.esp_default_range(source);
        if let Some(RepKind::Cartoon(c)) = self.doc.reps.get_mut(id).map(|r| &mut r.kind) {
            let same = c.color_by.is_some_and(|k| k.source == source);
            let range = range.or_else(|| {
                same.then(|| {
                    c.pipeline
                        .values()
                        .map(|(_, _, v)| super::ranges::value_range(v.to_vec()))
                })
                .flatten()
                .or(model_range)
            });
            c.color_by = Some(SurfaceColoring { source, range });
            c.coloring = crate::analysis::polymer::Coloring::SecondaryStructure;
        }
        self.view.dirty.meshes = true;
        self.view.dirty.surface_color = true;
    }

    /// Cartoons from now on are built on a thread of their own. Returns false when the thread
    /// cannot start (they are then built in the update loop).
    pub fn build_cartoons_off_thread(&mut self) -> bool {
        if self.view.cartoons.is_none() {
            self.view.cartoons = crate::jobs::cartoon::start().ok();
        }
        self.view.cartoons.is_some()
    }

    /// Representation `i`'s step when it is a cartoon: takes its mesh from the cartoon thread, then
    /// shows the current frame's mesh from its cache, or asks for it. True when what it shows
    /// changed.
    pub(crate) fn update_cartoon_rep(&mut self, i: usize, built: &mut Vec<Done<CartoonResult<CartoonKey>>>) -> bool {
        let playing = self.view.timeline.playing;
        let Some(rep) = self.doc.reps.list.get_mut(i) else {
            return false;
        };
        let (lane, visible) = (rep.id.0, rep.visible);
        let RepKind::Cartoon(c) = &mut rep.kind else {
            return false;
        };
        let Some(doc) = self.doc.document.as_ref() else {
            return false;
        };
        let key = CartoonKey {
            document: doc.id,
            frame: doc.frame_index,
            style: c.style,
            coloring: c.coloring,
            selection: c.pipeline.selection_revision,
            // Values at the vertices need the CPU mesh.
            on_device: self.view.gpu_cartoons && c.color_by.is_none(),
        };
        let mut changed = false;
        if let Some(pos) = built.iter().position(|d| d.lane == lane) {
            let done = built.swap_remove(pos);
            let (k, made) = (done.output.key, done.output.built);
            if c.pipeline.asked == Some(k) {
                c.pipeline.asked = None;
            }
            if k.same_settings(&key) {
                c.pipeline.insert(k, made.clone());
                c.pipeline.show(k, made);
                changed = true;
            }
        }
        if !visible || c.pipeline.shown.as_ref().is_some_and(|(k, _)| *k == key) {
            return changed;
        }
        let worker = self.view.cartoons.as_mut();
        let in_flight = worker.as_ref().is_some_and(|w| w.in_flight(lane));
        if let Some(mesh) = c.pipeline.cached(&key) {
            c.pipeline.show(key, mesh);
            if !in_flight {
                c.pipeline.asked = None;
            }
            return true;
        }
        if c.pipeline.asked == Some(key) && in_flight {
            return changed;
        }
        if playing && in_flight && c.pipeline.asked.is_some_and(|a| a.same_settings(&key)) {
            // Let the frame in flight finish; the playhead's frame is asked for next.
            return changed;
        }
        let polymer_key = (doc.id, c.parsed.needs_positions().then_some(doc.frame_index));
        let polymer = match &c.pipeline.polymer {
            Some((k, p)) if *k == polymer_key => Arc::clone(p),
            _ => {
                let mask = c.parsed.evaluate(&doc.structure, Some(&doc.frame));
                let p = Arc::new(
                    Polymer::new(&doc.structure).restricted(|a| mask.get(a as usize).copied().unwrap_or(false)),
                );
                c.residues = p.residue_count();
                c.pipeline.polymer = Some((polymer_key, Arc::clone(&p)));
                p
            }
        };
        let request = CartoonRequest {
            key,
            params: c.params(polymer.residue_count()),
            polymer,
            positions_angstrom: Arc::new(doc.frame.positions_angstrom.clone()),
            coloring: c.coloring,
            output: c.pipeline.spare(&key),
            device_workers: self.fields.device_workers(),
        };
        c.pipeline.asked = Some(key);
        match worker {
            Some(w) => {
                w.submit(lane, request);
                changed
            }
            None => {
                let done = crate::jobs::cartoon::build(request);
                c.pipeline.insert(key, done.built.clone());
                c.pipeline.show(key, done.built);
                c.pipeline.asked = None;
                true
            }
        }
    }

    /// Representation `i`'s values at the vertices when it is a cartoon coloured by a field: takes
    /// them from the vertex-values thread, from its cache, or asks for those of the mesh shown (on
    /// that thread in the representation's lane, latest wins, else here). The mesh drawn with its
    /// values stays until the new ones arrive. True when the colours drawn changed.
    pub(crate) fn update_cartoon_values(
        &mut self,
        i: usize,
        valued: &mut Vec<Done<VertexValuesResult<ValuesKey>>>,
    ) -> bool {
        let esp_revision = self.esp.revision;
        let charges_model = self.vertex_charges_model();
        // Coloured by the Poisson-Boltzmann potential: the solution of the cartoon's frame.
        let pb = match self.doc.reps.list.get(i).map(|r| &r.kind) {
            Some(RepKind::Cartoon(c)) if c.color_by.is_some_and(|k| crate::app::pb::is_pb(k.source)) => c
                .pipeline
                .shown
                .as_ref()
                .map(|(k, _)| k.frame)
                .and_then(|f| self.pb_grid_of_frame(f)),
            _ => None,
        };
        let Some(rep) = self.doc.reps.list.get_mut(i) else {
            return false;
        };
        let (lane, visible) = (rep.id.0, rep.visible);
        let RepKind::Cartoon(c) = &mut rep.kind else {
            return false;
        };
        let Some(source) = c.color_by.map(|k| k.source) else {
            if c.pipeline.colored.take().is_some() {
                c.pipeline.revision += 1;
                return true;
            }
            return false;
        };
        let Some((key, Some(mesh))) = c.pipeline.shown.as_ref().map(|(k, b)| (*k, b.mesh().cloned())) else {
            return false;
        };
        let want = CartoonValuesKey {
            cartoon: key,
            source,
            esp_revision,
        };
        let mut changed = false;
        let mut failure = None;
        if let Some(pos) = valued.iter().position(|d| d.lane == lane) {
            let done = valued.swap_remove(pos).output;
            if matches!(done.key, ValuesKey::Cartoon(k) if c.pipeline.asked_values == Some(k)) {
                c.pipeline.values_in_flight = false;
            }
            match (done.key, done.values) {
                (ValuesKey::Cartoon(k), Ok([Some(v), _])) if k.source == source => {
                    changed |= c.pipeline.take_values(k, v, &key);
                }
                (_, Err(e)) => failure = Some(e),
                _ => {}
            }
        }
        let done = !visible || c.pipeline.colored.as_ref().is_some_and(|(k, _, _)| *k == want);
        let cached = c
            .pipeline
            .values_cache
            .iter()
            .find(|(k, _)| *k == want)
            .map(|(_, v)| Arc::clone(v));
        let in_flight = self.view.vertex_values.as_ref().is_some_and(|w| w.in_flight(lane));
        let asked = (c.pipeline.asked_values == Some(want) && (in_flight || self.view.vertex_values.is_none()))
            || c.pipeline.cancelled_values == Some(want);
        let request = if done || asked {
            None
        } else if let Some(values) = cached {
            changed |= c.pipeline.take_values(want, values, &key);
            None
        } else {
            let doc = self.doc.document.as_ref();
            let source = match source {
                FieldChoice::Volume(v) => doc
                    .and_then(|d| d.grids.get(v))
                    .cloned()
                    .map(|g| VertexSource::Volume(g, 0.0)),
                FieldChoice::PotentialPb { .. } => pb.map(|g| VertexSource::Volume(g, 0.0)),
                s => doc
                    .filter(|d| d.frame_index == key.frame)
                    .and_then(|d| d.point_charges_at(s, d.frame_index, &d.frame, !charges_model.dielectric.is_vacuum()))
                    .map(|q| VertexSource::Charges(Arc::new(q), charges_model)),
            };
            source.map(|source| VertexValuesRequest {
                key: ValuesKey::Cartoon(want),
                lobes: [Some(mesh), None],
                source,
            })
        };
        if let Some(request) = request {
            c.pipeline.asked_values = Some(want);
            c.pipeline.values_in_flight = self.view.vertex_values.is_some();
            match self.view.vertex_values.as_mut() {
                Some(w) => {
                    w.submit(lane, request);
                    if self.panels.status == crate::app::esp_model::COLOURS_CANCELLED {
                        self.panels.status.clear();
                    }
                }
                None => match crate::jobs::vertex_values::compute(request).values {
                    Ok([Some(v), _]) => changed |= c.pipeline.take_values(want, v, &key),
                    Ok(_) => {}
                    Err(e) => failure = Some(e),
                },
            }
        }
        if changed
            && let Some(k) = c.color_by.as_mut().filter(|k| k.range.is_none())
            && let Some((_, _, v)) = &c.pipeline.colored
        {
            k.range = Some(super::ranges::value_range(v.to_vec()));
        }
        if let Some(e) = failure {
            self.error(format!("cartoon colours: {e}"));
        }
        if changed {
            self.view.dirty.meshes = true;
            self.view.dirty.surface_color = true;
        }
        changed
    }

    /// Takes the cartoon thread's finished meshes (newest per representation).
    pub(crate) fn take_cartoons(&mut self) -> Vec<Done<CartoonResult<CartoonKey>>> {
        self.view
            .cartoons
            .as_mut()
            .map(CartoonWorker::try_recv)
            .unwrap_or_default()
    }
}
