//! wgpu rendering of atoms, bonds, meshes and slices; knows meshes and cameras, not molecules.

pub mod mc_compute;
