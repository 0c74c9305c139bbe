//! The CUDA field engine of one device: its context, stream, loaded modules and device buffers, the
//! jobs it has prepared (a few, reused across slabs and frames), and the [`SlabEngine`] implementation
//! that poisons the output with NaN, runs the kernel family's launches (`super::mo`, `super::dcs`,
//! `super::msm`, `super::qm_esp`, `super::molsurf`) and copies the slab back while checking every
//! value is finite. Called by the worker
//! pool in `jobs` (one persistent worker thread per device owns one engine), the bench command and the
//! GPU tests.

use super::dcs::{DcsPrepared, DcsVariant};
use super::discovery::libraries_present;
use super::mo::MoPrepared;
use super::nvrtc::{compile_ptx, dump_source, fnv1a};
use super::{CudaError, MoForm, catch, dev_err, msm};
use crate::compute::{ComputeError, Field, FieldInput, FieldJob, SlabEngine, slab_len};
use crate::model::Lattice;
use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, LaunchConfig, PushKernelArg};
use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

pub const UTIL_SRC: &str = include_str!("../../../kernels/util.cu");

/// True when no value is NaN or infinite. Branch-free within chunks of 64 so that the compiler
/// vectorises it (a plain `any(!is_finite)` runs about one value per cycle, milliseconds per tile).
pub fn all_finite(values: &[f32]) -> bool {
    use rayon::prelude::*;
    // Large slabs are checked in parallel (a 10^8-point map would otherwise spend ~0.1 s here).
    if values.len() > 1 << 20 {
        return values.par_chunks(1 << 16).all(all_finite_serial);
    }
    all_finite_serial(values)
}

/// Prepared jobs an engine keeps (see `EngineState::jobs`).
const PREPARED_JOBS: usize = 4;

/// Slabs up to this many points come back through the engine's page-locked buffer (64 MiB).
const PINNED_MAX_POINTS: usize = 1 << 24;

/// Copies `src` into `dst` (same length) and says whether every value is finite: one pass over the
/// values, in parallel for large slabs.
pub fn copy_all_finite(src: &[f32], dst: &mut [f32]) -> bool {
    use rayon::prelude::*;
    if src.len() != dst.len() {
        return false;
    }
    // In parallel from a quarter of a million values (1 MiB): a pipelined chunk (4 MiB) copied on
    // one thread took longer than its kernels and its DMA together.
    if src.len() >= 1 << 18 {
        return dst
            .par_chunks_mut(1 << 16)
            .zip(src.par_chunks(1 << 16))
            .map(|(d, s)| {
                d.copy_from_slice(s);
                all_finite_serial(s)
            })
            .reduce(|| true, |a, b| a && b);
    }
    dst.copy_from_slice(src);
    all_finite_serial(src)
}

fn all_finite_serial(values: &[f32]) -> bool {
    const EXP: u32 = 0x7f80_0000;
    let mut chunks = values.chunks_exact(64);
    for c in &mut chunks {
        let bad = c.iter().fold(0u32, |a, v| a | u32::from(v.to_bits() & EXP == EXP));
        if bad != 0 {
            return false;
        }
    }
    chunks.remainder().iter().all(|v| v.is_finite())
}

enum Prepared {
    Mo(MoPrepared),
    Dcs(DcsPrepared),
    Msm(Box<msm::MsmPrepared>),
    QmEsp(Box<super::qm_esp::QmEspPrepared>),
    MolSurf(Box<super::molsurf::MolSurfPrepared>),
    Ses(Box<super::ses::SesPrepared>),
}

struct JobCache {
    input: FieldInput,
    field: Field,
    lattice: Lattice,
    form: MoForm,
    prepared: Arc<Prepared>,
}

fn same_input(a: &FieldInput, b: &FieldInput) -> bool {
    match (a, b) {
        (FieldInput::Wavefunction(x), FieldInput::Wavefunction(y)) => Arc::ptr_eq(x, y),
        (FieldInput::Charges(x), FieldInput::Charges(y)) => Arc::ptr_eq(x, y),
        (FieldInput::Electrostatics(x), FieldInput::Electrostatics(y)) => Arc::ptr_eq(x, y),
        (FieldInput::DeferredElectrostatics(x), FieldInput::DeferredElectrostatics(y)) => Arc::ptr_eq(x, y),
        (FieldInput::Spheres(x), FieldInput::Spheres(y)) => Arc::ptr_eq(x, y),
        (FieldInput::ScreenedCharges(x), FieldInput::ScreenedCharges(y)) => Arc::ptr_eq(x, y),
        _ => false,
    }
}

#[derive(Default)]
pub(super) struct EngineState {
    modules: BTreeMap<u64, Arc<CudaModule>>,
    /// The last few prepared jobs, most recently used last (the HOMO and LUMO of one frame and the
    /// look-ahead frame's field alternate on one engine; each is prepared once).
    jobs: Vec<JobCache>,
    pub(super) out: Option<CudaSlice<f32>>,
    pub(super) acc: Option<CudaSlice<f64>>,
    /// The Coulomb kernel's second stream and its accumulator (variants on two streams,
    /// `DcsVariant::streams`), made at their first use.
    pub(super) stream2: Option<Arc<CudaStream>>,
    pub(super) acc2: Option<CudaSlice<f64>>,
    /// Bumped whenever a new job is prepared.
    pub(super) prep_generation: u64,
    /// (preparation, term) whose constants the specialised module holds.
    pub(super) constants_for: Option<(u64, usize)>,
    /// MO form measured fastest (1 general, 2 specialised) per kernel shape ([`MoPrepared::shape`]):
    /// the frames of a trajectory share their basis, so the forms are timed against each other once,
    /// not for every frame.
    pub(super) form_choices: BTreeMap<u64, u8>,
    /// The last few prepared orbital batches (`super::mo::batch`), most recently used last.
    pub(super) batches: Vec<super::mo::batch::BatchCache>,
    /// Per batch shape (`MoBatchPrepared::shape`): true when one multi-orbital launch was measured
    /// faster than the orbitals one by one (each in its own best form), false otherwise.
    pub(super) batch_choices: BTreeMap<u64, bool>,
    /// Page-locked host buffer the output is copied back through (grown as needed).
    pinned: Option<cudarc::driver::PinnedHostSlice<f32>>,
    /// Device buffers kept from one ILS frame to the next (`super::ils::IlsBuffers`); taken out
    /// for the frame, so the state is not locked while it runs.
    pub(super) ils: Option<Box<super::ils::IlsBuffers>>,
    /// The second device output buffer of a pipelined slab (`super::pipeline`): chunk k+1 is
    /// computed into one while chunk k is copied back from the other.
    pub(super) out_spare: Option<CudaSlice<f32>>,
    /// The two page-locked chunk buffers of a pipelined slab, reused across slabs and requests.
    pub(super) staging: [Option<cudarc::driver::PinnedHostSlice<f32>>; 2],
    /// Points per pipelined chunk (0: `super::pipeline::CHUNK_POINTS`).
    pub(super) chunk_points: usize,
    /// What the pipelined slabs spent (`CudaEngine::take_pipeline_stats`).
    pub(super) pipeline_stats: super::pipeline::PipelineStats,
    /// The device's non-finite flag of a slab copied straight into registered memory.
    pub(super) finite_flag: Option<CudaSlice<i32>>,
    /// Test hook: the lattice point (x fastest) a kernel overwrites with NaN after every launch
    /// that covers it (`CudaEngine::set_nan_at`).
    nan_at: Option<usize>,
}

/// A CUDA device with its context, one stream, and compiled kernels.
pub struct CudaEngine {
    ordinal: usize,
    device_name: String,
    pub(super) arch: String,
    pub(super) ctx: Arc<CudaContext>,
    pub(super) stream: Arc<CudaStream>,
    /// The stream that copies finished chunks back while the next chunk's kernels run on `stream`.
    pub(super) copy_stream: Arc<CudaStream>,
    /// Streaming multiprocessors of the device (0 where the driver did not say).
    pub(super) multiprocessors: u32,
    state: Mutex<EngineState>,
    form: AtomicU8,
    /// Coulomb kernel variant (`DcsVariant::pack`).
    dcs_variant: AtomicU64,
    /// Test hook: when set, every slab fails with a device error.
    fail_all: AtomicBool,
}

impl std::fmt::Debug for CudaEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CudaEngine({})", self.name())
    }
}

impl CudaEngine {
    /// Opens device `ordinal`: context, stream, and a compile of the Coulomb kernel as a smoke test.
    pub fn new(ordinal: usize) -> Result<CudaEngine, CudaError> {
        libraries_present()?;
        let (ctx, name, arch) = catch("context", || {
            let ctx = CudaContext::new(ordinal).map_err(dev_err("context creation"))?;
            let name = ctx.name().unwrap_or_else(|_| "unknown device".into());
            let (maj, min) = ctx.compute_capability().map_err(dev_err("compute capability"))?;
            Ok((ctx, name, format!("compute_{maj}{min}")))
        })?;
        let stream = catch("stream", || ctx.new_stream().map_err(dev_err("stream creation")))?;
        let copy_stream = catch("stream", || ctx.new_stream().map_err(dev_err("copy stream creation")))?;
        let multiprocessors = ctx
            .attribute(cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
            .ok()
            .and_then(|n| u32::try_from(n).ok())
            .unwrap_or(0);
        let engine = CudaEngine {
            ordinal,
            device_name: name,
            arch,
            ctx,
            stream,
            copy_stream,
            multiprocessors,
            state: Mutex::new(EngineState::default()),
            form: AtomicU8::new(0),
            dcs_variant: AtomicU64::new(DcsVariant::DEFAULT.pack()),
            fail_all: AtomicBool::new(false),
        };
        {
            let mut st = engine.lock_state()?;
            engine.module(&mut st, UTIL_SRC)?;
        }
        Ok(engine)
    }

    /// Device ordinal.
    pub fn ordinal(&self) -> usize {
        self.ordinal
    }

    /// The device's name ("NVIDIA H100 80GB HBM3").
    pub fn device_name(&self) -> &str {
        &self.device_name
    }

    /// Selects the MO kernel form for later jobs.
    pub fn set_mo_form(&self, form: MoForm) {
        let v = match form {
            MoForm::Auto => 0,
            MoForm::General => 1,
            MoForm::Specialised => 2,
        };
        self.form.store(v, Ordering::Relaxed);
    }

    /// Selects the Coulomb kernel variant for later launches (tuning; the default is measured fastest).
    pub fn set_dcs_variant(&self, v: DcsVariant) {
        self.dcs_variant.store(v.pack(), Ordering::Relaxed);
    }

    /// The Coulomb kernel variant in use.
    pub fn dcs_variant(&self) -> DcsVariant {
        DcsVariant::unpack(self.dcs_variant.load(Ordering::Relaxed))
    }

    pub(super) fn mo_form(&self) -> MoForm {
        match self.form.load(Ordering::Relaxed) {
            1 => MoForm::General,
            2 => MoForm::Specialised,
            _ => MoForm::Auto,
        }
    }

    /// Test hook: make every slab fail with a device error (fault-handling tests).
    pub fn set_fail_all(&self, fail: bool) {
        self.fail_all.store(fail, Ordering::Relaxed);
    }

    /// Test hook: after the kernels of every slab that covers lattice point `at` (x fastest), a
    /// kernel writes NaN there, as a faulty kernel would; `None` turns it off.
    pub fn set_nan_at(&self, at: Option<usize>) -> Result<(), ComputeError> {
        self.lock_state()?.nan_at = at;
        Ok(())
    }

    /// Which MO form a job would use on this engine ("general" or "specialised"), compiling if needed.
    pub fn mo_form_used(&self, job: &FieldJob) -> Result<&'static str, ComputeError> {
        let mut st = self.lock_state()?;
        let prep = self.prepare(&mut st, job)?;
        Ok(match &*prep {
            Prepared::Mo(m) => match m.choice.load(Ordering::Relaxed) {
                1 => "general",
                2 => "specialised",
                _ => "auto (decided at the first launch)",
            },
            Prepared::Dcs(_) => "dcs",
            Prepared::Msm(_) => "msm",
            Prepared::QmEsp(_) => "qm_esp",
            Prepared::MolSurf(_) => "molsurf",
            Prepared::Ses(_) => "ses",
        })
    }

    pub(super) fn lock_state(&self) -> Result<std::sync::MutexGuard<'_, EngineState>, CudaError> {
        self.state.lock().map_err(|_| CudaError::Poisoned)
    }

    pub(super) fn module(&self, st: &mut EngineState, src: &str) -> Result<Arc<CudaModule>, CudaError> {
        let key = fnv1a(&[src, &self.arch]);
        if let Some(m) = st.modules.get(&key) {
            return Ok(m.clone());
        }
        dump_source(src, key);
        let ptx = compile_ptx(src, &self.arch)?;
        let ctx = self.ctx.clone();
        let module = catch("module load", || {
            ctx.load_module(cudarc::nvrtc::Ptx::from_src(ptx))
                .map_err(dev_err("module load"))
        })?;
        st.modules.insert(key, module.clone());
        Ok(module)
    }

    pub(super) fn function(module: &Arc<CudaModule>, name: &str) -> Result<CudaFunction, CudaError> {
        module.load_function(name).map_err(dev_err(name))
    }

    /// True when `job`'s kernels are cheap beside the copy back, so its slabs are computed in
    /// chunks whose copies overlap the next chunk's kernels (`super::pipeline`): orbitals and
    /// densities. The Coulomb, multilevel and QM-potential sums run far longer than their copies
    /// (and the multilevel kernel's tiles of planes would be split by chunks): one launch over the
    /// slab is kept for them.
    pub(super) fn pipelines(&self, st: &mut EngineState, job: &FieldJob) -> Result<bool, ComputeError> {
        let prepared = self.prepare(st, job)?;
        Ok(matches!(&*prepared, Prepared::Mo(_)))
    }

    fn prepare(&self, st: &mut EngineState, job: &FieldJob) -> Result<Arc<Prepared>, ComputeError> {
        let form = self.mo_form();
        if let Some(i) = st.jobs.iter().position(|c| {
            same_input(&c.input, &job.input) && c.field == job.field && c.lattice == job.lattice && c.form == form
        }) {
            let c = st.jobs.remove(i);
            let prepared = c.prepared.clone();
            st.jobs.push(c);
            return Ok(prepared);
        }
        // Multilevel-summation plans hold large device buffers: at most the newest one stays.
        st.jobs.retain(|c| !matches!(*c.prepared, Prepared::Msm(_)));
        if st.jobs.len() >= PREPARED_JOBS {
            st.jobs.remove(0);
        }
        st.prep_generation += 1;
        let prepared = match (&job.field, &job.input) {
            (Field::Potential, FieldInput::Charges(q)) => Prepared::Dcs(DcsPrepared::new(q, &job.lattice)?),
            (Field::Potential, FieldInput::ScreenedCharges(s)) => {
                Prepared::Dcs(DcsPrepared::new(&s.charges, &job.lattice)?.with_screen(s.dielectric.gpu()))
            }
            (Field::Potential, FieldInput::Electrostatics(plan)) => {
                Prepared::Msm(Box::new(self.prepare_msm(st, plan)?))
            }
            (Field::Potential, FieldInput::DeferredElectrostatics(d)) => Prepared::Msm(Box::new(
                self.prepare_msm(st, &*d.plan_with(crate::compute::esp::StagesOn::Engine)?)?,
            )),
            (Field::Potential, _) => return Err(ComputeError::WrongInput(Field::Potential, "point charges")),
            (Field::QmPotential, FieldInput::Wavefunction(wf)) => {
                Prepared::QmEsp(Box::new(self.prepare_qm_esp(st, wf)?))
            }
            (Field::MolSurf, FieldInput::Spheres(atoms)) if atoms.is_excluded() => {
                let surface = atoms
                    .excluded_surface()
                    .ok_or(ComputeError::WrongInput(Field::MolSurf, "atoms with radii and a probe"))?;
                Prepared::Ses(Box::new(self.prepare_ses(st, &surface, &job.lattice)?))
            }
            (Field::MolSurf, FieldInput::Spheres(atoms)) => {
                Prepared::MolSurf(Box::new(self.prepare_molsurf(st, atoms, &job.lattice)?))
            }
            (Field::MolSurf, _) => return Err(ComputeError::WrongInput(Field::MolSurf, "atoms with radii")),
            (f, FieldInput::Wavefunction(wf)) => Prepared::Mo(self.prepare_mo(st, f, wf, &job.lattice, form)?),
            (f, _) => return Err(ComputeError::WrongInput(f.clone(), "a wavefunction")),
        };
        let prepared = Arc::new(prepared);
        st.jobs.push(JobCache {
            input: job.input.clone(),
            field: job.field.clone(),
            lattice: job.lattice,
            form,
            prepared: prepared.clone(),
        });
        Ok(prepared)
    }

    pub(super) fn ensure_out(&self, st: &mut EngineState, n: usize) -> Result<(), ComputeError> {
        if st.out.as_ref().map(|b| b.len() < n).unwrap_or(true) {
            st.out = None;
            // SAFETY: the buffer is fully written (NaN fill) before any read.
            st.out = Some(unsafe { self.stream.alloc::<f32>(n.max(1)) }.map_err(dev_err("allocation"))?);
        }
        Ok(())
    }

    /// Refuses slabs whose indices do not fit the kernels' 32-bit arithmetic (`n` values in all).
    pub(super) fn check_launch(lattice: &Lattice, z_range: &Range<usize>, n: usize) -> Result<(), ComputeError> {
        let d = lattice.dims;
        if d[0] > i32::MAX as usize / 2 || d[1] > i32::MAX as usize / 2 || z_range.end > d[2] || n > i32::MAX as usize {
            return Err(ComputeError::Device("lattice too large for one launch".into()));
        }
        Ok(())
    }

    /// Grows the device output buffer to `n` values and fills them with NaN, so an unwritten point
    /// shows as NaN.
    pub(super) fn poison_out(&self, st: &mut EngineState, n: usize) -> Result<(), ComputeError> {
        self.ensure_out(st, n)?;
        let fill_module = self.module(st, UTIL_SRC)?;
        let fill = Self::function(&fill_module, "fill_nan")?;
        let out = st
            .out
            .as_mut()
            .ok_or_else(|| ComputeError::Device("no output buffer".into()))?;
        let ni = n as i32;
        let mut b = self.stream.launch_builder(&fill);
        b.arg(&mut *out).arg(&ni);
        // SAFETY: the kernel writes `n` floats into a buffer of at least `n`.
        unsafe { b.launch(LaunchConfig::for_num_elems(n as u32)) }.map_err(dev_err("fill launch"))?;
        Ok(())
    }

    /// Writes NaN at point `i` of the device output buffer (the test hook of `set_nan_at`).
    fn poison_point(&self, st: &mut EngineState, i: usize) -> Result<(), ComputeError> {
        let fill_module = self.module(st, UTIL_SRC)?;
        let fill = Self::function(&fill_module, "fill_nan")?;
        let out = st
            .out
            .as_mut()
            .filter(|b| b.len() > i)
            .ok_or_else(|| ComputeError::Device("no output buffer".into()))?;
        let mut point = out.slice_mut(i..i + 1);
        let one = 1i32;
        let mut b = self.stream.launch_builder(&fill);
        b.arg(&mut point).arg(&one);
        // SAFETY: the kernel writes one float into a view of one.
        unsafe { b.launch(LaunchConfig::for_num_elems(1)) }.map_err(dev_err("fill launch"))?;
        Ok(())
    }

    /// Runs the kernels for `z_range` of the job, leaving the values in the device output buffer.
    pub(super) fn run_device(
        &self,
        st: &mut EngineState,
        job: &FieldJob,
        z_range: &Range<usize>,
    ) -> Result<usize, ComputeError> {
        let n = slab_len(&job.lattice, z_range);
        Self::check_launch(&job.lattice, z_range, n)?;
        if n == 0 {
            return Ok(0);
        }
        self.ctx.bind_to_thread().map_err(dev_err("bind"))?;
        let prepared = self.prepare(st, job)?;
        self.poison_out(st, n)?;
        match &*prepared {
            Prepared::Mo(m) => self.launch_mo(st, m, job, z_range)?,
            Prepared::Dcs(p) => self.launch_dcs(st, p, job, z_range)?,
            Prepared::QmEsp(p) => self.launch_qm_esp(st, p, job, z_range)?,
            Prepared::MolSurf(p) => self.launch_molsurf(st, p, job, z_range)?,
            Prepared::Ses(p) => self.launch_ses(st, p, job, z_range)?,
            Prepared::Msm(p) => {
                let module = self.module(st, msm::MSM_SRC)?;
                let out = st
                    .out
                    .as_mut()
                    .ok_or_else(|| ComputeError::Device("no output buffer".into()))?;
                self.launch_msm(out, &module, p, job, z_range)?
            }
        }
        let plane = job.lattice.dims[0] * job.lattice.dims[1];
        if let Some(at) = st
            .nan_at
            .filter(|&at| (z_range.start * plane..z_range.end * plane).contains(&at))
        {
            self.poison_point(st, at - z_range.start * plane)?;
        }
        Ok(n)
    }

    /// Times the kernels for the whole lattice of `job` (no host transfer): returns one duration in
    /// milliseconds per repetition, measured with CUDA events after one untimed warm-up run.
    #[cfg(feature = "bench-harness")]
    pub fn time_kernels(&self, job: &FieldJob, repetitions: usize) -> Result<Vec<f64>, ComputeError> {
        let mut st = self.lock_state()?;
        let z = 0..job.lattice.dims[2];
        self.time_on_stream(repetitions, || self.run_device(&mut st, job, &z))
    }

    /// Times `run` (which queues work on the engine's stream; what it returns is kept until the
    /// stream has finished) with CUDA events: one untimed run, then one duration in milliseconds
    /// per repetition.
    #[cfg(feature = "bench-harness")]
    pub(super) fn time_on_stream<T>(
        &self,
        repetitions: usize,
        mut run: impl FnMut() -> Result<T, ComputeError>,
    ) -> Result<Vec<f64>, ComputeError> {
        let warm = run()?;
        self.stream.synchronize().map_err(dev_err("synchronize"))?;
        drop(warm);
        let flags = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
        let mut times = Vec::with_capacity(repetitions);
        for _ in 0..repetitions {
            let start = self.ctx.new_event(flags).map_err(dev_err("event"))?;
            let end = self.ctx.new_event(flags).map_err(dev_err("event"))?;
            start.record(&self.stream).map_err(dev_err("event record"))?;
            let kept = run()?;
            end.record(&self.stream).map_err(dev_err("event record"))?;
            end.synchronize().map_err(dev_err("event sync"))?;
            drop(kept);
            times.push(f64::from(start.elapsed_ms(&end).map_err(dev_err("elapsed"))?));
        }
        Ok(times)
    }

    /// Copies `outs.len()` slabs of `need` values each, laid one after the other in the device
    /// output buffer, into `outs`; says whether every value is finite. Small and medium batches come
    /// back through a page-locked buffer kept by the engine (one DMA at full bus speed, then a
    /// parallel copy that also checks the values); larger ones are copied straight into `outs` (the
    /// driver stages pageable memory itself), so the engine never holds more than
    /// `PINNED_MAX_POINTS` of page-locked memory.
    pub(super) fn download(
        &self,
        st: &mut EngineState,
        need: usize,
        outs: &mut [&mut [f32]],
    ) -> Result<bool, ComputeError> {
        let total = need * outs.len();
        let EngineState {
            out: device_out,
            pinned,
            ..
        } = st;
        let buf = device_out
            .as_ref()
            .filter(|b| b.len() >= total)
            .ok_or_else(|| ComputeError::Device("no output buffer".into()))?;
        if total <= PINNED_MAX_POINTS {
            if pinned.as_ref().is_none_or(|p| p.len() < total) {
                *pinned = None;
                // SAFETY: the buffer's values are only read after the copy below has written them.
                let fresh = unsafe { self.ctx.alloc_pinned_with_flags::<f32>(total, 0) };
                *pinned = Some(fresh.map_err(dev_err("page-locked allocation"))?);
            }
        } else {
            *pinned = None;
        }
        let mut finite = true;
        match pinned.as_mut() {
            Some(host) => {
                self.stream
                    .memcpy_dtoh(&buf.slice(0..total), host)
                    .map_err(dev_err("download"))?;
                self.stream.synchronize().map_err(dev_err("synchronize"))?;
                let host = host.as_slice().map_err(dev_err("download"))?;
                let src = host
                    .get(..total)
                    .ok_or_else(|| ComputeError::Device("short page-locked buffer".into()))?;
                for (chunk, out) in src.chunks(need.max(1)).zip(outs.iter_mut()) {
                    finite &= copy_all_finite(chunk, out);
                }
            }
            None => {
                for (c, out) in outs.iter_mut().enumerate() {
                    self.stream
                        .memcpy_dtoh(&buf.slice(c * need..(c + 1) * need), &mut **out)
                        .map_err(dev_err("download"))?;
                }
                self.stream.synchronize().map_err(dev_err("synchronize"))?;
                for out in outs.iter() {
                    finite &= all_finite(out);
                }
            }
        }
        Ok(finite)
    }
}

pub(super) fn copy_symbol(
    module: &Arc<CudaModule>,
    stream: &Arc<CudaStream>,
    name: &str,
    data: &[f32],
) -> Result<(), ComputeError> {
    if data.is_empty() {
        return Ok(());
    }
    let mut sym = module.get_global(name, stream).map_err(dev_err(name))?;
    // SAFETY: the symbol is an array of 4-byte values at least `data.len()` long (checked by `transmute_mut`).
    let mut view = unsafe { sym.transmute_mut::<f32>(data.len()) }
        .ok_or_else(|| ComputeError::Device(format!("{name}: constant memory too small")))?;
    Ok(stream.memcpy_htod(data, &mut view).map_err(dev_err(name))?)
}

impl SlabEngine for CudaEngine {
    fn name(&self) -> String {
        format!("cuda:{} {}", self.ordinal, self.device_name)
    }

    fn compute_slab(&self, job: &FieldJob, z_range: Range<usize>, out: &mut [f32]) -> Result<(), ComputeError> {
        let need = slab_len(&job.lattice, &z_range);
        if out.len() != need {
            return Err(ComputeError::BadOutput { got: out.len(), need });
        }
        if self.fail_all.load(Ordering::Relaxed) {
            return Err(ComputeError::Device("failure injected by the test hook".into()));
        }
        if need == 0 {
            return Ok(());
        }
        let t0 = std::time::Instant::now();
        let mut st = self.lock_state()?;
        self.ctx.bind_to_thread().map_err(dev_err("bind"))?;
        if need > st.chunk_points() && self.pipelines(&mut st, job)? {
            let finite = self.compute_pipelined(&mut st, job, &z_range, out)?;
            tracing::debug!(
                target: "orbitfield::timing",
                total_us = t0.elapsed().as_micros() as u64,
                points = need,
                "cuda slab (pipelined)"
            );
            return if finite { Ok(()) } else { Err(ComputeError::NotFinite) };
        }
        self.run_device(&mut st, job, &z_range)?;
        let t_launched = t0.elapsed();
        let finite = self.download(&mut st, need, &mut [out])?;
        tracing::debug!(
            target: "orbitfield::timing",
            launch_us = t_launched.as_micros() as u64,
            total_us = t0.elapsed().as_micros() as u64,
            points = need,
            "cuda slab"
        );
        if !finite {
            return Err(ComputeError::NotFinite);
        }
        Ok(())
    }

    /// Several orbitals of one wavefunction: one launch of the multi-orbital kernel when it was
    /// measured faster than the orbitals one by one (`super::mo::batch`), then one copy back.
    fn compute_batch(
        &self,
        jobs: &[&FieldJob],
        z_range: Range<usize>,
        outs: &mut [&mut [f32]],
    ) -> Result<(), ComputeError> {
        let Some(first) = jobs.first() else {
            return Ok(());
        };
        let need = slab_len(&first.lattice, &z_range);
        if let Some(bad) = outs.iter().find(|o| o.len() != need) {
            return Err(ComputeError::BadOutput { got: bad.len(), need });
        }
        if jobs.len() != outs.len() || jobs.iter().any(|j| j.lattice != first.lattice) {
            return Err(ComputeError::BadInput("a batch of jobs on different lattices".into()));
        }
        if self.fail_all.load(Ordering::Relaxed) {
            return Err(ComputeError::Device("failure injected by the test hook".into()));
        }
        if need == 0 {
            return Ok(());
        }
        let mut st = self.lock_state()?;
        if !self.run_batch(&mut st, jobs, &z_range)? {
            drop(st);
            return crate::compute::one_by_one(self, jobs, z_range, outs);
        }
        if !self.download(&mut st, need, outs)? {
            return Err(ComputeError::NotFinite);
        }
        Ok(())
    }

    fn checks_output(&self) -> bool {
        true
    }

    fn as_cuda(&self) -> Option<&CudaEngine> {
        Some(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_finite_finds_any_nan_or_infinity_anywhere() {
        let mut v = vec![1.0f32; 200];
        assert!(all_finite(&v));
        assert!(all_finite(&[]));
        v[5] = f32::MAX;
        v[6] = f32::MIN_POSITIVE / 2.0; // subnormal: finite
        assert!(all_finite(&v));
        for i in [0, 63, 64, 127, 128, 191, 192, 199] {
            for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
                let mut w = v.clone();
                w[i] = bad;
                assert!(!all_finite(&w), "{i} {bad}");
            }
        }
    }

    #[test]
    fn copy_all_finite_copies_everything_and_finds_a_nan_in_any_chunk() {
        // Above the parallel threshold, with a ragged last chunk.
        let n = (1 << 20) + 1000;
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let src: Vec<f32> = (0..n)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                (seed >> 40) as f32 - 8e6
            })
            .collect();
        let mut dst = vec![f32::NAN; n];
        assert!(copy_all_finite(&src, &mut dst));
        assert_eq!(src, dst);
        for at in [0, (1 << 16) + 3, n - 1] {
            let mut bad = src.clone();
            bad[at] = f32::INFINITY;
            assert!(!copy_all_finite(&bad, &mut dst), "{at}");
        }
        let small = [1.0f32, f32::NAN];
        assert!(!copy_all_finite(&small, &mut [0.0; 2]));
        assert!(!copy_all_finite(&small, &mut [0.0; 3]));
    }
}
