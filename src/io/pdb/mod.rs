//! PDB and PQR readers: atoms, models as frames, CRYST1 boxes, CONECT bonds.
//!
//! Called by `io::load` (and the parse benchmarks) with the whole decompressed file. Both formats
//! share one record loop; they differ only in how an ATOM/HETATM line is split: PDB by the fixed
//! columns of the wwPDB format (hybrid-36 serials and residue numbers accepted, five-digit residue
//! numbers spilling into the insertion-code column accepted), PQR by whitespace as APBS reads it:
//! a record is a line whose first field is ATOM or HETATM in any case (a five-digit serial written
//! against HETATM split off), charge and radius are the last two fields, the chain id is optional
//! and may be written against the residue number (`A1001`); a record whose coordinates ran
//! together in PDB2PQR's fixed columns is read from the PDB columns.
//!
//! Multi-model files give one frame per MODEL/ENDMDL block (or per END-terminated block); every
//! model must have the first model's atom count. Every alternate location is kept as its own atom
//! (as VMD and MDAnalysis do), its indicator recorded in [`Structure::altlocs`]. A CRYST1 record
//! of 1 x 1 x 1 A (the NMR convention for "no cell") is not a box; in a file whose first CRYST1
//! follows the first model's ENDMDL, each CRYST1 is the box of the model before it. Two-character chain ids in
//! columns 21-22 (assemblies of more than 62 chains) are read whole when column 21 cannot be the end
//! of a four-character residue name.

use super::ReadError;
use super::fields::{Lines, cols, float, hybrid36, leading_int, show, tokens};
use super::load::Parsed;
use crate::model::element::{NameGuessCache, from_pdb_element_field, guess_from_pdb_name};
use crate::model::{BondSource, Element, Frame, Name8, Structure, UnitCell};
use std::path::Path;

/// Reads a PDB file (multi-model files give one frame per model).
pub fn read(path: &Path, bytes: &[u8]) -> Result<Parsed, ReadError> {
    Reader::new(path, Flavor::Pdb).run(bytes)
}

/// Reads a PQR file (charges and radii).
pub fn read_pqr(path: &Path, bytes: &[u8]) -> Result<Parsed, ReadError> {
    Reader::new(path, Flavor::Pqr).run(bytes)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Flavor {
    Pdb,
    Pqr,
}

/// Whether a PQR line is an atom record: its first whitespace-separated field is ATOM or HETATM,
/// in any case (APBS's rule).
fn pqr_atom_record(line: &[u8]) -> bool {
    tokens(line)
        .next()
        .is_some_and(|t| t.eq_ignore_ascii_case(b"ATOM") || t.eq_ignore_ascii_case(b"HETATM"))
}

/// The whitespace-separated fields of a PQR atom record, the keyword split from a serial written
/// against it: fixed PDB columns put a five-digit serial right after `HETATM` (`HETATM10234`).
fn split_record_keyword(line: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut fields = tokens(line);
    let first = fields.next().unwrap_or_default();
    let keyword_len = [b"HETATM".as_slice(), b"ATOM"]
        .into_iter()
        .find(|k| first.len() > k.len() && first.get(..k.len()).is_some_and(|p| p.eq_ignore_ascii_case(k)))
        .map_or(first.len(), <[u8]>::len);
    let (keyword, serial) = first.split_at(keyword_len);
    std::iter::once(keyword)
        .chain((!serial.is_empty()).then_some(serial))
        .chain(fields)
}

/// The fields of one ATOM/HETATM record.
struct AtomRecord {
    serial: Option<i64>,
    name: Name8,
    altloc: u8,
    /// Insertion code (column 27), `b' '` for none.
    icode: u8,
    resname: Name8,
    chain: Name8,
    resid: i32,
    segid: Name8,
    element: Element,
    position: [f32; 3],
    charge: f32,
    radius: f32,
    /// Columns 55-60 and 61-66 (NaN where blank or not a number; PQR records have neither).
    occupancy: f32,
    bfactor: f32,
}

/// A number in a fixed-column field, NaN where the field is blank or not a number.
fn column_number(field: &[u8]) -> f32 {
    std::str::from_utf8(field)
        .ok()
        .map(str::trim)
        .and_then(|t| t.parse::<f32>().ok())
        .filter(|v| v.is_finite())
        .unwrap_or(f32::NAN)
}

struct Reader<'p> {
    path: &'p Path,
    flavor: Flavor,
    structure: Structure,
    charges: Vec<f32>,
    radii: Vec<f32>,
    occupancies: Vec<f32>,
    bfactors: Vec<f32>,
    serials: Vec<i64>,
    frames: Vec<Frame>,
    positions: Vec<[f32; 3]>,
    /// Box given before the first model: applies to every frame without its own.
    global_cell: Option<UnitCell>,
    frame_cell: Option<UnitCell>,
    /// True once the first model's atoms (the topology) are complete.
    topology_done: bool,
    /// Line of the MODEL record (or first atom) that opened the current frame.
    frame_start_line: usize,
    frame_open: bool,
    /// Alternate-location indicator of each topology atom.
    altlocs: Vec<u8>,
    icodes: Vec<u8>,
    conect: Vec<[i64; 2]>,
    warnings: Vec<String>,
    long_names: usize,
    guesses: NameGuessCache,
    /// Added to the residue numbers of the current chain once they have wrapped past 9999.
    resid_offset: i64,
    /// A model differed from the first: no further models are read.
    models_stopped: bool,
    /// Decided by the first CRYST1: whether it came after a finished model (`MODEL ... ENDMDL
    /// CRYST1`, each box after the model it belongs to) rather than before one.
    cryst1_after_models: Option<bool>,
}

impl<'p> Reader<'p> {
    fn new(path: &'p Path, flavor: Flavor) -> Reader<'p> {
        Reader {
            path,
            flavor,
            structure: Structure::default(),
            charges: Vec::new(),
            radii: Vec::new(),
            occupancies: Vec::new(),
            bfactors: Vec::new(),
            serials: Vec::new(),
            frames: Vec::new(),
            positions: Vec::new(),
            global_cell: None,
            frame_cell: None,
            topology_done: false,
            frame_start_line: 0,
            frame_open: false,
            altlocs: Vec::new(),
            icodes: Vec::new(),
            conect: Vec::new(),
            warnings: Vec::new(),
            long_names: 0,
            guesses: NameGuessCache::default(),
            resid_offset: 0,
            models_stopped: false,
            cryst1_after_models: None,
        }
    }

    fn err(&self, line: usize, message: impl Into<String>) -> ReadError {
        ReadError::line(self.path, line, message)
    }

    fn run(mut self, bytes: &[u8]) -> Result<Parsed, ReadError> {
        let mut last_line = 0;
        // Whether an END or ENDMDL record came, and whether the last record is a coordinate line:
        // a PDB file that ends on an ATOM line without either was most likely cut short.
        let (mut ended, mut ends_on_atom) = (false, false);
        for (no, line) in Lines::new(bytes) {
            last_line = no;
            let tag = cols(line, 0, 6);
            if !line.trim_ascii().is_empty() {
                ends_on_atom = tag == b"ATOM  " || tag == b"HETATM";
                ended |= tag.starts_with(b"END");
            }
            if self.flavor == Flavor::Pqr && pqr_atom_record(line) {
                // PQR is whitespace-separated: APBS and PDB2PQR also write `ATOM 5 C ...` with one
                // space, and APBS takes the keyword in any case.
                self.atom(no, line)?;
                continue;
            }
            match tag {
                b"ATOM  " | b"HETATM" => self.atom(no, line)?,
                b"MODEL " | b"MODEL" => {
                    if self.frame_open && !self.positions.is_empty() {
                        self.finish_frame(no)?;
                    }
                    self.frame_open = true;
                    self.frame_start_line = no;
                    self.frame_cell = None;
                }
                b"ENDMDL" => {
                    self.finish_frame(no)?;
                }
                b"CRYST1" => self.cryst1(no, line)?,
                b"CONECT" => self.conect_record(no, line),
                _ if line.trim_ascii_end() == b"END" && !self.positions.is_empty() => self.finish_frame(no)?,
                _ if self.structure.title.is_empty() && (tag == b"TITLE " || tag == b"HEADER") => {
                    self.structure.title = String::from_utf8_lossy(cols(line, 10, 80).trim_ascii()).into_owned();
                }
                _ => {}
            }
        }
        let n = self.structure.len();
        if self.models_stopped {
        } else if self.topology_done && self.frame_open && self.positions.len() < n {
            // A last model cut short (a file still being written, or truncated): keep the complete
            // models and say so.
            self.warnings.push(super::cut_short_lines_warning(
                self.frames.len() as u64,
                self.frame_start_line,
                last_line,
            ));
        } else if !self.positions.is_empty() || (self.frame_open && self.topology_done) {
            if self.flavor == Flavor::Pdb && !ended && ends_on_atom {
                self.warnings.push(format!(
                    "the file ends on an ATOM line at line {last_line} with no END record: it may have been cut \
                     short (atoms read: {})",
                    self.positions.len()
                ));
            }
            self.finish_frame(last_line + 1)?;
        }
        if self.structure.is_empty() {
            let what = match self.flavor {
                Flavor::Pdb => "PDB",
                Flavor::Pqr => "PQR",
            };
            return Err(self.err(
                last_line.max(1),
                format!("expected ATOM or HETATM records, found none (is this a {what} file?)"),
            ));
        }
        self.finish()
    }

    fn atom(&mut self, no: usize, line: &[u8]) -> Result<(), ReadError> {
        if self.models_stopped {
            return Ok(());
        }
        let rec = match self.flavor {
            Flavor::Pdb => self.pdb_atom(no, line)?,
            Flavor::Pqr => self.pqr_atom(no, line)?,
        };
        if !self.frame_open {
            self.frame_open = true;
            self.frame_start_line = no;
        }
        if self.topology_done {
            let n = self.structure.len();
            if self.positions.len() >= n {
                self.stop_models(&format!("more than {n}"));
                return Ok(());
            }
            if self.positions.capacity() == 0 {
                self.positions.reserve_exact(n);
            }
        } else {
            let resid = self.unwrapped_resid(&rec);
            self.structure
                .push_atom(rec.element, rec.name, rec.resname, resid, rec.chain, rec.segid);
            self.serials.push(rec.serial.unwrap_or(-1));
            self.altlocs.push(if rec.altloc == 0 { b' ' } else { rec.altloc });
            self.icodes.push(rec.icode);
            self.occupancies.push(rec.occupancy);
            self.bfactors.push(rec.bfactor);
            if self.flavor == Flavor::Pqr {
                self.charges.push(rec.charge);
                self.radii.push(rec.radius);
            }
        }
        self.positions.push(rec.position);
        Ok(())
    }

    /// The residue number of a topology atom with the four-digit column's wrap undone: in a PDB
    /// file, a number that falls by more than 5000 within one chain and segment (9999, then 0) has
    /// passed 9999, and counts on from 10000 (as MDAnalysis reads it).
    fn unwrapped_resid(&mut self, rec: &AtomRecord) -> i32 {
        if self.flavor != Flavor::Pdb {
            return rec.resid;
        }
        let n = self.structure.len();
        let same_chain =
            n > 0 && self.structure.chains[n - 1] == rec.chain && self.structure.segids[n - 1] == rec.segid;
        if !same_chain {
            self.resid_offset = 0;
            return rec.resid;
        }
        let prev = i64::from(self.structure.resids[n - 1]);
        let mut resid = i64::from(rec.resid) + self.resid_offset;
        while resid - prev < -5000 {
            self.resid_offset += 10_000;
            resid += 10_000;
        }
        i32::try_from(resid).unwrap_or(rec.resid)
    }

    fn pdb_atom(&mut self, no: usize, line: &[u8]) -> Result<AtomRecord, ReadError> {
        if line.len() < 54 {
            return Err(self.err(
                no,
                format!(
                    "expected x, y, z in columns 31-54 of this atom record, but the line has {} characters",
                    line.len()
                ),
            ));
        }
        let mut xyz = [0f32; 3];
        for (k, (a, b)) in [(30, 38), (38, 46), (46, 54)].into_iter().enumerate() {
            let field = cols(line, a, b);
            xyz[k] = match float(field) {
                Some(v) => v as f32,
                None => {
                    return Err(self.err(
                        no,
                        format!(
                            "expected {} coordinate in columns {}-{}, found {:?}",
                            ["x", "y", "z"][k],
                            a + 1,
                            b,
                            show(field)
                        ),
                    ));
                }
            };
        }
        let two_char_chain = two_char_chain(line);
        let resname_field = if two_char_chain {
            cols(line, 17, 20)
        } else {
            cols(line, 17, 21)
        };
        let resname = Name8::new(resname_field);
        let icode = line.get(26).copied().unwrap_or(b' ');
        let resid_field = cols(line, 22, 26);
        let resid = if icode.is_ascii_digit() && resid_field.iter().all(u8::is_ascii_digit) {
            // A five-digit residue number written over the insertion-code column.
            leading_int(cols(line, 22, 27))
        } else if resid_field.trim_ascii().is_empty() {
            Some(0)
        } else {
            hybrid36(resid_field, 4)
        };
        let Some(resid) = resid.and_then(|r| i32::try_from(r).ok()) else {
            return Err(self.err(
                no,
                format!(
                    "expected a residue number in columns 23-26, found {:?}",
                    show(resid_field)
                ),
            ));
        };
        let name_field = cols(line, 12, 16);
        let name = Name8::new(name_field);
        let element = if self.topology_done {
            Element::UNKNOWN
        } else {
            from_pdb_element_field(cols(line, 76, 78)).unwrap_or_else(|| guess_from_pdb_name(name_field, resname_field))
        };
        Ok(AtomRecord {
            serial: hybrid36(cols(line, 6, 11), 5),
            name,
            altloc: line.get(16).copied().unwrap_or(b' '),
            icode: if icode.is_ascii_alphabetic() { icode } else { b' ' },
            resname,
            chain: Name8::new(if two_char_chain {
                cols(line, 20, 22)
            } else {
                cols(line, 21, 22)
            }),
            resid,
            segid: Name8::new(cols(line, 72, 76)),
            element,
            position: xyz,
            charge: 0.0,
            radius: 0.0,
            occupancy: column_number(cols(line, 54, 60)),
            bfactor: column_number(cols(line, 60, 66)),
        })
    }

    /// A PQR atom record by whitespace; failing that, a record in PDB2PQR's fixed PDB columns
    /// whose coordinates ran together (`-100.123-200.456`, large systems), with charge and radius
    /// the two fields after column 54.
    fn pqr_atom(&mut self, no: usize, line: &[u8]) -> Result<AtomRecord, ReadError> {
        match self.pqr_atom_by_fields(no, line) {
            Ok(rec) => Ok(rec),
            Err(e) => self.pqr_atom_in_columns(no, line).ok_or(e),
        }
    }

    fn pqr_atom_in_columns(&mut self, no: usize, line: &[u8]) -> Option<AtomRecord> {
        let tag = cols(line, 0, 6);
        if tag != b"ATOM  " && tag != b"HETATM" {
            return None;
        }
        let after: Vec<&[u8]> = tokens(cols(line, 54, line.len())).collect();
        let [q, r] = after.as_slice() else {
            return None;
        };
        let (q, r) = (float(q)?, float(r)?);
        let mut rec = self.pdb_atom(no, line).ok()?;
        rec.charge = q as f32;
        rec.radius = r as f32;
        Some(rec)
    }

    fn pqr_atom_by_fields(&mut self, no: usize, line: &[u8]) -> Result<AtomRecord, ReadError> {
        let mut toks: [&[u8]; 16] = [&[]; 16];
        let mut n = 0;
        for t in split_record_keyword(line) {
            if n == toks.len() {
                return Err(self.err(
                    no,
                    "expected at most 16 whitespace-separated fields in a PQR atom record",
                ));
            }
            toks[n] = t;
            n += 1;
        }
        if n < 10 {
            return Err(self.err(
                no,
                format!(
                    "expected 10 or 11 fields (record serial name resname [chain] resid x y z charge radius), found {n}"
                ),
            ));
        }
        let mut nums = [0f64; 5];
        for (k, what) in ["x", "y", "z", "charge", "radius"].iter().enumerate() {
            let field = toks[n - 5 + k];
            nums[k] = float(field).ok_or_else(|| {
                self.err(
                    no,
                    format!("expected {what} (field {} of {n}), found {:?}", n - 4 + k, show(field)),
                )
            })?;
        }
        let resid_field = toks[n - 6];
        // Without a chain field the chain id may be written against the residue number (`A1001`),
        // which APBS reads as chain A, residue 1001.
        let merged_chain = match resid_field {
            [c, rest @ ..] if n == 10 && c.is_ascii_alphabetic() && !rest.is_empty() => {
                leading_int(rest).filter(|_| rest.iter().all(|b| b.is_ascii_digit() || *b == b'-'))
            }
            _ => None,
        };
        let resid = leading_int(resid_field)
            .or(merged_chain)
            .and_then(|r| i32::try_from(r).ok())
            .ok_or_else(|| {
                self.err(
                    no,
                    format!(
                        "expected a residue number (field {} of {n}), found {:?}",
                        n - 5,
                        show(resid_field)
                    ),
                )
            })?;
        // An insertion code written against the residue number (`60A`, as pdb2pqr writes thrombin's
        // chymotrypsin numbering): one letter after the digits.
        let icode = match resid_field.trim_ascii() {
            [digits @ .., c]
                if merged_chain.is_none()
                    && c.is_ascii_alphabetic()
                    && !digits.is_empty()
                    && digits
                        .iter()
                        .enumerate()
                        .all(|(k, d)| d.is_ascii_digit() || (k == 0 && *d == b'-')) =>
            {
                *c
            }
            _ => b' ',
        };
        for t in [toks[2], toks[3]] {
            if Name8::would_truncate(t) {
                self.long_names += 1;
            }
        }
        let chain = if n >= 11 {
            Name8::new(toks[4])
        } else if merged_chain.is_some() {
            Name8::new(cols(resid_field, 0, 1))
        } else {
            Name8::EMPTY
        };
        let element = if self.topology_done {
            Element::UNKNOWN
        } else {
            self.guesses.guess(Name8::new(toks[2]), Name8::new(toks[3]))
        };
        Ok(AtomRecord {
            serial: hybrid36(toks[1], 5),
            name: Name8::new(toks[2]),
            altloc: b' ',
            icode,
            resname: Name8::new(toks[3]),
            chain,
            resid,
            segid: Name8::EMPTY,
            element,
            position: [nums[0] as f32, nums[1] as f32, nums[2] as f32],
            charge: nums[3] as f32,
            radius: nums[4] as f32,
            occupancy: f32::NAN,
            bfactor: f32::NAN,
        })
    }

    fn cryst1(&mut self, no: usize, line: &[u8]) -> Result<(), ReadError> {
        let spans = [(6, 15), (15, 24), (24, 33), (33, 40), (40, 47), (47, 54)];
        let mut v = [0f64; 6];
        for (k, (a, b)) in spans.into_iter().enumerate() {
            let field = cols(line, a, b);
            v[k] = float(field).ok_or_else(|| {
                self.err(
                    no,
                    format!(
                        "expected CRYST1 {} in columns {}-{}, found {:?}",
                        ["a", "b", "c", "alpha", "beta", "gamma"][k],
                        a + 1,
                        b,
                        show(field)
                    ),
                )
            })?;
        }
        let cell = UnitCell::new([v[0], v[1], v[2]], [v[3], v[4], v[5]]);
        let unit = v[..3].iter().all(|&x| (x - 1.0).abs() < 1e-9);
        if unit || !cell.is_valid() {
            if !unit {
                self.warnings
                    .push(format!("line {no}: CRYST1 does not describe a valid box; ignored"));
            }
            return Ok(());
        }
        let after_models = *self
            .cryst1_after_models
            .get_or_insert(!self.frame_open && !self.frames.is_empty());
        if self.frame_open {
            self.frame_cell = Some(cell);
        } else if after_models {
            // `MODEL ... ENDMDL CRYST1`: the box of the model just read (as MDAnalysis reads this
            // layout), and of the models after it that give none.
            if let Some(last) = self.frames.last_mut() {
                last.cell = Some(cell);
            }
            self.global_cell = Some(cell);
        } else {
            self.global_cell = Some(cell);
        }
        Ok(())
    }

    fn conect_record(&mut self, no: usize, line: &[u8]) {
        let Some(from) = hybrid36(cols(line, 6, 11), 5) else {
            self.warnings.push(format!(
                "line {no}: CONECT record without a readable atom serial; skipped"
            ));
            return;
        };
        for (a, b) in [(11, 16), (16, 21), (21, 26), (26, 31)] {
            let field = cols(line, a, b);
            if field.trim_ascii().is_empty() {
                continue;
            }
            match hybrid36(field, 5) {
                Some(to) => self.conect.push([from, to]),
                None => self.warnings.push(format!(
                    "line {no}: unreadable CONECT serial {:?}; skipped",
                    show(field)
                )),
            }
        }
    }

    /// A model whose atoms are not the first model's (an ensemble whose models differ, or a damaged
    /// file): the models before it are kept and the rest of the file's models are not read.
    fn stop_models(&mut self, found: &str) {
        let subject = format!("the model starting at line {}", self.frame_start_line);
        let w = super::fields::unlike_first(&subject, "model", found, self.structure.len(), self.frames.len());
        self.warnings.push(w);
        self.models_stopped = true;
        self.positions.clear();
        self.frame_open = false;
    }

    fn finish_frame(&mut self, _no: usize) -> Result<(), ReadError> {
        if self.models_stopped {
            return Ok(());
        }
        if self.topology_done {
            let n = self.structure.len();
            if self.positions.len() != n {
                self.stop_models(&self.positions.len().to_string());
                return Ok(());
            }
        } else if self.positions.is_empty() {
            // An empty MODEL block before any atoms: nothing to keep.
            self.frame_open = false;
            return Ok(());
        }
        self.topology_done = true;
        let positions = std::mem::take(&mut self.positions);
        // A model's own box holds for the models after it until another is given (a trajectory
        // written with one CRYST1 in its first model keeps that box).
        if let Some(cell) = self.frame_cell.take() {
            self.global_cell = Some(cell);
        }
        self.frames.push(Frame {
            positions_angstrom: positions,
            cell: self.global_cell,
            time_ps: None,
            step: None,
        });
        self.frame_open = false;
        Ok(())
    }

    fn finish(mut self) -> Result<Parsed, ReadError> {
        let n = self.structure.len();
        if self.flavor == Flavor::Pqr {
            self.structure.charges_e = Some(std::mem::take(&mut self.charges));
            self.structure.radii_angstrom = Some(std::mem::take(&mut self.radii));
        }
        if !self.conect.is_empty() {
            let mut index: Vec<(i64, u32)> = self
                .serials
                .iter()
                .enumerate()
                .filter(|(_, s)| **s >= 0)
                .map(|(i, &s)| (s, i as u32))
                .collect();
            index.sort_unstable();
            let lookup = |s: i64| {
                index
                    .binary_search_by_key(&s, |p| p.0)
                    .ok()
                    .and_then(|k| index.get(k))
                    .map(|p| p.1)
            };
            let mut unknown = 0usize;
            let mut bonds = Vec::with_capacity(self.conect.len());
            for &[a, b] in &self.conect {
                match (lookup(a), lookup(b)) {
                    (Some(i), Some(j)) if i != j => bonds.push([i.min(j), i.max(j)]),
                    (Some(_), Some(_)) => {}
                    _ => unknown += 1,
                }
            }
            bonds.sort_unstable();
            bonds.dedup();
            if unknown > 0 {
                self.warnings.push(format!(
                    "{unknown} CONECT entries name atoms that are not in the first model; skipped"
                ));
            }
            if !bonds.is_empty() {
                self.structure.bonds = bonds;
                self.structure.bond_source = BondSource::File;
            }
        }
        if self.altlocs.iter().any(|&a| a != b' ') {
            self.structure.altlocs = Some(std::mem::take(&mut self.altlocs));
        }
        if self.icodes.iter().any(|&a| a != b' ') {
            self.structure.icodes = Some(std::mem::take(&mut self.icodes));
        }
        if self.bfactors.iter().any(|v| v.is_finite()) {
            self.structure.bfactors = Some(std::mem::take(&mut self.bfactors));
        }
        if self.occupancies.iter().any(|v| v.is_finite()) {
            self.structure.occupancies = Some(std::mem::take(&mut self.occupancies));
        }
        if self.long_names > 0 {
            self.warnings
                .push(format!("{} names longer than 8 characters truncated", self.long_names));
        }
        let unknown = self
            .structure
            .elements
            .iter()
            .filter(|e| **e == Element::UNKNOWN)
            .count();
        if unknown > 0 {
            self.warnings
                .push(format!("{unknown} of {n} atoms have an unknown element"));
        }
        self.structure
            .check_consistent()
            .map_err(|m| ReadError::file(self.path, format!("internal inconsistency: {m}")))?;
        Ok(Parsed {
            structure: self.structure,
            frames: self.frames,
            warnings: self.warnings,
            frame_energies_hartree: Vec::new(),
        })
    }
}

/// True when columns 21-22 hold a two-character chain id (gemmi, PyMOL and ChimeraX write them for
/// assemblies past 62 chains: `ALA AB`, `ALAAB`), not a four-character residue name followed by a
/// one-character chain (`TIP3W`, CHARMM's layout): column 21 is not blank, columns 18-20 name a known
/// residue and columns 18-21 do not.
fn two_char_chain(line: &[u8]) -> bool {
    use crate::model::select::{is_known_resname, is_protein_resname};
    if !line.get(20).is_some_and(|c| c.is_ascii_graphic()) {
        return false;
    }
    let three = std::str::from_utf8(cols(line, 17, 20).trim_ascii()).unwrap_or("");
    let four = std::str::from_utf8(cols(line, 17, 21).trim_ascii()).unwrap_or("");
    (is_protein_resname(three) || is_known_resname(three)) && !is_known_resname(four) && !is_protein_resname(four)
}

#[cfg(test)]
mod tests;
