//! Each frame's energy of a QM log's steps (`io::System::frame_energies_hartree`), as `info`, the
//! timeline and the energy plot show it, against cclib 1.8.1's SCF energies of the same logs
//! (`tests/data/qm-logs/energies.cclib.json`, `make_energy_reference.py`). cclib pairs each energy
//! with a geometry; the frame of the same shape (its interatomic distances) must carry that energy.
//! ORCA 6.0's logs, which cclib 1.8.1 does not read, are held to their own energy lines.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use orbitfield::io::load::load;
use std::path::PathBuf;

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/qm-logs")
        .join(name)
}

fn distances(p: &[[f64; 3]]) -> Vec<f64> {
    let mut d = Vec::new();
    for i in 0..p.len() {
        for j in 0..i {
            d.push((0..3).map(|k| (p[i][k] - p[j][k]).powi(2)).sum::<f64>().sqrt());
        }
    }
    d
}

fn max_diff(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max)
}

#[test]
fn step_energies_match_cclib_geometry_by_geometry() {
    let text = std::fs::read_to_string(data("energies.cclib.json")).unwrap();
    let reference: serde_json::Value = serde_json::from_str(&text).unwrap();
    let logs = reference["logs"].as_object().unwrap();
    assert!(logs.len() >= 4);
    for (name, r) in logs {
        let mut system = load(&[data(name)]).unwrap_or_else(|e| panic!("{name}: {e}"));
        let energies = system.frame_energies_hartree.clone();
        let n_frames = system.trajectory.n_frames();
        let want: Vec<f64> = r["energies_hartree"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e.as_f64().unwrap())
            .collect();
        if n_frames == 1 {
            // A single point: one frame, no profile to show.
            assert!(energies.is_empty() || energies.len() == 1, "{name}");
            continue;
        }
        assert_eq!(energies.len(), n_frames, "{name}: one energy per frame");
        let frames: Vec<Vec<f64>> = (0..n_frames)
            .map(|i| {
                let p = system.trajectory.frame(i).unwrap().positions_angstrom;
                distances(&p.iter().map(|a| a.map(f64::from)).collect::<Vec<_>>())
            })
            .collect();
        for (k, (e, step)) in want.iter().zip(r["positions_angstrom"].as_array().unwrap()).enumerate() {
            let p: Vec<[f64; 3]> = step
                .as_array()
                .unwrap()
                .iter()
                .map(|a| {
                    let v: Vec<f64> = a.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
                    [v[0], v[1], v[2]]
                })
                .collect();
            let d = distances(&p);
            let same_shape: Vec<usize> = (0..n_frames).filter(|&i| max_diff(&frames[i], &d) < 2e-4).collect();
            assert!(
                !same_shape.is_empty(),
                "{name}: cclib's step {k} is no frame's geometry"
            );
            assert!(
                same_shape.iter().any(|&i| (energies[i] - e).abs() < 2e-8),
                "{name}: cclib's step {k} E = {e} Eh; frames {same_shape:?} of its shape have {:?}",
                same_shape.iter().map(|&i| energies[i]).collect::<Vec<_>>()
            );
        }
    }
}

/// The values of the lines starting with `prefix` (after it and an optional `E(..) =`), in order.
fn printed_energies(name: &str, prefix: &str) -> Vec<f64> {
    let raw = orbitfield::io::read_bytes(&data(name)).unwrap();
    String::from_utf8_lossy(&raw)
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix(prefix))
        .map(|v| {
            let v = v.split('=').nth(1).unwrap_or(v);
            v.split_whitespace().next().unwrap().parse().unwrap()
        })
        .collect()
}

/// ORCA prints one `FINAL SINGLE POINT ENERGY` per geometry step: the frames carry them in order.
/// Gaussian's dynamics has more energy evaluations (`SCF Done`: the input geometry, the start
/// point and its rescaling, predicted geometries) than trajectory points; its frames are the points
/// of its "Trajectory summary" table, and carry that table's potential energies (the third column)
/// in order (see `qm_logs.rs`, `gaussian_bomd_steps_are_frames`).
#[test]
fn orca_and_gaussian_dynamics_frames_carry_their_printed_energies() {
    let name = "ORCA6.0_dvb_gopt.out";
    let printed = printed_energies(name, "FINAL SINGLE POINT ENERGY");
    let system = load(&[data(name)]).unwrap();
    assert!(printed.len() >= 3, "{name}");
    assert_eq!(system.trajectory.n_frames(), printed.len(), "{name}");
    assert_eq!(system.frame_energies_hartree, printed, "{name}");

    let name = "Gaussian09_dvb_bomd.out.gz";
    let raw = orbitfield::io::read_bytes(&data(name)).unwrap();
    let text = String::from_utf8_lossy(&raw);
    let potentials: Vec<f64> = text
        .lines()
        .skip_while(|l| l.trim() != "Trajectory summary")
        .skip(2)
        .map_while(|l| {
            let v: Vec<f64> = l.split_whitespace().filter_map(|w| w.parse().ok()).collect();
            (v.len() == 5).then(|| v[2])
        })
        .collect();
    assert_eq!(potentials.len(), 35);
    assert!(printed_energies(name, "SCF Done:").len() > potentials.len());
    let system = load(&[data(name)]).unwrap();
    assert_eq!(system.trajectory.n_frames(), potentials.len(), "{name}");
    for (got, want) in system.frame_energies_hartree.iter().zip(&potentials) {
        assert!((got - want).abs() < 1e-7, "{name}: {got} vs {want}");
    }
}

/// Frames that are not a log's steps carry no energies: a trajectory after the log, or a structure.
#[test]
fn trajectories_and_structures_carry_no_energies() {
    let md = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/md");
    let system = load(&[md.join("adk.psf"), md.join("adk_dims.dcd")]).unwrap();
    assert!(system.frame_energies_hartree.is_empty());
    // A second log after the first: the frames are the second log's, the energies the first's.
    let system = load(&[data("GAMESS-US2018_dvb_gopt_a.out"), data("ORCA6.0_dvb_gopt.out")]).unwrap();
    assert_eq!(system.trajectory.n_frames(), 4);
    assert!(
        system.frame_energies_hartree.is_empty(),
        "the frames are the second log's"
    );
}

/// The XYZ trajectories optimisers write carry each step's energy on its comment line: ORCA's
/// `_trj.xyz`, xtb's `xtbopt.log`, CREST's ensembles (the energy alone), extended XYZ (eV).
#[test]
fn xyz_trajectories_of_optimisers_give_their_energies() {
    let dir = tempfile::tempdir().unwrap();
    let energies = [-76.326_860_110_236, -76.328_1, -76.329_004_5];
    let frames = |comment: &dyn Fn(f64) -> String| -> String {
        energies
            .iter()
            .enumerate()
            .map(|(k, &e)| {
                format!(
                    "3\n{}\nO 0.0 0.0 {:.3}\nH 0.0 0.757 0.587\nH 0.0 -0.757 0.587\n",
                    comment(e),
                    0.01 * k as f64
                )
            })
            .collect()
    };
    let ev = orbitfield::model::units::EV_PER_HARTREE;
    type Comment = Box<dyn Fn(f64) -> String>;
    let cases: [(&str, Comment, f64); 4] = [
        (
            "water_trj.xyz",
            Box::new(|e| format!("Coordinates from ORCA-job water E {e:.12}")),
            1e-12,
        ),
        (
            "xtbopt.xyz",
            Box::new(|e| format!(" energy: {e:.12} gnorm: 0.000438 xtb: 6.5.1 (fbb3b4a)")),
            1e-12,
        ),
        ("crest_conformers.xyz", Box::new(|e| format!("      {e:.8}")), 1e-8),
        (
            "ase.extxyz",
            Box::new(move |e| format!("Properties=species:S:1:pos:R:3 energy={:.10} pbc=\"F F F\"", e * ev)),
            1e-10,
        ),
    ];
    for (name, comment, tol) in &cases {
        let path = dir.path().join(name);
        std::fs::write(&path, frames(comment.as_ref())).unwrap();
        let system = load(&[path]).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(system.frame_energies_hartree.len(), 3, "{name}");
        for (got, want) in system.frame_energies_hartree.iter().zip(energies) {
            assert!((got - want).abs() < *tol, "{name}: {got} against {want}");
        }
    }
    // Comments that are frame numbers or titles give no energies.
    for (name, comment) in [("numbered.xyz", "frame 3"), ("title.xyz", "water")] {
        let path = dir.path().join(name);
        std::fs::write(&path, frames(&|_| comment.to_string())).unwrap();
        assert!(load(&[path]).unwrap().frame_energies_hartree.is_empty(), "{name}");
    }
}
