//! The Boys function `F_n(T) = integral_0^1 t^(2n) exp(-T t^2) dt`, the radial kernel of every
//! Coulomb integral over Gaussians.
//!
//! Owns the table both field engines evaluate it from, and its scalar evaluator [`boys`]: called by
//! [`super::nuclear_attraction`], read four lanes at a time by the CPU engine (`compute::cpu::boys4`)
//! and uploaded to the device by `compute::cuda::qm_esp`, so the CPU and the GPU read the same
//! numbers.
//!
//! Method:
//! - `T < TABLE_MAX_T` (40): the table holds `F_n(T_i)` on `T_i = i / 16` for orders `0..TABLE_ORDERS`
//!   and `exp(-T_i)`. The highest order wanted is the Taylor series around the nearest `T_i`
//!   (`|T - T_i| <= 1/32`, [`TAYLOR_TERMS`] terms: `F_n^(k) = (-1)^k F_(n+k)`, remainder below 1e-17
//!   relative), `exp(-T)` likewise, and the lower orders follow by the downward recursion
//!   `F_(n-1) = (2T F_n + exp(-T)) / (2n - 1)`, which is stable.
//! - `T >= 40`: `F_0 = sqrt(pi / T) / 2` (the neglected `erfc(sqrt T)` is below 1e-18 relative) and
//!   the upward recursion `F_(n+1) = ((2n + 1) F_n - exp(-T)) / (2T)`, stable there for every order
//!   the table serves; `exp(-T)` is dropped above [`EXP_NEGLIGIBLE_T`].
//!
//! The table entries are computed once per process from the convergent series
//! `F_n(T) = exp(-T) sum_k (2T)^k / ((2n+1)(2n+3)...(2n+2k+1))` at the highest order and the
//! downward recursion. Accuracy against 40-digit values (tests): below 2e-15 relative.

use std::sync::OnceLock;

/// Highest order `n` the evaluators serve: pairs of shells up to l = 7 need `2 * 7`.
pub const MAX_ORDER: usize = 16;
/// Taylor terms of the table path (orders `n .. n + TAYLOR_TERMS - 1` are read).
pub const TAYLOR_TERMS: usize = 8;
/// Table points per unit of T.
pub const TABLE_PER_UNIT: usize = 16;
/// Upper end of the table; larger arguments use the asymptotic form.
pub const TABLE_MAX_T: f64 = 40.0;
/// Rows of the table: `T_i = i / TABLE_PER_UNIT` for `i = 0 ..= 40 * TABLE_PER_UNIT`.
pub const TABLE_ROWS: usize = 40 * TABLE_PER_UNIT + 1;
/// Orders stored per row.
pub const TABLE_ORDERS: usize = MAX_ORDER + TAYLOR_TERMS;
/// Above this `exp(-T)` (below 1e-52) is left out of the upward recursion.
pub const EXP_NEGLIGIBLE_T: f64 = 120.0;

/// `sqrt(pi) / 2`.
pub(crate) const HALF_SQRT_PI: f64 = 0.886_226_925_452_758;

/// The tabulated values: `values[row * TABLE_ORDERS + n] = F_n(row / 16)`, `exp_neg[row] = exp(-row / 16)`.
#[derive(Debug)]
pub struct BoysTable {
    pub values: Vec<f64>,
    pub exp_neg: Vec<f64>,
}

/// `F_n(t)` for `n = 0 ..= n_top` by the series at `n_top` and downward recursion (table building;
/// `t` up to a few hundred).
fn series(n_top: usize, t: f64, out: &mut [f64]) {
    let e = (-t).exp();
    let mut term = 1.0 / (2 * n_top + 1) as f64;
    let mut sum = term;
    let mut k = 0usize;
    while k < 2000 {
        term *= 2.0 * t / (2 * n_top + 2 * k + 3) as f64;
        sum += term;
        if term < sum * 1e-18 {
            break;
        }
        k += 1;
    }
    let mut f = e * sum;
    for n in (0..=n_top).rev() {
        if let Some(o) = out.get_mut(n) {
            *o = f;
        }
        if n > 0 {
            f = (2.0 * t * f + e) / (2 * n - 1) as f64;
        }
    }
}

/// The process-wide table (built at the first call).
pub fn table() -> &'static BoysTable {
    static TABLE: OnceLock<BoysTable> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut values = vec![0.0; TABLE_ROWS * TABLE_ORDERS];
        let mut exp_neg = vec![0.0; TABLE_ROWS];
        for (row, (chunk, e)) in values.chunks_mut(TABLE_ORDERS).zip(&mut exp_neg).enumerate() {
            let t = row as f64 / TABLE_PER_UNIT as f64;
            series(TABLE_ORDERS - 1, t, chunk);
            *e = (-t).exp();
        }
        BoysTable { values, exp_neg }
    })
}

/// `1 / k` for the Taylor steps and `1 / (2n - 1)` for the downward recursion.
pub(crate) const INV: [f64; TAYLOR_TERMS] = [1.0, 1.0, 0.5, 1.0 / 3.0, 0.25, 0.2, 1.0 / 6.0, 1.0 / 7.0];

pub(crate) fn inv_odd(n: usize) -> f64 {
    1.0 / (2 * n - 1) as f64
}

/// `F_0(t) ..= F_n_max(t)` into `out[..=n_max]` (`n_max <= MAX_ORDER`, `t >= 0` finite; larger orders
/// are clamped, negative or NaN `t` gives NaN).
pub fn boys(n_max: usize, t: f64, out: &mut [f64]) {
    let n_max = n_max.min(MAX_ORDER).min(out.len().saturating_sub(1));
    if t.is_nan() || t < 0.0 {
        out.iter_mut().take(n_max + 1).for_each(|o| *o = f64::NAN);
        return;
    }
    if t < TABLE_MAX_T {
        let tab = table();
        let row = (t * TABLE_PER_UNIT as f64 + 0.5) as usize;
        let x = row as f64 / TABLE_PER_UNIT as f64 - t;
        let base = row * TABLE_ORDERS + n_max;
        let v = tab
            .values
            .get(base..base + TAYLOR_TERMS)
            .unwrap_or(&[0.0; TAYLOR_TERMS]);
        let mut f = v[TAYLOR_TERMS - 1];
        let mut e = 1.0;
        for k in (1..TAYLOR_TERMS).rev() {
            f = v[k - 1] + f * x * INV[k];
            e = 1.0 + e * x * INV[k];
        }
        let e = e * tab.exp_neg.get(row).copied().unwrap_or(0.0);
        let mut n = n_max;
        out[n] = f;
        while n > 0 {
            f = (2.0 * t * f + e) * inv_odd(n);
            n -= 1;
            out[n] = f;
        }
    } else {
        let mut f = HALF_SQRT_PI / t.sqrt();
        let e = if t < EXP_NEGLIGIBLE_T { (-t).exp() } else { 0.0 };
        let inv_2t = 0.5 / t;
        out[0] = f;
        for n in 0..n_max {
            f = ((2 * n + 1) as f64 * f - e) * inv_2t;
            out[n + 1] = f;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (n, T, F_n(T)) from mpmath at 40 digits: `gammainc(n + 1/2, 0, T) / (2 T^(n + 1/2))`.
    const REFERENCE: &[(usize, f64, f64)] = &[
        (0, 0.0, 1.0),
        (0, 1e-08, 0.9999999966666667),
        (0, 0.001, 0.9996667666428618),
        (0, 0.03125, 0.9896802673670109),
        (0, 0.5, 0.8556243918921488),
        (0, 1.7, 0.6353906904021529),
        (0, 5.0, 0.39571230961051357),
        (0, 12.3, 0.2526923408412303),
        (0, 24.96875, 0.17735626741896998),
        (0, 39.99, 0.14014229929235836),
        (0, 40.0, 0.14012478040994822),
        (0, 40.01, 0.14010726809588747),
        (0, 55.5, 0.11895931346226525),
        (0, 100.0, 0.0886226925452758),
        (0, 1000.0, 0.028024956081989644),
        (0, 100000.0, 0.002802495608198964),
        (1, 0.0, 0.3333333333333333),
        (1, 1e-08, 0.3333333313333333),
        (1, 0.001, 0.33313340474339004),
        (1, 0.03125, 0.32715252625066793),
        (1, 0.5, 0.2490937321795154),
        (1, 1.7, 0.1331491665733583),
        (1, 5.0, 0.03889743626114281),
        (1, 12.3, 0.010271861345397043),
        (1, 24.96875, 0.003551564804097946),
        (1, 39.99, 0.0017522167953533177),
        (1, 40.0, 0.0017515597551243526),
        (1, 40.01, 0.001750903125417239),
        (1, 55.5, 0.0010717055266870744),
        (1, 100.0, 0.000443113462726379),
        (1, 1000.0, 1.4012478040994822e-05),
        (1, 100000.0, 1.4012478040994822e-08),
        (2, 0.0, 0.2),
        (2, 1e-08, 0.19999999857142858),
        (2, 0.001, 0.1998571983975501),
        (2, 0.03125, 0.19558950841055656),
        (2, 0.5, 0.1407505368259127),
        (2, 1.7, 0.06375411049039419),
        (2, 5.0, 0.010995436178434296),
        (2, 12.3, 0.0012524809874686197),
        (2, 24.96875, 0.00021336058869516985),
        (2, 39.99, 6.572456096599086e-05),
        (2, 40.0, 6.568349081716317e-05),
        (2, 40.01, 6.564245658899916e-05),
        (2, 55.5, 2.8965014234785793e-05),
        (2, 100.0, 6.646701940895685e-06),
        (2, 1000.0, 2.1018717061492233e-08),
        (2, 100000.0, 2.1018717061492233e-13),
        (3, 0.0, 0.14285714285714285),
        (3, 1e-08, 0.14285714174603176),
        (3, 0.001, 0.14274607718775947),
        (3, 0.03125, 0.13942892122301864),
        (3, 0.5, 0.09722202441693015),
        (3, 1.7, 0.04002559658801067),
        (3, 5.0, 0.004823923389308601),
        (3, 12.3, 0.00025438427613333394),
        (3, 24.96875, 2.136276203548545e-05),
        (3, 39.99, 4.108812263440235e-06),
        (3, 40.0, 4.105218176072645e-06),
        (3, 40.01, 4.101628129779949e-06),
        (3, 55.5, 1.304730370936297e-06),
        (3, 100.0, 1.6616754852239212e-07),
        (3, 1000.0, 5.254679265373058e-11),
        (3, 100000.0, 5.254679265373058e-18),
        (5, 0.0, 0.09090909090909091),
        (5, 1e-08, 0.09090909013986015),
        (5, 0.001, 0.09083220115569944),
        (5, 0.03125, 0.08853749972625642),
        (5, 0.5, 0.059680941140265335),
        (5, 1.7, 0.022174471175671527),
        (5, 5.0, 0.00175886180543818),
        (5, 12.3, 2.622987438436189e-05),
        (5, 24.96875, 5.396896463436891e-07),
        (5, 39.99, 4.0466351364715555e-08),
        (5, 40.0, 4.041074142065602e-08),
        (5, 40.01, 4.035522176937683e-08),
        (5, 55.5, 6.6713751618364346e-09),
        (5, 100.0, 2.617138889227676e-10),
        (5, 1000.0, 8.276119842962567e-16),
        (5, 100000.0, 8.276119842962566e-27),
        (8, 0.0, 0.058823529411764705),
        (8, 1e-08, 0.058823528885448916),
        (8, 0.001, 0.05877092163509644),
        (8, 0.03125, 0.057201824496187575),
        (8, 0.5, 0.037649546503491),
        (8, 1.7, 0.013033589883805425),
        (8, 5.0, 0.0007743721580718631),
        (8, 12.3, 3.42188365678457e-06),
        (8, 24.96875, 9.295494804177504e-09),
        (8, 39.99, 1.6965909462949814e-10),
        (8, 40.0, 1.6929890686365478e-10),
        (8, 40.01, 1.6893957352876277e-10),
        (8, 55.5, 1.0463421582385264e-11),
        (8, 100.0, 7.017203646741707e-14),
        (8, 1000.0, 2.219034632894338e-22),
        (8, 100000.0, 2.2190346328943382e-39),
        (10, 0.0, 0.047619047619047616),
        (10, 1e-08, 0.04761904718426501),
        (10, 0.001, 0.04757558935200665),
        (10, 0.03125, 0.0462796961990112),
        (10, 0.5, 0.030190326374923703),
        (10, 1.7, 0.010184999453970257),
        (10, 5.0, 0.0005472174408373323),
        (10, 12.3, 1.498467120349969e-06),
        (10, 24.96875, 1.2035899063473077e-09),
        (10, 39.99, 8.566765212902326e-12),
        (10, 40.0, 8.544304140058347e-12),
        (10, 40.01, 8.521907550059513e-12),
        (10, 55.5, 2.7430283021754225e-13),
        (10, 100.0, 5.666391944743927e-16),
        (10, 1000.0, 1.791870466062178e-26),
        (10, 100000.0, 1.7918704660621781e-47),
        (14, 0.0, 0.034482758620689655),
        (14, 1e-08, 0.03448275829810901),
        (14, 0.001, 0.0344505157029279),
        (14, 0.03125, 0.03348934625189614),
        (14, 0.5, 0.021610567884730963),
        (14, 1.7, 0.0070691323455594635),
        (14, 5.0, 0.00033883928477462403),
        (14, 12.3, 5.465485408735983e-07),
        (14, 24.96875, 6.254345688707864e-11),
        (14, 39.99, 6.825613077740897e-14),
        (14, 40.0, 6.800911993707761e-14),
        (14, 40.01, 6.776306440642126e-14),
        (14, 55.5, 5.891003449587208e-16),
        (14, 100.0, 1.154615896115712e-19),
        (14, 1000.0, 3.65121605436201e-34),
        (14, 100000.0, 3.6512160543620103e-63),
    ];

    #[test]
    fn matches_forty_digit_values() {
        let mut out = [0.0; MAX_ORDER + 1];
        let mut worst: f64 = 0.0;
        for &(n, t, want) in REFERENCE {
            // Every order is checked as the top of its own evaluation and as a lower order of a
            // higher one (downward and upward recursions).
            for top in [n, MAX_ORDER] {
                boys(top, t, &mut out);
                let rel = ((out[n] - want) / want).abs();
                worst = worst.max(rel);
                assert!(
                    rel < 2e-15,
                    "F_{n}({t}) = {} from top {top}, want {want} (rel {rel:.1e})",
                    out[n]
                );
            }
        }
        println!("worst relative error {worst:.2e}");
    }

    #[test]
    fn bad_arguments_give_nan_not_panics() {
        let mut out = [0.0; 3];
        boys(2, f64::NAN, &mut out);
        assert!(out.iter().all(|v| v.is_nan()));
        boys(2, -1.0, &mut out);
        assert!(out[0].is_nan());
        boys(50, 1.0, &mut out);
        assert!(out.iter().all(|v| v.is_finite()));
    }
}
