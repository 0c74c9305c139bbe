//! The force-field part of TPR files: the interaction (function) types in GROMACS' numbering,
//! which of them are bonds, how file versions renumber them, and the layout of each type's
//! parameter record. Records are skipped, except the Lennard-Jones ones (c6, c12), which are
//! returned for the nonbonded matrix. Used by the topology reader in `io::tpr`.

use super::super::ReadError;
use super::xdr::Cursor;
use super::{TPXV_B_STATE_RESTRICTED, TPXV_REMOVE_THOLE_RFAC};

/// Interaction (function) types in the current GROMACS numbering: name and atoms per interaction
/// (0 for energy terms that never list atoms).
pub(super) const INTERACTIONS: [(&str, usize); 95] = [
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
pub(super) mod f {
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
pub(super) const ADDED_TYPES: [(i32, usize); 58] = [
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
pub(super) fn is_bond_type(ftype: usize) -> bool {
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

/// Reads past the parameter record of one interaction type; a Lennard-Jones record's (c6, c12)
/// (kJ/mol nm^6, kJ/mol nm^12) is returned.
pub(super) fn skip_iparams(
    c: &mut Cursor<'_>,
    ftype: usize,
    fver: i32,
    index: usize,
) -> Result<Option<[f64; 2]>, ReadError> {
    let what = "interaction parameters";
    if ftype == f::LJ {
        let c6 = c.real("a Lennard-Jones c6")?;
        let c12 = c.real("a Lennard-Jones c12")?;
        return Ok(Some([c6, c12]));
    }
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
    c.skip(reals, ints, what)?;
    Ok(None)
}
