//! Exact f64 evaluation of basis functions, orbitals and densities at arbitrary points (bohr).
//!
//! Owns the reference numbers every faster engine (the CPU lattice engine, the CUDA kernels) is
//! tested against, and what `orbitfield points` prints. Clear rather than fast: per point it
//! evaluates every basis function once (linear in basis size), then contracts with coefficients
//! or a density matrix. Uses only `model::basis`'s conventions ([`Shell::radial_coefficients`],
//! [`angular_terms`]), so a convention mistake there shows up here and in the reference tests.
//! Also evaluates prepared cutoff/MSM electrostatics plans at points ([`esp_plan_points`]), for
//! `orbitfield points --field esp`.

use crate::compute::esp::EspPlan;
use crate::compute::esp::bins::ShortRangeScratch;
use crate::compute::{ComputeError, Field};
use crate::model::basis::angular_terms;
use crate::model::{Shell, Spin, SpinKind, Wavefunction};
use rayon::prelude::*;

pub use crate::model::wavefunction::DensityMatrix;

/// Cutoff or MSM potential (hartree/e) at arbitrary points (bohr) from a prepared plan, in
/// parallel; `out` holds one value per point.
pub fn esp_plan_points(plan: &EspPlan, points_bohr: &[[f64; 3]], out: &mut [f64]) {
    out.par_iter_mut()
        .zip(points_bohr.par_iter())
        .for_each_init(ShortRangeScratch::default, |scratch, (o, p)| {
            *o = plan.potential_with(*p, scratch)
        });
}

struct PreparedShell {
    center_bohr: [f64; 3],
    exponents: Vec<f64>,
    radial: Vec<f64>,
    terms: Vec<Vec<(f64, [u8; 3])>>,
    max_power: usize,
}

impl PreparedShell {
    fn new(s: &Shell) -> PreparedShell {
        PreparedShell {
            center_bohr: s.center_bohr,
            exponents: s.exponents.clone(),
            radial: s.radial_coefficients(),
            terms: angular_terms(s.l, s.pure),
            max_power: s.l as usize,
        }
    }
}

/// Evaluates a wavefunction's basis functions and fields at points given in bohr.
pub struct PointEvaluator<'a> {
    wf: &'a Wavefunction,
    shells: Vec<PreparedShell>,
    n_basis: usize,
    total_density: Option<&'a DensityMatrix>,
    spin_density: Option<&'a DensityMatrix>,
}

impl<'a> PointEvaluator<'a> {
    /// Prepares the basis of `wf` (radial coefficients and angular polynomials per shell).
    pub fn new(wf: &'a Wavefunction) -> PointEvaluator<'a> {
        PointEvaluator {
            wf,
            shells: wf.basis.shells.iter().map(PreparedShell::new).collect(),
            n_basis: wf.basis.n_functions(),
            total_density: None,
            spin_density: None,
        }
    }

    /// Uses density matrices from the file (e.g. fchk "Total SCF Density" / "Spin SCF Density") for
    /// [`Field::Density`] and [`Field::SpinDensity`] instead of the occupations. Matrices whose size
    /// does not match the basis are ignored.
    pub fn with_density_matrices(mut self, total: Option<&'a DensityMatrix>, spin: Option<&'a DensityMatrix>) -> Self {
        let n = self.n_basis;
        let fits = |d: &&DensityMatrix| d.n_basis == n && d.values.len() == n * n;
        self.total_density = total.filter(fits);
        self.spin_density = spin.filter(fits);
        self
    }

    /// Number of basis functions.
    pub fn n_basis(&self) -> usize {
        self.n_basis
    }

    /// Values of all basis functions at `p_bohr`, written into `out` (length `n_basis`).
    pub fn ao_values_into(&self, p_bohr: [f64; 3], out: &mut [f64]) {
        let mut k = 0;
        for s in &self.shells {
            let d = [
                p_bohr[0] - s.center_bohr[0],
                p_bohr[1] - s.center_bohr[1],
                p_bohr[2] - s.center_bohr[2],
            ];
            let r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
            let radial: f64 = s
                .radial
                .iter()
                .zip(&s.exponents)
                .map(|(c, a)| c * (-a * r2).exp())
                .sum();
            // Powers 0..=l of each coordinate.
            let mut pw = [[1.0f64; 3]; 16];
            for e in 1..=s.max_power.min(15) {
                for axis in 0..3 {
                    pw[e][axis] = pw[e - 1][axis] * d[axis];
                }
            }
            for terms in &s.terms {
                let ang: f64 = terms
                    .iter()
                    .map(|(c, e)| c * pw[e[0] as usize & 15][0] * pw[e[1] as usize & 15][1] * pw[e[2] as usize & 15][2])
                    .sum();
                if let Some(o) = out.get_mut(k) {
                    *o = radial * ang;
                }
                k += 1;
            }
        }
    }

    /// Values of all basis functions at `p_bohr`.
    pub fn ao_values(&self, p_bohr: [f64; 3]) -> Vec<f64> {
        let mut v = vec![0.0; self.n_basis];
        self.ao_values_into(p_bohr, &mut v);
        v
    }

    fn orbital_from_ao(&self, spin: Spin, index: usize, ao: &[f64]) -> Result<f64, ComputeError> {
        let set = self
            .wf
            .orbitals(spin)
            .ok_or(ComputeError::NoSuchOrbital { index, count: 0 })?;
        let c = set.orbital(index).ok_or(ComputeError::NoSuchOrbital {
            index,
            count: set.len(),
        })?;
        Ok(c.iter().zip(ao).map(|(a, b)| a * b).sum())
    }

    /// Sum over orbitals of occ * psi^2 for one set.
    fn occupied_sum(&self, spin: Spin, ao: &[f64]) -> f64 {
        let Some(set) = self.wf.orbitals(spin) else { return 0.0 };
        let mut rho = 0.0;
        for (i, &occ) in set.occupations.iter().enumerate() {
            if occ == 0.0 {
                continue;
            }
            if let Some(c) = set.orbital(i) {
                let psi: f64 = c.iter().zip(ao).map(|(a, b)| a * b).sum();
                rho += occ * psi * psi;
            }
        }
        rho
    }

    fn from_matrix(m: &DensityMatrix, ao: &[f64]) -> f64 {
        let n = m.n_basis;
        let mut rho = 0.0;
        for (i, &ai) in ao.iter().enumerate().take(n) {
            let row = &m.values[i * n..(i + 1) * n];
            rho += ai * row.iter().zip(ao).map(|(x, y)| x * y).sum::<f64>();
        }
        rho
    }

    /// Alpha and beta densities at a point from the occupations (restricted sets split evenly,
    /// restricted-open sets: occupation 1 counts as alpha).
    fn spin_densities(&self, ao: &[f64]) -> (f64, f64) {
        match self.wf.spin {
            SpinKind::Unrestricted => (self.occupied_sum(Spin::Alpha, ao), self.occupied_sum(Spin::Beta, ao)),
            SpinKind::Restricted | SpinKind::RestrictedOpen => {
                let mut a = 0.0;
                let mut b = 0.0;
                for (i, &occ) in self.wf.alpha.occupations.iter().enumerate() {
                    if occ == 0.0 {
                        continue;
                    }
                    if let Some(c) = self.wf.alpha.orbital(i) {
                        let psi: f64 = c.iter().zip(ao).map(|(x, y)| x * y).sum();
                        let p2 = psi * psi;
                        if self.wf.spin == SpinKind::RestrictedOpen {
                            let oa = occ.min(1.0);
                            a += oa * p2;
                            b += (occ - oa) * p2;
                        } else {
                            a += 0.5 * occ * p2;
                            b += 0.5 * occ * p2;
                        }
                    }
                }
                (a, b)
            }
        }
    }

    /// The value of `field` at one point. [`Field::Potential`] is not a wavefunction field.
    pub fn value(&self, field: &Field, p_bohr: [f64; 3]) -> Result<f64, ComputeError> {
        let ao = self.ao_values(p_bohr);
        self.value_from_ao(field, &ao)
    }

    fn value_from_ao(&self, field: &Field, ao: &[f64]) -> Result<f64, ComputeError> {
        match field {
            Field::Orbital { spin, index } => self.orbital_from_ao(*spin, *index, ao),
            Field::OrbitalSquared { spin, index } => self.orbital_from_ao(*spin, *index, ao).map(|v| v * v),
            Field::Density => Ok(match self.total_density {
                Some(m) => Self::from_matrix(m, ao),
                None => {
                    let (a, b) = self.spin_densities(ao);
                    a + b
                }
            }),
            Field::SpinDensity => Ok(match self.spin_density {
                Some(m) => Self::from_matrix(m, ao),
                None => {
                    let (a, b) = self.spin_densities(ao);
                    a - b
                }
            }),
            Field::Potential => Err(ComputeError::WrongInput(
                field.clone(),
                "point charges, not a wavefunction",
            )),
            Field::QmPotential => Err(ComputeError::WrongInput(
                field.clone(),
                "the nuclear-attraction integrals of compute::cpu::qm_esp, not basis-function values",
            )),
            Field::MolSurf => Err(ComputeError::WrongInput(
                field.clone(),
                "atoms with radii, not orbitals",
            )),
        }
    }

    /// Checks that `field` can be evaluated (orbital index in range) without evaluating it.
    pub fn check(&self, field: &Field) -> Result<(), ComputeError> {
        match field {
            Field::Orbital { spin, index } | Field::OrbitalSquared { spin, index } => {
                let count = self.wf.orbitals(*spin).map_or(0, |s| s.len());
                if *index >= count {
                    return Err(ComputeError::NoSuchOrbital { index: *index, count });
                }
                Ok(())
            }
            Field::Density | Field::SpinDensity => Ok(()),
            Field::Potential => Err(ComputeError::WrongInput(
                field.clone(),
                "point charges, not a wavefunction",
            )),
            Field::QmPotential => Err(ComputeError::WrongInput(
                field.clone(),
                "the nuclear-attraction integrals of compute::cpu::qm_esp, not basis-function values",
            )),
            Field::MolSurf => Err(ComputeError::WrongInput(
                field.clone(),
                "atoms with radii, not orbitals",
            )),
        }
    }

    /// The values of `field` at many points (bohr).
    pub fn values(&self, field: &Field, points_bohr: &[[f64; 3]]) -> Result<Vec<f64>, ComputeError> {
        self.check(field)?;
        let mut ao = vec![0.0; self.n_basis];
        let mut out = Vec::with_capacity(points_bohr.len());
        for &p in points_bohr {
            self.ao_values_into(p, &mut ao);
            out.push(self.value_from_ao(field, &ao)?);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{BasisSet, Element, OrbitalSet, QmAtom};

    fn hydrogen_like() -> Wavefunction {
        // One normalised s primitive and one pure d shell; orbital 0 = s, orbital 1 = d0.
        let basis = BasisSet {
            shells: vec![
                Shell {
                    l: 0,
                    pure: false,
                    atom: 0,
                    center_bohr: [0.0; 3],
                    exponents: vec![0.5],
                    coefficients: vec![1.0],
                },
                Shell {
                    l: 2,
                    pure: true,
                    atom: 0,
                    center_bohr: [0.0; 3],
                    exponents: vec![0.5],
                    coefficients: vec![1.0],
                },
            ],
        };
        let mut coefficients = vec![0.0; 12];
        coefficients[0] = 1.0;
        coefficients[6 + 1] = 1.0;
        Wavefunction {
            atoms: vec![QmAtom {
                element: Element::from_number(1).unwrap(),
                nuclear_charge: 1.0,
                position_bohr: [0.0; 3],
            }],
            basis,
            spin: SpinKind::Restricted,
            alpha: OrbitalSet {
                energies_hartree: vec![-0.5, 0.1],
                occupations: vec![2.0, 0.0],
                symmetries: vec![String::new(); 2],
                coefficients,
                n_basis: 6,
            },
            beta: None,
            program: None,
            corrections: Vec::new(),
            energy_hartree: None,
            scf_density: None,
        }
    }

    #[test]
    fn analytic_values() {
        let wf = hydrogen_like();
        let ev = PointEvaluator::new(&wf);
        let p = [0.3, -0.4, 0.7];
        let r2: f64 = 0.09 + 0.16 + 0.49;
        let pi = std::f64::consts::PI;
        let s = (1.0 / pi).powf(0.75) * (-0.5 * r2).exp();
        let v = ev
            .value(
                &Field::Orbital {
                    spin: Spin::Alpha,
                    index: 0,
                },
                p,
            )
            .unwrap();
        assert!((v - s).abs() < 1e-15);
        let rho = ev.value(&Field::Density, p).unwrap();
        assert!((rho - 2.0 * s * s).abs() < 1e-15);
        // d0 normalised: sqrt(5/(16 pi)) (3z^2 - r^2) * radial with the r^2 factor normalised:
        // N = (2a/pi)^(3/4) * (4a) / sqrt(3) for x^2; d0 = N (z^2 - (x^2+y^2)/2).
        let a: f64 = 0.5;
        let n = (2.0 * a / pi).powf(0.75) * 4.0 * a / 3f64.sqrt();
        let d0 = n * (0.49 - 0.5 * (0.09 + 0.16)) * (-a * r2).exp();
        let v = ev
            .value(
                &Field::Orbital {
                    spin: Spin::Alpha,
                    index: 1,
                },
                p,
            )
            .unwrap();
        assert!((v - d0).abs() < 1e-15);
        assert_eq!(ev.value(&Field::SpinDensity, p).unwrap(), 0.0);
        assert!(
            ev.values(
                &Field::Orbital {
                    spin: Spin::Alpha,
                    index: 7
                },
                &[p]
            )
            .is_err()
        );
    }
}
