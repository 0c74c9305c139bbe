//! The CUDA engine against the CPU engine (the numerical reference) and against float64 sums.
//!
//! Every test needs a CUDA device; without one it prints why and passes, unless
//! `ORBITFIELD_REQUIRE_CUDA=1` is set, which turns a missing device into a failure (the device machine
//! runs these with it set). Kernel sources are compiled by NVRTC whenever the library is present.

// Tests may unwrap: a panic is a failed test (house rules).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use orbitfield::compute::cpu::CpuEngine;
use orbitfield::compute::cuda::{self, CudaEngine, MoForm};
use orbitfield::compute::{Field, FieldInput, FieldJob};
use orbitfield::model::{Spin, Wavefunction};
use std::sync::Arc;

#[path = "common/gpu_engine_kit.rs"]
mod gpu_engine_kit;
use gpu_engine_kit::*;
#[path = "common/cuda_device.rs"]
mod cuda_device;
use cuda_device::device;
#[path = "common/lattice.rs"]
mod lattice;
#[path = "common/rotation.rs"]
mod rotation;
use lattice::lattice_around;

fn compare(gpu: &CudaEngine, name: &str, fields: &[Field], n: usize, shear: bool) {
    let wf = load(name);
    for field in fields {
        let job = FieldJob {
            field: field.clone(),
            lattice: lattice_around(&wf, n, shear),
            input: FieldInput::Wavefunction(wf.clone()),
        };
        both_forms_match_the_cpu_engine(gpu, &format!("{name} {field:?}"), &job);
    }
}

/// Runs `job` in the general and the specialised MO kernel form and compares each with the CPU engine.
fn both_forms_match_the_cpu_engine(gpu: &CudaEngine, label: &str, job: &FieldJob) {
    let reference = run(&CpuEngine, job);
    for form in [MoForm::General, MoForm::Specialised] {
        gpu.set_mo_form(form);
        let used = gpu.mo_form_used(job).unwrap();
        let err = rel_err(&run(gpu, job), &reference);
        println!("{label} {used}: rel err {err:.2e}");
        assert!(err <= TOL, "{label} {used}: relative error {err:.2e} > {TOL:e}");
    }
    gpu.set_mo_form(MoForm::Auto);
}

#[test]
fn every_kernel_source_compiles_with_nvrtc() {
    if let Err(why) = cuda::libraries_present() {
        let required = std::env::var("ORBITFIELD_REQUIRE_CUDA")
            .map(|v| v == "1")
            .unwrap_or(false);
        assert!(!required, "ORBITFIELD_REQUIRE_CUDA=1 but {why}");
        println!("skipped: {why}");
        return;
    }
    let general = format!("{}\n{}", cuda::MO_COMMON_SRC, cuda::MO_GENERAL_SRC);
    for (name, src) in [
        ("mo", general.as_str()),
        ("dcs", cuda::DCS_SRC),
        ("util", cuda::UTIL_SRC),
        ("rdf", cuda::rdf::RDF_SRC),
        ("msm", cuda::msm::MSM_SRC),
        ("msm_levels", cuda::msm_levels::MSM_LEVELS_SRC),
        ("msm_bins", cuda::msm_bins::MSM_BINS_SRC),
        ("molsurf", cuda::molsurf::MOLSURF_SRC),
    ] {
        let ptx = cuda::compile_ptx(src, "compute_75").unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(ptx.contains(".entry"), "{name}: no kernel in the PTX");
    }
    // Every Coulomb variant shape the bench times, and the RDF kernels in each box mode, with and
    // without exclusions, for different and for identical sets.
    for v in dcs_variants() {
        let src = format!(
            "#define DCS_UNROLL {}\n#define DCS_ROWS {}\n#define DCS_SOFT {}\n#define DCS_RSQ {}\n{}",
            v.unroll,
            v.rows,
            v.soft,
            v.rsqrt as u32,
            cuda::DCS_SRC
        );
        let ptx = cuda::compile_ptx(&src, "compute_75").unwrap_or_else(|e| panic!("dcs {v}: {e}"));
        assert!(ptx.contains("dcs_chunk"), "dcs {v}");
    }
    for mode in 0..3 {
        for groups in 0..2 {
            for half in 0..2 {
                let src = format!(
                    "#define RDF_MODE {mode}\n#define RDF_GROUPS {groups}\n#define RDF_HALF {half}\n{}",
                    cuda::rdf::RDF_SRC
                );
                let ptx = cuda::compile_ptx(&src, "compute_75")
                    .unwrap_or_else(|e| panic!("rdf mode {mode} groups {groups} half {half}: {e}"));
                assert!(ptx.contains("rdf_cells") && ptx.contains("rdf_cell_scan"));
            }
        }
    }
}

#[test]
fn orbitals_match_the_cpu_engine_spherical_and_cartesian() {
    let Some(gpu) = device() else { return };
    for name in ["water_hf_631gs_sph.molden", "water_hf_631gs_cart.molden"] {
        let wf = load(name);
        let h = homo(&wf, Spin::Alpha);
        let fields = [
            Field::Orbital {
                spin: Spin::Alpha,
                index: h,
            },
            Field::Orbital {
                spin: Spin::Alpha,
                index: h + 1,
            },
            Field::OrbitalSquared {
                spin: Spin::Alpha,
                index: 0,
            },
            Field::Density,
        ];
        compare(&gpu, name, &fields, 40, false);
    }
}

#[test]
fn orbitals_up_to_g_match_the_cpu_engine() {
    let Some(gpu) = device() else { return };
    for name in ["n2_hf_ccpvqz_sph.molden", "n2_hf_ccpvqz_cart.molden"] {
        let wf = load(name);
        let h = homo(&wf, Spin::Alpha);
        // The highest virtuals of cc-pVQZ carry the g functions.
        let top = wf.alpha.len() - 1;
        let fields = [
            Field::Orbital {
                spin: Spin::Alpha,
                index: h,
            },
            Field::Orbital {
                spin: Spin::Alpha,
                index: top,
            },
            Field::Density,
        ];
        compare(&gpu, name, &fields, 36, true);
    }
}

#[test]
fn unrestricted_spin_density_matches_the_cpu_engine() {
    let Some(gpu) = device() else { return };
    let name = "o2_uhf_ccpvtz_sph.molden";
    let wf = load(name);
    let fields = [
        Field::Orbital {
            spin: Spin::Beta,
            index: homo(&wf, Spin::Beta),
        },
        Field::Density,
        Field::SpinDensity,
    ];
    compare(&gpu, name, &fields, 36, false);
}

#[test]
fn threonine_homo_matches_the_cpu_engine() {
    let Some(gpu) = device() else { return };
    let name = "threonine_hf_631gs_cart.molden";
    let wf = load(name);
    compare(
        &gpu,
        name,
        &[Field::Orbital {
            spin: Spin::Alpha,
            index: homo(&wf, Spin::Alpha),
        }],
        48,
        false,
    );
}

#[test]
fn orbitals_on_a_rotated_lattice_match_the_cpu_engine() {
    // A QM region inside an MD frame is computed on the MD lattice carried into the wavefunction's
    // frame: a lattice whose steps point in arbitrary directions.
    let Some(gpu) = device() else { return };
    let name = "threonine_hf_631gs_cart.molden";
    let wf = load(name);
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos() as f64;
    println!("seed {seed}");
    // A random unit quaternion.
    let (u1, u2, u3) = ((seed * 0.618).fract(), (seed * 0.414).fract(), (seed * 0.732).fract());
    let tau = std::f64::consts::TAU;
    // (w, x, y, z), uniformly distributed on the unit sphere in four dimensions.
    let r = rotation::matrix_of_unit_quaternion([
        u1.sqrt() * (tau * u3).cos(),
        (1.0 - u1).sqrt() * (tau * u2).sin(),
        (1.0 - u1).sqrt() * (tau * u2).cos(),
        u1.sqrt() * (tau * u3).sin(),
    ]);
    let rot = |v: [f64; 3]| [0, 1, 2].map(|i| r[i][0] * v[0] + r[i][1] * v[1] + r[i][2] * v[2]);
    let mut lattice = lattice_around(&wf, 40, false);
    let centre: [f64; 3] =
        [0, 1, 2].map(|k| lattice.origin_bohr[k] + 0.5 * lattice.steps_bohr[k][k] * (lattice.dims[k] - 1) as f64);
    let half = [0, 1, 2].map(|k| lattice.origin_bohr[k] - centre[k]);
    let turned = rot(half);
    lattice.origin_bohr = [0, 1, 2].map(|k| centre[k] + turned[k]);
    lattice.steps_bohr = lattice.steps_bohr.map(rot);
    for index in [homo(&wf, Spin::Alpha), homo(&wf, Spin::Alpha) + 1] {
        let job = FieldJob {
            field: Field::Orbital {
                spin: Spin::Alpha,
                index,
            },
            lattice,
            input: FieldInput::Wavefunction(wf.clone()),
        };
        both_forms_match_the_cpu_engine(&gpu, &format!("rotated lattice, orbital {index}"), &job);
    }
}

#[test]
fn alternating_jobs_on_one_engine_keep_their_own_constants() {
    // The engine keeps several prepared jobs; the specialised kernel's constant memory must follow
    // whichever job runs (HOMO, LUMO and another frame's HOMO interleaved as in playback).
    let Some(gpu) = device() else { return };
    let wf = load("threonine_hf_631gs_cart.molden");
    let mut moved = (*wf).clone();
    for a in &mut moved.atoms {
        a.position_bohr[0] += 0.3;
        a.position_bohr[2] -= 0.2;
    }
    let moved = Arc::new(moved);
    let h = homo(&wf, Spin::Alpha);
    let lattice = lattice_around(&wf, 32, false);
    let job = |w: &Arc<Wavefunction>, index: usize| FieldJob {
        field: Field::Orbital {
            spin: Spin::Alpha,
            index,
        },
        lattice,
        input: FieldInput::Wavefunction(w.clone()),
    };
    let jobs = [
        job(&wf, h),
        job(&wf, h + 1),
        job(&moved, h),
        job(&wf, h - 1),
        job(&moved, h + 1),
    ];
    let cpu = CpuEngine;
    let references: Vec<Vec<f32>> = jobs.iter().map(|j| run(&cpu, j)).collect();
    for form in [MoForm::Specialised, MoForm::Auto] {
        gpu.set_mo_form(form);
        for round in 0..3 {
            for (i, j) in jobs.iter().enumerate() {
                let err = rel_err(&run(&*gpu, j), &references[i]);
                assert!(err <= TOL, "{form:?} round {round} job {i}: {err:.2e} > {TOL:e}");
            }
        }
    }
    gpu.set_mo_form(MoForm::Auto);
}
