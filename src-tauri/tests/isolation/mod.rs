//! Keeping the app under test out of the real user's data. The app gets a
//! home of its own ([`private_home`]: `HOME` and every XDG base directory
//! in the test's temporary directory), and [`Isolation`] checks, while the
//! test runs, what the app itself does: that each of its processes was given
//! that home, and that none of them, nor the web processes they start, has
//! a file in the real user's data, config, cache or state directory open for
//! writing.
//!
//! Why not compare the real files before and after, as these tests once
//! did: a Gatehouse the developer runs beside the tests (`scripts/run.sh
//! demo`) writes its own database all along, and the test failed for what
//! another process did. Sampling the app's open files (`/proc/PID/fd`, every
//! 50 ms) sees only the process under test. A sample can miss a file opened
//! and closed between two looks, which is what the environment check is
//! for: the app finds the user's directories only through `HOME` and
//! `XDG_*`, and those point into the temporary directory.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// The variables that place the app's files, each under the test's home.
const PLACES: [(&str, &str); 5] = [
    ("HOME", ""),
    ("XDG_DATA_HOME", "data"),
    ("XDG_CONFIG_HOME", "config"),
    ("XDG_CACHE_HOME", "cache"),
    ("XDG_STATE_HOME", "state"),
];

/// The app's own home under `home`: set these on whatever launches it.
pub fn private_home(home: &Path) -> Vec<(&'static str, PathBuf)> {
    PLACES.iter().map(|(var, dir)| (*var, if dir.is_empty() { home.to_owned() } else { home.join(dir) })).collect()
}

/// Watches the app on database `db` (every process of it, and theirs)
/// until [`Isolation::assert_kept`].
pub struct Isolation {
    stop: Arc<AtomicBool>,
    watcher: Option<JoinHandle<Report>>,
}

#[derive(Default)]
struct Report {
    /// How many of the app's processes were seen.
    apps: usize,
    problems: Vec<String>,
}

impl Isolation {
    pub fn watch(db: &Path, home: &Path) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let (db, home, flag) = (db.to_owned(), home.to_owned(), stop.clone());
        let real = real_user_dirs(&home);
        let watcher = std::thread::spawn(move || {
            let mut report = Report::default();
            let mut checked = HashSet::new();
            let mut seen = HashSet::new();
            loop {
                // One last look after the stop, so a short test is seen too.
                let last = flag.load(Ordering::SeqCst);
                for app in app_processes(&db) {
                    if checked.insert(app) {
                        report.apps += 1;
                        report.problems.extend(misplaced(app, &home));
                    }
                    for pid in with_descendants(app) {
                        for problem in writing_under(pid, &real) {
                            if seen.insert(problem.clone()) {
                                report.problems.push(problem);
                            }
                        }
                    }
                }
                if last {
                    return report;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        });
        Self { stop, watcher: Some(watcher) }
    }

    /// Stops watching; fails the test if the app was never seen or wrote
    /// (or could write) outside its own home.
    pub fn assert_kept(mut self) {
        let report = self.finish().expect("the isolation watcher").expect("the isolation watcher panicked");
        assert!(report.apps > 0, "the isolation check never saw the app running");
        assert!(report.problems.is_empty(), "the app reached the real user's data:\n{}", report.problems.join("\n"));
    }

    fn finish(&mut self) -> Option<std::thread::Result<Report>> {
        self.stop.store(true, Ordering::SeqCst);
        self.watcher.take().map(JoinHandle::join)
    }
}

impl Drop for Isolation {
    fn drop(&mut self) {
        let _ = self.finish();
    }
}

/// Every running app whose environment names this test's database.
pub fn app_processes(db: &Path) -> Vec<u32> {
    let wanted = format!("GATEHOUSE_DB={}", db.display());
    let entries = std::fs::read_dir("/proc").into_iter().flatten().flatten();
    entries
        .filter_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let exe = std::fs::read_link(entry.path().join("exe")).ok()?;
            let environ = std::fs::read(entry.path().join("environ")).ok()?;
            let ours = exe.file_name()? == "gatehouse-desktop"
                && environ.split(|b| *b == 0).any(|var| var == wanted.as_bytes());
            ours.then_some(pid)
        })
        .collect()
}

/// The real user's directories, as this test process (not the app) sees
/// them, less anything inside the test's home.
fn real_user_dirs(home: &Path) -> Vec<PathBuf> {
    [dirs::data_dir(), dirs::config_dir(), dirs::cache_dir(), dirs::state_dir()]
        .into_iter()
        .flatten()
        .filter(|dir| !dir.starts_with(home))
        .collect()
}

/// What is wrong with where `pid`'s environment puts its files.
fn misplaced(pid: u32, home: &Path) -> Vec<String> {
    let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else { return Vec::new() };
    let vars: HashMap<&[u8], &[u8]> = environ
        .split(|b| *b == 0)
        .filter_map(|var| var.iter().position(|b| *b == b'=').map(|at| (&var[..at], &var[at + 1..])))
        .collect();
    PLACES
        .iter()
        .filter_map(|(var, _)| {
            let value = vars.get(var.as_bytes()).map(|v| Path::new(std::str::from_utf8(v).unwrap_or("")));
            match value {
                Some(path) if path.starts_with(home) => None,
                Some(path) => Some(format!("app {pid}: {var} is {}, outside {}", path.display(), home.display())),
                None => Some(format!("app {pid}: {var} is not set (so the app would use the real one)")),
            }
        })
        .collect()
}

/// `pid` and every process under it (the app's web and network processes).
fn with_descendants(pid: u32) -> Vec<u32> {
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(child) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
        // `PID (COMM) STATE PPID ...`; COMM may hold spaces and parentheses.
        let parent = stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse().ok());
        if let Some(parent) = parent {
            children.entry(parent).or_default().push(child);
        }
    }
    let mut all = vec![pid];
    let mut next = 0;
    while next < all.len() {
        all.extend(children.get(&all[next]).into_iter().flatten());
        next += 1;
    }
    all
}

/// The files under `real` that `pid` has open for writing, one line each.
fn writing_under(pid: u32, real: &[PathBuf]) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(format!("/proc/{pid}/fd")).into_iter().flatten().flatten() {
        let Ok(target) = std::fs::read_link(entry.path()) else { continue };
        if !real.iter().any(|dir| target.starts_with(dir)) {
            continue;
        }
        let fd = entry.file_name();
        let info = std::fs::read_to_string(format!("/proc/{pid}/fdinfo/{}", fd.to_string_lossy())).unwrap_or_default();
        // `flags:` is octal; O_WRONLY is 1 and O_RDWR 2.
        let flags =
            info.lines().find_map(|l| l.strip_prefix("flags:")).and_then(|f| u32::from_str_radix(f.trim(), 8).ok());
        if flags.is_some_and(|f| f & 0o3 != 0) {
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
            found.push(format!("process {pid} ({}) has {} open for writing", comm.trim(), target.display()));
        }
    }
    found
}
