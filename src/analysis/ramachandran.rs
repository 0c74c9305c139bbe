//! Backbone dihedrals phi and psi of each protein residue at one frame (the Ramachandran plot):
//! phi(i) = C(i-1)-N(i)-CA(i)-C(i), psi(i) = N(i)-CA(i)-C(i)-N(i+1), in degrees (-180..180, IUPAC
//! sign), defined where the neighbour is in the same chain and joined by a peptide bond (C-N at most
//! 2.5 Å, as DSSP's backbone takes it) and every atom has a finite position.

use super::dssp::ProteinBackbone;
use crate::model::Structure;

/// Longest C(i-1)-N(i) distance (Å) of a peptide bond.
const MAX_PEPTIDE_BOND_ANGSTROM: f64 = 2.5;

/// One protein residue's point.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PhiPsi {
    /// Index of the residue among all residues of the structure (`Structure::residue_starts`).
    pub residue: usize,
    /// Its CA atom.
    pub ca: u32,
    pub phi_degree: Option<f64>,
    pub psi_degree: Option<f64>,
}

/// The dihedral a-b-c-d about b-c in degrees (-180..180, IUPAC sign: positive is clockwise looking
/// from b to c).
pub fn dihedral_degree(a: [f64; 3], b: [f64; 3], c: [f64; 3], d: [f64; 3]) -> f64 {
    let sub = |p: [f64; 3], q: [f64; 3]| [p[0] - q[0], p[1] - q[1], p[2] - q[2]];
    let dot = |p: [f64; 3], q: [f64; 3]| p[0] * q[0] + p[1] * q[1] + p[2] * q[2];
    let cross = |p: [f64; 3], q: [f64; 3]| {
        [
            p[1] * q[2] - p[2] * q[1],
            p[2] * q[0] - p[0] * q[2],
            p[0] * q[1] - p[1] * q[0],
        ]
    };
    let (b1, b2, b3) = (sub(b, a), sub(c, b), sub(d, c));
    let (n1, n2) = (cross(b1, b2), cross(b2, b3));
    let y = dot(b2, b2).sqrt() * dot(b1, n2);
    y.atan2(dot(n1, n2)).to_degrees()
}

/// Phi and psi of every protein residue of `backbone` that has N, CA and C, at `positions`.
pub fn phi_psi(backbone: &ProteinBackbone, positions_angstrom: &[[f32; 3]]) -> Vec<PhiPsi> {
    let at = |i: Option<u32>| -> Option<[f64; 3]> {
        let p = positions_angstrom.get(i? as usize)?;
        p.iter().all(|x| x.is_finite()).then(|| p.map(f64::from))
    };
    let linked = |c: Option<[f64; 3]>, n: Option<[f64; 3]>| -> bool {
        match (c, n) {
            (Some(c), Some(n)) => {
                let d2: f64 = (0..3).map(|k| (c[k] - n[k]).powi(2)).sum();
                d2 <= MAX_PEPTIDE_BOND_ANGSTROM * MAX_PEPTIDE_BOND_ANGSTROM
            }
            _ => false,
        }
    };
    let res = &backbone.residues;
    let mut out = Vec::with_capacity(res.len());
    for (k, r) in res.iter().enumerate() {
        let (Some(n), Some(ca), Some(c), Some(ca_atom)) = (at(r.n), at(r.ca), at(r.c), r.ca) else {
            continue;
        };
        let prev = k.checked_sub(1).and_then(|j| res.get(j)).filter(|p| p.chain == r.chain);
        let next = res.get(k + 1).filter(|q| q.chain == r.chain);
        let prev_c = prev.and_then(|p| at(p.c)).filter(|&pc| linked(Some(pc), Some(n)));
        let next_n = next.and_then(|q| at(q.n)).filter(|&qn| linked(Some(c), Some(qn)));
        out.push(PhiPsi {
            residue: r.residue,
            ca: ca_atom,
            phi_degree: prev_c.map(|pc| dihedral_degree(pc, n, ca, c)),
            psi_degree: next_n.map(|qn| dihedral_degree(n, ca, c, qn)),
        });
    }
    out
}

/// "GLY", "PRO" or another residue name: what colours a residue's point (glycine and proline
/// have their own regions).
pub fn residue_class(s: &Structure, residue_starts: &[usize], residue: usize) -> &'static str {
    let name = residue_starts
        .get(residue)
        .and_then(|&a| s.resnames.get(a))
        .map_or("", |n| n.as_str());
    match name {
        "GLY" => "GLY",
        "PRO" => "PRO",
        _ => "other",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dihedral_sign_and_values_are_iupac_s() {
        // Trans (180), cis (0), and +/-60 about the x axis.
        let (b, c) = ([0.0, 0.0, 0.0], [1.5, 0.0, 0.0]);
        let a = [-0.5, 1.0, 0.0];
        let at = |deg: f64| {
            let t = deg.to_radians();
            [2.0, t.cos(), t.sin()]
        };
        for deg in [180.0, 0.0, 60.0, -60.0, 123.4, -170.0] {
            let got = dihedral_degree(a, b, c, at(deg));
            let diff = (got - deg + 540.0).rem_euclid(360.0) - 180.0;
            assert!(diff.abs() < 1e-9, "{deg}: {got}");
        }
    }
}
