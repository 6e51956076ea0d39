//! A stand-in desktop notification server for the real-window tests: it
//! owns `org.freedesktop.Notifications` on a private session bus, records
//! every notification the app raises, and clicks one by emitting
//! `ActionInvoked`, as a desktop's notification daemon does.

// Each test file uses its own part of this.
#![allow(dead_code)]

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use zbus::zvariant::OwnedValue;

const PATH: &str = "/org/freedesktop/Notifications";
const NAME: &str = "org.freedesktop.Notifications";

/// One notification the app raised.
#[derive(Debug, Clone)]
pub struct Shown {
    pub id: u32,
    pub summary: String,
    pub body: String,
    pub actions: Vec<String>,
}

struct Server {
    shown: Arc<Mutex<Vec<Shown>>>,
}

#[zbus::interface(name = "org.freedesktop.Notifications")]
impl Server {
    fn get_capabilities(&self) -> Vec<String> {
        ["actions", "body", "persistence"].map(String::from).to_vec()
    }

    #[allow(clippy::too_many_arguments)]
    fn notify(
        &self,
        _app_name: String,
        _replaces_id: u32,
        _app_icon: String,
        summary: String,
        body: String,
        actions: Vec<String>,
        _hints: HashMap<String, OwnedValue>,
        _expire_timeout: i32,
    ) -> u32 {
        let mut shown = self.shown.lock().expect("the notifications");
        let id = shown.len() as u32 + 1;
        shown.push(Shown { id, summary, body, actions });
        id
    }

    fn close_notification(&self, _id: u32) {}

    fn get_server_information(&self) -> (String, String, String, String) {
        ("gatehouse-test".into(), "gatehouse".into(), "1".into(), "1.2".into())
    }
}

/// A private session bus with the stand-in server on it; both stop when
/// this is dropped.
pub struct Desktop {
    bus: Child,
    address: String,
    connection: zbus::blocking::Connection,
    shown: Arc<Mutex<Vec<Shown>>>,
}

impl Desktop {
    pub fn start() -> Self {
        let mut bus = Command::new("dbus-daemon")
            .args(["--session", "--nofork", "--print-address=1"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start dbus-daemon ({e}); install it (Debian: dbus)"));
        let mut address = String::new();
        BufReader::new(bus.stdout.take().expect("its stdout")).read_line(&mut address).expect("its address");
        let address = address.trim().to_owned();
        let shown = Arc::new(Mutex::new(Vec::new()));
        let connection = zbus::blocking::connection::Builder::address(address.as_str())
            .and_then(|b| b.serve_at(PATH, Server { shown: shown.clone() }))
            .and_then(|b| b.name(NAME))
            .and_then(|b| b.build())
            .unwrap_or_else(|e| panic!("cannot serve {NAME} on the test bus: {e}"));
        Self { bus, address, connection, shown }
    }

    /// The bus address to give the app (`DBUS_SESSION_BUS_ADDRESS`).
    pub fn address(&self) -> &str {
        &self.address
    }

    /// Waits for a notification whose summary or body contains `text`.
    pub fn wait_for(&self, text: &str, limit: Duration) -> Shown {
        let deadline = Instant::now() + limit;
        loop {
            let found = self.shown().into_iter().find(|n| n.summary.contains(text) || n.body.contains(text));
            if let Some(found) = found {
                return found;
            }
            assert!(
                Instant::now() < deadline,
                "no notification mentioning {text:?} within {limit:?}: {:?}",
                self.shown()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Every notification so far.
    pub fn shown(&self) -> Vec<Shown> {
        self.shown.lock().expect("the notifications").clone()
    }

    /// Clicks the notification: its default action, as a click on its body.
    pub fn click(&self, notification: &Shown) {
        self.connection
            .emit_signal(None::<&str>, PATH, NAME, "ActionInvoked", &(notification.id, "default"))
            .unwrap_or_else(|e| panic!("cannot click notification {}: {e}", notification.id));
    }
}

impl Drop for Desktop {
    fn drop(&mut self) {
        let _ = self.bus.kill();
        let _ = self.bus.wait();
    }
}
