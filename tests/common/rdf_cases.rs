//! RDF test cases shared by `tests/analysis.rs` (the GPU kernel's arithmetic emulated on the CPU) and
//! `tests/gpu_engine.rs` (the kernel itself): random frames in an open space and in orthorhombic,
//! triclinic and truncated-octahedron cells, with and without same-group exclusions, and the check
//! of counts against the CPU engine's.

#![allow(dead_code)]

use orbitfield::analysis::rdf::RdfSettings;
use orbitfield::model::{Frame, UnitCell};

/// A 64-bit LCG: uniform in [0, 1).
pub fn lcg(state: &mut u64) -> f64 {
    *state = state
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (*state >> 11) as f64 / (1u64 << 53) as f64
}

/// A seed from the clock, printed so a failure can be replayed.
pub fn clock_seed() -> u64 {
    let s = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(3);
    println!("seed {s}");
    s
}

/// One frame to histogram.
pub struct RdfCase {
    pub name: String,
    pub frame: Frame,
    pub sel1: Vec<u32>,
    pub sel2: Vec<u32>,
    /// Group ids (three atoms per group) when exclusions are on.
    pub groups: Option<Vec<u32>>,
    pub settings: RdfSettings,
}

/// r_max of every case (below half the smallest cell width of every cell used).
pub const R_MAX: f64 = 13.0;

/// The cases: every cell with `plain` = (n1, n2) atoms in 97 bins, and with `excluded` = (n1, n2)
/// atoms in 2000 bins with exclusions; atoms uniform in a 45 A cube (beyond the cells: wrapping is
/// part of what is tested).
pub fn kernel_cases(seed: &mut u64, plain: (usize, usize), excluded: (usize, usize)) -> Vec<RdfCase> {
    let cells = [
        None,
        Some(UnitCell::orthorhombic([31.0, 27.0, 35.0])),
        Some(UnitCell::new([33.0, 35.0, 32.0], [70.0, 100.0, 65.0])),
        // A truncated-octahedron-like cell, as GROMACS writes it.
        Some(UnitCell::new([40.0, 40.0, 40.0], [70.53, 109.47, 70.53])),
    ];
    let mut out = Vec::new();
    for (k, cell) in cells.into_iter().enumerate() {
        for ((n1, n2), bins, groups) in [(plain, 97usize, false), (excluded, 2000, true)] {
            let n = n1.max(n2);
            let positions: Vec<[f32; 3]> = (0..n)
                .map(|_| [0; 3].map(|_| (45.0 * lcg(seed) - 5.0) as f32))
                .collect();
            out.push(RdfCase {
                name: format!("case {k} ({n1}x{n2}, {bins} bins, groups {groups})"),
                frame: Frame {
                    positions_angstrom: positions,
                    cell,
                    ..Frame::default()
                },
                sel1: (0..n1 as u32).collect(),
                sel2: (0..n2 as u32).rev().collect(),
                groups: groups.then(|| (0..n as u32).map(|i| i / 3).collect()),
                settings: RdfSettings {
                    r_max_angstrom: R_MAX,
                    bins,
                    exclude_same_group: groups,
                },
            });
        }
    }
    out
}

/// f32 against f64: a pair within ~6e-5 A of a bin edge may land in the neighbouring bin (f32
/// rounding of coordinates up to ~90 A, as the skewed boxes' atoms placed up to twice outside their
/// cell reach, through the wrap and the pair's difference), so the allowance grows with the number
/// of bins per Angstrom. A wrong minimum image moves whole shells of pairs, far past it.
pub fn assert_counts_close(got: &[u64], want: &[u64], r_max: f64, what: &str) {
    let total: u64 = want.iter().sum();
    let got_total: u64 = got.iter().sum();
    let edge_fraction = 2.0 * 6e-5 * got.len() as f64 / r_max;
    assert!(
        got_total.abs_diff(total) as f64 <= 2.0 + 1e-5 * total as f64,
        "{what}: {got_total} pairs within r_max, the CPU finds {total}"
    );
    let moved: u64 = got.iter().zip(want).map(|(a, b)| a.abs_diff(*b)).sum();
    assert!(
        moved as f64 <= 2.0 + edge_fraction * total as f64,
        "{what}: {moved} of {total} pairs in a different bin\n got {got:?}\nwant {want:?}"
    );
}

/// Frames for the cell-list path against all pairs: random orthorhombic boxes (r_max from 0.15 of
/// the box to just under half of it, where fewer than 3 cells per side force all pairs), open
/// boundaries, identical and different selections, exclusions, clustered atoms and atoms on a cubic
/// lattice whose spacing divides r_max (pairs exactly at r_max and on bin edges). `n` atoms per frame.
pub fn cell_list_cases(seed: &mut u64, n: usize) -> Vec<RdfCase> {
    let mut out = Vec::new();
    for k in 0..10 {
        let side = [0; 3].map(|_| 25.0 + 40.0 * lcg(seed));
        let min_side = side.iter().copied().fold(f64::INFINITY, f64::min);
        let r_max = match k % 5 {
            0 => 0.49 * min_side,
            1 => 0.34 * min_side,
            2 => 0.26 * min_side,
            // At least 0.15 of the smallest side: over a thousand pairs even in the sparsest open box.
            _ => min_side * (0.15 + 0.08 * lcg(seed)),
        };
        let open = k == 4 || k == 9;
        let identical = k % 2 == 0;
        let groups = k % 3 == 1;
        let clustered = k == 3 || k == 8;
        let lattice = k == 6;
        let positions: Vec<[f32; 3]> = (0..n)
            .map(|i| {
                if lattice {
                    let a = r_max / 3.0;
                    let m = ((min_side / a) as usize).max(1);
                    [i % m, (i / m) % m, (i / (m * m)) % m].map(|c| (c as f64 * a) as f32)
                } else if clustered {
                    // Half the atoms within 3 A of one point, the rest uniform (beyond the box too).
                    let near = i % 2 == 0;
                    [0, 1, 2].map(|d| {
                        let u = lcg(seed);
                        (if near {
                            10.0 + 3.0 * u
                        } else {
                            1.3 * side[d] * u - 0.15 * side[d]
                        }) as f32
                    })
                } else {
                    [0, 1, 2].map(|d| (1.2 * side[d] * lcg(seed) - 0.1 * side[d]) as f32)
                }
            })
            .collect();
        let (sel1, sel2): (Vec<u32>, Vec<u32>) = if identical {
            ((0..n as u32).collect(), (0..n as u32).collect())
        } else {
            (
                (0..(2 * n / 3) as u32).collect(),
                ((n / 4) as u32..n as u32).rev().collect(),
            )
        };
        out.push(RdfCase {
            name: format!(
                "cells case {k}: box {side:.1?}, r_max {r_max:.2}, open {open}, identical {identical}, groups {groups}, \
                 clustered {clustered}, lattice {lattice}"
            ),
            frame: Frame {
                positions_angstrom: positions,
                cell: (!open).then(|| UnitCell::orthorhombic(side)),
                ..Frame::default()
            },
            sel1,
            sel2,
            groups: groups.then(|| (0..n as u32).map(|i| i / 3).collect()),
            settings: RdfSettings {
                r_max_angstrom: r_max,
                bins: if lattice { 9 } else { 50 + k * 37 },
                exclude_same_group: groups,
            },
        });
    }
    out
}
