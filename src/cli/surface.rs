//! `orbitfield surface FILE... --iso V -o mesh.ply|obj`: isosurface of a volume as a mesh file.
//!
//! Reads the files as one system (`io::load`); a cube or DX lattice is the field as it stands
//! (`--field N` picks the N-th lattice, 1-based, when there are several). Otherwise `--field` names
//! a field of a wavefunction (`esp`: its own potential, or that of a structure's charges), computed
//! on the CPU engine through the `grid` command's `evaluate` on a lattice `--spacing` apart around
//! the atoms. Extraction is
//! `surface::extract` (or both lobes with `--both-signs`); `--color-by esp` evaluates the
//! electrostatic potential exactly at every vertex (`analysis::vertex_values`: a wavefunction's own,
//! else the structure's charges') and stores it in the PLY file as the vertex property `value`;
//! `--color-by pb` solves the Poisson-Boltzmann equation for the structure's charges and radii
//! (`compute::pb` on `--device`) and stores its potential, trilinear from the lattice at each vertex
//! or `--color-offset` Angstrom outside it along the normal (PyMOL's `surface_ramp_above_mode`). The
//! mesh is written atomically by `surface::export`, positions in Angstrom.

use super::grid::{Evaluated, Request, evaluate, source_from_system};
use anyhow::{Context, Result, anyhow, bail};
use orbitfield::compute::esp::screening::Dielectric;
use orbitfield::compute::pb::PbParams;
use orbitfield::compute::{FieldInput, FieldJob};
use orbitfield::io;
use orbitfield::model::Grid3;
use orbitfield::model::field::{DEFAULT_PADDING_ANGSTROM, DEFAULT_SPACING_ANGSTROM, FieldSpec, LatticeSpec};
use orbitfield::model::units::{DEFAULT_TEMPERATURE_KELVIN, PotentialUnit, volt_per_kt_per_e};
use orbitfield::surface::{self, MeshData, export};
use std::path::PathBuf;
use std::time::Instant;

#[derive(clap::Args, Debug)]
pub struct SurfaceArgs {
    /// Files that together form one system: a cube or DX volume, or a structure plus wavefunction.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Which field: for volume files the lattice's number (1-based, default 1); otherwise a field
    /// as `orbitfield grid` takes it (mo:homo, mo:lumo+1, mo:17, mo:beta:homo, density, spin, esp).
    #[arg(long)]
    pub field: Option<String>,
    /// Isosurface level in the field's units (orbitals: bohr^-3/2; densities: bohr^-3; esp: hartree/e).
    #[arg(long, allow_negative_numbers = true)]
    pub iso: f32,
    /// Output mesh: `.ply` (binary little endian) or `.obj`.
    #[arg(short = 'o', long = "output")]
    pub output: PathBuf,
    /// Lattice spacing in Angstrom when the field is computed from a wavefunction.
    #[arg(long, default_value_t = DEFAULT_SPACING_ANGSTROM, allow_negative_numbers = true)]
    pub spacing: f64,
    /// Padding around the atoms in Angstrom when the field is computed.
    #[arg(long, default_value_t = DEFAULT_PADDING_ANGSTROM, allow_negative_numbers = true)]
    pub padding: f64,
    /// Write both lobes of a signed field: surfaces at +|iso| and -|iso|, each facing outward.
    #[arg(long)]
    pub both_signs: bool,
    /// `esp`: store the electrostatic potential at every vertex in the PLY file (vertex property
    /// `value`, in --potential-unit), evaluated exactly at the vertex: the wavefunction's own
    /// (nuclei and electron density) or else that of the structure's charges. `pb`: the
    /// Poisson-Boltzmann potential of the structure's charges and radii (`grid pb`'s model and
    /// defaults), trilinear from its lattice at the vertex (or --color-offset outside it).
    #[arg(long, value_name = "esp|pb")]
    pub color_by: Option<String>,
    /// --color-by pb: sample the potential this many Angstrom outside the surface along the
    /// vertex normal (1.4 is a solvent probe's radius) [default: 0, at the vertex].
    #[arg(long, allow_negative_numbers = true)]
    pub color_offset: Option<f64>,
    /// --color-by pb: spacing of the Poisson-Boltzmann lattice in Angstrom.
    #[arg(long, default_value_t = 0.5, allow_negative_numbers = true)]
    pub pb_spacing: f64,
    /// --color-by pb: solute dielectric [default: 2].
    #[arg(long, allow_negative_numbers = true)]
    pub eps_in: Option<f64>,
    /// --color-by pb: solvent probe radius of the dielectric boundary in Angstrom [default: 1.4].
    #[arg(long, allow_negative_numbers = true)]
    pub probe: Option<f64>,
    #[command(flatten)]
    pub device: super::device::DeviceArgs,
    /// Unit of --color-by's values: kT/e (at 300 K), kcal/mol/e, V or hartree/e.
    #[arg(long, default_value = "kT/e")]
    pub potential_unit: String,
    #[command(flatten)]
    pub dielectric: super::dielectric::DielectricArgs,
}

pub fn run(args: &SurfaceArgs) -> Result<()> {
    if export::MeshFormat::from_path(&args.output).is_none() {
        bail!("{}: the output must end in .ply or .obj", args.output.display());
    }
    if !args.iso.is_finite() {
        bail!("--iso must be a finite number");
    }
    let unit = color_unit(args)?;
    let t0 = Instant::now();
    let mut system = super::load_noted(&args.files)?;
    let grid = pick_grid(&mut system, args)?;
    let t_field = t0.elapsed().as_secs_f64();

    let t1 = Instant::now();
    let mesh = if args.both_signs {
        let lobes = surface::extract_two_sign(&grid, args.iso);
        let mut mesh = lobes.positive;
        mesh.append(&lobes.negative);
        mesh
    } else {
        surface::extract(&grid, args.iso)
    };
    let t_mesh = t1.elapsed().as_secs_f64();
    let mut mesh = mesh;
    let mut values_description = String::new();
    if let (Some(unit), true) = (unit, is_pb(args)) {
        let t2 = Instant::now();
        let (values, legend) = pb_at_vertices(&mut system, &mesh, args, unit)?;
        mesh.values = values;
        values_description = legend;
        if let Some((lo, hi)) = min_max(&mesh.values) {
            println!(
                "{values_description}: {lo:.4} to {hi:.4}, {:.3} s",
                t2.elapsed().as_secs_f64()
            );
        }
    } else if let Some(unit) = unit {
        let t2 = Instant::now();
        let dielectric = args
            .dielectric
            .model(orbitfield::compute::esp::screening::DEFAULT_SCREENING_TEMPERATURE_KELVIN)?;
        let (values, whose) = esp_at_vertices(&mut system, &mesh, dielectric)?;
        let scale = unit.per_hartree_per_e();
        mesh.values = values.iter().map(|&v| (f64::from(v) * scale) as f32).collect();
        values_description = format!(
            "electrostatic potential ({whose}, {}) at the vertex, {}",
            dielectric.label(),
            unit.label()
        );
        if let Some((lo, hi)) = min_max(&mesh.values) {
            println!(
                "{values_description}: {lo:.4} to {hi:.4}, {:.3} s",
                t2.elapsed().as_secs_f64()
            );
        }
    }
    if mesh.is_empty() {
        let range = grid
            .min_max()
            .map(|(lo, hi)| format!("values span {lo} to {hi}"))
            .unwrap_or_else(|| "no finite values".into());
        eprintln!(
            "warning: the surface at {} is empty ({range}); writing an empty mesh",
            args.iso
        );
    }
    let (_, bytes) = export::mesh_file_bytes(&args.output, &mesh, &values_description)
        .with_context(|| format!("writing {}", args.output.display()))?;
    io::write_atomically(&args.output, &bytes).with_context(|| format!("writing {}", args.output.display()))?;
    report(&grid, &mesh, args, t_field, t_mesh);
    Ok(())
}

/// The unit of --color-by's values, or `None` without --color-by; refuses what cannot be written.
fn color_unit(args: &SurfaceArgs) -> Result<Option<PotentialUnit>> {
    let Some(what) = args.color_by.as_deref() else {
        args.dielectric.refuse_for("a surface without --color-by esp")?;
        if args.color_offset.is_some() || args.eps_in.is_some() || args.probe.is_some() {
            bail!("--color-offset, --eps-in and --probe apply to --color-by pb");
        }
        return Ok(None);
    };
    let pb = what.trim().eq_ignore_ascii_case("pb");
    if !(pb || what.trim().eq_ignore_ascii_case("esp")) {
        bail!("--color-by: expected esp or pb, found {what:?}");
    }
    if !pb && (args.color_offset.is_some() || args.eps_in.is_some() || args.probe.is_some()) {
        bail!("--color-offset, --eps-in and --probe apply to --color-by pb");
    }
    if pb {
        if args.dielectric.dielectric.is_some() {
            bail!(
                "--dielectric applies to --color-by esp; pb solves the Poisson-Boltzmann equation (--eps-in, --eps-out)"
            );
        }
        return PotentialUnit::parse(&args.potential_unit, PbParams::default().temperature_kelvin)
            .map(Some)
            .map_err(|e| anyhow!("--potential-unit: {e}"));
    }
    if export::MeshFormat::from_path(&args.output) != Some(export::MeshFormat::Ply) {
        bail!(
            "--color-by esp: {} is OBJ, which has no place for per-vertex values; write a .ply",
            args.output.display()
        );
    }
    PotentialUnit::parse(&args.potential_unit, DEFAULT_TEMPERATURE_KELVIN)
        .map(Some)
        .map_err(|e| anyhow!("--potential-unit: {e}"))
}

/// The potential (hartree/e) at every vertex of `mesh`, and whose it is: the first wavefunction's
/// own, else the structure's charges' at the first frame.
fn esp_at_vertices(
    system: &mut io::System,
    mesh: &MeshData,
    dielectric: Dielectric,
) -> Result<(Vec<f32>, &'static str)> {
    use orbitfield::analysis::vertex_values::{potential_at_vertices_in, qm_potential_at_vertices};
    let source = source_from_system(FieldSpec::Potential, system, 0).context("--color-by esp")?;
    Ok(match &source.input {
        FieldInput::Wavefunction(wf) => {
            if !dielectric.is_vacuum() {
                bail!("--dielectric: the potential of a wavefunction is computed in vacuum only");
            }
            (qm_potential_at_vertices(mesh, wf)?, "wavefunction")
        }
        FieldInput::Charges(q) => {
            // A screened medium stands for the solvent: explicit water and ions are left out.
            let solute = (!dielectric.is_vacuum())
                .then(|| orbitfield::compute::esp::screening::solute_charges(&system.structure, q))
                .flatten();
            match solute {
                Some((q, note)) => {
                    eprintln!("note: {note}");
                    (potential_at_vertices_in(mesh, &q, dielectric)?, "point charges")
                }
                None => (potential_at_vertices_in(mesh, q, dielectric)?, "point charges"),
            }
        }
        _ => bail!("--color-by esp: the files give neither a wavefunction nor point charges"),
    })
}

fn is_pb(args: &SurfaceArgs) -> bool {
    args.color_by
        .as_deref()
        .is_some_and(|w| w.trim().eq_ignore_ascii_case("pb"))
}

/// The Poisson-Boltzmann potential (in `unit`) at every vertex of `mesh` (or `--color-offset`
/// outside it along the normal), and the values' description naming the model.
fn pb_at_vertices(
    system: &mut io::System,
    mesh: &MeshData,
    args: &SurfaceArgs,
    unit: PotentialUnit,
) -> Result<(Vec<f32>, String)> {
    let d = PbParams::default();
    let params = PbParams {
        eps_in: args.eps_in.unwrap_or(d.eps_in),
        eps_out: args.dielectric.eps_out.unwrap_or(d.eps_out),
        ionic_strength_molar: args.dielectric.ionic_strength.unwrap_or(d.ionic_strength_molar),
        probe_angstrom: args.probe.unwrap_or(d.probe_angstrom),
        ..d
    };
    let offset = args.color_offset.unwrap_or(0.0);
    if !(offset.is_finite() && (0.0..=10.0).contains(&offset)) {
        bail!("--color-offset {offset}: expected 0 to 10 Angstrom");
    }
    let mut said = false;
    let (atoms, _) = super::pb::atoms(system, 0, None, &mut said).context("--color-by pb")?;
    let lattice = super::pb::lattice_around(&atoms.positions_angstrom, args.pb_spacing, 0.0);
    let mut solver = super::pb::new_solver(&args.device)?;
    let solution = solver.solve(&atoms, &lattice, &params, None).context("--color-by pb")?;
    let scale = volt_per_kt_per_e(params.temperature_kelvin) / unit.volt();
    let mut outside = 0usize;
    let values: Vec<f32> = mesh
        .positions_angstrom
        .iter()
        .zip(&mesh.normals)
        .map(|(p, n)| {
            let at = std::array::from_fn(|k| f64::from(p[k]) + offset * f64::from(n[k]));
            solution.at(at).map_or_else(
                || {
                    outside += 1;
                    f32::NAN
                },
                |u| (u * scale) as f32,
            )
        })
        .collect();
    if outside > 0 {
        bail!("--color-by pb: {outside} vertices lie outside the Poisson-Boltzmann lattice");
    }
    let legend = format!(
        "{} ({}, {:?} points {} A apart, {}){}, {}",
        super::pb::legend(&params),
        solver.engine_name(),
        lattice.dims,
        lattice.spacing_angstrom,
        params.label(),
        if offset > 0.0 {
            format!(", {offset} A outside the surface")
        } else {
            String::new()
        },
        unit.label()
    );
    Ok((values, legend))
}

fn min_max(values: &[f32]) -> Option<(f32, f32)> {
    let finite = values.iter().copied().filter(|v| v.is_finite());
    let lo = finite.clone().reduce(f32::min)?;
    let hi = finite.reduce(f32::max)?;
    Some((lo, hi))
}

fn pick_grid(system: &mut io::System, args: &SurfaceArgs) -> Result<Grid3> {
    if !system.grids.is_empty() {
        let n = match args.field.as_deref() {
            None => 1,
            Some(s) => s
                .trim()
                .parse::<usize>()
                .ok()
                .filter(|&n| n >= 1)
                .with_context(|| format!("--field {s}: volume files take a lattice number from 1"))?,
        };
        let Some(grid) = system.grids.get(n - 1) else {
            bail!("--field {n}: the files hold {} lattice(s)", system.grids.len());
        };
        return Ok(grid.clone());
    }
    let Some(field_text) = args.field.as_deref() else {
        bail!("the files hold no volume (cube, DX): name the field to compute with --field (e.g. mo:homo)");
    };
    // The files loaded once: a second load said their notes twice.
    let source = source_from_system(field_text.parse()?, system, 0)?;
    let spec = LatticeSpec::AroundAtoms {
        spacing_angstrom: args.spacing,
        padding_angstrom: args.padding,
    };
    let lattice = orbitfield::compute::request::lattice(
        &orbitfield::compute::request::LatticeChoice::Spec(spec),
        &source.positions_angstrom(),
        None,
    )?;
    let job = FieldJob {
        field: source.field.clone(),
        lattice,
        input: source.input.clone(),
    };
    let Evaluated::Lattice(mut grid) = evaluate(&args.device, Request::Lattice(job))? else {
        bail!("internal error: a lattice request returned points");
    };
    grid.description = format!("{} ({})", source.spec, source.spec.unit());
    Ok(grid)
}

fn report(grid: &Grid3, mesh: &MeshData, args: &SurfaceArgs, t_field: f64, t_mesh: f64) {
    let d = grid.lattice.dims;
    println!(
        "{}: {} vertices, {} triangles, area {:.3} A^2, enclosed volume {:.3} A^3",
        args.output.display(),
        mesh.positions_angstrom.len(),
        mesh.triangle_count(),
        // + 0.0: an empty mesh's sums are -0.0, printed "-0.000".
        mesh.area_angstrom2() + 0.0,
        mesh.enclosed_volume_angstrom3() + 0.0
    );
    println!(
        "lattice {}x{}x{} ({}), iso {}{}; field {:.3} s, surface {:.3} s",
        d[0],
        d[1],
        d[2],
        grid.description,
        args.iso,
        if args.both_signs { " and its negative" } else { "" },
        t_field,
        t_mesh
    );
}
