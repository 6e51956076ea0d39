//! Just enough of the W3C WebDriver protocol for the desktop tests: a
//! session, finding elements, their text and values, clicks, typing, key
//! presses, the URL and screenshots, over blocking HTTP. Every failure
//! panics with what the driver said, which is what a test wants.

// Each test file uses its own part of this.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{json, Value};

/// The key under which WebDriver names an element.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// How to find elements.
pub enum By<'a> {
    /// A CSS selector.
    Css(&'a str),
}

/// A found element.
pub struct Element(String);

/// A WebDriver session: the launched app's window.
pub struct Session {
    http: reqwest::blocking::Client,
    base: String,
    /// Where a screenshot goes if the test fails while the session is open.
    on_failure: PathBuf,
}

/// Waits until the driver at `url` answers `/status`.
pub fn wait_until_up(url: &str, limit: Duration) {
    let http = reqwest::blocking::Client::new();
    let deadline = Instant::now() + limit;
    loop {
        if http.get(format!("{url}/status")).send().is_ok_and(|r| r.status().is_success()) {
            return;
        }
        assert!(Instant::now() < deadline, "the WebDriver server at {url} did not come up within {limit:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

impl Session {
    /// Starts a session (launching the app) with these capabilities.
    pub fn start(driver: &str, capabilities: Value, on_failure: PathBuf) -> Self {
        let http =
            reqwest::blocking::Client::builder().timeout(Duration::from_secs(60)).build().expect("an HTTP client");
        let body = json!({"capabilities": {"alwaysMatch": capabilities}});
        let value = call(http.post(format!("{driver}/session")).json(&body), "new session");
        let id = value["sessionId"].as_str().unwrap_or_else(|| panic!("no session id in {value}"));
        Self { base: format!("{driver}/session/{id}"), http, on_failure }
    }

    fn get(&self, path: &str) -> Value {
        call(self.http.get(format!("{}{path}", self.base)), path)
    }

    fn post(&self, path: &str, body: Value) -> Value {
        call(self.http.post(format!("{}{path}", self.base)).json(&body), path)
    }

    /// [`Self::get`] for polls: `None` if the command met a navigation.
    fn try_get(&self, path: &str) -> Option<Value> {
        call_unless_navigating(self.http.get(format!("{}{path}", self.base)), path)
    }

    /// [`Self::post`] for polls: `None` if the command met a navigation.
    fn try_post(&self, path: &str, body: Value) -> Option<Value> {
        call_unless_navigating(self.http.post(format!("{}{path}", self.base)).json(&body), path)
    }

    /// Every element matching `by` now.
    pub fn find_all(&self, by: &By) -> Vec<Element> {
        elements(&self.post("/elements", find(by)))
    }

    /// Every element matching `by` now; none while the page is being
    /// replaced (a navigation the poll waits out).
    fn find_polled(&self, by: &By) -> Vec<Element> {
        self.try_post("/elements", find(by)).map(|found| elements(&found)).unwrap_or_default()
    }

    /// The element's text, or `None` if the page replaced it meanwhile.
    fn text_polled(&self, element: &Element) -> Option<String> {
        self.try_get(&format!("/element/{}/property/textContent", element.0)).map(|text| words(&text))
    }

    /// The first element matching `by`, waiting up to `limit` for one.
    pub fn wait_for(&self, by: By, limit: Duration) -> Element {
        self.poll(limit, || self.find_polled(&by).into_iter().next())
            .unwrap_or_else(|| panic!("no element matched {} within {limit:?}", describe(&by)))
    }

    /// The first element matching `by` whose text contains `text`, waiting up to `limit`.
    pub fn wait_for_text(&self, by: By, text: &str, limit: Duration) -> Element {
        let found = self.poll(limit, || {
            self.find_polled(&by).into_iter().find(|e| self.text_polled(e).is_some_and(|t| t.contains(text)))
        });
        found.unwrap_or_else(|| {
            let seen: Vec<String> = self.find_all(&by).iter().map(|e| self.text(e)).collect();
            panic!("no element matching {} showed {text:?} within {limit:?}; saw {seen:?}", describe(&by))
        })
    }

    fn poll<T>(&self, limit: Duration, mut attempt: impl FnMut() -> Option<T>) -> Option<T> {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(found) = attempt() {
                return Some(found);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The element's text content. (WebKitWebDriver's rendered-text command
    /// answers "" for text clipped with `text-overflow: ellipsis`.)
    pub fn text(&self, element: &Element) -> String {
        words(&self.get(&format!("/element/{}/property/textContent", element.0)))
    }

    /// Clicks the element.
    pub fn click(&self, element: &Element) {
        self.post(&format!("/element/{}/click", element.0), json!({}));
    }

    /// Replaces what the field holds with `text`, as typed.
    pub fn type_into(&self, element: &Element, text: &str) {
        self.post(&format!("/element/{}/clear", element.0), json!({}));
        if !text.is_empty() {
            self.post(&format!("/element/{}/value", element.0), json!({"text": text}));
        }
    }

    /// The field's current value.
    pub fn value(&self, element: &Element) -> String {
        let value = self.get(&format!("/element/{}/property/value", element.0));
        value.as_str().unwrap_or_default().to_owned()
    }

    /// Waits up to `limit` for the page's address to start with `prefix`.
    pub fn wait_for_url(&self, prefix: &str, limit: Duration) -> String {
        self.poll(limit, || self.try_get("/url")?.as_str().map(str::to_owned).filter(|url| url.starts_with(prefix)))
            .unwrap_or_else(|| panic!("the window did not go to {prefix}… within {limit:?}; it shows {}", self.url()))
    }

    /// Presses and releases one key in whatever has the focus.
    pub fn press(&self, key: &str) {
        let actions = json!({"actions": [{"type": "key", "id": "keyboard", "actions": [
            {"type": "keyDown", "value": key}, {"type": "keyUp", "value": key}]}]});
        self.post("/actions", actions);
    }

    /// Presses `key` while `modifier` is held (`keys::ALT`, `keys::CONTROL`).
    pub fn chord(&self, modifier: &str, key: &str) {
        let actions = json!({"actions": [{"type": "key", "id": "keyboard", "actions": [
            {"type": "keyDown", "value": modifier}, {"type": "keyDown", "value": key},
            {"type": "keyUp", "value": key}, {"type": "keyUp", "value": modifier}]}]});
        self.post("/actions", actions);
    }

    /// Arms the open gate's approval (Alt+a: the cursor starts in the
    /// note, where `a` is a letter) and confirms it with Ctrl+Enter: no
    /// single key decides a gate.
    pub fn approve_open_gate(&self) {
        self.chord(keys::ALT, "a");
        self.chord(keys::CONTROL, keys::ENTER);
    }

    /// Runs `script` in the page and returns what it returns.
    pub fn script(&self, script: &str) -> Value {
        self.post("/execute/sync", json!({"script": script, "args": []}))
    }

    /// Waits up to `limit` for `script` to return `wanted`.
    pub fn wait_for_script(&self, script: &str, wanted: &Value, limit: Duration) {
        let run = || self.try_post("/execute/sync", json!({"script": script, "args": []}));
        if self.poll(limit, || run().filter(|got| got == wanted)).is_none() {
            panic!("`{script}` did not return {wanted} within {limit:?}: it returns {}", self.script(script));
        }
    }

    /// The page's address.
    pub fn url(&self) -> String {
        self.get("/url").as_str().unwrap_or_default().to_owned()
    }

    /// Saves a PNG of the window to `path`, once what the page shows now
    /// has been painted (a screenshot is the last painted frame).
    ///
    /// WebKit answers a screenshot after the page's next presentation
    /// update. Without accelerated compositing (the app's default) an idle
    /// page presents nothing, and the request would wait forever; a 1-pixel,
    /// near-transparent animation keeps frames coming while it is taken.
    pub fn screenshot(&self, path: &Path) {
        let ticking = "const done = arguments[0]; const tick = document.createElement('div'); \
            tick.id = 'webdriver-screenshot-tick'; \
            tick.style.cssText = 'position:fixed;left:0;bottom:0;width:1px;height:1px;background:#000;pointer-events:none'; \
            tick.animate([{opacity: 0}, {opacity: 0.01}], {duration: 100, iterations: Infinity}); \
            document.body.append(tick); \
            requestAnimationFrame(() => requestAnimationFrame(() => done(true)));";
        self.post("/execute/async", json!({"script": ticking, "args": []}));
        let encoded = self.get("/screenshot");
        self.post(
            "/execute/sync",
            json!({"script": "document.getElementById('webdriver-screenshot-tick')?.remove()", "args": []}),
        );
        let png = base64::engine::general_purpose::STANDARD
            .decode(encoded.as_str().unwrap_or_default())
            .expect("the screenshot is base64");
        std::fs::write(path, png).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        println!("screenshot: {}", path.display());
    }
}

impl Drop for Session {
    /// Ends the session (which stops the app if it still runs), with a
    /// screenshot first when the test is failing.
    fn drop(&mut self) {
        if std::thread::panicking() {
            let shot = self.http.get(format!("{}/screenshot", self.base)).send().and_then(|r| r.json::<Value>());
            let png =
                shot.ok().and_then(|v| base64::engine::general_purpose::STANDARD.decode(v["value"].as_str()?).ok());
            if let Some(png) = png {
                let _ = std::fs::write(&self.on_failure, png);
                eprintln!("screenshot of the failure: {}", self.on_failure.display());
            }
        }
        let _ = self.http.delete(&self.base).send();
    }
}

fn describe(by: &By) -> String {
    let By::Css(selector) = by;
    format!("`{selector}`")
}

/// A find command's body.
fn find(by: &By) -> Value {
    let By::Css(selector) = by;
    json!({"using": "css selector", "value": selector})
}

/// A text property's words, joined by single spaces.
fn words(text: &Value) -> String {
    text.as_str().unwrap_or_default().split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The elements in a find command's answer.
fn elements(found: &Value) -> Vec<Element> {
    found
        .as_array()
        .map(|all| all.iter().filter_map(|e| e[ELEMENT].as_str()).map(|id| Element(id.to_owned())).collect())
        .unwrap_or_default()
}

/// Sends a command and returns its `value`, panicking on a WebDriver error.
fn call(request: reqwest::blocking::RequestBuilder, what: &str) -> Value {
    let (status, body) = send(request, what);
    assert!(status.is_success(), "WebDriver {what}: {status} {body}");
    body["value"].clone()
}

/// The errors of a command that met a navigation: the page it ran in was
/// unloaded ("no such frame: Callback was not called before the unload
/// event"), or an element found a moment before belongs to the old page.
const NAVIGATING: [&str; 2] = ["no such frame", "stale element reference"];

/// Sends a command and returns its `value`, or `None` if it met a
/// navigation; panics on any other WebDriver error.
fn call_unless_navigating(request: reqwest::blocking::RequestBuilder, what: &str) -> Option<Value> {
    let (status, body) = send(request, what);
    if !status.is_success() && NAVIGATING.contains(&body["value"]["error"].as_str().unwrap_or_default()) {
        return None;
    }
    assert!(status.is_success(), "WebDriver {what}: {status} {body}");
    Some(body["value"].clone())
}

fn send(request: reqwest::blocking::RequestBuilder, what: &str) -> (reqwest::StatusCode, Value) {
    let resp = request.send().unwrap_or_else(|e| panic!("WebDriver {what}: {e}"));
    let status = resp.status();
    (status, resp.json().unwrap_or_else(|e| panic!("WebDriver {what}: not JSON ({e})")))
}

/// WebDriver's codes for the keys the tests hold or press.
pub mod keys {
    /// Alt.
    pub const ALT: &str = "\u{E00A}";
    /// Control.
    pub const CONTROL: &str = "\u{E009}";
    /// Enter.
    pub const ENTER: &str = "\u{E007}";
}
