//! Orbital continuity along a wavefunction series: follow "this orbital" rather than "index 17".
//!
//! Each frame's SCF returns orbitals with arbitrary signs and, near crossings, in swapped order, so an
//! animation by index flickers and jumps. Here the orbital chosen in one frame is matched in the next
//! by maximum overlap `|<psi_prev | psi_next>|`, computed with the analytic basis overlap between the
//! two frames' basis sets (same shells, moved centres), and its sign is fixed so the overlap with its
//! predecessor is positive. A match is flagged ambiguous when the best overlap is weak or a second
//! orbital overlaps almost as much. Used by the viewer's orbital list and the per-frame pipeline.

use crate::model::overlap::shell_pair_overlap;
use crate::model::{BasisSet, Spin, Wavefunction};

/// Why a series cannot be tracked.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TrackingError {
    #[error("the series is empty")]
    Empty,
    #[error("frame {frame}: the wavefunction has no {spin:?} orbitals")]
    NoOrbitals { frame: usize, spin: Spin },
    #[error("orbital {index} does not exist in frame 0 ({count} orbitals)")]
    NoSuchOrbital { index: usize, count: usize },
    #[error("frame {frame} has a different basis ({found} functions, the series has {expected})")]
    BasisMismatch {
        frame: usize,
        found: usize,
        expected: usize,
    },
}

/// The tracked orbital in one frame.
#[derive(Clone, Debug, PartialEq)]
pub struct TrackStep {
    /// Orbital index (0-based) in this frame's orbital set.
    pub index: usize,
    /// +1 or -1: multiply this frame's orbital by it to continue the previous frame's phase.
    pub sign: f64,
    /// Overlap with the previous frame's tracked orbital after the sign fix (1 for frame 0).
    pub overlap: f64,
    /// Overlap of the runner-up orbital (0 for frame 0).
    pub runner_up: f64,
    /// True when the match is doubtful: best overlap below 0.5 or a runner-up within 80 % of it.
    pub ambiguous: bool,
}

/// Overlap matrix between two basis sets, `[a.n_functions()][b.n_functions()]` row-major.
pub fn cross_overlap(a: &BasisSet, b: &BasisSet) -> Vec<f64> {
    let na = a.n_functions();
    let nb = b.n_functions();
    let oa = a.shell_offsets();
    let ob = b.shell_offsets();
    let mut s = vec![0.0; na * nb];
    for (sa, &ia) in a.shells.iter().zip(&oa) {
        for (sb, &ib) in b.shells.iter().zip(&ob) {
            let block = shell_pair_overlap(sa, sb);
            let (fa, fb) = (sa.n_functions(), sb.n_functions());
            for r in 0..fa {
                for c in 0..fb {
                    if let Some(v) = block.get(r * fb + c) {
                        s[(ia + r) * nb + ib + c] = *v;
                    }
                }
            }
        }
    }
    s
}

/// Overlaps `<orbital | psi_j>` of one orbital of `prev` (coefficients `c_prev`) with every orbital
/// of `next`, through the cross overlap `s` of the two bases.
fn overlaps_with(c_prev: &[f64], s: &[f64], next: &crate::model::OrbitalSet) -> Vec<f64> {
    let nb = next.n_basis;
    let mut v = vec![0.0; nb];
    for (m, &cm) in c_prev.iter().enumerate() {
        if cm == 0.0 {
            continue;
        }
        let row = &s[m * nb..(m + 1) * nb];
        for (vn, &smn) in v.iter_mut().zip(row) {
            *vn += cm * smn;
        }
    }
    (0..next.len())
        .map(|j| {
            next.orbital(j)
                .map_or(0.0, |c| c.iter().zip(&v).map(|(a, b)| a * b).sum())
        })
        .collect()
}

/// An error when frame `frame`'s wavefunction `w` has another number of basis functions than the
/// series' first (`expected`).
fn same_basis(w: &Wavefunction, frame: usize, expected: usize) -> Result<(), TrackingError> {
    if w.basis.n_functions() == expected {
        return Ok(());
    }
    Err(TrackingError::BasisMismatch {
        frame,
        found: w.basis.n_functions(),
        expected,
    })
}

/// Follows orbital `start_index` of frame 0 through the series. The coefficients of each frame's
/// match, times its `sign`, continue the previous frame's orbital.
pub fn track<W: std::borrow::Borrow<Wavefunction>>(
    series: &[W],
    spin: Spin,
    start_index: usize,
) -> Result<Vec<TrackStep>, TrackingError> {
    let first: &Wavefunction = series.first().ok_or(TrackingError::Empty)?.borrow();
    let set0 = first
        .orbitals(spin)
        .ok_or(TrackingError::NoOrbitals { frame: 0, spin })?;
    if start_index >= set0.len() {
        return Err(TrackingError::NoSuchOrbital {
            index: start_index,
            count: set0.len(),
        });
    }
    let expected = first.basis.n_functions();
    let mut steps = vec![TrackStep {
        index: start_index,
        sign: 1.0,
        overlap: 1.0,
        runner_up: 0.0,
        ambiguous: false,
    }];
    // The tracked orbital's coefficients in the previous frame, sign included.
    let mut current: Vec<f64> = set0.orbital(start_index).map(|c| c.to_vec()).unwrap_or_default();
    for (frame, pair) in series.windows(2).enumerate() {
        let frame = frame + 1;
        let (prev, next): (&Wavefunction, &Wavefunction) = (pair[0].borrow(), pair[1].borrow());
        same_basis(next, frame, expected)?;
        let set = next.orbitals(spin).ok_or(TrackingError::NoOrbitals { frame, spin })?;
        let s = cross_overlap(&prev.basis, &next.basis);
        let o = overlaps_with(&current, &s, set);
        let mut order: Vec<usize> = (0..o.len()).collect();
        order.sort_by(|&a, &b| o[b].abs().total_cmp(&o[a].abs()).then(a.cmp(&b)));
        let Some(&best) = order.first() else {
            return Err(TrackingError::NoOrbitals { frame, spin });
        };
        let runner_up = order.get(1).map_or(0.0, |&j| o[j].abs());
        let sign = if o[best] < 0.0 { -1.0 } else { 1.0 };
        let overlap = sign * o[best];
        steps.push(TrackStep {
            index: best,
            sign,
            overlap,
            runner_up,
            ambiguous: overlap < 0.5 || runner_up > 0.8 * overlap,
        });
        current = set
            .orbital(best)
            .map(|c| c.iter().map(|x| sign * x).collect())
            .unwrap_or_default();
    }
    Ok(steps)
}

/// The phase of orbital `index` (the same index in every frame) continued through the series: each
/// frame's +1 or -1, the product of the signs of `<psi_prev | psi_next>` so far (frame 0: +1). An
/// animation by index then keeps its lobe colours where the SCF flipped an orbital's sign.
pub fn phase_signs<W: std::borrow::Borrow<Wavefunction>>(
    series: &[W],
    spin: Spin,
    index: usize,
) -> Result<Vec<f64>, TrackingError> {
    let first: &Wavefunction = series.first().ok_or(TrackingError::Empty)?.borrow();
    let expected = first.basis.n_functions();
    let mut signs = vec![1.0];
    for (frame, pair) in series.windows(2).enumerate() {
        let frame = frame + 1;
        let (prev, next): (&Wavefunction, &Wavefunction) = (pair[0].borrow(), pair[1].borrow());
        same_basis(next, frame, expected)?;
        let orbital = |w: &Wavefunction, frame: usize| -> Result<Vec<f64>, TrackingError> {
            let set = w.orbitals(spin).ok_or(TrackingError::NoOrbitals { frame, spin })?;
            set.orbital(index)
                .map(|c| c.to_vec())
                .ok_or(TrackingError::NoSuchOrbital {
                    index,
                    count: set.len(),
                })
        };
        let (a, b) = (orbital(prev, frame - 1)?, orbital(next, frame)?);
        let s = cross_overlap(&prev.basis, &next.basis);
        let nb = b.len();
        let overlap: f64 = a
            .iter()
            .enumerate()
            .map(|(m, &am)| am * s[m * nb..(m + 1) * nb].iter().zip(&b).map(|(x, y)| x * y).sum::<f64>())
            .sum();
        let last = signs.last().copied().unwrap_or(1.0);
        signs.push(if overlap < 0.0 { -last } else { last });
    }
    Ok(signs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Shell;

    fn s_shell(center: [f64; 3], alpha: f64) -> Shell {
        Shell {
            l: 0,
            pure: false,
            atom: 0,
            center_bohr: center,
            exponents: vec![alpha],
            coefficients: vec![1.0],
        }
    }

    #[test]
    fn cross_overlap_of_identical_bases_has_unit_diagonal_and_analytic_offdiagonal() {
        let a = BasisSet {
            shells: vec![s_shell([0.0; 3], 1.0), s_shell([0.0, 0.0, 1.4], 1.0)],
        };
        let s = cross_overlap(&a, &a);
        assert!((s[0] - 1.0).abs() < 1e-12 && (s[3] - 1.0).abs() < 1e-12);
        // Two normalised s Gaussians of exponent 1 a distance R apart overlap by exp(-R^2 / 2).
        assert!((s[1] - (-1.4f64 * 1.4 / 2.0).exp()).abs() < 1e-12, "{}", s[1]);
        assert!((s[1] - s[2]).abs() < 1e-15);
    }
}
