//! mmCIF (PDBx) reader: the `_atom_site` loop as atoms and models, `_cell` as the box.
//!
//! Called by `io::load` and the parse benchmarks. A small CIF tokenizer walks the first data
//! block: tags, `loop_` tables, unquoted, single- and double-quoted values and `;` text fields.
//! Every other category is skipped, whatever its quoting. Atom names, residue names, chains and
//! residue numbers come from the `auth_*` columns where present (what PDB files show), else from
//! `label_*`; `pdbx_PDB_model_num` splits models into frames (each must have the first model's
//! atom count); every alternate location is kept as its own atom (as VMD and MDAnalysis do), its
//! `label_alt_id` recorded in [`Structure::altlocs`]; a
//! `partial_charge`/`pdbx_partial_charge`/`charge` column gives partial charges, `occupancy` and
//! `B_iso_or_equiv` the occupancies and B-factors.

use super::ReadError;
use super::fields::{float, int, leading_int, show};
use super::load::Parsed;
use crate::model::element::{from_element_column, guess_from_name};
use crate::model::{Element, Frame, Name8, Structure, UnitCell};
use std::path::Path;

/// Reads a MMCIF file.
pub fn read(path: &Path, bytes: &[u8]) -> Result<Parsed, ReadError> {
    let mut tok = Tokenizer { bytes, pos: 0 };
    let mut site = AtomSite::default();
    let mut cell = [None::<f64>; 6];
    let mut blocks = 0usize;
    let mut pending: Option<Token<'_>> = None;
    loop {
        let t = match pending.take() {
            Some(t) => t,
            None => match tok.next(path)? {
                Some(t) => t,
                None => break,
            },
        };
        match t.kind {
            Kind::Data => {
                blocks += 1;
                if blocks > 1 {
                    break;
                }
            }
            Kind::Save | Kind::Global | Kind::Stop => {}
            Kind::Value => {
                return Err(tok.err(
                    path,
                    t.offset,
                    format!("expected a tag or loop_, found the value {:?}", show(t.text)),
                ));
            }
            Kind::Tag => {
                let Some(v) = tok.next(path)? else {
                    return Err(tok.err(
                        path,
                        bytes.len(),
                        format!("expected a value for {}, found the end of the file", show(t.text)),
                    ));
                };
                if v.kind != Kind::Value {
                    return Err(tok.err(
                        path,
                        v.offset,
                        format!("expected a value for {}, found {:?}", show(t.text), show(v.text)),
                    ));
                }
                let k = match t.text.to_ascii_lowercase().as_slice() {
                    b"_cell.length_a" => Some(0),
                    b"_cell.length_b" => Some(1),
                    b"_cell.length_c" => Some(2),
                    b"_cell.angle_alpha" => Some(3),
                    b"_cell.angle_beta" => Some(4),
                    b"_cell.angle_gamma" => Some(5),
                    _ => None,
                };
                if let Some(k) = k {
                    cell[k] = float(v.text);
                }
            }
            Kind::Loop => {
                let loop_offset = t.offset;
                let mut tags: Vec<&[u8]> = Vec::new();
                let first_value = loop {
                    match tok.next(path)? {
                        Some(x) if x.kind == Kind::Tag => tags.push(x.text),
                        other => break other,
                    }
                };
                if tags.is_empty() {
                    return Err(tok.err(path, loop_offset, "expected tags after loop_, found none"));
                }
                let is_site = tags
                    .iter()
                    .all(|t| t.len() > 11 && t[..11].eq_ignore_ascii_case(b"_atom_site."));
                let columns = if is_site { Some(Columns::new(&tags)) } else { None };
                if let Some(c) = &columns
                    && (c.x.is_none() || c.y.is_none() || c.z.is_none())
                {
                    return Err(tok.err(
                        path,
                        loop_offset,
                        "expected _atom_site.Cartn_x, Cartn_y and Cartn_z columns",
                    ));
                }
                let mut row: Vec<&[u8]> = Vec::with_capacity(tags.len());
                let mut row_offset = 0;
                let mut next = first_value;
                loop {
                    match next {
                        Some(v) if v.kind == Kind::Value => {
                            if row.is_empty() {
                                row_offset = v.offset;
                            }
                            row.push(if v.quoted { v.text } else { null_to_empty(v.text) });
                            if row.len() == tags.len() {
                                if let Some(c) = &columns {
                                    site.row(path, &Locator::Text(&tok), c, &TextRow(&row), row_offset)?;
                                }
                                row.clear();
                            }
                        }
                        other => {
                            pending = other;
                            break;
                        }
                    }
                    next = tok.next(path)?;
                }
                if !row.is_empty() {
                    return Err(tok.err(
                        path,
                        row_offset,
                        format!(
                            "expected {} values per row of this loop, the last row has {}",
                            tags.len(),
                            row.len()
                        ),
                    ));
                }
            }
        }
    }
    site.finish_frame(path, &Locator::Text(&tok))?;
    finish(path, site, cell)
}

/// The atoms, frames, box and warnings from a completed `_atom_site` table and the `_cell` values
/// (shared with the BinaryCIF reader).
pub(super) fn finish(path: &Path, mut site: AtomSite, cell: [Option<f64>; 6]) -> Result<Parsed, ReadError> {
    if site.structure.is_empty() {
        return Err(ReadError::line(
            path,
            1,
            "expected an _atom_site loop with atoms, found none (is this an mmCIF file?)",
        ));
    }
    if let [Some(a), Some(b), Some(c), Some(al), Some(be), Some(ga)] = cell {
        let uc = UnitCell::new([a, b, c], [al, be, ga]);
        let unit = [a, b, c].iter().all(|&x| (x - 1.0).abs() < 1e-9);
        if uc.is_valid() && !unit {
            for f in &mut site.frames {
                f.cell = Some(uc);
            }
        }
    }
    let mut warnings = Vec::new();
    if site.altlocs.iter().any(|&a| a != b' ') {
        site.structure.altlocs = Some(std::mem::take(&mut site.altlocs));
    }
    if site.icodes.iter().any(|&a| a != b' ') {
        site.structure.icodes = Some(std::mem::take(&mut site.icodes));
    }
    if let Some(w) = site.stopped.take() {
        warnings.push(w);
    }
    if site.long_names > 0 {
        warnings.push(format!("{} names longer than 8 characters truncated", site.long_names));
    }
    let n = site.structure.len();
    let unknown = site
        .structure
        .elements
        .iter()
        .filter(|e| **e == Element::UNKNOWN)
        .count();
    if unknown > 0 {
        warnings.push(format!("{unknown} of {n} atoms have an unknown element"));
    }
    if site.has_charges {
        site.structure.charges_e = Some(site.charges);
    }
    if site.bfactors.iter().any(|v| v.is_finite()) {
        site.structure.bfactors = Some(site.bfactors);
    }
    if site.occupancies.iter().any(|v| v.is_finite()) {
        site.structure.occupancies = Some(site.occupancies);
    }
    Ok(Parsed {
        structure: site.structure,
        frames: site.frames,
        warnings,
        frame_energies_hartree: Vec::new(),
    })
}

/// `.` (inapplicable) and `?` (unknown) read as empty when unquoted.
fn null_to_empty(v: &[u8]) -> &[u8] {
    if v == b"." || v == b"?" { &[] } else { v }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Data,
    Save,
    Global,
    Stop,
    Loop,
    Tag,
    Value,
}

#[derive(Clone, Copy, Debug)]
struct Token<'a> {
    kind: Kind,
    text: &'a [u8],
    offset: usize,
    quoted: bool,
}

pub(super) struct Tokenizer<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Tokenizer<'a> {
    /// An error at a byte offset, reported by line number.
    fn err(&self, path: &Path, offset: usize, message: impl Into<String>) -> ReadError {
        let upto = self.bytes.get(..offset.min(self.bytes.len())).unwrap_or(&[]);
        ReadError::line(path, memchr::memchr_iter(b'\n', upto).count() + 1, message)
    }

    fn at_line_start(&self, i: usize) -> bool {
        i == 0 || self.bytes.get(i - 1) == Some(&b'\n')
    }

    fn next(&mut self, path: &Path) -> Result<Option<Token<'a>>, ReadError> {
        let b = self.bytes;
        loop {
            while self.pos < b.len() && b[self.pos].is_ascii_whitespace() {
                self.pos += 1;
            }
            let Some(&c) = b.get(self.pos) else { return Ok(None) };
            if c == b'#' {
                self.pos = memchr::memchr(b'\n', &b[self.pos..]).map_or(b.len(), |i| self.pos + i);
                continue;
            }
            let start = self.pos;
            if c == b';' && self.at_line_start(start) {
                // Text field: up to the next line that starts with ';'.
                let mut search = start + 1;
                loop {
                    let Some(nl) = memchr::memchr(b'\n', &b[search..]) else {
                        return Err(self.err(
                            path,
                            start,
                            "expected a line starting with ';' to close this text field, found the end of the file",
                        ));
                    };
                    let line_start = search + nl + 1;
                    if b.get(line_start) == Some(&b';') {
                        self.pos = line_start + 1;
                        let text = &b[start + 1..line_start.saturating_sub(1).max(start + 1)];
                        return Ok(Some(Token {
                            kind: Kind::Value,
                            text,
                            offset: start,
                            quoted: true,
                        }));
                    }
                    search = line_start;
                }
            }
            if c == b'\'' || c == b'"' {
                let mut i = start + 1;
                loop {
                    match b.get(i) {
                        None | Some(b'\n') | Some(b'\r') => {
                            return Err(self.err(
                                path,
                                start,
                                format!("expected a closing {} on the same line", c as char),
                            ));
                        }
                        Some(&q) if q == c && b.get(i + 1).is_none_or(|n| n.is_ascii_whitespace()) => {
                            self.pos = i + 1;
                            return Ok(Some(Token {
                                kind: Kind::Value,
                                text: &b[start + 1..i],
                                offset: start,
                                quoted: true,
                            }));
                        }
                        _ => i += 1,
                    }
                }
            }
            let end = b[start..]
                .iter()
                .position(|x| x.is_ascii_whitespace())
                .map_or(b.len(), |i| start + i);
            self.pos = end;
            let text = &b[start..end];
            let lower_starts = |p: &[u8]| text.len() >= p.len() && text[..p.len()].eq_ignore_ascii_case(p);
            let kind = if c == b'_' {
                Kind::Tag
            } else if text.eq_ignore_ascii_case(b"loop_") {
                Kind::Loop
            } else if lower_starts(b"data_") {
                Kind::Data
            } else if lower_starts(b"save_") {
                Kind::Save
            } else if text.eq_ignore_ascii_case(b"global_") {
                Kind::Global
            } else if text.eq_ignore_ascii_case(b"stop_") {
                Kind::Stop
            } else {
                Kind::Value
            };
            return Ok(Some(Token {
                kind,
                text,
                offset: start,
                quoted: false,
            }));
        }
    }
}

/// Positions of the `_atom_site` columns this reader uses.
#[derive(Default)]
pub(super) struct Columns {
    pub(super) type_symbol: Option<usize>,
    pub(super) name: Option<usize>,
    pub(super) altloc: Option<usize>,
    pub(super) icode: Option<usize>,
    pub(super) resname: Option<usize>,
    pub(super) chain: Option<usize>,
    pub(super) resid: Option<usize>,
    pub(super) x: Option<usize>,
    pub(super) y: Option<usize>,
    pub(super) z: Option<usize>,
    pub(super) model: Option<usize>,
    pub(super) charge: Option<usize>,
    pub(super) occupancy: Option<usize>,
    pub(super) bfactor: Option<usize>,
}

impl Columns {
    pub(super) fn new(tags: &[&[u8]]) -> Columns {
        let find = |names: &[&str]| {
            names.iter().find_map(|n| {
                tags.iter()
                    .position(|t| t.get(11..).is_some_and(|s| s.eq_ignore_ascii_case(n.as_bytes())))
            })
        };
        Columns {
            type_symbol: find(&["type_symbol"]),
            name: find(&["auth_atom_id", "label_atom_id"]),
            altloc: find(&["label_alt_id", "auth_alt_id"]),
            icode: find(&["pdbx_PDB_ins_code"]),
            resname: find(&["auth_comp_id", "label_comp_id"]),
            chain: find(&["auth_asym_id", "label_asym_id"]),
            resid: find(&["auth_seq_id", "label_seq_id"]),
            x: find(&["Cartn_x"]),
            y: find(&["Cartn_y"]),
            z: find(&["Cartn_z"]),
            model: find(&["pdbx_PDB_model_num"]),
            charge: find(&["partial_charge", "pdbx_partial_charge", "charge"]),
            occupancy: find(&["occupancy"]),
            bfactor: find(&["B_iso_or_equiv"]),
        }
    }
}

#[derive(Default)]
pub(super) struct AtomSite {
    structure: Structure,
    charges: Vec<f32>,
    has_charges: bool,
    /// Occupancies and B-factors of the topology atoms (NaN where null).
    occupancies: Vec<f32>,
    bfactors: Vec<f32>,
    frames: Vec<Frame>,
    positions: Vec<[f32; 3]>,
    model: Option<i64>,
    model_offset: usize,
    topology_done: bool,
    /// Alternate-location indicator of each topology atom (`b' '` for none).
    altlocs: Vec<u8>,
    /// Insertion code of each topology atom's residue (`b' '` for none).
    icodes: Vec<u8>,
    long_names: usize,
    /// Set when a model's atoms were not the first model's: that model and the ones after it are
    /// not read, and this says so.
    stopped: Option<String>,
}

impl AtomSite {
    pub(super) fn row<R: SiteRow>(
        &mut self,
        path: &Path,
        at: &Locator<'_>,
        c: &Columns,
        row: &R,
        offset: usize,
    ) -> Result<(), ReadError> {
        if self.stopped.is_some() {
            return Ok(());
        }
        let get = |k: Option<usize>| row.text(k);
        let model = row.int_exact(c.model).unwrap_or(1);
        if self.model != Some(model) {
            if self.model.is_some() {
                self.finish_frame(path, at)?;
                if self.stopped.is_some() {
                    return Ok(());
                }
            }
            self.model = Some(model);
            self.model_offset = offset;
        }
        let name_f = get(c.name);
        let resname_f = get(c.resname);
        let chain = Name8::new(get(c.chain));
        let resid = if row.is_empty(c.resid) {
            0
        } else {
            row.int_leading(c.resid)
                .and_then(|r| i32::try_from(r).ok())
                .ok_or_else(|| {
                    at.err(
                        path,
                        offset,
                        format!("expected a residue number in _atom_site, found {:?}", row.show(c.resid)),
                    )
                })?
        };
        let name = Name8::new(name_f);
        let mut xyz = [0f32; 3];
        for (k, col) in [c.x, c.y, c.z].into_iter().enumerate() {
            xyz[k] = row.number(col).ok_or_else(|| {
                at.err(
                    path,
                    offset,
                    format!(
                        "expected Cartn_{} (a number), found {:?}",
                        ["x", "y", "z"][k],
                        row.show(col)
                    ),
                )
            })? as f32;
        }
        if self.topology_done {
            let n = self.structure.len();
            if self.positions.len() >= n {
                self.stop(path, at, &format!("more than {n}"));
                return Ok(());
            }
        } else {
            let element = from_element_column(get(c.type_symbol)).unwrap_or_else(|| guess_from_name(name_f, resname_f));
            for f in [name_f, resname_f, get(c.chain)] {
                if Name8::would_truncate(f) {
                    self.long_names += 1;
                }
            }
            self.structure
                .push_atom(element, name, Name8::new(resname_f), resid, chain, Name8::EMPTY);
            // A one-character indicator as in PDB files; longer ids keep their first character.
            self.altlocs.push(get(c.altloc).first().copied().unwrap_or(b' '));
            // `?` and `.` are mmCIF's "no value".
            self.icodes.push(
                get(c.icode)
                    .first()
                    .copied()
                    .filter(u8::is_ascii_alphanumeric)
                    .unwrap_or(b' '),
            );
            let optional = |col: Option<usize>| {
                row.number(col)
                    .filter(|v| col.is_some() && v.is_finite())
                    .map_or(f32::NAN, |v| v as f32)
            };
            self.occupancies.push(optional(c.occupancy));
            self.bfactors.push(optional(c.bfactor));
            if c.charge.is_some() {
                let v = if row.is_empty(c.charge) {
                    0.0
                } else {
                    row.number(c.charge).ok_or_else(|| {
                        at.err(
                            path,
                            offset,
                            format!("expected a partial charge, found {:?}", row.show(c.charge)),
                        )
                    })?
                };
                self.charges.push(v as f32);
                self.has_charges = true;
            }
        }
        self.positions.push(xyz);
        Ok(())
    }

    pub(super) fn finish_frame(&mut self, path: &Path, at: &Locator<'_>) -> Result<(), ReadError> {
        if self.positions.is_empty() && !self.topology_done {
            return Ok(());
        }
        if self.stopped.is_some() {
            return Ok(());
        }
        if self.topology_done && self.positions.len() != self.structure.len() {
            self.stop(path, at, &self.positions.len().to_string());
            return Ok(());
        }
        self.topology_done = true;
        self.frames.push(Frame {
            positions_angstrom: std::mem::take(&mut self.positions),
            ..Frame::default()
        });
        Ok(())
    }
}

impl AtomSite {
    /// A model whose atoms are not the first model's (an ensemble whose models differ, or a
    /// damaged file): the models before it are kept, and no later row is read.
    fn stop(&mut self, path: &Path, at: &Locator<'_>, found: &str) {
        let place = match at.err(path, self.model_offset, "").location {
            crate::io::Location::Line(n) => format!("line {n}"),
            _ => format!("_atom_site row {}", self.model_offset + 1),
        };
        let subject = format!("model {} ({place})", self.model.unwrap_or(0));
        self.stopped = Some(super::fields::unlike_first(
            &subject,
            "model",
            found,
            self.structure.len(),
            self.frames.len(),
        ));
        self.positions.clear();
    }
}

/// Where an `_atom_site` row came from, for error messages: a byte offset of a text file (reported
/// as its line) or a row number of a binary table.
pub(super) enum Locator<'a> {
    Text(&'a Tokenizer<'a>),
    /// BinaryCIF: offsets are 0-based row numbers of `_atom_site`.
    Rows,
}

impl Locator<'_> {
    fn err(&self, path: &Path, offset: usize, message: impl Into<String>) -> ReadError {
        match self {
            Locator::Text(tok) => tok.err(path, offset, message),
            Locator::Rows => ReadError::file(path, format!("_atom_site row {}: {}", offset + 1, message.into())),
        }
    }
}

/// One `_atom_site` row as the reader needs it: text of a column (empty when absent or null) and
/// its numbers. Text rows parse on demand; BinaryCIF rows hold decoded numbers.
pub(super) trait SiteRow {
    fn text(&self, col: Option<usize>) -> &[u8];
    /// A number (coordinates, charges).
    fn number(&self, col: Option<usize>) -> Option<f64>;
    /// A whole integer (model numbers).
    fn int_exact(&self, col: Option<usize>) -> Option<i64>;
    /// The leading integer (residue numbers such as `380A`).
    fn int_leading(&self, col: Option<usize>) -> Option<i64>;
    /// True when the column is absent or null in this row.
    fn is_empty(&self, col: Option<usize>) -> bool;
    /// The value as shown in messages.
    fn show(&self, col: Option<usize>) -> String;
}

/// A row of a text loop: one field per tag.
struct TextRow<'r, 'a>(&'r [&'a [u8]]);

impl SiteRow for TextRow<'_, '_> {
    #[inline]
    fn text(&self, col: Option<usize>) -> &[u8] {
        col.and_then(|k| self.0.get(k).copied()).unwrap_or(&[])
    }
    #[inline]
    fn number(&self, col: Option<usize>) -> Option<f64> {
        float(self.text(col))
    }
    #[inline]
    fn int_exact(&self, col: Option<usize>) -> Option<i64> {
        int(self.text(col))
    }
    #[inline]
    fn int_leading(&self, col: Option<usize>) -> Option<i64> {
        leading_int(self.text(col))
    }
    #[inline]
    fn is_empty(&self, col: Option<usize>) -> bool {
        self.text(col).is_empty()
    }
    fn show(&self, col: Option<usize>) -> String {
        show(self.text(col))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO_MODELS: &str = "data_test
#
_entry.id TEST
_struct.title 'it's a title with # inside'
_cell.length_a 10.0
_cell.length_b 20.0
_cell.length_c 30.0
_cell.angle_alpha 90
_cell.angle_beta 90
_cell.angle_gamma 90
loop_
_citation.id
_citation.title
1
;A multi-line
text field with 'quotes' and _fake.tags
;
#
loop_
_atom_site.group_PDB
_atom_site.id
_atom_site.type_symbol
_atom_site.label_atom_id
_atom_site.label_alt_id
_atom_site.label_comp_id
_atom_site.label_asym_id
_atom_site.label_seq_id
_atom_site.Cartn_x
_atom_site.Cartn_y
_atom_site.Cartn_z
_atom_site.auth_seq_id
_atom_site.auth_asym_id
_atom_site.pdbx_PDB_model_num
ATOM 1 N N . ALA A 1 1.0 2.0 3.0 10 B 1
ATOM 2 C CA A ALA A 1 2.0 2.0 3.0 10 B 1
ATOM 3 C CA B ALA A 1 2.1 2.0 3.0 10 B 1
HETATM 4 O \"O5'\" . HOH C . 5.0 6.0 7.0 20 B 1
ATOM 1 N N . ALA A 1 1.5 2.0 3.0 10 B 2
ATOM 2 C CA A ALA A 1 2.5 2.0 3.0 10 B 2
ATOM 3 C CA B ALA A 1 2.6 2.0 3.0 10 B 2
HETATM 4 O \"O5'\" . HOH C . 5.5 6.0 7.0 20 B 2
";

    #[test]
    fn models_quotes_and_text_fields() {
        let p = read(Path::new("t.cif"), TWO_MODELS.as_bytes()).unwrap();
        let s = &p.structure;
        assert_eq!(s.len(), 4, "both alternate locations are atoms");
        assert_eq!(s.altlocs.as_deref(), Some(&b" AB "[..]));
        assert_eq!(p.frames.len(), 2);
        assert_eq!(s.names[3].as_str(), "O5'");
        assert_eq!(s.resids, vec![10, 10, 10, 20]);
        assert_eq!(s.chains[0].as_str(), "B");
        assert_eq!(s.elements, vec![Element::N, Element::C, Element::C, Element::O]);
        assert_eq!(p.frames[1].positions_angstrom[3], [5.5, 6.0, 7.0]);
        assert_eq!(p.frames[1].positions_angstrom[2], [2.6, 2.0, 3.0]);
        assert_eq!(p.frames[0].cell.unwrap().lengths_angstrom, [10.0, 20.0, 30.0]);
    }

    #[test]
    fn short_model_and_bad_rows_are_located() {
        // A model with fewer atoms than the first: the first is read, and the warning names
        // where the short model starts.
        let text = TWO_MODELS.replace("HETATM 4 O \"O5'\" . HOH C . 5.5 6.0 7.0 20 B 2\n", "");
        let p = read(Path::new("t.cif"), text.as_bytes()).unwrap();
        assert_eq!(p.frames.len(), 1);
        let w = p.warnings.join("; ");
        assert!(
            w.contains("model 2 (line 38) has 3 atoms") && w.contains("the 1 model(s) before it"),
            "{w}"
        );
        let text = TWO_MODELS.replace("5.5 6.0 7.0 20 B 2\n", "5.5 6.0 7.0 20 B\n");
        let e = read(Path::new("t.cif"), text.as_bytes()).unwrap_err();
        assert!(e.message.contains("values per row"), "{e}");
        let e = read(Path::new("t.cif"), b"data_x\n;never closed\n").unwrap_err();
        assert_eq!(e.location, crate::io::Location::Line(2));
        let e = read(Path::new("t.cif"), b"data_x\n_cell.length_a 'open\n").unwrap_err();
        assert_eq!(e.location, crate::io::Location::Line(2));
    }
}
