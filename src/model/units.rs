//! Unit conversions: the one place where Angstrom and bohr (and energy units) meet.
//!
//! Everything in `model` stores coordinates in the unit its name carries (`positions_angstrom`,
//! `center_bohr`); conversions between them go through the functions here and nowhere else.

/// The bohr radius in Angstrom (CODATA 2010, as used by PySCF and most QM programs' Molden writers).
pub const ANGSTROM_PER_BOHR: f64 = 0.529_177_210_92;
/// Inverse of [`ANGSTROM_PER_BOHR`].
pub const BOHR_PER_ANGSTROM: f64 = 1.0 / ANGSTROM_PER_BOHR;
/// Angstrom per nanometre (GROMACS files store nm, nm/ps and kJ/mol/nm).
pub const ANGSTROM_PER_NANOMETRE: f64 = 10.0;
/// One hartree in electronvolt (CODATA 2018).
pub const EV_PER_HARTREE: f64 = 27.211_386_245_988;
/// One hartree in kcal/mol: EV_PER_HARTREE eV times e N_A / 4184 J (627.5095).
pub const KCAL_PER_MOL_PER_HARTREE: f64 =
    EV_PER_HARTREE * ELEMENTARY_CHARGE_COULOMB * AVOGADRO_PER_MOLE / (1000.0 * JOULE_PER_CALORIE);
/// Elementary charge in coulomb (exact in the 2019 SI, CODATA 2018).
pub const ELEMENTARY_CHARGE_COULOMB: f64 = 1.602_176_634e-19;
/// Boltzmann constant in J/K (exact in the 2019 SI, CODATA 2018).
pub const BOLTZMANN_JOULE_PER_KELVIN: f64 = 1.380_649e-23;
/// Avogadro constant in 1/mol (exact in the 2019 SI, CODATA 2018).
pub const AVOGADRO_PER_MOLE: f64 = 6.022_140_76e23;
/// The thermochemical calorie in joule.
pub const JOULE_PER_CALORIE: f64 = 4.184;
/// AMBER prmtop charges are stored in e multiplied by this factor (the square root of AMBER's
/// Coulomb constant in kcal A/(mol e^2), as AMBER rounds it).
pub const AMBER_CHARGE_SCALE: f64 = 18.2223;
/// CHAMBER prmtop charges (CHARMM force fields) are stored in e multiplied by sqrt(332.0716), the
/// square root of CHARMM's Coulomb constant (CCELEC).
pub const CHARMM_CHARGE_SCALE: f64 = 18.222_831_832_621_406;
/// AMBER's internal time unit in picoseconds (1/20.455 ps): restart-file velocities are Angstrom per
/// this unit.
pub const PS_PER_AMBER_TIME: f64 = 1.0 / 20.455;
/// Temperature at which `kT/e` potentials are reported unless told otherwise (VMD's and APBS's default).
pub const DEFAULT_TEMPERATURE_KELVIN: f64 = 300.0;

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

/// 1 hartree/e (the atomic unit of electrostatic potential) in volt: numerically the hartree in eV.
pub const VOLT_PER_HARTREE_PER_E: f64 = EV_PER_HARTREE;

/// kT/e at `temperature_kelvin` in volt (0.025852 V at 300 K).
#[inline]
pub fn volt_per_kt_per_e(temperature_kelvin: f64) -> f64 {
    BOLTZMANN_JOULE_PER_KELVIN * temperature_kelvin / ELEMENTARY_CHARGE_COULOMB
}

/// 1 kcal/mol/e in volt (0.0433641 V): 1 kcal/mol per elementary charge, i.e. 4184 J / (N_A e).
pub const VOLT_PER_KCAL_PER_MOL_PER_E: f64 =
    1000.0 * JOULE_PER_CALORIE / (AVOGADRO_PER_MOLE * ELEMENTARY_CHARGE_COULOMB);

/// A unit for electrostatic potentials (energy per elementary charge).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PotentialUnit {
    /// Atomic units, hartree/e (what every engine computes).
    HartreePerE,
    /// kT/e at a temperature in kelvin (VMD's and APBS's unit; 300 K unless told otherwise).
    KtPerE { temperature_kelvin: f64 },
    /// kcal/mol/e.
    KcalPerMolPerE,
    /// Volt (J/C).
    Volt,
}

impl Default for PotentialUnit {
    fn default() -> Self {
        PotentialUnit::KtPerE {
            temperature_kelvin: DEFAULT_TEMPERATURE_KELVIN,
        }
    }
}

impl PotentialUnit {
    /// The value of 1 of this unit in volt.
    pub fn volt(&self) -> f64 {
        match *self {
            PotentialUnit::HartreePerE => VOLT_PER_HARTREE_PER_E,
            PotentialUnit::KtPerE { temperature_kelvin } => volt_per_kt_per_e(temperature_kelvin),
            PotentialUnit::KcalPerMolPerE => VOLT_PER_KCAL_PER_MOL_PER_E,
            PotentialUnit::Volt => 1.0,
        }
    }

    /// Multiply a potential in hartree/e by this to express it in this unit.
    pub fn per_hartree_per_e(&self) -> f64 {
        VOLT_PER_HARTREE_PER_E / self.volt()
    }

    /// The unit as written in file headers and messages ("kT/e at 300 K").
    pub fn label(&self) -> String {
        match *self {
            PotentialUnit::HartreePerE => "hartree/e".to_string(),
            PotentialUnit::KtPerE { temperature_kelvin } => format!("kT/e at {temperature_kelvin} K"),
            PotentialUnit::KcalPerMolPerE => "kcal/mol/e".to_string(),
            PotentialUnit::Volt => "V".to_string(),
        }
    }

    /// The unit of `q V` for a charge in e ("kT", "kcal/mol", "eV", "hartree").
    pub fn energy_label(&self) -> &'static str {
        match self {
            PotentialUnit::HartreePerE => "hartree",
            PotentialUnit::KtPerE { .. } => "kT",
            PotentialUnit::KcalPerMolPerE => "kcal/mol",
            PotentialUnit::Volt => "eV",
        }
    }

    /// Parses `kT/e`, `kcal/mol/e`, `V` or `hartree/e` (also `au`), case-insensitively; `kT/e` is
    /// taken at `temperature_kelvin`, which must be positive and finite.
    pub fn parse(text: &str, temperature_kelvin: f64) -> Result<PotentialUnit, String> {
        let t = text.trim().to_ascii_lowercase();
        match t.as_str() {
            "kt/e" | "kt" => {
                if !(temperature_kelvin.is_finite() && temperature_kelvin > 0.0) {
                    return Err(format!(
                        "the temperature for kT/e must be a positive number of kelvin, not {temperature_kelvin}"
                    ));
                }
                Ok(PotentialUnit::KtPerE { temperature_kelvin })
            }
            "kcal/mol/e" | "kcal/(mol*e)" | "kcal/mol" => Ok(PotentialUnit::KcalPerMolPerE),
            "v" | "volt" => Ok(PotentialUnit::Volt),
            "hartree/e" | "au" | "a.u." | "hartree" => Ok(PotentialUnit::HartreePerE),
            _ => Err(format!(
                "unknown potential unit '{text}' (expected kT/e, kcal/mol/e, V or hartree/e)"
            )),
        }
    }
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

    #[test]
    fn potential_units_match_published_values() {
        assert!((VOLT_PER_HARTREE_PER_E - 27.211_386).abs() < 1e-6);
        assert!((volt_per_kt_per_e(300.0) - 0.025_852).abs() < 1e-6);
        assert!((VOLT_PER_KCAL_PER_MOL_PER_E - 0.043_364_1).abs() < 1e-7);
        let kt = PotentialUnit::default();
        assert!((kt.per_hartree_per_e() - 27.211_386 / 0.025_852).abs() < 0.1);
        assert_eq!(PotentialUnit::parse("V", 300.0).unwrap(), PotentialUnit::Volt);
        assert!(PotentialUnit::parse("kT/e", 0.0).is_err());
        assert!(PotentialUnit::parse("mV", 300.0).is_err());
    }
}
