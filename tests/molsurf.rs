//! The molecular-surface density (`Field::MolSurf`) and surfaces coloured by the potential at their
//! vertices, against analytic and independent references:
//! - one atom: the surface at 0.5 is the sphere of its radius (area and volume);
//! - two overlapping atoms: a surface of revolution whose profile r(z) is found by bisection of the
//!   analytic density in f64 (written out here, not the library's), integrated for area and volume;
//! - convergence of the area with the lattice spacing;
//! - adk (3341 atoms, PQR charges and radii): the surface's vertex potentials equal an independent
//!   float64 Coulomb sum at the vertex positions to 1e-4 relative.
//! - a surface shown while the timeline has moved on is coloured by its own frame's charges.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use orbitfield::compute::cpu;
use orbitfield::compute::molsurf::{MolSurfAtoms, TRUNCATION_DENSITY};
use orbitfield::compute::{Field, FieldInput, FieldJob, PointCharges};
use orbitfield::model::Lattice;
use orbitfield::model::field::LatticeSpec;
use orbitfield::model::units::{ANGSTROM_PER_BOHR, BOHR_PER_ANGSTROM};
use orbitfield::surface::{self, MeshData};
use std::f64::consts::PI;
use std::sync::Arc;

#[path = "common/coulomb.rs"]
mod coulomb;
use coulomb::coulomb_f64;

const SCALE: f64 = 0.6;

fn surface_of(centers: &[[f64; 3]], radii: &[f64], spacing_angstrom: f64) -> MeshData {
    let atoms = MolSurfAtoms::from_radii_angstrom(centers, radii, SCALE).unwrap();
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

/// The density of the test's own formula (Angstrom): 0.5 exp((R^2 - r^2) / (2 (s R)^2)) per atom,
/// truncated where it falls below the truncation density.
fn density(centers: &[[f64; 3]], radii: &[f64], p: [f64; 3]) -> f64 {
    centers
        .iter()
        .zip(radii)
        .map(|(c, &r)| {
            let d2 = (p[0] - c[0]).powi(2) + (p[1] - c[1]).powi(2) + (p[2] - c[2]).powi(2);
            let v = 0.5 * ((r * r - d2) / (2.0 * (SCALE * r).powi(2))).exp();
            if v < TRUNCATION_DENSITY { 0.0 } else { v }
        })
        .sum()
}

#[test]
fn one_atom_is_a_sphere_of_its_radius() {
    for (r, spacing) in [(1.7, 0.2), (1.2, 0.15), (2.0, 0.3)] {
        let mesh = surface_of(&[[0.3, -0.2, 0.1]], &[r], spacing);
        let area = mesh.area_angstrom2();
        let volume = mesh.enclosed_volume_angstrom3();
        let want_area = 4.0 * PI * r * r;
        let want_volume = 4.0 / 3.0 * PI * r * r * r;
        assert!(
            (area / want_area - 1.0).abs() < 0.02,
            "R {r}: area {area} vs {want_area}"
        );
        assert!(
            (volume / want_volume - 1.0).abs() < 0.02,
            "R {r}: volume {volume} vs {want_volume}"
        );
        // Every vertex lies on the sphere to a fraction of the spacing.
        for p in &mesh.positions_angstrom {
            let d = ((p[0] as f64 - 0.3).powi(2) + (p[1] as f64 + 0.2).powi(2) + (p[2] as f64 - 0.1).powi(2)).sqrt();
            assert!(
                (d - r).abs() < 0.1 * spacing,
                "vertex at {d} A from the centre, radius {r}"
            );
        }
    }
}

/// Area and volume of the surface of revolution around the z axis of two atoms on it, from the
/// profile r(z) (bisection of the test's density in f64) by the trapezoidal rule on a fine z step.
fn revolution_reference(centers: &[[f64; 3]], radii: &[f64]) -> (f64, f64) {
    let z_lo = centers
        .iter()
        .zip(radii)
        .map(|(c, r)| c[2] - r)
        .fold(f64::INFINITY, f64::min)
        - 0.5;
    let z_hi = centers
        .iter()
        .zip(radii)
        .map(|(c, r)| c[2] + r)
        .fold(f64::NEG_INFINITY, f64::max)
        + 0.5;
    let profile = |z: f64| -> f64 {
        if density(centers, radii, [0.0, 0.0, z]) <= 0.5 {
            return 0.0;
        }
        let (mut a, mut b) = (0.0, 6.0);
        for _ in 0..80 {
            let m = 0.5 * (a + b);
            if density(centers, radii, [m, 0.0, z]) > 0.5 {
                a = m;
            } else {
                b = m;
            }
        }
        0.5 * (a + b)
    };
    let n = 40_000;
    let dz = (z_hi - z_lo) / n as f64;
    let rs: Vec<f64> = (0..=n).map(|i| profile(z_lo + i as f64 * dz)).collect();
    let mut area = 0.0;
    let mut volume = 0.0;
    for w in rs.windows(2) {
        let (r0, r1) = (w[0], w[1]);
        // Frustum of a cone between two profile points.
        let slant = ((r1 - r0).powi(2) + dz * dz).sqrt();
        area += PI * (r0 + r1) * slant;
        volume += PI * dz * (r0 * r0 + r0 * r1 + r1 * r1) / 3.0;
    }
    (area, volume)
}

#[test]
fn two_overlapping_atoms_are_a_smooth_union() {
    let centers = [[0.0, 0.0, -0.8], [0.0, 0.0, 0.9]];
    let radii = [1.7, 1.5];
    let (want_area, want_volume) = revolution_reference(&centers, &radii);
    // The union is more than the two spheres' union (the Gaussians fill the waist) and less than
    // the sum of the spheres.
    let sphere_area: f64 = radii.iter().map(|r| 4.0 * PI * r * r).sum();
    assert!(want_area < sphere_area);
    let mesh = surface_of(&centers, &radii, 0.1);
    let (area, volume) = (mesh.area_angstrom2(), mesh.enclosed_volume_angstrom3());
    assert!(
        (area / want_area - 1.0).abs() < 0.01,
        "area {area} vs reference {want_area}"
    );
    assert!(
        (volume / want_volume - 1.0).abs() < 0.01,
        "volume {volume} vs reference {want_volume}"
    );
}

#[test]
fn area_converges_with_the_spacing() {
    let centers = [[0.0, 0.0, -0.8], [0.0, 0.0, 0.9]];
    let radii = [1.7, 1.5];
    let (want_area, _) = revolution_reference(&centers, &radii);
    let errors: Vec<f64> = [0.5, 0.25, 0.125]
        .iter()
        .map(|&h| (surface_of(&centers, &radii, h).area_angstrom2() / want_area - 1.0).abs())
        .collect();
    assert!(errors[2] < errors[0], "errors {errors:?} do not fall with the spacing");
    assert!(errors[2] < 0.005, "errors {errors:?}");
    assert!(errors[1] < 0.02, "errors {errors:?}");
}

#[test]
fn lattice_values_match_the_formula_on_a_random_cluster() {
    let mut seed = 0x2545_f491_4f6c_dd1du64 ^ std::process::id() as u64;
    let mut rnd = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 11) as f64 / (1u64 << 53) as f64
    };
    let centers: Vec<[f64; 3]> = (0..40).map(|_| [8.0 * rnd(), 8.0 * rnd(), 8.0 * rnd()]).collect();
    let radii: Vec<f64> = (0..40).map(|_| 1.0 + rnd()).collect();
    let atoms = MolSurfAtoms::from_radii_angstrom(&centers, &radii, SCALE).unwrap();
    let lattice = Lattice::axis_aligned(
        [
            -3.0 * BOHR_PER_ANGSTROM,
            -2.5 * BOHR_PER_ANGSTROM,
            -3.2 * BOHR_PER_ANGSTROM,
        ],
        0.43 * BOHR_PER_ANGSTROM,
        [33, 31, 35],
    );
    let job = FieldJob {
        field: Field::MolSurf,
        lattice,
        input: FieldInput::Spheres(Arc::new(atoms)),
    };
    let grid = cpu::evaluate_grid(&job).unwrap();
    let [nx, ny, nz] = lattice.dims;
    for k in 0..nz {
        for j in 0..ny {
            for i in 0..nx {
                let p = lattice.point_bohr(i, j, k).map(|x| x * ANGSTROM_PER_BOHR);
                let want = density(&centers, &radii, p);
                let got = f64::from(grid.values[i + nx * (j + ny * k)]);
                // Points on a truncation sphere may fall on either side of it (1e-3 each).
                assert!(
                    (got - want).abs() < 1e-6 * want.max(1.0) + 2e-3,
                    "{p:?}: {got} vs {want}"
                );
            }
        }
    }
}

/// adk's surface, each vertex coloured by the potential of the structure's charges at the vertex
/// (the exact CPU evaluator), against an independent f64 sum.
#[test]
fn vertex_potentials_on_adk_match_an_f64_sum() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/md/adk_open.pqr");
    let mut system = orbitfield::io::load(&[path]).unwrap();
    let s = &system.structure;
    let frame = system.trajectory.frame(0).unwrap();
    let positions: Vec<[f64; 3]> = frame.positions_angstrom.iter().map(|p| p.map(f64::from)).collect();
    let radii: Vec<f64> = s
        .radii_angstrom
        .as_ref()
        .unwrap()
        .iter()
        .map(|&r| f64::from(r))
        .collect();
    let charges: Vec<f64> = s.charges_e.as_ref().unwrap().iter().map(|&q| f64::from(q)).collect();
    assert_eq!(positions.len(), 3341);
    let mesh = surface_of(&positions, &radii, 0.8);
    assert!(
        mesh.positions_angstrom.len() > 5000,
        "{} vertices",
        mesh.positions_angstrom.len()
    );
    // Every 11th vertex (the test stays within seconds in an unoptimised build).
    let sample = MeshData {
        positions_angstrom: mesh.positions_angstrom.iter().step_by(11).copied().collect(),
        ..MeshData::default()
    };
    let vertices_bohr: Vec<[f64; 3]> = sample
        .positions_angstrom
        .iter()
        .map(|p| p.map(|x| f64::from(x) * BOHR_PER_ANGSTROM))
        .collect();
    let point_charges = PointCharges {
        positions_bohr: positions.iter().map(|p| p.map(|x| x * BOHR_PER_ANGSTROM)).collect(),
        charges_e: charges.clone(),
    };
    let got = orbitfield::analysis::vertex_values::potential_at_vertices(&sample, &point_charges).unwrap();
    assert_eq!(got.len(), vertices_bohr.len());
    let mut worst = 0.0f64;
    let mut checked = 0;
    for (v, &g) in vertices_bohr.iter().zip(&got) {
        let mut want = 0.0;
        for (c, &q) in point_charges.positions_bohr.iter().zip(&charges) {
            let d = ((v[0] - c[0]).powi(2) + (v[1] - c[1]).powi(2) + (v[2] - c[2]).powi(2)).sqrt();
            want += q / d;
        }
        let err = (f64::from(g) - want).abs() / want.abs().max(1e-3);
        worst = worst.max(err);
        checked += 1;
    }
    assert!(checked > 500);
    eprintln!("{checked} vertices: worst relative error {worst:e}");
    assert!(worst < 1e-4, "worst relative error {worst:e}");
}

/// `render --surface molsurf --sel`: the surface changes the picture of the atoms alone (it covers
/// them), most where the protein is; a bad selection is refused.
#[test]
fn render_draws_the_surface_of_a_selection() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/md");
    let tmp = std::env::temp_dir();
    let pid = std::process::id();
    let run = |surface: Option<&str>, name: &str| {
        let out = tmp.join(format!("orbitfield_molsurf_{pid}_{name}.png"));
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_orbitfield"));
        cmd.arg("render").arg(dir.join("adk_open.pqr"));
        if let Some(sel) = surface {
            cmd.args(["--surface", "molsurf", "--sel", sel]);
        }
        let o = cmd.args(["--size", "160x120", "-o"]).arg(&out).output().unwrap();
        (o, out)
    };
    let (bad, _) = run(Some("resid 1 to"), "bad");
    assert!(!bad.status.success());
    let (atoms, atoms_png) = run(None, "atoms");
    let stderr = String::from_utf8_lossy(&atoms.stderr);
    if !atoms.status.success() && stderr.contains("adapter") {
        eprintln!("skipping: no wgpu adapter: {stderr}");
        return;
    }
    assert!(atoms.status.success(), "{stderr}");
    let (surface, surface_png) = run(Some("protein"), "surface");
    assert!(surface.status.success(), "{}", String::from_utf8_lossy(&surface.stderr));
    let a = image::open(&atoms_png).unwrap().to_rgba8();
    let s = image::open(&surface_png).unwrap().to_rgba8();
    let _ = std::fs::remove_file(&atoms_png);
    let _ = std::fs::remove_file(&surface_png);
    let differs = |x0: u32, y0: u32, w: u32, h: u32| {
        let mut n = 0;
        for y in y0..y0 + h {
            for x in x0..x0 + w {
                let (p, q) = (a.get_pixel(x, y).0, s.get_pixel(x, y).0);
                if (0..3).any(|k| p[k].abs_diff(q[k]) > 40) {
                    n += 1;
                }
            }
        }
        f64::from(n) / f64::from(w * h)
    };
    // The middle (protein) changes; the corners (background) do not.
    assert!(differs(60, 40, 40, 40) > 0.5, "{}", differs(60, 40, 40, 40));
    assert!(differs(0, 0, 10, 10) < 0.01);
}

/// Checks every `step`-th vertex of `rep`'s lobes: the values it is coloured by equal the
/// independent sum of the frame's charges at the vertex to 1e-4 relative. As a control, the
/// trilinear sampling of the same sum on the document's potential lattice (what the colours were
/// before) misses that tolerance. Returns the number of vertices checked.
fn check_vertex_values(
    rep: &orbitfield::app::reps::FieldRep,
    positions_angstrom: &[[f32; 3]],
    charges_e: &[f32],
    lattice: Option<&Lattice>,
    step: usize,
) -> usize {
    let values = rep.vertex_values().expect("vertex values shown");
    let mut checked = 0;
    let (mut worst, mut worst_lattice) = (0.0f64, 0.0f64);
    for (lobe, v) in rep.pipeline.lobes.iter().zip(values) {
        let (Some(mesh), Some(v)) = (lobe, v) else {
            assert!(lobe.is_none() && v.is_none(), "values for every lobe, none without one");
            continue;
        };
        assert_eq!(mesh.positions_angstrom.len(), v.len());
        for (p, &got) in mesh.positions_angstrom.iter().zip(v.iter()).step_by(step) {
            let p = p.map(f64::from);
            let want = coulomb_f64(positions_angstrom, charges_e, p);
            let scale = want.abs().max(1e-3);
            worst = worst.max((f64::from(got) - want).abs() / scale);
            if let Some(l) = lattice {
                // The potential lattice's cell around the vertex, trilinear.
                let h = l.steps_bohr[0][0] * ANGSTROM_PER_BOHR;
                let o = l.origin_angstrom();
                let f: Vec<f64> = (0..3).map(|k| (p[k] - o[k]) / h).collect();
                let i0: Vec<f64> = f.iter().map(|x| x.floor()).collect();
                let mut sampled = 0.0;
                for corner in 0..8 {
                    let mut w = 1.0;
                    let mut c = [0.0; 3];
                    for k in 0..3 {
                        let up = (corner >> k) & 1 == 1;
                        let t = f[k] - i0[k];
                        w *= if up { t } else { 1.0 - t };
                        c[k] = o[k] + (i0[k] + if up { 1.0 } else { 0.0 }) * h;
                    }
                    sampled += w * coulomb_f64(positions_angstrom, charges_e, c);
                }
                worst_lattice = worst_lattice.max((sampled - want).abs() / scale);
            }
            checked += 1;
        }
    }
    eprintln!("{checked} vertices: worst relative error {worst:e} (lattice sampling {worst_lattice:e})");
    assert!(worst < 1e-4, "worst relative error {worst:e} over {checked} vertices");
    if lattice.is_some() {
        assert!(
            worst_lattice > 1e-3,
            "the lattice sampling would pass too ({worst_lattice:e}): the check cannot fail"
        );
    }
    checked
}

/// `render --surface molsurf --color-by esp` on adk: the command draws, and the path it runs
/// (the update loop computing fields and vertex values on its own thread, as `render` does) colours
/// the surface by the potential of the charges at each vertex, exact against an f64 sum; not by
/// sampling the potential lattice.
#[test]
fn render_colours_a_surface_by_the_exact_potential_at_its_vertices() {
    use orbitfield::app::fields::{FieldChoice, FieldService, InlineBackend};
    use orbitfield::app::reps::{FieldStyle, RepSpec};
    use orbitfield::app::settings::Settings;
    use orbitfield::app::state::{AppState, Command};
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/md/adk_open.pqr");
    let sel = "resid 1 to 40";
    let backend = orbitfield::app::blocking_engine()
        .map(|e| Box::new(InlineBackend::new(e)) as Box<dyn orbitfield::app::fields::FieldBackend>);
    let settings = Settings {
        lattice_points: 48,
        ..Settings::default()
    };
    let mut state = AppState::new(
        settings,
        FieldService::new(backend, orbitfield::app::default_extractor()),
    );
    let mut system = orbitfield::io::load(std::slice::from_ref(&path)).unwrap();
    let charges = system.structure.charges_e.clone().unwrap();
    let radii = system.structure.radii_angstrom.clone().unwrap();
    let in_selection: Vec<bool> = system.structure.resids.iter().map(|&r| (1..=40).contains(&r)).collect();
    let positions = system.trajectory.frame(0).unwrap().positions_angstrom;
    state.open_system("adk".into(), system);
    // The vacuum Coulomb sum is what this test holds to its f64 reference.
    state.apply(Command::SetEspModel(orbitfield::app::esp_model::EspModel::Vacuum));
    let id = state
        .add_rep(&RepSpec::field(&format!("molsurf:{sel}"), FieldStyle::Isosurface))
        .unwrap();
    state.apply(Command::SetSurfaceColor(Some((FieldChoice::Potential, None))));
    for _ in 0..4 {
        state.update_reps();
    }
    let rep = state.reps().field(id).unwrap();
    assert!(rep.color_shows_frame(0));
    assert!(
        rep.pipeline.color.as_ref().unwrap().shown.is_none(),
        "no potential lattice computed"
    );
    let lattice = state.document().unwrap().potential_lattice;
    let n = check_vertex_values(rep, &positions, &charges, lattice.as_ref(), 40);
    assert!(n > 50, "{n} vertices checked");
    let range = state.surface_color().unwrap().range.unwrap();
    assert!(
        range[0] < 0.0 && range[0] == -range[1],
        "symmetric default range {range:?}"
    );
    surface_value_read_out_matches_the_sum(&state, rep, &positions, &charges);
    let atoms = SurfaceAtoms {
        positions: &positions,
        charges: &charges,
        radii: &radii,
        in_selection: &in_selection,
    };
    a_click_on_the_surface_picks_its_atom(&mut state, id, &atoms);

    // The command itself.
    let out = std::env::temp_dir().join(format!("orbitfield_vcolor_{}.png", std::process::id()));
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_orbitfield"))
        .arg("render")
        .arg(&path)
        .args(["--surface", "molsurf", "--sel", "resid 1 to 12", "--color-by", "esp"])
        .args(["--size", "96x72", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    let _ = std::fs::remove_file(&out);
    if !o.status.success() && stderr.contains("adapter") {
        eprintln!("skipping the command: no wgpu adapter: {stderr}");
        return;
    }
    assert!(o.status.success(), "{stderr}");
    assert!(stderr.contains("legend: surface coloured by potential"), "{stderr}");
}

/// A picked atom's read-out gives the coloured surface's value at the vertex nearest to it, in the
/// unit the legend shows: the f64 sum at that vertex, converted here (CODATA 2018 constants written
/// out), within the read-out's three significant digits.
fn surface_value_read_out_matches_the_sum(
    state: &orbitfield::app::state::AppState,
    rep: &orbitfield::app::reps::FieldRep,
    positions: &[[f32; 3]],
    charges: &[f32],
) {
    let vertices: Vec<[f32; 3]> = rep
        .pipeline
        .lobes
        .iter()
        .flatten()
        .flat_map(|m| m.positions_angstrom.iter().copied())
        .collect();
    let d2 = |a: [f32; 3], b: [f32; 3]| (0..3).map(|k| f64::from(a[k] - b[k]).powi(2)).sum::<f64>();
    let nearest = |p: [f32; 3]| {
        vertices
            .iter()
            .map(|&v| (d2(v, p), v))
            .min_by(|a, b| a.0.total_cmp(&b.0))
            .unwrap()
    };
    // An atom of the surface's residues (1 to 40) at the surface, and one buried beyond 4 A.
    let mut by_depth: Vec<(f64, usize)> = (0..positions.len())
        .step_by(7)
        .map(|a| (nearest(positions[a]).0, a))
        .collect();
    by_depth.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (_, exposed) = by_depth[0];
    let text = state.describe_atom(exposed);
    let part = text
        .split(", potential (charges) ")
        .nth(1)
        .unwrap_or_else(|| panic!("no surface value in {text:?}"));
    let (number, rest) = part.split_once(' ').unwrap();
    assert!(rest.starts_with("kT/e on the surface"), "{text}");
    let got: f64 = number.parse().unwrap();
    let (_, v) = nearest(positions[exposed]);
    // hartree/e to kT/e at 300 K, the temperature the charges' potential is reported at
    // (docs/commands.md): E_h / (k_B T).
    let kt_per_hartree = 4.359_744_722_207_1e-18 / (1.380_649e-23 * 300.0);
    let want = coulomb_f64(positions, charges, v.map(f64::from)) * kt_per_hartree;
    assert!(
        (got - want).abs() <= 0.006 * want.abs() + 0.006,
        "read-out {got} kT/e, the sum at the nearest vertex {want} kT/e ({text})"
    );
    // adk's other residues lie far from the surface of residues 1 to 40.
    let &(_, buried) = by_depth
        .iter()
        .find(|(d2, _)| *d2 > 25.0)
        .expect("an atom more than 5 A from the surface");
    let text = state.describe_atom(buried);
    assert!(
        !text.contains("on the surface"),
        "an atom away from the surface: {text}"
    );
}

/// The atoms a molecular surface is made of: positions, charges, radii (Angstrom) and whether
/// each is in the surface's selection.
struct SurfaceAtoms<'a> {
    positions: &'a [[f32; 3]],
    charges: &'a [f32],
    radii: &'a [f32],
    in_selection: &'a [bool],
}

/// A click on the surface picks the surface's atom whose van der Waals sphere lies nearest the
/// point clicked, and reads the colouring there: clicked at the vertex nearest the eye (nothing
/// can lie in front of it), the value is the f64 sum at that vertex.
fn a_click_on_the_surface_picks_its_atom(
    state: &mut orbitfield::app::state::AppState,
    id: orbitfield::app::reps::RepId,
    atoms: &SurfaceAtoms,
) {
    let size = [640_u32, 480];
    state.apply(orbitfield::app::state::Command::ResetCamera);
    let rep = state.reps().field(id).unwrap();
    let (pixel, vertex) = rep
        .pipeline
        .lobes
        .iter()
        .flatten()
        .flat_map(|m| m.positions_angstrom.iter().copied())
        .filter_map(|v| {
            let (px, depth) = state.view.camera.project_to_pixel(glam::Vec3::from_array(v), size)?;
            Some((depth, px, v))
        })
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, px, v)| (px, v))
        .unwrap();
    let gap = |a: usize| {
        let d2: f64 = (0..3)
            .map(|k| f64::from(vertex[k] - atoms.positions[a][k]).powi(2))
            .sum();
        d2.sqrt() - f64::from(atoms.radii[a])
    };
    let want_atom = (0..atoms.positions.len())
        .filter(|&a| atoms.in_selection[a])
        .min_by(|&a, &b| gap(a).total_cmp(&gap(b)))
        .unwrap();
    state.apply(orbitfield::app::state::Command::Pick { pixel, size_px: size });
    let pick = state.view.pick.clone().expect("a click on the surface picks an atom");
    assert_eq!(pick.atom, want_atom, "{}", pick.text);
    let part = pick
        .text
        .split(", potential (charges) ")
        .nth(1)
        .unwrap_or_else(|| panic!("no surface value in {:?}", pick.text));
    let (number, rest) = part.split_once(' ').unwrap();
    assert!(rest.starts_with("kT/e where clicked on the surface"), "{}", pick.text);
    let got: f64 = number.parse().unwrap();
    let kt_per_hartree = 4.359_744_722_207_1e-18 / (1.380_649e-23 * 300.0);
    let want = coulomb_f64(atoms.positions, atoms.charges, vertex.map(f64::from)) * kt_per_hartree;
    assert!(
        (got - want).abs() <= 0.006 * want.abs() + 0.006,
        "read-out {got} kT/e, the sum at the vertex clicked {want} kT/e ({})",
        pick.text
    );
    // Beside the surface, nothing.
    state.apply(orbitfield::app::state::Command::Pick {
        pixel: [1.0, 1.0],
        size_px: size,
    });
    assert!(state.view.pick.is_none(), "{:?}", state.view.pick);
}

/// The viewer's path: a molsurf representation coloured by the charges' potential on adk frames 0
/// and 1, the surfaces extracted and the vertex values computed on their own threads: each frame's
/// values equal the f64 sum at that frame's vertex positions.
#[test]
fn viewer_colours_each_frame_by_the_exact_potential_at_its_vertices() {
    use orbitfield::app::fields::FieldChoice;
    use orbitfield::app::state::Command;
    let (mut state, mut reference, charges, id) = viewer_with_a_surface(true);
    state.apply(Command::SetSurfaceColor(Some((FieldChoice::Potential, None))));
    for frame in [0, 1] {
        state.apply(Command::SetFrame(frame));
        let t0 = std::time::Instant::now();
        // While the colours are in flight the window keeps polling (`busy`) and the legend says so.
        let mut saw_waiting = false;
        // Frame 1's surface waiting for its colours: frame 0's coloured surface is drawn meanwhile,
        // and the legend names its frame (a greyed surface would read as "near zero").
        let mut saw_previous = false;
        while !state.reps().field(id).is_some_and(|f| {
            f.pipeline.shown.as_ref().is_some_and(|(k, _)| k.frame == frame) && f.color_shows_frame(frame)
        }) {
            state.update_reps();
            saw_waiting |= state.busy() && state.background_work();
            let f = state.reps().field(id).unwrap();
            if frame == 1
                && f.pipeline.shown.as_ref().is_some_and(|(k, _)| k.frame == 1)
                && f.pipeline.lobes.iter().any(|l| l.is_some())
                && f.vertex_values().is_none()
            {
                let (lobes, values) = f.drawn_lobes();
                let values = values.expect("the previous frame's colours drawn meanwhile");
                for (l, v) in lobes.iter().zip(values) {
                    assert_eq!(
                        l.as_ref().map(|m| m.positions_angstrom.len()),
                        v.as_ref().map(|v| v.len()),
                        "one value per vertex of the lobes drawn"
                    );
                }
                assert!(
                    !std::ptr::eq(lobes, &f.pipeline.lobes),
                    "frame 0's lobes, not frame 1's"
                );
                assert_eq!(f.previous_colors_frame(), Some(0));
                let titles: Vec<_> = state.legends().into_iter().map(|l| l.title).collect();
                assert!(
                    titles
                        .iter()
                        .any(|t| t.contains("frame 0 shown while the colours are computed")),
                    "{titles:?}"
                );
                saw_previous = true;
            }
            assert!(t0.elapsed().as_secs() < 120, "frame {frame}'s colours never arrived");
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        assert!(saw_waiting, "frame {frame}: busy while its colours were computed");
        assert_eq!(
            saw_previous,
            frame == 1,
            "frame 0's coloured surface drawn while frame 1's colours were computed"
        );
        assert_eq!(state.reps().field(id).unwrap().previous_colors_frame(), None);
        assert!(
            !state.busy(),
            "frame {frame}: nothing in flight once the colours are in"
        );
        assert!(
            state.legends().iter().all(|l| !l.title.contains("computing")),
            "{:?}",
            state.legends().iter().map(|l| &l.title).collect::<Vec<_>>()
        );
        let rep = state.reps().field(id).unwrap();
        let (key, _) = rep.pipeline.color.as_ref().unwrap().vertices.as_ref().unwrap();
        assert_eq!(key.mesh.field.frame, frame);
        let positions = reference.trajectory.frame(frame).unwrap().positions_angstrom;
        let n = check_vertex_values(rep, &positions, &charges, None, 25);
        assert!(n > 50, "{n} vertices checked");
    }
}

/// While playback drops frames the timeline moves on before a surface is shown: the surface of frame
/// 0, still on screen with the document at frame 1, is coloured by frame 0's charges (exact against
/// an f64 sum at its vertices), not left waiting for the timeline to come back to its frame. Values
/// are computed in the update loop here, so they are there after one step.
#[test]
fn a_surface_behind_the_timeline_is_coloured_by_its_own_frame() {
    use orbitfield::app::fields::FieldChoice;
    use orbitfield::app::state::Command;
    let (mut state, mut reference, charges, id) = viewer_with_a_surface(false);
    state.apply(Command::SetFrame(0));
    let t0 = std::time::Instant::now();
    let shows_frame_0 = |state: &orbitfield::app::state::AppState| {
        state
            .reps()
            .field(id)
            .and_then(|f| f.pipeline.shown.as_ref())
            .is_some_and(|(k, _)| k.frame == 0)
    };
    while !shows_frame_0(&state) {
        state.update_reps();
        assert!(t0.elapsed().as_secs() < 120, "frame 0's surface never arrived");
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    // The timeline moves on; the colouring is asked for while frame 0's surface is shown.
    state.apply(Command::SetFrame(1));
    state.apply(Command::SetSurfaceColor(Some((FieldChoice::Potential, None))));
    state.update_reps();
    let rep = state.reps().field(id).unwrap();
    let shown = rep.pipeline.shown.as_ref().map(|(k, _)| k.frame).unwrap();
    eprintln!("surface shown after one step: frame {shown}");
    let (key, _) = rep
        .pipeline
        .color
        .as_ref()
        .unwrap()
        .vertices
        .as_ref()
        .expect("colours at once");
    assert_eq!(key.mesh.field.frame, shown);
    let positions = reference.trajectory.frame(shown).unwrap().positions_angstrom;
    let n = check_vertex_values(rep, &positions, &charges, None, 25);
    assert!(n > 50, "{n} vertices checked");
}

/// The viewer with adk open (PSF charges, DCD frames, a 40-point lattice) and a molecular surface of
/// residues 100-130; with `threads`, surfaces and vertex values are made on their own threads. Also
/// returns a second copy of the system (the reference coordinates), the charges and the surface's id.
fn viewer_with_a_surface(
    threads: bool,
) -> (
    orbitfield::app::state::AppState,
    orbitfield::io::System,
    Vec<f32>,
    orbitfield::app::reps::RepId,
) {
    use orbitfield::app::reps::{FieldStyle, RepSpec};
    use orbitfield::app::settings::Settings;
    use orbitfield::app::state::AppState;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/md");
    let paths = [dir.join("adk.psf"), dir.join("adk_dims.dcd")];
    let settings = Settings {
        lattice_points: 40,
        ..Settings::default()
    };
    let mut state = AppState::new(settings, orbitfield::app::default_field_service());
    if threads {
        assert!(state.color_vertices_off_thread());
        state.extract_surfaces_off_thread();
    }
    let reference = orbitfield::io::load(&paths).unwrap();
    let charges = reference.structure.charges_e.clone().unwrap();
    state.open_system("adk".into(), orbitfield::io::load(&paths).unwrap());
    // The vacuum Coulomb sum is what these tests hold to their f64 reference.
    state.apply(orbitfield::app::state::Command::SetEspModel(
        orbitfield::app::esp_model::EspModel::Vacuum,
    ));
    let id = state
        .add_rep(&RepSpec::field("molsurf:resid 100 to 130", FieldStyle::Isosurface))
        .unwrap();
    (state, reference, charges, id)
}
