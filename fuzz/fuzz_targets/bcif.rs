//! Fuzz target: the BinaryCIF reader (MessagePack, column decoders, the mmCIF table logic) on
//! arbitrary bytes must return a value or an error, never panic or allocate without bound.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = orbitfield::io::bcif::read(std::path::Path::new("fuzz.bcif"), data);
});
