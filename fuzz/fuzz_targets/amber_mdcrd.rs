//! Fuzz target: the AMBER ASCII trajectory (mdcrd) and restart (rst7) readers on arbitrary bytes.
//! The first byte picks the atom count and whether the topology declares a box.
#![no_main]

use libfuzzer_sys::fuzz_target;
use orbitfield::io::amber::{BoxHint, MdcrdReader};
use orbitfield::model::Frame;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else { return };
    let n_atoms = usize::from(first & 0x3f) + 1;
    let hint = BoxHint {
        periodic: match first >> 6 {
            0 => None,
            1 => Some(false),
            _ => Some(true),
        },
        cell: None,
    };
    if let Ok(mut reader) = MdcrdReader::from_bytes(Path::new("fuzz.mdcrd"), rest.to_vec(), n_atoms, hint) {
        let mut frame = Frame::default();
        let n = reader.n_frames();
        for i in (0..n.min(8)).chain(n.saturating_sub(8)..n) {
            let _ = reader.read_frame(i, &mut frame);
        }
    }
    let _ = orbitfield::io::amber::rst7::read(Path::new("fuzz.rst7"), rest);
});
