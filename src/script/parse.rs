//! Reading a statement against the verb table (`script::verbs`): which verb and form, and every
//! value checked for its kind (whole numbers, numbers, choices, sizes, colours, ranges, files that
//! must exist), each with its byte column for messages.

use super::lex::Statement;
use super::verbs::{Form, Kind, Verb, nearest_verb, usage, verb};
pub use crate::model::color::parse_color;
use std::path::{Path, PathBuf};

/// A value read from a statement.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Int(u64),
    Number(f64),
    Word(String),
    Text(String),
    Path(PathBuf),
    Paths(Vec<PathBuf>),
    Size([u32; 2]),
    Color([u8; 3]),
    Flag,
    Range(Option<(usize, usize)>),
}

/// A statement read against the table: which verb and form, and its values with their columns.
#[derive(Debug)]
pub struct Parsed {
    pub verb: &'static Verb,
    pub form: &'static Form,
    pub column: usize,
    pub values: Vec<(&'static str, Value, usize)>,
}

impl Parsed {
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.values.iter().find(|(n, _, _)| *n == name).map(|(_, v, _)| v)
    }

    /// The column of a value (else of the verb).
    pub fn column_of(&self, name: &str) -> usize {
        self.values
            .iter()
            .find(|(n, _, _)| *n == name)
            .map_or(self.column, |(_, _, c)| *c)
    }

    pub fn int(&self, name: &str) -> Option<u64> {
        match self.get(name) {
            Some(Value::Int(n)) => Some(*n),
            _ => None,
        }
    }

    pub fn number(&self, name: &str) -> Option<f64> {
        match self.get(name) {
            Some(Value::Number(x)) => Some(*x),
            _ => None,
        }
    }

    /// A word, text or selection value.
    pub fn text(&self, name: &str) -> Option<&str> {
        match self.get(name) {
            Some(Value::Word(s) | Value::Text(s)) => Some(s),
            _ => None,
        }
    }

    pub fn path(&self, name: &str) -> Option<&Path> {
        match self.get(name) {
            Some(Value::Path(p)) => Some(p),
            _ => None,
        }
    }

    pub fn flag(&self, name: &str) -> bool {
        matches!(self.get(name), Some(Value::Flag))
    }

    /// The form's sub-words joined (`add`, or empty).
    pub fn sub(&self) -> &'static str {
        self.form.words.first().copied().unwrap_or("")
    }
}

/// A problem with a statement, at a byte column of its line (1-based).
#[derive(Clone, Debug, PartialEq)]
pub struct Problem {
    pub column: usize,
    pub message: String,
}

fn problem(column: usize, message: String) -> Problem {
    Problem { column, message }
}

/// Reads a statement against the table: the verb, its form, every value checked for its kind
/// (files that must exist, numbers, sizes, colours, choices); selections are checked by the caller
/// against the open document.
pub fn parse(st: &Statement, base_dir: &Path) -> Result<Parsed, Problem> {
    let Some(first) = st.words.first() else {
        return Err(problem(1, "empty command".into()));
    };
    let Some(verb) = verb(&first.text) else {
        let hint = match nearest_verb(&first.text) {
            Some(v) => format!("; did you mean '{v}'?"),
            None => "; 'help' lists the verbs".into(),
        };
        return Err(problem(first.column, format!("unknown command '{}'{hint}", first.text)));
    };
    let form = verb
        .forms
        .iter()
        .find(|f| {
            !f.words.is_empty()
                && f.words.iter().enumerate().all(|(k, w)| {
                    st.words
                        .get(1 + k)
                        .is_some_and(|x| !x.quoted && x.text.eq_ignore_ascii_case(w))
                })
        })
        .or_else(|| verb.forms.iter().find(|f| f.words.is_empty()));
    let Some(form) = form else {
        let subs: Vec<&str> = verb.forms.iter().filter_map(|f| f.words.first().copied()).collect();
        let (column, found) = st.words.get(1).map_or((first.end + 1, "nothing".to_string()), |w| {
            (w.column, format!("'{}'", w.text))
        });
        return Err(problem(
            column,
            format!("'{}' takes {}, found {found}", verb.name, subs.join("|")),
        ));
    };
    let mut at = 1 + form.words.len();
    let mut values = Vec::new();
    let is_option = |w: &super::lex::Word| !w.quoted && form.opts.iter().any(|o| o.name.eq_ignore_ascii_case(&w.text));
    let end_column = st.words.last().map_or(1, |w| w.end + 1);
    for a in form.args {
        let here = st.words.get(at).filter(|w| !is_option(w));
        let Some(word) = here else {
            if a.optional {
                continue;
            }
            let column = st.words.get(at).map_or(end_column, |w| w.column);
            return Err(problem(
                column,
                format!(
                    "'{}' needs {} ({}); usage: {}",
                    verb.name,
                    a.kind.placeholder(),
                    a.help,
                    usage(verb, form)
                ),
            ));
        };
        let column = word.column;
        let value = match a.kind {
            Kind::Selection | Kind::SelectionPair | Kind::Text | Kind::InPaths => {
                let mut to = at;
                while to < st.words.len() && !is_option(&st.words[to]) {
                    to += 1;
                }
                let value = if a.kind == Kind::InPaths {
                    let mut paths = Vec::new();
                    for w in &st.words[at..to] {
                        paths.push(openable(&w.text, w.column, base_dir)?);
                    }
                    Value::Paths(paths)
                } else if to == at + 1 && st.words[at].quoted {
                    Value::Text(st.words[at].text.clone())
                } else if a.kind == Kind::SelectionPair {
                    // Each side may be quoted as one word (`"name OW" with "name OW"`).
                    let side = |from: usize, until: usize| {
                        if until == from + 1 && st.words[from].quoted {
                            st.words[from].text.clone()
                        } else {
                            st.span(from, until)
                        }
                    };
                    match (at..to).find(|&i| !st.words[i].quoted && st.words[i].text.eq_ignore_ascii_case("with")) {
                        Some(w) => Value::Text(format!("{} with {}", side(at, w), side(w + 1, to))),
                        None => Value::Text(st.span(at, to)),
                    }
                } else {
                    Value::Text(st.span(at, to))
                };
                at = to;
                value
            }
            kind => {
                at += 1;
                read_value(kind, &word.text, column, base_dir, a.name)?
            }
        };
        values.push((a.name, value, column));
    }
    while at < st.words.len() {
        let w = &st.words[at];
        let Some(o) = form
            .opts
            .iter()
            .find(|o| !w.quoted && o.name.eq_ignore_ascii_case(&w.text))
        else {
            let expected = if form.opts.is_empty() {
                "nothing more".to_string()
            } else {
                form.opts.iter().map(|o| o.name).collect::<Vec<_>>().join(", ")
            };
            return Err(problem(
                w.column,
                format!(
                    "unexpected '{}' (expected {expected}); usage: {}",
                    w.text,
                    usage(verb, form)
                ),
            ));
        };
        at += 1;
        let value = match o.kind {
            None => Value::Flag,
            Some(kind) => {
                let Some(v) = st.words.get(at) else {
                    return Err(problem(
                        w.end + 1,
                        format!("'{}' needs {} ({})", o.name, kind.placeholder(), o.help),
                    ));
                };
                at += 1;
                read_value(kind, &v.text, v.column, base_dir, o.name)?
            }
        };
        values.push((o.name, value, w.column));
    }
    Ok(Parsed {
        verb,
        form,
        column: first.column,
        values,
    })
}

fn existing(text: &str, column: usize, base_dir: &Path) -> Result<PathBuf, Problem> {
    let p = resolve(text, base_dir);
    if !p.is_file() {
        return Err(problem(column, format!("no such file: {}", p.display())));
    }
    // `../md/x.psf` as the plain path it names (what sessions and the log then write).
    Ok(std::fs::canonicalize(&p).unwrap_or(p))
}

/// A file to open, a folder of files (a series of frames), or a file name with `*` or `?`: a
/// folder or pattern must give at least one file orbitfield reads.
fn openable(text: &str, column: usize, base_dir: &Path) -> Result<PathBuf, Problem> {
    let p = resolve(text, base_dir);
    let pattern = !p.exists() && p.file_name().is_some_and(|n| n.to_string_lossy().contains(['*', '?']));
    if !(p.is_dir() || pattern) {
        return existing(text, column, base_dir);
    }
    crate::io::open_paths::expand(std::slice::from_ref(&p)).map_err(|e| problem(column, e))?;
    Ok(std::fs::canonicalize(&p).unwrap_or(p))
}

/// A path of the script, relative to its folder.
pub fn resolve(text: &str, base_dir: &Path) -> PathBuf {
    let p = PathBuf::from(text);
    if p.is_absolute() { p } else { base_dir.join(p) }
}

fn read_value(kind: Kind, text: &str, column: usize, base_dir: &Path, name: &str) -> Result<Value, Problem> {
    let bad = |what: &str| problem(column, format!("{name}: expected {what}, found '{text}'"));
    Ok(match kind {
        Kind::Int => Value::Int(text.parse::<u64>().map_err(|_| bad("a whole number from 0"))?),
        Kind::Number => {
            let x = text.parse::<f64>().map_err(|_| bad("a number"))?;
            if !x.is_finite() {
                return Err(bad("a finite number"));
            }
            Value::Number(x)
        }
        Kind::Choice(words) => match words.iter().find(|w| w.eq_ignore_ascii_case(text)) {
            Some(w) => Value::Word((*w).to_string()),
            None => return Err(bad(&words.join("|"))),
        },
        Kind::Field | Kind::Selection | Kind::SelectionPair | Kind::Text => Value::Text(text.to_string()),
        Kind::Frames => {
            crate::model::FrameRange::parse(text).map_err(|e| problem(column, format!("{name}: {e}")))?;
            Value::Text(text.trim().to_string())
        }
        Kind::FileOrNone if text.eq_ignore_ascii_case("none") => Value::Word("none".into()),
        Kind::FileOrNone => Value::Path(existing(text, column, base_dir)?),
        Kind::OutPath => Value::Path(resolve(text, base_dir)),
        Kind::InPath => Value::Path(existing(text, column, base_dir)?),
        Kind::InPaths => Value::Paths(vec![existing(text, column, base_dir)?]),
        Kind::Size => {
            let (w, h) = text
                .split_once(['x', 'X'])
                .ok_or_else(|| bad("WIDTHxHEIGHT in pixels"))?;
            match (w.parse::<u32>(), h.parse::<u32>()) {
                (Ok(w), Ok(h)) if (1..=16384).contains(&w) && (1..=16384).contains(&h) => Value::Size([w, h]),
                _ => return Err(bad("WIDTHxHEIGHT in pixels, each 1 to 16384")),
            }
        }
        Kind::Color => Value::Color(parse_color(text).ok_or_else(|| bad("a colour name, #rrggbb or r,g,b"))?),
        Kind::Range => {
            if text.eq_ignore_ascii_case("all") {
                Value::Range(None)
            } else {
                let (a, b) = text.split_once(':').ok_or_else(|| bad("A:B or all"))?;
                match (a.parse::<usize>(), b.parse::<usize>()) {
                    (Ok(a), Ok(b)) if a < b => Value::Range(Some((a, b))),
                    _ => return Err(bad("A:B with A < B, or all")),
                }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::script::lex::statements;

    fn one(text: &str) -> Result<Parsed, Problem> {
        let st = statements(text).unwrap_or_default();
        parse(&st[0], Path::new("."))
    }

    #[test]
    fn forms_arguments_and_options() {
        let p = one("rep add cartoon protein and name CA color chain opacity 0.5").unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(p.sub(), "add");
        assert_eq!(p.text("style"), Some("cartoon"));
        assert_eq!(p.text("selection"), Some("protein and name CA"));
        assert_eq!(p.text("color"), Some("chain"));
        assert_eq!(p.number("opacity"), Some(0.5));
        let p = one("frame 40").unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(p.int("index"), Some(40));
    }

    #[test]
    fn problems_name_their_column() {
        let e = one("rep ad cartoon").err().unwrap_or_else(|| panic!("accepted"));
        assert_eq!(e.column, 5);
        let e = one("frame x").err().unwrap_or_else(|| panic!("accepted"));
        assert_eq!(e.column, 7);
        assert!(e.message.contains("whole number"), "{}", e.message);
        let e = one("opne a.pdb").err().unwrap_or_else(|| panic!("accepted"));
        assert_eq!(e.column, 1);
        assert!(e.message.contains("did you mean 'open'"), "{}", e.message);
        let e = one("zoom 2 wide").err().unwrap_or_else(|| panic!("accepted"));
        assert_eq!(e.column, 8);
        let e = one("open nowhere/none.pdb").err().unwrap_or_else(|| panic!("accepted"));
        assert!(e.message.starts_with("no such file"), "{}", e.message);
        assert_eq!(e.column, 6);
    }

    #[test]
    fn colours() {
        assert_eq!(parse_color("#ff8000"), Some([255, 128, 0]));
        assert_eq!(parse_color("10,20,30"), Some([10, 20, 30]));
        assert_eq!(parse_color("white"), Some([255, 255, 255]));
        assert_eq!(parse_color("#ff80"), None);
    }
}
