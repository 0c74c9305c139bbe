//! Fuzz target: the DL_POLY CONFIG / HISTORY reader on arbitrary bytes must return a value or an
//! error, never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = orbitfield::io::dlpoly::read(std::path::Path::new("HISTORY"), data);
});
