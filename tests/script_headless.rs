//! The command language without a window, and the commands a shell user types:
//!
//! - `orbitfield run SCRIPT.ofc --headless` writes what the script asks for (images, movies one
//!   after another) and reports a failing line as FILE:LINE:COLUMN;
//! - `measure rmsd ... fit`, `quit`, `help`, `rep list` as typed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use orbitfield::render::RenderContext;
use std::path::Path;

#[path = "common/journey.rs"]
mod journey;
use journey::{data, type_command, window};

#[path = "common/adk_state.rs"]
mod adk_state;
use adk_state::adk;

fn quoted(p: &Path) -> String {
    format!("\"{}\"", p.display())
}

/// Runs `orbitfield run --headless SCRIPT`, asserts that it succeeded, and returns what it printed.
fn run_headless_ok(script: &Path) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_orbitfield"))
        .args(["run", "--headless"])
        .arg(script)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn orbitfield_run_headless_writes_what_the_script_asks_and_reports_a_failing_line() {
    let dir = tempfile::tempdir().unwrap();
    // A movie where there is an offscreen renderer.
    let movie = RenderContext::headless(1).is_ok();
    let script_path = dir.path().join("coords.ofc");
    std::fs::write(
        &script_path,
        format!(
            "open {} {}\nframe 10\nsave coordinates first.pdb selection \"resid 1\" frames 0:2\nmeasure rmsd name CA reference 10\n{}",
            quoted(&data("md/adk.psf")),
            quoted(&data("md/adk_dims.dcd")),
            if movie { "save movie movie_frames frames 0:3 size 64x48\n" } else { "" }
        ),
    )
    .unwrap();
    let stdout = run_headless_ok(&script_path);
    assert!(stdout.contains("rmsd of 'name CA' to frame 10: 0.0000 A"), "{stdout}");
    let pdb = std::fs::read_to_string(dir.path().join("first.pdb")).unwrap();
    assert_eq!(pdb.matches("MODEL").count(), 2, "two frames");
    assert!(pdb.lines().filter(|l| l.starts_with("ATOM")).count() >= 2);
    // The movie as PNG frames, drawn offscreen (where there is a renderer).
    if movie {
        let mut pngs: Vec<String> = std::fs::read_dir(dir.path().join("movie_frames"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        pngs.sort();
        assert_eq!(pngs.len(), 3, "{pngs:?}");
        let img = image::open(dir.path().join("movie_frames").join(&pngs[0])).unwrap();
        assert_eq!((img.width(), img.height()), (64, 48));
    }

    let bad = dir.path().join("bad.ofc");
    std::fs::write(&bad, "open nowhere.pdb\n").unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_orbitfield"))
        .args(["run", "--headless"])
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.trim(),
        format!(
            "error: {}:1:6: no such file: {}",
            bad.display(),
            dir.path().join("nowhere.pdb").display()
        )
    );

    // A measurement's selection that picks no atoms is named at its own column.
    let empty = dir.path().join("empty.ofc");
    std::fs::write(
        &empty,
        format!("open {}\nmeasure rmsd resname FOO\n", quoted(&data("md/adk_open.pqr"))),
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_orbitfield"))
        .args(["run", "--headless"])
        .arg(&empty)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("empty.ofc:2:14: measure rmsd: 'resname FOO' picks no atoms"),
        "{stderr}"
    );
}

#[test]
fn headless_movies_one_after_another_of_a_cartoon_finish() {
    // Where there is no offscreen renderer there is no movie to make.
    if RenderContext::headless(1).is_err() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("movies.ofc");
    std::fs::write(
        &script,
        format!(
            "open {} {}\nrep delete all\nrep add cartoon protein\n\
             save movie first frames 0:3 size 64x48\nsave movie second.mp4 frames 0:3 size 64x48\n\
             save movie third frames 1:3 size 64x48\n",
            quoted(&data("md/adk.psf")),
            quoted(&data("md/adk_dims.dcd")),
        ),
    )
    .unwrap();
    // The second movie shows frames the first left in the caches; it waited for ever once. A hang
    // fails the test after two minutes instead of holding the run.
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_orbitfield"))
        .args(["run", "--headless"])
        .arg(&script)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > std::time::Duration::from_secs(120) {
            child.kill().ok();
            panic!("the movies did not finish in two minutes");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let out = child.wait_with_output().unwrap();
    assert!(status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("movie ") && stdout.matches("movie ").count() == 3,
        "{stdout}"
    );
    let mp4 = std::fs::read(dir.path().join("second.mp4")).unwrap();
    assert_eq!(&mp4[4..8], b"ftyp");
    assert_eq!(std::fs::read_dir(dir.path().join("third")).unwrap().count(), 2);

    // An image named for another format is refused, naming the line, and nothing is written.
    let jpg = dir.path().join("jpg.ofc");
    std::fs::write(
        &jpg,
        format!(
            "open {}\nsave image picture.jpg size 64x48\n",
            quoted(&data("md/adk_open.pqr"))
        ),
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_orbitfield"))
        .args(["run", "--headless"])
        .arg(&jpg)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("jpg.ofc:2:") && stderr.contains("images are written as PNG"),
        "{stderr}"
    );
    assert!(!dir.path().join("picture.jpg").exists());
}

#[test]
fn measure_rmsd_fit_superposes_the_selection_first() {
    // Two models of 30 atoms: the second is the first turned about a random axis, moved, and
    // jostled by known offsets (centred, so the motion that undoes the turn leaves them alone).
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(3, |d| d.as_nanos() as u64);
    let mut state = seed | 1;
    let mut rnd = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let n = 30;
    let first: Vec<[f64; 3]> = (0..n).map(|_| [0; 3].map(|_| 20.0 * rnd() - 10.0)).collect();
    let mut jostle: Vec<[f64; 3]> = (0..n).map(|_| [0; 3].map(|_| 0.6 * rnd() - 0.3)).collect();
    let mean: [f64; 3] = std::array::from_fn(|k| jostle.iter().map(|d| d[k]).sum::<f64>() / n as f64);
    for d in &mut jostle {
        for k in 0..3 {
            d[k] -= mean[k];
        }
    }
    // Rodrigues' rotation by angle a about unit axis u.
    let u = {
        let v = [0; 3].map(|_| rnd() - 0.5);
        let l = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        v.map(|x| x / l)
    };
    let a = 0.5 + 2.0 * rnd();
    let turn = |p: [f64; 3]| -> [f64; 3] {
        let (c, s) = (a.cos(), a.sin());
        let dot = u[0] * p[0] + u[1] * p[1] + u[2] * p[2];
        let cross = [
            u[1] * p[2] - u[2] * p[1],
            u[2] * p[0] - u[0] * p[2],
            u[0] * p[1] - u[1] * p[0],
        ];
        std::array::from_fn(|k| p[k] * c + cross[k] * s + u[k] * dot * (1.0 - c))
    };
    let shift = [5.0, -3.0, 7.5];
    let second: Vec<[f64; 3]> = first
        .iter()
        .zip(&jostle)
        .map(|(p, d)| {
            let q = turn(*p);
            std::array::from_fn(|k| q[k] + shift[k] + turn(*d)[k])
        })
        .collect();
    let rms = |a: &[[f64; 3]], b: &[[f64; 3]]| {
        (a.iter()
            .zip(b)
            .map(|(p, q)| (0..3).map(|k| (p[k] - q[k]).powi(2)).sum::<f64>())
            .sum::<f64>()
            / a.len() as f64)
            .sqrt()
    };
    let jostle_rms = (jostle.iter().map(|d| d.iter().map(|x| x * x).sum::<f64>()).sum::<f64>() / n as f64).sqrt();
    let as_they_stand = rms(&first, &second);
    let dir = tempfile::tempdir().unwrap();
    let mut pdb = String::new();
    for (m, model) in [&first, &second].iter().enumerate() {
        pdb += &format!("MODEL     {:>4}\n", m + 1);
        for (i, p) in model.iter().enumerate() {
            pdb += &format!(
                "ATOM  {:>5}  CA  ALA A{:>4}    {:8.3}{:8.3}{:8.3}  1.00  0.00           C\n",
                i + 1,
                i + 1,
                p[0],
                p[1],
                p[2]
            );
        }
        pdb += "ENDMDL\n";
    }
    pdb += "END\n";
    std::fs::write(dir.path().join("two.pdb"), pdb).unwrap();
    let script_path = dir.path().join("rmsd.ofc");
    std::fs::write(
        &script_path,
        "open two.pdb\nframe 1\nmeasure rmsd name CA reference 0\nmeasure rmsd name CA reference 0 fit\n",
    )
    .unwrap();
    let stdout = run_headless_ok(&script_path);
    let value = |prefix: &str| -> f64 {
        let line = stdout
            .lines()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("no '{prefix}' in {stdout}"));
        line.rsplit(": ")
            .next()
            .unwrap()
            .trim_end_matches(" A")
            .parse()
            .unwrap()
    };
    let plain = value("rmsd of 'name CA' to frame 0: ");
    let fitted = value("rmsd of 'name CA' to frame 0, superposed: ");
    // The PDB's three decimals move each coordinate by up to 5e-4 A.
    assert!(
        (plain - as_they_stand).abs() < 2e-3,
        "seed {seed}: {plain} A, want {as_they_stand}"
    );
    // The known motion leaves the jostle; the best one can only do better, and not by much.
    assert!(
        fitted <= jostle_rms + 2e-3 && fitted > 0.5 * jostle_rms,
        "seed {seed}: {fitted} A after superposing, jostled by {jostle_rms} A"
    );
    assert!(plain > 10.0 * fitted, "seed {seed}: {plain} A as they stand");
}

/// `quit` ends a headless script where it stands (the line after it, which would fail, never
/// runs), and a shell reads the commands' help as the command line prints it: `orbitfield help
/// commands` lists them, `orbitfield help rep` describes one, a misspelt one is named with the
/// nearest.
#[test]
fn quit_ends_a_headless_script_and_the_shell_reads_the_commands_help() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("stop.ofc");
    std::fs::write(
        &script,
        format!(
            "open {}\nmeasure rmsd name CA reference 0\nquit\nopen nowhere.pdb\n",
            quoted(&data("md/adk_open.pqr"))
        ),
    )
    .unwrap();
    let stdout = run_headless_ok(&script);
    assert!(stdout.contains("rmsd of 'name CA' to frame 0"), "{stdout}");

    let help = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_orbitfield"))
            .args(args)
            .output()
            .unwrap()
    };
    let list = help(&["help", "commands"]);
    let text = String::from_utf8_lossy(&list.stdout);
    assert!(list.status.success());
    for verb in orbitfield::script::verbs::VERBS {
        assert!(
            text.contains(&format!("  {:<8} ", verb.name)),
            "{} missing: {text}",
            verb.name
        );
    }
    let rep = help(&["help", "rep"]);
    let text = String::from_utf8_lossy(&rep.stdout);
    assert!(
        rep.status.success() && text.starts_with("rep: ") && text.contains("rep add"),
        "{text}"
    );
    let typo = help(&["help", "repp"]);
    assert_eq!(typo.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&typo.stderr).contains("did you mean 'rep'?"));
    // A subcommand's name keeps the subcommand's own help.
    let render = help(&["help", "render"]);
    assert!(String::from_utf8_lossy(&render.stdout).contains("Usage: orbitfield render"));
}

/// `rep list` names the representations by the numbers `rep hide N`, `color N` and `rep modify N`
/// take: one line each, in the list's order, with its colouring and whether it is hidden.
#[test]
fn rep_list_numbers_the_representations() {
    let mut harness = window(adk());
    harness.run();
    type_command(&mut harness, "rep add cartoon protein color ss");
    type_command(&mut harness, "rep hide 1");
    let (error, text) = journey::type_line(&mut harness, "rep list").expect("a list");
    assert!(!error, "{text}");
    let lines: Vec<&str> = text.lines().collect();
    let reps = &harness.state().reps().list;
    assert_eq!(lines.len(), reps.len(), "{text}");
    for (i, (line, rep)) in lines.iter().zip(reps).enumerate() {
        assert!(line.trim_start().starts_with(&format!("{}  ", i + 1)), "{line}");
        assert_eq!(line.contains("(hidden)"), !rep.visible, "{line}");
    }
    assert!(lines[0].contains("(hidden)"), "{text}");
    let last = lines.last().unwrap();
    assert!(
        last.contains("protein: Cartoon") && last.contains("coloured by secondary structure"),
        "{text}"
    );
}

#[test]
fn a_surface_coloured_by_esp_takes_the_wavefunction_s_own_potential_or_names_what_is_missing() {
    use orbitfield::app::fields::FieldChoice;
    use orbitfield::script::{self, RunMode};
    let dir = data("scripts");
    // A wavefunction without partial charges: its own potential colours the surface.
    let mut state = journey::opened(&[], false);
    script::run_in(
        &mut state,
        "open ../qm/water_hf_631gs_sph.molden.gz\nrep add surface all color esp",
        &dir,
        None,
        RunMode::Headless,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let coloured_by: Vec<_> = state
        .reps()
        .fields()
        .filter(|(_, f)| matches!(f.field, FieldChoice::MolSurf { .. }))
        .map(|(_, f)| f.coloring.map(|c| c.source))
        .collect();
    assert_eq!(coloured_by, [Some(FieldChoice::WavefunctionPotential)]);
    let surface = state.reps().list.last().unwrap();
    assert_eq!(
        state.rep_label(surface),
        "molecular surface (all), coloured by potential (wavefunction)"
    );

    // Neither charges nor a wavefunction: the line and the colouring's column, and what is missing.
    let text = "open ../files2/si_extxyz.xyz\nrep add surface all color esp";
    let e = script::run_text(text, &dir, RunMode::Headless).unwrap_err();
    assert_eq!(
        (e.line, e.column),
        (2, text.lines().nth(1).unwrap().find("color").unwrap() + 1)
    );
    assert!(e.message.contains("partial charges"), "{}", e.message);
}
