//! Ion placement on a Coulomb potential map, in the manner of VMD's `cionize`: ions go one at a time
//! to the lattice point of most favourable electrostatic energy `q V` that keeps minimum distances
//! from every atom and every ion placed before, and each placed ion's own Coulomb potential is added
//! to the map before the next one is chosen.
//!
//! Called by the CLI's `ions` command (which computes the map with the `grid esp` methods) and by the
//! tests. Owns the placement ([`place_ions`], a cell list of atoms for the atom-distance test, so the
//! exclusion costs O(points x nearby atoms)) and the PDB text of the result ([`pdb_text`]).
//! Maps and positions are atomic units (hartree/e, bohr); distances in parameters are Angstrom.

use crate::compute::MIN_DISTANCE_BOHR;
use crate::model::units::{angstrom_from_bohr3, bohr_from_angstrom};
use crate::model::{Element, Grid3};

/// What to place, and how far from everything else.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IonParams {
    /// Number of ions.
    pub count: usize,
    /// Charge of each ion in e (non-zero).
    pub charge_e: f64,
    /// No ion closer than this to any atom (Angstrom).
    pub min_distance_atoms_angstrom: f64,
    /// No ion closer than this to another ion (Angstrom).
    pub min_distance_ions_angstrom: f64,
}

/// Why ions could not be placed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum IonError {
    #[error("{0}")]
    BadParams(String),
    #[error("the map has {got} values, its lattice {need} points")]
    MapSize { got: usize, need: usize },
    #[error("atom {atom} has a non-finite position")]
    NotFinite { atom: usize },
    #[error(
        "only {placed} of {wanted} ions fit: no lattice point left that keeps the minimum distances (use a larger lattice (--padding), smaller distances or fewer ions)"
    )]
    NoRoom {
        placed: usize,
        wanted: usize,
        positions_bohr: Vec<[f64; 3]>,
    },
}

/// Placed ions, in placement order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Placement {
    pub positions_bohr: Vec<[f64; 3]>,
    /// `q V` at the chosen point when it was chosen (hartree), including earlier ions' potential.
    pub energies_hartree: Vec<f64>,
}

/// Largest number of ions (PDB serial and residue number columns).
pub const MAX_IONS: usize = 9999;

/// Places `params.count` ions on `map` (potential in hartree/e) around atoms at `atoms_bohr`.
///
/// Each step takes the allowed lattice point with the lowest `q V` (ties: lowest lattice index),
/// excludes the points within the ion-ion distance of it, and adds the ion's potential `q / r` to
/// every point of the map (open boundary, direct sum). Points whose map value is not finite are
/// never chosen.
pub fn place_ions(map: &Grid3, atoms_bohr: &[[f64; 3]], params: &IonParams) -> Result<Placement, IonError> {
    let q = params.charge_e;
    if !(q.is_finite() && q != 0.0) {
        return Err(IonError::BadParams(format!("the ion charge must be non-zero, not {q}")));
    }
    if params.count == 0 || params.count > MAX_IONS {
        return Err(IonError::BadParams(format!(
            "the ion count must be between 1 and {MAX_IONS}, not {}",
            params.count
        )));
    }
    for (name, d) in [
        ("--min-distance-atoms", params.min_distance_atoms_angstrom),
        ("--min-distance-ions", params.min_distance_ions_angstrom),
    ] {
        if !(d.is_finite() && d >= 0.0) {
            return Err(IonError::BadParams(format!(
                "{name} must be a distance >= 0 A, not {d}"
            )));
        }
    }
    let lattice = &map.lattice;
    let n = lattice.n_points();
    if map.values.len() != n {
        return Err(IonError::MapSize {
            got: map.values.len(),
            need: n,
        });
    }
    if let Some(atom) = atoms_bohr.iter().position(|p| !p.iter().all(|x| x.is_finite())) {
        return Err(IonError::NotFinite { atom });
    }
    let [nx, ny, _] = lattice.dims;
    let point = |idx: usize| lattice.point_bohr(idx % nx, (idx / nx) % ny, idx / (nx * ny));
    let d_atoms = bohr_from_angstrom(params.min_distance_atoms_angstrom);
    let d_ions = bohr_from_angstrom(params.min_distance_ions_angstrom);

    let mut potential: Vec<f64> = map.values.iter().map(|&v| f64::from(v)).collect();
    let mut allowed: Vec<bool> = potential.iter().map(|v| v.is_finite()).collect();
    if d_atoms > 0.0 && !atoms_bohr.is_empty() {
        // Every atom closer than the distance to a point is in the cells around it.
        let cells = super::cells::CellList::new(atoms_bohr, |_| true, d_atoms);
        let d2 = d_atoms * d_atoms;
        for (idx, a) in allowed.iter_mut().enumerate() {
            let p = point(idx);
            if *a
                && cells.near(p).any(|i| {
                    let q = atoms_bohr[i];
                    (q[0] - p[0]).powi(2) + (q[1] - p[1]).powi(2) + (q[2] - p[2]).powi(2) < d2
                })
            {
                *a = false;
            }
        }
    }

    let mut placement = Placement::default();
    for _ in 0..params.count {
        let mut best: Option<(usize, f64)> = None;
        for (idx, (&ok, &v)) in allowed.iter().zip(&potential).enumerate() {
            if ok && best.is_none_or(|(_, e)| q * v < e) {
                best = Some((idx, q * v));
            }
        }
        let Some((idx, energy)) = best else {
            return Err(IonError::NoRoom {
                placed: placement.positions_bohr.len(),
                wanted: params.count,
                positions_bohr: placement.positions_bohr,
            });
        };
        let p = point(idx);
        placement.positions_bohr.push(p);
        placement.energies_hartree.push(energy);
        let d2_ions = d_ions * d_ions;
        for (i, (v, a)) in potential.iter_mut().zip(allowed.iter_mut()).enumerate() {
            let x = point(i);
            let r2 = (x[0] - p[0]).powi(2) + (x[1] - p[1]).powi(2) + (x[2] - p[2]).powi(2);
            if r2 < d2_ions || i == idx {
                *a = false;
            }
            *v += q / r2.sqrt().max(MIN_DISTANCE_BOHR);
        }
    }
    Ok(placement)
}

/// PDB text for ions of `element` and charge `charge_e` at `positions_bohr`: one HETATM record each
/// (atom and residue name the element symbol, chain `I`, segment `ION`, sequential serial and residue
/// numbers from 1), then END. At most [`MAX_IONS`] ions are written.
pub fn pdb_text(positions_bohr: &[[f64; 3]], element: Element, charge_e: f64) -> String {
    use std::fmt::Write;
    let symbol = element.symbol().to_ascii_uppercase();
    // Atom names: two-letter symbols start in column 13, one-letter ones in column 14.
    let atom_name = if symbol.len() >= 2 {
        format!("{symbol:<4}")
    } else {
        format!(" {symbol:<3}")
    };
    let charge_field = if charge_e.fract() == 0.0 && charge_e.abs() >= 1.0 && charge_e.abs() <= 9.0 {
        format!("{}{}", charge_e.abs() as u32, if charge_e > 0.0 { '+' } else { '-' })
    } else {
        "  ".to_string()
    };
    let mut s = String::new();
    let _ = writeln!(
        s,
        "REMARK   placed by orbitfield {}: {} ions of charge {charge_e:+} e",
        env!("CARGO_PKG_VERSION"),
        positions_bohr.len().min(MAX_IONS)
    );
    for (i, &p) in positions_bohr.iter().take(MAX_IONS).enumerate() {
        let a = angstrom_from_bohr3(p);
        let _ = writeln!(
            s,
            "HETATM{:>5} {atom_name}{:>4} I{:>4}    {:>8.3}{:>8.3}{:>8.3}{:>6.2}{:>6.2}      {:<4}{:>2}{charge_field}",
            i + 1,
            &symbol[..symbol.len().min(3)],
            i + 1,
            a[0],
            a[1],
            a[2],
            1.0,
            0.0,
            "ION",
            &symbol[..symbol.len().min(2)],
        );
    }
    s.push_str("END\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pdb_columns() {
        let text = pdb_text(&[[0.0; 3]], Element::from_symbol("Na").unwrap(), 1.0);
        let line = text.lines().nth(1).unwrap();
        assert_eq!(&line[0..6], "HETATM");
        assert_eq!(&line[6..11], "    1");
        assert_eq!(&line[12..16], "NA  ");
        assert_eq!(&line[17..20], " NA");
        assert_eq!(&line[21..22], "I");
        assert_eq!(&line[22..26], "   1");
        assert_eq!(&line[30..38], "   0.000");
        assert_eq!(&line[72..76], "ION ");
        assert_eq!(&line[76..78], "NA");
        assert_eq!(&line[78..80], "1+");
    }
}
