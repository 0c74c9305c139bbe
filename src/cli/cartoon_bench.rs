//! `orbitfield bench --cartoon`: DSSP and cartoon mesh per frame, wall-clock medians on the rayon
//! pool (all cores, or `RAYON_NUM_THREADS`; each line names the thread count). Cases: adk (the first frame of `tests/data/md/adk_dims.dcd`, 214 residues) and
//! copies of it on a grid up to 100,000 residues, each with DSSP alone, the mesh alone (from given
//! codes) and both together, as the viewer's cartoon worker runs them for every frame: into the
//! previous frame's buffers (as the worker recycles them), and into fresh memory. DSSP is also
//! split by pass (H-bond search and the rest).

use anyhow::{Context, Result};
use orbitfield::analysis::dssp::{DsspOptions, DsspPassTimes, DsspWorkspace};
use orbitfield::analysis::polymer::{Coloring, Polymer, replicate_on_grid};
use orbitfield::model::Structure;
use orbitfield::surface::MeshData;
use orbitfield::surface::cartoon::{self, CartoonParams};
use serde::Serialize;
use std::path::Path;
use std::time::Instant;

/// One system timed.
#[derive(Serialize, Debug)]
pub struct CartoonResult {
    pub name: String,
    pub residues: usize,
    pub threads: usize,
    pub dssp_ms: f64,
    /// DSSP by pass (medians over the repeats of each pass's wall-clock time).
    pub dssp_passes: DsspPassTimes,
    pub mesh_ms: f64,
    /// DSSP and mesh into the previous frame's buffers.
    pub total_ms: f64,
    /// DSSP and mesh into fresh memory.
    pub fresh_ms: f64,
    pub vertices: usize,
    pub triangles: usize,
    /// Bytes of one frame's mesh (positions, normals, colours, values, indices): what the mesh step
    /// writes to memory per frame, its floor on a machine's memory bandwidth.
    pub mesh_bytes: usize,
}

/// The median of each pass over `times`.
fn median_passes(times: &[DsspPassTimes]) -> DsspPassTimes {
    let arrays: Vec<[f64; 7]> = times.iter().map(DsspPassTimes::to_array).collect();
    DsspPassTimes::from_array(std::array::from_fn(|k| {
        let mut v: Vec<f64> = arrays.iter().filter_map(|a| a.get(k).copied()).collect();
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
    }))
}

fn median_ms(repeats: usize, mut f: impl FnMut()) -> f64 {
    f();
    let mut times: Vec<f64> = (0..repeats.max(1))
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times.get(times.len() / 2).copied().unwrap_or(f64::NAN)
}

fn case(name: String, structure: &Structure, positions: &[[f32; 3]], repeats: usize) -> CartoonResult {
    let polymer = Polymer::new(structure);
    let params = CartoonParams::for_residue_count(polymer.residue_count());
    let options = DsspOptions::default();
    let secondary = polymer.protein.assign(positions, &options);
    // Into the previous frame's buffers, as the cartoon worker's thread keeps them.
    let mut workspace = DsspWorkspace::default();
    let mut codes = Vec::new();
    let mut pass_times = Vec::new();
    let dssp_ms = median_ms(repeats, || {
        polymer
            .protein
            .assign_into(positions, &options, &mut workspace, &mut codes);
        pass_times.push(workspace.times());
        std::hint::black_box(&codes);
    });
    // The first call (the warm-up) filled the buffers.
    let dssp_passes = median_passes(pass_times.get(1..).unwrap_or(&[]));
    // Into the previous frame's buffers, as the viewer's cartoon worker recycles them.
    let mut mesh = MeshData::default();
    let mesh_ms = median_ms(repeats, || {
        let segments = polymer.segments(positions, &secondary, Coloring::SecondaryStructure, None);
        cartoon::build_into(&segments, &params, &mut mesh);
        std::hint::black_box(&mesh);
    });
    let total_ms = median_ms(repeats, || {
        std::hint::black_box(polymer.mesh_into(positions, Coloring::SecondaryStructure, None, &params, &mut mesh));
    });
    let fresh_ms = median_ms(repeats, || {
        std::hint::black_box(polymer.mesh(positions, Coloring::SecondaryStructure, None, &params));
    });
    let (vertices, triangles) = (mesh.positions_angstrom.len(), mesh.indices.len() / 3);
    let mesh_bytes = std::mem::size_of_val(mesh.positions_angstrom.as_slice())
        + std::mem::size_of_val(mesh.normals.as_slice())
        + std::mem::size_of_val(mesh.colors_rgba8.as_slice())
        + std::mem::size_of_val(mesh.values.as_slice())
        + std::mem::size_of_val(mesh.indices.as_slice());
    CartoonResult {
        name,
        residues: polymer.residue_count(),
        threads: rayon::current_num_threads(),
        dssp_ms,
        dssp_passes,
        mesh_ms,
        total_ms,
        fresh_ms,
        vertices,
        triangles,
        mesh_bytes,
    }
}

/// Times adk and its grids of copies (`residue_targets`: residue counts to reach, e.g. 100,000).
pub fn run(residue_targets: &[usize], repeats: usize) -> Result<Vec<CartoonResult>> {
    let md = Path::new("tests/data/md");
    let files = [md.join("adk.psf"), md.join("adk_dims.dcd")];
    let mut system = orbitfield::io::load(&files).context("reading adk (run from the repository root)")?;
    let positions = system.trajectory.frame(0)?.positions_angstrom;
    let structure = &system.structure;
    let mut out = vec![case("adk".into(), structure, &positions, repeats)];
    let residues = out.first().map_or(1, |r| r.residues.max(1));
    for &target in residue_targets {
        let copies = target.div_ceil(residues).max(1);
        let (big, big_positions) = replicate_on_grid(structure, &positions, copies, 60.0);
        out.push(case(format!("adk x {copies}"), &big, &big_positions, repeats));
    }
    for r in &out {
        println!(
            "cartoon {:<14} {:>7} residues on {:>2} threads: DSSP {:>9.3} ms + mesh {:>9.3} ms; together {:>9.3} ms \
             ({:.0} frames/s; into fresh memory {:.3} ms; {} vertices, {} triangles, {:.1} MB)",
            r.name,
            r.residues,
            r.threads,
            r.dssp_ms,
            r.mesh_ms,
            r.total_ms,
            1e3 / r.total_ms,
            r.fresh_ms,
            r.vertices,
            r.triangles,
            r.mesh_bytes as f64 / 1e6
        );
        let passes: Vec<String> = DsspPassTimes::NAMES
            .iter()
            .zip(r.dssp_passes.to_array())
            .map(|(name, ms)| format!("{name} {ms:.3}"))
            .collect();
        println!("  DSSP by pass (ms): {}", passes.join(", "));
    }
    Ok(out)
}
