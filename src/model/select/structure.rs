//! Secondary-structure keywords of selections, as VMD's: `helix` (alpha, 3-10 and pi helices),
//! `alpha_helix`, `helix_3_10`, `pi_helix`, `sheet` (`betasheet`, `beta_sheet`: strands and
//! isolated bridges), `extended_beta`, `bridge_beta`, `turn` and `coil` (protein residues in none
//! of those: DSSP's bends, polyproline and unassigned residues).
//!
//! The model knows no DSSP: the assignment is given to it once by the layer that computes it
//! ([`set_structure_codes`], called by `analysis::dssp::use_for_selections` when the viewer, the
//! command line or the Python module starts). Each atom takes its residue's one-letter DSSP code;
//! atoms outside protein residues have none and match no keyword. Codes follow the frame's
//! positions, so these keywords make a selection depend on coordinates. Without an assignment (or
//! without positions) they select nothing.

use crate::model::structure::Structure;
use std::sync::OnceLock;

/// One DSSP code per atom of `structure` at `positions_angstrom` (`H G I E B T S P -`; 0 for atoms
/// of no protein residue).
pub type StructureCodes = fn(&Structure, &[[f32; 3]]) -> Vec<u8>;

static CODES: OnceLock<StructureCodes> = OnceLock::new();

/// Gives selections the secondary-structure assignment (the first call wins).
pub fn set_structure_codes(codes: StructureCodes) {
    let _ = CODES.set(codes);
}

/// Whether an assignment has been given.
pub fn has_structure_codes() -> bool {
    CODES.get().is_some()
}

/// The keyword's DSSP codes, or `None` when `word` (lower case) is not one.
pub(super) fn keyword_codes(word: &str) -> Option<&'static [u8]> {
    Some(match word {
        "helix" => b"HGI",
        "alpha_helix" => b"H",
        "helix_3_10" => b"G",
        "pi_helix" => b"I",
        "sheet" | "betasheet" | "beta_sheet" => b"EB",
        "extended_beta" => b"E",
        "bridge_beta" => b"B",
        "turn" => b"T",
        "coil" => b"-SP",
        _ => return None,
    })
}

/// The atoms whose residue's code is one of `codes` (all false without positions or assignment).
pub(super) fn atoms_with(structure: &Structure, positions: Option<&[[f32; 3]]>, codes: &[u8]) -> Vec<bool> {
    let n = structure.len();
    let (Some(positions), Some(assign)) = (positions, CODES.get()) else {
        return vec![false; n];
    };
    let per_atom = assign(structure, positions);
    (0..n)
        .map(|i| per_atom.get(i).is_some_and(|c| *c != 0 && codes.contains(c)))
        .collect()
}
