//! The atom each vertex of a molecular surface belongs to: the atom of a selection whose van der
//! Waals sphere lies nearest the vertex (distance to the centre less the radius). A surface
//! coloured by its atoms takes each vertex's colour from that atom, as ChimeraX colours a surface
//! patch by its atom, and a click on the surface picks the same atom (`app::surface_pick`).

use super::cells::CellList;

/// Width of the search cells (Angstrom): a surface vertex lies within about a probe radius of its
/// atom's sphere, so its atom is almost always among the 27 cells around it.
const CELL_ANGSTROM: f64 = 6.0;

/// For every vertex, the index of the atom among those `include` admits (finite positions only)
/// whose sphere lies nearest it; `None` when no atom is admitted. Exact: a vertex whose nearest
/// sphere might lie outside the cells searched is compared with every admitted atom.
pub fn nearest_sphere_atoms(
    vertices_angstrom: &[[f32; 3]],
    atoms_angstrom: &[[f32; 3]],
    radii_angstrom: &[f32],
    include: impl Fn(usize) -> bool,
) -> Option<Vec<u32>> {
    let admitted = |i: usize| include(i) && i < radii_angstrom.len() && radii_angstrom[i].is_finite();
    let positions: Vec<[f64; 3]> = atoms_angstrom.iter().map(|p| p.map(f64::from)).collect();
    let cells = CellList::new(&positions, admitted, CELL_ANGSTROM);
    let all: Vec<usize> = (0..positions.len())
        .filter(|&i| admitted(i) && positions[i].iter().all(|x| x.is_finite()))
        .collect();
    if all.is_empty() {
        return None;
    }
    let r_max = all.iter().map(|&i| f64::from(radii_angstrom[i])).fold(0.0, f64::max);
    let gap = |i: usize, p: [f64; 3]| -> f64 {
        let q = positions[i];
        ((q[0] - p[0]).powi(2) + (q[1] - p[1]).powi(2) + (q[2] - p[2]).powi(2)).sqrt() - f64::from(radii_angstrom[i])
    };
    let nearest = |p: [f64; 3], candidates: &mut dyn Iterator<Item = usize>| -> Option<(usize, f64)> {
        let mut best: Option<(usize, f64)> = None;
        for i in candidates {
            let g = gap(i, p);
            // Ties go to the lower index, whatever order the cells list the atoms in.
            if best.is_none_or(|(b, bg)| g < bg || (g == bg && i < b)) {
                best = Some((i, g));
            }
        }
        best
    };
    let out = vertices_angstrom
        .iter()
        .map(|v| {
            let p = v.map(f64::from);
            // Every atom whose sphere lies nearer than the best found has its centre within
            // best + r_max of p: inside the cells searched when that is at most a cell width.
            let local = nearest(p, &mut cells.near(p)).filter(|&(_, g)| g + r_max <= CELL_ANGSTROM);
            let (i, _) = local
                .or_else(|| nearest(p, &mut all.iter().copied()))
                .unwrap_or((all[0], 0.0));
            i as u32
        })
        .collect();
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::test_rng::Rng;

    #[test]
    fn each_vertex_gets_the_atom_a_search_of_every_atom_finds() {
        let mut rng = Rng::fresh();
        let atoms: Vec<[f32; 3]> = (0..400)
            .map(|_| [rng.next() * 30.0, rng.next() * 25.0, rng.next() * 20.0].map(|x| x as f32))
            .collect();
        let radii: Vec<f32> = (0..400).map(|_| (1.0 + rng.next()) as f32).collect();
        // Vertices near the atoms and far from them (the slow path).
        let vertices: Vec<[f32; 3]> = (0..600)
            .map(|k| {
                let spread = if k % 10 == 0 { 120.0 } else { 36.0 };
                [0, 1, 2].map(|_| (rng.next() * spread - spread / 6.0) as f32)
            })
            .collect();
        let include = |i: usize| i % 5 != 3;
        let got = nearest_sphere_atoms(&vertices, &atoms, &radii, include).expect("atoms admitted");
        for (v, &g) in vertices.iter().zip(&got) {
            let gap = |i: usize| {
                let d: f32 = (0..3).map(|k| (atoms[i][k] - v[k]).powi(2)).sum::<f32>().sqrt();
                d - radii[i]
            };
            assert!(include(g as usize));
            let best = (0..atoms.len())
                .filter(|&i| include(i))
                .map(gap)
                .fold(f32::INFINITY, f32::min);
            assert!(
                gap(g as usize) <= best + 1e-4,
                "vertex {v:?}: atom {g} at {} , best {best}",
                gap(g as usize)
            );
        }
    }

    #[test]
    fn a_larger_sphere_wins_a_vertex_nearer_another_centre() {
        let atoms = [[0.0, 0.0, 0.0], [4.0, 0.0, 0.0]];
        let radii = [1.0, 2.5];
        // 1.8 from atom 0's centre (0.8 outside it), 2.2 from atom 1's (0.3 inside it).
        let got = nearest_sphere_atoms(&[[1.8, 0.0, 0.0]], &atoms, &radii, |_| true);
        assert_eq!(got, Some(vec![1]));
        assert_eq!(
            nearest_sphere_atoms(&[[1.8, 0.0, 0.0]], &atoms, &radii, |i| i == 0),
            Some(vec![0])
        );
        assert_eq!(nearest_sphere_atoms(&[[0.0; 3]], &atoms, &radii, |_| false), None);
    }
}
