//! Fuzz target: the Gaussian cube reader must never panic on arbitrary bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = orbitfield::io::cube::read(std::path::Path::new("fuzz.cube"), data);
});
