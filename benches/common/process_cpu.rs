//! A criterion measurement of the whole process's CPU time (all threads, from
//! `/proc/self/task/*/schedstat`), in ns, shared by the CPU benches: on a shared 2-core machine
//! whose load is far above 2, wall time measures the neighbours; CPU time measures the work.
//! (Linux only; elsewhere it reads 0.) Included by `benches/mo_cpu.rs` and `benches/esp.rs`.

use criterion::Throughput;
use criterion::measurement::{Measurement, ValueFormatter};

pub struct ProcessCpu;

/// CPU time of every thread of this process so far (ns).
pub fn process_cpu_ns() -> u64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0;
    };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next().and_then(|x| x.parse::<u64>().ok()))
        .sum()
}

struct CpuMs;

impl ValueFormatter for CpuMs {
    fn scale_values(&self, _typical: f64, values: &mut [f64]) -> &'static str {
        values.iter_mut().for_each(|v| *v /= 1e6);
        "ms CPU"
    }
    fn scale_throughputs(&self, _typical: f64, _t: &Throughput, values: &mut [f64]) -> &'static str {
        values.iter_mut().for_each(|v| *v /= 1e6);
        "ms CPU"
    }
    fn scale_for_machines(&self, _values: &mut [f64]) -> &'static str {
        "ns"
    }
}

impl Measurement for ProcessCpu {
    type Intermediate = u64;
    type Value = u64;
    fn start(&self) -> u64 {
        process_cpu_ns()
    }
    fn end(&self, i: u64) -> u64 {
        process_cpu_ns().saturating_sub(i)
    }
    fn add(&self, a: &u64, b: &u64) -> u64 {
        a + b
    }
    fn zero(&self) -> u64 {
        0
    }
    fn to_f64(&self, v: &u64) -> f64 {
        *v as f64
    }
    fn formatter(&self) -> &dyn ValueFormatter {
        &CpuMs
    }
}
