//! `orbitfield surface --color-by pb` and `grid pb --device` on the command line: two ions (+1 and
//! -1 e, radius 2 A, 8 A apart, PQR charges and radii) give a molecular surface whose Poisson-Boltzmann
//! colouring is positive around the cation and negative around the anion at every vertex (the sign of
//! the nearer charge), smaller in magnitude 1.4 A outside the surface than on it (the potential of
//! each ion falls off with distance), with the model named in the PLY file's value comment; `--device
//! cuda` without a usable CUDA device is an error, never a CPU result, and so is `--device gpu` without
//! CUDA and without a hardware wgpu adapter (with one, `gpu` solves there); `--dielectric` is refused for pb;
//! `render --color-by pb` draws the anion's surface red and the cation's blue (lavapipe or any adapter).

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
    // A lattice that misses the charges (27 million points, about 5 GiB to solve on) is refused
    // before it is allocated, naming the atom (from 1) and where it is.
    let missed = run(&[
        "grid",
        "pb",
        "--spacing",
        "0.5",
        "--dims=300,300,300",
        "--origin=100,100,100",
    ]);
    let e = String::from_utf8_lossy(&missed.stderr);
    assert!(!missed.status.success());
    assert!(
        e.contains("spreads beyond the lattice interior") && e.contains("solute atom 1 at ("),
        "{e}"
    );
    assert!(
        !e.contains("GiB on the host"),
        "refused before the solve is announced: {e}"
    );
    assert!(!dir.path().join("map.dx").exists());
    if orbitfield::compute::cuda::discover(Some(&[0])).engines.is_empty() {
        for device in ["gpu", "cuda"] {
            let out = run(&["grid", "pb", "--device", device]);
            let stderr = String::from_utf8_lossy(&out.stderr);
            if device == "gpu" && out.status.success() {
                // `gpu` takes a hardware wgpu adapter where CUDA has no device.
                println!("--device gpu without CUDA: {stderr}");
                assert!(stderr.contains("wgpu"), "{stderr}");
                std::fs::remove_file(dir.path().join("map.dx")).unwrap();
                continue;
            }
            println!("--device {device} without a device: {stderr}");
            assert!(!out.status.success());
            assert!(stderr.contains("CUDA"), "{stderr}");
            assert!(!dir.path().join("map.dx").exists());
        }
    } else {
        println!("a CUDA device is present: --device gpu is exercised by tests/pb_cuda.rs");
    }
}

/// `render --surface molsurf --color-by pb`: two ions (-1 e on the left, +1 e on the right, seen down
/// -z): the surface around the anion is red, around the cation blue (the colour convention of
/// APBS, PyMOL and ChimeraX), with the default range of +-5 kT/e. Skipped where no wgpu adapter exists.
#[test]
fn render_colours_the_surface_by_pb_red_negative_blue_positive() {
    const SIZE: [u32; 2] = [200, 120];
    let dir = tempfile::tempdir().unwrap();
    let pqr = dir.path().join("ions.pqr");
    // The anion on the left this time.
    std::fs::write(
        &pqr,
        "ATOM      1 CL   CL      1      -4.000   0.000   0.000 -1.0000 1.8000\n\
         ATOM      2  K    K      2       4.000   0.000   0.000  1.0000 1.8000\nEND\n",
    )
    .unwrap();
    let out = dir.path().join("ions.png");
    let o = Command::new(env!("CARGO_BIN_EXE_orbitfield"))
        .arg("render")
        .arg(&pqr)
        .args([
            "--surface",
            "molsurf",
            "--color-by",
            "pb",
            "--pb-device",
            "cpu",
            "--camera",
            "front",
        ])
        .args(["--no-legend", "--size", &format!("{}x{}", SIZE[0], SIZE[1]), "-o"])
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    if !o.status.success() && stderr.contains("adapter") {
        eprintln!("skipping: no wgpu adapter: {stderr}");
        return;
    }
    assert!(o.status.success(), "{stderr}");
    assert!(
        stderr.contains("legend: surface: Poisson-Boltzmann, 0.15 M, eps 2/78.5 from -5.00 to 5.00 kT/e"),
        "{stderr}"
    );
    let img = image::open(&out).unwrap().to_rgba8();
    let is_red = |c: [f32; 3]| c[0] > c[2] + 40.0 && c[0] > c[1] + 20.0;
    let is_blue = |c: [f32; 3]| c[2] > c[0] + 40.0;
    let (mut left_red, mut left_blue, mut right_red, mut right_blue) = (0, 0, 0, 0);
    for (x, _, p) in img.enumerate_pixels() {
        let c = [f32::from(p[0]), f32::from(p[1]), f32::from(p[2])];
        match (x < SIZE[0] / 2, is_red(c), is_blue(c)) {
            (true, true, _) => left_red += 1,
            (true, _, true) => left_blue += 1,
            (false, true, _) => right_red += 1,
            (false, _, true) => right_blue += 1,
            _ => {}
        }
    }
    println!("left: {left_red} red, {left_blue} blue; right: {right_red} red, {right_blue} blue");
    assert!(
        left_red > 200 && right_blue > 200 && left_blue * 10 < left_red && right_red * 10 < right_blue,
        "left: {left_red} red, {left_blue} blue; right: {right_red} red, {right_blue} blue"
    );
}

/// `grid pb` solves at APBS's 298.15 K unless `--temperature` says otherwise (the Coulomb potentials'
/// kT/e stays at 300 K): the default map equals the one at `--temperature 298.15` and differs from
/// the one at 300 K (the Debye length and the kT/e unit both move).
#[test]
fn pb_defaults_to_apbs_temperature() {
    let dir = tempfile::tempdir().unwrap();
    let pqr = dir.path().join("ions.pqr");
    std::fs::write(&pqr, IONS_PQR).unwrap();
    let map = |extra: &[&str], name: &str| {
        let out = dir.path().join(name);
        let o = Command::new(env!("CARGO_BIN_EXE_orbitfield"))
            .args(["grid", "pb", "--device", "cpu", "--spacing", "1.0"])
            .args(extra)
            .arg(&pqr)
            .arg("-o")
            .arg(&out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        std::fs::read_to_string(&out).unwrap()
    };
    let values = |text: &str| -> Vec<f64> {
        text.lines()
            .filter(|l| l.starts_with(|c: char| c == '-' || c.is_ascii_digit()))
            .flat_map(|l| l.split_whitespace().map(|v| v.parse::<f64>().unwrap()))
            .collect()
    };
    let default = values(&map(&[], "default.dx"));
    let apbs = values(&map(&["--temperature", "298.15"], "apbs.dx"));
    let warm = values(&map(&["--temperature", "300"], "warm.dx"));
    assert!(!default.is_empty());
    assert_eq!(default, apbs);
    let largest = default.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let moved = default.iter().zip(&warm).fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    println!("largest {largest:.4} kT/e; 298.15 K against 300 K: largest difference {moved:.4e}");
    assert!(moved > 1e-4 * largest, "{moved} of {largest}");
}

/// `grid pb --like MAP` solves on an APBS map's own lattice (`tests/data/pb/apbs_map`, APBS 3.4.1
/// `mg-auto`, its fine 17^3 lattice at 1.5 A): the written map has the same origin, spacing and
/// counts, and its values follow APBS's (APBS focused from a coarser lattice, this solve takes the
/// single Debye-Hückel sphere at the fine lattice's faces, so the agreement is close, not exact).
/// A lattice with uneven spacings is refused with them.
#[test]
fn pb_like_an_apbs_map_solves_on_its_lattice() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/pb");
    let apbs_path = data.join("apbs_map/res1-4_pot.dx.gz");
    let apbs = orbitfield::io::dx::read(&apbs_path, &orbitfield::io::read_bytes(&apbs_path).unwrap()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("like.dx");
    let o = Command::new(env!("CARGO_BIN_EXE_orbitfield"))
        .args(["grid", "pb", "--device", "cpu"])
        .arg(data.join("adk_res1-4.pqr"))
        .arg("--like")
        .arg(&apbs_path)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let ours = orbitfield::io::dx::read(&out, &std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(ours.lattice.dims, apbs.lattice.dims);
    for k in 0..3 {
        assert!((ours.lattice.origin_bohr[k] - apbs.lattice.origin_bohr[k]).abs() < 1e-6);
        for j in 0..3 {
            assert!((ours.lattice.steps_bohr[k][j] - apbs.lattice.steps_bohr[k][j]).abs() < 1e-6);
        }
    }
    let (a, b): (Vec<f64>, Vec<f64>) = apbs
        .values
        .iter()
        .zip(&ours.values)
        .map(|(&x, &y)| (f64::from(x), f64::from(y)))
        .unzip();
    let mut diffs: Vec<f64> = a.iter().zip(&b).map(|(x, y)| (x - y).abs()).collect();
    diffs.sort_by(f64::total_cmp);
    let median = diffs[diffs.len() / 2];
    let range = a.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    println!("median |difference| {median:.4} kT/e, largest |APBS| {range:.2} kT/e");
    assert!(median < 0.1, "median difference {median} kT/e");

    // A cube of uneven spacings is not a lattice the solver takes.
    let uneven = dir.path().join("uneven.cube");
    std::fs::write(
        &uneven,
        "uneven\nlattice\n    1    0.000000    0.000000    0.000000\n    4    1.000000    0.000000    0.000000\n    4    0.000000    1.500000    0.000000\n    4    0.000000    0.000000    1.000000\n    1    1.000000    0.000000    0.000000    0.000000\n"
            .to_string()
            + &"0.0 ".repeat(64),
    )
    .unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_orbitfield"))
        .args(["grid", "pb", "--device", "cpu"])
        .arg(data.join("adk_res1-4.pqr"))
        .arg("--like")
        .arg(&uneven)
        .arg("-o")
        .arg(dir.path().join("x.dx"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && stderr.contains("one spacing"), "{stderr}");
}
