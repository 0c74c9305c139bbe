//! The cartoon's colourings ([`Coloring`]) and palettes: secondary structure, chain, residue type,
//! rainbow index, B-factor and one solid colour. [`super::polymer`] gives each residue its colour.

use super::dssp::SecondaryStructure;

/// How cartoon residues are coloured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum Coloring {
    /// Helix magenta, 3-10 helix violet-pink, pi helix purple, strand yellow, bridge ochre, turn
    /// blue, everything else light grey; nucleic acids by base.
    #[default]
    SecondaryStructure,
    /// One hue per chain (golden-angle steps around the colour wheel).
    Chain,
    /// By residue type: hydrophobic grey, polar green, acidic red, basic blue, glycine and proline
    /// pale yellow, cysteine yellow; nucleotides A, C, G, T/U in their own colours.
    Residue,
    /// Rainbow from blue (first residue of a chain) to red (last).
    Index,
    /// The B-factor of each residue's CA (P of a nucleotide), blue low to red high across the
    /// 2nd to 98th percentile of those atoms' values ([`bfactor_color`]); grey without B-factors.
    BFactor,
    /// Neutral grey, with the caller's per-residue values on the mesh for a colormap.
    Value,
    /// One colour (sRGB) for every residue.
    Solid([u8; 3]),
}

impl Coloring {
    pub const ALL: [Coloring; 7] = [
        Coloring::SecondaryStructure,
        Coloring::Chain,
        Coloring::Residue,
        Coloring::Index,
        Coloring::BFactor,
        Coloring::Value,
        Coloring::Solid([200, 200, 200]),
    ];

    /// The colourings a user picks from (by value needs per-residue values from a caller); a
    /// solid colour starts light grey.
    pub const CHOICES: [Coloring; 6] = [
        Coloring::SecondaryStructure,
        Coloring::Chain,
        Coloring::Residue,
        Coloring::Index,
        Coloring::BFactor,
        Coloring::Solid([200, 200, 200]),
    ];

    /// Whether `self` and `other` are the same scheme (any two solid colours are).
    pub fn same_scheme(self, other: Coloring) -> bool {
        std::mem::discriminant(&self) == std::mem::discriminant(&other)
    }

    /// The word on the command line: `ss`, `chain`, `residue`, `index`, `beta`, `value`, or a
    /// solid colour's name or `#rrggbb`.
    pub fn word(self) -> String {
        match self {
            Coloring::SecondaryStructure => "ss".into(),
            Coloring::Chain => "chain".into(),
            Coloring::Residue => "residue".into(),
            Coloring::Index => "index".into(),
            Coloring::BFactor => "beta".into(),
            Coloring::Value => "value".into(),
            Coloring::Solid(rgb) => crate::model::color::color_word(rgb),
        }
    }

    /// The colouring a command-line word names (`ss` or `structure`, `chain`, `residue`, `index`,
    /// `beta`, a colour); by value is not offered.
    pub fn parse(word: &str) -> Option<Coloring> {
        match word.trim().to_ascii_lowercase().as_str() {
            "ss" | "structure" | "secondary" => Some(Coloring::SecondaryStructure),
            "chain" => Some(Coloring::Chain),
            "residue" | "restype" => Some(Coloring::Residue),
            "index" | "rainbow" => Some(Coloring::Index),
            "beta" | "bfactor" | "b-factor" => Some(Coloring::BFactor),
            other => crate::model::color::parse_color(other).map(Coloring::Solid),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Coloring::SecondaryStructure => "secondary structure",
            Coloring::Chain => "chain",
            Coloring::Residue => "residue",
            Coloring::Index => "index",
            Coloring::BFactor => "B-factor",
            Coloring::Value => "value",
            Coloring::Solid(_) => "solid colour",
        }
    }
}

/// The 2nd and 98th percentiles of the finite B-factors (Angstrom^2): the ends of their colour scale.
pub fn bfactor_range(b: &[f32]) -> [f32; 2] {
    let mut v: Vec<f32> = b.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return [0.0, 0.0];
    }
    v.sort_by(f32::total_cmp);
    let at = |q: f64| {
        v.get(((v.len() - 1) as f64 * q).round() as usize)
            .copied()
            .unwrap_or(0.0)
    };
    [at(0.02), at(0.98)]
}

/// One colour per atom for B-factors `b` on the scale of their own [`bfactor_range`]
/// ([`bfactor_color`]).
pub fn bfactor_colors(b: &[f32]) -> Vec<[u8; 4]> {
    let range = bfactor_range(b);
    b.iter().map(|&x| bfactor_color(x, range)).collect()
}

/// The colour of B-factor `x` across `[lo, hi]`: blue (low) through light grey to red (high),
/// ChimeraX's `color bfactor` palette (the viewer's diverging map, sampled the same way); grey
/// [160, 160, 160] for a missing value.
pub fn bfactor_color(x: f32, [lo, hi]: [f32; 2]) -> [u8; 4] {
    const STOPS: [[f32; 3]; 3] = [[0.23, 0.30, 0.75], [0.87, 0.87, 0.87], [0.71, 0.02, 0.15]];
    if !x.is_finite() {
        return [160, 160, 160, 255];
    }
    let t = if hi > lo {
        ((x - lo) / (hi - lo)).clamp(0.0, 1.0)
    } else {
        0.5
    };
    let u = 2.0 * t;
    let i = (u.floor() as usize).min(1);
    let f = u - i as f32;
    let (a, b) = (STOPS[i], STOPS[i + 1]);
    let c = |k: usize| ((a[k] + (b[k] - a[k]) * f) * 255.0).round().clamp(0.0, 255.0) as u8;
    [c(0), c(1), c(2), 255]
}

/// Colour of a DSSP class in the secondary-structure scheme.
pub fn secondary_structure_color(s: SecondaryStructure) -> [u8; 4] {
    match s {
        SecondaryStructure::AlphaHelix => [230, 40, 130, 255],
        SecondaryStructure::Helix310 => [200, 90, 170, 255],
        SecondaryStructure::PiHelix => [140, 60, 200, 255],
        SecondaryStructure::Strand => [250, 200, 30, 255],
        SecondaryStructure::Bridge => [200, 160, 40, 255],
        SecondaryStructure::Turn => [90, 140, 240, 255],
        SecondaryStructure::Bend | SecondaryStructure::Polyproline | SecondaryStructure::Coil => [225, 225, 225, 255],
    }
}

pub(super) const GREY: [u8; 4] = [190, 190, 190, 255];

/// Fully saturated colour of `hue` (degrees) at the given value (0..1).
pub(super) fn hue_color(hue_degrees: f32, value: f32) -> [u8; 4] {
    let h = hue_degrees.rem_euclid(360.0) / 60.0;
    let x = 1.0 - ((h % 2.0) - 1.0).abs();
    let (r, g, b) = match h as u32 {
        0 => (1.0, x, 0.0),
        1 => (x, 1.0, 0.0),
        2 => (0.0, 1.0, x),
        3 => (0.0, x, 1.0),
        4 => (x, 0.0, 1.0),
        _ => (1.0, 0.0, x),
    };
    let c = |v: f32| (255.0 * value * v).round().clamp(0.0, 255.0) as u8;
    [c(r), c(g), c(b), 255]
}

/// Chain colour: golden-angle hue steps so neighbouring chains differ.
pub fn chain_color(chain: u32) -> [u8; 4] {
    hue_color(210.0 + 137.507_76 * chain as f32, 0.9)
}

/// Residue-type colour (amino acids by class, nucleotides by base).
pub(super) fn residue_color(resname: &str) -> [u8; 4] {
    let name = resname.trim_start_matches(['D', 'R']).trim_end_matches(['3', '5']);
    match resname {
        "ALA" | "VAL" | "LEU" | "ILE" | "MET" | "PHE" | "TRP" | "MSE" => [170, 170, 170, 255],
        "SER" | "THR" | "ASN" | "GLN" | "TYR" | "HIS" | "HSD" | "HSE" | "HID" | "HIE" => [60, 180, 90, 255],
        "ASP" | "GLU" | "ASH" | "GLH" => [220, 50, 50, 255],
        "LYS" | "ARG" | "HSP" | "HIP" | "LYN" => [60, 90, 230, 255],
        "GLY" | "PRO" => [235, 225, 170, 255],
        "CYS" | "CYX" | "CYM" => [230, 200, 40, 255],
        _ => match name {
            "A" | "ADE" => [230, 80, 80, 255],
            "C" | "CYT" => [240, 200, 60, 255],
            "G" | "GUA" => [80, 190, 90, 255],
            "T" | "U" | "THY" | "URA" => [80, 120, 230, 255],
            _ => GREY,
        },
    }
}
