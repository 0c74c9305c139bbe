//! The Coulomb kernel (direct summation, `kernels/dcs.cu`): its variants ([`DcsVariant`]), the
//! charges prepared relative to the lattice origin, and the launches that sum them chunk by chunk in
//! constant memory. Called by the engine in `super::engine` for potential maps of point charges.

use super::dev_err;
use super::engine::{CudaEngine, EngineState, copy_symbol};
use crate::compute::MIN_DISTANCE_BOHR;
use crate::compute::esp::screening::ScreenGpu;
use crate::compute::{ComputeError, Field, FieldJob, PointCharges, slab_len};
use crate::model::Lattice;
use cudarc::driver::{CudaFunction, CudaModule, CudaSlice, CudaStream, LaunchConfig, PushKernelArg};
use std::ops::Range;
use std::sync::Arc;

pub const DCS_SRC: &str = include_str!("../../../kernels/dcs.cu");

/// Atoms per constant-memory chunk of the Coulomb kernel (`DCS_CHUNK` in `kernels/dcs.cu`).
pub const DCS_CHUNK: usize = 4000;
/// Threads per block along x (`DCS_BLOCK_X` in `kernels/dcs.cu`); the block's rows are the
/// variant's `block_rows` (`DCS_BLOCK_Y`).
const DCS_BLOCK_X: u32 = 32;
/// sqrt(1/2): coordinates, spacings and charges are scaled by it for the kernel, whose square
/// distances are then r^2 / 2 (see `kernels/dcs.cu`).
const HALF_SQRT: f64 = std::f64::consts::FRAC_1_SQRT_2;
/// Lattice points per thread of `dcs_screened_chunk` (`DCS_SCREENED_POINTS` in kernels/dcs.cu).
const SCREENED_POINTS: u32 = 4;

/// How the soft evaluations of the Coulomb kernel compute 1/sqrt on the FMA pipe (`DCS_RSQ` in
/// `kernels/dcs.cu`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SoftRsqrt {
    /// `rsqrt_fma`: seed, one Newton step, one third-order step (relative error below 2e-7).
    Third,
    /// `rsqrt_newton2`: tuned seed and two tuned Newton steps (two instructions fewer, below 8e-7).
    Newton2,
}

/// A variant of the Coulomb kernel: lattice points per row and thread (`DCS_UNROLL`), rows per
/// thread (`DCS_ROWS`), how many of the `unroll * rows` evaluations per atom take their reciprocal
/// square root on the FMA pipe instead of the special-function unit (`DCS_SOFT`), and how
/// (`DCS_RSQ`); the block's shape: rows of 32 threads per block (`DCS_BLOCK_Y`, 8 unless told)
/// and the blocks per multiprocessor the compiler must leave registers for (`DCS_MIN_BLOCKS`, 0:
/// no such bound); and the atoms per iteration of the atom loop (`DCS_ATOM_UNROLL`, 2 unless
/// told), a register cap in place of the minimum blocks (`DCS_MAX_REGS`) and a rotation of which
/// evaluations go to the FMA pipe (`DCS_SOFT_PHASE`). Text forms: `U:S` or `UxV:S` or
/// `UxV:S:newton2`, each optionally followed by `/bY` (block rows), `/mN` (minimum blocks), `/aN`
/// (atoms per iteration), `/rN` (registers) and `/pN` (phase); `sfu` (8x4:0, all on the SFU), `newton`
/// (8x4:32:newton2, all on the FMA pipe) and `mixed:F` (8x4 with the fraction F of the 32
/// evaluations, rounded, soft by `newton2`). `/t2` alternates the chunks between two streams.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DcsVariant {
    pub unroll: u32,
    pub rows: u32,
    pub soft: u32,
    pub rsqrt: SoftRsqrt,
    /// Rows of 32 threads per block (1 to 8).
    pub block_rows: u32,
    /// Blocks per multiprocessor asked of the compiler's register allocation (0: none; 1 to 8).
    pub min_blocks: u32,
    /// Atoms per iteration of the atom loop (1 to 4).
    pub atom_unroll: u32,
    /// Registers per thread the compiler may use (0: no cap; otherwise 32 to 255, in place of
    /// `min_blocks`).
    pub max_regs: u32,
    /// Rotation of the pattern of FMA-pipe evaluations (0 to 63).
    pub soft_phase: u32,
    /// Ranges each chunk's atoms are split into, each summed by blocks of their own so that a
    /// launch fills the multiprocessors' last wave (1 to 8; 0: chosen per launch from the
    /// device's multiprocessors and the kernel's occupancy, [`dcs_parts`]).
    pub parts: u32,
    /// Streams the chunks alternate between (1 or 2): with two, each has its own module (its own
    /// constant-memory chunk) and accumulator, so one chunk's launch fills the multiprocessors the
    /// other's last blocks leave idle.
    pub streams: u32,
}

impl DcsVariant {
    /// The variant the engine uses unless told otherwise: 8x8:20:newton2/b4/m3/p19/s0/t2, the fastest
    /// measured on an H200 (figures beside the other variants: `benches/RESULTS.md`): 64 evaluations per atom and
    /// thread, blocks of 4 x 32 threads with registers for 3 of them per multiprocessor (168 each),
    /// the FMA-pipe evaluations' pattern rotated by 19 (the compiler then spaces the SFU
    /// instructions of the hot loop better), each chunk's atoms split into as many ranges as fill the
    /// waves, and the chunks alternating between two streams.
    pub const DEFAULT: DcsVariant = DcsVariant {
        unroll: 8,
        rows: 8,
        soft: 20,
        rsqrt: SoftRsqrt::Newton2,
        block_rows: 4,
        min_blocks: 3,
        atom_unroll: 2,
        max_regs: 0,
        soft_phase: 19,
        parts: 0,
        streams: 2,
    };

    /// Checks the limits the kernel needs: 1 to 32 points per row, 1 to 12 rows, at most 128
    /// evaluations per atom, at most all of them soft.
    pub fn new(unroll: u32, rows: u32, soft: u32, rsqrt: SoftRsqrt) -> Option<DcsVariant> {
        ((1..=32).contains(&unroll) && (1..=12).contains(&rows) && unroll * rows <= 128 && soft <= unroll * rows)
            .then_some(DcsVariant {
                unroll,
                rows,
                soft,
                rsqrt,
                block_rows: 8,
                min_blocks: 0,
                atom_unroll: 2,
                max_regs: 0,
                soft_phase: 0,
                parts: 1,
                streams: 1,
            })
    }

    /// The same evaluations per thread in blocks of `block_rows` rows of 32 threads (1 to 8), with
    /// registers left for `min_blocks` blocks per multiprocessor (0: no bound; 1 to 8).
    pub fn with_blocks(self, block_rows: u32, min_blocks: u32) -> Option<DcsVariant> {
        ((1..=8).contains(&block_rows) && min_blocks <= 8).then_some(DcsVariant {
            block_rows,
            min_blocks,
            ..self
        })
    }

    /// The same variant with `atom_unroll` atoms per iteration of the atom loop (1 to 4).
    pub fn with_atom_unroll(self, atom_unroll: u32) -> Option<DcsVariant> {
        (1..=4)
            .contains(&atom_unroll)
            .then_some(DcsVariant { atom_unroll, ..self })
    }

    /// The same variant with at most `max_regs` registers per thread (0: no cap; 32 to 255, not
    /// with `min_blocks`) and the pattern of FMA-pipe evaluations rotated by `soft_phase` (0 to 63).
    pub fn with_schedule(self, max_regs: u32, soft_phase: u32) -> Option<DcsVariant> {
        let regs_ok = max_regs == 0 || ((32..=255).contains(&max_regs) && self.min_blocks == 0);
        (regs_ok && soft_phase < 64).then_some(DcsVariant {
            max_regs,
            soft_phase,
            ..self
        })
    }

    /// The same variant with each chunk's atoms split into `parts` ranges (1 to 8; 0: chosen per
    /// launch).
    pub fn with_parts(self, parts: u32) -> Option<DcsVariant> {
        (parts <= 8).then_some(DcsVariant { parts, ..self })
    }

    /// The same variant on `streams` streams (1 or 2).
    pub fn with_streams(self, streams: u32) -> Option<DcsVariant> {
        (1..=2).contains(&streams).then_some(DcsVariant { streams, ..self })
    }

    /// Fraction of the evaluations whose reciprocal square root runs on the FMA pipe.
    pub fn soft_fraction(&self) -> f64 {
        f64::from(self.soft) / f64::from(self.unroll * self.rows)
    }

    pub(super) fn source(&self) -> String {
        format!(
            "#define DCS_UNROLL {}\n#define DCS_ROWS {}\n#define DCS_SOFT {}\n#define DCS_RSQ {}\n\
             #define DCS_BLOCK_Y {}\n#define DCS_MIN_BLOCKS {}\n#define DCS_ATOM_UNROLL {}\n\
             #define DCS_MAX_REGS {}\n#define DCS_SOFT_PHASE {}\n{DCS_SRC}",
            self.unroll,
            self.rows,
            self.soft,
            self.rsqrt as u32,
            self.block_rows,
            self.min_blocks,
            self.atom_unroll,
            self.max_regs,
            self.soft_phase
        )
    }

    pub(super) fn pack(&self) -> u64 {
        (u64::from(self.streams) << 50)
            | (u64::from(self.parts) << 46)
            | (u64::from(self.soft_phase) << 40)
            | (u64::from(self.max_regs) << 32)
            | u64::from(
                (self.min_blocks << 28)
                    | (self.atom_unroll << 9)
                    | (self.block_rows << 24)
                    | (self.unroll << 16)
                    | (self.rows << 12)
                    | ((self.rsqrt as u32) << 8)
                    | self.soft,
            )
    }

    pub(super) fn unpack(v64: u64) -> DcsVariant {
        let v = (v64 & 0xffff_ffff) as u32;
        let (max_regs, soft_phase) = (((v64 >> 32) & 0xff) as u32, ((v64 >> 40) & 0x3f) as u32);
        let parts = ((v64 >> 46) & 0xf) as u32;
        let rsqrt = if (v >> 8) & 1 == 1 {
            SoftRsqrt::Newton2
        } else {
            SoftRsqrt::Third
        };
        DcsVariant::new((v >> 16) & 0xff, (v >> 12) & 0xf, v & 0xff, rsqrt)
            .and_then(|x| x.with_blocks((v >> 24) & 0xf, v >> 28))
            .and_then(|x| x.with_atom_unroll((v >> 9) & 0x7))
            .and_then(|x| x.with_schedule(max_regs, soft_phase))
            .and_then(|x| x.with_parts(parts))
            .and_then(|x| x.with_streams(((v64 >> 50) & 3) as u32))
            .unwrap_or(DcsVariant::DEFAULT)
    }
}

impl std::fmt::Display for DcsVariant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}x{}:{}", self.unroll, self.rows, self.soft)?;
        if self.rsqrt == SoftRsqrt::Newton2 {
            f.write_str(":newton2")?;
        }
        // Each suffix, written where it differs from what the text form assumes without it.
        for (tag, value, unsaid) in [
            ('b', self.block_rows, 8),
            ('m', self.min_blocks, 0),
            ('a', self.atom_unroll, 2),
            ('r', self.max_regs, 0),
            ('p', self.soft_phase, 0),
            ('s', self.parts, 1),
            ('t', self.streams, 1),
        ] {
            if value != unsaid {
                write!(f, "/{tag}{value}")?;
            }
        }
        Ok(())
    }
}

/// Text that does not name a Coulomb kernel variant.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "'{0}' is not a Coulomb kernel variant (U:S, UxV:S or UxV:S:newton2 with U <= 32, V <= 12, U*V <= 128, \
     S <= U*V, optionally followed by /bY with 1 <= Y <= 8 rows of 32 threads per block, /mN with \
     N <= 8 blocks per multiprocessor, /aN with 1 <= N <= 4 atoms per loop iteration, /rN with \
     32 <= N <= 255 registers (not with /mN), /pN with N < 64, /sN with N <= 8 atom ranges per chunk (0: \
     chosen per launch) and /tN with 1 <= N <= 2 streams; or sfu, newton, mixed:F with 0 <= F <= 1)"
)]
pub struct BadDcsVariant(pub String);

impl std::str::FromStr for DcsVariant {
    type Err = BadDcsVariant;
    fn from_str(s: &str) -> Result<DcsVariant, BadDcsVariant> {
        let bad = || BadDcsVariant(s.to_string());
        let num = |x: &str| x.trim().parse::<u32>().map_err(|_| bad());
        let mut pieces = s.split('/');
        let t = pieces.next().unwrap_or_default().trim();
        let (mut block_rows, mut min_blocks, mut atom_unroll) = (None, None, None);
        let (mut max_regs, mut soft_phase, mut parts, mut streams) = (None, None, None, None);
        for piece in pieces {
            let piece = piece.trim();
            let slot = match piece.get(..1) {
                Some("b") => &mut block_rows,
                Some("m") => &mut min_blocks,
                Some("a") => &mut atom_unroll,
                Some("r") => &mut max_regs,
                Some("p") => &mut soft_phase,
                Some("s") => &mut parts,
                Some("t") => &mut streams,
                _ => return Err(bad()),
            };
            if slot.replace(num(piece.get(1..).unwrap_or_default())?).is_some() {
                return Err(bad());
            }
        }
        let base = Self::parse_base(t).ok_or_else(bad)?;
        base.with_blocks(block_rows.unwrap_or(8), min_blocks.unwrap_or(0))
            .and_then(|x| x.with_atom_unroll(atom_unroll.unwrap_or(2)))
            .and_then(|x| x.with_schedule(max_regs.unwrap_or(0), soft_phase.unwrap_or(0)))
            .and_then(|x| x.with_parts(parts.unwrap_or(1)))
            .and_then(|x| x.with_streams(streams.unwrap_or(1)))
            .ok_or_else(bad)
    }
}

impl DcsVariant {
    /// The text form without its block suffixes.
    fn parse_base(t: &str) -> Option<DcsVariant> {
        let num = |x: &str| x.trim().parse::<u32>().ok();
        match t {
            "sfu" => return DcsVariant::new(8, 4, 0, SoftRsqrt::Third),
            "newton" => return DcsVariant::new(8, 4, 32, SoftRsqrt::Newton2),
            _ => {}
        }
        if let Some(f) = t.strip_prefix("mixed:") {
            let f: f64 = f.trim().parse().ok()?;
            if !(0.0..=1.0).contains(&f) {
                return None;
            }
            return DcsVariant::new(8, 4, (32.0 * f).round() as u32, SoftRsqrt::Newton2);
        }
        let mut parts = t.split(':');
        let shape = parts.next()?;
        let soft = num(parts.next()?)?;
        let rsqrt = match parts.next().map(str::trim) {
            None | Some("third") => SoftRsqrt::Third,
            Some("newton2") => SoftRsqrt::Newton2,
            Some(_) => return None,
        };
        if parts.next().is_some() {
            return None;
        }
        let (u, v) = match shape.split_once('x') {
            Some((u, v)) => (num(u)?, num(v)?),
            None => (num(shape)?, 1),
        };
        DcsVariant::new(u, v, soft, rsqrt)
    }
}

pub(super) struct DcsPrepared {
    pub(super) atoms: Vec<[f32; 4]>,
    /// A screened model ([`ScreenGpu`] model 1 or 2): summed by `dcs_screened_chunk`.
    pub(super) screen: Option<ScreenGpu>,
}

impl DcsPrepared {
    /// The charges as the kernel reads them: x, y, z relative to the lattice origin and the charge,
    /// each times sqrt(1/2) (the kernel works with half-square distances), in float.
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
                    ((p[0] - o[0]) * HALF_SQRT) as f32,
                    ((p[1] - o[1]) * HALF_SQRT) as f32,
                    ((p[2] - o[2]) * HALF_SQRT) as f32,
                    (c * HALF_SQRT) as f32,
                ]
            })
            .collect();
        Ok(DcsPrepared { atoms, screen: None })
    }

    /// The same charges summed with the screened model `screen` (vacuum stays the tuned kernel).
    pub(super) fn with_screen(self, screen: ScreenGpu) -> DcsPrepared {
        DcsPrepared {
            screen: (screen.model != 0).then_some(screen),
            ..self
        }
    }
}

/// How many atom ranges (1 to 8) a launch of `blocks` blocks should split each chunk into, with
/// `slots` blocks resident at once on the whole device (0: unknown, then 1): the fewest parts that
/// leave the waves at least 90 % full, or else the fullest last wave. A launch of a few waves
/// loses the idle part of its last one on every chunk (512 blocks on 396 slots run as two waves,
/// the second a third full).
pub fn dcs_parts(blocks: u64, slots: u64) -> u32 {
    if blocks == 0 || slots == 0 {
        return 1;
    }
    // Fraction of the waves' capacity the blocks use.
    let fill = |parts: u64| {
        let b = blocks * parts;
        b as f64 / (b.div_ceil(slots) * slots) as f64
    };
    let mut best = (1u32, fill(1));
    for parts in 1..=8u32 {
        let f = fill(u64::from(parts));
        if f >= 0.9 {
            return parts;
        }
        if f > best.1 + 1e-9 {
            best = (parts, f);
        }
    }
    best.0
}

/// One stream of a Coulomb launch sequence: its module (constant-memory chunk), kernel and
/// accumulator.
struct DcsLane<'a> {
    stream: Arc<CudaStream>,
    module: Arc<CudaModule>,
    chunk: CudaFunction,
    acc: &'a mut CudaSlice<f64>,
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
        if let Some(screen) = p.screen {
            return self.launch_dcs_screened(st, p, screen, job, z_range);
        }
        let variant = self.dcs_variant();
        let source = variant.source();
        let module = self.module(st, &source)?;
        let finish = Self::function(&module, "dcs_finish")?;
        // The streams the chunks alternate between, each with its module: the engine's, and for a
        // variant on two streams a second one whose module's source differs by a comment (so its
        // constant memory is its own).
        let mut streams = vec![(self.stream.clone(), module)];
        if variant.streams == 2 {
            let module2 = self.module(st, &format!("{source}\n// second stream\n"))?;
            let stream2 = match &st.stream2 {
                Some(s) => s.clone(),
                None => {
                    let s = self.ctx.new_stream().map_err(dev_err("stream creation"))?;
                    st.stream2 = Some(s.clone());
                    s
                }
            };
            // Everything queued before (the previous job's reads of the accumulators included).
            stream2.join(&self.stream).map_err(dev_err("stream wait"))?;
            streams.push((stream2, module2));
        }
        let EngineState { acc, acc2, out, .. } = st;
        let nn = n;
        let mut lanes = Vec::with_capacity(streams.len());
        for ((stream, module), buf) in streams.into_iter().zip([acc, acc2]) {
            // Each accumulator allocated on the stream that uses it (allocations are ordered on
            // their stream).
            if buf.as_ref().is_none_or(|b| b.len() < n) {
                *buf = None;
                // SAFETY: zeroed by `dcs_zero` below before use.
                *buf = Some(unsafe { stream.alloc::<f64>(n) }.map_err(dev_err("allocation"))?);
            }
            let acc = buf
                .as_mut()
                .ok_or_else(|| ComputeError::Device("no accumulator".into()))?;
            let zero = Self::function(&module, "dcs_zero")?;
            let mut b = stream.launch_builder(&zero);
            b.arg(&mut *acc).arg(&nn);
            // SAFETY: writes `n` doubles into a buffer of at least `n`.
            unsafe { b.launch(LaunchConfig::for_num_elems(n as u32)) }.map_err(dev_err("dcs_zero launch"))?;
            let chunk = Self::function(&module, "dcs_chunk")?;
            lanes.push(DcsLane {
                stream,
                module,
                chunk,
                acc,
            });
        }
        let first = lanes.first().ok_or_else(|| ComputeError::Device("no stream".into()))?;
        let (nx, ny, nz, k0) = (
            l.dims[0] as i32,
            l.dims[1] as i32,
            z_range.len() as i32,
            z_range.start as i32,
        );
        // Scaled like the charges' coordinates (`DcsPrepared::new`).
        let (sx, sy, sz) = (
            (l.steps_bohr[0][0] * HALF_SQRT) as f32,
            (l.steps_bohr[1][1] * HALF_SQRT) as f32,
            (l.steps_bohr[2][2] * HALF_SQRT) as f32,
        );
        let per_block_x = DCS_BLOCK_X * variant.unroll;
        let per_block_y = variant.block_rows * variant.rows;
        let cfg = LaunchConfig {
            grid_dim: (
                (nx as u32).div_ceil(per_block_x),
                (ny as u32).div_ceil(per_block_y),
                nz as u32,
            ),
            block_dim: (DCS_BLOCK_X, variant.block_rows, 1),
            shared_mem_bytes: 0,
        };
        let parts = match variant.parts {
            0 => {
                let per_sm = first
                    .chunk
                    .occupancy_max_active_blocks_per_multiprocessor(DCS_BLOCK_X * variant.block_rows, 0, None)
                    .unwrap_or(0);
                let blocks = u64::from(cfg.grid_dim.0) * u64::from(cfg.grid_dim.1) * u64::from(cfg.grid_dim.2);
                dcs_parts(blocks, u64::from(per_sm) * u64::from(self.multiprocessors))
            }
            n => n,
        };
        let cfg = LaunchConfig {
            grid_dim: (cfg.grid_dim.0, cfg.grid_dim.1, cfg.grid_dim.2 * parts),
            ..cfg
        };
        if cfg.grid_dim.1 > 65535 || cfg.grid_dim.2 > 65535 {
            return Err(ComputeError::Device("lattice too large for one launch".into()));
        }
        let parts = parts as i32;
        let n_lanes = lanes.len();
        for (c, atoms) in p.atoms.chunks(DCS_CHUNK).enumerate() {
            let lane = lanes
                .get_mut(c % n_lanes)
                .ok_or_else(|| ComputeError::Device("no stream".into()))?;
            copy_symbol(&lane.module, &lane.stream, "dcs_atoms", bytemuck::cast_slice(atoms))?;
            let na = atoms.len() as i32;
            let mut b = lane.stream.launch_builder(&lane.chunk);
            b.arg(&mut *lane.acc)
                .arg(&nx)
                .arg(&ny)
                .arg(&nz)
                .arg(&k0)
                .arg(&sx)
                .arg(&sy)
                .arg(&sz)
                .arg(&na)
                .arg(&parts);
            // SAFETY: reads `na` atoms of constant memory (copied above), writes points inside the slab.
            unsafe { b.launch(cfg) }.map_err(dev_err("dcs_chunk launch"))?;
        }
        let (first, rest) = lanes
            .split_first()
            .ok_or_else(|| ComputeError::Device("no stream".into()))?;
        for lane in rest {
            self.stream.join(&lane.stream).map_err(dev_err("stream wait"))?;
        }
        let out = out
            .as_mut()
            .ok_or_else(|| ComputeError::Device("no output buffer".into()))?;
        // The second accumulator, or the first again when there is none (then not read).
        let second = rest.first().map_or(&*first.acc, |lane| &*lane.acc);
        let two = i32::from(!rest.is_empty());
        let mut b = self.stream.launch_builder(&finish);
        b.arg(&mut *out).arg(&*first.acc).arg(second).arg(&nn).arg(&two);
        // SAFETY: converts `n` doubles (plus `n` more of the second accumulator when `two`) into `n`
        // floats, every buffer at least `n` long.
        unsafe { b.launch(LaunchConfig::for_num_elems(n as u32)) }.map_err(dev_err("dcs_finish launch"))?;
        Ok(())
    }
}

impl CudaEngine {
    /// A screened model's map of one slab: `dcs_screened_chunk` per constant-memory chunk on the
    /// engine's stream (a thread per point, blocks of 32 x 8), then `dcs_finish`.
    fn launch_dcs_screened(
        &self,
        st: &mut EngineState,
        p: &DcsPrepared,
        screen: ScreenGpu,
        job: &FieldJob,
        z_range: &Range<usize>,
    ) -> Result<(), ComputeError> {
        let l = &job.lattice;
        let n = slab_len(l, z_range);
        let module = self.module(st, &self.dcs_variant().source())?;
        let zero = Self::function(&module, "dcs_zero")?;
        let chunk = Self::function(&module, "dcs_screened_chunk")?;
        let finish = Self::function(&module, "dcs_finish")?;
        let EngineState { acc, out, .. } = st;
        if acc.as_ref().is_none_or(|b| b.len() < n) {
            *acc = None;
            // SAFETY: zeroed by `dcs_zero` below before use.
            *acc = Some(unsafe { self.stream.alloc::<f64>(n) }.map_err(dev_err("allocation"))?);
        }
        let acc = acc
            .as_mut()
            .ok_or_else(|| ComputeError::Device("no accumulator".into()))?;
        let mut b = self.stream.launch_builder(&zero);
        b.arg(&mut *acc).arg(&n);
        // SAFETY: writes `n` doubles into a buffer of at least `n`.
        unsafe { b.launch(LaunchConfig::for_num_elems(n as u32)) }.map_err(dev_err("dcs_zero launch"))?;
        let (nx, ny, nz, k0) = (
            l.dims[0] as i32,
            l.dims[1] as i32,
            z_range.len() as i32,
            z_range.start as i32,
        );
        let (sx, sy, sz) = (
            (l.steps_bohr[0][0] * HALF_SQRT) as f32,
            (l.steps_bohr[1][1] * HALF_SQRT) as f32,
            (l.steps_bohr[2][2] * HALF_SQRT) as f32,
        );
        let (model, sa, sb) = (screen.model as i32, screen.a as f32, screen.b as f32);
        let min2 = (MIN_DISTANCE_BOHR * MIN_DISTANCE_BOHR) as f32;
        let cfg = LaunchConfig {
            grid_dim: (
                (nx as u32).div_ceil(32 * SCREENED_POINTS),
                (ny as u32).div_ceil(8),
                nz as u32,
            ),
            block_dim: (32, 8, 1),
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
                .arg(&na)
                .arg(&model)
                .arg(&sa)
                .arg(&sb)
                .arg(&min2);
            // SAFETY: reads `na` atoms of constant memory (copied above), writes points inside the slab.
            unsafe { b.launch(cfg) }.map_err(dev_err("dcs_screened_chunk launch"))?;
        }
        let out = out
            .as_mut()
            .ok_or_else(|| ComputeError::Device("no output buffer".into()))?;
        let two = 0i32;
        let mut b = self.stream.launch_builder(&finish);
        b.arg(&mut *out).arg(&*acc).arg(&*acc).arg(&n).arg(&two);
        // SAFETY: converts `n` doubles into `n` floats, both buffers at least `n` long.
        unsafe { b.launch(LaunchConfig::for_num_elems(n as u32)) }.map_err(dev_err("dcs_finish launch"))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atom_ranges_fill_the_last_wave() {
        // The default shape on 132 multiprocessors with three blocks each: 512 blocks fill 1.29
        // waves; three ranges make 1536 blocks, 3.88 waves (97 %).
        assert_eq!(dcs_parts(512, 396), 3);
        // Already full waves, or many of them: no split.
        assert_eq!(dcs_parts(792, 396), 1);
        assert_eq!(dcs_parts(100_000, 396), 1);
        // Unknown occupancy, or nothing to launch.
        assert_eq!(dcs_parts(512, 0), 1);
        assert_eq!(dcs_parts(0, 396), 1);
        // A launch smaller than one wave takes the fewest ranges that fill one.
        assert_eq!(dcs_parts(99, 396), 4);
        // Every choice is within the limits, and no worse than one range.
        for blocks in 1..2000u64 {
            for slots in [1u64, 7, 108, 264, 396, 528] {
                let p = dcs_parts(blocks, slots);
                assert!((1..=8).contains(&p));
                let fill = |n: u64| (blocks * n) as f64 / ((blocks * n).div_ceil(slots) * slots) as f64;
                assert!(fill(u64::from(p)) + 1e-12 >= fill(1), "{blocks} blocks, {slots} slots");
            }
        }
    }

    #[test]
    fn dcs_variants_parse_and_reject_what_the_kernel_cannot_do() {
        let v = |u, r, k, m| DcsVariant {
            unroll: u,
            rows: r,
            soft: k,
            rsqrt: m,
            block_rows: 8,
            min_blocks: 0,
            atom_unroll: 2,
            max_regs: 0,
            soft_phase: 0,
            parts: 1,
            streams: 1,
        };
        use SoftRsqrt::{Newton2, Third};
        assert_eq!("8:1".parse::<DcsVariant>(), Ok(v(8, 1, 1, Third)));
        assert_eq!(" 16 : 0 ".parse::<DcsVariant>(), Ok(v(16, 1, 0, Third)));
        assert_eq!("8x2:3:newton2".parse::<DcsVariant>(), Ok(v(8, 2, 3, Newton2)));
        assert_eq!("8x4:5:third".parse::<DcsVariant>(), Ok(v(8, 4, 5, Third)));
        assert_eq!("sfu".parse::<DcsVariant>(), Ok(v(8, 4, 0, Third)));
        assert_eq!("newton".parse::<DcsVariant>(), Ok(v(8, 4, 32, Newton2)));
        assert_eq!("mixed:0.28".parse::<DcsVariant>(), Ok(v(8, 4, 9, Newton2)));
        let blocks = |x: DcsVariant, b, m| x.with_blocks(b, m).unwrap_or(DcsVariant::DEFAULT);
        assert_eq!(
            "8x4:10:newton2/b4/m3".parse::<DcsVariant>(),
            Ok(blocks(v(8, 4, 10, Newton2), 4, 3))
        );
        assert_eq!(
            "8x4:10:newton2 / m2".parse::<DcsVariant>(),
            Ok(blocks(v(8, 4, 10, Newton2), 8, 2))
        );
        assert_eq!("sfu/b2".parse::<DcsVariant>(), Ok(blocks(v(8, 4, 0, Third), 2, 0)));
        assert_eq!(
            "8x8:20:newton2/b4/m3/a1".parse::<DcsVariant>().map(|x| x.atom_unroll),
            Ok(1)
        );
        assert_eq!("8x8:20:newton2/b4/m3/s0".parse::<DcsVariant>().map(|x| x.parts), Ok(0));
        assert_eq!("8x8:20:newton2/s3".parse::<DcsVariant>().map(|x| x.parts), Ok(3));
        assert_eq!(
            "8x8:20:newton2/s0/t2"
                .parse::<DcsVariant>()
                .map(|x| (x.parts, x.streams)),
            Ok((0, 2))
        );
        assert_eq!(
            "8x12:30:newton2/b2/m4"
                .parse::<DcsVariant>()
                .map(|x| (x.unroll, x.rows, x.soft)),
            Ok((8, 12, 30))
        );
        for bad in [
            "",
            "8",
            "8:9",
            "0:0",
            "33:1",
            "-1:0",
            "8:x",
            "4294967295:0",
            "8x13:1",
            "32x5:1",
            "16x9:1",
            "8x2:17",
            "8:1:x",
            "8:1:third:1",
            "mixed:1.5",
            "mixed:x",
            "8x4:1/b0",
            "8x4:1/b9",
            "8x4:1/m9",
            "8x4:1/b4/b4",
            "8x4:1/x4",
            "8x4:1/",
            "8x4:1/b",
            "8x4:1/a0",
            "8x4:1/a5",
            "8x4:1/r16",
            "8x4:1/r256",
            "8x4:1/m3/r128",
            "8x4:1/p64",
            "8x4:1/s9",
            "8x4:1/s1/s2",
            "8x4:1/t0",
            "8x4:1/t3",
            "8x4:1/t2/t2",
        ] {
            assert!(bad.parse::<DcsVariant>().is_err(), "{bad}");
        }
        // Packing keeps every valid variant, and the text form reads back.
        for u in 1..=32 {
            for r in 1..=12 {
                for k in (0..=(u * r).min(128)).filter(|k| k % 5 == 0 || *k == u * r) {
                    for m in [Third, Newton2] {
                        for (b, mb) in [(8, 0), (1, 8), (4, 3), (2, 0)] {
                            let x = DcsVariant::new(u, r, k, m)
                                .and_then(|x| x.with_blocks(b, mb))
                                .and_then(|x| x.with_atom_unroll(1 + (u + r) % 4))
                                .and_then(|x| x.with_schedule(if mb == 0 { 136 } else { 0 }, (u * r + k) % 64))
                                .and_then(|x| x.with_parts((u + k) % 9))
                                .and_then(|x| x.with_streams(1 + (u + r + k) % 2));
                            if let Some(x) = x {
                                assert_eq!(DcsVariant::unpack(x.pack()), x);
                                assert_eq!(x.to_string().parse::<DcsVariant>(), Ok(x));
                            }
                        }
                    }
                }
            }
        }
        for d in [
            "DCS_UNROLL",
            "DCS_ROWS",
            "DCS_SOFT",
            "DCS_RSQ",
            "DCS_BLOCK_Y",
            "DCS_MIN_BLOCKS",
            "DCS_ATOM_UNROLL",
        ] {
            assert!(DCS_SRC.contains(&format!("#ifndef {d}")), "{d}");
        }
    }

    /// The two FMA-pipe reciprocal square roots of `kernels/dcs.cu` (1/sqrt(2h) from h = r^2 / 2), in
    /// the same f32 operations, against f64 over many binades.
    #[test]
    fn soft_reciprocal_square_roots_are_accurate() {
        // Both take h = x / 2 and return 1/sqrt(x).
        let third = |h: f32| {
            let mut y = f32::from_bits(0x5ef7_59dfu32.wrapping_sub(h.to_bits() >> 1));
            y *= (-h * y).mul_add(y, 1.5);
            let t = (h * y).mul_add(y, -0.5);
            let p = 1.5f32.mul_add(t, -1.0);
            (y * t).mul_add(p, y)
        };
        let newton2 = |h: f32| {
            let mut y = f32::from_bits(0x5ef7_6908u32.wrapping_sub(h.to_bits() >> 1));
            y *= (-h * y).mul_add(y, 1.500_879);
            y * (-h * y).mul_add(y, 1.500_000_6)
        };
        let mut seed = 0x9e37_79b9_7f4a_7c15u64 ^ std::process::id() as u64;
        let (mut worst3, mut worst2, mut sum2) = (0f64, 0f64, 0f64);
        let n = 200_000;
        for _ in 0..n {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let u = (seed >> 11) as f64 / (1u64 << 53) as f64;
            let h = 10f64.powf(-6.0 + 12.0 * u) as f32;
            let want = 1.0 / (2.0 * f64::from(h)).sqrt();
            let e3 = f64::from(third(h)) / want - 1.0;
            let e2 = f64::from(newton2(h)) / want - 1.0;
            worst3 = worst3.max(e3.abs());
            worst2 = worst2.max(e2.abs());
            sum2 += e2;
        }
        assert!(worst3 < 2e-7, "third-order form: {worst3:e}");
        assert!(worst2 < 8e-7, "two-step form: {worst2:e}");
        // Errors of both signs: the mean is well below the worst case.
        assert!(
            (sum2 / n as f64).abs() < 3e-7,
            "two-step form drifts: mean {:e}",
            sum2 / n as f64
        );
    }
}
