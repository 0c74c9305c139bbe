//! The sequence panel's model: the document's polymer chains as one-letter sequences (protein and
//! nucleic-acid residues, found as the cartoon finds them, `analysis::polymer`), each residue with
//! its number, name, atoms and trace atom (CA, P or C4'), the secondary structure of the frame shown
//! (DSSP, computed again when the frame changes while playback is stopped), and the residues the
//! user picked in it (a click, a shift-click for a range). `ui::sequence` draws it.

use crate::analysis::dssp::{DsspOptions, SecondaryStructure};
use crate::analysis::polymer::Polymer;
use crate::model::Structure;

/// Protein residues above which the panel shows no secondary structure (DSSP on the interface's
/// thread would hold up the frame).
pub const MAX_DSSP_RESIDUES: usize = 20_000;

/// One residue of the sequence.
#[derive(Clone, Debug, PartialEq)]
pub struct SeqResidue {
    /// One-letter code ('X' for an unknown amino acid, 'N' for an unknown nucleotide).
    pub letter: char,
    pub resname: String,
    pub resid: i32,
    /// Its trace atom (CA, P or C4'): picked when the residue is clicked.
    pub trace_atom: u32,
    /// Index of the protein residue (for its secondary structure), when it is one.
    pub protein_index: Option<usize>,
}

/// One chain: its label (chain id, else segment id) and residues in file order.
#[derive(Clone, Debug, PartialEq)]
pub struct SeqChain {
    pub label: String,
    /// The selection words that name the chain ("chain A", "segid 4AKE"), empty when none does.
    pub selector: String,
    pub residues: Vec<SeqResidue>,
}

/// The sequence panel's state.
#[derive(Default)]
pub struct SequencePanel {
    /// The user closed the panel (View > Sequence opens it again).
    pub hidden: bool,
    /// The chains of document `doc_id`.
    pub chains: Vec<SeqChain>,
    pub doc_id: Option<u64>,
    polymer: Option<Polymer>,
    /// Secondary structure per protein residue, for (document, frame).
    pub secondary: Option<((u64, usize), Vec<SecondaryStructure>)>,
    /// Picked residues: (chain, first, last) in the chain's order, first <= last.
    pub picked: Option<(usize, usize, usize)>,
}

/// One-letter code of an amino acid or nucleotide residue name (CHARMM, AMBER and GROMACS variants
/// included).
pub fn one_letter(resname: &str) -> Option<char> {
    if let Some(c) = one_letter_exact(resname) {
        return Some(c);
    }
    // AMBER's terminal residues (NALA, CLYS, NHIE) and 5'/3' nucleotides (DA5, RU3).
    let terminal = resname
        .strip_prefix('N')
        .or_else(|| resname.strip_prefix('C'))
        .filter(|r| r.len() == 3);
    let nucleotide_end = resname.strip_suffix(['5', '3']);
    terminal.or(nucleotide_end).and_then(one_letter_exact)
}

fn one_letter_exact(resname: &str) -> Option<char> {
    let c = match resname {
        "ALA" => 'A',
        "ALAD" => 'A',
        "ARG" | "ARN" | "ARGN" => 'R',
        "ASN" | "ASN1" => 'N',
        "ASP" | "ASH" | "ASPH" | "ASF" => 'D',
        "CYS" | "CYX" | "CYM" | "CYSH" | "CYS1" | "CYS2" => 'C',
        "GLN" | "QLN" => 'Q',
        "GLU" | "GLH" | "GLUH" | "PGLU" => 'E',
        "GLY" => 'G',
        "HIS" | "HSD" | "HSE" | "HSP" | "HID" | "HIE" | "HIP" | "HISA" | "HISB" | "HISD" | "HISE" | "HISH" | "HIS1"
        | "HIS2" | "HISP" => 'H',
        "ILE" => 'I',
        "LEU" => 'L',
        "LYS" | "LYN" | "LSN" | "LYSH" | "LYSN" => 'K',
        "MET" | "MSE" => 'M',
        "PHE" => 'F',
        "PRO" => 'P',
        "SER" => 'S',
        "THR" => 'T',
        "TRP" => 'W',
        "TYR" => 'Y',
        "VAL" => 'V',
        "SEC" => 'U',
        "PYL" => 'O',
        "A" | "DA" | "ADE" | "RA" => 'A',
        "C" | "DC" | "CYT" | "RC" => 'C',
        "G" | "DG" | "GUA" | "RG" => 'G',
        "T" | "DT" | "THY" => 'T',
        "U" | "URA" | "RU" => 'U',
        _ => return None,
    };
    Some(c)
}

impl SequencePanel {
    /// Rebuilds the chains when the document changed.
    pub fn refresh(&mut self, doc_id: u64, s: &Structure) {
        if self.doc_id == Some(doc_id) {
            return;
        }
        let polymer = Polymer::new(s);
        self.chains = chains_of(s, &polymer);
        self.polymer = Some(polymer);
        self.doc_id = Some(doc_id);
        self.secondary = None;
        self.picked = None;
    }

    /// The secondary structure of the frame shown, computed again for a new frame unless playing.
    pub fn refresh_secondary(&mut self, key: (u64, usize), positions_angstrom: &[[f32; 3]], playing: bool) {
        let Some(polymer) = &self.polymer else {
            return;
        };
        let stale = self.secondary.as_ref().is_none_or(|(k, _)| *k != key);
        if !stale || (playing && self.secondary.is_some()) {
            return;
        }
        if polymer.protein.is_empty() || polymer.protein.len() > MAX_DSSP_RESIDUES {
            self.secondary = None;
            return;
        }
        let ss = polymer.protein.assign(positions_angstrom, &DsspOptions::default());
        self.secondary = Some((key, ss));
    }

    /// The selection that names the picked residues ("chain A and resid 10 to 25"), if any.
    pub fn picked_selection(&self) -> Option<String> {
        let (c, a, b) = self.picked?;
        let chain = self.chains.get(c)?;
        let (first, last) = (chain.residues.get(a)?, chain.residues.get(b)?);
        let span = if first.resid == last.resid {
            format!("resid {}", first.resid)
        } else {
            format!(
                "resid {} to {}",
                first.resid.min(last.resid),
                first.resid.max(last.resid)
            )
        };
        Some(if chain.selector.is_empty() {
            span
        } else {
            format!("{} and {span}", chain.selector)
        })
    }
}

/// The polymer residues of `s` by chain, in file order.
fn chains_of(s: &Structure, polymer: &Polymer) -> Vec<SeqChain> {
    let starts = s.residue_starts();
    // (residue index, trace atom, protein index)
    let mut residues: Vec<(usize, u32, Option<usize>)> = polymer
        .protein
        .residues
        .iter()
        .enumerate()
        .filter_map(|(k, r)| Some((r.residue, r.ca?, Some(k))))
        .collect();
    residues.extend(polymer.nucleic.iter().map(|n| (n.residue, n.trace, None)));
    residues.sort_by_key(|r| r.0);
    let mut chains: Vec<SeqChain> = Vec::new();
    let mut last_key = None;
    for (residue, trace, protein_index) in residues {
        let Some(&a) = starts.get(residue) else { continue };
        let chain = s
            .chains
            .get(a)
            .map(|c| c.as_str().trim().to_string())
            .unwrap_or_default();
        let seg = s
            .segids
            .get(a)
            .map(|c| c.as_str().trim().to_string())
            .unwrap_or_default();
        let key = (chain.clone(), seg.clone());
        if last_key.as_ref() != Some(&key) {
            let quote = crate::model::select::literal_word;
            let (label, selector) = if !chain.is_empty() {
                (chain.clone(), format!("chain {}", quote(&chain)))
            } else if !seg.is_empty() {
                (seg.clone(), format!("segid {}", quote(&seg)))
            } else {
                (String::new(), String::new())
            };
            chains.push(SeqChain {
                label,
                selector,
                residues: Vec::new(),
            });
            last_key = Some(key);
        }
        let resname = s
            .resnames
            .get(a)
            .map(|r| r.as_str().trim().to_string())
            .unwrap_or_default();
        let letter = one_letter(&resname).unwrap_or(if protein_index.is_some() { 'X' } else { 'N' });
        if let Some(c) = chains.last_mut() {
            c.residues.push(SeqResidue {
                letter,
                resname,
                resid: s.resids.get(a).copied().unwrap_or(0),
                trace_atom: trace,
                protein_index,
            });
        }
    }
    chains
}

#[cfg(test)]
mod tests {
    use super::one_letter;

    #[test]
    fn one_letter_codes_of_force_field_residue_names() {
        for (names, code) in [
            (&["LYS", "LYSH", "LSN", "NLYS", "CLYS"][..], 'K'),
            (&["HIS", "HSD", "HISB", "HIE", "NHIE", "CHIP"][..], 'H'),
            (&["CYS", "CYSH", "CYX", "CYS2"][..], 'C'),
            (&["DA", "DA5", "DA3", "A", "RA5"][..], 'A'),
        ] {
            for n in names {
                assert_eq!(one_letter(n), Some(code), "{n}");
            }
        }
        for n in ["CHOL", "NME", "CAL", "HOH", "POPC", "N"] {
            assert_eq!(one_letter(n), None, "{n}");
        }
    }
}
