//! Fuzz target: the LAMMPS data reader on arbitrary bytes must return a value or an error, never
//! panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = orbitfield::io::lammps_data::read(std::path::Path::new("fuzz.data"), data);
});
