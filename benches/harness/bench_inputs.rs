//! The fixed inputs of `orbitfield bench`: the embedded threonine wavefunction and a synthesised
//! C60 6-31G* (see `assets/bench/README.md`).

use super::bench::Rng;
use anyhow::Result;
use orbitfield::model::basis::{BasisSet, Shell};
use orbitfield::model::units::bohr_from_angstrom;
use orbitfield::model::{Element, OrbitalSet, QmAtom, SpinKind, Wavefunction};

/// C60 with the 6-31G* carbon basis (Cartesian d) and random orbital coefficients.
pub fn synthetic_c60() -> Wavefunction {
    let phi = (1.0 + 5f64.sqrt()) / 2.0;
    let bases = [
        [0.0, 1.0, 3.0 * phi],
        [1.0, 2.0 + phi, 2.0 * phi],
        [phi, 2.0, 2.0 * phi + 1.0],
    ];
    let mut verts: Vec<[f64; 3]> = Vec::new();
    for b in bases {
        for signs in 0..8 {
            let v = [
                if signs & 1 != 0 { -b[0] } else { b[0] },
                if signs & 2 != 0 { -b[1] } else { b[1] },
                if signs & 4 != 0 { -b[2] } else { b[2] },
            ];
            for k in 0..3 {
                let p = [v[k % 3], v[(k + 1) % 3], v[(k + 2) % 3]];
                if !verts.iter().any(|q| (0..3).all(|i| (q[i] - p[i]).abs() < 1e-9)) {
                    verts.push(p);
                }
            }
        }
    }
    // Edge length 2 in these units; carbon-carbon bonds of 1.43 Angstrom.
    let scale = bohr_from_angstrom(1.43) / 2.0;
    let s1 = (
        vec![3047.5249, 457.36951, 103.94869, 29.210155, 9.286663, 3.163927],
        vec![0.0018347, 0.0140373, 0.0688426, 0.2321844, 0.4679413, 0.362312],
    );
    let sp_exp = vec![7.8682724, 1.8812885, 0.5442493];
    let sp_s = vec![-0.1193324, -0.1608542, 1.1434564];
    let sp_p = vec![0.0689991, 0.316424, 0.7443083];
    let mut atoms = Vec::new();
    let mut shells = Vec::new();
    for (i, v) in verts.iter().enumerate() {
        let c = v.map(|x| x * scale);
        atoms.push(QmAtom {
            element: Element(6),
            nuclear_charge: 6.0,
            position_bohr: c,
        });
        let mk = |l: u8, e: &Vec<f64>, k: &Vec<f64>| Shell {
            l,
            pure: false,
            atom: i,
            center_bohr: c,
            exponents: e.clone(),
            coefficients: k.clone(),
        };
        shells.push(mk(0, &s1.0, &s1.1));
        shells.push(mk(0, &sp_exp, &sp_s));
        shells.push(mk(1, &sp_exp, &sp_p));
        shells.push(mk(0, &vec![0.1687144], &vec![1.0]));
        shells.push(mk(1, &vec![0.1687144], &vec![1.0]));
        shells.push(mk(2, &vec![0.8], &vec![1.0]));
    }
    let basis = BasisSet { shells };
    let nbf = basis.n_functions();
    let n_orb = 200.min(nbf);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let coefficients = (0..n_orb * nbf).map(|_| rng.next() * 0.2).collect();
    let alpha = OrbitalSet {
        energies_hartree: (0..n_orb).map(|i| -1.0 + i as f64 * 0.01).collect(),
        occupations: (0..n_orb).map(|i| if i < 180 { 2.0 } else { 0.0 }).collect(),
        symmetries: vec![String::new(); n_orb],
        coefficients,
        n_basis: nbf,
    };
    Wavefunction {
        atoms,
        basis,
        spin: SpinKind::Restricted,
        alpha,
        beta: None,
        program: Some("synthetic".into()),
        corrections: Vec::new(),
        energy_hartree: None,
        scf_density: None,
    }
}

pub(super) fn threonine() -> Result<Wavefunction> {
    crate::kit::threonine().map_err(|e| anyhow::anyhow!("threonine: {e}"))
}
