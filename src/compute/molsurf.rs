//! The molecular-surface density: one Gaussian per atom (VMD QuickSurf's construction), scaled so
//! that an isolated atom's surface at the level [`MOLSURF_LEVEL`] (0.5) lies at its radius.
//!
//! Owns the atoms of a surface request ([`MolSurfAtoms`]: centres, radii, radius scale), the
//! per-atom Gaussian ([`AtomGaussian`]: width, amplitude, truncation radius) and the padding a
//! lattice needs around them. The CPU kernel ([`crate::compute::cpu::molsurf`]) sums the Gaussians
//! on lattice slabs; the CLI (`grid molsurf`, `render --surface molsurf`) and the viewer build the
//! input from a structure's radii ([`MolSurfAtoms::from_radii_angstrom`]).
//!
//! Atom `i` with radius `R` adds `0.5 * exp((R^2 - r^2) / (2 sigma^2))`, `sigma = s * R` with the radius
//! scale `s` ([`DEFAULT_RADIUS_SCALE`]): exactly 0.5 at `r = R`, so one atom's surface is the sphere
//! of its radius whatever `s`; a larger `s` makes wider Gaussians and a smoother, more filled-in
//! union (small crevices close), a smaller one approaches the union of spheres. Each Gaussian is cut
//! at the radius where it falls to [`TRUNCATION_DENSITY`] (1e-3, 0.2 % of the level), so the summed
//! field is continuous to within that per atom.

use crate::compute::ComputeError;
use crate::compute::ses::ExcludedSurface;
use crate::model::units::{angstrom_from_bohr, bohr_from_angstrom};
use crate::model::{Frame, Structure};
use std::sync::{Arc, OnceLock};

pub use crate::model::field::MOLSURF_LEVEL;

/// Default radius scale `s` (Gaussian width over radius).
pub const DEFAULT_RADIUS_SCALE: f64 = 0.6;
/// Each atom's Gaussian is dropped where it is below this density.
pub const TRUNCATION_DENSITY: f64 = 1e-3;
/// Radius scales accepted (below, Gaussians are so narrow that a lattice cannot resolve them;
/// above, the surface loses every feature).
pub const RADIUS_SCALE_RANGE: std::ops::RangeInclusive<f64> = 0.2..=3.0;

/// Which molecular surface: the atoms' summed Gaussians (VMD's QuickSurf) or the solvent-excluded
/// surface of a spherical probe (MSMS, PyMOL, ChimeraX; [`crate::compute::ses`]).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum SurfaceModel {
    /// Gaussians of width `radius_scale` times the atom's radius.
    Gaussian { radius_scale: f64 },
    /// The surface a probe of `probe_radius_angstrom` cannot pass.
    Excluded { probe_radius_angstrom: f64 },
}

impl Default for SurfaceModel {
    fn default() -> Self {
        SurfaceModel::Gaussian {
            radius_scale: DEFAULT_RADIUS_SCALE,
        }
    }
}

impl SurfaceModel {
    /// The solvent-excluded surface of a water probe (1.4 A).
    pub const EXCLUDED: SurfaceModel = SurfaceModel::Excluded {
        probe_radius_angstrom: crate::compute::ses::DEFAULT_PROBE_RADIUS_ANGSTROM,
    };

    /// The word commands take: `gaussian`, `ses` (a probe other than water's: `ses:1.2`, which only
    /// the command line computes).
    pub fn keyword(&self) -> String {
        match self {
            SurfaceModel::Gaussian { .. } => "gaussian".into(),
            SurfaceModel::Excluded { probe_radius_angstrom }
                if *probe_radius_angstrom == crate::compute::ses::DEFAULT_PROBE_RADIUS_ANGSTROM =>
            {
                "ses".into()
            }
            SurfaceModel::Excluded { probe_radius_angstrom } => format!("ses:{probe_radius_angstrom}"),
        }
    }

    /// The model a viewer command's word names: `gaussian` (`quicksurf`, `molsurf`) or `ses`
    /// (`excluded`), the water probe's; other probes are the command line's (`grid ses --probe`).
    pub fn from_keyword(word: &str) -> Result<SurfaceModel, String> {
        match word.trim().to_ascii_lowercase().as_str() {
            "gaussian" | "quicksurf" | "molsurf" => Ok(SurfaceModel::default()),
            "ses" | "excluded" => Ok(SurfaceModel::EXCLUDED),
            w if w.starts_with("ses:") => Err(format!(
                "{word}: the viewer's solvent-excluded surface takes a 1.4 Å probe; `orbitfield grid ses --probe R` \
                 computes another"
            )),
            _ => Err(format!("{word}: expected gaussian or ses")),
        }
    }

    /// Words for legends and file headers: `Gaussian surface, radius scale 0.6`,
    /// `solvent-excluded surface, probe 1.4 A`.
    pub fn describe(&self) -> String {
        match self {
            SurfaceModel::Gaussian { radius_scale } => format!("Gaussian surface, radius scale {radius_scale}"),
            SurfaceModel::Excluded { probe_radius_angstrom } => {
                format!("solvent-excluded surface, probe {probe_radius_angstrom} A")
            }
        }
    }
}

/// The atoms of one surface: centres in bohr, radii in bohr (atoms with a non-positive radius, such
/// as PQR hydrogens given radius 0, add nothing), the radius scale of the Gaussian surface, and the
/// probe radius when the surface asked for is the solvent-excluded one ([`crate::compute::ses`]).
#[derive(Clone, Debug, Default)]
pub struct MolSurfAtoms {
    pub centers_bohr: Vec<[f64; 3]>,
    pub radii_bohr: Vec<f64>,
    pub radius_scale: f64,
    /// `Some(p)`: the solvent-excluded surface of a probe of radius `p` (bohr), not the Gaussians.
    pub probe_radius_bohr: Option<f64>,
    /// The excluded surface's probe centres, found by the first engine that needs them.
    excluded: OnceLock<Arc<ExcludedSurface>>,
}

impl PartialEq for MolSurfAtoms {
    fn eq(&self, other: &Self) -> bool {
        self.centers_bohr == other.centers_bohr
            && self.radii_bohr == other.radii_bohr
            && self.radius_scale == other.radius_scale
            && self.probe_radius_bohr == other.probe_radius_bohr
    }
}

/// One atom's Gaussian `amplitude * exp(-exponent * r^2)`, zero beyond `cutoff` (all in bohr).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AtomGaussian {
    pub center_bohr: [f64; 3],
    /// `1 / (2 sigma^2)` in bohr^-2.
    pub exponent_per_bohr2: f64,
    pub amplitude: f64,
    pub cutoff_bohr: f64,
}

impl AtomGaussian {
    /// The Gaussian of an atom of radius `radius_bohr` (> 0) with radius scale `scale`.
    pub fn new(center_bohr: [f64; 3], radius_bohr: f64, scale: f64) -> AtomGaussian {
        let sigma2 = (scale * radius_bohr).powi(2);
        let level = f64::from(MOLSURF_LEVEL);
        let exponent = 0.5 / sigma2;
        // level * exp((R^2 - r^2) / (2 sigma^2)) = level * exp(1 / (2 s^2)) * exp(-r^2 / (2 sigma^2)).
        let amplitude = level * (0.5 / (scale * scale)).exp();
        let cutoff2 = radius_bohr * radius_bohr + 2.0 * sigma2 * (level / TRUNCATION_DENSITY).ln();
        AtomGaussian {
            center_bohr,
            exponent_per_bohr2: exponent,
            amplitude,
            cutoff_bohr: cutoff2.sqrt(),
        }
    }

    /// The value at squared distance `r2_bohr2` (zero beyond the cutoff).
    pub fn at(&self, r2_bohr2: f64) -> f64 {
        if r2_bohr2 > self.cutoff_bohr * self.cutoff_bohr {
            0.0
        } else {
            self.amplitude * (-self.exponent_per_bohr2 * r2_bohr2).exp()
        }
    }
}

impl MolSurfAtoms {
    /// Atoms at `positions_angstrom` with `radii_angstrom` (one each), checked: finite coordinates,
    /// finite radii, a radius scale in [`RADIUS_SCALE_RANGE`].
    pub fn from_radii_angstrom(
        positions_angstrom: &[[f64; 3]],
        radii_angstrom: &[f64],
        radius_scale: f64,
    ) -> Result<MolSurfAtoms, ComputeError> {
        if !RADIUS_SCALE_RANGE.contains(&radius_scale) {
            return Err(ComputeError::BadInput(format!(
                "radius scale {radius_scale} is outside {}..={}",
                RADIUS_SCALE_RANGE.start(),
                RADIUS_SCALE_RANGE.end()
            )));
        }
        if positions_angstrom.len() != radii_angstrom.len() {
            return Err(ComputeError::BadInput(format!(
                "{} atoms but {} radii",
                positions_angstrom.len(),
                radii_angstrom.len()
            )));
        }
        let mut atoms = MolSurfAtoms {
            centers_bohr: Vec::with_capacity(positions_angstrom.len()),
            radii_bohr: Vec::with_capacity(positions_angstrom.len()),
            radius_scale,
            ..MolSurfAtoms::default()
        };
        for (i, (p, &r)) in positions_angstrom.iter().zip(radii_angstrom).enumerate() {
            if !p.iter().all(|x| x.is_finite()) || !r.is_finite() {
                return Err(ComputeError::BadInput(format!(
                    "atom {} has a non-finite position or radius",
                    i + 1
                )));
            }
            atoms.centers_bohr.push(p.map(bohr_from_angstrom));
            atoms.radii_bohr.push(bohr_from_angstrom(r));
        }
        Ok(atoms)
    }

    /// The atoms of `structure` flagged in `selected` (all when `None`) at `frame`'s positions, with
    /// [`atom_radii_angstrom`].
    pub fn from_frame(
        structure: &Structure,
        frame: &Frame,
        selected: Option<&[bool]>,
        model: SurfaceModel,
    ) -> Result<MolSurfAtoms, ComputeError> {
        if frame.positions_angstrom.len() != structure.len() {
            return Err(ComputeError::BadInput(format!(
                "the structure has {} atoms but the frame has {}",
                structure.len(),
                frame.positions_angstrom.len()
            )));
        }
        let radii = atom_radii_angstrom(structure);
        let keep = |i: usize| selected.is_none_or(|s| s.get(i).copied().unwrap_or(false));
        let (positions, radii): (Vec<[f64; 3]>, Vec<f64>) = frame
            .positions_angstrom
            .iter()
            .zip(radii)
            .enumerate()
            .filter(|(i, _)| keep(*i))
            .map(|(_, (p, r))| (p.map(f64::from), r))
            .unzip();
        match model {
            SurfaceModel::Gaussian { radius_scale } => {
                MolSurfAtoms::from_radii_angstrom(&positions, &radii, radius_scale)
            }
            SurfaceModel::Excluded { probe_radius_angstrom } => {
                MolSurfAtoms::from_radii_angstrom(&positions, &radii, DEFAULT_RADIUS_SCALE)?
                    .excluded(probe_radius_angstrom)
            }
        }
    }

    /// The same atoms' solvent-excluded surface with a probe of `probe_angstrom` (checked against
    /// [`crate::compute::ses::PROBE_RADIUS_RANGE_ANGSTROM`]).
    pub fn excluded(mut self, probe_angstrom: f64) -> Result<MolSurfAtoms, ComputeError> {
        let p = crate::compute::ses::probe_bohr_checked(probe_angstrom).map_err(ComputeError::BadInput)?;
        self.probe_radius_bohr = Some(p);
        self.excluded = OnceLock::new();
        Ok(self)
    }

    /// Whether these atoms ask for the solvent-excluded surface.
    pub fn is_excluded(&self) -> bool {
        self.probe_radius_bohr.is_some()
    }

    /// The solvent-excluded surface of these atoms (its probe centres found on the first call, then
    /// shared); `None` for the Gaussian surface.
    pub fn excluded_surface(&self) -> Option<Arc<ExcludedSurface>> {
        let p = self.probe_radius_bohr?;
        Some(Arc::clone(self.excluded.get_or_init(|| {
            Arc::new(ExcludedSurface::new(&self.centers_bohr, &self.radii_bohr, p))
        })))
    }

    /// Whether any atom has a positive radius (a surface has something to enclose).
    pub fn has_radii(&self) -> bool {
        self.radii_bohr.iter().any(|r| *r > 0.0 && r.is_finite())
    }

    /// The Gaussians of the atoms with a positive radius (a bad radius scale yields none).
    pub fn gaussians(&self) -> Vec<AtomGaussian> {
        if !RADIUS_SCALE_RANGE.contains(&self.radius_scale) {
            return Vec::new();
        }
        self.centers_bohr
            .iter()
            .zip(&self.radii_bohr)
            .filter(|(c, r)| **r > 0.0 && r.is_finite() && c.iter().all(|x| x.is_finite()))
            .map(|(&c, &r)| AtomGaussian::new(c, r, self.radius_scale))
            .collect()
    }

    /// Padding around the atoms' centres (Angstrom) that holds every atom's Gaussian: the largest
    /// truncation radius (0 without atoms); for the excluded surface, the largest radius and 1 A.
    pub fn padding_angstrom(&self) -> f64 {
        if self.is_excluded() {
            let r = self
                .radii_bohr
                .iter()
                .filter(|r| r.is_finite())
                .fold(0.0, |a: f64, &b| a.max(b));
            return angstrom_from_bohr(r) + 1.0;
        }
        let max = self.gaussians().iter().map(|g| g.cutoff_bohr).fold(0.0, f64::max);
        angstrom_from_bohr(max)
    }

    /// Positions in Angstrom of the atoms that contribute (for placing a lattice around them).
    pub fn positions_angstrom(&self) -> Vec<[f64; 3]> {
        self.centers_bohr
            .iter()
            .zip(&self.radii_bohr)
            .filter(|(_, r)| **r > 0.0)
            .map(|(c, _)| c.map(angstrom_from_bohr))
            .collect()
    }
}

/// Each atom's radius in Angstrom: the file's (PQR, prmtop) where the structure has radii, else the
/// element's van der Waals radius. A file's zero radius (PQR hydrogens in some force fields) stays
/// zero: the atom adds nothing to the surface, as it adds nothing to the file's dielectric boundary.
pub fn atom_radii_angstrom(structure: &Structure) -> Vec<f64> {
    let from_file = structure.radii_angstrom.as_ref().filter(|r| r.len() == structure.len());
    structure
        .elements
        .iter()
        .enumerate()
        .map(|(i, e)| match from_file.and_then(|r| r.get(i)) {
            Some(&r) => f64::from(r),
            None => f64::from(e.vdw_radius_angstrom()),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_isolated_atom_is_at_the_level_at_its_radius() {
        for scale in [0.3, 0.6, 1.0, 2.0] {
            let g = AtomGaussian::new([0.0; 3], 3.2, scale);
            let v = g.at(3.2 * 3.2);
            assert!((v - 0.5).abs() < 1e-12, "{scale}: {v}");
            let c = g.cutoff_bohr;
            assert!((g.at(c * c * (1.0 - 1e-12)) - TRUNCATION_DENSITY).abs() < 1e-9);
            assert_eq!(g.at(c * c * 1.0001), 0.0);
        }
    }

    #[test]
    fn refuses_bad_inputs() {
        assert!(MolSurfAtoms::from_radii_angstrom(&[[0.0; 3]], &[1.0], 0.1).is_err());
        assert!(MolSurfAtoms::from_radii_angstrom(&[[0.0; 3]], &[1.0, 2.0], 0.6).is_err());
        assert!(MolSurfAtoms::from_radii_angstrom(&[[f64::NAN, 0.0, 0.0]], &[1.0], 0.6).is_err());
        let a = MolSurfAtoms::from_radii_angstrom(&[[0.0; 3], [1.0; 3]], &[1.5, 0.0], 0.6).unwrap();
        assert_eq!(a.gaussians().len(), 1);
        assert_eq!(a.positions_angstrom().len(), 1);
        assert!(a.padding_angstrom() > 1.5);
    }

    /// The CUDA kernel's host emulation (`compute::cuda::molsurf::MolSurfPlan::emulate`) against
    /// the CPU engine, on the binning's edge cases: here, where both engines may be named.
    mod emulation {
        use crate::compute::cpu::molsurf::PreparedMolSurf;
        use crate::compute::cuda::molsurf::MolSurfPlan;
        use crate::compute::molsurf::MolSurfAtoms;
        use crate::model::Lattice;
        use std::ops::Range;

        fn check(atoms: &MolSurfAtoms, lattice: &Lattice, z: Range<usize>) {
            let plan = MolSurfPlan::new(atoms, lattice).unwrap();
            let got = plan.emulate(&z);
            let cpu = PreparedMolSurf::new(atoms);
            let [nx, ny, _] = lattice.dims;
            let mut want = vec![0.0f32; nx * ny];
            for (kz, k) in z.clone().enumerate() {
                cpu.fill_plane(lattice, k, &mut want);
                for (p, &w) in want.iter().enumerate() {
                    let (g, w) = (f64::from(got[p + nx * ny * kz]), f64::from(w));
                    let err = (g - w).abs();
                    if err <= 1e-5 * w.max(1e-3) {
                        continue;
                    }
                    // Only a truncated tail at an atom's cutoff (to f32 rounding) may differ.
                    let at = cpu.near_cutoff(lattice.point_bohr(p % nx, p / nx, k), 1e-5);
                    assert!(err <= 1.01e-3 * at as f64 + 1e-5 * w, "point {p} plane {k}: {g} vs {w}");
                }
            }
        }

        #[test]
        fn emulated_kernel_matches_the_cpu_engine_on_cell_borders_and_outside_the_lattice() {
            let h = 0.7;
            let origin = [-3.0, -2.5, -4.0];
            let lattice = Lattice::axis_aligned(origin, h, [37, 29, 23]);
            // The largest radius below: the probe's cells are the system's.
            let radius = 1.8;
            let probe = MolSurfAtoms::from_radii_angstrom(&[[0.0; 3]], &[radius], 0.6).unwrap();
            let plan = MolSurfPlan::new(&probe, &lattice).unwrap();
            let cw = plan.cell_width;
            assert!(cw.iter().all(|&w| w > 1), "{cw:?}");
            // Atoms exactly on cell borders, at lattice corners, just outside and far outside the lattice.
            let mut centers_bohr = Vec::new();
            for c in 0..4 {
                let on = |a: usize| origin[a] + (c * cw[a]) as f64 * h;
                centers_bohr.push([on(0), on(1), on(2)]);
                centers_bohr.push([on(0) - 1e-7, on(1) + 1e-7, on(2)]);
                // The reach of a brick (8 points wide along x and y, 8 along z) from either side.
                let r = plan.reach;
                let edge = |a: usize, s: i32| origin[a] + f64::from(8 * c + s * r[a]) * h;
                centers_bohr.push([edge(0, -1), edge(1, 1), edge(2, -1)]);
                centers_bohr.push([edge(0, 1), edge(1, -1), edge(2, 1)]);
            }
            centers_bohr.push([origin[0] - 4.0, origin[1] + 5.0, origin[2] + 3.0]);
            centers_bohr.push([
                origin[0] + 36.0 * h + 3.5,
                origin[1] + 28.0 * h + 1.0,
                origin[2] + 22.0 * h + 2.0,
            ]);
            centers_bohr.push([origin[0] - 500.0, 0.0, 0.0]);
            centers_bohr.push([1e5, 1e5, 1e5]);
            // And a random cluster.
            let mut seed = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.subsec_nanos() as u64)
                .unwrap_or(7)
                | 1;
            let mut rnd = || {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                (seed >> 11) as f64 / (1u64 << 53) as f64
            };
            for _ in 0..60 {
                centers_bohr.push([0, 1, 2].map(|a| origin[a] - 3.0 + rnd() * (lattice.dims[a] as f64 * h + 6.0)));
            }
            let positions: Vec<[f64; 3]> = centers_bohr
                .iter()
                .map(|c| c.map(crate::model::units::angstrom_from_bohr))
                .collect();
            let radii: Vec<f64> = (0..positions.len()).map(|i| [1.2, 1.55, 1.7, 1.8][i % 4]).collect();
            let atoms = MolSurfAtoms::from_radii_angstrom(&positions, &radii, 0.6).unwrap();
            let plan = MolSurfPlan::new(&atoms, &lattice).unwrap();
            assert!(plan.atoms.len() < atoms.centers_bohr.len(), "far atoms are dropped");
            check(&atoms, &lattice, 0..23);
            check(&atoms, &lattice, 5..14);
        }
    }
}
