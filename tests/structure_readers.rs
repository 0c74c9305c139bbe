//! Structure readers (PDB, PQR, PSF, GRO, XYZ, mmCIF) on the real MDAnalysisTests files, checked
//! against numbers MDAnalysis 2.11.0 reports for the same files (tests/data/md/mdanalysis_reference.json),
//! the gemmi conversion of the NMR PDB to mmCIF, and damaged copies of the files.

use orbitfield::io::{self, Location, ReadError, load::Parsed};
use orbitfield::model::{BondSource, Element, UnitCell};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/md").join(name)
}

fn bytes(name: &str) -> Vec<u8> {
    std::fs::read(data(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn reference() -> Value {
    serde_json::from_slice(&bytes("mdanalysis_reference.json")).unwrap_or_else(|e| panic!("reference JSON: {e}"))
}

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("expected a number, found {v}"))
}

fn count(v: &Value) -> usize {
    v.as_u64().unwrap_or_else(|| panic!("expected a count, found {v}")) as usize
}

/// Checks the `position` entry of a reference block against parsed frames (1e-3 A).
fn check_position(parsed: &Parsed, r: &Value) {
    let frame = count(&r["frame"]);
    let atom = count(&r["atom"]);
    let got = parsed.frames[frame].positions_angstrom[atom];
    for k in 0..3 {
        let want = num(&r["xyz_angstrom"][k]);
        assert!(
            (f64::from(got[k]) - want).abs() < 1e-3,
            "frame {frame} atom {atom}: {got:?} vs {want}"
        );
    }
}

fn check_box(cell: Option<UnitCell>, r: &Value) {
    let Some(cell) = cell else {
        panic!("expected a box like {r}")
    };
    for k in 0..3 {
        assert!((cell.lengths_angstrom[k] - num(&r[k])).abs() < 1e-3, "{cell:?} vs {r}");
        assert!((cell.angles_degree[k] - num(&r[k + 3])).abs() < 1e-3, "{cell:?} vs {r}");
    }
}

#[test]
fn nmr_pdb_models() {
    let r = &reference()["nmr_neopetrosiamide.pdb"];
    let p = io::pdb::read(&data("nmr_neopetrosiamide.pdb"), &bytes("nmr_neopetrosiamide.pdb")).unwrap();
    let s = &p.structure;
    assert_eq!(s.len(), count(&r["atoms"]));
    assert_eq!(p.frames.len(), count(&r["frames"]));
    assert_eq!(s.residue_count(), count(&r["residues"]));
    assert_eq!(
        s.chain_ids().iter().map(|c| c.to_string()).collect::<Vec<_>>(),
        vec!["A"]
    );
    assert_eq!(s.bonds.len(), count(&r["bonds"]));
    assert_eq!(s.bond_source, BondSource::File);
    check_position(&p, &r["position"]);
    // Model 24, atom 101 as the file prints it (line 9515 of the file).
    assert_eq!(p.frames[23].positions_angstrom[100], [1.083, -2.343, 1.749]);
    // CRYST1 1 1 1 is the NMR "no cell" convention.
    assert!(p.frames.iter().all(|f| f.cell.is_none()));
    // Element column present throughout: no unknown atoms.
    assert!(!s.elements.contains(&Element::UNKNOWN));
    // Element counts of model 1 as its columns 77-78 give them (awk over the file): C 129, H 182,
    // N 35, O 39, S 7 (six Cys and a methionine sulfoxide).
    let counts: Vec<usize> = [Element::C, Element::H, Element::N, Element::O, Element::S]
        .iter()
        .map(|z| s.elements.iter().filter(|e| *e == z).count())
        .collect();
    assert_eq!(counts, vec![129, 182, 35, 39, 7]);
}

#[test]
fn mmcif_from_gemmi_matches_the_pdb() {
    let pdb = io::pdb::read(&data("nmr_neopetrosiamide.pdb"), &bytes("nmr_neopetrosiamide.pdb")).unwrap();
    let cif = io::mmcif::read(&data("nmr_neopetrosiamide.cif"), &bytes("nmr_neopetrosiamide.cif")).unwrap();
    let (a, b) = (&pdb.structure, &cif.structure);
    assert_eq!(b.len(), a.len());
    assert_eq!(b.names, a.names);
    assert_eq!(b.resnames, a.resnames);
    assert_eq!(b.resids, a.resids);
    assert_eq!(b.chains, a.chains);
    assert_eq!(b.elements, a.elements);
    assert_eq!(cif.frames.len(), pdb.frames.len());
    for (fa, fb) in pdb.frames.iter().zip(&cif.frames) {
        for (pa, pb) in fa.positions_angstrom.iter().zip(&fb.positions_angstrom) {
            for k in 0..3 {
                assert!((pa[k] - pb[k]).abs() < 1e-3);
            }
        }
        assert_eq!(fb.cell, None);
    }
}

#[test]
fn pqr_charges_and_radii() {
    let r = &reference()["adk_open.pqr"];
    let p = io::pdb::read_pqr(&data("adk_open.pqr"), &bytes("adk_open.pqr")).unwrap();
    let s = &p.structure;
    assert_eq!(s.len(), count(&r["atoms"]));
    assert_eq!(s.residue_count(), count(&r["residues"]));
    assert_eq!(p.frames.len(), 1);
    let q = s.total_charge_e().unwrap();
    assert!((q - -4.0).abs() < 1e-3, "total charge {q}");
    assert!((q - num(&r["total_charge_e"])).abs() < 1e-4);
    check_position(&p, &r["position"]);
    let radius = s.radii_angstrom.as_ref().unwrap()[100];
    assert!((f64::from(radius) - num(&r["radius_of_atom_100"])).abs() < 1e-6);
    assert!(!s.elements.contains(&Element::UNKNOWN));
}

#[test]
fn psf_adk() {
    let r = &reference()["adk.psf"];
    let p = io::psf::read(&data("adk.psf"), &bytes("adk.psf")).unwrap();
    let s = &p.structure;
    assert_eq!(s.len(), count(&r["atoms"]));
    assert_eq!(s.residue_count(), count(&r["residues"]));
    assert_eq!(s.chain_ids().len(), count(&r["segments"]));
    assert_eq!(s.bonds.len(), count(&r["bonds"]));
    let q = s.total_charge_e().unwrap();
    assert!((q - -4.0).abs() < 1e-3, "total charge {q}");
    let a = &r["first_atom"];
    assert_eq!(s.segids[0].as_str(), a["segid"].as_str().unwrap());
    assert_eq!(s.resnames[0].as_str(), a["resname"].as_str().unwrap());
    assert_eq!(s.names[0].as_str(), a["name"].as_str().unwrap());
    assert_eq!(s.types[0].as_str(), a["type"].as_str().unwrap());
    assert!((f64::from(s.mass_dalton(0)) - num(&a["mass"])).abs() < 1e-4);
    assert!(p.frames.is_empty());
    assert!(!s.elements.contains(&Element::UNKNOWN));
}

#[test]
fn psf_water_box_and_xplor_protein() {
    let reference = reference();
    for name in ["tip125_tric_C36.psf", "2r9r-1b.psf"] {
        let r = &reference[name];
        let p = io::psf::read(&data(name), &bytes(name)).unwrap();
        let s = &p.structure;
        assert_eq!(s.len(), count(&r["atoms"]), "{name}");
        assert_eq!(s.residue_count(), count(&r["residues"]), "{name}");
        assert_eq!(s.bonds.len(), count(&r["bonds"]), "{name}");
        assert!(
            (s.total_charge_e().unwrap() - num(&r["total_charge_e"])).abs() < 1e-3,
            "{name}"
        );
    }
    // X-PLOR types are names.
    let p = io::psf::read(&data("2r9r-1b.psf"), &bytes("2r9r-1b.psf")).unwrap();
    assert_eq!(p.structure.types[0].as_str(), "NH1");
    assert_eq!(p.structure.resids[0], 380);
}

#[test]
fn gro_truncated_dodecahedron() {
    let r = &reference()["adk_oplsaa.gro"];
    let p = io::gro::read(&data("adk_oplsaa.gro"), &bytes("adk_oplsaa.gro")).unwrap();
    let s = &p.structure;
    assert_eq!(s.len(), count(&r["atoms"]));
    assert_eq!(s.residue_count(), count(&r["residues"]));
    assert_eq!(p.frames.len(), 1);
    check_box(p.frames[0].cell, &r["boxes"][0]);
    check_position(&p, &r["position"]);
    // The last atom line reads `11302NA+     NA47681   6.296   4.724   0.375`.
    assert_eq!(p.frames[0].positions_angstrom[47680], [62.96, 47.24, 3.75]);
    let last = &r["last_atom"];
    assert_eq!(s.resids[47680] as u64, last["resid"].as_u64().unwrap());
    assert_eq!(s.resnames[47680].as_str(), last["resname"].as_str().unwrap());
    assert_eq!(s.names[47680].as_str(), last["name"].as_str().unwrap());
    assert_eq!(s.elements[47680], Element(11));
    // The only atoms without an element are the TIP4P virtual sites (MW), massless by design.
    let unknown: Vec<&str> = (0..s.len())
        .filter(|&i| s.elements[i] == Element::UNKNOWN)
        .map(|i| s.names[i].as_str())
        .collect();
    assert!(
        !unknown.is_empty() && unknown.iter().all(|n| *n == "MW"),
        "{:?}",
        &unknown[..unknown.len().min(5)]
    );
}

#[test]
fn xyz_frames() {
    let r = &reference()["2r9r-1b.xyz"];
    let p = io::xyz::read(&data("2r9r-1b.xyz"), &bytes("2r9r-1b.xyz")).unwrap();
    assert_eq!(p.structure.len(), count(&r["atoms"]));
    assert_eq!(p.frames.len(), count(&r["frames"]));
    check_position(&p, &r["position"]);
}

/// For each atom: its element and the sorted elements of its bonded neighbours; sorted overall.
fn bond_signatures(elements: &[Element], bonds: &[[u32; 2]]) -> Vec<(u8, Vec<u8>)> {
    let mut neighbours = vec![Vec::new(); elements.len()];
    for b in bonds {
        neighbours[b[0] as usize].push(elements[b[1] as usize].0);
        neighbours[b[1] as usize].push(elements[b[0] as usize].0);
    }
    let mut out: Vec<(u8, Vec<u8>)> = elements
        .iter()
        .zip(neighbours)
        .map(|(e, mut n)| {
            n.sort_unstable();
            (e.0, n)
        })
        .collect();
    out.sort();
    out
}

#[test]
fn loader_guesses_bonds_that_match_the_charmm_topology() {
    // adk_open.pqr (PDB2PQR) and adk.psf (CHARMM) describe the same protein, with different atom
    // names and order: the bonds guessed from the PQR coordinates must give every atom the same
    // bonded-neighbour elements as the CHARMM topology does, atom for atom up to order.
    let sys = io::load(&[data("adk_open.pqr")]).unwrap();
    let s = &sys.structure;
    assert_eq!(s.bond_source, BondSource::Guessed);
    let psf = io::psf::read(&data("adk.psf"), &bytes("adk.psf")).unwrap();
    assert_eq!(s.bonds.len(), psf.structure.bonds.len());
    assert_eq!(
        bond_signatures(&s.elements, &s.bonds),
        bond_signatures(&psf.structure.elements, &psf.structure.bonds)
    );
}

#[test]
fn loader_keeps_file_bonds() {
    let sys = io::load(&[data("nmr_neopetrosiamide.pdb")]).unwrap();
    assert_eq!(sys.structure.bond_source, BondSource::File);
    let sys = io::load(&[data("adk_oplsaa.gro")]).unwrap();
    assert_eq!(sys.structure.bond_source, BondSource::Guessed);
    // Every water has two O-H bonds and no H-H bond; the 3 waters' worth of atoms bond-count check
    // is on the whole system: 47681 atoms include 14,000+ waters.
    let s = &sys.structure;
    let water_hh = s
        .bonds
        .iter()
        .filter(|b| s.elements[b[0] as usize] == Element::H && s.elements[b[1] as usize] == Element::H)
        .count();
    assert_eq!(water_hh, 0);
}

// ---- damaged input -------------------------------------------------------------------------

fn expect_line_error(result: Result<Parsed, ReadError>, path: &Path, what: &str) -> ReadError {
    let e = result.err().unwrap_or_else(|| panic!("{what}: expected an error"));
    assert_eq!(e.path, path, "{what}: {e}");
    assert!(
        matches!(e.location, Location::Line(n) if n >= 1),
        "{what}: no line in {e}"
    );
    let shown = e.to_string();
    assert!(
        shown.contains(&path.display().to_string()) && shown.contains("expected") || shown.contains("declares"),
        "{what}: {shown}"
    );
    e
}

type Reader = fn(&Path, &[u8]) -> Result<Parsed, ReadError>;

fn readers() -> Vec<(&'static str, Reader)> {
    vec![
        ("nmr_neopetrosiamide.pdb", io::pdb::read as Reader),
        ("adk_open.pqr", io::pdb::read_pqr),
        ("adk.psf", io::psf::read),
        ("adk_oplsaa.gro", io::gro::read),
        ("2r9r-1b.xyz", io::xyz::read),
        ("nmr_neopetrosiamide.cif", io::mmcif::read),
    ]
}

#[test]
fn empty_files_are_errors() {
    for (name, read) in readers() {
        let path = PathBuf::from(format!("empty/{name}"));
        expect_line_error(read(&path, b""), &path, name);
        expect_line_error(read(&path, b"\n\n  \n"), &path, name);
    }
}

#[test]
fn wrong_format_is_an_error() {
    let gro = bytes("adk_oplsaa.gro");
    let pdb = bytes("nmr_neopetrosiamide.pdb");
    let cases: Vec<(&str, Reader, &[u8])> = vec![
        ("gro-as.pdb", io::pdb::read, &gro),
        ("gro-as.pqr", io::pdb::read_pqr, &gro),
        ("pdb-as.psf", io::psf::read, &pdb),
        ("pdb-as.gro", io::gro::read, &pdb),
        ("pdb-as.xyz", io::xyz::read, &pdb),
        ("pdb-as.cif", io::mmcif::read, &pdb),
        ("binary.pdb", io::pdb::read, &[0u8, 159, 146, 150, 255, 10, 0]),
    ];
    for (name, read, content) in cases {
        let path = PathBuf::from(name);
        expect_line_error(read(&path, content), &path, name);
    }
}

#[test]
fn truncated_files_are_errors() {
    // Cut each file in the middle of its atoms (PDB and PQR files are read record by record
    // and a cut file is a valid shorter one, so they are cut inside a coordinate field instead).
    for (name, read) in readers() {
        let full = bytes(name);
        // The PSF is cut inside its atom section (its second half holds sections not read).
        let fraction = if name.ends_with(".psf") { 5 } else { 2 };
        let mut cut = full[..full.len() / fraction].to_vec();
        if name.ends_with(".pdb") || name.ends_with(".pqr") || name.ends_with(".cif") {
            let line_start = cut.iter().rposition(|&c| c == b'\n').unwrap() + 1;
            cut.truncate(line_start + 40);
        }
        let path = PathBuf::from(format!("cut/{name}"));
        if name == "nmr_neopetrosiamide.pdb" || name == "2r9r-1b.xyz" {
            // A multi-model PDB or multi-frame XYZ cut inside a later frame keeps its complete
            // frames and says so.
            let p = read(&path, &cut).unwrap();
            assert!(!p.frames.is_empty() && p.frames.len() < 24, "{} frames", p.frames.len());
            assert!(
                !p.warnings.iter().any(|w| w.contains("where the first has")),
                "{:?}",
                p.warnings
            );
            let w = p.warnings.join("; ");
            assert!(
                w.contains(&format!(
                    "{} complete frames found, the next one starts at line",
                    p.frames.len()
                )),
                "{w}"
            );
            continue;
        }
        let e = expect_line_error(read(&path, &cut), &path, name);
        let Location::Line(line) = e.location else {
            unreachable!()
        };
        let lines_in_cut = cut.iter().filter(|&&c| c == b'\n').count() + 1;
        assert!(
            line <= lines_in_cut + 1,
            "{name}: error at line {line} past the {lines_in_cut} lines: {e}"
        );
    }
}

#[test]
fn garbled_coordinates_are_located() {
    let cases = [
        (
            "nmr_neopetrosiamide.pdb",
            "  -8.345   0.512  -0.486",
            "  -8.345   0.5x2  -0.486",
            253,
        ),
        ("adk_open.pqr", "-11.921   26.307", "-11.921   26.3#7", 13),
        (
            "adk_oplsaa.gro",
            "   5.202   4.356   3.155",
            "   5.202   4.3?6   3.155",
            3,
        ),
        (
            "2r9r-1b.xyz",
            "H   0.931  17.318  16.423",
            "H   0.931  17.3!8  16.423",
            3,
        ),
        ("adk.psf", "-0.300000       14.0070", "-0.30x000       14.0070", 8),
    ];
    let map: std::collections::HashMap<_, _> = readers().into_iter().collect();
    for (name, from, to, line) in cases {
        let text = String::from_utf8(bytes(name)).unwrap();
        assert!(text.contains(from), "{name}");
        let garbled = text.replacen(from, to, 1);
        let path = PathBuf::from(format!("garbled/{name}"));
        let e = expect_line_error(map[name](&path, garbled.as_bytes()), &path, name);
        assert_eq!(e.location, Location::Line(line), "{name}: {e}");
    }
}

#[test]
fn huge_declared_counts_do_not_allocate() {
    let cases: Vec<(&str, Reader, String)> = vec![
        (
            "huge.gro",
            io::gro::read,
            "title\n2147483648\n    1SOL     OW    1   0.126   1.624   1.321\n".into(),
        ),
        ("huge.xyz", io::xyz::read, "2147483648\ncomment\nO 0 0 0\n".into()),
        (
            "huge.psf",
            io::psf::read,
            "PSF\n\n       1 !NTITLE\n* t\n\n2147483648 !NATOM\n".into(),
        ),
        (
            "huge-title.psf",
            io::psf::read,
            "PSF\n\n2147483648 !NTITLE\n* t\n".into(),
        ),
        ("huge-bonds.psf", io::psf::read, {
            let text = String::from_utf8(bytes("tip125_tric_C36.psf")).unwrap();
            text.replacen("     375 !NBOND", "2147483648 !NBOND", 1)
        }),
        ("negative.gro", io::gro::read, "title\n-5\n".into()),
    ];
    for (name, read, text) in cases {
        let path = PathBuf::from(name);
        let e = expect_line_error(read(&path, text.as_bytes()), &path, name);
        assert!(
            e.message.contains("2147483648") || e.message.contains("-5"),
            "{name}: {e}"
        );
    }
}

#[test]
fn inconsistent_models_are_named() {
    // Drop one atom from model 3 of the NMR ensemble.
    let text = String::from_utf8(bytes("nmr_neopetrosiamide.pdb")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let model3 = lines.iter().position(|l| l.starts_with("MODEL        3")).unwrap();
    let mut kept: Vec<&str> = lines.clone();
    kept.remove(model3 + 5);
    let damaged = kept.join("\n");
    // The two models before it are read; the warning names the line of the odd model's MODEL
    // record and the first model's atom count.
    let path = PathBuf::from("models.pdb");
    let p = io::pdb::read(&path, damaged.as_bytes()).unwrap();
    assert_eq!(p.frames.len(), 2);
    let w = p.warnings.join("; ");
    assert!(
        w.contains(&format!("starting at line {}", model3 + 1)) && w.contains("has 391 atoms") && w.contains("392"),
        "{w}"
    );

    // Same in the mmCIF and in a multi-frame XYZ and GRO.
    let cif = String::from_utf8(bytes("nmr_neopetrosiamide.cif")).unwrap();
    let first_model2 = cif
        .lines()
        .position(|l| l.starts_with("ATOM") && l.trim_end().ends_with(" 2"))
        .unwrap();
    let damaged: Vec<&str> = cif
        .lines()
        .enumerate()
        .filter(|(i, _)| *i != first_model2 + 3)
        .map(|(_, l)| l)
        .collect();
    let path = PathBuf::from("models.cif");
    let p = io::mmcif::read(&path, damaged.join("\n").as_bytes()).unwrap();
    assert_eq!(p.frames.len(), 1);
    let w = p.warnings.join("; ");
    assert!(
        w.contains(&format!("model 2 (line {})", first_model2 + 1)) && w.contains("has 391 atoms"),
        "{w}"
    );

    // GRO and XYZ: the first frame is kept, the warning names the second frame's line.
    let gro = String::from_utf8(bytes("adk_oplsaa.gro")).unwrap();
    let two = format!("{gro}{}", gro.replacen("47681\n", "47680\n", 1));
    let p = io::gro::read(Path::new("two.gro"), two.as_bytes()).unwrap();
    assert_eq!(p.frames.len(), 1);
    let w = p.warnings.join("; ");
    assert!(
        w.contains(&format!("frame 2 (line {})", gro.lines().count() + 2)) && w.contains("has 47680 atoms"),
        "{w}"
    );
    let xyz =
        "3\nwater\nO 0 0 0\nH 0.96 0 0\nH -0.24 0.93 0\n1\nN atom\nN 0 0 0\n3\nwater\nO 0 0 0\nH 1 0 0\nH 0 1 0\n";
    let p = io::xyz::read(Path::new("set.xyz"), xyz.as_bytes()).unwrap();
    assert_eq!((p.structure.len(), p.frames.len()), (3, 1));
    assert!(
        p.warnings.iter().any(|w| w.contains("frame 2 (line 6) has 1 atoms")),
        "{:?}",
        p.warnings
    );
}

#[test]
fn random_damage_never_panics() {
    // Deterministic byte-level damage (overwrites, deletions, duplicated spans) to the first 16 kB of
    // each real file; every reader must return a value or an error, and bond guessing must accept
    // whatever a reader accepted. Cheap stand-in for the fuzz targets in CI.
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut rnd = move |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n.max(1) as u64) as usize
    };
    let junk = b" \n.-+0123456789ATOMHEL_;'\"!#*\x00\xff";
    for (name, read) in readers() {
        let full = bytes(name);
        let base = &full[..full.len().min(16 * 1024)];
        for _ in 0..150 {
            let mut v = base.to_vec();
            for _ in 0..1 + rnd(8) {
                let at = rnd(v.len());
                match rnd(3) {
                    0 => v[at] = junk[rnd(junk.len())],
                    1 => {
                        let end = (at + rnd(200)).min(v.len());
                        v.drain(at..end);
                    }
                    _ => {
                        let end = (at + rnd(300)).min(v.len());
                        let span = v[at..end].to_vec();
                        v.splice(at..at, span);
                    }
                }
                if v.is_empty() {
                    break;
                }
            }
            let path = PathBuf::from(format!("damaged/{name}"));
            if let Ok(p) = read(&path, &v) {
                assert!(p.structure.check_consistent().is_ok(), "{name}");
                if let Some(f) = p.frames.first() {
                    orbitfield::model::bonds::guess_bonds(&p.structure, &f.positions_angstrom);
                }
            }
        }
    }
}
