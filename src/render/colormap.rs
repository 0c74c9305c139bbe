//! Colormaps for slice planes and per-value colouring: value in 0..1 to sRGB bytes.
//!
//! Diverging (blue-white-red) suits signed fields such as orbitals; a viridis-like sequential map
//! suits densities; red-white-blue is the electrostatics convention (negative red, zero white,
//! positive blue, as APBS, PyMOL, ChimeraX and VMD colour potentials). Potentials are drawn in that
//! convention everywhere — slices, coloured surfaces and cartoons, legends, `render`: the diverging
//! choice becomes red-white-blue for them ([`Colormap::for_values`]). Used by the app when it turns
//! a field slice into a texture and fills the mesh colour table, and by the legends.

/// Available colormaps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum Colormap {
    /// Blue (low) - white (middle) - red (high); for potentials red (negative) - white - blue
    /// (positive), the electrostatics convention ([`Colormap::for_values`]).
    #[default]
    Diverging,
    /// Dark purple - teal - yellow.
    Viridis,
    /// Black to white.
    Gray,
    /// Red (low) - white (middle) - blue (high): negative potentials red, positive blue.
    RedWhiteBlue,
}

impl Colormap {
    pub const ALL: [Colormap; 4] = [
        Colormap::Diverging,
        Colormap::RedWhiteBlue,
        Colormap::Viridis,
        Colormap::Gray,
    ];

    /// The colormap values are drawn with: `self`, except that potentials (`potential`) drawn
    /// with the diverging map take red = negative, white = 0, blue = positive.
    pub fn for_values(self, potential: bool) -> Colormap {
        match self {
            Colormap::Diverging if potential => Colormap::RedWhiteBlue,
            other => other,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Colormap::Diverging => "diverging",
            Colormap::Viridis => "viridis",
            Colormap::Gray => "gray",
            Colormap::RedWhiteBlue => "red-white-blue",
        }
    }

    /// Colour at `t` (clamped to 0..1; NaN maps to the middle).
    pub fn sample(self, t: f32) -> [u8; 4] {
        let t = if t.is_nan() { 0.5 } else { t.clamp(0.0, 1.0) };
        let stops: &[[f32; 3]] = match self {
            Colormap::Diverging => &[[0.23, 0.30, 0.75], [0.87, 0.87, 0.87], [0.71, 0.02, 0.15]],
            Colormap::Viridis => &[
                [0.267, 0.005, 0.329],
                [0.230, 0.322, 0.546],
                [0.128, 0.567, 0.551],
                [0.369, 0.789, 0.383],
                [0.993, 0.906, 0.144],
            ],
            Colormap::Gray => &[[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]],
            Colormap::RedWhiteBlue => &[[0.71, 0.02, 0.15], [0.87, 0.87, 0.87], [0.23, 0.30, 0.75]],
        };
        let segments = (stops.len() - 1) as f32;
        let x = t * segments;
        let i = (x.floor() as usize).min(stops.len() - 2);
        let f = x - i as f32;
        let (a, b) = (stops[i], stops[i + 1]);
        let c = |k: usize| ((a[k] + (b[k] - a[k]) * f) * 255.0).round().clamp(0.0, 255.0) as u8;
        [c(0), c(1), c(2), 255]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diverging_ends_and_middle() {
        let lo = Colormap::Diverging.sample(0.0);
        let hi = Colormap::Diverging.sample(1.0);
        let mid = Colormap::Diverging.sample(0.5);
        assert!(lo[2] > lo[0] && hi[0] > hi[2]);
        assert!(mid[0] > 200 && mid[1] > 200 && mid[2] > 200);
        assert_eq!(Colormap::Gray.sample(f32::NAN), Colormap::Gray.sample(0.5));
        assert_eq!(Colormap::RedWhiteBlue.sample(0.0), hi);
        assert_eq!(Colormap::RedWhiteBlue.sample(1.0), lo);
        assert_eq!(Colormap::Gray.sample(7.0), [255, 255, 255, 255]);
    }

    #[test]
    fn potentials_are_red_where_negative_and_blue_where_positive() {
        for map in [Colormap::Diverging, Colormap::RedWhiteBlue] {
            let m = map.for_values(true);
            let (neg, zero, pos) = (m.sample(0.0), m.sample(0.5), m.sample(1.0));
            assert!(neg[0] > 150 && neg[2] < 60, "{map:?}: negative end {neg:?}");
            assert!(pos[2] > 150 && pos[0] < 80, "{map:?}: positive end {pos:?}");
            assert!(zero.iter().take(3).all(|c| *c > 200), "{map:?}: zero {zero:?}");
        }
        assert_eq!(Colormap::Diverging.for_values(false), Colormap::Diverging);
        assert_eq!(Colormap::Viridis.for_values(true), Colormap::Viridis);
    }
}
