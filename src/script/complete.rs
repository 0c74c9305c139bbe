//! Completion for the command line: verbs for the first word; then the verb's sub-words, option
//! words and choices from the verb table, the selection language's keywords, and file names
//! (relative to a folder) for arguments that name files.

use super::verbs::{Kind, VERBS, verb};
use std::path::Path;

/// Words of the selection language offered where a selection goes.
pub const SELECTION_WORDS: &[&str] = &[
    "all",
    "none",
    "protein",
    "nucleic",
    "backbone",
    "helix",
    "sheet",
    "turn",
    "coil",
    "water",
    "ion",
    "hydrogen",
    "heavy",
    "name",
    "type",
    "resname",
    "element",
    "chain",
    "segid",
    "resid",
    "index",
    "bynum",
    "within",
    "of",
    "same",
    "residue",
    "as",
    "and",
    "or",
    "not",
    "to",
    "x",
    "y",
    "z",
    "charge",
    "mass",
    "radius",
    "beta",
    "occupancy",
];

/// What the last word of `line` may complete to: the byte offset where that word starts and the
/// candidates (sorted, each the whole word).
pub fn complete(line: &str, dir: &Path) -> (usize, Vec<String>) {
    let start = line.rfind(|c: char| c.is_whitespace() || c == ';').map_or(0, |i| i + 1);
    let prefix = &line[start..];
    let statement = &line[line.rfind(';').map_or(0, |i| i + 1)..start];
    let before: Vec<&str> = statement.split_whitespace().collect();
    let mut out: Vec<String> = Vec::new();
    let lower = prefix.to_ascii_lowercase();
    let offer = |w: &str, out: &mut Vec<String>| {
        if w.to_ascii_lowercase().starts_with(&lower) && !out.iter().any(|o| o == w) {
            out.push(w.to_string());
        }
    };
    match before.first().and_then(|v| verb(v)) {
        None if before.is_empty() => {
            for v in VERBS {
                offer(v.name, &mut out);
            }
        }
        None => {}
        Some(v) => {
            let mut files = false;
            let mut selection = false;
            for f in v.forms {
                if before.len() == 1
                    && let Some(w) = f.words.first()
                {
                    offer(w, &mut out);
                }
                // Arguments once the form's sub-words are typed.
                let matched = before.len() > f.words.len()
                    && f.words
                        .iter()
                        .enumerate()
                        .all(|(k, w)| before.get(1 + k).is_some_and(|b| b.eq_ignore_ascii_case(w)));
                if !matched {
                    continue;
                }
                for a in f.args {
                    match a.kind {
                        Kind::Choice(words) => words.iter().for_each(|w| offer(w, &mut out)),
                        Kind::InPath | Kind::InPaths | Kind::OutPath | Kind::FileOrNone => files = true,
                        Kind::Selection | Kind::SelectionPair => selection = true,
                        _ => {}
                    }
                }
                for o in f.opts {
                    offer(o.name, &mut out);
                }
            }
            if selection {
                for w in SELECTION_WORDS {
                    offer(w, &mut out);
                }
            }
            if files {
                out.extend(file_names(prefix, dir));
            }
        }
    }
    out.sort();
    out.dedup();
    (start, out)
}

/// Files and folders (with a trailing `/`) whose path starts with `prefix`, relative to `dir`.
fn file_names(prefix: &str, dir: &Path) -> Vec<String> {
    let (folder, name) = match prefix.rfind('/') {
        Some(i) => (&prefix[..=i], &prefix[i + 1..]),
        None => ("", prefix),
    };
    let look = if Path::new(folder).is_absolute() {
        Path::new(folder).to_path_buf()
    } else {
        dir.join(folder)
    };
    let Ok(entries) = std::fs::read_dir(&look) else {
        return Vec::new();
    };
    let mut out: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            if !n.starts_with(name) || n.starts_with('.') {
                return None;
            }
            let slash = if e.file_type().is_ok_and(|t| t.is_dir()) {
                "/"
            } else {
                ""
            };
            Some(format!("{folder}{n}{slash}"))
        })
        .collect();
    out.sort();
    out.truncate(200);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verbs_words_and_selection_keywords() {
        let d = Path::new(".");
        assert_eq!(complete("re", d), (0, vec!["redo".to_string(), "rep".to_string()]));
        let (at, words) = complete("rep a", d);
        assert_eq!(at, 4);
        assert_eq!(words, vec!["add".to_string()]);
        let (_, words) = complete("rep add cartoon prot", d);
        assert!(words.contains(&"protein".to_string()), "{words:?}");
        let (_, words) = complete("frame 3; zo", d);
        assert_eq!(words, vec!["zoom".to_string()]);
    }

    #[test]
    fn file_names_relative_to_the_folder() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(dir.path().join("adk.psf"), "").unwrap_or_else(|e| panic!("{e}"));
        std::fs::create_dir(dir.path().join("adsub")).unwrap_or_else(|e| panic!("{e}"));
        let (_, words) = complete("open ad", dir.path());
        assert_eq!(words, vec!["adk.psf".to_string(), "adsub/".to_string()]);
    }
}
