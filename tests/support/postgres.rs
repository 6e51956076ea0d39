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
//!
//! The cluster offers TLS with a certificate for `localhost` ([`ca`] is the
//! authority that signed it). A test that restarts PostgreSQL takes a
//! cluster of its own ([`Private`]), so the tests sharing this one never see
//! the outage.
//!
//! Each crate's harness uses what it needs of this file, hence the
//! `allow(dead_code)`s.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
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
    shared().url.clone()
}

/// The certificate authority that signed the test cluster's certificate
/// (`GATEHOUSE_TEST_POSTGRES_CA` beside `GATEHOUSE_TEST_POSTGRES`, else
/// this binary's own cluster's); `None` when the cluster offers no TLS.
#[allow(dead_code)]
pub fn ca() -> Option<PathBuf> {
    if std::env::var("GATEHOUSE_TEST_POSTGRES").ok().is_some_and(|u| !u.is_empty()) {
        return std::env::var_os("GATEHOUSE_TEST_POSTGRES_CA").map(PathBuf::from);
    }
    shared().ca.clone()
}

fn shared() -> &'static Cluster {
    static CLUSTER: OnceLock<Result<Cluster, String>> = OnceLock::new();
    let dir = std::env::temp_dir().join(format!("gatehouse-test-pg-{}", std::process::id()));
    match CLUSTER.get_or_init(|| Cluster::start(dir)) {
        Ok(cluster) => cluster,
        Err(why) => panic!("{why}"),
    }
}

/// A cluster of one test's own, stopped (by its watchdog) when dropped or
/// when the process ends.
#[allow(dead_code)]
pub struct Private {
    cluster: Cluster,
    dir: PathBuf,
}

#[allow(dead_code)]
impl Private {
    /// Starts one (`name` tells its directory apart).
    pub fn start(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("gatehouse-test-pg-{}-{name}", std::process::id()));
        match Cluster::start(dir.clone()) {
            Ok(cluster) => Self { cluster, dir },
            Err(why) => panic!("{why}"),
        }
    }

    pub fn url(&self) -> &str {
        &self.cluster.url
    }

    /// Restarts PostgreSQL as an operator would (`pg_ctl restart -m fast`):
    /// every connection is closed, and the call returns once it accepts
    /// connections again.
    pub fn restart(&self) {
        self.script("restart");
    }

    /// Stops PostgreSQL (`pg_ctl stop -m fast`) until [`Private::up`].
    pub fn down(&self) {
        self.script("down");
    }

    /// Starts PostgreSQL again after [`Private::down`].
    pub fn up(&self) {
        self.script("up");
    }

    fn script(&self, action: &str) {
        let out = Command::new(SCRIPT).arg(action).arg(&self.dir).output().expect("run scripts/postgres.sh");
        assert!(out.status.success(), "postgres.sh {action} failed: {}", String::from_utf8_lossy(&out.stderr));
    }
}

/// A running throwaway cluster, stopped by its watchdog when this process
/// ends (or, for a [`Private`] one, when it is dropped).
struct Cluster {
    url: String,
    ca: Option<PathBuf>,
    /// The watchdog's only writer, open until the process ends.
    _lifeline: ChildStdin,
}

impl Cluster {
    fn start(dir: PathBuf) -> Result<Self, String> {
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
        // The URL and CA lines, or the end of output when the start failed.
        let (mut url, mut ca) = (None, None);
        for line in stdout.lines().map_while(Result::ok) {
            if let Some(found) = line.strip_prefix("export GATEHOUSE_TEST_POSTGRES=") {
                url = Some(found.to_owned());
            } else if let Some(found) = line.strip_prefix("export GATEHOUSE_TEST_POSTGRES_CA=") {
                ca = Some(PathBuf::from(found));
            }
        }
        match url {
            Some(url) => Ok(Self { url, ca, _lifeline: lifeline }),
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
