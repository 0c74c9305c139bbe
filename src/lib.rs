//! # orbitfield
//!
//! A molecular viewer that computes molecular orbitals and electrostatic potential maps per
//! trajectory frame and draws their isosurfaces live.
//!
//! Data flows one way through the layers:
//!
//! - [`io`] reads files (structures, trajectories, wavefunctions, volumes) into the plain data of
//!   [`model`]: a `Structure`, a lazily read `Trajectory`, `Wavefunction`s and `Grid3` lattices.
//! - [`compute`] turns a field request (an orbital, a density, a Coulomb potential) on a lattice
//!   into a `Grid3`. The CPU engine is the numerical reference; the CUDA engine compiles kernels at
//!   run time for the loaded basis set and is tested against it.
//! - [`jobs`] is the only place that owns threads: persistent workers per GPU and for the CPU pull
//!   tiles from a shared queue, with retries, cancellation by generation and progress counters.
//!   Every result carries the key of the request that made it.
//! - [`surface`] extracts isosurfaces (marching cubes) from lattices.
//! - [`analysis`] sits beside `surface`, above `compute` and below `jobs`/`app`: radial distribution
//!   functions, orbital tracking, potential maps combined over frames, ion placement, QM regions in
//!   MD frames and atomic charges. It uses `compute` for fields and kernels; `jobs` schedules its
//!   per-frame work (RDF frames run on the same device workers as field tiles).
//! - [`batch`] spreads batch work over frames across processes (one, or the ranks of an MPI job with the
//!   `mpi` feature): frames dealt by measured cost, partial results reduced in rank order to rank 0,
//!   per-frame files renamed only when every rank succeeded. The `grid`, `rdf` and `render` commands use it.
//! - [`render`] draws atoms, bonds, meshes and slices with wgpu; it knows meshes and cameras, not
//!   molecules, and computes no field (the WGSL compute passes are the `compute::wgpu` engine).
//!   [`ui`] holds the egui panels; [`app`] owns the state and wires everything together.
//! - [`script`] is the command language above `app`: one command per line for the window's
//!   command line, `.ofc` scripts and headless runs, and the action log that writes what the
//!   panels do as commands.
//!
//! [`model`] is the ground floor: it imports nothing of the project. `model`, `io`, the CPU and
//! CUDA engines of `compute`, `analysis`, `jobs` and `surface` never touch egui, wgpu or winit: the
//! command line, the tests and the benchmarks use them without a window; `compute::wgpu` (the WGSL
//! passes) and `render`, `ui` and `app` come with the default `gui` feature. The rules, and the
//! allowed edges between modules, are in `docs/architecture.md`; `tests/layers.rs` checks them.

pub mod analysis;
#[cfg(feature = "gui")]
pub mod app;
pub mod assets;
pub mod batch;
pub mod compute;
pub mod io;
pub mod jobs;
pub mod model;
#[cfg(feature = "python")]
pub mod python;
#[cfg(feature = "gui")]
pub mod render;
#[cfg(feature = "gui")]
pub mod script;
pub mod surface;
#[cfg(feature = "gui")]
pub mod ui;
