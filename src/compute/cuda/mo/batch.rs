//! Several orbitals of one wavefunction in one launch (`mo_general_multi`, or `mo_general_multi2` for
//! two, in `kernels/mo.cu`): the
//! orbitals the representations show at one frame (HOMO and LUMO) share the shell screening and
//! the radial factors, each contracts them with its own coefficients into its own slab of the
//! device output buffer, and one copy brings them all back. Called by the engine's
//! `SlabEngine::compute_batch` (`super::super::engine`) for the batches the jobs pool forms.
//!
//! Whether one multi-orbital launch beats the orbitals one by one (each in its measured best form,
//! possibly the specialised kernel) depends on the basis and the device: the first batch of a
//! shape (basis, lattice, orbital count) times both on the device and the engine remembers the
//! faster for every later frame; under `MoForm::Specialised` batches always go one by one.

use super::super::engine::{CudaEngine, EngineState};
use super::super::nvrtc::fnv1a;
use super::super::{MoForm, dev_err};
use super::{BasisPlan, GpuShell, orbital_terms};
use crate::compute::{ComputeError, Field, FieldInput, FieldJob, slab_len};
use crate::model::{Lattice, Wavefunction};
use cudarc::driver::{CudaModule, CudaSlice, PushKernelArg};
use std::ops::Range;
use std::sync::Arc;

/// Most orbitals of one launch (`MO_MAX_CHANNELS` in `kernels/mo.cu`, its twin).
pub const MO_MAX_CHANNELS: usize = 8;

/// Prepared batches the engine keeps (the view frame's and the look-ahead frame's).
const PREPARED_BATCHES: usize = 3;

/// Device data of one batch of orbitals, reused by all its slabs.
pub(in crate::compute::cuda) struct MoBatchPrepared {
    module: Arc<CudaModule>,
    prims: CudaSlice<f32>,
    /// The shells with the largest screening radius of any orbital of the batch.
    shells: CudaSlice<GpuShell>,
    /// The orbitals' contracted coefficients, `n_coefs` apart.
    coefs: CudaSlice<f32>,
    n_coefs: i32,
    n_shells: i32,
    channels: i32,
    /// Bit `c` set: channel `c` is the square of its orbital.
    squared_mask: i32,
    /// Hash of what decides whether the batch is faster than its orbitals one by one.
    shape: u64,
}

/// A prepared batch and what it was prepared for.
pub(in crate::compute::cuda) struct BatchCache {
    wf: Arc<Wavefunction>,
    fields: Vec<Field>,
    lattice: Lattice,
    prepared: Arc<MoBatchPrepared>,
}

impl CudaEngine {
    /// Computes the slab `z_range` of every job of the batch into consecutive slabs of the device
    /// output buffer, or returns false when the orbitals one by one were measured faster for this
    /// shape (nothing is left in the buffer then). Under `MoForm::Specialised`, always false.
    pub(in crate::compute::cuda) fn run_batch(
        &self,
        st: &mut EngineState,
        jobs: &[&FieldJob],
        z_range: &Range<usize>,
    ) -> Result<bool, ComputeError> {
        let Some(first) = jobs.first() else {
            return Ok(false);
        };
        let form = self.mo_form();
        if form == MoForm::Specialised || jobs.len() > MO_MAX_CHANNELS {
            return Ok(false);
        }
        let n = slab_len(&first.lattice, z_range);
        Self::check_launch(&first.lattice, z_range, n * jobs.len())?;
        self.ctx.bind_to_thread().map_err(dev_err("bind"))?;
        let p = self.prepare_batch(st, jobs)?;
        match st.batch_choices.get(&p.shape).copied() {
            Some(faster) => {
                if faster {
                    self.launch_batch(st, &p, first, z_range, n)?;
                }
                Ok(faster)
            }
            None => {
                // Once per shape: the orbitals one by one (untimed first, so their own form
                // choice and compilation are out of the measurement), then timed against one
                // multi-orbital launch; the batch's values are kept this time either way.
                for job in jobs {
                    self.run_device(st, job, z_range)?;
                }
                let (t_single, t_batch) = super::super::time_two(
                    self,
                    st,
                    |st| {
                        for job in jobs {
                            self.run_device(st, job, z_range)?;
                        }
                        Ok(())
                    },
                    |st| self.launch_batch(st, &p, first, z_range, n),
                )?;
                tracing::debug!(
                    target: "orbitfield::timing",
                    orbitals = jobs.len(),
                    one_by_one_ms = t_single,
                    batch_ms = t_batch,
                    "mo batch timed"
                );
                st.batch_choices.insert(p.shape, t_batch <= t_single);
                Ok(true)
            }
        }
    }

    /// NaN into `n * channels` values of the output buffer, then one multi-orbital launch.
    fn launch_batch(
        &self,
        st: &mut EngineState,
        p: &MoBatchPrepared,
        job: &FieldJob,
        z_range: &Range<usize>,
        n: usize,
    ) -> Result<(), ComputeError> {
        self.poison_out(st, n * p.channels.max(0) as usize)?;
        let g = Self::lattice_args(&job.lattice, z_range);
        let cfg = Self::mo_launch_config(&g)?;
        // At most two orbitals (the common case): the form with two accumulators, fewer registers.
        let name = if p.channels <= 2 {
            "mo_general_multi2"
        } else {
            "mo_general_multi"
        };
        let f = Self::function(&p.module, name)?;
        let out = st
            .out
            .as_mut()
            .ok_or_else(|| ComputeError::Device("no output buffer".into()))?;
        let slab_n = n as i32;
        let mut b = self.stream.launch_builder(&f);
        b.arg(&mut *out)
            .arg(&g)
            .arg(&p.shells)
            .arg(&p.n_shells)
            .arg(&p.prims)
            .arg(&p.coefs)
            .arg(&p.n_coefs)
            .arg(&p.channels)
            .arg(&slab_n)
            .arg(&p.squared_mask);
        // SAFETY: the kernel reads `n_shells` shells, their primitives and `channels * n_coefs`
        // coefficients, all uploaded from one plan, and writes `channels` slabs of `n` points into
        // a buffer of at least `n * channels` (`poison_out` above).
        unsafe { b.launch(cfg) }.map_err(dev_err("mo_general_multi launch"))?;
        Ok(())
    }

    /// The device data of a batch of single orbitals of one wavefunction on one lattice (cached).
    fn prepare_batch(&self, st: &mut EngineState, jobs: &[&FieldJob]) -> Result<Arc<MoBatchPrepared>, ComputeError> {
        let Some(first) = jobs.first() else {
            return Err(ComputeError::BadInput("an empty batch".into()));
        };
        let FieldInput::Wavefunction(wf) = &first.input else {
            return Err(ComputeError::WrongInput(first.field.clone(), "a wavefunction"));
        };
        let fields: Vec<Field> = jobs.iter().map(|j| j.field.clone()).collect();
        if let Some(i) = st
            .batches
            .iter()
            .position(|c| Arc::ptr_eq(&c.wf, wf) && c.fields == fields && c.lattice == first.lattice)
        {
            let c = st.batches.remove(i);
            let prepared = c.prepared.clone();
            st.batches.push(c);
            return Ok(prepared);
        }
        let plan = BasisPlan::new(&wf.basis)?;
        let mut coefs = Vec::with_capacity(plan.n_coefs * jobs.len());
        let mut cut2 = vec![0.0f64; plan.shells.len()];
        let mut squared_mask = 0i32;
        for (c, job) in jobs.iter().enumerate() {
            let same_wf = matches!(&job.input, FieldInput::Wavefunction(w) if Arc::ptr_eq(w, wf));
            let single = matches!(job.field, Field::Orbital { .. } | Field::OrbitalSquared { .. });
            if !same_wf || !single || job.lattice != first.lattice {
                return Err(ComputeError::WrongInput(
                    job.field.clone(),
                    "single orbitals of one wavefunction on one lattice",
                ));
            }
            let terms = orbital_terms(&job.field, wf, &plan)?;
            let [term] = terms.as_slice() else {
                return Err(ComputeError::WrongInput(job.field.clone(), "one orbital"));
            };
            if term.poly.len() != plan.n_coefs {
                return Err(ComputeError::Device(
                    "contracted coefficients of the wrong length".into(),
                ));
            }
            if term.mode == 1 {
                squared_mask |= 1 << c;
            }
            coefs.extend(term.poly.iter().map(|&v| v as f32));
            for (m, c2) in cut2.iter_mut().zip(plan.cutoffs2(&term.poly)) {
                *m = m.max(c2);
            }
        }
        if coefs.is_empty() {
            coefs.push(0.0);
        }
        let module = self.general_module(st, wf)?;
        let (prims, shell_base) = self.upload_prims(&plan)?;
        let shells = self.upload_shells(&plan, &shell_base, &cut2, first.lattice.origin_bohr)?;
        let coefs = self.stream.clone_htod(&coefs).map_err(dev_err("upload"))?;
        let dims = first.lattice.dims.map(|d| d.to_string()).join("x");
        let shape = fnv1a(&[
            "mo batch",
            &wf.basis.max_l().to_string(),
            &plan.shells.len().to_string(),
            &dims,
            &jobs.len().to_string(),
            &self.arch,
        ]);
        let prepared = Arc::new(MoBatchPrepared {
            module,
            prims,
            shells,
            coefs,
            n_coefs: plan.n_coefs as i32,
            n_shells: plan.shells.len() as i32,
            channels: jobs.len() as i32,
            squared_mask,
            shape,
        });
        if st.batches.len() >= PREPARED_BATCHES {
            st.batches.remove(0);
        }
        st.batches.push(BatchCache {
            wf: wf.clone(),
            fields,
            lattice: first.lattice,
            prepared: prepared.clone(),
        });
        Ok(prepared)
    }
}

// The jobs pool forms batches of up to `compute::MAX_BATCH` jobs; one launch must take them all.
const _: () = assert!(MO_MAX_CHANNELS >= crate::compute::MAX_BATCH);
