//! `orbitfield surface --color-by pb` and `grid pb --device` on the command line: two ions (+1 and
//! -1 e, radius 2 A, 8 A apart, PQR charges and radii) give a molecular surface whose Poisson-Boltzmann
//! colouring is positive around the cation and negative around the anion at every vertex (the sign of
//! the nearer charge), smaller in magnitude 1.4 A outside the surface than on it (the potential of
//! each ion falls off with distance), with the model named in the PLY file's value comment; `--device
//! gpu` without a usable CUDA device is an error, never a CPU result; `--dielectric` is refused for pb.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::path::Path;
use std::process::Command;

const IONS_PQR: &str = "\
ATOM      1  K    K      1       0.000   0.000   0.000  1.0000 2.0000
ATOM      2 CL   CL      2       8.000   0.000   0.000 -1.0000 2.0000
END
";

/// Runs `surface` on the ions, returns (vertex positions, values, the value comment).
fn surface(dir: &Path, extra: &[&str]) -> (Vec<[f32; 3]>, Vec<f32>, String) {
    let pqr = dir.join("ions.pqr");
    std::fs::write(&pqr, IONS_PQR).unwrap();
    let out = dir.join(format!("pb{}.ply", extra.len()));
    let output = Command::new(env!("CARGO_BIN_EXE_orbitfield"))
        .arg("surface")
        .arg(&pqr)
        .args([
            "--field",
            "molsurf",
            "--iso",
            "0.5",
            "--color-by",
            "pb",
            "--device",
            "cpu",
        ])
        .args(extra)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let bytes = std::fs::read(&out).unwrap();
    let end = b"end_header\n";
    let at = bytes.windows(end.len()).position(|w| w == end).unwrap() + end.len();
    let header = String::from_utf8_lossy(&bytes[..at]).to_string();
    let comment = header
        .lines()
        .find_map(|l| l.strip_prefix("comment value: "))
        .unwrap()
        .to_string();
    let n: usize = header
        .lines()
        .find_map(|l| l.strip_prefix("element vertex "))
        .unwrap()
        .parse()
        .unwrap();
    let float = |k: usize| f32::from_le_bytes(bytes[at + 4 * k..at + 4 * k + 4].try_into().unwrap());
    let positions = (0..n)
        .map(|v| [float(7 * v), float(7 * v + 1), float(7 * v + 2)])
        .collect();
    let values = (0..n).map(|v| float(7 * v + 6)).collect();
    (positions, values, comment)
}

#[test]
fn surface_coloured_by_pb_has_each_ions_sign_and_names_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let (positions, on, comment) = surface(dir.path(), &[]);
    assert!(
        comment.starts_with("Poisson-Boltzmann, 0.15 M, eps 2/78.5 (cpu"),
        "{comment}"
    );
    assert!(comment.ends_with("kT/e at 298.15 K"), "{comment}");
    assert!(positions.len() > 100);
    for (p, v) in positions.iter().zip(&on) {
        assert!(v.is_finite());
        let near_cation = p[0] < 4.0;
        assert!(if near_cation { *v > 0.0 } else { *v < 0.0 }, "vertex {p:?}: {v} kT/e");
    }
    let (_, outside, comment) = surface(dir.path(), &["--color-offset", "1.4"]);
    assert!(comment.contains("1.4 A outside the surface"), "{comment}");
    let mean = |v: &[f32]| v.iter().map(|x| f64::from(x.abs())).sum::<f64>() / v.len() as f64;
    println!(
        "mean |u| on the surface {:.3} kT/e, 1.4 A outside {:.3} kT/e",
        mean(&on),
        mean(&outside)
    );
    assert!(mean(&outside) < mean(&on));
}

#[test]
fn gpu_without_a_device_and_dielectric_with_pb_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let pqr = dir.path().join("ions.pqr");
    std::fs::write(&pqr, IONS_PQR).unwrap();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_orbitfield"))
            .args(args)
            .arg(&pqr)
            .arg("-o")
            .arg(dir.path().join("map.dx"))
            .output()
            .unwrap()
    };
    let refused = run(&["grid", "pb", "--dielectric", "4r"]);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--dielectric"));
    if orbitfield::compute::cuda::discover(Some(&[0])).engines.is_empty() {
        for device in ["gpu", "cuda"] {
            let out = run(&["grid", "pb", "--device", device]);
            let stderr = String::from_utf8_lossy(&out.stderr);
            println!("--device {device} without a device: {stderr}");
            assert!(!out.status.success());
            assert!(stderr.contains("CUDA"), "{stderr}");
            assert!(!dir.path().join("map.dx").exists());
        }
    } else {
        println!("a CUDA device is present: --device gpu is exercised by tests/pb_cuda.rs");
    }
}
