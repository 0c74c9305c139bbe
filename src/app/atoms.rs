//! Atoms and bonds as instances: the atom styles (lines, licorice, ball-and-stick, VDW, CPK), the
//! colourings (element, residue, chain, charge, B-factor), the box outline and bond guessing.
//!
//! Called by the representation list (`app::reps`) for every visible atom representation whenever
//! the frame, a selection, a style or a colouring changes, and by the headless `render` command.
//! The output is plain instance data for [`crate::render::gpu`]; the renderer never sees a molecule.

use super::bond_orders::MultipleBonds;
use crate::model::{Element, Structure, UnitCell};
use crate::render::colormap::Colormap;
use crate::render::gpu::{CylinderInstance, LineVertex, SphereInstance, pack_rgba};

/// How the atoms of an atom representation are drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum AtomStyle {
    /// Bonds as thin lines in the atoms' colours, lone atoms as small crosses (VMD's default).
    Lines,
    /// Bonds of 0.2 A with spheres of the same radius capping them.
    Licorice,
    /// Small spheres (0.2 x vdW) and thin bonds (0.12 A).
    BallAndStick,
    /// Space filling: spheres at the van der Waals radius, no bonds.
    Vdw,
    /// Spheres at 0.3 x van der Waals radius and bonds of 0.2 A.
    #[default]
    Cpk,
    /// No atoms: the hydrogen bonds among the selected atoms as dashed lines (VMD's HBonds drawing
    /// method), found again at every frame by `analysis::hbonds`.
    HBonds,
}

impl AtomStyle {
    pub const ALL: [AtomStyle; 6] = [
        AtomStyle::Lines,
        AtomStyle::Licorice,
        AtomStyle::BallAndStick,
        AtomStyle::Vdw,
        AtomStyle::Cpk,
        AtomStyle::HBonds,
    ];

    pub fn name(self) -> &'static str {
        match self {
            AtomStyle::Lines => "Lines",
            AtomStyle::Licorice => "Licorice",
            AtomStyle::BallAndStick => "Ball and stick",
            AtomStyle::Vdw => "VDW (space filling)",
            AtomStyle::Cpk => "CPK",
            AtomStyle::HBonds => "Hydrogen bonds",
        }
    }

    /// The word the command line and session files use ("ball-and-stick").
    pub fn keyword(self) -> &'static str {
        match self {
            AtomStyle::Lines => "lines",
            AtomStyle::Licorice => "licorice",
            AtomStyle::BallAndStick => "ball-and-stick",
            AtomStyle::Vdw => "vdw",
            AtomStyle::Cpk => "cpk",
            AtomStyle::HBonds => "hbonds",
        }
    }

    /// Parses a keyword (case-insensitive; `bs` for ball-and-stick).
    pub fn parse(s: &str) -> Option<AtomStyle> {
        match s.trim().to_ascii_lowercase().as_str() {
            "lines" | "line" => Some(AtomStyle::Lines),
            // The Add menu's "Atoms (licorice)"; PyMOL's sticks.
            "licorice" | "atoms" | "sticks" | "stick" => Some(AtomStyle::Licorice),
            "ball-and-stick" | "ballandstick" | "bs" => Some(AtomStyle::BallAndStick),
            // PyMOL's spheres.
            "vdw" | "spheres" | "sphere" => Some(AtomStyle::Vdw),
            "cpk" => Some(AtomStyle::Cpk),
            "hbonds" | "hbond" | "h-bonds" => Some(AtomStyle::HBonds),
            _ => None,
        }
    }

    /// Sphere radius for an atom with van der Waals radius `vdw`; `None` when the style draws no
    /// spheres.
    pub fn sphere_radius(self, vdw_angstrom: f32) -> Option<f32> {
        match self {
            AtomStyle::Lines | AtomStyle::HBonds => None,
            AtomStyle::Licorice => Some(0.2),
            AtomStyle::BallAndStick => Some(0.2 * vdw_angstrom),
            AtomStyle::Vdw => Some(vdw_angstrom),
            AtomStyle::Cpk => Some(0.3 * vdw_angstrom),
        }
    }

    /// Bond radius, or `None` when the style draws no bond cylinders.
    pub fn bond_radius(self) -> Option<f32> {
        match self {
            AtomStyle::Lines | AtomStyle::Vdw | AtomStyle::HBonds => None,
            AtomStyle::Licorice | AtomStyle::Cpk => Some(0.2),
            AtomStyle::BallAndStick => Some(0.12),
        }
    }
}

/// What decides an atom's colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum AtomColoring {
    #[default]
    Element,
    Residue,
    Chain,
    /// Partial charge on a red (-1 e) - white - blue (+1 e) scale (negative red, as potentials);
    /// grey when charges are unknown.
    Charge,
    /// B-factor, blue (low) - white - red (high) from the 2nd to the 98th percentile of the file's
    /// values (ChimeraX's `color bfactor`); grey where the file has none.
    BFactor,
    /// One colour (sRGB) for every atom (PyMOL's `color red, sele`).
    Solid([u8; 3]),
}

impl AtomColoring {
    /// The schemes a user picks from; a solid colour starts light grey.
    pub const ALL: [AtomColoring; 6] = [
        AtomColoring::Element,
        AtomColoring::Residue,
        AtomColoring::Chain,
        AtomColoring::Charge,
        AtomColoring::BFactor,
        AtomColoring::Solid([200, 200, 200]),
    ];

    pub fn name(self) -> &'static str {
        match self {
            AtomColoring::Element => "Element",
            AtomColoring::Residue => "Residue",
            AtomColoring::Chain => "Chain",
            AtomColoring::Charge => "Charge",
            AtomColoring::BFactor => "B-factor",
            AtomColoring::Solid(_) => "Solid colour",
        }
    }

    /// Whether `self` and `other` are the same scheme (any two solid colours are).
    pub fn same_scheme(self, other: AtomColoring) -> bool {
        std::mem::discriminant(&self) == std::mem::discriminant(&other)
    }

    /// The word the command line and session files use (a solid colour's name or `#rrggbb`).
    pub fn keyword(self) -> String {
        match self {
            AtomColoring::Element => "element".into(),
            AtomColoring::Residue => "residue".into(),
            AtomColoring::Chain => "chain".into(),
            AtomColoring::Charge => "charge".into(),
            AtomColoring::BFactor => "beta".into(),
            AtomColoring::Solid(rgb) => crate::model::color::color_word(rgb),
        }
    }

    /// Parses a keyword or a colour (a name, `#rrggbb` or `r,g,b`), case-insensitive.
    pub fn parse(s: &str) -> Option<AtomColoring> {
        match s.trim().to_ascii_lowercase().as_str() {
            "element" => Some(AtomColoring::Element),
            "residue" => Some(AtomColoring::Residue),
            "chain" => Some(AtomColoring::Chain),
            "charge" => Some(AtomColoring::Charge),
            "beta" | "bfactor" | "b-factor" => Some(AtomColoring::BFactor),
            other => crate::model::color::parse_color(other).map(AtomColoring::Solid),
        }
    }
}

/// A categorical palette (colour-blind friendly, after Okabe and Ito, plus extras).
const PALETTE: [[u8; 3]; 10] = [
    [230, 159, 0],
    [86, 180, 233],
    [0, 158, 115],
    [240, 228, 66],
    [0, 114, 178],
    [213, 94, 0],
    [204, 121, 167],
    [160, 160, 160],
    [120, 200, 120],
    [200, 120, 90],
];

fn palette(i: usize) -> [u8; 4] {
    let c = PALETTE[i % PALETTE.len()];
    [c[0], c[1], c[2], 255]
}

/// RGBA colour of every atom under a colouring scheme.
pub fn atom_colors(structure: &Structure, coloring: AtomColoring) -> Vec<[u8; 4]> {
    let n = structure.len();
    match coloring {
        AtomColoring::Element => structure
            .elements
            .iter()
            .map(|e| {
                let c = e.cpk_rgb();
                [c[0], c[1], c[2], 255]
            })
            .collect(),
        AtomColoring::Residue => {
            let starts = structure.residue_starts();
            let mut out = vec![[0u8; 4]; n];
            for (r, w) in starts.windows(2).enumerate() {
                for c in out.iter_mut().take(w[1]).skip(w[0]) {
                    *c = palette(r);
                }
            }
            out
        }
        AtomColoring::Chain => {
            let ids = structure.chain_ids();
            let labels = if structure.chains.iter().any(|c| !c.is_empty()) {
                &structure.chains
            } else {
                &structure.segids
            };
            labels
                .iter()
                .map(|l| ids.iter().position(|x| x == l).map_or([160, 160, 160, 255], palette))
                .collect()
        }
        AtomColoring::Charge => match &structure.charges_e {
            // The electrostatics convention: negative red, positive blue (as VMD colours charges).
            Some(q) => q
                .iter()
                .map(|&x| Colormap::RedWhiteBlue.sample(0.5 + 0.5 * x))
                .collect(),
            None => vec![[160, 160, 160, 255]; n],
        },
        AtomColoring::BFactor => match &structure.bfactors {
            Some(b) => crate::analysis::polymer::bfactor_colors(b),
            None => vec![[160, 160, 160, 255]; n],
        },
        AtomColoring::Solid([r, g, b]) => vec![[r, g, b, 255]; n],
    }
}

pub use crate::analysis::polymer::bfactor_range;

impl super::state::AppState {
    /// The legend of B-factor colours, as ChimeraX's `color bfactor` key: blue (low) to red
    /// (high) between the 2nd and 98th percentiles in Å², for shown atoms coloured by B-factor
    /// (all atoms' values), else a shown cartoon's (its trace atoms').
    pub(crate) fn bfactor_legend(&self) -> Option<crate::app::values::Legend> {
        let b = self.document()?.structure.bfactors.as_ref()?;
        let atoms = self
            .doc
            .reps
            .atoms()
            .any(|(r, a)| r.visible && a.coloring == AtomColoring::BFactor);
        let (what, [lo, hi]) = if atoms {
            ("atoms", bfactor_range(b))
        } else {
            let cartoon = self
                .doc
                .reps
                .cartoons()
                .find_map(|(r, c)| c.bfactor_range().filter(|_| r.visible))?;
            ("cartoon", cartoon)
        };
        Some(crate::app::values::Legend {
            title: format!("{what} coloured by B-factor (2nd to 98th percentile)"),
            range: [f64::from(lo), f64::from(hi)],
            unit: "Å²".into(),
            colormap: crate::render::colormap::Colormap::Diverging,
            solid_rgb: None,
            lobes: None,
        })
    }
}

/// Appends sphere instances for the atoms `indices` picks (all atoms when `None`) at
/// `positions`. Atoms with non-finite coordinates are skipped; styles without spheres add nothing.
pub fn push_spheres(
    structure: &Structure,
    positions_angstrom: &[[f32; 3]],
    indices: Option<&[u32]>,
    colors: &[[u8; 4]],
    style: AtomStyle,
    out: &mut Vec<SphereInstance>,
) {
    out.reserve(indices.map_or(positions_angstrom.len(), <[u32]>::len));
    let mut push = |i: usize| {
        let Some(p) = positions_angstrom.get(i).filter(|p| p.iter().all(|x| x.is_finite())) else {
            return;
        };
        let element = structure.elements.get(i).copied().unwrap_or(Element::UNKNOWN);
        let vdw = structure
            .radii_angstrom
            .as_ref()
            .and_then(|r| r.get(i).copied())
            .filter(|r| r.is_finite() && *r > 0.0)
            .unwrap_or_else(|| element.vdw_radius_angstrom());
        if let Some(radius_angstrom) = style.sphere_radius(vdw) {
            out.push(SphereInstance {
                center_angstrom: *p,
                radius_angstrom,
                color: pack_rgba(colors.get(i).copied().unwrap_or([255, 20, 147, 255])),
            });
        }
    };
    match indices {
        Some(idx) => idx.iter().for_each(|&i| push(i as usize)),
        None => (0..positions_angstrom.len()).for_each(&mut push),
    }
}

/// Sphere instances for all atoms at `positions` (the buffer is cleared first).
pub fn build_spheres(
    structure: &Structure,
    positions_angstrom: &[[f32; 3]],
    colors: &[[u8; 4]],
    style: AtomStyle,
    out: &mut Vec<SphereInstance>,
) {
    out.clear();
    push_spheres(structure, positions_angstrom, None, colors, style, out);
}

/// The two atoms of a bond if both have finite positions no further apart than `max_length`.
fn bond_ends(b: &[u32; 2], positions_angstrom: &[[f32; 3]], max_length_angstrom: f32) -> Option<([f32; 3], [f32; 3])> {
    let (a, c) = (
        positions_angstrom.get(b[0] as usize)?,
        positions_angstrom.get(b[1] as usize)?,
    );
    let d2: f32 = (0..3).map(|k| (a[k] - c[k]) * (a[k] - c[k])).sum();
    (d2.is_finite() && d2 <= max_length_angstrom * max_length_angstrom).then_some((*a, *c))
}

/// Appends cylinder instances for `bonds`, split in the middle between the two atoms' colours;
/// the bonds in `orders` as double, triple or aromatic sticks.
/// Bonds longer than `max_length_angstrom` (periodic wrap-arounds) are skipped.
pub fn push_cylinders(
    bonds: &[[u32; 2]],
    orders: &MultipleBonds,
    positions_angstrom: &[[f32; 3]],
    colors: &[[u8; 4]],
    style: AtomStyle,
    max_length_angstrom: f32,
    out: &mut Vec<CylinderInstance>,
) {
    let Some(radius) = style.bond_radius() else {
        return;
    };
    out.reserve(bonds.len());
    let color = |i: u32| pack_rgba(colors.get(i as usize).copied().unwrap_or([200, 200, 200, 255]));
    for b in bonds {
        let Some((a, c)) = bond_ends(b, positions_angstrom, max_length_angstrom) else {
            continue;
        };
        let sticks = if orders.is_empty() {
            None
        } else {
            orders.sticks(*b, a, c, radius, positions_angstrom)
        };
        match sticks {
            Some(sticks) => out.extend(sticks.into_iter().map(|(p, q, r)| CylinderInstance {
                a_angstrom: p,
                b_angstrom: q,
                radius_angstrom: r,
                color_a: color(b[0]),
                color_b: color(b[1]),
            })),
            None => out.push(CylinderInstance {
                a_angstrom: a,
                b_angstrom: c,
                radius_angstrom: radius,
                color_a: color(b[0]),
                color_b: color(b[1]),
            }),
        }
    }
}

/// Cylinder instances for `bonds` (the buffer is cleared first).
pub fn build_cylinders(
    bonds: &[[u32; 2]],
    positions_angstrom: &[[f32; 3]],
    colors: &[[u8; 4]],
    style: AtomStyle,
    max_length_angstrom: f32,
    out: &mut Vec<CylinderInstance>,
) {
    out.clear();
    push_cylinders(
        bonds,
        &MultipleBonds::default(),
        positions_angstrom,
        colors,
        style,
        max_length_angstrom,
        out,
    );
}

/// Appends the line-style drawing of some atoms: each bond as two half-segments in its atoms'
/// colours (the bonds in `orders` as two, three or an inner second line), and a small cross
/// (0.25 A arms) for each atom in `lone` (atoms without a drawn bond).
pub fn push_lines(
    bonds: &[[u32; 2]],
    orders: &MultipleBonds,
    lone: &[u32],
    positions_angstrom: &[[f32; 3]],
    colors: &[[u8; 4]],
    max_length_angstrom: f32,
    out: &mut Vec<LineVertex>,
) {
    let color = |i: u32| pack_rgba(colors.get(i as usize).copied().unwrap_or([200, 200, 200, 255]));
    out.reserve(4 * bonds.len() + 6 * lone.len());
    for b in bonds {
        let Some((a, c)) = bond_ends(b, positions_angstrom, max_length_angstrom) else {
            continue;
        };
        let segments = if orders.is_empty() {
            None
        } else {
            orders.lines(*b, a, c, positions_angstrom)
        };
        for (a, c) in segments.unwrap_or_else(|| vec![(a, c)]) {
            let mid: [f32; 3] = std::array::from_fn(|k| 0.5 * (a[k] + c[k]));
            for (p, q, i) in [(a, mid, b[0]), (mid, c, b[1])] {
                let color = color(i);
                out.push(LineVertex {
                    position_angstrom: p,
                    color,
                });
                out.push(LineVertex {
                    position_angstrom: q,
                    color,
                });
            }
        }
    }
    for &i in lone {
        let Some(p) = positions_angstrom
            .get(i as usize)
            .filter(|p| p.iter().all(|x| x.is_finite()))
        else {
            continue;
        };
        let color = color(i);
        for axis in 0..3 {
            for sign in [-0.25f32, 0.25] {
                let mut q = *p;
                q[axis] += sign;
                out.push(LineVertex {
                    position_angstrom: q,
                    color,
                });
            }
        }
    }
}

/// Bonds guessed from covalent radii (distance below 1.15 x the sum of radii, at least 0.4 A),
/// with a cell list so it stays linear in the number of atoms. Pairs sorted, smaller index first.
pub fn guess_bonds(structure: &Structure, positions_angstrom: &[[f32; 3]]) -> Vec<[u32; 2]> {
    const CELL: f32 = 3.0;
    let n = positions_angstrom.len().min(structure.len());
    let mut lo = [f32::INFINITY; 3];
    let mut hi = [f32::NEG_INFINITY; 3];
    for p in positions_angstrom
        .iter()
        .take(n)
        .filter(|p| p.iter().all(|x| x.is_finite()))
    {
        for k in 0..3 {
            lo[k] = lo[k].min(p[k]);
            hi[k] = hi[k].max(p[k]);
        }
    }
    if !lo[0].is_finite() {
        return Vec::new();
    }
    let dims: [usize; 3] = std::array::from_fn(|k| (((hi[k] - lo[k]) / CELL) as usize + 1).min(1024));
    let cell_of =
        |p: &[f32; 3]| -> [usize; 3] { std::array::from_fn(|k| (((p[k] - lo[k]) / CELL) as usize).min(dims[k] - 1)) };
    let n_cells = dims[0] * dims[1] * dims[2];
    let mut heads = vec![u32::MAX; n_cells];
    let mut next = vec![u32::MAX; n];
    for (i, p) in positions_angstrom.iter().enumerate().take(n) {
        if !p.iter().all(|x| x.is_finite()) {
            continue;
        }
        let c = cell_of(p);
        let idx = c[0] + dims[0] * (c[1] + dims[1] * c[2]);
        next[i] = heads[idx];
        heads[idx] = i as u32;
    }
    let radius = |i: usize| structure.elements.get(i).map_or(0.0, |e| e.covalent_radius_angstrom());
    let mut bonds = Vec::new();
    for (i, p) in positions_angstrom.iter().enumerate().take(n) {
        if !p.iter().all(|x| x.is_finite()) {
            continue;
        }
        let c = cell_of(p);
        for dz in -1i64..=1 {
            for dy in -1i64..=1 {
                for dx in -1i64..=1 {
                    let q = [c[0] as i64 + dx, c[1] as i64 + dy, c[2] as i64 + dz];
                    if (0..3).any(|k| q[k] < 0 || q[k] >= dims[k] as i64) {
                        continue;
                    }
                    let idx = q[0] as usize + dims[0] * (q[1] as usize + dims[1] * q[2] as usize);
                    let mut j = heads[idx];
                    while j != u32::MAX {
                        let ju = j as usize;
                        if ju > i {
                            let pj = positions_angstrom[ju];
                            let d2: f32 = (0..3).map(|k| (p[k] - pj[k]) * (p[k] - pj[k])).sum();
                            let cut = 1.15 * (radius(i) + radius(ju));
                            if d2 > 0.16 && d2 < cut * cut && !structure.are_alternates(i, ju) {
                                bonds.push([i as u32, j]);
                            }
                        }
                        j = next[ju];
                    }
                }
            }
        }
    }
    bonds.sort_unstable();
    bonds
}

/// The twelve edges of a periodic box with its origin at `origin`, as a line list.
pub fn box_lines(cell: &UnitCell, origin_angstrom: [f32; 3], rgba: [u8; 4]) -> Vec<LineVertex> {
    let m = cell.matrix_angstrom();
    let v: [[f32; 3]; 3] = std::array::from_fn(|r| std::array::from_fn(|c| m[r][c] as f32));
    let corner = |bits: usize| -> [f32; 3] {
        std::array::from_fn(|k| {
            origin_angstrom[k]
                + if bits & 1 != 0 { v[0][k] } else { 0.0 }
                + if bits & 2 != 0 { v[1][k] } else { 0.0 }
                + if bits & 4 != 0 { v[2][k] } else { 0.0 }
        })
    };
    let color = pack_rgba(rgba);
    let mut out = Vec::with_capacity(24);
    for a in 0..8usize {
        for bit in [1usize, 2, 4] {
            if a & bit == 0 {
                for c in [a, a | bit] {
                    out.push(LineVertex {
                        position_angstrom: corner(c),
                        color,
                    });
                }
            }
        }
    }
    out
}

/// Axis-aligned bounds of finite positions grown by `pad`; `None` when there are none.
pub fn bounds(positions_angstrom: &[[f32; 3]], pad_angstrom: f32) -> Option<([f32; 3], [f32; 3])> {
    let mut lo = [f32::INFINITY; 3];
    let mut hi = [f32::NEG_INFINITY; 3];
    for p in positions_angstrom.iter().filter(|p| p.iter().all(|x| x.is_finite())) {
        for k in 0..3 {
            lo[k] = lo[k].min(p[k]);
            hi[k] = hi[k].max(p[k]);
        }
    }
    lo[0]
        .is_finite()
        .then(|| (lo.map(|x| x - pad_angstrom), hi.map(|x| x + pad_angstrom)))
}

/// The sphere around the box of `positions_angstrom` (its centre) that holds every finite position
/// `pad_angstrom` deep: tighter than the box's own sphere, whose corners atoms seldom fill.
pub fn bounding_sphere(positions_angstrom: &[[f32; 3]], pad_angstrom: f32) -> Option<([f32; 3], f32)> {
    let (lo, hi) = bounds(positions_angstrom, 0.0)?;
    let center: [f32; 3] = std::array::from_fn(|k| 0.5 * (lo[k] + hi[k]));
    let radius = positions_angstrom
        .iter()
        .filter(|p| p.iter().all(|x| x.is_finite()))
        .map(|p| ((p[0] - center[0]).powi(2) + (p[1] - center[1]).powi(2) + (p[2] - center[2]).powi(2)).sqrt())
        .fold(0.0f32, f32::max);
    Some((center, radius + pad_angstrom))
}

/// Length of a hydrogen bond's dashes and of the gaps between them (Å), and their radius.
const HBOND_DASH_ANGSTROM: f32 = 0.22;
const HBOND_GAP_ANGSTROM: f32 = 0.16;
const HBOND_RADIUS_ANGSTROM: f32 = 0.08;
/// Hydrogen bonds coloured by element are drawn in one colour of their own (ChimeraX's deep sky
/// blue): in the donor's and acceptor's colours, an O-H…O bond was oxygen's red and lost among the
/// atoms.
pub const HBOND_RGBA: [u8; 4] = [0, 191, 255, 255];

/// Appends the dashes of hydrogen bonds (style `HBonds`): from each bond's donor to its acceptor (as
/// VMD draws them: they meet the heavy atoms a cartoon's side chains or a heavy-atom stick model
/// show), the half nearer the donor in its colour and the other in the acceptor's, or all in
/// `uniform` when given (the element colouring's [`HBOND_RGBA`]). In a periodic
/// cell the acceptor's image nearest the donor is joined, so a bond across the box is drawn short.
pub fn push_hbond_dashes(
    bonds: &[crate::analysis::hbonds::HBond],
    positions_angstrom: &[[f32; 3]],
    cell: Option<&crate::model::UnitCell>,
    colors: &[[u8; 4]],
    uniform: Option<[u8; 4]>,
    out: &mut Vec<CylinderInstance>,
) {
    let image = cell.filter(|c| c.is_valid()).map(crate::model::select::MinImage::new);
    let color =
        |i: u32| pack_rgba(uniform.unwrap_or_else(|| colors.get(i as usize).copied().unwrap_or([200, 200, 200, 255])));
    for b in bonds {
        let from = b.donor;
        let (Some(p), Some(q)) = (
            positions_angstrom.get(from as usize),
            positions_angstrom.get(b.acceptor as usize),
        ) else {
            continue;
        };
        let (p64, q64) = (p.map(f64::from), q.map(f64::from));
        let d = match &image {
            Some(mi) => mi.delta(q64, p64),
            None => [0, 1, 2].map(|k| q64[k] - p64[k]),
        };
        let len = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt() as f32;
        if !(len.is_finite() && len > 0.0) {
            continue;
        }
        let dir = d.map(|x| x as f32 / len);
        // Dashes centred on the bond: whole periods with the remainder shared at both ends.
        let period = HBOND_DASH_ANGSTROM + HBOND_GAP_ANGSTROM;
        let n = ((len + HBOND_GAP_ANGSTROM) / period).floor().max(1.0) as usize;
        let used = n as f32 * period - HBOND_GAP_ANGSTROM;
        let start = 0.5 * (len - used).max(0.0);
        let (ca, cb) = (color(from), color(b.acceptor));
        for k in 0..n {
            let t0 = start + k as f32 * period;
            let t1 = (t0 + HBOND_DASH_ANGSTROM).min(len);
            let at = |t: f32| [0, 1, 2].map(|i| p[i] + dir[i] * t);
            let c = if 0.5 * (t0 + t1) < 0.5 * len { ca } else { cb };
            out.push(CylinderInstance {
                a_angstrom: at(t0),
                b_angstrom: at(t1),
                radius_angstrom: HBOND_RADIUS_ANGSTROM,
                color_a: c,
                color_b: c,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bounding_sphere_holds_every_atom_and_is_tighter_than_the_box() {
        let pts = [
            [0.0, 0.0, 0.0],
            [10.0, 0.0, 0.0],
            [5.0, 4.0, 0.0],
            [5.0, 0.0, 3.0],
            [f32::NAN, 0.0, 0.0],
        ];
        let (c, r) = bounding_sphere(&pts, 2.0).unwrap();
        for p in &pts[..4] {
            let d = ((p[0] - c[0]).powi(2) + (p[1] - c[1]).powi(2) + (p[2] - c[2]).powi(2)).sqrt();
            assert!(d + 2.0 <= r + 1e-5, "{p:?}");
        }
        let (lo, hi) = bounds(&pts, 2.0).unwrap();
        let half_diagonal = (0..3).map(|k| (hi[k] - lo[k]).powi(2)).sum::<f32>().sqrt() / 2.0;
        assert!(r < half_diagonal, "{r} vs {half_diagonal}");
        assert!(bounding_sphere(&[], 2.0).is_none());
    }
    use crate::model::Name8;

    fn water() -> (Structure, Vec<[f32; 3]>) {
        let mut s = Structure::default();
        for (e, n) in [(8u8, "O"), (1, "H1"), (1, "H2")] {
            s.push_atom(
                Element(e),
                Name8::from(n),
                Name8::from("HOH"),
                1,
                Name8::from("A"),
                Name8::EMPTY,
            );
        }
        (s, vec![[0.0, 0.0, 0.0], [0.9572, 0.0, 0.0], [-0.2400, 0.9266, 0.0]])
    }

    #[test]
    fn water_has_two_oh_bonds() {
        let (s, p) = water();
        assert_eq!(guess_bonds(&s, &p), vec![[0, 1], [0, 2]]);
    }

    #[test]
    fn styles_and_colors() {
        let (s, p) = water();
        let colors = atom_colors(&s, AtomColoring::Element);
        assert_eq!(colors[0], [255, 13, 13, 255]);
        let mut spheres = Vec::new();
        build_spheres(&s, &p, &colors, AtomStyle::Vdw, &mut spheres);
        assert_eq!(spheres.len(), 3);
        assert!((spheres[0].radius_angstrom - 1.52).abs() < 1e-6);
        let mut cyl = Vec::new();
        build_cylinders(&[[0, 1], [0, 2]], &p, &colors, AtomStyle::Vdw, 3.0, &mut cyl);
        assert!(cyl.is_empty());
        build_spheres(&s, &p, &colors, AtomStyle::Lines, &mut spheres);
        assert!(spheres.is_empty(), "lines draw no spheres");
        let mut lines = Vec::new();
        push_lines(&[[0, 1]], &MultipleBonds::default(), &[2], &p, &colors, 3.0, &mut lines);
        // Two half-bonds (oxygen red, then hydrogen white) and a cross of three segments.
        assert_eq!(lines.len(), 4 + 6);
        assert_eq!(lines[0].color, pack_rgba(colors[0]));
        assert_eq!(lines[3].color, pack_rgba(colors[1]));
        assert!((lines[1].position_angstrom[0] - 0.4786).abs() < 1e-4);
        build_cylinders(
            &[[0, 1], [0, 2], [0, 9]],
            &p,
            &colors,
            AtomStyle::Licorice,
            3.0,
            &mut cyl,
        );
        assert_eq!(cyl.len(), 2);
        assert_eq!(atom_colors(&s, AtomColoring::Charge)[0], [160, 160, 160, 255]);
    }

    #[test]
    fn box_has_twelve_edges() {
        let lines = box_lines(&UnitCell::orthorhombic([10.0, 20.0, 30.0]), [0.0; 3], [255; 4]);
        assert_eq!(lines.len(), 24);
        let total: f32 = lines
            .chunks(2)
            .map(|e| {
                (0..3)
                    .map(|k| (e[0].position_angstrom[k] - e[1].position_angstrom[k]).powi(2))
                    .sum::<f32>()
                    .sqrt()
            })
            .sum();
        assert!((total - 4.0 * 60.0).abs() < 1e-3);
    }
}
