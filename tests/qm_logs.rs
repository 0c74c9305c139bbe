//! QM program logs (Gaussian, GAMESS, ORCA): orbitals against independent reference values,
//! optimisation logs as frame series, and damaged or misdirected logs as clear errors.
#![allow(clippy::unwrap_used)] // helpers outside #[test] functions: missing data must fail loudly

use orbitfield::compute::Field;
use orbitfield::compute::cpu::points::PointEvaluator;
use orbitfield::io::qmlog::{self, Program, QmLog, gamess, gaussian, orca};
use orbitfield::model::overlap::{orthonormality_deviation, overlap_matrix};
use orbitfield::model::units::bohr_from_angstrom3;
use orbitfield::model::{Spin, SpinKind, Wavefunction};
use std::path::{Path, PathBuf};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/qm-logs")
        .join(name)
}

fn bytes(name: &str) -> Vec<u8> {
    std::fs::read(data(name)).unwrap()
}

fn load(name: &str) -> QmLog {
    qmlog::read(&data(name), &bytes(name)).unwrap()
}

struct Reference {
    points_angstrom: Vec<[f64; 3]>,
    /// (0-based orbital index, values)
    columns: Vec<(usize, Vec<f64>)>,
}

fn reference(name: &str) -> Reference {
    let text = std::fs::read_to_string(data(name)).unwrap();
    let header = text.lines().find(|l| l.starts_with("# columns")).unwrap();
    let indices: Vec<usize> = header
        .split("mo_index_1based=")
        .skip(1)
        .map(|s| s.split(')').next().unwrap().parse::<usize>().unwrap() - 1)
        .collect();
    let mut r = Reference {
        points_angstrom: Vec::new(),
        columns: indices.iter().map(|&i| (i, Vec::new())).collect(),
    };
    for l in text.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
        let v: Vec<f64> = l.split_whitespace().map(|t| t.parse().unwrap()).collect();
        r.points_angstrom.push([v[0], v[1], v[2]]);
        for (k, col) in r.columns.iter_mut().enumerate() {
            col.1.push(v[3 + k]);
        }
    }
    assert!(r.points_angstrom.len() > 1000);
    r
}

/// Relative norm of the difference over the points, up to the orbital's sign, with values from
/// the exact point evaluator.
fn compare(wf: &Wavefunction, r: &Reference) -> Vec<f64> {
    let points: Vec<[f64; 3]> = r.points_angstrom.iter().map(|&p| bohr_from_angstrom3(p)).collect();
    let evaluator = PointEvaluator::new(wf);
    r.columns
        .iter()
        .map(|(mo, reference)| {
            let field = Field::Orbital {
                spin: Spin::Alpha,
                index: *mo,
            };
            let ours = evaluator.values(&field, &points).unwrap();
            let dot: f64 = ours.iter().zip(reference).map(|(a, b)| a * b).sum();
            let sign = if dot < 0.0 { -1.0 } else { 1.0 };
            let diff: f64 = ours
                .iter()
                .zip(reference)
                .map(|(a, b)| (sign * a - b).powi(2))
                .sum::<f64>()
                .sqrt();
            let norm: f64 = reference.iter().map(|b| b * b).sum::<f64>().sqrt();
            diff / norm
        })
        .collect()
}

/// Largest deviation of C^T S C from the identity over all orbitals, with the analytic overlap
/// of the basis as read: a wrong normalisation or component order shows up here.
fn orthonormality(wf: &Wavefunction) -> f64 {
    let s = overlap_matrix(&wf.basis);
    let all: Vec<usize> = (0..wf.alpha.len()).collect();
    orthonormality_deviation(&wf.alpha, &s, &all).unwrap()
}

fn count(name: &str, needle: &str) -> usize {
    String::from_utf8_lossy(&bytes(name)).matches(needle).count()
}

#[test]
fn gaussian_single_point_orbitals_match_fchk_reference() {
    let log = load("Gaussian16_dvb_sp.out");
    assert_eq!(log.program, Program::Gaussian);
    assert_eq!(log.structure.len(), 20);
    assert_eq!(log.frames.len(), 1);
    assert_eq!((log.charge, log.multiplicity), (Some(0), Some(1)));
    assert_eq!(log.wavefunctions.len(), 1);
    let wf = &log.wavefunctions[0];
    assert_eq!(wf.spin, SpinKind::Restricted);
    assert_eq!(wf.basis.n_functions(), 60);
    assert_eq!(wf.alpha.len(), 60);
    assert!((wf.energy_hartree.unwrap() - -382.308266602).abs() < 1e-9);
    // HOMO / LUMO energies and occupations as printed.
    assert!((wf.alpha.energies_hartree[34] - -0.15308).abs() < 1e-9);
    assert!((wf.alpha.energies_hartree[35] - 0.03742).abs() < 1e-9);
    assert_eq!(wf.alpha.occupations[34], 2.0);
    assert_eq!(wf.alpha.occupations[35], 0.0);
    assert_eq!(wf.alpha.symmetries[0], "BU");
    // Standard orientation: atom 1 at (0.269445, 1.410118, 0) Angstrom.
    let p = log.frames[0].positions_angstrom[0];
    assert!(
        (p[0] - 0.269445).abs() < 1e-5 && (p[1] - 1.410118).abs() < 1e-5,
        "{p:?}"
    );
    let err = compare(wf, &reference("Gaussian16_dvb_sp.ref.txt"));
    eprintln!("Gaussian16_dvb_sp.ref.txt: HOMO, LUMO relative errors {err:?}");
    assert!(err.iter().all(|&e| e < 1e-4), "relative errors {err:?}");
    let dev = orthonormality(wf);
    eprintln!("Gaussian16_dvb_sp: orthonormality deviation {dev:.2e}");
    assert!(dev < 1e-3, "C^T S C deviates from 1 by {dev}");
}

#[test]
fn orca_single_point_orbitals_match_pyscf_reference() {
    let log = load("ORCA6.0_dvb_sp_hf.out");
    assert_eq!(log.program, Program::Orca);
    assert_eq!(log.frames.len(), 1);
    assert_eq!((log.charge, log.multiplicity), (Some(0), Some(1)));
    let wf = &log.wavefunctions[0];
    assert_eq!(wf.basis.n_functions(), 60);
    assert_eq!(wf.alpha.len(), 60);
    assert!((wf.energy_hartree.unwrap() - -379.768962914202).abs() < 1e-9);
    // The "ORBITAL ENERGIES" table's -0.222189 (the orbital block prints -0.22219).
    assert!((wf.alpha.energies_hartree[34] - -0.222189).abs() < 1e-9);
    assert_eq!(wf.alpha.occupations[34], 2.0);
    let err = compare(wf, &reference("ORCA6.0_dvb_sp_hf.ref.txt"));
    eprintln!("ORCA6.0_dvb_sp_hf.ref.txt: HOMO, LUMO relative errors {err:?}");
    assert!(err.iter().all(|&e| e < 1e-4), "relative errors {err:?}");
    let dev = orthonormality(wf);
    eprintln!("ORCA6.0_dvb_sp_hf: orthonormality deviation {dev:.2e}");
    assert!(dev < 1e-3, "C^T S C deviates from 1 by {dev}");
}

/// ORCA prints each orbital's symmetry in its "ORBITAL ENERGIES" table ("34 2.0000 -0.222189
/// -6.0461 3-Bg"): every printed row's species is the orbital's label (read here from the table by
/// splitting its lines), the unprinted virtual orbitals stay unlabelled, and the frontier
/// orbitals' species agree with Gaussian's for the same molecule (dvb, C2h; BG below the gap, AU
/// above it).
#[test]
fn orca_orbital_symmetries_and_energies_are_the_energy_table_s() {
    let wf = &load("ORCA6.0_dvb_sp_hf.out").wavefunctions[0];
    let text = String::from_utf8(bytes("ORCA6.0_dvb_sp_hf.out")).unwrap();
    let table = text.split("ORBITAL ENERGIES").nth(1).unwrap();
    let rows: Vec<(usize, f64, String)> = table
        .lines()
        .skip_while(|l| !l.contains("Irrep"))
        .skip(1)
        .map_while(|l| {
            let t: Vec<&str> = l.split_whitespace().collect();
            Some((
                t.first()?.parse().ok()?,
                t.get(2)?.parse().ok()?,
                t.get(4)?.split('-').nth(1)?.to_string(),
            ))
        })
        .collect();
    assert!(rows.len() > 40, "{} rows", rows.len());
    // The table's six decimals, not the orbital block's five ("0.19899" where the table has
    // 0.198995).
    for (k, energy, species) in &rows {
        assert_eq!(&wf.alpha.symmetries[*k], species, "orbital {}", k + 1);
        assert!(
            (wf.alpha.energies_hartree[*k] - energy).abs() < 1e-9,
            "orbital {}: {} against {energy}",
            k + 1,
            wf.alpha.energies_hartree[*k]
        );
    }
    assert!(wf.alpha.symmetries[rows.len()..].iter().all(String::is_empty));
    let gaussian = &load("Gaussian16_dvb_sp.out").wavefunctions[0];
    for (w, name) in [(wf, "ORCA"), (gaussian, "Gaussian")] {
        let homo = w.homo(orbitfield::model::Spin::Alpha).unwrap();
        let (h, l) = (&w.alpha.symmetries[homo], &w.alpha.symmetries[homo + 1]);
        assert_eq!(
            (h.to_uppercase().as_str(), l.to_uppercase().as_str()),
            ("BG", "AU"),
            "{name}"
        );
    }
}

#[test]
fn gamess_single_point_orbitals_match_pyscf_reference() {
    let log = load("GAMESS-US2018_dvb_sp.out");
    assert_eq!(log.program, Program::Gamess);
    assert_eq!(log.frames.len(), 1);
    assert_eq!((log.charge, log.multiplicity), (Some(0), Some(1)));
    let wf = &log.wavefunctions[0];
    assert_eq!(wf.basis.n_functions(), 60);
    assert_eq!(wf.alpha.len(), 60);
    assert!((wf.energy_hartree.unwrap() - -382.0506353326).abs() < 1e-9);
    assert_eq!(wf.alpha.occupations[34], 2.0);
    assert_eq!(wf.alpha.occupations[35], 0.0);
    // COORD=PRINAXIS frame: atom 1 at (2.6723873767, -0.4474975755, 0) bohr.
    assert!((wf.atoms[0].position_bohr[0] - 2.6723873767).abs() < 1e-9);
    let err = compare(wf, &reference("GAMESS-US2018_dvb_sp.ref.txt"));
    eprintln!("GAMESS-US2018_dvb_sp.ref.txt: HOMO, LUMO relative errors {err:?}");
    assert!(err.iter().all(|&e| e < 1e-3), "relative errors {err:?}");
    let dev = orthonormality(wf);
    eprintln!("GAMESS-US2018_dvb_sp: orthonormality deviation {dev:.2e}");
    assert!(dev < 1e-3, "C^T S C deviates from 1 by {dev}");
}

/// Firefly (PC GAMESS) prints a notice between the orbital heading and the first block (as in
/// MDAnalysisTests's `gms/c1opt.gms`): the orbitals read as without it.
#[test]
fn gamess_orbitals_after_a_program_notice_read_as_without_it() {
    let plain = bytes("GAMESS-US2018_dvb_sp.out");
    let noted = replace(
        &plain,
        "          EIGENVECTORS\n          ------------\n",
        "          EIGENVECTORS\n          ------------\n\n WARNING! YOU ARE USING OUTDATED VERSION OF THE PC GAMESS!\n PLEASE CHECK PC GAMESS HOMEPAGE FOR INFORMATION ON UPDATES!\n\n",
    );
    assert_ne!(plain, noted, "the notice was not inserted");
    let a = gamess::read(Path::new("plain.out"), &plain).unwrap();
    let b = gamess::read(Path::new("noted.out"), &noted).unwrap();
    let (wa, wb) = (&a.wavefunctions[0], &b.wavefunctions[0]);
    assert_eq!(wa.alpha.len(), wb.alpha.len());
    assert_eq!(wa.alpha.energies_hartree, wb.alpha.energies_hartree);
    assert_eq!(wa.alpha.coefficients, wb.alpha.coefficients);
    // A heading followed by text and no orbitals is still an error naming its line.
    let broken = replace(
        &plain,
        "          EIGENVECTORS\n          ------------\n",
        "          EIGENVECTORS\n          ------------\n a\n b\n c\n d\n e\n f\n g\n h\n i\n j\n",
    );
    let e = gamess::read(Path::new("broken.out"), &broken).unwrap_err();
    assert!(e.message.contains("expected orbital numbers"), "{e}");
}

/// Firefly and GAMESS logs from MDAnalysisTests (an optimisation that stops short, a
/// `RUNTYP=SURFACE` scan, a symmetric optimisation) opened as documents: every frame's positions
/// equal MDAnalysis 2.11's GMS reader's (`gms/reference.json`). The unconverged search's "next
/// predicted" geometry is not a frame, and a warning says the search did not converge.
#[test]
fn gamess_frames_match_mdanalysis() {
    let text = std::fs::read_to_string(data("gms/reference.json")).unwrap();
    let reference: serde_json::Value = serde_json::from_str(&text).unwrap();
    let files = reference["files"].as_object().unwrap();
    assert_eq!(files.len(), 3);
    for (name, r) in files {
        let mut system = orbitfield::io::load(&[data(&format!("gms/{name}"))]).unwrap();
        let frames = r["frames"].as_array().unwrap();
        assert_eq!(system.structure.len(), r["atoms"].as_u64().unwrap() as usize, "{name}");
        assert_eq!(system.trajectory.n_frames(), frames.len(), "{name}: frames");
        let mut worst = 0f64;
        for (i, f) in frames.iter().enumerate() {
            let ours = system.trajectory.frame(i).unwrap();
            for (p, q) in ours.positions_angstrom.iter().zip(f.as_array().unwrap()) {
                for k in 0..3 {
                    worst = worst.max((f64::from(p[k]) - q[k].as_f64().unwrap()).abs());
                }
            }
        }
        assert!(worst < 1e-4, "{name}: positions differ by {worst} A");
        let stopped = system.warnings.iter().any(|w| w.contains("did not converge"));
        assert_eq!(stopped, name.starts_with("c1opt"), "{name}: {:?}", system.warnings);
    }
}

#[test]
fn gamess_optimisation_is_a_frame_series() {
    let name = "GAMESS-US2018_dvb_gopt_a.out";
    let log = load(name);
    // One step per "BEGINNING GEOMETRY SEARCH POINT NSERCH= n" (n = 0..6); the equilibrium
    // geometry printed afterwards repeats the last one.
    let expected = count(name, "BEGINNING GEOMETRY SEARCH POINT");
    assert_eq!(expected, 7);
    assert_eq!(log.frames.len(), expected);
    // Energies as in the "NSERCH:   n  E=  value" summary lines.
    let text = String::from_utf8_lossy(&bytes(name)).into_owned();
    let summary: Vec<f64> = text
        .lines()
        .filter(|l| l.trim_start().starts_with("NSERCH:"))
        .map(|l| {
            l.split("E=")
                .nth(1)
                .unwrap()
                .split_whitespace()
                .next()
                .unwrap()
                .parse()
                .unwrap()
        })
        .collect();
    assert_eq!(summary.len(), expected);
    for (s, e) in log.steps.iter().zip(&summary) {
        assert!((s.scf_energy_hartree.unwrap() - e).abs() < 1e-9);
    }
    // Orbitals printed at the first point (EIGENVECTORS) and the last (MOLECULAR ORBITALS).
    assert_eq!(log.wavefunction_frames(), vec![0, 6]);
    // Last frame: the equilibrium geometry, atom 1 at (1.4168673288, -0.2341505881, 0) A.
    let p = log.frames[6].positions_angstrom[0];
    assert!(
        (p[0] - 1.416_867_3).abs() < 1e-5 && (p[1] + 0.234_150_6).abs() < 1e-5,
        "{p:?}"
    );
    assert!(log.warnings.is_empty(), "{:?}", log.warnings);
}

#[test]
fn orca_optimisation_is_a_frame_series_and_says_which_keyword_is_missing() {
    let name = "ORCA6.0_dvb_gopt.out";
    let log = load(name);
    // Three optimisation cycles plus the final evaluation at the stationary point, each with a
    // "CARTESIAN COORDINATES (ANGSTROEM)" table and a "FINAL SINGLE POINT ENERGY".
    assert_eq!(count(name, "GEOMETRY OPTIMIZATION CYCLE"), 3);
    assert_eq!(count(name, "CARTESIAN COORDINATES (ANGSTROEM)"), 4);
    assert_eq!(log.frames.len(), 4);
    let energies = [
        -382.055108617704,
        -382.055126570567,
        -382.055133025246,
        -382.055133399486,
    ];
    for (s, e) in log.steps.iter().zip(energies) {
        assert!((s.scf_energy_hartree.unwrap() - e).abs() < 1e-9);
    }
    let p = log.frames[3].positions_angstrom[0];
    assert!(
        (p[0] + 1.417709).abs() < 1e-5 && (p[1] - 0.228462).abs() < 1e-5,
        "{p:?}"
    );
    // Orbitals are printed but the basis set is not.
    assert!(log.wavefunctions.is_empty());
    assert!(
        log.warnings.iter().any(|w| w.contains("PrintBasis")),
        "{:?}",
        log.warnings
    );
}

#[test]
fn load_opens_logs_with_structure_and_frames() {
    let system = orbitfield::io::load(&[data("ORCA6.0_dvb_gopt.out")]).unwrap();
    assert_eq!(system.structure.len(), 20);
    assert_eq!(system.trajectory.n_frames(), 4);
    assert!(system.wavefunctions.is_empty());
    assert!(system.warnings.iter().any(|w| w.contains("PrintBasis")));
    let system = orbitfield::io::load(&[data("Gaussian16_dvb_sp.out")]).unwrap();
    assert_eq!(system.wavefunctions.len(), 1);
    assert_eq!(system.trajectory.n_frames(), 1);
}

fn replace(b: &[u8], from: &str, to: &str) -> Vec<u8> {
    String::from_utf8_lossy(b).replacen(from, to, 1).into_bytes()
}

#[test]
fn missing_sections_name_the_keyword_and_keep_the_structure() {
    let p = Path::new("edited.log");
    let g = replace(
        &bytes("Gaussian16_dvb_sp.out"),
        "AO basis set in the form of general basis input",
        "AO basis set omitted",
    );
    let log = gaussian::read(p, &g).unwrap();
    assert_eq!(log.frames.len(), 1);
    assert!(log.wavefunctions.is_empty());
    assert!(log.warnings.iter().any(|w| w.contains("gfinput")), "{:?}", log.warnings);
    assert!(log.steps[0].scf_energy_hartree.is_some());

    let g = replace(
        &bytes("Gaussian16_dvb_sp.out"),
        "Molecular Orbital Coefficients:",
        "(no orbitals here)",
    );
    let log = gaussian::read(p, &g).unwrap();
    assert!(log.wavefunctions.is_empty());
    assert!(
        log.warnings.iter().any(|w| w.contains("pop=full")),
        "{:?}",
        log.warnings
    );

    let m = replace(
        &bytes("GAMESS-US2018_dvb_sp.out"),
        "          EIGENVECTORS",
        "          (skipped)",
    );
    let log = gamess::read(p, &m).unwrap();
    assert_eq!(log.frames.len(), 1);
    assert!(log.wavefunctions.is_empty());
    assert!(log.warnings.iter().any(|w| w.contains("NPRINT")), "{:?}", log.warnings);

    let o = replace(
        &bytes("ORCA6.0_dvb_sp_hf.out"),
        "MOLECULAR ORBITALS (RHF, ROHF)",
        "(orbitals not printed)",
    );
    let log = orca::read(p, &o).unwrap();
    assert!(log.wavefunctions.is_empty());
    assert!(
        log.warnings.iter().any(|w| w.contains("PrintMOs")),
        "{:?}",
        log.warnings
    );
}

/// Cuts a file in the middle of its orbital coefficients.
fn cut_inside(name: &str, heading: &str) -> Vec<u8> {
    let b = bytes(name);
    let text = String::from_utf8_lossy(&b);
    let at = text.rfind(heading).unwrap() + 3000;
    b[..at].to_vec()
}

#[test]
fn truncated_orbital_blocks_are_clear_errors() {
    for (name, heading, read) in [
        (
            "Gaussian16_dvb_sp.out",
            "Molecular Orbital Coefficients",
            gaussian::read as fn(&Path, &[u8]) -> _,
        ),
        ("GAMESS-US2018_dvb_sp.out", "EIGENVECTORS", gamess::read),
        ("ORCA6.0_dvb_sp_hf.out", "MOLECULAR ORBITALS", orca::read),
    ] {
        let cut = cut_inside(name, heading);
        let err = read(Path::new(name), &cut).unwrap_err().to_string();
        assert!(err.contains("truncated") && err.contains(name), "{name}: {err}");
    }
}

#[test]
fn every_prefix_and_damaged_copy_reads_without_panic() {
    for name in [
        "Gaussian16_dvb_sp.out",
        "GAMESS-US2018_dvb_sp.out",
        "ORCA6.0_dvb_sp_hf.out",
        "ORCA6.0_dvb_gopt.out",
    ] {
        let b = bytes(name);
        let step = b.len() / 150;
        for cut in (0..b.len()).step_by(step) {
            let _ = qmlog::read(Path::new(name), &b[..cut]);
        }
        let mut damaged = b.clone();
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..400 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let i = (x % damaged.len() as u64) as usize;
            damaged[i] = b"0123456789-. \nDE*"[(x >> 32) as usize % 17];
        }
        let _ = qmlog::read(Path::new(name), &damaged);
    }
}

#[test]
fn wrong_program_and_failed_jobs_are_clear_errors() {
    let orca_bytes = bytes("ORCA6.0_dvb_sp_hf.out");
    let err = gaussian::read(Path::new("x.log"), &orca_bytes).unwrap_err().to_string();
    assert!(err.contains("ORCA") && err.contains("not a Gaussian"), "{err}");
    let err = gamess::read(Path::new("x.log"), &bytes("Gaussian16_dvb_sp.out"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("Gaussian"), "{err}");
    let err = qmlog::read(Path::new("x.log"), b"just some text\n")
        .unwrap_err()
        .to_string();
    assert!(err.contains("not a recognised QM log"), "{err}");

    // A Gaussian job that failed before printing any geometry.
    let g = bytes("Gaussian16_dvb_sp.out");
    let text = String::from_utf8_lossy(&g);
    let head = &text[..text.find("Input orientation:").unwrap()];
    let failed = format!("{head}\n Error termination via Lnk1e in /g16/l202.exe at Thu Apr  5 09:06:02 2018.\n");
    let err = gaussian::read(Path::new("failed.log"), failed.as_bytes())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("no geometry") && err.contains("Error termination"),
        "{err}"
    );

    // An ORCA job that failed in the SCF: the geometry loads, with a warning.
    let text = String::from_utf8_lossy(&orca_bytes);
    let head = &text[..text.find("ORBITAL ENERGIES").unwrap()];
    let failed = format!("{head}\nORCA finished by error termination in SCF\n");
    let log = orca::read(Path::new("failed.out"), failed.as_bytes()).unwrap();
    assert_eq!(log.frames.len(), 1);
    assert!(
        log.warnings.iter().any(|w| w.contains("error termination")),
        "{:?}",
        log.warnings
    );
}

/// Unrestricted layouts, made from the restricted logs by printing the same orbitals a second
/// time as the beta set in each program's layout.
#[test]
fn unrestricted_layouts_give_two_orbital_sets() {
    let p = Path::new("unrestricted");
    // Gaussian: "Alpha Molecular Orbital Coefficients:" then "Beta Molecular Orbital Coefficients:".
    let g = String::from_utf8(bytes("Gaussian16_dvb_sp.out")).unwrap();
    let a = g.find("     Molecular Orbital Coefficients:").unwrap();
    let b = g.find("     Density Matrix:").unwrap();
    let blocks = &g[a + "     Molecular Orbital Coefficients:\n".len()..b];
    let u = format!(
        "{}     Alpha Molecular Orbital Coefficients:\n{blocks}     Beta Molecular Orbital Coefficients:\n{blocks}{}",
        &g[..a],
        &g[b..]
    );
    let log = gaussian::read(p, u.as_bytes()).unwrap();
    let wf = &log.wavefunctions[0];
    assert_eq!(wf.spin, SpinKind::Unrestricted);
    let beta = wf.beta.as_ref().unwrap();
    assert_eq!(beta.coefficients, wf.alpha.coefficients);
    assert_eq!((wf.alpha.occupations[34], wf.alpha.occupations[35]), (1.0, 0.0));

    // ORCA: the beta blocks follow the alpha ones, numbering restarting at 0.
    let o = String::from_utf8(bytes("ORCA6.0_dvb_sp_hf.out")).unwrap();
    let a = o.find("MOLECULAR ORBITALS (RHF, ROHF)").unwrap()
        + "MOLECULAR ORBITALS (RHF, ROHF)\n------------------\n".len();
    let b = a + o[a..].find("\n\n").unwrap() + 1;
    let u = format!("{}{}{}", &o[..b], &o[a..b], &o[b..]);
    let log = orca::read(p, u.as_bytes()).unwrap();
    let wf = &log.wavefunctions[0];
    assert_eq!(wf.spin, SpinKind::Unrestricted);
    assert_eq!(wf.beta.as_ref().unwrap().coefficients, wf.alpha.coefficients);

    // GAMESS: "----- ALPHA SET -----" / "----- BETA SET -----" before each EIGENVECTORS section.
    let m = String::from_utf8(bytes("GAMESS-US2018_dvb_sp.out")).unwrap();
    let a = m.find("          ------------\n          EIGENVECTORS").unwrap();
    let b = m.find(" ...... END OF RHF CALCULATION").unwrap();
    let section = &m[a..b];
    let u = format!(
        "{} ----- ALPHA SET -----\n{section} ----- BETA SET -----\n{section}{}",
        &m[..a],
        &m[b..]
    );
    let log = gamess::read(p, u.as_bytes()).unwrap();
    let wf = &log.wavefunctions[0];
    assert_eq!(wf.spin, SpinKind::Unrestricted);
    assert_eq!(wf.beta.as_ref().unwrap().coefficients, wf.alpha.coefficients);
}

/// What the fuzz targets do, on a few inputs (the fuzz package is built separately).
#[test]
fn fuzz_target_bodies_return_errors_on_garbage() {
    let inputs: [&[u8]; 4] = [
        b"",
        b"\n\n\n",
        b"Standard orientation:\n ----\n",
        b"EIGENVECTORS\n ---\n 1 2\n",
    ];
    for data in inputs {
        for program in [Program::Gaussian, Program::Gamess, Program::Orca] {
            let mut framed = program.banner().to_vec();
            framed.extend_from_slice(data);
            assert!(gaussian::read(Path::new("f"), &framed).is_err());
            assert!(gamess::read(Path::new("f"), &framed).is_err());
            assert!(orca::read(Path::new("f"), &framed).is_err());
        }
    }
}

#[test]
fn points_on_a_log_without_basis_names_the_missing_keyword() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("no_basis.log");
    let g = replace(
        &bytes("Gaussian16_dvb_sp.out"),
        "AO basis set in the form of general basis input",
        "AO basis set omitted",
    );
    std::fs::write(&log, g).unwrap();
    let pts = dir.path().join("pts.txt");
    std::fs::write(&pts, "0 0 0\n").unwrap();
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_orbitfield"))
        .args(["points", "--field", "mo:homo", "--device", "cpu", "--points"])
        .arg(&pts)
        .arg(&log)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("gfinput") && !err.contains("none was given"), "{err}");
}

/// Gaussian 03 writes the orbital blocks' heading in capitals ("EIGENVALUES --") and an
/// occupation line (O, V) instead of symmetries: the orbitals read as cclib reads them, and they
/// are orthonormal under the basis the log prints.
#[test]
fn gaussian03_orbitals_with_capital_headings_are_cclib_s() {
    let name = "Gaussian03_BH3_cda.log";
    let log = load(name);
    let text = std::fs::read_to_string(data("Gaussian03_BH3_cda.cclib.json")).unwrap();
    let r: serde_json::Value = serde_json::from_str(&text).unwrap();
    let numbers: Vec<u64> = r["atomnos"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    let ours: Vec<u64> = log.structure.elements.iter().map(|e| u64::from(e.number())).collect();
    assert_eq!(ours, numbers);
    assert_eq!(log.wavefunctions.len(), 1, "{:?}", log.warnings);
    let wf = &log.wavefunctions[0];
    assert_eq!(wf.basis.n_functions() as u64, r["nbasis"].as_u64().unwrap());
    assert_eq!(wf.alpha.len() as u64, r["nmo"].as_u64().unwrap());
    let want: Vec<f64> = r["energies_hartree"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    for (i, (a, b)) in wf.alpha.energies_hartree.iter().zip(&want).enumerate() {
        assert!((a - b).abs() < 2e-6, "orbital {i}: {a} vs {b}");
    }
    let homo = r["homo"].as_u64().unwrap() as usize;
    assert!(wf.alpha.occupations[homo] > 1.5 && wf.alpha.occupations[homo + 1] < 0.5);
    let dev = orthonormality(wf);
    assert!(dev < 1e-3, "C^T S C deviates from 1 by {dev}");
    // Its 6D functions' coefficients refer to individually normalised functions, and the reader
    // says it read them so.
    assert!(
        wf.corrections.iter().any(|c| c.contains("individually normalised")),
        "{:?}",
        wf.corrections
    );
}

/// A log that prints only the orbitals near the gap (no `pop=full`) loads its geometry, with one
/// warning that says which orbitals were printed and which keyword prints them all.
#[test]
fn gaussian_orbitals_printed_in_part_leave_the_geometry_and_one_warning() {
    let text = String::from_utf8(bytes("Gaussian16_dvb_sp.out")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let heading = lines
        .iter()
        .position(|l| l.trim_start().starts_with("Molecular Orbital Coefficients"))
        .unwrap();
    // The first block (orbitals 1-5) removed: the printout starts at orbital 6.
    let second = heading
        + 2
        + lines[heading + 2..]
            .iter()
            .position(|l| l.split_whitespace().collect::<Vec<_>>() == ["6", "7", "8", "9", "10"])
            .unwrap();
    let kept: Vec<&str> = lines[..=heading].iter().chain(&lines[second..]).copied().collect();
    let log = gaussian::read(Path::new("part.log"), kept.join("\n").as_bytes()).unwrap();
    assert_eq!(log.frames.len(), 1);
    assert!(log.wavefunctions.is_empty());
    assert_eq!(log.warnings.len(), 1, "{:?}", log.warnings);
    assert!(
        log.warnings[0].contains("from number 6") && log.warnings[0].contains("pop=full"),
        "{:?}",
        log.warnings
    );
}

/// An optimisation log with orbitals at its first and last steps: every step is a frame, and each
/// wavefunction belongs to its own step's frame (none at the steps between), in the loaded system,
/// the viewer's document and the frame a document opens at.
#[test]
fn orbitals_printed_at_some_steps_belong_to_those_frames() {
    use orbitfield::app::document::Document;
    let system = orbitfield::io::load(&[data("GAMESS-US2018_dvb_gopt_a.out")]).unwrap();
    assert_eq!(system.trajectory.n_frames(), 7);
    assert_eq!(system.wavefunction_frames, [0, 6]);
    let doc = Document::from_system(1, "gopt".into(), system, 1.0, false).unwrap();
    assert_eq!(doc.frame_index, 0);
    assert!(std::sync::Arc::ptr_eq(
        doc.wavefunction_at(0).unwrap(),
        &doc.wavefunctions[0]
    ));
    assert!(std::sync::Arc::ptr_eq(
        doc.wavefunction_at(6).unwrap(),
        &doc.wavefunctions[1]
    ));
    assert!((1..6).all(|f| doc.wavefunction_at(f).is_none()));
    assert_eq!(doc.frames_with_orbitals_text().as_deref(), Some("frames 0 and 6"));
    // Orbitals at the last step only (as a Gaussian optimisation prints them): the document
    // opens there, with them.
    let mut system = orbitfield::io::load(&[data("GAMESS-US2018_dvb_gopt_a.out")]).unwrap();
    system.wavefunctions.remove(0);
    system.wavefunction_frames = vec![6];
    let doc = Document::from_system(2, "gopt".into(), system, 1.0, false).unwrap();
    assert_eq!(doc.frame_index, 6);
    assert!(doc.wavefunction().is_some());
    // Opened with another file after it, the log's mapping no longer holds and is dropped.
    let system = orbitfield::io::load(&[
        data("GAMESS-US2018_dvb_gopt_a.out"),
        data("GAMESS-US2018_dvb_gopt_a.out"),
    ]);
    if let Ok(s) = system {
        assert!(s.wavefunction_frames.is_empty());
    }
}

/// Born-Oppenheimer dynamics (Gaussian 09 BOMD, cclib's dvb_bomd.out): the frames are the points
/// of the trajectory, not the 38 energy evaluations ("SCF Done"). The log says which are points:
/// its "Trajectory summary" table lists 35 rows (time, kinetic and potential energy), and its
/// "Summary information for step N" blocks (N = 2..36; steps 17 and 33 printed twice, redone with
/// a new Hessian, the later print holding) give each point's time, energies and coordinates
/// (bohr). The three other evaluations are the input geometry, the sampled start point and one
/// rescaling of it (the table's first row is the rescaled point, the "Step Number 2 - 2"
/// geometry); the rest are the predicted geometries, of which the summaries give the corrected
/// positions (within 5e-4 A). Checked here against the log's text: each frame's time and
/// potential energy are its table row's, its coordinates its summary block's.
#[test]
fn gaussian_bomd_steps_are_frames() {
    let path = data("Gaussian09_dvb_bomd.out.gz");
    let raw = orbitfield::io::read_bytes(&path).unwrap();
    let log = gaussian::read(&path, &raw).unwrap();
    let text = String::from_utf8_lossy(&raw);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(text.matches("SCF Done:").count(), 38);
    // The table: rows "time kinetic potential delta-E delta-A" after "Trajectory summary".
    let table = lines.iter().position(|l| l.trim() == "Trajectory summary").unwrap();
    let rows: Vec<(f64, f64)> = lines[table + 2..]
        .iter()
        .map_while(|l| {
            let v: Vec<f64> = l.split_whitespace().filter_map(|w| w.parse().ok()).collect();
            (v.len() == 5).then(|| (v[0], v[2]))
        })
        .collect();
    assert_eq!(rows.len(), 35);
    assert_eq!(log.frames.len(), rows.len());
    for (k, (f, (time_fs, potential))) in log.frames.iter().zip(&rows).enumerate() {
        let t = f.time_ps.unwrap() * 1000.0;
        assert!((t - time_fs).abs() < 1e-6, "frame {k}: {t} fs vs {time_fs}");
        let e = log.steps[k].scf_energy_hartree.unwrap();
        assert!((e - potential).abs() < 1e-7, "frame {k}: {e} vs {potential}");
    }
    // The summary blocks' coordinates, the last print of each step number.
    let mut blocks: Vec<(i64, Vec<[f64; 3]>)> = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let Some(n) = l.trim_start().strip_prefix("Summary information for step") else {
            continue;
        };
        let n: i64 = n.trim().parse().unwrap();
        let at = i + lines[i..]
            .iter()
            .position(|l| l.contains("Cartesian coordinates: (bohr)"))
            .unwrap();
        let block: Vec<[f64; 3]> = lines[at + 1..]
            .iter()
            .take_while(|l| l.trim_start().starts_with("I="))
            .map(|l| {
                let v: Vec<f64> = l
                    .split('=')
                    .skip(2)
                    .map(|f| {
                        f.split_whitespace()
                            .next()
                            .unwrap()
                            .replace('D', "E")
                            .parse::<f64>()
                            .unwrap()
                    })
                    .collect();
                [v[0], v[1], v[2]].map(|x| x * 0.529_177_210_903)
            })
            .collect();
        match blocks.iter_mut().find(|b| b.0 == n) {
            Some(b) => b.1 = block,
            None => blocks.push((n, block)),
        }
    }
    assert_eq!(blocks.len(), 35);
    for (k, (f, (n, b))) in log.frames.iter().zip(&blocks).enumerate() {
        assert_eq!(b.len(), 20);
        let worst = f
            .positions_angstrom
            .iter()
            .zip(b)
            .flat_map(|(p, q)| (0..3).map(move |c| (f64::from(p[c]) - q[c]).abs()))
            .fold(0.0, f64::max);
        assert!(worst < 1e-5, "frame {k} (step {n}) differs by {worst} A");
    }
}
