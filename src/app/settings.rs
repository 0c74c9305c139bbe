//! Settings that persist between runs (RON under the XDG config directory): recent files, the
//! user's display preferences and the default representations they saved. Loaded at start-up,
//! saved when they change and on exit.

use super::reps::RepSpec;
use super::values::PotentialDisplay;
use crate::render::colormap::Colormap;
use std::path::{Path, PathBuf};

/// How many recent files the Files panel remembers.
pub const MAX_RECENT: usize = 10;

/// How the viewer sums per-frame potential maps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum PotentialMethod {
    /// Direct sum up to [`PotentialMethod::AUTO_MSM_CHARGES`] charges, multilevel summation above.
    #[default]
    Auto,
    /// Exact direct Coulomb sum (cost: charges x lattice points).
    Direct,
    /// Multilevel summation (a = 12 A, h = 2 A; about 1e-3 relative error, linear cost).
    Msm,
}

impl PotentialMethod {
    /// Above this many charges `Auto` uses multilevel summation (the placement policy's rule).
    pub const AUTO_MSM_CHARGES: usize = crate::compute::placement::POTENTIAL_MAP_MSM_CHARGES;

    /// Whether a map of `n_charges` charges is summed by multilevel summation.
    pub fn uses_msm(self, n_charges: usize) -> bool {
        match self {
            PotentialMethod::Auto => crate::compute::placement::potential_map_uses_msm(n_charges),
            PotentialMethod::Direct => false,
            PotentialMethod::Msm => true,
        }
    }
}

/// Representations saved as the defaults for new documents, by kind of document (`None`: the
/// defaults chosen by content, `reps::spec::default_atom_specs`).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct DefaultReps {
    /// Documents without protein or nucleic acid.
    pub small_molecule: Option<Vec<RepSpec>>,
    /// Documents with protein or nucleic acid.
    pub macromolecule: Option<Vec<RepSpec>>,
}

/// Persistent preferences.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Settings {
    /// Most recent first; each entry is the list of files opened together.
    pub recent: Vec<Vec<PathBuf>>,
    /// Representations new documents get, when the user saved some.
    pub default_reps: DefaultReps,
    /// The unit potentials are shown in.
    pub potential_unit: PotentialDisplay,
    /// Dark (black) or light (white) background.
    pub dark_background: bool,
    pub depth_cue: f32,
    /// Playback speed in frames per second.
    pub playback_fps: f32,
    pub playback_loop: bool,
    /// Show orbital energies in eV (else hartree).
    pub energies_in_ev: bool,
    /// Colormap of slice planes and coloured surfaces.
    pub colormap: Colormap,
    /// Spacing of per-frame potential maps of charged structures (Angstrom).
    pub potential_spacing_angstrom: f64,
    /// Potential maps are averaged over this many frames up to the current one (1: no averaging).
    pub potential_window_frames: u16,
    /// How per-frame potential maps are summed.
    pub potential_method: PotentialMethod,
    /// Points along the longest axis of computed orbital lattices.
    pub lattice_points: u32,
    /// Memory for cached field lattices and meshes (MiB).
    pub cache_budget_mib: u32,
    /// The folder the built-in file browser showed last (it starts there).
    pub last_folder: Option<PathBuf>,
    /// Playback waits for every frame's field (movie export) instead of keeping its rate and
    /// showing the latest finished surface.
    pub compute_every_frame: bool,
    /// Where orbitals, densities and spin densities drawn as isosurfaces are computed.
    pub orbitals_on: super::fields::device::FieldsOn,
    /// The 3-D view's background (sRGB) chosen in the View options; `None`: black or white as
    /// `dark_background` says.
    pub background_rgb: Option<[u8; 3]>,
    /// Whether a periodic structure's unit cell is drawn.
    pub show_cell: bool,
    /// Whether molecules written in pieces across a periodic box are made whole in every frame.
    pub make_whole: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            recent: Vec::new(),
            default_reps: DefaultReps::default(),
            potential_unit: PotentialDisplay::KtPerE,
            dark_background: true,
            depth_cue: 0.4,
            playback_fps: 12.0,
            playback_loop: true,
            energies_in_ev: true,
            colormap: Colormap::Diverging,
            lattice_points: 80,
            potential_spacing_angstrom: 1.0,
            potential_window_frames: 1,
            potential_method: PotentialMethod::Auto,
            cache_budget_mib: 1024,
            compute_every_frame: false,
            orbitals_on: super::fields::device::FieldsOn::Auto,
            last_folder: None,
            background_rgb: None,
            show_cell: true,
            make_whole: true,
        }
    }
}

impl Settings {
    /// The 3-D view's background (sRGB): the chosen colour, else black or white.
    pub fn background_srgb(&self) -> [u8; 3] {
        match self.background_rgb {
            Some(rgb) => rgb,
            None if self.dark_background => [0, 0, 0],
            None => [255, 255, 255],
        }
    }

    /// Whether the 3-D view's background is dark (its relative luminance below 0.4), so what is
    /// drawn over it (in the window and in exported images) is light, with a dark plate behind
    /// text; a chosen colour counts, not only dark/light.
    pub fn background_is_dark(&self) -> bool {
        let [r, g, b] = self.background_srgb().map(|c| {
            let c = f32::from(c) / 255.0;
            if c <= 0.04045 {
                c / 12.92
            } else {
                ((c + 0.055) / 1.055).powf(2.4)
            }
        });
        0.2126 * r + 0.7152 * g + 0.0722 * b < 0.4
    }

    /// `$XDG_CONFIG_HOME/orbitfield/settings.ron`, else `~/.config/orbitfield/settings.ron`.
    pub fn default_path() -> Option<PathBuf> {
        let base = std::env::var_os("XDG_CONFIG_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| {
                std::env::var_os("HOME")
                    .filter(|v| !v.is_empty())
                    .map(|h| PathBuf::from(h).join(".config"))
            })?;
        Some(base.join("orbitfield").join("settings.ron"))
    }

    /// Reads settings; a missing or unreadable file gives the defaults (and a message for the log).
    pub fn load(path: &Path) -> (Settings, Option<String>) {
        match std::fs::read_to_string(path) {
            Ok(text) => match ron::from_str::<Settings>(&text) {
                Ok(s) => (s.sanitized(), None),
                Err(e) => (
                    Settings::default(),
                    Some(format!("{}: settings ignored: {e}", path.display())),
                ),
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => (Settings::default(), None),
            Err(e) => (
                Settings::default(),
                Some(format!("{}: cannot read settings: {e}", path.display())),
            ),
        }
    }

    /// Writes settings atomically, creating the directory.
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let text =
            ron::ser::to_string_pretty(self, ron::ser::PrettyConfig::default()).map_err(std::io::Error::other)?;
        crate::io::write_atomically(path, text.as_bytes())
    }

    /// Puts a file list at the front of the recent list (no duplicates, at most [`MAX_RECENT`]).
    pub fn push_recent(&mut self, files: &[PathBuf]) {
        if files.is_empty() {
            return;
        }
        self.recent.retain(|r| r.as_slice() != files);
        self.recent.insert(0, files.to_vec());
        self.recent.truncate(MAX_RECENT);
    }

    /// Clamps values a hand-edited file may have broken.
    pub fn sanitized(mut self) -> Settings {
        let d = Settings::default();
        if !self.depth_cue.is_finite() {
            self.depth_cue = d.depth_cue;
        }
        self.depth_cue = self.depth_cue.clamp(0.0, 1.0);
        if !self.playback_fps.is_finite() {
            self.playback_fps = d.playback_fps;
        }
        self.playback_fps = self.playback_fps.clamp(0.5, 120.0);
        self.cache_budget_mib = self.cache_budget_mib.clamp(16, 1 << 20);
        self.lattice_points = self.lattice_points.clamp(16, 512);
        self.potential_window_frames = self
            .potential_window_frames
            .clamp(1, super::potential::MAX_POTENTIAL_WINDOW);
        if !self.potential_spacing_angstrom.is_finite() {
            self.potential_spacing_angstrom = d.potential_spacing_angstrom;
        }
        self.potential_spacing_angstrom = self.potential_spacing_angstrom.clamp(0.1, 10.0);
        self.recent.truncate(MAX_RECENT);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_recent() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join("settings.ron");
        let mut s = Settings::default();
        s.push_recent(&[PathBuf::from("a.pdb")]);
        s.push_recent(&[PathBuf::from("b.molden")]);
        s.push_recent(&[PathBuf::from("a.pdb")]);
        assert_eq!(s.recent[0], vec![PathBuf::from("a.pdb")]);
        assert_eq!(s.recent.len(), 2);
        s.default_reps.macromolecule = Some(vec![RepSpec::atoms("protein", crate::app::atoms::AtomStyle::Licorice)]);
        s.potential_unit = PotentialDisplay::Volt;
        s.save(&path).unwrap();
        let (back, msg) = Settings::load(&path);
        assert!(msg.is_none());
        assert_eq!(back, s);
        std::fs::write(&path, "not ron at all (").unwrap();
        let (back, msg) = Settings::load(&path);
        assert_eq!(back, Settings::default());
        assert!(msg.is_some());
        // Out-of-range values are clamped; fields of older versions are ignored.
        std::fs::write(&path, "(iso_value: -3.0, playback_fps: 1e9, depth_cue: -2.0)").unwrap();
        let (back, msg) = Settings::load(&path);
        assert!(msg.is_none(), "{msg:?}");
        assert_eq!(back.playback_fps, 120.0);
        assert_eq!(back.depth_cue, 0.0);
    }
}
