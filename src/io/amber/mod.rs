//! AMBER files: topologies ([`prmtop`], including CHAMBER), NetCDF trajectories and restarts
//! ([`netcdf`], with a writer), ASCII trajectories ([`mdcrd`]) and ASCII restarts ([`rst7`]).
//!
//! `io::load` opens them: a prmtop gives the structure (partial charges, radii, masses, types,
//! residues, bonds) and tells the coordinate files what they lack (the mdcrd format stores neither
//! the atom count nor the box angles); the coordinate files become the trajectory. The NetCDF
//! writer is the way coordinates are written back out.

pub mod mdcrd;
pub mod netcdf;
pub mod netcdf_write;
pub mod prmtop;
pub mod rst7;

pub use mdcrd::{BoxHint, MdcrdReader};
pub use netcdf::{NetcdfEncoder, NetcdfReader, NetcdfWriter};
pub use prmtop::Prmtop;
pub use rst7::Rst7;
