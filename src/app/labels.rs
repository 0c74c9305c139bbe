//! Atom labels: which atoms carry a label in the 3-D view, and what a label says (the atom name,
//! its residue, its index: [`LabelFormat`]; a wavefunction's atoms, which have no residues, by
//! element and number: "C2", "H5").
//!
//! Owns [`Labels`]. Labels are added by a click in label mode (`app::measure`'s click modes hand
//! the pick here) or by a selection ("name CA"); `app::apply` carries out the label commands,
//! `ui::measure` draws them at their atoms (following the frame) and lists them, `app::history`
//! keeps them in its snapshots.

use super::state::AppState;

/// At most this many labels (a selection of more is refused with a message: thousands of labels
/// are unreadable and slow to draw).
pub const MAX_LABELS: usize = 2000;

/// What a label says.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum LabelFormat {
    /// "CA"
    Name,
    /// "MET1:CA"
    #[default]
    Residue,
    /// "MET1:CA #5" (1-based atom index, as the status line counts atoms)
    Full,
    /// "MET1": the residue alone, one label per residue on a figure (label its CA atoms)
    ResidueOnly,
}

impl LabelFormat {
    pub const ALL: [LabelFormat; 4] = [
        LabelFormat::Name,
        LabelFormat::ResidueOnly,
        LabelFormat::Residue,
        LabelFormat::Full,
    ];

    pub fn name(self) -> &'static str {
        match self {
            LabelFormat::Name => "name",
            LabelFormat::ResidueOnly => "residue",
            LabelFormat::Residue => "residue:name",
            LabelFormat::Full => "residue:name #index",
        }
    }

    /// The word a script chooses it by (`label format WORD`).
    pub fn word(self) -> &'static str {
        match self {
            LabelFormat::Name => "name",
            LabelFormat::ResidueOnly => "residue",
            LabelFormat::Residue => "both",
            LabelFormat::Full => "full",
        }
    }
}

/// The labelled atoms (0-based, in the order they were labelled) and the format.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Labels {
    pub atoms: Vec<usize>,
    pub format: LabelFormat,
    /// The selection typed into "Label atoms" of the labels panel.
    pub selection_text: String,
}

impl AppState {
    /// The text of atom `atom`'s label in the current format.
    pub fn label_text(&self, atom: usize) -> String {
        let Some(doc) = self.document() else {
            return format!("#{}", atom + 1);
        };
        let s = &doc.structure;
        if let Some(numbered) = self.qm_atom_name(atom) {
            // By element alone in the "name" format.
            let symbol = s.elements.get(atom).map_or("?", |e| e.symbol());
            return match self.tools.labels.format {
                LabelFormat::Name => symbol.to_string(),
                LabelFormat::Residue | LabelFormat::Full | LabelFormat::ResidueOnly => numbered,
            };
        }
        let name = s.names.get(atom).map(|n| n.to_string()).unwrap_or_default();
        // With several chains a residue number repeats: the chain comes first ("B:LEU10:CA").
        let chain = match s.chains.get(atom) {
            Some(c) if doc.several_chains && !c.is_empty() => format!("{c}:"),
            _ => String::new(),
        };
        let residue = match (s.resnames.get(atom), s.resids.get(atom)) {
            (Some(_), Some(_)) => format!("{chain}{}:", s.residue_text(atom)),
            _ => String::new(),
        };
        match self.tools.labels.format {
            LabelFormat::Name => name,
            // Without a residue (a bare XYZ file) the atom name stands in.
            LabelFormat::ResidueOnly if residue.is_empty() => name,
            LabelFormat::ResidueOnly => residue.trim_end_matches(':').to_string(),
            LabelFormat::Residue => format!("{residue}{name}"),
            LabelFormat::Full => format!("{residue}{name} #{}", atom + 1),
        }
    }

    /// A wavefunction's atom by element and number, as QM programs print them ("C2", "H5"); `None`
    /// for atoms of a structure. A wavefunction's atoms have no residues nor names of their own
    /// (the reader files them all as element symbols in one residue "QM 1", so every hydrogen would
    /// read "H QM1").
    pub fn qm_atom_name(&self, atom: usize) -> Option<String> {
        let doc = self.document()?;
        if doc.qm.is_some() || doc.wavefunctions.is_empty() {
            return None;
        }
        let symbol = doc.structure.elements.get(atom).map_or("?", |e| e.symbol());
        Some(format!("{symbol}{}", atom + 1))
    }

    /// Adds the label of `atom`, or removes it when it has one.
    pub(crate) fn toggle_label(&mut self, atom: usize) {
        let labels = &mut self.tools.labels;
        if let Some(k) = labels.atoms.iter().position(|&a| a == atom) {
            labels.atoms.remove(k);
        } else if labels.atoms.len() < MAX_LABELS {
            labels.atoms.push(atom);
        } else {
            self.error(format!("labels: at most {MAX_LABELS}"));
        }
    }

    /// Labels the atoms a selection picks (those already labelled keep theirs).
    pub(crate) fn label_selection(&mut self, text: &str) {
        let Some(doc) = self.document() else {
            return self.error("labels: open a structure first".into());
        };
        let selection = match crate::model::select::Selection::parse(text) {
            Ok(s) => s,
            Err(e) => return self.error(format!("labels: '{text}': {e}")),
        };
        let mut picked = selection.indices(&doc.structure, Some(&doc.frame));
        if picked.is_empty() {
            return self.error(format!("labels: '{text}' selects no atoms"));
        }
        // Labels that name the residue alone: one per residue, as ChimeraX's `label :LYS` puts them.
        let per_residue = self.tools.labels.format == LabelFormat::ResidueOnly;
        if per_residue {
            picked = one_atom_per_residue(&doc.structure, &picked, &self.tools.labels.atoms);
        }
        let labels = &mut self.tools.labels;
        let new: Vec<usize> = picked
            .iter()
            .map(|&i| i as usize)
            .filter(|i| !labels.atoms.contains(i))
            .collect();
        if labels.atoms.len() + new.len() > MAX_LABELS {
            return self.error(format!(
                "labels: '{text}' selects {} atoms; at most {MAX_LABELS} labels",
                picked.len()
            ));
        }
        let n = new.len();
        labels.atoms.extend(new);
        let atoms = match (per_residue, n == 1) {
            (true, true) => "residue",
            (true, false) => "residues",
            (false, true) => "atom",
            (false, false) => "atoms",
        };
        self.panels.status = format!("labelled {n} {atoms} of '{text}'");
    }
}

/// Of the `picked` atoms (sorted), one per residue: its CA (a nucleotide's P) when picked, else the
/// first picked; none for a residue that already has a labelled atom.
fn one_atom_per_residue(s: &crate::model::Structure, picked: &[u32], labelled: &[usize]) -> Vec<u32> {
    let starts = s.residue_starts();
    let residue_of = |i: usize| starts.partition_point(|&st| st <= i).saturating_sub(1);
    let mut out: Vec<u32> = Vec::new();
    let mut last: Option<usize> = None;
    for &i in picked {
        let r = residue_of(i as usize);
        let named = |k: usize| matches!(s.names.get(k).map(|n| n.as_str().trim()), Some("CA" | "P"));
        if last != Some(r) {
            last = Some(r);
            let range = starts[r]..starts.get(r + 1).copied().unwrap_or(s.len());
            if labelled.iter().any(|a| range.contains(a)) {
                continue;
            }
            out.push(i);
        } else if let Some(first) = out.last_mut()
            && residue_of(*first as usize) == r
            && !named(*first as usize)
            && named(i as usize)
        {
            *first = i;
        }
    }
    out
}
