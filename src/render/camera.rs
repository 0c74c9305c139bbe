//! The 3-D camera: orbit about a target, pan, zoom, fit to bounds, reset; view and projection
//! matrices and the pixel a world point lands on.
//!
//! Pure CPU code with no GPU objects, so tests can compute where a point must appear. The renderer
//! turns a camera into the `Globals` uniform; the app drives it from mouse input.

use glam::{Mat4, Quat, Vec3, Vec4};

/// A perspective camera looking at `target` from `distance_angstrom` away.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Camera {
    /// Point the camera orbits about, in Angstrom.
    pub target_angstrom: Vec3,
    /// Distance from the eye to the target, in Angstrom.
    pub distance_angstrom: f32,
    /// Orientation of the camera frame in world space (camera looks along its -z).
    pub rotation: Quat,
    /// Vertical field of view in radians.
    pub fov_y_radians: f32,
    /// Radius of the scene's bounding sphere, used for the clip planes and depth cue.
    pub scene_radius_angstrom: f32,
    /// Centre of the scene's bounding sphere.
    pub scene_center_angstrom: Vec3,
}

impl Default for Camera {
    fn default() -> Self {
        Camera {
            target_angstrom: Vec3::ZERO,
            distance_angstrom: 20.0,
            rotation: Quat::IDENTITY,
            fov_y_radians: 35f32.to_radians(),
            scene_radius_angstrom: 10.0,
            scene_center_angstrom: Vec3::ZERO,
        }
    }
}

/// Named view directions for `--camera` and the view menu.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ViewAxis {
    /// Looking down -z (x right, y up): the default.
    Front,
    /// Looking down +z.
    Back,
    /// Looking down -y (x right, z away... z up after rotation).
    Top,
    /// Looking down -x.
    Right,
}

impl Camera {
    /// Position of the eye in Angstrom.
    pub fn eye_angstrom(&self) -> Vec3 {
        self.target_angstrom + self.rotation * Vec3::new(0.0, 0.0, self.distance_angstrom)
    }

    /// World-to-view matrix (right-handed, camera looks down -z).
    pub fn view(&self) -> Mat4 {
        let up = self.rotation * Vec3::Y;
        Mat4::look_at_rh(self.eye_angstrom(), self.target_angstrom, up)
    }

    /// Near and far clip distances that enclose the scene's bounding sphere.
    pub fn clip_range(&self) -> (f32, f32) {
        let eye_to_center = (self.scene_center_angstrom - self.eye_angstrom()).length();
        let r = self.scene_radius_angstrom.max(1e-3);
        let far = (eye_to_center + r * 1.5).max(1.0);
        let near = (eye_to_center - r * 1.5).max(far * 1e-3);
        (near, far)
    }

    /// View-to-clip matrix for a viewport aspect ratio (width / height); depth 0..1.
    pub fn projection(&self, aspect: f32) -> Mat4 {
        let (near, far) = self.clip_range();
        let aspect = if aspect.is_finite() && aspect > 0.0 {
            aspect
        } else {
            1.0
        };
        Mat4::perspective_rh(self.fov_y_radians, aspect, near, far)
    }

    /// The pixel (x right, y down, pixel centres at +0.5) where a world point lands in a viewport
    /// of `size_px`, and its depth (0 near .. 1 far); `None` behind the eye or outside the clip range.
    pub fn project_to_pixel(&self, point_angstrom: Vec3, size_px: [u32; 2]) -> Option<([f32; 2], f32)> {
        let aspect = size_px[0] as f32 / size_px[1].max(1) as f32;
        let clip = self.projection(aspect) * self.view() * point_angstrom.extend(1.0);
        if clip.w <= 0.0 {
            return None;
        }
        let ndc = clip.truncate() / clip.w;
        if !(0.0..=1.0).contains(&ndc.z) {
            return None;
        }
        let x = (ndc.x * 0.5 + 0.5) * size_px[0] as f32;
        let y = (0.5 - ndc.y * 0.5) * size_px[1] as f32;
        Some(([x, y], ndc.z))
    }

    /// The ray (origin, unit direction) through a pixel position of a viewport, in world space.
    pub fn ray_through_pixel(&self, pixel: [f32; 2], size_px: [u32; 2]) -> (Vec3, Vec3) {
        let w = size_px[0].max(1) as f32;
        let h = size_px[1].max(1) as f32;
        let ndc_x = pixel[0] / w * 2.0 - 1.0;
        let ndc_y = 1.0 - pixel[1] / h * 2.0;
        let inv = (self.projection(w / h) * self.view()).inverse();
        let p_near = inv * Vec4::new(ndc_x, ndc_y, 0.0, 1.0);
        let p_far = inv * Vec4::new(ndc_x, ndc_y, 1.0, 1.0);
        let a = p_near.truncate() / p_near.w;
        let b = p_far.truncate() / p_far.w;
        let eye = self.eye_angstrom();
        let dir = (b - a).normalize_or(Vec3::NEG_Z);
        (eye, dir)
    }

    /// Rotates the view about the target: `dx`, `dy` in radians about the camera's up and right axes.
    pub fn orbit(&mut self, dx_radians: f32, dy_radians: f32) {
        let up = self.rotation * Vec3::Y;
        let right = self.rotation * Vec3::X;
        let q = Quat::from_axis_angle(up, -dx_radians) * Quat::from_axis_angle(right, -dy_radians);
        self.rotation = (q * self.rotation).normalize();
    }

    /// Moves the target in the view plane by a fraction of the visible height.
    pub fn pan(&mut self, dx_fraction: f32, dy_fraction: f32) {
        let visible_height = 2.0 * self.distance_angstrom * (self.fov_y_radians * 0.5).tan();
        let right = self.rotation * Vec3::X;
        let up = self.rotation * Vec3::Y;
        self.target_angstrom += (-right * dx_fraction + up * dy_fraction) * visible_height;
    }

    /// Multiplies the distance to the target (below 1 moves closer).
    pub fn zoom(&mut self, factor: f32) {
        if factor.is_finite() && factor > 0.0 {
            let min = (self.scene_radius_angstrom * 1e-3).max(1e-3);
            let max = (self.scene_radius_angstrom * 1e3).max(1e3);
            self.distance_angstrom = (self.distance_angstrom * factor).clamp(min, max);
        }
    }

    /// Frames an axis-aligned box so all of it is visible at `aspect`, keeping the orientation.
    pub fn fit_to_bounds(&mut self, min_angstrom: Vec3, max_angstrom: Vec3, aspect: f32) {
        if !(min_angstrom.is_finite() && max_angstrom.is_finite()) || min_angstrom.cmpgt(max_angstrom).any() {
            return;
        }
        let center = (min_angstrom + max_angstrom) * 0.5;
        let radius = (max_angstrom - min_angstrom).length() * 0.5;
        self.fit_to_sphere(center, radius, aspect);
    }

    /// Frames a sphere so all of it is visible at `aspect` whatever the orientation, keeping the
    /// orientation: the view a fit gives, which a turn never clips.
    pub fn fit_to_sphere(&mut self, center: Vec3, radius_angstrom: f32, aspect: f32) {
        if !(center.is_finite() && radius_angstrom.is_finite()) {
            return;
        }
        let radius = radius_angstrom.max(1.0);
        let aspect = if aspect.is_finite() && aspect > 0.0 {
            aspect
        } else {
            1.0
        };
        let half_v = self.fov_y_radians * 0.5;
        let half_h = (half_v.tan() * aspect).atan();
        let half = half_v.min(half_h);
        self.target_angstrom = center;
        self.scene_center_angstrom = center;
        self.scene_radius_angstrom = radius;
        self.distance_angstrom = radius / half.sin() * 1.02;
    }

    /// Back to the front view of the given bounds.
    pub fn reset(&mut self, min_angstrom: Vec3, max_angstrom: Vec3, aspect: f32) {
        self.rotation = Quat::IDENTITY;
        self.fit_to_bounds(min_angstrom, max_angstrom, aspect);
    }

    /// Turns the camera to look along a named axis, keeping target and distance.
    pub fn set_view_axis(&mut self, axis: ViewAxis) {
        self.rotation = match axis {
            ViewAxis::Front => Quat::IDENTITY,
            ViewAxis::Back => Quat::from_rotation_y(std::f32::consts::PI),
            ViewAxis::Top => Quat::from_rotation_x(-std::f32::consts::FRAC_PI_2),
            ViewAxis::Right => Quat::from_rotation_y(std::f32::consts::FRAC_PI_2),
        };
    }
}

/// Intersects a ray with spheres and returns the index of the nearest hit and its distance.
/// Used for atom picking (the caller knows what the spheres stand for).
pub fn pick_sphere(origin: Vec3, dir: Vec3, centers: &[[f32; 3]], radii: &[f32]) -> Option<(usize, f32)> {
    let mut best: Option<(usize, f32)> = None;
    for (i, (c, &r)) in centers.iter().zip(radii).enumerate() {
        let oc = origin - Vec3::from_array(*c);
        let b = oc.dot(dir);
        let cc = oc.length_squared() - r * r;
        let disc = b * b - cc;
        if disc < 0.0 {
            continue;
        }
        let t = -b - disc.sqrt();
        if t > 0.0 && best.is_none_or(|(_, bt)| t < bt) {
            best = Some((i, t));
        }
    }
    best
}

/// Where a ray meets a triangle mesh first ([`pick_triangle`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TriangleHit {
    /// Distance along the ray (in the direction's units).
    pub distance: f32,
    /// The triangle's three vertex indices.
    pub vertices: [usize; 3],
    /// The point's barycentric weights of those vertices (summing to 1).
    pub weights: [f32; 3],
}

/// Intersects a ray with the triangles of a mesh (three indices into `positions` per triangle,
/// either side facing the ray) and returns the nearest hit in front of the origin
/// (Moeller-Trumbore). Triangles with an index out of range are skipped.
pub fn pick_triangle(origin: Vec3, dir: Vec3, positions: &[[f32; 3]], indices: &[u32]) -> Option<TriangleHit> {
    let mut best: Option<TriangleHit> = None;
    for tri in indices.chunks_exact(3) {
        let v = [tri[0] as usize, tri[1] as usize, tri[2] as usize];
        let (Some(a), Some(b), Some(c)) = (positions.get(v[0]), positions.get(v[1]), positions.get(v[2])) else {
            continue;
        };
        let a = Vec3::from_array(*a);
        let (e1, e2) = (Vec3::from_array(*b) - a, Vec3::from_array(*c) - a);
        let p = dir.cross(e2);
        let det = e1.dot(p);
        if det.abs() < 1e-12 {
            continue;
        }
        let inv = 1.0 / det;
        let s = origin - a;
        let u = s.dot(p) * inv;
        if !(0.0..=1.0).contains(&u) {
            continue;
        }
        let q = s.cross(e1);
        let w = dir.dot(q) * inv;
        if w < 0.0 || u + w > 1.0 {
            continue;
        }
        let t = e2.dot(q) * inv;
        if t > 0.0 && best.is_none_or(|h| t < h.distance) {
            best = Some(TriangleHit {
                distance: t,
                vertices: v,
                weights: [1.0 - u - w, u, w],
            });
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn triangle_pick_finds_the_nearest_face_and_its_weights() {
        // Two parallel squares (two triangles each) at z = 1 and z = 3, seen from z = 10.
        let square = |z: f32| [[-1.0, -1.0, z], [1.0, -1.0, z], [1.0, 1.0, z], [-1.0, 1.0, z]];
        let positions: Vec<[f32; 3]> = square(1.0).into_iter().chain(square(3.0)).collect();
        let indices = [0, 1, 2, 0, 2, 3, 4, 5, 6, 4, 6, 7];
        let (x, y) = (0.5_f32, -0.25_f32);
        let hit = pick_triangle(Vec3::new(x, y, 10.0), Vec3::NEG_Z, &positions, &indices).unwrap();
        assert!((hit.distance - 7.0).abs() < 1e-5, "{hit:?}");
        assert!(hit.vertices.iter().all(|&v| v >= 4), "{hit:?}");
        let p = hit
            .vertices
            .iter()
            .zip(hit.weights)
            .fold(Vec3::ZERO, |acc, (&v, w)| acc + Vec3::from_array(positions[v]) * w);
        assert!((p - Vec3::new(x, y, 3.0)).length() < 1e-5, "{p}");
        // From below, the other square is first; a ray beside the squares or pointing away misses.
        let below = pick_triangle(Vec3::new(x, y, -5.0), Vec3::Z, &positions, &indices).unwrap();
        assert!((below.distance - 6.0).abs() < 1e-5 && below.vertices.iter().all(|&v| v < 4));
        assert!(pick_triangle(Vec3::new(1.5, 0.0, 10.0), Vec3::NEG_Z, &positions, &indices).is_none());
        assert!(pick_triangle(Vec3::new(x, y, 10.0), Vec3::Z, &positions, &indices).is_none());
        // An index past the positions is skipped, not a panic.
        assert!(pick_triangle(Vec3::new(x, y, 10.0), Vec3::NEG_Z, &positions, &[0, 1, 99]).is_none());
    }

    #[test]
    fn target_projects_to_centre() {
        let mut cam = Camera::default();
        cam.fit_to_bounds(Vec3::splat(-2.0), Vec3::splat(2.0), 1.5);
        let (px, depth) = cam.project_to_pixel(Vec3::ZERO, [300, 200]).unwrap();
        assert!((px[0] - 150.0).abs() < 1e-3 && (px[1] - 100.0).abs() < 1e-3);
        assert!(depth > 0.0 && depth < 1.0);
        // +x appears to the right, +y above (smaller row) in the front view.
        let (right, _) = cam.project_to_pixel(Vec3::X, [300, 200]).unwrap();
        let (up, _) = cam.project_to_pixel(Vec3::Y, [300, 200]).unwrap();
        assert!(right[0] > 150.0 && up[1] < 100.0);
    }

    #[test]
    fn fit_keeps_corners_in_view() {
        let mut cam = Camera::default();
        cam.orbit(0.7, 0.3);
        let (lo, hi) = (Vec3::new(-5.0, -1.0, -2.0), Vec3::new(9.0, 3.0, 1.0));
        cam.fit_to_bounds(lo, hi, 2.0);
        for i in 0..8 {
            let p = Vec3::new(
                if i & 1 == 0 { lo.x } else { hi.x },
                if i & 2 == 0 { lo.y } else { hi.y },
                if i & 4 == 0 { lo.z } else { hi.z },
            );
            let (px, _) = cam.project_to_pixel(p, [400, 200]).unwrap();
            assert!(
                (0.0..=400.0).contains(&px[0]) && (0.0..=200.0).contains(&px[1]),
                "{p} -> {px:?}"
            );
        }
    }

    #[test]
    fn a_fitted_sphere_stays_in_view_however_it_is_turned() {
        let center = Vec3::new(3.0, -1.0, 2.0);
        let radius = 7.5;
        for (k, aspect) in [0.6f32, 1.0, 1.6, 2.4].into_iter().enumerate() {
            let mut cam = Camera::default();
            cam.fit_to_sphere(center, radius, aspect);
            let size = [(400.0 * aspect) as u32, 400];
            for turn in 0..12 {
                cam.orbit(0.37 * turn as f32 + k as f32, 0.23 * turn as f32);
                for axis in [
                    Vec3::X,
                    Vec3::Y,
                    Vec3::Z,
                    -Vec3::X,
                    -Vec3::Y,
                    -Vec3::Z,
                    Vec3::ONE.normalize(),
                ] {
                    let p = center + axis * radius;
                    let (px, _) = cam.project_to_pixel(p, size).unwrap();
                    assert!(
                        (0.0..=size[0] as f32).contains(&px[0]) && (0.0..=size[1] as f32).contains(&px[1]),
                        "aspect {aspect}, turn {turn}: {p} -> {px:?}"
                    );
                }
            }
            // Not framed loosely either: the sphere fills most of the shorter side.
            let (c, _) = cam.project_to_pixel(center, size).unwrap();
            let up = cam.rotation * Vec3::Y;
            let (top, _) = cam.project_to_pixel(center + up * radius, size).unwrap();
            let side = size[0].min(size[1]) as f32;
            assert!((c[1] - top[1]).abs() > 0.4 * side, "aspect {aspect}: {c:?} {top:?}");
        }
    }

    #[test]
    fn pixel_ray_hits_sphere_it_projects_from() {
        let mut cam = Camera::default();
        cam.fit_to_bounds(Vec3::splat(-3.0), Vec3::splat(3.0), 1.0);
        cam.orbit(0.4, -0.2);
        let centers = [[2.0, 1.0, 0.0], [-2.0, -1.0, 0.5]];
        let radii = [0.5, 0.5];
        for (k, c) in centers.iter().enumerate() {
            let (px, _) = cam.project_to_pixel(Vec3::from_array(*c), [256, 256]).unwrap();
            let (o, d) = cam.ray_through_pixel(px, [256, 256]);
            assert_eq!(pick_sphere(o, d, &centers, &radii).map(|h| h.0), Some(k));
        }
        let (o, d) = cam.ray_through_pixel([0.0, 0.0], [256, 256]);
        assert_eq!(pick_sphere(o, d, &centers, &radii), None);
    }
}
