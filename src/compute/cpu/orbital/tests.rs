//! Unit tests of `orbital`.

use super::*;

#[test]
fn cutoff_is_where_the_bound_falls_below_eps() {
    for l in 0..5u8 {
        for &alpha in &[0.1, 1.0, 3000.0] {
            for &scale in &[1e-3, 1.0, 500.0] {
                let r2 = cutoff2(l, alpha, scale);
                assert!(r2 > 0.0);
                let f = |r2: f64| scale * r2.powf(0.5 * l as f64) * (-alpha * r2).exp();
                assert!(
                    f(r2 * 1.0001) < SCREEN_EPS && f(r2 * 0.9999) >= SCREEN_EPS,
                    "l={l} a={alpha} s={scale}"
                );
                // Beyond the cutoff the bound over any block is below eps.
                assert!(scale * max_rl_gauss(l, alpha, r2 * 1.0001, r2 * 4.0) < SCREEN_EPS);
            }
        }
    }
    assert!(cutoff2(0, 1.0, 1e-13) < 0.0);
    assert!(cutoff2(2, 1.0, 1e-12) < 0.0);
    assert!(cutoff2(2, 1.0, 1e-11) > 0.0);
}

#[test]
fn bound_is_max() {
    for l in 0..5u8 {
        for &alpha in &[0.1, 1.0, 30.0] {
            let b = max_rl_gauss(l, alpha, 0.25, 9.0);
            let mut m: f64 = 0.0;
            for i in 0..=1000 {
                let r = 0.5 + 2.5 * i as f64 / 1000.0;
                m = m.max(r.powi(l as i32) * (-alpha * r * r).exp());
            }
            assert!(
                b >= m * (1.0 - 1e-12) && b <= m * 1.01 + 1e-300,
                "l={l} alpha={alpha}: {b} vs {m}"
            );
        }
    }
}
