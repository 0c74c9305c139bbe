//! Secondary structure (DSSP) and cartoon mesh per frame: adk (214 residues, the first frame of
//! `tests/data/md/adk_dims.dcd`) and a 100,000-residue system of adk copies on a grid. Each group
//! times DSSP alone, the mesh alone (from given codes) and both, as the viewer runs them per frame.
//! `orbitfield bench --cartoon` prints the same figures; numbers are recorded in `benches/RESULTS.md`
//! under "Cartoon".

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use orbitfield::analysis::dssp::DsspOptions;
use orbitfield::analysis::polymer::{Coloring, Polymer, replicate_on_grid};
use orbitfield::io;
use orbitfield::surface::cartoon::CartoonParams;
use std::hint::black_box;
use std::path::Path;

fn bench_system(c: &mut Criterion, name: &str, structure: &orbitfield::model::Structure, positions: &[[f32; 3]]) {
    let polymer = Polymer::new(structure);
    let params = CartoonParams::for_residue_count(polymer.residue_count());
    let options = DsspOptions::default();
    let secondary = polymer.protein.assign(positions, &options);
    let mut group = c.benchmark_group(name);
    group.throughput(Throughput::Elements(polymer.residue_count() as u64));
    group.sample_size(20);
    group.bench_function("dssp", |b| {
        b.iter(|| black_box(polymer.protein.assign(positions, &options)))
    });
    group.bench_function("mesh", |b| {
        b.iter(|| {
            let segments = polymer.segments(positions, &secondary, Coloring::SecondaryStructure, None);
            black_box(orbitfield::surface::cartoon::build(&segments, &params))
        })
    });
    group.bench_function("dssp + mesh", |b| {
        b.iter(|| black_box(polymer.mesh(positions, Coloring::SecondaryStructure, None, &params)))
    });
    group.finish();
}

fn cartoon(c: &mut Criterion) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/md");
    let Ok(mut system) = io::load(&[dir.join("adk.psf"), dir.join("adk_dims.dcd")]) else {
        eprintln!("adk not readable: cartoon benchmark skipped");
        return;
    };
    let Ok(frame) = system.trajectory.frame(0) else { return };
    let positions = frame.positions_angstrom;
    bench_system(c, "cartoon adk (214 residues)", &system.structure, &positions);
    let residues = Polymer::new(&system.structure).residue_count().max(1);
    let copies = 100_000usize.div_ceil(residues);
    let (big, big_positions) = replicate_on_grid(&system.structure, &positions, copies, 60.0);
    let name = format!("cartoon adk x {copies} ({} residues)", copies * residues);
    bench_system(c, &name, &big, &big_positions);
}

criterion_group!(benches, cartoon);
criterion_main!(benches);
