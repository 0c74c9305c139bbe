//! Helpers of the CUDA engine's tests (`tests/gpu_engine*.rs`): wavefunctions of the test data, a
//! slab computed into poisoned memory, relative errors, the Coulomb kernel variants held to float64.

#![allow(dead_code)]

use orbitfield::compute::cuda;
use orbitfield::compute::{FieldJob, SlabEngine};
use orbitfield::model::{Spin, Wavefunction};
use std::path::Path;
use std::sync::Arc;

pub const TOL: f64 = 1e-5;
pub const BOHR: f64 = orbitfield::model::units::BOHR_PER_ANGSTROM;

pub fn load(name: &str) -> Arc<Wavefunction> {
    // ORBITFIELD_TEST_ROOT: where the repository's data lies when the test runs on another machine.
    let root = std::env::var_os("ORBITFIELD_TEST_ROOT")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf());
    let path = if name.starts_with("threonine") {
        root.join("assets/bench").join(name)
    } else {
        root.join("tests/data/gpu").join(name)
    };
    let bytes = std::fs::read(&path).unwrap();
    let file = orbitfield::io::molden::read(&path, &bytes).unwrap();
    Arc::new(file.wavefunctions.into_iter().next().unwrap())
}

pub fn rel_err(a: &[f32], b: &[f32]) -> f64 {
    assert_eq!(a.len(), b.len());
    let (mut num, mut den) = (0.0f64, 0.0f64);
    for (&x, &y) in a.iter().zip(b) {
        assert!(x.is_finite(), "non-finite GPU value");
        num += (x as f64 - y as f64).powi(2);
        den += (y as f64).powi(2);
    }
    (num / den.max(1e-300)).sqrt()
}

pub fn run(engine: &dyn SlabEngine, job: &FieldJob) -> Vec<f32> {
    let n = job.lattice.n_points();
    // Poisoned: every value must be overwritten.
    let mut out = vec![f32::NAN; n];
    engine.compute_slab(job, 0..job.lattice.dims[2], &mut out).unwrap();
    assert!(
        out.iter().all(|v| v.is_finite()),
        "{}: unwritten or non-finite values",
        engine.name()
    );
    out
}

pub fn homo(wf: &Wavefunction, spin: Spin) -> usize {
    wf.homo(spin).unwrap()
}

/// Coulomb kernel variants the tests hold to float64: all on the SFU, the default, several rows per
/// thread with either FMA-pipe reciprocal square root, other block shapes, each chunk's atoms split
/// into ranges (fixed and chosen per launch), all on the FMA pipe.
pub fn dcs_variants() -> Vec<cuda::DcsVariant> {
    [
        "8:0",
        "8:1",
        "8x2:0",
        "8x2:3",
        "8x2:3:newton2",
        "8x4:9:newton2",
        "8x4:9",
        "4x4:5:newton2",
        "8x8:20:newton2",
        "8x8:20:newton2/b4/m3",
        "8x8:20:newton2/b4/m3/s3",
        "8x12:30:newton2/b2/m4/s4",
        "8x8:20:newton2/b4/m3/s0",
        "8x4:10:newton2/b2/m6/a1/s8",
        "newton",
        "8x8:20:newton2/b4/m3/s0/t2",
        "8x8:20:newton2/b4/m3/s0/t2",
        "8x8:20:newton2/b4/m3/p19/s1/t2",
        "8x4:9/t2",
    ]
    .map(|v| v.parse().unwrap())
    .to_vec()
}
