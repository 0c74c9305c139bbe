//! The render device's cartoon inputs made straight from the structure ([`Polymer::rings_for`],
//! with buffers kept from frame to frame) against the same inputs made from segments
//! ([`Polymer::segments`] then `compute::wgpu::cartoon_inputs::rings_into`), field for field and bit for
//! bit: adk (the first frame of adk_dims.dcd) copied 468 times on a grid (100,152 residues), as is
//! and with 0.3 and 1.5 Angstrom of random jitter on every coordinate (the latter breaks chains
//! into many runs, some of one residue), and with atoms removed (residues without a CA, runs without carbonyls,
//! which keep the per-ring path); secondary structure from DSSP of each; every colouring, with
//! values; the RNA hairpin 1K5I (nucleic-acid tubes and base slabs). Runs without a GPU.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use orbitfield::analysis::dssp::DsspOptions;
use orbitfield::analysis::polymer::{CartoonWorkspace, Coloring, Polymer, replicate_on_grid};
use orbitfield::compute::wgpu::cartoon_inputs::{CartoonRings, PIECE_BOXES, PIECE_SPLINE, PIECE_TUBE, rings_into};
use orbitfield::surface::cartoon::{CartoonParams, Style};
use std::path::{Path, PathBuf};

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(rel)
}

/// Every field of two inputs equal, floats bit for bit.
fn assert_same_bits(a: &CartoonRings, b: &CartoonRings, what: &str) {
    if let Some(d) = a.bitwise_difference(b) {
        panic!("{what}: {d}");
    }
}

/// `positions` with every coordinate moved by up to `amplitude_angstrom` either way.
fn jittered(positions: &[[f32; 3]], amplitude_angstrom: f32, seed: u32) -> Vec<[f32; 3]> {
    let mut x = seed;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        x as f32 / u32::MAX as f32 * 2.0 - 1.0
    };
    positions
        .iter()
        .map(|p| p.map(|c| c + amplitude_angstrom * next()))
        .collect()
}

/// Both paths for one frame of `polymer`, DSSP codes of the frame, into `rings` and `workspace`
/// (those of the cases before); the pieces' kinds.
fn compare(
    polymer: &Polymer,
    positions: &[[f32; 3]],
    colorings: &[Coloring],
    params: &CartoonParams,
    rings: &mut CartoonRings,
    workspace: &mut CartoonWorkspace,
    what: &str,
) -> Vec<u32> {
    let secondary = polymer.protein.assign(positions, &DsspOptions::default());
    let values: Vec<f32> = (0..polymer.residue_count()).map(|k| (k as f32 * 0.37).sin()).collect();
    for &coloring in colorings {
        let values = (coloring == Coloring::Value).then_some(values.as_slice());
        let segments = polymer.segments(positions, &secondary, coloring, values);
        let params = CartoonParams {
            with_values: params.with_values || coloring == Coloring::Value,
            ..*params
        };
        let mut want = CartoonRings::default();
        rings_into(&segments, &params, &mut want);
        polymer.rings_for(positions, &secondary, coloring, values, &params, rings, workspace);
        assert_same_bits(rings, &want, &format!("{what}, {}", coloring.word()));
    }
    rings.pieces.iter().map(|p| p.kind).collect()
}

#[test]
fn adk_copies_as_from_segments() {
    let mut system = orbitfield::io::load(&[data("md/adk.psf"), data("md/adk_dims.dcd")]).unwrap();
    let positions = system.trajectory.frame(0).unwrap().positions_angstrom;
    let (big, big_positions) = replicate_on_grid(&system.structure, &positions, 468, 60.0);
    let polymer = Polymer::new(&big);
    assert_eq!(polymer.residue_count(), 100_152);
    let params = CartoonParams::for_residue_count(polymer.residue_count());
    let (mut rings, mut workspace) = (CartoonRings::default(), CartoonWorkspace::default());
    let kinds = compare(
        &polymer,
        &big_positions,
        &Coloring::ALL,
        &params,
        &mut rings,
        &mut workspace,
        "adk x 468",
    );
    assert_eq!(kinds.len(), 468);
    assert!(kinds.iter().all(|&k| k == PIECE_SPLINE));
    for (amplitude, seed) in [(0.3, 0x2545_f491), (1.5, 0x9e37_79b9)] {
        let moved = jittered(&big_positions, amplitude, seed);
        let what = format!("adk x 468, jitter {amplitude} A");
        let kinds = compare(
            &polymer,
            &moved,
            &[Coloring::SecondaryStructure, Coloring::Index],
            &params,
            &mut rings,
            &mut workspace,
            &what,
        );
        // 1.5 Angstrom stretches some C-N bonds past 2.5 Angstrom: chains break.
        assert_eq!(kinds.len() > 468, amplitude > 1.0, "{what}: {} pieces", kinds.len());
    }
    // Residues without a CA, runs of residues without a carbonyl (the per-ring path), a lone
    // residue between two gaps; every style.
    let mut damaged = big_positions.clone();
    for (k, r) in polymer.protein.residues.iter().enumerate() {
        let nan = |i: Option<u32>, damaged: &mut Vec<[f32; 3]>| {
            if let Some(i) = i {
                damaged[i as usize] = [f32::NAN; 3];
            }
        };
        match k % 2000 {
            100 | 102 => nan(r.ca, &mut damaged),
            300..=330 | 1500..=1512 => nan(r.o, &mut damaged),
            _ => {}
        }
    }
    for style in Style::ALL {
        let params = CartoonParams { style, ..params };
        let kinds = compare(
            &polymer,
            &damaged,
            &[Coloring::SecondaryStructure, Coloring::Chain],
            &params,
            &mut rings,
            &mut workspace,
            &format!("adk x 468, atoms removed, {}", style.word()),
        );
        assert!(kinds.contains(&PIECE_TUBE) && kinds.contains(&PIECE_SPLINE));
    }
    // DSSP in `rings_into` as in the segments' path.
    let mut direct = CartoonRings::default();
    let secondary = polymer.rings_into(&big_positions, Coloring::Residue, None, &params, &mut direct);
    let segments = polymer.segments(&big_positions, &secondary, Coloring::Residue, None);
    let mut want = CartoonRings::default();
    rings_into(&segments, &params, &mut want);
    assert_same_bits(&direct, &want, "adk x 468, Polymer::rings_into");
}

#[test]
fn rna_hairpin_as_from_segments() {
    let mut system = orbitfield::io::load(&[data("cartoon/1k5i_rna.pdb.gz")]).unwrap();
    let positions = system.trajectory.frame(0).unwrap().positions_angstrom;
    let polymer = Polymer::new(&system.structure);
    assert!(!polymer.nucleic.is_empty());
    let (mut rings, mut workspace) = (CartoonRings::default(), CartoonWorkspace::default());
    for style in Style::ALL {
        let params = CartoonParams {
            style,
            ..CartoonParams::default()
        };
        let kinds = compare(
            &polymer,
            &positions,
            &Coloring::ALL,
            &params,
            &mut rings,
            &mut workspace,
            &format!("1K5I, {}", style.word()),
        );
        assert!(kinds.contains(&PIECE_TUBE));
        assert_eq!(kinds.contains(&PIECE_BOXES), style == Style::Cartoon);
    }
}
