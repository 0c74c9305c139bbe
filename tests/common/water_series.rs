//! A water molecule (HF/6-31G*) moved along x, one wavefunction per frame: the panel tests'
//! series.

use orbitfield::io::System;
use orbitfield::model::Trajectory;

/// Water (HF/6-31G*) moved along x over 100 frames, one wavefunction per frame.
pub fn water_series(frames: usize) -> System {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/engine/water_hf_631gs_sph.molden");
    let base = orbitfield::io::load(std::slice::from_ref(&path)).unwrap();
    let wf0 = base.wavefunctions[0].clone();
    let mut frame0 = orbitfield::model::Frame::default();
    let mut traj = base.trajectory;
    traj.read_frame(0, &mut frame0).unwrap();
    let mut wfs = Vec::new();
    let mut list = Vec::new();
    for f in 0..frames {
        let dx = 0.01 * f as f64;
        let mut wf = wf0.clone();
        for a in &mut wf.atoms {
            a.position_bohr[0] += orbitfield::model::units::bohr_from_angstrom(dx);
        }
        wfs.push(wf);
        let mut fr = frame0.clone();
        for p in &mut fr.positions_angstrom {
            p[0] += dx as f32;
        }
        list.push(fr);
    }
    System {
        trajectory: Trajectory::from_frames(base.structure.len(), list, "test"),
        structure: base.structure,
        wavefunctions: wfs,
        grids: Vec::new(),
        warnings: Vec::new(),
        paths: vec![path],
        wavefunction_frames: Vec::new(),
        frame_energies_hartree: Vec::new(),
        orbital_levels: None,
    }
}
