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
        let o = orbitfield(&["bench", "--device", "gpu", "--repeats", "1", "--points", "16"], &[]);
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

/// The reference for `convert`'s outputs: what MDAnalysis 2.11 reads from each format
/// (`tests/data/md/mdanalysis_convert.json`, written by the script beside it).
fn convert_reference() -> serde_json::Value {
    let text = std::fs::read_to_string(data("md/mdanalysis_convert.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn num(v: &serde_json::Value) -> f64 {
    v.as_f64().unwrap()
}

/// Positions and boxes of `got` (frames read here) against `want` (MDAnalysis's numbers), within
/// `tol_x` Angstrom, `tol_l` Angstrom and `tol_a` degrees.
fn compare_frames(what: &str, got: &[orbitfield::model::Frame], want: &serde_json::Value, tol: (f64, f64, f64)) {
    let (tol_x, tol_l, tol_a) = tol;
    let pos = want["positions"].as_array().unwrap();
    assert_eq!(got.len(), pos.len(), "{what}: frames");
    for (fi, (fr, wp)) in got.iter().zip(pos).enumerate() {
        let wp = wp.as_array().unwrap();
        assert_eq!(fr.positions_angstrom.len(), wp.len(), "{what}: atoms");
        for (ai, (p, w)) in fr.positions_angstrom.iter().zip(wp).enumerate() {
            for d in 0..3 {
                let diff = (f64::from(p[d]) - num(&w[d])).abs();
                assert!(diff <= tol_x, "{what}: frame {fi} atom {ai}: {p:?} vs {w}");
            }
        }
        let wb = &want["box"][fi];
        match fr.cell {
            None => assert!(wb.is_null(), "{what}: frame {fi} has no box, MDAnalysis reads {wb}"),
            Some(c) => {
                assert!(!wb.is_null(), "{what}: frame {fi}: box {c:?}, MDAnalysis reads none");
                for d in 0..3 {
                    assert!(
                        (c.lengths_angstrom[d] - num(&wb[d])).abs() <= tol_l,
                        "{what} frame {fi}: {c:?} vs {wb}"
                    );
                    assert!(
                        (c.angles_degree[d] - num(&wb[d + 3])).abs() <= tol_a,
                        "{what} frame {fi}: {c:?} vs {wb}"
                    );
                }
            }
        }
    }
}

/// `convert` writes every output format so that MDAnalysis reads back the coordinates and box of
/// the source: the files written now read here as MDAnalysis read the same command's files, and
/// MDAnalysis's numbers agree with the source within each format's precision.
#[test]
fn convert_round_trips_through_mdanalysis() {
    let r = convert_reference();
    let dir = tempfile::tempdir().unwrap();
    let source = [data("md/tip125_tric_C36.psf"), data("md/tip125_tric_C36.dcd")];
    let convert = |out: &std::path::Path, frames: &str| {
        let o = orbitfield(
            &[
                "convert",
                "--sel",
                "name OH2",
                "--frames",
                frames,
                "-o",
                out.to_str().unwrap(),
            ],
            &source,
        );
        assert!(o.status.success(), "convert -o {}: {}", out.display(), stderr(&o));
    };
    let top = dir.path().join("top.pdb");
    convert(&top, "1:2");
    let source_frames = r["source"]["positions"].as_array().unwrap().len();
    for ext in ["pdb", "gro", "xyz", "dcd", "xtc", "trr", "nc"] {
        let out = dir.path().join(format!("out.{ext}"));
        convert(&out, if ext == "gro" { "1:2" } else { "1:10:4" });
        let files = if matches!(ext, "dcd" | "xtc" | "trr" | "nc") {
            vec![top.clone(), out]
        } else {
            vec![out]
        };
        let mut sys = orbitfield::io::load(&files).unwrap();
        let frames: Vec<_> = (0..sys.trajectory.n_frames())
            .map(|i| sys.trajectory.frame(i).unwrap())
            .collect();
        // The same bytes, decoded here and by MDAnalysis.
        compare_frames(
            &format!("{ext} read here vs MDAnalysis"),
            &frames,
            &r[ext],
            (1e-3, 1e-3, 1e-3),
        );
        // MDAnalysis's reading of the output against its reading of the source, at the format's
        // precision: PDB 0.001 A (box 0.01 degree), GRO and XTC 0.001 nm, the binary formats float.
        let (tol_x, tol_l, tol_a) = match ext {
            "pdb" => (6e-4, 6e-4, 6e-3),
            "gro" | "xtc" => (6e-3, 6e-4, 1e-2),
            _ => (1e-4, 1e-4, 1e-3),
        };
        let want: Vec<_> = (0..r[ext]["positions"].as_array().unwrap().len())
            .map(|fi| {
                assert!(fi < source_frames);
                let p = &r[ext]["positions"][fi];
                let b = &r[ext]["box"][fi];
                orbitfield::model::Frame {
                    positions_angstrom: p
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|a| [num(&a[0]) as f32, num(&a[1]) as f32, num(&a[2]) as f32])
                        .collect(),
                    cell: (!b.is_null()).then(|| {
                        orbitfield::model::UnitCell::new(
                            [num(&b[0]), num(&b[1]), num(&b[2])],
                            [num(&b[3]), num(&b[4]), num(&b[5])],
                        )
                    }),
                    time_ps: None,
                    step: None,
                }
            })
            .collect();
        let mut src = r["source"].clone();
        src["positions"] = serde_json::Value::Array(src["positions"].as_array().unwrap()[..want.len()].to_vec());
        src["box"] = if ext == "xyz" {
            serde_json::Value::Array(vec![serde_json::Value::Null; want.len()])
        } else {
            serde_json::Value::Array(src["box"].as_array().unwrap()[..want.len()].to_vec())
        };
        compare_frames(
            &format!("{ext}: MDAnalysis, output vs source"),
            &want,
            &src,
            (tol_x, tol_l, tol_a),
        );
    }
}

/// An output in a folder that does not exist is refused before any work, in one line naming it,
/// by every command that writes one (a long sampling or map run would otherwise lose its result).
#[test]
fn outputs_in_missing_folders_are_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("missing/map.dx");
    let out = out.to_str().unwrap();
    let adk = [data("md/adk.psf"), data("md/adk_dims.dcd")];
    for args in [
        vec!["grid", "ils", "--probe", "xe", "--frames", "0:2", "-o", out],
        vec!["grid", "esp", "--frames", "0:2", "-o", out],
        vec!["grid", "pb", "--frames", "0:1", "-o", out],
        vec!["rdf", "--sel1", "name CA", "--sel2", "name CA", "-o", out],
        vec!["convert", "-o", out],
    ] {
        let o = orbitfield(&args, &adk);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {e}");
        assert!(
            e.contains("cannot write") && e.contains("does not exist"),
            "{args:?}: {e}"
        );
        assert_eq!(e.lines().count(), 1, "{args:?}: one line, before any work: {e}");
    }
    assert!(!dir.path().join("missing").exists());
}

/// A box that shrinks over the frames (tip125's NPT run): the refusal of an r_max past half the box
/// names the narrowest frame of those asked for, and the r_max it gives is then accepted, so one
/// more try is enough (a larger one is refused again).
#[test]
fn rdf_rmax_refusal_gives_the_limit_over_every_frame() {
    let files = [data("md/tip125_tric_C36.psf"), data("md/tip125_tric_C36.dcd")];
    let rdf = |rmax: &str| {
        orbitfield(
            &["rdf", "--sel1", "name OH2", "--sel2", "name OH2", "--rmax", rmax],
            &files,
        )
    };
    let o = rdf("8");
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    let hint = e
        .split("give --rmax ")
        .nth(1)
        .unwrap_or_else(|| panic!("a limit over the frames: {e}"));
    let limit: f64 = hint.split_whitespace().next().unwrap().parse().unwrap();
    assert!(
        e.contains("over the 10 frames asked for the box is narrowest at frame"),
        "{e}"
    );
    assert!(
        rdf(&format!("{limit:.2}")).status.success(),
        "--rmax {limit} is accepted"
    );
    assert!(!rdf(&format!("{:.2}", limit + 0.02)).status.success());
}
