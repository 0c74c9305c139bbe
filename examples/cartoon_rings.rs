//! Times the CPU half of the render device's cartoon for adk copied 468 times on a grid (100,152
//! residues), secondary structure given (DSSP of the frame, made once): segments then
//! `device::rings_into` (into the previous frame's buffers), against `Polymer::rings_for` with its
//! workspace kept from frame to frame, alternated in one process; medians. Run from the repository
//! root: `cargo run --release --example cartoon_rings [repeats]`; the thread count is rayon's
//! (`RAYON_NUM_THREADS`).

use orbitfield::analysis::dssp::DsspOptions;
use orbitfield::analysis::polymer::{CartoonWorkspace, Coloring, Polymer, replicate_on_grid};
use orbitfield::surface::cartoon::CartoonParams;
use orbitfield::surface::cartoon::device::{CartoonRings, rings_into};
use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

fn main() -> anyhow::Result<()> {
    let repeats: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(31);
    // `new` as the second argument: the new path alone (for a profiler).
    let only_new = std::env::args().nth(2).is_some_and(|a| a == "new");
    let md = Path::new("tests/data/md");
    let mut system = orbitfield::io::load(&[md.join("adk.psf"), md.join("adk_dims.dcd")])?;
    let positions = system.trajectory.frame(0)?.positions_angstrom;
    let (big, big_positions) = replicate_on_grid(&system.structure, &positions, 468, 60.0);
    let polymer = Polymer::new(&big);
    let params = CartoonParams::for_residue_count(polymer.residue_count());
    let secondary = polymer.protein.assign(&big_positions, &DsspOptions::default());
    let coloring = Coloring::SecondaryStructure;
    let (mut old_rings, mut new_rings) = (CartoonRings::default(), CartoonRings::default());
    let mut workspace = CartoonWorkspace::default();
    let (mut old_t, mut new_t) = (Vec::new(), Vec::new());
    // Two warm-up rounds, then the repeats; old and new alternate.
    for round in 0..repeats + 2 {
        let t = Instant::now();
        if !only_new {
            let segments = polymer.segments(&big_positions, &secondary, coloring, None);
            rings_into(&segments, &params, &mut old_rings);
            drop(black_box(segments));
        }
        let old = t.elapsed().as_secs_f64() * 1e3;
        let t = Instant::now();
        polymer.rings_for(
            &big_positions,
            &secondary,
            coloring,
            None,
            &params,
            &mut new_rings,
            &mut workspace,
        );
        black_box(&new_rings);
        let new = t.elapsed().as_secs_f64() * 1e3;
        if round >= 2 {
            old_t.push(old);
            new_t.push(new);
        }
    }
    if !only_new && old_rings != new_rings {
        anyhow::bail!("the two paths' inputs differ");
    }
    println!(
        "{} residues, {} threads, median of {repeats}: segments + rings_into {:.3} ms, rings_for {:.3} ms",
        polymer.residue_count(),
        rayon::current_num_threads(),
        median(old_t),
        median(new_t),
    );
    Ok(())
}
