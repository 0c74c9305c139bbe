//! The screening options of Coulomb potentials (`--dielectric vacuum|4r|debye`, `--eps-out`,
//! `--ionic-strength`), flattened into `grid` and `surface`: [`DielectricArgs`] turns them into a
//! [`Dielectric`] (`compute::esp::screening`) and refuses them where they do not apply.

use anyhow::{Result, bail};
use orbitfield::compute::esp::screening::{
    DEFAULT_EPS_OUT, DEFAULT_IONIC_STRENGTH_MOLAR, DEFAULT_SLOPE_PER_ANGSTROM, Dielectric,
};

/// The medium of a Coulomb potential.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum DielectricArg {
    /// 1/r: dielectric 1, no ions.
    #[default]
    Vacuum,
    /// Distance-dependent dielectric eps = 4r (r in Angstrom), as ChimeraX's coulombic.
    #[value(name = "4r")]
    FourR,
    /// Debye-Hueckel screening exp(-kappa r) / (eps_out r), kappa from --eps-out,
    /// --ionic-strength and --temperature.
    Debye,
}

// Options of screened potentials (a plain comment: a doc comment would replace the about text of
// the commands that flatten it).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct DielectricArgs {
    /// esp: the medium: vacuum (1/r), 4r (eps = 4r, r in Angstrom) or debye (Debye-Hueckel screening;
    /// --eps-out, --ionic-strength, --temperature). Screened models take --method dcs or cutoff
    /// [default: vacuum].
    #[arg(long, value_enum)]
    pub dielectric: Option<DielectricArg>,
    /// esp --dielectric debye and pb: ionic strength in mol/L [default: 0.15].
    #[arg(long, allow_negative_numbers = true)]
    pub ionic_strength: Option<f64>,
    /// esp --dielectric debye and pb: solvent dielectric constant [default: 78.54].
    #[arg(long, allow_negative_numbers = true)]
    pub eps_out: Option<f64>,
}

impl DielectricArgs {
    /// The model the options ask for, the Debye-Hueckel model at `temperature_kelvin`; parameters
    /// of another model are refused.
    pub fn model(&self, temperature_kelvin: f64) -> Result<Dielectric> {
        let kind = self.dielectric.unwrap_or_default();
        if kind != DielectricArg::Debye {
            if self.ionic_strength.is_some() {
                bail!("--ionic-strength applies to --dielectric debye");
            }
            if self.eps_out.is_some() {
                bail!("--eps-out applies to --dielectric debye");
            }
        }
        let model = match kind {
            DielectricArg::Vacuum => Dielectric::Vacuum,
            DielectricArg::FourR => Dielectric::DistanceDependent {
                slope_per_angstrom: DEFAULT_SLOPE_PER_ANGSTROM,
            },
            DielectricArg::Debye => Dielectric::DebyeHuckel {
                eps_out: self.eps_out.unwrap_or(DEFAULT_EPS_OUT),
                ionic_strength_molar: self.ionic_strength.unwrap_or(DEFAULT_IONIC_STRENGTH_MOLAR),
                temperature_kelvin,
            },
        };
        model.check().map_err(|e| anyhow::anyhow!("--dielectric: {e}"))?;
        Ok(model)
    }

    /// The viewer's model of the charges' potential the options ask for (Debye-Hueckel at
    /// 298.15 K, as the viewer's).
    pub fn esp_model(&self) -> Result<orbitfield::app::esp_model::EspModel> {
        use orbitfield::app::esp_model::EspModel;
        let temperature = orbitfield::compute::esp::screening::DEFAULT_SCREENING_TEMPERATURE_KELVIN;
        Ok(match self.model(temperature)? {
            Dielectric::Vacuum => EspModel::Vacuum,
            Dielectric::DistanceDependent { slope_per_angstrom } => EspModel::DistanceDependent { slope_per_angstrom },
            Dielectric::DebyeHuckel {
                eps_out,
                ionic_strength_molar,
                temperature_kelvin,
            } => EspModel::DebyeHuckel {
                eps_out,
                ionic_strength_molar,
                temperature_kelvin,
            },
        })
    }

    /// True when any screening option was given.
    pub fn given(&self) -> bool {
        self.dielectric.is_some() || self.ionic_strength.is_some() || self.eps_out.is_some()
    }

    /// Refuses the options for `what` (a field or path they do not apply to), unless vacuum.
    pub fn refuse_for(&self, what: &str) -> Result<()> {
        if self.given() && self.dielectric != Some(DielectricArg::Vacuum) {
            bail!("--dielectric, --ionic-strength and --eps-out apply to potentials of point charges; not to {what}");
        }
        Ok(())
    }
}
