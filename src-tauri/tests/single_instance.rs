//! One app per user: under a session bus, a second launch hands over to
//! the first (which brings its window up) and exits at once, before it
//! opens the database or makes a token. The test runs its own private
//! D-Bus session bus (the stand-in desktop's), so it neither needs nor
//! touches the user's.
//!
//! Needs a display (`xvfb-run -a`) and `dbus-daemon` (Debian: dbus).
//! Built only with `--features e2e`, like the window test.

mod desktop;
mod isolation;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use desktop::Desktop;
use gatehouse_engine::{Engine, EngineConfig};
use isolation::{private_home, Isolation};

const APP: &str = env!("CARGO_BIN_EXE_gatehouse-desktop");

/// A child process stopped when the test ends however it ends.
struct Stopped(Child);

impl Drop for Stopped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn launch(home: &Path, bus: &str) -> Command {
    let mut app = Command::new(APP);
    app.env("GATEHOUSE_DB", home.join("gatehouse.db"))
        .env("DBUS_SESSION_BUS_ADDRESS", bus)
        .envs(private_home(home))
        .stderr(Stdio::null());
    app
}

#[test]
fn a_second_launch_hands_over_to_the_first_and_makes_no_token() {
    let home = tempfile::tempdir().expect("a temp dir");
    let isolation = Isolation::watch(&home.path().join("gatehouse.db"), home.path());
    let desktop = Desktop::start();
    let address = desktop.address().to_owned();

    let mut first = launch(home.path(), &address).stdout(Stdio::piped()).spawn().expect("the first app");
    let mut line = String::new();
    // Kept open to the end: the app must not meet a closed stdout.
    let mut stdout = BufReader::new(first.stdout.take().expect("its stdout"));
    stdout.read_line(&mut line).expect("its first line");
    let first = Stopped(first);
    assert!(line.starts_with("Gatehouse listening on http://127.0.0.1:"), "{line}");

    let started = Instant::now();
    let mut second = launch(home.path(), &address).stdout(Stdio::null()).spawn().expect("the second app");
    let status = loop {
        if let Some(status) = second.try_wait().expect("the second app's status") {
            break status;
        }
        if started.elapsed() > Duration::from_secs(15) {
            let _ = second.kill();
            panic!("a second launch kept running beside the first");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "the second launch failed: {status}");

    let engine = Engine::open(home.path().join("gatehouse.db"), EngineConfig::default()).expect("the database");
    let tokens = engine.tokens().expect("the tokens");
    assert_eq!(tokens.len(), 1, "only the first launch made a token: {tokens:?}");

    // Quitting the first revokes its token.
    let pid = first.0.id().to_string();
    assert!(Command::new("kill").args(["-TERM", &pid]).status().is_ok_and(|s| s.success()));
    let deadline = Instant::now() + Duration::from_secs(10);
    while engine.tokens().expect("the tokens")[0].revoked_at.is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(engine.tokens().expect("the tokens")[0].revoked_at.is_some(), "the first app's token outlived it");
    isolation.assert_kept();
}
