//! The wgpu engine: the WGSL compute passes that run on the render device (any GPU wgpu drives),
//! the third engine beside `compute::cpu` and `compute::cuda`, and the host-side packing those passes
//! read.
//!
//! - [`orbital`]: orbitals, densities and spin densities on a lattice (`shaders/orbital.wgsl`), from
//!   the basis packed by [`packed_mo`] with the layouts of `compute::layout`; [`device_field`] says
//!   which field requests it can take.
//! - [`molsurf`]: the molecular-surface field with the atoms binned on the device.
//! - [`marching_cubes`]: isosurfaces extracted on the device into vertex buffers the renderer draws.
//! - [`vertex_potential`]: the Coulomb potential of point charges at a mesh's vertices.
//! - [`cartoon`]: the cartoon mesh from per-residue inputs ([`cartoon_inputs`], built on the CPU).
//! - [`coulomb`]: direct Coulomb maps of point charges on a lattice, vacuum and screened models.
//! - [`msm`]: cutoff and multilevel-summation maps of point charges (the slab stage of an `EspPlan`).
//! - [`msm_levels`]: the long-range levels of multilevel summation (anterpolation to prolongation).
//! - [`rdf`]: pair-distance histograms of radial distribution functions.
//! - [`ils`]: implicit ligand sampling, one frame's voxel means of the probe's occupancy.
//! - [`pb`]: the linearized Poisson-Boltzmann solver on the host's maps ([`pb_mg`]: its multigrid
//!   and conjugate gradients on the device).
//! - [`qm_esp`]: a wavefunction's own electrostatic potential (nuclei and electron density) on a
//!   lattice, from the host preparation of `compute::qm_esp` the CPU and CUDA engines share.
//! - [`engine`]: [`engine::WgpuEngine`], these passes behind the slab-engine interface the worker
//!   pool drives (`jobs::adapter_worker`), beside `compute::cpu` and `compute::cuda`.
//!
//! Called by `app` (the viewer's draw stage), by the tests and by the developer benchmark harness.
//! It imports wgpu and nothing of `render`: the renderer draws the buffers these passes fill
//! ([`marching_cubes::GpuMesh`], [`vertex_potential::VertexValues`], [`cartoon::CartoonMesh`]). The
//! packing modules need no GPU and build without the `gui` feature (`jobs` and `analysis` use them).

pub mod cartoon_inputs;
pub mod device_field;
pub mod packed_mo;

#[cfg(feature = "gui")]
pub mod adapters;
#[cfg(feature = "gui")]
pub mod cartoon;
#[cfg(feature = "gui")]
pub mod coulomb;
#[cfg(feature = "gui")]
pub mod engine;
#[cfg(feature = "gui")]
pub mod ils;
#[cfg(feature = "gui")]
pub mod marching_cubes;
#[cfg(feature = "gui")]
pub mod molsurf;
#[cfg(feature = "gui")]
pub mod msm;
#[cfg(feature = "gui")]
pub mod msm_levels;
#[cfg(feature = "gui")]
pub mod orbital;
#[cfg(feature = "gui")]
mod pass;
#[cfg(feature = "gui")]
pub mod pb;
#[cfg(feature = "gui")]
pub mod pb_mg;
#[cfg(feature = "gui")]
pub mod qm_esp;
#[cfg(feature = "gui")]
pub mod rdf;
#[cfg(feature = "gui")]
pub mod vertex_potential;

/// Every compute shader module of this engine, by name, as it is compiled (validated by
/// `tests/render.rs` with naga, beside the renderer's own modules).
#[cfg(feature = "gui")]
pub fn all_modules() -> Vec<(&'static str, String)> {
    vec![
        ("orbital", orbital::SHADER_SOURCE.to_string()),
        ("molsurf", molsurf::SHADER_SOURCE.to_string()),
        ("vertex_coulomb", vertex_potential::SHADER_SOURCE.to_string()),
        ("cartoon", cartoon::SHADER_SOURCE.to_string()),
        ("marching_cubes", marching_cubes::SHADER_SOURCE.to_string()),
        ("coulomb_map", coulomb::SHADER_SOURCE.to_string()),
        ("msm_slab", msm::SHADER_SOURCE.to_string()),
        ("msm_levels", msm_levels::SHADER_SOURCE.to_string()),
        ("rdf", rdf::SHADER_SOURCE.to_string()),
        ("ils", ils::SHADER_SOURCE.to_string()),
        ("pb", pb_mg::SHADER_SOURCE.to_string()),
        (
            "qm_esp",
            qm_esp::shader_source(crate::compute::qm_esp::nuclear_attraction::MAX_PAIR_L),
        ),
    ]
}

/// The size in bytes of the type `name` of a parsed WGSL module (tests of the `#[repr(C)]` twins).
#[cfg(all(test, feature = "gui"))]
pub(crate) fn wgsl_type_size(module: &::wgpu::naga::Module, name: &str) -> usize {
    module
        .types
        .iter()
        .find(|(_, t)| t.name.as_deref() == Some(name))
        .map_or(0, |(_, t)| t.inner.size(module.to_ctx()) as usize)
}
