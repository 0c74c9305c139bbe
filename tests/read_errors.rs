//! Messages of damaged or mismatched input, checked against the files' own text: a broken AMBER
//! prmtop is named as one (its section and line), never guessed to be another format.
#![allow(clippy::unwrap_used)]

use orbitfield::io::{self, Location};
use std::path::{Path, PathBuf};

fn md(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/md").join(name)
}

/// 1-based line of the first line of `text` that starts with `prefix`.
fn line_of(text: &str, prefix: &str) -> usize {
    text.lines().position(|l| l.starts_with(prefix)).unwrap() + 1
}

/// A prmtop with %VERSION/%FLAG records is a prmtop whatever is wrong in it: a CHARGE section cut
/// short, a bad %FORMAT, a file cut mid-section are reported by the prmtop reader with the section
/// and the line, and no other format is suggested. The first line here carries "VERSION" at byte 8
/// (`%VERSIONVERSION_STAMP`), which once made the content look like a GROMACS TPR header.
#[test]
fn broken_prmtop_names_its_section_and_line() {
    let text = String::from_utf8(io::read_bytes(&md("amber/ache.prmtop.gz")).unwrap()).unwrap();
    let text = text.replacen("%VERSION  VERSION_STAMP", "%VERSIONVERSION_STAMP", 1);
    // Independent counts: POINTERS' first field (NATOM), the CHARGE section's lines.
    let lines: Vec<&str> = text.lines().collect();
    let pointers = line_of(&text, "%FLAG POINTERS");
    let n_atoms: usize = lines[pointers + 1][..8].trim().parse().unwrap();
    let charge_flag = line_of(&text, "%FLAG CHARGE");
    assert_eq!(lines[charge_flag], "%FORMAT(5E16.8)".to_string() + &" ".repeat(65));
    let charge_end = charge_flag
        + lines[charge_flag..]
            .iter()
            .position(|l| l.starts_with("%FLAG"))
            .unwrap();
    // Lines charge_flag+2 ..= charge_end (1-based) are the values, 5 to a line but the last.
    let data_lines = &lines[charge_flag + 1..charge_end];
    assert_eq!(data_lines.len(), n_atoms.div_ceil(5));
    let dir = tempfile::tempdir().unwrap();

    // CHARGE without its last 3 data lines.
    let dropped = 3;
    let kept: usize = data_lines[..data_lines.len() - dropped]
        .iter()
        .map(|l| l.trim_end().len() / 16)
        .sum();
    let mut short: Vec<&str> = lines.clone();
    short.drain(charge_end - dropped..charge_end);
    let path = dir.path().join("ache.prmtop");
    std::fs::write(&path, short.join("\n") + "\n").unwrap();
    let e = io::load(std::slice::from_ref(&path)).unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains(&format!(
            "section CHARGE (%FLAG at line {charge_flag}) has {kept} values, POINTERS says {n_atoms} atoms"
        )),
        "{msg}"
    );
    assert_eq!(e.location, Location::Line(charge_end - dropped), "{msg}");
    assert!(msg.contains("ache.prmtop") && !msg.contains("tpr"), "{msg}");

    // A %FORMAT that is no Fortran format, in a section that is read.
    let mut bad = lines.clone();
    bad[charge_flag] = "%FORMAT(5Q16.8)";
    let path = dir.path().join("ache.parm7");
    std::fs::write(&path, bad.join("\n") + "\n").unwrap();
    let e = io::load(std::slice::from_ref(&path)).unwrap_err();
    assert!(e.message.starts_with("section CHARGE: expected a %FORMAT like"), "{e}");
    assert_eq!(e.location, Location::Line(charge_flag + 1), "{e}");
    assert!(!e.to_string().contains("tpr"), "{e}");

    // Cut mid-section (in the middle of a line of AMBER_ATOM_TYPE), under a name that says nothing.
    let types = line_of(&text, "%FLAG AMBER_ATOM_TYPE");
    let cut_at: usize = lines[..types + 3].iter().map(|l| l.len() + 1).sum::<usize>() + 10;
    let path = dir.path().join("topology");
    std::fs::write(&path, &text[..cut_at]).unwrap();
    let e = io::load(std::slice::from_ref(&path)).unwrap_err();
    assert!(e.message.starts_with("section AMBER_ATOM_TYPE"), "{e}");
    assert!(e.message.contains(&format!("POINTERS says {n_atoms} atoms")), "{e}");
    assert_eq!(e.location, Location::Line(types + 4), "{e}");
    assert!(!e.to_string().contains("tpr"), "{e}");
}

/// `n` waters as XYZ atom lines, O H H each, water `w` written H O H when `swapped == Some(w)`.
fn water_lines(n: usize, swapped: Option<usize>) -> String {
    let mut out = String::new();
    for w in 0..n {
        let x = 3.1 * w as f64;
        let o = format!("O {x:.3} 0.000 0.000\n");
        let h1 = format!("H {:.3} 0.757 0.586\n", x);
        let h2 = format!("H {:.3} -0.757 0.586\n", x);
        if swapped == Some(w) {
            out += &(h1 + &o + &h2);
        } else {
            out += &(o + &h1 + &h2);
        }
    }
    out
}

/// Atoms of the same count in another order are named by the first atom that differs, never as
/// "375 atoms, expected 375": a later XYZ frame (a warning; the frames before it are read), a GRO
/// frame, a second XYZ file after the first (an error), a wavefunction of a series (an error).
/// Expected texts are hand-made: 125 waters, the second written H O H, so atom 4 (1-based) is H
/// where the first frame's atom 4 is O.
#[test]
fn same_count_other_order_names_the_atom() {
    let dir = tempfile::tempdir().unwrap();
    let water = dir.path().join("water.xyz");
    let text = format!(
        "375\nbox\n{}375\nbox, later\n{}",
        water_lines(125, None),
        water_lines(125, Some(1))
    );
    std::fs::write(&water, &text).unwrap();
    let system = io::load(std::slice::from_ref(&water)).unwrap();
    assert_eq!(system.trajectory.n_frames(), 1);
    let second_count_line = 2 + 375 + 1;
    let w = system.warnings.join("\n");
    assert!(
        w.contains(&format!(
            "water.xyz: frame 2 (line {second_count_line}): atom 4 is H, the first frame's atom 4 is O \
             (same count, 375 atoms, different order)"
        )),
        "{w}"
    );
    // Another element at the same count: other atoms, not another order.
    let other = text.replacen("375\nbox, later\nO 0.000", "375\nbox, later\nN 0.000", 1);
    std::fs::write(&water, &other).unwrap();
    let system = io::load(std::slice::from_ref(&water)).unwrap();
    let w = system.warnings.join("\n");
    assert!(
        w.contains("atom 1 is N, the first frame's atom 1 is O (same count, 375 atoms, different atoms)"),
        "{w}"
    );

    // Two XYZ files of one count, the second in another order: an error naming both files.
    let a = dir.path().join("a.xyz");
    let b = dir.path().join("b.xyz");
    std::fs::write(&a, format!("375\na\n{}", water_lines(125, None))).unwrap();
    std::fs::write(&b, format!("375\nb\n{}", water_lines(125, Some(1)))).unwrap();
    let e = io::load(&[a, b]).unwrap_err().to_string();
    assert!(e.contains("b.xyz"), "{e}");
    assert!(
        e.contains("atom 4 is H, a.xyz's atom 4 is O (same count, 375 atoms, different order)"),
        "{e}"
    );

    // GRO: the second frame's names in another order (two waters, OW HW1 HW2).
    let gro_atom = |res: usize, name: &str, k: usize, y: f64| {
        format!(
            "{res:>5}{:<5}{name:>5}{k:>5}{:8.3}{y:8.3}{:8.3}\n",
            "SOL",
            0.1 * res as f64,
            0.2
        )
    };
    let frame = |swap: bool| {
        let mut f = String::from("waters\n    6\n");
        let names = if swap {
            ["HW1", "OW", "HW2"]
        } else {
            ["OW", "HW1", "HW2"]
        };
        for r in 1..=2 {
            for (k, n) in names.iter().enumerate() {
                f += &gro_atom(r, n, 3 * (r - 1) + k + 1, 0.1 * k as f64);
            }
        }
        f + "   2.00000   2.00000   2.00000\n"
    };
    let gro = dir.path().join("water.gro");
    std::fs::write(&gro, frame(false) + &frame(true)).unwrap();
    let system = io::load(std::slice::from_ref(&gro)).unwrap();
    assert_eq!(system.trajectory.n_frames(), 1);
    let w = system.warnings.join("\n");
    assert!(
        w.contains(
            "frame 2 (line 10): atom 1 is HW1, the first frame's atom 1 is OW (same count, 6 atoms, different order)"
        ),
        "{w}"
    );

    // A wavefunction series: the water Molden file, then one whose atoms are listed H O H.
    let molden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/engine/water_hf_631gs_cart.molden");
    let text = std::fs::read_to_string(&molden).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let at = lines.iter().position(|l| l.starts_with("[Atoms]")).unwrap();
    assert!(lines[at + 1].starts_with("O   1   8") && lines[at + 2].starts_with("H   2   1"));
    let mut swapped: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    swapped[at + 1] = lines[at + 2].replacen("H   2   1", "H   1   1", 1);
    swapped[at + 2] = lines[at + 1].replacen("O   1   8", "O   2   8", 1);
    let second = dir.path().join("frame_2.molden");
    std::fs::write(&second, swapped.join("\n") + "\n").unwrap();
    let e = io::load(&[molden, second]).unwrap_err().to_string();
    assert!(e.contains("frame_2.molden"), "{e}");
    assert!(
        e.contains("atom 1 is H, the first of the series' atom 1 is O (same count, 3 atoms, different order)"),
        "{e}"
    );
}

/// A broken WFX file is reported at the line where the offending tag opens, or where the bad value
/// sits, never at the end of the file. The files are the CH2 test file with one line changed; the
/// expected lines are found in its text.
#[test]
fn broken_wfx_names_the_line_of_the_tag() {
    let wfx = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/qm/ch2_uhf_631gs.wfx");
    let text = std::fs::read_to_string(&wfx).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let open = line_of(&text, "<Number of Nuclei>");
    let close = line_of(&text, "</Number of Nuclei>");
    assert_eq!(close, open + 2, "one value between the tags");
    assert!(open < 10 && lines.len() > 200);
    let dir = tempfile::tempdir().unwrap();
    let read = |changed: &[(usize, Option<&str>)]| {
        let mut out: Vec<&str> = Vec::new();
        for (k, l) in lines.iter().enumerate() {
            match changed.iter().find(|(no, _)| *no == k + 1) {
                Some((_, Some(new))) => out.push(new),
                Some((_, None)) => {}
                None => out.push(l),
            }
        }
        let path = dir.path().join("broken.wfx");
        std::fs::write(&path, out.join("\n") + "\n").unwrap();
        let e = io::load(&[path]).unwrap_err();
        assert!(e.to_string().contains("broken.wfx"), "{e}");
        e
    };
    // The tag never closed.
    let e = read(&[(close, None)]);
    assert_eq!(e.location, Location::Line(open), "{e}");
    assert!(e.message.contains("<Number of Nuclei> is never closed"), "{e}");
    // The opening tag misspelled: closed by another name.
    let e = read(&[(open, Some("<Number of Nucle>"))]);
    assert_eq!(e.location, Location::Line(open), "{e}");
    assert!(e.message.contains("</Number of Nuclei>"), "{e}");
    // The closing tag misspelled.
    let e = read(&[(close, Some("</Number of Nucle>"))]);
    assert_eq!(e.location, Location::Line(open), "{e}");
    // Both misspelled alike: the section is missing, and the near name is pointed at.
    let e = read(&[
        (open, Some("<Number of Nucleii>")),
        (close, Some("</Number of Nucleii>")),
    ]);
    assert_eq!(e.location, Location::Line(open), "{e}");
    assert!(
        e.message
            .contains("expected <Number of Nuclei>, found <Number of Nucleii>"),
        "{e}"
    );
    // A value that is not a number.
    let e = read(&[(open + 1, Some("three"))]);
    assert_eq!(e.location, Location::Line(open + 1), "{e}");
    assert!(e.message.contains("\"three\""), "{e}");
    // A count that is not a whole number.
    let e = read(&[(open + 1, Some("2.5"))]);
    assert_eq!(e.location, Location::Line(open + 1), "{e}");
}
