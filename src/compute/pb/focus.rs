//! Focusing, as APBS's `mg-auto` does it: a coarse lattice holding the molecule with a generous
//! margin is solved with the usual boundary values (`sdh`/`mdh`), then one or more finer lattices
//! inside it, each taking its face values from the previous (coarser) solution by trilinear
//! interpolation (APBS `bcfl focus`, `focusFillBound` in `src/mg/vpmg.c`).
//!
//! Owns [`focus_lattices`] (where the lattices go, [`FocusSpec`]), [`focus_levels`] (the chain of lattices from a coarse to a fine one, APBS's
//! `NOsh_setupCalcMGAUTO`), [`focus_boundary`] (a finer lattice's face values from a coarser
//! solution), [`check_inside`] (the one check every level makes) and [`FocusStep`] (what a solver
//! reports after each level). The chain itself runs in `PbSolver::solve_focused` (the engine's
//! solver); the maps of a focused lattice are `compute::cpu::pb_maps::coefficients_with_boundary`'s.
//!
//! What APBS does with charges outside a focused lattice, and so do we: on a focused lattice each
//! charge adds its weights (trilinear or `spl2`) at the interior points only; a charge outside the
//! lattice adds nothing, its field arrives through the face values interpolated from the coarser
//! solution, which held it (APBS's `fillcoChargeSpline1`/`2` skip such atoms silently under
//! `bcfl focus` instead of warning). Only the coarsest lattice must hold every charge. The
//! dielectric and ion maps use every atom (see `docs/pb.md` for where APBS differs).
//! All lengths in Angstrom.

use super::{PbError, PbLattice, PbSolution};

/// The least factor by which one focusing level reduces the spacing of the previous one (APBS's
/// `VREDFRAC`): a coarse-to-fine ratio below it takes intermediate levels.
pub const REDUCTION_PER_LEVEL: f64 = 0.25;

/// How far (Angstrom) a finer lattice may stick out of a coarser one and still count as inside
/// (rounding of the corners; its faces are then read at the coarser lattice's edge).
pub const EDGE_TOLERANCE_ANGSTROM: f64 = 1e-6;

/// What a solver reports after each level of a focused solve.
#[derive(Clone, Debug, PartialEq)]
pub struct FocusStep {
    /// 0 for the coarsest lattice.
    pub level: usize,
    /// How many levels the chain has.
    pub levels: usize,
    pub lattice: PbLattice,
    /// Conjugate-gradient iterations of this level's solve.
    pub iterations: usize,
    pub relative_residual: f64,
    /// Wall time of this level (maps, boundary and solve), seconds.
    pub seconds: f64,
}

fn bad(msg: String) -> PbError {
    PbError::BadInput(msg)
}

fn upper(l: &PbLattice) -> [f64; 3] {
    std::array::from_fn(|k| l.origin_angstrom[k] + l.spacing_angstrom * (l.dims[k].max(1) - 1) as f64)
}

fn centre(l: &PbLattice) -> [f64; 3] {
    let hi = upper(l);
    std::array::from_fn(|k| 0.5 * (l.origin_angstrom[k] + hi[k]))
}

fn check_lattice(what: &str, l: &PbLattice) -> Result<(), PbError> {
    let placed =
        l.spacing_angstrom.is_finite() && l.spacing_angstrom > 0.0 && l.origin_angstrom.iter().all(|c| c.is_finite());
    if !placed || l.dims.iter().any(|&d| d < 5) {
        return Err(bad(format!(
            "{what} lattice: spacing {} A, origin {:?} A, {:?} points (a positive spacing and at least 5 points per axis expected)",
            l.spacing_angstrom, l.origin_angstrom, l.dims
        )));
    }
    Ok(())
}

/// Refuses an `inner` lattice that is not inside `outer` (within [`EDGE_TOLERANCE_ANGSTROM`]),
/// naming the axis, the side and both extents.
pub fn check_inside(outer: &PbLattice, inner: &PbLattice) -> Result<(), PbError> {
    let (olo, ohi) = (outer.origin_angstrom, upper(outer));
    let (ilo, ihi) = (inner.origin_angstrom, upper(inner));
    for k in 0..3 {
        let axis = ["x", "y", "z"][k];
        let (below, above) = (olo[k] - ilo[k], ihi[k] - ohi[k]);
        if below > EDGE_TOLERANCE_ANGSTROM || above > EDGE_TOLERANCE_ANGSTROM {
            return Err(bad(format!(
                "the fine lattice is not inside the coarse one: along {axis} it spans {:.3} .. {:.3} A, the coarse lattice {:.3} .. {:.3} A ({:.3} A out on the {} side); move or shrink the fine lattice or enlarge the coarse one",
                ilo[k],
                ihi[k],
                olo[k],
                ohi[k],
                below.max(above),
                if below > above { "low" } else { "high" }
            )));
        }
    }
    Ok(())
}

/// The lattices of a focused solve from `coarse` to `fine`, as APBS's `mg-auto` chooses them
/// (`NOsh_setupCalcMGAUTO`): two levels when the fine spacing is at least
/// [`REDUCTION_PER_LEVEL`] of the coarse one, else `ceil(ln(h_f / h_c) / ln(1/4)) + 1`, the spacing
/// reduced by the same factor at each level. An intermediate level has the fine lattice's point
/// counts (APBS: the same `dime` on every level), is centred on the fine lattice's centre and then
/// moved back inside the previous level where it sticks out. Errors name the level that does not
/// fit.
pub fn focus_levels(coarse: &PbLattice, fine: &PbLattice) -> Result<Vec<PbLattice>, PbError> {
    check_lattice("coarse", coarse)?;
    check_lattice("fine", fine)?;
    check_inside(coarse, fine)?;
    let ratio = fine.spacing_angstrom / coarse.spacing_angstrom;
    let levels = if ratio < REDUCTION_PER_LEVEL {
        (ratio.ln() / REDUCTION_PER_LEVEL.ln()).ceil() as usize + 1
    } else {
        2
    };
    if levels > 12 {
        return Err(bad(format!(
            "focusing from {} A to {} A would take {levels} levels: give a coarser fine spacing or a finer coarse one",
            coarse.spacing_angstrom, fine.spacing_angstrom
        )));
    }
    let reduction = ratio.powf(1.0 / (levels - 1) as f64);
    let mut chain = vec![*coarse];
    let fine_centre = centre(fine);
    for level in 1..levels - 1 {
        let Some(prev) = chain.last().copied() else { break };
        let h = prev.spacing_angstrom * reduction;
        let mut lat = PbLattice::centered(fine_centre, h, fine.dims);
        let (plo, phi) = (prev.origin_angstrom, upper(&prev));
        for k in 0..3 {
            let len = h * (fine.dims[k] - 1) as f64;
            if len > phi[k] - plo[k] + EDGE_TOLERANCE_ANGSTROM {
                return Err(bad(format!(
                    "focusing level {level} ({:?} points at {h:.4} A) is longer along {} ({len:.2} A) than the level before it ({:.2} A): give the coarse lattice more points or a longer side",
                    fine.dims,
                    ["x", "y", "z"][k],
                    phi[k] - plo[k]
                )));
            }
            // APBS: move a level that falls off the previous one back onto it.
            let lo = lat.origin_angstrom[k];
            if plo[k] - lo > 0.0 {
                lat.origin_angstrom[k] = plo[k];
            } else if lo + len - phi[k] > 0.0 {
                lat.origin_angstrom[k] = phi[k] - len;
            }
        }
        chain.push(lat);
    }
    if let Some(prev) = chain.last() {
        check_inside(prev, fine).map_err(|e| {
            bad(format!(
                "the fine lattice falls off the intermediate focusing lattice {}: {e}",
                chain.len() - 1
            ))
        })?;
    }
    chain.push(*fine);
    Ok(chain)
}

/// The face values of `fine` from the coarser solution `coarse` by trilinear interpolation (APBS
/// `focusFillBound`), one value per lattice point of `fine`, zero inside; an error when `fine` is
/// not inside `coarse`'s lattice.
pub fn focus_boundary(coarse: &PbSolution, fine: &PbLattice) -> Result<Vec<f64>, PbError> {
    let c = &coarse.lattice;
    check_lattice("coarse", c)?;
    check_lattice("fine", fine)?;
    check_inside(c, fine)?;
    if coarse.potential_kt_per_e.len() != c.n_points() {
        return Err(bad(format!(
            "the coarse solution has {} values for {:?} points",
            coarse.potential_kt_per_e.len(),
            c.dims
        )));
    }
    let [nx, ny, nz] = fine.dims;
    let mut out = vec![0.0; fine.n_points()];
    let hi = upper(c);
    let mut missing = None;
    for k in 0..nz {
        for j in 0..ny {
            for i in 0..nx {
                if !(i == 0 || j == 0 || k == 0 || i + 1 == nx || j + 1 == ny || k + 1 == nz) {
                    continue;
                }
                // Points within the tolerance outside are read at the coarse lattice's edge.
                let p = fine.point(i, j, k);
                let q: [f64; 3] = std::array::from_fn(|a| p[a].clamp(c.origin_angstrom[a], hi[a]));
                match (coarse.at(q), out.get_mut(i + nx * (j + ny * k))) {
                    (Some(v), Some(dst)) => *dst = v,
                    _ => missing = Some(p),
                }
            }
        }
    }
    match missing {
        Some(p) => Err(bad(format!(
            "fine lattice point {p:?} A has no value on the coarse lattice"
        ))),
        None => Ok(out),
    }
}

/// psize.py's (APBS's lattice sizing script) coarse factor: by default the coarse lattice is this
/// many times the atoms' extent along each axis.
pub const COARSE_FACTOR: f64 = 1.7;

/// Where a focused solve's lattices go (`grid pb --focus`), in the spirit of APBS's `mg-auto`
/// keywords (`fglen`/`fgcent`, `cglen`/`cgcent`, `dime`). Lengths and positions in Angstrom.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct FocusSpec {
    /// The fine lattice's spacing.
    pub fine_spacing_angstrom: f64,
    /// The fine lattice's centre (APBS `fgcent`); default: the centre of the fine atoms' box.
    pub fine_center_angstrom: Option<[f64; 3]>,
    /// The fine lattice's side lengths (APBS `fglen`); default: the fine atoms' extent plus twice
    /// `padding_angstrom`. Rounded up to whole multigrid point counts.
    pub fine_length_angstrom: Option<[f64; 3]>,
    /// Padding around the fine atoms (and the least around all atoms on the coarse lattice).
    pub padding_angstrom: f64,
    /// The coarse lattice's centre (APBS `cgcent`); default: the centre of all atoms' box.
    pub coarse_center_angstrom: Option<[f64; 3]>,
    /// The coarse lattice's side lengths (APBS `cglen`); default: the larger of [`COARSE_FACTOR`]
    /// times the atoms' extent and the extent plus twice the padding, and at least what holds the
    /// fine lattice.
    pub coarse_length_angstrom: Option<[f64; 3]>,
    /// The coarse lattice's spacing; default: the fine lattice's point counts over the coarse
    /// lengths (APBS: the same `dime` on every level).
    pub coarse_spacing_angstrom: Option<f64>,
}

fn bounding_box(positions: &[[f64; 3]]) -> Option<([f64; 3], [f64; 3])> {
    let first = positions.first()?;
    Some(positions.iter().fold((*first, *first), |(lo, hi), p| {
        (
            std::array::from_fn(|k| lo[k].min(p[k])),
            std::array::from_fn(|k| hi[k].max(p[k])),
        )
    }))
}

/// The chain of lattices (coarsest first, [`focus_levels`]) that `spec` places around `all` (every
/// atom; the coarse lattice holds them) and `fine_atoms` (the atoms the fine lattice is placed
/// around when `spec` gives no fine centre or length, e.g. a selection; all atoms when empty).
pub fn focus_lattices(all: &[[f64; 3]], fine_atoms: &[[f64; 3]], spec: &FocusSpec) -> Result<Vec<PbLattice>, PbError> {
    let positive = |v: f64| v.is_finite() && v > 0.0;
    let h = spec.fine_spacing_angstrom;
    if !positive(h) {
        return Err(bad(format!("fine spacing {h} A: a positive number expected")));
    }
    if !(spec.padding_angstrom.is_finite() && spec.padding_angstrom >= 0.0) {
        return Err(bad(format!("padding {} A: >= 0 expected", spec.padding_angstrom)));
    }
    for (what, v) in [
        ("fine length", spec.fine_length_angstrom),
        ("coarse length", spec.coarse_length_angstrom),
    ] {
        if let Some(l) = v
            && !l.iter().all(|&x| positive(x))
        {
            return Err(bad(format!("{what} {l:?} A: positive lengths expected")));
        }
    }
    for (what, v) in [
        ("fine centre", spec.fine_center_angstrom),
        ("coarse centre", spec.coarse_center_angstrom),
    ] {
        if let Some(c) = v
            && !c.iter().all(|x| x.is_finite())
        {
            return Err(bad(format!("{what} {c:?} A: finite coordinates expected")));
        }
    }
    if let Some(hc) = spec.coarse_spacing_angstrom
        && !positive(hc)
    {
        return Err(bad(format!("coarse spacing {hc} A: a positive number expected")));
    }
    let Some((lo, hi)) = bounding_box(all) else {
        return Err(bad("no atoms".to_string()));
    };
    if !lo.iter().chain(&hi).all(|x| x.is_finite()) {
        return Err(bad("atom positions must be finite".to_string()));
    }
    let (flo, fhi) = bounding_box(fine_atoms).unwrap_or((lo, hi));
    let pad = spec.padding_angstrom;
    let fine_centre = spec
        .fine_center_angstrom
        .unwrap_or_else(|| std::array::from_fn(|k| 0.5 * (flo[k] + fhi[k])));
    let fine_len = spec
        .fine_length_angstrom
        .unwrap_or_else(|| std::array::from_fn(|k| fhi[k] - flo[k] + 2.0 * pad));
    let fine_dims: [usize; 3] =
        std::array::from_fn(|k| super::setup::multigrid_points((fine_len[k] / h).ceil().clamp(4.0, 1e7) as usize + 1));
    let fine = PbLattice::centered(fine_centre, h, fine_dims);
    let coarse_centre = spec
        .coarse_center_angstrom
        .unwrap_or_else(|| std::array::from_fn(|k| 0.5 * (lo[k] + hi[k])));
    let coarse_len = spec.coarse_length_angstrom.unwrap_or_else(|| {
        std::array::from_fn(|k| {
            let extent = hi[k] - lo[k];
            let holds_fine = 2.0 * (fine_centre[k] - coarse_centre[k]).abs() + h * (fine_dims[k] - 1) as f64;
            (COARSE_FACTOR * extent).max(extent + 2.0 * pad).max(holds_fine)
        })
    });
    let coarse = match spec.coarse_spacing_angstrom {
        Some(hc) => PbLattice::centered(
            coarse_centre,
            hc,
            std::array::from_fn(|k| {
                super::setup::multigrid_points((coarse_len[k] / hc).ceil().clamp(4.0, 1e7) as usize + 1)
            }),
        ),
        None => {
            let hc = (0..3)
                .map(|k| coarse_len[k] / (fine_dims[k] - 1) as f64)
                .fold(0.0, f64::max);
            PbLattice::centered(coarse_centre, hc, fine_dims)
        }
    };
    focus_levels(&coarse, &fine)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]
    use super::*;

    fn lat(origin: [f64; 3], h: f64, n: usize) -> PbLattice {
        PbLattice {
            origin_angstrom: origin,
            spacing_angstrom: h,
            dims: [n; 3],
        }
    }

    #[test]
    fn levels_follow_apbs_reduction_and_stay_inside() {
        // 2 A to 0.5 A: exactly 1/4, two levels.
        let coarse = lat([-64.0; 3], 2.0, 65);
        let fine = PbLattice::centered([5.0, 0.0, 0.0], 0.5, [65; 3]);
        assert_eq!(focus_levels(&coarse, &fine).unwrap().len(), 2);
        // 2 A to 0.25 A: ratio 1/8, ceil(1.5) + 1 = 3 levels, 2 -> 0.707 -> 0.25 A.
        let fine = PbLattice::centered([30.0, 0.0, 0.0], 0.25, [65; 3]);
        let chain = focus_levels(&coarse, &fine).unwrap();
        assert_eq!(chain.len(), 3);
        assert!((chain[1].spacing_angstrom - 2.0 * 0.125f64.sqrt()).abs() < 1e-12);
        for w in chain.windows(2) {
            check_inside(&w[0], &w[1]).unwrap();
        }
        // Near the coarse edge the intermediate level moves back inside.
        let fine = PbLattice::centered([55.0, 0.0, 0.0], 0.25, [65; 3]);
        let chain = focus_levels(&coarse, &fine).unwrap();
        assert!((upper(&chain[1])[0] - 64.0).abs() < 1e-9);
    }

    #[test]
    fn a_fine_lattice_sticking_out_is_refused_naming_the_axis() {
        let coarse = lat([-10.0; 3], 1.0, 21);
        let fine = PbLattice::centered([0.0, 0.0, 9.0], 0.5, [9; 3]);
        let e = focus_levels(&coarse, &fine).unwrap_err().to_string();
        assert!(e.contains("along z") && e.contains("high side"), "{e}");
    }

    #[test]
    fn faces_interpolate_a_linear_field_exactly() {
        let coarse_l = lat([-10.0; 3], 1.0, 21);
        let f = |p: [f64; 3]| 0.3 * p[0] - 0.2 * p[1] + 0.1 * p[2] + 1.0;
        let [nx, ny, nz] = coarse_l.dims;
        let mut u = vec![0.0; coarse_l.n_points()];
        for k in 0..nz {
            for j in 0..ny {
                for i in 0..nx {
                    u[i + nx * (j + ny * k)] = f(coarse_l.point(i, j, k));
                }
            }
        }
        let coarse = PbSolution {
            lattice: coarse_l,
            potential_kt_per_e: u,
            iterations: 0,
            relative_residual: 0.0,
        };
        // The fine lattice reaches the coarse one's faces exactly.
        let fine = PbLattice::centered([0.0, 0.3, -0.1], 0.37, [9, 11, 13]);
        let fine = PbLattice {
            origin_angstrom: [-10.0, fine.origin_angstrom[1], fine.origin_angstrom[2]],
            ..fine
        };
        let b = focus_boundary(&coarse, &fine).unwrap();
        let [nx, ny, nz] = fine.dims;
        for k in 0..nz {
            for j in 0..ny {
                for i in 0..nx {
                    let v = b[i + nx * (j + ny * k)];
                    let face = i == 0 || j == 0 || k == 0 || i + 1 == nx || j + 1 == ny || k + 1 == nz;
                    if face {
                        assert!((v - f(fine.point(i, j, k))).abs() < 1e-12);
                    } else {
                        assert_eq!(v, 0.0);
                    }
                }
            }
        }
    }

    #[test]
    fn default_lattices_hold_the_atoms_and_the_fine_box_the_selection() {
        let all = [[0.0, 0.0, 0.0], [40.0, 10.0, 5.0]];
        let spec = FocusSpec {
            fine_spacing_angstrom: 0.5,
            padding_angstrom: 10.0,
            ..FocusSpec::default()
        };
        let chain = focus_lattices(&all, &all[1..], &spec).unwrap();
        let (coarse, fine) = (chain[0], chain[chain.len() - 1]);
        assert_eq!(fine.spacing_angstrom, 0.5);
        // The fine box: 20 A around the selected atom, 41 points rounded up to 41.
        assert_eq!(fine.dims, [41; 3]);
        assert!((centre(&fine)[0] - 40.0).abs() < 1e-9);
        // The coarse box: 1.7 x 40 A along x, the fine point counts (APBS dime).
        assert_eq!(coarse.dims, [41; 3]);
        assert!(coarse.spacing_angstrom * 40.0 >= 68.0 - 1e-9);
        check_inside(&coarse, &fine).unwrap();
        // A given coarse box the fine one does not fit in.
        let spec = FocusSpec {
            coarse_length_angstrom: Some([30.0; 3]),
            ..spec
        };
        let e = focus_lattices(&all, &all[1..], &spec).unwrap_err().to_string();
        assert!(e.contains("not inside the coarse"), "{e}");
    }
}
