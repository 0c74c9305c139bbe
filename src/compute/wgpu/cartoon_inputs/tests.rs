//! Unit tests of `cartoon_inputs`.

#![allow(clippy::unwrap_used, clippy::indexing_slicing)]
use super::*;
use crate::surface::cartoon::{BaseSlab, NucleicResidue, ProteinResidue, Shape, Style, build};

fn chain(n: usize, seed: u32) -> Vec<ProteinResidue> {
    let mut x = seed;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        x
    };
    let shapes = [Shape::Coil, Shape::Helix, Shape::Strand];
    (0..n)
        .map(|k| ProteinResidue {
            trace: [3.8 * k as f32, (next() % 3) as f32, (next() % 2) as f32],
            guide: (next() % 5 != 0).then(|| [3.8 * k as f32, 1.0, 1.2 + (next() % 3) as f32]),
            shape: shapes[(next() % 3) as usize],
            color: [(next() % 256) as u8, 7, 9, 200],
            value: k as f32,
        })
        .collect()
}

/// `n` nucleotides stacked 3.4 A apart along z, each with a base slab but `without_base`.
fn nucleic_strand(n: usize, without_base: Option<usize>) -> Vec<NucleicResidue> {
    (0..n)
        .map(|k| {
            let z = 3.4 * k as f32;
            NucleicResidue {
                trace: [9.0, k as f32, z],
                base: (Some(k) != without_base).then_some(BaseSlab {
                    root: [6.0, k as f32, z],
                    tip: [1.0, k as f32, z],
                    plane: [6.0, k as f32 + 1.0, z],
                }),
                color: [0, 0, k as u8, 255],
                value: k as f32,
            }
        })
        .collect()
}

#[test]
fn inputs_layout_and_counts_match_the_cpu_mesh() {
    assert_eq!(std::mem::size_of::<CartoonRecord>(), 64);
    assert_eq!(std::mem::size_of::<CartoonPiece>(), 64);
    assert_eq!(std::mem::size_of::<CartoonResidue>(), 40);
    let nucleic = nucleic_strand(5, None);
    for (trial, style) in Style::ALL.into_iter().enumerate() {
        let mut whole = chain(40, 0x2545_f491 + trial as u32);
        for r in &mut whole {
            r.guide = r.guide.or(Some([r.trace[0], 1.0, 1.5]));
        }
        let segments = vec![
            Segment::Protein(chain(30, 0x1234_5678 + trial as u32)),
            Segment::Nucleic(nucleic.clone()),
            Segment::Protein(whole),
            Segment::Protein(chain(3, 0x9e37_79b9 + trial as u32)),
        ];
        let params = CartoonParams {
            style,
            segments_per_residue: 3 + trial,
            ..CartoonParams::default()
        };
        let mesh = build(&segments, &params);
        let mut rings = CartoonRings::default();
        rings_into(&segments, &params, &mut rings);
        assert_eq!(rings.n_vertices as usize, mesh.positions_angstrom.len());
        assert_eq!(rings.n_indices as usize, mesh.indices.len());
        let kinds: Vec<u32> = rings.pieces.iter().map(|p| p.kind).collect();
        assert!(
            kinds.contains(&PIECE_SPLINE) && kinds.contains(&PIECE_TUBE),
            "{kinds:?}"
        );
        let (mut records, mut bands) = (0, 0);
        for p in &rings.pieces {
            assert_eq!((p.first_record, p.first_band), (records, bands));
            records += p.n_records;
            bands += p.n_bands;
            if p.kind != PIECE_SPLINE {
                continue;
            }
            // Each interval's rings start where the previous ones end; the last residue holds
            // the last ring; two rings of each arrowhead's back start no band.
            let res = &rings.residues[p.first_input as usize..][..p.n_residues_or_first_band as usize];
            let arrows = res.iter().filter(|r| r.flags & RESIDUE_ARROW != 0).count() as u32;
            assert_eq!(res.last().unwrap().first_ring + 1, p.n_records);
            assert_eq!(p.n_bands, p.n_records - 1 - 2 * arrows);
            for w in res.windows(2) {
                let arrow = w[0].flags & RESIDUE_ARROW != 0;
                let per = params.segments_per_residue as u32;
                assert_eq!(w[1].first_ring, w[0].first_ring + per + if arrow { 3 } else { 0 });
                assert_eq!(w[1].flags & RESIDUE_AFTER_ARROW != 0, arrow);
            }
            // Unit side vectors, each within 90 degrees of the one before.
            for w in res.windows(2) {
                let d: f32 = (0..3).map(|a| w[0].side[a] * w[1].side[a]).sum();
                assert!(d >= 0.0, "{:?} then {:?}", w[0].side, w[1].side);
            }
        }
        assert_eq!((u64::from(records), u64::from(bands)), (rings.n_records, rings.n_bands));
        // Again into the larger buffers of the first: the same inputs as fresh.
        let mut again = rings.clone();
        rings_into(&segments[..1], &params, &mut again);
        let mut fresh = CartoonRings::default();
        rings_into(&segments[..1], &params, &mut fresh);
        assert_eq!(again, fresh);
    }
}

/// Every field of two inputs equal, floats bit for bit.
fn assert_same_bits(a: &CartoonRings, b: &CartoonRings, what: &str) {
    if let Some(d) = a.bitwise_difference(b) {
        panic!("{what}: {d}");
    }
}

#[test]
fn rings_of_runs_equal_rings_into_of_the_segments() {
    let mut x = 0x9e37_79b9_u32;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        x
    };
    let nucleic = nucleic_strand(7, Some(2));
    let mut broken = nucleic.clone();
    broken[4].trace = [f32::NAN, 0.0, 0.0];
    let mut workspace = RingsWorkspace::default();
    let mut rings = CartoonRings::default();
    for trial in 0..60 {
        // Runs of residues in one numbering, with residues between them left out (or none).
        let gaps = trial % 3 != 0;
        let mut all: Vec<ProteinResidue> = Vec::new();
        let mut runs = Vec::new();
        for r in 0..1 + next() % 9 {
            if gaps && next() % 2 == 0 {
                all.extend(chain(1 + (next() % 3) as usize, next()));
            }
            let n = [1, 2, 3, 30, 200][(next() % 5) as usize];
            let mut run = chain(n, next());
            match (r + next()) % 6 {
                // No carbonyls over a long stretch (the CPU carries the side vector).
                0 if n > 20 => run[3..20].iter_mut().for_each(|p| p.guide = None),
                // Two trace points on one spot.
                1 if n > 2 => run[2].trace = run[1].trace,
                // Carbonyls on the trace point or with a non-finite coordinate.
                2 if n > 2 => {
                    run[1].guide = Some(run[1].trace);
                    run[2].guide = Some([f32::INFINITY, 0.0, 0.0]);
                }
                _ => {}
            }
            runs.push(all.len()..all.len() + n);
            all.extend(run);
        }
        if gaps && next() % 2 == 0 {
            all.extend(chain(2, next()));
        }
        let tail = match trial % 4 {
            0 => vec![],
            1 => vec![nucleic.clone()],
            _ => vec![broken.clone(), nucleic[..1].to_vec(), nucleic.clone()],
        };
        let params = CartoonParams {
            style: Style::ALL[trial % 3],
            segments_per_residue: 1 + (next() % 8) as usize,
            sides: 4 + (next() % 13) as usize,
            with_values: trial % 2 == 0,
            ..CartoonParams::default()
        };
        let mut segments: Vec<Segment> = runs.iter().map(|r| Segment::Protein(all[r.clone()].to_vec())).collect();
        segments.extend(tail.iter().cloned().map(Segment::Nucleic));
        let mut want = CartoonRings::default();
        rings_into(&segments, &params, &mut want);
        // Into the buffers of the trial before (and its workspace): as into fresh ones.
        rings_of_runs(&runs, |k, _, _| all[k], &tail, &params, &mut rings, &mut workspace);
        assert_same_bits(&rings, &want, &format!("trial {trial}"));
        let kinds: Vec<u32> = rings.pieces.iter().map(|p| p.kind).collect();
        if trial == 7 {
            assert!(
                kinds.contains(&PIECE_SPLINE) && kinds.contains(&PIECE_TUBE),
                "{kinds:?}"
            );
        }
    }
}
