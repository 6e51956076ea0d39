//! The desktop app with a team server, end to end in the real window: a
//! separate `gatehouse serve` is the team server; the reviewer connects the
//! app to it on the connection page (refused tokens and an unreachable
//! address first, each with its message); the header names the team
//! server; an agent's sync gate there shows in the panel and raises a
//! notification, the reviewer approves it in the window and the agent gets
//! the decision. Restarted, the app reconnects with the token from the
//! keychain (a real Secret Service: GNOME Keyring on the test's private
//! session bus). Without its keychain entry, or with the team server down,
//! the app starts on this computer's server with a notice saying so. The
//! reviewer switches back to this computer's server, and that choice
//! holds across a restart. The token is never in a file.
//!
//! The app runs in a home of its own (`HOME` and the XDG directories in the
//! test's temporary directory), and the test fails if any of the app's
//! processes had a file of the real user's open for writing, or was given
//! another home (`isolation`: it watches the app itself, so a Gatehouse
//! running beside the tests, writing its own database, does not matter).
//!
//! Needs what `desktop_window` needs, plus `gnome-keyring-daemon` (Debian:
//! gnome-keyring), `secret-tool` (Debian: libsecret-tools) and the
//! `gatehouse` binary (`cargo build -p gatehouse-cli`, or `GATEHOUSE_BIN`).

mod desktop;
mod harness;
mod isolation;
mod keyring;
mod webdriver;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use desktop::Desktop;
use gatehouse_engine::{Engine, EngineConfig, TokenRole};
use harness::{app_process, artifacts, free_port, Agent};
use isolation::Isolation;
use keyring::Keyring;
use serde_json::json;
use webdriver::{By, Session};

const APP: &str = env!("CARGO_BIN_EXE_gatehouse-desktop");
/// The app's identifier, which names its keychain entries.
const SERVICE: &str = "dev.gatehouse.desktop";
/// The team server's reviewer, as its token names them.
const TEAM_REVIEWER: &str = "team-reviewer";
const WAIT: Duration = Duration::from_secs(20);

/// `gatehouse serve` on a fixed loopback port, stopped when dropped.
struct TeamServer {
    child: Option<Child>,
    port: u16,
}

impl TeamServer {
    fn start(db: &Path, port: u16) -> Self {
        let bin = std::env::var_os("GATEHOUSE_BIN")
            .map(PathBuf::from)
            .unwrap_or_else(|| harness::target_dir().join("debug/gatehouse"));
        assert!(
            bin.is_file(),
            "no gatehouse binary at {}; build it with `cargo build -p gatehouse-cli`",
            bin.display()
        );
        let child = Command::new(&bin)
            .arg("--db")
            .arg(db)
            .args(["serve", "--bind", &format!("127.0.0.1:{port}")])
            .env("GATEHOUSE_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", bin.display()));
        let server = Self { child: Some(child), port };
        let http = reqwest::blocking::Client::new();
        let deadline = Instant::now() + WAIT;
        while http.get(format!("{}/api/hitl/openapi.json", server.url())).send().is_err() {
            assert!(Instant::now() < deadline, "the team server did not come up on port {port}");
            std::thread::sleep(Duration::from_millis(100));
        }
        server
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            harness::stop(&mut child);
        }
    }
}

impl Drop for TeamServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Launches the app (a WebDriver session), waiting until its page shows a server badge.
fn launch(wd: &str) -> Session {
    let window =
        Session::start(wd, json!({"tauri:options": {"application": APP}}), artifacts().join("team-failure.png"));
    window.wait_for(By::Css("[data-testid=server]"), WAIT);
    window
}

/// Ends the session (which kills the app) and waits until the app is gone
/// and its single-instance name free, so the next launch is not handed
/// over to it as a second instance.
fn quit(window: Session, db: &Path, bus: &str) {
    drop(window);
    let deadline = Instant::now() + Duration::from_secs(10);
    while app_process(db).is_some() {
        assert!(Instant::now() < deadline, "the app outlived its WebDriver session");
        std::thread::sleep(Duration::from_millis(50));
    }
    harness::wait_until_released(bus, &format!("{SERVICE}.SingleInstance"), Duration::from_secs(10));
}

fn open_connection_page(window: &Session) {
    let badge = window.wait_for(By::Css("a[data-testid=server]"), WAIT);
    window.click(&badge);
    // Typing waits for the page to know where the window is connected.
    window.wait_for_text(By::Css("[data-testid=connection-current]"), "Reviewing", WAIT);
    let url = window.url();
    assert!(url.starts_with("gatehouse://localhost/"), "the app's own page, not a server's: {url}");
}

/// Fills the team form and submits it.
fn try_team(window: &Session, url: &str, token: &str) {
    let field = window.wait_for(By::Css("[data-testid=team-url]"), WAIT);
    window.type_into(&field, url);
    let field = window.wait_for(By::Css("[data-testid=team-token]"), WAIT);
    window.type_into(&field, token);
    window.click(&window.wait_for(By::Css("[data-testid=team-connect]"), WAIT));
}

fn refused(window: &Session, url: &str, token: &str, says: &str) {
    try_team(window, url, token);
    window.wait_for_text(By::Css("[data-testid=connection-error]"), says, WAIT);
    assert!(window.url().starts_with("gatehouse://"), "a refused connection stays on the page");
}

fn on_team(window: &Session, team: &TeamServer) {
    window.wait_for_url(&team.url(), WAIT);
    window.wait_for_text(By::Css("[data-testid=server]"), &format!("Team: 127.0.0.1:{}", team.port), WAIT);
    window.wait_for_text(By::Css("[data-testid=connection]"), "Live", WAIT);
}

fn on_this_computer(window: &Session, notice: bool) {
    window.wait_for_text(By::Css("[data-testid=server]"), "This computer", WAIT);
    window.wait_for_text(By::Css("[data-testid=connection]"), "Live", WAIT);
    let shown = window.find_all(&By::Css("[data-testid=server-notice]"));
    if notice {
        let text = window.text(&shown.into_iter().next().expect("the fallback notice"));
        assert!(text.contains("Could not connect to your team server"), "{text}");
    } else {
        assert!(shown.is_empty(), "no notice is due");
    }
}

/// Every file under `dir` whose bytes contain `secret`.
fn files_holding(dir: &Path, secret: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut todo = vec![dir.to_owned()];
    while let Some(dir) = todo.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                todo.push(path);
            } else if std::fs::read(&path).is_ok_and(|b| b.windows(secret.len()).any(|w| w == secret.as_bytes())) {
                found.push(path);
            }
        }
    }
    found
}

#[test]
fn the_app_reviews_a_team_server_reconnects_from_the_keychain_and_falls_back_to_this_computer() {
    let home = tempfile::tempdir().expect("a temp dir");
    let db = home.path().join("desktop.db");
    let isolation = Isolation::watch(&db, home.path());

    // The team server's tokens, made in its database before it starts.
    let team_db = home.path().join("team/gatehouse.db");
    std::fs::create_dir_all(team_db.parent().expect("a parent")).expect("the team's directory");
    let (reviewer_token, agent_token) = {
        let engine = Engine::open(&team_db, EngineConfig::default()).expect("the team database");
        let reviewer = engine.create_token(TEAM_REVIEWER, TokenRole::Reviewer, "team test").expect("a token").1;
        (reviewer, engine.create_token("bot", TokenRole::Agent, "team test").expect("a token").1)
    };
    let team_port = free_port();
    let mut team = TeamServer::start(&team_db, team_port);

    // One private session bus: notifications, the keychain, one instance.
    let desktop = Desktop::start();
    let keyring = Keyring::start(desktop.address(), &home.path().join("keyring"));
    let (_driver, wd) =
        harness::start_driver(home.path(), &db, desktop.address(), "desktop-user", &[("GATEHOUSE_NO_WELCOME", "true")]);

    // A first start: this computer's server, no notice.
    let window = launch(&wd);
    on_this_computer(&window, false);
    open_connection_page(&window);
    window.wait_for_text(By::Css("[data-testid=connection-current]"), "This computer", WAIT);

    // Wrong tokens and an address where nothing listens, each told apart.
    refused(&window, &team.url(), "not-a-token", "does not accept this token");
    refused(&window, &team.url(), &agent_token, "agent's token");
    let nobody = format!("http://127.0.0.1:{}", free_port());
    refused(&window, &nobody, &reviewer_token, "Cannot reach");
    refused(&window, &format!("{}/gatehouse", team.url()), &reviewer_token, "answers at the root");
    window.screenshot(&artifacts().join("desktop-connection.png"));

    // The right one: the window moves to the team server's reviews.
    try_team(&window, &team.url(), &reviewer_token);
    on_team(&window, &team);
    window.screenshot(&artifacts().join("desktop-team.png"));

    // The token is in the keychain under the server's address, and in no file.
    assert_eq!(keyring.lookup(SERVICE, &team.url()).as_deref(), Some(reviewer_token.as_str()));
    let settings = std::fs::read_to_string(home.path().join("config/dev.gatehouse.desktop/connection.json"))
        .expect("the connection settings");
    let settings: serde_json::Value = serde_json::from_str(&settings).expect("JSON settings");
    assert_eq!(settings, json!({"server": "team", "team_url": team.url()}));
    assert_eq!(files_holding(home.path(), &reviewer_token), Vec::<PathBuf>::new(), "the token leaked into a file");

    // An agent's gate on the team server: in the panel, notified, decided here.
    let agent = Agent { http: reqwest::blocking::Client::new(), base: team.url(), token: agent_token.clone() };
    let run = agent.post("/run", json!({"run_input": {"prompt": "ship"}, "title": "team e2e"}));
    let run_id = run["run_id"].as_str().expect("a run id");
    let opened = agent.post(
        &format!("/runs/{run_id}/gates"),
        json!({"kind": "approval", "action": "deploy", "mode": "sync", "text": "Deploy release 7 to the team's cluster?"}),
    );
    let gate_id = opened["gate_id"].as_str().expect("a gate id").to_owned();
    let waiting = agent.wait_for(&gate_id);
    let row = window.wait_for(By::Css(&format!("[data-testid=blocker-row][data-gate-id='{gate_id}']")), WAIT);
    desktop.wait_for("Deploy release 7", WAIT);
    window.click(&row);
    window.wait_for_text(By::Css("[data-testid=gate-text]"), "Deploy release 7", WAIT);
    window.approve_open_gate();
    let decided = waiting.join().expect("the agent's thread");
    assert_eq!(decided["status"], "resolved", "{decided}");
    assert_eq!(decided["decision"]["action"], "approve", "{decided}");
    assert_eq!(decided["decision"]["decided_by"], TEAM_REVIEWER, "decided with the team's token: {decided}");
    quit(window, &db, desktop.address());

    // Restarted: back on the team server with the keychain's token.
    let window = launch(&wd);
    on_team(&window, &team);
    assert!(window.find_all(&By::Css("[data-testid=server-notice]")).is_empty(), "no notice is due");
    quit(window, &db, desktop.address());

    // The keychain entry removed: this computer's server, with a notice.
    keyring.clear(SERVICE, &team.url());
    let window = launch(&wd);
    on_this_computer(&window, true);
    window.screenshot(&artifacts().join("desktop-fallback.png"));
    open_connection_page(&window);
    window.wait_for_text(By::Css("[data-testid=connection-notice]"), "holds no token", WAIT);
    let offered = window.wait_for(By::Css("[data-testid=team-url]"), WAIT);
    assert_eq!(window.value(&offered), team.url(), "the team server is offered again");
    try_team(&window, &team.url(), &reviewer_token);
    on_team(&window, &team);

    // Back to this computer from the team server, and to the team again
    // with the token the keychain kept (the field left empty).
    open_connection_page(&window);
    window.wait_for_text(By::Css("[data-testid=connection-current]"), "Team: 127.0.0.1", WAIT);
    window.click(&window.wait_for(By::Css("[data-testid=use-this-computer]"), WAIT));
    window.wait_for_url("http://127.0.0.1:", WAIT);
    on_this_computer(&window, false);
    assert!(!window.url().starts_with(&team.url()), "{}", window.url());
    open_connection_page(&window);
    try_team(&window, &team.url(), "");
    on_team(&window, &team);
    quit(window, &db, desktop.address());

    // The team server down: this computer's server, with a notice.
    team.stop();
    let window = launch(&wd);
    on_this_computer(&window, true);
    window.click(&window.wait_for(By::Css("[data-testid=server-notice-connection]"), WAIT));
    window.wait_for_text(By::Css("[data-testid=connection-notice]"), "Cannot reach", WAIT);
    window.click(&window.wait_for(By::Css("[data-testid=use-this-computer]"), WAIT));
    on_this_computer(&window, false);
    quit(window, &db, desktop.address());

    // That choice holds: this computer's server, no notice, nothing tried.
    let window = launch(&wd);
    on_this_computer(&window, false);
    window.screenshot(&artifacts().join("desktop-this-computer.png"));
    quit(window, &db, desktop.address());
    assert_eq!(
        keyring.lookup(SERVICE, &team.url()).as_deref(),
        Some(reviewer_token.as_str()),
        "switching back keeps the token"
    );

    // The token revoked on the team server while the app reviews it: the
    // app says so in a notification (the tray reads "Token refused").
    let mut team = TeamServer::start(&team_db, team_port);
    let window = launch(&wd);
    on_this_computer(&window, false);
    open_connection_page(&window);
    try_team(&window, &team.url(), "");
    on_team(&window, &team);
    Engine::open(&team_db, EngineConfig::default())
        .expect("the team database")
        .revoke_token(TEAM_REVIEWER, "team test")
        .expect("the reviewer's token revoked");
    let refused_note = desktop.wait_for("refused Gatehouse's token", WAIT);
    desktop.click(&refused_note);
    window.wait_for_text(By::Css("[data-testid=connection-current]"), "Team: 127.0.0.1", WAIT);
    quit(window, &db, desktop.address());
    team.stop();

    drop(team);
    isolation.assert_kept();
}
