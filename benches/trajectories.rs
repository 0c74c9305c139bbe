//! Frame decoding speed of the DCD, XTC, AMBER NetCDF, TRR and LAMMPS dump readers: all frames in
//! order, and frames in a shuffled order (random access by offset). The XTC group also times the
//! `molly` crate on the same file. The NetCDF, TRR and dump groups read adk_dims (3341 atoms, 98
//! frames) and adk_oplsaa (47681 atoms, 10 frames) written by `io::write` (NetCDF, TRR: what
//! `orbitfield convert` writes) and by this file (a `dump custom` text with `id type x y z`) into
//! `target/bench-data/`, where `benches/trajectories_mdanalysis.py` reads the same files. The
//! "adk checks" group shows what the alternate-location and partial-file handling cost.
//! Numbers and the MDAnalysis comparison are recorded in `benches/RESULTS.md` under "Trajectories".

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use orbitfield::io::amber::NetcdfReader;
use orbitfield::io::dcd::DcdReader;
use orbitfield::io::lammps_dump::LammpsDumpReader;
use orbitfield::io::trr::TrrReader;
use orbitfield::io::xtc::XtcReader;
use orbitfield::model::{Fork, Frame, FrameSource};
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

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

/// Prints the median wall time of `passes` passes over `order` (the statistic
/// `benches/trajectories_mdanalysis.py` prints): on a shared machine a pass of a millisecond or less
/// is rarely interrupted, so the median shows the reader's own speed while criterion's estimates
/// include the time spent waiting for a core.
fn median_of_passes(name: &str, src: &mut dyn FrameSource, order: &[usize], frame: &mut Frame, passes: usize) {
    black_box(read_frames(src, order, frame));
    let mut times: Vec<f64> = (0..passes)
        .map(|_| {
            let t = std::time::Instant::now();
            black_box(read_frames(src, order, frame));
            t.elapsed().as_secs_f64()
        })
        .collect();
    times.sort_by(f64::total_cmp);
    let t = times.get(passes / 2).copied().unwrap_or(0.0);
    let per_frame = t / order.len().max(1) as f64;
    println!(
        "{name}: median of {passes} passes {:.1} us, {:.2} us per frame",
        t * 1e6,
        per_frame * 1e6
    );
}

/// The process's pair worker ([`orbitfield::jobs::pair`]) while `on`, else both halves on the
/// calling thread: one reader timed both ways in alternation.
#[derive(Debug)]
struct Switch {
    on: AtomicBool,
    pair: Option<Arc<dyn Fork>>,
}

impl Fork for Switch {
    fn join(&self, first: &mut (dyn FnMut() + Send), second: &mut (dyn FnMut() + Send)) {
        match &self.pair {
            Some(pair) if self.on.load(Ordering::Relaxed) => pair.join(first, second),
            _ => {
                first();
                second();
            }
        }
    }
}

fn bench_source(c: &mut Criterion, group_name: &str, mut src: Box<dyn FrameSource>) {
    let n = src.n_frames();
    let in_order: Vec<usize> = (0..n).collect();
    let random = shuffled(n);
    let mut frame = Frame::default();
    if group_name.starts_with("netcdf") {
        // Large frames are decoded in two halves by the pair worker, as the viewer and the CLI
        // do; the medians with it and on one thread alternate, three rounds of each.
        let switch = Arc::new(Switch {
            on: AtomicBool::new(true),
            pair: orbitfield::jobs::pair::decoding_fork(),
        });
        src.share_decoding(switch.clone());
        for round in 0..3 {
            for on in [false, true] {
                switch.on.store(on, Ordering::Relaxed);
                let threads = if on { "pair worker" } else { "one thread" };
                for (what, order) in [("all frames", &in_order), ("random access", &random)] {
                    let name = format!("{group_name}/{what} ({threads}, round {})", round + 1);
                    median_of_passes(&name, src.as_mut(), order, &mut frame, 201);
                }
            }
        }
    }
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

/// The systems the generated files are written from: adk_dims (adk.psf + adk_dims.dcd, 3341
/// atoms, 98 frames) and adk_oplsaa (adk_oplsaa.gro + .xtc, 47681 atoms, 10 frames).
fn source_files(stem: &str) -> [PathBuf; 2] {
    if stem == "adk_dims" {
        [data("adk.psf"), data("adk_dims.dcd")]
    } else {
        [data("adk_oplsaa.gro"), data("adk_oplsaa.xtc")]
    }
}

/// `target/bench-data/STEM.EXT`, written from the system `STEM` when missing: `.trr`, `.nc` and
/// `.pdb` (first frame) by `io::write` (what `orbitfield convert` writes), `.lammpstrj` here (a `dump
/// custom` text with `id type x y z`), `_altloc.pdb` the PDB with alternate-location indicators
/// A/B on every atom of every other residue, `_cut.dcd` the DCD with its last frame cut in half and
/// `_copy.dcd` a complete copy beside it (the same directory, so only the cut differs).
fn bench_file(stem: &str, ext: &str) -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-data");
    let sep = if ext.starts_with('_') { "" } else { "." };
    let path = dir.join(format!("{stem}{sep}{ext}"));
    if path.exists() {
        return Some(path);
    }
    std::fs::create_dir_all(&dir).ok()?;
    if ext == "_altloc.pdb" {
        let pdb = std::fs::read_to_string(bench_file(stem, "pdb")?).ok()?;
        let mut text = String::new();
        for line in pdb.lines() {
            let resid: usize = line.get(22..26).and_then(|r| r.trim().parse().ok()).unwrap_or(1);
            if line.starts_with("ATOM") && line.len() > 17 && resid.is_multiple_of(2) {
                let alt = if resid.is_multiple_of(4) { "A" } else { "B" };
                text.push_str(&line[..16]);
                text.push_str(alt);
                text.push_str(&line[17..]);
            } else {
                text.push_str(line);
            }
            text.push('\n');
        }
        orbitfield::io::write_atomically(&path, text.as_bytes()).ok()?;
        return Some(path);
    }
    if ext == "_cut.dcd" || ext == "_copy.dcd" {
        let bytes = std::fs::read(data("adk_dims.dcd")).ok()?;
        // adk_dims frames: 3 x (4 + 4 * 3341 + 4) coordinate bytes + 56 box bytes.
        let frame = 3 * (8 + 4 * 3341) + 56;
        let keep = if ext == "_cut.dcd" {
            bytes.len() - frame / 2
        } else {
            bytes.len()
        };
        orbitfield::io::write_atomically(&path, &bytes[..keep]).ok()?;
        return Some(path);
    }
    let mut sys = orbitfield::io::load(&source_files(stem)).ok()?;
    let frames: Vec<usize> = (0..sys.trajectory.n_frames()).collect();
    if matches!(ext, "trr" | "nc" | "pdb") {
        let frames = if ext == "pdb" { &frames[..1] } else { &frames[..] };
        orbitfield::io::write::write_frames(&path, &sys.structure, &mut sys.trajectory, None, frames, &mut |_| {})
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

/// The AMBER NetCDF, TRR and LAMMPS dump readers on the same frames written in each format.
fn generated(c: &mut Criterion) {
    for (stem, what) in [
        ("adk_dims", "3341 atoms, 98 frames"),
        ("adk_oplsaa", "47681 atoms, 10 frames"),
    ] {
        if let Some(path) = bench_file(stem, "nc")
            && let Ok(r) = NetcdfReader::open(&path)
        {
            let name = format!("netcdf {stem} ({what})");
            bench_source(c, &name, Box::new(r));
            let mut group = c.benchmark_group(name);
            group.bench_function("open", |b| {
                b.iter(|| NetcdfReader::open(&path).map(|r| r.n_frames()).ok())
            });
            group.finish();
        }
        if let Some(r) = bench_file(stem, "trr").and_then(|p| TrrReader::open(&p).ok()) {
            bench_source(c, &format!("trr {stem} ({what})"), Box::new(r));
        }
        if let Some(r) = bench_file(stem, "lammpstrj").and_then(|p| LammpsDumpReader::open(&p).ok()) {
            bench_source(c, &format!("lammps dump {stem} ({what})"), Box::new(r));
        }
    }
}

/// What the alternate-location and partial-file handling cost on adk: the PDB of adk_dims's
/// first frame read without and with altloc indicators (every other residue), and the DCD opened
/// and read whole, complete and with its last frame cut short (97 complete frames; compare per
/// frame).
fn checks(c: &mut Criterion) {
    let mut group = c.benchmark_group("adk checks");
    for ext in ["pdb", "_altloc.pdb"] {
        let Some(path) = bench_file("adk_dims", ext) else {
            return;
        };
        let Ok(bytes) = std::fs::read(&path) else { return };
        group.throughput(Throughput::Elements(3341));
        let name = path
            .file_name()
            .map_or(String::new(), |n| n.to_string_lossy().into_owned());
        group.bench_function(format!("pdb read, {name}"), |b| {
            b.iter(|| {
                orbitfield::io::pdb::read(&path, black_box(&bytes))
                    .map(|p| p.structure.len())
                    .ok()
            })
        });
    }
    for (label, path) in [
        ("complete", Some(data("adk_dims.dcd"))),
        ("last frame cut", bench_file("adk_dims", "_cut.dcd")),
    ] {
        let Some(path) = path else { return };
        let Ok(n) = DcdReader::open(&path).map(|r| r.n_frames()) else {
            return;
        };
        group.throughput(Throughput::Elements(n as u64));
        group.bench_function(format!("dcd open + all frames, {label} ({n} frames)"), |b| {
            b.iter(|| {
                let mut frame = Frame::default();
                DcdReader::open(&path)
                    .map(|mut r| read_frames(&mut r, &(0..n).collect::<Vec<_>>(), &mut frame))
                    .ok()
            })
        });
    }
    group.finish();
}

criterion_group!(benches, dcd, xtc, netcdf, generated, checks);
criterion_main!(benches);
