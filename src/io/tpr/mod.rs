//! GROMACS run-input (TPR) topologies: atoms with names, types, residues, charges, masses and
//! elements, the bonds of the topology's bonded interactions, and each atom's Lennard-Jones
//! parameters from the nonbonded matrix ([`read_lennard_jones`], for implicit ligand sampling).
//!
//! Owns the TPR format: the topology reader here, the XDR cursor and header in `xdr`, the
//! interaction types and their parameter records (Lennard-Jones c6/c12 kept) in `params`. Called
//! by `io::load` (a TPR is a topology for TRR/XTC/GRO frames), by `io::ils_params`, by the fuzz
//! target and by the tests. The coordinates and box stored in the file (read past the rest of the
//! topology in `state`) are its one frame when it is opened alone; a trajectory or structure file
//! given after it replaces them.
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
//! (`Protein_chain_A` and `Protein_A` give `A`, as pdb2gmx names chains), and bonds come from the bond-like interactions (bonds of every
//! kind, constraints, and the two O-H bonds of each SETTLE). Elements come from the atomic numbers
//! grompp stored, else from the mass, else from the atom name. Every count is checked against the
//! bytes left before anything is allocated.

mod params;
mod state;
mod xdr;

use super::ReadError;
use super::load::Parsed;
use crate::model::element::guess_from_name;
use crate::model::lj::LjParams;
use crate::model::units::ANGSTROM_PER_NANOMETRE;
use crate::model::{BondSource, Element, Frame, Name8, Structure, UnitCell};
use params::{ADDED_TYPES, INTERACTIONS, f, is_bond_type};
use std::path::Path;
use xdr::{Cursor, read_header};

/// The chain label of a molecule block named `name`, as pdb2gmx names them: the letter after
/// `_chain_` (`Protein_chain_A`, `DNA_chain_B`) or after a molecule class and one underscore
/// (`Protein_A`, `RNA_C`, `Other_D`); the whole name otherwise (`SOL`, `NA`, `LIG`).
fn chain_of_block(name: &[u8]) -> &[u8] {
    if let Some(k) = memchr::memmem::rfind(name, b"_chain_")
        && let Some(tail) = name.get(k + 7..).filter(|t| !t.is_empty())
    {
        return tail;
    }
    for class in [&b"Protein_"[..], b"DNA_", b"RNA_", b"Other_", b"Ion_"] {
        if let Some(tail) = name.strip_prefix(class)
            && (1..=4).contains(&tail.len())
        {
            return tail;
        }
    }
    name
}

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
pub(super) const TPXV_ADD_SIZE_FIELD: i32 = 119;
pub(super) const TPXV_ADD_SIZE_FIELD_GENERATION: i32 = 27;
/// Thole polarisation lost its `rfac` parameter in this version.
pub(super) const TPXV_REMOVE_THOLE_RFAC: i32 = 127;
/// Restricted angles and dihedrals and CBT dihedrals gained B-state parameters in this version.
pub(super) const TPXV_B_STATE_RESTRICTED: i32 = 134;
/// SETTLE lists name all three atoms from this version on (before: the oxygen only).
const TPXV_SETTLE_THREE_ATOMS: i32 = 78;
/// Atoms per molecule-type atom record at least (four reals, two shorts, three ints).
const MIN_ATOM_RECORD_BYTES: usize = 16;

/// One atom of a molecule type.
struct MolAtom {
    mass: f64,
    charge: f64,
    resind: usize,
    atomnumber: i32,
    name: usize,
    atomtype: usize,
    /// Index of its type in the nonbonded (Lennard-Jones) matrix.
    type_index: usize,
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
        let type_index = c.ushort("an atom's type")? as usize;
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
            type_index,
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
    read_topology(path, bytes).map(|(parsed, _)| parsed)
}

/// The Lennard-Jones parameters of every atom of a TPR file, from the c6 and c12 of its type with
/// itself in the nonbonded matrix (eps = c6^2/(4 c12), rmin = (2 c12/c6)^(1/6), converted to
/// kcal/mol and Angstrom); a type without dispersion (c6 or c12 zero, e.g. OPLS-AA's polar
/// hydrogens) gets zeros. `None` when the file's nonbonded interactions are not Lennard-Jones
/// (Buckingham).
pub fn read_lennard_jones(path: &Path, bytes: &[u8]) -> Result<Option<Vec<LjParams>>, ReadError> {
    read_topology(path, bytes).map(|(_, lj)| lj)
}

/// The topology and, when the nonbonded matrix is Lennard-Jones, each atom's parameters.
fn read_topology(path: &Path, bytes: &[u8]) -> Result<(Parsed, Option<Vec<LjParams>>), ReadError> {
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
    let mut cell = None;
    if h.has_box {
        let mut m = [[0f64; 3]; 3];
        for row in &mut m {
            for v in row.iter_mut() {
                *v = c.real("the box")? * ANGSTROM_PER_NANOMETRE;
            }
        }
        let box_cell = UnitCell::from_vectors(m);
        cell = box_cell.is_valid().then_some(box_cell);
        c.skip(18, 0, "the box's relative form and its velocity")?;
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
    let atnr_at = c.pos;
    let atnr = c.int("the number of atom types")?;
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
    let mut lj_records = Vec::with_capacity(ntypes);
    for (i, t) in ftypes.iter_mut().enumerate() {
        for &(v, added) in &ADDED_TYPES {
            if fver < v && *t >= added {
                *t += 1;
            }
        }
        lj_records.push(params::skip_iparams(&mut c, *t, fver, i)?);
    }
    // The first atnr^2 records are the nonbonded matrix; a type's own parameters are its diagonal.
    let atnr =
        usize::try_from(atnr).map_err(|_| c.err(atnr_at, format!("expected an atom-type count, found {atnr}")))?;
    let diagonal: Option<Vec<LjParams>> = (atnr > 0 && atnr.checked_mul(atnr).is_some_and(|n| n <= lj_records.len()))
        .then(|| {
            (0..atnr)
                .map(|t| lj_records.get(t * atnr + t).copied().flatten())
                .map(|r| r.map(|[c6, c12]| LjParams::from_gromacs_c6_c12(c6, c12)))
                .collect()
        })
        .flatten();
    let mut atom_lj = Vec::with_capacity(h.natoms);
    let mut lj_complete = diagonal.is_some();

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
    // Names cut to 8 characters: how many, and up to three of them in words.
    let mut long_labels = (0usize, Vec::<String>::new());
    let label = |bytes: &[u8], long: &mut (usize, Vec<String>)| {
        if Name8::would_truncate(bytes) {
            long.0 += 1;
            let name = String::from_utf8_lossy(bytes).into_owned();
            if long.1.len() < 3 && !long.1.contains(&name) {
                long.1.push(name);
            }
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
        let chain = label(chain_of_block(block_name), &mut long_labels);
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
                match diagonal.as_ref().and_then(|d| d.get(a.type_index)) {
                    Some(p) => atom_lj.push(*p),
                    None => lj_complete = false,
                }
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
    if long_labels.0 > 0 {
        warnings.push(format!(
            "{} names longer than 8 characters are cut to their first 8 (such as {}); selections and labels see the 8",
            long_labels.0,
            long_labels.1.join(", ")
        ));
    }
    let mut frames = Vec::new();
    match state::read_positions(&mut c, fver, h.natoms, h.has_coordinates) {
        Ok(Some(positions)) if positions.iter().flatten().all(|v| v.is_finite()) => frames.push(Frame {
            positions_angstrom: positions,
            cell,
            time_ps: None,
            step: None,
        }),
        Ok(Some(_)) => warnings.push(
            "the coordinates stored in the file are not finite numbers; give a structure or trajectory file after it"
                .to_string(),
        ),
        Ok(None) => {}
        Err(e) => warnings.push(format!(
            "the coordinates stored in the file could not be read ({e}); give a structure or trajectory file after it"
        )),
    }
    let lj = (lj_complete && atom_lj.len() == structure.len()).then_some(atom_lj);
    Ok((
        Parsed {
            structure,
            frames,
            warnings,
            frame_energies_hartree: Vec::new(),
        },
        lj,
    ))
}

#[cfg(test)]
mod tests {
    use super::chain_of_block;

    /// pdb2gmx's molecule names give their chain letters; other molecules keep their names.
    #[test]
    fn chains_come_from_pdb2gmx_s_molecule_names() {
        for (name, chain) in [
            ("Protein_chain_A", "A"),
            ("DNA_chain_B", "B"),
            ("Protein_A", "A"),
            ("Protein_E", "E"),
            ("RNA_AB", "AB"),
            ("Protein", "Protein"),
            ("Protein_chain_", "Protein_chain_"),
            ("Protein_long_name", "Protein_long_name"),
            ("SOL", "SOL"),
            ("NA+", "NA+"),
        ] {
            assert_eq!(chain_of_block(name.as_bytes()), chain.as_bytes(), "{name}");
        }
    }
}
