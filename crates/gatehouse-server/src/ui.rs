//! The reviewer UI as static files: the Svelte build (`ui/dist`) served at
//! `/` beside the API, so `gatehouse serve` is also the reviewer's web app.
//! Paths without a file extension get `index.html` (a single-page app);
//! unknown `/api/...` paths stay JSON 404s. Every response carries a strict
//! content security policy (no inline script or style, nothing from other
//! origins, no framing): the page needs nothing else, since its token comes
//! from the URL fragment or a sign-in form, never from injected HTML.

use std::path::{Path, PathBuf};

use axum::body::Body;
use axum::extract::Request;
use axum::http::header::{self, HeaderName};
use axum::http::{HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Router;
use tower_http::services::{ServeDir, ServeFile};

use crate::error::ApiError;

/// The UI's content security policy.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self'; style-src 'self'; \
     img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

/// The environment variable naming the UI directory (a `ui/dist` build).
pub const UI_DIR_ENV: &str = "GATEHOUSE_UI_DIR";

/// A router serving the UI in `dist` as its fallback: merge it into the
/// application router (which must have no fallback of its own) so every
/// path no API route claims is answered from `dist`. Generic over the
/// state, which it does not use.
pub fn ui_router<S>(dist: PathBuf) -> Router<S>
where
    S: Clone + Send + Sync + 'static,
{
    let ui = Ui::new(dist);
    Router::new().fallback(move |req: Request| {
        let ui = ui.clone();
        async move { ui.serve(req).await }
    })
}

/// Where the UI build is: `$GATEHOUSE_UI_DIR`; else `ui/` beside the
/// executable (an installed layout); else this source tree's `ui/dist`
/// (a development build). The first that holds an `index.html` wins;
/// `None` when none does.
pub fn find_ui_dir() -> Option<PathBuf> {
    let from_env = std::env::var_os(UI_DIR_ENV).map(PathBuf::from);
    let beside_exe = std::env::current_exe().ok().and_then(|exe| exe.parent().map(|dir| dir.join("ui")));
    [from_env, beside_exe, Some(in_tree_dir())].into_iter().flatten().find(|dir| dir.join("index.html").is_file())
}

/// This source tree's `ui/dist`, where `npm run build` puts the UI.
pub fn in_tree_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ui/dist")
}

#[derive(Clone)]
struct Ui {
    dist: PathBuf,
    files: ServeDir,
    index: ServeFile,
}

impl Ui {
    fn new(dist: PathBuf) -> Self {
        let files = ServeDir::new(&dist).append_index_html_on_directories(true);
        let index = ServeFile::new(dist.join("index.html"));
        Self { dist, files, index }
    }

    async fn serve(mut self, req: Request) -> Response {
        let path = req.uri().path().to_owned();
        if path == "/api" || path.starts_with("/api/") {
            return ApiError::not_found(format!("no API route {} {path}", req.method())).into_response();
        }
        if req.method() != Method::GET && req.method() != Method::HEAD {
            return secured(StatusCode::METHOD_NOT_ALLOWED.into_response(), &path);
        }
        if !self.dist.join("index.html").is_file() {
            let message = format!(
                "The reviewer UI is not built in {}: run `npm ci && npm run build` in ui/, or set {UI_DIR_ENV} \
                 to a built ui/dist directory.",
                self.dist.display()
            );
            return secured((StatusCode::SERVICE_UNAVAILABLE, message).into_response(), &path);
        }
        // A path naming a file (`/assets/index-3f2a.js`) is served or 404s;
        // any other path is a page of the app, answered with index.html.
        let names_file = path.rsplit('/').next().is_some_and(|last| last.contains('.'));
        let response = if names_file || path == "/" {
            self.files.try_call(req).await.map(|r| r.map(Body::new))
        } else {
            self.index.try_call(req).await.map(|r| r.map(Body::new))
        };
        let response = response.unwrap_or_else(|e| {
            tracing::error!(error = %e, "cannot read the UI's files");
            StatusCode::INTERNAL_SERVER_ERROR.into_response()
        });
        secured(response, &path)
    }
}

/// Adds the security and caching headers every UI response carries.
fn secured(mut response: Response, path: &str) -> Response {
    // Vite names built assets by their content hash: they never change.
    let cache = if path.starts_with("/assets/") && response.status().is_success() {
        "public, max-age=31536000, immutable"
    } else {
        "no-cache"
    };
    let headers = response.headers_mut();
    let fixed: [(HeaderName, &'static str); 5] = [
        (header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::REFERRER_POLICY, "no-referrer"),
        (header::X_FRAME_OPTIONS, "DENY"),
        (HeaderName::from_static("cross-origin-opener-policy"), "same-origin"),
    ];
    for (name, value) in fixed {
        headers.insert(name, HeaderValue::from_static(value));
    }
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::header::CONTENT_TYPE;
    use tower::ServiceExt;

    fn built_ui() -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("index.html"), "<!doctype html><title>Gatehouse</title>").expect("index");
        std::fs::create_dir(dir.path().join("assets")).expect("assets");
        std::fs::write(dir.path().join("assets/index-abc.js"), "export {};").expect("asset");
        dir
    }

    async fn get(router: Router, path: &str) -> Response {
        let req = Request::builder().uri(path).body(Body::empty()).expect("request");
        router.oneshot(req).await.expect("infallible")
    }

    #[tokio::test]
    async fn the_root_serves_index_html_under_a_strict_content_security_policy() {
        let dir = built_ui();
        let res = get(ui_router(dir.path().to_path_buf()), "/").await;
        assert_eq!(res.status(), StatusCode::OK);
        assert_eq!(res.headers()[header::CONTENT_SECURITY_POLICY], CONTENT_SECURITY_POLICY);
        assert_eq!(res.headers()[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
        assert_eq!(res.headers()[header::REFERRER_POLICY], "no-referrer");
        assert!(res.headers()[CONTENT_TYPE].to_str().unwrap_or("").starts_with("text/html"));
    }

    #[tokio::test]
    async fn app_paths_fall_back_to_index_html_but_missing_assets_are_404() {
        let dir = built_ui();
        let router: Router = ui_router(dir.path().to_path_buf());
        assert_eq!(get(router.clone(), "/gates/gate_1").await.status(), StatusCode::OK);
        let asset = get(router.clone(), "/assets/index-abc.js").await;
        assert_eq!(asset.status(), StatusCode::OK);
        assert_eq!(asset.headers()[header::CACHE_CONTROL], "public, max-age=31536000, immutable");
        assert_eq!(get(router, "/assets/missing.js").await.status(), StatusCode::NOT_FOUND);
    }

    #[tokio::test]
    async fn unknown_api_paths_stay_json_404s() {
        let dir = built_ui();
        let res = get(ui_router(dir.path().to_path_buf()), "/api/hitl/nothing-here").await;
        assert_eq!(res.status(), StatusCode::NOT_FOUND);
        assert_eq!(res.headers()[CONTENT_TYPE], "application/json");
    }

    #[tokio::test]
    async fn a_missing_build_says_how_to_make_one() {
        let dir = tempfile::tempdir().expect("temp dir");
        let res = get(ui_router(dir.path().to_path_buf()), "/").await;
        assert_eq!(res.status(), StatusCode::SERVICE_UNAVAILABLE);
    }
}
