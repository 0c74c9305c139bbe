//! Atom selections: a language close to VMD's and MDAnalysis's (`name CA and resid 10 to 20`,
//! `water and within 5 of resname LIG`, `same residue as (x > 10)`).
//!
//! [`Selection::parse`] turns text into an expression tree, reporting errors with the column of the
//! offending token; [`Selection::evaluate`] applies it to a [`Structure`] and (for geometric terms)
//! one [`Frame`], returning one flag per atom. Used by the viewer's representations and by the
//! analysis commands (`rdf --sel1/--sel2`). Distance terms use a cell list, so `within` is linear in
//! the number of atoms; when the frame has a periodic box, distances follow the minimum image.
//!
//! Keywords:
//! - `all`, `none`; `protein` (amino acids by name, modified ones by their N, CA and C atoms),
//!   `nucleic`, `backbone` (N CA C O of protein residues), `sidechain`
//!   (protein atoms other than the backbone, its hydrogens and the terminal oxygens), `water`,
//!   `ion` (monatomic ions by residue name: NA, CL, SOD, CLA, K, POT, MG, CAL, ZN, ...),
//!   `hydrogen` (element H), `heavy` (not hydrogen);
//! - string properties with glob patterns (`*`, `?`; a double-quoted value may be written as VMD's
//!   regular expression, `name "C.*"`): `name`, `type`, `resname`, `element`,
//!   `chain`, `segid`, `altloc` (the alternate-location indicator, as VMD and MDAnalysis);
//! - integer properties with values and ranges (`5`, `1 to 10`, `1:10`, `1-10`): `resid`, `resnum`,
//!   `index` (0-based), `bynum` and `serial` (1-based);
//! - numeric comparisons `x y z charge mass radius beta occupancy` with `< <= > >= == !=` (an
//!   optional `prop` prefix as in MDAnalysis; `beta`, as VMD calls the B-factor, also `bfactor`;
//!   atoms without one match no comparison);
//! - `and`, `or`, `not`, parentheses; `within D of SEL` (includes SEL), `around D SEL` (excludes
//!   SEL), `same residue as SEL`;
//! - secondary structure by DSSP at the frame: `helix`, `sheet`, `turn`, `coil` and VMD's finer
//!   names (`structure`).

use super::cell::UnitCell;
use super::element::Element;
use super::structure::Structure;
use super::trajectory::Frame;
use names::{BACKBONE_NAMES, ION_RESNAMES, MAIN_CHAIN_NAMES, NUCLEIC_RESNAMES, PROTEIN_RESNAMES, WATER_RESNAMES};

/// A selection error: what went wrong and where (0-based character column in the text; the
/// message counts from 1, as the command line and editors do).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("selection error at column {}: {message}\n  {text}\n  {marker}", .column + 1)]
pub struct SelectionError {
    pub column: usize,
    pub message: String,
    pub text: String,
    /// A caret line pointing at the column.
    pub marker: String,
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Word(String),
    Num(f64),
    LParen,
    RParen,
    Cmp(Cmp),
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Cmp {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum StrProp {
    Name,
    Type,
    Resname,
    Element,
    Chain,
    Segid,
    Altloc,
    Insertion,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum IntProp {
    Resid,
    Index,
    Bynum,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum NumProp {
    X,
    Y,
    Z,
    Charge,
    Mass,
    Radius,
    Beta,
    Occupancy,
}

#[derive(Clone, Debug, PartialEq)]
enum Expr {
    All,
    None,
    Protein,
    Nucleic,
    Backbone,
    Sidechain,
    Water,
    Ion,
    Hydrogen,
    Str(StrProp, Vec<String>),
    Int(IntProp, Vec<(i64, i64)>),
    Compare(NumProp, Cmp, f64),
    Not(Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Within {
        distance_angstrom: f64,
        sel: Box<Expr>,
        include_self: bool,
    },
    SameResidue(Box<Expr>),
    /// Atoms of residues whose DSSP code is one of these (`helix`, `sheet`, ...).
    Structure(&'static [u8]),
}

/// A parsed selection.
#[derive(Clone, Debug, PartialEq)]
pub struct Selection {
    expr: Expr,
    text: String,
}

/// A value as a selection's word that names it literally: as it is when it is letters and digits,
/// else in single quotes (a double-quoted value reads as a regular expression).
pub fn literal_word(w: &str) -> String {
    if !w.is_empty() && w.chars().all(|c| c.is_ascii_alphanumeric()) {
        w.to_string()
    } else {
        format!("'{w}'")
    }
}

/// True for residue names the `protein` keyword selects (amino acids in PDB, CHARMM, AMBER, GROMOS
/// and OPLS spellings, capping groups included).
pub fn is_protein_resname(resname: &str) -> bool {
    PROTEIN_RESNAMES.contains(&resname)
}

/// True for residue names of amino acids, nucleotides, water and ions (the readers' test for what a
/// residue-name column holds).
pub fn is_known_resname(resname: &str) -> bool {
    is_protein_resname(resname)
        || NUCLEIC_RESNAMES.contains(&resname)
        || WATER_RESNAMES.contains(&resname)
        || ION_RESNAMES.contains(&resname)
}

/// True for residue names the `nucleic` keyword selects (DNA and RNA nucleotides).
pub fn is_nucleic_resname(resname: &str) -> bool {
    NUCLEIC_RESNAMES.contains(&resname)
}

fn tokenize(text: &str) -> Result<Vec<(Tok, usize)>, (usize, String)> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        match c {
            '(' => {
                out.push((Tok::LParen, start));
                i += 1;
            }
            ')' => {
                out.push((Tok::RParen, start));
                i += 1;
            }
            '<' | '>' | '=' | '!' => {
                let next = chars.get(i + 1).copied();
                let (cmp, len) = match (c, next) {
                    ('<', Some('=')) => (Cmp::Le, 2),
                    ('>', Some('=')) => (Cmp::Ge, 2),
                    ('=', Some('=')) => (Cmp::Eq, 2),
                    ('!', Some('=')) => (Cmp::Ne, 2),
                    ('<', _) => (Cmp::Lt, 1),
                    ('>', _) => (Cmp::Gt, 1),
                    ('=', _) => (Cmp::Eq, 1),
                    _ => return Err((start, "'!' must be followed by '=' (use 'not' to negate)".into())),
                };
                out.push((Tok::Cmp(cmp), start));
                i += len;
            }
            '"' | '\'' => {
                let quote = c;
                i += 1;
                let s0 = i;
                while i < chars.len() && chars[i] != quote {
                    i += 1;
                }
                if i >= chars.len() {
                    return Err((start, "unterminated quoted string".into()));
                }
                let text: String = chars[s0..i].iter().collect();
                // VMD reads a double-quoted value as a regular expression (`name "C.*"`): its
                // wildcards become the glob's (no atom or residue name holds a dot).
                let text = if quote == '"' { regex_as_glob(&text) } else { text };
                out.push((Tok::Word(text), start));
                i += 1;
            }
            _ => {
                while i < chars.len() && !chars[i].is_whitespace() && !"()<>=!\"'".contains(chars[i]) {
                    i += 1;
                }
                let word: String = chars[start..i].iter().collect();
                let numeric_start =
                    word.starts_with(|ch: char| ch.is_ascii_digit() || ch == '-' || ch == '+' || ch == '.');
                match word.parse::<f64>() {
                    Ok(v) if numeric_start && v.is_finite() => out.push((Tok::Num(v), start)),
                    _ => out.push((Tok::Word(word), start)),
                }
            }
        }
    }
    Ok(out)
}

struct Parser<'a> {
    toks: &'a [(Tok, usize)],
    pos: usize,
    end_column: usize,
}

type PResult<T> = Result<T, (usize, String)>;

fn is_keyword(w: &str) -> bool {
    matches!(
        w.to_ascii_lowercase().as_str(),
        "and" | "or" | "not" | "within" | "around" | "of" | "same" | "as" | "to"
    )
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.0)
    }

    fn column(&self) -> usize {
        self.toks.get(self.pos).map_or(self.end_column, |t| t.1)
    }

    fn peek_word(&self) -> Option<String> {
        match self.peek() {
            Some(Tok::Word(w)) => Some(w.to_ascii_lowercase()),
            _ => None,
        }
    }

    fn expect_word(&mut self, w: &str) -> PResult<()> {
        if self.peek_word().as_deref() == Some(w) {
            self.pos += 1;
            Ok(())
        } else {
            Err((self.column(), format!("expected '{w}'")))
        }
    }

    fn or_expr(&mut self) -> PResult<Expr> {
        let mut lhs = self.and_expr()?;
        while self.peek_word().as_deref() == Some("or") {
            self.pos += 1;
            let rhs = self.and_expr()?;
            lhs = Expr::Or(Box::new(lhs), Box::new(rhs));
        }
        Ok(lhs)
    }

    fn and_expr(&mut self) -> PResult<Expr> {
        let mut lhs = self.unary()?;
        while self.peek_word().as_deref() == Some("and") {
            self.pos += 1;
            let rhs = self.unary()?;
            lhs = Expr::And(Box::new(lhs), Box::new(rhs));
        }
        Ok(lhs)
    }

    fn unary(&mut self) -> PResult<Expr> {
        match self.peek_word().as_deref() {
            Some("not") => {
                self.pos += 1;
                Ok(Expr::Not(Box::new(self.unary()?)))
            }
            Some("within") => {
                self.pos += 1;
                let d = self.distance()?;
                self.expect_word("of")?;
                let sel = self.unary()?;
                Ok(Expr::Within {
                    distance_angstrom: d,
                    sel: Box::new(sel),
                    include_self: true,
                })
            }
            Some("around") => {
                self.pos += 1;
                let d = self.distance()?;
                let sel = self.unary()?;
                Ok(Expr::Within {
                    distance_angstrom: d,
                    sel: Box::new(sel),
                    include_self: false,
                })
            }
            Some("same") => {
                self.pos += 1;
                let col = self.column();
                match self.peek_word().as_deref() {
                    Some("residue") | Some("resid") => self.pos += 1,
                    _ => return Err((col, "expected 'residue' after 'same'".into())),
                }
                self.expect_word("as")?;
                Ok(Expr::SameResidue(Box::new(self.unary()?)))
            }
            _ => self.primary(),
        }
    }

    fn distance(&mut self) -> PResult<f64> {
        match self.peek() {
            Some(Tok::Num(v)) if *v >= 0.0 => {
                let v = *v;
                self.pos += 1;
                Ok(v)
            }
            _ => Err((self.column(), "expected a non-negative distance in Angstrom".into())),
        }
    }

    fn primary(&mut self) -> PResult<Expr> {
        let col = self.column();
        let tok = self.peek().cloned();
        match tok {
            None => Err((col, "expected a selection, found the end of the text".into())),
            Some(Tok::LParen) => {
                self.pos += 1;
                let e = self.or_expr()?;
                match self.peek() {
                    Some(Tok::RParen) => {
                        self.pos += 1;
                        Ok(e)
                    }
                    _ => Err((
                        self.column(),
                        format!("expected ')' to close the '(' at column {}", col + 1),
                    )),
                }
            }
            Some(Tok::RParen) => Err((col, "unexpected ')'".into())),
            Some(Tok::Num(_)) | Some(Tok::Cmp(_)) => {
                Err((col, "expected a keyword such as name, resid or protein".into()))
            }
            Some(Tok::Word(w)) => {
                self.pos += 1;
                let lw = w.to_ascii_lowercase();
                match lw.as_str() {
                    "all" | "everything" => Ok(Expr::All),
                    "none" | "nothing" => Ok(Expr::None),
                    "protein" => Ok(Expr::Protein),
                    "nucleic" => Ok(Expr::Nucleic),
                    "backbone" => Ok(Expr::Backbone),
                    "sidechain" => Ok(Expr::Sidechain),
                    w if structure::keyword_codes(w).is_some() => {
                        Ok(Expr::Structure(structure::keyword_codes(w).unwrap_or_default()))
                    }
                    "extended" | "structure" => Err((
                        col,
                        format!(
                            "'{w}': secondary structure is selected by helix, alpha_helix, helix_3_10, \
                             pi_helix, sheet, extended_beta, bridge_beta, turn or coil"
                        ),
                    )),
                    "water" | "waters" => Ok(Expr::Water),
                    // What is neither polymer nor solvent: a ligand, a cofactor, a bound metal.
                    "ligand" | "ligands" => Ok(Expr::And(
                        Box::new(Expr::Not(Box::new(Expr::Or(
                            Box::new(Expr::Protein),
                            Box::new(Expr::Nucleic),
                        )))),
                        Box::new(Expr::Not(Box::new(Expr::Or(
                            Box::new(Expr::Water),
                            Box::new(Expr::Ion),
                        )))),
                    )),
                    "ion" | "ions" => Ok(Expr::Ion),
                    "hydrogen" => Ok(Expr::Hydrogen),
                    "heavy" | "noh" => Ok(Expr::Not(Box::new(Expr::Hydrogen))),
                    "name" => self.strings(StrProp::Name, col),
                    "type" => self.strings(StrProp::Type, col),
                    "resname" => self.strings(StrProp::Resname, col),
                    "element" => self.strings(StrProp::Element, col),
                    "chain" | "chainid" => self.strings(StrProp::Chain, col),
                    "segid" | "segname" => self.strings(StrProp::Segid, col),
                    "altloc" => self.strings(StrProp::Altloc, col),
                    "insertion" | "icode" => self.strings(StrProp::Insertion, col),
                    "resid" | "resnum" | "residue_number" => self.ints(IntProp::Resid, col),
                    "index" => self.ints(IntProp::Index, col),
                    "bynum" | "serial" => self.ints(IntProp::Bynum, col),
                    "prop" => {
                        let c2 = self.column();
                        match self.peek_word() {
                            Some(p) => {
                                self.pos += 1;
                                self.comparison(&p, c2)
                            }
                            None => Err((
                                c2,
                                "expected a property (x, y, z, charge, mass, radius, beta, occupancy) after 'prop'"
                                    .into(),
                            )),
                        }
                    }
                    "x" | "y" | "z" | "charge" | "mass" | "radius" | "beta" | "bfactor" | "occupancy" => {
                        self.comparison(&lw, col)
                    }
                    _ => Err((col, suggest::unknown_keyword(&w))),
                }
            }
        }
    }

    fn comparison(&mut self, prop: &str, col: usize) -> PResult<Expr> {
        let p = match prop {
            "x" => NumProp::X,
            "y" => NumProp::Y,
            "z" => NumProp::Z,
            "charge" => NumProp::Charge,
            "mass" => NumProp::Mass,
            "radius" => NumProp::Radius,
            "beta" | "bfactor" => NumProp::Beta,
            "occupancy" => NumProp::Occupancy,
            _ => {
                return Err((
                    col,
                    format!("unknown property '{prop}' (x, y, z, charge, mass, radius, beta, occupancy)"),
                ));
            }
        };
        let c = match self.peek() {
            Some(Tok::Cmp(c)) => *c,
            _ => {
                return Err((
                    self.column(),
                    format!("expected a comparison (<, <=, >, >=, ==, !=) after '{prop}'"),
                ));
            }
        };
        self.pos += 1;
        match self.peek() {
            Some(Tok::Num(v)) => {
                let v = *v;
                self.pos += 1;
                Ok(Expr::Compare(p, c, v))
            }
            _ => Err((self.column(), "expected a number".into())),
        }
    }

    fn strings(&mut self, p: StrProp, col: usize) -> PResult<Expr> {
        let mut vals = Vec::new();
        loop {
            match self.peek() {
                Some(Tok::Word(w)) if !is_keyword(w) => {
                    vals.push(w.clone());
                    self.pos += 1;
                }
                Some(Tok::Num(v)) => {
                    // Numeric labels (chain "1", atom names of some force fields).
                    vals.push(format_number(*v));
                    self.pos += 1;
                }
                _ => break,
            }
        }
        if vals.is_empty() {
            return Err((
                self.column().max(col),
                "expected one or more values (names or patterns)".into(),
            ));
        }
        Ok(Expr::Str(p, vals))
    }

    fn ints(&mut self, p: IntProp, col: usize) -> PResult<Expr> {
        let mut ranges = Vec::new();
        // Residue numbers with an insertion code (`resid 163A`).
        let mut with_code: Vec<(i64, char)> = Vec::new();
        loop {
            let c = self.column();
            match self.peek().cloned() {
                Some(Tok::Num(v)) => {
                    let lo = as_int(v).ok_or((c, format!("expected an integer, found {v}")))?;
                    self.pos += 1;
                    if self.peek_word().as_deref() == Some("to")
                        || matches!(self.peek(), Some(Tok::Word(w)) if w == ":")
                    {
                        self.pos += 1;
                        let c2 = self.column();
                        match self.peek().cloned() {
                            Some(Tok::Num(v2)) => {
                                let hi = as_int(v2).ok_or((c2, format!("expected an integer, found {v2}")))?;
                                self.pos += 1;
                                ranges.push((lo, hi));
                            }
                            _ => return Err((c2, "expected the end of the range".into())),
                        }
                    } else {
                        ranges.push((lo, lo));
                    }
                }
                Some(Tok::Word(w)) if p == IntProp::Resid && insertion_resid(&w).is_some() => {
                    // "163A": residue 163 with insertion code A (PDB column 27).
                    let (r, code) = insertion_resid(&w).unwrap_or((0, ' '));
                    self.pos += 1;
                    with_code.push((r, code));
                }
                Some(Tok::Word(w)) if !is_keyword(&w) => {
                    // "1:10", "1-10" written without spaces.
                    let parts: Option<(i64, i64)> = w
                        .split_once(':')
                        .or_else(|| w.split_once('-'))
                        .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)));
                    match parts {
                        Some(r) => {
                            ranges.push(r);
                            self.pos += 1;
                        }
                        None => return Err((c, format!("expected an integer or a range like 1:10, found '{w}'"))),
                    }
                }
                _ => break,
            }
        }
        if ranges.is_empty() && with_code.is_empty() {
            return Err((self.column().max(col), "expected one or more integers or ranges".into()));
        }
        // Plain numbers take every insertion code (as VMD's resid); `163A` that residue only.
        let coded = with_code.into_iter().map(|(r, code)| {
            Expr::And(
                Box::new(Expr::Int(IntProp::Resid, vec![(r, r)])),
                Box::new(Expr::Str(StrProp::Insertion, vec![code.to_string()])),
            )
        });
        let mut terms: Vec<Expr> = coded.collect();
        if !ranges.is_empty() {
            terms.insert(0, Expr::Int(p, ranges));
        }
        let first = terms.remove(0);
        Ok(terms
            .into_iter()
            .fold(first, |acc, t| Expr::Or(Box::new(acc), Box::new(t))))
    }
}

/// `163A`: a residue number followed by one letter (an insertion code).
fn insertion_resid(word: &str) -> Option<(i64, char)> {
    let code = word.chars().last().filter(char::is_ascii_alphabetic)?;
    let digits = &word[..word.len() - 1];
    let r: i64 = digits.parse().ok()?;
    Some((r, code))
}

fn as_int(v: f64) -> Option<i64> {
    (v.fract() == 0.0 && v.abs() < 9.0e15).then_some(v as i64)
}

fn format_number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

/// Glob match with `*` and `?`, case-sensitive (as MDAnalysis).
/// A VMD regular expression of the simple kind names use (`C.*`, `H.`, `^CA$`) as a glob: `.*`
/// is `*`, `.` is `?`, anchors are dropped; text without a dot or anchor is returned as it is.
fn regex_as_glob(text: &str) -> String {
    if !text.contains(['.', '^', '$']) {
        return text.to_string();
    }
    text.trim_start_matches('^')
        .trim_end_matches('$')
        .replace(".*", "*")
        .replace('.', "?")
}

fn glob(pattern: &str, s: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = s.chars().collect();
    let (mut pi, mut ti) = (0usize, 0usize);
    let (mut star, mut mark) = (None::<usize>, 0usize);
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(sp) = star {
            pi = sp + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    while pi < p.len() && p[pi] == '*' {
        pi += 1;
    }
    pi == p.len()
}

impl Selection {
    /// Parses selection text.
    pub fn parse(text: &str) -> Result<Selection, SelectionError> {
        let err = |(column, message): (usize, String)| SelectionError {
            column,
            message,
            text: text.to_string(),
            marker: format!("{}^", " ".repeat(column)),
        };
        let toks = tokenize(text).map_err(err)?;
        let mut p = Parser {
            toks: &toks,
            pos: 0,
            end_column: text.chars().count(),
        };
        let expr = p.or_expr().map_err(err)?;
        if p.pos < toks.len() {
            let msg = match &toks[p.pos].0 {
                Tok::RParen => "unbalanced ')'".to_string(),
                Tok::Word(w) => format!("unexpected '{w}' (missing 'and' or 'or'?)"),
                Tok::Num(v) => format!("unexpected number {v}"),
                _ => "unexpected text".to_string(),
            };
            return Err(err((toks[p.pos].1, msg)));
        }
        Ok(Selection {
            expr,
            text: text.to_string(),
        })
    }

    /// The text the selection was parsed from.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// True when the selection needs coordinates (`x`, `within`, ...).
    pub fn needs_positions(&self) -> bool {
        fn walk(e: &Expr) -> bool {
            match e {
                Expr::Compare(p, _, _) => matches!(p, NumProp::X | NumProp::Y | NumProp::Z),
                Expr::Within { .. } | Expr::Structure(_) => true,
                Expr::Not(a) | Expr::SameResidue(a) => walk(a),
                Expr::And(a, b) | Expr::Or(a, b) => walk(a) || walk(b),
                _ => false,
            }
        }
        walk(&self.expr)
    }

    /// Evaluates the selection: one flag per atom. `frame` supplies positions (and the periodic box)
    /// for geometric terms; without a frame, geometric terms select nothing.
    pub fn evaluate(&self, structure: &Structure, frame: Option<&Frame>) -> Vec<bool> {
        let ctx = Ctx {
            s: structure,
            positions: frame
                .map(|f| f.positions_angstrom.as_slice())
                .filter(|p| p.len() == structure.len()),
            cell: frame.and_then(|f| f.cell),
        };
        ctx.eval(&self.expr)
    }

    /// Indices of the selected atoms, ascending.
    pub fn indices(&self, structure: &Structure, frame: Option<&Frame>) -> Vec<u32> {
        self.evaluate(structure, frame)
            .iter()
            .enumerate()
            .filter_map(|(i, &f)| f.then_some(i as u32))
            .collect()
    }
}

struct Ctx<'a> {
    s: &'a Structure,
    positions: Option<&'a [[f32; 3]]>,
    cell: Option<UnitCell>,
}

impl Ctx<'_> {
    fn n(&self) -> usize {
        self.s.len()
    }

    fn by_resname(&self, list: &[&str]) -> Vec<bool> {
        self.s.resnames.iter().map(|r| list.contains(&r.as_str())).collect()
    }

    fn eval(&self, e: &Expr) -> Vec<bool> {
        let n = self.n();
        match e {
            Expr::All => vec![true; n],
            Expr::None => vec![false; n],
            Expr::Structure(codes) => structure::atoms_with(self.s, self.positions, codes),
            Expr::Protein => names::protein_atoms(self.s),
            Expr::Nucleic => self.by_resname(NUCLEIC_RESNAMES),
            Expr::Water => self.by_resname(WATER_RESNAMES),
            Expr::Ion => self.by_resname(ION_RESNAMES),
            Expr::Backbone => {
                let prot = names::protein_atoms(self.s);
                self.s
                    .names
                    .iter()
                    .zip(prot)
                    .map(|(name, p)| p && BACKBONE_NAMES.contains(&name.as_str()))
                    .collect()
            }
            Expr::Sidechain => {
                let prot = names::protein_atoms(self.s);
                self.s
                    .names
                    .iter()
                    .zip(prot)
                    .map(|(name, p)| p && !MAIN_CHAIN_NAMES.contains(&name.as_str()))
                    .collect()
            }
            Expr::Hydrogen => self.s.elements.iter().map(|&el| el == Element(1)).collect(),
            Expr::Str(prop, pats) => (0..n)
                .map(|i| {
                    let altloc: [u8; 1];
                    let v = match prop {
                        StrProp::Name => self.s.names[i].as_str(),
                        StrProp::Type => self.s.types.get(i).map_or("", |t| t.as_str()),
                        StrProp::Resname => self.s.resnames[i].as_str(),
                        StrProp::Element => self.s.elements[i].symbol(),
                        StrProp::Chain => self.s.chains[i].as_str(),
                        StrProp::Segid => self.s.segids[i].as_str(),
                        StrProp::Altloc => {
                            altloc = [self.s.altloc(i)];
                            std::str::from_utf8(&altloc).unwrap_or("").trim()
                        }
                        StrProp::Insertion => {
                            altloc = [self.s.icode(i)];
                            std::str::from_utf8(&altloc).unwrap_or("").trim()
                        }
                    };
                    let case_insensitive = *prop == StrProp::Element;
                    pats.iter().any(|p| {
                        if case_insensitive {
                            glob(&p.to_ascii_uppercase(), &v.to_ascii_uppercase())
                        } else {
                            glob(p, v)
                        }
                    })
                })
                .collect(),
            Expr::Int(prop, ranges) => (0..n)
                .map(|i| {
                    let v = match prop {
                        IntProp::Resid => i64::from(self.s.resids[i]),
                        IntProp::Index => i as i64,
                        IntProp::Bynum => i as i64 + 1,
                    };
                    ranges.iter().any(|&(lo, hi)| v >= lo.min(hi) && v <= hi.max(lo))
                })
                .collect(),
            Expr::Compare(prop, cmp, value) => (0..n)
                .map(|i| {
                    let v = match prop {
                        NumProp::X | NumProp::Y | NumProp::Z => {
                            let k = match prop {
                                NumProp::X => 0,
                                NumProp::Y => 1,
                                _ => 2,
                            };
                            match self.positions {
                                Some(p) => f64::from(p[i][k]),
                                None => return false,
                            }
                        }
                        NumProp::Charge => match &self.s.charges_e {
                            Some(q) => f64::from(q[i]),
                            None => return false,
                        },
                        NumProp::Mass => f64::from(self.s.mass_dalton(i)),
                        NumProp::Radius => match &self.s.radii_angstrom {
                            Some(r) => f64::from(r[i]),
                            None => f64::from(self.s.elements[i].vdw_radius_angstrom()),
                        },
                        // NaN (none in the file) matches no comparison.
                        NumProp::Beta => match &self.s.bfactors {
                            Some(b) => f64::from(b[i]),
                            None => return false,
                        },
                        NumProp::Occupancy => match &self.s.occupancies {
                            Some(o) => f64::from(o[i]),
                            None => return false,
                        },
                    };
                    if v.is_nan() {
                        return false;
                    }
                    match cmp {
                        Cmp::Lt => v < *value,
                        Cmp::Le => v <= *value,
                        Cmp::Gt => v > *value,
                        Cmp::Ge => v >= *value,
                        Cmp::Eq => v == *value,
                        Cmp::Ne => v != *value,
                    }
                })
                .collect(),
            Expr::Not(a) => self.eval(a).into_iter().map(|x| !x).collect(),
            Expr::And(a, b) => {
                let (x, y) = (self.eval(a), self.eval(b));
                x.into_iter().zip(y).map(|(p, q)| p && q).collect()
            }
            Expr::Or(a, b) => {
                let (x, y) = (self.eval(a), self.eval(b));
                x.into_iter().zip(y).map(|(p, q)| p || q).collect()
            }
            Expr::SameResidue(a) => {
                let inner = self.eval(a);
                let starts = self.s.residue_starts();
                let mut out = vec![false; n];
                for w in starts.windows(2) {
                    let (lo, hi) = (w[0], w[1]);
                    if inner[lo..hi].iter().any(|&x| x) {
                        out[lo..hi].iter_mut().for_each(|x| *x = true);
                    }
                }
                out
            }
            Expr::Within {
                distance_angstrom,
                sel,
                include_self,
            } => {
                let inner = self.eval(sel);
                let Some(pos) = self.positions else {
                    return vec![false; n];
                };
                let mut out = within(pos, &inner, *distance_angstrom, self.cell.as_ref());
                for i in 0..n {
                    if inner[i] {
                        out[i] = *include_self;
                    }
                }
                out
            }
        }
    }
}

mod names;
mod structure;
mod suggest;
mod within;
pub use structure::{StructureCodes, has_structure_codes, set_structure_codes};
pub use within::MinImage;
use within::within;
#[cfg(test)]
mod tests;
