//! The Poisson-Boltzmann solver of the CPU engine (`compute::pb::solve`, default parameters:
//! APBS's `srfm smol`, `chgm spl2`, `bcfl sdh`, 0.15 M, eps 2 / 78.54) against APBS (`apbs` on
//! PATH, `mg-manual` on the same lattice with the same model, `tests/data/pb/make_apbs.py`'s
//! input), in the same run, on adk (tests/data/pb/adk_open.pqr.gz, 3,341 atoms): 161^3 at 0.5 A
//! and 97^3 at 0.8 A. Both use the machine's cores (rayon's threads; `OMP_NUM_THREADS` set to the
//! same number for APBS). Reported: our solve cold (maps and solve), warm-started from the solution
//! of a copy of the atoms moved by up to 0.1 A (the next trajectory frame), APBS's wall time for the
//! whole run (reading the PQR, maps, multigrid solve, writing the map), and the largest difference
//! of the two maps at the lattice points.
//!
//! Run: `cargo bench --bench pb` (optimised build); results go into `benches/RESULTS.md` by hand.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use orbitfield::compute::pb::{PbAtoms, PbLattice, PbParams, solve};
use std::io::Read;
use std::path::PathBuf;
use std::time::Instant;

fn read_pqr() -> (String, PbAtoms) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/pb/adk_open.pqr.gz");
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    let mut atoms = PbAtoms::default();
    for line in text
        .lines()
        .filter(|l| l.starts_with("ATOM") || l.starts_with("HETATM"))
    {
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
    (text, atoms)
}

/// APBS's potential map (DX, z fastest) reordered x fastest.
fn read_dx(path: &std::path::Path, dims: [usize; 3]) -> Vec<f64> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut values = Vec::new();
    let mut data = false;
    for line in text.lines() {
        if line.starts_with("object 3") {
            data = true;
            continue;
        }
        if data {
            if line.starts_with("attribute") || line.starts_with("object") || line.starts_with("component") {
                break;
            }
            values.extend(line.split_whitespace().map(|v| v.parse::<f64>().unwrap()));
        }
    }
    let [nx, ny, nz] = dims;
    let mut out = vec![0.0; nx * ny * nz];
    for i in 0..nx {
        for j in 0..ny {
            for k in 0..nz {
                out[i + nx * (j + ny * k)] = values[k + nz * (j + ny * i)];
            }
        }
    }
    out
}

fn best_of<T>(n: usize, mut f: impl FnMut() -> T) -> (f64, T) {
    let mut best = f64::INFINITY;
    let mut last = None;
    for _ in 0..n {
        let t = Instant::now();
        let v = f();
        best = best.min(t.elapsed().as_secs_f64());
        last = Some(v);
    }
    (best, last.unwrap())
}

fn main() {
    let (pqr, atoms) = read_pqr();
    let threads = rayon::current_num_threads();
    println!(
        "adk_open.pqr, {} atoms, {threads} threads (rayon and OMP_NUM_THREADS)",
        atoms.charges_e.len()
    );
    // The next frame: every atom moved by up to 0.1 A (a fixed pseudo-random sequence).
    let mut seed = 33u64;
    let mut next = || {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 0.2 / 3f64.sqrt()
    };
    let moved = PbAtoms {
        positions_angstrom: atoms.positions_angstrom.iter().map(|p| p.map(|c| c + next())).collect(),
        ..atoms.clone()
    };
    let (lo, hi) = atoms
        .positions_angstrom
        .iter()
        .fold(([f64::INFINITY; 3], [f64::NEG_INFINITY; 3]), |(lo, hi), x| {
            (
                std::array::from_fn(|k| lo[k].min(x[k])),
                std::array::from_fn(|k| hi[k].max(x[k])),
            )
        });
    let centre: [f64; 3] = std::array::from_fn(|k| ((0.5 * (lo[k] + hi[k])) * 1e4).round() / 1e4);
    let params = PbParams::default();
    let tmp = std::env::temp_dir().join(format!("orbitfield-pb-bench-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    std::fs::write(tmp.join("adk.pqr"), &pqr).unwrap();
    let template =
        std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/pb/adk_open.in")).unwrap();
    for (n, h) in [(161usize, 0.5f64), (97, 0.8)] {
        let lattice = PbLattice::centered(centre, h, [n; 3]);
        let (cold_s, cold) = best_of(3, || solve(&moved, &lattice, &params, None).unwrap());
        let (warm_s, warm) = best_of(3, || {
            solve(&atoms, &lattice, &params, Some(&cold.potential_kt_per_e)).unwrap()
        });
        let (fresh_s, fresh) = best_of(1, || solve(&atoms, &lattice, &params, None).unwrap());
        // APBS on the same lattice (the committed input with this lattice).
        let glen = h * (n - 1) as f64;
        let input: String = template
            .lines()
            .map(|l| {
                let t = l.trim_start();
                if t.starts_with("mol pqr") {
                    "    mol pqr adk.pqr".to_string()
                } else if t.starts_with("dime") {
                    format!("    dime {n} {n} {n}")
                } else if t.starts_with("glen") {
                    format!("    glen {glen:.6} {glen:.6} {glen:.6}")
                } else if t.starts_with("gcent") {
                    format!("    gcent {:.6} {:.6} {:.6}", centre[0], centre[1], centre[2])
                } else if t.starts_with("write pot") {
                    "    write pot dx pot".to_string()
                } else {
                    l.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
        std::fs::write(tmp.join("adk.in"), input + "\n").unwrap();
        let t = Instant::now();
        let status = std::process::Command::new("apbs")
            .arg("adk.in")
            .current_dir(&tmp)
            .env("OMP_NUM_THREADS", threads.to_string())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status();
        let apbs_s = t.elapsed().as_secs_f64();
        let dx = std::fs::read_dir(&tmp)
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .find(|p| p.extension().is_some_and(|x| x == "dx"));
        print!(
            "{n}^3 at {h} A: ours cold {:.3} s ({} iterations), next frame warm-started {:.3} s ({} iterations)",
            fresh_s.min(cold_s),
            fresh.iterations,
            warm_s,
            warm.iterations
        );
        match (status, dx) {
            (Ok(s), Some(dx)) if s.success() => {
                let theirs = read_dx(&dx, [n; 3]);
                let diff = theirs
                    .iter()
                    .zip(&fresh.potential_kt_per_e)
                    .map(|(a, b)| (a - b).abs())
                    .fold(0.0, f64::max);
                println!(
                    "; APBS {apbs_s:.3} s: APBS / ours cold {:.2}x, / warm {:.2}x; largest difference on the lattice {diff:.1e} kT/e",
                    apbs_s / fresh_s.min(cold_s),
                    apbs_s / warm_s
                );
                std::fs::remove_file(dx).ok();
            }
            _ => println!("; APBS did not run (apbs not on PATH?)"),
        }
    }
    std::fs::remove_dir_all(&tmp).ok();
}
