//! Slice planes: the z-plane through the middle of a grid, mapped through a colormap into an image
//! the renderer draws as a textured quad.

use crate::model::Grid3;
use crate::model::units::angstrom_from_bohr3;
use crate::render::SliceImage;
use crate::render::colormap::Colormap;

/// The middle z-plane of an axis-aligned grid; signed fields map symmetrically (0 in the middle
/// of the colormap), others from min to max. `None` for empty or sheared grids.
pub fn slice_image(grid: &Grid3, colormap: Colormap) -> Option<SliceImage> {
    let l = &grid.lattice;
    let [nx, ny, nz] = l.dims;
    if nx < 2 || ny < 2 || nz == 0 || !l.is_axis_aligned() || nx > 8192 || ny > 8192 {
        return None;
    }
    let k = nz / 2;
    let (lo, hi) = grid.min_max()?;
    let signed = lo < 0.0 && hi > 0.0;
    let m = lo.abs().max(hi.abs());
    let map = |v: f32| {
        if signed {
            if m > 0.0 { 0.5 + 0.5 * v / m } else { 0.5 }
        } else if hi > lo {
            (v - lo) / (hi - lo)
        } else {
            0.5
        }
    };
    let mut rgba = Vec::with_capacity(nx * ny * 4);
    for j in 0..ny {
        for i in 0..nx {
            rgba.extend_from_slice(&colormap.sample(map(grid.get(i, j, k).unwrap_or(f32::NAN))));
        }
    }
    let origin = angstrom_from_bohr3(l.point_bohr(0, 0, k));
    let end_u = angstrom_from_bohr3(l.point_bohr(nx - 1, 0, k));
    let end_v = angstrom_from_bohr3(l.point_bohr(0, ny - 1, k));
    let f = |p: [f64; 3]| p.map(|x| x as f32);
    let (o, u, v) = (f(origin), f(end_u), f(end_v));
    Some(SliceImage {
        width: nx as u32,
        height: ny as u32,
        rgba,
        origin_angstrom: o,
        edge_u_angstrom: [u[0] - o[0], u[1] - o[1], u[2] - o[2]],
        edge_v_angstrom: [v[0] - o[0], v[1] - o[1], v[2] - o[2]],
    })
}
