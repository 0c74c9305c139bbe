//! GROMACS run-input (TPR) topologies: atoms with names, types, residues, charges, masses and
//! elements, and the bonds of the topology's bonded interactions.
//!
//! Owns the TPR format. Called by `io::load` (a TPR is a topology for TRR/XTC/GRO frames), by the
//! fuzz target and by the tests. Coordinates stored in the file are not read: the frames come from
//! a trajectory or structure file given after it.
//!
//! A TPR file is XDR (big-endian): a header (version string, precision, file version and
//! generation, atom count, which parts are present), then the body: box, temperature-coupling
//! values and the topology ("mtop"): a string table, the force-field parameters (one record per
//! interaction type, whose length depends on its function type and the file version), molecule
//! types (atoms, residues, interaction lists), and molecule blocks (a type repeated N times).
//! Files from GROMACS 2020 on (tpx 119) write the body with a different serializer: strings with a
//! 64-bit length and no padding, and 1- and 2-byte integers where older files use 4 bytes.
//!
//! Supported are the file versions MDAnalysis 2.11 reads ([`SUPPORTED_VERSIONS`], GROMACS 4.0
//! to 2026); others are refused with the version in the message. As in MDAnalysis, residue
//! numbers count the residues of the whole system from 1, the chain is the molecule-block name
//! (`Protein_chain_A` gives `A`), and bonds come from the bond-like interactions (bonds of every
//! kind, constraints, and the two O-H bonds of each SETTLE). Elements come from the atomic numbers
//! grompp stored, else from the mass, else from the atom name. Every count is checked against the
//! bytes left before anything is allocated.

use super::ReadError;
use super::load::Parsed;
use crate::model::element::guess_from_name;
use crate::model::{BondSource, Element, Name8, Structure};
use std::path::Path;

/// File versions (tpx) this reader accepts, with the GROMACS release that writes each.
pub const SUPPORTED_VERSIONS: [(i32, &str); 16] = [
    (58, "4.0"),
    (73, "4.5"),
    (83, "4.6"),
    (100, "5.0"),
    (103, "5.1"),
    (110, "2016"),
    (112, "2018"),
    (116, "2019"),
    (119, "2020"),
    (122, "2021"),
    (127, "2022"),
    (129, "2023"),
    (133, "2024"),
    (134, "2024.4"),
    (137, "2025"),
    (138, "2026"),
];

/// From this version on the body uses the in-memory serializer (with the generation below).
const TPXV_ADD_SIZE_FIELD: i32 = 119;
const TPXV_ADD_SIZE_FIELD_GENERATION: i32 = 27;
/// Thole polarisation lost its `rfac` parameter in this version.
const TPXV_REMOVE_THOLE_RFAC: i32 = 127;
/// Restricted angles and dihedrals and CBT dihedrals gained B-state parameters in this version.
const TPXV_B_STATE_RESTRICTED: i32 = 134;
/// SETTLE lists name all three atoms from this version on (before: the oxygen only).
const TPXV_SETTLE_THREE_ATOMS: i32 = 78;
/// Atoms per molecule-type atom record at least (four reals, two shorts, three ints).
const MIN_ATOM_RECORD_BYTES: usize = 16;

/// Interaction (function) types in the current GROMACS numbering: name and atoms per interaction
/// (0 for energy terms that never list atoms).
const INTERACTIONS: [(&str, usize); 95] = [
    ("BONDS", 2),
    ("G96BONDS", 2),
    ("MORSE", 2),
    ("CUBICBONDS", 2),
    ("CONNBONDS", 2),
    ("HARMONIC", 2),
    ("FENEBONDS", 2),
    ("TABBONDS", 2),
    ("TABBONDSNC", 2),
    ("RESTRAINTPOT", 2),
    ("ANGLES", 3),
    ("G96ANGLES", 3),
    ("RESTRANGLES", 3),
    ("LINEAR_ANGLES", 3),
    ("CROSS_BOND_BOND", 3),
    ("CROSS_BOND_ANGLE", 3),
    ("UREY_BRADLEY", 3),
    ("QANGLES", 3),
    ("TABANGLES", 3),
    ("PDIHS", 4),
    ("RBDIHS", 4),
    ("RESTRDIHS", 4),
    ("CBTDIHS", 4),
    ("FOURDIHS", 4),
    ("IDIHS", 4),
    ("PIDIHS", 4),
    ("TABDIHS", 4),
    ("CMAP", 5),
    ("GB12", 2),
    ("GB13", 2),
    ("GB14", 2),
    ("GBPOL", 0),
    ("NPSOLVATION", 0),
    ("LJ14", 2),
    ("COUL14", 0),
    ("LJC14_Q", 2),
    ("LJC_NB", 2),
    ("LJ_SR", 2),
    ("BHAM", 2),
    ("LJ_LR", 0),
    ("BHAM_LR", 0),
    ("DISPCORR", 0),
    ("COUL_SR", 0),
    ("COUL_LR", 0),
    ("RF_EXCL", 0),
    ("COUL_RECIP", 0),
    ("LJ_RECIP", 0),
    ("DPD", 0),
    ("POLARIZATION", 2),
    ("WATERPOL", 5),
    ("THOLE", 4),
    ("ANHARM_POL", 2),
    ("POSRES", 1),
    ("FBPOSRES", 1),
    ("DISRES", 2),
    ("DISRESVIOL", 0),
    ("ORIRES", 2),
    ("ORDEV", 0),
    ("ANGRES", 4),
    ("ANGRESZ", 2),
    ("DIHRES", 4),
    ("DIHRESVIOL", 0),
    ("CONSTR", 2),
    ("CONSTRNC", 2),
    ("SETTLE", 3),
    ("VSITE1", 2),
    ("VSITE2", 3),
    ("VSITE2FD", 3),
    ("VSITE3", 4),
    ("VSITE3FD", 4),
    ("VSITE3FAD", 4),
    ("VSITE3OUT", 4),
    ("VSITE4FD", 5),
    ("VSITE4FDN", 5),
    ("VSITEN", 2),
    ("COM_PULL", 0),
    ("DENSITYFIT", 0),
    ("EQM", 0),
    ("ENNPOT", 0),
    ("EPOT", 0),
    ("EKIN", 0),
    ("ETOT", 0),
    ("ECONS", 0),
    ("TEMP", 0),
    ("VTEMP", 0),
    ("PDISPCORR", 0),
    ("PRES", 0),
    ("DH/DL_CON", 0),
    ("DV/DL", 0),
    ("DK/DL", 0),
    ("DVC/DL", 0),
    ("DVV/DL", 0),
    ("DVB/DL", 0),
    ("DVR/DL", 0),
    ("DVT/DL", 0),
];

/// Function-type indices (current numbering) used below.
mod f {
    pub const BONDS: usize = 0;
    pub const G96BONDS: usize = 1;
    pub const MORSE: usize = 2;
    pub const CUBICBONDS: usize = 3;
    pub const CONNBONDS: usize = 4;
    pub const HARMONIC: usize = 5;
    pub const FENEBONDS: usize = 6;
    pub const TABBONDS: usize = 7;
    pub const TABBONDSNC: usize = 8;
    pub const RESTRBONDS: usize = 9;
    pub const ANGLES: usize = 10;
    pub const G96ANGLES: usize = 11;
    pub const RESTRANGLES: usize = 12;
    pub const LINEAR_ANGLES: usize = 13;
    pub const CROSS_BOND_BONDS: usize = 14;
    pub const CROSS_BOND_ANGLES: usize = 15;
    pub const UREY_BRADLEY: usize = 16;
    pub const QUARTIC_ANGLES: usize = 17;
    pub const TABANGLES: usize = 18;
    pub const PDIHS: usize = 19;
    pub const RBDIHS: usize = 20;
    pub const RESTRDIHS: usize = 21;
    pub const CBTDIHS: usize = 22;
    pub const FOURDIHS: usize = 23;
    pub const IDIHS: usize = 24;
    pub const PIDIHS: usize = 25;
    pub const TABDIHS: usize = 26;
    pub const CMAP: usize = 27;
    pub const GB12: usize = 28;
    pub const GB13: usize = 29;
    pub const GB14: usize = 30;
    pub const GBPOL: usize = 31;
    pub const NPSOLVATION: usize = 32;
    pub const LJ14: usize = 33;
    pub const LJC14_Q: usize = 35;
    pub const LJC_PAIRS_NB: usize = 36;
    pub const LJ: usize = 37;
    pub const BHAM: usize = 38;
    pub const BHAM_LR: usize = 40;
    pub const RF_EXCL: usize = 44;
    pub const COUL_RECIP: usize = 45;
    pub const LJ_RECIP: usize = 46;
    pub const DPD: usize = 47;
    pub const POLARIZATION: usize = 48;
    pub const WATER_POL: usize = 49;
    pub const THOLE_POL: usize = 50;
    pub const ANHARM_POL: usize = 51;
    pub const POSRES: usize = 52;
    pub const FBPOSRES: usize = 53;
    pub const DISRES: usize = 54;
    pub const DISRESVIOL: usize = 55;
    pub const ORIRES: usize = 56;
    pub const ORIRESDEV: usize = 57;
    pub const ANGRES: usize = 58;
    pub const ANGRESZ: usize = 59;
    pub const DIHRES: usize = 60;
    pub const DIHRESVIOL: usize = 61;
    pub const CONSTR: usize = 62;
    pub const CONSTRNC: usize = 63;
    pub const SETTLE: usize = 64;
    pub const VSITE1: usize = 65;
    pub const VSITE2: usize = 66;
    pub const VSITE2FD: usize = 67;
    pub const VSITE3: usize = 68;
    pub const VSITE3FD: usize = 69;
    pub const VSITE3FAD: usize = 70;
    pub const VSITE3OUT: usize = 71;
    pub const VSITE4FD: usize = 72;
    pub const VSITE4FDN: usize = 73;
    pub const VSITEN: usize = 74;
    pub const COM_PULL: usize = 75;
    pub const DENSITYFITTING: usize = 76;
    pub const EQM: usize = 77;
    pub const ENNPOT: usize = 78;
    pub const ECONSERVED: usize = 82;
    pub const VTEMP_NOLONGERUSED: usize = 84;
    pub const PDISPCORR: usize = 85;
    pub const DHDL_CON: usize = 87;
    pub const DVDL_COUL: usize = 90;
    pub const DVDL_VDW: usize = 91;
    pub const DVDL_BONDED: usize = 92;
    pub const DVDL_RESTRAINT: usize = 93;
    pub const DVDL_TEMPERATURE: usize = 94;
}

/// Interaction types added over the file versions: (first version with it, its index). Older
/// files number the types after it one lower, and have no list for it (GROMACS' `ftupd` table).
const ADDED_TYPES: [(i32, usize); 58] = [
    (20, f::CUBICBONDS),
    (20, f::CONNBONDS),
    (20, f::HARMONIC),
    (34, f::FENEBONDS),
    (43, f::TABBONDS),
    (43, f::TABBONDSNC),
    (70, f::RESTRBONDS),
    (98, f::RESTRANGLES),
    (76, f::LINEAR_ANGLES),
    (30, f::CROSS_BOND_BONDS),
    (30, f::CROSS_BOND_ANGLES),
    (30, f::UREY_BRADLEY),
    (34, f::QUARTIC_ANGLES),
    (43, f::TABANGLES),
    (98, f::RESTRDIHS),
    (98, f::CBTDIHS),
    (26, f::FOURDIHS),
    (26, f::PIDIHS),
    (43, f::TABDIHS),
    (65, f::CMAP),
    (60, f::GB12),
    (61, f::GB13),
    (61, f::GB14),
    (72, f::GBPOL),
    (72, f::NPSOLVATION),
    (41, f::LJC14_Q),
    (41, f::LJC_PAIRS_NB),
    (32, f::BHAM_LR),
    (32, f::RF_EXCL),
    (32, f::COUL_RECIP),
    (93, f::LJ_RECIP),
    (46, f::DPD),
    (30, f::POLARIZATION),
    (36, f::THOLE_POL),
    (90, f::FBPOSRES),
    (22, f::DISRESVIOL),
    (22, f::ORIRES),
    (22, f::ORIRESDEV),
    (26, f::DIHRES),
    (26, f::DIHRESVIOL),
    (49, f::VSITE4FDN),
    (50, f::VSITEN),
    (46, f::COM_PULL),
    (20, f::EQM),
    (46, f::ECONSERVED),
    (69, f::VTEMP_NOLONGERUSED),
    (66, f::PDISPCORR),
    (54, f::DHDL_CON),
    (76, f::ANHARM_POL),
    (79, f::DVDL_COUL),
    (79, f::DVDL_VDW),
    (79, f::DVDL_BONDED),
    (79, f::DVDL_RESTRAINT),
    (79, f::DVDL_TEMPERATURE),
    (117, f::DENSITYFITTING),
    (121, f::VSITE1),
    (118, f::VSITE2FD),
    (137, f::ENNPOT),
];

/// True for the interaction types whose atom pairs are bonds.
fn is_bond_type(ftype: usize) -> bool {
    matches!(
        ftype,
        f::BONDS
            | f::G96BONDS
            | f::MORSE
            | f::CUBICBONDS
            | f::CONNBONDS
            | f::HARMONIC
            | f::FENEBONDS
            | f::RESTRBONDS
            | f::CONSTR
            | f::CONSTRNC
            | f::TABBONDS
            | f::TABBONDSNC
    )
}

/// XDR cursor over the whole file.
struct Cursor<'a> {
    path: &'a Path,
    bytes: &'a [u8],
    pos: usize,
    /// 8-byte reals.
    double: bool,
    /// The body of a GROMACS 2020+ file (in-memory serializer).
    modern: bool,
}

impl<'a> Cursor<'a> {
    fn err(&self, at: usize, message: impl Into<String>) -> ReadError {
        ReadError::byte(self.path, at as u64, message)
    }

    fn left(&self) -> usize {
        self.bytes.len().saturating_sub(self.pos)
    }

    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], ReadError> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.bytes.len());
        match end.and_then(|e| self.bytes.get(self.pos..e)) {
            Some(s) => {
                self.pos += n;
                Ok(s)
            }
            None => Err(self.err(
                self.pos,
                format!(
                    "expected {what} ({n} bytes), found the end of the file at byte {}",
                    self.bytes.len()
                ),
            )),
        }
    }

    fn int(&mut self, what: &str) -> Result<i32, ReadError> {
        let b = self.take(4, what)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn i64(&mut self, what: &str) -> Result<i64, ReadError> {
        let b = self.take(8, what)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(i64::from_be_bytes(a))
    }

    fn real(&mut self, what: &str) -> Result<f64, ReadError> {
        if self.double {
            Ok(f64::from_bits(self.i64(what)? as u64))
        } else {
            Ok(f64::from(f32::from_bits(self.int(what)? as u32)))
        }
    }

    fn real_bytes(&self) -> usize {
        if self.double { 8 } else { 4 }
    }

    /// Skips `n_reals` reals and `n_ints` integers.
    fn skip(&mut self, n_reals: usize, n_ints: usize, what: &str) -> Result<(), ReadError> {
        self.take(n_reals * self.real_bytes() + 4 * n_ints, what).map(|_| ())
    }

    /// A 1-byte value in modern bodies, a 4-byte one before.
    fn uchar(&mut self, what: &str) -> Result<u32, ReadError> {
        if self.modern {
            Ok(u32::from(self.take(1, what)?[0]))
        } else {
            Ok(self.int(what)? as u32)
        }
    }

    /// A 2-byte value in modern bodies, a 4-byte one before.
    fn ushort(&mut self, what: &str) -> Result<u32, ReadError> {
        if self.modern {
            let b = self.take(2, what)?;
            Ok(u32::from(u16::from_be_bytes([b[0], b[1]])))
        } else {
            Ok(self.int(what)? as u32)
        }
    }

    /// A non-negative count of items of at least `item_bytes` bytes each that must fit in the
    /// rest of the file.
    fn count(&mut self, what: &str, item_bytes: usize) -> Result<usize, ReadError> {
        let at = self.pos;
        let n = self.int(what)?;
        let room = self.left() / item_bytes.max(1);
        if n < 0 || n as usize > room {
            return Err(self.err(
                at,
                format!("expected {what} between 0 and {room} (what the rest of the file can hold), found {n}"),
            ));
        }
        Ok(n as usize)
    }

    /// A string: in old bodies and every header, its length plus one then an XDR string (length,
    /// bytes, padding to 4); in modern bodies a 64-bit length and the bytes.
    fn string(&mut self, what: &str) -> Result<&'a [u8], ReadError> {
        let at = self.pos;
        let (n, padded) = if self.modern {
            let n = self.i64(what)?;
            (n, false)
        } else {
            let _ = self.int(what)?;
            (i64::from(self.int(what)? as u32), true)
        };
        if n < 0 || n as u64 > self.left() as u64 {
            return Err(self.err(
                at,
                format!(
                    "expected {what}: a string of at most {} bytes, found a length of {n}",
                    self.left()
                ),
            ));
        }
        let n = n as usize;
        let s = self.take(n, what)?;
        if padded {
            self.take(n.div_ceil(4) * 4 - n, what)?;
        }
        Ok(s.strip_suffix(b"\0").unwrap_or(s))
    }
}

/// What the header says.
struct Header {
    version_string: String,
    file_version: i32,
    natoms: usize,
    ngtc: usize,
    has_topology: bool,
    has_coordinates: bool,
    has_box: bool,
    body_size: Option<i64>,
}

fn read_header(c: &mut Cursor<'_>) -> Result<Header, ReadError> {
    let version = c.string("the version string")?;
    if !version.starts_with(b"VERSION") {
        return Err(c.err(
            0,
            format!(
                "expected a TPR header starting with \"VERSION\", found {:?}",
                super::text::shorten(&String::from_utf8_lossy(version))
            ),
        ));
    }
    let version_string = String::from_utf8_lossy(version.strip_prefix(b"VERSION ").unwrap_or(version))
        .trim()
        .to_string();
    let prec_at = c.pos;
    let precision = c.int("the precision")?;
    c.double = match precision {
        4 => false,
        8 => true,
        _ => {
            return Err(c.err(
                prec_at,
                format!("expected the precision 4 (single) or 8 (double), found {precision}"),
            ));
        }
    };
    let file_version = c.int("the file version")?;
    if !SUPPORTED_VERSIONS.iter().any(|(v, _)| *v == file_version) {
        let list: Vec<String> = SUPPORTED_VERSIONS.iter().map(|(v, _)| v.to_string()).collect();
        return Err(c.err(
            prec_at + 4,
            format!(
                "TPR file version {file_version} (GROMACS {version_string}) is not supported: orbitfield reads tpx versions {} (GROMACS 4.0 to 2026)",
                list.join(", ")
            ),
        ));
    }
    let generation = c.int("the file generation")?;
    if file_version >= 81 {
        c.string("the file tag")?;
    }
    let natoms_at = c.pos;
    let natoms = c.int("the atom count")?;
    if natoms < 0 {
        return Err(c.err(natoms_at, format!("expected an atom count >= 0, found {natoms}")));
    }
    let ngtc_at = c.pos;
    let ngtc = c.int("the number of temperature-coupling groups")?;
    if ngtc < 0 || ngtc as usize > c.left() / 4 {
        return Err(c.err(
            ngtc_at,
            format!(
                "expected a number of temperature-coupling groups between 0 and {}, found {ngtc}",
                c.left() / 4
            ),
        ));
    }
    if file_version < 62 {
        c.int("an unused integer")?;
        c.real("an unused real")?;
    }
    if file_version >= 79 {
        c.int("the free-energy state")?;
    }
    c.real("lambda")?;
    let mut flags = [false; 6];
    for (k, flag) in flags.iter_mut().enumerate() {
        let what = ["bIr", "bTop", "bX", "bV", "bF", "bBox"][k];
        *flag = c.int(what)? != 0;
    }
    let body_size = if file_version >= TPXV_ADD_SIZE_FIELD && generation >= TPXV_ADD_SIZE_FIELD_GENERATION {
        Some(c.i64("the body size")?)
    } else {
        None
    };
    Ok(Header {
        version_string,
        file_version,
        natoms: natoms as usize,
        ngtc: ngtc as usize,
        has_topology: flags[1],
        has_coordinates: flags[2],
        has_box: flags[5],
        body_size,
    })
}

/// Skips the parameter record of one interaction type.
fn skip_iparams(c: &mut Cursor<'_>, ftype: usize, fver: i32, index: usize) -> Result<(), ReadError> {
    let what = "interaction parameters";
    let (reals, ints) = match ftype {
        f::ANGLES | f::G96ANGLES | f::BONDS | f::G96BONDS | f::HARMONIC | f::IDIHS => (4, 0),
        f::RESTRANGLES | f::RESTRDIHS => (if fver >= TPXV_B_STATE_RESTRICTED { 4 } else { 2 }, 0),
        f::LINEAR_ANGLES => (4, 0),
        f::FENEBONDS => (2, 0),
        f::RESTRBONDS => (8, 0),
        f::TABBONDS | f::TABBONDSNC | f::TABANGLES | f::TABDIHS => (2, 1),
        f::CROSS_BOND_BONDS => (3, 0),
        f::CROSS_BOND_ANGLES => (4, 0),
        f::UREY_BRADLEY => (if fver >= 79 { 8 } else { 4 }, 0),
        f::QUARTIC_ANGLES => (6, 0),
        f::BHAM => (3, 0),
        f::MORSE => (if fver >= 79 { 6 } else { 3 }, 0),
        f::CUBICBONDS => (3, 0),
        f::CONNBONDS | f::VSITE1 | f::ENNPOT => (0, 0),
        f::POLARIZATION => (1, 0),
        f::ANHARM_POL => (3, 0),
        f::WATER_POL => (6, 0),
        f::THOLE_POL => (if fver < TPXV_REMOVE_THOLE_RFAC { 4 } else { 3 }, 0),
        f::LJ => (2, 0),
        f::LJ14 => (4, 0),
        f::LJC14_Q => (5, 0),
        f::LJC_PAIRS_NB => (4, 0),
        f::PIDIHS | f::ANGRES | f::ANGRESZ | f::PDIHS => (4, 1),
        f::DISRES => (4, 2),
        f::ORIRES => (3, 3),
        f::DIHRES => {
            if fver < 72 {
                (3, 2)
            } else {
                (6, 0)
            }
        }
        f::POSRES => (12, 0),
        f::FBPOSRES => (5, 1),
        f::CBTDIHS => (if fver >= TPXV_B_STATE_RESTRICTED { 12 } else { 6 }, 0),
        f::RBDIHS | f::FOURDIHS => (12, 0),
        f::CONSTR | f::CONSTRNC | f::SETTLE => (2, 0),
        f::VSITE2 | f::VSITE2FD => (1, 0),
        f::VSITE3 | f::VSITE3FD | f::VSITE3FAD => (2, 0),
        f::VSITE3OUT | f::VSITE4FD | f::VSITE4FDN => (3, 0),
        f::VSITEN => (1, 1),
        f::GB12 | f::GB13 | f::GB14 => (if fver < 68 { 9 } else { 5 }, 0),
        f::CMAP => (0, 2),
        _ => {
            let name = INTERACTIONS.get(ftype).map_or("?", |t| t.0);
            return Err(c.err(
                c.pos,
                format!(
                    "interaction type {index}: function type {ftype} ({name}) has no parameter layout this reader knows"
                ),
            ));
        }
    };
    c.skip(reals, ints, what)
}

/// One atom of a molecule type.
struct MolAtom {
    mass: f64,
    charge: f64,
    resind: usize,
    atomnumber: i32,
    name: usize,
    atomtype: usize,
}

/// One molecule type.
struct MolType {
    name: usize,
    atoms: Vec<MolAtom>,
    resnames: Vec<usize>,
    /// Bonds within the molecule (0-based local indices, smaller first, sorted, unique).
    bonds: Vec<[u32; 2]>,
}

fn symbol(c: &mut Cursor<'_>, n_symbols: usize, what: &str) -> Result<usize, ReadError> {
    let at = c.pos;
    let i = c.int(what)?;
    if i < 0 || i as usize >= n_symbols {
        return Err(c.err(
            at,
            format!("expected {what}: an index into the {n_symbols} strings of the string table, found {i}"),
        ));
    }
    Ok(i as usize)
}

fn read_moltype(c: &mut Cursor<'_>, n_symbols: usize, fver: i32, index: usize) -> Result<MolType, ReadError> {
    let name = symbol(c, n_symbols, "the molecule type name")?;
    let nr = c.count("the atom count of a molecule type", MIN_ATOM_RECORD_BYTES)?;
    let nres = c.count("the residue count of a molecule type", 4)?;
    let mut atoms = Vec::with_capacity(nr);
    for _ in 0..nr {
        let mass = c.real("an atom's mass")?;
        let charge = c.real("an atom's charge")?;
        c.real("an atom's B-state mass")?;
        c.real("an atom's B-state charge")?;
        c.ushort("an atom's type")?;
        c.ushort("an atom's B-state type")?;
        c.int("an atom's particle type")?;
        let res_at = c.pos;
        let resind = c.int("an atom's residue index")?;
        if resind < 0 || resind as usize >= nres.max(1) {
            return Err(c.err(
                res_at,
                format!(
                    "molecule type {index}: expected a residue index between 0 and {}, found {resind}",
                    nres.saturating_sub(1)
                ),
            ));
        }
        let atomnumber = c.int("an atom's atomic number")?;
        atoms.push(MolAtom {
            mass,
            charge,
            resind: resind as usize,
            atomnumber,
            name: 0,
            atomtype: 0,
        });
    }
    for a in atoms.iter_mut() {
        a.name = symbol(c, n_symbols, "an atom name")?;
    }
    for a in atoms.iter_mut() {
        a.atomtype = symbol(c, n_symbols, "an atom type")?;
    }
    for _ in 0..nr {
        symbol(c, n_symbols, "an atom's B-state type")?;
    }
    let mut resnames = Vec::with_capacity(nres);
    for _ in 0..nres {
        resnames.push(symbol(c, n_symbols, "a residue name")?);
        if fver >= 63 {
            c.int("a residue number")?;
            c.uchar("a residue insertion code")?;
        }
    }
    // Interaction lists: for each type present in this file version, a count and that many ints.
    let mut bonds: Vec<[u32; 2]> = Vec::new();
    let natoms = nr as u32;
    for (ftype, &(_, nratoms)) in INTERACTIONS.iter().enumerate() {
        if ADDED_TYPES.iter().any(|&(v, t)| fver < v && t == ftype) {
            continue;
        }
        let list_at = c.pos;
        let n = c.count("the length of an interaction list", 4)?;
        let raw = c.take(4 * n, "an interaction list")?;
        let ints = raw
            .chunks_exact(4)
            .map(|b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]));
        let settle_old = ftype == f::SETTLE && fver < TPXV_SETTLE_THREE_ATOMS;
        if !(is_bond_type(ftype) || ftype == f::SETTLE) {
            continue;
        }
        let stride = if settle_old { 2 } else { nratoms + 1 };
        if n % stride != 0 {
            return Err(c.err(
                list_at,
                format!(
                    "molecule type {index}: expected a {} list of {stride}-integer entries, found {n} integers",
                    INTERACTIONS[ftype].0
                ),
            ));
        }
        let ints: Vec<i32> = ints.collect();
        let bad = |c: &Cursor<'_>, v: i32| {
            c.err(
                list_at,
                format!(
                    "molecule type {index}: a {} interaction names atom {v}, the molecule has {nr} atoms",
                    INTERACTIONS[ftype].0
                ),
            )
        };
        let atom = |c: &Cursor<'_>, v: i32| -> Result<u32, ReadError> {
            if v < 0 || v as u32 >= natoms {
                Err(bad(c, v))
            } else {
                Ok(v as u32)
            }
        };
        for entry in ints.chunks_exact(stride) {
            let pairs: Vec<[i32; 2]> = if ftype == f::SETTLE {
                let o = entry.get(1).copied().unwrap_or(-1);
                let (h1, h2) = if settle_old {
                    (o.saturating_add(1), o.saturating_add(2))
                } else {
                    (entry.get(2).copied().unwrap_or(-1), entry.get(3).copied().unwrap_or(-1))
                };
                vec![[o, h1], [o, h2]]
            } else {
                vec![[entry.get(1).copied().unwrap_or(-1), entry.get(2).copied().unwrap_or(-1)]]
            };
            for [a, b] in pairs {
                let (a, b) = (atom(c, a)?, atom(c, b)?);
                if a != b {
                    bonds.push([a.min(b), a.max(b)]);
                }
            }
        }
    }
    bonds.sort_unstable();
    bonds.dedup();
    // Charge groups and exclusions: read past them.
    let n = c.count("the charge-group count", 4)?;
    c.skip(0, n + 1, "the charge-group index")?;
    let nr_excl = c.count("the exclusion-list count", 4)?;
    let nra = c.count("the exclusion count", 4)?;
    c.skip(0, nr_excl + 1 + nra, "the exclusion lists")?;
    Ok(MolType {
        name,
        atoms,
        resnames,
        bonds,
    })
}

/// Reads a TPR file's topology.
pub fn read(path: &Path, bytes: &[u8]) -> Result<Parsed, ReadError> {
    let mut c = Cursor {
        path,
        bytes,
        pos: 0,
        double: false,
        modern: false,
    };
    if bytes.is_empty() {
        return Err(c.err(0, "expected a TPR header, found an empty file"));
    }
    let h = read_header(&mut c)?;
    let fver = h.file_version;
    if let Some(size) = h.body_size {
        if size.checked_mul(4) == Some(c.left() as i64) && size != 0 {
            return Err(c.err(
                c.pos,
                format!(
                    "TPR files written by beta versions of GROMACS 2020 (here {}) are not supported",
                    h.version_string
                ),
            ));
        }
        c.modern = true;
    }
    if !h.has_topology {
        return Err(c.err(c.pos, "this TPR file holds no topology"));
    }
    if h.has_box {
        c.skip(27, 0, "the box, its relative form and its velocity")?;
    }
    if h.ngtc > 0 {
        let n = if fver < 69 { 2 * h.ngtc } else { h.ngtc };
        c.skip(n, 0, "the temperature-coupling values")?;
    }
    // A file with coordinates must have room for them; without, a bound still keeps a tiny damaged
    // file from describing billions of atoms.
    let max_atoms = if h.has_coordinates {
        c.left() / (3 * c.real_bytes())
    } else {
        c.left().saturating_mul(64)
    };
    if h.natoms > max_atoms {
        return Err(c.err(
            0,
            format!(
                "the header declares {} atoms, more than the rest of the file can describe ({max_atoms})",
                h.natoms
            ),
        ));
    }

    // String table.
    let n_symbols = c.count("the string-table size", 8)?;
    let mut symbols: Vec<&[u8]> = Vec::with_capacity(n_symbols);
    for _ in 0..n_symbols {
        symbols.push(c.string("a string of the string table")?);
    }
    symbol(&mut c, n_symbols, "the system name")?;

    // Force-field parameters: the function type of every parameter record, then the records.
    c.int("the number of atom types")?;
    let ntypes = c.count("the number of interaction parameter records", 4)?;
    let mut ftypes = Vec::with_capacity(ntypes);
    for _ in 0..ntypes {
        let at = c.pos;
        let t = c.int("a function type")?;
        if t < 0 || t as usize >= INTERACTIONS.len() {
            return Err(c.err(
                at,
                format!(
                    "expected a function type between 0 and {}, found {t}",
                    INTERACTIONS.len() - 1
                ),
            ));
        }
        ftypes.push(t as usize);
    }
    if fver >= 66 {
        c.take(8, "the repulsion power")?;
    }
    c.real("fudgeQQ")?;
    for (i, t) in ftypes.iter_mut().enumerate() {
        for &(v, added) in &ADDED_TYPES {
            if fver < v && *t >= added {
                *t += 1;
            }
        }
        skip_iparams(&mut c, *t, fver, i)?;
    }

    let nmoltype = c.count("the number of molecule types", 8)?;
    let mut moltypes = Vec::with_capacity(nmoltype);
    for i in 0..nmoltype {
        moltypes.push(read_moltype(&mut c, n_symbols, fver, i)?);
    }

    let mut structure = Structure {
        title: h.version_string.clone(),
        ..Structure::default()
    };
    structure.reserve(h.natoms);
    let mut charges = Vec::with_capacity(h.natoms);
    let mut masses = Vec::with_capacity(h.natoms);
    let mut types = Vec::with_capacity(h.natoms);
    let mut bonds: Vec<[u32; 2]> = Vec::new();
    let max_bonds = 16 * h.natoms.max(1);
    let mut long_labels = 0usize;
    let label = |bytes: &[u8], long: &mut usize| {
        if Name8::would_truncate(bytes) {
            *long += 1;
        }
        Name8::new(bytes)
    };
    let sym = |i: usize| symbols.get(i).copied().unwrap_or_default();
    let nmolblock = c.count("the number of molecule blocks", 20)?;
    let mut residue_base = 0i64;
    for b in 0..nmolblock {
        let block_at = c.pos;
        let mtype = c.int("a molecule block's type")?;
        let Some(mt) = usize::try_from(mtype).ok().and_then(|t| moltypes.get(t)) else {
            return Err(c.err(
                block_at,
                format!(
                    "molecule block {b}: expected a molecule type between 0 and {}, found {mtype}",
                    nmoltype as i64 - 1
                ),
            ));
        };
        let nmol_at = c.pos;
        let nmol = c.int("a molecule block's molecule count")?;
        let natoms_mol = c.int("a molecule block's atoms per molecule")?;
        let room = h.natoms - structure.len();
        let per = mt.atoms.len();
        if nmol < 0
            || natoms_mol as i64 != per as i64
            || (per as u64).saturating_mul(nmol as u64) > room as u64
            || (per == 0 && nmol > 0)
        {
            return Err(c.err(
                nmol_at,
                format!(
                    "molecule block {b}: expected a count of molecules of {per} atoms that fits the {room} atoms left of the header's {}, found {nmol} molecules of {natoms_mol} atoms",
                    h.natoms
                ),
            ));
        }
        for _ in 0..2 {
            let n = c.count("a number of position-restraint coordinates", 12)?;
            c.skip(3 * n, 0, "position-restraint coordinates")?;
        }
        let block_name = sym(mt.name);
        let chain = block_name.strip_prefix(b"Protein_chain_").unwrap_or(block_name);
        let chain = label(chain, &mut long_labels);
        let segid = label(block_name, &mut long_labels);
        let nres = mt.resnames.len() as i64;
        for _ in 0..nmol {
            let base = structure.len() as u32;
            if bonds.len() + mt.bonds.len() > max_bonds {
                return Err(c.err(
                    block_at,
                    format!("molecule block {b}: more than {max_bonds} bonds for {} atoms", h.natoms),
                ));
            }
            bonds.extend(mt.bonds.iter().map(|&[i, j]| [i + base, j + base]));
            for a in &mt.atoms {
                let name = label(sym(a.name), &mut long_labels);
                let resname_bytes = sym(mt.resnames.get(a.resind).copied().unwrap_or(0));
                let resname = label(resname_bytes, &mut long_labels);
                let element = u32::try_from(a.atomnumber)
                    .ok()
                    .and_then(Element::from_number)
                    .or_else(|| Element::from_mass(a.mass))
                    .unwrap_or_else(|| guess_from_name(name.as_str().as_bytes(), resname.as_str().as_bytes()));
                let resid = i32::try_from(residue_base + a.resind as i64 + 1).unwrap_or(i32::MAX);
                structure.push_atom(element, name, resname, resid, chain, segid);
                types.push(label(sym(a.atomtype), &mut long_labels));
                charges.push(a.charge as f32);
                masses.push(a.mass as f32);
            }
            residue_base += nres;
        }
    }
    if structure.len() != h.natoms {
        return Err(c.err(
            c.pos,
            format!(
                "the header declares {} atoms, the molecule blocks hold {}",
                h.natoms,
                structure.len()
            ),
        ));
    }
    structure.types = types;
    structure.charges_e = Some(charges);
    structure.masses_dalton = Some(masses);
    bonds.sort_unstable();
    bonds.dedup();
    if !bonds.is_empty() {
        structure.bonds = bonds;
        structure.bond_source = BondSource::File;
    }
    structure
        .check_consistent()
        .map_err(|e| ReadError::file(path, format!("internal inconsistency: {e}")))?;
    let mut warnings = Vec::new();
    if long_labels > 0 {
        warnings.push(format!("{long_labels} labels longer than 8 characters truncated"));
    }
    Ok(Parsed {
        structure,
        frames: Vec::new(),
        warnings,
    })
}
