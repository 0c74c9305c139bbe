//! QM log parsing throughput: ~100 MB logs built in memory by repeating the step blocks of the
//! real logs in `tests/data/qm-logs` (each repetition's first coordinate nudged so that every copy
//! is a new step with its own wavefunction), read with `io::qmlog::read`.
#![allow(clippy::expect_used)] // a benchmark: missing test data should stop it loudly

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use std::path::Path;

const TARGET_BYTES: usize = 100 << 20;

/// Head + repeated middle + tail of a real log, ~100 MB. `step_start`/`step_end` delimit the block
/// that is repeated; `coordinate` is a number printed in the block's geometry, replaced (every
/// occurrence, so repeated prints of one geometry stay equal) per copy
/// by a number of the same width.
fn build(name: &str, step_start: &str, step_end: &str, coordinate: &str) -> Vec<u8> {
    // ORBITFIELD_QM_LOGS_DATA points a copied benchmark binary at the logs on another machine.
    let dir = std::env::var_os("ORBITFIELD_QM_LOGS_DATA").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/qm-logs"),
        Into::into,
    );
    let path = dir.join(name);
    let text = String::from_utf8(std::fs::read(path).expect("test data present")).expect("text log");
    let a = text.find(step_start).expect("step start");
    let a = text[..a].rfind('\n').map_or(0, |i| i + 1);
    let b = text.rfind(step_end).expect("step end");
    let b = text[..b].rfind('\n').map_or(0, |i| i + 1);
    let (head, block, tail) = (&text[..a], &text[a..b], &text[b..]);
    let value: f64 = coordinate.parse().expect("coordinate");
    let mut out = String::with_capacity(TARGET_BYTES + block.len() + head.len() + tail.len());
    out.push_str(head);
    let mut i = 0u32;
    while out.len() + tail.len() < TARGET_BYTES {
        let nudged = format!(
            "{:.*}",
            coordinate.split('.').nth(1).map_or(0, str::len),
            value + f64::from(i % 997) * 1e-5
        );
        out.push_str(&block.replace(coordinate, &format!("{nudged:>w$}", w = coordinate.len())));
        i += 1;
    }
    out.push_str(tail);
    out.into_bytes()
}

fn bench(c: &mut Criterion) {
    let cases = [
        (
            "gaussian",
            build(
                "Gaussian16_dvb_sp.out",
                "Input orientation:",
                "Normal termination",
                "0.269445",
            ),
        ),
        (
            "orca",
            build(
                "ORCA6.0_dvb_sp_hf.out",
                "CARTESIAN COORDINATES (ANGSTROEM)",
                "ORCA TERMINATED NORMALLY",
                "-1.415253",
            ),
        ),
        (
            "gamess",
            build(
                "GAMESS-US2018_dvb_gopt_a.out",
                "BEGINNING GEOMETRY SEARCH POINT NSERCH=   1",
                "EQUILIBRIUM GEOMETRY LOCATED",
                "1.4162481087",
            ),
        ),
    ];
    let mut g = c.benchmark_group("qm_logs_100MB");
    g.sample_size(10);
    for (name, bytes) in &cases {
        let log = orbitfield::io::qmlog::read(Path::new(name), bytes).expect("synthetic log parses");
        eprintln!(
            "{name}: {} MB, {} frames, {} wavefunctions",
            bytes.len() >> 20,
            log.frames.len(),
            log.wavefunctions.len()
        );
        // On a shared machine wall-clock time includes waiting for a core; on-CPU time of this
        // thread (Linux schedstat) gives the parser's own rate alongside criterion's numbers.
        if let Some(t0) = on_cpu_ns() {
            let n = 5;
            for _ in 0..n {
                black_box(
                    orbitfield::io::qmlog::read(Path::new(name), black_box(bytes))
                        .map(|l| l.frames.len())
                        .ok(),
                );
            }
            if let Some(t1) = on_cpu_ns() {
                let mb_per_s = (n * bytes.len()) as f64 / 1e6 / ((t1 - t0) as f64 * 1e-9);
                eprintln!("{name}: {mb_per_s:.0} MB/s of on-CPU time over {n} parses");
            }
        }
        g.throughput(Throughput::Bytes(bytes.len() as u64));
        g.bench_function(*name, |b| {
            b.iter(|| orbitfield::io::qmlog::read(Path::new(name), black_box(bytes)).map(|l| l.frames.len()))
        });
    }
    g.finish();
}

/// Nanoseconds this thread has spent on a CPU (Linux `/proc/thread-self/schedstat`).
fn on_cpu_ns() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok()
}

criterion_group!(benches, bench);
criterion_main!(benches);
