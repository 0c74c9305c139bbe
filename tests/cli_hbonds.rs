//! `orbitfield hbonds`: the occupancy table and the per-frame counts of adk's frames 0 and 40 against
//! MDAnalysis's bonds (`tests/data/hbonds/reference.json.gz`); two selections keep only the bonds
//! between them; criteria out of range are refused and nothing is written.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::collections::BTreeMap;
use std::io::Read;
use std::path::PathBuf;
use std::process::Command;

fn data(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(rel)
}

/// MDAnalysis's (donor, hydrogen, acceptor) triples of adk's frame `f`.
fn reference(f: usize) -> Vec<[u64; 3]> {
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(data("hbonds/reference.json.gz")).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["systems"]["adk"]["frames"][f.to_string()]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| [0, 1, 2].map(|k| t[k].as_u64().unwrap()))
        .collect()
}

fn orbitfield(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_orbitfield"))
        .args(args)
        .output()
        .unwrap()
}

fn adk() -> [String; 2] {
    [
        data("md/adk.psf").display().to_string(),
        data("md/adk_dims.dcd").display().to_string(),
    ]
}

#[test]
fn occupancies_and_counts_are_mdanalysis_s_bonds() {
    let [psf, dcd] = adk();
    let out = orbitfield(&["hbonds", &psf, &dcd, "--frames", "0:41:40"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    // Each row: occupancy, frames, three labels, three indices.
    let mut got: BTreeMap<[u64; 3], usize> = BTreeMap::new();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let w: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(w.len(), 8, "{line}");
        let n: usize = w[1].parse().unwrap();
        let pct: f64 = w[0].parse().unwrap();
        assert!((pct - 50.0 * n as f64).abs() < 0.05, "{line}");
        got.insert([5, 6, 7].map(|k| w[k].parse().unwrap()), n);
    }
    let mut want: BTreeMap<[u64; 3], usize> = BTreeMap::new();
    for f in [0, 40] {
        for t in reference(f) {
            *want.entry(t).or_insert(0) += 1;
        }
    }
    assert_eq!(got, want);
    assert!(
        text.starts_with("# hydrogen bonds among 'all', 2 frames; D…A ≤ 3.0 Å, D-H…A ≥ 150°"),
        "{text}"
    );

    let out = orbitfield(&["hbonds", &psf, &dcd, "--frames", "0:41:40", "--per-frame"]);
    let text = String::from_utf8(out.stdout).unwrap();
    let rows: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(
        rows,
        vec![
            format!("0 {}", reference(0).len()),
            format!("40 {}", reference(40).len())
        ]
    );
}

#[test]
fn two_selections_keep_the_bonds_between_them() {
    let [psf, dcd] = adk();
    let out = orbitfield(&[
        "hbonds",
        &psf,
        &dcd,
        "--frames",
        "40",
        "--sel",
        "backbone or name HN",
        "--sel2",
        "sidechain",
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let system = orbitfield::io::load(&[data("md/adk.psf")]).unwrap();
    let s = &system.structure;
    let backbone = orbitfield::model::select::Selection::parse("backbone or name HN")
        .unwrap()
        .evaluate(s, None);
    let side = orbitfield::model::select::Selection::parse("sidechain")
        .unwrap()
        .evaluate(s, None);
    let rows: Vec<[usize; 3]> = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            [5, 6, 7].map(|k| w[k].parse().unwrap())
        })
        .collect();
    // MDAnalysis's bonds of frame 40 with one end in each selection.
    let want: Vec<[usize; 3]> = reference(40)
        .into_iter()
        .map(|t| t.map(|x| x as usize))
        .filter(|t| {
            let (d, h, a) = (t[0], t[1], t[2]);
            let union = |i: usize| backbone[i] || side[i];
            union(d) && union(h) && union(a) && ((backbone[d] && side[a]) || (side[d] && backbone[a]))
        })
        .collect();
    let mut rows_sorted = rows.clone();
    rows_sorted.sort();
    let mut want_sorted = want.clone();
    want_sorted.sort();
    assert!(!want.is_empty());
    assert_eq!(rows_sorted, want_sorted);
}

#[test]
fn criteria_out_of_range_are_refused_and_nothing_is_written() {
    let [psf, dcd] = adk();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bonds.txt");
    let out = orbitfield(&["hbonds", &psf, &dcd, "--angle", "200", "-o", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("angle of 200°"), "{err}");
    assert!(!path.exists());
    let out = orbitfield(&["hbonds", &psf, &dcd, "--sel", "resname XYZ"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("'resname XYZ' selects no atoms"));
}
