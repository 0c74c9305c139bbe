//! Implicit ligand sampling on a large map: the CUDA kernel against the float64 reference on the
//! map `grid ils --around protein --frames 1:` makes for AdK in OPLS-AA water (MDAnalysisTests; the
//! protein's box in frame 1 with 2 A of padding, 73 x 87 x 62 A at 1 A, subres 3, O2 at the default
//! orientations, cutoff 10 A, periodic images), two random frames of the trajectory. The reference
//! is evaluated voxel by voxel on the voxels below 10 kT (about 200; a random sample where more) in
//! the corner of the map farthest from its first sample point, where a kernel that held coordinates
//! as float32 relative to that point rounds them most (about 4e-6 A at 90 A; it was off by up to
//! 1.8e-4 kT there): the two must agree within 1e-4 kT. Runs where a CUDA device is present (skipped
//! with the reason otherwise, a failure under `ORBITFIELD_REQUIRE_CUDA=1`).

// Tests may unwrap: a panic is a failed test (house rules).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use orbitfield::compute::cpu::ils::reference_voxel_means;
use orbitfield::compute::ils::{IlsSetup, place_atoms};
use orbitfield::model::UnitCell;
use orbitfield::model::ils::{DEFAULT_ORIENTATIONS, IlsMap, OccupancySums, Orientations};
use orbitfield::model::lj::Probe;
use rayon::prelude::*;
use std::path::PathBuf;

#[path = "common/cuda_device.rs"]
mod cuda_device;
#[path = "common/rdf_cases.rs"]
mod rdf_cases;
use rdf_cases::{clock_seed, lcg};

/// Voxels of the far corner checked against the reference (each costs about 3e6 pair terms per frame).
const CHECKED_VOXELS: usize = 600;

fn data(path: &str) -> PathBuf {
    let root = std::env::var_os("ORBITFIELD_TEST_ROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    root.join("tests/data").join(path)
}

#[test]
fn cuda_equals_the_reference_on_a_large_map_of_a_real_trajectory() {
    let Some(gpu) = cuda_device::device() else {
        return;
    };
    let gro = data("md/adk_oplsaa.gro");
    let mut system = orbitfield::io::load(&[gro.clone(), data("md/adk_oplsaa.xtc")]).unwrap();
    let st = &system.structure;
    // Every atom but the TIP4P dummies (no Lennard-Jones term), parameters from the element table.
    let used: Vec<bool> = (0..st.len()).map(|i| st.names[i].as_str() != "MW").collect();
    let sel: Vec<usize> = (0..st.len()).filter(|&i| used[i]).collect();
    let protein: Vec<usize> = sel
        .iter()
        .copied()
        .filter(|&i| !matches!(st.resnames[i].as_str(), "SOL" | "NA+" | "NA" | "CL-" | "CL"))
        .collect();
    assert!(protein.len() > 3000, "{} protein atoms", protein.len());
    let lj = orbitfield::io::ils_params::system_lj(&[gro], st, &[], true, Some(&used)).unwrap();
    let atom_lj: Vec<_> = sel.iter().map(|&i| lj.params[i]).collect();

    let n_frames = system.trajectory.n_frames();
    let mut seed = clock_seed();
    let mut picks: Vec<usize> = Vec::new();
    while picks.len() < 2.min(n_frames) {
        let f = (lcg(&mut seed) * n_frames as f64) as usize % n_frames;
        if !picks.contains(&f) {
            picks.push(f);
        }
    }
    println!("frames {picks:?} of {n_frames}");
    let frames: Vec<(Vec<[f64; 3]>, Option<UnitCell>)> = picks
        .iter()
        .map(|&f| {
            let frame = system.trajectory.frame(f).unwrap();
            let pos = sel
                .iter()
                .map(|&i| frame.positions_angstrom[i].map(f64::from))
                .collect();
            (pos, frame.cell)
        })
        .collect();
    assert!(frames[0].1.is_some(), "the trajectory has a box");

    // The map around the protein of frame 1, padding 2 A, spacing 1 A.
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    let reference = system.trajectory.frame(1.min(n_frames - 1)).unwrap();
    for &i in &protein {
        for a in 0..3 {
            lo[a] = lo[a].min(f64::from(reference.positions_angstrom[i][a]));
            hi[a] = hi[a].max(f64::from(reference.positions_angstrom[i][a]));
        }
    }
    let map = IlsMap {
        origin_angstrom: [0, 1, 2].map(|a| lo[a] - 2.0),
        spacing_angstrom: 1.0,
        dims: [0, 1, 2].map(|a| (hi[a] - lo[a] + 4.0).ceil() as usize + 1),
    };
    println!("map {:?} voxels from {:?} A", map.dims, map.origin_angstrom);
    assert!(map.dims.iter().all(|&d| d >= 60), "{:?}", map.dims);
    let probe = Probe::builtin("o2").unwrap();
    let subres = 3;
    let setup = IlsSetup {
        map,
        subres,
        cutoff_angstrom: 10.0,
        max_energy_kt: 87.0,
        temperature_kelvin: 300.0,
        orientations: Orientations::new(&probe, DEFAULT_ORIENTATIONS, subres),
        probe,
        atom_lj,
    };

    let mut gpu_sums = OccupancySums::new(map.dims);
    for (pos, cell) in &frames {
        let placed = place_atoms(&setup, pos, cell.as_ref(), None).unwrap();
        gpu_sums
            .add_frame(&gpu.ils_voxel_means(&setup, &placed).unwrap())
            .unwrap();
    }
    let gpu_pmf = gpu_sums.pmf_kt(setup.max_energy_kt);

    // Candidates: the far corner (every index in the top 30 % of its axis), below 10.5 kT on the GPU.
    let [nx, ny, nz] = map.dims;
    let far = |i: usize, n: usize| i * 10 >= n * 7;
    let mut candidates: Vec<usize> = (0..map.n_voxels())
        .filter(|&v| far(v % nx, nx) && far((v / nx) % ny, ny) && far(v / (nx * ny), nz) && gpu_pmf[v] < 10.5)
        .collect();
    println!("{} voxels below 10.5 kT in the far corner", candidates.len());
    // A random sample of them (partial Fisher-Yates).
    let take = CHECKED_VOXELS.min(candidates.len());
    for k in 0..take {
        let r = k + (lcg(&mut seed) * (candidates.len() - k) as f64) as usize % (candidates.len() - k);
        candidates.swap(k, r);
    }
    candidates.truncate(take);

    // The reference, one voxel at a time: a one-voxel map at that voxel's centre.
    let results: Vec<(usize, f64)> = candidates
        .par_iter()
        .map(|&v| {
            let (i, j, k) = (v % nx, (v / nx) % ny, v / (nx * ny));
            let one = IlsMap {
                origin_angstrom: map.centre_angstrom(i, j, k),
                spacing_angstrom: map.spacing_angstrom,
                dims: [1, 1, 1],
            };
            let s = IlsSetup {
                map: one,
                ..setup.clone()
            };
            let mut sums = OccupancySums::new(one.dims);
            for (pos, cell) in &frames {
                let placed = place_atoms(&s, pos, cell.as_ref(), None).unwrap();
                sums.add_frame(&reference_voxel_means(&s, &placed)).unwrap();
            }
            (v, sums.pmf_kt(s.max_energy_kt)[0])
        })
        .collect();

    let mut checked = 0;
    let mut over = 0;
    let mut worst = (0.0f64, 0usize, 0.0f64);
    for &(v, want) in &results {
        if want < 10.0 {
            checked += 1;
            let d = (gpu_pmf[v] - want).abs();
            if d > 1e-4 {
                over += 1;
            }
            if d > worst.0 {
                worst = (d, v, want);
            }
        }
    }
    let (d, v, want) = worst;
    println!(
        "{checked} voxels below 10 kT checked; largest difference {d:.3e} kT (voxel {:?}, PMF {want:.3} kT); {over} over 1e-4 kT",
        (v % nx, (v / nx) % ny, v / (nx * ny))
    );
    assert!(d <= 1e-4, "largest difference {d} kT; {over} voxels over 1e-4 kT");
    assert!(checked >= 100, "only {checked} voxels below 10 kT checked");
}
