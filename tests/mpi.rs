//! Batch commands over MPI ranks (`--features mpi`): `grid esp --frames --combine`, `rdf`, per-frame
//! cubes (`grid ... --frames -o DIR/`) and `render --frames` under `mpirun -np 1, 2, 3` give what one
//! process gives (maps within 1e-6 of the largest |value|, RDF counts and cubes byte for byte, images
//! pixel for pixel), on the adk (PSF + DCD, with charges) and adk_oplsaa (GRO + XTC, 47k atoms)
//! trajectories; and a rank that meets an unreadable frame ends the run with one message from rank 0
//! and no output.
//!
//! Needs `mpirun` (Open MPI or MPICH) on PATH: skipped with a printed reason without it, failed
//! instead when `ORBITFIELD_REQUIRE_MPI=1` (as CI sets it).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const RANKS: [usize; 3] = [1, 2, 3];

fn md(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/md")
        .join(name)
}

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_orbitfield")
}

/// `mpirun` with the flags CI needs (root, more ranks than cores), or `None` (skip) without one.
fn mpirun() -> Option<Command> {
    let found = Command::new("mpirun")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var("ORBITFIELD_REQUIRE_MPI").as_deref() != Ok("1"),
            "ORBITFIELD_REQUIRE_MPI=1 but mpirun is not on PATH"
        );
        eprintln!("skipped: no mpirun on PATH (install openmpi-bin)");
        return None;
    }
    let mut c = Command::new("mpirun");
    let version = Command::new("mpirun")
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned());
    if version.is_ok_and(|v| v.contains("Open MPI") || v.contains("OpenRTE")) {
        c.args(["--allow-run-as-root", "--oversubscribe"]);
    }
    Some(c)
}

/// Runs `orbitfield ARGS` as one plain process (ranks = 0) or under `mpirun -np ranks`, with one
/// rayon thread per rank so that three ranks fit on a small machine.
fn orbitfield(ranks: usize, args: &[impl AsRef<std::ffi::OsStr>]) -> Output {
    let mut c = if ranks == 0 {
        Command::new(bin())
    } else {
        let mut c = mpirun().expect("mpirun");
        c.args(["-np", &ranks.to_string(), "-x", "RAYON_NUM_THREADS=1", bin()]);
        c
    };
    c.args(args)
        .env("RAYON_NUM_THREADS", "1")
        .env_remove("ORBITFIELD_DEVICES");
    c.output().expect("run orbitfield")
}

/// `grid esp adk.psf DCD` on the CPU with the cutoff sum, then `extra`.
fn adk_esp(dcd: &Path, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = vec!["grid".into(), "esp".into()];
    args.extend(
        [md("adk.psf"), dcd.to_path_buf()]
            .iter()
            .map(|p| p.display().to_string()),
    );
    args.extend(["--method", "cutoff", "--device", "cpu"].map(String::from));
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

fn ok(out: &Output, what: &str) {
    assert!(
        out.status.success(),
        "{what} failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn read_dx(path: &Path) -> Vec<f32> {
    let bytes = std::fs::read(path).unwrap();
    orbitfield::io::dx::read(path, &bytes).unwrap().values
}

fn assert_maps_close(reference: &[f32], got: &[f32], what: &str) {
    assert_eq!(reference.len(), got.len(), "{what}: sizes");
    let max = reference.iter().fold(0f32, |m, v| m.max(v.abs()));
    assert!(max > 0.0, "{what}: an all-zero map tests nothing");
    let worst = reference
        .iter()
        .zip(got)
        .map(|(a, b)| (a - b).abs())
        .fold(0f32, f32::max);
    assert!(
        worst <= 1e-6 * max,
        "{what}: largest difference {worst:e}, 1e-6 of the maximum is {:e}",
        1e-6 * max
    );
}

#[test]
fn esp_combinations_over_ranks_equal_one_process() {
    if mpirun().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let dcd = md("adk_dims.dcd");
    for combine in ["avg", "stdev", "min", "max"] {
        let run = |ranks: usize, name: &str| -> Vec<f32> {
            let out_path = dir.path().join(name);
            let out = orbitfield(
                ranks,
                &adk_esp(
                    &dcd,
                    &[
                        "--frames",
                        "0:98:7",
                        "--combine",
                        combine,
                        "--spacing",
                        "4",
                        "--padding",
                        "4",
                        "-o",
                        out_path.to_str().unwrap(),
                    ],
                ),
            );
            ok(&out, &format!("grid esp --combine {combine} on {ranks} rank(s)"));
            read_dx(&out_path)
        };
        let reference = run(0, &format!("{combine}_single.dx"));
        for ranks in RANKS {
            let got = run(ranks, &format!("{combine}_{ranks}.dx"));
            assert_maps_close(&reference, &got, &format!("{combine} on {ranks} ranks"));
        }
    }
}

#[test]
fn rdf_counts_over_ranks_equal_one_process() {
    if mpirun().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (md("adk.psf"), md("adk_dims.dcd"), "0:98:5", "name CA", "name CA", "20"),
        (
            md("adk_oplsaa.gro"),
            md("adk_oplsaa.xtc"),
            "all",
            "name OW",
            "name OW",
            "8",
        ),
    ];
    for (top, traj, frames, sel1, sel2, rmax) in &cases {
        let run = |ranks: usize| -> String {
            let out_path = dir.path().join(format!("rdf_{ranks}.txt"));
            let out = orbitfield(
                ranks,
                &[
                    "rdf",
                    top.to_str().unwrap(),
                    traj.to_str().unwrap(),
                    "--frames",
                    frames,
                    "--sel1",
                    sel1,
                    "--sel2",
                    sel2,
                    "--rmax",
                    rmax,
                    "--bins",
                    "80",
                    "--device",
                    "cpu",
                    "-o",
                    out_path.to_str().unwrap(),
                ],
            );
            ok(&out, &format!("rdf on {ranks} rank(s)"));
            std::fs::read_to_string(&out_path).unwrap()
        };
        let reference = run(0);
        let counted: f64 = reference
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| l.split_whitespace().nth(2)?.parse::<f64>().ok())
            .fold(0.0, f64::max);
        assert!(counted > 0.0, "{}: the RDF counts nothing", traj.display());
        for ranks in RANKS {
            // The text holds g(r) and the cumulative counts, from counts summed exactly.
            assert_eq!(run(ranks), reference, "{} on {ranks} ranks", traj.display());
        }
    }
}

/// File name -> bytes of every file in `dir`.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .map(|e| {
                    let e = e.unwrap();
                    (
                        e.file_name().to_string_lossy().into_owned(),
                        std::fs::read(e.path()).unwrap(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

#[test]
fn per_frame_cubes_over_ranks_equal_one_process() {
    if mpirun().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let dcd = md("adk_dims.dcd");
    let run = |ranks: usize| -> Vec<(String, Vec<u8>)> {
        let out_dir = dir.path().join(format!("cubes_{ranks}/"));
        let out = orbitfield(
            ranks,
            &adk_esp(
                &dcd,
                &["--frames", "10:17", "--spacing", "5", "-o", out_dir.to_str().unwrap()],
            ),
        );
        ok(&out, &format!("grid esp --frames -o DIR/ on {ranks} rank(s)"));
        files(&out_dir)
    };
    let reference = run(0);
    let names: Vec<&str> = reference.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        (10..17).map(|f| format!("frame_{f:05}.cube")).collect::<Vec<_>>(),
        "one cube per frame, nothing else"
    );
    for ranks in RANKS {
        assert!(
            run(ranks) == reference,
            "cubes on {ranks} ranks differ from one process's"
        );
    }
}

#[cfg(feature = "gui")]
#[test]
fn rendered_frames_over_ranks_equal_one_process() {
    if mpirun().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (psf, dcd) = (md("adk.psf"), md("adk_dims.dcd"));
    let run = |ranks: usize| -> Vec<(String, Vec<u8>)> {
        let out_dir = dir.path().join(format!("png_{ranks}"));
        let out = orbitfield(
            ranks,
            &[
                "render",
                psf.to_str().unwrap(),
                dcd.to_str().unwrap(),
                "--frames",
                "0:5",
                "--size",
                "96x64",
                "-o",
                out_dir.to_str().unwrap(),
            ],
        );
        ok(&out, &format!("render --frames on {ranks} rank(s)"));
        files(&out_dir)
            .into_iter()
            .map(|(n, png)| {
                let img = image::load_from_memory(&png).unwrap().to_rgba8();
                (n, img.into_raw())
            })
            .collect()
    };
    let reference = run(0);
    assert_eq!(reference.len(), 5);
    for ranks in RANKS {
        assert!(
            run(ranks) == reference,
            "images on {ranks} ranks differ from one process's"
        );
    }
}

/// A copy of adk_dims.dcd whose last frame cannot be read (its first coordinate record marker is
/// garbled), so the rank that owns the last frame fails while the others succeed.
fn dcd_with_bad_last_frame(dir: &Path) -> PathBuf {
    let mut bytes = std::fs::read(md("adk_dims.dcd")).unwrap();
    let atoms = 3341usize;
    let record = 4 * atoms + 8;
    let at = bytes.len() - 3 * record;
    assert_eq!(
        &bytes[at..at + 4],
        &((4 * atoms) as u32).to_le_bytes(),
        "marker of the last frame's x record"
    );
    bytes[at..at + 4].copy_from_slice(&7u32.to_le_bytes());
    let path = dir.join("adk_bad_last.dcd");
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn a_failing_rank_ends_the_run_with_one_message_and_no_output() {
    if mpirun().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let dcd = dcd_with_bad_last_frame(dir.path());
    let map = dir.path().join("avg.dx");
    let cubes = dir.path().join("cubes/");
    for ranks in [1, 3] {
        let combine = orbitfield(
            ranks,
            &adk_esp(
                &dcd,
                &[
                    "--frames",
                    "90:98",
                    "--combine",
                    "avg",
                    "--spacing",
                    "6",
                    "-o",
                    map.to_str().unwrap(),
                ],
            ),
        );
        let per_frame = orbitfield(
            ranks,
            &adk_esp(
                &dcd,
                &["--frames", "90:98", "--spacing", "6", "-o", cubes.to_str().unwrap()],
            ),
        );
        for (out, what) in [(&combine, "combine"), (&per_frame, "per-frame cubes")] {
            assert!(
                !out.status.success(),
                "{what} on {ranks} ranks succeeded on a garbled frame"
            );
            let stderr = String::from_utf8_lossy(&out.stderr);
            let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
            assert_eq!(
                errors.len(),
                1,
                "{what} on {ranks} ranks: one message expected, got:\n{stderr}"
            );
            assert!(
                errors[0].contains("97"),
                "{what}: the message names the frame: {}",
                errors[0]
            );
            if ranks > 1 {
                assert!(
                    errors[0].contains(&format!(" of {ranks}: ")),
                    "{what}: the message names the rank: {}",
                    errors[0]
                );
            }
        }
        assert!(!map.exists(), "no map after a failed run");
        assert!(
            files(&cubes).is_empty(),
            "no cube after a failed run: {:?}",
            files(&cubes).len()
        );
    }
}
