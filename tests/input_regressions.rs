//! Real files from other programs' test suites and examples (APBS, MDAnalysis, cpptraj) that the
//! readers and the electrostatics and ligand-sampling commands once mishandled; each test checks
//! the file against what the file itself says (its own records counted, its charges summed) or
//! what the writing program's reader reports for it. Provenance: tests/data/inputs/README.md.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use orbitfield::io;
use std::path::{Path, PathBuf};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/inputs")
        .join(name)
}

fn bytes(name: &str) -> Vec<u8> {
    std::fs::read(data(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The whitespace-separated fields of a file's lines that start with ATOM (any case), as APBS
/// splits them.
fn atom_fields(name: &str) -> Vec<Vec<String>> {
    String::from_utf8_lossy(&bytes(name))
        .lines()
        .map(|l| l.split_whitespace().map(str::to_string).collect::<Vec<_>>())
        .filter(|t| t.first().is_some_and(|k| k.eq_ignore_ascii_case("ATOM")))
        .collect()
}

/// APBS's own example PQR files write `ATOM 5 C PRO 1 ...` with a single space after the
/// keyword; APBS reads them by whitespace. Every atom is read with its charge and radius.
#[test]
fn pqr_with_one_space_after_atom() {
    let want = atom_fields("twob2.pqr");
    assert_eq!(want.len(), 2);
    let p = io::pdb::read_pqr(&data("twob2.pqr"), &bytes("twob2.pqr")).unwrap();
    let s = &p.structure;
    assert_eq!(s.len(), want.len());
    for (i, f) in want.iter().enumerate() {
        let x: f32 = f[5].parse().unwrap();
        let q: f32 = f[8].parse().unwrap();
        let r: f32 = f[9].parse().unwrap();
        assert_eq!(p.frames[0].positions_angstrom[i][0], x);
        assert_eq!(s.charges_e.as_ref().unwrap()[i], q);
        assert_eq!(s.radii_angstrom.as_ref().unwrap()[i], r);
    }
}

/// APBS's pbsam-gly example writes the chain id against the residue number (`CHG A0`); APBS reads
/// that as chain A, residue 0. All 34 atoms come in with the file's charges and radii.
#[test]
fn pqr_with_chain_written_against_the_residue_number() {
    let want = atom_fields("gly_cg.pqr");
    assert_eq!(want.len(), 34);
    let p = io::pdb::read_pqr(&data("gly_cg.pqr"), &bytes("gly_cg.pqr")).unwrap();
    let s = &p.structure;
    assert_eq!(s.len(), want.len());
    assert!(s.chains.iter().all(|c| c.as_str() == "A"), "{:?}", s.chains);
    assert!(s.resids.iter().all(|&r| r == 0), "{:?}", s.resids);
    let q = s.charges_e.as_ref().unwrap();
    let r = s.radii_angstrom.as_ref().unwrap();
    for (i, f) in want.iter().enumerate() {
        assert_eq!(q[i], f[f.len() - 2].parse::<f32>().unwrap(), "atom {i}");
        assert_eq!(r[i], f[f.len() - 1].parse::<f32>().unwrap(), "atom {i}");
    }
}

/// GROMACS writes box values as `%10.5f`; a 40000 nm box fills the fields and they run together.
/// MDAnalysis reads this file's box as 4e5 A a side (its test_gro.py `test_huge_box_gro`).
#[test]
fn gro_box_values_that_run_together() {
    let p = io::gro::read(&data("huge_box.gro"), &bytes("huge_box.gro")).unwrap();
    let cell = p.frames[0].cell.expect("a box");
    for k in 0..3 {
        assert!((cell.lengths_angstrom[k] - 4.0e5).abs() < 1e-3, "{cell:?}");
        assert!((cell.angles_degree[k] - 90.0).abs() < 1e-9, "{cell:?}");
    }
}

fn orbitfield(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_orbitfield"))
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("orbitfield {args:?}: {e}"))
}

fn read_dx(path: &Path) -> orbitfield::model::Grid3 {
    io::dx::read(path, &std::fs::read(path).unwrap()).unwrap()
}

/// `--origin X,Y,Z --dims NX,NY,NZ` as the help writes them, negative coordinates included, and
/// `--origin X Y Z`: the same 5 x 5 x 5 lattice, whose values are the +1 ion's Coulomb potential
/// 1/r (kT/e at 300 K: e^2 / (4 pi eps0 k T) = 556.9 A / r).
#[test]
fn explicit_lattices_take_comma_separated_and_negative_values() {
    let dir = tempfile::tempdir().unwrap();
    let ion = data("born_ion.pqr");
    let ion = ion.to_str().unwrap();
    let bjerrum_angstrom = 1.602_176_634e-19_f64.powi(2)
        / (4.0 * std::f64::consts::PI * 8.854_187_812_8e-12 * 1.380_649e-23 * 300.0)
        * 1e10;
    for (n, lattice) in [
        ["--origin", "-2,-2,-1", "--dims", "5,5,5"],
        ["--origin", "-2 -2 -1", "--dims", "5 5 5"],
    ]
    .iter()
    .enumerate()
    {
        let out = dir.path().join(format!("esp{n}.dx"));
        let mut args = vec!["grid", "esp", ion, "--spacing", "1", "--device", "cpu", "-o"];
        args.push(out.to_str().unwrap());
        args.push(lattice[0]);
        args.extend(lattice[1].split(' '));
        args.push(lattice[2]);
        args.extend(lattice[3].split(' '));
        let run = orbitfield(&args);
        assert!(
            run.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&run.stderr)
        );
        let grid = read_dx(&out);
        assert_eq!(grid.lattice.dims, [5, 5, 5]);
        // Point (0, 0, 0) is (-2, -2, -1) A, sqrt(9) = 3 A from the ion.
        let v = f64::from(grid.get(0, 0, 0).unwrap());
        let want = bjerrum_angstrom / 3.0;
        assert!((v - want).abs() < 1e-3 * want, "{v} vs {want}");
    }
    // Two values are refused with a message naming the option.
    let out = dir.path().join("bad.dx");
    let run = orbitfield(&[
        "grid",
        "esp",
        ion,
        "--spacing",
        "1",
        "--origin",
        "-2,-2",
        "--dims",
        "5,5,5",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(!run.status.success());
    assert!(String::from_utf8_lossy(&run.stderr).contains("--origin"));
}

/// `grid ils --origin X,Y,Z --dims NX,NY,NZ` and `ils-path --from X,Y,Z`, as their help writes them.
/// One Xe probe over one ion: the map at the voxel 4 A from the ion is the Lennard-Jones energy of
/// the pair there (UFF Cl: x 3.947 A, D 0.227 kcal/mol; Xe probe: eps 0.494 kcal/mol, rmin/2
/// 2.24 A; Lorentz-Berthelot), at most the sampling's few per cent from it.
#[test]
fn ils_lattice_and_path_take_comma_separated_points() {
    let dir = tempfile::tempdir().unwrap();
    let pqr = dir.path().join("cl.pqr");
    std::fs::write(
        &pqr,
        "ATOM      1 CL    CL     1       0.000   0.000   0.000 -1.0000 1.9370\n",
    )
    .unwrap();
    let map = dir.path().join("pmf.dx");
    let run = orbitfield(&[
        "grid",
        "ils",
        pqr.to_str().unwrap(),
        "--probe",
        "xe",
        "--device",
        "cpu",
        "--subres",
        "1",
        "--spacing",
        "1",
        "--origin",
        "-4,-4,-4",
        "--dims",
        "9,9,9",
        "-o",
        map.to_str().unwrap(),
    ]);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let grid = read_dx(&map);
    assert_eq!(grid.lattice.dims, [9, 9, 9]);
    let eps = (0.227f64 * 0.494).sqrt();
    let rmin = 3.947 / 2.0 + 2.24;
    let r = 4.0f64;
    let e_kcal = eps * ((rmin / r).powi(12) - 2.0 * (rmin / r).powi(6));
    let kt_kcal = 0.001_987_204_259 * 300.0;
    let want = e_kcal / kt_kcal;
    let got = f64::from(grid.get(8, 4, 4).unwrap());
    assert!((got - want).abs() < 0.05 * want.abs(), "{got} vs {want}");
    let run = orbitfield(&["ils-path", map.to_str().unwrap(), "--from", "-4,0,0"]);
    let text = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    // The start is on a face: the path to bulk is that one point.
    assert!(text.contains("1 points, to bulk"), "{text}");
    assert!(!String::from_utf8_lossy(&run.stderr).contains("cap"));
    // From inside the ion, where the map holds its cap: the barrier is said not to be one.
    let run = orbitfield(&["ils-path", map.to_str().unwrap(), "--from", "0,0,0"]);
    assert!(run.status.success());
    let e = String::from_utf8_lossy(&run.stderr);
    assert!(
        e.contains("the cap of blocked voxels") && e.contains("no sampled path"),
        "{e}"
    );
}

/// The `%FLAG NAME` section of a prmtop's text: its values split by the `%FORMAT` field width.
fn prmtop_section(text: &str, flag: &str) -> Vec<String> {
    let mut lines = text.lines().skip_while(|l| l.split_whitespace().nth(1) != Some(flag));
    lines.next().unwrap_or_else(|| panic!("no %FLAG {flag}"));
    let format = lines.next().unwrap();
    let width: usize = format
        .trim_start_matches("%FORMAT(")
        .trim_start_matches(|c: char| c.is_ascii_digit())
        .trim_start_matches(|c: char| c.is_ascii_alphabetic())
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .unwrap()
        .parse()
        .unwrap();
    lines
        .take_while(|l| !l.starts_with('%'))
        .flat_map(|l| {
            let l = l.trim_end();
            (0..l.len())
                .step_by(width)
                .map(move |k| l[k..(k + width).min(l.len())].trim().to_string())
        })
        .collect()
}

/// MDAnalysis reads this prmtop, whose RESIDUE_CHAINID section is one value short, with a warning
/// and without chain ids (test_top.py, `PRMErr5`). So does orbitfield: the atoms and charges are
/// the file's (NATOM from POINTERS; CHARGE / 18.2223 summed), the warning names the section.
#[test]
fn prmtop_with_a_short_chain_id_section_is_read_with_a_warning() {
    let path = data("ache_chainid.error5.prmtop.bz2");
    let text = String::from_utf8(io::read_bytes(&path).unwrap()).unwrap();
    let n_atoms: usize = prmtop_section(&text, "POINTERS")[0].parse().unwrap();
    let total: f64 = prmtop_section(&text, "CHARGE")
        .iter()
        .map(|q| q.parse::<f64>().unwrap() / 18.2223)
        .sum();
    let system = io::load(&[path]).unwrap();
    assert_eq!(system.structure.len(), n_atoms);
    assert_eq!(n_atoms, 677);
    let got: f64 = system
        .structure
        .charges_e
        .as_ref()
        .unwrap()
        .iter()
        .map(|&q| f64::from(q))
        .sum();
    assert!((got - total).abs() < 1e-3, "{got} vs {total}");
    assert!(
        system
            .warnings
            .iter()
            .any(|w| w.contains("RESIDUE_CHAINID") && w.contains("ignored")),
        "{:?}",
        system.warnings
    );
}

/// An antechamber mol2 carries GAFF atom types (lower case: `ca` aromatic carbon, `os` ether
/// oxygen, `ho` hydroxyl hydrogen), which are not element symbols: MDAnalysis gives them no element
/// (its SYBYL table is case-sensitive). Their elements are the GAFF types' own (the first letter;
/// `cl` and `br` two letters), never calcium, osmium or holmium.
#[test]
fn mol2_gaff_types_are_not_elements() {
    let text = String::from_utf8(bytes("charged.mol2")).unwrap();
    let rows: Vec<Vec<&str>> = text
        .lines()
        .skip_while(|l| !l.starts_with("@<TRIPOS>ATOM"))
        .skip(1)
        .take_while(|l| !l.starts_with("@<TRIPOS>"))
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows.len(), 24);
    let p = io::mol2::read(&data("charged.mol2"), &bytes("charged.mol2")).unwrap();
    let s = &p.structure;
    assert_eq!(s.len(), rows.len());
    for (i, row) in rows.iter().enumerate() {
        let gaff = row[5];
        let want = match gaff {
            "cl" => "Cl",
            "br" => "Br",
            t => &t[..1],
        };
        assert!(
            s.elements[i].symbol().eq_ignore_ascii_case(want),
            "atom {} ({gaff}): {}",
            i + 1,
            s.elements[i].symbol()
        );
    }
    let total: f64 = rows.iter().map(|r| r[8].parse::<f64>().unwrap()).sum();
    let got: f64 = s.charges_e.as_ref().unwrap().iter().map(|&q| f64::from(q)).sum();
    assert!((got - total).abs() < 1e-4, "{got} vs {total}");
}

/// A PDB of TIP4P water (as GROMACS writes it) has massless MW sites of no element. `grid ils`
/// with the element table leaves a water's such sites out and says so; the same site in another
/// residue is an atom it cannot place, and it says how to go on (leave it out with --sel), and does
/// with it.
#[test]
fn ils_on_virtual_sites_leaves_waters_out_and_says_how_to_leave_others_out() {
    let dir = tempfile::tempdir().unwrap();
    let pdb = dir.path().join("tip4p.pdb");
    let water = "\
ATOM      1  OW  SOL     1       0.000   0.000   0.000  1.00  0.00
ATOM      2  HW1 SOL     1       0.957   0.000   0.000  1.00  0.00
ATOM      3  HW2 SOL     1      -0.240   0.927   0.000  1.00  0.00
ATOM      4  MW  SOL     1       0.018   0.130   0.000  1.00  0.00
";
    let map = dir.path().join("pmf.dx");
    let args = |sel: Option<&str>| {
        let mut a = vec![
            "grid".to_string(),
            "ils".into(),
            pdb.to_str().unwrap().into(),
            "--probe".into(),
            "xe".into(),
            "--device".into(),
            "cpu".into(),
            "--subres".into(),
            "1".into(),
            "-o".into(),
            map.to_str().unwrap().into(),
        ];
        if let Some(s) = sel {
            a.extend(["--sel".to_string(), s.to_string()]);
        }
        a
    };
    let run = |a: Vec<String>| {
        std::process::Command::new(env!("CARGO_BIN_EXE_orbitfield"))
            .args(a)
            .output()
            .unwrap()
    };
    std::fs::write(&pdb, water).unwrap();
    let done = run(args(None));
    let err = String::from_utf8_lossy(&done.stderr);
    assert!(done.status.success(), "{err}");
    assert!(err.contains("1 massless water sites"), "{err}");
    assert!(read_dx(&map).values.iter().all(|v| v.is_finite()));
    // The same site in a ligand: refused, naming the atom and the way out.
    std::fs::write(&pdb, water.replace("MW  SOL", "MW  LIG")).unwrap();
    let refused = run(args(None));
    assert!(!refused.status.success());
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(err.contains("atom 4, MW") && err.contains("--sel"), "{err}");
    std::fs::remove_file(&map).ok();
    let done = run(args(Some("not name MW")));
    assert!(done.status.success(), "{}", String::from_utf8_lossy(&done.stderr));
    assert!(read_dx(&map).values.iter().all(|v| v.is_finite()));
}

/// A GRO after its TPR gives coordinates only: what the GRO's atom names fail to say about their
/// elements is not the system's concern (the TPR gives the atoms) and is not warned about; the GRO
/// alone still says so.
#[test]
fn coordinates_after_a_topology_do_not_warn_about_their_names() {
    let tpr = data("extra-interactions-2021.tpr");
    let gro = data("dummy_2021.gro");
    let alone = io::load(std::slice::from_ref(&gro)).unwrap();
    assert!(
        alone.warnings.iter().any(|w| w.contains("unknown element")),
        "{:?}",
        alone.warnings
    );
    let both = io::load(&[tpr, gro]).unwrap();
    assert_eq!(both.trajectory.n_frames(), 1);
    assert_eq!(both.structure.len(), 18);
    assert!(
        !both
            .warnings
            .iter()
            .any(|w| w.contains("dummy_2021.gro") && w.contains("unknown element")),
        "{:?}",
        both.warnings
    );
}

/// `grid pb --max-memory-gib` is the limit the help promises for every lattice: a lattice that
/// needs more is refused before anything is allocated, naming both sizes (it used to be a fixed
/// 16 GiB whatever the option said).
#[test]
fn pb_honours_max_memory() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("pb.dx");
    let ion = data("born_ion.pqr");
    let run = orbitfield(&[
        "grid",
        "pb",
        ion.to_str().unwrap(),
        "--spacing",
        "0.5",
        "--device",
        "cpu",
        "--max-memory-gib",
        "0.001",
        "-o",
        out.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(!run.status.success(), "{err}");
    assert!(err.contains("GiB allowed"), "{err}");
    assert!(!out.exists());
}

/// `grid ils` on a map far larger than the machine (10^15 voxels) is refused with its size and what
/// to change, before anything is allocated (it ended in an allocation failure and a backtrace).
#[test]
fn ils_refuses_a_map_larger_than_memory() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("pmf.dx");
    let ion = data("born_ion.pqr");
    let run = orbitfield(&[
        "grid",
        "ils",
        ion.to_str().unwrap(),
        "--probe",
        "xe",
        "--device",
        "cpu",
        "--origin",
        "0,0,0",
        "--dims",
        "100000,100000,100000",
        "-o",
        out.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{err}");
    assert!(
        err.contains("1000000000000000 voxels") && err.contains("--spacing"),
        "{err}"
    );
    assert!(!err.contains("panicked") && !err.contains("backtrace"), "{err}");
}

/// Absurd lattice options end in a message, never a panic: a spacing of 1e-300 A (the point counts
/// overflowed), a NaN padding or origin (a 1 x 1 x 1 map, or one at NaN, was written).
#[test]
fn absurd_lattice_options_are_refused_without_panicking() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m.dx");
    let out = out.to_str().unwrap();
    let ion = data("born_ion.pqr");
    let ion = ion.to_str().unwrap();
    let base = ["--device", "cpu", "-o", out];
    let cases: [&[&str]; 5] = [
        &["grid", "pb", ion, "--spacing", "1e-300"],
        &["grid", "esp", ion, "--spacing", "1e-300"],
        &["grid", "ils", ion, "--probe", "xe", "--spacing", "1e-300"],
        &["grid", "ils", ion, "--probe", "xe", "--padding", "nan"],
        &[
            "grid", "ils", ion, "--probe", "xe", "--origin", "nan,0,0", "--dims", "5,5,5",
        ],
    ];
    for case in cases {
        let args: Vec<&str> = case.iter().chain(base.iter()).copied().collect();
        let run = orbitfield(&args);
        let err = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.starts_with("error: ") || err.contains("\nerror: "),
            "{args:?}: {err}"
        );
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(!Path::new(out).exists(), "{args:?}");
    }
}

/// An esp lattice error is said once ("error: spacing 0 A ...", not the same text twice joined by
/// a colon), and a NaN origin is named as the origin, not as atom coordinates.
#[test]
fn esp_lattice_errors_are_said_once() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m.dx");
    let ion = data("born_ion.pqr");
    let run = orbitfield(&[
        "grid",
        "esp",
        ion.to_str().unwrap(),
        "--spacing",
        "0",
        "-o",
        out.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(!run.status.success());
    assert_eq!(err.matches("spacing 0 A").count(), 1, "{err}");
    let run = orbitfield(&[
        "grid",
        "esp",
        ion.to_str().unwrap(),
        "--spacing",
        "1",
        "--origin",
        "nan,0,0",
        "--dims",
        "5,5,5",
        "-o",
        out.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(!run.status.success());
    assert!(err.contains("origin") && !err.contains("atom coordinates"), "{err}");
}

#[test]
fn negative_numbers_reach_the_checks_that_explain_them() {
    // `--spacing -1` is a value, refused in words, not a flag clap cannot place; `grid homo` is
    // the orbital `render --field homo` names, and `mo:0` says that orbitals count from 1.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.cube");
    let molden = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/qm/threonine_hf_631gs_sph.molden.gz");
    let (molden, out_s) = (molden.to_str().unwrap(), out.to_str().unwrap());
    let o = orbitfield(&["grid", "mo:homo", molden, "--spacing", "-1", "-o", out_s]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        stderr.contains("spacing -1 A must be a positive finite number"),
        "{stderr}"
    );
    assert!(!out.exists());
    let o = orbitfield(&["grid", "mo:0", molden, "-o", out_s]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("numbered from 1"), "{stderr}");
    let o = orbitfield(&["grid", "homo", molden, "--spacing", "0.5", "-o", out_s]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.exists());
}

/// A file under another format's extension (an fchk saved as `.molden`, a PDB as `.gro`): the
/// reader's message names the format the content looks like; a damaged file of the right format
/// gets no such hint.
#[test]
fn a_file_under_another_format_s_extension_says_what_it_looks_like() {
    let dir = tempfile::tempdir().unwrap();
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let fchk = orbitfield::io::read_bytes(&data.join("qm/fchk/Gaussian16_dvb_sp.fchk.gz")).unwrap();
    let as_molden = dir.path().join("dvb.molden");
    std::fs::write(&as_molden, &fchk).unwrap();
    let e = orbitfield::io::load(&[as_molden]).unwrap_err().to_string();
    assert!(e.contains("looks like the fchk format"), "{e}");
    let pdb = std::fs::read(data.join("md/adk_open.pqr")).unwrap();
    let as_gro = dir.path().join("adk.gro");
    std::fs::write(&as_gro, &pdb).unwrap();
    let e = orbitfield::io::load(&[as_gro]).unwrap_err().to_string();
    assert!(e.contains("looks like the pdb format"), "{e}");
    // A GRO file cut inside its atoms: a GRO all the same, no hint.
    let cut = dir.path().join("cut.gro");
    std::fs::write(&cut, "title\n    3\n    1SOL     OW    1   0.126   1.624   1.679\n").unwrap();
    let e = orbitfield::io::load(&[cut]).unwrap_err().to_string();
    assert!(!e.contains("looks like"), "{e}");
    // A PQR cut inside an atom line: PDB's layout by design, so no hint that it is a PDB.
    let text = String::from_utf8(pdb).unwrap();
    let atom_line = text.lines().position(|l| l.starts_with("ATOM")).unwrap();
    let mut damaged: String = text.lines().take(atom_line + 5).collect::<Vec<_>>().join("\n");
    damaged.push_str("\nATOM      6  CA  MET");
    let cut_pqr = dir.path().join("cut.pqr");
    std::fs::write(&cut_pqr, damaged).unwrap();
    let e = orbitfield::io::load(&[cut_pqr]).unwrap_err().to_string();
    assert!(e.contains("cut.pqr"), "{e}");
    assert!(!e.contains("looks like"), "{e}");
}
