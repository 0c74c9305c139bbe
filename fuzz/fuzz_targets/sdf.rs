//! Fuzz target: the MDL molfile / SD file reader on arbitrary bytes must return a value or an
//! error, never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = orbitfield::io::sdf::read(std::path::Path::new("fuzz.sdf"), data);
});
