//! Secondary structure of every protein chain in a frame, by the DSSP algorithm (Kabsch and Sander,
//! Biopolymers 22, 2577, 1983) with the rules and numerical conventions of mkdssp 4.2.
//!
//! Owns [`ProteinBackbone`] (which residues of a [`Structure`] are protein and where their N, CA, C
//! and O atoms are; found once per structure) and [`ProteinBackbone::assign`] (one
//! [`SecondaryStructure`] per protein residue for the positions of one frame). Called by
//! `orbitfield info --secondary`, the cartoon input builder ([`super::polymer`]), the benchmarks and
//! the tests; cheap enough to recompute per trajectory frame: every pass runs on the rayon pool over
//! chunks of residues (or of cells) writing their own parts of the output, into buffers kept from
//! one frame to the next ([`DsspWorkspace`]), and the codes do not depend on the thread count.
//! The hydrogen-bond search (the largest pass) runs in eight single-precision lanes, compiled
//! twice: for baseline x86-64 and for AVX2, chosen at run time (`donor_bonds`); both builds do
//! the same IEEE operations per lane, so the codes do not depend on the CPU either.
//!
//! The passes that read coordinates also run on a CUDA device (`compute::cuda::dssp`,
//! `kernels/dssp.cu`): this module gathers their input ([`ProteinBackbone::gather_columns`]), drives
//! them (`CudaEngine::dssp_frame`, in `cuda`), finishes the codes from their per-residue flags and
//! bridge partners ([`ProteinBackbone::finish_from_device`]: ladders, then helices, turns, bends and
//! polyproline II in one pass) and computes those flags with its own passes
//! ([`ProteinBackbone::device_passes_on_cpu`], the reference the device is held to).
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
use std::ops::{Add, Div, Mul, Sub};
use std::sync::atomic::{AtomicU32, Ordering};
use wide::CmpLt;
use wide::{CmpEq, f32x4, f32x8, f64x4, i32x8};

mod passes;
use passes::*;

mod hbonds;
use hbonds::*;

mod device;

mod cuda;
pub use cuda::host_pass_times;

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
    ///
    /// The buffers are those of the calling thread (kept for its next call, as the cartoon worker
    /// calls this once per frame); [`ProteinBackbone::assign_into`] takes them from the caller.
    pub fn assign(&self, positions_angstrom: &[[f32; 3]], options: &DsspOptions) -> Vec<SecondaryStructure> {
        thread_local! {
            static WORKSPACE: std::cell::RefCell<DsspWorkspace> = std::cell::RefCell::new(DsspWorkspace::default());
        }
        let mut out = Vec::new();
        WORKSPACE.with(|ws| match ws.try_borrow_mut() {
            Ok(mut ws) => self.assign_into(positions_angstrom, options, &mut ws, &mut out),
            // A call nested in this thread's own (a pool thread taking other work while it waits).
            Err(_) => self.assign_into(positions_angstrom, options, &mut DsspWorkspace::default(), &mut out),
        });
        out
    }

    /// [`ProteinBackbone::assign`] into `out`, with the buffers of `workspace` (keep one per trajectory
    /// and pass it every frame: a frame of the same size then allocates nothing large). The time of
    /// each pass is left in [`DsspWorkspace::times`].
    pub fn assign_into(
        &self,
        positions_angstrom: &[[f32; 3]],
        options: &DsspOptions,
        workspace: &mut DsspWorkspace,
        out: &mut Vec<SecondaryStructure>,
    ) {
        let ws = workspace;
        let mut clock = PassClock::start();
        ws.times = DsspPassTimes::default();
        ws.res.gather(self, positions_angstrom, options, &mut ws.chunk_counts);
        ws.times.backbone_ms = clock.lap();
        let res = &ws.res;
        let m = res.len();
        ws.ss.clear();
        ws.ss.resize(m, SecondaryStructure::Coil);
        if m > 0 {
            ws.cells.build(res, &mut ws.chunk_counts);
            ws.times.cells_ms = clock.lap();
            res.hbonds(&ws.cells, &mut ws.by_item, &mut ws.acc);
            ws.times.hbonds_ms = clock.lap();
            let acc = &ws.acc;
            let bond = |donor: usize, acceptor: usize| -> bool {
                acc.get(donor)
                    .is_some_and(|a| a.contains(&u32::try_from(acceptor).unwrap_or(NO_ACCEPTOR)))
            };
            res.assign_bridges(acc, &bond, &mut ws.ss);
            ws.times.bridges_ms = clock.lap();
            res.turns_into(&bond, &mut ws.turns);
            let stretch = Some(options.pp_min_stretch).filter(|&s| s == 2 || s == 3);
            let codes = &mut ws.scratch;
            codes.clear();
            codes.resize(m, SecondaryStructure::Coil);
            helices_and_polyproline(
                m,
                res.chunk,
                &ws.turns,
                &|i| res.bend(i),
                stretch,
                &|i| res.in_polyproline_region(i),
                &ws.ss,
                codes,
            );
            std::mem::swap(&mut ws.ss, codes);
            ws.times.helices_ms = clock.lap();
        }
        // Back to the order of the protein residues.
        out.clear();
        if m == self.residues.len() {
            // Every residue used: `source` is the identity.
            out.par_extend(ws.ss.par_iter().copied());
        } else {
            out.resize(self.residues.len(), SecondaryStructure::Coil);
            for (&r, &s) in res.source.iter().zip(&ws.ss) {
                if let Some(o) = out.get_mut(r) {
                    *o = s;
                }
            }
        }
        ws.times.output_ms = clock.lap();
    }
}

/// The per-residue flags the device passes write (`kernels/dssp.cu`, `DSSP_*`): n-turns starting
/// at the residue (bits 0-2: n = 3, 4, 5), a chain break before it, its bend and polyproline II
/// angles (each either decided or "unsure", which the host then decides as the CPU path does).
pub mod device_flags {
    pub const TURN3: u8 = 1;
    pub const TURN4: u8 = 2;
    pub const TURN5: u8 = 4;
    pub const BREAK: u8 = 8;
    pub const BEND: u8 = 16;
    pub const BEND_UNSURE: u8 = 32;
    pub const POLYPROLINE: u8 = 64;
    pub const POLYPROLINE_UNSURE: u8 = 128;
    /// Bit of a bridge partner's index set when the bridge is parallel.
    pub const PARALLEL: u32 = 1 << 31;
}

/// The flags of every residue (one byte of [`device_flags`] each) and the bridges of one frame, as
/// the device passes write them.
pub type DevicePasses = (Vec<u8>, Vec<[u32; 2]>);

/// What the device passes give for one frame (see [`device_flags`]), with the backbone columns
/// they read ([`ProteinBackbone::gather_columns`]).
#[derive(Clone, Copy, Debug)]
pub struct DeviceDssp<'a> {
    /// The residues the device passes took ([`ProteinBackbone::complete_residues`]), ascending.
    pub source: &'a [u32],
    /// N, CA, C and O of each of those residues (12 floats per residue).
    pub columns: &'a [f32],
    /// One byte of [`device_flags`] per residue.
    pub flags: &'a [u8],
    /// The bridges (i, j) with i < j in (i, j) order; [`device_flags::PARALLEL`] set in j when
    /// parallel.
    pub hits: &'a [[u32; 2]],
}

/// Wall-clock time (milliseconds) of each pass of one [`ProteinBackbone::assign_into`].
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct DsspPassTimes {
    /// The usable residues, their backbone columns, chain breaks and amide hydrogens.
    pub backbone_ms: f64,
    /// The cell list of CA positions.
    pub cells_ms: f64,
    /// The hydrogen-bond search: energies of the residue pairs near each other.
    pub hbonds_ms: f64,
    /// Bridges, ladders and sheets (E, B).
    pub bridges_ms: f64,
    /// n-turns, helices (H, G, I), turns (T), bends (S) and polyproline II (P), in one pass.
    pub helices_ms: f64,
    /// The codes back in the order of the protein residues.
    pub output_ms: f64,
}

impl DsspPassTimes {
    /// The passes' names, in the order of [`DsspPassTimes::to_array`].
    pub const NAMES: [&'static str; 6] = [
        "backbone",
        "cell list",
        "H-bond search",
        "bridges/ladders",
        "helices/turns/bends/polyproline",
        "output",
    ];

    /// The times in the order of [`DsspPassTimes::NAMES`].
    pub fn to_array(&self) -> [f64; 6] {
        [
            self.backbone_ms,
            self.cells_ms,
            self.hbonds_ms,
            self.bridges_ms,
            self.helices_ms,
            self.output_ms,
        ]
    }

    /// The inverse of [`DsspPassTimes::to_array`].
    pub fn from_array(t: [f64; 6]) -> DsspPassTimes {
        let [backbone_ms, cells_ms, hbonds_ms, bridges_ms, helices_ms, output_ms] = t;
        DsspPassTimes {
            backbone_ms,
            cells_ms,
            hbonds_ms,
            bridges_ms,
            helices_ms,
            output_ms,
        }
    }

    /// All passes together.
    pub fn total_ms(&self) -> f64 {
        self.to_array().iter().sum()
    }
}

/// Milliseconds between laps.
struct PassClock(std::time::Instant);

impl PassClock {
    fn start() -> PassClock {
        PassClock(std::time::Instant::now())
    }

    fn lap(&mut self) -> f64 {
        let now = std::time::Instant::now();
        let ms = now.duration_since(self.0).as_secs_f64() * 1e3;
        self.0 = now;
        ms
    }
}

/// The buffers of [`ProteinBackbone::assign_into`], kept from one frame to the next (the cartoon
/// worker and the benchmarks hold one), and the times of the last frame's passes.
#[derive(Default)]
pub struct DsspWorkspace {
    res: Residues,
    cells: CellList,
    /// The (at most two) bonded acceptors of each donor, [`NO_ACCEPTOR`] where there is none: in
    /// residue order, and in the cell list's item order.
    acc: Vec<[u32; 2]>,
    by_item: Vec<[u32; 2]>,
    /// Per residue: bit n - 3 set when an n-turn starts there.
    turns: Vec<u8>,
    /// The codes the helix pass writes (then swapped with `ss`, or scattered to the residues).
    scratch: Vec<SecondaryStructure>,
    ss: Vec<SecondaryStructure>,
    /// Per-chunk counts of the parallel scans.
    chunk_counts: Vec<usize>,
    /// The device path's bridges.
    hits: Vec<(u32, u32, bool)>,
    times: DsspPassTimes,
}

impl DsspWorkspace {
    /// The time of each pass of the last [`ProteinBackbone::assign_into`] with this workspace.
    pub fn times(&self) -> DsspPassTimes {
        self.times
    }
}

/// Residues per task of the per-residue passes (each task writes its own slice of the output):
/// about four tasks per thread, so that a pass is balanced over many threads, but at least 1024
/// residues, so that a task's cost outweighs handing it out.
fn chunk_len(residues: usize) -> usize {
    residues
        .div_ceil(4 * rayon::current_num_threads().max(1))
        .clamp(1024, 16384)
}

/// The residues DSSP uses (all four backbone atoms present and finite), across all chains.
#[derive(Default)]
struct Residues {
    /// Index into `ProteinBackbone::residues` of each residue here (ascending).
    source: Vec<usize>,
    n: Vec<[f32; 3]>,
    ca: Vec<[f32; 3]>,
    c: Vec<[f32; 3]>,
    o: Vec<[f32; 3]>,
    h: Vec<[f32; 3]>,
    proline: Vec<bool>,
    /// The number of chain breaks (C(i-1)-N(i) too long, or a change of chain) at or before each
    /// residue: residues `a <= b` are connected exactly when their segments are equal.
    segment: Vec<u32>,
    /// Residues per task of this frame's passes ([`chunk_len`]).
    chunk: usize,
    /// The lowest and highest CA coordinates, where the gathering pass found them.
    ca_bounds: Option<([f32; 3], [f32; 3])>,
    /// Per task of the gathering pass: its chain breaks (or [`INCOMPLETE`]) and CA bounds.
    chunk_summary: Vec<(usize, [[f32; 3]; 2])>,
}

/// A task of [`Residues::gather`] met a residue it cannot use.
const INCOMPLETE: usize = usize::MAX;

/// The lowest and highest coordinates of `a` and `b` together.
fn union_bounds(a: [[f32; 3]; 2], b: [[f32; 3]; 2]) -> [[f32; 3]; 2] {
    let [[a0, a1, a2], [a3, a4, a5]] = a;
    let [[b0, b1, b2], [b3, b4, b5]] = b;
    [
        [a0.min(b0), a1.min(b1), a2.min(b2)],
        [a3.max(b3), a4.max(b4), a5.max(b5)],
    ]
}

/// No points: bounds that any point widens.
const EMPTY_BOUNDS: [[f32; 3]; 2] = [[f32::INFINITY; 3], [f32::NEG_INFINITY; 3]];

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

/// The position of atom `i` where there is one and it is finite.
fn finite_position(positions: &[[f32; 3]], i: Option<u32>) -> Option<[f32; 3]> {
    positions
        .get(i? as usize)
        .copied()
        .filter(|p| p.iter().all(|x| x.is_finite()))
}

/// The amide hydrogen of a residue with N at `n` whose previous residue has C and O at `pc` and
/// `po`: 1 A from N along C - O (mkdssp's placement).
fn amide_hydrogen(n: [f32; 3], pc: [f32; 3], po: [f32; 3]) -> [f32; 3] {
    let d = distance(pc, po);
    [
        n[0] + (pc[0] - po[0]) / d,
        n[1] + (pc[1] - po[1]) / d,
        n[2] + (pc[2] - po[2]) / d,
    ]
}

/// The dihedral angle p1-p2-p3-p4 as a direction (u, v) (the angle is atan2(v, u)), `None` where
/// mkdssp calls it undefined.
fn dihedral_uv(p1: [f32; 3], p2: [f32; 3], p3: [f32; 3], p4: [f32; 3]) -> Option<(f32, f32)> {
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
            return Some((u, v));
        }
    }
    None
}

#[cfg(test)]
/// Dihedral angle p1-p2-p3-p4 in degrees, 360 when undefined (mkdssp's formula, single precision).
fn dihedral_degrees(p1: [f32; 3], p2: [f32; 3], p3: [f32; 3], p4: [f32; 3]) -> f32 {
    dihedral_uv(p1, p2, p3, p4).map_or(360.0, |(u, v)| v.atan2(u) * 180.0 / std::f32::consts::PI)
}

/// Whether the CA kappa angle at `b` (between a->b and b->c) is above 70 degrees, as mkdssp
/// computes it. Away from 70 degrees the cosine decides (kappa falls as it rises); near it (and
/// for a cosine rounded outside [-1, 1]) the angle is computed as mkdssp computes it.
fn kappa_above_70(a: [f32; 3], b: [f32; 3], c: [f32; 3]) -> bool {
    let ckap = kappa_cosine(a, b, c);
    kappa_cosine_decides(ckap).unwrap_or_else(|| kappa_degrees(ckap) > 70.0)
}

/// The cosine of the CA kappa angle at `b` (between a->b and b->c), 0 where undefined.
fn kappa_cosine(a: [f32; 3], b: [f32; 3], c: [f32; 3]) -> f32 {
    let v12 = sub(b, a);
    let v34 = sub(c, b);
    let x = dot(v12, v12) * dot(v34, v34);
    if x > 0.0 { dot(v12, v34) / x.sqrt() } else { 0.0 }
}

/// Whether the kappa angle of cosine `ckap` is above 70 degrees, where the cosine alone decides
/// (cos 70 degrees = 0.342020...).
fn kappa_cosine_decides(ckap: f32) -> Option<bool> {
    if (-1.0..0.341).contains(&ckap) {
        Some(true)
    } else if ckap > 0.343 {
        Some(false)
    } else {
        None
    }
}

/// mkdssp's kappa angle (degrees) from its cosine.
fn kappa_degrees(ckap: f32) -> f32 {
    let skap = (1.0 - ckap * ckap).sqrt();
    skap.atan2(ckap) * (180.0 / std::f64::consts::PI) as f32
}

/// A range of angles `lo..=hi` (degrees, less than 180 wide) and the sines and cosines of its ends.
#[derive(Clone, Copy, Debug)]
struct AngleRange {
    lo: f32,
    hi: f32,
    lo_sin_cos: (f32, f32),
    hi_sin_cos: (f32, f32),
}

impl AngleRange {
    fn new(lo: f32, hi: f32) -> AngleRange {
        AngleRange {
            lo,
            hi,
            lo_sin_cos: lo.to_radians().sin_cos(),
            hi_sin_cos: hi.to_radians().sin_cos(),
        }
    }

    /// Whether [`dihedral_degrees`] of the four points lies in the range. Away from its ends the
    /// signs of sin(angle - lo) and sin(hi - angle) decide (both positive inside); within 1e-3
    /// radians of an end the angle is computed as [`dihedral_degrees`] does.
    fn contains_dihedral(&self, points: [[f32; 3]; 4]) -> bool {
        match self.decide_dihedral(points) {
            Ok(inside) => inside,
            Err((u, v)) => (self.lo..=self.hi).contains(&(v.atan2(u) * 180.0 / std::f32::consts::PI)),
        }
    }

    /// [`AngleRange::contains_dihedral`] where the signs decide (or the angle is undefined, i.e.
    /// 360 degrees), else the direction (u, v) whose angle decides.
    fn decide_dihedral(&self, [p1, p2, p3, p4]: [[f32; 3]; 4]) -> Result<bool, (f32, f32)> {
        let Some((u, v)) = dihedral_uv(p1, p2, p3, p4) else {
            return Ok((self.lo..=self.hi).contains(&360.0));
        };
        let r = (u * u + v * v).sqrt();
        if r.is_finite() && r > 1e-20 {
            const MARGIN: f32 = 1e-3;
            let ((sl, cl), (sh, ch)) = (self.lo_sin_cos, self.hi_sin_cos);
            let after_lo = (v * cl - u * sl) / r;
            let before_hi = (u * sh - v * ch) / r;
            if after_lo > MARGIN && before_hi > MARGIN {
                return Ok(true);
            }
            if after_lo < -MARGIN || before_hi < -MARGIN {
                return Ok(false);
            }
        }
        Err((u, v))
    }
}

/// Hydrogen-bond energy (kcal/mol) of donor N-H with acceptor C=O, as mkdssp rounds and floors it
/// (the search itself screens eight pairs at a time with [`AcceptorBatch`]).
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
/// before the exact double-precision energy. ([`AcceptorBatch`] screens eight pairs at a time the
/// same way.)
#[cfg(test)]
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

/// Residues recomputed on either side of a task's own in [`helices_and_polyproline`].
const FUSED_HALO: usize = 16;

/// The codes of `ss` as a string (one character per residue).
pub fn codes(ss: &[SecondaryStructure]) -> String {
    ss.iter().map(|s| s.code()).collect()
}

#[cfg(test)]
mod tests;

/// Gives atom selections this assignment: `helix`, `sheet`, `turn`, `coil` and VMD's finer names
/// (`model::select`) select by [`atom_codes`]. Called by the viewer, the command line and the
/// Python module as they start.
pub fn use_for_selections() {
    crate::model::select::set_structure_codes(atom_codes);
}

/// Each atom's residue's DSSP code at `positions_angstrom` (mkdssp's defaults; `b'-'` for coil), 0
/// for atoms outside protein residues.
pub fn atom_codes(structure: &Structure, positions_angstrom: &[[f32; 3]]) -> Vec<u8> {
    let backbone = ProteinBackbone::new(structure);
    let ss = backbone.assign(positions_angstrom, &DsspOptions::default());
    let starts = structure.residue_starts();
    let n = structure.len();
    let mut out = vec![0u8; n];
    for (residue, s) in backbone.residues.iter().zip(&ss) {
        let begin = starts.get(residue.residue).copied().unwrap_or(n);
        let end = starts.get(residue.residue + 1).copied().unwrap_or(n);
        for code in out.iter_mut().take(end.min(n)).skip(begin) {
            *code = s.code() as u8;
        }
    }
    out
}
