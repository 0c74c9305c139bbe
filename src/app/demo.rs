//! The embedded demo (the ethylene torsion series, `assets::DEMO_SERIES`) as it opens: playing, its
//! HOMO followed through the frames with the phase kept, the lobes translucent so the six atoms
//! show through, and a caption saying what animates — the H-C-C-H torsion of the frame shown, in
//! degrees, computed from that frame's coordinates.
//!
//! Called by `app::apply` for `Command::OpenDemo`; the 3-D view (`ui::view`) draws
//! [`AppState::demo_caption`].

use super::reps::{RepEdit, RepKind};
use super::state::AppState;
use crate::model::{Element, Structure};

/// The document name the demo opens under.
pub const DEMO_NAME: &str = "ethylene torsion (demo)";

/// Opacity of the demo's orbital lobes (the atoms inside them stay visible).
pub const DEMO_LOBE_OPACITY: f32 = 0.55;

/// The torsion H-C-C-H the demo turns: the two carbons (in file order) and, for each, the first
/// hydrogen of the file nearest to it. `None` unless the structure has exactly two carbons and a
/// hydrogen beside each.
pub fn torsion_atoms(structure: &Structure, positions_angstrom: &[[f32; 3]]) -> Option<[usize; 4]> {
    let carbons: Vec<usize> = (0..structure.len())
        .filter(|&i| structure.elements.get(i) == Some(&Element(6)))
        .collect();
    let [c1, c2] = carbons.as_slice() else {
        return None;
    };
    let hydrogen_of = |c: usize| {
        let pc = positions_angstrom.get(c)?;
        (0..structure.len())
            .filter(|&i| structure.elements.get(i) == Some(&Element(1)))
            .filter_map(|i| Some((i, distance(pc, positions_angstrom.get(i)?))))
            .filter(|(_, d)| *d < 1.3)
            .min_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)))
            .map(|(i, _)| i)
    };
    Some([hydrogen_of(*c1)?, *c1, *c2, hydrogen_of(*c2)?])
}

fn distance(a: &[f32; 3], b: &[f32; 3]) -> f32 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
}

/// The dihedral angle a-b-c-d in degrees (-180..180], IUPAC sign convention; `None` when three of
/// the points are collinear.
pub fn dihedral_degree(p: [[f64; 3]; 4]) -> Option<f64> {
    let sub = |a: [f64; 3], b: [f64; 3]| [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
    let cross = |a: [f64; 3], b: [f64; 3]| {
        [
            a[1] * b[2] - a[2] * b[1],
            a[2] * b[0] - a[0] * b[2],
            a[0] * b[1] - a[1] * b[0],
        ]
    };
    let dot = |a: [f64; 3], b: [f64; 3]| a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    let (b1, b2, b3) = (sub(p[1], p[0]), sub(p[2], p[1]), sub(p[3], p[2]));
    let (n1, n2) = (cross(b1, b2), cross(b2, b3));
    let b2_len = dot(b2, b2).sqrt();
    if dot(n1, n1) < 1e-12 || dot(n2, n2) < 1e-12 || b2_len < 1e-12 {
        return None;
    }
    let m1 = cross(n1, b2.map(|x| x / b2_len));
    let (x, y) = (dot(n1, n2), dot(m1, n2));
    Some(-y.atan2(x).to_degrees())
}

impl AppState {
    /// Opens the embedded demo: playing, the HOMO followed through the frames (phase kept), its
    /// lobes translucent over the atoms.
    pub(crate) fn open_demo(&mut self) {
        let system = match crate::io::load::load_embedded_demo() {
            Ok(s) => s,
            Err(e) => return self.error(format!("the embedded demo could not be read: {e}")),
        };
        self.open_system(DEMO_NAME.into(), system);
        let ids: Vec<_> = self.doc.reps.fields().map(|(r, _)| r.id).collect();
        for id in ids {
            self.edit_rep(id, RepEdit::Opacity(DEMO_LOBE_OPACITY));
        }
        if self.doc.orbital.is_some() {
            self.start_follow();
        }
        self.view.timeline.playing = true;
    }

    /// The caption over the 3-D view while the demo is open: "H3-C1-C2-H5 torsion 90.0° (frame 18 of
    /// 0–36)", from the coordinates of the frame shown; frames numbered from 0, as the timeline and
    /// the `frame` command number them.
    pub fn demo_caption(&self) -> Option<String> {
        let doc = self.document().filter(|d| d.name == DEMO_NAME)?;
        let pos = &doc.frame.positions_angstrom;
        let atoms = torsion_atoms(&doc.structure, pos)?;
        let points = atoms.map(|i| pos.get(i).map(|p| p.map(f64::from)));
        let [Some(a), Some(b), Some(c), Some(d)] = points else {
            return None;
        };
        let angle = dihedral_degree([a, b, c, d])?;
        let name = |i: usize| {
            let s = &doc.structure;
            let symbol = s.elements.get(i).map_or("?", |e| e.symbol());
            format!("{symbol}{}", i + 1)
        };
        Some(format!(
            "{}-{}-{}-{} torsion {:.1}° (frame {} of 0–{}); the lobes show the {}",
            name(atoms[0]),
            name(atoms[1]),
            name(atoms[2]),
            name(atoms[3]),
            angle.abs(),
            doc.frame_index,
            doc.n_frames.saturating_sub(1),
            self.doc
                .reps
                .fields()
                .find(|(r, _)| r.visible)
                .map_or_else(|| "orbital".to_string(), |(_, f)| self.describe_field(f.field)),
        ))
    }

    /// Whether the demo's lobes are translucent (every field representation below opaque).
    pub fn demo_lobes_translucent(&self) -> bool {
        self.doc.reps.list.iter().all(|r| match &r.kind {
            RepKind::Field(f) => f.opacity < 1.0,
            _ => true,
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn dihedral_of_known_geometries() {
        // cis (0), trans (180) and a right-handed 90 degree twist about the x axis.
        let b = [0.0, 0.0, 0.0];
        let c = [1.5, 0.0, 0.0];
        let a = [-0.5, 1.0, 0.0];
        let cis = [2.0, 1.0, 0.0];
        let trans = [2.0, -1.0, 0.0];
        let twist = [2.0, 0.0, 1.0];
        assert!(dihedral_degree([a, b, c, cis]).unwrap().abs() < 1e-9);
        assert!((dihedral_degree([a, b, c, trans]).unwrap().abs() - 180.0).abs() < 1e-9);
        assert!((dihedral_degree([a, b, c, twist]).unwrap().abs() - 90.0).abs() < 1e-9);
        assert_eq!(dihedral_degree([a, b, [2.0, 0.0, 0.0], cis]).map(|_| ()), Some(()));
        assert_eq!(dihedral_degree([[1.0, 0.0, 0.0], b, c, cis]), None);
    }
}
