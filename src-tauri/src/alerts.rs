//! Follows the engine's events on a thread of its own: after each burst of
//! gate events the tray shows the new pending count (one cheap `COUNT`),
//! and each new sync gate raises a native notification whose click opens
//! that gate in the window.

use std::sync::Arc;

use gatehouse_engine::{BlockingMode, Engine, Event, EventKind, Gate, GateFilter};
use tauri::{AppHandle, Runtime};
use tauri_plugin_notification::NotificationExt;
use tokio::sync::broadcast::error::{RecvError, TryRecvError};

use crate::tray::Tray;
use crate::window;

/// A burst of more new sync gates than this gets one summary notification
/// after this many individual ones, not a wall of them.
const NOTIFY_AT_MOST: usize = 3;

/// The notification's extra field naming its gate.
const GATE_ID: &str = "gate_id";

/// Opens the clicked notification's gate; `gate_url` makes its address.
pub fn open_gates_on_click<R: Runtime>(app: &AppHandle<R>, gate_url: impl Fn(&str) -> String + Send + Sync + 'static) {
    let handle = app.clone();
    let registered = app.notification().on_action(move |performed| {
        let gate = performed.notification().and_then(|n| n.extra().get(GATE_ID)).and_then(|id| id.as_str());
        match gate {
            Some(id) => window::show_gate(&handle, &gate_url(id)),
            None => window::bring_up(&handle),
        }
    });
    if let Err(e) = registered {
        tracing::warn!(error = %e, "notification clicks will not open gates");
    }
}

/// Follows `engine` until it closes, keeping `tray` current and
/// notifying new sync gates.
pub fn follow<R: Runtime>(app: AppHandle<R>, engine: Engine, tray: Option<Tray<R>>) -> std::io::Result<()> {
    // Subscribed before the first count, so nothing committed in between is missed.
    let mut events = engine.live_events();
    std::thread::Builder::new().name("gatehouse-tray".into()).spawn(move || {
        show_count(&engine, tray.as_ref());
        loop {
            // Take the whole burst, then count once; a lag means events
            // were missed, so the count must be read again.
            let mut burst: Vec<Arc<Event>> = Vec::new();
            let mut lagged = false;
            match events.blocking_recv() {
                Ok(event) => burst.push(event),
                Err(RecvError::Lagged(_)) => lagged = true,
                Err(RecvError::Closed) => return,
            }
            loop {
                match events.try_recv() {
                    Ok(event) => burst.push(event),
                    Err(TryRecvError::Lagged(_)) => lagged = true,
                    Err(TryRecvError::Empty | TryRecvError::Closed) => break,
                }
            }
            let new_sync: Vec<&Gate> = burst.iter().filter_map(|e| new_sync_gate(&e.body.kind)).collect();
            notify(&app, &new_sync, "is waiting for you");
            // Escalations (nobody answered in time) whatever the gate's mode.
            let escalated: Vec<Gate> = burst
                .iter()
                .filter_map(|e| match &e.body.kind {
                    EventKind::GateEscalated { gate_id, .. } => engine.gate(gate_id).ok(),
                    _ => None,
                })
                .collect();
            notify(&app, &escalated.iter().collect::<Vec<_>>(), "escalated: still waiting for you");
            if lagged || burst.iter().any(|e| touches_gates(&e.body.kind)) {
                show_count(&engine, tray.as_ref());
            }
        }
    })?;
    Ok(())
}

fn show_count<R: Runtime>(engine: &Engine, tray: Option<&Tray<R>>) {
    let Some(tray) = tray else { return };
    match engine.count_gates(&GateFilter::pending()) {
        Ok(count) => tray.show_pending(count),
        Err(e) => tracing::warn!(error = %e, "cannot count the pending gates"),
    }
}

/// The gate, when this event opened one an agent waits on.
fn new_sync_gate(kind: &EventKind) -> Option<&Gate> {
    match kind {
        EventKind::GateOpened { gate } if gate.mode == BlockingMode::Sync => Some(gate),
        _ => None,
    }
}

fn touches_gates(kind: &EventKind) -> bool {
    matches!(
        kind,
        EventKind::GateOpened { .. }
            | EventKind::GateEscalated { .. }
            | EventKind::GateResolved { .. }
            | EventKind::GateExpired { .. }
            | EventKind::GateCancelled { .. }
    )
}

fn notify<R: Runtime>(app: &AppHandle<R>, gates: &[&Gate], what: &str) {
    for gate in gates.iter().take(NOTIFY_AT_MOST) {
        let shown = app
            .notification()
            .builder()
            .title(plain(&format!("{} {what}", gate.agent)))
            .body(plain(&gate.preview()))
            .extra(GATE_ID, gate.id.to_string())
            .show();
        if let Err(e) = shown {
            tracing::warn!(error = %e, "cannot show a notification");
        }
    }
    if gates.len() > NOTIFY_AT_MOST {
        let more = gates.len() - NOTIFY_AT_MOST;
        let shown = app
            .notification()
            .builder()
            .title(format!("{more} more agents are waiting"))
            .body("Open Gatehouse to see them in the panel.")
            .show();
        if let Err(e) = shown {
            tracing::warn!(error = %e, "cannot show a notification");
        }
    }
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
    use super::plain;

    #[test]
    fn agents_markup_is_shown_as_text_in_linux_notifications() {
        let shown = plain("<a href=\"https://evil\">click</a> & <img src=x>");
        assert_eq!(shown, "&lt;a href=\"https://evil\"&gt;click&lt;/a&gt; &amp; &lt;img src=x&gt;");
    }
}
