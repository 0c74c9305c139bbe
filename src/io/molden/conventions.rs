//! Writers' deviations from the Molden conventions and the orthonormality check that detects them.

use super::*;

/// One way a writer may deviate from the Molden conventions, undone on the wavefunction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Correction {
    /// Cartesian functions of l >= 2 normalised as x^l rather than individually (Psi4 <= 1.3.2).
    CartesianAsXl,
    /// Cartesian functions of l >= 2 normalised as x^a y^b z^c without the double-factorial
    /// factors (CFOUR up to 2.1): the coefficient of x^a y^b z^c is scaled by
    /// sqrt((2a-1)!! (2b-1)!! (2c-1)!!).
    CfourCartesian,
    /// Every function of a Cartesian shell of l >= 2 scaled by sqrt((2l-1)!!) (Turbomole).
    TurbomoleCartesian,
    /// NWChem's Cartesian functions of l >= 2: the coefficient of x^a y^b z^c is scaled by
    /// sqrt((2l-1)!! (2a-1)!! (2b-1)!! (2c-1)!!) / (a! b! c!) (d: xx, yy, zz by 3/2; xy, xz, yz by
    /// sqrt(3)). Found from NWChem 6.x files: def2-SVP (d) orthonormal to 3e-9 and the SCF energy of
    /// their density equal to NWChem's own; def2-TZVP (f) the same once the f coefficients the file
    /// lost are restored (see [`lost_f_coefficients`]); def2-QZVP (g) consistent, not confirmed to
    /// that precision.
    NwchemCartesian,
    /// Contraction coefficients refer to unnormalised primitives (ORCA, Psi4 < 1.0).
    UnnormalisedPrimitives,
    /// ORCA's sign convention for pure f (m = +-3), g and h (m = +-3, +-4) functions.
    OrcaSigns,
}

impl Correction {
    fn describe(self) -> &'static str {
        match self {
            Correction::CartesianAsXl => {
                "Cartesian functions of l >= 2 rescaled (the file normalises them as x^l, not individually)"
            }
            Correction::CfourCartesian => {
                "Cartesian functions of l >= 2 rescaled by sqrt((2a-1)!!(2b-1)!!(2c-1)!!) (CFOUR convention)"
            }
            Correction::TurbomoleCartesian => {
                "Cartesian functions of l >= 2 rescaled by sqrt((2l-1)!!) (Turbomole convention)"
            }
            Correction::NwchemCartesian => {
                "Cartesian functions of l >= 2 rescaled by sqrt((2l-1)!!(2a-1)!!(2b-1)!!(2c-1)!!)/(a!b!c!) (NWChem convention; d: xx by 3/2, xy by sqrt(3))"
            }
            Correction::UnnormalisedPrimitives => {
                "contraction coefficients read as coefficients of unnormalised primitives"
            }
            Correction::OrcaSigns => {
                "signs of pure f(+-3), g(+-3, +-4) and h(+-3, +-4) functions flipped (ORCA convention)"
            }
        }
    }
}

/// The conventions a program is known to use, applied from the file's evidence (its detected
/// program) before any orthonormality trial: alternatives in order of preference, the first being
/// the program's usual set (ORCA: unnormalised primitives and its signs; its signs alone where the
/// overlap shows the primitives normalised). `None`: nothing known, the Molden standard applies.
pub(super) fn known_conventions(program: Option<&str>, wf: &Wavefunction) -> Option<Vec<Vec<Correction>>> {
    use Correction::*;
    let cartesian_high = wf.basis.shells.iter().any(|s| !s.pure && s.l >= 2);
    match program {
        Some("ORCA") => Some(vec![vec![UnnormalisedPrimitives, OrcaSigns], vec![OrcaSigns]]),
        Some("CFOUR") if cartesian_high => Some(vec![vec![CfourCartesian]]),
        Some("Turbomole") if cartesian_high => Some(vec![vec![TurbomoleCartesian]]),
        Some("NWChem") if cartesian_high => Some(vec![vec![NwchemCartesian]]),
        _ => None,
    }
}

/// The corrections tried, in order, when the orbitals are not orthonormal as read.
pub(super) fn trial_corrections() -> Vec<Vec<Correction>> {
    use Correction::*;
    vec![
        vec![UnnormalisedPrimitives],
        vec![CartesianAsXl],
        vec![CfourCartesian],
        vec![TurbomoleCartesian],
        vec![CartesianAsXl, UnnormalisedPrimitives],
        vec![CfourCartesian, UnnormalisedPrimitives],
        vec![UnnormalisedPrimitives, OrcaSigns],
        vec![OrcaSigns],
    ]
}

pub(super) fn apply(wf: &mut Wavefunction, c: Correction) {
    let offsets = wf.basis.shell_offsets();
    let mut scales: Vec<(usize, f64)> = Vec::new();
    let odd_product = |p: &[u8; 3]| -> f64 {
        p.iter()
            .map(|&e| crate::model::basis::double_factorial(2 * i64::from(e) - 1))
            .product()
    };
    match c {
        Correction::CartesianAsXl | Correction::CfourCartesian | Correction::TurbomoleCartesian => {
            for (shell, &off) in wf.basis.shells.iter().zip(&offsets) {
                if shell.pure || shell.l < 2 {
                    continue;
                }
                let xl = crate::model::basis::double_factorial(2 * i64::from(shell.l) - 1);
                for (k, p) in cartesian_powers(shell.l).iter().enumerate() {
                    let ratio = match c {
                        Correction::CartesianAsXl => odd_product(p) / xl,
                        Correction::CfourCartesian => odd_product(p),
                        _ => xl,
                    };
                    scales.push((off + k, ratio.sqrt()));
                }
            }
        }
        Correction::NwchemCartesian => {
            let factorial = |e: u8| -> f64 { (1..=u32::from(e)).map(f64::from).product() };
            for (shell, &off) in wf.basis.shells.iter().zip(&offsets) {
                if shell.pure || shell.l < 2 {
                    continue;
                }
                let xl = crate::model::basis::double_factorial(2 * i64::from(shell.l) - 1);
                for (k, p) in cartesian_powers(shell.l).iter().enumerate() {
                    let factorials: f64 = p.iter().map(|&e| factorial(e)).product();
                    scales.push((off + k, (xl * odd_product(p)).sqrt() / factorials));
                }
            }
        }
        Correction::UnnormalisedPrimitives => {
            for shell in &mut wf.basis.shells {
                for (c, &e) in shell.coefficients.iter_mut().zip(&shell.exponents) {
                    let n = primitive_norm(shell.l, e);
                    if n > 0.0 {
                        *c /= n;
                    }
                }
                shell.normalize_contraction();
            }
        }
        Correction::OrcaSigns => {
            for (shell, &off) in wf.basis.shells.iter().zip(&offsets) {
                if !shell.pure {
                    continue;
                }
                // Pure order m = 0, +1, -1, +2, -2, +3, -3, +4, -4: indices 5, 6 (m = +-3), 7, 8 (m = +-4).
                let flip: &[usize] = match shell.l {
                    3 => &[5, 6],
                    4 | 5 => &[5, 6, 7, 8],
                    _ => &[],
                };
                for &k in flip {
                    scales.push((off + k, -1.0));
                }
            }
        }
    }
    for (index, factor) in scales {
        scale_function(wf, index, factor);
    }
}

pub(super) fn scale_function(wf: &mut Wavefunction, index: usize, factor: f64) {
    for set in std::iter::once(&mut wf.alpha).chain(wf.beta.as_mut()) {
        let n = set.n_basis;
        if n == 0 {
            continue;
        }
        for row in set.coefficients.chunks_mut(n) {
            if let Some(c) = row.get_mut(index) {
                *c *= factor;
            }
        }
    }
}

/// Largest deviation from orthonormality of the occupied orbitals (all orbitals when none is
/// marked occupied) of every set, under the basis overlap.
pub fn max_deviation(wf: &Wavefunction) -> f64 {
    let s = overlap_matrix(&wf.basis);
    let mut worst: f64 = 0.0;
    for set in std::iter::once(&wf.alpha).chain(wf.beta.as_ref()) {
        let mut which: Vec<usize> = (0..set.len())
            .filter(|&i| set.occupations.get(i).is_some_and(|&o| o > 0.0))
            .collect();
        if which.is_empty() {
            which = (0..set.len()).collect();
        }
        match orthonormality_deviation(set, &s, &which) {
            Some(d) => worst = worst.max(d),
            None => return f64::INFINITY,
        }
    }
    worst
}

pub(super) fn record(wf: &mut Wavefunction, cands: &[Correction], why: &str) -> Vec<String> {
    cands
        .iter()
        .map(|c| {
            wf.corrections.push(c.describe().to_string());
            format!("{why}; applied correction: {}", c.describe())
        })
        .collect()
}

/// Applies the conventions known for the file's program (from its own evidence), then checks that
/// the occupied orbitals are orthonormal under the analytic overlap. If they are not (deviation
/// above [`ORTHONORMAL_TOLERANCE`]), each candidate list of corrections is tried on the file as
/// read and the one with the smallest deviation is kept, but only if it brings the deviation below
/// the tolerance. Every correction applied is recorded in `wf.corrections`. Returns notes: the
/// corrections applied, or how far the orbitals are from orthonormal (orbitals printed with few
/// digits reach only ~1e-5; above [`PRECISION_TOLERANCE`] the orbitals are called wrong).
pub fn check_and_correct(wf: &mut Wavefunction, candidates: &[Vec<Correction>]) -> Vec<String> {
    let mut notes = Vec::new();
    let lost = lost_f_coefficients(wf);
    if let Some(n) = lost {
        notes.push(format!(
            "every orbital has the same coefficient for the Cartesian f functions xxy and xxz (the 5th and 6th \
             functions of each of the {n} f shells): the file lost the xxz coefficients (its writer wrote xxy twice); \
             orbitals with f character and the density are approximate"
        ));
    }
    if let Some(alternatives) = known_conventions(wf.program.as_deref(), wf) {
        let program = wf.program.clone().unwrap_or_default();
        let tried: Vec<(f64, &Vec<Correction>, Wavefunction)> = alternatives
            .iter()
            .map(|known| {
                let mut trial = wf.clone();
                for &c in known {
                    apply(&mut trial, c);
                }
                (max_deviation(&trial), known, trial)
            })
            .collect();
        if let Some((_, known, trial)) = tried.iter().find(|(d, _, _)| *d <= ORTHONORMAL_TOLERANCE) {
            *wf = trial.clone();
            notes.extend(record(wf, known, &format!("{program} file")));
            return notes;
        }
        if let Some((_, known, trial)) = tried.first()
            && (known.contains(&Correction::OrcaSigns) || lost.is_some())
        {
            // ORCA's signs cannot always be seen in the overlap (an atom's f(+-3) functions only
            // meet each other), and a file that lost coefficients cannot be orthonormal: the
            // program's evidence decides.
            *wf = trial.clone();
            notes.extend(record(wf, known, &format!("{program} file")));
        }
    }
    let d0 = max_deviation(wf);
    if d0 <= ORTHONORMAL_TOLERANCE {
        return notes;
    }
    let mut best: Option<(f64, &Vec<Correction>, Wavefunction)> = None;
    for cands in candidates {
        let mut trial = wf.clone();
        for &c in cands {
            apply(&mut trial, c);
        }
        let d = max_deviation(&trial);
        if d <= ORTHONORMAL_TOLERANCE && best.as_ref().is_none_or(|(bd, _, _)| d < *bd) {
            best = Some((d, cands, trial));
        }
    }
    if let Some((d, cands, trial)) = best {
        *wf = trial;
        notes.extend(record(
            wf,
            cands,
            &format!("orbitals were not orthonormal (max deviation {d0:.2e}, {d:.1e} after correction)"),
        ));
        return notes;
    }
    if d0 <= PRECISION_TOLERANCE {
        notes.push(format!(
            "the occupied orbitals are orthonormal to {d0:.1e} only (the file prints few digits)"
        ));
    } else {
        notes.push(format!(
            "the occupied orbitals are not orthonormal under the basis overlap (max deviation {d0:.2e}) and no known correction fixes it; orbitals may be wrong"
        ));
    }
    notes
}

/// The number of Cartesian f shells when every orbital of every set has the same coefficient for
/// xxy and xxz (Molden's 5th and 6th f functions) in every Cartesian f shell, not all zero: the
/// writer put one function's coefficient in both places and lost the other (NWChem 6.6 with a
/// Molden patch, molden2qmc's N4 def2-TZVP and def2-QZVP files). `None` otherwise.
pub(super) fn lost_f_coefficients(wf: &Wavefunction) -> Option<usize> {
    let offsets = wf.basis.shell_offsets();
    let f_shells: Vec<usize> = wf
        .basis
        .shells
        .iter()
        .zip(&offsets)
        .filter(|(s, _)| !s.pure && s.l == 3)
        .map(|(_, &off)| off)
        .collect();
    if f_shells.is_empty() {
        return None;
    }
    let mut any_nonzero = false;
    for set in std::iter::once(&wf.alpha).chain(wf.beta.as_ref()) {
        let n = set.n_basis;
        if n == 0 {
            continue;
        }
        for row in set.coefficients.chunks(n) {
            for &off in &f_shells {
                let (Some(&xxy), Some(&xxz)) = (row.get(off + 4), row.get(off + 5)) else {
                    return None;
                };
                if xxy != xxz {
                    return None;
                }
                any_nonzero |= xxy != 0.0;
            }
        }
    }
    any_nonzero.then_some(f_shells.len())
}

/// ORCA's conventions (Molden and Molekel files): unnormalised primitives and the signs of pure
/// f, g and h functions, then the orthonormality check. Called by the Molekel reader.
pub(crate) fn orca_conventions(wf: &mut Wavefunction) -> Vec<String> {
    wf.program = Some("ORCA".into());
    check_and_correct(wf, &trial_corrections())
}
