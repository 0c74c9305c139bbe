//! Unit tests of `cartoon`.

use super::*;
use std::collections::HashMap;

#[test]
fn ring_counts_equal_the_rings_made() {
    let mut x = 0x9e37_79b9_u32;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        x
    };
    let shapes = [Shape::Coil, Shape::Helix, Shape::Strand];
    for trial in 0..300 {
        let n = 2 + (next() % 40) as usize;
        let res: Vec<ProteinResidue> = (0..n)
            .map(|k| ProteinResidue {
                trace: [3.8 * k as f32, (k % 2) as f32, 0.0],
                guide: Some([3.8 * k as f32, 1.0, 1.2]),
                shape: shapes[(next() % 3) as usize],
                color: [255; 4],
                value: 0.0,
            })
            .collect();
        let params = CartoonParams {
            style: Style::ALL[trial % 3],
            segments_per_residue: 1 + (next() % 8) as usize,
            ..CartoonParams::default()
        };
        let made = |rings: Vec<Ring>| (rings.len(), rings.iter().skip(1).filter(|r| r.joined).count());
        let counted = Piece::ProteinTube(&res).ring_counts(&params);
        assert_eq!(counted, made(protein_rings(&res, &params)), "trial {trial}");
        let nucleic: Vec<NucleicResidue> = res
            .iter()
            .map(|r| NucleicResidue {
                trace: r.trace,
                base: None,
                color: r.color,
                value: 0.0,
            })
            .collect();
        let counted = Piece::NucleicTube(&nucleic).ring_counts(&params);
        assert_eq!(counted, made(nucleic_rings(&nucleic, &params)), "trial {trial}");
    }
}

#[test]
fn section_points_equal_the_superellipse_formula() {
    let general = |pr: Profile, c: f32, s: f32| {
        let (p, q) = (2.0 / pr.e, 2.0 - 2.0 / pr.e);
        let pw = |x: f32, k: f32| x.signum() * x.abs().powf(k);
        (
            [pr.a * pw(c, p), pr.b * pw(s, p)],
            [pw(c, q) / pr.a.max(1e-6), pw(s, q) / pr.b.max(1e-6)],
        )
    };
    let mut x = 0x2545_f491_u32;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        x as f32 / u32::MAX as f32
    };
    for _ in 0..1000 {
        let e = [2.0, 6.0, 2.0 + 4.0 * next()][(3.0 * next()) as usize % 3];
        let pr = Profile {
            a: 3.0 * next(),
            b: 3.0 * next(),
            e,
        };
        let angle = std::f32::consts::TAU * next();
        let (c, s) = (angle.cos(), angle.sin());
        let (fast, slow) = (pr.at(c, s), general(pr, c, s));
        let bits = |v: ([f32; 2], [f32; 2])| [v.0[0], v.0[1], v.1[0], v.1[1]].map(f32::to_bits);
        assert_eq!(bits(fast), bits(slow), "{pr:?} at ({c}, {s})");
    }
}

fn residue(trace: [f32; 3], guide: Option<[f32; 3]>, shape: Shape, color: [u8; 4]) -> ProteinResidue {
    ProteinResidue {
        trace,
        guide,
        shape,
        color,
        value: 0.0,
    }
}

/// Every edge shared by exactly two triangles, in opposite directions: closed and oriented.
fn assert_closed(mesh: &MeshData) {
    let mut edges: HashMap<(u32, u32), i32> = HashMap::new();
    // Merge vertices at the same position (rings duplicated for flat normals, caps).
    let key = |i: u32| {
        let p = mesh.positions_angstrom[i as usize];
        p.map(|x| (x * 1e4).round() as i64)
    };
    let mut canon: HashMap<[i64; 3], u32> = HashMap::new();
    let ids: Vec<u32> = (0..mesh.positions_angstrom.len() as u32)
        .map(|i| *canon.entry(key(i)).or_insert(i))
        .collect();
    for t in mesh.indices.chunks_exact(3) {
        let v = [ids[t[0] as usize], ids[t[1] as usize], ids[t[2] as usize]];
        for k in 0..3 {
            let (a, b) = (v[k], v[(k + 1) % 3]);
            if a == b {
                continue;
            }
            *edges.entry((a, b)).or_default() += 1;
        }
    }
    for (&(a, b), &count) in &edges {
        let back = edges.get(&(b, a)).copied().unwrap_or(0);
        assert_eq!(count, back, "edge {a}-{b} used {count} times forward, {back} back");
    }
}

fn assert_sane(mesh: &MeshData) {
    assert!(!mesh.is_empty());
    assert_eq!(mesh.normals.len(), mesh.positions_angstrom.len());
    assert_eq!(mesh.colors_rgba8.len(), mesh.positions_angstrom.len());
    for (p, n) in mesh.positions_angstrom.iter().zip(&mesh.normals) {
        assert!(p.iter().all(|x| x.is_finite()), "{p:?}");
        let l = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
        assert!((l - 1.0).abs() < 1e-3, "normal {n:?} has length {l}");
    }
    let nv = mesh.positions_angstrom.len() as u32;
    assert!(mesh.indices.iter().all(|&i| i < nv));
}

#[test]
fn straight_coil_is_a_closed_tube_of_the_coil_radius() {
    let res: Vec<ProteinResidue> = (0..6)
        .map(|k| {
            residue(
                [3.8 * k as f32, 0.0, 0.0],
                Some([3.8 * k as f32, 1.2, 0.0]),
                Shape::Coil,
                [9, 9, 9, 255],
            )
        })
        .collect();
    let params = CartoonParams::default();
    let mesh = build(&[Segment::Protein(res)], &params);
    assert_sane(&mesh);
    assert_closed(&mesh);
    assert!(mesh.enclosed_volume_angstrom3() > 0.0);
    // Side vertices (not cap centres) lie on the tube radius around the x axis.
    for (p, n) in mesh.positions_angstrom.iter().zip(&mesh.normals) {
        if n[0].abs() < 0.5 {
            let r = (p[1] * p[1] + p[2] * p[2]).sqrt();
            assert!((r - params.coil_radius_angstrom).abs() < 1e-4, "{p:?}");
        }
    }
    let want = std::f64::consts::PI * 0.3f64.powi(2) * 19.0;
    let v = mesh.enclosed_volume_angstrom3();
    // A 16-sided polygon holds 2.5 % less area than its circle.
    assert!((v - want).abs() / want < 0.05, "{v} vs {want}");
}

#[test]
fn strand_ends_in_an_arrowhead_at_its_last_residue() {
    // Pleated strand along x (CA alternating in z), carbonyls alternating in y, then coil.
    let mut res = Vec::new();
    for k in 0..8 {
        let x = 3.3 * k as f32;
        let z = if k % 2 == 0 { 0.4 } else { -0.4 };
        let side = if k % 2 == 0 { 1.0 } else { -1.0 };
        let shape = if (1..=5).contains(&k) {
            Shape::Strand
        } else {
            Shape::Coil
        };
        res.push(residue(
            [x, 0.0, z],
            Some([x + 0.6, side * 1.2, z]),
            shape,
            [k as u8, 0, 0, 255],
        ));
    }
    let params = CartoonParams::default();
    let mesh = build(&[Segment::Protein(res)], &params);
    assert_sane(&mesh);
    assert_closed(&mesh);
    // Half-width across (y) at residue positions: the body is half the strand width, the head's
    // base 1.6 times that at residue 5 (x = 16.5), narrowing to the coil tube at residue 6.
    let width_near = |x0: f32| {
        mesh.positions_angstrom
            .iter()
            .filter(|p| (p[0] - x0).abs() < 0.05)
            .map(|p| p[1].abs())
            .fold(0.0f32, f32::max)
    };
    let body = width_near(9.9);
    let head = width_near(16.5);
    let tip = width_near(19.8);
    assert!((body - 1.0).abs() < 0.05, "body half-width {body}");
    assert!((head - 1.6).abs() < 1e-3, "arrowhead half-width {head}");
    assert!((tip - 0.3).abs() < 0.05, "arrow tip half-width {tip}");
    // The head is the widest part of the whole cartoon.
    let widest = mesh
        .positions_angstrom
        .iter()
        .map(|p| p[1].abs())
        .fold(0.0f32, f32::max);
    assert!((widest - head).abs() < 1e-3);
}

#[test]
fn helix_ribbon_is_flat_and_as_wide_as_asked() {
    // An ideal alpha helix: radius 2.3 A, 100 degrees and 1.5 A per residue; carbonyls along +z.
    let res: Vec<ProteinResidue> = (0..14)
        .map(|k| {
            let a = (100.0 * k as f32).to_radians();
            let p = [2.3 * a.cos(), 2.3 * a.sin(), 1.5 * k as f32];
            residue(p, Some([p[0], p[1], p[2] + 1.2]), Shape::Helix, [200, 0, 0, 255])
        })
        .collect();
    let params = CartoonParams::default();
    let mesh = build(&[Segment::Protein(res)], &params);
    assert_sane(&mesh);
    assert_closed(&mesh);
    assert!(mesh.colors_rgba8.iter().all(|&c| c == [200, 0, 0, 255]));
    // Cross-section area of an ellipse with the helix ribbon's axes, times the arc length,
    // bounds the volume from both sides loosely.
    let area = std::f64::consts::PI * 1.2 * 0.25;
    let v = mesh.enclosed_volume_angstrom3();
    let arc = 13.0 * ((2.0 * 2.3 * (50f64.to_radians()).sin()).powi(2) + 1.5f64.powi(2)).sqrt();
    assert!(v > 0.6 * area * arc && v < 1.2 * area * arc, "{v} vs {}", area * arc);
}

#[test]
fn degenerate_inputs_give_finite_meshes() {
    let c = [1, 2, 3, 255];
    // Collinear trace and guides along the chain.
    let collinear: Vec<ProteinResidue> = (0..5)
        .map(|k| residue([k as f32, 0.0, 0.0], Some([k as f32 + 0.5, 0.0, 0.0]), Shape::Helix, c))
        .collect();
    // All atoms on one point.
    let coincident: Vec<ProteinResidue> = (0..5)
        .map(|_| residue([1.0, 1.0, 1.0], Some([1.0, 1.0, 1.0]), Shape::Strand, c))
        .collect();
    // Missing guides, NaN in the middle, a lone residue.
    let mut gaps: Vec<ProteinResidue> = (0..7)
        .map(|k| residue([0.0, k as f32 * 3.8, 0.0], None, Shape::Strand, c))
        .collect();
    gaps[3].trace = [f32::NAN, 0.0, 0.0];
    gaps[5].guide = Some([f32::INFINITY, 0.0, 0.0]);
    let lone = vec![residue([0.0; 3], None, Shape::Coil, c)];
    for style in [Style::Cartoon, Style::Tube, Style::Trace] {
        let params = CartoonParams {
            style,
            ..CartoonParams::default()
        };
        for seg in [&collinear, &coincident, &gaps] {
            let mesh = build(&[Segment::Protein(seg.clone())], &params);
            assert_sane(&mesh);
        }
        assert!(build(&[Segment::Protein(lone.clone())], &params).is_empty());
    }
    // Hostile parameters fall back to the defaults.
    let params = CartoonParams {
        sides: 0,
        segments_per_residue: 0,
        coil_radius_angstrom: f32::NAN,
        ..CartoonParams::default()
    };
    assert_sane(&build(&[Segment::Protein(collinear)], &params));
}

#[test]
fn nucleic_tube_and_slabs_are_closed_and_coloured() {
    let res: Vec<NucleicResidue> = (0..6)
        .map(|k| {
            let z = 3.4 * k as f32;
            let a = (36.0 * k as f32).to_radians();
            let p = [9.0 * a.cos(), 9.0 * a.sin(), z];
            NucleicResidue {
                trace: p,
                base: Some(BaseSlab {
                    root: [6.0 * a.cos(), 6.0 * a.sin(), z],
                    tip: [1.0 * a.cos(), 1.0 * a.sin(), z],
                    plane: [6.0 * a.cos() - a.sin(), 6.0 * a.sin() + a.cos(), z],
                }),
                color: [0, 0, k as u8, 255],
                value: k as f32,
            }
        })
        .collect();
    let params = CartoonParams {
        with_values: true,
        ..CartoonParams::default()
    };
    let mesh = build(&[Segment::Nucleic(res)], &params);
    assert_sane(&mesh);
    assert_closed(&mesh);
    assert_eq!(mesh.values.len(), mesh.positions_angstrom.len());
    assert!(mesh.values.iter().all(|v| (0.0..=5.0).contains(v)));
    // Every base slab reaches its tip, near the axis.
    assert!(
        mesh.positions_angstrom
            .iter()
            .any(|p| (p[0] * p[0] + p[1] * p[1]).sqrt() < 1.4)
    );
}

#[test]
fn output_is_deterministic_and_pieces_are_concatenated() {
    let a: Vec<ProteinResidue> = (0..4)
        .map(|k| residue([k as f32 * 3.8, 0.0, 0.0], None, Shape::Coil, [1, 0, 0, 255]))
        .collect();
    let b: Vec<ProteinResidue> = (0..4)
        .map(|k| residue([k as f32 * 3.8, 10.0, 0.0], None, Shape::Coil, [2, 0, 0, 255]))
        .collect();
    let both = build(
        &[Segment::Protein(a.clone()), Segment::Protein(b.clone())],
        &CartoonParams::default(),
    );
    let one = build(&[Segment::Protein(a)], &CartoonParams::default());
    let two = build(&[Segment::Protein(b)], &CartoonParams::default());
    let mut joined = one.clone();
    joined.append(&two);
    assert_eq!(both, joined);
    // Into a larger mesh's buffers (with values): the same mesh as built fresh.
    let mut reused = both.clone();
    reused.values = vec![7.0; both.positions_angstrom.len()];
    let first = [Segment::Protein(
        (0..4)
            .map(|k| residue([k as f32 * 3.8, 0.0, 0.0], None, Shape::Coil, [1, 0, 0, 255]))
            .collect(),
    )];
    build_into(&first, &CartoonParams::default(), &mut reused);
    assert_eq!(reused, one);
}
