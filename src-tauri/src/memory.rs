//! The app's own share of idle memory (docs/benchmarks.md, "Desktop app"):
//! glibc's allocator kept to two arenas and trimmed after each page load,
//! and JavaScriptCore's optimising JIT tiers left off in the window's web
//! process. Nothing here changes what the app does.

/// Before anything else runs (no other thread yet, so setting the
/// environment is sound): at most two malloc arenas instead of one per
/// thread that allocates (up to eight per core), and the web process
/// started later without JavaScriptCore's DFG and FTL tiers (the UI's
/// JavaScript still runs in the baseline JIT; a variable already set wins).
pub fn tune() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    glibc::limit_arenas(2);
    #[cfg(target_os = "linux")]
    for var in ["JSC_useDFGJIT", "JSC_useFTLJIT"] {
        if std::env::var_os(var).is_none() {
            std::env::set_var(var, "0");
        }
    }
}

/// A moment after a page has loaded, hands the allocator's free pages back
/// to the system: start-up (the server's router, the welcome runs, GTK and
/// WebKit's set-up) frees more than it keeps, and glibc returns free
/// memory in the middle of its heaps only when asked.
pub fn trim_after_load() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let spawned = std::thread::Builder::new().name("malloc-trim".into()).spawn(|| {
            std::thread::sleep(std::time::Duration::from_secs(2));
            glibc::trim();
        });
        if let Err(e) = spawned {
            tracing::debug!(error = %e, "no thread to trim the heap");
        }
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod glibc {
    use std::os::raw::c_int;

    extern "C" {
        fn mallopt(param: c_int, value: c_int) -> c_int;
        fn malloc_trim(pad: usize) -> c_int;
    }

    /// `M_ARENA_MAX` in glibc's malloc.h.
    const M_ARENA_MAX: c_int = -8;

    pub fn limit_arenas(arenas: c_int) {
        // SAFETY: mallopt only sets an allocator parameter; any value is accepted or refused.
        unsafe { mallopt(M_ARENA_MAX, arenas) };
    }

    pub fn trim() {
        // SAFETY: malloc_trim only releases free memory; it is thread-safe.
        unsafe { malloc_trim(0) };
    }
}
