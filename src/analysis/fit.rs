//! A trajectory's frames fitted onto a reference frame ([`FrameFit`]): each frame moved rigidly so
//! that a selection's atoms (a protein's C-alpha atoms by default) lie as close as they can to the
//! same atoms of frame 0 (least squares, never a reflection: [`superpose`]), as VMD's RMSD
//! trajectory tool, ChimeraX's `align`, PyMOL's `intra_fit` and GROMACS's `trjconv -fit rot+trans`
//! do. A fitted frame has no periodic box (the box does not turn with the atoms). Used by the
//! viewer (`app::fit`) and `orbitfield convert --fit`. Also the mass-weighted radius of gyration
//! ([`radius_of_gyration`]) of the viewer's measurements, scripts and the Python `System`.

use super::qm_region::superpose;
use crate::model::select::Selection;
use crate::model::{Frame, Structure, Trajectory};

/// The selection a fit uses when none is given: a protein's C-alpha atoms, else every heavy atom.
pub const DEFAULT_FIT_SELECTION: &str = "protein and name CA";
const FALLBACK_FIT_SELECTION: &str = "not hydrogen";

/// How each frame is fitted: the selection's atoms and their positions in the reference frame.
#[derive(Clone, Debug)]
pub struct FrameFit {
    /// The selection as the user wrote it (or the default's text).
    pub selection: String,
    atoms: Vec<usize>,
    reference_angstrom: Vec<[f64; 3]>,
}

impl FrameFit {
    /// A fit onto frame 0 of `trajectory` by the atoms of `selection` (`None`: the default). An
    /// error in words when the selection does not parse, picks fewer than three atoms, or frame 0
    /// cannot be read.
    pub fn new(
        structure: &Structure,
        trajectory: &mut Trajectory,
        selection: Option<&str>,
    ) -> Result<FrameFit, String> {
        let mut reference = Frame::default();
        trajectory
            .read_frame(0, &mut reference)
            .map_err(|e| format!("fit: frame 0: {e}"))?;
        let pick = |text: &str| -> Result<Vec<usize>, String> {
            let sel = Selection::parse(text).map_err(|e| format!("fit: selection '{text}': {e}"))?;
            Ok(sel
                .indices(structure, Some(&reference))
                .into_iter()
                .map(|i| i as usize)
                .collect())
        };
        let (text, atoms) = match selection {
            Some(text) => (text.to_string(), pick(text)?),
            None => {
                let ca = pick(DEFAULT_FIT_SELECTION)?;
                if ca.len() >= 3 {
                    (DEFAULT_FIT_SELECTION.to_string(), ca)
                } else {
                    (FALLBACK_FIT_SELECTION.to_string(), pick(FALLBACK_FIT_SELECTION)?)
                }
            }
        };
        if atoms.len() < 3 {
            return Err(format!(
                "fit: '{text}' picks {} atom{}; a fit needs at least three",
                atoms.len(),
                if atoms.len() == 1 { "" } else { "s" }
            ));
        }
        let reference_angstrom = positions(&reference, &atoms).ok_or_else(|| "fit: frame 0 lacks atoms".to_string())?;
        Ok(FrameFit {
            selection: text,
            atoms,
            reference_angstrom,
        })
    }

    /// Atoms the fit uses.
    pub fn n_atoms(&self) -> usize {
        self.atoms.len()
    }

    /// Moves `frame` onto the reference by the selection's atoms and drops its periodic box;
    /// returns the selection's RMSD from the reference after the fit (Angstrom). `None` (the frame
    /// left as read) when the frame lacks the atoms or its coordinates are not finite.
    pub fn apply(&self, frame: &mut Frame) -> Option<f64> {
        let from = positions(frame, &self.atoms)?;
        let (t, rmsd) = superpose(&from, &self.reference_angstrom)?;
        for p in &mut frame.positions_angstrom {
            let q = t.apply(p.map(f64::from));
            *p = q.map(|v| v as f32);
        }
        frame.cell = None;
        Some(rmsd)
    }
}

fn positions(frame: &Frame, atoms: &[usize]) -> Option<Vec<[f64; 3]>> {
    atoms
        .iter()
        .map(|&i| frame.positions_angstrom.get(i).map(|p| p.map(f64::from)))
        .collect()
}

/// The mass-weighted radius of gyration of `positions` (`None` without mass).
pub fn radius_of_gyration(positions: &[[f64; 3]], masses_dalton: &[f64]) -> Option<f64> {
    let total: f64 = masses_dalton.iter().sum();
    if positions.len() != masses_dalton.len() || total <= 0.0 || !total.is_finite() {
        return None;
    }
    let mut centre = [0.0; 3];
    for (q, m) in positions.iter().zip(masses_dalton) {
        for k in 0..3 {
            centre[k] += m * q[k] / total;
        }
    }
    let sum: f64 = positions
        .iter()
        .zip(masses_dalton)
        .map(|(q, m)| m * (0..3).map(|k| (q[k] - centre[k]).powi(2)).sum::<f64>())
        .sum();
    Some((sum / total).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::fresh::{Mix, rotation_about, seed};
    use crate::model::{Element, Name8};

    #[test]
    fn a_frame_moved_rigidly_is_fitted_back_onto_frame_0() {
        let s0 = seed();
        let mut mix = Mix(s0);
        let n = 40;
        let mut structure = Structure::default();
        for i in 0..n {
            let name = Name8::from("C");
            let seg = Name8::from("");
            structure.push_atom(
                Element::from_symbol("C").unwrap(),
                name,
                Name8::from("LIG"),
                i as i32,
                seg,
                seg,
            );
        }
        let first: Vec<[f32; 3]> = (0..n).map(|_| mix.point(10.0)).collect();
        let axis = [0; 3].map(|_| mix.uniform(-0.5, 0.5));
        let r = rotation_about(axis, mix.uniform(0.3, 2.8));
        let shift = [mix.uniform(0.0, 30.0), -12.0, mix.uniform(0.0, 7.0)];
        let moved: Vec<[f32; 3]> = first
            .iter()
            .map(|p| {
                let p = p.map(f64::from);
                std::array::from_fn(|i| (r[i][0] * p[0] + r[i][1] * p[1] + r[i][2] * p[2] + shift[i]) as f32)
            })
            .collect();
        let frames = vec![
            Frame {
                positions_angstrom: first.clone(),
                ..Frame::default()
            },
            Frame {
                positions_angstrom: moved,
                cell: Some(crate::model::UnitCell::orthorhombic([50.0; 3])),
                ..Frame::default()
            },
        ];
        let mut traj = Trajectory::from_frames(n, frames, "test");
        // Fitted by every atom: the moved frame lands on frame 0 and loses its box.
        let fit = FrameFit::new(&structure, &mut traj, Some("all")).unwrap();
        let mut f = traj.frame(1).unwrap();
        let rmsd = fit.apply(&mut f).unwrap();
        assert!(rmsd < 1e-4, "{rmsd} ({})", s0);
        for (a, b) in f.positions_angstrom.iter().zip(&first) {
            for k in 0..3 {
                assert!((a[k] - b[k]).abs() < 1e-3, "{a:?} vs {b:?} ({})", s0);
            }
        }
        assert!(f.cell.is_none());
        // Too few atoms, or a selection that does not parse, are said in words.
        let e = FrameFit::new(&structure, &mut traj, Some("index 0 1")).unwrap_err();
        assert!(e.contains("picks 2 atoms"), "{e}");
        let e = FrameFit::new(&structure, &mut traj, Some("resname (")).unwrap_err();
        assert!(e.starts_with("fit: selection 'resname ('"), "{e}");
        // Without a protein the default takes the heavy atoms.
        let fit = FrameFit::new(&structure, &mut traj, None).unwrap();
        assert_eq!((fit.selection.as_str(), fit.n_atoms()), (FALLBACK_FIT_SELECTION, n));
    }
}
