//! Fuzz target: the orca log reader on arbitrary bytes must return, never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let _ = orbitfield::io::qmlog::orca::read(Path::new("fuzz.log"), data);
    // Without the banner check: the same bytes behind a banner reach the parser proper.
    let mut framed = orbitfield::io::qmlog::Program::Orca.banner().to_vec();
    framed.extend_from_slice(data);
    let _ = orbitfield::io::qmlog::orca::read(Path::new("fuzz.log"), &framed);
});
