//! AMBER (prmtop, NetCDF, mdcrd, rst7), mol2 and alternate-location readers on real
//! MDAnalysisTests files, checked against what MDAnalysis 2.11.0 reports for the same files
//! (`tests/data/md/mdanalysis_md_formats.json`, written by `mdanalysis_md_formats.py`): atom,
//! residue, bond and frame counts, total charge and mass, the box and time of every frame, and
//! chosen atoms' positions in chosen frames to 1e-3 A. Then the NetCDF writer read back, partial
//! files, and damaged input (truncated, garbled, wrong-endian, huge-header): a clear error naming
//! the file, never a panic.
#![allow(clippy::unwrap_used)]

use orbitfield::io::amber::{BoxHint, MdcrdReader, NetcdfReader, NetcdfWriter};
use orbitfield::io::{self, ReadError};
use orbitfield::model::select::Selection;
use orbitfield::model::{Frame, UnitCell};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/md").join(name)
}

fn reference(case: &str) -> Value {
    let text = std::fs::read_to_string(data("mdanalysis_md_formats.json")).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    let c = v["cases"][case].clone();
    assert!(c.is_object(), "no reference case {case}");
    c
}

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("expected a number, found {v}"))
}

fn count(v: &Value) -> usize {
    v.as_u64().unwrap_or_else(|| panic!("expected a count, found {v}")) as usize
}

fn load(files: &[&str]) -> io::System {
    let paths: Vec<PathBuf> = files.iter().map(|f| data(f)).collect();
    io::load(&paths).unwrap_or_else(|e| panic!("{files:?}: {e}"))
}

fn check_cell(case: &str, i: usize, cell: Option<UnitCell>, r: &Value) {
    match (cell, r.is_null()) {
        (None, true) => {}
        (Some(c), false) => {
            for k in 0..3 {
                let l = num(&r["lengths_angstrom"][k]);
                let a = num(&r["angles_degree"][k]);
                assert!(
                    (c.lengths_angstrom[k] - l).abs() < 1e-3,
                    "{case} frame {i}: {c:?} vs {r}"
                );
                assert!((c.angles_degree[k] - a).abs() < 1e-3, "{case} frame {i}: {c:?} vs {r}");
            }
        }
        (c, _) => panic!("{case} frame {i}: box {c:?} vs reference {r}"),
    }
}

fn check_xyz(case: &str, what: &str, i: usize, got: &[[f32; 3]], r: &Value) {
    for (atom, p) in r.as_object().unwrap() {
        let a: usize = atom.parse().unwrap();
        for k in 0..3 {
            let want = num(&p[k]);
            let have = f64::from(got[a][k]);
            assert!(
                (have - want).abs() < 1e-3,
                "{case} frame {i} atom {a} {what}: {:?} vs {p}",
                got[a]
            );
        }
    }
}

/// What every case compares: counts, charge, mass, names, types, bonds, boxes, positions and
/// (where the format stores it) time.
fn check_system(case: &str, files: &[&str], check_time: bool) -> io::System {
    check_system_box(case, files, check_time, true)
}

fn check_system_box(case: &str, files: &[&str], check_time: bool, check_box: bool) -> io::System {
    let r = reference(case);
    let mut sys = load(files);
    let s = &sys.structure;
    assert_eq!(s.len(), count(&r["n_atoms"]), "{case}: atoms");
    assert_eq!(s.residue_count(), count(&r["n_residues"]), "{case}: residues");
    assert_eq!(sys.trajectory.n_frames(), count(&r["n_frames"]), "{case}: frames");
    if let Some(q) = r.get("total_charge_e") {
        let got = s.total_charge_e().unwrap_or_else(|| panic!("{case}: no charges"));
        assert!((got - num(q)).abs() < 1e-3, "{case}: total charge {got} vs {q}");
    }
    if let Some(m) = r.get("total_mass_dalton")
        && s.masses_dalton.is_some()
    {
        let got: f64 = (0..s.len()).map(|i| f64::from(s.mass_dalton(i))).sum();
        assert!(
            (got - num(m)).abs() < 1e-2 * num(m).abs().max(1.0) * 1e-2,
            "{case}: mass {got} vs {m}"
        );
    }
    for (i, name) in r["names"].as_object().unwrap() {
        let i: usize = i.parse().unwrap();
        assert_eq!(s.names[i].as_str(), name.as_str().unwrap(), "{case}: name of atom {i}");
    }
    for (i, name) in r["resnames"].as_object().unwrap() {
        let i: usize = i.parse().unwrap();
        assert_eq!(
            s.resnames[i].as_str(),
            name.as_str().unwrap(),
            "{case}: residue name of atom {i}"
        );
    }
    for (i, resid) in r["resids"].as_object().unwrap() {
        let i: usize = i.parse().unwrap();
        assert_eq!(
            i64::from(s.resids[i]),
            resid.as_i64().unwrap(),
            "{case}: residue number of atom {i}"
        );
    }
    let mut resnames: Vec<&str> = s.resnames.iter().map(|n| n.as_str()).collect();
    resnames.sort_unstable();
    resnames.dedup();
    let want: Vec<&str> = r["resname_set"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(resnames, want, "{case}: residue names");
    if let Some(chains) = r.get("chains") {
        for (i, c) in chains.as_object().unwrap() {
            let i: usize = i.parse().unwrap();
            assert_eq!(s.chains[i].as_str(), c.as_str().unwrap(), "{case}: chain of atom {i}");
        }
    }
    if let Some(ions) = r.get("ion_masses_dalton") {
        for (i, m) in ions.as_object().unwrap() {
            let i: usize = i.parse().unwrap();
            let got = f64::from(s.mass_dalton(i));
            assert!((got - num(m)).abs() < 0.01, "{case}: mass of ion {i}: {got} vs {m}");
        }
    }
    // PDB has no atom types (MDAnalysis guesses them from names).
    if let Some(types) = r.get("types")
        && !s.types.is_empty()
    {
        for (i, t) in types.as_object().unwrap() {
            let i: usize = i.parse().unwrap();
            assert_eq!(s.types[i].as_str(), t.as_str().unwrap(), "{case}: type of atom {i}");
        }
    }
    if let Some(nb) = r["n_bonds"].as_u64() {
        if files.iter().any(|f| f.contains(".pdb")) {
            // MDAnalysis reads a PDB's CONECT records alone; the loader completes them with guessed
            // bonds for the standard residues the records leave out (pdb_conect_bonds_are_completed).
            let path = data(files[0]);
            let conect = io::pdb::read(&path, &io::read_bytes(&path).unwrap())
                .unwrap()
                .structure
                .bonds;
            assert_eq!(conect.len() as u64, nb, "{case}: CONECT bonds");
            assert!(
                conect.iter().all(|b| s.bonds.binary_search(b).is_ok()),
                "{case}: CONECT bonds kept"
            );
        } else {
            assert_eq!(s.bonds.len() as u64, nb, "{case}: bonds");
        }
    }
    let mut fr = Frame::default();
    for rf in r["frames"].as_array().unwrap() {
        let i = count(&rf["frame"]);
        sys.trajectory.read_frame(i, &mut fr).unwrap();
        assert_eq!(fr.positions_angstrom.len(), s.len(), "{case} frame {i}");
        if check_box {
            check_cell(case, i, fr.cell, &rf["box"]);
        }
        if check_time {
            let t = fr.time_ps.unwrap_or_else(|| panic!("{case} frame {i}: no time"));
            assert!(
                (t - num(&rf["time_ps"])).abs() < 1e-3,
                "{case} frame {i}: time {t} vs {}",
                rf["time_ps"]
            );
        }
        if let Some(p) = rf.get("positions_angstrom") {
            check_xyz(case, "position", i, &fr.positions_angstrom, p);
        }
    }
    sys
}

#[test]
fn amber_truncated_octahedron_netcdf() {
    let sys = check_system(
        "tz2_truncoct",
        &["amber/tz2.truncoct.parm7.bz2", "amber/tz2.truncoct.nc"],
        true,
    );
    assert!(sys.warnings.is_empty(), "{:?}", sys.warnings);
    assert!(sys.structure.radii_angstrom.is_some(), "prmtop radii");
}

#[test]
fn dcd_whose_title_markers_disagree_with_its_title_count() {
    check_system(
        "dcd_title_markers",
        &["pdb_dcd_quirks/test_topology.pdb", "pdb_dcd_quirks/test.dcd"],
        false,
    );
}

#[test]
fn pdb_files_of_gromos_charmm_gui_and_several_models() {
    check_system("gromos_pdb", &["pdb_dcd_quirks/gromos11_traj_vac.pdb.gz"], false);
    check_system("pdb_box_in_first_model", &["pdb_dcd_quirks/varying_occ_tmp.pdb"], false);
    check_system("charmm_ions_1k5i", &["pdb_dcd_quirks/1k5i_c36.pdb.gz"], false);
    // A CRYST1 after each model's ENDMDL is that model's box, one before each MODEL the next one's.
    check_system(
        "pdb_cryst1_after_models",
        &["pdb_dcd_quirks/model_then_cryst.pdb"],
        false,
    );
    check_system(
        "pdb_cryst1_before_models",
        &["pdb_dcd_quirks/cryst_then_model.pdb"],
        false,
    );
}

#[test]
fn amber_rectangular_box_netcdf() {
    check_system("ace_tip3p", &["amber/ace_tip3p.parm7.gz", "amber/ace_tip3p.nc"], true);
}

#[test]
fn amber_mdcrd_without_box() {
    check_system("ache_mdcrd", &["amber/ache.prmtop.gz", "amber/ache.mdcrd.bz2"], false);
}

#[test]
fn amber_mdcrd_with_box() {
    check_system(
        "capped_ala_mdcrd",
        &["amber/capped-ala.prmtop.gz", "amber/capped-ala.mdcrd.bz2"],
        false,
    );
}

#[test]
fn amber_restart_with_box() {
    // MDAnalysis's INPCRD reader ignores the box line: the box is checked against the file's own
    // last line below.
    let mut sys = check_system_box(
        "ala2_rst7",
        &["amber/parmed_ala2_solv.parm7.gz", "amber/parmed_ala2_solv.rst7.gz"],
        false,
        false,
    );
    let cell = sys.trajectory.frame(0).unwrap().cell.expect("box");
    assert_eq!(cell.lengths_angstrom, [37.133259, 35.41067, 34.470558]);
    assert_eq!(cell.angles_degree, [90.0; 3]);
    // This restart holds coordinates and a box, no velocities (those are covered by the unit
    // tests of `io::amber::rst7`).
    let path = data("amber/parmed_ala2_solv.rst7.gz");
    let r = io::amber::rst7::read(&path, &io::read_bytes(&path).unwrap()).unwrap();
    assert!(r.velocities_angstrom_per_ps.is_none());
}

#[test]
fn mol2_molecules_as_frames() {
    check_system("mol2_molecules", &["Molecules.mol2.gz"], false);
    check_system("mol2_molecule", &["Molecule.mol2"], false);
    check_system("mol2_zinc", &["zinc_856218.mol2"], false);
}

#[test]
fn pdb_alternate_locations_are_atoms() {
    let r = reference("altloc_4e43");
    let sys = check_system("altloc_4e43", &["4E43.pdb.gz"], false);
    let s = &sys.structure;
    let mut fr = Frame::default();
    let mut traj = sys.trajectory;
    traj.read_frame(0, &mut fr).unwrap();
    for (loc, n) in r["altloc_counts"].as_object().unwrap() {
        let sel = Selection::parse(&format!("altloc {loc}")).unwrap();
        assert_eq!(sel.indices(s, Some(&fr)).len(), count(n), "altloc {loc}");
    }
    // No bond joins two locations of one site.
    for b in &s.bonds {
        assert!(
            !s.are_alternates(b[0] as usize, b[1] as usize),
            "bond {b:?} joins alternates"
        );
    }
    let guessed = orbitfield::model::bonds::guess_bonds(s, &fr.positions_angstrom);
    for b in &guessed {
        assert!(
            !s.are_alternates(b[0] as usize, b[1] as usize),
            "guessed bond {b:?} joins alternates"
        );
    }
}

#[test]
fn pdb_conect_bonds_are_completed() {
    // 4E43's CONECT records join its hetero groups only (as the wwPDB writes them): every heavy
    // atom of an amino acid still has a bond, and each residue's N-CA and CA-C are bonded.
    let sys = load(&["4E43.pdb.gz"]);
    let s = &sys.structure;
    let mut bonded = vec![false; s.len()];
    for b in &s.bonds {
        bonded[b[0] as usize] = true;
        bonded[b[1] as usize] = true;
    }
    let protein: Vec<usize> = Selection::parse("protein and not hydrogen")
        .unwrap()
        .indices(s, None)
        .into_iter()
        .map(|i| i as usize)
        .collect();
    assert!(protein.len() > 1500, "{}", protein.len());
    let lone: Vec<usize> = protein.iter().copied().filter(|&i| !bonded[i]).collect();
    assert!(lone.is_empty(), "protein atoms without a bond: {lone:?}");
    let has = |a: usize, b: usize| s.bonds.binary_search(&[a.min(b) as u32, a.max(b) as u32]).is_ok();
    let mut checked = 0;
    for &ca in protein.iter().filter(|&&i| s.names[i].as_str() == "CA") {
        let same = |name: &str| {
            (ca.saturating_sub(3)..(ca + 3).min(s.len())).find(|&j| {
                s.names[j].as_str() == name
                    && s.resids[j] == s.resids[ca]
                    && s.chains[j] == s.chains[ca]
                    && !s.are_alternates(j, ca)
            })
        };
        if let (Some(n), Some(c)) = (same("N"), same("C")) {
            assert!(has(n, ca) && has(ca, c), "residue {} {}", s.resnames[ca], s.resids[ca]);
            checked += 1;
        }
    }
    assert!(checked > 180, "{checked} residues checked");
}

#[test]
fn mmcif_alternate_locations_match_the_pdb() {
    // 4E43.cif.gz: the PDB converted by gemmi 0.7.5; every atom and location as in the PDB.
    let r = reference("altloc_4e43");
    let pdb = load(&["4E43.pdb.gz"]);
    let mut cif = load(&["4E43.cif.gz"]);
    let s = &cif.structure;
    assert_eq!(s.len(), count(&r["n_atoms"]));
    assert_eq!(s.altlocs, pdb.structure.altlocs);
    let fr = cif.trajectory.frame(0).unwrap();
    for (loc, n) in r["altloc_counts"].as_object().unwrap() {
        let sel = Selection::parse(&format!("altloc {loc}")).unwrap();
        assert_eq!(sel.indices(s, Some(&fr)).len(), count(n), "altloc {loc}");
    }
    let mut pdb_traj = pdb.trajectory;
    assert_eq!(fr.positions_angstrom, pdb_traj.frame(0).unwrap().positions_angstrom);
}

#[test]
fn netcdf_writer_reads_back() {
    let mut sys = load(&["amber/tz2.truncoct.parm7.bz2", "amber/tz2.truncoct.nc"]);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("copy.nc");
    let n = sys.trajectory.n_atoms();
    let mut w = NetcdfWriter::create(&out, n, true).unwrap();
    let mut frames = Vec::new();
    for i in 0..sys.trajectory.n_frames() {
        let f = sys.trajectory.frame(i).unwrap();
        w.write_frame(&f, 2.0 * i as f64).unwrap();
        frames.push(f);
    }
    assert!(!out.exists(), "nothing at the destination before finish");
    w.finish().unwrap();
    let mut r = NetcdfReader::open(&out).unwrap();
    assert_eq!(r.n_frames(), frames.len());
    assert!(r.warnings().is_empty());
    let mut fr = Frame::default();
    for (i, want) in frames.iter().enumerate() {
        r.read_frame(i, &mut fr).unwrap();
        assert_eq!(fr.positions_angstrom, want.positions_angstrom, "frame {i}");
        assert_eq!(fr.time_ps, Some(2.0 * i as f64));
        let (a, b) = (fr.cell.unwrap(), want.cell.unwrap());
        for k in 0..3 {
            assert!((a.lengths_angstrom[k] - b.lengths_angstrom[k]).abs() < 1e-9);
            assert!((a.angles_degree[k] - b.angles_degree[k]).abs() < 1e-9);
        }
    }
}

fn assert_names_file(e: &ReadError, file: &str) {
    assert!(e.to_string().contains(file), "error should name {file}: {e}");
}

#[test]
fn partial_netcdf_keeps_complete_frames_and_says_so() {
    let bytes = std::fs::read(data("amber/tz2.truncoct.nc")).unwrap();
    let full = NetcdfReader::from_bytes(Path::new("full.nc"), bytes.clone()).unwrap();
    let n = full.n_frames();
    // Cut the file half-way through the last record.
    let cut = bytes.len() - 5827 * 6;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cut.nc");
    std::fs::write(&path, &bytes[..cut]).unwrap();
    let r = NetcdfReader::open(&path).unwrap();
    assert_eq!(r.n_frames(), n - 1);
    let w = r.warnings().join("; ");
    assert!(
        w.contains(&format!(
            "header says {n} frames, {} complete frames found, file ends at byte {cut}",
            n - 1
        )),
        "{w}"
    );
    // Through `load`: the warning reaches the system, once.
    let sys = io::load(&[data("amber/tz2.truncoct.parm7.bz2"), path.clone()]).unwrap();
    assert_eq!(sys.trajectory.n_frames(), n - 1);
    assert_eq!(
        sys.warnings.iter().filter(|w| w.contains("complete frame")).count(),
        1,
        "{:?}",
        sys.warnings
    );
    // Growing back: refresh picks up the appended record without rereading the others.
    let mut r = NetcdfReader::open(&path).unwrap();
    std::fs::write(&path, &bytes).unwrap();
    assert_eq!(r.refresh().unwrap(), 1);
    assert_eq!(r.n_frames(), n);
    let mut a = Frame::default();
    let mut b = Frame::default();
    r.read_frame(n - 1, &mut a).unwrap();
    let mut full = full;
    full.read_frame(n - 1, &mut b).unwrap();
    assert_eq!(a, b);
}

#[test]
fn netcdf_without_a_complete_frame_is_an_error() {
    let bytes = std::fs::read(data("amber/ace_tip3p.nc")).unwrap();
    let full = NetcdfReader::from_bytes(Path::new("x.nc"), bytes.clone()).unwrap();
    assert!(full.n_frames() > 1);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("empty.nc");
    // Keep the header (under 2 KB) and part of the first record (about 50 KB).
    std::fs::write(&path, &bytes[..5000]).unwrap();
    let e = io::load(&[data("amber/ace_tip3p.parm7.gz"), path]).unwrap_err();
    assert!(e.to_string().contains("no complete frame"), "{e}");
    assert_names_file(&e, "empty.nc");
}

#[test]
fn netcdf4_hdf5_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("traj.nc");
    let mut b = b"\x89HDF\r\n\x1a\n".to_vec();
    b.resize(512, 0);
    std::fs::write(&path, &b).unwrap();
    let e = NetcdfReader::open(&path).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("NetCDF-4") && msg.contains("HDF5"), "{msg}");
    assert_names_file(&e, "traj.nc");
}

#[test]
fn damaged_netcdf_never_panics() {
    let bytes = std::fs::read(data("amber/ace_tip3p.nc")).unwrap();
    let header_len = 4096.min(bytes.len());
    // Truncated inside the header.
    for cut in [0, 3, 4, 8, 17, 100, 500, 1000, header_len] {
        let r = NetcdfReader::from_bytes(Path::new("cut.nc"), bytes[..cut].to_vec());
        if let Ok(r) = r {
            assert!(cut >= 1000, "header cut at {cut} read as {} frames", r.n_frames());
        }
    }
    // Wrong endian: NetCDF is big-endian; byte-swapped counts are huge.
    let mut swapped = bytes.clone();
    swapped[4..8].reverse();
    swapped[8..12].reverse();
    let _ = NetcdfReader::from_bytes(Path::new("swapped.nc"), swapped);
    // Huge header counts: every 4-byte word of the header set to 0x7fffffff in turn.
    for at in (4..header_len.min(1200)).step_by(4) {
        let mut b = bytes.clone();
        b[at..at + 4].copy_from_slice(&0x7fff_ffffu32.to_be_bytes());
        if let Ok(mut r) = NetcdfReader::from_bytes(Path::new("huge.nc"), b) {
            let mut fr = Frame::default();
            for i in 0..r.n_frames().min(3) {
                let _ = r.read_frame(i, &mut fr);
            }
        }
    }
    // Garbled: random bytes after the magic (a fixed-seed xorshift, several seeds).
    for seed in 1..40u64 {
        let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let mut b = bytes[..2000].to_vec();
        for v in b.iter_mut().skip(4) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if x % 7 == 0 {
                *v = x as u8;
            }
        }
        let _ = NetcdfReader::from_bytes(Path::new("garbled.nc"), b);
    }
}

#[test]
fn damaged_text_files_give_located_errors() {
    let prmtop = io::read_bytes(&data("amber/ache.prmtop.gz")).unwrap();
    let path = Path::new("ache.prmtop");
    // Truncated at many points: an error naming the file, or a topology (cut after the last
    // section that matters), never a panic.
    for k in 1..40 {
        let cut = prmtop.len() * k / 40;
        if let Err(e) = io::amber::prmtop::read(path, &prmtop[..cut]) {
            assert_names_file(&e, "ache.prmtop");
        }
    }
    // A huge atom count in POINTERS is checked against the values present.
    let text = String::from_utf8(prmtop.clone()).unwrap();
    let at = text.find("%FLAG POINTERS").unwrap();
    let line = text[at..].lines().nth(2).unwrap();
    let huge = text.replacen(line, &format!("{:>8}{}", 99_999_999, &line[8..]), 1);
    let e = io::amber::prmtop::read(path, huge.as_bytes()).unwrap_err();
    assert_names_file(&e, "ache.prmtop");
    // A garbled number.
    let garbled = text.replacen(
        "%FLAG CHARGE",
        "%FLAG CHARGE\n%FORMAT(5E16.8)\n  garbage-not-a-number",
        1,
    );
    assert!(io::amber::prmtop::read(path, garbled.as_bytes()).is_err());

    // mdcrd: cut mid-frame keeps the complete frames with one warning; wrong atom count fails.
    let mdcrd = io::read_bytes(&data("amber/ache.mdcrd.bz2")).unwrap();
    let full = MdcrdReader::from_bytes(Path::new("a.mdcrd"), mdcrd.clone(), 252, BoxHint::default()).unwrap();
    let n = full.n_frames();
    let cut = MdcrdReader::from_bytes(
        Path::new("a.mdcrd"),
        mdcrd[..mdcrd.len() - 300].to_vec(),
        252,
        BoxHint::default(),
    )
    .unwrap();
    assert_eq!(cut.n_frames(), n - 1);
    assert_eq!(cut.warnings().len(), 1, "{:?}", cut.warnings());
    assert!(
        cut.warnings()[0].contains(&format!("{} complete frames found", n - 1)),
        "{:?}",
        cut.warnings()
    );
    let e = MdcrdReader::from_bytes(Path::new("a.mdcrd"), mdcrd[..200].to_vec(), 252, BoxHint::default())
        .map(|r| r.n_frames());
    assert!(matches!(e, Ok(0) | Err(_)), "{e:?}");
    let e = MdcrdReader::from_bytes(
        Path::new("a.mdcrd"),
        b"title\nnot numbers at all\n".to_vec(),
        252,
        BoxHint::default(),
    )
    .unwrap_err();
    assert_names_file(&e, "a.mdcrd");
    // An mdcrd without its topology says what it needs.
    let e = io::load(&[data("amber/ache.mdcrd.bz2")]).unwrap_err();
    assert!(e.to_string().contains("prmtop"), "{e}");

    // mol2: the MDAnalysisTests broken molecule and truncations.
    let broken = std::fs::read(data("BrokenMolecule.mol2")).unwrap();
    let e = io::mol2::read(Path::new("BrokenMolecule.mol2"), &broken).unwrap_err();
    assert_names_file(&e, "BrokenMolecule.mol2");
    let mol2 = std::fs::read(data("Molecule.mol2")).unwrap();
    for k in 1..30 {
        let cut = mol2.len() * k / 30;
        if let Err(e) = io::mol2::read(Path::new("m.mol2"), &mol2[..cut]) {
            assert_names_file(&e, "m.mol2");
        }
    }

    // rst7 truncated.
    let rst = io::read_bytes(&data("amber/parmed_ala2_solv.rst7.gz")).unwrap();
    for cut in [0, 10, 100, rst.len() / 2] {
        let e = io::amber::rst7::read(Path::new("r.rst7"), &rst[..cut]).unwrap_err();
        assert_names_file(&e, "r.rst7");
    }
}

#[test]
fn netcdf_frames_are_read_lazily() {
    // A trajectory whose later records are garbage opens fine and fails only on those frames.
    let mut bytes = std::fs::read(data("amber/tz2.truncoct.nc")).unwrap();
    let n = bytes.len();
    for v in &mut bytes[n - 1000..] {
        *v = 0xff;
    }
    let mut r = NetcdfReader::from_bytes(Path::new("lazy.nc"), bytes).unwrap();
    let mut fr = Frame::default();
    r.read_frame(0, &mut fr).unwrap();
    assert_eq!(fr.positions_angstrom.len(), 5827);
}

#[test]
fn rst7_alone_needs_its_topology() {
    let e = io::load(&[data("amber/parmed_ala2_solv.rst7.gz")]);
    assert!(e.is_err());
}

#[test]
fn netcdf_header_whose_record_sizes_overflow_reads_without_panic() {
    // Found by the amber_netcdf fuzz target: variable sizes whose padded sum overflows u64.
    let bytes = std::fs::read(data("amber/fuzz/record_sizes_overflow.nc")).unwrap();
    if let Ok(mut r) = NetcdfReader::from_bytes(Path::new("overflow.nc"), bytes) {
        let mut frame = Frame::default();
        let n = r.n_frames();
        for i in (0..n.min(8)).chain(n.saturating_sub(8)..n) {
            let _ = r.read_frame(i, &mut frame);
        }
    }
}

/// A mol2 file that lists every substructure's hydrogens after all heavy atoms: each substructure
/// is one residue however its atoms are spread (the file's SUBSTRUCTURE section, read here, as
/// MDAnalysis counts them).
#[test]
fn mol2_substructures_count_once_when_their_atoms_are_apart() {
    let path = data("Ligand.mol2");
    let text = std::fs::read_to_string(&path).unwrap();
    let section = text.split("@<TRIPOS>SUBSTRUCTURE").nth(1).unwrap();
    let substructures = section
        .lines()
        .take_while(|l| !l.starts_with("@<TRIPOS>"))
        .filter(|l| !l.trim().is_empty())
        .count();
    assert_eq!(substructures, 17);
    let s = io::load(&[path]).unwrap().structure;
    assert_eq!(s.residue_count(), substructures);
    assert!(
        s.residue_starts().len() - 1 > substructures,
        "the atoms are not contiguous"
    );
}

/// The SUBSTRUCTURE section's chain column (sixth field; `****` none) gives each substructure's
/// atoms their chain: checked atom by atom against the file's own ATOM and SUBSTRUCTURE lines
/// (MDAnalysisTests's Ligand.mol2, chain L), then on a hand-written file of chains A, B and none.
#[test]
fn mol2_substructure_chains_are_the_atoms_chains() {
    let chains_in = |text: &str| -> Vec<String> {
        let section = |name: &str| {
            text.split(&format!("@<TRIPOS>{name}"))
                .nth(1)
                .unwrap()
                .lines()
                .skip(1)
                .take_while(|l| !l.starts_with("@<TRIPOS>"))
                .filter(|l| !l.trim().is_empty())
                .map(|l| l.split_whitespace().collect::<Vec<_>>())
                .collect::<Vec<_>>()
        };
        let subst: Vec<(String, String)> = section("SUBSTRUCTURE")
            .iter()
            .map(|t| (t[0].to_string(), t.get(5).map_or("", |c| c).replace("****", "")))
            .collect();
        section("ATOM")
            .iter()
            .map(|t| {
                subst
                    .iter()
                    .find(|s| s.0 == t[6])
                    .map_or(String::new(), |s| s.1.clone())
            })
            .collect()
    };
    let path = data("Ligand.mol2");
    let want = chains_in(&std::fs::read_to_string(&path).unwrap());
    let s = io::load(&[path]).unwrap().structure;
    let got: Vec<&str> = s.chains.iter().map(|c| c.as_str()).collect();
    assert_eq!(got, want);
    assert!(want.iter().all(|c| c == "L"));
    assert_eq!(Selection::parse("chain L").unwrap().indices(&s, None).len(), s.len());
    assert_eq!(s.chain_ids().len(), 1);

    let text = "@<TRIPOS>MOLECULE\ntwo chains\n 5 0 3\nPROTEIN\nNO_CHARGES\n\n@<TRIPOS>ATOM\n\
      1 N  0.0 0.0 0.0 N.am 1 GLY1\n      2 CA 1.4 0.0 0.0 C.3 1 GLY1\n      3 N  5.0 0.0 0.0 N.am 2 ALA2\n\
      4 CA 6.4 0.0 0.0 C.3 2 ALA2\n      5 O  9.0 0.0 0.0 O.3 3 HOH3\n@<TRIPOS>SUBSTRUCTURE\n\
      1 GLY1 1 RESIDUE 4 A GLY 1 ROOT\n     2 ALA2 3 RESIDUE 4 B ALA 1 ROOT\n     3 HOH3 5 GROUP 4 **** HOH 0\n";
    let want = chains_in(text);
    assert_eq!(want, ["A", "A", "B", "B", ""]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("two_chains.mol2");
    std::fs::write(&path, text).unwrap();
    let s = io::load(&[path]).unwrap().structure;
    let got: Vec<&str> = s.chains.iter().map(|c| c.as_str()).collect();
    assert_eq!(got, want);
    assert_eq!(Selection::parse("chain A").unwrap().indices(&s, None), vec![0, 1]);
    assert_eq!(Selection::parse("chain B").unwrap().indices(&s, None), vec![2, 3]);
}
