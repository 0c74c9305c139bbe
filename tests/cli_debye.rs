//! `grid esp --dielectric debye` screens at 298.15 K unless `--temperature` is given, as the
//! viewer's Debye-Hueckel model and `grid pb` do (kT/e itself stays at 300 K, VMD's unit): one +1 e
//! charge, the map at a point 6 A away against exp(-kappa r) / (eps r) with kappa from the
//! textbook formula (CODATA constants) at 298.15 K, then at 310 K when asked.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

/// The Debye-Hueckel potential of +1 e at `r_angstrom` in kT/e at 300 K, screened at `t_kelvin`
/// (1:1 salt `ionic_molar`, solvent `eps`).
fn debye_kt_per_e(r_angstrom: f64, t_kelvin: f64, ionic_molar: f64, eps: f64) -> f64 {
    let (e, kb, eps0, na) = (1.602_176_634e-19, 1.380_649e-23, 8.854_187_812_8e-12, 6.022_140_76e23);
    let kappa_per_m = (2.0 * na * 1000.0 * ionic_molar * e * e / (eps0 * eps * kb * t_kelvin)).sqrt();
    let r = r_angstrom * 1e-10;
    let volt = e / (4.0 * std::f64::consts::PI * eps0 * eps * r) * (-kappa_per_m * r).exp();
    volt * e / (kb * 300.0)
}

fn map_value(dir: &std::path::Path, extra: &[&str]) -> f64 {
    let pqr = dir.join("ion.pqr");
    std::fs::write(
        &pqr,
        "ATOM      1  NZ  LYS A   1       0.000   0.000   0.000  1.0000 1.8000\nEND\n",
    )
    .unwrap();
    let out = dir.join("map.dx");
    let o = Command::new(env!("CARGO_BIN_EXE_orbitfield"))
        .args(["grid", "esp"])
        .arg(&pqr)
        .args([
            "--dielectric",
            "debye",
            "--origin",
            "6,0,0",
            "--dims",
            "1,1,1",
            "--spacing",
            "1",
            "-o",
        ])
        .arg(&out)
        .args(extra)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let bytes = std::fs::read(&out).unwrap();
    let grid = orbitfield::io::dx::read(&out, &bytes).unwrap();
    f64::from(grid.values[0])
}

#[test]
fn debye_hueckel_screens_at_the_viewers_temperature() {
    let dir = tempfile::tempdir().unwrap();
    let got = map_value(dir.path(), &[]);
    let want = debye_kt_per_e(6.0, 298.15, 0.15, 78.54);
    let at_300 = debye_kt_per_e(6.0, 300.0, 0.15, 78.54);
    println!("{got} kT/e; 298.15 K: {want}, 300 K: {at_300}");
    assert!((got - want).abs() < 1e-4 * want.abs(), "{got} vs {want}");
    assert!(
        (at_300 - want).abs() > 1e-3 * want.abs(),
        "the two temperatures differ enough to tell"
    );
    // --temperature sets both the screening and kT/e.
    let got = map_value(dir.path(), &["--temperature", "310"]);
    let want = debye_kt_per_e(6.0, 310.0, 0.15, 78.54) * 300.0 / 310.0;
    assert!((got - want).abs() < 1e-4 * want.abs(), "{got} vs {want}");
}
