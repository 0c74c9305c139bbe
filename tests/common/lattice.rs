//! Lattices around a molecule for the engine comparison tests.
#![allow(dead_code)]

use orbitfield::model::{Lattice, Wavefunction};

/// A lattice around the molecule (3 bohr margin), `n` points per axis; `shear` tilts the z axis.
pub fn lattice_around(wf: &Wavefunction, n: usize, shear: bool) -> Lattice {
    let mut lo = [f64::MAX; 3];
    let mut hi = [f64::MIN; 3];
    for a in &wf.atoms {
        for k in 0..3 {
            lo[k] = lo[k].min(a.position_bohr[k] - 3.0);
            hi[k] = hi[k].max(a.position_bohr[k] + 3.0);
        }
    }
    let s: Vec<f64> = (0..3).map(|k| (hi[k] - lo[k]) / (n as f64 - 1.0)).collect();
    let mut steps = [[s[0], 0.0, 0.0], [0.0, s[1], 0.0], [0.0, 0.0, s[2]]];
    if shear {
        steps[2] = [0.3 * s[2], -0.2 * s[2], s[2]];
    }
    // A deliberately odd count on one axis exercises partial bricks.
    Lattice {
        origin_bohr: lo,
        steps_bohr: steps,
        dims: [n, n - 3, n + 1],
    }
}
