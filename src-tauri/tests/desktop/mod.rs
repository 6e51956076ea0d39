//! A stand-in desktop for the real-window tests, on a private session bus.
//! Its notification server owns `org.freedesktop.Notifications`, records
//! every notification the app raises, and clicks one by emitting
//! `ActionInvoked`, as a desktop's notification daemon does. Its tray host
//! owns `org.kde.StatusNotifierWatcher`, where the app's tray icon (a
//! StatusNotifierItem with a `com.canonical.dbusmenu` menu, as on GNOME with
//! the AppIndicator extension, KDE or XFCE) registers; the test reads the
//! icon's label and menu and clicks menu items, as a panel does. The bus
//! runs in a home of its own, so a service it starts on demand (GNOME
//! Keyring, when the app asks for the Secret Service) keeps its files there
//! and not in the real user's data.

// Each test file uses its own part of this.
#![allow(dead_code)]

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use zbus::zvariant::{OwnedObjectPath, OwnedValue, Value};

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

/// The tray host: records the items that register.
struct Watcher {
    items: Arc<Mutex<Vec<(String, String)>>>,
}

#[zbus::interface(name = "org.kde.StatusNotifierWatcher")]
impl Watcher {
    /// `service` is the item's object path on the caller's connection
    /// (libayatana-appindicator) or a bus name serving `/StatusNotifierItem`.
    fn register_status_notifier_item(&self, service: String, #[zbus(header)] header: zbus::message::Header<'_>) {
        let sender = header.sender().map(|s| s.to_string()).unwrap_or_default();
        let item =
            if service.starts_with('/') { (sender, service) } else { (service, "/StatusNotifierItem".to_owned()) };
        self.items.lock().expect("the tray items").push(item);
    }

    fn register_status_notifier_host(&self, _service: String) {}

    #[zbus(property)]
    fn registered_status_notifier_items(&self) -> Vec<String> {
        self.items.lock().expect("the tray items").iter().map(|(name, path)| format!("{name}{path}")).collect()
    }

    #[zbus(property)]
    fn is_status_notifier_host_registered(&self) -> bool {
        true
    }

    #[zbus(property)]
    fn protocol_version(&self) -> i32 {
        0
    }
}

/// One entry of a tray menu, as the panel reads it over dbusmenu.
#[derive(Debug, Clone)]
pub struct MenuEntry {
    pub id: i32,
    /// The text, without GTK's mnemonic underscores; empty for a separator.
    pub label: String,
    pub enabled: bool,
    pub separator: bool,
}

/// A private session bus with the stand-in notification server and tray
/// host on it; all stop when this is dropped.
pub struct Desktop {
    bus: Child,
    /// The bus's home, and that of every service it activates.
    _home: tempfile::TempDir,
    address: String,
    connection: zbus::blocking::Connection,
    shown: Arc<Mutex<Vec<Shown>>>,
    tray_items: Arc<Mutex<Vec<(String, String)>>>,
}

impl Desktop {
    pub fn start() -> Self {
        let home = tempfile::tempdir().expect("the bus's home");
        let mut bus = Command::new("dbus-daemon")
            .args(["--session", "--nofork", "--print-address=1"])
            .envs(crate::isolation::private_home(home.path()))
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start dbus-daemon ({e}); install it (Debian: dbus)"));
        let mut address = String::new();
        BufReader::new(bus.stdout.take().expect("its stdout")).read_line(&mut address).expect("its address");
        let address = address.trim().to_owned();
        let shown = Arc::new(Mutex::new(Vec::new()));
        let tray_items = Arc::new(Mutex::new(Vec::new()));
        let connection = zbus::blocking::connection::Builder::address(address.as_str())
            .and_then(|b| b.serve_at(PATH, Server { shown: shown.clone() }))
            .and_then(|b| b.name(NAME))
            .and_then(|b| b.serve_at("/StatusNotifierWatcher", Watcher { items: tray_items.clone() }))
            .and_then(|b| b.name("org.kde.StatusNotifierWatcher"))
            .and_then(|b| b.build())
            .unwrap_or_else(|e| panic!("cannot serve the stand-in desktop on the test bus: {e}"));
        Self { bus, _home: home, address, connection, shown, tray_items }
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

impl Desktop {
    /// Waits for the app's tray icon to register: its bus name and path.
    fn tray_item(&self) -> (String, String) {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(item) = self.tray_items.lock().expect("the tray items").first().cloned() {
                return item;
            }
            assert!(Instant::now() < deadline, "no tray icon registered with the desktop's tray host");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn item_property(&self, name: &str) -> OwnedValue {
        let (service, path) = self.tray_item();
        let properties = zbus::blocking::fdo::PropertiesProxy::builder(&self.connection)
            .destination(service.as_str())
            .and_then(|b| b.path(path.as_str()))
            .and_then(|b| b.build())
            .unwrap_or_else(|e| panic!("cannot reach the tray icon {service}{path}: {e}"));
        let interface = zbus::names::InterfaceName::from_static_str_unchecked("org.kde.StatusNotifierItem");
        properties.get(interface, name).unwrap_or_else(|e| panic!("the tray icon has no {name}: {e}"))
    }

    /// The text beside the tray icon (empty when there is none).
    pub fn tray_label(&self) -> String {
        String::try_from(self.item_property("XAyatanaLabel")).expect("the label is a string")
    }

    fn call_menu<B>(&self, method: &str, body: &B) -> zbus::message::Message
    where
        B: serde::Serialize + zbus::zvariant::DynamicType,
    {
        let (service, _) = self.tray_item();
        let menu = OwnedObjectPath::try_from(self.item_property("Menu")).expect("the menu is an object path");
        self.connection
            .call_method(Some(service.as_str()), menu.as_str(), Some("com.canonical.dbusmenu"), method, body)
            .unwrap_or_else(|e| panic!("the tray menu's {method} failed: {e}"))
    }

    /// The tray menu's top-level entries, in order.
    pub fn tray_menu(&self) -> Vec<MenuEntry> {
        type Layout = (i32, HashMap<String, OwnedValue>, Vec<OwnedValue>);
        let reply = self.call_menu("GetLayout", &(0i32, 1i32, Vec::<String>::new()));
        let (_revision, (_, _, children)): (u32, Layout) = reply.body().deserialize().expect("a dbusmenu layout");
        children
            .into_iter()
            .map(|child| {
                let (id, properties, _): Layout = child.try_into().expect("a dbusmenu item");
                let text = |key: &str| properties.get(key).and_then(|v| String::try_from(v.clone()).ok());
                let enabled = properties.get("enabled").and_then(|v| bool::try_from(v.clone()).ok());
                MenuEntry {
                    id,
                    label: text("label").unwrap_or_default().replace('_', ""),
                    enabled: enabled.unwrap_or(true),
                    separator: text("type").as_deref() == Some("separator"),
                }
            })
            .collect()
    }

    /// Waits for the tray menu to have an entry reading `label`.
    pub fn wait_for_menu_entry(&self, label: &str, limit: Duration) -> MenuEntry {
        let deadline = Instant::now() + limit;
        loop {
            let menu = self.tray_menu();
            if let Some(entry) = menu.iter().find(|e| e.label == label) {
                return entry.clone();
            }
            assert!(Instant::now() < deadline, "no tray menu entry {label:?} within {limit:?}: {menu:?}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Clicks the tray menu's entry reading `label`, as a panel does.
    pub fn click_menu_entry(&self, label: &str) {
        let entry = self.wait_for_menu_entry(label, Duration::from_secs(5));
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
        self.call_menu("Event", &(entry.id, "clicked", Value::from(0i32), now as u32));
    }
}

impl Desktop {
    /// Closes the window whose title starts with `title` as a window
    /// manager's close button does: `WM_DELETE_WINDOW` to the window on the
    /// X display the app uses (`DISPLAY`).
    pub fn close_window(&self, title: &str) {
        use x11rb::connection::Connection as _;
        use x11rb::errors::ReplyError;
        use x11rb::protocol::xproto::{ClientMessageEvent, ConnectionExt as _, EventMask};

        let (x, screen) = x11rb::connect(None).unwrap_or_else(|e| panic!("cannot reach the X display: {e}"));
        let atom = |name: &str| -> Result<u32, ReplyError> { Ok(x.intern_atom(false, name.as_bytes())?.reply()?.atom) };
        let atom = |name: &str| atom(name).unwrap_or_else(|e| panic!("no X atom {name}: {e}"));
        let (protocols, delete, utf8, net_name) =
            (atom("WM_PROTOCOLS"), atom("WM_DELETE_WINDOW"), atom("UTF8_STRING"), atom("_NET_WM_NAME"));
        let root = x.setup().roots[screen].root;
        let children =
            x.query_tree(root).map_err(ReplyError::from).and_then(|c| c.reply()).expect("the root's windows").children;
        let titled = |w: u32| {
            let name = x.get_property(false, w, net_name, utf8, 0, 1024).ok()?.reply().ok()?;
            String::from_utf8(name.value).ok().filter(|name| name.starts_with(title))
        };
        let window = children
            .iter()
            .copied()
            .find(|w| titled(*w).is_some())
            .unwrap_or_else(|| panic!("no window titled {title:?} on the display"));
        let event = ClientMessageEvent::new(32, window, protocols, [delete, x11rb::CURRENT_TIME, 0, 0, 0]);
        x.send_event(false, window, EventMask::NO_EVENT, event)
            .and_then(|_| x.flush())
            .unwrap_or_else(|e| panic!("cannot close window {window}: {e}"));
    }
}

impl Drop for Desktop {
    fn drop(&mut self) {
        let _ = self.bus.kill();
        let _ = self.bus.wait();
    }
}
