//! The CUDA engine's potentials, RDF, molecular-surface and pool paths against the CPU engine (the
//! numerical reference) and against float64 sums.
//!
//! Every test needs a CUDA device; without one it prints why and passes, unless
//! `ORBITFIELD_REQUIRE_CUDA=1` is set, which turns a missing device into a failure (the device machine
//! runs these with it set).

// Tests may unwrap: a panic is a failed test (house rules).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use orbitfield::compute::cpu::CpuEngine;
use orbitfield::compute::cpu::molsurf::PreparedMolSurf;
use orbitfield::compute::cuda::{self, CudaEngine, MoForm};
use orbitfield::compute::molsurf::MolSurfAtoms;
use orbitfield::compute::{Field, FieldInput, FieldJob, PointCharges, SlabEngine};
use orbitfield::jobs::{EngineSpec, JobError, Pool, PoolConfig, SlotId};
use orbitfield::model::field::LatticeSpec;
use orbitfield::model::{Lattice, Spin};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

#[path = "common/gpu_engine_kit.rs"]
mod gpu_engine_kit;
use gpu_engine_kit::*;
#[path = "common/cuda_device.rs"]
mod cuda_device;
use cuda_device::device;
#[path = "common/lattice.rs"]
mod lattice;
#[path = "common/rdf_cases.rs"]
mod rdf_cases;
use lattice::lattice_around;

fn random_charges(seed: u64, n: usize, ext: [f64; 3]) -> PointCharges {
    let mut s = seed | 1;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut q = PointCharges::default();
    for _ in 0..n {
        q.positions_bohr
            .push([next() * ext[0] - 2.0, next() * ext[1] - 2.0, next() * ext[2] - 2.0]);
        q.charges_e.push(next() * 2.0 - 1.0);
    }
    q
}

#[test]
fn coulomb_sum_matches_float64() {
    let Some(gpu) = device() else { return };
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    println!("seed {seed}");
    // Ragged in x and y for every variant's block shape.
    let lattice = Lattice::axis_aligned([-1.0, 0.5, 2.0], 0.37, [70, 33, 19]);
    // Two constant-memory chunks and a ragged third; charges of both signs.
    let q = random_charges(seed, 9_137, [30.0, 16.0, 12.0]);
    let job = FieldJob {
        field: Field::Potential,
        lattice,
        input: FieldInput::Charges(Arc::new(q.clone())),
    };
    let mut reference = Vec::with_capacity(lattice.n_points());
    for k in 0..19 {
        for j in 0..33 {
            for i in 0..70 {
                let p = lattice.point_bohr(i, j, k);
                let mut v = 0.0f64;
                for (x, c) in q.positions_bohr.iter().zip(&q.charges_e) {
                    v += c / ((p[0] - x[0]).powi(2) + (p[1] - x[1]).powi(2) + (p[2] - x[2]).powi(2)).sqrt();
                }
                reference.push(v as f32);
            }
        }
    }
    let default = gpu.dcs_variant();
    let err = rel_err(&run(&*gpu, &job), &reference);
    println!("coulomb {default}: rel err {err:.2e}");
    assert!(err <= TOL, "{default}: relative error {err:.2e}");
    for v in dcs_variants() {
        gpu.set_dcs_variant(v);
        let err = rel_err(&run(&*gpu, &job), &reference);
        println!("coulomb {v}: rel err {err:.2e}");
        assert!(err <= TOL, "{v}: relative error {err:.2e}");
    }
    gpu.set_dcs_variant(default);
}

#[test]
fn failing_device_tiles_fall_back_to_the_cpu() {
    let Some(gpu) = device() else { return };
    let wf = load("water_hf_631gs_sph.molden");
    let job = FieldJob {
        field: Field::Orbital {
            spin: Spin::Alpha,
            index: homo(&wf, Spin::Alpha),
        },
        lattice: lattice_around(&wf, 32, false),
        input: FieldInput::Wavefunction(wf.clone()),
    };
    let reference = run(&CpuEngine, &job);
    let fresh = Arc::new(CudaEngine::new(gpu.ordinal()).unwrap());
    fresh.set_fail_all(true);
    let engines = vec![
        EngineSpec {
            engine: fresh.clone(),
            is_gpu: true,
        },
        EngineSpec {
            engine: Arc::new(CpuEngine),
            is_gpu: false,
        },
    ];
    let pool: Pool<u8> = Pool::with_engines(
        engines,
        PoolConfig {
            gpu_tile_points: 32 * 29 * 4,
            ..PoolConfig::default()
        },
    );
    let h = pool.submit(SlotId(0), 1, job.clone());
    let r = pool.results().recv_timeout(Duration::from_secs(60)).unwrap();
    let grid = r.outcome.unwrap();
    assert!(rel_err(&grid.values, &reference) <= 1e-6);
    assert!(h.progress.tiles_retried.load(Ordering::SeqCst) > 0);
    assert!(r.engines.iter().all(|e| !e.starts_with("cuda")), "{:?}", r.engines);
    // And with the device healthy, the pool's grid equals the CPU's.
    fresh.set_fail_all(false);
    let grid = pool.compute_grid(2, job.clone()).unwrap();
    assert!(rel_err(&grid.values, &reference) <= TOL);
    let h = pool.submit(
        SlotId(0),
        3,
        FieldJob {
            lattice: lattice_around(&wf, 200, false),
            ..job
        },
    );
    h.cancel();
    let r = pool.results().recv_timeout(Duration::from_secs(60)).unwrap();
    assert!(matches!(r.outcome, Err(JobError::Cancelled)));
}

// ---- RDF pair histograms ----

#[test]
fn rdf_kernel_equals_its_f32_emulation_and_the_cpu_engine() {
    use orbitfield::analysis::rdf::RdfAccumulator;
    use orbitfield::compute::cuda::rdf::PairGeometry;
    let Some(gpu) = device() else { return };
    let mut seed = rdf_cases::clock_seed();
    for case in rdf_cases::kernel_cases(&mut seed, (3000, 2500), (700, 1900)) {
        let g = case.groups.as_deref();
        let acc = RdfAccumulator::new(case.settings.clone()).unwrap();
        let checked = acc.check_frame(0, &case.frame, &case.sel1, &case.sel2, g).unwrap();
        let geom = PairGeometry::new(&case.frame, checked, &case.sel1, &case.sel2, g);
        let got = gpu.rdf_counts(&geom, &case.settings).unwrap();
        // The kernel's own arithmetic, exactly.
        assert_eq!(got, geom.emulate(&case.settings), "{}", case.name);
        let cpu = acc
            .frame_counts_cpu(&case.frame, checked, &case.sel1, &case.sel2, g)
            .unwrap();
        assert!(
            cpu.iter().sum::<u64>() > 10_000,
            "{}: too few pairs within r_max to test",
            case.name
        );
        // f32 against f64: pairs on bin edges or at r_max may differ.
        rdf_cases::assert_counts_close(&got, &cpu, rdf_cases::R_MAX, &case.name);
    }
}

/// The cell-list kernel's histograms equal the all-pairs kernel's count for count (and its CPU
/// emulation), on random boxes with r_max from a tenth to just under half of the box, open boundaries,
/// identical and different sets, exclusions, crowded cells (several tiles per cell) and a lattice with
/// pairs exactly at bin edges; where a periodic side has fewer than 3 cells, or the box is triclinic,
/// the cell method runs all pairs.
#[test]
fn rdf_cell_list_equals_all_pairs_on_the_device() {
    use orbitfield::analysis::rdf::RdfAccumulator;
    use orbitfield::compute::cuda::rdf::{CellPlan, PairGeometry, RdfMethod};
    let Some(gpu) = device() else { return };
    let mut seed = rdf_cases::clock_seed();
    let mut cells_ran = 0;
    for case in rdf_cases::cell_list_cases(&mut seed, 6000)
        .into_iter()
        .chain(rdf_cases::kernel_cases(&mut seed, (3000, 2500), (700, 1900)))
    {
        let g = case.groups.as_deref();
        let acc = RdfAccumulator::new(case.settings.clone()).unwrap();
        let checked = acc.check_frame(0, &case.frame, &case.sel1, &case.sel2, g).unwrap();
        let geom = PairGeometry::new(&case.frame, checked, &case.sel1, &case.sel2, g);
        let (all, used_all) = gpu.rdf_counts_with(&geom, &case.settings, RdfMethod::AllPairs).unwrap();
        assert_eq!(used_all, RdfMethod::AllPairs);
        assert!(all.iter().sum::<u64>() > 1000, "{}: too few pairs", case.name);
        let (cells, used) = gpu.rdf_counts_with(&geom, &case.settings, RdfMethod::Cells).unwrap();
        let plan = CellPlan::new(&geom, case.settings.r_max_angstrom);
        assert_eq!(used == RdfMethod::Cells, plan.is_some(), "{}", case.name);
        assert_eq!(cells, all, "{}: {used} against all pairs, {plan:?}", case.name);
        let (auto, _) = gpu.rdf_counts_with(&geom, &case.settings, RdfMethod::Auto).unwrap();
        assert_eq!(auto, all, "{}: auto", case.name);
        if let Some(emulated) = geom.emulate_cells(&case.settings) {
            assert_eq!(cells, emulated, "{}", case.name);
        }
        cells_ran += usize::from(used == RdfMethod::Cells);
        println!("{}: {used}, {} pairs", case.name, all.iter().sum::<u64>());
    }
    assert!(cells_ran >= 8, "only {cells_ran} cases ran the cell list");
}

// ---- Cutoff and multilevel summation ----

/// The cutoff and MSM cases of the GPU tests: a fresh neutral random set of `n` charges in a
/// 40 x 36 x 44 bohr region (the periodic cells hold it), a lattice over it, and the methods with
/// their boundaries.
type EspCase = (
    &'static str,
    orbitfield::compute::esp::EspMethod,
    orbitfield::compute::esp::Boundary,
);

fn esp_cases(n: usize) -> (Arc<PointCharges>, Lattice, Vec<EspCase>) {
    use orbitfield::compute::esp::{Boundary, EspMethod, MsmParams};
    use orbitfield::model::UnitCell;
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    println!("seed {seed}");
    let mut q = random_charges(seed, n, [40.0, 36.0, 44.0]);
    let mean = q.charges_e.iter().sum::<f64>() / q.charges_e.len() as f64;
    q.charges_e.iter_mut().for_each(|c| *c -= mean);
    let lattice = Lattice::axis_aligned([-3.0, -2.5, -1.0], 0.9, [47, 41, 50]);
    let msm = EspMethod::Msm(MsmParams {
        cutoff_angstrom: 6.0,
        spacing_angstrom: 1.5,
    });
    let cases = vec![
        (
            "cutoff, open",
            EspMethod::Cutoff { cutoff_angstrom: 6.0 },
            Boundary::Open,
        ),
        ("msm, open", msm, Boundary::Open),
        (
            "msm, orthorhombic",
            msm,
            Boundary::Periodic(UnitCell::orthorhombic([23.0, 21.0, 25.0])),
        ),
        (
            "msm, triclinic",
            msm,
            Boundary::Periodic(UnitCell::new([24.0, 22.0, 26.0], [80.0, 100.0, 75.0])),
        ),
    ];
    (Arc::new(q), lattice, cases)
}

#[test]
fn cutoff_and_msm_slabs_match_the_cpu_engine() {
    use orbitfield::compute::esp::field_input;
    let Some(gpu) = device() else { return };
    let (q, lattice, cases) = esp_cases(4_000);
    for (name, method, boundary) in cases {
        let input = field_input(q.clone(), method, boundary, &lattice).unwrap();
        let job = FieldJob {
            field: Field::Potential,
            lattice,
            input,
        };
        let cpu = run(&CpuEngine, &job);
        let values = run(&*gpu, &job);
        let err = rel_err(&values, &cpu);
        println!("{name}: GPU vs CPU relative error {err:.2e}");
        // f32 coordinates (relative to the bins' origin, ~1e-5 bohr rounding) against f64: a map point
        // that falls very close to a random charge amplifies that rounding in its 1/r term, which
        // dominates the 2-norm. A wrong bin or a missing interpolation term would be >= 1e-2.
        assert!(err <= 1e-4, "{name}: relative error {err:.2e}");
        // Slabs: the same values whatever the decomposition.
        let mut slab = vec![f32::NAN; 47 * 41 * 7];
        gpu.compute_slab(&job, 13..20, &mut slab).unwrap();
        let off = 47 * 41 * 13;
        assert_eq!(&slab[..], &values[off..off + slab.len()], "{name}: slab 13..20");
        // The viewer's deferred plan (built by the engine that takes the request): the same values.
        let deferred = FieldJob {
            input: orbitfield::compute::esp::DeferredPlan::field_input(q.clone(), method, boundary, &lattice).unwrap(),
            ..job.clone()
        };
        assert!(matches!(deferred.input, FieldInput::DeferredElectrostatics(_)));
        let err = rel_err(&run(&*gpu, &deferred), &values);
        assert!(err <= 1e-6, "{name}: deferred plan differs by {err:.2e}");
    }
}

/// A plan's heavy stages on the device (built with `StagesOn::Engine`): the bins equal the host's
/// exactly (start offsets and f32 charges); the long-range MSM levels equal the host cascade level
/// by level (charges and potential of every level, f64 both sides: only the fixed-point
/// anterpolation and the order of FMAs differ) and again on a second run, bit for bit; the map
/// through the GPU engine equals the CPU engine's with host stages and, for open boundaries, a
/// float64 direct sum; the host never bins nor computes levels for the device.
#[test]
fn msm_plan_stages_on_the_device_match_the_host() {
    use orbitfield::compute::esp::{Boundary, EspPlan, StagesOn, field_input};
    let Some(gpu) = device() else { return };
    let (q, lattice, cases) = esp_cases(6_000);
    for (name, method, boundary) in cases {
        let plan = Arc::new(EspPlan::build_with(q.clone(), method, boundary, &lattice, StagesOn::Engine).unwrap());
        assert!(plan.bins_computed().is_none(), "{name}: binned on the host");
        assert!(
            plan.long_range_computed().is_none(),
            "{name}: levels computed on the host"
        );
        // The map: device stages through the GPU engine against host stages through the CPU engine.
        let job = FieldJob {
            field: Field::Potential,
            lattice,
            input: FieldInput::Electrostatics(plan.clone()),
        };
        let values = run(&*gpu, &job);
        assert!(
            plan.bins_computed().is_none(),
            "{name}: the GPU engine binned on the host"
        );
        assert!(
            plan.long_range_computed().is_none(),
            "{name}: the GPU engine computed the levels on the host"
        );
        let reference = FieldJob {
            input: field_input(q.clone(), method, boundary, &lattice).unwrap(),
            ..job.clone()
        };
        let cpu = run(&CpuEngine, &reference);
        let err = rel_err(&values, &cpu);
        println!("{name}: map with device stages vs CPU engine: relative error {err:.2e}");
        assert!(err <= 1e-4, "{name}: relative error {err:.2e}");
        // The same bins as the host's, exactly.
        let (start, atoms) = gpu.msm_bins(&plan).unwrap();
        let host = plan.bin_frame().clone().filled(&q.positions_bohr, &q.charges_e);
        let (want_start, want_atoms) = cuda::msm_bins::host_bin_arrays(&host);
        assert_eq!(start, want_start, "{name}: bin offsets");
        assert_eq!(atoms, want_atoms, "{name}: binned charges");
        let Some(geometry) = plan.levels.as_ref() else {
            continue;
        };
        let host = geometry.host_levels(&q);
        let dev = gpu.msm_levels(&plan).unwrap();
        assert_eq!(dev.charges.len(), host.charges.len(), "{name}: level count");
        println!(
            "{name}: {} levels, finest {:?}",
            host.charges.len(),
            geometry.layouts[0].dims
        );
        for (what, d, h) in [
            ("charges", &dev.charges, &host.charges),
            ("potential", &dev.potentials, &host.potentials),
        ] {
            for (l, (a, b)) in d.iter().zip(h).enumerate() {
                assert_eq!(a.len(), b.len(), "{name}: {what} of level {l}");
                let max = b.iter().fold(0.0f64, |m, v| m.max(v.abs())).max(1e-300);
                let worst = a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0f64, f64::max);
                println!("{name}: {what} of level {l}: max |device - host| {worst:.2e} (max {max:.2e})");
                assert!(
                    a.iter().all(|v| v.is_finite()),
                    "{name}: {what} of level {l} not all written"
                );
                assert!(
                    worst <= 1e-10 * max,
                    "{name}: {what} of level {l} differs by {worst:.2e}"
                );
            }
        }
        let again = gpu.msm_levels(&plan).unwrap();
        assert_eq!(again.charges, dev.charges, "{name}: charges differ between runs");
        assert_eq!(
            again.potentials, dev.potentials,
            "{name}: potentials differ between runs"
        );
        if boundary == Boundary::Open {
            // Against float64 direct sums at map points at least 1 bohr from every charge.
            let (mut num, mut den, mut used) = (0.0f64, 0.0f64, 0usize);
            for idx in (0..lattice.n_points()).step_by(97) {
                let [nx, ny, _] = lattice.dims;
                let p = lattice.point_bohr(idx % nx, (idx / nx) % ny, idx / (nx * ny));
                let mut v = 0.0;
                let mut near = false;
                for (x, c) in q.positions_bohr.iter().zip(&q.charges_e) {
                    let r = ((p[0] - x[0]).powi(2) + (p[1] - x[1]).powi(2) + (p[2] - x[2]).powi(2)).sqrt();
                    near |= r < 1.0;
                    v += c / r;
                }
                if !near {
                    num += (f64::from(values[idx]) - v).powi(2);
                    den += v * v;
                    used += 1;
                }
            }
            let rms = (num / den).sqrt();
            println!("{name}: map with device stages vs float64 direct sum: relative RMS {rms:.2e} ({used} points)");
            assert!(
                used > 100 && rms <= 1e-2,
                "{name}: relative RMS {rms:.2e} over {used} points"
            );
        }
    }
}

/// The orbitals of one frame in one launch (`compute_slabs`, as the jobs pool batches the HOMO and
/// LUMO of two representations): every channel equals the CPU engine, for amplitudes and squares,
/// up to g functions, both spins, a whole lattice and a slab, on the first call (which times the
/// batch against the orbitals one by one) and on later calls (which use the faster).
#[test]
fn orbital_batches_match_the_cpu_engine_channel_by_channel() {
    let Some(gpu) = device() else { return };
    let cases: [(&str, usize, bool); 3] = [
        ("threonine_hf_631gs_cart.molden", 40, false),
        ("n2_hf_ccpvqz_sph.molden", 36, true),
        ("o2_uhf_ccpvtz_sph.molden", 32, false),
    ];
    for (name, n, shear) in cases {
        let wf = load(name);
        let h = homo(&wf, Spin::Alpha);
        let mo = |spin, index| Field::Orbital { spin, index };
        let top = wf.alpha.len() - 1;
        let mut fields = vec![mo(Spin::Alpha, h), mo(Spin::Alpha, h + 1), mo(Spin::Alpha, top)];
        fields.insert(
            2,
            Field::OrbitalSquared {
                spin: Spin::Alpha,
                index: h.saturating_sub(1),
            },
        );
        if wf.beta.is_some() {
            fields.push(mo(Spin::Beta, homo(&wf, Spin::Beta)));
        }
        let lattice = lattice_around(&wf, n, shear);
        let jobs: Vec<FieldJob> = fields
            .iter()
            .map(|f| FieldJob {
                field: f.clone(),
                lattice,
                input: FieldInput::Wavefunction(wf.clone()),
            })
            .collect();
        let all: Vec<&FieldJob> = jobs.iter().collect();
        let references: Vec<Vec<f32>> = jobs.iter().map(|j| run(&CpuEngine, j)).collect();
        let plane = lattice.dims[0] * lattice.dims[1];
        // HOMO and LUMO (the two-orbital kernel form), then every orbital (the general one).
        for refs in [&all[..2], &all[..]] {
            let k = refs.len();
            for form in [MoForm::General, MoForm::Auto, MoForm::Specialised] {
                gpu.set_mo_form(form);
                for round in 0..2 {
                    let mut bufs = vec![vec![f32::NAN; lattice.n_points()]; k];
                    let mut outs: Vec<&mut [f32]> = bufs.iter_mut().map(|b| &mut b[..]).collect();
                    gpu.compute_slabs(refs, 0..lattice.dims[2], &mut outs).unwrap();
                    let mut slabs = vec![vec![f32::NAN; plane * 5]; k];
                    let mut slab_outs: Vec<&mut [f32]> = slabs.iter_mut().map(|b| &mut b[..]).collect();
                    gpu.compute_slabs(refs, 4..9, &mut slab_outs).unwrap();
                    for (c, reference) in references.iter().take(k).enumerate() {
                        let err = rel_err(&bufs[c], reference);
                        let slab_err = rel_err(&slabs[c], &reference[4 * plane..9 * plane]);
                        println!(
                            "{name} {k} orbitals {form:?} round {round} channel {c}: {err:.2e}, slab {slab_err:.2e}"
                        );
                        assert!(
                            err <= TOL && slab_err <= TOL,
                            "{name} {k} orbitals {form:?} channel {c}: {err:.2e} / {slab_err:.2e}"
                        );
                    }
                }
            }
        }
    }
    gpu.set_mo_form(MoForm::Auto);
}

// ---- Molecular-surface density ----

/// The CUDA molecular-surface field of `atoms` on `lattice` against the CPU engine (f64 sums), on the
/// whole lattice and on a slab in its middle: 1e-5 relative where the CPU value exceeds 1e-3 (the
/// kernel's f32 sums of f32 terms are good to a few 1e-7), 1e-8 absolute below; a point may differ
/// more only by the truncated tail (1e-3) of atoms whose truncation sphere passes through it to
/// within f32 rounding (1e-5 relative in squared distance), which is checked point by point.
fn molsurf_matches_the_cpu_engine(gpu: &CudaEngine, label: &str, atoms: MolSurfAtoms, lattice: Lattice) {
    let cpu = PreparedMolSurf::new(&atoms);
    let job = FieldJob {
        field: Field::MolSurf,
        lattice,
        input: FieldInput::Spheres(Arc::new(atoms)),
    };
    let want = run(&CpuEngine, &job);
    let [nx, ny, nz] = lattice.dims;
    let check = |got: &[f32], k0: usize| {
        let (mut worst, mut tails, mut above) = (0.0f64, 0usize, 0usize);
        for (p, &g) in got.iter().enumerate() {
            let (i, j, k) = (p % nx, p / nx % ny, k0 + p / (nx * ny));
            let w = f64::from(want[i + nx * (j + ny * k)]);
            let (g, err) = (f64::from(g), (f64::from(g) - w).abs());
            above += usize::from(w > 1e-3);
            if err <= 1e-5 * w.max(1e-3) {
                worst = worst.max(err / w.max(1e-3));
                continue;
            }
            let at = cpu.near_cutoff(lattice.point_bohr(i, j, k), 1e-5);
            assert!(
                at > 0 && err <= 1.01e-3 * at as f64 + 1e-5 * w,
                "{label}: point ({i}, {j}, {k}): {g} vs {w}"
            );
            tails += 1;
        }
        println!("{label}: {above} points above 1e-3, worst rel err {worst:.2e}, {tails} at a truncation radius");
        assert!(tails * 1000 <= got.len(), "{label}: {tails} points differ");
    };
    check(&run(gpu, &job), 0);
    let z = nz / 3..nz - 2;
    let mut slab = vec![f32::NAN; nx * ny * z.len()];
    gpu.compute_slab(&job, z.clone(), &mut slab).unwrap();
    check(&slab, z.start);
}

#[test]
fn molsurf_kernel_matches_the_cpu_engine_on_a_random_cluster_and_adk() {
    let Some(gpu) = device() else { return };
    let mut seed = 0x9e37_79b9_7f4a_7c15u64 ^ std::process::id() as u64;
    let mut rnd = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 11) as f64 / (1u64 << 53) as f64
    };
    // 2000 atoms in a 30 A box, some outside the lattice; dims not multiples of the 8x8x8 brick.
    let centers: Vec<[f64; 3]> = (0..2000).map(|_| [0, 1, 2].map(|_| 30.0 * rnd() - 15.0)).collect();
    let radii: Vec<f64> = (0..2000).map(|_| 1.0 + rnd()).collect();
    let atoms = MolSurfAtoms::from_radii_angstrom(&centers, &radii, 0.6).unwrap();
    let lattice = Lattice::axis_aligned([-13.0 * BOHR, -14.1 * BOHR, -12.7 * BOHR], 0.45 * BOHR, [61, 67, 53]);
    molsurf_matches_the_cpu_engine(&gpu, "random cluster", atoms, lattice);
    // adk (3341 atoms, the PQR's radii) at 0.7 A around the protein, far from the origin.
    let root = std::env::var_os("ORBITFIELD_TEST_ROOT")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf());
    let mut system = orbitfield::io::load(&[root.join("tests/data/md/adk_open.pqr")]).unwrap();
    let frame = system.trajectory.frame(0).unwrap();
    let atoms = MolSurfAtoms::from_frame(
        &system.structure,
        &frame,
        None,
        orbitfield::compute::molsurf::SurfaceModel::Gaussian { radius_scale: 0.6 },
    )
    .unwrap();
    let lattice = LatticeSpec::AroundAtoms {
        spacing_angstrom: 0.7,
        padding_angstrom: atoms.padding_angstrom(),
    }
    .build(&atoms.positions_angstrom())
    .unwrap();
    molsurf_matches_the_cpu_engine(&gpu, "adk", atoms, lattice);
}

/// The pool's GPU workers take molsurf jobs (no CPU worker to fall back to).
#[test]
fn pool_computes_molsurf_on_the_device() {
    let Some(gpu) = device() else { return };
    let centers: Vec<[f64; 3]> = (0..50)
        .map(|i| [i as f64 * 0.9, (i % 7) as f64, (i % 3) as f64])
        .collect();
    let atoms = MolSurfAtoms::from_radii_angstrom(&centers, &vec![1.6; 50], 0.6).unwrap();
    let lattice = Lattice::axis_aligned([-5.0 * BOHR, -5.0 * BOHR, -5.0 * BOHR], 0.5 * BOHR, [110, 34, 26]);
    let job = FieldJob {
        field: Field::MolSurf,
        lattice,
        input: FieldInput::Spheres(Arc::new(atoms)),
    };
    let reference = run(&CpuEngine, &job);
    let engines = vec![EngineSpec {
        engine: gpu.clone(),
        is_gpu: true,
    }];
    let pool: Pool<u8> = Pool::with_engines(engines, PoolConfig::default());
    pool.submit(SlotId(0), 1, job);
    let r = pool.results().recv_timeout(Duration::from_secs(60)).unwrap();
    assert!(r.engines.iter().all(|e| e.starts_with("cuda")), "{:?}", r.engines);
    let grid = r.outcome.unwrap();
    assert!(rel_err(&grid.values, &reference) <= TOL);
    // Atoms that all lie beyond reach of the lattice: every value written, all zero.
    let far = MolSurfAtoms::from_radii_angstrom(&[[500.0, 0.0, 0.0], [0.0, -400.0, 0.0]], &[1.6, 1.7], 0.6).unwrap();
    let job = FieldJob {
        field: Field::MolSurf,
        lattice,
        input: FieldInput::Spheres(Arc::new(far)),
    };
    assert!(run(&*gpu, &job).iter().all(|&v| v == 0.0));
}
