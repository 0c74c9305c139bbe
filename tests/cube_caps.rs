//! A cube file's box cuts its isosurfaces: PySCF's cubes of water (3-bohr margin) cut the density
//! at 0.002 a.u. and the HOMO's lobes at ±0.02. The viewer closes them with caps on the box's faces,
//! as ChimeraX does: every lobe drawn is a closed surface, and the density's encloses the volume
//! where the file's values exceed the level (the test's own trapezoid sum over the file's points).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use orbitfield::app::state::AppState;

#[path = "common/journey.rs"]
mod journey;

/// The lattice (dims, steps in bohr, axis-aligned) and values (z fastest) of a cube file, read here.
fn cube(rel: &str) -> ([usize; 3], [f64; 3], Vec<f64>) {
    let text = std::fs::read_to_string(journey::data(rel)).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let atoms: i64 = lines[2].split_whitespace().next().unwrap().parse().unwrap();
    let axis = |i: usize| -> (usize, Vec<f64>) {
        let w: Vec<&str> = lines[3 + i].split_whitespace().collect();
        (
            w[0].parse().unwrap(),
            w[1..4].iter().map(|x| x.parse().unwrap()).collect(),
        )
    };
    let (nx, ax) = axis(0);
    let (ny, ay) = axis(1);
    let (nz, az) = axis(2);
    assert!(ax[1] == 0.0 && ax[2] == 0.0 && ay[0] == 0.0 && ay[2] == 0.0 && az[0] == 0.0 && az[1] == 0.0);
    let values: Vec<f64> = lines[6 + atoms.unsigned_abs() as usize..]
        .iter()
        .flat_map(|l| l.split_whitespace())
        .map(|x| x.parse().unwrap())
        .collect();
    assert_eq!(values.len(), nx * ny * nz);
    ([nx, ny, nz], [ax[0], ay[1], az[2]], values)
}

/// The volume (cubic Angstrom) where the values exceed `iso`: each point's share of the box (half
/// on a face, a quarter on an edge, an eighth at a corner) counted where it is above the level.
fn volume_above(dims: [usize; 3], steps_bohr: [f64; 3], values: &[f64], iso: f64) -> f64 {
    let weight = |i: usize, n: usize| if i == 0 || i + 1 == n { 0.5 } else { 1.0 };
    let mut sum = 0.0;
    for i in 0..dims[0] {
        for j in 0..dims[1] {
            for k in 0..dims[2] {
                if values[(i * dims[1] + j) * dims[2] + k] > iso {
                    sum += weight(i, dims[0]) * weight(j, dims[1]) * weight(k, dims[2]);
                }
            }
        }
    }
    sum * steps_bohr
        .iter()
        .map(|&h| orbitfield::model::units::angstrom_from_bohr(h))
        .product::<f64>()
}

fn settled(rel: &str) -> AppState {
    let mut state = journey::opened(&[rel], false);
    for _ in 0..400 {
        state.update_reps();
        if state.reps().fields().all(|(_, f)| f.pipeline.shown.is_some()) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    state
}

#[test]
fn a_cube_files_box_closes_its_surfaces() {
    let (dims, step, values) = cube("engine/water_density_24.cube");
    let on_faces = (0..values.len())
        .filter(|&n| {
            let (i, j, k) = (n / (dims[1] * dims[2]), n / dims[2] % dims[1], n % dims[2]);
            [i, j, k].iter().zip(dims).any(|(&x, d)| x == 0 || x + 1 == d) && values[n] > 0.002
        })
        .count();
    assert!(on_faces > 0, "the density reaches the box at 0.002 a.u.");

    let state = settled("engine/water_density_24.cube");
    let (_, f) = state.reps().fields().next().expect("the density's isosurface");
    let iso = f64::from(f.pipeline.shown_iso);
    assert!((iso - 0.002).abs() < 1e-6, "drawn at the density's 0.002 a.u.: {iso}");
    let mesh = f.pipeline.lobes[0].as_ref().expect("a surface");
    assert_eq!(mesh.open_edges(), 0, "the density's surface is closed");
    let expected = volume_above(dims, step, &values, iso);
    let got = mesh.enclosed_volume_angstrom3();
    assert!((got / expected - 1.0).abs() < 0.05, "{got} against {expected} A^3");

    let state = settled("engine/water_homo_24.cube");
    let (_, f) = state.reps().fields().next().expect("the HOMO's isosurfaces");
    let lobes: Vec<_> = f.pipeline.lobes.iter().flatten().collect();
    assert_eq!(lobes.len(), 2, "both lobes");
    for lobe in lobes {
        assert_eq!(lobe.open_edges(), 0, "each lobe is closed");
        assert!(lobe.enclosed_volume_angstrom3() > 0.0, "and wound outward");
    }
}
