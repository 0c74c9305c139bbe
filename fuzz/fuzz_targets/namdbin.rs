//! Fuzz target: the NAMD binary coordinate reader on arbitrary bytes must return a value or an
//! error, never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(c) = orbitfield::io::namdbin::read(std::path::Path::new("fuzz.coor"), data) {
        let _ = c.velocities_angstrom_per_ps();
    }
});
