//! Feeds arbitrary bytes to the XTC reader: indexing and decoding every frame must never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use orbitfield::io::xtc::XtcReader;
use orbitfield::model::{Frame, FrameSource};
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    if let Ok(mut reader) = XtcReader::from_bytes(Path::new("fuzz.xtc"), data.to_vec()) {
        let mut frame = Frame::default();
        for i in 0..reader.n_frames() {
            let _ = reader.read_frame(i, &mut frame);
        }
    }
});
