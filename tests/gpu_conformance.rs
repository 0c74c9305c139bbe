//! The CUDA engine against the CPU engine on every file of the wavefunction conformance corpus
//! (`tests/data/conformance`): HOMO, LUMO, total density and (open shells) spin density on a
//! lattice around the molecule, in the general and the specialised MO kernel form, within 1e-5
//! (relative 2-norm).
//!
//! Needs a CUDA device; without one it prints why and passes, unless `ORBITFIELD_REQUIRE_CUDA=1` is
//! set, which turns a missing device into a failure.

// Tests may unwrap: a panic is a failed test (house rules).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use orbitfield::compute::cpu::CpuEngine;
use orbitfield::compute::cuda::MoForm;
use orbitfield::compute::{Field, FieldInput, FieldJob, SlabEngine};
use orbitfield::model::{Spin, SpinKind};
use std::sync::Arc;

#[path = "common/cuda_device.rs"]
mod cuda_device;
use cuda_device::device;
#[path = "common/conformance_corpus.rs"]
mod corpus;
#[path = "common/lattice.rs"]
mod lattice;

const TOL: f64 = 1e-5;

fn run(engine: &dyn SlabEngine, job: &FieldJob) -> Vec<f32> {
    // Poisoned: every value must be overwritten.
    let mut out = vec![f32::NAN; job.lattice.n_points()];
    engine.compute_slab(job, 0..job.lattice.dims[2], &mut out).unwrap();
    assert!(
        out.iter().all(|v| v.is_finite()),
        "{}: unwritten or non-finite values",
        engine.name()
    );
    out
}

fn rel_err(a: &[f32], b: &[f32]) -> f64 {
    let (mut num, mut den) = (0.0f64, 0.0f64);
    for (&x, &y) in a.iter().zip(b) {
        num += (f64::from(x) - f64::from(y)).powi(2);
        den += f64::from(y).powi(2);
    }
    (num / den.max(1e-300)).sqrt()
}

#[test]
fn cuda_engine_equals_cpu_engine_on_every_corpus_file() {
    let Some(gpu) = device() else { return };
    let mut worst: f64 = 0.0;
    let mut failures = Vec::new();
    for e in corpus::manifest().files {
        let path = corpus::corpus().join("files").join(&e.file);
        let wf = Arc::new(corpus::read(&path, &e.format).unwrap().wf);
        let mut fields = Vec::new();
        let homo = wf.homo(Spin::Alpha).unwrap();
        fields.push(Field::Orbital {
            spin: Spin::Alpha,
            index: homo,
        });
        if homo + 1 < wf.alpha.len() {
            fields.push(Field::Orbital {
                spin: Spin::Alpha,
                index: homo + 1,
            });
        }
        fields.push(Field::Density);
        if wf.spin != SpinKind::Restricted {
            fields.push(Field::SpinDensity);
        }
        for field in fields {
            let job = FieldJob {
                field: field.clone(),
                lattice: lattice::lattice_around(&wf, 26, false),
                input: FieldInput::Wavefunction(wf.clone()),
            };
            let reference = run(&CpuEngine, &job);
            for form in [MoForm::General, MoForm::Specialised] {
                gpu.set_mo_form(form);
                let used = gpu.mo_form_used(&job).unwrap();
                let err = rel_err(&run(gpu.as_ref(), &job), &reference);
                println!("{} {field:?} {used}: rel err {err:.2e}", e.file);
                worst = worst.max(err);
                if err > TOL {
                    failures.push(format!("{} {field:?} {used}: {err:.2e}", e.file));
                }
            }
        }
    }
    println!("worst relative error over the corpus: {worst:.2e}");
    assert!(failures.is_empty(), "above {TOL:e}:\n{}", failures.join("\n"));
}
