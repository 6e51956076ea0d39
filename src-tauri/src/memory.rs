//! The app's own share of idle memory (docs/benchmarks.md, "Desktop app"):
//! glibc's allocator kept to two arenas and trimmed after each page load,
//! start-up's code pages let go of once the page has loaded, and
//! JavaScriptCore's optimising JIT tiers left off in the window's web
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

/// A moment after a page has loaded, hands back what start-up left
/// resident and idling does not use: the allocator's free pages (start-up
/// frees more than it keeps, and glibc returns free memory in the middle of
/// its heaps only when asked), and the pages of code and read-only data
/// start-up mapped in (`code`).
pub fn trim_after_load() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let spawned = std::thread::Builder::new().name("malloc-trim".into()).spawn(|| {
            std::thread::sleep(std::time::Duration::from_secs(2));
            glibc::trim();
            let released = code::release();
            tracing::debug!(mb = released >> 20, "start-up's code and read-only data let go of");
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

/// Start-up's code pages, let go of once the page has loaded. Start-up (GTK,
/// WebKit's UI side, Mesa and LLVM, the engine's migrations, the server's
/// router, the welcome runs) runs code from all over the binary and its
/// libraries, and the kernel maps 64 kB of cached file around each page it
/// touches: some 40 MB stay mapped that idling never runs again, in the app
/// alone (docs/benchmarks.md). The app drops its mappings of those pages;
/// the file's pages stay in the page cache (reclaimable), and whatever runs
/// later maps them again at its first touch.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod code {
    use std::os::raw::{c_int, c_void};

    extern "C" {
        fn madvise(addr: *mut c_void, len: usize, advice: c_int) -> c_int;
    }

    /// `MADV_DONTNEED` in Linux's mman.h.
    const MADV_DONTNEED: c_int = 4;

    /// Drops the mappings `releasable` names; returns the bytes they span.
    pub fn release() -> usize {
        let Ok(smaps) = std::fs::read_to_string("/proc/self/smaps") else { return 0 };
        let mut released = 0;
        for (start, end) in super::releasable(&smaps) {
            // SAFETY: a private mapping of a regular file, only ever read (no
            // anonymous page, so no page was copied on write): each page is a
            // clean copy of the file's, which the kernel may take back at any
            // time under memory pressure anyway; the next access maps it again.
            if unsafe { madvise(start as *mut c_void, end - start, MADV_DONTNEED) } == 0 {
                released += end - start;
            }
        }
        released
    }
}

/// The address ranges in `/proc/self/smaps` whose pages can be dropped and
/// read again from their file unchanged: private read-only (or read and
/// execute) mappings of a file (not a device, not a deleted or memory-only
/// file) none of whose pages was ever written.
#[cfg(any(test, all(target_os = "linux", target_env = "gnu")))]
fn releasable(smaps: &str) -> Vec<(usize, usize)> {
    let mut found = Vec::new();
    let mut current: Option<(usize, usize)> = None;
    for line in smaps.lines() {
        if let Some(header) = mapping_header(line) {
            current = header;
        } else if let (Some(range), Some(kb)) = (current, line.strip_prefix("Anonymous:")) {
            if kb.trim() == "0 kB" {
                found.push(range);
            }
            current = None;
        }
    }
    found
}

/// A mapping's first line in smaps (`start-end perms offset dev inode path`):
/// `None` for any other line, `Some(None)` for a mapping not to drop.
#[cfg(any(test, all(target_os = "linux", target_env = "gnu")))]
fn mapping_header(line: &str) -> Option<Option<(usize, usize)>> {
    let mut fields = [""; 5];
    let mut rest = line;
    for field in &mut fields {
        rest = rest.trim_start();
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        (*field, rest) = rest.split_at(end);
    }
    let (start, end) = fields[0].split_once('-')?;
    let start = usize::from_str_radix(start, 16).ok()?;
    let end = usize::from_str_radix(end, 16).ok()?;
    let path = rest.trim();
    let file = path.starts_with('/')
        && !path.starts_with("/dev/")
        && !path.starts_with("/memfd:")
        && !path.starts_with("/SYSV")
        && !path.ends_with("(deleted)");
    Some((matches!(fields[1], "r-xp" | "r--p") && file && end > start).then_some((start, end)))
}

#[cfg(test)]
mod tests {
    use super::releasable;

    const SMAPS: &str = "\
55d0c0000000-55d0c0100000 r--p 00000000 fe:01 1234                       /usr/bin/gatehouse-desktop
Size:               1024 kB
Rss:                 400 kB
Anonymous:             0 kB
VmFlags: rd mr mw me sd
55d0c0100000-55d0c2000000 r-xp 00100000 fe:01 1234                       /usr/bin/gatehouse-desktop
Rss:               30000 kB
Anonymous:             0 kB
55d0c2000000-55d0c2100000 r--p 02000000 fe:01 1234                       /usr/bin/gatehouse-desktop
Anonymous:          1500 kB
55d0c2100000-55d0c2110000 rw-p 02100000 fe:01 1234                       /usr/bin/gatehouse-desktop
Anonymous:            40 kB
55d0c3000000-55d0c4000000 rw-p 00000000 00:00 0                          [heap]
Anonymous:          8000 kB
7f0000000000-7f0000100000 r-xp 00000000 fe:01 99                         /usr/lib/x86_64-linux-gnu/libLLVM-15.so.1
Anonymous:             0 kB
7f0000200000-7f0000300000 r--p 00000000 00:01 7                          /memfd:jit (deleted)
Anonymous:             0 kB
7f0000400000-7f0000500000 r--p 00000000 00:05 8                          /dev/dri/renderD128
Anonymous:             0 kB
7f0000600000-7f0000700000 r--p 00000000 fe:01 77                         /usr/share/fonts/a font.ttf
Anonymous:             0 kB
7f0000800000-7f0000900000 r-xp 00000000 fe:01 78                         /tmp/old build (deleted)
Anonymous:             0 kB
7ffd00000000-7ffd00001000 r-xp 00000000 00:00 0                          [vdso]
Anonymous:             0 kB
";

    #[test]
    fn only_read_only_file_pages_never_written_are_let_go_of() {
        assert_eq!(
            releasable(SMAPS),
            vec![
                (0x55d0c0000000, 0x55d0c0100000),
                (0x55d0c0100000, 0x55d0c2000000),
                (0x7f0000000000, 0x7f0000100000),
                (0x7f0000600000, 0x7f0000700000),
            ],
            "the binary's code and read-only data, a library's code, a font: never relocated data, the heap, \
             a memory-only or deleted file, a device or the vDSO"
        );
    }

    #[test]
    fn a_mapping_without_its_anonymous_line_is_kept() {
        let cut = "7f0000000000-7f0000100000 r-xp 00000000 fe:01 99 /usr/lib/libx.so\nRss: 4 kB\n";
        assert!(releasable(cut).is_empty());
    }
}
