//! `orbitfield points MAP --field volume --points PTS` samples a cube or DX map trilinearly at the
//! points, in the map's units, as APBS's multivalue samples its map: at the map's own points it
//! gives the file's values, between them the trilinear mean of the eight corners (both read from
//! the file here); a point outside the map, and `--field pb` (solved on a lattice, not at points),
//! are refused with a message that says why.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::path::{Path, PathBuf};
use std::process::Command;

const BOHR_ANGSTROM: f64 = 0.529_177_210_903;

fn cube() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/engine/water_mep_24.cube")
}

/// Origin (bohr), steps (bohr, axis-aligned), dims and values (z fastest) of the cube, read here.
fn read_cube() -> ([f64; 3], [f64; 3], [usize; 3], Vec<f64>) {
    let text = std::fs::read_to_string(cube()).unwrap();
    let l: Vec<&str> = text.lines().collect();
    let w = |i: usize| -> Vec<f64> { l[i].split_whitespace().map(|x| x.parse().unwrap()).collect() };
    let head = w(2);
    let n_atoms = head[0].abs() as usize;
    let (x, y, z) = (w(3), w(4), w(5));
    let values: Vec<f64> = l[6 + n_atoms..]
        .iter()
        .flat_map(|r| r.split_whitespace())
        .map(|v| v.parse().unwrap())
        .collect();
    (
        [head[1], head[2], head[3]],
        [x[1], y[2], z[3]],
        [x[0] as usize, y[0] as usize, z[0] as usize],
        values,
    )
}

fn points(field: &str, pts: &[[f64; 3]]) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pts.txt");
    let text: String = pts.iter().map(|p| format!("{} {} {}\n", p[0], p[1], p[2])).collect();
    std::fs::write(&file, text).unwrap();
    Command::new(env!("CARGO_BIN_EXE_orbitfield"))
        .args(["points"])
        .arg(cube())
        .args(["--field", field, "--points"])
        .arg(&file)
        .output()
        .unwrap()
}

#[test]
fn a_map_is_sampled_at_points_as_its_file_gives_it() {
    let (origin, step, dims, v) = read_cube();
    let value = |i: usize, j: usize, k: usize| v[(i * dims[1] + j) * dims[2] + k];
    let at = |f: [f64; 3]| -> [f64; 3] { std::array::from_fn(|a| (origin[a] + f[a] * step[a]) * BOHR_ANGSTROM) };
    let mut pts = Vec::new();
    let mut want = Vec::new();
    for (i, j, k) in [(3, 5, 7), (12, 12, 12), (20, 1, 9)] {
        pts.push(at([i as f64, j as f64, k as f64]));
        want.push(value(i, j, k));
        // The cell's centre: the mean of its eight corners.
        pts.push(at([i as f64 + 0.5, j as f64 + 0.5, k as f64 + 0.5]));
        let mut sum = 0.0;
        for c in 0..8 {
            sum += value(i + (c & 1), j + ((c >> 1) & 1), k + ((c >> 2) & 1));
        }
        want.push(sum / 8.0);
    }
    let out = points("volume", &pts);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let got: Vec<f64> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect();
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(&want) {
        assert!((g - w).abs() <= 1e-5 * w.abs().max(1e-3), "{g} against {w}");
    }

    // Outside the map, and the Poisson-Boltzmann field: refused, saying why.
    let outside = points("volume", &[at([1.0; 3]), at([-5.0, 0.0, 0.0])]);
    let err = String::from_utf8_lossy(&outside.stderr);
    assert!(
        !outside.status.success() && err.contains("point 2") && err.contains("outside the map"),
        "{err}"
    );
    let pb = points("pb", &pts);
    let err = String::from_utf8_lossy(&pb.stderr);
    assert!(!pb.status.success() && err.contains("grid pb"), "{err}");
}
