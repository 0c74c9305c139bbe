//! Fuzz target: the TPR reader on arbitrary bytes must return a topology or an error, never panic
//! or allocate without bound.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = orbitfield::io::tpr::read(std::path::Path::new("fuzz.tpr"), data);
});
