//! The periodic table: symbols, masses, covalent and van der Waals radii, CPK colours.
//!
//! Readers map atom names and symbols to an [`Element`]; bond guessing uses covalent radii; the
//! viewer uses vdW radii and CPK colours. Unknown atoms are element 0 ("X"), never an error.

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

/// Indexed by atomic number. Row 0 is the unknown element.
static TABLE: &[ElementData] = &[
    e("X", 0.0, 0.0, 1.5, [255, 20, 147]),
    e("H", 1.008, 0.31, 1.10, [255, 255, 255]),
    e("He", 4.0026, 0.28, 1.40, [217, 255, 255]),
    e("Li", 6.94, 1.28, 1.82, [204, 128, 255]),
    e("Be", 9.0122, 0.96, 1.53, [194, 255, 0]),
    e("B", 10.81, 0.84, 1.92, [255, 181, 181]),
    e("C", 12.011, 0.76, 1.70, [144, 144, 144]),
    e("N", 14.007, 0.71, 1.55, [48, 80, 248]),
    e("O", 15.999, 0.66, 1.52, [255, 13, 13]),
    e("F", 18.998, 0.57, 1.47, [144, 224, 80]),
    e("Ne", 20.180, 0.58, 1.54, [179, 227, 245]),
];

impl Element {
    /// The unknown element.
    pub const UNKNOWN: Element = Element(0);

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
        let s = symbol.trim();
        TABLE
            .iter()
            .enumerate()
            .skip(1)
            .find(|(_, d)| d.symbol.eq_ignore_ascii_case(s))
            .map(|(z, _)| Element(z as u8))
    }

    /// From an atomic number; `None` when out of the table.
    pub fn from_number(z: u32) -> Option<Element> {
        (z >= 1 && (z as usize) < TABLE.len()).then_some(Element(z as u8))
    }
}
