//! The electrostatic potential of a wavefunction on the CPU, in f64: `V(r) = sum_A Z_A / |r - R_A| -
//! sum_mn P_mn <m| 1/|r - r'| |n>` (hartree/e).
//!
//! Owns the evaluation of a [`PreparedQmEsp`] (the nuclei and the screened Hermite distributions
//! that `compute::qm_esp` prepares on the host): [`PreparedQmEsp::eval_block`] and the scalar
//! reference [`PreparedQmEsp::value_at`]. Called by [`super::CpuEngine`] for
//! [`crate::compute::Field::QmPotential`] (lattice slabs, 8 x 8 tiles of a plane) and
//! [`super::evaluate_points`] (point lists). The CUDA engine uploads the same distributions
//! (`compute::cuda::qm_esp`), so the GPU is held to this engine.
//!
//! Per block of up to [`BLOCK`] points the distributions are visited group by group (one total
//! angular momentum L per group, so the inner code has a fixed shape), four points at a time in
//! [`F4`] vectors (AVX2 + FMA where the CPU has them, chosen at run time): `X = P - C`, `T = p |X|^2`,
//! the Boys function `F_0..F_L`, the monomials of X and one multiply-add per coefficient.
//!
//! Nuclear charges are the wavefunction's (effective core charges where pseudopotentials replace
//! core electrons); a point closer than [`MIN_DISTANCE_BOHR`] to a nucleus sees it at that distance
//! (the potential at a nucleus is infinite; lattices stay finite). Accuracy: f64 throughout; the
//! screening drops at most `PairDistributions::dropped_bound` (below 1e-10 hartree/e for the test
//! molecules) at any point.

use super::boys4::boys4;
use super::simd::F4;
use crate::compute::MIN_DISTANCE_BOHR;
use crate::compute::qm_esp::PreparedQmEsp;
use crate::compute::qm_esp::boys::MAX_ORDER;
use crate::compute::qm_esp::nuclear_attraction::{PairGroup, PolyLayout, layouts};

/// Points per block (an 8 x 8 lattice tile).
pub const BLOCK: usize = 64;
const NVEC: usize = BLOCK / 4;
/// Monomials of degree <= 14: (14 + 1)(14 + 2)(14 + 3) / 6.
const MAX_MONOMIALS: usize = 680;

impl PreparedQmEsp {
    /// The potential at one point (scalar f64; the reference of the block kernels).
    pub fn value_at(&self, c_bohr: [f64; 3]) -> f64 {
        let mut v = self.pairs.potential_at(c_bohr);
        for &(r, z) in &self.nuclei {
            let d = ((r[0] - c_bohr[0]).powi(2) + (r[1] - c_bohr[1]).powi(2) + (r[2] - c_bohr[2]).powi(2)).sqrt();
            v += z / d.max(MIN_DISTANCE_BOHR);
        }
        v
    }

    /// The potential at up to [`BLOCK`] points (bohr), one value per point into `out`.
    ///
    /// On x86-64 CPUs with AVX2 and FMA the same code runs compiled for them (chosen at run time).
    pub fn eval_block(&self, points: &[[f64; 3]], out: &mut [f64]) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
            // SAFETY: the CPU supports AVX2 and FMA, checked just above.
            unsafe { self.eval_block_avx2(points, out) };
            return;
        }
        self.eval_block_any::<false>(points, out);
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn eval_block_avx2(&self, points: &[[f64; 3]], out: &mut [f64]) {
        self.eval_block_any::<true>(points, out);
    }

    #[inline(always)]
    fn eval_block_any<const FMA: bool>(&self, points: &[[f64; 3]], out: &mut [f64]) {
        let n = points.len().min(BLOCK).min(out.len());
        if n == 0 {
            return;
        }
        let nvec = n.div_ceil(4);
        let mut xs = [F4::ZERO; NVEC];
        let mut ys = [F4::ZERO; NVEC];
        let mut zs = [F4::ZERO; NVEC];
        for v in 0..nvec {
            for lane in 0..4 {
                // Padding lanes repeat the last point (their values are not stored).
                let p = points.get((v * 4 + lane).min(n - 1)).copied().unwrap_or([0.0; 3]);
                xs[v].0[lane] = p[0];
                ys[v].0[lane] = p[1];
                zs[v].0[lane] = p[2];
            }
        }
        let mut acc = [F4::ZERO; NVEC];
        let lays = layouts();
        for g in &self.pairs.groups {
            if let Some(lay) = lays.get(g.l) {
                eval_group::<FMA>(g, lay, &xs[..nvec], &ys[..nvec], &zs[..nvec], &mut acc[..nvec]);
            }
        }
        let min_d2 = F4::splat(MIN_DISTANCE_BOHR * MIN_DISTANCE_BOHR);
        for &(r, z) in &self.nuclei {
            let (rx, ry, rz, zq) = (F4::splat(r[0]), F4::splat(r[1]), F4::splat(r[2]), F4::splat(z));
            for v in 0..nvec {
                let dx = rx - xs[v];
                let dy = ry - ys[v];
                let dz = rz - zs[v];
                let d2 = dx.mul_add::<FMA>(dx, dy.mul_add::<FMA>(dy, dz * dz)).max(min_d2);
                let inv = F4(d2.0.map(|x| 1.0 / x.sqrt()));
                acc[v] = zq.mul_add::<FMA>(inv, acc[v]);
            }
        }
        for (i, o) in out.iter_mut().take(n).enumerate() {
            *o = acc[i / 4].0[i % 4];
        }
    }
}

/// Adds the potential of one group's distributions at the block's points to `acc`.
#[inline(always)]
fn eval_group<const FMA: bool>(g: &PairGroup, lay: &PolyLayout, xs: &[F4], ys: &[F4], zs: &[F4], acc: &mut [F4]) {
    let l = g.l;
    let nc = lay.n_coefs();
    if nc == 0 {
        return;
    }
    let nm = lay.monomials.len().min(MAX_MONOMIALS);
    let mut f = [F4::ZERO; MAX_ORDER + 1];
    let mut mono = [F4::ONE; MAX_MONOMIALS];
    for ((&p, pc), q) in g.exponent.iter().zip(&g.center_bohr).zip(g.coefs.chunks_exact(nc)) {
        let pv = F4::splat(p);
        let (cx, cy, cz) = (F4::splat(pc[0]), F4::splat(pc[1]), F4::splat(pc[2]));
        for (((&x, &y), &z), a) in xs.iter().zip(ys).zip(zs).zip(acc.iter_mut()) {
            let d = [cx - x, cy - y, cz - z];
            let r2 = d[0].mul_add::<FMA>(d[0], d[1].mul_add::<FMA>(d[1], d[2] * d[2]));
            boys4::<FMA>(l, pv * r2, &mut f);
            if l == 0 {
                *a = F4::splat(q[0]).mul_add::<FMA>(f[0], *a);
                continue;
            }
            for (i, &(j, axis)) in lay.build.iter().enumerate().take(nm).skip(1) {
                mono[i] = mono[j] * d[axis];
            }
            let mut s = F4::ZERO;
            for (nn, fw) in lay.n_start.windows(2).zip(f.iter()) {
                let mut sn = F4::ZERO;
                if let (Some(qs), Some(es)) = (q.get(nn[0]..nn[1]), lay.entries.get(nn[0]..nn[1])) {
                    for (&qe, &(_, m)) in qs.iter().zip(es) {
                        sn = F4::splat(qe).mul_add::<FMA>(mono[m.min(MAX_MONOMIALS - 1)], sn);
                    }
                }
                s = fw.mul_add::<FMA>(sn, s);
            }
            *a += s;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_equal_the_scalar_form() {
        use crate::model::{BasisSet, Element, OrbitalSet, QmAtom, Shell, SpinKind, Wavefunction};
        // Two atoms with s, p, d (pure) and f (Cartesian) shells and a random symmetric density.
        let mut shells = Vec::new();
        for (atom, c) in [[0.0, 0.0, 0.0], [1.4, -0.3, 0.8]].into_iter().enumerate() {
            for (l, pure, e) in [
                (0u8, false, vec![3.0, 0.5]),
                (1, false, vec![0.9]),
                (2, true, vec![0.7]),
                (3, false, vec![1.1]),
            ] {
                shells.push(Shell {
                    l,
                    pure,
                    atom,
                    center_bohr: c,
                    exponents: e.clone(),
                    coefficients: vec![1.0; e.len()],
                });
            }
        }
        let basis = BasisSet { shells };
        let n = basis.n_functions();
        let mut seed = 0x1234_5678u64;
        let mut rnd = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        let mut d = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..=i {
                let v = rnd();
                d[i * n + j] = v;
                d[j * n + i] = v;
            }
        }
        let wf = Wavefunction {
            atoms: vec![
                QmAtom {
                    element: Element(8),
                    nuclear_charge: 6.0,
                    position_bohr: [0.0; 3],
                },
                QmAtom {
                    element: Element(1),
                    nuclear_charge: 1.0,
                    position_bohr: [1.4, -0.3, 0.8],
                },
            ],
            basis,
            spin: SpinKind::Restricted,
            alpha: OrbitalSet {
                n_basis: n,
                ..OrbitalSet::default()
            },
            beta: None,
            program: None,
            corrections: Vec::new(),
            energy_hartree: None,
            scf_density: Some(crate::model::wavefunction::DensityMatrix { n_basis: n, values: d }),
        };
        let prep = PreparedQmEsp::new(&wf).unwrap();
        let points: Vec<[f64; 3]> = (0..37).map(|_| [3.0 * rnd(), 3.0 * rnd(), 3.0 * rnd()]).collect();
        let mut out = vec![0.0; 37];
        prep.eval_block(&points, &mut out);
        let mut plain = vec![0.0; 37];
        prep.eval_block_any::<false>(&points, &mut plain);
        for ((p, a), b) in points.iter().zip(&out).zip(&plain) {
            let want = prep.value_at(*p);
            assert!((a - want).abs() < 1e-12 * want.abs().max(1.0), "{p:?}: {a} vs {want}");
            assert!((b - want).abs() < 1e-12 * want.abs().max(1.0), "{p:?}: {b} vs {want}");
        }
    }
}
