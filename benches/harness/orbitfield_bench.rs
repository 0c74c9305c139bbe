//! `orbitfield-bench`: the developer benchmark harness (kernel-variant sweeps, viewer scenes, peers,
//! multi-GPU scaling). Not part of the shipped `orbitfield` binary: build it with
//! `cargo run --release --features bench-harness --bin orbitfield-bench -- ...`. Scenes read
//! `tests/data` of this repository (found from the build's manifest directory, so it runs from any
//! directory). Figures and the commands that produced them: `benches/RESULTS.md`. The product's own
//! `orbitfield bench` is a quick suite on embedded inputs.

mod bench;
mod bench_inputs;
mod cartoon_bench;
#[path = "../../tests/kit/mod.rs"]
mod kit;
mod molsurf_bench;
mod molsurf_colored;
mod molsurf_render_bench;
mod playback;
mod pool_bench;
mod potential_bench;
mod qm_esp_bench;
mod render_orbital_bench;

use clap::Parser;
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "orbitfield-bench",
    about = "Developer benchmarks of the field engines, the viewer's scenes and their peers"
)]
struct Cli {
    #[command(flatten)]
    args: bench::BenchArgs,
}

/// The repository's test data, wherever the harness is started from.
pub fn test_data(relative: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(relative)
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    // Diagnostics on request: `ORBITFIELD_LOG=debug`, or `orbitfield::timing=debug` for the per-slab
    // timings of the GPU engine.
    if let Ok(filter) = std::env::var("ORBITFIELD_LOG") {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
            .with_writer(std::io::stderr)
            .try_init();
    }
    match bench::run(&cli.args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
    }
}
