//! The connection page: the app's own page (`gatehouse://localhost/`, the
//! reviewer UI's build showing its connection screen) where a reviewer
//! enters a team server's address and token, switches to it, or back to
//! this computer. It is served by the app itself, not by any server, and
//! is the only page with Tauri IPC: `capabilities/connection.json` grants
//! these commands to the window for local pages only, so a server's page
//! (this computer's or a team's) can call none of them.

use std::borrow::Cow;
use std::path::{Component, Path, PathBuf};

use tauri::http::{header, Response, StatusCode};
use tauri::{AppHandle, Runtime};

use super::check::{CheckCode, CheckError};
use super::Status;

/// The custom scheme the page is served on.
pub const SCHEME: &str = "gatehouse";

/// The page's address (Windows and Android serve custom schemes as
/// `http://SCHEME.localhost`).
#[cfg(not(any(windows, target_os = "android")))]
pub const URL: &str = "gatehouse://localhost/";
#[cfg(any(windows, target_os = "android"))]
pub const URL: &str = "http://gatehouse.localhost/";

/// The page's content security policy: its own files, and IPC to the app;
/// nothing from any server (the app checks team servers itself).
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self'; style-src 'self'; \
     img-src 'self' data:; connect-src ipc: http://ipc.localhost; frame-ancestors 'none'; base-uri 'none'; \
     form-action 'none'";

/// Answers a request for `path` from the UI build in `dist` (the same
/// build the servers serve): files by name, any other path `index.html`.
pub fn respond(dist: Option<&Path>, path: &str) -> Response<Cow<'static, [u8]>> {
    let Some(dist) = dist.filter(|d| d.join("index.html").is_file()) else {
        return answer(
            StatusCode::SERVICE_UNAVAILABLE,
            "text/plain; charset=utf-8",
            b"The reviewer UI is not built: run `npm ci && npm run build` in ui/.".to_vec(),
        );
    };
    let relative = path.trim_start_matches('/');
    let names_file = relative.rsplit('/').next().is_some_and(|last| last.contains('.'));
    let file = if names_file { PathBuf::from(relative) } else { PathBuf::from("index.html") };
    if !file.components().all(|c| matches!(c, Component::Normal(_))) {
        return answer(StatusCode::NOT_FOUND, "text/plain; charset=utf-8", b"Not found.".to_vec());
    }
    match std::fs::read(dist.join(&file)) {
        Ok(bytes) => answer(StatusCode::OK, content_type(&file), bytes),
        Err(_) => answer(StatusCode::NOT_FOUND, "text/plain; charset=utf-8", b"Not found.".to_vec()),
    }
}

fn answer(status: StatusCode, kind: &str, body: Vec<u8>) -> Response<Cow<'static, [u8]>> {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, kind)
        .header(header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY)
        .header(header::X_CONTENT_TYPE_OPTIONS, "nosniff")
        .header(header::REFERRER_POLICY, "no-referrer")
        .header(header::CACHE_CONTROL, "no-cache")
        .body(Cow::Owned(body))
        .unwrap_or_else(|_| Response::new(Cow::Borrowed(&b""[..])))
}

fn content_type(file: &Path) -> &'static str {
    match file.extension().and_then(|e| e.to_str()) {
        Some("html") => "text/html; charset=utf-8",
        Some("js" | "mjs") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        Some("woff2") => "font/woff2",
        Some("json") => "application/json",
        _ => "application/octet-stream",
    }
}

fn connection<R: Runtime>(app: &AppHandle<R>) -> Result<std::sync::Arc<super::Connection>, CheckError> {
    super::of(app).ok_or_else(|| CheckError::new(CheckCode::ThisComputer, "The app is still starting; try again."))
}

/// Where the window is connected, and the team server offered.
#[tauri::command]
pub async fn connection_status<R: Runtime>(app: AppHandle<R>) -> Result<Status, CheckError> {
    Ok(connection(&app)?.status().await)
}

/// Checks the team server at `url` with `token` (blank: the saved one) and switches to it.
#[tauri::command]
pub async fn connect_team<R: Runtime>(app: AppHandle<R>, url: String, token: String) -> Result<Status, CheckError> {
    connection(&app)?.connect_team(&app, &url, &token).await
}

/// Switches back to this computer's server.
#[tauri::command]
pub async fn use_this_computer<R: Runtime>(app: AppHandle<R>) -> Result<Status, CheckError> {
    connection(&app)?.use_this_computer(&app).await
}

/// Forgets the team server's address and token; switches to this computer.
#[tauri::command]
pub async fn forget_team<R: Runtime>(app: AppHandle<R>) -> Result<Status, CheckError> {
    connection(&app)?.forget_team(&app).await
}

/// Leaves the page for the current server's reviews.
#[tauri::command]
pub async fn show_reviews<R: Runtime>(app: AppHandle<R>) -> Result<(), CheckError> {
    connection(&app)?.show_reviews(&app);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_is_the_ui_build_under_its_own_policy_and_nothing_outside_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("index.html"), "<!doctype html>").unwrap();
        std::fs::create_dir(dir.path().join("assets")).unwrap();
        std::fs::write(dir.path().join("assets/index-1.js"), "export {};").unwrap();
        std::fs::write(dir.path().with_extension("secret"), "no").unwrap();

        let page = respond(Some(dir.path()), "/");
        assert_eq!(page.status(), StatusCode::OK);
        assert_eq!(page.body().as_ref(), b"<!doctype html>");
        assert_eq!(page.headers()[header::CONTENT_SECURITY_POLICY], CONTENT_SECURITY_POLICY);
        assert!(CONTENT_SECURITY_POLICY.contains("connect-src ipc: http://ipc.localhost;"));
        assert_eq!(respond(Some(dir.path()), "/connection").body().as_ref(), b"<!doctype html>");
        let script = respond(Some(dir.path()), "/assets/index-1.js");
        assert_eq!(script.headers()[header::CONTENT_TYPE], "text/javascript; charset=utf-8");
        assert_eq!(respond(Some(dir.path()), "/assets/none.js").status(), StatusCode::NOT_FOUND);
        let outside = format!("/../{}", dir.path().with_extension("secret").file_name().unwrap().to_string_lossy());
        assert_eq!(respond(Some(dir.path()), &outside).status(), StatusCode::NOT_FOUND);
        assert_eq!(respond(None, "/").status(), StatusCode::SERVICE_UNAVAILABLE);
    }
}
