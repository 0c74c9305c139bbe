//! Wavefunction readers and the exact point evaluator against independent references: PySCF values
//! for every Molden file of the shared QM data (Cartesian and spherical, s..g, RHF and UHF), iodata +
//! gbasis values for a Gaussian 16 fchk, PySCF values for wfn/wfx files converted from PySCF, plus
//! per-program normalisation corrections, frame series through `io::load`, and damaged input.
// Test helpers may unwrap: a failure is a test failure.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use orbitfield::compute::Field;
use orbitfield::compute::cpu::points::PointEvaluator;
use orbitfield::io::{self, fchk, molden, wfn};
use orbitfield::model::basis::primitive_norm;
use orbitfield::model::overlap::overlap_matrix;
use orbitfield::model::{Spin, SpinKind, Wavefunction};
use std::path::{Path, PathBuf};

#[path = "common/reference.rs"]
mod reference;
use reference::{Reference, parse_reference, relative_error};

const TOLERANCE: f64 = 1e-6;

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/qm").join(rel)
}

fn text(path: &Path) -> String {
    String::from_utf8(io::read_bytes(path).unwrap()).unwrap()
}

/// Relative 2-norm error of every column (orbitals up to sign); returns the worst.
fn compare(label: &str, wf: &Wavefunction, ev: &PointEvaluator, r: &Reference) -> f64 {
    let mut worst: f64 = 0.0;
    for (name, field, want) in &r.columns {
        let got = ev.values(field, &r.points_bohr).unwrap();
        let err = relative_error(field, &got, want);
        println!("{label}: {name}: relative error {err:.2e}");
        assert!(
            err <= TOLERANCE,
            "{label}: column {name} relative error {err:.3e} > {TOLERANCE:e}"
        );
        worst = worst.max(err);
    }
    assert!(wf.basis.n_functions() > 0);
    worst
}

fn check_molden(name: &str, ref_name: &str) -> Wavefunction {
    let path = data(name);
    let m = molden::read(&path, &io::read_bytes(&path).unwrap()).unwrap();
    assert_eq!(m.wavefunctions.len(), 1);
    let wf = m.wavefunctions.into_iter().next().unwrap();
    assert!(
        wf.corrections.is_empty(),
        "{name}: unexpected corrections {:?}",
        wf.corrections
    );
    assert!(m.warnings.is_empty(), "{name}: unexpected warnings {:?}", m.warnings);
    assert_eq!(wf.program.as_deref(), Some("PySCF"));
    let r = parse_reference(&data(ref_name));
    compare(name, &wf, &PointEvaluator::new(&wf), &r);
    wf
}

#[test]
fn water_spherical_and_cartesian() {
    let s = check_molden("water_hf_631gs_sph.molden.gz", "water_hf_631gs_sph.ref.txt.gz");
    let c = check_molden("water_hf_631gs_cart.molden.gz", "water_hf_631gs_cart.ref.txt.gz");
    assert_eq!((s.basis.n_functions(), c.basis.n_functions()), (18, 19));
    assert_eq!(s.spin, SpinKind::Restricted);
    assert_eq!(s.homo(Spin::Alpha), Some(4));
}

#[test]
fn benzene_cartesian() {
    let wf = check_molden("benzene_hf_631gs_cart.molden.gz", "benzene_hf_631gs_cart.ref.txt.gz");
    assert_eq!(wf.basis.n_functions(), 102);
}

#[test]
fn threonine_spherical_and_cartesian() {
    let s = check_molden("threonine_hf_631gs_sph.molden.gz", "threonine_hf_631gs_sph.ref.txt.gz");
    let c = check_molden(
        "threonine_hf_631gs_cart.molden.gz",
        "threonine_hf_631gs_cart.ref.txt.gz",
    );
    assert_eq!((s.basis.n_functions(), c.basis.n_functions()), (130, 138));
}

#[test]
fn n2_up_to_g_spherical_and_cartesian() {
    let s = check_molden("n2_hf_ccpvqz_sph.molden.gz", "n2_hf_ccpvqz_sph.ref.txt.gz");
    let c = check_molden("n2_hf_ccpvqz_cart.molden.gz", "n2_hf_ccpvqz_cart.ref.txt.gz");
    assert_eq!((s.basis.n_functions(), c.basis.n_functions()), (110, 140));
    assert_eq!(s.basis.max_l(), 4);
}

#[test]
fn o2_unrestricted_with_spin_density() {
    let wf = check_molden("o2_uhf_ccpvtz_sph.molden.gz", "o2_uhf_ccpvtz_sph.ref.txt.gz");
    assert_eq!(wf.spin, SpinKind::Unrestricted);
    assert_eq!(wf.basis.n_functions(), 60);
    assert_eq!(wf.homo(Spin::Alpha), Some(8));
    assert_eq!(wf.homo(Spin::Beta), Some(6));
    assert!((wf.n_electrons() - 16.0).abs() < 1e-9);
}

#[test]
fn ethylene_frames_match_references() {
    for i in ["000", "018", "036"] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("assets/demo/ethylene_twist_{i}.molden"));
        let m = molden::read(&path, &io::read_bytes(&path).unwrap()).unwrap();
        let wf = &m.wavefunctions[0];
        let r = parse_reference(&data(&format!("ethylene_twist/ethylene_twist_{i}.ref.txt.gz")));
        compare(&format!("ethylene {i}"), wf, &PointEvaluator::new(wf), &r);
    }
}

#[test]
fn gaussian_fchk_orbitals_and_density_matrix() {
    let path = data("fchk/Gaussian16_dvb_sp.fchk.gz");
    let f = fchk::read_full(&path, &io::read_bytes(&path).unwrap()).unwrap();
    let wf = &f.wavefunction;
    assert_eq!(wf.program.as_deref(), Some("Gaussian"));
    assert!(wf.corrections.is_empty(), "{:?}", wf.corrections);
    assert_eq!(wf.basis.n_functions(), 60);
    assert_eq!(wf.homo(Spin::Alpha), Some(34));
    assert!((wf.energy_hartree.unwrap() + 382.308_266_602_014_3).abs() < 1e-9);
    let r = parse_reference(&data("fchk/Gaussian16_dvb_sp.ref.txt.gz"));
    compare("dvb fchk", wf, &PointEvaluator::new(wf), &r);
    // The file's SCF density matrix and the occupied orbitals describe the same density.
    let dm = f.total_density.as_ref().expect("Total SCF Density");
    let from_dm = PointEvaluator::new(wf).with_density_matrices(Some(dm), None);
    let from_occ = PointEvaluator::new(wf);
    let a = from_dm.values(&Field::Density, &r.points_bohr).unwrap();
    let b = from_occ.values(&Field::Density, &r.points_bohr).unwrap();
    let num: f64 = a.iter().zip(&b).map(|(x, y)| (x - y).powi(2)).sum::<f64>().sqrt();
    let den: f64 = b.iter().map(|y| y * y).sum::<f64>().sqrt();
    assert!(num / den < 1e-7, "density matrix vs occupations: {}", num / den);
}

/// fchk files written from PySCF (make_fchk_reference.py): Cartesian d, f, g in Gaussian's orders,
/// pure d, f, UHF, density matrices. The Cartesian file normalises its functions as x^l, which is not
/// what Gaussian writes (its Cartesian functions are normalised individually, as the conformance
/// corpus's Gaussian files show): the reader must find that from the overlap, correct it and say so.
fn check_fchk(name: &str, ref_name: &str) -> fchk::FchkFile {
    let path = data(name);
    let f = fchk::read_full(&path, &io::read_bytes(&path).unwrap()).unwrap();
    let cartesian_high = f.wavefunction.basis.shells.iter().any(|s| !s.pure && s.l >= 2);
    if cartesian_high {
        assert_eq!(f.wavefunction.corrections.len(), 1, "{:?}", f.wavefunction.corrections);
        assert!(
            f.wavefunction.corrections[0].contains("x^l"),
            "{:?}",
            f.wavefunction.corrections
        );
        assert!(
            f.warnings.iter().all(|w| w.contains("applied correction")),
            "{:?}",
            f.warnings
        );
    } else {
        assert!(
            f.wavefunction.corrections.is_empty(),
            "{:?}",
            f.wavefunction.corrections
        );
        assert!(f.warnings.is_empty(), "{:?}", f.warnings);
    }
    let r = parse_reference(&data(ref_name));
    let wf = &f.wavefunction;
    compare(name, wf, &PointEvaluator::new(wf), &r);
    let ev = PointEvaluator::new(wf).with_density_matrices(f.total_density.as_ref(), f.spin_density.as_ref());
    compare(&format!("{name} (density matrices)"), wf, &ev, &r);
    f
}

#[test]
fn fchk_cartesian_up_to_g() {
    let f = check_fchk(
        "fchk/n2_rhf_ccpvqz_cart.fchk.gz",
        "fchk/n2_rhf_ccpvqz_cart_fchk.ref.txt.gz",
    );
    assert_eq!(f.wavefunction.basis.n_functions(), 140);
    assert_eq!(f.wavefunction.basis.max_l(), 4);
    assert!(f.wavefunction.basis.shells.iter().all(|s| !s.pure));
}

#[test]
fn fchk_unrestricted_pure() {
    let f = check_fchk(
        "fchk/nh2_uhf_ccpvtz_sph.fchk.gz",
        "fchk/nh2_uhf_ccpvtz_sph_fchk.ref.txt.gz",
    );
    let wf = &f.wavefunction;
    assert_eq!(wf.spin, SpinKind::Unrestricted);
    assert!(wf.basis.shells.iter().any(|s| s.pure && s.l == 3));
    assert!(f.spin_density.is_some());
    assert!((wf.n_electrons() - 9.0).abs() < 1e-12);
}

#[test]
fn wfn_from_pyscf() {
    let path = data("water_rhf_ccpvdz.wfn");
    let wf = wfn::read_wfn(&path, &io::read_bytes(&path).unwrap()).unwrap();
    assert_eq!(wf.program.as_deref(), Some("PySCF"));
    assert!(wf.corrections.is_empty());
    assert_eq!(wf.alpha.len(), 24);
    assert!((wf.n_electrons() - 10.0).abs() < 1e-9);
    assert!((wf.energy_hartree.unwrap() + 76.026_772_053_394).abs() < 1e-9);
    let r = parse_reference(&data("water_rhf_ccpvdz_wfn.ref.txt"));
    compare("water wfn", &wf, &PointEvaluator::new(&wf), &r);
}

#[test]
fn wfx_unrestricted_from_pyscf() {
    let path = data("ch2_uhf_631gs.wfx");
    let wf = wfn::read_wfx(&path, &io::read_bytes(&path).unwrap()).unwrap();
    assert_eq!(wf.spin, SpinKind::Unrestricted);
    assert_eq!(wf.homo(Spin::Alpha), Some(4));
    assert_eq!(wf.homo(Spin::Beta), Some(2));
    let r = parse_reference(&data("ch2_uhf_631gs_wfx.ref.txt"));
    compare("CH2 wfx", &wf, &PointEvaluator::new(&wf), &r);
}

/// Rewrites the MO coefficient lines of a Molden text: coefficient of basis function i (1-based)
/// multiplied by `factor(i)`.
fn scale_mo_lines(t: &str, factor: impl Fn(usize) -> f64) -> String {
    let mut out = String::new();
    let mut in_mo = false;
    for l in t.lines() {
        if l.trim_start().starts_with('[') {
            in_mo = l.trim().eq_ignore_ascii_case("[MO]");
        }
        let tok: Vec<&str> = l.split_whitespace().collect();
        if in_mo && tok.len() == 2 && !l.contains('=') {
            let i: usize = tok[0].parse().unwrap();
            let v: f64 = tok[1].parse().unwrap();
            out.push_str(&format!("{i} {:.17e}\n", v * factor(i)));
        } else {
            out.push_str(l);
            out.push('\n');
        }
    }
    out
}

#[test]
fn cartesian_functions_normalised_as_xl_are_corrected() {
    // Emulate a writer (Psi4 <= 1.3.2 style) whose Cartesian d functions are normalised as x^2:
    // its xy, xz, yz coefficients are sqrt(3) times ours. Water 6-31G* Cartesian: O d = functions 10..15.
    let t = text(&data("water_hf_631gs_cart.molden.gz"));
    let bent = scale_mo_lines(&t, |i| if (13..=15).contains(&i) { 3f64.sqrt() } else { 1.0 })
        .replace("made by pyscf", "made by a writer");
    let m = molden::read(Path::new("bent.molden"), bent.as_bytes()).unwrap();
    let wf = &m.wavefunctions[0];
    assert_eq!(wf.corrections.len(), 1, "{:?}", wf.corrections);
    assert!(wf.corrections[0].contains("x^l"), "{:?}", wf.corrections);
    assert!(m.warnings.iter().any(|w| w.contains("applied correction")));
    let r = parse_reference(&data("water_hf_631gs_cart.ref.txt.gz"));
    compare("water cart (x^l normalised)", wf, &PointEvaluator::new(wf), &r);
}

#[test]
fn orca_signs_are_corrected() {
    // Flip f(+-3) and g(+-3, +-4) as ORCA writes them; mark the file as ORCA's.
    let t = text(&data("n2_hf_ccpvqz_sph.molden.gz"));
    let orig = molden::read(Path::new("n2.molden"), t.as_bytes())
        .unwrap()
        .wavefunctions
        .remove(0);
    let mut flip = vec![false; orig.basis.n_functions() + 1];
    for (s, off) in orig.basis.shells.iter().zip(orig.basis.shell_offsets()) {
        let ks: &[usize] = match s.l {
            3 => &[5, 6],
            4 => &[5, 6, 7, 8],
            _ => &[],
        };
        for k in ks {
            flip[off + k + 1] = true;
        }
    }
    let bent = scale_mo_lines(&t, |i| if flip[i] { -1.0 } else { 1.0 })
        .replace("made by pyscf v[2.14.0]", "[Title]\n Molden file created by orca_2mkl");
    let m = molden::read(Path::new("orca.molden"), bent.as_bytes()).unwrap();
    let wf = &m.wavefunctions[0];
    assert_eq!(wf.program.as_deref(), Some("ORCA"));
    assert!(
        wf.corrections.iter().any(|c| c.contains("ORCA")),
        "{:?}",
        wf.corrections
    );
    let r = parse_reference(&data("n2_hf_ccpvqz_sph.ref.txt.gz"));
    compare("n2 (ORCA signs)", wf, &PointEvaluator::new(wf), &r);
}

#[test]
fn unnormalised_primitives_are_corrected() {
    // Rewrite the [GTO] contraction coefficients as coefficients of unnormalised primitives.
    let t = text(&data("water_hf_631gs_sph.molden.gz"));
    let mut out = String::new();
    let mut in_gto = false;
    let mut l = 0u8;
    for line in t.lines() {
        if line.trim_start().starts_with('[') {
            in_gto = line.trim().eq_ignore_ascii_case("[GTO]");
        }
        let tok: Vec<&str> = line.split_whitespace().collect();
        if in_gto && tok.len() == 3 && tok[0].chars().all(|c| c.is_ascii_alphabetic()) {
            l = "spdfg".find(tok[0]).unwrap() as u8;
        } else if in_gto && tok.len() == 2 && tok[0].contains('.') {
            let a: f64 = tok[0].parse().unwrap();
            let c: f64 = tok[1].parse().unwrap();
            out.push_str(&format!("{a} {:.17e}\n", c * primitive_norm(l, a)));
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    let m = molden::read(Path::new("raw.molden"), out.as_bytes()).unwrap();
    let wf = &m.wavefunctions[0];
    assert!(
        wf.corrections.iter().any(|c| c.contains("unnormalised primitives")),
        "{:?}",
        wf.corrections
    );
    let r = parse_reference(&data("water_hf_631gs_sph.ref.txt.gz"));
    compare("water sph (raw primitives)", wf, &PointEvaluator::new(wf), &r);
}

#[test]
fn hopeless_orbitals_load_with_a_warning() {
    let t = text(&data("water_hf_631gs_sph.molden.gz"));
    let bent = scale_mo_lines(&t, |i| if i == 2 { 1.7 } else { 1.0 });
    let m = molden::read(Path::new("bad.molden"), bent.as_bytes()).unwrap();
    assert!(m.wavefunctions[0].corrections.is_empty());
    assert!(
        m.warnings.iter().any(|w| w.contains("not orthonormal")),
        "{:?}",
        m.warnings
    );
}

#[test]
fn overlap_of_pyscf_basis_gives_orthonormal_orbitals() {
    // Independent of the evaluator: C^T S C = 1 for all orbitals (occupied and virtual) of a file.
    let path = data("n2_hf_ccpvqz_cart.molden.gz");
    let wf = molden::read(&path, &io::read_bytes(&path).unwrap())
        .unwrap()
        .wavefunctions
        .remove(0);
    let s = overlap_matrix(&wf.basis);
    let all: Vec<usize> = (0..wf.alpha.len()).collect();
    let d = orbitfield::model::overlap::orthonormality_deviation(&wf.alpha, &s, &all).unwrap();
    assert!(d < 1e-6, "max deviation {d}");
}

#[test]
fn ethylene_series_loads_as_frames() {
    let paths: Vec<PathBuf> = (0..37)
        .map(|i| Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("assets/demo/ethylene_twist_{i:03}.molden")))
        .collect();
    let mut sys = io::load(&paths).unwrap();
    assert_eq!(sys.wavefunctions.len(), 37);
    assert_eq!(sys.trajectory.n_frames(), 37);
    assert_eq!(sys.structure.len(), 6);
    // The torsion changes the geometry between frames.
    let a = sys.trajectory.frame(0).unwrap().positions_angstrom.clone();
    let b = sys.trajectory.frame(36).unwrap().positions_angstrom.clone();
    assert_ne!(a, b);
}

#[test]
fn threonine_md_series_loads_as_frames() {
    let mut paths: Vec<PathBuf> = (0..6)
        .map(|i| data(&format!("threonine_md/threonine_md_{i:03}.molden.gz")))
        .collect();
    let shared = Path::new("/work/shared/data/qm/threonine_md");
    if shared.is_dir() {
        paths = (0..30)
            .map(|i| shared.join(format!("threonine_md_{i:03}.molden")))
            .collect();
    } else {
        println!("full 30-frame series not present; loading the 6 frames in tests/data");
    }
    let n = paths.len();
    let sys = io::load(&paths).unwrap();
    assert_eq!(sys.wavefunctions.len(), n);
    assert_eq!(sys.trajectory.n_frames(), n);
    assert_eq!(sys.structure.len(), 17);
    assert!(
        sys.wavefunctions
            .iter()
            .all(|w| w.basis.n_functions() == 130 && w.corrections.is_empty())
    );
}

/// Every prefix (at a stride) and a few garbled copies must give an error or a value, never a panic;
/// errors name the file.
type Reader = dyn Fn(&Path, &[u8]) -> Result<(), io::ReadError>;

fn no_panic_on_damage(name: &str, read: &Reader) {
    let p = data(name);
    let bytes = io::read_bytes(&p).unwrap();
    let fake = Path::new("damaged.file");
    let stride = (bytes.len() / 61).max(1);
    let mut errors = 0;
    for cut in (0..bytes.len()).step_by(stride) {
        if let Err(e) = read(fake, &bytes[..cut]) {
            assert!(e.to_string().starts_with("damaged.file"), "{e}");
            errors += 1;
        }
    }
    assert!(errors > 50, "{name}: only {errors} truncations were reported as errors");
    for (i, b) in [b'x', b'9', b'-', b'\n', b'.'].iter().enumerate() {
        let mut g = bytes.clone();
        for k in (i * 131..g.len()).step_by(977) {
            g[k] = *b;
        }
        let _ = read(fake, &g);
    }
}

#[test]
fn damaged_files_never_panic() {
    no_panic_on_damage("water_hf_631gs_cart.molden.gz", &|p, b| molden::read(p, b).map(|_| ()));
    no_panic_on_damage("o2_uhf_ccpvtz_sph.molden.gz", &|p, b| molden::read(p, b).map(|_| ()));
    no_panic_on_damage("fchk/Gaussian16_dvb_sp.fchk.gz", &|p, b| fchk::read(p, b).map(|_| ()));
    no_panic_on_damage("water_rhf_ccpvdz.wfn", &|p, b| wfn::read_wfn(p, b).map(|_| ()));
    no_panic_on_damage("ch2_uhf_631gs.wfx", &|p, b| wfn::read_wfx(p, b).map(|_| ()));
}

fn err_of(r: Result<molden::MoldenFile, io::ReadError>) -> String {
    match r {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn molden_errors_name_file_and_line() {
    let t = text(&data("water_hf_631gs_sph.molden.gz"));
    let p = Path::new("w.molden");
    // Missing sections.
    assert!(err_of(molden::read(p, t.replace("[GTO]", "[XYZ]").as_bytes())).contains("[GTO]"));
    assert!(err_of(molden::read(p, t.replace("[MO]", "[XYZ]").as_bytes())).contains("[MO]"));
    // NaN in a coefficient: line number of the offending line.
    let nan = t.replacen("0.99578951584866", "NaN", 1);
    let line = nan.lines().position(|l| l.contains("NaN")).unwrap() + 1;
    let e = err_of(molden::read(p, nan.as_bytes()));
    assert!(e.starts_with(&format!("w.molden:{line}:")), "{e}");
    // Inconsistent shell: declares more primitives than follow.
    let e = err_of(molden::read(
        p,
        t.replacen(" s    6 1.00", " s    60 1.00", 1).as_bytes(),
    ));
    assert!(e.contains("w.molden:") && e.contains("primitives"), "{e}");
    // MO / basis mismatch: a coefficient index beyond the basis.
    let bad = t.replacen("\n  18 ", "\n  99 ", 1);
    let e = err_of(molden::read(p, bad.as_bytes()));
    assert!(e.contains("w.molden:") && e.contains("99"), "{e}");
    // Atom index in [GTO] beyond [Atoms].
    let e = err_of(molden::read(p, t.replacen("\n3 0\n", "\n7 0\n", 1).as_bytes()));
    assert!(e.contains("out of range"), "{e}");
    // [STO] is rejected clearly.
    assert!(err_of(molden::read(p, t.replace("[GTO]", "[STO]").as_bytes())).contains("Slater"));
    // Truncated inside the orbitals.
    let cut = &t[..t.len() - 200];
    assert!(err_of(molden::read(p, cut.as_bytes())).contains("truncated"));
}

#[test]
fn fchk_errors_name_file_and_line() {
    let t = text(&data("fchk/Gaussian16_dvb_sp.fchk.gz"));
    let p = Path::new("d.fchk");
    let e = fchk::read(
        p,
        t.replace(
            "Alpha MO coefficients                      R   N=        3600",
            "Alpha MO coefficients                      R   N=        3599",
        )
        .as_bytes(),
    )
    .err()
    .unwrap()
    .to_string();
    assert!(e.starts_with("d.fchk:"), "{e}");
    let e = fchk::read(
        p,
        t.replace(
            "Number of basis functions                  I               60",
            "Number of basis functions                  I               61",
        )
        .as_bytes(),
    )
    .err()
    .unwrap()
    .to_string();
    assert!(e.contains("61"), "{e}");
    let e = fchk::read(p, t.replacen("Shell types", "Shell kinds", 1).as_bytes())
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("Shell types"), "{e}");
    let cut = &t[..t.len() / 2];
    assert!(
        fchk::read(p, cut.as_bytes())
            .err()
            .unwrap()
            .to_string()
            .starts_with("d.fchk")
    );
}

#[test]
fn molden_flag_spellings_and_units() {
    // The same spherical water file with each spelling of the flags and Angstrom coordinates.
    let t = text(&data("water_hf_631gs_sph.molden.gz"));
    let r = parse_reference(&data("water_hf_631gs_sph.ref.txt.gz"));
    for flags in ["[5D]", "[5D7F]\n[9G]", "[5D10F]", "[5d]\n[7f]"] {
        let v = t.replace("[5d]\n[7f]\n[9g]", flags);
        let m = molden::read(Path::new("f.molden"), v.as_bytes()).unwrap();
        let wf = &m.wavefunctions[0];
        assert!(wf.basis.shells.iter().filter(|s| s.l == 2).all(|s| s.pure), "{flags}");
        compare(flags, wf, &PointEvaluator::new(wf), &r);
    }
    // Angstrom [Atoms]: convert the bohr coordinates of the file.
    let mut out = String::new();
    let mut in_atoms = false;
    for l in t.lines() {
        if l.starts_with('[') {
            in_atoms = l.starts_with("[Atoms]");
            if in_atoms {
                out.push_str("[Atoms] Angs\n");
                continue;
            }
        }
        let tok: Vec<&str> = l.split_whitespace().collect();
        if in_atoms && tok.len() == 6 {
            let c: Vec<f64> = tok[3..]
                .iter()
                .map(|x| x.parse::<f64>().unwrap() * 0.529_177_210_92)
                .collect();
            out.push_str(&format!(
                "{} {} {} {:.15} {:.15} {:.15}\n",
                tok[0], tok[1], tok[2], c[0], c[1], c[2]
            ));
        } else {
            out.push_str(l);
            out.push('\n');
        }
    }
    let m = molden::read(Path::new("a.molden"), out.as_bytes()).unwrap();
    compare(
        "angstrom atoms",
        &m.wavefunctions[0],
        &PointEvaluator::new(&m.wavefunctions[0]),
        &r,
    );
}

#[test]
fn molden_multi_geometry() {
    // Two concatenated records give two wavefunctions; a [GEOMETRIES] block without orbitals gives frames.
    let t = text(&data("water_hf_631gs_sph.molden.gz"));
    let two = format!("{t}{t}");
    let m = molden::read(Path::new("two.molden"), two.as_bytes()).unwrap();
    assert_eq!(m.wavefunctions.len(), 2);
    let geo = "[GEOMETRIES] XYZ\n3\nstep 1\nO 0.0 0.0 0.1173\nH 0.0 0.7572 -0.4692\nH 0.0 -0.7572 -0.4692\n3\nstep 2\nO 0.0 0.0 0.12\nH 0.0 0.76 -0.47\nH 0.0 -0.76 -0.47\n";
    let m = molden::read(Path::new("geo.molden"), format!("{t}{geo}").as_bytes()).unwrap();
    assert_eq!(m.wavefunctions.len(), 1);
    assert_eq!(m.geometries_bohr.len(), 2);
    assert!((m.geometries_bohr[1][0][2] - 0.12 / 0.529_177_210_92).abs() < 1e-9);
}

#[test]
fn molden_atoms_without_unit_warns() {
    let t = text(&data("water_hf_631gs_sph.molden.gz"));
    let m = molden::read(Path::new("u.molden"), t.replace("[Atoms] (AU)", "[Atoms]").as_bytes()).unwrap();
    assert!(
        m.warnings.iter().any(|w| w.contains("Angstrom assumed")),
        "{:?}",
        m.warnings
    );
    let e = molden::read(
        Path::new("u.molden"),
        t.replace("[Atoms] (AU)", "[Atoms] furlongs").as_bytes(),
    );
    assert!(e.err().unwrap().to_string().starts_with("u.molden:3:"));
}

/// Gaussian's optimisation and scan summaries (fchk files without a basis set or orbitals) open as
/// their geometries: an optimisation's whole path, a scan's last geometry of each point, as
/// iodata's `load_many` reads them (`fchk/summary_reference.json`), with a warning that there are
/// no orbitals.
#[test]
fn fchk_optimisation_and_scan_summaries_open_as_frames() {
    let r: serde_json::Value = serde_json::from_str(&text(&data("fchk/summary_reference.json"))).unwrap();
    for (name, folder, scan) in [
        ("methanol_g16_opt", "fresh", false),
        ("methanol_g16_scan", "fchk", true),
    ] {
        let mut system = orbitfield::io::load(&[data(&format!("{folder}/{name}.fchk.gz"))]).unwrap();
        assert!(system.wavefunctions.is_empty());
        assert!(
            system
                .warnings
                .iter()
                .any(|w| w.contains("no basis set and no orbitals") && w.contains("job type")),
            "{:?}",
            system.warnings
        );
        let all = r[name].as_array().unwrap();
        // A scan: the last step of each point.
        let want: Vec<&serde_json::Value> = if scan {
            all.iter()
                .enumerate()
                .filter(|(i, f)| all.get(i + 1).is_none_or(|n| n["point"] != f["point"]))
                .map(|(_, f)| f)
                .collect()
        } else {
            all.iter().collect()
        };
        assert_eq!(system.trajectory.n_frames(), want.len(), "{name}");
        let z: Vec<u64> = want[0]["atnums"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect();
        let ours: Vec<u64> = system
            .structure
            .elements
            .iter()
            .map(|e| u64::from(e.number()))
            .collect();
        assert_eq!(ours, z);
        for (k, f) in want.iter().enumerate() {
            let frame = system.trajectory.frame(k).unwrap();
            for (a, xyz) in f["xyz_angstrom"].as_array().unwrap().iter().enumerate() {
                for c in 0..3 {
                    let w = xyz[c].as_f64().unwrap();
                    let g = f64::from(frame.positions_angstrom[a][c]);
                    assert!((g - w).abs() < 1e-5, "{name} frame {k} atom {a}: {g} vs {w}");
                }
            }
        }
    }
}
