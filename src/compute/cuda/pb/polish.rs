//! The float64 finish of the CUDA Poisson-Boltzmann solver: the float64 residual norm and
//! diagonal-preconditioned conjugate gradients on the float64 maps, used where a float32 correction
//! stalls.

use super::{CudaPbSolver, cfg1, cfg1r, cfg3r, drv};
use crate::compute::pb::{PbError, PbLattice, PbParams};
use cudarc::driver::{CudaSlice, PushKernelArg};
use std::sync::Arc;

impl CudaPbSolver {
    /// The float64 residual norm |f - A u| over the interior.
    pub(super) fn residual_norm(&mut self, lattice: &PbLattice) -> Result<f64, PbError> {
        Ok(self.residual_sums(lattice)?[0].sqrt())
    }

    /// r = f - A u in float64 into the finest level's right side, and the sums |r|^2 and |f|^2 over
    /// the interior (`pb_residual64`).
    pub(super) fn residual_sums(&mut self, lattice: &PbLattice) -> Result<[f64; 2], PbError> {
        let stream = self.stream.clone();
        let k = Arc::clone(&self.kernels);
        let d = lattice.dims.map(|v| v as i32);
        let ih2 = 1.0 / (lattice.spacing_angstrom * lattice.spacing_angstrom);
        let b = self.bufs()?;
        stream.memset_zeros(&mut b.acc).map_err(drv("memset"))?;
        let fine = b
            .levels
            .first_mut()
            .ok_or_else(|| PbError::Device("no multigrid level".into()))?;
        let mut l = stream.launch_builder(&k.residual64);
        l.arg(&b.u)
            .arg(&b.f)
            .arg(&b.eps64[0])
            .arg(&b.eps64[1])
            .arg(&b.eps64[2])
            .arg(&b.k64)
            .arg(&d[0])
            .arg(&d[1])
            .arg(&d[2])
            .arg(&ih2)
            .arg(&mut fine.b)
            .arg(&mut b.acc);
        // SAFETY: reads the 7-point neighbourhoods of interior points, writes every point of r.
        unsafe { l.launch(cfg3r(d)) }.map_err(drv("pb_residual64"))?;
        let a = stream.clone_dtoh(&b.acc).map_err(drv("download"))?;
        Ok([
            a.first().copied().unwrap_or(f64::NAN),
            a.get(1).copied().unwrap_or(f64::NAN),
        ])
    }

    /// Float64 conjugate gradients (diagonal preconditioner) on `A u = f` from the current iterate,
    /// until `|r| <= tolerance |f|` (with a tenth to spare) or `left` iterations; returns the
    /// iterations used. The float64 work vectors are allocated here, at the first need.
    pub(super) fn polish(
        &mut self,
        lattice: &PbLattice,
        params: &PbParams,
        f_norm: f64,
        left: usize,
    ) -> Result<usize, PbError> {
        let stream = self.stream.clone();
        let k = Arc::clone(&self.kernels);
        let n = lattice.n_points();
        let n64 = n as i64;
        let d = lattice.dims.map(|v| v as i32);
        let ih2 = 1.0 / (lattice.spacing_angstrom * lattice.spacing_angstrom);
        if self.bufs()?.polish.is_none() {
            let v = [self.alloc64(n)?, self.alloc64(n)?, self.alloc64(n)?, self.alloc64(n)?];
            self.bufs()?.polish = Some(Box::new(v));
        }
        let b = self.bufs()?;
        let Some(v) = b.polish.as_deref_mut() else {
            return Err(PbError::Device("no float64 work vectors".into()));
        };
        let [r, z, p, q] = v;
        let target = 0.9 * params.tolerance * f_norm;
        stream.memset_zeros(&mut b.acc).map_err(drv("memset"))?;
        {
            let mut l = stream.launch_builder(&k.residual_d);
            l.arg(&b.u)
                .arg(&b.f)
                .arg(&b.eps64[0])
                .arg(&b.eps64[1])
                .arg(&b.eps64[2])
                .arg(&b.k64)
                .arg(&d[0])
                .arg(&d[1])
                .arg(&d[2])
                .arg(&ih2)
                .arg(&mut *r)
                .arg(&mut b.acc);
            // SAFETY: reads the 7-point neighbourhoods of interior points, writes every point of r.
            unsafe { l.launch(cfg3r(d)) }.map_err(drv("pb_residual_d"))?;
        }
        let jacobi = |r: &CudaSlice<f64>, z: &mut CudaSlice<f64>, acc: &mut CudaSlice<f64>| -> Result<(), PbError> {
            let mut slot = acc.slice_mut(4..5);
            let mut l = stream.launch_builder(&k.jacobi_d);
            l.arg(&b.eps64[0])
                .arg(&b.eps64[1])
                .arg(&b.eps64[2])
                .arg(&b.k64)
                .arg(&d[0])
                .arg(&d[1])
                .arg(&d[2])
                .arg(&ih2)
                .arg(r)
                .arg(z)
                .arg(&mut slot);
            // SAFETY: reads the 7-point neighbourhoods of interior points, writes every point of z.
            unsafe { l.launch(cfg3r(d)) }.map_err(drv("pb_jacobi_d"))?;
            Ok(())
        };
        jacobi(r, z, &mut b.acc)?;
        stream.memcpy_dtod(&*z, &mut *p).map_err(drv("copy"))?;
        let a = stream.clone_dtoh(&b.acc).map_err(drv("download"))?;
        if a.first().copied().unwrap_or(f64::NAN).sqrt() <= target {
            return Ok(0);
        }
        let mut rz = a.get(4).copied().unwrap_or(f64::NAN);
        for it in 0..left {
            stream.memset_zeros(&mut b.acc).map_err(drv("memset"))?;
            {
                let mut slot = b.acc.slice_mut(2..3);
                let mut l = stream.launch_builder(&k.apply_d);
                l.arg(&b.eps64[0])
                    .arg(&b.eps64[1])
                    .arg(&b.eps64[2])
                    .arg(&b.k64)
                    .arg(&d[0])
                    .arg(&d[1])
                    .arg(&d[2])
                    .arg(&ih2)
                    .arg(&*p)
                    .arg(&mut *q)
                    .arg(&mut slot);
                // SAFETY: reads the 7-point neighbourhoods of interior points, writes every point of q.
                unsafe { l.launch(cfg3r(d)) }.map_err(drv("pb_apply_d"))?;
            }
            let a = stream.clone_dtoh(&b.acc).map_err(drv("download"))?;
            let pq = a.get(2).copied().unwrap_or(f64::NAN);
            if !(pq.is_finite() && pq > 0.0 && rz.is_finite() && rz > 0.0) {
                return Err(PbError::Device(format!(
                    "float64 conjugate gradients broke down (p.Ap = {pq:e}, r.z = {rz:e})"
                )));
            }
            let alpha = rz / pq;
            {
                let mut slot = b.acc.slice_mut(3..4);
                let mut l = stream.launch_builder(&k.cg_update_d);
                l.arg(&mut b.u)
                    .arg(&mut *r)
                    .arg(&*p)
                    .arg(&*q)
                    .arg(&alpha)
                    .arg(&n64)
                    .arg(&mut slot);
                // SAFETY: n doubles in each buffer (p and q are zero on the faces).
                unsafe { l.launch(cfg1r(n)) }.map_err(drv("pb_cg_update_d"))?;
            }
            jacobi(r, z, &mut b.acc)?;
            let a = stream.clone_dtoh(&b.acc).map_err(drv("download"))?;
            let rr = a.get(3).copied().unwrap_or(f64::NAN);
            if rr.sqrt() <= target {
                return Ok(it + 1);
            }
            let rz_new = a.get(4).copied().unwrap_or(f64::NAN);
            let beta = rz_new / rz;
            rz = rz_new;
            let mut l = stream.launch_builder(&k.xpby_d);
            l.arg(&mut *p).arg(&*z).arg(&beta).arg(&n64);
            // SAFETY: n doubles each.
            unsafe { l.launch(cfg1(n)) }.map_err(drv("pb_xpby_d"))?;
        }
        Ok(left)
    }
}
