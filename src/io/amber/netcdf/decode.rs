//! Decoding of frame values: big-endian to native floats, the scale factor, the cell and time.

use super::*;

/// The rest of a frame once its coordinates are in `out`: the scale factor applied, and the cell
/// (`parts` 0 lengths, 1 angles) and time (2) decoded from their big-endian bytes.
pub(super) fn finish_frame(out: &mut Frame, scale: Option<f64>, parts: [Option<(NcType, &[u8])>; 3]) {
    if let Some(s) = scale {
        let s = s as f32;
        for x in out.positions_angstrom.as_flattened_mut() {
            *x *= s;
        }
    }
    let [lengths, angles, time] = parts;
    let lengths = lengths.map(|(t, b)| decode3(t, b));
    let angles = angles.map(|(t, b)| decode3(t, b));
    out.cell = match (lengths, angles) {
        (Some(l), Some(a)) => Some(UnitCell::new(l, a)).filter(UnitCell::is_valid),
        _ => None,
    };
    out.time_ps = time.map(|(t, b)| match (t, b.get(..4)) {
        (NcType::Double, _) => be_f64(b),
        (_, Some(c)) => f64::from(f32::from_be_bytes([c[0], c[1], c[2], c[3]])),
        (_, None) => f64::NAN,
    });
    out.step = None;
}

/// Big-endian floats, read as native ones into `x`, turned into the values they hold (the same
/// vector byte shuffles as [`decode_be_f32`], in place).
pub(super) fn be_to_native_in_place(x: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2, checked just above.
        unsafe { be_to_native_in_place_avx2(x) };
        return;
    }
    be_to_native_in_place_any(x);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn be_to_native_in_place_avx2(x: &mut [f32]) {
    be_to_native_in_place_any(x);
}

#[inline(always)]
pub(super) fn be_to_native_in_place_any(x: &mut [f32]) {
    for v in x {
        *v = f32::from_bits(u32::from_be(v.to_bits()));
    }
}

/// Big-endian doubles (coordinates written in double precision) into `out`, rounded to `f32`.
pub(super) fn decode_be_f64_to_f32(raw: &[u8], out: &mut [f32]) {
    for (x, c) in out.iter_mut().zip(raw.chunks_exact(8)) {
        *x = be_f64(c) as f32;
    }
}

/// Big-endian floats `raw` into `out` (as many as both hold): a loop the compiler turns into
/// vector byte shuffles, compiled for AVX2 (`vpshufb`) where the CPU has it.
pub(super) fn decode_be_f32(raw: &[u8], out: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2, checked just above.
        unsafe { decode_be_f32_avx2(raw, out) };
        return;
    }
    decode_be_f32_any(raw, out);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn decode_be_f32_avx2(raw: &[u8], out: &mut [f32]) {
    decode_be_f32_any(raw, out);
}

#[inline(always)]
pub(super) fn decode_be_f32_any(raw: &[u8], out: &mut [f32]) {
    for (x, c) in out.iter_mut().zip(raw.chunks_exact(4)) {
        *x = f32::from_bits(u32::from_be_bytes([c[0], c[1], c[2], c[3]]));
    }
}

pub(super) fn decode3(t: NcType, b: &[u8]) -> [f64; 3] {
    std::array::from_fn(|k| match t {
        NcType::Double => be_f64(b.get(8 * k..).unwrap_or_default()),
        _ => {
            let c = b.get(4 * k..4 * k + 4).unwrap_or(&[0, 0, 0, 0]);
            f64::from(f32::from_be_bytes([c[0], c[1], c[2], c[3]]))
        }
    })
}

pub(super) fn hdf5_error(path: &Path) -> ReadError {
    ReadError::byte(
        path,
        0,
        "this is a NetCDF-4 file (HDF5 underneath); only NetCDF-3 files (classic and 64-bit offset, what AMBER writes) are read: convert it with `nccopy -k 64-bit-offset IN OUT`",
    )
}
