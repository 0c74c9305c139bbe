//! Implicit ligand sampling, the host side every engine shares: the setup of a computation
//! ([`IlsSetup`]), the atoms of one frame placed for it ([`place_atoms`]: periodic images within
//! reach, the fit onto the reference applied, everything outside the map's reach dropped) and the
//! exclusion radius that lets engines skip sample points deep inside the protein.
//!
//! The definitions (taken by every engine and test): the probe's energy at a sample point and
//! orientation is U = sum over probe atoms j and system atoms i with r_ij < cutoff of
//! eps_ij [(R_ij/r)^12 - 2 (R_ij/r)^6] (hard cutoff, no switching, no electrostatics); the point's
//! occupancy is the mean over orientations of exp(-U/kT); a voxel's value is the mean over its sample
//! points. A sample point is excluded (occupancy 0) when some atom sits so close to it that, whatever
//! the orientation, one probe atom feels at least `max_energy + 30` kT of repulsion from that atom
//! alone ([`EXCLUSION_MARGIN_KT`]): with any attraction of the rest under 30 kT such a point lies
//! above the map's cap, so exclusion never changes a voxel below the cap by more than exp(-30) of
//! itself (the CPU engine's rule). The CUDA engine excludes by a proven bound instead: per atom and
//! probe atom the smallest pair energy over every distance the probe atom can take from that atom
//! (the hard cutoff included), summed over the atoms, where for a probe of two atoms on a line
//! through its centre (O2, CO, NO) the two terms of an atom near the point are bounded together over
//! the axis's direction (both probe atoms cannot be at their closest at once); a point whose bound
//! exceeds the cap plus [`BOUND_MARGIN_KT`] has exp(-U/kT) < exp(-cap - margin) in every
//! orientation, so leaving it out changes a voxel's mean occupancy by less than that, below
//! exp(-margin) of any voxel under the cap.
//! The float64 reference ([`super::cpu::ils::reference_voxel_means`]) excludes nothing.
//!
//! Called by the CPU engine (`compute::cpu::ils`), the CUDA engine (`compute::cuda::ils`), the jobs
//! front end (`jobs::ils`) and the `grid ils` command.

use crate::model::UnitCell;
use crate::model::ils::{IlsMap, Orientations, Rigid};
use crate::model::lj::kt_kcal_per_mol;
use crate::model::lj::{LjParams, Probe};

/// Exclusion threshold above the cap, kT (see the module docs).
pub const EXCLUSION_MARGIN_KT: f64 = 30.0;
/// Margin above the cap of the CUDA engine's exclusion bound, kT (see the module docs): it also
/// covers the float32 rounding of the bound (about 1e-4 of it).
pub const BOUND_MARGIN_KT: f64 = 10.0;
/// Most atoms (images included) one frame may place (a tiny box under a large map).
pub const MAX_PLACED_ATOMS: usize = 200_000_000;

/// Why an ILS computation cannot run.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum IlsError {
    #[error("the map is empty (dims {0:?})")]
    EmptyMap([usize; 3]),
    #[error("the map spacing must be positive and finite, not {0} A")]
    BadSpacing(f64),
    #[error("--subres must be between 1 and 8, not {0}")]
    BadSubres(usize),
    #[error("--cutoff must be positive and finite, not {0} A")]
    BadCutoff(f64),
    #[error("--temperature must be positive, not {0} K")]
    BadTemperature(f64),
    #[error("--max-energy must be positive, not {0} kT")]
    BadMaxEnergy(f64),
    #[error("atom {index}: Lennard-Jones parameters eps {eps} kcal/mol, rmin/2 {rmin_half} A are not usable")]
    BadParams { index: usize, eps: f64, rmin_half: f64 },
    #[error("the frame has {found} selected atoms, the setup {expected}")]
    AtomCount { expected: usize, found: usize },
    #[error(
        "the frame's periodic images under the map number over {MAX_PLACED_ATOMS} atoms (box too small for the map)"
    )]
    TooManyImages,
    #[error("{0}")]
    Device(String),
}

/// What a computation shares over its frames.
#[derive(Clone, Debug)]
pub struct IlsSetup {
    pub map: IlsMap,
    /// Sample points per voxel edge.
    pub subres: usize,
    pub cutoff_angstrom: f64,
    pub max_energy_kt: f64,
    pub temperature_kelvin: f64,
    pub probe: Probe,
    pub orientations: Orientations,
    /// Parameters of the system atoms taking part (in the order of the frame's positions).
    pub atom_lj: Vec<LjParams>,
}

impl IlsSetup {
    /// Checks the numbers of a setup.
    pub fn check(&self) -> Result<(), IlsError> {
        if self.map.n_voxels() == 0 {
            return Err(IlsError::EmptyMap(self.map.dims));
        }
        let h = self.map.spacing_angstrom;
        if !(h.is_finite() && h > 0.0) {
            return Err(IlsError::BadSpacing(h));
        }
        if !(1..=8).contains(&self.subres) {
            return Err(IlsError::BadSubres(self.subres));
        }
        if !(self.cutoff_angstrom.is_finite() && self.cutoff_angstrom > 0.0) {
            return Err(IlsError::BadCutoff(self.cutoff_angstrom));
        }
        if !(self.temperature_kelvin.is_finite() && self.temperature_kelvin > 0.0) {
            return Err(IlsError::BadTemperature(self.temperature_kelvin));
        }
        if !(self.max_energy_kt.is_finite() && self.max_energy_kt > 0.0) {
            return Err(IlsError::BadMaxEnergy(self.max_energy_kt));
        }
        let o = &self.orientations;
        if o.classes != 1 && o.classes != self.subres.pow(3) {
            return Err(IlsError::Device(format!(
                "orientations for {} sample classes, the map has {} (subres {})",
                o.classes,
                self.subres.pow(3),
                self.subres
            )));
        }
        for (index, p) in self.atom_lj.iter().enumerate() {
            if !p.is_valid() {
                return Err(IlsError::BadParams {
                    index,
                    eps: p.eps_kcal_per_mol,
                    rmin_half: p.rmin_half_angstrom,
                });
            }
        }
        Ok(())
    }

    /// kT in kcal/mol.
    pub fn kt_kcal_per_mol(&self) -> f64 {
        kt_kcal_per_mol(self.temperature_kelvin)
    }

    /// How far from a sample point atoms can matter: the cutoff plus the probe's radius, Angstrom.
    pub fn reach_angstrom(&self) -> f64 {
        self.cutoff_angstrom + self.probe.radius_angstrom()
    }

    /// The distance from a sample point within which atom parameters `lj` exclude it (see the
    /// module docs); 0 where it never does.
    pub fn exclusion_radius_angstrom(&self, lj: LjParams) -> f64 {
        let kt = self.kt_kcal_per_mol();
        let threshold_kt = self.max_energy_kt + EXCLUSION_MARGIN_KT;
        let mut best: f64 = 0.0;
        for a in &self.probe.atoms {
            let eps_kt = (lj.eps_kcal_per_mol * a.lj.eps_kcal_per_mol).sqrt() / kt;
            let r = lj.rmin_half_angstrom + a.lj.rmin_half_angstrom;
            if eps_kt <= 0.0 || r <= 0.0 {
                continue;
            }
            // eps (u^2 - 2u) = threshold with u = (R/r)^6.
            let u = 1.0 + (1.0 + threshold_kt / eps_kt).sqrt();
            let r_excl = (r / u.powf(1.0 / 6.0)).min(self.cutoff_angstrom);
            let offset = crate::model::lj::norm(a.offset_angstrom);
            best = best.max(r_excl - offset);
        }
        // A little below the exact radius, so that rounding never excludes a point the sum would keep.
        (best * (1.0 - 1e-6)).max(0.0)
    }
}

/// One frame's atoms as a computation uses them: positions in the map's (reference) frame, images
/// included, each with the index of its parameters in [`IlsSetup::atom_lj`].
#[derive(Clone, Debug, Default)]
pub struct PlacedAtoms {
    pub positions_angstrom: Vec<[f64; 3]>,
    pub params: Vec<u32>,
}

/// The atoms of one frame within reach of the map: `positions_angstrom` (the selected atoms, in the
/// frame's own coordinates), each periodic image under `cell` (all of them within reach, triclinic
/// boxes too), moved by `fit` onto the reference frame when given.
pub fn place_atoms(
    setup: &IlsSetup,
    positions_angstrom: &[[f64; 3]],
    cell: Option<&UnitCell>,
    fit: Option<&Rigid>,
) -> Result<PlacedAtoms, IlsError> {
    if positions_angstrom.len() != setup.atom_lj.len() {
        return Err(IlsError::AtomCount {
            expected: setup.atom_lj.len(),
            found: positions_angstrom.len(),
        });
    }
    let reach = setup.reach_angstrom();
    let (mut lo, mut hi) = setup.map.sample_bounds_angstrom();
    for k in 0..3 {
        lo[k] -= reach;
        hi[k] += reach;
    }
    let inside = |p: [f64; 3], lo: &[f64; 3], hi: &[f64; 3]| (0..3).all(|k| p[k] >= lo[k] && p[k] <= hi[k]);
    // The region in the frame's own coordinates (a box holding the reference region moved back).
    let corners: Vec<[f64; 3]> = (0..8)
        .map(|c| [0, 1, 2].map(|k| if c >> k & 1 == 1 { hi[k] } else { lo[k] }))
        .map(|p| fit.map_or(p, |f| f.inverse().apply(p)))
        .collect();
    let mut flo = [f64::INFINITY; 3];
    let mut fhi = [f64::NEG_INFINITY; 3];
    for c in &corners {
        for k in 0..3 {
            flo[k] = flo[k].min(c[k]);
            fhi[k] = fhi[k].max(c[k]);
        }
    }
    let mut out = PlacedAtoms::default();
    let keep = |p: [f64; 3], i: usize, out: &mut PlacedAtoms| {
        let q = fit.map_or(p, |f| f.apply(p));
        if inside(q, &lo, &hi) {
            out.positions_angstrom.push(q);
            out.params.push(i as u32);
        }
    };
    let lattice = cell.filter(|c| c.is_valid()).map(|c| c.matrix_angstrom());
    let Some(m) = lattice else {
        for (i, &p) in positions_angstrom.iter().enumerate() {
            if inside(p, &flo, &fhi) {
                keep(p, i, &mut out);
            }
        }
        return Ok(out);
    };
    // Fractional coordinates: x = f0 a + f1 b + f2 c.
    let Some(inv) = inverse_columns(m) else {
        return Err(IlsError::Device("the periodic box is degenerate".into()));
    };
    let frac = |p: [f64; 3]| [0, 1, 2].map(|k| inv[k][0] * p[0] + inv[k][1] * p[1] + inv[k][2] * p[2]);
    let mut fmin = [f64::INFINITY; 3];
    let mut fmax = [f64::NEG_INFINITY; 3];
    for c in 0..8 {
        let p = [0, 1, 2].map(|k| if c >> k & 1 == 1 { fhi[k] } else { flo[k] });
        let f = frac(p);
        for k in 0..3 {
            fmin[k] = fmin[k].min(f[k]);
            fmax[k] = fmax[k].max(f[k]);
        }
    }
    for (i, &p) in positions_angstrom.iter().enumerate() {
        let f = frac(p);
        let range = |k: usize| ((fmin[k] - f[k]).ceil() as i64, (fmax[k] - f[k]).floor() as i64);
        let (a0, a1) = range(0);
        let (b0, b1) = range(1);
        let (c0, c1) = range(2);
        for na in a0..=a1 {
            for nb in b0..=b1 {
                for nc in c0..=c1 {
                    let (x, y, z) = (na as f64, nb as f64, nc as f64);
                    let q = [0, 1, 2].map(|k| p[k] + x * m[0][k] + y * m[1][k] + z * m[2][k]);
                    if inside(q, &flo, &fhi) {
                        keep(q, i, &mut out);
                        if out.params.len() > MAX_PLACED_ATOMS {
                            return Err(IlsError::TooManyImages);
                        }
                    }
                }
            }
        }
    }
    Ok(out)
}

/// The inverse of the matrix whose columns are the rows of `m` (box vectors a, b, c).
fn inverse_columns(m: [[f64; 3]; 3]) -> Option<[[f64; 3]; 3]> {
    // A[r][c] = m[c][r].
    let a = [0, 1, 2].map(|r| [0, 1, 2].map(|c| m[c][r]));
    let det = a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) - a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0])
        + a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]);
    if !det.is_finite() || det.abs() < 1e-12 {
        return None;
    }
    let inv_det = 1.0 / det;
    let c = |r0: usize, c0: usize, r1: usize, c1: usize| a[r0][c0] * a[r1][c1] - a[r0][c1] * a[r1][c0];
    Some([
        [
            c(1, 1, 2, 2) * inv_det,
            -c(0, 1, 2, 2) * inv_det,
            c(0, 1, 1, 2) * inv_det,
        ],
        [
            -c(1, 0, 2, 2) * inv_det,
            c(0, 0, 2, 2) * inv_det,
            -c(0, 0, 1, 2) * inv_det,
        ],
        [
            c(1, 0, 2, 1) * inv_det,
            -c(0, 0, 2, 1) * inv_det,
            c(0, 0, 1, 1) * inv_det,
        ],
    ])
}

/// Atoms sorted into cubic bins over a box: the CPU engine's neighbour search and the CUDA
/// engine's upload.
#[derive(Clone, Debug, Default)]
pub struct Bins {
    pub lo_angstrom: [f64; 3],
    pub bin_angstrom: f64,
    pub dims: [usize; 3],
    /// `starts[b]..starts[b + 1]` are bin b's entries in `order` (bins x fastest).
    pub starts: Vec<u32>,
    /// Atom indices (into the placed atoms) in bin order.
    pub order: Vec<u32>,
}

impl Bins {
    /// Bins of `bin_angstrom` over the box [lo, hi] holding `positions` (positions outside are
    /// clamped into the edge bins).
    pub fn new(positions: &[[f64; 3]], lo: [f64; 3], hi: [f64; 3], bin_angstrom: f64) -> Bins {
        let dims = [0, 1, 2].map(|k| (((hi[k] - lo[k]) / bin_angstrom).ceil().max(1.0) as usize).min(4096));
        let n_bins = dims[0] * dims[1] * dims[2];
        let mut counts = vec![0u32; n_bins + 1];
        let bin_of = |p: &[f64; 3]| {
            let c = [0, 1, 2].map(|k| (((p[k] - lo[k]) / bin_angstrom).floor().max(0.0) as usize).min(dims[k] - 1));
            c[0] + dims[0] * (c[1] + dims[1] * c[2])
        };
        let ids: Vec<usize> = positions.iter().map(bin_of).collect();
        for &b in &ids {
            counts[b + 1] += 1;
        }
        for b in 0..n_bins {
            counts[b + 1] += counts[b];
        }
        let mut fill = counts.clone();
        let mut order = vec![0u32; positions.len()];
        for (i, &b) in ids.iter().enumerate() {
            let slot = fill[b] as usize;
            if let Some(o) = order.get_mut(slot) {
                *o = i as u32;
            }
            fill[b] += 1;
        }
        Bins {
            lo_angstrom: lo,
            bin_angstrom,
            dims,
            starts: counts,
            order,
        }
    }

    /// The bin coordinate range (inclusive) overlapping [p - r, p + r] on axis k.
    pub fn range(&self, k: usize, lo: f64, hi: f64) -> (usize, usize) {
        let a = ((lo - self.lo_angstrom[k]) / self.bin_angstrom).floor();
        let b = ((hi - self.lo_angstrom[k]) / self.bin_angstrom).floor();
        let top = self.dims[k] as f64 - 1.0;
        (a.clamp(0.0, top) as usize, b.clamp(0.0, top) as usize)
    }
}

/// `sel` without the massless sites of four- and five-site water models (TIP4P's MW, TIP5P's lone
/// pairs: atoms of no element in a water residue), which carry no van der Waals parameters in any
/// force field and which the probe does not feel; and how many were left out. The viewer's and the
/// command line's maps both take their atoms through it.
pub fn without_water_sites(structure: &crate::model::Structure, sel: Vec<u32>) -> (Vec<u32>, usize) {
    let is_site = |i: u32| {
        let i = i as usize;
        structure.elements.get(i).is_some_and(|e| e.number() == 0)
            && structure
                .resnames
                .get(i)
                .is_some_and(|r| crate::model::element::is_water_resname(r.as_str().as_bytes()))
    };
    let before = sel.len();
    let kept: Vec<u32> = sel.into_iter().filter(|&i| !is_site(i)).collect();
    let left_out = before - kept.len();
    (kept, left_out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ils::{IlsMap, Orientations};

    fn setup(n: usize) -> IlsSetup {
        let probe = Probe::builtin("xe").unwrap();
        IlsSetup {
            map: IlsMap {
                origin_angstrom: [0.0; 3],
                spacing_angstrom: 1.0,
                dims: [2, 2, 2],
            },
            subres: 1,
            cutoff_angstrom: 8.0,
            max_energy_kt: 87.0,
            temperature_kelvin: 300.0,
            orientations: Orientations::new(&probe, 1, 1),
            probe,
            atom_lj: vec![LjParams::new(0.1, 1.9); n],
        }
    }

    #[test]
    fn images_of_a_triclinic_box_are_all_found() {
        let s = setup(1);
        let cell = UnitCell::new([7.0, 7.0, 7.0], [109.47, 109.47, 109.47]);
        let placed = place_atoms(&s, &[[0.5, 0.5, 0.5]], Some(&cell), None).unwrap();
        // Brute force over a wide range of shifts.
        let m = cell.matrix_angstrom();
        let reach = s.reach_angstrom();
        let mut n = 0;
        for a in -6i32..=6 {
            for b in -6i32..=6 {
                for c in -6i32..=6 {
                    let q = [0, 1, 2].map(|k| 0.5 + a as f64 * m[0][k] + b as f64 * m[1][k] + c as f64 * m[2][k]);
                    if (0..3).all(|k| q[k] >= -0.5 - reach && q[k] <= 1.5 + reach) {
                        n += 1;
                    }
                }
            }
        }
        assert_eq!(placed.positions_angstrom.len(), n);
        assert!(n > 1);
    }
}
