//! GROMACS TRR/TPR and LAMMPS data/dump/DCD readers against MDAnalysis 2.11.0 reference values
//! (`tests/data/md/mdanalysis_gromacs_lammps.json`, written by the script beside it), and on
//! damaged input (truncated, garbled, wrong-endian, huge counts): a clear error naming the file, or
//! fewer frames with a warning; never a panic.
//!
//! With `ORBITFIELD_PYTHON` naming a python that has MDAnalysis and MDAnalysisTests, one more test
//! compares every TPR file MDAnalysisTests ships (all supported tpx versions) with MDAnalysis.
#![allow(clippy::unwrap_used)]

use orbitfield::io::lammps_dump::LammpsDumpReader;
use orbitfield::io::load::{Parsed, load};
use orbitfield::io::trr::{TrrExtras, TrrReader};
use orbitfield::io::{ReadError, lammps_data, read_bytes, tpr};
use orbitfield::model::{Frame, FrameSource, Structure};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/md").join(name)
}

fn reference(case: &str) -> Value {
    let text = std::fs::read_to_string(data("mdanalysis_gromacs_lammps.json")).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    let c = v["cases"][case].clone();
    assert!(!c.is_null(), "no reference case {case}");
    c
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap()
}

fn close3(got: [f32; 3], want: &Value, tol: f64, what: &str) {
    for k in 0..3 {
        let w = f(&want[k]);
        assert!((f64::from(got[k]) - w).abs() < tol, "{what}: {got:?} vs {want}");
    }
}

/// The box of a frame as MDAnalysis writes it: a, b, c, alpha, beta, gamma.
fn check_box(fr: &Frame, want: &Value, what: &str) {
    if want.is_null() {
        assert!(fr.cell.is_none(), "{what}: box {:?} vs none", fr.cell);
        return;
    }
    let c = fr
        .cell
        .as_ref()
        .unwrap_or_else(|| panic!("{what}: no box, reference {want}"));
    for k in 0..3 {
        assert!(
            (c.lengths_angstrom[k] - f(&want[k])).abs() < 1e-3,
            "{what}: {c:?} vs {want}"
        );
        assert!(
            (c.angles_degree[k] - f(&want[k + 3])).abs() < 1e-3,
            "{what}: {c:?} vs {want}"
        );
    }
}

/// Counts, charges, masses, bonds and the chosen atoms' descriptions.
fn check_topology(s: &Structure, r: &Value, case: &str, residues: bool) {
    assert_eq!(s.len() as u64, r["atoms"].as_u64().unwrap(), "{case}: atoms");
    if residues {
        assert_eq!(
            s.residue_count() as u64,
            r["residues"].as_u64().unwrap(),
            "{case}: residues"
        );
    }
    // Where the files name no bonds, the loader guesses them (MDAnalysis does not).
    if s.bond_source != orbitfield::model::BondSource::Guessed {
        assert_eq!(s.bonds.len() as u64, r["bonds"].as_u64().unwrap(), "{case}: bonds");
    }
    if let Some(q) = r.get("total_charge_e") {
        let got = s.total_charge_e().unwrap_or_else(|| panic!("{case}: no charges"));
        assert!((got - f(q)).abs() < 2e-3, "{case}: total charge {got} vs {q}");
    }
    if let Some(m) = r.get("total_mass_dalton") {
        let masses = s.masses_dalton.as_ref().unwrap_or_else(|| panic!("{case}: no masses"));
        let got: f64 = masses.iter().map(|&m| f64::from(m)).sum();
        assert!((got - f(m)).abs() < 0.05, "{case}: total mass {got} vs {m}");
    }
    for a in r["chosen_atoms"].as_array().unwrap() {
        let i = a["atom"].as_u64().unwrap() as usize;
        let what = format!("{case} atom {i}");
        if let Some(n) = a.get("name") {
            assert_eq!(s.names[i].to_string(), n.as_str().unwrap(), "{what}: name");
        }
        if let Some(t) = a.get("type") {
            assert_eq!(s.types[i].to_string(), t.as_str().unwrap(), "{what}: type");
        }
        if let Some(n) = a.get("resname").filter(|_| residues) {
            assert_eq!(s.resnames[i].to_string(), n.as_str().unwrap(), "{what}: resname");
        }
        if let Some(id) = a.get("resid") {
            assert_eq!(i64::from(s.resids[i]), id.as_i64().unwrap(), "{what}: resid");
        }
        if let Some(q) = a.get("charge") {
            let got = f64::from(s.charges_e.as_ref().unwrap()[i]);
            assert!((got - f(q)).abs() < 1e-3, "{what}: charge {got} vs {q}");
        }
        if let (Some(m), Some(masses)) = (a.get("mass"), s.masses_dalton.as_ref()) {
            assert!(
                (f64::from(masses[i]) - f(m)).abs() < 1e-3,
                "{what}: mass {} vs {m}",
                masses[i]
            );
        }
        if let Some(e) = a.get("element") {
            // MDAnalysis leaves the element empty where orbitfield says "X" (unknown).
            let want = Some(e.as_str().unwrap()).filter(|e| !e.is_empty()).unwrap_or("X");
            assert_eq!(s.elements[i].symbol(), want, "{what}: element");
        }
    }
}

/// Frame count, the box of every frame and the chosen positions; `shift(frame)` is added to ours
/// first.
fn check_frames(src: &mut dyn FrameSource, r: &Value, case: &str, shift: impl Fn(usize) -> [f64; 3]) {
    let boxes = r["boxes"].as_array().unwrap();
    assert_eq!(src.n_frames(), boxes.len(), "{case}: frames");
    let mut fr = Frame::default();
    for (i, b) in boxes.iter().enumerate() {
        src.read_frame(i, &mut fr).unwrap();
        assert_eq!(fr.positions_angstrom.len(), src.n_atoms(), "{case} frame {i}");
        check_box(&fr, b, &format!("{case} frame {i}"));
    }
    let positions = r["positions"].as_array().unwrap();
    assert!(!positions.is_empty());
    for p in positions {
        let (i, a) = (
            p["frame"].as_u64().unwrap() as usize,
            p["atom"].as_u64().unwrap() as usize,
        );
        src.read_frame(i, &mut fr).unwrap();
        let s = shift(i);
        let got = std::array::from_fn(|k| (f64::from(fr.positions_angstrom[a][k]) + s[k]) as f32);
        close3(got, &p["xyz_angstrom"], 1e-3, &format!("{case} frame {i} atom {a}"));
    }
}

/// A loaded system's trajectory seen as a frame source.
struct Traj<'a>(&'a mut orbitfield::model::Trajectory);

impl FrameSource for Traj<'_> {
    fn n_atoms(&self) -> usize {
        self.0.n_atoms()
    }
    fn n_frames(&self) -> usize {
        self.0.n_frames()
    }
    fn read_frame(&mut self, index: usize, out: &mut Frame) -> Result<(), orbitfield::model::FrameError> {
        self.0.read_frame(index, out)
    }
}

fn no_shift(_: usize) -> [f64; 3] {
    [0.0; 3]
}

/// MDAnalysis subtracts the box origin from scaled dump coordinates after scaling them, which
/// LAMMPS does not (x = lo + s H; the unscaled ones come out as x - lo = s H): the shift that maps
/// ours onto MDAnalysis's, per frame.
fn scaled_dump_shift(path: &Path) -> impl Fn(usize) -> [f64; 3] + use<> {
    let d = LammpsDumpReader::open(path).unwrap();
    let los: Vec<[f64; 3]> = d.frame_entries().iter().map(|e| e.bbox.lo).collect();
    move |i| los[i].map(|x| -x)
}

fn parse(path: &Path, read: fn(&Path, &[u8]) -> Result<Parsed, ReadError>) -> Parsed {
    read(path, &read_bytes(path).unwrap()).unwrap()
}

// ---------------------------------------------------------------------------------------------
// TRR

fn check_trr(name: &str, case: &str) {
    let r = reference(case);
    let mut t = TrrReader::open(&data(name)).unwrap();
    assert_eq!(t.n_atoms() as u64, r["atoms"].as_u64().unwrap());
    assert!(t.warnings().is_empty(), "{:?}", t.warnings());
    check_frames(&mut t, &r, case, no_shift);
    let (mut fr, mut ex) = (Frame::default(), TrrExtras::default());
    for (i, (step, time)) in r["steps"]
        .as_array()
        .unwrap()
        .iter()
        .zip(r["times_ps"].as_array().unwrap())
        .enumerate()
    {
        t.read_frame_with_extras(i, &mut fr, &mut ex).unwrap();
        assert_eq!(fr.step, step.as_i64(), "{case} frame {i}: step");
        assert!((fr.time_ps.unwrap() - f(time)).abs() < 1e-3, "{case} frame {i}: time");
        assert_eq!(
            ex.velocities_angstrom_per_ps.is_some(),
            r["has_velocities"][i].as_bool().unwrap()
        );
        assert_eq!(
            ex.forces_kj_per_mol_angstrom.is_some(),
            r["has_forces"][i].as_bool().unwrap()
        );
    }
    for p in r["positions"].as_array().unwrap() {
        let (i, a) = (
            p["frame"].as_u64().unwrap() as usize,
            p["atom"].as_u64().unwrap() as usize,
        );
        t.read_frame_with_extras(i, &mut fr, &mut ex).unwrap();
        if let Some(v) = p.get("velocity_angstrom_per_ps") {
            close3(ex.velocities_angstrom_per_ps.as_ref().unwrap()[a], v, 1e-3, "velocity");
        }
        if let Some(v) = p.get("force_kj_per_mol_angstrom") {
            close3(ex.forces_kj_per_mol_angstrom.as_ref().unwrap()[a], v, 1e-3, "force");
        }
    }
}

#[test]
fn trr_ten_frames_match_mdanalysis() {
    check_trr("gromacs/trr_test_only_10_frame_10_atoms.trr", "trr_10_frames");
}

#[test]
fn trr_triclinic_surface_matches_mdanalysis() {
    check_trr("gromacs/surface.trr", "trr_surface");
}

#[test]
fn trr_random_access_equals_sequential() {
    let mut t = TrrReader::open(&data("gromacs/trr_test_only_10_frame_10_atoms.trr")).unwrap();
    let all: Vec<Frame> = (0..t.n_frames())
        .map(|i| {
            let mut fr = Frame::default();
            t.read_frame(i, &mut fr).unwrap();
            fr
        })
        .collect();
    let mut fr = Frame::default();
    for i in [9, 0, 5, 3, 9, 1] {
        t.read_frame(i, &mut fr).unwrap();
        assert_eq!(fr, all[i]);
    }
    assert!(t.read_frame(10, &mut fr).is_err());
}

// ---------------------------------------------------------------------------------------------
// TPR

#[test]
fn tpr_files_of_several_versions_match_mdanalysis() {
    for name in [
        "2lyz_gmx_2024.tpr.gz",
        "2lyz_gmx_4.5.tpr.gz",
        "2lyz_gmx_2021_double.tpr.gz",
        "Linear_Angle.tpr",
        "ala_nnpot_gmx_2025_0.tpr",
    ] {
        let p = parse(&data(&format!("gromacs/{name}")), tpr::read);
        let r = reference(&format!("tpr_{name}"));
        check_topology(&p.structure, &r, name, true);
        check_stored_frame(p, &r, name);
    }
}

/// The coordinates and box a TPR file stores: its one frame, as MDAnalysis's TPR reader gives it.
fn check_stored_frame(p: Parsed, r: &Value, case: &str) {
    assert!(
        !p.warnings.iter().any(|w| w.contains("coordinates")),
        "{case}: {:?}",
        p.warnings
    );
    let mut frames = orbitfield::model::InMemoryFrames {
        n_atoms: p.structure.len(),
        frames: p.frames,
    };
    check_frames(&mut frames, r, case, no_shift);
}

#[test]
fn tpr_with_trr_cobrotoxin_matches_mdanalysis() {
    let r = reference("cobrotoxin");
    let mut sys = load(&[
        data("gromacs/cobrotoxin.tpr.gz"),
        data("gromacs/cobrotoxin_frame0.trr.gz"),
    ])
    .unwrap();
    check_topology(&sys.structure, &r, "cobrotoxin", true);
    check_frames(&mut Traj(&mut sys.trajectory), &r, "cobrotoxin", no_shift);
}

/// Every TPR file MDAnalysisTests ships, against MDAnalysis itself (needs `ORBITFIELD_PYTHON`).
#[test]
fn tpr_every_mdanalysis_test_file_matches_mdanalysis() {
    let Some(python) = std::env::var_os("ORBITFIELD_PYTHON") else {
        eprintln!("skipped: set ORBITFIELD_PYTHON to a python with MDAnalysis and MDAnalysisTests");
        return;
    };
    let dir = std::process::Command::new(&python)
        .args([
            "-c",
            "import MDAnalysisTests.datafiles as d, os; print(os.path.dirname(d.TPR))",
        ])
        .output()
        .unwrap();
    assert!(dir.status.success(), "{}", String::from_utf8_lossy(&dir.stderr));
    let dir = String::from_utf8(dir.stdout).unwrap().trim().to_string();
    let out = std::process::Command::new(&python)
        .arg(data("mdanalysis_gromacs_lammps.py"))
        .args(["--tprs", &dir])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let all: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut checked = 0;
    for (path, r) in all.as_object().unwrap() {
        let bytes = read_bytes(Path::new(path)).unwrap();
        let ours = tpr::read(Path::new(path), &bytes);
        match (ours, r.get("error")) {
            (Ok(p), None) => {
                check_topology(&p.structure, r, path, true);
                check_stored_frame(p, r, path);
                checked += 1;
            }
            (Err(e), Some(_)) => eprintln!("both refuse {path}: {e}"),
            (Err(e), None) => panic!("{path}: MDAnalysis reads it, we do not: {e}"),
            (Ok(_), Some(m)) => eprintln!("{path}: read here, MDAnalysis refuses it ({m})"),
        }
    }
    eprintln!("{checked} TPR files agree with MDAnalysis");
    assert!(checked >= 30, "only {checked} TPR files checked");
}

// ---------------------------------------------------------------------------------------------
// LAMMPS data and dump

#[test]
fn lammps_data_files_match_mdanalysis() {
    for name in [
        "albite_triclinic.data",
        "image_vf.data",
        "additional_columns.data",
        "mini.data",
        "chain_initial.data",
        "ifabp_apo_100mM.data.bz2",
    ] {
        let case = format!("data_{name}");
        let r = reference(&case);
        let mut p = parse(&data(&format!("lammps/{name}")), lammps_data::read);
        check_topology(&p.structure, &r, &case, false);
        let mut frames = orbitfield::model::InMemoryFrames {
            n_atoms: p.structure.len(),
            frames: std::mem::take(&mut p.frames),
        };
        check_frames(&mut frames, &r, &case, no_shift);
    }
}

#[test]
fn lammps_triclinic_box_elements_from_masses() {
    let p = parse(&data("lammps/albite_triclinic.data"), lammps_data::read);
    let c = p.frames[0].cell.unwrap();
    assert!(!c.is_orthorhombic());
    // Type 1 has mass 26.9815: aluminium.
    assert!(p.structure.elements.iter().all(|e| e.symbol() == "Al"));
    let p = parse(&data("lammps/ifabp_apo_100mM.data.bz2"), lammps_data::read);
    assert_eq!(p.structure.elements[0].symbol(), "N");
}

#[test]
fn lammps_dumps_with_data_match_mdanalysis() {
    for (case, topo, traj) in [
        (
            "dump_albite_triclinic",
            "albite_triclinic.data",
            "albite_triclinic.dump",
        ),
        ("dump_image_vf", "image_vf.data", "image_vf.lammpstrj"),
        ("dump_chain", "chain_initial.data", "chain_dump_1.lammpstrj"),
    ] {
        let r = reference(case);
        let mut sys = load(&[data(&format!("lammps/{topo}")), data(&format!("lammps/{traj}"))]).unwrap();
        check_topology(&sys.structure, &r, case, false);
        if case == "dump_albite_triclinic" {
            let shift = scaled_dump_shift(&data(&format!("lammps/{traj}")));
            check_frames(&mut Traj(&mut sys.trajectory), &r, case, shift);
        } else {
            check_frames(&mut Traj(&mut sys.trajectory), &r, case, no_shift);
        }
    }
}

#[test]
fn lammps_dump_unwrapped_with_image_flags_matches_mdanalysis() {
    let r = reference("dump_image_vf_unwrapped");
    let mut d = LammpsDumpReader::open(&data("lammps/image_vf.lammpstrj")).unwrap();
    d.set_unwrap_images(true);
    check_frames(&mut d, &r, "dump_image_vf_unwrapped", no_shift);
}

#[test]
fn lammps_dump_alone_is_its_own_topology() {
    let r = reference("dump_wat");
    let mut sys = load(&[data("lammps/wat.lammpstrj.bz2")]).unwrap();
    assert_eq!(sys.structure.len() as u64, r["atoms"].as_u64().unwrap());
    let shift = scaled_dump_shift(&data("lammps/wat.lammpstrj.bz2"));
    check_frames(&mut Traj(&mut sys.trajectory), &r, "dump_wat", shift);
}

#[test]
fn lammps_dcd_with_data_matches_mdanalysis() {
    let r = reference("lammps_dcd");
    let mut sys = load(&[
        data("lammps/ifabp_apo_100mM.data.bz2"),
        data("lammps/ifabp_apo_100mM.dcd.gz"),
    ])
    .unwrap();
    check_topology(&sys.structure, &r, "lammps_dcd", false);
    check_frames(&mut Traj(&mut sys.trajectory), &r, "lammps_dcd", no_shift);
}

// ---------------------------------------------------------------------------------------------
// Damaged input

fn write_tmp(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

/// Opening `bytes` as `name` gives an error naming the file, or frames every one of which reads
/// or fails cleanly.
fn open_damaged(dir: &Path, name: &str, bytes: &[u8]) -> Result<(), String> {
    let p = write_tmp(dir, name, bytes);
    match load(std::slice::from_ref(&p)) {
        Err(e) => {
            assert_eq!(e.path, p, "error names the file: {e}");
            Err(e.to_string())
        }
        Ok(mut sys) => {
            let mut fr = Frame::default();
            for i in 0..sys.trajectory.n_frames() {
                let _ = sys.trajectory.read_frame(i, &mut fr);
            }
            Ok(())
        }
    }
}

fn damage_all(name: &str, original: &[u8], topology_only: bool) {
    let dir = tempfile::tempdir().unwrap();
    let ext = name.rsplit('.').next().unwrap();
    // Truncated at many points: an error or fewer frames; never a panic.
    let n = original.len();
    for cut in (0..n).step_by((n / 97).max(1)).chain([n.saturating_sub(1)]) {
        let _ = open_damaged(dir.path(), &format!("cut{cut}.{ext}"), &original[..cut]);
    }
    // Garbled: bytes overwritten at fixed pseudo-random places.
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    for k in 0..60 {
        let mut b = original.to_vec();
        for _ in 0..(1 + k % 5) {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let at = (state % n as u64) as usize;
            b[at] = (state >> 32) as u8;
        }
        let _ = open_damaged(dir.path(), &format!("garbled{k}.{ext}"), &b);
    }
    // Empty.
    assert!(open_damaged(dir.path(), &format!("empty.{ext}"), b"").is_err());
    let _ = topology_only;
}

#[test]
fn damaged_trr_files_fail_cleanly() {
    let orig = std::fs::read(data("gromacs/trr_test_only_10_frame_10_atoms.trr")).unwrap();
    damage_all("t.trr", &orig, false);
    let dir = tempfile::tempdir().unwrap();
    // Wrong endian: every 4-byte word reversed.
    let swapped: Vec<u8> = orig
        .chunks(4)
        .flat_map(|c| c.iter().rev().copied().collect::<Vec<_>>())
        .collect();
    let e = open_damaged(dir.path(), "le.trr", &swapped).unwrap_err();
    assert!(e.contains("little-endian"), "{e}");
    // Huge header: an atom count of 2^30 in the first frame.
    let mut huge = orig.clone();
    huge[64..68].copy_from_slice(&(1i32 << 30).to_be_bytes());
    let e = open_damaged(dir.path(), "huge.trr", &huge).unwrap_err();
    assert!(e.contains("huge.trr"), "{e}");
    // Truncated in the last frame: the complete frames, and the message in words.
    let p = write_tmp(dir.path(), "part.trr", &orig[..orig.len() - 100]);
    let sys = load(std::slice::from_ref(&p)).err();
    assert!(sys.is_some(), "a TRR alone has no atoms: load asks for a topology");
    let t = TrrReader::open(&p).unwrap();
    assert_eq!(t.n_frames(), 9);
    let w = t.warnings().join("\n");
    assert!(
        w.contains("9 complete frames found") && w.contains(&format!("file ends at byte {}", orig.len() - 100)),
        "{w}"
    );
}

#[test]
fn damaged_tpr_files_fail_cleanly() {
    let orig = std::fs::read(data("gromacs/ala_nnpot_gmx_2025_0.tpr")).unwrap();
    damage_all("t.tpr", &orig, true);
    let dir = tempfile::tempdir().unwrap();
    let e = open_damaged(dir.path(), "cut.tpr", &orig[..orig.len() / 2]).unwrap_err();
    assert!(e.contains("cut.tpr"), "{e}");
    // Wrong endian: the header words reversed.
    let swapped: Vec<u8> = orig
        .chunks(4)
        .flat_map(|c| c.iter().rev().copied().collect::<Vec<_>>())
        .collect();
    assert!(open_damaged(dir.path(), "le.tpr", &swapped).is_err());
    // An unsupported version is named.
    let e = tpr::read(Path::new("old.tpr"), &fake_tpr_version(&orig, 40))
        .unwrap_err()
        .to_string();
    assert!(e.contains("40") && e.contains("not supported"), "{e}");
}

/// The file with its tpx version number replaced.
fn fake_tpr_version(orig: &[u8], version: i32) -> Vec<u8> {
    // Header: int (string length + 1), int (string length), the padded string, int precision,
    // int file version.
    let len = u32::from_be_bytes(orig[4..8].try_into().unwrap()) as usize;
    let at = 8 + len.div_ceil(4) * 4 + 4;
    let mut b = orig.to_vec();
    b[at..at + 4].copy_from_slice(&version.to_be_bytes());
    b
}

#[test]
fn damaged_lammps_files_fail_cleanly() {
    let data_file = std::fs::read(data("lammps/image_vf.data")).unwrap();
    damage_all("t.data", &data_file, true);
    let dump = std::fs::read(data("lammps/image_vf.lammpstrj")).unwrap();
    damage_all("t.lammpstrj", &dump, false);
    let dir = tempfile::tempdir().unwrap();
    // Huge counts.
    let text = String::from_utf8(data_file.clone())
        .unwrap()
        .replacen("7 atoms", "7000000000000 atoms", 1);
    let e = open_damaged(dir.path(), "huge.data", text.as_bytes()).unwrap_err();
    assert!(e.contains("huge.data"), "{e}");
    let text = String::from_utf8(dump.clone())
        .unwrap()
        .replacen("\n7\n", "\n7000000000000\n", 1);
    let e = open_damaged(dir.path(), "huge.lammpstrj", text.as_bytes()).unwrap_err();
    assert!(e.contains("huge.lammpstrj"), "{e}");
    // A dump cut inside its last frame: the complete frames, and the message in words.
    let p = write_tmp(dir.path(), "part.lammpstrj", &dump[..dump.len() - 40]);
    let sys = load(std::slice::from_ref(&p)).unwrap();
    assert_eq!(sys.trajectory.n_frames(), 2);
    assert!(
        sys.warnings.iter().any(|w| w.contains("complete frame")),
        "{:?}",
        sys.warnings
    );
}

// ---------------------------------------------------------------------------------------------
// Writing: round trips through our readers (always) and through MDAnalysis (ORBITFIELD_PYTHON)

/// Per-format tolerances: positions (Angstrom), box lengths (Angstrom), angles (degrees).
fn tolerances(ext: &str) -> (f64, f64, f64) {
    match ext {
        "pdb" => (6e-4, 6e-4, 6e-3),
        "gro" | "xtc" => (6e-3, 6e-4, 1e-2),
        "xyz" => (6e-5, 0.0, 0.0),
        _ => (1e-4, 1e-4, 1e-3),
    }
}

fn source_system() -> (orbitfield::io::System, Vec<Frame>) {
    let mut sys = load(&[data("tip125_tric_C36.psf"), data("tip125_tric_C36.dcd")]).unwrap();
    let frames = (0..sys.trajectory.n_frames())
        .map(|i| sys.trajectory.frame(i).unwrap())
        .collect();
    (sys, frames)
}

fn check_written(ext: &str, got: &[([f32; 3], usize)], boxes: &[Option<[f64; 6]>], want: &[Frame], atoms: &[u32]) {
    let (tol_x, tol_l, tol_a) = tolerances(ext);
    for &(p, k) in got {
        let (fi, ai) = (k / atoms.len(), k % atoms.len());
        let w = want[fi].positions_angstrom[atoms[ai] as usize];
        for d in 0..3 {
            assert!(
                (f64::from(p[d]) - f64::from(w[d])).abs() < tol_x,
                "{ext}: frame {fi} atom {ai}: {p:?} vs {w:?}"
            );
        }
    }
    if ext == "xyz" {
        return;
    }
    for (fi, b) in boxes.iter().enumerate() {
        let c = want[fi].cell.unwrap();
        let b = b.unwrap_or_else(|| panic!("{ext}: frame {fi} lost its box"));
        for d in 0..3 {
            assert!(
                (b[d] - c.lengths_angstrom[d]).abs() < tol_l,
                "{ext} frame {fi}: {b:?} vs {c:?}"
            );
            assert!(
                (b[d + 3] - c.angles_degree[d]).abs() < tol_a,
                "{ext} frame {fi}: {b:?} vs {c:?}"
            );
        }
    }
}

fn write_selection(
    dir: &Path,
    ext: &str,
    sys: &mut orbitfield::io::System,
    atoms: &[u32],
    frames: &[usize],
) -> PathBuf {
    let out = dir.join(format!("out.{ext}"));
    let mut calls = 0;
    let n = orbitfield::io::write::write_frames(
        &out,
        &sys.structure,
        &mut sys.trajectory,
        Some(atoms),
        frames,
        &mut |_| calls += 1,
    )
    .unwrap();
    assert_eq!((n, calls), (frames.len(), frames.len()));
    out
}

#[test]
fn written_files_read_back_to_the_same_coordinates_and_box() {
    let (mut sys, all) = source_system();
    let dir = tempfile::tempdir().unwrap();
    // Every other water oxygen and hydrogen, frames 1, 4, 7.
    let atoms: Vec<u32> = (0..sys.structure.len() as u32).filter(|i| i % 2 == 0).collect();
    let frames = [1usize, 4, 7];
    let want: Vec<Frame> = frames.iter().map(|&i| all[i].clone()).collect();
    for ext in ["pdb", "gro", "xyz", "dcd", "xtc", "trr", "nc"] {
        let out = write_selection(dir.path(), ext, &mut sys, &atoms, &frames);
        // Trajectory-only formats are read with a topology of the same atoms, written as PDB.
        let files = if matches!(ext, "dcd" | "xtc" | "trr" | "nc") {
            let top = write_selection(dir.path(), "pdb", &mut sys, &atoms, &frames[..1]);
            let top2 = dir.path().join("top.pdb");
            std::fs::rename(top, &top2).unwrap();
            vec![top2, out]
        } else {
            vec![out]
        };
        let mut back = load(&files).unwrap();
        assert_eq!(back.structure.len(), atoms.len(), "{ext}");
        assert_eq!(back.trajectory.n_frames(), frames.len(), "{ext}");
        let mut got = Vec::new();
        let mut boxes = Vec::new();
        for fi in 0..frames.len() {
            let fr = back.trajectory.frame(fi).unwrap();
            boxes.push(fr.cell.map(|c| {
                let [a, b, cc] = c.lengths_angstrom;
                let [al, be, ga] = c.angles_degree;
                [a, b, cc, al, be, ga]
            }));
            for (ai, p) in fr.positions_angstrom.iter().enumerate() {
                got.push((*p, fi * atoms.len() + ai));
            }
        }
        check_written(ext, &got, &boxes, &want, &atoms);
        if ext == "pdb" {
            assert_eq!(back.structure.names[1], sys.structure.names[2]);
            assert_eq!(back.structure.resnames[0], sys.structure.resnames[0]);
        }
    }
}

#[test]
fn unsupported_outputs_are_refused_before_writing() {
    let (mut sys, _) = source_system();
    let dir = tempfile::tempdir().unwrap();
    for name in ["out.mol2", "out.cif"] {
        let out = dir.path().join(name);
        let e = orbitfield::io::write::write_frames(&out, &sys.structure, &mut sys.trajectory, None, &[0], &mut |_| {})
            .unwrap_err();
        assert!(e.to_string().contains(name), "{e}");
        assert!(!out.exists());
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// What `write_frames` writes, MDAnalysis reads back to the same coordinates and box.
#[test]
fn written_files_read_back_by_mdanalysis() {
    let Some(python) = std::env::var_os("ORBITFIELD_PYTHON") else {
        eprintln!("skipped: set ORBITFIELD_PYTHON to a python with MDAnalysis to check written files");
        return;
    };
    let (mut sys, all) = source_system();
    let dir = tempfile::tempdir().unwrap();
    let atoms: Vec<u32> = (0..sys.structure.len() as u32).filter(|i| i % 3 != 1).collect();
    let frames = [0usize, 3, 9];
    let want: Vec<Frame> = frames.iter().map(|&i| all[i].clone()).collect();
    let top = write_selection(dir.path(), "pdb", &mut sys, &atoms, &frames[..1]);
    let top2 = dir.path().join("top.pdb");
    std::fs::rename(top, &top2).unwrap();
    let script = [
        "import sys, json, warnings",
        "warnings.filterwarnings('ignore')",
        "import MDAnalysis as mda",
        "args = sys.argv[1:]",
        "u = mda.Universe(*args) if len(args) > 1 else mda.Universe(args[0])",
        "out = {'pos': [], 'box': []}",
        "for ts in u.trajectory:",
        "    out['pos'].append(u.atoms.positions.tolist())",
        "    out['box'].append(None if ts.dimensions is None else [float(x) for x in ts.dimensions])",
        "print(json.dumps(out))",
    ]
    .join("\n");
    for ext in ["pdb", "gro", "xyz", "dcd", "xtc", "trr", "nc"] {
        // MDAnalysis reads only the first frame of a GRO file.
        let frames: &[usize] = if ext == "gro" { &frames[..1] } else { &frames };
        let out = write_selection(dir.path(), ext, &mut sys, &atoms, frames);
        let mut cmd = std::process::Command::new(&python);
        cmd.arg("-c").arg(&script);
        if matches!(ext, "dcd" | "xtc" | "trr" | "nc") {
            cmd.arg(&top2);
        }
        let res = cmd.arg(&out).output().unwrap();
        assert!(res.status.success(), "{ext}: {}", String::from_utf8_lossy(&res.stderr));
        let v: Value = serde_json::from_slice(&res.stdout).unwrap();
        let pos = v["pos"].as_array().unwrap();
        assert_eq!(pos.len(), frames.len(), "{ext}: frames");
        let mut got = Vec::new();
        for (fi, fr) in pos.iter().enumerate() {
            let fr = fr.as_array().unwrap();
            assert_eq!(fr.len(), atoms.len(), "{ext}: atoms");
            for (ai, p) in fr.iter().enumerate() {
                got.push((
                    [f(&p[0]) as f32, f(&p[1]) as f32, f(&p[2]) as f32],
                    fi * atoms.len() + ai,
                ));
            }
        }
        let boxes: Vec<Option<[f64; 6]>> = v["box"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| (!b.is_null()).then(|| std::array::from_fn(|k| f(&b[k]))))
            .collect();
        assert_eq!(boxes.len(), frames.len(), "{ext}: boxes");
        check_written(ext, &got, &boxes, &want, &atoms);
    }
}
