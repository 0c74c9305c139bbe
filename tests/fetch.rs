//! PDB entries fetched by ID (`io::fetch`, `orbitfield pdb:ID`, the viewer's *File > Fetch from
//! PDB…*), served by a small HTTP server in this test that stands for RCSB: it serves 4E43's mmCIF
//! file (tests/data/md/4E43.cif.gz) and answers 404 for anything else. The entry reads as the file
//! itself does, is kept in the cache and opened from there the second time without a request; an
//! unknown entry, a bad ID and a cancelled download are refused in words and leave nothing behind.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use egui_kittest::kittest::Queryable;
use orbitfield::io::fetch::{FetchError, Source, fetch_entry};
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

fn data(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(rel)
}

/// A server on a free local port: `/download/4E43.cif.gz` is the entry, anything else 404. Returns
/// the URL template and the number of requests served.
fn server() -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let count = Arc::new(AtomicUsize::new(0));
    let served = count.clone();
    let body = std::fs::read(data("md/4E43.cif.gz")).unwrap();
    // The stand-in for RCSB's server is no part of the product: it may run on a thread of its own.
    #[allow(clippy::disallowed_methods)]
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            // The rest of the request's head.
            loop {
                let mut h = String::new();
                if reader.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
                    break;
                }
            }
            served.fetch_add(1, Ordering::SeqCst);
            let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
            if path == "/download/4E43.cif.gz" {
                let head = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/gzip\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = stream.write_all(head.as_bytes());
                let _ = stream.write_all(&body);
            } else {
                let _ = stream.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
            }
        }
    });
    (format!("http://127.0.0.1:{port}/download/{{ID}}.cif.gz"), count)
}

fn orbitfield(args: &[&str], url: &str, cache: &std::path::Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_orbitfield"))
        .args(args)
        .env("ORBITFIELD_PDB_URL", url)
        .env("ORBITFIELD_CACHE_DIR", cache)
        .output()
        .unwrap()
}

#[test]
fn an_entry_is_downloaded_once_and_reads_as_its_file() {
    let (url, count) = server();
    let cache = tempfile::tempdir().unwrap();
    let local = Command::new(env!("CARGO_BIN_EXE_orbitfield"))
        .args(["info", data("md/4E43.cif.gz").to_str().unwrap()])
        .output()
        .unwrap();
    assert!(local.status.success());
    let out = orbitfield(&["info", "pdb:4e43"], &url, cache.path());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("PDB entry 4E43 downloaded to"), "{err}");
    // The same summary as the file's, but for the file's name.
    let strip = |o: &[u8]| -> Vec<String> {
        String::from_utf8_lossy(o)
            .lines()
            .filter(|l| !l.contains("4E43") && !l.contains("4e43") && !l.starts_with("loaded in"))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(strip(&out.stdout), strip(&local.stdout));
    let kept = cache.path().join("4e43.cif.gz");
    assert_eq!(
        std::fs::read(&kept).unwrap(),
        std::fs::read(data("md/4E43.cif.gz")).unwrap()
    );
    assert_eq!(count.load(Ordering::SeqCst), 1);
    // The second time from the cache, without a request.
    let out = orbitfield(&["info", "PDB:4E43"], &url, cache.path());
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("from the cache"));
    assert_eq!(count.load(Ordering::SeqCst), 1);
}

#[test]
fn unknown_entries_bad_ids_and_cancelled_downloads_leave_nothing() {
    let (url, _) = server();
    let cache = tempfile::tempdir().unwrap();
    let out = orbitfield(&["info", "pdb:9zzz"], &url, cache.path());
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("the PDB has no entry 9ZZZ") && err.contains("404"),
        "{err}"
    );
    let out = orbitfield(&["info", "pdb:ubq1"], &url, cache.path());
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("'pdb:ubq1' is no PDB ID"));
    let source = Source {
        url_template: url.clone(),
        cache_dir: Some(cache.path().to_path_buf()),
    };
    let cancelled = fetch_entry(
        &source,
        "4e43",
        &AtomicBool::new(true),
        &AtomicU64::new(0),
        &AtomicU64::new(0),
    );
    assert!(matches!(cancelled, Err(FetchError::Cancelled(_))), "{cancelled:?}");
    let left: Vec<_> = std::fs::read_dir(cache.path()).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn the_viewer_fetches_an_entry_from_the_file_menu_and_opens_it() {
    let (url, _) = server();
    let cache = tempfile::tempdir().unwrap();
    let mut state = orbitfield::app::state::AppState::new(
        orbitfield::app::settings::Settings::default(),
        orbitfield::app::fields::FieldService::default(),
    );
    state.panels.fetch.source = Source {
        url_template: url,
        cache_dir: Some(cache.path().to_path_buf()),
    };
    let mut harness = egui_kittest::Harness::builder()
        .with_size(egui::vec2(1280.0, 800.0))
        .build_ui_state(
            |ui, state: &mut orbitfield::app::state::AppState| {
                orbitfield::ui::main_ui(ui, state);
                state.apply_pending();
            },
            state,
        );
    harness.run();
    harness.get_by_label("File").click();
    harness.run();
    harness.get_by_label(orbitfield::ui::fetch::FETCH_MENU).click();
    harness.run();
    harness
        .get_by_label(orbitfield::ui::fetch::ID_LABEL)
        .set_text_value_accesskit("4e43");
    harness.run();
    harness.get_by_label(orbitfield::ui::fetch::FETCH_BUTTON).click();
    harness.run();
    let t0 = std::time::Instant::now();
    while harness.state().document().is_none() {
        assert!(t0.elapsed().as_secs() < 60, "{}", harness.state().panels.status);
        harness.step();
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let st = harness.state();
    let local = orbitfield::io::load(&[data("md/4E43.cif.gz")]).unwrap();
    assert_eq!(st.document().unwrap().structure.len(), local.structure.len());
    assert!(
        st.panels
            .status
            .starts_with("PDB entry 4E43 (downloaded from 127.0.0.1:"),
        "{}",
        st.panels.status
    );
    assert!(st.panels.fetch.job.is_none());
}
