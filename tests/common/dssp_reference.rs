//! Shared by the DSSP test files: the mkdssp reference structures of `tests/data/dssp` (see the
//! README there) and their frames.
#![allow(dead_code)]

use orbitfield::io;
use orbitfield::model::Structure;
use std::path::PathBuf;

/// A file under `tests/data`.
pub fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name)
}

/// `tests/data/dssp/reference.json`.
pub fn reference() -> serde_json::Value {
    let text = std::fs::read_to_string(data("dssp/reference.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The system of one reference entry (its files read together).
pub fn load_entry(entry: &serde_json::Value) -> io::System {
    let files: Vec<PathBuf> = entry["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| data(f.as_str().unwrap()))
        .collect();
    io::load(&files).unwrap()
}

/// A structure by name with some of its frames.
pub type Case = (String, Structure, Vec<Vec<[f32; 3]>>);

/// Every reference structure with its first `frames` frames (at most).
pub fn reference_cases(frames: usize) -> Vec<Case> {
    let reference = reference();
    reference["structures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| {
            let mut system = load_entry(entry);
            let positions = (0..system.trajectory.n_frames().min(frames))
                .map(|f| system.trajectory.frame(f).unwrap().positions_angstrom)
                .collect();
            (entry["name"].as_str().unwrap().to_string(), system.structure, positions)
        })
        .collect()
}
