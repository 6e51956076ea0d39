//! What the real-window tests share: tauri-driver as a process stopped
//! however the test ends, free ports, where artifacts go, finding the app's
//! process, and an agent over plain HTTP.

// Each test file uses its own part of this.
#![allow(dead_code)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// tauri-driver, stopped when the test ends however it ends: SIGTERM
/// first, since only then does it stop the WebKitWebDriver it started.
pub struct Driver(pub Child);

impl Drop for Driver {
    fn drop(&mut self) {
        stop(&mut self.0);
    }
}

/// Stops a child: SIGTERM, then SIGKILL after 5 s.
pub fn stop(child: &mut Child) {
    let _ = Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if matches!(child.try_wait(), Ok(Some(_))) {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free port").port()
}

pub fn tauri_driver() -> PathBuf {
    if let Some(path) = std::env::var_os("TAURI_DRIVER") {
        return path.into();
    }
    let in_cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| dirs::home_dir().map(|h| h.join(".cargo")))
        .map(|dir| dir.join("bin/tauri-driver"))
        .filter(|p| p.is_file());
    in_cargo_home.unwrap_or_else(|| PathBuf::from("tauri-driver"))
}

/// Starts tauri-driver for a launch of the app on `db`, with data
/// directories under `home`, the session bus at `bus`, `user` as the login
/// name (which names the window's reviewer token) and `env` besides; returns
/// it with its WebDriver address, once it answers.
pub fn start_driver(home: &Path, db: &Path, bus: &str, user: &str, env: &[(&str, &str)]) -> (Driver, String) {
    let port = free_port();
    let mut driver = Command::new(tauri_driver());
    driver
        .args(["--port", &port.to_string(), "--native-port", &free_port().to_string()])
        .env("GATEHOUSE_DB", db)
        .envs(crate::isolation::private_home(home))
        .env("DBUS_SESSION_BUS_ADDRESS", bus)
        .env("GATEHOUSE_LOG", "info")
        .env("USER", user)
        .envs(env.iter().copied())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
    let driver = Driver(driver.spawn().unwrap_or_else(|e| {
        panic!("cannot start tauri-driver ({e}); install it with `cargo install tauri-driver --locked` or set TAURI_DRIVER")
    }));
    let wd = format!("http://127.0.0.1:{port}");
    crate::webdriver::wait_until_up(&wd, Duration::from_secs(20));
    (driver, wd)
}

/// The workspace's target directory.
pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"))
}

pub fn artifacts() -> PathBuf {
    let dir = target_dir().join("e2e-artifacts");
    std::fs::create_dir_all(&dir).expect("the artifacts directory");
    dir
}

/// The app's process: the one whose environment names this test's database.
pub fn app_process(db: &Path) -> Option<u32> {
    crate::isolation::app_processes(db).into_iter().next()
}

/// Waits until nobody owns `name` on the bus at `bus` (a killed app's
/// single-instance name is released only once the bus notices it is gone).
pub fn wait_until_released(bus: &str, name: &str, limit: Duration) {
    let connection = zbus::blocking::connection::Builder::address(bus)
        .and_then(|b| b.build())
        .unwrap_or_else(|e| panic!("cannot connect to the test bus: {e}"));
    let names = zbus::blocking::fdo::DBusProxy::new(&connection).expect("the bus's own interface");
    let name = zbus::names::BusName::try_from(name).expect("a bus name");
    let deadline = Instant::now() + limit;
    while names.name_has_owner(name.clone()).unwrap_or(false) {
        assert!(Instant::now() < deadline, "{name} was still owned after {limit:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// An agent over plain HTTP.
pub struct Agent {
    pub http: reqwest::blocking::Client,
    pub base: String,
    pub token: String,
}

impl Agent {
    pub fn post(&self, path: &str, body: Value) -> Value {
        let resp = self
            .http
            .post(format!("{}/api/hitl{path}", self.base))
            .bearer_auth(&self.token)
            .json(&body)
            .send()
            .expect("the server answers");
        let status = resp.status();
        let body: Value = resp.json().expect("a JSON answer");
        assert!(status.is_success(), "POST {path}: {status} {body}");
        body
    }

    /// Waits on the gate's decision on a thread of its own (the agent
    /// blocks while the reviewer works); join it for the closed gate.
    pub fn wait_for(&self, gate_id: &str) -> std::thread::JoinHandle<Value> {
        let (http, base, token, gate) = (self.http.clone(), self.base.clone(), self.token.clone(), gate_id.to_owned());
        std::thread::spawn(move || -> Value {
            let resp = http
                .get(format!("{base}/api/hitl/gates/{gate}/wait?timeout=30"))
                .bearer_auth(token)
                .timeout(Duration::from_secs(40))
                .send()
                .expect("the long poll answers");
            assert_eq!(resp.status(), 200);
            resp.json().expect("the gate as JSON")
        })
    }
}

/// Answers the app's save dialog (a GTK file chooser titled `title`) as a
/// person at the keyboard does, through `xdotool` (Debian: xdotool): types
/// `path` into its name field and presses Enter, or presses Escape when
/// `path` is `None`. Waits up to `limit` for the dialog to appear.
pub fn answer_save_dialog(title: &str, path: Option<&Path>, limit: Duration) {
    let xdotool = |args: &[&str]| {
        let out = Command::new("xdotool")
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("cannot run xdotool ({e}); install it (Debian: xdotool)"));
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    };
    let pattern = format!("^{title}$");
    let deadline = Instant::now() + limit;
    let window = loop {
        let found = xdotool(&["search", "--onlyvisible", "--name", &pattern]);
        if let Some(id) = found.lines().last().filter(|id| !id.is_empty()) {
            break id.to_owned();
        }
        assert!(Instant::now() < deadline, "no window titled {title:?} appeared within {limit:?}");
        std::thread::sleep(Duration::from_millis(100));
    };
    // The dialog's name field has the focus, its suggested name selected.
    xdotool(&["windowfocus", "--sync", &window]);
    std::thread::sleep(Duration::from_millis(300));
    match path {
        Some(path) => {
            xdotool(&["key", "--clearmodifiers", "ctrl+a"]);
            xdotool(&["type", "--delay", "15", &path.to_string_lossy()]);
            xdotool(&["key", "Return"]);
        }
        None => {
            xdotool(&["key", "Escape"]);
        }
    }
}
