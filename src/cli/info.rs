//! `orbitfield info FILE... [--json] [--secondary [--frame N]]`: what the files form together, how
//! long loading took, and optionally the DSSP secondary structure of every protein residue.
//! `orbitfield info --devices`: the engines, adapters and devices (`cli::device`).

use anyhow::Result;
use orbitfield::io::{self, System};
use orbitfield::model::qm_region::RegionSource;
use std::path::PathBuf;
use std::time::Instant;

#[derive(clap::Args, Debug)]
pub struct InfoArgs {
    /// Files that together form one system (topology first, then trajectories).
    #[arg(required_unless_present = "devices")]
    pub files: Vec<PathBuf>,
    /// List the compute engines, the wgpu adapters (software ones marked) and the CUDA devices of
    /// this machine, and where each job kind would run (`--device auto`); no files needed.
    #[arg(long)]
    pub devices: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// The atoms the wavefunction files describe when they are the QM region of an MD system
    /// (selection language), as for `grid` and the viewer. Without it, a region is found by geometry
    /// when the atoms come from a topology, and files whose atoms do not match are refused.
    #[arg(long, value_name = "SELECTION")]
    pub qm_region: Option<String>,
    /// Also print the DSSP secondary structure of every protein residue in file order (H G I E B T
    /// S P, `-` for coil; JSON key "secondary").
    #[arg(long)]
    pub secondary: bool,
    /// Frame (0-based) whose secondary structure --secondary reports.
    #[arg(long, default_value_t = 0, requires = "secondary")]
    pub frame: usize,
}

pub fn run(args: &InfoArgs) -> Result<()> {
    if args.devices {
        super::device::report_devices(args.json)?;
        if args.files.is_empty() {
            return Ok(());
        }
    }
    let t0 = Instant::now();
    // The QM region is resolved as `grid`, `render` and the viewer resolve it, so a wavefunction that
    // belongs to none of the system's atoms is refused here too.
    let (mut system, region) = io::load_with(
        &args.files,
        &io::LoadOptions {
            qm_region: args.qm_region.clone(),
        },
    )?;
    let load_seconds = t0.elapsed().as_secs_f64();
    let qm_region = region.filter(|r| r.source != RegionSource::SameAtoms).map(|region| {
        let how = match &region.source {
            RegionSource::Selection(sel) => format!("selected by \"{sel}\""),
            _ => "found by their geometry".to_string(),
        };
        let first = region.atoms.iter().min().map_or(0, |a| a + 1);
        let last = region.atoms.iter().max().map_or(0, |a| a + 1);
        format!(
            "{} atoms, {how} (atoms {first} to {last}, numbered from 1)",
            region.atoms.len()
        )
    });
    let secondary = if args.secondary {
        Some(secondary_structure(&mut system, args.frame)?)
    } else {
        None
    };
    report(
        &mut system,
        load_seconds,
        args.json,
        secondary.as_ref(),
        qm_region.as_deref(),
    )
}

/// DSSP codes of one frame, with the chains they belong to.
struct Secondary {
    frame: usize,
    codes: String,
    /// Per chain: a label, the first and last residue number, and the range of `codes`.
    chains: Vec<(String, i32, i32, std::ops::Range<usize>)>,
}

fn secondary_structure(system: &mut System, frame: usize) -> Result<Secondary> {
    use orbitfield::analysis::dssp::{DsspOptions, ProteinBackbone, codes};
    let n_frames = system.trajectory.n_frames();
    if frame >= n_frames {
        anyhow::bail!("--frame {frame}: the files have {n_frames} frame(s), numbered from 0");
    }
    let positions = system.trajectory.frame(frame)?.positions_angstrom;
    let s = &system.structure;
    let backbone = ProteinBackbone::new(s);
    let ss = backbone.assign(&positions, &DsspOptions::default());
    let starts = s.residue_starts();
    let mut chains: Vec<(String, i32, i32, std::ops::Range<usize>)> = Vec::new();
    for (k, r) in backbone.residues.iter().enumerate() {
        let atom = starts.get(r.residue).copied().unwrap_or(0);
        let resid = s.resids.get(atom).copied().unwrap_or(0);
        match chains.last_mut() {
            Some(last) if backbone.residues.get(last.3.start).is_some_and(|f| f.chain == r.chain) => {
                last.2 = resid;
                last.3.end = k + 1;
            }
            _ => {
                let chain = s.chains.get(atom).filter(|c| !c.is_empty()).or(s.segids.get(atom));
                let label = chain.map(|c| c.as_str().to_string()).unwrap_or_default();
                chains.push((label, resid, resid, k..k + 1));
            }
        }
    }
    Ok(Secondary {
        frame,
        codes: codes(&ss),
        chains,
    })
}

fn report(
    system: &mut System,
    load_seconds: f64,
    json: bool,
    secondary: Option<&Secondary>,
    qm_region: Option<&str>,
) -> Result<()> {
    let s = &system.structure;
    let atoms = s.len();
    let frames = system.trajectory.n_frames();
    let residues = s.residue_count();
    let chains = s.chain_ids().len();
    let total_charge = s.total_charge_e();
    let first_box = if frames > 0 {
        system.trajectory.frame(0)?.cell
    } else {
        None
    };
    let box_values = first_box.map(|c| {
        let [a, b, cc] = c.lengths_angstrom;
        let [al, be, ga] = c.angles_degree;
        [a, b, cc, al, be, ga]
    });
    if json {
        let mut obj = serde_json::Map::new();
        obj.insert("atoms".into(), atoms.into());
        obj.insert("frames".into(), frames.into());
        obj.insert("residues".into(), residues.into());
        obj.insert("chains".into(), chains.into());
        obj.insert(
            "total_charge".into(),
            // Partial charges are stored as f32, so the sum carries ~1e-5 e of rounding: 4 decimals.
            total_charge
                .or_else(|| {
                    system
                        .wavefunctions
                        .first()
                        .map(super::info_orbitals::wavefunction_charge_e)
                })
                .map_or(serde_json::Value::Null, |q| round_json(q, 4)),
        );
        obj.insert(
            "box".into(),
            box_values.map_or(serde_json::Value::Null, |b| {
                serde_json::Value::Array(b.iter().map(|&x| round_json(x, 6)).collect())
            }),
        );
        obj.insert(
            "box_origin_angstrom".into(),
            first_box.map_or(serde_json::Value::Null, |c| {
                serde_json::Value::Array(c.origin_angstrom.iter().map(|&x| round_json(x, 6)).collect())
            }),
        );
        obj.insert("load_seconds".into(), round_json(load_seconds, 6));
        if let Some(wf) = system.wavefunctions.first() {
            let q = wavefunction_summary(wf);
            obj.insert("basis_functions".into(), q.basis_functions.into());
            obj.insert("orbitals".into(), q.orbitals.into());
            obj.insert("spin".into(), q.spin.into());
            obj.insert("homo".into(), q.homo.map_or(serde_json::Value::Null, |h| h.into()));
            obj.insert(
                "homo_beta".into(),
                super::info_orbitals::beta_homo(wf).map_or(serde_json::Value::Null, |h| h.into()),
            );
            obj.insert("orbital_list".into(), super::info_orbitals::orbitals_json(wf));
            obj.insert(
                "program".into(),
                q.program.map_or(serde_json::Value::Null, |p| p.into()),
            );
            obj.insert("corrections".into(), q.corrections.into());
            obj.insert(
                "qm_region".into(),
                qm_region.map_or(serde_json::Value::Null, |r| r.into()),
            );
        }
        if let (None, Some(levels)) = (system.wavefunctions.first(), &system.orbital_levels) {
            let homo = levels.homo(orbitfield::model::Spin::Alpha).map(|h| h + 1);
            obj.insert("homo".into(), homo.map_or(serde_json::Value::Null, |h| h.into()));
            obj.insert("orbital_list".into(), super::info_orbitals::levels_json(levels));
        }
        if !system.frame_energies_hartree.is_empty() {
            let e: Vec<serde_json::Value> = system
                .frame_energies_hartree
                .iter()
                .map(|&e| serde_json::Number::from_f64(e).map_or(serde_json::Value::Null, serde_json::Value::Number))
                .collect();
            obj.insert("energies_hartree".into(), e.into());
        }
        if let Some(sec) = secondary {
            obj.insert("secondary_frame".into(), sec.frame.into());
            obj.insert("secondary".into(), sec.codes.clone().into());
        }
        if !system.warnings.is_empty() {
            obj.insert("warnings".into(), system.warnings.clone().into());
        }
        println!("{}", serde_json::to_string_pretty(&serde_json::Value::Object(obj))?);
    } else {
        println!(
            "files:        {}",
            system
                .paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
        println!("atoms:        {atoms}");
        println!("frames:       {frames}");
        println!("residues:     {residues}");
        println!("chains:       {chains}");
        match total_charge {
            // A sum of partial charges of a neutral molecule can round to -0.0000.
            Some(q) => println!("total charge: {:.4} e", if q.abs() < 5e-5 { 0.0 } else { q }),
            // A wavefunction's molecule: its nuclei's charge less its electrons.
            None => match system.wavefunctions.first() {
                Some(wf) => println!(
                    "total charge: {:.0} e (the nuclei less the wavefunction's {:.0} electrons; no partial charges in these files)",
                    super::info_orbitals::wavefunction_charge_e(wf),
                    wf.n_electrons()
                ),
                None => println!("total charge: unknown (no partial charges in these files)"),
            },
        }
        match box_values {
            Some(b) => {
                let origin = first_box.map_or([0.0; 3], |c| c.origin_angstrom);
                let from = if origin == [0.0; 3] {
                    String::new()
                } else {
                    format!(", from ({:.3}, {:.3}, {:.3}) A", origin[0], origin[1], origin[2])
                };
                println!(
                    "box:          a={:.3} b={:.3} c={:.3} A, alpha={:.2} beta={:.2} gamma={:.2} deg{from}",
                    b[0], b[1], b[2], b[3], b[4], b[5]
                )
            }
            None => println!("box:          none"),
        }
        println!("bonds:        {} ({:?})", s.bonds.len(), s.bond_source);
        if let Some(wf) = system.wavefunctions.first() {
            let q = wavefunction_summary(wf);
            println!("basis functions: {}", q.basis_functions);
            println!("spin:         {}", q.spin);
            super::info_orbitals::print_orbitals(wf);
            println!("program:      {}", q.program.unwrap_or_else(|| "unknown".into()));
            if let Some(r) = qm_region {
                println!("qm region:    {r}");
            }
            println!(
                "corrections:  {}",
                if q.corrections.is_empty() {
                    "none".to_string()
                } else {
                    q.corrections.join("; ")
                }
            );
        } else if let Some(levels) = &system.orbital_levels {
            super::info_orbitals::print_levels(levels);
        }
        print_energies(&system.frame_energies_hartree);
        if let Some(sec) = secondary {
            print_secondary(sec);
        }
        println!("loaded in:    {:.3} s", load_seconds);
        for w in &system.warnings {
            println!("warning:      {w}");
        }
    }
    Ok(())
}

/// Frames listed one per line up to this many; more are summarised (`--json` lists them all).
const ENERGY_ROWS: usize = 60;

/// Each frame's energy (a QM log's steps): a table of hartree and kcal/mol above the lowest.
fn print_energies(energies_hartree: &[f64]) {
    use orbitfield::app::energies::{kcal_text, lowest};
    use orbitfield::model::units::KCAL_PER_MOL_PER_HARTREE;
    let Some((low_frame, low)) = lowest(energies_hartree) else {
        return;
    };
    let known: Vec<(usize, f64)> = energies_hartree
        .iter()
        .copied()
        .enumerate()
        .filter(|(_, e)| e.is_finite())
        .collect();
    let (first, last) = (known[0], known[known.len() - 1]);
    if known.len() == 1 {
        // A single point: nothing to be lowest among, and no table of one row.
        println!("energy:       {:.8} Eh at frame {}", first.1, first.0);
        return;
    }
    println!(
        "energies:     {} frames: {:.8} Eh at frame {} to {:.8} Eh at frame {} ({}); the lowest {:.8} Eh at frame {low_frame}",
        known.len(),
        first.1,
        first.0,
        last.1,
        last.0,
        kcal_text((last.1 - first.1) * KCAL_PER_MOL_PER_HARTREE),
        low
    );
    if energies_hartree.len() > ENERGY_ROWS {
        println!(
            "  ({} frames: `info --json` lists every energy)",
            energies_hartree.len()
        );
        return;
    }
    println!("  frame  energy (Eh)          above the lowest");
    for (i, e) in energies_hartree.iter().enumerate() {
        if e.is_finite() {
            println!(
                "  {i:<5}  {e:<19.8}  {}",
                kcal_text((e - low) * KCAL_PER_MOL_PER_HARTREE)
            );
        } else {
            println!("  {i:<5}  none printed");
        }
    }
}

fn print_secondary(sec: &Secondary) {
    let n = sec.codes.chars().count();
    let share = |set: &str| {
        let k = sec.codes.chars().filter(|c| set.contains(*c)).count();
        100.0 * k as f64 / n.max(1) as f64
    };
    println!(
        "secondary:    frame {}, {n} protein residues: helix (H G I) {:.1} %, strand (E B) {:.1} %; coil is '-'",
        sec.frame,
        share("HGI"),
        share("EB")
    );
    for (label, first, last, range) in &sec.chains {
        let codes: String = sec.codes.chars().skip(range.start).take(range.len()).collect();
        let label = if label.is_empty() { "-" } else { label };
        println!("  chain {label} {first}..{last}: {codes}");
    }
}

/// What `info` reports about a wavefunction (the first one of a series).
struct WavefunctionSummary {
    basis_functions: usize,
    orbitals: usize,
    spin: &'static str,
    /// 1-based index of the highest occupied (alpha) orbital.
    homo: Option<usize>,
    program: Option<String>,
    corrections: Vec<String>,
}

fn wavefunction_summary(wf: &orbitfield::model::Wavefunction) -> WavefunctionSummary {
    use orbitfield::model::{Spin, SpinKind};
    WavefunctionSummary {
        basis_functions: wf.basis.n_functions(),
        orbitals: wf.alpha.len() + wf.beta.as_ref().map_or(0, |b| b.len()),
        spin: match wf.spin {
            SpinKind::Restricted => "restricted",
            SpinKind::Unrestricted => "unrestricted",
            SpinKind::RestrictedOpen => "restricted-open",
        },
        homo: wf.homo(Spin::Alpha).map(|h| h + 1),
        program: wf.program.clone(),
        corrections: wf.corrections.clone(),
    }
}

fn round_json(x: f64, digits: i32) -> serde_json::Value {
    let f = 10f64.powi(digits);
    serde_json::Number::from_f64((x * f).round() / f).map_or(serde_json::Value::Null, serde_json::Value::Number)
}
