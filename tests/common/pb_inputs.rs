//! Shared by the CUDA Poisson-Boltzmann test files: the test data's root (`ORBITFIELD_TEST_ROOT` on the
//! device machine), numbers from a clock-seeded generator (the seed printed), adk's PQR atoms and
//! the centre of atoms' bounding box.

#![allow(dead_code)]

use orbitfield::compute::pb::PbAtoms;
use std::path::PathBuf;

/// `tests/data/PATH` under `ORBITFIELD_TEST_ROOT`, else under the crate.
pub fn data(path: &str) -> PathBuf {
    let root = std::env::var_os("ORBITFIELD_TEST_ROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    root.join("tests/data").join(path)
}

/// Uniform numbers in [0, 1) from a xorshift seeded by the clock (printed).
pub fn numbers() -> impl FnMut() -> f64 {
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64);
    println!("seed {seed}");
    let mut s = seed | 1;
    move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// adk (3,341 atoms) with its PQR charges and radii, frame 0.
pub fn adk() -> PbAtoms {
    let system = orbitfield::io::load(&[data("md/adk_open.pqr")]).unwrap();
    let s = &system.structure;
    let charges: Vec<f64> = s.charges_e.as_ref().unwrap().iter().map(|&q| f64::from(q)).collect();
    let radii: Vec<f64> = s
        .radii_angstrom
        .as_ref()
        .unwrap()
        .iter()
        .map(|&r| f64::from(r))
        .collect();
    let mut t = system.trajectory;
    let f = t.frame(0).unwrap();
    PbAtoms {
        positions_angstrom: f.positions_angstrom.iter().map(|p| p.map(f64::from)).collect(),
        charges_e: charges,
        radii_angstrom: radii,
    }
}

/// The centre of the atoms' bounding box (Angstrom).
pub fn centre(atoms: &PbAtoms) -> [f64; 3] {
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for p in &atoms.positions_angstrom {
        for k in 0..3 {
            lo[k] = lo[k].min(p[k]);
            hi[k] = hi[k].max(p[k]);
        }
    }
    std::array::from_fn(|k| 0.5 * (lo[k] + hi[k]))
}
