//! Slice planes through a grid: axis-aligned (x, y or z lattice planes, exact values) or oblique (any
//! normal, values interpolated trilinearly), at a chosen position, mapped through a colormap into an
//! image the renderer draws as a textured quad. Points of an oblique plane outside the grid are
//! transparent. The colormap spans the plane's own range when one is given (the field's
//! conventional one or the user's, chosen by the app), else [`value_range`]; the legend shows it.

use crate::model::Grid3;
use crate::model::units::angstrom_from_bohr3;
use crate::render::SliceImage;
use crate::render::colormap::Colormap;

/// Orientation of a slice plane.
#[derive(Clone, Copy, Debug, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub enum SliceNormal {
    X,
    Y,
    #[default]
    Z,
    /// A free normal from two angles in degrees: azimuth about z from x, elevation from the xy plane.
    Free {
        azimuth_degree: f32,
        elevation_degree: f32,
    },
}

/// A slice plane: its normal and where it cuts, as a fraction of the grid's extent along the normal
/// (0 = through the centre, -0.5 and 0.5 = the faces).
#[derive(Clone, Copy, Debug, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct SlicePlane {
    pub normal: SliceNormal,
    pub position: f32,
    /// The values at the colormap's ends, in the field's computed units, as the user chose them;
    /// `None`: the field's conventional range (+-5 kT/e for a Poisson-Boltzmann map, the screened
    /// models' own) or else [`value_range`] (`AppState::slice_range`).
    #[serde(default)]
    pub range: Option<[f32; 2]>,
}

/// The values at the colormap's ends for `grid` (what the legend shows): for a field of both signs
/// symmetric about zero at the 99th percentile of |value| (so the singular values at point charges
/// do not wash the plane out), else the 1st to 99th percentile. Percentiles of at most about
/// 100,000 evenly strided samples. `None` for a grid without finite values.
pub fn value_range(grid: &Grid3) -> Option<[f32; 2]> {
    let stride = (grid.values.len() / 100_000).max(1);
    let mut samples: Vec<f32> = grid
        .values
        .iter()
        .step_by(stride)
        .copied()
        .filter(|v| v.is_finite())
        .collect();
    if samples.is_empty() {
        return None;
    }
    let (lo, hi) = grid.min_max()?;
    let at = |samples: &mut Vec<f32>, q: f64| -> f32 {
        let k = ((samples.len() - 1) as f64 * q).round() as usize;
        *samples.select_nth_unstable_by(k, f32::total_cmp).1
    };
    let range = if lo < 0.0 && hi > 0.0 {
        for v in samples.iter_mut() {
            *v = v.abs();
        }
        let m = at(&mut samples, 0.99);
        [-m, m]
    } else {
        [at(&mut samples, 0.01), at(&mut samples, 0.99)]
    };
    Some(if range[0] < range[1] {
        range
    } else if lo < hi {
        [lo, hi]
    } else {
        [lo - 1.0, hi + 1.0]
    })
}

/// Colormap position of values over `range` (else [`value_range`]; clamped at its ends).
fn value_map(grid: &Grid3, range: Option<[f32; 2]>) -> Option<impl Fn(f32) -> f32> {
    let [lo, hi] = range.filter(|[lo, hi]| lo < hi).or_else(|| value_range(grid))?;
    Some(move |v: f32| ((v - lo) / (hi - lo)).clamp(0.0, 1.0))
}

/// The middle z-plane of an axis-aligned grid (the default plane).
pub fn slice_image(grid: &Grid3, colormap: Colormap) -> Option<SliceImage> {
    plane_image(grid, colormap, SlicePlane::default())
}

/// The image of `plane` through `grid`. `None` for empty or sheared grids.
pub fn plane_image(grid: &Grid3, colormap: Colormap, plane: SlicePlane) -> Option<SliceImage> {
    let l = &grid.lattice;
    let dims = l.dims;
    if dims.iter().any(|d| !(2..=8192).contains(d)) || !l.is_axis_aligned() {
        return None;
    }
    let map = value_map(grid, plane.range)?;
    let f = |p: [f64; 3]| p.map(|x| x as f32);
    let position = plane.position.clamp(-0.5, 0.5);
    let axis = match plane.normal {
        SliceNormal::X => Some(0),
        SliceNormal::Y => Some(1),
        SliceNormal::Z => Some(2),
        SliceNormal::Free { .. } => None,
    };
    if let Some(a) = axis {
        // Lattice plane `c` along axis `a`; the image's u and v run along the other two axes.
        let (u_axis, v_axis) = match a {
            0 => (1, 2),
            1 => (0, 2),
            _ => (0, 1),
        };
        let c = (((position + 0.5) * (dims[a] - 1) as f32).round() as usize).min(dims[a] - 1);
        let at = |iu: usize, iv: usize| {
            let mut idx = [0usize; 3];
            idx[a] = c;
            idx[u_axis] = iu;
            idx[v_axis] = iv;
            idx
        };
        let (nu, nv) = (dims[u_axis], dims[v_axis]);
        let mut rgba = Vec::with_capacity(nu * nv * 4);
        for iv in 0..nv {
            for iu in 0..nu {
                let [i, j, k] = at(iu, iv);
                rgba.extend_from_slice(&colormap.sample(map(grid.get(i, j, k).unwrap_or(f32::NAN))));
            }
        }
        let [i0, j0, k0] = at(0, 0);
        let [iu, ju, ku] = at(nu - 1, 0);
        let [iv, jv, kv] = at(0, nv - 1);
        let o = f(angstrom_from_bohr3(l.point_bohr(i0, j0, k0)));
        let u = f(angstrom_from_bohr3(l.point_bohr(iu, ju, ku)));
        let v = f(angstrom_from_bohr3(l.point_bohr(iv, jv, kv)));
        return Some(SliceImage {
            width: nu as u32,
            height: nv as u32,
            rgba,
            origin_angstrom: o,
            edge_u_angstrom: [u[0] - o[0], u[1] - o[1], u[2] - o[2]],
            edge_v_angstrom: [v[0] - o[0], v[1] - o[1], v[2] - o[2]],
        });
    }
    // Oblique: a square through the centre (shifted along the normal) covering the grid's box.
    let SliceNormal::Free {
        azimuth_degree,
        elevation_degree,
    } = plane.normal
    else {
        return None;
    };
    let (az, el) = (azimuth_degree.to_radians(), elevation_degree.to_radians());
    let n = glam::Vec3::new(el.cos() * az.cos(), el.cos() * az.sin(), el.sin()).normalize_or(glam::Vec3::Z);
    let lo = glam::Vec3::from(f(angstrom_from_bohr3(l.point_bohr(0, 0, 0))));
    let hi = glam::Vec3::from(f(angstrom_from_bohr3(l.point_bohr(
        dims[0] - 1,
        dims[1] - 1,
        dims[2] - 1,
    ))));
    let centre = 0.5 * (lo + hi);
    let half_extent = 0.5 * (hi - lo);
    // Extent of the box along the normal, and the plane's point on it.
    let reach = half_extent.x * n.x.abs() + half_extent.y * n.y.abs() + half_extent.z * n.z.abs();
    let point = centre + n * (2.0 * position * reach);
    let helper = if n.z.abs() < 0.9 { glam::Vec3::Z } else { glam::Vec3::X };
    let u = n.cross(helper).normalize();
    let v = n.cross(u);
    let radius = half_extent.length();
    let side = dims.iter().copied().max().unwrap_or(2).clamp(2, 1024);
    let origin = point - (u + v) * radius;
    let step = 2.0 * radius / (side - 1) as f32;
    let mut rgba = Vec::with_capacity(side * side * 4);
    for iv in 0..side {
        for iu in 0..side {
            let p = origin + u * (iu as f32 * step) + v * (iv as f32 * step);
            match crate::app::values::sample_grid(grid, p.to_array()) {
                Some(value) => rgba.extend_from_slice(&colormap.sample(map(value))),
                None => rgba.extend_from_slice(&[0, 0, 0, 0]),
            }
        }
    }
    let eu = u * (2.0 * radius);
    let ev = v * (2.0 * radius);
    Some(SliceImage {
        width: side as u32,
        height: side as u32,
        rgba,
        origin_angstrom: origin.to_array(),
        edge_u_angstrom: eu.to_array(),
        edge_v_angstrom: ev.to_array(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Lattice;

    /// f(x, y, z) = x + 2y + 3z (in lattice steps) on an 11 x 9 x 7 lattice of 1 bohr steps.
    fn linear() -> Grid3 {
        let lattice = Lattice::axis_aligned([0.0; 3], 1.0, [11, 9, 7]);
        let mut values = Vec::new();
        for k in 0..7 {
            for j in 0..9 {
                for i in 0..11 {
                    values.push((i + 2 * j + 3 * k) as f32 - 20.0);
                }
            }
        }
        Grid3 {
            lattice,
            values,
            description: "linear".into(),
        }
    }

    #[test]
    fn axis_planes_take_the_lattice_plane_at_the_position() {
        let g = linear();
        let x = plane_image(
            &g,
            Colormap::Gray,
            SlicePlane {
                normal: SliceNormal::X,
                position: 0.5,
                range: None,
            },
        )
        .unwrap();
        // The x = last face: u runs along y, v along z.
        assert_eq!((x.width, x.height), (9, 7));
        let o = angstrom_from_bohr3([10.0, 0.0, 0.0]).map(|c| c as f32);
        assert!((0..3).all(|k| (x.origin_angstrom[k] - o[k]).abs() < 1e-5));
        let y = plane_image(
            &g,
            Colormap::Gray,
            SlicePlane {
                normal: SliceNormal::Y,
                position: -0.5,
                range: None,
            },
        )
        .unwrap();
        assert_eq!((y.width, y.height), (11, 7));
        // Values grow along u = x on the y = 0 face: the gray levels increase left to right.
        assert!(y.rgba[0] < y.rgba[4 * 10]);
        let z = slice_image(&g, Colormap::Gray).unwrap();
        assert_eq!((z.width, z.height), (11, 9));
    }

    #[test]
    fn oblique_plane_through_the_centre_samples_the_field() {
        let g = linear();
        let plane = SlicePlane {
            normal: SliceNormal::Free {
                azimuth_degree: 30.0,
                elevation_degree: 40.0,
            },
            position: 0.0,
            range: None,
        };
        let img = plane_image(&g, Colormap::Gray, plane).unwrap();
        // A range of the plane's own spans the colormap instead, clamped at its ends.
        let narrow = plane_image(
            &g,
            Colormap::Gray,
            SlicePlane {
                range: Some([-4.0, 4.0]),
                ..plane
            },
        )
        .unwrap();
        let side = img.width as usize;
        // The image centre lies at the grid centre, where f = 5 + 8 + 9 - 20 = 2: on the symmetric
        // range of the signed values -20..22 (its 99th percentile of |value|, m) it maps to
        // 0.5 + 0.5 * 2 / m.
        let c = 4 * (side / 2 * side + side / 2);
        let [lo, m] = value_range(&g).unwrap();
        assert!(lo == -m && m > 18.0 && m <= 22.0, "{m}");
        let want = Colormap::Gray.sample(0.5 + 0.5 * 2.0 / m)[0];
        assert!(
            img.rgba[c + 3] == 255 && img.rgba[c].abs_diff(want) <= 8,
            "{} vs {want}",
            img.rgba[c]
        );
        let want_narrow = Colormap::Gray.sample((2.0 + 4.0) / 8.0)[0];
        assert!(
            narrow.rgba[c].abs_diff(want_narrow) <= 8 && narrow.rgba[c].abs_diff(want) > 8,
            "{} vs {want_narrow}",
            narrow.rgba[c]
        );
        // The square covers the whole box, so its corners lie outside the grid: transparent.
        assert_eq!(img.rgba[3], 0);
        // The plane is perpendicular to the normal.
        let n = glam::Vec3::new(
            40f32.to_radians().cos() * 30f32.to_radians().cos(),
            40f32.to_radians().cos() * 30f32.to_radians().sin(),
            40f32.to_radians().sin(),
        );
        assert!(glam::Vec3::from(img.edge_u_angstrom).dot(n).abs() < 1e-4);
        assert!(glam::Vec3::from(img.edge_v_angstrom).dot(n).abs() < 1e-4);
    }
}
