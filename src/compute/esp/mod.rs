//! Electrostatic potential maps of point charges: the choice of summation method and boundary, and
//! the per-request preparation every method needs before lattice slabs can be filled.
//!
//! Owns [`EspMethod`] (direct Coulomb sum, smoothed cutoff sum, multilevel summation), [`MsmParams`],
//! [`Boundary`] (open or a periodic cell) and [`field_input`], which turns charges plus a method into
//! the [`FieldInput`] that engines and the jobs pool consume. Called by the CLI (`grid esp`,
//! `points --field esp`, `ions`), by the viewer's potential representations and by the benches.
//! Potentials are in atomic units (hartree/e) everywhere inside; unit conversion for files happens
//! in the CLI.
//!
//! The cutoff and multilevel methods are prepared once per request into an [`EspPlan`]
//! ([`FieldInput::Electrostatics`]): charges binned ([`bins`]) and, for MSM, the levels' geometry
//! decided ([`LevelGeometry`]: lattice sizes, origin, level count, stencil, top-level kernel) and
//! every long-range level computed down to the finest MSM lattice potential ([`msm`]). Both heavy
//! stages (binning, levels) run on the host by default or, with [`StagesOn::Engine`], on the
//! device of the CUDA engine that fills the map (`compute::cuda::msm`); the geometry of both is
//! always decided here.
//! Engines then fill any slab of the target lattice (short-range sum over bins plus cubic
//! interpolation of that lattice) or any point ([`EspPlan::potential_at`]).
//!
//! Conventions. Splitting (Hardy, Stone, Schulten, Parallel Computing 35:164, 2009): `1/r =
//! (1/r - g_a) + sum_{l<L} (g_{2^l a} - g_{2^{l+1} a}) + g_{2^L a}` with `g_a(r) = gamma(r/a)/a`, the
//! C2 Taylor `gamma` ([`kernel::gamma`]). The cutoff method is the first term alone. Open
//! boundaries: the potential of exactly the given charges (zero at infinity). Periodic
//! boundaries: the potential of the infinitely replicated cell plus a uniform neutralising
//! background, the k = 0 Fourier term dropped; this is the Ewald potential with tin-foil
//! boundaries including Ewald's background term `-pi Q / (beta^2 V)`, i.e. its mean over the cell
//! is zero (for non-neutral cells too). MSM reproduces it up to the method's discretisation error.

pub mod bins;
pub mod kernel;
pub mod msm;
pub mod schedule;
pub mod screening;

use crate::compute::MIN_DISTANCE_BOHR;
use crate::compute::{ComputeError, FieldInput, PointCharges};
use crate::model::units::bohr_from_angstrom;
use crate::model::{Lattice, UnitCell};
use bins::{AtomBins, ShortRangeScratch};
use kernel::{Mat3, dot, norm, reciprocal};
use msm::LevelLayout;
use std::ops::Range;
use std::sync::Arc;

/// Default MSM splitting distance a (Angstrom), as in Hardy et al. 2009 and VMD's `coulombmsm`.
pub const DEFAULT_MSM_CUTOFF_ANGSTROM: f64 = 12.0;
/// Default finest MSM lattice spacing h (Angstrom).
pub const DEFAULT_MSM_SPACING_ANGSTROM: f64 = 2.0;

/// Multilevel summation parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MsmParams {
    /// Splitting distance a: the short-range part vanishes beyond it (Angstrom).
    pub cutoff_angstrom: f64,
    /// Spacing h of the finest MSM lattice (Angstrom); each coarser level doubles it.
    pub spacing_angstrom: f64,
}

impl Default for MsmParams {
    fn default() -> Self {
        MsmParams {
            cutoff_angstrom: DEFAULT_MSM_CUTOFF_ANGSTROM,
            spacing_angstrom: DEFAULT_MSM_SPACING_ANGSTROM,
        }
    }
}

/// How the Coulomb sum over charges is carried out.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub enum EspMethod {
    /// Exact direct Coulomb summation, O(charges x points).
    #[default]
    Direct,
    /// Smoothed short-range sum: charges within `cutoff_angstrom` only, found through spatial bins
    /// (the potential is shifted and smoothed to zero at the cutoff, as for the MSM short-range part).
    Cutoff { cutoff_angstrom: f64 },
    /// Multilevel summation (short-range part exact, long-range part on nested lattices).
    Msm(MsmParams),
}

/// Boundary conditions of the charge system.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub enum Boundary {
    /// Isolated system: the potential of exactly the given charges.
    #[default]
    Open,
    /// Infinite periodic replication of the cell (orthorhombic or triclinic); the cell must be
    /// net-neutral or is treated with a neutralising background.
    Periodic(UnitCell),
}

/// Finest MSM lattices above this many points are refused (h too small for the system or map).
pub const MAX_MSM_LATTICE_POINTS: usize = 1 << 26;
/// Open boundaries: coarsen until no axis of the top lattice has more points than this.
const OPEN_TOP_MAX_POINTS: usize = 12;
/// Periodic cells: the top lattice has at most this many points per cell vector.
const PERIODIC_TOP_MAX_POINTS: usize = 16;

/// The engine input for the potential of `charges` by `method` under `boundary`, prepared for
/// `lattice` (methods with a long-range part compute it here, once per request). Direct
/// summation with open boundaries stays [`FieldInput::Charges`]; every other method becomes a
/// [`FieldInput::Electrostatics`] plan. Bad input (empty or non-finite charges, h <= 0, a < h,
/// a degenerate cell, direct summation with a periodic cell) is a [`ComputeError::BadInput`].
pub fn field_input(
    charges: Arc<PointCharges>,
    method: EspMethod,
    boundary: Boundary,
    lattice: &Lattice,
) -> Result<FieldInput, ComputeError> {
    field_input_with(charges, method, boundary, lattice, StagesOn::default())
}

/// As [`field_input`], the binning and the MSM levels computed where `stages_on` says
/// ([`StagesOn::Engine`]: on the CUDA device that fills the map).
pub fn field_input_with(
    charges: Arc<PointCharges>,
    method: EspMethod,
    boundary: Boundary,
    lattice: &Lattice,
    stages_on: StagesOn,
) -> Result<FieldInput, ComputeError> {
    checked_input(charges, method, boundary, |charges| {
        Ok(FieldInput::Electrostatics(Arc::new(EspPlan::build_with(
            charges, method, boundary, lattice, stages_on,
        )?)))
    })
}

/// Checks the request; direct summation with open boundaries stays [`FieldInput::Charges`], every
/// other method becomes what `planned` makes of the charges.
fn checked_input(
    charges: Arc<PointCharges>,
    method: EspMethod,
    boundary: Boundary,
    planned: impl FnOnce(Arc<PointCharges>) -> Result<FieldInput, ComputeError>,
) -> Result<FieldInput, ComputeError> {
    check_request(&charges, method, boundary)?;
    match (method, boundary) {
        (EspMethod::Direct, Boundary::Open) => Ok(FieldInput::Charges(charges)),
        _ => planned(charges),
    }
}

/// A cutoff or MSM request whose plan ([`EspPlan::build`]) is built once, by whichever worker asks
/// first ([`DeferredPlan::plan`]); every later tile shares it.
pub struct DeferredPlan {
    charges: Arc<PointCharges>,
    method: EspMethod,
    boundary: Boundary,
    lattice: Lattice,
    plan: std::sync::OnceLock<Result<Arc<EspPlan>, ComputeError>>,
}

impl std::fmt::Debug for DeferredPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeferredPlan")
            .field("method", &self.method)
            .field("boundary", &self.boundary)
            .field("charges", &self.charges.charges_e.len())
            .field("built", &self.plan.get().is_some())
            .finish()
    }
}

impl DeferredPlan {
    /// The engine input for `charges` by `method` on `lattice`, planned later: direct summation with
    /// open boundaries stays [`FieldInput::Charges`] (it needs no plan); bad parameters are refused
    /// here, as by [`field_input`].
    pub fn field_input(
        charges: Arc<PointCharges>,
        method: EspMethod,
        boundary: Boundary,
        lattice: &Lattice,
    ) -> Result<FieldInput, ComputeError> {
        checked_input(charges, method, boundary, |charges| {
            Ok(FieldInput::DeferredElectrostatics(Arc::new(DeferredPlan {
                charges,
                method,
                boundary,
                lattice: *lattice,
                plan: std::sync::OnceLock::new(),
            })))
        })
    }

    /// The summation method the plan is for.
    pub fn method(&self) -> EspMethod {
        self.method
    }

    /// The number of charges.
    pub fn n_charges(&self) -> usize {
        self.charges.charges_e.len()
    }

    /// The plan, built on the first call (other callers wait for it); a failure is returned to
    /// every caller.
    pub fn plan(&self) -> Result<Arc<EspPlan>, ComputeError> {
        self.plan_with(StagesOn::Host)
    }

    /// The plan, built on the first call with its heavy stages `stages_on` (the engine that takes
    /// the request first decides: a CUDA engine leaves binning and levels to its device, the CPU
    /// engine computes them while planning); later callers get that plan whatever they ask, and
    /// both engines fill maps from either kind.
    pub fn plan_with(&self, stages_on: StagesOn) -> Result<Arc<EspPlan>, ComputeError> {
        self.plan
            .get_or_init(|| {
                EspPlan::build_with(
                    self.charges.clone(),
                    self.method,
                    self.boundary,
                    &self.lattice,
                    stages_on,
                )
                .map(Arc::new)
            })
            .clone()
    }
}

fn bad(msg: String) -> ComputeError {
    ComputeError::BadInput(msg)
}

/// Checks charges, parameters and boundary; the errors name the offending value.
fn check_request(charges: &PointCharges, method: EspMethod, boundary: Boundary) -> Result<(), ComputeError> {
    match method {
        EspMethod::Direct => {}
        EspMethod::Cutoff { cutoff_angstrom } => {
            if !(cutoff_angstrom.is_finite() && cutoff_angstrom > 0.0) {
                return Err(bad(format!(
                    "cutoff = {cutoff_angstrom} A: the cutoff must be a positive, finite distance"
                )));
            }
        }
        EspMethod::Msm(p) => {
            let (a, h) = (p.cutoff_angstrom, p.spacing_angstrom);
            if !(h.is_finite() && h > 0.0) {
                return Err(bad(format!(
                    "MSM lattice spacing h = {h} A: it must be a positive, finite distance"
                )));
            }
            if !(a.is_finite() && a > 0.0) {
                return Err(bad(format!(
                    "MSM splitting distance a = {a} A: it must be a positive, finite distance"
                )));
            }
            if a < h {
                return Err(bad(format!(
                    "MSM splitting distance a = {a} A is smaller than the lattice spacing h = {h} A (use a >= h; \
                     the defaults are a = {DEFAULT_MSM_CUTOFF_ANGSTROM}, h = {DEFAULT_MSM_SPACING_ANGSTROM})"
                )));
            }
        }
    }
    if let Boundary::Periodic(cell) = boundary {
        if method == EspMethod::Direct {
            return Err(bad(
                "direct summation has no periodic form: use the msm method (or cutoff) with a periodic cell"
                    .to_string(),
            ));
        }
        if !cell.is_valid() {
            return Err(bad(format!(
                "periodic cell with lengths {:?} A and angles {:?} degrees has no positive, finite volume",
                cell.lengths_angstrom, cell.angles_degree
            )));
        }
    }
    let (np, nq) = (charges.positions_bohr.len(), charges.charges_e.len());
    if np != nq {
        return Err(bad(format!("{np} charge positions but {nq} charges")));
    }
    if np == 0 {
        return Err(bad("the charge set is empty".to_string()));
    }
    for (i, (p, q)) in charges.positions_bohr.iter().zip(&charges.charges_e).enumerate() {
        if let Some(c) = p.iter().find(|c| !c.is_finite()) {
            return Err(bad(format!("charge {i} has a non-finite coordinate ({c})")));
        }
        if !q.is_finite() {
            return Err(bad(format!("charge {i} is not finite ({q})")));
        }
    }
    Ok(())
}

/// The finest MSM lattice potential and where it lies: point `n` (lattice index, see
/// [`msm::LevelLayout`]) at `origin + sum_k n_k v_k`.
#[derive(Clone)]
pub struct LongRange {
    pub origin_bohr: [f64; 3],
    /// Finest-level step vectors (rows, bohr).
    pub vectors_bohr: Mat3,
    /// Reciprocal of `vectors_bohr`: lattice coordinate `t_k = w_k . (x - origin)`.
    pub inverse: Mat3,
    pub layout: LevelLayout,
    pub periodic: bool,
    /// Long-range potential (hartree/e) at every finest-lattice point, x fastest.
    pub potential: Vec<f64>,
    /// Number of lattice levels including the top one.
    pub levels: usize,
}

impl LongRange {
    /// Lattice coordinates of `p_bohr`.
    #[inline]
    pub fn coords(&self, p_bohr: [f64; 3]) -> [f64; 3] {
        let d = [
            p_bohr[0] - self.origin_bohr[0],
            p_bohr[1] - self.origin_bohr[1],
            p_bohr[2] - self.origin_bohr[2],
        ];
        let t: [f64; 3] = std::array::from_fn(|k| dot(self.inverse[k], d));
        if self.periodic {
            // Wrap into the cell first so large coordinates keep their precision.
            std::array::from_fn(|k| {
                let n = self.layout.dims[k] as f64;
                let f = t[k] / n;
                (f - f.floor()) * n
            })
        } else {
            t
        }
    }

    /// The long-range potential at `p_bohr` by cubic interpolation; `None` outside an open lattice.
    pub fn at(&self, p_bohr: [f64; 3]) -> Option<f64> {
        let t = self.coords(p_bohr);
        if !t.iter().all(|x| x.is_finite() && x.abs() < 1e12) {
            return None;
        }
        msm::interpolate_at(&self.potential, &self.layout, self.periodic, t)
    }
}

/// Interpolation of one slab: adds the long-range potential at every lattice point of `z_range`
/// to `out` (x fastest); points whose stencil leaves an open long-range lattice are pushed to
/// `missing` (their index in `out`) and left unchanged.
pub fn interpolate_slab(
    long_range: &LongRange,
    lattice: &Lattice,
    z_range: Range<usize>,
    out: &mut [f64],
    missing: &mut Vec<usize>,
) {
    let [nx, ny, _] = lattice.dims;
    let mut idx = 0usize;
    for k in z_range {
        for j in 0..ny {
            for i in 0..nx {
                if let Some(o) = out.get_mut(idx) {
                    match long_range.at(lattice.point_bohr(i, j, k)) {
                        Some(v) => *o += v,
                        None => missing.push(idx),
                    }
                }
                idx += 1;
            }
        }
    }
}

/// Where a plan's heavy stages run: sorting the charges into bins and the long-range MSM levels.
/// The geometry of both (bin edges and counts, neighbour offsets, MSM lattices, stencil, top-level
/// kernel) is always decided on the host when the plan is built.
/// One enum for the library and the command lines (`--msm-stages host|device`).
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum StagesOn {
    /// On the host, while the plan is built (binning beside the levels).
    Host,
    /// By the engine that fills the map: a CUDA engine bins the charges and computes the levels on
    /// its device; the CPU engine (and [`EspPlan::bins`], [`EspPlan::long_range`]) on the host at
    /// first use. The default: the fastest measured path for large maps (`benches/RESULTS.md`, MSM).
    #[default]
    #[value(name = "device", alias = "engine")]
    Engine,
}

/// A prepared cutoff or MSM request: see the module documentation.
pub struct EspPlan {
    pub method: EspMethod,
    pub boundary: Boundary,
    /// MSM only: where the levels lie (decided when the plan is built).
    pub levels: Option<LevelGeometry>,
    /// The bins' geometry for the short-range part (cutoff `a`), without charges.
    frame: AtomBins,
    /// The charges binned on the host (at build time for [`StagesOn::Host`], at first use
    /// otherwise).
    bins: std::sync::OnceLock<AtomBins>,
    /// MSM only: the finest lattice potential, computed on the host (as `bins`).
    long_range: std::sync::OnceLock<LongRange>,
    charges: Arc<PointCharges>,
}

impl std::fmt::Debug for EspPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EspPlan")
            .field("method", &self.method)
            .field("boundary", &self.boundary)
            .field("charges", &self.charges.charges_e.len())
            .field("bins", &self.frame.counts)
            .field(
                "msm_lattice",
                &self.levels.as_ref().map(|l| (l.finest().dims, l.layouts.len())),
            )
            .field("binned_on_host", &self.bins.get().is_some())
            .field("levels_on_host", &self.long_range.get().is_some())
            .finish()
    }
}

impl EspPlan {
    /// Bins the charges and, for MSM, computes every long-range level (inputs already checked by
    /// [`field_input`]; checked again here so that a direct call cannot panic).
    pub fn build(
        charges: Arc<PointCharges>,
        method: EspMethod,
        boundary: Boundary,
        lattice: &Lattice,
    ) -> Result<EspPlan, ComputeError> {
        EspPlan::build_with(charges, method, boundary, lattice, StagesOn::Host)
    }

    /// As [`EspPlan::build`], the binning and the MSM levels computed where `stages_on` says.
    pub fn build_with(
        charges: Arc<PointCharges>,
        method: EspMethod,
        boundary: Boundary,
        lattice: &Lattice,
        stages_on: StagesOn,
    ) -> Result<EspPlan, ComputeError> {
        check_request(&charges, method, boundary)?;
        let a_angstrom = match method {
            EspMethod::Direct => {
                return Err(bad("direct summation needs no plan".to_string()));
            }
            EspMethod::Cutoff { cutoff_angstrom } => cutoff_angstrom,
            EspMethod::Msm(p) => p.cutoff_angstrom,
        };
        let a_bohr = bohr_from_angstrom(a_angstrom);
        let cell_bohr = match boundary {
            Boundary::Open => None,
            Boundary::Periodic(cell) => Some(cell.matrix_angstrom().map(|r| r.map(bohr_from_angstrom))),
        };
        let on_host = stages_on == StagesOn::Host;
        // Binning (serial) and the long-range levels (parallel inside) run side by side.
        let (bins, levels) = rayon::join(
            || -> Result<(AtomBins, Option<AtomBins>), ComputeError> {
                let frame = match &cell_bohr {
                    None => AtomBins::open_frame(&charges.positions_bohr, a_bohr)?,
                    Some(c) => AtomBins::periodic_frame(c, a_bohr)?,
                };
                let filled = on_host.then(|| frame.clone().filled(&charges.positions_bohr, &charges.charges_e));
                Ok((frame, filled))
            },
            || -> Result<Option<(LevelGeometry, Option<LongRange>)>, ComputeError> {
                let EspMethod::Msm(p) = method else {
                    return Ok(None);
                };
                let h_bohr = bohr_from_angstrom(p.spacing_angstrom);
                let geometry = match &cell_bohr {
                    None => LevelGeometry::open(&charges, lattice, a_bohr, h_bohr)?,
                    Some(c) => LevelGeometry::periodic(c, a_bohr, h_bohr)?,
                };
                let long_range = on_host.then(|| geometry.long_range(&charges));
                Ok(Some((geometry, long_range)))
            },
        );
        let (frame, filled) = bins?;
        let bins = std::sync::OnceLock::new();
        if let Some(b) = filled {
            let _ = bins.set(b);
        }
        let long_range = std::sync::OnceLock::new();
        let levels = match levels? {
            Some((geometry, lr)) => {
                if let Some(lr) = lr {
                    let _ = long_range.set(lr);
                }
                Some(geometry)
            }
            None => None,
        };
        Ok(EspPlan {
            method,
            boundary,
            levels,
            frame,
            bins,
            long_range,
            charges,
        })
    }

    /// The charges sorted into bins, on the host now if the plan left the binning to the engine
    /// ([`StagesOn::Engine`]) and no host caller needed them before.
    pub fn bins(&self) -> &AtomBins {
        self.bins.get_or_init(|| {
            self.frame
                .clone()
                .filled(&self.charges.positions_bohr, &self.charges.charges_e)
        })
    }

    /// The charges sorted into bins when the host has done it already.
    pub fn bins_computed(&self) -> Option<&AtomBins> {
        self.bins.get()
    }

    /// The bins' geometry (origin, edges, counts, neighbour offsets, cutoff); its `start` and
    /// charge arrays are empty.
    pub fn bin_frame(&self) -> &AtomBins {
        &self.frame
    }

    /// MSM only: the finest lattice potential, computed on the host now if the plan left it to
    /// the engine ([`StagesOn::Engine`]) and no host caller needed it before.
    pub fn long_range(&self) -> Option<&LongRange> {
        let geometry = self.levels.as_ref()?;
        Some(self.long_range.get_or_init(|| geometry.long_range(&self.charges)))
    }

    /// The finest lattice potential when the host has computed it already.
    pub fn long_range_computed(&self) -> Option<&LongRange> {
        self.long_range.get()
    }

    /// The charges the plan was built from (positions in bohr, charges in e).
    pub fn charges(&self) -> &Arc<PointCharges> {
        &self.charges
    }

    /// The cutoff / splitting distance a (bohr).
    pub fn cutoff_bohr(&self) -> f64 {
        self.frame.cutoff_bohr
    }

    /// The potential at `p_bohr` (hartree/e): short-range sum plus interpolated long-range part.
    /// A point outside an open MSM lattice (possible only for points far from the lattice the plan
    /// was prepared for) gets the exact direct sum instead.
    pub fn potential_at(&self, p_bohr: [f64; 3]) -> f64 {
        self.potential_with(p_bohr, &mut ShortRangeScratch::default())
    }

    /// As [`EspPlan::potential_at`], reusing a scratch across points (no allocation per point).
    pub fn potential_with(&self, p_bohr: [f64; 3], scratch: &mut ShortRangeScratch) -> f64 {
        let short = self.bins().short_range_with(p_bohr, scratch);
        match self.long_range() {
            None => short,
            Some(lr) => match lr.at(p_bohr) {
                Some(v) => short + v,
                None => self.direct_at(p_bohr),
            },
        }
    }

    /// Exact direct Coulomb sum at one point.
    fn direct_at(&self, p: [f64; 3]) -> f64 {
        let min = MIN_DISTANCE_BOHR;
        self.charges
            .positions_bohr
            .iter()
            .zip(&self.charges.charges_e)
            .map(|(y, q)| q / norm([p[0] - y[0], p[1] - y[1], p[2] - y[2]]).max(min))
            .sum()
    }

    /// Fills one slab of `lattice` (x fastest; `out` holds `dims[0] * dims[1] * z_range.len()`
    /// values): [`bins::short_range_slab`] then [`interpolate_slab`]. Serial; callers run slabs
    /// (planes) in parallel.
    pub fn fill_slab(&self, lattice: &Lattice, z_range: Range<usize>, out: &mut [f64]) {
        bins::short_range_slab(self.bins(), lattice, z_range.clone(), out);
        if let Some(lr) = self.long_range() {
            let mut missing = Vec::new();
            interpolate_slab(lr, lattice, z_range.clone(), out, &mut missing);
            let [nx, ny, _] = lattice.dims;
            for idx in missing {
                let (i, j, k) = (idx % nx, (idx / nx) % ny, z_range.start + idx / (nx * ny).max(1));
                if let Some(o) = out.get_mut(idx) {
                    *o = self.direct_at(lattice.point_bohr(i, j, k));
                }
            }
        }
    }
}

fn lattice_too_big(points: Option<usize>, h_angstrom: f64) -> ComputeError {
    bad(format!(
        "the MSM lattice at h = {h_angstrom:.3} A would need {} points (limit {MAX_MSM_LATTICE_POINTS}): use a larger h",
        points.map_or("too many".to_string(), |n| n.to_string())
    ))
}

/// How the top (coarsest) MSM level is summed: all pairs of its points through a kernel table.
#[derive(Clone, Debug)]
pub enum TopLevel {
    /// Open boundaries: [`msm::top_open_table`] (entry per displacement, see there).
    Open { table: Vec<f64> },
    /// Periodic cells: [`msm::periodic_top_kernel`] (entry per displacement modulo the dims).
    Periodic { kernel: Vec<f64> },
}

/// Where the MSM levels lie and with which kernels they are summed: everything the host decides
/// before any charge is spread (cheap: lattice sizes, origin, level count, the lattice-cutoff
/// stencil and the top level's kernel). [`LevelGeometry::long_range`] then computes the levels on
/// the host; `compute::cuda` computes the same levels on a device from the same geometry.
#[derive(Clone, Debug)]
pub struct LevelGeometry {
    /// Lattice index 0 of the finest level (bohr): `lo` for open lattices, the cell's corner (0)
    /// for periodic ones.
    pub origin_bohr: [f64; 3],
    /// Finest-level step vectors (rows, bohr).
    pub vectors_bohr: Mat3,
    /// Reciprocal of `vectors_bohr`.
    pub inverse: Mat3,
    /// Every level's layout, finest first; the last is the top level.
    pub layouts: Vec<LevelLayout>,
    pub periodic: bool,
    /// The finest level's lattice-cutoff stencil (level `l` uses it times `2^-l`); `None` when the
    /// top level is the only one.
    pub stencil: Option<msm::Stencil>,
    pub top: TopLevel,
    /// Finest spacing h (open lattices: charge coordinates are `(x - origin) / h`).
    h_bohr: f64,
}

/// The MSM levels of every level, from [`LevelGeometry::host_levels`]: charges and potentials,
/// finest first (for tests comparing another engine's levels level by level).
#[derive(Clone, Debug)]
pub struct HostLevels {
    pub charges: Vec<Vec<f64>>,
    pub potentials: Vec<Vec<f64>>,
}

impl LevelGeometry {
    /// Open boundaries: lattices covering the charges and the target lattice plus the cubic support,
    /// coarsened until the top lattice is small, which is summed directly.
    pub fn open(
        charges: &PointCharges,
        lattice: &Lattice,
        a_bohr: f64,
        h_bohr: f64,
    ) -> Result<LevelGeometry, ComputeError> {
        let h_angstrom = crate::model::units::angstrom_from_bohr(h_bohr);
        let mut lo = [f64::INFINITY; 3];
        let mut hi = [f64::NEG_INFINITY; 3];
        let mut grow = |p: [f64; 3]| {
            for k in 0..3 {
                lo[k] = lo[k].min(p[k]);
                hi[k] = hi[k].max(p[k]);
            }
        };
        charges.positions_bohr.iter().for_each(|p| grow(*p));
        if lattice.n_points() > 0 {
            let [nx, ny, nz] = lattice.dims.map(|n| n - 1);
            for (i, j, k) in [
                (0, 0, 0),
                (nx, 0, 0),
                (0, ny, 0),
                (0, 0, nz),
                (nx, ny, 0),
                (nx, 0, nz),
                (0, ny, nz),
                (nx, ny, nz),
            ] {
                let p = lattice.point_bohr(i, j, k);
                if !p.iter().all(|c| c.is_finite()) {
                    return Err(bad(format!("the target lattice has a non-finite point {p:?}")));
                }
                grow(p);
            }
        }
        let mut dims = [0usize; 3];
        for k in 0..3 {
            let n = ((hi[k] - lo[k]) / h_bohr).ceil();
            if !n.is_finite() || n > 1e7 {
                return Err(lattice_too_big(None, h_angstrom));
            }
            dims[k] = n as usize + 5;
        }
        let total = dims.iter().try_fold(1usize, |acc, &n| acc.checked_mul(n));
        if total.is_none_or(|t| t > MAX_MSM_LATTICE_POINTS) {
            return Err(lattice_too_big(total, h_angstrom));
        }
        let vectors = [[h_bohr, 0.0, 0.0], [0.0, h_bohr, 0.0], [0.0, 0.0, h_bohr]];
        let inverse = reciprocal(&vectors).ok_or_else(|| bad(format!("MSM lattice spacing h = {h_angstrom} A")))?;
        let mut layouts = vec![LevelLayout { lo: [-2; 3], dims }];
        while let Some(last) = layouts.last()
            && last.dims.iter().any(|&n| n > OPEN_TOP_MAX_POINTS)
            && layouts.len() < 40
        {
            let next = last.coarser_open();
            layouts.push(next);
        }
        let l = layouts.len() - 1;
        let s = (1u64 << l) as f64;
        let v_top = vectors.map(|r| r.map(|x| x * s));
        let top_layout = layouts.last().copied().unwrap_or(LevelLayout {
            lo: [0; 3],
            dims: [0; 3],
        });
        let table = msm::top_open_table(&top_layout, &v_top, a_bohr * s);
        Ok(LevelGeometry {
            origin_bohr: lo,
            vectors_bohr: vectors,
            inverse,
            stencil: level_stencil(&layouts, &vectors, a_bohr)?,
            layouts,
            periodic: false,
            top: TopLevel::Open { table },
            h_bohr,
        })
    }

    /// Periodic cells: lattices along the cell vectors with `n_k = m_k 2^L` points (spacing <= h),
    /// all sums wrapped; the top lattice (at most [`PERIODIC_TOP_MAX_POINTS`] per vector) is summed
    /// over all images through [`msm::periodic_top_kernel`].
    pub fn periodic(cell_bohr: &Mat3, a_bohr: f64, h_bohr: f64) -> Result<LevelGeometry, ComputeError> {
        let h_angstrom = crate::model::units::angstrom_from_bohr(h_bohr);
        let lengths = cell_bohr.map(norm);
        let mut levels = 0u32;
        let top = loop {
            let s = f64::from(1u32 << levels);
            let m: [f64; 3] = std::array::from_fn(|k| (lengths[k] / (h_bohr * s)).ceil().max(1.0));
            if m.iter().all(|&x| x <= PERIODIC_TOP_MAX_POINTS as f64) {
                break m.map(|x| x as usize);
            }
            levels += 1;
            if levels > 20 {
                return Err(lattice_too_big(None, h_angstrom));
            }
        };
        let scale = 1usize << levels;
        let dims = top.map(|m| m * scale);
        let total = dims.iter().try_fold(1usize, |acc, &n| acc.checked_mul(n));
        if total.is_none_or(|t| t > MAX_MSM_LATTICE_POINTS) {
            return Err(lattice_too_big(total, h_angstrom));
        }
        let vectors: Mat3 = std::array::from_fn(|k| cell_bohr[k].map(|x| x / dims[k] as f64));
        let inverse = reciprocal(&vectors).ok_or_else(|| bad("degenerate periodic cell".to_string()))?;
        let layouts: Vec<LevelLayout> = (0..=levels)
            .map(|l| LevelLayout {
                lo: [0; 3],
                dims: dims.map(|n| n >> l),
            })
            .collect();
        let b_bohr = a_bohr * scale as f64;
        let kernel = msm::periodic_top_kernel(top, cell_bohr, b_bohr)
            .ok_or_else(|| bad("the periodic cell is too small or degenerate for the MSM top level".to_string()))?;
        Ok(LevelGeometry {
            origin_bohr: [0.0; 3],
            vectors_bohr: vectors,
            inverse,
            stencil: level_stencil(&layouts, &vectors, a_bohr)?,
            layouts,
            periodic: true,
            top: TopLevel::Periodic { kernel },
            h_bohr,
        })
    }

    /// Lattice coordinates (fractional finest-lattice index) of a charge at `p_bohr`, as the
    /// anterpolation uses them: open `(p - origin) / h`; periodic wrapped into `[0, n_k)`.
    #[inline]
    pub fn charge_coords(&self, p: [f64; 3]) -> [f64; 3] {
        if self.periodic {
            let dims = self.layouts.first().map_or([1; 3], |l| l.dims);
            std::array::from_fn(|k| {
                let t = dot(self.inverse[k], p) / dims[k] as f64;
                (t - t.floor()) * dims[k] as f64
            })
        } else {
            std::array::from_fn(|k| (p[k] - self.origin_bohr[k]) / self.h_bohr)
        }
    }

    /// The finest level's layout.
    pub fn finest(&self) -> LevelLayout {
        self.layouts.first().copied().unwrap_or(LevelLayout {
            lo: [0; 3],
            dims: [0; 3],
        })
    }

    /// Every level on the host (rayon): the finest lattice potential and where it lies.
    pub fn long_range(&self, charges: &PointCharges) -> LongRange {
        let potential = self.cascade(charges, None);
        LongRange {
            origin_bohr: self.origin_bohr,
            vectors_bohr: self.vectors_bohr,
            inverse: self.inverse,
            layout: self.finest(),
            periodic: self.periodic,
            potential,
            levels: self.layouts.len(),
        }
    }

    /// Every level's charges and potential on the host, finest first (the same numbers as
    /// [`LevelGeometry::long_range`], all kept).
    pub fn host_levels(&self, charges: &PointCharges) -> HostLevels {
        let mut kept = HostLevels {
            charges: Vec::new(),
            potentials: Vec::new(),
        };
        let finest = self.cascade(charges, Some(&mut kept));
        if let Some(e0) = kept.potentials.first_mut() {
            *e0 = finest;
        }
        kept
    }

    /// The level cascade shared by both boundaries: anterpolation, restriction to every level,
    /// lattice cutoff per level (`K / 2^l`), the top level, prolongation back to the finest level.
    /// With `keep`, every level's charges and potential are kept there (finest first).
    fn cascade(&self, charges: &PointCharges, mut keep: Option<&mut HostLevels>) -> Vec<f64> {
        let layouts = &self.layouts;
        let Some((top_layout, below)) = layouts.split_last() else {
            return Vec::new();
        };
        let coords: Vec<[f64; 3]> = charges.positions_bohr.iter().map(|p| self.charge_coords(*p)).collect();
        // Charges on every level.
        let mut q_levels: Vec<Vec<f64>> = Vec::with_capacity(layouts.len());
        let mut q0 = vec![0.0; self.finest().len()];
        msm::anterpolate(&self.finest(), self.periodic, &coords, &charges.charges_e, &mut q0);
        q_levels.push(q0);
        for pair in layouts.windows(2) {
            if let ([fine_l, coarse_l], Some(fine)) = (pair, q_levels.last()) {
                let mut coarse = vec![0.0; coarse_l.len()];
                msm::restrict(fine, fine_l, &mut coarse, coarse_l, self.periodic);
                q_levels.push(coarse);
            }
        }
        if let Some(k) = keep.as_deref_mut() {
            k.charges = q_levels.clone();
            k.potentials = layouts.iter().map(|l| vec![0.0; l.len()]).collect();
        }
        // Top level, then down: e_l = cutoff(q_l) + prolongation(e_{l+1}).
        let mut e = vec![0.0; top_layout.len()];
        let q_top = q_levels.last().map_or(&[][..], |v| v.as_slice());
        match &self.top {
            TopLevel::Open { table } => msm::top_level_open_with(q_top, top_layout, table, &mut e),
            TopLevel::Periodic { kernel } => msm::top_level_periodic(q_top, top_layout.dims, kernel, &mut e),
        }
        for l in (0..below.len()).rev() {
            if let Some(k) = keep.as_deref_mut()
                && let Some(slot) = k.potentials.get_mut(l + 1)
            {
                slot.clone_from(&e);
            }
            let (Some(layout), Some(coarse_l), Some(q)) = (layouts.get(l), layouts.get(l + 1), q_levels.get(l)) else {
                continue;
            };
            let mut el = vec![0.0; layout.len()];
            if let Some(st) = &self.stencil {
                msm::lattice_cutoff(q, layout, self.periodic, st, 1.0 / (1u64 << l) as f64, &mut el);
            }
            msm::prolongate(&e, coarse_l, &mut el, layout, self.periodic);
            e = el;
            q_levels.truncate(l + 1);
        }
        e
    }
}

/// The lattice-cutoff stencil for `layouts` (none for a single level).
fn level_stencil(layouts: &[LevelLayout], vectors: &Mat3, a_bohr: f64) -> Result<Option<msm::Stencil>, ComputeError> {
    if layouts.len() < 2 {
        return Ok(None);
    }
    msm::cutoff_stencil(vectors, a_bohr).map(Some).ok_or_else(|| {
        bad(format!(
            "the MSM splitting distance a = {:.3} A is too many lattice spacings wide",
            crate::model::units::angstrom_from_bohr(a_bohr)
        ))
    })
}
