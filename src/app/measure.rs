//! Measurements: distances, angles and dihedrals between picked atoms, and the RMSD, radius of
//! gyration and SASA of selections (`app::rmsd`), their values at the current frame and over the
//! whole trajectory (frames read as the view shows them), and the CSV of a series.
//!
//! Owns [`Measurements`] (the list, the click mode that builds new ones from picks, and each
//! measurement's series over all frames). `app::apply` carries out the measurement commands and
//! hands every pick to [`AppState::pick_for_tools`]; `ui::measure` lists them, draws them over the
//! 3-D view and plots their series; `app::history` keeps them in its snapshots. A series is read
//! frame by frame through the document's trajectory, a bounded number of positions per update
//! ([`AppState::pump_measure_series`], called after each batch of commands), so a long trajectory
//! never stalls the window and its progress shows.

use super::rmsd::SelectionSpec;
use super::state::AppState;
use std::path::Path;
use std::sync::Arc;

/// Measurement lines and values over a dark background (amber), in the window and in exported
/// images.
pub const MEASURE_RGB_ON_DARK: [u8; 3] = [255, 210, 60];
/// The same over a light background (a dark amber: yellow on white cannot be read).
pub const MEASURE_RGB_ON_LIGHT: [u8; 3] = [150, 90, 0];

/// Atom positions read per update while a series is computed (at least one frame, at most
/// [`SERIES_MAX_FRAMES_PER_UPDATE`]): a few milliseconds of reading, so the window stays live.
pub const SERIES_ATOMS_PER_UPDATE: usize = 2_000_000;
pub const SERIES_MAX_FRAMES_PER_UPDATE: usize = 1000;
/// What one atom's surface points cost in a SASA series, in positions read.
const SASA_COST_PER_ATOM: usize = 1000;

/// What a measurement measures: the number of atoms picked decides it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum MeasureKind {
    /// Between two atoms, in Angstrom.
    Distance,
    /// At the middle of three atoms, in degrees (0..180).
    Angle,
    /// About the bond between the middle two of four atoms, in degrees (-180..180, IUPAC sign:
    /// positive is clockwise looking from the second atom to the third).
    Dihedral,
    /// The RMSD of a selection from a reference frame, in Angstrom (`app::rmsd`); not made by
    /// clicks.
    Rmsd,
    /// The mass-weighted radius of gyration of a selection, in Angstrom (`app::rmsd`); not made by
    /// clicks.
    Rgyr,
    /// The solvent-accessible surface area of a selection, in square Angstrom (`app::rmsd`); not
    /// made by clicks.
    Sasa,
}

impl MeasureKind {
    pub const ALL: [MeasureKind; 3] = [MeasureKind::Distance, MeasureKind::Angle, MeasureKind::Dihedral];

    /// How many atoms it needs.
    pub fn atoms(self) -> usize {
        match self {
            MeasureKind::Distance => 2,
            MeasureKind::Angle => 3,
            MeasureKind::Dihedral => 4,
            MeasureKind::Rmsd | MeasureKind::Rgyr | MeasureKind::Sasa => 0,
        }
    }

    /// The kind measured between `n` atoms.
    pub fn of_atoms(n: usize) -> Option<MeasureKind> {
        match n {
            2 => Some(MeasureKind::Distance),
            3 => Some(MeasureKind::Angle),
            4 => Some(MeasureKind::Dihedral),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            MeasureKind::Distance => "distance",
            MeasureKind::Angle => "angle",
            MeasureKind::Dihedral => "dihedral",
            MeasureKind::Rmsd => "rmsd",
            MeasureKind::Rgyr => "rgyr",
            MeasureKind::Sasa => "sasa",
        }
    }

    /// The unit written beside values.
    pub fn unit(self) -> &'static str {
        match self {
            MeasureKind::Distance | MeasureKind::Rmsd | MeasureKind::Rgyr => "Å",
            MeasureKind::Sasa => "Å²",
            MeasureKind::Angle | MeasureKind::Dihedral => "°",
        }
    }

    /// The unit as a CSV header spells it (ASCII).
    pub fn unit_word(self) -> &'static str {
        match self {
            MeasureKind::Distance | MeasureKind::Rmsd | MeasureKind::Rgyr => "angstrom",
            MeasureKind::Sasa => "angstrom2",
            MeasureKind::Angle | MeasureKind::Dihedral => "degree",
        }
    }

    /// A value with its unit, as the panel and the view show it.
    pub fn format(self, value: f64) -> String {
        match self {
            MeasureKind::Distance => format!("{value:.2} Å"),
            MeasureKind::Rmsd | MeasureKind::Rgyr => format!("{value:.3} Å"),
            MeasureKind::Sasa => format!("{value:.0} Å²"),
            MeasureKind::Angle | MeasureKind::Dihedral => format!("{value:.1}°"),
        }
    }
}

/// What a click on an atom in the 3-D view does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ClickMode {
    /// Picks it (highlight and the status line) only.
    #[default]
    Pick,
    /// Also adds or removes its label.
    Label,
    /// Also adds it to the measurement being built (VMD's keys 2, 3, 4).
    Measure(MeasureKind),
}

/// One measurement: 0-based atom indices (2, 3 or 4 of them; or a selection's, for an RMSD, a
/// radius of gyration or a SASA).
#[derive(Clone, Debug, PartialEq)]
pub struct Measurement {
    pub id: u64,
    pub atoms: Vec<usize>,
    /// What is measured of a selection (`None` for distances, angles and dihedrals).
    pub spec: Option<Arc<SelectionSpec>>,
}

impl Measurement {
    pub fn kind(&self) -> Option<MeasureKind> {
        match &self.spec {
            Some(spec) => Some(spec.kind()),
            None => MeasureKind::of_atoms(self.atoms.len()),
        }
    }
}

/// A measurement's values over the frames of the trajectory, filled frame by frame.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// The atoms measured (a series is thrown away when they change).
    pub atoms: Vec<usize>,
    /// What is measured of a selection (as the measurement's).
    pub spec: Option<Arc<SelectionSpec>>,
    /// The frames in the trajectory when the series started.
    pub n_frames: usize,
    /// One per frame read so far (frame i at index i); `None` where an atom has no finite position.
    pub values: Vec<Option<f64>>,
    /// Each frame's time, where the trajectory says it.
    pub times_ps: Vec<Option<f64>>,
    /// Why reading stopped early, if it did.
    pub error: Option<String>,
}

impl Series {
    /// True once every frame is read (or reading failed).
    pub fn done(&self) -> bool {
        self.error.is_some() || self.values.len() >= self.n_frames
    }
}

/// The measurements of the open document.
#[derive(Clone, Debug, Default)]
pub struct Measurements {
    pub list: Vec<Measurement>,
    /// What a click in the view does.
    pub mode: ClickMode,
    /// Atoms picked towards the next measurement (in measure mode).
    pub picked: Vec<usize>,
    /// The measurement the plot shows.
    pub plotted: Option<u64>,
    /// Series over the trajectory by measurement id, computed when plotted or exported.
    pub series: std::collections::BTreeMap<u64, Series>,
    /// The path "Export CSV" writes to (the plot window's text field).
    pub csv_path: String,
    /// The form of a new RMSD measurement.
    pub rmsd_form: super::rmsd::RmsdForm,
    pub(crate) next_id: u64,
    /// The value of each SASA measurement at the positions last shown (by measurement id: a
    /// fingerprint of its atoms' positions and the value), so that the panel, drawn at every
    /// repaint, computes a surface once per frame.
    pub(crate) sasa_shown: std::cell::RefCell<std::collections::HashMap<u64, (u64, Option<f64>)>>,
}

/// FNV-1a over the bits of `atoms`' positions (missing atoms count as NaN).
fn positions_fingerprint(atoms: &[usize], positions: &[[f32; 3]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &i in atoms {
        for x in positions.get(i).copied().unwrap_or([f32::NAN; 3]) {
            h = (h ^ u64::from(x.to_bits())).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

/// Distance between two points (Angstrom).
pub fn distance(a: [f64; 3], b: [f64; 3]) -> f64 {
    norm(sub(b, a))
}

/// The angle a-b-c at b, degrees (0..180).
pub fn angle_degree(a: [f64; 3], b: [f64; 3], c: [f64; 3]) -> f64 {
    let (u, v) = (sub(a, b), sub(c, b));
    norm(cross(u, v)).atan2(dot(u, v)).to_degrees()
}

/// The dihedral a-b-c-d about b-c, degrees (-180..180, IUPAC sign).
pub fn dihedral_degree(a: [f64; 3], b: [f64; 3], c: [f64; 3], d: [f64; 3]) -> f64 {
    let (b1, b2, b3) = (sub(b, a), sub(c, b), sub(d, c));
    let (n1, n2) = (cross(b1, b2), cross(b2, b3));
    let y = norm(b2) * dot(b1, n2);
    y.atan2(dot(n1, n2)).to_degrees()
}

/// The value of a measurement of `atoms` in `positions` (`None`: an index outside the frame, a
/// position that is not finite, or a count other than 2, 3, 4).
pub fn measure(atoms: &[usize], positions_angstrom: &[[f32; 3]]) -> Option<f64> {
    let mut p = Vec::with_capacity(atoms.len());
    for &i in atoms {
        let q = positions_angstrom.get(i)?;
        if !q.iter().all(|x| x.is_finite()) {
            return None;
        }
        p.push(q.map(f64::from));
    }
    match p.as_slice() {
        [a, b] => Some(distance(*a, *b)),
        [a, b, c] => Some(angle_degree(*a, *b, *c)),
        [a, b, c, d] => Some(dihedral_degree(*a, *b, *c, *d)),
        _ => None,
    }
}

fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

fn norm(a: [f64; 3]) -> f64 {
    dot(a, a).sqrt()
}

/// The CSV of a series: a header naming the columns with their units (`frame`, `time_ps` where
/// every frame has a time, the value), then one row per frame read (empty value where none).
pub fn series_csv(kind: MeasureKind, series: &Series) -> String {
    let with_time = !series.times_ps.is_empty() && series.times_ps.iter().all(Option::is_some);
    let mut out = String::from("frame");
    if with_time {
        out.push_str(",time_ps");
    }
    out.push_str(&format!(",{}_{}\n", kind.name(), kind.unit_word()));
    for (i, v) in series.values.iter().enumerate() {
        out.push_str(&i.to_string());
        if with_time {
            let t = series.times_ps.get(i).copied().flatten().unwrap_or(f64::NAN);
            out.push_str(&format!(",{t}"));
        }
        match v {
            Some(v) => out.push_str(&format!(",{v:.6}\n")),
            None => out.push_str(",\n"),
        }
    }
    out
}

impl AppState {
    /// The short text of a measurement: "distance CA MET1 – CA ARG2".
    pub fn measurement_label(&self, m: &Measurement) -> String {
        if let Some(spec) = &m.spec {
            return super::rmsd::label(spec);
        }
        let kind = m.kind().map_or("measurement", MeasureKind::name);
        let atoms: Vec<String> = m.atoms.iter().map(|&a| self.atom_short_name(a)).collect();
        format!("{kind} {}", atoms.join(" – "))
    }

    /// "CA MET1", "CA B:MET1" where several chains repeat residue numbers (1-based index where
    /// the structure has no name for it); a wavefunction's atom as QM programs number it, "C2"
    /// (its atoms share one residue and their element as name).
    pub fn atom_short_name(&self, atom: usize) -> String {
        let Some(doc) = self.document() else {
            return format!("#{}", atom + 1);
        };
        let s = &doc.structure;
        if let Some(name) = self.qm_atom_name(atom) {
            return name;
        }
        let chain = match s.chains.get(atom) {
            Some(c) if doc.several_chains && !c.is_empty() => format!("{c}:"),
            _ => String::new(),
        };
        match (s.names.get(atom), s.resnames.get(atom), s.resids.get(atom)) {
            (Some(n), Some(_), Some(_)) => format!("{n} {chain}{}", s.residue_text(atom)),
            (Some(n), _, _) => n.to_string(),
            _ => format!("#{}", atom + 1),
        }
    }

    /// A measurement's value at the current frame.
    pub fn measurement_value(&self, m: &Measurement) -> Option<f64> {
        let positions = &self.document()?.frame.positions_angstrom;
        if m.kind() != Some(MeasureKind::Sasa) {
            return super::rmsd::value(&m.atoms, m.spec.as_deref(), positions);
        }
        let key = positions_fingerprint(&m.atoms, positions);
        let mut shown = self.tools.measure.sasa_shown.borrow_mut();
        if let Some(&(k, v)) = shown.get(&m.id)
            && k == key
        {
            return v;
        }
        let v = super::rmsd::value(&m.atoms, m.spec.as_deref(), positions);
        shown.insert(m.id, (key, v));
        v
    }

    /// Adds a measurement of 2, 3 or 4 distinct atoms of the open document.
    pub(crate) fn add_measurement(&mut self, atoms: Vec<usize>) {
        let Some(doc) = self.document() else {
            return self.error("measure: open a structure first".into());
        };
        let n_atoms = doc.structure.len();
        let Some(kind) = MeasureKind::of_atoms(atoms.len()) else {
            return self.error(format!("measure: 2, 3 or 4 atoms, not {}", atoms.len()));
        };
        if let Some(bad) = atoms.iter().find(|&&a| a >= n_atoms) {
            return self.error(format!(
                "measure: atom {} is not in the structure ({n_atoms} atoms)",
                bad + 1
            ));
        }
        if (1..atoms.len()).any(|i| atoms[..i].contains(&atoms[i])) {
            return self.error("measure: the atoms must differ".into());
        }
        let tools = &mut self.tools.measure;
        tools.next_id += 1;
        let m = Measurement {
            id: tools.next_id,
            atoms,
            spec: None,
        };
        tools.list.push(m.clone());
        let value = self.measurement_value(&m).map(|v| kind.format(v)).unwrap_or_default();
        self.panels.status = format!("{}{}: {value}", self.measurement_label(&m), self.at_frame_text());
    }

    /// " at frame 12" when the document has more than one frame: the status line keeps a
    /// measurement's value while the frames change, so it says which frame the value is of.
    pub(crate) fn at_frame_text(&self) -> String {
        match self.document() {
            Some(d) if d.n_frames > 1 => format!(" at frame {}", d.frame_index),
            _ => String::new(),
        }
    }

    pub(crate) fn delete_measurement(&mut self, id: u64) {
        let tools = &mut self.tools.measure;
        tools.list.retain(|m| m.id != id);
        tools.sasa_shown.get_mut().remove(&id);
        tools.series.remove(&id);
        if tools.plotted == Some(id) {
            tools.plotted = None;
        }
    }

    /// Sets what a click does; a new mode starts its picks afresh.
    pub(crate) fn set_click_mode(&mut self, mode: ClickMode) {
        let tools = &mut self.tools.measure;
        tools.mode = mode;
        tools.picked.clear();
        self.panels.status = match mode {
            ClickMode::Pick => "click an atom to see what it is".into(),
            ClickMode::Label => "click atoms to label them (click again to remove)".into(),
            ClickMode::Measure(k) => format!("{}: click {} atoms", k.name(), k.atoms()),
        };
    }

    /// What a pick does beyond the highlight, in the current click mode: a label toggled, or an
    /// atom added to the measurement being built (the measurement made once enough are picked).
    pub(crate) fn pick_for_tools(&mut self, atom: Option<usize>) {
        let Some(atom) = atom else {
            return;
        };
        match self.tools.measure.mode {
            ClickMode::Pick => {}
            ClickMode::Label => self.toggle_label(atom),
            ClickMode::Measure(kind) => {
                let picked = &mut self.tools.measure.picked;
                if picked.last() == Some(&atom) {
                    // A second click on the same atom takes it back.
                    picked.pop();
                } else {
                    picked.push(atom);
                }
                if picked.len() >= kind.atoms() {
                    let atoms = std::mem::take(picked);
                    self.add_measurement(atoms);
                } else {
                    let n = picked.len();
                    self.panels.status = format!("{}: {n} of {} atoms picked", kind.name(), kind.atoms());
                }
            }
        }
    }

    /// Shows measurement `id` in the plot (its series is computed over all frames if needed).
    pub(crate) fn plot_measurement(&mut self, id: Option<u64>) {
        self.tools.measure.plotted = id;
        if let Some(id) = id {
            self.start_series(id);
            if self.tools.measure.csv_path.is_empty() {
                self.tools.measure.csv_path = self.default_csv_path(id);
            }
        }
    }

    /// "adk_dims_distance_1.csv" in the working folder, where images and movies are saved too (not
    /// beside the input files, whose folder may be a data tree the user never meant to write to).
    fn default_csv_path(&self, id: u64) -> String {
        let kind = self
            .tools
            .measure
            .list
            .iter()
            .find(|m| m.id == id)
            .and_then(Measurement::kind)
            .map_or("measurement", MeasureKind::name);
        let stem = self
            .document()
            .and_then(|doc| doc.paths.last())
            .and_then(|p| p.file_stem())
            .map_or_else(|| "measurement".into(), |s| s.to_string_lossy().into_owned());
        format!("{stem}_{kind}_{id}.csv")
    }

    /// Starts (or keeps) the series of measurement `id` over all frames.
    fn start_series(&mut self, id: u64) {
        let Some(n_frames) = self.document().map(|d| d.n_frames) else {
            return;
        };
        let Some(m) = self.tools.measure.list.iter().find(|m| m.id == id) else {
            return;
        };
        let keep = self
            .tools
            .measure
            .series
            .get(&id)
            .is_some_and(|s| s.atoms == m.atoms && s.spec == m.spec && s.n_frames == n_frames && s.error.is_none());
        if !keep {
            let series = Series {
                atoms: m.atoms.clone(),
                spec: m.spec.clone(),
                n_frames,
                values: Vec::with_capacity(n_frames),
                times_ps: Vec::with_capacity(n_frames),
                error: None,
            };
            self.tools.measure.series.insert(id, series);
        }
    }

    /// True while a series is being read.
    pub fn measure_series_pending(&self) -> bool {
        self.tools.measure.series.values().any(|s| !s.done())
    }

    /// Reads more frames (about [`SERIES_ATOMS_PER_UPDATE`] positions) into the series not yet
    /// complete; true when a series grew.
    pub fn pump_measure_series(&mut self) -> bool {
        let mut grew = false;
        let Some(doc) = self.doc.document.as_mut() else {
            return false;
        };
        // In positions read; a SASA frame also counts its surface points (a few milliseconds for
        // a protein: one such frame per update).
        let mut budget = SERIES_ATOMS_PER_UPDATE;
        let mut frames_left = SERIES_MAX_FRAMES_PER_UPDATE;
        let mut first = true;
        let mut frame = crate::model::Frame::default();
        for series in self.tools.measure.series.values_mut() {
            let cost = doc.structure.len().max(1)
                + match series.spec.as_deref().map(|s| &s.quantity) {
                    Some(super::rmsd::Quantity::Sasa { .. }) => series.atoms.len() * SASA_COST_PER_ATOM,
                    _ => 0,
                };
            while !series.done() && frames_left > 0 && (first || budget >= cost) {
                first = false;
                frames_left -= 1;
                budget = budget.saturating_sub(cost);
                let i = series.values.len();
                // As the view shows the frame (molecules whole, fitted when the view fits).
                match doc.read_frame(i, &mut frame) {
                    Ok(()) => {
                        series.values.push(super::rmsd::value(
                            &series.atoms,
                            series.spec.as_deref(),
                            &frame.positions_angstrom,
                        ));
                        series.times_ps.push(frame.time_ps);
                        grew = true;
                    }
                    Err(e) => series.error = Some(format!("frame {i}: {e}")),
                }
            }
        }
        grew
    }

    /// Computes the series of measurement `id` to the end on this thread (tests, scripts).
    pub fn finish_series(&mut self, id: u64) -> Option<&Series> {
        self.start_series(id);
        while self.tools.measure.series.get(&id).is_some_and(|s| !s.done()) {
            if !self.pump_measure_series() {
                break;
            }
        }
        self.tools.measure.series.get(&id)
    }

    /// Writes the series of measurement `id` over all frames as CSV to `path` (a temporary file
    /// beside it, renamed when complete).
    pub(crate) fn export_measurement_csv(&mut self, id: u64, path: &Path) {
        let Some(kind) = self
            .tools
            .measure
            .list
            .iter()
            .find(|m| m.id == id)
            .and_then(Measurement::kind)
        else {
            return self.error(format!("export CSV: no measurement {id}"));
        };
        let text = match self.finish_series(id) {
            Some(s) if s.error.is_none() => series_csv(kind, s),
            Some(s) => {
                let e = s.error.clone().unwrap_or_default();
                return self.error(format!("export CSV: reading the trajectory failed at {e}"));
            }
            None => return self.error("export CSV: open a trajectory first".into()),
        };
        match crate::io::write_atomically(path, text.as_bytes()) {
            Ok(()) => {
                self.panels.status = format!(
                    "{kind} over all frames written to {}",
                    path.display(),
                    kind = kind.name()
                )
            }
            Err(e) => self.error(format!("export CSV: {}: {e}", path.display())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distance_angle_and_dihedral_match_hand_values() {
        assert!((distance([0.0; 3], [3.0, 4.0, 0.0]) - 5.0).abs() < 1e-12);
        let a = angle_degree([1.0, 0.0, 0.0], [0.0; 3], [0.0, 1.0, 0.0]);
        assert!((a - 90.0).abs() < 1e-12);
        // A trans chain is 180; rotating the last atom clockwise (seen from b to c) gives +90 (IUPAC).
        let (b, c) = ([0.0, 0.0, 0.0], [1.0, 0.0, 0.0]);
        let trans = dihedral_degree([0.0, 1.0, 0.0], b, c, [1.0, -1.0, 0.0]);
        assert!((trans.abs() - 180.0).abs() < 1e-9, "{trans}");
        let cis = dihedral_degree([0.0, 1.0, 0.0], b, c, [1.0, 1.0, 0.0]);
        assert!(cis.abs() < 1e-9, "{cis}");
        let plus = dihedral_degree([0.0, 1.0, 0.0], b, c, [1.0, 0.0, 1.0]);
        assert!((plus - 90.0).abs() < 1e-9, "{plus}");
    }

    #[test]
    fn a_measure_of_a_missing_or_unfinite_atom_is_none() {
        let p = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [f32::NAN, 0.0, 0.0]];
        assert_eq!(measure(&[0, 1], &p), Some(1.0));
        assert_eq!(measure(&[0, 5], &p), None);
        assert_eq!(measure(&[0, 2], &p), None);
        assert_eq!(measure(&[0], &p), None);
    }

    #[test]
    fn the_csv_names_its_units_and_leaves_a_missing_value_empty() {
        let s = Series {
            atoms: vec![0, 1],
            spec: None,
            n_frames: 2,
            values: vec![Some(1.5), None],
            times_ps: vec![Some(0.5), Some(1.0)],
            error: None,
        };
        let csv = series_csv(MeasureKind::Distance, &s);
        assert_eq!(csv, "frame,time_ps,distance_angstrom\n0,0.5,1.500000\n1,1,\n");
    }
}
