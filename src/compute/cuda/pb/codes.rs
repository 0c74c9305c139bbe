//! The levels' coefficients readied for a solve, and the finest level's coded form
//! (`kernels/pb_codes.cu`).
//!
//! A map of the molecular surface holds few distinct values: `eps_in`, `eps_out` and the harmonic
//! means APBS's smoothing forms from them, and kbar^2 is 0 or `eps_out kappa^2`
//! (`compute::pb::prep::{dielectric_values, kbar2_values}` list them, exactly). When the lists fit a
//! byte, `pb_encode` replaces each finest point's four float64 coefficients by their indices in one
//! 32-bit word, and the passes over the finest level read the word and the table: the float64
//! residual (`pb_residual64_c`, 4 bytes of coefficients per point instead of 32), the iterations'
//! operator fused with the search direction's update (`pb_apply_pc`, instead of 16 bytes and a pass of
//! its own) and the first coarsening (`pb_coarsen_*_c`). The table's values are the maps' values, so
//! these passes compute what the float arrays would give. A value not in the lists (a map from
//! another rule) is counted by the device; the first residual reads the count and, if it is not zero,
//! the solve goes back to the float arrays before any iteration uses the codes.
//!
//! Owns [`Codes`] and `CudaPbSolver::{prepare_levels, checked_codes}`.

use super::raw::{self, Addr, raw_args};
use super::{CudaPbSolver, Preconditioner, cfg1, cfg3, drv};
use crate::compute::pb::prep::{dielectric_values, kbar2_values};
use crate::compute::pb::{PbError, PbParams};
use cudarc::driver::{CudaSlice, PushKernelArg};

/// Entries of each half of a table (the dielectrics, then kbar^2): one byte of index.
const TABLE_HALF: usize = 256;

/// The finest level's coded coefficients and what the coded passes need beside them.
pub(super) struct Codes {
    cx: CudaSlice<u32>,
    tab64: CudaSlice<f64>,
    tab32: CudaSlice<f32>,
    /// The second search direction: the fused pass writes p out of place, the two buffers taking
    /// turns by the iteration's parity.
    _p2: CudaSlice<f32>,
    /// Values `pb_encode` found in no list.
    miss: CudaSlice<f64>,
    /// The (eps_in, eps_out, kbar^2) bits the uploaded table was listed for, and its lengths.
    table_for: Option<[u64; 3]>,
    n_eps: i32,
    n_k2: i32,
    pub(super) ptrs: CodePtrs,
}

/// Addresses of the coded passes' buffers.
#[derive(Clone, Copy, Debug)]
pub(super) struct CodePtrs {
    pub cx: Addr,
    pub tab32: Addr,
    pub tab64: Addr,
    pub p2: Addr,
}

impl CudaPbSolver {
    /// Readies every level's coefficients from the float64 maps in the buffers: the finest level coded
    /// when the problem allows it (else its float32 copies), the coarse levels by coarsening, and the
    /// V-cycle's packed bytes where their ranges hold the values.
    pub(super) fn prepare_levels(&mut self, params: &PbParams) -> Result<(), PbError> {
        // The V-cycle's one-byte coefficients, where every value lies in their ranges (`pb_pack`:
        // dielectrics in [0.5, 256], kbar^2 0 or in [2^-20, 2^14]; coarse values lie between fine ones).
        let eps_fits = |v: f64| (0.5..=256.0).contains(&v);
        let kbar2 = params.eps_out * params.kappa2_per_angstrom2();
        let k2_fits = kbar2 == 0.0 || (2f64.powi(-20)..=2f64.powi(14)).contains(&kbar2);
        let packed = self.packed_allowed && eps_fits(params.eps_in) && eps_fits(params.eps_out) && k2_fits;
        self.packed = packed;
        self.coded = false;
        self.codes_unchecked = false;
        let levels = self.bufs()?.levels.len();
        if packed && self.coded_allowed && self.preconditioner == Preconditioner::Multigrid && levels > 1 {
            let eps = dielectric_values(params.eps_in, params.eps_out);
            let k2 = kbar2_values(params);
            if eps.len() <= TABLE_HALF && k2.len() <= TABLE_HALF {
                self.encode(params, &eps, &k2)?;
                self.coarsen_from(1)?;
                self.pack_from(1)?;
                self.coded = true;
                self.codes_unchecked = true;
                return Ok(());
            }
        }
        self.float_levels()
    }

    /// The finest level's float32 coefficients from the float64 maps, the coarse levels from them,
    /// and the packed bytes of every level but the coarsest when the solve packs.
    fn float_levels(&mut self) -> Result<(), PbError> {
        let stream = self.stream.clone();
        let k = std::sync::Arc::clone(&self.kernels);
        let b = self.bufs()?;
        let Some(fine) = b.levels.first_mut() else {
            return Err(PbError::Device("no multigrid level".into()));
        };
        let n64 = fine.n() as i64;
        let n = fine.n();
        let [e0, e1, e2] = &mut fine.eps;
        for (src, dst) in [
            (&b.eps64[0], e0),
            (&b.eps64[1], e1),
            (&b.eps64[2], e2),
            (&b.k64, &mut fine.k2),
        ] {
            let mut l = stream.launch_builder(&k.to_f32);
            l.arg(src).arg(dst).arg(&n64);
            // SAFETY: n doubles in, n floats out.
            unsafe { l.launch(cfg1(n)) }.map_err(drv("pb_to_f32"))?;
        }
        self.coarsen_from(0)?;
        self.pack_from(0)
    }

    /// Coarse levels below `from` from their finer level's float32 coefficients (level 1 from the
    /// finest level's codes when `from` is 1).
    fn coarsen_from(&mut self, from: usize) -> Result<(), PbError> {
        let stream = self.stream.clone();
        let k = std::sync::Arc::clone(&self.kernels);
        let b = self.bufs()?;
        let codes = b.codes.as_ref().map(|c| c.ptrs);
        for lv in (from.max(1))..b.levels.len() {
            let (lo, hi) = b.levels.split_at_mut(lv);
            let (Some(f), Some(c)) = (lo.last(), hi.first_mut()) else {
                continue;
            };
            let [fx, fy, fz] = f.dims;
            let [cx, cy, cz] = c.dims;
            let cp = c.ptrs;
            let cfg = cfg3(c.dims);
            match codes.filter(|_| lv == 1 && from == 1) {
                Some(cd) => {
                    for axis in 0..3i32 {
                        let mut args = raw_args![cd.cx, cd.tab32, fx, fy, fz, cp.eps[axis as usize], cx, cy, cz, axis];
                        // SAFETY: pb_coarsen_eps_c's parameters; reads the fine words (indices clamped)
                        // and the table, writes every coarse point.
                        unsafe { raw::launch(&stream, &k.coarsen_eps_c, cfg, &mut args, "pb_coarsen_eps_c") }?;
                    }
                    let mut args = raw_args![cd.cx, cd.tab32, fx, fy, fz, cp.k2, cx, cy, cz];
                    // SAFETY: as above.
                    unsafe { raw::launch(&stream, &k.coarsen_k2_c, cfg, &mut args, "pb_coarsen_k2_c") }?;
                }
                None => {
                    let fp = f.ptrs;
                    for axis in 0..3i32 {
                        let a = axis as usize;
                        let mut args = raw_args![fp.eps[a], fx, fy, fz, cp.eps[a], cx, cy, cz, axis];
                        // SAFETY: pb_coarsen_eps's parameters; reads the fine level's points (indices
                        // clamped), writes every coarse point.
                        unsafe { raw::launch(&stream, &k.coarsen_eps, cfg, &mut args, "pb_coarsen_eps") }?;
                    }
                    let mut args = raw_args![fp.k2, fx, fy, fz, cp.k2, cx, cy, cz];
                    // SAFETY: as above.
                    unsafe { raw::launch(&stream, &k.coarsen_k2, cfg, &mut args, "pb_coarsen_k2") }?;
                }
            }
        }
        Ok(())
    }

    /// The packed bytes of the levels from `from` to the last but one, when the solve packs.
    fn pack_from(&mut self, from: usize) -> Result<(), PbError> {
        if !self.packed {
            return Ok(());
        }
        let stream = self.stream.clone();
        let k = std::sync::Arc::clone(&self.kernels);
        let b = self.bufs()?;
        let count = b.levels.len();
        for lv in b.levels.iter().take(count.saturating_sub(1)).skip(from) {
            let m = lv.n();
            let (p, m64) = (lv.ptrs, m as i64);
            let mut args = raw_args![p.eps[0], p.eps[1], p.eps[2], p.k2, p.pk, m64];
            // SAFETY: pb_pack's parameters; m floats in each, m 32-bit words out.
            unsafe { raw::launch(&stream, &k.pack, cfg1(m), &mut args, "pb_pack") }?;
        }
        Ok(())
    }

    /// Codes the finest level (`pb_encode`): the words, the V-cycle's packed bytes, and the count of
    /// values in no list; the table uploaded when the problem's values changed.
    fn encode(&mut self, params: &PbParams, eps: &[f64], k2: &[f64]) -> Result<(), PbError> {
        let stream = self.stream.clone();
        let k = std::sync::Arc::clone(&self.kernels);
        let n = self.bufs()?.levels.first().map_or(0, |l| l.n());
        if self.bufs()?.codes.is_none() {
            let codes = Codes {
                cx: self.stream.alloc_zeros::<u32>(n.max(1)).map_err(drv("device allocation"))?,
                tab64: self.alloc64(2 * TABLE_HALF)?,
                tab32: self.alloc32(2 * TABLE_HALF)?,
                _p2: self.alloc32(n)?,
                miss: self.alloc64(1)?,
                table_for: None,
                n_eps: 0,
                n_k2: 0,
                ptrs: CodePtrs {
                    cx: 0,
                    tab32: 0,
                    tab64: 0,
                    p2: 0,
                },
            };
            let b = self.bufs()?;
            b.codes = Some(codes);
        }
        let kbar2 = params.eps_out * params.kappa2_per_angstrom2();
        let key = [params.eps_in.to_bits(), params.eps_out.to_bits(), kbar2.to_bits()];
        let b = self.bufs()?;
        let Some(c) = b.codes.as_mut() else {
            return Err(PbError::Device("no coded coefficients".into()));
        };
        c.ptrs = CodePtrs {
            cx: raw::addr(&stream, &c.cx),
            tab32: raw::addr(&stream, &c.tab32),
            tab64: raw::addr(&stream, &c.tab64),
            p2: raw::addr(&stream, &c._p2),
        };
        if c.table_for != Some(key) {
            let mut t64 = vec![0.0f64; 2 * TABLE_HALF];
            for (dst, src) in t64.iter_mut().zip(eps) {
                *dst = *src;
            }
            for (dst, src) in t64.iter_mut().skip(TABLE_HALF).zip(k2) {
                *dst = *src;
            }
            let t32: Vec<f32> = t64.iter().map(|&v| v as f32).collect();
            stream.memcpy_htod(&t64, &mut c.tab64).map_err(drv("upload"))?;
            stream.memcpy_htod(&t32, &mut c.tab32).map_err(drv("upload"))?;
            c.n_eps = eps.len() as i32;
            c.n_k2 = k2.len() as i32;
            c.table_for = Some(key);
        }
        stream.memset_zeros(&mut c.miss).map_err(drv("memset"))?;
        let Some(fine) = b.levels.first_mut() else {
            return Err(PbError::Device("no multigrid level".into()));
        };
        let n64 = n as i64;
        let mut l = stream.launch_builder(&k.encode);
        l.arg(&b.eps64[0])
            .arg(&b.eps64[1])
            .arg(&b.eps64[2])
            .arg(&b.k64)
            .arg(&n64)
            .arg(&c.tab64)
            .arg(&c.n_eps)
            .arg(&c.n_k2)
            .arg(&mut c.cx)
            .arg(&mut fine.pk)
            .arg(&mut c.miss);
        // SAFETY: n doubles in each map, a table of 512 doubles, n words out in each of cx and pk, one
        // double of count; blocks of 256 threads (`PB_THREADS`).
        unsafe { l.launch(cfg1(n)) }.map_err(drv("pb_encode"))?;
        Ok(())
    }

    /// After the first residual of a coded solve: whether the codes hold (every value was in the
    /// lists). When they do not, the levels are readied from the float arrays instead and `false`
    /// says the residual must be formed again.
    pub(super) fn checked_codes(&mut self) -> Result<bool, PbError> {
        if !self.codes_unchecked {
            return Ok(true);
        }
        self.codes_unchecked = false;
        let stream = self.stream.clone();
        let miss = match self.bufs()?.codes.as_ref() {
            Some(c) => stream.clone_dtoh(&c.miss).map_err(drv("download"))?,
            None => vec![f64::NAN],
        };
        if miss.first().is_some_and(|&m| m == 0.0) {
            return Ok(true);
        }
        self.coded = false;
        self.float_levels()?;
        Ok(false)
    }
}
