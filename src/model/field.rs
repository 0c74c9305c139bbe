//! Field specifications as users write them, and the lattices fields are computed on.
//!
//! [`FieldSpec`] is the text the CLI (`orbitfield grid mo:homo ...`) and the viewer's field panel
//! both accept: `mo:homo`, `mo:lumo+2`, `mo:homo-1`, `mo:17` (1-based), `mo:beta:homo`,
//! `mo:alpha:lumo`, `mo2:homo` (|psi|^2), `density`, `spin` (alpha minus beta density), `esp`
//! (the electrostatic potential: of the wavefunction's nuclei and electron density when there is a
//! wavefunction, else of the structure's point charges), `molsurf` (a Gaussian molecular-surface
//! density of the atoms, needing neither). [`FieldSpec::resolve`] checks it against
//! a wavefunction and yields a [`Field`] with 0-based indices: the field kind every engine computes.
//!
//! [`LatticeSpec`] turns "spacing and padding around these atoms" or an explicit origin, size and
//! spacing into a [`Lattice`], refusing absurd sizes before anything is allocated.
//!
//! HOMO/LUMO: the HOMO of a spin channel is [`Wavefunction::homo`] (the highest orbital at least
//! half occupied in that channel; orbitals are stored in energy order), the LUMO the one after it.
//! For a restricted wavefunction both channels see the same orbitals; for a restricted open-shell
//! one the beta channel holds the doubly occupied orbitals only.

use super::grid::Lattice;
use super::units::bohr_from_angstrom;
use super::wavefunction::{Spin, SpinKind, Wavefunction};
use std::fmt;
use std::str::FromStr;

/// A resolved scalar field (orbital indices are 0-based and checked against the wavefunction).
#[derive(Clone, Debug, PartialEq)]
pub enum Field {
    /// Amplitude of one molecular orbital (bohr^-3/2).
    Orbital { spin: Spin, index: usize },
    /// |psi|^2 of one orbital (bohr^-3).
    OrbitalSquared { spin: Spin, index: usize },
    /// Total electron density from occupations (bohr^-3).
    Density,
    /// Alpha minus beta density (bohr^-3).
    SpinDensity,
    /// Electrostatic potential of point charges (e/bohr, i.e. hartree/e).
    Potential,
    /// Electrostatic potential of a wavefunction's nuclei and electron density (hartree/e): the
    /// nuclear-attraction integrals of its density matrix at every point (`cpu::qm_esp`).
    QmPotential,
    /// Molecular-surface density (dimensionless): one Gaussian per atom, scaled so that an isolated
    /// atom's surface at [`MOLSURF_LEVEL`] lies at its radius (`compute::molsurf`).
    MolSurf,
}

/// The default surface level of [`Field::MolSurf`]: an isolated atom's density equals it at the atom's
/// radius.
pub const MOLSURF_LEVEL: f32 = 0.5;

/// Which orbital, relative to the frontier orbitals or by number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OrbitalRef {
    /// HOMO plus an offset (`homo-1` is -1).
    Homo(i64),
    /// LUMO plus an offset (`lumo+2` is 2).
    Lumo(i64),
    /// 1-based orbital number as printed by QM programs.
    Number(usize),
}

/// A field as the user names it, before it is checked against a wavefunction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldSpec {
    /// An orbital's amplitude (`mo:`) or its square (`mo2:`); `spin` is `None` when not given.
    Orbital {
        spin: Option<Spin>,
        orbital: OrbitalRef,
        squared: bool,
    },
    Density,
    SpinDensity,
    Potential,
    /// The molecular-surface density of the atoms ([`Field::MolSurf`]).
    MolSurf,
    /// The solvent-excluded surface of the atoms, a 1.4 A probe ([`Field::MolSurf`] on the
    /// excluded surface's field, surface at 0.5 as well).
    ExcludedSurface,
}

/// A field text that cannot be parsed or resolved.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{text}: {message}")]
pub struct FieldSpecError {
    pub text: String,
    pub message: String,
}

fn spec_error(text: &str, message: impl Into<String>) -> FieldSpecError {
    FieldSpecError {
        text: text.to_string(),
        message: message.into(),
    }
}

const SYNTAX: &str = "expected mo:homo, mo:lumo+N, mo:homo-N, mo:N (1-based), mo:alpha:..., mo:beta:..., mo2:..., homo, lumo+N, density, spin, esp, molsurf or ses";

impl FromStr for FieldSpec {
    type Err = FieldSpecError;

    fn from_str(text: &str) -> Result<FieldSpec, FieldSpecError> {
        let t = text.trim().to_ascii_lowercase();
        match t.as_str() {
            "density" | "rho" => return Ok(FieldSpec::Density),
            "spin" | "spin-density" | "spindensity" => return Ok(FieldSpec::SpinDensity),
            "esp" | "potential" => return Ok(FieldSpec::Potential),
            "molsurf" | "surface" => return Ok(FieldSpec::MolSurf),
            "ses" | "excluded" => return Ok(FieldSpec::ExcludedSurface),
            _ => {}
        }
        let (squared, rest) = if let Some(r) = t.strip_prefix("mo2:") {
            (true, r)
        } else if let Some(r) = t.strip_prefix("mo:") {
            (false, r)
        } else if let Some(orbital) = parse_orbital(&t).filter(|_| t.starts_with("homo") || t.starts_with("lumo")) {
            // `homo`, `lumo+1`: the orbital named as `render --field` and the viewer's commands name it.
            return Ok(FieldSpec::Orbital {
                spin: None,
                orbital,
                squared: false,
            });
        } else {
            return Err(spec_error(text, SYNTAX));
        };
        let (spin, rest) = if let Some(r) = rest.strip_prefix("alpha:") {
            (Some(Spin::Alpha), r)
        } else if let Some(r) = rest.strip_prefix("beta:") {
            (Some(Spin::Beta), r)
        } else {
            (None, rest)
        };
        if rest == "0" {
            return Err(spec_error(
                text,
                "orbitals are numbered from 1 (mo:1 is the lowest); mo:homo and mo:lumo+N name them by the frontier",
            ));
        }
        let orbital = parse_orbital(rest).ok_or_else(|| spec_error(text, SYNTAX))?;
        Ok(FieldSpec::Orbital { spin, orbital, squared })
    }
}

fn parse_orbital(s: &str) -> Option<OrbitalRef> {
    let frontier = |name: &str| -> Option<i64> {
        let r = s.strip_prefix(name)?;
        if r.is_empty() {
            return Some(0);
        }
        let (sign, digits) = if let Some(d) = r.strip_prefix('+') {
            (1, d)
        } else if let Some(d) = r.strip_prefix('-') {
            (-1, d)
        } else {
            return None;
        };
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        digits.parse::<i64>().ok().map(|n| sign * n)
    };
    if let Some(k) = frontier("homo") {
        return Some(OrbitalRef::Homo(k));
    }
    if let Some(k) = frontier("lumo") {
        return Some(OrbitalRef::Lumo(k));
    }
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        return s.parse::<usize>().ok().filter(|&n| n >= 1).map(OrbitalRef::Number);
    }
    None
}

impl fmt::Display for OrbitalRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let frontier = |f: &mut fmt::Formatter<'_>, name: &str, k: i64| match k {
            0 => write!(f, "{name}"),
            k if k > 0 => write!(f, "{name}+{k}"),
            k => write!(f, "{name}{k}"),
        };
        match *self {
            OrbitalRef::Homo(k) => frontier(f, "homo", k),
            OrbitalRef::Lumo(k) => frontier(f, "lumo", k),
            OrbitalRef::Number(n) => write!(f, "{n}"),
        }
    }
}

impl fmt::Display for FieldSpec {
    /// The canonical text, which parses back to the same spec.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FieldSpec::Density => write!(f, "density"),
            FieldSpec::SpinDensity => write!(f, "spin"),
            FieldSpec::Potential => write!(f, "esp"),
            FieldSpec::MolSurf => write!(f, "molsurf"),
            FieldSpec::ExcludedSurface => write!(f, "ses"),
            FieldSpec::Orbital { spin, orbital, squared } => {
                write!(f, "{}:", if *squared { "mo2" } else { "mo" })?;
                match spin {
                    Some(Spin::Alpha) => write!(f, "alpha:")?,
                    Some(Spin::Beta) => write!(f, "beta:")?,
                    None => {}
                }
                write!(f, "{orbital}")
            }
        }
    }
}

impl FieldSpec {
    /// True for `esp`, the one field that can come from point charges rather than a wavefunction
    /// (callers choose the charge model or the wavefunction's own potential).
    pub fn needs_charges(&self) -> bool {
        matches!(self, FieldSpec::Potential)
    }

    /// Checks the spec against `wf` (required for every field but `esp`) and returns the field with
    /// 0-based orbital indices. `esp` with a wavefunction is its own potential
    /// ([`Field::QmPotential`]), without one the potential of point charges ([`Field::Potential`]).
    pub fn resolve(&self, wf: Option<&Wavefunction>) -> Result<Field, FieldSpecError> {
        let text = self.to_string();
        if let FieldSpec::MolSurf | FieldSpec::ExcludedSurface = self {
            return Ok(Field::MolSurf);
        }
        if let FieldSpec::Potential = self {
            return Ok(if wf.is_some() {
                Field::QmPotential
            } else {
                Field::Potential
            });
        }
        let Some(wf) = wf else {
            return Err(spec_error(
                &text,
                "needs a wavefunction (molden, fchk, wfn or wfx file)",
            ));
        };
        match *self {
            FieldSpec::Potential => Ok(Field::QmPotential),
            FieldSpec::MolSurf | FieldSpec::ExcludedSurface => Ok(Field::MolSurf),
            FieldSpec::Density => Ok(Field::Density),
            FieldSpec::SpinDensity => Ok(Field::SpinDensity),
            FieldSpec::Orbital { spin, orbital, squared } => {
                let spin = spin.unwrap_or(Spin::Alpha);
                if spin == Spin::Beta && wf.spin == SpinKind::Unrestricted && wf.beta.is_none() {
                    return Err(spec_error(&text, "the wavefunction has no beta orbitals"));
                }
                let set = wf
                    .orbitals(spin)
                    .ok_or_else(|| spec_error(&text, "the wavefunction has no beta orbitals"))?;
                let count = set.len();
                let index: i64 = match orbital {
                    OrbitalRef::Number(n) => n as i64 - 1,
                    OrbitalRef::Homo(k) | OrbitalRef::Lumo(k) => {
                        let Some(h) = wf.homo(spin) else {
                            return Err(spec_error(
                                &text,
                                "no orbital of that spin is occupied, so HOMO/LUMO are undefined",
                            ));
                        };
                        let base = h as i64 + i64::from(matches!(orbital, OrbitalRef::Lumo(_)));
                        base.saturating_add(k)
                    }
                };
                if index < 0 || index as u64 >= count as u64 {
                    let which = match orbital {
                        OrbitalRef::Number(n) => format!("orbital {n} does not exist"),
                        _ => format!("that is orbital {} (1-based)", index.saturating_add(1)),
                    };
                    return Err(spec_error(
                        &text,
                        format!("{which}; the wavefunction has {count} orbitals"),
                    ));
                }
                let index = index as usize;
                Ok(if squared {
                    Field::OrbitalSquared { spin, index }
                } else {
                    Field::Orbital { spin, index }
                })
            }
        }
    }

    /// Unit of the values, for file headers and messages.
    pub fn unit(&self) -> &'static str {
        match self {
            FieldSpec::Orbital { squared: false, .. } => "bohr^-3/2",
            FieldSpec::Orbital { squared: true, .. } | FieldSpec::Density | FieldSpec::SpinDensity => "bohr^-3",
            FieldSpec::Potential => "hartree/e",
            FieldSpec::MolSurf | FieldSpec::ExcludedSurface => "1 (surface at 0.5)",
        }
    }
}

/// Default lattice spacing for computed fields (Angstrom): fine enough for smooth orbital
/// isosurfaces (VMD uses 0.075-0.2 A, Avogadro 0.1-0.2 A, PySCF's 80^3 cubes ~0.15 A for small
/// molecules).
pub const DEFAULT_SPACING_ANGSTROM: f64 = 0.15;
/// Default padding around the atoms (Angstrom): valence orbitals at the usual isovalues (0.02-0.05)
/// end within ~3 A of the nuclei; 4 A leaves diffuse LUMOs room.
pub const DEFAULT_PADDING_ANGSTROM: f64 = 4.0;
/// Largest lattice we agree to allocate: 2^29 points (2 GiB of f32 values).
pub const MAX_LATTICE_POINTS: u64 = 1 << 29;

/// How to place a lattice.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LatticeSpec {
    /// Around the atoms: bounding box grown by `padding_angstrom`, points `spacing_angstrom` apart.
    AroundAtoms {
        spacing_angstrom: f64,
        padding_angstrom: f64,
    },
    /// Explicit axis-aligned lattice.
    Explicit {
        origin_angstrom: [f64; 3],
        dims: [usize; 3],
        spacing_angstrom: f64,
    },
}

impl Default for LatticeSpec {
    fn default() -> LatticeSpec {
        LatticeSpec::AroundAtoms {
            spacing_angstrom: DEFAULT_SPACING_ANGSTROM,
            padding_angstrom: DEFAULT_PADDING_ANGSTROM,
        }
    }
}

/// Why a lattice cannot be built.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum LatticeError {
    #[error("spacing {0} A must be a positive finite number")]
    BadSpacing(f64),
    #[error("padding {0} A must be a finite number >= 0")]
    BadPadding(f64),
    #[error("no atoms to put a lattice around")]
    NoAtoms,
    #[error("atom coordinates are not finite")]
    NotFinite,
    #[error("lattice origin {0:?} A must be finite")]
    BadOrigin([f64; 3]),
    #[error(
        "the lattice would have {dims_text} = {points} points ({gib:.1} GiB of f32 values); the limit is {limit} points: use a larger spacing or less padding"
    )]
    TooLarge {
        dims_text: String,
        points: u128,
        gib: f64,
        limit: u64,
    },
}

/// Checks the point count of `dims` against [`MAX_LATTICE_POINTS`] (without overflow).
pub fn check_dims(dims: [u128; 3]) -> Result<(), LatticeError> {
    let points = dims[0].saturating_mul(dims[1]).saturating_mul(dims[2]);
    if points == 0 || points > MAX_LATTICE_POINTS as u128 {
        return Err(LatticeError::TooLarge {
            dims_text: format!("{}x{}x{}", dims[0], dims[1], dims[2]),
            points,
            gib: points as f64 * 4.0 / (1u64 << 30) as f64,
            limit: MAX_LATTICE_POINTS,
        });
    }
    Ok(())
}

impl LatticeSpec {
    /// Builds the lattice for atoms at `positions_angstrom` (ignored for explicit lattices).
    pub fn build(&self, positions_angstrom: &[[f64; 3]]) -> Result<Lattice, LatticeError> {
        match *self {
            LatticeSpec::Explicit {
                origin_angstrom,
                dims,
                spacing_angstrom,
            } => {
                if !(spacing_angstrom > 0.0 && spacing_angstrom.is_finite()) {
                    return Err(LatticeError::BadSpacing(spacing_angstrom));
                }
                if !origin_angstrom.iter().all(|x| x.is_finite()) {
                    return Err(LatticeError::BadOrigin(origin_angstrom));
                }
                check_dims(dims.map(|d| d as u128))?;
                Ok(Lattice::axis_aligned(
                    origin_angstrom.map(bohr_from_angstrom),
                    bohr_from_angstrom(spacing_angstrom),
                    dims,
                ))
            }
            LatticeSpec::AroundAtoms {
                spacing_angstrom,
                padding_angstrom,
            } => {
                if !(spacing_angstrom > 0.0 && spacing_angstrom.is_finite()) {
                    return Err(LatticeError::BadSpacing(spacing_angstrom));
                }
                if !(padding_angstrom >= 0.0 && padding_angstrom.is_finite()) {
                    return Err(LatticeError::BadPadding(padding_angstrom));
                }
                if positions_angstrom.is_empty() {
                    return Err(LatticeError::NoAtoms);
                }
                let mut lo = [f64::INFINITY; 3];
                let mut hi = [f64::NEG_INFINITY; 3];
                for p in positions_angstrom {
                    if !p.iter().all(|x| x.is_finite()) {
                        return Err(LatticeError::NotFinite);
                    }
                    for k in 0..3 {
                        lo[k] = lo[k].min(p[k]);
                        hi[k] = hi[k].max(p[k]);
                    }
                }
                // Count points in f64 first, so absurd boxes are refused before any usize cast.
                let mut dims = [0u128; 3];
                for k in 0..3 {
                    let span = hi[k] - lo[k] + 2.0 * padding_angstrom;
                    let n = (span / spacing_angstrom).ceil() + 1.0;
                    if !n.is_finite() {
                        return Err(LatticeError::NotFinite);
                    }
                    dims[k] = n.clamp(1.0, 1e30) as u128;
                }
                check_dims(dims)?;
                Ok(Lattice::around_box(lo, hi, padding_angstrom, spacing_angstrom))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::basis::BasisSet;
    use crate::model::wavefunction::OrbitalSet;

    fn wf(occ: Vec<f64>, spin: SpinKind) -> Wavefunction {
        let n = occ.len();
        let set = OrbitalSet {
            energies_hartree: (0..n).map(|i| i as f64).collect(),
            occupations: occ,
            symmetries: vec![String::new(); n],
            coefficients: vec![0.0; n * n],
            n_basis: n,
        };
        Wavefunction {
            atoms: Vec::new(),
            basis: BasisSet::default(),
            spin,
            alpha: set.clone(),
            beta: (spin == SpinKind::Unrestricted).then_some(set),
            program: None,
            corrections: Vec::new(),
            energy_hartree: None,
            scf_density: None,
        }
    }

    #[test]
    fn parses_and_prints() {
        for text in [
            "mo:homo",
            "mo:lumo+2",
            "mo:homo-1",
            "mo:17",
            "mo:beta:homo",
            "mo:alpha:lumo",
            "mo2:homo",
            "density",
            "spin",
            "esp",
            "molsurf",
        ] {
            let spec: FieldSpec = text.parse().unwrap();
            assert_eq!(spec.to_string(), text);
        }
        assert_eq!(
            "MO:Lumo+2".parse::<FieldSpec>().unwrap(),
            FieldSpec::Orbital {
                spin: None,
                orbital: OrbitalRef::Lumo(2),
                squared: false
            }
        );
        for bad in [
            "",
            "mo:",
            "mo:0",
            "mo:homo+",
            "mo:homo1",
            "mo:x",
            "orbital",
            "mo:gamma:homo",
            "mo:-3",
            "mo:homo+-1",
        ] {
            assert!(bad.parse::<FieldSpec>().is_err(), "{bad:?} parsed");
        }
        // `homo` and `lumo+N` as `render --field` names them.
        assert_eq!(
            "homo".parse::<FieldSpec>().unwrap(),
            "mo:homo".parse::<FieldSpec>().unwrap()
        );
        assert_eq!(
            "LUMO+1".parse::<FieldSpec>().unwrap(),
            "mo:lumo+1".parse::<FieldSpec>().unwrap()
        );
        assert!("homo1".parse::<FieldSpec>().is_err() && "homework".parse::<FieldSpec>().is_err());
        let zero = "mo:0".parse::<FieldSpec>().unwrap_err();
        assert!(zero.message.contains("numbered from 1"), "{}", zero.message);
    }

    #[test]
    fn resolves_against_wavefunction() {
        let w = wf([vec![2.0; 5], vec![0.0; 31]].concat(), SpinKind::Restricted);
        let r = |t: &str| t.parse::<FieldSpec>().unwrap().resolve(Some(&w));
        assert_eq!(
            r("mo:homo"),
            Ok(Field::Orbital {
                spin: Spin::Alpha,
                index: 4
            })
        );
        assert_eq!(
            r("mo:lumo"),
            Ok(Field::Orbital {
                spin: Spin::Alpha,
                index: 5
            })
        );
        assert_eq!(
            r("mo:homo-1"),
            Ok(Field::Orbital {
                spin: Spin::Alpha,
                index: 3
            })
        );
        assert_eq!(
            r("mo:lumo+2"),
            Ok(Field::Orbital {
                spin: Spin::Alpha,
                index: 7
            })
        );
        assert_eq!(
            r("mo:17"),
            Ok(Field::Orbital {
                spin: Spin::Alpha,
                index: 16
            })
        );
        assert_eq!(
            r("mo2:homo"),
            Ok(Field::OrbitalSquared {
                spin: Spin::Alpha,
                index: 4
            })
        );
        assert_eq!(
            r("mo:beta:homo"),
            Ok(Field::Orbital {
                spin: Spin::Beta,
                index: 4
            })
        );
        let e = r("mo:lumo+40").unwrap_err();
        assert!(e.to_string().contains("the wavefunction has 36 orbitals"), "{e}");
        assert!(e.to_string().starts_with("mo:lumo+40: "), "{e}");
        assert!(r("mo:37").is_err());
        assert!(r("mo:homo-5").is_err());
        assert_eq!(r("esp"), Ok(Field::QmPotential));
        assert_eq!("esp".parse::<FieldSpec>().unwrap().resolve(None), Ok(Field::Potential));
        assert!("mo:homo".parse::<FieldSpec>().unwrap().resolve(None).is_err());

        let rohf = wf(vec![2.0, 2.0, 1.0, 0.0], SpinKind::RestrictedOpen);
        let spec: FieldSpec = "mo:beta:homo".parse().unwrap();
        assert_eq!(
            spec.resolve(Some(&rohf)),
            Ok(Field::Orbital {
                spin: Spin::Beta,
                index: 1
            })
        );
        let spec: FieldSpec = "mo:homo".parse().unwrap();
        assert_eq!(
            spec.resolve(Some(&rohf)),
            Ok(Field::Orbital {
                spin: Spin::Alpha,
                index: 2
            })
        );
        let empty = wf(vec![0.0; 3], SpinKind::Restricted);
        assert!(spec.resolve(Some(&empty)).is_err());
    }

    /// Fractional occupations (Fermi smearing): the HOMO is the highest orbital at least half
    /// occupied in its channel, the same for `mo:homo` as for `Wavefunction::homo`, and a tail of
    /// small occupations above it does not move it.
    #[test]
    fn fractional_occupations_have_one_homo() {
        let smeared = wf(vec![2.0, 2.0, 1.2, 0.8, 1e-4, 1e-12, 0.0], SpinKind::Restricted);
        assert_eq!(smeared.homo(Spin::Alpha), Some(2));
        let spec: FieldSpec = "mo:homo".parse().unwrap();
        assert_eq!(
            spec.resolve(Some(&smeared)),
            Ok(Field::Orbital {
                spin: Spin::Alpha,
                index: 2
            })
        );
        let spec: FieldSpec = "mo:lumo".parse().unwrap();
        assert_eq!(
            spec.resolve(Some(&smeared)),
            Ok(Field::Orbital {
                spin: Spin::Alpha,
                index: 3
            })
        );
        // A singly occupied restricted orbital is the HOMO; so is an unrestricted one at 1/2.
        let radical = wf(vec![2.0, 1.0, 0.0], SpinKind::Restricted);
        assert_eq!(radical.homo(Spin::Alpha), Some(1));
        let uhf = wf(vec![1.0, 0.5, 0.2, 0.0], SpinKind::Unrestricted);
        assert_eq!(uhf.homo(Spin::Beta), Some(1));
    }

    #[test]
    fn lattices() {
        let atoms = [[0.0, 0.0, 0.0], [1.0, 2.0, 3.0]];
        let l = LatticeSpec::default().build(&atoms).unwrap();
        assert!(l.n_points() > 1000);
        let huge = LatticeSpec::AroundAtoms {
            spacing_angstrom: 0.001,
            padding_angstrom: 4.0,
        };
        let e = huge.build(&atoms).unwrap_err();
        assert!(e.to_string().contains("GiB"), "{e}");
        let absurd = LatticeSpec::AroundAtoms {
            spacing_angstrom: 1e-300,
            padding_angstrom: 4.0,
        };
        assert!(absurd.build(&atoms).is_err());
        assert!(
            LatticeSpec::AroundAtoms {
                spacing_angstrom: 0.0,
                padding_angstrom: 1.0
            }
            .build(&atoms)
            .is_err()
        );
        assert!(LatticeSpec::default().build(&[]).is_err());
        assert!(LatticeSpec::default().build(&[[f64::NAN, 0.0, 0.0]]).is_err());
        let ex = LatticeSpec::Explicit {
            origin_angstrom: [0.0; 3],
            dims: [usize::MAX, 2, 2],
            spacing_angstrom: 0.1,
        };
        assert!(ex.build(&[]).is_err());
    }
}
