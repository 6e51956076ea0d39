//! Shared by the `gatehouse` binary's tests: the command against one
//! database, a real `gatehouse serve` (or `demo`) child process on a free
//! loopback port, and waits that always give up after a bounded time.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

/// The longest any single wait in these tests may take.
pub const WAIT: Duration = Duration::from_secs(30);

/// `gatehouse --db <db>`, with none of the caller's GATEHOUSE_* settings leaking in.
pub fn gatehouse(db: &Path) -> Command {
    let mut cmd = bare();
    cmd.arg("--db").arg(db);
    cmd
}

/// `gatehouse`, with none of the caller's GATEHOUSE_* settings leaking in.
pub fn bare() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_gatehouse"));
    for var in [
        "GATEHOUSE_DB",
        "GATEHOUSE_DATABASE",
        "GATEHOUSE_DATABASE_SCHEMA",
        "GATEHOUSE_DATABASE_WRITERS",
        "GATEHOUSE_URL",
        "GATEHOUSE_TOKEN",
        "GATEHOUSE_WEBHOOK_URL",
        "GATEHOUSE_LOG",
    ] {
        cmd.env_remove(var);
    }
    cmd
}

#[path = "../../../../../tests/support/postgres.rs"]
mod cluster;

/// The test cluster's URL (`GATEHOUSE_TEST_POSTGRES`, else a throwaway
/// cluster this test binary starts once), for the team-server tests.
pub fn postgres_url() -> String {
    cluster::url()
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

pub fn assert_success(out: &Output) {
    assert!(out.status.success(), "exit {:?}\nstdout:\n{}\nstderr:\n{}", out.status.code(), stdout(out), stderr(out));
}

/// Waits for `child` to exit, killing it (and failing the test) after `limit`.
pub fn wait_output(mut child: Child, limit: Duration) -> Output {
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().expect("poll the child") {
            break status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the child process did not exit within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let read = |pipe: Option<&mut dyn Read>| {
        let mut bytes = Vec::new();
        if let Some(pipe) = pipe {
            let _ = pipe.read_to_end(&mut bytes);
        }
        bytes
    };
    let out = read(child.stdout.as_mut().map(|p| p as &mut dyn Read));
    let err = read(child.stderr.as_mut().map(|p| p as &mut dyn Read));
    Output { status, stdout: out, stderr: err }
}

/// A running `gatehouse serve` (or `demo`) child; killed when dropped.
pub struct Server {
    child: Child,
    lines: Receiver<String>,
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    /// The admin token it wrote (or found) beside the database.
    pub admin: String,
    /// Its database.
    pub db: PathBuf,
    /// Its stdout up to the listening line.
    pub preamble: Vec<String>,
    log: PathBuf,
}

impl Server {
    /// `gatehouse --db <db> serve --bind 127.0.0.1:0`.
    pub fn start(db: &Path) -> Self {
        Self::spawn(db, &["serve", "--bind", "127.0.0.1:0"])
    }

    /// Runs `args` (a command that serves), waiting for its listening line.
    pub fn spawn(db: &Path, args: &[&str]) -> Self {
        let mut cmd = gatehouse(db);
        cmd.args(args);
        let token_file = db.parent().expect("db in a directory").join("admin-token");
        Self::launch(cmd, db, &token_file, &db.with_extension("serve.log"))
    }

    /// Runs `args` like [`Server::spawn`], through `wrapper` (`prlimit ...`,
    /// `sh -c '...; exec "$0" "$@"'`), which runs the binary named after it.
    pub fn spawn_wrapped(db: &Path, wrapper: &[&str], args: &[&str]) -> Self {
        let gatehouse = bare();
        let mut cmd = Command::new(wrapper[0]);
        cmd.args(&wrapper[1..]).arg(gatehouse.get_program()).arg("--db").arg(db).args(args);
        for (var, _) in gatehouse.get_envs() {
            cmd.env_remove(var);
        }
        let dir = db.parent().expect("db in a directory");
        // Beside the data directory, which the server may be the one to create.
        Self::launch(cmd, db, &dir.join("admin-token"), &dir.with_extension("serve.log"))
    }

    /// `gatehouse serve` on the test cluster's PostgreSQL, in `schema`, with
    /// the data directory (where the admin-token file goes) under `home`.
    pub fn start_postgres(home: &Path, schema: &str, name: &str) -> Self {
        Self::start_postgres_with(home, schema, name, &[])
    }

    /// [`Server::start_postgres`] with more of `gatehouse`'s flags (`--database-writers 3`).
    pub fn start_postgres_with(home: &Path, schema: &str, name: &str, flags: &[&str]) -> Self {
        let mut cmd = bare();
        cmd.env("XDG_DATA_HOME", home)
            .args(["--database", &postgres_url(), "--database-schema", schema])
            .args(flags)
            .args(["serve", "--bind", "127.0.0.1:0"]);
        let token_file = home.join("gatehouse").join("admin-token");
        Self::launch(cmd, &home.join("unused.db"), &token_file, &home.join(format!("{name}.log")))
    }

    fn launch(mut cmd: Command, db: &Path, token_file: &Path, log: &Path) -> Self {
        let log = log.to_owned();
        let log_file = std::fs::File::create(&log).expect("server log file");
        let mut child =
            cmd.stdout(Stdio::piped()).stderr(Stdio::from(log_file)).spawn().expect("the gatehouse binary runs");
        let out = child.stdout.take().expect("piped stdout");
        let (tx, lines) = mpsc::channel();
        // Drains stdout for the server's whole life so it never blocks on a full pipe.
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                let _ = tx.send(line);
            }
        });
        let mut server = Self {
            child,
            lines,
            url: String::new(),
            admin: String::new(),
            db: db.to_owned(),
            preamble: Vec::new(),
            log,
        };
        let line = server.line_matching(|l| l.starts_with("Gatehouse listening on "), WAIT);
        server.url = line.trim_start_matches("Gatehouse listening on ").trim().to_owned();
        server.admin = std::fs::read_to_string(token_file).expect("admin-token written").trim().to_owned();
        server
    }

    /// The next stdout line matching `wanted`, recording earlier ones in `preamble`.
    pub fn line_matching(&mut self, wanted: impl Fn(&str) -> bool, limit: Duration) -> String {
        let deadline = Instant::now() + limit;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) if wanted(&line) => return line,
                Ok(line) => self.preamble.push(line),
                Err(_) => panic!(
                    "no matching line within {limit:?}; stdout so far:\n{}\nstderr:\n{}",
                    self.preamble.join("\n"),
                    std::fs::read_to_string(&self.log).unwrap_or_default()
                ),
            }
        }
    }

    /// `gatehouse --db <db>` aimed at this server (GATEHOUSE_URL), with the
    /// token left to the admin-token file unless the caller passes one.
    pub fn command(&self) -> Command {
        let mut cmd = gatehouse(&self.db);
        cmd.env("GATEHOUSE_URL", &self.url);
        cmd
    }

    /// Runs `args` against this server and waits for it.
    pub fn run(&self, args: &[&str]) -> Output {
        let child = self.command().args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("runs");
        wait_output(child, WAIT)
    }

    /// Starts `args` against this server without waiting.
    pub fn start_child(&self, args: &[&str]) -> Child {
        self.command().args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("runs")
    }

    /// Polls `gates list` until a pending gate's preview contains `text`, and returns its id.
    pub fn pending_gate(&self, text: &str) -> String {
        let deadline = Instant::now() + WAIT;
        loop {
            let out = self.run(&["gates", "list"]);
            assert_success(&out);
            let listed = stdout(&out);
            if let Some(line) = listed.lines().find(|l| l.starts_with("gate_") && l.contains(text)) {
                return line.split_whitespace().next().expect("an id column").to_owned();
            }
            assert!(Instant::now() < deadline, "no pending gate about {text:?} appeared:\n{listed}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// What it has logged (its stderr) so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends SIGTERM and waits for a clean exit.
    pub fn terminate(mut self) -> ExitStatus {
        let pid = self.child.id().to_string();
        let sent = Command::new("kill").args(["-TERM", &pid]).status().expect("kill runs");
        assert!(sent.success(), "SIGTERM could not be sent");
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(status) = self.child.try_wait().expect("poll the server") {
                return status;
            }
            assert!(Instant::now() < deadline, "the server did not stop within {WAIT:?} of SIGTERM");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Kills it at once (SIGKILL), as a crash or a lost machine would.
    pub fn kill(&mut self) {
        self.child.kill().expect("kill the server");
        self.child.wait().expect("reap the server");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
