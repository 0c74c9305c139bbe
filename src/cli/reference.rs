//! The command reference (`docs/cli.md`), generated from the clap definitions of this module, so the
//! documented flags are the parsed ones. A unit test keeps the committed file current:
//! `ORBITFIELD_UPDATE_DOCS=1 cargo test --bin orbitfield reference` rewrites it.

use clap::{Arg, ArgAction, Command};
use std::fmt::Write;

/// Markdown for `command` and every subcommand below it (hidden ones left out).
pub fn reference_markdown(command: &Command) -> String {
    let mut out = String::new();
    out.push_str("# Command reference\n\n");
    out.push_str(
        "<!-- generated from the command-line definitions by src/cli/reference.rs; do not edit: run \
         `ORBITFIELD_UPDATE_DOCS=1 cargo test --bin orbitfield reference` -->\n\n",
    );
    out.push_str(
        "Every command takes `--help` for this text in the terminal. Files may be compressed (gzip, bzip2); \
         formats are recognised by content and extension (see [formats](formats.md)).\n\n",
    );
    let mut command = command.clone();
    command.build();
    section(&mut out, &command, &[]);
    out
}

fn section(out: &mut String, command: &Command, parents: &[&str]) {
    let mut path: Vec<&str> = parents.to_vec();
    path.push(command.get_name());
    let depth = path.len().min(3);
    let _ = writeln!(out, "{} `{}`\n", "#".repeat(depth + 1), path.join(" "));
    if let Some(about) = command.get_long_about().or(command.get_about()) {
        let _ = writeln!(out, "{}\n", about.to_string().trim());
    }
    let usage = command.clone().render_usage().to_string();
    let usage = usage.trim_start_matches("Usage: ").trim();
    let _ = writeln!(out, "```\n{usage}\n```\n");
    let args: Vec<&Arg> = command
        .get_arguments()
        .filter(|a| !a.is_hide_set() && !matches!(a.get_action(), ArgAction::Help | ArgAction::Version))
        .collect();
    if !args.is_empty() {
        out.push_str("| argument | meaning |\n|---|---|\n");
        for arg in args {
            let _ = writeln!(out, "| {} | {} |", arg_name(arg), arg_help(arg));
        }
        out.push('\n');
    }
    for sub in command
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
    {
        section(out, sub, &path);
    }
}

fn arg_name(arg: &Arg) -> String {
    let values = arg
        .get_value_names()
        .map(|names| names.iter().map(|n| format!("<{n}>")).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|| format!("<{}>", arg.get_id().as_str().to_uppercase()));
    let takes_value = arg.get_num_args().is_none_or(|n| n.takes_values())
        && !matches!(
            arg.get_action(),
            ArgAction::SetTrue | ArgAction::SetFalse | ArgAction::Count
        );
    let mut names = Vec::new();
    if let Some(s) = arg.get_short() {
        names.push(format!("-{s}"));
    }
    if let Some(l) = arg.get_long() {
        names.push(format!("--{l}"));
    }
    let text = if names.is_empty() {
        let dots = if matches!(arg.get_action(), ArgAction::Append) {
            "..."
        } else {
            ""
        };
        format!("{values}{dots}")
    } else if takes_value {
        format!("{} {values}", names.join(", "))
    } else {
        names.join(", ")
    };
    format!("`{}`", text.replace('|', "\\|"))
}

fn arg_help(arg: &Arg) -> String {
    let mut help = arg
        .get_long_help()
        .or(arg.get_help())
        .map(|h| h.to_string())
        .unwrap_or_default()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let flag = matches!(
        arg.get_action(),
        ArgAction::SetTrue | ArgAction::SetFalse | ArgAction::Count
    );
    if !help.is_empty() && !help.ends_with('.') {
        help.push('.');
    }
    let possible: Vec<String> = arg
        .get_possible_values()
        .iter()
        .filter(|v| !v.is_hide_set())
        .map(|v| format!("`{}`", v.get_name()))
        .collect();
    if !possible.is_empty() && !flag {
        let _ = write!(help, " One of {}.", possible.join(", "));
    }
    let defaults: Vec<String> = arg
        .get_default_values()
        .iter()
        .map(|v| v.to_string_lossy().into_owned())
        .collect();
    if !defaults.is_empty() && !flag {
        let _ = write!(help, " Default: `{}`.", defaults.join(","));
    }
    help.replace('|', "\\|")
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// The committed `docs/cli.md` is what the definitions generate.
    #[test]
    fn reference_is_current() {
        let text = reference_markdown(&super::super::Cli::command());
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/cli.md");
        if std::env::var_os("ORBITFIELD_UPDATE_DOCS").is_some() {
            std::fs::write(&path, &text).expect("write docs/cli.md");
            return;
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == text,
            "docs/cli.md is out of date with the command-line definitions: run \
             `ORBITFIELD_UPDATE_DOCS=1 cargo test --bin orbitfield reference` and commit the result"
        );
    }

    #[test]
    fn reference_names_every_subcommand() {
        let cli = super::super::Cli::command();
        let text = reference_markdown(&cli);
        for sub in cli
            .get_subcommands()
            .filter(|s| !s.is_hide_set() && s.get_name() != "help")
        {
            assert!(
                text.contains(&format!("`orbitfield {}`", sub.get_name())),
                "{} missing",
                sub.get_name()
            );
        }
    }
}
