//! The one window: the reviewer UI from the server reviewed (this
//! computer's or a team server), or the app's own connection page; brought
//! to the front by the tray, the global shortcut, a notification or a
//! second launch. Its title names the server. Closing it hides it; the app
//! keeps serving agents until Quit. What it downloads (an export) ends in
//! the save dialog (`downloads`).
//!
//! The window only ever shows the server it was sent to and the app's own
//! connection page. A link in an agent's text, or anything else that would
//! take the window elsewhere or open another one, opens in the reviewer's
//! browser instead: an agent cannot put its own page in a window titled
//! Gatehouse, and the reviewer's unsent work stays where it was.

use std::sync::Mutex;
use std::time::Instant;

use anyhow::{Context, Result};
use tauri::webview::{NewWindowResponse, PageLoadEvent};
use tauri::{AppHandle, Manager, Runtime, Url, WebviewUrl, WebviewWindowBuilder, WindowEvent};
use tauri_plugin_opener::OpenerExt;

/// The window's label.
pub const MAIN: &str = "main";

/// Opens the window at `url` (the UI with the sign-in fragment), titled
/// after `server`; logs how long after `started` its page finished loading
/// (never the address, which holds the token).
pub fn open<R: Runtime>(app: &AppHandle<R>, url: &str, server: &str, started: Instant) -> Result<()> {
    let url = Url::parse(url).context("the server's address is not a URL")?;
    app.manage(Destination(Mutex::new(Some(url.clone()))));
    let navigating = app.clone();
    let opening = app.clone();
    let window = WebviewWindowBuilder::new(app, MAIN, WebviewUrl::External(url))
        .title(title(server))
        .inner_size(1200.0, 800.0)
        .min_inner_size(640.0, 420.0)
        .on_download(crate::downloads::handler(app.clone()))
        .on_navigation(move |url| stays(&navigating, url))
        .on_new_window(move |url, _| {
            elsewhere(&opening, &url);
            NewWindowResponse::Deny
        })
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

/// Brings the window up on one gate (`#gate=ID`) or view (`#view=metrics`):
/// the page keeps its token in session storage, so no secret is in this address.
pub fn show_gate<R: Runtime>(app: &AppHandle<R>, gate_url: &str) {
    go(app, gate_url);
}

/// Brings the window up and has it load `url`.
fn go<R: Runtime>(app: &AppHandle<R>, url: &str) {
    bring_up(app);
    let Some(window) = app.get_webview_window(MAIN) else { return };
    match Url::parse(url) {
        Ok(url) => {
            if let Some(destination) = app.try_state::<Destination>() {
                *destination.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(url.clone());
            }
            if let Err(e) = window.navigate(url) {
                tracing::warn!(error = %e, "cannot load the window's new address");
            }
        }
        Err(e) => tracing::warn!(error = %e, "the window's new address is not a URL"),
    }
}

/// The page the app last sent the window to: a server's UI or the
/// connection page. The window may move within that site, nowhere else.
struct Destination(Mutex<Option<Url>>);

/// Whether the window may load `url`: the site the app sent it to, or the
/// connection page. Anything else opens in the reviewer's browser.
fn stays<R: Runtime>(app: &AppHandle<R>, url: &Url) -> bool {
    let sent_to = app.try_state::<Destination>().and_then(|d| d.0.lock().unwrap_or_else(|e| e.into_inner()).clone());
    let page = Url::parse(crate::connection::page::URL).ok();
    if [sent_to, page].iter().flatten().any(|site| same_site(site, url)) {
        return true;
    }
    elsewhere(app, url);
    false
}

/// Scheme, host and port: what the window's site is. A `blob:` address (an
/// export the page made) belongs to the site that made it.
fn same_site(site: &Url, url: &Url) -> bool {
    let inner = (url.scheme() == "blob").then(|| Url::parse(url.path()).ok()).flatten();
    let url = inner.as_ref().unwrap_or(url);
    site.scheme() == url.scheme()
        && site.host_str() == url.host_str()
        && site.port_or_known_default() == url.port_or_known_default()
}

/// Hands a web or mail address to the reviewer's browser or mail app; drops
/// any other (`file:`, `data:`, custom schemes), which a link has no
/// business opening outside the window.
fn elsewhere<R: Runtime>(app: &AppHandle<R>, url: &Url) {
    if !matches!(url.scheme(), "http" | "https" | "mailto") {
        tracing::warn!(scheme = url.scheme(), "the window did not open an address of this kind");
        return;
    }
    tracing::info!("a link from the page opens in the default browser");
    if let Err(e) = app.opener().open_url(url.as_str(), None::<&str>) {
        tracing::warn!(error = %e, "cannot open the link in the default browser");
    }
}

#[cfg(test)]
mod tests {
    use super::{same_site, Url};

    fn url(s: &str) -> Url {
        Url::parse(s).expect("a URL")
    }

    #[test]
    fn the_window_stays_on_the_site_it_was_sent_to() {
        let server = url("http://127.0.0.1:43123/#token=secret");
        assert!(same_site(&server, &url("http://127.0.0.1:43123/#gate=g1")));
        assert!(same_site(&server, &url("blob:http://127.0.0.1:43123/6f1c-4d")), "the page's own exports");
        assert!(!same_site(&server, &url("http://127.0.0.1:43124/")), "another port is another site");
        assert!(!same_site(&server, &url("https://127.0.0.1:43123/")), "another scheme is another site");
        assert!(!same_site(&server, &url("http://evil.example/login")));
        assert!(!same_site(&server, &url("blob:http://evil.example/6f1c")));
        let page = url("gatehouse://localhost/");
        assert!(same_site(&page, &url("gatehouse://localhost/index.html")));
        assert!(!same_site(&page, &url("gatehouse://elsewhere/")));
        let team = url("https://gatehouse.example.com/");
        assert!(same_site(&team, &url("https://gatehouse.example.com:443/#gate=g2")), "the default port is the port");
    }
}
