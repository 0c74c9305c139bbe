use super::*;

const H2: &str = "[Molden Format]
[Title]
 test
[Atoms] Angs
H 1 1 0.0 0.0 0.0
H 2 1 0.0 0.0 0.74
[GTO]
1 0
 s 2 1.00
  1.0 0.6
  0.3 0.5

2 0
 s 2 1.00
  1.0 0.6
  0.3 0.5

[MO]
 Sym= A
 Ene= -0.5
 Spin= Alpha
 Occup= 2.0
 1 0.55
 2 0.55
 Sym= A
 Ene= 0.5
 Spin= Alpha
 Occup= 0.0
 1 1.2
 2 -1.2
";

#[test]
fn reads_small_file_and_normalises() {
    let m = read(Path::new("h2.molden"), H2.as_bytes()).unwrap();
    let wf = &m.wavefunctions[0];
    assert_eq!(wf.basis.n_functions(), 2);
    assert_eq!(wf.alpha.len(), 2);
    assert!((wf.atoms[1].position_bohr[2] - 0.74 / 0.529_177_210_92).abs() < 1e-9);
    assert!((wf.basis.shells[0].contraction_norm() - 1.0).abs() < 1e-12);
    assert_eq!(wf.spin, SpinKind::Restricted);
}

#[test]
fn writer_quirks_are_read_and_name_the_program() {
    let p = Path::new("q.molden");
    // CFOUR: a second [Molden Format] header between [Atoms] and [GTO].
    let cfour = H2
        .replace("[GTO]", "[Molden Format]\n[GTO]")
        .replace("[Atoms] Angs", "[ATOMS] Angs");
    let m = read(p, cfour.as_bytes()).unwrap();
    assert_eq!(m.wavefunctions.len(), 1);
    assert_eq!(m.wavefunctions[0].program.as_deref(), Some("CFOUR"));
    // NWChem: exponent scale factor 0.
    let nwchem = H2.replace(" s 2 1.00", " s 2 0");
    let m = read(p, nwchem.as_bytes()).unwrap();
    assert_eq!(m.wavefunctions[0].program.as_deref(), Some("NWChem"));
    assert!((m.wavefunctions[0].basis.shells[0].exponents[0] - 1.0).abs() < 1e-15);
    assert!(read(p, H2.replace(" s 2 1.00", " s 2 -1").as_bytes()).is_err());
    // Q-Chem: a closed shell written with occupations per spin is doubled.
    let qchem = H2.replace(" Sym= A", "Sym=X").replace("Occup= 2.0", "Occup= 1.0");
    let m = read(p, qchem.as_bytes()).unwrap();
    let wf = &m.wavefunctions[0];
    assert_eq!(wf.program.as_deref(), Some("Q-Chem"));
    assert_eq!(wf.alpha.occupations, vec![2.0, 0.0]);
    assert_eq!(wf.spin, SpinKind::Restricted);
    assert!(m.warnings.iter().any(|w| w.contains("doubled")), "{:?}", m.warnings);
    // A hydrogen atom's single electron is not a closed shell per spin.
    let h = "[Molden Format]\n[Atoms] AU\nH 1 1 0 0 0\n[GTO]\n1 0\n s 1 1.0\n 1.0 1.0\n\n[MO]\n Ene= -0.5\n Spin= Alpha\n Occup= 1.0\n 1 1.0\n";
    let m = read(p, h.as_bytes()).unwrap();
    assert_eq!(m.wavefunctions[0].alpha.occupations, vec![1.0]);
    assert_eq!(m.wavefunctions[0].spin, SpinKind::RestrictedOpen);
    // Negative occupations (Dalton ROHF) are read as empty, with a note.
    let neg = H2.replace("Occup= 0.0", "Occup= -0.9");
    let m = read(p, neg.as_bytes()).unwrap();
    assert_eq!(m.wavefunctions[0].alpha.occupations, vec![2.0, 0.0]);
    assert!(m.warnings.iter().any(|w| w.contains("negative")), "{:?}", m.warnings);
}

#[test]
fn rejects_bad_input_with_lines() {
    let p = Path::new("x.molden");
    let cut = &H2[..H2.len() - 10];
    let e = read(p, cut.as_bytes()).err().unwrap();
    assert!(e.to_string().contains("x.molden:"), "{e}");
    let sto = H2.replace("[GTO]", "[STO]");
    assert!(read(p, sto.as_bytes()).err().unwrap().to_string().contains("STO"));
    let nan = H2.replace("0.55", "NaN");
    assert!(read(p, nan.as_bytes()).is_err());
    let idx = H2.replace(" 2 -1.2", " 9 -1.2");
    assert!(read(p, idx.as_bytes()).err().unwrap().to_string().contains("exceeds"));
    assert!(read(p, b"").is_err());
    assert!(read(p, H2.replace("[MO]", "[XX]").as_bytes()).is_err());
}

#[test]
fn effective_core_charges_keep_the_element() {
    let p = Path::new("ecp.molden");
    let basis = "[GTO]\n1 0\n s 1 1.0\n 1.0 1.0\n\n2 0\n s 1 1.0\n 1.0 1.0\n\n3 0\n s 1 1.0\n 1.0 1.0\n\n[MO]\n Ene= -0.5\n Spin= Alpha\n Occup= 2.0\n 1 1.0\n";
    // PySCF and ORCA write the charge less the ECP core: Mo 42 - 28, Cl 17 - 10. "Ca" over 6 is no
    // ECP core (20 - 6 = 14): the number decides.
    let pyscf = format!("[Molden Format]\n[Atoms] AU\nMo 1 14 0 0 0\nCl 2 7 0 0 4.5\nCa 3 6 0 0 -3\n{basis}");
    let wf = &read(p, pyscf.as_bytes()).unwrap().wavefunctions[0];
    let got: Vec<(Element, f64)> = wf.atoms.iter().map(|a| (a.element, a.nuclear_charge)).collect();
    let want = [
        (Element::from_number(42).unwrap(), 14.0),
        (Element::from_number(17).unwrap(), 7.0),
        (Element::from_number(6).unwrap(), 6.0),
    ];
    assert_eq!(got, want);
    // Molden2AIM and Multiwfn give the full number in [Atoms] and the effective charge in [Pseudo].
    let pseudo =
        format!("[Molden Format]\n[Atoms] AU\nFe 1 26 0 0 0\nH 2 1 0 0 3\nH 3 1 0 0 -3\n[Pseudo]\nFe 1 16\n{basis}");
    let wf = &read(p, pseudo.as_bytes()).unwrap().wavefunctions[0];
    assert_eq!(wf.atoms[0].element, Element::from_number(26).unwrap());
    assert_eq!(wf.atoms[0].nuclear_charge, 16.0);
    assert_eq!(wf.atoms[1].nuclear_charge, 1.0);
    let bad = pseudo.replace("Fe 1 16", "Fe 9 16");
    let e = read(p, bad.as_bytes()).err().unwrap().to_string();
    assert!(e.contains("ecp.molden:") && e.contains("[Pseudo]"), "{e}");
}

#[test]
fn a_file_cut_between_orbitals_is_said_so() {
    let whole = read(Path::new("h2.molden"), H2.as_bytes()).unwrap();
    assert!(
        !whole.warnings.iter().any(|w| w.contains("cut short")),
        "{:?}",
        whole.warnings
    );
    // Cut before the second (virtual) orbital: the occupied one alone is listed.
    let cut = &H2[..H2.rfind(" Sym= A").unwrap()];
    let m = read(Path::new("h2.molden"), cut.as_bytes()).unwrap();
    assert_eq!(m.wavefunctions[0].alpha.len(), 1);
    let w = m.warnings.iter().find(|w| w.contains("cut short")).expect("a note");
    assert!(
        w.contains("1 orbitals for 2 basis functions") && w.contains("2 electrons, a charge of +0"),
        "{w}"
    );
}
