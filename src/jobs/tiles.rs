//! Tile sizes of the pool's GPU workers, chosen per request from the devices' measured rates: one
//! device takes the largest tiles (its engine overlaps kernels and copies inside a tile); several
//! take guided tiles (a share of the planes left, shrinking towards the end, never below about
//! [`MIN_TILE_SECONDS`] of measured work) from the shared queue, so a device that finishes early
//! takes the next tile and the slowest device never holds the last large one.
//!
//! Owns [`gpu_tile_planes`], the measured rates ([`Rates`]) and the job kinds they are kept for.

use crate::compute::{FieldInput, FieldJob};
use std::collections::BTreeMap;

/// Shortest tile worth handing out on several devices, in seconds of measured work: shorter tiles
/// would spend more on their fixed costs (launch, first kernel and last copy, which the engine's
/// pipeline cannot overlap) than they gain in balance.
pub(super) const MIN_TILE_SECONDS: f64 = 2e-3;

/// Smallest guided tile before a device's rate for the job's kind is known, in points.
pub(super) const UNMEASURED_MIN_POINTS: usize = 1 << 20;

/// Planes of the next GPU tile of a request of `total_planes` planes of `plane_points` points, with
/// `left_planes` not handed out yet, on a pool of `devices` GPU workers. `max_points`: the pool's
/// largest GPU tile; `rate`: this device's measured points per second for the job's kind.
pub(super) fn gpu_tile_planes(
    left_planes: usize,
    total_planes: usize,
    plane_points: usize,
    devices: usize,
    max_points: usize,
    rate: Option<f64>,
) -> usize {
    let plane = plane_points.max(1);
    let max_planes = (max_points / plane).max(1);
    if devices <= 1 {
        return max_planes.min(left_planes).max(1);
    }
    let min_points = match rate {
        Some(r) if r.is_finite() && r > 0.0 => (r * MIN_TILE_SECONDS).min(max_points as f64) as usize,
        _ => UNMEASURED_MIN_POINTS.min(max_points),
    };
    let min_planes = (min_points / plane).max(1);
    // Half of an even share of what is left (the guided rule), at least the shortest useful
    // tile, at most the largest and at most one device's share of the whole request.
    let guided = left_planes.div_ceil(2 * devices);
    let share = total_planes.div_ceil(devices);
    guided
        .max(min_planes)
        .min(max_planes)
        .min(share)
        .min(left_planes)
        .max(1)
}

/// What a rate is kept for: the field and the kind of input (and, for point charges, their count
/// to within a factor of two, as the direct sum's time per point grows with it).
pub(super) fn job_kind(job: &FieldJob) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    std::mem::discriminant(&job.field).hash(&mut h);
    std::mem::discriminant(&job.input).hash(&mut h);
    let size = match &job.input {
        FieldInput::Charges(q) => q.charges_e.len(),
        FieldInput::ScreenedCharges(s) => s.charges.charges_e.len(),
        _ => 0,
    };
    (usize::BITS - size.leading_zeros()).hash(&mut h);
    h.finish()
}

/// Measured points per second of each GPU worker per job kind (tile time, copy back included),
/// smoothed over the tiles.
#[derive(Default, Debug)]
pub(super) struct Rates {
    by_worker_kind: BTreeMap<(usize, u64), f64>,
}

impl Rates {
    pub(super) fn get(&self, worker: usize, kind: u64) -> Option<f64> {
        self.by_worker_kind.get(&(worker, kind)).copied()
    }

    /// Records one tile of `points` computed in `seconds`.
    pub(super) fn record(&mut self, worker: usize, kind: u64, points: usize, seconds: f64) {
        if points == 0 || !(seconds > 0.0 && seconds.is_finite()) {
            return;
        }
        let sample = points as f64 / seconds;
        let r = self.by_worker_kind.entry((worker, kind)).or_insert(sample);
        *r = 0.5 * *r + 0.5 * sample;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hands out a whole request to `devices` equal devices in turn; returns the tiles' planes.
    fn deal(total: usize, plane: usize, devices: usize, max: usize, rate: Option<f64>) -> Vec<usize> {
        let mut left = total;
        let mut tiles = Vec::new();
        while left > 0 {
            let t = gpu_tile_planes(left, total, plane, devices, max, rate);
            assert!(t >= 1 && t <= left);
            tiles.push(t);
            left -= t;
        }
        tiles
    }

    #[test]
    fn one_device_takes_the_largest_tiles() {
        assert_eq!(deal(256, 65536, 1, 1 << 24, None), vec![256]);
        assert_eq!(deal(256, 65536, 1, 1 << 22, Some(1e12)), vec![64; 4]);
        // A plane larger than the largest tile: one plane at a time.
        assert_eq!(deal(3, 1 << 25, 1, 1 << 24, None), vec![1, 1, 1]);
    }

    #[test]
    fn a_cheap_job_on_two_devices_is_split_in_halves() {
        // C60 orbital, 256^3: about 6e9 points/s with the copy back, so 2 ms is 190 planes.
        let tiles = deal(256, 65536, 2, 1 << 24, Some(6e9));
        assert_eq!(tiles, vec![128, 128]);
    }

    #[test]
    fn an_expensive_job_on_two_devices_ends_in_small_guided_tiles() {
        // A million charges: 3.7e6 points/s, a plane takes 18 ms.
        let tiles = deal(256, 65536, 2, 1 << 24, Some(3.7e6));
        assert_eq!(tiles[0], 64);
        assert!(tiles.windows(2).all(|w| w[1] <= w[0]), "{tiles:?}");
        assert_eq!(tiles.last(), Some(&1));
        assert_eq!(tiles.iter().sum::<usize>(), 256);
        // The last tiles are a small part of the work: the devices end within a few planes.
        assert!(tiles.iter().rev().take(4).all(|&t| t <= 2), "{tiles:?}");
    }

    #[test]
    fn unmeasured_jobs_use_moderate_tiles() {
        let tiles = deal(256, 65536, 2, 1 << 24, None);
        assert_eq!(tiles[0], 64);
        assert!(tiles.iter().all(|&t| t >= 16 || t == *tiles.last().unwrap_or(&0)));
    }

    #[test]
    fn rates_are_kept_per_worker_and_kind() {
        let mut r = Rates::default();
        assert_eq!(r.get(0, 1), None);
        r.record(0, 1, 1000, 1e-3);
        assert_eq!(r.get(0, 1), Some(1e6));
        r.record(0, 1, 3000, 1e-3);
        assert_eq!(r.get(0, 1), Some(2e6));
        assert_eq!(r.get(1, 1), None);
        r.record(1, 1, 10, 0.0);
        r.record(1, 1, 0, 1.0);
        assert_eq!(r.get(1, 1), None);
    }
}
