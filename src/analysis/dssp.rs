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
//! `kernels/dssp.cu`): this module gathers their input ([`ProteinBackbone::gather_columns`]), finishes
//! the codes from their per-residue flags and bridge partners ([`ProteinBackbone::finish_from_device`]:
//! ladders, then helices, turns, bends and polyproline II in one pass) and computes those flags with
//! its own passes ([`ProteinBackbone::device_passes_on_cpu`], the reference the device is held to).
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

impl ProteinBackbone {
    /// The residues with atoms named N, CA, C and O (indices into [`ProteinBackbone::residues`],
    /// ascending), into `out`: those the device passes take (the others are coil and break their
    /// chain, as in [`ProteinBackbone::assign_into`]).
    pub fn complete_residues(&self, out: &mut Vec<u32>) {
        out.clear();
        out.par_extend(
            self.residues
                .par_iter()
                .enumerate()
                .with_min_len(4096)
                .filter(|(_, r)| r.n.is_some() && r.ca.is_some() && r.c.is_some() && r.o.is_some())
                .map(|(k, _)| k as u32),
        );
    }

    /// A hash of the residues (atom indices, chains, prolines), on the rayon pool: equal for the
    /// same backbone, so the per-structure arrays of the device path are made once.
    pub fn fingerprint(&self) -> u64 {
        let mix = |mut z: u64| {
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        let atom = |a: Option<u32>| a.map_or(u64::MAX, u64::from);
        let sum = self
            .residues
            .par_iter()
            .enumerate()
            .with_min_len(4096)
            .map(|(k, r)| {
                let mut h = mix(k as u64 ^ 0x9e37_79b9_7f4a_7c15);
                for x in [
                    r.residue as u64,
                    atom(r.n),
                    atom(r.ca),
                    atom(r.c),
                    atom(r.o),
                    atom(r.h),
                    u64::from(r.chain) << 1 | u64::from(r.proline),
                ] {
                    h = mix(h ^ x);
                }
                h
            })
            .reduce(|| 0, u64::wrapping_add);
        mix(sum ^ self.residues.len() as u64)
    }

    /// Per residue of `source`, as the device reads it: the chain ordinal in bits 0-30, bit 31 set
    /// for proline.
    pub fn device_meta(&self, source: &[u32], out: &mut Vec<u32>) {
        source
            .par_iter()
            .with_min_len(4096)
            .map(|&k| {
                self.residues
                    .get(k as usize)
                    .map_or(0, |r| (r.chain & 0x7fff_ffff) | if r.proline { 1 << 31 } else { 0 })
            })
            .collect_into_vec(out);
    }

    /// The sines and cosines of the polyproline II ranges' ends as the device takes them: phi's low
    /// end (sin, cos), its high end, then psi's.
    pub fn device_ranges() -> [f32; 8] {
        let [phi, psi] = polyproline_ranges();
        [
            phi.lo_sin_cos.0,
            phi.lo_sin_cos.1,
            phi.hi_sin_cos.0,
            phi.hi_sin_cos.1,
            psi.lo_sin_cos.0,
            psi.lo_sin_cos.1,
            psi.hi_sin_cos.0,
            psi.hi_sin_cos.1,
        ]
    }

    /// N, CA, C and O of the residues `source` (from [`ProteinBackbone::complete_residues`]) from
    /// `positions_angstrom` into `out` (12 floats per residue, on the rayon pool), and the lowest
    /// and highest CA coordinates. `None` where one of those atoms is out of range or not finite
    /// (such frames take [`ProteinBackbone::assign_into`], which drops those residues too), or
    /// where `out` is too short.
    pub fn gather_columns(
        &self,
        positions_angstrom: &[[f32; 3]],
        source: &[u32],
        out: &mut [f32],
    ) -> Option<[[f32; 3]; 2]> {
        let m = source.len();
        let out = out.get_mut(..12 * m)?;
        let step = chunk_len(m);
        let at = |i: Option<u32>| finite_position(positions_angstrom, i);
        let bounds: Vec<Option<[[f32; 3]; 2]>> = source
            .par_chunks(step)
            .zip(out.par_chunks_mut(12 * step))
            .map(|(rs, cols)| {
                let mut bounds = EMPTY_BOUNDS;
                for (&k, col) in rs.iter().zip(cols.chunks_exact_mut(12)) {
                    let r = self.residues.get(k as usize)?;
                    let atoms = [at(r.n)?, at(r.ca)?, at(r.c)?, at(r.o)?];
                    for (dst, src) in col.chunks_exact_mut(3).zip(atoms) {
                        dst.copy_from_slice(&src);
                    }
                    bounds = union_bounds(bounds, [atoms[1], atoms[1]]);
                }
                Some(bounds)
            })
            .collect();
        bounds
            .into_iter()
            .try_fold(EMPTY_BOUNDS, |a, b| Some(union_bounds(a, b?)))
    }

    /// The codes of one frame from the device passes' results (every residue usable: the frames
    /// [`ProteinBackbone::gather_columns`] accepts), into `out`: ladders from the bridges, helices,
    /// turns and bends from the flags, then polyproline II, deciding the unsure angles as
    /// [`ProteinBackbone::assign_into`] does. The codes equal that function's for the same frame
    /// and options (without [`DsspOptions::file_hydrogens`], which the device does not take).
    /// Times: the ladders under bridges, the rest (helices, turns, bends, polyproline II, in one
    /// pass) under helices.
    pub fn finish_from_device(
        &self,
        device: &DeviceDssp<'_>,
        options: &DsspOptions,
        workspace: &mut DsspWorkspace,
        out: &mut Vec<SecondaryStructure>,
    ) {
        use device_flags as f;
        let ws = workspace;
        let mut clock = PassClock::start();
        ws.times = DsspPassTimes::default();
        let m = device
            .source
            .len()
            .min(device.flags.len())
            .min(device.columns.len() / 12);
        let chunk = chunk_len(m);
        let flags = device.flags.get(..m).unwrap_or(&[]);
        let columns = device.columns;
        // Residues a <= b are connected when no break comes after a up to b: the ladders ask this of
        // consecutive ladders' first residues (gaps summing to at most m) and of spans of joined
        // ladders, so scanning the flags costs less than a running count of the breaks.
        let connected = |a: usize, b: usize| {
            b >= a
                && b < m
                && flags
                    .get(a + 1..=b)
                    .is_some_and(|span| span.iter().all(|&x| x & f::BREAK == 0))
        };
        ws.ss.clear();
        ws.ss.resize(m, SecondaryStructure::Coil);
        ws.hits.clear();
        ws.hits.extend(
            device
                .hits
                .iter()
                .map(|&[i, j]| (i, j & !f::PARALLEL, j & f::PARALLEL != 0)),
        );
        ladders_into(&connected, &ws.hits, &mut ws.ss);
        ws.times.bridges_ms = clock.lap();
        let atom = |r: usize, a: usize| -> [f32; 3] {
            let at = 12 * r + 3 * a;
            match columns.get(at..at + 3) {
                Some(&[x, y, z]) => [x, y, z],
                _ => [f32::NAN; 3],
            }
        };
        let bend = |i: usize| match flags.get(i) {
            Some(&b) if b & f::BEND != 0 => true,
            Some(&b) if b & f::BEND_UNSURE != 0 && i >= 2 => {
                let [a, b, c] = kappa_points(atom, i);
                kappa_above_70(a, b, c)
            }
            _ => false,
        };
        let [phi_range, psi_range] = polyproline_ranges();
        let region = |i: usize| match flags.get(i) {
            Some(&b) if b & f::POLYPROLINE != 0 => true,
            Some(&b) if b & f::POLYPROLINE_UNSURE != 0 && i >= 1 => {
                let [phi, psi] = phi_psi_points(atom, i);
                phi_range.contains_dihedral(phi) && psi_range.contains_dihedral(psi)
            }
            _ => false,
        };
        let stretch = Some(options.pp_min_stretch).filter(|&s| s == 2 || s == 3);
        out.clear();
        if m == self.residues.len() {
            // Every residue used: `source` is the identity.
            out.resize(m, SecondaryStructure::Coil);
            helices_and_polyproline(m, chunk, flags, &bend, stretch, &region, &ws.ss, out);
        } else {
            let codes = &mut ws.scratch;
            codes.clear();
            codes.resize(m, SecondaryStructure::Coil);
            helices_and_polyproline(m, chunk, flags, &bend, stretch, &region, &ws.ss, codes);
            out.resize(self.residues.len(), SecondaryStructure::Coil);
            for (&r, &s) in device.source.iter().zip(codes.iter()) {
                if let Some(o) = out.get_mut(r as usize) {
                    *o = s;
                }
            }
        }
        ws.times.helices_ms = clock.lap();
        ws.times.output_ms = clock.lap();
    }

    /// What the device passes write for one frame, computed on the CPU by the CPU path's own passes
    /// (the reference the device is held to, byte for byte): the flags of every residue and the
    /// bridges, for the residues of [`ProteinBackbone::complete_residues`]. `None` where one of their
    /// atoms is not finite (as [`ProteinBackbone::gather_columns`]).
    pub fn device_passes_on_cpu(&self, positions_angstrom: &[[f32; 3]]) -> Option<DevicePasses> {
        use device_flags as f;
        let mut ws = DsspWorkspace::default();
        let options = DsspOptions {
            file_hydrogens: false,
            ..DsspOptions::default()
        };
        ws.res.gather(self, positions_angstrom, &options, &mut ws.chunk_counts);
        let res = &ws.res;
        let m = res.len();
        let mut complete = Vec::new();
        self.complete_residues(&mut complete);
        if m != complete.len() {
            return None;
        }
        if m == 0 {
            return Some((Vec::new(), Vec::new()));
        }
        ws.cells.build(res, &mut ws.chunk_counts);
        res.hbonds(&ws.cells, &mut ws.by_item, &mut ws.acc);
        let acc = &ws.acc;
        let bond = |donor: usize, acceptor: usize| -> bool {
            acc.get(donor)
                .is_some_and(|a| a.contains(&u32::try_from(acceptor).unwrap_or(NO_ACCEPTOR)))
        };
        let hits = res
            .bridge_hits(acc, &bond)
            .into_iter()
            .map(|(i, j, parallel)| [i, j | if parallel { f::PARALLEL } else { 0 }])
            .collect();
        let mut turns = Vec::new();
        res.turns_into(&bond, &mut turns);
        let [phi_range, psi_range] = polyproline_ranges();
        let at = |r: usize, a: usize| res.atom(r, a);
        let flags = turns
            .par_iter()
            .enumerate()
            .map(|(i, &turn)| {
                // The turns' bits are the flags' first three.
                let mut b = turn & (f::TURN3 | f::TURN4 | f::TURN5);
                if i > 0 && !res.connected(i - 1, i) {
                    b |= f::BREAK;
                }
                if res.has_kappa(i) {
                    let [p, q, r] = kappa_points(at, i);
                    b |= match kappa_cosine_decides(kappa_cosine(p, q, r)) {
                        Some(true) => f::BEND,
                        Some(false) => 0,
                        None => f::BEND_UNSURE,
                    };
                }
                if res.has_phi_psi(i) {
                    let [phi, psi] = phi_psi_points(at, i);
                    b |= match (phi_range.decide_dihedral(phi), psi_range.decide_dihedral(psi)) {
                        (Ok(true), Ok(true)) => f::POLYPROLINE,
                        (Ok(false), _) | (_, Ok(false)) => 0,
                        _ => f::POLYPROLINE_UNSURE,
                    };
                }
                b
            })
            .collect();
        Some((flags, hits))
    }
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

/// No acceptor (in the place of an acceptor's index).
const NO_ACCEPTOR: u32 = u32::MAX;

impl Acceptors {
    fn new() -> Acceptors {
        Acceptors {
            index: [NO_ACCEPTOR; 2],
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
}

/// Residues binned by CA position into cubic cells at least [`CA_CUTOFF`] wide, rebuilt per frame
/// into the buffers of the previous one.
#[derive(Default)]
struct CellList {
    origin: [f32; 3],
    cell: f32,
    dims: [usize; 3],
    /// `starts[c]..starts[c + 1]` index the items of cell `c`.
    starts: Vec<u32>,
    /// The residue of each item, ascending within each cell.
    items: Vec<u32>,
    /// The cell of each residue.
    cell_of: Vec<u32>,
    /// The item of each residue (written by the task that places it).
    item_of: Vec<AtomicU32>,
    /// The next free place in each cell while items are placed.
    fill: Vec<u32>,
    /// Per item, in item order: CA x, y, z (read in sequence, eight at a time, by
    /// [`CellList::near_mask`]), then eight infinitely far points.
    item_xyz: [Vec<f32>; 3],
    /// Per item: the acceptor's C x, y, z and O x, y, z.
    item_acceptor: Vec<[f32; 6]>,
    /// Per item: the donor's H and N, and whether it is a proline (never a donor).
    item_donor: Vec<([f32; 3], [f32; 3], bool)>,
    /// Per item: its cell.
    item_cell: Vec<u32>,
    /// Per item: its residue (as `items`), then eight entries that match no residue.
    item_residue: Vec<i32>,
}

impl CellList {
    /// Bins the CA atoms of `res` on the rayon pool: the cells are split into one range per thread;
    /// each range counts and places the residues that fall in it (a counting sort whose ranges
    /// write disjoint parts of `starts` and `items`).
    fn build(&mut self, res: &Residues, part_counts: &mut Vec<usize>) {
        let step = res.chunk;
        let points = &res.ca;
        let (lo, hi) = res.ca_bounds.unwrap_or_else(|| {
            points
                .par_chunks(step)
                .map(|chunk| {
                    chunk
                        .iter()
                        .fold(([f32::INFINITY; 3], [f32::NEG_INFINITY; 3]), |(lo, hi), p| {
                            ([0, 1, 2].map(|k| lo[k].min(p[k])), [0, 1, 2].map(|k| hi[k].max(p[k])))
                        })
                })
                .reduce(
                    || ([f32::INFINITY; 3], [f32::NEG_INFINITY; 3]),
                    |(a, b), (c, d)| ([0, 1, 2].map(|k| a[k].min(c[k])), [0, 1, 2].map(|k| b[k].max(d[k]))),
                )
        });
        let (lo, hi) = if points.is_empty() {
            ([0.0; 3], [0.0; 3])
        } else {
            (lo, hi)
        };
        // Cells of at least the cutoff; coarser when the points are spread so thinly that the
        // lattice would hold many more cells than points.
        let extent = [hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]];
        let max_cells = (points.len() * 2).max(27) as f64;
        let mut cell = CA_CUTOFF;
        let count = |cell: f32| -> [usize; 3] { extent.map(|e| ((e / cell) as usize).saturating_add(1)) };
        loop {
            let d = count(cell);
            if (d[0] as f64) * (d[1] as f64) * (d[2] as f64) <= max_cells || !cell.is_finite() {
                break;
            }
            cell *= 1.5;
        }
        let dims = count(cell);
        let total = dims[0].saturating_mul(dims[1]).saturating_mul(dims[2]).max(1);
        let index_of = |p: &[f32; 3]| -> u32 {
            let c = [0, 1, 2].map(|k| (((p[k] - lo[k]) / cell) as usize).min(dims[k].saturating_sub(1)));
            ((c[2] * dims[1] + c[1]) * dims[0] + c[0]) as u32
        };
        points
            .par_iter()
            .with_min_len(step)
            .map(index_of)
            .collect_into_vec(&mut self.cell_of);
        let cell_of = &self.cell_of;

        // Counts per cell, each range of cells scanning all residues.
        let parts = rayon::current_num_threads().clamp(1, total);
        let part_len = total.div_ceil(parts);
        self.starts.resize(total + 1, 0);
        let (counts, last) = self.starts.split_at_mut(total);
        counts
            .par_chunks_mut(part_len)
            .enumerate()
            .map(|(p, counts)| {
                counts.fill(0);
                let first = p * part_len;
                for &c in cell_of {
                    if let Some(n) = (c as usize).checked_sub(first).and_then(|r| counts.get_mut(r)) {
                        *n += 1;
                    }
                }
                counts.iter().map(|&n| n as usize).sum::<usize>()
            })
            .collect_into_vec(part_counts);
        // Each range's items follow those of the ranges before it.
        let mut base = 0usize;
        for n in part_counts.iter_mut() {
            let here = *n;
            *n = base;
            base += here;
        }
        if let Some(end) = last.first_mut() {
            *end = base as u32;
        }
        self.items.resize(points.len(), 0);
        self.fill.resize(total, 0);
        let mut pieces: Vec<&mut [u32]> = Vec::with_capacity(parts);
        let mut rest = self.items.as_mut_slice();
        for p in 0..part_counts.len() {
            let next = part_counts.get(p + 1).copied().unwrap_or(base);
            let here = next.saturating_sub(part_counts.get(p).copied().unwrap_or(base));
            let (piece, tail) = rest.split_at_mut(here.min(rest.len()));
            pieces.push(piece);
            rest = tail;
        }
        self.item_of.resize_with(points.len(), || AtomicU32::new(0));
        let item_of = &self.item_of;
        counts
            .par_chunks_mut(part_len)
            .zip(self.fill.par_chunks_mut(part_len))
            .zip(pieces)
            .zip(part_counts.par_iter())
            .enumerate()
            .for_each(|(p, (((starts, fill), items), &base))| {
                // Counts to starts (absolute), then each residue at its cell's next place.
                let mut at = base as u32;
                for s in starts.iter_mut() {
                    let n = *s;
                    *s = at;
                    at += n;
                }
                let first = p * part_len;
                for (f, &s) in fill.iter_mut().zip(starts.iter()) {
                    *f = s - base as u32;
                }
                for (i, &c) in cell_of.iter().enumerate() {
                    if let Some(f) = (c as usize).checked_sub(first).and_then(|r| fill.get_mut(r))
                        && let Some(slot) = items.get_mut(*f as usize)
                    {
                        *slot = i as u32;
                        if let Some(k) = item_of.get(i) {
                            k.store(base as u32 + *f, Ordering::Relaxed);
                        }
                        *f += 1;
                    }
                }
            });
        // Each item's CA, acceptor and donor atoms and its cell, in item order: one pass.
        let len = self.items.len();
        for column in &mut self.item_xyz {
            column.resize(len + 8, 0.0);
            // Eight far points after the last, so that every item starts a whole vector.
            if let Some(tail) = column.get_mut(len..) {
                tail.fill(f32::INFINITY);
            }
        }
        self.item_acceptor.resize(len, [0.0; 6]);
        self.item_donor.resize(len, ([0.0; 3], [0.0; 3], true));
        self.item_cell.resize(len, 0);
        self.item_residue.resize(len + 8, 0);
        if let Some(tail) = self.item_residue.get_mut(len..) {
            tail.fill(i32::MIN);
        }
        let [xs, ys, zs] = &mut self.item_xyz;
        self.items
            .par_chunks(step)
            .zip(xs.par_chunks_mut(step))
            .zip(ys.par_chunks_mut(step))
            .zip(zs.par_chunks_mut(step))
            .zip(self.item_acceptor.par_chunks_mut(step))
            .zip(self.item_donor.par_chunks_mut(step))
            .zip(self.item_cell.par_chunks_mut(step))
            .zip(self.item_residue.par_chunks_mut(step))
            .for_each(|(((((((items, xs), ys), zs), acceptors), donors), cells), residues)| {
                for (((((((&i, x), y), z), acceptor), donor), cell), residue) in items
                    .iter()
                    .zip(xs.iter_mut())
                    .zip(ys.iter_mut())
                    .zip(zs.iter_mut())
                    .zip(acceptors.iter_mut())
                    .zip(donors.iter_mut())
                    .zip(cells.iter_mut())
                    .zip(residues.iter_mut())
                {
                    *residue = i32::try_from(i).unwrap_or(i32::MIN);
                    let i = i as usize;
                    [*x, *y, *z] = res.ca.get(i).copied().unwrap_or([f32::NAN; 3]);
                    *acceptor = match (res.c.get(i), res.o.get(i)) {
                        (Some(c), Some(o)) => [c[0], c[1], c[2], o[0], o[1], o[2]],
                        _ => [f32::NAN; 6],
                    };
                    *donor = match (res.h.get(i), res.n.get(i), res.proline.get(i)) {
                        (Some(&h), Some(&n), Some(&pro)) => (h, n, pro),
                        _ => ([f32::NAN; 3], [f32::NAN; 3], true),
                    };
                    *cell = cell_of.get(i).copied().unwrap_or(0);
                }
            });
        self.origin = lo;
        self.cell = cell;
        self.dims = dims;
    }

    /// The item range of each row of cells around cell `cell` (its own and the 26 neighbours; up to
    /// nine rows, the rest empty): the three cells of a row along x are adjacent in the item order,
    /// so each row is one contiguous run.
    fn rows_around(&self, cell: usize) -> [(u32, u32); 9] {
        let mut rows = [(0u32, 0u32); 9];
        let [nx, ny, nz] = self.dims.map(|d| d as i64);
        let cell = cell as i64;
        let c = [
            cell % nx.max(1),
            (cell / nx.max(1)) % ny.max(1),
            cell / (nx * ny).max(1),
        ];
        let x0 = (c[0] - 1).max(0);
        let x1 = (c[0] + 1).min(nx - 1);
        if x0 > x1 {
            return rows;
        }
        let mut slots = rows.iter_mut();
        for z in (c[2] - 1).max(0)..=(c[2] + 1).min(nz - 1) {
            for y in (c[1] - 1).max(0)..=(c[1] + 1).min(ny - 1) {
                let row = ((z * ny + y) * nx) as usize;
                if let (Some(&a), Some(&b), Some(slot)) = (
                    self.starts.get(row + x0 as usize),
                    self.starts.get(row + x1 as usize + 1),
                    slots.next(),
                ) {
                    *slot = (a, b);
                }
            }
        }
        rows
    }

    /// Which of the eight items from `start` (those before `end`) have a CA whose squared
    /// distance `(p - q)^2` from `p` (`px`, `py`, `pz` in every lane; summed x, y, z in single
    /// precision) is below `limit`, and are not the residues `skip`: bit `l` for item `start + l`.
    #[inline(always)]
    fn near_mask<L: Lanes8>(&self, start: usize, end: usize, [px, py, pz]: [L; 3], limit: L, skip: [i32; 2]) -> u32 {
        let [xs, ys, zs] = &self.item_xyz;
        let (Some(cx), Some(cy), Some(cz)) = (lanes::<L>(xs, start), lanes::<L>(ys, start), lanes::<L>(zs, start))
        else {
            return 0;
        };
        let (dx, dy, dz) = (px - cx, py - cy, pz - cz);
        let left = end.saturating_sub(start);
        let valid = if left >= 8 { 0xff } else { (1u32 << left) - 1 };
        let skipped = self
            .item_residue
            .get(start..)
            .and_then(|s| s.first_chunk::<8>())
            .map_or(0xff, |r| L::equal_either_mask(r, skip));
        (dx * dx + dy * dy + dz * dz).lt_mask(limit) & valid & !skipped
    }
}

/// The distances from `p` to the eight points `[x, y, z]` (single precision, as [`distance`]).
/// (A function, not a closure, so that it is inlined into the AVX2 build.)
#[inline(always)]
fn lane_distances<L: Lanes8>(p: [f32; 3], [x, y, z]: [L; 3]) -> L {
    let (dx, dy, dz) = (L::splat(p[0]) - x, L::splat(p[1]) - y, L::splat(p[2]) - z);
    (dx * dx + dy * dy + dz * dz).sqrt()
}

/// Eight values of `column` from `start` as one vector (a plain load: no copy through memory).
#[inline(always)]
fn lanes<L: Lanes8>(column: &[f32], start: usize) -> Option<L> {
    column.get(start..).and_then(|s| s.first_chunk::<8>()).map(L::load)
}

/// Eight single-precision lanes of the hydrogen-bond search, in two builds: `wide::f32x8` (on
/// the baseline x86-64 target two SSE halves) and [`Avx8`] (one AVX2 register), chosen at run
/// time by [`donor_bonds`]. Every lane is the IEEE operation written (no fused multiply-add), so
/// both give the same bits.
trait Lanes8: Copy + Add<Output = Self> + Sub<Output = Self> + Mul<Output = Self> + Div<Output = Self> {
    fn splat(x: f32) -> Self;
    fn load(a: &[f32; 8]) -> Self;
    fn sqrt(self) -> Self;
    /// Bit `l` set where lane `l` of `self` is below that of `o` (false for NaN).
    fn lt_mask(self, o: Self) -> u32;
    /// Bit `l` set where `r[l]` equals either value of `skip`.
    fn equal_either_mask(r: &[i32; 8], skip: [i32; 2]) -> u32;
    /// Appends `first + l` for every bit `l` of `mask` (below 256) to `list[..*count]` (`*count`
    /// at most 8), without a branch per bit.
    #[inline(always)]
    fn append_set_lanes(list: &mut [u32; 16], count: &mut usize, first: u32, mask: u32) {
        for l in 0..8 {
            if let Some(slot) = list.get_mut(*count) {
                *slot = first + l;
            }
            *count += ((mask >> l) & 1) as usize;
        }
    }
}

impl Lanes8 for f32x8 {
    #[inline(always)]
    fn splat(x: f32) -> f32x8 {
        f32x8::splat(x)
    }
    #[inline(always)]
    fn load(a: &[f32; 8]) -> f32x8 {
        f32x8::from(*a)
    }
    #[inline(always)]
    fn sqrt(self) -> f32x8 {
        f32x8::sqrt(self)
    }
    #[inline(always)]
    fn lt_mask(self, o: f32x8) -> u32 {
        self.cmp_lt(o).move_mask() as u32
    }
    #[inline(always)]
    fn equal_either_mask(r: &[i32; 8], skip: [i32; 2]) -> u32 {
        let r = i32x8::from(*r);
        (r.cmp_eq(i32x8::splat(skip[0])) | r.cmp_eq(i32x8::splat(skip[1]))).move_mask() as u32
    }
}

/// Eight lanes in one AVX2 register. Built only inside `#[target_feature(enable = "avx2")]`
/// functions ([`donor_bonds_avx2`], and a unit test's twin of it), which run only where the CPU
/// has AVX2: every intrinsic below relies on that.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
struct Avx8(std::arch::x86_64::__m256);

#[cfg(target_arch = "x86_64")]
mod avx8 {
    use super::{Avx8, Lanes8};
    use std::arch::x86_64::*;
    use std::ops::{Add, Div, Mul, Sub};

    macro_rules! lanewise {
        ($tr:ident, $f:ident, $intrinsic:ident) => {
            impl $tr for Avx8 {
                type Output = Avx8;
                #[inline(always)]
                fn $f(self, o: Avx8) -> Avx8 {
                    // SAFETY: an `Avx8` exists only where the CPU has AVX2 (see its docs).
                    Avx8(unsafe { $intrinsic(self.0, o.0) })
                }
            }
        };
    }
    lanewise!(Add, add, _mm256_add_ps);
    lanewise!(Sub, sub, _mm256_sub_ps);
    lanewise!(Mul, mul, _mm256_mul_ps);
    lanewise!(Div, div, _mm256_div_ps);

    // SAFETY (every block below): these run only inside AVX2 functions (see `Avx8`'s docs); the
    // loads read exactly the eight values of the array they are given.
    impl Lanes8 for Avx8 {
        #[inline(always)]
        fn splat(x: f32) -> Avx8 {
            Avx8(unsafe { _mm256_set1_ps(x) })
        }
        #[inline(always)]
        fn load(a: &[f32; 8]) -> Avx8 {
            Avx8(unsafe { _mm256_loadu_ps(a.as_ptr()) })
        }
        #[inline(always)]
        fn sqrt(self) -> Avx8 {
            Avx8(unsafe { _mm256_sqrt_ps(self.0) })
        }
        #[inline(always)]
        fn lt_mask(self, o: Avx8) -> u32 {
            unsafe { _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_LT_OQ>(self.0, o.0)) as u32 }
        }
        #[inline(always)]
        fn equal_either_mask(r: &[i32; 8], skip: [i32; 2]) -> u32 {
            unsafe {
                let r = _mm256_loadu_si256(r.as_ptr().cast());
                let eq = _mm256_or_si256(
                    _mm256_cmpeq_epi32(r, _mm256_set1_epi32(skip[0])),
                    _mm256_cmpeq_epi32(r, _mm256_set1_epi32(skip[1])),
                );
                _mm256_movemask_ps(_mm256_castsi256_ps(eq)) as u32
            }
        }
        #[inline(always)]
        fn append_set_lanes(list: &mut [u32; 16], count: &mut usize, first: u32, mask: u32) {
            let (Some(order), Some(dst)) = (SET_LANES.get(mask as usize), list.get_mut(*count..*count + 8)) else {
                return;
            };
            unsafe {
                // The lanes of the set bits first, plus `first`, stored at `list[*count..]` (in
                // bounds: `dst` has eight values).
                let lanes = _mm256_cvtepu8_epi32(_mm_loadl_epi64(order.as_ptr().cast()));
                let items = _mm256_add_epi32(lanes, _mm256_set1_epi32(first as i32));
                _mm256_storeu_si256(dst.as_mut_ptr().cast(), items);
            }
            *count += mask.count_ones() as usize;
        }
    }

    /// For each 8-bit mask: the indices of its set bits in ascending order, then zeros.
    static SET_LANES: [[u8; 8]; 256] = {
        let mut table = [[0u8; 8]; 256];
        let mut mask = 0;
        while mask < 256 {
            let (mut l, mut k) = (0, 0);
            while l < 8 {
                if mask & (1 << l) != 0 {
                    table[mask][k] = l as u8;
                    k += 1;
                }
                l += 1;
            }
            mask += 1;
        }
        table
    };
}

/// Up to eight candidate acceptors of one donor, screened together: the single-precision energy
/// estimate of `hbond_energy_if_bond` in eight lanes (the same IEEE operations per lane), then
/// the exact checks for the lanes that pass.
struct AcceptorBatch {
    len: usize,
    item: [usize; 8],
    xyz: [[f32; 8]; 6],
}

impl AcceptorBatch {
    fn new() -> AcceptorBatch {
        AcceptorBatch {
            len: 0,
            item: [0; 8],
            xyz: [[0.0; 8]; 6],
        }
    }

    /// The acceptors of items `near` (at most eight) of `cells` into the lanes.
    #[inline(always)]
    fn load(&mut self, cells: &CellList, near: &[u32]) {
        self.len = near.len().min(8);
        for (lane, &k) in near.iter().take(8).enumerate() {
            let k = k as usize;
            let atoms = cells.item_acceptor.get(k).copied().unwrap_or([f32::NAN; 6]);
            if let Some(slot) = self.item.get_mut(lane) {
                *slot = k;
            }
            for (dst, src) in self.xyz.iter_mut().zip(atoms) {
                if let Some(d) = dst.get_mut(lane) {
                    *d = src;
                }
            }
        }
    }

    /// Which lanes may bond with donor N-H: any distance below [`MIN_DISTANCE`] or an estimate
    /// below [`MAX_HBOND_ENERGY`] + 0.01 (as in `hbond_energy_if_bond`, whose error is below
    /// 1e-4 kcal/mol).
    #[inline(always)]
    fn screen<L: Lanes8>(&self, h: [f32; 3], n: [f32; 3]) -> u32 {
        // Each column loaded in place (no copy of the whole batch).
        let [c_x, c_y, c_z, o_x, o_y, o_z] = &self.xyz;
        let (c_x, c_y, c_z) = (L::load(c_x), L::load(c_y), L::load(c_z));
        let (o_x, o_y, o_z) = (L::load(o_x), L::load(o_y), L::load(o_z));
        let d_ho = lane_distances(h, [o_x, o_y, o_z]);
        let d_hc = lane_distances(h, [c_x, c_y, c_z]);
        let d_nc = lane_distances(n, [c_x, c_y, c_z]);
        let d_no = lane_distances(n, [o_x, o_y, o_z]);
        let min_d = L::splat(MIN_DISTANCE);
        let near = d_ho.lt_mask(min_d) | d_hc.lt_mask(min_d) | d_nc.lt_mask(min_d) | d_no.lt_mask(min_d);
        let q = L::splat(COUPLING as f32);
        let estimate = q / d_ho - q / d_hc + q / d_nc - q / d_no;
        let pass = near | estimate.lt_mask(L::splat((MAX_HBOND_ENERGY + 0.01) as f32));
        let lanes = if self.len >= 8 { 0xff } else { (1u32 << self.len) - 1 };
        pass & lanes
    }

    /// Offers the bonds of a donor (N-H, CA at `ca_d`) among the lanes to `acc`.
    #[inline(always)]
    fn offer_bonds<L: Lanes8>(&self, cells: &CellList, ca_d: [f32; 3], [h, n]: [[f32; 3]; 2], acc: &mut Acceptors) {
        let mut mask = self.screen::<L>(h, n);
        while mask != 0 {
            let lane = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            let at = |v: usize| self.xyz.get(v).and_then(|x| x.get(lane)).copied().unwrap_or(f32::NAN);
            let k = self.item.get(lane).copied().unwrap_or(usize::MAX);
            let ca = |d: usize| {
                cells
                    .item_xyz
                    .get(d)
                    .and_then(|x| x.get(k))
                    .copied()
                    .unwrap_or(f32::NAN)
            };
            let (c, o) = ([at(0), at(1), at(2)], [at(3), at(4), at(5)]);
            if let Some(&j) = cells.items.get(k)
                && distance(ca_d, [ca(0), ca(1), ca(2)]) < CA_CUTOFF
            {
                let e = energy_from_distances(bond_distances(h, n, c, o));
                if e < MAX_HBOND_ENERGY {
                    acc.offer(j, e);
                }
            }
        }
    }
}

/// Whether the CPU runs the AVX2 build of the search ([`donor_bonds`]).
fn has_avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// One donor of the hydrogen-bond search.
struct Donor {
    /// Its CA.
    ca: [f32; 3],
    /// Its amide H and N.
    hn: [[f32; 3]; 2],
    /// Its own residue and the one before it: not acceptors of this donor.
    skip: [usize; 2],
    /// Where the CA-CA squared distance is at or above this, the pair is not tested.
    r2_max: f32,
}

/// The (at most two) bonded acceptors of `donor` among the items of `rows` (the rows of cells
/// around its own): the AVX2 build where `avx2` (from [`has_avx2`]), else the baseline one.
fn donor_bonds(avx2: bool, cells: &CellList, rows: &[(u32, u32); 9], donor: &Donor) -> [u32; 2] {
    #[cfg(target_arch = "x86_64")]
    if avx2 {
        // SAFETY: `avx2` comes from `has_avx2`: the CPU supports AVX2.
        return unsafe { donor_bonds_avx2(cells, rows, donor) };
    }
    let _ = avx2;
    donor_bonds_any::<f32x8>(cells, rows, donor)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn donor_bonds_avx2(cells: &CellList, rows: &[(u32, u32); 9], donor: &Donor) -> [u32; 2] {
    donor_bonds_any::<Avx8>(cells, rows, donor)
}

/// The body of [`donor_bonds`] in the lanes `L`: the CA scan, each row of cells eight items at a
/// time, then the candidates' screen eight at a time and the exact energies of those it keeps.
/// No closures: everything here is inlined into the build that calls it.
#[inline(always)]
fn donor_bonds_any<L: Lanes8>(cells: &CellList, rows: &[(u32, u32); 9], donor: &Donor) -> [u32; 2] {
    let &Donor {
        ca: ca_d,
        hn,
        skip,
        r2_max,
    } = donor;
    let mut acc = Acceptors::new();
    let mut batch = AcceptorBatch::new();
    // Candidates (item indices), screened eight at a time; up to seven wait for the next ones.
    let mut near = [0u32; 16];
    let mut count = 0;
    // The pair (d-1, d) is evaluated only with d-1 as donor.
    let skip = skip.map(|r| i32::try_from(r).unwrap_or(i32::MIN + 1));
    let p = [L::splat(ca_d[0]), L::splat(ca_d[1]), L::splat(ca_d[2])];
    let limit = L::splat(r2_max);
    for &(a, b) in rows {
        let (mut start, end) = (a as usize, b as usize);
        while start < end {
            let mask = cells.near_mask(start, end, p, limit, skip);
            L::append_set_lanes(&mut near, &mut count, start as u32, mask);
            if count >= 8 {
                if let Some(first) = near.first_chunk::<8>() {
                    batch.load(cells, first);
                    batch.offer_bonds::<L>(cells, ca_d, hn, &mut acc);
                }
                near.copy_within(8.., 0);
                count -= 8;
            }
            start += 8;
        }
    }
    if let Some(rest) = near.get(..count)
        && !rest.is_empty()
    {
        batch.load(cells, rest);
        batch.offer_bonds::<L>(cells, ca_d, hn, &mut acc);
    }
    acc.index
}

#[cfg(test)]
impl AcceptorBatch {
    /// [`AcceptorBatch::screen`] as the AVX2 build of the search runs it, where the CPU has AVX2.
    fn screen_avx2(&self, h: [f32; 3], n: [f32; 3]) -> Option<u32> {
        #[cfg(target_arch = "x86_64")]
        if has_avx2() {
            #[target_feature(enable = "avx2")]
            unsafe fn run(batch: &AcceptorBatch, h: [f32; 3], n: [f32; 3]) -> u32 {
                batch.screen::<Avx8>(h, n)
            }
            // SAFETY: the CPU supports AVX2, checked just above.
            return Some(unsafe { run(self, h, n) });
        }
        None
    }
}

/// A ladder: its bridges (i, j) run from i = `ends[0]` to `ends[1]` with j ascending from
/// `ends[2]` to `ends[3]` (parallel ladders pair j with i in order, antiparallel ones in reverse),
/// with gaps where ladders were joined across bulges; `bridges` counts them (0: joined into another).
#[derive(Clone, Copy, Debug)]
struct Ladder {
    parallel: bool,
    ends: [u32; 4],
    bridges: u32,
}

/// `out[k]` = how many `k' <= k` have `flag(k')`, for `k < m`: counted per chunk on the rayon pool,
/// the chunk totals summed in order, then each chunk written from its base.
fn running_count(
    m: usize,
    step: usize,
    flag: impl Fn(usize) -> bool + Sync,
    counts: &mut Vec<usize>,
    out: &mut Vec<u32>,
) {
    (0..m.div_ceil(step))
        .into_par_iter()
        .map(|c| (c * step..((c + 1) * step).min(m)).filter(|&k| flag(k)).count())
        .collect_into_vec(counts);
    let mut base = 0usize;
    for n in counts.iter_mut() {
        let here = *n;
        *n = base;
        base += here;
    }
    out.resize(m, 0);
    out.par_chunks_mut(step)
        .zip(counts.par_iter())
        .enumerate()
        .for_each(|(c, (out, &base))| {
            let mut running = base as u32;
            for (t, o) in out.iter_mut().enumerate() {
                running += u32::from(flag(c * step + t));
                *o = running;
            }
        });
}

impl Residues {
    /// The usable residues of `backbone` in `positions` and their columns, on the rayon pool
    /// (chunks of residues, each writing its own part of every column). When every residue is
    /// usable (the usual case), one sweep over the residues writes their atoms, amide hydrogens,
    /// proline flags and each chunk's own count of chain breaks, and a second adds the chunks'
    /// bases to the counts; else the usable residues are compacted and the rest follows from them.
    fn gather(
        &mut self,
        backbone: &ProteinBackbone,
        positions: &[[f32; 3]],
        options: &DsspOptions,
        counts: &mut Vec<usize>,
    ) {
        let at = |i: Option<u32>| finite_position(positions, i);
        let residues = &backbone.residues;
        let len = residues.len();
        let step = chunk_len(len);
        self.chunk = step;
        for column in [&mut self.n, &mut self.ca, &mut self.c, &mut self.o, &mut self.h] {
            column.resize(len, [0.0; 3]);
        }
        self.source.resize(len, 0);
        self.proline.resize(len, false);
        self.segment.resize(len, 0);
        let file_hydrogens = options.file_hydrogens;
        // Per chunk: its chain breaks ([`INCOMPLETE`] when a residue of it is not usable) and the
        // bounds of its CA atoms.
        residues
            .par_chunks(step)
            .zip(self.n.par_chunks_mut(step))
            .zip(self.ca.par_chunks_mut(step))
            .zip(self.c.par_chunks_mut(step))
            .zip(self.o.par_chunks_mut(step))
            .zip(self.h.par_chunks_mut(step))
            .zip(self.proline.par_chunks_mut(step))
            .zip(self.segment.par_chunks_mut(step))
            .zip(self.source.par_chunks_mut(step))
            .enumerate()
            .map(|(chunk, ((((((((rs, n), ca), c), o), h), pro), seg), source))| {
                let first = chunk * step;
                // The chain, C and O of the residue before this one (for the chunk's first
                // residue, read from the positions: when every residue is usable it is the
                // previous one in the list, as mkdssp takes it).
                let mut prev = first
                    .checked_sub(1)
                    .and_then(|p| residues.get(p))
                    .and_then(|r| Some((r.chain, at(r.c)?, at(r.o)?)));
                let (mut breaks, mut complete, mut bounds) = (0u32, true, EMPTY_BOUNDS);
                for (k, ((((((((r, n), ca), c), o), h), pro), seg), source)) in rs
                    .iter()
                    .zip(n.iter_mut())
                    .zip(ca.iter_mut())
                    .zip(c.iter_mut())
                    .zip(o.iter_mut())
                    .zip(h.iter_mut())
                    .zip(pro.iter_mut())
                    .zip(seg.iter_mut())
                    .zip(source.iter_mut())
                    .enumerate()
                {
                    *source = first + k;
                    *pro = r.proline;
                    let (Some(an), Some(aca), Some(ac), Some(ao)) = (at(r.n), at(r.ca), at(r.c), at(r.o)) else {
                        complete = false;
                        prev = None;
                        let [an, aca, ac, ao] = [r.n, r.ca, r.c, r.o].map(|i| at(i).unwrap_or([f32::NAN; 3]));
                        (*n, *ca, *c, *o) = (an, aca, ac, ao);
                        continue;
                    };
                    (*n, *ca, *c, *o) = (an, aca, ac, ao);
                    bounds = union_bounds(bounds, [aca, aca]);
                    let previous = prev.filter(|_| first + k > 0);
                    if let Some((chain, pc, _)) = previous
                        && (distance(pc, an) > MAX_PEPTIDE_BOND || chain != r.chain)
                    {
                        breaks += 1;
                    }
                    *seg = breaks;
                    let file_h = if file_hydrogens { at(r.h) } else { None };
                    *h = match (file_h, previous) {
                        (Some(fh), _) => fh,
                        (None, Some((_, pc, po))) if !r.proline => amide_hydrogen(an, pc, po),
                        _ => an,
                    };
                    prev = Some((r.chain, ac, ao));
                }
                (if complete { breaks as usize } else { INCOMPLETE }, bounds)
            })
            .collect_into_vec(&mut self.chunk_summary);
        counts.clear();
        counts.extend(self.chunk_summary.iter().map(|s| s.0));
        if counts.contains(&INCOMPLETE) {
            self.ca_bounds = None;
            self.compact_and_link(backbone, at, file_hydrogens, counts);
            return;
        }
        let [lo, hi] = self
            .chunk_summary
            .iter()
            .fold(EMPTY_BOUNDS, |a, s| union_bounds(a, s.1));
        self.ca_bounds = Some((lo, hi));
        // Each chunk's breaks follow those of the chunks before it.
        let mut base = 0usize;
        for n in counts.iter_mut() {
            let here = *n;
            *n = base;
            base += here;
        }
        self.segment
            .par_chunks_mut(step)
            .zip(counts.par_iter())
            .filter(|(_, base)| **base > 0)
            .for_each(|(seg, &base)| {
                for s in seg {
                    *s += base as u32;
                }
            });
    }

    /// [`Residues::gather`] for frames with unusable residues: keeps the usable ones (a serial
    /// compaction), then their chain breaks and amide hydrogens from their neighbours in the list.
    /// `at` gives an atom's position where it is usable.
    fn compact_and_link(
        &mut self,
        backbone: &ProteinBackbone,
        at: impl Fn(Option<u32>) -> Option<[f32; 3]> + Sync,
        file_hydrogens: bool,
        counts: &mut Vec<usize>,
    ) {
        let residues = &backbone.residues;
        let len = self.source.len();
        let mut kept = 0;
        for k in 0..len {
            let usable = [&self.n, &self.ca, &self.c, &self.o]
                .iter()
                .all(|col| col.get(k).is_some_and(|p| p.iter().all(|x| x.is_finite())));
            if usable {
                for col in [&mut self.n, &mut self.ca, &mut self.c, &mut self.o] {
                    col.swap(kept, k);
                }
                self.source.swap(kept, k);
                kept += 1;
            }
        }
        for col in [&mut self.n, &mut self.ca, &mut self.c, &mut self.o] {
            col.truncate(kept);
        }
        self.source.truncate(kept);
        let m = kept;
        let source = &self.source;
        let mut running = std::mem::take(&mut self.segment);
        source
            .par_iter()
            .with_min_len(self.chunk)
            .map(|&k| residues.get(k).is_some_and(|r| r.proline))
            .collect_into_vec(&mut self.proline);
        let chain = |k: usize| source.get(k).and_then(|&s| residues.get(s)).map(|r| r.chain);
        let (n, c) = (&self.n, &self.c);
        let broken = |k: usize| {
            k > 0
                && match (c.get(k - 1), n.get(k)) {
                    (Some(&c), Some(&n)) => distance(c, n) > MAX_PEPTIDE_BOND || chain(k - 1) != chain(k),
                    _ => true,
                }
        };
        running_count(m, self.chunk, broken, counts, &mut running);
        self.segment = running;
        // mkdssp places H from the previous residue in its list whatever lies between.
        let (o, proline) = (&self.o, &self.proline);
        (0..m)
            .into_par_iter()
            .with_min_len(self.chunk)
            .map(|k| {
                let file_h = if file_hydrogens {
                    source.get(k).and_then(|&s| residues.get(s)).and_then(|r| at(r.h))
                } else {
                    None
                };
                let h = n.get(k).copied().unwrap_or([0.0; 3]);
                if let Some(fh) = file_h {
                    fh
                } else if k > 0
                    && !proline.get(k).copied().unwrap_or(true)
                    && let (Some(&pc), Some(&po)) = (c.get(k - 1), o.get(k - 1))
                {
                    amide_hydrogen(h, pc, po)
                } else {
                    h
                }
            })
            .collect_into_vec(&mut self.h);
    }

    fn len(&self) -> usize {
        self.source.len()
    }

    /// True when residues `a` and `b` (a <= b) are in one chain with no break between them.
    fn connected(&self, a: usize, b: usize) -> bool {
        match (self.segment.get(a), self.segment.get(b)) {
            (Some(sa), Some(sb)) => b >= a && sa == sb,
            _ => false,
        }
    }

    /// The bonded acceptors of every donor (in residue order into `out`), from residue pairs with
    /// CA-CA below the cutoff. Donors are taken in cell order on the rayon pool (neighbouring
    /// donors read the same cells), into `by_item`.
    fn hbonds(&self, cells: &CellList, by_item: &mut Vec<[u32; 2]>, out: &mut Vec<[u32; 2]>) {
        // Squared distances at or above this cannot pass the cutoff test (which stays the exact
        // single-precision `distance < CA_CUTOFF` of mkdssp for the few that come near it).
        let cutoff_squared = CA_CUTOFF * CA_CUTOFF * (1.0 + 1e-5);
        let [xs, ys, zs] = &cells.item_xyz;
        let avx2 = has_avx2();
        (0..cells.items.len())
            .into_par_iter()
            .with_min_len(256)
            .map_init(
                // The rows around the last donor's cell (donors come in cell order).
                || (usize::MAX, [(0u32, 0u32); 9]),
                |(rows_cell, rows), k| {
                    let none = [NO_ACCEPTOR; 2];
                    let (Some(&d), Some(&x), Some(&y), Some(&z), Some(&(h, n, pro)), Some(&cell)) = (
                        cells.items.get(k),
                        xs.get(k),
                        ys.get(k),
                        zs.get(k),
                        cells.item_donor.get(k),
                        cells.item_cell.get(k),
                    ) else {
                        return none;
                    };
                    if pro {
                        // mkdssp gives a proline donor energy 0: never a bond.
                        return none;
                    }
                    if *rows_cell != cell as usize {
                        *rows_cell = cell as usize;
                        *rows = cells.rows_around(cell as usize);
                    }
                    let donor = Donor {
                        ca: [x, y, z],
                        hn: [h, n],
                        skip: [d as usize, (d as usize).wrapping_sub(1)],
                        r2_max: cutoff_squared,
                    };
                    donor_bonds(avx2, cells, rows, &donor)
                },
            )
            .collect_into_vec(by_item);
        // Back to residue order.
        let by_item = &*by_item;
        cells
            .item_of
            .par_iter()
            .with_min_len(self.chunk)
            .map(|k| {
                by_item
                    .get(k.load(Ordering::Relaxed) as usize)
                    .copied()
                    .unwrap_or([NO_ACCEPTOR; 2])
            })
            .collect_into_vec(out);
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
        acc: &[[u32; 2]],
        bond: &(impl Fn(usize, usize) -> bool + Sync),
        ss: &mut [SecondaryStructure],
    ) {
        let hits = self.bridge_hits(acc, bond);
        ladders_into(&|a, b| self.connected(a, b), &hits, ss);
    }

    /// The bridges (i, j, parallel) with i < j, in (i, j) order.
    fn bridge_hits(&self, acc: &[[u32; 2]], bond: &(impl Fn(usize, usize) -> bool + Sync)) -> Vec<(u32, u32, bool)> {
        let m = self.len();
        // Each bridge pattern of (i, j) holds a bond donated by i or i + 1 to j or j - 1
        // (parallel: i+1 -> j or i -> j-1; antiparallel: i+1 -> j-1 or i -> j), so the partners j
        // of i are among the acceptors of i and i + 1 and the residues after them: at most eight
        // candidates per residue, found from the residue's own bonds, in (i, j) order.
        (1..m.saturating_sub(1))
            .into_par_iter()
            .with_min_len(self.chunk)
            .flat_map_iter(|i| {
                let mut js = [u32::MAX; 8];
                for (d, slot) in [i, i + 1].into_iter().zip([0usize, 4]) {
                    for (k, &a) in acc.get(d).unwrap_or(&[NO_ACCEPTOR; 2]).iter().enumerate() {
                        if a != NO_ACCEPTOR {
                            for (t, j) in [a, a.saturating_add(1)].into_iter().enumerate() {
                                if let Some(s) = js.get_mut(slot + 2 * k + t) {
                                    *s = j;
                                }
                            }
                        }
                    }
                }
                js.sort_unstable();
                let mut last = u32::MAX;
                let mut out = [(0u32, 0u32, false); 8];
                let mut len = 0;
                for &j in &js {
                    if j == u32::MAX || j == last {
                        continue;
                    }
                    last = j;
                    let ju = j as usize;
                    // Partners at least three apart, each with both neighbours.
                    if ju >= i + 3
                        && ju + 1 < m
                        && let Some(parallel) = self.bridge(bond, i, ju)
                        && let Some(o) = out.get_mut(len)
                    {
                        *o = (i as u32, j, parallel);
                        len += 1;
                    }
                }
                out.into_iter().take(len)
            })
            .collect()
    }

    /// The n-turns into `turns`: bit n - 3 of `turns[i]` set when an n-turn starts at residue i.
    fn turns_into(&self, bond: &(impl Fn(usize, usize) -> bool + Sync), turns: &mut Vec<u8>) {
        let m = self.len();
        // mkdssp's helix flags (start, middle, end of 3-, 4- and 5-turns) are read only as "an
        // n-turn starts at i" (its start and start-and-end flags): bit n - 3 of `turns[i]`, set when
        // residue i + n donates a hydrogen bond to residue i within one chain.
        (0..m)
            .into_par_iter()
            .with_min_len(self.chunk)
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
            .collect_into_vec(turns);
    }

    /// Atom `a` (0 N, 1 CA, 2 C, 3 O) of residue `r`.
    fn atom(&self, r: usize, a: usize) -> [f32; 3] {
        let column = match a {
            0 => &self.n,
            1 => &self.ca,
            2 => &self.c,
            _ => &self.o,
        };
        column.get(r).copied().unwrap_or([f32::NAN; 3])
    }

    /// Residue i has a kappa angle: i-2..=i+2 in one chain.
    fn has_kappa(&self, i: usize) -> bool {
        i >= 2 && i + 2 < self.len() && self.connected(i - 2, i + 2)
    }

    /// Residue i has phi and psi: i-1..=i+1 in one chain (the end residues have angles 0, outside
    /// the polyproline II region).
    fn has_phi_psi(&self, i: usize) -> bool {
        i > 0 && i + 1 < self.len() && self.connected(i - 1, i) && self.connected(i, i + 1)
    }

    /// The CA kappa angle at residue i (between CA(i-2)->CA(i) and CA(i)->CA(i+2)) above 70 degrees.
    fn bend(&self, i: usize) -> bool {
        self.has_kappa(i) && {
            let [a, b, c] = kappa_points(|r, a| self.atom(r, a), i);
            kappa_above_70(a, b, c)
        }
    }

    /// Whether residue i's phi and psi lie in the polyproline II region.
    fn in_polyproline_region(&self, i: usize) -> bool {
        let [phi_range, psi_range] = polyproline_ranges();
        self.has_phi_psi(i) && {
            let [phi, psi] = phi_psi_points(|r, a| self.atom(r, a), i);
            phi_range.contains_dihedral(phi) && psi_range.contains_dihedral(psi)
        }
    }
}

/// Bridges (i, j, parallel), i < j in (i, j) order, into ladders and sheets: E for ladders of two
/// or more bridges, B for lone bridges, written into `ss`. `connected(a, b)`: residues a <= b are in
/// one chain with no break between them.
fn ladders_into(
    connected: &(impl Fn(usize, usize) -> bool + Sync),
    hits: &[(u32, u32, bool)],
    ss: &mut [SecondaryStructure],
) {
    // Consecutive bridges into ladders. mkdssp gives bridge (i, j) to the ladder whose last
    // bridge is (i - 1, j - 1) (parallel) or (i - 1, j + 1) (antiparallel), of the same kind:
    // there is at most one, so a ladder is a chain of bridges that starts at a bridge without
    // such a predecessor. Starts in bridge order (mkdssp's creation order, sorted by first
    // residue), each followed on the rayon pool.
    let find = |i: Option<u32>, j: Option<u32>, parallel: bool| -> bool {
        let (Some(i), Some(j)) = (i, j) else {
            return false;
        };
        hits.binary_search_by(|h| (h.0, h.1).cmp(&(i, j)))
            .ok()
            .and_then(|k| hits.get(k))
            .is_some_and(|h| h.2 == parallel)
    };
    let next_j = |j: u32, parallel: bool| if parallel { j.checked_add(1) } else { j.checked_sub(1) };
    let previous_j = |j: u32, parallel: bool| if parallel { j.checked_sub(1) } else { j.checked_add(1) };
    let mut ladders: Vec<Ladder> = hits
        .par_iter()
        .with_min_len(256)
        .filter_map(|&(i, j, parallel)| {
            if find(i.checked_sub(1), previous_j(j, parallel), parallel) {
                return None;
            }
            let (mut last_i, mut last_j, mut bridges) = (i, j, 1);
            while let Some(nj) = next_j(last_j, parallel)
                && find(last_i.checked_add(1), Some(nj), parallel)
            {
                (last_i, last_j, bridges) = (last_i + 1, nj, bridges + 1);
            }
            // Antiparallel ladders keep j ascending.
            let (jb, je) = if parallel { (j, last_j) } else { (last_j, j) };
            Some(Ladder {
                parallel,
                ends: [i, last_i, jb, je],
                bridges,
            })
        })
        .collect();

    // Join ladders across bulges. Ladders are sorted by first residue; mkdssp compares every
    // later ladder, but those starting 6 or more past this one's end never join, so the scan
    // stops; and ladders whose first residues lie in different unbroken stretches never join,
    // so each stretch's ladders are joined on their own, on the rayon pool.
    ladders
        .par_chunk_by_mut(|a, b| connected(a.ends[0] as usize, b.ends[0] as usize))
        .for_each(|group| {
            for a in 0..group.len() {
                if group.get(a).is_none_or(|l| l.bridges == 0) {
                    continue;
                }
                for b in a + 1..group.len() {
                    let (Some(&la), Some(&lb)) = (group.get(a), group.get(b)) else {
                        break;
                    };
                    if lb.bridges == 0 {
                        continue;
                    }
                    let [ibi, iei, jbi, jei] = la.ends;
                    let [ibj, iej, jbj, jej] = lb.ends;
                    if u64::from(ibj) >= u64::from(iei) + 6 {
                        break;
                    }
                    if la.parallel != lb.parallel
                        || !connected(ibi.min(ibj) as usize, iei.max(iej) as usize)
                        || !connected(jbi.min(jbj) as usize, jei.max(jej) as usize)
                        || ibj.wrapping_sub(iei) >= 6
                        || (iei >= ibj && ibi <= iej)
                    {
                        continue;
                    }
                    let bulge = if la.parallel {
                        (jbj.wrapping_sub(jei) < 6 && ibj.wrapping_sub(iei) < 3) || jbj.wrapping_sub(jei) < 3
                    } else {
                        (jbi.wrapping_sub(jej) < 6 && ibj.wrapping_sub(iei) < 3) || jbi.wrapping_sub(jej) < 3
                    };
                    if bulge {
                        // b's bridges follow a's: i ends at b's last; j (ascending) ends at
                        // b's last when parallel, starts at b's first when antiparallel.
                        if let Some(ld) = group.get_mut(a) {
                            ld.bridges += lb.bridges;
                            ld.ends[1] = iej;
                            if ld.parallel {
                                ld.ends[3] = jej;
                            } else {
                                ld.ends[2] = jbj;
                            }
                        }
                        if let Some(other) = group.get_mut(b) {
                            other.bridges = 0;
                        }
                    }
                }
            }
        });
    for ld in ladders.iter().filter(|l| l.bridges > 0) {
        let kind = if ld.bridges > 1 {
            SecondaryStructure::Strand
        } else {
            SecondaryStructure::Bridge
        };
        let [ib, ie, jb, je] = ld.ends;
        for r in (ib..=ie).chain(jb..=je) {
            if let Some(s) = ss.get_mut(r as usize)
                && *s != SecondaryStructure::Strand
            {
                *s = kind;
            }
        }
    }
}

/// The CA atoms of the kappa angle at residue `i` (at least 2), from `at(residue, atom)` (atoms
/// 0 N, 1 CA, 2 C, 3 O).
fn kappa_points(at: impl Fn(usize, usize) -> [f32; 3], i: usize) -> [[f32; 3]; 3] {
    [at(i - 2, 1), at(i, 1), at(i + 2, 1)]
}

/// The four points of phi, then of psi, of residue `i` (at least 1), from `at` as in
/// [`kappa_points`].
fn phi_psi_points(at: impl Fn(usize, usize) -> [f32; 3], i: usize) -> [[[f32; 3]; 4]; 2] {
    [
        [at(i - 1, 2), at(i, 0), at(i, 1), at(i, 2)],
        [at(i, 0), at(i, 1), at(i, 2), at(i + 1, 0)],
    ]
}

/// The phi and psi ranges of the polyproline II region (mkdssp 4: -75 and 145 degrees, +- 29).
fn polyproline_ranges() -> [AngleRange; 2] {
    const EPSILON: f32 = 29.0;
    [
        AngleRange::new(-75.0 - EPSILON, -75.0 + EPSILON),
        AngleRange::new(145.0 - EPSILON, 145.0 + EPSILON),
    ]
}

/// Helices (H, G, I), then turns (T) and bends (S) on the remaining coil, then with `stretch` (2 or
/// 3) polyproline II (P), from the codes with the bridges (`ss`) into `out` (same length), in one
/// pass on the rayon pool. `turns[i]`: bit n - 3 set when an n-turn starts at residue i; `bend(i)`:
/// the CA kappa angle at i is above 70 degrees within one chain; `region(i)`: phi and psi of i lie
/// in the polyproline II region (asked only of residues within `stretch - 1` of a coil residue).
///
/// mkdssp's loops run over windows in order, but each window's test reads only codes that earlier
/// windows of the same loop cannot change (a G window is free of H, E and B, which G windows never
/// write; an I window of G, E and B, which I windows never write): so each loop is a per-residue
/// step from the previous loop's codes. Alpha helices override everything but take their windows
/// from the turns alone; 3-10 helices take coil; pi helices coil and alpha helix; polyproline II
/// stretches are windows of `stretch` residues in the region from i = 1 while i + 3 < m, whose coil
/// residues become P. Each task recomputes the intermediate codes of its residues and of
/// [`FUSED_HALO`] residues on either side (a code depends only on the codes within 10 residues of
/// it: 2 for 3-10 helices, 4 for pi helices, 4 for polyproline windows), so its own residues' codes
/// are those of the loops one after the other.
#[allow(clippy::too_many_arguments)]
fn helices_and_polyproline(
    m: usize,
    chunk: usize,
    turns: &[u8],
    bend: &(impl Fn(usize) -> bool + Sync),
    stretch: Option<usize>,
    region: &(impl Fn(usize) -> bool + Sync),
    ss: &[SecondaryStructure],
    out: &mut [SecondaryStructure],
) {
    use SecondaryStructure as S;
    let start = |kind: usize, i: usize| turns.get(i).is_some_and(|&t| t & (1 << kind) != 0);
    let window = |kind: usize, r: usize, free: &dyn Fn(usize) -> bool| {
        let len = kind + 3;
        (r.saturating_sub(len - 1).max(1)..=r)
            .any(|i| i + len < m && start(kind, i) && start(kind, i - 1) && (i..i + len).all(free))
    };
    out.par_chunks_mut(chunk.max(1)).enumerate().for_each(|(c, out)| {
        let a = c * chunk.max(1);
        let b = a + out.len();
        let lo = a.saturating_sub(FUSED_HALO);
        let hi = (b + FUSED_HALO).min(m);
        let local = |v: &[S], k: usize| k.checked_sub(lo).and_then(|x| v.get(x)).copied();
        let alpha: Vec<S> = (lo..hi)
            .map(|r| {
                if window(1, r, &|_| true) {
                    S::AlphaHelix
                } else {
                    ss.get(r).copied().unwrap_or_default()
                }
            })
            .collect();
        let coil = |k: usize| local(&alpha, k) == Some(S::Coil);
        let g: Vec<S> = (lo..hi)
            .map(|r| {
                if window(0, r, &coil) {
                    S::Helix310
                } else {
                    local(&alpha, r).unwrap_or_default()
                }
            })
            .collect();
        let free = |k: usize| matches!(local(&g, k), Some(S::Coil | S::AlphaHelix));
        let fin: Vec<S> = (lo..hi)
            .map(|r| {
                let mut s = if window(2, r, &free) {
                    S::PiHelix
                } else {
                    local(&g, r).unwrap_or_default()
                };
                if s == S::Coil && r >= 1 && r + 1 < m {
                    if (0..3).any(|kind| (1..kind + 3).any(|k| r >= k && start(kind, r - k))) {
                        s = S::Turn;
                    } else if bend(r) {
                        s = S::Bend;
                    }
                }
                s
            })
            .collect();
        match stretch {
            Some(st) => {
                let near_coil =
                    |i: usize| (i.saturating_sub(st - 1)..(i + st).min(m)).any(|k| local(&fin, k) == Some(S::Coil));
                let in_region: Vec<bool> = (lo..hi).map(|i| near_coil(i) && region(i)).collect();
                let inside = |k: usize| k.checked_sub(lo).and_then(|x| in_region.get(x)).copied() == Some(true);
                for (r, o) in (a..b).zip(out.iter_mut()) {
                    let s = local(&fin, r).unwrap_or_default();
                    *o = if s == S::Coil
                        && (r.saturating_sub(st - 1).max(1)..=r).any(|i| i + 3 < m && (i..i + st).all(inside))
                    {
                        S::Polyproline
                    } else {
                        s
                    };
                }
            }
            None => {
                for (r, o) in (a..b).zip(out.iter_mut()) {
                    *o = local(&fin, r).unwrap_or_default();
                }
            }
        }
    });
}

/// Residues recomputed on either side of a task's own in [`helices_and_polyproline`].
const FUSED_HALO: usize = 16;

/// The codes of `ss` as a string (one character per residue).
pub fn codes(ss: &[SecondaryStructure]) -> String {
    ss.iter().map(|s| s.code()).collect()
}

#[cfg(test)]
mod tests;
