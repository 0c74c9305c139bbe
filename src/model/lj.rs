//! Lennard-Jones parameters of atoms and probes for implicit ligand sampling (ILS).
//!
//! Owns [`LjParams`] (one atom's well depth and half minimum distance, CHARMM's convention), the
//! pair rule of ILS (eps_ij = sqrt(eps_i eps_j), R_ij = rmin_i/2 + rmin_j/2, U = eps_ij [(R/r)^12 -
//! 2 (R/r)^6]), the element table used where a topology carries no parameters ([`element_lj`]), and
//! [`Probe`]: the built-in gas probes (Xe, O2, CO, NO with the CHARMM parameters of Cohen et al.
//! 2006) and probes read from an XYZ-like file. Readers in `io` fill parameters from AMBER prmtop
//! and CHARMM parameter files (`io::ils_params`; GROMACS c6/c12 convert with
//! [`LjParams::from_gromacs_c6_c12`], but the TPR reader does not pass them on yet); the engines in
//! `compute` and the `grid ils` command read them.

use super::element::Element;

/// Boltzmann's constant times Avogadro's number in kcal/(mol K) (R = 8.314462618 J/(mol K) / 4184).
pub const GAS_CONSTANT_KCAL_PER_MOL_KELVIN: f64 = 8.314_462_618 / 4184.0;

/// kT in kcal/mol at `temperature_kelvin`.
pub fn kt_kcal_per_mol(temperature_kelvin: f64) -> f64 {
    GAS_CONSTANT_KCAL_PER_MOL_KELVIN * temperature_kelvin
}

/// One atom's Lennard-Jones parameters: the well depth (a positive number; CHARMM files write it
/// negative) and half the distance of the minimum.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct LjParams {
    pub eps_kcal_per_mol: f64,
    pub rmin_half_angstrom: f64,
}

impl LjParams {
    /// From a well depth in either sign convention (the magnitude is kept) and rmin/2.
    pub fn new(eps_kcal_per_mol: f64, rmin_half_angstrom: f64) -> LjParams {
        LjParams {
            eps_kcal_per_mol: eps_kcal_per_mol.abs(),
            rmin_half_angstrom,
        }
    }

    /// From AMBER's A and B coefficients of a type with itself (U = A/r^12 - B/r^6, kcal/mol and
    /// Angstrom): eps = B^2/(4A), rmin = (2A/B)^(1/6). A type without dispersion (A or B zero, as
    /// TIP3P hydrogens) has eps = 0 and rmin = 0.
    pub fn from_amber_ab(a: f64, b: f64) -> LjParams {
        if a > 0.0 && b > 0.0 && a.is_finite() && b.is_finite() {
            LjParams {
                eps_kcal_per_mol: b * b / (4.0 * a),
                rmin_half_angstrom: 0.5 * (2.0 * a / b).powf(1.0 / 6.0),
            }
        } else {
            LjParams::default()
        }
    }

    /// From GROMACS c6 and c12 (kJ/mol nm^6, kJ/mol nm^12; U = c12/r^12 - c6/r^6).
    pub fn from_gromacs_c6_c12(c6: f64, c12: f64) -> LjParams {
        // A (kcal/mol A^12) = c12 * 1e12 / 4.184; B = c6 * 1e6 / 4.184.
        LjParams::from_amber_ab(c12 * 1e12 / 4.184, c6 * 1e6 / 4.184)
    }

    /// True when the parameters are finite and not negative.
    pub fn is_valid(&self) -> bool {
        self.eps_kcal_per_mol.is_finite()
            && self.eps_kcal_per_mol >= 0.0
            && self.rmin_half_angstrom.is_finite()
            && self.rmin_half_angstrom >= 0.0
    }
}

/// The pair energy in kcal/mol of atoms `a` and `b` at squared distance `r2_angstrom2` (no cutoff).
pub fn pair_energy_kcal_per_mol(a: LjParams, b: LjParams, r2_angstrom2: f64) -> f64 {
    let eps = (a.eps_kcal_per_mol * b.eps_kcal_per_mol).sqrt();
    let r = a.rmin_half_angstrom + b.rmin_half_angstrom;
    let s6 = (r * r / r2_angstrom2).powi(3);
    eps * (s6 * s6 - 2.0 * s6)
}

/// Lennard-Jones parameters by element where a file gives none: the Universal Force Field (Rappe et
/// al., J. Am. Chem. Soc. 114:10024, 1992), D_i as the well depth and x_i/2 as rmin/2. `None` for
/// elements outside the table.
pub fn element_lj(element: Element) -> Option<LjParams> {
    let (x, d) = match element.symbol() {
        "H" => (2.886, 0.044),
        "He" => (2.362, 0.056),
        "Li" => (2.451, 0.025),
        "B" => (4.083, 0.180),
        "C" => (3.851, 0.105),
        "N" => (3.660, 0.069),
        "O" => (3.500, 0.060),
        "F" => (3.364, 0.050),
        "Ne" => (3.243, 0.042),
        "Na" => (2.983, 0.030),
        "Mg" => (3.021, 0.111),
        "Si" => (4.295, 0.402),
        "P" => (4.147, 0.305),
        "S" => (4.035, 0.274),
        "Cl" => (3.947, 0.227),
        "Ar" => (3.868, 0.185),
        "K" => (3.812, 0.035),
        "Ca" => (3.399, 0.238),
        "Mn" => (2.961, 0.013),
        "Fe" => (2.912, 0.013),
        "Co" => (2.872, 0.014),
        "Ni" => (2.834, 0.015),
        "Cu" => (3.495, 0.005),
        "Zn" => (2.763, 0.124),
        "Se" => (4.205, 0.291),
        "Br" => (4.189, 0.251),
        "Kr" => (4.141, 0.220),
        "I" => (4.500, 0.339),
        "Xe" => (4.404, 0.332),
        _ => return None,
    };
    Some(LjParams::new(d, 0.5 * x))
}

/// One atom of a probe: where it sits relative to the probe's centre, and its parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProbeAtom {
    pub element: Element,
    /// Offset from the probe's centre (the mean of its atoms' positions), Angstrom.
    pub offset_angstrom: [f64; 3],
    pub lj: LjParams,
}

/// A small, weakly interacting ligand: its atoms about its centre.
#[derive(Clone, Debug, PartialEq)]
pub struct Probe {
    pub name: String,
    pub atoms: Vec<ProbeAtom>,
}

/// Why a probe file could not be read.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ProbeError {
    #[error("{path}:{line}: {message}")]
    Line { path: String, line: usize, message: String },
    #[error(
        "unknown probe '{0}': expected xe, o2, co, no or a probe file (XYZ: count, comment, then `element x y z eps rmin/2` per atom)"
    )]
    Unknown(String),
}

impl Probe {
    /// A probe from atoms at positions (Angstrom, any origin): the centre becomes the mean position.
    pub fn from_positions(name: &str, atoms: &[(Element, [f64; 3], LjParams)]) -> Probe {
        let n = atoms.len().max(1) as f64;
        let mut c = [0.0; 3];
        for (_, p, _) in atoms {
            for k in 0..3 {
                c[k] += p[k] / n;
            }
        }
        Probe {
            name: name.to_string(),
            atoms: atoms
                .iter()
                .map(|&(element, p, lj)| ProbeAtom {
                    element,
                    offset_angstrom: [p[0] - c[0], p[1] - c[1], p[2] - c[2]],
                    lj,
                })
                .collect(),
        }
    }

    /// A diatomic along z with the bond length `bond_angstrom`.
    fn diatomic(name: &str, a: (Element, LjParams), b: (Element, LjParams), bond_angstrom: f64) -> Probe {
        Probe::from_positions(name, &[(a.0, [0.0; 3], a.1), (b.0, [0.0, 0.0, bond_angstrom], b.1)])
    }

    /// A built-in probe by name (`xe`, `o2`, `co`, `no`, any case), with the CHARMM parameters of
    /// Cohen et al. (2006).
    pub fn builtin(name: &str) -> Option<Probe> {
        let o = (Element::O, LjParams::new(-0.12, 1.70));
        let p = match name.to_ascii_lowercase().as_str() {
            "xe" => Probe::from_positions("Xe", &[(Element(54), [0.0; 3], LjParams::new(-0.494, 2.24))]),
            "o2" => Probe::diatomic("O2", o, o, 1.23),
            "co" => Probe::diatomic("CO", (Element::C, LjParams::new(-0.11, 2.10)), o, 1.13),
            "no" => Probe::diatomic("NO", (Element::N, LjParams::new(-0.20, 1.85)), o, 1.15),
            _ => return None,
        };
        Some(p)
    }

    /// Parses a probe file: a count line, a comment line, then one `element x y z eps rmin/2` line
    /// per atom (Angstrom, kcal/mol in either sign, Angstrom). `path` names the file in messages.
    pub fn parse_xyz(path: &str, text: &str) -> Result<Probe, ProbeError> {
        let err = |line: usize, message: String| ProbeError::Line {
            path: path.to_string(),
            line,
            message,
        };
        let mut lines = text.lines();
        let count_text = lines.next().unwrap_or("").trim();
        let count: usize = count_text
            .parse()
            .map_err(|_| err(1, format!("expected the number of atoms, found '{count_text}'")))?;
        if count == 0 || count > 64 {
            return Err(err(1, format!("expected between 1 and 64 atoms, found {count}")));
        }
        let name = lines.next().unwrap_or("").trim();
        let name = if name.is_empty() { "probe" } else { name };
        let mut atoms = Vec::with_capacity(count);
        for k in 0..count {
            let line_no = k + 3;
            let line = lines.next().ok_or_else(|| {
                err(
                    line_no,
                    format!("expected atom {} of {count}, found the end of the file", k + 1),
                )
            })?;
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields.len() != 6 {
                return Err(err(
                    line_no,
                    format!(
                        "expected `element x y z eps rmin/2` (6 fields), found {} in '{}'",
                        fields.len(),
                        line.trim()
                    ),
                ));
            }
            let element = Element::from_symbol(fields[0])
                .ok_or_else(|| err(line_no, format!("expected an element symbol, found '{}'", fields[0])))?;
            let mut v = [0.0f64; 5];
            for (slot, (text, what)) in v
                .iter_mut()
                .zip(fields[1..].iter().zip(["x", "y", "z", "eps", "rmin/2"]))
            {
                *slot = text
                    .parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite())
                    .ok_or_else(|| err(line_no, format!("expected a number for {what}, found '{text}'")))?;
            }
            if v[4] <= 0.0 {
                return Err(err(line_no, format!("expected a positive rmin/2, found {}", v[4])));
            }
            atoms.push((element, [v[0], v[1], v[2]], LjParams::new(v[3], v[4])));
        }
        Ok(Probe::from_positions(name, &atoms))
    }

    /// The largest distance of a probe atom from the centre, Angstrom.
    pub fn radius_angstrom(&self) -> f64 {
        self.atoms.iter().map(|a| norm(a.offset_angstrom)).fold(0.0, f64::max)
    }

    /// True when the probe is its own image under inversion through its centre (O2, Xe): orientation
    /// d and -d give the same configuration.
    pub fn is_inversion_symmetric(&self) -> bool {
        self.atoms.iter().all(|a| {
            self.atoms
                .iter()
                .any(|b| b.lj == a.lj && (0..3).all(|k| (b.offset_angstrom[k] + a.offset_angstrom[k]).abs() < 1e-9))
        })
    }

    /// The unit axis of a linear probe (all atoms on one line through the centre), `None` for a
    /// single atom or a non-linear probe.
    pub fn linear_axis(&self) -> Option<[f64; 3]> {
        let far = self.atoms.iter().max_by(|a, b| {
            norm(a.offset_angstrom)
                .partial_cmp(&norm(b.offset_angstrom))
                .unwrap_or(std::cmp::Ordering::Equal)
        })?;
        let len = norm(far.offset_angstrom);
        if len < 1e-9 {
            return None;
        }
        let axis = far.offset_angstrom.map(|x| x / len);
        let on_line = self.atoms.iter().all(|a| {
            let t = dot(a.offset_angstrom, axis);
            (0..3).all(|k| (a.offset_angstrom[k] - t * axis[k]).abs() < 1e-6)
        });
        on_line.then_some(axis)
    }
}

pub(crate) fn norm(v: [f64; 3]) -> f64 {
    dot(v, v).sqrt()
}

pub(crate) fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amber_ab_round_trip() {
        let p = LjParams::new(0.152, 1.7683);
        let r = 2.0 * p.rmin_half_angstrom;
        let a = p.eps_kcal_per_mol * r.powi(12);
        let b = 2.0 * p.eps_kcal_per_mol * r.powi(6);
        let q = LjParams::from_amber_ab(a, b);
        assert!((q.eps_kcal_per_mol - 0.152).abs() < 1e-12);
        assert!((q.rmin_half_angstrom - 1.7683).abs() < 1e-12);
        // The minimum of the pair energy is -eps at R.
        let u = pair_energy_kcal_per_mol(p, p, r * r);
        assert!((u + 0.152).abs() < 1e-12);
    }

    #[test]
    fn probes() {
        let o2 = Probe::builtin("O2").unwrap();
        assert!(o2.is_inversion_symmetric());
        assert!((o2.radius_angstrom() - 0.615).abs() < 1e-12);
        assert!(o2.linear_axis().is_some());
        let co = Probe::builtin("co").unwrap();
        assert!(!co.is_inversion_symmetric());
        let xe = Probe::builtin("xe").unwrap();
        assert!(xe.is_inversion_symmetric() && xe.linear_axis().is_none());
        assert!(Probe::builtin("he").is_none());
        let bad = Probe::parse_xyz("p.xyz", "2\nx\nO 0 0 0 -0.12 1.7\nO 0 0 1.2 -0.12\n");
        let msg = bad.unwrap_err().to_string();
        assert!(msg.starts_with("p.xyz:4: expected `element x y z eps rmin/2`"), "{msg}");
        let good = Probe::parse_xyz("p.xyz", "2\nmy O2\nO 0 0 0 -0.12 1.7\nO 0 0 1.23 -0.12 1.7\n").unwrap();
        assert_eq!(good.atoms, o2.atoms);
    }
}
