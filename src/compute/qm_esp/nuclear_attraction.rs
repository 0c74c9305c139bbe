//! Nuclear-attraction-type integrals `<m| 1/|r - C| |n>` over a wavefunction's basis, contracted with
//! its density matrix: the electronic part of the electrostatic potential at any point C.
//!
//! Owns [`PairDistributions`]: the electron density as a list of Hermite Gaussian charge distributions
//! (one per pair of primitives, screened), prepared once per wavefunction and then evaluated at
//! every lattice point. Built by [`super::PreparedQmEsp`]; the CPU engine evaluates the list
//! (`compute::cpu::qm_esp`) and `compute::cuda::qm_esp` uploads it, so both engines evaluate the
//! same screened sum.
//!
//! Method (McMurchie-Davidson; chosen because the density contraction collapses onto it): the
//! product of two Cartesian primitives on centres A and B is a sum of Hermite Gaussians on
//! `P = (a A + b B) / p`, `p = a + b`, with coefficients `E_t^(ij)` from the usual recursion, and
//! `int Lambda_tuv(r) / |r - C| dr = (2 pi / p) R_tuv(P - C)`, `R_tuv = d^t/dX^t d^u/dY^u d^v/dZ^v
//! F_0(p |P - C|^2)`. Summing `P_mn` times the Cartesian (and, for pure shells, the solid-harmonic)
//! expansion of both functions over every function pair of a shell pair leaves, per primitive pair,
//! one Hermite coefficient per `(t, u, v)` with `t + u + v <= l_a + l_b`: the density matrix enters
//! once, on the host, and the per-point work no longer depends on how many functions a shell has
//! (Rys or Obara-Saika work per function pair and would contract with `P` at every point).
//! Primitive pairs of different shells with the same centres and exponents (SP shells, general
//! contractions) share `p` and `P` and are merged into one distribution.
//!
//! Per point each distribution is evaluated in closed form: with `X = P - C`,
//! `R_tuv(X) = sum_k c_tuvk p^n X^m F_n(p |X|^2)` (Hermite polynomials of the derivative of a
//! Gaussian, `n = t + u + v - (k1 + k2 + k3)`, `m = (t - 2 k1, u - 2 k2, v - 2 k3)`), so the host folds
//! the Hermite coefficients into one polynomial coefficient per `(n, m)` ([`PolyLayout`]) and a point
//! costs the Boys function `F_0..F_L` ([`super::boys`]), the monomials of X up to degree L and one
//! multiply-add per coefficient: no recursion, the same straight-line code for the GPU.
//!
//! Screening (all on the host, per wavefunction): shell pairs whose density block vanishes are
//! skipped; every primitive pair carries its distance factor `exp(-a b |A - B|^2 / p)`; and a
//! merged, density-contracted distribution (so density-matrix pruning and the distance and
//! Schwarz-type decay act together) is dropped when its rigorous bound on `|V|` at any point,
//! `sum |D_tuv| max_X |R_tuv|` with `|R_tuv| <= 1.1^3 sqrt(2^L t! u! v!) p^(L/2) / (L + 1)`
//! (Cramer's bound on Hermite functions, `L = t + u + v`), is below [`SCREEN_EPS`]. Every dropped
//! term changes the potential by less than its bound, at every point.

use super::boys::{MAX_ORDER, boys};
use crate::compute::ComputeError;
use crate::model::basis::{angular_terms, cartesian_powers};
use crate::model::{BasisSet, Shell};
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// Distributions (and shell pairs) whose bound on the potential at any point is below this
/// (hartree/e) are dropped.
pub const SCREEN_EPS: f64 = 1e-14;
/// Highest angular momentum of a shell the integrals support (k functions).
pub const MAX_SHELL_L: u8 = 7;
/// Highest total angular momentum of a distribution.
pub const MAX_PAIR_L: usize = 2 * MAX_SHELL_L as usize;
const _: () = assert!(MAX_PAIR_L <= MAX_ORDER);

/// The polynomial form of one total angular momentum L: which monomials of `X = P - C` a point
/// needs, how to build them, and which `(n, monomial)` coefficient comes where.
#[derive(Clone, Debug)]
pub struct PolyLayout {
    pub l: usize,
    /// Exponents of the monomials of degree `<= L`, by degree, then descending powers of x, then y.
    pub monomials: Vec<[u8; 3]>,
    /// For monomial `i >= 1`: `(j, axis)` with monomial i = monomial j times X[axis] (`j < i`).
    pub build: Vec<(usize, usize)>,
    /// The coefficients of a distribution, in storage order: `(n, monomial index)`, by n ascending.
    pub entries: Vec<(usize, usize)>,
    /// `entries[n_start[n]..n_start[n + 1]]` multiply `F_n`.
    pub n_start: Vec<usize>,
    /// Per Hermite index `(t, u, v)` with `t + u + v <= L` (in [`PolyLayout::hermite`] order): the
    /// entries it feeds and the factor, `(-1)^(L' + K) 2^(L' - 2K) prod_i t_i! / (k_i! (t_i - 2 k_i)!)`
    /// (without `p^n`, which the distribution supplies).
    pub feeds: Vec<Vec<(usize, f64)>>,
    pub hermite: Vec<[u8; 3]>,
}

fn factorial(n: usize) -> f64 {
    (1..=n).map(|k| k as f64).product()
}

impl PolyLayout {
    fn new(l: usize) -> PolyLayout {
        let mut monomials = Vec::new();
        for d in 0..=l {
            for a in (0..=d).rev() {
                for b in (0..=d - a).rev() {
                    monomials.push([a as u8, b as u8, (d - a - b) as u8]);
                }
            }
        }
        let index_of = |m: [u8; 3]| monomials.iter().position(|&x| x == m).unwrap_or(0);
        let mut build = vec![(0, 0)];
        for &m in monomials.iter().skip(1) {
            let axis = if m[0] > 0 {
                0
            } else if m[1] > 0 {
                1
            } else {
                2
            };
            let mut parent = m;
            parent[axis] -= 1;
            build.push((index_of(parent), axis));
        }
        let mut entries = Vec::new();
        let mut n_start = Vec::new();
        for n in 0..=l {
            n_start.push(entries.len());
            let lo = (2 * n).saturating_sub(l);
            for (i, m) in monomials.iter().enumerate() {
                let d = m.iter().map(|&x| usize::from(x)).sum::<usize>();
                if d >= lo && d <= n {
                    entries.push((n, i));
                }
            }
        }
        n_start.push(entries.len());
        let mut hermite = Vec::new();
        for t in 0..=l {
            for u in 0..=l - t {
                for v in 0..=l - t - u {
                    hermite.push([t as u8, u as u8, v as u8]);
                }
            }
        }
        let a = |t: usize, k: usize| factorial(t) / (factorial(k) * factorial(t - 2 * k));
        let mut feeds = Vec::new();
        for h in &hermite {
            let [t, u, v] = h.map(usize::from);
            let big_l = t + u + v;
            let mut list = Vec::new();
            for k1 in 0..=t / 2 {
                for k2 in 0..=u / 2 {
                    for k3 in 0..=v / 2 {
                        let k = k1 + k2 + k3;
                        let n = big_l - k;
                        let m = [(t - 2 * k1) as u8, (u - 2 * k2) as u8, (v - 2 * k3) as u8];
                        let sign = if (big_l + k) % 2 == 0 { 1.0 } else { -1.0 };
                        let c = sign * 2f64.powi((big_l - 2 * k) as i32) * a(t, k1) * a(u, k2) * a(v, k3);
                        let mi = index_of(m);
                        let e = entries.iter().position(|&(en, em)| en == n && em == mi).unwrap_or(0);
                        list.push((e, c));
                    }
                }
            }
            feeds.push(list);
        }
        PolyLayout {
            l,
            monomials,
            build,
            entries,
            n_start,
            feeds,
            hermite,
        }
    }

    /// Number of coefficients per distribution.
    pub fn n_coefs(&self) -> usize {
        self.entries.len()
    }
}

/// The layouts of every L up to [`MAX_PAIR_L`] (built once).
pub fn layouts() -> &'static [PolyLayout] {
    static LAYOUTS: OnceLock<Vec<PolyLayout>> = OnceLock::new();
    LAYOUTS.get_or_init(|| (0..=MAX_PAIR_L).map(PolyLayout::new).collect())
}

/// Distributions of one total angular momentum, structure of arrays.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PairGroup {
    pub l: usize,
    /// Exponent `p = a + b` of each distribution (bohr^-2).
    pub exponent: Vec<f64>,
    /// Centre `P` (bohr).
    pub center_bohr: Vec<[f64; 3]>,
    /// `[distribution][layout.n_coefs()]`: polynomial coefficients, including the electron's sign,
    /// `2 pi / p`, the density matrix and `p^n`.
    pub coefs: Vec<f64>,
}

impl PairGroup {
    pub fn len(&self) -> usize {
        self.exponent.len()
    }

    pub fn is_empty(&self) -> bool {
        self.exponent.is_empty()
    }
}

/// The electron density of a wavefunction as screened Hermite distributions, grouped by L (groups
/// in ascending L, distributions in a deterministic order).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PairDistributions {
    pub groups: Vec<PairGroup>,
    /// Distributions before the final screening, and kept.
    pub n_candidates: usize,
    pub n_kept: usize,
    /// Sum of the bounds of the dropped distributions and shell pairs (an upper bound of the
    /// screening error at any point, hartree/e).
    pub dropped_bound: f64,
}

/// Hermite expansion coefficients `E_t^(ij)` of one dimension for `i <= la`, `j <= lb`:
/// `e[(i * (lb + 1) + j) * (la + lb + 1) + t]`, without the Gaussian prefactor.
fn hermite_e(la: usize, lb: usize, p: f64, xpa: f64, xpb: f64) -> Vec<f64> {
    let nt = la + lb + 1;
    let idx = |i: usize, j: usize, t: usize| (i * (lb + 1) + j) * nt + t;
    let mut e = vec![0.0; (la + 1) * (lb + 1) * nt];
    let inv2p = 0.5 / p;
    e[0] = 1.0;
    // Build up i with j = 0, then j for every i.
    for i in 0..la {
        for t in 0..=i + 1 {
            let lower = if t > 0 { e[idx(i, 0, t - 1)] } else { 0.0 };
            let same = if t <= i { e[idx(i, 0, t)] } else { 0.0 };
            let upper = if t < i { e[idx(i, 0, t + 1)] } else { 0.0 };
            e[idx(i + 1, 0, t)] = inv2p * lower + xpa * same + (t + 1) as f64 * upper;
        }
    }
    for i in 0..=la {
        for j in 0..lb {
            let top = i + j;
            for t in 0..=top + 1 {
                let lower = if t > 0 { e[idx(i, j, t - 1)] } else { 0.0 };
                let same = if t <= top { e[idx(i, j, t)] } else { 0.0 };
                let upper = if t < top { e[idx(i, j, t + 1)] } else { 0.0 };
                e[idx(i, j + 1, t)] = inv2p * lower + xpb * same + (t + 1) as f64 * upper;
            }
        }
    }
    e
}

/// A shell prepared for pairing: the Cartesian expansion of its functions.
struct ShellPrep<'a> {
    shell: &'a Shell,
    l: usize,
    radial: Vec<f64>,
    /// `[function][cartesian]` coefficients (Cartesian order of `cartesian_powers`).
    to_cart: Vec<f64>,
    n_fn: usize,
    n_cart: usize,
    offset: usize,
}

fn prepare_shell(shell: &Shell, offset: usize) -> Result<ShellPrep<'_>, ComputeError> {
    if shell.l > MAX_SHELL_L {
        return Err(ComputeError::BadInput(format!(
            "the potential of a wavefunction supports shells up to l = {MAX_SHELL_L}, the basis has l = {}",
            shell.l
        )));
    }
    let powers = cartesian_powers(shell.l);
    let terms = angular_terms(shell.l, shell.pure);
    let n_cart = powers.len();
    let n_fn = terms.len();
    let mut to_cart = vec![0.0; n_fn * n_cart];
    for (f, list) in terms.iter().enumerate() {
        for (c, p) in list {
            if let Some(k) = powers.iter().position(|q| q == p) {
                to_cart[f * n_cart + k] += c;
            }
        }
    }
    let radial = shell.radial_coefficients();
    if radial.iter().any(|d| !d.is_finite()) || shell.exponents.iter().any(|a| !(a.is_finite() && *a > 0.0)) {
        return Err(ComputeError::BadInput(
            "a basis shell has a non-finite or non-positive exponent or coefficient".into(),
        ));
    }
    Ok(ShellPrep {
        shell,
        l: usize::from(shell.l),
        radial,
        to_cart,
        n_fn,
        n_cart,
        offset,
    })
}

/// A merged distribution under construction: dense Hermite coefficients `[t][u][v]` up to `cap`.
struct Building {
    p: f64,
    center: [f64; 3],
    cap: usize,
    d: Vec<f64>,
}

/// Key of a primitive on a centre: centre and exponent bits (exact matches merge).
type PrimKey = ([u64; 3], u64);

fn prim_key(center: [f64; 3], alpha: f64) -> PrimKey {
    (center.map(f64::to_bits), alpha.to_bits())
}

/// Upper bound of `max_X |R_tuv(X)|` for `p = 1` (scale by `p^((t+u+v)/2)`).
fn r_bound(h: [u8; 3]) -> f64 {
    let [t, u, v] = h.map(usize::from);
    let big_l = t + u + v;
    // |H_n(x) exp(-x^2/2)| <= 1.0865 sqrt(2^n n!) (Cramer), integrated over s in [0, 1].
    1.0865f64.powi(3) * (2f64.powi(big_l as i32) * factorial(t) * factorial(u) * factorial(v)).sqrt()
        / (big_l + 1) as f64
}

impl PairDistributions {
    /// The distributions of the electron density `density` (`[n][n]` row-major, symmetric, in the
    /// basis order of `model::basis`) over `basis`, screened at [`SCREEN_EPS`].
    pub fn new(basis: &BasisSet, density: &[f64]) -> Result<PairDistributions, ComputeError> {
        let n = basis.n_functions();
        if density.len() != n * n {
            return Err(ComputeError::BadInput(format!(
                "the density matrix has {} values, the basis has {n} functions",
                density.len()
            )));
        }
        if density.iter().any(|v| !v.is_finite()) {
            return Err(ComputeError::BadInput("the density matrix is not finite".into()));
        }
        let offsets = basis.shell_offsets();
        let shells = basis
            .shells
            .iter()
            .zip(&offsets)
            .map(|(s, &o)| prepare_shell(s, o))
            .collect::<Result<Vec<_>, _>>()?;
        if shells
            .iter()
            .any(|s| s.shell.center_bohr.iter().any(|c| !c.is_finite()))
        {
            return Err(ComputeError::BadInput("a basis shell centre is not finite".into()));
        }
        // Highest l of any shell using a (centre, exponent): the Hermite capacity of distributions.
        let mut l_of: BTreeMap<PrimKey, usize> = BTreeMap::new();
        for s in &shells {
            for &a in &s.shell.exponents {
                let e = l_of.entry(prim_key(s.shell.center_bohr, a)).or_insert(0);
                *e = (*e).max(s.l);
            }
        }
        let mut building: BTreeMap<(PrimKey, PrimKey), Building> = BTreeMap::new();
        let mut dropped_bound = 0.0;
        let two_pi = 2.0 * std::f64::consts::PI;
        let mut w = Vec::new();
        let mut tmp = Vec::new();
        for (ia, sa) in shells.iter().enumerate() {
            for sb in shells.iter().skip(ia) {
                let same = std::ptr::eq(sa, sb);
                // Density block in Cartesian monomials: W = T_a P_ab T_b^T, doubled off the diagonal.
                let factor = if same { 1.0 } else { 2.0 };
                tmp.clear();
                tmp.resize(sa.n_fn * sb.n_cart, 0.0);
                for fa in 0..sa.n_fn {
                    let row = (sa.offset + fa) * n + sb.offset;
                    let prow = density.get(row..row + sb.n_fn).unwrap_or(&[]);
                    for (fb, &pv) in prow.iter().enumerate() {
                        if pv == 0.0 {
                            continue;
                        }
                        let tb = &sb.to_cart[fb * sb.n_cart..(fb + 1) * sb.n_cart];
                        let dst = &mut tmp[fa * sb.n_cart..(fa + 1) * sb.n_cart];
                        for (d, &t) in dst.iter_mut().zip(tb) {
                            *d += factor * pv * t;
                        }
                    }
                }
                w.clear();
                w.resize(sa.n_cart * sb.n_cart, 0.0);
                for fa in 0..sa.n_fn {
                    let ta = &sa.to_cart[fa * sa.n_cart..(fa + 1) * sa.n_cart];
                    let src = &tmp[fa * sb.n_cart..(fa + 1) * sb.n_cart];
                    for (ca, &t) in ta.iter().enumerate() {
                        if t == 0.0 {
                            continue;
                        }
                        let dst = &mut w[ca * sb.n_cart..(ca + 1) * sb.n_cart];
                        for (d, &s) in dst.iter_mut().zip(src) {
                            *d += t * s;
                        }
                    }
                }
                let w_max = w.iter().fold(0.0f64, |m, v| m.max(v.abs()));
                if w_max == 0.0 {
                    continue;
                }
                let a_c = sa.shell.center_bohr;
                let b_c = sb.shell.center_bohr;
                let ab2: f64 = (0..3).map(|k| (a_c[k] - b_c[k]).powi(2)).sum();
                let pa = cartesian_powers(sa.shell.l);
                let pb = cartesian_powers(sb.shell.l);
                let big_l = sa.l + sb.l;
                for (&alpha, &da) in sa.shell.exponents.iter().zip(&sa.radial) {
                    for (&beta, &db) in sb.shell.exponents.iter().zip(&sb.radial) {
                        let p = alpha + beta;
                        let k_ab = (-alpha * beta / p * ab2).exp();
                        let pref = -two_pi / p * k_ab * da * db;
                        // Only exact zeros are skipped here: the screening bound is taken on the
                        // merged, density-contracted distribution below.
                        if pref == 0.0 {
                            continue;
                        }
                        let center: [f64; 3] = std::array::from_fn(|k| (alpha * a_c[k] + beta * b_c[k]) / p);
                        let ex: Vec<Vec<f64>> = (0..3)
                            .map(|k| hermite_e(sa.l, sb.l, p, center[k] - a_c[k], center[k] - b_c[k]))
                            .collect();
                        let ka = prim_key(a_c, alpha);
                        let kb = prim_key(b_c, beta);
                        let key = if ka <= kb { (ka, kb) } else { (kb, ka) };
                        let cap = l_of.get(&ka).copied().unwrap_or(sa.l) + l_of.get(&kb).copied().unwrap_or(sb.l);
                        let entry = building.entry(key).or_insert_with(|| Building {
                            p,
                            center,
                            cap,
                            d: vec![0.0; (cap + 1).pow(3)],
                        });
                        let stride = entry.cap + 1;
                        let nt = big_l + 1;
                        for (ca, pwa) in pa.iter().enumerate() {
                            for (cb, pwb) in pb.iter().enumerate() {
                                let wv = w[ca * sb.n_cart + cb];
                                if wv == 0.0 {
                                    continue;
                                }
                                let s = pref * wv;
                                let e1 = |k: usize, t: usize| {
                                    let (i, j) = (usize::from(pwa[k]), usize::from(pwb[k]));
                                    ex[k][(i * (sb.l + 1) + j) * nt + t]
                                };
                                let tx = usize::from(pwa[0] + pwb[0]);
                                let ty = usize::from(pwa[1] + pwb[1]);
                                let tz = usize::from(pwa[2] + pwb[2]);
                                for t in 0..=tx {
                                    let fx = s * e1(0, t);
                                    if fx == 0.0 {
                                        continue;
                                    }
                                    for u in 0..=ty {
                                        let fxy = fx * e1(1, u);
                                        if fxy == 0.0 {
                                            continue;
                                        }
                                        let base = (t * stride + u) * stride;
                                        for v in 0..=tz {
                                            if let Some(d) = entry.d.get_mut(base + v) {
                                                *d += fxy * e1(2, v);
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        // Fold every distribution into its polynomial form, screening by the bound.
        let lays = layouts();
        let mut groups: Vec<PairGroup> = (0..=MAX_PAIR_L)
            .map(|l| PairGroup {
                l,
                ..PairGroup::default()
            })
            .collect();
        let n_candidates = building.len();
        let mut n_kept = 0;
        for b in building.values() {
            // The highest order actually present.
            let stride = b.cap + 1;
            let mut top = 0;
            let mut bound = 0.0;
            for t in 0..=b.cap {
                for u in 0..=b.cap {
                    for v in 0..=b.cap {
                        let d = b.d[(t * stride + u) * stride + v];
                        if d != 0.0 {
                            top = top.max(t + u + v);
                            bound +=
                                d.abs() * r_bound([t as u8, u as u8, v as u8]) * b.p.powf((t + u + v) as f64 / 2.0);
                        }
                    }
                }
            }
            if bound < SCREEN_EPS {
                dropped_bound += bound;
                continue;
            }
            let Some(lay) = lays.get(top) else {
                return Err(ComputeError::BadInput(format!(
                    "a distribution of total angular momentum {top} (at most {MAX_PAIR_L})"
                )));
            };
            let mut q = vec![0.0; lay.n_coefs()];
            for (h, feeds) in lay.hermite.iter().zip(&lay.feeds) {
                let [t, u, v] = h.map(usize::from);
                let d = b.d.get((t * stride + u) * stride + v).copied().unwrap_or(0.0);
                if d == 0.0 {
                    continue;
                }
                for &(e, c) in feeds {
                    if let Some(x) = q.get_mut(e) {
                        *x += d * c;
                    }
                }
            }
            for (x, &(nn, _)) in q.iter_mut().zip(&lay.entries) {
                *x *= b.p.powi(nn as i32);
            }
            let Some(g) = groups.get_mut(top) else { continue };
            g.exponent.push(b.p);
            g.center_bohr.push(b.center);
            g.coefs.extend_from_slice(&q);
            n_kept += 1;
        }
        groups.retain(|g| !g.is_empty());
        Ok(PairDistributions {
            groups,
            n_candidates,
            n_kept,
            dropped_bound,
        })
    }

    /// Highest L of any distribution.
    pub fn max_l(&self) -> usize {
        self.groups.iter().map(|g| g.l).max().unwrap_or(0)
    }

    /// The electronic potential (hartree/e, negative for a positive density) at `c_bohr`, scalar f64:
    /// the reference form of the lattice kernels.
    pub fn potential_at(&self, c_bohr: [f64; 3]) -> f64 {
        let lays = layouts();
        let mut f = [0.0; MAX_ORDER + 1];
        let mut mono = Vec::new();
        let mut total = 0.0;
        for g in &self.groups {
            let Some(lay) = lays.get(g.l) else { continue };
            let nc = lay.n_coefs();
            mono.clear();
            mono.resize(lay.monomials.len(), 1.0);
            for ((&p, pc), q) in g.exponent.iter().zip(&g.center_bohr).zip(g.coefs.chunks_exact(nc)) {
                let x = [pc[0] - c_bohr[0], pc[1] - c_bohr[1], pc[2] - c_bohr[2]];
                let t = p * (x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
                boys(g.l, t, &mut f);
                for (i, &(j, axis)) in lay.build.iter().enumerate().skip(1) {
                    mono[i] = mono[j] * x[axis];
                }
                let mut v = 0.0;
                for (fw, nn) in f.iter().zip(lay.n_start.windows(2)).take(g.l + 1) {
                    let s: f64 = (nn[0]..nn[1]).map(|e| q[e] * mono[lay.entries[e].1]).sum();
                    v += fw * s;
                }
                total += v;
            }
        }
        total
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// R_tuv by the McMurchie-Davidson recursion (an independent route to the closed form).
    fn r_recursive(t: usize, u: usize, v: usize, p: f64, x: [f64; 3]) -> f64 {
        let l = t + u + v;
        let mut f = [0.0; MAX_ORDER + 1];
        boys(l, p * (x[0] * x[0] + x[1] * x[1] + x[2] * x[2]), &mut f);
        fn r(n: usize, t: usize, u: usize, v: usize, p: f64, x: [f64; 3], f: &[f64]) -> f64 {
            if t == 0 && u == 0 && v == 0 {
                return (-2.0 * p).powi(n as i32) * f[n];
            }
            if t > 0 {
                let a = if t > 1 {
                    (t - 1) as f64 * r(n + 1, t - 2, u, v, p, x, f)
                } else {
                    0.0
                };
                return a + x[0] * r(n + 1, t - 1, u, v, p, x, f);
            }
            if u > 0 {
                let a = if u > 1 {
                    (u - 1) as f64 * r(n + 1, t, u - 2, v, p, x, f)
                } else {
                    0.0
                };
                return a + x[1] * r(n + 1, t, u - 1, v, p, x, f);
            }
            let a = if v > 1 {
                (v - 1) as f64 * r(n + 1, t, u, v - 2, p, x, f)
            } else {
                0.0
            };
            a + x[2] * r(n + 1, t, u, v - 1, p, x, f)
        }
        r(0, t, u, v, p, x, &f)
    }

    #[test]
    fn closed_form_equals_the_recursion() {
        let mut f = [0.0; MAX_ORDER + 1];
        for l in [0usize, 1, 2, 3, 5, 8] {
            let lay = &layouts()[l];
            for (p, x) in [
                (0.7, [0.3, -1.1, 0.4]),
                (12.0, [2.0, 0.5, -3.0]),
                (0.05, [0.01, 0.02, -0.03]),
            ] {
                let t = p * (x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
                boys(l, t, &mut f);
                let mono: Vec<f64> = lay
                    .monomials
                    .iter()
                    .map(|m| x[0].powi(m[0] as i32) * x[1].powi(m[1] as i32) * x[2].powi(m[2] as i32))
                    .collect();
                for (h, feeds) in lay.hermite.iter().zip(&lay.feeds) {
                    let [a, b, c] = h.map(usize::from);
                    let closed: f64 = feeds
                        .iter()
                        .map(|&(e, coef)| {
                            let (n, m) = lay.entries[e];
                            coef * p.powi(n as i32) * f[n] * mono[m]
                        })
                        .sum();
                    let want = r_recursive(a, b, c, p, x);
                    assert!(
                        (closed - want).abs() <= 1e-12 * want.abs().max(1e-300) + 1e-14,
                        "L {l} R_{a}{b}{c}: {closed} vs {want}"
                    );
                }
            }
        }
    }

    #[test]
    fn two_s_gaussians_attract_like_their_closed_form() {
        // One normalised s primitive (exponent a) with density 1 at the origin: rho = N^2 exp(-2a r^2)
        // with N^2 = (2a/pi)^(3/2), whose potential is -erf(sqrt(2a) r) / r.
        let a = 0.8;
        let basis = BasisSet {
            shells: vec![Shell {
                l: 0,
                pure: false,
                atom: 0,
                center_bohr: [0.1, 0.2, 0.3],
                exponents: vec![a],
                coefficients: vec![1.0],
            }],
        };
        let d = PairDistributions::new(&basis, &[1.0]).unwrap();
        for r in [0.0, 0.3, 1.0, 2.5, 7.0, 40.0] {
            let c = [0.1 + r, 0.2, 0.3];
            let got = d.potential_at(c);
            let want = if r == 0.0 {
                -2.0 * (2.0 * a / std::f64::consts::PI).sqrt()
            } else {
                -erf((2.0 * a).sqrt() * r) / r
            };
            assert!((got - want).abs() < 1e-13, "r {r}: {got} vs {want}");
        }
    }

    /// erf by its series / continued fraction (test only).
    fn erf(x: f64) -> f64 {
        // F_0(T) = sqrt(pi/T)/2 erf(sqrt T): use the tested Boys function.
        let mut f = [0.0; 1];
        boys(0, x * x, &mut f);
        if x == 0.0 {
            0.0
        } else {
            f[0] * 2.0 * x / std::f64::consts::PI.sqrt()
        }
    }

    #[test]
    fn hermite_coefficients_reproduce_the_product() {
        // x_A^i x_B^j exp(-a x_A^2 - b x_B^2) = K sum_t E_t Lambda_t at a few x.
        let (a, b, ax, bx) = (0.9, 0.4, 0.2, -0.7);
        let p: f64 = a + b;
        let px = (a * ax + b * bx) / p;
        let k = (-a * b / p * (ax - bx) * (ax - bx)).exp();
        let (la, lb) = (3, 2);
        let e = hermite_e(la, lb, p, px - ax, px - bx);
        // Lambda_t(x) = d^t/dPx^t exp(-p (x - Px)^2) by finite differences of order t... use the
        // Hermite polynomial form: Lambda_t = p^(t/2) H_t(sqrt(p)(x - Px)) exp(-p (x - Px)^2).
        fn h(t: usize, y: f64) -> f64 {
            let (mut h0, mut h1) = (1.0, 2.0 * y);
            if t == 0 {
                return h0;
            }
            for n in 1..t {
                let h2 = 2.0 * y * h1 - 2.0 * n as f64 * h0;
                h0 = h1;
                h1 = h2;
            }
            h1
        }
        for x in [-1.3, 0.0, 0.45, 2.0] {
            for i in 0..=la {
                for j in 0..=lb {
                    let want = (x - ax).powi(i as i32)
                        * (x - bx).powi(j as i32)
                        * (-a * (x - ax) * (x - ax) - b * (x - bx) * (x - bx)).exp();
                    let y = p.sqrt() * (x - px);
                    let got: f64 = (0..=i + j)
                        .map(|t| {
                            e[(i * (lb + 1) + j) * (la + lb + 1) + t]
                                * p.powf(t as f64 / 2.0)
                                * h(t, y)
                                * (-y * y).exp()
                        })
                        .sum::<f64>()
                        * k;
                    assert!((got - want).abs() < 1e-13, "x {x} i {i} j {j}: {got} vs {want}");
                }
            }
        }
    }

    #[test]
    fn layouts_are_consistent() {
        for lay in layouts() {
            let l = lay.l;
            assert_eq!(lay.monomials.len(), (l + 1) * (l + 2) * (l + 3) / 6);
            assert_eq!(lay.hermite.len(), lay.monomials.len());
            for (i, &(j, axis)) in lay.build.iter().enumerate().skip(1) {
                assert!(j < i);
                let mut m = lay.monomials[j];
                m[axis] += 1;
                assert_eq!(m, lay.monomials[i]);
            }
            assert_eq!(lay.n_start.len(), l + 2);
            assert_eq!(*lay.n_start.last().unwrap(), lay.entries.len());
        }
    }
}
