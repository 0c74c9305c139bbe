//! The Boys function on four arguments at once ([`boys4`]): the CPU engine's vector form of
//! [`crate::compute::qm_esp::boys::boys`], reading the same table (`compute::qm_esp::boys`).
//!
//! Called by [`super::qm_esp`] (four lattice points per vector). Lanes on both sides of
//! `TABLE_MAX_T` fall back to the scalar form; the test holds every order to it.

use super::simd::{F4, exp2_neg};
use crate::compute::qm_esp::boys::{
    EXP_NEGLIGIBLE_T, HALF_SQRT_PI, INV, MAX_ORDER, TABLE_MAX_T, TABLE_ORDERS, TABLE_PER_UNIT, TAYLOR_TERMS, boys,
    inv_odd, table,
};

/// [`boys`] on four arguments at once: `out[n]` holds `F_n` of each lane for `n <= n_max`. Lanes on
/// both sides of `TABLE_MAX_T` fall back to the scalar form.
#[inline(always)]
pub fn boys4<const FMA: bool>(n_max: usize, t: F4, out: &mut [F4]) {
    let n_max = n_max.min(MAX_ORDER).min(out.len().saturating_sub(1));
    let ts = t.to_array();
    let all_table = ts.iter().all(|&x| (0.0..TABLE_MAX_T).contains(&x));
    let all_far = ts.iter().all(|&x| x >= TABLE_MAX_T && x.is_finite());
    if all_table {
        let tab = table();
        let mut rows = [0usize; 4];
        let mut x = [0.0; 4];
        for l in 0..4 {
            rows[l] = (ts[l] * TABLE_PER_UNIT as f64 + 0.5) as usize;
            x[l] = rows[l] as f64 / TABLE_PER_UNIT as f64 - ts[l];
        }
        let x = F4(x);
        let coef = |k: usize| -> F4 {
            F4(std::array::from_fn(|l| {
                tab.values
                    .get(rows[l] * TABLE_ORDERS + n_max + k)
                    .copied()
                    .unwrap_or(0.0)
            }))
        };
        let mut f = coef(TAYLOR_TERMS - 1);
        let mut e = F4::ONE;
        for k in (1..TAYLOR_TERMS).rev() {
            let xk = x * F4::splat(INV[k]);
            f = f.mul_add::<FMA>(xk, coef(k - 1));
            e = e.mul_add::<FMA>(xk, F4::ONE);
        }
        let e0 = F4(std::array::from_fn(|l| {
            tab.exp_neg.get(rows[l]).copied().unwrap_or(0.0)
        }));
        let e = e * e0;
        let two_t = t + t;
        let mut n = n_max;
        out[n] = f;
        while n > 0 {
            f = two_t.mul_add::<FMA>(f, e) * F4::splat(inv_odd(n));
            n -= 1;
            out[n] = f;
        }
    } else if all_far {
        let mut f = F4(ts.map(|x| HALF_SQRT_PI / x.sqrt()));
        out[0] = f;
        if n_max == 0 {
            return;
        }
        let e = if ts.iter().any(|&x| x < EXP_NEGLIGIBLE_T) {
            let e = exp2_neg::<FMA>(F4::ZERO - t * F4::splat(std::f64::consts::LOG2_E));
            // As the scalar form: nothing beyond EXP_NEGLIGIBLE_T (exp2_neg stops at 2^-300).
            F4(std::array::from_fn(
                |l| if ts[l] < EXP_NEGLIGIBLE_T { e.0[l] } else { 0.0 },
            ))
        } else {
            F4::ZERO
        };
        let inv_2t = F4(ts.map(|x| 0.5 / x));
        for n in 0..n_max {
            f = (F4::splat((2 * n + 1) as f64) * f - e) * inv_2t;
            out[n + 1] = f;
        }
    } else {
        let mut lane = [0.0; MAX_ORDER + 1];
        for (l, &x) in ts.iter().enumerate() {
            boys(n_max, x, &mut lane);
            for (o, &v) in out.iter_mut().zip(&lane).take(n_max + 1) {
                o.0[l] = v;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vector_form_equals_the_scalar_form() {
        let mut out4 = [F4::ZERO; MAX_ORDER + 1];
        let mut out1 = [0.0; MAX_ORDER + 1];
        // Lanes all in the table, all beyond it, and mixed.
        for ts in [
            [0.0, 0.7, 13.1, 39.9],
            [40.0, 41.5, 119.0, 1e6],
            [1.0, 45.0, 39.99, 200.0],
        ] {
            for n_max in [0, 1, 4, 8, MAX_ORDER] {
                boys4::<false>(n_max, F4(ts), &mut out4);
                for (l, &t) in ts.iter().enumerate() {
                    boys(n_max, t, &mut out1);
                    for n in 0..=n_max {
                        let (a, b) = (out4[n].0[l], out1[n]);
                        assert!(((a - b) / b).abs() < 1e-14, "n {n} t {t}: {a} vs {b}");
                    }
                }
            }
        }
    }
}
