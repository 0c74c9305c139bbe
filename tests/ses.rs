//! The solvent-excluded surface (`ses`) against exact references written out here:
//! - one atom: the surface is its van der Waals sphere (area, volume, every vertex);
//! - two atoms on the z axis: the surface of revolution whose profile is found from the exact
//!   distance to the accessible region in a meridian half-plane (the two inflated circles' exposed
//!   arcs and the corner where they meet, where the probe touches both atoms): the field at random
//!   points, the narrowest waist (the analytic `rho_c - p`), area and volume of the mesh;
//! - two atoms far enough apart for the probe to pass between them: two separate spheres;
//! - a random cluster: the lattice planes equal the point evaluation at every point;
//! - a protein: the excluded surface lies inside the accessible one and outside the atoms' cores,
//!   and `grid ses`, `render --surface ses` and the viewer's commands reach it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use orbitfield::compute::cpu;
use orbitfield::compute::molsurf::MolSurfAtoms;
use orbitfield::compute::ses::ExcludedSurface;
use orbitfield::compute::{Field, FieldInput, FieldJob};
use orbitfield::model::Lattice;
use orbitfield::model::field::LatticeSpec;
use orbitfield::model::units::{ANGSTROM_PER_BOHR, BOHR_PER_ANGSTROM};
use orbitfield::surface::{self, MeshData};
use std::f64::consts::PI;
use std::sync::Arc;

const PROBE: f64 = 1.4;

fn rng(salt: u64) -> impl FnMut() -> f64 {
    let mut seed = (0x9e37_79b9_7f4a_7c15u64 ^ salt ^ std::process::id() as u64).wrapping_mul(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos() as u64 | 1)
            .unwrap_or(7),
    ) | 1;
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn atoms(centers: &[[f64; 3]], radii: &[f64], probe: f64) -> MolSurfAtoms {
    MolSurfAtoms::from_radii_angstrom(centers, radii, 0.6)
        .unwrap()
        .excluded(probe)
        .unwrap()
}

fn surface_of(centers: &[[f64; 3]], radii: &[f64], spacing_angstrom: f64) -> MeshData {
    let atoms = atoms(centers, radii, PROBE);
    let lattice = LatticeSpec::AroundAtoms {
        spacing_angstrom,
        padding_angstrom: atoms.padding_angstrom(),
    }
    .build(centers)
    .unwrap();
    let job = FieldJob {
        field: Field::MolSurf,
        lattice,
        input: FieldInput::Spheres(Arc::new(atoms)),
    };
    let grid = cpu::evaluate_grid(&job).unwrap();
    surface::extract(&grid, 0.5)
}

/// The exact distance (Angstrom) from the point `(rho, z)` of a meridian half-plane to the region a
/// probe centre can reach around atoms on the z axis at `z_atoms` with radii `radii`: 0 outside every
/// inflated circle; inside, the distance to the nearest exposed point of their boundary (a circle's
/// arc where no other circle holds it, reached radially when the radial projection is exposed, else
/// at an end of the arc: a corner where two circles meet).
fn distance_to_accessible(z_atoms: &[f64], radii: &[f64], probe: f64, rho: f64, z: f64) -> f64 {
    let inflated: Vec<f64> = radii.iter().map(|r| r + probe).collect();
    let inside = |rho: f64, z: f64, skip: usize| {
        z_atoms
            .iter()
            .zip(&inflated)
            .enumerate()
            .any(|(i, (za, big))| i != skip && rho * rho + (z - za).powi(2) < big * big - 1e-12)
    };
    if !inside(rho, z, usize::MAX) {
        return 0.0;
    }
    let mut best = f64::INFINITY;
    for (i, (&za, &big)) in z_atoms.iter().zip(&inflated).enumerate() {
        // The radial projection onto circle i.
        let (dr, dz) = (rho, z - za);
        let len = (dr * dr + dz * dz).sqrt();
        let (pr, pz) = if len > 0.0 {
            (big * dr / len, za + big * dz / len)
        } else {
            (big, za)
        };
        if !inside(pr, pz, i) {
            best = best.min((big - len).abs());
        }
        // Corners: where circle i meets circle j in the half-plane (rho >= 0), if no third holds it.
        for (j, (&zb, &bigb)) in z_atoms.iter().zip(&inflated).enumerate() {
            if j <= i {
                continue;
            }
            let d = (zb - za).abs();
            if d == 0.0 || d >= big + bigb || d <= (big - bigb).abs() {
                continue;
            }
            let along = (big * big - bigb * bigb + d * d) / (2.0 * d);
            let cr = (big * big - along * along).max(0.0).sqrt();
            let cz = za + along * (zb - za).signum();
            let others = z_atoms
                .iter()
                .zip(&inflated)
                .enumerate()
                .any(|(k, (zk, bk))| k != i && k != j && cr * cr + (cz - zk).powi(2) < bk * bk);
            if !others {
                best = best.min(((rho - cr).powi(2) + (z - cz).powi(2)).sqrt());
            }
        }
    }
    best
}

/// The field the engines write, from the exact distance.
fn exact_value(z_atoms: &[f64], radii: &[f64], probe: f64, rho: f64, z: f64) -> f64 {
    let d = distance_to_accessible(z_atoms, radii, probe, rho, z);
    0.5 + 0.5 * ((d - probe) / probe).clamp(-1.0, 1.0)
}

/// Area and volume of the exact surface of revolution: the profile rho(z) where the distance to
/// the accessible region is the probe radius (outermost crossing, by bisection), integrated by frusta.
fn revolution_reference(z_atoms: &[f64], radii: &[f64], probe: f64) -> (f64, f64) {
    let z_lo = z_atoms
        .iter()
        .zip(radii)
        .map(|(z, r)| z - r)
        .fold(f64::INFINITY, f64::min)
        - 0.01;
    let z_hi = z_atoms
        .iter()
        .zip(radii)
        .map(|(z, r)| z + r)
        .fold(f64::NEG_INFINITY, f64::max)
        + 0.01;
    let excluded = |rho: f64, z: f64| distance_to_accessible(z_atoms, radii, probe, rho, z) > probe;
    let profile = |z: f64| -> f64 {
        // Scan outward for the last excluded point, then bisect its edge.
        let step = 0.01;
        let mut last = None;
        let mut rho = 0.0;
        while rho < 6.0 {
            if excluded(rho, z) {
                last = Some(rho);
            }
            rho += step;
        }
        let Some(a0) = last else { return 0.0 };
        let (mut a, mut b) = (a0, a0 + step);
        for _ in 0..60 {
            let m = 0.5 * (a + b);
            if excluded(m, z) {
                a = m;
            } else {
                b = m;
            }
        }
        0.5 * (a + b)
    };
    let n = 4_000;
    let dz = (z_hi - z_lo) / n as f64;
    let rs: Vec<f64> = (0..=n).map(|i| profile(z_lo + i as f64 * dz)).collect();
    let (mut area, mut volume) = (0.0, 0.0);
    for w in rs.windows(2) {
        let (r0, r1) = (w[0], w[1]);
        area += PI * (r0 + r1) * ((r1 - r0).powi(2) + dz * dz).sqrt();
        volume += PI * dz * (r0 * r0 + r0 * r1 + r1 * r1) / 3.0;
    }
    (area, volume)
}

#[test]
fn one_atom_is_its_van_der_waals_sphere() {
    for (r, spacing) in [(1.7, 0.2), (1.2, 0.15), (2.0, 0.3)] {
        let c = [0.3, -0.2, 0.1];
        let mesh = surface_of(&[c], &[r], spacing);
        let (area, volume) = (mesh.area_angstrom2(), mesh.enclosed_volume_angstrom3());
        let (want_area, want_volume) = (4.0 * PI * r * r, 4.0 / 3.0 * PI * r * r * r);
        assert!(
            (area / want_area - 1.0).abs() < 0.02,
            "R {r}: area {area} vs {want_area}"
        );
        assert!(
            (volume / want_volume - 1.0).abs() < 0.02,
            "R {r}: volume {volume} vs {want_volume}"
        );
        for p in &mesh.positions_angstrom {
            let d = ((p[0] as f64 - c[0]).powi(2) + (p[1] as f64 - c[1]).powi(2) + (p[2] as f64 - c[2]).powi(2)).sqrt();
            assert!(
                (d - r).abs() < 0.1 * spacing,
                "vertex at {d} A from the centre, radius {r}"
            );
        }
    }
}

#[test]
fn two_atoms_field_matches_the_exact_distance_at_random_points() {
    let mut rnd = rng(1);
    for _ in 0..4 {
        let (r1, r2) = (1.2 + 0.8 * rnd(), 1.2 + 0.8 * rnd());
        let gap = 1.5 + 2.5 * rnd();
        let z = [0.0, gap];
        let centers = [[0.0, 0.0, z[0]], [0.0, 0.0, z[1]]];
        let surface = ExcludedSurface::new(
            &centers.map(|c| c.map(|x| x * BOHR_PER_ANGSTROM)),
            &[r1 * BOHR_PER_ANGSTROM, r2 * BOHR_PER_ANGSTROM],
            PROBE * BOHR_PER_ANGSTROM,
        );
        let mut worst: f64 = 0.0;
        for _ in 0..3000 {
            let (phi, rho, zz) = (2.0 * PI * rnd(), 5.0 * rnd(), -3.0 + (gap + 6.0) * rnd());
            let x = [rho * phi.cos(), rho * phi.sin(), zz];
            // Where the surface can be (deeper points keep the samples' distance: `EXACT_BAND_ANGSTROM`).
            if distance_to_accessible(&z, &[r1, r2], PROBE, rho, zz) > PROBE + 0.6 {
                continue;
            }
            let got = surface.value_at(x.map(|v| v * BOHR_PER_ANGSTROM));
            let want = exact_value(&z, &[r1, r2], PROBE, rho, zz);
            worst = worst.max((got - want).abs());
        }
        // A value error of e is a distance error of 2 e p: 0.007 is 0.02 A.
        assert!(
            worst < 0.007,
            "radii {r1} {r2}, centres {gap} A apart: worst value error {worst}"
        );
    }
}

#[test]
fn two_atoms_mesh_has_the_exact_waist_area_and_volume() {
    let (r1, r2, gap) = (1.7, 1.5, 3.2);
    let z = [-1.6, 1.6];
    let centers = [[0.0, 0.0, z[0]], [0.0, 0.0, z[1]]];
    // The probe's circle where it touches both atoms, and the waist it leaves.
    let along = ((r1 + PROBE).powi(2) - (r2 + PROBE).powi(2) + gap * gap) / (2.0 * gap);
    let rho_c = ((r1 + PROBE).powi(2) - along * along).sqrt();
    let waist = rho_c - PROBE;
    assert!(waist > 0.3, "the test's atoms must overlap in a waist: {waist}");
    let (want_area, want_volume) = revolution_reference(&z, &[r1, r2], PROBE);
    let h = 0.1;
    let mesh = surface_of(&centers, &[r1, r2], h);
    let (area, volume) = (mesh.area_angstrom2(), mesh.enclosed_volume_angstrom3());
    assert!((area / want_area - 1.0).abs() < 0.01, "area {area} vs {want_area}");
    assert!(
        (volume / want_volume - 1.0).abs() < 0.01,
        "volume {volume} vs {want_volume}"
    );
    // The narrowest vertex ring, in the plane of the probe's circle.
    let zc = z[0] + along;
    let ring = mesh
        .positions_angstrom
        .iter()
        .filter(|p| (p[2] as f64 - zc).abs() < 0.5 * h)
        .map(|p| (p[0] as f64).hypot(p[1] as f64))
        .fold(f64::INFINITY, f64::min);
    assert!((ring - waist).abs() < 0.1 * h + 0.02, "waist {ring} A, exact {waist} A");
    // The union of the spheres is narrower there: the probe fills the crevice.
    let union_waist = (r1 * r1 - along * along)
        .max(r2 * r2 - (gap - along).powi(2))
        .max(0.0)
        .sqrt();
    assert!(
        waist > union_waist + 0.3,
        "the probe fills the crevice: {waist} against {union_waist}"
    );
}

#[test]
fn a_probe_passes_between_atoms_far_enough_apart() {
    let (r, gap) = (1.5, 2.0 * 1.5 + 2.0 * PROBE + 0.3);
    let mesh = surface_of(&[[0.0, 0.0, 0.0], [0.0, 0.0, gap]], &[r, r], 0.2);
    let want = 2.0 * 4.0 / 3.0 * PI * r * r * r;
    let volume = mesh.enclosed_volume_angstrom3();
    assert!(
        (volume / want - 1.0).abs() < 0.02,
        "volume {volume} vs two spheres {want}"
    );
    // Nothing between them.
    assert!(
        !mesh
            .positions_angstrom
            .iter()
            .any(|p| (p[2] as f64) > r + 0.1 && (p[2] as f64) < gap - r - 0.1),
        "a vertex between two atoms the probe passes between"
    );
    // Closer, where the probe's circle between them is wider than the probe, it leaves a neck.
    let big = r + PROBE;
    let gap = 2.0 * (big * big - PROBE * PROBE).sqrt() - 0.5;
    let closed = surface_of(&[[0.0, 0.0, 0.0], [0.0, 0.0, gap]], &[r, r], 0.2);
    let neck = ((big * big - gap * gap / 4.0).sqrt() - PROBE).max(0.0);
    let ring = closed
        .positions_angstrom
        .iter()
        .filter(|p| (p[2] as f64 - gap / 2.0).abs() < 0.1)
        .map(|p| (p[0] as f64).hypot(p[1] as f64))
        .fold(f64::INFINITY, f64::min);
    assert!((ring - neck).abs() < 0.05, "neck {ring} A, exact {neck} A");
}

#[test]
fn lattice_planes_equal_the_point_evaluation_on_a_random_cluster() {
    let mut rnd = rng(2);
    let n = 30;
    let centers: Vec<[f64; 3]> = (0..n).map(|_| [7.0 * rnd(), 7.0 * rnd(), 7.0 * rnd()]).collect();
    let radii: Vec<f64> = (0..n).map(|_| 1.0 + 0.9 * rnd()).collect();
    let a = atoms(&centers, &radii, 1.0 + rnd());
    let surface = a.excluded_surface().unwrap();
    let lattice = Lattice::axis_aligned(
        [
            -2.6 * BOHR_PER_ANGSTROM,
            -2.9 * BOHR_PER_ANGSTROM,
            -2.2 * BOHR_PER_ANGSTROM,
        ],
        0.37 * BOHR_PER_ANGSTROM,
        [35, 33, 34],
    );
    let job = FieldJob {
        field: Field::MolSurf,
        lattice,
        input: FieldInput::Spheres(Arc::new(a)),
    };
    let grid = cpu::evaluate_grid(&job).unwrap();
    let [nx, ny, nz] = lattice.dims;
    let (mut inside, mut outside, mut across) = (0, 0, 0);
    for k in 0..nz {
        for j in 0..ny {
            for i in 0..nx {
                let want = surface.value_at(lattice.point_bohr(i, j, k));
                let got = f64::from(grid.values[i + nx * (j + ny * k)]);
                assert!((got - want).abs() < 1e-5, "point {i} {j} {k}: {got} vs {want}");
                match want {
                    w if w >= 1.0 => inside += 1,
                    w if w <= 0.0 => outside += 1,
                    _ => across += 1,
                }
            }
        }
    }
    assert!(inside > 0 && outside > 0 && across > 0, "{inside} {outside} {across}");
    // Inside every atom's van der Waals sphere the field is past the surface; beyond every atom's
    // inflated sphere it is 0.
    for k in (0..nz).step_by(3) {
        for j in (0..ny).step_by(3) {
            for i in 0..nx {
                let x = lattice.point_bohr(i, j, k).map(|v| v * ANGSTROM_PER_BOHR);
                let got = grid.values[i + nx * (j + ny * k)];
                let dist =
                    |c: &[f64; 3]| ((x[0] - c[0]).powi(2) + (x[1] - c[1]).powi(2) + (x[2] - c[2]).powi(2)).sqrt();
                if centers.iter().zip(&radii).any(|(c, r)| dist(c) < r - 1e-6) {
                    assert!(got > 0.5, "{x:?} inside an atom: {got}");
                }
                if centers.iter().zip(&radii).all(|(c, r)| dist(c) > r + 2.0 + 1e-6) {
                    assert_eq!(got, 0.0, "{x:?} beyond every probe's reach");
                }
            }
        }
    }
}

#[path = "common/pqr.rs"]
mod pqr;

/// A protein (human carbonic anhydrase II, `tests/data/pb/hca.pqr.gz`, APBS's example): the excluded
/// surface against APBS's own molecular-surface marking (`srfm mol`: solute within radius + probe of
/// an atom, solvent again within the probe of a sampled accessible-surface point), as the
/// Poisson-Boltzmann maps build it (`compute::cpu::pb_surface`), on the same staggered lattice. The
/// two must agree at every point whose distance from the surface (our field's `2p v - p`) exceeds
/// the samples' gaps; the points on each side are counted.
#[test]
fn a_protein_agrees_with_apbs_molecular_surface_marking() {
    use orbitfield::compute::pb::{PbLattice, PbParams, PbSurface};
    let atoms = pqr::read_pqr("hca.pqr.gz");
    assert_eq!(atoms.positions_angstrom.len(), 2482);
    let n = atoms.positions_angstrom.len() as f64;
    let centre: [f64; 3] = std::array::from_fn(|k| atoms.positions_angstrom.iter().map(|p| p[k]).sum::<f64>() / n);
    let h = 0.9;
    let lattice = PbLattice::centered(centre, h, [65, 65, 65]);
    let params = PbParams {
        surface: PbSurface::Mol,
        ..PbParams::default()
    };
    let apbs = orbitfield::compute::cpu::pb_surface::dielectric_maps(&atoms, &lattice, &params);
    // Our field on the lattice APBS's x map sits on (shifted by half a spacing along x).
    let origin = lattice.point(0, 0, 0);
    let ours_lattice = Lattice::axis_aligned(
        [
            (origin[0] + 0.5 * h) * BOHR_PER_ANGSTROM,
            origin[1] * BOHR_PER_ANGSTROM,
            origin[2] * BOHR_PER_ANGSTROM,
        ],
        h * BOHR_PER_ANGSTROM,
        lattice.dims,
    );
    let a = MolSurfAtoms::from_radii_angstrom(&atoms.positions_angstrom, &atoms.radii_angstrom, 0.6)
        .unwrap()
        .excluded(PROBE)
        .unwrap();
    let job = FieldJob {
        field: Field::MolSurf,
        lattice: ours_lattice,
        input: FieldInput::Spheres(Arc::new(a)),
    };
    let ours = cpu::evaluate_grid(&job).unwrap();
    let (mut solute, mut solvent, mut near, mut bad) = (0, 0, 0, Vec::new());
    for (idx, (&v, &eps)) in ours.values.iter().zip(&apbs[0]).enumerate() {
        let inside_apbs = eps == params.eps_in;
        // Distance past the surface (positive inside), from the field where it is not clamped.
        let past = 2.0 * PROBE * f64::from(v) - PROBE;
        if v > 0.0 && v < 1.0 && past.abs() < 0.25 {
            near += 1;
            continue;
        }
        let inside_ours = v > 0.5;
        if inside_ours != inside_apbs {
            bad.push((idx, v, eps));
        }
        if inside_ours {
            solute += 1;
        } else {
            solvent += 1;
        }
    }
    eprintln!(
        "hca: {solute} solute, {solvent} solvent, {near} within 0.25 A of the surface, {} differ",
        bad.len()
    );
    assert!(solute > 20_000 && solvent > 100_000, "{solute} {solvent}");
    assert!(
        bad.is_empty(),
        "{} points differ from APBS's marking, e.g. {:?}",
        bad.len(),
        &bad[..bad.len().min(5)]
    );
}
