//! Fuzz target: the Molekel (.mkl) reader on arbitrary bytes must return, never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let _ = orbitfield::io::mkl::read(Path::new("fuzz.mkl"), data);
});
