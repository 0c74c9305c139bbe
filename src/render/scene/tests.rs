//! Unit tests of `scene`.

#![allow(clippy::unwrap_used, clippy::indexing_slicing)]
use super::*;
use crate::model::Lattice;

#[test]
fn own_colours_need_one_per_vertex_and_categorical_wins() {
    let p = [[0.0f32; 3]; 2];
    let mut m = MeshInput {
        positions_angstrom: &p,
        values: &[1.0, f32::NAN],
        ..MeshInput::default()
    };
    let v = own_colors(&m).unwrap();
    assert_eq!((v[0].value, v[1].value, v[0].color), (1.0, 0.0, 0));
    m.colors_rgba8 = &[[10, 20, 30, 0], [1, 2, 3, 4]];
    let c = own_colors(&m).unwrap();
    assert_eq!(c[0].color.to_le_bytes(), [10, 20, 30, 255]);
    m.colors_rgba8 = &[[1, 2, 3, 4]];
    m.values = &[2.0];
    assert_eq!(own_colors(&m), None);
}

#[test]
fn sampled_values_clamp_to_the_lattice_and_zero_non_finite_ones() {
    let bohr = crate::model::units::bohr_from_angstrom(1.0);
    let lattice = Lattice::axis_aligned([0.0; 3], bohr, [3, 2, 2]);
    let mut g = Grid3::zeros(lattice, "x");
    for k in 0..2 {
        for j in 0..2 {
            for i in 0..3 {
                g.values[lattice.index(i, j, k)] = i as f32;
            }
        }
    }
    let s = sampled_colors(&g, &[[0.5, 0.5, 0.5], [7.0, -1.0, 0.0], [-2.0, 0.0, 9.0]]);
    let v: Vec<f32> = s.iter().map(|c| c.value).collect();
    assert!(
        (v[0] - 0.5).abs() < 1e-5 && (v[1] - 2.0).abs() < 1e-5 && v[2].abs() < 1e-5,
        "{v:?}"
    );
    assert!(s.iter().all(|c| c.color == 0));
    g.values[0] = f32::NAN;
    assert_eq!(sampled_colors(&g, &[[0.0; 3]])[0].value, 0.0);
}
