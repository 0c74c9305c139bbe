//! The GPU layouts and host-side packing that the CUDA and WGSL engines share: the basis flattened
//! for the device (`BasisPlan`, `GpuShell`), orbital coefficients contracted with the angular
//! functions, per-shell screening radii, and the orbitals whose sum makes a field. Neutral ground: it
//! names neither `compute::cuda` nor `compute::wgpu`, and both import it (the general CUDA kernel of
//! `compute::cuda::mo` and the WGSL orbital pass of `compute::wgpu::orbital`, through
//! `compute::wgpu::packed_mo`).
//!
//! Every shell's contribution to an orbital is `radial(r) * P(x, y, z)` where `P` is a homogeneous
//! polynomial of degree `l` in Cartesian monomials: the orbital's coefficients of the shell's functions
//! times the functions' angular terms (`basis::angular_terms`), summed per monomial on the host. That
//! makes pure and Cartesian shells the same thing on the device. Monomials of degree `l` are ordered
//! `a = l..0, b = (l - a)..0, c = l - a - b` (x^a y^b z^c), in `kernels/mo.cu`, `shaders/orbital.wgsl`
//! and here.

use crate::compute::{ComputeError, Field};
use crate::model::basis::{BasisSet, angular_terms};
use crate::model::{Spin, SpinKind, Wavefunction};

pub mod pairs;

/// Highest angular momentum the kernels evaluate (i functions).
pub const MAX_L: u8 = 6;
/// A shell whose bound at the brick's nearest point is below this (bohr^-3/2) is skipped.
pub const SCREEN_EPS: f64 = 1e-9;
/// A primitive with `alpha * log2(e) * d_min^2` above this is skipped for the brick (2^-40 ~ 1e-12
/// times its coefficient; `PRIM_SKIP_LOG2` in `kernels/mo_common.cuh`).
pub const PRIM_SKIP_LOG2: f32 = 40.0;

/// One shell as the general kernels read it. Twin of `struct ShellRec` in `kernels/mo.cu` and of
/// `struct Shell` in `shaders/orbital.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub struct GpuShell {
    pub center: [f32; 3],
    pub cutoff2: f32,
    pub l: i32,
    pub prim_start: i32,
    pub nprim: i32,
    pub coef_start: i32,
}

/// Lattice geometry of one launch. Twin of `struct LatticeArgs` in `kernels/mo.cu`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub struct LatticeArgs {
    pub steps: [f32; 9],
    pub nx: i32,
    pub ny: i32,
    pub nz: i32,
    pub k0: i32,
}

/// Number of Cartesian monomials of degree `l`.
pub fn n_monomials(l: u8) -> usize {
    let l = l as usize;
    (l + 1) * (l + 2) / 2
}

/// Index of x^a y^b z^c among the monomials of degree a + b + c.
pub fn monomial_index(a: u8, b: u8, c: u8) -> usize {
    let l = (a + b + c) as usize;
    let (a, b) = (a as usize, b as usize);
    // Rows a = l..a+1 hold (l - a' + 1) monomials each.
    let before: usize = ((a + 1)..=l).map(|ap| l - ap + 1).sum();
    before + (l - a - b)
}

/// A shell prepared for the device, independent of the orbital.
#[derive(Clone, Debug)]
pub struct ShellPlan {
    pub l: u8,
    pub atom: usize,
    pub center_bohr: [f64; 3],
    /// (alpha * log2 e, radial coefficient d_i).
    pub prims: Vec<(f64, f64)>,
    pub first_function: usize,
    /// (function within the shell, monomial, coefficient).
    pub terms: Vec<(usize, usize, f64)>,
}

/// The basis flattened once per wavefunction.
#[derive(Clone, Debug)]
pub struct BasisPlan {
    pub shells: Vec<ShellPlan>,
    pub n_functions: usize,
    /// Offset of each shell's polynomial in the contracted coefficient array.
    pub coef_offsets: Vec<usize>,
    pub n_coefs: usize,
}

impl BasisPlan {
    pub fn new(basis: &BasisSet) -> Result<BasisPlan, ComputeError> {
        let offsets = basis.shell_offsets();
        let mut shells = Vec::with_capacity(basis.shells.len());
        let mut coef_offsets = Vec::with_capacity(basis.shells.len());
        let mut n_coefs = 0usize;
        for (shell, &first) in basis.shells.iter().zip(&offsets) {
            if shell.l > MAX_L {
                return Err(ComputeError::Device(format!(
                    "shells above l = {MAX_L} are not supported on the GPU"
                )));
            }
            let radial = shell.radial_coefficients();
            if radial.len() != shell.exponents.len() {
                return Err(ComputeError::Device(
                    "shell with mismatched exponents and coefficients".into(),
                ));
            }
            let prims = shell
                .exponents
                .iter()
                .zip(&radial)
                .map(|(&a, &d)| (a * std::f64::consts::LOG2_E, d))
                .collect();
            let mut terms = Vec::new();
            for (f, poly) in angular_terms(shell.l, shell.pure).iter().enumerate() {
                for &(c, [a, b, z]) in poly {
                    if a as u32 + b as u32 + z as u32 != shell.l as u32 {
                        return Err(ComputeError::Device("angular term of the wrong degree".into()));
                    }
                    terms.push((f, monomial_index(a, b, z), c));
                }
            }
            coef_offsets.push(n_coefs);
            n_coefs += n_monomials(shell.l);
            shells.push(ShellPlan {
                l: shell.l,
                atom: shell.atom,
                center_bohr: shell.center_bohr,
                prims,
                first_function: first,
                terms,
            });
        }
        Ok(BasisPlan {
            shells,
            n_functions: basis.n_functions(),
            coef_offsets,
            n_coefs,
        })
    }

    /// The orbital's coefficients contracted per shell into monomial coefficients (f64).
    pub fn contract(&self, orbital: &[f64]) -> Result<Vec<f64>, ComputeError> {
        if orbital.len() != self.n_functions {
            return Err(ComputeError::Device(format!(
                "orbital has {} coefficients, the basis {} functions",
                orbital.len(),
                self.n_functions
            )));
        }
        let mut out = vec![0.0; self.n_coefs];
        for (shell, &off) in self.shells.iter().zip(&self.coef_offsets) {
            for &(f, m, c) in &shell.terms {
                let coef = orbital.get(shell.first_function + f).copied().unwrap_or(0.0);
                if let Some(slot) = out.get_mut(off + m) {
                    *slot += coef * c;
                }
            }
        }
        Ok(out)
    }

    /// Squared screening radius of each shell for contracted coefficients `poly` (bohr^2).
    pub fn cutoffs2(&self, poly: &[f64]) -> Vec<f64> {
        self.shells
            .iter()
            .zip(&self.coef_offsets)
            .map(|(shell, &off)| {
                let n = n_monomials(shell.l);
                let amp: f64 = poly
                    .get(off..off + n)
                    .map(|s| s.iter().map(|c| c.abs()).sum())
                    .unwrap_or(0.0);
                shell_cutoff2(shell, amp)
            })
            .collect()
    }
}

impl BasisPlan {
    /// Every shell's primitives as `[alpha * log2 e, coefficient]` pairs (f32), and each shell's
    /// (first primitive, primitive count) in that list: the primitives array of the general CUDA kernel
    /// and of the WGSL orbital pass.
    pub fn packed_prims(&self) -> (Vec<[f32; 2]>, Vec<(i32, i32)>) {
        let mut prims = Vec::new();
        let mut shell_base = Vec::with_capacity(self.shells.len());
        for s in &self.shells {
            let start = prims.len();
            prims.extend(s.prims.iter().map(|&(a2, d)| [a2 as f32, d as f32]));
            shell_base.push((start as i32, s.prims.len() as i32));
        }
        (prims, shell_base)
    }

    /// The shells as the general kernels read them: centres relative to the lattice origin
    /// `origin_bohr`, squared screening radii `cut2` ([`Self::cutoffs2`]), primitives as laid out by
    /// [`Self::packed_prims`] (`shell_base`).
    pub fn packed_shells(&self, shell_base: &[(i32, i32)], cut2: &[f64], origin_bohr: [f64; 3]) -> Vec<GpuShell> {
        let o = origin_bohr;
        self.shells
            .iter()
            .zip(&self.coef_offsets)
            .zip(shell_base.iter().zip(cut2))
            .map(|((s, &off), (&(ps, np), &c2))| GpuShell {
                center: [
                    (s.center_bohr[0] - o[0]) as f32,
                    (s.center_bohr[1] - o[1]) as f32,
                    (s.center_bohr[2] - o[2]) as f32,
                ],
                cutoff2: c2 as f32,
                l: s.l as i32,
                prim_start: ps,
                nprim: np,
                coef_start: off as i32,
            })
            .collect()
    }
}

/// Squared radius beyond which `amp * r^l * sum |d_i| exp(-alpha_i r^2)` stays below [`SCREEN_EPS`].
fn shell_cutoff2(shell: &ShellPlan, amp: f64) -> f64 {
    if amp == 0.0 || !amp.is_finite() {
        return -1.0;
    }
    let bound = |r: f64| {
        let radial: f64 = shell.prims.iter().map(|&(a2, d)| d.abs() * (-a2 * r * r).exp2()).sum();
        amp * r.powi(shell.l as i32).max(if shell.l == 0 { 1.0 } else { 0.0 }) * radial
    };
    // Scan outward in 0.25 bohr steps up to 200 bohr for the last point above the threshold. Each
    // term r^l exp(-alpha r^2) decreases beyond its maximum at r^2 = l / (2 alpha) (alpha = a2 ln 2),
    // so once past every term's maximum the first point below the threshold ends the scan: the
    // same answer as scanning all the way, at a few dozen evaluations instead of 800 per shell.
    // (A primitive that does not decay, which no valid basis has, keeps the full scan.)
    let past_maxima = shell
        .prims
        .iter()
        .map(|&(a2, _)| {
            if a2 > 0.0 {
                (f64::from(shell.l) / (2.0 * a2 * std::f64::consts::LN_2)).sqrt()
            } else {
                f64::INFINITY
            }
        })
        .fold(0.0f64, f64::max);
    let mut last_above = 0.0;
    let mut r = 0.0;
    while r <= 200.0 {
        if bound(r) >= SCREEN_EPS {
            last_above = r;
        } else if r > past_maxima {
            break;
        }
        r += 0.25;
    }
    let rc = last_above + 0.25;
    rc * rc
}

/// One orbital's contribution to a field: coefficients, store mode (0 = psi, 1 = w psi^2, 2 = += w psi^2)
/// and weight.
pub struct OrbitalTerm {
    pub poly: Vec<f64>,
    pub mode: i32,
    pub weight: f32,
}

/// The orbitals (with store modes and weights) whose sum makes `field`.
pub fn orbital_terms(field: &Field, wf: &Wavefunction, plan: &BasisPlan) -> Result<Vec<OrbitalTerm>, ComputeError> {
    let one = |spin: Spin, index: usize| -> Result<Vec<f64>, ComputeError> {
        let set = wf
            .orbitals(spin)
            .ok_or(ComputeError::WrongInput(field.clone(), "beta orbitals"))?;
        let c = set.orbital(index).ok_or(ComputeError::NoSuchOrbital {
            index,
            count: set.len(),
        })?;
        plan.contract(c)
    };
    let weighted = |list: &[(Spin, f64)]| -> Result<Vec<OrbitalTerm>, ComputeError> {
        let mut out = Vec::new();
        for &(spin, sign) in list {
            let Some(set) = wf.orbitals(spin) else { continue };
            for (i, &occ) in set.occupations.iter().enumerate() {
                let w = sign * occ;
                if w.abs() > 1e-12 {
                    let poly = one(spin, i)?;
                    let mode = if out.is_empty() { 1 } else { 2 };
                    out.push(OrbitalTerm {
                        poly,
                        mode,
                        weight: w as f32,
                    });
                }
            }
        }
        Ok(out)
    };
    let mut terms = match field {
        Field::Orbital { spin, index } => vec![OrbitalTerm {
            poly: one(*spin, *index)?,
            mode: 0,
            weight: 1.0,
        }],
        Field::OrbitalSquared { spin, index } => {
            vec![OrbitalTerm {
                poly: one(*spin, *index)?,
                mode: 1,
                weight: 1.0,
            }]
        }
        Field::Density => match wf.spin {
            SpinKind::Unrestricted => weighted(&[(Spin::Alpha, 1.0), (Spin::Beta, 1.0)])?,
            _ => weighted(&[(Spin::Alpha, 1.0)])?,
        },
        Field::SpinDensity => match wf.spin {
            SpinKind::Unrestricted => weighted(&[(Spin::Alpha, 1.0), (Spin::Beta, -1.0)])?,
            SpinKind::Restricted => Vec::new(),
            SpinKind::RestrictedOpen => {
                // alpha occupation min(occ, 1), beta the rest: the spin is alpha minus beta.
                let mut out = Vec::new();
                for (i, &occ) in wf.alpha.occupations.iter().enumerate() {
                    let w = occ.min(1.0) - (occ - occ.min(1.0));
                    if w.abs() > 1e-12 {
                        let mode = if out.is_empty() { 1 } else { 2 };
                        out.push(OrbitalTerm {
                            poly: one(Spin::Alpha, i)?,
                            mode,
                            weight: w as f32,
                        });
                    }
                }
                out
            }
        },
        Field::Potential => return Err(ComputeError::WrongInput(Field::Potential, "point charges")),
        Field::QmPotential => return Err(ComputeError::WrongInput(Field::QmPotential, "the potential kernel")),
        Field::MolSurf => return Err(ComputeError::WrongInput(Field::MolSurf, "atoms with radii")),
    };
    if terms.is_empty() {
        // A field that is zero everywhere: one launch with weight 0 writes the zeros.
        terms.push(OrbitalTerm {
            poly: vec![0.0; plan.n_coefs],
            mode: 1,
            weight: 0.0,
        });
    }
    Ok(terms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_cutoff_scan_that_stops_early_equals_the_full_scan() {
        // The full scan as first written: every 0.25 bohr up to 200 bohr.
        let full = |shell: &ShellPlan, amp: f64| {
            let bound = |r: f64| {
                let radial: f64 = shell.prims.iter().map(|&(a2, d)| d.abs() * (-a2 * r * r).exp2()).sum();
                amp * r.powi(shell.l as i32).max(if shell.l == 0 { 1.0 } else { 0.0 }) * radial
            };
            let mut last_above = 0.0;
            let mut r = 0.0;
            while r <= 200.0 {
                if bound(r) >= SCREEN_EPS {
                    last_above = r;
                }
                r += 0.25;
            }
            (last_above + 0.25) * (last_above + 0.25)
        };
        let mut seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(3, |d| d.as_nanos() as u64)
            | 1;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        for _ in 0..2000 {
            let l = (next() * 5.0) as u8;
            let nprim = 1 + (next() * 4.0) as usize;
            // Exponents from very diffuse (1e-3) to tight (1e4); coefficients of either sign.
            let prims = (0..nprim)
                .map(|_| {
                    let alpha = 10f64.powf(next() * 7.0 - 3.0);
                    (alpha * std::f64::consts::LOG2_E, next() * 4.0 - 2.0)
                })
                .collect();
            let shell = ShellPlan {
                l,
                atom: 0,
                center_bohr: [0.0; 3],
                prims,
                first_function: 0,
                terms: Vec::new(),
            };
            let amp = 10f64.powf(next() * 8.0 - 6.0);
            assert_eq!(shell_cutoff2(&shell, amp), full(&shell, amp), "{shell:?} amp {amp}");
        }
    }

    #[test]
    fn monomial_indices_follow_the_kernel_order() {
        for l in 0..=MAX_L {
            let mut m = 0;
            for a in (0..=l).rev() {
                for b in (0..=(l - a)).rev() {
                    assert_eq!(monomial_index(a, b, l - a - b), m);
                    m += 1;
                }
            }
            assert_eq!(m, n_monomials(l));
        }
    }
}
