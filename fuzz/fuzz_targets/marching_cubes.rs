//! Marching cubes on arbitrary lattices (any values, NaN and infinities included, sheared and
//! left-handed frames): extraction and export must never panic and indices must stay in range.
#![no_main]

use libfuzzer_sys::fuzz_target;
use orbitfield::model::{Grid3, Lattice};
use orbitfield::surface;

fuzz_target!(|data: &[u8]| {
    let Some((head, rest)) = data.split_first_chunk::<8>() else {
        return;
    };
    let dims = [head[0], head[1], head[2]].map(|d| usize::from(d % 9));
    let iso = f32::from_le_bytes([head[3], head[4], head[5], head[6]]);
    let values: Vec<f32> = rest
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let mut lattice = Lattice::axis_aligned([0.0; 3], 0.3, dims);
    if head[7] & 1 != 0 {
        lattice.steps_bohr[2][0] = 0.2;
    }
    if head[7] & 2 != 0 {
        lattice.steps_bohr[1][1] = -0.3;
    }
    // Mostly take exactly as many values as the lattice needs; sometimes leave the count wrong.
    let n = lattice.n_points();
    let values = if head[7] & 4 == 0 && values.len() >= n {
        values[..n].to_vec()
    } else {
        values
    };
    let grid = Grid3 {
        lattice,
        values,
        description: String::new(),
    };
    let lobes = surface::extract_two_sign(&grid, iso);
    for mesh in [&lobes.positive, &lobes.negative] {
        assert!(mesh.indices.len() % 3 == 0);
        assert!(
            mesh.indices
                .iter()
                .all(|&i| (i as usize) < mesh.positions_angstrom.len())
        );
        assert_eq!(mesh.positions_angstrom.len(), mesh.normals.len());
        let _ = surface::export::ply_bytes(mesh);
        let _ = surface::export::obj_string(mesh);
    }
});
