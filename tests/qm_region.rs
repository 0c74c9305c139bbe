//! QM regions inside MD systems: threonine wavefunctions from a Born-Oppenheimer MD series
//! (`tests/data/qm/threonine_md/`, PySCF) placed in a synthetic "larger system" of threonine and
//! water molecules whose every frame is the Molden geometry moved by a fresh random rigid motion
//! (one frame wrapped across a periodic box). The orbitals computed through the region are checked
//! against the exact point evaluator applied to the Molden file at the inverse-moved points.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "common/rotation.rs"]
mod rotation;
use orbitfield::analysis::qm_region::{QmRegion, QmRegionError, RegionSource, place_grid, placed_job};
use orbitfield::compute::Field;
use orbitfield::compute::cpu::points::PointEvaluator;
use orbitfield::io::{self, LoadOptions};
use orbitfield::model::units::{angstrom_from_bohr3, bohr_from_angstrom3};
use orbitfield::model::{Element, Frame, Lattice, Name8, Spin, Structure, UnitCell, Wavefunction};
use std::path::PathBuf;
use std::sync::Arc;

const N_FRAMES: usize = 3;
const WATERS_BEFORE: usize = 10;
const WATERS_AFTER: usize = 3;
const BOX_ANGSTROM: f64 = 40.0;
/// The frame whose atoms are wrapped into the box (the molecule straddles the x boundary).
const WRAPPED_FRAME: usize = 1;

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/qm/threonine_md")
        .join(name)
}

fn molden_paths(n: usize) -> Vec<PathBuf> {
    (0..n)
        .map(|f| data(&format!("threonine_md_{f:03}.molden.gz")))
        .collect()
}

fn wavefunctions(n: usize) -> Vec<Arc<Wavefunction>> {
    molden_paths(n)
        .iter()
        .map(|p| Arc::new(io::load(std::slice::from_ref(p)).unwrap().wavefunctions.remove(0)))
        .collect()
}

/// xorshift64*, seeded from the clock: every run draws new motions (the seed is printed).
struct Rng(u64);

impl Rng {
    fn fresh() -> Rng {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64);
        let seed = t | 1;
        println!("random seed {seed}");
        Rng(seed)
    }

    fn next_f64(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }

    fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.next_f64()
    }
}

/// A rigid motion, written independently of the library's: x' = R x + t.
#[derive(Clone, Copy, Debug)]
struct Motion {
    r: [[f64; 3]; 3],
    t: [f64; 3],
}

impl Motion {
    fn random(rng: &mut Rng, center: [f64; 3]) -> Motion {
        // A uniformly random unit quaternion by rejection from the 4-cube.
        let q = loop {
            let q = [0; 4].map(|_| rng.uniform(-1.0, 1.0));
            let n2: f64 = q.iter().map(|x| x * x).sum();
            if n2 > 0.01 && n2 <= 1.0 {
                break q.map(|x| x / n2.sqrt());
            }
        };
        let r = rotation::matrix_of_unit_quaternion(q);
        Motion { r, t: center }
    }

    fn apply(&self, p: [f64; 3]) -> [f64; 3] {
        std::array::from_fn(|i| (0..3).map(|k| self.r[i][k] * p[k]).sum::<f64>() + self.t[i])
    }

    fn inverse(&self, p: [f64; 3]) -> [f64; 3] {
        let d: [f64; 3] = std::array::from_fn(|i| p[i] - self.t[i]);
        std::array::from_fn(|i| (0..3).map(|k| self.r[k][i] * d[k]).sum())
    }
}

/// Threonine (the wavefunction's atoms) with waters before and after it, every frame the Molden
/// geometry of that frame moved by its own motion (in Angstrom; motions take Angstrom points).
struct Synthetic {
    structure: Structure,
    frames: Vec<Frame>,
    /// The motion of each frame, from the Molden geometry (Angstrom) to the frame's whole molecule.
    motions: Vec<Motion>,
    first_thr: usize,
}

fn centroid_angstrom(wf: &Wavefunction) -> [f64; 3] {
    let n = wf.atoms.len() as f64;
    let mut c = [0.0; 3];
    for a in &wf.atoms {
        let p = angstrom_from_bohr3(a.position_bohr);
        for k in 0..3 {
            c[k] += p[k] / n;
        }
    }
    c
}

fn synthetic(rng: &mut Rng, wfs: &[Arc<Wavefunction>]) -> Synthetic {
    let wf0 = &wfs[0];
    let thr0: Vec<[f64; 3]> = wf0.atoms.iter().map(|a| angstrom_from_bohr3(a.position_bohr)).collect();
    let c0 = centroid_angstrom(wf0);
    // Waters around the molecule in the Molden frame, at least 2.6 A from its atoms.
    let mut waters: Vec<[[f64; 3]; 3]> = Vec::new();
    while waters.len() < WATERS_BEFORE + WATERS_AFTER {
        let o = [0; 3].map(|_| rng.uniform(-7.0, 7.0));
        let o = [o[0] + c0[0], o[1] + c0[1], o[2] + c0[2]];
        let clear = thr0.iter().all(|p| dist(*p, o) > 2.6) && waters.iter().all(|w| dist(w[0], o) > 2.8);
        if clear {
            let h1 = [o[0] + 0.9572, o[1], o[2]];
            let h2 = [o[0] - 0.24, o[1] + 0.9266, o[2]];
            waters.push([o, h1, h2]);
        }
    }
    let mut structure = Structure::default();
    let push_water = |s: &mut Structure, resid: i32| {
        for (e, n) in [(Element::O, "OH2"), (Element::H, "H1"), (Element::H, "H2")] {
            s.push_atom(
                e,
                Name8::from(n),
                Name8::from("TIP3"),
                resid,
                Name8::EMPTY,
                Name8::from("WAT"),
            );
        }
    };
    for w in 0..WATERS_BEFORE {
        push_water(&mut structure, w as i32 + 1);
    }
    let first_thr = structure.len();
    for (i, a) in wf0.atoms.iter().enumerate() {
        let name = format!("{}{}", a.element.symbol(), i + 1);
        structure.push_atom(
            a.element,
            Name8::from(name.as_str()),
            Name8::from("THR"),
            100,
            Name8::EMPTY,
            Name8::from("PROT"),
        );
    }
    for w in 0..WATERS_AFTER {
        push_water(&mut structure, (WATERS_BEFORE + w) as i32 + 1);
    }
    let cell = UnitCell::orthorhombic([BOX_ANGSTROM; 3]);
    let mut frames = Vec::new();
    let mut motions = Vec::new();
    for (f, wf) in wfs.iter().enumerate() {
        let center = if f == WRAPPED_FRAME {
            // Straddling the box's x face: wrapping splits the molecule.
            [BOX_ANGSTROM - 0.3, rng.uniform(12.0, 28.0), rng.uniform(12.0, 28.0)]
        } else {
            [0; 3].map(|_| rng.uniform(12.0, 28.0))
        };
        let spin = Motion::random(rng, [0.0; 3]);
        // Rotate about the molecule's centroid, then put the centroid at `center`.
        let c = centroid_angstrom(wf);
        let rc = spin.apply(c);
        let motion = Motion {
            r: spin.r,
            t: [center[0] - rc[0], center[1] - rc[1], center[2] - rc[2]],
        };
        let thr: Vec<[f64; 3]> = wf
            .atoms
            .iter()
            .map(|a| motion.apply(angstrom_from_bohr3(a.position_bohr)))
            .collect();
        let mut positions = Vec::new();
        for w in &waters[..WATERS_BEFORE] {
            positions.extend(w.iter().map(|p| motion.apply(*p)));
        }
        positions.extend(thr);
        for w in &waters[WATERS_BEFORE..] {
            positions.extend(w.iter().map(|p| motion.apply(*p)));
        }
        if f == WRAPPED_FRAME {
            for p in positions.iter_mut() {
                *p = p.map(|x| x.rem_euclid(BOX_ANGSTROM));
            }
        }
        frames.push(Frame {
            positions_angstrom: positions.iter().map(|p| p.map(|x| x as f32)).collect(),
            cell: Some(cell),
            ..Frame::default()
        });
        motions.push(motion);
    }
    Synthetic {
        structure,
        frames,
        motions,
        first_thr,
    }
}

fn dist(a: [f64; 3], b: [f64; 3]) -> f64 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
}

#[test]
fn threonine_is_found_and_its_orbitals_follow_the_moving_atoms() {
    let mut rng = Rng::fresh();
    let wfs = wavefunctions(N_FRAMES);
    let sys = synthetic(&mut rng, &wfs);
    let n_thr = wfs[0].atoms.len();
    let expected: Vec<usize> = (sys.first_thr..sys.first_thr + n_thr).collect();

    let found = QmRegion::resolve(None, &sys.structure, Some(&sys.frames[0]), &wfs[0]).unwrap();
    assert_eq!(found.atoms, expected);
    assert_eq!(found.source, RegionSource::Matched);
    let selected = QmRegion::resolve(Some("resname THR"), &sys.structure, None, &wfs[0]).unwrap();
    assert_eq!(selected.atoms, expected);

    // The wrapped frame really is split by the box (else the test would not test unwrapping).
    let wrapped = &sys.frames[WRAPPED_FRAME].positions_angstrom[sys.first_thr..sys.first_thr + n_thr];
    let span_x =
        wrapped.iter().map(|p| p[0]).fold(f32::MIN, f32::max) - wrapped.iter().map(|p| p[0]).fold(f32::MAX, f32::min);
    assert!(span_x > 20.0, "the molecule is not split: x span {span_x}");

    let homo = wfs[0].homo(Spin::Alpha).unwrap();
    for (f, frame) in sys.frames.iter().enumerate() {
        let fit = found.fit(&wfs[f], f, frame).unwrap();
        println!("frame {f}: RMSD {:.2e} A", fit.rmsd_angstrom());
        assert!(fit.rmsd_angstrom() < 1e-4, "frame {f}: RMSD {}", fit.rmsd_angstrom());
        assert_eq!(fit.warning(f), None);
        // The independent motion of this frame, shifted to the image the region was made whole in.
        let mut motion = sys.motions[f];
        let anchor_whole = angstrom_from_bohr3(fit.positions_bohr[0]);
        let anchor_true = motion.apply(angstrom_from_bohr3(wfs[f].atoms[0].position_bohr));
        for k in 0..3 {
            let shift = anchor_whole[k] - anchor_true[k];
            let cells = (shift / BOX_ANGSTROM).round();
            assert!(
                (shift - cells * BOX_ANGSTROM).abs() < 1e-3,
                "frame {f}: anchor off by {shift}"
            );
            motion.t[k] += cells * BOX_ANGSTROM;
        }
        // A small MD-frame lattice at a random offset and spacing around the region.
        let pos = fit.positions_angstrom();
        let lo: [f64; 3] = std::array::from_fn(|k| pos.iter().map(|p| f64::from(p[k])).fold(f64::MAX, f64::min));
        let origin = bohr_from_angstrom3(std::array::from_fn(|k| lo[k] + rng.uniform(-1.0, 1.0)));
        let spacing = bohr_from_angstrom3([rng.uniform(0.6, 0.9); 3])[0];
        let lattice_md = Lattice::axis_aligned(origin, spacing, [7, 6, 5]);
        let evaluator = PointEvaluator::new(&wfs[f]);
        for index in [homo, homo + 1, homo - 3] {
            let field = Field::Orbital {
                spin: Spin::Alpha,
                index,
            };
            let placed = placed_job(&fit, field.clone(), &wfs[f], lattice_md);
            assert!(
                !placed.job.lattice.is_axis_aligned(),
                "frame {f}: the lattice was not carried"
            );
            let grid = place_grid(
                orbitfield::compute::cpu::evaluate_grid(&placed.job).unwrap(),
                placed.lattice_md,
            );
            assert_eq!(grid.lattice, lattice_md);
            let mut reference = Vec::new();
            for kk in 0..5 {
                for j in 0..6 {
                    for i in 0..7 {
                        let p_md = angstrom_from_bohr3(lattice_md.point_bohr(i, j, kk));
                        let p_wf = bohr_from_angstrom3(motion.inverse(p_md));
                        reference.push(evaluator.value(&field, p_wf).unwrap());
                    }
                }
            }
            let scale = reference.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            assert!(
                scale > 1e-3,
                "frame {f} orbital {index}: the lattice misses the molecule"
            );
            let worst = grid
                .values
                .iter()
                .zip(&reference)
                .map(|(g, r)| (f64::from(*g) - r).abs())
                .fold(0.0, f64::max);
            println!(
                "frame {f} orbital {}: max |diff| / max |value| = {:.2e}",
                index + 1,
                worst / scale
            );
            assert!(
                worst <= 1e-5 * scale,
                "frame {f} orbital {index}: {worst} vs scale {scale}"
            );
        }
    }
}

#[test]
fn wrong_selections_name_the_counts_and_the_first_mismatch() {
    let mut rng = Rng::fresh();
    let wfs = wavefunctions(1);
    let sys = synthetic(&mut rng, &wfs);
    let n_thr = wfs[0].atoms.len();
    let e = QmRegion::resolve(Some("resname THR or index 0"), &sys.structure, None, &wfs[0]).unwrap_err();
    assert!(
        matches!(
            e,
            QmRegionError::CountMismatch {
                selected: 18,
                wavefunction: 17,
                ..
            }
        ),
        "{e:?}"
    );
    let text = e.to_string();
    assert!(text.contains("18") && text.contains("17"), "{text}");
    // Shifted by one atom: the same count, but the first atom is a water hydrogen.
    let shifted = format!("index {} to {}", sys.first_thr - 1, sys.first_thr + n_thr - 2);
    let e = QmRegion::resolve(Some(&shifted), &sys.structure, None, &wfs[0]).unwrap_err();
    match &e {
        QmRegionError::ElementMismatch {
            wavefunction_atom,
            system_atom,
            system_element,
            ..
        } => {
            assert_eq!(*wavefunction_atom, 0);
            assert_eq!(*system_atom, sys.first_thr - 1);
            assert_eq!(system_element, "H");
        }
        other => panic!("expected an element mismatch, got {other:?}"),
    }
    println!("{e}");
    let e = QmRegion::resolve(Some("resname (("), &sys.structure, None, &wfs[0]).unwrap_err();
    assert!(matches!(e, QmRegionError::Selection(_)), "{e:?}");
}

#[test]
fn an_unrelated_geometry_is_reported() {
    let mut rng = Rng::fresh();
    let wfs = wavefunctions(1);
    let mut sys = synthetic(&mut rng, &wfs);
    let region = QmRegion::resolve(Some("resname THR"), &sys.structure, None, &wfs[0]).unwrap();
    // Move every QM atom by 0.4 A in a random direction: no rigid motion explains that.
    let frame = &mut sys.frames[0];
    for p in &mut frame.positions_angstrom[sys.first_thr..sys.first_thr + wfs[0].atoms.len()] {
        let d = [0; 3].map(|_| rng.uniform(-1.0, 1.0));
        let n = dist(d, [0.0; 3]).max(1e-6);
        for k in 0..3 {
            p[k] += (0.4 * d[k] / n) as f32;
        }
    }
    let fit = region.fit(&wfs[0], 12, frame).unwrap();
    let warning = fit.warning(12).expect("a warning");
    println!("{warning}");
    assert!(fit.rmsd_angstrom() > 0.1);
    assert!(warning.starts_with("frame 12: the QM region's atoms differ from the wavefunction's geometry by "));
    assert!(warning.ends_with(" A RMSD (different frames?)"));
}

#[test]
fn two_copies_of_the_molecule_are_ambiguous() {
    let mut rng = Rng::fresh();
    let wfs = wavefunctions(1);
    let mut sys = synthetic(&mut rng, &wfs);
    let n_thr = wfs[0].atoms.len();
    // Append a second threonine, 12 A away along y (the box is 40 A).
    let frame = &mut sys.frames[0];
    for i in 0..n_thr {
        let a = sys.first_thr + i;
        let e = sys.structure.elements[a];
        sys.structure.push_atom(
            e,
            Name8::from("X"),
            Name8::from("THR"),
            200,
            Name8::EMPTY,
            Name8::from("PROT"),
        );
        let p = frame.positions_angstrom[a];
        frame.positions_angstrom.push([p[0], p[1] + 12.0, p[2]]);
    }
    let e = QmRegion::resolve(None, &sys.structure, Some(&sys.frames[0]), &wfs[0]).unwrap_err();
    assert!(matches!(e, QmRegionError::Ambiguous { places: 2, .. }), "{e:?}");
    assert!(e.to_string().contains("--qm-region"), "{e}");
}

/// Writes the synthetic frames as a multi-frame XYZ file (no box: every frame whole).
fn write_xyz(path: &std::path::Path, sys: &Synthetic, frames: &[usize]) {
    let mut text = String::new();
    for &f in frames {
        text.push_str(&format!("{}\nframe {f}\n", sys.structure.len()));
        for (e, p) in sys.structure.elements.iter().zip(&sys.frames[f].positions_angstrom) {
            text.push_str(&format!("{} {:.6} {:.6} {:.6}\n", e.symbol(), p[0], p[1], p[2]));
        }
    }
    std::fs::write(path, text).unwrap();
}

#[test]
fn load_with_finds_the_region_of_an_xyz_trajectory_and_a_molden_series() {
    let mut rng = Rng::fresh();
    let wfs = wavefunctions(N_FRAMES);
    let sys = synthetic(&mut rng, &wfs);
    let dir = tempfile::tempdir().unwrap();
    let xyz = dir.path().join("system.xyz");
    // Frames that are whole (the XYZ file has no box to unwrap with).
    let whole: Vec<usize> = (0..N_FRAMES).filter(|&f| f != WRAPPED_FRAME).collect();
    write_xyz(&xyz, &sys, &whole);
    let moldens: Vec<PathBuf> = whole.iter().map(|&f| molden_paths(N_FRAMES)[f].clone()).collect();
    let mut paths = vec![xyz.clone()];
    paths.extend(moldens.iter().cloned());

    let (mut system, region) = io::load_with(&paths, &LoadOptions::default()).unwrap();
    let region = region.expect("a QM region");
    let expected: Vec<usize> = (sys.first_thr..sys.first_thr + wfs[0].atoms.len()).collect();
    assert_eq!(region.atoms, expected);
    assert_eq!(system.structure.len(), sys.structure.len());
    assert_eq!(system.trajectory.n_frames(), whole.len());
    assert_eq!(system.wavefunctions.len(), whole.len());
    for (k, _) in whole.iter().enumerate() {
        let frame = system.trajectory.frame(k).unwrap();
        let fit = region.fit(&system.wavefunctions[k], k, &frame).unwrap();
        assert!(fit.rmsd_angstrom() < 1e-4, "frame {k}: {}", fit.rmsd_angstrom());
    }

    // The same with a selection (XYZ files have no residue names: by index).
    let selection = format!("index {} to {}", sys.first_thr, sys.first_thr + wfs[0].atoms.len() - 1);
    let (_, region) = io::load_with(
        &paths,
        &LoadOptions {
            qm_region: Some(selection),
        },
    )
    .unwrap();
    assert_eq!(region.unwrap().atoms, expected);

    // A wrong selection: the error names the wavefunction file and both counts.
    let e = io::load_with(
        &paths,
        &LoadOptions {
            qm_region: Some("index 0 to 9".into()),
        },
    )
    .unwrap_err();
    let text = e.to_string();
    assert!(text.contains("selects 10 atoms") && text.contains("17 atoms"), "{text}");

    // Neither one wavefunction per frame nor a single one.
    let mut three_frames = vec![xyz.clone()];
    write_xyz(&xyz, &sys, &[0, 2, 0]);
    three_frames.extend(moldens.iter().cloned());
    let e = io::load_with(&three_frames, &LoadOptions::default()).unwrap_err();
    assert!(e.to_string().contains("2 wavefunctions for 3 trajectory frames"), "{e}");

    // A single wavefunction serves every frame.
    let single = vec![xyz, moldens[0].clone()];
    let (system, region) = io::load_with(&single, &LoadOptions::default()).unwrap();
    assert!(region.is_some());
    assert_eq!(system.trajectory.n_frames(), 3);
}

/// A fresh synthetic system (its wavefunctions, itself) with frames 0 and 2 written as an XYZ file
/// in `dir`, and the Molden files of the series.
#[cfg(feature = "gui")]
fn frames_0_and_2(dir: &std::path::Path) -> (Vec<Arc<Wavefunction>>, Synthetic, PathBuf, Vec<PathBuf>) {
    let mut rng = Rng::fresh();
    let wfs = wavefunctions(N_FRAMES);
    let sys = synthetic(&mut rng, &wfs);
    let xyz = dir.join("system.xyz");
    write_xyz(&xyz, &sys, &[0, 2]);
    (wfs, sys, xyz, molden_paths(N_FRAMES))
}

/// `orbitfield grid --qm-region` end to end: the cube of frame 1 of an XYZ trajectory holds the
/// HOMO of that frame's Molden file at the inverse-moved points, and the region's atoms there.
#[cfg(feature = "gui")]
#[test]
fn grid_command_writes_the_frames_orbital_in_md_coordinates() {
    let dir = tempfile::tempdir().unwrap();
    let (wfs, sys, xyz, moldens) = frames_0_and_2(dir.path());
    let mut rng = Rng::fresh();
    let out = dir.path().join("homo.cube");
    let n_thr = wfs[0].atoms.len();
    let selection = format!("index {} to {}", sys.first_thr, sys.first_thr + n_thr - 1);
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_orbitfield"))
        .args(["grid", "mo:homo"])
        .arg(&xyz)
        .arg(&moldens[0])
        .arg(&moldens[2])
        .args([
            "--frame",
            "1",
            "--spacing",
            "0.4",
            "--padding",
            "2",
            "--device",
            "cpu",
            "--qm-region",
        ])
        .arg(&selection)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let cube = io::cube::read(&out, &std::fs::read(&out).unwrap()).unwrap();
    let grid = &cube.grids[0];
    // The cube's atoms are the region's atoms in frame 1 of the file (synthetic frame 2).
    assert_eq!(cube.atoms.len(), n_thr);
    for (a, p) in cube
        .atoms
        .iter()
        .zip(&sys.frames[2].positions_angstrom[sys.first_thr..])
    {
        let p = bohr_from_angstrom3(p.map(f64::from));
        assert!(
            (0..3).all(|k| (a.position_bohr[k] - p[k]).abs() < 1e-4),
            "{a:?} vs {p:?}"
        );
    }
    let field = Field::Orbital {
        spin: Spin::Alpha,
        index: wfs[2].homo(Spin::Alpha).unwrap(),
    };
    let evaluator = PointEvaluator::new(&wfs[2]);
    let l = grid.lattice;
    let (mut worst, mut scale) = (0.0f64, 0.0f64);
    for _ in 0..200 {
        let [i, j, k] = [0, 1, 2].map(|a| (rng.next_f64() * l.dims[a] as f64) as usize % l.dims[a]);
        let p_md = angstrom_from_bohr3(l.point_bohr(i, j, k));
        let reference = evaluator
            .value(&field, bohr_from_angstrom3(sys.motions[2].inverse(p_md)))
            .unwrap();
        worst = worst.max((f64::from(grid.get(i, j, k).unwrap()) - reference).abs());
        scale = scale.max(reference.abs());
    }
    println!("cube: max |diff| / max |value| = {:.2e}", worst / scale);
    assert!(scale > 1e-2 && worst <= 1e-4 * scale, "{worst} vs {scale}");
}

/// A QM region's density coloured by the wavefunction's potential: the wavefunction is computed in
/// its own frame and placed on the MD frame's lattice, so the colours come from the potential's
/// lattice, sampled trilinearly; the status says so once and the legend names it.
#[cfg(feature = "gui")]
#[test]
fn a_qm_regions_surface_colours_fall_back_to_the_lattice() {
    use orbitfield::app::fields::FieldChoice;
    use orbitfield::app::settings::Settings;
    use orbitfield::app::state::{AppState, Command};
    let dir = tempfile::tempdir().unwrap();
    let (_, _, xyz, moldens) = frames_0_and_2(dir.path());
    let paths = vec![xyz, moldens[0].clone(), moldens[2].clone()];
    let (system, region) = io::load_with(&paths, &LoadOptions::default()).unwrap();
    let settings = Settings {
        lattice_points: 16,
        ..Settings::default()
    };
    let mut state = AppState::new(settings, orbitfield::app::default_field_service());
    state.open_system_with_qm_region("system".into(), system, region);
    assert!(state.document().unwrap().qm.is_some());
    state.apply(Command::SelectField(Some(FieldChoice::Density)));
    state.apply(Command::SetSurfaceColor(Some((
        FieldChoice::WavefunctionPotential,
        None,
    ))));
    let t0 = std::time::Instant::now();
    while !state
        .main_field_rep()
        .is_some_and(|f| f.pipeline.shown.is_some() && f.color_shows_frame(0) && f.colors_from_lattice())
    {
        state.update_reps();
        assert!(t0.elapsed().as_secs() < 120, "the colours never arrived");
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    let f = state.main_field_rep().unwrap();
    assert!(!f.colors_by_vertex_values() && f.vertex_values().is_none());
    assert!(f.color_grid(state.document().unwrap()).is_some());
    assert!(
        state.panels.status.contains("sampled trilinearly") && state.panels.status.contains("QM region"),
        "{}",
        state.panels.status
    );
    let legend = state.legends().into_iter().next().unwrap();
    assert_eq!(
        legend.title,
        "surface coloured by potential (wavefunction: nuclei and electron density, vacuum), trilinear from a lattice"
    );
    assert_eq!(legend.unit, "kT/e");
}

/// `orbitfield info` resolves the QM region as `grid` and the viewer do: it names the region found
/// by geometry, and refuses a wavefunction whose atoms are none of the system's.
#[cfg(feature = "gui")]
#[test]
fn info_names_the_qm_region_and_refuses_an_unrelated_wavefunction() {
    let dir = tempfile::tempdir().unwrap();
    let (wfs, sys, xyz, moldens) = frames_0_and_2(dir.path());
    let info = |files: &[&std::path::Path]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_orbitfield"))
            .arg("info")
            .args(files)
            .output()
            .unwrap()
    };
    let out = info(&[&xyz, &moldens[0], &moldens[2]]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let want = format!(
        "qm region:    {} atoms, found by their geometry (atoms {} to {}, numbered from 1)",
        wfs[0].atoms.len(),
        sys.first_thr + 1,
        sys.first_thr + wfs[0].atoms.len()
    );
    assert!(stdout.contains(&want), "{stdout}");
    let pqr = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/md/adk_open.pqr");
    let out = info(&[&pqr, &moldens[0]]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("17 atoms were not found among the system's 3341 atoms"),
        "{stderr}"
    );
}
