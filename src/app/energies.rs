//! Energies per frame of a QM log's steps or of a series of wavefunctions
//! (`Document::frame_energies_hartree`): what the timeline's energy line and the energy plot
//! (`ui::energies`) show. Differences are in kcal/mol from the lowest step, as optimisation and
//! scan profiles are read; total energies in hartree, as the programs print them.

use super::state::AppState;
use crate::model::units::KCAL_PER_MOL_PER_HARTREE;

/// The energy plot window.
#[derive(Clone, Debug, Default)]
pub struct EnergyPanel {
    pub open: bool,
}

/// The lowest energy and its frame (NaN frames left out).
pub fn lowest(energies_hartree: &[f64]) -> Option<(usize, f64)> {
    energies_hartree
        .iter()
        .copied()
        .enumerate()
        .filter(|(_, e)| e.is_finite())
        .min_by(|a, b| a.1.total_cmp(&b.1))
}

/// (frame, energy above the lowest in kcal/mol) for every frame that has an energy.
pub fn relative_kcal_per_mol(energies_hartree: &[f64]) -> Vec<[f64; 2]> {
    let Some((_, low)) = lowest(energies_hartree) else {
        return Vec::new();
    };
    energies_hartree
        .iter()
        .enumerate()
        .filter(|(_, e)| e.is_finite())
        .map(|(i, e)| [i as f64, (e - low) * KCAL_PER_MOL_PER_HARTREE])
        .collect()
}

/// A total energy as QM programs print it, in hartree whatever unit the orbital list uses
/// ("-382.050668 Eh").
pub fn total_energy_text(hartree: f64) -> String {
    format!("{hartree:.6} Eh")
}

/// Signed kcal/mol with two decimals, "+0.52 kcal/mol".
pub fn kcal_text(kcal_per_mol: f64) -> String {
    // The last steps of an optimisation differ by micro-hartrees: digits enough to tell them apart.
    let a = kcal_per_mol.abs();
    if a == 0.0 || a >= 0.01 {
        format!("{kcal_per_mol:+.2} kcal/mol")
    } else if a >= 1e-4 {
        format!("{kcal_per_mol:+.4} kcal/mol")
    } else {
        format!("{kcal_per_mol:+.1e} kcal/mol")
    }
}

impl AppState {
    /// The energies of the open document's frames, when it has any.
    pub fn frame_energies(&self) -> Option<&[f64]> {
        let doc = self.doc.document.as_ref()?;
        (!doc.frame_energies_hartree.is_empty()).then_some(doc.frame_energies_hartree.as_slice())
    }

    /// The frame shown's energy in words: "E = -382.050635 Eh, +0.02 kcal/mol above frame 6" (the
    /// lowest step), "…, the lowest" at that step, "E: none printed at this step" for a step
    /// without one; `None` without energies.
    pub fn frame_energy_text(&self) -> Option<String> {
        let energies = self.frame_energies()?;
        let frame = self.doc.document.as_ref()?.frame_index;
        let e = energies.get(frame).copied().filter(|e| e.is_finite());
        let Some(e) = e else {
            return Some("E: none printed at this step".into());
        };
        let (low_frame, low) = lowest(energies)?;
        if energies.iter().filter(|e| e.is_finite()).count() < 2 {
            // One energy (a single point): nothing to be lowest among.
            return Some(format!("E = {}", total_energy_text(e)));
        }
        let rel = if low_frame == frame {
            "the lowest".to_string()
        } else {
            format!(
                "{} above frame {low_frame}",
                kcal_text((e - low) * KCAL_PER_MOL_PER_HARTREE)
            )
        };
        Some(format!("E = {}, {rel}", total_energy_text(e)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_energies_start_at_the_lowest_and_skip_missing_steps() {
        let e = [-1.0, f64::NAN, -1.002, -1.001];
        assert_eq!(lowest(&e), Some((2, -1.002)));
        let r = relative_kcal_per_mol(&e);
        assert_eq!(r.len(), 3);
        assert_eq!(r[1], [2.0, 0.0]);
        assert!((r[0][1] - 0.002 * 627.5095).abs() < 1e-3, "{r:?}");
        assert!((r[2][0] - 3.0).abs() < 1e-12);
        assert!(relative_kcal_per_mol(&[f64::NAN]).is_empty());
        assert_eq!(kcal_text(0.521), "+0.52 kcal/mol");
        assert_eq!(kcal_text(0.0), "+0.00 kcal/mol");
        // 6.8e-6 Eh between an optimisation's last steps.
        assert_eq!(kcal_text(6.8e-6 * 627.5095), "+0.0043 kcal/mol");
        assert_eq!(kcal_text(2e-5), "+2.0e-5 kcal/mol");
    }
}
