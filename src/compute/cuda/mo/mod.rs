//! The molecular-orbital kernels: host-side plans and the kernel generated per basis set ([`plan`]),
//! and the launches of both forms on a [`CudaEngine`] (the general kernel of
//! `kernels/mo.cu` with the basis in device arrays, and the specialised one with the basis as literals).
//! Called by the engine in `super::engine` for orbital, density and spin-density fields.

pub mod batch;
pub mod plan;

pub use crate::compute::layout::*;
pub use plan::*;

use super::engine::{CudaEngine, EngineState, copy_symbol};
use super::nvrtc::fnv1a;
use super::{MoForm, dev_err};
use crate::compute::{ComputeError, Field, FieldJob};
use crate::model::{Lattice, Wavefunction};
use cudarc::driver::{CudaModule, CudaSlice, LaunchConfig, PushKernelArg};
use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

/// Kernel sources, embedded at build time.
pub const MO_COMMON_SRC: &str = include_str!("../../../../kernels/mo_common.cuh");
pub const MO_GENERAL_SRC: &str = include_str!("../../../../kernels/mo.cu");

const MO_BLOCK: (u32, u32, u32) = (8, 8, 4);

// SAFETY: plain `#[repr(C)]` data of 32-bit fields, matching the CUDA struct layout.
unsafe impl cudarc::driver::DeviceRepr for GpuShell {}

// SAFETY: plain `#[repr(C)]` data of 32-bit fields, matching the CUDA struct layout.
unsafe impl cudarc::driver::DeviceRepr for LatticeArgs {}

/// A shell's first primitive and primitive count in the uploaded primitives.
pub(super) type ShellPrims = (i32, i32);

/// The general form's device data: module, primitives, and per orbital term the shells (with cutoffs)
/// and contracted coefficients.
type GeneralData = (
    Arc<CudaModule>,
    CudaSlice<f32>,
    Vec<(CudaSlice<GpuShell>, CudaSlice<f32>)>,
);

/// Device data of one MO job, reused by all its slabs.
pub(super) struct MoPrepared {
    terms: Vec<OrbitalTerm>,
    /// General form: per orbital term, shells (with cutoffs) and contracted coefficients on the device.
    general: Option<GeneralData>,
    /// Specialised form: module and per-term constant data.
    specialised: Option<(Arc<CudaModule>, Vec<SpecConstants>)>,
    n_shells: usize,
    /// Form in use: 1 general, 2 specialised, 0 not yet decided (`MoForm::Auto` with both available:
    /// the first launch times both on the first orbital and keeps the faster).
    pub(super) choice: AtomicU8,
    /// Hash of what decides which form is faster: the specialised source, the general form's angular
    /// cases and the lattice dimensions.
    shape: u64,
    /// Number of the preparation (whose constants the specialised module holds, see
    /// `EngineState::constants_for`).
    id: u64,
}

impl CudaEngine {
    pub(super) fn prepare_mo(
        &self,
        st: &mut EngineState,
        field: &Field,
        wf: &Wavefunction,
        lattice: &Lattice,
        form: MoForm,
    ) -> Result<MoPrepared, ComputeError> {
        let plan = BasisPlan::new(&wf.basis)?;
        let terms = orbital_terms(field, wf, &plan)?;
        let o = lattice.origin_bohr;
        let spec_plan = if form != MoForm::General {
            SpecialisedPlan::new(&plan, &format!("{MO_COMMON_SRC}\n"))
        } else {
            None
        };
        let dims = lattice.dims.map(|d| d.to_string()).join("x");
        let max_l = wf.basis.max_l().to_string();
        let shape = fnv1a(&[
            spec_plan.as_ref().map_or("", |p| p.source.as_str()),
            &max_l,
            &dims,
            &self.arch,
        ]);
        // Auto with a decision remembered for this shape: only the chosen form is prepared.
        let remembered = if form == MoForm::Auto {
            st.form_choices.get(&shape).copied()
        } else {
            None
        };
        let specialised = match spec_plan {
            Some(spec) if remembered != Some(1) => {
                let module = self.module(st, &spec.source)?;
                let consts = terms.iter().map(|t| spec.constants(&plan, &t.poly, o)).collect();
                Some((module, consts))
            }
            _ => None,
        };
        let general = if specialised.is_none() || (form == MoForm::Auto && remembered.is_none()) {
            let module = self.general_module(st, wf)?;
            let (prims_dev, shell_base) = self.upload_prims(&plan)?;
            let mut per_term = Vec::new();
            for t in &terms {
                let sd = self.upload_shells(&plan, &shell_base, &plan.cutoffs2(&t.poly), o)?;
                let coefs: Vec<f32> = t.poly.iter().map(|&v| v as f32).collect();
                let coefs = if coefs.is_empty() { vec![0.0] } else { coefs };
                let cd = self.stream.clone_htod(&coefs).map_err(dev_err("upload"))?;
                per_term.push((sd, cd));
            }
            Some((module, prims_dev, per_term))
        } else {
            None
        };
        let choice = match (&general, &specialised) {
            (Some(_), Some(_)) => 0,
            (_, Some(_)) => 2,
            _ => 1,
        };
        Ok(MoPrepared {
            choice: AtomicU8::new(choice),
            terms,
            general,
            specialised,
            n_shells: plan.shells.len(),
            shape,
            id: st.prep_generation,
        })
    }

    /// The general kernels compiled for `wf`'s basis (only the angular cases it needs: fewer
    /// registers).
    pub(super) fn general_module(
        &self,
        st: &mut EngineState,
        wf: &Wavefunction,
    ) -> Result<Arc<CudaModule>, ComputeError> {
        let src = format!(
            "#define GEN_MAX_L {}\n{MO_COMMON_SRC}\n{MO_GENERAL_SRC}",
            wf.basis.max_l()
        );
        Ok(self.module(st, &src)?)
    }

    /// The primitives of every shell on the device as (alpha * log2 e, coefficient) pairs, and each
    /// shell's (first primitive, primitive count).
    pub(super) fn upload_prims(&self, plan: &BasisPlan) -> Result<(CudaSlice<f32>, Vec<ShellPrims>), ComputeError> {
        let (pairs, shell_base) = plan.packed_prims();
        let prims: Vec<f32> = pairs.iter().flatten().copied().collect();
        let prims = if prims.is_empty() { vec![0.0; 2] } else { prims };
        let dev = self.stream.clone_htod(&prims).map_err(dev_err("upload"))?;
        Ok((dev, shell_base))
    }

    /// The shells as the general kernels read them: centres relative to the lattice origin `o`,
    /// squared screening radii `cut2`, primitives from [`Self::upload_prims`].
    pub(super) fn upload_shells(
        &self,
        plan: &BasisPlan,
        shell_base: &[ShellPrims],
        cut2: &[f64],
        o: [f64; 3],
    ) -> Result<CudaSlice<GpuShell>, ComputeError> {
        let shells = plan.packed_shells(shell_base, cut2, o);
        let shells = if shells.is_empty() {
            vec![GpuShell::default()]
        } else {
            shells
        };
        Ok(self.stream.clone_htod(&shells).map_err(dev_err("upload"))?)
    }

    /// The launch grid of an MO kernel over the slab `g`: one block per 8 x 8 x 4 brick.
    pub(super) fn mo_launch_config(g: &LatticeArgs) -> Result<LaunchConfig, ComputeError> {
        super::brick_launch([g.nx, g.ny, g.nz], MO_BLOCK)
    }

    pub(super) fn lattice_args(lattice: &Lattice, z_range: &Range<usize>) -> LatticeArgs {
        let s = lattice.steps_bohr;
        LatticeArgs {
            steps: [
                s[0][0] as f32,
                s[0][1] as f32,
                s[0][2] as f32,
                s[1][0] as f32,
                s[1][1] as f32,
                s[1][2] as f32,
                s[2][0] as f32,
                s[2][1] as f32,
                s[2][2] as f32,
            ],
            nx: lattice.dims[0] as i32,
            ny: lattice.dims[1] as i32,
            nz: z_range.len() as i32,
            k0: z_range.start as i32,
        }
    }

    pub(super) fn launch_mo(
        &self,
        st: &mut EngineState,
        m: &MoPrepared,
        job: &FieldJob,
        z_range: &Range<usize>,
    ) -> Result<(), ComputeError> {
        let g = Self::lattice_args(&job.lattice, z_range);
        let cfg = Self::mo_launch_config(&g)?;
        let job_id = m.id;
        let EngineState {
            out,
            constants_for,
            form_choices,
            ..
        } = st;
        let out = out
            .as_mut()
            .ok_or_else(|| ComputeError::Device("no output buffer".into()))?;
        let mut first = 0;
        if m.choice.load(Ordering::Relaxed) == 0 {
            // Time both forms on the first orbital (each overwrites the slab), keep the faster.
            let (t_general, t_spec) = super::time_two(
                self,
                &mut (&mut *out, &mut *constants_for),
                |(out, consts)| self.launch_mo_term(out, consts, m, 0, false, &g, cfg, job_id),
                |(out, consts)| self.launch_mo_term(out, consts, m, 0, true, &g, cfg, job_id),
            )?;
            let choice = if t_spec <= t_general { 2 } else { 1 };
            m.choice.store(choice, Ordering::Relaxed);
            form_choices.insert(m.shape, choice);
            first = 1;
        }
        let spec = m.choice.load(Ordering::Relaxed) == 2;
        for t in first..m.terms.len() {
            self.launch_mo_term(out, constants_for, m, t, spec, &g, cfg, job_id)?;
        }
        Ok(())
    }

    /// Launches one orbital term of an MO field in the general or the specialised form.
    #[allow(clippy::too_many_arguments)]
    fn launch_mo_term(
        &self,
        out: &mut CudaSlice<f32>,
        constants_for: &mut Option<(u64, usize)>,
        m: &MoPrepared,
        t: usize,
        specialised: bool,
        g: &LatticeArgs,
        cfg: LaunchConfig,
        job_id: u64,
    ) -> Result<(), ComputeError> {
        let Some(term) = m.terms.get(t) else { return Ok(()) };
        if specialised {
            let Some((module, consts)) = &m.specialised else {
                return Err(ComputeError::Device("no specialised kernel".into()));
            };
            let f = Self::function(module, "mo_specialised")?;
            let Some(k) = consts.get(t) else { return Ok(()) };
            if *constants_for != Some((job_id, t)) {
                copy_symbol(module, &self.stream, "spec_atoms", bytemuck::cast_slice(&k.atoms))?;
                copy_symbol(module, &self.stream, "spec_info", bytemuck::cast_slice(&k.info))?;
                copy_symbol(module, &self.stream, "spec_shell0", bytemuck::cast_slice(&k.shell0))?;
                copy_symbol(module, &self.stream, "spec_coefs", &k.coefs)?;
                copy_symbol(module, &self.stream, "spec_shell_cut2", &k.shell_cut2)?;
                *constants_for = Some((job_id, t));
            }
            let mut b = self.stream.launch_builder(&f);
            b.arg(&mut *out).arg(g).arg(&term.mode).arg(&term.weight);
            // SAFETY: the kernel writes only points inside the slab, all within `out`.
            unsafe { b.launch(cfg) }.map_err(dev_err("mo_specialised launch"))?;
        } else {
            let Some((module, prims, per_term)) = &m.general else {
                return Err(ComputeError::Device("no general kernel".into()));
            };
            let Some((shells, coefs)) = per_term.get(t) else {
                return Ok(());
            };
            let f = Self::function(module, "mo_general")?;
            let nshells = m.n_shells as i32;
            let mut b = self.stream.launch_builder(&f);
            b.arg(&mut *out)
                .arg(g)
                .arg(shells)
                .arg(&nshells)
                .arg(prims)
                .arg(coefs)
                .arg(&term.mode)
                .arg(&term.weight);
            // SAFETY: the kernel reads `nshells` shells and their primitives/coefficients, all uploaded
            // from the same plan, and writes only points inside the slab.
            unsafe { b.launch(cfg) }.map_err(dev_err("mo_general launch"))?;
        }
        Ok(())
    }
}
