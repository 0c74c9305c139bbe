//! The CUDA field engine: device discovery, NVRTC compilation of `kernels/*.cu` (cached in memory and
//! on disk) and kernel launches for orbitals, densities and Coulomb potential maps.
//!
//! Called by `jobs` (one persistent worker thread per device owns one [`CudaEngine`]), by the bench
//! command and by the GPU tests. Discovery never panics: cudarc panics when libcuda is missing, so the
//! driver and NVRTC libraries are probed first ([`discover`]); whatever fails comes back as a note,
//! and the caller falls back to the CPU engine.
//!
//! MO fields come in two kernel forms ([`MoForm`]): the general kernel (`kernels/mo.cu`, basis in
//! device arrays) and one generated per basis set (`mo.rs`: exponents and contraction coefficients as
//! literals, one device function per distinct atom type, orbital coefficients and screening radii in
//! constant memory). Under `MoForm::Auto` both are built when the basis fits constant memory, the first
//! launch of a job times both on its first orbital and the faster is kept for the job's other launches.
//!
//! Numerics: fp32 arithmetic with the SFU's `ex2.approx.ftz` (exponents pre-scaled by log2 e) and
//! `rsqrt.approx.ftz` (part of the Coulomb sum on the FMA pipe, see `kernels/dcs.cu`); the
//! tests hold the MO kernels to 1e-5 relative (2-norm) against the CPU engine and the Coulomb kernel
//! to 1e-5 against a float64 sum. Every launch writes into a buffer first filled with NaN, and a
//! result with any non-finite value is an error ([`ComputeError::NotFinite`]), so nothing unwritten
//! reaches the caller.

pub mod mo;
pub mod msm;
pub mod rdf;

use crate::compute::{ComputeError, Field, FieldInput, FieldJob, SlabEngine, slab_len};
use crate::model::{Lattice, Spin, SpinKind, Wavefunction};
use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, LaunchConfig, PushKernelArg};
use mo::{BasisPlan, GpuShell, LatticeArgs, SpecConstants, SpecialisedPlan};
use std::collections::BTreeMap;
use std::ops::Range;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

/// Kernel sources, embedded at build time.
pub const MO_COMMON_SRC: &str = include_str!("../../../kernels/mo_common.cuh");
pub const MO_GENERAL_SRC: &str = include_str!("../../../kernels/mo.cu");
pub const DCS_SRC: &str = include_str!("../../../kernels/dcs.cu");
pub const UTIL_SRC: &str = include_str!("../../../kernels/util.cu");

/// Atoms per constant-memory chunk of the Coulomb kernel (`DCS_CHUNK` in `kernels/dcs.cu`).
pub const DCS_CHUNK: usize = 4000;
const DCS_BLOCK: (u32, u32) = (32, 8);
const MO_BLOCK: (u32, u32, u32) = (8, 8, 4);

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

    fn source(&self) -> String {
        format!(
            "#define DCS_UNROLL {}\n#define DCS_SOFT {}\n{DCS_SRC}",
            self.unroll, self.soft
        )
    }

    fn pack(&self) -> u32 {
        (self.unroll << 8) | self.soft
    }

    fn unpack(v: u32) -> DcsVariant {
        DcsVariant::new(v >> 8, v & 0xff).unwrap_or(DcsVariant::DEFAULT)
    }
}

impl std::str::FromStr for DcsVariant {
    type Err = String;
    /// "8:1" (points per thread : soft points).
    fn from_str(s: &str) -> Result<DcsVariant, String> {
        let bad = || format!("'{s}' is not a Coulomb kernel variant (UNROLL:SOFT with SOFT <= UNROLL <= 32)");
        let (u, k) = s.split_once(':').ok_or_else(bad)?;
        let u = u.trim().parse().map_err(|_| bad())?;
        let k = k.trim().parse().map_err(|_| bad())?;
        DcsVariant::new(u, k).ok_or_else(bad)
    }
}

/// Which form of the MO kernel to use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MoForm {
    /// The specialised kernel when the basis fits constant memory, else the general one.
    Auto,
    /// Basis in device arrays.
    General,
    /// Basis compiled in as literals (falls back to general when it does not fit).
    Specialised,
}

/// Devices found, and why any were not (one line each).
pub struct Discovery {
    pub engines: Vec<Arc<CudaEngine>>,
    pub notes: Vec<String>,
}

fn catch<T>(what: &str, f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(_) => Err(format!("{what}: the CUDA library panicked")),
    }
}

/// True when both libcuda and libnvrtc can be loaded (checked without touching the driver).
pub fn libraries_present() -> Result<(), String> {
    // SAFETY: these only try to dlopen the libraries and report whether that worked.
    let cuda = catch_unwind(|| unsafe { cudarc::driver::sys::is_culib_present() }).unwrap_or(false);
    if !cuda {
        return Err("no CUDA driver library (libcuda.so) found".into());
    }
    // SAFETY: as above, for NVRTC.
    let nvrtc = catch_unwind(|| unsafe { cudarc::nvrtc::sys::is_culib_present() }).unwrap_or(false);
    if !nvrtc {
        return Err("no NVRTC library (libnvrtc.so) found".into());
    }
    Ok(())
}

/// Device ordinals from `ORBITFIELD_DEVICES` ("0,2"), or `None` when unset. Invalid entries are
/// reported and ignored.
pub fn devices_from_env() -> (Option<Vec<usize>>, Vec<String>) {
    match std::env::var("ORBITFIELD_DEVICES") {
        Ok(s) if !s.trim().is_empty() => {
            let mut out = Vec::new();
            let mut notes = Vec::new();
            for part in s.split(',') {
                match part.trim().parse::<usize>() {
                    Ok(d) if !out.contains(&d) => out.push(d),
                    Ok(_) => {}
                    Err(_) => notes.push(format!("ORBITFIELD_DEVICES: '{}' is not a device number", part.trim())),
                }
            }
            (Some(out), notes)
        }
        _ => (None, Vec::new()),
    }
}

/// Finds usable CUDA devices (all, or those in `selection`), creating a context and a stream for each
/// and compiling the Coulomb kernel as a smoke test. Never panics.
pub fn discover(selection: Option<&[usize]>) -> Discovery {
    let mut notes = Vec::new();
    if let Err(e) = libraries_present() {
        notes.push(e);
        return Discovery {
            engines: Vec::new(),
            notes,
        };
    }
    let count = match catch("cuInit", || {
        cudarc::driver::result::init().map_err(|e| format!("cuInit failed: {e:?}"))?;
        CudaContext::device_count().map_err(|e| format!("cuDeviceGetCount failed: {e:?}"))
    }) {
        Ok(n) => n.max(0) as usize,
        Err(e) => {
            notes.push(e);
            return Discovery {
                engines: Vec::new(),
                notes,
            };
        }
    };
    if count == 0 {
        notes.push("the CUDA driver reports no devices".into());
    }
    let wanted: Vec<usize> = match selection {
        Some(s) => s.to_vec(),
        None => (0..count).collect(),
    };
    let mut engines = Vec::new();
    for ordinal in wanted {
        if ordinal >= count {
            notes.push(format!("cuda:{ordinal}: no such device ({count} present)"));
            continue;
        }
        match CudaEngine::new(ordinal) {
            Ok(e) => engines.push(Arc::new(e)),
            Err(e) => notes.push(format!("cuda:{ordinal}: {e}")),
        }
    }
    Discovery { engines, notes }
}

/// FNV-1a, 64 bit: a hash that is stable across builds (disk cache keys).
fn fnv1a(parts: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for b in p.bytes().chain(std::iter::once(0u8)) {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

fn disk_cache_dir() -> Option<PathBuf> {
    if let Ok(d) = std::env::var("ORBITFIELD_KERNEL_CACHE") {
        return if d.is_empty() || d == "off" {
            None
        } else {
            Some(PathBuf::from(d))
        };
    }
    if let Ok(d) = std::env::var("XDG_CACHE_HOME")
        && !d.is_empty()
    {
        return Some(PathBuf::from(d).join("orbitfield").join("kernels"));
    }
    std::env::var("HOME")
        .ok()
        .map(|h| PathBuf::from(h).join(".cache").join("orbitfield").join("kernels"))
}

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
    if src.len() > 1 << 20 {
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

/// Writes a kernel source to `$ORBITFIELD_DUMP_KERNELS/<key>.cu` when that variable names a folder
/// (inspection of generated kernels with offline tools); failures are ignored.
pub fn dump_source(src: &str, key: u64) {
    if let Some(dir) = std::env::var_os("ORBITFIELD_DUMP_KERNELS") {
        let dir = PathBuf::from(dir);
        if std::fs::create_dir_all(&dir).is_ok() {
            let _ = std::fs::write(dir.join(format!("{key:016x}.cu")), src);
        }
    }
}

/// Compiles CUDA source to PTX for `arch` ("compute_90") with the project's options (no fast math:
/// IEEE division and square root, no global flush-to-zero; FMA contraction on). The hot loops call
/// the ftz forms of `ex2.approx` and `rsqrt.approx` explicitly (see the kernels).
pub fn compile_ptx(src: &str, arch: &str) -> Result<String, String> {
    let options = vec![
        format!("--gpu-architecture={arch}"),
        "--fmad=true".to_string(),
        "--prec-div=true".to_string(),
        "--prec-sqrt=true".to_string(),
        "--ftz=false".to_string(),
        "--std=c++17".to_string(),
    ];
    let key = fnv1a(&[src, &options.join(" "), env!("CARGO_PKG_VERSION")]);
    let file = disk_cache_dir().map(|d| d.join(format!("{arch}-{key:016x}.ptx")));
    if let Some(f) = &file
        && let Ok(ptx) = std::fs::read_to_string(f)
        && ptx.contains(".entry")
    {
        return Ok(ptx);
    }
    let opts = cudarc::nvrtc::CompileOptions {
        options,
        ..Default::default()
    };
    let ptx = catch("NVRTC", || {
        cudarc::nvrtc::compile_ptx_with_opts(src, opts).map_err(|e| match e {
            cudarc::nvrtc::CompileError::CompileError { log, .. } => {
                format!("NVRTC compile error: {}", log.to_string_lossy())
            }
            other => format!("NVRTC: {other:?}"),
        })
    })?;
    let text = ptx.to_src();
    if let Some(f) = &file
        && let Some(dir) = f.parent()
        && std::fs::create_dir_all(dir).is_ok()
    {
        // Write to a unique temporary name and rename, so readers never see half a file.
        let tmp = f.with_extension(format!("tmp{}", std::process::id()));
        if std::fs::write(&tmp, &text).is_ok() && std::fs::rename(&tmp, f).is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
    }
    Ok(text)
}

fn dev_err(what: &str) -> impl Fn(cudarc::driver::DriverError) -> ComputeError + '_ {
    move |e| ComputeError::Device(format!("{what}: {e:?}"))
}

/// One orbital's contribution to a field: coefficients, store mode (0 = psi, 1 = w psi^2, 2 = += w psi^2)
/// and weight.
struct OrbitalTerm {
    poly: Vec<f64>,
    mode: i32,
    weight: f32,
}

/// The general form's device data: module, primitives, and per orbital term the shells (with cutoffs)
/// and contracted coefficients.
type GeneralData = (
    Arc<CudaModule>,
    CudaSlice<f32>,
    Vec<(CudaSlice<GpuShell>, CudaSlice<f32>)>,
);

/// Device data of one MO job, reused by all its slabs.
struct MoPrepared {
    terms: Vec<OrbitalTerm>,
    /// General form: per orbital term, shells (with cutoffs) and contracted coefficients on the device.
    general: Option<GeneralData>,
    /// Specialised form: module and per-term constant data.
    specialised: Option<(Arc<CudaModule>, Vec<SpecConstants>)>,
    n_shells: usize,
    /// Form in use: 1 general, 2 specialised, 0 not yet decided (`MoForm::Auto` with both available:
    /// the first launch times both on the first orbital and keeps the faster).
    choice: AtomicU8,
    /// Hash of what decides which form is faster: the specialised source, the general form's angular
    /// cases and the lattice dimensions.
    shape: u64,
    /// Number of the preparation (whose constants the specialised module holds, see
    /// `EngineState::constants_for`).
    id: u64,
}

struct DcsPrepared {
    atoms: Vec<[f32; 4]>,
}

enum Prepared {
    Mo(MoPrepared),
    Dcs(DcsPrepared),
    Msm(Box<msm::MsmPrepared>),
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
        _ => false,
    }
}

#[derive(Default)]
struct EngineState {
    modules: BTreeMap<u64, Arc<CudaModule>>,
    /// The last few prepared jobs, most recently used last (the HOMO and LUMO of one frame and the
    /// look-ahead frame's field alternate on one engine; each is prepared once).
    jobs: Vec<JobCache>,
    out: Option<CudaSlice<f32>>,
    acc: Option<CudaSlice<f64>>,
    /// Bumped whenever a new job is prepared.
    prep_generation: u64,
    /// (preparation, term) whose constants the specialised module holds.
    constants_for: Option<(u64, usize)>,
    /// MO form measured fastest (1 general, 2 specialised) per kernel shape ([`MoPrepared::shape`]):
    /// the frames of a trajectory share their basis, so the forms are timed against each other once,
    /// not for every frame.
    form_choices: BTreeMap<u64, u8>,
    /// Page-locked host buffer the output is copied back through (grown as needed).
    pinned: Option<cudarc::driver::PinnedHostSlice<f32>>,
}

/// A CUDA device with its context, one stream, and compiled kernels.
pub struct CudaEngine {
    ordinal: usize,
    device_name: String,
    arch: String,
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    state: Mutex<EngineState>,
    form: AtomicU8,
    /// Coulomb kernel variant (`DcsVariant::pack`).
    dcs_variant: AtomicU32,
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
    pub fn new(ordinal: usize) -> Result<CudaEngine, String> {
        libraries_present()?;
        let (ctx, name, arch) = catch("context", || {
            let ctx = CudaContext::new(ordinal).map_err(|e| format!("context creation failed: {e:?}"))?;
            let name = ctx.name().unwrap_or_else(|_| "unknown device".into());
            let (maj, min) = ctx
                .compute_capability()
                .map_err(|e| format!("compute capability: {e:?}"))?;
            Ok((ctx, name, format!("compute_{maj}{min}")))
        })?;
        let stream = catch("stream", || {
            ctx.new_stream().map_err(|e| format!("stream creation failed: {e:?}"))
        })?;
        let engine = CudaEngine {
            ordinal,
            device_name: name,
            arch,
            ctx,
            stream,
            state: Mutex::new(EngineState::default()),
            form: AtomicU8::new(0),
            dcs_variant: AtomicU32::new(DcsVariant::DEFAULT.pack()),
            fail_all: AtomicBool::new(false),
        };
        {
            let mut st = engine.lock_state().map_err(|e| e.to_string())?;
            engine.module(&mut st, UTIL_SRC).map_err(|e| e.to_string())?;
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

    fn mo_form(&self) -> MoForm {
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
        })
    }

    fn lock_state(&self) -> Result<std::sync::MutexGuard<'_, EngineState>, ComputeError> {
        self.state
            .lock()
            .map_err(|_| ComputeError::Device("engine state poisoned by an earlier panic".into()))
    }

    fn module(&self, st: &mut EngineState, src: &str) -> Result<Arc<CudaModule>, ComputeError> {
        let key = fnv1a(&[src, &self.arch]);
        if let Some(m) = st.modules.get(&key) {
            return Ok(m.clone());
        }
        dump_source(src, key);
        let ptx = compile_ptx(src, &self.arch).map_err(ComputeError::Device)?;
        let ctx = self.ctx.clone();
        let module = catch("module load", || {
            ctx.load_module(cudarc::nvrtc::Ptx::from_src(ptx))
                .map_err(|e| format!("module load failed: {e:?}"))
        })
        .map_err(ComputeError::Device)?;
        st.modules.insert(key, module.clone());
        Ok(module)
    }

    fn function(module: &Arc<CudaModule>, name: &str) -> Result<CudaFunction, ComputeError> {
        module.load_function(name).map_err(dev_err(name))
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
            (Field::Potential, FieldInput::Charges(q)) => {
                if q.positions_bohr.len() != q.charges_e.len() {
                    return Err(ComputeError::WrongInput(Field::Potential, "one charge per position"));
                }
                let o = job.lattice.origin_bohr;
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
                Prepared::Dcs(DcsPrepared { atoms })
            }
            (Field::Potential, FieldInput::Electrostatics(plan)) => Prepared::Msm(Box::new(self.prepare_msm(plan)?)),
            (Field::Potential, FieldInput::DeferredElectrostatics(d)) => {
                Prepared::Msm(Box::new(self.prepare_msm(&*d.plan()?)?))
            }
            (Field::Potential, _) => return Err(ComputeError::WrongInput(Field::Potential, "point charges")),
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

    fn prepare_mo(
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
            // Only the angular cases the basis needs are compiled (fewer registers).
            let src = format!(
                "#define GEN_MAX_L {}\n{MO_COMMON_SRC}\n{MO_GENERAL_SRC}",
                wf.basis.max_l()
            );
            let module = self.module(st, &src)?;
            let mut prims = Vec::new();
            let mut shell_base = Vec::new();
            for s in &plan.shells {
                let start = prims.len() / 2;
                for &(a2, d) in &s.prims {
                    prims.push(a2 as f32);
                    prims.push(d as f32);
                }
                shell_base.push((start as i32, s.prims.len() as i32));
            }
            let prims_dev = self.stream.clone_htod(&prims).map_err(dev_err("upload"))?;
            let mut per_term = Vec::new();
            for t in &terms {
                let cut2 = plan.cutoffs2(&t.poly);
                let shells: Vec<GpuShell> = plan
                    .shells
                    .iter()
                    .zip(&plan.coef_offsets)
                    .zip(shell_base.iter().zip(&cut2))
                    .map(|((s, &off), (&(ps, np), &c2))| GpuShell {
                        center: [
                            (s.center_bohr[0] - o[0]) as f32,
                            (s.center_bohr[1] - o[1]) as f32,
                            (s.center_bohr[2] - o[2]) as f32,
                        ],
                        cutoff2: c2 as f32,
                        l: s.l as i32,
                        prim_start: ps,
                        nprim: np,
                        coef_start: off as i32,
                    })
                    .collect();
                let coefs: Vec<f32> = t.poly.iter().map(|&v| v as f32).collect();
                let coefs = if coefs.is_empty() { vec![0.0] } else { coefs };
                let sd = if shells.is_empty() {
                    self.stream.clone_htod(&[GpuShell::default()])
                } else {
                    self.stream.clone_htod(&shells)
                }
                .map_err(dev_err("upload"))?;
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

    fn ensure_out(&self, st: &mut EngineState, n: usize) -> Result<(), ComputeError> {
        if st.out.as_ref().map(|b| b.len() < n).unwrap_or(true) {
            st.out = None;
            // SAFETY: the buffer is fully written (NaN fill) before any read.
            st.out = Some(unsafe { self.stream.alloc::<f32>(n.max(1)) }.map_err(dev_err("allocation"))?);
        }
        Ok(())
    }

    /// Runs the kernels for `z_range` of the job, leaving the values in the device output buffer.
    fn run_device(&self, st: &mut EngineState, job: &FieldJob, z_range: &Range<usize>) -> Result<usize, ComputeError> {
        let n = slab_len(&job.lattice, z_range);
        let d = job.lattice.dims;
        if d[0] > i32::MAX as usize / 2 || d[1] > i32::MAX as usize / 2 || z_range.end > d[2] || n > i32::MAX as usize {
            return Err(ComputeError::Device("lattice too large for one launch".into()));
        }
        if n == 0 {
            return Ok(0);
        }
        self.ctx.bind_to_thread().map_err(dev_err("bind"))?;
        let prepared = self.prepare(st, job)?;
        self.ensure_out(st, n)?;
        // Poison the output so an unwritten point shows as NaN.
        let fill_module = self.module(st, UTIL_SRC)?;
        let fill = Self::function(&fill_module, "fill_nan")?;
        {
            let out = st
                .out
                .as_mut()
                .ok_or_else(|| ComputeError::Device("no output buffer".into()))?;
            let ni = n as i32;
            let mut b = self.stream.launch_builder(&fill);
            b.arg(&mut *out).arg(&ni);
            // SAFETY: the kernel writes `n` floats into a buffer of at least `n`.
            unsafe { b.launch(LaunchConfig::for_num_elems(n as u32)) }.map_err(dev_err("fill launch"))?;
        }
        match &*prepared {
            Prepared::Mo(m) => self.launch_mo(st, m, job, z_range)?,
            Prepared::Dcs(p) => self.launch_dcs(st, p, job, z_range)?,
            Prepared::Msm(p) => {
                let module = self.module(st, msm::MSM_SRC)?;
                let out = st
                    .out
                    .as_mut()
                    .ok_or_else(|| ComputeError::Device("no output buffer".into()))?;
                self.launch_msm(out, &module, p, job, z_range)?
            }
        }
        Ok(n)
    }

    fn lattice_args(lattice: &Lattice, z_range: &Range<usize>) -> LatticeArgs {
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

    fn launch_mo(
        &self,
        st: &mut EngineState,
        m: &MoPrepared,
        job: &FieldJob,
        z_range: &Range<usize>,
    ) -> Result<(), ComputeError> {
        let g = Self::lattice_args(&job.lattice, z_range);
        let cfg = LaunchConfig {
            grid_dim: (
                (g.nx as u32).div_ceil(MO_BLOCK.0),
                (g.ny as u32).div_ceil(MO_BLOCK.1),
                (g.nz as u32).div_ceil(MO_BLOCK.2),
            ),
            block_dim: MO_BLOCK,
            shared_mem_bytes: 0,
        };
        if cfg.grid_dim.1 > 65535 || cfg.grid_dim.2 > 65535 {
            return Err(ComputeError::Device("lattice too large for one launch".into()));
        }
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
            let flags = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
            let ev: Vec<_> = (0..3)
                .map(|_| self.ctx.new_event(flags))
                .collect::<Result<_, _>>()
                .map_err(dev_err("event"))?;
            let [e0, e1, e2] = ev.as_slice() else {
                return Err(ComputeError::Device("events".into()));
            };
            e0.record(&self.stream).map_err(dev_err("event record"))?;
            self.launch_mo_term(out, constants_for, m, 0, false, &g, cfg, job_id)?;
            e1.record(&self.stream).map_err(dev_err("event record"))?;
            self.launch_mo_term(out, constants_for, m, 0, true, &g, cfg, job_id)?;
            e2.record(&self.stream).map_err(dev_err("event record"))?;
            e2.synchronize().map_err(dev_err("event sync"))?;
            let t_general = e0.elapsed_ms(e1).map_err(dev_err("elapsed"))?;
            let t_spec = e1.elapsed_ms(e2).map_err(dev_err("elapsed"))?;
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

    fn launch_dcs(
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

    /// Times the kernels for the whole lattice of `job` (no host transfer): returns one duration in
    /// milliseconds per repetition, measured with CUDA events after one untimed warm-up run.
    pub fn time_kernels(&self, job: &FieldJob, repetitions: usize) -> Result<Vec<f64>, ComputeError> {
        let mut st = self.lock_state()?;
        let z = 0..job.lattice.dims[2];
        self.run_device(&mut st, job, &z)?;
        self.stream.synchronize().map_err(dev_err("synchronize"))?;
        let flags = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
        let mut times = Vec::with_capacity(repetitions);
        for _ in 0..repetitions {
            let start = self.ctx.new_event(flags).map_err(dev_err("event"))?;
            let end = self.ctx.new_event(flags).map_err(dev_err("event"))?;
            start.record(&self.stream).map_err(dev_err("event record"))?;
            self.run_device(&mut st, job, &z)?;
            end.record(&self.stream).map_err(dev_err("event record"))?;
            end.synchronize().map_err(dev_err("event sync"))?;
            times.push(start.elapsed_ms(&end).map_err(dev_err("elapsed"))? as f64);
        }
        Ok(times)
    }
}

fn copy_symbol(
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
    stream.memcpy_htod(data, &mut view).map_err(dev_err(name))
}

/// The orbitals (with store modes and weights) whose sum makes `field`.
fn orbital_terms(field: &Field, wf: &Wavefunction, plan: &BasisPlan) -> Result<Vec<OrbitalTerm>, ComputeError> {
    let one = |spin: Spin, index: usize| -> Result<Vec<f64>, ComputeError> {
        let set = wf
            .orbitals(spin)
            .ok_or(ComputeError::WrongInput(field.clone(), "beta orbitals"))?;
        let c = set.orbital(index).ok_or(ComputeError::NoSuchOrbital {
            index,
            count: set.len(),
        })?;
        plan.contract(c)
    };
    let weighted = |list: &[(Spin, f64)]| -> Result<Vec<OrbitalTerm>, ComputeError> {
        let mut out = Vec::new();
        for &(spin, sign) in list {
            let Some(set) = wf.orbitals(spin) else { continue };
            for (i, &occ) in set.occupations.iter().enumerate() {
                let w = sign * occ;
                if w.abs() > 1e-12 {
                    let poly = one(spin, i)?;
                    let mode = if out.is_empty() { 1 } else { 2 };
                    out.push(OrbitalTerm {
                        poly,
                        mode,
                        weight: w as f32,
                    });
                }
            }
        }
        Ok(out)
    };
    let mut terms = match field {
        Field::Orbital { spin, index } => vec![OrbitalTerm {
            poly: one(*spin, *index)?,
            mode: 0,
            weight: 1.0,
        }],
        Field::OrbitalSquared { spin, index } => {
            vec![OrbitalTerm {
                poly: one(*spin, *index)?,
                mode: 1,
                weight: 1.0,
            }]
        }
        Field::Density => match wf.spin {
            SpinKind::Unrestricted => weighted(&[(Spin::Alpha, 1.0), (Spin::Beta, 1.0)])?,
            _ => weighted(&[(Spin::Alpha, 1.0)])?,
        },
        Field::SpinDensity => match wf.spin {
            SpinKind::Unrestricted => weighted(&[(Spin::Alpha, 1.0), (Spin::Beta, -1.0)])?,
            SpinKind::Restricted => Vec::new(),
            SpinKind::RestrictedOpen => {
                // alpha occupation min(occ, 1), beta the rest: the spin is alpha minus beta.
                let mut out = Vec::new();
                for (i, &occ) in wf.alpha.occupations.iter().enumerate() {
                    let w = occ.min(1.0) - (occ - occ.min(1.0));
                    if w.abs() > 1e-12 {
                        let mode = if out.is_empty() { 1 } else { 2 };
                        out.push(OrbitalTerm {
                            poly: one(Spin::Alpha, i)?,
                            mode,
                            weight: w as f32,
                        });
                    }
                }
                out
            }
        },
        Field::Potential => return Err(ComputeError::WrongInput(Field::Potential, "point charges")),
    };
    if terms.is_empty() {
        // A field that is zero everywhere: one launch with weight 0 writes the zeros.
        terms.push(OrbitalTerm {
            poly: vec![0.0; plan.n_coefs],
            mode: 1,
            weight: 0.0,
        });
    }
    Ok(terms)
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
        self.run_device(&mut st, job, &z_range)?;
        let t_launched = t0.elapsed();
        let EngineState {
            out: device_out,
            pinned,
            ..
        } = &mut *st;
        let buf = device_out
            .as_ref()
            .ok_or_else(|| ComputeError::Device("no output buffer".into()))?;
        // Small and medium slabs come back through a page-locked buffer kept by the engine (a DMA
        // at full bus speed, then a parallel copy that also checks the values); larger ones are copied
        // straight into `out` (the driver stages pageable memory itself), so the engine never holds
        // more than `PINNED_MAX_POINTS` of page-locked memory.
        if need <= PINNED_MAX_POINTS {
            if pinned.as_ref().is_none_or(|p| p.len() < need) {
                *pinned = None;
                // SAFETY: the buffer's values are only read after the copy below has written them.
                let fresh = unsafe { self.ctx.alloc_pinned_with_flags::<f32>(need, 0) };
                *pinned = Some(fresh.map_err(dev_err("page-locked allocation"))?);
            }
        } else {
            *pinned = None;
        }
        let finite = match pinned.as_mut() {
            Some(host) => {
                self.stream
                    .memcpy_dtoh(&buf.slice(0..need), host)
                    .map_err(dev_err("download"))?;
                self.stream.synchronize().map_err(dev_err("synchronize"))?;
                let host = host.as_slice().map_err(dev_err("download"))?;
                let src = host
                    .get(..need)
                    .ok_or_else(|| ComputeError::Device("short page-locked buffer".into()))?;
                copy_all_finite(src, out)
            }
            None => {
                self.stream
                    .memcpy_dtoh(&buf.slice(0..need), out)
                    .map_err(dev_err("download"))?;
                self.stream.synchronize().map_err(dev_err("synchronize"))?;
                all_finite(out)
            }
        };
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

    fn checks_output(&self) -> bool {
        true
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
