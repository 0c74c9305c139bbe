//! Fuzz target: the AMBER prmtop reader on arbitrary bytes must return a value or an error, never
//! panic or allocate without bound.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = orbitfield::io::amber::prmtop::read(std::path::Path::new("fuzz.prmtop"), data);
});
