//! The one window: the reviewer UI from the in-process server, brought to
//! the front by the tray, the global shortcut, a notification or a second
//! launch. Closing it hides it; the app keeps serving agents until Quit.

use std::time::Instant;

use anyhow::{Context, Result};
use tauri::webview::PageLoadEvent;
use tauri::{AppHandle, Manager, Runtime, Url, WebviewUrl, WebviewWindowBuilder, WindowEvent};

/// The window's label.
pub const MAIN: &str = "main";

/// Opens the window at `url` (the UI with the sign-in fragment); logs how
/// long after `started` its page finished loading (never the address,
/// which holds the token).
pub fn open<R: Runtime>(app: &AppHandle<R>, url: &str, started: Instant) -> Result<()> {
    let url = Url::parse(url).context("the server's address is not a URL")?;
    let window = WebviewWindowBuilder::new(app, MAIN, WebviewUrl::External(url))
        .title("Gatehouse")
        .inner_size(1200.0, 800.0)
        .min_inner_size(640.0, 420.0)
        .on_page_load(move |_, payload| {
            if payload.event() == PageLoadEvent::Finished {
                tracing::info!(ms = started.elapsed().as_millis() as u64, "the window's page has loaded");
            }
        })
        .build()
        .context("cannot open the window")?;
    let hide = window.clone();
    window.on_window_event(move |event| {
        if let WindowEvent::CloseRequested { api, .. } = event {
            api.prevent_close();
            if let Err(e) = hide.hide() {
                tracing::warn!(error = %e, "cannot hide the window");
            }
        }
    });
    Ok(())
}

/// Shows, unminimises and focuses the window.
pub fn bring_up<R: Runtime>(app: &AppHandle<R>) {
    let Some(window) = app.get_webview_window(MAIN) else { return };
    let shown = window.show().and_then(|()| window.unminimize()).and_then(|()| window.set_focus());
    if let Err(e) = shown {
        tracing::warn!(error = %e, "cannot bring the window up");
    }
}

/// Brings the window up on one gate: the UI opens `#gate=ID` (the page
/// keeps its token in session storage, so no secret is in this address).
pub fn show_gate<R: Runtime>(app: &AppHandle<R>, gate_url: &str) {
    bring_up(app);
    let Some(window) = app.get_webview_window(MAIN) else { return };
    match Url::parse(gate_url) {
        Ok(url) => {
            if let Err(e) = window.navigate(url) {
                tracing::warn!(error = %e, "cannot open the gate in the window");
            }
        }
        Err(e) => tracing::warn!(error = %e, "a gate's address is not a URL"),
    }
}
