//! Partial charges for a structure whose files carry none (PDB, mmCIF, GRO, XYZ): CHARMM22's charges
//! for the standard amino acids, TIP3P water and the common ions, by residue and atom name
//! (`assets/charges/charmm22.tsv`, with its provenance), as ChimeraX's `coulombic` and PDB2PQR give a
//! protein read from a PDB file its force field's charges.
//!
//! Crystal structures rarely have hydrogens, so every hydrogen's charge the file lacks sits on the
//! heavy atom it is bonded to in the force field's residue (a united-atom form: each residue keeps
//! its net charge); a hydrogen the file has takes its own charge back from the heavy atom nearest it
//! (by name where the names agree, else the mean of the table's hydrogens on that atom: a PDB file's
//! HB3 where CHARMM names HB1 and HB2). The first amino acid of each chain is an N-terminal NH3+
//! (`NTER`, `GLYP`, `PROP`), a residue with an `OXT` (`OT2`, `OC2`) oxygen a C-terminal COO- (`CTER`),
//! two cysteine sulphurs within 2.3 A a disulfide (`DISU`); AMBER's and GROMACS's terminal names
//! (`NALA`, `CGLY`) say the same. Histidine is neutral, protonated on ND1 (`HSD`, CHARMM's default),
//! unless the residue name (`HIE`, `HSE`, `HIP`, `HSP`, ...) or its hydrogens say otherwise; `ASH`
//! and `GLH` (`ASPP`, `GLUP`) are the neutral acids. Other residues (ligands, modified residues) have no charges and count as
//! zero; [`StandardCharges::note`] says so, naming them. Owns [`standard_charges`].

use super::Structure;
use std::collections::HashMap;
use std::sync::OnceLock;

/// The table, embedded at build time.
const TABLE: &str = include_str!("../../assets/charges/charmm22.tsv");

/// How [`StandardCharges::note`] begins.
pub const NOTE_START: &str = "the files give no partial charges; ";

/// Two cysteine sulphurs closer than this (Angstrom) make a disulfide.
const DISULFIDE_ANGSTROM: f32 = 2.3;

/// Residues and patches: heavy atom name to its charge with its hydrogens' (e).
struct United {
    residues: HashMap<String, Vec<(String, f64)>>,
    /// Residues and patches: each hydrogen's name, its heavy atom's and its charge (e).
    hydrogens: HashMap<String, Vec<(String, String, f64)>>,
}

impl United {
    /// The charge of a hydrogen named `h` on heavy atom `parent` of `res`: the table's hydrogen of
    /// that name there, else the mean of the table's hydrogens on that atom (a file's HB3 where
    /// CHARMM names HB1 and HB2, a backbone H where it names HN); `None` when the table has none there.
    fn hydrogen(&self, res: &str, parent: &str, h: &str) -> Option<f64> {
        let on: Vec<&(String, String, f64)> = self.hydrogens.get(res)?.iter().filter(|e| e.1 == parent).collect();
        if let Some(e) = on.iter().find(|e| e.0 == h) {
            return Some(e.2);
        }
        (!on.is_empty()).then(|| on.iter().map(|e| e.2).sum::<f64>() / on.len() as f64)
    }
}

/// The heavy atom of `atoms` a hydrogen named `h` is bonded to, by CHARMM's naming: the name after
/// the H is the heavy atom's name after its element letter, whole or without its last one or two
/// characters (HG21 -> CG2, HB1 -> CB, HH11 -> NH1); HN, HT1-3 and HN1-2 are on N, water's H1 and H2
/// on its oxygen.
fn parent(atoms: &[(String, f64)], h: &str) -> Option<usize> {
    let heavy = |name: &str| atoms.iter().position(|(n, _)| n == name);
    match h {
        "HN" | "HT1" | "HT2" | "HT3" | "HN1" | "HN2" => return heavy("N"),
        "H1" | "H2" => return heavy("OH2"),
        _ => {}
    }
    let suffix = h.get(1..)?;
    (0..suffix.len().min(3)).find_map(|cut| {
        let want = suffix.get(..suffix.len() - cut)?;
        if want.is_empty() {
            return None;
        }
        atoms
            .iter()
            .position(|(n, _)| !n.starts_with('H') && n.get(1..) == Some(want))
    })
}

fn united() -> &'static United {
    static TABLE_UNITED: OnceLock<United> = OnceLock::new();
    TABLE_UNITED.get_or_init(|| {
        let mut all: HashMap<String, Vec<(String, f64)>> = HashMap::new();
        for line in TABLE.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
            let f: Vec<&str> = line.split('\t').collect();
            if let (Some(r), Some(a), Some(Ok(q))) = (f.first(), f.get(1), f.get(2).map(|v| v.parse::<f64>())) {
                all.entry((*r).to_string()).or_default().push(((*a).to_string(), q));
            }
        }
        let mut residues = HashMap::new();
        let mut hydrogens = HashMap::new();
        for (res, atoms) in &all {
            let mut hs = Vec::new();
            let mut heavy: Vec<(String, f64)> = atoms
                .iter()
                .filter(|(n, _)| !is_hydrogen_name(n, res))
                .cloned()
                .collect();
            for (n, q) in atoms.iter().filter(|(n, _)| is_hydrogen_name(n, res)) {
                if let Some(h) = parent(&heavy, n).and_then(|i| heavy.get_mut(i)) {
                    h.1 += q;
                    hs.push((n.clone(), h.0.clone(), *q));
                }
            }
            if res == "DISU" {
                // The patch names the first cysteine's atoms (1CB, 1SG); its CB keeps the residue's
                // two HB.
                let q = |r: &str, a: &str| {
                    all.get(r)
                        .and_then(|v| v.iter().find(|(n, _)| n == a))
                        .map_or(0.0, |(_, q)| *q)
                };
                let hb = q("CYS", "HB1");
                heavy = vec![
                    ("CB".into(), q("DISU", "1CB") + 2.0 * hb),
                    ("SG".into(), q("DISU", "1SG")),
                ];
                hs = ["HB1", "HB2"].map(|h| (h.to_string(), "CB".to_string(), hb)).to_vec();
            }
            residues.insert(res.clone(), heavy);
            hydrogens.insert(res.clone(), hs);
        }
        United { residues, hydrogens }
    })
}

/// Whether a name in the table is a hydrogen's (the ions' names start with other letters; no heavy
/// atom of these residues is named H...).
fn is_hydrogen_name(name: &str, residue: &str) -> bool {
    name.starts_with('H') && !matches!(residue, "CAL" | "MG" | "ZN2" | "SOD" | "POT" | "CLA")
}

/// Charges given to a structure's atoms, and what they cover.
#[derive(Clone, Debug, PartialEq)]
pub struct StandardCharges {
    /// One per atom, in e (0 for atoms not in the table).
    pub charges_e: Vec<f32>,
    /// Residues given the table's charges.
    pub residues: usize,
    /// Residue names not in the table and how many atoms they have, largest first.
    pub unknown: Vec<(String, usize)>,
    /// Atoms of known residues whose names the table does not have (charge 0).
    pub unknown_atoms: usize,
    /// Amino acids whose charges do not sum to a whole number of e (atoms missing from the file,
    /// as in many crystal structures' side chains).
    pub incomplete: usize,
    /// Sum of the charges (e).
    pub net_e: f64,
}

impl StandardCharges {
    /// The note said when the charges are given: which charges, how hydrogens are treated, the net
    /// charge and what has none.
    pub fn note(&self) -> String {
        let mut s = format!(
            "{NOTE_START}{} residue{} take CHARMM22's (TIP3P water, ions; a hydrogen the files lack has its charge on its heavy atom), histidine neutral unless named otherwise: net charge {:+.2} e",
            self.residues,
            if self.residues == 1 { "" } else { "s" },
            self.net_e
        );
        if !self.unknown.is_empty() {
            let atoms: usize = self.unknown.iter().map(|(_, n)| n).sum();
            let names: Vec<&str> = self.unknown.iter().take(6).map(|(r, _)| r.as_str()).collect();
            s.push_str(&format!(
                "; {atoms} atom{} of residues the table lacks ({}{}) count as zero",
                if atoms == 1 { "" } else { "s" },
                names.join(", "),
                if self.unknown.len() > names.len() { ", ..." } else { "" }
            ));
        }
        if self.incomplete > 0 {
            s.push_str(&format!(
                "; {} amino acid{} lack atoms, so {} charge is not a whole number of e",
                self.incomplete,
                if self.incomplete == 1 { "" } else { "s" },
                if self.incomplete == 1 { "its" } else { "their" }
            ));
        }
        if self.unknown_atoms > 0 {
            s.push_str(&format!(
                "; {} atom{} with names the residues lack count as zero",
                self.unknown_atoms,
                if self.unknown_atoms == 1 { "" } else { "s" }
            ));
        }
        s
    }
}

/// The table's residue for a file's residue name (the common aliases of PDB, AMBER, GROMACS and
/// CHARMM files), `None` for residues it does not have.
fn table_residue(resname: &str, names: &[&str]) -> Option<&'static str> {
    let has = |n: &str| names.contains(&n);
    Some(match resname {
        "ALA" | "ARG" | "ASN" | "ASP" | "CYS" | "GLN" | "GLU" | "GLY" | "ILE" | "LEU" | "LYS" | "MET" | "PHE"
        | "PRO" | "SER" | "THR" | "TRP" | "TYR" | "VAL" => return united_key(resname),
        "CYX" => "CYS",
        "HIS" if has("HD1") && (has("HE2")) => "HSP",
        "HIS" if has("HE2") => "HSE",
        "HIS" | "HSD" | "HID" | "HISD" => "HSD",
        "HSE" | "HIE" | "HISE" => "HSE",
        "HSP" | "HIP" | "HIH" | "HISH" | "HISP" => "HSP",
        "HOH" | "WAT" | "TIP3" | "TIP" | "T3P" | "TP3" | "SOL" | "SPC" | "H2O" | "DOD" | "D2O" => "TIP3",
        "NA" | "SOD" | "NA+" => "SOD",
        "K" | "POT" | "K+" => "POT",
        "CL" | "CLA" | "CL-" => "CLA",
        "CA" | "CAL" if names.len() == 1 => "CAL",
        "MG" if names.len() == 1 => "MG",
        "ZN" | "ZN2" if names.len() == 1 => "ZN2",
        _ => return None,
    })
}

/// The side-chain patch of a protonated acid's name (AMBER's ASH and GLH, CHARMM's ASPP and GLUP).
fn side_patch(resname: &str) -> Option<&'static str> {
    match resname {
        "ASH" | "ASPP" | "ASPH" => Some("ASPP"),
        "GLH" | "GLUP" | "GLUH" => Some("GLUP"),
        _ => None,
    }
}

/// A residue's table key, its side-chain patch, and whether its name makes it an N or a C terminus:
/// the names the table knows, protonated acids, and the terminal names of AMBER and GROMACS files
/// (`NALA`, `CGLY`: the amino acid with an N- or C-terminal prefix).
fn residue_key(resname: &str, names: &[&str]) -> Option<(&'static str, Option<&'static str>, bool, bool)> {
    if let Some(patch) = side_patch(resname) {
        let key = if patch == "ASPP" { "ASP" } else { "GLU" };
        return Some((key, Some(patch), false, false));
    }
    if let Some(key) = table_residue(resname, names) {
        return Some((key, None, false, false));
    }
    let (first, rest) = (resname.get(..1)?, resname.get(1..)?);
    if resname.len() != 4 || !matches!(first, "N" | "C") {
        return None;
    }
    let (key, patch, _, _) = residue_key(rest, names)?;
    let amino = united().residues.get(key)?.iter().any(|(n, _)| n == "CA");
    amino.then_some((key, patch, first == "N", first == "C"))
}

fn united_key(resname: &str) -> Option<&'static str> {
    const AMINO: [&str; 19] = [
        "ALA", "ARG", "ASN", "ASP", "CYS", "GLN", "GLU", "GLY", "ILE", "LEU", "LYS", "MET", "PHE", "PRO", "SER", "THR",
        "TRP", "TYR", "VAL",
    ];
    AMINO.iter().copied().find(|&a| a == resname)
}

/// The table's name of a file's heavy atom in residue `res` (`c_term`: the residue ends its chain).
fn table_atom<'a>(res: &str, name: &'a str, c_term: bool) -> &'a str {
    match (res, name) {
        ("ILE", "CD1") => "CD",
        ("TIP3", "O" | "OW" | "OH2") => "OH2",
        (_, "O" | "OT1" | "OC1" | "O1") if c_term => "OT1",
        (_, "OXT" | "OT2" | "OC2" | "O2") if c_term => "OT2",
        _ => name,
    }
}

/// CHARMM22 charges for `s` (see the module documentation). `positions_angstrom` (the first frame)
/// find disulfides and the heavy atom each of the file's hydrogens is on; without them (empty) no
/// cysteine is bridged and the file's hydrogens count as zero, their charges on their heavy atoms.
/// `None` when `s` has no amino acid the table knows.
pub fn standard_charges(s: &Structure, positions_angstrom: &[[f32; 3]]) -> Option<StandardCharges> {
    let table = united();
    let starts = s.residue_starts();
    let n = s.len();
    let mut charges = vec![0.0f32; n];
    let mut residues = 0usize;
    let mut unknown: HashMap<String, usize> = HashMap::new();
    let mut unknown_atoms = 0usize;
    let sulphurs: Vec<usize> = (0..n)
        .filter(|&i| {
            s.names.get(i).is_some_and(|a| a.as_str() == "SG")
                && s.resnames.get(i).is_some_and(|r| matches!(r.as_str(), "CYS" | "CYX"))
        })
        .collect();
    let bridged = |i: usize| {
        let Some(p) = positions_angstrom.get(i) else {
            return false;
        };
        // Another cysteine's sulphur: not one of this residue's (an alternate location of the same
        // atom sits within a bond length of it).
        let same_residue = |j: usize| {
            s.resids.get(i) == s.resids.get(j)
                && s.chains.get(i) == s.chains.get(j)
                && s.segids.get(i) == s.segids.get(j)
        };
        sulphurs.iter().any(|&j| {
            j != i
                && !same_residue(j)
                && positions_angstrom.get(j).is_some_and(|q| {
                    (0..3).map(|k| (p[k] - q[k]) * (p[k] - q[k])).sum::<f32>() < DISULFIDE_ANGSTROM * DISULFIDE_ANGSTROM
                })
        })
    };
    let mut aminos = 0usize;
    let mut incomplete = 0usize;
    for w in starts.windows(2) {
        let (a, b) = (w[0], w[1]);
        let resname = s
            .resnames
            .get(a)
            .map(|r| r.as_str().to_ascii_uppercase())
            .unwrap_or_default();
        let names: Vec<&str> = (a..b).filter_map(|i| s.names.get(i).map(|x| x.as_str())).collect();
        let Some((key, side, named_n, named_c)) = residue_key(&resname, &names) else {
            *unknown.entry(resname).or_default() += b - a;
            continue;
        };
        let Some(base) = table.residues.get(key) else {
            continue;
        };
        residues += 1;
        let amino = base.iter().any(|(n, _)| n == "CA");
        aminos += usize::from(amino);
        // The structure's first residue, a new chain or segment, or residue numbers starting again
        // begin a chain: its first amino acid is an N terminus.
        let chain_start = amino
            && names.contains(&"N")
            && (named_n
                || a == 0
                || s.chains.get(a - 1) != s.chains.get(a)
                || s.segids.get(a - 1) != s.segids.get(a)
                || s.resids.get(a).zip(s.resids.get(a - 1)).is_some_and(|(r, q)| r < q));
        let c_term = amino && (named_c || names.iter().any(|n| matches!(*n, "OXT" | "OT2" | "OC2" | "O2")));
        // Alternate locations are kept as atoms of their own: the residue's first one carries the
        // charges, the others none.
        let first_alt = (a..b).map(|i| s.altloc(i)).find(|&c| c != b' ');
        let n_patch = match key {
            "GLY" => "GLYP",
            "PRO" => "PROP",
            _ => "NTER",
        };
        let lookup = |patch: &'static str, atom: &str| {
            table
                .residues
                .get(patch)
                .and_then(|p| p.iter().find(|(n, _)| n == atom).map(|(_, q)| (*q, patch)))
        };
        let is_h = |i: usize| {
            s.elements.get(i).is_some_and(|e| e.number() == 1)
                || (s.elements.get(i).is_some_and(|e| e.number() == 0)
                    && s.names.get(i).is_some_and(|x| x.as_str().starts_with('H')))
        };
        let kept = |i: usize| s.altloc(i) == b' ' || Some(s.altloc(i)) == first_alt;
        let disulfide = key == "CYS" && bridged_residue(a, b, s, &bridged);
        // Each heavy atom's charge with its hydrogens', and the table (residue or patch) and name
        // it came from.
        let mut heavy: Vec<(usize, &'static str, String)> = Vec::new();
        for i in (a..b).filter(|&i| !is_h(i) && kept(i)) {
            let file_name = s.names.get(i).map(|x| x.as_str()).unwrap_or_default();
            let name = if base.len() == 1 {
                // An ion or a water: whatever the file calls its one heavy atom.
                base.first().map_or(file_name, |(n, _)| n.as_str())
            } else {
                table_atom(key, file_name, c_term)
            };
            let found = (chain_start.then(|| lookup(n_patch, name)).flatten())
                .or_else(|| c_term.then(|| lookup("CTER", name)).flatten())
                .or_else(|| disulfide.then(|| lookup("DISU", name)).flatten())
                .or_else(|| side.and_then(|patch| lookup(patch, name)))
                .or_else(|| lookup(key, name));
            match found {
                Some((q, from)) => {
                    if let Some(c) = charges.get_mut(i) {
                        *c = q as f32;
                    }
                    heavy.push((i, from, name.to_string()));
                }
                None => unknown_atoms += 1,
            }
        }
        // The file's hydrogens (with coordinates) take their own charges back from the heavy atom
        // nearest them (within 1.35 A), which keeps the rest: the residue's sum stays.
        if positions_angstrom.len() == n {
            for h in (a..b).filter(|&i| is_h(i) && kept(i)) {
                let d2 = |j: usize| {
                    (0..3)
                        .map(|k| (positions_angstrom[h][k] - positions_angstrom[j][k]).powi(2))
                        .sum::<f32>()
                };
                let Some((j, from, name)) = heavy
                    .iter()
                    .filter(|(j, _, _)| d2(*j) < 1.35 * 1.35)
                    .min_by(|x, y| d2(x.0).total_cmp(&d2(y.0)))
                else {
                    continue;
                };
                let h_name = s.names.get(h).map(|x| x.as_str()).unwrap_or_default();
                let q = table
                    .hydrogen(from, name, h_name)
                    .or_else(|| table.hydrogen(key, name, h_name));
                if let Some(q) = q {
                    if let Some(c) = charges.get_mut(h) {
                        *c = q as f32;
                    }
                    if let Some(c) = charges.get_mut(*j) {
                        *c -= q as f32;
                    }
                }
            }
        }
        let sum = charges
            .get(a..b)
            .map_or(0.0, |q| q.iter().map(|&v| f64::from(v)).sum::<f64>());
        if amino && (sum - sum.round()).abs() > 1e-3 {
            incomplete += 1;
        }
    }
    // Water and ions alone carry no potential worth the name: only a protein's residues give charges.
    if aminos == 0 {
        return None;
    }
    let mut unknown: Vec<(String, usize)> = unknown.into_iter().collect();
    unknown.sort_by(|x, y| y.1.cmp(&x.1).then_with(|| x.0.cmp(&y.0)));
    let net_e = charges.iter().map(|&q| f64::from(q)).sum();
    Some(StandardCharges {
        charges_e: charges,
        residues,
        unknown,
        unknown_atoms,
        incomplete,
        net_e,
    })
}

/// Whether the cysteine of atoms a..b has its SG bridged to another.
fn bridged_residue(a: usize, b: usize, s: &Structure, bridged: &dyn Fn(usize) -> bool) -> bool {
    (a..b).any(|i| s.names.get(i).is_some_and(|x| x.as_str() == "SG") && bridged(i))
}
