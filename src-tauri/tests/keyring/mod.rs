//! A real Secret Service for the real-window tests: GNOME Keyring on the
//! test's private session bus, its login keyring in a temporary directory,
//! created and unlocked with an empty password (there is no desktop session
//! to unlock it). The app stores its token there through the OS keychain
//! API as it would on a desktop; `secret-tool` (Debian: libsecret-tools)
//! reads and removes entries as a person could.

use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The Secret Service's bus name.
const SECRETS: &str = "org.freedesktop.secrets";

/// The running keyring daemon; stopped when dropped.
pub struct Keyring {
    daemon: Child,
    bus: String,
}

impl Keyring {
    /// Starts `gnome-keyring-daemon` (secrets only) on the bus at `bus`,
    /// keeping its files under `dir`, and waits until it serves.
    pub fn start(bus: &str, dir: &Path) -> Self {
        let runtime = dir.join("runtime");
        std::fs::create_dir_all(&runtime).expect("the keyring's runtime directory");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(&runtime, std::fs::Permissions::from_mode(0o700));
        }
        let mut daemon = Command::new("gnome-keyring-daemon")
            .args(["--foreground", "--unlock", "--components=secrets"])
            .env("DBUS_SESSION_BUS_ADDRESS", bus)
            .env("XDG_DATA_HOME", dir.join("data"))
            .env("XDG_RUNTIME_DIR", &runtime)
            .env("HOME", dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start gnome-keyring-daemon ({e}); install it (Debian: gnome-keyring)"));
        // The login keyring's password, read to the end of input: empty.
        let mut stdin = daemon.stdin.take().expect("its stdin");
        stdin.write_all(b"\n").expect("the keyring's password");
        drop(stdin);
        let keyring = Self { daemon, bus: bus.to_owned() };
        // Asked without activating anything: a call to the name before the
        // daemon owns it could start another daemon with the real user's home.
        let connection = zbus::blocking::connection::Builder::address(bus)
            .and_then(|b| b.build())
            .unwrap_or_else(|e| panic!("cannot connect to the test bus: {e}"));
        let bus_names = zbus::blocking::fdo::DBusProxy::new(&connection).expect("the bus's own interface");
        let secrets = zbus::names::BusName::try_from(SECRETS).expect("a bus name");
        let deadline = Instant::now() + Duration::from_secs(10);
        while !bus_names.name_has_owner(secrets.clone()).unwrap_or(false) {
            assert!(Instant::now() < deadline, "the keyring did not take {SECRETS} within 10 s");
            std::thread::sleep(Duration::from_millis(50));
        }
        keyring
    }

    /// Runs `secret-tool`; its output, and its error output when it failed
    /// for another reason than finding nothing.
    fn secret_tool(&self, args: &[&str]) -> (String, Option<String>) {
        let out = Command::new("secret-tool")
            .args(args)
            .env("DBUS_SESSION_BUS_ADDRESS", &self.bus)
            .output()
            .unwrap_or_else(|e| panic!("cannot run secret-tool ({e}); install it (Debian: libsecret-tools)"));
        let stderr = String::from_utf8_lossy(&out.stderr).trim().to_owned();
        let failed = (!out.status.success() && !stderr.is_empty()).then_some(stderr);
        (String::from_utf8_lossy(&out.stdout).into_owned(), failed)
    }

    /// The secret stored for `service` and `user`, if any.
    pub fn lookup(&self, service: &str, user: &str) -> Option<String> {
        let (out, failed) = self.secret_tool(&["lookup", "service", service, "username", user]);
        assert!(failed.is_none(), "secret-tool lookup failed: {failed:?}");
        Some(out).filter(|s| !s.is_empty())
    }

    /// Removes what is stored for `service` and `user`.
    pub fn clear(&self, service: &str, user: &str) {
        let (_, failed) = self.secret_tool(&["clear", "service", service, "username", user]);
        assert!(failed.is_none(), "secret-tool clear failed: {failed:?}");
    }
}

impl Drop for Keyring {
    fn drop(&mut self) {
        let _ = self.daemon.kill();
        let _ = self.daemon.wait();
    }
}
