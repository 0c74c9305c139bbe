//! Read-only memory maps of trajectory files that survive the file shrinking under them.
//!
//! Owns [`MappedFile`] and the process-wide `SIGBUS` handler that makes it safe. Called by the AMBER
//! NetCDF reader (`io::amber::netcdf`), which decodes frames straight out of the mapping instead of
//! copying them through `read` first (one pass over the bytes instead of two).
//!
//! A plain memory map raises `SIGBUS` when a page past the end of a file that shrank after mapping
//! is touched (a simulation that restarts and rewrites its output), which kills the process. Here
//! every live mapping is listed in a fixed table of address ranges; on `SIGBUS` at an address inside
//! one of them, the handler maps a page of zeros over the faulting page (`MAP_FIXED`, anonymous),
//! counts the fault for that mapping and returns, so the access completes (reading zeros). After
//! each copy out of the mapping the owner asks [`MappedFile::faulted`]; a mapping that faulted is
//! dropped and the read repeated with `pread`, which reports the short file as a normal error. A
//! `SIGBUS` at any other address goes to the handler installed before this one (Rust's own, which
//! resets to the default action), so other faults behave as without it. Linux only (64-bit); elsewhere
//! [`MappedFile::map`] returns `None` and callers read with `pread`.
//!
//! What a mapping cannot protect against: another library replacing the `SIGBUS` handler later
//! without chaining to this one (then a shrinking file kills the process, as any mapping would).

use std::fs::File;
use std::path::Path;

/// A read-only shared mapping of the first `len` bytes of a file.
pub(crate) struct MappedFile {
    #[cfg(all(target_os = "linux", target_pointer_width = "64"))]
    inner: linux::Mapping,
}

impl std::fmt::Debug for MappedFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MappedFile").field("len", &self.bytes().len()).finish()
    }
}

impl MappedFile {
    /// Maps the first `len` bytes of `file`; `None` where mappings are not used (other systems, an
    /// empty file, all table entries taken, `mmap` refused, turned off), and the caller reads with
    /// `pread`.
    /// `path` only names the file in the debug log.
    /// `ORBITFIELD_NO_MMAP` set (to anything) in the environment turns mappings off.
    pub(crate) fn map(file: &File, len: u64, path: &Path) -> Option<MappedFile> {
        #[cfg(all(target_os = "linux", target_pointer_width = "64"))]
        {
            if std::env::var_os("ORBITFIELD_NO_MMAP").is_some() {
                return None;
            }
            let inner = linux::Mapping::new(file, len);
            if inner.is_none() {
                tracing::debug!("{}: not memory-mapped, read with pread", path.display());
            }
            inner.map(|inner| MappedFile { inner })
        }
        #[cfg(not(all(target_os = "linux", target_pointer_width = "64")))]
        {
            let _ = (file, len, path);
            None
        }
    }

    /// The mapped bytes. They may change while borrowed if another process writes the file (as bytes
    /// read with `read` may be torn); pages past a new, shorter end read as zeros and make
    /// [`MappedFile::faulted`] true.
    pub(crate) fn bytes(&self) -> &[u8] {
        #[cfg(all(target_os = "linux", target_pointer_width = "64"))]
        {
            self.inner.bytes()
        }
        #[cfg(not(all(target_os = "linux", target_pointer_width = "64")))]
        {
            &[]
        }
    }

    /// True when a page of the mapping has been touched past the file's end (the file shrank since
    /// it was mapped): bytes copied out of it since the mapping was made may be zeros, not data.
    pub(crate) fn faulted(&self) -> bool {
        #[cfg(all(target_os = "linux", target_pointer_width = "64"))]
        {
            self.inner.faulted()
        }
        #[cfg(not(all(target_os = "linux", target_pointer_width = "64")))]
        {
            false
        }
    }
}

#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
mod linux {
    use std::fs::File;
    use std::os::fd::AsRawFd;
    use std::sync::OnceLock;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering, compiler_fence};

    /// Live mappings at most (more are read with `pread`).
    const TABLE: usize = 256;

    /// One live mapping's address range and its fault count, read by the signal handler.
    struct Entry {
        /// Claimed by a mapping (set before the range, cleared after it).
        used: AtomicBool,
        start: AtomicUsize,
        end: AtomicUsize,
        faults: AtomicUsize,
    }

    impl Entry {
        const fn free() -> Entry {
            Entry {
                used: AtomicBool::new(false),
                start: AtomicUsize::new(0),
                end: AtomicUsize::new(0),
                faults: AtomicUsize::new(0),
            }
        }
    }

    static ENTRIES: [Entry; TABLE] = [const { Entry::free() }; TABLE];
    static PAGE_BYTES: AtomicUsize = AtomicUsize::new(4096);
    /// The `SIGBUS` action found when ours was installed (chained to for faults not ours).
    static PREVIOUS: OnceLock<libc::sigaction> = OnceLock::new();
    /// Whether the handler is in place (decided once).
    static INSTALLED: OnceLock<bool> = OnceLock::new();

    pub(super) struct Mapping {
        ptr: *mut libc::c_void,
        len: usize,
        entry: usize,
    }

    // SAFETY: the mapping is read-only and owned by this value alone; the table entry it holds is
    // made of atomics.
    unsafe impl Send for Mapping {}
    // SAFETY: shared access only reads the mapping and the entry's atomics.
    unsafe impl Sync for Mapping {}

    fn install() -> bool {
        *INSTALLED.get_or_init(|| {
            // SAFETY: sysconf has no preconditions.
            let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
            if let Ok(page) = usize::try_from(page)
                && page.is_power_of_two()
            {
                PAGE_BYTES.store(page, Ordering::SeqCst);
            } else {
                return false;
            }
            // SAFETY: zeroed is a valid `sigaction` (no handler, empty mask); the calls get valid
            // pointers, and the new action's handler has the SA_SIGINFO signature.
            unsafe {
                let mut old: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(libc::SIGBUS, std::ptr::null(), &mut old) != 0 {
                    return false;
                }
                if PREVIOUS.set(old).is_err() {
                    return false;
                }
                let mut new: libc::sigaction = std::mem::zeroed();
                new.sa_sigaction = on_sigbus as *const () as libc::sighandler_t;
                new.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK | libc::SA_NODEFER;
                libc::sigemptyset(&mut new.sa_mask);
                libc::sigaction(libc::SIGBUS, &new, std::ptr::null_mut()) == 0
            }
        })
    }

    /// The `SIGBUS` handler: only atomics, `mmap` and `sigaction` (no allocation, no locks).
    extern "C" fn on_sigbus(sig: libc::c_int, info: *mut libc::siginfo_t, context: *mut libc::c_void) {
        // SAFETY: the kernel passes a valid siginfo for an SA_SIGINFO handler.
        let addr = if info.is_null() {
            0
        } else {
            unsafe { (*info).si_addr() as usize }
        };
        let page = PAGE_BYTES.load(Ordering::SeqCst);
        for entry in &ENTRIES {
            let start = entry.start.load(Ordering::SeqCst);
            let end = entry.end.load(Ordering::SeqCst);
            if start != 0 && (start..end).contains(&addr) {
                let at = addr & !(page - 1);
                // SAFETY: the page lies inside a mapping this module owns and nobody writes to;
                // replacing it with zeros changes only what its reader sees, and the reader is told.
                let p = unsafe {
                    libc::mmap(
                        at as *mut libc::c_void,
                        page,
                        libc::PROT_READ,
                        libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                        -1,
                        0,
                    )
                };
                if p != libc::MAP_FAILED {
                    entry.faults.fetch_add(1, Ordering::SeqCst);
                    return;
                }
                break;
            }
        }
        // Not ours (or the page could not be replaced): what would have happened without us.
        let Some(old) = PREVIOUS.get() else {
            reset_default();
            return;
        };
        let handler = old.sa_sigaction;
        if handler == libc::SIG_DFL || handler == libc::SIG_IGN {
            reset_default();
        } else if old.sa_flags & libc::SA_SIGINFO != 0 {
            // SAFETY: the previous action declared the SA_SIGINFO signature.
            let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                unsafe { std::mem::transmute(handler) };
            f(sig, info, context);
        } else {
            // SAFETY: a plain handler takes the signal number.
            let f: extern "C" fn(libc::c_int) = unsafe { std::mem::transmute(handler) };
            f(sig);
        }
    }

    /// Back to the default action: returning re-runs the faulting access, which then ends the process
    /// as it would have without this handler.
    fn reset_default() {
        // SAFETY: a zeroed action is SIG_DFL with an empty mask.
        unsafe {
            let mut dfl: libc::sigaction = std::mem::zeroed();
            dfl.sa_sigaction = libc::SIG_DFL;
            libc::sigaction(libc::SIGBUS, &dfl, std::ptr::null_mut());
        }
    }

    impl Mapping {
        pub(super) fn new(file: &File, len: u64) -> Option<Mapping> {
            let len = usize::try_from(len)
                .ok()
                .filter(|&l| l > 0 && l < isize::MAX as usize)?;
            if !install() {
                return None;
            }
            let entry = ENTRIES.iter().position(|e| {
                e.used
                    .compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst)
                    .is_ok()
            })?;
            // SAFETY: a fresh read-only shared mapping of an open file; the kernel picks the address.
            let ptr = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    len,
                    libc::PROT_READ,
                    libc::MAP_SHARED,
                    file.as_raw_fd(),
                    0,
                )
            };
            let e = ENTRIES.get(entry)?;
            if ptr == libc::MAP_FAILED || ptr.is_null() {
                e.used.store(false, Ordering::SeqCst);
                return None;
            }
            e.faults.store(0, Ordering::SeqCst);
            e.end.store(ptr as usize + len, Ordering::SeqCst);
            e.start.store(ptr as usize, Ordering::SeqCst);
            Some(Mapping { ptr, len, entry })
        }

        pub(super) fn bytes(&self) -> &[u8] {
            // SAFETY: `ptr` is a live read-only mapping of `len` bytes until drop; pages past a
            // shrunk file's end are replaced by zero pages by the handler instead of faulting.
            unsafe { std::slice::from_raw_parts(self.ptr as *const u8, self.len) }
        }

        pub(super) fn faulted(&self) -> bool {
            // The copies before this check must not be moved after it.
            compiler_fence(Ordering::SeqCst);
            ENTRIES
                .get(self.entry)
                .is_some_and(|e| e.faults.load(Ordering::SeqCst) > 0)
        }
    }

    impl Drop for Mapping {
        fn drop(&mut self) {
            if let Some(e) = ENTRIES.get(self.entry) {
                e.start.store(0, Ordering::SeqCst);
                e.end.store(0, Ordering::SeqCst);
                // SAFETY: the mapping was made by `new` with this address and length, and no
                // borrow of it outlives `self`.
                unsafe { libc::munmap(self.ptr, self.len) };
                e.used.store(false, Ordering::SeqCst);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_file_that_shrinks_while_mapped_reads_zeros_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.bin");
        let data: Vec<u8> = (0..5 * 4096 + 100).map(|i| (i % 251) as u8 + 1).collect();
        std::fs::File::create(&path).unwrap().write_all(&data).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        let mapped = MappedFile::map(&file, data.len() as u64, &path);
        if cfg!(all(target_os = "linux", target_pointer_width = "64")) {
            assert!(mapped.is_some(), "a plain file is mapped on Linux");
        }
        let Some(m) = mapped else {
            return;
        };
        assert_eq!(m.bytes(), &data[..]);
        assert!(!m.faulted());
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(4096)
            .unwrap();
        // Without the handler this read ends the process with SIGBUS.
        let copy = m.bytes().to_vec();
        assert!(m.faulted());
        assert_eq!(copy[..4096], data[..4096]);
        assert!(copy[4096..].iter().all(|&b| b == 0));
        drop(m);
        // A fresh mapping of the same table entry starts clean.
        let m = MappedFile::map(&file, 4096, &path).unwrap();
        assert_eq!(m.bytes(), &data[..4096]);
        assert!(!m.faulted());
    }
}
