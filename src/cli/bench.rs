//! `orbitfield bench`: how fast is this machine? A quick suite on inputs built into the binary (the
//! embedded ethylene demo), so it runs from any directory: a molecular orbital on a lattice, a Coulomb
//! potential map by direct summation, a molecular-surface field and the read of a compressed
//! trajectory. Fields go through the same worker pool as `grid` (CUDA devices when present, else the
//! CPU; `--device` chooses). Each figure is the median of `--repeats` runs after one warm-up run
//! (kernel compilation and device start-up excluded).
//!
//! Kernel-variant sweeps, the viewer's scenes and peer programs are the developer harness's
//! (`benches/harness`, `cargo run --release --features bench-harness --bin orbitfield-bench`).

use anyhow::{Context, Result, bail};
use orbitfield::compute::molsurf::{MolSurfAtoms, atom_radii_angstrom};
use orbitfield::compute::{FieldInput, FieldJob, PointCharges};
use orbitfield::jobs::{DeviceChoice, Pool, PoolConfig};
use orbitfield::model::units::bohr_from_angstrom;
use orbitfield::model::{Field, Frame, Lattice, Spin, Structure, Trajectory, Wavefunction};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// Write the results as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// cpu, cuda, gpu or auto (CUDA devices from ORBITFIELD_DEVICES, else all; the CPU without one).
    #[arg(long, value_enum, default_value_t = DeviceChoice::Auto)]
    device: DeviceChoice,
    /// Timed runs per figure (the median is reported).
    #[arg(long, default_value_t = 3)]
    repeats: usize,
    /// Lattice points per axis of the orbital and molecular-surface cases.
    #[arg(long, default_value_t = 96)]
    points: usize,
}

/// One timed case.
#[derive(Serialize, Debug)]
struct CaseResult {
    name: &'static str,
    /// What was computed, with its size.
    what: String,
    /// Median wall-clock time (seconds).
    seconds: f64,
    /// Every timed run (seconds).
    runs_s: Vec<f64>,
    /// Work done per second, in `rate_unit`.
    rate: f64,
    rate_unit: &'static str,
}

#[derive(Serialize, Debug)]
struct Report {
    device: String,
    engines: Vec<String>,
    notes: Vec<String>,
    repeats: usize,
    cases: Vec<CaseResult>,
}

pub fn run(args: &BenchArgs) -> Result<()> {
    let preference = args.device;
    if preference == DeviceChoice::Wgpu {
        bail!(
            "--device wgpu: the quick suite's cases run on the CPU and CUDA engines (see `orbitfield info --devices`)"
        );
    }
    if args.repeats == 0 {
        bail!("--repeats: expected at least 1, found 0");
    }
    if !(8..=512).contains(&args.points) {
        bail!("--points: expected 8..=512, found {}", args.points);
    }
    let pool: Pool<()> = Pool::new(PoolConfig {
        preference,
        ..PoolConfig::default()
    });
    if preference.requires_gpu()
        && let Some(why) = pool.gpu_missing_reason()
    {
        return Err(orbitfield::jobs::JobError::gpu_missing(preference, why).into());
    }
    let engines: Vec<String> = pool.workers().iter().map(|w| w.engine.clone()).collect();
    println!("engines: {}", engines.join(", "));
    for note in pool.notes() {
        println!("note: {note}");
    }
    let demo = orbitfield::io::load::load_embedded_demo().context("the embedded demo")?;
    let wf = demo
        .wavefunctions
        .first()
        .cloned()
        .context("the embedded demo has no wavefunction")?;
    let copies = ethylene_copies(&demo.structure, &wf, 8);

    let mut cases = Vec::new();
    let field_case = |name, what: String, job: FieldJob| -> Result<CaseResult> {
        let points = job.lattice.dims.iter().product::<usize>() as f64;
        let runs = timed(args.repeats, || {
            pool.compute_grid((), job.clone())
                .map(|_| ())
                .map_err(|e| anyhow::anyhow!("{name}: {e}"))
        })?;
        Ok(case(name, what, runs, points / 1e6, "Mpoints/s"))
    };
    println!("{:<10} {:>12} {:>14}  what", "case", "median (s)", "rate");

    let homo = wf
        .homo(Spin::Alpha)
        .context("the demo wavefunction has no occupied orbital")?;
    let n = args.points;
    let job = FieldJob {
        field: Field::Orbital {
            spin: Spin::Alpha,
            index: homo,
        },
        lattice: cube_around(&atom_positions_bohr(&wf), 3.0, n),
        input: FieldInput::Wavefunction(Arc::new(wf.clone())),
    };
    push_print(
        &mut cases,
        field_case("orbital", format!("ethylene 6-31G* HOMO, {n}^3 lattice"), job)?,
    );

    let n_charges = 2000;
    let charges = random_charges(n_charges, 40.0);
    let m = (n / 2).max(8);
    let job = FieldJob {
        field: Field::Potential,
        lattice: cube_around(&charges.positions_bohr, 0.0, m),
        input: FieldInput::Charges(Arc::new(charges)),
    };
    let pairs = (m * m * m * n_charges) as f64;
    let runs = timed(args.repeats, || {
        pool.compute_grid((), job.clone())
            .map(|_| ())
            .map_err(|e| anyhow::anyhow!("coulomb: {e}"))
    })?;
    push_print(
        &mut cases,
        case(
            "coulomb",
            format!("direct Coulomb sum of {n_charges} charges, {m}^3 lattice"),
            runs,
            pairs / 1e9,
            "Gpairs/s",
        ),
    );

    let radii = atom_radii_angstrom(&copies.structure);
    let atoms = MolSurfAtoms::from_radii_angstrom(&copies.positions_angstrom, &radii, 1.0)
        .map_err(|e| anyhow::anyhow!("molecular surface: {e}"))?;
    let n_atoms = atoms.centers_bohr.len();
    let job = FieldJob {
        field: Field::MolSurf,
        lattice: cube_around(&atoms.centers_bohr, bohr_from_angstrom(atoms.padding_angstrom()), n),
        input: FieldInput::Spheres(Arc::new(atoms)),
    };
    push_print(
        &mut cases,
        field_case(
            "molsurf",
            format!("molecular surface of {n_atoms} atoms, {n}^3 lattice"),
            job,
        )?,
    );

    push_print(&mut cases, trajectory_case(&copies, args.repeats)?);

    if let Some(path) = &args.json {
        let report = Report {
            device: args.device.name().to_string(),
            engines,
            notes: pool.notes().to_vec(),
            repeats: args.repeats,
            cases,
        };
        let text = serde_json::to_string_pretty(&report)?;
        std::fs::write(path, text + "\n").with_context(|| format!("{}: cannot write", path.display()))?;
    }
    Ok(())
}

/// Adds a case to the list and prints its line.
fn push_print(cases: &mut Vec<CaseResult>, c: CaseResult) {
    println!(
        "{:<10} {:>12.4} {:>9.3} {:<14}  {}",
        c.name, c.seconds, c.rate, c.rate_unit, c.what
    );
    cases.push(c);
}

/// Runs `work` once untimed, then `repeats` times timed (seconds).
fn timed(repeats: usize, mut work: impl FnMut() -> Result<()>) -> Result<Vec<f64>> {
    work()?;
    let mut runs = Vec::with_capacity(repeats);
    for _ in 0..repeats {
        let t = Instant::now();
        work()?;
        runs.push(t.elapsed().as_secs_f64());
    }
    Ok(runs)
}

fn case(name: &'static str, what: String, runs: Vec<f64>, work: f64, rate_unit: &'static str) -> CaseResult {
    let mut sorted = runs.clone();
    sorted.sort_by(f64::total_cmp);
    let seconds = sorted.get(sorted.len() / 2).copied().unwrap_or(f64::NAN);
    CaseResult {
        name,
        what,
        seconds,
        runs_s: runs,
        rate: if seconds > 0.0 { work / seconds } else { f64::NAN },
        rate_unit,
    }
}

fn atom_positions_bohr(wf: &Wavefunction) -> Vec<[f64; 3]> {
    wf.atoms.iter().map(|a| a.position_bohr).collect()
}

/// An n^3 lattice over the box of `points` plus `margin_bohr` on every side.
fn cube_around(points: &[[f64; 3]], margin_bohr: f64, n: usize) -> Lattice {
    let mut lo = [f64::MAX; 3];
    let mut hi = [f64::MIN; 3];
    for p in points {
        for k in 0..3 {
            lo[k] = lo[k].min(p[k] - margin_bohr);
            hi[k] = hi[k].max(p[k] + margin_bohr);
        }
    }
    let step = |k: usize| ((hi[k] - lo[k]) / (n as f64 - 1.0)).max(1e-3);
    Lattice {
        origin_bohr: lo,
        steps_bohr: [[step(0), 0.0, 0.0], [0.0, step(1), 0.0], [0.0, 0.0, step(2)]],
        dims: [n, n, n],
    }
}

/// `n` charges of +-1 e at deterministic pseudo-random positions in a cube of `side_angstrom`.
fn random_charges(n: usize, side_angstrom: f64) -> PointCharges {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        (state.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
    };
    let side_bohr = bohr_from_angstrom(side_angstrom);
    let mut out = PointCharges {
        positions_bohr: Vec::with_capacity(n),
        charges_e: Vec::with_capacity(n),
    };
    for i in 0..n {
        out.positions_bohr
            .push([next() * side_bohr, next() * side_bohr, next() * side_bohr]);
        out.charges_e.push(if i % 2 == 0 { 1.0 } else { -1.0 });
    }
    out
}

/// The demo molecule copied on a `side`^3 grid 5 A apart: its atoms, the first frame's positions,
/// and every demo frame (the torsion series) for the trajectory case.
struct Copies {
    structure: Structure,
    positions_angstrom: Vec<[f64; 3]>,
    frames: Vec<Frame>,
}

fn ethylene_copies(demo: &Structure, wf: &Wavefunction, side: usize) -> Copies {
    let mut structure = Structure::default();
    let offsets: Vec<[f64; 3]> = (0..side * side * side)
        .map(|c| {
            [
                (c % side) as f64 * 5.0,
                (c / side % side) as f64 * 5.0,
                (c / (side * side)) as f64 * 5.0,
            ]
        })
        .collect();
    for (c, _) in offsets.iter().enumerate() {
        for i in 0..demo.len() {
            structure.push_atom(
                demo.elements[i],
                demo.names[i],
                demo.resnames[i],
                c as i32 + 1,
                demo.chains[i],
                demo.segids[i],
            );
        }
    }
    let positions_angstrom: Vec<[f64; 3]> = offsets
        .iter()
        .flat_map(|o| {
            wf.atoms.iter().map(move |a| {
                let p = a.position_bohr.map(orbitfield::model::units::angstrom_from_bohr);
                [p[0] + o[0], p[1] + o[1], p[2] + o[2]]
            })
        })
        .collect();
    let frames = (0..37)
        .map(|f| {
            // Each frame turns the copies a little (deterministic), so that frames differ.
            let angle = f as f64 * 0.01;
            let (s, c) = angle.sin_cos();
            Frame {
                positions_angstrom: positions_angstrom
                    .iter()
                    .map(|p| [(c * p[0] - s * p[1]) as f32, (s * p[0] + c * p[1]) as f32, p[2] as f32])
                    .collect(),
                cell: None,
                time_ps: Some(f as f64),
                step: Some(f as i64),
            }
        })
        .collect();
    Copies {
        structure,
        positions_angstrom,
        frames,
    }
}

/// Writes the copies' frames as XTC to the temporary directory, then times decoding every frame.
fn trajectory_case(copies: &Copies, repeats: usize) -> Result<CaseResult> {
    let dir = std::env::temp_dir().join(format!("orbitfield-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).with_context(|| format!("{}: cannot create", dir.display()))?;
    let path = dir.join("copies.xtc");
    let result = write_and_read(copies, &path, repeats);
    let _ = std::fs::remove_dir_all(&dir);
    result
}

fn write_and_read(copies: &Copies, path: &Path, repeats: usize) -> Result<CaseResult> {
    let n_atoms = copies.structure.len();
    let n_frames = copies.frames.len();
    let mut trajectory = Trajectory::from_frames(n_atoms, copies.frames.clone(), "bench copies");
    let frames: Vec<usize> = (0..n_frames).collect();
    orbitfield::io::write::write_frames(path, &copies.structure, &mut trajectory, None, &frames, &mut |_| {})?;
    let bytes = std::fs::read(path).with_context(|| format!("{}: cannot read", path.display()))?;
    let runs = timed(repeats, || {
        use orbitfield::model::FrameSource;
        let mut reader = orbitfield::io::xtc::XtcReader::from_bytes(path, bytes.clone())?;
        let mut frame = Frame::default();
        for i in 0..reader.n_frames() {
            reader.read_frame(i, &mut frame).map_err(|e| anyhow::anyhow!("{e}"))?;
        }
        Ok(())
    })?;
    Ok(case(
        "xtc read",
        format!("{n_frames} XTC frames of {n_atoms} atoms"),
        runs,
        (n_frames * n_atoms) as f64 / 1e6,
        "Matom-frames/s",
    ))
}
