//! Screened Coulomb models: the potential of point charges in a medium instead of in vacuum.
//!
//! Owns [`Dielectric`] (vacuum `q/r`; distance-dependent dielectric `eps(r) = s r` with r in
//! Angstrom, `q / (s r_A r)`, the ChimeraX `coulombic` and old AMBER/CHARMM model, s = 4 by default;
//! Debye-Hueckel screening of point charges in an electrolyte, `q exp(-kappa r) / (eps_out r)`, with
//! the inverse Debye length kappa from the solvent dielectric, the ionic strength and the
//! temperature), the pair kernel of each model ([`Dielectric::kernel_bohr`]), the smoothed cutoff
//! form of the cutoff method ([`ScreenedCutoff`]), the compact parameters the CUDA and WGSL kernels
//! read ([`ScreenGpu`]), and [`ScreenedCharges`] with [`field_input_screened`], which turns charges,
//! a method and a model into the engines' [`FieldInput`]. Called by the CLI (`grid esp`, `surface
//! --color-by esp`), by `analysis::vertex_values`, and by the CPU and CUDA engines.
//!
//! A screened model's medium stands for the solvent: [`solute_charges`] leaves a structure's explicit
//! water and electrolyte ions out of the sum, as the Poisson-Boltzmann solute does.
//!
//! Methods per model: vacuum takes every method (direct, cutoff, multilevel summation). The screened
//! models take direct summation and the cutoff method; multilevel summation splits `1/r` only and
//! is refused for them with a message saying so. Periodic boundaries are vacuum-only.
//!
//! Cutoff form (as the vacuum cutoff of [`super::kernel::smooth`]): below the cutoff a the kernel
//! k(r) less its second-order Taylor polynomial in u = r^2 about u = a^2, so the term and its first
//! two derivatives vanish at a (for vacuum this is exactly `1/r - g_a(r)`). Units: bohr inside,
//! hartree/e out; the distance-dependent slope is per Angstrom, as users give it.

use super::{Boundary, EspMethod};
use crate::compute::{ComputeError, FieldInput, PointCharges};
use crate::model::units::{
    ANGSTROM_PER_BOHR, AVOGADRO_PER_MOLE, BOLTZMANN_JOULE_PER_KELVIN, ELEMENTARY_CHARGE_COULOMB,
};
use std::sync::Arc;

/// Vacuum permittivity in F/m (CODATA 2018).
pub const VACUUM_PERMITTIVITY_F_PER_M: f64 = 8.854_187_812_8e-12;
/// Default slope of the distance-dependent dielectric (eps = 4r, r in Angstrom).
pub const DEFAULT_SLOPE_PER_ANGSTROM: f64 = 4.0;
/// Default solvent dielectric of the Debye-Hueckel model (water at 298.15 K, as APBS's examples).
pub const DEFAULT_EPS_OUT: f64 = 78.54;
/// Default ionic strength of the Debye-Hueckel model (mol/L).
pub const DEFAULT_IONIC_STRENGTH_MOLAR: f64 = 0.15;
/// Default temperature of the Debye-Hueckel model (K).
pub const DEFAULT_SCREENING_TEMPERATURE_KELVIN: f64 = 298.15;

/// The medium the charges sit in.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub enum Dielectric {
    /// `q / r`: dielectric 1, no ions.
    #[default]
    Vacuum,
    /// `q / (eps(r) r)` with `eps(r) = slope * r`, r in Angstrom.
    DistanceDependent { slope_per_angstrom: f64 },
    /// `q exp(-kappa r) / (eps_out r)`, kappa from the Debye-Hueckel theory of a 1:1 electrolyte.
    DebyeHuckel {
        eps_out: f64,
        ionic_strength_molar: f64,
        temperature_kelvin: f64,
    },
}

/// The inverse Debye length (1/Angstrom) of an electrolyte of ionic strength `ionic_strength_molar`
/// (mol/L) in a solvent of dielectric `eps_out` at `temperature_kelvin`:
/// `kappa^2 = 2 I N_A 1000 e^2 / (eps0 eps_out k_B T)`.
pub fn kappa_per_angstrom(eps_out: f64, ionic_strength_molar: f64, temperature_kelvin: f64) -> f64 {
    let e = ELEMENTARY_CHARGE_COULOMB;
    let k2_per_m2 = 2.0 * ionic_strength_molar * 1000.0 * AVOGADRO_PER_MOLE * e * e
        / (VACUUM_PERMITTIVITY_F_PER_M * eps_out * BOLTZMANN_JOULE_PER_KELVIN * temperature_kelvin);
    k2_per_m2.sqrt() * 1e-10
}

fn bad(msg: String) -> ComputeError {
    ComputeError::BadInput(msg)
}

impl Dielectric {
    /// The Debye-Hueckel model with its defaults (0.15 M, eps 78.54, 298.15 K).
    pub fn debye_default() -> Dielectric {
        Dielectric::DebyeHuckel {
            eps_out: DEFAULT_EPS_OUT,
            ionic_strength_molar: DEFAULT_IONIC_STRENGTH_MOLAR,
            temperature_kelvin: DEFAULT_SCREENING_TEMPERATURE_KELVIN,
        }
    }

    /// True for [`Dielectric::Vacuum`].
    pub fn is_vacuum(&self) -> bool {
        matches!(self, Dielectric::Vacuum)
    }

    /// Checks the parameters; the error names the offending value.
    pub fn check(&self) -> Result<(), ComputeError> {
        match *self {
            Dielectric::Vacuum => Ok(()),
            Dielectric::DistanceDependent { slope_per_angstrom: s } => {
                if s.is_finite() && s > 0.0 {
                    Ok(())
                } else {
                    Err(bad(format!(
                        "distance-dependent dielectric slope {s} per Angstrom: it must be positive and finite"
                    )))
                }
            }
            Dielectric::DebyeHuckel {
                eps_out,
                ionic_strength_molar,
                temperature_kelvin,
            } => {
                if !(eps_out.is_finite() && eps_out >= 1.0) {
                    return Err(bad(format!(
                        "solvent dielectric eps_out = {eps_out}: it must be finite and >= 1"
                    )));
                }
                if !(ionic_strength_molar.is_finite() && (0.0..=10.0).contains(&ionic_strength_molar)) {
                    return Err(bad(format!(
                        "ionic strength {ionic_strength_molar} M: it must lie between 0 and 10 M"
                    )));
                }
                if !(temperature_kelvin.is_finite() && temperature_kelvin > 0.0) {
                    return Err(bad(format!(
                        "temperature {temperature_kelvin} K: it must be positive and finite"
                    )));
                }
                Ok(())
            }
        }
    }

    /// Inverse Debye length in 1/bohr (0 for the unscreened models).
    pub fn kappa_per_bohr(&self) -> f64 {
        match *self {
            Dielectric::DebyeHuckel {
                eps_out,
                ionic_strength_molar,
                temperature_kelvin,
            } => kappa_per_angstrom(eps_out, ionic_strength_molar, temperature_kelvin) * ANGSTROM_PER_BOHR,
            _ => 0.0,
        }
    }

    /// The potential (hartree/e) of a unit charge at distance `r_bohr`.
    pub fn kernel_bohr(&self, r_bohr: f64) -> f64 {
        match *self {
            Dielectric::Vacuum => 1.0 / r_bohr,
            Dielectric::DistanceDependent { slope_per_angstrom } => {
                1.0 / (slope_per_angstrom * ANGSTROM_PER_BOHR * r_bohr * r_bohr)
            }
            Dielectric::DebyeHuckel { eps_out, .. } => (-self.kappa_per_bohr() * r_bohr).exp() / (eps_out * r_bohr),
        }
    }

    /// The kernel and its first two derivatives with respect to u = r^2, at `r_bohr`.
    fn kernel_u_derivatives(&self, r: f64) -> [f64; 3] {
        let u = r * r;
        match *self {
            Dielectric::Vacuum => [1.0 / r, -0.5 / (u * r), 0.75 / (u * u * r)],
            Dielectric::DistanceDependent { slope_per_angstrom } => {
                let c = slope_per_angstrom * ANGSTROM_PER_BOHR;
                [1.0 / (c * u), -1.0 / (c * u * u), 2.0 / (c * u * u * u)]
            }
            Dielectric::DebyeHuckel { eps_out, .. } => {
                let kappa = self.kappa_per_bohr();
                let e = (-kappa * r).exp() / eps_out;
                let k = e / r;
                let k_r = -e * (kappa * r + 1.0) / u;
                let k_rr = e * (kappa * kappa * u + 2.0 * kappa * r + 2.0) / (u * r);
                // d/du = (1/2r) d/dr; d2/du2 = (k_rr - k_r / r) / (4 r^2).
                [k, k_r / (2.0 * r), (k_rr - k_r / r) / (4.0 * u)]
            }
        }
    }

    /// A short label for headers and legends ("eps = 4r", "Debye-Hueckel, 0.15 M, eps 78.54, 298.15 K").
    pub fn label(&self) -> String {
        match *self {
            Dielectric::Vacuum => "vacuum".to_string(),
            Dielectric::DistanceDependent { slope_per_angstrom } => format!("eps = {slope_per_angstrom}r"),
            Dielectric::DebyeHuckel {
                eps_out,
                ionic_strength_molar,
                temperature_kelvin,
            } => format!(
                "Debye-Hueckel, {ionic_strength_molar} M, eps {eps_out}, {temperature_kelvin} K (Debye length {:.2} A)",
                1.0 / kappa_per_angstrom(eps_out, ionic_strength_molar, temperature_kelvin).max(1e-300)
            ),
        }
    }

    /// The compact form the device kernels read.
    pub fn gpu(&self) -> ScreenGpu {
        match *self {
            Dielectric::Vacuum => ScreenGpu {
                model: 0,
                a: 1.0,
                b: 0.0,
            },
            Dielectric::DistanceDependent { slope_per_angstrom } => ScreenGpu {
                model: 1,
                a: 1.0 / (slope_per_angstrom * ANGSTROM_PER_BOHR),
                b: 0.0,
            },
            Dielectric::DebyeHuckel { eps_out, .. } => ScreenGpu {
                model: 2,
                a: 1.0 / eps_out,
                b: self.kappa_per_bohr(),
            },
        }
    }
}

impl Dielectric {
    /// [`Dielectric::gpu`] for kernels that measure r in Angstrom and scale their sum by
    /// `ANGSTROM_PER_BOHR` into hartree/e (the render device's vertex pass): model 1's `a` times
    /// `ANGSTROM_PER_BOHR`, model 2's `b` in 1/Angstrom.
    pub fn gpu_angstrom(&self) -> ScreenGpu {
        let g = self.gpu();
        match g.model {
            1 => ScreenGpu {
                a: g.a * ANGSTROM_PER_BOHR,
                ..g
            },
            2 => ScreenGpu {
                b: g.b / ANGSTROM_PER_BOHR,
                ..g
            },
            _ => g,
        }
    }
}

/// A model as the device kernels read it (lengths in bohr): `model` 0 vacuum (`q/r`), 1
/// distance-dependent (`q a / r^2`), 2 Debye-Hueckel (`q a exp(-b r) / r`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScreenGpu {
    pub model: u32,
    pub a: f64,
    pub b: f64,
}

/// The smoothed cutoff form of a model: `k(r) - (c0 + c1 r^2 + c2 r^4)` below the cutoff, zero
/// beyond (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScreenedCutoff {
    pub dielectric: Dielectric,
    pub cutoff_bohr: f64,
    pub c: [f64; 3],
}

impl ScreenedCutoff {
    pub fn new(dielectric: Dielectric, cutoff_bohr: f64) -> ScreenedCutoff {
        let big_a = cutoff_bohr * cutoff_bohr;
        let [k0, k1, k2] = dielectric.kernel_u_derivatives(cutoff_bohr);
        ScreenedCutoff {
            dielectric,
            cutoff_bohr,
            c: [k0 - k1 * big_a + 0.5 * k2 * big_a * big_a, k1 - k2 * big_a, 0.5 * k2],
        }
    }

    /// The smoothed term of a unit charge at squared distance `r2_bohr2`.
    #[inline]
    pub fn term_r2(&self, r2_bohr2: f64) -> f64 {
        if r2_bohr2 >= self.cutoff_bohr * self.cutoff_bohr {
            return 0.0;
        }
        let [c0, c1, c2] = self.c;
        self.dielectric.kernel_bohr(r2_bohr2.sqrt()) - (c0 + r2_bohr2 * (c1 + r2_bohr2 * c2))
    }
}

/// Point charges with the medium they sit in: the engines' input for a screened direct sum.
#[derive(Clone, Debug, PartialEq)]
pub struct ScreenedCharges {
    pub charges: Arc<PointCharges>,
    pub dielectric: Dielectric,
}

/// The engine input for the potential of `charges` in `dielectric` by `method`: vacuum goes to
/// [`super::field_input`] unchanged; a screened model with direct summation becomes
/// [`FieldInput::ScreenedCharges`], with the cutoff method a cutoff plan carrying the model. A
/// screened model with multilevel summation or a periodic boundary is refused with a message.
pub fn field_input_screened(
    charges: Arc<PointCharges>,
    method: EspMethod,
    boundary: Boundary,
    dielectric: Dielectric,
    lattice: &crate::model::Lattice,
) -> Result<FieldInput, ComputeError> {
    if dielectric.is_vacuum() {
        return super::field_input(charges, method, boundary, lattice);
    }
    check_screened(method, boundary, dielectric)?;
    match method {
        EspMethod::Direct => {
            check_charges(&charges)?;
            Ok(FieldInput::ScreenedCharges(Arc::new(ScreenedCharges {
                charges,
                dielectric,
            })))
        }
        _ => {
            let plan = super::EspPlan::build(charges, method, boundary, lattice)?.with_dielectric(dielectric);
            Ok(FieldInput::Electrostatics(Arc::new(plan)))
        }
    }
}

/// Refuses what a screened model cannot be computed with: multilevel summation (1/r only) and
/// periodic boundaries.
pub fn check_screened(method: EspMethod, boundary: Boundary, dielectric: Dielectric) -> Result<(), ComputeError> {
    dielectric.check()?;
    if dielectric.is_vacuum() {
        return Ok(());
    }
    if let EspMethod::Msm(_) = method {
        return Err(bad(format!(
            "multilevel summation splits 1/r only; the {} model needs the direct (dcs) or cutoff method",
            dielectric.label()
        )));
    }
    if let Boundary::Periodic(_) = boundary {
        return Err(bad(format!(
            "the {} model has no periodic form here: periodic potentials are vacuum-only",
            dielectric.label()
        )));
    }
    Ok(())
}

impl super::EspPlan {
    /// The same cutoff plan for charges in `dielectric` (the bins sum its smoothed cutoff form).
    pub fn with_dielectric(mut self, dielectric: Dielectric) -> super::EspPlan {
        let screen = (!dielectric.is_vacuum()).then(|| ScreenedCutoff::new(dielectric, self.frame.cutoff_bohr));
        self.frame = self.frame.clone().with_screen(screen);
        if let Some(b) = self.bins.take() {
            let _ = self.bins.set(b.with_screen(screen));
        }
        self
    }

    /// The medium the plan's charges sit in.
    pub fn dielectric(&self) -> Dielectric {
        self.frame.screen.map_or(Dielectric::Vacuum, |s| s.dielectric)
    }
}

fn check_charges(charges: &PointCharges) -> Result<(), ComputeError> {
    let (np, nq) = (charges.positions_bohr.len(), charges.charges_e.len());
    if np != nq {
        return Err(bad(format!("{np} charge positions but {nq} charges")));
    }
    if np == 0 {
        return Err(bad("the charge set is empty".to_string()));
    }
    for (i, (p, q)) in charges.positions_bohr.iter().zip(&charges.charges_e).enumerate() {
        if !q.is_finite() || p.iter().any(|c| !c.is_finite()) {
            return Err(bad(format!("charge {i} is not finite (q = {q}, position {p:?} bohr)")));
        }
    }
    Ok(())
}

/// The charges of `q` whose atoms `keep` marks: charge k is atom `k % keep.len()`'s, so the
/// charges of several frames' copies of the atoms (a mean over frames) are picked alike.
pub fn kept_charges(q: &crate::compute::PointCharges, keep: &[bool]) -> crate::compute::PointCharges {
    let n = keep.len().max(1);
    let pick = |k: usize| keep.get(k % n).copied().unwrap_or(true);
    crate::compute::PointCharges {
        positions_bohr: q
            .positions_bohr
            .iter()
            .enumerate()
            .filter_map(|(k, p)| pick(k).then_some(*p))
            .collect(),
        charges_e: q
            .charges_e
            .iter()
            .enumerate()
            .filter_map(|(k, c)| pick(k).then_some(*c))
            .collect(),
    }
}

/// `charges` (one per atom of `structure`) without the explicit water molecules and electrolyte
/// ions (`compute::pb::setup::solute`), with the note to say once; `None` when the structure has
/// none or the counts differ.
pub fn solute_charges(
    structure: &crate::model::Structure,
    charges: &crate::compute::PointCharges,
) -> Option<(crate::compute::PointCharges, String)> {
    let (keep, note) = crate::compute::pb::setup::solute(structure, None, None).ok()?;
    let note = note?;
    if keep.len() != charges.charges_e.len() || keep.len() != charges.positions_bohr.len() {
        return None;
    }
    let kept = keep.iter().filter(|&&k| k).count();
    let q = kept_charges(charges, &keep);
    // The solute's note names what was left out; here the screened medium stands for it.
    let what = note
        .split(" left out")
        .next()
        .and_then(|w| w.strip_prefix("Poisson-Boltzmann: "))
        .unwrap_or("the water and ions")
        .to_string();
    Some((
        q,
        format!("{what} left out of the screened potential ({kept} charges kept): its medium stands for the solvent"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debye_length_of_physiological_salt() {
        // 0.15 M, water 78.54, 298.15 K: Debye length 7.85 A (0.304 nm / sqrt(I) at 25 C).
        let k = kappa_per_angstrom(78.54, 0.15, 298.15);
        assert!((1.0 / k - 7.85).abs() < 0.02, "{}", 1.0 / k);
    }

    #[test]
    fn cutoff_form_is_c2_at_the_cutoff_and_vacuum_matches_the_taylor_softening() {
        let a = 10.0;
        for d in [
            Dielectric::Vacuum,
            Dielectric::DistanceDependent {
                slope_per_angstrom: 4.0,
            },
            Dielectric::debye_default(),
        ] {
            let s = ScreenedCutoff::new(d, a);
            let f = |r: f64| s.term_r2(r * r);
            let h = 1e-4;
            assert!(f(a - h).abs() < 1e-9, "{d:?}");
            let d1 = (f(a - h) - f(a - 3.0 * h)) / (2.0 * h);
            assert!(d1.abs() < 1e-6, "{d:?} {d1}");
        }
        let s = ScreenedCutoff::new(Dielectric::Vacuum, a);
        for r in [0.5, 2.0, 7.0] {
            let want = 1.0 / r - super::super::kernel::smooth(r, a);
            assert!((s.term_r2(r * r) - want).abs() < 1e-13);
        }
    }
}
