//! The output grid of one request, written by several workers at once (disjoint plane ranges) and taken when every plane is done.

use super::*;

/// The output grid of one request. Tiles are disjoint plane ranges, each handed out once (a failed
/// tile is handed out again only after its failed attempt has returned), so workers write their
/// regions of the buffer at the same time without holding a lock; the buffer is taken once every
/// plane has been reported done.
pub(super) struct OutputBuffer {
    /// Points to the heap buffer of `owner`'s vector, which is neither resized nor moved until taken.
    ptr: *mut f32,
    len: usize,
    /// The values, registered with the CUDA driver when they came back through a registering
    /// [`pool_buffers::RecycleList`] (the devices then copy orbital slabs straight into them).
    owner: Mutex<pool_buffers::GridBuffer>,
}

// SAFETY: the raw pointer is only dereferenced through `tile`, whose callers write disjoint ranges
// (see the type's doc); the vector itself is behind a mutex.
unsafe impl Send for OutputBuffer {}
// SAFETY: as above.
unsafe impl Sync for OutputBuffer {}

impl OutputBuffer {
    pub(super) fn new(points: usize) -> OutputBuffer {
        // Zeroed memory comes from the allocator's zeroed pages: no pass over the buffer here, and
        // the pages are first touched by the workers that fill them, in parallel.
        OutputBuffer::from_buffer(pool_buffers::GridBuffer::plain(vec![0.0f32; points]))
    }

    /// A buffer of `points` values in `v`'s memory (a grid's buffer given back, [`Pool::recycle`]):
    /// its pages are mapped already, so the workers' writes cost no page faults (about 120,000 for
    /// a 0.5 GB map, a large share of its copy-back time). Old values stay where the new request
    /// does not reach them by growing; every point is written by a tile before the buffer is taken.
    pub(super) fn reuse(b: pool_buffers::GridBuffer, points: usize) -> OutputBuffer {
        OutputBuffer::from_buffer(b.resized(points))
    }

    pub(super) fn from_buffer(mut b: pool_buffers::GridBuffer) -> OutputBuffer {
        let v = b.values_mut();
        OutputBuffer {
            ptr: v.as_mut_ptr(),
            len: v.len(),
            owner: Mutex::new(b),
        }
    }

    /// The points `range` of the grid, for the one worker that computes them.
    ///
    /// # Safety
    /// No other reference to any point of `range` may exist while the slice lives, and the buffer
    /// must not have been taken.
    #[allow(clippy::mut_from_ref)]
    pub(super) unsafe fn tile(&self, range: Range<usize>) -> Option<&mut [f32]> {
        if range.start > range.end || range.end > self.len {
            return None;
        }
        // SAFETY: in bounds (checked above) of a live allocation; exclusive per the caller's contract.
        Some(unsafe { std::slice::from_raw_parts_mut(self.ptr.add(range.start), range.len()) })
    }

    /// Takes the grid (once every tile's writer has finished), unregistered.
    pub(super) fn take(&self) -> Vec<f32> {
        self.owner
            .lock()
            .map(|mut b| std::mem::replace(&mut *b, pool_buffers::GridBuffer::plain(Vec::new())).into_vec())
            .unwrap_or_default()
    }
}
