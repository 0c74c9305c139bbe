//! Feeds arbitrary bytes to the DCD reader: opening and reading every frame must never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use orbitfield::io::dcd::DcdReader;
use orbitfield::model::{Frame, FrameSource};
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    if let Ok(mut reader) = DcdReader::from_bytes(Path::new("fuzz.dcd"), data.to_vec()) {
        let mut frame = Frame::default();
        // A damaged header can claim many tiny frames; a few from each end are enough.
        let n = reader.n_frames();
        for i in (0..n.min(8)).chain(n.saturating_sub(8)..n) {
            let _ = reader.read_frame(i, &mut frame);
        }
    }
});
