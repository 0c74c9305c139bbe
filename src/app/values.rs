//! Field values as the user reads them: the unit each field kind is shown in (atomic units for
//! orbitals and densities; kT/e at 300 K, kcal/mol/e or V for potentials; file units for volumes),
//! the default isovalue of each kind, colour legends, and sampling a grid at a point.
//!
//! Engines compute orbitals in bohr^-3/2, densities in bohr^-3 and potentials in hartree/e; every
//! number the panels, the legends and `render` print goes through [`FieldUnit`] and carries its unit.
//! Conversions between potential units go through `model::units`.

use super::fields::FieldChoice;
use crate::model::Grid3;
use crate::model::units::{DEFAULT_TEMPERATURE_KELVIN, PotentialUnit};
use crate::render::colormap::Colormap;

/// The unit potentials are shown in (a setting; maps are computed in hartree/e).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum PotentialDisplay {
    /// kT/e at 300 K (VMD's and APBS's unit).
    #[default]
    KtPerE,
    KcalPerMolPerE,
    Volt,
    /// Atomic units, hartree/e (GaussView's unit for a molecule's potential).
    HartreePerE,
}

impl PotentialDisplay {
    pub const ALL: [PotentialDisplay; 4] = [
        PotentialDisplay::KtPerE,
        PotentialDisplay::KcalPerMolPerE,
        PotentialDisplay::Volt,
        PotentialDisplay::HartreePerE,
    ];

    /// The unit as `model::units` converts it.
    pub fn unit(self) -> PotentialUnit {
        match self {
            PotentialDisplay::KtPerE => PotentialUnit::KtPerE {
                temperature_kelvin: DEFAULT_TEMPERATURE_KELVIN,
            },
            PotentialDisplay::KcalPerMolPerE => PotentialUnit::KcalPerMolPerE,
            PotentialDisplay::Volt => PotentialUnit::Volt,
            PotentialDisplay::HartreePerE => PotentialUnit::HartreePerE,
        }
    }

    /// The short label written beside numbers.
    pub fn label(self) -> &'static str {
        match self {
            PotentialDisplay::KtPerE => "kT/e",
            PotentialDisplay::KcalPerMolPerE => "kcal/mol/e",
            PotentialDisplay::Volt => "V",
            PotentialDisplay::HartreePerE => "a.u.",
        }
    }

    /// For menus: the label with the temperature where it matters.
    pub fn name(self) -> &'static str {
        match self {
            PotentialDisplay::KtPerE => "kT/e (300 K)",
            PotentialDisplay::KcalPerMolPerE => "kcal/mol/e",
            PotentialDisplay::Volt => "V",
            PotentialDisplay::HartreePerE => "a.u. (hartree/e)",
        }
    }

    /// Parses `kT/e`, `kcal/mol/e`, `V` or `a.u.` (`hartree/e`; case-insensitive).
    pub fn parse(s: &str) -> Option<PotentialDisplay> {
        match s.trim().to_ascii_lowercase().as_str() {
            "kt/e" | "kt" => Some(PotentialDisplay::KtPerE),
            "kcal/mol/e" | "kcal/mol" => Some(PotentialDisplay::KcalPerMolPerE),
            "v" | "volt" => Some(PotentialDisplay::Volt),
            "a.u." | "au" | "hartree/e" | "hartree" => Some(PotentialDisplay::HartreePerE),
            _ => None,
        }
    }
}

/// How a field's computed values are shown: display value = computed value x `scale`, followed by
/// `label`.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldUnit {
    pub scale: f64,
    /// "a.u.", "kT/e", "kcal/mol/e", "V", or "(file units)".
    pub label: String,
}

impl FieldUnit {
    /// The unit `field` is shown in, potentials in `potential`.
    pub fn of(field: FieldChoice, potential: PotentialDisplay) -> FieldUnit {
        match field {
            // A wavefunction's own potential is read in atomic units (the +-0.03 a.u. surfaces).
            FieldChoice::Orbital { .. }
            | FieldChoice::Density
            | FieldChoice::SpinDensity
            | FieldChoice::WavefunctionPotential => FieldUnit {
                scale: 1.0,
                label: "a.u.".into(),
            },
            FieldChoice::Potential | FieldChoice::PotentialMean { .. } => FieldUnit {
                scale: potential.unit().per_hartree_per_e(),
                label: potential.label().into(),
            },
            FieldChoice::PotentialPb { .. } => FieldUnit {
                scale: 1.0,
                label: "kT/e".into(),
            },
            FieldChoice::Volume(_) => FieldUnit {
                scale: 1.0,
                label: "(file units)".into(),
            },
            // A dimensionless level (the panels say what 0.5 means).
            FieldChoice::MolSurf { .. } => FieldUnit {
                scale: 1.0,
                label: String::new(),
            },
            // Free energies follow the energy part of the potential's unit: kT (at the map's
            // 300 K) or kcal/mol.
            FieldChoice::Ils(_) => match potential {
                PotentialDisplay::KcalPerMolPerE => FieldUnit {
                    scale: crate::app::ils::kt_kcal(),
                    label: "kcal/mol".into(),
                },
                PotentialDisplay::KtPerE | PotentialDisplay::Volt | PotentialDisplay::HartreePerE => FieldUnit {
                    scale: 1.0,
                    label: "kT".into(),
                },
            },
        }
    }

    /// The unit of a volume whose description names a potential's unit (`volume_potential_unit`),
    /// or ends with "(a.u.)" (a map `save map` wrote), else "(file units)".
    pub fn of_volume(description: &str) -> FieldUnit {
        // A map this program wrote names its unit last: "HOMO (orbital 35) (a.u.)".
        let label = volume_potential_unit(description).unwrap_or(if description.trim_end().ends_with("(a.u.)") {
            "a.u."
        } else {
            "(file units)"
        });
        FieldUnit {
            scale: 1.0,
            label: label.into(),
        }
    }

    /// The unit surfaces coloured by `source` are shown in: as [`FieldUnit::of`], except that a
    /// wavefunction's own potential is read in `potential` like the other potentials (its
    /// isosurfaces keep atomic units).
    pub fn of_coloring(source: FieldChoice, potential: PotentialDisplay) -> FieldUnit {
        match source {
            FieldChoice::WavefunctionPotential => FieldUnit::of(FieldChoice::Potential, potential),
            s => FieldUnit::of(s, potential),
        }
    }

    /// The unit a Poisson-Boltzmann solution (computed in kT/e at `temperature_kelvin`, as APBS
    /// writes it) is shown in: kT/e whatever the setting's temperature, else converted at the
    /// solve's own temperature (1 kT/e = 0.5925 kcal/mol/e = 25.69 mV at 298.15 K).
    pub fn of_pb(potential: PotentialDisplay, temperature_kelvin: f64) -> FieldUnit {
        let kt_per_e = PotentialUnit::KtPerE { temperature_kelvin };
        match potential {
            PotentialDisplay::KtPerE => FieldUnit {
                scale: 1.0,
                label: "kT/e".into(),
            },
            p => FieldUnit {
                scale: p.unit().per_hartree_per_e() / kt_per_e.per_hartree_per_e(),
                label: p.label().into(),
            },
        }
    }

    /// A computed value in this unit.
    pub fn show(&self, computed: f32) -> f64 {
        f64::from(computed) * self.scale
    }

    /// A value in this unit back to computed units.
    pub fn computed(&self, shown: f64) -> f32 {
        (shown / self.scale) as f32
    }

    /// "0.050 a.u.", "1.0 kT/e", "2.3e-4 (file units)": a number in this unit, with the unit.
    pub fn format(&self, computed: f32) -> String {
        if self.label.is_empty() {
            format_number(self.show(computed))
        } else {
            format!("{} {}", format_number(self.show(computed)), self.label)
        }
    }
}

/// PySCF's cubegen titles an orbital's cube "Orbital value in real space (1/Bohr^3)", a density's
/// unit; an orbital's amplitude is in bohr^-3/2.
const PYSCF_ORBITAL_TITLE: &str = "Orbital value in real space (1/Bohr^3)";

/// A volume's title as the field's name and legend give it: the file's title line, trimmed, with
/// PySCF's unit of an orbital's values put right ("Orbital value in real space (bohr^-3/2)").
pub fn volume_title(description: &str) -> String {
    let t = description.trim();
    match t.strip_prefix(PYSCF_ORBITAL_TITLE) {
        Some(rest) => format!("Orbital value in real space (bohr^-3/2){rest}"),
        None => t.to_string(),
    }
}

/// What the field panel adds to a volume's quoted title when the title's unit is wrong.
pub fn volume_title_remark(description: &str) -> Option<&'static str> {
    description
        .trim()
        .starts_with(PYSCF_ORBITAL_TITLE)
        .then_some(" (an orbital's values are in bohr^-3/2: PySCF labels them with a density's unit)")
}

/// A number with about three significant digits, in plain notation where that is short.
pub fn format_number(x: f64) -> String {
    let a = x.abs();
    if a == 0.0 {
        "0".into()
    } else if !(1e-3..1e5).contains(&a) {
        format!("{x:.2e}")
    } else if a >= 100.0 {
        format!("{x:.0}")
    } else if a >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.3}")
    }
}

/// Isovalue (hartree/e) a wavefunction's potential is first shown at.
pub const WAVEFUNCTION_POTENTIAL_ISO: f32 = 0.03;

/// The default isovalue of `field` in computed units, when it does not depend on the values:
/// orbitals +-0.05 a.u., densities 0.002 a.u., a wavefunction's potential +-0.03 a.u. (the surfaces
/// chemists read reactive sites from; `None` for the potential of charges and volumes, whose default
/// comes from the first grid, [`default_iso_for_grid`]).
pub fn default_iso(field: FieldChoice) -> Option<f32> {
    match field {
        FieldChoice::Orbital { .. } => Some(0.05),
        FieldChoice::Density | FieldChoice::SpinDensity => Some(0.002),
        FieldChoice::WavefunctionPotential => Some(WAVEFUNCTION_POTENTIAL_ISO),
        FieldChoice::MolSurf { .. } => Some(crate::model::field::MOLSURF_LEVEL),
        FieldChoice::Ils(_) => Some(crate::app::ils::DEFAULT_ISO_KT),
        // +-1 kT/e.
        FieldChoice::PotentialPb { .. } => Some(1.0),
        FieldChoice::Volume(_) | FieldChoice::Potential | FieldChoice::PotentialMean { .. } => None,
    }
}

/// The default isovalue of `field` for its first grid. Potentials: 1 kT/e (at 300 K), or, when the
/// potential on the lattice's faces is stronger than that (a charged molecule in vacuum), the next
/// value of the 1-2-5 series above the strongest face value, so that the surfaces close inside the
/// lattice instead of being cut by its box. Volumes: 0.05 (the orbital default) when the values
/// reach beyond it, else a fifth of the largest |value|.
pub fn default_iso_for_grid(field: FieldChoice, grid: &Grid3) -> f32 {
    if let Some(v) = default_iso(field) {
        return v;
    }
    if field.is_potential() {
        let kt = PotentialDisplay::KtPerE.unit();
        let hartree_per_kt = 1.0 / kt.per_hartree_per_e();
        let face_kt = max_abs_on_faces(grid) * kt.per_hartree_per_e();
        let mut iso_kt = 1.0;
        let series = [1.0, 2.0, 5.0];
        'outer: for decade in 0..8 {
            for s in series {
                let v = s * 10f64.powi(decade);
                if v > face_kt * 1.05 {
                    iso_kt = v;
                    break 'outer;
                }
            }
        }
        return (iso_kt * hartree_per_kt) as f32;
    }
    let max = grid.min_max().map_or(0.0, |(lo, hi)| lo.abs().max(hi.abs()));
    // A potential map from a file (APBS's kT/e): the potentials' conventions, ±1 kT/e (±0.03 a.u.
    // for a cube of a wavefunction's potential), where the values reach it.
    if let Some(unit) = volume_potential_unit(&grid.description) {
        let iso = match unit {
            "kT/e" | "kcal/mol/e" => 1.0,
            "V" => 0.025,
            _ => default_iso(FieldChoice::WavefunctionPotential).unwrap_or(0.03),
        };
        return if iso < max { iso } else { 0.2 * max };
    }
    if names_a_density(&grid.description) {
        // A density's cube (PySCF's "Electron density", cubegen's "Total SCF Density"): the
        // field's convention, 0.002 a.u., where the values reach it.
        let density = default_iso(FieldChoice::Density).unwrap_or(0.002);
        return if density < max { density } else { 0.2 * max };
    }
    if max > 0.1 || max == 0.0 { 0.05 } else { 0.2 * max }
}

/// The unit of an electrostatic potential a volume's own description names: "kT/e" (APBS, and
/// `grid pb`/`grid esp` in kT/e), "kcal/mol/e", "V", or "a.u." for a potential in no named unit (a
/// cube of a wavefunction's potential: cubegen's "Electrostatic potential from Total SCF Density",
/// PySCF's "Molecular electrostatic potential"; cube files hold atomic units). `None` for any
/// other volume. Such a volume is drawn as the potentials computed here are: red negative.
pub fn volume_potential_unit(description: &str) -> Option<&'static str> {
    let d = description.to_ascii_lowercase();
    if d.contains("kt/e") {
        return Some("kT/e");
    }
    if d.contains("kcal/mol/e") || (d.contains("kcal/mol") && d.contains("potential")) {
        return Some("kcal/mol/e");
    }
    let potential = d.contains("potential") || d.contains("poisson-boltzmann");
    if !potential || d.contains("free energy") || d.contains("ligand") {
        return None;
    }
    if d.contains("(v)") || d.contains(" volt") {
        return Some("V");
    }
    Some("a.u.")
}

/// Whether a volume's own description says it is an electron or spin density (and not a potential
/// computed from one, as cubegen's "Electrostatic potential from Total SCF Density").
fn names_a_density(description: &str) -> bool {
    let d = description.to_ascii_lowercase();
    d.contains("density") && !d.contains("potential") && !d.contains("gradient") && !d.contains("laplacian")
}

/// The largest |value| on the six faces of a grid's lattice.
fn max_abs_on_faces(grid: &Grid3) -> f64 {
    let [nx, ny, nz] = grid.lattice.dims;
    let mut m = 0.0f64;
    let mut see = |i: usize, j: usize, k: usize| {
        if let Some(v) = grid.get(i, j, k).filter(|v| v.is_finite()) {
            m = m.max(f64::from(v.abs()));
        }
    };
    for k in 0..nz {
        for j in 0..ny {
            for i in 0..nx {
                let face = i == 0 || j == 0 || k == 0 || i + 1 == nx || j + 1 == ny || k + 1 == nz;
                if face {
                    see(i, j, k);
                }
            }
        }
    }
    m
}

/// A colour legend: what the colours of a slice or a coloured surface mean.
#[derive(Clone, Debug, PartialEq)]
pub struct Legend {
    /// What is coloured ("potential (charges), slice").
    pub title: String,
    /// Values at the colormap's start and end, in `unit`.
    pub range: [f64; 2],
    pub unit: String,
    pub colormap: Colormap,
    /// A surface drawn in one colour (a ligand free-energy isosurface): the bar is that colour and
    /// only the surface's value (`range[1]`) is written.
    pub solid_rgb: Option<[u8; 3]>,
    /// The two lobes of a signed field's isosurfaces (an orbital, a spin density): their colours
    /// (negative, positive); the bar is split between them and its ends read -iso and +iso.
    pub lobes: Option<[[u8; 3]; 2]>,
}

impl Legend {
    /// Where 0 sits on a colormap bar whose range takes both signs (0 at the bar's left end, 1 at
    /// its right); `None` for lobes, a solid colour or a range of one sign. The colormap's middle
    /// (white, for potentials) is the range's middle: zero only for a symmetric range, so the
    /// bar marks where zero is.
    pub fn zero_at(&self) -> Option<f32> {
        if self.solid_rgb.is_some() || self.lobes.is_some() {
            return None;
        }
        let [lo, hi] = self.range;
        (lo.is_finite() && hi.is_finite() && lo < 0.0 && hi > 0.0).then(|| (-lo / (hi - lo)) as f32)
    }

    /// The bar's colour at `t` (0 at its left end, 1 at its right): the solid colour, the lobes'
    /// (negative on the left half, positive on the right), or the colormap's.
    pub fn bar_rgb(&self, t: f32) -> [u8; 3] {
        match (self.solid_rgb, self.lobes) {
            (Some(rgb), _) => rgb,
            (None, Some([neg, pos])) => {
                if t < 0.5 {
                    neg
                } else {
                    pos
                }
            }
            (None, None) => {
                let [r, g, b, _] = self.colormap.sample(t);
                [r, g, b]
            }
        }
    }
}

/// Trilinear sample of a grid at a point in Angstrom (axis-aligned lattices only); `None` outside.
pub fn sample_grid(grid: &Grid3, p_angstrom: [f32; 3]) -> Option<f32> {
    grid.trilinear_at_angstrom(p_angstrom, false)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn the_bar_marks_zero_where_the_range_takes_both_signs() {
        let legend = |range: [f64; 2], lobes: Option<[[u8; 3]; 2]>| Legend {
            title: String::new(),
            range,
            unit: "kT/e".into(),
            colormap: crate::render::colormap::Colormap::RedWhiteBlue,
            solid_rgb: None,
            lobes,
        };
        assert_eq!(legend([-5.0, 5.0], None).zero_at(), Some(0.5));
        let third = legend([-5.0, 10.0], None).zero_at().unwrap();
        assert!((third - 1.0 / 3.0).abs() < 1e-6, "{third}");
        assert_eq!(legend([0.0, 10.0], None).zero_at(), None);
        assert_eq!(legend([-3.0, -1.0], None).zero_at(), None);
        assert_eq!(legend([-5.0, 5.0], Some([[0, 0, 255], [255, 0, 0]])).zero_at(), None);
    }
    use crate::model::Lattice;
    use crate::model::units::{VOLT_PER_HARTREE_PER_E, volt_per_kt_per_e};

    #[test]
    fn trilinear_sample_of_a_linear_field_is_exact() {
        let lattice = Lattice::axis_aligned([0.0; 3], 1.0, [4, 4, 4]);
        let mut g = Grid3::zeros(lattice, "x");
        for k in 0..4 {
            for j in 0..4 {
                for i in 0..4 {
                    let idx = lattice.index(i, j, k);
                    g.values[idx] = i as f32 + 2.0 * j as f32 - k as f32;
                }
            }
        }
        let p_bohr = [1.5, 0.25, 2.0];
        let p = crate::model::units::angstrom_from_bohr3(p_bohr).map(|x| x as f32);
        let v = sample_grid(&g, p).unwrap();
        assert!((v - (1.5 + 0.5 - 2.0)).abs() < 1e-4, "{v}");
        assert_eq!(sample_grid(&g, [-1.0, 0.0, 0.0]), None);
    }

    #[test]
    fn a_poisson_boltzmann_map_converts_at_its_own_temperature() {
        // k_B T / e at 298.15 K: 0.025693 V (CODATA k_B = 8.617333e-5 eV/K), 0.592486 kcal/mol/e
        // (R = 1.98720e-3 kcal/mol/K).
        let t = 298.15;
        assert_eq!(FieldUnit::of_pb(PotentialDisplay::KtPerE, t).scale, 1.0);
        let v = FieldUnit::of_pb(PotentialDisplay::Volt, t);
        assert!((v.scale - 8.617333e-5 * t).abs() < 1e-7, "{}", v.scale);
        assert_eq!(v.label, "V");
        let k = FieldUnit::of_pb(PotentialDisplay::KcalPerMolPerE, t);
        assert!((k.scale - 1.987204e-3 * t).abs() < 1e-5, "{}", k.scale);
        let k310 = FieldUnit::of_pb(PotentialDisplay::KcalPerMolPerE, 310.0);
        assert!((k310.scale / k.scale - 310.0 / t).abs() < 1e-12);
        let au = FieldUnit::of_pb(PotentialDisplay::HartreePerE, t);
        assert!((au.scale - 3.166812e-6 * t).abs() < 1e-9, "{}", au.scale);
    }

    #[test]
    fn potentials_are_shown_in_kt_per_e_at_300_k_or_the_chosen_unit() {
        // 1 hartree/e = 27.211386 V; kT/e at 300 K = 0.025852 V (CODATA 2018, written out here).
        let kt_volt = 1.380_649e-23 * 300.0 / 1.602_176_634e-19;
        assert!((volt_per_kt_per_e(300.0) - kt_volt).abs() < 1e-12);
        let u = FieldUnit::of(FieldChoice::Potential, PotentialDisplay::KtPerE);
        let one_kt = u.computed(1.0);
        assert!((f64::from(one_kt) * VOLT_PER_HARTREE_PER_E - kt_volt).abs() < 1e-9);
        assert_eq!(u.format(one_kt), "1.00 kT/e");
        let v = FieldUnit::of(FieldChoice::Potential, PotentialDisplay::Volt);
        assert!((v.show(1.0) - 27.211_386).abs() < 1e-5);
        // Atomic units, as GaussView reads a molecule's potential: the computed values as they are.
        let au = FieldUnit::of_coloring(FieldChoice::WavefunctionPotential, PotentialDisplay::HartreePerE);
        assert!((au.show(0.05) - 0.05).abs() < 1e-8);
        assert_eq!(au.label, "a.u.");
        assert_eq!(PotentialDisplay::parse("A.U."), Some(PotentialDisplay::HartreePerE));
        assert_eq!(
            PotentialDisplay::parse("hartree/e"),
            Some(PotentialDisplay::HartreePerE)
        );
        let kcal = FieldUnit::of(FieldChoice::Potential, PotentialDisplay::KcalPerMolPerE);
        // 1 kcal/mol/e = 4184 J / (N_A e) = 0.0433641 V.
        assert!((kcal.show(1.0) * 0.043_364_1 - 27.211_386).abs() < 1e-3);
        assert_eq!(
            FieldUnit::of(FieldChoice::Density, PotentialDisplay::Volt).format(0.002),
            "0.002 a.u."
        );
    }

    #[test]
    fn the_potential_default_iso_closes_inside_the_lattice() {
        // A point charge of -4 e at the centre of a 40 bohr lattice: its potential on the faces
        // reaches -4 / 20 = -0.2 hartree/e (210 kT/e at the face centres), so the default is the
        // next value of the series above, 500 kT/e.
        let lattice = Lattice::axis_aligned([-20.0; 3], 2.0, [21, 21, 21]);
        let mut g = Grid3::zeros(lattice, "q/r");
        for k in 0..21 {
            for j in 0..21 {
                for i in 0..21 {
                    let p = lattice.point_bohr(i, j, k);
                    let r = (p[0] * p[0] + p[1] * p[1] + p[2] * p[2]).sqrt().max(0.5);
                    g.values[lattice.index(i, j, k)] = (-4.0 / r) as f32;
                }
            }
        }
        let iso = default_iso_for_grid(FieldChoice::Potential, &g);
        let u = FieldUnit::of(FieldChoice::Potential, PotentialDisplay::KtPerE);
        let face_max_kt = 4.0 / 20.0 * u.scale;
        assert!(
            u.show(iso) > face_max_kt && u.show(iso) <= 2.5 * face_max_kt,
            "{}",
            u.show(iso)
        );
        assert!((u.show(iso) - 500.0).abs() < 1e-3, "{}", u.show(iso));
        // A neutral, weak field: 1 kT/e.
        let weak = Grid3::zeros(lattice, "0");
        assert!((u.show(default_iso_for_grid(FieldChoice::Potential, &weak)) - 1.0).abs() < 1e-6);
        assert_eq!(default_iso(FieldChoice::Density), Some(0.002));
        // A density's cube is shown at the density's convention, a potential's or a gradient's
        // computed from a density is not.
        let mut rho = weak.clone();
        for (k, v) in rho.values.iter_mut().enumerate() {
            *v = 0.5 * (k % 7) as f32;
        }
        rho.description = "threonine: electron density (bohr^-3), PySCF".into();
        assert_eq!(default_iso_for_grid(FieldChoice::Volume(0), &rho), 0.002);
        rho.description = " Electron density from Total SCF Density".into();
        assert_eq!(default_iso_for_grid(FieldChoice::Volume(0), &rho), 0.002);
        // A potential's cube at a wavefunction potential's isovalue (0.03 a.u.), not a density's.
        rho.description = " Electrostatic potential from Total SCF Density".into();
        assert_eq!(default_iso_for_grid(FieldChoice::Volume(0), &rho), 0.03);
        rho.description = "spin density".into();
        for v in &mut rho.values {
            *v *= 1e-4;
        }
        // Values that never reach 0.002: a fifth of the largest.
        assert!((default_iso_for_grid(FieldChoice::Volume(0), &rho) - 0.2 * 3e-4).abs() < 1e-9);
    }

    #[test]
    fn volumes_that_name_a_potential_say_its_unit() {
        // APBS's DX comments, as the reader joins them.
        assert_eq!(
            volume_potential_unit("Data from APBS 3.4.1; POTENTIAL (kT/e)"),
            Some("kT/e")
        );
        assert_eq!(
            volume_potential_unit("Poisson-Boltzmann (linearized), 0.15 M, eps 2/78.54 (kT/e at 298.15 K)"),
            Some("kT/e")
        );
        assert_eq!(
            volume_potential_unit(" Electrostatic potential from Total SCF Density"),
            Some("a.u.")
        );
        assert_eq!(volume_potential_unit("potential (kcal/mol/e)"), Some("kcal/mol/e"));
        for other in [
            " Electron density from Total SCF Density",
            "mo:homo (bohr^-3/2)",
            "ligand free energy of O2 (kT at 300 K)",
            "",
        ] {
            assert_eq!(volume_potential_unit(other), None, "{other}");
        }
        assert_eq!(
            FieldUnit::of_volume("Data from APBS 3.4.1; POTENTIAL (kT/e)").label,
            "kT/e"
        );
        assert_eq!(FieldUnit::of_volume("a map").label, "(file units)");
        assert_eq!(FieldUnit::of_volume("HOMO (orbital 35) (a.u.)").label, "a.u.");
        // A potential map opens at the potentials' isovalue: 1 kT/e.
        let mut g = Grid3::zeros(
            Lattice::axis_aligned([0.0; 3], 1.0, [3, 3, 3]),
            "Data from APBS 3.4.1; POTENTIAL (kT/e)",
        );
        for (k, v) in g.values.iter_mut().enumerate() {
            *v = k as f32 - 13.0;
        }
        assert_eq!(default_iso_for_grid(FieldChoice::Volume(0), &g), 1.0);
    }
}
