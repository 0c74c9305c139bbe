//! Plain-old-data types shared with the WGSL shaders: instances, vertices and uniforms.
//!
//! Each `#[repr(C)]` struct here has a twin in `shaders/*.wgsl` (named in its doc); change both
//! together. The renderer uploads slices of these; the app builds them from molecules.

use bytemuck::{Pod, Zeroable};

/// Packs an RGBA colour into the `Unorm8x4` layout the shaders read.
pub fn pack_rgba(rgba: [u8; 4]) -> u32 {
    u32::from_le_bytes(rgba)
}

/// One atom as a sphere impostor. Twin: `SphereIn` in `shaders/spheres.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct SphereInstance {
    pub center_angstrom: [f32; 3],
    pub radius_angstrom: f32,
    /// RGBA8, see [`pack_rgba`].
    pub color: u32,
}

/// One bond as a two-coloured cylinder impostor. Twin: `CylinderIn` in `shaders/cylinders.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct CylinderInstance {
    pub a_angstrom: [f32; 3],
    pub b_angstrom: [f32; 3],
    pub radius_angstrom: f32,
    pub color_a: u32,
    pub color_b: u32,
}

/// A mesh vertex. Twin: `MeshIn` in `shaders/mesh.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct MeshVertex {
    pub position_angstrom: [f32; 3],
    pub normal: [f32; 3],
}

/// A mesh vertex's own colour, in a second vertex buffer beside [`MeshVertex`]: a scalar drawn
/// through the mesh uniform's colormap and range, or a categorical colour. Twin: `MeshColorIn` in
/// `shaders/mesh.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct MeshVertexColor {
    pub value: f32,
    /// RGBA8 ([`pack_rgba`]): alpha 255 draws the rgb as it is (categorical colours), alpha 0
    /// draws `value` through the colormap.
    pub color: u32,
}

/// Entries of the colormap table in [`MeshUniform`] (`COLORMAP_ENTRIES` in `shaders/mesh.wgsl`).
pub const COLORMAP_ENTRIES: usize = 64;

/// Per-mesh colour and opacity, and the colouring by a second field. Twin: `MeshUniform` in
/// `shaders/mesh.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct MeshUniform {
    pub color: [f32; 4],
    /// Position of the colour field's first lattice point (Angstrom); w is 1 when the mesh is
    /// coloured by the field, 0 for the plain colour.
    pub field_origin_angstrom: [f32; 4],
    /// Inverse lattice steps along x, y, z (per Angstrom; axis-aligned lattices).
    pub field_inv_step_per_angstrom: [f32; 4],
    /// x: the field value at the colormap's start, y: at its end.
    pub field_range: [f32; 4],
    /// The colormap sampled at `COLORMAP_ENTRIES` evenly spaced points (RGB 0..1, alpha 1).
    pub colormap: [[f32; 4]; COLORMAP_ENTRIES],
}

impl Default for MeshUniform {
    fn default() -> Self {
        MeshUniform {
            color: [0.0; 4],
            field_origin_angstrom: [0.0; 4],
            field_inv_step_per_angstrom: [0.0; 4],
            field_range: [0.0, 1.0, 0.0, 0.0],
            colormap: [[0.0; 4]; COLORMAP_ENTRIES],
        }
    }
}

/// A line vertex. Twin: `LineIn` in `shaders/lines.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct LineVertex {
    pub position_angstrom: [f32; 3],
    pub color: u32,
}

/// Where the slice quad sits. Twin: `SliceUniform` in `shaders/slice.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct SliceUniform {
    pub origin_angstrom: [f32; 4],
    pub edge_u_angstrom: [f32; 4],
    pub edge_v_angstrom: [f32; 4],
}

/// Per-frame uniform. Twin: `Globals` in `shaders/common.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct Globals {
    pub view: [[f32; 4]; 4],
    pub proj: [[f32; 4]; 4],
    pub view_proj: [[f32; 4]; 4],
    pub light_dir_view: [f32; 4],
    pub background: [f32; 4],
    pub fog: [f32; 4],
    pub viewport: [f32; 4],
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_match_the_wgsl_layouts() {
        assert_eq!(std::mem::size_of::<SphereInstance>(), 20);
        assert_eq!(std::mem::size_of::<CylinderInstance>(), 36);
        assert_eq!(std::mem::size_of::<MeshVertex>(), 24);
        assert_eq!(std::mem::size_of::<MeshVertexColor>(), 8);
        assert_eq!(std::mem::size_of::<LineVertex>(), 16);
        assert_eq!(std::mem::size_of::<Globals>(), 256);
        assert_eq!(std::mem::size_of::<SliceUniform>(), 48);
        assert_eq!(pack_rgba([1, 2, 3, 4]).to_le_bytes(), [1, 2, 3, 4]);
    }
}
