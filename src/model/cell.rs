//! `UnitCell`: a periodic box as lengths and angles and as a 3x3 matrix, with conversions.
//!
//! Convention (as PDB CRYST1, GROMACS and MDAnalysis): vector a along x, b in the xy plane,
//! c completing a right-handed cell. Lengths in Angstrom, angles in degrees.

/// A periodic box.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UnitCell {
    /// a, b, c in Angstrom.
    pub lengths_angstrom: [f64; 3],
    /// alpha (b,c), beta (a,c), gamma (a,b) in degrees.
    pub angles_degree: [f64; 3],
    /// The corner the box vectors start from, in Angstrom: zero for most MD formats (GROMACS, PDB,
    /// AMBER, CHARMM), a LAMMPS data file's `xlo ylo zlo`, minus half the vectors' sum for a
    /// DL_POLY cell centred on the origin. Only where the box is drawn depends on it.
    pub origin_angstrom: [f64; 3],
}

impl UnitCell {
    /// From lengths (Angstrom) and angles (degrees).
    pub fn new(lengths_angstrom: [f64; 3], angles_degree: [f64; 3]) -> UnitCell {
        UnitCell {
            lengths_angstrom,
            angles_degree,
            origin_angstrom: [0.0; 3],
        }
    }

    /// The same box starting from `origin_angstrom`.
    pub fn with_origin(self, origin_angstrom: [f64; 3]) -> UnitCell {
        UnitCell {
            origin_angstrom,
            ..self
        }
    }

    /// The same box centred on `center_angstrom` (a DL_POLY cell is centred on the origin).
    pub fn centred_on(self, center_angstrom: [f64; 3]) -> UnitCell {
        let m = self.matrix_angstrom();
        let origin = std::array::from_fn(|k| center_angstrom[k] - 0.5 * (m[0][k] + m[1][k] + m[2][k]));
        self.with_origin(origin)
    }

    /// An orthorhombic box.
    pub fn orthorhombic(lengths_angstrom: [f64; 3]) -> UnitCell {
        UnitCell::new(lengths_angstrom, [90.0; 3])
    }

    /// From box vectors (rows a, b, c, Angstrom). Any orientation is accepted; only lengths and
    /// angles are kept (the matrix is rebuilt in the canonical orientation).
    pub fn from_vectors(v_angstrom: [[f64; 3]; 3]) -> UnitCell {
        let len = |v: [f64; 3]| (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
        let dot = |u: [f64; 3], w: [f64; 3]| u[0] * w[0] + u[1] * w[1] + u[2] * w[2];
        let [a, b, c] = v_angstrom;
        let (la, lb, lc) = (len(a), len(b), len(c));
        let angle = |u, w, lu: f64, lw: f64| {
            if lu > 0.0 && lw > 0.0 {
                (dot(u, w) / (lu * lw)).clamp(-1.0, 1.0).acos().to_degrees()
            } else {
                90.0
            }
        };
        UnitCell::new(
            [la, lb, lc],
            [angle(b, c, lb, lc), angle(a, c, la, lc), angle(a, b, la, lb)],
        )
    }

    /// Box vectors as rows a, b, c in Angstrom (a along x, b in the xy plane).
    pub fn matrix_angstrom(&self) -> [[f64; 3]; 3] {
        let [a, b, c] = self.lengths_angstrom;
        let [al, be, ga] = self.angles_degree.map(f64::to_radians);
        // Snap cosines of exact right angles to zero so orthorhombic boxes stay exactly diagonal.
        let cos = |x: f64| {
            if (x - std::f64::consts::FRAC_PI_2).abs() < 1e-12 {
                0.0
            } else {
                x.cos()
            }
        };
        let (ca, cb, cg) = (cos(al), cos(be), cos(ga));
        let sg = ga.sin();
        let bx = b * cg;
        let by = b * sg;
        let cx = c * cb;
        let cy = if sg.abs() > 1e-12 { c * (ca - cb * cg) / sg } else { 0.0 };
        let cz2 = c * c - cx * cx - cy * cy;
        let cz = if cz2 > 0.0 { cz2.sqrt() } else { 0.0 };
        [[a, 0.0, 0.0], [bx, by, 0.0], [cx, cy, cz]]
    }

    /// Where to draw the box for atoms at `positions_angstrom`: its own origin when the file gave
    /// one; for a box starting at zero (most formats, and those that do not say: DCD, XTC), the
    /// placement of the two conventions that holds more of the atoms, from zero (GROMACS, AMBER)
    /// or centred on zero (CHARMM and NAMD systems, a LAMMPS box from -L/2). Counts at most about
    /// 8,000 atoms, evenly spread.
    pub fn drawn_origin_angstrom(&self, positions_angstrom: &[[f32; 3]]) -> [f64; 3] {
        if self.origin_angstrom != [0.0; 3] || positions_angstrom.is_empty() || !self.is_valid() {
            return self.origin_angstrom;
        }
        let centred = self.centred_on([0.0; 3]).origin_angstrom;
        let image = crate::model::select::MinImage::new(self);
        let inside = |origin: [f64; 3]| -> usize {
            let stride = (positions_angstrom.len() / 8192).max(1);
            positions_angstrom
                .iter()
                .step_by(stride)
                .filter(|p| {
                    let f = image.fractional(std::array::from_fn(|k| f64::from(p[k]) - origin[k]));
                    f.iter().all(|x| (-1e-3..=1.0 + 1e-3).contains(x))
                })
                .count()
        };
        if inside(centred) > inside([0.0; 3]) {
            centred
        } else {
            [0.0; 3]
        }
    }

    /// Volume in cubic Angstrom (0 for a degenerate box).
    pub fn volume_angstrom3(&self) -> f64 {
        let m = self.matrix_angstrom();
        (m[0][0] * m[1][1] * m[2][2]).abs()
    }

    /// True when all angles are 90 degrees (to 1e-6).
    pub fn is_orthorhombic(&self) -> bool {
        self.angles_degree.iter().all(|a| (a - 90.0).abs() < 1e-6)
    }

    /// True when every length is finite and positive, every angle in (0, 180) and the volume is
    /// positive.
    pub fn is_valid(&self) -> bool {
        self.lengths_angstrom.iter().all(|l| l.is_finite() && *l > 0.0)
            && self
                .angles_degree
                .iter()
                .all(|a| a.is_finite() && *a > 0.0 && *a < 180.0)
            && self.volume_angstrom3() > 0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matrix_round_trip_triclinic() {
        let cell = UnitCell::new([30.0, 31.0, 32.0], [60.0, 70.0, 80.0]);
        let back = UnitCell::from_vectors(cell.matrix_angstrom());
        for k in 0..3 {
            assert!((back.lengths_angstrom[k] - cell.lengths_angstrom[k]).abs() < 1e-9);
            assert!((back.angles_degree[k] - cell.angles_degree[k]).abs() < 1e-9);
        }
    }

    #[test]
    fn orthorhombic_volume() {
        let cell = UnitCell::orthorhombic([10.0, 20.0, 30.0]);
        assert!((cell.volume_angstrom3() - 6000.0).abs() < 1e-9);
        assert!(cell.is_orthorhombic());
        assert_eq!(cell.matrix_angstrom()[1][0], 0.0);
    }
}
