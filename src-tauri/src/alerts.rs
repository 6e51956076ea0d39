//! Follows the reviewed server's events (this computer's or a team
//! server's, over the same HTTP API): after each burst of gate events the
//! tray shows the new pending count, and each new sync gate raises a native
//! notification whose click opens that gate in the window; each alert the
//! server raises (a threshold crossed) raises one over its message, whose
//! click opens the Metrics view, where alerts are. A dropped stream
//! is opened again where it left off, after a growing pause. The server is
//! read through `gatehouse-client`, as the CLI and `gatehouse mcp` read it.

use std::time::Duration;

use gatehouse_client::{ApiErrorCode, Client, ClientError};
use gatehouse_engine::{BlockingMode, Event, EventKind, Gate};
use tauri::async_runtime::JoinHandle;
use tauri::{AppHandle, Manager, Runtime};
use tauri_plugin_notification::NotificationExt;

use crate::connection::server::Server;
use crate::tray::Tray;
use crate::window;

/// The notification's extra field naming its gate.
const GATE_ID: &str = "gate_id";
/// The notification's extra field asking for the connection page on a click.
const CONNECTION: &str = "connection";
/// The notification's extra field naming the desk's view its click opens.
const VIEW: &str = "view";
/// The view an alert's notification opens.
const ALERTS_VIEW: &str = "metrics";

/// Where a clicked notification leads on the reviewed server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Link<'a> {
    /// One gate, by id.
    Gate(&'a str),
    /// One of the desk's views, by name.
    View(&'a str),
}

/// The longest pause before opening a dropped stream again.
const MAX_PAUSE: Duration = Duration::from_secs(30);

/// Opens the clicked notification's gate or view; `url_of` makes its
/// address (on whichever server is reviewed when it is clicked).
pub fn open_gates_on_click<R: Runtime>(
    app: &AppHandle<R>,
    url_of: impl Fn(Link<'_>) -> Option<String> + Send + Sync + 'static,
) {
    let handle = app.clone();
    let registered = app.notification().on_action(move |performed| {
        let extra = performed.notification().map(|n| n.extra());
        if extra.is_some_and(|extra| extra.contains_key(CONNECTION)) {
            return window::show_connection_page(&handle);
        }
        let field = |name: &str| extra.and_then(|extra| extra.get(name)).and_then(|v| v.as_str());
        let link = field(GATE_ID).map(Link::Gate).or_else(|| field(VIEW).map(Link::View));
        match link.and_then(&url_of) {
            Some(url) => window::show_gate(&handle, &url),
            None => window::bring_up(&handle),
        }
    });
    if let Err(e) = registered {
        tracing::warn!(error = %e, "notification clicks will not open gates");
    }
}

/// Why following a server stopped.
#[derive(Debug)]
enum FeedError {
    /// The server no longer accepts the token (401): retrying cannot help.
    TokenRefused,
    /// Anything else: the network, the server's status, its answer.
    Other(String),
}

impl From<ClientError> for FeedError {
    fn from(e: ClientError) -> Self {
        match e {
            ClientError::Api(e) if e.code == ApiErrorCode::Unauthorized => Self::TokenRefused,
            other => {
                let cause = std::error::Error::source(&other).map(|c| format!(": {c}")).unwrap_or_default();
                Self::Other(format!("{other}{cause}"))
            }
        }
    }
}

/// Follows `server` until the task is aborted (the app switched servers)
/// or the server refuses the token, keeping the tray current and notifying
/// new sync gates.
pub fn follow<R: Runtime>(app: AppHandle<R>, http: reqwest::Client, server: Server) -> JoinHandle<()> {
    tauri::async_runtime::spawn(async move {
        let client = match server.origin.parse() {
            Ok(base) => Client::with_http(http, base, server.token()),
            Err(e) => {
                tracing::warn!(server = %server.origin, error = %e, "the server's address is not a URL; nothing is followed");
                return;
            }
        };
        // Counted first, then followed from the count's head: nothing
        // committed in between is missed, nothing older is notified.
        let mut after = None;
        let mut pause = Duration::from_millis(500);
        loop {
            match follow_once(&app, &client, &server, &mut after).await {
                Ok(()) => pause = Duration::from_millis(500),
                Err(FeedError::TokenRefused) => {
                    tracing::warn!(server = %server.origin, "the server refused the token; the tray's count stops");
                    refused(&app, &server);
                    return;
                }
                Err(FeedError::Other(why)) => {
                    tracing::warn!(server = %server.origin, "cannot follow the server's events: {why}");
                }
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(MAX_PAUSE);
        }
    })
}

/// Counts, then follows the stream until it ends or fails.
async fn follow_once<R: Runtime>(
    app: &AppHandle<R>,
    client: &Client,
    server: &Server,
    after: &mut Option<u64>,
) -> Result<(), FeedError> {
    let pending = client.pending().await?;
    show_count(app, server, pending.total);
    let mut stream = client.events(*after.get_or_insert(pending.head_seq)).await?;
    while let Some(gatehouse_client::Burst { events: burst, last_seq }) = stream.next_burst().await? {
        if let Some(last) = last_seq {
            *after = Some(last);
        }
        let new_sync: Vec<&Gate> = burst.iter().filter_map(|e| new_sync_gate(&e.body.kind)).collect();
        notify(app, &new_sync, "is waiting for you");
        // Escalations (nobody answered in time) whatever the gate's mode.
        let mut escalated = Vec::new();
        for event in &burst {
            if let EventKind::GateEscalated { gate_id, .. } = &event.body.kind {
                match client.gate(gate_id).await {
                    Ok(gate) => escalated.push(gate),
                    Err(e) => tracing::warn!(error = %e, "cannot read an escalated gate"),
                }
            }
        }
        notify(app, &escalated.iter().collect::<Vec<_>>(), "escalated: still waiting for you");
        notify_alerts(app, &burst);
        // A burst this app could not read may still have moved the count.
        if burst.is_empty() || burst.iter().any(touches_gates) {
            show_count(app, server, client.pending().await?.total);
        }
    }
    Ok(())
}

/// Tells the reviewer, in the tray and a notification that opens the
/// connection page, that the server no longer takes the app's token (revoked
/// on the team server, say): nothing is followed until they give a new one.
fn refused<R: Runtime>(app: &AppHandle<R>, server: &Server) {
    if let Some(tray) = app.try_state::<Tray<R>>() {
        tray.show_refused(&server.label());
    }
    let shown = app
        .notification()
        .builder()
        .title(format!("{} refused Gatehouse's token", server.label()))
        .body(
            "It was revoked or has expired. Open Connection… to give a new one; until then new gates are not counted.",
        )
        .extra(CONNECTION, true)
        .show();
    if let Err(e) = shown {
        tracing::warn!(error = %e, "cannot show a notification");
    }
}

fn show_count<R: Runtime>(app: &AppHandle<R>, server: &Server, count: u64) {
    if let Some(tray) = app.try_state::<Tray<R>>() {
        tray.show_pending(count, &server.label());
    }
}

/// The gate, when this event opened one an agent waits on.
fn new_sync_gate(kind: &EventKind) -> Option<&Gate> {
    match kind {
        EventKind::GateOpened { gate } if gate.mode == BlockingMode::Sync => Some(gate),
        _ => None,
    }
}

fn touches_gates(event: &Event) -> bool {
    matches!(
        event.body.kind,
        EventKind::GateOpened { .. }
            | EventKind::GateEscalated { .. }
            | EventKind::GateResolved { .. }
            | EventKind::GateExpired { .. }
            | EventKind::GateCancelled { .. }
    )
}

/// One notification per gate, however many arrive at once (a sync gate
/// holds its agent until someone answers, so none is folded into a
/// summary): each names its agent and gate, and a click opens that gate.
fn notify<R: Runtime>(app: &AppHandle<R>, gates: &[&Gate], what: &str) {
    for note in notes(gates, what) {
        let shown = app.notification().builder().title(note.title).body(note.body).extra(GATE_ID, note.gate_id).show();
        if let Err(e) = shown {
            tracing::warn!(error = %e, "cannot show a notification");
        }
    }
}

/// One notification per alert raised in `burst`, over its message.
fn notify_alerts<R: Runtime>(app: &AppHandle<R>, burst: &[Event]) {
    for (title, body) in alert_notes(burst) {
        if let Err(e) = app.notification().builder().title(title).body(body).extra(VIEW, ALERTS_VIEW).show() {
            tracing::warn!(error = %e, "cannot show a notification");
        }
    }
}

/// The notifications the alerts raised in `events` call for: title and body.
fn alert_notes(events: &[Event]) -> Vec<(String, String)> {
    events
        .iter()
        .filter_map(|e| match &e.body.kind {
            EventKind::AlertRaised { alert } => Some(("Gatehouse alert".to_owned(), plain(&alert.message))),
            _ => None,
        })
        .collect()
}

/// What one notification says, and the gate its click opens.
#[derive(Debug, PartialEq)]
struct Note {
    title: String,
    body: String,
    gate_id: String,
}

/// The notifications for `gates`, in order: "AGENT WHAT" over the gate's preview.
fn notes(gates: &[&Gate], what: &str) -> Vec<Note> {
    gates
        .iter()
        .map(|gate| Note {
            title: plain(&format!("{} {what}", gate.agent)),
            body: plain(&gate.preview()),
            gate_id: gate.id.to_string(),
        })
        .collect()
}

/// Agents' text as plain text: Linux notification servers read a little
/// HTML in the body (links, images), which an agent must not get to use.
fn plain(text: &str) -> String {
    if cfg!(all(unix, not(target_os = "macos"))) {
        text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
    } else {
        text.to_owned()
    }
}

#[cfg(all(test, unix, not(target_os = "macos")))]
mod tests {
    use super::{alert_notes, notes, plain};
    use gatehouse_engine::{Engine, EngineConfig, NewGate, NewRun};

    #[test]
    fn every_gate_of_a_burst_gets_a_notification_of_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let engine = Engine::open(dir.path().join("g.db"), EngineConfig::default()).unwrap();
        let run = engine.create_run(NewRun { agent: "ops".into(), ..NewRun::default() }, "ops").unwrap();
        let gates: Vec<_> = (1..=6)
            .map(|i| {
                engine.open_gate(&run.id, NewGate::question(format!("Restart <b>worker</b> {i}?")), "ops").unwrap()
            })
            .collect();
        let shown = notes(&gates.iter().collect::<Vec<_>>(), "is waiting for you");
        assert_eq!(shown.len(), 6);
        let ids: Vec<_> = shown.iter().map(|n| n.gate_id.as_str()).collect();
        assert_eq!(ids, gates.iter().map(|g| g.id.as_str()).collect::<Vec<_>>());
        assert_eq!(shown[5].title, "ops is waiting for you");
        assert_eq!(shown[5].body, "Restart &lt;b&gt;worker&lt;/b&gt; 6?");
    }

    #[test]
    fn each_alert_raised_gets_a_notification_and_a_cleared_one_none() {
        let dir = tempfile::tempdir().unwrap();
        let engine = Engine::open(dir.path().join("g.db"), EngineConfig::default()).unwrap();
        let alert = gatehouse_engine::Alert {
            kind: gatehouse_engine::AlertKind::PendingQueue,
            value: 12.0,
            threshold: 10.0,
            message: "12 gates pending (alert over 10)".into(),
        };
        assert!(engine.record_alert(alert.clone(), true).unwrap(), "raised");
        assert!(engine.record_alert(alert, false).unwrap(), "cleared");
        let logged = engine.events_after(0, &gatehouse_engine::store::EventFilter::default(), 10).unwrap();
        assert_eq!(logged.len(), 2, "the raise and the clear, as logged");
        let shown = alert_notes(&logged);
        assert_eq!(shown, [("Gatehouse alert".to_owned(), "12 gates pending (alert over 10)".to_owned())]);
    }

    #[test]
    fn agents_markup_is_shown_as_text_in_linux_notifications() {
        let shown = plain("<a href=\"https://evil\">click</a> & <img src=x>");
        assert_eq!(shown, "&lt;a href=\"https://evil\"&gt;click&lt;/a&gt; &amp; &lt;img src=x&gt;");
    }
}
