//! `orbitfield ions FILE... --count N --charge +1 -o ions.pdb`: counter-ion placement on the Coulomb
//! potential of a structure's charges, as VMD's `cionize` does.
//!
//! Computes the potential map of one frame with the `grid esp` options (method, boundary, charges)
//! through the same evaluation path (`grid::evaluate`), then hands map and atoms to `analysis::ions::place_ions` and
//! writes the ions as PDB (atomically).

use super::grid::{EspArgs, Evaluated, Request, esp_frame, evaluate, memory_limit};
use anyhow::{Context, Result, bail};
use orbitfield::analysis::esp_series::{MAP_BYTES_PER_POINT, check_memory, frame_job};
use orbitfield::analysis::ions::{IonError, IonParams, pdb_text, place_ions};
use orbitfield::io;
use orbitfield::model::Element;
use orbitfield::model::field::LatticeSpec;
use orbitfield::model::units::angstrom_from_bohr3;
use std::path::PathBuf;
use std::time::Instant;

#[derive(clap::Args, Debug)]
pub struct IonsArgs {
    /// Files that together form the system: a structure with partial charges (PSF, PQR) and optionally
    /// trajectories.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Number of ions to place.
    #[arg(long)]
    pub count: usize,
    /// Charge of each ion in e (+1, -1, +2, ...).
    #[arg(long, allow_negative_numbers = true)]
    pub charge: f64,
    /// Element of the ions (residue and atom name) [default: NA for +1, CL for -1, MG for +2].
    #[arg(long)]
    pub element: Option<String>,
    /// Minimum distance from every atom, in Angstrom.
    #[arg(long, default_value_t = 5.0, allow_negative_numbers = true)]
    pub min_distance_atoms: f64,
    /// Minimum distance between ions, in Angstrom.
    #[arg(long, default_value_t = 5.0, allow_negative_numbers = true)]
    pub min_distance_ions: f64,
    /// Spacing of the potential map in Angstrom.
    #[arg(long, default_value_t = 0.5, allow_negative_numbers = true)]
    pub spacing: f64,
    /// Map padding around the atoms in Angstrom (must exceed --min-distance-atoms to leave room).
    #[arg(long, default_value_t = 10.0, allow_negative_numbers = true)]
    pub padding: f64,
    /// Frame (0-based) whose coordinates are used.
    #[arg(long, default_value_t = 0)]
    pub frame: usize,
    #[command(flatten)]
    pub esp: EspArgs,
    /// Refuse maps needing more than this many GiB [default: half of the physical memory].
    #[arg(long, allow_negative_numbers = true)]
    pub max_memory_gib: Option<f64>,
    /// Output PDB file.
    #[arg(short = 'o', long = "output")]
    pub output: PathBuf,
    #[command(flatten)]
    pub device: super::device::DeviceArgs,
}

/// The ion element: `--element`, or the usual ion of the charge.
pub fn ion_element(element: Option<&str>, charge_e: f64) -> Result<Element> {
    if let Some(symbol) = element {
        let mut s = symbol.trim().to_ascii_lowercase();
        if let Some(first) = s.get(0..1).map(str::to_ascii_uppercase) {
            s.replace_range(0..1, &first);
        }
        return Element::from_symbol(&s).with_context(|| format!("--element '{symbol}' is not an element symbol"));
    }
    let symbol = if charge_e == 1.0 {
        "Na"
    } else if charge_e == -1.0 {
        "Cl"
    } else if charge_e == 2.0 {
        "Mg"
    } else {
        bail!("give --element for ions of charge {charge_e} e")
    };
    Element::from_symbol(symbol).with_context(|| format!("unknown element {symbol}"))
}

pub fn run(args: &IonsArgs) -> Result<()> {
    let element = ion_element(args.element.as_deref(), args.charge)?;
    let method = args.esp.method()?;
    let unit = args.esp.unit()?;
    let limit = memory_limit(args.max_memory_gib)?;
    let mut system = super::load_noted(&args.files)?;
    let t0 = Instant::now();
    let frame = esp_frame(&mut system, &args.esp, args.frame)?;
    let lattice = LatticeSpec::AroundAtoms {
        spacing_angstrom: args.spacing,
        padding_angstrom: args.padding,
    }
    .build(&frame.positions_angstrom())?;
    // The map, its f64 working copy and the exclusion mask.
    check_memory(lattice.dims, MAP_BYTES_PER_POINT + 9, &limit)?;
    let atoms_bohr = frame.charges.positions_bohr.clone();
    let n_charges = atoms_bohr.len();
    let dims = lattice.dims;
    let work = dims.iter().product::<usize>() as f64 * n_charges as f64;
    // A direct sum over millions of points takes minutes on the CPU: say so, and what is faster.
    let hint = if work > 1e9 && matches!(method, orbitfield::compute::esp::EspMethod::Direct) {
        " (a direct sum: --method msm is far faster on a map this size)"
    } else {
        ""
    };
    let spinner = super::rdf::spinner(format!(
        "the potential of {n_charges} charges on {}x{}x{} points{hint}",
        dims[0], dims[1], dims[2]
    ));
    if spinner.is_none() && work > 1e9 {
        eprintln!(
            "ions: the potential of {n_charges} charges on {}x{}x{} points; this can take minutes{hint}",
            dims[0], dims[1], dims[2]
        );
    }
    let job = frame_job(frame.charges, method, frame.boundary, lattice, args.frame)?;
    let evaluated = evaluate(&args.device, Request::Lattice(job));
    if let Some(s) = spinner {
        s.finish_and_clear();
    }
    let Evaluated::Lattice(map) = evaluated? else {
        bail!("internal error: a lattice request returned points");
    };
    let params = IonParams {
        count: args.count,
        charge_e: args.charge,
        min_distance_atoms_angstrom: args.min_distance_atoms,
        min_distance_ions_angstrom: args.min_distance_ions,
    };
    let placement = match place_ions(&map, &atoms_bohr, &params) {
        Ok(p) => p,
        Err(e @ IonError::NoRoom { .. }) => {
            // In a box of explicit water every point lies near some atom.
            let waters = orbitfield::model::select::Selection::parse("water")
                .map(|w| w.evaluate(&system.structure, None).iter().filter(|&&x| x).count())
                .unwrap_or(0);
            if waters > 0 {
                bail!(
                    "{e}; nothing was written. The system holds {waters} water atoms, and every point of a \
                     solvated box lies within {} A of some atom: place ions before solvating (or replace waters)",
                    args.min_distance_atoms
                );
            }
            bail!("{e}; nothing was written")
        }
        Err(e) => return Err(e.into()),
    };
    let text = pdb_text(&placement.positions_bohr, element, args.charge);
    io::write_atomically(&args.output, text.as_bytes())
        .with_context(|| format!("cannot write {}", args.output.display()))?;
    let scale = unit.per_hartree_per_e();
    for (i, (p, e)) in placement
        .positions_bohr
        .iter()
        .zip(&placement.energies_hartree)
        .enumerate()
    {
        let a = angstrom_from_bohr3(*p);
        eprintln!(
            "ion {}: {:.3} {:.3} {:.3} A, q V = {:.4} {}",
            i + 1,
            a[0],
            a[1],
            a[2],
            e * scale,
            unit.energy_label()
        );
    }
    eprintln!(
        "{}: {} {} ions on a {}x{}x{} map in {:.3} s",
        args.output.display(),
        placement.positions_bohr.len(),
        element.symbol(),
        map.lattice.dims[0],
        map.lattice.dims[1],
        map.lattice.dims[2],
        t0.elapsed().as_secs_f64()
    );
    Ok(())
}
