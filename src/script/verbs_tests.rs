//! Tests of the verb table (`script::verbs`): the generated reference is current, and every verb's
//! example parses.
use super::*;
use crate::script::lex::statements;
use std::path::Path;

/// The committed `docs/scripting.md` is what the table generates.
#[test]
fn reference_is_current() {
    let text = reference_markdown();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/scripting.md");
    if std::env::var_os("ORBITFIELD_UPDATE_DOCS").is_some() {
        std::fs::write(&path, &text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == text,
        "docs/scripting.md is out of date with the verb table: run \
         `ORBITFIELD_UPDATE_DOCS=1 cargo test --lib script::verbs` and commit the result"
    );
}

#[test]
fn every_verb_has_help_and_an_example_that_parses() {
    for v in VERBS {
        assert!(help_text(Some(v.name)).is_ok());
        let st = statements(v.example).unwrap_or_default();
        let parsed = parse(&st[0], Path::new("/nonexistent"));
        // Examples naming files to read are checked for their form only.
        if let Err(e) = parsed {
            assert!(e.message.starts_with("no such file"), "{}: {}", v.example, e.message);
        }
    }
}
