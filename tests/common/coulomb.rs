//! The independent reference for potentials of point charges, shared by `tests/molsurf.rs` and
//! `tests/cartoon_esp.rs`: a plain float64 Coulomb sum with the bohr of CODATA 2018 written out here
//! (not the library's unit module).

const BOHR_ANGSTROM: f64 = 0.529_177_210_903;

/// Calls `each` with the Coulomb terms (hartree/e) of `charges_e` at `positions_angstrom` at the
/// point `p_angstrom`, in the atoms' order. Plain loops: the tests' build is unoptimised, where
/// iterator adapters cost many times the arithmetic.
fn for_each_term(positions_angstrom: &[[f32; 3]], charges_e: &[f32], p_angstrom: [f64; 3], mut each: impl FnMut(f64)) {
    let n = positions_angstrom.len().min(charges_e.len());
    for a in 0..n {
        let c = positions_angstrom[a];
        let dx = p_angstrom[0] - f64::from(c[0]);
        let dy = p_angstrom[1] - f64::from(c[1]);
        let dz = p_angstrom[2] - f64::from(c[2]);
        let d2 = dx * dx + dy * dy + dz * dz;
        each(f64::from(charges_e[a]) / (d2.sqrt() / BOHR_ANGSTROM));
    }
}

/// The potential (hartree/e) of `charges_e` at `positions_angstrom` at the point `p_angstrom`.
pub fn coulomb_f64(positions_angstrom: &[[f32; 3]], charges_e: &[f32], p_angstrom: [f64; 3]) -> f64 {
    let mut sum = 0.0;
    for_each_term(positions_angstrom, charges_e, p_angstrom, |t| sum += t);
    sum
}

/// The sum of the magnitudes of the terms of [`coulomb_f64`] (hartree/e): the scale of a sum in
/// floating point where its terms cancel (near the potential's zeros).
#[allow(dead_code)] // not every test judges values near the zeros
pub fn coulomb_terms_abs_f64(positions_angstrom: &[[f32; 3]], charges_e: &[f32], p_angstrom: [f64; 3]) -> f64 {
    let mut sum = 0.0;
    for_each_term(positions_angstrom, charges_e, p_angstrom, |t| sum += t.abs());
    sum
}
