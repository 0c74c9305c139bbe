//! Host twins of the kernels of `kernels/msm_levels.cu`, written as the kernels are (one loop body
//! per thread, the same integer arithmetic), replaying [`schedule`](super::schedule) to check the
//! indices and the sequence against the host cascade without a device. Tests only.

use super::*;
use crate::compute::esp::kernel::{TWO_SCALE, phi};
use crate::compute::esp::msm::cutoff_stencil;
use crate::model::{Lattice, UnitCell};

fn weights(t: f64) -> (i64, [f64; 4]) {
    let f = t.floor();
    let u = t - f;
    (f as i64 - 1, [phi(u + 1.0), phi(u), phi(u - 1.0), phi(u - 2.0)])
}

fn wrap(mut m: i64, n: i64, periodic: bool) -> i64 {
    if periodic && n > 0 {
        m %= n;
        if m < 0 {
            m += n;
        }
    }
    if m < 0 || m >= n { -1 } else { m }
}

fn floordiv(a: i64, b: i64) -> i64 {
    let q = a / b;
    if a % b != 0 && a < 0 { q - 1 } else { q }
}

#[allow(clippy::too_many_arguments)]
fn anterpolate(acc: &mut [u64], atoms: &[f64], lo: [i64; 3], n: [i64; 3], periodic: bool, scale: f64) {
    for a in atoms.chunks(4) {
        let (b0, wx) = weights(a[0]);
        let (b1, wy) = weights(a[1]);
        let (b2, wz) = weights(a[2]);
        for dk in 0..4 {
            let m2 = wrap(b2 + dk - lo[2], n[2], periodic);
            if m2 < 0 {
                continue;
            }
            for dj in 0..4 {
                let m1 = wrap(b1 + dj - lo[1], n[1], periodic);
                if m1 < 0 {
                    continue;
                }
                let qyz = a[3] * wy[dj as usize] * wz[dk as usize];
                for di in 0..4 {
                    let m0 = wrap(b0 + di - lo[0], n[0], periodic);
                    if m0 < 0 {
                        continue;
                    }
                    let v = (qyz * wx[di as usize] * scale).round_ties_even() as i64;
                    let s = (m0 + n[0] * (m1 + n[1] * m2)) as usize;
                    acc[s] = acc[s].wrapping_add(v as u64);
                }
            }
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn axis_pass(
    src: &[f64],
    s: [i64; 3],
    src_lo: i64,
    dst: &mut [f64],
    d: [i64; 3],
    dst_lo: i64,
    axis: usize,
    periodic: bool,
    restrict: bool,
    accumulate: bool,
) {
    for idx in 0..d[0] * d[1] * d[2] {
        let c = [idx % d[0], (idx / d[0]) % d[1], idx / (d[0] * d[1])];
        let ss = [1, s[0], s[0] * s[1]];
        let mut base = 0;
        for a in 0..3 {
            if a != axis {
                base += c[a] * ss[a];
            }
        }
        let g = c[axis] + dst_lo;
        let ns = s[axis];
        let mut acc = 0.0;
        if restrict {
            for t in 0..7i64 {
                let w = TWO_SCALE[t as usize];
                if w == 0.0 {
                    continue;
                }
                let m = wrap(2 * g + t - 3 - src_lo, ns, periodic);
                if m >= 0 {
                    acc += w * src[(base + m * ss[axis]) as usize];
                }
            }
        } else {
            let n_first = -floordiv(3 - g, 2);
            let n_last = floordiv(g + 3, 2);
            for n in n_first..=n_last {
                let t = g - 2 * n + 3;
                let w = if (0..7).contains(&t) {
                    TWO_SCALE[t as usize]
                } else {
                    0.0
                };
                if w == 0.0 {
                    continue;
                }
                let m = wrap(n - src_lo, ns, periodic);
                if m >= 0 {
                    acc += w * src[(base + m * ss[axis]) as usize];
                }
            }
        }
        if accumulate {
            dst[idx as usize] += acc;
        } else {
            dst[idx as usize] = acc;
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn cutoff(
    q: &[f64],
    e: &mut [f64],
    n: [i64; 3],
    periodic: bool,
    rows: &[i32],
    offsets: &[i32],
    weights: &[f64],
    scale: f64,
) {
    let [nx, ny, nz] = n;
    for idx in 0..nx * ny * nz {
        let (ox, oy, oz) = (idx % nx, (idx / nx) % ny, idx / (nx * ny));
        let mut acc = 0.0;
        for (row, &off) in rows.chunks(4).zip(offsets) {
            let (dy, dz, dx0, len) = (row[0] as i64, row[1] as i64, row[2] as i64, row[3] as i64);
            let sz = wrap(oz - dz, nz, periodic);
            let sy = wrap(oy - dy, ny, periodic);
            if sz < 0 || sy < 0 {
                continue;
            }
            let src = &q[(nx * (sy + ny * sz)) as usize..];
            let w = &weights[off as usize..];
            let first = ox - dx0;
            if periodic {
                let mut sx = wrap(first, nx, true);
                for t in 0..len {
                    acc += (w[t as usize] * scale) * src[sx as usize];
                    sx = if sx == 0 { nx - 1 } else { sx - 1 };
                }
            } else {
                let t0 = 0.max(first - (nx - 1));
                let t1 = (len - 1).min(first);
                for t in t0..=t1 {
                    acc += (w[t as usize] * scale) * src[(first - t) as usize];
                }
            }
        }
        e[idx as usize] = acc;
    }
}

fn top(q: &[f64], e: &mut [f64], d: [i64; 3], periodic: bool, table: &[f64]) {
    let [nx, ny, nz] = d;
    let n = nx * ny * nz;
    for idx in 0..n {
        let (i, j, k) = (idx % nx, (idx / nx) % ny, idx / (nx * ny));
        let mut acc = 0.0;
        for s in 0..n {
            let v = q[s as usize];
            if v == 0.0 {
                continue;
            }
            let (si, sj, sk) = (s % nx, (s / nx) % ny, s / (nx * ny));
            let t = if periodic {
                let (a, b, c) = ((i + nx - si) % nx, (j + ny - sj) % ny, (k + nz - sk) % nz);
                a + nx * (b + ny * c)
            } else {
                let (kx, ky) = (2 * nx - 1, 2 * ny - 1);
                let (a, b, c) = (i + nx - 1 - si, j + ny - 1 - sj, k + nz - 1 - sk);
                a + kx * (b + ky * c)
            };
            acc += v * table[t as usize];
        }
        e[idx as usize] = acc;
    }
}

fn dims(d: [usize; 3]) -> [i64; 3] {
    d.map(|x| x as i64)
}

/// The kernels' twins as [`LevelKernels`].
struct HostTwins<'a> {
    g: &'a LevelGeometry,
    charges: &'a PointCharges,
    stencil: StencilTable,
}

impl LevelKernels for HostTwins<'_> {
    type Buf = Vec<f64>;

    fn anterpolate(&mut self, q0: &mut Vec<f64>) -> Result<(), ComputeError> {
        let f = self.g.finest();
        let mut acc = vec![0u64; f.len()];
        let sum_abs: f64 = self.charges.charges_e.iter().map(|q| q.abs()).sum();
        let scale = fixed_scale(sum_abs);
        let atoms = kernel_atoms(self.g, self.charges);
        anterpolate(&mut acc, &atoms, f.lo, dims(f.dims), self.g.periodic, scale);
        for (q, a) in q0.iter_mut().zip(&acc) {
            *q = *a as i64 as f64 * (1.0 / scale);
        }
        Ok(())
    }

    fn axis_pass(&mut self, src: &Vec<f64>, dst: &mut Vec<f64>, p: &AxisPass) -> Result<(), ComputeError> {
        axis_pass(
            src,
            dims(p.src_dims),
            p.src_lo,
            dst,
            dims(p.dst_dims),
            p.dst_lo,
            p.axis,
            self.g.periodic,
            p.restrict,
            p.accumulate,
        );
        Ok(())
    }

    fn top(&mut self, q: &Vec<f64>, e: &mut Vec<f64>) -> Result<(), ComputeError> {
        let table = match &self.g.top {
            TopLevel::Open { table } => table,
            TopLevel::Periodic { kernel } => kernel,
        };
        let d = self.g.layouts.last().map_or([0; 3], |l| l.dims);
        top(q, e, dims(d), self.g.periodic, table);
        Ok(())
    }

    fn cutoff(&mut self, level: usize, q: &Vec<f64>, e: &mut Vec<f64>) -> Result<(), ComputeError> {
        let st = &self.stencil;
        let scale = 1.0 / (1u64 << level) as f64;
        let d = dims(self.g.layouts[level].dims);
        cutoff(q, e, d, self.g.periodic, &st.rows, &st.offsets, &st.weights, scale);
        Ok(())
    }
}

/// [`CudaEngine::run_msm_levels`] with the kernels' twins: the same schedule runner and buffers.
fn replay(g: &LevelGeometry, charges: &PointCharges) -> HostLevels {
    let n_levels = g.layouts.len();
    let mut bufs: Vec<Vec<f64>> = buffer_lens(g, &schedule(g))
        .into_iter()
        .map(|n| vec![f64::NAN; n])
        .collect();
    let mut twins = HostTwins {
        g,
        charges,
        stencil: stencil_table(g).unwrap(),
    };
    run_schedule(g, &mut twins, &mut bufs).unwrap();
    let mut it = bufs.into_iter();
    let charges: Vec<Vec<f64>> = it.by_ref().take(n_levels).collect();
    let potentials: Vec<Vec<f64>> = it.take(n_levels).collect();
    HostLevels { charges, potentials }
}

fn lcg(seed: &mut u64) -> f64 {
    *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    (*seed >> 11) as f64 / (1u64 << 53) as f64
}

fn random_charges(seed: u64, n: usize, ext: [f64; 3]) -> PointCharges {
    let mut s = seed | 1;
    let mut q = PointCharges::default();
    for _ in 0..n {
        q.positions_bohr.push(std::array::from_fn(|k| lcg(&mut s) * ext[k]));
        q.charges_e.push(lcg(&mut s) - 0.5);
    }
    q
}

fn assert_levels_match(label: &str, got: &HostLevels, want: &HostLevels) {
    assert_eq!(got.charges.len(), want.charges.len(), "{label}: level count");
    for (what, g, w) in [
        ("charges", &got.charges, &want.charges),
        ("potential", &got.potentials, &want.potentials),
    ] {
        for (l, (a, b)) in g.iter().zip(w).enumerate() {
            assert_eq!(a.len(), b.len(), "{label}: {what} of level {l}");
            let scale = b.iter().fold(0.0f64, |m, v| m.max(v.abs())).max(1e-300);
            let worst = a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0f64, f64::max);
            assert!(
                a.iter().all(|v| v.is_finite()),
                "{label}: {what} of level {l} not all written"
            );
            assert!(
                worst <= 1e-11 * scale,
                "{label}: {what} of level {l} differs by {worst:.2e} (max {scale:.2e})"
            );
        }
    }
}

fn seed() -> u64 {
    let s = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64);
    println!("seed {s}");
    s
}

/// The kernels' twins, replaying the launch schedule, reproduce every level of the host cascade:
/// open lattices with several levels and with the top level alone, orthorhombic and triclinic
/// cells.
#[test]
fn kernel_twins_reproduce_every_host_level() {
    let s = seed();
    let q = random_charges(s, 700, [30.0, 26.0, 34.0]);
    let lattice = Lattice::axis_aligned([-3.0, -2.5, -1.0], 1.3, [25, 21, 28]);
    let (a, h) = (5.0, 2.2);
    let open = LevelGeometry::open(&q, &lattice, a, h).unwrap();
    assert!(open.layouts.len() >= 3, "{:?}", open.layouts);
    let single = LevelGeometry::open(&q, &Lattice::axis_aligned([0.0; 3], 1.0, [2, 2, 2]), 9.0, 9.0).unwrap();
    assert_eq!(single.layouts.len(), 1);
    let bohr = crate::model::units::bohr_from_angstrom(1.0);
    let cells = [
        UnitCell::orthorhombic([16.0, 14.0, 18.0]),
        UnitCell::new([17.0, 15.0, 19.0], [80.0, 100.0, 75.0]),
    ];
    let mut cases = vec![("open", open), ("open, top only", single)];
    for (name, cell) in ["orthorhombic", "triclinic"].into_iter().zip(cells) {
        let m = cell.matrix_angstrom().map(|r| r.map(|x| x * bohr));
        let g = LevelGeometry::periodic(&m, a, 1.1).unwrap();
        assert!(g.layouts.len() >= 2, "{name}: {:?}", g.layouts);
        cases.push((name, g));
    }
    for (name, g) in &cases {
        let want = g.host_levels(&q);
        let got = replay(g, &q);
        assert_levels_match(name, &got, &want);
        // The finest potential is the one the CPU engine interpolates.
        let lr = g.long_range(&q);
        assert_eq!(lr.potential, want.potentials[0], "{name}");
    }
    // The stencil table holds every stencil weight once.
    let st = cutoff_stencil(&cases[0].1.vectors_bohr, a).unwrap();
    let StencilTable { offsets, weights, .. } = stencil_table(&cases[0].1).unwrap();
    assert_eq!(offsets.len(), st.rows.len());
    assert_eq!(weights.len(), st.rows.iter().map(|r| r.weights.len()).sum::<usize>());
}

/// The fixed-point scale leaves room for the largest possible sum and keeps ~61 bits of it.
#[test]
fn fixed_scale_bounds_the_sums() {
    for sum in [1e-9, 0.3, 1.0, 7.5, 1.2e6, 3e15] {
        let s = fixed_scale(sum);
        assert!(sum * s <= 2f64.powi(61) && sum * s > 2f64.powi(59), "{sum}: {s}");
        assert_eq!(s.log2().fract(), 0.0);
    }
    assert_eq!(fixed_scale(0.0), 1.0);
}
