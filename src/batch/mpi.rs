//! The MPI transport of [`super::Ranks`] (the `mpi` feature): the world communicator, the ranks on
//! this node (a shared-memory split, for choosing devices), gathers of one number per rank and
//! byte buffers between two ranks, cut into pieces below MPI's 2^31-element message limit.
//! Only the main thread calls MPI (the pool's workers never do), so funnelled threading suffices.

use ::mpi::environment::Universe;
use ::mpi::topology::{Communicator, SimpleCommunicator};
use ::mpi::traits::{CommunicatorCollectives, Destination, Source};

/// Largest piece of a byte buffer sent as one message.
const PIECE_BYTES: usize = 1 << 30;

pub struct Comm {
    world: SimpleCommunicator,
    local_rank: usize,
    local_size: usize,
    /// Finalises MPI when dropped, after everything above.
    _universe: Universe,
}

impl Comm {
    /// Initialises MPI (funnelled threading) and finds this rank's place on its node. A panic on any
    /// rank aborts the whole job (otherwise the other ranks would wait for it forever).
    pub fn init() -> Result<Comm, String> {
        let (universe, _) = ::mpi::initialize_with_threading(::mpi::Threading::Funneled)
            .ok_or_else(|| "MPI was initialised twice".to_string())?;
        let world = universe.world();
        let local = world.split_shared(world.rank());
        let (local_rank, local_size) = (to_usize(local.rank()), to_usize(local.size()));
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            previous(info);
            // SAFETY: MPI is initialised for the life of the process once `init` returned; MPI_Abort
            // ends every rank of the world and does not return.
            unsafe {
                ::mpi::ffi::MPI_Abort(::mpi::ffi::RSMPI_COMM_WORLD, 70);
            }
        }));
        Ok(Comm {
            world,
            local_rank,
            local_size,
            _universe: universe,
        })
    }

    pub fn rank(&self) -> usize {
        to_usize(self.world.rank())
    }

    pub fn size(&self) -> usize {
        to_usize(self.world.size())
    }

    pub fn local_rank(&self) -> usize {
        self.local_rank
    }

    pub fn local_size(&self) -> usize {
        self.local_size
    }

    /// Every rank's `value` in rank order.
    pub fn all_gather_f64(&self, value: f64) -> Vec<f64> {
        let mut out = vec![0.0f64; self.size()];
        self.world.all_gather_into(&value, &mut out[..]);
        out
    }

    /// Sends `bytes` to rank `to` (its length first, then pieces).
    pub fn send_bytes(&self, to: usize, bytes: &[u8]) {
        let peer = self.world.process_at_rank(to_rank(to));
        peer.send(&(bytes.len() as u64));
        for piece in bytes.chunks(PIECE_BYTES) {
            peer.send(piece);
        }
    }

    /// Receives what [`Comm::send_bytes`] sent from rank `from`.
    pub fn receive_bytes(&self, from: usize) -> Vec<u8> {
        let peer = self.world.process_at_rank(to_rank(from));
        let (len, _) = peer.receive::<u64>();
        let mut out = vec![0u8; usize::try_from(len).unwrap_or(0)];
        for piece in out.chunks_mut(PIECE_BYTES) {
            peer.receive_into(piece);
        }
        out
    }
}

fn to_usize(x: i32) -> usize {
    usize::try_from(x).unwrap_or(0)
}

fn to_rank(x: usize) -> i32 {
    i32::try_from(x).unwrap_or(i32::MAX)
}
