//! Cartoon inputs from a structure and one frame: protein and nucleic-acid residues, cut into
//! continuous segments at chain breaks, each residue with its cartoon shape (from DSSP), colour and
//! value, ready for [`crate::surface::cartoon::build`].
//!
//! Owns [`Polymer`] (which residues are polymer and which of their atoms the cartoon uses, found once
//! per structure), [`Coloring`] and the cartoon palettes. Called by `orbitfield bench --cartoon`, the
//! benchmarks, the tests and the viewer's cartoon worker (`jobs::cartoon`). One frame's cartoon is [`Polymer::mesh`]: DSSP, segments, mesh. The
//! render device's inputs for it are [`Polymer::rings_into`] (DSSP, then [`Polymer::rings_for`]);
//! `rings_for` takes the secondary structure as given and makes no segments: protein residues go
//! straight into the device's per-residue records, with buffers kept in a [`CartoonWorkspace`].
//!
//! Protein residues are those of [`ProteinBackbone`] that have a CA; a protein chain breaks where the
//! chain (label or segment) changes, C(i)-N(i+1) exceeds 2.5 A or CA(i)-CA(i+1) exceeds 6 A (4.5 A
//! where C or N is missing; a trajectory wrapped atom by atom into its box splits residues, and the
//! CA-CA test catches a CA across the box from its own C). Nucleic-acid residues have a P or C4' atom and a nucleic residue name or a C1' atom; the
//! trace goes through P (C4' where P is missing) and breaks where consecutive trace points are more
//! than 8 A apart. A base slab runs from C1' to N1 of purines (N3 of pyrimidines), in the plane of C4.

use super::dssp::{DsspOptions, ProteinBackbone, SecondaryStructure};
use crate::compute::wgpu::cartoon_inputs::CartoonRings;
use crate::model::Structure;
use crate::model::select::is_nucleic_resname;
use crate::surface::MeshData;
use crate::surface::cartoon::{self, BaseSlab, CartoonParams, NucleicResidue, ProteinResidue, Segment, Shape};
use rayon::prelude::*;
use std::ops::Range;

pub use super::polymer_color::{
    Coloring, bfactor_color, bfactor_colors, bfactor_range, chain_color, secondary_structure_color,
};
use super::polymer_color::{GREY, hue_color, residue_color};

/// The atoms of one nucleotide the cartoon uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NucleicAtoms {
    pub residue: usize,
    pub chain: u32,
    /// P, or C4' where the residue has no P.
    pub trace: u32,
    pub c1: Option<u32>,
    /// N1 of a purine, N3 of a pyrimidine.
    pub tip: Option<u32>,
    pub c4: Option<u32>,
}

/// The polymer residues of a structure and what the cartoon needs of them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Polymer {
    pub protein: ProteinBackbone,
    pub nucleic: Vec<NucleicAtoms>,
    /// Residue-type colour per protein residue, then per nucleotide.
    protein_colors: Vec<[u8; 4]>,
    nucleic_colors: Vec<[u8; 4]>,
    /// B-factor colour of each protein residue's CA, then of each nucleotide's trace atom.
    protein_bfactor: Vec<[u8; 4]>,
    nucleic_bfactor: Vec<[u8; 4]>,
    /// The B-factors (Å²) at the ends of that colour scale: the trace atoms' 2nd and 98th
    /// percentiles over the whole structure ([`bfactor_range`]); a legend's ends.
    pub bfactor_range: [f32; 2],
}

/// One residue's cartoon attributes before they become mesh inputs.
struct Attributes {
    color: [u8; 4],
    value: f32,
}

impl Polymer {
    pub fn new(structure: &Structure) -> Polymer {
        let protein = ProteinBackbone::new(structure);
        let starts = structure.residue_starts();
        let resname = |r: usize| {
            starts
                .get(r)
                .and_then(|&a| structure.resnames.get(a))
                .map_or("", |n| n.as_str())
        };
        let protein_colors = protein
            .residues
            .iter()
            .map(|r| residue_color(resname(r.residue)))
            .collect();
        // The trace atoms' B-factors on a scale of their own (side chains and waters run hotter).
        let b_of = |atom: Option<u32>| {
            atom.and_then(|i| structure.bfactors.as_ref()?.get(i as usize).copied())
                .unwrap_or(f32::NAN)
        };
        let protein_b: Vec<f32> = protein.residues.iter().map(|r| b_of(r.ca)).collect();
        let mut nucleic = Vec::new();
        let mut nucleic_colors = Vec::new();
        let mut nucleic_b = Vec::new();
        let in_protein: std::collections::BTreeSet<usize> = protein.residues.iter().map(|r| r.residue).collect();
        let mut chain = 0u32;
        let mut last_label = None;
        for (residue, w) in starts.windows(2).enumerate() {
            let (Some(&a), Some(&b)) = (w.first(), w.get(1)) else {
                continue;
            };
            if in_protein.contains(&residue) {
                continue;
            }
            let find = |names: &[&str]| {
                (a..b).find_map(|i| {
                    let n = structure.names.get(i)?.as_str();
                    names.contains(&n).then_some(i as u32)
                })
            };
            let p = find(&["P"]);
            let c4p = find(&["C4'", "C4*"]);
            let c1 = find(&["C1'", "C1*"]);
            let Some(trace) = p.or(c4p) else { continue };
            if !is_nucleic_resname(resname(residue)) && c1.is_none() {
                continue;
            }
            let purine = find(&["N9"]).is_some();
            let tip = if purine { find(&["N1"]) } else { find(&["N3"]) };
            let label = (structure.chains.get(a).copied(), structure.segids.get(a).copied());
            if last_label.is_some_and(|l| l != label) {
                chain += 1;
            }
            last_label = Some(label);
            nucleic.push(NucleicAtoms {
                residue,
                chain,
                trace,
                c1,
                tip,
                c4: find(&["C4"]),
            });
            nucleic_colors.push(residue_color(resname(residue)));
            nucleic_b.push(b_of(Some(trace)));
        }
        let trace_b: Vec<f32> = protein_b.iter().chain(&nucleic_b).copied().collect();
        let range = bfactor_range(&trace_b);
        let on_scale = |b: &[f32]| -> Vec<[u8; 4]> {
            b.iter()
                .map(|&x| if x.is_finite() { bfactor_color(x, range) } else { GREY })
                .collect()
        };
        let (protein_bfactor, nucleic_bfactor) = (on_scale(&protein_b), on_scale(&nucleic_b));
        Polymer {
            protein,
            nucleic,
            protein_colors,
            nucleic_colors,
            protein_bfactor,
            nucleic_bfactor,
            bfactor_range: range,
        }
    }

    /// The residues whose trace atom (CA, or P/C4') `keep` accepts: the polymer of a selection.
    /// Chains stay as they were numbered, so chain colours do not change with the selection.
    pub fn restricted(&self, keep: impl Fn(u32) -> bool) -> Polymer {
        let mut out = Polymer {
            bfactor_range: self.bfactor_range,
            ..Polymer::default()
        };
        for (k, r) in self.protein.residues.iter().enumerate() {
            if r.ca.is_some_and(&keep) {
                out.protein.residues.push(*r);
                out.protein_colors
                    .push(self.protein_colors.get(k).copied().unwrap_or(GREY));
                out.protein_bfactor
                    .push(self.protein_bfactor.get(k).copied().unwrap_or(GREY));
            }
        }
        for (k, r) in self.nucleic.iter().enumerate() {
            if keep(r.trace) {
                out.nucleic.push(*r);
                out.nucleic_colors
                    .push(self.nucleic_colors.get(k).copied().unwrap_or(GREY));
                out.nucleic_bfactor
                    .push(self.nucleic_bfactor.get(k).copied().unwrap_or(GREY));
            }
        }
        out
    }

    /// Protein residues plus nucleotides.
    pub fn residue_count(&self) -> usize {
        self.protein.len() + self.nucleic.len()
    }

    pub fn is_empty(&self) -> bool {
        self.residue_count() == 0
    }

    /// Cartoon segments for one frame. `secondary` has one entry per protein residue (from
    /// [`ProteinBackbone::assign`]; missing entries count as coil); `values`, when given, one per
    /// protein residue then one per nucleotide (missing ones are 0).
    pub fn segments(
        &self,
        positions_angstrom: &[[f32; 3]],
        secondary: &[SecondaryStructure],
        coloring: Coloring,
        values: Option<&[f32]>,
    ) -> Vec<Segment> {
        // Protein: runs of residues with a CA, cut at breaks.
        let mut runs = Vec::new();
        self.protein_runs(positions_angstrom, 1, &mut runs);
        let frame = Frame {
            positions_angstrom,
            secondary,
            coloring,
            values,
        };
        let protein = per_run(&runs, |i, k, n| self.protein_residue(&frame, k, i, n));
        let mut segments: Vec<Segment> = protein.into_iter().map(Segment::Protein).collect();
        segments.extend(self.nucleic_runs(&frame).into_iter().map(Segment::Nucleic));
        segments
    }

    /// The runs of protein residues with a usable CA, cut at chain breaks, as ranges of residue
    /// indices (those of at least `min_len` residues), into `out`.
    fn protein_runs(&self, positions_angstrom: &[[f32; 3]], min_len: usize, out: &mut Vec<Range<usize>>) {
        let at = |i: Option<u32>| position(positions_angstrom, i);
        let residues = &self.protein.residues;
        run_ranges(
            residues.len(),
            min_len,
            |k| residues.get(k).and_then(|r| at(r.ca)).is_some(),
            |p, k| {
                let (Some(q), Some(r)) = (residues.get(p), residues.get(k)) else {
                    return false;
                };
                // Both tests: a trajectory wrapped atom by atom can put a residue's C beside the
                // next N while its CA is across the box.
                let ca_ca = match (at(q.ca), at(r.ca)) {
                    (Some(a), Some(b)) => distance(a, b),
                    _ => f32::INFINITY,
                };
                q.chain == r.chain
                    && match (at(q.c), at(r.n)) {
                        (Some(c), Some(n)) => distance(c, n) <= 2.5 && ca_ca <= 6.0,
                        _ => ca_ca <= 4.5,
                    }
            },
            out,
        );
    }

    /// Protein residue `k`, the `i`-th of a run of `n`, as the cartoon takes it (`None` without a
    /// usable CA).
    fn protein_residue(&self, frame: &Frame<'_>, k: usize, i: usize, n: usize) -> Option<ProteinResidue> {
        let at = |i: Option<u32>| position(frame.positions_angstrom, i);
        let r = self.protein.residues.get(k)?;
        let ss = frame.secondary.get(k).copied().unwrap_or_default();
        let a = self.attributes(
            frame.coloring,
            ss,
            r.chain,
            i,
            n,
            if frame.coloring == Coloring::BFactor {
                self.protein_bfactor.get(k)
            } else {
                self.protein_colors.get(k)
            },
            frame.value(k),
        );
        Some(ProteinResidue {
            trace: at(r.ca)?,
            guide: at(r.o),
            shape: shape_of(ss),
            color: a.color,
            value: a.value,
        })
    }

    /// The nucleic-acid runs of a frame: trace points no more than 8 A apart.
    fn nucleic_runs(&self, frame: &Frame<'_>) -> Vec<Vec<NucleicResidue>> {
        let at = |i: Option<u32>| position(frame.positions_angstrom, i);
        let coloring = frame.coloring;
        let offset = self.protein.len();
        let nucleic = &self.nucleic;
        let trace = |k: usize| nucleic.get(k).and_then(|r| at(Some(r.trace)));
        let mut runs = Vec::new();
        run_ranges(
            nucleic.len(),
            1,
            |k| trace(k).is_some(),
            |p, k| {
                nucleic.get(p).map(|r| r.chain) == nucleic.get(k).map(|r| r.chain)
                    && matches!((trace(p), trace(k)), (Some(a), Some(b)) if distance(a, b) <= 8.0)
            },
            &mut runs,
        );
        per_run(&runs, |i, k, n| {
            let r = self.nucleic.get(k)?;
            let a = self.attributes(
                coloring,
                SecondaryStructure::Coil,
                r.chain,
                i,
                n,
                if coloring == Coloring::BFactor {
                    self.nucleic_bfactor.get(k)
                } else {
                    self.nucleic_colors.get(k)
                },
                frame.value(offset + k),
            );
            let base = match (at(r.c1), at(r.tip), at(r.c4)) {
                (Some(root), Some(tip), Some(plane)) => Some(BaseSlab { root, tip, plane }),
                _ => None,
            };
            Some(NucleicResidue {
                trace: at(Some(r.trace))?,
                base,
                color: if coloring == Coloring::SecondaryStructure {
                    self.nucleic_colors.get(k).copied().unwrap_or(GREY)
                } else {
                    a.color
                },
                value: a.value,
            })
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn attributes(
        &self,
        coloring: Coloring,
        ss: SecondaryStructure,
        chain: u32,
        index_in_run: usize,
        run_length: usize,
        residue_color: Option<&[u8; 4]>,
        value: f32,
    ) -> Attributes {
        let color = match coloring {
            Coloring::SecondaryStructure => secondary_structure_color(ss),
            Coloring::Chain => chain_color(chain),
            Coloring::Residue | Coloring::BFactor => residue_color.copied().unwrap_or(GREY),
            Coloring::Index => {
                let t = index_in_run as f32 / run_length.saturating_sub(1).max(1) as f32;
                hue_color(240.0 * (1.0 - t), 0.95)
            }
            Coloring::Value => GREY,
            Coloring::Solid([r, g, b]) => [r, g, b, 255],
        };
        Attributes { color, value }
    }

    /// One frame's cartoon: DSSP of the protein residues, segments, mesh. `params.with_values` is
    /// set for [`Coloring::Value`].
    pub fn mesh(
        &self,
        positions_angstrom: &[[f32; 3]],
        coloring: Coloring,
        values: Option<&[f32]>,
        params: &CartoonParams,
    ) -> (Vec<SecondaryStructure>, MeshData) {
        let mut mesh = MeshData::default();
        let secondary = self.mesh_into(positions_angstrom, coloring, values, params, &mut mesh);
        (secondary, mesh)
    }

    /// [`Polymer::mesh`] into `mesh`, reusing its buffers (e.g. an earlier frame's mesh).
    pub fn mesh_into(
        &self,
        positions_angstrom: &[[f32; 3]],
        coloring: Coloring,
        values: Option<&[f32]>,
        params: &CartoonParams,
        mesh: &mut MeshData,
    ) -> Vec<SecondaryStructure> {
        let (secondary, segments, params) = self.frame_segments(positions_angstrom, coloring, values, params);
        cartoon::build_into(&segments, &params, mesh);
        secondary
    }

    /// As [`Polymer::mesh_into`], but the per-residue inputs of the render device's cartoon passes
    /// (`compute::wgpu::cartoon_inputs`) instead of the mesh: DSSP, then [`Polymer::rings_for`] with a
    /// fresh workspace.
    pub fn rings_into(
        &self,
        positions_angstrom: &[[f32; 3]],
        coloring: Coloring,
        values: Option<&[f32]>,
        params: &CartoonParams,
        rings: &mut CartoonRings,
    ) -> Vec<SecondaryStructure> {
        let secondary = self.protein.assign(positions_angstrom, &DsspOptions::default());
        let mut workspace = CartoonWorkspace::default();
        self.rings_for(
            positions_angstrom,
            &secondary,
            coloring,
            values,
            params,
            rings,
            &mut workspace,
        );
        secondary
    }

    /// One frame's inputs of the render device's cartoon passes from given secondary structure
    /// (`secondary` and `values` as for [`Polymer::segments`]), into `rings` and `workspace`, both
    /// kept by the caller from frame to frame: the same [`CartoonRings`] as [`Polymer::segments`]
    /// followed by [`crate::compute::wgpu::cartoon_inputs::rings_into`] (with `params.with_values` set for
    /// [`Coloring::Value`]), without making the segments: protein residues go from the structure
    /// straight into their records ([`crate::compute::wgpu::cartoon_inputs::rings_of_runs`]).
    #[allow(clippy::too_many_arguments)]
    pub fn rings_for(
        &self,
        positions_angstrom: &[[f32; 3]],
        secondary: &[SecondaryStructure],
        coloring: Coloring,
        values: Option<&[f32]>,
        params: &CartoonParams,
        rings: &mut CartoonRings,
        workspace: &mut CartoonWorkspace,
    ) {
        let params = frame_params(params, coloring);
        let frame = Frame {
            positions_angstrom,
            secondary,
            coloring,
            values,
        };
        self.protein_runs(positions_angstrom, 2, &mut workspace.protein_runs);
        let nucleic = self.nucleic_runs(&frame);
        let missing = ProteinResidue {
            trace: [f32::NAN; 3],
            guide: None,
            shape: Shape::Coil,
            color: GREY,
            value: 0.0,
        };
        crate::compute::wgpu::cartoon_inputs::rings_of_runs(
            &workspace.protein_runs,
            |k, i, n| self.protein_residue(&frame, k, i, n).unwrap_or(missing),
            &nucleic,
            &params,
            rings,
            &mut workspace.rings,
        );
    }

    /// One frame's DSSP, segments and parameters (values on for [`Coloring::Value`]).
    fn frame_segments(
        &self,
        positions_angstrom: &[[f32; 3]],
        coloring: Coloring,
        values: Option<&[f32]>,
        params: &CartoonParams,
    ) -> (Vec<SecondaryStructure>, Vec<Segment>, CartoonParams) {
        let secondary = self.protein.assign(positions_angstrom, &DsspOptions::default());
        let segments = self.segments(positions_angstrom, &secondary, coloring, values);
        (secondary, segments, frame_params(params, coloring))
    }
}

/// The parameters of a frame's cartoon: values on for [`Coloring::Value`].
fn frame_params(params: &CartoonParams, coloring: Coloring) -> CartoonParams {
    CartoonParams {
        with_values: params.with_values || coloring == Coloring::Value,
        ..*params
    }
}

/// Buffers [`Polymer::rings_for`] keeps from frame to frame; a caller holds one beside its
/// [`CartoonRings`]. What they hold between calls means nothing.
#[derive(Clone, Debug, Default)]
pub struct CartoonWorkspace {
    /// The protein runs of the last frame (ranges of protein residues).
    protein_runs: Vec<Range<usize>>,
    rings: crate::compute::wgpu::cartoon_inputs::RingsWorkspace,
}

/// One frame's inputs to the cartoon residues.
struct Frame<'a> {
    positions_angstrom: &'a [[f32; 3]],
    secondary: &'a [SecondaryStructure],
    coloring: Coloring,
    values: Option<&'a [f32]>,
}

impl Frame<'_> {
    /// The value of residue `k` (protein residues, then nucleotides); 0 where missing or not finite.
    fn value(&self, k: usize) -> f32 {
        self.values
            .and_then(|v| v.get(k))
            .copied()
            .filter(|v| v.is_finite())
            .unwrap_or(0.0)
    }
}

/// Position of atom `i`, when given and finite.
fn position(positions_angstrom: &[[f32; 3]], i: Option<u32>) -> Option<[f32; 3]> {
    positions_angstrom
        .get(i? as usize)
        .copied()
        .filter(|p| p.iter().all(|x| x.is_finite()))
}

/// `item(index in run, residue, run length)` for every residue of every run (runs on the rayon
/// pool); `None` leaves a residue out.
fn per_run<T: Send>(runs: &[Range<usize>], item: impl Fn(usize, usize, usize) -> Option<T> + Sync) -> Vec<Vec<T>> {
    runs.par_iter()
        .map(|run| {
            let n = run.len();
            run.clone().enumerate().filter_map(|(i, k)| item(i, k, n)).collect()
        })
        .collect()
}

/// Indices cut per block by [`run_ranges`].
const RUN_BLOCK: usize = 2048;

/// Indices `0..n` cut into runs, as ranges in order, into `out` (keeping only runs of at least
/// `min_len`): items that are not `usable` are left out and end a run, and a run continues from
/// `previous` to `next` only where `joined(previous, next)`. Blocks of indices are cut on the rayon
/// pool, each giving the runs that start in it (a run may end past the block).
fn run_ranges(
    n: usize,
    min_len: usize,
    usable: impl Fn(usize) -> bool + Sync,
    joined: impl Fn(usize, usize) -> bool + Sync,
    out: &mut Vec<Range<usize>>,
) {
    out.clear();
    out.par_extend((0..n.div_ceil(RUN_BLOCK)).into_par_iter().flat_map_iter(|b| {
        let end = ((b + 1) * RUN_BLOCK).min(n);
        let mut k = b * RUN_BLOCK;
        // The rest of a run that starts in an earlier block.
        while k < end && k > 0 && usable(k) && usable(k - 1) && joined(k - 1, k) {
            k += 1;
        }
        let mut found = Vec::new();
        while k < end {
            if !usable(k) {
                k += 1;
                continue;
            }
            let start = k;
            k += 1;
            while k < n && usable(k) && joined(k - 1, k) {
                k += 1;
            }
            if k - start >= min_len {
                found.push(start..k);
            }
        }
        found
    }));
}

/// The cartoon shape of a DSSP class: helices (H, G, I) as ribbons, ladder strands (E) as arrows,
/// the rest (isolated bridges included) as tube.
pub fn shape_of(s: SecondaryStructure) -> Shape {
    match s {
        SecondaryStructure::AlphaHelix | SecondaryStructure::Helix310 | SecondaryStructure::PiHelix => Shape::Helix,
        SecondaryStructure::Strand => Shape::Strand,
        _ => Shape::Coil,
    }
}

/// `copies` copies of a structure and its positions on a cubic grid `spacing_angstrom` apart, each
/// copy its own segment (`R0`, `R1`, ...): large test systems built from a real protein, for the
/// cartoon benchmarks. The copies keep atom names, residues, chains and elements; bonds are dropped.
pub fn replicate_on_grid(
    structure: &Structure,
    positions_angstrom: &[[f32; 3]],
    copies: usize,
    spacing_angstrom: f32,
) -> (Structure, Vec<[f32; 3]>) {
    let n = structure.len().min(positions_angstrom.len());
    let side = (1..).find(|s: &usize| s.saturating_pow(3) >= copies).unwrap_or(1);
    let mut out = Structure {
        title: format!("{} x {copies}", structure.title),
        ..Structure::default()
    };
    out.reserve(n * copies);
    let mut positions = Vec::with_capacity(n * copies);
    for k in 0..copies {
        let shift = [k % side, (k / side) % side, k / (side * side)].map(|c| c as f32 * spacing_angstrom);
        let segid = crate::model::Name8::from(format!("R{k}").as_str());
        for (i, p) in positions_angstrom.iter().enumerate().take(n) {
            let (Some(&element), Some(&name), Some(&resname), Some(&resid), Some(&chain)) = (
                structure.elements.get(i),
                structure.names.get(i),
                structure.resnames.get(i),
                structure.resids.get(i),
                structure.chains.get(i),
            ) else {
                continue;
            };
            out.push_atom(element, name, resname, resid, chain, segid);
            positions.push([p[0] + shift[0], p[1] + shift[1], p[2] + shift[2]]);
        }
    }
    (out, positions)
}

fn distance(a: [f32; 3], b: [f32; 3]) -> f32 {
    let d = [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
    (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hues_cover_the_wheel_and_chains_differ() {
        assert_eq!(hue_color(0.0, 1.0), [255, 0, 0, 255]);
        assert_eq!(hue_color(120.0, 1.0), [0, 255, 0, 255]);
        assert_eq!(hue_color(240.0, 1.0), [0, 0, 255, 255]);
        assert_eq!(hue_color(360.0, 1.0), [255, 0, 0, 255]);
        let chains: Vec<[u8; 4]> = (0..8).map(chain_color).collect();
        for i in 0..8 {
            for j in 0..i {
                assert_ne!(chains[i], chains[j]);
            }
        }
        assert_eq!(shape_of(SecondaryStructure::Bridge), Shape::Coil);
        assert_eq!(shape_of(SecondaryStructure::Helix310), Shape::Helix);
        assert_eq!(residue_color("DA"), residue_color("A"));
        assert_ne!(residue_color("LYS"), residue_color("ASP"));
    }

    /// The cutting [`run_ranges`] replaced: flags on the pool, then one serial pass.
    fn runs_by_flags(
        n: usize,
        usable: impl Fn(usize) -> bool,
        joined: impl Fn(usize, usize) -> bool,
    ) -> Vec<Vec<usize>> {
        let flags: Vec<u8> = (0..n)
            .map(|k| {
                if !usable(k) {
                    0
                } else if k > 0 && usable(k - 1) && joined(k - 1, k) {
                    3
                } else {
                    1
                }
            })
            .collect();
        let mut out: Vec<Vec<usize>> = Vec::new();
        for (k, &f) in flags.iter().enumerate() {
            if f & 1 == 0 {
                continue;
            }
            match out.last_mut() {
                Some(run) if f & 2 != 0 => run.push(k),
                _ => out.push(vec![k]),
            }
        }
        out
    }

    #[test]
    fn run_ranges_equal_the_runs_cut_serially() {
        let mut x = 0x2545_f491_u32;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x
        };
        for trial in 0..60 {
            // Sizes around the block size, usable and joined at random (long runs across blocks
            // where breaks are rare).
            let n = [0, 1, 2, RUN_BLOCK - 1, RUN_BLOCK, RUN_BLOCK + 1, 3 * RUN_BLOCK + 17][trial % 7]
                + (next() % 3) as usize * (trial / 7);
            let (p_out, p_break) = ([0, 2, 50][trial % 3], [0, 1, 5, 300][trial % 4]);
            let usable: Vec<bool> = (0..n).map(|_| next() % 1000 >= p_out).collect();
            let joined: Vec<bool> = (0..n).map(|_| next() % 1000 >= p_break).collect();
            let u = |k: usize| usable[k];
            let j = |_: usize, k: usize| joined[k];
            let want = runs_by_flags(n, u, j);
            for min_len in [1, 2] {
                // Into a buffer that holds a run already: cleared first.
                let mut got = vec![0..1, 5..9];
                run_ranges(n, min_len, u, j, &mut got);
                let want: Vec<Range<usize>> = want
                    .iter()
                    .filter(|r| r.len() >= min_len)
                    .map(|r| {
                        assert!(r.windows(2).all(|w| w[1] == w[0] + 1));
                        r[0]..r[r.len() - 1] + 1
                    })
                    .collect();
                assert_eq!(got, want, "trial {trial}, n {n}, min_len {min_len}");
            }
        }
    }

    #[test]
    fn replicas_are_separate_chains_on_a_grid() {
        let mut s = Structure::default();
        for name in ["N", "CA", "C", "O"] {
            s.push_atom(
                crate::model::Element::from_symbol(&name[..1]).unwrap_or_default(),
                name.into(),
                "ALA".into(),
                1,
                "A".into(),
                "".into(),
            );
        }
        let p = vec![[0.0f32, 0.0, 0.0], [1.4, 0.0, 0.0], [2.0, 1.2, 0.0], [1.6, 2.3, 0.0]];
        let (big, q) = replicate_on_grid(&s, &p, 9, 50.0);
        assert_eq!(big.len(), 36);
        assert_eq!(q.len(), 36);
        assert_eq!(big.residue_count(), 9);
        // Copy 8 sits at grid cell (2, 2, 0) of a 3 x 3 x 3 grid.
        assert_eq!(q[32], [100.0, 100.0, 0.0]);
        let backbone = ProteinBackbone::new(&big);
        assert_eq!(backbone.len(), 9);
        assert_eq!(backbone.residues[8].chain, 8);
    }
}
