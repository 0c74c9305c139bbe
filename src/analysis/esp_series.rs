//! Potential maps over trajectories: the per-frame preparation of point charges and boundaries, the
//! streaming combination of per-frame maps into one lattice (average, minimum, maximum, standard
//! deviation), and the memory check that refuses a lattice before anything is allocated.
//!
//! Called by the CLI (`grid esp --frames ... --combine ...`, `points --field esp`, `ions`) and by the
//! tests. Frames are read one at a time into one reusable [`Frame`], computed through a caller-given
//! evaluator (the CLI passes its jobs-pool path) and folded into one f64 [`MapAccumulator`]; no frame
//! map outlives its fold. Accumulators of disjoint frame ranges merge associatively
//! ([`MapAccumulator::merge`]), so a frame range can be the unit of distributed work.
//! Potentials are hartree/e throughout; [`MapAccumulator::finish`] applies the output unit.

use crate::compute::esp::{
    Boundary, DEFAULT_MSM_CUTOFF_ANGSTROM, DEFAULT_MSM_SPACING_ANGSTROM, EspMethod, MsmParams, field_input,
};
use crate::compute::{ComputeError, Field, FieldInput, FieldJob, PointCharges};
use crate::io::System;
use crate::model::units::bohr_from_angstrom3;
use crate::model::{Frame, Grid3, Lattice, Trajectory};

/// How the maps of several frames combine into one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Combine {
    /// Arithmetic mean per point.
    #[default]
    Avg,
    /// Minimum per point.
    Min,
    /// Maximum per point.
    Max,
    /// Population standard deviation per point (divides by the number of frames), by Welford's update.
    Stdev,
}

impl std::str::FromStr for Combine {
    type Err = String;
    fn from_str(s: &str) -> Result<Combine, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "avg" | "mean" | "average" => Ok(Combine::Avg),
            "min" => Ok(Combine::Min),
            "max" => Ok(Combine::Max),
            "stdev" | "std" => Ok(Combine::Stdev),
            other => Err(format!(
                "unknown combination '{other}' (expected avg, min, max or stdev)"
            )),
        }
    }
}

impl std::fmt::Display for Combine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Combine::Avg => "avg",
            Combine::Min => "min",
            Combine::Max => "max",
            Combine::Stdev => "stdev",
        })
    }
}

/// Why a potential map over frames could not be made.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SeriesError {
    #[error(
        "{file} has no partial charges; give a file that carries them first (PSF, prmtop, TPR, PQR, mol2), then the coordinates"
    )]
    NoCharges { file: String },
    #[error("the structure has {charges} charges but frame {frame} has {atoms} atoms")]
    AtomCount { frame: usize, charges: usize, atoms: usize },
    #[error("frame {frame}: atom {atom} (index {index}{name}) has a non-finite coordinate {position:?}")]
    NotFinite {
        frame: usize,
        atom: usize,
        index: usize,
        name: String,
        position: [f32; 3],
    },
    #[error("frame {frame} of {origin} has no unit cell; --pbc needs a periodic box in every frame")]
    NoCell { frame: usize, origin: String },
    #[error(
        "frame {frame} of {origin} has a zero-volume or invalid unit cell (lengths {lengths:?} A, angles {angles:?} deg); --pbc needs a real box"
    )]
    BadCell {
        frame: usize,
        origin: String,
        lengths: [f64; 3],
        angles: [f64; 3],
    },
    #[error(
        "the lattice {dims_text} = {points} points would need {}, more than the {} allowed ({limit_source}); use a larger --spacing, less --padding or fewer --dims",
        size_text(*need_gib),
        size_text(*limit_gib)
    )]
    TooLarge {
        dims_text: String,
        points: u128,
        need_gib: f64,
        limit_gib: f64,
        limit_source: String,
    },
    #[error("map of {got} values given to an accumulator of {need} points")]
    WrongSize { got: usize, need: usize },
    #[error("cannot merge accumulators of different lattices or combinations")]
    Mismatch,
    #[error("no frames were combined")]
    NoFrames,
    #[error("frame {frame}: {message}")]
    Frame { frame: usize, message: String },
    #[error("frame {frame}: {error}")]
    Compute { frame: usize, error: ComputeError },
}

/// GiB, for messages.
const GIB: f64 = (1u64 << 30) as f64;

/// A size given in GiB as text: GiB to one decimal, MiB below 0.1 GiB.
fn size_text(gib: f64) -> String {
    if gib >= 0.1 {
        format!("{gib:.1} GiB")
    } else {
        format!("{:.1} MiB", gib * 1024.0)
    }
}

/// Bytes per lattice point a map costs while it is computed and written: the f32 map itself plus
/// its text in the output file (cube and DX need up to ~15 characters per value).
pub const MAP_BYTES_PER_POINT: u64 = 4 + 16;

/// Extra bytes per point the accumulator of `combine` holds (f64 values; twice for stdev).
pub fn accumulator_bytes_per_point(combine: Combine) -> u64 {
    match combine {
        Combine::Stdev => 16,
        _ => 8,
    }
}

/// An upper bound on memory for lattices, in bytes, and where it comes from (for messages).
#[derive(Clone, Debug, PartialEq)]
pub struct MemoryLimit {
    pub bytes: u64,
    pub source: String,
}

impl MemoryLimit {
    /// Half of the physical memory from `/proc/meminfo`, or 8 GiB where that cannot be read.
    pub fn half_of_physical() -> MemoryLimit {
        let total = std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|t| mem_total_bytes(&t));
        match total {
            Some(b) => MemoryLimit {
                bytes: b / 2,
                source: format!("half of the {:.1} GiB of physical memory", b as f64 / GIB),
            },
            None => MemoryLimit {
                bytes: 8 << 30,
                source: "8 GiB when physical memory is unknown".to_string(),
            },
        }
    }

    /// An explicit limit in GiB (the `--max-memory-gib` override); `None` unless positive and finite.
    pub fn gib(gib: f64) -> Option<MemoryLimit> {
        if !(gib.is_finite() && gib > 0.0) {
            return None;
        }
        Some(MemoryLimit {
            bytes: (gib * GIB).min(u64::MAX as f64) as u64,
            source: format!("--max-memory-gib {gib}"),
        })
    }
}

/// `MemTotal` of a `/proc/meminfo` text, in bytes.
pub fn mem_total_bytes(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let mut f = line.split_whitespace().skip(1);
    let value: u64 = f.next()?.parse().ok()?;
    let factor: u64 = match f.next().map(str::to_ascii_lowercase).as_deref() {
        Some("kb") => 1024,
        Some("mb") => 1 << 20,
        Some("gb") => 1 << 30,
        None | Some("b") => 1,
        Some(_) => return None,
    };
    value.checked_mul(factor)
}

/// Refuses `dims` when `bytes_per_point` for every point would exceed `limit` (checked arithmetic,
/// nothing allocated); returns the point count otherwise.
pub fn check_memory(dims: [usize; 3], bytes_per_point: u64, limit: &MemoryLimit) -> Result<usize, SeriesError> {
    let points = (dims[0] as u128)
        .checked_mul(dims[1] as u128)
        .and_then(|p| p.checked_mul(dims[2] as u128))
        .unwrap_or(u128::MAX);
    let need = points.saturating_mul(u128::from(bytes_per_point));
    let too_large = || SeriesError::TooLarge {
        dims_text: format!("{}x{}x{}", dims[0], dims[1], dims[2]),
        points,
        need_gib: need as f64 / GIB,
        limit_gib: limit.bytes as f64 / GIB,
        limit_source: limit.source.clone(),
    };
    if need > u128::from(limit.bytes) {
        return Err(too_large());
    }
    usize::try_from(points).map_err(|_| too_large())
}

/// The summation method named `name` (`dcs`/`direct`, `cutoff` or `msm`) with its distances in
/// Angstrom: `cutoff_angstrom` is the cutoff of `cutoff` and the splitting distance of `msm` (default
/// 12 A), `msm_spacing_angstrom` the finest MSM lattice (default 2 A). Distances must be positive and
/// finite, and are refused for methods that do not use them.
pub fn method_from_options(
    name: &str,
    cutoff_angstrom: Option<f64>,
    msm_spacing_angstrom: Option<f64>,
) -> Result<EspMethod, String> {
    let positive = |flag: &str, v: f64| -> Result<f64, String> {
        if v.is_finite() && v > 0.0 {
            Ok(v)
        } else {
            Err(format!("{flag} must be a positive distance in Angstrom, not {v}"))
        }
    };
    let cutoff = positive("--cutoff", cutoff_angstrom.unwrap_or(DEFAULT_MSM_CUTOFF_ANGSTROM))?;
    let spacing = positive(
        "--msm-spacing",
        msm_spacing_angstrom.unwrap_or(DEFAULT_MSM_SPACING_ANGSTROM),
    )?;
    let method = match name.trim().to_ascii_lowercase().as_str() {
        "dcs" | "direct" => EspMethod::Direct,
        "cutoff" => EspMethod::Cutoff {
            cutoff_angstrom: cutoff,
        },
        "msm" => EspMethod::Msm(MsmParams {
            cutoff_angstrom: cutoff,
            spacing_angstrom: spacing,
        }),
        other => return Err(format!("unknown method '{other}' (expected dcs, cutoff or msm)")),
    };
    if method == EspMethod::Direct && cutoff_angstrom.is_some() {
        return Err("--cutoff applies to --method cutoff or msm; the direct sum (dcs) uses every charge".into());
    }
    if !matches!(method, EspMethod::Msm(_)) && msm_spacing_angstrom.is_some() {
        return Err("--msm-spacing applies to --method msm only".into());
    }
    Ok(method)
}

/// The partial charges of `system`'s structure in e, or an error naming the structure's file.
pub fn require_charges(system: &System) -> Result<Vec<f64>, SeriesError> {
    match system.structure.charges_e.as_ref() {
        Some(q) => Ok(q.iter().map(|&x| f64::from(x)).collect()),
        None => Err(SeriesError::NoCharges {
            file: system
                .paths
                .first()
                .and_then(|p| p.file_name())
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "the structure".to_string()),
        }),
    }
}

/// Point charges for frame `frame_index`: its positions (Angstrom, converted to bohr) with
/// `charges_e`. Refuses a frame whose atom count differs or that holds a non-finite coordinate,
/// naming the frame and the atom (1-based serial, 0-based index and, when `names` has it, its name).
pub fn frame_charges(
    frame_index: usize,
    frame: &Frame,
    charges_e: &[f64],
    names: Option<&dyn Fn(usize) -> String>,
) -> Result<PointCharges, SeriesError> {
    if frame.positions_angstrom.len() != charges_e.len() {
        return Err(SeriesError::AtomCount {
            frame: frame_index,
            charges: charges_e.len(),
            atoms: frame.positions_angstrom.len(),
        });
    }
    let mut positions_bohr = Vec::with_capacity(charges_e.len());
    for (i, p) in frame.positions_angstrom.iter().enumerate() {
        if !p.iter().all(|x| x.is_finite()) {
            return Err(SeriesError::NotFinite {
                frame: frame_index,
                atom: i + 1,
                index: i,
                name: names.map(|f| format!(", {}", f(i))).unwrap_or_default(),
                position: *p,
            });
        }
        positions_bohr.push(bohr_from_angstrom3(p.map(f64::from)));
    }
    Ok(PointCharges {
        positions_bohr,
        charges_e: charges_e.to_vec(),
    })
}

/// The atoms a cube file's header lists for point charges `point` of atoms of `elements` (in the
/// same order): atomic number, nuclear charge, position ([`crate::io::cube::CubeAtom::nucleus`]).
pub fn cube_atoms(elements: &[crate::model::Element], point: &PointCharges) -> Vec<crate::io::cube::CubeAtom> {
    point
        .positions_bohr
        .iter()
        .zip(elements)
        .map(|(&p, e)| crate::io::cube::CubeAtom::nucleus(u32::from(e.number()), p))
        .collect()
}

/// The boundary for a frame: open, or (with `periodic`) the frame's own unit cell, refused when the
/// frame has none or it has no volume.
pub fn frame_boundary(
    frame_index: usize,
    frame: &Frame,
    periodic: bool,
    origin: &str,
) -> Result<Boundary, SeriesError> {
    if !periodic {
        return Ok(Boundary::Open);
    }
    let Some(cell) = frame.cell else {
        return Err(SeriesError::NoCell {
            frame: frame_index,
            origin: origin.to_string(),
        });
    };
    if !cell.is_valid() {
        return Err(SeriesError::BadCell {
            frame: frame_index,
            origin: origin.to_string(),
            lengths: cell.lengths_angstrom,
            angles: cell.angles_degree,
        });
    }
    Ok(Boundary::Periodic(cell))
}

/// The potential request for one frame on `lattice`, through [`field_input`] (every method and
/// boundary goes through it).
pub fn frame_job(
    charges: PointCharges,
    method: EspMethod,
    boundary: Boundary,
    lattice: Lattice,
    frame_index: usize,
) -> Result<FieldJob, SeriesError> {
    let input: FieldInput =
        field_input(std::sync::Arc::new(charges), method, boundary, &lattice).map_err(|e| SeriesError::Compute {
            frame: frame_index,
            error: e,
        })?;
    Ok(FieldJob {
        field: Field::Potential,
        lattice,
        input,
    })
}

/// One accumulator lattice folding per-frame maps: f64 running mean and sum of squared deviations
/// (Welford) for avg/stdev, running extreme for min/max.
#[derive(Clone, Debug)]
pub struct MapAccumulator {
    lattice: Lattice,
    combine: Combine,
    count: u64,
    /// Mean (avg, stdev) or extreme (min, max) per point.
    values: Vec<f64>,
    /// Sum of squared deviations from the mean (stdev only; empty otherwise).
    m2: Vec<f64>,
}

impl MapAccumulator {
    /// An empty accumulator for `lattice`, refused by [`check_memory`] against `limit` (counting one
    /// frame map, its output text and the accumulator) before anything is allocated.
    pub fn new(lattice: Lattice, combine: Combine, limit: &MemoryLimit) -> Result<MapAccumulator, SeriesError> {
        let n = check_memory(
            lattice.dims,
            MAP_BYTES_PER_POINT + accumulator_bytes_per_point(combine),
            limit,
        )?;
        let init = match combine {
            Combine::Min => f64::INFINITY,
            Combine::Max => f64::NEG_INFINITY,
            _ => 0.0,
        };
        Ok(MapAccumulator {
            lattice,
            combine,
            count: 0,
            values: vec![init; n],
            m2: if combine == Combine::Stdev {
                vec![0.0; n]
            } else {
                Vec::new()
            },
        })
    }

    pub fn lattice(&self) -> &Lattice {
        &self.lattice
    }

    pub fn combine(&self) -> Combine {
        self.combine
    }

    /// Frames folded in so far.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The state: frames folded, mean or extreme per point, and the sums of squared deviations
    /// (stdev only; empty otherwise). With [`MapAccumulator::with_parts`], how partial results of
    /// other processes travel.
    pub fn parts(&self) -> (u64, &[f64], &[f64]) {
        (self.count, &self.values, &self.m2)
    }

    /// An accumulator on this one's lattice and combination holding the given state (as from
    /// [`MapAccumulator::parts`]), refused when the sizes do not fit.
    pub fn with_parts(&self, count: u64, values: Vec<f64>, m2: Vec<f64>) -> Result<MapAccumulator, SeriesError> {
        let m2_len = if self.combine == Combine::Stdev {
            self.values.len()
        } else {
            0
        };
        if values.len() != self.values.len() || m2.len() != m2_len {
            return Err(SeriesError::WrongSize {
                got: values.len(),
                need: self.values.len(),
            });
        }
        Ok(MapAccumulator {
            lattice: self.lattice,
            combine: self.combine,
            count,
            values,
            m2,
        })
    }

    /// Folds one frame's map (x fastest, as [`Grid3`]) into the accumulator.
    pub fn add(&mut self, map: &[f32]) -> Result<(), SeriesError> {
        if map.len() != self.values.len() {
            return Err(SeriesError::WrongSize {
                got: map.len(),
                need: self.values.len(),
            });
        }
        self.count += 1;
        let n = self.count as f64;
        let combine = self.combine;
        // The same update per point, over chunks of the lattice in parallel (the fold would
        // otherwise cost a device's time per frame on large maps).
        let fold = |values: &mut [f64], m2: &mut [f64], map: &[f32]| match combine {
            Combine::Avg => {
                for (m, &x) in values.iter_mut().zip(map) {
                    *m += (f64::from(x) - *m) / n;
                }
            }
            Combine::Min => {
                for (m, &x) in values.iter_mut().zip(map) {
                    *m = m.min(f64::from(x));
                }
            }
            Combine::Max => {
                for (m, &x) in values.iter_mut().zip(map) {
                    *m = m.max(f64::from(x));
                }
            }
            Combine::Stdev => {
                for ((m, s), &x) in values.iter_mut().zip(m2.iter_mut()).zip(map) {
                    let x = f64::from(x);
                    let delta = x - *m;
                    *m += delta / n;
                    *s += delta * (x - *m);
                }
            }
        };
        use rayon::prelude::*;
        const CHUNK: usize = 1 << 15;
        if self.m2.len() == self.values.len() {
            self.values
                .par_chunks_mut(CHUNK)
                .zip(self.m2.par_chunks_mut(CHUNK))
                .zip(map.par_chunks(CHUNK))
                .for_each(|((v, s), m)| fold(v, s, m));
        } else {
            self.values
                .par_chunks_mut(CHUNK)
                .zip(map.par_chunks(CHUNK))
                .for_each(|(v, m)| fold(v, &mut [], m));
        }
        Ok(())
    }

    /// Folds another accumulator (of other frames, same lattice and combination) into this one:
    /// the result equals having added both frame sets here (Chan et al.'s pairwise update for stdev).
    pub fn merge(&mut self, other: &MapAccumulator) -> Result<(), SeriesError> {
        if other.lattice != self.lattice || other.combine != self.combine || other.values.len() != self.values.len() {
            return Err(SeriesError::Mismatch);
        }
        if other.count == 0 {
            return Ok(());
        }
        if self.count == 0 {
            *self = other.clone();
            return Ok(());
        }
        let (na, nb) = (self.count as f64, other.count as f64);
        let n = na + nb;
        match self.combine {
            Combine::Avg => {
                for (m, &o) in self.values.iter_mut().zip(&other.values) {
                    *m += (o - *m) * nb / n;
                }
            }
            Combine::Min => {
                for (m, &o) in self.values.iter_mut().zip(&other.values) {
                    *m = m.min(o);
                }
            }
            Combine::Max => {
                for (m, &o) in self.values.iter_mut().zip(&other.values) {
                    *m = m.max(o);
                }
            }
            Combine::Stdev => {
                for (((m, s), &om), &os) in self
                    .values
                    .iter_mut()
                    .zip(self.m2.iter_mut())
                    .zip(&other.values)
                    .zip(&other.m2)
                {
                    let delta = om - *m;
                    *m += delta * nb / n;
                    *s += os + delta * delta * na * nb / n;
                }
            }
        }
        self.count += other.count;
        Ok(())
    }

    /// The combined map, each value multiplied by `scale` (the output unit per hartree/e).
    pub fn finish(&self, scale: f64, description: impl Into<String>) -> Result<Grid3, SeriesError> {
        if self.count == 0 {
            return Err(SeriesError::NoFrames);
        }
        let n = self.count as f64;
        let values: Vec<f32> = match self.combine {
            Combine::Stdev => self
                .m2
                .iter()
                .map(|&s| ((s / n).max(0.0).sqrt() * scale) as f32)
                .collect(),
            _ => self.values.iter().map(|&v| (v * scale) as f32).collect(),
        };
        Ok(Grid3 {
            lattice: self.lattice,
            values,
            description: description.into(),
        })
    }
}

/// What [`combine_frames`] computes.
#[derive(Clone, Debug)]
pub struct SeriesSettings {
    pub method: EspMethod,
    /// Use each frame's unit cell as a periodic boundary.
    pub periodic: bool,
    pub combine: Combine,
    pub memory: MemoryLimit,
}

/// Streams `frames` of `trajectory` through `evaluate` (one frame's request in, its map in hartree/e
/// out) and folds every map into one accumulator on the fixed `lattice`. Holds one frame of
/// coordinates, one frame map (inside `evaluate`'s return, dropped after the fold) and the
/// accumulator. `on_frame` is called after each frame (progress). Frames are computed one after
/// another; the evaluator is free to spread each over every device.
pub fn combine_frames(
    trajectory: &mut Trajectory,
    frames: &[usize],
    charges_e: &[f64],
    lattice: Lattice,
    settings: &SeriesSettings,
    evaluate: &mut dyn FnMut(FieldJob) -> Result<Grid3, String>,
    on_frame: &mut dyn FnMut(usize),
) -> Result<MapAccumulator, SeriesError> {
    if frames.is_empty() {
        return Err(SeriesError::NoFrames);
    }
    let mut acc = MapAccumulator::new(lattice, settings.combine, &settings.memory)?;
    fold_frames(trajectory, frames, charges_e, settings, &mut acc, evaluate, on_frame)?;
    Ok(acc)
}

/// Folds the maps of `frames` into `acc` (on its lattice), as [`combine_frames`] does: a batch rank
/// folds its share of the frames into its partial accumulator this way.
pub fn fold_frames(
    trajectory: &mut Trajectory,
    frames: &[usize],
    charges_e: &[f64],
    settings: &SeriesSettings,
    acc: &mut MapAccumulator,
    evaluate: &mut dyn FnMut(FieldJob) -> Result<Grid3, String>,
    on_frame: &mut dyn FnMut(usize),
) -> Result<(), SeriesError> {
    let lattice = *acc.lattice();
    let mut frame = Frame::default();
    let origin = trajectory.origin.clone();
    for &f in frames {
        trajectory.read_frame(f, &mut frame).map_err(|e| SeriesError::Frame {
            frame: f,
            message: e.to_string(),
        })?;
        let charges = frame_charges(f, &frame, charges_e, None)?;
        let boundary = frame_boundary(f, &frame, settings.periodic, &origin)?;
        let job = frame_job(charges, settings.method, boundary, lattice, f)?;
        let map = evaluate(job).map_err(|message| SeriesError::Frame { frame: f, message })?;
        if map.lattice != lattice {
            return Err(SeriesError::Mismatch);
        }
        acc.add(&map.values)?;
        on_frame(f);
    }
    Ok(())
}

/// As [`fold_frames`], with up to `depth` frames in flight: `submit(i, job)` queues frame
/// `frames[i]`'s request (to a pool whose devices take different frames at once) and `receive`
/// returns one finished map with its index `i`, in any order. Maps are folded in frame order, so the
/// result equals [`fold_frames`]'s whatever device computed which frame; at most `depth` maps wait
/// at once (`depth` 0 counts as 1). Each folded map's values go to `recycle` (a worker pool's
/// recycling, so the next frames are written into memory mapped already).
#[allow(clippy::too_many_arguments)]
pub fn fold_frames_ahead(
    trajectory: &mut Trajectory,
    frames: &[usize],
    charges_e: &[f64],
    settings: &SeriesSettings,
    acc: &mut MapAccumulator,
    depth: usize,
    submit: &mut dyn FnMut(usize, FieldJob) -> Result<(), String>,
    receive: &mut dyn FnMut() -> Result<(usize, Grid3), String>,
    recycle: &mut dyn FnMut(Vec<f32>),
    on_frame: &mut dyn FnMut(usize),
) -> Result<(), SeriesError> {
    let lattice = *acc.lattice();
    let mut frame = Frame::default();
    let origin = trajectory.origin.clone();
    let mut waiting: std::collections::BTreeMap<usize, Grid3> = std::collections::BTreeMap::new();
    let (mut submitted, mut folded) = (0usize, 0usize);
    while folded < frames.len() {
        while submitted < frames.len() && submitted - folded < depth.max(1) {
            let f = frames[submitted];
            trajectory.read_frame(f, &mut frame).map_err(|e| SeriesError::Frame {
                frame: f,
                message: e.to_string(),
            })?;
            let charges = frame_charges(f, &frame, charges_e, None)?;
            let boundary = frame_boundary(f, &frame, settings.periodic, &origin)?;
            let job = frame_job(charges, settings.method, boundary, lattice, f)?;
            submit(submitted, job).map_err(|message| SeriesError::Frame { frame: f, message })?;
            submitted += 1;
        }
        while !waiting.contains_key(&folded) {
            let (i, map) = receive().map_err(|message| SeriesError::Frame {
                frame: frames.get(folded).copied().unwrap_or(0),
                message,
            })?;
            if i < folded || i >= submitted {
                return Err(SeriesError::Frame {
                    frame: frames.get(folded).copied().unwrap_or(0),
                    message: format!("a map for request {i}, which is not in flight"),
                });
            }
            waiting.insert(i, map);
        }
        if let Some(map) = waiting.remove(&folded) {
            if map.lattice != lattice {
                return Err(SeriesError::Mismatch);
            }
            acc.add(&map.values)?;
            recycle(map.values);
            on_frame(frames[folded]);
        }
        folded += 1;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> Lattice {
        Lattice::axis_aligned([0.0; 3], 1.0, [2, 1, 1])
    }

    fn unlimited() -> MemoryLimit {
        MemoryLimit {
            bytes: u64::MAX,
            source: "test".into(),
        }
    }

    #[test]
    fn merge_equals_sequential_adds() {
        let maps: [[f32; 2]; 5] = [[1.0, -2.0], [3.0, 0.5], [-1.0, 4.0], [2.5, 2.5], [0.0, -7.0]];
        for combine in [Combine::Avg, Combine::Min, Combine::Max, Combine::Stdev] {
            let mut all = MapAccumulator::new(tiny(), combine, &unlimited()).unwrap();
            let mut a = all.clone();
            let mut b = all.clone();
            for (i, m) in maps.iter().enumerate() {
                all.add(m).unwrap();
                if i < 2 { a.add(m).unwrap() } else { b.add(m).unwrap() }
            }
            a.merge(&b).unwrap();
            let (x, y) = (all.finish(1.0, "").unwrap(), a.finish(1.0, "").unwrap());
            for (p, q) in x.values.iter().zip(&y.values) {
                assert!((p - q).abs() < 1e-5, "{combine}: {p} vs {q}");
            }
        }
    }

    #[test]
    fn memory_check_refuses_before_allocating() {
        let limit = MemoryLimit::gib(1.0).unwrap();
        let e = check_memory([2048, 2048, 2048], 12, &limit).unwrap_err();
        let text = e.to_string();
        assert!(text.contains("2048x2048x2048 = 8589934592 points"), "{text}");
        assert!(text.contains("96.0 GiB"), "{text}");
        assert!(check_memory([usize::MAX, usize::MAX, 2], 12, &limit).is_err());
        assert_eq!(check_memory([10, 10, 10], 12, &limit).unwrap(), 1000);
        assert_eq!(
            mem_total_bytes("MemTotal:       16384 kB\nMemFree: 1 kB\n"),
            Some(16384 * 1024)
        );
        assert_eq!(mem_total_bytes("nothing"), None);
    }
}

#[cfg(test)]
mod ahead_tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::compute::cpu::CpuEngine;
    use crate::compute::{SlabEngine, slab_len};

    /// Three atoms moving over `n` frames.
    fn trajectory(n: usize) -> Trajectory {
        let frames = (0..n)
            .map(|f| {
                let t = f as f32 * 0.3;
                Frame {
                    positions_angstrom: vec![[1.0 + t, 2.0, 2.0], [3.0, 1.0 + 0.5 * t, 2.5], [2.0, 3.0, 1.0 + t * t]],
                    ..Frame::default()
                }
            })
            .collect();
        Trajectory::from_frames(3, frames, "test")
    }

    fn map(job: &FieldJob) -> Grid3 {
        let z = 0..job.lattice.dims[2];
        let mut values = vec![0.0f32; slab_len(&job.lattice, &z)];
        CpuEngine.compute_slab(job, z, &mut values).unwrap();
        Grid3 {
            lattice: job.lattice,
            values,
            description: String::new(),
        }
    }

    #[test]
    fn frames_in_flight_fold_as_one_after_another_whatever_order_they_finish_in() {
        let lattice = Lattice::axis_aligned([-4.0; 3], 1.5, [9, 8, 7]);
        let charges = [0.5, -0.8, 0.3];
        let frames: Vec<usize> = (0..11).collect();
        for combine in [Combine::Avg, Combine::Stdev, Combine::Max] {
            let settings = SeriesSettings {
                method: EspMethod::Direct,
                periodic: false,
                combine,
                memory: MemoryLimit {
                    bytes: u64::MAX,
                    source: "test".into(),
                },
            };
            let mut plain = MapAccumulator::new(lattice, combine, &settings.memory).unwrap();
            let mut eval = |job: FieldJob| Ok(map(&job));
            let mut tr = trajectory(frames.len());
            fold_frames(
                &mut tr,
                &frames,
                &charges,
                &settings,
                &mut plain,
                &mut eval,
                &mut |_| {},
            )
            .unwrap();
            for depth in [1, 3, 4] {
                let mut ahead = MapAccumulator::new(lattice, combine, &settings.memory).unwrap();
                // Requests finish newest first: the fold must wait for the oldest.
                let queue = std::cell::RefCell::new(Vec::<(usize, Grid3)>::new());
                let mut seen = Vec::new();
                let mut tr = trajectory(frames.len());
                fold_frames_ahead(
                    &mut tr,
                    &frames,
                    &charges,
                    &settings,
                    &mut ahead,
                    depth,
                    &mut |i, job| {
                        queue.borrow_mut().push((i, map(&job)));
                        Ok(())
                    },
                    &mut || queue.borrow_mut().pop().ok_or_else(|| "nothing in flight".to_string()),
                    &mut |_| {},
                    &mut |f| seen.push(f),
                )
                .unwrap();
                assert_eq!(seen, frames, "{combine} depth {depth}");
                assert_eq!(ahead.count(), plain.count());
                let (a, b) = (ahead.finish(1.0, "").unwrap(), plain.finish(1.0, "").unwrap());
                assert_eq!(a.values, b.values, "{combine} depth {depth}");
                assert!(a.values.iter().any(|v| *v != 0.0));
            }
        }
    }

    #[test]
    fn a_failed_or_stray_map_is_an_error_naming_the_frame() {
        let lattice = Lattice::axis_aligned([0.0; 3], 1.0, [2, 2, 2]);
        let settings = SeriesSettings {
            method: EspMethod::Direct,
            periodic: false,
            combine: Combine::Avg,
            memory: MemoryLimit {
                bytes: u64::MAX,
                source: "test".into(),
            },
        };
        let mut acc = MapAccumulator::new(lattice, Combine::Avg, &settings.memory).unwrap();
        let mut tr = trajectory(3);
        let e = fold_frames_ahead(
            &mut tr,
            &[0, 1, 2],
            &[1.0, 1.0, 1.0],
            &settings,
            &mut acc,
            2,
            &mut |_, _| Ok(()),
            &mut || Err("device lost".to_string()),
            &mut |_| {},
            &mut |_| {},
        )
        .unwrap_err();
        assert!(e.to_string().contains("device lost"), "{e}");
        let mut tr = trajectory(3);
        let e = fold_frames_ahead(
            &mut tr,
            &[0, 1, 2],
            &[1.0, 1.0, 1.0],
            &settings,
            &mut acc,
            2,
            &mut |_, _| Ok(()),
            &mut || {
                Ok((
                    7,
                    Grid3 {
                        lattice,
                        values: vec![0.0; 8],
                        description: String::new(),
                    },
                ))
            },
            &mut |_| {},
            &mut |_| {},
        )
        .unwrap_err();
        assert!(e.to_string().contains("request 7"), "{e}");
    }
}
