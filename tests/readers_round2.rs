//! Files of issue 36 against independent references (tests/data/files2/make_reference.py writes
//! reference.json): a cube written by Molden and one in the orbital-index layout against PySCF's
//! values of their orbitals, NWChem's Cartesian Molden files (d; f once the coefficients the file
//! lost are put back) against PySCF's density of their orbitals, CHARMM CRD (normal and extended), an AMBER
//! `.crd` trajectory and NAMD binary coordinates (both byte orders) against MDAnalysis, extended XYZ
//! against ASE, a 180-chain PDB with hybrid-36 serials against gemmi, and BinaryCIF against the
//! mmCIF reader on the same entries, gemmi's counts and biotite's coordinates. Also
//! `points --device gpu`: values equal to the CPU's on a GPU, a clear failure without one.
// Test helpers may unwrap: a failure is a test failure.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use orbitfield::compute::Field;
use orbitfield::compute::cpu::points::PointEvaluator;
use orbitfield::io::{self, Format, bcif, cube, load::Parsed, mmcif, molden};
use orbitfield::model::Spin;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/files2")
        .join(name)
}

fn bytes(name: &str) -> Vec<u8> {
    io::read_bytes(&data(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn reference() -> Value {
    serde_json::from_slice(&bytes("reference.json")).unwrap()
}

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("expected a number, found {v}"))
}

fn count(v: &Value) -> usize {
    v.as_u64().unwrap_or_else(|| panic!("expected a count, found {v}")) as usize
}

fn text(v: &Value) -> &str {
    v.as_str().unwrap_or_else(|| panic!("expected a string, found {v}"))
}

/// Positions of the reference's atoms (`indices`, `positions_angstrom`) within 1e-3 A.
fn check_positions(label: &str, got: &[[f32; 3]], indices: &Value, want: &Value) {
    for (k, i) in indices.as_array().unwrap().iter().enumerate() {
        let i = count(i);
        for c in 0..3 {
            let w = num(&want[k][c]);
            assert!(
                (f64::from(got[i][c]) - w).abs() < 1e-3,
                "{label}: atom {i} coordinate {c}: {} vs {w}",
                got[i][c]
            );
        }
    }
}

fn load(names: &[&str]) -> io::System {
    let paths: Vec<PathBuf> = names.iter().map(|n| data(n)).collect();
    io::load(&paths).unwrap_or_else(|e| panic!("{names:?}: {e}"))
}

fn frame(system: &mut io::System, i: usize) -> Vec<[f32; 3]> {
    system.trajectory.frame(i).unwrap().positions_angstrom.clone()
}

// --- Cube files ---------------------------------------------------------------------------------

#[test]
fn molden_layout_cube_is_read_with_a_warning_and_matches_its_wavefunction() {
    let r = &reference()["cube"];
    let c = cube::read(
        &data("water_homo_molden_layout.cube"),
        &bytes("water_homo_molden_layout.cube"),
    )
    .unwrap();
    assert_eq!(c.grids.len(), 1);
    let mo = count(&r["orbital_number"]);
    assert_eq!(c.orbital_numbers, vec![mo as i64]);
    assert_eq!(c.warnings.len(), 1, "{:?}", c.warnings);
    assert!(
        c.warnings[0].contains("line 10") && c.warnings[0].contains("orbital-index line"),
        "{}",
        c.warnings[0]
    );
    let g = &c.grids[0];
    let dims: Vec<usize> = r["dims"].as_array().unwrap().iter().map(count).collect();
    assert_eq!(g.lattice.dims.to_vec(), dims);
    // PySCF's values of the orbital at the lattice points (z fastest in the list).
    let want = r["values_z_fastest"].as_array().unwrap();
    let mut worst: f64 = 0.0;
    for i in 0..dims[0] {
        for j in 0..dims[1] {
            for k in 0..dims[2] {
                let w = num(&want[(i * dims[1] + j) * dims[2] + k]);
                let got = f64::from(g.values[g.lattice.index(i, j, k)]);
                worst = worst.max((got - w).abs());
            }
        }
    }
    println!("Molden-layout cube vs PySCF: max |difference| {worst:.2e}");
    assert!(worst <= 1e-5, "max difference {worst:.2e}");
    // The cube's own wavefunction, evaluated here, at the same points.
    let wf_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/qm/water_hf_631gs_sph.molden.gz");
    let m = molden::read(&wf_path, &io::read_bytes(&wf_path).unwrap()).unwrap();
    let wf = &m.wavefunctions[0];
    let pts: Vec<[f64; 3]> = (0..g.lattice.n_points())
        .map(|n| {
            let (i, j, k) = (n % dims[0], (n / dims[0]) % dims[1], n / (dims[0] * dims[1]));
            g.lattice.point_bohr(i, j, k)
        })
        .collect();
    let field = Field::Orbital {
        spin: Spin::Alpha,
        index: mo - 1,
    };
    let own = PointEvaluator::new(wf).values(&field, &pts).unwrap();
    let worst = own
        .iter()
        .zip(&g.values)
        .map(|(a, b)| (a - f64::from(*b)).abs())
        .fold(0.0, f64::max);
    assert!(worst <= 1e-5, "cube vs its wavefunction: {worst:.2e}");
    // Through `load`, the warning reaches the system.
    let s = load(&["water_homo_molden_layout.cube"]);
    assert!(
        s.warnings.iter().any(|w| w.contains("orbital-index line")),
        "{:?}",
        s.warnings
    );
}

#[test]
fn cube_written_by_molden_matches_its_wavefunction() {
    // A cube written by the Molden program ("Molden generated cube file", orbital 5 of water in
    // STO-3G, rotated 32^3 lattice) and the wavefunction it was made from. Molden writes no
    // orbital-index line: the file reads as a plain cube, without a warning.
    let r = &reference()["molden_cube"];
    let c = cube::read(&data("water_mo5_molden.cube.gz"), &bytes("water_mo5_molden.cube.gz")).unwrap();
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    assert_eq!(c.grids.len(), 1);
    assert_eq!(c.atoms.len(), 3);
    let g = &c.grids[0];
    let dims: Vec<usize> = r["dims"].as_array().unwrap().iter().map(count).collect();
    assert_eq!(g.lattice.dims.to_vec(), dims);
    // The lattice as the header prints it (6 decimals).
    let vec3 = |v: &Value| [num(&v[0]), num(&v[1]), num(&v[2])];
    let o = vec3(&r["origin_bohr_header"]);
    let p0 = g.lattice.point_bohr(0, 0, 0);
    for a in 0..3 {
        assert!((p0[a] - o[a]).abs() < 1e-9, "origin {p0:?} vs {o:?}");
        let step = vec3(&r["axes_bohr_header"][a]);
        let mut ijk = [0, 0, 0];
        ijk[a] = 1;
        let p1 = g.lattice.point_bohr(ijk[0], ijk[1], ijk[2]);
        for b in 0..3 {
            assert!(
                (p1[b] - p0[b] - step[b]).abs() < 1e-9,
                "axis {a}: {p1:?} - {p0:?} vs {step:?}"
            );
        }
    }
    // PySCF's values of the orbital at 3000 lattice points (the lattice refined within the
    // header's rounding: every component moved by less than 1e-6 bohr).
    let mut worst: f64 = 0.0;
    for (ijk, w) in r["sample_ijk"]
        .as_array()
        .unwrap()
        .iter()
        .zip(r["sample_values"].as_array().unwrap())
    {
        let (i, j, k) = (count(&ijk[0]), count(&ijk[1]), count(&ijk[2]));
        worst = worst.max((f64::from(g.values[g.lattice.index(i, j, k)]) - num(w)).abs());
    }
    println!("Molden-written cube vs PySCF (3000 lattice points): max |difference| {worst:.2e}");
    assert!(worst <= 1e-5, "max difference {worst:.2e}");
    // Every point against the wavefunction as this crate reads and evaluates it.
    let m = molden::read(&data("water_sto3g.molden"), &bytes("water_sto3g.molden")).unwrap();
    let ro = vec3(&r["origin_bohr_refined"]);
    let ra: Vec<[f64; 3]> = (0..3).map(|a| vec3(&r["axes_bohr_refined"][a])).collect();
    let mut pts = Vec::new();
    let mut got = Vec::new();
    for i in 0..dims[0] {
        for j in 0..dims[1] {
            for k in 0..dims[2] {
                let (fi, fj, fk) = (i as f64, j as f64, k as f64);
                pts.push([0, 1, 2].map(|b| ro[b] + fi * ra[0][b] + fj * ra[1][b] + fk * ra[2][b]));
                got.push(f64::from(g.values[g.lattice.index(i, j, k)]));
            }
        }
    }
    let field = Field::Orbital {
        spin: Spin::Alpha,
        index: count(&r["orbital_number"]) - 1,
    };
    let own = PointEvaluator::new(&m.wavefunctions[0]).values(&field, &pts).unwrap();
    let worst = own.iter().zip(&got).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
    println!(
        "Molden-written cube vs its wavefunction here (all {} points): {worst:.2e}",
        got.len()
    );
    assert!(worst <= 1e-5, "cube vs its wavefunction: {worst:.2e}");
}

#[test]
fn cube_whose_value_count_does_not_match_is_refused_with_the_counts() {
    let text = String::from_utf8(bytes("water_homo_molden_layout.cube")).unwrap();
    // Without its last value line: 2 + 15*16*17 - 5 numbers.
    let cut = &text[..text.trim_end().rfind('\n').unwrap() + 1];
    let e = cube::read(Path::new("cut.cube"), cut.as_bytes())
        .unwrap_err()
        .to_string();
    assert!(e.contains("15x16x17") && e.contains("4080"), "{e}");
    // A standard cube (no index line) with two numbers too many that are not an index list.
    let mut lines: Vec<&str> = text.lines().collect();
    lines.remove(9);
    let extra = format!("{}\n 0.5 0.25\n", lines.join("\n"));
    let e = cube::read(Path::new("extra.cube"), extra.as_bytes())
        .unwrap_err()
        .to_string();
    assert!(e.contains("4080 values") && e.contains("4082"), "{e}");
    // The same without the extra numbers reads cleanly.
    let plain = format!("{}\n", lines.join("\n"));
    let c = cube::read(Path::new("plain.cube"), plain.as_bytes()).unwrap();
    assert!(c.warnings.is_empty() && c.orbital_numbers.is_empty());
}

// --- NWChem Cartesian Molden ----------------------------------------------------------------

#[test]
fn nwchem_cartesian_d_functions_give_pyscf_density() {
    let r = &reference()["nwchem_svp_cart"];
    let path = data("N4_nwchem_svp_cart.molden.gz");
    let m = molden::read(&path, &bytes("N4_nwchem_svp_cart.molden.gz")).unwrap();
    let wf = &m.wavefunctions[0];
    assert_eq!(wf.program.as_deref(), Some("NWChem"));
    assert!(
        wf.corrections.iter().any(|c| c.contains("NWChem")),
        "{:?}",
        wf.corrections
    );
    assert!(!m.warnings.iter().any(|w| w.contains("wrong")), "{:?}", m.warnings);
    let dev = molden::max_deviation(wf);
    println!("N4 def2-SVP (NWChem, Cartesian): orthonormality deviation {dev:.2e}");
    assert!(dev < 1e-6, "{dev}");
    let pts: Vec<[f64; 3]> = r["points_bohr"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| [num(&p[0]), num(&p[1]), num(&p[2])])
        .collect();
    let got = PointEvaluator::new(wf).values(&Field::Density, &pts).unwrap();
    let mut worst: f64 = 0.0;
    for (g, w) in got.iter().zip(r["density"].as_array().unwrap()) {
        let w = num(w);
        worst = worst.max((g - w).abs() / w.abs().max(1.0));
    }
    println!("N4 def2-SVP density vs PySCF: max difference {worst:.2e} (relative above 1)");
    assert!(worst <= 1e-5, "{worst:.2e}");
}

/// The Molden file with the xxz coefficients of the occupied orbitals put back (reference.json:
/// found again by PySCF from orthonormality, and the density they give has NWChem's SCF energy).
fn restored_tzvp(r: &Value) -> String {
    let text = String::from_utf8(bytes("N4_nwchem_tzvp_cart.molden.gz")).unwrap();
    let xxz: Vec<usize> = r["xxz_function_numbers"]
        .as_array()
        .unwrap()
        .iter()
        .map(count)
        .collect();
    let occupied: Vec<usize> = r["occupied_orbital_numbers"]
        .as_array()
        .unwrap()
        .iter()
        .map(count)
        .collect();
    let restored = &r["restored_xxz_coefficients"];
    let mut orbital = 0;
    let mut in_mo = false;
    let mut out = String::new();
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with('[') {
            in_mo = t.eq_ignore_ascii_case("[MO]");
        } else if in_mo && t.starts_with("Ene=") {
            orbital += 1;
        } else if in_mo
            && let Some(q) = occupied.iter().position(|&o| o == orbital)
            && let Some(first) = t.split_whitespace().next()
            && let Ok(function) = first.parse::<usize>()
            && let Some(s) = xxz.iter().position(|&f| f == function)
        {
            out.push_str(&format!("{function:6} {:.12e}\n", num(&restored[s][q])));
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

#[test]
fn nwchem_cartesian_f_functions_give_pyscf_density_once_the_lost_coefficients_are_back() {
    let r = &reference()["nwchem_tzvp_cart"];
    // As published: every orbital has f xxy written twice, xxz lost. Said in words.
    let path = data("N4_nwchem_tzvp_cart.molden.gz");
    let m = molden::read(&path, &bytes("N4_nwchem_tzvp_cart.molden.gz")).unwrap();
    assert_eq!(m.wavefunctions[0].program.as_deref(), Some("NWChem"));
    assert!(
        m.warnings
            .iter()
            .any(|w| w.contains("lost the xxz coefficients") && w.contains("4 f shells")),
        "{:?}",
        m.warnings
    );
    // With the lost coefficients back, the reader's f convention gives orthonormal orbitals and
    // PySCF's density.
    let m = molden::read(Path::new("N4_restored.molden"), restored_tzvp(r).as_bytes()).unwrap();
    let wf = &m.wavefunctions[0];
    assert!(
        wf.corrections.iter().any(|c| c.contains("NWChem")),
        "{:?}",
        wf.corrections
    );
    assert!(
        m.warnings.iter().all(|w| !w.contains("lost") && !w.contains("wrong")),
        "{:?}",
        m.warnings
    );
    let dev = molden::max_deviation(wf);
    println!("N4 def2-TZVP (NWChem, Cartesian f), restored: orthonormality deviation {dev:.2e}");
    assert!(dev < 1e-6, "{dev}");
    let pts: Vec<[f64; 3]> = r["points_bohr"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| [num(&p[0]), num(&p[1]), num(&p[2])])
        .collect();
    let got = PointEvaluator::new(wf).values(&Field::Density, &pts).unwrap();
    let mut worst: f64 = 0.0;
    for (g, w) in got.iter().zip(r["density"].as_array().unwrap()) {
        let w = num(w);
        worst = worst.max((g - w).abs() / w.abs().max(1.0));
    }
    println!("N4 def2-TZVP density vs PySCF: max difference {worst:.2e} (relative above 1)");
    assert!(worst <= 1e-5, "{worst:.2e}");
}

#[test]
fn nwchem_qzvp_file_with_lost_f_coefficients_reads_with_the_reason() {
    // The def2-QZVP twin (Cartesian f and g) has the same defect; it reads, with the rule applied
    // and the reason given, never silently.
    let path = data("N4_nwchem_qzvp_cart.molden.gz");
    let m = molden::read(&path, &bytes("N4_nwchem_qzvp_cart.molden.gz")).unwrap();
    let wf = &m.wavefunctions[0];
    assert_eq!(wf.program.as_deref(), Some("NWChem"));
    assert!(wf.basis.shells.iter().any(|s| s.l == 4 && !s.pure));
    assert!(
        wf.corrections.iter().any(|c| c.contains("NWChem")),
        "{:?}",
        wf.corrections
    );
    assert!(
        m.warnings
            .iter()
            .any(|w| w.contains("lost the xxz coefficients") && w.contains("8 f shells")),
        "{:?}",
        m.warnings
    );
}

// --- CHARMM CRD, AMBER .crd, NAMD binary ------------------------------------------------------

fn check_atoms(label: &str, s: &io::System, pos: &[[f32; 3]], r: &Value) {
    assert_eq!(s.structure.len(), count(&r["n_atoms"]), "{label}");
    for (k, i) in r["indices"].as_array().unwrap().iter().enumerate() {
        let i = count(i);
        assert_eq!(s.structure.names[i].as_str(), text(&r["names"][k]), "{label} atom {i}");
        assert_eq!(
            s.structure.resnames[i].as_str(),
            text(&r["resnames"][k]),
            "{label} atom {i}"
        );
        assert_eq!(
            i64::from(s.structure.resids[i]),
            r["resids"][k].as_i64().unwrap(),
            "{label} atom {i}"
        );
        assert_eq!(
            s.structure.segids[i].as_str(),
            text(&r["segids"][k]),
            "{label} atom {i}"
        );
    }
    check_positions(label, pos, &r["indices"], &r["positions_angstrom"]);
}

#[test]
fn charmm_crd_normal_and_extended_match_mdanalysis() {
    let r = reference();
    assert_eq!(
        Format::detect(Path::new("a.crd"), b"* title\n*\n 3\n"),
        Some(Format::CharmmCrd)
    );
    for (key, file) in [
        ("charmm_crd_normal", "adk_open.crd.gz"),
        ("charmm_crd_ext", "ala3.drude.crd"),
    ] {
        let mut s = load(&[file]);
        let pos = frame(&mut s, 0);
        check_atoms(key, &s, &pos, &r[key]);
    }
}

#[test]
fn amber_ascii_trajectory_named_crd_opens_with_its_topology() {
    let r = &reference()["amber_crd"];
    assert_eq!(
        Format::detect(Path::new("t.crd"), b"Cpptraj Generated trajectory\n  54.882  26.611\n"),
        Some(Format::Mdcrd)
    );
    let mut s = load(&["cg-amb.prmtop.gz", "cg.crd"]);
    assert_eq!(s.structure.len(), count(&r["n_atoms"]));
    assert_eq!(s.trajectory.n_frames(), count(&r["n_frames"]));
    for f in 0..count(&r["n_frames"]) {
        let pos = frame(&mut s, f);
        check_positions("cg.crd", &pos, &r["indices"], &r["positions_angstrom"][f]);
    }
}

#[test]
fn namd_binary_coordinates_in_both_byte_orders_match_mdanalysis() {
    let r = &reference()["namdbin"];
    let psf = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/md/adk.psf");
    for file in ["adk_open.coor", "adk_open_be.coor"] {
        let mut s = io::load(&[psf.clone(), data(file)]).unwrap();
        assert_eq!(s.structure.len(), count(&r["n_atoms"]));
        assert_eq!(s.trajectory.n_frames(), 1);
        let pos = frame(&mut s, 0);
        check_positions(file, &pos, &r["indices"], &r["positions_angstrom"]);
    }
    let le = io::namdbin::read(Path::new("a"), &bytes("adk_open.coor")).unwrap();
    let be = io::namdbin::read(Path::new("b"), &bytes("adk_open_be.coor")).unwrap();
    assert_eq!(le.values, be.values);
    assert_ne!(le.byte_order, be.byte_order);
    // A velocity file is named as such, not read as coordinates.
    let dir = std::env::temp_dir().join(format!("orbitfield-namd-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let vel = dir.join("adk_open.vel");
    std::fs::write(&vel, bytes("adk_open.coor")).unwrap();
    let e = io::load(&[psf, vel]).unwrap_err().to_string();
    assert!(e.contains("velocities"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

// --- Extended XYZ, PDB past 62 chains -------------------------------------------------------

#[test]
fn extended_xyz_lattice_and_properties_match_ase() {
    let r = &reference()["extxyz"];
    let mut s = load(&["si_extxyz.xyz"]);
    let f = s.trajectory.frame(0).unwrap().clone();
    let cell = f.cell.expect("Lattice= gives a box");
    let m = cell.matrix_angstrom();
    let want = &r["cell_vectors_angstrom"];
    // Same cell: equal volumes and lengths (the matrix may be stored in another orientation).
    let len = |v: [f64; 3]| (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
    let mut lengths: Vec<f64> = (0..3).map(|a| len(m[a])).collect();
    let mut want_lengths: Vec<f64> = (0..3).map(|a| num(&r["cell_lengths_angles"][a])).collect();
    lengths.sort_by(f64::total_cmp);
    want_lengths.sort_by(f64::total_cmp);
    for (a, b) in lengths.iter().zip(&want_lengths) {
        assert!((a - b).abs() < 1e-6, "{lengths:?} vs {want_lengths:?}");
    }
    let det = |v: [[f64; 3]; 3]| {
        v[0][0] * (v[1][1] * v[2][2] - v[1][2] * v[2][1]) - v[0][1] * (v[1][0] * v[2][2] - v[1][2] * v[2][0])
            + v[0][2] * (v[1][0] * v[2][1] - v[1][1] * v[2][0])
    };
    let w: [[f64; 3]; 3] = std::array::from_fn(|a| std::array::from_fn(|c| num(&want[a][c])));
    assert!((det(m).abs() - det(w).abs()).abs() < 1e-6);
    let n = r["symbols"].as_array().unwrap().len();
    for i in 0..n {
        assert_eq!(s.structure.elements[i].symbol(), text(&r["symbols"][i]));
    }
    let idx = Value::from((0..n).collect::<Vec<usize>>());
    check_positions("extxyz", &f.positions_angstrom, &idx, &r["positions_angstrom"]);
}

#[test]
fn pdb_with_180_chains_and_hybrid36_serials_matches_gemmi() {
    let r = &reference()["pdb_assembly"];
    let mut s = load(&["1f2n_assembly_ca.pdb.gz"]);
    assert_eq!(s.structure.len(), count(&r["n_atoms"]));
    let mut chains: Vec<&str> = Vec::new();
    for c in &s.structure.chains {
        if chains.last() != Some(&c.as_str()) {
            chains.push(c.as_str());
        }
    }
    let want: Vec<&str> = r["chain_names_in_order"].as_array().unwrap().iter().map(text).collect();
    assert_eq!(chains, want);
    for (k, i) in r["indices"].as_array().unwrap().iter().enumerate() {
        let i = count(i);
        assert_eq!(s.structure.chains[i].as_str(), text(&r["chains"][k]));
        assert_eq!(s.structure.resnames[i].as_str(), text(&r["resnames"][k]));
        assert_eq!(i64::from(s.structure.resids[i]), r["resids"][k].as_i64().unwrap());
    }
    let pos = frame(&mut s, 0);
    check_positions("1f2n assembly", &pos, &r["indices"], &r["positions_angstrom"]);
    // Four-character residue names before a one-character chain keep their layout.
    let charmm = "ATOM      1  OH2 TIP3W   1       1.000   2.000   3.000  1.00  0.00      WT1  O\n";
    let p = io::pdb::read(Path::new("w.pdb"), charmm.as_bytes()).unwrap();
    assert_eq!(p.structure.resnames[0].as_str(), "TIP3");
    assert_eq!(p.structure.chains[0].as_str(), "W");
}

// --- BinaryCIF ------------------------------------------------------------------------------------

fn assert_same(label: &str, a: &Parsed, b: &Parsed) {
    let (x, y) = (&a.structure, &b.structure);
    assert_eq!(x.len(), y.len(), "{label}: atom count");
    assert_eq!(x.elements, y.elements, "{label}: elements");
    assert_eq!(x.names, y.names, "{label}: names");
    assert_eq!(x.resnames, y.resnames, "{label}: residue names");
    assert_eq!(x.resids, y.resids, "{label}: residue numbers");
    assert_eq!(x.chains, y.chains, "{label}: chains");
    assert_eq!(x.altlocs, y.altlocs, "{label}: alternate locations");
    assert_eq!(x.charges_e, y.charges_e, "{label}: charges");
    assert_eq!(a.frames.len(), b.frames.len(), "{label}: models");
    for (f, g) in a.frames.iter().zip(&b.frames) {
        assert_eq!(f.positions_angstrom, g.positions_angstrom, "{label}: positions");
        assert_eq!(f.cell, g.cell, "{label}: cell");
    }
}

#[test]
fn bcif_equals_the_mmcif_reader_on_the_same_entries() {
    let r = &reference()["bcif_twins"];
    for (entry, file) in [("3o5r", "3o5r.bcif"), ("1l2y", "1l2y.bcif.gz"), ("1f2n", "1f2n.bcif")] {
        let from_cif = mmcif::read(&data(&format!("{entry}.cif.gz")), &bytes(&format!("{entry}.cif.gz"))).unwrap();
        let from_bcif = bcif::read(&data(file), &bytes(file)).unwrap();
        assert_same(entry, &from_bcif, &from_cif);
        let g = &r[entry];
        assert_eq!(from_bcif.structure.len(), count(&g["n_atoms"]), "{entry}");
        assert_eq!(from_bcif.frames.len(), count(&g["n_models"]), "{entry}");
        let alt = from_bcif
            .structure
            .altlocs
            .as_ref()
            .map_or(0, |a| a.iter().filter(|&&c| c != b' ').count());
        assert_eq!(alt, count(&g["altloc_atoms"]), "{entry}");
        let mut chains: Vec<&str> = from_bcif.structure.chains.iter().map(|c| c.as_str()).collect();
        chains.sort_unstable();
        chains.dedup();
        let want: Vec<&str> = g["chains"].as_array().unwrap().iter().map(text).collect();
        assert_eq!(chains, want, "{entry}");
        let lengths: Vec<f64> = (0..3).map(|k| num(&g["cell"][k])).collect();
        match from_bcif.frames[0].cell {
            Some(c) => {
                for (row, want) in c.matrix_angstrom().iter().zip(&lengths) {
                    let l = row.iter().map(|x| x * x).sum::<f64>().sqrt();
                    assert!((l - want).abs() < 1e-3, "{entry}: cell {l} vs {want}");
                }
            }
            None => assert!(lengths.iter().all(|&l| (l - 1.0).abs() < 1e-9), "{entry}: no cell"),
        }
        println!(
            "{entry}: {} atoms, {} models, {alt} alternate-location atoms, same as mmCIF",
            from_bcif.structure.len(),
            from_bcif.frames.len()
        );
    }
    // Detected by name and by content; opened through `load` compressed.
    assert_eq!(Format::detect(Path::new("x.bcif.gz"), b""), Some(Format::Bcif));
    assert_eq!(
        Format::detect(Path::new("x"), &bytes("3o5r.bcif")[..512]),
        Some(Format::Bcif)
    );
    let s = load(&["1l2y.bcif.gz"]);
    assert_eq!(s.trajectory.n_frames(), 38);
}

#[test]
fn bcif_from_molstar_encoder_matches_biotite() {
    let r = &reference()["bcif_molstar"];
    let p = bcif::read(&data("3lzm.bcif"), &bytes("3lzm.bcif")).unwrap();
    assert_eq!(p.structure.len(), count(&r["n_atoms"]));
    for (k, i) in r["indices"].as_array().unwrap().iter().enumerate() {
        assert_eq!(p.structure.names[count(i)].as_str(), text(&r["names"][k]));
    }
    check_positions(
        "3lzm.bcif",
        &p.frames[0].positions_angstrom,
        &r["indices"],
        &r["positions_angstrom"],
    );
}

#[test]
fn damaged_bcif_is_an_error_never_a_panic() {
    let b = bytes("3o5r.bcif");
    for cut in [1, 10, 100, 1000, b.len() / 3, b.len() / 2, b.len() - 1] {
        assert!(bcif::read(Path::new("cut.bcif"), &b[..cut]).is_err(), "cut {cut}");
    }
    let mut seed = 36u64;
    for _ in 0..300 {
        let mut m = b.clone();
        for _ in 0..4 {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let at = (seed >> 33) as usize % m.len();
            m[at] = (seed >> 13) as u8;
        }
        let _ = bcif::read(Path::new("garbled.bcif"), &m);
    }
}

// --- points --device gpu ------------------------------------------------------------------------

#[test]
fn points_on_the_gpu_equal_the_cpu_or_fail_clearly() {
    let wf = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/qm/water_hf_631gs_sph.molden.gz");
    let dir = std::env::temp_dir().join(format!("orbitfield-points-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pts = dir.join("pts.txt");
    std::fs::write(&pts, "0 0 0\n0.3 -0.2 0.5\n1.5 0.1 -0.7\n-2 1 1\n").unwrap();
    let run = |device: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_orbitfield"))
            .args(["points", "--field", "mo:homo", "--device", device, "--points"])
            .arg(&pts)
            .arg(&wf)
            .output()
            .unwrap()
    };
    let cpu = run("cpu");
    assert!(cpu.status.success(), "{}", String::from_utf8_lossy(&cpu.stderr));
    let gpu = run("gpu");
    let stderr = String::from_utf8_lossy(&gpu.stderr);
    let required = std::env::var("ORBITFIELD_REQUIRE_CUDA").is_ok_and(|v| v == "1");
    if gpu.status.success() {
        let parse = |o: &[u8]| -> Vec<f64> {
            String::from_utf8_lossy(o)
                .lines()
                .map(|l| l.trim().parse().unwrap())
                .collect()
        };
        let (a, b) = (parse(&cpu.stdout), parse(&gpu.stdout));
        assert_eq!(a.len(), 4);
        for (x, y) in a.iter().zip(&b) {
            assert!((x - y).abs() <= 1e-5 * x.abs().max(1e-2), "cpu {x} gpu {y}");
        }
        println!("points --device gpu: {b:?} (cpu {a:?})");
    } else {
        assert!(
            !required,
            "ORBITFIELD_REQUIRE_CUDA=1 but points --device gpu failed: {stderr}"
        );
        assert!(stderr.contains("--device gpu") && stderr.contains("CUDA"), "{stderr}");
        assert!(gpu.stdout.is_empty(), "no values may be printed on failure");
        println!("skipped the GPU comparison (no CUDA device): {stderr}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
