//! Fuzz target: the MMCIF reader on arbitrary bytes must return a value or an error, never
//! panic; bond guessing then runs on whatever it accepted.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let parsed = orbitfield::io::mmcif::read(std::path::Path::new("fuzz.mmcif"), data);
    // Bond guessing sees whatever coordinates a reader accepts.
    if let Ok(p) = parsed
        && let Some(f) = p.frames.first()
    {
        let _ = orbitfield::model::bonds::guess_bonds(&p.structure, &f.positions_angstrom);
    }
});
