//! The assignment passes after the hydrogen-bond search: bridges and ladders, helices (3-10, alpha, pi), turns, bends and polyproline II, and the codes per residue.

use super::*;

/// A ladder: its bridges (i, j) run from i = `ends[0]` to `ends[1]` with j ascending from
/// `ends[2]` to `ends[3]` (parallel ladders pair j with i in order, antiparallel ones in reverse),
/// with gaps where ladders were joined across bulges; `bridges` counts them (0: joined into another).
#[derive(Clone, Copy, Debug)]
pub(super) struct Ladder {
    pub(super) parallel: bool,
    pub(super) ends: [u32; 4],
    pub(super) bridges: u32,
}

/// `out[k]` = how many `k' <= k` have `flag(k')`, for `k < m`: counted per chunk on the rayon pool,
/// the chunk totals summed in order, then each chunk written from its base.
pub(super) fn running_count(
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
    pub(super) fn gather(
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
    pub(super) fn compact_and_link(
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

    pub(super) fn len(&self) -> usize {
        self.source.len()
    }

    /// True when residues `a` and `b` (a <= b) are in one chain with no break between them.
    pub(super) fn connected(&self, a: usize, b: usize) -> bool {
        match (self.segment.get(a), self.segment.get(b)) {
            (Some(sa), Some(sb)) => b >= a && sa == sb,
            _ => false,
        }
    }

    /// The bonded acceptors of every donor (in residue order into `out`), from residue pairs with
    /// CA-CA below the cutoff. Donors are taken in cell order on the rayon pool (neighbouring
    /// donors read the same cells), into `by_item`.
    pub(super) fn hbonds(&self, cells: &CellList, by_item: &mut Vec<[u32; 2]>, out: &mut Vec<[u32; 2]>) {
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
    pub(super) fn bridge(&self, bond: &impl Fn(usize, usize) -> bool, i: usize, j: usize) -> Option<bool> {
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

    pub(super) fn assign_bridges(
        &self,
        acc: &[[u32; 2]],
        bond: &(impl Fn(usize, usize) -> bool + Sync),
        ss: &mut [SecondaryStructure],
    ) {
        let hits = self.bridge_hits(acc, bond);
        ladders_into(&|a, b| self.connected(a, b), &hits, ss);
    }

    /// The bridges (i, j, parallel) with i < j, in (i, j) order.
    pub(super) fn bridge_hits(
        &self,
        acc: &[[u32; 2]],
        bond: &(impl Fn(usize, usize) -> bool + Sync),
    ) -> Vec<(u32, u32, bool)> {
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
    pub(super) fn turns_into(&self, bond: &(impl Fn(usize, usize) -> bool + Sync), turns: &mut Vec<u8>) {
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
    pub(super) fn atom(&self, r: usize, a: usize) -> [f32; 3] {
        let column = match a {
            0 => &self.n,
            1 => &self.ca,
            2 => &self.c,
            _ => &self.o,
        };
        column.get(r).copied().unwrap_or([f32::NAN; 3])
    }

    /// Residue i has a kappa angle: i-2..=i+2 in one chain.
    pub(super) fn has_kappa(&self, i: usize) -> bool {
        i >= 2 && i + 2 < self.len() && self.connected(i - 2, i + 2)
    }

    /// Residue i has phi and psi: i-1..=i+1 in one chain (the end residues have angles 0, outside
    /// the polyproline II region).
    pub(super) fn has_phi_psi(&self, i: usize) -> bool {
        i > 0 && i + 1 < self.len() && self.connected(i - 1, i) && self.connected(i, i + 1)
    }

    /// The CA kappa angle at residue i (between CA(i-2)->CA(i) and CA(i)->CA(i+2)) above 70 degrees.
    pub(super) fn bend(&self, i: usize) -> bool {
        self.has_kappa(i) && {
            let [a, b, c] = kappa_points(|r, a| self.atom(r, a), i);
            kappa_above_70(a, b, c)
        }
    }

    /// Whether residue i's phi and psi lie in the polyproline II region.
    pub(super) fn in_polyproline_region(&self, i: usize) -> bool {
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
pub(super) fn ladders_into(
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
pub(super) fn kappa_points(at: impl Fn(usize, usize) -> [f32; 3], i: usize) -> [[f32; 3]; 3] {
    [at(i - 2, 1), at(i, 1), at(i + 2, 1)]
}

/// The four points of phi, then of psi, of residue `i` (at least 1), from `at` as in
/// [`kappa_points`].
pub(super) fn phi_psi_points(at: impl Fn(usize, usize) -> [f32; 3], i: usize) -> [[[f32; 3]; 4]; 2] {
    [
        [at(i - 1, 2), at(i, 0), at(i, 1), at(i, 2)],
        [at(i, 0), at(i, 1), at(i, 2), at(i + 1, 0)],
    ]
}

/// The phi and psi ranges of the polyproline II region (mkdssp 4: -75 and 145 degrees, +- 29).
pub(super) fn polyproline_ranges() -> [AngleRange; 2] {
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
pub(super) fn helices_and_polyproline(
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
