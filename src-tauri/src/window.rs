//! The one window: the reviewer UI from the server reviewed (this
//! computer's or a team server), or the app's own connection page; brought
//! to the front by the tray, the global shortcut, a notification or a
//! second launch. Its title names the server. Closing it hides it; the app
//! keeps serving agents until Quit. What it downloads (an export) ends in
//! the save dialog (`downloads`).

use std::time::Instant;

use anyhow::{Context, Result};
use tauri::webview::PageLoadEvent;
use tauri::{AppHandle, Manager, Runtime, Url, WebviewUrl, WebviewWindowBuilder, WindowEvent};

/// The window's label.
pub const MAIN: &str = "main";

/// Opens the window at `url` (the UI with the sign-in fragment), titled
/// after `server`; logs how long after `started` its page finished loading
/// (never the address, which holds the token).
pub fn open<R: Runtime>(app: &AppHandle<R>, url: &str, server: &str, started: Instant) -> Result<()> {
    let url = Url::parse(url).context("the server's address is not a URL")?;
    let window = WebviewWindowBuilder::new(app, MAIN, WebviewUrl::External(url))
        .title(title(server))
        .inner_size(1200.0, 800.0)
        .min_inner_size(640.0, 420.0)
        .on_download(crate::downloads::handler(app.clone()))
        .on_page_load(move |_, payload| {
            if payload.event() == PageLoadEvent::Finished {
                tracing::info!(ms = started.elapsed().as_millis() as u64, "the window's page has loaded");
                crate::memory::trim_after_load();
            }
        })
        .build()
        .context("cannot open the window")?;
    lighten(&window);
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

/// Draws the page without accelerated compositing and keeps WebKit's
/// caches at their smallest. The reviewer UI is text and a virtualised
/// list: it gains nothing from GPU compositing, which costs the web process
/// about 90 MB on a software renderer (Mesa's llvmpipe under Xvfb, see
/// docs/benchmarks.md). `GATEHOUSE_GPU=1` keeps WebKit's own choice.
fn lighten<R: Runtime>(window: &tauri::WebviewWindow<R>) {
    if std::env::var_os("GATEHOUSE_GPU").is_some_and(|v| v == "1") {
        return;
    }
    #[cfg(target_os = "linux")]
    let lightened = window.with_webview(|webview| {
        use webkit2gtk::{CacheModel, HardwareAccelerationPolicy, SettingsExt, WebContextExt, WebViewExt};
        let view = webview.inner();
        if let Some(settings) = WebViewExt::settings(&view) {
            settings.set_hardware_acceleration_policy(HardwareAccelerationPolicy::Never);
            settings.set_enable_page_cache(false);
        }
        if let Some(context) = view.context() {
            context.set_cache_model(CacheModel::DocumentViewer);
        }
    });
    #[cfg(not(target_os = "linux"))]
    let lightened: tauri::Result<()> = Ok(());
    if let Err(e) = lightened {
        tracing::warn!(error = %e, "cannot adjust the window's web view");
    }
}

/// Shows, unminimises and focuses the window.
pub fn bring_up<R: Runtime>(app: &AppHandle<R>) {
    let Some(window) = app.get_webview_window(MAIN) else { return };
    let shown = window.show().and_then(|()| window.unminimize()).and_then(|()| window.set_focus());
    if let Err(e) = shown {
        tracing::warn!(error = %e, "cannot bring the window up");
    }
}

/// "Gatehouse — Team: host".
fn title(server: &str) -> String {
    format!("Gatehouse — {server}")
}

/// Brings the window up at `url`, a server's UI, titled after `server`.
pub fn show<R: Runtime>(app: &AppHandle<R>, url: &str, server: &str) {
    if let Some(window) = app.get_webview_window(MAIN) {
        if let Err(e) = window.set_title(&title(server)) {
            tracing::warn!(error = %e, "cannot set the window's title");
        }
    }
    go(app, url);
}

/// Brings the window up on the connection page.
pub fn show_connection_page<R: Runtime>(app: &AppHandle<R>) {
    go(app, crate::connection::page::URL);
}

/// Brings the window up on one gate: the UI opens `#gate=ID` (the page
/// keeps its token in session storage, so no secret is in this address).
pub fn show_gate<R: Runtime>(app: &AppHandle<R>, gate_url: &str) {
    go(app, gate_url);
}

/// Brings the window up and has it load `url`.
fn go<R: Runtime>(app: &AppHandle<R>, url: &str) {
    bring_up(app);
    let Some(window) = app.get_webview_window(MAIN) else { return };
    match Url::parse(url) {
        Ok(url) => {
            if let Err(e) = window.navigate(url) {
                tracing::warn!(error = %e, "cannot load the window's new address");
            }
        }
        Err(e) => tracing::warn!(error = %e, "the window's new address is not a URL"),
    }
}
