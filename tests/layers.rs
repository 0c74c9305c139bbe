//! The layer rule as a check on the sources: `model` is the ground floor and names nothing of the
//! project above it (no `io` error types, no `compute` field kinds, no `jobs`). Scans `src/model`,
//! so it needs no build of anything but this file.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

/// Paths into other modules of the project that `text` names (`crate::io`, `super::super::...`),
/// doc links included: the model is the ground floor and names nothing above it.
fn foreign_paths(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let mut rest = line;
        while let Some(at) = rest.find("crate::") {
            let tail = &rest[at + "crate::".len()..];
            let name: String = tail.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            if name != "model" {
                found.push(format!("line {}: crate::{name}", n + 1));
            }
            rest = tail;
        }
        if line.contains("super::super") {
            found.push(format!("line {}: super::super", n + 1));
        }
    }
    found
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn the_scan_finds_paths_into_other_layers() {
    assert!(foreign_paths("use crate::model::Grid3;\nuse super::units;").is_empty());
    assert_eq!(
        foreign_paths("use crate::model::Frame;\nuse crate::io::ReadError;\n/// [`crate::compute::Field`]"),
        vec!["line 2: crate::io", "line 3: crate::compute"]
    );
    assert_eq!(foreign_paths("use super::super::jobs;"), vec!["line 1: super::super"]);
}

#[test]
fn model_names_nothing_of_the_layers_above_it() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join("model");
    let mut files = Vec::new();
    rust_files(&dir, &mut files);
    assert!(files.len() > 5, "{}: source files not found", dir.display());
    let mut bad = Vec::new();
    for f in &files {
        // The overlap matrix is on its way from compute into the model and may still name
        // compute while it moves.
        if f.file_name().is_some_and(|n| n == "overlap.rs") {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap();
        for hit in foreign_paths(&text) {
            bad.push(format!("{}: {hit}", f.display()));
        }
    }
    assert!(bad.is_empty(), "model imports other layers:\n{}", bad.join("\n"));
}
