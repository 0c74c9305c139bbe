//! B-factors and occupancies: read from PDB (columns 61-66 and 55-60), mmCIF and BinaryCIF
//! (`B_iso_or_equiv`, `occupancy`), held three ways: each PDB file's fixed columns parsed here from
//! its text, the PDB and mmCIF files of one entry (4E43) atom for atom, and the mmCIF and BinaryCIF
//! files of two entries (1f2n, 3o5r). Then what uses them: the selections `beta > B` and
//! `occupancy < 1` (VMD's keywords) against the values, colouring by B-factor (blue low, red high,
//! grey without), and a PDB written and read again.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use orbitfield::app::atoms::{AtomColoring, atom_colors, bfactor_range};
use orbitfield::io::load::load;
use orbitfield::model::select::Selection;
use std::io::Read;
use std::path::PathBuf;

fn data(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(rel)
}

/// The first model's occupancies and B-factors, from a gzipped PDB file's fixed columns.
fn pdb_columns(rel: &str) -> (Vec<f32>, Vec<f32>) {
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(data(rel)).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    let (mut occ, mut b) = (Vec::new(), Vec::new());
    for line in text.lines() {
        if line.starts_with("ENDMDL") {
            break;
        }
        if line.starts_with("ATOM  ") || line.starts_with("HETATM") {
            occ.push(line[54..60].trim().parse().unwrap());
            b.push(line[60..66].trim().parse().unwrap());
        }
    }
    (occ, b)
}

fn close(what: &str, a: &[f32], b: &[f32], tol: f32) {
    assert_eq!(a.len(), b.len(), "{what}");
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert!((x - y).abs() <= tol, "{what}: atom {i}: {x} against {y}");
    }
}

#[test]
fn pdb_mmcif_and_binarycif_give_the_same_values() {
    let (occ, b) = pdb_columns("md/4E43.pdb.gz");
    let pdb = load(&[data("md/4E43.pdb.gz")]).unwrap().structure;
    close("4E43.pdb B", pdb.bfactors.as_ref().unwrap(), &b, 0.0);
    close("4E43.pdb occupancy", pdb.occupancies.as_ref().unwrap(), &occ, 0.0);
    assert!(b.iter().any(|&x| x != b[0]), "the B-factors differ between atoms");
    let cif = load(&[data("md/4E43.cif.gz")]).unwrap().structure;
    close(
        "4E43 PDB against mmCIF B",
        pdb.bfactors.as_ref().unwrap(),
        cif.bfactors.as_ref().unwrap(),
        0.006,
    );
    close(
        "4E43 PDB against mmCIF occupancy",
        pdb.occupancies.as_ref().unwrap(),
        cif.occupancies.as_ref().unwrap(),
        0.006,
    );
    for entry in ["1f2n", "3o5r"] {
        let cif = load(&[data(&format!("files2/{entry}.cif.gz"))]).unwrap().structure;
        let bcif = load(&[data(&format!("files2/{entry}.bcif"))]).unwrap().structure;
        close(
            &format!("{entry} mmCIF against BinaryCIF B"),
            cif.bfactors.as_ref().unwrap(),
            bcif.bfactors.as_ref().unwrap(),
            1e-3,
        );
        close(
            &format!("{entry} occupancy"),
            cif.occupancies.as_ref().unwrap(),
            bcif.occupancies.as_ref().unwrap(),
            1e-3,
        );
    }
    // A file without the columns has none.
    let psf = load(&[data("md/adk.psf"), data("md/adk_dims.dcd")]).unwrap().structure;
    assert!(psf.bfactors.is_none() && psf.occupancies.is_none());
}

#[test]
fn selections_colours_and_a_written_pdb_use_them() {
    let mut system = load(&[data("md/4E43.pdb.gz")]).unwrap();
    let s = system.structure.clone();
    let b = s.bfactors.clone().unwrap();
    let occ = s.occupancies.clone().unwrap();
    let mut sorted = b.clone();
    sorted.sort_by(f32::total_cmp);
    let cut = sorted[sorted.len() * 3 / 4];
    let picked = Selection::parse(&format!("beta > {cut}")).unwrap().evaluate(&s, None);
    for i in 0..s.len() {
        assert_eq!(picked[i], b[i] > cut, "atom {i}: B {}", b[i]);
    }
    assert!(picked.iter().any(|&p| p) && !picked.iter().all(|&p| p));
    let partial = Selection::parse("occupancy < 1").unwrap().evaluate(&s, None);
    for i in 0..s.len() {
        assert_eq!(partial[i], occ[i] < 1.0, "atom {i}");
    }
    assert_eq!(
        Selection::parse("bfactor > 0").unwrap().evaluate(&s, None),
        Selection::parse("beta > 0").unwrap().evaluate(&s, None)
    );

    // Blue low, red high; grey without B-factors.
    let colours = atom_colors(&s, AtomColoring::BFactor);
    let [lo, hi] = bfactor_range(&b);
    assert!(lo < hi);
    for (i, c) in colours.iter().enumerate() {
        if b[i] <= lo {
            assert!(c[2] > c[0] + 60, "atom {i} (B {}) is blue: {c:?}", b[i]);
        } else if b[i] >= hi {
            assert!(c[0] > c[2] + 60, "atom {i} (B {}) is red: {c:?}", b[i]);
        }
    }
    let mut none = s.clone();
    none.bfactors = None;
    assert!(
        atom_colors(&none, AtomColoring::BFactor)
            .iter()
            .all(|c| *c == [160, 160, 160, 255])
    );
    assert_eq!(AtomColoring::parse("beta"), Some(AtomColoring::BFactor));

    // Written and read again.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("4e43.pdb");
    orbitfield::io::write::write_frames(&out, &s, &mut system.trajectory, None, &[0], &mut |_| {}).unwrap();
    let back = load(&[out]).unwrap().structure;
    close("written B", back.bfactors.as_ref().unwrap(), &b, 0.006);
    close("written occupancy", back.occupancies.as_ref().unwrap(), &occ, 0.006);
}

/// Atoms coloured by B-factor take the viewer's diverging map (blue low, red high) across the 2nd
/// to 98th percentile of their values; a cartoon coloured by B-factor takes the same map across its
/// CAs' values, each residue its CA's colour.
#[test]
fn the_cartoon_takes_its_ca_b_factors() {
    use orbitfield::analysis::dssp::DsspOptions;
    use orbitfield::analysis::polymer::{Coloring, Polymer, bfactor_color};
    use orbitfield::render::colormap::Colormap;
    let mut system = load(&[data("md/4E43.pdb.gz")]).unwrap();
    let s = system.structure.clone();
    let b = s.bfactors.clone().unwrap();
    let [lo, hi] = bfactor_range(&b);
    let colours = atom_colors(&s, AtomColoring::BFactor);
    for (i, &x) in b.iter().enumerate() {
        let t = ((x - lo) / (hi - lo)).clamp(0.0, 1.0);
        assert_eq!(colours[i], Colormap::Diverging.sample(t), "atom {i}: B {x}");
    }
    let positions = system.trajectory.frame(0).unwrap().positions_angstrom;
    let polymer = Polymer::new(&s);
    let secondary = polymer.protein.assign(&positions, &DsspOptions::default());
    let segments = polymer.segments(&positions, &secondary, Coloring::BFactor, None);
    use orbitfield::surface::cartoon::Segment;
    let used: std::collections::BTreeSet<[u8; 4]> = segments
        .iter()
        .flat_map(|seg| match seg {
            Segment::Protein(r) => r.iter().map(|x| x.color).collect::<Vec<_>>(),
            Segment::Nucleic(r) => r.iter().map(|x| x.color).collect(),
        })
        .collect();
    // The CAs on a scale of their own: the coldest blue, the hottest red.
    let cas: Vec<usize> = (0..s.len())
        .filter(|&i| s.names[i].as_str() == "CA" && s.resnames[i].as_str() != "CA")
        .collect();
    let ca_b: Vec<f32> = cas.iter().map(|&i| b[i]).collect();
    let range = bfactor_range(&ca_b);
    let expected: Vec<[u8; 4]> = ca_b.iter().map(|&x| bfactor_color(x, range)).collect();
    let hottest = expected[ca_b.iter().enumerate().max_by(|x, y| x.1.total_cmp(y.1)).unwrap().0];
    let coldest = expected[ca_b.iter().enumerate().min_by(|x, y| x.1.total_cmp(y.1)).unwrap().0];
    assert!(used.contains(&hottest) && used.contains(&coldest), "{used:?}");
    assert!(hottest[0] > hottest[2] + 60 && coldest[2] > coldest[0] + 60);
    assert!(used.iter().all(|c| expected.contains(c)), "every colour is a CA's");
    assert_eq!(Coloring::parse("beta"), Some(Coloring::BFactor));
}
