//! Frame decoding speed of the DCD, XTC, AMBER NetCDF, TRR and LAMMPS dump readers: all frames in
//! order, and frames in a shuffled order (random access by offset). The XTC group also times the
//! `molly` crate on the same file. The TRR and dump files are the XTC system (47681 atoms, 10 frames)
//! written by `io::write` (TRR) and by this file (a `dump custom` text with `id type x y z`) into
//! `target/bench-data/`, where `benches/trajectories_mdanalysis.py` reads the same files.
//! Numbers and the MDAnalysis comparison (`benches/trajectories_mdanalysis.py`) are recorded in
//! `benches/RESULTS.md` under "Trajectories".

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use orbitfield::io::amber::NetcdfReader;
use orbitfield::io::dcd::DcdReader;
use orbitfield::io::lammps_dump::LammpsDumpReader;
use orbitfield::io::trr::TrrReader;
use orbitfield::io::xtc::XtcReader;
use orbitfield::model::{Frame, FrameSource};
use std::hint::black_box;
use std::path::{Path, PathBuf};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/md").join(name)
}

/// A fixed permutation of `0..n` (multiplicative stride coprime with n).
fn shuffled(n: usize) -> Vec<usize> {
    let stride = (1..n).rev().find(|s| gcd(*s, n) == 1 && *s * 3 > n * 2).unwrap_or(1);
    (0..n).map(|i| (i * stride + 7) % n).collect()
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 { a } else { gcd(b, a % b) }
}

fn read_frames(src: &mut dyn FrameSource, order: &[usize], frame: &mut Frame) -> f32 {
    let mut sum = 0.0;
    for &i in order {
        if src.read_frame(i, frame).is_ok() {
            sum += frame.positions_angstrom.first().map_or(0.0, |p| p[0]);
        }
    }
    sum
}

fn bench_source(c: &mut Criterion, group_name: &str, mut src: Box<dyn FrameSource>) {
    let n = src.n_frames();
    let in_order: Vec<usize> = (0..n).collect();
    let random = shuffled(n);
    let mut frame = Frame::default();
    let mut group = c.benchmark_group(group_name);
    group.throughput(Throughput::Elements(n as u64));
    group.bench_function("all frames", |b| {
        b.iter(|| black_box(read_frames(src.as_mut(), &in_order, &mut frame)))
    });
    group.bench_function("random access", |b| {
        b.iter(|| black_box(read_frames(src.as_mut(), &random, &mut frame)))
    });
    group.finish();
}

fn dcd(c: &mut Criterion) {
    let path = data("adk_dims.dcd");
    let Ok(r) = DcdReader::open(&path) else { return };
    bench_source(c, "dcd adk_dims (3341 atoms, 98 frames)", Box::new(r));
    let mut group = c.benchmark_group("dcd adk_dims (3341 atoms, 98 frames)");
    group.throughput(Throughput::Elements(98));
    group.bench_function("open + all frames", |b| {
        b.iter(|| {
            let mut frame = Frame::default();
            DcdReader::open(&path)
                .map(|mut r| read_frames(&mut r, &(0..98).collect::<Vec<_>>(), &mut frame))
                .ok()
        })
    });
    group.finish();
}

fn xtc(c: &mut Criterion) {
    let path = data("adk_oplsaa.xtc");
    let Ok(r) = XtcReader::open(&path) else { return };
    bench_source(c, "xtc adk_oplsaa (47681 atoms, 10 frames)", Box::new(r));
    let mut group = c.benchmark_group("xtc adk_oplsaa (47681 atoms, 10 frames)");
    group.throughput(Throughput::Elements(10));
    group.bench_function("open + all frames", |b| {
        b.iter(|| {
            let mut frame = Frame::default();
            XtcReader::open(&path)
                .map(|mut r| read_frames(&mut r, &(0..10).collect::<Vec<_>>(), &mut frame))
                .ok()
        })
    });
    group.bench_function("molly: open + all frames", |b| {
        b.iter(|| {
            let mut frame = molly::Frame::default();
            let mut n = 0;
            if let Ok(mut r) = molly::XTCReader::open(&path) {
                while r.read_frame(&mut frame).is_ok() {
                    n += 1;
                }
            }
            black_box(n)
        })
    });
    group.finish();
}

fn netcdf(c: &mut Criterion) {
    let path = data("amber/tz2.truncoct.nc");
    let Ok(r) = NetcdfReader::open(&path) else { return };
    let name = "netcdf tz2.truncoct (5827 atoms, 10 frames)";
    bench_source(c, name, Box::new(r));
    let mut group = c.benchmark_group(name);
    group.throughput(Throughput::Elements(10));
    group.bench_function("open + all frames", |b| {
        b.iter(|| {
            let mut frame = Frame::default();
            NetcdfReader::open(&path)
                .map(|mut r| read_frames(&mut r, &(0..10).collect::<Vec<_>>(), &mut frame))
                .ok()
        })
    });
    group.finish();
}

/// `target/bench-data/NAME`, written from the XTC system when missing.
fn bench_file(name: &str) -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-data");
    let path = dir.join(name);
    if path.exists() {
        return Some(path);
    }
    std::fs::create_dir_all(&dir).ok()?;
    let mut sys = orbitfield::io::load(&[data("adk_oplsaa.gro"), data("adk_oplsaa.xtc")]).ok()?;
    let frames: Vec<usize> = (0..sys.trajectory.n_frames()).collect();
    if name.ends_with(".trr") {
        orbitfield::io::write::write_frames(&path, &sys.structure, &mut sys.trajectory, None, &frames, &mut |_| {})
            .ok()?;
        return Some(path);
    }
    use std::fmt::Write;
    let mut text = String::new();
    for &i in &frames {
        let f = sys.trajectory.frame(i).ok()?;
        let l = f.cell.map_or([0.0; 3], |c| c.lengths_angstrom);
        let _ = write!(
            text,
            "ITEM: TIMESTEP\n{}\nITEM: NUMBER OF ATOMS\n{}\nITEM: BOX BOUNDS pp pp pp\n0 {}\n0 {}\n0 {}\nITEM: ATOMS id type x y z\n",
            i * 1000,
            f.positions_angstrom.len(),
            l[0],
            l[1],
            l[2]
        );
        // Ids in reverse order, so the reader's sort by id does real work.
        let n = f.positions_angstrom.len();
        for (k, p) in f.positions_angstrom.iter().enumerate().rev() {
            let _ = writeln!(text, "{} {} {:.5} {:.5} {:.5}", n - k, 1 + k % 4, p[0], p[1], p[2]);
        }
    }
    orbitfield::io::write_atomically(&path, text.as_bytes()).ok()?;
    Some(path)
}

fn trr(c: &mut Criterion) {
    let Some(path) = bench_file("adk_oplsaa.trr") else {
        return;
    };
    let Ok(r) = TrrReader::open(&path) else { return };
    bench_source(c, "trr adk_oplsaa (47681 atoms, 10 frames)", Box::new(r));
}

fn lammps_dump(c: &mut Criterion) {
    let Some(path) = bench_file("adk_oplsaa.lammpstrj") else {
        return;
    };
    let Ok(r) = LammpsDumpReader::open(&path) else { return };
    bench_source(c, "lammps dump adk_oplsaa (47681 atoms, 10 frames)", Box::new(r));
}

criterion_group!(benches, dcd, xtc, netcdf, trr, lammps_dump);
criterion_main!(benches);
