//! The `orbitfield` command: the viewer when run without a subcommand, and the headless commands.

mod cli;

fn main() -> std::process::ExitCode {
    quiet_device_select_without_a_session();
    end_quietly_when_the_reader_stops();
    cli::main()
}

/// `orbitfield info --json FILE | head`: when the reader of the output closes it, the command ends
/// there, as Unix tools do (the default action of SIGPIPE), instead of reporting a failed write
/// as a crash. Rust starts programs with SIGPIPE ignored, which turns every later print into a
/// panic.
fn end_quietly_when_the_reader_stops() {
    #[cfg(unix)]
    // SAFETY: restores the signal's default disposition before any thread of this process exists;
    // no handler is installed.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// Mesa's Vulkan device-select layer probes for a Wayland session whenever the adapters are
/// listed, and where there is none (a server, a batch job, a virtual X display) libwayland prints
/// "error: XDG_RUNTIME_DIR is invalid or not set" on every probe, twice per run, although
/// nothing failed. Without a session directory and without a Wayland display the layer is switched
/// off (its own `NODEVICE_SELECT`): the renderer chooses its adapter by its own preference
/// (`render::context`) in any case. Left alone where the user set it or asked the layer for a
/// device (`MESA_VK_DEVICE_SELECT`).
fn quiet_device_select_without_a_session() {
    let unset = |name: &str| std::env::var_os(name).is_none_or(|v| v.is_empty());
    if unset("XDG_RUNTIME_DIR")
        && unset("WAYLAND_DISPLAY")
        && unset("NODEVICE_SELECT")
        && unset("MESA_VK_DEVICE_SELECT")
    {
        // SAFETY: the first statement of `main`, before any thread of this process exists.
        unsafe { std::env::set_var("NODEVICE_SELECT", "1") };
    }
}
