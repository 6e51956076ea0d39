//! The tray icon, end to end, as a desktop's panel sees it: the app's
//! StatusNotifierItem registers with a stand-in tray host on a private
//! session bus; its menu (read over `com.canonical.dbusmenu`) and the label
//! beside the icon follow the pending count as agents open gates and the
//! reviewer decides them; its entries do what they say: Connection… shows
//! the connection page, Open Gatehouse brings back the window its close
//! button hid (the app serving agents meanwhile) and Quit Gatehouse ends the
//! app, revoking the window's token.
//!
//! Needs what `desktop_window` needs.

mod desktop;
mod harness;
mod isolation;
mod webdriver;

use std::path::Path;
use std::time::{Duration, Instant};

use desktop::Desktop;
use gatehouse_engine::{Engine, EngineConfig, TokenRole};
use harness::{app_process, artifacts, Agent};
use isolation::Isolation;
use serde_json::json;
use webdriver::{By, Session};

const APP: &str = env!("CARGO_BIN_EXE_gatehouse-desktop");
const REVIEWER: &str = "tray-reviewer";
const WAIT: Duration = Duration::from_secs(20);

#[test]
fn the_tray_menu_follows_the_pending_count_and_its_entries_act() {
    let home = tempfile::tempdir().expect("a temp dir");
    let db = home.path().join("gatehouse.db");
    let agent_token = {
        let engine = Engine::open(&db, EngineConfig::default()).expect("the test database");
        engine.create_token("bot", TokenRole::Agent, "tray test").expect("an agent token").1
    };

    let isolation = Isolation::watch(&db, home.path());
    let desktop = Desktop::start();
    let (_driver, wd) = harness::start_driver(home.path(), &db, desktop.address(), REVIEWER, &[]);
    let window =
        Session::start(&wd, json!({"tauri:options": {"application": APP}}), artifacts().join("tray-failure.png"));
    window.wait_for_text(By::Css("[data-testid=connection]"), "Live", WAIT);

    // The menu as a panel shows it: the count (a line, not an action),
    // a separator, then the three actions.
    desktop.wait_for_menu_entry("No pending gates", WAIT);
    let menu = desktop.tray_menu();
    let labels: Vec<&str> = menu.iter().map(|e| e.label.as_str()).collect();
    assert_eq!(labels, ["No pending gates", "", "Open Gatehouse", "Connection…", "Quit Gatehouse"], "{menu:?}");
    assert!(!menu[0].enabled, "the count line is not clickable: {menu:?}");
    assert!(menu[1].separator, "{menu:?}");
    assert!(menu[2..].iter().all(|e| e.enabled), "{menu:?}");
    assert_eq!(desktop.tray_label(), "", "no label beside the icon while nothing waits");

    // Agents open gates: the count follows, in the menu and beside the icon.
    let origin = window.url().split('/').take(3).collect::<Vec<_>>().join("/");
    let agent = Agent { http: reqwest::blocking::Client::new(), base: origin, token: agent_token };
    let run = agent.post("/run", json!({"run_input": {"prompt": "tidy up"}, "title": "tray e2e"}));
    let run_id = run["run_id"].as_str().expect("a run id").to_owned();
    let first = agent.post(
        &format!("/runs/{run_id}/gates"),
        json!({"kind": "approval", "action": "delete_branch", "mode": "sync", "text": "Delete branch old-ui?"}),
    );
    desktop.wait_for_menu_entry("1 pending gate", WAIT);
    assert_eq!(desktop.tray_label(), "1");
    agent.post(
        &format!("/runs/{run_id}/gates"),
        json!({"kind": "question", "mode": "async", "text": "Keep the changelog entry?"}),
    );
    desktop.wait_for_menu_entry("2 pending gates", WAIT);
    assert_eq!(desktop.tray_label(), "2");

    // The reviewer decides one in the window: the count goes down.
    let first_id = first["gate_id"].as_str().expect("a gate id");
    let row = window.wait_for(By::Css(&format!("[data-testid=blocker-row][data-gate-id='{first_id}']")), WAIT);
    window.click(&row);
    window.wait_for_text(By::Css("[data-testid=gate-text]"), "Delete branch old-ui?", WAIT);
    window.approve_open_gate();
    desktop.wait_for_menu_entry("1 pending gate", WAIT);
    assert_eq!(desktop.tray_label(), "1");

    // Connection… shows the connection page in the window.
    desktop.click_menu_entry("Connection…");
    window.wait_for_url("gatehouse://", WAIT);
    window.wait_for_text(By::Css("[data-testid=connection-current]"), "This computer", WAIT);

    // Closing the window hides it and the app keeps serving agents; Open
    // Gatehouse brings it back.
    // Connection… brought the window up first (show, unminimise, focus), and
    // on a loaded machine GTK may still be carrying that out when the close
    // arrives, showing the window again after it hid; a person would close
    // it again, and so does the test, until it is hidden or WAIT passes.
    let visibility = "return document.visibilityState";
    let closing = Instant::now();
    loop {
        desktop.close_window("Gatehouse");
        let hidden = || window.script(visibility) == json!("hidden");
        let settle = Instant::now();
        while !hidden() && settle.elapsed() < Duration::from_secs(3) {
            std::thread::sleep(Duration::from_millis(50));
        }
        if hidden() || closing.elapsed() > WAIT {
            break;
        }
    }
    window.wait_for_script(visibility, &json!("hidden"), WAIT);
    agent.post(&format!("/runs/{run_id}/gates"), json!({"kind": "question", "mode": "async", "text": "Squash?"}));
    desktop.wait_for_menu_entry("2 pending gates", WAIT);
    desktop.click_menu_entry("Open Gatehouse");
    window.wait_for_script(visibility, &json!("visible"), WAIT);
    window.screenshot(&artifacts().join("tray-open.png"));

    // Quit Gatehouse ends the app the way SIGTERM does: the window's token
    // is revoked before it goes.
    let app = app_process(&db).expect("the app's process");
    desktop.click_menu_entry("Quit Gatehouse");
    let deadline = Instant::now() + WAIT;
    while Path::new(&format!("/proc/{app}")).exists() {
        assert!(Instant::now() < deadline, "the app was still running {WAIT:?} after Quit");
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(window);
    let engine = Engine::open(&db, EngineConfig::default()).expect("the test database");
    let tokens = engine.tokens().expect("the tokens");
    let window_token = tokens.iter().find(|t| t.name == REVIEWER).expect("the window's token");
    assert!(window_token.revoked_at.is_some(), "the window's token outlived Quit: {window_token:?}");
    isolation.assert_kept();
}
