//! The grid buffers the pool keeps for reuse ([`Pool::recycle`]) and their registration with the
//! CUDA driver.
//!
//! Owns [`GridBuffer`] (a grid's values, registered or not) and [`RecycleList`] (the buffers given
//! back, at most [`MAX_RECYCLED`]). With [`PoolConfig::register_recycled`] and a CUDA device in the
//! pool, a buffer given back is page-locked in place (`cuMemHostRegister`, for every device) once,
//! when it is given back; the request written into it next has its pipelined slabs copied by the
//! devices straight into it (`compute::cuda::pipeline`), and the registration is undone before the
//! values leave the pool (the finished grid, a buffer the list drops, the pool's end), so no
//! memory goes back to the allocator registered. A buffer the driver refuses stays plain and
//! takes the page-locked chunk buffers' way.

use super::*;
use crate::compute::cuda::HostRegistration;
use cudarc::driver::CudaContext;

/// Output buffers the pool keeps for reuse ([`Pool::recycle`]) at least; two per GPU worker where
/// there are more (frames in flight take one each), within [`MAX_RECYCLED_BYTES`] together.
pub(super) const MAX_RECYCLED: usize = 2;
/// The most memory the kept buffers hold together (one buffer is kept whatever its size).
pub(super) const MAX_RECYCLED_BYTES: usize = 1 << 30;
/// Smaller buffers are not kept: allocating them costs little.
pub(super) const RECYCLE_MIN_POINTS: usize = 1 << 20;

/// A grid's values, registered with the driver or not. The registration is undone before the
/// values are handed out ([`GridBuffer::into_vec`]) or freed (drop).
pub(super) struct GridBuffer {
    /// Covers the first values of `values` (never more than its length when registered); dropped
    /// before `values` moves or is freed.
    registration: Option<HostRegistration>,
    values: Vec<f32>,
}

impl GridBuffer {
    pub(super) fn plain(values: Vec<f32>) -> GridBuffer {
        GridBuffer {
            registration: None,
            values,
        }
    }

    pub(super) fn capacity(&self) -> usize {
        self.values.capacity()
    }

    #[cfg(test)]
    pub(super) fn is_registered(&self) -> bool {
        self.registration.is_some()
    }

    /// Registers the values through `ctx` (a refusal leaves the buffer plain, with a debug note).
    fn register(&mut self, ctx: &Arc<CudaContext>) {
        if self.registration.is_some() || self.values.is_empty() {
            return;
        }
        // SAFETY: the values are neither moved nor freed while the registration lives: `resized`
        // drops it before any reallocation, `into_vec` and drop before the values leave.
        match unsafe { HostRegistration::new(ctx, &mut self.values) } {
            Ok(r) => self.registration = Some(r),
            Err(e) => tracing::debug!("grid buffer not registered: {e}"),
        }
    }

    /// `points` values (growing with zeros, or cut), in the same memory where it holds them.
    pub(super) fn resized(mut self, points: usize) -> GridBuffer {
        if points > self.values.capacity() {
            // The vector moves: not registered any more.
            self.registration = None;
        }
        if self.values.len() >= points {
            self.values.truncate(points);
        } else {
            self.values.resize(points, 0.0);
        }
        self
    }

    pub(super) fn values_mut(&mut self) -> &mut Vec<f32> {
        &mut self.values
    }

    /// The values, unregistered first.
    pub(super) fn into_vec(mut self) -> Vec<f32> {
        self.registration = None;
        std::mem::take(&mut self.values)
    }
}

impl Drop for GridBuffer {
    fn drop(&mut self) {
        // Unregistered before the values go back to the allocator.
        self.registration = None;
    }
}

/// The buffers given back, largest first, and the context to register them through.
#[derive(Default)]
pub(super) struct RecycleList {
    buffers: Vec<GridBuffer>,
    register_with: Option<Arc<CudaContext>>,
}

impl RecycleList {
    /// A list that registers what it keeps through `register_with` (none: plain buffers).
    pub(super) fn new(register_with: Option<Arc<CudaContext>>) -> RecycleList {
        RecycleList {
            buffers: Vec::new(),
            register_with,
        }
    }

    /// The buffer with the least capacity that holds `points` values, taken out of the list (none
    /// for small requests).
    pub(super) fn take(&mut self, points: usize) -> Option<GridBuffer> {
        if points < RECYCLE_MIN_POINTS {
            return None;
        }
        let best = self
            .buffers
            .iter()
            .enumerate()
            .filter(|(_, v)| v.capacity() >= points)
            .min_by_key(|(_, v)| v.capacity())
            .map(|(i, _)| i)?;
        Some(self.buffers.swap_remove(best))
    }

    /// Keeps `buffer`, and the largest others: two per GPU worker (at least [`MAX_RECYCLED`])
    /// within [`MAX_RECYCLED_BYTES`]; returns the ones dropped (to be freed outside the pool's lock).
    pub(super) fn keep(&mut self, buffer: GridBuffer, gpu_workers: usize) -> Vec<GridBuffer> {
        self.buffers.push(buffer);
        self.buffers.sort_by_key(|v| std::cmp::Reverse(v.capacity()));
        let mut keep = MAX_RECYCLED.max(2 * gpu_workers).min(self.buffers.len());
        while keep > 1 && self.buffers[..keep].iter().map(|v| v.capacity() * 4).sum::<usize>() > MAX_RECYCLED_BYTES {
            keep -= 1;
        }
        self.buffers.split_off(keep)
    }

    /// The context new buffers are registered through, when registration is on.
    pub(super) fn register_with(&self) -> Option<Arc<CudaContext>> {
        self.register_with.clone()
    }

    /// Empties the list (the pool's end).
    pub(super) fn clear(&mut self) -> Vec<GridBuffer> {
        std::mem::take(&mut self.buffers)
    }
}

/// `values` as a buffer to keep: registered through `ctx` when given (called outside the pool's
/// lock: a registration takes milliseconds).
pub(super) fn prepare_recycled(values: Vec<f32>, ctx: Option<&Arc<CudaContext>>) -> GridBuffer {
    let mut b = GridBuffer::plain(values);
    if let Some(ctx) = ctx {
        b.register(ctx);
    }
    b
}

/// The CUDA context of the first CUDA engine among `engines`, when `config` registers buffers.
pub(super) fn registration_context(engines: &[EngineSpec], config: &PoolConfig) -> Option<Arc<CudaContext>> {
    if !config.register_recycled {
        return None;
    }
    engines
        .iter()
        .find_map(|e| e.engine.as_cuda().map(|c| c.context().clone()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_keeps_the_largest_and_hands_out_the_smallest_that_fits() {
        let mut list = RecycleList::new(None);
        let n = RECYCLE_MIN_POINTS;
        assert!(list.keep(GridBuffer::plain(vec![0.0; n]), 1).is_empty());
        assert!(list.keep(GridBuffer::plain(vec![0.0; 3 * n]), 1).is_empty());
        let dropped = list.keep(GridBuffer::plain(vec![0.0; 2 * n]), 1);
        assert_eq!(dropped.iter().map(GridBuffer::capacity).collect::<Vec<_>>(), vec![n]);
        assert!(list.take(n - 1).is_none(), "small requests take fresh memory");
        assert!(list.take(4 * n).is_none());
        let b = list.take(n + 1).unwrap();
        assert_eq!(b.capacity(), 2 * n);
        assert!(!b.is_registered());
        let v = b.resized(n + 1).into_vec();
        assert_eq!(v.len(), n + 1);
        assert_eq!(list.clear().len(), 1);
    }

    #[test]
    fn the_list_keeps_two_per_gpu_worker_within_its_byte_bound() {
        let mut list = RecycleList::new(None);
        let n = RECYCLE_MIN_POINTS;
        for _ in 0..8 {
            assert!(list.keep(GridBuffer::plain(vec![0.0; n]), 4).is_empty());
        }
        assert_eq!(
            list.keep(GridBuffer::plain(vec![0.0; n]), 4).len(),
            1,
            "eight for four GPU workers"
        );
        // Three buffers of 400 MiB: only two fit the 1 GiB bound, and the small ones go first.
        let big = 100 << 20;
        assert_eq!(list.keep(GridBuffer::plain(vec![0.0; big]), 4).len(), 1);
        assert_eq!(list.keep(GridBuffer::plain(vec![0.0; big]), 4).len(), 1);
        assert_eq!(list.keep(GridBuffer::plain(vec![0.0; big]), 4).len(), 7);
        let kept = list.clear();
        assert_eq!(
            kept.iter().map(GridBuffer::capacity).collect::<Vec<_>>(),
            vec![big, big]
        );
        assert!(kept.iter().map(|b| b.capacity() * 4).sum::<usize>() <= MAX_RECYCLED_BYTES);
    }
}
