//! Fuzz target: the OpenDX reader must never panic on arbitrary bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = orbitfield::io::dx::read(std::path::Path::new("fuzz.dx"), data);
});
