//! The independent reference for potentials of point charges, shared by `tests/molsurf.rs` and
//! `tests/cartoon_esp.rs`: a plain float64 Coulomb sum with the bohr of CODATA 2018 written out here
//! (not the library's unit module).

const BOHR_ANGSTROM: f64 = 0.529_177_210_903;

/// The Coulomb terms (hartree/e) of `charges_e` at `positions_angstrom` at the point `p_angstrom`.
fn terms<'a>(
    positions_angstrom: &'a [[f32; 3]],
    charges_e: &'a [f32],
    p_angstrom: [f64; 3],
) -> impl Iterator<Item = f64> + 'a {
    positions_angstrom.iter().zip(charges_e).map(move |(c, &q)| {
        let d2: f64 = (0..3).map(|k| (p_angstrom[k] - f64::from(c[k])).powi(2)).sum();
        f64::from(q) / (d2.sqrt() / BOHR_ANGSTROM)
    })
}

/// The potential (hartree/e) of `charges_e` at `positions_angstrom` at the point `p_angstrom`.
pub fn coulomb_f64(positions_angstrom: &[[f32; 3]], charges_e: &[f32], p_angstrom: [f64; 3]) -> f64 {
    terms(positions_angstrom, charges_e, p_angstrom).sum()
}

/// The sum of the magnitudes of the terms of [`coulomb_f64`] (hartree/e): the scale of a sum in
/// floating point where its terms cancel (near the potential's zeros).
#[allow(dead_code)] // not every test judges values near the zeros
pub fn coulomb_terms_abs_f64(positions_angstrom: &[[f32; 3]], charges_e: &[f32], p_angstrom: [f64; 3]) -> f64 {
    terms(positions_angstrom, charges_e, p_angstrom).map(f64::abs).sum()
}
