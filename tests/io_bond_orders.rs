//! Bond orders as mol2 files give them (`Structure::multiple_bonds`), against MDAnalysis 2.11's
//! reading of the same files (`tests/data/md/mdanalysis_mol2_orders.json`); SD files' orders are
//! held to RDKit in `tests/io_sdf.rs`. A ligand joined to a protein keeps its orders, renumbered,
//! and a subset written out keeps those among its atoms.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use orbitfield::model::BondOrder;
use std::path::PathBuf;

fn md(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/md")
        .join(name)
}

fn code(o: BondOrder) -> &'static str {
    match o {
        BondOrder::Double => "2",
        BondOrder::Triple => "3",
        BondOrder::Aromatic => "ar",
    }
}

#[test]
fn mol2_bond_orders_are_mdanalysis_s() {
    let text = std::fs::read_to_string(md("mdanalysis_mol2_orders.json")).unwrap();
    let reference: serde_json::Value = serde_json::from_str(&text).unwrap();
    let files = reference["files"].as_object().unwrap();
    assert_eq!(files.len(), 2);
    for (name, want) in files {
        let system = orbitfield::io::load(&[md(name)]).unwrap();
        let s = &system.structure;
        assert_eq!(s.bonds.len() as u64, want["n_bonds"].as_u64().unwrap(), "{name}");
        let want: Vec<(u32, u32, String)> = want["multiple_bonds"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r[0].as_u64().unwrap() as u32,
                    r[1].as_u64().unwrap() as u32,
                    r[2].as_str().unwrap().to_string(),
                )
            })
            .collect();
        assert!(!want.is_empty(), "{name}");
        let ours: Vec<(u32, u32, String)> = s
            .multiple_bonds
            .iter()
            .map(|&([a, b], o)| (a, b, code(o).to_string()))
            .collect();
        assert_eq!(ours, want, "{name}");
    }
}

#[test]
fn a_joined_ligand_and_a_written_subset_keep_their_orders() {
    let protein = md("adk_open.pqr");
    let ligand = md("zinc_856218.mol2");
    let alone = orbitfield::io::load(std::slice::from_ref(&ligand)).unwrap();
    let joined = orbitfield::io::load(&[protein.clone(), ligand]).unwrap();
    let n0 = orbitfield::io::load(&[protein]).unwrap().structure.len() as u32;
    let shifted: Vec<([u32; 2], BondOrder)> = alone
        .structure
        .multiple_bonds
        .iter()
        .map(|&([a, b], o)| ([a + n0, b + n0], o))
        .collect();
    assert_eq!(joined.structure.multiple_bonds, shifted);
    // The ligand's atoms alone, as `save atoms` writes them: its own numbering again.
    let idx: Vec<u32> = (n0..joined.structure.len() as u32).collect();
    let sub = orbitfield::io::write::subset(&joined.structure, Some(&idx));
    assert_eq!(sub.multiple_bonds, alone.structure.multiple_bonds);
}
