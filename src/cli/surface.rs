//! `orbitfield surface FILE... --iso V -o mesh.ply|obj`: isosurface of a volume as a mesh file.
//!
//! Reads the files as one system (`io::load`); a cube or DX lattice is the field as it stands
//! (`--field N` picks the N-th lattice, 1-based, when there are several). Otherwise `--field` names
//! a field of a wavefunction (`esp`: its own potential, or that of a structure's charges), computed
//! on the CPU engine through the `grid` command's `evaluate` on a lattice `--spacing` apart around
//! the atoms. Extraction is
//! `surface::extract` (or both lobes with `--both-signs`); `--color-by esp` evaluates the
//! electrostatic potential exactly at every vertex (`analysis::vertex_values`: a wavefunction's own,
//! else the structure's charges') and stores it in the PLY file as the vertex property `value`. The
//! mesh is written atomically by `surface::export`, positions in Angstrom.

use super::grid::{Device, Evaluated, Request, evaluate, load_source, source_from_system};
use anyhow::{Context, Result, anyhow, bail};
use orbitfield::compute::esp::screening::Dielectric;
use orbitfield::compute::{FieldInput, FieldJob};
use orbitfield::io;
use orbitfield::model::Grid3;
use orbitfield::model::field::{DEFAULT_PADDING_ANGSTROM, DEFAULT_SPACING_ANGSTROM, FieldSpec, LatticeSpec};
use orbitfield::model::units::{DEFAULT_TEMPERATURE_KELVIN, PotentialUnit};
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
    #[arg(long, default_value_t = DEFAULT_SPACING_ANGSTROM)]
    pub spacing: f64,
    /// Padding around the atoms in Angstrom when the field is computed.
    #[arg(long, default_value_t = DEFAULT_PADDING_ANGSTROM)]
    pub padding: f64,
    /// Write both lobes of a signed field: surfaces at +|iso| and -|iso|, each facing outward.
    #[arg(long)]
    pub both_signs: bool,
    /// `esp`: store the electrostatic potential at every vertex in the PLY file (vertex property
    /// `value`, in --potential-unit), evaluated exactly at the vertex: the wavefunction's own
    /// (nuclei and electron density) or else that of the structure's charges.
    #[arg(long, value_name = "esp")]
    pub color_by: Option<String>,
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
    let mut system = io::load(&args.files)?;
    let grid = pick_grid(&system, args)?;
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
    if let Some(unit) = unit {
        let t2 = Instant::now();
        let dielectric = args.dielectric.model(DEFAULT_TEMPERATURE_KELVIN)?;
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
        return Ok(None);
    };
    if !what.trim().eq_ignore_ascii_case("esp") {
        bail!("--color-by: expected esp, found {what:?}");
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
        FieldInput::Charges(q) => (potential_at_vertices_in(mesh, q, dielectric)?, "point charges"),
        _ => bail!("--color-by esp: the files give neither a wavefunction nor point charges"),
    })
}

fn min_max(values: &[f32]) -> Option<(f32, f32)> {
    let finite = values.iter().copied().filter(|v| v.is_finite());
    let lo = finite.clone().reduce(f32::min)?;
    let hi = finite.reduce(f32::max)?;
    Some((lo, hi))
}

fn pick_grid(system: &io::System, args: &SurfaceArgs) -> Result<Grid3> {
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
    let source = load_source(field_text, &args.files, 0)?;
    let lattice = LatticeSpec::AroundAtoms {
        spacing_angstrom: args.spacing,
        padding_angstrom: args.padding,
    }
    .build(&source.positions_angstrom())?;
    let job = FieldJob {
        field: source.field.clone(),
        lattice,
        input: source.input.clone(),
    };
    let Evaluated::Lattice(mut grid) = evaluate(Device::Cpu, Request::Lattice(job))? else {
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
        mesh.area_angstrom2(),
        mesh.enclosed_volume_angstrom3()
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
