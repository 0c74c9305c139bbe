//! Host preparation of device-computed fields off the viewer's thread: one named worker packs the
//! next frame's basis and coefficients (`compute::wgpu::device_field`) while the current frame is drawn.
//!
//! Owns [`Packer`], a [`LaneWorker`] for field jobs. Used by the viewer's render-device source
//! (`app::fields::device`) for each field representation's look-ahead: one lane per representation,
//! latest wins per lane, results carry their lane, key and generation, and a result whose
//! generation is no longer its lane's newest is dropped by [`Packer::try_recv`].

use super::lanes::LaneWorker;
use crate::compute::FieldJob;
use crate::compute::wgpu::device_field::DeviceField;
use std::sync::Arc;

/// A job's device form, with the lane and key of its request. `Ok(None)`: no device pass computes
/// the field.
#[derive(Debug)]
pub struct Packed<K> {
    pub lane: u64,
    pub key: K,
    pub generation: u64,
    pub field: Result<Option<Arc<DeviceField>>, String>,
    /// Time spent packing, seconds.
    pub seconds: f64,
}

/// The packing worker.
pub struct Packer<K: Send + 'static> {
    lanes: LaneWorker<(K, FieldJob), Packed<K>>,
}

impl<K: Send + 'static> Packer<K> {
    /// Starts the worker (`orbitfield-packer`). Errors when the thread cannot be started.
    pub fn start() -> Result<Packer<K>, String> {
        let lanes = LaneWorker::start("orbitfield-packer", "field packing", |(key, job): (K, FieldJob)| {
            let t = std::time::Instant::now();
            let field = DeviceField::from_job(&job)
                .map(|f| f.map(Arc::new))
                .map_err(|e| e.to_string());
            Packed {
                lane: 0,
                key,
                generation: 0,
                field,
                seconds: t.elapsed().as_secs_f64(),
            }
        })?;
        Ok(Packer { lanes })
    }

    /// Asks for `job`'s device form in `lane`, replacing that lane's request not yet started.
    pub fn submit(&mut self, lane: u64, key: K, job: FieldJob) -> u64 {
        self.lanes.submit(lane, (key, job))
    }

    /// Forgets `lane`.
    pub fn remove_lane(&mut self, lane: u64) {
        self.lanes.remove_lane(lane);
    }

    /// True while `lane`'s newest request has not come back through [`Packer::try_recv`].
    pub fn in_flight(&self, lane: u64) -> bool {
        self.lanes.in_flight(lane)
    }

    /// The newest finished request of every lane (never blocks), in lane order.
    pub fn try_recv(&mut self) -> Vec<Packed<K>> {
        self.lanes
            .try_recv()
            .into_iter()
            .map(|d| Packed {
                lane: d.lane,
                generation: d.generation,
                ..d.output
            })
            .collect()
    }
}
