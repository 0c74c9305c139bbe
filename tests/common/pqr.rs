//! Shared by the Poisson-Boltzmann test files that read APBS's inputs and outputs in
//! `tests/data/pb`: a file there, a gzip'd file's text, and a PQR file's atoms.

use orbitfield::compute::pb::PbAtoms;
use std::io::Read;
use std::path::PathBuf;

/// `tests/data/pb/NAME`.
pub fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/pb")
        .join(name)
}

/// The text of the gzip'd file `tests/data/pb/NAME`.
pub fn gunzip(name: &str) -> String {
    let f = std::fs::File::open(data(name)).unwrap();
    let mut s = String::new();
    flate2::read::GzDecoder::new(f).read_to_string(&mut s).unwrap();
    s
}

/// Positions, charges and radii: the last five fields of ATOM/HETATM lines (as APBS reads them).
pub fn read_pqr(name: &str) -> PbAtoms {
    let mut atoms = PbAtoms::default();
    for line in gunzip(name).lines() {
        if !(line.starts_with("ATOM") || line.starts_with("HETATM")) {
            continue;
        }
        let f: Vec<f64> = line
            .split_whitespace()
            .rev()
            .take(5)
            .map(|v| v.parse().unwrap())
            .collect();
        atoms.positions_angstrom.push([f[4], f[3], f[2]]);
        atoms.charges_e.push(f[1]);
        atoms.radii_angstrom.push(f[0]);
    }
    atoms
}
