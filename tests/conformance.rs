//! Wavefunction conformance: every file of the corpus in `tests/data/conformance/files` (Molden,
//! fchk and `.mkl` files written by the quantum-chemistry programs themselves) is read by orbitfield
//! and evaluated by the exact point evaluator, and must reproduce the independent references of
//! `tests/data/conformance/refs` (iodata + gbasis reading the same file, PySCF reruns of the same
//! calculation; see `make_refs.py`) within 1e-5 (relative 2-norm), with the occupied orbitals
//! orthonormal under the analytic overlap to 1e-6. The conformance table of docs/formats.md is rendered
//! from the files that pass (set `UPDATE_DOCS=1` to rewrite it).
// Test helpers may unwrap: a failure is a test failure.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use orbitfield::compute::cpu::points::PointEvaluator;
use orbitfield::io::{self, molden};
use orbitfield::model::wavefunction::DensityMatrix;
use orbitfield::model::{SpinKind, Wavefunction};
use std::path::Path;

/// Largest relative 2-norm error accepted against a reference column.
const TOLERANCE: f64 = 1e-5;
/// Largest deviation of C^T S C from the identity (occupied orbitals) unless the manifest says the
/// file's printed precision is coarser.
const ORTHONORMALITY: f64 = 1e-6;

#[path = "common/conformance_corpus.rs"]
mod corpus;
#[path = "common/reference.rs"]
mod reference;
use corpus::{Entry, corpus, manifest, read};
use reference::{parse_reference, relative_error};

/// C n C^T of the wavefunction's occupied orbitals against the file's own SCF density matrix:
/// largest element difference relative to the largest element.
fn scf_density_deviation(wf: &Wavefunction, p: &DensityMatrix) -> f64 {
    let n = wf.basis.n_functions();
    let mut mine = vec![0.0; n * n];
    let sets: Vec<(&orbitfield::model::OrbitalSet, f64)> = match (wf.spin, &wf.beta) {
        (SpinKind::Unrestricted, Some(b)) => vec![(&wf.alpha, 1.0), (b, 1.0)],
        _ => vec![(&wf.alpha, 1.0)],
    };
    for (set, w) in sets {
        for (k, &occ) in set.occupations.iter().enumerate() {
            if occ == 0.0 {
                continue;
            }
            let c = set.orbital(k).unwrap();
            for i in 0..n {
                for j in 0..n {
                    mine[i * n + j] += w * occ * c[i] * c[j];
                }
            }
        }
    }
    let scale = p.values.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    mine.iter()
        .zip(&p.values)
        .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()))
        / scale
}

/// The outcome of checking one corpus file.
struct Outcome {
    row: Row,
    /// (what, value, limit) of every check, for the report.
    checks: Vec<(String, f64, f64)>,
}

/// One line of the conformance table.
struct Row {
    program: String,
    version: String,
    format: String,
    highest_shell: char,
    functions: &'static str,
    spin: &'static str,
    reference: &'static str,
    corrections: String,
}

fn shell_letter(l: u8) -> char {
    ['s', 'p', 'd', 'f', 'g', 'h', 'i', 'k']
        .get(usize::from(l))
        .copied()
        .unwrap_or('?')
}

fn check(e: &Entry) -> Result<Outcome, String> {
    let path = corpus().join("files").join(&e.file);
    let r = read(&path, &e.format)?;
    let wf = &r.wf;
    println!(
        "{}: program {:?}, corrections {:?}, notes {:?}",
        e.file, wf.program, wf.corrections, r.warnings
    );
    let mut checks = Vec::new();
    let limit = e.orthonormality.unwrap_or(ORTHONORMALITY);
    checks.push(("orthonormality".to_string(), molden::max_deviation(wf), limit));
    if let Some(p) = r.total_density.as_ref().filter(|_| wf.spin != SpinKind::RestrictedOpen) {
        checks.push((
            "C n C^T vs the file's SCF density".into(),
            scf_density_deviation(wf, p),
            1e-6,
        ));
    }
    let stem = e.file.trim_end_matches(".gz");
    let reference = parse_reference(&corpus().join("refs").join(format!("{stem}.ref.txt.gz")));
    let ev = PointEvaluator::new(wf);
    for (name, field, want) in &reference.columns {
        let got = ev
            .values(field, &reference.points_bohr)
            .map_err(|x| format!("{name}: {x}"))?;
        checks.push((
            name.clone(),
            relative_error(field, &got, want),
            e.tolerance.unwrap_or(TOLERANCE),
        ));
    }
    if r.warnings.iter().any(|w| w.contains("may be wrong")) {
        return Err(format!("the reader warns: {:?}", r.warnings));
    }
    let pure = wf.basis.shells.iter().any(|s| s.pure && s.l >= 2);
    let cart = wf.basis.shells.iter().any(|s| !s.pure && s.l >= 2);
    let spin = match wf.spin {
        SpinKind::Restricted => "RHF",
        SpinKind::Unrestricted => "UHF",
        SpinKind::RestrictedOpen => "ROHF",
    };
    // The manifest's method names the spin treatment as HF would (RKS files are "RHF").
    if spin != e.method.as_str() {
        return Err(format!("read as {spin}, the file holds {}", e.method));
    }
    let spin = match wf.spin {
        SpinKind::Restricted => "restricted",
        SpinKind::Unrestricted => "unrestricted",
        SpinKind::RestrictedOpen => "restricted open-shell",
    };
    let reference_kind = match (e.iodata, e.rerun.is_some()) {
        (true, true) => "iodata+gbasis, PySCF rerun",
        (true, false) => "iodata+gbasis",
        (false, _) => "PySCF rerun",
    };
    Ok(Outcome {
        row: Row {
            program: e.program.clone(),
            version: e.version.clone(),
            format: e.format.clone(),
            highest_shell: shell_letter(wf.basis.max_l()),
            functions: match (pure, cart) {
                (true, true) => "mixed",
                (true, false) => "spherical",
                (false, true) => "Cartesian",
                (false, false) => "s, p only",
            },
            spin,
            reference: reference_kind,
            corrections: if wf.corrections.is_empty() {
                "none".into()
            } else {
                wf.corrections.join("; ")
            },
        },
        checks,
    })
}

const BEGIN: &str = "<!-- conformance table: generated by tests/conformance.rs, do not edit -->";
const END: &str = "<!-- end of conformance table -->";

fn render(rows: &[(String, Row)]) -> String {
    let mut s = String::new();
    s.push_str(
        "| program | version | format | highest shell | d and up | spin | reference | file | reader's correction |\n",
    );
    s.push_str("|---|---|---|---|---|---|---|---|---|\n");
    for (file, r) in rows {
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | `{}` | {} |\n",
            r.program,
            if r.version.is_empty() { "-" } else { &r.version },
            r.format,
            r.highest_shell,
            r.functions,
            r.spin,
            r.reference,
            file.trim_end_matches(".gz"),
            r.corrections
        ));
    }
    s
}

#[test]
fn corpus_reproduces_references_and_readme_table() {
    let m = manifest();
    let mut failures = Vec::new();
    let mut rows = Vec::new();
    for e in &m.files {
        match check(e) {
            Ok(o) => {
                let mut ok = true;
                for (what, v, lim) in &o.checks {
                    let bad = v.is_nan() || *v > *lim;
                    println!("{:48} {what:60} {v:.2e} {}", e.file, if bad { "FAIL" } else { "ok" });
                    if bad {
                        ok = false;
                        failures.push(format!("{}: {what} {v:.3e} > {lim:e}", e.file));
                    }
                }
                if ok {
                    rows.push((e.file.clone(), o.row));
                }
            }
            Err(x) => {
                println!("{:48} ERROR {x}", e.file);
                failures.push(format!("{}: {x}", e.file));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    let table = render(&rows);
    // The repository root: three levels above the corpus.
    let root = corpus().join("../../..");
    let readme_path = root.join("docs/formats.md");
    let readme = std::fs::read_to_string(&readme_path).unwrap();
    let (Some(b), Some(en)) = (readme.find(BEGIN), readme.find(END)) else {
        panic!("docs/formats.md lacks the conformance table markers");
    };
    let current = &readme[b + BEGIN.len()..en];
    let wanted = format!("\n{table}");
    if current != wanted {
        if std::env::var("UPDATE_DOCS").is_ok_and(|v| v == "1") {
            let new = format!("{}{BEGIN}{wanted}{}", &readme[..b], &readme[en..]);
            let tmp = readme_path.with_extension("md.tmp");
            std::fs::write(&tmp, new).unwrap();
            std::fs::rename(&tmp, &readme_path).unwrap();
        } else {
            panic!("docs/formats.md's conformance table is out of date; rerun with UPDATE_DOCS=1. Wanted:\n{table}");
        }
    }
}

/// The text of a corpus file.
fn corpus_text(name: &str) -> String {
    String::from_utf8(io::read_bytes(&corpus().join("files").join(name)).unwrap()).unwrap()
}

/// Values of an fchk real array: (index of its header line, values).
fn fchk_array(lines: &[String], name: &str) -> (usize, Vec<f64>) {
    let h = lines.iter().position(|l| l.starts_with(name)).unwrap();
    let n: usize = lines[h].split("N=").nth(1).unwrap().trim().parse().unwrap();
    let mut v = Vec::new();
    let mut k = h + 1;
    while v.len() < n {
        v.extend(lines[k].split_whitespace().map(|x| x.parse::<f64>().unwrap()));
        k += 1;
    }
    (h, v)
}

#[test]
fn permuted_cartesian_f_components_in_an_fchk_are_reported() {
    let name = "gaussian_o2_ccpvtz_cart_rhf.fchk.gz";
    let text = corpus_text(name);
    let p = Path::new(name);
    let clean = orbitfield::io::fchk::read_full(p, text.as_bytes()).unwrap();
    assert!(clean.warnings.is_empty(), "{:?}", clean.warnings);
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    // File offset of the first Cartesian f shell (shell type 3).
    let types_at = lines.iter().position(|l| l.starts_with("Shell types")).unwrap();
    let n_shells: usize = lines[types_at].split("N=").nth(1).unwrap().trim().parse().unwrap();
    let mut types = Vec::new();
    let mut k = types_at + 1;
    while types.len() < n_shells {
        types.extend(lines[k].split_whitespace().map(|x| x.parse::<i64>().unwrap()));
        k += 1;
    }
    let size = |t: i64| -> usize {
        match t {
            -1 => 4,
            t if t < -1 => 2 * t.unsigned_abs() as usize + 1,
            t => ((t + 1) * (t + 2) / 2) as usize,
        }
    };
    let first_f = types.iter().position(|&t| t == 3).unwrap();
    let offset: usize = types[..first_f].iter().map(|&t| size(t)).sum();
    let n_basis = clean.wavefunction.basis.n_functions();
    // Swap XYY and XXY (file components 3 and 4) in every alpha orbital.
    let (h, mut v) = fchk_array(&lines, "Alpha MO coefficients");
    for row in v.chunks_mut(n_basis) {
        row.swap(offset + 3, offset + 4);
    }
    let n_lines = v.len().div_ceil(5);
    let rewritten: Vec<String> = v
        .chunks(5)
        .map(|c| c.iter().map(|x| format!("{:>16}", format!("{x:.8E}"))).collect())
        .collect();
    let _ = lines.splice(h + 1..h + 1 + n_lines, rewritten);
    let altered = lines.join("\n") + "\n";
    let f = orbitfield::io::fchk::read_full(p, altered.as_bytes()).unwrap();
    assert!(
        f.warnings
            .iter()
            .any(|w| w.contains("Total SCF Density") && w.contains("may be wrong")),
        "a permutation inside a Cartesian f shell went unnoticed: {:?}",
        f.warnings
    );
}

/// A Molden file with the MO coefficients of basis functions `which` (1-based) multiplied by
/// `factor`.
fn scale_molden_functions(text: &str, which: &[usize], factor: f64) -> String {
    let mut in_mo = false;
    let mut out = String::new();
    for l in text.lines() {
        let t = l.trim();
        if t.starts_with('[') {
            in_mo = t.to_ascii_lowercase().starts_with("[mo]");
        }
        let w: Vec<&str> = t.split_whitespace().collect();
        if in_mo
            && w.len() == 2
            && let (Ok(i), Ok(c)) = (w[0].parse::<usize>(), w[1].parse::<f64>())
            && which.contains(&i)
        {
            out.push_str(&format!("{i} {:.12e}\n", c * factor));
            continue;
        }
        out.push_str(l);
        out.push('\n');
    }
    out
}

/// 1-based indices of the functions `k` of the first shell of angular momentum `l`.
fn first_shell_functions(wf: &Wavefunction, l: u8, k: &[usize]) -> Vec<usize> {
    let offsets = wf.basis.shell_offsets();
    let s = wf.basis.shells.iter().position(|s| s.l == l).unwrap();
    k.iter().map(|&k| offsets[s] + k + 1).collect()
}

#[test]
fn x_l_normalised_cartesian_d_is_corrected_and_matches_the_reference() {
    let name = "pyscf_water_631gs_cart_rhf.molden.gz";
    let text = corpus_text(name);
    let p = Path::new(name);
    let clean = molden::read(p, text.as_bytes()).unwrap();
    let wf0 = &clean.wavefunctions[0];
    // xy, xz, yz written as if normalised like xx: coefficients sqrt(3) times too large.
    let which = first_shell_functions(wf0, 2, &[3, 4, 5]);
    let altered = scale_molden_functions(&text, &which, 3f64.sqrt());
    let m = molden::read(p, altered.as_bytes()).unwrap();
    let wf = &m.wavefunctions[0];
    assert!(
        wf.corrections.iter().any(|c| c.contains("x^l")),
        "{:?} {:?}",
        wf.corrections,
        m.warnings
    );
    matches_reference(wf, "pyscf_water_631gs_cart_rhf.molden");
}

/// Every column of the corpus reference of `stem` within [`TOLERANCE`].
fn matches_reference(wf: &Wavefunction, stem: &str) {
    let r = parse_reference(&corpus().join(format!("refs/{stem}.ref.txt.gz")));
    let ev = PointEvaluator::new(wf);
    for (name, field, want) in &r.columns {
        let got = ev.values(field, &r.points_bohr).unwrap();
        let err = relative_error(field, &got, want);
        assert!(err < TOLERANCE, "{stem}: {name}: {err:.2e}");
    }
}

#[test]
fn a_wrongly_normalised_d_shell_is_reported() {
    let name = "pyscf_o2_ccpvtz_pure_f_uhf.molden.gz";
    let text = corpus_text(name);
    let p = Path::new(name);
    let clean = molden::read(p, text.as_bytes()).unwrap();
    assert!(clean.warnings.is_empty(), "{:?}", clean.warnings);
    let which = first_shell_functions(&clean.wavefunctions[0], 2, &[0, 1, 2, 3, 4]);
    let altered = scale_molden_functions(&text, &which, 1.07);
    let m = molden::read(p, altered.as_bytes()).unwrap();
    assert!(
        m.warnings.iter().any(|w| w.contains("may be wrong")),
        "a d shell 7 % off went unnoticed: {:?}",
        m.warnings
    );
}

#[test]
fn a_flipped_orca_sign_is_reported_and_orca_files_without_a_title_are_still_read_right() {
    let name = "orca_n4_ccpvtz_pure_f_rhf.molden.gz";
    let text = corpus_text(name);
    let p = Path::new(name);
    let clean = molden::read(p, text.as_bytes()).unwrap();
    let wf0 = &clean.wavefunctions[0];
    // One f(+3) function written with the standard sign instead of ORCA's.
    let which = first_shell_functions(wf0, 3, &[5]);
    let altered = scale_molden_functions(&text, &which, -1.0);
    let m = molden::read(p, altered.as_bytes()).unwrap();
    assert!(
        m.warnings.iter().any(|w| w.contains("may be wrong")),
        "a flipped ORCA sign went unnoticed: {:?}",
        m.warnings
    );
    // Without the title line that names ORCA, the trial finds ORCA's conventions.
    let title = text.lines().nth(2).unwrap();
    assert!(title.contains("orca_2mkl"));
    let anonymous = text.replacen(title, " anonymous", 1);
    let m = molden::read(p, anonymous.as_bytes()).unwrap();
    let wf = &m.wavefunctions[0];
    assert_eq!(wf.program, None);
    assert!(wf.corrections.iter().any(|c| c.contains("ORCA")), "{:?}", m.warnings);
    matches_reference(wf, "orca_n4_ccpvtz_pure_f_rhf.molden");
}

#[test]
fn fchk_without_number_of_atoms_and_closed_shells_per_spin() {
    // The Gaussian UHF file of the corpus has no "Number of atoms" record.
    let e = corpus_text("gaussian_ch3_sto3g_uhf.fchk.gz");
    assert!(!e.contains("Number of atoms"));
    let f = orbitfield::io::fchk::read_full(Path::new("ch3.fchk"), e.as_bytes()).unwrap();
    assert_eq!(f.wavefunction.atoms.len(), 4);
    // Q-Chem's restricted Molden files: alpha orbitals with occupation 1.
    let q = corpus_text("qchem_n4_svp_rhf.molden.gz");
    let m = molden::read(Path::new("q.molden"), q.as_bytes()).unwrap();
    let wf = &m.wavefunctions[0];
    assert_eq!(wf.spin, SpinKind::Restricted);
    assert!((wf.n_electrons() - 28.0).abs() < 1e-12, "{}", wf.n_electrons());
    assert!(m.warnings.iter().any(|w| w.contains("doubled")), "{:?}", m.warnings);
}
