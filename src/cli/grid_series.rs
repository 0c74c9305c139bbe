//! `grid esp --frames ... --combine`: one map combined over many frames (average, standard
//! deviation, extremes), each MPI rank folding its share of the frames, rank 0 writing the map.

use super::grid::*;
use anyhow::{Result, bail};
use orbitfield::analysis::esp_series::{
    self, Combine, MAP_BYTES_PER_POINT, MapAccumulator, MemoryLimit, SeriesSettings, accumulator_bytes_per_point,
    check_memory, require_charges,
};
use orbitfield::batch::Ranks;
use orbitfield::io::System;
use orbitfield::io::cube::CubeAtom;
use orbitfield::jobs::SlotId;
use orbitfield::model::FrameRange;
use std::time::Instant;

/// Loads the files and checks the frames, lattice and memory of `grid esp --frames`.
fn prepare_esp_series(args: &GridArgs, limit: &MemoryLimit, frames_text: &str) -> Result<EspSeries> {
    let method = args.esp.method()?;
    let mut system = super::load_noted(&args.files)?;
    let whole_note = super::grid_source::make_whole(&mut system, args.as_written);
    orbitfield::jobs::pair::share_decoding(&mut system.trajectory);
    if !system.wavefunctions.is_empty() {
        bail!(
            "--frames combines trajectory frames of a structure with partial charges, not wavefunctions \
             (-o DIR/ writes one cube per frame of a wavefunction series)"
        );
    }
    let combine: Combine = args.combine.unwrap_or_default().into();
    let range = FrameRange::parse(frames_text).map_err(anyhow::Error::msg)?;
    let n_frames = system.trajectory.n_frames();
    let frames = range.indices(n_frames).map_err(anyhow::Error::msg)?;
    let Some(&first) = frames.first() else {
        bail!("the frame range '{frames_text}' selects no frames (the files hold {n_frames})");
    };
    let first_frame = esp_frame(&mut system, &args.esp, first)?;
    let lattice = lattice_of(args, &first_frame.positions_angstrom())?;
    check_memory(
        lattice.dims,
        MAP_BYTES_PER_POINT + accumulator_bytes_per_point(combine),
        limit,
    )?;
    let charges = require_charges(&system)?;
    let settings = SeriesSettings {
        method,
        periodic: args.esp.pbc,
        combine,
        memory: limit.clone(),
    };
    let acc = MapAccumulator::new(lattice, combine, &settings.memory)?;
    Ok(EspSeries {
        system,
        frames,
        charges,
        settings,
        acc,
        atoms: first_frame.atoms,
        whole_note,
    })
}

/// What every rank of `grid esp --frames` prepares before the frames are dealt.
struct EspSeries {
    system: System,
    frames: Vec<usize>,
    charges: Vec<f64>,
    settings: SeriesSettings,
    acc: MapAccumulator,
    atoms: Vec<CubeAtom>,
    /// Molecules in pieces in the first frame made whole (said once, by rank 0).
    whole_note: Option<String>,
}

/// `grid esp --frames ... --combine`: each rank folds its share of the frames into a partial
/// accumulator, the partials merge on rank 0 (Welford/Chan for avg and stdev, extremes for min/max),
/// and rank 0 writes the map.
pub(super) fn run_esp_series(args: &GridArgs, dx: bool, limit: &MemoryLimit, frames_text: &str) -> Result<()> {
    let t0 = Instant::now();
    let ranks = Ranks::from_environment()?;
    let unit = args.esp.unit()?;
    let EspSeries {
        mut system,
        frames,
        charges,
        settings,
        mut acc,
        atoms,
        whole_note,
    } = super::agreed(&ranks, prepare_esp_series(args, limit, frames_text))?;
    if let Some(note) = whole_note.filter(|_| ranks.rank() == 0) {
        eprintln!("note: {note}");
    }
    let combine = settings.combine;
    let evaluator = LatticeEvaluator::with_devices(
        &args.device,
        orbitfield::compute::placement::JobKind::Potential,
        ranks.device_selection(),
    )?;
    let bar = super::root_bar(&ranks, frames.len());
    let depth = frames_in_flight(&evaluator, acc.lattice().n_points());
    let mut work = |block: &[usize]| -> Result<(), String> {
        let mut tick = |_| {
            if let Some(b) = &bar {
                b.inc(1);
            }
        };
        match evaluator.pool().filter(|_| depth > 1) {
            // Frames in flight on the pool's devices (each takes whole frames or tiles of them as
            // it frees up); folded in frame order, so the map is the same as one after another.
            Some(pool) => esp_series::fold_frames_ahead(
                &mut system.trajectory,
                block,
                &charges,
                &settings,
                &mut acc,
                depth,
                &mut |i, job| {
                    pool.submit(SlotId(FRAME_SLOTS + i as u64), (), job);
                    Ok(())
                },
                &mut || {
                    let r = pool
                        .results()
                        .recv()
                        .map_err(|_| "the worker pool has shut down".to_string())?;
                    let i = r.slot.0.checked_sub(FRAME_SLOTS).unwrap_or(u64::MAX) as usize;
                    r.outcome.map(|g| (i, g)).map_err(|e| e.to_string())
                },
                &mut |values| pool.recycle(values),
                &mut tick,
            ),
            None => esp_series::fold_frames(
                &mut system.trajectory,
                block,
                &charges,
                &settings,
                &mut acc,
                &mut |job| evaluator.grid(job).map_err(|e| format!("{e:#}")),
                &mut tick,
            ),
        }
        .map_err(|e| e.to_string())
    };
    super::run_dealt(&ranks, &frames, &bar, &mut work)?;
    let Some(acc) = ranks.reduce_to_root(acc)? else {
        return Ok(());
    };
    let description = format!(
        "esp of partial charges ({}), {combine} over {} frames '{frames_text}' ({})",
        method_label(&settings.method, args.esp.pbc),
        acc.count(),
        unit.label()
    );
    let grid = acc.finish(unit.per_hartree_per_e(), description)?;
    write_grid(&args.output, dx, &grid, &atoms)?;
    report(
        &args.output,
        &format!("esp {combine} of {} frames", acc.count()),
        &grid,
        t0.elapsed().as_secs_f64(),
        &unit.label(),
    );
    Ok(())
}

/// Slots of the frames in flight: frame request i goes to slot `FRAME_SLOTS + i` (apart from the
/// slots `Pool::compute_grid` takes, counted down from the top).
const FRAME_SLOTS: u64 = 1 << 32;

/// Frame maps allowed in flight at once on top of the one `check_memory` counted.
const FLIGHT_MAP_BYTES: u64 = 1 << 30;

/// How many frames of a series the pool computes at once: two per GPU worker (so each device has
/// the next frame queued when it finishes one), as far as the extra maps stay within
/// [`FLIGHT_MAP_BYTES`]; one without GPUs.
fn frames_in_flight(evaluator: &LatticeEvaluator, map_points: usize) -> usize {
    let gpus = evaluator
        .pool()
        .map_or(0, |p| p.workers().iter().filter(|w| w.is_gpu).count());
    let map_bytes = (map_points as u64).saturating_mul(4).max(1);
    let room = (FLIGHT_MAP_BYTES / map_bytes) as usize + 1;
    (2 * gpus).min(room).max(1)
}
