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
