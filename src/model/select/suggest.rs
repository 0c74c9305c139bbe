//! The nearest selection keyword to a word the parser does not know, for its error message
//! ("unknown keyword 'protien' (did you mean 'protein'?)").

/// The words a selection may start an expression with.
const KEYWORDS: [&str; 45] = [
    "all",
    "none",
    "protein",
    "nucleic",
    "backbone",
    "sidechain",
    "helix",
    "alpha_helix",
    "helix_3_10",
    "pi_helix",
    "sheet",
    "extended_beta",
    "bridge_beta",
    "turn",
    "coil",
    "water",
    "ligand",
    "ion",
    "ions",
    "hydrogen",
    "heavy",
    "noh",
    "name",
    "type",
    "resname",
    "element",
    "chain",
    "segid",
    "segname",
    "altloc",
    "insertion",
    "resid",
    "resnum",
    "index",
    "bynum",
    "serial",
    "prop",
    "charge",
    "mass",
    "radius",
    "beta",
    "occupancy",
    "not",
    "within",
    "same",
];

/// The error message for the unknown word `word`: with the keyword one or two edits away (the
/// nearest; ties to the first in the list), or with the keywords a selection usually starts with.
pub(super) fn unknown_keyword(word: &str) -> String {
    let lower = word.to_ascii_lowercase();
    let limit = if lower.chars().count() <= 4 { 1 } else { 2 };
    let best = KEYWORDS
        .iter()
        .map(|k| (edit_distance(&lower, k), *k))
        .filter(|&(d, _)| d <= limit)
        .min_by_key(|&(d, _)| d);
    match best {
        Some((_, k)) => format!("unknown keyword '{word}' (did you mean '{k}'?)"),
        None => format!(
            "unknown keyword '{word}': a selection starts with a keyword such as protein, water, name, resname, resid, chain, element, within or not"
        ),
    }
}

/// Levenshtein distance, counting a swap of two neighbouring letters as one edit.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[i - 1][j] + 1).min(d[i][j - 1] + 1).min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn misspelt_keywords_are_named() {
        assert!(unknown_keyword("protien").contains("did you mean 'protein'?"));
        assert!(unknown_keyword("Protien").contains("'Protien' (did you mean 'protein'?)"));
        assert!(unknown_keyword("resnme").contains("did you mean 'resname'?"));
        assert!(unknown_keyword("wihtin").contains("did you mean 'within'?"));
        assert!(unknown_keyword("watr").contains("did you mean 'water'?"));
        assert!(unknown_keyword("backbon").contains("did you mean 'backbone'?"));
    }

    #[test]
    fn far_words_get_the_usual_keywords_instead() {
        let m = unknown_keyword("hetatm");
        assert!(!m.contains("did you mean"), "{m}");
        assert!(m.contains("such as protein, water, name"), "{m}");
        // Short words need a closer match: 'lig' is not 'ion'.
        assert!(!unknown_keyword("lig").contains("did you mean"));
    }

    #[test]
    fn distance_counts_swaps_as_one_edit() {
        assert_eq!(edit_distance("protien", "protein"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }
}
