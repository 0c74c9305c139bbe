//! `Structure`: the atoms of a system and what does not change from frame to frame.
//!
//! Per-atom data is stored as parallel vectors (structure of arrays) so a million-atom system is a
//! handful of allocations. Readers in `io` build it; selections, bond guessing, the field engines
//! and the viewer read it. Positions are not here: they live in [`crate::model::Frame`].

use super::element::Element;
use super::name::Name8;

/// Where the bond list came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum BondSource {
    /// No bonds known yet.
    #[default]
    None,
    /// Read from the topology file (PSF bonds, PDB CONECT, mmCIF struct_conn).
    File,
    /// Guessed from covalent radii on the first frame.
    Guessed,
}

/// A bond's order where a file gives one other than single (MDL SDF/MOL types 2, 3 and 4; mol2's
/// `2`, `3` and `ar`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BondOrder {
    Double,
    Triple,
    /// Part of an aromatic ring, no Kekulé form given (SDF type 4, mol2 `ar`).
    Aromatic,
}

impl BondOrder {
    /// The order of an MDL bond type (1 single, 2 double, 3 triple, 4 aromatic); `None` for single
    /// and the query types.
    pub fn from_mdl(code: i64) -> Option<BondOrder> {
        match code {
            2 => Some(BondOrder::Double),
            3 => Some(BondOrder::Triple),
            4 => Some(BondOrder::Aromatic),
            _ => None,
        }
    }

    /// The order of a mol2 bond type (`1`, `2`, `3`, `ar`, `am`, ...); `None` for single, amide
    /// and the rest.
    pub fn from_mol2(code: &[u8]) -> Option<BondOrder> {
        match code {
            b"2" => Some(BondOrder::Double),
            b"3" => Some(BondOrder::Triple),
            b"ar" | b"AR" => Some(BondOrder::Aromatic),
            _ => None,
        }
    }
}

/// The static description of a system's atoms.
#[derive(Clone, Debug, Default)]
pub struct Structure {
    /// Free-text title from the file, if any.
    pub title: String,
    pub elements: Vec<Element>,
    /// Atom names (`CA`, `OW`, `H1`).
    pub names: Vec<Name8>,
    /// Force-field atom types where the file has them (PSF); empty otherwise.
    pub types: Vec<Name8>,
    pub resnames: Vec<Name8>,
    pub resids: Vec<i32>,
    /// Chain identifier (PDB chain, mmCIF auth_asym_id); empty label when the file has none.
    pub chains: Vec<Name8>,
    /// Segment identifier (PSF segid, PDB columns 73-76); empty label when the file has none.
    pub segids: Vec<Name8>,
    /// Partial charges in units of e, when the file has them.
    pub charges_e: Option<Vec<f32>>,
    /// Atomic radii in Angstrom (PQR), when the file has them.
    pub radii_angstrom: Option<Vec<f32>>,
    /// Isotropic B-factors (temperature factors) in Angstrom^2, when the file has them (PDB columns
    /// 61-66, mmCIF and BinaryCIF `B_iso_or_equiv`).
    pub bfactors: Option<Vec<f32>>,
    /// Occupancies (0 to 1), when the file has them (PDB columns 55-60, mmCIF `occupancy`).
    pub occupancies: Option<Vec<f32>>,
    /// Masses in dalton when the file gives them (PSF); otherwise use [`Structure::mass_dalton`].
    pub masses_dalton: Option<Vec<f32>>,
    /// Alternate-location indicator of each atom (PDB column 17, mmCIF `label_alt_id`; `b' '` for an
    /// atom without one), when the file has alternate locations. Every location is kept as its own
    /// atom, as VMD and MDAnalysis do; `altloc A` selects one.
    pub altlocs: Option<Vec<u8>>,
    /// Insertion code of each atom's residue (PDB column 27, mmCIF `pdbx_PDB_ins_code`; `b' '` for
    /// none), when the file has any: residues 163, 163A, 163B are residues of their own, and
    /// `resid 163A` or `insertion A` selects one.
    pub icodes: Option<Vec<u8>>,
    /// Bonds as pairs of atom indices, each pair with the smaller index first, sorted.
    pub bonds: Vec<[u32; 2]>,
    pub bond_source: BondSource,
    /// The bonds of higher order than single, where the file gives orders (SDF, mol2): pairs as in
    /// `bonds`, sorted. Drawn as double, triple or aromatic sticks and lines.
    pub multiple_bonds: Vec<([u32; 2], BondOrder)>,
}

impl Structure {
    /// Number of atoms.
    pub fn len(&self) -> usize {
        self.elements.len()
    }

    pub fn is_empty(&self) -> bool {
        self.elements.is_empty()
    }

    /// Appends one atom with the common fields; optional columns are handled by the caller.
    pub fn push_atom(&mut self, element: Element, name: Name8, resname: Name8, resid: i32, chain: Name8, segid: Name8) {
        self.elements.push(element);
        self.names.push(name);
        self.resnames.push(resname);
        self.resids.push(resid);
        self.chains.push(chain);
        self.segids.push(segid);
    }

    /// Reserves room for `n` more atoms in every per-atom vector that is always present.
    pub fn reserve(&mut self, n: usize) {
        self.elements.reserve(n);
        self.names.reserve(n);
        self.resnames.reserve(n);
        self.resids.reserve(n);
        self.chains.reserve(n);
        self.segids.reserve(n);
    }

    /// Mass of atom `i` in dalton: from the file when given, else from the element table.
    pub fn mass_dalton(&self, i: usize) -> f32 {
        match &self.masses_dalton {
            Some(m) => m.get(i).copied().unwrap_or(0.0),
            None => self.elements.get(i).map_or(0.0, |e| e.mass_dalton()),
        }
    }

    /// The alternate-location indicator of atom `i` (`b' '` when it has none).
    pub fn altloc(&self, i: usize) -> u8 {
        self.altlocs.as_ref().and_then(|a| a.get(i).copied()).unwrap_or(b' ')
    }

    /// The insertion code of atom `i`'s residue (`b' '` when it has none).
    pub fn icode(&self, i: usize) -> u8 {
        self.icodes.as_ref().and_then(|a| a.get(i).copied()).unwrap_or(b' ')
    }

    /// Atom `i`'s residue number as the file writes it: `163`, or `163A` with an insertion code.
    pub fn resid_text(&self, i: usize) -> String {
        let r = self.resids.get(i).copied().unwrap_or(0);
        match self.icode(i) {
            b' ' => r.to_string(),
            c => format!("{r}{}", c as char),
        }
    }

    /// Atom `i`'s residue as a label names it: `LYS13`, `LYS163A`; a name that ends in a digit is
    /// kept apart from the number (`Q101 1`, a mol2 substructure's name, not `Q1011`).
    pub fn residue_text(&self, i: usize) -> String {
        let name = self.resnames.get(i).map(|r| r.as_str().trim()).unwrap_or("?");
        let gap = if name.ends_with(|c: char| c.is_ascii_digit()) {
            " "
        } else {
            ""
        };
        format!("{name}{gap}{}", self.resid_text(i))
    }

    /// True when atoms `i` and `j` are different alternate locations of one site (both have an
    /// indicator and they differ): such copies overlap in space and are never bonded.
    pub fn are_alternates(&self, i: usize, j: usize) -> bool {
        let (a, b) = (self.altloc(i), self.altloc(j));
        a != b' ' && b != b' ' && a != b
    }

    /// Each atom's radius in Angstrom and whether they are the elements': the file's radii where
    /// it gives any above zero (a column of zeros, from a writer that had none to give, is no
    /// radii), else each element's van der Waals radius. What the Poisson-Boltzmann maps and a
    /// written PQR file take.
    pub fn radii_or_element(&self) -> (Vec<f32>, bool) {
        match &self.radii_angstrom {
            Some(r) if r.len() == self.len() && r.iter().any(|&v| v > 0.0) => (r.clone(), false),
            _ => (self.elements.iter().map(|e| e.vdw_radius_angstrom()).collect(), true),
        }
    }

    /// Sum of partial charges in e (f64 accumulation), or `None` when charges are unknown.
    pub fn total_charge_e(&self) -> Option<f64> {
        self.charges_e.as_ref().map(|q| q.iter().map(|&x| f64::from(x)).sum())
    }

    /// Start index of each residue: a new residue begins wherever segment, chain, residue id,
    /// insertion code or residue name changes from the previous atom. The last entry is `len()`.
    pub fn residue_starts(&self) -> Vec<usize> {
        let n = self.len();
        let mut starts = Vec::new();
        for i in 0..n {
            let new = i == 0
                || self.resids[i] != self.resids[i - 1]
                || self.icode(i) != self.icode(i - 1)
                || self.resnames[i] != self.resnames[i - 1]
                || self.chains[i] != self.chains[i - 1]
                || self.segids[i] != self.segids[i - 1];
            if new {
                starts.push(i);
            }
        }
        starts.push(n);
        starts
    }

    /// Number of residues: distinct (segment, chain, residue id, insertion code, residue name), so
    /// a residue whose atoms are not contiguous (a mol2 file listing every substructure's hydrogens
    /// after all heavy atoms) counts once, as MDAnalysis counts it.
    pub fn residue_count(&self) -> usize {
        let mut seen = std::collections::HashSet::new();
        for start in self.residue_starts().into_iter().filter(|&i| i < self.len()) {
            seen.insert((
                self.segids[start],
                self.chains[start],
                self.resids[start],
                self.icode(start),
                self.resnames[start],
            ));
        }
        seen.len()
    }

    /// Distinct chain (or, where no chain ids exist, segment) identifiers, in order of first
    /// appearance.
    pub fn chain_ids(&self) -> Vec<Name8> {
        let labels = if self.chains.iter().any(|c| !c.is_empty()) {
            &self.chains
        } else {
            &self.segids
        };
        let mut out: Vec<Name8> = Vec::new();
        for l in labels {
            if !l.is_empty() && out.last() != Some(l) && !out.contains(l) {
                out.push(*l);
            }
        }
        out
    }

    /// Checks that every per-atom vector has the same length; readers call this before returning.
    pub fn check_consistent(&self) -> Result<(), String> {
        let n = self.len();
        let lens = [
            ("names", self.names.len()),
            ("resnames", self.resnames.len()),
            ("resids", self.resids.len()),
            ("chains", self.chains.len()),
            ("segids", self.segids.len()),
        ];
        for (what, len) in lens {
            if len != n {
                return Err(format!("{what} has {len} entries for {n} atoms"));
            }
        }
        if !self.types.is_empty() && self.types.len() != n {
            return Err(format!("types has {} entries for {n} atoms", self.types.len()));
        }
        for (what, v) in [
            ("charges", &self.charges_e),
            ("radii", &self.radii_angstrom),
            ("masses", &self.masses_dalton),
        ] {
            if let Some(v) = v
                && v.len() != n
            {
                return Err(format!("{what} has {} entries for {n} atoms", v.len()));
            }
        }
        if let Some(a) = &self.altlocs
            && a.len() != n
        {
            return Err(format!("altlocs has {} entries for {n} atoms", a.len()));
        }
        if let Some(a) = &self.icodes
            && a.len() != n
        {
            return Err(format!("insertion codes has {} entries for {n} atoms", a.len()));
        }
        if let Some(b) = self.bonds.iter().find(|b| b[0] as usize >= n || b[1] as usize >= n) {
            return Err(format!("bond {}-{} refers to an atom past {n}", b[0] + 1, b[1] + 1));
        }
        Ok(())
    }
}
