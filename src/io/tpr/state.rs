//! The parts of a TPR file after the molecule blocks, up to and including the coordinates: the
//! system's atom count, intermolecular interactions, atom types, CMAP grids, atom groups and the
//! intermolecular exclusion group, each read past by the layout GROMACS's `tpxio.cpp` writes for
//! the file version, then the positions (nm, converted to Angstrom).
//!
//! Used by `io::tpr` to give a TPR file opened alone its structure's coordinates (as `gmx
//! editconf` or MDAnalysis's TPR reader give them). Every count is checked against the bytes
//! left; a layout that does not fit leaves the file without coordinates rather than with wrong
//! ones.

use super::super::ReadError;
use super::params::{ADDED_TYPES, INTERACTIONS};
use super::xdr::Cursor;
use crate::model::units::ANGSTROM_PER_NANOMETRE;

/// Intermolecular interactions exist from this version on.
const TPXV_INTERMOLECULAR_BONDEDS: i32 = 103;
/// Implicit-solvent parameters left the atom types in this version.
const TPXV_REMOVE_IMPLICIT_SOLVATION: i32 = 113;
/// The atom types left the topology in this version.
const TPXV_REMOVE_ATOMTYPES: i32 = 128;
/// The nonbonded-interaction exclusion group is stored from this version on.
const TPXV_STORE_EXCLUSION_GROUP: i32 = 120;
/// Atom-group kinds (temperature coupling, energy output, acceleration, freeze, two user groups,
/// centre-of-mass motion removal, compressed output, orientation restraints, QM/MM).
const GROUP_KINDS: usize = 10;

/// Reads from just after the molecule blocks to the coordinates, and returns them (Angstrom)
/// when the header says the file holds them. `natoms` is the header's atom count.
pub(super) fn read_positions(
    c: &mut Cursor<'_>,
    fver: i32,
    natoms: usize,
    has_coordinates: bool,
) -> Result<Option<Vec<[f32; 3]>>, ReadError> {
    let at = c.pos;
    let n = c.int("the system's atom count")?;
    if n < 0 || n as usize != natoms {
        return Err(c.err(
            at,
            format!("expected the system's atom count {natoms} after the molecule blocks, found {n}"),
        ));
    }
    if fver >= TPXV_INTERMOLECULAR_BONDEDS && c.uchar("whether intermolecular interactions follow")? != 0 {
        skip_interaction_lists(c, fver)?;
    }
    if fver < TPXV_REMOVE_ATOMTYPES {
        let nr = c.count("the number of atom types", 4)?;
        if fver < TPXV_REMOVE_IMPLICIT_SOLVATION {
            c.skip(
                3 * nr,
                0,
                "the atom types' implicit-solvent radii, volumes and surface tensions",
            )?;
        }
        c.skip(0, nr, "the atom types' atomic numbers")?;
        if (60..TPXV_REMOVE_IMPLICIT_SOLVATION).contains(&fver) {
            c.skip(2 * nr, 0, "the atom types' generalized-Born radii and scale factors")?;
        }
    }
    if fver >= 65 {
        let ngrid = c.count("the number of CMAP grids", 4)?;
        let spacing = c.count("the CMAP grid spacing", 4)?;
        let reals = ngrid
            .checked_mul(spacing)
            .and_then(|v| v.checked_mul(spacing))
            .and_then(|v| v.checked_mul(4))
            .filter(|&v| v <= c.left() / c.real_bytes())
            .ok_or_else(|| {
                c.err(
                    c.pos,
                    format!("{ngrid} CMAP grids of {spacing}^2 points do not fit the file"),
                )
            })?;
        c.skip(reals, 0, "the CMAP grids")?;
    }
    for _ in 0..GROUP_KINDS {
        let n = c.count("the size of an atom group list", 4)?;
        c.skip(0, n, "an atom group list")?;
    }
    let names = c.count("the number of group names", 4)?;
    c.skip(0, names, "the group names")?;
    for _ in 0..GROUP_KINDS {
        let n = c.count("the number of group numbers", 1)?;
        for _ in 0..n {
            c.uchar("a group number")?;
        }
    }
    if fver >= TPXV_STORE_EXCLUSION_GROUP {
        let at = c.pos;
        let n = c.i64("the size of the intermolecular exclusion group")?;
        if n < 0 || n as u64 > (c.left() / 4) as u64 {
            return Err(c.err(
                at,
                format!("expected an exclusion-group size that fits the file, found {n}"),
            ));
        }
        c.skip(0, n as usize, "the intermolecular exclusion group")?;
    }
    if !has_coordinates {
        return Ok(None);
    }
    let mut positions = Vec::with_capacity(natoms.min(c.left() / (3 * c.real_bytes())));
    for _ in 0..natoms {
        let mut p = [0f32; 3];
        for v in &mut p {
            *v = (c.real("a coordinate")? * ANGSTROM_PER_NANOMETRE) as f32;
        }
        positions.push(p);
    }
    Ok(Some(positions))
}

/// Reads past one list per interaction type present in this file version (a count, then that
/// many integers).
fn skip_interaction_lists(c: &mut Cursor<'_>, fver: i32) -> Result<(), ReadError> {
    for ftype in 0..INTERACTIONS.len() {
        if ADDED_TYPES.iter().any(|&(v, t)| fver < v && t == ftype) {
            continue;
        }
        let n = c.count("the length of an intermolecular interaction list", 4)?;
        c.skip(0, n, "an intermolecular interaction list")?;
    }
    Ok(())
}
