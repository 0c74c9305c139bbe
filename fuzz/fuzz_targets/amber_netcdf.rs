//! Feeds arbitrary bytes to the AMBER NetCDF reader: opening and reading frames must never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use orbitfield::io::amber::NetcdfReader;
use orbitfield::model::Frame;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    if let Ok(mut reader) = NetcdfReader::from_bytes(Path::new("fuzz.nc"), data.to_vec()) {
        let mut frame = Frame::default();
        // A damaged header can claim many records; a few from each end are enough.
        let n = reader.n_frames();
        for i in (0..n.min(8)).chain(n.saturating_sub(8)..n) {
            let _ = reader.read_frame(i, &mut frame);
        }
        let _ = reader.refresh();
    }
});
