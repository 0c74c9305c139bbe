//! The Poisson-Boltzmann potential as a surface colouring in the viewer.
//!
//! Owns [`PbView`]: the parameters the field panel edits (ionic strength, dielectrics, probe,
//! lattice spacing), the worker (`jobs::pb`, started at the first request: one solve at a time,
//! latest wins, each warm-started from the previous frame's solution), the request in flight (for
//! the progress line) and the last solve's engine and time. A surface or cartoon coloured by
//! [`FieldChoice::PotentialPb`] asks [`AppState::pb_grid`] for the current frame's potential; the
//! solution arrives as a [`Grid3`] in kT/e in the field cache ([`AppState::poll_pb`]), which the
//! colouring samples trilinearly at the vertices. The problem is set up as the CLI's `--color-by pb`
//! (`compute::pb::setup`): the files' charges and radii (element radii where they give none, said
//! once); a structure without charges is told why there is no Poisson-Boltzmann potential.

use super::fields::{FieldChoice, FieldKey};
use super::state::AppState;
use crate::compute::pb::{PbEngine, PbParams, setup};
use crate::jobs::pb::{PbRequest, PbWorker};
use crate::model::Grid3;
use std::sync::Arc;
use std::time::Instant;

/// The default colour range of a Poisson-Boltzmann colouring (kT/e), as APBS users look at it.
pub const PB_RANGE_KT_PER_E: f32 = 5.0;

/// The default lattice spacing of the viewer's solves (Angstrom).
pub const DEFAULT_PB_SPACING_ANGSTROM: f64 = 1.0;

/// The status line after a solve was cancelled.
pub const SOLVE_CANCELLED: &str =
    "cancelled: the Poisson-Boltzmann potential is solved again when the frame or a parameter changes";

/// The status line after Cancel went back to the parameters last solved: "cancelled: back to
/// the last solved parameters (0.15 M, eps 2/78.5, probe 1.4 Å, spacing 1 Å)".
pub fn returned_to(s: &PbSolved) -> String {
    let p = &s.params;
    format!(
        "cancelled: back to the last solved parameters ({} M, eps {}/{}, probe {} Å, spacing {} Å)",
        p.ionic_strength_molar, p.eps_in, p.eps_out, p.probe_angstrom, s.spacing_angstrom
    )
}

/// The `set` lines that take the parameters from `now` back to `s` (what the command log writes
/// for a Cancel that goes back).
pub fn set_lines_back_to(now: &PbView, s: &PbSolved) -> Vec<String> {
    let (a, b) = (&now.params, &s.params);
    [
        (PbSetting::IonicStrength, a.ionic_strength_molar, b.ionic_strength_molar),
        (PbSetting::EpsIn, a.eps_in, b.eps_in),
        (PbSetting::EpsOut, a.eps_out, b.eps_out),
        (PbSetting::Probe, a.probe_angstrom, b.probe_angstrom),
        (PbSetting::Spacing, now.spacing_angstrom, s.spacing_angstrom),
    ]
    .into_iter()
    .filter(|(_, x, y)| x != y)
    .map(|(which, _, y)| format!("set {} {y}", which.word()))
    .collect()
}

/// Why a frame has no potential after Cancel (the field panel shows it).
const CANCELLED: &str = "the solve was cancelled; step a frame or change a parameter to solve again";

/// The worker's one lane (the shown frame).
const VIEW_LANE: u64 = 0;

/// The parameters, the worker and what it is doing.
pub struct PbView {
    /// The solve's parameters (the panel edits ionic strength, eps in/out and probe).
    pub params: PbParams,
    /// Lattice spacing (Angstrom).
    pub spacing_angstrom: f64,
    /// Counts parameter changes: a new revision is a new field key, so every frame solves again.
    pub revision: u32,
    /// Where the worker solves (`Auto`: a CUDA device when one is usable, else the CPU).
    pub engine: PbEngine,
    worker: Option<PbWorker<FieldKey>>,
    /// The key asked for last and when; `None` once its result arrived.
    asked: Option<(FieldKey, Instant)>,
    /// The key asked for last, kept after its result arrived (so a failed solve is not asked again).
    last_key: Option<FieldKey>,
    /// The last solve: engine, seconds, conjugate-gradient iterations.
    pub last_solve: Option<(String, f64, usize)>,
    /// Why the last request has no potential.
    pub failure: Option<String>,
    radii_note_said: bool,
    /// True when the last solve asked for took each element's radius (the files give none):
    /// the legend says so, where a headless script's reader sees it too.
    radii_by_element: bool,
    /// Revisions handed out so far: a new set of parameters takes the next, never one a cached
    /// solution of other parameters was made with.
    revisions_made: u32,
    /// The parameters of the last solution that arrived for the current revision.
    solved: Option<PbSolved>,
}

/// Parameters a solution was made with, and their revision.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PbSolved {
    pub revision: u32,
    pub params: PbParams,
    pub spacing_angstrom: f64,
}

impl Default for PbView {
    fn default() -> Self {
        PbView {
            params: PbParams::default(),
            spacing_angstrom: DEFAULT_PB_SPACING_ANGSTROM,
            revision: 0,
            engine: PbEngine::Auto,
            worker: None,
            asked: None,
            last_key: None,
            last_solve: None,
            failure: None,
            radii_note_said: false,
            radii_by_element: false,
            revisions_made: 0,
            solved: None,
        }
    }
}

impl PbView {
    /// The legend's name of the model ("Poisson-Boltzmann, 0.15 M, eps 2/78.5").
    pub fn legend(&self) -> String {
        let radii = if self.radii_by_element {
            ", Bondi radii by element"
        } else {
            ""
        };
        format!("{}{radii}", setup::legend(&self.params))
    }

    /// "solving frame 3 (Poisson-Boltzmann, 1.2 s)" while a frame solves.
    pub fn progress(&self) -> Option<String> {
        self.asked.map(|(k, t)| {
            format!(
                "solving frame {} (Poisson-Boltzmann, {:.1} s)",
                k.frame,
                t.elapsed().as_secs_f64()
            )
        })
    }

    /// True while a frame solves.
    pub fn solving(&self) -> bool {
        self.asked.is_some()
    }

    /// Cancels the solve in flight, if any (the progress line's Cancel): a CPU solve stops at its
    /// next iteration; the frame is not solved again until the frame or a parameter changes.
    /// True when one was cancelled.
    pub fn cancel(&mut self) -> bool {
        if self.asked.take().is_none() {
            return false;
        }
        if let Some(w) = self.worker.as_mut() {
            w.cancel_all();
        }
        self.failure = Some(CANCELLED.into());
        true
    }

    /// Marks the parameters changed (every frame solves again with them).
    pub fn changed(&mut self) {
        self.revisions_made = self.revisions_made.wrapping_add(1);
        self.revision = self.revisions_made;
        self.failure = None;
    }

    /// The last solved parameters that Cancel goes back to: while a solve of newer parameters is
    /// in flight, those of the last solution made.
    pub fn cancel_returns_to(&self) -> Option<PbSolved> {
        let s = self.solved?;
        let solving_new = self
            .asked
            .is_some_and(|(k, _)| k.field != FieldChoice::PotentialPb { revision: s.revision });
        (solving_new && s.revision != self.revision).then_some(s)
    }

    /// Goes back to solved parameters `s` (their solutions are still in the cache).
    fn restore(&mut self, s: PbSolved) {
        self.params = s.params;
        self.spacing_angstrom = s.spacing_angstrom;
        self.revision = s.revision;
        self.failure = None;
    }
}

/// True when `field` is the Poisson-Boltzmann potential.
pub fn is_pb(field: FieldChoice) -> bool {
    matches!(field, FieldChoice::PotentialPb { .. })
}

impl AppState {
    /// Cancels the solve in flight (the progress line's Cancel). A solve of changed parameters
    /// goes back to the parameters last solved, whose colours return at once; else the frame stays
    /// unsolved until it or a parameter changes. Returns whether a solve was cancelled and the
    /// parameters gone back to.
    pub(crate) fn cancel_pb(&mut self) -> (bool, Option<PbSolved>) {
        let back = self.pb.cancel_returns_to();
        if !self.pb.cancel() {
            return (false, None);
        }
        if let Some(s) = back {
            self.pb.restore(s);
            self.refresh_esp();
        }
        (true, back)
    }

    /// Why the open document has no Poisson-Boltzmann potential (no partial charges), if so.
    pub fn pb_unavailable(&self) -> Option<&'static str> {
        let doc = self.document()?;
        doc.structure.charges_e.is_none().then_some(setup::NO_CHARGES)
    }

    /// `key` with the current parameter revision.
    pub fn pb_key(&self, mut key: FieldKey) -> FieldKey {
        key.field = FieldChoice::PotentialPb {
            revision: self.pb.revision,
        };
        key
    }

    /// The Poisson-Boltzmann potential for `key` (the current frame's) if it is cached; otherwise
    /// asks the worker for it once (latest wins) and returns `None` until it arrives.
    pub fn pb_grid(&mut self, key: FieldKey) -> Option<Arc<Grid3>> {
        if let Some(g) = self.fields.cached(key) {
            return Some(g);
        }
        // Asked already: on its way, or failed (not asked again every frame); a solution the
        // cache let go is asked for again.
        if self.pb.last_key == Some(key) && (self.pb.asked.is_some() || self.pb.failure.is_some()) {
            return None;
        }
        self.pb.last_key = Some(key);
        let doc = self.document()?;
        // The solute: all but the water and the electrolyte's ions (`setup::solute`).
        let made = setup::solute_atoms(&doc.structure, &doc.frame, None);
        let (atoms, by_element, solvent, note) = match made {
            Ok(s) => {
                let note = (!self.pb.radii_note_said).then(|| setup::radii_note(&doc.structure, Some(&s.keep)));
                (s.atoms, s.radii_by_element, s.solvent_note, note)
            }
            Err(e) => {
                self.pb_failed(e);
                return None;
            }
        };
        self.pb.radii_by_element = by_element;
        if !self.pb.radii_note_said {
            let notes: Vec<String> = solvent
                .into_iter()
                .chain(note.filter(|_| by_element).map(|n| format!("Poisson-Boltzmann: {n}")))
                .collect();
            if !notes.is_empty() {
                self.pb.radii_note_said = true;
                self.panels.status = notes.join("; ");
            }
        }
        let h = self.pb.spacing_angstrom;
        if !(h.is_finite() && h > 0.0) {
            self.pb_failed(format!("lattice spacing {h} A: a positive number of Angstrom"));
            return None;
        }
        let lattice = setup::lattice_around(&atoms.positions_angstrom, h, 0.0);
        if self.pb.worker.is_none() {
            match crate::jobs::pb::start(self.pb.engine) {
                Ok(w) => self.pb.worker = Some(w),
                Err(e) => {
                    self.pb_failed(e);
                    return None;
                }
            }
        }
        let params = self.pb.params;
        if let Some(w) = self.pb.worker.as_mut() {
            w.submit(
                VIEW_LANE,
                PbRequest {
                    key,
                    atoms: Arc::new(atoms),
                    lattice,
                    params,
                },
            );
            self.pb.asked = Some((key, Instant::now()));
            if self.panels.status == SOLVE_CANCELLED {
                self.panels.status.clear();
            }
        }
        None
    }

    fn pb_failed(&mut self, why: String) {
        self.pb.asked = None;
        if self.pb.failure.as_deref() != Some(why.as_str()) {
            self.error(format!("Poisson-Boltzmann: {why}"));
        }
        self.pb.failure = Some(why);
    }

    /// Takes the worker's results into the field cache; true when one arrived.
    pub fn poll_pb(&mut self) -> bool {
        let Some(w) = self.pb.worker.as_mut() else {
            return false;
        };
        let done = w.try_recv();
        let mut arrived = false;
        for d in done {
            let r = d.output;
            if self.pb.asked.is_some_and(|(k, _)| k == r.key) {
                self.pb.asked = None;
            }
            match r.solution {
                Ok(sol) => {
                    let name = self.pb.legend();
                    let description = format!(
                        "{name} (kT/e, {}, {:?} points, {:.2} s)",
                        r.engine, sol.lattice.dims, r.seconds
                    );
                    self.pb.last_solve = Some((r.engine.clone(), r.seconds, sol.iterations));
                    self.pb.failure = None;
                    if r.key.field
                        == (FieldChoice::PotentialPb {
                            revision: self.pb.revision,
                        })
                    {
                        self.pb.solved = Some(PbSolved {
                            revision: self.pb.revision,
                            params: self.pb.params,
                            spacing_angstrom: self.pb.spacing_angstrom,
                        });
                    }
                    self.fields.insert(r.key, Arc::new(setup::grid_of(&sol, description)));
                    arrived = true;
                }
                Err(e) => self.pb_failed(e),
            }
        }
        arrived
    }
}

/// The Poisson-Boltzmann parameters a session keeps (those the field panel edits).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PbSpec {
    pub ionic_strength_molar: f64,
    pub eps_in: f64,
    pub eps_out: f64,
    pub probe_angstrom: f64,
    pub spacing_angstrom: f64,
}

impl AppState {
    /// The parameters to save: when a representation is coloured by the Poisson-Boltzmann potential,
    /// the electrostatic model is Poisson-Boltzmann (its legend names them), or they were changed.
    pub fn pb_spec(&self) -> Option<PbSpec> {
        let used = self
            .doc
            .reps
            .fields()
            .any(|(_, f)| f.coloring.is_some_and(|c| is_pb(c.source)) || is_pb(f.field));
        let p = &self.pb.params;
        let d = crate::compute::pb::PbParams::default();
        let changed = (p.ionic_strength_molar, p.eps_in, p.eps_out, p.probe_angstrom)
            != (d.ionic_strength_molar, d.eps_in, d.eps_out, d.probe_angstrom)
            || self.pb.spacing_angstrom != PbView::default().spacing_angstrom;
        (used || changed || self.esp.model.is_pb()).then_some(PbSpec {
            ionic_strength_molar: p.ionic_strength_molar,
            eps_in: p.eps_in,
            eps_out: p.eps_out,
            probe_angstrom: p.probe_angstrom,
            spacing_angstrom: self.pb.spacing_angstrom,
        })
    }

    /// Takes a session's parameters (values a hand-edited file may break are ignored).
    pub fn apply_pb_spec(&mut self, s: &PbSpec) {
        let ok = |v: f64, lo: f64| v.is_finite() && v >= lo;
        let p = &mut self.pb.params;
        if ok(s.ionic_strength_molar, 0.0) {
            p.ionic_strength_molar = s.ionic_strength_molar;
        }
        if ok(s.eps_in, 1.0) {
            p.eps_in = s.eps_in;
        }
        if ok(s.eps_out, 1.0) {
            p.eps_out = s.eps_out;
        }
        if ok(s.probe_angstrom, 0.0) {
            p.probe_angstrom = s.probe_angstrom;
        }
        if ok(s.spacing_angstrom, 0.0) && s.spacing_angstrom > 0.0 {
            self.pb.spacing_angstrom = s.spacing_angstrom;
        }
        self.pb.changed();
    }
}

/// A Poisson-Boltzmann parameter the field panel and `set` change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PbSetting {
    /// Ionic strength (M).
    IonicStrength,
    /// Solute dielectric.
    EpsIn,
    /// Solvent dielectric.
    EpsOut,
    /// Solvent probe radius (Angstrom).
    Probe,
    /// Lattice spacing (Angstrom).
    Spacing,
}

impl PbSetting {
    pub const ALL: [PbSetting; 5] = [
        PbSetting::IonicStrength,
        PbSetting::EpsIn,
        PbSetting::EpsOut,
        PbSetting::Probe,
        PbSetting::Spacing,
    ];

    /// Its name in `set` ("ionic", "epsin", "epsout", "probe", "pbspacing").
    pub fn word(self) -> &'static str {
        match self {
            PbSetting::IonicStrength => "ionic",
            PbSetting::EpsIn => "epsin",
            PbSetting::EpsOut => "epsout",
            PbSetting::Probe => "probe",
            PbSetting::Spacing => "pbspacing",
        }
    }

    /// The values it takes, with its unit (the field panel's ranges).
    pub fn range(self) -> (std::ops::RangeInclusive<f64>, &'static str) {
        match self {
            PbSetting::IonicStrength => (0.0..=5.0, " M"),
            PbSetting::EpsIn => (1.0..=100.0, ""),
            PbSetting::EpsOut => (1.0..=200.0, ""),
            PbSetting::Probe => (0.0..=5.0, " Å"),
            PbSetting::Spacing => (0.2..=3.0, " Å"),
        }
    }
}

impl AppState {
    /// Sets a Poisson-Boltzmann parameter (checked by the caller against [`PbSetting::range`]):
    /// the maps solved with the old one are dropped and the potentials recomputed.
    pub(crate) fn set_pb_value(&mut self, which: PbSetting, value: f64) {
        let p = &mut self.pb.params;
        match which {
            PbSetting::IonicStrength => p.ionic_strength_molar = value,
            PbSetting::EpsIn => p.eps_in = value,
            PbSetting::EpsOut => p.eps_out = value,
            PbSetting::Probe => p.probe_angstrom = value,
            PbSetting::Spacing => self.pb.spacing_angstrom = value,
        }
        self.pb.changed();
        self.refresh_esp();
    }

    /// The Poisson-Boltzmann solution of the shown frame, solved now with the view's parameters and
    /// solute (`save map`), in kT/e.
    pub fn pb_grid_blocking(&mut self) -> Result<Grid3, String> {
        let doc = self.document().ok_or("nothing is open")?;
        let atoms = setup::solute_atoms(&doc.structure, &doc.frame, None)?.atoms;
        let h = self.pb.spacing_angstrom;
        let lattice = setup::lattice_around(&atoms.positions_angstrom, h, 0.0);
        let params = self.pb.params;
        let mut solver = crate::compute::pb::engine::PbSolver::new(self.pb.engine).map_err(|e| e.to_string())?;
        let solution = solver
            .solve(&atoms, &lattice, &params, None)
            .map_err(|e| e.to_string())?;
        Ok(setup::grid_of(
            &solution,
            format!(
                "{} (kT/e, {:?} points {h} A apart)",
                setup::legend(&params),
                lattice.dims
            ),
        ))
    }

    /// The current value of a Poisson-Boltzmann parameter.
    pub fn pb_value(&self, which: PbSetting) -> f64 {
        let p = &self.pb.params;
        match which {
            PbSetting::IonicStrength => p.ionic_strength_molar,
            PbSetting::EpsIn => p.eps_in,
            PbSetting::EpsOut => p.eps_out,
            PbSetting::Probe => p.probe_angstrom,
            PbSetting::Spacing => self.pb.spacing_angstrom,
        }
    }
}
