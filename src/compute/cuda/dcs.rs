//! The Coulomb kernel (direct summation, `kernels/dcs.cu`): its variants ([`DcsVariant`]), the
//! charges prepared relative to the lattice origin, and the launches that sum them chunk by chunk in
//! constant memory. Called by the engine in `super::engine` for potential maps of point charges.

use super::dev_err;
use super::engine::{CudaEngine, EngineState, copy_symbol};
use crate::compute::{ComputeError, Field, FieldJob, PointCharges, slab_len};
use crate::model::Lattice;
use cudarc::driver::{LaunchConfig, PushKernelArg};
use std::ops::Range;

pub const DCS_SRC: &str = include_str!("../../../kernels/dcs.cu");

/// Atoms per constant-memory chunk of the Coulomb kernel (`DCS_CHUNK` in `kernels/dcs.cu`).
pub const DCS_CHUNK: usize = 4000;
const DCS_BLOCK: (u32, u32) = (32, 8);

/// A variant of the Coulomb kernel: lattice points per thread (`DCS_UNROLL`) and how many of them take
/// their reciprocal square root on the FMA pipe instead of the special-function unit (`DCS_SOFT`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DcsVariant {
    pub unroll: u32,
    pub soft: u32,
}

impl DcsVariant {
    /// The variant the engine uses unless told otherwise (fastest measured on an H200, see
    /// `benches/RESULTS.md`).
    pub const DEFAULT: DcsVariant = DcsVariant { unroll: 8, soft: 1 };

    /// Checks the limits the kernel needs: 1 to 32 points per thread, at most all of them soft.
    pub fn new(unroll: u32, soft: u32) -> Option<DcsVariant> {
        ((1..=32).contains(&unroll) && soft <= unroll).then_some(DcsVariant { unroll, soft })
    }

    pub(super) fn source(&self) -> String {
        format!(
            "#define DCS_UNROLL {}\n#define DCS_SOFT {}\n{DCS_SRC}",
            self.unroll, self.soft
        )
    }

    pub(super) fn pack(&self) -> u32 {
        (self.unroll << 8) | self.soft
    }

    pub(super) fn unpack(v: u32) -> DcsVariant {
        DcsVariant::new(v >> 8, v & 0xff).unwrap_or(DcsVariant::DEFAULT)
    }
}

/// Text that does not name a Coulomb kernel variant.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is not a Coulomb kernel variant (UNROLL:SOFT with SOFT <= UNROLL <= 32)")]
pub struct BadDcsVariant(pub String);

impl std::str::FromStr for DcsVariant {
    type Err = BadDcsVariant;
    /// "8:1" (points per thread : soft points).
    fn from_str(s: &str) -> Result<DcsVariant, BadDcsVariant> {
        let bad = || BadDcsVariant(s.to_string());
        let (u, k) = s.split_once(':').ok_or_else(bad)?;
        let u = u.trim().parse().map_err(|_| bad())?;
        let k = k.trim().parse().map_err(|_| bad())?;
        DcsVariant::new(u, k).ok_or_else(bad)
    }
}

pub(super) struct DcsPrepared {
    pub(super) atoms: Vec<[f32; 4]>,
}

impl DcsPrepared {
    /// The charges as (x, y, z relative to the lattice origin, q) in float, as the kernel reads them.
    pub(super) fn new(q: &PointCharges, lattice: &Lattice) -> Result<DcsPrepared, ComputeError> {
        if q.positions_bohr.len() != q.charges_e.len() {
            return Err(ComputeError::WrongInput(Field::Potential, "one charge per position"));
        }
        let o = lattice.origin_bohr;
        let atoms = q
            .positions_bohr
            .iter()
            .zip(&q.charges_e)
            .map(|(p, &c)| {
                [
                    (p[0] - o[0]) as f32,
                    (p[1] - o[1]) as f32,
                    (p[2] - o[2]) as f32,
                    c as f32,
                ]
            })
            .collect();
        Ok(DcsPrepared { atoms })
    }
}

impl CudaEngine {
    pub(super) fn launch_dcs(
        &self,
        st: &mut EngineState,
        p: &DcsPrepared,
        job: &FieldJob,
        z_range: &Range<usize>,
    ) -> Result<(), ComputeError> {
        let l = &job.lattice;
        if !l.is_axis_aligned() {
            return Err(ComputeError::Device(
                "the Coulomb kernel needs an axis-aligned lattice".into(),
            ));
        }
        let n = slab_len(l, z_range);
        let variant = self.dcs_variant();
        let module = self.module(st, &variant.source())?;
        let zero = Self::function(&module, "dcs_zero")?;
        let chunk = Self::function(&module, "dcs_chunk")?;
        let finish = Self::function(&module, "dcs_finish")?;
        if st.acc.as_ref().map(|b| b.len() < n).unwrap_or(true) {
            st.acc = None;
            // SAFETY: zeroed by `dcs_zero` below before use.
            st.acc = Some(unsafe { self.stream.alloc::<f64>(n) }.map_err(dev_err("allocation"))?);
        }
        let acc = st
            .acc
            .as_mut()
            .ok_or_else(|| ComputeError::Device("no accumulator".into()))?;
        let nn = n;
        {
            let mut b = self.stream.launch_builder(&zero);
            b.arg(&mut *acc).arg(&nn);
            // SAFETY: writes `n` doubles into a buffer of at least `n`.
            unsafe { b.launch(LaunchConfig::for_num_elems(n as u32)) }.map_err(dev_err("dcs_zero launch"))?;
        }
        let (nx, ny, nz, k0) = (
            l.dims[0] as i32,
            l.dims[1] as i32,
            z_range.len() as i32,
            z_range.start as i32,
        );
        let (sx, sy, sz) = (
            l.steps_bohr[0][0] as f32,
            l.steps_bohr[1][1] as f32,
            l.steps_bohr[2][2] as f32,
        );
        let per_block_x = DCS_BLOCK.0 as usize * variant.unroll as usize;
        let cfg = LaunchConfig {
            grid_dim: (
                (nx as u32).div_ceil(per_block_x as u32),
                (ny as u32).div_ceil(DCS_BLOCK.1),
                nz as u32,
            ),
            block_dim: (DCS_BLOCK.0, DCS_BLOCK.1, 1),
            shared_mem_bytes: 0,
        };
        if cfg.grid_dim.1 > 65535 || cfg.grid_dim.2 > 65535 {
            return Err(ComputeError::Device("lattice too large for one launch".into()));
        }
        for atoms in p.atoms.chunks(DCS_CHUNK) {
            copy_symbol(&module, &self.stream, "dcs_atoms", bytemuck::cast_slice(atoms))?;
            let na = atoms.len() as i32;
            let mut b = self.stream.launch_builder(&chunk);
            b.arg(&mut *acc)
                .arg(&nx)
                .arg(&ny)
                .arg(&nz)
                .arg(&k0)
                .arg(&sx)
                .arg(&sy)
                .arg(&sz)
                .arg(&na);
            // SAFETY: reads `na` atoms of constant memory (copied above), writes points inside the slab.
            unsafe { b.launch(cfg) }.map_err(dev_err("dcs_chunk launch"))?;
        }
        let out = st
            .out
            .as_mut()
            .ok_or_else(|| ComputeError::Device("no output buffer".into()))?;
        let mut b = self.stream.launch_builder(&finish);
        b.arg(&mut *out).arg(&*acc).arg(&nn);
        // SAFETY: converts `n` doubles into `n` floats, both buffers at least `n` long.
        unsafe { b.launch(LaunchConfig::for_num_elems(n as u32)) }.map_err(dev_err("dcs_finish launch"))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dcs_variants_parse_and_reject_what_the_kernel_cannot_do() {
        assert_eq!("8:1".parse::<DcsVariant>(), Ok(DcsVariant { unroll: 8, soft: 1 }));
        assert_eq!(" 16 : 0 ".parse::<DcsVariant>(), Ok(DcsVariant { unroll: 16, soft: 0 }));
        for bad in ["", "8", "8:9", "0:0", "33:1", "-1:0", "8:x", "4294967295:0"] {
            assert!(bad.parse::<DcsVariant>().is_err(), "{bad}");
        }
        // Packing keeps every valid variant.
        for u in 1..=32 {
            for k in 0..=u {
                let v = DcsVariant { unroll: u, soft: k };
                assert_eq!(DcsVariant::unpack(v.pack()), v);
            }
        }
        assert!(DCS_SRC.contains("#ifndef DCS_UNROLL") && DCS_SRC.contains("#ifndef DCS_SOFT"));
    }
}
