//! The wgpu engine's cell-list RDF pass (`compute::wgpu::rdf`, `rdf_cells` in `shaders/rdf.wgsl`) on
//! whatever adapter exists (Mesa lavapipe in CI, the GPU's own driver where there is one), on fresh
//! random frames (the seed is printed; `ORBITFIELD_TEST_SEED` replays one):
//! - open boundaries and orthorhombic boxes, set A equal to set B (half the stencil) and different,
//!   with and without same-group exclusions, clustered atoms (cells of hundreds of atoms, more than a
//!   workgroup's tiles), atoms on a lattice whose spacing divides r_max, and r_max just under a third
//!   of the box (3 cells along a side, the fewest a periodic grid takes): the cell list's counts
//!   EQUAL the all-pairs pass's (integers), and agree with the CPU engine (`analysis::rdf`, f64) to
//!   the f32 bin-edge allowance of `rdf_cases::assert_counts_close` (the lattice, whose pairs lie
//!   on bin edges and at r_max to within f32 rounding, to the all-pairs pass only);
//! - triclinic boxes (a general cell and a truncated octahedron, cells in fractional coordinates):
//!   the same, equal to all pairs and close to the CPU engine;
//! - r_max above a third of the box (of a triclinic box's heights) has no cell grid: the cell method
//!   runs all pairs there, and says so; `Auto` takes the cell list exactly where the grid has at
//!   least `CELLS_MIN` cells, as the CUDA engine does;
//! - the workgroup histogram flushed every 3000 pairs, and the 64-bit storage counts' low words
//!   started 256 below 2^32 (so most bins carry into their high words): the counts are unchanged;
//! - the comparison can fail: the cell list with one neighbour cell left out loses pairs
//!   (orthorhombic and triclinic).
//!
//! Without an adapter with compute shaders the tests print why and pass, unless
//! `ORBITFIELD_REQUIRE_WGPU=1` is set.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use orbitfield::analysis::rdf::RdfAccumulator;
use orbitfield::compute::cuda::rdf::{PairGeometry, PairMode};
use orbitfield::compute::wgpu::rdf::{CELLS_MIN, CellGrid, CellPassOptions, RdfMethod, RdfPairs, sort_into_cells};
use orbitfield::model::{Frame, UnitCell};

#[path = "common/wgpu_test_engine.rs"]
mod wgpu_test_engine;
use wgpu_test_engine::engine;

#[path = "common/rdf_cases.rs"]
mod rdf_cases;
use rdf_cases::RdfCase;

fn seed() -> u64 {
    let s = std::env::var("ORBITFIELD_TEST_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(rdf_cases::clock_seed);
    println!("seed {s}");
    s
}

/// The frame's layout and the CPU engine's counts.
fn layout(case: &RdfCase) -> (PairGeometry, Vec<u64>) {
    let g = case.groups.as_deref();
    let acc = RdfAccumulator::new(case.settings.clone()).unwrap();
    let checked = acc.check_frame(0, &case.frame, &case.sel1, &case.sel2, g).unwrap();
    let geom = PairGeometry::new(&case.frame, checked, &case.sel1, &case.sel2, g);
    let cpu = acc
        .frame_counts_cpu(&case.frame, checked, &case.sel1, &case.sel2, g)
        .unwrap();
    (geom, cpu)
}

/// Frames whose r_max is just under a third of the smallest side (3 cells along it), sets equal and
/// different, with exclusions in one.
fn third_of_the_box_cases(state: &mut u64, n: usize) -> Vec<RdfCase> {
    (0..2)
        .map(|k| {
            let side = [30.0 + 4.0 * rdf_cases::lcg(state), 37.0, 44.0];
            let r_max = side[0] / 3.0 * 0.999;
            let positions: Vec<[f32; 3]> = (0..n)
                .map(|_| [0, 1, 2].map(|d| (1.2 * side[d] * rdf_cases::lcg(state) - 0.1 * side[d]) as f32))
                .collect();
            let identical = k == 0;
            RdfCase {
                name: format!("third of the box {k}: box {side:.2?}, r_max {r_max:.3}, identical {identical}"),
                frame: Frame {
                    positions_angstrom: positions,
                    cell: Some(UnitCell::orthorhombic(side)),
                    ..Frame::default()
                },
                sel1: (0..n as u32).collect(),
                sel2: if identical {
                    (0..n as u32).collect()
                } else {
                    (n as u32 / 3..n as u32).rev().collect()
                },
                groups: (!identical).then(|| (0..n as u32).map(|i| i / 3).collect()),
                settings: orbitfield::analysis::rdf::RdfSettings {
                    r_max_angstrom: r_max,
                    bins: 120,
                    exclude_same_group: !identical,
                },
            }
        })
        .collect()
}

#[test]
fn cell_list_counts_equal_all_pairs_and_the_cpu_engine() {
    let Some(gpu) = engine("rdf cell list") else { return };
    let (device, queue) = gpu.device();
    let pass = RdfPairs::new(device);
    let mut state = seed();
    let mut cases = rdf_cases::cell_list_cases(&mut state, 5000);
    cases.extend(third_of_the_box_cases(&mut state, 4000));
    let mut with_cells = 0;
    for case in &cases {
        let (geom, cpu) = layout(case);
        let plan = CellGrid::new(&geom, case.settings.r_max_angstrom);
        let (all, m_all) = pass
            .counts_with(device, queue, &geom, &case.settings, RdfMethod::AllPairs)
            .unwrap();
        let (cells, m_cells) = pass
            .counts_with(device, queue, &geom, &case.settings, RdfMethod::Cells)
            .unwrap();
        let (auto, m_auto) = pass
            .counts_with(device, queue, &geom, &case.settings, RdfMethod::Auto)
            .unwrap();
        let total: u64 = cpu.iter().sum();
        println!(
            "{}: {total} pairs within r_max, grid {:?}, ran {m_cells}, auto {m_auto}",
            case.name,
            plan.map(|p| p.dims())
        );
        assert!(total > 1_000, "{}: too few pairs within r_max to test", case.name);
        assert_eq!(m_all, RdfMethod::AllPairs);
        let want = if plan.is_some() {
            RdfMethod::Cells
        } else {
            RdfMethod::AllPairs
        };
        assert_eq!(m_cells, want, "{}", case.name);
        let auto_cells = plan.is_some_and(|p| p.cells() >= CELLS_MIN);
        assert_eq!(m_auto == RdfMethod::Cells, auto_cells, "{}", case.name);
        with_cells += usize::from(plan.is_some());
        assert_eq!(cells, all, "{}: the cell list against all pairs", case.name);
        assert_eq!(auto, all, "{}: auto against all pairs", case.name);
        // On the lattice, thousands of pairs lie on bin edges and at r_max to within f32 rounding,
        // where f32 and f64 (and the device's and the host's f32 sqrt) differ: there the cell list is
        // held to the all-pairs pass only.
        if !case.name.contains("lattice true") {
            rdf_cases::assert_counts_close(&cells, &cpu, case.settings.r_max_angstrom, &case.name);
        }
    }
    // The third-of-the-box frames and most random ones have a grid.
    assert!(
        with_cells >= 8,
        "only {with_cells} of {} frames had a cell grid",
        cases.len()
    );
}

/// Triclinic frames (a general cell and a truncated octahedron as GROMACS writes it) with r_max
/// from 0.12 to 0.23 of the smallest side (3 to 6 cells along each box vector), sets equal and
/// different, with and without exclusions; atoms uniform beyond the cell (wrapping is part of the
/// test).
fn triclinic_cases(state: &mut u64, n: usize) -> Vec<RdfCase> {
    (0..4)
        .map(|k| {
            let cell = if k % 2 == 0 {
                UnitCell::new([46.0, 50.0, 44.0], [70.0, 100.0, 65.0])
            } else {
                UnitCell::new([44.0, 44.0, 44.0], [70.53, 109.47, 70.53])
            };
            let r_max = 44.0 * (0.12 + 0.11 * rdf_cases::lcg(state));
            let identical = k < 2;
            let groups = k == 1 || k == 2;
            let positions: Vec<[f32; 3]> = (0..n)
                .map(|_| [0; 3].map(|_| (60.0 * rdf_cases::lcg(state) - 5.0) as f32))
                .collect();
            RdfCase {
                name: format!("triclinic {k}: r_max {r_max:.2}, identical {identical}, groups {groups}"),
                frame: Frame {
                    positions_angstrom: positions,
                    cell: Some(cell),
                    ..Frame::default()
                },
                sel1: (0..n as u32).collect(),
                sel2: if identical {
                    (0..n as u32).collect()
                } else {
                    (n as u32 / 4..n as u32).rev().collect()
                },
                groups: groups.then(|| (0..n as u32).map(|i| i / 3).collect()),
                settings: orbitfield::analysis::rdf::RdfSettings {
                    r_max_angstrom: r_max,
                    bins: 80 + 50 * k,
                    exclude_same_group: groups,
                },
            }
        })
        .collect()
}

#[test]
fn triclinic_cells_equal_all_pairs_and_the_cpu_engine() {
    let Some(gpu) = engine("rdf cell list, triclinic") else {
        return;
    };
    let (device, queue) = gpu.device();
    let pass = RdfPairs::new(device);
    let mut state = seed();
    let mut with_cells = 0;
    for case in triclinic_cases(&mut state, 4000) {
        let (geom, cpu) = layout(&case);
        assert_eq!(geom.mode, PairMode::Triclinic, "{}", case.name);
        let grid = CellGrid::new(&geom, case.settings.r_max_angstrom);
        let (all, _) = pass
            .counts_with(device, queue, &geom, &case.settings, RdfMethod::AllPairs)
            .unwrap();
        let (cells, method) = pass
            .counts_with(device, queue, &geom, &case.settings, RdfMethod::Cells)
            .unwrap();
        let total: u64 = cpu.iter().sum();
        println!(
            "{}: {total} pairs within r_max, grid {:?}, ran {method}",
            case.name,
            grid.map(|g| g.dims())
        );
        assert!(total > 1_000, "{}: too few pairs within r_max to test", case.name);
        assert_eq!(method == RdfMethod::Cells, grid.is_some(), "{}", case.name);
        with_cells += usize::from(grid.is_some());
        assert_eq!(cells, all, "{}: the cell list against all pairs", case.name);
        rdf_cases::assert_counts_close(&cells, &cpu, case.settings.r_max_angstrom, &case.name);
    }
    assert_eq!(with_cells, 4, "every triclinic frame has a cell grid");
    // r_max above a third of the box's heights: no grid, all pairs.
    for case in rdf_cases::kernel_cases(&mut state, (900, 800), (500, 700))
        .iter()
        .skip(4)
    {
        let (geom, cpu) = layout(case);
        assert_eq!(geom.mode, PairMode::Triclinic, "{}", case.name);
        let (got, method) = pass
            .counts_with(device, queue, &geom, &case.settings, RdfMethod::Cells)
            .unwrap();
        assert_eq!(method, RdfMethod::AllPairs, "{}", case.name);
        rdf_cases::assert_counts_close(&got, &cpu, rdf_cases::R_MAX, &case.name);
    }
}

#[test]
fn a_missing_neighbour_cell_fails_the_comparison() {
    let Some(gpu) = engine("rdf cell list, poisoned") else {
        return;
    };
    let (device, queue) = gpu.device();
    let pass = RdfPairs::new(device);
    let mut state = seed();
    let mut cases = third_of_the_box_cases(&mut state, 1200);
    cases.extend(triclinic_cases(&mut state, 1200).into_iter().take(2));
    for case in &cases {
        let (geom, _) = layout(case);
        let (all, _) = pass
            .counts_with(device, queue, &geom, &case.settings, RdfMethod::AllPairs)
            .unwrap();
        let all_total: u64 = all.iter().sum();
        // Equal sets visit neighbours 13..27 only; leave out one of those, and one of the lower
        // half for different sets.
        for skip in [if geom.same_sets() { 22 } else { 4 }, 13] {
            let (got, method) = pass
                .counts_cells_with(
                    device,
                    queue,
                    &geom,
                    &case.settings,
                    CellPassOptions {
                        skip_neighbour: Some(skip),
                        ..CellPassOptions::default()
                    },
                )
                .unwrap();
            assert_eq!(method, RdfMethod::Cells);
            let got_total: u64 = got.iter().sum();
            println!(
                "{}: neighbour {skip} left out: {got_total} of {all_total} pairs",
                case.name
            );
            assert!(
                got_total + all_total / 100 < all_total,
                "{}: leaving out neighbour {skip} lost too few pairs",
                case.name
            );
            assert_ne!(got, all);
        }
    }
}

#[test]
fn frequent_flushes_and_carries_into_the_high_words_keep_the_counts() {
    let Some(gpu) = engine("rdf cell list, flushes and carries") else {
        return;
    };
    let (device, queue) = gpu.device();
    let pass = RdfPairs::new(device);
    let mut state = seed();
    let mut cases = third_of_the_box_cases(&mut state, 3000);
    cases.extend(triclinic_cases(&mut state, 3000).into_iter().skip(2));
    for case in &cases {
        let (geom, _) = layout(case);
        let (all, _) = pass
            .counts_with(device, queue, &geom, &case.settings, RdfMethod::AllPairs)
            .unwrap();
        // The low words start 256 below 2^32: every bin with more counts carries into its high word.
        let low_word_start = u32::MAX - 255;
        let carried = all.iter().filter(|&&n| n > 256).count();
        assert!(carried > 10, "{}: only {carried} bins carry", case.name);
        let options = CellPassOptions {
            flush_pairs: 3000,
            low_word_start,
            ..CellPassOptions::default()
        };
        let (got, method) = pass
            .counts_cells_with(device, queue, &geom, &case.settings, options)
            .unwrap();
        println!("{}: {carried} bins carried, flushes every 3000 pairs", case.name);
        assert_eq!(method, RdfMethod::Cells);
        assert_eq!(got, all, "{}", case.name);
    }
}

#[test]
fn the_counting_sort_keeps_every_atom_in_its_cell() {
    let mut state = seed();
    let case = &rdf_cases::cell_list_cases(&mut state, 2000)[3];
    let acc = RdfAccumulator::new(case.settings.clone()).unwrap();
    let checked = acc.check_frame(0, &case.frame, &case.sel1, &case.sel2, None).unwrap();
    let geom = PairGeometry::new(&case.frame, checked, &case.sel1, &case.sel2, None);
    let plan = CellGrid::new(&geom, case.settings.r_max_angstrom).expect("a cell grid");
    let (sorted, starts) = sort_into_cells(&geom.a, &plan);
    assert_eq!(starts.len(), plan.cells() + 1);
    assert_eq!(starts[0], 0);
    assert_eq!(*starts.last().unwrap() as usize, geom.a.len());
    for c in 0..plan.cells() {
        for p in &sorted[starts[c] as usize..starts[c + 1] as usize] {
            assert_eq!(plan.cell_of(p), c);
        }
    }
    let key = |v: &[[f32; 4]]| {
        let mut k: Vec<[u32; 4]> = v.iter().map(|p| p.map(f32::to_bits)).collect();
        k.sort_unstable();
        k
    };
    assert_eq!(key(&sorted), key(&geom.a));
}
