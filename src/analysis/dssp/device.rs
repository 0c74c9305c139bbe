//! The device side of DSSP on the host: backbone columns gathered for the CUDA passes, the emulation of those passes on the CPU, and the codes finished from the device's flags and partners.

use super::*;

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
