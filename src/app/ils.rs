//! The viewer's implicit ligand sampling (ILS): the free-energy map of a small gas probe (Xe, O2,
//! CO, NO) over the open trajectory, built up frame by frame while the user keeps working.
//!
//! Owns [`IlsForm`] (what the "Ligand free energy (ILS)" entry of the Add menu asks: probe,
//! spacing, sub-samples, orientations, atoms, frames, parameters), [`IlsMapState`] (a map as the
//! document holds it: `FieldChoice::Ils(i)` is `Document::ils_maps[i]`, its running PMF grid in kT
//! and how many frames it holds) and [`IlsPanel`] (the one computation that runs, its occupancy
//! sums, pause and cancel). The setup is the `grid ils` command's, from the same library pieces:
//! Lennard-Jones parameters from `io::ils_params`, the probe and orientations of `model`, atoms
//! placed by `compute::ils::place_atoms` (periodic images, the fit onto the first frame when an
//! alignment selection is given), the lattice around the chosen atoms of the first frame padded by
//! 2 A, and the frames' voxel means added to `model::ils::OccupancySums`; the frames are computed on
//! the viewer's pool by `jobs::ils_live` (a GPU where there is one, else the CPU engine). The UI
//! thread reads and places a few frames per update ([`IlsPanel::pump`], called by the
//! representation update loop) and never waits. Cancelling or starting again bumps the
//! generation: frames of the older computation still in flight are dropped.

use crate::app::document::Document;
use crate::compute::ils::{IlsSetup, place_atoms, without_water_sites};
use crate::jobs::ils_live::{IlsLiveWorkers, IlsWork};
use crate::jobs::{DeviceChoice, DeviceWorkers};
use crate::model::ils::{
    DEFAULT_CUTOFF_ANGSTROM, DEFAULT_MAX_ENERGY_KT, DEFAULT_ORIENTATIONS, IlsMap, OccupancySums, Orientations, Rigid,
};
use crate::model::lj::{Probe, kt_kcal_per_mol};
use crate::model::select::Selection;
use crate::model::units::{BOHR_PER_ANGSTROM, DEFAULT_TEMPERATURE_KELVIN};
use crate::model::{Frame, FrameRange, Grid3, Lattice};

pub use super::ils_paths::{IlsPathView, PATH_RADIUS_ANGSTROM, PICK_RADIUS_ANGSTROM, favoured_point_near};
use std::path::PathBuf;
use std::sync::Arc;

/// Frames read, placed and submitted per update at most.
const FRAMES_PER_PUMP: usize = 2;
/// Padding of the lattice around the chosen atoms, Angstrom (the `grid ils` default).
pub const PADDING_ANGSTROM: f64 = 2.0;
/// The isosurface a new map is drawn at: where the probe is favoured over vacuum by 1 kT.
pub const DEFAULT_ISO_KT: f32 = -1.0;
/// The temperature of the viewer's maps, kelvin.
pub const TEMPERATURE_KELVIN: f64 = DEFAULT_TEMPERATURE_KELVIN;

/// The built-in probes (CHARMM parameters of Cohen et al. 2006).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ProbeChoice {
    Xe,
    O2,
    Co,
    No,
}

impl ProbeChoice {
    pub const ALL: [ProbeChoice; 4] = [ProbeChoice::O2, ProbeChoice::Co, ProbeChoice::No, ProbeChoice::Xe];

    /// The name `model::lj::Probe::builtin` and `grid ils --probe` take.
    pub fn name(self) -> &'static str {
        match self {
            ProbeChoice::Xe => "xe",
            ProbeChoice::O2 => "o2",
            ProbeChoice::Co => "co",
            ProbeChoice::No => "no",
        }
    }

    /// As a chemist writes it.
    pub fn label(self) -> &'static str {
        match self {
            ProbeChoice::Xe => "Xe",
            ProbeChoice::O2 => "O2",
            ProbeChoice::Co => "CO",
            ProbeChoice::No => "NO",
        }
    }
}

/// What a new map is computed with (also what a session keeps of a map).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct IlsForm {
    pub probe: ProbeChoice,
    pub spacing_angstrom: f64,
    /// Sample points per voxel edge.
    pub subres: usize,
    /// Probe orientations (evenly spread directions; one for a single atom).
    pub orientations: usize,
    /// The atoms the probe feels.
    pub selection: String,
    /// The atoms the lattice is placed around (at the first frame); empty: the selection's.
    pub around: String,
    /// The frames (`all`, `N`, `A:B`, `A:B:S`, 0-based, end exclusive).
    pub frames: String,
    /// Fit every frame onto the first by these atoms; empty: frames as they are.
    pub align: String,
    /// A CHARMM parameter file (.prm, .str) for topologies that name atom types only.
    pub params_file: String,
    /// Take every atom's parameters from the element table (UFF).
    pub element_table: bool,
}

impl Default for IlsForm {
    fn default() -> Self {
        IlsForm {
            probe: ProbeChoice::O2,
            spacing_angstrom: 1.0,
            subres: 2,
            orientations: DEFAULT_ORIENTATIONS.min(30),
            selection: "all".into(),
            around: "protein".into(),
            frames: "all".into(),
            align: String::new(),
            params_file: String::new(),
            element_table: false,
        }
    }
}

/// A map as the document holds it.
#[derive(Clone, Debug)]
pub struct IlsMapState {
    /// "O2", "Xe", ...
    pub probe: String,
    pub map: IlsMap,
    /// The PMF in kT (capped at the setup's maximum), once a frame has arrived.
    pub grid: Option<Arc<Grid3>>,
    pub frames_done: usize,
    pub frames_total: usize,
    /// "O2, 1.0 A, subres 2, 30 orientations (15 evaluated), 2,145 atoms".
    pub summary: String,
    /// Where the Lennard-Jones parameters came from.
    pub parameters: String,
    /// Engine of the last finished frame.
    pub engine: String,
    pub paused: bool,
    /// Stopped before its last frame.
    pub cancelled: bool,
    pub max_energy_kt: f64,
    /// Pathways found on the map, drawn as tubes coloured by the free energy.
    pub paths: Vec<IlsPathView>,
    /// The end chosen for a path between two points (a lattice point, Angstrom).
    pub path_end_angstrom: Option<[f64; 3]>,
    /// What it was computed with.
    pub form: IlsForm,
}

impl IlsMapState {
    /// True while frames remain (paused or not).
    pub fn is_running(&self) -> bool {
        !self.cancelled && self.frames_done < self.frames_total
    }

    /// "ILS free energy of O2, 3 of 10 frames".
    pub fn title(&self) -> String {
        if self.frames_done == self.frames_total {
            format!("ILS free energy of {}, {} frames", self.probe, self.frames_done)
        } else {
            format!(
                "ILS free energy of {}, {} of {} frames",
                self.probe, self.frames_done, self.frames_total
            )
        }
    }

    /// Fraction of frames done.
    pub fn progress(&self) -> f32 {
        self.frames_done as f32 / self.frames_total.max(1) as f32
    }
}

/// kT in kcal/mol at the viewer's temperature.
pub fn kt_kcal() -> f64 {
    kt_kcal_per_mol(TEMPERATURE_KELVIN)
}

/// The computation in progress.
struct IlsRun {
    document_id: u64,
    map_index: usize,
    generation: u64,
    setup: Arc<IlsSetup>,
    sel: Vec<u32>,
    align: Option<(Vec<u32>, Vec<[f64; 3]>)>,
    frames: Vec<usize>,
    next: usize,
    sums: OccupancySums,
    held: Option<IlsWork>,
}

/// What a parameters check depends on: the document, the element table, the parameter file, the
/// atoms.
type ParametersKey = (u64, bool, String, String);

/// The ILS form and the computation that runs.
#[derive(Default)]
pub struct IlsPanel {
    pub form: IlsForm,
    /// The form's window is open.
    pub form_open: bool,
    /// Why the last start failed, in words (also in the status line).
    pub error: Option<String>,
    run: Option<IlsRun>,
    /// Maps waiting for the running one to finish (a session's maps compute one after another).
    queued: std::collections::VecDeque<IlsRun>,
    workers: Option<IlsLiveWorkers>,
    generation: u64,
    /// Where the parameters of the form's choice come from, or what is missing, by (document,
    /// element table, parameter file).
    parameters: Option<(ParametersKey, Result<String, String>)>,
}

/// Positions of `indices` in `frame`, Angstrom.
fn positions_of(frame: &Frame, indices: &[u32]) -> Vec<[f64; 3]> {
    indices
        .iter()
        .filter_map(|&i| frame.positions_angstrom.get(i as usize))
        .map(|p| p.map(f64::from))
        .collect()
}

/// The atoms `text` picks at `frame`; an empty selection is an error naming `what`.
fn select(what: &str, text: &str, doc: &Document, frame: &Frame) -> Result<Vec<u32>, String> {
    let sel = Selection::parse(text).map_err(|e| format!("ILS {what} '{text}': {e}"))?;
    let idx = sel.indices(&doc.structure, Some(frame));
    if idx.is_empty() {
        return Err(format!("ILS {what} '{text}' picks no atoms"));
    }
    Ok(idx)
}

/// What is missing when the files carry no Lennard-Jones parameters, in a chemist's words.
pub fn parameters_missing(e: &crate::io::ils_params::LjParamsError) -> String {
    use crate::io::ils_params::LjParamsError as E;
    let fix = "Give the force field's parameter file (CHARMM .prm or .str, with its NONBONDED section) \
               as the form's Parameter file (ils start params FILE), or tick \"element table\" (ils start \
               elements on) for generic per-element parameters (UFF).";
    match e {
        E::NoParameters { file } => format!(
            "{}: the topology names force-field atom types but carries no van der Waals \
             (Lennard-Jones) parameters, which the probe's energy needs. {fix}",
            short(file)
        ),
        E::TprNotLennardJones { file } => format!(
            "{}: this GROMACS run input describes van der Waals forces by the Buckingham potential, \
             not Lennard-Jones. {fix}",
            short(file)
        ),
        E::MissingType {
            atom_type, atom, name, ..
        } => format!(
            "The parameter file has no van der Waals (Lennard-Jones) parameters for atom type {atom_type} \
             (atom {atom}, {name}): give the file of the force field the topology was built with."
        ),
        E::NoTypes { file } => format!(
            "{}: the file names no force-field atom types, so a parameter file cannot be matched to its \
             atoms; open the topology (PSF or prmtop) with the trajectory, or tick \"element table\".",
            short(file)
        ),
        E::MissingElement { element, atom, name } => format!(
            "The element table has no van der Waals parameters for {element} (atom {atom}, {name}); \
             leave such atoms out with the atoms selection, e.g. \"not name {name}\"."
        ),
        other => other.to_string(),
    }
}

fn short(file: &str) -> String {
    std::path::Path::new(file)
        .file_name()
        .map_or_else(|| file.to_string(), |n| n.to_string_lossy().into_owned())
}

impl IlsPanel {
    /// Where the Lennard-Jones parameters of `doc`'s atoms come from with the form's choice, or
    /// what is missing in words (read once per document and choice).
    pub fn parameters_check(&mut self, doc: &Document) -> Result<String, String> {
        let key = (
            doc.id,
            self.form.element_table,
            self.form.params_file.trim().to_string(),
            self.form.selection.trim().to_string(),
        );
        if let Some((k, r)) = &self.parameters
            && *k == key
        {
            return r.clone();
        }
        let params: Vec<PathBuf> = if key.2.is_empty() {
            Vec::new()
        } else {
            vec![PathBuf::from(&key.2)]
        };
        // Only the atoms the probe feels need parameters (a selection that does not parse yet: all).
        let used = Selection::parse(&key.3).ok().map(|s| {
            let (sel, _) = without_water_sites(&doc.structure, s.indices(&doc.structure, Some(&doc.frame)));
            let mut used = vec![false; doc.structure.len()];
            for i in sel {
                if let Some(u) = used.get_mut(i as usize) {
                    *u = true;
                }
            }
            used
        });
        let r = crate::io::ils_params::system_lj(&doc.paths, &doc.structure, &params, key.1, used.as_deref())
            .map(|lj| match lj.note {
                Some(_) => "the element table (UFF): the files carry no force field".to_string(),
                None => lj.source,
            })
            .map_err(|e| parameters_missing(&e));
        self.parameters = Some((key, r.clone()));
        r
    }

    /// True while a computation has frames left (paused or not).
    pub fn is_running(&self) -> bool {
        self.run.is_some()
    }

    /// Frames of the running computation still in flight on the workers.
    pub fn in_flight(&self) -> usize {
        self.workers.as_ref().map_or(0, |w| w.in_flight())
    }

    /// How much of the frames in flight is done, in frames (0.37: a frame being computed on the
    /// CPU is 37 % done), from the rows of voxels of `map` finished.
    pub fn frames_partly_done(&self, map: &IlsMapState) -> f32 {
        let rows_per_frame = (map.map.dims[1] * map.map.dims[2]).max(1);
        let rows = self.workers.as_ref().map_or(0, |w| w.partial_rows());
        (rows as f32 / rows_per_frame as f32).min(self.in_flight() as f32)
    }

    /// The map the running computation fills (document id, map index).
    pub fn running_map(&self) -> Option<(u64, usize)> {
        self.run.as_ref().map(|r| (r.document_id, r.map_index))
    }

    /// Starts a map of `doc` with the form's values on `workers` (the viewer's pool; without one a
    /// pool of its own is started once); the running computation, if any, stops where it is.
    /// Returns the map's state for the document; errors in words.
    pub fn start(&mut self, doc: &mut Document, workers: Option<DeviceWorkers>) -> Result<IlsMapState, String> {
        self.start_or_queue(doc, workers, false)
    }

    /// As [`IlsPanel::start`], or with `queue` behind the running computation (which goes on): the
    /// map starts when the maps before it are done.
    pub fn start_or_queue(
        &mut self,
        doc: &mut Document,
        workers: Option<DeviceWorkers>,
        queue: bool,
    ) -> Result<IlsMapState, String> {
        self.error = None;
        let result = self.try_start(doc, workers, queue);
        if let Err(e) = &result {
            self.error = Some(e.clone());
        }
        result
    }

    fn try_start(
        &mut self,
        doc: &mut Document,
        workers: Option<DeviceWorkers>,
        queue: bool,
    ) -> Result<IlsMapState, String> {
        let f = self.form.clone();
        if doc.n_frames == 0 {
            return Err("ILS: the files hold no coordinates".into());
        }
        if !(f.spacing_angstrom.is_finite() && f.spacing_angstrom >= 0.1) {
            return Err(format!(
                "ILS: the spacing must be at least 0.1 A, not {} A",
                f.spacing_angstrom
            ));
        }
        let probe = Probe::builtin(f.probe.name()).ok_or("ILS: unknown probe")?;
        let range = FrameRange::parse(&f.frames).map_err(|e| format!("ILS frames: {e}"))?;
        let frames = range.indices(doc.n_frames).map_err(|e| format!("ILS frames: {e}"))?;
        let Some(&first) = frames.first() else {
            return Err(format!(
                "ILS frames '{}' pick no frame (the trajectory has {})",
                f.frames, doc.n_frames
            ));
        };
        let mut reference = Frame::default();
        doc.trajectory
            .read_frame(first, &mut reference)
            .map_err(|e| format!("ILS: frame {}: {e}", first + 1))?;
        let (sel, water_sites) = without_water_sites(&doc.structure, select("atoms", &f.selection, doc, &reference)?);
        if sel.is_empty() {
            return Err(format!(
                "ILS atoms '{}' picks only massless water sites, which the gas does not feel",
                f.selection
            ));
        }
        let around_text = if f.around.trim().is_empty() {
            f.selection.as_str()
        } else {
            f.around.as_str()
        };
        let around = select("map around", around_text, doc, &reference)?;
        let mut used = vec![false; doc.structure.len()];
        for &i in &sel {
            if let Some(u) = used.get_mut(i as usize) {
                *u = true;
            }
        }
        let params: Vec<PathBuf> = if f.params_file.trim().is_empty() {
            Vec::new()
        } else {
            vec![PathBuf::from(f.params_file.trim())]
        };
        let lj = crate::io::ils_params::system_lj(&doc.paths, &doc.structure, &params, f.element_table, Some(&used))
            .map_err(|e| parameters_missing(&e))?;
        let align = if f.align.trim().is_empty() {
            None
        } else {
            let idx = select("alignment", &f.align, doc, &reference)?;
            let pos = positions_of(&reference, &idx);
            Some((idx, pos))
        };
        let map = map_around(&positions_of(&reference, &around), f.spacing_angstrom)?;
        let orientations = Orientations::new(&probe, f.orientations.max(1), f.subres);
        let setup = IlsSetup {
            map,
            subres: f.subres,
            cutoff_angstrom: DEFAULT_CUTOFF_ANGSTROM,
            max_energy_kt: DEFAULT_MAX_ENERGY_KT,
            temperature_kelvin: TEMPERATURE_KELVIN,
            probe,
            orientations,
            atom_lj: sel
                .iter()
                .map(|&i| lj.params.get(i as usize).copied().unwrap_or_default())
                .collect(),
        };
        setup.check().map_err(|e| format!("ILS: {e}"))?;
        let [nx, ny, nz] = map.dims;
        let mut summary = format!(
            "{}, {nx}x{ny}x{nz} voxels of {} Å, subres {}, {}, {} atoms, cutoff {} Å, {} K",
            f.probe.label(),
            f.spacing_angstrom,
            f.subres,
            setup.orientations.describe(),
            sel.len(),
            DEFAULT_CUTOFF_ANGSTROM,
            TEMPERATURE_KELVIN
        );
        if water_sites > 0 {
            summary.push_str(&format!(
                "; {water_sites} massless water sites left out (they have no van der Waals parameters)"
            ));
        }
        let queue = queue && self.run.as_ref().is_some_and(|r| r.document_id == doc.id);
        if !queue {
            self.cancel();
        }
        let workers = self.workers.get_or_insert_with(|| match workers {
            Some(w) => IlsLiveWorkers::on(w),
            None => IlsLiveWorkers::new(DeviceChoice::Auto),
        });
        if !queue {
            self.generation += 1;
            workers.cancel_before(self.generation);
        }
        let state = IlsMapState {
            probe: f.probe.label().into(),
            map,
            grid: None,
            frames_done: 0,
            frames_total: frames.len(),
            summary,
            parameters: match &lj.note {
                Some(_) => "the element table (UFF): the files carry no force field".into(),
                None => lj.source.clone(),
            },
            engine: String::new(),
            paused: false,
            cancelled: false,
            max_energy_kt: DEFAULT_MAX_ENERGY_KT,
            paths: Vec::new(),
            path_end_angstrom: None,
            form: f.clone(),
        };
        let run = IlsRun {
            document_id: doc.id,
            map_index: doc.ils_maps.len(),
            sums: OccupancySums::new(map.dims),
            setup: Arc::new(setup),
            sel,
            align,
            frames,
            next: 0,
            held: None,
            generation: self.generation,
        };
        if queue {
            self.queued.push_back(run);
        } else {
            self.run = Some(run);
        }
        Ok(state)
    }

    /// Maps waiting to start.
    pub fn queued(&self) -> usize {
        self.queued.len()
    }

    /// Starts the next queued map of document `doc_id` (those of other documents are dropped).
    fn start_next(&mut self, doc_id: u64) {
        self.queued.retain(|r| r.document_id == doc_id);
        if let Some(mut run) = self.queued.pop_front() {
            self.generation += 1;
            if let Some(w) = &self.workers {
                w.cancel_before(self.generation);
            }
            run.generation = self.generation;
            self.run = Some(run);
        }
    }

    /// Stops the running computation where it is (its map keeps the frames it has); frames in
    /// flight are dropped when they arrive.
    pub fn cancel(&mut self) -> Option<(u64, usize)> {
        let stopped = self.run.take().map(|r| (r.document_id, r.map_index));
        self.generation += 1;
        if let Some(w) = &self.workers {
            w.cancel_before(self.generation);
        }
        stopped
    }

    /// Submits the next frames of `doc`'s running map (unless it is paused) and adds finished ones;
    /// true when the map changed. An error (a frame that cannot be read) stops the computation and
    /// is returned once.
    pub fn pump(&mut self, doc: Option<&mut Document>) -> Result<bool, String> {
        if self.run.is_none()
            && !self.queued.is_empty()
            && let Some(id) = doc.as_deref().map(|d| d.id)
        {
            // The running map was cancelled or finished: the next one starts.
            self.start_next(id);
        }
        let Some(run) = &self.run else {
            return Ok(false);
        };
        let Some(doc) = doc.filter(|d| d.id == run.document_id && run.map_index < d.ils_maps.len()) else {
            // The document was closed or replaced.
            self.cancel();
            self.queued.clear();
            return Ok(false);
        };
        let result = match (&mut self.run, &self.workers) {
            (Some(run), Some(workers)) => pump_run(run, workers, doc),
            _ => Ok(false),
        };
        match result {
            Ok(changed) => {
                if let Some(run) = &self.run
                    && doc.ils_maps.get(run.map_index).is_none_or(|m| !m.is_running())
                {
                    self.run = None;
                    self.start_next(doc.id);
                }
                Ok(changed)
            }
            Err(e) => {
                if let Some((_, i)) = self.cancel()
                    && let Some(m) = doc.ils_maps.get_mut(i)
                {
                    m.cancelled = true;
                }
                Err(e)
            }
        }
    }
}

/// The lattice around `positions` padded by [`PADDING_ANGSTROM`] (as `grid ils` places it).
pub fn map_around(positions: &[[f64; 3]], spacing_angstrom: f64) -> Result<IlsMap, String> {
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for p in positions {
        for k in 0..3 {
            lo[k] = lo[k].min(p[k]);
            hi[k] = hi[k].max(p[k]);
        }
    }
    if !(lo.iter().chain(&hi).all(|x| x.is_finite())) {
        return Err("ILS: no atoms to place the map around".into());
    }
    let l = Lattice::around_box(lo, hi, PADDING_ANGSTROM, spacing_angstrom);
    Ok(IlsMap {
        origin_angstrom: l.origin_angstrom(),
        spacing_angstrom,
        dims: l.dims,
    })
}

/// The PMF of `sums` as a grid in kT.
pub fn pmf_grid(map: &IlsMap, sums: &OccupancySums, max_energy_kt: f64, title: String) -> Grid3 {
    let lattice = Lattice::axis_aligned(
        map.origin_angstrom.map(|x| x * BOHR_PER_ANGSTROM),
        map.spacing_angstrom * BOHR_PER_ANGSTROM,
        map.dims,
    );
    Grid3 {
        lattice,
        values: sums.pmf_kt(max_energy_kt).iter().map(|&v| v as f32).collect(),
        description: format!("{title} (kT, {TEMPERATURE_KELVIN} K)"),
    }
}

fn pump_run(run: &mut IlsRun, workers: &IlsLiveWorkers, doc: &mut Document) -> Result<bool, String> {
    let paused = doc.ils_maps.get(run.map_index).is_none_or(|m| m.paused);
    let mut frame = Frame::default();
    for _ in 0..FRAMES_PER_PUMP {
        if paused {
            break;
        }
        let work = match run.held.take() {
            Some(w) => w,
            None => {
                let Some(&f) = run.frames.get(run.next) else {
                    break;
                };
                doc.trajectory
                    .read_frame(f, &mut frame)
                    .map_err(|e| format!("ILS stopped: frame {}: {e}", f + 1))?;
                let positions = positions_of(&frame, &run.sel);
                let fit = match &run.align {
                    Some((idx, reference)) => {
                        let (t, _) = crate::analysis::qm_region::superpose(&positions_of(&frame, idx), reference)
                            .ok_or_else(|| {
                                format!("ILS stopped: frame {}: the alignment atoms cannot be fitted", f + 1)
                            })?;
                        Some(Rigid {
                            rotation: t.rotation,
                            translation_angstrom: t.translation_bohr,
                        })
                    }
                    None => None,
                };
                let placed = place_atoms(&run.setup, &positions, frame.cell.as_ref(), fit.as_ref())
                    .map_err(|e| format!("ILS stopped: frame {}: {e}", f + 1))?;
                run.next += 1;
                IlsWork {
                    generation: run.generation,
                    frame_index: f,
                    setup: run.setup.clone(),
                    placed: Arc::new(placed),
                }
            }
        };
        if let Err(w) = workers.try_submit(work) {
            run.held = Some(w);
            break;
        }
    }
    let mut changed = false;
    let mut engine = None;
    while let Some(done) = workers.try_recv() {
        if done.generation != run.generation {
            continue;
        }
        run.sums.add_frame(&done.voxel_means)?;
        engine = Some(done.engine);
        changed = true;
    }
    if changed && let Some(m) = doc.ils_maps.get_mut(run.map_index) {
        m.frames_done = run.sums.frames as usize;
        if let Some(e) = engine {
            m.engine = e;
        }
        let title = m.title();
        m.grid = Some(Arc::new(pmf_grid(&m.map, &run.sums, m.max_energy_kt, title)));
    }
    Ok(changed)
}

/// The colour a new map's surfaces are drawn in (amber, apart from the element colours).
pub const ILS_SURFACE_RGB: [f32; 3] = [1.0, 0.62, 0.05];

impl crate::app::state::AppState {
    /// True while the running map takes frames (not paused, or frames still in flight): the
    /// window keeps updating.
    pub fn ils_needs_pump(&self) -> bool {
        let Some((_, i)) = self.panels.ils.running_map() else {
            return self.panels.ils.queued() > 0;
        };
        let paused = self
            .document()
            .and_then(|d| d.ils_maps.get(i))
            .is_some_and(|m| m.paused);
        !paused || self.panels.ils.in_flight() > 0
    }

    /// Feeds the running ligand free-energy map its next frames and takes the finished ones; its
    /// representations redraw when it changed. True when it changed.
    pub fn pump_ils(&mut self) -> bool {
        let running = self.panels.ils.running_map();
        let changed = match self.panels.ils.pump(self.doc.document.as_mut()) {
            Ok(changed) => changed,
            Err(e) => {
                self.error(e);
                true
            }
        };
        if changed && let Some((_, map)) = running {
            let field = u16::try_from(map).ok().map(crate::app::fields::FieldChoice::Ils);
            for rep in &mut self.doc.reps.list {
                if let crate::app::reps::RepKind::Field(f) = &mut rep.kind
                    && Some(f.field) == field
                {
                    f.pipeline.mark_stale();
                }
            }
            if let Some(m) = self.document().and_then(|d| d.ils_maps.get(map))
                && !m.is_running()
            {
                self.panels.status = format!("{} done ({})", m.title(), m.engine);
            }
        }
        changed
    }

    /// Starts a map with the ILS form's values and adds its isosurface representation (selected,
    /// so the field panel shows its progress and controls).
    pub fn start_ils(&mut self) {
        // A map asked for while another computes waits for it (both are kept).
        self.start_ils_map(true, true);
    }

    /// Starts a map with the ILS form's values, adding its representation when `add_rep` (a
    /// session brings its own).
    pub(crate) fn start_ils_map(&mut self, add_rep: bool, queue: bool) {
        let workers = self.fields.device_workers();
        let before = if queue { None } else { self.panels.ils.running_map() };
        let Some(doc) = self.doc.document.as_mut() else {
            self.error("ILS: open a trajectory first".into());
            return;
        };
        let state = match self.panels.ils.start_or_queue(doc, workers, queue) {
            Ok(s) => s,
            Err(e) => {
                // The form again, with the reason.
                self.panels.ils.form_open = true;
                self.error(e);
                return;
            }
        };
        if let Some((id, i)) = before
            && id == doc.id
            && let Some(m) = doc.ils_maps.get_mut(i)
            && m.is_running()
        {
            m.cancelled = true;
        }
        let Ok(index) = u16::try_from(doc.ils_maps.len()) else {
            self.panels.ils.cancel();
            self.error("ILS: too many maps".into());
            return;
        };
        self.panels.status = format!("computing {} over {} frames", state.summary, state.frames_total);
        doc.ils_maps.push(state);
        if !add_rep {
            return;
        }
        let count = self.doc.reps.list.len();
        self.add_field_rep(crate::app::fields::FieldChoice::Ils(index));
        if self.doc.reps.list.len() > count
            && let Some(id) = self.doc.reps.list.last().map(|r| r.id)
        {
            self.edit_rep(
                id,
                crate::app::reps::RepEdit::Color {
                    lobe: 0,
                    rgb: ILS_SURFACE_RGB,
                },
            );
            self.select_rep(id);
        }
    }

    /// Pauses or continues the running map (frames in flight still arrive).
    pub fn pause_ils(&mut self, paused: bool) {
        let Some((id, i)) = self.panels.ils.running_map() else {
            return;
        };
        if let Some(m) = self
            .doc
            .document
            .as_mut()
            .filter(|d| d.id == id)
            .and_then(|d| d.ils_maps.get_mut(i))
        {
            m.paused = paused;
            let what = if paused { "paused" } else { "continued" };
            self.panels.status = format!("{}: {what}", m.title());
        }
    }

    /// Stops the running map where it is.
    pub fn cancel_ils(&mut self) {
        let Some((id, i)) = self.panels.ils.cancel() else {
            return;
        };
        if let Some(m) = self
            .doc
            .document
            .as_mut()
            .filter(|d| d.id == id)
            .and_then(|d| d.ils_maps.get_mut(i))
        {
            m.cancelled = true;
            m.paused = false;
            self.panels.status = format!("{}: stopped", m.title());
        }
    }

    /// Legends of the visible ligand free-energy surfaces: the probe, the frames the map holds,
    /// the surface's free energy and the map's values, in the chosen unit.
    pub fn ils_legends(&self) -> Vec<crate::app::values::Legend> {
        let mut out = Vec::new();
        let Some(doc) = self.document() else {
            return out;
        };
        for (r, f) in self.doc.reps.fields() {
            let crate::app::fields::FieldChoice::Ils(m) = f.field else {
                continue;
            };
            let (Some(map), Some((_, grid))) = (doc.ils_maps.get(usize::from(m)), f.pipeline.shown.as_ref()) else {
                continue;
            };
            if !r.visible || !f.is_surface() {
                continue;
            }
            let unit = crate::app::values::FieldUnit::of(f.field, self.settings.potential_unit);
            let iso = f.absolute_iso(grid);
            let rgb = f.colors[0].map(|c| (c.clamp(0.0, 1.0) * 255.0).round() as u8);
            out.push(crate::app::values::Legend {
                title: format!(
                    "{}: surface at {} (the gas is favoured inside)",
                    map.title(),
                    unit.format(iso)
                ),
                range: [unit.show(iso); 2],
                unit: unit.label,
                colormap: self.settings.colormap,
                solid_rgb: Some(rgb),
                lobes: None,
            });
        }
        out
    }
}
