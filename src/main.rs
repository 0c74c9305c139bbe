//! The `orbitfield` command: the viewer when run without a subcommand, and the headless commands.

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
