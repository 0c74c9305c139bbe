//! `orbitfield render --color-by esp` with a screened model and a colour range in the legend's
//! unit: two charged side chains (an aspartate's -1 e oxygen, a lysine's +1 e nitrogen, 8 A apart)
//! in a PQR file. `--color-range` is read in the unit the legend shows (kT/e by default, kcal/mol/e
//! at eps = 4r), `--dielectric 4r|debye` colours by ChimeraX's and the Debye-Hueckel models with
//! their default ranges, and the screening options are refused where nothing is coloured by the
//! charges' potential. Skipped, with the reason printed, where no wgpu adapter exists.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

fn pqr(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("pair.pqr");
    std::fs::write(
        &path,
        "ATOM      1  OD1 ASP A   1      -4.000   0.000   0.000 -1.0000 1.7000\n\
         ATOM      2  NZ  LYS A   2       4.000   0.000   0.000  1.0000 1.8000\nEND\n",
    )
    .expect("write the PQR");
    path
}

/// Runs `render` on the pair with `args`; `None` where no adapter exists.
fn render(dir: &std::path::Path, args: &[&str]) -> Option<(bool, String)> {
    let out = dir.join("pair.png");
    let o = Command::new(env!("CARGO_BIN_EXE_orbitfield"))
        .arg("render")
        .arg(pqr(dir))
        .args(["--surface", "molsurf", "--size", "96x72", "-o"])
        .arg(&out)
        .args(args)
        .env("NODEVICE_SELECT", "1")
        .output()
        .expect("run render");
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    if !o.status.success() && stderr.contains("adapter") {
        eprintln!("skipping: no wgpu adapter: {stderr}");
        return None;
    }
    Some((o.status.success(), stderr))
}

#[test]
fn color_range_is_read_in_the_legends_unit() {
    let dir = tempfile::tempdir().expect("temp dir");
    let Some((ok, stderr)) = render(dir.path(), &["--color-by", "esp", "--color-range=-3,3"]) else {
        return;
    };
    assert!(ok, "{stderr}");
    assert!(
        stderr.contains("vacuum) at its vertices from -3.00 to 3.00 kT/e"),
        "{stderr}"
    );
    let Some((ok, stderr)) = render(
        dir.path(),
        &[
            "--color-by",
            "esp",
            "--potential-unit",
            "kcal/mol/e",
            "--color-range=-7,7",
        ],
    ) else {
        return;
    };
    assert!(ok, "{stderr}");
    assert!(stderr.contains("from -7.00 to 7.00 kcal/mol/e"), "{stderr}");
}

#[test]
fn screened_models_colour_with_their_own_ranges() {
    let dir = tempfile::tempdir().expect("temp dir");
    let Some((ok, stderr)) = render(dir.path(), &["--color-by", "esp", "--dielectric", "4r"]) else {
        return;
    };
    assert!(ok, "{stderr}");
    assert!(stderr.contains("Coulomb sum of 2 charges, eps = 4r"), "{stderr}");
    assert!(stderr.contains("from -10.00 to 10.00 kcal/mol/e"), "{stderr}");
    let Some((ok, stderr)) = render(
        dir.path(),
        &["--color-by", "esp", "--dielectric", "debye", "--ionic-strength", "0.05"],
    ) else {
        return;
    };
    assert!(ok, "{stderr}");
    assert!(
        stderr.contains("Debye-Hueckel, 0.05 M, eps 78.54, 298.15 K"),
        "{stderr}"
    );
    assert!(stderr.contains("from -5.00 to 5.00 kT/e"), "{stderr}");
}

#[test]
fn screening_options_are_refused_where_nothing_takes_them() {
    let dir = tempfile::tempdir().expect("temp dir");
    let Some((ok, stderr)) = render(dir.path(), &["--dielectric", "4r"]) else {
        return;
    };
    assert!(!ok);
    assert!(stderr.contains("apply to --color-by esp"), "{stderr}");
    let Some((ok, stderr)) = render(dir.path(), &["--color-by", "esp", "--ionic-strength", "0.1"]) else {
        return;
    };
    assert!(!ok);
    assert!(
        stderr.contains("--ionic-strength applies to --dielectric debye"),
        "{stderr}"
    );
    assert!(!dir.path().join("pair.png").exists(), "nothing written");
}
