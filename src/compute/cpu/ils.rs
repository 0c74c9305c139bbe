//! Implicit ligand sampling on the CPU: the float64 reference and the CPU engine.
//!
//! [`reference_voxel_means`] is the definition written out (every sample point, orientation, probe
//! atom and placed atom; float64; no exclusion, no binning): what the tests hold every engine to.
//! [`voxel_means`] is the CPU engine: the same sums in float64 over atoms binned in cubes, per voxel
//! only the atoms within reach of it, sample points excluded as `compute::ils` defines, voxel rows
//! spread over threads with rayon. Both return one frame's voxel means of the occupancy (x fastest),
//! which the caller adds to `model::ils::OccupancySums`. Called by `jobs::ils` (the CPU worker and the
//! retry path of a failed device frame), the `grid ils` command and the tests.

use crate::compute::ils::{Bins, IlsSetup, PlacedAtoms};
use rayon::prelude::*;

/// Pair constants of one atom with each probe atom: eps_ij / kT and R_ij^2.
fn pair_constants(setup: &IlsSetup, atom: usize) -> Vec<(f64, f64)> {
    let kt = setup.kt_kcal_per_mol();
    let a = setup.atom_lj.get(atom).copied().unwrap_or_default();
    setup
        .probe
        .atoms
        .iter()
        .map(|p| {
            let e = (a.eps_kcal_per_mol * p.lj.eps_kcal_per_mol).sqrt() / kt;
            let r = a.rmin_half_angstrom + p.lj.rmin_half_angstrom;
            (e, r * r)
        })
        .collect()
}

/// One pair's energy in kT (0 without dispersion; +infinity at distance 0).
#[inline]
fn pair_kt(e: f64, r2min: f64, r2: f64) -> f64 {
    if e == 0.0 {
        return 0.0;
    }
    let s2 = r2min / r2;
    let s6 = s2 * s2 * s2;
    e * s6 * (s6 - 2.0)
}

/// The float64 reference: one frame's voxel means of the occupancy, from the definition.
pub fn reference_voxel_means(setup: &IlsSetup, atoms: &PlacedAtoms) -> Vec<f64> {
    let map = setup.map;
    let offsets = map.sample_offsets_angstrom(setup.subres);
    let c2 = setup.cutoff_angstrom * setup.cutoff_angstrom;
    let consts: Vec<Vec<(f64, f64)>> = (0..setup.atom_lj.len()).map(|i| pair_constants(setup, i)).collect();
    let o = &setup.orientations;
    let p = o.atoms_per_orientation.max(1);
    let n_orient = o.evaluated();
    let [nx, ny, _] = map.dims;
    (0..map.n_voxels())
        .into_par_iter()
        .map(|v| {
            let (i, j, k) = (v % nx, (v / nx) % ny, v / (nx * ny));
            let c = map.centre_angstrom(i, j, k);
            let mut total = 0.0;
            for (cz, &dz) in offsets.iter().enumerate() {
                for (cy, &dy) in offsets.iter().enumerate() {
                    for (cx, &dx) in offsets.iter().enumerate() {
                        let x = [c[0] + dx, c[1] + dy, c[2] + dz];
                        let class = o.class_of(cx, cy, cz, setup.subres);
                        let mut rho = 0.0;
                        for or in 0..n_orient {
                            let mut u = 0.0;
                            for jp in 0..p {
                                let off = o.offset(class, or, jp);
                                let q = [x[0] + off[0], x[1] + off[1], x[2] + off[2]];
                                for (a, &ai) in atoms.positions_angstrom.iter().zip(&atoms.params) {
                                    let d = [a[0] - q[0], a[1] - q[1], a[2] - q[2]];
                                    let r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
                                    if r2 < c2
                                        && let Some(&(e, r2min)) = consts.get(ai as usize).and_then(|cs| cs.get(jp))
                                    {
                                        u += pair_kt(e, r2min, r2);
                                    }
                                }
                            }
                            rho += (-u).exp();
                        }
                        total += rho / n_orient as f64;
                    }
                }
            }
            total / offsets.len().pow(3) as f64
        })
        .collect()
}

/// A neighbour of one voxel: position relative to the voxel centre, squared exclusion radius, and
/// pair constants per probe atom.
struct Near {
    d: [f64; 3],
    excl2: f64,
    first_const: usize,
}

/// The CPU engine: one frame's voxel means of the occupancy (see the module docs).
pub fn voxel_means(setup: &IlsSetup, atoms: &PlacedAtoms) -> Vec<f64> {
    voxel_means_counting(setup, atoms, &|| {}, &|| false)
}

/// [`voxel_means`], calling `row_done` after each row of voxels (along x) is finished, from the
/// threads computing them: a frame has `ny * nz` rows (the viewer's progress within a frame).
/// Rows not yet begun once `stop` says so are left at zero: the frame is then incomplete, for a
/// caller that was cancelled and drops it (the viewer's Cancel frees the threads within a row).
pub fn voxel_means_counting(
    setup: &IlsSetup,
    atoms: &PlacedAtoms,
    row_done: &(dyn Fn() + Sync),
    stop: &(dyn Fn() -> bool + Sync),
) -> Vec<f64> {
    let map = setup.map;
    let offsets = map.sample_offsets_angstrom(setup.subres);
    let c2 = setup.cutoff_angstrom * setup.cutoff_angstrom;
    let n_types = setup.atom_lj.len();
    let consts: Vec<Vec<(f64, f64)>> = (0..n_types).map(|i| pair_constants(setup, i)).collect();
    let excl2: Vec<f64> = setup
        .atom_lj
        .iter()
        .map(|&lj| setup.exclusion_radius_angstrom(lj).powi(2))
        .collect();
    let o = &setup.orientations;
    let p = o.atoms_per_orientation.max(1);
    let n_orient = o.evaluated();
    let h = map.spacing_angstrom;
    // Atoms matter to a voxel within reach of one of its sample points.
    let reach = setup.reach_angstrom() + 0.5 * 3f64.sqrt() * h;
    let (mut lo, mut hi) = map.sample_bounds_angstrom();
    for k in 0..3 {
        lo[k] -= setup.reach_angstrom();
        hi[k] += setup.reach_angstrom();
    }
    let bins = Bins::new(&atoms.positions_angstrom, lo, hi, 4.0);
    let [nx, ny, nz] = map.dims;
    let mut out = vec![0.0; map.n_voxels()];
    out.par_chunks_mut(nx).enumerate().for_each(|(row, values)| {
        let (j, k) = (row % ny, row / ny);
        if k >= nz || stop() {
            return;
        }
        let mut near: Vec<Near> = Vec::new();
        let mut near_consts: Vec<(f64, f64)> = Vec::new();
        for (i, value) in values.iter_mut().enumerate() {
            let c = map.centre_angstrom(i, j, k);
            near.clear();
            near_consts.clear();
            let (x0, x1) = bins.range(0, c[0] - reach, c[0] + reach);
            let (y0, y1) = bins.range(1, c[1] - reach, c[1] + reach);
            let (z0, z1) = bins.range(2, c[2] - reach, c[2] + reach);
            for bz in z0..=z1 {
                for by in y0..=y1 {
                    for bx in x0..=x1 {
                        let b = bx + bins.dims[0] * (by + bins.dims[1] * bz);
                        let (s, e) = (
                            bins.starts.get(b).copied().unwrap_or(0) as usize,
                            bins.starts.get(b + 1).copied().unwrap_or(0) as usize,
                        );
                        for &a in bins.order.get(s..e).unwrap_or(&[]) {
                            let (Some(pos), Some(&ti)) =
                                (atoms.positions_angstrom.get(a as usize), atoms.params.get(a as usize))
                            else {
                                continue;
                            };
                            let d = [pos[0] - c[0], pos[1] - c[1], pos[2] - c[2]];
                            if d[0] * d[0] + d[1] * d[1] + d[2] * d[2] > reach * reach {
                                continue;
                            }
                            near.push(Near {
                                d,
                                excl2: excl2.get(ti as usize).copied().unwrap_or(0.0),
                                first_const: near_consts.len(),
                            });
                            near_consts.extend(consts.get(ti as usize).map_or(&[][..], |v| &v[..]));
                        }
                    }
                }
            }
            let mut total = 0.0;
            for (cz, &dz) in offsets.iter().enumerate() {
                for (cy, &dy) in offsets.iter().enumerate() {
                    for (cx, &dx) in offsets.iter().enumerate() {
                        let class = o.class_of(cx, cy, cz, setup.subres);
                        let excluded = near.iter().any(|n| {
                            let (a, b, cc) = (n.d[0] - dx, n.d[1] - dy, n.d[2] - dz);
                            a * a + b * b + cc * cc < n.excl2
                        });
                        if excluded {
                            continue;
                        }
                        let mut rho = 0.0;
                        for or in 0..n_orient {
                            let mut u = 0.0;
                            for jp in 0..p {
                                let off = o.offset(class, or, jp);
                                let q = [dx + off[0], dy + off[1], dz + off[2]];
                                for n in &near {
                                    let (a, b, cc) = (n.d[0] - q[0], n.d[1] - q[1], n.d[2] - q[2]);
                                    let r2 = a * a + b * b + cc * cc;
                                    if r2 < c2
                                        && let Some(&(e, r2min)) = near_consts.get(n.first_const + jp)
                                    {
                                        u += pair_kt(e, r2min, r2);
                                    }
                                }
                            }
                            rho += (-u).exp();
                        }
                        total += rho / n_orient as f64;
                    }
                }
            }
            *value = total / offsets.len().pow(3) as f64;
        }
        row_done();
    });
    out
}
