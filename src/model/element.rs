//! The periodic table: symbols, masses, covalent and van der Waals radii, CPK colours, and the
//! rules that turn atom names, element columns and masses into elements.
//!
//! Readers in `io` (PDB, PQR, PSF, GRO, XYZ, mmCIF) map atom names and symbols to an [`Element`]
//! with the `guess_*` functions here; `model::bonds` uses covalent radii; the viewer uses vdW radii
//! and CPK colours. Unknown atoms are element 0 ("X"), never an error.
//!
//! Sources of the table (Z = 1..=118):
//! - mass: IUPAC standard atomic weights (abridged, conventional values for elements with an
//!   interval); for elements without a stable isotope, the mass number of the longest-lived one.
//! - covalent radius: Cordero et al., Dalton Trans. 2008, 2832 (sp3 carbon, low-spin Mn/Fe/Co);
//!   past Cm (Z > 96), where Cordero has no value, Pyykko & Atsumi single-bond radii (2009).
//! - van der Waals radius: Bondi, J. Phys. Chem. 1964 where Bondi gives one; otherwise Alvarez,
//!   Dalton Trans. 2013; for Po, At, Rn, Fr, Ra (in neither) Mantina et al. 2009; 2.0 A past Es.
//! - colour: Jmol's CPK scheme; elements past Mt reuse Mt's colour.

use super::name::Name8;

/// An element by atomic number; 0 means unknown ("X", also used for dummy atoms).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
pub struct Element(pub u8);

/// One row of the table.
#[derive(Clone, Copy, Debug)]
pub struct ElementData {
    pub symbol: &'static str,
    pub mass_dalton: f32,
    pub covalent_radius_angstrom: f32,
    pub vdw_radius_angstrom: f32,
    pub cpk_rgb: [u8; 3],
}

const fn e(
    symbol: &'static str,
    mass_dalton: f32,
    covalent_radius_angstrom: f32,
    vdw_radius_angstrom: f32,
    cpk_rgb: [u8; 3],
) -> ElementData {
    ElementData {
        symbol,
        mass_dalton,
        covalent_radius_angstrom,
        vdw_radius_angstrom,
        cpk_rgb,
    }
}

/// Number of rows: the unknown element plus Z = 1..=118.
const N_ROWS: usize = 119;

/// Indexed by atomic number. Row 0 is the unknown element.
static TABLE: [ElementData; N_ROWS] = ROWS;

/// The rows as a constant, so the symbol look-up table can be built at compile time.
const ROWS: [ElementData; N_ROWS] = [
    e("X", 0.0, 0.0, 1.5, [255, 20, 147]),
    e("H", 1.008, 0.31, 1.20, [255, 255, 255]),
    e("He", 4.0026, 0.28, 1.40, [217, 255, 255]),
    e("Li", 6.94, 1.28, 1.82, [204, 128, 255]),
    e("Be", 9.0122, 0.96, 1.98, [194, 255, 0]),
    e("B", 10.81, 0.84, 1.91, [255, 181, 181]),
    e("C", 12.011, 0.76, 1.70, [144, 144, 144]),
    e("N", 14.007, 0.71, 1.55, [48, 80, 248]),
    e("O", 15.999, 0.66, 1.52, [255, 13, 13]),
    e("F", 18.998, 0.57, 1.47, [144, 224, 80]),
    e("Ne", 20.180, 0.58, 1.54, [179, 227, 245]),
    e("Na", 22.990, 1.66, 2.27, [171, 92, 242]),
    e("Mg", 24.305, 1.41, 1.73, [138, 255, 0]),
    e("Al", 26.982, 1.21, 2.25, [191, 166, 166]),
    e("Si", 28.085, 1.11, 2.10, [240, 200, 160]),
    e("P", 30.974, 1.07, 1.80, [255, 128, 0]),
    e("S", 32.06, 1.05, 1.80, [255, 255, 48]),
    e("Cl", 35.45, 1.02, 1.75, [31, 240, 31]),
    e("Ar", 39.948, 1.06, 1.88, [128, 209, 227]),
    e("K", 39.098, 2.03, 2.75, [143, 64, 212]),
    e("Ca", 40.078, 1.76, 2.62, [61, 255, 0]),
    e("Sc", 44.956, 1.70, 2.58, [230, 230, 230]),
    e("Ti", 47.867, 1.60, 2.46, [191, 194, 199]),
    e("V", 50.942, 1.53, 2.42, [166, 166, 171]),
    e("Cr", 51.996, 1.39, 2.45, [138, 153, 199]),
    e("Mn", 54.938, 1.39, 2.45, [156, 122, 199]),
    e("Fe", 55.845, 1.32, 2.44, [224, 102, 51]),
    e("Co", 58.933, 1.26, 2.40, [240, 144, 160]),
    e("Ni", 58.693, 1.24, 1.63, [80, 208, 80]),
    e("Cu", 63.546, 1.32, 1.40, [200, 128, 51]),
    e("Zn", 65.38, 1.22, 1.39, [125, 128, 176]),
    e("Ga", 69.723, 1.22, 1.87, [194, 143, 143]),
    e("Ge", 72.630, 1.20, 2.29, [102, 143, 143]),
    e("As", 74.922, 1.19, 1.85, [189, 128, 227]),
    e("Se", 78.971, 1.20, 1.90, [255, 161, 0]),
    e("Br", 79.904, 1.20, 1.85, [166, 41, 41]),
    e("Kr", 83.798, 1.16, 2.02, [92, 184, 209]),
    e("Rb", 85.468, 2.20, 3.21, [112, 46, 176]),
    e("Sr", 87.62, 1.95, 2.84, [0, 255, 0]),
    e("Y", 88.906, 1.90, 2.75, [148, 255, 255]),
    e("Zr", 91.224, 1.75, 2.52, [148, 224, 224]),
    e("Nb", 92.906, 1.64, 2.56, [115, 194, 201]),
    e("Mo", 95.95, 1.54, 2.45, [84, 181, 181]),
    e("Tc", 98.0, 1.47, 2.44, [59, 158, 158]),
    e("Ru", 101.07, 1.46, 2.46, [36, 143, 143]),
    e("Rh", 102.91, 1.42, 2.44, [10, 125, 140]),
    e("Pd", 106.42, 1.39, 1.63, [0, 105, 133]),
    e("Ag", 107.87, 1.45, 1.72, [192, 192, 192]),
    e("Cd", 112.41, 1.44, 1.58, [255, 217, 143]),
    e("In", 114.82, 1.42, 1.93, [166, 117, 115]),
    e("Sn", 118.71, 1.39, 2.17, [102, 128, 128]),
    e("Sb", 121.76, 1.39, 2.47, [158, 99, 181]),
    e("Te", 127.60, 1.38, 2.06, [212, 122, 0]),
    e("I", 126.90, 1.39, 1.98, [148, 0, 148]),
    e("Xe", 131.29, 1.40, 2.16, [66, 158, 176]),
    e("Cs", 132.91, 2.44, 3.48, [87, 23, 143]),
    e("Ba", 137.33, 2.15, 3.03, [0, 201, 0]),
    e("La", 138.91, 2.07, 2.98, [112, 212, 255]),
    e("Ce", 140.12, 2.04, 2.88, [255, 255, 199]),
    e("Pr", 140.91, 2.03, 2.92, [217, 255, 199]),
    e("Nd", 144.24, 2.01, 2.95, [199, 255, 199]),
    e("Pm", 145.0, 1.99, 2.90, [163, 255, 199]),
    e("Sm", 150.36, 1.98, 2.90, [143, 255, 199]),
    e("Eu", 151.96, 1.98, 2.87, [97, 255, 199]),
    e("Gd", 157.25, 1.96, 2.83, [69, 255, 199]),
    e("Tb", 158.93, 1.94, 2.79, [48, 255, 199]),
    e("Dy", 162.50, 1.92, 2.87, [31, 255, 199]),
    e("Ho", 164.93, 1.92, 2.81, [0, 255, 156]),
    e("Er", 167.26, 1.89, 2.83, [0, 230, 117]),
    e("Tm", 168.93, 1.90, 2.79, [0, 212, 82]),
    e("Yb", 173.05, 1.87, 2.80, [0, 191, 56]),
    e("Lu", 174.97, 1.87, 2.74, [0, 171, 36]),
    e("Hf", 178.49, 1.75, 2.63, [77, 194, 255]),
    e("Ta", 180.95, 1.70, 2.53, [77, 166, 255]),
    e("W", 183.84, 1.62, 2.57, [33, 148, 214]),
    e("Re", 186.21, 1.51, 2.49, [38, 125, 171]),
    e("Os", 190.23, 1.44, 2.48, [38, 102, 150]),
    e("Ir", 192.22, 1.41, 2.41, [23, 84, 135]),
    e("Pt", 195.08, 1.36, 1.72, [208, 208, 224]),
    e("Au", 196.97, 1.36, 1.66, [255, 209, 35]),
    e("Hg", 200.59, 1.32, 1.55, [184, 184, 208]),
    e("Tl", 204.38, 1.45, 1.96, [166, 84, 77]),
    e("Pb", 207.2, 1.46, 2.02, [87, 89, 97]),
    e("Bi", 208.98, 1.48, 2.54, [158, 79, 181]),
    e("Po", 209.0, 1.40, 1.97, [171, 92, 0]),
    e("At", 210.0, 1.50, 2.02, [117, 79, 69]),
    e("Rn", 222.0, 1.50, 2.20, [66, 130, 150]),
    e("Fr", 223.0, 2.60, 3.48, [66, 0, 102]),
    e("Ra", 226.0, 2.21, 2.83, [0, 125, 0]),
    e("Ac", 227.0, 2.15, 2.80, [112, 171, 250]),
    e("Th", 232.04, 2.06, 2.93, [0, 186, 255]),
    e("Pa", 231.04, 2.00, 2.88, [0, 161, 255]),
    e("U", 238.03, 1.96, 1.86, [0, 143, 255]),
    e("Np", 237.0, 1.90, 2.82, [0, 128, 255]),
    e("Pu", 244.0, 1.87, 2.81, [0, 107, 255]),
    e("Am", 243.0, 1.80, 2.83, [84, 92, 242]),
    e("Cm", 247.0, 1.69, 3.05, [120, 92, 227]),
    e("Bk", 247.0, 1.68, 3.40, [138, 79, 227]),
    e("Cf", 251.0, 1.68, 3.05, [161, 54, 212]),
    e("Es", 252.0, 1.65, 2.70, [179, 31, 212]),
    e("Fm", 257.0, 1.67, 2.00, [179, 31, 186]),
    e("Md", 258.0, 1.73, 2.00, [179, 13, 166]),
    e("No", 259.0, 1.76, 2.00, [189, 13, 135]),
    e("Lr", 262.0, 1.61, 2.00, [199, 0, 102]),
    e("Rf", 267.0, 1.57, 2.00, [204, 0, 89]),
    e("Db", 268.0, 1.49, 2.00, [209, 0, 79]),
    e("Sg", 269.0, 1.43, 2.00, [217, 0, 69]),
    e("Bh", 270.0, 1.41, 2.00, [224, 0, 56]),
    e("Hs", 269.0, 1.34, 2.00, [230, 0, 46]),
    e("Mt", 278.0, 1.29, 2.00, [235, 0, 38]),
    e("Ds", 281.0, 1.28, 2.00, [235, 0, 38]),
    e("Rg", 282.0, 1.21, 2.00, [235, 0, 38]),
    e("Cn", 285.0, 1.22, 2.00, [235, 0, 38]),
    e("Nh", 286.0, 1.36, 2.00, [235, 0, 38]),
    e("Fl", 289.0, 1.43, 2.00, [235, 0, 38]),
    e("Mc", 290.0, 1.62, 2.00, [235, 0, 38]),
    e("Lv", 293.0, 1.75, 2.00, [235, 0, 38]),
    e("Ts", 294.0, 1.65, 2.00, [235, 0, 38]),
    e("Og", 294.0, 1.57, 2.00, [235, 0, 38]),
];

/// Index into [`SYMBOL_LOOKUP`] for an upper-cased one- or two-letter symbol (`second` = 0 for a
/// one-letter symbol). `None` for bytes that are not letters.
const fn lookup_index(first: u8, second: u8) -> Option<usize> {
    let f = first.to_ascii_uppercase();
    if !f.is_ascii_uppercase() {
        return None;
    }
    let s = if second == 0 {
        0
    } else {
        let s = second.to_ascii_uppercase();
        if !s.is_ascii_uppercase() {
            return None;
        }
        (s - b'A') as usize + 1
    };
    Some((f - b'A') as usize * 27 + s)
}

/// Symbol to atomic number, indexed by [`lookup_index`]; 0 where no element has the symbol.
static SYMBOL_LOOKUP: [u8; 26 * 27] = build_lookup();

const fn build_lookup() -> [u8; 26 * 27] {
    let mut out = [0u8; 26 * 27];
    let mut z = 1;
    while z < N_ROWS {
        let sym = ROWS[z].symbol.as_bytes();
        let second = if sym.len() > 1 { sym[1] } else { 0 };
        if let Some(i) = lookup_index(sym[0], second) {
            out[i] = z as u8;
        }
        z += 1;
    }
    out
}

impl Element {
    /// The unknown element.
    pub const UNKNOWN: Element = Element(0);
    pub const H: Element = Element(1);
    pub const C: Element = Element(6);
    pub const N: Element = Element(7);
    pub const O: Element = Element(8);
    pub const S: Element = Element(16);

    /// Table row; the unknown element's row for numbers past the table.
    pub fn data(self) -> &'static ElementData {
        TABLE.get(self.0 as usize).unwrap_or(&TABLE[0])
    }

    /// Atomic number (0 for unknown).
    pub fn number(self) -> u8 {
        self.0
    }

    pub fn symbol(self) -> &'static str {
        self.data().symbol
    }

    pub fn mass_dalton(self) -> f32 {
        self.data().mass_dalton
    }

    pub fn covalent_radius_angstrom(self) -> f32 {
        self.data().covalent_radius_angstrom
    }

    pub fn vdw_radius_angstrom(self) -> f32 {
        self.data().vdw_radius_angstrom
    }

    pub fn cpk_rgb(self) -> [u8; 3] {
        self.data().cpk_rgb
    }

    /// Case-insensitive symbol look-up ("C", "cl", "CL"); `None` when no element has it.
    pub fn from_symbol(symbol: &str) -> Option<Element> {
        Element::from_symbol_bytes(symbol.as_bytes())
    }

    /// Case-insensitive symbol look-up on bytes, ignoring surrounding blanks; constant time.
    pub fn from_symbol_bytes(symbol: &[u8]) -> Option<Element> {
        let s = symbol.trim_ascii();
        let i = match *s {
            [a] => lookup_index(a, 0),
            [a, b] => lookup_index(a, b),
            _ => None,
        }?;
        match SYMBOL_LOOKUP.get(i) {
            Some(&z) if z > 0 => Some(Element(z)),
            _ => None,
        }
    }

    /// An element column's symbol (PDB columns 77-78, mmCIF `type_symbol`, an XYZ line's first
    /// field): as [`Element::from_symbol_bytes`], and the hydrogen isotopes' D and T (neutron
    /// structures write deuterium as D) are hydrogen. Atom names are not read this way: a name
    /// "T1" or a Drude particle's "DC" is no hydrogen.
    pub fn from_element_symbol(symbol: &[u8]) -> Option<Element> {
        match symbol.trim_ascii() {
            [b'D' | b'd' | b'T' | b't'] => Some(Element(1)),
            s => Element::from_symbol_bytes(s),
        }
    }

    /// From an atomic number; `None` when out of the table.
    pub fn from_number(z: u32) -> Option<Element> {
        (z >= 1 && (z as usize) < N_ROWS).then_some(Element(z as u8))
    }

    /// The element whose standard atomic weight is nearest to `mass_dalton`, when it lies within
    /// 0.5 Da of it; `None` for zero, negative or unmatched masses (lone pairs, Drude particles,
    /// repartitioned hydrogens). Used for PSF files, whose masses are more reliable than names.
    pub fn from_mass(mass_dalton: f64) -> Option<Element> {
        if !mass_dalton.is_finite() || mass_dalton < 0.5 {
            return None;
        }
        let mut best = (f64::INFINITY, 0usize);
        for (z, d) in TABLE.iter().enumerate().skip(1) {
            let diff = (f64::from(d.mass_dalton) - mass_dalton).abs();
            if diff < best.0 {
                best = (diff, z);
            }
        }
        (best.0 <= 0.5).then_some(Element(best.1 as u8))
    }

    /// True for the alkali and alkaline-earth metals (found as free ions in simulations).
    pub fn is_alkali_or_alkaline_earth(self) -> bool {
        matches!(self.0, 3 | 11 | 19 | 37 | 55 | 87 | 4 | 12 | 20 | 38 | 56 | 88)
    }
}

/// The kind of residue an atom belongs to, for element guessing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ResidueKind {
    /// Amino acids, nucleotides, common caps and water: atom names begin with a one-letter
    /// element (C, H, N, O, P, S), so `CA` is an alpha carbon and `HG1` a hydrogen.
    Standard,
    /// Anything else (ligands, ions, unknown residues).
    Other,
}

/// Amino acids (with CHARMM, AMBER and GROMACS protonation variants and caps), nucleotides
/// and water models: residues whose atom names start with a one-letter element.
const STANDARD_RESIDUES: [&[u8]; 83] = [
    b"A", b"ACE", b"ADE", b"ALA", b"ARG", b"ARGN", b"ASH", b"ASN", b"ASP", b"ASPH", b"C", b"CYM", b"CYS", b"CYS2",
    b"CYSH", b"CYT", b"CYX", b"DA", b"DC", b"DG", b"DOD", b"DT", b"DU", b"G", b"GLH", b"GLN", b"GLU", b"GLUH", b"GLY",
    b"GUA", b"H2O", b"HID", b"HIE", b"HIP", b"HIS", b"HIS1", b"HIS2", b"HISA", b"HISB", b"HISD", b"HISE", b"HISH",
    b"HOH", b"HSD", b"HSE", b"HSP", b"ILE", b"LEU", b"LYN", b"LYS", b"LYSH", b"MET", b"MSE", b"NH2", b"NMA", b"NME",
    b"PHE", b"PRO", b"PYL", b"RA", b"RC", b"RG", b"RU", b"SEC", b"SER", b"SOL", b"SPC", b"T", b"T3P", b"T4P", b"THR",
    b"THY", b"TIP", b"TIP3", b"TIP4", b"TIP5", b"TP3", b"TRP", b"TYR", b"U", b"URA", b"VAL", b"WAT",
];

/// Residue names of water models.
const WATER_RESIDUES: [&[u8]; 13] = [
    b"DOD", b"H2O", b"HOH", b"SOL", b"SPC", b"T3P", b"T4P", b"TIP", b"TIP3", b"TIP4", b"TIP5", b"TP3", b"WAT",
];

/// Up to four bytes, upper-cased, as one integer (0 for longer or empty names).
const fn residue_code(name: &[u8]) -> u32 {
    if name.is_empty() || name.len() > 4 {
        return 0;
    }
    let mut code = 0u32;
    let mut i = 0;
    while i < name.len() {
        code = (code << 8) | name[i].to_ascii_uppercase() as u32;
        i += 1;
    }
    code
}

/// The codes of `names`, sorted, for binary search.
const fn sorted_codes<const N: usize>(names: [&[u8]; N]) -> [u32; N] {
    let mut out = [0u32; N];
    let mut i = 0;
    while i < N {
        out[i] = residue_code(names[i]);
        i += 1;
    }
    // Insertion sort (const context).
    let mut a = 1;
    while a < N {
        let mut b = a;
        while b > 0 && out[b - 1] > out[b] {
            let t = out[b - 1];
            out[b - 1] = out[b];
            out[b] = t;
            b -= 1;
        }
        a += 1;
    }
    out
}

static STANDARD_CODES: [u32; STANDARD_RESIDUES.len()] = sorted_codes(STANDARD_RESIDUES);
static WATER_CODES: [u32; WATER_RESIDUES.len()] = sorted_codes(WATER_RESIDUES);

fn residue_kind(resname: &[u8]) -> ResidueKind {
    let code = residue_code(resname.trim_ascii());
    if code != 0 && STANDARD_CODES.binary_search(&code).is_ok() {
        ResidueKind::Standard
    } else {
        ResidueKind::Other
    }
}

/// True for residue names of water models.
pub fn is_water_resname(resname: &[u8]) -> bool {
    let code = residue_code(resname.trim_ascii());
    code != 0 && WATER_CODES.binary_search(&code).is_ok()
}

/// Two-letter prefixes that, outside standard residues, name the element rather than a carbon,
/// nitrogen or hydrogen with a Greek-letter suffix.
fn is_unambiguous_two_letter(a: u8, b: u8) -> bool {
    matches!(
        [a, b],
        [b'C', b'L']
            | [b'B', b'R']
            | [b'F', b'E']
            | [b'Z', b'N']
            | [b'M', b'G']
            | [b'M', b'N']
            | [b'C', b'U']
            | [b'L', b'I']
            | [b'S', b'I']
            | [b'A', b'L']
            | [b'A', b'G']
            | [b'A', b'U']
            | [b'P', b'T']
            | [b'P', b'B']
            | [b'S', b'E']
    )
}

/// Whole-name aliases used by CHARMM and AMBER for monatomic ions.
fn ion_alias(name: &[u8]) -> Option<Element> {
    let z = match name {
        b"SOD" => 11,
        b"POT" => 19,
        b"CLA" => 17,
        b"CAL" => 20,
        b"CES" => 55,
        b"LIT" => 3,
        b"BAR" => 56,
        b"RUB" => 37,
        b"ZN2" => 30,
        b"NA+" => 11,
        b"K+" => 19,
        b"CL-" => 17,
        b"IP" => 11,
        b"IM" => 17,
        _ => return None,
    };
    Some(Element(z))
}

/// Guesses an element from an atom name that carries no column alignment (PQR, GRO, XYZ labels,
/// PSF fallback): digits and charges are stripped; in standard residues the first letter is the
/// element (`CA` = carbon); elsewhere a two-letter element is used when the residue is named like
/// the atom (ions: `NA`/`NA`, `ZN`/`ZN2`) or the prefix is unambiguous (`CL`, `BR`, `FE`, `ZN`, ...).
pub fn guess_from_name(name: &[u8], resname: &[u8]) -> Element {
    let name = name.trim_ascii();
    let mut upper = [0u8; 8];
    let n = name.len().min(8);
    for (d, s) in upper.iter_mut().zip(&name[..n]) {
        *d = s.to_ascii_uppercase();
    }
    let upper = &upper[..n];
    if let Some(e) = ion_alias(upper) {
        return e;
    }
    // Letters after any leading digits ("1HB2" -> "HB").
    let start = upper.iter().position(|c| c.is_ascii_alphabetic()).unwrap_or(n);
    let letters = &upper[start..];
    let alpha_len = letters.iter().take_while(|c| c.is_ascii_alphabetic()).count();
    let Some(&first) = letters.first().filter(|_| alpha_len > 0) else {
        return Element::UNKNOWN;
    };
    let one = Element::from_symbol_bytes(&[first]);
    let two = if alpha_len >= 2 {
        letters.get(1).and_then(|&b| Element::from_symbol_bytes(&[first, b]))
    } else {
        None
    };
    match residue_kind(resname) {
        ResidueKind::Standard => {
            if let (Some(t), true) = (two, letters.starts_with(b"SE") && alpha_len == 2) {
                let r = resname.trim_ascii();
                if r.eq_ignore_ascii_case(b"MSE") || r.eq_ignore_ascii_case(b"SEC") {
                    return t;
                }
            }
            one.or(two).unwrap_or(Element::UNKNOWN)
        }
        ResidueKind::Other => {
            if let Some(t) = two {
                let r = resname.trim_ascii();
                let r_alpha = r.iter().take_while(|c| c.is_ascii_alphabetic()).count();
                let same_as_residue = r_alpha == 2 && r[..2].eq_ignore_ascii_case(&letters[..2]) && alpha_len == 2;
                let b = letters.get(1).copied().unwrap_or(0);
                if same_as_residue || is_unambiguous_two_letter(first, b) {
                    return t;
                }
            }
            one.or(two).unwrap_or(Element::UNKNOWN)
        }
    }
}

/// Memoises [`guess_from_name`] for the (atom name, residue name) pairs of one file: MD files
/// repeat a few hundred pairs millions of times. Direct-mapped, fixed size, no allocation per atom.
pub struct NameGuessCache {
    slots: Vec<Option<(Name8, Name8, Element)>>,
}

impl Default for NameGuessCache {
    fn default() -> Self {
        NameGuessCache {
            slots: vec![None; CACHE_SLOTS],
        }
    }
}

const CACHE_SLOTS: usize = 1024;

impl NameGuessCache {
    /// The element of atom `name` in residue `resname`, as [`guess_from_name`] gives it.
    pub fn guess(&mut self, name: Name8, resname: Name8) -> Element {
        // FNV-1a over both labels.
        let mut h: u32 = 0x811c_9dc5;
        for &b in name
            .as_str()
            .as_bytes()
            .iter()
            .chain(b"|")
            .chain(resname.as_str().as_bytes())
        {
            h = (h ^ u32::from(b)).wrapping_mul(0x0100_0193);
        }
        let slot = (h as usize) % CACHE_SLOTS;
        if let Some(Some((n, r, e))) = self.slots.get(slot)
            && *n == name
            && *r == resname
        {
            return *e;
        }
        let e = guess_from_name(name.as_str().as_bytes(), resname.as_str().as_bytes());
        if let Some(s) = self.slots.get_mut(slot) {
            *s = Some((name, resname, e));
        }
        e
    }
}

/// Guesses an element from a PDB atom-name field (columns 13-16, as written, 4 bytes or fewer)
/// using the column convention: a name starting in column 14 (" CA ") has a one-letter element;
/// a name starting in column 13 ("FE  ", "CL1 ") has a two-letter one, except four-character
/// hydrogen names ("HG21") and names in standard residues, where files often ignore the rule.
pub fn guess_from_pdb_name(field: &[u8], resname: &[u8]) -> Element {
    let c0 = field.first().copied().unwrap_or(b' ');
    let c1 = field.get(1).copied().unwrap_or(b' ');
    // CHARMM's ion names (POT in POT, CLA in CLA, SOD in SOD), wherever they start.
    let name_upper = field.trim_ascii().to_ascii_uppercase();
    if let Some(ion) = ion_alias(&name_upper)
        && ion_alias(&resname.trim_ascii().to_ascii_uppercase()) == Some(ion)
    {
        return ion;
    }
    if c0 == b' ' || c0.is_ascii_digit() {
        // Aligned one-letter element, or a digit-prefixed hydrogen name ("1HB2").
        if c1.is_ascii_alphabetic() {
            if residue_kind(resname) == ResidueKind::Other && c0 == b' ' {
                // A metal or halogen named by its symbol alone but written one column late
                // (" FE " in HEM, " ZN " in ZN, " NA " in NA+) is that element; other names read
                // as their letter (" NA " in HEM is a nitrogen).
                let c2 = field.get(2).copied().unwrap_or(b' ');
                let rest_blank = field.get(3).is_none_or(|c| *c == b' ');
                let c1u = c1.to_ascii_uppercase();
                let c2u = c2.to_ascii_uppercase();
                let r = resname.trim_ascii();
                let r_alpha = r.iter().take_while(|c| c.is_ascii_alphabetic()).count();
                let named_like_residue = r_alpha == 2 && r[..2].eq_ignore_ascii_case(&[c1u, c2u]);
                if c2.is_ascii_alphabetic()
                    && rest_blank
                    && (is_unambiguous_two_letter(c1u, c2u) || named_like_residue)
                    && let Some(t) = Element::from_symbol_bytes(&[c1u, c2u])
                {
                    return t;
                }
                return Element::from_symbol_bytes(&[c1]).unwrap_or_else(|| guess_from_name(field, resname));
            }
            return Element::from_symbol_bytes(&[c1]).unwrap_or(Element::UNKNOWN);
        }
        return guess_from_name(field, resname);
    }
    if residue_kind(resname) == ResidueKind::Standard {
        return guess_from_name(field, resname);
    }
    let c0u = c0.to_ascii_uppercase();
    let full = field.len() >= 4 && field.iter().take(4).all(|c| !c.is_ascii_whitespace());
    if c0u == b'H' && full {
        return Element::H;
    }
    if c1.is_ascii_alphabetic()
        && let Some(t) = Element::from_symbol_bytes(&[c0, c1])
    {
        return t;
    }
    Element::from_symbol_bytes(&[c0]).unwrap_or(Element::UNKNOWN)
}

/// Reads a PDB element column (77-78): a one- or two-letter symbol, right- or left-justified,
/// in any case. `None` when blank or not an element.
pub fn from_pdb_element_field(field: &[u8]) -> Option<Element> {
    let s = field.trim_ascii();
    if s.is_empty() || !s.iter().all(|c| c.is_ascii_alphabetic()) {
        return None;
    }
    from_element_column(s)
}

/// Reads an element column (mmCIF `type_symbol`, PDB columns 77-78): `X`, which the PDB writes
/// for an unknown atom or ion (residue UNX), is an unknown element, never a guess from the name
/// (`UNK` would read as uranium); `None` when the column names no element.
pub fn from_element_column(symbol: &[u8]) -> Option<Element> {
    let s = symbol.trim_ascii();
    if s.eq_ignore_ascii_case(b"X") {
        return Some(Element::UNKNOWN);
    }
    Element::from_element_symbol(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_complete_and_ordered() {
        assert_eq!(TABLE.len(), 119);
        assert_eq!(Element(118).symbol(), "Og");
        assert_eq!(Element(26).symbol(), "Fe");
        assert_eq!(Element(79).symbol(), "Au");
        assert_eq!(Element(92).symbol(), "U");
        // Every symbol maps back to its own row.
        for z in 1..=118u32 {
            let el = Element::from_number(z).unwrap();
            assert_eq!(Element::from_symbol(el.symbol()), Some(el), "symbol of Z={z}");
            assert!(el.mass_dalton() > 0.0 && el.covalent_radius_angstrom() > 0.0 && el.vdw_radius_angstrom() > 0.0);
        }
        // Masses increase along the table except the known inversions (Ar/K, Co/Ni, Te/I, Th/Pa, U/Np, Pu/Am).
        let inversions: Vec<u8> = (2..=118u8)
            .filter(|&z| Element(z).mass_dalton() < Element(z - 1).mass_dalton())
            .collect();
        assert_eq!(inversions, vec![19, 28, 53, 91, 93, 95, 108]);
    }

    #[test]
    fn reference_values() {
        // Cordero 2008 and Bondi 1964 values quoted in those papers.
        assert_eq!(Element::C.covalent_radius_angstrom(), 0.76);
        assert_eq!(Element(26).covalent_radius_angstrom(), 1.32);
        assert_eq!(Element::N.vdw_radius_angstrom(), 1.55);
        assert_eq!(Element(17).vdw_radius_angstrom(), 1.75);
        assert_eq!(Element::O.cpk_rgb(), [255, 13, 13]);
        assert!((Element(30).mass_dalton() - 65.38).abs() < 1e-4);
    }

    #[test]
    fn symbols_and_masses() {
        assert_eq!(Element::from_symbol("cl"), Some(Element(17)));
        assert_eq!(Element::from_symbol(" FE "), Some(Element(26)));
        assert_eq!(Element::from_symbol("Xx"), None);
        assert_eq!(Element::from_symbol(""), None);
        assert_eq!(Element::from_symbol("1"), None);
        // Deuterium and tritium are hydrogen in element columns (neutron structures write D), not
        // as the start of a name (T1, a Drude particle's DC).
        assert_eq!(Element::from_element_symbol(b"D"), Some(Element::H));
        assert_eq!(Element::from_element_symbol(b" t"), Some(Element::H));
        assert_eq!(from_pdb_element_field(b" D"), Some(Element::H));
        assert_eq!(Element::from_element_symbol(b"Db"), Some(Element(105)));
        assert_eq!(Element::from_symbol("D"), None);
        assert_eq!(guess_from_name(b"T1", b"TEST"), Element::UNKNOWN);
        assert_eq!(Element::from_mass(1.008), Some(Element::H));
        assert_eq!(Element::from_mass(15.9994), Some(Element::O));
        assert_eq!(Element::from_mass(22.98977), Some(Element(11)));
        assert_eq!(Element::from_mass(39.0983), Some(Element(19)));
        assert_eq!(Element::from_mass(0.0), None);
        assert_eq!(Element::from_mass(3.024), None);
        assert_eq!(Element::from_mass(f64::NAN), None);
    }

    #[test]
    fn pdb_name_columns() {
        assert_eq!(guess_from_pdb_name(b" CA ", b"ALA"), Element::C);
        assert_eq!(guess_from_pdb_name(b"CA  ", b"CA"), Element(20));
        assert_eq!(guess_from_pdb_name(b"CA  ", b"ALA"), Element::C);
        assert_eq!(guess_from_pdb_name(b"FE  ", b"HEM"), Element(26));
        assert_eq!(guess_from_pdb_name(b"HG21", b"LIG"), Element::H);
        assert_eq!(guess_from_pdb_name(b"HG  ", b"HG"), Element(80));
        assert_eq!(guess_from_pdb_name(b"1HB2", b"LIG"), Element::H);
        assert_eq!(guess_from_pdb_name(b" OG1", b"THR"), Element::O);
        assert_eq!(guess_from_pdb_name(b"CL1 ", b"LIG"), Element(17));
        assert_eq!(guess_from_pdb_name(b"    ", b"LIG"), Element::UNKNOWN);
        // Written one column late: a metal or halogen by its symbol alone, else the letter.
        assert_eq!(guess_from_pdb_name(b" FE ", b"HEM"), Element(26));
        assert_eq!(from_pdb_element_field(b" X"), Some(Element::UNKNOWN));
        assert_eq!(from_element_column(b"X"), Some(Element::UNKNOWN));
        assert_eq!(from_element_column(b"?"), None);
        assert_eq!(guess_from_pdb_name(b" NA ", b"HEM"), Element::N);
        assert_eq!(guess_from_pdb_name(b" NA ", b"NA+"), Element(11));
        assert_eq!(guess_from_pdb_name(b" NA ", b"NA"), Element(11));
        assert_eq!(guess_from_pdb_name(b" CL ", b"CL"), Element(17));
        assert_eq!(guess_from_pdb_name(b" CAA", b"HEM"), Element::C);
        // CHARMM ions: potassium, chloride, sodium, calcium, not phosphorus or carbon.
        assert_eq!(guess_from_pdb_name(b" POT", b"POT"), Element(19));
        assert_eq!(guess_from_pdb_name(b" CLA", b"CLA"), Element(17));
        assert_eq!(guess_from_pdb_name(b"SOD ", b"SOD"), Element(11));
        assert_eq!(guess_from_pdb_name(b" CAL", b"CAL"), Element(20));
        assert_eq!(guess_from_pdb_name(b" POT", b"LIG"), Element(15));
        assert_eq!(from_pdb_element_field(b" N"), Some(Element::N));
        assert_eq!(from_pdb_element_field(b"Fe"), Some(Element(26)));
        assert_eq!(from_pdb_element_field(b"  "), None);
        assert_eq!(from_pdb_element_field(b"1+"), None);
    }

    #[test]
    fn residue_tables() {
        assert!(STANDARD_CODES.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(residue_kind(b" ala "), ResidueKind::Standard);
        assert_eq!(residue_kind(b"TIP3"), ResidueKind::Standard);
        assert_eq!(residue_kind(b"HEM"), ResidueKind::Other);
        assert_eq!(residue_kind(b"ALANINE"), ResidueKind::Other);
        assert_eq!(residue_kind(b""), ResidueKind::Other);
        assert!(is_water_resname(b"SOL") && is_water_resname(b"tip3") && !is_water_resname(b"SOD"));
    }

    #[test]
    fn cache_agrees_with_the_guess() {
        let mut cache = NameGuessCache::default();
        for _ in 0..2 {
            for (n, r) in [
                ("CA", "ALA"),
                ("CA", "CA"),
                ("NA", "NA+"),
                ("OW", "SOL"),
                ("HW1", "SOL"),
                ("CL", "LIG"),
            ] {
                let want = guess_from_name(n.as_bytes(), r.as_bytes());
                assert_eq!(cache.guess(Name8::from(n), Name8::from(r)), want, "{n} {r}");
            }
        }
    }

    #[test]
    fn free_names() {
        assert_eq!(guess_from_name(b"CA", b"MET"), Element::C);
        assert_eq!(guess_from_name(b"HG1", b"THR"), Element::H);
        assert_eq!(guess_from_name(b"OW", b"SOL"), Element::O);
        assert_eq!(guess_from_name(b"HW1", b"SOL"), Element::H);
        assert_eq!(guess_from_name(b"NA", b"NA"), Element(11));
        assert_eq!(guess_from_name(b"NA", b"NA+"), Element(11));
        assert_eq!(guess_from_name(b"CL", b"CL-"), Element(17));
        assert_eq!(guess_from_name(b"SOD", b"SOD"), Element(11));
        assert_eq!(guess_from_name(b"CLA", b"CLA"), Element(17));
        assert_eq!(guess_from_name(b"ZN", b"ZN2"), Element(30));
        assert_eq!(guess_from_name(b"SE", b"MSE"), Element(34));
        assert_eq!(guess_from_name(b"C12", b"LIG"), Element::C);
        assert_eq!(guess_from_name(b"CD", b"LIG"), Element::C);
        assert_eq!(guess_from_name(b"BR1", b"LIG"), Element(35));
        assert_eq!(guess_from_name(b"123", b"LIG"), Element::UNKNOWN);
        assert_eq!(guess_from_name(b"", b""), Element::UNKNOWN);
    }
}
