//! The independent reference for potentials of point charges, shared by `tests/molsurf.rs` and
//! `tests/cartoon_esp.rs`: a plain float64 Coulomb sum with the bohr of CODATA 2018 written out here
//! (not the library's unit module).

/// The potential (hartree/e) of `charges_e` at `positions_angstrom` at the point `p_angstrom`.
pub fn coulomb_f64(positions_angstrom: &[[f32; 3]], charges_e: &[f32], p_angstrom: [f64; 3]) -> f64 {
    const BOHR_ANGSTROM: f64 = 0.529_177_210_903;
    positions_angstrom
        .iter()
        .zip(charges_e)
        .map(|(c, &q)| {
            let d2: f64 = (0..3).map(|k| (p_angstrom[k] - f64::from(c[k])).powi(2)).sum();
            f64::from(q) / (d2.sqrt() / BOHR_ANGSTROM)
        })
        .sum()
}
