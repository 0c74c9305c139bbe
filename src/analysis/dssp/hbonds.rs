//! The hydrogen-bond search: acceptors kept per donor, the CA cell list, and the donor loop in f32x8 lanes (AVX2 where the CPU has it), with the exact double-precision energies of the candidates.

use super::*;

/// The two lowest-energy acceptors of a donor (mkdssp keeps exactly two), where they are hydrogen
/// bonds. mkdssp keeps the two lowest energies whatever their value, but only those below
/// [`MAX_HBOND_ENERGY`] count as bonds, and every bond has a lower energy than every non-bond: the
/// bonds among its two are the (at most) two lowest bonds, so offering only bonds gives the same
/// bonds.
#[derive(Clone, Copy, Debug)]
pub(super) struct Acceptors {
    pub(super) index: [u32; 2],
    pub(super) energy: [f64; 2],
}

/// No acceptor (in the place of an acceptor's index).
pub(super) const NO_ACCEPTOR: u32 = u32::MAX;

impl Acceptors {
    pub(super) fn new() -> Acceptors {
        Acceptors {
            index: [NO_ACCEPTOR; 2],
            energy: [0.0; 2],
        }
    }

    /// Keeps the two lowest (energy, index) pairs among negative energies. mkdssp offers acceptors in
    /// ascending index and a strictly lower energy displaces the best, else the second (slots start
    /// at energy 0): that keeps exactly these two pairs (an equal energy from a later, higher index
    /// never displaces), so here the acceptors may come in any order.
    pub(super) fn offer(&mut self, j: u32, e: f64) {
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
pub(super) struct CellList {
    pub(super) origin: [f32; 3],
    pub(super) cell: f32,
    pub(super) dims: [usize; 3],
    /// `starts[c]..starts[c + 1]` index the items of cell `c`.
    pub(super) starts: Vec<u32>,
    /// The residue of each item, ascending within each cell.
    pub(super) items: Vec<u32>,
    /// The cell of each residue.
    pub(super) cell_of: Vec<u32>,
    /// The item of each residue (written by the task that places it).
    pub(super) item_of: Vec<AtomicU32>,
    /// The next free place in each cell while items are placed.
    pub(super) fill: Vec<u32>,
    /// Per item, in item order: CA x, y, z (read in sequence, eight at a time, by
    /// [`CellList::near_mask`]), then eight infinitely far points.
    pub(super) item_xyz: [Vec<f32>; 3],
    /// Per item: the acceptor's C x, y, z and O x, y, z.
    pub(super) item_acceptor: Vec<[f32; 6]>,
    /// Per item: the donor's H and N, and whether it is a proline (never a donor).
    pub(super) item_donor: Vec<([f32; 3], [f32; 3], bool)>,
    /// Per item: its cell.
    pub(super) item_cell: Vec<u32>,
    /// Per item: its residue (as `items`), then eight entries that match no residue.
    pub(super) item_residue: Vec<i32>,
}

impl CellList {
    /// Bins the CA atoms of `res` on the rayon pool: the cells are split into one range per thread;
    /// each range counts and places the residues that fall in it (a counting sort whose ranges
    /// write disjoint parts of `starts` and `items`).
    pub(super) fn build(&mut self, res: &Residues, part_counts: &mut Vec<usize>) {
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
    pub(super) fn rows_around(&self, cell: usize) -> [(u32, u32); 9] {
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
    pub(super) fn near_mask<L: Lanes8>(
        &self,
        start: usize,
        end: usize,
        [px, py, pz]: [L; 3],
        limit: L,
        skip: [i32; 2],
    ) -> u32 {
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
pub(super) fn lane_distances<L: Lanes8>(p: [f32; 3], [x, y, z]: [L; 3]) -> L {
    let (dx, dy, dz) = (L::splat(p[0]) - x, L::splat(p[1]) - y, L::splat(p[2]) - z);
    (dx * dx + dy * dy + dz * dz).sqrt()
}

/// Eight values of `column` from `start` as one vector (a plain load: no copy through memory).
#[inline(always)]
pub(super) fn lanes<L: Lanes8>(column: &[f32], start: usize) -> Option<L> {
    column.get(start..).and_then(|s| s.first_chunk::<8>()).map(L::load)
}

/// Eight single-precision lanes of the hydrogen-bond search, in two builds: `wide::f32x8` (on
/// the baseline x86-64 target two SSE halves) and [`Avx8`] (one AVX2 register), chosen at run
/// time by [`donor_bonds`]. Every lane is the IEEE operation written (no fused multiply-add), so
/// both give the same bits.
pub(super) trait Lanes8:
    Copy + Add<Output = Self> + Sub<Output = Self> + Mul<Output = Self> + Div<Output = Self>
{
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
pub(super) struct Avx8(std::arch::x86_64::__m256);

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
pub(super) struct AcceptorBatch {
    pub(super) len: usize,
    pub(super) item: [usize; 8],
    pub(super) xyz: [[f32; 8]; 6],
}

impl AcceptorBatch {
    pub(super) fn new() -> AcceptorBatch {
        AcceptorBatch {
            len: 0,
            item: [0; 8],
            xyz: [[0.0; 8]; 6],
        }
    }

    /// The acceptors of items `near` (at most eight) of `cells` into the lanes.
    #[inline(always)]
    pub(super) fn load(&mut self, cells: &CellList, near: &[u32]) {
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
    pub(super) fn screen<L: Lanes8>(&self, h: [f32; 3], n: [f32; 3]) -> u32 {
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
    pub(super) fn offer_bonds<L: Lanes8>(
        &self,
        cells: &CellList,
        ca_d: [f32; 3],
        [h, n]: [[f32; 3]; 2],
        acc: &mut Acceptors,
    ) {
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
pub(super) fn has_avx2() -> bool {
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
pub(super) struct Donor {
    /// Its CA.
    pub(super) ca: [f32; 3],
    /// Its amide H and N.
    pub(super) hn: [[f32; 3]; 2],
    /// Its own residue and the one before it: not acceptors of this donor.
    pub(super) skip: [usize; 2],
    /// Where the CA-CA squared distance is at or above this, the pair is not tested.
    pub(super) r2_max: f32,
}

/// The (at most two) bonded acceptors of `donor` among the items of `rows` (the rows of cells
/// around its own): the AVX2 build where `avx2` (from [`has_avx2`]), else the baseline one.
pub(super) fn donor_bonds(avx2: bool, cells: &CellList, rows: &[(u32, u32); 9], donor: &Donor) -> [u32; 2] {
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
pub(super) unsafe fn donor_bonds_avx2(cells: &CellList, rows: &[(u32, u32); 9], donor: &Donor) -> [u32; 2] {
    donor_bonds_any::<Avx8>(cells, rows, donor)
}

/// The body of [`donor_bonds`] in the lanes `L`: the CA scan, each row of cells eight items at a
/// time, then the candidates' screen eight at a time and the exact energies of those it keeps.
/// No closures: everything here is inlined into the build that calls it.
#[inline(always)]
pub(super) fn donor_bonds_any<L: Lanes8>(cells: &CellList, rows: &[(u32, u32); 9], donor: &Donor) -> [u32; 2] {
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
    pub(super) fn screen_avx2(&self, h: [f32; 3], n: [f32; 3]) -> Option<u32> {
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
