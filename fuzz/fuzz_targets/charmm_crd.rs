//! Fuzz target: the CHARMM CRD reader (normal and extended layouts) on arbitrary bytes must return
//! a value or an error, never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = orbitfield::io::charmm_crd::read(std::path::Path::new("fuzz.crd"), data);
});
