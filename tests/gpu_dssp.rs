//! DSSP on a CUDA device (`CudaEngine::dssp_frame`) against the CPU path: the device's per-residue
//! flags and bridge partners byte for byte against `ProteinBackbone::device_passes_on_cpu`, and the
//! codes against `ProteinBackbone::assign`, on the mkdssp reference structures and on jittered
//! copies of adk (fresh jitter every run), with one workspace reused across sizes and frames (so a
//! value the device failed to write would be a stale one from another frame, and differ).
//!
//! Needs a CUDA device; without one it prints why and passes, unless `ORBITFIELD_REQUIRE_CUDA=1`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use orbitfield::analysis::dssp::{DsspOptions, ProteinBackbone, codes};
use orbitfield::analysis::polymer::replicate_on_grid;
use orbitfield::compute::cuda::dssp::{DeviceDsspWorkspace, DsspRoute};
use orbitfield::io;
use orbitfield::model::Structure;

#[path = "common/dssp_reference.rs"]
mod dssp_reference;
use dssp_reference::{data, reference_cases};
#[path = "common/jitter.rs"]
mod jitter;
use jitter::{fresh_seed, jitter};
#[path = "common/cuda_device.rs"]
mod cuda_device;
use cuda_device::device;

/// adk copied `copies` times on a grid, every coordinate moved by up to +-amplitude/2 A.
fn jittered_adk(copies: usize, amplitude: f32, seed: u64) -> (Structure, Vec<[f32; 3]>) {
    let mut system = io::load(&[data("md/adk.psf"), data("md/adk_dims.dcd")]).unwrap();
    let one = system.trajectory.frame(0).unwrap().positions_angstrom;
    let (big, mut positions) = replicate_on_grid(&system.structure, &one, copies, 60.0);
    jitter(&mut positions, amplitude, seed);
    (big, positions)
}

#[test]
fn device_dssp_equals_the_cpu_path() {
    let Some(engine) = device() else { return };
    let seed = fresh_seed(5);
    let mut cases: Vec<dssp_reference::Case> = Vec::new();
    let (big, big_positions) = jittered_adk(468, 1.0, seed);
    cases.push((
        format!("adk x 468, jitter 1.0 A (seed {seed})"),
        big,
        vec![big_positions],
    ));
    cases.extend(reference_cases(3));
    for (k, amplitude) in [0.3f32, 0.8, 1.5].into_iter().enumerate() {
        let s = seed.wrapping_add(k as u64 + 1);
        let (s_big, p) = jittered_adk(40, amplitude, s);
        cases.push((format!("adk x 40, jitter {amplitude} A (seed {s})"), s_big, vec![p]));
    }
    let mut ws = DeviceDsspWorkspace::default();
    let mut out = Vec::new();
    let mut on_device = 0;
    for (name, structure, frames) in &cases {
        let backbone = ProteinBackbone::new(structure);
        for (f, positions) in frames.iter().enumerate() {
            let want_passes = backbone.device_passes_on_cpu(positions);
            if name.starts_with("adk") {
                assert!(want_passes.is_some(), "{name}: every residue of adk's copies is usable");
            }
            let got_passes = engine.dssp_device_passes(&backbone, positions, &mut ws).unwrap();
            assert_eq!(want_passes.is_some(), got_passes.is_some(), "{name} frame {f}: route");
            if let (Some((wf, wh)), Some((gf, gh))) = (&want_passes, &got_passes) {
                let differ: Vec<usize> = (0..wf.len()).filter(|&i| wf[i] != gf[i]).take(10).collect();
                assert!(
                    differ.is_empty(),
                    "{name} frame {f}: flags differ at {differ:?}: cpu {:?} device {:?}",
                    differ.iter().map(|&i| wf[i]).collect::<Vec<_>>(),
                    differ.iter().map(|&i| gf[i]).collect::<Vec<_>>()
                );
                assert_eq!(wf.len(), gf.len(), "{name} frame {f}");
                assert_eq!(wh, gh, "{name} frame {f}: bridge partners");
                on_device += 1;
            }
            for pp in [3, 2, 0] {
                let options = DsspOptions {
                    pp_min_stretch: pp,
                    ..DsspOptions::default()
                };
                let route = engine
                    .dssp_frame(&backbone, positions, &options, &mut ws, &mut out)
                    .unwrap();
                assert_eq!(route == DsspRoute::Device, want_passes.is_some(), "{name} frame {f}");
                assert_eq!(
                    codes(&out),
                    codes(&backbone.assign(positions, &options)),
                    "{name} frame {f}, pp {pp}: codes"
                );
            }
            let route = if want_passes.is_some() { "device" } else { "CPU" };
            println!(
                "{name} frame {f}: {} residues on the {route} path, equal",
                backbone.len()
            );
        }
    }
    assert!(on_device >= 10, "only {on_device} frames ran on the device");

    // Frames the device does not take: a residue without finite positions, hydrogens from the file.
    let (s, mut positions) = jittered_adk(3, 0.3, seed ^ 0x55);
    let backbone = ProteinBackbone::new(&s);
    let ca = backbone.residues[100].ca.unwrap() as usize;
    positions[ca] = [f32::NAN; 3];
    let options = DsspOptions::default();
    let route = engine
        .dssp_frame(&backbone, &positions, &options, &mut ws, &mut out)
        .unwrap();
    assert!(matches!(route, DsspRoute::Cpu(_)), "{route:?}");
    assert_eq!(codes(&out), codes(&backbone.assign(&positions, &options)));
    let hydrogens = DsspOptions {
        file_hydrogens: true,
        ..DsspOptions::default()
    };
    let route = engine
        .dssp_frame(&backbone, &positions, &hydrogens, &mut ws, &mut out)
        .unwrap();
    assert!(matches!(route, DsspRoute::Cpu(_)), "{route:?}");
}

/// The viewer's cartoon builder with the field pool's GPU workers: DSSP of a large protein runs on
/// a GPU worker and the per-residue inputs equal those built with DSSP on the CPU, frame after frame
/// (the workspaces kept between them).
#[test]
fn cartoon_builder_runs_dssp_on_a_gpu_worker() {
    use orbitfield::analysis::polymer::{Coloring, Polymer};
    use orbitfield::compute::wgpu::cartoon_inputs::CartoonRings;
    use orbitfield::jobs::cartoon::{CartoonBuilder, CartoonBuilt, CartoonOutput, CartoonRequest};
    use orbitfield::jobs::{Pool, PoolConfig};
    use orbitfield::surface::cartoon::CartoonParams;
    use std::sync::Arc;
    if device().is_none() {
        return;
    }
    let pool: Pool<u64> = Pool::new(PoolConfig::default());
    let workers = pool.device_workers();
    assert!(workers.has_gpu(), "{:?}", pool.notes());
    let seed = fresh_seed(9);
    let mut on_gpu = CartoonBuilder::default();
    let mut on_cpu = CartoonBuilder::default();
    for frame in 0..3u64 {
        let (s, positions) = jittered_adk(40, 0.5, seed.wrapping_add(frame));
        let polymer = Arc::new(Polymer::new(&s));
        assert!(polymer.protein.len() >= orbitfield::compute::placement::DSSP_DEVICE_MIN_RESIDUES);
        let positions = Arc::new(positions);
        let request = |workers: Option<orbitfield::jobs::DeviceWorkers>| CartoonRequest {
            key: frame,
            polymer: Arc::clone(&polymer),
            positions_angstrom: Arc::clone(&positions),
            coloring: Coloring::SecondaryStructure,
            params: CartoonParams::for_residue_count(polymer.residue_count()),
            output: CartoonOutput::Rings(CartoonRings::default()),
            device_workers: workers,
        };
        let gpu = on_gpu.build(request(Some(workers.clone())));
        let cpu = on_cpu.build(request(None));
        assert!(gpu.dssp_on_gpu && !cpu.dssp_on_gpu, "frame {frame}");
        let (CartoonBuilt::Rings(a), CartoonBuilt::Rings(b)) = (&gpu.built, &cpu.built) else {
            panic!("frame {frame}: not the per-residue inputs");
        };
        assert!(**a == **b, "frame {frame} (seed {seed}): inputs differ");
    }
}
