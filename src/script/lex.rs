//! Splitting script text into statements and words, each word with its byte column: one
//! statement per line or between `;`, a comment from `#` (opening a command, or followed by a blank)
//! to the end of the line (`#rrggbb` is a colour), words separated by
//! blanks, `"…"` or `'…'` one word (for paths with spaces; `;` and `#` inside quotes are text).

/// A word of a statement.
#[derive(Clone, Debug, PartialEq)]
pub struct Word {
    /// The text, quotes removed.
    pub text: String,
    /// Byte column in the line, 1-based (of the opening quote for a quoted word).
    pub column: usize,
    /// Byte offset one past the word's end in the line.
    pub end: usize,
    pub quoted: bool,
}

/// One statement: its line (1-based), its words and the line's text (for selections, which are
/// read as written).
#[derive(Clone, Debug, PartialEq)]
pub struct Statement {
    pub line: usize,
    pub words: Vec<Word>,
    pub source: String,
}

impl Statement {
    /// The text of the line from `word` (index) to the end of the statement, as written.
    pub fn rest_from(&self, word: usize) -> String {
        match (self.words.get(word), self.words.last()) {
            (Some(first), Some(last)) => self.source[first.column - 1..last.end].to_string(),
            _ => String::new(),
        }
    }

    /// The text of words `from..to` as written.
    pub fn span(&self, from: usize, to: usize) -> String {
        match (self.words.get(from), to.checked_sub(1).and_then(|t| self.words.get(t))) {
            (Some(first), Some(last)) if to > from => self.source[first.column - 1..last.end].to_string(),
            _ => String::new(),
        }
    }
}

/// A quote left open: (line, column).
#[derive(Clone, Debug, PartialEq)]
pub struct Unclosed {
    pub line: usize,
    pub column: usize,
}

/// The statements of `text`, in order (empty statements left out).
pub fn statements(text: &str) -> Result<Vec<Statement>, Unclosed> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line_no = n + 1;
        let bytes = line.as_bytes();
        let mut words: Vec<Word> = Vec::new();
        let mut i = 0;
        let push = |words: &mut Vec<Word>, out: &mut Vec<Statement>| {
            if !words.is_empty() {
                out.push(Statement {
                    line: line_no,
                    words: std::mem::take(words),
                    source: line.to_string(),
                });
            }
        };
        while i < bytes.len() {
            let c = bytes[i];
            // A comment: `#` opening a command, or followed by a blank (`#rrggbb` is a colour).
            if c == b'#' && (words.is_empty() || bytes.get(i + 1).is_none_or(|n| n.is_ascii_whitespace())) {
                break;
            }
            if c == b';' {
                push(&mut words, &mut out);
                i += 1;
                continue;
            }
            if c.is_ascii_whitespace() {
                i += 1;
                continue;
            }
            if c == b'"' || c == b'\'' {
                let start = i;
                let Some(len) = line[i + 1..].find(c as char) else {
                    return Err(Unclosed {
                        line: line_no,
                        column: start + 1,
                    });
                };
                words.push(Word {
                    text: line[i + 1..i + 1 + len].to_string(),
                    column: start + 1,
                    end: i + len + 2,
                    quoted: true,
                });
                i += len + 2;
                continue;
            }
            let start = i;
            while i < bytes.len() && !bytes[i].is_ascii_whitespace() && bytes[i] != b';' {
                i += 1;
            }
            words.push(Word {
                text: line[start..i].to_string(),
                column: start + 1,
                end: i,
                quoted: false,
            });
        }
        push(&mut words, &mut out);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_statements_words_and_comments() {
        let s = statements("open 'my file.pdb' ; frame 3 # go\n\n  zoom 2;").unwrap_or_default();
        assert_eq!(s.len(), 3);
        assert_eq!(s[0].words[1].text, "my file.pdb");
        assert_eq!(s[0].words[1].column, 6);
        assert_eq!(s[1].words[0].text, "frame");
        assert_eq!(s[1].words[0].column, 22);
        assert_eq!(s[2].line, 3);
        assert_eq!(s[2].words[0].column, 3);
        assert_eq!(s[1].rest_from(0), "frame 3");
        let s = statements("set background #102030 # dark blue\n#comment; frame 2").unwrap_or_default();
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].words[2].text, "#102030");
    }

    #[test]
    fn an_open_quote_names_its_column() {
        assert_eq!(statements("x\nopen \"a.pdb"), Err(Unclosed { line: 2, column: 6 }));
    }
}
