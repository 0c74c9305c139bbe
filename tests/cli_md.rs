//! The command line on MD input: `--device gpu` is a GPU or a failure (one line saying why, exit
//! code 1) while `auto` falls back to the CPU, in `grid`, `rdf` and `bench`; `info` on trajectory
//! files cut short reports the complete frames and the missing ones in words, and refuses a file
//! without a complete frame.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::{Command, Output};

fn data(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(path)
}

fn orbitfield(args: &[&str], files: &[PathBuf]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_orbitfield"))
        .args(args)
        .args(files)
        .env_remove("ORBITFIELD_DEVICES")
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Whether a CUDA device is usable here (the GPU machine) or not (this checks both ways).
fn cuda_usable() -> bool {
    !orbitfield::compute::cuda::discover(None).engines.is_empty()
}

#[test]
fn device_gpu_means_a_gpu_or_a_failure() {
    let gpu = cuda_usable();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("homo.cube");
    let molden = data("qm/water_hf_631gs_sph.molden.gz");
    let grid = |device: &str| {
        orbitfield(
            &[
                "grid",
                "mo:homo",
                "--spacing",
                "0.4",
                "--device",
                device,
                "-o",
                out.to_str().unwrap(),
            ],
            std::slice::from_ref(&molden),
        )
    };
    let rdf = |device: &str| {
        orbitfield(
            &[
                "rdf", "--sel1", "name OH2", "--sel2", "name OH2", "--rmax", "6", "--frames", "0:2", "--device", device,
            ],
            &[data("md/tip125_tric_C36.psf"), data("md/tip125_tric_C36.dcd")],
        )
    };
    for (what, o) in [("grid", grid("gpu")), ("rdf", rdf("gpu"))] {
        if gpu {
            assert!(
                o.status.success(),
                "{what} --device gpu on a GPU machine: {}",
                stderr(&o)
            );
        } else {
            assert_eq!(
                o.status.code(),
                Some(1),
                "{what} --device gpu without a GPU: {}",
                stderr(&o)
            );
            let err = stderr(&o);
            let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("error")).collect();
            assert_eq!(lines.len(), 1, "{what}: {err}");
            assert!(lines[0].contains("no usable CUDA device"), "{what}: {err}");
        }
    }
    for (what, o) in [("grid", grid("auto")), ("rdf", rdf("auto"))] {
        assert!(o.status.success(), "{what} --device auto: {}", stderr(&o));
    }
    if !gpu {
        let o = orbitfield(&["bench", "--quick", "--device", "gpu", "--no-mo", "--no-dcs"], &[]);
        assert_eq!(o.status.code(), Some(1), "bench --device gpu: {}", stderr(&o));
        assert!(stderr(&o).contains("no usable CUDA device"), "{}", stderr(&o));
    }
}

#[test]
fn info_reports_trajectories_cut_short() {
    let dir = tempfile::tempdir().unwrap();
    let dcd = std::fs::read(data("md/adk_dims.dcd")).unwrap();
    // The header and the first frame (3341 atoms: 3 records of 4 * 3341 bytes plus markers) and
    // part of the second.
    let cut = dir.path().join("cut.dcd");
    std::fs::write(&cut, &dcd[..50_000]).unwrap();
    let o = orbitfield(&["info"], &[data("md/adk.psf"), cut.clone()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let all = format!("{}{}", String::from_utf8_lossy(&o.stdout), stderr(&o));
    // (This file's header says 500 frames; it holds 98.)
    assert_eq!(
        all.matches("header says 500 frames, 1 complete frame found, file ends at byte 50000")
            .count(),
        1,
        "{all}"
    );
    // Header only: no complete frame is an error naming the file.
    let empty = dir.path().join("empty.dcd");
    std::fs::write(&empty, &dcd[..400]).unwrap();
    let o = orbitfield(&["info"], &[data("md/adk.psf"), empty]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("empty.dcd") && stderr(&o).contains("no complete frame"),
        "{}",
        stderr(&o)
    );
}
