//! NVRTC: CUDA source to PTX with the project's options, cached on disk (`ORBITFIELD_KERNEL_CACHE`,
//! else the user's cache folder) under a hash that is stable across builds, and optionally dumped for
//! inspection (`ORBITFIELD_DUMP_KERNELS`). Called by the engine (which keeps its own in-memory cache of
//! loaded modules) and by the kernel compile tests.

use super::{CudaError, catch};
use std::path::PathBuf;

/// FNV-1a, 64 bit: a hash that is stable across builds (disk cache keys).
pub(super) fn fnv1a(parts: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for b in p.bytes().chain(std::iter::once(0u8)) {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

fn disk_cache_dir() -> Option<PathBuf> {
    if let Ok(d) = std::env::var("ORBITFIELD_KERNEL_CACHE") {
        return if d.is_empty() || d == "off" {
            None
        } else {
            Some(PathBuf::from(d))
        };
    }
    if let Ok(d) = std::env::var("XDG_CACHE_HOME")
        && !d.is_empty()
    {
        return Some(PathBuf::from(d).join("orbitfield").join("kernels"));
    }
    std::env::var("HOME")
        .ok()
        .map(|h| PathBuf::from(h).join(".cache").join("orbitfield").join("kernels"))
}

/// Writes a kernel source to `$ORBITFIELD_DUMP_KERNELS/<key>.cu` when that variable names a folder
/// (inspection of generated kernels with offline tools); failures are ignored.
pub fn dump_source(src: &str, key: u64) {
    if let Some(dir) = std::env::var_os("ORBITFIELD_DUMP_KERNELS") {
        let dir = PathBuf::from(dir);
        if std::fs::create_dir_all(&dir).is_ok() {
            let _ = std::fs::write(dir.join(format!("{key:016x}.cu")), src);
        }
    }
}

/// Compiles CUDA source to PTX for `arch` ("compute_90") with the project's options (no fast math:
/// IEEE division and square root, no global flush-to-zero; FMA contraction on). The hot loops call
/// the ftz forms of `ex2.approx` and `rsqrt.approx` explicitly (see the kernels).
pub fn compile_ptx(src: &str, arch: &str) -> Result<String, CudaError> {
    let options = vec![
        format!("--gpu-architecture={arch}"),
        "--fmad=true".to_string(),
        "--prec-div=true".to_string(),
        "--prec-sqrt=true".to_string(),
        "--ftz=false".to_string(),
        "--std=c++17".to_string(),
    ];
    let key = fnv1a(&[src, &options.join(" "), env!("CARGO_PKG_VERSION")]);
    let file = disk_cache_dir().map(|d| d.join(format!("{arch}-{key:016x}.ptx")));
    if let Some(f) = &file
        && let Ok(ptx) = std::fs::read_to_string(f)
        && ptx.contains(".entry")
    {
        return Ok(ptx);
    }
    let opts = cudarc::nvrtc::CompileOptions {
        options,
        ..Default::default()
    };
    let ptx = catch("NVRTC", || {
        cudarc::nvrtc::compile_ptx_with_opts(src, opts).map_err(|e| match e {
            cudarc::nvrtc::CompileError::CompileError { log, .. } => CudaError::Compile {
                log: log.to_string_lossy().into_owned(),
            },
            other => CudaError::Nvrtc {
                detail: format!("{other:?}"),
            },
        })
    })?;
    let text = ptx.to_src();
    if let Some(f) = &file
        && let Some(dir) = f.parent()
        && std::fs::create_dir_all(dir).is_ok()
    {
        // Write to a unique temporary name and rename, so readers never see half a file.
        let tmp = f.with_extension(format!("tmp{}", std::process::id()));
        if std::fs::write(&tmp, &text).is_ok() && std::fs::rename(&tmp, f).is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
    }
    Ok(text)
}
