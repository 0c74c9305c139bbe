//! What the user names to open, as the files to read. A folder gives the files in it that
//! orbitfield reads (structures and wavefunctions first, then trajectories, each in natural order:
//! `frame_2` before `frame_10`), so a folder of Molden or fchk frames opens as a series as a quoted
//! pattern does on the command line; a file name holding `*` or `?` that names no file gives the
//! files it matches, in the same order. Other paths pass as they are. Used by
//! the viewer's `AppState::open_files` (the Open dialog, dropped files, the `open` command, recent files)
//! and every command line's file arguments.

use std::path::{Path, PathBuf};

/// `paths` with folders and patterns replaced by the files they hold; an error in words when a
/// folder holds no file orbitfield reads or a pattern matches none.
pub fn expand(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::with_capacity(paths.len());
    for p in paths {
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if p.is_dir() {
            let files = listed(p, |_| true)?;
            if files.is_empty() {
                return Err(format!(
                    "{}: the folder holds no file orbitfield reads (structures, trajectories, \
                     wavefunctions, volumes by their extension)",
                    p.display()
                ));
            }
            out.extend(files);
        } else if !p.exists() && name.contains(['*', '?']) {
            let dir = p
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            let files = listed(dir, |file| pattern_matches(&name, file))?;
            if files.is_empty() {
                return Err(format!(
                    "{}: no file orbitfield reads matches this pattern",
                    p.display()
                ));
            }
            out.extend(files);
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

/// The files of `dir` with a format orbitfield reads whose names `keep` accepts: topologies,
/// wavefunctions and volumes, then trajectories, each in natural order.
fn listed(dir: &Path, keep: impl Fn(&str) -> bool) -> Result<Vec<PathBuf>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: cannot list the folder: {e}", dir.display()))?;
    let mut files: Vec<(bool, Vec<Chunk>, PathBuf)> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| !t.is_dir()))
        .filter_map(|e| {
            let path = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            let unpacked = crate::io::uncompressed_name(&path);
            let ext = unpacked.rsplit_once('.').map_or("", |(_, x)| x);
            let format = crate::io::Format::from_extension(ext)?;
            keep(&name).then(|| (format.is_trajectory_only(), natural_key(&name), path))
        })
        .collect();
    files.sort();
    Ok(files.into_iter().map(|(_, _, p)| p).collect())
}

/// A piece of a file name for natural ordering: runs of digits compare by their value.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Chunk {
    Number(u128, usize),
    Text(String),
}

fn natural_key(name: &str) -> Vec<Chunk> {
    let mut out = Vec::new();
    let mut rest = name;
    while let Some(c) = rest.chars().next() {
        let digits = c.is_ascii_digit();
        let end = rest
            .find(|ch: char| ch.is_ascii_digit() != digits)
            .unwrap_or(rest.len());
        let (head, tail) = rest.split_at(end);
        out.push(match head.parse::<u128>() {
            Ok(v) if digits => Chunk::Number(v, head.len()),
            _ => Chunk::Text(head.to_string()),
        });
        rest = tail;
    }
    out
}

/// `*` (any run) and `?` (one character) against a whole file name.
fn pattern_matches(pattern: &str, name: &str) -> bool {
    let t: Vec<char> = name.chars().collect();
    // matches[j]: the pattern so far matches the first j characters of the name.
    let mut matches = vec![false; t.len() + 1];
    matches[0] = true;
    for c in pattern.chars() {
        let mut next = vec![false; t.len() + 1];
        if c == '*' {
            let mut any = false;
            for (n, m) in next.iter_mut().zip(&matches) {
                any |= *m;
                *n = any;
            }
        } else {
            for j in 1..=t.len() {
                next[j] = matches[j - 1] && (c == '?' || c == t[j - 1]);
            }
        }
        matches = next;
    }
    matches[t.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_sort_naturally_and_patterns_match_whole_names() {
        let mut names = vec!["step_10.fchk", "step_2.fchk", "step_1.fchk"];
        names.sort_by_key(|n| natural_key(n));
        assert_eq!(names, ["step_1.fchk", "step_2.fchk", "step_10.fchk"]);
        assert!(pattern_matches("step_*.fchk", "step_10.fchk"));
        assert!(pattern_matches("step_?.fchk", "step_2.fchk"));
        assert!(!pattern_matches("step_?.fchk", "step_10.fchk"));
        assert!(!pattern_matches("*.fchk", "step_1.fchk.txt"));
    }

    #[test]
    fn a_folder_gives_its_readable_files_topology_first() {
        let dir = tempfile::tempdir().unwrap();
        for n in ["traj.dcd", "top.psf", "README.md", "frame_10.molden", "frame_9.molden"] {
            std::fs::write(dir.path().join(n), b"").unwrap();
        }
        let got = expand(&[dir.path().to_path_buf()]).unwrap();
        let names: Vec<String> = got
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["frame_9.molden", "frame_10.molden", "top.psf", "traj.dcd"]);
        let pattern = dir.path().join("frame_*.molden");
        assert_eq!(expand(&[pattern]).unwrap().len(), 2);
        let empty = tempfile::tempdir().unwrap();
        let e = expand(&[empty.path().to_path_buf()]).unwrap_err();
        assert!(e.contains("holds no file orbitfield reads"), "{e}");
    }
}
