//! Fuzz target: the mol2 reader on arbitrary bytes must return a value or an error, never panic;
//! bond guessing then runs on whatever it accepted.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = orbitfield::io::mol2::read(std::path::Path::new("fuzz.mol2"), data)
        && let Some(f) = p.frames.first()
    {
        let _ = orbitfield::model::bonds::guess_bonds(&p.structure, &f.positions_angstrom);
    }
});
