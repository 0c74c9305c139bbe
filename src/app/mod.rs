//! The application: state, commands, documents, the representation list, sessions and the
//! desktop window.
//!
//! `app` owns the state and wires the layers together: it opens files through `io` into a
//! [`document::Document`], keeps the viewer's state split into document, view and panel state
//! ([`state`]) and carries out commands ([`apply`]). What is shown is one list of representations
//! ([`reps`]): atoms by selection in an atom style ([`atoms`]), or fields drawn as isosurfaces or
//! slices ([`slice`]), each field representation with its own request slot in the one
//! [`fields::FieldService`] that the jobs pool plugs into. [`draw`] uploads what the list shows to
//! the renderer (for the window, `render` and the playback bench alike). [`values`] gives every
//! number its unit, [`session`] and [`settings`] persist views and preferences, [`browser`] is the
//! built-in file browser, and [`window`] runs the desktop window. [`tools`] keeps what the user
//! adds beside the representations: [`measure`] (distances, angles, dihedrals and their series),
//! [`labels`] and the undo [`history`]. [`console`] holds the command line's state and the
//! observer hook through which every applied command reaches the action log (the command language
//! itself, and the log's text, are `script`'s). The egui panels live in `ui` and
//! only read the state and push commands.

pub mod apply;
pub mod atoms;
pub mod bond_orders;
pub mod browser;
pub mod console;
pub mod demo;
pub mod document;
pub mod draw;
pub mod energies;
pub mod esp_model;
pub mod export;
pub mod fetch;
pub mod fields;
pub mod fit;
pub mod framing;
pub mod history;
pub mod ils;
pub mod ils_paths;
pub mod labels;
pub mod measure;
pub use crate::io::open_paths;
pub mod orbitals;
pub mod pb;
pub mod potential;
pub mod qm;
pub mod ramachandran;
pub mod rdf;
pub mod reps;
pub mod rmsd;
pub mod sequence;
pub mod session;
pub mod settings;
pub mod slice;
pub mod state;
pub mod surface_pick;
pub mod tools;
pub mod values;
pub mod window;

/// The field service the viewer starts with: the jobs pool computes fields off the UI thread and
/// the surface module extracts the lobes.
pub fn default_field_service() -> fields::FieldService {
    fields::FieldService::new(Some(Box::new(fields::PoolBackend::start())), default_extractor())
}

/// The isosurface extractor available in this build (the `surface` module's marching cubes).
pub fn default_extractor() -> Option<fields::Extractor> {
    Some(extract_lobe)
}

/// Marching cubes around the region above a positive `iso` or below a negative one, capped where
/// the region meets the lattice's faces.
fn extract_lobe(grid: &crate::model::Grid3, iso: f32) -> Option<crate::surface::MeshData> {
    let mesh = crate::surface::extract_capped(grid, iso);
    (!mesh.is_empty()).then_some(mesh)
}

/// Computes a field on the calling thread, for batch commands (the CPU reference engine).
pub type BlockingEngine = fn(&crate::compute::FieldJob) -> Result<crate::model::Grid3, String>;

/// The blocking field engine available in this build.
pub fn blocking_engine() -> Option<BlockingEngine> {
    Some(|job| crate::compute::cpu::evaluate_grid(job).map_err(|e| e.to_string()))
}
