//! Hydrogen bonds (`analysis::hbonds`) against MDAnalysis 2.11's HydrogenBondAnalysis with the same
//! criteria (`tests/data/hbonds/make_reference.py`): a protein with hydrogens (adk, PSF + DCD), the
//! same protein solvated in a periodic box (GRO + XTC, bonds guessed from distances), and water in a
//! triclinic box (PSF + DCD). Every (donor, hydrogen, acceptor) of each frame must be found and
//! nothing else, except a triple within float32 rounding of the criteria's edges.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use orbitfield::analysis::hbonds::{HBond, HBondCriteria, find};
use orbitfield::io::load::load;
use orbitfield::model::select::MinImage;
use std::collections::BTreeSet;
use std::io::Read;
use std::path::PathBuf;

fn data(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(rel)
}

fn reference() -> serde_json::Value {
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(data("hbonds/reference.json.gz")).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    serde_json::from_str(&text).unwrap()
}

/// D...A distance and D-H...A angle of a triple, minimum image in `mi`.
fn geometry(pos: &[[f32; 3]], mi: Option<&MinImage>, t: [u32; 3]) -> (f64, f64) {
    let p = |i: u32| pos[i as usize].map(f64::from);
    let d = |a: [f64; 3], b: [f64; 3]| match mi {
        Some(m) => m.delta(a, b),
        None => [a[0] - b[0], a[1] - b[1], a[2] - b[2]],
    };
    let dot = |a: [f64; 3], b: [f64; 3]| a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    let (pd, ph, pa) = (p(t[0]), p(t[1]), p(t[2]));
    let da = d(pa, pd);
    let (hd, ha) = (d(pd, ph), d(pa, ph));
    let angle = (dot(hd, ha) / (dot(hd, hd) * dot(ha, ha)).sqrt())
        .clamp(-1.0, 1.0)
        .acos()
        .to_degrees();
    (dot(da, da).sqrt(), angle)
}

fn at_edge(c: &HBondCriteria, (dist, angle): (f64, f64)) -> bool {
    (dist - f64::from(c.distance_angstrom)).abs() < 2e-4 || (angle - f64::from(c.angle_degrees)).abs() < 2e-3
}

#[test]
fn hydrogen_bonds_are_mdanalysis_s_in_every_frame() {
    let reference = reference();
    let criteria = HBondCriteria::default();
    let systems = reference["systems"].as_object().unwrap();
    assert_eq!(systems.len(), 3);
    for (name, sys) in systems {
        let files: Vec<PathBuf> = sys["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| data(&format!("md/{}", f.as_str().unwrap())))
            .collect();
        let mut system = load(&files).unwrap();
        let s = &system.structure;
        assert_eq!(s.len(), sys["atoms"].as_u64().unwrap() as usize, "{name}");
        // Ions are no donors or acceptors in the reference; here their elements say so.
        let picked = vec![true; s.len()];
        let bonds = s.bonds.clone();
        let structure = s.clone();
        for (frame, triples) in sys["frames"].as_object().unwrap() {
            let f: usize = frame.parse().unwrap();
            let fr = system.trajectory.frame(f).unwrap();
            let cell = fr.cell.filter(|c| c.is_valid());
            let mi = cell.as_ref().map(MinImage::new);
            let want: BTreeSet<[u32; 3]> = triples
                .as_array()
                .unwrap()
                .iter()
                .map(|t| [0, 1, 2].map(|k| t[k].as_u64().unwrap() as u32))
                .collect();
            assert!(!want.is_empty(), "{name} frame {f}");
            let set = find(
                &structure,
                &fr.positions_angstrom,
                &picked,
                &bonds,
                cell.as_ref(),
                &criteria,
            );
            assert!(set.with_hydrogens, "{name}");
            let got: BTreeSet<[u32; 3]> = set
                .bonds
                .iter()
                .map(|b: &HBond| [b.donor, b.hydrogen.unwrap(), b.acceptor])
                .collect();
            let mut edge = 0;
            for t in want.symmetric_difference(&got) {
                let g = geometry(&fr.positions_angstrom, mi.as_ref(), *t);
                assert!(
                    at_edge(&criteria, g),
                    "{name} frame {f}: {t:?} (D...A {:.4} Å, D-H...A {:.3}°) is {}",
                    g.0,
                    g.1,
                    if got.contains(t) { "found here only" } else { "missed" }
                );
                edge += 1;
            }
            eprintln!(
                "{name} frame {f}: {} bonds, {} agree, {edge} at the edge",
                want.len(),
                want.len() - edge.min(want.len())
            );
        }
    }
}

#[test]
fn hydrogen_bonds_among_a_selection_need_both_partners_picked() {
    // adk: the bonds among the backbone are the reference's bonds whose three atoms are backbone
    // atoms or backbone amide hydrogens.
    let reference = reference();
    let sys = &reference["systems"]["adk"];
    let mut system = load(&[data("md/adk.psf"), data("md/adk_dims.dcd")]).unwrap();
    let s = system.structure.clone();
    let sel = orbitfield::model::select::Selection::parse("backbone or name HN").unwrap();
    let fr = system.trajectory.frame(40).unwrap();
    let picked = sel.evaluate(&s, Some(&fr));
    let set = find(
        &s,
        &fr.positions_angstrom,
        &picked,
        &s.bonds,
        None,
        &HBondCriteria::default(),
    );
    let want: BTreeSet<[u32; 3]> = sys["frames"]["40"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| [0, 1, 2].map(|k| t[k].as_u64().unwrap() as u32))
        .filter(|t| t.iter().all(|&i| picked[i as usize]))
        .collect();
    let got: BTreeSet<[u32; 3]> = set
        .bonds
        .iter()
        .map(|b| [b.donor, b.hydrogen.unwrap(), b.acceptor])
        .collect();
    assert!(want.len() > 20, "{}", want.len());
    assert_eq!(got, want);
}

#[test]
fn a_neutron_structure_s_deuterium_is_hydrogen_and_donates() {
    // 5PTI (BPTI, joint X-ray/neutron): 229 atoms are deuterium, written D in `type_symbol`.
    let mut system = load(&[data("dssp/5PTI.cif.gz")]).unwrap();
    let fr = system.trajectory.frame(0).unwrap().positions_angstrom;
    let s = &system.structure;
    // The one unknown element is the UNX atom, written X (an unknown atom or ion).
    let unknown: Vec<&str> = (0..s.len())
        .filter(|&i| s.elements[i] == orbitfield::model::Element::UNKNOWN)
        .map(|i| s.resnames[i].as_str())
        .collect();
    assert_eq!(unknown, ["UNX"], "{:?}", system.warnings);
    let deuterium: Vec<usize> = (0..s.len()).filter(|&i| s.names[i].as_str().starts_with('D')).collect();
    assert!(deuterium.len() > 200);
    assert!(
        deuterium
            .iter()
            .all(|&i| s.elements[i] == orbitfield::model::Element::H)
    );
    let picked = vec![true; s.len()];
    let set = find(s, &fr, &picked, &s.bonds, None, &HBondCriteria::default());
    assert!(set.with_hydrogens);
    let by_deuterium = set
        .bonds
        .iter()
        .filter(|b| {
            b.hydrogen
                .is_some_and(|h| s.names[h as usize].as_str().starts_with('D'))
        })
        .count();
    assert!(by_deuterium > 10, "{by_deuterium} of {} bonds", set.bonds.len());
}
