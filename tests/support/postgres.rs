//! The PostgreSQL cluster the Rust integration tests use, written once and
//! included by each crate's harness (`#[path]` from its
//! `tests/integration/common/mod.rs`): `GATEHOUSE_TEST_POSTGRES` when set
//! (as `scripts/test.sh pg` sets it), else a throwaway cluster of this test
//! binary's own, so a plain `cargo test` needs no setup.
//!
//! The cluster is made by `scripts/postgres.sh start DIR` (one source for
//! installing PostgreSQL when missing, running it as the `postgres` user when
//! root, picking a free loopback port), once per test binary, on first use.
//! Statics are never dropped, so it is not stopped by a destructor: a
//! watchdog shell runs the start, then reads a pipe whose only writer is
//! this process. The kernel closes that pipe when the process ends however
//! it ends (a failed assertion, Ctrl-C, SIGKILL), and the watchdog then runs
//! `scripts/postgres.sh stop DIR`, never before the start has finished. It
//! has a process group of its own, so the Ctrl-C that ends the tests does
//! not end it first.

use std::io::{BufRead, BufReader};
use std::process::{ChildStdin, Command, Stdio};
use std::sync::OnceLock;

/// The script that makes and removes throwaway clusters.
const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/postgres.sh");

/// The URL of the cluster the tests use: `GATEHOUSE_TEST_POSTGRES`, else
/// this test binary's own, started on the first call.
pub fn url() -> String {
    if let Some(url) = std::env::var("GATEHOUSE_TEST_POSTGRES").ok().filter(|u| !u.is_empty()) {
        return url;
    }
    static CLUSTER: OnceLock<Result<Cluster, String>> = OnceLock::new();
    match CLUSTER.get_or_init(Cluster::start) {
        Ok(cluster) => cluster.url.clone(),
        Err(why) => panic!("{why}"),
    }
}

/// A running throwaway cluster, stopped by its watchdog when this process ends.
struct Cluster {
    url: String,
    /// The watchdog's only writer, open until the process ends.
    _lifeline: ChildStdin,
}

impl Cluster {
    fn start() -> Result<Self, String> {
        let dir = std::env::temp_dir().join(format!("gatehouse-test-pg-{}", std::process::id()));
        let log = dir.with_extension("log");
        // One process starts the cluster (its output ends with the start),
        // waits for the end of its input and stops whatever the start made:
        // a stop never races a start still under way.
        let watchdog = r#"
            "$0" start "$1" 2>"$2"
            exec >/dev/null
            cat
            "$0" stop "$1" 2>/dev/null
            rm -f "$2"
        "#;
        let mut command = Command::new("sh");
        command.args(["-c", watchdog, SCRIPT]).arg(&dir).arg(&log);
        command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null());
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let mut child = command.spawn().map_err(|e| format!("cannot run {SCRIPT} under sh: {e}"))?;
        let lifeline = child.stdin.take().ok_or("the watchdog has no stdin")?;
        let stdout = BufReader::new(child.stdout.take().ok_or("the watchdog has no stdout")?);
        // The URL line, or the end of output when the start failed.
        let url = stdout
            .lines()
            .map_while(Result::ok)
            .find_map(|line| line.strip_prefix("export GATEHOUSE_TEST_POSTGRES=").map(str::to_owned));
        match url {
            Some(url) => Ok(Self { url, _lifeline: lifeline }),
            None => {
                // The watchdog removes the log when this process ends.
                let why = std::fs::read_to_string(&log).unwrap_or_default();
                Err(format!(
                    "these tests need PostgreSQL and could not start a throwaway cluster in {} \
                     with scripts/postgres.sh; set GATEHOUSE_TEST_POSTGRES to a cluster's URL \
                     to use one instead\n{}",
                    dir.display(),
                    why.trim_end(),
                ))
            }
        }
    }
}
