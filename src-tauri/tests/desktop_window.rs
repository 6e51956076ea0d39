//! The real desktop window, end to end: tauri-driver and WebKitWebDriver
//! launch the built app on a temporary database and temporary data
//! directories; an agent opens a sync gate over HTTP and waits on it; the
//! gate shows in the window's panel; the reviewer opens it with a click and
//! approves it with the `a` key; the agent's long poll returns the decision.
//! Each sync gate raises a desktop notification, each of a burst its own
//! (received by a stand-in notification server on a private session bus),
//! and clicking one opens its gate in the window. An export of the run's recording ends in the
//! save dialog, answered through `xdotool`. A link in an agent's text, and
//! the page trying to go elsewhere, open in the browser (a stand-in
//! `xdg-open` records them) while the window stays on Gatehouse.
//! Screenshots land in `target/e2e-artifacts/`. The app never reaches the
//! real user's data: it runs in a home of its own, which `isolation`
//! checks on the app's own processes while the test runs.
//!
//! Needs a display (run under `xvfb-run -a`), `dbus-daemon` (Debian: dbus),
//! `WebKitWebDriver` (Debian: webkit2gtk-driver) and `tauri-driver` (`cargo install tauri-driver
//! --locked`); `scripts/test.sh` provides all three. Built only with
//! `--features e2e`, so a plain `cargo test --workspace` needs no display.

mod desktop;
mod harness;
mod isolation;
mod webdriver;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use desktop::Desktop;
use gatehouse_engine::{Engine, EngineConfig, TokenRole};
use harness::{answer_save_dialog, app_process, artifacts, Agent};
use isolation::Isolation;
use serde_json::json;
use webdriver::{By, Session};

const APP: &str = env!("CARGO_BIN_EXE_gatehouse-desktop");
/// The login name the app runs under here, which names its reviewer token.
const REVIEWER: &str = "e2e-reviewer";

#[test]
fn a_gate_sent_by_an_agent_is_decided_in_the_desktop_window_and_the_agent_gets_the_decision() {
    let home = tempfile::tempdir().expect("a temp dir");
    let db = home.path().join("gatehouse.db");
    let isolation = Isolation::watch(&db, home.path());

    // The agent's token, made directly in the database the app will open.
    let agent_token = {
        let engine = Engine::open(&db, EngineConfig::default()).expect("the test database");
        engine.create_token("bot", TokenRole::Agent, "desktop test").expect("an agent token").1
    };

    // A private session bus with a notification server on it: the app's
    // notifications land there, and a Gatehouse the developer is running
    // cannot take this launch over as a second instance.
    let desktop = Desktop::start();
    // The reviewer's browser: a stand-in `xdg-open` first on the app's PATH
    // notes each address it is asked to open.
    let browser_log = home.path().join("opened-in-browser");
    let bin = home.path().join("bin");
    std::fs::create_dir_all(&bin).expect("a bin directory");
    let xdg_open = bin.join("xdg-open");
    std::fs::write(&xdg_open, format!("#!/bin/sh\nprintf '%s\\n' \"$*\" >> '{}'\n", browser_log.display()))
        .expect("the stand-in xdg-open");
    std::fs::set_permissions(&xdg_open, std::os::unix::fs::PermissionsExt::from_mode(0o755)).expect("executable");
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let (_driver, wd) = harness::start_driver(home.path(), &db, desktop.address(), REVIEWER, &[("PATH", &path)]);

    let launched = Instant::now();
    let window =
        Session::start(&wd, json!({"tauri:options": {"application": APP}}), artifacts().join("desktop-failure.png"));
    // The panel is there and the event stream is live: the window is usable.
    window.wait_for(By::Css("[data-testid=blocker-panel]"), Duration::from_secs(20));
    window.wait_for_text(By::Css("[data-testid=connection]"), "Live", Duration::from_secs(20));
    println!("start to interactive through WebDriver: {} ms", launched.elapsed().as_millis());

    let url = window.url();
    assert!(url.starts_with("http://127.0.0.1:"), "the window shows the in-process server's UI: {url}");
    window.wait_for_text(By::Css("[data-testid=server]"), "This computer", Duration::from_secs(5));
    assert!(!url.contains("token="), "the page removed its token from the address: {url}");
    let origin = url.split('/').take(3).collect::<Vec<_>>().join("/");

    let agent = Agent { http: reqwest::blocking::Client::new(), base: origin.clone(), token: agent_token };
    let run = agent.post("/run", json!({"run_input": {"prompt": "ship it"}, "title": "desktop e2e"}));
    let run_id = run["run_id"].as_str().expect("a run id").to_owned();
    let opened = agent.post(
        &format!("/runs/{run_id}/gates"),
        json!({"kind": "approval", "action": "deploy", "mode": "sync",
               "text": "Deploy release 42 to production?", "payload": {"env": "prod", "release": 42}}),
    );
    let gate_id = opened["gate_id"].as_str().expect("a gate id").to_owned();

    // The agent blocks on the decision while the reviewer works.
    let waiting = agent.wait_for(&gate_id);

    let row_selector = format!("[data-testid=blocker-row][data-gate-id='{gate_id}']");
    let row = window.wait_for(By::Css(&row_selector), Duration::from_secs(10));
    let preview = format!("{row_selector} [data-testid=gate-preview]");
    window.wait_for_text(By::Css(&preview), "Deploy release 42", Duration::from_secs(5));
    window.wait_for_text(By::Css("[data-testid=blocker-count]"), "1", Duration::from_secs(5));
    let first = desktop.wait_for("Deploy release 42", Duration::from_secs(10));
    assert!(first.actions.iter().any(|a| a == "default"), "a click on the notification is an action: {first:?}");
    window.screenshot(&artifacts().join("desktop.png"));

    window.click(&row);
    window.wait_for_text(By::Css("[data-testid=gate-text]"), "Deploy release 42", Duration::from_secs(10));
    window.approve_open_gate();

    let decided = waiting.join().expect("the agent's thread");
    assert_eq!(decided["id"], gate_id.as_str(), "{decided}");
    assert_eq!(decided["status"], "resolved", "{decided}");
    assert_eq!(decided["decision"]["action"], "approve", "{decided}");
    assert_eq!(decided["decision"]["origin"]["by"], "human", "{decided}");
    assert_eq!(decided["decision"]["decided_by"], REVIEWER, "the window's own reviewer token decided: {decided}");

    window.wait_for(By::Css("[data-testid=blocker-empty]"), Duration::from_secs(10));
    window.screenshot(&artifacts().join("desktop-decided.png"));

    // An async gate raises no notification; a sync one does, and clicking
    // it opens that gate in the window.
    let quiet = agent.post(
        &format!("/runs/{run_id}/gates"),
        json!({"kind": "question", "mode": "async", "text": "Anything to add to the changelog?"}),
    );
    let second = agent.post(
        &format!("/runs/{run_id}/gates"),
        json!({"kind": "question", "mode": "sync", "text": "Which region should the canary use?"}),
    );
    let second_id = second["gate_id"].as_str().expect("a gate id");
    window.wait_for(By::Css(&format!("[data-gate-id='{second_id}']")), Duration::from_secs(10));
    window.wait_for(
        By::Css(&format!("[data-gate-id='{}']", quiet["gate_id"].as_str().unwrap_or("?"))),
        Duration::from_secs(10),
    );
    let notification = desktop.wait_for("Which region", Duration::from_secs(10));
    assert!(
        !desktop.shown().iter().any(|n| n.body.contains("changelog") || n.summary.contains("changelog")),
        "an async gate raised a notification: {:?}",
        desktop.shown()
    );
    desktop.click(&notification);
    window.wait_for_text(By::Css("[data-testid=gate-text]"), "Which region", Duration::from_secs(10));
    assert!(!window.url().contains("gate="), "the link was dropped from the address: {}", window.url());

    // A burst of sync gates: every one gets a notification of its own.
    for i in 1..=6 {
        agent.post(
            &format!("/runs/{run_id}/gates"),
            json!({"kind": "approval", "action": "restart", "mode": "sync", "text": format!("Restart worker {i}?")}),
        );
    }
    for i in 1..=6 {
        let shown = desktop.wait_for(&format!("Restart worker {i}?"), Duration::from_secs(10));
        assert!(shown.actions.iter().any(|a| a == "default"), "a click opens the gate: {shown:?}");
    }
    assert!(
        !desktop.shown().iter().any(|n| n.summary.contains("more agents")),
        "a burst was folded into a summary: {:?}",
        desktop.shown()
    );

    // Exporting the run's recording (Runs view, `e`) ends in the system's
    // save dialog: saved where the reviewer types, or nothing at all when
    // they cancel; the staged copy is gone either way.
    window.press("\u{E00C}"); // Escape closes the open gate
    window.press("2");
    let run_row =
        window.wait_for(By::Css(&format!("[data-testid=run-row][data-run-id='{run_id}']")), Duration::from_secs(10));
    window.click(&run_row);
    window.wait_for_text(By::Css("[data-testid=run-title]"), "desktop e2e", Duration::from_secs(10));
    let saved_to = home.path().join("exports/Release 42.json");
    std::fs::create_dir_all(saved_to.parent().expect("a folder")).expect("the exports folder");
    window.press("e");
    answer_save_dialog("Save recording", Some(&saved_to), Duration::from_secs(20));
    let deadline = Instant::now() + Duration::from_secs(10);
    while !saved_to.is_file() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    let recording: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&saved_to).expect("the recording was saved where the dialog said"))
            .expect("the saved recording is JSON");
    assert_eq!(recording["runs"][0]["run"]["id"], run_id.as_str(), "the selected run's recording was saved");
    window.wait_for_text(
        By::Css("[data-testid=runs-notice]"),
        "Exported gatehouse-run-desktop-e2e-",
        Duration::from_secs(5),
    );
    window.press("e");
    answer_save_dialog("Save recording", None, Duration::from_secs(20));
    let staging = home.path().join("cache/dev.gatehouse.desktop/exports");
    let deadline = Instant::now() + Duration::from_secs(10);
    while staged_files(&staging) > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(staged_files(&staging), 0, "a staged export was left behind in {}", staging.display());
    assert_eq!(std::fs::read_dir(saved_to.parent().unwrap()).unwrap().count(), 1, "a cancelled export saved a file");

    // A link in an agent's text opens in the browser; the window stays on
    // the gate. So does the page itself trying to go elsewhere.
    window.press("1");
    let linked = agent.post(
        &format!("/runs/{run_id}/gates"),
        json!({"kind": "question", "mode": "async", "text": "Read [the runbook](https://wiki.example.com/runbook) first. Which region?"}),
    );
    let linked_row = window.wait_for(
        By::Css(&format!("[data-gate-id='{}']", linked["gate_id"].as_str().unwrap_or("?"))),
        Duration::from_secs(10),
    );
    window.click(&linked_row);
    let link = window.wait_for(By::Css("[data-testid=gate-text] a"), Duration::from_secs(10));
    window.click(&link);
    let browsed = wait_for_line(&browser_log, "https://wiki.example.com/runbook", Duration::from_secs(10));
    assert_eq!(browsed, ["https://wiki.example.com/runbook"], "the link went to the browser, once");
    window.script("window.location.href = 'https://wiki.example.com/elsewhere'; return null;");
    wait_for_line(&browser_log, "https://wiki.example.com/elsewhere", Duration::from_secs(10));
    window.script("window.location.href = 'file:///etc/passwd'; return null;");
    std::thread::sleep(Duration::from_millis(500));
    assert!(window.url().starts_with(&origin), "the window left Gatehouse: {}", window.url());
    window.wait_for_text(By::Css("[data-testid=gate-text]"), "Which region?", Duration::from_secs(5));
    let browsed = std::fs::read_to_string(&browser_log).unwrap_or_default();
    assert!(!browsed.contains("file:"), "a file address was handed to the browser: {browsed}");

    // Quitting (SIGTERM, as a session's logout sends) revokes the window's
    // token and saves the window's size and place. Ending the WebDriver
    // session instead would kill the app outright.
    let app = app_process(&db).expect("the app's process");
    assert!(Command::new("kill").args(["-TERM", &app.to_string()]).status().is_ok_and(|s| s.success()));
    let deadline = Instant::now() + Duration::from_secs(10);
    while Path::new(&format!("/proc/{app}")).exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let engine = Engine::open(&db, EngineConfig::default()).expect("the test database");
    let tokens = engine.tokens().expect("the tokens");
    let window_token = tokens.iter().find(|t| t.name == REVIEWER).expect("the window's token");
    assert_eq!(window_token.role, TokenRole::Reviewer);
    assert!(window_token.revoked_at.is_some(), "the window's token outlived the app: {window_token:?}");
    let saved = home.path().join("config/dev.gatehouse.desktop/.window-state.json");
    assert!(saved.is_file(), "the window's size and place were not saved to {}", saved.display());
    drop(window);

    isolation.assert_kept();
}

/// Waits up to `limit` for `file` to hold the line `wanted`; returns its lines.
fn wait_for_line(file: &Path, wanted: &str, limit: Duration) -> Vec<String> {
    let deadline = Instant::now() + limit;
    loop {
        let lines: Vec<String> = std::fs::read_to_string(file).unwrap_or_default().lines().map(str::to_owned).collect();
        if lines.iter().any(|l| l == wanted) {
            return lines;
        }
        assert!(Instant::now() < deadline, "{wanted} was not opened in the browser within {limit:?}: {lines:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Files left in the app's export staging directory.
fn staged_files(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    entries.flatten().map(|e| if e.path().is_dir() { staged_files(&e.path()) } else { 1 }).sum()
}
