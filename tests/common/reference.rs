//! Reference value files (`*.ref.txt[.gz]`): points (x y z in Angstrom) and columns of orbital
//! values and densities in atomic units, named in a `# columns:` header line
//! (`homo(alpha,mo_index_1based=5)`, `beta_lumo(beta,mo_index_1based=9)`, `total_density`,
//! `spin_density`, `rerun_density`, ...). Shared by the tests that compare with independent
//! references.
#![allow(dead_code)]

use orbitfield::compute::Field;
use orbitfield::io;
use orbitfield::model::Spin;
use orbitfield::model::units::bohr_from_angstrom3;
use std::path::Path;

pub struct Reference {
    pub points_bohr: Vec<[f64; 3]>,
    /// (column name, field, values)
    pub columns: Vec<(String, Field, Vec<f64>)>,
}

pub fn parse_reference(path: &Path) -> Reference {
    let t = String::from_utf8(io::read_bytes(path).unwrap()).unwrap();
    let header = t.lines().find(|l| l.starts_with("# columns:")).expect("columns header");
    let spec = header
        .split("(Angstrom)")
        .nth(1)
        .unwrap()
        .split("(atomic units)")
        .next()
        .unwrap();
    let mut fields = Vec::new();
    for tok in spec.split_whitespace() {
        let name = tok.to_string();
        let field = if tok.ends_with("spin_density") {
            Field::SpinDensity
        } else if tok.ends_with("density") {
            Field::Density
        } else {
            let idx: usize = tok
                .split("mo_index_1based=")
                .nth(1)
                .unwrap()
                .trim_end_matches(')')
                .parse()
                .unwrap();
            let spin = if tok.starts_with("beta") || tok.contains("(beta") {
                Spin::Beta
            } else {
                Spin::Alpha
            };
            Field::Orbital { spin, index: idx - 1 }
        };
        fields.push((name, field));
    }
    let mut points = Vec::new();
    let mut values: Vec<Vec<f64>> = vec![Vec::new(); fields.len()];
    for l in t.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
        let v: Vec<f64> = l.split_whitespace().map(|x| x.parse().unwrap()).collect();
        assert_eq!(v.len(), 3 + fields.len());
        points.push(bohr_from_angstrom3([v[0], v[1], v[2]]));
        for (k, col) in values.iter_mut().enumerate() {
            col.push(v[3 + k]);
        }
    }
    Reference {
        points_bohr: points,
        columns: fields.into_iter().zip(values).map(|((n, f), v)| (n, f, v)).collect(),
    }
}

/// Relative 2-norm error of `got` against `want` (orbitals up to their arbitrary sign).
pub fn relative_error(field: &Field, got: &[f64], want: &[f64]) -> f64 {
    let norm: f64 = want.iter().map(|x| x * x).sum::<f64>().sqrt();
    let diff = |s: f64| {
        got.iter()
            .zip(want)
            .map(|(g, w)| (s * g - w).powi(2))
            .sum::<f64>()
            .sqrt()
    };
    let d = match field {
        Field::Orbital { .. } => diff(1.0).min(diff(-1.0)),
        _ => diff(1.0),
    };
    if norm > 0.0 { d / norm } else { d }
}
