//! Unit conversions: the one place where Angstrom and bohr (and energy units) meet.
//!
//! Everything in `model` stores coordinates in the unit its name carries (`positions_angstrom`,
//! `center_bohr`); conversions between them go through the functions here and nowhere else.

/// The bohr radius in Angstrom (CODATA 2010, as used by PySCF and most QM programs' Molden writers).
pub const ANGSTROM_PER_BOHR: f64 = 0.529_177_210_92;
/// Inverse of [`ANGSTROM_PER_BOHR`].
pub const BOHR_PER_ANGSTROM: f64 = 1.0 / ANGSTROM_PER_BOHR;
/// One hartree in electronvolt (CODATA 2018).
pub const EV_PER_HARTREE: f64 = 27.211_386_245_988;

/// Angstrom to bohr for a scalar.
#[inline]
pub fn bohr_from_angstrom(x_angstrom: f64) -> f64 {
    x_angstrom * BOHR_PER_ANGSTROM
}

/// Bohr to Angstrom for a scalar.
#[inline]
pub fn angstrom_from_bohr(x_bohr: f64) -> f64 {
    x_bohr * ANGSTROM_PER_BOHR
}

/// Angstrom to bohr for a point.
#[inline]
pub fn bohr_from_angstrom3(p_angstrom: [f64; 3]) -> [f64; 3] {
    p_angstrom.map(bohr_from_angstrom)
}

/// Bohr to Angstrom for a point.
#[inline]
pub fn angstrom_from_bohr3(p_bohr: [f64; 3]) -> [f64; 3] {
    p_bohr.map(angstrom_from_bohr)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_is_identity() {
        let x = 1.234_567_89;
        assert!((angstrom_from_bohr(bohr_from_angstrom(x)) - x).abs() < 1e-14);
        assert!((bohr_from_angstrom(1.0) - 1.889_726_124_6).abs() < 1e-9);
    }
}
