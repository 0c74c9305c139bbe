//! RDF and selections against MDAnalysis (reference values generated once by
//! `tests/data/analysis/mdanalysis_rdf.py` with MDAnalysis 2.x; see that script).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use orbitfield::analysis::rdf::{RdfAccumulator, RdfSettings};
use orbitfield::io;
use orbitfield::model::Frame;
use orbitfield::model::select::Selection;
use std::path::PathBuf;

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name)
}

fn reference() -> serde_json::Value {
    let text = std::fs::read_to_string(data("analysis/mdanalysis_rdf.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn our_rdf(files: &[&str], sel: &str, r_max: f64, bins: usize) -> (Vec<f64>, Vec<f64>, usize) {
    let paths: Vec<PathBuf> = files.iter().map(|f| data(f)).collect();
    let mut system = io::load(&paths).unwrap();
    let selection = Selection::parse(sel).unwrap();
    let mut acc = RdfAccumulator::new(RdfSettings {
        r_max_angstrom: r_max,
        bins,
        exclude_same_group: false,
    })
    .unwrap();
    let mut frame = Frame::default();
    let mut n_sel = 0;
    for f in 0..system.trajectory.n_frames() {
        system.trajectory.read_frame(f, &mut frame).unwrap();
        let idx = selection.indices(&system.structure, Some(&frame));
        n_sel = idx.len();
        acc.add_frame(f, &frame, &idx, &idx, None).unwrap();
    }
    let rdf = acc.finish();
    (rdf.r_angstrom, rdf.g, n_sel)
}

fn compare(key: &str, files: &[&str]) {
    let all = reference();
    let r = &all[key];
    let r_max = r["rmax"].as_f64().unwrap();
    let bins = r["bins"].as_u64().unwrap() as usize;
    let sel = r["sel"].as_str().unwrap();
    let (ours_r, ours_g, n_sel) = our_rdf(files, sel, r_max, bins);
    assert_eq!(n_sel as u64, r["n_sel"].as_u64().unwrap(), "selection size for '{sel}'");
    let ref_r: Vec<f64> = r["r"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    let ref_g: Vec<f64> = r["g"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    assert_eq!(ref_g.len(), ours_g.len());
    let mut worst: f64 = 0.0;
    for k in 0..bins {
        assert!((ours_r[k] - ref_r[k]).abs() < 1e-9, "bin centres differ at {k}");
        if ref_r[k] > 2.0 {
            worst = worst.max((ours_g[k] - ref_g[k]).abs());
        }
    }
    println!("{key}: max |g - g_MDAnalysis| beyond 2 A = {worst:.2e}");
    assert!(worst <= 0.02, "{key}: max deviation {worst}");
    // The test can fail: beyond 2 A (self pairs sit at r = 0), the highest peak is water's first shell.
    let peak = (0..bins)
        .filter(|&k| ours_r[k] > 2.0)
        .max_by(|&a, &b| ours_g[a].total_cmp(&ours_g[b]))
        .unwrap();
    assert!((2.5..3.1).contains(&ours_r[peak]), "first peak at {}", ours_r[peak]);
}

#[test]
fn rdf_matches_mdanalysis_triclinic_tip125() {
    compare("tip125", &["md/tip125_tric_C36.psf", "md/tip125_tric_C36.dcd"]);
}

#[test]
fn rdf_matches_mdanalysis_truncated_dodecahedron_adk_waters() {
    compare("adk_oplsaa", &["md/adk_oplsaa.gro", "md/adk_oplsaa.xtc"]);
}

#[test]
fn selection_counts_match_mdanalysis_on_adk() {
    let all = reference();
    let counts = all["adk_selections"].as_object().unwrap();
    let mut system = io::load(&[data("md/adk.psf"), data("md/adk_dims.dcd")]).unwrap();
    let frame = system.trajectory.frame(0).unwrap();
    let mut failures = Vec::new();
    for (expr, expected) in counts {
        let sel = Selection::parse(expr).unwrap_or_else(|e| panic!("{e}"));
        let n = sel.indices(&system.structure, Some(&frame)).len() as u64;
        if n != expected.as_u64().unwrap() {
            failures.push(format!("'{expr}': ours {n}, MDAnalysis {expected}"));
        }
    }
    assert!(counts.len() >= 12);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

// ---- The GPU kernel's layout and minimum image, emulated in the kernel's f32 arithmetic ----

#[path = "common/rdf_cases.rs"]
mod rdf_cases;

use orbitfield::compute::cuda::rdf::{PairGeometry, PairMode, reduce_box};
use orbitfield::jobs::rdf::RdfWorkers;
use orbitfield::model::UnitCell;
use rdf_cases::{assert_counts_close, lcg};
use std::sync::Arc;

/// CPU-engine counts (f64, cell list, images) for one frame.
fn cpu_counts(frame: &Frame, sel1: &[u32], sel2: &[u32], settings: &RdfSettings) -> Vec<u64> {
    let acc = RdfAccumulator::new(settings.clone()).unwrap();
    let cell = acc.check_frame(0, frame, sel1, sel2, None).unwrap();
    acc.frame_counts_cpu(frame, cell, sel1, sel2, None).unwrap()
}

#[test]
fn gpu_layout_matches_cpu_engine_on_triclinic_peers() {
    // tip125 (triclinic, every frame) and a slice of adk_oplsaa's water oxygens (truncated dodecahedron).
    for (files, sel, r_max, limit) in [
        (
            &["md/tip125_tric_C36.psf", "md/tip125_tric_C36.dcd"][..],
            "name OH2",
            5.2,
            usize::MAX,
        ),
        (&["md/adk_oplsaa.gro", "md/adk_oplsaa.xtc"][..], "name OW", 15.0, 1500),
    ] {
        let paths: Vec<PathBuf> = files.iter().map(|f| data(f)).collect();
        let mut system = io::load(&paths).unwrap();
        let selection = Selection::parse(sel).unwrap();
        let settings = RdfSettings {
            r_max_angstrom: r_max,
            bins: 75,
            exclude_same_group: false,
        };
        let mut frame = Frame::default();
        for f in [0, system.trajectory.n_frames() - 1] {
            system.trajectory.read_frame(f, &mut frame).unwrap();
            let mut idx = selection.indices(&system.structure, Some(&frame));
            idx.truncate(limit);
            let cell = frame.cell.unwrap();
            assert!(!cell.is_orthorhombic(), "{sel}: the test needs a triclinic box");
            let geom = PairGeometry::new(&frame, Some(cell), &idx, &idx, None);
            assert_eq!(geom.mode, PairMode::Triclinic);
            let got = geom.emulate(&settings);
            let want = cpu_counts(&frame, &idx, &idx, &settings);
            assert!(want.iter().sum::<u64>() > 800, "{sel}: too few pairs to test anything");
            assert_counts_close(&got, &want, r_max, &format!("{files:?} frame {f}"));
        }
    }
}

#[test]
fn gpu_minimum_image_is_exact_in_random_skewed_boxes() {
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(7);
    println!("seed {seed}");
    let mut s = seed;
    for trial in 0..12 {
        // Random lengths 18-30 A and angles 60-120 degrees (skipping degenerate boxes).
        let lengths = [0; 3].map(|_| 18.0 + 12.0 * lcg(&mut s));
        let angles = [0; 3].map(|_| 60.0 + 60.0 * lcg(&mut s));
        let cell = UnitCell::new(lengths, angles);
        if !cell.is_valid() || cell.volume_angstrom3() < 0.3 * lengths.iter().product::<f64>() {
            continue;
        }
        let m = cell.matrix_angstrom();
        let n = 300;
        let positions: Vec<[f32; 3]> = (0..n)
            .map(|_| {
                // Anywhere, including far outside the cell (wrapping is part of what is tested).
                let f = [0; 3].map(|_| 3.0 * lcg(&mut s) - 1.0);
                [0, 1, 2].map(|k| (f[0] * m[0][k] + f[1] * m[1][k] + f[2] * m[2][k]) as f32)
            })
            .collect();
        let frame = Frame {
            positions_angstrom: positions,
            cell: Some(cell),
            ..Frame::default()
        };
        let idx: Vec<u32> = (0..n as u32).collect();
        let settings = RdfSettings {
            r_max_angstrom: 0.499 * min_width(&cell),
            bins: 40,
            exclude_same_group: false,
        };
        let geom = PairGeometry::new(&frame, Some(cell), &idx, &idx, None);
        let got = geom.emulate(&settings);
        let want = cpu_counts(&frame, &idx, &idx, &settings);
        assert_counts_close(
            &got,
            &want,
            settings.r_max_angstrom,
            &format!("trial {trial}, cell {lengths:?} {angles:?}"),
        );
        // The reduced box spans the same lattice: same volume.
        let r = reduce_box(m);
        let vol = r[0][0] * r[1][1] * r[2][2];
        assert!((vol - cell.volume_angstrom3()).abs() < 1e-6 * vol);
    }
}

fn min_width(cell: &UnitCell) -> f64 {
    let m = cell.matrix_angstrom();
    let cross = |u: [f64; 3], v: [f64; 3]| {
        [
            u[1] * v[2] - u[2] * v[1],
            u[2] * v[0] - u[0] * v[2],
            u[0] * v[1] - u[1] * v[0],
        ]
    };
    let norm = |u: [f64; 3]| (u[0] * u[0] + u[1] * u[1] + u[2] * u[2]).sqrt();
    let v = cell.volume_angstrom3();
    [
        v / norm(cross(m[1], m[2])),
        v / norm(cross(m[2], m[0])),
        v / norm(cross(m[0], m[1])),
    ]
    .into_iter()
    .fold(f64::INFINITY, f64::min)
}

#[test]
fn rdf_workers_give_the_same_rdf_as_the_accumulator() {
    let paths = [data("md/tip125_tric_C36.psf"), data("md/tip125_tric_C36.dcd")];
    let mut system = io::load(&paths).unwrap();
    let idx = Arc::new(Selection::parse("name OH2").unwrap().indices(&system.structure, None));
    let settings = RdfSettings {
        r_max_angstrom: 4.0,
        bins: 40,
        exclude_same_group: false,
    };
    let mut direct = RdfAccumulator::new(settings.clone()).unwrap();
    let mut frames = Vec::new();
    for f in 0..system.trajectory.n_frames() {
        let mut frame = Frame::default();
        system.trajectory.read_frame(f, &mut frame).unwrap();
        direct.add_frame(f, &frame, &idx, &idx, None).unwrap();
        frames.push(frame);
    }
    let workers = RdfWorkers::cpu_only();
    let mut acc = RdfAccumulator::new(settings).unwrap();
    let mut seen = Vec::new();
    let items = frames
        .into_iter()
        .enumerate()
        .map(|(f, fr)| Ok::<_, String>((f, fr, idx.clone(), idx.clone())));
    workers
        .run(&mut acc, None, items, |n, d| seen.push((n, d.frame_index)))
        .unwrap();
    assert_eq!(acc, direct);
    assert_eq!(seen.len(), system.trajectory.n_frames());
    // A frame with a NaN coordinate stops the run with the frame named.
    let mut bad = Frame::default();
    system.trajectory.read_frame(0, &mut bad).unwrap();
    bad.positions_angstrom[idx[3] as usize][1] = f32::NAN;
    let mut acc = RdfAccumulator::new(direct.settings.clone()).unwrap();
    let err = workers
        .run(
            &mut acc,
            None,
            [Ok::<_, String>((5, bad, idx.clone(), idx.clone()))],
            |_, _| {},
        )
        .unwrap_err();
    assert!(err.to_string().contains("frame 5"), "{err}");
}

/// The GPU kernel's cases (open, orthorhombic, triclinic, truncated octahedron; exclusions), with
/// the kernel's arithmetic emulated on the CPU against the CPU engine.
#[test]
fn gpu_layout_matches_cpu_engine_in_the_kernel_test_cases() {
    let mut seed = rdf_cases::clock_seed();
    for case in rdf_cases::kernel_cases(&mut seed, (900, 800), (300, 700)) {
        let g = case.groups.as_deref();
        let acc = RdfAccumulator::new(case.settings.clone()).unwrap();
        let checked = acc.check_frame(0, &case.frame, &case.sel1, &case.sel2, g).unwrap();
        let geom = PairGeometry::new(&case.frame, checked, &case.sel1, &case.sel2, g);
        let got = geom.emulate(&case.settings);
        let cpu = acc
            .frame_counts_cpu(&case.frame, checked, &case.sel1, &case.sel2, g)
            .unwrap();
        assert_counts_close(&got, &cpu, rdf_cases::R_MAX, &case.name);
    }
}

/// The cell-list kernel's pair enumeration (emulated) gives the all-pairs kernel's histogram exactly,
/// and falls back (None) where a periodic side has fewer than 3 cells or the box is triclinic.
#[test]
fn gpu_cell_list_equals_all_pairs_exactly() {
    use orbitfield::compute::cuda::rdf::CellPlan;
    let mut seed = rdf_cases::clock_seed();
    let mut compared = 0;
    for case in rdf_cases::cell_list_cases(&mut seed, 1500)
        .into_iter()
        .chain(rdf_cases::kernel_cases(&mut seed, (700, 600), (300, 500)))
    {
        let g = case.groups.as_deref();
        let acc = RdfAccumulator::new(case.settings.clone()).unwrap();
        let checked = acc.check_frame(0, &case.frame, &case.sel1, &case.sel2, g).unwrap();
        let geom = PairGeometry::new(&case.frame, checked, &case.sel1, &case.sel2, g);
        let plan = CellPlan::new(&geom, case.settings.r_max_angstrom);
        let all = geom.emulate(&case.settings);
        assert!(all.iter().sum::<u64>() > 1000, "{}: too few pairs", case.name);
        match geom.emulate_cells(&case.settings) {
            Some(cells) => {
                let p = plan.unwrap();
                if p.periodic != 0 {
                    assert!(p.nx >= 3 && p.ny >= 3 && p.nz >= 3, "{}: {p:?}", case.name);
                }
                assert_eq!(cells, all, "{}: {p:?}", case.name);
                compared += 1;
            }
            None => {
                assert!(plan.is_none());
                let c = case.frame.cell;
                let half = c.is_some_and(|c| c.is_orthorhombic())
                    && c.unwrap()
                        .lengths_angstrom
                        .iter()
                        .any(|&l| l < 3.0 * case.settings.r_max_angstrom * 1.001);
                let triclinic = c.is_some_and(|c| !c.is_orthorhombic());
                assert!(half || triclinic, "{}: no cell plan", case.name);
            }
        }
    }
    assert!(compared >= 8, "only {compared} cases took the cell list");
}
