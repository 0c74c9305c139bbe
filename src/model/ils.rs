//! Implicit ligand sampling (ILS; Cohen, Arkhipov, Braun and Schulten, Biophys. J. 91:1844, 2006):
//! the map, the probe orientations and the occupancy sums that frames add to.
//!
//! Owns the definitions every engine shares: [`IlsMap`] (an axis-aligned lattice of voxels, each
//! sampled at `subres^3` points p + ((k + 1/2)/s - 1/2) h per axis), [`Orientations`] (evenly spread
//! directions on the sphere, a spherical Fibonacci set; an inversion-symmetric probe evaluates one
//! direction of each antipodal pair, weighted twice, from [`antipodal_design`]), [`Rigid`] (the fit of a frame onto the reference) and
//! [`OccupancySums`]: per voxel the sum over frames of the voxel's mean occupancy
//! rho = mean over orientations of exp(-U/kT), with the frame count. Sums of disjoint frame sets add
//! (MPI ranks and devices reduce them in any order); the map is PMF = -ln(sum / frames) in kT, capped
//! at `max_energy_kt`. Called by the engines in `compute::ils` and `compute::{cpu,cuda}::ils`, the
//! `grid ils` command and the tests.

use super::lj::{Probe, dot, norm};

/// Orientations of a non-spherical probe when none are asked for (`--orient`): with the antipodal
/// design of an inversion-symmetric probe, 100 directions (50 evaluated) keep O2's map within 0.05 kT
/// of a 2,000-direction quadrature where it is below 5 kT (`tests/ils.rs`; 0.031 kT, as close as 150
/// directions of the Fibonacci set came).
pub const DEFAULT_ORIENTATIONS: usize = 100;
/// Largest number of axes [`antipodal_design`] spreads by repulsion (beyond it, the hemisphere's
/// Fibonacci set, already dense).
pub const DESIGN_MAX_AXES: usize = 128;
/// Default sample points per voxel edge (`--subres`).
pub const DEFAULT_SUBRES: usize = 3;
/// Default cutoff of the Lennard-Jones sum, Angstrom.
pub const DEFAULT_CUTOFF_ANGSTROM: f64 = 10.0;
/// Default cap of the map in kT (exp(-87) is about the smallest normal f32).
pub const DEFAULT_MAX_ENERGY_KT: f64 = 87.0;

/// An axis-aligned lattice of voxels: voxel (i, j, k) is centred on origin + (i, j, k) * spacing.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IlsMap {
    pub origin_angstrom: [f64; 3],
    pub spacing_angstrom: f64,
    pub dims: [usize; 3],
}

impl IlsMap {
    /// Number of voxels.
    pub fn n_voxels(&self) -> usize {
        self.dims[0].saturating_mul(self.dims[1]).saturating_mul(self.dims[2])
    }

    /// Centre of voxel (i, j, k).
    pub fn centre_angstrom(&self, i: usize, j: usize, k: usize) -> [f64; 3] {
        let h = self.spacing_angstrom;
        [
            self.origin_angstrom[0] + i as f64 * h,
            self.origin_angstrom[1] + j as f64 * h,
            self.origin_angstrom[2] + k as f64 * h,
        ]
    }

    /// Offsets of the `subres` sample points along one axis from a voxel centre, Angstrom.
    pub fn sample_offsets_angstrom(&self, subres: usize) -> Vec<f64> {
        let s = subres.max(1) as f64;
        (0..subres.max(1))
            .map(|k| ((k as f64 + 0.5) / s - 0.5) * self.spacing_angstrom)
            .collect()
    }

    /// The box holding every sample point (voxel centres +- half a spacing), Angstrom.
    pub fn sample_bounds_angstrom(&self) -> ([f64; 3], [f64; 3]) {
        let h = self.spacing_angstrom;
        let mut lo = [0.0; 3];
        let mut hi = [0.0; 3];
        for k in 0..3 {
            lo[k] = self.origin_angstrom[k] - 0.5 * h;
            hi[k] = self.origin_angstrom[k] + (self.dims[k].max(1) - 1) as f64 * h + 0.5 * h;
        }
        (lo, hi)
    }
}

/// The probe orientations of a computation: atom offsets per sample class and orientation, each
/// orientation weighted equally. The `subres^3` sample points of a voxel fall in `classes` classes
/// (class a + s (b + s c) for the sample offsets a, b, c along x, y, z); class 0 takes the Fibonacci
/// set itself, class k the set turned by a fixed rotation R_k (axis: point k of a Fibonacci set of
/// `classes` points, angle 2 pi frac(k (sqrt 5 - 1)/2)). Each sample point so averages over an evenly
/// spread set, and a voxel's mean over `classes` differently turned sets, which makes the voxel's
/// orientation average far closer to the exact integral than one set shared by all its points.
#[derive(Clone, Debug, PartialEq)]
pub struct Orientations {
    /// Directions asked for (the quadrature's size on the whole sphere).
    pub requested: usize,
    /// Probe atoms per orientation.
    pub atoms_per_orientation: usize,
    /// Sample classes (1 for a single-atom probe, else subres^3).
    pub classes: usize,
    /// Orientations evaluated per sample point.
    pub per_class: usize,
    /// `offsets_angstrom[(class * per_class + o) * atoms_per_orientation + j]`: probe atom j in
    /// orientation o of sample class `class`.
    pub offsets_angstrom: Vec<[f64; 3]>,
    /// True when the upper hemisphere is evaluated for an inversion-symmetric probe.
    pub halved: bool,
}

impl Orientations {
    /// `n` evenly spread orientations of `probe` (one for a single atom) for maps sampled at `subres`
    /// points per voxel edge. A linear probe points its axis along the directions of a spherical
    /// Fibonacci set; a non-linear probe turns its farthest atom's direction onto each and twists
    /// about it by the golden angle times the index. An inversion-symmetric probe evaluates ceil(n/2)
    /// axes of [`antipodal_design`], which with their opposites form the set of n.
    pub fn new(probe: &Probe, n: usize, subres: usize) -> Orientations {
        let p = probe.atoms.len();
        if p <= 1 || probe.radius_angstrom() < 1e-9 {
            return Orientations {
                requested: 1,
                atoms_per_orientation: p,
                classes: 1,
                per_class: 1,
                offsets_angstrom: probe.atoms.iter().map(|a| a.offset_angstrom).collect(),
                halved: false,
            };
        }
        let n = n.max(1);
        let halved = probe.is_inversion_symmetric() && n > 1;
        let dirs = if halved {
            antipodal_design(n.div_ceil(2))
        } else {
            fibonacci_sphere(n)
        };
        let axis = probe.linear_axis();
        // The body frame: e3 along the axis (linear) or towards the farthest atom, e1 and e2 normal.
        let e3 = axis.unwrap_or_else(|| {
            let far = probe
                .atoms
                .iter()
                .map(|a| a.offset_angstrom)
                .fold([0.0; 3], |best, o| if norm(o) > norm(best) { o } else { best });
            let l = norm(far).max(1e-300);
            far.map(|x| x / l)
        });
        let (e1, e2) = normals(e3);
        let golden = std::f64::consts::PI * (3.0 - 5f64.sqrt());
        let mut base = Vec::with_capacity(dirs.len() * p);
        for (o, d) in dirs.iter().enumerate() {
            let (n1, n2) = normals(*d);
            let twist = if axis.is_some() { 0.0 } else { golden * o as f64 };
            let (c, s) = (twist.cos(), twist.sin());
            let t1 = [0, 1, 2].map(|k| c * n1[k] + s * n2[k]);
            let t2 = [0, 1, 2].map(|k| -s * n1[k] + c * n2[k]);
            for a in &probe.atoms {
                let b = [
                    dot(a.offset_angstrom, e1),
                    dot(a.offset_angstrom, e2),
                    dot(a.offset_angstrom, e3),
                ];
                base.push([0, 1, 2].map(|k| b[0] * t1[k] + b[1] * t2[k] + b[2] * d[k]));
            }
        }
        let classes = subres.max(1).pow(3);
        let axes = fibonacci_sphere(classes);
        let conj = (5f64.sqrt() - 1.0) / 2.0;
        let mut offsets = Vec::with_capacity(classes * base.len());
        for (k, u) in axes.iter().enumerate() {
            let angle = 2.0 * std::f64::consts::PI * (k as f64 * conj).fract();
            let r = axis_angle(*u, if k == 0 { 0.0 } else { angle });
            offsets.extend(base.iter().map(|v| [0, 1, 2].map(|i| dot(r[i], *v))));
        }
        Orientations {
            requested: n,
            atoms_per_orientation: p,
            classes,
            per_class: dirs.len(),
            offsets_angstrom: offsets,
            halved,
        }
    }

    /// Orientations evaluated per sample point.
    pub fn evaluated(&self) -> usize {
        self.per_class.max(1)
    }

    /// The class of the sample point with offsets (a, b, c) of `subres` along x, y, z.
    pub fn class_of(&self, a: usize, b: usize, c: usize, subres: usize) -> usize {
        if self.classes <= 1 {
            0
        } else {
            (a + subres * (b + subres * c)) % self.classes
        }
    }

    /// The offset of probe atom `j` in orientation `o` of sample class `class` (zero when out of range).
    pub fn offset(&self, class: usize, o: usize, j: usize) -> [f64; 3] {
        let p = self.atoms_per_orientation;
        self.offsets_angstrom
            .get((class * self.per_class + o) * p + j)
            .copied()
            .unwrap_or([0.0; 3])
    }

    /// "30 directions (15 evaluated, each weighted twice: the probe is inversion-symmetric)".
    pub fn describe(&self) -> String {
        if self.requested <= 1 && self.evaluated() <= 1 {
            return "1 orientation (spherical probe)".to_string();
        }
        let turned = if self.classes > 1 {
            format!(
                ", turned differently for each of the {} sample points of a voxel",
                self.classes
            )
        } else {
            String::new()
        };
        if self.halved {
            format!(
                "{} directions ({} evaluated, each weighted twice: the probe is inversion-symmetric{turned})",
                self.requested,
                self.evaluated()
            )
        } else {
            format!("{} directions{turned}", self.requested)
        }
    }
}

/// The rotation matrix (rows) about unit `axis` by `angle` radians (Rodrigues).
fn axis_angle(axis: [f64; 3], angle: f64) -> [[f64; 3]; 3] {
    let (s, c) = angle.sin_cos();
    let t = 1.0 - c;
    let [x, y, z] = axis;
    [
        [t * x * x + c, t * x * y - s * z, t * x * z + s * y],
        [t * x * y + s * z, t * y * y + c, t * y * z - s * x],
        [t * x * z - s * y, t * y * z + s * x, t * z * z + c],
    ]
}

/// `n` points of a spherical Fibonacci set (z = 1 - (2i + 1)/n, azimuth i times the golden angle).
pub fn fibonacci_sphere(n: usize) -> Vec<[f64; 3]> {
    let golden = std::f64::consts::PI * (3.0 - 5f64.sqrt());
    (0..n)
        .map(|i| {
            let z = 1.0 - (2.0 * i as f64 + 1.0) / n as f64;
            let r = (1.0 - z * z).max(0.0).sqrt();
            let phi = golden * i as f64;
            [r * phi.cos(), r * phi.sin(), z]
        })
        .collect()
}

/// `m` points of a Fibonacci set on the upper hemisphere (z = 1 - (i + 1/2)/m).
fn fibonacci_hemisphere(m: usize) -> Vec<[f64; 3]> {
    let golden = std::f64::consts::PI * (3.0 - 5f64.sqrt());
    (0..m)
        .map(|i| {
            let z = 1.0 - (i as f64 + 0.5) / m as f64;
            let r = (1.0 - z * z).max(0.0).sqrt();
            let phi = golden * i as f64;
            [r * phi.cos(), r * phi.sin(), z]
        })
        .collect()
}

/// `m` axes whose 2m directions (each axis and its opposite) spread evenly over the sphere: for `m`
/// up to [`DESIGN_MAX_AXES`], the hemisphere's Fibonacci set moved apart by 3,000 steps of a
/// repulsion between the directions (each pair of axes a and b: force 1/r^3 along a - b and along
/// a + b; each step moves every axis by 0.05 * 0.999^step times its force over the largest force,
/// then back onto the sphere); beyond it the Fibonacci set itself. Deterministic. An antipodal set so
/// spread averages an even function of the direction (an inversion-symmetric probe's occupancy) with
/// fewer directions than the Fibonacci set: see [`DEFAULT_ORIENTATIONS`].
pub fn antipodal_design(m: usize) -> Vec<[f64; 3]> {
    let mut d = fibonacci_hemisphere(m);
    if !(2..=DESIGN_MAX_AXES).contains(&m) {
        return d;
    }
    let mut step = 0.05;
    let mut force = vec![[0.0f64; 3]; m];
    for _ in 0..3000 {
        for f in force.iter_mut() {
            *f = [0.0; 3];
        }
        for i in 0..m {
            for j in 0..m {
                if i == j {
                    continue;
                }
                for sign in [1.0, -1.0] {
                    let v = [0, 1, 2].map(|k| d[i][k] - sign * d[j][k]);
                    let r2 = dot(v, v).max(1e-18);
                    let w = 1.0 / (r2 * r2);
                    for k in 0..3 {
                        force[i][k] += w * v[k];
                    }
                }
            }
        }
        let largest = force.iter().map(|f| norm(*f)).fold(0.0, f64::max).max(1e-300);
        for (di, fi) in d.iter_mut().zip(&force) {
            for k in 0..3 {
                di[k] += step * fi[k] / largest;
            }
            let l = norm(*di).max(1e-300);
            *di = di.map(|x| x / l);
        }
        step *= 0.999;
    }
    d
}

/// Two unit vectors normal to the unit vector `d` and to each other (right-handed with `d`).
fn normals(d: [f64; 3]) -> ([f64; 3], [f64; 3]) {
    let a = if d[0].abs() < 0.9 {
        [1.0, 0.0, 0.0]
    } else {
        [0.0, 1.0, 0.0]
    };
    let t = dot(a, d);
    let u = [a[0] - t * d[0], a[1] - t * d[1], a[2] - t * d[2]];
    let l = norm(u).max(1e-300);
    let u = u.map(|x| x / l);
    let v = [
        d[1] * u[2] - d[2] * u[1],
        d[2] * u[0] - d[0] * u[2],
        d[0] * u[1] - d[1] * u[0],
    ];
    (u, v)
}

/// A proper rigid motion x -> rotation x + translation (Angstrom): a frame fitted onto the reference.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rigid {
    pub rotation: [[f64; 3]; 3],
    pub translation_angstrom: [f64; 3],
}

impl Rigid {
    pub fn apply(&self, p: [f64; 3]) -> [f64; 3] {
        let r = &self.rotation;
        let t = &self.translation_angstrom;
        [0, 1, 2].map(|k| r[k][0] * p[0] + r[k][1] * p[1] + r[k][2] * p[2] + t[k])
    }

    /// The inverse motion.
    pub fn inverse(&self) -> Rigid {
        let r = &self.rotation;
        let rt = [0, 1, 2].map(|i| [0, 1, 2].map(|j| r[j][i]));
        let t = self.translation_angstrom;
        let ti = [0, 1, 2].map(|k| -(rt[k][0] * t[0] + rt[k][1] * t[1] + rt[k][2] * t[2]));
        Rigid {
            rotation: rt,
            translation_angstrom: ti,
        }
    }
}

/// Per voxel the sum over frames of the voxel's mean occupancy, and the number of frames.
#[derive(Clone, Debug, PartialEq)]
pub struct OccupancySums {
    pub dims: [usize; 3],
    pub sums: Vec<f64>,
    pub frames: u64,
}

impl OccupancySums {
    pub fn new(dims: [usize; 3]) -> OccupancySums {
        OccupancySums {
            dims,
            sums: vec![0.0; dims[0] * dims[1] * dims[2]],
            frames: 0,
        }
    }

    /// Adds one frame's voxel means (one value per voxel, x fastest).
    pub fn add_frame(&mut self, voxel_means: &[f64]) -> Result<(), String> {
        if voxel_means.len() != self.sums.len() {
            return Err(format!(
                "a frame of {} voxels cannot add to a map of {}",
                voxel_means.len(),
                self.sums.len()
            ));
        }
        for (s, v) in self.sums.iter_mut().zip(voxel_means) {
            *s += v;
        }
        self.frames += 1;
        Ok(())
    }

    /// Adds the sums of other frames on the same lattice.
    pub fn merge(&mut self, other: &OccupancySums) -> Result<(), String> {
        if other.dims != self.dims {
            return Err(format!(
                "occupancy sums of {:?} voxels cannot add to {:?}",
                other.dims, self.dims
            ));
        }
        for (s, v) in self.sums.iter_mut().zip(&other.sums) {
            *s += v;
        }
        self.frames += other.frames;
        Ok(())
    }

    /// The map in kT: -ln(mean occupancy), `max_energy_kt` where the mean is at most
    /// exp(-max_energy_kt) (and everywhere before any frame).
    pub fn pmf_kt(&self, max_energy_kt: f64) -> Vec<f64> {
        let floor = (-max_energy_kt).exp();
        self.sums
            .iter()
            .map(|&s| {
                let mean = if self.frames > 0 { s / self.frames as f64 } else { 0.0 };
                if mean.is_finite() && mean > floor {
                    (-mean.ln()).min(max_energy_kt)
                } else {
                    max_energy_kt
                }
            })
            .collect()
    }

    /// Little-endian bytes: dims, frames, sums (for MPI reductions).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(32 + 8 * self.sums.len());
        for d in self.dims {
            out.extend_from_slice(&(d as u64).to_le_bytes());
        }
        out.extend_from_slice(&self.frames.to_le_bytes());
        for s in &self.sums {
            out.extend_from_slice(&s.to_le_bytes());
        }
        out
    }

    /// Reads [`OccupancySums::to_bytes`]' layout.
    pub fn from_bytes(bytes: &[u8]) -> Result<OccupancySums, String> {
        let word = |i: usize| -> Option<u64> {
            let b = bytes.get(8 * i..8 * i + 8)?;
            let mut w = [0u8; 8];
            w.copy_from_slice(b);
            Some(u64::from_le_bytes(w))
        };
        let bad = || format!("occupancy sums: {} bytes do not hold a header and sums", bytes.len());
        let dims = [0, 1, 2].map(|k| word(k).map(|d| d as usize));
        let [Some(a), Some(b), Some(c)] = dims else {
            return Err(bad());
        };
        let frames = word(3).ok_or_else(bad)?;
        let n = a.checked_mul(b).and_then(|x| x.checked_mul(c)).ok_or_else(bad)?;
        if bytes.len() != 32 + 8 * n {
            return Err(bad());
        }
        let sums = (0..n).map(|i| word(4 + i).map(f64::from_bits).unwrap_or(0.0)).collect();
        Ok(OccupancySums {
            dims: [a, b, c],
            sums,
            frames,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fibonacci_directions_are_unit_and_balanced() {
        let d = fibonacci_sphere(200);
        let mut mean = [0.0; 3];
        for v in &d {
            assert!((norm(*v) - 1.0).abs() < 1e-12);
            for k in 0..3 {
                mean[k] += v[k] / 200.0;
            }
        }
        assert!(norm(mean) < 1e-2);
    }

    #[test]
    fn orientations_keep_the_probe_shape() {
        let co = Probe::builtin("co").unwrap();
        let o = Orientations::new(&co, 12, 2);
        assert_eq!(o.evaluated(), 12);
        assert_eq!(o.classes, 8);
        for pair in o.offsets_angstrom.chunks(2) {
            let d = [0, 1, 2].map(|k| pair[0][k] - pair[1][k]);
            assert!((norm(d) - 1.13).abs() < 1e-12);
        }
        let o2 = Orientations::new(&Probe::builtin("o2").unwrap(), 12, 1);
        assert_eq!(o2.evaluated(), 6);
        assert!(o2.halved);
    }

    #[test]
    fn the_antipodal_design_spreads_its_directions_further_than_fibonacci() {
        // The smallest angle between any two of the 2m directions (each axis and its opposite).
        let closest = |axes: &[[f64; 3]]| {
            let mut best: f64 = 1.0;
            for (i, a) in axes.iter().enumerate() {
                for b in &axes[i + 1..] {
                    best = best.min(1.0 - dot(*a, *b).abs());
                }
            }
            best
        };
        let m = 50;
        let design = antipodal_design(m);
        assert_eq!(design.len(), m);
        for v in &design {
            assert!((norm(*v) - 1.0).abs() < 1e-12);
        }
        let (a, b) = (closest(&design), closest(&fibonacci_hemisphere(m)));
        assert!(a > 1.5 * b, "closest pair 1 - |cos|: design {a}, Fibonacci {b}");
        assert_eq!(design, antipodal_design(m));
    }

    #[test]
    fn sums_round_trip_and_cap() {
        let mut s = OccupancySums::new([2, 1, 1]);
        s.add_frame(&[1.0, 0.0]).unwrap();
        s.add_frame(&[(-2.0f64).exp(), 0.0]).unwrap();
        let back = OccupancySums::from_bytes(&s.to_bytes()).unwrap();
        assert_eq!(back, s);
        let pmf = s.pmf_kt(87.0);
        assert!((pmf[0] + ((1.0 + (-2.0f64).exp()) / 2.0).ln()).abs() < 1e-12);
        assert_eq!(pmf[1], 87.0);
        let r = Rigid {
            rotation: [[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]],
            translation_angstrom: [1.0, 2.0, 3.0],
        };
        let p = r.inverse().apply(r.apply([0.3, -0.7, 2.0]));
        assert!((p[0] - 0.3).abs() + (p[1] + 0.7).abs() + (p[2] - 2.0).abs() < 1e-12);
    }
}
