//! Secondary structure of every protein chain in a frame, by the DSSP algorithm (Kabsch and Sander,
//! Biopolymers 22, 2577, 1983) with the rules and numerical conventions of mkdssp 4.2.
//!
//! Owns [`ProteinBackbone`] (which residues of a [`Structure`] are protein and where their N, CA, C
//! and O atoms are; found once per structure) and [`ProteinBackbone::assign`] (one
//! [`SecondaryStructure`] per protein residue for the positions of one frame). Called by
//! `orbitfield info --secondary`, the cartoon input builder ([`super::polymer`]), the benchmarks and
//! the tests; cheap enough to recompute per trajectory frame (a cell list finds hydrogen-bond
//! candidates, the energies run on the rayon pool).
//!
//! What mkdssp does and this module repeats, so that the 8-state codes agree residue for residue:
//! - A residue takes part when it has atoms named N, CA, C and O (the readers keep the first alternate
//!   location of each atom). Residues without them are coil and, like a C(i-1)-N(i) distance above
//!   2.5 A or a change of chain (chain label or segment), break the chain.
//! - The amide hydrogen is placed 1 A from N along the previous residue's C=O direction (C - O) for
//!   every residue but proline, also after a chain break as mkdssp does; hydrogens in the file are
//!   ignored unless [`DsspOptions::file_hydrogens`] asks for them.
//! - Hydrogen-bond energy E = -27.888 (1/r_ON + 1/r_CH - 1/r_OH - 1/r_CN) kcal/mol (q1 q2 f = 0.42 *
//!   0.20 * 332), computed for residue pairs with CA-CA < 9 A, rounded to 0.001, floored at -9.9 (also
//!   when two atoms are closer than 0.5 A). A bond N-H(i) -> O=C(j) exists when E < -0.5 and j is one
//!   of the two lowest-energy acceptors of donor i. Distances in single precision, energies in double,
//!   as mkdssp computes them.
//! - n-turns (n = 3, 4, 5) and minimal helices from two consecutive turns; alpha helices (H) override
//!   strands, 3-10 helices (G) take only coil, pi helices (I) take coil and alpha-helix residues (the
//!   pi-helix preference of mkdssp 4). Turns (T) then bends (S, CA kappa angle above 70 degrees) on the
//!   remaining coil.
//! - Bridges (parallel and antiparallel, partners at least three residues apart) grow into ladders,
//!   joined across bulges (gaps below 6 residues on one strand and 3 on the other); a ladder of two or
//!   more bridges is E, a lone bridge B.
//! - Polyproline II ('P', mkdssp 4): coil residues in stretches of at least
//!   [`DsspOptions::pp_min_stretch`] (default 3, as `mkdssp --min-pp-stretch`) with phi in -75 +- 29
//!   and psi in 145 +- 29 degrees. Set it to 0 for the classic 8 states (then 'P' never appears).
//!
//! Coil is written `-` (mkdssp's classic output writes a space). No periodic images: chains are used
//! as the frame gives them.

use crate::model::Structure;
use crate::model::select::is_protein_resname;
use rayon::prelude::*;
use std::collections::VecDeque;
use wide::{CmpLt, f32x4, f32x8, f64x4};

/// One DSSP class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum SecondaryStructure {
    /// None of the others (and residues DSSP cannot use); written `-`.
    #[default]
    Coil,
    /// `H`: alpha helix (4-turns).
    AlphaHelix,
    /// `G`: 3-10 helix (3-turns).
    Helix310,
    /// `I`: pi helix (5-turns).
    PiHelix,
    /// `E`: residue in a ladder of two or more bridges.
    Strand,
    /// `B`: residue in an isolated bridge.
    Bridge,
    /// `T`: hydrogen-bonded turn.
    Turn,
    /// `S`: bend (CA kappa angle above 70 degrees).
    Bend,
    /// `P`: polyproline II helix (mkdssp 4).
    Polyproline,
}

impl SecondaryStructure {
    /// All classes, coil first.
    pub const ALL: [SecondaryStructure; 9] = [
        SecondaryStructure::Coil,
        SecondaryStructure::AlphaHelix,
        SecondaryStructure::Helix310,
        SecondaryStructure::PiHelix,
        SecondaryStructure::Strand,
        SecondaryStructure::Bridge,
        SecondaryStructure::Turn,
        SecondaryStructure::Bend,
        SecondaryStructure::Polyproline,
    ];

    /// The one-letter DSSP code (`-` for coil).
    pub const fn code(self) -> char {
        match self {
            SecondaryStructure::Coil => '-',
            SecondaryStructure::AlphaHelix => 'H',
            SecondaryStructure::Helix310 => 'G',
            SecondaryStructure::PiHelix => 'I',
            SecondaryStructure::Strand => 'E',
            SecondaryStructure::Bridge => 'B',
            SecondaryStructure::Turn => 'T',
            SecondaryStructure::Bend => 'S',
            SecondaryStructure::Polyproline => 'P',
        }
    }

    /// The class of a one-letter code; a space and `-` are coil.
    pub fn from_code(c: char) -> Option<SecondaryStructure> {
        if c == ' ' {
            return Some(SecondaryStructure::Coil);
        }
        SecondaryStructure::ALL.into_iter().find(|s| s.code() == c)
    }

    /// Three states as MDAnalysis reports them: `H` for helices (H, G, I), `E` for strands and
    /// bridges (E, B), `-` for everything else.
    pub const fn three_state(self) -> char {
        match self {
            SecondaryStructure::AlphaHelix | SecondaryStructure::Helix310 | SecondaryStructure::PiHelix => 'H',
            SecondaryStructure::Strand | SecondaryStructure::Bridge => 'E',
            _ => '-',
        }
    }
}

/// Choices that mkdssp offers as options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DsspOptions {
    /// Shortest stretch of residues in the polyproline II region that becomes 'P': 2 or 3 (mkdssp's
    /// `--min-pp-stretch`, default 3); 0 (or any other value) assigns no 'P'.
    pub pp_min_stretch: usize,
    /// Use amide hydrogens from the file (atoms named H or HN) where a residue has one, instead of
    /// placing every one from the previous carbonyl as mkdssp does.
    pub file_hydrogens: bool,
}

impl Default for DsspOptions {
    fn default() -> DsspOptions {
        DsspOptions {
            pp_min_stretch: 3,
            file_hydrogens: false,
        }
    }
}

/// The backbone atoms of one protein residue (indices into the structure's atoms).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BackboneAtoms {
    /// Index of the residue among all residues of the structure ([`Structure::residue_starts`]).
    pub residue: usize,
    pub n: Option<u32>,
    pub ca: Option<u32>,
    pub c: Option<u32>,
    pub o: Option<u32>,
    /// The amide hydrogen (H or HN) when the file has one.
    pub h: Option<u32>,
    pub proline: bool,
    /// Chain ordinal: increases where the chain label or segment changes between protein residues.
    pub chain: u32,
}

/// The protein residues of a structure, in file order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProteinBackbone {
    pub residues: Vec<BackboneAtoms>,
}

/// Bond energies: at or above this (kcal/mol) there is no hydrogen bond.
const MAX_HBOND_ENERGY: f64 = -0.5;
/// Floor of the energy, and its value when atoms nearly coincide (mkdssp's single-precision -9.9).
const MIN_HBOND_ENERGY: f64 = -9.9f32 as f64;
/// q1 q2 f: 0.42 e * 0.20 e * 332 kcal A / (mol e^2), single precision as mkdssp stores it.
const COUPLING: f64 = -27.888f32 as f64;
/// Closer than this (A) counts as coincident.
const MIN_DISTANCE: f32 = 0.5;
/// Residue pairs whose CA atoms are closer than this (A) are tested for hydrogen bonds.
const CA_CUTOFF: f32 = 9.0;
/// Longest C(i-1)-N(i) distance (A) of a peptide bond.
const MAX_PEPTIDE_BOND: f32 = 2.5;

impl ProteinBackbone {
    /// Finds the protein residues of `structure`: residues with a known amino-acid name or with atoms
    /// named N, CA, C and O. The first atom of each name counts.
    pub fn new(structure: &Structure) -> ProteinBackbone {
        let starts = structure.residue_starts();
        let mut residues = Vec::new();
        let mut chain = 0u32;
        let mut last_label = None;
        for (residue, w) in starts.windows(2).enumerate() {
            let (Some(&a), Some(&b)) = (w.first(), w.get(1)) else {
                continue;
            };
            let mut atoms = BackboneAtoms {
                residue,
                n: None,
                ca: None,
                c: None,
                o: None,
                h: None,
                proline: false,
                chain: 0,
            };
            for i in a..b {
                let slot = match structure.names.get(i).map(|n| n.as_str()) {
                    Some("N") => &mut atoms.n,
                    Some("CA") => &mut atoms.ca,
                    Some("C") => &mut atoms.c,
                    Some("O") => &mut atoms.o,
                    Some("H" | "HN") => &mut atoms.h,
                    _ => continue,
                };
                if slot.is_none() {
                    *slot = u32::try_from(i).ok();
                }
            }
            let resname = structure.resnames.get(a).map_or("", |r| r.as_str());
            let complete = atoms.n.is_some() && atoms.ca.is_some() && atoms.c.is_some() && atoms.o.is_some();
            if !complete && !is_protein_resname(resname) {
                continue;
            }
            atoms.proline = resname == "PRO";
            let label = (structure.chains.get(a).copied(), structure.segids.get(a).copied());
            if last_label.is_some_and(|l| l != label) {
                chain += 1;
            }
            last_label = Some(label);
            atoms.chain = chain;
            residues.push(atoms);
        }
        ProteinBackbone { residues }
    }

    /// Number of protein residues.
    pub fn len(&self) -> usize {
        self.residues.len()
    }

    pub fn is_empty(&self) -> bool {
        self.residues.is_empty()
    }

    /// The secondary structure of every protein residue (in the order of [`ProteinBackbone::residues`])
    /// for the atom positions of one frame (Angstrom). Residues whose backbone atoms are missing, out of
    /// range of `positions_angstrom` or not finite are coil and break their chain.
    pub fn assign(&self, positions_angstrom: &[[f32; 3]], options: &DsspOptions) -> Vec<SecondaryStructure> {
        let mut out = vec![SecondaryStructure::Coil; self.residues.len()];
        let used = Residues::gather(self, positions_angstrom, options);
        let ss = used.secondary_structure(options);
        for (k, s) in ss.into_iter().enumerate() {
            if let Some(o) = used.source.get(k).and_then(|&r| out.get_mut(r)) {
                *o = s;
            }
        }
        out
    }
}

/// The residues DSSP uses (all four backbone atoms present and finite), across all chains.
struct Residues {
    /// Index into `ProteinBackbone::residues` of each residue here.
    source: Vec<usize>,
    n: Vec<[f32; 3]>,
    ca: Vec<[f32; 3]>,
    c: Vec<[f32; 3]>,
    o: Vec<[f32; 3]>,
    h: Vec<[f32; 3]>,
    proline: Vec<bool>,
    chain: Vec<u32>,
    /// Residue numbers that skip one at every chain break, so that residues `a <= b` are connected
    /// exactly when `number[b] - number[a] == b - a` and they share a chain.
    number: Vec<u32>,
}

fn sub(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn dot(a: [f32; 3], b: [f32; 3]) -> f32 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn cross(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [
        a[1] * b[2] - b[1] * a[2],
        a[2] * b[0] - b[2] * a[0],
        a[0] * b[1] - b[0] * a[1],
    ]
}

fn distance(a: [f32; 3], b: [f32; 3]) -> f32 {
    let d = sub(a, b);
    (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt()
}

/// Dihedral angle p1-p2-p3-p4 in degrees, 360 when undefined (mkdssp's formula, single precision).
fn dihedral_degrees(p1: [f32; 3], p2: [f32; 3], p3: [f32; 3], p4: [f32; 3]) -> f32 {
    let v12 = sub(p1, p2);
    let v43 = sub(p4, p3);
    let z = sub(p2, p3);
    let p = cross(z, v12);
    let x = cross(z, v43);
    let y = cross(z, x);
    let u = dot(x, x);
    let v = dot(y, y);
    if u > 0.0 && v > 0.0 {
        let u = dot(p, x) / u.sqrt();
        let v = dot(p, y) / v.sqrt();
        if u != 0.0 || v != 0.0 {
            return v.atan2(u) * 180.0 / std::f32::consts::PI;
        }
    }
    360.0
}

/// Hydrogen-bond energy (kcal/mol) of donor N-H with acceptor C=O, as mkdssp rounds and floors it
/// (the search itself calls [`hbond_energy_if_bond`]).
///
/// The four distances and the four quotients go through SIMD lanes: the same IEEE operations in
/// the same order as one at a time (no fused multiply-adds), so the result is bit for bit that of
/// the scalar formula.
#[cfg(test)]
fn hbond_energy(h: [f32; 3], n: [f32; 3], c: [f32; 3], o: [f32; 3]) -> f64 {
    energy_from_distances(bond_distances(h, n, c, o))
}

/// The distances H-O, H-C, N-C and N-O (single precision, as [`distance`] computes each).
fn bond_distances(h: [f32; 3], n: [f32; 3], c: [f32; 3], o: [f32; 3]) -> f32x4 {
    let axis = |k: usize| f32x4::from([h[k], h[k], n[k], n[k]]) - f32x4::from([o[k], c[k], c[k], o[k]]);
    let (x, y, z) = (axis(0), axis(1), axis(2));
    (x * x + y * y + z * z).sqrt()
}

/// The energy of [`hbond_energy`] from the distances of [`bond_distances`].
fn energy_from_distances(d: f32x4) -> f64 {
    let d = d.to_array();
    let e = if d.iter().any(|&x| x < MIN_DISTANCE) {
        MIN_HBOND_ENERGY
    } else {
        let q = (f64x4::splat(COUPLING) / f64x4::from(d.map(f64::from))).to_array();
        q[0] - q[1] + q[2] - q[3]
    };
    let e = round_half_away(e * 1000.0) / 1000.0;
    if e < MIN_HBOND_ENERGY { MIN_HBOND_ENERGY } else { e }
}

/// The energy of donor N-H with acceptor C=O when it is a hydrogen bond (below
/// [`MAX_HBOND_ENERGY`]), else `None`. Most pairs near each other are far from bonding: a
/// single-precision estimate (error below 1e-4 kcal/mol, against a margin of 0.01) turns those away
/// before the exact double-precision energy.
fn hbond_energy_if_bond(h: [f32; 3], n: [f32; 3], c: [f32; 3], o: [f32; 3]) -> Option<f64> {
    let d = bond_distances(h, n, c, o);
    let near = d.cmp_lt(f32x4::splat(MIN_DISTANCE)).move_mask() != 0;
    if !near {
        let q = (f32x4::splat(COUPLING as f32) / d).to_array();
        let estimate = q[0] - q[1] + q[2] - q[3];
        if estimate >= (MAX_HBOND_ENERGY + 0.01) as f32 {
            return None;
        }
    }
    let e = energy_from_distances(d);
    (e < MAX_HBOND_ENERGY).then_some(e)
}

/// `x.round()` (halves away from zero) without the library call for the magnitudes energies have.
fn round_half_away(x: f64) -> f64 {
    // Below 2^52 the truncation is exact through i64 and so is the fraction `x - t`; larger
    // values (and NaN) take the library's path.
    if x.abs() < 4.0e15 {
        // The sign carried over keeps -0.0 where the library gives it.
        let t = (x as i64 as f64).copysign(x);
        let r = x - t;
        if r >= 0.5 {
            t + 1.0
        } else if r <= -0.5 {
            t - 1.0
        } else {
            t
        }
    } else {
        x.round()
    }
}

/// The two lowest-energy acceptors of a donor (mkdssp keeps exactly two), where they are hydrogen
/// bonds. mkdssp keeps the two lowest energies whatever their value, but only those below
/// [`MAX_HBOND_ENERGY`] count as bonds, and every bond has a lower energy than every non-bond: the
/// bonds among its two are the (at most) two lowest bonds, so offering only bonds gives the same
/// bonds.
#[derive(Clone, Copy, Debug)]
struct Acceptors {
    index: [u32; 2],
    energy: [f64; 2],
}

impl Acceptors {
    const NONE: u32 = u32::MAX;

    fn new() -> Acceptors {
        Acceptors {
            index: [Acceptors::NONE; 2],
            energy: [0.0; 2],
        }
    }

    /// Keeps the two lowest (energy, index) pairs among negative energies. mkdssp offers acceptors in
    /// ascending index and a strictly lower energy displaces the best, else the second (slots start
    /// at energy 0): that keeps exactly these two pairs (an equal energy from a later, higher index
    /// never displaces), so here the acceptors may come in any order.
    fn offer(&mut self, j: u32, e: f64) {
        // NaN is turned away too, as the strict comparisons of mkdssp do.
        if e >= 0.0 || e.is_nan() {
            return;
        }
        let below = |k: usize| e < self.energy[k] || (e == self.energy[k] && j < self.index[k]);
        if below(0) {
            self.index[1] = self.index[0];
            self.energy[1] = self.energy[0];
            self.index[0] = j;
            self.energy[0] = e;
        } else if below(1) {
            self.index[1] = j;
            self.energy[1] = e;
        }
    }

    fn bonded_to(&self, j: u32) -> bool {
        (self.index[0] == j && self.energy[0] < MAX_HBOND_ENERGY)
            || (self.index[1] == j && self.energy[1] < MAX_HBOND_ENERGY)
    }
}

/// Residues binned by CA position into cubic cells at least [`CA_CUTOFF`] wide.
struct CellList {
    origin: [f32; 3],
    cell: f32,
    dims: [usize; 3],
    /// `starts[c]..starts[c + 1]` index `items` for cell `c`.
    starts: Vec<u32>,
    /// Residue indices, ascending within each cell.
    items: Vec<u32>,
    /// The place in `items` of each residue.
    slot_of: Vec<u32>,
    /// The CA coordinates x, y, z of each item, in item order (read in sequence, eight at a time, by
    /// [`CellList::for_near`]).
    item_xyz: [Vec<f32>; 3],
}

impl CellList {
    fn new(points: &[[f32; 3]], cutoff: f32) -> CellList {
        let mut lo = [f32::INFINITY; 3];
        let mut hi = [f32::NEG_INFINITY; 3];
        for p in points {
            for k in 0..3 {
                lo[k] = lo[k].min(p[k]);
                hi[k] = hi[k].max(p[k]);
            }
        }
        if points.is_empty() {
            lo = [0.0; 3];
            hi = [0.0; 3];
        }
        // Cells of at least the cutoff; coarser when the points are spread so thinly that the
        // lattice would hold many more cells than points.
        let extent = [hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]];
        let max_cells = (points.len() * 2).max(27) as f64;
        let mut cell = cutoff;
        let count = |cell: f32| -> [usize; 3] { extent.map(|e| ((e / cell) as usize).saturating_add(1)) };
        loop {
            let d = count(cell);
            if (d[0] as f64) * (d[1] as f64) * (d[2] as f64) <= max_cells || !cell.is_finite() {
                break;
            }
            cell *= 1.5;
        }
        let dims = count(cell);
        let total = dims[0].saturating_mul(dims[1]).saturating_mul(dims[2]);
        let mut starts = vec![0u32; total + 1];
        let index_of = |p: &[f32; 3]| -> usize {
            let c = [0, 1, 2].map(|k| (((p[k] - lo[k]) / cell) as usize).min(dims[k].saturating_sub(1)));
            (c[2] * dims[1] + c[1]) * dims[0] + c[0]
        };
        let cells: Vec<usize> = points.par_iter().with_min_len(4096).map(index_of).collect();
        for &c in &cells {
            if let Some(s) = starts.get_mut(c + 1) {
                *s += 1;
            }
        }
        for c in 0..total {
            let prev = starts.get(c).copied().unwrap_or(0);
            if let Some(s) = starts.get_mut(c + 1) {
                *s += prev;
            }
        }
        let mut fill = starts.clone();
        let mut items = vec![0u32; points.len()];
        let mut slot_of = vec![0u32; points.len()];
        for (i, &c) in cells.iter().enumerate() {
            if let Some(f) = fill.get_mut(c)
                && let Some(slot) = items.get_mut(*f as usize)
            {
                *slot = i as u32;
                if let Some(s) = slot_of.get_mut(i) {
                    *s = *f;
                }
                *f += 1;
            }
        }
        let item_xyz = [0, 1, 2].map(|k| {
            items
                .par_iter()
                .with_min_len(4096)
                .map(|&i| points.get(i as usize).map_or(f32::NAN, |p| p[k]))
                .collect()
        });
        CellList {
            origin: lo,
            cell,
            dims,
            starts,
            items,
            slot_of,
            item_xyz,
        }
    }

    /// Calls `f` with the index and position of every point in the cells around `p` (its own and
    /// the 26 neighbours) whose squared distance `(p - q)^2` (summed x, y, z in single precision) is
    /// below `r2_max`. The three cells of a row along x are adjacent in the item order, so each row
    /// is one contiguous run, tested eight points at a time.
    fn for_near(&self, p: [f32; 3], r2_max: f32, mut f: impl FnMut(u32, [f32; 3])) {
        let c = [0, 1, 2].map(|k| {
            let x = ((p[k] - self.origin[k]) / self.cell).floor();
            if x.is_finite() { x as i64 } else { 0 }
        });
        let x0 = (c[0] - 1).max(0);
        let x1 = (c[0] + 1).min(self.dims[0] as i64 - 1);
        if x0 > x1 {
            return;
        }
        for dz in -1..=1i64 {
            let z = c[2] + dz;
            if z < 0 || z >= self.dims[2] as i64 {
                continue;
            }
            for dy in -1..=1i64 {
                let y = c[1] + dy;
                if y < 0 || y >= self.dims[1] as i64 {
                    continue;
                }
                let row = (z as usize * self.dims[1] + y as usize) * self.dims[0];
                let (Some(&a), Some(&b)) = (
                    self.starts.get(row + x0 as usize),
                    self.starts.get(row + x1 as usize + 1),
                ) else {
                    continue;
                };
                let range = a as usize..b as usize;
                let [xs, ys, zs] = &self.item_xyz;
                let (Some(items), Some(xs), Some(ys), Some(zs)) = (
                    self.items.get(range.clone()),
                    xs.get(range.clone()),
                    ys.get(range.clone()),
                    zs.get(range),
                ) else {
                    continue;
                };
                let mut visit = |k: usize| {
                    if let (Some(&i), Some(&x), Some(&y), Some(&z)) = (items.get(k), xs.get(k), ys.get(k), zs.get(k)) {
                        let q = [x, y, z];
                        let v = sub(p, q);
                        if v[0] * v[0] + v[1] * v[1] + v[2] * v[2] < r2_max {
                            f(i, q);
                        }
                    }
                };
                let (px, py, pz) = (f32x8::splat(p[0]), f32x8::splat(p[1]), f32x8::splat(p[2]));
                let limit = f32x8::splat(r2_max);
                let lanes = |s: &[f32]| -> f32x8 {
                    let mut a = [0f32; 8];
                    a.copy_from_slice(s);
                    f32x8::from(a)
                };
                let mut start = 0;
                for ((cx, cy), cz) in xs.chunks_exact(8).zip(ys.chunks_exact(8)).zip(zs.chunks_exact(8)) {
                    let (dx, dy, dz) = (px - lanes(cx), py - lanes(cy), pz - lanes(cz));
                    let mut mask = (dx * dx + dy * dy + dz * dz).cmp_lt(limit).move_mask() as u32;
                    while mask != 0 {
                        visit(start + mask.trailing_zeros() as usize);
                        mask &= mask - 1;
                    }
                    start += 8;
                }
                for k in start..items.len() {
                    visit(k);
                }
            }
        }
    }
}

/// A ladder under construction: bridge partners `i[k]` and `j[k]` (antiparallel ladders keep `j`
/// ascending, so `j` pairs with `i` in reverse).
#[derive(Clone, Debug)]
struct Ladder {
    parallel: bool,
    i: VecDeque<u32>,
    j: VecDeque<u32>,
}

impl Ladder {
    fn ends(&self) -> [u32; 4] {
        [
            self.i.front().copied().unwrap_or(0),
            self.i.back().copied().unwrap_or(0),
            self.j.front().copied().unwrap_or(0),
            self.j.back().copied().unwrap_or(0),
        ]
    }
}

impl Residues {
    fn gather(backbone: &ProteinBackbone, positions: &[[f32; 3]], options: &DsspOptions) -> Residues {
        let at = |i: Option<u32>| -> Option<[f32; 3]> {
            positions
                .get(i? as usize)
                .copied()
                .filter(|p| p.iter().all(|x| x.is_finite()))
        };
        // The usable residues and their atoms (in parallel), then the columns (in order).
        let picked: Vec<Option<[[f32; 3]; 4]>> = backbone
            .residues
            .par_iter()
            .with_min_len(1024)
            .map(|r| Some([at(r.n)?, at(r.ca)?, at(r.c)?, at(r.o)?]))
            .collect();
        let source: Vec<usize> = (0..picked.len())
            .into_par_iter()
            .with_min_len(4096)
            .filter(|&k| picked.get(k).is_some_and(|p| p.is_some()))
            .collect();
        let column = |atom: usize| -> Vec<[f32; 3]> {
            source
                .par_iter()
                .with_min_len(4096)
                .map(|&k| picked.get(k).copied().flatten().map_or([0.0; 3], |p| p[atom]))
                .collect()
        };
        let residues = &backbone.residues;
        let mut ch = Residues {
            n: column(0),
            ca: column(1),
            c: column(2),
            o: column(3),
            h: Vec::new(),
            proline: source
                .par_iter()
                .with_min_len(4096)
                .map(|&k| residues.get(k).is_some_and(|r| r.proline))
                .collect(),
            chain: source
                .par_iter()
                .with_min_len(4096)
                .map(|&k| residues.get(k).map_or(0, |r| r.chain))
                .collect(),
            number: Vec::with_capacity(source.len()),
            source,
        };
        let m = ch.source.len();
        let broken =
            |k: usize| k > 0 && (distance(ch.c[k - 1], ch.n[k]) > MAX_PEPTIDE_BOND || ch.chain[k - 1] != ch.chain[k]);
        let breaks: Vec<bool> = (0..m).into_par_iter().with_min_len(4096).map(broken).collect();
        let mut number = 0u32;
        for &b in &breaks {
            number += 1 + u32::from(b);
            ch.number.push(number);
        }
        // mkdssp places H from the previous residue in its list whatever lies between.
        let h: Vec<[f32; 3]> = (0..m)
            .into_par_iter()
            .with_min_len(4096)
            .map(|k| {
                let h = ch.n[k];
                let file_h = if options.file_hydrogens {
                    ch.source
                        .get(k)
                        .and_then(|&s| backbone.residues.get(s))
                        .and_then(|r| at(r.h))
                } else {
                    None
                };
                if let Some(fh) = file_h {
                    fh
                } else if k > 0 && !ch.proline[k] {
                    let (pc, po) = (ch.c[k - 1], ch.o[k - 1]);
                    let d = distance(pc, po);
                    [
                        h[0] + (pc[0] - po[0]) / d,
                        h[1] + (pc[1] - po[1]) / d,
                        h[2] + (pc[2] - po[2]) / d,
                    ]
                } else {
                    h
                }
            })
            .collect();
        ch.h = h;
        ch
    }

    fn len(&self) -> usize {
        self.source.len()
    }

    /// True when residues `a` and `b` (a <= b) are in one chain with no break between them.
    fn connected(&self, a: usize, b: usize) -> bool {
        match (
            self.chain.get(a),
            self.chain.get(b),
            self.number.get(a),
            self.number.get(b),
        ) {
            (Some(ca), Some(cb), Some(&na), Some(&nb)) => ca == cb && b >= a && (nb - na) as usize == b - a,
            _ => false,
        }
    }

    /// The two best acceptors of every donor, from residue pairs with CA-CA below the cutoff.
    /// Donors are taken in cell order (neighbouring donors read the same cells) on the rayon pool.
    fn hbonds(&self) -> Vec<Acceptors> {
        let cells = CellList::new(&self.ca, CA_CUTOFF);
        // Squared distances at or above this cannot pass the cutoff test (which stays the exact
        // single-precision `distance < CA_CUTOFF` of mkdssp for the few that come near it).
        let cutoff_squared = CA_CUTOFF * CA_CUTOFF * (1.0 + 1e-5);
        let by_item: Vec<Acceptors> = cells
            .items
            .par_iter()
            .with_min_len(256)
            .map(|&d| {
                let d = d as usize;
                let mut acc = Acceptors::new();
                let (Some(&ca_d), Some(&pro), Some(&h), Some(&n)) =
                    (self.ca.get(d), self.proline.get(d), self.h.get(d), self.n.get(d))
                else {
                    return acc;
                };
                if pro {
                    // mkdssp gives a proline donor energy 0: never a bond.
                    return acc;
                }
                cells.for_near(ca_d, cutoff_squared, |j, ca_j| {
                    let ju = j as usize;
                    // The pair (d-1, d) is evaluated only with d-1 as donor.
                    if ju != d
                        && ju + 1 != d
                        && distance(ca_d, ca_j) < CA_CUTOFF
                        && let (Some(&c), Some(&o)) = (self.c.get(ju), self.o.get(ju))
                        && let Some(e) = hbond_energy_if_bond(h, n, c, o)
                    {
                        acc.offer(j, e);
                    }
                });
                acc
            })
            .collect();
        // Back to residue order.
        cells
            .slot_of
            .par_iter()
            .with_min_len(4096)
            .map(|&k| by_item.get(k as usize).copied().unwrap_or_else(Acceptors::new))
            .collect()
    }

    fn secondary_structure(&self, options: &DsspOptions) -> Vec<SecondaryStructure> {
        let m = self.len();
        let mut ss = vec![SecondaryStructure::Coil; m];
        if m == 0 {
            return ss;
        }
        let acc = self.hbonds();
        let bond =
            |donor: usize, acceptor: usize| -> bool { acc.get(donor).is_some_and(|a| a.bonded_to(acceptor as u32)) };
        self.assign_bridges(&acc, &bond, &mut ss);
        self.assign_helices(&bond, &mut ss);
        if options.pp_min_stretch == 2 || options.pp_min_stretch == 3 {
            self.assign_polyproline(options.pp_min_stretch, &mut ss);
        }
        ss
    }

    /// mkdssp's TestBridge for residues i < j.
    fn bridge(&self, bond: &impl Fn(usize, usize) -> bool, i: usize, j: usize) -> Option<bool> {
        let m = self.len();
        if i == 0 || j + 1 >= m || !self.connected(i - 1, i + 1) || !self.connected(j - 1, j + 1) {
            return None;
        }
        let (a, b, c, d, e, f) = (i - 1, i, i + 1, j - 1, j, j + 1);
        if (bond(c, e) && bond(e, a)) || (bond(f, b) && bond(b, d)) {
            Some(true)
        } else if (bond(c, d) && bond(f, a)) || (bond(e, b) && bond(b, e)) {
            Some(false)
        } else {
            None
        }
    }

    fn assign_bridges(
        &self,
        acc: &[Acceptors],
        bond: &(impl Fn(usize, usize) -> bool + Sync),
        ss: &mut [SecondaryStructure],
    ) {
        let m = self.len();
        // Every bridge pattern needs one of its bonds d -> a with {i, j} among {d-1, a}, {d-1, a+1}
        // and {a, d}: candidates from the bonds, instead of all pairs.
        let mut candidates: Vec<u64> = acc
            .par_iter()
            .enumerate()
            .flat_map_iter(|(d, a)| {
                // At most six candidates per donor; u64::MAX marks an unused place.
                let mut out = [u64::MAX; 6];
                for k in 0..2 {
                    if a.energy[k] < MAX_HBOND_ENERGY && a.index[k] != Acceptors::NONE {
                        let (d, a) = (d as i64, i64::from(a.index[k]));
                        for (slot, (x, y)) in [(d - 1, a), (d - 1, a + 1), (a, d)].into_iter().enumerate() {
                            let (i, j) = (x.min(y), x.max(y));
                            // Partners at least three apart, each with both neighbours.
                            if i >= 1
                                && j >= i + 3
                                && (j + 1) < m as i64
                                && let Some(o) = out.get_mut(3 * k + slot)
                            {
                                *o = ((i as u64) << 32) | j as u64;
                            }
                        }
                    }
                }
                out.into_iter().filter(|&key| key != u64::MAX)
            })
            .collect();
        candidates.par_sort_unstable();
        candidates.dedup();
        let hits: Vec<(u32, u32, bool)> = candidates
            .par_iter()
            .filter_map(|&key| {
                let (i, j) = ((key >> 32) as usize, (key & 0xffff_ffff) as usize);
                self.bridge(bond, i, j).map(|p| (i as u32, j as u32, p))
            })
            .collect();

        // Consecutive bridges into ladders, in mkdssp's order: the first ladder (in creation order)
        // that ends at i - 1 with a matching partner takes bridge (i, j).
        let mut ladders: Vec<Ladder> = Vec::new();
        let mut previous: Vec<usize> = Vec::new();
        let mut current: Vec<usize> = Vec::new();
        let mut current_i: Option<u32> = None;
        for &(i, j, parallel) in &hits {
            if current_i != Some(i) {
                current.sort_unstable();
                previous = if current_i.is_some_and(|c| c + 1 == i) {
                    std::mem::take(&mut current)
                } else {
                    Vec::new()
                };
                current.clear();
                current_i = Some(i);
            }
            let found = previous.iter().position(|&l| {
                ladders.get(l).is_some_and(|ld| {
                    ld.parallel == parallel
                        && if parallel {
                            ld.j.back().is_some_and(|&b| b.wrapping_add(1) == j)
                        } else {
                            ld.j.front().is_some_and(|&f| f.wrapping_sub(1) == j)
                        }
                })
            });
            match found {
                Some(p) => {
                    let l = previous.remove(p);
                    if let Some(ld) = ladders.get_mut(l) {
                        ld.i.push_back(i);
                        if parallel {
                            ld.j.push_back(j);
                        } else {
                            ld.j.push_front(j);
                        }
                    }
                    current.push(l);
                }
                None => {
                    current.push(ladders.len());
                    ladders.push(Ladder {
                        parallel,
                        i: VecDeque::from([i]),
                        j: VecDeque::from([j]),
                    });
                }
            }
        }

        // Join ladders across bulges. mkdssp sorts by chain, then first residue, and compares every
        // later ladder; those starting 6 or more past this one's end never join, so the scan stops.
        ladders.sort_by_key(|l| l.i.front().copied().unwrap_or(0));
        let mut alive = vec![true; ladders.len()];
        for a in 0..ladders.len() {
            if !alive[a] {
                continue;
            }
            let mut b = a + 1;
            while b < ladders.len() {
                if !alive[b] {
                    b += 1;
                    continue;
                }
                let [ibi, iei, jbi, jei] = ladders[a].ends();
                let [ibj, iej, jbj, jej] = ladders[b].ends();
                if u64::from(ibj) >= u64::from(iei) + 6 {
                    break;
                }
                let same_kind = ladders[a].parallel == ladders[b].parallel;
                if !same_kind
                    || !self.connected(ibi.min(ibj) as usize, iei.max(iej) as usize)
                    || !self.connected(jbi.min(jbj) as usize, jei.max(jej) as usize)
                    || ibj.wrapping_sub(iei) >= 6
                    || (iei >= ibj && ibi <= iej)
                {
                    b += 1;
                    continue;
                }
                let bulge = if ladders[a].parallel {
                    (jbj.wrapping_sub(jei) < 6 && ibj.wrapping_sub(iei) < 3) || jbj.wrapping_sub(jei) < 3
                } else {
                    (jbi.wrapping_sub(jej) < 6 && ibj.wrapping_sub(iei) < 3) || jbi.wrapping_sub(jej) < 3
                };
                if bulge {
                    let other = std::mem::replace(
                        &mut ladders[b],
                        Ladder {
                            parallel: false,
                            i: VecDeque::new(),
                            j: VecDeque::new(),
                        },
                    );
                    alive[b] = false;
                    let ld = &mut ladders[a];
                    ld.i.extend(other.i);
                    if ld.parallel {
                        ld.j.extend(other.j);
                    } else {
                        for &x in other.j.iter().rev() {
                            ld.j.push_front(x);
                        }
                    }
                }
                b += 1;
            }
        }
        for (l, ld) in ladders.iter().enumerate() {
            if !alive[l] {
                continue;
            }
            let kind = if ld.i.len() > 1 {
                SecondaryStructure::Strand
            } else {
                SecondaryStructure::Bridge
            };
            let [ib, ie, jb, je] = ld.ends();
            for r in (ib..=ie).chain(jb..=je) {
                if let Some(s) = ss.get_mut(r as usize)
                    && *s != SecondaryStructure::Strand
                {
                    *s = kind;
                }
            }
        }
    }

    fn assign_helices(&self, bond: &(impl Fn(usize, usize) -> bool + Sync), ss: &mut [SecondaryStructure]) {
        let m = self.len();
        // mkdssp's helix flags (start, middle, end of 3-, 4- and 5-turns) are read only as "an
        // n-turn starts at i" (its start and start-and-end flags): bit n - 3 of `turns[i]`, set when
        // residue i + n donates a hydrogen bond to residue i within one chain.
        let turns: Vec<u8> = (0..m)
            .into_par_iter()
            .with_min_len(1024)
            .map(|i| {
                (0..3usize).fold(0u8, |bits, kind| {
                    let stride = kind + 3;
                    if i + stride < m && self.connected(i, i + stride) && bond(i + stride, i) {
                        bits | (1 << kind)
                    } else {
                        bits
                    }
                })
            })
            .collect();
        let start = |kind: usize, i: usize| turns.get(i).is_some_and(|&t| t & (1 << kind) != 0);
        let mut i = 1;
        while i + 4 < m {
            if start(1, i) && start(1, i - 1) {
                for s in ss.iter_mut().skip(i).take(4) {
                    *s = SecondaryStructure::AlphaHelix;
                }
            }
            i += 1;
        }
        let mut i = 1;
        while i + 3 < m {
            if start(0, i) && start(0, i - 1) {
                let free = ss[i..=i + 2]
                    .iter()
                    .all(|&s| s == SecondaryStructure::Coil || s == SecondaryStructure::Helix310);
                if free {
                    ss[i..=i + 2].fill(SecondaryStructure::Helix310);
                }
            }
            i += 1;
        }
        let mut i = 1;
        while i + 5 < m {
            if start(2, i) && start(2, i - 1) {
                let free = ss[i..=i + 4].iter().all(|&s| {
                    matches!(
                        s,
                        SecondaryStructure::Coil | SecondaryStructure::PiHelix | SecondaryStructure::AlphaHelix
                    )
                });
                if free {
                    ss[i..=i + 4].fill(SecondaryStructure::PiHelix);
                }
            }
            i += 1;
        }
        // Turns, then bends, on the remaining coil: each residue on its own.
        ss.par_iter_mut().enumerate().with_min_len(1024).for_each(|(i, s)| {
            if *s == SecondaryStructure::Coil && i >= 1 && i + 1 < m {
                let turn = (0..3).any(|kind| (1..kind + 3).any(|k| i >= k && start(kind, i - k)));
                if turn {
                    *s = SecondaryStructure::Turn;
                } else if self.bend(i) {
                    *s = SecondaryStructure::Bend;
                }
            }
        });
    }

    /// The CA kappa angle at residue i (between CA(i-2)->CA(i) and CA(i)->CA(i+2)) above 70 degrees.
    fn bend(&self, i: usize) -> bool {
        if i < 2 || i + 2 >= self.len() || !self.connected(i - 2, i + 2) {
            return false;
        }
        let v12 = sub(self.ca[i], self.ca[i - 2]);
        let v34 = sub(self.ca[i + 2], self.ca[i]);
        let x = dot(v12, v12) * dot(v34, v34);
        let ckap = if x > 0.0 { dot(v12, v34) / x.sqrt() } else { 0.0 };
        let skap = (1.0 - ckap * ckap).sqrt();
        let kappa = skap.atan2(ckap) * (180.0 / std::f64::consts::PI) as f32;
        kappa > 70.0
    }

    fn assign_polyproline(&self, stretch: usize, ss: &mut [SecondaryStructure]) {
        let m = self.len();
        const EPSILON: f32 = 29.0;
        let phi_ok = |x: f32| (-75.0 - EPSILON..=-75.0 + EPSILON).contains(&x);
        let psi_ok = |x: f32| (145.0 - EPSILON..=145.0 + EPSILON).contains(&x);
        // Whether residue i's phi and psi lie in the polyproline II region (the end residues have
        // angles 0, outside it).
        let in_region: Vec<bool> = (0..m)
            .into_par_iter()
            .with_min_len(1024)
            .map(|i| {
                if i == 0 || i + 1 >= m {
                    return false;
                }
                let phi = if self.connected(i - 1, i) {
                    dihedral_degrees(self.c[i - 1], self.n[i], self.ca[i], self.c[i])
                } else {
                    360.0
                };
                let psi = if self.connected(i, i + 1) {
                    dihedral_degrees(self.n[i], self.ca[i], self.c[i], self.n[i + 1])
                } else {
                    360.0
                };
                phi_ok(phi) && psi_ok(psi)
            })
            .collect();
        let mut i = 1;
        while i + 3 < m {
            if (i..i + stretch).all(|k| in_region.get(k).copied().unwrap_or(false)) {
                for s in ss.iter_mut().skip(i).take(stretch) {
                    if *s == SecondaryStructure::Coil {
                        *s = SecondaryStructure::Polyproline;
                    }
                }
            }
            i += 1;
        }
    }
}

/// The codes of `ss` as a string (one character per residue).
pub fn codes(ss: &[SecondaryStructure]) -> String {
    ss.iter().map(|s| s.code()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip() {
        for s in SecondaryStructure::ALL {
            assert_eq!(SecondaryStructure::from_code(s.code()), Some(s));
        }
        assert_eq!(SecondaryStructure::from_code(' '), Some(SecondaryStructure::Coil));
        assert_eq!(SecondaryStructure::from_code('x'), None);
        assert_eq!(codes(&[SecondaryStructure::AlphaHelix, SecondaryStructure::Coil]), "H-");
    }

    #[test]
    fn energy_of_a_typical_bond_and_its_floor() {
        // A linear N-H...O=C arrangement: N at 0, H at 1 A, O at 2.9 A, C at 4.13 A on one line.
        let n = [0.0, 0.0, 0.0];
        let h = [1.0, 0.0, 0.0];
        let o = [2.9, 0.0, 0.0];
        let c = [4.13, 0.0, 0.0];
        let want = -27.888 * (1.0 / 1.9 - 1.0 / 3.13 + 1.0 / 4.13 - 1.0 / 2.9);
        let e = hbond_energy(h, n, c, o);
        assert!((e - want).abs() < 1.5e-3, "{e} vs {want}");
        assert!(e < MAX_HBOND_ENERGY);
        // Coincident atoms: the floor.
        assert_eq!(hbond_energy(h, n, c, h), MIN_HBOND_ENERGY);
    }

    /// A small deterministic generator for fresh inputs (splitmix64).
    struct Mix(u64);
    impl Mix {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }
        /// Uniform in [lo, hi).
        fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
            lo + (hi - lo) * (self.next() >> 11) as f64 / (1u64 << 53) as f64
        }
        fn point(&mut self, scale: f64) -> [f32; 3] {
            [0; 3].map(|_| self.uniform(-scale, scale) as f32)
        }
    }

    fn seed() -> u64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
    }

    /// The scalar formula as mkdssp writes it, one distance and one quotient at a time.
    fn scalar_energy(h: [f32; 3], n: [f32; 3], c: [f32; 3], o: [f32; 3]) -> f64 {
        let (d_ho, d_hc, d_nc, d_no) = (distance(h, o), distance(h, c), distance(n, c), distance(n, o));
        let e = if d_ho < MIN_DISTANCE || d_hc < MIN_DISTANCE || d_nc < MIN_DISTANCE || d_no < MIN_DISTANCE {
            MIN_HBOND_ENERGY
        } else {
            COUPLING / f64::from(d_ho) - COUPLING / f64::from(d_hc) + COUPLING / f64::from(d_nc)
                - COUPLING / f64::from(d_no)
        };
        let e = (e * 1000.0).round() / 1000.0;
        if e < MIN_HBOND_ENERGY { MIN_HBOND_ENERGY } else { e }
    }

    #[test]
    fn vector_energy_and_its_screen_equal_the_scalar_formula() {
        let s = seed();
        let mut rng = Mix(s);
        let (mut bonds, mut near) = (0, 0);
        for _ in 0..200_000 {
            // A donor N-H near the origin and an acceptor C=O within a few Angstrom: bonds, near
            // misses, coincident atoms and everything between.
            let n = rng.point(0.2);
            let h = [n[0] + 1.0, n[1], n[2]];
            let o = rng.point(4.0);
            let dir = rng.point(1.0);
            let c = [o[0] + 1.23 * dir[0], o[1] + 1.23 * dir[1], o[2] + 1.23 * dir[2]];
            let want = scalar_energy(h, n, c, o);
            assert_eq!(
                hbond_energy(h, n, c, o).to_bits(),
                want.to_bits(),
                "seed {s}: {h:?} {n:?} {c:?} {o:?}"
            );
            let screened = hbond_energy_if_bond(h, n, c, o);
            if want < MAX_HBOND_ENERGY {
                bonds += 1;
                assert_eq!(screened, Some(want), "seed {s}");
            } else {
                if want < MAX_HBOND_ENERGY + 0.05 {
                    near += 1;
                }
                assert_eq!(screened, None, "seed {s}");
            }
        }
        assert!(
            bonds > 1000 && near > 100,
            "seed {s}: {bonds} bonds, {near} near misses"
        );
    }

    #[test]
    fn rounding_equals_the_library_round() {
        let s = seed();
        let mut rng = Mix(s);
        let halves = [
            0.5,
            -0.5,
            1.5,
            -2.5,
            1234.5,
            -0.49999999999999994,
            4.5e15,
            -7.0e15,
            0.0,
            -0.0,
        ];
        for x in halves
            .into_iter()
            .chain((0..100_000).map(|_| rng.uniform(-3.0e5, 3.0e5)))
        {
            assert_eq!(round_half_away(x).to_bits(), x.round().to_bits(), "seed {s}: {x}");
        }
        assert!(round_half_away(f64::NAN).is_nan());
    }

    #[test]
    fn two_best_acceptors_do_not_depend_on_the_order_offered() {
        let s = seed();
        let mut rng = Mix(s);
        for _ in 0..2000 {
            // Few distinct energies, so that ties are common.
            let k = 1 + (rng.next() % 12) as usize;
            let offers: Vec<(u32, f64)> = (0..k)
                .map(|j| {
                    (
                        j as u32 * 3,
                        -0.001 * (rng.next() % 8) as f64 - 0.5 * (rng.next() % 2) as f64,
                    )
                })
                .collect();
            // mkdssp: ascending acceptors, a strictly lower energy displaces.
            let mut want = Acceptors::new();
            for &(j, e) in &offers {
                if e < want.energy[0] {
                    want.index[1] = want.index[0];
                    want.energy[1] = want.energy[0];
                    want.index[0] = j;
                    want.energy[0] = e;
                } else if e < want.energy[1] {
                    want.index[1] = j;
                    want.energy[1] = e;
                }
            }
            let mut shuffled = offers.clone();
            for i in (1..shuffled.len()).rev() {
                shuffled.swap(i, (rng.next() % (i as u64 + 1)) as usize);
            }
            let mut got = Acceptors::new();
            for &(j, e) in &shuffled {
                got.offer(j, e);
            }
            assert_eq!(
                (got.index, got.energy),
                (want.index, want.energy),
                "seed {s}: {offers:?}"
            );
        }
    }

    #[test]
    fn dihedral_of_known_geometry() {
        let d = dihedral_degrees([1.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 1.0, 1.0]);
        assert!((d.abs() - 90.0).abs() < 1e-4, "{d}");
        let t = dihedral_degrees([1.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [-1.0, 1.0, 0.0]);
        assert!((t.abs() - 180.0).abs() < 1e-4, "{t}");
        assert_eq!(dihedral_degrees([0.0; 3], [0.0; 3], [0.0; 3], [0.0; 3]), 360.0);
    }
}
