//! Parse throughput of the structure readers on the real test files and on large synthetic files
//! made by replicating them in memory, plus bond guessing on a million atoms, and BinaryCIF
//! against mmCIF on the same entries (`bcif_vs_mmcif`).
//!
//!     cargo bench --bench parse
//!
//! Results and the peers measured beside them are in benches/RESULTS.md ("Parsing").

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use orbitfield::io;
use orbitfield::model::bonds::guess_bonds;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/md").join(name)
}

fn read(name: &str) -> Vec<u8> {
    std::fs::read(data(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

type Reader = fn(&Path, &[u8]) -> Result<io::load::Parsed, io::ReadError>;

/// A single-model PDB of `copies` x the first NMR model's ATOM records (about 80 bytes per atom).
fn synthetic_pdb(copies: usize) -> Vec<u8> {
    let text = read("nmr_neopetrosiamide.pdb");
    let atoms: Vec<&[u8]> = text
        .split(|&c| c == b'\n')
        .skip_while(|l| !l.starts_with(b"MODEL"))
        .skip(1)
        .take_while(|l| !l.starts_with(b"ENDMDL"))
        .filter(|l| l.starts_with(b"ATOM") || l.starts_with(b"HETATM"))
        .collect();
    let mut out = Vec::new();
    out.extend_from_slice(b"CRYST1  100.000  100.000  100.000  90.00  90.00  90.00 P 1           1\n");
    for _ in 0..copies {
        for l in &atoms {
            out.extend_from_slice(l);
            out.push(b'\n');
        }
    }
    out.extend_from_slice(b"END\n");
    out
}

/// A GRO frame with `copies` x the atoms of adk_oplsaa.gro.
fn synthetic_gro(copies: usize) -> Vec<u8> {
    let text = read("adk_oplsaa.gro");
    let lines: Vec<&[u8]> = text.split(|&c| c == b'\n').filter(|l| !l.is_empty()).collect();
    let (atoms, box_line) = (&lines[2..lines.len() - 1], lines[lines.len() - 1]);
    let mut out = Vec::new();
    out.extend_from_slice(b"replicated adk_oplsaa\n");
    out.extend_from_slice(format!("{}\n", atoms.len() * copies).as_bytes());
    for _ in 0..copies {
        for l in atoms {
            out.extend_from_slice(l);
            out.push(b'\n');
        }
    }
    out.extend_from_slice(box_line);
    out.push(b'\n');
    out
}

fn parse(c: &mut Criterion) {
    let mut g = c.benchmark_group("parse");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    let files: [(&str, Reader); 6] = [
        ("nmr_neopetrosiamide.pdb", io::pdb::read),
        ("adk_open.pqr", io::pdb::read_pqr),
        ("adk.psf", io::psf::read),
        ("adk_oplsaa.gro", io::gro::read),
        ("2r9r-1b.xyz", io::xyz::read),
        ("nmr_neopetrosiamide.cif", io::mmcif::read),
    ];
    for (name, reader) in files {
        let bytes = read(name);
        let path = data(name);
        g.throughput(Throughput::Bytes(bytes.len() as u64));
        g.bench_function(name, |b| {
            b.iter(|| reader(&path, black_box(&bytes)).map(|p| p.structure.len()))
        });
    }
    let big_pdb = synthetic_pdb(640); // 250,880 atoms, ~20 MB
    g.throughput(Throughput::Bytes(big_pdb.len() as u64));
    g.bench_function("synthetic_250k_atoms.pdb", |b| {
        b.iter(|| io::pdb::read(Path::new("synthetic.pdb"), black_box(&big_pdb)).map(|p| p.structure.len()))
    });
    let big_gro = synthetic_gro(5); // 238,405 atoms, ~10.7 MB
    g.throughput(Throughput::Bytes(big_gro.len() as u64));
    g.bench_function("synthetic_238k_atoms.gro", |b| {
        b.iter(|| io::gro::read(Path::new("synthetic.gro"), black_box(&big_gro)).map(|p| p.structure.len()))
    });
    g.finish();
}

/// 27 copies of the solvated adk system (47,681 atoms each) on a 3 x 3 x 3 grid: 1,287,387 atoms.
fn bonds(c: &mut Criterion) {
    let parsed = io::gro::read(&data("adk_oplsaa.gro"), &read("adk_oplsaa.gro")).unwrap_or_default();
    let one = &parsed.structure;
    let base = parsed
        .frames
        .first()
        .map(|f| f.positions_angstrom.clone())
        .unwrap_or_default();
    let mut s = orbitfield::model::Structure::default();
    let mut positions = Vec::new();
    for copy in 0..27 {
        let shift = [
            (copy % 3) as f32 * 130.0,
            ((copy / 3) % 3) as f32 * 130.0,
            (copy / 9) as f32 * 130.0,
        ];
        for (i, p) in base.iter().enumerate() {
            s.push_atom(
                one.elements[i],
                one.names[i],
                one.resnames[i],
                one.resids[i],
                one.chains[i],
                one.segids[i],
            );
            positions.push([p[0] + shift[0], p[1] + shift[1], p[2] + shift[2]]);
        }
    }
    let mut g = c.benchmark_group("bonds");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(5));
    g.throughput(Throughput::Elements(s.len() as u64));
    g.bench_function("guess_1.29M_atoms", |b| {
        b.iter(|| guess_bonds(black_box(&s), black_box(&positions)).len())
    });
    g.finish();
}

/// BinaryCIF against mmCIF on the same entries (decompressed bytes in memory; issue 36): the
/// altloc entry 3o5r, the 38-model NMR entry 1l2y and the capsid entry 1f2n.
fn bcif_vs_mmcif(c: &mut Criterion) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/files2");
    let mut g = c.benchmark_group("bcif_vs_mmcif");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    for (entry, bcif) in [("3o5r", "3o5r.bcif"), ("1l2y", "1l2y.bcif.gz"), ("1f2n", "1f2n.bcif")] {
        let cif_path = dir.join(format!("{entry}.cif.gz"));
        let cif = io::read_bytes(&cif_path).unwrap_or_default();
        let bcif_path = dir.join(bcif);
        let bin = io::read_bytes(&bcif_path).unwrap_or_default();
        g.bench_function(format!("{entry}.cif"), |b| {
            b.iter(|| io::mmcif::read(&cif_path, black_box(&cif)).map(|p| p.structure.len()))
        });
        g.bench_function(format!("{entry}.bcif"), |b| {
            b.iter(|| io::bcif::read(&bcif_path, black_box(&bin)).map(|p| p.structure.len()))
        });
    }
    g.finish();
}

criterion_group!(benches, parse, bonds, bcif_vs_mmcif);
criterion_main!(benches);
