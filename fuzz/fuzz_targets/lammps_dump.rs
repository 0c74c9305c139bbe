//! Feeds arbitrary bytes to the LAMMPS dump reader: indexing, the atoms and every frame must never
//! panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use orbitfield::io::lammps_dump::LammpsDumpReader;
use orbitfield::model::{Frame, FrameSource};
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    if let Ok(mut reader) = LammpsDumpReader::from_bytes(Path::new("fuzz.lammpstrj"), data.to_vec()) {
        let _ = reader.structure();
        let mut frame = Frame::default();
        for unwrap in [false, true] {
            reader.set_unwrap_images(unwrap);
            for i in 0..reader.n_frames() {
                let _ = reader.read_frame(i, &mut frame);
            }
        }
    }
});
