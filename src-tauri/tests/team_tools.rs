//! A bad team-tools file, end to end in the real window: the app started
//! with `GATEHOUSE_TEAM_TOOLS` naming a file with a mistake in it starts all
//! the same, and its window says, under the header, that the team tools
//! were not loaded, naming the file, the field and the line at fault (a
//! person who starts the app from a menu never sees stderr). The server
//! goes on without those tools: a team run naming one is refused at start.
//!
//! Needs what `desktop_window` needs.

mod desktop;
mod harness;
mod isolation;
mod webdriver;

use std::time::Duration;

use desktop::Desktop;
use gatehouse_engine::{Engine, EngineConfig, TokenRole};
use harness::artifacts;
use isolation::Isolation;
use serde_json::json;
use webdriver::{By, Session};

const APP: &str = env!("CARGO_BIN_EXE_gatehouse-desktop");
const REVIEWER: &str = "tools-reviewer";
const WAIT: Duration = Duration::from_secs(20);

#[test]
fn a_bad_team_tools_file_is_named_in_the_window_and_the_app_goes_on_without_its_tools() {
    let home = tempfile::tempdir().expect("a temp dir");
    let db = home.path().join("gatehouse.db");
    let agent_token = {
        let engine = Engine::open(&db, EngineConfig::default()).expect("the test database");
        engine.create_token("bot", TokenRole::Agent, "team tools test").expect("an agent token").1
    };
    let file = home.path().join("tools.yaml");
    std::fs::write(&file, "commands:\n  - {name: lint, command: [cargo, clippy], shell: bash}\n").expect("the file");

    let isolation = Isolation::watch(&db, home.path());
    let desktop = Desktop::start();
    let tools = file.display().to_string();
    let env = [("GATEHOUSE_TEAM_TOOLS", tools.as_str())];
    let (_driver, wd) = harness::start_driver(home.path(), &db, desktop.address(), REVIEWER, &env);
    let window =
        Session::start(&wd, json!({"tauri:options": {"application": APP}}), artifacts().join("team-tools-failure.png"));
    window.wait_for(By::Css("[data-testid=blocker-panel]"), WAIT);

    let said = format!("Team tools not loaded: {tools} is not a toolbox file: commands[0]: unknown field `shell`");
    let notice = window.wait_for_text(By::Css("[data-testid=team-tools-notice]"), &said, WAIT);
    let text = window.text(&notice);
    assert!(text.contains("at line 2"), "the line at fault: {text}");
    window.screenshot(&artifacts().join("team-tools-notice.png"));

    // The app serves without the file's tools: a team run naming one is refused at start.
    let origin = window.url().split('/').take(3).collect::<Vec<_>>().join("/");
    let refused = reqwest::blocking::Client::new()
        .post(format!("{origin}/api/hitl/run"))
        .bearer_auth(&agent_token)
        .json(&json!({"run_input": {"prompt": "lint it", "team": [
            {"name": "coder", "role": "coder", "provider": "scripted", "model": "chat", "tools": ["lint"]}]}}))
        .send()
        .expect("the server answers");
    assert_eq!(refused.status().as_u16(), 422);
    let body: serde_json::Value = refused.json().expect("a JSON error");
    assert_eq!(body["field"], "run_input.team[0].tools[0]", "{body}");
    assert!(body["message"].as_str().unwrap_or_default().contains("the team tools were not loaded"), "{body}");

    // Dismissed, it leaves the page.
    let dismiss = window.wait_for(By::Css("[data-testid=team-tools-notice-dismiss]"), WAIT);
    window.click(&dismiss);
    let gone = "return document.querySelector('[data-testid=team-tools-notice]') === null";
    window.wait_for_script(gone, &json!(true), WAIT);
    isolation.assert_kept();
}
