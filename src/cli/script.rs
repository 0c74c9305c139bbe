//! `orbitfield run SCRIPT.ofc [--headless]`: runs a command script (`script` module) in the
//! window, or without one (fields computed on this thread, images and movies drawn offscreen).
//! `orbitfield [FILE...] SCRIPT.ofc` is the window's form.

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

/// The viewer's files apart from its command script (`orbitfield [FILE...] SCRIPT.ofc`: the files
/// open first, then the script runs, as PyMOL runs a .pml given with its files); more than one
/// script is refused.
pub fn split_script(files: &[PathBuf]) -> Result<(Vec<PathBuf>, Option<PathBuf>)> {
    let (scripts, data): (Vec<PathBuf>, Vec<PathBuf>) = files
        .iter()
        .cloned()
        .partition(|f| f.extension().is_some_and(|e| e.eq_ignore_ascii_case("ofc")));
    match scripts.as_slice() {
        [] => Ok((data, None)),
        [one] => Ok((data, Some(one.clone()))),
        [first, second, ..] => Err(anyhow!(
            "{} and {}: one command script at a time (a script may run another with `run FILE`)",
            first.display(),
            second.display()
        )),
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_script_is_told_from_the_files_it_shows() {
        let p = |s: &str| PathBuf::from(s);
        let (files, script) = split_script(&[p("adk.psf"), p("show.OFC"), p("adk.dcd")]).unwrap();
        assert_eq!(files, vec![p("adk.psf"), p("adk.dcd")]);
        assert_eq!(script, Some(p("show.OFC")));
        assert_eq!(split_script(&[p("a.pdb")]).unwrap(), (vec![p("a.pdb")], None));
        assert_eq!(split_script(&[p("s.ofc")]).unwrap(), (vec![], Some(p("s.ofc"))));
        let e = split_script(&[p("a.ofc"), p("b.ofc")]).unwrap_err().to_string();
        assert!(e.contains("a.ofc and b.ofc: one command script at a time"), "{e}");
    }
}
