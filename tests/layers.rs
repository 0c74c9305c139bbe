//! The layer rules of `docs/architecture.md` as a check on the sources, with no exemptions: every
//! `crate::...` and `super::...` path in `src/` (code and intra-doc links, comments aside) is resolved
//! to the module it names and checked against the table of allowed edges below (the same table as
//! the document's "Rules that tests/layers.rs enforces"); the GUI crates (egui, winit, wgpu) are
//! checked per layer too. Also: no file in `src/` over 900 lines. Scans the sources, so it needs no
//! build of anything but this file.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

/// A layer and what it may name: module path prefixes (`model`, `model::units`), or with `=` a
/// layer exactly (`=compute`: the front of `compute`, not its engines). Its own layer is always
/// allowed. Layers are matched longest first: `compute::wgpu` before `compute`.
const LAYERS: &[(&str, &[&str])] = &[
    // The ground floor: nothing of the project.
    ("model", &[]),
    ("assets", &[]),
    // Readers return data; matching a QM region or any other analysis is not theirs.
    ("io", &["model", "assets"]),
    // Layouts and packing the GPU engines share: neutral ground, no engine.
    ("compute::layout", &["model", "=compute"]),
    // The engines are peers: none names another, and none names analysis.
    ("compute::cpu", &["model", "compute::layout", "=compute"]),
    ("compute::cuda", &["model", "compute::layout", "=compute"]),
    // The wgpu engine writes meshes (marching cubes, cartoon geometry), so it stands on `surface`.
    ("compute::wgpu", &["model", "compute::layout", "=compute", "surface"]),
    // The front of `compute` (requests, inputs, host-side plans) dispatches to the engines.
    ("compute", &["model", "compute"]),
    // Marching cubes, cartoon geometry, mesh export: writing a file is the caller's.
    ("surface", &["model"]),
    ("analysis", &["model", "compute", "surface", "io"]),
    ("jobs", &["model", "io", "compute", "surface", "analysis"]),
    ("batch", &["model", "io", "compute", "surface", "analysis", "jobs"]),
    // Draws: knows lattices (volumes) and meshes, no molecule; the buffers of the wgpu engine it draws.
    (
        "render",
        &[
            "model::grid",
            "model::Grid3",
            "model::Lattice",
            "model::units",
            "surface",
            "compute::wgpu",
        ],
    ),
    // The command language stands on the application: it turns text into the app's commands.
    (
        "script",
        &[
            "model", "io", "compute", "surface", "analysis", "jobs", "batch", "render", "app", "assets",
        ],
    ),
    (
        "ui",
        &[
            "model", "io", "compute", "surface", "analysis", "jobs", "batch", "render", "app", "assets", "script",
        ],
    ),
    (
        "app",
        &[
            "model", "io", "compute", "surface", "analysis", "jobs", "batch", "render", "ui", "assets",
        ],
    ),
    // The Python extension (feature `python`), a front end like the command line; `orbitfield.run`
    // carries out commands through the command language.
    (
        "python",
        &[
            "model", "io", "compute", "surface", "analysis", "jobs", "batch", "assets", "script",
        ],
    ),
    // The command line (the binary) uses every layer.
    (
        "cli",
        &[
            "model", "io", "compute", "surface", "analysis", "jobs", "batch", "render", "ui", "app", "assets", "script",
        ],
    ),
];

/// Edges the table does not allow yet, each written in `docs/architecture.md` with its reason:
/// (module of the file, path it names, why). None remain; an entry here needs its sentence
/// "`from` may name `to`" in the document, and the document names no edge that is not here.
const EXCEPTIONS: &[(&str, &str, &str)] = &[];

/// Which layers may name each GUI crate.
const GUI_CRATES: &[(&str, &[&str])] = &[
    ("egui", &["ui", "app", "render", "cli"]),
    ("winit", &["app", "render", "cli"]),
    ("wgpu", &["compute::wgpu", "render", "ui", "app", "cli"]),
];

/// The module path of a source file: `src/compute/wgpu/orbital.rs` -> `compute::wgpu::orbital`,
/// `src/compute/mod.rs` -> `compute`; files of the binary (`src/main.rs`, `src/cli/`) under `cli`.
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap();
    let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    let last = parts.pop().unwrap();
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" {
        parts.push(if stem == "main" {
            "cli".to_string()
        } else {
            stem.to_string()
        });
    }
    parts
}

/// The paths of a `use` tree after a prefix, each cut at its last segment that starts lower-case
/// or at its first type-like one: `io::load::x` gives `[io::load::x]`, `{io, model::{Grid3, units}}`
/// gives `[io, model::Grid3, model::units]`.
fn tree_heads(tail: &str) -> Vec<String> {
    let chars: Vec<char> = tail.chars().collect();
    let mut path = String::new();
    let mut i = 0;
    while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_' || chars[i] == ':') {
        path.push(chars[i]);
        i += 1;
    }
    if (path.is_empty() || path.ends_with("::")) && chars.get(i) == Some(&'{') {
        let prefix = path.trim_end_matches("::").to_string();
        let mut heads = Vec::new();
        let mut depth = 0;
        let mut start = i + 1;
        for (j, &c) in chars.iter().enumerate().skip(i + 1) {
            let part = || chars[start..j].iter().collect::<String>();
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => {
                    heads.extend(tree_heads(part().trim()).into_iter().map(|h| join(&prefix, &h)));
                    break;
                }
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    heads.extend(tree_heads(part().trim()).into_iter().map(|h| join(&prefix, &h)));
                    start = j + 1;
                }
                _ => {}
            }
        }
        return heads;
    }
    let path = path.trim_end_matches(':');
    if path.is_empty() || path == "self" || path == "*" {
        Vec::new()
    } else {
        vec![path.to_string()]
    }
}

fn join(prefix: &str, head: &str) -> String {
    if head == "self" || head.is_empty() {
        prefix.to_string()
    } else if prefix.is_empty() {
        head.to_string()
    } else {
        format!("{prefix}::{head}")
    }
}

/// The text a file's checks read: code with comments removed, plus the intra-doc links
/// (`` [`crate::io::System`] ``) of its doc comments. Multi-line `use` trees are joined.
fn checked_text(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("//") {
            let mut rest = trimmed;
            while let Some(at) = rest.find("[`") {
                let tail = &rest[at + 2..];
                let end = tail.find('`').unwrap_or(tail.len());
                out.push((n + 1, tail[..end].to_string()));
                rest = &tail[end..];
            }
            continue;
        }
        let code = match line.find("//") {
            Some(at) if !line[..at].contains('"') => &line[..at],
            _ => line,
        };
        out.push((n + 1, code.to_string()));
    }
    // Join `use` trees over several lines into their first line.
    let mut joined: Vec<(usize, String)> = Vec::new();
    let mut open = 0i32;
    for (n, l) in out {
        if open > 0
            && let Some(last) = joined.last_mut()
        {
            last.1.push(' ');
            last.1.push_str(l.trim());
            open += l.matches('{').count() as i32 - l.matches('}').count() as i32;
            continue;
        }
        let t = l.trim_start();
        if (t.starts_with("use ") || t.starts_with("pub use ") || t.starts_with("pub(crate) use "))
            && l.matches('{').count() > l.matches('}').count()
        {
            open = l.matches('{').count() as i32 - l.matches('}').count() as i32;
        }
        joined.push((n, l));
    }
    joined
}

/// Every project module path a file names, with its line: `crate::...` as written, `super::...`
/// resolved from the file's own module path.
fn named_paths(module: &[String], text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (n, line) in checked_text(text) {
        let mut i = 0;
        while i < line.len() {
            let rest = &line[i..];
            let prev = line[..i].chars().last();
            let at_word = !prev.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':');
            if at_word && rest.starts_with("crate::") {
                for h in tree_heads(&rest["crate::".len()..]) {
                    found.push((n, h));
                }
                i += "crate::".len();
                continue;
            }
            if at_word && rest.starts_with("super::") {
                let mut ups = 0;
                let mut tail = rest;
                while let Some(t) = tail.strip_prefix("super::") {
                    ups += 1;
                    tail = t;
                }
                // `super` of `a/b.rs` (module `a::b`) is `a`; of `a/mod.rs` (module `a`) the root.
                if let Some(base_len) = module.len().checked_sub(ups) {
                    let base = module[..base_len].join("::");
                    for h in tree_heads(tail) {
                        found.push((n, if base.is_empty() { h } else { format!("{base}::{h}") }));
                    }
                }
                i += rest.len() - tail.len();
                continue;
            }
            i += rest.chars().next().map_or(1, |c| c.len_utf8());
        }
    }
    found
}

/// The layer of a module path (the longest entry of [`LAYERS`] it starts with).
fn layer_of(path: &str) -> Option<&'static str> {
    let mut best: Option<&'static str> = None;
    for (name, _) in LAYERS {
        if starts_with_path(path, name) && best.is_none_or(|b| name.len() > b.len()) {
            best = Some(name);
        }
    }
    best
}

fn starts_with_path(path: &str, prefix: &str) -> bool {
    path == prefix || path.starts_with(&format!("{prefix}::"))
}

/// Whether a layer whose table entry is `allowed` may name `target` (whose layer is `target_layer`).
fn allows(allowed: &[&str], target: &str, target_layer: &str) -> bool {
    allowed.iter().any(|a| match a.strip_prefix('=') {
        Some(layer) => target_layer == layer,
        None => starts_with_path(target, a),
    })
}

/// The violations of the layer table by one file whose module path is `module`.
fn violations(module: &[String], text: &str) -> Vec<String> {
    let own = module.join("::");
    let Some(layer) = layer_of(&own) else {
        return if own.is_empty() {
            Vec::new()
        } else {
            vec![format!("module {own} is in no layer of the table")]
        };
    };
    let allowed = LAYERS.iter().find(|(n, _)| *n == layer).map(|(_, a)| *a).unwrap_or(&[]);
    let mut bad = Vec::new();
    for (line, target) in named_paths(module, text) {
        let Some(target_layer) = layer_of(&target) else {
            // Names the crate root's own items (none in the library) or a macro: not a layer.
            continue;
        };
        if target_layer == layer || allows(allowed, &target, target_layer) {
            continue;
        }
        if EXCEPTIONS
            .iter()
            .any(|(from, to, _)| starts_with_path(&own, from) && starts_with_path(&target, to))
        {
            continue;
        }
        bad.push(format!("line {line}: {layer} names {target}"));
    }
    for (krate, layers) in GUI_CRATES {
        if layers.contains(&layer) {
            continue;
        }
        for (line, code) in checked_text(text) {
            if names_crate(&code, krate) {
                bad.push(format!("line {line}: {layer} names the {krate} crate"));
            }
        }
    }
    bad
}

/// Whether code names the external crate `krate` (`wgpu::Device`, `use egui_plot::Plot`), not a
/// module of ours that has its name (`compute::wgpu::orbital`).
fn names_crate(code: &str, krate: &str) -> bool {
    let mut from = 0;
    while let Some(at) = code[from..].find(krate) {
        let i = from + at;
        let prev = code[..i].chars().last();
        let after = &code[i + krate.len()..];
        let word_start = !prev.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':');
        if word_start && (after.starts_with("::") || after.starts_with('_')) {
            return true;
        }
        from = i + krate.len();
    }
    false
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

fn src_files() -> (PathBuf, Vec<PathBuf>) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    assert!(files.len() > 50, "{}: source files not found", src.display());
    (src, files)
}

fn m(path: &str) -> Vec<String> {
    path.split("::").map(str::to_string).collect()
}

#[test]
fn the_scan_resolves_crate_and_super_paths() {
    let text = "use crate::model::Grid3;\nuse crate::{io, model::Lattice};\nuse super::super::jobs::Pool;\n\
                /// See [`crate::analysis::rdf`] and crate::surface in prose.\n// crate::app in a comment\n";
    let found: Vec<String> = named_paths(&m("compute::cpu::orbital"), text)
        .into_iter()
        .map(|(n, p)| format!("{n}:{p}"))
        .collect();
    assert_eq!(
        found,
        [
            "1:model::Grid3",
            "2:io",
            "2:model::Lattice",
            "3:compute::jobs::Pool",
            "4:analysis::rdf"
        ]
    );
    // From a module file `compute/mod.rs`, `super::` is the crate root.
    let found = named_paths(
        &m("compute"),
        "use super::jobs;\nuse super::{\n    io,\n    model,\n};\n",
    );
    assert_eq!(
        found.into_iter().map(|(_, p)| p).collect::<Vec<_>>(),
        ["jobs", "io", "model"]
    );
}

#[test]
fn a_deliberate_violation_of_each_kind_is_caught() {
    // The wgpu engine naming the CUDA engine and the renderer.
    let bad = violations(
        &m("compute::wgpu::orbital"),
        "use crate::compute::cuda::mo::GpuShell;\nuse crate::render::gpu::MeshVertexColor;\n",
    );
    assert_eq!(
        bad,
        [
            "line 1: compute::wgpu names compute::cuda::mo::GpuShell",
            "line 2: compute::wgpu names render::gpu::MeshVertexColor"
        ]
    );
    // A reader reaching into analysis; a mesh exporter into io; the model into anything.
    assert_eq!(
        violations(&m("io::load"), "use crate::analysis::qm_region::match_region;"),
        ["line 1: io names analysis::qm_region::match_region"]
    );
    assert_eq!(
        violations(&m("surface::export"), "    use crate::io::write_atomically;"),
        ["line 1: surface names io::write_atomically"]
    );
    assert_eq!(
        violations(&m("model::grid"), "use super::super::jobs;"),
        ["line 1: model names jobs"]
    );
    // A CUDA kernel module importing analysis; the renderer knowing a molecule.
    assert_eq!(
        violations(&m("compute::cuda::rdf"), "use crate::analysis::rdf::RdfSpec;"),
        ["line 1: compute::cuda names analysis::rdf::RdfSpec"]
    );
    assert_eq!(
        violations(&m("render::scene"), "use crate::model::Structure;"),
        ["line 1: render names model::Structure"]
    );
    // GUI crates below the GUI.
    assert_eq!(
        violations(
            &m("compute::cuda::engine"),
            "let d: wgpu::Device;\nuse crate::compute::wgpu::orbital;"
        ),
        [
            "line 2: compute::cuda names compute::wgpu::orbital",
            "line 1: compute::cuda names the wgpu crate"
        ]
    );
    assert_eq!(
        violations(&m("surface::marching"), "fn f(ui: &mut egui::Ui) {}"),
        ["line 1: surface names the egui crate"]
    );
    // The edges that were exceptions once: a CUDA kernel module naming the CPU engine's host code
    // or analysis, and its tests naming the CPU engine.
    assert_eq!(
        violations(&m("compute::cuda::qm_esp"), "use crate::compute::cpu::boys::table;"),
        ["line 1: compute::cuda names compute::cpu::boys::table"]
    );
    assert_eq!(
        violations(&m("compute::cuda::dssp"), "use crate::analysis::dssp::ProteinBackbone;"),
        ["line 1: compute::cuda names analysis::dssp::ProteinBackbone"]
    );
    assert_eq!(
        violations(
            &m("compute::cuda::molsurf"),
            "mod tests {\n    use crate::compute::cpu::molsurf::PreparedMolSurf;\n}"
        ),
        ["line 2: compute::cuda names compute::cpu::molsurf::PreparedMolSurf"]
    );
    // What is allowed passes: the engines on neutral ground, analysis driving a CUDA engine.
    assert!(
        violations(
            &m("compute::cuda::qm_esp"),
            "use crate::compute::qm_esp::PreparedQmEsp;"
        )
        .is_empty()
    );
    assert!(violations(&m("analysis::dssp::cuda"), "use crate::compute::cuda::CudaEngine;").is_empty());
    assert!(violations(&m("compute::wgpu::orbital"), "use crate::compute::layout::GpuShell;").is_empty());
    assert!(violations(&m("render::scene"), "use crate::model::Grid3;\nuse wgpu::Device;").is_empty());
}

#[test]
fn every_module_keeps_to_its_layer() {
    let (src, files) = src_files();
    let mut bad = Vec::new();
    for f in &files {
        let module = module_path(&src, f);
        let text = std::fs::read_to_string(f).unwrap();
        for v in violations(&module, &text) {
            bad.push(format!("{}: {v}", f.strip_prefix(&src).unwrap().display()));
        }
    }
    assert!(
        bad.is_empty(),
        "layer rules broken ({}):\n{}",
        bad.len(),
        bad.join("\n")
    );
}

#[test]
fn no_source_file_is_over_900_lines() {
    let (src, files) = src_files();
    let root = src.parent().unwrap();
    let mut long = Vec::new();
    for f in &files {
        let lines = std::fs::read_to_string(f).unwrap().lines().count();
        let rel = f.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
        if lines > 900 {
            long.push(format!("{rel}: {lines} lines"));
        }
    }
    assert!(
        long.is_empty(),
        "files over 900 lines (split them by job):\n{}",
        long.join("\n")
    );
}

#[test]
fn the_document_mirrors_the_table_and_its_exceptions() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/architecture.md");
    let doc = std::fs::read_to_string(&path).unwrap();
    let doc = doc.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut missing = Vec::new();
    for (layer, _) in LAYERS {
        if !doc.contains(&format!("| `{layer}` |")) {
            missing.push(format!("the table row of `{layer}`"));
        }
    }
    for (from, to, _) in EXCEPTIONS {
        if !doc.contains(&format!("`{from}` may name `{to}`")) {
            missing.push(format!("the exception `{from}` may name `{to}`"));
        }
    }
    assert!(missing.is_empty(), "{} lacks:\n{}", path.display(), missing.join("\n"));
    let stale: Vec<String> = documented_exceptions(&doc)
        .into_iter()
        .filter(|(from, to)| !EXCEPTIONS.iter().any(|(f, t, _)| f == from && t == to))
        .map(|(from, to)| format!("`{from}` may name `{to}`"))
        .collect();
    assert!(
        stale.is_empty(),
        "{} names exceptions that tests/layers.rs does not hold:\n{}",
        path.display(),
        stale.join("\n")
    );
}

/// The exceptions a document states, each written "`from` may name `to`".
fn documented_exceptions(doc: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let mut rest = doc;
    while let Some(at) = rest.find("` may name `") {
        let before = &rest[..at];
        let after = &rest[at + "` may name `".len()..];
        if let (Some(open), Some(close)) = (before.rfind('`'), after.find('`')) {
            found.push((before[open + 1..].to_string(), after[..close].to_string()));
        }
        rest = after;
    }
    found
}

#[test]
fn documented_exceptions_are_read() {
    let doc = "Exceptions: `compute::cuda::dssp` may name `analysis::dssp`: why. | `io` | `model` |";
    assert_eq!(
        documented_exceptions(doc),
        [("compute::cuda::dssp".to_string(), "analysis::dssp".to_string())]
    );
}
