use super::*;

fn frame(i: usize, n: usize, with_box: bool) -> Frame {
    Frame {
        positions_angstrom: (0..n).map(|a| [i as f32, a as f32 * 0.5, -1.25 * a as f32]).collect(),
        cell: with_box.then(|| UnitCell::new([30.0 + i as f64, 31.0, 32.0], [109.47, 109.47, 109.47])),
        time_ps: None,
        step: None,
    }
}

#[test]
fn writes_and_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    for with_box in [false, true] {
        let path = dir.path().join(format!("t{with_box}.nc"));
        let mut w = NetcdfWriter::create(&path, 7, with_box).unwrap();
        for i in 0..5 {
            w.write_frame(&frame(i, 7, with_box), 2.0 * i as f64).unwrap();
        }
        assert!(!path.exists(), "nothing at the target before finish");
        w.finish().unwrap();
        let mut r = NetcdfReader::open(&path).unwrap();
        assert_eq!((r.n_atoms(), r.n_frames()), (7, 5));
        assert!(r.warnings().is_empty(), "{:?}", r.warnings());
        let mut f = Frame::default();
        r.read_frame(3, &mut f).unwrap();
        assert_eq!(f.positions_angstrom, frame(3, 7, with_box).positions_angstrom);
        assert_eq!(f.time_ps, Some(6.0));
        assert_eq!(f.cell, frame(3, 7, with_box).cell);
    }
}

/// `frames` frames of `frame(i, n_atoms, true)` at time `i` ps written to `dir/name`.
fn written(dir: &Path, name: &str, n_atoms: usize, frames: usize) -> PathBuf {
    let path = dir.join(name);
    let mut w = NetcdfWriter::create(&path, n_atoms, true).unwrap();
    for i in 0..frames {
        w.write_frame(&frame(i, n_atoms, true), i as f64).unwrap();
    }
    w.finish().unwrap();
    path
}

/// Runs the second half first, then the first: decoding must not depend on the order.
#[derive(Debug)]
struct Backwards(std::sync::atomic::AtomicUsize);

impl Fork for Backwards {
    fn join(&self, first: &mut (dyn FnMut() + Send), second: &mut (dyn FnMut() + Send)) {
        self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        second();
        first();
    }
}

/// A frame large enough to be split gives the written coordinates, decoded in two halves
/// (whatever their order), from the mapping and from the decompressed bytes.
#[test]
fn a_large_frame_decoded_in_two_halves_is_the_written_one() {
    let dir = tempfile::tempdir().unwrap();
    // 23,001 atoms: 276 kB per frame, above the split size, and an odd number of values.
    let n = 23_001;
    let path = written(dir.path(), "big.nc", n, 3);
    let fork = Arc::new(Backwards(Default::default()));
    let mapped = NetcdfReader::open(&path).unwrap();
    let in_memory = NetcdfReader::from_bytes(&path, std::fs::read(&path).unwrap()).unwrap();
    let mut f = Frame::default();
    for mut r in [mapped, in_memory] {
        r.share_decoding(fork.clone());
        for i in [2, 0, 1] {
            f.positions_angstrom.fill([f32::NAN; 3]);
            r.read_frame(i, &mut f).unwrap();
            let want = frame(i, n, true);
            assert_eq!(f.positions_angstrom, want.positions_angstrom, "frame {i}");
            assert_eq!((f.cell, f.time_ps), (want.cell, Some(i as f64)));
        }
    }
    assert_eq!(
        fork.0.load(std::sync::atomic::Ordering::Relaxed),
        6,
        "every frame was split"
    );
}

/// The mapped reader and the `pread` reader (mapping dropped) give the written frames in any
/// order, and a file cut short while mapped gives an error for the lost frame, not a crash.
#[test]
fn mapped_and_positioned_reads_agree_and_survive_a_shrinking_file() {
    let dir = tempfile::tempdir().unwrap();
    // 1500 atoms: 18 kB per frame, so frames span several pages.
    let n = 1500;
    let path = written(dir.path(), "m.nc", n, 6);
    let mut mapped = NetcdfReader::open(&path).unwrap();
    let mut positioned = NetcdfReader::open(&path).unwrap();
    positioned.map = None;
    if cfg!(target_os = "linux") {
        assert!(mapped.map.is_some(), "a plain file is mapped on Linux");
    }
    let mut f = Frame::default();
    for r in [&mut mapped, &mut positioned] {
        for i in [0, 1, 2, 3, 4, 5, 3, 0, 5, 1, 4, 2] {
            f.positions_angstrom.clear();
            r.read_frame(i, &mut f).unwrap();
            let want = frame(i, n, true);
            assert_eq!(f.positions_angstrom, want.positions_angstrom, "frame {i}");
            assert_eq!(f.cell, want.cell);
            assert_eq!(f.time_ps, Some(i as f64));
        }
    }
    // The variable-by-variable reads (files with velocities between coordinates and box).
    for i in [4, 0, 5, 2] {
        f.positions_angstrom.clear();
        positioned.read_apart(i, &mut f).unwrap();
        let want = frame(i, n, true);
        assert_eq!(f.positions_angstrom, want.positions_angstrom, "frame {i}");
        assert_eq!((f.cell, f.time_ps), (want.cell, Some(i as f64)));
    }
    // A simulation restarts and rewrites its output: the file shrinks under the mapping,
    // cutting frame 5 short and losing the pages of its later half.
    let len = std::fs::metadata(&path).unwrap().len();
    let record = 4 + 12 * n as u64 + 48;
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(len - record / 2 - 4096)
        .unwrap();
    for r in [&mut mapped, &mut positioned] {
        let e = r.read_frame(5, &mut f).unwrap_err();
        assert!(e.to_string().contains("m.nc"), "{e}");
        r.read_frame(1, &mut f).unwrap();
        assert_eq!(f.positions_angstrom, frame(1, n, true).positions_angstrom);
    }
    assert!(positioned.read_apart(5, &mut f).is_err());
    assert!(mapped.map.is_none(), "the mapping that faulted is dropped");
}

/// A header longer than the first bytes read is read on (the first read made tiny here), and a
/// file cut inside its header gives the same error as a field-by-field parse.
#[test]
fn header_longer_than_the_first_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = written(dir.path(), "h.nc", 5, 1);
    let bytes = std::fs::read(&path).unwrap();
    let parse = |b: &[u8], first: u64| {
        let cut = dir.path().join("cut.nc");
        std::fs::write(&cut, b).unwrap();
        let mut source = ByteSource::File(std::fs::File::open(&cut).unwrap());
        read_header(&cut, &mut source, b.len() as u64, first)
    };
    let whole = parse(&bytes, 1 << 16).unwrap();
    for first in [8, 16, 100] {
        let h = parse(&bytes, first).unwrap();
        assert_eq!(h.header_end, whole.header_end);
        let offsets = |h: &Header| h.vars.iter().map(|v| (v.name.clone(), v.begin)).collect::<Vec<_>>();
        assert_eq!(offsets(&h), offsets(&whole));
    }
    for cut in [9, 40, 200, whole.header_end as usize - 3] {
        let short = parse(&bytes[..cut], 16).err().unwrap().to_string();
        let direct = NetcdfReader::parse_header(&mut HeaderCursor {
            path: &dir.path().join("cut.nc"),
            source: &mut ByteSource::Memory(bytes[..cut].to_vec()),
            len: cut as u64,
            offset: 0,
        })
        .err()
        .unwrap()
        .to_string();
        assert_eq!(short, direct, "cut at {cut}");
    }
}

#[test]
fn dropped_writer_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.nc");
    let mut w = NetcdfWriter::create(&path, 3, false).unwrap();
    w.write_frame(&frame(0, 3, false), 0.0).unwrap();
    assert!(w.write_frame(&frame(0, 4, false), 0.0).is_err());
    drop(w);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn cut_short_files_keep_their_complete_frames() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.nc");
    let mut w = NetcdfWriter::create(&path, 10, true).unwrap();
    for i in 0..4 {
        w.write_frame(&frame(i, 10, true), i as f64).unwrap();
    }
    w.finish().unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let record = 4 + 120 + 48;
    let cut = bytes.len() - record - 10;
    let r = NetcdfReader::from_bytes(Path::new("t.nc"), bytes[..cut].to_vec()).unwrap();
    assert_eq!(r.n_frames(), 2);
    assert_eq!(
        r.warnings(),
        [format!(
            "header says 4 frames, 2 complete frames found, file ends at byte {cut}"
        )]
    );
    let header_only = bytes.len() - 4 * record;
    let r = NetcdfReader::from_bytes(Path::new("t.nc"), bytes[..header_only].to_vec()).unwrap();
    assert_eq!(r.n_frames(), 0);
    let mut hdf = b"\x89HDF\r\n\x1a\n".to_vec();
    hdf.resize(100, 0);
    let e = NetcdfReader::from_bytes(Path::new("t.nc"), hdf).unwrap_err();
    assert!(e.message.contains("NetCDF-4"), "{e}");
    for n in [0, 3, 7, 40, 200] {
        assert!(NetcdfReader::from_bytes(Path::new("t.nc"), bytes[..n].to_vec()).is_err());
    }
}
