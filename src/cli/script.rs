//! `orbitfield run SCRIPT.ofc [--headless]`: runs a command script (`script` module) in the
//! window, or without one (fields computed on this thread, images and movies drawn offscreen).
//! `orbitfield SCRIPT.ofc` is the window's form.

use anyhow::{Result, anyhow};
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// The command script (.ofc): one command per line, `help` lists them (docs/scripting.md).
    pub script: PathBuf,
    /// Run without a window: images and movies through the offscreen renderer.
    #[arg(long)]
    pub headless: bool,
    /// Window size WxH in logical pixels (with the window).
    #[arg(long)]
    pub window_size: Option<String>,
}

/// Whether the viewer's files are one command script (`orbitfield SCRIPT.ofc`).
pub fn is_script(files: &[PathBuf]) -> bool {
    matches!(files, [f] if f.extension().is_some_and(|e| e.eq_ignore_ascii_case("ofc")))
}

pub fn run(args: &RunArgs) -> Result<()> {
    if !args.script.is_file() {
        return Err(anyhow!("{}: no such script", args.script.display()));
    }
    if !args.headless {
        let size = args.window_size.as_deref().map(super::render::parse_size).transpose()?;
        return in_window(&args.script, size, false);
    }
    let report = orbitfield::script::run_file(&args.script).map_err(|e| anyhow!("{e}"))?;
    for line in &report.output {
        println!("{line}");
    }
    eprintln!("{}: {} commands", args.script.display(), report.statements);
    Ok(())
}

/// The viewer, running `script` once it is up.
pub fn in_window(script: &Path, size: Option<[u32; 2]>, no_settings: bool) -> Result<()> {
    orbitfield::app::window::run(orbitfield::app::window::ViewerOptions {
        files: Vec::new(),
        screenshot: None,
        exit_after_frames: None,
        size,
        no_settings,
        qm_region: None,
        session: None,
        backends: None,
        verbose: false,
        script: Some(script.to_path_buf()),
    })
}
