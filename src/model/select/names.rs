//! The residue and atom names the selection keywords stand for: `protein`, `nucleic`, `water`,
//! `ion`, `backbone` and `sidechain`.

pub(super) const PROTEIN_RESNAMES: &[&str] = &[
    "ALA", "ARG", "ASN", "ASP", "CYS", "GLN", "GLU", "GLY", "HIS", "ILE", "LEU", "LYS", "MET", "PHE", "PRO", "SER",
    "THR", "TRP", "TYR", "VAL", "HSD", "HSE", "HSP", "HID", "HIE", "HIP", "HSE", "CYX", "CYM", "ASH", "GLH", "LYN",
    "ARN", "ACE", "NME", "NMA", "MSE", "SEC", "PYL", "CYS2", "HISA", "HISB", "HISH", "HISD", "HISE", "HISP", "LSN",
    "ASPH", "GLUH", "CALA", "CARG", "CASN", "CASP", "CCYS", "CGLN", "CGLU", "CGLY", "CHIS", "CILE", "CLEU", "CLYS",
    "CMET", "CPHE", "CPRO", "CSER", "CTHR", "CTRP", "CTYR", "CVAL", "NALA", "NARG", "NASN", "NASP", "NCYS", "NGLN",
    "NGLU", "NGLY", "NHIS", "NILE", "NLEU", "NLYS", "NMET", "NPHE", "NPRO", "NSER", "NTHR", "NTRP", "NTYR", "NVAL",
    "CHIE", "CHID", "CHIP", "NHIE", "NHID", "NHIP", "CYSH", "ORN", "DAB", "HYP", "CME", "ALAD", "ARGN", "ASF", "ASN1",
    "CASF", "CCYX", "CYS1", "HIS1", "HIS2", "LYSH", "NCYX", "PGLU", "QLN",
];
pub(super) const NUCLEIC_RESNAMES: &[&str] = &[
    "A", "C", "G", "T", "U", "DA", "DC", "DG", "DT", "DU", "RA", "RC", "RG", "RU", "ADE", "CYT", "GUA", "THY", "URA",
    "DA3", "DA5", "DC3", "DC5", "DG3", "DG5", "DT3", "DT5", "RA3", "RA5", "RC3", "RC5", "RG3", "RG5", "RU3", "RU5",
];
pub(super) const WATER_RESNAMES: &[&str] = &[
    "H2O", "HOH", "OHH", "HHO", "OH2", "SOL", "WAT", "TIP", "TIP2", "TIP3", "TIP4", "TIP5", "T3P", "T4P", "T5P", "SPC",
    "SPCE", "TP3", "TP4", "DOD", "D2O", "SOLV",
];
pub(super) const ION_RESNAMES: &[&str] = &[
    "NA", "NA+", "SOD", "CL", "CL-", "CLA", "K", "K+", "POT", "MG", "MG2", "CAL", "CA2", "ZN", "ZN2", "LI", "LIT",
    "RB", "CS", "CES", "BR", "IOD", "F", "FE2", "CD2", "MN", "CU", "NIO",
];
pub(super) const BACKBONE_NAMES: &[&str] = &["N", "CA", "C", "O"];

/// The atoms `protein` selects: residues of [`PROTEIN_RESNAMES`], and residues of other names
/// with an amino acid's backbone (atoms named N, CA and C), as VMD and ChimeraX count modified
/// residues in (methionine sulfoxide SME, phosphoserine SEP, ...); water, ions and nucleotides
/// never.
pub(super) fn protein_atoms(s: &crate::model::Structure) -> Vec<bool> {
    let mut out: Vec<bool> = s
        .resnames
        .iter()
        .map(|r| PROTEIN_RESNAMES.contains(&r.as_str()))
        .collect();
    let starts = s.residue_starts();
    for w in starts.windows(2) {
        let (a, b) = (w[0], w[1]);
        let Some(resname) = s.resnames.get(a).map(|r| r.as_str()) else {
            continue;
        };
        if out[a]
            || [WATER_RESNAMES, ION_RESNAMES, NUCLEIC_RESNAMES]
                .iter()
                .any(|l| l.contains(&resname))
        {
            continue;
        }
        let has = |name: &str| (a..b).any(|i| s.names.get(i).is_some_and(|n| n.as_str() == name));
        if has("N") && has("CA") && has("C") {
            out[a..b].fill(true);
        }
    }
    out
}
/// Atoms of a protein residue that are not its side chain: the backbone, its hydrogens and the
/// terminal oxygens and hydrogens in PDB, CHARMM, AMBER and GROMACS spellings.
pub(super) const MAIN_CHAIN_NAMES: &[&str] = &[
    "N", "CA", "C", "O", "OXT", "OT1", "OT2", "OC1", "OC2", "H", "HN", "HA", "HA2", "HA3", "H1", "H2", "H3", "HT1",
    "HT2", "HT3",
];
