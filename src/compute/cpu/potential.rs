//! Direct Coulomb summation of point charges: `V(r) = sum_j q_j / |r - r_j|` (atomic units).
//!
//! Called by [`super::CpuEngine`] for [`crate::compute::Field::Potential`] and by
//! [`super::evaluate_points`]. Terms are computed in f32x8 ([`super::simd::F8`], AVX2 where the
//! CPU has it): eight points at a time (of a lattice row, or eight consecutive points of a list
//! such as a surface's vertices), coordinates relative to the first of them so that f32 keeps them
//! exact to ~1e-6 bohr; they are summed with Kahan compensation, so the sum over 10^5..10^6 charges loses nothing to
//! accumulation; each term carries the f32 rounding of `1/r` (relative 1e-7). Points closer than
//! [`MIN_DISTANCE_BOHR`] to a charge see it at that distance (the potential at a nucleus is
//! infinite; a lattice must stay finite).
//!
//! Screened models ([`crate::compute::esp::screening::Dielectric`], [`PreparedCharges::screened`])
//! run the same loop with their own term: `q a / r^2` (distance-dependent dielectric) or
//! `q a exp(-b r) / r` (Debye-Hueckel), in f32 like the vacuum term.

use super::simd::F8;
use crate::compute::PointCharges;
use crate::compute::esp::screening::{Dielectric, ScreenGpu};

pub use crate::compute::MIN_DISTANCE_BOHR;

/// Points of a list evaluated together lie within this of the first of them on every axis (bohr).
pub const GROUP_SPREAD_BOHR: f64 = 4.0;

/// Charges as structure-of-arrays, in f64 (shifted to f32 per block).
pub struct PreparedCharges {
    x: Vec<f64>,
    y: Vec<f64>,
    z: Vec<f64>,
    q: Vec<f32>,
    /// The screening model (model 0: vacuum).
    screen: ScreenGpu,
}

impl PreparedCharges {
    pub fn new(charges: &PointCharges) -> PreparedCharges {
        PreparedCharges::screened(charges, Dielectric::Vacuum)
    }

    /// The charges in `dielectric` (see the module documentation).
    pub fn screened(charges: &PointCharges, dielectric: Dielectric) -> PreparedCharges {
        let n = charges.positions_bohr.len().min(charges.charges_e.len());
        let mut p = PreparedCharges {
            x: Vec::with_capacity(n),
            y: Vec::with_capacity(n),
            z: Vec::with_capacity(n),
            q: Vec::with_capacity(n),
            screen: dielectric.gpu(),
        };
        for (pos, &q) in charges.positions_bohr.iter().zip(&charges.charges_e) {
            if q == 0.0 || !q.is_finite() || !pos.iter().all(|c| c.is_finite()) {
                continue;
            }
            p.x.push(pos[0]);
            p.y.push(pos[1]);
            p.z.push(pos[2]);
            p.q.push(q as f32);
        }
        p
    }

    /// Potential at `n <= 8` points `start + i * step` (bohr), written to `out[..n]`. Runs the
    /// AVX2 build of the kernel where the CPU has it.
    pub fn eval_row8(&self, start: [f64; 3], step: [f64; 3], n: usize, out: &mut [f64]) {
        let offsets: [[f32; 8]; 3] = std::array::from_fn(|k| std::array::from_fn(|i| (i as f64 * step[k]) as f32));
        self.eval8(start, &offsets, n, out);
    }

    /// Potential at `n <= 8` points `start + offsets[.][i]` (bohr), written to `out[..n]`; AVX2
    /// where the CPU has it.
    fn eval8(&self, start: [f64; 3], offsets: &[[f32; 8]; 3], n: usize, out: &mut [f64]) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2, checked just above.
            unsafe { self.eval8_avx2(start, offsets, n, out) };
            return;
        }
        self.eval8_any(start, offsets, n, out);
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn eval8_avx2(&self, start: [f64; 3], offsets: &[[f32; 8]; 3], n: usize, out: &mut [f64]) {
        self.eval8_any(start, offsets, n, out);
    }

    #[inline(always)]
    fn eval8_any(&self, start: [f64; 3], offsets: &[[f32; 8]; 3], n: usize, out: &mut [f64]) {
        let n = n.min(8).min(out.len());
        // Point coordinates relative to `start`.
        let [rx, ry, rz] = offsets.map(F8);
        let one = F8::splat(1.0);
        let (a, b) = (F8::splat(self.screen.a as f32), self.screen.b as f32);
        let (sum, comp) = match self.screen.model {
            1 => self.sum8(start, [rx, ry, rz], |q, r2| q * a / r2),
            2 => self.sum8(start, [rx, ry, rz], |q, r2| {
                let r = r2.sqrt();
                let e = F8(r.0.map(|x| (-b * x).exp()));
                q * a * e / r
            }),
            _ => self.sum8(start, [rx, ry, rz], |q, r2| q * (one / r2.sqrt())),
        };
        for i in 0..n {
            if let (Some(o), Some(&si), Some(&ci)) = (out.get_mut(i), sum.0.get(i), comp.0.get(i)) {
                *o = si as f64 - ci as f64;
            }
        }
    }

    /// Kahan sum over the charges of `term(q, r^2)` at eight points `start + r` (bohr): the sum
    /// and its compensation.
    #[inline(always)]
    fn sum8(&self, start: [f64; 3], r: [F8; 3], term: impl Fn(F8, F8) -> F8) -> (F8, F8) {
        let [rx, ry, rz] = r;
        let min2 = F8::splat((MIN_DISTANCE_BOHR * MIN_DISTANCE_BOHR) as f32);
        let mut sum = F8::ZERO;
        let mut comp = F8::ZERO;
        for (((&x, &y), &z), &q) in self.x.iter().zip(&self.y).zip(&self.z).zip(&self.q) {
            let dx = rx - F8::splat((x - start[0]) as f32);
            let dy = ry - F8::splat((y - start[1]) as f32);
            let dz = rz - F8::splat((z - start[2]) as f32);
            let r2 = (dx * dx + dy * dy + dz * dz).max(min2);
            let term = term(F8::splat(q), r2);
            // Kahan: sum + term with the lost low part carried in comp.
            let y = term - comp;
            let t = sum + y;
            comp = (t - sum) - y;
            sum = t;
        }
        (sum, comp)
    }

    /// Potential at arbitrary points (bohr). Eight consecutive points within
    /// [`GROUP_SPREAD_BOHR`] of the first of them (neighbouring vertices of a surface, as marching
    /// cubes emits them) share one pass over the charges, relative to that first point, so f32
    /// keeps their offsets exact to ~1e-7 bohr; points farther apart are evaluated one by one,
    /// each relative to itself.
    pub fn eval_points(&self, points: &[[f64; 3]], out: &mut [f64]) {
        for (chunk, o) in points.chunks(8).zip(out.chunks_mut(8)) {
            let Some(&start) = chunk.first() else {
                continue;
            };
            let near = chunk
                .iter()
                .all(|p| (0..3).all(|k| (p[k] - start[k]).abs() <= GROUP_SPREAD_BOHR));
            if near {
                let mut offsets = [[0.0f32; 8]; 3];
                for (i, p) in chunk.iter().enumerate() {
                    for (k, off) in offsets.iter_mut().enumerate() {
                        if let Some(x) = off.get_mut(i) {
                            *x = (p[k] - start[k]) as f32;
                        }
                    }
                }
                self.eval8(start, &offsets, chunk.len(), o);
            } else {
                for (&p, o) in chunk.iter().zip(o.iter_mut()) {
                    let mut v = [0.0; 8];
                    self.eval8(p, &[[0.0; 8]; 3], 1, &mut v);
                    *o = v[0];
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_f64_sum() {
        let mut charges = PointCharges::default();
        let mut seed = 12345u64;
        let mut rnd = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((seed >> 11) as f64 / (1u64 << 53) as f64) - 0.5
        };
        for _ in 0..3000 {
            charges.positions_bohr.push([20.0 * rnd(), 20.0 * rnd(), 20.0 * rnd()]);
            charges.charges_e.push(rnd());
        }
        let p = PreparedCharges::new(&charges);
        let start = [1.0, -2.0, 0.5];
        let step = [0.3, 0.0, 0.1];
        let mut out = [0.0; 8];
        p.eval_row8(start, step, 8, &mut out);
        for (i, &got) in out.iter().enumerate() {
            let pt = [
                start[0] + i as f64 * step[0],
                start[1] + i as f64 * step[1],
                start[2] + i as f64 * step[2],
            ];
            let mut want = 0.0;
            let mut scale = 0.0;
            for (r, &q) in charges.positions_bohr.iter().zip(&charges.charges_e) {
                let d = ((pt[0] - r[0]).powi(2) + (pt[1] - r[1]).powi(2) + (pt[2] - r[2]).powi(2)).sqrt();
                want += q / d;
                scale += (q / d).abs();
            }
            assert!((got - want).abs() < 1e-6 * scale, "{got} vs {want}");
        }
    }
}
