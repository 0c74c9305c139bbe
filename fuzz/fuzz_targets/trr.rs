//! Feeds arbitrary bytes to the TRR reader: indexing and decoding every frame (with velocities and
//! forces) must never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use orbitfield::io::trr::{TrrExtras, TrrReader};
use orbitfield::model::{Frame, FrameSource};
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    if let Ok(mut reader) = TrrReader::from_bytes(Path::new("fuzz.trr"), data.to_vec()) {
        let (mut frame, mut extras) = (Frame::default(), TrrExtras::default());
        for i in 0..reader.n_frames() {
            let _ = reader.read_frame_with_extras(i, &mut frame, &mut extras);
        }
    }
});
